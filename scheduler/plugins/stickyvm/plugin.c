/*
 * scheduler/plugins/stickyvm/plugin.c - StickyVM: a KubeVirt VirtualMachine comes
 * back to the node it first ran on (see stickyvm.h and docs/stickyvm.md).
 *
 * Reads come from the VMI and VM listers of the handle's informer factory,
 * so PreFilter and Filter make no API call; a VMI or VM not cached yet is
 * waited for briefly and then read with at most one GET per PreFilter
 * (source.h).
 * Writes: one merge patch of the VM per first placement (PostBind), carrying
 * the VM's resourceVersion; a conflict re-reads the VM and keeps a pin that
 * appeared meanwhile; a write that fails is handed to the scheduler's pin
 * controller (the plugin_pin_handoff its factory closes over,
 * scheduler/plugins/registry.h; scheduler/pins/controller.h), which retries it
 * until it lands and also moves pins after live migrations. Pins this
 * process wrote are remembered (notes, notes.h) until the VM informer shows
 * them, so a pod recreated at once cannot miss a pin the cache has not
 * delivered yet. Pins are written through kube/types/pin.h.
 */
#include "plugins/stickyvm/stickyvm.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/transport/api.h"
#include "kube/util/buf.h"
#include "kube/util/duration.h"
#include "kube/util/errors.h"
#include "kube/machinery/factory.h"
#include "kube/types/kubevirt.h"
#include "kube/util/log.h"
#include "kube/util/metrics.h"
#include "kube/types/pin.h"
#include "kube/types/pod.h"
#include "kube/machinery/recorder.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"
#include "plugins/stickyvm/notes.h"
#include "plugins/stickyvm/source.h"

#define KUBEVIRT_GROUP "kubevirt.io"
#define UNPIN_CMD_FMT \
    "kubectl get --raw /apis/subresources.stickyvm.io/v1/namespaces/%s/virtualmachines/%s/unpin"
/* The plugin's command (kubectl-stickyvm) moving a VM: name, namespace. */
#define PIN_CMD_FMT "kubectl stickyvm pin %s -n %s --node NODE"
/* The plugin's command moving every pin off a node: the node. */
#define EVACUATE_CMD_FMT "kubectl stickyvm evacuate %s"
/* Node names are DNS-1123 subdomains (<= 253 bytes). */
#define NODE_MAX 256
/* stickyvm_pinned_pod_wait_seconds: 0.01 s doubling, as kube-scheduler's
 * pod_scheduling_sli_duration_seconds. */
#define STICKYVM_WAIT_BUCKETS 20

/* ------------------------------------------------------------------ */
/* State                                                               */
/* ------------------------------------------------------------------ */

typedef struct sv_counters {
    atomic_ulong pins_recorded, pin_record_errors, pinned_pods_scheduled, pinned_node_missing,
        pins_kept, pins_handed_off, filter_calls, api_reads, api_writes;
} sv_counters;

typedef struct sv_metrics {
    kube_metric *pins_recorded, *pin_record_errors, *pinned_pods_scheduled, *pinned_node_missing;
    kube_metric *pinned_pod_wait; /* stickyvm_pinned_pod_wait_seconds */
} sv_metrics;

typedef struct stickyvm {
    fw_handle *h;
    char *key;               /* the pin annotation */
    kube_lister *vmis, *vms; /* the factory's; NULL with a caller's lookup */
    stickyvm_source *src;    /* where VMIs and VMs are read */
    plugin_pin_handoff pins; /* the pin controller's hand-off (NULL enqueue: none) */
    stickyvm_notes *notes;   /* pins written, until the informer shows them */

    sv_counters c;
    sv_metrics m;
} stickyvm;

/* What PreFilter leaves in the cycle state. */
typedef struct sv_state {
    kube_object *vm;    /* one reference: the VM PreFilter saw */
    char pin[NODE_MAX]; /* the effective pin, "" when unpinned */
} sv_state;

static void count(stickyvm *sv, atomic_ulong *c, kube_metric *m)
{
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
    kube_metric_add(m, NULL, 1);
}

static const kube_vm *state_vm(const sv_state *s)
{
    return kube_vm_from(s->vm);
}

/* ------------------------------------------------------------------ */
/* Owner chain (pure)                                                  */
/* ------------------------------------------------------------------ */

