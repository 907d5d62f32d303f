/*
 * scheduler/framework/framework.h - the scheduling framework: the plugin
 * interface (every extension point of kube-scheduler v1.28), the handle
 * plugins get, the registry, and the runtime that builds a profile's
 * framework from configuration and runs each extension point with
 * kube-scheduler's semantics (pkg/scheduler/framework/runtime/framework.go
 * plus the node-finding and host-selection steps of schedule_one.go).
 *
 * Include only this header: it pulls in status.h, cycle_state.h, types.h,
 * parallelize.h and config/config.h.
 *
 * Conventions for plugins:
 *   - A plugin is a `const fw_plugin_desc` with static storage, declared in
 *     scheduler/plugins/plugins.h and listed in scheduler/plugins/
 *     registry.c. Every pointer except name and create may be NULL
 *     (the point is not implemented).
 *   - `self` is what create() returned; destroy(self) frees it.
 *   - Statuses: return NULL for success, or fw_status_new(...) (ownership
 *     passes to the framework). The framework sets the failed plugin.
 *   - The pod being scheduled is passed as its fw_pod_info (pi->pod is the
 *     kube_pod; requests are precomputed in pi->request).
 *   - Filter and Score run concurrently on many threads for different nodes
 *     (same cycle state, read-only; see cycle_state.h). Every other point
 *     runs on the scheduling thread, one pod at a time, except Bind/PreBind/
 *     PostBind/Permit-waiting which run on the pod's binding thread.
 */
#ifndef FW_FRAMEWORK_H
#define FW_FRAMEWORK_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "framework/cycle_state.h"
#include "framework/parallelize.h"
#include "framework/status.h"
#include "framework/types.h"
#include "kube/codec/object.h"

struct kube_client;
struct kube_factory;
struct kube_recorder;

typedef struct fw_framework fw_framework;
typedef struct fw_handle fw_handle;

/* Score bounds (framework.MaxNodeScore etc.). */
#define FW_MAX_NODE_SCORE 100
#define FW_MIN_NODE_SCORE 0
#define FW_MAX_TOTAL_SCORE INT64_MAX
/* Longest a Permit plugin may make a pod wait (kube's maxTimeout). */
#define FW_PERMIT_MAX_TIMEOUT_MS (15LL * 60 * 1000)

/* ------------------------------------------------------------------ */
/* Extension point results                                             */
/* ------------------------------------------------------------------ */

/* PreFilterResult: the only nodes worth filtering. A NULL result means all
 * nodes. Names are owned, sorted (strcmp) and unique. A result may also say
 * how a FitError explains it (fw_pre_filter_result_explain): NULL fields
 * leave the FitError as v1.28 writes it. */
typedef struct fw_pre_filter_result {
    char **node_names;
    size_t n;
    char *excluded_reason; /* owned: the reason counted for each node left out */
    char *note;            /* owned: a sentence appended to the FitError message */
    /* Set by fw_framework_run_pre_filter() on the merged result: the plugins
     * whose results narrowed the nodes (array owned, names static). They
     * count among the pod's unschedulable plugins when it does not fit, so
     * their events requeue it (kube-scheduler >= 1.30). */
    const char **plugins;
    size_t n_plugins;
} fw_pre_filter_result;

/* Builds a result from n names (copied, sorted, deduplicated). n == 0 is a
 * valid empty set (no node fits). NULL on OOM. Caller owns. */
fw_pre_filter_result *fw_pre_filter_result_new(const char *const *names, size_t n);
void fw_pre_filter_result_free(fw_pre_filter_result *r);
/* 1 when name is in r; r NULL (all nodes) contains everything. */
int fw_pre_filter_result_has(const fw_pre_filter_result *r, const char *name);
/* Makes a FitError explain r: each node of the snapshot that r leaves out
 * counts once with excluded_reason in the per-node summary (as
 * kube-scheduler >= 1.31 counts the nodes a PreFilterResult leaves out),
 * and note is appended after the summary (" <note>."). Either may be NULL;
 * both are copied. KUBE_OK or KUBE_ENOMEM. */
int fw_pre_filter_result_explain(fw_pre_filter_result *r, const char *excluded_reason,
                                 const char *note);
/* Merge as PreFilterResult.Merge: NULL (all nodes) is the identity,
 * otherwise the intersection, explained as the first explained of a and b.
 * Consumes neither; returns a new result (or
 * NULL meaning all nodes). *err set to KUBE_ENOMEM on OOM. */
