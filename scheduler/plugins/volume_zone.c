/*
 * scheduler/plugins/volume_zone.c - VolumeZone (kube-scheduler v1.28
 * pkg/scheduler/framework/plugins/volumezone).
 *
 * PreFilter: for each persistentVolumeClaim volume, the bound PV's zone and
 * region labels (failure-domain.beta.kubernetes.io/{zone,region},
 * topology.kubernetes.io/{zone,region}; a value may list zones separated
 * by "__"). An unbound claim of a WaitForFirstConsumer class is skipped;
 * other unbound claims, missing claims, classes and PVs are
 * UnschedulableAndUnresolvable. No labels found: the plugin is skipped.
 * Filter: a node without any of those labels fits (single-zone clusters);
 * otherwise each PV label must be matched by the node's label of the same
 * key (or, for a beta key, its GA key): UnschedulableAndUnresolvable
 * "node(s) had no available volume zone".
 */
#include <ctype.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/array.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/types/pod.h"
#include "kube/types/storage.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"
#include "plugins/volumebinding/volume_binding.h"

#define NAME "VolumeZone"
#define STATE_KEY "PreFilter" NAME
#define ERR_CONFLICT "node(s) had no available volume zone"
#define BETA_ZONE "failure-domain.beta.kubernetes.io/zone"
#define BETA_REGION "failure-domain.beta.kubernetes.io/region"
#define GA_ZONE "topology.kubernetes.io/zone"
#define GA_REGION "topology.kubernetes.io/region"
#define MAX_VALUES 64

static const char *const topology_labels[] = {BETA_ZONE, BETA_REGION, GA_ZONE, GA_REGION};
#define N_LABELS (sizeof(topology_labels) / sizeof(topology_labels[0]))

typedef struct volume_zone {
    plugin_vol_listers *l;
} volume_zone;

/* One pvTopology: a PV's label key (static) and its set of values. */
typedef struct pv_topology {
    const char *key;
    char *values[MAX_VALUES];
    size_t n;
} pv_topology;

typedef struct vz_state {
    fw_shared shared; /* first: the clones share the state (fw_shared_ops) */
    pv_topology *t;
    size_t n, cap;
} vz_state;

/* Frees the state once its last reference is gone (fw_shared.release). */
static void state_release(void *data)
{
    vz_state *s = data;
    for (size_t i = 0; i < s->n; i++)
        for (size_t j = 0; j < s->t[i].n; j++)
            free(s->t[i].values[j]);
    free(s->t);
    free(s);
}

static const char *ga_label(const char *key)
{
    if (strcmp(key, BETA_REGION) == 0)
        return GA_REGION;
    if (strcmp(key, BETA_ZONE) == 0)
        return GA_ZONE;
    return key;
}

/* volumehelpers.LabelZonesToSet into t; 0 when an element is empty (the
 * label is then ignored). */
static int zones_to_set(const char *value, pv_topology *t)
{
    const char *p = value;

    for (;;) {
        const char *end = strstr(p, "__");
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len && isspace((unsigned char)*p)) {
            p++;
            len--;
        }
        while (len && isspace((unsigned char)p[len - 1]))
            len--;
        if (len == 0 || t->n == MAX_VALUES)
            return 0;
        if (!(t->values[t->n] = strndup(p, len)))
            return -1;
        t->n++;
        if (!end)
            return 1;
        p = end + 2;
    }
}

static int add_topology(vz_state *s, const char *key, const char *value)
{
    pv_topology t = {key, {NULL}, 0};
    int ok = zones_to_set(value, &t);

    if (ok <= 0) {
        for (size_t i = 0; i < t.n; i++)
            free(t.values[i]);
        if (ok == 0)
            KLOG_INFO("Failed to parse label, ignoring the label label=\"%s:%s\"", key, value);
        return ok < 0 ? KUBE_ENOMEM : KUBE_OK;
    }
    if (KUBE_ARRAY_RESERVE(s->t, s->cap, s->n + 1) != KUBE_OK) {
        for (size_t i = 0; i < t.n; i++)
            free(t.values[i]);
        return KUBE_ENOMEM;
    }
    s->t[s->n++] = t;
    return KUBE_OK;
}

/* The PV of one claim, or a status (an unbound WaitForFirstConsumer claim
 * gives neither: *pv_obj NULL). */
static fw_status *claim_pv(volume_zone *pl, const char *ns, const char *claim, kube_object **pv_obj)
{
    kube_object *pvc_obj = plugin_vol_listers_get(pl->l, PLUGIN_VOL_PVC, ns, claim);
    const kube_pvc *pvc = kube_pvc_from(pvc_obj);
    fw_status *st = NULL;

    *pv_obj = NULL;
    if (!pvc)
        return fw_status_newf(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                              "persistentvolumeclaim \"%s\" not found", claim);
    if (pvc->volume_name[0]) {
        if (!(*pv_obj = plugin_vol_listers_get(pl->l, PLUGIN_VOL_PV, "", pvc->volume_name)))
            st = fw_status_newf(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                "persistentvolume \"%s\" not found", pvc->volume_name);
        kube_object_unref(pvc_obj);
        return st;
    }
    const char *cls = kube_pvc_class(pvc);
    kube_object *sc_obj = cls[0] ? plugin_vol_listers_get(pl->l, PLUGIN_VOL_SC, "", cls) : NULL;
    const kube_storage_class *sc = kube_storage_class_from(sc_obj);
    if (!cls[0])
        st = fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                           "PersistentVolumeClaim had no pv name and storageClass name");
    else if (!sc)
        st = fw_status_newf(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                            "storageclass.storage.k8s.io \"%s\" not found", cls);
    else if (sc->binding_mode == KUBE_BINDING_UNSET)
        st = fw_status_newf(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                            "VolumeBindingMode not set for StorageClass \"%s\"", cls);
    else if (sc->binding_mode != KUBE_BINDING_WAIT_FOR_FIRST_CONSUMER)
        st = fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolume had no name");
    kube_object_unref(sc_obj);
    kube_object_unref(pvc_obj);
    return st;
}

