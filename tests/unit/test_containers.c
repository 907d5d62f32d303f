/*
 * tests/unit/test_containers.c - the one growable array (kube/util/array.h),
 * the one string map (kube/util/strmap.h) and what they stand on: growth and
 * its failure on overflow, distinct adds, put/get/replace/delete across many
 * keys and tombstones, iteration; the FNV-1a of kube/util/hash.h against the
 * reference vectors, the xorshift64 of kube/util/rand.h (and its per-thread
 * state), and the one backoff, kube/util/backoff.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/array.h"
#include "kube/util/errors.h"
#include "kube/util/hash.h"
#include "kube/util/backoff.h"
#include "kube/util/rand.h"
#include "kube/util/strmap.h"

static void array_grows_and_keeps_items(void **state)
{
    int *v = NULL;
    size_t n = 0, cap = 0;
    (void)state;
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(KUBE_ARRAY_RESERVE(v, cap, n + 1), KUBE_OK);
        assert_true(cap >= n + 1);
        v[n++] = i;
    }
    for (int i = 0; i < 1000; i++)
        assert_int_equal(v[i], i);
    size_t before = cap;
    assert_int_equal(KUBE_ARRAY_RESERVE(v, cap, 10), KUBE_OK); /* fits: unchanged */
    assert_int_equal(cap, before);
    free(v);
}

static void array_refuses_overflow_unchanged(void **state)
{
    char *v = NULL;
    size_t cap = 0;
    (void)state;
    assert_int_equal(KUBE_ARRAY_RESERVE(v, cap, 3), KUBE_OK);
    assert_int_equal(cap, 4);
    char *kept = v;
    assert_int_equal(kube_array_reserve(&v, &cap, SIZE_MAX, 8), KUBE_ENOMEM);
    assert_ptr_equal(v, kept);
    assert_int_equal(cap, 4);
    free(v);
}

static void array_adds_distinct_strings(void **state)
{
    const char **set = NULL;
    size_t n = 0, cap = 0;
    char copy[] = "b";
    (void)state;
    assert_int_equal(kube_array_add_distinct(&set, &n, &cap, "a"), KUBE_OK);
    assert_int_equal(kube_array_add_distinct(&set, &n, &cap, "b"), KUBE_OK);
    assert_int_equal(kube_array_add_distinct(&set, &n, &cap, copy), KUBE_OK); /* equal text */
    assert_int_equal(kube_array_add_distinct(&set, &n, &cap, "a"), KUBE_OK);
    assert_int_equal(n, 2);
    assert_string_equal(set[0], "a");
    assert_string_equal(set[1], "b");
    free(set);
}

static void count_entry(void *ud, const char *key, void *value)
{
    (void)key;
    *(size_t *)ud += (size_t)(uintptr_t)value;
}

static void strmap_puts_gets_deletes(void **state)
{
    kube_strmap m = KUBE_STRMAP_INIT;
    char key[32];
    void *old = (void *)1;
    size_t sum = 0;
    (void)state;
    assert_null(kube_strmap_get(&m, "absent"));
    assert_null(kube_strmap_del(&m, "absent"));
    for (uintptr_t i = 1; i <= 500; i++) {
        snprintf(key, sizeof(key), "node-%lu", (unsigned long)i);
        assert_int_equal(kube_strmap_put(&m, key, (void *)i, &old), KUBE_OK);
        assert_null(old);
    }
    assert_int_equal(kube_strmap_len(&m), 500);
    assert_int_equal(kube_strmap_put(&m, "node-7", (void *)700, &old), KUBE_OK);
    assert_ptr_equal(old, (void *)7);
    assert_ptr_equal(kube_strmap_get(&m, "node-7"), (void *)700);
    for (uintptr_t i = 1; i <= 500; i += 2) { /* leave tombstones behind */
        snprintf(key, sizeof(key), "node-%lu", (unsigned long)i);
        assert_non_null(kube_strmap_del(&m, key));
    }
    assert_int_equal(kube_strmap_len(&m), 250);
    assert_null(kube_strmap_get(&m, "node-1"));
    assert_ptr_equal(kube_strmap_get(&m, "node-2"), (void *)2);
    kube_strmap_foreach(&m, count_entry, &sum);
    assert_int_equal(sum, 250 * 251); /* 2 + 4 + ... + 500 */
    kube_strmap_free(&m);
    assert_int_equal(kube_strmap_len(&m), 0);
}

