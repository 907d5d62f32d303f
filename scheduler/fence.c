/*
 * scheduler/fence.c - what keeps a replica that is not the leader from
 * writing: the fence on the scheduler's API client (writes leave only while
 * the elector says we lead) and the elector's on_fence callback, which on
 * a lost Lease stops the scheduling thread, aborts the requests in flight
 * and drops the queued bindings before the elector releases the Lease.
 */
#include "scheduler_int.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"

/* How long the fence waits, in all, for the scheduling and binding
 * threads to let go of their pods once nothing of theirs can reach the API
 * any more. */
#define FENCE_DRAIN_MS 3000

/* Requests any replica may make, leading or not: reads, Events, the
 * reviews of the secure port's delegated authentication and authorization
 * (a standby serves /metrics and /healthz too), and Lease writes (the
 * election itself, should the elector share this client). */
static int fence_exempt(const char *method, const char *path)
{
    static const char *const groups[] = {"/apis/events.k8s.io/", "/apis/authentication.k8s.io/",
                                         "/apis/authorization.k8s.io/",
                                         "/apis/coordination.k8s.io/"};

    if (strcmp(method, "GET") == 0)
        return 1;
    for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
        if (strncmp(path, groups[i], strlen(groups[i])) == 0)
            return 1;
    return 0;
}

const char *sched_fence_check(void *ud, const char *method, const char *path)
{
    sched_scheduler *s = ud;

    if (fence_exempt(method, path) || (s->leader && kube_leader_is_leader(s->leader)))
        return NULL;
    return "not the leader";
}

static void still_busy(const char *what)
{
    KLOG_WARN("fence: %s still busy after %d ms (its requests cannot reach the API)", what,
              FENCE_DRAIN_MS);
}

/* Waits until the scheduling thread leaves its cycle, or the deadline
 * passes: its requests cannot reach the API any more, this only lets it
 * finish with its pod. */
static void wait_cycle(sched_scheduler *s, const struct timespec *deadline)
{
    int still;

    pthread_mutex_lock(&s->mu);
    while (s->in_cycle && pthread_cond_timedwait(&s->cycle_cv, &s->mu, deadline) == 0)
        ;
    still = s->in_cycle;
    pthread_mutex_unlock(&s->mu);
    if (still)
        still_busy("the scheduling thread");
}

void sched_fence(void *ud, int lost)
{
    sched_scheduler *s = ud;
    struct timespec deadline;

    if (!lost) /* stopped: the scheduler drained itself before stopping the elector */
        return;
    KLOG_ERROR("leaderelection lost: stopping scheduling, aborting bindings in flight");
    pthread_mutex_lock(&s->mu);
    atomic_store(&s->active, 0);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    sched_binders_fence(s->binders);
    kube_client_shutdown(s->client);
    sched_extenders_shutdown(s->extenders);
    kube_deadline_after(&deadline, CLOCK_REALTIME, FENCE_DRAIN_MS);
    wait_cycle(s, &deadline);
    sched_binders_drop_queued(s->binders);
    sched_reject_waiting(s);
    if (!sched_binders_wait_idle(s->binders, &deadline))
        still_busy("the binding threads");
    KLOG_INFO("fenced: no write of this replica can reach the API server any more");
}
