/*
 * tests/unit/test_client.c - the HTTP client and typed API calls:
 * metav1.Status decoding of every recorded non-2xx answer, the retry
 * policy, REST paths and request bodies, and kube_client_do() against a
 * scripted HTTP/1.1 server on loopback (headers, keep-alive, retries,
 * Retry-After, 401 token re-read, plain-text errors, dropped connections,
 * concurrent requests on the client's I/O thread, cancellation of transfers
 * in flight, the fence asked before every attempt, timeouts, proxies from
 * the environment).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "kube/transport/api.h"
#include "kube/transport/api_testing.h"
#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/util/clock.h"
#include "kube/transport/config.h"
#include "kube/transport/config_testing.h"
#include "kube/util/errors.h"
#include "kube/transport/client_testing.h"

/* ---- fixtures: Status decoding ---------------------------------------- */

static cJSON *load_fixture(const char *name)
{
    char path[512], *text;
    cJSON *j;

    snprintf(path, sizeof(path), "%s/%s", STICKYVM_FIXTURES_DIR, name);
    assert_int_equal(kube_read_file(path, &text, NULL), KUBE_OK);
    j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    return j;
}

/* Checks one recorded failure: the decoded Status and the error code. */
static void check_failure_fixture(const char *name, cJSON *fx)
{
    long code = (long)cJSON_GetObjectItem(fx, "status")->valuedouble;
    cJSON *body = cJSON_GetObjectItem(fx, "body");
    cJSON *text = cJSON_GetObjectItem(fx, "body_text");
    kube_status st;
    char *json;
    int rc;

    if (cJSON_IsString(text)) { /* not a Status: "404 page not found\n" */
        rc = kube_response_error(code, text->valuestring, strlen(text->valuestring), &st);
        assert_int_equal(rc, kube_err_from_status(code, NULL));
        assert_int_equal(st.code, code);
        assert_string_equal(st.reason, "NotFound");
        assert_string_equal(st.message, "404 page not found");
        assert_int_equal(
            kube_status_decode(text->valuestring, strlen(text->valuestring), code, &st),
            KUBE_EPARSE);
        return;
    }
    json = cJSON_PrintUnformatted(body);
    assert_int_equal(kube_status_decode(json, strlen(json), code, &st), KUBE_OK);
    assert_string_equal(st.reason, cJSON_GetObjectItem(body, "reason")->valuestring);
    assert_int_equal(st.code, cJSON_GetObjectItem(body, "code")->valueint);
    assert_int_equal(strncmp(st.message, cJSON_GetObjectItem(body, "message")->valuestring,
                             sizeof(st.message) - 1),
                     0);
    rc = kube_response_error(code, json, strlen(json), &st);
    assert_int_equal(rc, kube_err_from_status(code, st.reason));
    assert_true(rc < 0);
    free(json);
    (void)name;
}

static void decodes_every_recorded_failure(void **state)
{
    DIR *d = opendir(STICKYVM_FIXTURES_DIR);
    struct dirent *e;
    int checked = 0;
    (void)state;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        cJSON *fx;
        if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
            continue;
        fx = load_fixture(e->d_name);
        if (cJSON_GetObjectItem(fx, "status")->valuedouble >= 300) {
            check_failure_fixture(e->d_name, fx);
            checked++;
        }
        cJSON_Delete(fx);
    }
    closedir(d);
    /* three 409s, three 404s (one plain text), a 410 and two 422s */
    assert_true(checked >= 9);
}

static void maps_recorded_reasons_to_errors(void **state)
{
    static const struct {
        const char *file;
        int err;
    } cases[] = {
        {"binding-already-assigned-409.json", KUBE_ECONFLICT},
        {"binding-pod-missing-404.json", KUBE_ENOTFOUND},
        {"lease-update-stale-409.json", KUBE_ECONFLICT},
        {"pods-list-too-old-exact-410.json", KUBE_EGONE},
        {"vm-create-invalid-name-422.json", KUBE_EINVALID},
        {"vm-merge-patch-stale-rv-409.json", KUBE_ECONFLICT},
        {"unknown-resource-404.json", KUBE_ENOTFOUND},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *fx = load_fixture(cases[i].file);
        cJSON *body = cJSON_GetObjectItem(fx, "body");
        cJSON *text = cJSON_GetObjectItem(fx, "body_text");
        char *json = body ? cJSON_PrintUnformatted(body) : strdup(text->valuestring);
        kube_status st;

        assert_int_equal(kube_response_error((long)cJSON_GetObjectItem(fx, "status")->valuedouble,
                                             json, strlen(json), &st),
                         cases[i].err);
        free(json);
        cJSON_Delete(fx);
    }
}

static void decodes_watch_error_event(void **state)
{
    char path[512], *text, *line;
    kube_status st;
    cJSON *ev;
    char *json;
    (void)state;

    snprintf(path, sizeof(path), "%s/pods-watch-too-old-410.jsonl", STICKYVM_FIXTURES_DIR);
    assert_int_equal(kube_read_file(path, &text, NULL), KUBE_OK);
    line = strstr(text, "\n{");
    assert_non_null(line);
    ev = cJSON_Parse(line + 1);
    assert_non_null(ev);
    json = cJSON_PrintUnformatted(cJSON_GetObjectItem(ev, "object"));
    assert_int_equal(kube_status_decode(json, strlen(json), 200, &st), KUBE_OK);
    assert_int_equal(st.code, 410);
    assert_string_equal(st.reason, "Expired");
    assert_int_equal(kube_err_from_status(st.code, st.reason), KUBE_EGONE);
    free(json);
    cJSON_Delete(ev);
    free(text);
}

static void status_decoding_edge_cases(void **state)
{
    kube_status st;
    char big[2048];
    (void)state;

    /* not a Status */
    assert_int_equal(kube_status_decode("{\"kind\":\"Pod\"}", 14, 500, &st), KUBE_EPARSE);
    assert_int_equal(st.code, 500);
    assert_int_equal(kube_status_decode("[1]", 3, 500, &st), KUBE_EPARSE);
    assert_int_equal(kube_status_decode(NULL, 0, 503, &st), KUBE_EPARSE);
    assert_int_equal(kube_response_error(503, NULL, 0, &st), KUBE_ESERVER);
    assert_string_equal(st.reason, "ServiceUnavailable");
    assert_string_equal(st.message, "the server answered HTTP 503");
    /* a Status without kind, with a wrong-typed code */
    {
        const char *j = "{\"reason\":\"AlreadyExists\",\"code\":\"x\"}";
        assert_int_equal(kube_status_decode(j, strlen(j), 409, &st), KUBE_OK);
    }
    assert_int_equal(st.code, 409);
    assert_int_equal(kube_err_from_status(409, st.reason), KUBE_EEXIST);
    /* long messages are cut at a character boundary */
    memcpy(big, "{\"kind\":\"Status\",\"message\":\"", 28);
    for (int i = 0; i < 600; i++)
        memcpy(big + 28 + i * 2, "\xc3\xa9", 2); /* é */
    memcpy(big + 28 + 1200, "\"}", 3);
    assert_int_equal(kube_status_decode(big, strlen(big), 500, &st), KUBE_OK);
    assert_int_equal(strlen(st.message) % 2, 0);
    assert_true(strlen(st.message) >= sizeof(st.message) - 2);
    assert_int_equal(kube_response_error(201, "{}", 2, &st), KUBE_OK);
}