fw_pre_filter_result *fw_pre_filter_result_merge(const fw_pre_filter_result *a,
                                                 const fw_pre_filter_result *b, int *err);

/* PostFilter (preemption) outcome: NominatingInfo. */
typedef enum fw_nominating_mode {
    FW_NOMINATING_NOOP = 0,     /* leave the pod's nominatedNodeName alone */
    FW_NOMINATING_OVERRIDE = 1, /* set it to node ("" clears it) */
} fw_nominating_mode;

typedef struct fw_post_filter_result {
    fw_nominating_mode mode;
    char node[254]; /* nominated node name when OVERRIDE */
} fw_post_filter_result;

/* One node's score from one plugin (NodeScore). name is borrowed from the
 * node info. */
typedef struct fw_node_score {
    const char *name;
    int64_t score;
} fw_node_score;

typedef struct fw_plugin_score {
    const char *plugin; /* static name */
    int64_t score;      /* weighted */
} fw_plugin_score;

/* A node's weighted scores from every score plugin and their total
 * (NodePluginScores). */
typedef struct fw_node_plugin_scores {
    const char *name;        /* borrowed from the node info */
    fw_plugin_score *scores; /* points into fw_score_list.storage */
    size_t n_scores;
    int64_t total;
} fw_node_plugin_scores;

typedef struct fw_score_list {
    fw_node_plugin_scores *nodes;
    size_t n;
    fw_plugin_score *storage;
} fw_score_list;

void fw_score_list_free(fw_score_list *l);

/* ------------------------------------------------------------------ */
/* Cluster events (EnqueueExtensions)                                  */
/* ------------------------------------------------------------------ */

/* ActionType bits. */
enum {
    FW_ACT_ADD = 1 << 0,
    FW_ACT_DELETE = 1 << 1,
    FW_ACT_UPDATE_NODE_ALLOCATABLE = 1 << 2,
    FW_ACT_UPDATE_NODE_LABEL = 1 << 3,
    FW_ACT_UPDATE_NODE_TAINT = 1 << 4,
    FW_ACT_UPDATE_NODE_CONDITION = 1 << 5,
    FW_ACT_ALL = (1 << 6) - 1,
    FW_ACT_UPDATE = FW_ACT_UPDATE_NODE_ALLOCATABLE | FW_ACT_UPDATE_NODE_LABEL |
                    FW_ACT_UPDATE_NODE_TAINT | FW_ACT_UPDATE_NODE_CONDITION,
};

/* GVK strings of ClusterEvent.Resource (kube-scheduler's framework.GVK).
 * Custom resources use "<Kind>.<version>.<group>". */
#define FW_GVK_POD "Pod"
#define FW_GVK_NODE "Node"
#define FW_GVK_PV "PersistentVolume"
#define FW_GVK_PVC "PersistentVolumeClaim"
#define FW_GVK_STORAGE_CLASS "storage.k8s.io/StorageClass"
#define FW_GVK_CSI_NODE "storage.k8s.io/CSINode"
#define FW_GVK_VMI "VirtualMachineInstance.v1.kubevirt.io"
#define FW_GVK_VM "VirtualMachine.v1.kubevirt.io"
#define FW_GVK_WILDCARD "*"

typedef struct fw_cluster_event {
    const char *resource; /* FW_GVK_* (static) */
    unsigned action;      /* FW_ACT_* bits */
    const char *label;    /* e.g. "NodeAdd", "AssignedPodDelete"; static */
} fw_cluster_event;

typedef enum fw_queueing_hint {
    FW_QUEUE_SKIP = 0,          /* the event cannot help this pod */
    FW_QUEUE_AFTER_BACKOFF = 1, /* requeue, honouring backoff */
    FW_QUEUE_IMMEDIATELY = 2,   /* requeue now */
} fw_queueing_hint;

/* Optional precise check for one event and one rejected pod. old_obj /
 * new_obj are borrowed decoded objects (NULL for add / delete). */
typedef fw_queueing_hint (*fw_queueing_hint_fn)(void *self, const fw_pod_info *pod,
                                                const kube_object *old_obj,
                                                const kube_object *new_obj);

typedef struct fw_cluster_event_with_hint {
    fw_cluster_event event;
    fw_queueing_hint_fn hint; /* NULL: always FW_QUEUE_AFTER_BACKOFF */
} fw_cluster_event_with_hint;

/* ------------------------------------------------------------------ */
/* The plugin interface                                                */
/* ------------------------------------------------------------------ */