/* The FNV-1a 64 test vectors of the reference (isthe.com/chongo/tech/comp/fnv). */
static void fnv1a_reference_vectors(void **state)
{
    (void)state;
    assert_true(kube_fnv1a_str(KUBE_FNV1A_INIT, "") == 0xcbf29ce484222325ULL);
    assert_true(kube_fnv1a_str(KUBE_FNV1A_INIT, "a") == 0xaf63dc4c8601ec8cULL);
    assert_true(kube_fnv1a_str(KUBE_FNV1A_INIT, "foobar") == 0x85944171f73967e8ULL);
    assert_true(kube_fnv1a_bytes(KUBE_FNV1A_INIT, "foobar", 6) == 0x85944171f73967e8ULL);
    /* Chained: the hash of "foo" extended by "bar" is the hash of "foobar". */
    assert_true(kube_fnv1a_str(kube_fnv1a_str(KUBE_FNV1A_INIT, "foo"), "bar") ==
                0x85944171f73967e8ULL);
    assert_true(kube_fnv1a_byte(kube_fnv1a_str(KUBE_FNV1A_INIT, "fooba"), 'r') ==
                0x85944171f73967e8ULL);
}

/* A zero state still draws; draws are never 0 and fill [0, 1) evenly. */
static void rand_never_zero_and_spread(void **state)
{
    (void)state;
    uint64_t s = 0;
    int buckets[10] = {0};

    assert_true(kube_rand_next(&s) != 0);
    assert_true(s != 0);
    assert_true(kube_rand_seed() != 0);
    for (int i = 0; i < 10000; i++) {
        double u = kube_rand_unit(&s);
        assert_true(u >= 0.0 && u < 1.0);
        buckets[(int)(u * 10)]++;
    }
    for (int i = 0; i < 10; i++)
        assert_in_range(buckets[i], 800, 1200);
}

/* Each thread draws from its own state: two threads get different
 * sequences, and one thread's state persists between draws. */
static void *draw_local(void *arg)
{
    *(uint64_t *)arg = kube_rand_next(kube_rand_local());
    return NULL;
}

static void rand_local_is_per_thread(void **state)
{
    (void)state;
    uint64_t a = 0, b = 0;
    pthread_t t1, t2;
    uint64_t *mine = kube_rand_local();
    assert_ptr_equal(mine, kube_rand_local());
    assert_true(*mine != 0);
    assert_int_equal(pthread_create(&t1, NULL, draw_local, &a), 0);
    assert_int_equal(pthread_create(&t2, NULL, draw_local, &b), 0);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    assert_true(a != 0 && b != 0 && a != b);
}

/* wait.Backoff: doubling from base to the cap, jitter after the cap (up
 * for a positive jitter, down for a negative one), wait.Jitter. */
static void backoff_as_wait_backoff(void **state)
{
    (void)state;
    kube_backoff b = {100, 1000, 2.0, 0.0};
    assert_int_equal(kube_backoff_at(&b, 0, 0.5), 100);
    assert_int_equal(kube_backoff_at(&b, 3, 0.5), 800);
    assert_int_equal(kube_backoff_at(&b, 4, 0.5), 1000);
    assert_int_equal(kube_backoff_at(&b, 60, 0.5), 1000);
    b.jitter = 0.1;
    assert_int_equal(kube_backoff_at(&b, 60, 0.5), 1050); /* past the cap, as upstream */
    b.jitter = -0.5;
    assert_int_equal(kube_backoff_at(&b, 60, 0.0), 1000);
    assert_int_equal(kube_backoff_at(&b, 60, 0.5), 750);
    kube_backoff zero = {0, 0, 0.0, 0.0}; /* base 1 ms, no growth, no cap */
    assert_int_equal(kube_backoff_at(&zero, 5, 0.9), 1);
    kube_backoff big = {1, 0, 10.0, 0.0};
    assert_int_equal(kube_backoff_at(&big, 3, 0.0), 1000);
    for (int i = 0; i < 1000; i++) {
        int64_t d = kube_jitter(1000, 1.2);
        assert_true(d >= 1000 && d < 2200);
        d = kube_backoff_delay(&(kube_backoff){100, 1000, 2.0, 1.0}, 2);
        assert_true(d >= 400 && d < 800);
    }
    assert_int_equal(kube_jitter(1000, 0.0), 1000);
}

int test_group_containers(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(array_grows_and_keeps_items),
        cmocka_unit_test(array_refuses_overflow_unchanged),
        cmocka_unit_test(array_adds_distinct_strings),
        cmocka_unit_test(strmap_puts_gets_deletes),
        cmocka_unit_test(fnv1a_reference_vectors),
        cmocka_unit_test(rand_never_zero_and_spread),
        cmocka_unit_test(rand_local_is_per_thread),
        cmocka_unit_test(backoff_as_wait_backoff),
    };
    return cmocka_run_group_tests_name("containers", tests, NULL, NULL);
}