/* ---- retry policy ----------------------------------------------------- */

static void retry_policy(void **state)
{
    static const struct {
        const char *method;
        long code;
        long retry_after;
        int attempt;
        int retry;
        long delay_ms; /* -1: jittered */
    } cases[] = {
        {"GET", 429, -1, 0, 1, -1},    {"POST", 429, -1, 0, 1, -1},
        {"PATCH", 429, 3, 0, 1, 3000}, {"POST", 429, 0, 0, 1, 0},
        {"GET", 500, -1, 0, 1, -1},    {"PUT", 503, -1, 0, 1, -1},
        {"DELETE", 504, -1, 0, 1, -1}, {"POST", 500, -1, 0, 0, 0},
        {"PATCH", 503, -1, 0, 0, 0},   {"POST", 503, 2, 0, 1, 2000},
        {"PATCH", 500, 1, 1, 1, 1000}, {"GET", 503, 7200, 0, 1, 60000},
        {"GET", 404, -1, 0, 0, 0},     {"GET", 409, 1, 0, 0, 0},
        {"PUT", 409, -1, 0, 0, 0},     {"GET", 401, -1, 0, 0, 0},
        {"GET", 0, -1, 0, 1, -1},      {"POST", 0, -1, 0, 0, 0},
        {"GET", 429, -1, 5, 0, 0},     {"GET", 500, 1, 5, 0, 0},
    };
    long delay;
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int retry = kube_retry_decide(cases[i].method, cases[i].code, cases[i].retry_after,
                                      cases[i].attempt, 5, 100, 5000, 12345, &delay);
        if (retry != cases[i].retry)
            fail_msg("%s %ld Retry-After %ld attempt %d: retry %d, want %d", cases[i].method,
                     cases[i].code, cases[i].retry_after, cases[i].attempt, retry, cases[i].retry);
        if (retry && cases[i].delay_ms >= 0)
            assert_int_equal(delay, cases[i].delay_ms);
    }
}

static void backoff_grows_jittered_and_capped(void **state)
{
    long lo, hi;
    (void)state;

    for (int attempt = 0; attempt < 10; attempt++) {
        long full = 100L << attempt;
        if (full > 5000)
            full = 5000;
        assert_int_equal(kube_retry_decide("GET", 500, -1, attempt, 10, 100, 5000, 0, &hi), 1);
        assert_int_equal(
            kube_retry_decide("GET", 500, -1, attempt, 10, 100, 5000, 0xffffffffu, &lo), 1);
        /* jitter spreads the delay over the upper half [full/2, full] */
        assert_int_equal(hi, full);
        assert_true(lo >= full - full / 2 && lo <= full - full / 2 + 1);
        for (unsigned r = 0; r < 50; r++) {
            long d;
            kube_retry_decide("GET", 500, -1, attempt, 10, 100, 5000, r * 2654435761u, &d);
            assert_true(d >= full - full / 2 && d <= full);
        }
    }
}

/* ---- paths and bodies -------------------------------------------------- */

static void builds_paths(void **state)
{
    static const struct {
        const kube_resource *r;
        const char *ns, *name, *sub, *want;
    } cases[] = {
        {&KUBE_RES_PODS, "default", NULL, NULL, "/api/v1/namespaces/default/pods"},
        {&KUBE_RES_PODS, NULL, NULL, NULL, "/api/v1/pods"},
        {&KUBE_RES_PODS, "default", "p1", "binding", "/api/v1/namespaces/default/pods/p1/binding"},
        {&KUBE_RES_NODES, "ignored", "node-1", NULL, "/api/v1/nodes/node-1"},
        {&KUBE_RES_NAMESPACES, NULL, "kube-system", NULL, "/api/v1/namespaces/kube-system"},
        {&KUBE_RES_CONFIGMAPS, "kube-system", "extension-apiserver-authentication", NULL,
         "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"},
        {&KUBE_RES_EVENTS, "default", NULL, NULL,
         "/apis/events.k8s.io/v1/namespaces/default/events"},
        {&KUBE_RES_LEASES, "default", "stickyvm-scheduler", NULL,
         "/apis/coordination.k8s.io/v1/namespaces/default/leases/stickyvm-scheduler"},
        {&KUBE_RES_VMS, "default", "vm-a", NULL,
         "/apis/kubevirt.io/v1/namespaces/default/virtualmachines/vm-a"},
        {&KUBE_RES_VMIS, NULL, NULL, NULL, "/apis/kubevirt.io/v1/virtualmachineinstances"},
        {&KUBE_RES_VMS, "default", "a/b?c d", NULL,
         "/apis/kubevirt.io/v1/namespaces/default/virtualmachines/a%2Fb%3Fc%20d"},
        {&KUBE_RES_PODS, "default", "p1", "status", "/api/v1/namespaces/default/pods/p1/status"},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kube_buf b = KUBE_BUF_INIT;
        assert_int_equal(kube_path(&b, cases[i].r, cases[i].ns, cases[i].name, cases[i].sub),
                         KUBE_OK);
        assert_string_equal(b.data, cases[i].want);
        kube_buf_free(&b);
    }
}

/* The request body of a fixture, compared with ours. */
static void assert_body_matches_fixture(const char *file, cJSON *ours)
{
    cJSON *fx = load_fixture(file);
    cJSON *want = cJSON_GetObjectItem(cJSON_GetObjectItem(fx, "request"), "body");
    char *a = cJSON_PrintUnformatted(ours), *b = cJSON_PrintUnformatted(want);

    if (!cJSON_Compare(ours, want, 1))
        fail_msg("%s: sent %s, recorded %s", file, a, b);
    free(a);
    free(b);
    cJSON_Delete(fx);
}

/* The Binding kube_api_bind sends, parsed, with its text in *text. */
static cJSON *binding_json(const char *ns, const char *pod, const char *uid, const char *node,
                           char **text)
{
    kube_buf b = KUBE_BUF_INIT;
    cJSON *json;

    assert_int_equal(kube_api_binding_body(&b, ns, pod, uid, node), KUBE_OK);
    *text = kube_buf_take(&b);
    json = cJSON_Parse(*text);
    assert_non_null(json);
    return json;
}

