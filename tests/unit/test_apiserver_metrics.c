/*
 * tests/unit/test_apiserver_metrics.c - apiserver/metrics.c: stickyvm-apiserver's metrics
 * exposition and its per-user pin counters.
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

static void metrics_render_prometheus_text(void **state)
{
    apis_metrics *m;
    kube_buf b = KUBE_BUF_INIT;
    (void)state;

    assert_int_equal(apis_metrics_new(&m), KUBE_OK);
    apis_metrics_observe(m, "PUT", "pin", 200, 0.003);
    apis_metrics_observe(m, "PUT", "pin", 200, 0.2);
    apis_metrics_observe(m, "BREW", "weird", 418, 0.001);
    apis_metrics_authz(m, KUBE_AUTHZ_CACHE_HIT);
    apis_metrics_conflict_retry(m);
    apis_metrics_inflight(m, 2);
    apis_metrics_inflight(m, -1);
    assert_int_equal(apis_metrics_requests_with_code(m, 200), 2);
    assert_int_equal(apis_metrics_authz_count(m, KUBE_AUTHZ_CACHE_HIT), 1);
    assert_int_equal(apis_metrics_render(m, &b), KUBE_OK);
    assert_non_null(strstr(b.data, "# TYPE stickyvm_apiserver_request_total counter\n"));
    assert_non_null(strstr(
        b.data,
        "stickyvm_apiserver_request_total{verb=\"PUT\",subresource=\"pin\",code=\"200\"} 2\n"));
    /* unknown labels fold into bounded values */
    assert_non_null(strstr(
        b.data,
        "stickyvm_apiserver_request_total{verb=\"other\",subresource=\"\",code=\"418\"} 1\n"));
    /* buckets are cumulative */
    assert_non_null(strstr(
        b.data, "duration_seconds_bucket{verb=\"PUT\",subresource=\"pin\",le=\"0.005\"} 1\n"));
    assert_non_null(strstr(
        b.data, "duration_seconds_bucket{verb=\"PUT\",subresource=\"pin\",le=\"0.25\"} 2\n"));
    assert_non_null(strstr(
        b.data, "duration_seconds_bucket{verb=\"PUT\",subresource=\"pin\",le=\"+Inf\"} 2\n"));
    assert_non_null(strstr(b.data, "duration_seconds_count{verb=\"PUT\",subresource=\"pin\"} 2\n"));
    assert_non_null(strstr(b.data, "stickyvm_apiserver_inflight_requests 1\n"));
    assert_non_null(strstr(b.data, "stickyvm_apiserver_pin_conflict_retries_total 1\n"));
    kube_buf_free(&b);
    apis_metrics_free(m);
}

/* Pin and unpin requests by user and code: the first
 * APIS_METRICS_MAX_USERS users keep their name, the rest fold into
 * "(other)", no identity is user="". */
static void metrics_count_pin_requests_by_bounded_user(void **state)
{
    apis_metrics *m;
    kube_buf b = KUBE_BUF_INIT;
    char user[32];
    (void)state;

    assert_int_equal(apis_metrics_new(&m), KUBE_OK);
    apis_metrics_pin_request(m, "pin", "admin", 200);
    apis_metrics_pin_request(m, "pin", "admin", 200);
    apis_metrics_pin_request(m, "unpin", "system:serviceaccount:ops:drainer", 403);
    apis_metrics_pin_request(m, "pin", NULL, 401);
    for (int i = 0; i < APIS_METRICS_MAX_USERS; i++) {
        snprintf(user, sizeof(user), "user-%d", i);
        apis_metrics_pin_request(m, "pin", user, 404);
    }
    apis_metrics_pin_request(m, "pin", "admin", 409);
    apis_metrics_pin_request(NULL, "pin", "admin", 200);
    assert_int_equal(apis_metrics_render(m, &b), KUBE_OK);
    assert_non_null(strstr(b.data, "# TYPE stickyvm_apiserver_pin_requests_total counter\n"));
    assert_non_null(strstr(b.data, "stickyvm_apiserver_pin_requests_total{subresource=\"pin\","
                                   "user=\"admin\",code=\"200\"} 2\n"));
    assert_non_null(strstr(b.data, "{subresource=\"unpin\",user=\"system:serviceaccount:ops:"
                                   "drainer\",code=\"403\"} 1\n"));
    assert_non_null(strstr(b.data, "{subresource=\"pin\",user=\"\",code=\"401\"} 1\n"));
    /* admin, the drainer and user-0 .. user-(MAX - 3) took the names; a
     * known user keeps its label after that */
    snprintf(user, sizeof(user), "user=\"user-%d\",code=\"404\"} 1\n", APIS_METRICS_MAX_USERS - 3);
    assert_non_null(strstr(b.data, user));
    snprintf(user, sizeof(user), "user=\"user-%d\"", APIS_METRICS_MAX_USERS - 2);
    assert_null(strstr(b.data, user));
    assert_non_null(strstr(b.data, "{subresource=\"pin\",user=\"(other)\",code=\"404\"} 2\n"));
    assert_non_null(strstr(b.data, "{subresource=\"pin\",user=\"admin\",code=\"409\"} 1\n"));
    kube_buf_free(&b);
    apis_metrics_free(m);
}

int test_group_apiserver_metrics(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(metrics_render_prometheus_text),
        cmocka_unit_test(metrics_count_pin_requests_by_bounded_user),
    };
    return cmocka_run_group_tests_name("apiserver_metrics", tests, NULL, NULL);
}
