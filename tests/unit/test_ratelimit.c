/*
 * tests/unit/test_ratelimit.c - the token bucket, on a hand-driven clock.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>

#include "kube/util/errors.h"
#include "kube/transport/ratelimit.h"
#include "kube/transport/ratelimit_testing.h"

#define MS 1000000LL

typedef struct fake_clock {
    int64_t now;
    int64_t slept;
    int sleeps;
} fake_clock;

static int64_t fake_now(void *ud)
{
    return ((fake_clock *)ud)->now;
}

/* Sleeping advances the fake time, as a real sleep would. */
static void fake_sleep(void *ud, int64_t ns)
{
    fake_clock *fc = ud;
    fc->now += ns;
    fc->slept += ns;
    fc->sleeps++;
}

static kube_ratelimit *new_limiter(double qps, int burst, fake_clock *fc)
{
    kube_clock clock = {fake_now, fake_sleep, fc};
    kube_ratelimit *rl = NULL;

    fc->now = 1000 * MS;
    assert_int_equal(kube_ratelimit_new(qps, burst, &clock, &rl), KUBE_OK);
    return rl;
}

static void burst_then_spaced_at_qps(void **state)
{
    fake_clock fc = {0};
    kube_ratelimit *rl = new_limiter(10, 3, &fc);
    (void)state;

    /* the bucket starts full: burst requests pass at once */
    for (int i = 0; i < 3; i++)
        assert_int_equal(kube_ratelimit_reserve(rl), 0);
    /* then each waits 1/qps more than the previous reservation */
    assert_int_equal(kube_ratelimit_reserve(rl), 100 * MS);
    assert_int_equal(kube_ratelimit_reserve(rl), 200 * MS);
    /* after 1 s the debt (2 tokens) is repaid and 8 more accumulate, capped
     * at burst */
    fc.now += 1000 * MS;
    for (int i = 0; i < 3; i++)
        assert_int_equal(kube_ratelimit_reserve(rl), 0);
    assert_int_equal(kube_ratelimit_reserve(rl), 100 * MS);
    kube_ratelimit_free(rl);
}

static void wait_sleeps_on_the_clock(void **state)
{
    fake_clock fc = {0};
    kube_ratelimit *rl = new_limiter(4, 1, &fc);
    (void)state;

    kube_ratelimit_wait(rl);
    assert_int_equal(fc.sleeps, 0);
    for (int i = 0; i < 4; i++)
        kube_ratelimit_wait(rl);
    /* four more requests at 4 qps take one second of (fake) sleep */
    assert_int_equal(fc.sleeps, 4);
    assert_int_equal(fc.slept, 1000 * MS);
    kube_ratelimit_free(rl);
}

static void try_accept_never_borrows(void **state)
{
    fake_clock fc = {0};
    kube_ratelimit *rl = new_limiter(2, 2, &fc);
    (void)state;

    assert_int_equal(kube_ratelimit_try_accept(rl), 1);
    assert_int_equal(kube_ratelimit_try_accept(rl), 1);
    assert_int_equal(kube_ratelimit_try_accept(rl), 0);
    fc.now += 250 * MS;
    assert_int_equal(kube_ratelimit_try_accept(rl), 0);
    fc.now += 250 * MS;
    assert_int_equal(kube_ratelimit_try_accept(rl), 1);
    assert_int_equal(kube_ratelimit_try_accept(rl), 0);
    kube_ratelimit_free(rl);
}

static void zero_qps_is_unlimited(void **state)
{
    fake_clock fc = {0};
    kube_ratelimit *rl = new_limiter(0, 0, &fc);
    (void)state;

    for (int i = 0; i < 1000; i++)
        kube_ratelimit_wait(rl);
    assert_int_equal(fc.sleeps, 0);
    assert_int_equal(kube_ratelimit_try_accept(rl), 1);
    kube_ratelimit_free(rl);
}

static void rejects_qps_without_burst(void **state)
{
    kube_ratelimit *rl = (kube_ratelimit *)1;
    (void)state;

    assert_int_equal(kube_ratelimit_new(5, 0, NULL, &rl), KUBE_EINVAL);
    assert_null(rl);
    /* the real clock works too */
    assert_int_equal(kube_ratelimit_new(1000, 1, NULL, &rl), KUBE_OK);
    kube_ratelimit_wait(rl);
    kube_ratelimit_wait(rl);
    kube_ratelimit_free(rl);
}

int test_group_ratelimit(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(burst_then_spaced_at_qps),  cmocka_unit_test(wait_sleeps_on_the_clock),
        cmocka_unit_test(try_accept_never_borrows),  cmocka_unit_test(zero_qps_is_unlimited),
        cmocka_unit_test(rejects_qps_without_burst),
    };
    return cmocka_run_group_tests_name("ratelimit", tests, NULL, NULL);
}
