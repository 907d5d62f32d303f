/*
 * kube/codec/quantity.c - resource.Quantity parsing and int64 conversion.
 *
 * The scanner follows parseQuantityString() character for character. The
 * value is then computed exactly as nanos = ceil(|digits| * 10^E * 2^e2)
 * (E includes the +9 of the nano unit) with __int128 arithmetic; only the
 * fraction below one nano needs care, and for it at most e2 (<= 60)
 * fractional digits decide the result (see frac_ceil).
 */
#include "kube/codec/quantity.h"
#include "kube/codec/quantity_testing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"

#define NANO_PER_UNIT 1000000000
#define NANO_PER_MILLI 1000000
/* resource.maxAllowed (2^63-1 units) in nanos: the BinarySI cap. */
#define MAX_ALLOWED_NANOS ((__int128)INT64_MAX * NANO_PER_UNIT)

typedef struct qscan {
    int negative;
    const char *num; /* numerator digits without leading zeros */
    size_t num_len;
    const char *denom; /* digits after '.' */
    size_t denom_len;
    const char *suffix;
    size_t suffix_len;
    int has_digit; /* the number part holds at least one digit */
} qscan;

typedef struct qsuffix {
    int base; /* 10 or 2 */
    int32_t exponent;
    int decimal_si; /* n, u, m, "", k, M, G, T, P, E */
} qsuffix;

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static size_t skip_digits(const char *s, size_t pos, size_t end)
{
    while (pos < end && is_digit(s[pos]))
        pos++;
    return pos;
}

/* parseQuantityString: sign, leading zeros, numerator, '.', denominator,
 * then suffix letters, an optional sign and digits. */
static int scan_quantity(const char *s, size_t end, qscan *q)
{
    size_t pos = 0, start;

    memset(q, 0, sizeof(*q));
    if (pos < end && (s[0] == '-' || s[0] == '+')) {
        q->negative = s[0] == '-';
        pos++;
    }
    while (pos < end && s[pos] == '0') {
        pos++;
        q->has_digit = 1;
    }
    start = pos;
    pos = skip_digits(s, pos, end);
    q->num = s + start;
    q->num_len = pos - start;
    q->has_digit |= q->num_len > 0;
    if (pos < end && s[pos] == '.') {
        start = ++pos;
        pos = skip_digits(s, pos, end);
        q->denom = s + start;
        q->denom_len = pos - start;
        q->has_digit |= q->denom_len > 0;
    }
    start = pos;
    while (pos < end && strchr("eEinumkKMGTP", s[pos]))
        pos++;
    if (pos < end && (s[pos] == '-' || s[pos] == '+'))
        pos++;
    pos = skip_digits(s, pos, end);
    if (pos != end)
        return KUBE_EPARSE;
    q->suffix = s + start;
    q->suffix_len = end - start;
    return KUBE_OK;
}

/* strconv.ParseInt(s, 10, 64) on [+-]digits, then int32() as Go converts. */
static int parse_exponent(const char *s, size_t n, int32_t *out)
{
    uint64_t v = 0;
    size_t i = 0;
    int neg = 0;

    if (n > 0 && (s[0] == '+' || s[0] == '-')) {
        neg = s[0] == '-';
        i++;
    }
    if (i == n)
        return KUBE_EPARSE;
    for (; i < n; i++) {
        if (!is_digit(s[i]))
            return KUBE_EPARSE;
        v = v * 10 + (uint64_t)(s[i] - '0');
        if (v > (uint64_t)INT64_MAX + (uint64_t)neg)
            return KUBE_EPARSE;
    }
    if (neg)
        v = (uint64_t)0 - v;
    *out = (int32_t)(uint32_t)v;
    return KUBE_OK;
}

static int suffix_is(const qscan *q, const char *lit)
{
    return q->suffix_len == strlen(lit) && memcmp(q->suffix, lit, q->suffix_len) == 0;
}

/* quantitySuffixer.interpret */
static int interpret_suffix(const qscan *q, qsuffix *out)
{
    static const struct {
        const char *s;
        int base;
        int32_t exp;
    } table[] = {
        {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3}, {"", 10, 0},   {"k", 10, 3},  {"M", 10, 6},
        {"G", 10, 9},  {"T", 10, 12}, {"P", 10, 15}, {"E", 10, 18}, {"Ki", 2, 10}, {"Mi", 2, 20},
        {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60},
    };

    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (suffix_is(q, table[i].s)) {
            out->base = table[i].base;
            out->exponent = table[i].exp;
            out->decimal_si = table[i].base == 10;
            return KUBE_OK;
        }
    }
    if (q->suffix_len > 1 && (q->suffix[0] == 'e' || q->suffix[0] == 'E')) {
        out->base = 10;
        out->decimal_si = 0;
        return parse_exponent(q->suffix + 1, q->suffix_len - 1, &out->exponent);
    }
    return KUBE_EPARSE;
}

