/*
 * kube/util/backoff.c - wait.Backoff's delay and wait.Jitter (backoff.h).
 */
#include "kube/util/backoff.h"

#include "kube/util/rand.h"

int64_t kube_backoff_at(const kube_backoff *b, unsigned attempt, double u)
{
    double d = b->base_ms > 0 ? (double)b->base_ms : 1.0;
    double factor = b->factor > 1.0 ? b->factor : 1.0;

    for (unsigned i = 0; i < attempt && (b->cap_ms <= 0 || d < (double)b->cap_ms); i++)
        d *= factor;
    if (b->cap_ms > 0 && d > (double)b->cap_ms)
        d = (double)b->cap_ms;
    return (int64_t)(d + d * b->jitter * u);
}

int64_t kube_backoff_delay(const kube_backoff *b, unsigned attempt)
{
    return kube_backoff_at(b, attempt, kube_rand_unit(kube_rand_local()));
}

int64_t kube_jitter(int64_t d, double factor)
{
    if (factor <= 0.0)
        return d;
    return d + (int64_t)((double)d * factor * kube_rand_unit(kube_rand_local()));
}
