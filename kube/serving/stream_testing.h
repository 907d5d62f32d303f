/*
 * kube/serving/stream_testing.h - the test hooks of stream.h: entry points
 * the tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_SERVING_STREAM_TESTING_H
#define KUBE_SERVING_STREAM_TESTING_H

#include "kube/serving/stream.h"

kube_stream *kube_stream_ref(kube_stream *s);

#endif
