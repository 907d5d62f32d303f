/*
 * tests/unit/test_recorder.c - events.k8s.io/v1 event shapes (against the
 * recorded kube-apiserver v1.23 request), the isomorphic-event key, the
 * EventSeries aggregation cache driven by a hand-moved clock, the window of
 * creates in flight, and the bounded queue of a recorder whose server is
 * unreachable (its drops counted in the metric).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "kube/transport/config_testing.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/metrics.h"
#include "kube/machinery/recorder_testing.h"

#define WINDOW_MS 360000
#define HEARTBEAT_MS 30000

/* 2026-11-21T10:00:00Z in Unix nanoseconds. */
static int64_t fixture_wall_ns(void)
{
    struct tm tm = {.tm_year = 2026 - 1900, .tm_mon = 10, .tm_mday = 21, .tm_hour = 10};

    return (int64_t)timegm(&tm) * 1000000000LL;
}

static const kube_recorder_ref pod_ref = {
    .kind = "Pod",
    .api_version = "v1",
    .namespace_ = "default",
    .name = "virt-launcher-vm-a-abcde",
    .uid = "63ec8fc2-bedd-4af0-9b77-53b5010ab02a",
};

static kube_recorder_event *make_event(const kube_recorder_ref *regarding, const char *reason,
                                       const char *note, int64_t wall_ns)
{
    kube_recorder_event *ev = NULL;

    assert_int_equal(kube_recorder_event_new(regarding, NULL, "Normal", reason, "Binding", note,
                                             "stickyvm", "stickyvm-scheduler-0", wall_ns, &ev),
                     KUBE_OK);
    return ev;
}

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

static void body_matches_recorded_request(void **state)
{
    cJSON *fx = load_fixture("events-create-201.json");
    cJSON *want = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItem(fx, "request"), "body");
    int64_t wall = fixture_wall_ns();
    kube_recorder_event *ev =
        make_event(&pod_ref, "Scheduled",
                   "Successfully assigned default/virt-launcher-vm-a-abcde to node-1", wall);
    cJSON *body = NULL;
    char name[128];

    (void)state;
    assert_int_equal(kube_recorder_event_body(ev, &body), KUBE_OK);
    /* client-go names events "<regarding name>.<hex Unix nanoseconds>". */
    snprintf(name, sizeof(name), "virt-launcher-vm-a-abcde.%llx", (unsigned long long)wall);
    assert_string_equal(kube_recorder_event_name(ev), name);
    assert_string_equal(kube_recorder_event_namespace(ev), "default");
    /* The recorded request used a short name; everything else is equal. */
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(body, "metadata"), "name",
                              cJSON_CreateString("virt-launcher-vm-a-abcde.17a0"));
    assert_true(cJSON_Compare(body, want, 1));
    cJSON_Delete(body);
    kube_recorder_event_free(ev);
    cJSON_Delete(fx);
}

static void formats_micro_time(void **state)
{
    char out[40];

    (void)state;
    kube_time_format((fixture_wall_ns() + 123456789LL) / 1000, 1, out, sizeof(out));
    assert_string_equal(out, "2026-11-21T10:00:00.123456Z");
}

static void cluster_scoped_events_go_to_default(void **state)
{
    kube_recorder_ref node = {.kind = "Node", .api_version = "v1", .name = "node-1"};
    kube_recorder_event *ev = make_event(&node, "Pinned", "", 1);
    cJSON *body = NULL;
    cJSON *reg;

    (void)state;
    assert_string_equal(kube_recorder_event_namespace(ev), "default");
    assert_int_equal(kube_recorder_event_body(ev, &body), KUBE_OK);
    reg = cJSON_GetObjectItem(body, "regarding");
    assert_null(cJSON_GetObjectItem(reg, "namespace"));
    assert_null(cJSON_GetObjectItem(reg, "uid"));
    assert_null(cJSON_GetObjectItem(body, "note")); /* empty: omitted */
    assert_null(cJSON_GetObjectItem(body, "related"));
    assert_null(cJSON_GetObjectItem(body, "series"));
    cJSON_Delete(body);
    kube_recorder_event_free(ev);
}

