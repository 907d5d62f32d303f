/*
 * scheduler/plugins/volumebinding/cache.c - VolumeBinding's assume cache:
 * overlays on the informers' PVs and PVCs (see volume_binding_int.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/array.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "plugins/volumebinding/internal.h"

/* ---- overlays ---- */

static char *put_str(char **p, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = *p;
    memcpy(d, s, n);
    *p += n;
    return d;
}

vb_overlay *vb_overlay_pv(int64_t rv, const char *ns, const char *name, const char *uid,
                          int bound_by_controller)
{
    size_t sz = sizeof(vb_overlay) + strlen(ns) + strlen(name) + strlen(uid) + 3;
    vb_overlay *ov = calloc(1, sz);
    char *p;

    if (!ov)
        return NULL;
    atomic_init(&ov->refs, 1);
    ov->rv = rv;
    ov->bound_by_controller = bound_by_controller;
    p = (char *)(ov + 1);
    ov->claim.namespace_ = put_str(&p, ns);
    ov->claim.name = put_str(&p, name);
    ov->claim.uid = put_str(&p, uid);
    return ov;
}

vb_overlay *vb_overlay_pvc(int64_t rv, const char *selected_node)
{
    vb_overlay *ov = calloc(1, sizeof(vb_overlay) + strlen(selected_node) + 1);
    char *p;

    if (!ov)
        return NULL;
    atomic_init(&ov->refs, 1);
    ov->rv = rv;
    p = (char *)(ov + 1);
    ov->selected_node = put_str(&p, selected_node);
    return ov;
}

static vb_overlay *overlay_ref(vb_overlay *ov)
{
    if (ov)
        atomic_fetch_add(&ov->refs, 1);
    return ov;
}

void vb_overlay_unref(vb_overlay *ov)
{
    if (ov && atomic_fetch_sub(&ov->refs, 1) == 1)
        free(ov);
}

/* ---- views ---- */

void vb_view_copy(vb_view *dst, const vb_view *src)
{
    dst->obj = kube_object_ref(src->obj);
    dst->ov = overlay_ref(src->ov);
}

void vb_view_clear(vb_view *v)
{
    kube_object_unref(v->obj);
    vb_overlay_unref(v->ov);
    v->obj = NULL;
    v->ov = NULL;
}

void vb_views_free(vb_view *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        vb_view_clear(&v[i]);
    free(v);
}

const kube_claim_ref *vb_pv_claim(const vb_view *v)
{
    const kube_pv *pv = vb_pv(v);
    if (v->ov)
        return &v->ov->claim;
    return pv ? pv->claim_ref : NULL;
}

const char *vb_pvc_selected_node(const vb_view *v)
{
    if (v->ov && v->ov->selected_node)
        return v->ov->selected_node;
    return v->obj ? kube_meta_annotation(&v->obj->meta, KUBE_ANN_SELECTED_NODE) : NULL;
}

static int64_t rv_of(const kube_object *obj)
{
    int64_t rv;
    if (!obj || kube_parse_int64(obj->meta.resource_version, 0, INT64_MAX, &rv) != KUBE_OK)
        return -1;
    return rv;
}

int64_t vb_view_rv(const vb_view *v)
{
    return rv_of(v->obj);
}

/* ---- the cache ---- */

void vb_cache_init(vb_cache *c, plugin_vol_listers *l)
{
    memset(c, 0, sizeof(*c));
    c->l = l;
    pthread_mutex_init(&c->mu, NULL);
}

static void free_overlay_value(void *ud, const char *key, void *value)
{
    vb_overlay_unref(value);
}

void vb_cache_destroy(vb_cache *c)
{
    for (int k = 0; k < 2; k++) {
        kube_strmap_foreach(&c->ov[k], free_overlay_value, NULL);
        kube_strmap_free(&c->ov[k]);
    }
    pthread_mutex_destroy(&c->mu);
}

static void cache_key(plugin_vol_kind k, const kube_object *obj, char *out, size_t n)
{
    if (k == PLUGIN_VOL_PVC)
        snprintf(out, n, "%s/%s", obj->meta.namespace_, obj->meta.name);
    else
        snprintf(out, n, "%s", obj->meta.name);
}

/* The overlay of obj while still current (a reference), dropping a stale
 * one. Called with the lock held. */
static vb_overlay *current_overlay(vb_cache *c, plugin_vol_kind k, const kube_object *obj)
{
    char key[600];
    vb_overlay *ov;

    cache_key(k, obj, key, sizeof(key));
    if (!(ov = kube_strmap_get(&c->ov[k], key)))
        return NULL;
    if (ov->rv == rv_of(obj))
        return overlay_ref(ov);
    if (ov->rv < rv_of(obj))
        vb_overlay_unref(kube_strmap_del(&c->ov[k], key));
    return NULL;
}

