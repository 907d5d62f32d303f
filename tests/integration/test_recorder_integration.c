/*
 * tests/integration/test_recorder_integration.c - the events.k8s.io/v1
 * recorder against the API emulator: events are created, repeats become
 * one event with an EventSeries whose count is visible through GET, the
 * heartbeat and stop send unsent counts, a series whose event vanished is
 * re-created, a server rejection is not retried, a burst widens the window
 * of creates in flight, and events take none of the client's rate-limit
 * tokens.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/util/clock.h"
#include "kube/transport/config.h"
#include "kube/transport/config_testing.h"
#include "kube/util/errors.h"
#include "kube/machinery/recorder_testing.h"

#define EVENTS "/apis/events.k8s.io/v1/namespaces/default/events"
#define WAIT_MS 20000

typedef struct fixture {
    harness *h;
    kube_config *cfg;
    kube_client *client;
    kube_recorder *r;
} fixture;

static const kube_recorder_ref pod = {
    .kind = "Pod",
    .api_version = "v1",
    .namespace_ = "default",
    .name = "virt-launcher-vm-a-abcde",
    .uid = "63ec8fc2-bedd-4af0-9b77-53b5010ab02a",
};

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof(*fx));
    kube_client_options o;
    char err[256];

    assert_non_null(fx);
    assert_int_equal(harness_start(NULL, &fx->h), KUBE_OK);
    assert_int_equal(kube_config_from_file(harness_kubeconfig(fx->h), &fx->cfg, err, sizeof(err)),
                     KUBE_OK);
    kube_client_options_default(&o);
    o.max_retries = 0;
    assert_int_equal(kube_client_new(fx->cfg, &o, &fx->client), KUBE_OK);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;

    kube_recorder_free(fx->r);
    kube_client_free(fx->client);
    kube_config_free(fx->cfg);
    harness_stop(fx->h);
    free(fx);
    return 0;
}

static void start_recorder(fixture *fx, long heartbeat_ms)
{
    kube_recorder_options o;

    kube_recorder_options_default(&o);
    o.reporting_instance = "stickyvm-scheduler-test";
    o.series_heartbeat_ms = heartbeat_ms;
    o.retry_sleep_ms = 100;
    assert_int_equal(kube_recorder_new(fx->client, &o, &fx->r), KUBE_OK);
}

static int scheduled(fixture *fx, const char *node)
{
    return kube_recorder_eventf(fx->r, &pod, NULL, KUBE_RECORDER_NORMAL, "Scheduled", "Binding",
                                "Successfully assigned %s/%s to %s", pod.namespace_, pod.name,
                                node);
}

/* The events in the namespace; caller frees. */
static cJSON *list_events(fixture *fx)
{
    long status = 0;
    cJSON *list = NULL;

    assert_int_equal(harness_request_json(fx->h, NULL, "GET", EVENTS, NULL, &status, &list),
                     KUBE_OK);
    assert_int_equal(status, 200);
    assert_non_null(list);
    return list;
}

static const cJSON *items(const cJSON *list)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(list, "items");

    assert_true(cJSON_IsArray(it));
    return it;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

/* Waits until the recorder has written everything queued, then lists
 * the events and checks there are n; caller frees. */
static cJSON *flushed_events(fixture *fx, int n)
{
    cJSON *list;

    assert_int_equal(kube_recorder_flush(fx->r, WAIT_MS), KUBE_OK);
    list = list_events(fx);
    assert_int_equal(cJSON_GetArraySize(items(list)), n);
    return list;
}

static int64_t series_count(const cJSON *ev)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(ev, "series");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(s, "count");

    return cJSON_IsNumber(c) ? (int64_t)c->valuedouble : 0;
}

/* The series count of the only event now, -1 while there is none (fails
 * the test if there are more). */
static int64_t single_count(fixture *fx)
{
    cJSON *list = list_events(fx);
    int n = cJSON_GetArraySize(items(list));
    int64_t got = -1;

    assert_true(n <= 1);
    if (n == 1)
        got = series_count(cJSON_GetArrayItem(items(list), 0));
    cJSON_Delete(list);
    return got;
}

