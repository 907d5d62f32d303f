/*
 * tests/unit/test_metrics.c - the Prometheus registry (kube/util/metrics.h):
 * Go float formatting, registration rules, the text exposition of
 * counters, gauges and histograms, concurrent observations; and
 * kube-scheduler's metric set on it with the framework hooks
 * (scheduler/metrics.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "metrics.h"
#include "kube/util/metrics_testing.h"

static void formats_floats_as_go(void **state)
{
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {0, "0"},           {1, "1"},
        {0.001, "0.001"},   {0.0001, "0.0001"},
        {1e-05, "1e-05"},   {1.5e-05, "1.5e-05"},
        {16.384, "16.384"}, {123456, "123456"},
        {1e6, "1e+06"},     {1234567, "1.234567e+06"},
        {-2.5, "-2.5"},     {0.1 + 0.2, "0.30000000000000004"},
    };
    char out[40];
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kube_metrics_format_float(cases[i].v, out, sizeof(out));
        assert_string_equal(out, cases[i].want);
    }
    kube_metrics_format_float(1.0 / 0.0, out, sizeof(out));
    assert_string_equal(out, "+Inf");
}

static void registration_rules(void **state)
{
    kube_metrics *r;
    kube_metric *m = NULL;
    static const char *const labels[] = {"a", "b"};
    static const char *const bad_labels[] = {"a", "a"};
    static const char *const le[] = {"le"};
    static const double buckets[] = {1, 2};
    static const double unsorted[] = {2, 1};
    (void)state;

    assert_int_equal(kube_metrics_new(&r), KUBE_OK);
    kube_metric_opts o = {"x_total", "help", KUBE_METRIC_COUNTER, KUBE_STABILITY_ALPHA, labels, 2,
                          NULL,      0};
    assert_int_equal(kube_metrics_register(r, &o, &m), KUBE_OK);
    assert_ptr_equal(kube_metrics_find(r, "x_total"), m);
    assert_int_equal(kube_metrics_register(r, &o, NULL), KUBE_EEXIST);
    o.name = "1bad";
    assert_int_equal(kube_metrics_register(r, &o, NULL), KUBE_EINVAL);
    o.name = "dup_labels";
    o.labels = bad_labels;
    assert_int_equal(kube_metrics_register(r, &o, NULL), KUBE_EINVAL);
    o.name = "h";
    o.type = KUBE_METRIC_HISTOGRAM;
    o.labels = le;
    o.n_labels = 1;
    o.buckets = buckets;
    o.n_buckets = 2;
    assert_int_equal(kube_metrics_register(r, &o, NULL), KUBE_EINVAL);
    o.labels = NULL;
    o.n_labels = 0;
    o.buckets = unsorted;
    assert_int_equal(kube_metrics_register(r, &o, NULL), KUBE_EINVAL);
    o.buckets = NULL;
    assert_int_equal(kube_metrics_register(r, &o, NULL), KUBE_EINVAL);
    kube_metrics_free(r);
}

static void exposition_format(void **state)
{
    kube_metrics *r;
    kube_metric *c, *g, *h;
    static const char *const lc[] = {"result", "profile"};
    static const char *const lg[] = {"queue"};
    static const double buckets[] = {0.5, 1};
    kube_buf b = KUBE_BUF_INIT;
    (void)state;

    assert_int_equal(kube_metrics_new(&r), KUBE_OK);
    kube_metric_opts oc = {"z_attempts_total",
                           "Attempts.",
                           KUBE_METRIC_COUNTER,
                           KUBE_STABILITY_STABLE,
                           lc,
                           2,
                           NULL,
                           0};
    kube_metric_opts og = {"a_pending",
                           "Pending \\ pods\nnow.",
                           KUBE_METRIC_GAUGE,
                           KUBE_STABILITY_ALPHA,
                           lg,
                           1,
                           NULL,
                           0};
    kube_metric_opts oh = {
        "m_seconds", "Latency.", KUBE_METRIC_HISTOGRAM, KUBE_STABILITY_BETA, NULL, 0, buckets, 2};
    kube_metric_opts oe = {
        "empty_total", "Never used.", KUBE_METRIC_COUNTER, KUBE_STABILITY_ALPHA, NULL, 0, NULL, 0};
    assert_int_equal(kube_metrics_register(r, &oc, &c), KUBE_OK);
    assert_int_equal(kube_metrics_register(r, &og, &g), KUBE_OK);
    assert_int_equal(kube_metrics_register(r, &oh, &h), KUBE_OK);
    assert_int_equal(kube_metrics_register(r, &oe, NULL), KUBE_OK);

    const char *v1[] = {"scheduled", "p\"1"};
    const char *v2[] = {"error", "p"};
    kube_metric_add(c, v1, 2);
    kube_metric_add(c, v1, -5); /* counters never decrease */
    kube_metric_add(c, v2, 1);
    const char *q[] = {"active"};
    kube_metric_set(g, q, 3);
    kube_metric_add(g, q, -1);
    kube_metric_observe(h, NULL, 0.25);
    kube_metric_observe(h, NULL, 0.75);
    kube_metric_observe(h, NULL, 3);
    assert_true(kube_metric_value(c, v1) == 2);
    assert_true(kube_metric_value(g, q) == 2);
    assert_true(kube_metric_value(h, NULL) == 3);

    assert_int_equal(kube_metrics_write(r, &b), KUBE_OK);
    const char *want = "# HELP a_pending [ALPHA] Pending \\\\ pods\\nnow.\n"
                       "# TYPE a_pending gauge\n"
                       "a_pending{queue=\"active\"} 2\n"
                       "# HELP m_seconds [BETA] Latency.\n"
                       "# TYPE m_seconds histogram\n"
                       "m_seconds_bucket{le=\"0.5\"} 1\n"
                       "m_seconds_bucket{le=\"1\"} 2\n"
                       "m_seconds_bucket{le=\"+Inf\"} 3\n"
                       "m_seconds_sum 4\n"
                       "m_seconds_count 3\n"
                       "# HELP z_attempts_total [STABLE] Attempts.\n"
                       "# TYPE z_attempts_total counter\n"
                       "z_attempts_total{result=\"error\",profile=\"p\"} 1\n"
                       "z_attempts_total{result=\"scheduled\",profile=\"p\\\"1\"} 2\n";
    assert_string_equal(b.data, want);
    kube_buf_free(&b);
    kube_metrics_free(r);
}

