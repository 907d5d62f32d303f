/*
 * apiserver/vmpins_watch.c - watch on virtualmachinepins: the history of
 * the VM informer's changes and of the Node changes that change a pin's
 * status.nodeStatus, the watchers and their events. The contract
 * is in vmpins_watch.h.
 */
#include "vmpins_watch.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/serving/status.h"
#include "kube/util/array.h"
#include "kube/util/clock.h"
#include "kube/types/pin.h"
#include "kube/util/errors.h"
#include "request.h"

#define HISTORY 1024                /* changes kept for watches from a resourceVersion */
#define BOOKMARK_EVERY_MS 60000     /* the cacher's bookmarkFrequency */
#define BOOKMARK_BEFORE_END_MS 2000 /* and one this long before the deadline */
#define TICK_MS 250
#define CT_JSON "application/json"

/* One change: old NULL for an add, cur NULL for a delete. by_node: the
 * VM (old and cur) did not change, its pinned node did, from node_old to
 * node_cur (NULL: no such Node). */
typedef struct change {
    kube_object *old, *cur;
    uint64_t rv;
    int by_node;
    kube_object *node_old, *node_cur;
} change;

typedef struct watcher watcher;
struct watcher {
    watcher *next;
    apis_vmwatch *w;
    kube_stream *stream;
    char ns[256];
    apis_vmpins_format format;
    apis_vmpins_filter filter;
    int events; /* sent so far */
    int64_t deadline_ms;
    int64_t next_bookmark_ms; /* 0: none (allowWatchBookmarks unset, or too late) */
};

struct apis_vmwatch {
    pthread_mutex_t mu;
    const apis_vmpins_world *world;
    kube_lister *vms, *nodes;
    change ring[HISTORY];
    size_t head, n;
    /* the history covers every change after floor: once synced, the
     * informer's resourceVersion then (or just before the first change),
     * then the last change the ring dropped */
    uint64_t floor;
    int floor_set;
    watcher *watchers;
    pthread_t ticker; /* sends the bookmarks */
    pthread_cond_t cv;
    int stop;
};

/* ---- bookmarks ---- */

/* When the next BOOKMARK is due, as the cacher's nextBookmarkTime: every
 * minute and 2 s before the deadline; 0 when none is left. */
static int64_t next_bookmark(int64_t now, int64_t deadline)
{
    int64_t at = now + BOOKMARK_EVERY_MS, before_end = deadline - BOOKMARK_BEFORE_END_MS;

    if (before_end < at)
        at = before_end;
    return at < now ? 0 : at;
}

/* A BOOKMARK: the kind and the store's resourceVersion alone (w->mu
 * held). */
static void bookmark(apis_vmwatch *w, watcher *wt)
{
    char rv[32], ev[256];
    int n;

    kube_lister_last_rv(w->vms, rv, sizeof(rv));
    n = snprintf(ev, sizeof(ev),
                 "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"" APIS_VMPIN_KIND
                 "\",\"apiVersion\":\"" APIS_GROUP_VERSION
                 "\",\"metadata\":{\"resourceVersion\":\"%s\"}}}\n",
                 rv);
    if (n > 0 && (size_t)n < sizeof(ev))
        kube_stream_write(wt->stream, ev, (size_t)n);
}

/* Sends the bookmarks due (w->mu held). */
static void tick(apis_vmwatch *w)
{
    int64_t now = kube_now_ms();

    for (watcher *wt = w->watchers; wt; wt = wt->next)
        if (wt->next_bookmark_ms && now >= wt->next_bookmark_ms) {
            bookmark(w, wt);
            wt->next_bookmark_ms = next_bookmark(now + 1, wt->deadline_ms);
        }
}

static void *tick_loop(void *arg)
{
    apis_vmwatch *w = arg;
    struct timespec ts;

    pthread_setname_np(pthread_self(), "apis-vmpins");
    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += TICK_MS * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
        if (!w->stop)
            tick(w);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int apis_vmwatch_new(const apis_vmpins_world *world, apis_vmwatch **out)
{
    apis_vmwatch *w = calloc(1, sizeof(*w));

    *out = NULL;
    if (!w)
        return KUBE_ENOMEM;
    w->world = world;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pthread_create(&w->ticker, NULL, tick_loop, w) != 0) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return KUBE_ENOMEM;
    }
    *out = w;
    return KUBE_OK;
}

static void watcher_free(watcher *wt)
{
    kube_stream_unref(wt->stream);
    apis_vmpins_filter_free(&wt->filter);
    free(wt);
}

