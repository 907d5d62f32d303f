/*
 * tests/integration/test_scheduler_integration.c - the scheduler in-process
 * against the API emulator (tests/harness.h), with the built-in plugins:
 *   - pods on 50 nodes land where NodeAffinity (nodeSelector),
 *     TaintToleration and NodeResourcesFit say;
 *   - an unschedulable pod is scheduled once a node that fits is added;
 *   - the FailedScheduling event and the PodScheduled=False condition have
 *     kube-scheduler's shapes, and the condition is not re-patched when
 *     a retry fails the same way;
 *   - a profile that disables a default plugin runs without it;
 *   - two replicas with leader election: every pod is bound exactly once
 *     (bindings counted by the emulator), the second takes over when the
 *     first stops and releases the Lease;
 *   - the secure port answers /healthz, /readyz and /metrics;
 *   - the binary writes its defaulted configuration (--write-config-to);
 *   - resources no enabled plugin needs are neither listed nor watched;
 *   - SIGUSR2 dumps the cache and compares it with the informers.
 * Waits use deadlines; nothing asserts speed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config/config.h"
#include "kube/transport/config_testing.h"
#include "unit/test_plugin_util.h"
#include "plugins/registry.h"
#include "harness.h"
#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/util/clock.h"
#include "kube/transport/config.h"
#include "kube/util/errors.h"
#include "kube/machinery/leader.h"
#include "kube/types/pod.h"
#include "scheduler.h"
#include "scheduler_testing.h"
#include "server.h"
#include "server_testing.h"
#include "sched_fixture.h"
#include "framework/framework_testing.h"

#define WAIT_MS 30000
#define NODES 50
#define PODS_PATH "/api/v1/namespaces/default/pods"
/* kube-scheduler's FitError with DefaultPreemption's PostFilter message
 * (the doubled period is kube-scheduler's own) */
#define FIT_MSG                                                                                \
    "0/50 nodes are available: 50 Insufficient cpu. preemption: 0/50 nodes are available: 50 " \
    "No preemption victims found for incoming pod.."

typedef struct fixture {
    harness *h;
    kube_config *kc;
    kube_client *client, *leader_client, *leader_client_b; /* one per replica */
    /* with leader election each replica fences a client of its own */
    kube_client *replica_clients[2];
    int n_replica_clients;
    sched_config *cfg;
    sched_scheduler *sched;
} fixture;

static const char base_config[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                  "kind: KubeSchedulerConfiguration\n"
                                  "leaderElection:\n"
                                  "  leaderElect: false\n"
                                  "profiles:\n"
                                  "- schedulerName: default-scheduler\n"
                                  "- schedulerName: no-fit\n"
                                  "  plugins:\n"
                                  "    multiPoint:\n"
                                  "      disabled:\n"
                                  "      - name: NodeResourcesFit\n";

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof(*fx));
    harness_opts ho = HARNESS_OPTS_INIT;
    kube_client_options o;
    char err[256];

    ho.nodes = NODES;
    assert_int_equal(harness_start(&ho, &fx->h), KUBE_OK);
    assert_int_equal(kube_config_from_file(harness_kubeconfig(fx->h), &fx->kc, err, sizeof(err)),
                     KUBE_OK);
    kube_client_options_default(&o);
    o.qps = 0;
    assert_int_equal(kube_client_new(fx->kc, &o, &fx->client), KUBE_OK);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;

    sched_scheduler_free(fx->sched);
    sched_config_free(fx->cfg);
    kube_client_free(fx->leader_client);
    kube_client_free(fx->leader_client_b);
    for (int i = 0; i < fx->n_replica_clients; i++)
        kube_client_free(fx->replica_clients[i]);
    kube_client_free(fx->client);
    kube_config_free(fx->kc);
    harness_stop(fx->h);
    free(fx);
    return 0;
}

static sched_config *load_config_with(const char *yaml, const fw_registry *reg)
{
    sched_config *cfg = NULL;
    char err[512] = "";

    if (tp_config_load(yaml, "test.yaml", reg, &cfg, err, sizeof(err)) != KUBE_OK)
        fail_msg("config: %s", err);
    return cfg;
}

static sched_config *load_config(const char *yaml)
{
    return load_config_with(yaml, NULL);
}

