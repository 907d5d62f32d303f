/*
 * scheduler/pins/status.c - the pinned VMs' node status and waiting pods,
 * counted from the informer caches into two gauges (see pins/status.h).
 */
#include "pins/status.h"

#include <stdlib.h>
#include <string.h>

#include "kube/transport/api.h"
#include "kube/types/kubevirt.h"
#include "kube/types/node_target.h"
#include "kube/types/pin.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/array.h"
#include "kube/util/metrics.h"
#include "kube/util/strmap.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"
#include "plugins/stickyvm/stickyvm.h"

static const char *const node_labels[] = {"Ready", "NotReady", "Unknown", "Missing",
                                          "SchedulingDisabled"};
static const char *const wait_labels[] = {"NodeNotReady", "NodeMissing", "NodeUnschedulable",
                                          "NodeTainted", "Insufficient"};
#define N_NODE_LABELS (sizeof(node_labels) / sizeof(node_labels[0]))
#define N_WAIT_LABELS (sizeof(wait_labels) / sizeof(wait_labels[0]))

struct sched_pins_status {
    char *key;
    kube_lister *vms, *vmis, *nodes, *pods;
    kube_metric *vms_by_node, *pods_waiting, *on_unready;
};

/* The VMs pinned to one node that is not Ready. */
typedef struct unready {
    const char *status; /* NotReady, Unknown or Missing (static) */
    double vms;
} unready;

/* The series of stickyvm_pinned_vms_on_unready_node being built. */
typedef struct series {
    const char **values; /* node, node_status per series */
    double *v;
    size_t n;
} series;

/* A waiting pod of a pinned VM and the node it is pinned to. */
typedef struct waiter {
    fw_pod_info *pi; /* one reference */
    char *node;      /* copy */
} waiter;

/* One refresh's counts, and its waiting pods with their nodes' infos. */
typedef struct tally {
    sched_pins_status *ps;
    double vms[N_NODE_LABELS], pods[N_WAIT_LABELS];
    waiter *waiters;
    size_t n_waiters, cap_waiters;
    kube_strmap infos;   /* pinned node name -> fw_node_info, for nodes that exist */
    kube_strmap unready; /* pinned node name -> unready, for nodes not Ready */
} tally;

/* The node_status label of a VM pinned to node (NULL: Missing). */
static const char *node_label(const kube_node *node)
{
    if (node && node->ready == KUBE_NODE_READY_TRUE && node->unschedulable)
        return "SchedulingDisabled";
    return kube_node_ready_word(node);
}

/* Why the node of ni (NULL: no such node) cannot take the pod of pi, by
 * kube_node_refuses() (kube/types/node_target.h: the Filter plugins'
 * predicates in the default profile's order, the rule the apiserver's pin
 * guard applies too), then NodeResourcesFit: the first that fails is the
 * one the FitError names. A node refused only for its Ready condition (no
 * lifecycle taint yet) passes the Filters. NULL when they all pass. */
static const char *node_refusal(const fw_pod_info *pi, const fw_node_info *ni)
{
    const kube_taint *t;

    switch (
        kube_node_refuses(ni ? ni->node : NULL, pi->pod->tolerations, pi->pod->n_tolerations, &t)) {
    case KUBE_NODE_MISSING:
        return "NodeMissing";
    case KUBE_NODE_CORDONED:
        return "NodeUnschedulable";
    case KUBE_NODE_TAINTED:
        return kube_taint_is_not_ready(t) ? "NodeNotReady" : "NodeTainted";
    default:
        break;
    }
    if (!plugin_node_resources_fits(pi, ni))
        return "Insufficient";
    return NULL;
}

/* 1 when the pod waits for a node: pending (not bound, terminal or
 * deleting) with PodScheduled=False, reason Unschedulable. */
static int waiting(const kube_pod *pod)
{
    const kube_pod_condition *c = kube_pod_condition_get(pod, "PodScheduled");
    return !*pod->node_name && !pod->base.meta.deleting && !kube_pod_is_terminal(pod) && c &&
           strcmp(c->status, "False") == 0 && strcmp(c->reason, "Unschedulable") == 0;
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
    unready *u = kube_strmap_get(&t->unready, pin);
    t->vms[label_index(node_labels, N_NODE_LABELS, label)]++;
    kube_object_unref(node);
    if (!strcmp(label, "Ready") || !strcmp(label, "SchedulingDisabled"))
        return;
    if (!u && (u = calloc(1, sizeof(*u))) &&
        kube_strmap_put(&t->unready, pin, u, NULL) != KUBE_OK) {
        free(u);
        u = NULL;
    }
    if (u) {
        u->status = label;
        u->vms++;
    }
}

