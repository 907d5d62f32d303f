/*
 * tests/harness.c - starts stickyvm-emulator for a test or benchmark and
 * speaks its control API (see harness.h).
 *
 * Environment:
 *   STICKYVM_EMULATOR_LOG=stderr    emulator log to stderr instead of a file
 *   STICKYVM_EMULATOR_WRAPPER="valgrind --leak-check=full"
 *                                   run the emulator under a wrapper command
 *   STICKYVM_KEEP_TEMP=1            keep the data directory after stop
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"

#ifndef STICKYVM_BINARY_DIR
#define STICKYVM_BINARY_DIR "."
#endif

#define MAX_IDENTITIES 64
#define MAX_ARGS 64

typedef struct identity_store {
    harness_identity pub;
    char *user;
    char *cert_file;
    char *key_file;
    char *token;
    char *kubeconfig;
} identity_store;

struct harness {
    pid_t pid;
    char dir[256];
    char url[64];
    int port;
    char kubeconfig[320];
    char ca[320];
    char admin_cert[320];
    char admin_key[320];
    char fp_ca[320];
    char fp_cert[320];
    char fp_key[320];
    char log[320];
    int failed_start;
    pthread_mutex_t mu;
    identity_store ids[MAX_IDENTITIES];
    size_t n_ids;
    char *extra_files[2 * MAX_IDENTITIES];
    size_t n_extra;
};

static pthread_once_t g_curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ */
/* Process                                                             */
/* ------------------------------------------------------------------ */

static void add_arg(char **argv, int *argc, char *value)
{
    if (*argc < MAX_ARGS - 1)
        argv[(*argc)++] = value;
}

static char *int_arg(const char *flag, int64_t v)
{
    char buf[96];

    snprintf(buf, sizeof(buf), "%s=%lld", flag, (long long)v);
    return strdup(buf);
}

/* Builds argv (strings owned by the caller, freed with free_args). */
static int build_args(harness *h, const harness_opts *o, char **argv)
{
    char *wrapper = getenv("STICKYVM_EMULATOR_WRAPPER");
    char buf[512];
    int argc = 0;

    if (wrapper && *wrapper) {
        char *copy = strdup(wrapper), *save = NULL, *tok;
        for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
            add_arg(argv, &argc, strdup(tok));
        free(copy);
    }
    add_arg(argv, &argc, strdup(STICKYVM_BINARY_DIR "/stickyvm-emulator"));
    snprintf(buf, sizeof(buf), "--data-dir=%s", h->dir);
    add_arg(argv, &argc, strdup(buf));
    add_arg(argv, &argc, strdup("--port=0"));
    if (o->nodes > 0)
        add_arg(argv, &argc, int_arg("--nodes", o->nodes));
    if (o->pods > 0)
        add_arg(argv, &argc, int_arg("--pods", o->pods));
    if (o->history > 0)
        add_arg(argv, &argc, int_arg("--history", o->history));
    if (o->bookmark_interval_ms > 0)
        add_arg(argv, &argc, int_arg("--bookmark-interval-ms", o->bookmark_interval_ms));
    if (o->verbosity > 0)
        add_arg(argv, &argc, int_arg("--v", o->verbosity));
    if (o->demo)
        add_arg(argv, &argc, strdup("--demo"));
    if (o->disable_http2)
        add_arg(argv, &argc, strdup("--disable-http2"));
    for (size_t i = 0; o->extra_args && o->extra_args[i]; i++)
        add_arg(argv, &argc, strdup(o->extra_args[i]));
    argv[argc] = NULL;
    for (int i = 0; i < argc; i++)
        if (!argv[i])
            return KUBE_ENOMEM;
    return KUBE_OK;
}

static void free_args(char **argv)
{
    for (int i = 0; argv[i]; i++)
        free(argv[i]);
}

