/*
 * tests/unit/test_leader.c - the pure decisions and wire shapes of
 * kube/machinery/leader.c, checked against client-go's rules and the recorded
 * kube-apiserver v1.23 Lease requests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/machinery/leader.h"
#include "kube/machinery/leader_testing.h"

static cJSON *load_fixture(const char *name)
{
    char path[512];
    char *text = NULL;
    cJSON *doc;

    snprintf(path, sizeof(path), "%s/%s", STICKYVM_FIXTURES_DIR, name);
    assert_int_equal(kube_read_file(path, &text, NULL), KUBE_OK);
    doc = cJSON_Parse(text);
    free(text);
    assert_non_null(doc);
    return doc;
}

static const cJSON *at(const cJSON *doc, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, a);

    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    assert_non_null(v);
    return v;
}

static void record_set(kube_leader_record *r, const char *holder, int64_t dur, const char *acquire,
                       const char *renew, int64_t transitions)
{
    memset(r, 0, sizeof(*r));
    kube_strlcpy(r->holder, holder, sizeof(r->holder));
    r->lease_duration_s = dur;
    kube_strlcpy(r->acquire_time, acquire, sizeof(r->acquire_time));
    kube_strlcpy(r->renew_time, renew, sizeof(r->renew_time));
    r->transitions = transitions;
}

static void decodes_recorded_lease(void **state)
{
    cJSON *fx = load_fixture("lease-update-renew-200.json");
    kube_leader_record r;

    (void)state;
    assert_int_equal(kube_leader_record_decode(at(fx, "body", NULL), &r), KUBE_OK);
    assert_string_equal(r.holder, "host-a_1234");
    assert_int_equal(r.lease_duration_s, 15);
    assert_string_equal(r.acquire_time, "2026-11-21T10:00:00.000000Z");
    assert_string_equal(r.renew_time, "2026-11-21T10:00:02.000000Z");
    assert_int_equal(r.transitions, 0);
    cJSON_Delete(fx);
}

static void create_body_matches_recorded_request(void **state)
{
    cJSON *fx = load_fixture("lease-create-201.json");
    kube_leader_record r;
    cJSON *body = NULL;

    (void)state;
    record_set(&r, "host-a_1234", 15, "2026-11-21T10:00:00.000000Z", "2026-11-21T10:00:00.000000Z",
               0);
    assert_int_equal(kube_leader_create_body("default", "stickyvm-scheduler-2", &r, &body),
                     KUBE_OK);
    assert_true(cJSON_Compare(body, at(fx, "request", "body"), 1));
    cJSON_Delete(body);
    cJSON_Delete(fx);
}

/* A renewal PUTs the object last written (resourceVersion 232 from the
 * create answer) with only renewTime moved, exactly as recorded. */
static void update_body_matches_recorded_renew(void **state)
{
    cJSON *created = load_fixture("lease-create-201.json");
    cJSON *renew = load_fixture("lease-update-renew-200.json");
    kube_leader_record old, next;
    cJSON *body = NULL;

    (void)state;
    assert_int_equal(kube_leader_record_decode(at(created, "body", NULL), &old), KUBE_OK);
    kube_leader_next_record(KUBE_LEADER_RENEW, &old, "host-a_1234", 15,
                            "2026-11-21T10:00:02.000000Z", &next);
    assert_int_equal(kube_leader_update_body(at(created, "body", NULL), &next, &body), KUBE_OK);
    assert_true(cJSON_Compare(body, at(renew, "request", "body"), 1));
    assert_string_equal(at(at(body, "metadata", NULL), "resourceVersion", NULL)->valuestring,
                        "232");
    cJSON_Delete(body);
    cJSON_Delete(created);
    cJSON_Delete(renew);
}

/* The losing write of the recorded race carries the stale version 232. */
static void stale_write_carries_read_version(void **state)
{
    cJSON *created = load_fixture("lease-create-201.json");
    cJSON *stale = load_fixture("lease-update-stale-409.json");
    kube_leader_record r;
    cJSON *body = NULL;

    (void)state;
    record_set(&r, "host-b_999", 15, "2026-11-21T10:00:00.000000Z", "2026-11-21T10:00:00.000000Z",
               0);
    assert_int_equal(kube_leader_update_body(at(created, "body", NULL), &r, &body), KUBE_OK);
    assert_true(cJSON_Compare(body, at(stale, "request", "body"), 1));
    assert_int_equal(at(stale, "status", NULL)->valueint, 409);
    assert_int_equal(kube_err_from_status(409, at(stale, "body", "reason")->valuestring),
                     KUBE_ECONFLICT);
    cJSON_Delete(body);
    cJSON_Delete(created);
    cJSON_Delete(stale);
}

