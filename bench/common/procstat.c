/*
 * bench/common/procstat.c - peak RSS and CPU time of the benchmark process.
 */
#include "common/procstat.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "kube/util/buf.h"

/* The value of the first "key N" line of path (N in KiB for memory keys),
 * or -1 when absent or unreadable. */
static long proc_field(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    size_t n = strlen(key);
    char line[256];
    long v = -1;

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, key, n) != 0)
            continue;
        char *p = line + n, *end;
        while (*p == ' ' || *p == '\t')
            p++;
        end = strpbrk(p, " \n");
        if (end)
            *end = '\0';
        int64_t x;
        if (kube_parse_int64(p, 0, INT64_MAX / 2, &x) == 0)
            v = (long)x;
        break;
    }
    fclose(f);
    return v;
}

long bench_peak_rss_kib(void)
{
    return proc_field("/proc/self/status", "VmHWM:");
}

int bench_rss_kinds_kib(long *rss, long *anon, long *threads)
{
    *rss = proc_field("/proc/self/smaps_rollup", "Rss:");
    *anon = proc_field("/proc/self/smaps_rollup", "Anonymous:");
    if (threads)
        *threads = proc_field("/proc/self/status", "Threads:");
    return *rss < 0 || *anon < 0 ? -1 : 0;
}

static double tv_seconds(const struct timeval *tv)
{
    return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

double bench_cpu_seconds(double *user, double *sys)
{
    struct rusage ru;

    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1;
    if (user)
        *user = tv_seconds(&ru.ru_utime);
    if (sys)
        *sys = tv_seconds(&ru.ru_stime);
    return tv_seconds(&ru.ru_utime) + tv_seconds(&ru.ru_stime);
}