static int spawn(harness *h, char **argv)
{
    int to_stderr =
        getenv("STICKYVM_EMULATOR_LOG") && !strcmp(getenv("STICKYVM_EMULATOR_LOG"), "stderr");
    pid_t parent = getpid();
    pid_t pid = fork();

    if (pid < 0)
        return KUBE_EIO;
    if (pid == 0) {
        int null_fd = open("/dev/null", O_RDWR);
        int log_fd = to_stderr ? -1 : open(h->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(127);
        if (null_fd >= 0) {
            dup2(null_fd, STDIN_FILENO);
            dup2(null_fd, STDOUT_FILENO);
        }
        if (log_fd >= 0)
            dup2(log_fd, STDERR_FILENO);
        execvp(argv[0], argv);
        _exit(127);
    }
    h->pid = pid;
    return KUBE_OK;
}

static int child_alive(harness *h)
{
    int status;

    if (h->pid <= 0)
        return 0;
    if (waitpid(h->pid, &status, WNOHANG) == h->pid) {
        h->pid = 0;
        return 0;
    }
    return 1;
}

static int read_port(harness *h)
{
    char path[320], buf[32] = "";
    FILE *f;
    int64_t port;

    snprintf(path, sizeof(path), "%s/port", h->dir);
    f = fopen(path, "r");
    if (!f)
        return 0;
    if (!fgets(buf, sizeof(buf), f))
        buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    if (kube_parse_int64(buf, 1, 65535, &port) != KUBE_OK)
        return 0;
    h->port = (int)port;
    snprintf(h->url, sizeof(h->url), "https://127.0.0.1:%d", h->port);
    return 1;
}

static int wait_ready(harness *h, int timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;

    while (now_ms() < deadline) {
        harness_response r = {0};
        if (!child_alive(h))
            return KUBE_EIO;
        if (h->port == 0 && !read_port(h)) {
            sleep_ms(20);
            continue;
        }
        if (harness_request(h, NULL, "GET", "/readyz", NULL, NULL, &r) == KUBE_OK &&
            r.status == 200) {
            harness_response_free(&r);
            return KUBE_OK;
        }
        harness_response_free(&r);
        sleep_ms(20);
    }
    return KUBE_ETIMEDOUT;
}

static void set_paths(harness *h)
{
    snprintf(h->kubeconfig, sizeof(h->kubeconfig), "%s/admin.kubeconfig", h->dir);
    snprintf(h->ca, sizeof(h->ca), "%s/ca.crt", h->dir);
    snprintf(h->admin_cert, sizeof(h->admin_cert), "%s/admin.crt", h->dir);
    snprintf(h->admin_key, sizeof(h->admin_key), "%s/admin.key", h->dir);
    snprintf(h->fp_ca, sizeof(h->fp_ca), "%s/front-proxy-ca.crt", h->dir);
    snprintf(h->fp_cert, sizeof(h->fp_cert), "%s/front-proxy-client.crt", h->dir);
    snprintf(h->fp_key, sizeof(h->fp_key), "%s/front-proxy-client.key", h->dir);
    if (getenv("STICKYVM_EMULATOR_LOG") && !strcmp(getenv("STICKYVM_EMULATOR_LOG"), "stderr"))
        h->log[0] = '\0';
    else
        snprintf(h->log, sizeof(h->log), "%s/emulator.log", h->dir);
}

static void dump_log(const harness *h)
{
    char *text = NULL;
    size_t len = 0;

    if (!h->log[0] || kube_read_file(h->log, &text, &len) != KUBE_OK)
        return;
    fprintf(stderr, "---- emulator log (%s) ----\n%s---- end of emulator log ----\n", h->log, text);
    free(text);
}

int harness_start(const harness_opts *opts, harness **out)
{
    harness_opts defaults = HARNESS_OPTS_INIT;
    const harness_opts *o = opts ? opts : &defaults;
    char *argv[MAX_ARGS] = {0};
    harness *h;
    int rc;

    *out = NULL;
    pthread_once(&g_curl_once, curl_init_once);
    h = calloc(1, sizeof(*h));
    if (!h)
        return KUBE_ENOMEM;
    pthread_mutex_init(&h->mu, NULL);
    snprintf(h->dir, sizeof(h->dir), "%s/stickyvm-emu-XXXXXX",
             getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(h->dir)) {
        free(h);
        return KUBE_EIO;
    }
    set_paths(h);
    rc = build_args(h, o, argv);
    if (rc == KUBE_OK)
        rc = spawn(h, argv);
    free_args(argv);
    if (rc == KUBE_OK)
        rc = wait_ready(h, o->start_timeout_ms > 0 ? o->start_timeout_ms : 30000);
    if (rc != KUBE_OK) {
        fprintf(stderr, "harness: the emulator did not start (%s)\n", kube_strerror(rc));
        h->failed_start = 1;
        harness_stop(h);
        return rc;
    }
    *out = h;
    return KUBE_OK;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void harness_stop(harness *h)
{
    if (!h)
        return;
    if (h->pid > 0) {
        int64_t deadline = now_ms() + 5000;
        kill(h->pid, SIGTERM);
        while (child_alive(h) && now_ms() < deadline)
            sleep_ms(10);
        if (h->pid > 0) {
            kill(h->pid, SIGKILL);
            waitpid(h->pid, NULL, 0);
        }
    }
    if (h->failed_start)
        dump_log(h);
    if (!getenv("STICKYVM_KEEP_TEMP"))
        nftw(h->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    for (size_t i = 0; i < h->n_ids; i++) {
        free(h->ids[i].user);
        free(h->ids[i].cert_file);
        free(h->ids[i].key_file);
        free(h->ids[i].token);
        free(h->ids[i].kubeconfig);
    }
    for (size_t i = 0; i < h->n_extra; i++)
        free(h->extra_files[i]);
    pthread_mutex_destroy(&h->mu);
    free(h);
}

const char *harness_url(const harness *h)
{
    return h->url;
}
int harness_port(const harness *h)
{
    return h->port;
}

pid_t harness_pid(const harness *h)
{
    return h->pid;
}

int harness_free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;

    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}
const char *harness_data_dir(const harness *h)
{
    return h->dir;
}
const char *harness_kubeconfig(const harness *h)
{
    return h->kubeconfig;
}
const char *harness_ca_file(const harness *h)
{
    return h->ca;
}
const char *harness_admin_cert_file(const harness *h)
{
    return h->admin_cert;
}
const char *harness_admin_key_file(const harness *h)
{
    return h->admin_key;
}
const char *harness_front_proxy_ca_file(const harness *h)
{
    return h->fp_ca;
}
const char *harness_front_proxy_cert_file(const harness *h)
{
    return h->fp_cert;
}
const char *harness_front_proxy_key_file(const harness *h)
{
    return h->fp_key;
}
const char *harness_log_file(const harness *h)
{
    return h->log;
}

/* ------------------------------------------------------------------ */
/* Requests                                                            */
/* ------------------------------------------------------------------ */

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
    return kube_buf_append(ctx, data, size * n) == KUBE_OK ? size * n : 0;
}

void harness_response_free(harness_response *r)
{
    free(r->body);
    free(r->content_type);
    memset(r, 0, sizeof(*r));
}

static struct curl_slist *request_headers(const harness_identity *as, const char *const *extra,
                                          const char *content_type, const char *body)
{
    struct curl_slist *hdrs = NULL;
    char buf[512];
    int accept = 0;

    for (size_t i = 0; extra && extra[i]; i++) {
        hdrs = curl_slist_append(hdrs, extra[i]);
        accept |= strncasecmp(extra[i], "Accept:", 7) == 0;
    }
    if (!accept) /* one Accept: the caller's, else JSON */
        hdrs = curl_slist_append(hdrs, "Accept: application/json");

    if (body) {
        snprintf(buf, sizeof(buf), "Content-Type: %s",
                 content_type ? content_type : "application/json");
        hdrs = curl_slist_append(hdrs, buf);
    }
    if (as && as->token) {
        snprintf(buf, sizeof(buf), "Authorization: Bearer %s", as->token);
        hdrs = curl_slist_append(hdrs, buf);
    }
    return curl_slist_append(hdrs, "Expect:");
}

int harness_request(harness *h, const harness_identity *as, const char *method, const char *path,
                    const char *content_type, const char *body, harness_response *out)
{
    return harness_request_headers(h, as, method, path, NULL, content_type, body, out);
}

int harness_request_headers(harness *h, const harness_identity *as, const char *method,
                            const char *path, const char *const *headers, const char *content_type,
                            const char *body, harness_response *out)
{
    return harness_request_bytes(h, as, method, path, headers, content_type, body,
                                 body ? strlen(body) : 0, out);
}

int harness_request_bytes(harness *h, const harness_identity *as, const char *method,
                          const char *path, const char *const *headers, const char *content_type,
                          const char *body, size_t body_len, harness_response *out)
{
    CURL *c = curl_easy_init();
    struct curl_slist *hdrs;
    kube_buf resp = KUBE_BUF_INIT;
    char url[4096], *ct = NULL;
    CURLcode cc;

    memset(out, 0, sizeof(*out));
    if (!c)
        return KUBE_ENOMEM;
    snprintf(url, sizeof(url), "%s%s", h->url, path);
    hdrs = request_headers(as, headers, content_type, body);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_CAINFO, h->ca);
    curl_easy_setopt(c, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 60000L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &resp);
    if (!as || !as->token) {
        curl_easy_setopt(c, CURLOPT_SSLCERT, as ? as->cert_file : h->admin_cert);
        curl_easy_setopt(c, CURLOPT_SSLKEY, as ? as->key_file : h->admin_key);
    }
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)body_len);
    }
    if (!strcmp(method, "HEAD"))
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    cc = curl_easy_perform(c);
    if (cc == CURLE_OK) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
        curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
        out->content_type = ct ? strdup(ct) : NULL;
        out->len = resp.len;
        out->body = kube_buf_take(&resp);
    }
    kube_buf_free(&resp);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(c);
    if (cc != CURLE_OK)
        return cc == CURLE_OPERATION_TIMEDOUT ? KUBE_ETIMEDOUT : KUBE_EIO;
    return out->body ? KUBE_OK : KUBE_ENOMEM;
}