static void related_and_versions_are_sent(void **state)
{
    kube_recorder_ref pod = pod_ref;
    kube_recorder_ref node = {.kind = "Node", .api_version = "v1", .name = "node-1"};
    kube_recorder_event *ev = NULL;
    cJSON *body = NULL;

    (void)state;
    pod.resource_version = "245";
    assert_int_equal(kube_recorder_event_new(&pod, &node, "Warning", "FailedScheduling",
                                             "Scheduling", "0/1 nodes are available", "c", "i", 5,
                                             &ev),
                     KUBE_OK);
    assert_int_equal(kube_recorder_event_body(ev, &body), KUBE_OK);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(body, "regarding"), "resourceVersion")->valuestring,
        "245");
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(body, "related"), "name")->valuestring, "node-1");
    assert_string_equal(cJSON_GetObjectItem(body, "type")->valuestring, "Warning");
    cJSON_Delete(body);
    kube_recorder_event_free(ev);
}

static void rejects_bad_events(void **state)
{
    kube_recorder_ref noname = {.kind = "Pod", .api_version = "v1"};
    kube_recorder_event *ev = NULL;

    (void)state;
    assert_int_equal(
        kube_recorder_event_new(&pod_ref, NULL, "Info", "R", "A", "n", "c", "i", 1, &ev),
        KUBE_EINVAL);
    assert_int_equal(
        kube_recorder_event_new(&pod_ref, NULL, "Normal", "R", "", "n", "c", "i", 1, &ev),
        KUBE_EINVAL);
    assert_int_equal(
        kube_recorder_event_new(&pod_ref, NULL, "Normal", NULL, "A", "n", "c", "i", 1, &ev),
        KUBE_EINVAL);
    assert_int_equal(
        kube_recorder_event_new(&noname, NULL, "Normal", "R", "A", "n", "c", "i", 1, &ev),
        KUBE_EINVAL);
    assert_int_equal(kube_recorder_event_new(NULL, NULL, "Normal", "R", "A", "n", "c", "i", 1, &ev),
                     KUBE_EINVAL);
    assert_null(ev);
}

/* events.k8s.io rejects notes over 1 kB: cut, never inside a UTF-8 char. */
static void cuts_long_notes_on_a_character(void **state)
{
    char note[1100];
    kube_recorder_event *ev;
    cJSON *body = NULL;
    const char *got;

    (void)state;
    memset(note, 'x', sizeof(note));
    /* "é" (2 bytes) straddles byte 1024: the cut falls before it. */
    note[1023] = (char)0xc3;
    note[1024] = (char)0xa9;
    note[sizeof(note) - 1] = '\0';
    ev = make_event(&pod_ref, "Scheduled", note, 1);
    assert_int_equal(kube_recorder_event_body(ev, &body), KUBE_OK);
    got = cJSON_GetObjectItem(body, "note")->valuestring;
    assert_int_equal(strlen(got), 1023);
    assert_memory_equal(got, note, 1023);
    cJSON_Delete(body);
    kube_recorder_event_free(ev);
}

static void isomorphic_key(void **state)
{
    kube_recorder_ref other_uid = pod_ref;
    kube_recorder_event *a = make_event(&pod_ref, "Scheduled", "note", 1);
    kube_recorder_event *b = make_event(&pod_ref, "Scheduled", "note", 2);
    kube_recorder_event *c = make_event(&pod_ref, "Scheduled", "other note", 3);
    kube_recorder_event *d = make_event(&pod_ref, "Pinned", "note", 4);
    kube_recorder_event *e, *f, *g;

    (void)state;
    other_uid.uid = "another-uid";
    e = make_event(&other_uid, "Scheduled", "note", 5);
    /* Field boundaries count: ("ab", "c") is not ("a", "bc"). */
    f = make_event(&pod_ref, "ab", "c", 6);
    g = make_event(&pod_ref, "a", "bc", 7);
    assert_true(kube_recorder_event_isomorphic(a, b));
    assert_false(kube_recorder_event_isomorphic(a, c));
    assert_false(kube_recorder_event_isomorphic(a, d));
    assert_false(kube_recorder_event_isomorphic(a, e));
    assert_false(kube_recorder_event_isomorphic(f, g));
    kube_recorder_event_free(a);
    kube_recorder_event_free(b);
    kube_recorder_event_free(c);
    kube_recorder_event_free(d);
    kube_recorder_event_free(e);
    kube_recorder_event_free(f);
    kube_recorder_event_free(g);
}

