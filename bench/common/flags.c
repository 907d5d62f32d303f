/*
 * bench/common/flags.c - the benchmarks' command lines (flags.h).
 */
#include "common/flags.h"

#include <stdio.h>

#include "kube/util/errors.h"
#include "kube/util/flags_testing.h"

int bench_flags_parse(const kube_flag *flags, size_t n, int argc, char **argv, void *dst)
{
    char err[256];

    if (kube_flags_parse(flags, n, argc, argv, dst, err, sizeof(err)) == KUBE_OK)
        return KUBE_OK;
    fprintf(stderr, "%s: %s\nUsage: %s [flags]\n", argv[0], err, argv[0]);
    kube_flags_usage(stderr, flags, n);
    return KUBE_EINVAL;
}
