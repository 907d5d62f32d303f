/*
 * tests/unit/test_buf.c - kube/util/buf: appending and formatting, query
 * escaping, handing the data over, strict integer parsing, truncating copies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"

static void appends_and_formats(void **state)
{
    kube_buf b = KUBE_BUF_INIT;
    (void)state;
    assert_int_equal(kube_buf_puts(&b, "pods/"), KUBE_OK);
    assert_int_equal(kube_buf_printf(&b, "%s-%d", "vm", 42), KUBE_OK);
    assert_string_equal(b.data, "pods/vm-42");
    assert_int_equal(b.len, 10);
    kube_buf_reset(&b);
    assert_string_equal(b.data, "");
    for (int i = 0; i < 1000; i++)
        assert_int_equal(kube_buf_puts(&b, "x"), KUBE_OK);
    assert_int_equal(b.len, 1000);
    kube_buf_free(&b);
    assert_null(b.data);
}

static void escapes_query_values(void **state)
{
    kube_buf b = KUBE_BUF_INIT;
    (void)state;
    assert_int_equal(kube_buf_put_escaped(&b, "spec.nodeName=a b/c~_-."), KUBE_OK);
    assert_string_equal(b.data, "spec.nodeName%3Da%20b%2Fc~_-.");
    kube_buf_free(&b);
}

static void quotes_json_strings(void **state)
{
    kube_buf b = KUBE_BUF_INIT;
    (void)state;

    assert_int_equal(kube_buf_put_json_string(&b, "plain"), KUBE_OK);
    assert_int_equal(kube_buf_put_json_string(&b, "a\"b\\c\n\t\r\x01\xc3\xa9"), KUBE_OK);
    assert_int_equal(kube_buf_put_json_string(&b, ""), KUBE_OK);
    assert_string_equal(b.data, "\"plain\"\"a\\\"b\\\\c\\n\\t\\r\\u0001\xc3\xa9\"\"\"");
    kube_buf_free(&b);
}

static void take_hands_over_data(void **state)
{
    kube_buf b = KUBE_BUF_INIT;
    char *s;
    (void)state;
    s = kube_buf_take(&b);
    assert_string_equal(s, "");
    free(s);
    kube_buf_puts(&b, "abc");
    s = kube_buf_take(&b);
    assert_string_equal(s, "abc");
    assert_null(b.data);
    free(s);
}

static void parses_integers_strictly(void **state)
{
    int64_t v = 7;
    (void)state;
    assert_int_equal(kube_parse_int64("42", 0, 100, &v), KUBE_OK);
    assert_int_equal(v, 42);
    assert_int_equal(kube_parse_int64("-3", -10, 10, &v), KUBE_OK);
    assert_int_equal(v, -3);
    v = 7;
    assert_int_equal(kube_parse_int64("", 0, 100, &v), KUBE_EINVAL);
    assert_int_equal(kube_parse_int64("12x", 0, 100, &v), KUBE_EINVAL);
    assert_int_equal(kube_parse_int64("101", 0, 100, &v), KUBE_ERANGE);
    assert_int_equal(kube_parse_int64("99999999999999999999", INT64_MIN, INT64_MAX, &v),
                     KUBE_ERANGE);
    assert_int_equal(v, 7);
}

static void strlcpy_truncates_safely(void **state)
{
    char out[4];
    (void)state;
    assert_int_equal(kube_strlcpy(out, "abc", sizeof(out)), KUBE_OK);
    assert_string_equal(out, "abc");
    assert_int_equal(kube_strlcpy(out, "abcdef", sizeof(out)), KUBE_ERANGE);
    assert_string_equal(out, "abc");
}

static void reads_files(void **state)
{
    char *data = NULL;
    size_t len = 0;
    (void)state;
    assert_int_equal(kube_read_file(STICKYVM_FIXTURES_DIR "/vm-get-404.json", &data, &len),
                     KUBE_OK);
    assert_true(len > 0);
    assert_non_null(strstr(data, "NotFound"));
    free(data);
    assert_int_equal(kube_read_file("/nonexistent/file", &data, &len), KUBE_EIO);
}

/* kube_deadline_after (kube/util/clock.h): now on the clock plus ms, nanoseconds kept
 * below one second. */
static void deadlines_are_monotonic_and_normalised(void **state)
{
    struct timespec ts;
    (void)state;
    for (long ms = 0; ms <= 2999; ms += 333) {
        int64_t before = kube_now_ns();
        kube_deadline_after(&ts, CLOCK_MONOTONIC, ms);
        int64_t at = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
        assert_true(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
        assert_true(at >= before + (int64_t)ms * 1000000LL);
        assert_true(at <= kube_now_ns() + (int64_t)ms * 1000000LL);
    }
}

static void reads_hex_digits(void **state)
{
    (void)state;
    assert_int_equal(kube_hex_digit('0'), 0);
    assert_int_equal(kube_hex_digit('9'), 9);
    assert_int_equal(kube_hex_digit('a'), 10);
    assert_int_equal(kube_hex_digit('F'), 15);
    assert_int_equal(kube_hex_digit('g'), -1);
    assert_int_equal(kube_hex_digit('%'), -1);
}

/* kube_quote: Go's %q for ASCII, cut after max bytes with "...". */
static void quotes_as_go_does(void **state)
{
    char q[64];
    (void)state;

    assert_string_equal(kube_quote(q, sizeof(q), "vm-web\x01", 80), "\"vm-web\\x01\"");
    assert_string_equal(kube_quote(q, sizeof(q), "a\"b\\c\n\t\x7f", 80),
                        "\"a\\\"b\\\\c\\n\\t\\x7f\"");
    assert_string_equal(kube_quote(q, sizeof(q), "abcdef", 3), "\"abc\"...");
    assert_string_equal(kube_quote(q, sizeof(q), "", 3), "\"\"");
    assert_string_equal(kube_quote(q, 12, "abcdefghijkl", 80), "\"abcdef\"...");
}

int test_group_buf(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quotes_as_go_does),
        cmocka_unit_test(appends_and_formats),
        cmocka_unit_test(escapes_query_values),
        cmocka_unit_test(quotes_json_strings),
        cmocka_unit_test(take_hands_over_data),
        cmocka_unit_test(parses_integers_strictly),
        cmocka_unit_test(strlcpy_truncates_safely),
        cmocka_unit_test(reads_files),
        cmocka_unit_test(reads_hex_digits),
        cmocka_unit_test(deadlines_are_monotonic_and_normalised),
    };
    return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}