static void creates_then_aggregates_into_a_series(void **state)
{
    fixture *fx = *state;
    kube_recorder_stats st;
    cJSON *list;
    const cJSON *ev, *reg;
    char name[256];

    start_recorder(fx, 30000);
    assert_int_equal(scheduled(fx, "node-1"), KUBE_OK);
    list = flushed_events(fx, 1);
    ev = cJSON_GetArrayItem(items(list), 0);
    kube_strlcpy(name, str(cJSON_GetObjectItem(ev, "metadata"), "name"), sizeof(name));
    assert_memory_equal(name, "virt-launcher-vm-a-abcde.", strlen("virt-launcher-vm-a-abcde."));
    assert_string_equal(str(ev, "reason"), "Scheduled");
    assert_string_equal(str(ev, "action"), "Binding");
    assert_string_equal(str(ev, "type"), "Normal");
    assert_string_equal(str(ev, "note"),
                        "Successfully assigned default/virt-launcher-vm-a-abcde to node-1");
    assert_string_equal(str(ev, "reportingController"), "stickyvm-scheduler");
    assert_string_equal(str(ev, "reportingInstance"), "stickyvm-scheduler-test");
    assert_int_equal(strlen(str(ev, "eventTime")), strlen("2026-11-21T10:00:00.000000Z"));
    reg = cJSON_GetObjectItem(ev, "regarding");
    assert_string_equal(str(reg, "uid"), pod.uid);
    assert_int_equal(series_count(ev), 0);
    cJSON_Delete(list);

    for (int i = 0; i < 4; i++)
        assert_int_equal(scheduled(fx, "node-1"), KUBE_OK);
    list = flushed_events(fx, 1);
    ev = cJSON_GetArrayItem(items(list), 0);
    assert_string_equal(str(cJSON_GetObjectItem(ev, "metadata"), "name"), name);
    assert_int_equal(series_count(ev), 5);
    assert_int_equal(strlen(str(cJSON_GetObjectItem(ev, "series"), "lastObservedTime")),
                     strlen("2026-11-21T10:00:00.000000Z"));
    cJSON_Delete(list);

    /* Another note is another event. */
    assert_int_equal(scheduled(fx, "node-2"), KUBE_OK);
    list = flushed_events(fx, 2);
    cJSON_Delete(list);
    kube_recorder_stats_get(fx->r, &st);
    assert_int_equal(st.queued, 6);
    assert_int_equal(st.created, 2);
    assert_int_equal(st.aggregated, 4);
    assert_true(st.patched >= 1 && st.patched <= 4);
    assert_int_equal(st.failed, 0);
    assert_int_equal(st.dropped, 0);
}

/* Without any flush, the heartbeat sends the counts. */
static void heartbeat_sends_counts(void **state)
{
    fixture *fx = *state;

    start_recorder(fx, 200);
    for (int i = 0; i < 3; i++)
        assert_int_equal(scheduled(fx, "node-1"), KUBE_OK);
    WAIT_TRUE_MS(single_count(fx) == 3, WAIT_MS);
}

/* With a heartbeat far away, stop sends the final count. */
static void stop_sends_final_counts(void **state)
{
    fixture *fx = *state;
    cJSON *list;

    start_recorder(fx, 3600000);
    for (int i = 0; i < 7; i++)
        assert_int_equal(scheduled(fx, "node-1"), KUBE_OK);
    kube_recorder_stop(fx->r, WAIT_MS);
    list = list_events(fx);
    assert_int_equal(cJSON_GetArraySize(items(list)), 1);
    assert_int_equal(series_count(cJSON_GetArrayItem(items(list), 0)), 7);
    cJSON_Delete(list);
}

/* A series PATCH that finds no event (deleted, or expired by its TTL)
 * re-creates it whole under the same name. */
