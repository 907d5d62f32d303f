/*
 * tests/integration/test_extender_integration.c - scheduler extenders
 * (scheduler/extender.h): the scheduler in-process against the API
 * emulator, with an extender server of the tests
 * (tests/integration/extender_server.h):
 *   - filter narrows the nodes (nodeCacheCapable: ExtenderArgs with
 *     nodenames and the pod as the API server has it); a pod not
 *     requesting a managed resource is never sent; nodes the filter fails
 *     count in the FitError with the extender's message;
 *   - an error in the filter's answer fails the cycle with that error;
 *   - HTTPS: the extender's certificate verified against tlsConfig's
 *     caFile (an extender whose serverName does not match is not served);
 *   - prioritize changes the winner (without nodeCacheCapable: a NodeList);
 *     two prioritizing extenders add up;
 *   - bind is delegated: the extender receives ExtenderBindingArgs and the
 *     scheduler creates no pods/binding;
 *   - an ignorable extender that is down is skipped (the pod is bound);
 *   - a non-ignorable one that is down fails the cycle with kube's message
 *     (FailedScheduling event and PodScheduled condition);
 *   - preemption goes through the extender's preempt verb, which may veto
 *     every candidate.
 * Waits use deadlines; nothing asserts speed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "extender_server.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "sched_fixture.h"
#include "unit/test_plugin_util.h"

#define PODS "/api/v1/namespaces/default/pods"
#define HEADER                                                                       \
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" \
    "leaderElection:\n  leaderElect: false\n"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static void create_node(sf_fixture *fx, const char *name)
{
    sf_create(fx->h, "/api/v1/nodes",
              "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":{"
              "\"kubernetes.io/hostname\":\"%s\"}},\"status\":{\"capacity\":{\"cpu\":\"4\","
              "\"memory\":\"16Gi\",\"pods\":\"110\",\"example.com/gpu\":\"4\"},\"allocatable\":{"
              "\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":\"110\",\"example.com/gpu\":\"4\"}}}",
              name, name);
}

/* A pod requesting cpu (and gpus when gpus > 0), with a priority. */
static void create_pod(sf_fixture *fx, const char *name, const char *cpu, int gpus, int priority)
{
    char gpu[64] = "";

    if (gpus > 0)
        snprintf(gpu, sizeof(gpu), ",\"example.com/gpu\":\"%d\"", gpus);
    sf_create(fx->h, PODS,
              "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
              "\"default\"},\"spec\":{\"priority\":%d,\"containers\":[{\"name\":\"c\",\"image\":"
              "\"registry.invalid/pause:3.9\",\"resources\":{\"requests\":{\"cpu\":\"%s\"%s},"
              "\"limits\":{\"cpu\":\"%s\"%s}}}]}}",
              name, priority, cpu, gpu, cpu, gpu);
}

/* Replaces the fixture's configuration with HEADER + the printf-formatted
 * extenders, then starts the scheduler. */
