/*
 * tests/unit/test_quantity.c - kube/codec/quantity.h against the documented
 * cases of apimachinery's quantity_test.go (TestQuantityParse, the invalid
 * list, rounding) and the int64 accessors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kube/util/errors.h"
#include "kube/codec/quantity.h"
#include "kube/codec/quantity_testing.h"

/* mantissa * 10^exp in nanos (exp >= -9) */
static __int128 dec_nanos(int64_t mantissa, int exp)
{
    __int128 v = mantissa;
    for (int i = -9; i < exp; i++)
        v *= 10;
    return v;
}

typedef struct parse_case {
    const char *in;
    int64_t mantissa;
    int exp;
} parse_case;

/* TestQuantityParse's table (the expected decQuantity(mantissa, exp)). */
static const parse_case parse_cases[] = {
    {"0", 0, 0},
    {"0n", 0, 0},
    {"0u", 0, 0},
    {"0m", 0, 0},
    {"0Ki", 0, 0},
    {"0k", 0, 0},
    {"0Mi", 0, 0},
    {"0M", 0, 0},
    {"0Gi", 0, 0},
    {"0G", 0, 0},
    {"0Ti", 0, 0},
    {"0T", 0, 0},
    {"1", 1, 0},
    {"1Ki", 1024, 0},
    {"8Ki", 8 * 1024, 0},
    {"7Mi", 7 * 1024 * 1024, 0},
    {"6Gi", 6LL * 1024 * 1024 * 1024, 0},
    {"5Ti", 5LL * 1024 * 1024 * 1024 * 1024, 0},
    {"4Pi", 4LL * 1024 * 1024 * 1024 * 1024 * 1024, 0},
    {"3Ei", 3LL * 1024 * 1024 * 1024 * 1024 * 1024 * 1024, 0},
    {"10Ti", 10LL * 1024 * 1024 * 1024 * 1024, 0},
    {"100Ti", 100LL * 1024 * 1024 * 1024 * 1024, 0},
    {"5n", 5, -9},
    {"4u", 4, -6},
    {"3m", 3, -3},
    {"9", 9, 0},
    {"8k", 8, 3},
    {"50k", 5, 4},
    {"7M", 7, 6},
    {"6G", 6, 9},
    {"5T", 5, 12},
    {"40T", 4, 13},
    {"300T", 3, 14},
    {"2P", 2, 15},
    {"1E", 1, 18},
    {"1E-3", 1, -3},
    {"1e3", 1, 3},
    {"1E6", 1, 6},
    {"1e9", 1, 9},
    {"1E12", 1, 12},
    {"1e15", 1, 15},
    {"1E18", 1, 18},
    {"1e14", 1, 14},
    {"1e13", 1, 13},
    {"100.035k", 100035, 0},
    {"0.001", 1, -3},
    {"0.0005k", 5, -1},
    {"0.005", 5, -3},
    {"0.05", 5, -2},
    {"0.5", 5, -1},
    {"0.00050k", 5, -1},
    {"0.00500", 5, -3},
    {"0.05000", 5, -2},
    {"0.50000", 5, -1},
    {"0.5e0", 5, -1},
    {"0.5e-1", 5, -2},
    {"0.5e-2", 5, -3},
    {"10.035M", 10035, 3},
    {"1.2e3", 12, 2},
    {"1.3E+6", 13, 5},
    {"1.40e9", 14, 8},
    {"1.53E12", 153, 10},
    {"1.6e15", 16, 14},
    {"1.7E18", 17, 17},
    {"9.01", 901, -2},
    {"8.1k", 81, 2},
    {"7.123456M", 7123456, 0},
    {"6.987654321G", 6987654321LL, 0},
    {"5.444T", 5444, 9},
    {"40.1T", 401, 11},
    {"300.2T", 3002, 11},
    {"2.5P", 25, 14},
    {"1.01E", 101, 16},
    /* things that saturate/round */
    {"3.001n", 4, -9},
    {"1.1E-9", 2, -9},
    {"0.0000000001", 1, -9},
    {"0.0000000005", 1, -9},
    {"0.00000000050", 1, -9},
    {"0.5e-9", 1, -9},
    {"0.9n", 1, -9},
    {"0.00000012345", 124, -9},
    {"0.00000012354", 124, -9},
    {"9Ei", INT64_MAX, 0},
    {"9223372036854775807Ki", INT64_MAX, 0},
    /* fractional binary */
    {"100.035Ki", 10243584, -2},
    {"0.5Mi", 512 * 1024, 0},
    {"0.05Gi", 536870912, -1},
    {"0.025Ti", 274877906944LL, -1},
    /* trolls */
    {"0.000000000001Ki", 2, -9},
    {".001", 1, -3},
    {".0001k", 100, -3},
    {"1.", 1, 0},
    {"1.G", 1, 9},
};