typedef struct fw_plugin_desc {
    const char *name; /* "NodeAffinity": static, unique; required */

    /* Decodes, validates and defaults this plugin's args (kube-scheduler's
     * <Plugin>Args defaulting + validation). in is the pluginConfig args as
     * JSON (NULL when the profile has no entry). *out receives a NEW tree
     * the caller owns: the fully defaulted args. Returns KUBE_OK or
     * KUBE_ECONFIG with a message in err naming the field relative to args
     * ("scoringStrategy.type: unsupported value \"X\""). NULL hook: the
     * plugin takes no args (an entry with a non-empty args is an error). */
    int (*default_args)(const cJSON *in, cJSON **out, char *err, size_t errlen);

    /* Required. Constructs an instance. args: the defaulted args from the profile
     * (borrowed for the call; NULL when the plugin takes none). h lives as
     * long as the instance. deps: what the registry's entry for this
     * plugin closes over (kube-scheduler's PluginFactory closures: the
     * dependencies a plugin gets besides the handle), borrowed for the
     * instance's life; NULL when the registry gives none. *self may be NULL
     * for stateless plugins. Returns KUBE_OK or a KUBE_E* code with a
     * message in err. */
    int (*create)(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                  size_t errlen);
    /* Frees self. Called once, after every point has stopped running. */
    void (*destroy)(void *self);

    /* QueueSort: 1 when a goes before b. */
    int (*less)(void *self, const fw_queued_pod_info *a, const fw_queued_pod_info *b);
    /* PreEnqueue: non-success keeps the pod out of activeQ (gated). */
    fw_status *(*pre_enqueue)(void *self, const fw_pod_info *pod);
    /* PreFilter: may set *result (a new fw_pre_filter_result the framework
     * takes; leave NULL for all nodes) and may return FW_SKIP to skip this
     * plugin's Filter for the cycle. */
    fw_status *(*pre_filter)(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                             fw_pre_filter_result **result);
    /* PreFilterExtensions: adjust the cycle state as if pod_to_add were on
     * (removed from) ni; called on a cloned state. Both or neither. */
    fw_status *(*pre_filter_add_pod)(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                                     const fw_pod_info *pod_to_add, const fw_node_info *ni);
    fw_status *(*pre_filter_remove_pod)(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                                        const fw_pod_info *pod_to_remove, const fw_node_info *ni);
    /* Filter: success, FW_UNSCHEDULABLE(_AND_UNRESOLVABLE) or FW_ERROR. */
    fw_status *(*filter)(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *ni);
    /* PostFilter (preemption), after no node fit. d holds each node's
     * failure. Fills *res when it nominates a node. */
    fw_status *(*post_filter)(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                              const fw_diagnosis *d, fw_post_filter_result *res);
    /* PreScore over the feasible nodes; FW_SKIP skips this plugin's Score. */
    fw_status *(*pre_score)(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                            const fw_node_info *const *nodes, size_t n);
    /* Score one node into *score (normally [0, 100] after normalize). */
    fw_status *(*score)(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                        const fw_node_info *ni, int64_t *score);
    /* Score every node of nodes[0..n) at once (optional, beside score):
     * writes scores[i].score, the value score would give nodes[i] (the
     * framework fills the names NormalizeScore reads). Used in cycles that
     * time no plugin (per-node timings need score), so the per-node calls
     * and their set-up are paid once per cycle. Any non-NULL return (a
     * status the caller takes) makes the framework score this plugin node
     * by node with score, which then reports the error as always. */
    fw_status *(*score_nodes)(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                              const fw_node_info *const *nodes, size_t n, fw_node_score *scores);
    /* ScoreExtensions.NormalizeScore: rewrite scores[0..n) in place to
     * [0, FW_MAX_NODE_SCORE]. */
    fw_status *(*normalize_score)(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                                  fw_node_score *scores, size_t n);
    /* Reserve / Unreserve (Unreserve must be idempotent and never fail). */
    fw_status *(*reserve)(void *self, fw_cycle_state *cs, const fw_pod_info *pod, const char *node);
    void (*unreserve)(void *self, fw_cycle_state *cs, const fw_pod_info *pod, const char *node);
    /* Permit: success, FW_UNSCHEDULABLE (deny), or FW_WAIT with *timeout_ms
     * set (capped at FW_PERMIT_MAX_TIMEOUT_MS); the pod is then released by
     * fw_framework_allow_waiting_pod() from this plugin's name. */
    fw_status *(*permit)(void *self, fw_cycle_state *cs, const fw_pod_info *pod, const char *node,
                         int64_t *timeout_ms);
    fw_status *(*pre_bind)(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                           const char *node);
    /* Bind: FW_SKIP when this plugin does not bind this pod; the first
     * non-Skip answer wins. */
    fw_status *(*bind)(void *self, fw_cycle_state *cs, const fw_pod_info *pod, const char *node);
    /* Bind without blocking (optional, beside bind): starts binding pod to
     * node and returns NULL, then done(ud, st) runs exactly once, on the
     * API client's I/O thread, with NULL (bound) or a status it takes. A
     * non-NULL return (a status the caller takes) means nothing started and
     * done never runs. pod, node and cs stay valid until done. */
    fw_status *(*bind_async)(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                             const char *node, void (*done)(void *ud, fw_status *st), void *ud);
    void (*post_bind)(void *self, fw_cycle_state *cs, const fw_pod_info *pod, const char *node);
    /* Whether this plugin's PreBind or PostBind may block for pod on node
     * (an API call, a wait): 0 lets the framework run them on the thread
     * that asks (upstream's PreBindPreFlight answers Skip for the same
     * reason), 1 keeps the binding cycle on a binding thread. Must not
     * block. NULL hook on a plugin with PreBind or PostBind: 1. */
    int (*binding_may_block)(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                             const char *node);

    /* EnqueueExtensions: the events that may make a pod this plugin
     * rejected schedulable. *out points to an array (static, or owned by
     * self) of the returned count. NULL hook on a plugin with PreEnqueue,
     * PreFilter, Filter, Reserve or Permit means "every event" (wildcard). */
    size_t (*events_to_register)(void *self, const fw_cluster_event_with_hint **out);
} fw_plugin_desc;