static int64_t series_count_of(const cJSON *doc)
{
    const cJSON *s = cJSON_GetObjectItem(doc, "series");

    return (int64_t)cJSON_GetObjectItem(s, "count")->valuedouble;
}

static const char *series_last_of(const cJSON *doc)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "series"), "lastObservedTime")->valuestring;
}

/* The name of the event observe() last wrote (a written single event is
 * freed by the cache, which keeps it slim). */
static char sent_name[128];

/* Observes one occurrence at t (ms) and returns what the cache asks for;
 * the write is acknowledged at once. *sent_ev (a series: a single event
 * is freed once written) and sent_name receive what was written. */
static kube_recorder_op observe(kube_recorder_cache *c, const char *note, int64_t t,
                                kube_recorder_event **sent_ev)
{
    kube_recorder_send s;
    int64_t wall = fixture_wall_ns() + t * 1000000LL;

    assert_int_equal(
        kube_recorder_cache_observe(c, make_event(&pod_ref, "Scheduled", note, wall), t, wall, &s),
        KUBE_OK);
    if (s.op != KUBE_RECORDER_SEND_NONE)
        kube_strlcpy(sent_name, kube_recorder_event_name(s.ev), sizeof(sent_name));
    if (s.op != KUBE_RECORDER_SEND_NONE)
        kube_recorder_cache_sent(c, s.ev, t);
    if (sent_ev)
        *sent_ev = s.op == KUBE_RECORDER_SEND_CREATE ? NULL : s.ev;
    return s.op;
}

static void series_aggregates_repeats(void **state)
{
    kube_recorder_cache *c = NULL;
    kube_recorder_event *first = NULL, *ev = NULL;
    kube_recorder_send s;
    cJSON *patch = NULL;
    char first_name[128];

    (void)state;
    assert_int_equal(kube_recorder_cache_new(WINDOW_MS, HEARTBEAT_MS, &c), KUBE_OK);
    assert_int_equal(observe(c, "n", 0, &first), KUBE_RECORDER_SEND_CREATE);
    kube_strlcpy(first_name, sent_name, sizeof(first_name));
    /* The second occurrence makes a series, PATCHed at once, on the first
     * event's name. */
    assert_int_equal(observe(c, "n", 1000, &ev), KUBE_RECORDER_SEND_PATCH);
    assert_string_equal(kube_recorder_event_name(ev), first_name);
    assert_int_equal(kube_recorder_event_series_count(ev), 2);
    assert_int_equal(kube_recorder_event_series_patch(ev, &patch), KUBE_OK);
    assert_int_equal(cJSON_GetArraySize(patch), 1);
    assert_int_equal(series_count_of(patch), 2);
    assert_string_equal(series_last_of(patch), "2026-11-21T10:00:01.000000Z");
    cJSON_Delete(patch);
    /* Later ones only count until the heartbeat. */
    assert_int_equal(observe(c, "n", 2000, NULL), KUBE_RECORDER_SEND_NONE);
    assert_int_equal(observe(c, "n", 3000, NULL), KUBE_RECORDER_SEND_NONE);
    assert_int_equal(kube_recorder_cache_size(c), 1);
    assert_int_equal(kube_recorder_cache_next_due(c, 30999, 0, &s), 0);
    assert_int_equal(kube_recorder_cache_next_deadline(c, 30999), 1);
    assert_int_equal(kube_recorder_cache_next_due(c, 31000, 0, &s), 1);
    assert_int_equal(s.op, KUBE_RECORDER_SEND_PATCH);
    assert_int_equal(kube_recorder_event_series_count(s.ev), 4);
    assert_int_equal(kube_recorder_event_series_patch(s.ev, &patch), KUBE_OK);
    assert_string_equal(series_last_of(patch), "2026-11-21T10:00:03.000000Z");
    cJSON_Delete(patch);
    kube_recorder_cache_sent(c, s.ev, 31000);
    assert_int_equal(kube_recorder_cache_next_due(c, 100000, 0, &s), 0);
    /* A different note is its own event. */
    assert_int_equal(observe(c, "other", 4000, NULL), KUBE_RECORDER_SEND_CREATE);
    assert_int_equal(kube_recorder_cache_size(c), 2);
    kube_recorder_cache_free(c);
}