static void parses_documented_cases(void **state)
{
    char buf[64];
    kube_quantity q;
    (void)state;
    for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
        const parse_case *c = &parse_cases[i];
        __int128 want = dec_nanos(c->mantissa, c->exp);
        if (kube_quantity_parse(c->in, &q) != KUBE_OK || q.nanos != want)
            fail_msg("%s: parse mismatch", c->in);
        /* the negative and explicitly positive spellings, as the Go test does */
        snprintf(buf, sizeof(buf), "-%s", c->in);
        if (kube_quantity_parse(buf, &q) != KUBE_OK || q.nanos != -want)
            fail_msg("%s: negative mismatch", buf);
        snprintf(buf, sizeof(buf), "+%s", c->in);
        if (kube_quantity_parse(buf, &q) != KUBE_OK || q.nanos != want)
            fail_msg("%s: positive mismatch", buf);
    }
}

static void decimal_values_are_not_capped(void **state)
{
    kube_quantity q;
    (void)state;
    assert_int_equal(kube_quantity_parse("12E", &q), KUBE_OK);
    assert_true(q.nanos == dec_nanos(12, 18));
    assert_int_equal(kube_quantity_parse("9223372036854775808", &q), KUBE_OK);
    assert_true(q.nanos == (__int128)INT64_MAX * 1000000000 + 1000000000);
    /* beyond what any int64 accessor could return: clamped */
    assert_int_equal(kube_quantity_parse("1e100", &q), KUBE_OK);
    assert_true(q.nanos == KUBE_QUANTITY_HUGE);
    assert_int_equal(kube_quantity_parse("-1e100", &q), KUBE_OK);
    assert_true(q.nanos == -KUBE_QUANTITY_HUGE);
}

static void rejects_invalid_strings(void **state)
{
    static const char *invalid[] = {
        /* quantity_test.go's invalid list */
        "1.1.M",
        "1+1.0M",
        "0.1mi",
        "0.1am",
        "aoeu",
        ".5i",
        "1i",
        "-3.01i",
        "-3.01e-",
        " 1",
        "1 ",
        /* and more */
        "",
        "1e",
        "1E+",
        "1Ki3",
        "1k3",
        "1ee3",
        "1.5.",
        "--1",
        "1-",
        "1KI",
        "1kb",
        "0x10",
        "1,5",
        "1e99999999999999999999",
        ".e-10",
        "-e-10",
    };
    kube_quantity q = {42, 0};
    (void)state;
    for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
        if (kube_quantity_parse(invalid[i], &q) != KUBE_EPARSE)
            fail_msg("'%s' parsed unexpectedly", invalid[i]);
    }
    assert_true(q.nanos == 42);
    assert_int_equal(kube_quantity_parse(NULL, &q), KUBE_EINVAL);
}

