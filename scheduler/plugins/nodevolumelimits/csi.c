/*
 * scheduler/plugins/nodevolumelimits/csi.c - NodeVolumeLimits (kube-scheduler
 * v1.28 pkg/scheduler/framework/plugins/nodevolumelimits/csi.go).
 *
 * PreFilter: skips the plugin unless the pod has a claim (persistent or
 * generic ephemeral) or an inline volume of a plugin migrated to CSI.
 * Filter: counts the CSI volumes the pod adds to the node, per driver
 * (attach limit key "attachable-volumes-csi-<driver>"), against the limits
 * from the node's CSINode (drivers[].allocatable.count) and the node's
 * attachable-volumes-* allocatable; a volume already attached by a pod on
 * the node is not counted twice. Over a limit: Unschedulable "node(s)
 * exceed max volume count". The new pod's missing claim is
 * UnschedulableAndUnresolvable ("looking up PVC ns/x: persistentvolumeclaim
 * \"x\" not found").
 *
 * A claim's volume is its bound PV's CSI driver and volumeHandle; an
 * unbound claim (or one whose PV is missing) counts under its class's
 * provisioner with a per-plugin random handle. In-tree GCE PD and AWS EBS
 * volumes (inline, PV or provisioner) count as their CSI drivers when the
 * node has a CSINode, as CSI migration is on for them in v1.28; the other
 * in-tree plugins are not translated.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/array.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/rand.h"
#include "kube/types/pod.h"
#include "kube/types/storage.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"
#include "plugins/volumebinding/volume_binding.h"

#define NAME "NodeVolumeLimits"
#define ERR_MAX_VOLUMES "node(s) exceed max volume count"
#define ATTACH_PREFIX "attachable-volumes-"
#define CSI_ATTACH_PREFIX "attachable-volumes-csi-"
#define RESOURCE_NAME_MAX 63
#define KEY_MAX 128
#define ID_MAX 600

#define GCE_PD_PLUGIN "kubernetes.io/gce-pd"
#define AWS_EBS_PLUGIN "kubernetes.io/aws-ebs"

typedef struct node_volume_limits {
    plugin_vol_listers *l;
    char random_prefix[33];
} node_volume_limits;

/* In-tree plugin -> CSI driver (csi-translation-lib), and whether CSI
 * migration is on for it in v1.28 (features default). */
static const struct {
    const char *plugin, *driver;
    int migration_on;
} in_tree[] = {
    {AWS_EBS_PLUGIN, "ebs.csi.aws.com", 1},
    {GCE_PD_PLUGIN, "pd.csi.storage.gke.io", 1},
    {"kubernetes.io/azure-disk", "disk.csi.azure.com", 1},
    {"kubernetes.io/cinder", "cinder.csi.openstack.org", 1},
    {"kubernetes.io/azure-file", "file.csi.azure.com", 0},
    {"kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com", 0},
    {"kubernetes.io/portworx-volume", "pxd.portworx.com", 0},
    {"kubernetes.io/rbd", "rbd.csi.ceph.com", 0},
};
#define N_IN_TREE (sizeof(in_tree) / sizeof(in_tree[0]))
enum { IN_TREE_EBS = 0, IN_TREE_GCE_PD = 1 }; /* their rows in in_tree[] */

static int in_tree_index(const char *plugin)
{
    for (size_t i = 0; i < N_IN_TREE; i++)
        if (strcmp(in_tree[i].plugin, plugin) == 0)
            return (int)i;
    return -1;
}

/* isCSIMigrationOn for row i of in_tree[] (-1: not an in-tree plugin). */
static int migration_on_at(const kube_csi_node *cn, int i)
{
    return cn && i >= 0 && in_tree[i].migration_on;
}

/* isCSIMigrationOn */
static int migration_on(const kube_csi_node *cn, const char *plugin)
{
    return migration_on_at(cn, in_tree_index(plugin));
}

/* volumeutil.GetCSIAttachLimitKey */
static void attach_limit_key(const char *driver, char *out, size_t n)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    char hex[41];

    if (strlen(CSI_ATTACH_PREFIX) + strlen(driver) < RESOURCE_NAME_MAX) {
        snprintf(out, n, CSI_ATTACH_PREFIX "%s", driver);
        return;
    }
    EVP_Digest(driver, strlen(driver), md, &md_len, EVP_sha1(), NULL);
    for (unsigned i = 0; i < md_len && i < 20; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    snprintf(out, n, CSI_ATTACH_PREFIX "%.23s%.16s", driver, hex);
}

/* ---- volume sets: unique name -> limit key ---- */

typedef struct vol_entry {
    char name[ID_MAX];
    char key[KEY_MAX];
} vol_entry;