static void core_set_and_hooks(void **state)
{
    kube_metrics *r;
    sched_core_metrics m;
    kube_buf b = KUBE_BUF_INIT;
    (void)state;

    sched_core_metrics again;
    assert_int_equal(kube_metrics_new(&r), KUBE_OK);
    assert_int_equal(sched_core_metrics_register(r, &m), KUBE_OK);
    assert_int_equal(sched_core_metrics_register(r, &again), KUBE_EEXIST);

    fw_metrics_hooks hk = sched_core_metrics_hooks(&m);
    hk.extension_point(hk.ud, "Filter", "Success", "default-scheduler", 0.0002);
    hk.plugin(hk.ud, "NodeResourcesFit", "Filter", "Success", 0.00001);
    hk.permit_wait(hk.ud, "Success", 0.5);
    sched_core_metrics_attempt(&m, "scheduled", "default-scheduler", 0.01);
    sched_core_metrics_attempt(&m, "unschedulable", "default-scheduler", 0.01);
    sched_core_metrics_attempt(&m, "scheduled", "default-scheduler", 0.02);

    const char *v[] = {"scheduled", "default-scheduler"};
    assert_true(kube_metric_value(m.schedule_attempts, v) == 2);
    /* static labels find the same child */
    assert_ptr_equal(kube_metric_with_static(m.schedule_attempts, v),
                     kube_metric_with(m.schedule_attempts, v));
    assert_true(kube_metric_value(m.scheduling_attempt_duration, v) == 2);
    assert_int_equal(kube_metrics_write(r, &b), KUBE_OK);
    assert_non_null(strstr(b.data, "scheduler_pending_pods{queue=\"gated\"} 0\n"));
    assert_non_null(strstr(b.data, "scheduler_schedule_attempts_total{result=\"scheduled\","
                                   "profile=\"default-scheduler\"} 2\n"));
    assert_non_null(strstr(b.data, "scheduler_framework_extension_point_duration_seconds_bucket{"
                                   "extension_point=\"Filter\",status=\"Success\",profile="
                                   "\"default-scheduler\",le=\"0.0002\"} 1\n"));
    assert_non_null(strstr(b.data, "scheduler_plugin_execution_duration_seconds_bucket{plugin="
                                   "\"NodeResourcesFit\",extension_point=\"Filter\",status="
                                   "\"Success\",le=\"1e-05\"} 1\n"));
    assert_non_null(strstr(b.data,
                           "scheduler_scheduling_attempt_duration_seconds_bucket{result="
                           "\"scheduled\",profile=\"default-scheduler\",le=\"16.384\"} 2\n"));
    assert_non_null(strstr(b.data, "# HELP scheduler_schedule_attempts_total [STABLE] Number of "
                                   "attempts to schedule pods, by the result."));
    assert_non_null(strstr(b.data, "scheduler_permit_wait_duration_seconds_count{result="
                                   "\"Success\"} 1\n"));
    kube_buf_free(&b);
    kube_metrics_free(r);
}

/* Repeated plugin observations land in the same child, and a registry made
 * after another is freed gets its own children (the hook's per-thread cache
 * is keyed by the family, never by a freed address). */
