/*
 * kube/types/pod.h - v1 Pod as the scheduler (all its plugins) and the StickyVM
 * plugin need it.
 *
 * Besides the spec fields, decoding computes what kube-scheduler v1.28
 * computes for a pod (framework.calculateResource and
 * noderesources.computePodResourceRequest, both resourcehelper.PodRequests):
 *
 *   requests = max( sum(containers) + sum(sidecars),
 *                   max over init containers i of InitUse(i) ) + overhead
 *
 * where sidecars are init containers with restartPolicy "Always" and
 * InitUse(i) is init container i plus every sidecar declared before it (a
 * sidecar's own InitUse is itself plus the sidecars before it). Sums are
 * exact Quantity sums, rounded once (MilliValue for cpu, Value otherwise).
 * Two "non-zero" variants exist in v1.28 and both are kept:
 * - nonzero_* (calculateResource, what NodeInfo.NonZeroRequested adds up):
 *   sum over app containers of 100m / 200Mi when cpu / memory is missing,
 *   max'ed with the same computed on each init container's cumulative
 *   InitUse, plus the overhead's cpu/memory when present;
 * - score_* (the incoming pod's request in NodeResourcesFit scoring):
 *   PodRequests after giving every container and init container lacking
 *   cpu / memory 100m / 200Mi (applyNonMissing).
 *
 * Memory: a kube_pod is one allocation owned through its reference count
 * (kube/codec/object.h); every pointer inside lives at least as long as the
 * object: what pods repeat (node and scheduler names, images, tolerations,
 * node selectors, conditions, label sets ...) is shared with other objects
 * through the permanent pool of kube/codec/intern.h rather than copied. Strings
 * are never NULL unless the field says so.
 */
#ifndef KUBE_POD_H
#define KUBE_POD_H

#include <stddef.h>
#include <stdint.h>

#include "kube/types/node.h"
#include "kube/codec/object.h"
#include "kube/codec/selector.h"

#define KUBE_DEFAULT_SCHEDULER_NAME "default-scheduler"
#define KUBE_DEFAULT_MILLI_CPU_REQUEST 100                /* 100m */
#define KUBE_DEFAULT_MEMORY_REQUEST (200LL * 1024 * 1024) /* 200Mi */
/* Label KubeVirt sets on the target pod of a live migration. */
#define KUBE_LABEL_MIGRATION_JOB_UID "kubevirt.io/migrationJobUID"

typedef enum kube_toleration_op {
    KUBE_TOL_EQUAL = 0, /* "Equal" or "" */
    KUBE_TOL_EXISTS,    /* "Exists" */
    KUBE_TOL_INVALID    /* anything else: tolerates nothing */
} kube_toleration_op;

typedef struct kube_toleration {
    const char *key;          /* "" matches every key */
    const char *value;        /* "" when unset */
    kube_toleration_op op;    /* KUBE_TOL_INVALID also for an unknown effect */
    kube_taint_effect effect; /* KUBE_EFFECT_ALL when empty */
    int has_seconds;          /* tolerationSeconds is set */
    int64_t seconds;
} kube_toleration;

typedef struct kube_pod_affinity_term {
    const kube_label_selector *label_selector; /* NULL: nil, selects no pods */
    const char *const *namespaces;
    size_t n_namespaces;
    const kube_label_selector *namespace_selector; /* NULL: nil */
    const char *topology_key;                      /* "" when unset */
    const char *const *match_label_keys;
    size_t n_match_label_keys;
    const char *const *mismatch_label_keys;
    size_t n_mismatch_label_keys;
} kube_pod_affinity_term;

typedef struct kube_weighted_pod_affinity_term {
    int32_t weight;
    kube_pod_affinity_term term;
} kube_weighted_pod_affinity_term;

/* podAffinity or podAntiAffinity */
typedef struct kube_pod_affinity {
    const kube_pod_affinity_term *required;
    size_t n_required;
    const kube_weighted_pod_affinity_term *preferred;
    size_t n_preferred;
} kube_pod_affinity;

typedef struct kube_affinity {
    /* nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution; NULL
     * when absent (every node passes). Non-NULL with 0 terms matches no
     * node. */
    const kube_node_selector *node_required;
    const kube_preferred_term *node_preferred;
    size_t n_node_preferred;
    kube_pod_affinity pod_affinity;
    kube_pod_affinity pod_anti_affinity;
} kube_affinity;

typedef enum kube_unsatisfiable {
    KUBE_DO_NOT_SCHEDULE = 0,
    KUBE_SCHEDULE_ANYWAY
} kube_unsatisfiable;

typedef enum kube_inclusion_policy {
    KUBE_POLICY_HONOR = 0,
    KUBE_POLICY_IGNORE
} kube_inclusion_policy;

typedef struct kube_spread_constraint {
    const char *topology_key;
    const kube_label_selector *label_selector; /* NULL: nil */
    const char *const *match_label_keys;
    size_t n_match_label_keys;
    int32_t max_skew;
    int32_t min_domains; /* 0 when unset (means 1) */
    kube_unsatisfiable when_unsatisfiable;
    kube_inclusion_policy node_affinity_policy; /* HONOR when unset */
    kube_inclusion_policy node_taints_policy;   /* IGNORE when unset */
} kube_spread_constraint;

