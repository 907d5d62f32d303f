/*
 * tests/integration/test_client_integration.c - the HTTP client and typed
 * API calls against the API emulator over TLS: round trips, optimistic
 * concurrency, binding, retries through injected 429/5xx storms, bearer
 * token file rotation, TLS verification and tls-server-name, concurrent
 * use of one client, and HTTPS_PROXY/NO_PROXY from the environment (through
 * a CONNECT proxy on loopback).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <semaphore.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "kube/transport/api.h"
#include "kube/transport/api_testing.h"
#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "kube/util/errors.h"
#include "kube/transport/client_testing.h"
#include "kube/transport/config_testing.h"

typedef struct itest {
    harness *h;
    kube_config *cfg;
    kube_client *c;
} itest;

static kube_client *new_client(kube_config *cfg, int max_retries)
{
    kube_client_options o;
    kube_client *c;

    kube_client_options_default(&o);
    o.qps = 0; /* the tests count requests, not time */
    o.max_retries = max_retries;
    o.timeout_ms = 10000;
    assert_int_equal(kube_client_new(cfg, &o, &c), KUBE_OK);
    kube_client_set_backoff(c, 1, 8);
    return c;
}

static int setup(void **state)
{
    itest *t = calloc(1, sizeof(*t));
    harness_opts o = HARNESS_OPTS_INIT;
    char err[512];

    if (!t)
        return -1;
    o.nodes = 2;
    if (harness_start(&o, &t->h) != KUBE_OK) {
        free(t);
        return -1;
    }
    if (kube_config_from_file(harness_kubeconfig(t->h), &t->cfg, err, sizeof(err)) != KUBE_OK) {
        fprintf(stderr, "%s\n", err);
        harness_stop(t->h);
        free(t);
        return -1;
    }
    t->c = new_client(t->cfg, 5);
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    itest *t = *state;

    if (!t) /* setup failed */
        return 0;
    kube_client_free(t->c);
    kube_config_free(t->cfg);
    harness_stop(t->h);
    free(t);
    return 0;
}

static cJSON *parse(const char *json)
{
    cJSON *j = cJSON_Parse(json);
    assert_non_null(j);
    return j;
}

static const char *meta_str(const cJSON *obj, const char *field)
{
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), field);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *annotation(const cJSON *obj, const char *key)
{
    const cJSON *ann = cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "annotations");
    const cJSON *v = cJSON_GetObjectItem(ann, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static cJSON *vm_body(const char *name)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\","
             "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"},"
             "\"spec\":{\"running\":true,\"template\":{\"metadata\":{\"labels\":"
             "{\"kubevirt.io/vm\":\"%s\"}},\"spec\":{\"schedulerName\":\"stickyvm\","
             "\"domain\":{\"devices\":{},\"resources\":{\"requests\":{\"memory\":\"128Mi\"}}}}}}}",
             name, name);
    return parse(text);
}

static cJSON *pod_body(const char *name)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
             "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"},"
             "\"spec\":{\"schedulerName\":\"stickyvm\",\"containers\":[{\"name\":\"compute\","
             "\"image\":\"quay.io/kubevirt/virt-launcher:v1.1.0\",\"resources\":{\"requests\":"
             "{\"cpu\":\"100m\",\"memory\":\"300Mi\"}}}]}}",
             name);
    return parse(text);
}

/* ---- round trips -------------------------------------------------------- */

