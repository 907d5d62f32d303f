/*
 * tests/integration/test_fence_integration.c - a deposed scheduler replica
 * binds nothing: the fence aborts its bindings once the Lease is lost.
 *
 * Two in-process scheduler replicas under Lease election, each with a
 * client certificate of its own (users replica-a and replica-b), against
 * the API emulator. Replica A leads and schedules a burst of pods whose
 * bindings the emulator slows down (for A only), so A has bindings queued
 * and in flight; then the emulator's fault rules make A's Lease requests
 * fail (500 "etcdserver: request timed out", or a stall), so A's renewal
 * fails and B takes over. From the emulator's request log: every binding
 * A sent arrived before A's last Lease write (its release, which the
 * elector sends only after the fence) and before B's first successful
 * Lease write. Every pod ends bound, by one replica or the other. A's
 * "stopped leading" Event reaches the server although its scheduler's
 * client is shut down (the elector records it through its own).
 *
 * No speed is asserted; waits use generous deadlines. The times measured
 * (loss to release, loss to the lost callback) are printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "kube/machinery/leader.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "kube/transport/config_testing.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "scheduler.h"
#include "scheduler_testing.h"
#include "unit/test_plugin_util.h"

#define WAIT_MS 60000
#define N_PODS 60
#define BIND_DELAY_MS 300
#define PODS "/api/v1/namespaces/default/pods"

static const char config_yaml[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                  "kind: KubeSchedulerConfiguration\n"
                                  "leaderElection:\n"
                                  "  leaderElect: true\n"
                                  "  leaseDuration: 3s\n"
                                  "  renewDeadline: 2s\n"
                                  "  retryPeriod: 500ms\n"
                                  "  resourceNamespace: default\n"
                                  "  resourceName: stickyvm-scheduler\n";

typedef struct replica {
    const char *user;
    kube_config *kc;
    kube_client *client, *leader_client;
    sched_config *cfg;
    sched_scheduler *s;
    atomic_int lost;
    _Atomic int64_t lost_ns; /* CLOCK_REALTIME when on_leadership_lost ran */
} replica;

typedef struct fixture {
    harness *h;
    replica a, b;
} fixture;

static int64_t realtime_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void on_lost(void *ud)
{
    replica *r = ud;

    atomic_store(&r->lost_ns, realtime_ns());
    atomic_store(&r->lost, 1);
}

static void start_replica(fixture *fx, replica *r, const char *user)
{
    static const char *const groups[] = {"system:masters"};
    const harness_identity *id = NULL;
    sched_scheduler_options so;
    kube_client_options o;
    kube_leader_config lc;
    char err[512] = "";

    r->user = user;
    assert_int_equal(harness_add_cert_user(fx->h, user, groups, 1, &id), KUBE_OK);
    assert_int_equal(kube_config_from_file(id->kubeconfig, &r->kc, err, sizeof(err)), KUBE_OK);
    if (tp_config_load(config_yaml, "fence.yaml", NULL, &r->cfg, err, sizeof(err)) != KUBE_OK)
        fail_msg("config: %s", err);
    kube_client_options_default(&o);
    o.qps = 0;
    assert_int_equal(kube_client_new(r->kc, &o, &r->client), KUBE_OK);
    kube_leader_config_default(&lc);
    lc.renew_deadline_ms = (long)r->cfg->leader_election.renew_deadline_ms;
    kube_leader_client_options(&lc, &o);
    assert_int_equal(kube_client_new(r->kc, &o, &r->leader_client), KUBE_OK);
    memset(&so, 0, sizeof(so));
    so.config = r->cfg;
    so.client = r->client;
    so.leader_client = r->leader_client;
    so.identity = user;
    so.binding_workers = 4;
    so.on_leadership_lost = on_lost;
    so.ud = r;
    if (sched_scheduler_new(&so, &r->s, err, sizeof(err)) != KUBE_OK)
        fail_msg("sched_scheduler_new: %s", err);
    assert_int_equal(sched_scheduler_start(r->s), KUBE_OK);
    assert_int_equal(sched_scheduler_wait_synced(r->s, WAIT_MS), KUBE_OK);
}

