/*
 * scheduler/plugins/volumebinding/internal.h - VolumeBinding's internals shared
 * by its files (volume_binding*.c): the assume cache over the shared
 * listers, the PV/PVC "views" it hands out, the pure matching logic of
 * kube-scheduler's volume binder (binder.go, v1.28) and the API side of
 * binding. Not for other plugins.
 *
 * Assume cache (assume_cache.go): the informers hold the API objects; an
 * assumed change (a PV pre-bound to a claim in Reserve, a claim given a
 * selected node) is an OVERLAY recorded with the resourceVersion of the
 * object it was computed from. A read applies the overlay while the API
 * object still has that version; once the informer delivers a newer
 * version the overlay is stale and dropped - exactly upstream's rule that
 * a newer informer object replaces an assumed one.
 *
 * Memory: a vb_view holds one object reference and one overlay reference
 * (or NULL); vb_view_clear() drops both. Overlays are immutable and
 * refcounted. Arrays of views returned here are the caller's (free with
 * vb_views_free()).
 * Threads: the cache is locked; views and overlays are immutable.
 */
#ifndef PLUGIN_VOLUME_BINDING_INT_H
#define PLUGIN_VOLUME_BINDING_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "framework/framework.h"
#include "kube/util/strmap.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "kube/types/storage.h"
#include "plugins/volumebinding/volume_binding.h"

#define VB_NAME "VolumeBinding"
#define VB_DEFAULT_BIND_TIMEOUT_S 600

/* An assumed change of one PV or PVC. */
typedef struct vb_overlay {
    atomic_int refs;
    int64_t rv;                /* the version the change was computed from */
    kube_claim_ref claim;      /* PV: the claim it is pre-bound to */
    int bound_by_controller;   /* PV: AnnBoundByController was added */
    const char *selected_node; /* PVC: AnnSelectedNode, NULL for a PV */
} vb_overlay;

/* A PV or PVC as the cache shows it: the API object plus an overlay. */
typedef struct vb_view {
    kube_object *obj; /* one reference; NULL: none */
    vb_overlay *ov;   /* one reference or NULL */
} vb_view;

/* A pre-built overlay. Strings are copied. NULL on OOM. */
vb_overlay *vb_overlay_pv(int64_t rv, const char *ns, const char *name, const char *uid,
                          int bound_by_controller);
vb_overlay *vb_overlay_pvc(int64_t rv, const char *selected_node);
void vb_overlay_unref(vb_overlay *ov);

/* dst = src with new references. */
void vb_view_copy(vb_view *dst, const vb_view *src);
void vb_view_clear(vb_view *v);
void vb_views_free(vb_view *v, size_t n);

static inline const kube_pv *vb_pv(const vb_view *v)
{
    return kube_pv_from(v->obj);
}
static inline const kube_pvc *vb_pvc(const vb_view *v)
{
    return kube_pvc_from(v->obj);
}
/* The PV's claimRef, assumed or from the API object (NULL: none). */
const kube_claim_ref *vb_pv_claim(const vb_view *v);
/* The claim's selected-node annotation, assumed or from the API object
 * (NULL: none). */
const char *vb_pvc_selected_node(const vb_view *v);
/* metadata.resourceVersion as a number (-1 when it is not one). */
int64_t vb_view_rv(const vb_view *v);

/* ---- assume cache ---- */

typedef struct vb_cache {
    plugin_vol_listers *l; /* borrowed */
    pthread_mutex_t mu;
    kube_strmap ov[2]; /* [PLUGIN_VOL_PV] name / [PLUGIN_VOL_PVC] "ns/name" -> overlay */
} vb_cache;

void vb_cache_init(vb_cache *c, plugin_vol_listers *l);
void vb_cache_destroy(vb_cache *c);
/* The latest view (GetPV / GetPVC): KUBE_OK or KUBE_ENOTFOUND (*out
 * cleared). k is PLUGIN_VOL_PV or PLUGIN_VOL_PVC; ns "" for PVs. */
int vb_cache_get(vb_cache *c, plugin_vol_kind k, const char *ns, const char *name, vb_view *out);
/* The API object only (GetAPIPV / GetAPIPVC). */
int vb_cache_get_api(vb_cache *c, plugin_vol_kind k, const char *ns, const char *name,
                     vb_view *out);
/* ListPVs(class): latest views of every PV of that class, sorted by name.
 * *out NULL when none. KUBE_OK or KUBE_ENOMEM. */