static void create_get_patch_delete(void **state)
{
    itest *t = *state;
    cJSON *body = vm_body("vm-rt"), *created, *got, *patched;
    kube_status st;
    char rv[64];

    assert_int_equal(kube_api_create(t->c, &KUBE_RES_VMS, "default", body, &created, &st), KUBE_OK);
    assert_string_equal(meta_str(created, "name"), "vm-rt");
    assert_non_null(meta_str(created, "uid"));
    kube_strlcpy(rv, meta_str(created, "resourceVersion"), sizeof(rv));
    /* creating it again: AlreadyExists, distinct from a Conflict */
    assert_int_equal(kube_api_create(t->c, &KUBE_RES_VMS, "default", body, NULL, &st), KUBE_EEXIST);
    assert_int_equal(st.code, 409);
    assert_string_equal(st.reason, "AlreadyExists");

    assert_int_equal(kube_api_get(t->c, &KUBE_RES_VMS, "default", "vm-rt", &got, &st), KUBE_OK);
    assert_string_equal(meta_str(got, "resourceVersion"), rv);
    cJSON_Delete(got);

    /* pin with the version we read: accepted, a new version results */
    assert_int_equal(kube_api_set_annotation(t->c, &KUBE_RES_VMS, "default", "vm-rt",
                                             "stickyvm.io/node", "node-1", rv, &patched, &st),
                     KUBE_OK);
    assert_string_equal(annotation(patched, "stickyvm.io/node"), "node-1");
    assert_string_not_equal(meta_str(patched, "resourceVersion"), rv);
    cJSON_Delete(patched);
    /* the same stale version again: Conflict, and the pin is unchanged */
    assert_int_equal(kube_api_set_annotation(t->c, &KUBE_RES_VMS, "default", "vm-rt",
                                             "stickyvm.io/node", "node-2", rv, NULL, &st),
                     KUBE_ECONFLICT);
    assert_int_equal(st.code, 409);
    assert_string_equal(st.reason, "Conflict");
    /* a stale whole-object update conflicts too */
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(created, "metadata"), "resourceVersion",
                              cJSON_CreateString(rv));
    assert_int_equal(kube_api_update(t->c, &KUBE_RES_VMS, "default", "vm-rt", created, NULL, &st),
                     KUBE_ECONFLICT);
    assert_int_equal(kube_api_get(t->c, &KUBE_RES_VMS, "default", "vm-rt", &got, &st), KUBE_OK);
    assert_string_equal(annotation(got, "stickyvm.io/node"), "node-1");
    cJSON_Delete(got);

    /* unpin without a version: JSON null removes the key */
    assert_int_equal(kube_api_set_annotation(t->c, &KUBE_RES_VMS, "default", "vm-rt",
                                             "stickyvm.io/node", NULL, NULL, &patched, &st),
                     KUBE_OK);
    assert_null(annotation(patched, "stickyvm.io/node"));
    cJSON_Delete(patched);
    /* a JSON patch removing the now missing key is Invalid (422) */
    {
        cJSON *ops =
            parse("[{\"op\":\"remove\",\"path\":\"/metadata/annotations/stickyvm.io~1node\"}]");
        assert_int_equal(
            kube_api_json_patch(t->c, &KUBE_RES_VMS, "default", "vm-rt", ops, NULL, &st),
            KUBE_EINVALID);
        assert_int_equal(st.code, 422);
        cJSON_Delete(ops);
    }

    assert_int_equal(kube_api_delete(t->c, &KUBE_RES_VMS, "default", "vm-rt", &st), KUBE_OK);
    assert_int_equal(kube_api_get(t->c, &KUBE_RES_VMS, "default", "vm-rt", &got, &st),
                     KUBE_ENOTFOUND);
    assert_null(got);
    assert_string_equal(st.reason, "NotFound");
    assert_int_equal(kube_api_delete(t->c, &KUBE_RES_VMS, "default", "vm-rt", &st), KUBE_ENOTFOUND);
    cJSON_Delete(created);
    cJSON_Delete(body);
}

/* A body far larger than the client's 16 KB upload buffer goes out whole
 * (in pieces) on the shared HTTP/2 connection: a 300 KB ConfigMap. */
static void large_body_is_sent_whole(void **state)
{
    itest *t = *state;
    kube_buf body = {0};
    kube_response resp = {0};
    cJSON *got;
    size_t n = 300 * 1024;

    kube_buf_puts(&body, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
                         "{\"name\":\"big\"},\"data\":{\"k\":\"");
    for (size_t i = 0; i < n; i++)
        kube_buf_append(&body, &"0123456789abcdef"[i % 16], 1);
    assert_int_equal(kube_buf_puts(&body, "\"}}"), KUBE_OK);
    assert_int_equal(kube_client_do(t->c, "POST", "/api/v1/namespaces/default/configmaps",
                                    "application/json", body.data, body.len, &resp),
                     KUBE_OK);
    assert_int_equal(resp.code, 201);
    got = parse(resp.body);
    assert_int_equal(
        strlen(cJSON_GetObjectItem(cJSON_GetObjectItem(got, "data"), "k")->valuestring), n);
    cJSON_Delete(got);
    kube_response_clear(&resp);
    kube_buf_free(&body);
}

static void unknown_paths_and_bad_names(void **state)
{
    itest *t = *state;
    kube_response resp = {0};
    cJSON *bad = vm_body("Bad_Name");
    kube_status st;

    assert_int_equal(kube_client_do(t->c, "GET",
                                    "/apis/kubevirt.io/v1/namespaces/default/virtualmachinez", NULL,
                                    NULL, 0, &resp),
                     KUBE_ENOTFOUND);
    assert_int_equal(resp.code, 404);
    assert_string_equal(resp.status.reason, "NotFound");
    kube_response_clear(&resp);
    assert_int_equal(kube_api_create(t->c, &KUBE_RES_VMS, "default", bad, NULL, &st),
                     KUBE_EINVALID);
    assert_int_equal(st.code, 422);
    assert_string_equal(st.reason, "Invalid");
    cJSON_Delete(bad);
}