static sched_scheduler *start_scheduler_with(fixture *fx, const sched_config *cfg, kube_client *lc,
                                             const char *identity, const fw_registry *reg,
                                             int workers)
{
    sched_scheduler_options so;
    sched_scheduler *s = NULL;
    char err[512] = "";

    memset(&so, 0, sizeof(so));
    so.config = cfg;
    so.client = fx->client;
    if (lc) {
        kube_client_options o;
        kube_client_options_default(&o);
        o.qps = 0;
        assert_true(fx->n_replica_clients < 2);
        assert_int_equal(kube_client_new(fx->kc, &o, &so.client), KUBE_OK);
        fx->replica_clients[fx->n_replica_clients++] = so.client;
    }
    so.leader_client = lc;
    so.identity = identity;
    so.registry = reg;
    so.binding_workers = workers;
    if (sched_scheduler_new(&so, &s, err, sizeof(err)) != KUBE_OK)
        fail_msg("sched_scheduler_new: %s", err);
    assert_int_equal(sched_scheduler_start(s), KUBE_OK);
    assert_int_equal(sched_scheduler_wait_synced(s, WAIT_MS), KUBE_OK);
    return s;
}

static sched_scheduler *start_scheduler(fixture *fx, const sched_config *cfg, kube_client *lc,
                                        const char *identity)
{
    return start_scheduler_with(fx, cfg, lc, identity, NULL, 4);
}

static void start_default(fixture *fx)
{
    fx->cfg = load_config(base_config);
    fx->sched = start_scheduler(fx, fx->cfg, NULL, NULL);
}

/* ------------------------------------------------------------------ */
/* API helpers                                                         */
/* ------------------------------------------------------------------ */

static void create_pod(fixture *fx, const char *name, const char *scheduler, const char *cpu,
                       const char *extra_spec)
{
    char json[2048];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"default\"},\"spec\":{\"schedulerName\":\"%s\",\"containers\":[{"
             "\"name\":\"c\",\"image\":\"registry.invalid/pause:3.9\",\"resources\":{\"requests\":"
             "{\"cpu\":\"%s\",\"memory\":\"128Mi\"}}}]%s}}",
             name, scheduler, cpu, extra_spec ? extra_spec : "");
    assert_int_equal(harness_create(fx->h, PODS_PATH, json, NULL), KUBE_OK);
}

static void create_node(fixture *fx, const char *name, const char *labels, const char *taints,
                        const char *cpu)
{
    char json[2048];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{%s}},\"spec\":{\"taints\":[%s]},\"status\":{\"capacity\":{\"cpu\":"
             "\"%s\",\"memory\":\"256Gi\",\"pods\":\"110\"},\"allocatable\":{\"cpu\":\"%s\","
             "\"memory\":\"256Gi\",\"pods\":\"110\"}}}",
             name, labels ? labels : "", taints ? taints : "", cpu, cpu);
    assert_int_equal(harness_create(fx->h, "/api/v1/nodes", json, NULL), KUBE_OK);
}

static cJSON *get_pod(fixture *fx, const char *name)
{
    return sf_get(fx->h, PODS_PATH "/%s", name);
}

static void expect_bound_to(fixture *fx, const char *name, const char *node)
{
    char *got = sf_wait_bound(fx->h, name);
    assert_string_equal(got, node);
    free(got);
}

/* A copy of the pod's PodScheduled condition if it is False now (caller
 * deletes), else NULL. */
static cJSON *unschedulable_condition(fixture *fx, const char *name)
{
    cJSON *p = get_pod(fx, name), *copy = NULL;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(
                              cJSON_GetObjectItemCaseSensitive(p, "status"), "conditions"))
    {
        const char *type = sf_str_at(c, "type", NULL), *status = sf_str_at(c, "status", NULL);
        if (type && status && !strcmp(type, "PodScheduled") && !strcmp(status, "False")) {
            copy = cJSON_Duplicate(c, 1);
            break;
        }
    }
    cJSON_Delete(p);
    return copy;
}

