/*
 * kube/types/kubevirt.h - KubeVirt VirtualMachine and VirtualMachineInstance
 * (kubevirt.io/v1), the fields StickyVM needs. Metadata (annotations such
 * as stickyvm.io/node, ownerReferences) is in base.meta.
 *
 * Memory: each object is one allocation owned through its reference count
 * (kube/codec/object.h); every pointer inside lives as long as the object.
 */
#ifndef KUBE_KUBEVIRT_H
#define KUBE_KUBEVIRT_H

#include <stdint.h>

#include "kube/codec/object.h"

/* A PersistentVolumeClaim a volume names (kube/types/localvolumes.h). */
typedef struct kube_vm_claim {
    const char *volume; /* the volume's name in the VM or VMI */
    const char *claim;  /* the PVC's name */
} kube_vm_claim;

typedef struct kube_vm {
    kube_object base;
    /* spec.template.spec.schedulerName; NULL when absent */
    const char *template_scheduler_name;
    int running;              /* spec.running: 1, 0, or -1 when absent */
    const char *run_strategy; /* spec.runStrategy; NULL when absent */
    /* the claims of spec.template.spec.volumes (kube_vm_claims_collect) */
    const kube_vm_claim *claims;
    uint32_t n_claims;
} kube_vm;

/* status.migrationState; see kube_vmi. */
typedef struct kube_vmi_migration_state {
    const char *target_node;   /* "" when unset */
    const char *source_node;   /* "" when unset */
    const char *migration_uid; /* "" when unset */
    int completed;
    int failed;
} kube_vmi_migration_state;

typedef struct kube_vmi {
    kube_object base;
    const char *node_name;                     /* status.nodeName, "" when unset */
    const char *phase;                         /* status.phase, "" when unset */
    const kube_vmi_migration_state *migration; /* NULL when absent */
    /* the claims of spec.volumes and status.volumeStatus */
    const kube_vm_claim *claims;
    uint32_t n_claims;
} kube_vmi;

extern const kube_codec kube_vm_codec;
extern const kube_codec kube_vmi_codec;

/* The typed object behind obj, or NULL when obj is NULL or another kind.
 * Borrowed: no reference is taken. */
const kube_vm *kube_vm_from(const kube_object *obj);
const kube_vmi *kube_vmi_from(const kube_object *obj);

#endif
