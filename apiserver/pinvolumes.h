/*
 * apiserver/pinvolumes.h - whether a VM's data can follow it to a node:
 * the PersistentVolumes its volumes are bound to, and their node affinity.
 *
 * A VM's claims come from its template's volumes (persistentVolumeClaim
 * claimName; dataVolume name, whose PVC has the same name) and from its
 * VirtualMachineInstance (spec.volumes likewise, hotplugged ones included,
 * and status.volumeStatus[].persistentVolumeClaimInfo.claimName). Each
 * claim bound to a PV (spec.volumeName) is checked: the PV's
 * spec.nodeAffinity.required must match the target Node's labels
 * (kube_pv_node_affinity_matches, as the scheduler's VolumeBinding does).
 * Unbound or missing claims and PVs without node affinity never conflict.
 *
 * Threads: apis_pin_volumes_check() blocks (GETs to kube-apiserver); run
 * it on a worker. The pure helpers are thread-safe.
 * Memory: apis_pin_claims_collect() fills a caller-owned apis_pin_claims
 * (borrowing strings from the JSON given); nothing else allocates past the
 * call.
 */
#ifndef APIS_PINVOLUMES_H
#define APIS_PINVOLUMES_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "kube/transport/client.h"
#include "kube/types/storage.h"

#define APIS_PIN_MAX_CLAIMS 64

typedef struct apis_pin_claim {
    const char *volume; /* the volume's name in the VM or VMI */
    const char *claim;  /* the PVC's name */
} apis_pin_claim;

typedef struct apis_pin_claims {
    apis_pin_claim items[APIS_PIN_MAX_CLAIMS];
    size_t n;
} apis_pin_claims;

/* Adds the claims of vm (a VirtualMachine's JSON, may be NULL) and vmi (its
 * instance's JSON, may be NULL) to out, each claim once (the first volume
 * naming it is kept); past APIS_PIN_MAX_CLAIMS claims are ignored. */
void apis_pin_claims_collect(const cJSON *vm, const cJSON *vmi, apis_pin_claims *out);

/* The node a PV with node affinity lives on, for messages: the first
 * value of a kubernetes.io/hostname In expression or a metadata.name In
 * field of its first term; NULL when the affinity says no single node.
 * Borrowed from pv. */
const char *apis_pin_pv_home(const kube_pv *pv);

/* Checks the claims of VM ns/name (vm: its JSON) against node (the Node's
 * JSON). Returns KUBE_OK when every bound PV allows the node;
 * KUBE_ECONFLICT with why (size n) saying which volume, claim and PV, and
 * the node they live on; or the error of a GET (st filled). */
int apis_pin_volumes_check(kube_client *c, const char *ns, const char *name, const cJSON *vm,
                           const cJSON *node, char *why, size_t n, kube_status *st);

#endif