static void bind_and_patch_status(void **state)
{
    itest *t = *state;
    cJSON *pod = pod_body("bind-me"), *created, *got, *patch;
    kube_status st;
    char uid[64];

    assert_int_equal(kube_api_create(t->c, &KUBE_RES_PODS, "default", pod, &created, &st), KUBE_OK);
    kube_strlcpy(uid, meta_str(created, "uid"), sizeof(uid));
    assert_int_equal(kube_api_bind(t->c, "default", "bind-me", uid, "node-1", &st), KUBE_OK);
    assert_int_equal(kube_api_get(t->c, &KUBE_RES_PODS, "default", "bind-me", &got, &st), KUBE_OK);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(got, "spec"), "nodeName")->valuestring, "node-1");
    cJSON_Delete(got);
    /* a bound pod cannot be bound again */
    assert_int_equal(kube_api_bind(t->c, "default", "bind-me", uid, "node-0", &st), KUBE_ECONFLICT);
    assert_int_equal(st.code, 409);
    assert_int_equal(kube_api_bind(t->c, "default", "nope", NULL, "node-0", &st), KUBE_ENOTFOUND);

    patch = parse("{\"status\":{\"nominatedNodeName\":\"node-1\"}}");
    assert_int_equal(kube_api_patch_pod_status(t->c, "default", "bind-me", patch, &st), KUBE_OK);
    assert_int_equal(kube_api_get(t->c, &KUBE_RES_PODS, "default", "bind-me", &got, &st), KUBE_OK);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(got, "status"), "nominatedNodeName")->valuestring,
        "node-1");
    cJSON_Delete(got);
    cJSON_Delete(patch);
    assert_int_equal(kube_api_delete(t->c, &KUBE_RES_PODS, "default", "bind-me", &st), KUBE_OK);
    cJSON_Delete(created);
    cJSON_Delete(pod);
}

/* ---- retries through fault storms -------------------------------------- */

static void retries_through_a_storm(void **state)
{
    itest *t = *state;
    kube_client *c = new_client(t->cfg, 20);
    harness_faults f = {0};
    kube_client_stats stats;
    kube_status st;
    cJSON *got;
    char name[32];

    /* half of the GETs answer 500, then half of the creates 429: every
     * call still succeeds, and each create happens exactly once */
    f.error_rate = 0.5;
    f.error_code = 500;
    f.verbs = (const char *const[]){"get", NULL};
    assert_int_equal(harness_set_faults(t->h, &f), KUBE_OK);
    for (int i = 0; i < 20; i++) {
        assert_int_equal(kube_api_get(c, &KUBE_RES_NODES, NULL, "node-0", &got, &st), KUBE_OK);
        cJSON_Delete(got);
    }
    f.error_code = 429;
    f.verbs = (const char *const[]){"create", NULL};
    assert_int_equal(harness_set_faults(t->h, &f), KUBE_OK);
    for (int i = 0; i < 10; i++) {
        cJSON *vm;
        snprintf(name, sizeof(name), "storm-%d", i);
        vm = vm_body(name);
        assert_int_equal(kube_api_create(c, &KUBE_RES_VMS, "default", vm, NULL, &st), KUBE_OK);
        cJSON_Delete(vm);
    }
    assert_int_equal(harness_clear_faults(t->h), KUBE_OK);
    kube_client_stats_get(c, &stats);
    assert_true(stats.retries > 0);
    assert_int_equal(stats.get + stats.post, 30 + stats.retries);
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof(name), "storm-%d", i);
        assert_int_equal(kube_api_get(c, &KUBE_RES_VMS, "default", name, &got, &st), KUBE_OK);
        cJSON_Delete(got);
    }
    kube_client_free(c);
}

static void non_idempotent_500_is_not_retried(void **state)
{
    itest *t = *state;
    kube_client *c = new_client(t->cfg, 1);
    harness_faults f = {0};
    kube_client_stats stats;
    kube_status st;
    cJSON *vm = vm_body("no-retry");

    f.error_rate = 1.0;
    f.error_code = 500;
    f.verbs = (const char *const[]){"create", NULL};
    assert_int_equal(harness_set_faults(t->h, &f), KUBE_OK);
    assert_int_equal(kube_api_create(c, &KUBE_RES_VMS, "default", vm, NULL, &st), KUBE_ESERVER);
    assert_int_equal(st.code, 500);
    kube_client_stats_get(c, &stats);
    assert_int_equal(stats.post, 1);
    assert_int_equal(stats.retries, 0);
    /* with Retry-After the server says a retry is safe: max_retries more */
    f.retry_after_seconds = 1;
    assert_int_equal(harness_set_faults(t->h, &f), KUBE_OK);
    assert_int_equal(kube_api_create(c, &KUBE_RES_VMS, "default", vm, NULL, &st), KUBE_ESERVER);
    kube_client_stats_get(c, &stats);
    assert_int_equal(stats.post, 1 + 2);
    assert_int_equal(stats.retries, 1);
    assert_int_equal(harness_clear_faults(t->h), KUBE_OK);
    cJSON_Delete(vm);
    kube_client_free(c);
}

