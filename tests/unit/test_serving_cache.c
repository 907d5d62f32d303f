/*
 * tests/unit/test_serving_cache.c - kube/serving/cache.c: the TTL cache of delegated answers
 * (expiry, eviction).
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

static int64_t fake_now;

static int64_t fake_clock(void)
{
    return fake_now;
}

static void cache_expires_and_evicts(void **state)
{
    kube_ttl_cache *c;
    char *v = NULL;
    (void)state;

    fake_now = 1000;
    assert_int_equal(kube_ttl_cache_new(3, &c), KUBE_OK);
    kube_ttl_cache_set_clock(c, fake_clock);
    assert_int_equal(kube_ttl_cache_put(c, "a", "1", 100), KUBE_OK);
    assert_int_equal(kube_ttl_cache_get(c, "a", &v), KUBE_OK);
    assert_string_equal(v, "1");
    free(v);
    assert_int_equal(kube_ttl_cache_put(c, "a", "2", 100), KUBE_OK);
    assert_int_equal(kube_ttl_cache_get(c, "a", &v), KUBE_OK);
    assert_string_equal(v, "2");
    free(v);
    fake_now = 1100;
    assert_int_equal(kube_ttl_cache_get(c, "a", &v), KUBE_ENOTFOUND);
    assert_null(v);
    assert_int_equal(kube_ttl_cache_put(c, "zero", "x", 0), KUBE_OK);
    assert_int_equal(kube_ttl_cache_get(c, "zero", &v), KUBE_ENOTFOUND);
    /* full: expired entries go first, then the one closest to expiry */
    assert_int_equal(kube_ttl_cache_put(c, "b", "b", 50), KUBE_OK);
    assert_int_equal(kube_ttl_cache_put(c, "c", "c", 500), KUBE_OK);
    assert_int_equal(kube_ttl_cache_put(c, "d", "d", 500), KUBE_OK);
    assert_true(kube_ttl_cache_size(c) <= 3);
    assert_int_equal(kube_ttl_cache_put(c, "e", "e", 500), KUBE_OK);
    assert_int_equal(kube_ttl_cache_size(c), 3);
    assert_int_equal(kube_ttl_cache_get(c, "b", &v), KUBE_ENOTFOUND);
    assert_int_equal(kube_ttl_cache_get(c, "e", &v), KUBE_OK);
    free(v);
    kube_ttl_cache_free(c);
}

int test_group_serving_cache(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cache_expires_and_evicts),
    };
    return cmocka_run_group_tests_name("serving_cache", tests, NULL, NULL);
}
