/*
 * scheduler/plugins/volumebinding/listers.c - the PV / PVC / StorageClass /
 * CSINode listers the volume plugins share, one set per informer hub, the
 * change generation and the event subscriptions (see volume_binding.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/types/storage.h"
#include "kube/machinery/store.h"
#include "plugins/volumebinding/volume_binding.h"

/* What an informer's (or a test store's) handlers carry: which source and
 * which kind the events are of. */
typedef struct vol_tag {
    const void *source; /* the hub, or the store-backed listers */
    plugin_vol_kind kind;
    kube_informer_handlers handlers; /* ud = this tag */
    struct vol_tag *next;            /* g_tags (hub tags only) */
} vol_tag;

struct plugin_vol_listers {
    atomic_int refs;
    struct kube_hub *hub;                 /* registry key; NULL: store-backed */
    kube_informer *inf[PLUGIN_VOL_KINDS]; /* owned by the hub */
    kube_store *store[PLUGIN_VOL_KINDS];  /* borrowed */
    vol_tag store_tags[PLUGIN_VOL_KINDS]; /* store-backed: handlers for the stores */
    plugin_vol_listers *next;             /* registry list */
};

typedef struct vol_sub {
    const void *source;
    plugin_vol_event_fn fn;
    void *ud;
    struct vol_sub *next;
} vol_sub;

static pthread_mutex_t g_registry_mu = PTHREAD_MUTEX_INITIALIZER;
static plugin_vol_listers *g_registry;
/* The tags of hub informers live as long as the process: an informer's
 * handlers keep pointing at them until its hub is freed, which may be
 * after the listers are gone (valgrind: still reachable). */
static vol_tag *g_tags;
static pthread_rwlock_t g_subs_lock = PTHREAD_RWLOCK_INITIALIZER;
static vol_sub *g_subs;

static const kube_resource *const kind_res[PLUGIN_VOL_KINDS] = {
    &KUBE_RES_PVS,
    &KUBE_RES_PVCS,
    &KUBE_RES_STORAGECLASSES,
    &KUBE_RES_CSINODES,
};
static const kube_codec *const kind_codec[PLUGIN_VOL_KINDS] = {
    &kube_pv_codec,
    &kube_pvc_codec,
    &kube_storage_class_codec,
    &kube_csi_node_codec,
};

/* ---- change generation ---- */

/* One process-wide generation: a waiter on one hub may wake for another
 * hub's change and simply re-checks. */
static pthread_mutex_t g_gen_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_gen_cv;
static pthread_once_t g_gen_once = PTHREAD_ONCE_INIT;
static uint64_t g_gen;

static void gen_init(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g_gen_cv, &ca);
    pthread_condattr_destroy(&ca);
}

static void bump(void)
{
    pthread_once(&g_gen_once, gen_init);
    pthread_mutex_lock(&g_gen_mu);
    g_gen++;
    pthread_cond_broadcast(&g_gen_cv);
    pthread_mutex_unlock(&g_gen_mu);
}

uint64_t plugin_vol_listers_generation(plugin_vol_listers *l)
{
    pthread_mutex_lock(&g_gen_mu);
    uint64_t g = g_gen;
    pthread_mutex_unlock(&g_gen_mu);
    return g;
}

int plugin_vol_listers_wait(plugin_vol_listers *l, uint64_t *gen, long timeout_ms)
{
    struct timespec until;
    int changed;

    pthread_once(&g_gen_once, gen_init);
    kube_deadline_after(&until, CLOCK_MONOTONIC, timeout_ms);
    pthread_mutex_lock(&g_gen_mu);
    while (g_gen == *gen && pthread_cond_timedwait(&g_gen_cv, &g_gen_mu, &until) == 0)
        ;
    changed = g_gen != *gen;
    *gen = g_gen;
    pthread_mutex_unlock(&g_gen_mu);
    return changed;
}

/* ---- events ---- */

static void dispatch(const vol_tag *t, kube_object *old_obj, kube_object *new_obj)
{
    if (t->kind == PLUGIN_VOL_PV || t->kind == PLUGIN_VOL_PVC)
        bump();
    pthread_rwlock_rdlock(&g_subs_lock);
    for (vol_sub *s = g_subs; s; s = s->next)
        if (s->source == t->source)
            s->fn(s->ud, t->kind, old_obj, new_obj);
    pthread_rwlock_unlock(&g_subs_lock);
}

static void on_add(void *ud, kube_object *obj)
{
    dispatch(ud, NULL, obj);
}

static void on_update(void *ud, kube_object *old_obj, kube_object *new_obj)
{
    dispatch(ud, old_obj, new_obj);
}

static void on_delete(void *ud, kube_object *obj)
{
    dispatch(ud, obj, NULL);
}

static void tag_init(vol_tag *t, const void *source, plugin_vol_kind k)
{
    t->source = source;
    t->kind = k;
    t->handlers = (kube_informer_handlers){on_add, on_update, on_delete, t};
}

const kube_informer_handlers *plugin_vol_listers_handlers(plugin_vol_listers *l, plugin_vol_kind k)
{
    return &l->store_tags[k].handlers;
}

int plugin_vol_listers_subscribe(const void *source, plugin_vol_event_fn fn, void *ud)
{
    vol_sub *s = calloc(1, sizeof(*s));

    if (!s)
        return KUBE_ENOMEM;
    s->source = source;
    s->fn = fn;
    s->ud = ud;
    pthread_rwlock_wrlock(&g_subs_lock);
    s->next = g_subs;
    g_subs = s;
    pthread_rwlock_unlock(&g_subs_lock);
    return KUBE_OK;
}