/* The digit string num+denom without leading zeros: digit i of it. */
typedef struct qdigits {
    const qscan *q;
    size_t skip; /* leading zeros skipped */
    size_t len;
} qdigits;

static char digit_at(const qdigits *d, size_t i)
{
    size_t k = d->skip + i;
    return k < d->q->num_len ? d->q->num[k] : d->q->denom[k - d->q->num_len];
}

static void digits_init(qdigits *d, const qscan *q)
{
    size_t total = q->num_len + q->denom_len;

    d->q = q;
    d->skip = 0;
    while (d->skip < total && digit_at(d, 0) == '0')
        d->skip++;
    d->len = total - d->skip;
}

static int mul_small(__int128 *x, int64_t m)
{
    if (*x > KUBE_QUANTITY_HUGE / m)
        return 0;
    *x *= m;
    return 1;
}

static int add_small(__int128 *x, int64_t a)
{
    if (*x > KUBE_QUANTITY_HUGE - a)
        return 0;
    *x += a;
    return 1;
}

/* ceil(0.F * 2^e2) for the fraction F = digits [from, from+k) of d, where
 * positions < 0 are leading zeros. Keeping t = min(k, e2) digits is exact:
 * 10^t is a multiple of 2^e2, so no integer lies strictly between the
 * truncated product and the true one, and the dropped tail (which ends in
 * a non-zero digit) only makes the product non-integral. */
static int64_t frac_ceil(const qdigits *d, int64_t from, int64_t k, int e2)
{
    unsigned char buf[64];
    int64_t t = k < e2 ? k : e2;
    int64_t ip = 0;
    int rest = 0;

    if (e2 == 0)
        return 1; /* F is non-zero: its last digit is */
    for (int64_t i = 0; i < t; i++) {
        int64_t pos = from + i;
        buf[i] = pos < 0 ? 0 : (unsigned char)(digit_at(d, (size_t)pos) - '0');
    }
    for (int b = 0; b < e2; b++) {
        int carry = 0;
        for (int64_t i = t - 1; i >= 0; i--) {
            int v = buf[i] * 2 + carry;
            buf[i] = (unsigned char)(v % 10);
            carry = v / 10;
        }
        ip = ip * 2 + carry;
    }
    for (int64_t i = 0; i < t; i++)
        rest |= buf[i] != 0;
    return ip + (rest || t < k);
}

/* Sets *out to ceil(D * 10^E * 2^e2) in nanos, clamped at HUGE. */
static __int128 magnitude(const qscan *q, int64_t E, int e2)
{
    qdigits d;
    __int128 x = 0;
    int64_t len, int_len;

    digits_init(&d, q);
    while (d.len > 0 && digit_at(&d, d.len - 1) == '0') {
        d.len--;
        E++;
    }
    if (d.len == 0)
        return 0;
    len = (int64_t)d.len;
    if (len - 1 + E >= 37)
        return KUBE_QUANTITY_HUGE;
    int_len = E >= 0 ? len : len + E;
    for (int64_t i = 0; i < int_len; i++)
        if (!mul_small(&x, 10) || !add_small(&x, digit_at(&d, (size_t)i) - '0'))
            return KUBE_QUANTITY_HUGE;
    for (int64_t i = 0; E > 0 && i < E; i++)
        if (!mul_small(&x, 10))
            return KUBE_QUANTITY_HUGE;
    for (int b = 0; b < e2; b++)
        if (!mul_small(&x, 2))
            return KUBE_QUANTITY_HUGE;
    if (E < 0 && !add_small(&x, frac_ceil(&d, int_len, -E, e2)))
        return KUBE_QUANTITY_HUGE;
    return x;
}

/* Whether ParseQuantity takes its int64Amount fast path (and so keeps an
 * exact int64 value) rather than building an inf.Dec. */
static int takes_fast_path(const qscan *q, const qsuffix *sx)
{
    int64_t num_len = q->num_len ? (int64_t)q->num_len : 1;
    int64_t precision;
    uint64_t v = 0;

    if (sx->base == 10) {
        precision = 18 - (num_len + (int64_t)q->denom_len);
        return precision >= 0 && (int64_t)sx->exponent - (int64_t)q->denom_len >= -9;
    }
    if (q->denom_len != 0)
        return 0;
    precision = 15 - num_len - (int64_t)((float)sx->exponent * 3 / 10) - 1;
    if (precision < 0)
        return 0;
    for (size_t i = 0; i < q->num_len; i++)
        v = v * 10 + (uint64_t)(q->num[i] - '0');
    return v <= (uint64_t)INT64_MAX >> sx->exponent;
}