/* 1 when api_version is "kubevirt.io/<version>". */
static int is_kubevirt(const char *api_version)
{
    size_t n = strlen(KUBEVIRT_GROUP);
    return api_version && strncmp(api_version, KUBEVIRT_GROUP, n) == 0 && api_version[n] == '/' &&
           api_version[n + 1] != '\0';
}

static const kube_owner_ref *controller_of_kind(const kube_meta *m, const char *kind)
{
    const kube_owner_ref *o = kube_meta_controller(m);
    if (!o || !o->kind || strcmp(o->kind, kind) != 0 || !is_kubevirt(o->api_version) || !o->name ||
        !*o->name)
        return NULL;
    return o;
}

const kube_owner_ref *stickyvm_vmi_owner(const kube_meta *pod)
{
    return controller_of_kind(pod, "VirtualMachineInstance");
}

const kube_owner_ref *stickyvm_vm_owner(const kube_meta *vmi)
{
    return controller_of_kind(vmi, "VirtualMachine");
}

static const char *pin_of(const kube_vm *vm, const char *key)
{
    const char *p = kube_pin_get(vm, key);
    return p ? p : "";
}

/* ------------------------------------------------------------------ */
/* Notes: pins written by this process (notes.h)                       */
/* ------------------------------------------------------------------ */

/* The pin PreFilter must honour for vm ("" when unpinned). */
static void effective_pin(stickyvm *sv, const kube_vm *vm, char *out, size_t n)
{
    stickyvm_notes_effective_pin(sv->notes, vm, pin_of(vm, sv->key), out, n);
}

/* Records what the server now holds for the VM (final may be NULL). */
static void note_settle(stickyvm *sv, const char *ns, const char *name, const kube_vm *final)
{
    stickyvm_notes_settle(sv->notes, ns, name, final, pin_of(final, sv->key));
}

/* ------------------------------------------------------------------ */
/* Reading VMIs and VMs (source.h)                            */
/* ------------------------------------------------------------------ */

static kube_object *cached(stickyvm *sv, const kube_resource *r, const char *ns, const char *name,
                           const char *uid)
{
    return stickyvm_source_cached(sv->src, r, ns, name, uid);
}

/* stickyvm_vm_get_fn over the VM cache, for the notes' sweep. */
static kube_object *cached_vm(void *ud, const char *ns, const char *name)
{
    return cached(ud, &KUBE_RES_VMS, ns, name, NULL);
}

/* ------------------------------------------------------------------ */
/* Cycle state                                                         */
/* ------------------------------------------------------------------ */

static void *state_clone(const void *data)
{
    const sv_state *s = data;
    sv_state *c = malloc(sizeof(*c));
    if (c) {
        *c = *s;
        kube_object_ref(c->vm);
    }
    return c;
}

static void state_free(void *data)
{
    sv_state *s = data;
    if (s)
        kube_object_unref(s->vm);
    free(s);
}

static const fw_state_ops state_ops = {state_clone, state_free};

/* ------------------------------------------------------------------ */
/* PreFilter                                                           */
/* ------------------------------------------------------------------ */

static fw_status *lookup_failed(int rc, const char *kind, const char *ns, const char *name,
                                const fw_pod_info *pi)
{
    if (rc == KUBE_ENOTFOUND)
        return fw_status_newf(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, "%s %s/%s of pod %s/%s not found",
                              kind, ns, name, pi->namespace_, pi->name);
    return fw_status_error(rc, "reading %s %s/%s: %s", kind, ns, name, kube_strerror(rc));
}

/* Resolves pod -> VMI -> VM. NULL with *vm a new reference, FW_SKIP when
 * the VMI has no VirtualMachine controller, or a failure. */
static fw_status *resolve_vm(stickyvm *sv, const fw_pod_info *pi, const kube_owner_ref *vmi_ref,
                             kube_object **vm)
{
    const char *ns = pi->namespace_;
    kube_object *vmi = NULL;
    int gets = 1;
    int rc =
        stickyvm_source_fetch(sv->src, &KUBE_RES_VMIS, &kube_vmi_codec, ns, vmi_ref, &gets, &vmi);
    if (rc != KUBE_OK)
        return lookup_failed(rc, "VirtualMachineInstance", ns, vmi_ref->name, pi);
    const kube_owner_ref *vm_ref = stickyvm_vm_owner(&vmi->meta);
    fw_status *st = NULL;
    if (!vm_ref)
        st = fw_status_new(FW_SKIP, NULL);
    else if ((rc = stickyvm_source_fetch(sv->src, &KUBE_RES_VMS, &kube_vm_codec, ns, vm_ref, &gets,
                                         vm)) != KUBE_OK)
        st = lookup_failed(rc, "VirtualMachine", ns, vm_ref->name, pi);
    kube_object_unref(vmi);
    return st;
}

