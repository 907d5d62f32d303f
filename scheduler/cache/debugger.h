/*
 * scheduler/cache/debugger.h - the cache debugger, as kube-scheduler
 * v1.28's pkg/scheduler/internal/cache/debugger: on SIGUSR2 the comparer
 * (CacheComparer) then the dumper (CacheDumper) log what the cache holds
 * and how it differs from the informers.
 *
 * Comparer: the nodes of the node lister against the cache's nodes, and
 * the pods of the pod lister (assigned ones, scheduled by us or not, and
 * the unassigned ones of our profiles) against the cache's pods (assumed
 * included) plus the queue's pending pods, by UID. Each difference is
 * logged, one line per kind, only when there is one:
 *
 *   "Cache mismatch" missedNodes=[a b] redundantNodes=[c]
 *   "Cache mismatch" missedPods=[uid1] redundantPods=[uid2 uid3]
 *
 * missed: in the informer, not in the cache (or queue); redundant: in the
 * cache, not in the informer. (kube-scheduler compares every pod of the
 * lister, so another scheduler's pending pods show as missed there; they
 * are left out here.)
 *
 * Dumper: one line per part, each value on the lines after it (klog's
 * multi-line value layout: "key=<", the lines tab-indented, " >"):
 *
 *   "Dump of cached NodeInfo" nodes=<
 *   	Node name: n1
 *   	Deleted: false
 *   	Requested Resources: {MilliCPU:100 Memory:134217728 EphemeralStorage:0
 *   AllowedPodNumber:0 ScalarResources:map[]}  (one line)
 *   	Allocatable Resources:{MilliCPU:4000 ... ScalarResources:map[]}
 *   	Scheduled Pods(number: 1):
 *   	name: p, namespace: default, uid: u1, phase: Running, nominated node:
 *    >
 *   "Dump of assumed pods" pods=<
 *   	name: q, namespace: default, uid: u2, phase: Pending, nominated node: , node: n1
 *    >
 *   "Dump of scheduling queue" pods=<
 *   	name: r, namespace: default, uid: u3, phase: Pending, nominated node:
 *    >
 *
 * Signal: sched_cache_debugger_listen() registers a debugger; the first
 * one installs a SIGUSR2 handler that only writes a byte to a pipe (a
 * self-pipe: nothing is logged or locked in the handler) and starts the
 * "sched-debug" thread, which reads the pipe and runs sched_cache_debug()
 * for every registered debugger. The last unlisten restores the previous
 * handler and joins the thread.
 *
 * Memory: the debugger's pointers are borrowed and must outlive it (and
 * its registration). sched_cache_mismatch lists are owned by the caller
 * (sched_cache_mismatch_clear()).
 * Threads: compare and dump may run on any thread (they take the cache's,
 * the queue's and the listers' locks, one at a time); listen and unlisten
 * from the controlling thread.
 */
#ifndef SCHED_CACHE_DEBUGGER_H
#define SCHED_CACHE_DEBUGGER_H

#include <stddef.h>

#include "cache/cache.h"
#include "framework/framework.h"
#include "kube/machinery/factory.h"
#include "queue/queue.h"

typedef struct sched_cache_debugger {
    sched_cache *cache;
    sched_queue *queue;              /* NULL: no pending pods */
    kube_lister *nodes, *pods;       /* the informer factory's */
    fw_framework *const *frameworks; /* the profiles: which pending pods are ours */
    size_t n_frameworks;
    struct sched_cache_debugger *next; /* the listener's list */
} sched_cache_debugger;

/* A sorted list of owned names. */
typedef struct sched_name_list {
    char **v;
    size_t n, cap;
} sched_name_list;

typedef struct sched_cache_mismatch {
    sched_name_list missed_nodes, redundant_nodes; /* node names */
    sched_name_list missed_pods, redundant_pods;   /* pod UIDs */
} sched_cache_mismatch;

/* CacheComparer.Compare: logs the differences (above) and, when out is
 * not NULL, returns them there (zeroed first; the caller clears it).
 * KUBE_OK or KUBE_ENOMEM (nothing logged). */
int sched_cache_compare(const sched_cache_debugger *d, sched_cache_mismatch *out);
/* Frees the lists of m and zeroes it. */
void sched_cache_mismatch_clear(sched_cache_mismatch *m);

/* CacheDumper.DumpAll: logs the cached nodes with their pods and
 * resources, the assumed pods and the pending pods. KUBE_OK or
 * KUBE_ENOMEM. */
int sched_cache_dump(const sched_cache_debugger *d);

/* What SIGUSR2 does: compare, then dump. */
void sched_cache_debug(const sched_cache_debugger *d);

/* Registers d for SIGUSR2 (see above). KUBE_OK, KUBE_ENOMEM or KUBE_EIO
 * (pipe, handler or thread could not be set up). */
int sched_cache_debugger_listen(sched_cache_debugger *d);
/* Unregisters d (no-op when not registered); returns once no dump of d
 * runs. */
void sched_cache_debugger_unlisten(sched_cache_debugger *d);

#endif
