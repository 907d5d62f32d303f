/*
 * kube/types/storage.h - v1 PersistentVolume and PersistentVolumeClaim, and
 * storage.k8s.io/v1 StorageClass and CSINode, as the scheduler's volume
 * plugins (VolumeBinding, VolumeRestrictions, VolumeZone, NodeVolumeLimits)
 * need them, with the helpers of k8s.io/component-helpers/storage/volume
 * they rely on (v1.28).
 *
 * Only the fields the plugins read are kept. Absent fields read as Go's
 * zero value (an unset volumeMode is reported as Filesystem, the API
 * server's default). Strings are never NULL unless the field says so.
 *
 * Memory: every object here is one allocation owned through its reference
 * count (kube/codec/object.h); every pointer inside lives as long as the object.
 * The helpers allocate nothing.
 */
#ifndef KUBE_STORAGE_H
#define KUBE_STORAGE_H

#include <stddef.h>
#include <stdint.h>

#include "kube/transport/api.h"
#include "kube/codec/object.h"
#include "kube/codec/quantity.h"
#include "kube/codec/selector.h"

extern const kube_resource KUBE_RES_PVS;            /* v1 persistentvolumes */
extern const kube_resource KUBE_RES_PVCS;           /* v1 persistentvolumeclaims */
extern const kube_resource KUBE_RES_STORAGECLASSES; /* storage.k8s.io/v1 storageclasses */
extern const kube_resource KUBE_RES_CSINODES;       /* storage.k8s.io/v1 csinodes */

/* Well-known annotations (k8s.io/component-helpers/storage/volume). */
#define KUBE_ANN_SELECTED_NODE "volume.kubernetes.io/selected-node"
#define KUBE_ANN_BIND_COMPLETED "pv.kubernetes.io/bind-completed"
#define KUBE_ANN_BOUND_BY_CONTROLLER "pv.kubernetes.io/bound-by-controller"
#define KUBE_ANN_STORAGE_CLASS_BETA "volume.beta.kubernetes.io/storage-class"
/* CSINode annotation listing in-tree plugins migrated to CSI. */
#define KUBE_ANN_MIGRATED_PLUGINS "storage.alpha.kubernetes.io/migrated-plugins"
/* StorageClass provisioner of statically provisioned classes. */
#define KUBE_NO_PROVISIONER "kubernetes.io/no-provisioner"

/* accessModes as a bit set. */
enum {
    KUBE_ACCESS_RWO = 1 << 0,  /* ReadWriteOnce */
    KUBE_ACCESS_ROX = 1 << 1,  /* ReadOnlyMany */
    KUBE_ACCESS_RWX = 1 << 2,  /* ReadWriteMany */
    KUBE_ACCESS_RWOP = 1 << 3, /* ReadWriteOncePod */
};

typedef enum kube_volume_mode {
    KUBE_VOLUME_FILESYSTEM = 0, /* "Filesystem" or unset */
    KUBE_VOLUME_BLOCK           /* "Block" */
} kube_volume_mode;

/* spec.claimRef of a PersistentVolume. */
typedef struct kube_claim_ref {
    const char *namespace_;
    const char *name;
    const char *uid; /* "" when unset */
} kube_claim_ref;

/* The in-tree source of a PersistentVolume, when it has one we know. */
typedef enum kube_pv_source {
    KUBE_PV_OTHER = 0, /* local, hostPath, nfs, ... */
    KUBE_PV_CSI,       /* csi: driver + volumeHandle */
    KUBE_PV_GCE_PD,    /* gcePersistentDisk: pdName */
    KUBE_PV_AWS_EBS,   /* awsElasticBlockStore: volumeID */
    KUBE_PV_AZURE_DISK /* azureDisk: diskName */
} kube_pv_source;