/* ---- requests without a waiting thread ----------------------------------- */

/* What the done functions of asynchronous requests saw. */
typedef struct async_seen {
    sem_t sem;
    int calls, rc, code;
    char message[256];
} async_seen;

static void seen_init(async_seen *a)
{
    memset(a, 0, sizeof(*a));
    sem_init(&a->sem, 0, 0);
}

static void seen_request(void *ud, int rc, kube_response *resp)
{
    async_seen *a = ud;

    a->calls++;
    a->rc = rc;
    a->code = (int)resp->code;
    kube_strlcpy(a->message, resp->status.message, sizeof(a->message));
    sem_post(&a->sem);
}

static void seen_bind(void *ud, int rc, const kube_status *st)
{
    async_seen *a = ud;

    a->calls++;
    a->rc = rc;
    a->code = st->code;
    kube_strlcpy(a->message, st->message, sizeof(a->message));
    sem_post(&a->sem);
}

/* Waits for the first done of a. That no second one follows is checked
 * once kube_client_free() has stopped the I/O thread, which runs the done
 * functions: after that none can come. */
static void seen_wait(async_seen *a)
{
    assert_int_equal(sem_wait(&a->sem), 0);
}

static void async_requests_end_once(void **state)
{
    itest *t = *state;
    kube_client *c = new_client(t->cfg, 5);
    cJSON *pod = pod_body("async-bind"), *created, *got;
    int64_t conns = harness_counter(t->h, "connections", "h2");
    harness_fault_rule r = {0};
    kube_client_stats stats;
    async_seen one, many[50], retried;
    kube_status st;

    /* a binding: 201, the pod is bound */
    assert_int_equal(kube_api_create(c, &KUBE_RES_PODS, "default", pod, &created, &st), KUBE_OK);
    seen_init(&one);
    assert_int_equal(kube_api_bind_async(c, "default", "async-bind", meta_str(created, "uid"),
                                         "node-1", seen_bind, &one),
                     KUBE_OK);
    seen_wait(&one);
    assert_int_equal(one.rc, KUBE_OK);
    assert_int_equal(one.code, 201);
    assert_int_equal(kube_api_get(c, &KUBE_RES_PODS, "default", "async-bind", &got, &st), KUBE_OK);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(got, "spec"), "nodeName")->valuestring, "node-1");
    cJSON_Delete(got);

    /* fifty at once share one HTTP/2 connection, each ends once */
    for (int i = 0; i < 50; i++) {
        seen_init(&many[i]);
        assert_int_equal(kube_client_do_async(c, "GET", "/api/v1/nodes/node-0", NULL, NULL, 0,
                                              seen_request, &many[i]),
                         KUBE_OK);
    }
    for (int i = 0; i < 50; i++) {
        assert_int_equal(sem_wait(&many[i].sem), 0);
        assert_int_equal(many[i].rc, KUBE_OK);
    }
    assert_int_equal(harness_counter(t->h, "connections", "h2"), conns + 1);

    /* a 429 with Retry-After, then the create lands: two attempts, one done */
    r.action = HARNESS_FAULT_STATUS;
    r.error_code = 429;
    r.retry_after_seconds = 1;
    r.count = 1;
    r.verbs = (const char *const[]){"create", NULL};
    assert_int_equal(harness_set_fault_rules(t->h, &r, 1), KUBE_OK);
    seen_init(&retried);
    assert_int_equal(kube_client_do_async(c, "POST",
                                          "/apis/kubevirt.io/v1/namespaces/default/"
                                          "virtualmachines",
                                          "application/json",
                                          "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":"
                                          "\"VirtualMachine\",\"metadata\":{\"name\":"
                                          "\"async-vm\"},\"spec\":{}}",
                                          96, seen_request, &retried),
                     KUBE_OK);
    seen_wait(&retried);
    assert_int_equal(retried.rc, KUBE_OK);
    assert_int_equal(retried.code, 201);
    kube_client_stats_get(c, &stats);
    assert_int_equal(stats.retries, 1);
    assert_int_equal(harness_clear_faults(t->h), KUBE_OK);
    cJSON_Delete(created);
    cJSON_Delete(pod);
    kube_client_free(c);
    /* the I/O thread has stopped: each ended once */
    assert_int_equal(one.calls, 1);
    for (int i = 0; i < 50; i++)
        assert_int_equal(many[i].calls, 1);
    assert_int_equal(retried.calls, 1);
}

/* Refuses every attempt after the first. */
static const char *refuse_after_one(void *ud, const char *method, const char *path)
{
    int *n = ud;

    (void)method;
    (void)path;
    return (*n)++ ? "not the leader" : NULL;
}