static void vanished_series_is_recreated(void **state)
{
    fixture *fx = *state;
    harness_response resp;
    kube_buf path = KUBE_BUF_INIT;
    cJSON *list;
    char name[256];

    memset(&resp, 0, sizeof(resp));
    start_recorder(fx, 30000);
    assert_int_equal(scheduled(fx, "node-1"), KUBE_OK);
    assert_int_equal(kube_recorder_flush(fx->r, WAIT_MS), KUBE_OK);
    list = list_events(fx);
    kube_strlcpy(name,
                 str(cJSON_GetObjectItem(cJSON_GetArrayItem(items(list), 0), "metadata"), "name"),
                 sizeof(name));
    cJSON_Delete(list);
    assert_int_equal(kube_buf_printf(&path, "%s/%s", EVENTS, name), KUBE_OK);
    assert_int_equal(harness_request(fx->h, NULL, "DELETE", path.data, NULL, NULL, &resp), KUBE_OK);
    assert_int_equal(resp.status, 200);
    harness_response_free(&resp);
    kube_buf_free(&path);

    assert_int_equal(scheduled(fx, "node-1"), KUBE_OK);
    list = flushed_events(fx, 1);
    assert_string_equal(
        str(cJSON_GetObjectItem(cJSON_GetArrayItem(items(list), 0), "metadata"), "name"), name);
    assert_int_equal(series_count(cJSON_GetArrayItem(items(list), 0)), 2);
    cJSON_Delete(list);
}

/* A Status answer abandons the event (client-go does not retry those);
 * the recorder goes on with the next. */
/* A burst of first occurrences goes out without waiting for each (up to
 * the recorder's window at a time); a repeat's series PATCH still follows
 * its event's create: no PATCH finds the event missing, no create finds it
 * there. Each event is written once. */
static void burst_is_written_once_each_in_order(void **state)
{
    fixture *fx = *state;
    kube_recorder_stats st;
    cJSON *list, *reqs = NULL;
    const cJSON *it;
    char node[32];

    start_recorder(fx, 30000);
    for (int i = 0; i < 30; i++) {
        snprintf(node, sizeof(node), "node-%d", i);
        assert_int_equal(scheduled(fx, node), KUBE_OK);
        if (i % 10 == 9) /* a repeat of the first, amid the burst */
            assert_int_equal(scheduled(fx, "node-0"), KUBE_OK);
    }
    list = flushed_events(fx, 30);
    cJSON_ArrayForEach(it, items(list))
    {
        if (strstr(str(it, "note"), " to node-0"))
            assert_int_equal(series_count(it), 4);
    }
    cJSON_Delete(list);
    kube_recorder_stats_get(fx->r, &st);
    assert_int_equal(st.created, 30);
    assert_int_equal(st.failed, 0);
    assert_int_equal(harness_requests(fx->h, NULL, "events", NULL, &reqs), KUBE_OK);
    cJSON_ArrayForEach(it, reqs)
    {
        int code = cJSON_GetObjectItem(it, "code")->valueint;
        assert_true(code == 200 || code == 201);
    }
    cJSON_Delete(reqs);
}

/* A create whose connection breaks is retried (after the recorder's
 * sleep); so is any other create that was in flight on that connection.
 * Every event is there once. */
static void broken_create_is_retried(void **state)
{
    fixture *fx = *state;
    static const char *const verbs[] = {"create", NULL};
    static const char *const resources[] = {"events", NULL};
    harness_fault_rule r = {0};
    kube_recorder_stats st;
    cJSON *list;

    r.action = HARNESS_FAULT_RESET;
    r.count = 1;
    r.verbs = verbs;
    r.resources = resources;
    start_recorder(fx, 30000);
    assert_int_equal(harness_set_fault_rules(fx->h, &r, 1), KUBE_OK);
    assert_int_equal(scheduled(fx, "node-1"), KUBE_OK);
    assert_int_equal(scheduled(fx, "node-2"), KUBE_OK);
    list = flushed_events(fx, 2);
    cJSON_Delete(list);
    /* a create the server stored before the reset finds its event on the
     * retry: AlreadyExists, not retried again (counted failed) */
    kube_recorder_stats_get(fx->r, &st);
    assert_true(st.created >= 1);
    assert_int_equal(st.created + st.failed, 2);
    /* the reset may take the other create on the connection with it */
    assert_true(harness_count(fx->h, "create", "events") >= 3);
}

/* A burst larger than the window: creates go out more than the initial
 * window at a time once the emulator answers quickly (never more than the
 * maximum), and every event is written once, none dropped. */