/* The FitError's reason for every node but the pinned one. */
#define EXCLUDED_REASON "node(s) didn't match the pinned node"

/* The sentence a pinned pod's Pending reasons end with: the VM, its pin,
 * that the pin excluded the other nodes, and the commands that move or
 * release it. missing: the pinned node is not in the cluster. Allocated
 * (caller frees); NULL on out-of-memory. */
static char *pin_sentence(const stickyvm *sv, const kube_vm *vm, const char *pin, int missing)
{
    const char *ns = vm->base.meta.namespace_, *name = vm->base.meta.name;
    kube_buf b = KUBE_BUF_INIT;
    int err =
        missing
            ? kube_buf_printf(&b,
                              "VM %s/%s is pinned to node %s (annotation %s), which does not "
                              "exist, so the other nodes were excluded by the pin; the node no "
                              "longer exists: move every VM pinned to it with \"" EVACUATE_CMD_FMT
                              "\", or this one with \"" PIN_CMD_FMT " --force\", or release the "
                              "pin with \"" UNPIN_CMD_FMT "\"",
                              ns, name, pin, sv->key, pin, name, ns, ns, name)
            : kube_buf_printf(&b,
                              "VM %s/%s is pinned to node %s (annotation %s), so the other "
                              "nodes were excluded by the pin; to move it run \"" PIN_CMD_FMT
                              "\", or release the pin with \"" UNPIN_CMD_FMT "\"",
                              ns, name, pin, sv->key, name, ns, ns, name);
    char *out = err ? NULL : kube_buf_take(&b);
    kube_buf_free(&b);
    return out;
}

static fw_status *pinned_node_missing(stickyvm *sv, const kube_vm *vm, const char *pin)
{
    count(sv, &sv->c.pinned_node_missing, sv->m.pinned_node_missing);
    char *msg = pin_sentence(sv, vm, pin, 1);
    fw_status *st = msg ? fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, msg)
                        : fw_status_error(KUBE_ENOMEM, NULL);
    free(msg);
    return st;
}

/* Restricts the pod to the pinned node (state already written); a FitError
 * counts the other nodes as excluded by the pin and ends with the pin. */
static fw_status *restrict_to_pin(stickyvm *sv, const kube_vm *vm, const char *pin,
                                  fw_pre_filter_result **result)
{
    const fw_snapshot *snap = sv->h->svc.snapshot;
    if (snap && !fw_snapshot_get(snap, pin))
        return pinned_node_missing(sv, vm, pin);
    char *note = pin_sentence(sv, vm, pin, 0);
    if (note && (*result = fw_pre_filter_result_new(&pin, 1)) &&
        fw_pre_filter_result_explain(*result, EXCLUDED_REASON, note) == KUBE_OK) {
        free(note);
        return NULL;
    }
    free(note);
    fw_pre_filter_result_free(*result);
    *result = NULL;
    return fw_status_error(KUBE_ENOMEM, NULL);
}

static fw_status *pre_filter(void *self, fw_cycle_state *cs, const fw_pod_info *pi,
                             fw_pre_filter_result **result)
{
    stickyvm *sv = self;
    const kube_owner_ref *vmi_ref = stickyvm_vmi_owner(&pi->pod->base.meta);
    if (!vmi_ref || kube_pod_is_migration_target(pi->pod))
        return fw_status_new(FW_SKIP, NULL);
    sv_state *s = calloc(1, sizeof(*s));
    if (!s)
        return fw_status_error(KUBE_ENOMEM, NULL);
    fw_status *st = resolve_vm(sv, pi, vmi_ref, &s->vm);
    if (st) {
        state_free(s);
        return st;
    }
    const kube_vm *vm = state_vm(s);
    effective_pin(sv, vm, s->pin, sizeof(s->pin));
    const char *pin = s->pin;
    if (fw_cycle_state_write(cs, STICKYVM_STATE_KEY, s, &state_ops) != KUBE_OK)
        return fw_status_error(KUBE_ENOMEM, NULL);
    if (!*pin)
        return fw_status_new(FW_SKIP, NULL); /* first placement: any node; PostBind pins */
    return restrict_to_pin(sv, vm, pin, result);
}