static void async_fence_checks_every_attempt(void **state)
{
    itest *t = *state;
    kube_client *c = new_client(t->cfg, 5);
    harness_faults f = {0};
    async_seen one;
    int asked = 0;

    kube_client_set_fence(c, refuse_after_one, &asked);
    f.error_rate = 1.0;
    f.error_code = 429;
    f.verbs = (const char *const[]){"get", NULL};
    assert_int_equal(harness_set_faults(t->h, &f), KUBE_OK);
    seen_init(&one);
    assert_int_equal(
        kube_client_do_async(c, "GET", "/api/v1/nodes/node-0", NULL, NULL, 0, seen_request, &one),
        KUBE_OK);
    seen_wait(&one);
    assert_int_equal(one.rc, KUBE_ECANCELED);
    assert_int_equal(asked, 2);
    assert_non_null(strstr(one.message, "refused: not the leader"));
    assert_int_equal(harness_clear_faults(t->h), KUBE_OK);
    kube_client_free(c);
    assert_int_equal(one.calls, 1); /* the I/O thread has stopped: it ended once */
}

/* Shutdown ends a request waiting for its backoff and one in flight, and
 * returns only after both done functions ran; later requests are refused. */
static void async_shutdown_ends_every_request(void **state)
{
    itest *t = *state;
    kube_client *c = new_client(t->cfg, 5);
    harness_fault_rule rules[2] = {{0}};
    async_seen waiting, flying, later;

    kube_client_set_backoff(c, 60000, 60000);
    rules[0].action = HARNESS_FAULT_STATUS;
    rules[0].error_code = 500;
    rules[0].resources = (const char *const[]){"nodes", NULL};
    rules[0].for_ms = 60000;
    rules[1].action = HARNESS_FAULT_STALL;
    rules[1].resources = (const char *const[]){"configmaps", NULL};
    rules[1].for_ms = 60000;
    assert_int_equal(harness_set_fault_rules(t->h, rules, 2), KUBE_OK);
    seen_init(&waiting);
    seen_init(&flying);
    assert_int_equal(kube_client_do_async(c, "GET", "/api/v1/nodes/node-0", NULL, NULL, 0,
                                          seen_request, &waiting),
                     KUBE_OK);
    assert_int_equal(kube_client_do_async(c, "GET", "/api/v1/namespaces/default/configmaps/x", NULL,
                                          NULL, 0, seen_request, &flying),
                     KUBE_OK);
    WAIT_TRUE(harness_count(t->h, "get", "nodes") >= 1 &&
              harness_count(t->h, "get", "configmaps") >= 1);
    assert_int_equal(waiting.calls + flying.calls, 0);
    kube_client_shutdown(c);
    assert_int_equal(waiting.calls, 1);
    assert_int_equal(flying.calls, 1);
    assert_int_equal(waiting.rc, KUBE_ECANCELED);
    assert_int_equal(flying.rc, KUBE_ECANCELED);
    assert_non_null(strstr(waiting.message, "canceled: the client is shutting down"));
    seen_init(&later);
    assert_int_equal(
        kube_client_do_async(c, "GET", "/api/v1/nodes/node-0", NULL, NULL, 0, seen_request, &later),
        KUBE_ECANCELED);
    assert_int_equal(harness_clear_faults(t->h), KUBE_OK);
    kube_client_free(c);
    /* the I/O thread has stopped: no done function can come any more */
    assert_int_equal(later.calls, 0);
    assert_int_equal(waiting.calls, 1);
    assert_int_equal(flying.calls, 1);
}

/* ---- bearer tokens -------------------------------------------------------- */

/* Writes a kubeconfig using the emulator CA, server name and a token file. */
static void write_token_kubeconfig(itest *t, const char *path, const char *token_file,
                                   const char *server, const char *tls_name)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fprintf(f,
            "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
            "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
            "clusters:\n- name: c\n  cluster:\n    server: %s\n"
            "    certificate-authority: %s\n%s%s%s"
            "users: [{name: u, user: {tokenFile: \"%s\"}}]\n",
            server, harness_ca_file(t->h), tls_name ? "    tls-server-name: " : "",
            tls_name ? tls_name : "", tls_name ? "\n" : "", token_file);
    assert_int_equal(fclose(f), 0);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static const char *new_token(itest *t, const char *user)
{
    static const char *const groups[] = {"system:masters"};
    const harness_identity *id;

    assert_int_equal(harness_add_token_user(t->h, user, groups, 1, &id), KUBE_OK);
    assert_non_null(id->token);
    return id->token;
}

