/*
 * kube/transport/ratelimit_testing.h - the test hooks of ratelimit.h: entry points only the
 * tests and benchmarks call, never the daemons.
 */
#ifndef KUBE_TRANSPORT_RATELIMIT_TESTING_H
#define KUBE_TRANSPORT_RATELIMIT_TESTING_H

#include "kube/transport/ratelimit.h"

/* Takes one token, sleeping (with the limiter's clock) until it is due. */
void kube_ratelimit_wait(kube_ratelimit *rl);

/* Takes one token only if one is available now: returns 1, else 0. */
int kube_ratelimit_try_accept(kube_ratelimit *rl);

#endif
