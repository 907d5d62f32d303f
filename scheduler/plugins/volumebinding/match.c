/*
 * scheduler/plugins/volumebinding/match.c - the node-by-node half of
 * kube-scheduler's volume binder (binder.go FindPodVolumes,
 * checkBoundClaims, findMatchingVolumes, checkVolumeProvisions,
 * GetEligibleNodes; component-helpers FindMatchingVolume), v1.28.
 *
 * Not done (no informer for them): in-tree to CSI translation of PVs
 * (CSI migration) and CSIStorageCapacity checks (a provisioner is always
 * taken to have enough capacity, as upstream does for drivers that do not
 * opt into capacity tracking).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"
#include "plugins/volumebinding/internal.h"

#define LABEL_HOSTNAME "kubernetes.io/hostname"

void vb_pod_volumes_free(vb_pod_volumes *pv)
{
    for (size_t i = 0; i < pv->n_static; i++) {
        vb_view_clear(&pv->static_bindings[i].pv);
        vb_view_clear(&pv->static_bindings[i].pvc);
    }
    free(pv->static_bindings);
    vb_views_free(pv->dynamic, pv->n_dynamic);
    memset(pv, 0, sizeof(*pv));
}

void vb_claims_free(vb_claims *c)
{
    vb_views_free(c->bound, c->n_bound);
    vb_views_free(c->bound_pvs, c->n_bound);
    vb_views_free(c->delay, c->n_delay);
    for (size_t i = 0; i < c->n_classes; i++)
        vb_views_free(c->classes[i].pvs, c->classes[i].n);
    free(c->classes);
    memset(c, 0, sizeof(*c));
}

/* ---- FindMatchingVolume ---- */

static int is_excluded(const char *name, const char *const *excluded, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(excluded[i], name) == 0)
            return 1;
    return 0;
}

/* CheckAccessModes: every mode the claim asks for is offered. */
static int access_modes_ok(const kube_pvc *pvc, const kube_pv *pv)
{
    return (pvc->access_modes & ~pv->access_modes) == 0;
}

/* The filters applied to a PV that is not pre-bound to the claim. */
static int available_for(const kube_pvc *pvc, const kube_pv *pv, int affinity_ok)
{
    const kube_meta *m = &pv->base.meta;

    if (strcmp(pv->phase, "Available") != 0)
        return 0;
    if (pvc->selector && !kube_label_selector_matches(pvc->selector, m->labels, m->n_labels))
        return 0;
    if (strcmp(kube_pv_class(pv), kube_pvc_class(pvc)) != 0 || !affinity_ok)
        return 0;
    return access_modes_ok(pvc, pv);
}

int vb_find_matching_volume(const vb_view *pvcv, const vb_view *pvs, size_t n,
                            const kube_node *node, const char *const *excluded, size_t n_excluded,
                            const vb_view **out, char *err, size_t errlen)
{
    const kube_pvc *pvc = vb_pvc(pvcv);
    const kube_pv *best = NULL;

    *out = NULL;
    if (pvc->selector && !pvc->selector->valid) {
        snprintf(err, errlen,
                 "error creating internal label selector for claim: %s/%s: invalid selector",
                 pvc->base.meta.namespace_, pvc->base.meta.name);
        return KUBE_EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        const kube_pv *pv = vb_pv(&pvs[i]);
        const kube_claim_ref *claim = vb_pv_claim(&pvs[i]);
        int affinity_ok;

        if (is_excluded(pv->base.meta.name, excluded, n_excluded))
            continue;
        if (claim && !kube_claim_ref_matches(claim, pvc))
            continue;
        if (kube_quantity_cmp(&pv->capacity, &pvc->request) < 0 ||
            pv->volume_mode != pvc->volume_mode || pv->base.meta.deleting)
            continue;
        affinity_ok = !node || kube_pv_node_affinity_matches(pv, node->base.meta.labels,
                                                             node->base.meta.n_labels);
        if (claim) { /* pre-bound to this claim */
            *out = affinity_ok ? &pvs[i] : NULL;
            return KUBE_OK;
        }
        if (!available_for(pvc, pv, affinity_ok))
            continue;
        if (!best || kube_quantity_cmp(&best->capacity, &pv->capacity) > 0) {
            best = pv;
            *out = &pvs[i];
        }
    }
    return KUBE_OK;
}

