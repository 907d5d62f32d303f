/*
 * tests/unit/test_intern.c - the shared pool of repeated strings and arrays
 * (kube/codec/intern.h) and the arena's sharing of staged arrays
 * (kube_arena_share in kube/codec/arena.h).
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

#include "kube/codec/arena.h"
#include "kube/codec/intern.h"
#include "kube/codec/intern_testing.h"
#include "kube/codec/object.h"

static void equal_bytes_give_one_pointer(void **state)
{
    static const char a[] = "registry.invalid/pause:3.9";
    char b[sizeof(a)];
    const void *p, *q;
    (void)state;

    memcpy(b, a, sizeof(a));
    p = kube_intern_bytes(a, sizeof(a));
    q = kube_intern_bytes(b, sizeof(b));
    assert_non_null(p);
    assert_ptr_equal(p, q);
    assert_ptr_not_equal(p, a);
    assert_memory_equal(p, a, sizeof(a));
    assert_int_equal((uintptr_t)p % 8, 0);
    /* a prefix is other bytes */
    q = kube_intern_bytes(a, sizeof(a) - 2);
    assert_non_null(q);
    assert_ptr_not_equal(p, q);
}

static void refuses_empty_null_and_oversized(void **state)
{
    char *big = malloc(KUBE_INTERN_MAX_ENTRY + 1);
    (void)state;

    assert_non_null(big);
    memset(big, 'x', KUBE_INTERN_MAX_ENTRY);
    big[KUBE_INTERN_MAX_ENTRY] = '\0';
    assert_null(kube_intern_bytes(NULL, 4));
    assert_null(kube_intern_bytes("abc", 0));
    assert_null(kube_intern_bytes(big, KUBE_INTERN_MAX_ENTRY + 1));
    assert_non_null(kube_intern_bytes(big, KUBE_INTERN_MAX_ENTRY));
    /* a string of KUBE_INTERN_MAX_ENTRY chars needs one more byte */
    assert_null(kube_intern_str(big));
    assert_null(kube_intern_str(NULL));
    free(big);
}

static void strings_prefer_the_static_table(void **state)
{
    const char *s = kube_intern_str("kubernetes.io/hostname");
    const char *t = kube_intern_str("test-intern.example.com/some-label");
    char copy[64];
    (void)state;

    assert_ptr_equal(s, kube_intern_static("kubernetes.io/hostname"));
    assert_null(kube_intern_static("test-intern.example.com/some-label"));
    assert_non_null(t);
    assert_string_equal(t, "test-intern.example.com/some-label");
    snprintf(copy, sizeof(copy), "%s", t);
    assert_ptr_equal(kube_intern_str(copy), t);
}

static void stats_count_entries_and_hits(void **state)
{
    kube_intern_stats before, after;
    (void)state;

    kube_intern_stats_get(&before);
    assert_non_null(kube_intern_str("test-intern-stats-entry"));
    assert_non_null(kube_intern_str("test-intern-stats-entry"));
    kube_intern_stats_get(&after);
    assert_int_equal(after.entries, before.entries + 1);
    assert_true(after.bytes > before.bytes);
    assert_true(after.hits >= before.hits + 1);
    assert_int_equal(after.refused, before.refused);
}

#define RACE_THREADS 4
#define RACE_STRINGS 300

typedef struct race {
    int id;
    const char *got[RACE_STRINGS];
} race;

static void *race_main(void *arg)
{
    race *r = arg;
    char s[64];

    for (int k = 0; k < RACE_STRINGS; k++) {
        int i = (k * 7 + r->id * 13) % RACE_STRINGS; /* each thread its own order */
        snprintf(s, sizeof(s), "test-intern-race-%d", i);
        r->got[i] = kube_intern_str(s);
    }
    return NULL;
}

static void threads_agree_on_every_entry(void **state)
{
    pthread_t th[RACE_THREADS];
    race *r = calloc(RACE_THREADS, sizeof(*r));
    char s[64];
    (void)state;

    assert_non_null(r);
    for (int t = 0; t < RACE_THREADS; t++) {
        r[t].id = t;
        assert_int_equal(pthread_create(&th[t], NULL, race_main, &r[t]), 0);
    }
    for (int t = 0; t < RACE_THREADS; t++)
        pthread_join(th[t], NULL);
    for (int i = 0; i < RACE_STRINGS; i++) {
        snprintf(s, sizeof(s), "test-intern-race-%d", i);
        assert_non_null(r[0].got[i]);
        assert_string_equal(r[0].got[i], s);
        for (int t = 1; t < RACE_THREADS; t++)
            assert_ptr_equal(r[t].got[i], r[0].got[i]);
    }
    free(r);
}