static void odd_but_valid_strings(void **state)
{
    kube_quantity q;
    (void)state;
    /* parseQuantityString turns a bare sign or dot into zero */
    assert_int_equal(kube_quantity_parse(".", &q), KUBE_OK);
    assert_true(q.nanos == 0);
    assert_int_equal(kube_quantity_parse("-", &q), KUBE_OK);
    assert_true(q.nanos == 0);
    assert_int_equal(kube_quantity_parse("-.", &q), KUBE_OK);
    assert_true(q.nanos == 0);
    assert_int_equal(kube_quantity_parse(".e-9", &q), KUBE_OK);
    assert_true(q.nanos == 0);
    assert_int_equal(kube_quantity_parse("Gi", &q), KUBE_OK);
    assert_true(q.nanos == 0);
    /* Go keeps int32(exponent): 2^32 wraps to 0 */
    assert_int_equal(kube_quantity_parse("1e4294967296", &q), KUBE_OK);
    assert_true(q.nanos == dec_nanos(1, 0));
    assert_int_equal(kube_quantity_parse("007", &q), KUBE_OK);
    assert_true(q.nanos == dec_nanos(7, 0));
    /* long fractions round up exactly */
    assert_int_equal(kube_quantity_parse("0.0000000010000000000000000000000000000001", &q),
                     KUBE_OK);
    assert_true(q.nanos == 2);
    assert_int_equal(kube_quantity_parse("1.0000000000000000000000000000000000000000000Ki", &q),
                     KUBE_OK);
    assert_true(q.nanos == dec_nanos(1024, 0));
}

typedef struct value_case {
    const char *in;
    int value_rc;
    int64_t value;
    int milli_rc;
    int64_t milli;
} value_case;

static void converts_to_int64_like_value_and_milli_value(void **state)
{
    static const value_case cases[] = {
        {"100m", KUBE_OK, 1, KUBE_OK, 100},
        {"1", KUBE_OK, 1, KUBE_OK, 1000},
        {"1.5", KUBE_OK, 2, KUBE_OK, 1500},
        {"0.1m", KUBE_OK, 1, KUBE_OK, 1},
        {"1n", KUBE_OK, 1, KUBE_OK, 1},
        {"4G", KUBE_OK, 4000000000LL, KUBE_OK, 4000000000000LL},
        {"4Gi", KUBE_OK, 4294967296LL, KUBE_OK, 4294967296000LL},
        {"1k", KUBE_OK, 1000, KUBE_OK, 1000000},
        {"1e3", KUBE_OK, 1000, KUBE_OK, 1000000},
        {"0.1Gi", KUBE_OK, 107374183, KUBE_OK, 107374182400LL},
        {"-1", KUBE_OK, -1, KUBE_OK, -1000},
        /* an int64Amount rounds a negative fraction away from zero */
        {"-1.5", KUBE_OK, -2, KUBE_OK, -1500},
        {"-1n", KUBE_OK, -1, KUBE_OK, -1},
        /* an inf.Dec truncates and adds one (scaledValue's quirk) */
        {"-0.1Ki", KUBE_OK, -101, KUBE_OK, -102400},
        {"-0.0000000001", KUBE_OK, 1, KUBE_OK, 1},
        {"9223372036854775807", KUBE_OK, INT64_MAX, KUBE_ERANGE, 0},
        {"9223372036854775807m", KUBE_OK, 9223372036854776LL, KUBE_OK, INT64_MAX},
        {"9Ei", KUBE_OK, INT64_MAX, KUBE_ERANGE, 0},
        {"12E", KUBE_ERANGE, 0, KUBE_ERANGE, 0},
        {"1e100", KUBE_ERANGE, 0, KUBE_ERANGE, 0},
    };
    kube_quantity q;
    int64_t v;
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const value_case *c = &cases[i];
        assert_int_equal(kube_quantity_parse(c->in, &q), KUBE_OK);
        v = 0;
        if (kube_quantity_value(&q, &v) != c->value_rc || (c->value_rc == KUBE_OK && v != c->value))
            fail_msg("%s: Value() gave %lld", c->in, (long long)v);
        v = 0;
        if (kube_quantity_milli_value(&q, &v) != c->milli_rc ||
            (c->milli_rc == KUBE_OK && v != c->milli))
            fail_msg("%s: MilliValue() gave %lld", c->in, (long long)v);
    }
    assert_int_equal(kube_quantity_parse_milli("250m", &v), KUBE_OK);
    assert_int_equal(v, 250);
    assert_int_equal(kube_quantity_parse_value("2Ki", &v), KUBE_OK);
    assert_int_equal(v, 2048);
    assert_int_equal(kube_quantity_parse_value("bogus", &v), KUBE_EPARSE);
    assert_int_equal(kube_quantity_parse_milli("1E", &v), KUBE_ERANGE);
}