/* ParseQuantity on the len bytes at s. */
static int parse_span(const char *s, size_t len, kube_quantity *out)
{
    qscan q;
    qsuffix sx;
    int64_t E;
    __int128 n;
    int fast;

    if (len == 0 || scan_quantity(s, len, &q) || interpret_suffix(&q, &sx))
        return KUBE_EPARSE;
    fast = (len == 1 && s[0] == '0') || takes_fast_path(&q, &sx);
    if (!fast && !q.has_digit)
        return KUBE_EPARSE; /* inf.Dec.SetString finds no digits */
    E = 9 - (int64_t)q.denom_len + (sx.base == 10 ? sx.exponent : 0);
    n = magnitude(&q, E, sx.base == 2 ? sx.exponent : 0);
    if (sx.base == 2 && !fast && n > MAX_ALLOWED_NANOS)
        n = MAX_ALLOWED_NANOS;
    out->nanos = q.negative ? -n : n;
    out->dec = !fast;
    return KUBE_OK;
}

int kube_quantity_parse(const char *s, kube_quantity *out)
{
    if (!s || !out)
        return KUBE_EINVAL;
    return parse_span(s, strlen(s), out);
}

/* ScaledValue: positive values round up; negative ones round away from
 * zero for an int64Amount, and to trunc+1 for an inf.Dec (scaledValue()'s
 * truncating division). */
static int scaled(const kube_quantity *q, int64_t div, int64_t *out)
{
    __int128 t = q->nanos / div, r = q->nanos % div;

    if (r != 0)
        t += (q->nanos > 0 || q->dec) ? 1 : -1;
    if (t > INT64_MAX || t < INT64_MIN)
        return KUBE_ERANGE;
    *out = (int64_t)t;
    return KUBE_OK;
}

int kube_quantity_value(const kube_quantity *q, int64_t *out)
{
    return scaled(q, NANO_PER_UNIT, out);
}

int kube_quantity_milli_value(const kube_quantity *q, int64_t *out)
{
    return scaled(q, NANO_PER_MILLI, out);
}

int kube_quantity_parse_value(const char *s, int64_t *out)
{
    kube_quantity q;
    int rc = kube_quantity_parse(s, &q);

    return rc != KUBE_OK ? rc : kube_quantity_value(&q, out);
}

int kube_quantity_parse_milli(const char *s, int64_t *out)
{
    kube_quantity q;
    int rc = kube_quantity_parse(s, &q);

    return rc != KUBE_OK ? rc : kube_quantity_milli_value(&q, out);
}

void kube_quantity_add(kube_quantity *acc, const kube_quantity *q)
{
    __int128 s = acc->nanos + q->nanos;

    if (s > KUBE_QUANTITY_HUGE)
        s = KUBE_QUANTITY_HUGE;
    if (s < -KUBE_QUANTITY_HUGE)
        s = -KUBE_QUANTITY_HUGE;
    acc->nanos = s;
    acc->dec = acc->dec || q->dec;
}

int kube_quantity_cmp(const kube_quantity *a, const kube_quantity *b)
{
    return a->nanos < b->nanos ? -1 : a->nanos > b->nanos;
}

static int is_json_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* A JSON number as Go's decoder hands its text to UnmarshalJSON: cJSON
 * keeps only the double, so use the shortest text that reads back as it. */
static void number_text(double d, char *buf, size_t n)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            return;
    }
}

int kube_quantity_from_json(const cJSON *v, kube_quantity *out)
{
    char buf[64];
    const char *s;
    size_t n;

    if (!v || !out)
        return KUBE_EINVAL;
    if (cJSON_IsNull(v)) {
        memset(out, 0, sizeof(*out));
        return KUBE_OK;
    }
    if (cJSON_IsNumber(v)) {
        if (!isfinite(v->valuedouble))
            return KUBE_EPARSE;
        number_text(v->valuedouble, buf, sizeof(buf));
        return parse_span(buf, strlen(buf), out);
    }
    if (!cJSON_IsString(v) || !v->valuestring)
        return KUBE_EPARSE;
    s = v->valuestring;
    while (is_json_space(*s))
        s++;
    n = strlen(s);
    while (n > 0 && is_json_space(s[n - 1]))
        n--;
    return parse_span(s, n, out);
}
