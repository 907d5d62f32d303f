/*
 * tests/integration/test_leader_integration.c - two electors on one Lease
 * in the API emulator.
 *
 * A watcher thread samples both electors' kube_leader_is_leader()
 * continuously; the tests fail if it ever sees two leaders. (The callbacks
 * are not compared: as in client-go, on_stopped_leading runs after the
 * release write, so a successor may start before it; is_leader() drops
 * before that write.)
 *
 * A holder "killed without release" is an elector with release_on_cancel 0
 * stopped with kube_leader_stop(): its thread ends without another write,
 * which is what a crash looks like from the Lease (no test-only hook is
 * needed).
 *
 * The end of leadership runs in a fixed order, checked with callbacks
 * that look at the server's Lease: on_fence (flag down, Lease still ours),
 * the release, on_stopped_leading.
 *
 * No speed is asserted: waits use generous deadlines. The one time bound
 * checked is a lower one (a candidate must not take over an abandoned
 * Lease before it expires), which slowness cannot break.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "kube/transport/api.h"
#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/util/clock.h"
#include "kube/transport/config.h"
#include "kube/transport/config_testing.h"
#include "kube/util/errors.h"
#include "kube/machinery/leader.h"
#include "kube/machinery/leader_testing.h"
#include "kube/machinery/recorder.h"

#define NS "default"
#define LEASE "stickyvm-scheduler"
#define WAIT_MS 30000

typedef struct candidate {
    _Atomic(kube_leader *) le; /* the watcher reads it while tests set it */
    atomic_int started;        /* on_started_leading calls */
    atomic_int stopped;        /* on_stopped_leading calls */
    atomic_int lost;           /* last lost argument */
    atomic_int new_leaders;    /* on_new_leader calls */
} candidate;

typedef struct fixture {
    harness *h;
    kube_config *cfg;
    kube_client *client;
    candidate a, b;
    kube_recorder *rec; /* optional, given to electors started after it is set */
    pthread_t watcher;
    atomic_int watching;
    atomic_int both_seen; /* two leaders at once, ever */
} fixture;

static void on_started(void *ud)
{
    candidate *c = ud;

    atomic_fetch_add(&c->started, 1);
}

static void on_stopped(void *ud, int lost)
{
    candidate *c = ud;

    atomic_store(&c->lost, lost);
    atomic_fetch_add(&c->stopped, 1);
}

static void on_new_leader(void *ud, const char *identity)
{
    candidate *c = ud;

    (void)identity;
    atomic_fetch_add(&c->new_leaders, 1);
}

static int is_leader(candidate *c)
{
    kube_leader *le = atomic_load(&c->le);

    return le && kube_leader_is_leader(le);
}

/* Samples a, b, a (and b, a, b): two leaders only when the middle sample
 * falls inside the other's unbroken leadership, so a descheduled watcher
 * cannot mistake a hand-over for an overlap (an elector never leads again
 * once it stopped). */
static void *watch_main(void *arg)
{
    fixture *fx = arg;

    while (atomic_load(&fx->watching)) {
        int a1 = is_leader(&fx->a), b1 = is_leader(&fx->b);
        int a2 = is_leader(&fx->a), b2 = is_leader(&fx->b);

        if ((a1 && b1 && a2) || (b1 && a2 && b2))
            atomic_store(&fx->both_seen, 1);
        usleep(200);
    }
    return NULL;
}

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof(*fx));
    kube_leader_config lc;
    kube_client_options o;
    char err[256];

    assert_non_null(fx);
    assert_int_equal(harness_start(NULL, &fx->h), KUBE_OK);
    assert_int_equal(kube_config_from_file(harness_kubeconfig(fx->h), &fx->cfg, err, sizeof(err)),
                     KUBE_OK);
    kube_leader_config_default(&lc);
    lc.renew_deadline_ms = 2000;
    kube_client_options_default(&o);
    kube_leader_client_options(&lc, &o);
    assert_int_equal(kube_client_new(fx->cfg, &o, &fx->client), KUBE_OK);
    *state = fx;
    return 0;
}

static void stop_candidate(candidate *c)
{
    kube_leader_free(atomic_exchange(&c->le, NULL));
}