static void bodies_match_recorded_requests(void **state)
{
    cJSON *b;
    char *text;
    (void)state;

    b = binding_json("default", "virt-launcher-vm-a-abcde", "63ec8fc2-bedd-4af0-9b77-53b5010ab02a",
                     "node-1", &text);
    assert_body_matches_fixture("binding-create-201.json", b);
    /* same key order as kube-scheduler sends */
    assert_string_equal(text,
                        "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":"
                        "\"virt-launcher-vm-a-abcde\",\"namespace\":\"default\",\"uid\":"
                        "\"63ec8fc2-bedd-4af0-9b77-53b5010ab02a\"},\"target\":{\"apiVersion\":"
                        "\"v1\",\"kind\":\"Node\",\"name\":\"node-1\"}}");
    free(text);
    cJSON_Delete(b);
    b = binding_json("default", "nope", NULL, "node-1", &text);
    assert_body_matches_fixture("binding-pod-missing-404.json", b);
    free(text);
    cJSON_Delete(b);
    /* names are JSON strings, escapes and all */
    b = binding_json("default", "a\"b\\c\n", NULL, "node-1", &text);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(b, "metadata"), "name")->valuestring, "a\"b\\c\n");
    free(text);
    cJSON_Delete(b);
    b = kube_api_annotation_patch_new("stickyvm.io/node", "node-1", "239");
    assert_body_matches_fixture("vm-merge-patch-annotation-200.json", b);
    cJSON_Delete(b);
    b = kube_api_annotation_patch_new("stickyvm.io/node", NULL, NULL);
    text = cJSON_PrintUnformatted(b);
    assert_string_equal(text, "{\"metadata\":{\"annotations\":{\"stickyvm.io/node\":null}}}");
    free(text);
    cJSON_Delete(b);
}

/* ---- a scripted HTTP/1.1 server on loopback ---------------------------- */

#define MOCK_MAX 64
#define MOCK_CONNS 32 /* connections served at once, each by its own thread */

typedef struct mock_reply {
    int code; /* 0: close the connection without answering; -1: never answer */
    const char *content_type;
    const char *extra_headers; /* "Name: v\r\n" lines, or NULL */
    const char *body;          /* MOCK_ECHO: {"target":"<request target>"} */
} mock_reply;

static const char MOCK_ECHO[] = "echo";

struct mock_server;
typedef struct mock_conn {
    struct mock_server *m;
    int fd;
    pthread_t thread;
} mock_conn;

typedef struct mock_server {
    int fd;
    int port;
    pthread_t thread;
    atomic_int stop;
    pthread_mutex_t lock;
    mock_reply replies[MOCK_MAX];
    int n_replies, next; /* past the end, the last reply repeats */
    char *requests[MOCK_MAX];
    int n_requests;
    int connections;
    mock_conn conns[MOCK_CONNS];
    int n_conns; /* threads started in conns */
    char dir[64];
    char kubeconfig[128];
    char token_file[128];
} mock_server;

/* Waits for readable data; returns 1, or 0 on stop/timeout. */
static int mock_wait(mock_server *m, int fd)
{
    for (int i = 0; i < 100 && !atomic_load(&m->stop); i++) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 50) > 0)
            return 1;
    }
    return 0;
}

static long mock_content_length(const char *head)
{
    const char *h = strcasestr(head, "\r\ncontent-length:");
    char num[32];
    int64_t v = 0;
    size_t n;

    if (!h)
        return 0;
    h += 17;
    while (*h == ' ')
        h++;
    n = strcspn(h, "\r");
    if (n >= sizeof(num))
        return -1;
    memcpy(num, h, n);
    num[n] = '\0';
    return kube_parse_int64(num, 0, 1 << 24, &v) == KUBE_OK ? (long)v : -1;
}

/* Reads one request into in; returns its total length, or 0 at EOF. */
static size_t mock_read_request(mock_server *m, int fd, kube_buf *in)
{
    char chunk[4096];
    char *end;
    long cl;

    while (!in->data || !(end = strstr(in->data, "\r\n\r\n"))) {
        ssize_t n;
        if (!mock_wait(m, fd) || (n = recv(fd, chunk, sizeof(chunk), 0)) <= 0)
            return 0;
        kube_buf_append(in, chunk, (size_t)n);
    }
    cl = mock_content_length(in->data);
    if (cl < 0)
        return 0;
    while (in->len < (size_t)(end - in->data) + 4 + (size_t)cl) {
        ssize_t n;
        if (!mock_wait(m, fd) || (n = recv(fd, chunk, sizeof(chunk), 0)) <= 0)
            return 0;
        kube_buf_append(in, chunk, (size_t)n);
        end = strstr(in->data, "\r\n\r\n");
    }
    return (size_t)(end - in->data) + 4 + (size_t)cl;
}

/* The echo body for the request whose head is req. */
static void mock_echo(const char *req, kube_buf *out)
{
    const char *target = strchr(req, ' ');
    size_t n = target ? strcspn(target + 1, " ") : 0;

    kube_buf_printf(out, "{\"target\":\"%.*s\"}", (int)n, target ? target + 1 : "");
}

static int mock_answer(int fd, const mock_reply *r, const char *req)
{
    kube_buf out = KUBE_BUF_INIT, echo = KUBE_BUF_INIT;
    const char *body = r->body ? r->body : "";
    ssize_t n;

    if (r->body == MOCK_ECHO) {
        mock_echo(req, &echo);
        body = echo.data;
    }

    kube_buf_printf(&out,
                    "HTTP/1.1 %d Scripted\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s\r\n%s",
                    r->code, r->content_type ? r->content_type : "application/json", strlen(body),
                    r->extra_headers ? r->extra_headers : "", body);
    n = send(fd, out.data, out.len, MSG_NOSIGNAL);
    kube_buf_free(&out);
    kube_buf_free(&echo);
    return n > 0;
}

static void mock_serve(mock_server *m, int fd)
{
    kube_buf in = KUBE_BUF_INIT;
    size_t len;

    while ((len = mock_read_request(m, fd, &in)) > 0) {
        mock_reply r;
        pthread_mutex_lock(&m->lock);
        if (m->n_requests < MOCK_MAX)
            m->requests[m->n_requests++] = strndup(in.data, len);
        r = m->replies[m->next < m->n_replies ? m->next : m->n_replies - 1];
        m->next++;
        pthread_mutex_unlock(&m->lock);
        if (r.code < 0) { /* hang until the client gives up or the test ends */
            for (int i = 0; i < 200 && !atomic_load(&m->stop); i++) {
                struct pollfd p = {fd, POLLIN, 0};
                if (poll(&p, 1, 50) > 0)
                    break;
            }
            break;
        }
        if (r.code == 0 || !mock_answer(fd, &r, in.data))
            break;
        memmove(in.data, in.data + len, in.len - len + 1);
        in.len -= len;
    }
    kube_buf_free(&in);
}

static void *mock_conn_thread(void *arg)
{
    mock_conn *c = arg;

    mock_serve(c->m, c->fd);
    close(c->fd);
    return NULL;
}

/* Accepts connections, each served by its own thread (at most MOCK_CONNS
 * over the server's life; later ones are closed at once). */