/* ---- checkBoundClaims ---- */

static void check_bound_claims(const vb_claims *c, const kube_node *node, vb_find_result *r)
{
    for (size_t i = 0; i < c->n_bound; i++) {
        const kube_pv *pv = vb_pv(&c->bound_pvs[i]);
        if (!pv) {
            r->bound_pvs_found = 0;
            return;
        }
        if (!kube_pv_node_affinity_matches(pv, node->base.meta.labels, node->base.meta.n_labels)) {
            r->bound_satisfied = 0;
            return;
        }
    }
}

/* ---- findMatchingVolumes ---- */

static const vb_class_pvs *class_pvs(const vb_claims *c, const char *storage_class)
{
    for (size_t i = 0; i < c->n_classes; i++)
        if (strcmp(c->classes[i].storage_class, storage_class) == 0)
            return &c->classes[i];
    return NULL;
}

/* byPVCSize: increasing request, stable (insertion sort, as Go's sort for
 * the few claims a pod has). */
static void sort_by_size(const vb_view **v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        const vb_view *x = v[i];
        size_t j = i;
        while (j > 0 && kube_quantity_cmp(&vb_pvc(x)->request, &vb_pvc(v[j - 1])->request) < 0) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

/* Matches claims[0..n) (sorted here) to PVs: bindings go to r->vols, the
 * unmatched claims to unmatched (*n_unmatched). */
static int find_matching_volumes(const vb_claims *c, const vb_view **claims, size_t n,
                                 const kube_node *node, vb_find_result *r,
                                 const vb_view **unmatched, size_t *n_unmatched, char *err,
                                 size_t errlen)
{
    const char **chosen = calloc(n ? n : 1, sizeof(*chosen));
    vb_binding *b = calloc(n ? n : 1, sizeof(*b));
    int rc = KUBE_OK;

    if (!chosen || !b) {
        free(chosen);
        free(b);
        return KUBE_ENOMEM;
    }
    sort_by_size(claims, n);
    r->vols.static_bindings = b;
    for (size_t i = 0; i < n && rc == KUBE_OK; i++) {
        const vb_class_pvs *cp = class_pvs(c, kube_pvc_class(vb_pvc(claims[i])));
        const vb_view *pv = NULL;
        rc = vb_find_matching_volume(claims[i], cp ? cp->pvs : NULL, cp ? cp->n : 0, node, chosen,
                                     r->vols.n_static, &pv, err, errlen);
        if (rc != KUBE_OK)
            break;
        if (!pv) {
            unmatched[(*n_unmatched)++] = claims[i];
            r->unbound_satisfied = 0;
            continue;
        }
        chosen[r->vols.n_static] = pv->obj->meta.name;
        vb_view_copy(&b[r->vols.n_static].pv, pv);
        vb_view_copy(&b[r->vols.n_static++].pvc, claims[i]);
    }
    free(chosen);
    return rc;
}

/* ---- checkVolumeProvisions ---- */

static int check_provision(const vb_find_ctx *ctx, const vb_view *claim, const kube_node *node,
                           int *ok, char *err, size_t errlen)
{
    const kube_pvc *pvc = vb_pvc(claim);
    const char *class_name = kube_pvc_class(pvc);
    kube_object *obj;
    const kube_storage_class *sc;

    *ok = 0;
    if (!class_name[0]) {
        snprintf(err, errlen, "no class for claim \"%s/%s\"", pvc->base.meta.namespace_,
                 pvc->base.meta.name);
        return KUBE_EINVAL;
    }
    if (!(obj = plugin_vol_listers_get(ctx->l, PLUGIN_VOL_SC, "", class_name))) {
        snprintf(err, errlen, "failed to find storage class \"%s\"", class_name);
        return KUBE_ENOTFOUND;
    }
    sc = kube_storage_class_from(obj);
    *ok = sc->provisioner[0] && strcmp(sc->provisioner, KUBE_NO_PROVISIONER) != 0 &&
          kube_storage_class_allows(sc, node->base.meta.labels, node->base.meta.n_labels);
    kube_object_unref(obj);
    return KUBE_OK;
}

static int check_volume_provisions(const vb_find_ctx *ctx, const vb_view **claims, size_t n,
                                   const kube_node *node, vb_find_result *r, char *err,
                                   size_t errlen)
{
    vb_view *dyn = calloc(n, sizeof(*dyn));
    int ok = 1, rc = KUBE_OK;

    if (!dyn)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < n && ok; i++) {
        if ((rc = check_provision(ctx, claims[i], node, &ok, err, errlen)) != KUBE_OK) {
            r->sufficient_storage = 0;
            break;
        }
        if (ok)
            vb_view_copy(&dyn[i], claims[i]);
    }
    r->unbound_satisfied = rc == KUBE_OK && ok;
    if (rc != KUBE_OK || !ok) {
        vb_views_free(dyn, n);
        return rc;
    }
    r->vols.dynamic = dyn;
    r->vols.n_dynamic = n;
    return KUBE_OK;
}