static int teardown(void **state)
{
    fixture *fx = *state;

    if (atomic_load(&fx->watching)) {
        atomic_store(&fx->watching, 0);
        pthread_join(fx->watcher, NULL);
    }
    stop_candidate(&fx->a);
    stop_candidate(&fx->b);
    kube_recorder_free(fx->rec);
    kube_client_free(fx->client);
    kube_config_free(fx->cfg);
    harness_stop(fx->h);
    free(fx);
    return 0;
}

static void start_candidate(fixture *fx, candidate *c, const char *identity, long lease_ms,
                            long renew_ms, int release)
{
    kube_leader_config cfg;
    kube_leader_callbacks cb = {on_started, on_stopped, on_new_leader, c, NULL};
    kube_leader *le = NULL;

    kube_leader_config_default(&cfg);
    cfg.namespace_ = NS;
    cfg.name = LEASE;
    cfg.identity = identity;
    cfg.lease_duration_ms = lease_ms;
    cfg.renew_deadline_ms = renew_ms;
    cfg.retry_period_ms = 300;
    cfg.release_on_cancel = release;
    cfg.recorder = fx->rec;
    assert_int_equal(kube_leader_new(fx->client, &cfg, &cb, &le), KUBE_OK);
    atomic_store(&c->le, le);
    assert_int_equal(kube_leader_start(le), KUBE_OK);
}

static void start_watching(fixture *fx)
{
    atomic_store(&fx->watching, 1);
    assert_int_equal(pthread_create(&fx->watcher, NULL, watch_main, fx), 0);
}

/* Waits until exactly one candidate leads; returns it. */
static candidate *wait_one_leader(fixture *fx)
{
    int a = 0, b = 0;

    WAIT_TRUE_MS_MSG((a = is_leader(&fx->a), b = is_leader(&fx->b), a != b), WAIT_MS,
                     "no single leader within %d ms", WAIT_MS);
    return a ? &fx->a : &fx->b;
}

static void wait_leader(candidate *c)
{
    WAIT_TRUE_MS(is_leader(c), WAIT_MS);
}

static void wait_until_leading(kube_leader *le)
{
    WAIT_TRUE_MS(kube_leader_is_leader(le), WAIT_MS);
}

/* The Lease as the server holds it. */
static void read_lease(fixture *fx, kube_leader_record *rec)
{
    cJSON *lease = NULL;
    kube_status st;

    assert_int_equal(kube_api_get(fx->client, &KUBE_RES_LEASES, NS, LEASE, &lease, &st), KUBE_OK);
    assert_int_equal(kube_leader_record_decode(lease, rec), KUBE_OK);
    cJSON_Delete(lease);
}

static void one_leader_and_release_hands_over(void **state)
{
    fixture *fx = *state;
    candidate *leader, *other;
    kube_leader_record rec;
    char holder[KUBE_LEADER_HOLDER_MAX];

    /* A long lease: only a release lets the other in within the wait. */
    start_watching(fx);
    start_candidate(fx, &fx->a, "host-a_1", 60000, 40000, 1);
    start_candidate(fx, &fx->b, "host-b_2", 60000, 40000, 1);
    leader = wait_one_leader(fx);
    other = leader == &fx->a ? &fx->b : &fx->a;
    read_lease(fx, &rec);
    assert_string_equal(rec.holder, kube_leader_identity(leader->le));
    assert_int_equal(rec.lease_duration_s, 60);
    assert_int_equal(rec.transitions, 0);
    assert_int_equal(strlen(rec.renew_time), strlen("2026-11-21T10:00:00.000000Z"));
    /* The follower saw who leads (on_new_leader runs after the record
     * get_leader reads is set). */
    WAIT_TRUE(kube_leader_get_leader(other->le, holder, sizeof(holder)) == KUBE_OK &&
              strcmp(holder, kube_leader_identity(leader->le)) == 0);
    WAIT_TRUE(atomic_load(&other->new_leaders) >= 1);
    assert_int_equal(atomic_load(&other->started), 0);

    kube_leader_stop(leader->le);
    assert_int_equal(atomic_load(&leader->stopped), 1);
    assert_int_equal(atomic_load(&leader->lost), 0);
    assert_false(is_leader(leader));
    wait_leader(other);
    read_lease(fx, &rec);
    assert_string_equal(rec.holder, kube_leader_identity(other->le));
    assert_int_equal(rec.transitions, 1);
    assert_int_equal(rec.lease_duration_s, 60);
    assert_false(atomic_load(&fx->both_seen));
}

