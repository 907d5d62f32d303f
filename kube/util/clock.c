/*
 * kube/util/clock.c - the clocks (clock.h).
 */
#include "kube/util/clock.h"
#include "kube/util/clock_testing.h"

#include <stdio.h>
#include <sys/time.h>

int64_t kube_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t kube_now_ms(void)
{
    return kube_now_ns() / 1000000LL;
}

int64_t kube_wall_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

void kube_time_format(int64_t unix_us, int micro, char *out, size_t n)
{
    int64_t us = unix_us % 1000000LL;
    time_t secs = (time_t)(unix_us / 1000000LL - (us < 0));
    struct tm tm;
    char base[32];

    if (us < 0)
        us += 1000000LL;
    if (!gmtime_r(&secs, &tm) || !strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm))
        base[0] = '\0';
    if (micro)
        snprintf(out, n, "%s.%06ldZ", base, (long)us);
    else
        snprintf(out, n, "%sZ", base);
}

/* The wall clock plus add_s seconds, as RFC 3339 (micro: with
 * microseconds). */
static void time_format(char *out, size_t n, int micro, int64_t add_s)
{
    kube_time_format(kube_wall_us() + add_s * 1000000LL, micro, out, n);
}

void kube_time_rfc3339_micro(char *out, size_t n)
{
    time_format(out, n, 1, 0);
}

void kube_time_rfc3339(char *out, size_t n)
{
    time_format(out, n, 0, 0);
}

void kube_time_rfc3339_after(char *out, size_t n, int64_t seconds)
{
    time_format(out, n, 0, seconds);
}

void kube_deadline_after(struct timespec *ts, clockid_t clock, int64_t ms)
{
    clock_gettime(clock, ts);
    ts->tv_sec += (time_t)(ms / 1000);
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}
