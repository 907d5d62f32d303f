/*
 * scheduler/plugins/volumebinding/bind.c - the API half of kube-scheduler's
 * volume binder (binder.go BindPodVolumes, bindAPIUpdate, checkBindings),
 * v1.28: pre-bind the chosen PVs to their claims and mark claims to
 * provision with the selected node, then wait for the PV controller (and
 * provisioner) to finish the binding.
 *
 * Writes are whole-object updates (PUT) carrying the resourceVersion the
 * decision was made on, as upstream updates its cached object: a PV or PVC
 * changed since then fails with a conflict and the pod is retried. The
 * body is the object read back from the API server with the assumed
 * change applied.
 *
 * Waiting wakes up on every PV/PVC informer event (and at least once per
 * second) instead of upstream's fixed one-second poll; the outcome is the
 * same. The preemptor-pod-deleted check of upstream (pod lister) is not
 * made: a deleted pod's binding fails at Bind instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/transport/api.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "plugins/volumebinding/internal.h"

#define ERRLEN 1024
#define POLL_MS 1000

/* ---- writes ---- */

static void api_error(int rc, const kube_status *st, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s", st->message[0] ? st->message : kube_strerror(rc));
}

static int set_rv(cJSON *obj, int64_t rv)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    char buf[32];

    if (!cJSON_IsObject(meta))
        return KUBE_EPARSE;
    snprintf(buf, sizeof(buf), "%lld", (long long)rv);
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
    return cJSON_AddStringToObject(meta, "resourceVersion", buf) ? KUBE_OK : KUBE_ENOMEM;
}

static int set_annotation(cJSON *obj, const char *key, const char *value)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata"), *ann;

    if (!cJSON_IsObject(meta))
        return KUBE_EPARSE;
    ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
    if (!cJSON_IsObject(ann)) {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "annotations");
        if (!(ann = cJSON_AddObjectToObject(meta, "annotations")))
            return KUBE_ENOMEM;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(ann, key);
    return cJSON_AddStringToObject(ann, key, value) ? KUBE_OK : KUBE_ENOMEM;
}

/* reference.GetReference(claim) as spec.claimRef. */
static int set_claim_ref(cJSON *pv, const kube_pvc *pvc)
{
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(pv, "spec"), *ref;
    const kube_meta *m = &pvc->base.meta;

    if (!cJSON_IsObject(spec))
        return KUBE_EPARSE;
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "claimRef");
    if (!(ref = cJSON_AddObjectToObject(spec, "claimRef")) ||
        !cJSON_AddStringToObject(ref, "kind", "PersistentVolumeClaim") ||
        !cJSON_AddStringToObject(ref, "namespace", m->namespace_) ||
        !cJSON_AddStringToObject(ref, "name", m->name) ||
        !cJSON_AddStringToObject(ref, "uid", m->uid) ||
        !cJSON_AddStringToObject(ref, "apiVersion", "v1") ||
        !cJSON_AddStringToObject(ref, "resourceVersion", m->resource_version))
        return KUBE_ENOMEM;
    return KUBE_OK;
}

/* The resourceVersion of an API answer, -1 when absent. */
static int64_t answer_rv(const cJSON *obj)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
    int64_t v;

    if (!cJSON_IsString(rv) || kube_parse_int64(rv->valuestring, 0, INT64_MAX, &v) != KUBE_OK)
        return -1;
    return v;
}

/* GET the object, apply the assumed change (none for a PV already bound to
 * its claim: upstream writes it unchanged), PUT it with the assumed
 * resourceVersion; *new_rv receives the written version. */
static int update_assumed(vb_binder *b, const kube_resource *res, const vb_view *v,
                          const kube_pvc *claim_for_pv, int64_t *new_rv, char *err, size_t errlen)
{
    const kube_meta *m = &v->obj->meta;
    const char *ns = res->namespaced ? m->namespace_ : NULL;
    cJSON *obj = NULL, *out = NULL;
    kube_status st;
    int rc;

    memset(&st, 0, sizeof(st));
    if ((rc = kube_api_get(b->client, res, ns, m->name, &obj, &st)) != KUBE_OK) {
        api_error(rc, &st, err, errlen);
        return rc;
    }
    rc = set_rv(obj, vb_view_rv(v));
    if (rc == KUBE_OK && claim_for_pv && v->ov)
        rc = set_claim_ref(obj, claim_for_pv);
    if (rc == KUBE_OK && claim_for_pv && v->ov && v->ov->bound_by_controller)
        rc = set_annotation(obj, KUBE_ANN_BOUND_BY_CONTROLLER, "yes");
    if (rc == KUBE_OK && !claim_for_pv && v->ov && v->ov->selected_node)
        rc = set_annotation(obj, KUBE_ANN_SELECTED_NODE, v->ov->selected_node);
    if (rc != KUBE_OK)
        snprintf(err, errlen, "%s", kube_strerror(rc));
    else if ((rc = kube_api_update(b->client, res, ns, m->name, obj, &out, &st)) != KUBE_OK)
        api_error(rc, &st, err, errlen);
    else
        *new_rv = answer_rv(out);
    cJSON_Delete(obj);
    cJSON_Delete(out);
    return rc;
}

