/*
 * kube/transport/ratelimit.h - a token bucket, as client-go's flowcontrol
 * NewTokenBucketRateLimiter (golang.org/x/time/rate underneath): the bucket
 * holds at most `burst` tokens, starts full and refills at `qps` tokens per
 * second. Each request takes one token; when none is left the caller waits
 * until its token will have accumulated. Reservations are made in arrival
 * order under a lock and callers sleep outside it, so concurrent callers are
 * spaced 1/qps apart once the burst is spent.
 *
 * The clock is injectable so tests can drive time by hand.
 *
 * Threads: every function is thread-safe.
 * Memory: kube_ratelimit_new() allocates the limiter, freed with
 * kube_ratelimit_free(). The clock struct is copied; its ud is borrowed.
 */
#ifndef KUBE_RATELIMIT_H
#define KUBE_RATELIMIT_H

#include <stdint.h>

typedef struct kube_clock {
    int64_t (*now_ns)(void *ud);            /* monotonic nanoseconds */
    void (*sleep_ns)(void *ud, int64_t ns); /* block for ns nanoseconds */
    void *ud;
} kube_clock;

typedef struct kube_ratelimit kube_ratelimit;

/* qps <= 0 means no limit (burst is then ignored). With qps > 0, burst must
 * be at least 1 (client-go refuses QPS without Burst too). clock may be NULL
 * for the real monotonic clock and nanosleep. Returns KUBE_OK, KUBE_EINVAL
 * or KUBE_ENOMEM. */
int kube_ratelimit_new(double qps, int burst, const kube_clock *clock, kube_ratelimit **out);
/* Frees the limiter; no call may be running. NULL is a no-op. */
void kube_ratelimit_free(kube_ratelimit *rl);

/* Takes one token, possibly in advance, and returns how many nanoseconds
 * the caller must wait before using it (0 when a token was available). */
int64_t kube_ratelimit_reserve(kube_ratelimit *rl);

#endif