/* ------------------------------------------------------------------ */
/* Filter                                                              */
/* ------------------------------------------------------------------ */

static fw_status *filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pi,
                         const fw_node_info *ni)
{
    stickyvm *sv = self;
    atomic_fetch_add_explicit(&sv->c.filter_calls, 1, memory_order_relaxed);
    const sv_state *s = fw_cycle_state_read_static(cs, STICKYVM_STATE_KEY);
    if (!s)
        return fw_status_error(KUBE_EINVAL, "reading \"%s\" from cycleState: not found",
                               STICKYVM_STATE_KEY);
    if (!*s->pin || strcmp(ni->name, s->pin) == 0)
        return NULL;
    const kube_vm *vm = state_vm(s);
    return fw_status_newf(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, "VM %s/%s is pinned to node %s",
                          vm->base.meta.namespace_, vm->base.meta.name, s->pin);
}

/* ------------------------------------------------------------------ */
/* Writing the pin                                                     */
/* ------------------------------------------------------------------ */

/* A Normal event on the VM (related to the pod when pi is set). */
static void vm_event(stickyvm *sv, const kube_vm *vm, const fw_pod_info *pi, const char *reason,
                     const char *note)
{
    if (!sv->h->svc.recorder)
        return;
    kube_recorder_ref reg = kube_pin_event_ref(vm);
    kube_recorder_ref rel = {.kind = "Pod", .api_version = "v1"};
    if (pi) {
        rel.namespace_ = pi->namespace_, rel.name = pi->name, rel.uid = pi->uid;
    }
    kube_recorder_eventf(sv->h->svc.recorder, &reg, pi ? &rel : NULL, KUBE_RECORDER_NORMAL, reason,
                         "Pin", "%s", note);
}

/* Counts the requests a pin write made. */
static void count_requests(stickyvm *sv, const kube_pin_result *res)
{
    atomic_fetch_add_explicit(&sv->c.api_reads, (unsigned long)res->reads, memory_order_relaxed);
    atomic_fetch_add_explicit(&sv->c.api_writes, (unsigned long)res->writes, memory_order_relaxed);
}

/* ------------------------------------------------------------------ */
/* PostBind                                                            */
/* ------------------------------------------------------------------ */

/* The VM's first pin by PostBind: the plugin and the pod being bound. */
typedef struct first_pin_ctx {
    const stickyvm *sv;
    const char *pod_uid;
} first_pin_ctx;

/* After a conflict the first pin goes ahead only over an unpinned VM whose
 * last decision did not see this pod bound (stickyvm.io/seen-pods). */
static int first_pin_decide(void *ud, const kube_vm *cur)
{
    const first_pin_ctx *f = ud;
    return kube_pin_get(cur, f->sv->key) == NULL && kube_pin_saw_pod(cur, f->pod_uid) != 1;
}

/* PostBind's write failed: the pin controller takes the VM and writes its
 * pin until it lands (or says why it cannot: no controller). */
static void hand_off(stickyvm *sv, const kube_vm *vm, const char *node, int rc,
                     const kube_pin_result *res)
{
    const char *ns = vm->base.meta.namespace_, *name = vm->base.meta.name;
    const plugin_pin_handoff *p = &sv->pins;
    const char *next = p->enqueue ? "handed to the pin controller, which retries it"
                                  : "no pin controller runs: the next placement tries again";
    KLOG_ERROR("StickyVM: could not pin VM %s/%s to node %s (%s%s%s); %s", ns, name, node,
               kube_strerror(rc), res->status.message[0] ? ": " : "", res->status.message, next);
    if (!p->enqueue)
        return;
    atomic_fetch_add_explicit(&sv->c.pins_handed_off, 1, memory_order_relaxed);
    p->enqueue(p->ud, ns, name);
}

