/*
 * scheduler/plugins/nodevolumelimits/non_csi.c - EBSLimits, GCEPDLimits and
 * AzureDiskLimits (kube-scheduler v1.28 pkg/scheduler/framework/plugins/
 * nodevolumelimits/non_csi.go): one implementation, parameterised by the
 * kinds[] table (the volume source, the in-tree plugin name, the node's
 * allocatable key and the default limit).
 *
 * PreFilter: Skip unless the pod has a volume of the plugin's kind, a
 * persistentVolumeClaim or a generic ephemeral volume.
 * Filter: the unique volumes of the kind that the pod uses (inline, or
 * through a claim bound to a PV of the kind; a claim that is unbound or
 * whose PV is missing counts as "<random>-<ns>/<claim>" when its
 * spec.storageClassName names a class whose provisioner is the in-tree
 * plugin), plus those of the pods on the node, must not exceed the node's
 * limit: allocatable "attachable-volumes-<kind>" when set, else
 * $KUBE_MAX_PD_VOLS (read once at creation) when positive, else the
 * default (EBS 39, or 25 on Nitro instance types; GCE PD 16; Azure Disk
 * 16). Over it: Unschedulable "node(s) exceed max volume count". A missing
 * claim of the new pod, a claim without a name and an ephemeral claim the
 * pod does not own are errors (upstream's AsStatus).
 *
 * CSI migration: isCSIMigrationOn is true in v1.28 for these three plugins
 * whenever the node has a CSINode (the feature gates are gone; the
 * storage.alpha.kubernetes.io/migrated-plugins annotation is not consulted
 * for them). The plugin then passes and NodeVolumeLimits counts the
 * volumes as their CSI drivers.
 *
 * Threads: Filter runs concurrently; self is read-only after create.
 */
#include <openssl/rand.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/array.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "kube/types/storage.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"
#include "plugins/volumebinding/volume_binding.h"

#define ERR_MAX_VOLUMES "node(s) exceed max volume count"
#define ENV_MAX_PD_VOLS "KUBE_MAX_PD_VOLS"
#define PREFIX_LEN 32

/* One in-tree volume type (non_csi.go's VolumeFilter and limits). */
typedef struct limits_kind {
    const fw_plugin_desc *desc;
    kube_volume_type vol;  /* the pod volume source */
    kube_pv_source pv;     /* the PV source */
    const char *in_tree;   /* provisioner / in-tree plugin name */
    const char *limit_key; /* node allocatable key */
    int64_t default_max;
    int64_t nitro_max; /* the limit on Nitro instance types, 0: not applicable */
} limits_kind;

static const limits_kind kinds[] = {
    {&plugin_ebs_limits, KUBE_VOL_AWS_EBS, KUBE_PV_AWS_EBS, "kubernetes.io/aws-ebs",
     "attachable-volumes-aws-ebs", 39, 25},
    {&plugin_gce_pd_limits, KUBE_VOL_GCE_PD, KUBE_PV_GCE_PD, "kubernetes.io/gce-pd",
     "attachable-volumes-gce-pd", 16, 0},
    {&plugin_azure_disk_limits, KUBE_VOL_AZURE_DISK, KUBE_PV_AZURE_DISK, "kubernetes.io/azure-disk",
     "attachable-volumes-azure-disk", 16, 0},
};
#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

typedef struct non_csi_limits {
    const limits_kind *kind;
    plugin_vol_listers *l;
    int64_t env_max; /* KUBE_MAX_PD_VOLS, 0 when unset or invalid */
    char random_prefix[PREFIX_LEN + 1];
} non_csi_limits;

/* ---- sets of volume ids ---- */

/* Unique ids, each an owned copy. */
typedef struct id_set {
    char **v;
    size_t n, cap;
} id_set;

/* 1 when s holds id. */
static int set_has(const id_set *s, const char *id)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], id) == 0)
            return 1;
    return 0;
}