static void *mock_thread(void *arg)
{
    mock_server *m = arg;

    while (!atomic_load(&m->stop)) {
        struct pollfd p = {m->fd, POLLIN, 0};
        mock_conn *c = NULL;
        int fd;
        if (poll(&p, 1, 50) <= 0 || (fd = accept(m->fd, NULL, NULL)) < 0)
            continue;
        pthread_mutex_lock(&m->lock);
        if (m->n_conns < MOCK_CONNS)
            c = &m->conns[m->n_conns++];
        m->connections++;
        pthread_mutex_unlock(&m->lock);
        if (c) {
            c->m = m;
            c->fd = fd;
            if (pthread_create(&c->thread, NULL, mock_conn_thread, c) == 0)
                continue;
            c->fd = -1;
        }
        close(fd);
    }
    return NULL;
}

static void mock_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static int mock_setup(void **state)
{
    mock_server *m = calloc(1, sizeof(*m));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);
    char text[512];

    if (!m)
        return -1;
    pthread_mutex_init(&m->lock, NULL);
    m->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (m->fd < 0 || bind(m->fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(m->fd, 16) != 0 ||
        getsockname(m->fd, (struct sockaddr *)&a, &alen) != 0)
        return -1;
    m->port = ntohs(a.sin_port);
    kube_strlcpy(m->dir, "/tmp/stickyvm-client-XXXXXX", sizeof(m->dir));
    if (!mkdtemp(m->dir))
        return -1;
    snprintf(m->kubeconfig, sizeof(m->kubeconfig), "%s/kubeconfig", m->dir);
    snprintf(m->token_file, sizeof(m->token_file), "%s/token", m->dir);
    mock_write_file(m->token_file, "tok-1\n");
    snprintf(text, sizeof(text),
             "current-context: c\n"
             "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
             "clusters: [{name: c, cluster: {server: \"http://127.0.0.1:%d\"}}]\n"
             "users: [{name: u, user: {tokenFile: token}}]\n",
             m->port);
    mock_write_file(m->kubeconfig, text);
    m->replies[0] = (mock_reply){200, NULL, NULL, "{}"};
    m->n_replies = 1;
    if (pthread_create(&m->thread, NULL, mock_thread, m) != 0)
        return -1;
    *state = m;
    return 0;
}

static int mock_teardown(void **state)
{
    mock_server *m = *state;
    char path[160];

    atomic_store(&m->stop, 1);
    pthread_join(m->thread, NULL);
    for (int i = 0; i < m->n_conns; i++)
        if (m->conns[i].fd >= 0)
            pthread_join(m->conns[i].thread, NULL);
    close(m->fd);
    for (int i = 0; i < m->n_requests; i++)
        free(m->requests[i]);
    unlink(m->kubeconfig);
    unlink(m->token_file);
    snprintf(path, sizeof(path), "%s", m->dir);
    rmdir(path);
    pthread_mutex_destroy(&m->lock);
    free(m);
    return 0;
}

static void mock_script(mock_server *m, const mock_reply *r, int n)
{
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < n; i++)
        m->replies[i] = r[i];
    m->n_replies = n;
    m->next = 0;
    for (int i = 0; i < m->n_requests; i++)
        free(m->requests[i]);
    m->n_requests = 0;
    pthread_mutex_unlock(&m->lock);
}

static int mock_count(mock_server *m)
{
    int n;
    pthread_mutex_lock(&m->lock);
    n = m->n_requests;
    pthread_mutex_unlock(&m->lock);
    return n;
}

/* Request i as received (the server thread is idle between calls). */
static const char *mock_request(mock_server *m, int i)
{
    assert_true(i < mock_count(m));
    return m->requests[i];
}

static void assert_contains(const char *hay, const char *needle)
{
    if (!strstr(hay, needle))
        fail_msg("\"%s\" not found in:\n%s", needle, hay);
}

typedef struct client_env {
    kube_config *cfg;
    kube_client *c;
} client_env;

static client_env mock_client(mock_server *m, int max_retries)
{
    kube_client_options o;
    client_env e;
    char err[512];

    assert_int_equal(kube_config_from_file(m->kubeconfig, &e.cfg, err, sizeof(err)), KUBE_OK);
    kube_client_options_default(&o);
    o.user_agent = "stickyvm-test/1.0";
    o.max_retries = max_retries;
    o.timeout_ms = 5000;
    assert_int_equal(kube_client_new(e.cfg, &o, &e.c), KUBE_OK);
    kube_client_set_backoff(e.c, 1, 4);
    return e;
}

static void client_env_free(client_env *e)
{
    kube_client_free(e->c);
    kube_config_free(e->cfg);
}

/* ---- kube_client_do on the wire --------------------------------------- */

static void sends_headers_and_body(void **state)
{
    mock_server *m = *state;
    client_env e = mock_client(m, 5);
    mock_reply r[] = {{201, NULL, NULL, "{\"kind\":\"Pod\"}"}};
    kube_response resp = {0};
    const char *req;

    mock_script(m, r, 1);
    assert_int_equal(kube_client_do(e.c, "POST", "/api/v1/namespaces/default/pods",
                                    "application/json", "{\"a\":1}", 7, &resp),
                     KUBE_OK);
    assert_int_equal(resp.code, 201);
    assert_string_equal(resp.body, "{\"kind\":\"Pod\"}");
    req = mock_request(m, 0);
    assert_contains(req, "POST /api/v1/namespaces/default/pods HTTP/1.1\r\n");
    assert_contains(req, "\r\nAuthorization: Bearer tok-1\r\n");
    assert_contains(req, "\r\nAccept: application/json\r\n");
    assert_contains(req, "\r\nContent-Type: application/json\r\n");
    assert_contains(req, "\r\nUser-Agent: stickyvm-test/1.0\r\n");
    assert_null(strstr(strstr(req, "User-Agent:") + 1, "User-Agent:")); /* sent once */
    assert_non_null(strstr(req, "\r\n\r\n{\"a\":1}"));
    assert_null(strcasestr(req, "Expect:"));
    kube_response_clear(&resp);
    client_env_free(&e);
}

static void reuses_the_connection(void **state)
{
    mock_server *m = *state;
    client_env e = mock_client(m, 5);
    kube_response resp = {0};
    kube_client_stats st;

    mock_script(m, (mock_reply[]){{200, NULL, NULL, "{}"}}, 1);
    pthread_mutex_lock(&m->lock);
    m->connections = 0;
    pthread_mutex_unlock(&m->lock);
    for (int i = 0; i < 5; i++)
        assert_int_equal(kube_client_do(e.c, "GET", "/api/v1/nodes", NULL, NULL, 0, &resp),
                         KUBE_OK);
    assert_int_equal(kube_client_do(e.c, "DELETE", "/api/v1/nodes/n", NULL, NULL, 0, &resp),
                     KUBE_OK);
    assert_int_equal(
        kube_client_do(e.c, "PUT", "/api/v1/nodes/n", "application/json", "{}", 2, &resp), KUBE_OK);
    assert_int_equal(m->connections, 1);
    assert_contains(mock_request(m, 5), "DELETE /api/v1/nodes/n HTTP/1.1");
    assert_contains(mock_request(m, 6), "PUT /api/v1/nodes/n HTTP/1.1");
    kube_client_stats_get(e.c, &st);
    assert_int_equal(st.get, 5);
    assert_int_equal(st.del, 1);
    assert_int_equal(st.put, 1);
    assert_int_equal(st.retries, 0);
    kube_response_clear(&resp);
    client_env_free(&e);
}

