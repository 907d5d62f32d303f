/*
 * bench/common/flags.h - the benchmarks' command lines, on the project's
 * flag parser (kube/util/flags.h): parse, and on an error print it and the
 * usage to stderr.
 *
 * Memory: nothing is allocated; destinations are the caller's.
 */
#ifndef BENCH_FLAGS_H
#define BENCH_FLAGS_H

#include <stddef.h>

#include "kube/util/flags.h"

/* kube_flags_parse() of argv into dst; KUBE_OK, or KUBE_EINVAL after
 * printing the error and the flags to stderr. */
int bench_flags_parse(const kube_flag *flags, size_t n, int argc, char **argv, void *dst);

#endif
