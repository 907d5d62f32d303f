/*
 * scheduler/queue/nominator.h - kube-scheduler's PodNominator
 * (internal/queue/scheduling_queue.go, nominator): the pods nominated to
 * run on a node, from status.nominatedNodeName or from preemption.
 *
 * The nominator is built before the frameworks (they reach it through
 * fw_services.nominator, sched_nominator_view()) and before the queue,
 * which records and forgets nominations as pods come and go.
 *
 * Threads: every function is thread-safe (one read-write lock; the queue
 * calls in with its own lock held, so the nominator never calls back into
 * the queue). sched_nominator_any() takes no lock.
 *
 * Memory: sched_nominator_new() allocates, sched_nominator_free() frees.
 * The nominator keeps its own references to the fw_pod_info it is given.
 */
#ifndef SCHED_NOMINATOR_H
#define SCHED_NOMINATOR_H

#include <stddef.h>

#include "framework/framework.h"

struct kube_pod;

typedef struct sched_nominator sched_nominator;

/* The pod lister the nominator consults: 1 when the pod ns/name exists and
 * is not assigned to a node. Called under the nominator's lock. */
typedef int (*sched_pod_pending_fn)(void *ud, const char *ns, const char *name);

/* Allocates an empty nominator into *out. pod_pending may be NULL (every
 * nomination accepted); as kube-scheduler's nominator, nominations of
 * pods the lister no longer shows pending are refused. KUBE_OK or
 * KUBE_ENOMEM. */
int sched_nominator_new(sched_pod_pending_fn pod_pending, void *ud, sched_nominator **out);
/* Frees the nominator and drops its references. NULL-safe. */
void sched_nominator_free(sched_nominator *n);

/* The fw_nominator view handed to the frameworks (n is borrowed and must
 * outlive every framework). */
fw_nominator sched_nominator_view(sched_nominator *n);

/* AddNominatedPod: mode NOOP uses the pod's status.nominatedNodeName
 * (nothing when empty); OVERRIDE nominates node ("" clears). A new
 * reference to pi is kept. KUBE_OK or KUBE_ENOMEM. */
int sched_nominator_add(sched_nominator *n, fw_pod_info *pi, fw_nominating_mode mode,
                        const char *node);
/* AddNominatedPod in NOOP mode, logging a failure instead of returning it. */
void sched_nominator_add_logged(sched_nominator *n, fw_pod_info *pi);
/* DeleteNominatedPodIfExists, by the pod's uid. */
void sched_nominator_delete(sched_nominator *n, const char *uid);
/* updateNominatedPod: replaces old_pod's nomination (old_pod NULL: the
 * same uid as new_pi) by new_pi's, keeping an in-memory nomination when
 * neither version of the pod carries one. */
void sched_nominator_update(sched_nominator *n, const struct kube_pod *old_pod,
                            fw_pod_info *new_pi);
/* 1 when any pod is nominated (no lock). */
int sched_nominator_any(const sched_nominator *n);

#endif
