/*
 * kube/transport/client_loop.c - the I/O thread of kube/client: a curl multi handle
 * driven through curl_multi_socket_action from one poll(2) over the
 * sockets libcurl asks for (CURLMOPT_SOCKETFUNCTION) and its timer
 * (CURLMOPT_TIMERFUNCTION), fed through a lock-protected submit queue and
 * an eventfd wakeup, completing each transfer by posting the waiting
 * caller's semaphore (see kube/transport/client_loop.h).
 *
 * Why socket_action rather than curl_multi_perform/curl_multi_poll: told
 * which socket is ready, libcurl 7.88 skips the zero-timeout poll it makes
 * for each transfer otherwise (about three system calls per request), and
 * only the ready transfers run.
 */
#include "kube/transport/client_loop.h"

#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

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
    int wake_fd;          /* eventfd: the submit queue, cancel or quit */
    pthread_mutex_t lock; /* guards the queue and cancel_done */
    pthread_cond_t cancel_cv;
    loop_xfer *queue_head, *queue_tail;
    atomic_int canceled;
    int cancel_done; /* the loop has taken every transfer off since */
    atomic_int quit;

    /* Loop thread only. */
    loop_xfer *active;    /* in the multi handle */
    struct pollfd *fds;   /* fds[0] is wake_fd, then libcurl's sockets */
    struct pollfd *ready; /* a snapshot of the ready ones */
    size_t n_fds, cap_fds;
    int64_t due_ms; /* libcurl's timer (kube_now_ms clock), -1: none */
    int skipped;    /* the last turn acted without polling */
};

/* ---- libcurl's sockets and timer --------------------------------------- */

/* Doubles the room for sockets. Returns KUBE_OK or KUBE_ENOMEM. */
static int loop_grow_fds(kube_http_loop *l)
{
    size_t cap = l->cap_fds * 2;
    struct pollfd *fds = realloc(l->fds, cap * sizeof(*fds));
    struct pollfd *ready = fds ? realloc(l->ready, cap * sizeof(*ready)) : NULL;

    if (fds)
        l->fds = fds;
    if (!ready)
        return KUBE_ENOMEM;
    l->ready = ready;
    l->cap_fds = cap;
    return KUBE_OK;
}