static void token_file_rotation(void **state)
{
    itest *t = *state;
    char kc[512], tok[512];
    kube_config *cfg;
    kube_client *c;
    kube_client_stats stats;
    kube_status st;
    cJSON *got;
    char err[512];

    snprintf(kc, sizeof(kc), "%s/rotating.kubeconfig", harness_data_dir(t->h));
    snprintf(tok, sizeof(tok), "%s/rotating.token", harness_data_dir(t->h));
    write_text(tok, new_token(t, "rotator-1"));
    write_token_kubeconfig(t, kc, tok, harness_url(t->h), NULL);
    assert_int_equal(kube_config_from_file(kc, &cfg, err, sizeof(err)), KUBE_OK);
    c = new_client(cfg, 2);
    assert_int_equal(kube_api_get(c, &KUBE_RES_NODES, NULL, "node-0", &got, &st), KUBE_OK);
    cJSON_Delete(got);

    /* re-read on every request: a token the server rejects shows at once,
     * and a valid replacement is picked up */
    kube_config_set_token_refresh_ms(cfg, 0);
    write_text(tok, "not-a-token-the-emulator-issued");
    assert_int_equal(kube_api_get(c, &KUBE_RES_NODES, NULL, "node-0", &got, &st),
                     KUBE_EUNAUTHORIZED);
    assert_int_equal(st.code, 401);
    write_text(tok, new_token(t, "rotator-2"));
    assert_int_equal(kube_api_get(c, &KUBE_RES_NODES, NULL, "node-0", &got, &st), KUBE_OK);
    cJSON_Delete(got);

    /* within the refresh period the old (now rejected) token is cached: the
     * 401 forces a re-read, and the retry with the new token succeeds */
    kube_config_set_token_refresh_ms(cfg, 3600 * 1000L);
    write_text(tok, "revoked-token");
    assert_int_equal(kube_config_token(cfg, err, sizeof(err), 1), KUBE_OK); /* cache it */
    write_text(tok, new_token(t, "rotator-3"));
    assert_int_equal(kube_api_get(c, &KUBE_RES_NODES, NULL, "node-0", &got, &st), KUBE_OK);
    cJSON_Delete(got);
    kube_client_stats_get(c, &stats);
    assert_int_equal(stats.retries, 1);
    kube_client_free(c);
    kube_config_free(cfg);
}

/* ---- TLS ------------------------------------------------------------------ */

/* GETs a node through a kubeconfig for server with the token in tok.
 * insecure: 0 verifies with the emulator CA (and tls_name), 1 skips
 * verification, -1 verifies against the system roots. */
static int get_node_with(itest *t, const char *tok, const char *server, const char *tls_name,
                         int insecure)
{
    char kc[512], err[512];
    kube_config *cfg;
    kube_client *c;
    kube_status st;
    cJSON *got = NULL;
    int rc;

    snprintf(kc, sizeof(kc), "%s/tls.kubeconfig", harness_data_dir(t->h));
    if (insecure) {
        char text[1024];
        snprintf(text, sizeof(text),
                 "current-context: c\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
                 "clusters: [{name: c, cluster: {server: \"%s\", insecure-skip-tls-verify: "
                 "%s}}]\nusers: [{name: u, user: {tokenFile: \"%s\"}}]\n",
                 server, insecure > 0 ? "true" : "false", tok);
        write_text(kc, text);
    } else {
        write_token_kubeconfig(t, kc, tok, server, tls_name);
    }
    assert_int_equal(kube_config_from_file(kc, &cfg, err, sizeof(err)), KUBE_OK);
    c = new_client(cfg, 0);
    rc = kube_api_get(c, &KUBE_RES_NODES, NULL, "node-0", &got, &st);
    cJSON_Delete(got);
    kube_client_free(c);
    kube_config_free(cfg);
    return rc;
}

static void tls_verification(void **state)
{
    itest *t = *state;
    const char *url = harness_url(t->h);
    char server[128], tok[512];

    snprintf(tok, sizeof(tok), "%s/tls.token", harness_data_dir(t->h));
    write_text(tok, new_token(t, "tls-user"));
    /* the serving certificate covers 127.0.0.1 and localhost */
    assert_int_equal(get_node_with(t, tok, url, NULL, 0), KUBE_OK);
    snprintf(server, sizeof(server), "https://localhost:%d", harness_port(t->h));
    assert_int_equal(get_node_with(t, tok, server, NULL, 0), KUBE_OK);
    /* tls-server-name: connect to 127.0.0.1, verify the name given */
    assert_int_equal(get_node_with(t, tok, url, "localhost", 0), KUBE_OK);
    assert_int_equal(get_node_with(t, tok, url, "wrong.example.com", 0), KUBE_EIO);
    /* without the CA the system roots do not know the emulator */
    assert_int_equal(get_node_with(t, tok, url, NULL, -1), KUBE_EIO);
    assert_int_equal(get_node_with(t, tok, url, NULL, 1), KUBE_OK);
}

