/*
 * tests/integration/test_emulator_h2.c - the emulator speaks HTTP/2 (ALPN
 * h2) and HTTP/1.1 (--disable-http2, or a client without h2):
 *
 *  - the pod informer and the bind path (kube_api_bind from 16 threads),
 *    a patch, an event and the aggregator's APIService list through
 *    kube/transport/client (libcurl transport) on each protocol, the emulator's
 *    connection counters showing which one was spoken;
 *  - 16 concurrent binds from one curl multi handle (multiplexing, wait for
 *    the connection) share ONE h2 connection with a watch that sees them
 *    all; cancelling the watch (RST_STREAM) ends its handler; without h2
 *    the same transfers need several HTTP/1.1 connections;
 *  - stream handlers run on pooled threads: sequential requests on one
 *    connection reuse an idle handler thread instead of creating one each;
 *  - the h2 limits: too many header fields or bytes answer 431, a body
 *    over --max-body-bytes 413; a client offering only http/1.1 or no ALPN
 *    gets HTTP/1.1.
 *
 * Waits use deadlines; nothing asserts speed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "kube/transport/api.h"
#include "kube/transport/api_testing.h"
#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/util/clock.h"
#include "kube/transport/config.h"
#include "kube/util/errors.h"
#include "kube/machinery/informer.h"
#include "kube/machinery/informer_testing.h"
#include "kube/types/pod.h"

#define N_BINDS 16
#define WAIT_MS 30000

static harness *start(int http2, const char *const *extra)
{
    harness_opts o = HARNESS_OPTS_INIT;
    harness *h = NULL;

    o.nodes = 2;
    o.pods = N_BINDS;
    o.disable_http2 = !http2;
    o.extra_args = extra;
    assert_int_equal(harness_start(&o, &h), KUBE_OK);
    return h;
}

/* ---- kube/transport/client: informer, binds, patch, event ------------------------- */

typedef struct bind_job {
    kube_client *c;
    int i;
    int rc;
} bind_job;

static void *bind_main(void *arg)
{
    bind_job *j = arg;
    char pod[32];
    kube_status st;

    snprintf(pod, sizeof(pod), "pod-%d", j->i);
    j->rc = kube_api_bind(j->c, "default", pod, NULL, "node-1", &st);
    return NULL;
}

static size_t bound_pods(kube_informer *inf)
{
    size_t n = 0;

    for (int i = 0; i < N_BINDS; i++) {
        char name[32];
        kube_object *o;
        snprintf(name, sizeof(name), "pod-%d", i);
        o = kube_informer_get(inf, "default", name);
        if (o && !strcmp(kube_pod_from(o)->node_name, "node-1"))
            n++;
        if (o)
            kube_object_unref(o);
    }
    return n;
}

static void wait_bound(kube_informer *inf)
{
    WAIT_TRUE_MS(bound_pods(inf) >= N_BINDS, WAIT_MS);
    assert_int_equal(bound_pods(inf), N_BINDS);
}

static void post_event(kube_client *c)
{
    static const char ev[] =
        "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":"
        "\"pod-0.h2\",\"namespace\":\"default\"},\"eventTime\":\"2026-01-01T00:00:00.000000Z\","
        "\"reportingController\":\"stickyvm\",\"reportingInstance\":\"stickyvm-1\","
        "\"action\":\"Binding\",\"reason\":\"Scheduled\",\"regarding\":{\"kind\":\"Pod\","
        "\"namespace\":\"default\",\"name\":\"pod-0\"},\"note\":\"bound\",\"type\":\"Normal\"}";
    kube_response r = {0};

    assert_int_equal(kube_client_do(c, "POST", "/apis/events.k8s.io/v1/namespaces/default/events",
                                    "application/json", ev, strlen(ev), &r),
                     KUBE_OK);
    assert_int_equal(r.code, 201);
    kube_response_clear(&r);
}

