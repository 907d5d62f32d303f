/*
 * kube/serving/stream.c - a streamed answer between its producer and the
 * secure server. The contract is in stream.h.
 */
#include "kube/serving/stream.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "kube/util/errors.h"

struct kube_stream {
    pthread_mutex_t mu;
    atomic_int refs;
    kube_buf queued; /* chunk-encoded, not yet taken */
    int ended;       /* the producer (or the deadline) ended it */
    int cancelled;
    int over; /* the last chunk was taken */
    int64_t deadline_ms;
    void (*wake)(void *ud);
    void *wake_ud;
    kube_stream_cancel_fn cancel;
    void *cancel_ud;
};

int kube_stream_new(int64_t deadline_ms, kube_stream_cancel_fn cancel, void *cancel_ud,
                    kube_stream **out)
{
    kube_stream *s = calloc(1, sizeof(*s));

    *out = NULL;
    if (!s)
        return KUBE_ENOMEM;
    pthread_mutex_init(&s->mu, NULL);
    atomic_init(&s->refs, 2);
    s->deadline_ms = deadline_ms;
    s->cancel = cancel;
    s->cancel_ud = cancel_ud;
    *out = s;
    return KUBE_OK;
}

void kube_stream_unref(kube_stream *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    kube_buf_free(&s->queued);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* Wakes the server (s->mu held). */
static void wake(kube_stream *s)
{
    if (s->wake)
        s->wake(s->wake_ud);
}

int kube_stream_write(kube_stream *s, const char *data, size_t len)
{
    int rc = KUBE_ECANCELED;

    pthread_mutex_lock(&s->mu);
    if (!s->cancelled && !s->ended) {
        rc = kube_buf_printf(&s->queued, "%zx\r\n", len);
        if (rc == KUBE_OK)
            rc = kube_buf_append(&s->queued, data, len);
        if (rc == KUBE_OK)
            rc = kube_buf_puts(&s->queued, "\r\n");
        if (rc == KUBE_OK)
            wake(s);
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

void kube_stream_end(kube_stream *s)
{
    pthread_mutex_lock(&s->mu);
    if (!s->ended) {
        s->ended = 1;
        wake(s);
    }
    pthread_mutex_unlock(&s->mu);
}

void kube_stream_attach(kube_stream *s, void (*fn)(void *ud), void *ud)
{
    pthread_mutex_lock(&s->mu);
    s->wake = fn;
    s->wake_ud = ud;
    if (s->queued.len || s->ended)
        wake(s);
    pthread_mutex_unlock(&s->mu);
}

int kube_stream_take(kube_stream *s, kube_buf *out)
{
    int rc = KUBE_OK;

    pthread_mutex_lock(&s->mu);
    if (s->queued.len)
        rc = kube_buf_append(out, s->queued.data, s->queued.len);
    if (rc == KUBE_OK) {
        kube_buf_reset(&s->queued);
        if (s->ended && !s->over) {
            rc = kube_buf_puts(out, "0\r\n\r\n");
            s->over = rc == KUBE_OK;
        }
    }
    if (rc == KUBE_OK)
        rc = s->over;
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int kube_stream_pending(kube_stream *s)
{
    int pending;

    pthread_mutex_lock(&s->mu);
    pending = s->queued.len > 0 || (s->ended && !s->over);
    pthread_mutex_unlock(&s->mu);
    return pending;
}

void kube_stream_cancel(kube_stream *s, int ended)
{
    kube_stream_cancel_fn fn = NULL;

    pthread_mutex_lock(&s->mu);
    if (!s->cancelled) {
        s->cancelled = 1;
        fn = s->cancel;
    }
    if (ended)
        s->ended = 1;
    else
        s->wake = NULL;
    pthread_mutex_unlock(&s->mu);
    if (fn)
        fn(s->cancel_ud);
}

int64_t kube_stream_deadline(const kube_stream *s)
{
    return s->deadline_ms;
}