/* ---- threads ---------------------------------------------------------------- */

static void *hammer(void *arg)
{
    itest *t = arg;
    long failures = 0;

    for (int i = 0; i < 25; i++) {
        kube_status st;
        cJSON *got;
        if (kube_api_get(t->c, &KUBE_RES_NODES, NULL, i % 2 ? "node-0" : "node-1", &got, &st) !=
            KUBE_OK)
            failures++;
        cJSON_Delete(got);
    }
    return (void *)failures;
}

static void one_client_many_threads(void **state)
{
    itest *t = *state;
    pthread_t th[4];
    kube_client_stats before, after;

    kube_client_stats_get(t->c, &before);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, hammer, t), 0);
    for (int i = 0; i < 4; i++) {
        void *failures;
        pthread_join(th[i], &failures);
        assert_int_equal((long)failures, 0);
    }
    kube_client_stats_get(t->c, &after);
    assert_int_equal(after.get - before.get, 100);
}

/* ---- proxies --------------------------------------------------------------- */

#define TUNNELS_MAX 8

/* A CONNECT proxy on loopback, each tunnel relayed by its own thread. */
typedef struct tunnel_proxy {
    int fd, port;
    pthread_t thread;
    atomic_int stop;
    atomic_int tunnels; /* CONNECTs answered */
    pthread_mutex_t lock;
    char target[64]; /* the last CONNECT's authority (under lock) */
    char agent[64];  /* the last CONNECT's User-Agent value (under lock) */
    struct tunnel_conn {
        struct tunnel_proxy *t;
        int fd;
        pthread_t thread;
    } conns[TUNNELS_MAX];
    int n_conns;
} tunnel_proxy;

/* Connects to 127.0.0.1 at the port of a "host:port" authority. */
static int tunnel_dial(const char *authority)
{
    const char *colon = strrchr(authority, ':');
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int64_t port;
    int fd;

    if (!colon || kube_parse_int64(colon + 1, 1, 65535, &port) != KUBE_OK)
        return -1;
    a.sin_port = htons((uint16_t)port);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Copies bytes both ways until a side closes or the proxy stops. */
static void tunnel_relay(tunnel_proxy *t, int a, int b)
{
    char buf[16384];

    while (!atomic_load(&t->stop)) {
        struct pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
        int n = poll(p, 2, 50);
        for (int i = 0; n > 0 && i < 2; i++) {
            ssize_t got;
            if (!p[i].revents)
                continue;
            got = recv(p[i].fd, buf, sizeof(buf), 0);
            if (got <= 0 || send(p[1 - i].fd, buf, (size_t)got, MSG_NOSIGNAL) != got)
                return;
        }
    }
}

/* The value of the header line starting with prefix ("\r\nName: ") in
 * head, into out (size n); "" when there is none. */
static void tunnel_header(const char *head, const char *prefix, char *out, size_t n)
{
    const char *v = strstr(head, prefix);
    size_t len = v ? strcspn(v + strlen(prefix), "\r\n") : 0;

    out[0] = '\0';
    if (v && len < n) {
        memcpy(out, v + strlen(prefix), len);
        out[len] = '\0';
    }
}

/* Reads "CONNECT host:port HTTP/1.1 ... \r\n\r\n" and opens the tunnel. */
static void tunnel_serve(tunnel_proxy *t, int fd)
{
    static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
    char head[2048], authority[64];
    size_t have = 0;
    int up;

    while (have < sizeof(head) - 1 && !memmem(head, have, "\r\n\r\n", 4)) {
        struct pollfd p = {fd, POLLIN, 0};
        ssize_t got;
        if (poll(&p, 1, 2000) <= 0 ||
            (got = recv(fd, head + have, sizeof(head) - 1 - have, 0)) <= 0)
            return;
        have += (size_t)got;
    }
    head[have] = '\0';
    if (sscanf(head, "CONNECT %63s HTTP/1.1", authority) != 1 || (up = tunnel_dial(authority)) < 0)
        return;
    pthread_mutex_lock(&t->lock);
    kube_strlcpy(t->target, authority, sizeof(t->target));
    tunnel_header(head, "\r\nUser-Agent: ", t->agent, sizeof(t->agent));
    pthread_mutex_unlock(&t->lock);
    atomic_fetch_add(&t->tunnels, 1);
    if (send(fd, ok, sizeof(ok) - 1, MSG_NOSIGNAL) == (ssize_t)sizeof(ok) - 1)
        tunnel_relay(t, fd, up);
    close(up);
}

static void *tunnel_conn_thread(void *arg)
{
    struct tunnel_conn *c = arg;

    tunnel_serve(c->t, c->fd);
    close(c->fd);
    return NULL;
}

static void *tunnel_thread(void *arg)
{
    tunnel_proxy *t = arg;

    while (!atomic_load(&t->stop)) {
        struct pollfd p = {t->fd, POLLIN, 0};
        struct tunnel_conn *c;
        int fd;
        if (poll(&p, 1, 50) <= 0 || (fd = accept(t->fd, NULL, NULL)) < 0)
            continue;
        if (t->n_conns == TUNNELS_MAX) {
            close(fd);
            continue;
        }
        c = &t->conns[t->n_conns];
        c->t = t;
        c->fd = fd;
        if (pthread_create(&c->thread, NULL, tunnel_conn_thread, c) == 0)
            t->n_conns++;
        else
            close(fd);
    }
    return NULL;
}

static void tunnel_start(tunnel_proxy *t)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);

    memset(t, 0, sizeof(*t));
    pthread_mutex_init(&t->lock, NULL);
    t->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(t->fd >= 0);
    assert_int_equal(bind(t->fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(t->fd, 8), 0);
    assert_int_equal(getsockname(t->fd, (struct sockaddr *)&a, &len), 0);
    t->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&t->thread, NULL, tunnel_thread, t), 0);
}