int harness_request_json(harness *h, const harness_identity *as, const char *method,
                         const char *path, const char *body, long *status, cJSON **json)
{
    harness_response r;
    int rc = harness_request(h, as, method, path, NULL, body, &r);

    *json = NULL;
    *status = 0;
    if (rc != KUBE_OK)
        return rc;
    *status = r.status;
    *json = cJSON_Parse(r.body);
    harness_response_free(&r);
    return KUBE_OK;
}

int harness_create(harness *h, const char *collection_path, const char *json, cJSON **created)
{
    long status;
    cJSON *out = NULL;
    int rc = harness_request_json(h, NULL, "POST", collection_path, json, &status, &out);

    if (created)
        *created = NULL;
    if (rc != KUBE_OK)
        return rc;
    if (status != 201) {
        const char *reason = cJSON_GetStringValue(cJSON_GetObjectItem(out, "reason"));
        cJSON_Delete(out);
        return kube_err_from_status(status, reason);
    }
    if (created)
        *created = out;
    else
        cJSON_Delete(out);
    return KUBE_OK;
}

/* ------------------------------------------------------------------ */
/* Control API                                                         */
/* ------------------------------------------------------------------ */

static int control(harness *h, const char *method, const char *what, const char *body, cJSON **out)
{
    char path[256];
    long status;
    cJSON *json = NULL;
    int rc;

    snprintf(path, sizeof(path), "/emulator/v1/%s", what);
    rc = harness_request_json(h, NULL, method, path, body, &status, &json);
    if (out)
        *out = NULL;
    if (rc != KUBE_OK)
        return rc;
    if (status < 200 || status >= 300) {
        const char *reason = cJSON_GetStringValue(cJSON_GetObjectItem(json, "reason"));
        rc = kube_err_from_status(status, reason);
        fprintf(stderr, "harness: %s %s answered %ld\n", method, path, status);
        cJSON_Delete(json);
        return rc ? rc : KUBE_ESERVER;
    }
    if (out)
        *out = json;
    else
        cJSON_Delete(json);
    return KUBE_OK;
}