static void waits_for_a_held_lease_by_our_clock(void **state)
{
    kube_leader_record r;

    (void)state;
    /* The remote renewTime is years old: irrelevant, we just saw it change. */
    record_set(&r, "other", 15, "2001-01-01T00:00:00.000000Z", "2001-01-01T00:00:00.000000Z", 3);
    assert_int_equal(kube_leader_decide(&r, 1000, 1000, "me"), KUBE_LEADER_WAIT);
    assert_int_equal(kube_leader_decide(&r, 1000, 15999, "me"), KUBE_LEADER_WAIT);
    assert_int_equal(kube_leader_decide(&r, 1000, 16000, "me"), KUBE_LEADER_TAKEOVER);
    /* A renewTime in the future does not keep it alive either. */
    record_set(&r, "other", 15, "2999-01-01T00:00:00.000000Z", "2999-01-01T00:00:00.000000Z", 3);
    assert_int_equal(kube_leader_decide(&r, 0, 15000, "me"), KUBE_LEADER_TAKEOVER);
}

/* The holder's leaseDurationSeconds counts, not ours (client-go's
 * isLeaseValid). */
static void uses_the_record_lease_duration(void **state)
{
    kube_leader_record r;

    (void)state;
    record_set(&r, "other", 60, "", "", 0);
    assert_int_equal(kube_leader_decide(&r, 0, 59999, "me"), KUBE_LEADER_WAIT);
    assert_int_equal(kube_leader_decide(&r, 0, 60000, "me"), KUBE_LEADER_TAKEOVER);
    assert_true(kube_leader_lease_valid(&r, 0, 59999));
    assert_false(kube_leader_lease_valid(&r, 0, 60000));
}

static void takes_a_released_lease_at_once(void **state)
{
    kube_leader_record held, released;

    (void)state;
    record_set(&held, "other", 15, "2026-11-21T10:00:00.000000Z", "2026-11-21T10:00:04.000000Z", 2);
    kube_leader_release_record(&held, "2026-11-21T10:00:05.000000Z", &released);
    assert_string_equal(released.holder, "");
    assert_int_equal(released.lease_duration_s, 1);
    assert_string_equal(released.acquire_time, "2026-11-21T10:00:05.000000Z");
    assert_string_equal(released.renew_time, "2026-11-21T10:00:05.000000Z");
    assert_int_equal(released.transitions, 2);
    assert_int_equal(kube_leader_decide(&released, 5000, 5000, "me"), KUBE_LEADER_TAKEOVER);
}

static void release_writes_an_empty_holder(void **state)
{
    kube_leader_record held, released;
    cJSON *created = load_fixture("lease-create-201.json");
    cJSON *body = NULL;
    const cJSON *spec;

    (void)state;
    record_set(&held, "host-a_1234", 15, "2026-11-21T10:00:00.000000Z",
               "2026-11-21T10:00:00.000000Z", 0);
    kube_leader_release_record(&held, "2026-11-21T10:00:07.123456Z", &released);
    assert_int_equal(kube_leader_update_body(at(created, "body", NULL), &released, &body), KUBE_OK);
    spec = at(body, "spec", NULL);
    assert_true(cJSON_IsString(at(spec, "holderIdentity", NULL)));
    assert_string_equal(at(spec, "holderIdentity", NULL)->valuestring, "");
    assert_int_equal(at(spec, "leaseDurationSeconds", NULL)->valueint, 1);
    assert_string_equal(at(spec, "renewTime", NULL)->valuestring, "2026-11-21T10:00:07.123456Z");
    assert_string_equal(at(spec, "acquireTime", NULL)->valuestring, "2026-11-21T10:00:07.123456Z");
    cJSON_Delete(body);
    cJSON_Delete(created);
}

