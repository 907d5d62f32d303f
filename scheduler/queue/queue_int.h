/*
 * scheduler/queue/queue_int.h - what the scheduling queue's files share
 * (queue.c: placement, construction, Pop and housekeeping; requeue.c: the
 * informer side and the moves on cluster events). Not a public header:
 * only scheduler/queue/ includes it.
 */
#ifndef SCHED_QUEUE_INT_H
#define SCHED_QUEUE_INT_H

#include <pthread.h>
#include <stdint.h>

#include "kube/util/strmap.h"
#include "queue/heap.h"
#include "queue/nominator.h"
#include "queue/queue.h"

/* Labels of scheduler_queue_incoming_pods_total that are not events. */
#define EV_POD_ADD "PodAdd"
#define EV_POD_UPDATE "PodUpdate"
#define EV_ATTEMPT_FAILURE "ScheduleAttemptFailure"
#define EV_BACKOFF_COMPLETE "BackoffComplete"

#define KEY_MAX 512 /* namespace (63) + "/" + name (253) fit */

/* One (profile, plugin, event) a pod may be requeued on. */
typedef struct hint_entry {
    fw_framework *fw;
    const char *plugin;
    void *self;
    fw_cluster_event event;
    fw_queueing_hint_fn hint;
} hint_entry;

struct sched_queue {
    pthread_mutex_t mu;
    pthread_cond_t cond; /* activeQ became non-empty, or closed */
    pthread_cond_t tick; /* wakes the flush thread on close */
    fw_framework **fws;
    size_t n_fws;
    hint_entry *hints;
    size_t n_hints, cap_hints;
    int64_t initial_ns, max_ns, max_unsched_ns;
    int64_t (*now_ns)(void *ud);
    void *clock_ud;
    sched_heap active, backoff;
    kube_strmap all;           /* key -> queued pod, every queue */
    sched_queued_pod *unsched; /* list head */
    size_t n_unsched, n_gated;
    int64_t cycle, move_request_cycle;
    int closed, running;
    pthread_t flusher;
    sched_core_metrics *metrics;
    sched_nominator *nominator; /* borrowed */
};

/* The queue's clock (monotonic nanoseconds). */
int64_t sq_now_ns(const sched_queue *q);
/* "ns/name" into out (n bytes). */
void sq_key_of(const char *ns, const char *name, char *out, size_t n);
/* The "namespace/name" key of a queued pod, in buf (KEY_MAX bytes). */
const char *sq_qkey(const sched_queued_pod *qp, char *buf);
/* A new queued pod holding a reference to pi, or NULL (out of memory). */
sched_queued_pod *sq_qpod_new(fw_framework *fw, fw_pod_info *pi, int64_t now);
/* 1 when name is in the set. */
int sq_has_plugin(const char *const *set, size_t n, const char *name);
/* The profile named by the pod's spec.schedulerName, or NULL. */
fw_framework *sq_framework_for(const sched_queue *q, const struct kube_pod *pod);
/* isPodBackingoff; a gated pod never tried does not back off. */
int sq_backing_off(const sched_queue *q, const sched_queued_pod *qp);
/* The scheduler_pending_pods gauges from the counts (lock held). */
void sq_update_gauges(sched_queue *q);
/* scheduler_queue_incoming_pods_total{queue, event} + 1. */
void sq_count_incoming(sched_queue *q, const char *queue, const char *event);
/* Removes qp from its place (not from `all`). */
void sq_detach(sched_queue *q, sched_queued_pod *qp);
/* Puts a detached qp somewhere. KUBE_ENOMEM leaves it detached. */
int sq_attach(sched_queue *q, sched_queued_pod *qp, sched_qwhere where);
/* Removes qp from the queue entirely and frees it. */
void sq_drop(sched_queue *q, sched_queued_pod *qp);
/* addToActiveQ on a detached pod: activeQ, or unschedulablePods as gated.
 * Returns 1 when it entered activeQ. */
int sq_add_to_active(sched_queue *q, sched_queued_pod *qp);
/* The unschedulable pods for which pred answers 1 (pred NULL: all), as a
 * new array (NULL with *n 0 when none or out of memory). */
sched_queued_pod **sq_collect_unsched(sched_queue *q,
                                      int (*pred)(void *ud, const sched_queued_pod *qp), void *ud,
                                      size_t *n);
/* movePodsToActiveOrBackoffQueue over pods in unschedulablePods. */
void sq_move_pods(sched_queue *q, sched_queued_pod **pods, size_t n, const fw_cluster_event *ev,
                  const kube_object *old_obj, const kube_object *new_obj);

#endif
