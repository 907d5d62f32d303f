/*
 * bench/common/procstat.h - what a benchmark reports about its own
 * process: peak resident memory and CPU time.
 *
 * Memory: nothing is allocated.
 */
#ifndef BENCH_PROCSTAT_H
#define BENCH_PROCSTAT_H

/* Peak resident set size of this process in KiB (VmHWM in
 * /proc/self/status), or -1 when it cannot be read. */
long bench_peak_rss_kib(void);

/* CPU time this process used so far, in seconds (getrusage RUSAGE_SELF);
 * user and sys (either may be NULL) receive the two parts. */
double bench_cpu_seconds(double *user, double *sys);

#endif