/* kube_strmap_foreach() callback: one series of a node not Ready. */
static void add_series(void *ud, const char *node, void *value)
{
    series *s = ud;
    unready *u = value;
    s->values[2 * s->n] = node;
    s->values[2 * s->n + 1] = u->status;
    s->v[s->n++] = u->vms;
}

static void free_unready(void *ud, const char *key, void *value)
{
    free(value);
}

/* stickyvm_pinned_vms_on_unready_node: one series per node not Ready that
 * VMs are pinned to, none for the others (nothing on a healthy cluster). */
static void set_unready(tally *t)
{
    size_t n = kube_strmap_len(&t->unready);
    series s = {calloc(2 * n + 1, sizeof(char *)), calloc(n + 1, sizeof(double)), 0};
    if (s.values && s.v) {
        kube_strmap_foreach(&t->unready, add_series, &s);
        kube_metric_replace(t->ps->on_unready, s.values, s.v, s.n);
    }
    free(s.values);
    free(s.v);
    kube_strmap_foreach(&t->unready, free_unready, NULL);
    kube_strmap_free(&t->unready);
}

/* The node the VM of VMI ns/name (its controller, else the same name) is
 * pinned to, copied (caller frees), or NULL when it is not pinned. */
static char *vmi_pin(const sched_pins_status *ps, const char *ns, const char *name)
{
    kube_object *vmi = kube_lister_get(ps->vmis, ns, name);
    const kube_owner_ref *o = vmi ? stickyvm_vm_owner(&vmi->meta) : NULL;
    kube_object *vm = kube_lister_get(ps->vms, ns, o ? o->name : name);
    const char *pin = vm ? kube_pin_get(kube_vm_from(vm), ps->key) : NULL;
    char *copy = pin ? kube_strdup(pin) : NULL;
    kube_object_unref(vm);
    kube_object_unref(vmi);
    return copy;
}

/* The info of node name (its pods added later) unless known or missing. */
static void want_node_info(tally *t, const char *name)
{
    kube_object *node =
        kube_strmap_get(&t->infos, name) ? NULL : kube_lister_get(t->ps->nodes, "", name);
    fw_node_info *ni = node ? fw_node_info_new() : NULL;
    if (ni && (fw_node_info_set_node(ni, (kube_node *)kube_node_from(node)) != KUBE_OK ||
               kube_strmap_put(&t->infos, name, ni, NULL) != KUBE_OK))
        fw_node_info_free(ni);
    kube_object_unref(node);
}

/* kube_lister_foreach() callback: keeps a waiting pod of a pinned VM. */
static void collect_waiter(void *ud, kube_object *obj)
{
    tally *t = ud;
    kube_pod *pod = (kube_pod *)kube_pod_from(obj);
    const kube_owner_ref *ref = pod ? stickyvm_vmi_owner(&obj->meta) : NULL;
    char *node = ref && waiting(pod) ? vmi_pin(t->ps, obj->meta.namespace_, ref->name) : NULL;
    waiter w = {NULL, node};
    if (!node || KUBE_ARRAY_RESERVE(t->waiters, t->cap_waiters, t->n_waiters + 1) != KUBE_OK ||
        fw_pod_info_new(pod, &w.pi) != KUBE_OK) {
        free(node);
        return;
    }
    t->waiters[t->n_waiters++] = w;
    want_node_info(t, node);
}

/* kube_lister_foreach() callback: a pod bound to a waiter's node counts
 * there, as in the scheduler's cache (the informer lists no terminal pod). */
static void add_bound_pod(void *ud, kube_object *obj)
{
    tally *t = ud;
    kube_pod *pod = (kube_pod *)kube_pod_from(obj);
    fw_node_info *ni = pod && *pod->node_name ? kube_strmap_get(&t->infos, pod->node_name) : NULL;
    fw_pod_info *pi = NULL;
    if (ni && !kube_pod_is_terminal(pod) && fw_pod_info_new(pod, &pi) == KUBE_OK)
        fw_node_info_add_pod(ni, pi);
    fw_pod_info_unref(pi);
}

