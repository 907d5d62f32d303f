/*
 * scheduler/framework/types.h - the data plugins read: Resource, PodInfo,
 * QueuedPodInfo, NodeInfo and the Snapshot, as kube-scheduler's
 * framework/types.go and internal/cache/snapshot.go.
 *
 * Who fills what: the cache (scheduler/cache/) owns one fw_node_info per
 * node and keeps the snapshot up to date INCREMENTALLY at the start of each
 * cycle: every mutation of a node info bumps its generation (from one global
 * counter), and the cache copies into the snapshot only the node infos whose
 * generation is newer than the snapshot's (fw_snapshot_upsert()), rebuilding
 * the ordered lists only when nodes come or go or a node's affinity state
 * flips - exactly kube-scheduler's Cache.UpdateSnapshot. Plugins only READ
 * node infos from the snapshot (the framework hands them out as const).
 *
 * Sharing: fw_pod_info is immutable after fw_pod_info_new() and
 * reference-counted, so the cache, the snapshot, the queue and the nominator
 * share one copy; cloning a node info copies pointer arrays and takes
 * references, it never copies pods. Image states are shared the same way.
 *
 * Memory (per function below): *_new allocates, *_free / *_unref releases;
 * every pointer a struct holds is owned by it unless marked "borrowed".
 * kube objects (struct kube_pod, struct kube_node, from kube/types/pod.h and
 * kube/types/node.h) are held by one reference (kube_object_ref/unref).
 *
 * Threads: node infos in the snapshot are read concurrently by Filter/Score
 * threads and mutated only by the cache between cycles. fw_pod_info refcounts
 * are atomic.
 */
#ifndef FW_TYPES_H
#define FW_TYPES_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/util/strmap.h"
#include "kube/codec/object.h"

struct kube_pod;            /* kube/types/pod.h */
struct kube_node;           /* kube/types/node.h */
struct kube_label_selector; /* kube/codec/selector.h */

/* ------------------------------------------------------------------ */
/* Resource                                                            */
/* ------------------------------------------------------------------ */

/* Default requests counted for containers that request no cpu/memory, in the
 * non-zero requested totals (kube-scheduler's schedutil defaults). */
#define FW_DEFAULT_MILLI_CPU_REQUEST 100LL              /* 0.1 core */
#define FW_DEFAULT_MEMORY_REQUEST (200LL * 1024 * 1024) /* 200 MB */

/* One scalar (extended, hugepages-*, attachable-volumes-*, kubernetes.io/
 * prefixed) resource. name is INTERNED (kube_intern_name(), kube/codec/
 * intern.h): compare by pointer, never free. */
typedef struct fw_scalar {
    const char *name;
    int64_t value;
} fw_scalar;

typedef struct fw_resource {
    int64_t milli_cpu;
    int64_t memory;             /* bytes */
    int64_t ephemeral_storage;  /* bytes */
    int64_t allowed_pod_number; /* "pods" */
    fw_scalar *scalars;         /* owned array, unsorted, no duplicates */
    uint32_t n_scalars, cap_scalars;
} fw_resource;

#define FW_RESOURCE_INIT       \
    {                          \
        0, 0, 0, 0, NULL, 0, 0 \
    }

/* r = a decoded kube_resources (struct kube_resources, kube/types/node.h), scalars
 * interned. KUBE_OK or KUBE_ENOMEM. */
struct kube_resources;
int fw_resource_from_kube(fw_resource *r, const struct kube_resources *kr);
/* The scalar value (0 when absent). name need not be interned. */
int64_t fw_resource_scalar(const fw_resource *r, const char *name);
/* Sets / adds to a scalar (name interned here). KUBE_OK or KUBE_ENOMEM. */
int fw_resource_set_scalar(fw_resource *r, const char *name, int64_t value);
int fw_resource_add_scalar(fw_resource *r, const char *name, int64_t delta);
/* dst = src, reusing dst's memory. KUBE_OK or KUBE_ENOMEM. */
int fw_resource_copy(fw_resource *dst, const fw_resource *src);
/* Zeroes every value, keeping memory. */
void fw_resource_reset(fw_resource *r);
/* Frees the scalars array and zeroes r. */
void fw_resource_free(fw_resource *r);

