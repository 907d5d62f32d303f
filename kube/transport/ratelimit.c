/*
 * kube/transport/ratelimit.c - a token bucket, as client-go's flowcontrol
 * NewTokenBucketRateLimiter (golang.org/x/time/rate underneath): the bucket
 * holds at most `burst` tokens, starts full and refills at `qps` tokens per
 * second. The contract is in ratelimit.h.
 */
#include "kube/util/clock.h"
#include "kube/transport/ratelimit.h"

#include "kube/util/buf.h"
#include "kube/util/errors.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct kube_ratelimit {
    pthread_mutex_t lock;
    double qps;
    double burst;
    double tokens;   /* may go negative: tokens reserved ahead of time */
    int64_t last_ns; /* when tokens was last brought up to date */
    kube_clock clock;
};

static int64_t rl_real_now(void *ud)
{
    (void)ud;
    return kube_now_ns();
}

static void rl_real_sleep(void *ud, int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    (void)ud;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int kube_ratelimit_new(double qps, int burst, const kube_clock *clock, kube_ratelimit **out)
{
    kube_ratelimit *rl;

    *out = NULL;
    if (qps > 0 && burst < 1)
        return KUBE_EINVAL;
    rl = calloc(1, sizeof(*rl));
    if (!rl)
        return KUBE_ENOMEM;
    if (pthread_mutex_init(&rl->lock, NULL) != 0) {
        free(rl);
        return KUBE_ENOMEM;
    }
    rl->qps = qps > 0 ? qps : 0;
    rl->burst = burst;
    rl->tokens = burst;
    if (clock)
        rl->clock = *clock;
    else
        rl->clock = (kube_clock){rl_real_now, rl_real_sleep, NULL};
    rl->last_ns = rl->clock.now_ns(rl->clock.ud);
    *out = rl;
    return KUBE_OK;
}

void kube_ratelimit_free(kube_ratelimit *rl)
{
    if (!rl)
        return;
    pthread_mutex_destroy(&rl->lock);
    free(rl);
}

/* Adds the tokens accumulated since last_ns, up to burst. Lock held. */
static void rl_refill(kube_ratelimit *rl, int64_t now)
{
    if (now > rl->last_ns) {
        rl->tokens += (double)(now - rl->last_ns) * rl->qps / 1e9;
        if (rl->tokens > rl->burst)
            rl->tokens = rl->burst;
        rl->last_ns = now;
    }
}

int64_t kube_ratelimit_reserve(kube_ratelimit *rl)
{
    int64_t wait = 0;

    if (rl->qps <= 0)
        return 0;
    pthread_mutex_lock(&rl->lock);
    rl_refill(rl, rl->clock.now_ns(rl->clock.ud));
    rl->tokens -= 1;
    if (rl->tokens < 0)
        wait = (int64_t)(-rl->tokens * 1e9 / rl->qps + 0.5);
    pthread_mutex_unlock(&rl->lock);
    return wait;
}

void kube_ratelimit_wait(kube_ratelimit *rl)
{
    int64_t wait = kube_ratelimit_reserve(rl);

    if (wait > 0)
        rl->clock.sleep_ns(rl->clock.ud, wait);
}

int kube_ratelimit_try_accept(kube_ratelimit *rl)
{
    int ok;

    if (rl->qps <= 0)
        return 1;
    pthread_mutex_lock(&rl->lock);
    rl_refill(rl, rl->clock.now_ns(rl->clock.ud));
    ok = rl->tokens >= 1;
    if (ok)
        rl->tokens -= 1;
    pthread_mutex_unlock(&rl->lock);
    return ok;
}
