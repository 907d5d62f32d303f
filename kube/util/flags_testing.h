/*
 * kube/util/flags_testing.h - the test hooks of flags.h: entry points the
 * tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_UTIL_FLAGS_TESTING_H
#define KUBE_UTIL_FLAGS_TESTING_H

#include "kube/util/flags.h"

/* Parses argv[1..argc) against the n flags into dst. KUBE_OK, KUBE_ECONFIG
 * (the message in err, pflag's wording) or KUBE_ENOMEM. Fields of flags not
 * given keep their values. */
int kube_flags_parse(const kube_flag *flags, size_t n, int argc, char *const *argv, void *dst,
                     char *err, size_t errlen);

#endif