static void renews_its_own_lease_even_if_expired(void **state)
{
    kube_leader_record r, next;

    (void)state;
    record_set(&r, "me", 15, "2026-11-21T10:00:00.000000Z", "2026-11-21T10:00:02.000000Z", 4);
    assert_int_equal(kube_leader_decide(&r, 0, 1, "me"), KUBE_LEADER_RENEW);
    assert_int_equal(kube_leader_decide(&r, 0, 100000, "me"), KUBE_LEADER_RENEW);
    kube_leader_next_record(KUBE_LEADER_RENEW, &r, "me", 15, "2026-11-21T10:00:04.000001Z", &next);
    assert_string_equal(next.holder, "me");
    assert_string_equal(next.acquire_time, "2026-11-21T10:00:00.000000Z");
    assert_string_equal(next.renew_time, "2026-11-21T10:00:04.000001Z");
    assert_int_equal(next.transitions, 4);
}

static void takeover_counts_a_transition(void **state)
{
    kube_leader_record r, next;

    (void)state;
    record_set(&r, "other", 15, "2026-11-21T10:00:00.000000Z", "2026-11-21T10:00:02.000000Z", 4);
    kube_leader_next_record(KUBE_LEADER_TAKEOVER, &r, "me", 20, "2026-11-21T10:01:00.000000Z",
                            &next);
    assert_string_equal(next.holder, "me");
    assert_int_equal(next.lease_duration_s, 20);
    assert_string_equal(next.acquire_time, "2026-11-21T10:01:00.000000Z");
    assert_string_equal(next.renew_time, "2026-11-21T10:01:00.000000Z");
    assert_int_equal(next.transitions, 5);
}

/* A renewal within the same second is a change (client-go's whole-second
 * comparison would miss it). */
static void detects_sub_second_renewals(void **state)
{
    kube_leader_record a, b;

    (void)state;
    record_set(&a, "x", 15, "2026-11-21T10:00:00.000000Z", "2026-11-21T10:00:02.100000Z", 0);
    b = a;
    assert_true(kube_leader_record_equal(&a, &b));
    kube_strlcpy(b.renew_time, "2026-11-21T10:00:02.600000Z", sizeof(b.renew_time));
    assert_false(kube_leader_record_equal(&a, &b));
    b = a;
    b.transitions = 1;
    assert_false(kube_leader_record_equal(&a, &b));
}

static void decode_rejects_bad_shapes(void **state)
{
    kube_leader_record r;
    cJSON *doc;
    char longname[400];

    (void)state;
    doc = cJSON_Parse("[]");
    assert_int_equal(kube_leader_record_decode(doc, &r), KUBE_EPARSE);
    cJSON_Delete(doc);
    doc = cJSON_Parse("{\"spec\":{\"holderIdentity\":7}}");
    assert_int_equal(kube_leader_record_decode(doc, &r), KUBE_EPARSE);
    cJSON_Delete(doc);
    doc = cJSON_Parse("{\"spec\":{\"leaseDurationSeconds\":\"15\"}}");
    assert_int_equal(kube_leader_record_decode(doc, &r), KUBE_EPARSE);
    cJSON_Delete(doc);
    doc = cJSON_Parse("{\"spec\":\"x\"}");
    assert_int_equal(kube_leader_record_decode(doc, &r), KUBE_EPARSE);
    cJSON_Delete(doc);
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    doc = cJSON_CreateObject();
    cJSON_AddStringToObject(cJSON_AddObjectToObject(doc, "spec"), "holderIdentity", longname);
    assert_int_equal(kube_leader_record_decode(doc, &r), KUBE_ERANGE);
    cJSON_Delete(doc);
    /* A Lease without spec (or with nulls) reads as free. */
    doc = cJSON_Parse("{\"metadata\":{\"name\":\"l\"},\"spec\":{\"holderIdentity\":null}}");
    assert_int_equal(kube_leader_record_decode(doc, &r), KUBE_OK);
    assert_string_equal(r.holder, "");
    assert_int_equal(r.lease_duration_s, 0);
    assert_int_equal(kube_leader_decide(&r, 0, 0, "me"), KUBE_LEADER_TAKEOVER);
    cJSON_Delete(doc);
}