static void start_with(sf_fixture *fx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void start_with(sf_fixture *fx, const char *fmt, ...)
{
    char yaml[2048], ext[1024], err[512] = "";
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(ext, sizeof(ext), fmt, ap);
    va_end(ap);
    snprintf(yaml, sizeof(yaml), "%sextenders:\n%s", HEADER, ext);
    sched_config_free(fx->cfg);
    fx->cfg = NULL;
    if (tp_config_load(yaml, "test.yaml", NULL, &fx->cfg, err, sizeof(err)) != KUBE_OK)
        fail_msg("config: %s", err);
    sf_start_scheduler(fx);
}

static char *dup_text(const char *s)
{
    char *d = strdup(s);
    assert_non_null(d);
    return d;
}

/* The number of strings in a, or -1; *has set when one equals want. */
static int names_in(const cJSON *a, const char *want, int *has)
{
    const cJSON *it;
    int n = 0;

    *has = 0;
    if (!cJSON_IsArray(a))
        return -1;
    cJSON_ArrayForEach(it, a)
    {
        const char *s = cJSON_IsString(it) ? it->valuestring : sf_str_at(it, "metadata", "name");
        *has |= s && !strcmp(s, want);
        n++;
    }
    return n;
}

/* ------------------------------------------------------------------ */
/* Filter                                                              */
/* ------------------------------------------------------------------ */

/* Keeps node-b (as NodeNames and as a NodeList); node-a fails, node-c
 * fails unresolvably. Keys as Go writes extender/v1's (untagged) fields. */
static char *filter_keep_b(void *ud, const char *verb, const cJSON *args, int *code)
{
    (void)ud;
    (void)args;
    (void)code;
    if (strcmp(verb, "filter") != 0)
        return dup_text("{}");
    return dup_text("{\"NodeNames\":[\"node-b\"],\"Nodes\":{\"items\":[{\"metadata\":{\"name\":"
                    "\"node-b\"}}]},\"FailedNodes\":{\"node-a\":\"no gpu left\"},"
                    "\"FailedAndUnresolvableNodes\":{\"node-c\":\"gpu broken\"},\"Error\":\"\"}");
}

static void filter_narrows_the_nodes(void **state)
{
    sf_fixture *fx = *state;
    es_server *es;
    int has;

    assert_int_equal(es_start(filter_keep_b, NULL, &es), KUBE_OK);
    create_node(fx, "node-a");
    create_node(fx, "node-b");
    create_node(fx, "node-c");
    start_with(fx,
               "- urlPrefix: http://127.0.0.1:%d/\n  filterVerb: filter\n"
               "  nodeCacheCapable: true\n  managedResources:\n  - name: example.com/gpu\n",
               es_port(es));
    /* not interested: never sent, bound by the default plugins */
    create_pod(fx, "plain", "100m", 0, 0);
    free(sf_wait_bound(fx->h, "plain"));
    assert_int_equal(es_count(es, "filter"), 0);
    /* interested: only node-b is left */
    create_pod(fx, "gpu", "100m", 1, 0);
    char *node = sf_wait_bound(fx->h, "gpu");
    assert_string_equal(node, "node-b");
    free(node);
    cJSON *args = es_last(es, "filter");
    assert_non_null(args);
    assert_int_equal(names_in(cJSON_GetObjectItemCaseSensitive(args, "NodeNames"), "node-c", &has),
                     3);
    assert_true(has);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(args, "Nodes")));
    assert_string_equal(
        sf_str_at(cJSON_GetObjectItemCaseSensitive(args, "Pod"), "metadata", "name"), "gpu");
    /* the pod as the API server has it: its containers' limits */
    char *text = cJSON_PrintUnformatted(args);
    assert_non_null(strstr(text, "\"limits\":{\"cpu\":\"100m\""));
    free(text);
    cJSON_Delete(args);
    es_stop(es);
}

/* Keeps nothing: the failed nodes make the FitError. Keys in lower case,
 * as extenders built on the old tagged API answer: read all the same. */
static char *filter_none(void *ud, const char *verb, const cJSON *args, int *code)
{
    (void)ud;
    (void)verb;
    (void)args;
    (void)code;
    return dup_text("{\"nodenames\":[],\"failedNodes\":{\"node-a\":\"no gpu left\",\"node-b\":"
                    "\"no gpu left\"},\"failedAndUnresolvableNodes\":{\"node-b\":\"gpu broken\"}}");
}

static void filter_failures_make_the_fit_error(void **state)
{
    sf_fixture *fx = *state;
    es_server *es;

    assert_int_equal(es_start(filter_none, NULL, &es), KUBE_OK);
    create_node(fx, "node-a");
    create_node(fx, "node-b");
    start_with(fx,
               "- urlPrefix: http://127.0.0.1:%d\n  filterVerb: filter\n  nodeCacheCapable: true\n",
               es_port(es));
    create_pod(fx, "p", "100m", 0, 0);
    char *msg = sf_wait_unschedulable(fx->h, "p", "nodes are available");
    /* node-b is unresolvable (failedAndUnresolvableNodes wins): preemption
     * does not try it */
    if (strncmp(msg, "0/2 nodes are available: 1 gpu broken, 1 no gpu left. ", 54) != 0 ||
        !strstr(msg, "1 Preemption is not helpful for scheduling"))
        fail_msg("message: %s", msg);
    free(msg);
    es_stop(es);
}

