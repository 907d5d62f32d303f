/*
 * scheduler/plugins/stickyvm/stickyvm.h - the StickyVM plugin's public bits: its
 * names, the owner-chain helpers, its counters, and the constructor that
 * reads VMIs and VMs through a caller's lookup (unit tests).
 *
 * The plugin (plugin_stickyvm, declared in plugins.h) keeps a KubeVirt
 * VirtualMachine on the node it first ran on. A pod is a VM's pod when its
 * controller ownerReference is a kubevirt.io VirtualMachineInstance whose
 * controller ownerReference is a kubevirt.io VirtualMachine. The node is
 * recorded on the VM as the annotation stickyvm.io/node (args.annotationKey,
 * checked and written by kube/types/pin.h, with the pin's history annotations)
 * by PostBind on first placement; PreFilter then restricts the pod to that
 * node and Filter rejects every other node. A PostBind write that fails is
 * handed to the scheduler's pin controller through the hand-off its
 * factory closes over (plugin_factory_args in scheduler/plugins/registry.h;
 * scheduler/pins/controller.h), which retries it until it
 * lands and moves pins after completed live migrations, on the leader.
 * See docs/stickyvm.md.
 *
 * Lifetime: the plugin reads the VMI and VM listers of the handle's
 * informer factory (h->svc.informers); it adds no handler and starts no
 * thread.
 *
 * Threads: every function here is thread-safe.
 * Memory: nothing here allocates for the caller except the constructor,
 * whose *self is freed by plugin_stickyvm.destroy.
 */
#ifndef PLUGIN_STICKYVM_H
#define PLUGIN_STICKYVM_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "framework/framework.h"
#include "kube/transport/api.h"
#include "kube/types/kubevirt.h"
#include "kube/codec/object.h"
#include "kube/types/pin.h"
#include "plugins/registry.h"

#define STICKYVM_NAME "StickyVM"
#define STICKYVM_DEFAULT_ANNOTATION KUBE_PIN_DEFAULT_KEY
/* args.nodeLossGracePeriod when absent (a metav1.Duration): how long a
 * pinned node is lost before the pin controller unpins the VMs annotated
 * stickyvm.io/on-node-loss: Unpin (scheduler/pins/nodeloss.h). */
#define STICKYVM_DEFAULT_NODE_LOSS_GRACE "10m0s"
/* The cycle state key PreFilter writes and Filter/PostBind read. */
#define STICKYVM_STATE_KEY "PreFilterStickyVM"
/* The metrics the plugin and the pin controller share (both register or
 * find them on the scheduler's registry). */
#define STICKYVM_METRIC_PINS_RECORDED "stickyvm_pins_recorded_total"
#define STICKYVM_METRIC_PINS_RECORDED_HELP \
    "Pins written on VirtualMachines (first placements and live migrations)."
#define STICKYVM_METRIC_PIN_RECORD_ERRORS "stickyvm_pin_record_errors_total"
#define STICKYVM_METRIC_PIN_RECORD_ERRORS_HELP "Pin writes that failed."
#define STICKYVM_METRIC_MIGRATION_PINS_MOVED "stickyvm_migration_pins_moved_total"
#define STICKYVM_METRIC_MIGRATION_PINS_MOVED_HELP \
    "Pins moved to the target node of a live migration."
/* How long PreFilter waits for the informers to deliver a VMI or VM that is
 * not cached yet before its one GET. */
#define STICKYVM_CACHE_WAIT_MS 100

/* The pod's controller ownerReference when it is a kubevirt.io (any
 * version) VirtualMachineInstance, else NULL (no owner, no controller
 * owner, another kind or group). Borrowed from m. */
const kube_owner_ref *stickyvm_vmi_owner(const kube_meta *pod);
/* The VMI's controller ownerReference when it is a kubevirt.io
 * VirtualMachine, else NULL. Borrowed from m. */
const kube_owner_ref *stickyvm_vm_owner(const kube_meta *vmi);

/* Counters since create (also exported as stickyvm_* metrics when the
 * handle has a metrics registry). */
typedef struct stickyvm_stats {
    unsigned long pins_recorded;         /* pins PostBind wrote */
    unsigned long pin_record_errors;     /* PostBind pin writes that failed */
    unsigned long pinned_pods_scheduled; /* pods bound to their VM's pinned node */
    unsigned long pinned_node_missing;   /* PreFilters whose pinned node was gone */
    unsigned long pins_kept;             /* writes dropped for a concurrent pin */
    unsigned long pins_handed_off;       /* failed writes handed to the pin controller */
    unsigned long filter_calls;          /* Filter invocations */
    unsigned long api_reads;             /* GETs (cache misses, conflict re-reads) */
    unsigned long api_writes;            /* PATCHes of VMs */
} stickyvm_stats;

/* Where the plugin reads VMIs and VMs instead of informers. get returns a
 * NEW reference to the cached object (the caller unrefs it) or NULL. r is
 * &KUBE_RES_VMIS or &KUBE_RES_VMS. */
typedef struct stickyvm_lookup {
    kube_object *(*get)(void *ud, const kube_resource *r, const char *ns, const char *name);
    void *ud; /* borrowed, outlives the plugin */
} stickyvm_lookup;

/* plugin_stickyvm.create with pins (copied; NULL: no pin controller) as
 * its factory's argument, except that VMIs and VMs come from lk when it
 * is not NULL and no informer is added then (a cache miss still makes one
 * GET when h has a client). Arguments and results as
 * fw_plugin_desc.create. */
int stickyvm_new_with_lookup(const cJSON *args, fw_handle *h, const plugin_pin_handoff *pins,
                             const stickyvm_lookup *lk, void **self, char *err, size_t errlen);

#endif