static cJSON *string_array(const char *const *items, size_t n)
{
    cJSON *a = cJSON_CreateArray();

    for (size_t i = 0; a && items && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(items[i]));
    return a;
}

static cJSON *null_terminated(const char *const *items)
{
    size_t n = 0;

    while (items && items[n])
        n++;
    return string_array(items, n);
}

static char *dup_member(const cJSON *j, const char *key)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(j, key));

    return v ? strdup(v) : NULL;
}

static int add_identity(harness *h, const char *kind, const char *user, const char *const *groups,
                        size_t n_groups, const char *token, const harness_identity **out)
{
    cJSON *spec = cJSON_CreateObject(), *resp = NULL;
    identity_store *id;
    char *body;
    int rc;

    *out = NULL;
    cJSON_AddStringToObject(spec, "kind", kind);
    cJSON_AddStringToObject(spec, "user", user);
    cJSON_AddItemToObject(spec, "groups", string_array(groups, n_groups));
    if (token)
        cJSON_AddStringToObject(spec, "token", token);
    body = cJSON_PrintUnformatted(spec);
    cJSON_Delete(spec);
    if (!body)
        return KUBE_ENOMEM;
    rc = control(h, "POST", "identities", body, &resp);
    free(body);
    if (rc != KUBE_OK)
        return rc;
    pthread_mutex_lock(&h->mu);
    if (h->n_ids >= MAX_IDENTITIES) {
        pthread_mutex_unlock(&h->mu);
        cJSON_Delete(resp);
        return KUBE_ERANGE;
    }
    id = &h->ids[h->n_ids++];
    id->user = strdup(user);
    id->cert_file = dup_member(resp, "certFile");
    id->key_file = dup_member(resp, "keyFile");
    id->token = dup_member(resp, "token");
    id->kubeconfig = dup_member(resp, "kubeconfig");
    id->pub = (harness_identity){id->user, id->cert_file, id->key_file, id->token, id->kubeconfig};
    *out = &id->pub;
    pthread_mutex_unlock(&h->mu);
    cJSON_Delete(resp);
    return KUBE_OK;
}

