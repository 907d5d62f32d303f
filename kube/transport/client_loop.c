/*
 * kube/transport/client_loop.c - the I/O thread of kube/transport/client: a curl multi handle
 * driven by a kube/transport/poller.h poller (socket_action over one
 * poll(2)), fed through a lock-protected queue of posted tasks and the
 * poller's notification (an eventfd write only when the loop is idle),
 * with a list of transfers in flight and a list of tasks waiting for their
 * time (see kube/transport/client_loop.h).
 */
#include "kube/transport/client_loop.h"

#include "kube/transport/poller.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define LOOP_IDLE_MS 1000 /* longest poll when nothing is due */

struct kube_http_loop {
    CURLM *multi;
    pthread_t thread;
    char name[16];
    kube_poller *poller;  /* its wakeup: the posted queue, cancel or quit */
    pthread_mutex_t lock; /* guards the queue and cancel_done */
    pthread_cond_t cancel_cv;
    kube_http_task *queue_head, *queue_tail;
    atomic_int canceled;
    int cancel_done; /* the loop has ended every task since */
    atomic_int quit;

    /* Loop thread only. */
    kube_http_task *active;               /* transfers in the multi handle */
    kube_http_task *timers, *timers_tail; /* by due_ms, earliest first */
};

/* Takes t out of the doubly linked list at *head. */
static void loop_unlink(kube_http_task **head, kube_http_task *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        *head = t->next;
    if (t->next)
        t->next->prev = t->prev;
}

/* Takes the first waiting task off the timer list. */
static kube_http_task *loop_pop_timer(kube_http_loop *l)
{
    kube_http_task *t = l->timers;

    loop_unlink(&l->timers, t);
    if (l->timers_tail == t)
        l->timers_tail = NULL;
    return t;
}

/* Takes an active transfer out of the multi and hands it back. */
static void loop_finish(kube_http_loop *l, kube_http_task *t, CURLcode cc)
{
    loop_unlink(&l->active, t);
    curl_multi_remove_handle(l->multi, t->easy);
    t->fn(t, cc); /* t may be gone from here on */
}

/* Runs the posted tasks (aborted once the loop is canceled). */
static void loop_take_queue(kube_http_loop *l)
{
    kube_http_task *t, *next;

    pthread_mutex_lock(&l->lock);
    t = l->queue_head;
    l->queue_head = l->queue_tail = NULL;
    pthread_mutex_unlock(&l->lock);
    for (; t; t = next) {
        next = t->next;
        t->fn(t, atomic_load(&l->canceled) ? CURLE_ABORTED_BY_CALLBACK : CURLE_OK);
    }
}

/* Runs the tasks whose time has come. */
static void loop_run_timers(kube_http_loop *l)
{
    int64_t now = kube_now_ms();

    while (l->timers && l->timers->due_ms <= now) {
        kube_http_task *t = loop_pop_timer(l);
        t->fn(t, CURLE_OK);
    }
}

/* How long the loop may sleep: until the first timer, at most idle. */
static int loop_wait_ms(const kube_http_loop *l)
{
    int64_t left;

    if (!l->timers)
        return LOOP_IDLE_MS;
    left = l->timers->due_ms - kube_now_ms();
    return left <= 0 ? 0 : left > LOOP_IDLE_MS ? LOOP_IDLE_MS : (int)left;
}

/* Hands back the transfers libcurl reports done. */
static void loop_reap(kube_http_loop *l)
{
    CURLMsg *msg;
    int left;

    while ((msg = curl_multi_info_read(l->multi, &left)) != NULL) {
        kube_http_task *t = NULL;
        CURLcode cc = msg->data.result; /* msg dies with the removal */

        if (msg->msg != CURLMSG_DONE)
            continue;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&t);
        loop_finish(l, t, cc);
    }
}

/* After a cancel: ends every transfer in flight and every waiting task,
 * then tells the cancelers (kube_http_loop_cancel waits for it). */
static void loop_abort_all(kube_http_loop *l)
{
    while (l->active)
        loop_finish(l, l->active, CURLE_ABORTED_BY_CALLBACK);
    while (l->timers) {
        kube_http_task *t = loop_pop_timer(l);
        t->fn(t, CURLE_ABORTED_BY_CALLBACK);
    }
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
        loop_run_timers(l);
        kube_poller_run(l->poller, loop_wait_ms(l));
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

void kube_http_loop_post(kube_http_loop *l, kube_http_task *t)
{
    int wake;

    t->next = NULL;
    pthread_mutex_lock(&l->lock);
    /* A non-empty queue has a notification pending already. */
    wake = l->queue_head == NULL;
    if (l->queue_tail)
        l->queue_tail->next = t;
    else
        l->queue_head = t;
    l->queue_tail = t;
    pthread_mutex_unlock(&l->lock);
    if (wake) /* outside the lock, which the woken loop takes at once */
        kube_poller_notify(l->poller);
}

int kube_http_loop_start(kube_http_loop *l, kube_http_task *t)
{
    if (atomic_load(&l->canceled))
        return KUBE_ECANCELED;
    curl_easy_setopt(t->easy, CURLOPT_PRIVATE, (void *)t);
    if (curl_multi_add_handle(l->multi, t->easy) != CURLM_OK)
        return KUBE_ENOMEM;
    t->prev = NULL;
    t->next = l->active;
    if (l->active)
        l->active->prev = t;
    l->active = t;
    return KUBE_OK;
}

int kube_http_loop_at(kube_http_loop *l, kube_http_task *t, int64_t due_ms)
{
    kube_http_task *after = l->timers_tail;

    if (atomic_load(&l->canceled))
        return KUBE_ECANCELED;
    t->due_ms = due_ms;
    /* Most times are later than every other: look from the end. */
    while (after && after->due_ms > due_ms)
        after = after->prev;
    t->prev = after;
    t->next = after ? after->next : l->timers;
    if (t->next)
        t->next->prev = t;
    else
        l->timers_tail = t;
    if (after)
        after->next = t;
    else
        l->timers = t;
    return KUBE_OK;
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