static void free_info(void *ud, const char *key, void *value)
{
    fw_node_info_free(value);
}

/* Counts the waiters by why their node refuses them, and frees them. */
static void count_waiters(tally *t)
{
    if (kube_strmap_len(&t->infos))
        kube_lister_foreach(t->ps->pods, add_bound_pod, t);
    for (size_t i = 0; i < t->n_waiters; i++) {
        const char *why =
            node_refusal(t->waiters[i].pi, kube_strmap_get(&t->infos, t->waiters[i].node));
        if (why)
            t->pods[label_index(wait_labels, N_WAIT_LABELS, why)]++;
        fw_pod_info_unref(t->waiters[i].pi);
        free(t->waiters[i].node);
    }
    free(t->waiters);
    kube_strmap_foreach(&t->infos, free_info, NULL);
    kube_strmap_free(&t->infos);
}

static void set_all(kube_metric *m, const char *const *labels, const double *v, size_t n)
{
    for (size_t i = 0; m && i < n; i++) {
        const char *values[] = {labels[i]};
        kube_metric_set(m, values, v[i]);
    }
}

void sched_pins_status_refresh(sched_pins_status *ps)
{
    tally t = {.ps = ps};
    kube_lister_foreach(ps->vms, count_vm, &t);
    kube_lister_foreach(ps->pods, collect_waiter, &t);
    count_waiters(&t);
    set_all(ps->vms_by_node, node_labels, t.vms, N_NODE_LABELS);
    set_all(ps->pods_waiting, wait_labels, t.pods, N_WAIT_LABELS);
    set_unready(&t);
}

static void register_metrics(sched_pins_status *ps, kube_metrics *r)
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
    static const char *const node_and_status[] = {"node", "node_status"};
    kube_metric_opts u = {.name = "stickyvm_pinned_vms_on_unready_node",
                          .help = "VirtualMachines pinned to a node that is not Ready, by node "
                                  "and its status (NotReady, Unknown, Missing); no series for "
                                  "Ready nodes.",
                          .type = KUBE_METRIC_GAUGE,
                          .labels = node_and_status,
                          .n_labels = 2};
    if (!r)
        return;
    ps->vms_by_node = kube_metrics_ensure(r, &v);
    ps->pods_waiting = kube_metrics_ensure(r, &p);
    ps->on_unready = kube_metrics_ensure(r, &u);
}

static int get_lister(kube_factory *f, const kube_resource *res, const kube_codec *codec,
                      kube_lister **out)
{
    kube_informer_options o = {.resource = res, .codec = codec};
    return kube_factory_lister(f, &o, out);
}

int sched_pins_status_new(kube_factory *informers, kube_lister *pods, const char *key,
                          kube_metrics *registry, sched_pins_status **out)
{
    *out = NULL;
    if (!informers || !pods || !key)
        return KUBE_EINVAL;
    sched_pins_status *ps = calloc(1, sizeof(*ps));
    if (!ps || !(ps->key = kube_strdup(key))) {
        sched_pins_status_free(ps);
        return KUBE_ENOMEM;
    }
    ps->pods = pods;
    int rc = get_lister(informers, &KUBE_RES_VMS, &kube_vm_codec, &ps->vms);
    if (rc == KUBE_OK)
        rc = get_lister(informers, &KUBE_RES_VMIS, &kube_vmi_codec, &ps->vmis);
    if (rc == KUBE_OK)
        rc = get_lister(informers, &KUBE_RES_NODES, &kube_node_codec, &ps->nodes);
    if (rc != KUBE_OK) {
        sched_pins_status_free(ps);
        return rc;
    }
    register_metrics(ps, registry);
    tally zero = {.ps = ps};
    set_all(ps->vms_by_node, node_labels, zero.vms, N_NODE_LABELS);
    set_all(ps->pods_waiting, wait_labels, zero.pods, N_WAIT_LABELS);
    *out = ps;
    return KUBE_OK;
}

void sched_pins_status_free(sched_pins_status *ps)
{
    if (!ps)
        return;
    free(ps->key);
    free(ps);
}
