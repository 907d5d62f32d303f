/*
 * bench/common/procstat.h - what a benchmark reports about its own
 * process: peak resident memory, its resident memory by kind, and CPU time.
 *
 * Memory: nothing is allocated.
 */
#ifndef BENCH_PROCSTAT_H
#define BENCH_PROCSTAT_H

/* Peak resident set size of this process in KiB (VmHWM in
 * /proc/self/status), or -1 when it cannot be read. */
long bench_peak_rss_kib(void);

/* This process's resident memory now, in KiB, from
 * /proc/self/smaps_rollup: rss in all, anon the anonymous part (heap,
 * stacks, copied-on-write data); rss - anon is file-backed (the binary's
 * and the libraries' pages). threads (may be NULL) receives the thread
 * count (/proc/self/status). 0, or -1 when they cannot be read. */
int bench_rss_kinds_kib(long *rss, long *anon, long *threads);

/* CPU time this process used so far, in seconds (getrusage RUSAGE_SELF);
 * user and sys (either may be NULL) receive the two parts. */
double bench_cpu_seconds(double *user, double *sys);

#endif