void plugin_vol_listers_unsubscribe(const void *source, plugin_vol_event_fn fn, void *ud)
{
    pthread_rwlock_wrlock(&g_subs_lock);
    for (vol_sub **p = &g_subs; *p; p = &(*p)->next) {
        vol_sub *s = *p;
        if (s->source == source && s->fn == fn && s->ud == ud) {
            *p = s->next;
            free(s);
            break;
        }
    }
    pthread_rwlock_unlock(&g_subs_lock);
}

/* ---- construction ---- */

static plugin_vol_listers *listers_alloc(void)
{
    plugin_vol_listers *l = calloc(1, sizeof(*l));

    if (l)
        atomic_init(&l->refs, 1);
    return l;
}

/* Adds the four informers, each with handlers tagged (hub, kind). Called
 * with g_registry_mu held. */
static int add_informers(plugin_vol_listers *l, struct kube_hub *hub)
{
    for (int k = 0; k < PLUGIN_VOL_KINDS; k++) {
        kube_informer_options o = {0};
        vol_tag *t = calloc(1, sizeof(*t));
        int rc;
        if (!t)
            return KUBE_ENOMEM;
        tag_init(t, hub, (plugin_vol_kind)k);
        t->next = g_tags;
        g_tags = t;
        o.resource = kind_res[k];
        o.codec = kind_codec[k];
        if ((rc = kube_hub_add_informer(hub, &o, &t->handlers, &l->inf[k])) != KUBE_OK)
            return rc;
    }
    return KUBE_OK;
}

int plugin_vol_listers_acquire(struct kube_hub *hub, plugin_vol_listers **out)
{
    plugin_vol_listers *l;
    int rc = KUBE_OK;

    *out = NULL;
    if (!hub)
        return KUBE_EINVAL;
    pthread_mutex_lock(&g_registry_mu);
    for (l = g_registry; l && l->hub != hub; l = l->next)
        ;
    if (l) {
        atomic_fetch_add(&l->refs, 1);
    } else if (!(l = listers_alloc())) {
        rc = KUBE_ENOMEM;
    } else if ((rc = add_informers(l, hub)) != KUBE_OK) {
        free(l); /* informers added so far stay with the hub, unread */
        l = NULL;
    } else {
        l->hub = hub;
        l->next = g_registry;
        g_registry = l;
    }
    pthread_mutex_unlock(&g_registry_mu);
    *out = l;
    return rc;
}

int plugin_vol_listers_from_stores(struct kube_store *const stores[PLUGIN_VOL_KINDS],
                                   plugin_vol_listers **out)
{
    plugin_vol_listers *l = listers_alloc();

    *out = l;
    if (!l)
        return KUBE_ENOMEM;
    for (int k = 0; k < PLUGIN_VOL_KINDS; k++) {
        l->store[k] = stores[k];
        tag_init(&l->store_tags[k], l, (plugin_vol_kind)k);
    }
    return KUBE_OK;
}

plugin_vol_listers *plugin_vol_listers_ref(plugin_vol_listers *l)
{
    atomic_fetch_add(&l->refs, 1);
    return l;
}

static void unlink_registry(plugin_vol_listers *l)
{
    for (plugin_vol_listers **p = &g_registry; *p; p = &(*p)->next) {
        if (*p == l) {
            *p = l->next;
            return;
        }
    }
}

void plugin_vol_listers_release(plugin_vol_listers *l)
{
    if (!l)
        return;
    if (!l->hub) {
        if (atomic_fetch_sub(&l->refs, 1) == 1)
            free(l);
        return;
    }
    pthread_mutex_lock(&g_registry_mu);
    int last = atomic_fetch_sub(&l->refs, 1) == 1;
    if (last)
        unlink_registry(l);
    pthread_mutex_unlock(&g_registry_mu);
    if (last)
        free(l);
}

/* ---- reads ---- */

kube_object *plugin_vol_listers_get(plugin_vol_listers *l, plugin_vol_kind k, const char *ns,
                                    const char *name)
{
    if (l->inf[k])
        return kube_informer_get(l->inf[k], ns ? ns : "", name);
    return l->store[k] ? kube_store_get(l->store[k], ns ? ns : "", name) : NULL;
}

void plugin_vol_listers_foreach(plugin_vol_listers *l, plugin_vol_kind k,
                                void (*fn)(void *ud, kube_object *obj), void *ud)
{
    if (l->inf[k])
        kube_informer_foreach(l->inf[k], fn, ud);
    else if (l->store[k])
        kube_store_foreach(l->store[k], fn, ud);
}

/* ---- plugin creation ---- */

int plugin_vol_create(const cJSON *args, fw_handle *h, plugin_vol_new_fn new_fn, void **self,
                      char *err, size_t errlen)
{
    struct kube_store *none[PLUGIN_VOL_KINDS] = {NULL};
    plugin_vol_listers *l;
    int rc = h->svc.hub ? plugin_vol_listers_acquire(h->svc.hub, &l)
                        : plugin_vol_listers_from_stores(none, &l);

    *self = NULL;
    if (rc != KUBE_OK) {
        snprintf(err, errlen, "adding the volume informers: %s", kube_strerror(rc));
        return rc;
    }
    rc = new_fn(args, h, l, self, err, errlen);
    plugin_vol_listers_release(l);
    return rc;
}