/* MicroTime text to Unix milliseconds. */
static int64_t micro_ms(const char *t)
{
    struct tm tm;
    int us = 0;

    memset(&tm, 0, sizeof(tm));
    assert_int_equal(sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d.%6dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                            &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &us),
                     7);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (int64_t)timegm(&tm) * 1000 + us / 1000;
}

static void abandoned_lease_is_taken_after_it_expires(void **state)
{
    fixture *fx = *state;
    candidate *leader, *other;
    kube_leader_record last, taken;

    start_watching(fx);
    start_candidate(fx, &fx->a, "host-a_1", 3000, 2000, 0);
    start_candidate(fx, &fx->b, "host-b_2", 3000, 2000, 0);
    leader = wait_one_leader(fx);
    other = leader == &fx->a ? &fx->b : &fx->a;
    kube_leader_stop(leader->le); /* no release: as if killed */
    assert_int_equal(atomic_load(&leader->stopped), 1);
    read_lease(fx, &last);
    assert_string_equal(last.holder, kube_leader_identity(leader->le));
    wait_leader(other);
    read_lease(fx, &taken);
    assert_string_equal(taken.holder, kube_leader_identity(other->le));
    assert_int_equal(taken.transitions, last.transitions + 1);
    assert_string_not_equal(taken.acquire_time, last.acquire_time);
    /* Everything runs on one machine, so the stamps share a clock: the
     * takeover came a full lease duration after the holder's last renewal
     * (a lower bound; a slow machine only makes it larger). */
    assert_true(micro_ms(taken.acquire_time) - micro_ms(last.renew_time) >= 2950);
    assert_false(atomic_load(&fx->both_seen));
    /* is_leader() turns true before on_started_leading runs */
    WAIT_TRUE(atomic_load(&other->started) == 1);
}

/* When the server refuses every Lease write, the leader gives up after the
 * renew deadline (on_stopped_leading with lost = 1) and nobody leads until
 * the faults clear and the Lease has expired. */
static void leader_steps_down_when_it_cannot_renew(void **state)
{
    fixture *fx = *state;
    const char *verbs[] = {"update", "get", "create", NULL};
    const char *resources[] = {"leases", NULL};
    harness_faults f = {1.0, 503, 0, 0, verbs, resources};
    candidate *leader, *other;

    start_watching(fx);
    start_candidate(fx, &fx->a, "host-a_1", 3000, 2000, 1);
    start_candidate(fx, &fx->b, "host-b_2", 3000, 2000, 1);
    leader = wait_one_leader(fx);
    other = leader == &fx->a ? &fx->b : &fx->a;
    assert_int_equal(harness_set_faults(fx->h, &f), KUBE_OK);
    WAIT_TRUE_MS(atomic_load(&leader->stopped) != 0, WAIT_MS);
    assert_int_equal(atomic_load(&leader->stopped), 1);
    assert_int_equal(atomic_load(&leader->lost), 1);
    assert_false(is_leader(leader));
    assert_false(is_leader(other));
    assert_int_equal(harness_clear_faults(fx->h), KUBE_OK);
    wait_leader(other);
    /* The loser never comes back: kube-scheduler exits at this point. */
    assert_false(is_leader(leader));
    assert_int_equal(atomic_load(&leader->started), 1);
    assert_false(atomic_load(&fx->both_seen));
}

/* Like the LeaseLock's RecordEvent: "<identity> became leader" and
 * "<identity> stopped leading" on the Lease. */
