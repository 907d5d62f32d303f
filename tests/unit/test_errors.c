/*
 * tests/unit/test_errors.c - kube/util/errors: the KUBE_E* codes, their names
 * and the mapping from HTTP Status codes and reasons.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "kube/util/errors.h"
#include "kube/util/errors_testing.h"

static void maps_status_codes(void **state)
{
    (void)state;
    assert_int_equal(kube_err_from_status(200, NULL), KUBE_OK);
    assert_int_equal(kube_err_from_status(201, "ignored"), KUBE_OK);
    assert_int_equal(kube_err_from_status(404, "NotFound"), KUBE_ENOTFOUND);
    assert_int_equal(kube_err_from_status(409, "Conflict"), KUBE_ECONFLICT);
    assert_int_equal(kube_err_from_status(409, "AlreadyExists"), KUBE_EEXIST);
    assert_int_equal(kube_err_from_status(410, "Expired"), KUBE_EGONE);
    assert_int_equal(kube_err_from_status(422, "Invalid"), KUBE_EINVALID);
    assert_int_equal(kube_err_from_status(429, NULL), KUBE_ETOOMANY);
    assert_int_equal(kube_err_from_status(503, NULL), KUBE_ESERVER);
    assert_int_equal(kube_err_from_status(401, NULL), KUBE_EUNAUTHORIZED);
    assert_int_equal(kube_err_from_status(403, NULL), KUBE_EFORBIDDEN);
    assert_int_equal(kube_err_from_status(418, NULL), KUBE_EBADREQUEST);
}

static void round_trips_http_codes_and_reasons(void **state)
{
    (void)state;
    assert_int_equal(kube_err_http_code(KUBE_ENOTFOUND), 404);
    assert_int_equal(kube_err_http_code(KUBE_EEXIST), 409);
    assert_int_equal(kube_err_http_code(KUBE_ENOMEM), 500);
    assert_int_equal(kube_err_http_code(12345), 500);
    assert_string_equal(kube_err_reason(KUBE_EEXIST), "AlreadyExists");
    assert_string_equal(kube_err_reason(KUBE_EGONE), "Expired");
    assert_string_equal(kube_strerror(KUBE_ECONFLICT), "conflict");
    assert_string_equal(kube_strerror(-99999), "unknown error");
}

int test_group_errors(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(maps_status_codes),
        cmocka_unit_test(round_trips_http_codes_and_reasons),
    };
    return cmocka_run_group_tests_name("errors", tests, NULL, NULL);
}
