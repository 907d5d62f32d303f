/*
 * scheduler/plugins/volumebinding/volume_binding.c - VolumeBinding (kube-scheduler v1.28
 * pkg/scheduler/framework/plugins/volumebinding).
 *
 * PreFilter: every PVC the pod uses (persistentVolumeClaim and generic
 * ephemeral volumes) must exist, not be Lost or being deleted, and an
 * ephemeral one must be owned by the pod (UnschedulableAndUnresolvable
 * otherwise); a pod without claims skips the plugin. Claims are split into
 * bound, unbound WaitForFirstConsumer ("delay") and unbound immediate; any
 * unbound immediate claim is UnschedulableAndUnresolvable "pod has unbound
 * immediate PersistentVolumeClaims". Bound claims whose PVs are local
 * (kubernetes.io/hostname In terms) restrict the nodes (PreFilterResult).
 * The PVs of the delay claims' classes are listed once here.
 * Filter: FindPodVolumes (volume_binding_match.c): the bound PVs' node
 * affinity, then a matching available PV or a provisionable class per
 * delay claim; the decision is kept per node.
 * PreScore/Score: skipped (scoring needs the VolumeCapacityPriority feature
 * gate, off by default in v1.28; the shape arg is rejected as upstream).
 * Reserve: assumes the node's decisions in the assume cache; Unreserve
 * reverts them. PreBind: writes them and waits for the binding
 * (volume_binding_bind.c) within bindTimeoutSeconds.
 *
 * Args (VolumeBindingArgs): bindTimeoutSeconds (default 600, >= 0).
 * Metrics: scheduler_volume_scheduling_stage_error_total{operation} counts
 * Filter ("predicate"), Reserve ("assume") and PreBind ("bind") errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/buf.h"
#include "kube/util/array.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "metrics.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"
#include "plugins/volumebinding/internal.h"

#define STATE_KEY VB_NAME
#define ERRLEN 1024

typedef struct volume_binding {
    fw_handle *h;
    plugin_vol_listers *l; /* one reference */
    vb_cache cache;
    vb_binder binder;
    kube_metric *stage_errors; /* scheduler_volume_scheduling_stage_error_total, or NULL */
} volume_binding;

/* VolumeSchedulingStageFailed{operation}: "predicate", "assume", "bind". */
static void stage_failed(volume_binding *pl, const char *operation)
{
    const char *v[] = {operation};
    kube_metric_add(pl->stage_errors, v, 1);
}

/* ------------------------------------------------------------------ */
/* Args                                                                */
/* ------------------------------------------------------------------ */

/* %#v of a []config.UtilizationShapePoint. */
static void shape_repr(const cJSON *shape, kube_buf *b)
{
    const cJSON *it;
    int first = 1;

    kube_buf_puts(b, "[]config.UtilizationShapePoint{");
    cJSON_ArrayForEach(it, shape)
    {
        const cJSON *u = cJSON_GetObjectItemCaseSensitive(it, "utilization");
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(it, "score");
        kube_buf_printf(b, "%sconfig.UtilizationShapePoint{Utilization:%d, Score:%d}",
                        first ? "" : ", ", cJSON_IsNumber(u) ? u->valueint : 0,
                        cJSON_IsNumber(s) ? s->valueint : 0);
        first = 0;
    }
    kube_buf_puts(b, "}");
}

static void validate_args(const cJSON *in, int64_t *timeout, plugin_field_errs *e)
{
    static const char *const known[] = {"bindTimeoutSeconds", "shape", NULL};
    const cJSON *shape = NULL;

    *timeout = VB_DEFAULT_BIND_TIMEOUT_S;
    if (!plugin_args_object(in, "", known, e))
        return;
    if (plugin_args_int(in, "", "bindTimeoutSeconds", INT64_MIN, INT64_MAX,
                        VB_DEFAULT_BIND_TIMEOUT_S, timeout, e) &&
        *timeout < 0)
        plugin_field_errs_add(e,
                              "bindTimeoutSeconds: Invalid value: %lld: invalid "
                              "BindTimeoutSeconds, should not be a negative value",
                              (long long)*timeout);
    if (plugin_args_array(in, "", "shape", &shape, e) && shape) {
        kube_buf b = KUBE_BUF_INIT;
        shape_repr(shape, &b);
        plugin_field_errs_add(e,
                              "shape: Invalid value: %s: unsupported when "
                              "VolumeCapacityPriority feature is disabled",
                              b.data ? b.data : "");
        kube_buf_free(&b);
    }
}