static void first_pin_done(stickyvm *sv, const kube_vm *vm, const fw_pod_info *pi, const char *node,
                           int rc, const kube_pin_result *res)
{
    const char *ns = vm->base.meta.namespace_, *name = vm->base.meta.name;
    const kube_vm *final = kube_vm_from(res->vm);
    char note[640];
    note_settle(sv, ns, name, final);
    if (rc == KUBE_OK && res->outcome == KUBE_PIN_WRITTEN) {
        count(sv, &sv->c.pins_recorded, sv->m.pins_recorded);
        KLOG_V(2, "StickyVM: pinned VM %s/%s to node %s (pod %s/%s)", ns, name, node,
               pi->namespace_, pi->name);
        snprintf(note, sizeof(note), "Pinned to node %s, where pod %s was first placed", node,
                 pi->name);
        vm_event(sv, vm, pi, "Pinned", note);
    } else if (rc == KUBE_OK && res->outcome != KUBE_PIN_GONE) {
        atomic_fetch_add_explicit(&sv->c.pins_kept, 1, memory_order_relaxed);
        KLOG_INFO("StickyVM: VM %s/%s was pinned to node %s meanwhile; kept (pod %s/%s is on "
                  "node %s)",
                  ns, name, pin_of(final, sv->key), pi->namespace_, pi->name, node);
    } else if (rc == KUBE_OK) {
        KLOG_INFO("StickyVM: VM %s/%s is gone; not pinned (pod %s/%s on node %s)", ns, name,
                  pi->namespace_, pi->name, node);
    } else {
        count(sv, &sv->c.pin_record_errors, sv->m.pin_record_errors);
        hand_off(sv, vm, node, rc, res);
    }
}

/* stickyvm_pinned_pod_wait_seconds: pi's creation to now, its bind. */
static void observe_wait(stickyvm *sv, const fw_pod_info *pi)
{
    int64_t created = pi->pod->base.meta.creation_unix;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    double wait = (double)(now.tv_sec - created) + (double)now.tv_nsec / 1e9;
    if (sv->m.pinned_pod_wait && created > 0)
        kube_metric_observe(sv->m.pinned_pod_wait, NULL, wait > 0 ? wait : 0);
}

static void post_bind(void *self, fw_cycle_state *cs, const fw_pod_info *pi, const char *node)
{
    stickyvm *sv = self;
    const sv_state *s = fw_cycle_state_read_static(cs, STICKYVM_STATE_KEY);
    if (!s)
        return; /* not a VM's pod (PreFilter skipped) */
    const kube_vm *vm = state_vm(s);
    if (*s->pin) {
        if (strcmp(s->pin, node) == 0)
            count(sv, &sv->c.pinned_pods_scheduled, sv->m.pinned_pods_scheduled);
        observe_wait(sv, pi);
        return;
    }
    if (sv->vms)
        stickyvm_notes_sweep(sv->notes, cached_vm, sv);
    if (!stickyvm_notes_claim(sv->notes, vm, node))
        return; /* another pod of this VM is pinning it */
    kube_pin_write w = {.key = sv->key,
                        .node = node,
                        .reason = KUBE_PIN_FIRST_PLACEMENT,
                        .by = KUBE_PIN_BY_SCHEDULER};
    kube_pin_result res = {0};
    first_pin_ctx f = {sv, pi->uid ? pi->uid : ""};
    int rc = sv->h->svc.client ? kube_pin_set(sv->h->svc.client, vm, &w, first_pin_decide, &f, &res)
                               : KUBE_EINVAL;
    count_requests(sv, &res);
    first_pin_done(sv, vm, pi, node, rc, &res);
    kube_pin_result_clear(&res);
}

/* PostBind blocks only to write a first pin: for a VM's pod whose VM
 * PreFilter saw unpinned. */
static int binding_may_block(void *self, const fw_cycle_state *cs, const fw_pod_info *pi,
                             const char *node)
{
    const sv_state *s = fw_cycle_state_read_static(cs, STICKYVM_STATE_KEY);

    (void)self;
    (void)pi;
    (void)node;
    return s && !*s->pin;
}

/* ------------------------------------------------------------------ */
/* Listers                                                             */
/* ------------------------------------------------------------------ */

/* The factory's VMI and VM listers (created on first request; the
 * scheduler's event handlers requeue pods on their events). */
static int get_listers(stickyvm *sv, char *err, size_t errlen)
{
    kube_factory *f = sv->h->svc.informers;
    kube_informer_options vmi_o = {.resource = &KUBE_RES_VMIS, .codec = &kube_vmi_codec};
    kube_informer_options vm_o = {.resource = &KUBE_RES_VMS, .codec = &kube_vm_codec};
    int rc = kube_factory_lister(f, &vmi_o, &sv->vmis);
    if (rc == KUBE_OK)
        rc = kube_factory_lister(f, &vm_o, &sv->vms);
    stickyvm_source_set_listers(sv->src, sv->vmis, sv->vms);
    if (rc != KUBE_OK)
        snprintf(err, errlen, "adding the VirtualMachine(Instance) informers: %s",
                 kube_strerror(rc));
    return rc;
}

