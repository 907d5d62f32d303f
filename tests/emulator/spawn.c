/*
 * tests/emulator/spawn.c - see spawn.h. One process-wide pool: a list of
 * tasks handed to idle threads, under one lock.
 */
#include "spawn.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "kube/util/errors.h"

typedef struct spawn_task {
    void (*fn)(void *arg);
    void *arg;
    struct spawn_task *next;
} spawn_task;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_work = PTHREAD_COND_INITIALIZER;
static spawn_task *g_head, **g_tail = &g_head; /* handed over, not yet taken */
static size_t g_idle;                          /* threads waiting for a task */
static size_t g_queued;                        /* tasks in the list */
static atomic_llong g_started;                 /* threads created (a counter) */

/* The next task for an idle thread, waiting up to EMU_SPAWN_IDLE_MS; NULL
 * when none came. Called and returns with g_mu held. The deadline is on
 * CLOCK_MONOTONIC, so the wait is pthread_cond_clockwait's: the condition's
 * default clock is CLOCK_REALTIME, against which a monotonic deadline lies
 * decades in the past (every thread would exit at once). */
static spawn_task *take_task(void)
{
    struct timespec until;

    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += EMU_SPAWN_IDLE_MS / 1000;
    until.tv_nsec += (EMU_SPAWN_IDLE_MS % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    g_idle++;
    while (!g_head && pthread_cond_clockwait(&g_work, &g_mu, CLOCK_MONOTONIC, &until) != ETIMEDOUT)
        ;
    g_idle--;
    spawn_task *t = g_head;
    if (t) {
        g_head = t->next;
        if (!g_head)
            g_tail = &g_head;
        g_queued--;
    }
    return t;
}

/* A pooled thread: its first task, then what take_task hands it. */
static void *spawn_main(void *arg)
{
    spawn_task *t = arg;

    while (t) {
        t->fn(t->arg);
        free(t);
        pthread_mutex_lock(&g_mu);
        t = take_task();
        pthread_mutex_unlock(&g_mu);
    }
    OPENSSL_thread_stop();
    return NULL;
}

/* Queues t for an idle thread. 0 when every idle thread already has a task
 * coming (t is not queued). Called with g_mu held. */
static int hand_over(spawn_task *t)
{
    if (g_idle <= g_queued)
        return 0;
    *g_tail = t;
    g_tail = &t->next;
    g_queued++;
    pthread_cond_signal(&g_work);
    return 1;
}

/* See spawn.h. */
int emu_spawn(void (*fn)(void *arg), void *arg, size_t stack)
{
    spawn_task *t = malloc(sizeof(*t));
    pthread_attr_t attr;
    pthread_t tid;
    int handed, rc;

    if (!t)
        return KUBE_ENOMEM;
    *t = (spawn_task){fn, arg, NULL};
    pthread_mutex_lock(&g_mu);
    handed = hand_over(t);
    pthread_mutex_unlock(&g_mu);
    if (handed)
        return KUBE_OK;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, stack);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&tid, &attr, spawn_main, t);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        free(t);
        return KUBE_ENOMEM;
    }
    atomic_fetch_add(&g_started, 1);
    return KUBE_OK;
}

/* See spawn.h. */
long long emu_spawn_started(void)
{
    return atomic_load(&g_started);
}

/* See spawn.h. */
void emu_spawn_reset_started(void)
{
    atomic_store(&g_started, 0);
}
