/*
 * kube/util/backoff.h - the one backoff, as apimachinery's wait.Backoff:
 * a base delay that grows by a factor per attempt up to a cap, then
 * jittered; and wait.Jitter on its own. The client's retries, the
 * workqueue's rate limiter, the informers' relist and rewatch, the event
 * recorder's retries and the leader elector's retry period all use it.
 *
 * Pure arithmetic plus kube/util/rand.h (the calling thread's state):
 * thread-safe, nothing to allocate or free.
 */
#ifndef KUBE_BACKOFF_H
#define KUBE_BACKOFF_H

#include <stdint.h>

typedef struct kube_backoff {
    int64_t base_ms; /* the first delay (Duration); at least 1 ms is used */
    int64_t cap_ms;  /* the largest un-jittered delay (Cap); <= 0: no cap */
    double factor;   /* growth per attempt (Factor); < 1 is taken as 1 */
    double jitter;   /* > 0: the delay grows by up to this fraction, as
                        wait.Jitter (so it may pass the cap, as upstream);
                        < 0: it shrinks by up to -jitter (a delay that must
                        never pass the cap); 0: none */
} kube_backoff;

/* The delay before retry number attempt (0: the first retry):
 * base * factor^attempt, capped, then jittered by u, a uniform value in
 * [0, 1). Pure: the same arguments give the same delay. */
int64_t kube_backoff_at(const kube_backoff *b, unsigned attempt, double u);

/* kube_backoff_at with u from the calling thread's random state. */
int64_t kube_backoff_delay(const kube_backoff *b, unsigned attempt);

/* wait.Jitter: d + d * factor * u, u uniform in [0, 1) from the calling
 * thread's random state (factor <= 0: d itself). */
int64_t kube_jitter(int64_t d, double factor);

#endif