/* bindAPIUpdate. pv_rv / pvc_rv receive the written versions. On failure
 * the assumptions not yet written are reverted. */
static int bind_api_update(vb_binder *b, vb_pod_volumes *vols, int64_t *pv_rv, int64_t *pvc_rv,
                           char *err, size_t errlen)
{
    size_t done_pv = 0, done_pvc = 0;
    int rc = KUBE_OK;

    for (; done_pv < vols->n_static && rc == KUBE_OK; done_pv++) {
        vb_binding *bi = &vols->static_bindings[done_pv];
        const kube_meta *cm = &vb_pvc(&bi->pvc)->base.meta;
        KLOG_V(2, "Claim bound to volume PVC=\"%s/%s\" PV=\"%s\"", cm->namespace_, cm->name,
               vb_pv(&bi->pv)->base.meta.name);
        rc = update_assumed(b, &KUBE_RES_PVS, &bi->pv, vb_pvc(&bi->pvc), &pv_rv[done_pv], err,
                            errlen);
        if (rc != KUBE_OK)
            break;
    }
    for (; rc == KUBE_OK && done_pvc < vols->n_dynamic; done_pvc++) {
        rc = update_assumed(b, &KUBE_RES_PVCS, &vols->dynamic[done_pvc], NULL, &pvc_rv[done_pvc],
                            err, errlen);
        if (rc != KUBE_OK)
            break;
    }
    if (rc == KUBE_OK)
        return KUBE_OK;
    /* revert the assumptions not written (the failed one included) */
    for (size_t k = done_pv; k < vols->n_static; k++)
        vb_cache_restore(b->cache, PLUGIN_VOL_PV, &vols->static_bindings[k].pv);
    for (size_t k = done_pvc; k < vols->n_dynamic; k++)
        vb_cache_restore(b->cache, PLUGIN_VOL_PVC, &vols->dynamic[k]);
    return rc;
}

/* ---- checkBindings ---- */

static int fully_bound(const kube_pvc *pvc)
{
    return pvc->volume_name[0] && kube_meta_annotation(&pvc->base.meta, KUBE_ANN_BIND_COMPLETED);
}

static int affinity_error(const kube_pv *pv, const kube_node *node, char *err, size_t errlen)
{
    if (kube_pv_node_affinity_matches(pv, node->base.meta.labels, node->base.meta.n_labels))
        return KUBE_OK;
    snprintf(err, errlen,
             "pv \"%s\" node affinity doesn't match node \"%s\": no matching "
             "NodeSelectorTerms",
             pv->base.meta.name, node->base.meta.name);
    return KUBE_EINVAL;
}

/* One static binding: 1 done, 0 not yet, or an error. */
static int check_binding(vb_binder *b, const vb_binding *bi, int64_t written_rv,
                         const kube_node *node, char *err, size_t errlen)
{
    const kube_pvc *want = vb_pvc(&bi->pvc);
    const char *pv_name = vb_pv(&bi->pv)->base.meta.name;
    vb_view pv = {0}, pvc = {0};
    int rc;

    if (vb_cache_get_api(b->cache, PLUGIN_VOL_PV, "", pv_name, &pv) != KUBE_OK) {
        snprintf(err, errlen,
                 "failed to check binding: could not find v1.PersistentVolume "
                 "\"%s\"",
                 pv_name);
        return KUBE_ENOTFOUND;
    }
    if (vb_cache_get_api(b->cache, PLUGIN_VOL_PVC, want->base.meta.namespace_, want->base.meta.name,
                         &pvc) != KUBE_OK) {
        snprintf(err, errlen,
                 "failed to check binding: could not find "
                 "v1.PersistentVolumeClaim \"%s/%s\"",
                 want->base.meta.namespace_, want->base.meta.name);
        vb_view_clear(&pv);
        return KUBE_ENOTFOUND;
    }
    const kube_pv *p = vb_pv(&pv);
    if (written_rv > vb_view_rv(&pv))
        rc = 0; /* the informer has not seen our write yet */
    else if ((rc = affinity_error(p, node, err, errlen)) != KUBE_OK)
        ;
    else if (!p->claim_ref || !p->claim_ref->uid[0]) {
        snprintf(err, errlen, "ClaimRef got reset for pv \"%s\"", pv_name);
        rc = KUBE_ECONFLICT;
    } else
        rc = fully_bound(vb_pvc(&pvc));
    vb_view_clear(&pv);
    vb_view_clear(&pvc);
    return rc;
}