static void burst_grows_the_window(void **state)
{
    fixture *fx = *state;
    kube_recorder_options o;
    kube_recorder_stats st;
    kube_recorder_ref ref = pod;
    char name[64];
    cJSON *list;

    kube_recorder_options_default(&o);
    o.queue_capacity = 2000;
    assert_int_equal(kube_recorder_new(fx->client, &o, &fx->r), KUBE_OK);
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof(name), "pod-%04d", i);
        ref.name = name;
        assert_int_equal(kube_recorder_eventf(fx->r, &ref, NULL, KUBE_RECORDER_NORMAL, "Scheduled",
                                              "Binding", "Successfully assigned default/%s", name),
                         KUBE_OK);
    }
    list = flushed_events(fx, 1000);
    cJSON_Delete(list);
    kube_recorder_stats_get(fx->r, &st);
    assert_int_equal(st.created, 1000);
    assert_int_equal(st.dropped, 0);
    assert_int_equal(harness_count(fx->h, "create", "events"), 1000);
    assert_true(st.max_in_flight > KUBE_RECORDER_WINDOW_INIT);
    assert_true(st.max_in_flight <= KUBE_RECORDER_WINDOW_MAX);
}

/* Events wait on a token bucket of their own: with the client limited to
 * 2 requests a second, events queued ahead of a request do not delay it
 * (they took none of the client's tokens), though they are still going
 * out at their own 2 a second. */
static void events_take_no_binding_tokens(void **state)
{
    fixture *fx = *state;
    kube_client_options co;
    kube_client *slow = NULL;
    kube_recorder_options o;
    kube_response resp = {0};
    char node[32];
    int64_t t0, took;

    kube_client_options_default(&co);
    co.qps = 2;
    co.burst = 1;
    assert_int_equal(kube_client_new(fx->cfg, &co, &slow), KUBE_OK);
    kube_recorder_options_default(&o);
    assert_int_equal(kube_recorder_new(slow, &o, &fx->r), KUBE_OK);
    for (int i = 0; i < 10; i++) {
        snprintf(node, sizeof(node), "node-%d", i);
        assert_int_equal(scheduled(fx, node), KUBE_OK);
    }
    WAIT_TRUE_MS(harness_count(fx->h, "create", "events") >= 1, WAIT_MS);
    t0 = kube_now_ms();
    assert_int_equal(kube_client_do(slow, "GET", "/api/v1/namespaces/default/pods?limit=1", NULL,
                                    NULL, 0, &resp),
                     KUBE_OK);
    took = kube_now_ms() - t0;
    kube_response_clear(&resp);
    /* sharing the client's bucket, the 7 creates in flight behind the
     * first would have reserved 3.5 s of its tokens */
    assert_true(took < 1000);
    assert_true(harness_count(fx->h, "create", "events") < 10);
    kube_recorder_free(fx->r); /* before its client */
    fx->r = NULL;
    kube_client_free(slow);
}

static void rejected_event_is_not_retried(void **state)
{
    fixture *fx = *state;
    const char *verbs[] = {"create", NULL};
    const char *resources[] = {"events", NULL};
    harness_faults f = {1.0, 500, 0, 0, verbs, resources};
    kube_recorder_stats st;
    cJSON *list;

    start_recorder(fx, 30000);
    assert_int_equal(harness_set_faults(fx->h, &f), KUBE_OK);
    assert_int_equal(scheduled(fx, "node-1"), KUBE_OK);
    assert_int_equal(kube_recorder_flush(fx->r, WAIT_MS), KUBE_OK);
    kube_recorder_stats_get(fx->r, &st);
    assert_int_equal(st.failed, 1);
    assert_int_equal(st.created, 0);
    assert_int_equal(harness_count(fx->h, "create", "events"), 1);
    assert_int_equal(harness_clear_faults(fx->h), KUBE_OK);
    assert_int_equal(scheduled(fx, "node-2"), KUBE_OK);
    list = flushed_events(fx, 1);
    cJSON_Delete(list);
}

int test_group_recorder_integration(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(creates_then_aggregates_into_a_series, setup, teardown),
        cmocka_unit_test_setup_teardown(heartbeat_sends_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(stop_sends_final_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(vanished_series_is_recreated, setup, teardown),
        cmocka_unit_test_setup_teardown(rejected_event_is_not_retried, setup, teardown),
        cmocka_unit_test_setup_teardown(burst_is_written_once_each_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(broken_create_is_retried, setup, teardown),
        cmocka_unit_test_setup_teardown(burst_grows_the_window, setup, teardown),
        cmocka_unit_test_setup_teardown(events_take_no_binding_tokens, setup, teardown),
    };
    return cmocka_run_group_tests_name("recorder_integration", tests, NULL, NULL);
}
