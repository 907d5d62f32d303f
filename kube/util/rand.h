/*
 * kube/util/rand.h - the one cheap pseudo-random generator: Marsaglia's
 * xorshift64 (13, 7, 17), for jitter, sampling, tie breaks and random
 * names. Not cryptographic: keys and tokens come from kube/util/certkit.h,
 * and an identity that must differ between processes (the leader
 * elector's holder id, a UUID) from the kernel (getrandom).
 *
 * Header-only; the state is a uint64_t the caller owns (one per thread or
 * under the caller's lock), or the calling thread's (kube_rand_local()). Seed it with
 * kube_rand_seed() or any value; a state of 0 (the one value xorshift cannot leave) is replaced by
 * a fixed non-zero seed on the first draw. Nothing to allocate or free.
 */
#ifndef KUBE_RAND_H
#define KUBE_RAND_H

#include <stdint.h>

#include "kube/util/clock.h"

/* A non-zero seed from the monotonic clock. */
static inline uint64_t kube_rand_seed(void)
{
    return (uint64_t)kube_now_ns() | 1;
}

/* Advances *state and returns the new value (never 0). */
static inline uint64_t kube_rand_next(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x9E3779B97F4A7C15ULL;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}

/* Uniform in [0, 1), from the next 53 bits of *state. */
static inline double kube_rand_unit(uint64_t *state)
{
    return (double)(kube_rand_next(state) >> 11) / (double)(1ULL << 53);
}

/* The calling thread's own state, seeded on first use from the clock and
 * the thread: for callers with no state of their own (jitter in a retry
 * loop that any thread may run). Lock-free; thread-safe. */
static inline uint64_t *kube_rand_local(void)
{
    static _Thread_local uint64_t state;

    if (!state)
        state = kube_rand_seed() ^ ((uint64_t)(uintptr_t)&state << 16);
    return &state;
}

#endif
