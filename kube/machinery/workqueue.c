/*
 * kube/machinery/workqueue.c - the rate-limited, deduplicating work queue
 * (see workqueue.h): one map of keys to their state, a FIFO of keys ready,
 * and a list of keys held back, sorted by when they become ready.
 */
#include "kube/machinery/workqueue.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "kube/util/backoff.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/strmap.h"

typedef struct wq_item {
    char *key;
    struct wq_item *next;  /* in the FIFO */
    struct wq_item *later; /* in the held-back list */
    int dirty;             /* wants processing (client-go's dirty set) */
    int queued;            /* in the FIFO */
    int processing;
    int64_t ready_ms; /* > 0: held back until then (monotonic) */
    unsigned failures;
} wq_item;

struct kube_workqueue {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a key ready, a key held back, shutdown */
    kube_strmap items; /* key -> wq_item */
    wq_item *head, *tail;
    wq_item *held; /* sorted by ready_ms */
    int shut;
    int64_t base_ms, max_ms;
};

/* ------------------------------------------------------------------ */
/* Items (caller locks)                                                */
/* ------------------------------------------------------------------ */

static wq_item *item_get(kube_workqueue *q, const char *key)
{
    wq_item *it = kube_strmap_get(&q->items, key);
    if (it)
        return it;
    it = calloc(1, sizeof(*it));
    if (it && !(it->key = kube_strdup(key))) {
        free(it);
        return NULL;
    }
    if (it && kube_strmap_put(&q->items, key, it, NULL) != KUBE_OK) {
        free(it->key);
        free(it);
        return NULL;
    }
    return it;
}

/* Frees it once nothing refers to it any more. */
static void item_release(kube_workqueue *q, wq_item *it)
{
    if (it->dirty || it->queued || it->processing || it->ready_ms || it->failures)
        return;
    kube_strmap_del(&q->items, it->key);
    free(it->key);
    free(it);
}

static void push(kube_workqueue *q, wq_item *it)
{
    it->next = NULL;
    it->queued = 1;
    if (q->tail)
        q->tail->next = it;
    else
        q->head = it;
    q->tail = it;
    pthread_cond_signal(&q->cv);
}

/* client-go's Add: marks it dirty and queues it unless processing. */
static void mark_dirty(kube_workqueue *q, wq_item *it)
{
    if (it->dirty)
        return;
    it->dirty = 1;
    if (!it->processing)
        push(q, it);
}

static void unhold(kube_workqueue *q, wq_item *it)
{
    for (wq_item **p = &q->held; *p; p = &(*p)->later)
        if (*p == it) {
            *p = it->later;
            break;
        }
    it->later = NULL;
    it->ready_ms = 0;
}

static void hold(kube_workqueue *q, wq_item *it, int64_t ready_ms)
{
    if (it->ready_ms && it->ready_ms <= ready_ms)
        return; /* the earlier time wins */
    if (it->ready_ms)
        unhold(q, it);
    wq_item **p = &q->held;
    while (*p && (*p)->ready_ms <= ready_ms)
        p = &(*p)->later;
    it->later = *p;
    *p = it;
    it->ready_ms = ready_ms;
    pthread_cond_signal(&q->cv);
}

/* Moves every held key whose time came to the FIFO. */
static void promote_ready(kube_workqueue *q, int64_t now)
{
    while (q->held && q->held->ready_ms <= now) {
        wq_item *it = q->held;
        q->held = it->later;
        it->later = NULL;
        it->ready_ms = 0;
        mark_dirty(q, it);
    }
}

/* ------------------------------------------------------------------ */
/* Adding                                                              */
/* ------------------------------------------------------------------ */

static int add_locked(kube_workqueue *q, const char *key, int64_t ms)
{
    if (q->shut)
        return KUBE_ECANCELED;
    wq_item *it = item_get(q, key);
    if (!it)
        return KUBE_ENOMEM;
    if (ms <= 0)
        mark_dirty(q, it);
    else
        hold(q, it, kube_now_ms() + ms);
    return KUBE_OK;
}

int kube_workqueue_add(kube_workqueue *q, const char *key)
{
    return kube_workqueue_add_after(q, key, 0);
}

int kube_workqueue_add_after(kube_workqueue *q, const char *key, int64_t ms)
{
    pthread_mutex_lock(&q->mu);
    int rc = add_locked(q, key, ms);
    pthread_mutex_unlock(&q->mu);
    return rc;
}

/* base * 2^failures capped at max, plus up to 10% jitter
 * (kube/util/backoff.h); caller locks. */
static int64_t backoff_locked(kube_workqueue *q, unsigned failures)
{
    kube_backoff b = {q->base_ms, q->max_ms, 2.0, 0.1};
    return kube_backoff_delay(&b, failures);
}

