/*
 * kube/util/errors_testing.h - the test hooks of errors.h: entry points the
 * tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_UTIL_ERRORS_TESTING_H
#define KUBE_UTIL_ERRORS_TESTING_H

#include "kube/util/errors.h"

/* The HTTP status code that corresponds to a KUBE_E* code (500 for local
 * failures), for servers that answer with a metav1.Status. */
int kube_err_http_code(int err);

/* The metav1.Status reason ("NotFound", "Conflict", ...) for a code. */
const char *kube_err_reason(int err);

#endif