static void default_identity_is_hostname_uuid(void **state)
{
    char host[256], a[128], b[128];
    size_t hl;
    const char *u;

    (void)state;
    assert_int_equal(gethostname(host, sizeof(host)), 0);
    hl = strlen(host);
    assert_int_equal(kube_leader_default_identity(a, sizeof(a)), KUBE_OK);
    assert_int_equal(kube_leader_default_identity(b, sizeof(b)), KUBE_OK);
    assert_string_not_equal(a, b);
    assert_memory_equal(a, host, hl);
    assert_int_equal(a[hl], '_');
    u = a + hl + 1;
    assert_int_equal(strlen(u), 36);
    assert_int_equal(u[8], '-');
    assert_int_equal(u[14], '4');
    assert_true(strchr("89ab", u[19]) != NULL);
    assert_int_equal(kube_leader_default_identity(a, hl + 5), KUBE_ERANGE);
}

static void nop_started(void *ud)
{
    (void)ud;
}

static void nop_stopped(void *ud, int lost)
{
    (void)ud;
    (void)lost;
}

/* NewLeaderElector's checks. The client is never used before start, so a
 * dummy pointer stands in for it. */
static void validates_config(void **state)
{
    static char dummy;
    kube_client *client = (kube_client *)(void *)&dummy;
    kube_leader_callbacks cb = {nop_started, nop_stopped, NULL, NULL, NULL};
    kube_leader_config c;
    kube_leader *le = NULL;

    (void)state;
    kube_leader_config_default(&c);
    assert_int_equal(c.lease_duration_ms, 15000);
    assert_int_equal(c.renew_deadline_ms, 10000);
    assert_int_equal(c.retry_period_ms, 2000);
    assert_int_equal(kube_leader_new(client, &c, &cb, &le), KUBE_EINVAL); /* no name */
    c.namespace_ = "kube-system";
    c.name = "stickyvm-scheduler";
    c.identity = "me";
    c.renew_deadline_ms = 15000;
    assert_int_equal(kube_leader_new(client, &c, &cb, &le), KUBE_EINVAL);
    c.renew_deadline_ms = 2400; /* not > 1.2 * 2000 */
    assert_int_equal(kube_leader_new(client, &c, &cb, &le), KUBE_EINVAL);
    c.renew_deadline_ms = 10000;
    cb.on_stopped_leading = NULL;
    assert_int_equal(kube_leader_new(client, &c, &cb, &le), KUBE_EINVAL);
    cb.on_stopped_leading = nop_stopped;
    assert_int_equal(kube_leader_new(client, &c, &cb, &le), KUBE_OK);
    assert_string_equal(kube_leader_identity(le), "me");
    assert_false(kube_leader_is_leader(le));
    kube_leader_free(le);
    c.identity = NULL;
    assert_int_equal(kube_leader_new(client, &c, &cb, &le), KUBE_OK);
    assert_non_null(strchr(kube_leader_identity(le), '_'));
    kube_leader_free(le);
}

/* NewFromKubeconfig: requests time out at half the renew deadline, >= 1 s. */
static void client_options_bound_requests(void **state)
{
    kube_leader_config c;
    kube_client_options o;

    (void)state;
    kube_leader_config_default(&c);
    kube_client_options_default(&o);
    kube_leader_client_options(&c, &o);
    assert_int_equal(o.timeout_ms, 5000);
    assert_int_equal(o.max_retries, 0);
    c.renew_deadline_ms = 1500;
    kube_leader_client_options(&c, &o);
    assert_int_equal(o.timeout_ms, 1000);
}

int test_group_leader(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decodes_recorded_lease),
        cmocka_unit_test(create_body_matches_recorded_request),
        cmocka_unit_test(update_body_matches_recorded_renew),
        cmocka_unit_test(stale_write_carries_read_version),
        cmocka_unit_test(waits_for_a_held_lease_by_our_clock),
        cmocka_unit_test(uses_the_record_lease_duration),
        cmocka_unit_test(takes_a_released_lease_at_once),
        cmocka_unit_test(release_writes_an_empty_holder),
        cmocka_unit_test(renews_its_own_lease_even_if_expired),
        cmocka_unit_test(takeover_counts_a_transition),
        cmocka_unit_test(detects_sub_second_renewals),
        cmocka_unit_test(decode_rejects_bad_shapes),
        cmocka_unit_test(default_identity_is_hostname_uuid),
        cmocka_unit_test(validates_config),
        cmocka_unit_test(client_options_bound_requests),
    };
    return cmocka_run_group_tests_name("leader", tests, NULL, NULL);
}