static void change_clear(change *c)
{
    kube_object_unref(c->old);
    kube_object_unref(c->cur);
    kube_object_unref(c->node_old);
    kube_object_unref(c->node_cur);
    memset(c, 0, sizeof(*c));
}

void apis_vmwatch_free(apis_vmwatch *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->ticker, NULL);
    while (w->watchers) {
        watcher *next = w->watchers->next;
        watcher_free(w->watchers);
        w->watchers = next;
    }
    for (size_t i = 0; i < HISTORY; i++)
        change_clear(&w->ring[i]);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

void apis_vmwatch_set_listers(apis_vmwatch *w, kube_lister *vms, kube_lister *nodes)
{
    w->vms = vms;
    w->nodes = nodes;
}

static uint64_t rv_of(const kube_object *o)
{
    const char *rv = o ? o->meta.resource_version : NULL;

    return rv ? strtoull(rv, NULL, 10) : 0;
}

/* ---- events to one watcher (w->mu held) ---- */

static int selected(const watcher *wt, const kube_object *obj, const apis_vmpins_world *world)
{
    const kube_vm *vm = kube_vm_from((kube_object *)obj);

    if (!vm || (wt->ns[0] && strcmp(obj->meta.namespace_, wt->ns) != 0))
        return 0;
    return apis_vmpins_filter_matches(&wt->filter, vm, world);
}

/* Sends one event; a stream already cancelled is left to its callback. */
static void send_event(watcher *wt, const char *type, const kube_object *obj, const char *rv,
                       const apis_vmpins_world *world)
{
    kube_buf b = KUBE_BUF_INIT;

    if (apis_vmpins_render_event(type, kube_vm_from((kube_object *)obj), world, rv, &wt->format,
                                 wt->events == 0, (int64_t)time(NULL), &b) == KUBE_OK &&
        kube_stream_write(wt->stream, b.data, b.len) == KUBE_OK)
        wt->events++;
    kube_buf_free(&b);
}

/* The world as it was on one side of a by_node change: the pinned node
 * is the one the change recorded. */
typedef struct node_side {
    const apis_vmpins_world *base;
    const char *name;
    kube_object *node;
} node_side;

static kube_object *side_node(void *ud, const char *name)
{
    const node_side *s = ud;

    if (strcmp(name, s->name) != 0)
        return s->base->node(s->base->ud, name);
    return s->node ? kube_object_ref(s->node) : NULL;
}

static kube_object *side_pod(void *ud, const kube_vm *vm)
{
    const node_side *s = ud;

    return s->base->pod(s->base->ud, vm);
}

/* The world of one side (node: that side's Node) of a by_node change of
 * the VM vm, or the live world for a change of the VM itself. */
static apis_vmpins_world side_world(const apis_vmwatch *w, const change *c, kube_object *node,
                                    node_side *s)
{
    const char *name = c->by_node ? kube_pin_get(kube_vm_from(c->cur), w->world->key) : NULL;
    apis_vmpins_world side = *w->world;

    if (!name)
        return side;
    *s = (node_side){w->world, name, node};
    side.node = side_node;
    side.pod = side_pod;
    side.ud = s;
    return side;
}

/* The change as this watcher's selection sees it (the cacher's filter). */
static void deliver(watcher *wt, const change *c)
{
    node_side sb, sa;
    apis_vmpins_world before = side_world(wt->w, c, c->node_old, &sb),
                      after = side_world(wt->w, c, c->node_cur, &sa);
    int was = c->old && selected(wt, c->old, &before), is = c->cur && selected(wt, c->cur, &after);
    char rv[32];

    snprintf(rv, sizeof(rv), "%llu", (unsigned long long)c->rv);
    if (was && is)
        send_event(wt, "MODIFIED", c->cur, c->by_node ? rv : NULL, &after);
    else if (is)
        send_event(wt, "ADDED", c->cur, c->by_node ? rv : NULL, &after);
    else if (was)
        send_event(wt, "DELETED", c->old, rv, &before);
}

/* ---- the informer's side ---- */

/* Sets the floor once synced (w->mu held): the informer's resourceVersion,
 * lowered to just before first_change (0: none yet), the first change
 * recorded, which that resourceVersion may already count. */
