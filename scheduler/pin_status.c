/*
 * scheduler/pin_status.c - the pinned VMs' node status and waiting pods,
 * counted from the informer caches into two gauges (see pin_status.h).
 */
#include "pin_status.h"

#include <stdlib.h>
#include <string.h>

#include "kube/transport/api.h"
#include "kube/types/kubevirt.h"
#include "kube/types/pin.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/metrics.h"
#include "plugins/stickyvm/stickyvm.h"

static const char *const node_labels[] = {"Ready", "NotReady", "Unknown", "Missing",
                                          "SchedulingDisabled"};
static const char *const wait_labels[] = {"NodeNotReady", "NodeMissing", "NodeUnschedulable",
                                          "NodeTainted", "Insufficient"};
#define N_NODE_LABELS (sizeof(node_labels) / sizeof(node_labels[0]))
#define N_WAIT_LABELS (sizeof(wait_labels) / sizeof(wait_labels[0]))

struct sched_pin_status {
    char *key;
    kube_lister *vms, *vmis, *nodes, *pods;
    kube_metric *vms_by_node, *pods_waiting;
};

/* One refresh's counts. */
typedef struct tally {
    sched_pin_status *ps;
    double vms[N_NODE_LABELS], pods[N_WAIT_LABELS];
} tally;

/* The node_status label of a VM pinned to node (NULL: Missing). */
static const char *node_label(const kube_node *node)
{
    if (node && node->ready == KUBE_NODE_READY_TRUE && node->unschedulable)
        return "SchedulingDisabled";
    return kube_node_ready_word(node);
}

/* The reason of a FitError message: the pinned node's own reason (StickyVM
 * excludes the others with its own words). */
static const char *reason_of_message(const char *msg)
{
    if (strstr(msg, ", which does not exist"))
        return "NodeMissing"; /* StickyVM's PreFilter */
    if (strstr(msg, "node(s) were unschedulable"))
        return "NodeUnschedulable";
    if (strstr(msg, "untolerated taint {node.kubernetes.io/not-ready:") ||
        strstr(msg, "untolerated taint {node.kubernetes.io/unreachable:"))
        return "NodeNotReady";
    if (strstr(msg, "untolerated taint {"))
        return "NodeTainted";
    return "Insufficient";
}

/* The reason label of a pinned VM's pending pod, or NULL when the pod is
 * not waiting (bound, terminal, deleting, or no PodScheduled=False with
 * reason Unschedulable). */
static const char *wait_reason(const kube_pod *pod)
{
    const kube_pod_condition *c = kube_pod_condition_get(pod, "PodScheduled");
    if (*pod->node_name || pod->base.meta.deleting || kube_pod_is_terminal(pod) || !c ||
        strcmp(c->status, "False") != 0 || strcmp(c->reason, "Unschedulable") != 0)
        return NULL;
    return reason_of_message(c->message ? c->message : "");
}

static size_t label_index(const char *const *labels, size_t n, const char *label)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(labels[i], label) == 0)
            return i;
    return n - 1;
}

/* kube_lister_foreach() callback: a VM counts by its pinned node. */
static void count_vm(void *ud, kube_object *obj)
{
    tally *t = ud;
    const char *pin = kube_pin_get(kube_vm_from(obj), t->ps->key);
    if (!pin)
        return;
    kube_object *node = kube_lister_get(t->ps->nodes, "", pin);
    const char *label = node_label(kube_node_from(node));
    t->vms[label_index(node_labels, N_NODE_LABELS, label)]++;
    kube_object_unref(node);
}

/* Whether the VM of VMI ns/name (its controller, else the same name) is
 * pinned. */
static int vmi_pinned(const sched_pin_status *ps, const char *ns, const char *name)
{
    kube_object *vmi = kube_lister_get(ps->vmis, ns, name);
    const kube_owner_ref *o = vmi ? stickyvm_vm_owner(&vmi->meta) : NULL;
    kube_object *vm = kube_lister_get(ps->vms, ns, o ? o->name : name);
    int pinned = vm && kube_pin_get(kube_vm_from(vm), ps->key) != NULL;
    kube_object_unref(vm);
    kube_object_unref(vmi);
    return pinned;
}