static void free_replica(replica *r)
{
    sched_scheduler_free(r->s);
    kube_client_free(r->leader_client);
    kube_client_free(r->client);
    kube_config_free(r->kc);
    sched_config_free(r->cfg);
}

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof(*fx));
    harness_opts o = HARNESS_OPTS_INIT;

    assert_non_null(fx);
    o.nodes = 4;
    assert_int_equal(harness_start(&o, &fx->h), KUBE_OK);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;

    free_replica(&fx->a);
    free_replica(&fx->b);
    harness_stop(fx->h);
    free(fx);
    return 0;
}

static int leads(replica *r)
{
    kube_leader *le = sched_scheduler_leader(r->s);
    return le && kube_leader_is_leader(le);
}

static void wait_until(int (*cond)(void *), void *ud, const char *what)
{
    WAIT_TRUE_MS_MSG(cond(ud), WAIT_MS, "timed out waiting for %s", what);
}

static int replica_leads(void *ud)
{
    return leads(ud);
}

static int replica_lost(void *ud)
{
    return atomic_load(&((replica *)ud)->lost);
}

/* The request log's items for verb, resource and user (caller deletes). */
static cJSON *requests(harness *h, const char *verb, const char *resource, const char *user)
{
    cJSON *items = NULL;

    assert_int_equal(harness_requests(h, verb, resource, user, &items), KUBE_OK);
    assert_true(cJSON_IsArray(items));
    return items;
}

static int64_t item_time(const cJSON *it)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(it, "timeNs");
    return cJSON_IsNumber(t) ? (int64_t)t->valuedouble : -1;
}

static int item_code(const cJSON *it)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(it, "code");
    return cJSON_IsNumber(c) ? c->valueint : 0;
}

typedef struct count_ctx {
    harness *h;
    const char *user;
    int want;
} count_ctx;

static int bindings_sent(void *ud)
{
    count_ctx *c = ud;
    cJSON *items = requests(c->h, "create", "pods/binding", c->user);
    int n = cJSON_GetArraySize(items);

    cJSON_Delete(items);
    return n >= c->want;
}

static int all_bound(void *ud)
{
    harness *h = ud;
    long status = 0;
    cJSON *list = NULL;
    const cJSON *p;
    int bound = 0;

    assert_int_equal(harness_request_json(h, NULL, "GET", PODS, NULL, &status, &list), KUBE_OK);
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(p, "spec"), "nodeName");
        bound += cJSON_IsString(n) && n->valuestring[0];
    }
    cJSON_Delete(list);
    return bound == N_PODS;
}

static void create_pods(harness *h)
{
    char json[512];

    for (int i = 0; i < N_PODS; i++) {
        snprintf(json, sizeof(json),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p-%d\"},"
                 "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"pause\",\"resources\":"
                 "{\"requests\":{\"cpu\":\"10m\"}}}]}}",
                 i);
        assert_int_equal(harness_create(h, PODS, json, NULL), KUBE_OK);
    }
}

/* The arrival of the last (for last) or first successful (else) Lease
 * write of user; -1 when none. */
static int64_t lease_write(harness *h, const char *user, int last)
{
    cJSON *items = requests(h, "update", "leases", user);
    const cJSON *it;
    int64_t t = -1;

    cJSON_ArrayForEach(it, items)
    {
        if (last) {
            t = item_time(it);
        } else if (item_code(it) == 200) {
            t = item_time(it);
            break;
        }
    }
    cJSON_Delete(items);
    return t;
}

/* Every binding user sent arrived before `before`; returns how many. */
static int assert_bindings_before(harness *h, const char *user, int64_t before, const char *what)
{
    cJSON *items = requests(h, "create", "pods/binding", user);
    const cJSON *it;
    int n = 0;

    cJSON_ArrayForEach(it, items)
    {
        int64_t t = item_time(it);
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
        if (t >= before)
            fail_msg("%s bound %s %.3f s after %s", user,
                     cJSON_IsString(name) ? name->valuestring : "?", (double)(t - before) / 1e9,
                     what);
        n++;
    }
    cJSON_Delete(items);
    return n;
}

/* replica-a's "stopped leading" Event on the Lease (the LeaseLock's
 * RecordEvent), which its elector records after the fence shut down the
 * scheduler's client. */
