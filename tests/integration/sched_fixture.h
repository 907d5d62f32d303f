/*
 * tests/integration/sched_fixture.h - the fixture and API helpers the
 * scheduler integration tests share: an emulator (tests/harness.h), a
 * client to it, the default-profile configuration without leader election,
 * and the in-process scheduler started once a test's nodes exist.
 *
 *     #define T(fn) cmocka_unit_test_setup_teardown(fn, sf_setup, sf_teardown)
 *     static void test(void **state)
 *     {
 *         sf_fixture *fx = *state;
 *         sf_create(fx->h, "/api/v1/nodes", "{...\"name\":\"%s\"...}", name);
 *         sf_start_scheduler(fx);
 *         char *node = sf_wait_bound(fx->h, "pod");
 *         ...
 *         free(node);
 *     }
 *
 * The helpers assert through cmocka: a failed request or a deadline passed
 * fails the running test. Waits poll with a deadline of SF_WAIT_MS.
 */
#ifndef STICKYVM_TESTS_SCHED_FIXTURE_H
#define STICKYVM_TESTS_SCHED_FIXTURE_H

#include <cjson/cJSON.h>

#include "config/config.h"
#include "harness.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "scheduler.h"

#define SF_WAIT_MS 30000

typedef struct sf_fixture {
    harness *h;
    kube_config *kc;
    kube_client *client;
    sched_config *cfg;
    sched_scheduler *sched; /* NULL until sf_start_scheduler() */
} sf_fixture;

/* cmocka setup: allocates an sf_fixture into *state with a started
 * emulator, its kubeconfig, a client (qps 0) and the loaded configuration;
 * no scheduler yet. sf_teardown() frees all of it. */
int sf_setup(void **state);

/* Starts the scheduler (4 binding workers) on fx's configuration and
 * client into fx->sched; returns once its informers (and so its cache)
 * have synced. fx keeps owning it; sf_teardown() frees it. */
void sf_start_scheduler(sf_fixture *fx);

/* cmocka teardown: stops and frees everything of the sf_fixture in *state,
 * the fixture included. */
int sf_teardown(void **state);

/* POSTs the printf-formatted JSON (at most 4 KB) to path; fails the test
 * with the error and the JSON unless created. Nothing to free. */
void sf_create(harness *h, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* GETs the printf-formatted path: the parsed object, which the caller
 * frees with cJSON_Delete(); fails the test unless 200. */
cJSON *sf_get(harness *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* As sf_get(), but NULL (nothing to free) when the answer is 404. */
cJSON *sf_find(harness *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The string at o.a (b NULL) or o.a.b, or NULL when absent or not a
 * string; borrowed from o (valid while o is). */
const char *sf_str_at(const cJSON *o, const char *a, const char *b);

/* Waits until the default-namespace pod is bound; returns its node, which
 * the caller frees with free(). Fails the test at the deadline. */
char *sf_wait_bound(harness *h, const char *pod);

/* Waits until the default-namespace pod has a PodScheduled=False condition
 * whose message contains `containing`; returns that message, which the
 * caller frees with free(). Fails the test at the deadline. */
char *sf_wait_unschedulable(harness *h, const char *pod, const char *containing);

/* Waits for an events.k8s.io/v1 event in the default namespace regarding
 * the object named `object` with that reason; returns a copy of the first
 * one, which the caller frees with cJSON_Delete(). Fails the test at the
 * deadline. */
cJSON *sf_wait_event(harness *h, const char *object, const char *reason);

#endif