/* The pod's PodScheduled condition once it is False (caller deletes). */
static cJSON *wait_unschedulable(fixture *fx, const char *name)
{
    cJSON *c = NULL;
    WAIT_TRUE_MS_MSG((c = unschedulable_condition(fx, name)) != NULL, WAIT_MS,
                     "pod %s never reported PodScheduled=False", name);
    return c;
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

static void pods_land_where_plugins_say(void **state)
{
    fixture *fx = *state;
    start_default(fx);
    create_node(fx, "ssd-node", "\"disk\":\"ssd\"", NULL, "8");
    create_node(fx, "tainted", "\"pool\":\"t\"",
                "{\"key\":\"dedicated\",\"value\":\"x\",\"effect\":\"NoSchedule\"}", "8");
    create_pod(fx, "wants-ssd", "default-scheduler", "100m",
               ",\"nodeSelector\":{\"disk\":\"ssd\"}");
    create_pod(fx, "tolerates", "default-scheduler", "100m",
               ",\"nodeSelector\":{\"pool\":\"t\"},\"tolerations\":[{\"key\":\"dedicated\","
               "\"operator\":\"Equal\",\"value\":\"x\",\"effect\":\"NoSchedule\"}]");
    create_pod(fx, "intolerant", "default-scheduler", "100m", ",\"nodeSelector\":{\"pool\":\"t\"}");
    for (int i = 0; i < 10; i++) {
        char name[32];
        snprintf(name, sizeof(name), "plain-%d", i);
        create_pod(fx, name, "default-scheduler", "500m", NULL);
    }
    expect_bound_to(fx, "wants-ssd", "ssd-node");
    expect_bound_to(fx, "tolerates", "tainted");
    for (int i = 0; i < 10; i++) {
        char name[32];
        snprintf(name, sizeof(name), "plain-%d", i);
        char *node = sf_wait_bound(fx->h, name);
        assert_true(!strncmp(node, "node-", 5) || !strcmp(node, "ssd-node"));
        free(node);
    }
    cJSON *cond = wait_unschedulable(fx, "intolerant");
    assert_non_null(
        strstr(sf_str_at(cond, "message", NULL), "1 node(s) had untolerated taint {dedicated: x}"));
    cJSON_Delete(cond);
}

/* The answers the server gave the bindings of pod name, in order, as
 * "500,201". */
static void binding_codes(fixture *fx, const char *name, char *out, size_t n)
{
    cJSON *items = NULL;
    const cJSON *it;
    size_t len = 0;

    assert_int_equal(harness_requests(fx->h, "create", "pods/binding", NULL, &items), KUBE_OK);
    out[0] = '\0';
    cJSON_ArrayForEach(it, items)
    {
        if (strcmp(sf_str_at(it, "name", NULL), name) == 0 && len + 8 < n)
            len += (size_t)snprintf(out + len, n - len, "%s%d", len ? "," : "",
                                    cJSON_GetObjectItemCaseSensitive(it, "code")->valueint);
    }
    cJSON_Delete(items);
}

/* A binding the server fails (a 500 without Retry-After: a POST is not
 * retried) fails the binding cycle, here the one that runs without a
 * binding thread: the pod is forgotten, its status says why, the next
 * attempt binds it, and no binding stays in flight. */
static void failed_binding_is_retried(void **state)
{
    fixture *fx = *state;
    static const char *const creates[] = {"create", NULL};
    static const char *const bindings[] = {"pods/binding", NULL};
    static const char *const names[] = {"fb-1", NULL};
    harness_fault_rule r = {HARNESS_FAULT_STATUS,
                            0,
                            500,
                            0,
                            0,
                            1,
                            0,
                            "etcdserver: request timed out",
                            creates,
                            bindings,
                            NULL,
                            names};
    sched_scheduler_stats st;
    char codes[64];

    start_default(fx);
    assert_int_equal(harness_set_fault_rules(fx->h, &r, 1), KUBE_OK);
    create_pod(fx, "fb-1", "default-scheduler", "100m", NULL);
    free(sf_wait_bound(fx->h, "fb-1"));
    binding_codes(fx, "fb-1", codes, sizeof(codes));
    assert_string_equal(codes, "500,201");
    WAIT_TRUE((sched_scheduler_stats_get(fx->sched, &st), st.binding_in_flight == 0));
    cJSON *items = NULL;
    assert_int_equal(harness_requests(fx->h, "patch", "pods/status", NULL, &items), KUBE_OK);
    assert_true(cJSON_GetArraySize(items) >= 1); /* the SchedulerError condition */
    assert_string_equal(sf_str_at(cJSON_GetArrayItem(items, 0), "name", NULL), "fb-1");
    cJSON_Delete(items);
}

static void unschedulable_pod_waits_for_a_node(void **state)
{
    fixture *fx = *state;
    start_default(fx);
    create_pod(fx, "huge", "default-scheduler", "40", NULL);
    cJSON *cond = wait_unschedulable(fx, "huge");
    assert_string_equal(sf_str_at(cond, "reason", NULL), "Unschedulable");
    assert_string_equal(sf_str_at(cond, "message", NULL), FIT_MSG);
    assert_non_null(sf_str_at(cond, "lastTransitionTime", NULL));
    cJSON_Delete(cond);

    /* the FailedScheduling event, kube-scheduler's shape */
    cJSON *ev = sf_wait_event(fx->h, "huge", "FailedScheduling");

    assert_string_equal(sf_str_at(ev, "type", NULL), "Warning");
    assert_string_equal(sf_str_at(ev, "action", NULL), "Scheduling");
    assert_string_equal(sf_str_at(ev, "note", NULL), FIT_MSG);
    assert_string_equal(sf_str_at(ev, "reportingController", NULL), "default-scheduler");
    assert_string_equal(sf_str_at(ev, "regarding", "kind"), "Pod");
    assert_non_null(sf_str_at(ev, "regarding", "uid"));
    cJSON_Delete(ev);

    /* a retry failing the same way does not patch the status again */
    int64_t patches = harness_count(fx->h, "patch", "pods/status");
    sched_scheduler_stats st0, st1;
    sched_scheduler_stats_get(fx->sched, &st0);
    create_pod(fx, "small", "default-scheduler", "100m", NULL);
    char *node = sf_wait_bound(fx->h, "small");
    free(node);
    long status = 0;
    cJSON *answer = NULL;
    assert_int_equal(
        harness_request_json(fx->h, NULL, "DELETE", PODS_PATH "/small", NULL, &status, &answer),
        KUBE_OK);
    assert_int_equal(status, 200);
    cJSON_Delete(answer);
    WAIT_TRUE_MS(
        (sched_scheduler_stats_get(fx->sched, &st1), st1.unschedulable > st0.unschedulable),
        WAIT_MS);
    assert_int_equal(harness_count(fx->h, "patch", "pods/status"), patches);

    /* a node that fits arrives: the pod is scheduled there */
    create_node(fx, "big", NULL, NULL, "64");
    expect_bound_to(fx, "huge", "big");
    ev = sf_wait_event(fx->h, "huge", "Scheduled");
    assert_string_equal(sf_str_at(ev, "type", NULL), "Normal");
    assert_string_equal(sf_str_at(ev, "action", NULL), "Binding");
    assert_string_equal(sf_str_at(ev, "note", NULL), "Successfully assigned default/huge to big");
    cJSON_Delete(ev);
}

static void profile_without_a_default_plugin(void **state)
{
    fixture *fx = *state;
    start_default(fx);
    create_pod(fx, "fit-checked", "default-scheduler", "40", NULL);
    create_pod(fx, "fit-skipped", "no-fit", "40", NULL);
    char *node = sf_wait_bound(fx->h, "fit-skipped");
    assert_true(!strncmp(node, "node-", 5));
    free(node);
    cJSON *cond = wait_unschedulable(fx, "fit-checked");
    assert_non_null(strstr(sf_str_at(cond, "message", NULL), "Insufficient cpu"));
    cJSON_Delete(cond);
    cJSON *ev = sf_wait_event(fx->h, "fit-skipped", "Scheduled");
    assert_string_equal(sf_str_at(ev, "reportingController", NULL), "no-fit");
    cJSON_Delete(ev);
}

typedef struct pair {
    sched_scheduler *a, *b;
    atomic_int watching, both;
} pair;

static void *watch_leaders(void *arg)
{
    pair *p = arg;
    while (atomic_load(&p->watching)) {
        sched_scheduler *a = p->a, *b = p->b;
        if (a && b && sched_scheduler_active(a) && sched_scheduler_active(b))
            atomic_store(&p->both, 1);
        usleep(500);
    }
    return NULL;
}

static void create_many(fixture *fx, const char *prefix, int from, int n)
{
    for (int i = from; i < from + n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "%s-%d", prefix, i);
        create_pod(fx, name, "default-scheduler", "100m", NULL);
    }
}

