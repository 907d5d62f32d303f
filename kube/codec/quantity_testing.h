/*
 * kube/codec/quantity_testing.h - the test hooks of quantity.h: entry points
 * the tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_CODEC_QUANTITY_TESTING_H
#define KUBE_CODEC_QUANTITY_TESTING_H

#include "kube/codec/quantity.h"

/* kube_quantity_parse then kube_quantity_value. KUBE_EPARSE or
 * KUBE_ERANGE on failure. */
int kube_quantity_parse_value(const char *s, int64_t *out);

/* kube_quantity_parse then kube_quantity_milli_value. */
int kube_quantity_parse_milli(const char *s, int64_t *out);

#endif