static void retries_through_429_and_5xx(void **state)
{
    mock_server *m = *state;
    client_env e = mock_client(m, 5);
    kube_response resp = {0};
    kube_client_stats st;
    const char *status429 = "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\",\"code\":429}";

    /* 429 is retried for any verb */
    mock_script(m,
                (mock_reply[]){{429, NULL, "Retry-After: 0\r\n", status429},
                               {429, NULL, NULL, status429},
                               {201, NULL, NULL, "{}"}},
                3);
    assert_int_equal(kube_client_do(e.c, "POST", "/x", "application/json", "{}", 2, &resp),
                     KUBE_OK);
    assert_int_equal(mock_count(m), 3);
    kube_client_stats_get(e.c, &st);
    assert_int_equal(st.post, 3);
    assert_int_equal(st.retries, 2);

    /* a 500 on a GET is retried; on a POST it is not, unless Retry-After */
    mock_script(m, (mock_reply[]){{500, NULL, NULL, "{}"}, {200, NULL, NULL, "{}"}}, 2);
    assert_int_equal(kube_client_do(e.c, "GET", "/x", NULL, NULL, 0, &resp), KUBE_OK);
    assert_int_equal(mock_count(m), 2);
    mock_script(m,
                (mock_reply[]){{500, NULL, NULL,
                                "{\"kind\":\"Status\",\"reason\":\"InternalError\","
                                "\"message\":\"etcd is sad\",\"code\":500}"},
                               {200, NULL, NULL, "{}"}},
                2);
    assert_int_equal(
        kube_client_do(e.c, "PATCH", "/x", "application/merge-patch+json", "{}", 2, &resp),
        KUBE_ESERVER);
    assert_int_equal(mock_count(m), 1);
    assert_int_equal(resp.code, 500);
    assert_string_equal(resp.status.message, "etcd is sad");
    mock_script(m, (mock_reply[]){{503, NULL, "Retry-After: 0\r\n", ""}, {200, NULL, NULL, "{}"}},
                2);
    assert_int_equal(
        kube_client_do(e.c, "PATCH", "/x", "application/merge-patch+json", "{}", 2, &resp),
        KUBE_OK);
    assert_int_equal(mock_count(m), 2);
    kube_response_clear(&resp);
    client_env_free(&e);
}

static void gives_up_after_max_retries(void **state)
{
    mock_server *m = *state;
    client_env e = mock_client(m, 2);
    kube_response resp = {0};

    mock_script(m, (mock_reply[]){{429, NULL, NULL, "{\"kind\":\"Status\",\"code\":429}"}}, 1);
    assert_int_equal(kube_client_do(e.c, "GET", "/x", NULL, NULL, 0, &resp), KUBE_ETOOMANY);
    assert_int_equal(mock_count(m), 3);
    assert_int_equal(resp.code, 429);
    assert_string_equal(resp.status.reason, "TooManyRequests");
    kube_response_clear(&resp);
    client_env_free(&e);
}

static void plain_text_error_keeps_text(void **state)
{
    mock_server *m = *state;
    client_env e = mock_client(m, 5);
    kube_response resp = {0};

    mock_script(m, (mock_reply[]){{404, "text/plain; charset=utf-8", NULL, "404 page not found\n"}},
                1);
    assert_int_equal(kube_client_do(e.c, "GET",
                                    "/apis/kubevirt.io/v1/namespaces/default/virtualmachinez", NULL,
                                    NULL, 0, &resp),
                     KUBE_ENOTFOUND);
    assert_int_equal(resp.code, 404);
    assert_int_equal(resp.status.code, 404);
    assert_string_equal(resp.status.reason, "NotFound");
    assert_string_equal(resp.status.message, "404 page not found");
    assert_string_equal(resp.body, "404 page not found\n");
    kube_response_clear(&resp);
    client_env_free(&e);
}

static void unauthorized_rereads_token_once(void **state)
{
    mock_server *m = *state;
    client_env e = mock_client(m, 5);
    kube_response resp = {0};
    const char *status401 = "{\"kind\":\"Status\",\"reason\":\"Unauthorized\",\"code\":401}";

    /* the token rotated on disk within the refresh period: a 401 forces a
     * re-read and one retry with the new token */
    mock_write_file(m->token_file, "tok-2\n");
    mock_script(m, (mock_reply[]){{401, NULL, NULL, status401}, {200, NULL, NULL, "{}"}}, 2);
    assert_int_equal(kube_client_do(e.c, "GET", "/x", NULL, NULL, 0, &resp), KUBE_OK);
    assert_int_equal(mock_count(m), 2);
    assert_contains(mock_request(m, 0), "Authorization: Bearer tok-1\r\n");
    assert_contains(mock_request(m, 1), "Authorization: Bearer tok-2\r\n");
    /* the same token again: no point retrying */
    mock_script(m, (mock_reply[]){{401, NULL, NULL, status401}}, 1);
    assert_int_equal(kube_client_do(e.c, "GET", "/x", NULL, NULL, 0, &resp), KUBE_EUNAUTHORIZED);
    assert_int_equal(mock_count(m), 1);
    assert_string_equal(resp.status.reason, "Unauthorized");
    kube_response_clear(&resp);
    client_env_free(&e);
}

static void broken_connections(void **state)
{
    mock_server *m = *state;
    client_env e = mock_client(m, 5);
    kube_response resp = {0};
    kube_config *cfg;
    kube_client *c;
    char path[160], text[256], err[256];

    /* a GET whose connection closes without an answer is retried */
    mock_script(m, (mock_reply[]){{0, NULL, NULL, NULL}, {200, NULL, NULL, "{\"ok\":1}"}}, 2);
    assert_int_equal(kube_client_do(e.c, "GET", "/x", NULL, NULL, 0, &resp), KUBE_OK);
    assert_string_equal(resp.body, "{\"ok\":1}");
    assert_int_equal(mock_count(m), 2);
    /* a POST is not: the server may have acted on it. (A fresh client, as
     * curl itself resends once on a reused connection found closed.) */
    client_env_free(&e);
    e = mock_client(m, 5);
    mock_script(m, (mock_reply[]){{0, NULL, NULL, NULL}, {200, NULL, NULL, "{}"}}, 2);
    assert_int_equal(kube_client_do(e.c, "POST", "/x", "application/json", "{}", 2, &resp),
                     KUBE_EIO);
    assert_int_equal(mock_count(m), 1);
    assert_int_equal(resp.code, 0);
    assert_contains(resp.status.message, "POST http://127.0.0.1:");
    kube_response_clear(&resp);
    client_env_free(&e);

    /* nothing listening: KUBE_EIO with the URL in the message */
    snprintf(path, sizeof(path), "%s/closed", m->dir);
    snprintf(text, sizeof(text),
             "current-context: c\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
             "clusters: [{name: c, cluster: {server: \"http://127.0.0.1:1\"}}]\n"
             "users: [{name: u, user: {}}]\n");
    mock_write_file(path, text);
    assert_int_equal(kube_config_from_file(path, &cfg, err, sizeof(err)), KUBE_OK);
    assert_int_equal(kube_client_new(cfg, NULL, &c), KUBE_OK);
    assert_int_equal(kube_client_do(c, "GET", "/healthz", NULL, NULL, 0, &resp), KUBE_EIO);
    assert_contains(resp.status.message, "GET http://127.0.0.1:1/healthz: ");
    assert_null(resp.body);
    kube_response_clear(&resp);
    kube_client_free(c);
    kube_config_free(cfg);
    unlink(path);
}

