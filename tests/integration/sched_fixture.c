/*
 * tests/integration/sched_fixture.c - the scheduler integration tests'
 * shared fixture and API helpers (sched_fixture.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sched_fixture.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "unit/test_plugin_util.h"
#include "scheduler_testing.h"
#include "kube/transport/config_testing.h"

#define PODS "/api/v1/namespaces/default/pods"

static const char config_yaml[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                  "kind: KubeSchedulerConfiguration\n"
                                  "leaderElection:\n"
                                  "  leaderElect: false\n";

int sf_setup(void **state)
{
    sf_fixture *fx = calloc(1, sizeof(*fx));
    kube_client_options o;
    char err[512] = "";

    assert_non_null(fx);
    assert_int_equal(harness_start(NULL, &fx->h), KUBE_OK);
    assert_int_equal(kube_config_from_file(harness_kubeconfig(fx->h), &fx->kc, err, sizeof(err)),
                     KUBE_OK);
    kube_client_options_default(&o);
    o.qps = 0;
    assert_int_equal(kube_client_new(fx->kc, &o, &fx->client), KUBE_OK);
    if (tp_config_load(config_yaml, "test.yaml", NULL, &fx->cfg, err, sizeof(err)) != KUBE_OK)
        fail_msg("config: %s", err);
    *state = fx;
    return 0;
}

void sf_start_scheduler(sf_fixture *fx)
{
    sched_scheduler_options so;
    char err[512] = "";

    memset(&so, 0, sizeof(so));
    so.config = fx->cfg;
    so.client = fx->client;
    so.binding_workers = 4;
    if (sched_scheduler_new(&so, &fx->sched, err, sizeof(err)) != KUBE_OK)
        fail_msg("sched_scheduler_new: %s", err);
    assert_int_equal(sched_scheduler_start(fx->sched), KUBE_OK);
    assert_int_equal(sched_scheduler_wait_synced(fx->sched, SF_WAIT_MS), KUBE_OK);
}

int sf_teardown(void **state)
{
    sf_fixture *fx = *state;

    sched_scheduler_free(fx->sched);
    sched_config_free(fx->cfg);
    kube_client_free(fx->client);
    kube_config_free(fx->kc);
    harness_stop(fx->h);
    free(fx);
    return 0;
}

void sf_create(harness *h, const char *path, const char *fmt, ...)
{
    char json[4096];
    va_list ap;
    int rc;

    va_start(ap, fmt);
    vsnprintf(json, sizeof(json), fmt, ap);
    va_end(ap);
    if ((rc = harness_create(h, path, json, NULL)) != KUBE_OK)
        fail_msg("create %s: %s (%s)", path, kube_strerror(rc), json);
}

/* GET the formatted path: the parsed object (caller deletes); NULL when
 * missing_ok and the answer is 404; fails the test on any other non-200. */
static cJSON *vget(harness *h, int missing_ok, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static cJSON *vget(harness *h, int missing_ok, const char *fmt, va_list ap)
{
    char path[512];
    long status = 0;
    cJSON *j = NULL;

    vsnprintf(path, sizeof(path), fmt, ap);
    assert_int_equal(harness_request_json(h, NULL, "GET", path, NULL, &status, &j), KUBE_OK);
    if (missing_ok && status == 404) {
        cJSON_Delete(j);
        return NULL;
    }
    assert_int_equal(status, 200);
    return j;
}

cJSON *sf_get(harness *h, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    cJSON *j = vget(h, 0, fmt, ap);
    va_end(ap);
    return j;
}

cJSON *sf_find(harness *h, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    cJSON *j = vget(h, 1, fmt, ap);
    va_end(ap);
    return j;
}

const char *sf_str_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    x = b ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* pod's spec.nodeName now (caller frees), or NULL while unbound. */
static char *bound_node(harness *h, const char *pod)
{
    cJSON *p = sf_get(h, PODS "/%s", pod);
    const char *node = sf_str_at(p, "spec", "nodeName");
    char *copy = node && *node ? strdup(node) : NULL;
    cJSON_Delete(p);
    return copy;
}

char *sf_wait_bound(harness *h, const char *pod)
{
    char *node = NULL;

    WAIT_TRUE_MS_MSG((node = bound_node(h, pod)) != NULL, SF_WAIT_MS,
                     "pod %s not bound within %d ms", pod, SF_WAIT_MS);
    return node;
}

/* The message of p's PodScheduled=False condition containing `containing`
 * (caller frees), or NULL. */
static char *unschedulable_message(const cJSON *p, const char *containing)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(
                              cJSON_GetObjectItemCaseSensitive(p, "status"), "conditions"))
    {
        const char *type = sf_str_at(c, "type", NULL), *status = sf_str_at(c, "status", NULL);
        const char *msg = sf_str_at(c, "message", NULL);
        if (type && status && msg && !strcmp(type, "PodScheduled") && !strcmp(status, "False") &&
            strstr(msg, containing))
            return strdup(msg);
    }
    return NULL;
}

/* The message of pod's PodScheduled=False condition containing
 * `containing` now (caller frees), or NULL. */
static char *pod_unschedulable_message(harness *h, const char *pod, const char *containing)
{
    cJSON *p = sf_get(h, PODS "/%s", pod);
    char *msg = unschedulable_message(p, containing);
    cJSON_Delete(p);
    return msg;
}

char *sf_wait_unschedulable(harness *h, const char *pod, const char *containing)
{
    char *msg = NULL;

    WAIT_TRUE_MS_MSG((msg = pod_unschedulable_message(h, pod, containing)) != NULL, SF_WAIT_MS,
                     "pod %s never reported PodScheduled=False with \"%s\"", pod, containing);
    return msg;
}

/* A copy of the first event regarding object with this reason now (caller
 * frees), or NULL. */
static cJSON *find_event(harness *h, const char *object, const char *reason)
{
    cJSON *list = sf_get(h, "/apis/events.k8s.io/v1/namespaces/default/events"), *copy = NULL;
    const cJSON *ev;

    cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const char *name = sf_str_at(ev, "regarding", "name");
        const char *r = sf_str_at(ev, "reason", NULL);
        if (name && r && !strcmp(name, object) && !strcmp(r, reason)) {
            copy = cJSON_Duplicate(ev, 1);
            break;
        }
    }
    cJSON_Delete(list);
    return copy;
}

cJSON *sf_wait_event(harness *h, const char *object, const char *reason)
{
    cJSON *ev = NULL;

    WAIT_TRUE_MS_MSG((ev = find_event(h, object, reason)) != NULL, SF_WAIT_MS, "no %s event for %s",
                     reason, object);
    return ev;
}