/* Answers the filter with an error. */
static char *filter_error(void *ud, const char *verb, const cJSON *args, int *code)
{
    (void)ud;
    (void)verb;
    (void)args;
    (void)code;
    return dup_text("{\"Error\":\"gpu inventory unavailable\"}");
}

static void filter_error_fails_the_cycle(void **state)
{
    sf_fixture *fx = *state;
    es_server *es;

    assert_int_equal(es_start(filter_error, NULL, &es), KUBE_OK);
    create_node(fx, "node-a");
    start_with(fx, "- urlPrefix: http://127.0.0.1:%d\n  filterVerb: filter\n", es_port(es));
    create_pod(fx, "p", "100m", 0, 0);
    char *msg = sf_wait_unschedulable(fx->h, "p", "gpu");
    assert_string_equal(msg, "gpu inventory unavailable");
    free(msg);
    es_stop(es);
}

/* HTTPS with tlsConfig: the extender's certificate is verified against
 * caFile (and serverName, when given). */
static void https_with_tls_config(void **state)
{
    sf_fixture *fx = *state;
    const char *ips[] = {"127.0.0.1"}, *cert, *key, *ca = harness_ca_file(fx->h);
    es_server *es;
    int port;

    assert_int_equal(harness_issue_serving_cert(fx->h, "extender", NULL, 0, ips, 1, &cert, &key),
                     KUBE_OK);
    assert_int_equal(es_start_tls(filter_keep_b, NULL, cert, key, &es), KUBE_OK);
    port = es_port(es);
    create_node(fx, "node-a");
    create_node(fx, "node-b");
    /* verified against caFile; enableHTTPS without a CA: not verified (as
     * kube-scheduler's makeTransport); a serverName the certificate does
     * not name: refused, and skipped as ignorable. The second is not
     * nodeCacheCapable: NodeLists both ways */
    start_with(fx,
               "- urlPrefix: https://127.0.0.1:%d\n  filterVerb: filter\n  nodeCacheCapable: true\n"
               "  tlsConfig:\n    caFile: %s\n"
               "- urlPrefix: https://127.0.0.1:%d\n  filterVerb: filter\n  enableHTTPS: true\n"
               "- urlPrefix: https://127.0.0.1:%d\n  filterVerb: filter\n  nodeCacheCapable: true\n"
               "  tlsConfig:\n    caFile: %s\n    serverName: other.example\n  ignorable: true\n",
               port, ca, port, port, ca);
    create_pod(fx, "p", "100m", 0, 0);
    char *node = sf_wait_bound(fx->h, "p");
    assert_string_equal(node, "node-b");
    free(node);
    assert_int_equal(es_count(es, "filter"), 2);
    es_stop(es);
}

/* ------------------------------------------------------------------ */
/* Prioritize                                                          */
/* ------------------------------------------------------------------ */

static char *prefer_c(void *ud, const char *verb, const cJSON *args, int *code)
{
    (void)ud;
    (void)args;
    (void)code;
    if (strcmp(verb, "prioritize2") == 0)
        return dup_text("[{\"host\":\"node-a\",\"score\":8},{\"host\":\"node-b\",\"score\":6}]");
    if (strcmp(verb, "prioritize") != 0)
        return dup_text("{}");
    return dup_text("[{\"Host\":\"node-a\",\"Score\":0},{\"Host\":\"node-b\",\"Score\":6},"
                    "{\"Host\":\"node-c\",\"Score\":10}]");
}