/* ---- FindPodVolumes ---- */

static int find_unbound(const vb_find_ctx *ctx, const vb_claims *c, const kube_node *node,
                        vb_find_result *r, char *err, size_t errlen)
{
    size_t n = c->n_delay, n_match = 0, n_prov = 0;
    const vb_view **match = calloc(n, sizeof(*match)), **prov = calloc(n, sizeof(*prov));
    const char *name = node->base.meta.name;
    int rc = KUBE_OK;

    if (!match || !prov) {
        rc = KUBE_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const char *selected = vb_pvc_selected_node(&c->delay[i]);
        if (selected && strcmp(selected, name) != 0) {
            r->unbound_satisfied = 0; /* fast path: provisioning elsewhere */
            goto out;
        }
        if (selected)
            prov[n_prov++] = &c->delay[i];
        else
            match[n_match++] = &c->delay[i];
    }
    if (n_match > 0)
        rc = find_matching_volumes(c, match, n_match, node, r, prov, &n_prov, err, errlen);
    if (rc == KUBE_OK && n_prov > 0)
        rc = check_volume_provisions(ctx, prov, n_prov, node, r, err, errlen);
out:
    free(match);
    free(prov);
    return rc;
}

int vb_find_pod_volumes(const vb_find_ctx *ctx, const kube_pod *pod, const vb_claims *claims,
                        const kube_node *node, vb_find_result *r, char *err, size_t errlen)
{
    int rc = KUBE_OK;

    memset(r, 0, sizeof(*r));
    r->bound_satisfied = r->unbound_satisfied = r->sufficient_storage = r->bound_pvs_found = 1;
    if (claims->n_bound > 0)
        check_bound_claims(claims, node, r);
    if (claims->n_delay > 0)
        rc = find_unbound(ctx, claims, node, r, err, errlen);
    if (rc != KUBE_OK)
        vb_pod_volumes_free(&r->vols);
    return rc;
}

fw_status *vb_find_result_status(const vb_find_result *r)
{
    const char *reasons[4];
    size_t n = 0;
    fw_status *st;

    if (!r->bound_satisfied)
        reasons[n++] = VB_REASON_NODE_CONFLICT;
    if (!r->unbound_satisfied)
        reasons[n++] = VB_REASON_BIND_CONFLICT;
    if (!r->sufficient_storage)
        reasons[n++] = VB_REASON_NOT_ENOUGH_SPACE;
    if (!r->bound_pvs_found)
        reasons[n++] = VB_REASON_PV_NOT_EXIST;
    if (n == 0)
        return NULL;
    st = fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, reasons[0]);
    for (size_t i = 1; i < n; i++)
        if (fw_status_add_reason(st, reasons[i]) != KUBE_OK)
            break;
    return st;
}

