/*
 * bench/common/flags.h - the "--name N" integer flags every benchmark
 * program takes (sizes, verbosity).
 *
 * Memory: nothing is allocated; destinations are the caller's.
 */
#ifndef BENCH_FLAGS_H
#define BENCH_FLAGS_H

#include <stddef.h>

typedef struct bench_flag {
    const char *name; /* "--nodes" */
    int *dst;         /* receives the value; keeps its default when absent */
} bench_flag;

/* Parses argv[1..] as "--name N" pairs, each name one of flags[0..n), each
 * N a whole number in [0, 1000000]. On an unknown flag, a missing or bad
 * value, prints a usage line naming every flag to stderr and returns
 * KUBE_EINVAL; otherwise KUBE_OK. */
int bench_parse_flags(int argc, char **argv, const bench_flag *flags, size_t n);

#endif