static void heartbeat_spacing_and_force(void **state)
{
    kube_recorder_cache *c = NULL;
    kube_recorder_send s;

    (void)state;
    assert_int_equal(kube_recorder_cache_new(WINDOW_MS, HEARTBEAT_MS, &c), KUBE_OK);
    observe(c, "n", 0, NULL);
    observe(c, "n", 10000, NULL); /* PATCH sent at 10 s */
    observe(c, "n", 20000, NULL);
    assert_int_equal(kube_recorder_cache_next_deadline(c, 20000), 20000);
    assert_int_equal(kube_recorder_cache_next_due(c, 39999, 0, &s), 0);
    /* A flush sends unsent counts regardless of the heartbeat. */
    assert_int_equal(kube_recorder_cache_next_due(c, 20000, 1, &s), 1);
    assert_int_equal(kube_recorder_event_series_count(s.ev), 3);
    kube_recorder_cache_sent(c, s.ev, 20000);
    assert_int_equal(kube_recorder_cache_next_due(c, 20000, 1, &s), 0);
    kube_recorder_cache_free(c);
}

/* 6 minutes after its last occurrence a series gets its final count and
 * ends; a repeat after that starts a new event. */
static void series_ends_after_the_window(void **state)
{
    kube_recorder_cache *c = NULL;
    kube_recorder_send s;
    char first_name[128];

    (void)state;
    assert_int_equal(kube_recorder_cache_new(WINDOW_MS, HEARTBEAT_MS, &c), KUBE_OK);
    observe(c, "n", 0, NULL);
    kube_strlcpy(first_name, sent_name, sizeof(first_name));
    observe(c, "n", 1000, NULL);
    observe(c, "n", 2000, NULL); /* unsent count 3 */
    assert_int_equal(kube_recorder_cache_next_deadline(c, 2000), 30000 - 1000);
    /* Pretend the heartbeat writes were lost in time: at the window end the
     * entry leaves the table but its final PATCH is still due. */
    assert_int_equal(kube_recorder_cache_next_due(c, 2000 + WINDOW_MS, 0, &s), 1);
    assert_int_equal(kube_recorder_cache_size(c), 0);
    assert_int_equal(kube_recorder_event_series_count(s.ev), 3);
    assert_string_equal(kube_recorder_event_name(s.ev), first_name);
    kube_recorder_cache_sent(c, s.ev, 2000 + WINDOW_MS);
    assert_int_equal(kube_recorder_cache_next_due(c, 2000 + WINDOW_MS, 1, &s), 0);
    assert_int_equal(kube_recorder_cache_next_deadline(c, 2000 + WINDOW_MS), -1);
    assert_int_equal(observe(c, "n", 3000 + WINDOW_MS, NULL), KUBE_RECORDER_SEND_CREATE);
    assert_string_not_equal(sent_name, first_name);
    kube_recorder_cache_free(c);
}

static void singletons_expire_silently(void **state)
{
    kube_recorder_cache *c = NULL;
    kube_recorder_send s;

    (void)state;
    assert_int_equal(kube_recorder_cache_new(WINDOW_MS, HEARTBEAT_MS, &c), KUBE_OK);
    for (int i = 0; i < 500; i++) {
        char note[32];

        snprintf(note, sizeof(note), "n%d", i);
        assert_int_equal(observe(c, note, i, NULL), KUBE_RECORDER_SEND_CREATE);
    }
    assert_int_equal(kube_recorder_cache_size(c), 500);
    assert_int_equal(kube_recorder_cache_next_deadline(c, 1000), WINDOW_MS - 1000);
    assert_int_equal(kube_recorder_cache_next_due(c, 250 + WINDOW_MS, 0, &s), 0);
    assert_int_equal(kube_recorder_cache_size(c), 249);
    /* Within the window, a repeat of a live one still aggregates. */
    assert_int_equal(observe(c, "n499", 260 + WINDOW_MS, NULL), KUBE_RECORDER_SEND_PATCH);
    /* n0 ended: a repeat starts over. */
    assert_int_equal(observe(c, "n0", 260 + WINDOW_MS, NULL), KUBE_RECORDER_SEND_CREATE);
    kube_recorder_cache_free(c); /* frees the rest: valgrind checks */
}