static void rejects_bad_requests(void **state)
{
    mock_server *m = *state;
    client_env e = mock_client(m, 5);
    kube_response resp = {0};
    kube_client_options o;
    kube_client *c = (kube_client *)1;

    assert_int_equal(kube_client_do(e.c, "BREW", "/x", NULL, NULL, 0, &resp), KUBE_EINVAL);
    assert_int_equal(kube_client_do(e.c, "GET", "x", NULL, NULL, 0, &resp), KUBE_EINVAL);
    assert_int_equal(kube_client_do(e.c, "GET", "/x y", NULL, NULL, 0, &resp), KUBE_EINVAL);
    assert_int_equal(kube_client_do(e.c, "GET", "/x\r\nEvil: 1", NULL, NULL, 0, &resp),
                     KUBE_EINVAL);
    assert_int_equal(kube_client_do(e.c, "POST", "/x", NULL, "{}", 2, &resp), KUBE_EINVAL);
    assert_int_equal(kube_client_do(e.c, "GET", "/x", "application/json", "{}", 2, &resp),
                     KUBE_EINVAL);
    assert_int_equal(mock_count(m), 0);
    kube_client_options_default(&o);
    o.qps = 10;
    o.burst = 0;
    assert_int_equal(kube_client_new(e.cfg, &o, &c), KUBE_EINVAL);
    assert_null(c);
    client_env_free(&e);
}

typedef struct pending_call {
    kube_client *c;
    kube_response resp;
    int rc;
} pending_call;

static void *call_in_thread(void *arg)
{
    pending_call *p = arg;
    p->rc = kube_client_do(p->c, "GET", "/slow", NULL, NULL, 0, &p->resp);
    return NULL;
}

static void shutdown_cancels_waits(void **state)
{
    mock_server *m = *state;
    client_env e = mock_client(m, 5);
    pending_call p = {e.c, {0}, 0};
    pthread_t th;

    /* the server asks for a 30 s pause; shutdown must not wait for it */
    mock_script(m, (mock_reply[]){{429, NULL, "Retry-After: 30\r\n", ""}}, 1);
    assert_int_equal(pthread_create(&th, NULL, call_in_thread, &p), 0);
    WAIT_TRUE_MS(mock_count(m) >= 1, 10000);
    assert_int_equal(mock_count(m), 1);
    kube_client_shutdown(e.c);
    pthread_join(th, NULL);
    assert_int_equal(p.rc, KUBE_ECANCELED);
    assert_contains(p.resp.status.message, "shutting down");
    kube_response_clear(&p.resp);
    /* later calls fail at once, without a request */
    assert_int_equal(kube_client_do(e.c, "GET", "/x", NULL, NULL, 0, &p.resp), KUBE_ECANCELED);
    assert_int_equal(mock_count(m), 1);
    kube_response_clear(&p.resp);
    client_env_free(&e);
}

/* ---- the fence ------------------------------------------------------------ */

typedef struct fence_ctx {
    int allow; /* attempts let through before refusing */
    int calls;
    char method[16], path[128]; /* of the last call */
} fence_ctx;

static const char *count_fence(void *ud, const char *method, const char *path)
{
    fence_ctx *f = ud;

    snprintf(f->method, sizeof(f->method), "%s", method);
    snprintf(f->path, sizeof(f->path), "%s", path);
    return f->calls++ < f->allow ? NULL : "not the leader";
}

/* A refused attempt sends nothing and fails with KUBE_ECANCELED and the
 * fence's reason; every attempt is asked, retries included. */
static void fence_checks_every_attempt(void **state)
{
    mock_server *m = *state;
    client_env e = mock_client(m, 5);
    fence_ctx f = {0, 0, "", ""};
    kube_response resp = {0};
    const char *bind = "/api/v1/namespaces/default/pods/p/binding";

    kube_client_set_fence(e.c, count_fence, &f);
    mock_script(m, (mock_reply[]){{201, NULL, NULL, "{}"}}, 1);
    assert_int_equal(kube_client_do(e.c, "POST", bind, "application/json", "{}", 2, &resp),
                     KUBE_ECANCELED);
    assert_int_equal(mock_count(m), 0);
    assert_int_equal(resp.code, 0);
    assert_contains(resp.status.message, "not the leader");
    assert_string_equal(f.method, "POST");
    assert_string_equal(f.path, bind);
    kube_response_clear(&resp);

    /* the first attempt goes and is answered 503 + Retry-After; the retry
     * is refused */
    f = (fence_ctx){1, 0, "", ""};
    mock_script(m, (mock_reply[]){{503, NULL, "Retry-After: 0\r\n", ""}, {201, NULL, NULL, "{}"}},
                2);
    assert_int_equal(kube_client_do(e.c, "POST", bind, "application/json", "{}", 2, &resp),
                     KUBE_ECANCELED);
    assert_int_equal(mock_count(m), 1);
    assert_int_equal(f.calls, 2);
    assert_contains(resp.status.message, "not the leader");
    kube_response_clear(&resp);

    /* the fence removed, requests go again */
    kube_client_set_fence(e.c, NULL, NULL);
    mock_script(m, (mock_reply[]){{201, NULL, NULL, "{}"}}, 1);
    assert_int_equal(kube_client_do(e.c, "POST", bind, "application/json", "{}", 2, &resp),
                     KUBE_OK);
    assert_int_equal(mock_count(m), 1);
    kube_response_clear(&resp);
    client_env_free(&e);
}

/* ---- the I/O thread ------------------------------------------------------ */

#define CONC_THREADS 8
#define CONC_CALLS 25

typedef struct conc_call {
    kube_client *c;
    int id;
    int wrong; /* answers that were not this thread's */
} conc_call;

static void *concurrent_caller(void *arg)
{
    conc_call *p = arg;

    for (int i = 0; i < CONC_CALLS; i++) {
        kube_response resp = {0};
        char path[64], want[96];
        snprintf(path, sizeof(path), "/api/v1/namespaces/t%d/pods/p%d", p->id, i);
        snprintf(want, sizeof(want), "{\"target\":\"%s\"}", path);
        if (kube_client_do(p->c, i % 2 ? "GET" : "POST", path, i % 2 ? NULL : "application/json",
                           i % 2 ? NULL : "{}", i % 2 ? 0 : 2, &resp) != KUBE_OK ||
            !resp.body || strcmp(resp.body, want) != 0)
            p->wrong++;
        kube_response_clear(&resp);
    }
    return NULL;
}

