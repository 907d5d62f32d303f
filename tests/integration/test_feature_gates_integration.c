/*
 * tests/integration/test_feature_gates_integration.c - --feature-gates
 * against the emulator, where a gate changes what the scheduler writes:
 * PodDisruptionConditions (on by default) gives a preemption victim the
 * DisruptionTarget condition before deleting it; off, the victim is
 * deleted without it. The victim holds a finalizer so it can be read
 * after its deletion.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feature_gates.h"
#include "feature_gates_testing.h"
#include "integration/sched_fixture.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"

#define PODS "/api/v1/namespaces/default/pods"

static void create_pod(sf_fixture *fx, const char *name, int priority, const char *finalizers)
{
    sf_create(fx->h, PODS,
              "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
              "\"default\",\"finalizers\":[%s]},\"spec\":{\"priority\":%d,\"containers\":[{"
              "\"name\":\"c\",\"image\":\"registry.invalid/pause:3.9\",\"resources\":{\"requests\":"
              "{\"cpu\":\"3\"}}}]}}",
              name, finalizers, priority);
}

/* The pod if it has a deletionTimestamp now (cJSON_Delete() it), else
 * NULL. */
static cJSON *terminating_pod(sf_fixture *fx, const char *name)
{
    cJSON *pod = sf_get(fx->h, PODS "/%s", name);
    if (sf_str_at(pod, "metadata", "deletionTimestamp"))
        return pod;
    cJSON_Delete(pod);
    return NULL;
}

/* The pod once it has a deletionTimestamp (cJSON_Delete() it). */
static cJSON *wait_terminating(sf_fixture *fx, const char *name)
{
    cJSON *pod = NULL;
    WAIT_TRUE_MS_MSG((pod = terminating_pod(fx, name)) != NULL, SF_WAIT_MS,
                     "pod %s was not deleted", name);
    return pod;
}

/* The DisruptionTarget condition of pod, or NULL. */
static const cJSON *disruption_target(const cJSON *pod)
{
    const cJSON *c;
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(pod, "status");

    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(status, "conditions"))
    {
        const char *type = sf_str_at(c, "type", NULL);
        if (type && strcmp(type, "DisruptionTarget") == 0)
            return c;
    }
    return NULL;
}

/* One node; a low-priority pod fills it; a high-priority pod preempts it
 * with the gates of spec. Returns the victim as read after its deletion. */
static cJSON *preempt_with(void **state, const char *spec)
{
    sf_fixture *fx = *state;
    char err[512] = "";
    char *node;

    assert_int_equal(sched_features_apply(spec, err, sizeof(err)), KUBE_OK);
    sf_create(fx->h, "/api/v1/nodes",
              "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},"
              "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}");
    sf_start_scheduler(fx);
    create_pod(fx, "low", 0, "\"stickyvm.io/test\"");
    node = sf_wait_bound(fx->h, "low");
    free(node);
    create_pod(fx, "high", 1000, "");
    return wait_terminating(fx, "low");
}

static void victims_get_the_disruption_condition(void **state)
{
    cJSON *low = preempt_with(state, "");
    const cJSON *c = disruption_target(low);

    assert_non_null(c);
    assert_string_equal(sf_str_at(c, "reason", NULL), "PreemptionByScheduler");
    assert_string_equal(sf_str_at(c, "status", NULL), "True");
    cJSON_Delete(low);
}

static void without_the_gate_victims_are_deleted_as_they_are(void **state)
{
    cJSON *low = preempt_with(state, "PodDisruptionConditions=false");

    assert_null(disruption_target(low));
    cJSON_Delete(low);
}

static int teardown(void **state)
{
    sched_features_reset();
    return sf_teardown(state);
}

int test_group_feature_gates_integration(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, sf_setup, teardown)
    const struct CMUnitTest tests[] = {
        T(victims_get_the_disruption_condition),
        T(without_the_gate_victims_are_deleted_as_they_are),
    };
#undef T
    return cmocka_run_group_tests_name("feature_gates_integration", tests, NULL, NULL);
}