typedef struct vol_set {
    vol_entry *v;
    size_t n, cap;
} vol_set;

static int set_find(const vol_set *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i].name, name) == 0)
            return (int)i;
    return -1;
}

static int set_put(vol_set *s, const char *driver, const char *handle)
{
    char name[ID_MAX];
    int i;

    snprintf(name, sizeof(name), "%s/%s", driver, handle);
    if ((i = set_find(s, name)) < 0) {
        if (KUBE_ARRAY_RESERVE(s->v, s->cap, s->n + 1) != KUBE_OK)
            return KUBE_ENOMEM;
        i = (int)s->n++;
    }
    kube_strlcpy(s->v[i].name, name, sizeof(s->v[i].name));
    attach_limit_key(driver, s->v[i].key, sizeof(s->v[i].key));
    return KUBE_OK;
}

/* ---- a volume's CSI identity ---- */

/* KubernetesVolumeIDToEBSVolumeID (without the format check). */
static const char *ebs_volume_id(const char *id)
{
    const char *slash;
    if (strncmp(id, "aws://", 6) != 0)
        return id;
    slash = strchr(id + 6, '/');
    return slash ? slash + 1 : "";
}

/* The translated handle of an in-tree GCE PD / AWS EBS volume. */
static void in_tree_handle(kube_pv_source type, const char *id, const char *zone, char *out,
                           size_t n)
{
    if (type == KUBE_PV_AWS_EBS)
        snprintf(out, n, "%s", ebs_volume_id(id));
    else
        snprintf(out, n, "projects/UNSPECIFIED/zones/%s/disks/%s", zone, id);
}

/* checkAttachableInlineVolume */
static int inline_volume(const kube_volume *v, const kube_csi_node *cn, vol_set *out)
{
    int it = v->type == KUBE_VOL_GCE_PD    ? IN_TREE_GCE_PD
             : v->type == KUBE_VOL_AWS_EBS ? IN_TREE_EBS
                                           : -1;
    char handle[ID_MAX];

    if (!migration_on_at(cn, it))
        return KUBE_OK;
    in_tree_handle(v->type == KUBE_VOL_GCE_PD ? KUBE_PV_GCE_PD : KUBE_PV_AWS_EBS, v->id,
                   "UNSPECIFIED", handle, sizeof(handle));
    return set_put(out, in_tree[it].driver, handle);
}

/* The zone part of a GCE PD PV's translated handle (single zone only). */
static const char *pv_zone(const kube_pv *pv)
{
    const char *z = kube_meta_label(&pv->base.meta, "topology.kubernetes.io/zone");
    if (!z)
        z = kube_meta_label(&pv->base.meta, "failure-domain.beta.kubernetes.io/zone");
    return z && *z && !strstr(z, "__") ? z : "UNSPECIFIED";
}

/* getCSIDriverInfoFromSC: *found 0 when the claim is not counted. */
static void driver_from_class(node_volume_limits *pl, const kube_csi_node *cn, const kube_pvc *pvc,
                              char *driver, char *handle, int *found)
{
    const char *cls = kube_pvc_class(pvc);
    kube_object *obj = cls[0] ? plugin_vol_listers_get(pl->l, PLUGIN_VOL_SC, "", cls) : NULL;
    const kube_storage_class *sc = kube_storage_class_from(obj);
    int i;

    *found = 0;
    if (sc) {
        const char *prov = sc->provisioner;
        snprintf(handle, ID_MAX, "%s-%s/%s", pl->random_prefix, pvc->base.meta.namespace_,
                 pvc->base.meta.name);
        if ((i = in_tree_index(prov)) < 0) {
            kube_strlcpy(driver, prov, ID_MAX);
            *found = 1;
        } else if (migration_on(cn, prov)) {
            kube_strlcpy(driver, in_tree[i].driver, ID_MAX);
            *found = 1;
        }
    }
    kube_object_unref(obj);
}

/* getCSIDriverInfo */
static void driver_of_claim(node_volume_limits *pl, const kube_csi_node *cn, const kube_pvc *pvc,
                            char *driver, char *handle, int *found)
{
    kube_object *obj = pvc->volume_name[0]
                           ? plugin_vol_listers_get(pl->l, PLUGIN_VOL_PV, "", pvc->volume_name)
                           : NULL;
    const kube_pv *pv = kube_pv_from(obj);

    *found = 0;
    if (!pv) {
        driver_from_class(pl, cn, pvc, driver, handle, found);
    } else if (pv->source == KUBE_PV_CSI) {
        kube_strlcpy(driver, pv->driver, ID_MAX);
        kube_strlcpy(handle, pv->volume_handle, ID_MAX);
        *found = 1;
    } else if (pv->source == KUBE_PV_GCE_PD || pv->source == KUBE_PV_AWS_EBS) {
        int it = pv->source == KUBE_PV_GCE_PD ? IN_TREE_GCE_PD : IN_TREE_EBS;
        if (migration_on_at(cn, it)) {
            kube_strlcpy(driver, in_tree[it].driver, ID_MAX);
            in_tree_handle(pv->source, pv->volume_handle, pv_zone(pv), handle, ID_MAX);
            *found = 1;
        }
    }
    kube_object_unref(obj);
}