static void records_leader_events_on_the_lease(void **state)
{
    fixture *fx = *state;
    kube_recorder_options o;
    cJSON *list = NULL, *lease = NULL;
    const cJSON *ev;
    kube_status st;
    long status = 0;
    int became = 0, stopped = 0;

    kube_recorder_options_default(&o);
    assert_int_equal(kube_recorder_new(fx->client, &o, &fx->rec), KUBE_OK);
    start_candidate(fx, &fx->a, "host-a_1", 3000, 2000, 1);
    wait_leader(&fx->a);
    kube_leader_stop(atomic_load(&fx->a.le));
    kube_recorder_stop(fx->rec, WAIT_MS);
    assert_int_equal(kube_api_get(fx->client, &KUBE_RES_LEASES, NS, LEASE, &lease, &st), KUBE_OK);
    assert_int_equal(harness_request_json(fx->h, NULL, "GET",
                                          "/apis/events.k8s.io/v1/namespaces/" NS "/events", NULL,
                                          &status, &list),
                     KUBE_OK);
    assert_int_equal(status, 200);
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(list, "items"))
    {
        const cJSON *reg = cJSON_GetObjectItem(ev, "regarding");
        const char *note = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "note"));

        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(reg, "kind")), "Lease");
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(reg, "name")), LEASE);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(reg, "uid")),
                            cJSON_GetStringValue(cJSON_GetObjectItem(
                                cJSON_GetObjectItem(lease, "metadata"), "uid")));
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ev, "reason")),
                            "LeaderElection");
        became += strcmp(note, "host-a_1 became leader") == 0;
        stopped += strcmp(note, "host-a_1 stopped leading") == 0;
    }
    assert_int_equal(became, 1);
    assert_int_equal(stopped, 1);
    cJSON_Delete(list);
    cJSON_Delete(lease);
}

/* ---- the end of leadership: fence, release, stopped -------------------- */

typedef struct ordered {
    fixture *fx;
    _Atomic(kube_leader *) le;
    atomic_int step; /* 1 once on_fence ran, 2 once on_stopped_leading ran */
    int fence_lost, fence_leader, stopped_lost, stopped_after_fence;
    int stopped_event; /* "stopped leading" on the server during on_stopped_leading */
    char fence_holder[KUBE_LEADER_HOLDER_MAX];   /* on the server, during on_fence */
    char stopped_holder[KUBE_LEADER_HOLDER_MAX]; /* during on_stopped_leading */
} ordered;

/* The holder the server has, or "?" (no asserts: an elector callback). */
static void server_holder(fixture *fx, char *out, size_t n)
{
    kube_leader_record rec;
    cJSON *lease = NULL;
    kube_status st;

    snprintf(out, n, "?");
    if (kube_api_get(fx->client, &KUBE_RES_LEASES, NS, LEASE, &lease, &st) == KUBE_OK &&
        kube_leader_record_decode(lease, &rec) == KUBE_OK)
        snprintf(out, n, "%s", rec.holder);
    cJSON_Delete(lease);
}

/* 1 when the server has an event with that note (no asserts: an elector
 * callback). */
static int server_has_note(fixture *fx, const char *note)
{
    cJSON *list = NULL;
    const cJSON *ev;
    long status = 0;
    int found = 0;

    if (harness_request_json(fx->h, NULL, "GET", "/apis/events.k8s.io/v1/namespaces/" NS "/events",
                             NULL, &status, &list) != KUBE_OK)
        return 0;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(list, "items"))
    {
        const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "note"));
        found |= n && strcmp(n, note) == 0;
    }
    cJSON_Delete(list);
    return found;
}

static void ord_started(void *ud)
{
    (void)ud;
}

static void ord_fence(void *ud, int lost)
{
    ordered *o = ud;

    o->fence_lost = lost;
    o->fence_leader = kube_leader_is_leader(atomic_load(&o->le));
    server_holder(o->fx, o->fence_holder, sizeof(o->fence_holder));
    atomic_store(&o->step, 1);
}

static void ord_stopped(void *ud, int lost)
{
    ordered *o = ud;

    o->stopped_event = server_has_note(o->fx, "host-o_1 stopped leading");
    o->stopped_lost = lost;
    o->stopped_after_fence = atomic_load(&o->step) == 1;
    server_holder(o->fx, o->stopped_holder, sizeof(o->stopped_holder));
    atomic_store(&o->step, 2);
}