/* ------------------------------------------------------------------ */
/* Host ports                                                          */
/* ------------------------------------------------------------------ */

/* One used host port. ip "0.0.0.0" means every address; protocol "TCP",
 * "UDP" or "SCTP". Strings are borrowed from the pod that declared the port
 * (the pod info holding it is referenced by the node info) or static. */
typedef struct fw_host_port {
    const char *ip;
    const char *protocol;
    int32_t port;
} fw_host_port;

/* kube-scheduler's HostPortInfo: a SET of (ip, protocol, port). */
typedef struct fw_host_ports {
    fw_host_port *items;
    size_t n, cap;
} fw_host_ports;

/* Inserts (ip "" -> "0.0.0.0", protocol "" -> "TCP"); a duplicate is a
 * no-op. port <= 0 is ignored. KUBE_OK or KUBE_ENOMEM. */
int fw_host_ports_add(fw_host_ports *hp, const char *ip, const char *protocol, int32_t port);
/* Removes (same sanitising); no-op when absent. */
void fw_host_ports_remove(fw_host_ports *hp, const char *ip, const char *protocol, int32_t port);
/* 1 when (ip, protocol, port) conflicts: 0.0.0.0 conflicts with any ip on
 * the same protocol/port, and vice versa. */
int fw_host_ports_conflict(const fw_host_ports *hp, const char *ip, const char *protocol,
                           int32_t port);
int fw_host_ports_copy(fw_host_ports *dst, const fw_host_ports *src);
void fw_host_ports_free(fw_host_ports *hp);

/* ------------------------------------------------------------------ */
/* PodInfo                                                             */
/* ------------------------------------------------------------------ */

/* A pod (anti-)affinity term, pre-parsed: kube-scheduler's AffinityTerm.
 * Everything is borrowed from the pod the pod info holds. */
typedef struct fw_affinity_term {
    const char *const *namespaces; /* the term's namespaces, or the pod's own
                                      namespace when the term lists none and
                                      has no namespaceSelector */
    size_t n_namespaces;
    const struct kube_label_selector *selector;           /* NULL: matches nothing */
    const struct kube_label_selector *namespace_selector; /* NULL: matches nothing */
    const char *topology_key;
} fw_affinity_term;

/* AffinityTerm.Matches: the pod's namespace is in the term's namespaces or
 * the namespace selector matches the namespace's labels (ns_labels, may be
 * NULL with n 0), and the selector matches the pod's labels. 1 or 0. */
int fw_affinity_term_matches(const fw_affinity_term *t, const struct kube_pod *pod,
                             const kube_kv *ns_labels, size_t n_ns_labels);

typedef struct fw_weighted_affinity_term {
    fw_affinity_term term;
    int32_t weight;
} fw_weighted_affinity_term;

/* One pod plus what the scheduler derives from it once. Immutable after
 * fw_pod_info_new(), refcounted. */
typedef struct fw_pod_info {
    atomic_int refs;
    struct kube_pod *pod; /* one reference held */
    /* Convenience pointers into the pod's metadata (borrowed). */
    const char *name, *namespace_, *uid;

    fw_affinity_term *required_affinity_terms;
    size_t n_required_affinity_terms;
    fw_affinity_term *required_anti_affinity_terms;
    size_t n_required_anti_affinity_terms;
    fw_weighted_affinity_term *preferred_affinity_terms;
    size_t n_preferred_affinity_terms;
    fw_weighted_affinity_term *preferred_anti_affinity_terms;
    size_t n_preferred_anti_affinity_terms;
    /* KUBE_OK, or KUBE_EINVAL when a term's selector is invalid (kube's
     * PodInfo.ParseError): plugins that need the terms fail the pod. */
    int parse_error;

    /* The pod's requests (kube_pod.requests: computePodResourceRequest,
     * overhead included) with interned scalar names. */
    fw_resource request;
    /* kube_pod.nonzero_*: GetNonzeroRequests-style totals for scoring. */
    int64_t non0_milli_cpu, non0_memory;
    int32_t priority; /* spec.priority, 0 when unset */
    /* Host ports: pod->host_ports (already sanitised by the decoder). */
} fw_pod_info;