static void settle_floor(apis_vmwatch *w, uint64_t first_change)
{
    char rv[32];
    uint64_t floor;

    if (w->floor_set)
        return;
    kube_lister_last_rv(w->vms, rv, sizeof(rv));
    floor = strtoull(rv, NULL, 10);
    if (first_change && first_change - 1 < floor)
        floor = first_change - 1;
    w->floor = floor;
    w->floor_set = 1;
}

/* Appends c (taken over) to the history and delivers it. */
static void record_change(apis_vmwatch *w, change c)
{
    change *slot;

    pthread_mutex_lock(&w->mu);
    if (!kube_lister_has_synced(w->vms) || !kube_lister_has_synced(w->nodes)) { /* the first list */
        pthread_mutex_unlock(&w->mu);
        change_clear(&c);
        return;
    }
    settle_floor(w, c.rv);
    slot = &w->ring[(w->head + w->n) % HISTORY];
    if (w->n == HISTORY) { /* the oldest leaves the history */
        w->floor = slot->rv;
        change_clear(slot);
        w->head = (w->head + 1) % HISTORY;
    } else {
        w->n++;
    }
    *slot = c;
    for (watcher *wt = w->watchers; wt; wt = wt->next)
        deliver(wt, slot);
    pthread_mutex_unlock(&w->mu);
}

static void record(apis_vmwatch *w, kube_object *old, kube_object *cur)
{
    change c = {old ? kube_object_ref(old) : NULL,
                cur ? kube_object_ref(cur) : NULL,
                rv_of(cur ? cur : old),
                0,
                NULL,
                NULL};

    record_change(w, c);
}

static void on_add(void *ud, kube_object *obj)
{
    record(ud, NULL, obj);
}

static void on_update(void *ud, kube_object *old, kube_object *obj)
{
    record(ud, old, obj);
}

static void on_delete(void *ud, kube_object *obj)
{
    record(ud, obj, NULL);
}

kube_informer_handlers apis_vmwatch_handlers(apis_vmwatch *w)
{
    kube_informer_handlers h = {on_add, on_update, on_delete, w};
    return h;
}

/* ---- the Node informer's side ---- */

/* The VMs pinned to one node (references). */
typedef struct pinned {
    const char *key, *node;
    kube_object **vms;
    size_t n, cap;
} pinned;

static void collect_pinned(void *ud, kube_object *obj)
{
    pinned *p = ud;
    const char *node = kube_pin_get(kube_vm_from(obj), p->key);

    if (node && strcmp(node, p->node) == 0 &&
        KUBE_ARRAY_RESERVE(p->vms, p->cap, p->n + 1) == KUBE_OK)
        p->vms[p->n++] = kube_object_ref(obj);
}

/* A Node went from old to cur (either NULL: created, deleted): when its
 * status in kubectl's words changed, a change of every VM pinned to it.
 * The VMs are collected before w->mu is taken (begin() takes the store's
 * lock under w->mu). */
static void node_changed(apis_vmwatch *w, kube_object *old, kube_object *cur)
{
    char was[KUBE_NODE_STATUS_MAX], is[KUBE_NODE_STATUS_MAX];
    pinned p = {w->world->key, (cur ? cur : old)->meta.name, NULL, 0, 0};
    uint64_t rv = rv_of(cur ? cur : old);

    if (!kube_lister_has_synced(w->vms) || !kube_lister_has_synced(w->nodes))
        return; /* the first lists: no watcher yet, nothing recorded */
    if (kube_node_status(kube_node_from(old), was, sizeof(was)) != KUBE_OK ||
        kube_node_status(kube_node_from(cur), is, sizeof(is)) != KUBE_OK || !strcmp(was, is))
        return;
    kube_lister_foreach(w->vms, collect_pinned, &p);
    for (size_t i = 0; i < p.n; i++) {
        change c = {p.vms[i], kube_object_ref(p.vms[i]),         rv,
                    1,        old ? kube_object_ref(old) : NULL, cur ? kube_object_ref(cur) : NULL};
        record_change(w, c);
    }
    free(p.vms);
}

static void on_node_add(void *ud, kube_object *obj)
{
    node_changed(ud, NULL, obj);
}

static void on_node_update(void *ud, kube_object *old, kube_object *obj)
{
    node_changed(ud, old, obj);
}

static void on_node_delete(void *ud, kube_object *obj)
{
    node_changed(ud, obj, NULL);
}

kube_informer_handlers apis_vmwatch_node_handlers(apis_vmwatch *w)
{
    kube_informer_handlers h = {on_node_add, on_node_update, on_node_delete, w};
    return h;
}

/* ---- one watch ---- */

