/*
 * kube/types/localvolumes.h - whether a VM's data can follow it to another
 * node: the PersistentVolumeClaims its volumes name, and the node affinity
 * of the PersistentVolumes they are bound to. The one rule of
 * stickyvm-apiserver's /pin guard (apiserver/pinvolumes.h, which reads the
 * claims and PVs with GETs) and of the scheduler's node-loss unpin
 * (scheduler/pins/nodeloss.h, which reads them from its informers).
 *
 * A VM's claims come from its template's volumes (persistentVolumeClaim
 * claimName; dataVolume name, whose PVC has the same name) and from its
 * VirtualMachineInstance (spec.volumes likewise, hotplugged ones included,
 * and status.volumeStatus[].persistentVolumeClaimInfo.claimName). A PV
 * allows a node when its spec.nodeAffinity.required matches the Node's
 * labels (kube_pv_node_affinity_matches, as the scheduler's VolumeBinding
 * does); a PV without node affinity allows every node; unbound or missing
 * claims never hold a VM anywhere.
 *
 * Threads: pure functions (kube_pv_holds_to_node() reads a lister, which
 * is thread-safe). Memory: nothing is allocated; claims borrow
 * their strings from the JSON or objects they were collected from.
 */
#ifndef KUBE_LOCALVOLUMES_H
#define KUBE_LOCALVOLUMES_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "kube/machinery/factory.h"
#include "kube/types/kubevirt.h"
#include "kube/types/node.h"
#include "kube/types/storage.h"

#define KUBE_VM_MAX_CLAIMS 64

typedef struct kube_vm_claims {
    kube_vm_claim items[KUBE_VM_MAX_CLAIMS];
    size_t n;
} kube_vm_claims;

/* Appends claim (named by volume; NULL volume: the claim's name) unless
 * out lists it already, claim is NULL, or out is full. Borrows both. */
void kube_vm_claims_add(kube_vm_claims *out, const char *volume, const char *claim);

/* Adds the claims of vm (a VirtualMachine's JSON, may be NULL) and vmi (its
 * instance's JSON, may be NULL) to out, each claim once (the first volume
 * naming it is kept); past KUBE_VM_MAX_CLAIMS claims are ignored. Strings
 * are borrowed from the JSON. */
void kube_vm_claims_collect(const cJSON *vm, const cJSON *vmi, kube_vm_claims *out);

/* The same for decoded objects (either may be NULL), as their decoders
 * kept them. Strings are borrowed from the objects. */
void kube_vm_claims_of(const kube_vm *vm, const kube_vmi *vmi, kube_vm_claims *out);

/* The node a PV with node affinity lives on, for messages: the first
 * value of a kubernetes.io/hostname In expression or a metadata.name In
 * field of its first term; NULL when the affinity says no single node.
 * Borrowed from pv. */
const char *kube_pv_home(const kube_pv *pv);

/* 1 when pv's data can be used on node (pv has no node affinity, or it
 * matches the node's labels), else 0. */
int kube_pv_allows_node(const kube_pv *pv, const kube_node *node);

/* Why pv (bound to claim cl) keeps a VM off node, into why (size n):
 * `volume "V" (PersistentVolumeClaim "C", PersistentVolume "P") lives on
 * node H, and its node affinity does not allow node N`. */
void kube_pv_conflict_describe(const kube_vm_claim *cl, const kube_pv *pv, const char *node,
                               char *why, size_t n);

/* 1 when pv keeps a VM on node: it has node affinity and allows no Node
 * of nodes (a Node lister, borrowed) but node, which is the rule of the
 * scheduler's node-loss unpin and of /unpin's guard; else 0 (no affinity,
 * or another node qualifies: a zonal PV). */
int kube_pv_holds_to_node(const kube_pv *pv, const char *node, kube_lister *nodes);

#endif