typedef enum kube_volume_type {
    KUBE_VOL_OTHER = 0, /* every other source (configMap, projected, emptyDir, ...) */
    KUBE_VOL_PVC,       /* persistentVolumeClaim */
    KUBE_VOL_EPHEMERAL, /* ephemeral: the generated claim "<pod>-<volume>" */
    KUBE_VOL_GCE_PD,    /* gcePersistentDisk */
    KUBE_VOL_AWS_EBS,   /* awsElasticBlockStore */
    KUBE_VOL_RBD,       /* rbd */
    KUBE_VOL_ISCSI,     /* iscsi */
    KUBE_VOL_AZURE_DISK /* azureDisk */
} kube_volume_type;

/* Extra identity of RBD and iSCSI volumes (VolumeRestrictions). */
typedef struct kube_volume_disk {
    const char *const *monitors; /* RBD */
    size_t n_monitors;
    const char *pool;          /* RBD, "" when unset */
    const char *target_portal; /* iSCSI */
    int32_t lun;               /* iSCSI */
} kube_volume_disk;

typedef struct kube_volume {
    const char *name;
    /* PVC/EPHEMERAL: claim name; GCE_PD: pdName; AWS_EBS: volumeID;
     * RBD: image; ISCSI: iqn; AZURE_DISK: diskName; OTHER: NULL. */
    const char *id;
    const kube_volume_disk *disk; /* RBD and ISCSI only, else NULL */
    kube_volume_type type;
    int read_only; /* the source's readOnly */
} kube_volume;

/* containers[].ports[] entries with hostPort > 0, sanitised as
 * framework.HostPortInfo does: host_ip "" -> "0.0.0.0", protocol "" ->
 * "TCP". */
typedef struct kube_host_port {
    const char *host_ip;
    const char *protocol;
    int32_t port;
} kube_host_port;

typedef struct kube_pod_condition {
    const char *type;
    const char *status;  /* "True", "False", "Unknown" */
    const char *reason;  /* "" when unset */
    const char *message; /* "" when unset (the scheduler's FitError for
                            PodScheduled=False) */
    /* lastTransitionTime in unix microseconds, 0 when unset (the binding
     * sets PodScheduled's: kube-apiserver's podutil.UpdatePodCondition) */
    int64_t last_transition_us;
} kube_pod_condition;

typedef enum kube_preemption_policy {
    KUBE_PREEMPT_LOWER_PRIORITY = 0, /* "PreemptLowerPriority" or unset */
    KUBE_PREEMPT_NEVER               /* "Never" */
} kube_preemption_policy;

/* Array counts are 32-bit and paired so that the struct has no padding
 * (see kube_meta). */
typedef struct kube_pod {
    kube_object base;
    /* spec */
    const char *node_name;      /* "" when not bound */
    const char *scheduler_name; /* KUBE_DEFAULT_SCHEDULER_NAME when unset */
    int32_t priority;           /* 0 when unset */
    kube_preemption_policy preemption_policy;
    const kube_affinity *affinity; /* NULL when spec.affinity is absent */
    const kube_kv *node_selector;
    const kube_toleration *tolerations;
    uint32_t n_node_selector;
    uint32_t n_tolerations;
    const kube_spread_constraint *spread; /* topologySpreadConstraints */
    const char *const *scheduling_gates;  /* schedulingGates[].name */
    uint32_t n_spread;
    uint32_t n_scheduling_gates;
    const kube_volume *volumes;
    const kube_host_port *host_ports;
    uint32_t n_volumes;
    uint32_t n_host_ports;
    const char *const *images;      /* containers[].image ("" when unset) */
    const char *const *init_images; /* initContainers[].image */
    uint32_t n_images;
    uint32_t n_init_images;
    /* status */
    const char *phase;               /* "" when unset */
    const char *nominated_node_name; /* "" when unset */
    const kube_pod_condition *conditions;
    uint32_t n_conditions;
    /* computed (see the top of this file) */
    /* an init container has restartPolicy Always (a sidecar) */
    int has_restartable_init_container;
    kube_resources requests;   /* PodRequests (NodeResourcesFit, NodeInfo.Requested) */
    int64_t nonzero_milli_cpu; /* calculateResource: NodeInfo.NonZeroRequested */
    int64_t nonzero_memory;
    /* resourceAllocationScorer.calculatePodResourceRequest with
     * useRequested=false (NodeResourcesFit scoring strategies): PodRequests
     * where every container and init container lacking a cpu / memory
     * request counts 100m / 200Mi. */
    int64_t score_milli_cpu;
    int64_t score_memory;
    /* resourcehelper.PodLimits (/metrics/resources); NULL when no
     * container sets a limit */
    const kube_resources *limits;
} kube_pod;

extern const kube_codec kube_pod_codec;

/* The kube_pod behind obj, or NULL when obj is NULL or another kind.
 * Borrowed. */
const kube_pod *kube_pod_from(const kube_object *obj);

/* v1.Toleration.ToleratesTaint. Returns 1 or 0. */
int kube_toleration_tolerates(const kube_toleration *t, const kube_taint *taint);

/* 1 when the pod is the target pod of a KubeVirt live migration (it has
 * the label kubevirt.io/migrationJobUID), else 0. */
int kube_pod_is_migration_target(const kube_pod *p);

/* 1 when status.phase is Succeeded or Failed. */
int kube_pod_is_terminal(const kube_pod *p);

/* The condition of this type, or NULL. */
const kube_pod_condition *kube_pod_condition_get(const kube_pod *p, const char *type);

#endif