static void concurrent_requests_share_connections(void **state)
{
    mock_server *m = *state;
    client_env e = mock_client(m, 0);
    conc_call calls[CONC_THREADS];
    pthread_t th[CONC_THREADS];
    kube_client_stats st;

    /* every thread gets its own answers, over kept-alive connections (at
     * most one per thread in flight at once) */
    mock_script(m, (mock_reply[]){{200, NULL, NULL, MOCK_ECHO}}, 1);
    for (int i = 0; i < CONC_THREADS; i++) {
        calls[i] = (conc_call){e.c, i, 0};
        assert_int_equal(pthread_create(&th[i], NULL, concurrent_caller, &calls[i]), 0);
    }
    for (int i = 0; i < CONC_THREADS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(calls[i].wrong, 0);
    }
    kube_client_stats_get(e.c, &st);
    assert_int_equal(st.get + st.post, CONC_THREADS * CONC_CALLS);
    pthread_mutex_lock(&m->lock);
    assert_true(m->connections >= 1 && m->connections <= CONC_THREADS);
    pthread_mutex_unlock(&m->lock);
    client_env_free(&e);
}

static void shutdown_ends_transfers_in_flight(void **state)
{
    mock_server *m = *state;
    client_env e = mock_client(m, 5);
    pending_call p = {e.c, {0}, 0};
    int64_t start;
    pthread_t th;

    /* the server never answers (the timeout is 5 s): shutdown must end the
     * transfer at once */
    mock_script(m, (mock_reply[]){{-1, NULL, NULL, NULL}}, 1);
    assert_int_equal(pthread_create(&th, NULL, call_in_thread, &p), 0);
    WAIT_TRUE_MS(mock_count(m) >= 1, 10000);
    assert_int_equal(mock_count(m), 1);
    start = kube_now_ms();
    kube_client_shutdown(e.c);
    pthread_join(th, NULL);
    assert_true(kube_now_ms() - start < 1000);
    assert_int_equal(p.rc, KUBE_ECANCELED);
    assert_int_equal(p.resp.code, 0);
    assert_contains(p.resp.status.message, "shutting down");
    kube_response_clear(&p.resp);
    assert_int_equal(mock_count(m), 1); /* not retried */
    client_env_free(&e);
}

static void request_timeout(void **state)
{
    mock_server *m = *state;
    kube_client_options o;
    kube_response resp = {0};
    kube_config *cfg;
    kube_client *c;
    char err[256];
    int64_t start;

    assert_int_equal(kube_config_from_file(m->kubeconfig, &cfg, err, sizeof(err)), KUBE_OK);
    kube_client_options_default(&o);
    o.timeout_ms = 300;
    assert_int_equal(kube_client_new(cfg, &o, &c), KUBE_OK);
    mock_script(m, (mock_reply[]){{-1, NULL, NULL, NULL}}, 1);
    start = kube_now_ms();
    assert_int_equal(kube_client_do(c, "GET", "/slow", NULL, NULL, 0, &resp), KUBE_ETIMEDOUT);
    assert_true(kube_now_ms() - start >= 250);
    assert_true(kube_now_ms() - start < 3000);
    assert_int_equal(resp.code, 0);
    assert_contains(resp.status.message, "GET http://127.0.0.1:");
    assert_int_equal(mock_count(m), 1); /* a timeout is not retried */
    /* the next request works (on a new connection) */
    mock_script(m, (mock_reply[]){{200, NULL, NULL, "{}"}}, 1);
    assert_int_equal(kube_client_do(c, "GET", "/x", NULL, NULL, 0, &resp), KUBE_OK);
    kube_response_clear(&resp);
    kube_client_free(c);
    kube_config_free(cfg);
}

/* The request line the mock received for one GET /p through a new client,
 * with the proxy variables as given (NULL: unset). */
static void get_with_proxy_env(mock_server *m, const char *http_proxy, const char *no_proxy,
                               char *line, size_t n)
{
    client_env e;
    kube_response resp = {0};

    setenv("http_proxy", http_proxy, 1);
    if (no_proxy)
        setenv("NO_PROXY", no_proxy, 1);
    e = mock_client(m, 0);
    mock_script(m, (mock_reply[]){{200, NULL, NULL, "{}"}}, 1);
    assert_int_equal(kube_client_do(e.c, "GET", "/p", NULL, NULL, 0, &resp), KUBE_OK);
    snprintf(line, n, "%.*s", (int)strcspn(mock_request(m, 0), "\r"), mock_request(m, 0));
    kube_response_clear(&resp);
    client_env_free(&e);
    unsetenv("http_proxy");
    unsetenv("NO_PROXY");
}

static void proxy_from_environment(void **state)
{
    mock_server *m = *state;
    char proxy[64], line[128], want[128];
    char *saved = getenv("no_proxy") ? strdup(getenv("no_proxy")) : NULL;

    /* the mock server doubles as the proxy: a proxied request carries the
     * absolute URL, a direct one the path */
    unsetenv("no_proxy");
    snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%d", m->port);
    get_with_proxy_env(m, proxy, NULL, line, sizeof(line));
    snprintf(want, sizeof(want), "GET http://127.0.0.1:%d/p HTTP/1.1", m->port);
    assert_string_equal(line, want);
    get_with_proxy_env(m, proxy, "localhost,127.0.0.1", line, sizeof(line));
    assert_string_equal(line, "GET /p HTTP/1.1");
    if (saved)
        setenv("no_proxy", saved, 1);
    free(saved);
}

/* ---- typed calls on the wire ------------------------------------------- */

