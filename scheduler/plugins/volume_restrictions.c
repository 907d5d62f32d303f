/*
 * scheduler/plugins/volume_restrictions.c - VolumeRestrictions
 * (kube-scheduler v1.28 pkg/scheduler/framework/plugins/volumerestrictions).
 *
 * Filter: a pod's GCE PD, AWS EBS, iSCSI or RBD volume conflicts with the
 * same disk already used by a pod on the node (GCE PD and iSCSI unless both
 * are read-only, AWS EBS always, RBD when the monitors overlap and pool and
 * image match, unless both are read-only): Unschedulable "node(s) had no
 * available disk".
 * ReadWriteOncePod: PreFilter finds the pod's claims with that access mode
 * (a missing claim is UnschedulableAndUnresolvable) and counts those
 * already used by a scheduled pod (the snapshot's PVC references); Filter
 * then rejects every node (Unschedulable "node has pod using
 * PersistentVolumeClaim with the same name and ReadWriteOncePod access
 * mode") while the count is positive, so preemption can free the claim
 * (AddPod/RemovePod adjust the count). PreFilter skips the plugin when the
 * pod has no such disk volume and no conflicting claim.
 */
#include <stdlib.h>
#include <string.h>

#include "feature_gates.h"
#include "kube/util/errors.h"
#include "kube/types/pod.h"
#include "kube/types/storage.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"
#include "plugins/volumebinding/volume_binding.h"

#define NAME "VolumeRestrictions"
#define STATE_KEY "PreFilter" NAME
#define ERR_DISK_CONFLICT "node(s) had no available disk"
#define ERR_RWOP_CONFLICT \
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"

typedef struct volume_restrictions {
    fw_handle *h;
    plugin_vol_listers *l;
} volume_restrictions;

/* preFilterState: the pod's ReadWriteOncePod claim names (borrowed from
 * the pod, which outlives the cycle) and how many scheduled pods use them. */
typedef struct vr_state {
    const char **rwop;
    size_t n_rwop;
    int conflicts;
} vr_state;

static void state_free(void *data)
{
    vr_state *s = data;
    if (!s)
        return;
    free(s->rwop);
    free(s);
}

static void *state_clone(const void *data)
{
    const vr_state *s = data;
    vr_state *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    *c = *s;
    c->rwop = s->n_rwop ? malloc(s->n_rwop * sizeof(*c->rwop)) : NULL;
    if (s->n_rwop && !c->rwop) {
        free(c);
        return NULL;
    }
    if (s->n_rwop)
        memcpy(c->rwop, s->rwop, s->n_rwop * sizeof(*c->rwop));
    return c;
}

static const fw_state_ops state_ops = {state_clone, state_free};

/* ---- disk conflicts ---- */

static int needs_check(const kube_volume *v)
{
    return v->type == KUBE_VOL_GCE_PD || v->type == KUBE_VOL_AWS_EBS || v->type == KUBE_VOL_RBD ||
           v->type == KUBE_VOL_ISCSI;
}

static int have_overlap(const kube_volume_disk *a, const kube_volume_disk *b)
{
    for (size_t i = 0; i < a->n_monitors; i++)
        for (size_t j = 0; j < b->n_monitors; j++)
            if (strcmp(a->monitors[i], b->monitors[j]) == 0)
                return 1;
    return 0;
}

static int same_disk(const kube_volume *v, const kube_volume *e)
{
    int both_ro = v->read_only && e->read_only;

    switch (v->type) {
    case KUBE_VOL_GCE_PD:
    case KUBE_VOL_ISCSI:
        return strcmp(v->id, e->id) == 0 && !both_ro;
    case KUBE_VOL_AWS_EBS:
        return strcmp(v->id, e->id) == 0;
    case KUBE_VOL_RBD:
        return have_overlap(v->disk, e->disk) && strcmp(v->disk->pool, e->disk->pool) == 0 &&
               strcmp(v->id, e->id) == 0 && !both_ro;
    default:
        return 0;
    }
}

/* isVolumeConflict */
static int volume_conflicts(const kube_volume *v, const kube_pod *existing)
{
    for (size_t i = 0; i < existing->n_volumes; i++)
        if (existing->volumes[i].type == v->type && same_disk(v, &existing->volumes[i]))
            return 1;
    return 0;
}

/* satisfyVolumeConflicts */
static int disks_fit(const kube_pod *pod, const fw_node_info *ni)
{
    for (size_t i = 0; i < pod->n_volumes; i++) {
        if (!needs_check(&pod->volumes[i]))
            continue;
        for (size_t j = 0; j < ni->n_pods; j++)
            if (volume_conflicts(&pod->volumes[i], ni->pods[j]->pod))
                return 0;
    }
    return 1;
}

/* ---- ReadWriteOncePod ---- */

static int has_name(const char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0)
            return 1;
    return 0;
}

/* readWriteOncePodPVCsForPod into s->rwop (a set; empty with the
 * ReadWriteOncePod feature gate off). */
static fw_status *rwop_claims(volume_restrictions *pl, const kube_pod *pod, vr_state *s)
{
    if (!sched_feature_enabled(SCHED_FEATURE_READ_WRITE_ONCE_POD))
        return NULL;
    if (pod->n_volumes && !(s->rwop = calloc(pod->n_volumes, sizeof(*s->rwop))))
        return fw_status_error(KUBE_ENOMEM, NULL);
    for (size_t i = 0; i < pod->n_volumes; i++) {
        const kube_volume *v = &pod->volumes[i];
        kube_object *obj;
        const kube_pvc *pvc;
        if (v->type != KUBE_VOL_PVC)
            continue;
        obj = plugin_vol_listers_get(pl->l, PLUGIN_VOL_PVC, pod->base.meta.namespace_, v->id);
        if (!(pvc = kube_pvc_from(obj))) {
            kube_object_unref(obj);
            return fw_status_newf(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                  "persistentvolumeclaim \"%s\" not found", v->id);
        }
        if ((pvc->access_modes & KUBE_ACCESS_RWOP) && !has_name(s->rwop, s->n_rwop, v->id))
            s->rwop[s->n_rwop++] = v->id;
        kube_object_unref(obj);
    }
    return NULL;
}