static void adds_and_compares_exactly(void **state)
{
    kube_quantity a, b, sum = {0, 0};
    int64_t v;
    (void)state;
    /* two half-millis sum to exactly 1m; rounding each would give 2 */
    assert_int_equal(kube_quantity_parse("0.5m", &a), KUBE_OK);
    kube_quantity_add(&sum, &a);
    kube_quantity_add(&sum, &a);
    assert_int_equal(kube_quantity_milli_value(&sum, &v), KUBE_OK);
    assert_int_equal(v, 1);
    assert_int_equal(kube_quantity_parse("10000T", &a), KUBE_OK);
    assert_int_equal(kube_quantity_parse("100Gi", &b), KUBE_OK);
    assert_int_equal(kube_quantity_cmp(&a, &b), 1);
    assert_int_equal(kube_quantity_cmp(&b, &a), -1);
    assert_int_equal(kube_quantity_parse("1000m", &a), KUBE_OK);
    assert_int_equal(kube_quantity_parse("1", &b), KUBE_OK);
    assert_int_equal(kube_quantity_cmp(&a, &b), 0);
    assert_int_equal(kube_quantity_parse("1e100", &a), KUBE_OK);
    kube_quantity_add(&a, &a);
    assert_true(a.nanos == KUBE_QUANTITY_HUGE);
}

static void reads_json_like_unmarshal_json(void **state)
{
    static const struct {
        const char *json;
        int rc;
        int64_t milli;
    } cases[] = {
        {"\"100m\"", KUBE_OK, 100},  {"\" 2 \"", KUBE_OK, 2000},  {"2", KUBE_OK, 2000},
        {"0.5", KUBE_OK, 500},       {"-1", KUBE_OK, -1000},      {"1e3", KUBE_OK, 1000000},
        {"null", KUBE_OK, 0},        {"true", KUBE_EPARSE, 0},    {"{}", KUBE_EPARSE, 0},
        {"[\"1\"]", KUBE_EPARSE, 0}, {"\"1 2\"", KUBE_EPARSE, 0}, {"\"\"", KUBE_EPARSE, 0},
    };
    kube_quantity q;
    int64_t v;
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *j = cJSON_Parse(cases[i].json);
        assert_non_null(j);
        if (kube_quantity_from_json(j, &q) != cases[i].rc)
            fail_msg("%s: unexpected result", cases[i].json);
        if (cases[i].rc == KUBE_OK) {
            assert_int_equal(kube_quantity_milli_value(&q, &v), KUBE_OK);
            assert_int_equal(v, cases[i].milli);
        }
        cJSON_Delete(j);
    }
}

int test_group_quantity(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_documented_cases),
        cmocka_unit_test(decimal_values_are_not_capped),
        cmocka_unit_test(rejects_invalid_strings),
        cmocka_unit_test(odd_but_valid_strings),
        cmocka_unit_test(converts_to_int64_like_value_and_milli_value),
        cmocka_unit_test(adds_and_compares_exactly),
        cmocka_unit_test(reads_json_like_unmarshal_json),
    };
    return cmocka_run_group_tests_name("quantity", tests, NULL, NULL);
}
