/*
 * scheduler/cache/cache.h - the scheduler cache of kube-scheduler v1.28
 * (pkg/scheduler/internal/cache/cache.go, node_tree.go, snapshot.go): one
 * fw_node_info per node with the pods assigned or assumed there, and the
 * incremental update of the cycle's fw_snapshot.
 *
 * Pod states (keyed by UID):
 *   assume_pod()      after Reserve: the pod counts on its node at once, so
 *                     the next cycle sees it before the bind completes;
 *   finish_binding()  the bind returned: an assumed pod may now expire
 *                     after the TTL unless the informer confirms it;
 *   add_pod()         the informer saw the pod assigned: confirms an assumed
 *                     pod (moving it if it landed elsewhere) or adds it;
 *   forget_pod()      the bind failed: the assumed pod is removed;
 *   update_pod()/remove_pod() for confirmed pods.
 * kube-scheduler v1.28 runs with durationToExpireAssumedPod = 0: assumed
 * pods never expire (upstream kubernetes/kubernetes#106361). The TTL is an option (0 = never) and
 * cleanup_assumed() (every second from the scheduler) expires pods whose
 * binding finished more than TTL ago.
 *
 * Nodes: add/update/remove_node keep the node infos and a zone-interleaved
 * node order (nodeTree: nodes grouped by region/zone label, listed round
 * robin across zones), and image states (ImageStateSummary sizes and node
 * counts, shared refcounted blocks). A removed node's info stays while pods
 * remain on it.
 *
 * Snapshot: every mutation moves the node info to the head of a recency
 * list with a fresh generation; update_snapshot() copies only the node
 * infos newer than the snapshot's generation (fw_snapshot_upsert: pointer
 * arrays and references, never pods), removes deleted nodes, and rebuilds
 * the node list (in nodeTree order) only when nodes came or went, the
 * affinity lists only when a node's affinity state flipped - as
 * Cache.UpdateSnapshot.
 *
 * Sharing: the cache builds one fw_pod_info per pod, holding a reference to
 * the informer's decoded kube_pod (never a copy); node infos, the snapshot,
 * the queue and the nominator share it by reference.
 *
 * Threads: every function is thread-safe (one mutex). The snapshot passed
 * to update_snapshot() must not be read concurrently (the scheduling thread
 * owns it between cycles).
 *
 * Memory: sched_cache_new() allocates a cache freed by sched_cache_free().
 * kube objects passed in are borrowed (references are taken as needed).
 */
#ifndef SCHED_CACHE_H
#define SCHED_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "framework/framework.h"
#include "metrics.h"
#include "kube/util/clock.h"

struct kube_pod;
struct kube_node;

typedef struct sched_cache sched_cache;

typedef struct sched_cache_options {
    int64_t assumed_ttl_ms;      /* 0: assumed pods never expire (v1.28) */
    int64_t (*now_ms)(void *ud); /* NULL: kube_now_ms() */
    void *clock_ud;
    sched_core_metrics *metrics; /* scheduler_scheduler_cache_size; may be NULL */
} sched_cache_options;

/* opts may be NULL (defaults). KUBE_OK or KUBE_ENOMEM. */
int sched_cache_new(const sched_cache_options *opts, sched_cache **out);
/* Frees every node info and pod state. NULL-safe. */
void sched_cache_free(sched_cache *c);

/* ---- pods ---- */

/* AssumePod: pi (a reference is taken) counts on node from now on.
 * KUBE_OK, KUBE_EEXIST (the UID is already in the cache), KUBE_EINVAL,
 * KUBE_ENOMEM. */
int sched_cache_assume_pod(sched_cache *c, fw_pod_info *pi, const char *node);
/* FinishBinding: starts the assumed pod's expiry clock. KUBE_OK (also when
 * the pod is not assumed any more). */
int sched_cache_finish_binding(sched_cache *c, const fw_pod_info *pi);
/* ForgetPod: removes an assumed pod. KUBE_ENOTFOUND when not assumed,
 * KUBE_EINVAL when it was assumed on another node than `node`. */
int sched_cache_forget_pod(sched_cache *c, const fw_pod_info *pi, const char *node);
/* AddPod for a pod with spec.nodeName set (informer add). Confirms an
 * assumed pod (re-placed on the informer's node), re-adds an expired one.
 * KUBE_OK, KUBE_EEXIST (already added), KUBE_EINVAL (not assigned),
 * KUBE_ENOMEM. */
int sched_cache_add_pod(sched_cache *c, struct kube_pod *pod);
/* UpdatePod of an added (not assumed) pod. KUBE_ENOTFOUND otherwise. */
int sched_cache_update_pod(sched_cache *c, struct kube_pod *old_pod, struct kube_pod *new_pod);
/* RemovePod of a pod in the cache (assumed or added). KUBE_ENOTFOUND. */
int sched_cache_remove_pod(sched_cache *c, const struct kube_pod *pod);
/* 1 when the UID is assumed (not yet confirmed). */
int sched_cache_is_assumed(sched_cache *c, const char *uid);

/* ---- nodes ---- */

/* AddNode / UpdateNode. *info (may be NULL) receives a clone of the
 * resulting node info (caller frees with fw_node_info_free()), for
 * kube-scheduler's preCheckForNode. KUBE_OK or KUBE_ENOMEM. */
int sched_cache_add_node(sched_cache *c, struct kube_node *node, fw_node_info **info);
int sched_cache_update_node(sched_cache *c, struct kube_node *old_node, struct kube_node *new_node,
                            fw_node_info **info);
/* RemoveNode. KUBE_ENOTFOUND when unknown. */
int sched_cache_remove_node(sched_cache *c, const struct kube_node *node);

/* ---- snapshot and housekeeping ---- */

/* UpdateSnapshot (see the top). KUBE_OK, KUBE_ENOMEM, or KUBE_ESERVER
 * when the snapshot was inconsistent (logged; the lists are rebuilt for
 * the next cycle, as kube-scheduler does). */
int sched_cache_update_snapshot(sched_cache *c, fw_snapshot *s);
/* Expires assumed pods whose binding finished more than the TTL ago
 * (nothing when the TTL is 0) and refreshes the cache-size gauge. Returns
 * the number expired. */
size_t sched_cache_cleanup_assumed(sched_cache *c);

typedef struct sched_cache_counts {
    size_t nodes; /* nodes known (with a Node object) */
    size_t pods;  /* pod states (assumed included) */
    size_t assumed;
} sched_cache_counts;
void sched_cache_get_counts(sched_cache *c, sched_cache_counts *out);

#endif