static void series_body_includes_series(void **state)
{
    kube_recorder_cache *c = NULL;
    kube_recorder_event *ev = NULL;
    cJSON *body = NULL;
    char first_name[128];

    (void)state;
    assert_int_equal(kube_recorder_cache_new(WINDOW_MS, HEARTBEAT_MS, &c), KUBE_OK);
    observe(c, "n", 0, NULL);
    kube_strlcpy(first_name, sent_name, sizeof(first_name));
    observe(c, "n", 500, &ev);
    /* What is POSTed when the PATCH finds no event (404). */
    assert_int_equal(kube_recorder_event_body(ev, &body), KUBE_OK);
    assert_int_equal(series_count_of(body), 2);
    assert_string_equal(series_last_of(body), "2026-11-21T10:00:00.500000Z");
    assert_string_equal(cJSON_GetObjectItem(body, "eventTime")->valuestring,
                        "2026-11-21T10:00:00.000000Z");
    /* the first event was kept slim once written: the repeat brought the
     * rest back, on the first's name */
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(body, "metadata"), "name")->valuestring,
        first_name);
    assert_string_equal(cJSON_GetObjectItem(body, "note")->valuestring, "n");
    assert_string_equal(cJSON_GetObjectItem(body, "reportingController")->valuestring, "stickyvm");
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(body, "regarding"), "name")->valuestring,
        pod_ref.name);
    cJSON_Delete(body);
    kube_recorder_cache_free(c);
}

/* A client for a server that refuses connections: every write is a
 * transport error and the sender sleeps before retrying. */