/* ephemeral.VolumeIsForPod */
static int owned_by(const kube_object *pvc, const kube_pod *pod)
{
    const kube_owner_ref *o = kube_meta_controller(&pvc->meta);
    return strcmp(pvc->meta.namespace_, pod->base.meta.namespace_) == 0 && o && o->uid &&
           strcmp(o->uid, pod->base.meta.uid) == 0;
}

/* filterAttachableVolumes: the pod's CSI volumes into out. For the new pod
 * a missing claim is a status; for existing pods it is skipped. */
static fw_status *attachable_volumes(node_volume_limits *pl, const kube_pod *pod,
                                     const kube_csi_node *cn, int new_pod, vol_set *out)
{
    const char *ns = pod->base.meta.namespace_;

    for (size_t i = 0; i < pod->n_volumes; i++) {
        const kube_volume *v = &pod->volumes[i];
        char driver[ID_MAX], handle[ID_MAX];
        int found, rc = KUBE_OK;
        if (v->type != KUBE_VOL_PVC && v->type != KUBE_VOL_EPHEMERAL) {
            if ((rc = inline_volume(v, cn, out)) != KUBE_OK)
                return fw_status_error(rc, NULL);
            continue;
        }
        if (!v->id[0])
            return fw_status_error(KUBE_EINVAL, "PersistentVolumeClaim had no name");
        kube_object *obj = plugin_vol_listers_get(pl->l, PLUGIN_VOL_PVC, ns, v->id);
        if (!obj) {
            if (new_pod)
                return fw_status_newf(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                      "looking up PVC %s/%s: persistentvolumeclaim \"%s\" not "
                                      "found",
                                      ns, v->id, v->id);
            continue;
        }
        if (v->type == KUBE_VOL_EPHEMERAL && !owned_by(obj, pod)) {
            fw_status *st = fw_status_error(KUBE_EINVAL,
                                            "PVC %s/%s was not created for pod "
                                            "%s/%s (pod is not owner)",
                                            ns, v->id, ns, pod->base.meta.name);
            kube_object_unref(obj);
            return st;
        }
        driver_of_claim(pl, cn, kube_pvc_from(obj), driver, handle, &found);
        kube_object_unref(obj);
        if (found && driver[0] && handle[0] && (rc = set_put(out, driver, handle)) != KUBE_OK)
            return fw_status_error(rc, NULL);
    }
    return NULL;
}

/* ---- limits ---- */

typedef struct limit {
    char key[KEY_MAX];
    int64_t max;
    int attached, added;
} limit;

typedef struct limits {
    limit *v;
    size_t n;
} limits;

static limit *limit_find(limits *l, const char *key)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].key, key) == 0)
            return &l->v[i];
    return NULL;
}

/* getVolumeLimits: the node's attachable-volumes-* allocatable, then the
 * CSINode drivers' counts (overriding). */
static int volume_limits(const fw_node_info *ni, const kube_csi_node *cn, limits *out)
{
    size_t cap = ni->allocatable.n_scalars + (cn ? cn->n_drivers : 0);

    out->n = 0;
    if (!(out->v = calloc(cap ? cap : 1, sizeof(*out->v))))
        return KUBE_ENOMEM;
    for (size_t i = 0; i < ni->allocatable.n_scalars; i++) {
        const fw_scalar *s = &ni->allocatable.scalars[i];
        if (strncmp(s->name, ATTACH_PREFIX, strlen(ATTACH_PREFIX)) != 0)
            continue;
        limit *l = &out->v[out->n++];
        kube_strlcpy(l->key, s->name, sizeof(l->key));
        l->max = s->value;
    }
    for (size_t i = 0; cn && i < cn->n_drivers; i++) {
        char key[KEY_MAX];
        limit *l;
        if (!cn->drivers[i].has_count)
            continue;
        attach_limit_key(cn->drivers[i].name, key, sizeof(key));
        if (!(l = limit_find(out, key))) {
            l = &out->v[out->n++];
            kube_strlcpy(l->key, key, sizeof(l->key));
        }
        l->max = cn->drivers[i].count;
    }
    return KUBE_OK;
}