static void typed_calls_send_the_right_requests(void **state)
{
    mock_server *m = *state;
    client_env e = mock_client(m, 5);
    kube_status st;
    cJSON *out, *patch;
    const char *req;

    mock_script(m, (mock_reply[]){{200, NULL, NULL, "{\"metadata\":{\"name\":\"vm-a\"}}"}}, 1);
    assert_int_equal(kube_api_set_annotation(e.c, &KUBE_RES_VMS, "default", "vm-a",
                                             "stickyvm.io/node", "node-1", "239", &out, &st),
                     KUBE_OK);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(out, "metadata"), "name")->valuestring, "vm-a");
    cJSON_Delete(out);
    req = mock_request(m, 0);
    assert_contains(req, "PATCH /apis/kubevirt.io/v1/namespaces/default/virtualmachines/vm-a ");
    assert_contains(req, "Content-Type: application/merge-patch+json\r\n");
    assert_contains(req, "{\"metadata\":{\"resourceVersion\":\"239\",\"annotations\":"
                         "{\"stickyvm.io/node\":\"node-1\"}}}");

    mock_script(m,
                (mock_reply[]){{201, NULL, NULL,
                                "{\"kind\":\"Status\",\"status\":\"Success\","
                                "\"code\":201}"}},
                1);
    assert_int_equal(kube_api_bind(e.c, "default", "p1", "uid-1", "node-2", &st), KUBE_OK);
    req = mock_request(m, 0);
    assert_contains(req, "POST /api/v1/namespaces/default/pods/p1/binding ");
    assert_contains(req,
                    "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"node-2\"}");

    patch = cJSON_Parse("{\"status\":{\"nominatedNodeName\":\"node-1\"}}");
    mock_script(m, (mock_reply[]){{200, NULL, NULL, "{}"}}, 1);
    assert_int_equal(kube_api_patch_pod_status(e.c, "default", "p1", patch, &st), KUBE_OK);
    assert_contains(mock_request(m, 0), "PATCH /api/v1/namespaces/default/pods/p1/status ");
    assert_contains(mock_request(m, 0), "Content-Type: application/strategic-merge-patch+json\r\n");
    cJSON_Delete(patch);

    patch = cJSON_Parse("[{\"op\":\"remove\",\"path\":\"/metadata/annotations/a~1b\"}]");
    assert_int_equal(kube_api_json_patch(e.c, &KUBE_RES_VMS, "default", "vm-a", patch, NULL, &st),
                     KUBE_OK);
    assert_contains(mock_request(m, 1), "Content-Type: application/json-patch+json\r\n");
    assert_int_equal(kube_api_merge_patch(e.c, &KUBE_RES_VMS, "default", "vm-a", patch, NULL, &st),
                     KUBE_EINVAL); /* a merge patch is an object */
    cJSON_Delete(patch);

    assert_int_equal(kube_api_delete(e.c, &KUBE_RES_PODS, "default", "p1", &st), KUBE_OK);
    assert_contains(mock_request(m, 2), "DELETE /api/v1/namespaces/default/pods/p1 ");
    assert_int_equal(kube_api_get(e.c, &KUBE_RES_PODS, NULL, "p1", &out, &st), KUBE_EINVAL);
    assert_null(out);
    assert_contains(st.message, "namespace");
    assert_int_equal(mock_count(m), 3);
    client_env_free(&e);
}

static void typed_calls_report_failures(void **state)
{
    mock_server *m = *state;
    client_env e = mock_client(m, 5);
    cJSON *fx = load_fixture("vm-merge-patch-stale-rv-409.json");
    char *conflict = cJSON_PrintUnformatted(cJSON_GetObjectItem(fx, "body"));
    kube_status st;
    cJSON *out = (cJSON *)1;

    mock_script(m, (mock_reply[]){{409, NULL, NULL, conflict}}, 1);
    assert_int_equal(kube_api_set_annotation(e.c, &KUBE_RES_VMS, "default", "vm-a",
                                             "stickyvm.io/node", "node-2", "239", &out, &st),
                     KUBE_ECONFLICT);
    assert_null(out);
    assert_int_equal(st.code, 409);
    assert_string_equal(st.reason, "Conflict");
    assert_contains(st.message, "the object has been modified");
    assert_int_equal(mock_count(m), 1); /* a conflict is not retried */

    mock_script(m, (mock_reply[]){{200, "text/html", NULL, "<html>proxy</html>"}}, 1);
    assert_int_equal(kube_api_get(e.c, &KUBE_RES_NODES, NULL, "n1", &out, &st), KUBE_EPARSE);
    assert_null(out);
    assert_int_equal(st.code, 200);
    assert_contains(st.message, "not JSON");
    free(conflict);
    cJSON_Delete(fx);
    client_env_free(&e);
}

/* ---- streams ------------------------------------------------------------ */

static size_t discard(char *p, size_t s, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return s * n;
}

static void prepares_stream_handles(void **state)
{
    mock_server *m = *state;
    client_env e = mock_client(m, 5);
    struct curl_slist *headers;
    CURL *h = curl_easy_init();
    long code = 0;

    mock_script(m, (mock_reply[]){{200, NULL, NULL, "{\"type\":\"ADDED\"}\n"}}, 1);
    assert_int_equal(kube_client_setup_stream(e.c, h, "/api/v1/pods?watch=1", &headers), KUBE_OK);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    assert_int_equal(code, 200);
    assert_contains(mock_request(m, 0), "GET /api/v1/pods?watch=1 HTTP/1.1\r\n");
    assert_contains(mock_request(m, 0), "Authorization: Bearer tok-1\r\n");
    assert_contains(mock_request(m, 0), "Accept: application/json\r\n");
    curl_easy_cleanup(h);
    curl_slist_free_all(headers);
    assert_int_equal(kube_client_setup_stream(e.c, NULL, "/x", &headers), KUBE_EINVAL);
    assert_null(headers);
    client_env_free(&e);
}

int test_group_client(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decodes_every_recorded_failure),
        cmocka_unit_test(maps_recorded_reasons_to_errors),
        cmocka_unit_test(decodes_watch_error_event),
        cmocka_unit_test(status_decoding_edge_cases),
        cmocka_unit_test(retry_policy),
        cmocka_unit_test(backoff_grows_jittered_and_capped),
        cmocka_unit_test(builds_paths),
        cmocka_unit_test(bodies_match_recorded_requests),
        cmocka_unit_test_setup_teardown(sends_headers_and_body, mock_setup, mock_teardown),
        cmocka_unit_test_setup_teardown(reuses_the_connection, mock_setup, mock_teardown),
        cmocka_unit_test_setup_teardown(retries_through_429_and_5xx, mock_setup, mock_teardown),
        cmocka_unit_test_setup_teardown(gives_up_after_max_retries, mock_setup, mock_teardown),
        cmocka_unit_test_setup_teardown(plain_text_error_keeps_text, mock_setup, mock_teardown),
        cmocka_unit_test_setup_teardown(unauthorized_rereads_token_once, mock_setup, mock_teardown),
        cmocka_unit_test_setup_teardown(broken_connections, mock_setup, mock_teardown),
        cmocka_unit_test_setup_teardown(rejects_bad_requests, mock_setup, mock_teardown),
        cmocka_unit_test_setup_teardown(shutdown_cancels_waits, mock_setup, mock_teardown),
        cmocka_unit_test_setup_teardown(fence_checks_every_attempt, mock_setup, mock_teardown),
        cmocka_unit_test_setup_teardown(concurrent_requests_share_connections, mock_setup,
                                        mock_teardown),
        cmocka_unit_test_setup_teardown(shutdown_ends_transfers_in_flight, mock_setup,
                                        mock_teardown),
        cmocka_unit_test_setup_teardown(request_timeout, mock_setup, mock_teardown),
        cmocka_unit_test_setup_teardown(proxy_from_environment, mock_setup, mock_teardown),
        cmocka_unit_test_setup_teardown(typed_calls_send_the_right_requests, mock_setup,
                                        mock_teardown),
        cmocka_unit_test_setup_teardown(typed_calls_report_failures, mock_setup, mock_teardown),
        cmocka_unit_test_setup_teardown(prepares_stream_handles, mock_setup, mock_teardown),
    };
    return cmocka_run_group_tests_name("client", tests, NULL, NULL);
}