int kube_workqueue_add_rate_limited(kube_workqueue *q, const char *key, int64_t *delay_ms)
{
    pthread_mutex_lock(&q->mu);
    wq_item *it = q->shut ? NULL : item_get(q, key);
    int rc = q->shut ? KUBE_ECANCELED : KUBE_ENOMEM;
    if (it) {
        int64_t d = backoff_locked(q, it->failures++);
        if (delay_ms)
            *delay_ms = d;
        rc = add_locked(q, key, d);
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}

void kube_workqueue_forget(kube_workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    wq_item *it = kube_strmap_get(&q->items, key);
    if (it) {
        it->failures = 0;
        item_release(q, it);
    }
    pthread_mutex_unlock(&q->mu);
}

unsigned kube_workqueue_num_requeues(kube_workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    wq_item *it = kube_strmap_get(&q->items, key);
    unsigned n = it ? it->failures : 0;
    pthread_mutex_unlock(&q->mu);
    return n;
}

/* ------------------------------------------------------------------ */
/* Processing                                                          */
/* ------------------------------------------------------------------ */

/* Waits until deadline (monotonic ms) or the first held key's time. */
static void wait_locked(kube_workqueue *q, int64_t deadline)
{
    struct timespec ts;
    int64_t until = q->held && q->held->ready_ms < deadline ? q->held->ready_ms : deadline;
    int64_t ms = until - kube_now_ms();
    kube_deadline_after(&ts, CLOCK_MONOTONIC, ms > 0 ? ms : 0);
    pthread_cond_timedwait(&q->cv, &q->mu, &ts);
}

static wq_item *pop_locked(kube_workqueue *q)
{
    wq_item *it = q->head;
    if (!(q->head = it->next))
        q->tail = NULL;
    it->next = NULL;
    it->queued = 0;
    it->dirty = 0;
    it->processing = 1;
    return it;
}

int kube_workqueue_get(kube_workqueue *q, int64_t timeout_ms, char **key)
{
    int64_t deadline = kube_now_ms() + timeout_ms;
    int rc = KUBE_ETIMEDOUT;
    *key = NULL;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        promote_ready(q, kube_now_ms());
        if (q->shut) {
            rc = KUBE_ECANCELED;
            break;
        }
        if (q->head) {
            wq_item *it = pop_locked(q);
            *key = kube_strdup(it->key);
            rc = *key ? KUBE_OK : KUBE_ENOMEM;
            break;
        }
        if (kube_now_ms() >= deadline)
            break;
        wait_locked(q, deadline);
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}

void kube_workqueue_done(kube_workqueue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    wq_item *it = kube_strmap_get(&q->items, key);
    if (it && it->processing) {
        it->processing = 0;
        if (it->dirty && !q->shut)
            push(q, it);
        else
            it->dirty = 0;
        item_release(q, it);
    }
    pthread_mutex_unlock(&q->mu);
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */
/* ------------------------------------------------------------------ */

/* kube_strmap_foreach() callback: forgets everything about the item but
 * its processing, and lists it (through next) to be released. */
static void clear_one(void *ud, const char *key, void *value)
{
    wq_item **idle = ud, *it = value;
    (void)key;
    it->later = NULL;
    it->queued = it->dirty = 0;
    it->ready_ms = 0;
    it->failures = 0;
    it->next = *idle;
    *idle = it;
}

void kube_workqueue_clear(kube_workqueue *q)
{
    wq_item *idle = NULL;
    pthread_mutex_lock(&q->mu);
    kube_strmap_foreach(&q->items, clear_one, &idle);
    q->head = q->tail = q->held = NULL;
    while (idle) {
        wq_item *it = idle;
        idle = it->next;
        it->next = NULL;
        item_release(q, it);
    }
    pthread_mutex_unlock(&q->mu);
}

size_t kube_workqueue_len(kube_workqueue *q)
{
    size_t n = 0;
    pthread_mutex_lock(&q->mu);
    for (wq_item *it = q->head; it; it = it->next)
        n++;
    for (wq_item *it = q->held; it; it = it->later)
        n++;
    pthread_mutex_unlock(&q->mu);
    return n;
}

/* Counts an item that is queued, held back or processing; ud the count. */
static void count_busy(void *ud, const char *key, void *value)
{
    const wq_item *it = value;
    (void)key;
    if (it->queued || it->ready_ms || it->processing)
        (*(size_t *)ud)++;
}

size_t kube_workqueue_busy(kube_workqueue *q)
{
    size_t n = 0;

    pthread_mutex_lock(&q->mu);
    kube_strmap_foreach(&q->items, count_busy, &n);
    pthread_mutex_unlock(&q->mu);
    return n;
}

void kube_workqueue_shutdown(kube_workqueue *q)
{
    pthread_mutex_lock(&q->mu);
    q->shut = 1;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

int kube_workqueue_new(int64_t base_ms, int64_t max_ms, kube_workqueue **out)
{
    pthread_condattr_t ca;
    *out = NULL;
    if (base_ms < 1 || max_ms < base_ms)
        return KUBE_EINVAL;
    kube_workqueue *q = calloc(1, sizeof(*q));
    if (!q)
        return KUBE_ENOMEM;
    q->base_ms = base_ms;
    q->max_ms = max_ms;
    pthread_mutex_init(&q->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&q->cv, &ca);
    pthread_condattr_destroy(&ca);
    *out = q;
    return KUBE_OK;
}

static void free_one(void *ud, const char *key, void *value)
{
    wq_item *it = value;
    (void)ud, (void)key;
    free(it->key);
    free(it);
}

void kube_workqueue_free(kube_workqueue *q)
{
    if (!q)
        return;
    kube_strmap_foreach(&q->items, free_one, NULL);
    kube_strmap_free(&q->items);
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
    free(q);
}