/* Adds a copy of id unless present. KUBE_OK or KUBE_ENOMEM. */
static int set_add(id_set *s, const char *id)
{
    if (set_has(s, id))
        return KUBE_OK;
    if (KUBE_ARRAY_RESERVE(s->v, s->cap, s->n + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    if (!(s->v[s->n] = kube_strdup(id)))
        return KUBE_ENOMEM;
    s->n++;
    return KUBE_OK;
}

/* Frees the ids and the array (s itself is the caller's). */
static void set_free(id_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
}

/* ---- counting a pod's volumes ---- */

/* matchProvisioner: the claim's spec.storageClassName names a class whose
 * provisioner is the kind's in-tree plugin. */
static int match_provisioner(const non_csi_limits *pl, const kube_pvc *pvc)
{
    kube_object *obj;
    const kube_storage_class *sc;
    int match;

    if (!pvc->storage_class[0])
        return 0;
    obj = plugin_vol_listers_get(pl->l, PLUGIN_VOL_SC, "", pvc->storage_class);
    sc = kube_storage_class_from(obj);
    match = sc && strcmp(sc->provisioner, pl->kind->in_tree) == 0;
    kube_object_unref(obj);
    return match;
}

/* Adds the volume behind claim ns/name (pvc, borrowed) to out: its PV's id
 * when the PV is of the kind; the random id when the claim is unbound or
 * its PV is missing and its class is provisioned in-tree. */
static int add_claim_volume(const non_csi_limits *pl, const kube_pvc *pvc, const char *ns,
                            const char *name, id_set *out)
{
    kube_object *obj = pvc->volume_name[0]
                           ? plugin_vol_listers_get(pl->l, PLUGIN_VOL_PV, "", pvc->volume_name)
                           : NULL;
    const kube_pv *pv = kube_pv_from(obj);
    char id[1024];
    int rc = KUBE_OK;

    if (pv && pv->source == pl->kind->pv) {
        rc = set_add(out, pv->volume_handle);
    } else if (!pv && match_provisioner(pl, pvc)) {
        snprintf(id, sizeof(id), "%s-%s/%s", pl->random_prefix, ns, name);
        rc = set_add(out, id);
    }
    kube_object_unref(obj);
    return rc;
}

/* ephemeral.VolumeIsForPod: the claim is in the pod's namespace and its
 * controller is the pod. */
static int owned_by(const kube_object *pvc, const kube_pod *pod)
{
    const kube_owner_ref *o = kube_meta_controller(&pvc->meta);
    return strcmp(pvc->meta.namespace_, pod->base.meta.namespace_) == 0 && o && o->uid &&
           strcmp(o->uid, pod->base.meta.uid) == 0;
}

/* The claim volume v of pod into out. A missing claim is an error for the
 * new pod and skipped for a pod on the node. NULL or an FW_ERROR status
 * (caller frees). */
static fw_status *add_claim(const non_csi_limits *pl, const kube_pod *pod, const kube_volume *v,
                            int new_pod, id_set *out)
{
    const char *ns = pod->base.meta.namespace_;
    kube_object *obj;
    fw_status *st = NULL;
    int rc;

    if (!v->id[0])
        return fw_status_error(KUBE_EINVAL, "PersistentVolumeClaim had no name");
    if (!(obj = plugin_vol_listers_get(pl->l, PLUGIN_VOL_PVC, ns, v->id)))
        return new_pod ? fw_status_error(KUBE_ENOTFOUND,
                                         "looking up PVC %s/%s: "
                                         "persistentvolumeclaim \"%s\" not found",
                                         ns, v->id, v->id)
                       : NULL;
    if (v->type == KUBE_VOL_EPHEMERAL && !owned_by(obj, pod))
        st = fw_status_error(KUBE_EINVAL,
                             "PVC %s/%s was not created for pod %s/%s (pod is not "
                             "owner)",
                             ns, v->id, ns, pod->base.meta.name);
    else if ((rc = add_claim_volume(pl, kube_pvc_from(obj), ns, v->id, out)) != KUBE_OK)
        st = fw_status_error(rc, NULL);
    kube_object_unref(obj);
    return st;
}

/* filterVolumes: the pod's volumes of the kind into out. NULL or an
 * FW_ERROR status (caller frees). */
static fw_status *add_pod_volumes(const non_csi_limits *pl, const kube_pod *pod, int new_pod,
                                  id_set *out)
{
    for (size_t i = 0; i < pod->n_volumes; i++) {
        const kube_volume *v = &pod->volumes[i];
        fw_status *st = NULL;
        int rc;
        if (v->type == pl->kind->vol) {
            if ((rc = set_add(out, v->id)) != KUBE_OK)
                return fw_status_error(rc, NULL);
        } else if (v->type == KUBE_VOL_PVC || v->type == KUBE_VOL_EPHEMERAL) {
            if ((st = add_claim(pl, pod, v, new_pod, out)))
                return st;
        }
    }
    return NULL;
}

/* ---- the node's limit ---- */

/* EBSNitroLimitRegex "^[cmr]5.*|t3|z1d" (unanchored alternatives). */
static int is_nitro(const char *instance_type)
{
    return (instance_type[0] && strchr("cmr", instance_type[0]) && instance_type[1] == '5') ||
           strstr(instance_type, "t3") || strstr(instance_type, "z1d");
}

/* getMaxVolumeFunc: $KUBE_MAX_PD_VOLS, else the kind's default for the
 * node's instance type. */
static int64_t default_limit(const non_csi_limits *pl, const kube_node *node)
{
    const char *type = kube_meta_label(&node->base.meta, "node.kubernetes.io/instance-type");

    if (pl->env_max > 0)
        return pl->env_max;
    if (!type)
        type = kube_meta_label(&node->base.meta, "beta.kubernetes.io/instance-type");
    if (pl->kind->nitro_max && type && is_nitro(type))
        return pl->kind->nitro_max;
    return pl->kind->default_max;
}

/* The node's allocatable under the kind's key, else the default limit. */
static int64_t node_limit(const non_csi_limits *pl, const fw_node_info *ni)
{
    for (size_t i = 0; i < ni->allocatable.n_scalars; i++)
        if (strcmp(ni->allocatable.scalars[i].name, pl->kind->limit_key) == 0)
            return ni->allocatable.scalars[i].value;
    return default_limit(pl, ni->node);
}

/* isCSIMigrationOn for these plugins in v1.28: the node has a CSINode. */
static int migrated(const non_csi_limits *pl, const char *node_name)
{
    kube_object *cn = plugin_vol_listers_get(pl->l, PLUGIN_VOL_CSINODE, "", node_name);
    int on = kube_csi_node_from(cn) != NULL;

    kube_object_unref(cn);
    return on;
}

/* ---- plugin ---- */

/* PreFilter: Skip when the pod has no volume the Filter could count. */
static fw_status *pre_filter(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                             fw_pre_filter_result **result)
{
    const non_csi_limits *pl = self;
    const kube_pod *p = pod->pod;

    (void)cs;
    (void)result;
    for (size_t i = 0; i < p->n_volumes; i++) {
        kube_volume_type t = p->volumes[i].type;
        if (t == pl->kind->vol || t == KUBE_VOL_PVC || t == KUBE_VOL_EPHEMERAL)
            return NULL;
    }
    return fw_status_new(FW_SKIP, NULL);
}

/* The new pod's volumes fresh (non-empty) against the node's pods and
 * limit. NULL when they fit; caller frees the status. */
static fw_status *check_node(const non_csi_limits *pl, const fw_node_info *ni, const id_set *fresh)
{
    id_set existing = {0};
    fw_status *st = NULL;
    size_t added = 0;

    for (size_t i = 0; i < ni->n_pods && !st; i++)
        st = add_pod_volumes(pl, ni->pods[i]->pod, 0, &existing);
    for (size_t i = 0; i < fresh->n && !st; i++)
        added += !set_has(&existing, fresh->v[i]);
    if (!st && (int64_t)(existing.n + added) > node_limit(pl, ni))
        st = fw_status_new(FW_UNSCHEDULABLE, ERR_MAX_VOLUMES);
    set_free(&existing);
    return st;
}

/* Filter: NULL when the pod's volumes of the kind fit the node (or CSI
 * migration is on there); caller frees the status. */
static fw_status *filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *ni)
{
    const non_csi_limits *pl = self;
    id_set fresh = {0};
    fw_status *st;

    (void)cs;
    if (pod->pod->n_volumes == 0)
        return NULL;
    st = add_pod_volumes(pl, pod->pod, 1, &fresh);
    if (!st && fresh.n > 0) {
        if (!ni->node)
            st = fw_status_new(FW_ERROR, "node not found");
        else if (!migrated(pl, ni->name))
            st = check_node(pl, ni, &fresh);
    }
    set_free(&fresh);
    return st;
}

/* A node added or a pod deleted may make room (non_csi.go EventsToRegister). */
static const fw_cluster_event_with_hint events[] = {
    {{FW_GVK_NODE, FW_ACT_ADD, ""}, NULL},
    {{FW_GVK_POD, FW_ACT_DELETE, ""}, NULL},
};

PLUGIN_EVENTS_TO_REGISTER(events)

/* Releases the listers reference and frees self (NULL-safe). */
static void destroy(void *self)
{
    non_csi_limits *pl = self;

    if (!pl)
        return;
    plugin_vol_listers_release(pl->l);
    free(pl);
}

/* getMaxVolLimitFromEnv: a positive $KUBE_MAX_PD_VOLS, else 0 (an invalid
 * value is logged and ignored). */
static int64_t env_limit(void)
{
    const char *raw = getenv(ENV_MAX_PD_VOLS);
    int64_t v;

    if (!raw || !*raw)
        return 0;
    if (kube_parse_int64(raw, 1, INT64_MAX, &v) == KUBE_OK)
        return v;
    KLOG_ERROR("Unable to parse maximum PD volumes value, using default: %s=%s", ENV_MAX_PD_VOLS,
               raw);
    return 0;
}

/* rand.String(32)'s role: a prefix no real volume id has. 1 on success. */
static int random_prefix(char *out)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    unsigned char raw[PREFIX_LEN];

    if (RAND_bytes(raw, sizeof(raw)) != 1)
        return 0;
    for (size_t i = 0; i < PREFIX_LEN; i++)
        out[i] = alphabet[raw[i] % (sizeof(alphabet) - 1)];
    out[PREFIX_LEN] = '\0';
    return 1;
}