/* The references pod makes to the state's claims (conflictingPVCRefCountForPod). */
static int refs_of(const vr_state *s, const kube_pod *pod)
{
    int n = 0;
    for (size_t i = 0; i < pod->n_volumes; i++)
        if (pod->volumes[i].type == KUBE_VOL_PVC &&
            has_name(s->rwop, s->n_rwop, pod->volumes[i].id))
            n++;
    return n;
}

/* StorageInfos().IsPVCUsedByPods: a scheduled pod of the snapshot uses
 * ns/claim. */
static int claim_used(const fw_snapshot *snap, const char *ns, const char *claim)
{
    for (size_t i = 0; snap && i < snap->n_list; i++) {
        const fw_node_info *ni = snap->list[i];
        for (size_t j = 0; j < ni->n_pods; j++) {
            const kube_pod *p = ni->pods[j]->pod;
            if (strcmp(p->base.meta.namespace_, ns) != 0)
                continue;
            for (size_t k = 0; k < p->n_volumes; k++)
                if (p->volumes[k].type == KUBE_VOL_PVC && strcmp(p->volumes[k].id, claim) == 0)
                    return 1;
        }
    }
    return 0;
}

static fw_status *pre_filter(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                             fw_pre_filter_result **result)
{
    volume_restrictions *pl = self;
    const kube_pod *p = pod->pod;
    vr_state *s = calloc(1, sizeof(*s));
    int check = 0;
    fw_status *st;

    if (!s)
        return fw_status_error(KUBE_ENOMEM, NULL);
    for (size_t i = 0; i < p->n_volumes && !check; i++)
        check = needs_check(&p->volumes[i]);
    if ((st = rwop_claims(pl, p, s))) {
        state_free(s);
        return st;
    }
    for (size_t i = 0; i < s->n_rwop; i++)
        s->conflicts += claim_used(pl->h->svc.snapshot, p->base.meta.namespace_, s->rwop[i]);
    if (!check && s->conflicts == 0) {
        state_free(s);
        return fw_status_new(FW_SKIP, NULL);
    }
    if (fw_cycle_state_write(cs, STATE_KEY, s, &state_ops) != KUBE_OK)
        return fw_status_error(KUBE_ENOMEM, NULL);
    return NULL;
}

static fw_status *update_with_pod(fw_cycle_state *cs, const fw_pod_info *other, int sign)
{
    vr_state *s = fw_cycle_state_read_static(cs, STATE_KEY);

    if (!s)
        return fw_status_error(KUBE_ENOTFOUND, "cannot read \"%s\" from cycleState", STATE_KEY);
    s->conflicts += sign * refs_of(s, other->pod);
    return NULL;
}

static fw_status *add_pod(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                          const fw_pod_info *pod_to_add, const fw_node_info *ni)
{
    return update_with_pod(cs, pod_to_add, 1);
}

static fw_status *remove_pod(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                             const fw_pod_info *pod_to_remove, const fw_node_info *ni)
{
    return update_with_pod(cs, pod_to_remove, -1);
}

static fw_status *filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *ni)
{
    const vr_state *s;

    if (!disks_fit(pod->pod, ni))
        return fw_status_new(FW_UNSCHEDULABLE, ERR_DISK_CONFLICT);
    if (!(s = fw_cycle_state_read_static(cs, STATE_KEY)))
        return fw_status_error(KUBE_ENOTFOUND, "cannot read \"%s\" from cycleState", STATE_KEY);
    if (s->conflicts > 0)
        return fw_status_new(FW_UNSCHEDULABLE, ERR_RWOP_CONFLICT);
    return NULL;
}

static const fw_cluster_event_with_hint events[] = {
    {{FW_GVK_POD, FW_ACT_DELETE, ""}, NULL},
    {{FW_GVK_NODE, FW_ACT_ADD, ""}, NULL},
    {{FW_GVK_PVC, FW_ACT_ADD | FW_ACT_UPDATE, ""}, NULL},
};

PLUGIN_EVENTS_TO_REGISTER(events)

static void destroy(void *self)
{
    volume_restrictions *pl = self;
    if (!pl)
        return;
    plugin_vol_listers_release(pl->l);
    free(pl);
}

int plugin_volume_restrictions_new(const cJSON *args, fw_handle *h, plugin_vol_listers *l,
                                   void **self, char *err, size_t errlen)
{
    volume_restrictions *pl = calloc(1, sizeof(*pl));

    *self = pl;
    if (!pl)
        return KUBE_ENOMEM;
    pl->h = h;
    pl->l = plugin_vol_listers_ref(l);
    return KUBE_OK;
}

static int create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                  size_t errlen)
{
    return plugin_vol_create(args, h, plugin_volume_restrictions_new, self, err, errlen);
}

const fw_plugin_desc plugin_volume_restrictions = {
    .name = NAME,
    .create = create,
    .destroy = destroy,
    .pre_filter = pre_filter,
    .pre_filter_add_pod = add_pod,
    .pre_filter_remove_pod = remove_pod,
    .filter = filter,
    .events_to_register = events_to_register,
};