static void patch_and_aggregator(kube_client *c)
{
    kube_status st;
    kube_response r = {0};
    cJSON *out = NULL;

    assert_int_equal(kube_api_set_annotation(c, &KUBE_RES_PODS, "default", "pod-0", "h2", "yes",
                                             NULL, &out, &st),
                     KUBE_OK);
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(
            cJSON_GetObjectItem(cJSON_GetObjectItem(out, "metadata"), "annotations"), "h2")),
        "yes");
    cJSON_Delete(out);
    assert_int_equal(
        kube_client_do(c, "GET", "/apis/apiregistration.k8s.io/v1/apiservices", NULL, NULL, 0, &r),
        KUBE_OK);
    assert_non_null(strstr(r.body, "\"APIServiceList\""));
    kube_response_clear(&r);
}

static void client_paths(int http2)
{
    harness *h = start(http2, NULL);
    kube_config *cfg = NULL;
    kube_client_options co;
    kube_client *c = NULL;
    kube_hub *hub = NULL;
    kube_informer *inf = NULL;
    kube_informer_options io = {.resource = &KUBE_RES_PODS, .codec = &kube_pod_codec};
    pthread_t tids[N_BINDS];
    bind_job jobs[N_BINDS];
    char err[256];

    assert_int_equal(kube_config_load(harness_kubeconfig(h), &cfg, err, sizeof(err)), KUBE_OK);
    kube_client_options_default(&co);
    co.qps = 0;
    assert_int_equal(kube_client_new(cfg, &co, &c), KUBE_OK);
    assert_int_equal(kube_hub_new(c, &hub), KUBE_OK);
    assert_int_equal(kube_hub_add_informer(hub, &io, NULL, &inf), KUBE_OK);
    assert_int_equal(kube_hub_start(hub), KUBE_OK);
    assert_int_equal(kube_hub_wait_synced(hub, WAIT_MS), KUBE_OK);
    assert_int_equal(kube_informer_count(inf), N_BINDS);
    /* the informer's list and watch came over the protocol offered */
    assert_true(harness_counter(h, "connections", "h2") >= (http2 ? 1 : 0));
    assert_true(harness_counter(h, "streams", "h2") >= (http2 ? 2 : 0));
    if (!http2)
        assert_int_equal(harness_counter(h, "connections", "h2"), 0);
    assert_int_equal(harness_reset_counters(h), KUBE_OK);

    for (int i = 0; i < N_BINDS; i++) {
        jobs[i] = (bind_job){c, i, -1};
        assert_int_equal(pthread_create(&tids[i], NULL, bind_main, &jobs[i]), 0);
    }
    for (int i = 0; i < N_BINDS; i++) {
        pthread_join(tids[i], NULL);
        assert_int_equal(jobs[i].rc, KUBE_OK);
    }
    wait_bound(inf);
    patch_and_aggregator(c);
    post_event(c);
    assert_int_equal(harness_count(h, "create", "pods/binding"), N_BINDS);
    assert_int_equal(harness_count(h, "patch", "pods"), 1);
    assert_int_equal(harness_count(h, "create", "events"), 1);
    if (http2) {
        /* the client's I/O loop multiplexes: the concurrent binds, the
         * patch, the event and the aggregated list share one connection
         * (the informer's watch came before the counters were reset) */
        assert_int_equal(harness_counter(h, "connections", "h2"), 1);
        assert_true(harness_counter(h, "streams", "h2") >= N_BINDS + 3);
    } else {
        assert_int_equal(harness_counter(h, "connections", "h2"), 0);
        assert_int_equal(harness_counter(h, "streams", "h2"), 0);
    }
    kube_hub_free(hub);
    kube_client_free(c);
    kube_config_free(cfg);
    harness_stop(h);
}

static void client_paths_http2(void **state)
{
    (void)state;
    client_paths(1);
}

static void client_paths_http1(void **state)
{
    (void)state;
    client_paths(0);
}

/* ---- curl multi: multiplexing on one connection ------------------------ */

typedef struct xfer {
    CURL *e;
    kube_buf body;
    struct curl_slist *hdrs;
    const char *post;
    long code;
    int done;
} xfer;

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    xfer *x = ud;

    return kube_buf_append(&x->body, p, size * n) == KUBE_OK ? size * n : 0;
}