/* The stream's cancel callback (server thread), once, however the watch
 * ended: the watcher leaves and is freed. */
static void cancelled(void *ud)
{
    watcher *wt = ud;
    apis_vmwatch *w = wt->w;

    pthread_mutex_lock(&w->mu);
    for (watcher **p = &w->watchers; *p; p = &(*p)->next)
        if (*p == wt) {
            *p = wt->next;
            break;
        }
    pthread_mutex_unlock(&w->mu);
    watcher_free(wt);
}

static void added(void *ud, kube_object *obj)
{
    watcher *wt = ud;

    if (selected(wt, obj, wt->w->world))
        send_event(wt, "ADDED", obj, NULL, wt->w->world);
}

/* The ERROR event of a resourceVersion older than the history. */
static void expired(watcher *wt, uint64_t from, uint64_t floor)
{
    kube_buf st = KUBE_BUF_INIT, ev = KUBE_BUF_INIT;
    char msg[96];

    snprintf(msg, sizeof(msg), "too old resource version: %llu (%llu)", (unsigned long long)from,
             (unsigned long long)floor);
    if (kube_status_json(&st, 410, "Expired", msg, NULL) == KUBE_OK) {
        while (st.len && st.data[st.len - 1] == '\n')
            st.data[--st.len] = '\0';
        if (kube_buf_printf(&ev, "{\"type\":\"ERROR\",\"object\":%s}\n", st.data) == KUBE_OK)
            kube_stream_write(wt->stream, ev.data, ev.len);
    }
    kube_stream_end(wt->stream);
    kube_buf_free(&st);
    kube_buf_free(&ev);
}

/* Sends what the watch starts with; 0 when it ended there (410). */
static int begin(apis_vmwatch *w, watcher *wt, int from_now, uint64_t from)
{
    uint64_t floor;

    if (from_now) {
        kube_lister_foreach(w->vms, added, wt);
        return 1;
    }
    settle_floor(w, 0);
    floor = w->floor;
    if (from < floor) {
        expired(wt, from, floor);
        return 0;
    }
    for (size_t i = 0; i < w->n; i++) {
        const change *c = &w->ring[(w->head + i) % HISTORY];
        if (c->rv > from)
            deliver(wt, c);
    }
    return 1;
}

/* resourceVersion: "" and "0" start from the store, a number from the
 * history. */
static int parse_rv(const char *s, int *from_now, uint64_t *from)
{
    char *end;

    *from_now = !s || !*s || !strcmp(s, "0");
    *from = 0;
    if (*from_now)
        return KUBE_OK;
    *from = strtoull(s, &end, 10);
    return *end || *s == '-' ? KUBE_EBADREQUEST : KUBE_OK;
}

static const char *content_type(const apis_vmpins_format *f)
{
    if (!f->table_version)
        return CT_JSON;
    return strcmp(f->table_version, "v1") == 0
               ? "application/json;as=Table;v=v1;g=meta.k8s.io"
               : "application/json;as=Table;v=v1beta1;g=meta.k8s.io";
}

int apis_vmwatch_start(apis_vmwatch *w, apis_vmwatch_request *r, kube_exchange *x)
{
    watcher *wt;
    uint64_t from;
    int from_now, rc = parse_rv(r->resource_version, &from_now, &from);

    if (rc != KUBE_OK || !(wt = calloc(1, sizeof(*wt)))) {
        apis_vmpins_filter_free(&r->filter);
        return rc != KUBE_OK ? rc : KUBE_ENOMEM;
    }
    wt->w = w;
    kube_strlcpy(wt->ns, r->namespace_ ? r->namespace_ : "", sizeof(wt->ns));
    wt->format = r->format;
    wt->deadline_ms = kube_now_ms() + r->timeout_s * 1000;
    if (r->bookmarks && !wt->format.table_version)
        wt->next_bookmark_ms = next_bookmark(kube_now_ms(), wt->deadline_ms);
    wt->filter = r->filter;
    memset(&r->filter, 0, sizeof(r->filter));
    rc = kube_exchange_stream(x, 200, content_type(&wt->format), wt->deadline_ms, cancelled, wt,
                              &wt->stream);
    if (rc != KUBE_OK) {
        watcher_free(wt);
        return rc;
    }
    pthread_mutex_lock(&w->mu);
    if (begin(w, wt, from_now, from)) {
        wt->next = w->watchers;
        w->watchers = wt;
    }
    pthread_mutex_unlock(&w->mu);
    return KUBE_OK;
}