/* The kind of desc, or NULL. */
static const limits_kind *kind_of(const fw_plugin_desc *desc)
{
    for (size_t i = 0; i < N_KINDS; i++)
        if (kinds[i].desc == desc)
            return &kinds[i];
    return NULL;
}

/* Contract in plugins.h. */
int plugin_non_csi_limits_new(const fw_plugin_desc *desc, struct plugin_vol_listers *l, void **self)
{
    const limits_kind *kind = kind_of(desc);
    non_csi_limits *pl;

    *self = NULL;
    if (!kind)
        return KUBE_EINVAL;
    if (!(pl = calloc(1, sizeof(*pl))))
        return KUBE_ENOMEM;
    if (!random_prefix(pl->random_prefix)) {
        free(pl);
        return KUBE_EIO;
    }
    pl->kind = kind;
    pl->l = plugin_vol_listers_ref(l);
    pl->env_max = env_limit();
    *self = pl;
    return KUBE_OK;
}

/* plugin_non_csi_limits_new with the failure written to err (size errlen). */
static int new_with_err(const fw_plugin_desc *desc, plugin_vol_listers *l, void **self, char *err,
                        size_t errlen)
{
    int rc = plugin_non_csi_limits_new(desc, l, self);

    if (rc != KUBE_OK)
        snprintf(err, errlen, "%s: %s", desc->name, kube_strerror(rc));
    return rc;
}