static void plugin_hook_children(void **state)
{
    static const char *const fit[] = {"NodeResourcesFit", "Score", "Success"};
    static const char *const taint[] = {"TaintToleration", "Score", "Success"};
    (void)state;

    for (int round = 0; round < 2; round++) {
        kube_metrics *r;
        sched_core_metrics m;
        fw_metrics_hooks hk;

        assert_int_equal(kube_metrics_new(&r), KUBE_OK);
        assert_int_equal(sched_core_metrics_register(r, &m), KUBE_OK);
        hk = sched_core_metrics_hooks(&m);
        for (int i = 0; i < 3 + round; i++) {
            hk.plugin(hk.ud, fit[0], fit[1], fit[2], 0.00001);
            hk.plugin(hk.ud, taint[0], taint[1], taint[2], 0.00002);
        }
        hk.plugin(hk.ud, taint[0], taint[1], "Error", 0.00002);
        assert_true(kube_metric_value(m.plugin_execution_duration, fit) == 3 + round);
        assert_true(kube_metric_value(m.plugin_execution_duration, taint) == 3 + round);
        kube_metrics_free(r);
    }
}

/* Deferred plugin observations stay out of the metric until the thread
 * flushes, then buckets, count and sum equal per-call observation; more
 * keys than the buffer holds are flushed on the way, not lost. */
static void plugin_defer_then_flush(void **state)
{
    static const char *const direct[] = {"NodeResourcesFit", "Filter", "Success"};
    static const char *const deferred[] = {"NodeResourcesFit", "Score", "Success"};
    static const double values[] = {0.000001, 0.00001, 0.00002, 0.0005, 3, 1e9};
    static const char *names[40];
    char bufs[40][16];
    kube_metrics *r;
    sched_core_metrics m;
    kube_buf b = KUBE_BUF_INIT;
    (void)state;

    assert_int_equal(kube_metrics_new(&r), KUBE_OK);
    assert_int_equal(sched_core_metrics_register(r, &m), KUBE_OK);
    fw_metrics_hooks hk = sched_core_metrics_hooks(&m);
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        hk.plugin(hk.ud, direct[0], direct[1], direct[2], values[i]);
        hk.plugin_defer(hk.ud, deferred[0], deferred[1], deferred[2], values[i]);
    }
    assert_true(kube_metric_value(m.plugin_execution_duration, direct) == 6);
    assert_true(kube_metric_value(m.plugin_execution_duration, deferred) == 0);
    hk.plugin_flush(hk.ud);
    assert_true(kube_metric_value(m.plugin_execution_duration, deferred) == 6);
    assert_true(kube_metric_child_sum(kube_metric_with(m.plugin_execution_duration, deferred)) ==
                kube_metric_child_sum(kube_metric_with(m.plugin_execution_duration, direct)));
    assert_int_equal(kube_metrics_write(r, &b), KUBE_OK);
    assert_non_null(strstr(b.data, "plugin=\"NodeResourcesFit\",extension_point=\"Score\","
                                   "status=\"Success\",le=\"1e-05\"} 2\n"));
    assert_non_null(
        strstr(b.data, "extension_point=\"Score\",status=\"Success\",le=\"+Inf\"} 6\n"));
    /* 40 keys in one thread: more than its buffer */
    for (int i = 0; i < 40; i++) {
        snprintf(bufs[i], sizeof(bufs[i]), "P%d", i);
        names[i] = bufs[i];
        hk.plugin_defer(hk.ud, names[i], "Filter", "Success", 0.001);
        hk.plugin_defer(hk.ud, names[i], "Filter", "Success", 0.001);
    }
    hk.plugin_flush(hk.ud);
    for (int i = 0; i < 40; i++) {
        const char *v[] = {names[i], "Filter", "Success"};
        assert_true(kube_metric_value(m.plugin_execution_duration, v) == 2);
    }
    kube_buf_free(&b);
    kube_metrics_free(r);
}

typedef struct worker {
    kube_metric *m;
    int n;
} worker;

static void *observe_many(void *arg)
{
    worker *w = arg;
    const char *v[] = {"x"};
    for (int i = 0; i < w->n; i++)
        kube_metric_observe(w->m, v, 0.001);
    return NULL;
}

static void concurrent_observations(void **state)
{
    kube_metrics *r;
    kube_metric *h;
    static const char *const l[] = {"k"};
    static const double buckets[] = {0.01};
    pthread_t t[4];
    worker w;
    (void)state;

    assert_int_equal(kube_metrics_new(&r), KUBE_OK);
    kube_metric_opts o = {"c_seconds", "c", KUBE_METRIC_HISTOGRAM, KUBE_STABILITY_ALPHA, l, 1,
                          buckets,     1};
    assert_int_equal(kube_metrics_register(r, &o, &h), KUBE_OK);
    w.m = h;
    w.n = 20000;
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, observe_many, &w), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    const char *v[] = {"x"};
    assert_true(kube_metric_value(h, v) == 80000);
    assert_true(kube_metric_child_sum(kube_metric_with(h, v)) > 79.99);
    kube_metrics_free(r);
}

int test_group_metrics(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(formats_floats_as_go),    cmocka_unit_test(registration_rules),
        cmocka_unit_test(exposition_format),       cmocka_unit_test(core_set_and_hooks),
        cmocka_unit_test(plugin_hook_children),    cmocka_unit_test(plugin_defer_then_flush),
        cmocka_unit_test(concurrent_observations),
    };
    return cmocka_run_group_tests_name("kube_metrics", tests, NULL, NULL);
}