static void prioritize_changes_the_winner(void **state)
{
    sf_fixture *fx = *state;
    es_server *es;
    int has;

    assert_int_equal(es_start(prefer_c, NULL, &es), KUBE_OK);
    create_node(fx, "node-a");
    create_node(fx, "node-b");
    create_node(fx, "node-c");
    start_with(fx, "- urlPrefix: http://127.0.0.1:%d\n  prioritizeVerb: prioritize\n  weight: 2\n",
               es_port(es));
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        create_pod(fx, name, "500m", 0, 0);
        char *node = sf_wait_bound(fx->h, name);
        assert_string_equal(node, "node-c");
        free(node);
    }
    cJSON *args = es_last(es, "prioritize");
    const cJSON *items =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(args, "Nodes"), "items");
    assert_int_equal(names_in(items, "node-a", &has), 3);
    assert_true(has);
    const cJSON *alloc = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(items, 0), "status"), "allocatable");
    assert_string_equal(sf_str_at(alloc, "cpu", NULL), "4000m");
    assert_string_equal(sf_str_at(alloc, "example.com/gpu", NULL), "4");
    cJSON_Delete(args);
    es_stop(es);
}

/* Two prioritizing extenders (run concurrently) add up: node-c wins the
 * first alone, node-a the second alone, node-b both together. */
static void prioritizers_add_up(void **state)
{
    sf_fixture *fx = *state;
    es_server *es;

    assert_int_equal(es_start(prefer_c, NULL, &es), KUBE_OK);
    create_node(fx, "node-a");
    create_node(fx, "node-b");
    create_node(fx, "node-c");
    start_with(fx,
               "- urlPrefix: http://127.0.0.1:%d\n  prioritizeVerb: prioritize\n  weight: 1\n"
               "  nodeCacheCapable: true\n"
               "- urlPrefix: http://127.0.0.1:%d\n  prioritizeVerb: prioritize2\n  weight: 1\n"
               "  nodeCacheCapable: true\n",
               es_port(es), es_port(es));
    create_pod(fx, "p", "500m", 0, 0);
    char *node = sf_wait_bound(fx->h, "p");
    assert_string_equal(node, "node-b");
    free(node);
    assert_int_equal(es_count(es, "prioritize"), 1);
    assert_int_equal(es_count(es, "prioritize2"), 1);
    es_stop(es);
}

/* ------------------------------------------------------------------ */
/* Bind                                                                */
/* ------------------------------------------------------------------ */

static char *bind_ok(void *ud, const char *verb, const cJSON *args, int *code)
{
    (void)ud;
    (void)args;
    (void)code;
    return dup_text(strcmp(verb, "bind") == 0 ? "{\"Error\":\"\"}" : "{}");
}

static void bind_is_delegated(void **state)
{
    sf_fixture *fx = *state;
    es_server *es;

    assert_int_equal(es_start(bind_ok, NULL, &es), KUBE_OK);
    create_node(fx, "node-a");
    start_with(fx, "- urlPrefix: http://127.0.0.1:%d\n  bindVerb: bind\n", es_port(es));
    create_pod(fx, "p", "100m", 0, 0);
    cJSON *ev = sf_wait_event(fx->h, "p", "Scheduled");
    cJSON_Delete(ev);
    cJSON *args = es_last(es, "bind");
    assert_non_null(args);
    assert_string_equal(sf_str_at(args, "PodName", NULL), "p");
    assert_string_equal(sf_str_at(args, "PodNamespace", NULL), "default");
    assert_string_equal(sf_str_at(args, "Node", NULL), "node-a");
    cJSON *pod = sf_get(fx->h, PODS "/p");
    assert_string_equal(sf_str_at(args, "PodUID", NULL), sf_str_at(pod, "metadata", "uid"));
    /* the extender binds, not us: no binding was created through the API */
    assert_null(sf_str_at(pod, "spec", "nodeName"));
    assert_int_equal(harness_count(fx->h, "create", "pods/binding"), 0);
    cJSON_Delete(pod);
    cJSON_Delete(args);
    es_stop(es);
}

/* ------------------------------------------------------------------ */
/* Extenders that are down                                             */
/* ------------------------------------------------------------------ */