int harness_add_cert_user(harness *h, const char *user, const char *const *groups, size_t n_groups,
                          const harness_identity **out)
{
    return add_identity(h, "cert", user, groups, n_groups, NULL, out);
}

int harness_add_token_user(harness *h, const char *user, const char *const *groups, size_t n_groups,
                           const harness_identity **out)
{
    return add_identity(h, "token", user, groups, n_groups, NULL, out);
}

int harness_add_given_token_user(harness *h, const char *user, const char *const *groups,
                                 size_t n_groups, const char *token, const harness_identity **out)
{
    return add_identity(h, "token", user, groups, n_groups, token, out);
}

int harness_issue_serving_cert(harness *h, const char *cn, const char *const *dns, size_t n_dns,
                               const char *const *ips, size_t n_ips, const char **cert_file,
                               const char **key_file)
{
    cJSON *spec = cJSON_CreateObject(), *resp = NULL;
    char *body;
    int rc;

    cJSON_AddStringToObject(spec, "kind", "serving");
    cJSON_AddStringToObject(spec, "cn", cn);
    cJSON_AddItemToObject(spec, "dns", string_array(dns, n_dns));
    cJSON_AddItemToObject(spec, "ips", string_array(ips, n_ips));
    body = cJSON_PrintUnformatted(spec);
    cJSON_Delete(spec);
    if (!body)
        return KUBE_ENOMEM;
    rc = control(h, "POST", "identities", body, &resp);
    free(body);
    if (rc != KUBE_OK)
        return rc;
    pthread_mutex_lock(&h->mu);
    if (h->n_extra + 2 > sizeof(h->extra_files) / sizeof(h->extra_files[0])) {
        rc = KUBE_ERANGE;
    } else {
        h->extra_files[h->n_extra] = dup_member(resp, "certFile");
        h->extra_files[h->n_extra + 1] = dup_member(resp, "keyFile");
        *cert_file = h->extra_files[h->n_extra];
        *key_file = h->extra_files[h->n_extra + 1];
        h->n_extra += 2;
    }
    pthread_mutex_unlock(&h->mu);
    cJSON_Delete(resp);
    return rc;
}

int harness_set_faults(harness *h, const harness_faults *f)
{
    cJSON *spec = cJSON_CreateObject();
    char *body;
    int rc;

    cJSON_AddNumberToObject(spec, "errorRate", f->error_rate);
    cJSON_AddNumberToObject(spec, "errorCode", f->error_code ? f->error_code : 500);
    cJSON_AddNumberToObject(spec, "retryAfterSeconds", f->retry_after_seconds);
    cJSON_AddNumberToObject(spec, "delayMs", f->delay_ms);
    if (f->verbs)
        cJSON_AddItemToObject(spec, "verbs", null_terminated(f->verbs));
    if (f->resources)
        cJSON_AddItemToObject(spec, "resources", null_terminated(f->resources));
    body = cJSON_PrintUnformatted(spec);
    cJSON_Delete(spec);
    if (!body)
        return KUBE_ENOMEM;
    rc = control(h, "POST", "faults", body, NULL);
    free(body);
    return rc;
}

