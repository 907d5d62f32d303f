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

/* How long the fence waits for the scheduling and binding threads to let
 * go of their pods once nothing of theirs can reach the API any more. */
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

/* Waits (at most FENCE_DRAIN_MS) until no pod is in a scheduling cycle or
 * a binding cycle any more. */
static void fence_drain(sched_scheduler *s)
{
    struct timespec ts;
    int idle;

    kube_deadline_after(&ts, CLOCK_REALTIME, FENCE_DRAIN_MS);
    pthread_mutex_lock(&s->mu);
    while ((s->in_cycle || s->in_flight > 0) &&
           pthread_cond_timedwait(&s->idle_cv, &s->mu, &ts) == 0)
        ;
    idle = !s->in_cycle && s->in_flight == 0;
    pthread_mutex_unlock(&s->mu);
    if (!idle)
        KLOG_WARN("fence: pods still in scheduling or binding cycles after %d ms (none of "
                  "their requests can reach the API any more)",
                  FENCE_DRAIN_MS);
}

void sched_fence(void *ud, int lost)
{
    sched_scheduler *s = ud;

    if (!lost) /* stopped: the scheduler drained itself before stopping the elector */
        return;
    KLOG_ERROR("leaderelection lost: stopping scheduling, aborting bindings in flight");
    pthread_mutex_lock(&s->mu);
    atomic_store(&s->active, 0);
    s->fenced = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_cond_broadcast(&s->space_cv);
    pthread_mutex_unlock(&s->mu);
    kube_client_shutdown(s->client);
    sched_extenders_shutdown(s->extenders);
    sched_binders_drop_queued(s);
    sched_binders_reject_waiting(s);
    fence_drain(s);
    KLOG_INFO("fenced: no write of this replica can reach the API server any more");
}
