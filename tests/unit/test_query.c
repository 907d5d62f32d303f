/*
 * tests/unit/test_query.c - kube/serving/query.h: a request target's query
 * string as url.ParseQuery reads it (pairs decoded, empty pairs skipped, a
 * bare key), one parameter, and the unescaping rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "kube/serving/query.h"
#include "kube/util/errors.h"

/* url.ParseQuery's pairs: decoded, empty pairs skipped, a bare key. */
static void reads_query_pairs(void **state)
{
    const char *q = "a=1&&b%20c=x+y%2Fz&flag&bad=%zz&nul=%00x";
    kube_query_pair p;
    (void)state;

    assert_int_equal(kube_query_next(&q, &p), 1);
    assert_string_equal(p.key, "a");
    assert_string_equal(p.value, "1");
    assert_true(p.has_value);
    assert_int_equal(kube_query_next(&q, &p), 1);
    assert_string_equal(p.key, "b c");
    assert_string_equal(p.value, "x y/z");
    assert_int_equal(p.raw_value_len, 7);
    assert_int_equal(kube_query_next(&q, &p), 1);
    assert_string_equal(p.key, "flag");
    assert_false(p.has_value);
    assert_string_equal(p.value, "");
    assert_int_equal(kube_query_next(&q, &p), 1);
    assert_int_equal(p.key_rc, KUBE_OK);
    assert_int_equal(p.value_rc, KUBE_EBADREQUEST);
    assert_int_equal(kube_query_next(&q, &p), 1);
    assert_int_equal(p.value_rc, KUBE_OK);
    assert_int_equal(p.value_len, 2); /* the NUL is kept, and counted */
    assert_int_equal(kube_query_next(&q, &p), 0);
    q = NULL;
    assert_int_equal(kube_query_next(&q, &p), 0);
}

static void gets_one_parameter(void **state)
{
    char v[8];
    (void)state;

    assert_int_equal(kube_query_get("x=1&watch=true&watch=0", "watch", v, sizeof(v)), KUBE_OK);
    assert_string_equal(v, "true");
    assert_int_equal(kube_query_get("x=1", "watch", v, sizeof(v)), KUBE_ENOTFOUND);
    assert_int_equal(kube_query_get(NULL, "watch", v, sizeof(v)), KUBE_ENOTFOUND);
    assert_int_equal(kube_query_get("watch=%0", "watch", v, sizeof(v)), KUBE_EBADREQUEST);
    assert_int_equal(kube_query_get("w%zz=1&watch=1", "watch", v, sizeof(v)), KUBE_EBADREQUEST);
    assert_int_equal(kube_query_get("watch=a%00", "watch", v, sizeof(v)), KUBE_EBADREQUEST);
    assert_int_equal(kube_query_get("watch=123456789", "watch", v, sizeof(v)), KUBE_ERANGE);
}

/* url.PathUnescape: percent escapes only, a '+' stays. */
static void unescapes_paths_and_queries(void **state)
{
    char out[16];
    size_t n;
    (void)state;

    assert_int_equal(kube_path_unescape("a+b%2Fc", 7, out, sizeof(out), &n), KUBE_OK);
    assert_string_equal(out, "a+b/c");
    assert_int_equal(kube_query_unescape("a+b%2Fc", 7, out, sizeof(out), &n), KUBE_OK);
    assert_string_equal(out, "a b/c");
    assert_int_equal(kube_path_unescape("%zz", 3, out, sizeof(out), &n), KUBE_EBADREQUEST);
    assert_int_equal(kube_path_unescape("abc", 3, out, 3, &n), KUBE_ERANGE);
}

int test_group_query(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_query_pairs),
        cmocka_unit_test(gets_one_parameter),
        cmocka_unit_test(unescapes_paths_and_queries),
    };
    return cmocka_run_group_tests_name("query", tests, NULL, NULL);
}