/* ------------------------------------------------------------------ */
/* Queueing hints                                                      */
/* ------------------------------------------------------------------ */

/* The pod's VM from the cache only (hints make no API call); a new
 * reference or NULL. */
static kube_object *cached_vm_of(stickyvm *sv, const fw_pod_info *pi)
{
    const kube_owner_ref *vmi_ref = stickyvm_vmi_owner(&pi->pod->base.meta);
    if (!vmi_ref)
        return NULL;
    kube_object *vmi = cached(sv, &KUBE_RES_VMIS, pi->namespace_, vmi_ref->name, vmi_ref->uid);
    const kube_owner_ref *vm_ref = vmi ? stickyvm_vm_owner(&vmi->meta) : NULL;
    kube_object *vm =
        vm_ref ? cached(sv, &KUBE_RES_VMS, pi->namespace_, vm_ref->name, vm_ref->uid) : NULL;
    kube_object_unref(vmi);
    return vm;
}

/* A node was added or changed: worth a retry only when it is the pinned
 * node (or when the pin is not known from the cache). */
static fw_queueing_hint node_hint(void *self, const fw_pod_info *pi, const kube_object *old_obj,
                                  const kube_object *new_obj)
{
    stickyvm *sv = self;
    char pin[NODE_MAX];
    kube_object *vm = cached_vm_of(sv, pi);
    if (!vm || !new_obj) {
        kube_object_unref(vm);
        return FW_QUEUE_AFTER_BACKOFF;
    }
    effective_pin(sv, kube_vm_from(vm), pin, sizeof(pin));
    kube_object_unref(vm);
    return *pin && strcmp(pin, new_obj->meta.name) == 0 ? FW_QUEUE_AFTER_BACKOFF : FW_QUEUE_SKIP;
}

/* The VM named by the pod's VMI (the VMI's controller), or by the VMI's
 * own name when the VMI is not cached (KubeVirt names them alike). */
static int is_pods_vm(stickyvm *sv, const fw_pod_info *pi, const kube_object *vm)
{
    const kube_owner_ref *vmi_ref = stickyvm_vmi_owner(&pi->pod->base.meta);
    if (!vmi_ref || !vm || strcmp(vm->meta.namespace_, pi->namespace_) != 0)
        return 0;
    kube_object *vmi = cached(sv, &KUBE_RES_VMIS, pi->namespace_, vmi_ref->name, vmi_ref->uid);
    const kube_owner_ref *vm_ref = vmi ? stickyvm_vm_owner(&vmi->meta) : NULL;
    int mine = strcmp(vm_ref ? vm_ref->name : vmi_ref->name, vm->meta.name) == 0;
    kube_object_unref(vmi);
    return mine;
}

/* The pod's VM appeared, or its pin changed. */
static fw_queueing_hint vm_hint(void *self, const fw_pod_info *pi, const kube_object *old_obj,
                                const kube_object *new_obj)
{
    stickyvm *sv = self;
    if (!is_pods_vm(sv, pi, new_obj))
        return FW_QUEUE_SKIP;
    if (!old_obj)
        return FW_QUEUE_AFTER_BACKOFF;
    const char *was = pin_of(kube_vm_from(old_obj), sv->key);
    const char *now = pin_of(kube_vm_from(new_obj), sv->key);
    return strcmp(was, now) != 0 ? FW_QUEUE_AFTER_BACKOFF : FW_QUEUE_SKIP;
}

/* The pod's VMI appeared. */
static fw_queueing_hint vmi_hint(void *self, const fw_pod_info *pi, const kube_object *old_obj,
                                 const kube_object *new_obj)
{
    const kube_owner_ref *ref = stickyvm_vmi_owner(&pi->pod->base.meta);
    if (!ref || !new_obj || strcmp(new_obj->meta.namespace_, pi->namespace_) != 0 ||
        strcmp(new_obj->meta.name, ref->name) != 0)
        return FW_QUEUE_SKIP;
    return FW_QUEUE_AFTER_BACKOFF;
}