static int default_args(const cJSON *in, cJSON **out, char *err, size_t errlen)
{
    plugin_field_errs e = PLUGIN_FIELD_ERRS_INIT;
    int64_t timeout;
    int rc;

    *out = NULL;
    validate_args(in, &timeout, &e);
    if ((rc = plugin_field_errs_finish(&e, err, errlen)) != KUBE_OK)
        return rc;
    if (!(*out = cJSON_CreateObject()) ||
        !cJSON_AddNumberToObject(*out, "bindTimeoutSeconds", (double)timeout)) {
        cJSON_Delete(*out);
        *out = NULL;
        return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

/* ------------------------------------------------------------------ */
/* Cycle state                                                         */
/* ------------------------------------------------------------------ */

/* stateData: shared by every clone of the cycle state (upstream's Clone
 * returns the same pointer), hence refcounted. */
typedef struct vb_state {
    fw_shared shared; /* first: the clones share the state (fw_shared_ops) */
    vb_claims claims;
    pthread_mutex_t mu;  /* by_node, has_static_bindings */
    kube_strmap by_node; /* node -> vb_pod_volumes * */
    int has_static_bindings;
    int all_bound;     /* set by Reserve */
    kube_object *node; /* the Reserve node (one reference) */
} vb_state;

static void free_volumes_value(void *ud, const char *key, void *value)
{
    vb_pod_volumes_free(value);
    free(value);
}

/* Frees the state once its last reference is gone (fw_shared.release). */
static void state_release(void *data)
{
    vb_state *s = data;
    vb_claims_free(&s->claims);
    kube_strmap_foreach(&s->by_node, free_volumes_value, NULL);
    kube_strmap_free(&s->by_node);
    pthread_mutex_destroy(&s->mu);
    kube_object_unref(s->node);
    free(s);
}

static vb_state *state_new(void)
{
    vb_state *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    fw_shared_init(&s->shared, state_release);
    pthread_mutex_init(&s->mu, NULL);
    return s;
}

static vb_state *state_get(const fw_cycle_state *cs)
{
    return fw_cycle_state_read_static(cs, STATE_KEY);
}

/* The decision Filter kept for node (borrowed), or NULL. */
static vb_pod_volumes *volumes_for(vb_state *s, const char *node)
{
    pthread_mutex_lock(&s->mu);
    vb_pod_volumes *v = kube_strmap_get(&s->by_node, node);
    pthread_mutex_unlock(&s->mu);
    return v;
}

/* ------------------------------------------------------------------ */
/* PreFilter                                                           */
/* ------------------------------------------------------------------ */

static int is_claim_volume(const kube_volume *v)
{
    return v->type == KUBE_VOL_PVC || v->type == KUBE_VOL_EPHEMERAL;
}

/* ephemeral.VolumeIsForPod */
static fw_status *ephemeral_owner_check(const kube_pod *pod, const kube_object *pvc, fw_code code)
{
    const kube_owner_ref *o = kube_meta_controller(&pvc->meta);
    const kube_meta *pm = &pod->base.meta;

    if (strcmp(pvc->meta.namespace_, pm->namespace_) == 0 && o && o->uid &&
        strcmp(o->uid, pm->uid) == 0)
        return NULL;
    return fw_status_newf(code, "PVC %s/%s was not created for pod %s/%s (pod is not owner)",
                          pvc->meta.namespace_, pvc->meta.name, pm->namespace_, pm->name);
}

/* podHasPVCs: *has = 1 when the pod uses claims; a status when one is
 * unusable. */
static fw_status *pod_has_pvcs(volume_binding *pl, const kube_pod *pod, int *has)
{
    const char *ns = pod->base.meta.namespace_;
    fw_status *st = NULL;

    *has = 0;
    for (size_t i = 0; i < pod->n_volumes && !st; i++) {
        const kube_volume *v = &pod->volumes[i];
        if (!is_claim_volume(v))
            continue;
        *has = 1;
        kube_object *obj = plugin_vol_listers_get(pl->l, PLUGIN_VOL_PVC, ns, v->id);
        const kube_pvc *pvc = kube_pvc_from(obj);
        if (!pvc && v->type == KUBE_VOL_EPHEMERAL)
            st = fw_status_newf(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                "waiting for ephemeral volume controller to create the "
                                "persistentvolumeclaim \"%s\"",
                                v->id);
        else if (!pvc)
            st = fw_status_newf(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                "persistentvolumeclaim \"%s\" not found", v->id);
        else if (strcmp(pvc->phase, "Lost") == 0)
            st = fw_status_newf(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                "persistentvolumeclaim \"%s\" bound to non-existent "
                                "persistentvolume \"%s\"",
                                v->id, pvc->volume_name);
        else if (obj->meta.deleting)
            st = fw_status_newf(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                "persistentvolumeclaim \"%s\" is being deleted", v->id);
        else if (v->type == KUBE_VOL_EPHEMERAL)
            st = ephemeral_owner_check(pod, obj, FW_UNSCHEDULABLE_AND_UNRESOLVABLE);
        kube_object_unref(obj);
    }
    return st;
}

static int fully_bound(const kube_pvc *pvc)
{
    return pvc->volume_name[0] && kube_meta_annotation(&pvc->base.meta, KUBE_ANN_BIND_COMPLETED);
}

/* volume.IsDelayBindingMode: 1 / 0, or an error status. */
static fw_status *delay_binding_mode(volume_binding *pl, const kube_pvc *pvc, int *delay)
{
    const char *class_name = kube_pvc_class(pvc);
    kube_object *obj;
    const kube_storage_class *sc;
    fw_status *st = NULL;

    *delay = 0;
    if (!class_name[0])
        return NULL;
    if (!(obj = plugin_vol_listers_get(pl->l, PLUGIN_VOL_SC, "", class_name)))
        return NULL;
    sc = kube_storage_class_from(obj);
    if (sc->binding_mode == KUBE_BINDING_UNSET)
        st = fw_status_error(KUBE_EINVAL, "VolumeBindingMode not set for StorageClass \"%s\"",
                             class_name);
    *delay = sc->binding_mode == KUBE_BINDING_WAIT_FOR_FIRST_CONSUMER;
    kube_object_unref(obj);
    return st;
}

static int push_view(vb_view **arr, size_t *n, size_t *cap, vb_view *v)
{
    if (kube_array_reserve(arr, cap, *n + 1, sizeof(**arr)) != KUBE_OK) {
        vb_view_clear(v);
        return KUBE_ENOMEM;
    }
    (*arr)[(*n)++] = *v;
    return KUBE_OK;
}

/* A bound claim (view taken) and the latest view of its PV. */
static int add_bound(volume_binding *pl, vb_claims *c, vb_view *pvc)
{
    size_t n = c->n_bound + 1;

    if (KUBE_ARRAY_RESERVE(c->bound, c->cap_bound, n) != KUBE_OK ||
        KUBE_ARRAY_RESERVE(c->bound_pvs, c->cap_bound_pvs, n) != KUBE_OK) {
        vb_view_clear(pvc);
        return KUBE_ENOMEM;
    }
    c->bound_pvs[n - 1] = (vb_view){0};
    vb_cache_get(&pl->cache, PLUGIN_VOL_PV, "", vb_pvc(pvc)->volume_name, &c->bound_pvs[n - 1]);
    c->bound[n - 1] = *pvc;
    c->n_bound = n;
    return KUBE_OK;
}

/* Sorts one claim (view taken) into the bound / delay lists; *immediate
 * counts the others. */
static fw_status *classify_claim(volume_binding *pl, vb_claims *c, vb_view *pvc, int *immediate)
{
    const kube_pvc *p = vb_pvc(pvc);
    int delay, rc;
    fw_status *st;

    if (fully_bound(p))
        rc = add_bound(pl, c, pvc);
    else if ((st = delay_binding_mode(pl, p, &delay))) {
        vb_view_clear(pvc);
        return st;
    } else if (delay && !p->volume_name[0])
        rc = push_view(&c->delay, &c->n_delay, &c->cap_delay, pvc);
    else {
        (*immediate)++;
        vb_view_clear(pvc);
        rc = KUBE_OK;
    }
    return rc == KUBE_OK ? NULL : fw_status_error(rc, NULL);
}

/* unboundVolumesDelayBinding: ListPVs of every delay claim's class. */
static int list_class_pvs(volume_binding *pl, vb_claims *c)
{
    if (c->n_delay == 0)
        return KUBE_OK;
    if (!(c->classes = calloc(c->n_delay, sizeof(*c->classes))))
        return KUBE_ENOMEM;
    for (size_t i = 0; i < c->n_delay; i++) {
        const char *cls = kube_pvc_class(vb_pvc(&c->delay[i]));
        size_t k = 0;
        while (k < c->n_classes && strcmp(c->classes[k].storage_class, cls) != 0)
            k++;
        if (k < c->n_classes)
            continue;
        vb_class_pvs *cp = &c->classes[c->n_classes++];
        cp->storage_class = cls;
        int rc = vb_cache_list_pvs(&pl->cache, cls, &cp->pvs, &cp->n);
        if (rc != KUBE_OK)
            return rc;
    }
    return KUBE_OK;
}

/* GetPodVolumeClaims. */
static fw_status *pod_volume_claims(volume_binding *pl, const kube_pod *pod, vb_claims *c,
                                    int *immediate)
{
    const char *ns = pod->base.meta.namespace_;
    fw_status *st = NULL;

    *immediate = 0;
    for (size_t i = 0; i < pod->n_volumes && !st; i++) {
        const kube_volume *v = &pod->volumes[i];
        vb_view pvc = {0};
        if (!is_claim_volume(v))
            continue;
        if (vb_cache_get(&pl->cache, PLUGIN_VOL_PVC, ns, v->id, &pvc) != KUBE_OK)
            return fw_status_error(KUBE_ENOTFOUND,
                                   "error getting PVC \"%s/%s\": could not find "
                                   "v1.PersistentVolumeClaim \"%s/%s\"",
                                   ns, v->id, ns, v->id);
        if (v->type == KUBE_VOL_EPHEMERAL && (st = ephemeral_owner_check(pod, pvc.obj, FW_ERROR))) {
            vb_view_clear(&pvc);
            return st;
        }
        st = classify_claim(pl, c, &pvc, immediate);
    }
    if (!st && list_class_pvs(pl, c) != KUBE_OK)
        st = fw_status_error(KUBE_ENOMEM, NULL);
    return st;
}

/* The PreFilterResult of the bound claims' local PVs. */
static fw_status *eligible_result(const vb_claims *c, fw_pre_filter_result **result)
{
    const char **names;
    size_t n;
    int all;

    if (vb_eligible_nodes(c, &all, &names, &n) != KUBE_OK)
        return fw_status_error(KUBE_ENOMEM, NULL);
    if (all)
        return NULL;
    *result = fw_pre_filter_result_new(names, n);
    free(names);
    return *result ? NULL : fw_status_error(KUBE_ENOMEM, NULL);
}

static fw_status *pre_filter(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                             fw_pre_filter_result **result)
{
    volume_binding *pl = self;
    vb_state *s = state_new();
    int has, immediate;
    fw_status *st;

    if (!s)
        return fw_status_error(KUBE_ENOMEM, NULL);
    if ((st = pod_has_pvcs(pl, pod->pod, &has))) {
        fw_shared_unref(s);
        return st;
    }
    if (!has) {
        if (fw_cycle_state_write(cs, STATE_KEY, s, &fw_shared_ops) != KUBE_OK)
            return fw_status_error(KUBE_ENOMEM, NULL);
        return fw_status_new(FW_SKIP, NULL);
    }
    st = pod_volume_claims(pl, pod->pod, &s->claims, &immediate);
    if (!st && immediate > 0)
        st = fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, VB_REASON_UNBOUND_IMMEDIATE);
    if (!st)
        st = eligible_result(&s->claims, result);
    if (st) {
        fw_shared_unref(s);
        return st;
    }
    if (fw_cycle_state_write(cs, STATE_KEY, s, &fw_shared_ops) != KUBE_OK) {
        fw_pre_filter_result_free(*result);
        *result = NULL;
        return fw_status_error(KUBE_ENOMEM, NULL);
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Filter                                                              */
/* ------------------------------------------------------------------ */

static fw_status *not_found_status(void)
{
    return fw_status_error(KUBE_ENOTFOUND, "not found");
}

/* Records the node's decision (replacing an earlier one). */
static fw_status *keep_volumes(vb_state *s, const char *node, vb_pod_volumes *vols)
{
    vb_pod_volumes *copy = malloc(sizeof(*copy));
    void *old = NULL;
    int rc = KUBE_ENOMEM;

    if (copy) {
        *copy = *vols;
        pthread_mutex_lock(&s->mu);
        rc = kube_strmap_put(&s->by_node, node, copy, &old);
        if (rc == KUBE_OK && copy->n_static > 0)
            s->has_static_bindings = 1;
        pthread_mutex_unlock(&s->mu);
    }
    if (rc != KUBE_OK) {
        free(copy);
        vb_pod_volumes_free(vols);
        return fw_status_error(rc, NULL);
    }
    if (old) {
        vb_pod_volumes_free(old);
        free(old);
    }
    return NULL;
}

static fw_status *filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *ni)
{
    volume_binding *pl = self;
    vb_state *s = state_get(cs);
    vb_find_ctx ctx = {pl->l};
    vb_find_result r;
    char err[ERRLEN];
    fw_status *st;

    if (!s)
        return not_found_status();
    if (!ni->node)
        return fw_status_new(FW_ERROR, "node not found");
    if (vb_find_pod_volumes(&ctx, pod->pod, &s->claims, ni->node, &r, err, sizeof(err)) !=
        KUBE_OK) {
        stage_failed(pl, "predicate");
        return fw_status_error(KUBE_EINVAL, "%s", err);
    }
    if ((st = vb_find_result_status(&r))) {
        vb_pod_volumes_free(&r.vols);
        return st;
    }
    return keep_volumes(s, ni->name, &r.vols);
}

/* ------------------------------------------------------------------ */
/* PreScore / Score                                                    */
/* ------------------------------------------------------------------ */

static fw_status *pre_score(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                            const fw_node_info *const *nodes, size_t n)
{
    return fw_status_new(FW_SKIP, NULL); /* no scorer without VolumeCapacityPriority */
}

static fw_status *score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                        const fw_node_info *ni, int64_t *out)
{
    *out = 0;
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Reserve / Unreserve                                                 */
/* ------------------------------------------------------------------ */

/* arePodVolumesBound, through the assume cache. */
static int pod_volumes_bound(volume_binding *pl, const kube_pod *pod)
{
    for (size_t i = 0; i < pod->n_volumes; i++) {
        const kube_volume *v = &pod->volumes[i];
        vb_view pvc = {0};
        int bound;
        if (!is_claim_volume(v))
            continue;
        if (vb_cache_get(&pl->cache, PLUGIN_VOL_PVC, pod->base.meta.namespace_, v->id, &pvc) !=
            KUBE_OK)
            return 0;
        bound = fully_bound(vb_pvc(&pvc));
        vb_view_clear(&pvc);
        if (!bound)
            return 0;
    }
    return 1;
}

/* GetBindVolumeToClaim + Assume for one binding; b->pv becomes the
 * assumed view. */
static int assume_pv(volume_binding *pl, vb_binding *b, char *err, size_t errlen)
{
    const kube_pvc *pvc = vb_pvc(&b->pvc);
    const kube_meta *cm = &pvc->base.meta;
    const kube_claim_ref *ref = vb_pv_claim(&b->pv);
    int should_set = !kube_claim_ref_matches(ref, pvc);
    int has_ann = kube_meta_annotation(&b->pv.obj->meta, KUBE_ANN_BOUND_BY_CONTROLLER) ||
                  (b->pv.ov && b->pv.ov->bound_by_controller);
    int dirty = !ref || strcmp(ref->name, cm->name) != 0 ||
                strcmp(ref->namespace_, cm->namespace_) != 0 || strcmp(ref->uid, cm->uid) != 0 ||
                (should_set && !has_ann);
    vb_overlay *ov;
    int rc;

    if (!dirty)
        return KUBE_OK;
    if (!(ov = vb_overlay_pv(vb_view_rv(&b->pv), cm->namespace_, cm->name, cm->uid,
                             should_set || has_ann)))
        return KUBE_ENOMEM;
    rc = vb_cache_assume(&pl->cache, PLUGIN_VOL_PV, &b->pv, ov, err, errlen);
    if (rc == KUBE_OK) {
        vb_overlay_unref(b->pv.ov);
        b->pv.ov = ov;
    } else {
        vb_overlay_unref(ov);
    }
    return rc;
}

static int assume_pvc(volume_binding *pl, vb_view *pvc, const char *node, char *err, size_t errlen)
{
    vb_overlay *ov = vb_overlay_pvc(vb_view_rv(pvc), node);
    int rc;

    if (!ov)
        return KUBE_ENOMEM;
    rc = vb_cache_assume(&pl->cache, PLUGIN_VOL_PVC, pvc, ov, err, errlen);
    if (rc == KUBE_OK) {
        vb_overlay_unref(pvc->ov);
        pvc->ov = ov;
    } else {
        vb_overlay_unref(ov);
    }
    return rc;
}

static void revert(volume_binding *pl, vb_pod_volumes *v, size_t n_pv, size_t n_pvc)
{
    for (size_t i = 0; i < n_pv; i++)
        vb_cache_restore(&pl->cache, PLUGIN_VOL_PV, &v->static_bindings[i].pv);
    for (size_t i = 0; i < n_pvc; i++)
        vb_cache_restore(&pl->cache, PLUGIN_VOL_PVC, &v->dynamic[i]);
}

/* AssumePodVolumes: *all_bound = 1 when nothing needs binding. */
static fw_status *assume_pod_volumes(volume_binding *pl, const kube_pod *pod, const char *node,
                                     vb_pod_volumes *v, int *all_bound)
{
    char err[ERRLEN];
    size_t i = 0, j = 0;
    int rc = KUBE_OK;

    if ((*all_bound = pod_volumes_bound(pl, pod)))
        return NULL;
    for (; i < v->n_static && rc == KUBE_OK; i++)
        rc = assume_pv(pl, &v->static_bindings[i], err, sizeof(err));
    if (rc != KUBE_OK) {
        revert(pl, v, i - 1, 0);
        return fw_status_error(rc, "%s", rc == KUBE_ENOMEM ? kube_strerror(rc) : err);
    }
    for (; j < v->n_dynamic && rc == KUBE_OK; j++)
        rc = assume_pvc(pl, &v->dynamic[j], node, err, sizeof(err));
    if (rc != KUBE_OK) {
        revert(pl, v, v->n_static, j - 1);
        return fw_status_error(rc, "%s", rc == KUBE_ENOMEM ? kube_strerror(rc) : err);
    }
    return NULL;
}

static fw_status *reserve(void *self, fw_cycle_state *cs, const fw_pod_info *pod, const char *node)
{
    volume_binding *pl = self;
    vb_state *s = state_get(cs);
    vb_pod_volumes *v;
    const fw_node_info *ni;

    if (!s)
        return not_found_status();
    kube_object_unref(s->node);
    ni = pl->h->svc.snapshot ? fw_snapshot_get(pl->h->svc.snapshot, node) : NULL;
    s->node = ni && ni->node ? kube_object_ref(&ni->node->base) : NULL;
    if (!(v = volumes_for(s, node))) {
        s->all_bound = 1;
        return NULL;
    }
    fw_status *st = assume_pod_volumes(pl, pod->pod, node, v, &s->all_bound);
    if (st)
        stage_failed(pl, "assume");
    return st;
}

static void unreserve(void *self, fw_cycle_state *cs, const fw_pod_info *pod, const char *node)
{
    volume_binding *pl = self;
    vb_state *s = state_get(cs);
    vb_pod_volumes *v;

    if (!s || !(v = volumes_for(s, node)))
        return;
    revert(pl, v, v->n_static, v->n_dynamic);
}

/* ------------------------------------------------------------------ */
/* PreBind                                                             */
/* ------------------------------------------------------------------ */

static fw_status *pre_bind(void *self, fw_cycle_state *cs, const fw_pod_info *pod, const char *node)
{
    volume_binding *pl = self;
    vb_state *s = state_get(cs);
    vb_pod_volumes *v;
    fw_status *st;

    if (!s)
        return not_found_status();
    if (s->all_bound)
        return NULL;
    if (!(v = volumes_for(s, node)))
        return fw_status_error(KUBE_ENOTFOUND, "no pod volumes found for node \"%s\"", node);
    KLOG_V(5, "Trying to bind volumes for pod pod=\"%s/%s\"", pod->namespace_, pod->name);
    if (!s->node)
        st = fw_status_error(KUBE_ENOTFOUND,
                             "binding volumes: failed to get node \"%s\": "
                             "node \"%s\" not found",
                             node, node);
    else
        st = vb_bind_pod_volumes(&pl->binder, kube_node_from(s->node), v);
    if (st) {
        stage_failed(pl, "bind");
        KLOG_V(5, "Failed to bind volumes for pod pod=\"%s/%s\"", pod->namespace_, pod->name);
    }
    return st;
}

/* PreBind blocks only to bind volumes (API writes, then waiting for the
 * PV controller): never for a pod whose claims were all bound. */
static int binding_may_block(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                             const char *node)
{
    const vb_state *s = state_get(cs);

    (void)self;
    (void)pod;
    (void)node;
    return !s || !s->all_bound;
}

/* ------------------------------------------------------------------ */
/* Events, lifecycle                                                   */
/* ------------------------------------------------------------------ */

static const fw_cluster_event_with_hint events[] = {
    {{FW_GVK_STORAGE_CLASS, FW_ACT_ADD | FW_ACT_UPDATE, ""}, NULL},
    {{FW_GVK_PVC, FW_ACT_ADD | FW_ACT_UPDATE, ""}, NULL},
    {{FW_GVK_PV, FW_ACT_ADD | FW_ACT_UPDATE, ""}, NULL},
    {{FW_GVK_NODE, FW_ACT_ADD | FW_ACT_UPDATE_NODE_LABEL | FW_ACT_UPDATE_NODE_TAINT, ""}, NULL},
    {{FW_GVK_CSI_NODE, FW_ACT_ADD | FW_ACT_UPDATE, ""}, NULL},
};

PLUGIN_EVENTS_TO_REGISTER(events)

static void destroy(void *self)
{
    volume_binding *pl = self;
    if (!pl)
        return;
    vb_cache_destroy(&pl->cache);
    plugin_vol_listers_release(pl->l);
    free(pl);
}

/* The stage error counter in the scheduler's registry (shared by the
 * instances of every profile). */
static kube_metric *stage_error_metric(kube_metrics *reg)
{
    static const char *const labels[] = {"operation"};
    kube_metric_opts o = {.name = "scheduler_volume_scheduling_stage_error_total",
                          .help = "Volume scheduling stage error count",
                          .type = KUBE_METRIC_COUNTER,
                          .stability = KUBE_STABILITY_ALPHA,
                          .labels = labels,
                          .n_labels = 1};
    kube_metric *m = NULL;
    int rc = reg ? kube_metrics_register(reg, &o, &m) : KUBE_OK;

    if (rc == KUBE_EEXIST)
        m = kube_metrics_find(reg, o.name);
    else if (rc != KUBE_OK)
        KLOG_WARN("VolumeBinding: registering metric %s: %s", o.name, kube_strerror(rc));
    return m;
}

int plugin_volume_binding_new(const cJSON *args, fw_handle *h, plugin_vol_listers *l, void **self,
                              char *err, size_t errlen)
{
    plugin_field_errs e = PLUGIN_FIELD_ERRS_INIT;
    volume_binding *pl;
    int64_t timeout;
    int rc;

    *self = NULL;
    validate_args(args, &timeout, &e);
    if ((rc = plugin_field_errs_finish(&e, err, errlen)) != KUBE_OK)
        return rc;
    if (!(pl = calloc(1, sizeof(*pl))))
        return KUBE_ENOMEM;
    pl->h = h;
    pl->l = plugin_vol_listers_ref(l);
    vb_cache_init(&pl->cache, pl->l);
    pl->binder = (vb_binder){h->svc.client, &pl->cache, pl->l, timeout * 1000};
    pl->stage_errors = stage_error_metric(h->svc.metrics_registry);
    *self = pl;
    return KUBE_OK;
}

static int create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                  size_t errlen)
{
    return plugin_vol_create(args, h, plugin_volume_binding_new, self, err, errlen);
}

const fw_plugin_desc plugin_volume_binding = {
    .name = VB_NAME,
    .default_args = default_args,
    .create = create,
    .destroy = destroy,
    .pre_filter = pre_filter,
    .filter = filter,
    .pre_score = pre_score,
    .score = score,
    .reserve = reserve,
    .unreserve = unreserve,
    .pre_bind = pre_bind,
    .binding_may_block = binding_may_block,
    .events_to_register = events_to_register,
};