static void wait_many(fixture *fx, const char *prefix, int from, int n)
{
    for (int i = from; i < from + n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "%s-%d", prefix, i);
        free(sf_wait_bound(fx->h, name));
    }
}

static void two_replicas_never_both_bind(void **state)
{
    fixture *fx = *state;
    static const char yaml[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                               "kind: KubeSchedulerConfiguration\n"
                               "leaderElection:\n"
                               "  leaderElect: true\n"
                               "  leaseDuration: 4s\n"
                               "  renewDeadline: 3s\n"
                               "  retryPeriod: 500ms\n"
                               "  resourceNamespace: default\n";
    kube_leader_config lc;
    kube_client_options o;
    pair p;
    pthread_t t;

    fx->cfg = load_config(yaml);
    kube_leader_config_default(&lc);
    lc.renew_deadline_ms = 3000;
    kube_client_options_default(&o);
    kube_leader_client_options(&lc, &o);
    assert_int_equal(kube_client_new(fx->kc, &o, &fx->leader_client), KUBE_OK);
    assert_int_equal(kube_client_new(fx->kc, &o, &fx->leader_client_b), KUBE_OK);
    assert_int_equal(harness_reset_counters(fx->h), KUBE_OK);
    memset(&p, 0, sizeof(p));
    atomic_store(&p.watching, 1);
    assert_int_equal(pthread_create(&t, NULL, watch_leaders, &p), 0);
    p.a = start_scheduler(fx, fx->cfg, fx->leader_client, "replica-a");
    p.b = start_scheduler(fx, fx->cfg, fx->leader_client_b, "replica-b");

    create_many(fx, "lp", 0, 20);
    wait_many(fx, "lp", 0, 20);
    /* whoever leads stops (releasing the Lease); the other takes over */
    sched_scheduler *leader = sched_scheduler_active(p.a) ? p.a : p.b;
    sched_scheduler *other = leader == p.a ? p.b : p.a;
    assert_true(sched_scheduler_active(leader));
    sched_scheduler_stop(leader, WAIT_MS);
    create_many(fx, "lp", 20, 10);
    wait_many(fx, "lp", 20, 10);
    assert_true(sched_scheduler_active(other));

    atomic_store(&p.watching, 0);
    pthread_join(t, NULL);
    assert_false(atomic_load(&p.both));
    /* every pod was bound by exactly one request: no replica raced another */
    assert_int_equal(harness_count(fx->h, "create", "pods/binding"), 30);
    sched_scheduler_free(p.a);
    sched_scheduler_free(p.b);
}

/* ------------------------------------------------------------------ */
/* Permit: a gang of pods waits until all are reserved                 */
/* ------------------------------------------------------------------ */

#define GANG 7

typedef struct gang {
    fw_handle *h;
    pthread_mutex_t mu;
    char uids[GANG][64];
    int n;
} gang;

static int gang_create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                       size_t n)
{
    gang *g = calloc(1, sizeof(*g));
    (void)args;
    (void)err;
    (void)n;
    g->h = h;
    pthread_mutex_init(&g->mu, NULL);
    *self = g;
    return KUBE_OK;
}