static void ignorable_down_is_skipped(void **state)
{
    sf_fixture *fx = *state;
    int port = harness_free_port();

    assert_true(port > 0);
    create_node(fx, "node-a");
    start_with(fx,
               "- urlPrefix: http://127.0.0.1:%d\n  filterVerb: filter\n  bindVerb: bind\n"
               "  ignorable: true\n",
               port);
    create_pod(fx, "p", "100m", 0, 0);
    char *node = sf_wait_bound(fx->h, "p");
    assert_string_equal(node, "node-a");
    free(node);
    /* the binding extender was skipped too: DefaultBinder bound the pod */
    assert_int_equal(harness_count(fx->h, "create", "pods/binding"), 1);
}

static void non_ignorable_down_fails_the_cycle(void **state)
{
    sf_fixture *fx = *state;
    int port = harness_free_port();
    char want[256];

    assert_true(port > 0);
    create_node(fx, "node-a");
    start_with(fx, "- urlPrefix: http://127.0.0.1:%d\n  filterVerb: filter\n", port);
    create_pod(fx, "p", "100m", 0, 0);
    snprintf(want, sizeof(want),
             "Post \"http://127.0.0.1:%d/filter\": dial tcp 127.0.0.1:%d: connect: connection "
             "refused",
             port, port);
    char *msg = sf_wait_unschedulable(fx->h, "p", "Post ");
    assert_string_equal(msg, want);
    free(msg);
    cJSON *ev = sf_wait_event(fx->h, "p", "FailedScheduling");
    assert_string_equal(sf_str_at(ev, "note", NULL), want);
    cJSON_Delete(ev);
    cJSON *pod = sf_get(fx->h, PODS "/p");
    const cJSON *c =
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
                               cJSON_GetObjectItemCaseSensitive(pod, "status"), "conditions"),
                           0);
    assert_string_equal(sf_str_at(c, "reason", NULL), "SchedulerError");
    cJSON_Delete(pod);
}

/* ------------------------------------------------------------------ */
/* Preemption                                                          */
/* ------------------------------------------------------------------ */

/* Vetoes every candidate: no node is left to preempt on. */
static char *preempt_veto(void *ud, const char *verb, const cJSON *args, int *code)
{
    (void)ud;
    (void)args;
    (void)code;
    return dup_text(strcmp(verb, "preempt") == 0 ? "{\"NodeNameToMetaVictims\":{}}" : "{}");
}

static void preemption_asks_the_extender(void **state)
{
    sf_fixture *fx = *state;
    es_server *es;

    assert_int_equal(es_start(preempt_veto, NULL, &es), KUBE_OK);
    create_node(fx, "node-a");
    start_with(fx,
               "- urlPrefix: http://127.0.0.1:%d\n  preemptVerb: preempt\n"
               "  nodeCacheCapable: true\n",
               es_port(es));
    create_pod(fx, "low", "3", 0, 0);
    free(sf_wait_bound(fx->h, "low"));
    create_pod(fx, "high", "3", 0, 1000);
    char *msg = sf_wait_unschedulable(fx->h, "high", "preemption");
    assert_non_null(strstr(msg, "preemption: no candidate node for preemption"));
    free(msg);
    cJSON *args = es_last(es, "preempt");
    assert_non_null(args);
    cJSON *victims = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(args, "NodeNameToMetaVictims"), "node-a");
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(args, "NodeNameToVictims")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(victims, "Pods")), 1);
    cJSON *low = sf_get(fx->h, PODS "/low");
    assert_string_equal(
        sf_str_at(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(victims, "Pods"), 0), "UID",
                  NULL),
        sf_str_at(low, "metadata", "uid"));
    cJSON_Delete(low);
    cJSON_Delete(args);
    es_stop(es);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, sf_setup, sf_teardown)

int test_group_extender_integration(void)
{
    const struct CMUnitTest tests[] = {
        T(filter_narrows_the_nodes),
        T(filter_failures_make_the_fit_error),
        T(prioritize_changes_the_winner),
        T(prioritizers_add_up),
        T(bind_is_delegated),
        T(ignorable_down_is_skipped),
        T(non_ignorable_down_fails_the_cycle),
        T(preemption_asks_the_extender),
        T(filter_error_fails_the_cycle),
        T(https_with_tls_config),
    };
    return cmocka_run_group_tests_name("extender_integration", tests, NULL, NULL);
}