/* Whether adding fresh to attached exceeds a limit. */
static int exceeds(limits *lim, const vol_set *attached, const vol_set *fresh)
{
    for (size_t i = 0; i < attached->n; i++) {
        limit *l = limit_find(lim, attached->v[i].key);
        if (l)
            l->attached++;
    }
    for (size_t i = 0; i < fresh->n; i++) {
        limit *l = limit_find(lim, fresh->v[i].key);
        if (l && set_find(attached, fresh->v[i].name) < 0)
            l->added++;
    }
    for (size_t i = 0; i < lim->n; i++)
        if (lim->v[i].added > 0 && lim->v[i].attached + lim->v[i].added > lim->v[i].max)
            return 1;
    return 0;
}

/* ---- plugin ---- */

static fw_status *pre_filter(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                             fw_pre_filter_result **result)
{
    const kube_pod *p = pod->pod;

    for (size_t i = 0; i < p->n_volumes; i++) {
        kube_volume_type t = p->volumes[i].type;
        if (t == KUBE_VOL_PVC || t == KUBE_VOL_EPHEMERAL || t == KUBE_VOL_GCE_PD ||
            t == KUBE_VOL_AWS_EBS || t == KUBE_VOL_RBD)
            return NULL;
    }
    return fw_status_new(FW_SKIP, NULL);
}

static fw_status *check_node(node_volume_limits *pl, const kube_pod *pod, const fw_node_info *ni,
                             const kube_csi_node *cn)
{
    vol_set fresh = {0}, attached = {0};
    limits lim = {0};
    fw_status *st = attachable_volumes(pl, pod, cn, 1, &fresh);

    if (st || fresh.n == 0)
        goto out;
    if (volume_limits(ni, cn, &lim) != KUBE_OK) {
        st = fw_status_error(KUBE_ENOMEM, NULL);
        goto out;
    }
    if (lim.n == 0)
        goto out;
    for (size_t i = 0; i < ni->n_pods && !st; i++)
        st = attachable_volumes(pl, ni->pods[i]->pod, cn, 0, &attached);
    if (!st && exceeds(&lim, &attached, &fresh))
        st = fw_status_new(FW_UNSCHEDULABLE, ERR_MAX_VOLUMES);
out:
    free(fresh.v);
    free(attached.v);
    free(lim.v);
    return st;
}

static fw_status *filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *ni)
{
    node_volume_limits *pl = self;
    kube_object *cn_obj;
    fw_status *st;

    if (pod->pod->n_volumes == 0)
        return NULL;
    if (!ni->node)
        return fw_status_new(FW_ERROR, "node not found");
    cn_obj = plugin_vol_listers_get(pl->l, PLUGIN_VOL_CSINODE, "", ni->name);
    st = check_node(pl, pod->pod, ni, kube_csi_node_from(cn_obj));
    kube_object_unref(cn_obj);
    return st;
}

static const fw_cluster_event_with_hint events[] = {
    {{FW_GVK_CSI_NODE, FW_ACT_ADD, ""}, NULL},
    {{FW_GVK_POD, FW_ACT_DELETE, ""}, NULL},
};

PLUGIN_EVENTS_TO_REGISTER(events)

static void destroy(void *self)
{
    node_volume_limits *pl = self;
    if (!pl)
        return;
    plugin_vol_listers_release(pl->l);
    free(pl);
}

/* rand.String(32): apimachinery's alphabet. */
static void random_prefix(char *out, size_t n)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    uint64_t x = kube_rand_seed() ^ ((uint64_t)(uintptr_t)out << 17);

    for (size_t i = 0; i + 1 < n; i++)
        out[i] = alphabet[kube_rand_next(&x) % (sizeof(alphabet) - 1)];
    out[n - 1] = '\0';
}

int plugin_node_volume_limits_new(const cJSON *args, fw_handle *h, plugin_vol_listers *l,
                                  void **self, char *err, size_t errlen)
{
    node_volume_limits *pl = calloc(1, sizeof(*pl));

    *self = pl;
    if (!pl)
        return KUBE_ENOMEM;
    pl->l = plugin_vol_listers_ref(l);
    random_prefix(pl->random_prefix, sizeof(pl->random_prefix));
    return KUBE_OK;
}

static int create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                  size_t errlen)
{
    return plugin_vol_create(args, h, plugin_node_volume_limits_new, self, err, errlen);
}

const fw_plugin_desc plugin_node_volume_limits = {
    .name = NAME,
    .create = create,
    .destroy = destroy,
    .pre_filter = pre_filter,
    .filter = filter,
    .events_to_register = events_to_register,
};