/* ------------------------------------------------------------------ */
/* Registry                                                            */
/* ------------------------------------------------------------------ */

/* The plugins a framework can be built from, by name (kube-scheduler's
 * runtime.Registry). The in-tree one is scheduler/plugins/registry.h's. */
typedef struct fw_registry {
    const fw_plugin_desc *const *plugins;
    size_t n;
    /* deps[i]: what plugins[i]'s factory closes over, handed to its create
     * (NULL array, or NULL entry: nothing). Borrowed. */
    void *const *deps;
} fw_registry;

/* The descriptor named name, or NULL. */
const fw_plugin_desc *fw_registry_find(const fw_registry *r, const char *name);
/* What r's factory of d closes over (r->deps' entry), or NULL. */
void *fw_registry_deps(const fw_registry *r, const fw_plugin_desc *d);

/* Resolves a loaded configuration against reg, profile by profile: every
 * plugin the file names must be in reg ("unknown plugin", or "not
 * implemented by stickyvm-scheduler" for kube-scheduler's own; disabling
 * one is accepted); default plugins reg lacks leave the profile (one
 * warning); each pluginConfig entry's args are decoded, validated and
 * defaulted by its plugin's default_args hook, and every enabled plugin
 * that takes args and has no entry gets one. Errors name the file and
 * field as config.h shows. Idempotent (resolved profiles are skipped).
 * KUBE_OK, KUBE_ECONFIG (message in err), KUBE_ENOMEM. */