static void xfer_init(xfer *x, harness *h, const char *path, const char *post)
{
    char url[512];

    memset(x, 0, sizeof(*x));
    snprintf(url, sizeof(url), "%s%s", harness_url(h), path);
    x->e = curl_easy_init();
    assert_non_null(x->e);
    x->post = post;
    x->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(x->e, CURLOPT_URL, url);
    curl_easy_setopt(x->e, CURLOPT_CAINFO, harness_ca_file(h));
    curl_easy_setopt(x->e, CURLOPT_SSLCERT, harness_admin_cert_file(h));
    curl_easy_setopt(x->e, CURLOPT_SSLKEY, harness_admin_key_file(h));
    curl_easy_setopt(x->e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(x->e, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(x->e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(x->e, CURLOPT_TIMEOUT_MS, (long)WAIT_MS);
    curl_easy_setopt(x->e, CURLOPT_HTTPHEADER, x->hdrs);
    curl_easy_setopt(x->e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(x->e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(x->e, CURLOPT_PRIVATE, x);
    if (post)
        curl_easy_setopt(x->e, CURLOPT_POSTFIELDS, post);
}

static void xfer_free(xfer *x)
{
    curl_easy_cleanup(x->e);
    curl_slist_free_all(x->hdrs);
    kube_buf_free(&x->body);
}

/* One round of driving m: runs the transfers, adds those that ended
 * (not the watch) to *done; 1 once *done is n and the watch (may be NULL)
 * saw `events` events of that type, else waits up to 100 ms for activity
 * and returns 0. */
static int drive_round(CURLM *m, size_t n, const xfer *watch, const char *type, size_t events,
                       size_t *done)
{
    int running, left;
    CURLMsg *msg;
    size_t seen = 0;
    curl_multi_perform(m, &running);
    while ((msg = curl_multi_info_read(m, &left)) != NULL) {
        xfer *x = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &x->code);
        x->done = 1;
        *done += x != watch;
    }
    for (const char *p = watch ? watch->body.data : NULL; p && (p = strstr(p, type)); p++)
        seen++;
    if (*done == n && seen >= events)
        return 1;
    curl_multi_poll(m, NULL, 0, 100, NULL);
    return 0;
}

/* Drives m until n transfers (not the watch) are done and the watch (may
 * be NULL) saw `events` events of that type, or fails at the deadline. */
static void drive(CURLM *m, size_t n, const xfer *watch, const char *type, size_t events)
{
    size_t done = 0;

    WAIT_TRUE_MS_MSG(drive_round(m, n, watch, type, events, &done), WAIT_MS,
                     "transfers did not finish: %zu of %zu done, the watch got %zu bytes", done, n,
                     watch ? watch->body.len : 0);
}

static char *binding(int i)
{
    char pod[32];
    kube_buf b = KUBE_BUF_INIT;

    snprintf(pod, sizeof(pod), "pod-%d", i);
    assert_int_equal(kube_api_binding_body(&b, "default", pod, NULL, "node-1"), KUBE_OK);
    return kube_buf_take(&b);
}

static void multiplexed(int http2)
{
    harness *h = start(http2, NULL);
    CURLM *m = curl_multi_init();
    xfer watch, binds[N_BINDS], after;
    char *bodies[N_BINDS];

    curl_multi_setopt(m, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    assert_int_equal(harness_reset_counters(h), KUBE_OK);
    xfer_init(&watch, h, "/api/v1/namespaces/default/pods?watch=1&resourceVersion=0", NULL);
    curl_multi_add_handle(m, watch.e);
    drive(m, 0, &watch, "\"ADDED\"", N_BINDS); /* the watch is established */
    for (int i = 0; i < N_BINDS; i++) {
        char path[96];
        bodies[i] = binding(i);
        snprintf(path, sizeof(path), "/api/v1/namespaces/default/pods/pod-%d/binding", i);
        xfer_init(&binds[i], h, path, bodies[i]);
        curl_multi_add_handle(m, binds[i].e);
    }
    drive(m, N_BINDS, &watch, "\"MODIFIED\"", N_BINDS);
    for (int i = 0; i < N_BINDS; i++)
        assert_int_equal(binds[i].code, 201);
    assert_false(watch.done); /* still streaming beside the binds */

    /* cancel the watch (RST_STREAM), then one more request */
    curl_multi_remove_handle(m, watch.e);
    xfer_init(&after, h, "/api/v1/nodes", NULL);
    curl_multi_add_handle(m, after.e);
    drive(m, 1, NULL, NULL, 0);
    assert_int_equal(after.code, 200);
    assert_int_equal(harness_count(h, "create", "pods/binding"), N_BINDS);
    if (http2) {
        assert_int_equal(harness_counter(h, "connections", "h2"), 1);
        assert_int_equal(harness_counter(h, "streams", "h2"), N_BINDS + 2);
        /* the cancelled watch's handler ends: no stream stays open */
        WAIT_TRUE_MS(harness_counter(h, "streams", "h2Open") == 0, WAIT_MS);
    } else {
        assert_int_equal(harness_counter(h, "connections", "h2"), 0);
        assert_true(harness_counter(h, "connections", "http/1.1") > 2);
    }
    for (int i = 0; i < N_BINDS; i++) {
        curl_multi_remove_handle(m, binds[i].e);
        xfer_free(&binds[i]);
        cJSON_free(bodies[i]);
    }
    curl_multi_remove_handle(m, after.e);
    xfer_free(&after);
    xfer_free(&watch);
    curl_multi_cleanup(m);
    harness_stop(h);
}

static void binds_share_one_h2_connection(void **state)
{
    (void)state;
    multiplexed(1);
}

static void without_h2_binds_use_http1(void **state)
{
    (void)state;
    multiplexed(0);
}

/* ---- limits and ALPN ----------------------------------------------------- */

/* One GET (or POST of post) of the configmaps on its own connection, with
 * extra headers, asking for version, ALPN on or off; returns the status,
 * *spoken the HTTP version curl spoke (CURL_HTTP_VERSION_*) and, when body
 * is non-NULL, the answer (caller frees). */
static long one(harness *h, long version, int alpn, struct curl_slist *extra, const char *post,
                kube_buf *body, long *spoken)
{
    xfer x;
    long code = 0;

    xfer_init(&x, h, "/api/v1/namespaces/default/configmaps", post);
    for (struct curl_slist *l = extra; l; l = l->next)
        x.hdrs = curl_slist_append(x.hdrs, l->data);
    curl_easy_setopt(x.e, CURLOPT_HTTPHEADER, x.hdrs);
    curl_easy_setopt(x.e, CURLOPT_HTTP_VERSION, version);
    curl_easy_setopt(x.e, CURLOPT_SSL_ENABLE_ALPN, (long)alpn);
    assert_int_equal(curl_easy_perform(x.e), CURLE_OK);
    curl_easy_getinfo(x.e, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_getinfo(x.e, CURLINFO_HTTP_VERSION, spoken);
    if (body) {
        *body = x.body;
        memset(&x.body, 0, sizeof(x.body));
    }
    xfer_free(&x);
    return code;
}

/* Sequential requests on one h2 connection: each handler thread goes idle
 * and takes the next stream (spawn.h), so far fewer threads start than
 * streams are served (one per stream when idle threads exit at once). */
static void handler_threads_are_reused(void **state)
{
    enum { N_SEQ = 40 };
    harness *h = start(1, NULL);
    kube_config *cfg = NULL;
    kube_client_options co;
    kube_client *c = NULL;
    char err[256];

    (void)state;
    assert_int_equal(kube_config_load(harness_kubeconfig(h), &cfg, err, sizeof(err)), KUBE_OK);
    kube_client_options_default(&co);
    co.qps = 0;
    assert_int_equal(kube_client_new(cfg, &co, &c), KUBE_OK);
    assert_int_equal(harness_reset_counters(h), KUBE_OK);
    for (int i = 0; i < N_SEQ; i++) {
        kube_response r = {0};
        assert_int_equal(
            kube_client_do(c, "GET", "/api/v1/namespaces/default/configmaps", NULL, NULL, 0, &r),
            KUBE_OK);
        assert_int_equal(r.code, 200);
        kube_response_clear(&r);
    }
    assert_true(harness_counter(h, "streams", "h2") >= N_SEQ);
    /* a thread may still be on its way back to the pool when the next
     * stream arrives; half of them reused is far from one per stream */
    assert_true(harness_counter(h, "threads", "started") <= N_SEQ / 2);
    kube_client_free(c);
    kube_config_free(cfg);
    harness_stop(h);
}

static void h2_limits_and_alpn(void **state)
{
    static const char *const extra[] = {"--max-body-bytes=65536", NULL};
    harness *h = start(1, extra);
    struct curl_slist *many = NULL, *big = NULL;
    char *value = malloc(641), *post = malloc(100001), line[64];
    kube_buf body = KUBE_BUF_INIT;
    long v = 0;

    (void)state;
    for (int i = 0; i < 200; i++) {
        snprintf(line, sizeof(line), "X-Field-%d: %d", i, i);
        many = curl_slist_append(many, line);
    }
    assert_int_equal(one(h, CURL_HTTP_VERSION_2TLS, 1, many, NULL, NULL, &v), 431);
    assert_int_equal(v, CURL_HTTP_VERSION_2);
    /* 100 fields of 620 bytes: over 64 KiB as RFC 7541 counts (32 more per
     * field), under the 64 KiB block libcurl's nghttp2 agrees to send */
    memset(value, 'a', 640);
    value[640] = '\0';
    for (int i = 0; i < 100; i++) {
        memcpy(value, line, (size_t)snprintf(line, sizeof(line), "X-Big-%03d: ", i));
        big = curl_slist_append(big, value);
    }
    assert_int_equal(one(h, CURL_HTTP_VERSION_2TLS, 1, big, NULL, NULL, &v), 431);
    memset(post, ' ', 100000);
    post[0] = '{';
    post[99999] = '}';
    post[100000] = '\0';
    assert_int_equal(one(h, CURL_HTTP_VERSION_2TLS, 1, NULL, post, &body, &v), 413);
    assert_non_null(strstr(body.data, "Request entity too large: limit is 65536"));
    assert_int_equal(v, CURL_HTTP_VERSION_2);
    /* the pipeline still answers on h2 after refusals, and other clients
     * get HTTP/1.1 */
    assert_int_equal(one(h, CURL_HTTP_VERSION_2TLS, 1, NULL, NULL, NULL, &v), 200);
    assert_int_equal(v, CURL_HTTP_VERSION_2);
    assert_int_equal(harness_reset_counters(h), KUBE_OK);
    assert_int_equal(one(h, CURL_HTTP_VERSION_1_1, 1, NULL, NULL, NULL, &v), 200);
    assert_int_equal(v, CURL_HTTP_VERSION_1_1);
    assert_int_equal(one(h, CURL_HTTP_VERSION_2TLS, 0, NULL, NULL, NULL, &v), 200);
    assert_int_equal(v, CURL_HTTP_VERSION_1_1);
    assert_int_equal(harness_counter(h, "connections", "h2"), 0);
    kube_buf_free(&body);
    curl_slist_free_all(many);
    curl_slist_free_all(big);
    free(value);
    free(post);
    harness_stop(h);
}

int test_group_emulator_h2(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(client_paths_http2),
        cmocka_unit_test(client_paths_http1),
        cmocka_unit_test(binds_share_one_h2_connection),
        cmocka_unit_test(without_h2_binds_use_http1),
        cmocka_unit_test(handler_threads_are_reused),
        cmocka_unit_test(h2_limits_and_alpn),
    };
    return cmocka_run_group_tests_name("emulator_h2", tests, NULL, NULL);
}