int vb_cache_get_api(vb_cache *c, plugin_vol_kind k, const char *ns, const char *name, vb_view *out)
{
    out->ov = NULL;
    out->obj = plugin_vol_listers_get(c->l, k, k == PLUGIN_VOL_PVC ? ns : "", name);
    return out->obj ? KUBE_OK : KUBE_ENOTFOUND;
}

int vb_cache_get(vb_cache *c, plugin_vol_kind k, const char *ns, const char *name, vb_view *out)
{
    int rc = vb_cache_get_api(c, k, ns, name, out);

    if (rc != KUBE_OK)
        return rc;
    pthread_mutex_lock(&c->mu);
    out->ov = current_overlay(c, k, out->obj);
    pthread_mutex_unlock(&c->mu);
    return KUBE_OK;
}

typedef struct list_ctx {
    const char *storage_class;
    vb_view *v;
    size_t n, cap;
    int oom;
} list_ctx;

static void collect_pv(void *ud, kube_object *obj)
{
    list_ctx *lc = ud;
    const kube_pv *pv = kube_pv_from(obj);

    if (!pv || strcmp(kube_pv_class(pv), lc->storage_class) != 0 || lc->oom)
        return;
    if (KUBE_ARRAY_RESERVE(lc->v, lc->cap, lc->n + 1) != KUBE_OK) {
        lc->oom = 1;
        return;
    }
    lc->v[lc->n].obj = kube_object_ref(obj);
    lc->v[lc->n++].ov = NULL;
}

static int by_name(const void *a, const void *b)
{
    const vb_view *x = a, *y = b;
    return strcmp(x->obj->meta.name, y->obj->meta.name);
}

int vb_cache_list_pvs(vb_cache *c, const char *storage_class, vb_view **out, size_t *n)
{
    list_ctx lc = {storage_class, NULL, 0, 0, 0};

    plugin_vol_listers_foreach(c->l, PLUGIN_VOL_PV, collect_pv, &lc);
    if (lc.oom) {
        vb_views_free(lc.v, lc.n);
        *out = NULL;
        *n = 0;
        return KUBE_ENOMEM;
    }
    if (lc.n > 1)
        qsort(lc.v, lc.n, sizeof(*lc.v), by_name);
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < lc.n; i++)
        lc.v[i].ov = current_overlay(c, PLUGIN_VOL_PV, lc.v[i].obj);
    pthread_mutex_unlock(&c->mu);
    *out = lc.v;
    *n = lc.n;
    return KUBE_OK;
}

static const char *description(plugin_vol_kind k)
{
    return k == PLUGIN_VOL_PVC ? "v1.PersistentVolumeClaim" : "v1.PersistentVolume";
}

int vb_cache_assume(vb_cache *c, plugin_vol_kind k, const vb_view *base, vb_overlay *ov, char *err,
                    size_t errlen)
{
    const kube_meta *m = &base->obj->meta;
    char key[600];
    vb_view cur;
    void *old = NULL;
    int rc;

    cache_key(k, base->obj, key, sizeof(key));
    if (vb_cache_get(c, k, m->namespace_, m->name, &cur) != KUBE_OK) {
        snprintf(err, errlen, "could not find %s \"%s\"", description(k), key);
        return KUBE_ENOTFOUND;
    }
    int64_t stored = vb_view_rv(&cur), assumed = vb_view_rv(base);
    vb_view_clear(&cur);
    if (assumed < stored) {
        snprintf(err, errlen, "%s \"%s\" is out of sync (stored: %lld, assume: %lld)",
                 description(k), key, (long long)stored, (long long)assumed);
        return KUBE_ECONFLICT;
    }
    pthread_mutex_lock(&c->mu);
    rc = kube_strmap_put(&c->ov[k], key, overlay_ref(ov), &old);
    pthread_mutex_unlock(&c->mu);
    if (rc != KUBE_OK) {
        vb_overlay_unref(ov);
        snprintf(err, errlen, "%s", kube_strerror(rc));
        return rc;
    }
    vb_overlay_unref(old);
    return KUBE_OK;
}

void vb_cache_restore(vb_cache *c, plugin_vol_kind k, const vb_view *base)
{
    char key[600];

    if (!base->obj)
        return;
    cache_key(k, base->obj, key, sizeof(key));
    pthread_mutex_lock(&c->mu);
    vb_overlay_unref(kube_strmap_del(&c->ov[k], key));
    pthread_mutex_unlock(&c->mu);
}