static const fw_cluster_event_with_hint sv_events[] = {
    {{FW_GVK_NODE, FW_ACT_ADD | FW_ACT_UPDATE, "PinnedNodeChange"}, node_hint},
    {{FW_GVK_VM, FW_ACT_ADD | FW_ACT_UPDATE, "VirtualMachineChange"}, vm_hint},
    {{FW_GVK_VMI, FW_ACT_ADD, "VirtualMachineInstanceAdd"}, vmi_hint},
};

PLUGIN_EVENTS_TO_REGISTER(sv_events)

/* ------------------------------------------------------------------ */
/* Args                                                                */
/* ------------------------------------------------------------------ */

/* The key is checked by kube/types/pin.h, as the API server checks its flag. */
static void check_annotation_key(const char *key, plugin_field_errs *e)
{
    char msg[1280];
    if (kube_pin_key_check(key, msg, sizeof(msg)) != KUBE_OK)
        plugin_field_errs_add(e, "annotationKey: %s", msg);
}

/* nodeLossGracePeriod: a Go duration, not negative; normalized into out
 * (Duration.String(), as metav1.Duration marshals). */
static void check_grace(const char *value, char *out, size_t n, plugin_field_errs *e)
{
    int64_t ms = 0;
    if (kube_duration_parse(value, &ms) != KUBE_OK)
        plugin_field_errs_add(e,
                              "nodeLossGracePeriod: Invalid value: \"%s\": time: invalid "
                              "duration \"%s\"",
                              value, value);
    else if (ms < 0)
        plugin_field_errs_add(e,
                              "nodeLossGracePeriod: Invalid value: \"%s\": must be greater than "
                              "or equal to 0",
                              value);
    else
        kube_duration_format(ms, out, n);
}

/* The args as given, checked: *key and grace (size n) their values. */
static void read_args(const cJSON *in, const char **key, char *grace, size_t n,
                      plugin_field_errs *e)
{
    static const char *const known[] = {"annotationKey", "nodeLossGracePeriod", NULL};
    const char *g = STICKYVM_DEFAULT_NODE_LOSS_GRACE;
    plugin_args_unknown_fields(in, "", known, e);
    if (plugin_args_str(in, "", "annotationKey", KUBE_PIN_DEFAULT_KEY, key, e))
        check_annotation_key(*key, e);
    if (plugin_args_str(in, "", "nodeLossGracePeriod", STICKYVM_DEFAULT_NODE_LOSS_GRACE, &g, e))
        check_grace(g, grace, n, e);
}

static int default_args(const cJSON *in, cJSON **out, char *err, size_t errlen)
{
    plugin_field_errs e = PLUGIN_FIELD_ERRS_INIT;
    const char *key = KUBE_PIN_DEFAULT_KEY;
    char grace[32] = STICKYVM_DEFAULT_NODE_LOSS_GRACE;
    *out = NULL;
    if (in && !cJSON_IsObject(in)) {
        snprintf(err, errlen, "expected an object");
        return KUBE_ECONFIG;
    }
    if (in)
        read_args(in, &key, grace, sizeof(grace), &e);
    int rc = plugin_field_errs_finish(&e, err, errlen);
    if (rc != KUBE_OK)
        return rc;
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddStringToObject(o, "annotationKey", key) ||
        !cJSON_AddStringToObject(o, "nodeLossGracePeriod", grace)) {
        cJSON_Delete(o);
        return KUBE_ENOMEM;
    }
    *out = o;
    return KUBE_OK;
}

/* ------------------------------------------------------------------ */
/* Metrics                                                             */
/* ------------------------------------------------------------------ */

/* Registers (or, for another profile's instance or the pin controller,
 * finds) one counter. */
static kube_metric *counter(kube_metrics *reg, const char *name, const char *help)
{
    kube_metric_opts o = {.name = name, .help = help, .type = KUBE_METRIC_COUNTER};
    kube_metric *m = kube_metrics_ensure(reg, &o);
    if (!m)
        KLOG_WARN("StickyVM: registering metric %s failed", name);
    return m;
}