/* Defines the descriptor var (plugin name nm) with its plugin_vol_new_fn
 * and create, which differ only in the kind they build. */
#define NON_CSI_PLUGIN(var, nm)                                                                  \
    static int var##_new(const cJSON *args, fw_handle *h, plugin_vol_listers *l, void **self,    \
                         char *err, size_t errlen)                                               \
    {                                                                                            \
        (void)args;                                                                              \
        (void)h;                                                                                 \
        return new_with_err(&var, l, self, err, errlen);                                         \
    }                                                                                            \
    static int var##_create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err, \
                            size_t errlen)                                                       \
    {                                                                                            \
        return plugin_vol_create(args, h, var##_new, self, err, errlen);                         \
    }                                                                                            \
    const fw_plugin_desc var = {                                                                 \
        .name = (nm),                                                                            \
        .create = var##_create,                                                                  \
        .destroy = destroy,                                                                      \
        .pre_filter = pre_filter,                                                                \
        .filter = filter,                                                                        \
        .events_to_register = events_to_register,                                                \
    };

NON_CSI_PLUGIN(plugin_ebs_limits, "EBSLimits")
NON_CSI_PLUGIN(plugin_gce_pd_limits, "GCEPDLimits")
NON_CSI_PLUGIN(plugin_azure_disk_limits, "AzureDiskLimits")
