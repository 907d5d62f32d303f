/*
 * bench/common/procstat.c - peak RSS and CPU time of the benchmark process.
 */
#include "common/procstat.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "kube/util/buf.h"

long bench_peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "VmHWM:", 6) != 0)
            continue;
        char *p = line + 6, *end;
        while (*p == ' ' || *p == '\t')
            p++;
        end = strchr(p, ' ');
        if (end)
            *end = '\0';
        int64_t v;
        if (kube_parse_int64(p, 0, INT64_MAX / 2, &v) == 0)
            kib = (long)v;
        break;
    }
    fclose(f);
    return kib;
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