static void gang_destroy(void *self)
{
    gang *g = self;
    pthread_mutex_destroy(&g->mu);
    free(g);
}

/* Pods labelled gang wait until GANG of them are reserved, then all go. */
static fw_status *gang_permit(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                              const char *node, int64_t *timeout_ms)
{
    gang *g = self;
    (void)cs;
    (void)node;
    if (!kube_meta_label(&pod->pod->base.meta, "gang"))
        return NULL;
    pthread_mutex_lock(&g->mu);
    if (g->n + 1 < GANG) {
        snprintf(g->uids[g->n++], sizeof(g->uids[0]), "%s", pod->uid);
        pthread_mutex_unlock(&g->mu);
        *timeout_ms = 120000;
        return fw_status_new(FW_WAIT, NULL);
    }
    for (int i = 0; i < g->n; i++)
        fw_framework_allow_waiting_pod(g->h->fw, g->uids[i], "Gang");
    g->n = 0;
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

static const fw_plugin_desc p_gang = {
    .name = "Gang", .create = gang_create, .destroy = gang_destroy, .permit = gang_permit};

static void waiting_pods_do_not_hold_binding_threads(void **state)
{
    fixture *fx = *state;
    static const char yaml[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                               "kind: KubeSchedulerConfiguration\n"
                               "leaderElection:\n"
                               "  leaderElect: false\n"
                               "profiles:\n"
                               "- schedulerName: default-scheduler\n"
                               "  plugins:\n"
                               "    permit:\n"
                               "      enabled:\n"
                               "      - name: Gang\n";
    const fw_registry *def = plugin_registry_in_tree();
    const fw_plugin_desc **list = calloc(def->n + 1, sizeof(*list));
    fw_registry reg;

    memcpy(list, def->plugins, def->n * sizeof(*list));
    list[def->n] = &p_gang;
    reg.plugins = list;
    reg.n = def->n + 1;
    fx->cfg = load_config_with(yaml, &reg);
    /* one binding thread and a backlog of 5: more waiting pods than that */
    fx->sched = start_scheduler_with(fx, fx->cfg, NULL, NULL, &reg, 1);
    for (int i = 0; i < GANG; i++) {
        char json[512];
        snprintf(json, sizeof(json),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"gang-%d\","
                 "\"namespace\":\"default\",\"labels\":{\"gang\":\"a\"}},\"spec\":{"
                 "\"containers\":[{\"name\":\"c\",\"image\":\"registry.invalid/pause:3.9\"}]}}",
                 i);
        assert_int_equal(harness_create(fx->h, PODS_PATH, json, NULL), KUBE_OK);
    }
    wait_many(fx, "gang", 0, GANG);
    sched_scheduler_free(fx->sched);
    fx->sched = NULL;
    free(list);
}

/* ------------------------------------------------------------------ */
/* Secure port and binary                                              */
/* ------------------------------------------------------------------ */

static size_t collect(char *data, size_t size, size_t n, void *ud)
{
    kube_buf_append(ud, data, size * n);
    return size * n;
}

/* GET https://127.0.0.1:port/path with a bearer token (NULL: none). */
static long https_get_as(int port, const char *path, const char *token, kube_buf *body)
{
    char url[128], auth[512];
    struct curl_slist *headers = NULL;
    long code = 0;
    CURL *c = curl_easy_init();

    snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", port, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
    if (token) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
        headers = curl_slist_append(NULL, auth);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    }
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    curl_slist_free_all(headers);
    return code;
}

static long https_get(int port, const char *path, kube_buf *body)
{
    return https_get_as(port, path, NULL, body);
}

static int not_ready(void *ud)
{
    (void)ud;
    return 0;
}

static void secure_port_serves_health_and_metrics(void **state)
{
    fixture *fx = *state;
    static const char *const masters[] = {"system:masters"};
    const harness_identity *admin = NULL;
    kube_serving_options serving;
    sched_server_options so;
    sched_server *srv = NULL;
    kube_buf b = KUBE_BUF_INIT;
    char err[256];

    start_default(fx);
    create_pod(fx, "m1", "default-scheduler", "100m", NULL);
    free(sf_wait_bound(fx->h, "m1"));
    assert_int_equal(harness_add_token_user(fx->h, "metrics-admin", masters, 1, &admin), KUBE_OK);
    assert_int_equal(sched_server_defaults(&serving), KUBE_OK);
    free(serving.bind_address);
    serving.bind_address = strdup("127.0.0.1");
    serving.secure_port = 0;
    memset(&so, 0, sizeof(so));
    so.serving = &serving;
    so.client = fx->client;
    so.metrics = sched_scheduler_metrics(fx->sched);
    assert_int_equal(sched_server_new(&so, &srv, err, sizeof(err)), KUBE_OK);
    int port = sched_server_port(srv);
    assert_true(port > 0);
    assert_int_equal(https_get(port, "/healthz", &b), 200);
    assert_string_equal(b.data, "ok");
    kube_buf_reset(&b);
    assert_int_equal(https_get(port, "/readyz", &b), 200);
    kube_buf_reset(&b);
    assert_int_equal(https_get(port, "/metrics", &b), 401);
    kube_buf_reset(&b);
    assert_int_equal(https_get_as(port, "/nope", admin->token, &b), 404);
    kube_buf_reset(&b);
    assert_int_equal(https_get_as(port, "/metrics", admin->token, &b), 200);
    assert_non_null(strstr(b.data, "scheduler_schedule_attempts_total{result=\"scheduled\","
                                   "profile=\"default-scheduler\"} 1\n"));
    assert_non_null(strstr(b.data, "scheduler_pending_pods{queue=\"active\"} 0\n"));
    assert_non_null(strstr(b.data, "scheduler_framework_extension_point_duration_seconds_bucket{"
                                   "extension_point=\"Bind\",status=\"Success\",profile="
                                   "\"default-scheduler\""));
    sched_server_free(srv);

    /* readyz reports the failed check */
    so.ready = not_ready;
    assert_int_equal(sched_server_new(&so, &srv, err, sizeof(err)), KUBE_OK);
    kube_buf_reset(&b);
    assert_int_equal(https_get(sched_server_port(srv), "/readyz", &b), 500);
    assert_non_null(strstr(b.data, "[-]sched-handler-sync failed"));
    sched_server_free(srv);
    kube_buf_free(&b);
    kube_serving_options_free(&serving);
}

static void binary_writes_defaulted_config(void **state)
{
    fixture *fx = *state;
    char out[512], cmd[1024];
    sched_config *cfg = NULL;
    char err[256] = "";

    snprintf(out, sizeof(out), "%s/written.yaml", harness_data_dir(fx->h));
    snprintf(cmd, sizeof(cmd),
             "%s/stickyvm-scheduler --kubeconfig /nonexistent --leader-elect=false "
             "--write-config-to %s 2>/dev/null",
             STICKYVM_BINARY_DIR, out);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(tp_config_load_file(out, NULL, &cfg, err, sizeof(err)), KUBE_OK);
    assert_int_equal(cfg->leader_election.leader_elect, 0);
    assert_string_equal(cfg->client_connection.kubeconfig, "/nonexistent");
    assert_int_equal(cfg->n_profiles, 1);
    assert_string_equal(cfg->profiles[0].scheduler_name, "default-scheduler");
    sched_config_free(cfg);
    snprintf(cmd, sizeof(cmd), "%s/stickyvm-scheduler --no-such-flag >/dev/null 2>&1",
             STICKYVM_BINARY_DIR);
    int rc = system(cmd);
    assert_true(WIFEXITED(rc) && WEXITSTATUS(rc) == 1);
}

/* The resources only some plugins read or register events of. */
static const char *const plugin_resources[] = {
    "persistentvolumes", "persistentvolumeclaims",  "storageclasses",
    "csinodes",          "virtualmachineinstances", "virtualmachines",
};

/* Lists plus watches of resource the emulator served. */
static int64_t list_and_watch(fixture *fx, const char *resource)
{
    return harness_count(fx->h, "list", resource) + harness_count(fx->h, "watch", resource);
}

/* One informer factory: what no enabled plugin needs is neither listed nor
 * watched (no volume plugin: no PV, PVC, StorageClass, CSINode; no StickyVM:
 * no VM, VMI), and a profile with them lists each once for all profiles. */
static void unneeded_resources_are_not_watched(void **state)
{
    fixture *fx = *state;
    static const char no_volumes[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                     "kind: KubeSchedulerConfiguration\n"
                                     "leaderElection:\n"
                                     "  leaderElect: false\n"
                                     "profiles:\n"
                                     "- schedulerName: default-scheduler\n"
                                     "  plugins:\n"
                                     "    multiPoint:\n"
                                     "      disabled:\n"
                                     "      - name: VolumeBinding\n"
                                     "      - name: VolumeRestrictions\n"
                                     "      - name: VolumeZone\n"
                                     "      - name: NodeVolumeLimits\n"
                                     "      - name: EBSLimits\n"
                                     "      - name: GCEPDLimits\n"
                                     "      - name: AzureDiskLimits\n";
    static const char all[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                              "kind: KubeSchedulerConfiguration\n"
                              "leaderElection:\n"
                              "  leaderElect: false\n"
                              "profiles:\n"
                              "- schedulerName: default-scheduler\n"
                              "- schedulerName: stickyvm\n"
                              "  plugins:\n"
                              "    multiPoint:\n"
                              "      enabled:\n"
                              "      - name: StickyVM\n";

    fx->cfg = load_config(no_volumes);
    fx->sched = start_scheduler_with(fx, fx->cfg, NULL, NULL, NULL, 0);
    assert_int_equal(sched_scheduler_wait_synced(fx->sched, WAIT_MS), KUBE_OK);
    assert_true(harness_count(fx->h, "list", "pods") >= 1);
    for (size_t i = 0; i < sizeof(plugin_resources) / sizeof(*plugin_resources); i++)
        if (list_and_watch(fx, plugin_resources[i]))
            fail_msg("%s listed or watched", plugin_resources[i]);
    sched_scheduler_free(fx->sched);
    sched_config_free(fx->cfg);
    fx->cfg = load_config(all);
    fx->sched = start_scheduler_with(fx, fx->cfg, NULL, NULL, NULL, 0);
    assert_int_equal(sched_scheduler_wait_synced(fx->sched, WAIT_MS), KUBE_OK);
    for (size_t i = 0; i < sizeof(plugin_resources) / sizeof(*plugin_resources); i++)
        if (harness_count(fx->h, "list", plugin_resources[i]) != 1)
            fail_msg("%s listed %lld times", plugin_resources[i],
                     (long long)harness_count(fx->h, "list", plugin_resources[i]));
}

/* Reads the whole log written to fd into b (NUL-terminated); 1 if it holds
 * want. */
static int log_holds(int fd, const char *want, kube_buf *b)
{
    char chunk[4096];
    ssize_t n;
    kube_buf_reset(b);
    lseek(fd, 0, SEEK_SET);
    while ((n = read(fd, chunk, sizeof(chunk))) > 0)
        kube_buf_append(b, chunk, (size_t)n);
    kube_buf_append(b, "", 1);
    return strstr(b->data, want) != NULL;
}

/* Puts stderr back to saved (a dup of it); returns what. */
static const char *restore_stderr(int saved, const char *what)
{
    dup2(saved, STDERR_FILENO);
    return what;
}

/* The log written to fd (stderr for now, saved its dup) once it holds want
 * (caller frees); fails the test, with stderr put back, if it does not
 * within WAIT_MS. */
static char *log_until(int fd, int saved, const char *want)
{
    kube_buf b = {0};

    WAIT_TRUE_MS_MSG(log_holds(fd, want, &b), WAIT_MS, "the log never showed %s",
                     restore_stderr(saved, want));
    return kube_buf_take(&b);
}

/* 1 if one pod waits among the unschedulable ones and nothing is being
 * bound. */
static int parked(fixture *fx)
{
    sched_scheduler_stats st;
    sched_scheduler_stats_get(fx->sched, &st);
    return st.queue.unschedulable == 1 && st.binding_in_flight == 0;
}

/* Waits until one pod waits among the unschedulable ones and nothing is
 * being bound (the cache and the queue hold every pod). */
static void wait_parked(fixture *fx)
{
    WAIT_TRUE_MS_MSG(parked(fx), WAIT_MS, "the pod never parked among the unschedulable pods");
}

/* SIGUSR2: the cache debugger compares the cache with the informers (they
 * agree) and dumps the nodes with their pods, the assumed pods and the
 * queue to the log. */
static void sigusr2_dumps_the_cache(void **state)
{
    fixture *fx = *state;
    char path[] = "/tmp/stickyvm-sigusr2-XXXXXX", want[512];
    int fd = mkstemp(path), saved = dup(STDERR_FILENO);
    char *node, *out;

    assert_true(fd >= 0 && saved >= 0);
    unlink(path);
    start_default(fx);
    create_pod(fx, "dumped", "default-scheduler", "100m", NULL);
    node = sf_wait_bound(fx->h, "dumped");
    create_pod(fx, "too-big", "default-scheduler", "1000", NULL);
    cJSON_Delete(wait_unschedulable(fx, "too-big"));
    wait_parked(fx);
    fflush(stderr);
    dup2(fd, STDERR_FILENO);
    raise(SIGUSR2);
    out = log_until(fd, saved, "\"Dump of scheduling queue\"");
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(fd);
    assert_non_null(strstr(out, "\"Dump of cached NodeInfo\" nodes=<\n"));
    snprintf(want, sizeof(want), "\tNode name: %s\n\tDeleted: false\n", node);
    assert_non_null(strstr(out, want));
    assert_non_null(strstr(out, "\tRequested Resources: {MilliCPU:100 Memory:134217728 "));
    assert_non_null(strstr(out, "\tname: dumped, namespace: default, uid: "));
    assert_non_null(strstr(out, "\"Dump of assumed pods\" pods=<\n"));
    assert_non_null(strstr(strstr(out, "\"Dump of scheduling queue\""), "\tname: too-big, "));
    assert_null(strstr(out, "Cache mismatch"));
    free(out);
    free(node);
}

int test_group_scheduler_integration(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(pods_land_where_plugins_say),           T(failed_binding_is_retried),
        T(unschedulable_pod_waits_for_a_node),    T(profile_without_a_default_plugin),
        T(two_replicas_never_both_bind),          T(waiting_pods_do_not_hold_binding_threads),
        T(secure_port_serves_health_and_metrics), T(binary_writes_defaulted_config),
        T(unneeded_resources_are_not_watched),    T(sigusr2_dumps_the_cache),
    };
#undef T
    return cmocka_run_group_tests_name("scheduler_integration", tests, NULL, NULL);
}