/* getPVbyPod */
static fw_status *pv_topologies(volume_zone *pl, const kube_pod *pod, vz_state *s)
{
    for (size_t i = 0; i < pod->n_volumes; i++) {
        const kube_volume *v = &pod->volumes[i];
        kube_object *pv;
        fw_status *st;
        int rc = KUBE_OK;
        if (v->type != KUBE_VOL_PVC)
            continue;
        if (!v->id[0])
            return fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                 "PersistentVolumeClaim had no name");
        if ((st = claim_pv(pl, pod->base.meta.namespace_, v->id, &pv)))
            return st;
        for (size_t k = 0; pv && k < N_LABELS && rc == KUBE_OK; k++) {
            const char *val = kube_meta_label(&pv->meta, topology_labels[k]);
            if (val)
                rc = add_topology(s, topology_labels[k], val);
        }
        kube_object_unref(pv);
        if (rc != KUBE_OK)
            return fw_status_error(rc, NULL);
    }
    return NULL;
}

static vz_state *state_new(void)
{
    vz_state *s = calloc(1, sizeof(*s));
    if (s)
        fw_shared_init(&s->shared, state_release);
    return s;
}

static fw_status *pre_filter(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                             fw_pre_filter_result **result)
{
    vz_state *s = state_new();
    fw_status *st;

    if (!s)
        return fw_status_error(KUBE_ENOMEM, NULL);
    if ((st = pv_topologies(self, pod->pod, s)) || s->n == 0) {
        fw_shared_unref(s);
        return st ? st : fw_status_new(FW_SKIP, NULL);
    }
    if (fw_cycle_state_write(cs, STATE_KEY, s, &fw_shared_ops) != KUBE_OK)
        return fw_status_error(KUBE_ENOMEM, NULL);
    return NULL;
}

static int has_value(const pv_topology *t, const char *v)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->values[i], v) == 0)
            return 1;
    return 0;
}

static fw_status *check_node(const vz_state *s, const kube_node *node)
{
    const kube_meta *m = &node->base.meta;
    int constrained = 0;

    for (size_t k = 0; k < N_LABELS && !constrained; k++)
        constrained = kube_meta_label(m, topology_labels[k]) != NULL;
    if (!constrained)
        return NULL;
    for (size_t i = 0; i < s->n; i++) {
        const char *v = kube_meta_label(m, s->t[i].key);
        if (!v)
            v = kube_meta_label(m, ga_label(s->t[i].key));
        if (!v || !has_value(&s->t[i], v))
            return fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_CONFLICT);
    }
    return NULL;
}

static fw_status *filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *ni)
{
    vz_state *s;
    fw_status *st;

    if (pod->pod->n_volumes == 0)
        return NULL;
    if (!ni->node)
        return fw_status_new(FW_ERROR, "node not found");
    if ((s = fw_cycle_state_read_static(cs, STATE_KEY)))
        return check_node(s, ni->node);
    /* no state (PreFilter not run): compute it here, as upstream does */
    if (!(s = state_new()))
        return fw_status_error(KUBE_ENOMEM, NULL);
    if (!(st = pv_topologies(self, pod->pod, s)))
        st = check_node(s, ni->node);
    fw_shared_unref(s);
    return st;
}

static const fw_cluster_event_with_hint events[] = {
    {{FW_GVK_STORAGE_CLASS, FW_ACT_ADD, ""}, NULL},
    {{FW_GVK_NODE, FW_ACT_ADD | FW_ACT_UPDATE_NODE_LABEL | FW_ACT_UPDATE_NODE_TAINT, ""}, NULL},
    {{FW_GVK_PVC, FW_ACT_ADD | FW_ACT_UPDATE, ""}, NULL},
    {{FW_GVK_PV, FW_ACT_ADD | FW_ACT_UPDATE, ""}, NULL},
};

PLUGIN_EVENTS_TO_REGISTER(events)

static void destroy(void *self)
{
    volume_zone *pl = self;
    if (!pl)
        return;
    plugin_vol_listers_release(pl->l);
    free(pl);
}

int plugin_volume_zone_new(const cJSON *args, fw_handle *h, plugin_vol_listers *l, void **self,
                           char *err, size_t errlen)
{
    volume_zone *pl = calloc(1, sizeof(*pl));

    *self = pl;
    if (!pl)
        return KUBE_ENOMEM;
    pl->l = plugin_vol_listers_ref(l);
    return KUBE_OK;
}

static int create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                  size_t errlen)
{
    return plugin_vol_create(args, h, plugin_volume_zone_new, self, err, errlen);
}

const fw_plugin_desc plugin_volume_zone = {
    .name = NAME,
    .create = create,
    .destroy = destroy,
    .pre_filter = pre_filter,
    .filter = filter,
    .events_to_register = events_to_register,
};