/* ---- GetEligibleNodes ---- */

typedef struct name_set {
    const char **v;
    size_t n;
    int set; /* 0: nil */
} name_set;

static int set_has(const name_set *s, const char *x)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], x) == 0)
            return 1;
    return 0;
}

/* s = s ∩ values (or values when s is nil). s->v has room for them. */
static void set_intersect(name_set *s, const char *const *values, size_t n)
{
    if (!s->set) {
        for (size_t i = 0; i < n; i++)
            if (!set_has(s, values[i]))
                s->v[s->n++] = values[i];
        s->set = 1;
        return;
    }
    size_t w = 0;
    for (size_t i = 0; i < s->n; i++)
        for (size_t j = 0; j < n; j++)
            if (strcmp(s->v[i], values[j]) == 0) {
                s->v[w++] = s->v[i];
                break;
            }
    s->n = w;
}

static size_t count_hostname_values(const kube_node_selector *ns)
{
    size_t total = 0;
    for (size_t t = 0; ns && t < ns->n_terms; t++)
        for (size_t i = 0; i < ns->terms[t].n_match_expressions; i++)
            total += ns->terms[t].match_expressions[i].n_values;
    return total;
}

/* util.GetLocalPersistentVolumeNodeNames into out (room for every value). */
static int local_pv_node_names(const kube_pv *pv, name_set *out)
{
    const kube_node_selector *ns = pv->node_affinity;
    size_t cap = count_hostname_values(ns);
    name_set term = {calloc(cap ? cap : 1, sizeof(char *)), 0, 0};

    if (!term.v)
        return KUBE_ENOMEM;
    out->n = 0;
    for (size_t t = 0; ns && t < ns->n_terms; t++) {
        const kube_node_selector_term *nt = &ns->terms[t];
        term.n = 0;
        term.set = 0;
        for (size_t i = 0; i < nt->n_match_expressions; i++) {
            const kube_requirement *r = &nt->match_expressions[i];
            if (strcmp(r->key, LABEL_HOSTNAME) == 0 && r->op == KUBE_SEL_IN)
                set_intersect(&term, r->values, r->n_values);
        }
        for (size_t i = 0; i < term.n; i++)
            if (!set_has(out, term.v[i]))
                out->v[out->n++] = term.v[i];
    }
    free(term.v);
    return KUBE_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int vb_eligible_nodes(const vb_claims *claims, int *all, const char ***names, size_t *n)
{
    name_set eligible = {NULL, 0, 0}, local = {NULL, 0, 0};
    int rc = KUBE_OK;

    *all = 1;
    *names = NULL;
    *n = 0;
    for (size_t i = 0; i < claims->n_bound; i++)
        if (!claims->bound_pvs[i].obj)
            return KUBE_OK; /* an error finding a PV: no reduction */
    for (size_t i = 0; i < claims->n_bound && rc == KUBE_OK; i++) {
        const kube_pv *pv = vb_pv(&claims->bound_pvs[i]);
        size_t cap = count_hostname_values(pv->node_affinity);
        if (cap == 0)
            continue;
        if (!(local.v = calloc(cap, sizeof(char *)))) {
            rc = KUBE_ENOMEM;
            break;
        }
        if ((rc = local_pv_node_names(pv, &local)) == KUBE_OK && local.n > 0) {
            if (!eligible.set && !(eligible.v = calloc(local.n, sizeof(char *))))
                rc = KUBE_ENOMEM;
            else
                set_intersect(&eligible, local.v, local.n);
        }
        free(local.v);
        local.v = NULL;
    }
    if (rc != KUBE_OK || !eligible.set) {
        free(eligible.v);
        return rc;
    }
    qsort(eligible.v, eligible.n, sizeof(char *), cmp_str);
    *all = 0;
    *names = eligible.v;
    *n = eligible.n;
    return KUBE_OK;
}
