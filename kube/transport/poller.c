/*
 * kube/transport/poller.c - a curl multi handle driven through
 * curl_multi_socket_action from one poll(2): the socket table libcurl keeps
 * up to date, its timer, and an eventfd wakeup (see
 * kube/transport/poller.h).
 */
#include "kube/transport/poller.h"

#include "kube/util/clock.h"
#include "kube/util/errors.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct kube_poller {
    CURLM *multi;
    int wake_fd;          /* eventfd, fds[0] */
    struct pollfd *fds;   /* fds[0] is wake_fd, then libcurl's sockets */
    struct pollfd *ready; /* a snapshot of the ready ones */
    size_t n_fds, cap_fds;
    int64_t due_ms; /* libcurl's timer (kube_now_ms clock), -1: none */
    int skipped;    /* the last run acted without polling */
    /* A store to one then a load of the other, both sequentially
     * consistent: the driver and a notifier cannot both miss. */
    atomic_int polling;  /* the driver is in or about to enter poll(2) */
    atomic_int notified; /* a kube_poller_notify since the last poll began */
};

/* Doubles the room for sockets. Returns KUBE_OK or KUBE_ENOMEM. */
static int poller_grow(kube_poller *p)
{
    size_t cap = p->cap_fds * 2;
    struct pollfd *fds = realloc(p->fds, cap * sizeof(*fds));
    struct pollfd *ready = fds ? realloc(p->ready, cap * sizeof(*ready)) : NULL;

    if (fds)
        p->fds = fds;
    if (!ready)
        return KUBE_ENOMEM;
    p->ready = ready;
    p->cap_fds = cap;
    return KUBE_OK;
}

/* CURLMOPT_SOCKETFUNCTION: keeps fds in step with what libcurl waits for. */
static int poller_on_socket(CURL *easy, curl_socket_t s, int what, void *ud, void *socketp)
{
    kube_poller *p = ud;
    short events =
        (short)((what & CURL_POLL_IN ? POLLIN : 0) | (what & CURL_POLL_OUT ? POLLOUT : 0));
    size_t i = 1;

    (void)easy;
    (void)socketp;
    while (i < p->n_fds && p->fds[i].fd != s)
        i++;
    if (what == CURL_POLL_REMOVE) {
        if (i < p->n_fds)
            p->fds[i] = p->fds[--p->n_fds];
        return 0;
    }
    if (i == p->n_fds) {
        if (p->n_fds == p->cap_fds && poller_grow(p) != KUBE_OK)
            return -1; /* libcurl fails the transfer */
        p->fds[p->n_fds++].fd = s;
    }
    p->fds[i].events = events;
    p->fds[i].revents = 0;
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: when libcurl wants to be called back. */
static int poller_on_timer(CURLM *multi, long timeout_ms, void *ud)
{
    kube_poller *p = ud;

    (void)multi;
    p->due_ms = timeout_ms < 0 ? -1 : kube_now_ms() + timeout_ms;
    return 0;
}

int kube_poller_new(CURLM *multi, kube_poller **out)
{
    kube_poller *p = calloc(1, sizeof(*p));

    *out = NULL;
    if (!p)
        return KUBE_ENOMEM;
    p->multi = multi;
    p->due_ms = -1;
    p->cap_fds = 8;
    p->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    p->fds = calloc(p->cap_fds, sizeof(*p->fds));
    p->ready = calloc(p->cap_fds, sizeof(*p->ready));
    if (p->wake_fd < 0 || !p->fds || !p->ready) {
        kube_poller_free(p);
        return KUBE_ENOMEM;
    }
    p->fds[0] = (struct pollfd){p->wake_fd, POLLIN, 0};
    p->n_fds = 1;
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, poller_on_socket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, p);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, poller_on_timer);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, p);
    *out = p;
    return KUBE_OK;
}

void kube_poller_free(kube_poller *p)
{
    if (!p)
        return;
    if (p->wake_fd >= 0)
        close(p->wake_fd);
    free(p->fds);
    free(p->ready);
    free(p);
}

/* An eventfd write never blocks short of 2^64. */
void kube_poller_wake(kube_poller *p)
{
    uint64_t one = 1;

    (void)!write(p->wake_fd, &one, sizeof(one));
}

void kube_poller_notify(kube_poller *p)
{
    atomic_store(&p->notified, 1);
    if (atomic_load(&p->polling))
        kube_poller_wake(p);
}

/* The poll timeout: until libcurl's timer, at most max_ms. */
static int poller_wait_ms(const kube_poller *p, int max_ms)
{
    int64_t left;

    if (p->due_ms < 0)
        return max_ms;
    left = p->due_ms - kube_now_ms();
    return left <= 0 ? 0 : left > max_ms ? max_ms : (int)left;
}

/* Hands each ready socket to libcurl. The ready ones are copied first:
 * libcurl changes fds while it acts. */
static void poller_act(kube_poller *p)
{
    size_t n_ready = 0;
    int running;

    for (size_t i = 1; i < p->n_fds; i++)
        if (p->fds[i].revents)
            p->ready[n_ready++] = p->fds[i];
    for (size_t i = 0; i < n_ready; i++) {
        short r = p->ready[i].revents;
        int bits = (r & (POLLIN | POLLHUP) ? CURL_CSELECT_IN : 0) |
                   (r & POLLOUT ? CURL_CSELECT_OUT : 0) | (r & POLLERR ? CURL_CSELECT_ERR : 0);
        curl_multi_socket_action(p->multi, p->ready[i].fd, bits, &running);
    }
    if (p->due_ms >= 0 && p->due_ms <= kube_now_ms()) {
        p->due_ms = -1; /* libcurl sets the next one while it acts */
        curl_multi_socket_action(p->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
}

void kube_poller_run(kube_poller *p, int max_ms)
{
    int wait, failed = 0;
    uint64_t ticks;

    atomic_store(&p->polling, 1);
    wait = poller_wait_ms(p, atomic_exchange(&p->notified, 0) ? 0 : max_ms);
    p->skipped = wait == 0 && !p->skipped;
    if (p->skipped)
        for (size_t i = 0; i < p->n_fds; i++)
            p->fds[i].revents = 0;
    else
        failed = poll(p->fds, p->n_fds, wait) < 0 && errno != EINTR;
    atomic_store(&p->polling, 0);
    if (failed)
        return;
    if (p->fds[0].revents)
        (void)!read(p->wake_fd, &ticks, sizeof(ticks));
    poller_act(p);
}