int fw_config_resolve(sched_config *cfg, const fw_registry *reg, char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* Services the scheduler provides, and the handle plugins get         */
/* ------------------------------------------------------------------ */

/* The nominator (kube-scheduler's PodNominator), implemented by the queue. */
typedef struct fw_nominator {
    /* Pods nominated to node: *out is a new array of new references (caller
     * unrefs each and frees the array); *n may be 0 with *out NULL.
     * KUBE_OK or KUBE_ENOMEM. */
    int (*pods_for_node)(void *ud, const char *node, fw_pod_info ***out, size_t *n);
    /* Records pi as nominated to node ("" / NULL: use the pod's
     * status.nominatedNodeName). */
    int (*add)(void *ud, fw_pod_info *pi, const char *node);
    /* Forgets the pod's nomination if any. */
    void (*remove)(void *ud, const fw_pod_info *pi);
    void *ud;
    /* 0 when no pod is nominated to any node, else 1: a cheap check the
     * Filter pass makes once instead of asking pods_for_node per node.
     * NULL: pods_for_node is asked for every node. */
    int (*any)(void *ud);
} fw_nominator;

/* Metrics hooks (may be NULL). Labels are static strings except profile.
 * extension_point: framework_extension_point_duration_seconds
 *   {extension_point, status, profile}; every run of a point.
 * plugin: plugin_execution_duration_seconds{plugin, extension_point,
 *   status}; only in cycles where the cycle state records plugin metrics.
 * plugin_defer / plugin_flush (optional, both or neither): plugin's
 *   observation kept in the calling thread's buffer, and that thread's
 *   buffer merged into the metric; the framework uses them in the per-node
 *   loops of Filter and Score and flushes on every thread that deferred
 *   before the extension point returns (kube-scheduler too records plugin
 *   durations asynchronously).
 * permit_wait: permit_wait_duration_seconds{result}. */
typedef struct fw_metrics_hooks {
    void (*extension_point)(void *ud, const char *point, const char *status, const char *profile,
                            double seconds);
    void (*plugin)(void *ud, const char *plugin, const char *point, const char *status,
                   double seconds);
    void (*permit_wait)(void *ud, const char *result, double seconds);
    void *ud;
    void (*plugin_defer)(void *ud, const char *plugin, const char *point, const char *status,
                         double seconds);
    void (*plugin_flush)(void *ud);
} fw_metrics_hooks;

/* Leadership check (kube_leader_is_leader() behind a pointer, so the
 * framework does not depend on kube/machinery/leader.h). Returns 1 while leading. */
typedef struct fw_leadership {
    int (*is_leader)(void *ud);
    void *ud;
} fw_leadership;

struct kube_metrics;

/* One node where preempting victims lets a pod fit (kube's preemption
 * Candidate / extenderv1.Victims). */
typedef struct fw_preemption_candidate {
    char *node;            /* owned */
    fw_pod_info **victims; /* references, most important first */
    size_t n_victims;
    int64_t num_pdb_violations;
} fw_preemption_candidate;

/* Frees what c holds (zeroing it) / the n candidates and the array.
 * NULL-safe. */
void fw_preemption_candidate_clear(fw_preemption_candidate *c);
void fw_preemption_candidates_free(fw_preemption_candidate *c, size_t n);

/* The scheduler extenders (kube's framework.Extender list, HTTP extenders
 * built from the configuration's `extenders`: scheduler/extender.h). ud
 * NULL: none, and nothing below is called (the cycle costs nothing more).
 * Called on the scheduling thread.
 *   filter: findNodesThatPassExtenders over nodes[0..*n), narrowed in
 *     place (order kept); the nodes extenders reject get their status in
 *     d; an FW_ERROR status (the cycle fails) from a non-ignorable extender
 *     that failed.
 *   prioritize: adds every interested prioritizing extender's score *
 *     weight * (FW_MAX_NODE_SCORE / 10) to the totals of scores (one entry
 *     per node of nodes, in that order); failures give no score.
 *   preempt: callExtenders: the candidates (*c, *n, owned by the caller)
 *     replaced by what the extenders supporting preemption keep; an
 *     FW_ERROR status on a non-ignorable failure (*c unchanged). */
typedef struct fw_extenders {
    fw_status *(*filter)(void *ud, const fw_pod_info *pod, const fw_node_info **nodes, size_t *n,
                         fw_diagnosis *d);
    void (*prioritize)(void *ud, const fw_pod_info *pod, const fw_node_info *const *nodes,
                       fw_score_list *scores);
    fw_status *(*preempt)(void *ud, const fw_pod_info *pod, fw_preemption_candidate **c, size_t *n);
    void *ud;
} fw_extenders;

/* What every framework of a scheduler shares; all borrowed, must outlive
 * the framework. Any may be NULL in tests. */
typedef struct fw_services {
    struct kube_client *client;
    /* The scheduler's shared informer factory (kube/machinery/factory.h,
     * upstream handle.SharedInformerFactory()): a plugin asks it for the
     * listers it reads (kube_factory_lister()), never adds handlers; the
     * events it cares about go through events_to_register. */
    struct kube_factory *informers;
    struct kube_recorder *recorder; /* this profile's recorder */
    fw_snapshot *snapshot;          /* the cycle's snapshot (updated in place
                                       by the scheduler before each cycle) */
    fw_parallelizer *parallelizer;  /* NULL: serial */
    fw_nominator nominator;         /* NULL functions: no nominated pods */
    fw_metrics_hooks metrics;
    /* Whether this replica is the leader. NULL is_leader: always (leader
     * election off, or a single replica). Thread-safe; called from any
     * thread. */
    fw_leadership leadership;
    /* The scheduler's metrics registry (scheduler/metrics.h), where plugins
     * register their own families; NULL: plugins keep no metrics. */
    struct kube_metrics *metrics_registry;
    /* The scheduler extenders; NULL ud: none. */
    fw_extenders extenders;
} fw_services;

/* What a plugin gets at create(): the framework it belongs to (for the
 * fw_framework_* calls below, e.g. waiting pods and running filters during
 * preemption) and the shared services. Plugins never depend on scheduler.c. */
struct fw_handle {
    fw_framework *fw;
    const char *profile_name; /* the profile's schedulerName */
    fw_services svc;          /* copy of what the scheduler passed */
};

/* ------------------------------------------------------------------ */
/* Runtime                                                             */
/* ------------------------------------------------------------------ */

/* Extension points, for metric labels and introspection. */
typedef enum fw_point {
    FW_PT_PRE_ENQUEUE = 0,
    FW_PT_QUEUE_SORT,
    FW_PT_PRE_FILTER,
    FW_PT_FILTER,
    FW_PT_POST_FILTER,
    FW_PT_PRE_SCORE,
    FW_PT_SCORE,
    FW_PT_RESERVE,
    FW_PT_PERMIT,
    FW_PT_PRE_BIND,
    FW_PT_BIND,
    FW_PT_POST_BIND,
    FW_PT_COUNT
} fw_point;

/* Builds the framework of one profile (kube-scheduler's NewFramework):
 * instantiates every plugin enabled at any point (including multiPoint)
 * once, places them per point after multiPoint expansion, checks exactly
 * one QueueSort and at least one Bind plugin, a plugin listed twice at a
 * point, plugins listed at points they do not implement, and score
 * weights (0 -> 1, overflow). prof must be resolved against reg
 * (fw_config_resolve(); else KUBE_EINVAL): each plugin is created with its
 * defaulted args. svc is copied. Returns KUBE_OK, KUBE_ENOMEM,
 * or KUBE_ECONFIG / a plugin's error with the message in err (prefixed
 * with the profile, e.g. "profile \"x\": plugin \"Foo\" does not extend
 * Filter plugin"). *out freed with fw_framework_free(). */
int fw_framework_new(const sched_profile *prof, const fw_registry *reg, const fw_services *svc,
                     fw_framework **out, char *err, size_t errlen);
/* Frees waiting pods nobody waits on, destroys every plugin and frees.
 * No run_* or wait_on_permit call may be in progress. NULL-safe. */
void fw_framework_free(fw_framework *fw);

const char *fw_framework_profile_name(const fw_framework *fw);
/* The profile of pod (kube-scheduler's profile.Map lookup by
 * spec.schedulerName): the framework of fws[0..n) whose profile name is
 * scheduler_name, or NULL when none is (the pod is not ours). */
fw_framework *fw_framework_for(fw_framework *const *fws, size_t n, const char *scheduler_name);

int fw_framework_has_filter_plugins(const fw_framework *fw);
int fw_framework_has_score_plugins(const fw_framework *fw);
int fw_framework_has_post_filter_plugins(const fw_framework *fw);

/* Calls fn once per (plugin, event) a queue must watch: every plugin of the
 * framework, with its events_to_register() list, or with {"*", FW_ACT_ALL}
 * when it has no such hook (kube-scheduler v1.28's fillEnqueueExtensions /
 * defaultEnqueueExtension). self is the plugin instance for calling hints. */
void fw_framework_foreach_event(const fw_framework *fw,
                                void (*fn)(void *ud, const char *plugin, void *self,
                                           const fw_cluster_event_with_hint *ev),
                                void *ud);

/* QueueSort: 1 when a goes before b (the single QueueSort plugin). */
int fw_framework_queue_sort_less(const fw_framework *fw, const fw_queued_pod_info *a,
                                 const fw_queued_pod_info *b);

/* PreEnqueue: every plugin in order; the first non-success stops (with its
 * plugin set; an FW_ERROR is wrapped "running PreEnqueue plugin %q: ..."). */
fw_status *fw_framework_run_pre_enqueue(fw_framework *fw, const fw_pod_info *pod);

/* PreFilter: runs every plugin in order; a Skip adds the plugin to the
 * state's skip-filter set; an unschedulable status stops and is returned
 * (plugin set); an error is wrapped "running PreFilter plugin %q: %s";
 * results are merged by intersection and an empty merge returns
 * FW_UNSCHEDULABLE "node(s) didn't satisfy plugin(s) [A B] simultaneously"
 * (or "node(s) didn't satisfy plugin A" for one). *result receives the
 * merged result (NULL = all nodes), owned by the caller. */
fw_status *fw_framework_run_pre_filter(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                       fw_pre_filter_result **result);
/* PreFilterExtensions AddPod / RemovePod over every PreFilter plugin with
 * extensions (skipped ones excluded). */
fw_status *fw_framework_run_pre_filter_add_pod(fw_framework *fw, fw_cycle_state *cs,
                                               const fw_pod_info *pod,
                                               const fw_pod_info *pod_to_add,
                                               const fw_node_info *ni);
fw_status *fw_framework_run_pre_filter_remove_pod(fw_framework *fw, fw_cycle_state *cs,
                                                  const fw_pod_info *pod,
                                                  const fw_pod_info *pod_to_remove,
                                                  const fw_node_info *ni);

/* RunFilterPluginsWithNominatedPods: when pods of equal or higher priority
 * are nominated to the node, filters once with them added (on clones of
 * the state and node info, via AddPod extensions) and, if that passes,
 * again without them. */
fw_status *fw_framework_run_filter_with_nominated_pods(fw_framework *fw, const fw_cycle_state *cs,
                                                       const fw_pod_info *pod,
                                                       const fw_node_info *ni);

/* PostFilter: kube-scheduler's RunPostFilterPlugins (first success wins;
 * UnschedulableAndUnresolvable stops; otherwise reasons accumulate and the
 * last non-noop result is kept). res is always written. */
fw_status *fw_framework_run_post_filter(fw_framework *fw, fw_cycle_state *cs,
                                        const fw_pod_info *pod, const fw_diagnosis *d,
                                        fw_post_filter_result *res);

/* PreScore over nodes; Skip fills the state's skip-score set; an error is
 * wrapped "running PreScore plugin %q: ...". */
fw_status *fw_framework_run_pre_score(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                      const fw_node_info *const *nodes, size_t n);
/* Score: every non-skipped score plugin on every node (parallel over
 * nodes), NormalizeScore per plugin, range check [0, 100], weights, totals.
 * *out receives one entry per node, in the order of nodes; free with
 * fw_score_list_free(). */
fw_status *fw_framework_run_score(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                  const fw_node_info *const *nodes, size_t n, fw_score_list *out);

/* Reserve: in order; the first failure stops (plugin set; errors wrapped
 * "running Reserve plugin %q: ..."). The caller then runs Unreserve. */
fw_status *fw_framework_run_reserve(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                    const char *node);
/* Unreserve: every Reserve plugin, in REVERSE order. */
void fw_framework_run_unreserve(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                const char *node);

/* Whether a plugin (by name) is in this framework at any point. */
int fw_framework_has_plugin(const fw_framework *fw, const char *plugin);

/* Permit: in order; a rejection stops (plugin set); FW_WAIT answers are
 * collected and the pod becomes a waiting pod (status FW_WAIT "one or more
 * plugins asked to wait and no plugin rejected pod %q"). */
fw_status *fw_framework_run_permit(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                   const char *node);
/* Blocks until the waiting pod of this UID is allowed by every plugin that
 * asked it to wait (NULL), rejected (FW_UNSCHEDULABLE with the rejecting
 * plugin and message), or a plugin's timeout passes (FW_UNSCHEDULABLE
 * "rejected due to timeout after waiting 10s at plugin P"). Returns NULL at
 * once when the pod is not waiting. Removes the waiting pod. */
fw_status *fw_framework_wait_on_permit(fw_framework *fw, const fw_pod_info *pod);
/* Waiting pods (the handle's GetWaitingPod/Allow/Reject). Return 1 when a
 * waiting pod with that UID existed, 0 otherwise. Thread-safe. */
int fw_framework_reject_waiting_pod(fw_framework *fw, const char *uid, const char *plugin,
                                    const char *msg);
/* Iterates waiting pods (under a lock: fn must not call back in). */
void fw_framework_foreach_waiting_pod(fw_framework *fw,
                                      void (*fn)(void *ud, const fw_pod_info *pod,
                                                 const char *const *pending, size_t n_pending),
                                      void *ud);

/* PreBind: in order, the first failure stops ("running PreBind plugin %q"). */
fw_status *fw_framework_run_pre_bind(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                     const char *node);
/* Bind: the first plugin not answering Skip decides; FW_SKIP when there
 * are no bind plugins or all skip. */
fw_status *fw_framework_run_bind(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                 const char *node);
/* PostBind: every plugin, in order. */
void fw_framework_run_post_bind(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                const char *node);

/* Whether pod's binding cycle needs no binding thread: no PreBind or
 * PostBind plugin may block for it (binding_may_block), and the first Bind
 * plugin binds asynchronously. Must not block. */
int fw_framework_binding_is_light(fw_framework *fw, const fw_cycle_state *cs,
                                  const fw_pod_info *pod, const char *node);

/* Called once when an asynchronous Bind ends, on the API client's I/O
 * thread: st is the Bind point's status as fw_framework_run_bind gives it
 * (NULL: bound), and done owns it. Must not block. */
typedef void (*fw_bind_done_fn)(void *ud, fw_status *st);

/* Bind without waiting, for a pod fw_framework_binding_is_light accepts:
 * returns NULL when the first Bind plugin started the binding (done then
 * runs exactly once, with the Bind metrics observed first), otherwise the
 * status of the failure to start it (the caller's; done never runs).
 * pod, node and cs must stay valid until done runs. */
fw_status *fw_framework_run_bind_async(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                       const char *node, fw_bind_done_fn done, void *ud);

/* ------------------------------------------------------------------ */
/* Scheduling a pod (schedule_one.go: schedulePod and its helpers)     */
/* ------------------------------------------------------------------ */

/* numFeasibleNodesToFind: all nodes below 100; otherwise percentage (the
 * profile's when >= 0, else the global one; 0 = adaptive 50 - n/125, at
 * least 5) of n, at least 100. */
int fw_num_feasible_nodes_to_find(int32_t profile_pct, int32_t global_pct, int num_all_nodes);

/* Per-scheduler state that persists across cycles (kube-scheduler's
 * Scheduler fields), shared by all profiles. */
typedef struct fw_sched_state {
    size_t next_start_node_index;         /* nextStartNodeIndex */
    int32_t percentage_of_nodes_to_score; /* the config's global value */
    uint64_t rng;                         /* selectHost tie-break RNG state */
} fw_sched_state;

/* findNodesThatFitPod: PreFilter (an unschedulable PreFilter marks every
 * node with that status in d and sets d->pre_filter_msg), the nominated
 * node first when the pod has status.nominatedNodeName, then the
 * PreFilterResult's nodes or all snapshot nodes filtered (with nominated
 * pods) in parallel from st->next_start_node_index, stopping once
 * numFeasibleNodesToFind nodes fit; st->next_start_node_index advances by
 * the nodes processed. The feasible set equals a serial run's; then the
 * scheduler extenders filter it (svc.extenders, for the nominated node
 * too; an extender error on it is logged and the full pass runs). *feasible
 * (caller frees the array, not the node infos) lists the feasible nodes in
 * evaluation order. Returns NULL, or an FW_ERROR status. Node failures go to
 * d (failing plugins to d's unschedulable/pending sets). */
fw_status *fw_framework_find_nodes_that_fit(fw_framework *fw, fw_cycle_state *cs,
                                            const fw_pod_info *pod, const fw_snapshot *snap,
                                            fw_sched_state *st, fw_diagnosis *d,
                                            const fw_node_info ***feasible, size_t *n_feasible);

/* prioritizeNodes: with no score plugins and no extenders every node
 * scores 1; otherwise PreScore, Score, then the extenders' weighted
 * scores added to the totals. */
fw_status *fw_framework_prioritize_nodes(fw_framework *fw, fw_cycle_state *cs,
                                         const fw_pod_info *pod, const fw_node_info *const *nodes,
                                         size_t n, fw_score_list *out);

/* selectHost: the highest total; ties broken by reservoir sampling with
 * *rng (xorshift), replacing the candidate with probability 1/count.
 * Returns the node name (borrowed from scores) or NULL when n == 0. */
const char *fw_select_host(const fw_node_plugin_scores *scores, size_t n, uint64_t *rng);

typedef struct fw_schedule_result {
    char suggested_host[254];
    int evaluated_nodes;
    int feasible_nodes;
} fw_schedule_result;

/* schedulePod on an up-to-date snapshot: returns NULL with *res filled, or
 * FW_UNSCHEDULABLE_AND_UNRESOLVABLE "no nodes available to schedule pods"
 * when snap is empty, or FW_UNSCHEDULABLE when no node fits (d then holds
 * the FitError diagnosis: fw_fit_error_message(snap->n_list, d)), or
 * FW_ERROR. A single feasible node is chosen without scoring. */
fw_status *fw_framework_schedule_pod(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                     const fw_snapshot *snap, fw_sched_state *st, fw_diagnosis *d,
                                     fw_schedule_result *res);

#endif
