/*
 * kube/util/duration.c - Go's time.Duration text (duration.h).
 */
#include "kube/util/duration.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "kube/util/errors.h"

static int64_t unit_ns(const char *u, size_t n)
{
    static const struct {
        const char *name;
        int64_t ns;
    } units[] = {
        {"ns", 1},       {"us", 1000},        {"\xc2\xb5s", 1000},  {"\xce\xbcs", 1000},
        {"ms", 1000000}, {"s", 1000000000LL}, {"m", 60000000000LL}, {"h", 3600000000000LL},
    };
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strlen(units[i].name) == n && memcmp(units[i].name, u, n) == 0)
            return units[i].ns;
    return 0;
}

/* One "<number><unit>" element of a duration, added to *total (ns). */
static int duration_element(const char **sp, __int128 *total)
{
    const char *s = *sp;
    __int128 whole = 0, frac = 0, scale = 1;
    int digits = 0;
    for (; isdigit((unsigned char)*s); s++, digits++) {
        whole = whole * 10 + (*s - '0');
        if (whole > (__int128)INT64_MAX)
            return KUBE_EINVAL;
    }
    if (*s == '.') {
        for (s++; isdigit((unsigned char)*s); s++, digits++)
            if (scale < (__int128)1000000000000000000LL) {
                frac = frac * 10 + (*s - '0');
                scale *= 10;
            }
    }
    if (!digits)
        return KUBE_EINVAL;
    const char *u = s;
    while (*s && !isdigit((unsigned char)*s) && *s != '.')
        s++;
    int64_t ns = unit_ns(u, (size_t)(s - u));
    if (!ns)
        return KUBE_EINVAL;
    *total += whole * ns + frac * ns / scale;
    if (*total > (__int128)INT64_MAX)
        return KUBE_EINVAL;
    *sp = s;
    return KUBE_OK;
}

int kube_duration_parse(const char *s, int64_t *ms)
{
    if (!s || !*s)
        return KUBE_EINVAL;
    int neg = 0;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    if (strcmp(s, "0") == 0) {
        *ms = 0;
        return KUBE_OK;
    }
    if (!*s)
        return KUBE_EINVAL;
    __int128 total = 0;
    while (*s)
        if (duration_element(&s, &total) != KUBE_OK)
            return KUBE_EINVAL;
    int64_t v = (int64_t)(total / 1000000);
    *ms = neg ? -v : v;
    return KUBE_OK;
}

void kube_duration_format(int64_t ms, char *out, size_t n)
{
    const char *sign = ms < 0 ? "-" : "";
    uint64_t v = ms < 0 ? (uint64_t)(-(ms + 1)) + 1 : (uint64_t)ms;
    if (v == 0) {
        snprintf(out, n, "0s");
        return;
    }
    if (v < 1000) {
        snprintf(out, n, "%s%llums", sign, (unsigned long long)v);
        return;
    }
    unsigned long long h = v / 3600000, m = v / 60000 % 60, s = v / 1000 % 60, f = v % 1000;
    char sec[32];
    if (f) {
        char frac[4];
        snprintf(frac, sizeof(frac), "%03llu", f);
        for (int i = 2; i > 0 && frac[i] == '0'; i--)
            frac[i] = '\0';
        snprintf(sec, sizeof(sec), "%llu.%ss", s, frac);
    } else {
        snprintf(sec, sizeof(sec), "%llus", s);
    }
    if (h)
        snprintf(out, n, "%s%lluh%llum%s", sign, h, m, sec);
    else if (m)
        snprintf(out, n, "%s%llum%s", sign, m, sec);
    else
        snprintf(out, n, "%s%s", sign, sec);
}

/* The bigger unit with its remainder in the smaller one, the remainder
 * left out when 0 ("5m", "5m30s"). */
static void two_units(char *out, size_t n, int64_t big, char ub, int64_t small, char us)
{
    if (small)
        snprintf(out, n, "%lld%c%lld%c", (long long)big, ub, (long long)small, us);
    else
        snprintf(out, n, "%lld%c", (long long)big, ub);
}

void kube_duration_human(int64_t s, char *out, size_t n)
{
    int64_t m = s / 60, h = s / 3600, d = h / 24;

    if (s < -1)
        snprintf(out, n, "<invalid>");
    else if (s < 0)
        snprintf(out, n, "0s");
    else if (s < 120)
        snprintf(out, n, "%llds", (long long)s);
    else if (m < 10)
        two_units(out, n, m, 'm', s % 60, 's');
    else if (m < 180)
        snprintf(out, n, "%lldm", (long long)m);
    else if (h < 8)
        two_units(out, n, h, 'h', m % 60, 'm');
    else if (h < 48)
        snprintf(out, n, "%lldh", (long long)h);
    else if (h < 24 * 8)
        two_units(out, n, d, 'd', h % 24, 'h');
    else if (h < 24 * 365 * 2)
        snprintf(out, n, "%lldd", (long long)d);
    else if (h < 24 * 365 * 8)
        two_units(out, n, d / 365, 'y', d % 365, 'd');
    else
        snprintf(out, n, "%lldy", (long long)(d / 365));
}