static int stopped_leading_recorded(void *ud)
{
    harness *h = ud;
    long status = 0;
    cJSON *list = NULL;
    const cJSON *ev;
    int found = 0;

    assert_int_equal(harness_request_json(h, NULL, "GET",
                                          "/apis/events.k8s.io/v1/namespaces/default/events", NULL,
                                          &status, &list),
                     KUBE_OK);
    assert_int_equal(status, 200);
    cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const cJSON *reg = cJSON_GetObjectItemCaseSensitive(ev, "regarding");
        const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(reg, "kind"));
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(reg, "name"));
        const char *note = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "note"));
        const char *reason = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "reason"));

        found |= kind && name && note && reason && !strcmp(kind, "Lease") &&
                 !strcmp(name, "stickyvm-scheduler") && !strcmp(reason, "LeaderElection") &&
                 !strcmp(note, "replica-a stopped leading");
    }
    cJSON_Delete(list);
    return found;
}

static const char *const replica_a[] = {"replica-a", NULL};
static const char *const creates[] = {"create", NULL};
static const char *const bindings[] = {"pods/binding", NULL};
static const char *const leases[] = {"leases", NULL};

/* The emulator answers replica-a's bindings BIND_DELAY_MS late. */
static harness_fault_rule slow_bindings(void)
{
    harness_fault_rule r = {HARNESS_FAULT_STATUS,
                            0,
                            0,
                            0,
                            BIND_DELAY_MS,
                            0,
                            0,
                            NULL,
                            creates,
                            bindings,
                            replica_a,
                            NULL};
    return r;
}

/* The scenario: A leads and binds slowly; lease makes A's Lease requests
 * fail; A must send no binding after its release, nor after B took over. */
static void deposed_replica_binds_nothing(fixture *fx, harness_fault_rule lease)
{
    harness_fault_rule rules[2] = {lease, slow_bindings()};
    count_ctx started = {fx->h, "replica-a", 4};
    int64_t release, takeover;
    int n;

    start_replica(fx, &fx->a, "replica-a");
    wait_until(replica_leads, &fx->a, "replica-a to lead");
    start_replica(fx, &fx->b, "replica-b");
    assert_int_equal(harness_set_fault_rules(fx->h, &rules[1], 1), KUBE_OK);
    create_pods(fx->h);
    wait_until(bindings_sent, &started, "replica-a's first bindings");
    assert_int_equal(harness_set_fault_rules(fx->h, rules, 2), KUBE_OK);
    wait_until(replica_lost, &fx->a, "replica-a to lose the Lease");
    assert_false(leads(&fx->a));
    wait_until(stopped_leading_recorded, fx->h, "replica-a's \"stopped leading\" Event");
    assert_int_equal(harness_clear_faults(fx->h), KUBE_OK);
    wait_until(replica_leads, &fx->b, "replica-b to take over");
    wait_until(all_bound, fx->h, "every pod bound");
    release = lease_write(fx->h, "replica-a", 1);
    takeover = lease_write(fx->h, "replica-b", 0);
    assert_true(release > 0);
    assert_true(takeover > 0);
    n = assert_bindings_before(fx->h, "replica-a", release, "its release");
    assert_bindings_before(fx->h, "replica-a", takeover, "replica-b took over");
    assert_true(n >= 4);
    fprintf(stderr,
            "replica-a sent %d bindings; its release arrived %.3f s before B took over; "
            "the lost callback ran %.3f s after the release arrived\n",
            n, (double)(takeover - release) / 1e9,
            (double)(atomic_load(&fx->a.lost_ns) - release) / 1e9);
}

/* kube-apiserver answers a storage timeout as 500 with etcd's text. */
static void deposed_on_lease_errors(void **state)
{
    harness_fault_rule r = {HARNESS_FAULT_STATUS,
                            0,
                            500,
                            0,
                            0,
                            0,
                            600000,
                            "etcdserver: request timed out",
                            NULL,
                            leases,
                            replica_a,
                            NULL};
    deposed_replica_binds_nothing(*state, r);
}

/* The Lease requests get no answer at all. */
static void deposed_on_lease_stall(void **state)
{
    harness_fault_rule r = {HARNESS_FAULT_STALL, 0,   0, 0, 0, 0, 600000, NULL, NULL, leases,
                            replica_a,           NULL};
    deposed_replica_binds_nothing(*state, r);
}

int test_group_fence_integration(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(deposed_on_lease_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(deposed_on_lease_stall, setup, teardown),
    };
    return cmocka_run_group_tests_name("fence_integration", tests, NULL, NULL);
}