static void tunnel_stop(tunnel_proxy *t)
{
    atomic_store(&t->stop, 1);
    pthread_join(t->thread, NULL);
    for (int i = 0; i < t->n_conns; i++)
        pthread_join(t->conns[i].thread, NULL);
    close(t->fd);
    pthread_mutex_destroy(&t->lock);
}

static size_t discard_body(char *p, size_t size, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return size * n;
}

/* One GET through a new client, and one watch-style GET through a stream
 * handle of the same client. */
static void get_twice(itest *t)
{
    kube_client *c = new_client(t->cfg, 0);
    struct curl_slist *headers;
    CURL *easy = curl_easy_init();
    kube_status st;
    cJSON *got;
    long code = 0;

    assert_int_equal(kube_api_get(c, &KUBE_RES_NODES, NULL, "node-0", &got, &st), KUBE_OK);
    cJSON_Delete(got);
    assert_int_equal(kube_client_setup_stream(c, easy, "/api/v1/nodes", &headers), KUBE_OK);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard_body);
    assert_int_equal(curl_easy_perform(easy), CURLE_OK);
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
    assert_int_equal(code, 200);
    curl_easy_cleanup(easy);
    curl_slist_free_all(headers);
    kube_client_free(c);
}

static void proxy_from_environment(void **state)
{
    static const char *const vars[] = {"https_proxy", "HTTPS_PROXY", "all_proxy",
                                       "ALL_PROXY",   "no_proxy",    "NO_PROXY"};
    itest *t = *state;
    char *saved[6], url[64], want[64];
    tunnel_proxy proxy;

    for (int i = 0; i < 6; i++) {
        saved[i] = getenv(vars[i]) ? strdup(getenv(vars[i])) : NULL;
        unsetenv(vars[i]);
    }
    tunnel_start(&proxy);
    /* requests and streams alike go through the proxy HTTPS_PROXY names */
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", proxy.port);
    setenv("HTTPS_PROXY", url, 1);
    get_twice(t);
    assert_int_equal(atomic_load(&proxy.tunnels), 2);
    snprintf(want, sizeof(want), "127.0.0.1:%d", harness_port(t->h));
    pthread_mutex_lock(&proxy.lock);
    assert_string_equal(proxy.target, want);
    assert_string_equal(proxy.agent, "stickyvm"); /* the client's User-Agent, on the CONNECT too */
    pthread_mutex_unlock(&proxy.lock);
    /* unless NO_PROXY covers the server */
    setenv("NO_PROXY", "example.com,127.0.0.1", 1);
    get_twice(t);
    assert_int_equal(atomic_load(&proxy.tunnels), 2);
    tunnel_stop(&proxy);
    for (int i = 0; i < 6; i++) {
        if (saved[i])
            setenv(vars[i], saved[i], 1);
        else
            unsetenv(vars[i]);
        free(saved[i]);
    }
}

int test_group_client_integration(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(create_get_patch_delete),
        cmocka_unit_test(unknown_paths_and_bad_names),
        cmocka_unit_test(large_body_is_sent_whole),
        cmocka_unit_test(bind_and_patch_status),
        cmocka_unit_test(retries_through_a_storm),
        cmocka_unit_test(non_idempotent_500_is_not_retried),
        cmocka_unit_test(async_requests_end_once),
        cmocka_unit_test(async_fence_checks_every_attempt),
        cmocka_unit_test(async_shutdown_ends_every_request),
        cmocka_unit_test(token_file_rotation),
        cmocka_unit_test(tls_verification),
        cmocka_unit_test(one_client_many_threads),
        cmocka_unit_test(proxy_from_environment),
    };
    return cmocka_run_group_tests_name("client_integration", tests, setup, teardown);
}