static void register_metrics(stickyvm *sv)
{
    kube_metrics *reg = sv->h->svc.metrics_registry;
    if (!reg)
        return;
    sv->m.pins_recorded =
        counter(reg, STICKYVM_METRIC_PINS_RECORDED, STICKYVM_METRIC_PINS_RECORDED_HELP);
    sv->m.pin_record_errors =
        counter(reg, STICKYVM_METRIC_PIN_RECORD_ERRORS, STICKYVM_METRIC_PIN_RECORD_ERRORS_HELP);
    sv->m.pinned_pods_scheduled = counter(reg, "stickyvm_pinned_pods_scheduled_total",
                                          "Pods of pinned VirtualMachines bound to their node.");
    sv->m.pinned_node_missing = counter(reg, "stickyvm_pinned_node_missing_total",
                                        "Scheduling attempts whose pinned node does not exist.");
    double buckets[STICKYVM_WAIT_BUCKETS];
    kube_metrics_exp_buckets(0.01, 2, STICKYVM_WAIT_BUCKETS, buckets);
    kube_metric_opts w = {.name = "stickyvm_pinned_pod_wait_seconds",
                          .help =
                              "Time from a pod's creation to its bind, for pods of VirtualMachines "
                              "already pinned when scheduled.",
                          .type = KUBE_METRIC_HISTOGRAM,
                          .buckets = buckets,
                          .n_buckets = STICKYVM_WAIT_BUCKETS};
    sv->m.pinned_pod_wait = kube_metrics_ensure(reg, &w);
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */
/* ------------------------------------------------------------------ */

static void sv_free(stickyvm *sv)
{
    if (!sv)
        return;
    stickyvm_notes_free(sv->notes);
    stickyvm_source_free(sv->src);
    free(sv->key);
    free(sv);
}

static void destroy(void *self)
{
    sv_free(self);
}

/* The annotation key from (defaulted or raw) args. */
static int args_key(const cJSON *args, char **key, char *err, size_t errlen)
{
    cJSON *norm = NULL;
    int rc = default_args(args, &norm, err, errlen);
    if (rc != KUBE_OK)
        return rc;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(norm, "annotationKey");
    *key = kube_strdup(k->valuestring);
    cJSON_Delete(norm);
    return *key ? KUBE_OK : KUBE_ENOMEM;
}

int stickyvm_new_with_lookup(const cJSON *args, fw_handle *h, const plugin_pin_handoff *pins,
                             const stickyvm_lookup *lk, void **self, char *err, size_t errlen)
{
    stickyvm *sv = calloc(1, sizeof(*sv));
    *self = NULL;
    if (!sv)
        return KUBE_ENOMEM;
    sv->h = h;
    if (pins)
        sv->pins = *pins;
    int rc = stickyvm_source_new(lk, h->svc.client, &sv->c.api_reads, &sv->src);
    if (rc == KUBE_OK)
        rc = args_key(args, &sv->key, err, errlen);
    if (rc == KUBE_OK)
        rc = stickyvm_notes_new(&sv->notes);
    if (rc == KUBE_OK && !lk && h->svc.informers)
        rc = get_listers(sv, err, errlen);
    if (rc != KUBE_OK) {
        sv_free(sv);
        return rc;
    }
    register_metrics(sv);
    *self = sv;
    return KUBE_OK;
}

/* deps: the plugin_pin_handoff its registry entry closes over
 * (plugin_registry_with_args), or NULL: no pin controller. */
static int create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                  size_t errlen)
{
    return stickyvm_new_with_lookup(args, h, deps, NULL, self, err, errlen);
}

void stickyvm_stats_get(const void *self, stickyvm_stats *out)
{
    const sv_counters *c = &((const stickyvm *)self)->c;
    out->pins_recorded = atomic_load(&c->pins_recorded);
    out->pin_record_errors = atomic_load(&c->pin_record_errors);
    out->pinned_pods_scheduled = atomic_load(&c->pinned_pods_scheduled);
    out->pinned_node_missing = atomic_load(&c->pinned_node_missing);
    out->pins_kept = atomic_load(&c->pins_kept);
    out->pins_handed_off = atomic_load(&c->pins_handed_off);
    out->filter_calls = atomic_load(&c->filter_calls);
    out->api_reads = atomic_load(&c->api_reads);
    out->api_writes = atomic_load(&c->api_writes);
}

const fw_plugin_desc plugin_stickyvm = {
    .name = STICKYVM_NAME,
    .default_args = default_args,
    .create = create,
    .destroy = destroy,
    .pre_filter = pre_filter,
    .filter = filter,
    .post_bind = post_bind,
    .binding_may_block = binding_may_block,
    .events_to_register = events_to_register,
};