/* Builds the pod info of pod (a new reference is taken; the caller keeps
 * its own). *out holds one reference. Returns KUBE_OK or KUBE_ENOMEM; an
 * invalid term is NOT an error here: it is recorded in parse_error. */
int fw_pod_info_new(struct kube_pod *pod, fw_pod_info **out);
/* Takes a reference; returns pi. NULL-safe. */
fw_pod_info *fw_pod_info_ref(fw_pod_info *pi);
/* Drops a reference; frees on the last. NULL-safe. */
void fw_pod_info_unref(fw_pod_info *pi);
/* 1 when the pod has any pod affinity or anti-affinity term (required or
 * preferred): such pods go in NodeInfo.pods_with_affinity. */
int fw_pod_info_has_affinity(const fw_pod_info *pi);

/* A pod in the scheduling queue: kube-scheduler's QueuedPodInfo. The queue
 * owns it (and the pod info reference inside). */
typedef struct fw_queued_pod_info {
    fw_pod_info *pi;            /* one reference held */
    int64_t timestamp_ns;       /* when added to the queue (monotonic);
                                   PrioritySort breaks ties on it */
    int attempts;               /* scheduling attempts so far */
    int64_t initial_attempt_ns; /* first attempt, 0 before */
    /* Plugins that rejected it last time (static names): the queue requeues
     * it only on events those plugins registered. */
    const char **unschedulable_plugins;
    size_t n_unschedulable_plugins, cap_unschedulable_plugins;
    const char **pending_plugins;
    size_t n_pending_plugins;
    int gated; /* rejected by a PreEnqueue plugin */
} fw_queued_pod_info;

/* ------------------------------------------------------------------ */
/* NodeInfo                                                            */
/* ------------------------------------------------------------------ */

/* One image on a node: its size and on how many nodes it is present
 * (ImageStateSummary). */
typedef struct fw_image_state {
    const char *name; /* owned by the fw_image_states block */
    int64_t size;
    int num_nodes;
} fw_image_state;

/* An immutable, refcounted, name-sorted array of image states, shared
 * between a node info and its clones. */
typedef struct fw_image_states {
    atomic_int refs;
    size_t n;
    fw_image_state items[]; /* sorted by strcmp(name) */
} fw_image_states;

/* Builds a block from n states (names copied, sorted here; duplicate names
 * keep the first). *out holds one reference. KUBE_OK or KUBE_ENOMEM. */
int fw_image_states_new(const fw_image_state *states, size_t n, fw_image_states **out);
fw_image_states *fw_image_states_ref(fw_image_states *s);
void fw_image_states_unref(fw_image_states *s);

/* Next value of the global generation counter (atomic, starts at 1). */
int64_t fw_next_generation(void);

/* NodeInfo.NonZeroRequested: kube-scheduler fills only cpu and memory. */
typedef struct fw_nonzero {
    int64_t milli_cpu;
    int64_t memory; /* bytes */
} fw_nonzero;

typedef struct fw_node_info {
    struct kube_node *node; /* one reference, NULL once the node is
                               deleted while pods remain */
    char *name;             /* owned copy of the node name */
    /* Counts are 32-bit (a node holds at most its pod capacity): two
     * copies of this struct per node, the cache's and the snapshot's. */
    fw_pod_info **pods; /* references, in add order */
    uint32_t n_pods, cap_pods;
    fw_pod_info **pods_with_affinity; /* subset of pods (refs) */
    uint32_t n_pods_with_affinity, cap_pods_with_affinity;
    fw_pod_info **pods_with_required_anti_affinity; /* subset (refs) */
    uint32_t n_pods_with_required_anti_affinity, cap_pods_with_required_anti_affinity;
    fw_host_ports used_ports;
    fw_resource requested;         /* sum of pods' request */
    fw_nonzero non_zero_requested; /* sum of non0 cpu/memory */
    fw_resource allocatable;       /* node.status.allocatable */
    fw_image_states *image_states; /* reference or NULL */
    int64_t generation;            /* bumped by every mutation */
} fw_node_info;

/* Allocates an empty node info (generation fresh). NULL on OOM. */
fw_node_info *fw_node_info_new(void);
/* Frees it and drops every reference it holds. NULL-safe. */
void fw_node_info_free(fw_node_info *ni);