static kube_client *unreachable_client(kube_config **cfg_out, char *dir, size_t n)
{
    char path[600];
    char err[256];
    FILE *f;
    kube_client *client = NULL;
    kube_client_options o;

    snprintf(dir, n, "/tmp/stickyvm-recorder-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/kubeconfig", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("apiVersion: v1\nkind: Config\n"
          "clusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:1\"}\n"
          "users:\n- name: u\n  user: {token: t}\n"
          "contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
          "current-context: x\n",
          f);
    fclose(f);
    assert_int_equal(kube_config_from_file(path, cfg_out, err, sizeof(err)), KUBE_OK);
    unlink(path);
    rmdir(dir);
    kube_client_options_default(&o);
    o.max_retries = 0;
    o.connect_timeout_ms = 1000;
    assert_int_equal(kube_client_new(*cfg_out, &o, &client), KUBE_OK);
    return client;
}

/* The value of stickyvm_events_dropped_total{reason}. */
static double dropped_metric(kube_metrics *reg, const char *reason)
{
    const char *v[] = {reason};
    kube_metric *m = kube_metrics_find(reg, "stickyvm_events_dropped_total");

    assert_non_null(m);
    return kube_metric_child_value(kube_metric_with(m, v));
}

/* eventf never blocks: with the sender stuck retrying, the bounded queue
 * fills, further events are dropped and counted (stats and the metric, by
 * reason); stop with a zero deadline returns at once and counts what was
 * left. */
static void full_queue_drops_and_counts(void **state)
{
    kube_config *cfg = NULL;
    char dir[64];
    kube_client *client = unreachable_client(&cfg, dir, sizeof(dir));
    kube_recorder_options o;
    kube_recorder *r = NULL, *r2 = NULL;
    kube_recorder_stats st;
    kube_metrics *reg = NULL;
    kube_buf text = KUBE_BUF_INIT;
    int full = 0, i, refused = 0;

    (void)state;
    assert_int_equal(kube_metrics_new(&reg), KUBE_OK);
    kube_recorder_options_default(&o);
    o.queue_capacity = 4;
    o.retry_sleep_ms = 60000;
    o.metrics = reg;
    assert_int_equal(kube_recorder_new(client, &o, &r), KUBE_OK);
    /* a second recorder on the same registry (one per profile) shares it */
    assert_int_equal(kube_recorder_new(client, &o, &r2), KUBE_OK);
    assert_int_equal(kube_metrics_write(reg, &text), KUBE_OK);
    assert_non_null(strstr(text.data, "stickyvm_events_dropped_total{reason=\"queue_full\"} 0\n"));
    kube_buf_free(&text);
    assert_int_equal(kube_recorder_eventf(r, &pod_ref, NULL, "Bogus", "R", "A", "x"), KUBE_EINVAL);
    for (i = 0; i < 1000 && !full; i++) {
        int rc = kube_recorder_eventf(r, &pod_ref, NULL, KUBE_RECORDER_NORMAL, "Scheduled",
                                      "Binding", "event %d", i);

        assert_true(rc == KUBE_OK || rc == KUBE_ETOOMANY);
        full = rc == KUBE_ETOOMANY;
        if (!full)
            usleep(1000);
    }
    assert_true(full);
    /* more at the full queue: each one counted */
    for (int k = 0; k < 5; k++)
        refused += kube_recorder_eventf(r, &pod_ref, NULL, KUBE_RECORDER_NORMAL, "Scheduled",
                                        "Binding", "more %d", k) == KUBE_ETOOMANY;
    assert_int_equal(refused, 5);
    assert_int_equal(dropped_metric(reg, "queue_full"), 6);
    assert_int_equal(kube_recorder_flush(r, 50), KUBE_ETIMEDOUT);
    kube_recorder_stop(r, 0);
    assert_int_equal(kube_recorder_eventf(r, &pod_ref, NULL, KUBE_RECORDER_NORMAL, "Scheduled",
                                          "Binding", "late"),
                     KUBE_ECANCELED);
    kube_recorder_stats_get(r, &st);
    assert_int_equal(st.created, 0);
    assert_int_equal(st.queued, (unsigned long)i - 1);
    /* Every accepted event is accounted for: dropped at the deadline. */
    assert_int_equal(st.dropped, 6 + st.queued - st.failed);
    assert_int_equal(dropped_metric(reg, "shutdown"), st.queued - st.failed);
    assert_int_equal(dropped_metric(reg, "queue_full") + dropped_metric(reg, "shutdown") +
                         dropped_metric(reg, "rejected") + dropped_metric(reg, "retries"),
                     st.dropped);
    kube_recorder_free(r);
    kube_recorder_free(r2);
    kube_metrics_free(reg);
    kube_client_free(client);
    kube_config_free(cfg);
}

/* The window of creates in flight: +1/size per quick answer (one more per
 * round trip) up to the maximum; a slow answer adds only while the queue
 * is half full; halved by an overload failure, once per round trip
 * (creates sent before the cut do not cut again), never under the
 * minimum; a refusal that is not overload (409, 403) changes nothing. */
static void window_grows_and_halves(void **state)
{
    kube_recorder_window w;
    size_t before;

    (void)state;
    kube_recorder_window_init(&w);
    assert_int_equal(kube_recorder_window_allowed(&w), KUBE_RECORDER_WINDOW_INIT);
    for (int i = 0; i <= KUBE_RECORDER_WINDOW_INIT; i++)
        kube_recorder_window_update(&w, KUBE_OK, 1000, 1005, 0);
    assert_int_equal(kube_recorder_window_allowed(&w), KUBE_RECORDER_WINDOW_INIT + 1);
    /* slow answers: no growth, unless the queue fills */
    for (int i = 0; i < 100; i++)
        kube_recorder_window_update(&w, KUBE_OK, 1000, 1001 + KUBE_RECORDER_SLOW_MS, 0);
    assert_int_equal(kube_recorder_window_allowed(&w), KUBE_RECORDER_WINDOW_INIT + 1);
    for (int i = 0; i < 30; i++)
        kube_recorder_window_update(&w, KUBE_OK, 1000, 1001 + KUBE_RECORDER_SLOW_MS, 1);
    assert_true(kube_recorder_window_allowed(&w) > KUBE_RECORDER_WINDOW_INIT + 1);
    for (int i = 0; i < 10000; i++)
        kube_recorder_window_update(&w, KUBE_OK, 1000, 1005, 0);
    assert_int_equal(kube_recorder_window_allowed(&w), KUBE_RECORDER_WINDOW_MAX);
    /* overload: halved once for the creates in flight together */
    kube_recorder_window_update(&w, KUBE_ETIMEDOUT, 2000, 3100, 0);
    assert_int_equal(kube_recorder_window_allowed(&w), KUBE_RECORDER_WINDOW_MAX / 2);
    kube_recorder_window_update(&w, KUBE_ESERVER, 2500, 3200, 0);
    kube_recorder_window_update(&w, KUBE_EIO, 3000, 3200, 0);
    assert_int_equal(kube_recorder_window_allowed(&w), KUBE_RECORDER_WINDOW_MAX / 2);
    /* sent after the cut: cuts again (429) */
    kube_recorder_window_update(&w, KUBE_ETOOMANY, 3150, 3300, 0);
    assert_int_equal(kube_recorder_window_allowed(&w), KUBE_RECORDER_WINDOW_MAX / 4);
    before = kube_recorder_window_allowed(&w);
    kube_recorder_window_update(&w, KUBE_EEXIST, 4000, 4005, 0);
    kube_recorder_window_update(&w, KUBE_EFORBIDDEN, 4000, 4005, 0);
    assert_true(kube_recorder_window_allowed(&w) >= before);
    for (int i = 0; i < 20; i++)
        kube_recorder_window_update(&w, KUBE_EIO, 5000 + i * 100, 5001 + i * 100, 0);
    assert_int_equal(kube_recorder_window_allowed(&w), KUBE_RECORDER_WINDOW_MIN);
}

/* An entry whose create is still in flight outlives its window: the cache
 * ends it but frees it only when the write is marked done (the sender
 * still holds the event). */
static void writing_entry_outlives_its_window(void **state)
{
    kube_recorder_cache *c = NULL;
    kube_recorder_send send, due;
    int64_t t0 = 1000000, wall = fixture_wall_ns();

    (void)state;
    assert_int_equal(kube_recorder_cache_new(WINDOW_MS, HEARTBEAT_MS, &c), KUBE_OK);
    assert_int_equal(kube_recorder_cache_observe(c, make_event(&pod_ref, "Scheduled", "a", wall),
                                                 t0, wall, &send),
                     KUBE_OK);
    assert_int_equal(send.op, KUBE_RECORDER_SEND_CREATE);
    send.ev->writing = 1;
    assert_int_equal(kube_recorder_cache_next_due(c, t0 + WINDOW_MS + 1, 0, &due), 0);
    assert_int_equal(kube_recorder_cache_size(c), 0);
    /* still readable: ASan would catch a use after free */
    assert_string_equal(kube_recorder_event_namespace(send.ev), "default");
    send.ev->writing = 0;
    kube_recorder_cache_sent(c, send.ev, t0 + WINDOW_MS + 2);
    kube_recorder_cache_free(c);
}

int test_group_recorder(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(body_matches_recorded_request),
        cmocka_unit_test(formats_micro_time),
        cmocka_unit_test(cluster_scoped_events_go_to_default),
        cmocka_unit_test(related_and_versions_are_sent),
        cmocka_unit_test(rejects_bad_events),
        cmocka_unit_test(cuts_long_notes_on_a_character),
        cmocka_unit_test(isomorphic_key),
        cmocka_unit_test(series_aggregates_repeats),
        cmocka_unit_test(heartbeat_spacing_and_force),
        cmocka_unit_test(series_ends_after_the_window),
        cmocka_unit_test(singletons_expire_silently),
        cmocka_unit_test(series_body_includes_series),
        cmocka_unit_test(full_queue_drops_and_counts),
        cmocka_unit_test(window_grows_and_halves),
        cmocka_unit_test(writing_entry_outlives_its_window),
    };
    return cmocka_run_group_tests_name("recorder", tests, NULL, NULL);
}
