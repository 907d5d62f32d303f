/*
 * tests/unit/test_healthz.c - kube/serving/healthz.h: the health paths
 * (/healthz, /livez, /readyz, one check, verbose, exclude) read from a
 * request target.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "kube/serving/healthz.h"

static void reads_health_paths(void **state)
{
    kube_healthz_request r;
    (void)state;

    assert_int_equal(kube_healthz_parse("/readyz?verbose&exclude=a%2Db&exclude=c", &r), 1);
    assert_int_equal(r.root, KUBE_READYZ);
    assert_string_equal(r.check, "");
    assert_true(r.verbose);
    assert_int_equal(r.n_excludes, 2);
    assert_string_equal(r.excludes[0], "a-b");
    assert_string_equal(r.excludes[1], "c");
    assert_int_equal(kube_healthz_parse("/livez/ping", &r), 1);
    assert_int_equal(r.root, KUBE_LIVEZ);
    assert_string_equal(r.check, "ping");
    assert_false(r.verbose);
    assert_int_equal(kube_healthz_parse("/healthz", &r), 1);
    assert_int_equal(r.root, KUBE_HEALTHZ);
    assert_int_equal(kube_healthz_parse("/healthzx", &r), 0);
    assert_int_equal(kube_healthz_parse("/healthz/", &r), 0);
    assert_int_equal(kube_healthz_parse("/metrics", &r), 0);
    assert_int_equal(kube_healthz_parse("readyz", &r), 0);
}

int test_group_healthz(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_health_paths),
    };
    return cmocka_run_group_tests_name("healthz", tests, NULL, NULL);
}
