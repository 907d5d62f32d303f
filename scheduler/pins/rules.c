/*
 * scheduler/pins/rules.c - the pin controller's rules (see pins/controller.h),
 * pure over cached objects: which completed live migration a pin follows,
 * which launcher pod is the VM's current placement, and whether that
 * placement is newer than the VM's last pin decision. Decisions and
 * placements are ordered by identity (the pod and migration UIDs a
 * decision recorded, kube/types/pin.h), never by comparing clocks.
 */
#include <string.h>
#include <time.h>

#include "kube/util/buf.h"
#include "pins/launcher_index.h"
#include "pins/controller.h"
#include "plugins/stickyvm/stickyvm.h"

/* vmi's migration when it completed without failure where the VMI runs. */
static const kube_vmi_migration_state *completed_migration(const kube_vmi *vmi)
{
    const kube_vmi_migration_state *m = vmi ? vmi->migration : NULL;
    if (!m || !m->completed || m->failed || !*m->target_node || !*m->source_node ||
        !*m->migration_uid || strcmp(m->target_node, vmi->node_name) != 0)
        return NULL;
    return m;
}

int sched_pins_migration_due(const kube_vm *vm, const char *key, const char *source,
                             const char *uid)
{
    const char *pin = kube_pin_get(vm, key), *followed = kube_pin_followed(vm);
    const char *seen = kube_pin_seen_migration(vm);
    return pin && strcmp(pin, source) == 0 && !(followed && strcmp(followed, uid) == 0) &&
           !(seen && strcmp(seen, uid) == 0);
}

const char *sched_pins_migration_target(const kube_vmi *vmi, const kube_vm *vm, const char *key)
{
    const kube_vmi_migration_state *m = completed_migration(vmi);
    if (!m || strcmp(m->source_node, m->target_node) == 0 ||
        !sched_pins_migration_due(vm, key, m->source_node, m->migration_uid))
        return NULL;
    return m->target_node;
}

int sched_pins_first_pin_due(const kube_vm *vm, const char *key, const char *pod_uid)
{
    if (!vm || !pod_uid || !*pod_uid || kube_pin_get(vm, key))
        return 0;
    return kube_pin_saw_pod(vm, pod_uid) == 0;
}

/* Whether pod's spec.schedulerName is one of names (n). */
static int ours(const char *const *names, size_t n, const kube_pod *pod)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(pod->scheduler_name, names[i]) == 0)
            return 1;
    return 0;
}

/* The scan of one VMI's launcher pods. */
typedef struct scan {
    const char *const *names;
    size_t n_names;
    const kube_vmi *vmi;
    sched_pins_placement *out;
} scan;

static int64_t bind_time_s(const kube_pod *pod)
{
    const kube_pod_condition *cond = kube_pod_condition_get(pod, "PodScheduled");
    return cond && strcmp(cond->status, "True") == 0 ? cond->last_transition_us / 1000000 : 0;
}

/* Whether pod could be the VMI's current placement: a live, bound pod of
 * ours controlled by the VMI (by uid); a migration target only once the
 * migration completed onto its node. */
static int candidate(const scan *s, const kube_object *obj, const kube_pod *pod)
{
    const kube_object *v = &s->vmi->base;
    const kube_owner_ref *ref = stickyvm_vmi_owner(&obj->meta);
    if (!ref || strcmp(obj->meta.namespace_, v->meta.namespace_) != 0 ||
        strcmp(ref->name, v->meta.name) != 0 ||
        (ref->uid && *ref->uid && strcmp(ref->uid, v->meta.uid) != 0))
        return 0;
    if (!*pod->node_name || obj->meta.deleting || kube_pod_is_terminal(pod) ||
        !ours(s->names, s->n_names, pod))
        return 0;
    const kube_vmi_migration_state *m = completed_migration(s->vmi);
    return !kube_pod_is_migration_target(pod) || (m && strcmp(pod->node_name, m->target_node) == 0);
}

/* kube_lister_foreach() callback: the pod on the VMI's status.nodeName
 * wins; without one, the first non-target pod. */
static void scan_one(void *ud, kube_object *obj)
{
    scan *s = ud;
    sched_pins_placement *p = s->out;
    const kube_pod *pod = kube_pod_from(obj);
    if (!pod || !candidate(s, obj, pod))
        return;
    int on_vmi_node = *s->vmi->node_name && strcmp(pod->node_name, s->vmi->node_name) == 0;
    if (*s->vmi->node_name ? !on_vmi_node || p->on_vmi_node
                           : p->found || kube_pod_is_migration_target(pod))
        return;
    kube_strlcpy(p->node, pod->node_name, sizeof(p->node));
    kube_strlcpy(p->pod_uid, obj->meta.uid ? obj->meta.uid : "", sizeof(p->pod_uid));
    p->bind_s = bind_time_s(pod);
    p->on_vmi_node = on_vmi_node;
    p->found = 1;
}

void sched_pins_placement_find(kube_lister *pods, const char *const *names, size_t n_names,
                               const kube_object *vmi, sched_pins_placement *out)
{
    scan s = {names, n_names, kube_vmi_from(vmi), out};
    memset(out, 0, sizeof(*out));
    if (s.vmi) /* the VMI's pods by index, not every pod of the cluster */
        sched_pins_launchers_foreach(pods, vmi->meta.namespace_, vmi->meta.name, scan_one, &s);
}

int64_t sched_pins_settle_ms(int64_t bind_s)
{
    int64_t left = bind_s + SCHED_PINS_SETTLE_S - (int64_t)time(NULL);
    if (bind_s <= 0 || left <= 0 || left > SCHED_PINS_SETTLE_S)
        return 0;
    return left * 1000;
}
