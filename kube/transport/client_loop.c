/*
 * kube/transport/client_loop.c - the I/O thread of kube/client: a curl multi handle
 * driven by a kube/transport/poller.h poller (socket_action over one
 * poll(2)), fed through a lock-protected submit queue and the poller's
 * notification (an eventfd write only when the loop is idle), completing each transfer by posting
 * the waiting caller's semaphore (see kube/transport/client_loop.h).
 */
#include "kube/transport/client_loop.h"

#include "kube/transport/poller.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define LOOP_IDLE_MS 1000 /* longest poll when nothing is due */

/* One transfer handed to the loop: lives on the waiting caller's stack. */
typedef struct loop_xfer {
    CURL *easy;
    CURLcode cc;
    sem_t done;                    /* posted once cc is set */
    struct loop_xfer *next, *prev; /* submit queue (next only), or active list */
} loop_xfer;

struct kube_http_loop {
    CURLM *multi;
    pthread_t thread;
    char name[16];
    kube_poller *poller;  /* its wakeup: the submit queue, cancel or quit */
    pthread_mutex_t lock; /* guards the queue and cancel_done */
    pthread_cond_t cancel_cv;
    loop_xfer *queue_head, *queue_tail;
    atomic_int canceled;
    int cancel_done; /* the loop has taken every transfer off since */
    atomic_int quit;

    /* Loop thread only. */
    loop_xfer *active; /* in the multi handle */
};

/* Hands x back to its caller with result cc. x must be out of the multi.
 * A semaphore rather than a condition variable: the waiter wakes without
 * contending for a lock the loop still holds. */
static void loop_complete(loop_xfer *x, CURLcode cc)
{
    x->cc = cc;
    sem_post(&x->done); /* x may be gone from here on */
}

static void loop_unlink(kube_http_loop *l, loop_xfer *x)
{
    if (x->prev)
        x->prev->next = x->next;
    else
        l->active = x->next;
    if (x->next)
        x->next->prev = x->prev;
}

/* Takes an active transfer out of the multi and completes it. */
static void loop_finish(kube_http_loop *l, loop_xfer *x, CURLcode cc)
{
    loop_unlink(l, x);
    curl_multi_remove_handle(l->multi, x->easy);
    loop_complete(x, cc);
}

/* Moves the submitted transfers into the multi handle (or fails them once
 * the loop is canceled). */
static void loop_take_queue(kube_http_loop *l)
{
    loop_xfer *x, *next;

    pthread_mutex_lock(&l->lock);
    x = l->queue_head;
    l->queue_head = l->queue_tail = NULL;
    pthread_mutex_unlock(&l->lock);
    for (; x; x = next) {
        next = x->next;
        if (atomic_load(&l->canceled)) {
            loop_complete(x, CURLE_ABORTED_BY_CALLBACK);
        } else if (curl_multi_add_handle(l->multi, x->easy) != CURLM_OK) {
            loop_complete(x, CURLE_OUT_OF_MEMORY);
        } else {
            x->prev = NULL;
            x->next = l->active;
            if (l->active)
                l->active->prev = x;
            l->active = x;
        }
    }
}

/* Completes the transfers libcurl reports done. */
static void loop_reap(kube_http_loop *l)
{
    CURLMsg *msg;
    int left;

    while ((msg = curl_multi_info_read(l->multi, &left)) != NULL) {
        loop_xfer *x = NULL;
        CURLcode cc = msg->data.result; /* msg dies with the removal */

        if (msg->msg != CURLMSG_DONE)
            continue;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        loop_finish(l, x, cc);
    }
}

/* After a cancel: aborts every active transfer, then tells the cancelers
 * (kube_http_loop_cancel waits for it) that none is left. */
static void loop_abort_all(kube_http_loop *l)
{
    while (l->active)
        loop_finish(l, l->active, CURLE_ABORTED_BY_CALLBACK);
    pthread_mutex_lock(&l->lock);
    l->cancel_done = 1;
    pthread_cond_broadcast(&l->cancel_cv);
    pthread_mutex_unlock(&l->lock);
}

static void *loop_main(void *arg)
{
    kube_http_loop *l = arg;

    pthread_setname_np(pthread_self(), l->name);
    while (!atomic_load(&l->quit)) {
        loop_take_queue(l);
        if (atomic_load(&l->canceled))
            loop_abort_all(l);
        kube_poller_run(l->poller, LOOP_IDLE_MS);
        loop_reap(l);
    }
    return NULL;
}

/* Frees what kube_http_loop_new allocated (the thread is not running). */
static void loop_release(kube_http_loop *l)
{
    if (l->multi)
        curl_multi_cleanup(l->multi);
    pthread_cond_destroy(&l->cancel_cv);
    pthread_mutex_destroy(&l->lock);
    kube_poller_free(l->poller); /* after the multi: its cleanup calls back */
    free(l);
}

int kube_http_loop_new(const char *name, long max_host_conns, kube_http_loop **out)
{
    kube_http_loop *l = calloc(1, sizeof(*l));

    *out = NULL;
    if (!l)
        return KUBE_ENOMEM;
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->cancel_cv, NULL);
    l->multi = curl_multi_init();
    if (!l->multi || kube_poller_new(l->multi, &l->poller) != KUBE_OK) {
        loop_release(l);
        return KUBE_ENOMEM;
    }
    curl_multi_setopt(l->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    curl_multi_setopt(l->multi, CURLMOPT_MAX_HOST_CONNECTIONS, max_host_conns);
    curl_multi_setopt(l->multi, CURLMOPT_MAXCONNECTS, max_host_conns);
    kube_strlcpy(l->name, name, sizeof(l->name));
    if (pthread_create(&l->thread, NULL, loop_main, l) != 0) {
        loop_release(l);
        return KUBE_EIO;
    }
    *out = l;
    return KUBE_OK;
}

void kube_http_loop_free(kube_http_loop *l)
{
    if (!l)
        return;
    atomic_store(&l->quit, 1);
    kube_poller_wake(l->poller);
    pthread_join(l->thread, NULL);
    loop_release(l);
}

CURLcode kube_http_loop_perform(kube_http_loop *l, CURL *easy)
{
    loop_xfer x;
    int wake = 0;

    memset(&x, 0, sizeof(x));
    x.easy = easy;
    sem_init(&x.done, 0, 0);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, (void *)&x);
    pthread_mutex_lock(&l->lock);
    if (atomic_load(&l->canceled)) {
        x.cc = CURLE_ABORTED_BY_CALLBACK;
        sem_post(&x.done);
    } else {
        /* A non-empty queue has a notification pending already. */
        wake = l->queue_head == NULL;
        if (l->queue_tail)
            l->queue_tail->next = &x;
        else
            l->queue_head = &x;
        l->queue_tail = &x;
    }
    pthread_mutex_unlock(&l->lock);
    if (wake) /* outside the lock, which the woken loop takes at once */
        kube_poller_notify(l->poller);
    while (sem_wait(&x.done) != 0) /* EINTR */
        ;
    sem_destroy(&x.done);
    return x.cc;
}

void kube_http_loop_cancel(kube_http_loop *l)
{
    pthread_mutex_lock(&l->lock);
    atomic_store(&l->canceled, 1);
    pthread_mutex_unlock(&l->lock);
    kube_poller_wake(l->poller);
    pthread_mutex_lock(&l->lock);
    while (!l->cancel_done)
        pthread_cond_wait(&l->cancel_cv, &l->lock);
    pthread_mutex_unlock(&l->lock);
}