/* CURLMOPT_SOCKETFUNCTION: keeps fds in step with what libcurl waits for. */
static int loop_on_socket(CURL *easy, curl_socket_t s, int what, void *ud, void *socketp)
{
    kube_http_loop *l = ud;
    short events =
        (short)((what & CURL_POLL_IN ? POLLIN : 0) | (what & CURL_POLL_OUT ? POLLOUT : 0));
    size_t i = 1;

    (void)easy;
    (void)socketp;
    while (i < l->n_fds && l->fds[i].fd != s)
        i++;
    if (what == CURL_POLL_REMOVE) {
        if (i < l->n_fds)
            l->fds[i] = l->fds[--l->n_fds];
        return 0;
    }
    if (i == l->n_fds) {
        if (l->n_fds == l->cap_fds && loop_grow_fds(l) != KUBE_OK)
            return -1; /* libcurl fails the transfer */
        l->fds[l->n_fds++].fd = s;
    }
    l->fds[i].events = events;
    l->fds[i].revents = 0;
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: when libcurl wants to be called back. */
static int loop_on_timer(CURLM *multi, long timeout_ms, void *ud)
{
    kube_http_loop *l = ud;

    (void)multi;
    l->due_ms = timeout_ms < 0 ? -1 : kube_now_ms() + timeout_ms;
    return 0;
}

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

/* The poll timeout: until libcurl's timer, at most LOOP_IDLE_MS. */
static int loop_wait_ms(const kube_http_loop *l)
{
    int64_t left;

    if (l->due_ms < 0)
        return LOOP_IDLE_MS;
    left = l->due_ms - kube_now_ms();
    return left <= 0 ? 0 : left > LOOP_IDLE_MS ? LOOP_IDLE_MS : (int)left;
}

/* Waits for a socket, the timer or a wakeup, and lets libcurl act on what
 * happened. The ready sockets are copied first: libcurl changes fds while
 * it acts. */
static void loop_wait_and_act(kube_http_loop *l)
{
    int wait = loop_wait_ms(l), running;
    size_t n_ready = 0;
    uint64_t ticks;

    /* With the timer due (a transfer just added), act first and poll on
     * the next turn (never twice in a row without polling). */
    l->skipped = wait == 0 && !l->skipped;
    if (l->skipped)
        for (size_t i = 0; i < l->n_fds; i++)
            l->fds[i].revents = 0;
    else if (poll(l->fds, l->n_fds, wait) < 0 && errno != EINTR)
        return;
    if (l->fds[0].revents)
        (void)!read(l->wake_fd, &ticks, sizeof(ticks));
    for (size_t i = 1; i < l->n_fds; i++)
        if (l->fds[i].revents)
            l->ready[n_ready++] = l->fds[i];
    for (size_t i = 0; i < n_ready; i++) {
        short r = l->ready[i].revents;
        int bits = (r & (POLLIN | POLLHUP) ? CURL_CSELECT_IN : 0) |
                   (r & POLLOUT ? CURL_CSELECT_OUT : 0) | (r & POLLERR ? CURL_CSELECT_ERR : 0);
        curl_multi_socket_action(l->multi, l->ready[i].fd, bits, &running);
    }
    if (l->due_ms >= 0 && l->due_ms <= kube_now_ms()) {
        l->due_ms = -1; /* libcurl sets the next one while it acts */
        curl_multi_socket_action(l->multi, CURL_SOCKET_TIMEOUT, 0, &running);
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
        loop_wait_and_act(l);
        loop_reap(l);
    }
    return NULL;
}

/* Wakes the loop thread (an eventfd write never blocks short of 2^64). */
static void loop_wake(kube_http_loop *l)
{
    uint64_t one = 1;

    (void)!write(l->wake_fd, &one, sizeof(one));
}

/* Frees what kube_http_loop_new allocated (the thread is not running). */
static void loop_release(kube_http_loop *l)
{
    if (l->multi)
        curl_multi_cleanup(l->multi);
    if (l->wake_fd >= 0)
        close(l->wake_fd);
    pthread_cond_destroy(&l->cancel_cv);
    pthread_mutex_destroy(&l->lock);
    free(l->fds);
    free(l->ready);
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
    l->due_ms = -1;
    l->cap_fds = 8;
    l->multi = curl_multi_init();
    l->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    l->fds = calloc(l->cap_fds, sizeof(*l->fds));
    l->ready = calloc(l->cap_fds, sizeof(*l->ready));
    if (!l->multi || l->wake_fd < 0 || !l->fds || !l->ready) {
        loop_release(l);
        return KUBE_ENOMEM;
    }
    l->fds[0] = (struct pollfd){l->wake_fd, POLLIN, 0};
    l->n_fds = 1;
    curl_multi_setopt(l->multi, CURLMOPT_SOCKETFUNCTION, loop_on_socket);
    curl_multi_setopt(l->multi, CURLMOPT_SOCKETDATA, l);
    curl_multi_setopt(l->multi, CURLMOPT_TIMERFUNCTION, loop_on_timer);
    curl_multi_setopt(l->multi, CURLMOPT_TIMERDATA, l);
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
    loop_wake(l);
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
        /* A non-empty queue has a wakeup pending already. */
        wake = l->queue_head == NULL;
        if (l->queue_tail)
            l->queue_tail->next = &x;
        else
            l->queue_head = &x;
        l->queue_tail = &x;
    }
    pthread_mutex_unlock(&l->lock);
    if (wake) /* outside the lock, which the woken loop takes at once */
        loop_wake(l);
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
    loop_wake(l);
    pthread_mutex_lock(&l->lock);
    while (!l->cancel_done)
        pthread_cond_wait(&l->cancel_cv, &l->lock);
    pthread_mutex_unlock(&l->lock);
}