static void arena_shares_arrays_of_shared_strings(void **state)
{
    kube_arena a;
    kube_arena_stage st;
    const char **v;
    const char *const *kept;
    (void)state;

    kube_arena_init(&a, NULL, 0);
    v = kube_arena_stage_alloc(&a, &st, 2 * sizeof(*v));
    assert_non_null(v);
    v[0] = kube_intern_str("test-intern-arena-a");
    v[1] = "";
    kept = kube_arena_share(&a, &st, v, 2, sizeof(*v), 1);
    assert_non_null(kept);
    assert_ptr_equal(kept, kube_intern_bytes(v, 2 * sizeof(*v)));
    assert_int_equal(kube_arena_used(&a), 0); /* nothing of it in the arena */
    assert_false(kube_arena_owns(&a, kept));
    kube_arena_release(&a);
}

static void arena_keeps_arrays_pointing_into_it(void **state)
{
    kube_arena a;
    kube_arena_stage st;
    const char **v;
    const char *const *kept;
    (void)state;

    kube_arena_init(&a, NULL, 0);
    v = kube_arena_stage_alloc(&a, &st, 2 * sizeof(*v));
    assert_non_null(v);
    v[0] = kube_intern_str("test-intern-arena-b");
    v[1] = kube_arena_strdup(&a, "own-string");
    kept = kube_arena_share(&a, &st, v, 2, sizeof(*v), 1);
    assert_non_null(kept);
    assert_true(kube_arena_owns(&a, kept));
    assert_ptr_equal(kept[0], v[0]);
    assert_string_equal(kept[1], "own-string");
    assert_true(kube_arena_owns(&a, kept[1]));
    kube_arena_release(&a);
}

static void arena_builds_large_arrays_in_place(void **state)
{
    size_t n = KUBE_ARENA_STAGE_SIZE / sizeof(const char *) + 1;
    kube_arena a;
    kube_arena_stage st;
    const char **v;
    (void)state;

    kube_arena_init(&a, NULL, 0);
    v = kube_arena_stage_alloc(&a, &st, n * sizeof(*v));
    assert_non_null(v);
    assert_true(kube_arena_owns(&a, v));
    for (size_t i = 0; i < n; i++)
        assert_null(v[i]); /* zeroed */
    assert_ptr_equal(kube_arena_share(&a, &st, v, n, sizeof(*v), 1), v);
    kube_arena_release(&a);
}

/* Resource names compare by pointer: a full pool refuses new strings but
 * still gives a name its one pointer. */
static void names_are_kept_past_the_limits(void **state)
{
    (void)state;
    char s[32];
    const char *name;

    for (unsigned i = 0; i < KUBE_INTERN_MAX_ENTRIES; i++) {
        snprintf(s, sizeof(s), "filler-%u", i);
        kube_intern_str(s);
    }
    assert_null(kube_intern_str("example.com/late-resource"));
    name = kube_intern_name("example.com/late-resource");
    assert_non_null(name);
    assert_string_equal(name, "example.com/late-resource");
    assert_ptr_equal(kube_intern_name("example.com/late-resource"), name);
    assert_ptr_equal(kube_intern_str("example.com/late-resource"), name);
    assert_ptr_equal(kube_intern_name("cpu"), kube_intern_static("cpu"));
}

int test_group_intern(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(equal_bytes_give_one_pointer),
        cmocka_unit_test(refuses_empty_null_and_oversized),
        cmocka_unit_test(strings_prefer_the_static_table),
        cmocka_unit_test(stats_count_entries_and_hits),
        cmocka_unit_test(threads_agree_on_every_entry),
        cmocka_unit_test(arena_shares_arrays_of_shared_strings),
        cmocka_unit_test(arena_keeps_arrays_pointing_into_it),
        cmocka_unit_test(arena_builds_large_arrays_in_place),
        /* Last: it fills the pool. */
        cmocka_unit_test(names_are_kept_past_the_limits),
    };
    return cmocka_run_group_tests_name("intern", tests, NULL, NULL);
}