/* The PV a provisioned claim got: 1 fits, 0 not yet, or an error. */
static int check_provisioned_pv(vb_binder *b, const kube_pvc *pvc, const kube_node *node, char *err,
                                size_t errlen)
{
    vb_view pv = {0};
    int rc;

    if (!pvc->volume_name[0])
        return 1;
    if (vb_cache_get_api(b->cache, PLUGIN_VOL_PV, "", pvc->volume_name, &pv) != KUBE_OK)
        return 0; /* not in the cache yet */
    rc = affinity_error(vb_pv(&pv), node, err, errlen);
    vb_view_clear(&pv);
    return rc == KUBE_OK ? 1 : rc;
}

static int check_provision(vb_binder *b, const vb_view *claim, int64_t written_rv,
                           const kube_node *node, char *err, size_t errlen)
{
    const kube_meta *m = &claim->obj->meta;
    vb_view v = {0};
    int rc;

    if (vb_cache_get_api(b->cache, PLUGIN_VOL_PVC, m->namespace_, m->name, &v) != KUBE_OK) {
        snprintf(err, errlen,
                 "failed to check provisioning pvc: could not find "
                 "v1.PersistentVolumeClaim \"%s/%s\"",
                 m->namespace_, m->name);
        return KUBE_ENOTFOUND;
    }
    const kube_pvc *pvc = vb_pvc(&v);
    const char *selected = kube_meta_annotation(&pvc->base.meta, KUBE_ANN_SELECTED_NODE);
    if (written_rv > vb_view_rv(&v))
        rc = 0;
    else if (pvc->base.meta.n_annotations == 0) {
        snprintf(err, errlen, "selectedNode annotation reset for PVC \"%s\"", m->name);
        rc = KUBE_ECONFLICT;
    } else if (!selected || strcmp(selected, node->base.meta.name) != 0) {
        snprintf(err, errlen, "provisioning failed for PVC \"%s\"", m->name);
        rc = KUBE_ECONFLICT;
    } else if ((rc = check_provisioned_pv(b, pvc, node, err, errlen)) == 1)
        rc = fully_bound(pvc);
    vb_view_clear(&v);
    return rc;
}

/* checkBindings: 1 when every PVC is fully bound, 0 when not yet, or an
 * error with the message in err. */
static int check_bindings(vb_binder *b, const vb_pod_volumes *vols, const int64_t *pv_rv,
                          const int64_t *pvc_rv, const kube_node *node, char *err, size_t errlen)
{
    int rc;

    for (size_t i = 0; i < vols->n_static; i++)
        if ((rc = check_binding(b, &vols->static_bindings[i], pv_rv[i], node, err, errlen)) != 1)
            return rc;
    for (size_t i = 0; i < vols->n_dynamic; i++)
        if ((rc = check_provision(b, &vols->dynamic[i], pvc_rv[i], node, err, errlen)) != 1)
            return rc;
    return 1;
}

/* Waits for check_bindings within the bind timeout. */
static int wait_bindings(vb_binder *b, const vb_pod_volumes *vols, const int64_t *pv_rv,
                         const int64_t *pvc_rv, const kube_node *node, char *err, size_t errlen)
{
    int64_t deadline = kube_now_ms() + b->bind_timeout_ms;
    uint64_t gen = plugin_vol_listers_generation(b->l);

    for (;;) {
        int rc = check_bindings(b, vols, pv_rv, pvc_rv, node, err, errlen);
        int64_t left = deadline - kube_now_ms();
        if (rc != 0)
            return rc;
        if (left <= 0) {
            snprintf(err, errlen, "timed out waiting for the condition");
            return KUBE_ETIMEDOUT;
        }
        plugin_vol_listers_wait(b->l, &gen, left < POLL_MS ? (long)left : POLL_MS);
    }
}

fw_status *vb_bind_pod_volumes(vb_binder *b, const kube_node *node, vb_pod_volumes *vols)
{
    int64_t *pv_rv = calloc(vols->n_static + 1, sizeof(*pv_rv));
    int64_t *pvc_rv = calloc(vols->n_dynamic + 1, sizeof(*pvc_rv));
    char err[ERRLEN] = "";
    fw_status *st = NULL;
    int rc;

    if (!pv_rv || !pvc_rv)
        st = fw_status_error(KUBE_ENOMEM, NULL);
    else if (!b->client)
        st = fw_status_error(KUBE_EINVAL, "binding volumes: no API client");
    else if ((rc = bind_api_update(b, vols, pv_rv, pvc_rv, err, sizeof(err))) != KUBE_OK)
        st = fw_status_error(rc, "%s", err);
    else if ((rc = wait_bindings(b, vols, pv_rv, pvc_rv, node, err, sizeof(err))) < 0)
        st = fw_status_error(rc, "binding volumes: %s", err);
    free(pv_rv);
    free(pvc_rv);
    return st;
}