int vb_cache_list_pvs(vb_cache *c, const char *storage_class, vb_view **out, size_t *n);
/* Assume: records ov (a reference is taken) for the object of base.
 * Fails (message in err) when the object is gone ("could not find
 * v1.PersistentVolume \"x\"") or base is older than what the cache holds
 * ("... is out of sync (stored: 5, assume: 4)"). */
int vb_cache_assume(vb_cache *c, plugin_vol_kind k, const vb_view *base, vb_overlay *ov, char *err,
                    size_t errlen);
/* Restore: forgets the overlay of base's object. */
void vb_cache_restore(vb_cache *c, plugin_vol_kind k, const vb_view *base);

/* ---- matching (pure) ---- */

/* One static binding decision: PV to PVC. */
typedef struct vb_binding {
    vb_view pv;
    vb_view pvc;
} vb_binding;

/* PodVolumes of one node. */
typedef struct vb_pod_volumes {
    vb_binding *static_bindings;
    size_t n_static;
    vb_view *dynamic; /* PVCs to provision */
    size_t n_dynamic;
} vb_pod_volumes;

void vb_pod_volumes_free(vb_pod_volumes *pv);

/* The PVs of one storage class, as ListPVs gave them at PreFilter. */
typedef struct vb_class_pvs {
    const char *storage_class; /* borrowed from a claim of the state */
    vb_view *pvs;
    size_t n;
} vb_class_pvs;

/* PodVolumeClaims plus the bound claims' PVs (NULL obj: not found). */
typedef struct vb_claims {
    vb_view *bound;     /* claims fully bound */
    vb_view *bound_pvs; /* their PVs, same length */
    size_t n_bound, cap_bound, cap_bound_pvs;
    vb_view *delay; /* unbound, WaitForFirstConsumer */
    size_t n_delay, cap_delay;
    vb_class_pvs *classes; /* unboundVolumesDelayBinding */
    size_t n_classes;
} vb_claims;

void vb_claims_free(vb_claims *c);

/* Pointers to the listers the matching reads (StorageClasses). */
typedef struct vb_find_ctx {
    plugin_vol_listers *l;
} vb_find_ctx;

/* The conflict flags FindPodVolumes turns into reasons. */
typedef struct vb_find_result {
    int bound_satisfied, unbound_satisfied, sufficient_storage, bound_pvs_found;
    vb_pod_volumes vols;
} vb_find_result;

/* FindPodVolumes for one node. KUBE_OK with r filled (free r->vols), or
 * an error with the message in err (r->vols empty). */
int vb_find_pod_volumes(const vb_find_ctx *ctx, const kube_pod *pod, const vb_claims *claims,
                        const kube_node *node, vb_find_result *r, char *err, size_t errlen);
/* The reasons of r, in upstream's order, into a new status (NULL when the
 * node fits). */
fw_status *vb_find_result_status(const vb_find_result *r);

/* FindMatchingVolume (scheduler path): the smallest available PV of the
 * claim's class that fits the request, the volume mode, the claim's
 * selector, the node's labels and the access modes, or the PV pre-bound to
 * the claim; PVs named in excluded are skipped. *out NULL when none.
 * KUBE_EINVAL with a message when the claim's selector is invalid. */
int vb_find_matching_volume(const vb_view *pvc, const vb_view *pvs, size_t n, const kube_node *node,
                            const char *const *excluded, size_t n_excluded, const vb_view **out,
                            char *err, size_t errlen);

/* GetEligibleNodes: the node names the bound claims' local PVs allow
 * (hostname In terms), or *all = 1 when they do not restrict nodes.
 * *names (malloc'd array of borrowed strings, caller frees) sorted. */
int vb_eligible_nodes(const vb_claims *claims, int *all, const char ***names, size_t *n);

/* ---- binding (API) ---- */

typedef struct vb_binder {
    kube_client *client; /* borrowed, NULL: no API (tests) */
    vb_cache *cache;
    plugin_vol_listers *l;
    int64_t bind_timeout_ms;
} vb_binder;

/* BindPodVolumes: writes the assumed PVs and PVCs of vols (PUT with the
 * assumed resourceVersion) and waits until the PV controller finished
 * binding them (checkBindings) or the timeout passes. node is the chosen
 * node (its labels are checked against the PVs' node affinity). NULL on
 * success, else an FW_ERROR status with upstream's message. */
fw_status *vb_bind_pod_volumes(vb_binder *b, const kube_node *node, vb_pod_volumes *vols);

#endif
