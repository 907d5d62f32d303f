/*
 * bench/common/flags.c - the "--name N" integer flags every benchmark program
 * takes (sizes, verbosity). The contract is in flags.h.
 */
#include "common/flags.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kube/buf.h"
#include "kube/errors.h"

static int *flag_target(const bench_flag *flags, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(flags[i].name, name) == 0)
            return flags[i].dst;
    return NULL;
}

static int usage(const char *prog, const bench_flag *flags, size_t n)
{
    fprintf(stderr, "usage: %s", prog);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, " [%s N]", flags[i].name);
    fputc('\n', stderr);
    return KUBE_EINVAL;
}

int bench_parse_flags(int argc, char **argv, const bench_flag *flags, size_t n)
{
    for (int i = 1; i < argc; i += 2) {
        int *dst = flag_target(flags, n, argv[i]);
        int64_t v;

        if (!dst || i + 1 >= argc || kube_parse_int64(argv[i + 1], 0, 1000000, &v) != KUBE_OK)
            return usage(argv[0], flags, n);
        *dst = (int)v;
    }
    return KUBE_OK;
}
