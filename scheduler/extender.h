/*
 * scheduler/extender.h - scheduler extenders (kube-scheduler v1.28's
 * pkg/scheduler/extender.go HTTPExtender, and the places schedule_one.go
 * and the preemption evaluator call them): the configuration's
 * `extenders`, each an HTTP(S) service POSTed kube's extender/v1 JSON.
 *
 * The JSON is k8s.io/kube-scheduler/extender/v1's as Go writes it: its
 * fields carry no json tags, so the keys are the Go field names ("Pod",
 * "NodeNames", ...; the unused one of Nodes / NodeNames is null), while the
 * objects inside (the Pod, the NodeList) are v1's ("metadata", "items").
 * Answers are read as Go reads them: keys matched case-insensitively, so
 * extenders written against the old tagged API ("nodenames") work too.
 *
 *   filter (findNodesThatPassExtenders, after the Filter plugins, on the
 *     feasible nodes, extender after extender): POST <urlPrefix>/<filterVerb>
 *     ExtenderArgs {Pod, Nodes (a NodeList) | NodeNames (nodeCacheCapable)};
 *     answer ExtenderFilterResult {Nodes | NodeNames, FailedNodes,
 *     FailedAndUnresolvableNodes, Error}. The nodes it keeps go on; the
 *     failed ones get its message as their status (Unschedulable, or
 *     UnschedulableAndUnresolvable), so the FitError counts them.
 *   prioritize (prioritizeNodes, after the Score plugins, when more than
 *     one node is feasible): POST <prioritizeVerb> ExtenderArgs; answer
 *     HostPriorityList [{Host, Score}]; score * weight * 10
 *     (MaxNodeScore / MaxExtenderPriority) is added to the node's total.
 *     Several prioritizing extenders run concurrently, each on a thread of
 *     its own (one runs on the scheduling thread). A failing prioritize
 *     gives no score (never fails the cycle).
 *   bind (the binding cycle, before the Bind plugins): the first extender
 *     with a bindVerb interested in the pod binds it: POST <bindVerb>
 *     ExtenderBindingArgs {PodName, PodNamespace, PodUID, Node}; answer
 *     ExtenderBindingResult {Error}. The pod is then not bound through
 *     the API by the scheduler.
 *   preempt (DefaultPreemption, between finding candidates and choosing
 *     one): POST <preemptVerb> ExtenderPreemptionArgs {Pod,
 *     NodeNameToVictims | NodeNameToMetaVictims (nodeCacheCapable)}, each
 *     node's {Pods, NumPDBViolations} (meta pods: {UID}); answer
 *     ExtenderPreemptionResult {NodeNameToMetaVictims}.
 *
 * An extender is called only for pods it is interested in: with
 * managedResources, pods requesting at least one of them (requests after
 * the API server's defaulting from limits, init containers included).
 * Ignorable extenders come last (buildExtenders' order). When a call
 * fails (unreachable, an answer other than 200, undecodable JSON, a
 * non-empty error), an ignorable extender is skipped and logged; any
 * other fails the scheduling (or binding) cycle with the error as
 * kube-scheduler words it, e.g.
 *   Post "http://127.0.0.1:8888/filter": dial tcp 127.0.0.1:8888: connect: connection refused
 *   failed filter with extender at URL http://127.0.0.1:8888/filter, code 500
 * which becomes the FailedScheduling event and PodScheduled condition
 * message.
 *
 * The Pod sent is the pod as the API server has it (read once per
 * scheduling attempt with a GET, since the informer keeps only what the
 * plugins read; reused while its resourceVersion is unchanged). Nodes
 * (without nodeCacheCapable) are built from the cache: metadata (name,
 * uid, resourceVersion, labels, annotations), spec (unschedulable,
 * taints) and status.allocatable; preemption victims are sent as their
 * metadata and spec.nodeName / priority.
 *
 * HTTP: the project's client (kube/transport/client.h) on a configuration
 * of its own per extender (kube_config_for_server): timeout httpTimeout
 * (5s when unset), no retries, no rate limit, no credentials. TLS:
 * tlsConfig as client-go's TLSClientConfig; enableHTTPS without a CA
 * skips verification, as kube-scheduler's makeTransport does.
 *
 * Threads: filter, prioritize and preempt are called from the scheduling
 * thread (prioritize's extra threads only read the cached pod); bind from
 * binding threads (thread-safe). Memory: sched_extenders_new()
 * allocates the set; sched_extenders_free() frees it; the configuration,
 * API client and snapshot are borrowed and must outlive it.
 */
#ifndef SCHED_EXTENDER_H
#define SCHED_EXTENDER_H

#include <stddef.h>

#include "config/config.h"
#include "framework/framework.h"
#include "kube/transport/client.h"

typedef struct sched_extenders sched_extenders;

/* The extenders of cfg (*out NULL when it has none). api reads the pods
 * sent; snap is the scheduler's snapshot (preemption answers are checked
 * against it). Errors name the file and field ("sched.yaml:
 * extenders[0].urlPrefix: ..."): KUBE_ECONFIG (a URL that does not parse,
 * TLS material that does not load), KUBE_EIO, KUBE_ENOMEM. */
int sched_extenders_new(const sched_config *cfg, kube_client *api, const fw_snapshot *snap,
                        sched_extenders **out, char *err, size_t errlen);
/* NULL-safe. No call may be running. */
void sched_extenders_free(sched_extenders *x);

/* Installs fence (kube_client_set_fence) on every extender's client:
 * with leader election, a replica that does not lead calls no extender.
 * Before the first call. NULL-safe. */
void sched_extenders_set_fence(sched_extenders *x, kube_client_fence_fn fence, void *ud);
/* Aborts every extender call in flight and fails every later one
 * (kube_client_shutdown). Irreversible. NULL-safe. */
void sched_extenders_shutdown(sched_extenders *x);

/* The framework's view of the set (fw_services.extenders); x NULL gives
 * the empty view. */
fw_extenders sched_extenders_view(sched_extenders *x);

/* extendersBinding: returns 0 when no binding extender is interested in
 * the pod (or every one failed and is ignorable): the Bind plugins bind
 * it. Returns 1 when an extender took the binding: *st is NULL on
 * success, else an FW_ERROR status with its error (caller frees). */
int sched_extenders_bind(sched_extenders *x, const fw_pod_info *pod, const char *node,
                         fw_status **st);

/* Whether sched_extenders_bind would ask an extender to bind the pod
 * (one with a bindVerb is interested in it). Never blocks. */
int sched_extenders_may_bind(const sched_extenders *x, const fw_pod_info *pod);

#endif
