/*
 * tests/unit/test_poller.c - kube/transport/poller.h without transfers: a
 * run returns before its timeout once notified or woken, whether the
 * notification comes before the run or from another thread while the run
 * sleeps in poll(2).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "kube/transport/poller.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"

#define LONG_WAIT_MS 5000 /* a run that waits this long missed its wakeup */

typedef struct fixture {
    CURLM *multi;
    kube_poller *p;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->multi = curl_multi_init();
    assert_non_null(f->multi);
    assert_int_equal(kube_poller_new(f->multi, &f->p), KUBE_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    curl_multi_cleanup(f->multi);
    kube_poller_free(f->p);
    free(f);
    return 0;
}

/* Runs the poller once with LONG_WAIT_MS; returns the milliseconds it took. */
static int64_t timed_run(kube_poller *p)
{
    int64_t start = kube_now_ms();

    kube_poller_run(p, LONG_WAIT_MS);
    return kube_now_ms() - start;
}

static void test_notify_before_run(void **state)
{
    fixture *f = *state;

    kube_poller_notify(f->p);
    assert_true(timed_run(f->p) < LONG_WAIT_MS);
}

static void *notifier(void *arg)
{
    kube_poller_notify(arg);
    return NULL;
}

static void test_notify_from_another_thread(void **state)
{
    fixture *f = *state;
    pthread_t t;

    for (int i = 0; i < 200; i++) {
        assert_int_equal(pthread_create(&t, NULL, notifier, f->p), 0);
        assert_true(timed_run(f->p) < LONG_WAIT_MS);
        pthread_join(t, NULL);
        kube_poller_run(f->p, 0); /* a notification after the run ended */
    }
}

static void *waker(void *arg)
{
    kube_poller_wake(arg);
    return NULL;
}

static void test_wake_from_another_thread(void **state)
{
    fixture *f = *state;
    pthread_t t;

    assert_int_equal(pthread_create(&t, NULL, waker, f->p), 0);
    assert_true(timed_run(f->p) < LONG_WAIT_MS);
    pthread_join(t, NULL);
}

int test_group_poller(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_notify_before_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_notify_from_another_thread, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wake_from_another_thread, setup, teardown),
    };
    return cmocka_run_group_tests_name("poller", tests, NULL, NULL);
}