typedef struct kube_pv {
    kube_object base;
    const char *storage_class; /* spec.storageClassName, "" when unset */
    kube_quantity capacity;    /* spec.capacity.storage (0 when absent) */
    unsigned access_modes;     /* KUBE_ACCESS_* */
    kube_volume_mode volume_mode;
    /* spec.nodeAffinity.required; NULL when absent (every node matches). */
    const kube_node_selector *node_affinity;
    const kube_claim_ref *claim_ref; /* NULL when unset */
    const char *phase;               /* status.phase, "" when unset */
    kube_pv_source source;
    const char *driver;        /* CSI driver, "" unless KUBE_PV_CSI */
    const char *volume_handle; /* CSI volumeHandle / pdName / volumeID / diskName */
} kube_pv;

typedef struct kube_pvc {
    kube_object base;
    const char *storage_class; /* spec.storageClassName, "" when unset */
    const char *volume_name;   /* spec.volumeName, "" when unset */
    unsigned access_modes;     /* KUBE_ACCESS_* */
    kube_volume_mode volume_mode;
    kube_quantity request;               /* spec.resources.requests.storage */
    int has_request;                     /* the request is present */
    const kube_label_selector *selector; /* spec.selector; NULL when nil */
    const char *phase;                   /* status.phase, "" when unset */
} kube_pvc;

typedef enum kube_binding_mode {
    KUBE_BINDING_UNSET = 0, /* volumeBindingMode absent */
    KUBE_BINDING_IMMEDIATE,
    KUBE_BINDING_WAIT_FOR_FIRST_CONSUMER,
    KUBE_BINDING_UNKNOWN /* any other value */
} kube_binding_mode;

/* allowedTopologies[i]: matchLabelExpressions ANDed (In requirements). */
typedef struct kube_topology_term {
    const kube_requirement *reqs;
    size_t n_reqs;
} kube_topology_term;

typedef struct kube_storage_class {
    kube_object base;
    const char *provisioner;
    kube_binding_mode binding_mode;
    const kube_topology_term *allowed_topologies;
    size_t n_allowed_topologies;
} kube_storage_class;

typedef struct kube_csi_driver_info {
    const char *name;
    const char *node_id;
    const char *const *topology_keys;
    size_t n_topology_keys;
    int has_count; /* allocatable.count is set */
    int32_t count;
} kube_csi_driver_info;

typedef struct kube_csi_node {
    kube_object base; /* base.meta.name is the node name */
    const kube_csi_driver_info *drivers;
    size_t n_drivers;
} kube_csi_node;

extern const kube_codec kube_pv_codec;
extern const kube_codec kube_pvc_codec;
extern const kube_codec kube_storage_class_codec;
extern const kube_codec kube_csi_node_codec;

/* The typed object behind obj, or NULL when obj is NULL or another kind.
 * Borrowed. */
const kube_pv *kube_pv_from(const kube_object *obj);
const kube_pvc *kube_pvc_from(const kube_object *obj);
const kube_storage_class *kube_storage_class_from(const kube_object *obj);
const kube_csi_node *kube_csi_node_from(const kube_object *obj);

/* GetPersistentVolumeClass / GetPersistentVolumeClaimClass: the beta
 * annotation when present, else spec.storageClassName. Borrowed. */
const char *kube_pv_class(const kube_pv *pv);
const char *kube_pvc_class(const kube_pvc *pvc);

/* IsVolumeBoundToClaim for a claimRef: same namespace and name, and the
 * ref's uid empty or equal to the claim's. ref NULL: 0. */
int kube_claim_ref_matches(const kube_claim_ref *ref, const kube_pvc *pvc);

/* CheckNodeAffinity: 1 when the PV's required node affinity matches a node
 * with these labels (the node's name is not considered, as upstream builds
 * a node with labels only), or the PV has none. */
int kube_pv_node_affinity_matches(const kube_pv *pv, const kube_kv *labels, size_t n);

/* v1helper.MatchTopologySelectorTerms: 1 when the class has no allowed
 * topologies or a non-empty term all of whose requirements the labels
 * satisfy. */
int kube_storage_class_allows(const kube_storage_class *sc, const kube_kv *labels, size_t n);

/* The access mode bit of an accessModes string, 0 when unknown. */
unsigned kube_access_mode_parse(const char *s);

#endif
