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

/* The wall clock plus add_s seconds, as RFC 3339 (micro: with
 * microseconds). */
static void time_format(char *out, size_t n, int micro, int64_t add_s)
{
    struct timeval tv;
    struct tm tm;
    char base[32];

    gettimeofday(&tv, NULL);
    tv.tv_sec += (time_t)add_s;
    gmtime_r(&tv.tv_sec, &tm);
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    if (micro)
        snprintf(out, n, "%s.%06ldZ", base, (long)tv.tv_usec);
    else
        snprintf(out, n, "%sZ", base);
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