/* kube_lister_foreach() callback: a waiting pod of a pinned VM counts. */
static void count_pod(void *ud, kube_object *obj)
{
    tally *t = ud;
    const kube_pod *pod = kube_pod_from(obj);
    const kube_owner_ref *ref = pod ? stickyvm_vmi_owner(&obj->meta) : NULL;
    const char *reason = ref ? wait_reason(pod) : NULL;
    if (reason && vmi_pinned(t->ps, obj->meta.namespace_, ref->name))
        t->pods[label_index(wait_labels, N_WAIT_LABELS, reason)]++;
}

static void set_all(kube_metric *m, const char *const *labels, const double *v, size_t n)
{
    for (size_t i = 0; m && i < n; i++) {
        const char *values[] = {labels[i]};
        kube_metric_set(m, values, v[i]);
    }
}

void sched_pin_status_refresh(sched_pin_status *ps)
{
    tally t = {.ps = ps};
    kube_lister_foreach(ps->vms, count_vm, &t);
    kube_lister_foreach(ps->pods, count_pod, &t);
    set_all(ps->vms_by_node, node_labels, t.vms, N_NODE_LABELS);
    set_all(ps->pods_waiting, wait_labels, t.pods, N_WAIT_LABELS);
}

static void register_metrics(sched_pin_status *ps, kube_metrics *r)
{
    static const char *const node_status[] = {"node_status"};
    static const char *const reason[] = {"reason"};
    kube_metric_opts v = {.name = "stickyvm_pinned_vms",
                          .help = "VirtualMachines pinned, by the status of their pinned node.",
                          .type = KUBE_METRIC_GAUGE,
                          .labels = node_status,
                          .n_labels = 1};
    kube_metric_opts p = {.name = "stickyvm_pinned_pods_waiting",
                          .help = "Pending pods of pinned VirtualMachines their node cannot take, "
                                  "by reason.",
                          .type = KUBE_METRIC_GAUGE,
                          .labels = reason,
                          .n_labels = 1};
    if (!r)
        return;
    ps->vms_by_node = kube_metrics_ensure(r, &v);
    ps->pods_waiting = kube_metrics_ensure(r, &p);
}

static int get_lister(kube_factory *f, const kube_resource *res, const kube_codec *codec,
                      kube_lister **out)
{
    kube_informer_options o = {.resource = res, .codec = codec};
    return kube_factory_lister(f, &o, out);
}

int sched_pin_status_new(kube_factory *informers, kube_lister *pods, const char *key,
                         kube_metrics *registry, sched_pin_status **out)
{
    *out = NULL;
    if (!informers || !pods || !key)
        return KUBE_EINVAL;
    sched_pin_status *ps = calloc(1, sizeof(*ps));
    if (!ps || !(ps->key = kube_strdup(key))) {
        sched_pin_status_free(ps);
        return KUBE_ENOMEM;
    }
    ps->pods = pods;
    int rc = get_lister(informers, &KUBE_RES_VMS, &kube_vm_codec, &ps->vms);
    if (rc == KUBE_OK)
        rc = get_lister(informers, &KUBE_RES_VMIS, &kube_vmi_codec, &ps->vmis);
    if (rc == KUBE_OK)
        rc = get_lister(informers, &KUBE_RES_NODES, &kube_node_codec, &ps->nodes);
    if (rc != KUBE_OK) {
        sched_pin_status_free(ps);
        return rc;
    }
    register_metrics(ps, registry);
    tally zero = {.ps = ps};
    set_all(ps->vms_by_node, node_labels, zero.vms, N_NODE_LABELS);
    set_all(ps->pods_waiting, wait_labels, zero.pods, N_WAIT_LABELS);
    *out = ps;
    return KUBE_OK;
}

void sched_pin_status_free(sched_pin_status *ps)
{
    if (!ps)
        return;
    free(ps->key);
    free(ps);
}
