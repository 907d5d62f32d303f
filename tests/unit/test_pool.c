/*
 * tests/unit/test_pool.c - kube/serving/pool.c: the worker pool runs every job.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube/serving/authsource.h"
#include "kube/serving/authsource_testing.h"
#include "kube/serving/cache.h"
#include "kube/serving/certs.h"
#include "kube/serving/certs_testing.h"
#include "kube/serving/delegate.h"
#include "apiserver/metrics.h"
#include "apiserver/options.h"
#include "apiserver/options_testing.h"
#include "kube/serving/pool.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/serving/cache_testing.h"
#include "metrics_testing.h"
#include "kube/serving/authn_testing.h"

static atomic_int jobs_run;

static void job(void *arg)
{
    (void)arg;
    atomic_fetch_add(&jobs_run, 1);
}

static void pool_runs_every_job(void **state)
{
    kube_pool *p;
    kube_pool *none;
    (void)state;

    atomic_store(&jobs_run, 0);
    assert_int_equal(kube_pool_new(0, &none), KUBE_EINVAL);
    assert_int_equal(kube_pool_new(4, &p), KUBE_OK);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(kube_pool_submit(p, job, NULL), KUBE_OK);
    kube_pool_free(p);
    assert_int_equal(atomic_load(&jobs_run), 1000);
}

int test_group_pool(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pool_runs_every_job),
    };
    return cmocka_run_group_tests_name("pool", tests, NULL, NULL);
}
