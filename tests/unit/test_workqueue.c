/*
 * tests/unit/test_workqueue.c - kube/machinery/workqueue: deduplication, a
 * key never handed out twice while processing (and queued again at done
 * when added meanwhile), delayed adds (the earlier wins), the exponential
 * per-key backoff with jitter and its cap, forget, clear and shutdown.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/machinery/workqueue.h"
#include "kube/machinery/workqueue_testing.h"
#include "kube/util/errors.h"

/* Long enough never to pass during a test. */
#define HELD_MS (3600LL * 1000)

static kube_workqueue *new_queue(int64_t base, int64_t max)
{
    kube_workqueue *q = NULL;
    assert_int_equal(kube_workqueue_new(base, max, &q), KUBE_OK);
    return q;
}

/* The next key, which must be want (NULL: none is ready). */
static void expect_get(kube_workqueue *q, const char *want)
{
    char *key = NULL;
    int rc = kube_workqueue_get(q, 0, &key);
    if (!want) {
        assert_int_equal(rc, KUBE_ETIMEDOUT);
        return;
    }
    assert_int_equal(rc, KUBE_OK);
    assert_string_equal(key, want);
    free(key);
}

static void test_dedup_and_order(void **state)
{
    (void)state;
    kube_workqueue *q = new_queue(5, 1000);
    assert_int_equal(kube_workqueue_add(q, "ns/a"), KUBE_OK);
    assert_int_equal(kube_workqueue_add(q, "ns/b"), KUBE_OK);
    assert_int_equal(kube_workqueue_add(q, "ns/a"), KUBE_OK);
    assert_int_equal(kube_workqueue_len(q), 2);
    expect_get(q, "ns/a");
    expect_get(q, "ns/b");
    expect_get(q, NULL);
    kube_workqueue_done(q, "ns/a");
    kube_workqueue_done(q, "ns/b");
    kube_workqueue_free(q);
}

/* A key added while processing is not handed out again before its done,
 * and is queued once at done. */
static void test_processing_key_waits_for_done(void **state)
{
    (void)state;
    kube_workqueue *q = new_queue(5, 1000);
    kube_workqueue_add(q, "k");
    expect_get(q, "k");
    kube_workqueue_add(q, "k");
    kube_workqueue_add(q, "k");
    expect_get(q, NULL);
    kube_workqueue_done(q, "k");
    expect_get(q, "k");
    expect_get(q, NULL);
    kube_workqueue_done(q, "k");
    expect_get(q, NULL);
    kube_workqueue_free(q);
}

/* A held key waits; an earlier add_after (or an add now) wins. */
static void test_add_after_earlier_wins(void **state)
{
    (void)state;
    kube_workqueue *q = new_queue(5, 1000);
    kube_workqueue_add_after(q, "k", HELD_MS);
    assert_int_equal(kube_workqueue_len(q), 1);
    expect_get(q, NULL);
    kube_workqueue_add_after(q, "k", 2 * HELD_MS); /* later: ignored */
    expect_get(q, NULL);
    kube_workqueue_add_after(q, "k", 0);
    expect_get(q, "k");
    kube_workqueue_done(q, "k");
    kube_workqueue_add_after(q, "j", 1);
    char *key = NULL;
    assert_int_equal(kube_workqueue_get(q, 10000, &key), KUBE_OK);
    assert_string_equal(key, "j");
    free(key);
    kube_workqueue_done(q, "j");
    kube_workqueue_free(q);
}

/* base * 2^failures (+ up to 10%), capped at max; forget starts over. */
static void test_backoff_doubles_caps_and_forgets(void **state)
{
    (void)state;
    kube_workqueue *q = new_queue(5, 1000LL * 1000);
    int64_t want = 5, d = 0;
    for (int i = 0; i < 24; i++) {
        assert_int_equal(kube_workqueue_add_rate_limited(q, "k", &d), KUBE_OK);
        assert_true(d >= want && d <= want + want / 10);
        assert_int_equal(kube_workqueue_num_requeues(q, "k"), (unsigned)i + 1);
        want = want * 2 > 1000LL * 1000 ? 1000LL * 1000 : want * 2;
    }
    assert_true(d >= 1000LL * 1000 && d <= 1100LL * 1000);
    kube_workqueue_forget(q, "k");
    assert_int_equal(kube_workqueue_num_requeues(q, "k"), 0);
    assert_int_equal(kube_workqueue_add_rate_limited(q, "k", &d), KUBE_OK);
    assert_int_equal(d, 5);
    kube_workqueue_free(q);
}

static void test_clear_and_shutdown(void **state)
{
    (void)state;
    kube_workqueue *q = new_queue(5, 1000);
    kube_workqueue_add(q, "a");
    kube_workqueue_add_after(q, "b", HELD_MS);
    kube_workqueue_add_rate_limited(q, "c", NULL);
    kube_workqueue_add(q, "p");
    expect_get(q, "a");
    kube_workqueue_add(q, "a"); /* dirty while processing */
    kube_workqueue_clear(q);
    assert_int_equal(kube_workqueue_len(q), 0);
    assert_int_equal(kube_workqueue_num_requeues(q, "c"), 0);
    kube_workqueue_done(q, "a"); /* not queued again: cleared */
    expect_get(q, NULL);
    kube_workqueue_add(q, "d");
    kube_workqueue_shutdown(q);
    char *key = NULL;
    assert_int_equal(kube_workqueue_get(q, 1000, &key), KUBE_ECANCELED);
    assert_null(key);
    assert_int_equal(kube_workqueue_add(q, "e"), KUBE_ECANCELED);
    kube_workqueue_free(q);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    kube_workqueue *q = NULL;
    assert_int_equal(kube_workqueue_new(0, 10, &q), KUBE_EINVAL);
    assert_int_equal(kube_workqueue_new(10, 5, &q), KUBE_EINVAL);
    assert_null(q);
    kube_workqueue_free(NULL);
}

int test_group_workqueue(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dedup_and_order),
        cmocka_unit_test(test_processing_key_waits_for_done),
        cmocka_unit_test(test_add_after_earlier_wins),
        cmocka_unit_test(test_backoff_doubles_caps_and_forgets),
        cmocka_unit_test(test_clear_and_shutdown),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests_name("workqueue", tests, NULL, NULL);
}