static void start_ordered(fixture *fx, ordered *o)
{
    kube_leader_config cfg;
    kube_leader_callbacks cb = {ord_started, ord_stopped, NULL, o, ord_fence};
    kube_leader *le = NULL;

    memset(o, 0, sizeof(*o));
    o->fx = fx;
    kube_leader_config_default(&cfg);
    cfg.namespace_ = NS;
    cfg.name = LEASE;
    cfg.identity = "host-o_1";
    cfg.lease_duration_ms = 3000;
    cfg.renew_deadline_ms = 2000;
    cfg.retry_period_ms = 300;
    cfg.release_on_cancel = 1;
    cfg.recorder = fx->rec;
    assert_int_equal(kube_leader_new(fx->client, &cfg, &cb, &le), KUBE_OK);
    atomic_store(&o->le, le);
    assert_int_equal(kube_leader_start(le), KUBE_OK);
    wait_until_leading(le);
}

/* A stop: on_fence runs with the leading flag down and the Lease still
 * ours, then the release, then on_stopped_leading. */
static void fence_then_release_then_stopped_on_stop(void **state)
{
    fixture *fx = *state;
    ordered o;

    start_ordered(fx, &o);
    kube_leader_stop(atomic_load(&o.le));
    assert_int_equal(atomic_load(&o.step), 2);
    assert_int_equal(o.fence_lost, 0);
    assert_false(o.fence_leader);
    assert_string_equal(o.fence_holder, "host-o_1");
    assert_true(o.stopped_after_fence);
    assert_int_equal(o.stopped_lost, 0);
    assert_string_equal(o.stopped_holder, "");
    kube_leader_free(atomic_load(&o.le));
}

/* A lost Lease: on_fence(lost = 1) with the flag down, before
 * on_stopped_leading(lost = 1), by which time the "stopped leading" event
 * was written (the holder exits then). */
static void fence_runs_before_stopped_when_lost(void **state)
{
    fixture *fx = *state;
    static const char *const verbs[] = {"update", "get", "create", NULL};
    static const char *const leases[] = {"leases", NULL};
    static const char *const creates[] = {"create", NULL};
    static const char *const events[] = {"events", NULL};
    /* every Lease request refused; events written 300 ms late (a slow
     * link): only a wait for it puts the event before on_stopped_leading */
    const harness_fault_rule rules[] = {
        {.action = HARNESS_FAULT_STATUS,
         .error_rate = 1.0,
         .error_code = 503,
         .verbs = verbs,
         .resources = leases},
        {.action = HARNESS_FAULT_STATUS, .delay_ms = 300, .verbs = creates, .resources = events},
    };
    ordered o;

    assert_int_equal(kube_recorder_new(fx->client, NULL, &fx->rec), KUBE_OK);
    start_ordered(fx, &o);
    assert_int_equal(harness_set_fault_rules(fx->h, rules, 2), KUBE_OK);
    WAIT_TRUE_MS(atomic_load(&o.step) >= 2, WAIT_MS);
    assert_int_equal(atomic_load(&o.step), 2);
    assert_int_equal(o.fence_lost, 1);
    assert_false(o.fence_leader);
    assert_true(o.stopped_after_fence);
    assert_int_equal(o.stopped_lost, 1);
    assert_true(o.stopped_event);
    kube_leader_free(atomic_load(&o.le));
}

int test_group_leader_integration(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(one_leader_and_release_hands_over, setup, teardown),
        cmocka_unit_test_setup_teardown(abandoned_lease_is_taken_after_it_expires, setup, teardown),
        cmocka_unit_test_setup_teardown(leader_steps_down_when_it_cannot_renew, setup, teardown),
        cmocka_unit_test_setup_teardown(records_leader_events_on_the_lease, setup, teardown),
        cmocka_unit_test_setup_teardown(fence_then_release_then_stopped_on_stop, setup, teardown),
        cmocka_unit_test_setup_teardown(fence_runs_before_stopped_when_lost, setup, teardown),
    };
    return cmocka_run_group_tests_name("leader_integration", tests, NULL, NULL);
}