static cJSON *rule_json(const harness_fault_rule *r)
{
    static const char *const actions[] = {"status", "reset", "stall", "webhook"};
    cJSON *j = cJSON_CreateObject();

    cJSON_AddStringToObject(j, "action", actions[r->action]);
    /* zeros are left out: the emulator's defaults depend on what is given */
    if (r->error_rate > 0)
        cJSON_AddNumberToObject(j, "errorRate", r->error_rate);
    if (r->error_code)
        cJSON_AddNumberToObject(j, "errorCode", r->error_code);
    if (r->retry_after_seconds)
        cJSON_AddNumberToObject(j, "retryAfterSeconds", r->retry_after_seconds);
    if (r->delay_ms)
        cJSON_AddNumberToObject(j, "delayMs", r->delay_ms);
    if (r->count)
        cJSON_AddNumberToObject(j, "count", r->count);
    if (r->for_ms)
        cJSON_AddNumberToObject(j, "forMs", (double)r->for_ms);
    if (r->message) /* a webhook rule's message is the webhook's name */
        cJSON_AddStringToObject(j, r->action == HARNESS_FAULT_WEBHOOK ? "webhook" : "message",
                                r->message);
    if (r->verbs)
        cJSON_AddItemToObject(j, "verbs", null_terminated(r->verbs));
    if (r->resources)
        cJSON_AddItemToObject(j, "resources", null_terminated(r->resources));
    if (r->users)
        cJSON_AddItemToObject(j, "users", null_terminated(r->users));
    if (r->names)
        cJSON_AddItemToObject(j, "names", null_terminated(r->names));
    return j;
}

int harness_set_fault_rules(harness *h, const harness_fault_rule *rules, size_t n)
{
    cJSON *spec = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(spec, "rules");
    char *body;
    int rc;

    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(list, rule_json(&rules[i]));
    body = cJSON_PrintUnformatted(spec);
    cJSON_Delete(spec);
    if (!body)
        return KUBE_ENOMEM;
    rc = control(h, "POST", "faults", body, NULL);
    free(body);
    return rc;
}

/* Appends ?key=value or &key=value (value percent-encoded) when value is
 * non-NULL. */
static int query_param(kube_buf *b, const char *key, const char *value)
{
    char *esc;
    int rc;

    if (!value)
        return KUBE_OK;
    esc = curl_easy_escape(NULL, value, 0); /* the handle is unused since 7.82 */
    if (!esc)
        return KUBE_ENOMEM;
    rc = kube_buf_printf(b, "%c%s=%s", b->len ? '&' : '?', key, esc);
    curl_free(esc);
    return rc;
}

int harness_requests(harness *h, const char *verb, const char *resource, const char *user,
                     cJSON **items)
{
    kube_buf q = KUBE_BUF_INIT;
    char what[200];
    cJSON *doc = NULL;
    int rc;

    *items = NULL;
    rc = query_param(&q, "verb", verb);
    if (rc == KUBE_OK)
        rc = query_param(&q, "resource", resource);
    if (rc == KUBE_OK)
        rc = query_param(&q, "user", user);
    if (rc == KUBE_OK && q.len + 16 > sizeof(what))
        rc = KUBE_EINVAL;
    snprintf(what, sizeof(what), "requests%s", q.len ? q.data : "");
    kube_buf_free(&q);
    if (rc == KUBE_OK)
        rc = control(h, "GET", what, NULL, &doc);
    if (rc == KUBE_OK) {
        *items = cJSON_DetachItemFromObject(doc, "items");
        rc = cJSON_IsArray(*items) ? KUBE_OK : KUBE_ESERVER;
        if (rc != KUBE_OK) {
            cJSON_Delete(*items);
            *items = NULL;
        }
    }
    cJSON_Delete(doc);
    return rc;
}

int harness_clear_requests(harness *h)
{
    return control(h, "DELETE", "requests", NULL, NULL);
}

int harness_clear_faults(harness *h)
{
    return control(h, "DELETE", "faults", NULL, NULL);
}

int harness_restart(harness *h)
{
    return control(h, "POST", "restart", NULL, NULL);
}

int harness_drop_watches(harness *h)
{
    return control(h, "POST", "drop-watches", NULL, NULL);
}

int harness_counters(harness *h, cJSON **out)
{
    return control(h, "GET", "counters", NULL, out);
}

int64_t harness_counter(harness *h, const char *group, const char *key)
{
    cJSON *j = NULL;
    const cJSON *v;
    int64_t n;
    int rc = harness_counters(h, &j);

    if (rc != KUBE_OK)
        return rc;
    v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItem(j, group), key);
    n = cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
    cJSON_Delete(j);
    return n;
}

int64_t harness_count(harness *h, const char *verb, const char *resource)
{
    char key[320];

    snprintf(key, sizeof(key), "%s %s", verb, resource);
    return harness_counter(h, "requests", key);
}

int harness_reset_counters(harness *h)
{
    return control(h, "DELETE", "counters", NULL, NULL);
}