/* Sets the node (a new reference is taken, the old one dropped), name and
 * allocatable from node.status.allocatable; bumps generation. Image states
 * are the cache's business (fw_node_info_set_image_states). */
int fw_node_info_set_node(fw_node_info *ni, struct kube_node *node);
/* Drops the node (RemoveNode): node = NULL, generation bumped; pods stay. */
void fw_node_info_remove_node(fw_node_info *ni);
/* Replaces the image states (a new reference is taken; NULL clears). */
void fw_node_info_set_image_states(fw_node_info *ni, fw_image_states *s);

/* AddPodInfo: appends pi (a new reference is taken), adds its request and
 * non-zero request, its host ports, and puts it in the affinity lists as
 * needed; bumps generation. KUBE_OK or KUBE_ENOMEM (node info unchanged). */
int fw_node_info_add_pod(fw_node_info *ni, fw_pod_info *pi);
/* RemovePod by pod UID: undoes add_pod (order of the remaining pods is
 * kube's: the last pod moves into the hole). KUBE_ENOTFOUND if absent. */
int fw_node_info_remove_pod(fw_node_info *ni, const char *uid);

/* A new node info equal to src (pointer arrays copied, references taken).
 * Same generation. NULL on OOM. */
fw_node_info *fw_node_info_clone(const fw_node_info *src);
/* dst = src, reusing dst's arrays (for incremental snapshots). On error
 * dst is left valid but unspecified. KUBE_OK or KUBE_ENOMEM. */
int fw_node_info_copy(fw_node_info *dst, const fw_node_info *src);

/* ------------------------------------------------------------------ */
/* Snapshot                                                            */
/* ------------------------------------------------------------------ */

/* The node infos a scheduling cycle sees: kube-scheduler's Snapshot. Lists
 * are arrays of pointers into the snapshot's own node infos (borrowed). */
typedef struct fw_snapshot {
    fw_node_info **list; /* all nodes, the cache's order */
    size_t n_list;
    fw_node_info **have_pods_with_affinity; /* nodes with >= 1 such pod */
    size_t n_have_pods_with_affinity;
    fw_node_info **have_pods_with_required_anti_affinity;
    size_t n_have_pods_with_required_anti_affinity;
    int64_t generation;  /* newest generation copied in */
    kube_strmap by_name; /* name -> fw_node_info * (owned) */
    size_t cap_list, cap_aff, cap_anti;
} fw_snapshot;

/* Allocates an empty snapshot. NULL on OOM. */
fw_snapshot *fw_snapshot_new(void);
/* Frees the snapshot and all its node infos. NULL-safe. */
void fw_snapshot_free(fw_snapshot *s);

/* The node info of a node, or NULL (borrowed, valid until the cache next
 * updates the snapshot). */
const fw_node_info *fw_snapshot_get(const fw_snapshot *s, const char *name);
static inline size_t fw_snapshot_num_nodes(const fw_snapshot *s)
{
    return s->n_list;
}

/* Incremental update, for the cache. Copies src into the snapshot's node
 * info of the same name (created when new; *added = 1 then). *aff_changed /
 * *anti_changed are set to 1 when the node moved in or out of the
 * have-pods-with-affinity / required-anti-affinity state (each pointer may
 * be NULL). Raises s->generation to src's. Lists are NOT touched: call
 * fw_snapshot_rebuild_lists() or fw_snapshot_rebuild_affinity_lists()
 * afterwards when needed. KUBE_OK or KUBE_ENOMEM. */
int fw_snapshot_upsert(fw_snapshot *s, const fw_node_info *src, int *added, int *aff_changed,
                       int *anti_changed);
/* Removes and frees the node info of name (no-op when absent). Lists must
 * be rebuilt afterwards. */
void fw_snapshot_remove(fw_snapshot *s, const char *name);
/* Rebuilds s->list in the order of names (the cache's node tree order);
 * names unknown to the snapshot are skipped and logged. Also rebuilds the
 * affinity lists. KUBE_OK or KUBE_ENOMEM. */
int fw_snapshot_rebuild_lists(fw_snapshot *s, const char *const *names, size_t n);
/* Rebuilds only the two affinity lists from s->list. */
int fw_snapshot_rebuild_affinity_lists(fw_snapshot *s);

#endif
