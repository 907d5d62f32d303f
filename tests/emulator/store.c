/*
 * tests/emulator/store.c - the object store: one map of current objects per
 * resource, ONE global resourceVersion counter (like etcd's revision), and a
 * bounded ring of the last events of all resources (the watch history, which
 * doubles as the compaction window for continue tokens and Exact lists).
 *
 * Every version of an object is an immutable, reference-counted emu_obj
 * serialized once when it is written; lists and watchers share it.
 *
 * Locking: one rwlock guards the maps, the counter and the ring. Writers
 * hold it exclusively for the read-modify-write of one object (as
 * GuaranteedUpdate does). Watchers are woken through a separate
 * mutex/condition so they never hold the store lock while writing to a
 * socket.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu_internal.h"
#include "kube/util/array.h"
#include "kube/util/clock.h"
#include "kube/util/hash.h"
#include "kube/util/log.h"

/* ------------------------------------------------------------------ */
/* A string-keyed hash map of objects                                  */
/* ------------------------------------------------------------------ */

typedef struct map_entry {
    emu_obj *obj; /* the key is obj->key */
    struct map_entry *next;
} map_entry;

typedef struct emu_map {
    map_entry **buckets;
    size_t nb;
    size_t n;
} emu_map;

static uint64_t hash_str(const char *s)
{
    return kube_fnv1a_str(KUBE_FNV1A_INIT, s);
}

static emu_map *map_new(void)
{
    emu_map *m = calloc(1, sizeof(*m));

    if (!m)
        return NULL;
    m->nb = 64;
    m->buckets = calloc(m->nb, sizeof(*m->buckets));
    if (!m->buckets) {
        free(m);
        return NULL;
    }
    return m;
}

static void map_free(emu_map *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nb; i++) {
        map_entry *e = m->buckets[i];
        while (e) {
            map_entry *next = e->next;
            emu_obj_unref(e->obj);
            free(e);
            e = next;
        }
    }
    free(m->buckets);
    free(m);
}

static map_entry **map_slot(emu_map *m, const char *key)
{
    map_entry **e = &m->buckets[hash_str(key) & (m->nb - 1)];

    while (*e && strcmp((*e)->obj->key, key) != 0)
        e = &(*e)->next;
    return e;
}

static emu_obj *map_get(emu_map *m, const char *key)
{
    map_entry **e = map_slot(m, key);

    return *e ? (*e)->obj : NULL;
}

static void map_grow(emu_map *m)
{
    size_t nb = m->nb * 2;
    map_entry **b = calloc(nb, sizeof(*b));

    if (!b)
        return; /* keep working with longer chains */
    for (size_t i = 0; i < m->nb; i++) {
        map_entry *e = m->buckets[i];
        while (e) {
            map_entry *next = e->next;
            size_t j = hash_str(e->obj->key) & (nb - 1);
            e->next = b[j];
            b[j] = e;
            e = next;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->nb = nb;
}

/* Stores obj (taking over the caller's reference), replacing any previous
 * version (whose reference is dropped). */
static int map_put(emu_map *m, emu_obj *obj)
{
    map_entry **e = map_slot(m, obj->key);

    if (*e) {
        emu_obj_unref((*e)->obj);
        (*e)->obj = obj;
        return KUBE_OK;
    }
    *e = calloc(1, sizeof(**e));
    if (!*e)
        return KUBE_ENOMEM;
    (*e)->obj = obj;
    if (++m->n > m->nb)
        map_grow(m);
    return KUBE_OK;
}

static void map_del(emu_map *m, const char *key)
{
    map_entry **e = map_slot(m, key), *dead = *e;

    if (!dead)
        return;
    *e = dead->next;
    emu_obj_unref(dead->obj);
    free(dead);
    m->n--;
}

/* ------------------------------------------------------------------ */
/* Objects                                                             */
/* ------------------------------------------------------------------ */

void emu_obj_ref(emu_obj *o)
{
    if (o)
        atomic_fetch_add(&o->refs, 1);
}

void emu_obj_unref(emu_obj *o)
{
    if (!o || atomic_fetch_sub(&o->refs, 1) != 1)
        return;
    free(o->key);
    free(o->uid);
    free(o->json);
    for (size_t i = 0; i < o->n_labels; i++) {
        free(o->label_keys[i]);
        free(o->label_vals[i]);
    }
    free(o->label_keys);
    free(o->label_vals);
    for (size_t i = 0; i < EMU_MAX_FIELDS; i++)
        free(o->field_vals[i]);
    free(o);
}

cJSON *emu_obj_tree(const emu_obj *o)
{
    return cJSON_ParseWithLength(o->json, o->len);
}

static int obj_labels(emu_obj *o, const cJSON *tree)
{
    const cJSON *labels = emu_json_at(tree, "metadata.labels"), *l;
    size_t n = 0;

    cJSON_ArrayForEach(l, labels) n++;
    if (n == 0)
        return KUBE_OK;
    o->label_keys = calloc(n, sizeof(char *));
    o->label_vals = calloc(n, sizeof(char *));
    if (!o->label_keys || !o->label_vals)
        return KUBE_ENOMEM;
    cJSON_ArrayForEach(l, labels)
    {
        o->label_keys[o->n_labels] = kube_strdup(l->string);
        o->label_vals[o->n_labels] = kube_strdup(cJSON_IsString(l) ? l->valuestring : "");
        if (!o->label_keys[o->n_labels] || !o->label_vals[o->n_labels]) {
            o->n_labels++;
            return KUBE_ENOMEM;
        }
        o->n_labels++;
    }
    return KUBE_OK;
}

static int obj_fields(emu_obj *o, const cJSON *tree)
{
    const char *vals[EMU_MAX_FIELDS] = {0};

    if (!o->res->ops || !o->res->ops->fields)
        return KUBE_OK;
    o->res->ops->fields(tree, vals);
    for (size_t i = 0; i < EMU_MAX_FIELDS && o->res->fields && o->res->fields[i]; i++) {
        o->field_vals[i] = kube_strdup(vals[i] ? vals[i] : "");
        if (!o->field_vals[i])
            return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

static char *make_key(const char *ns, const char *name)
{
    kube_buf b = KUBE_BUF_INIT;

    if ((ns && *ns ? kube_buf_printf(&b, "%s/%s", ns, name) : kube_buf_puts(&b, name)) != KUBE_OK) {
        kube_buf_free(&b);
        return NULL;
    }
    return kube_buf_take(&b);
}

/* Stores key "ns/name" (or "name"), ns and name in one allocation. */
static int obj_names(emu_obj *o, const char *ns, const char *name)
{
    size_t nl = ns ? strlen(ns) : 0, ml = strlen(name);
    size_t klen = nl ? nl + 1 + ml : ml;
    char *buf = malloc(klen + 1 + nl + 1 + ml + 1);

    if (!buf)
        return KUBE_ENOMEM;
    if (nl)
        snprintf(buf, klen + 1, "%s/%s", ns, name);
    else
        memcpy(buf, name, ml + 1);
    o->key = buf;
    o->ns = buf + klen + 1;
    memcpy(buf + klen + 1, nl ? ns : "", nl + 1);
    o->name = buf + klen + 1 + nl + 1;
    memcpy(buf + klen + 1 + nl + 1, name, ml + 1);
    return KUBE_OK;
}

/* Builds an object version from a tree whose resourceVersion is set. */
static emu_obj *obj_build(emu_resource *r, const cJSON *tree, int64_t rv)
{
    emu_obj *o = calloc(1, sizeof(*o));
    const char *ns = emu_json_str(tree, "metadata.namespace");
    const char *name = emu_json_str(tree, "metadata.name");
    const char *uid = emu_json_str(tree, "metadata.uid");

    if (!o)
        return NULL;
    atomic_init(&o->refs, 1);
    o->rv = rv;
    o->res = r;
    o->uid = kube_strdup(uid ? uid : "");
    o->json = emu_json_print(tree);
    if (obj_names(o, r->def->namespaced ? ns : NULL, name ? name : "") != KUBE_OK || !o->uid ||
        !o->json || obj_labels(o, tree) != KUBE_OK || obj_fields(o, tree) != KUBE_OK) {
        emu_obj_unref(o);
        return NULL;
    }
    o->len = strlen(o->json);
    return o;
}

/* ------------------------------------------------------------------ */
/* The store                                                           */
/* ------------------------------------------------------------------ */

struct emu_store {
    pthread_rwlock_t lock;
    _Atomic int64_t rv;
    emu_resource *res[EMU_MAX_RESOURCES];
    size_t n_res;
    emu_event *ring;
    size_t cap;
    size_t head; /* index of the oldest event */
    size_t count;
    int64_t hist_start; /* history complete after this rv */
    _Atomic uint64_t epoch;
    pthread_mutex_t nmu;
    pthread_cond_t ncv;
};

int emu_store_new(emu_store **out, int history)
{
    emu_store *s = calloc(1, sizeof(*s));
    pthread_condattr_t ca;

    if (!s)
        return KUBE_ENOMEM;
    s->cap = history > 0 ? (size_t)history : 10000;
    s->ring = calloc(s->cap, sizeof(*s->ring));
    if (!s->ring) {
        free(s);
        return KUBE_ENOMEM;
    }
    pthread_rwlock_init(&s->lock, NULL);
    pthread_mutex_init(&s->nmu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->ncv, &ca);
    pthread_condattr_destroy(&ca);
    *out = s;
    return KUBE_OK;
}

void emu_event_release(emu_event *e)
{
    emu_obj_unref(e->obj);
    emu_obj_unref(e->prev);
    memset(e, 0, sizeof(*e));
}

static void ring_clear(emu_store *s)
{
    for (size_t i = 0; i < s->count; i++)
        emu_event_release(&s->ring[(s->head + i) % s->cap]);
    s->head = s->count = 0;
}

void emu_store_free(emu_store *s)
{
    if (!s)
        return;
    ring_clear(s);
    free(s->ring);
    for (size_t i = 0; i < s->n_res; i++) {
        map_free(s->res[i]->objects);
        free(s->res[i]->bookmark_prefix);
        free(s->res[i]->bookmark_suffix);
        free(s->res[i]);
    }
    pthread_rwlock_destroy(&s->lock);
    pthread_mutex_destroy(&s->nmu);
    pthread_cond_destroy(&s->ncv);
    free(s);
}

static int split_bookmark(emu_resource *r)
{
    const char *tpl = r->ops && r->ops->bookmark ? r->ops->bookmark : NULL;
    const char *mark;
    kube_buf b = KUBE_BUF_INIT;

    if (!tpl) {
        if (kube_buf_printf(&b,
                            "{\"apiVersion\":\"%s%s%s\",\"kind\":\"%s\",\"metadata\":{"
                            "\"resourceVersion\":\"%%RV%%\"}}",
                            r->def->group, *r->def->group ? "/" : "", r->def->version,
                            r->def->kind) != KUBE_OK)
            return KUBE_ENOMEM;
        tpl = b.data;
    }
    mark = strstr(tpl, "%RV%");
    if (!mark) {
        kube_buf_free(&b);
        return KUBE_EINVAL;
    }
    r->bookmark_prefix = malloc((size_t)(mark - tpl) + 1);
    r->bookmark_suffix = kube_strdup(mark + 4);
    if (r->bookmark_prefix) {
        memcpy(r->bookmark_prefix, tpl, (size_t)(mark - tpl));
        r->bookmark_prefix[mark - tpl] = '\0';
    }
    kube_buf_free(&b);
    return r->bookmark_prefix && r->bookmark_suffix ? KUBE_OK : KUBE_ENOMEM;
}

int emu_store_add_resource(emu_store *s, const emu_resource_def *def, const emu_kind_ops *ops,
                           emu_resource **out)
{
    emu_resource *r;

    if (emu_store_find(s, def->group, def->version, def->plural))
        return KUBE_EEXIST;
    if (s->n_res >= EMU_MAX_RESOURCES)
        return KUBE_ERANGE;
    r = calloc(1, sizeof(*r));
    if (!r)
        return KUBE_ENOMEM;
    r->def = def;
    r->ops = ops;
    r->index = (int)s->n_res;
    r->objects = map_new();
    snprintf(r->group_resource, sizeof(r->group_resource), "%s%s%s", def->plural,
             *def->group ? "." : "", def->group);
    if (!r->objects || split_bookmark(r) != KUBE_OK) {
        map_free(r->objects);
        free(r->bookmark_prefix);
        free(r->bookmark_suffix);
        free(r);
        return KUBE_ENOMEM;
    }
    s->res[s->n_res++] = r;
    if (out)
        *out = r;
    return KUBE_OK;
}

emu_resource *emu_store_find(emu_store *s, const char *group, const char *version,
                             const char *plural)
{
    for (size_t i = 0; i < s->n_res; i++) {
        const emu_resource_def *d = s->res[i]->def;
        if (!strcmp(d->group, group) && !strcmp(d->version, version) && !strcmp(d->plural, plural))
            return s->res[i];
    }
    return NULL;
}

size_t emu_store_n_resources(emu_store *s)
{
    return s->n_res;
}

emu_resource *emu_store_resource_at(emu_store *s, size_t i)
{
    return i < s->n_res ? s->res[i] : NULL;
}

int64_t emu_store_rv(emu_store *s)
{
    return atomic_load(&s->rv);
}

emu_obj *emu_store_lookup(emu_store *s, emu_resource *r, const char *ns, const char *name)
{
    char *key = make_key(r->def->namespaced ? ns : NULL, name);
    emu_obj *o = NULL;

    if (!key)
        return NULL;
    pthread_rwlock_rdlock(&s->lock);
    o = map_get(r->objects, key);
    emu_obj_ref(o);
    pthread_rwlock_unlock(&s->lock);
    free(key);
    return o;
}

/* ------------------------------------------------------------------ */
/* Writes                                                              */
/* ------------------------------------------------------------------ */

static void ring_push(emu_store *s, int type, emu_obj *obj, emu_obj *prev)
{
    emu_event *e;

    if (s->count == s->cap) {
        emu_event_release(&s->ring[s->head]);
        s->head = (s->head + 1) % s->cap;
        s->count--;
    }
    e = &s->ring[(s->head + s->count) % s->cap];
    e->type = type;
    e->rv = obj->rv;
    e->obj = obj;
    e->prev = prev;
    emu_obj_ref(obj);
    emu_obj_ref(prev);
    s->count++;
}

static void notify(emu_store *s)
{
    pthread_mutex_lock(&s->nmu);
    pthread_cond_broadcast(&s->ncv);
    pthread_mutex_unlock(&s->nmu);
}

static int set_rv(const emu_resource *r, cJSON *tree, int64_t rv)
{
    char buf[32];
    cJSON *meta = emu_json_obj(tree, "metadata");
    int had = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion") != NULL;
    int rc;

    snprintf(buf, sizeof(buf), "%lld", (long long)rv);
    rc = meta ? emu_json_put_str(meta, "resourceVersion", buf) : KUBE_ENOMEM;
    if (rc == KUBE_OK && !had)
        emu_normalize_meta(r, tree);
    return rc;
}

/* 1 if tree, written at the current version's rv, is byte-identical. */
static int is_noop(const emu_obj *cur, cJSON *tree)
{
    char *text;
    int same;

    if (!cur || set_rv(cur->res, tree, cur->rv) != KUBE_OK)
        return 0;
    text = emu_json_print(tree);
    same = text && strcmp(text, cur->json) == 0;
    free(text);
    return same;
}

/* Writes tree (taken over) as the next version of key. */
static int commit(emu_store *s, emu_resource *r, emu_obj *cur, cJSON *tree, int del, emu_obj **out)
{
    int64_t rv = atomic_load(&s->rv) + 1;
    emu_obj *o;
    int rc;

    if (!tree && cur)
        tree = emu_obj_tree(cur);
    if (!tree || set_rv(r, tree, rv) != KUBE_OK) {
        cJSON_Delete(tree);
        return KUBE_ENOMEM;
    }
    o = obj_build(r, tree, rv);
    cJSON_Delete(tree);
    if (!o)
        return KUBE_ENOMEM;
    atomic_store(&s->rv, rv);
    ring_push(s, del ? EV_DELETED : cur ? EV_MODIFIED : EV_ADDED, o, cur);
    if (del) {
        map_del(r->objects, cur->key);
        rc = KUBE_OK;
    } else {
        emu_obj_ref(o);
        rc = map_put(r->objects, o);
        if (rc != KUBE_OK)
            emu_obj_unref(o);
    }
    *out = o;
    return rc;
}

int emu_store_write(emu_store *s, emu_resource *r, const char *ns, const char *name,
                    emu_write_fn fn, void *ctx, emu_obj **out, cJSON **st)
{
    char *key = make_key(r->def->namespaced ? ns : NULL, name);
    emu_obj *cur, *result = NULL;
    int rc = KUBE_OK, again = 1, wrote = 0;

    *out = NULL;
    if (!key)
        return KUBE_ENOMEM;
    pthread_rwlock_wrlock(&s->lock);
    cur = map_get(r->objects, key);
    emu_obj_ref(cur);
    while (again && rc == KUBE_OK) {
        cJSON *tree = cur ? emu_obj_tree(cur) : NULL, *next = NULL;
        int del = 0;
        emu_obj *o = NULL;
        again = 0;
        if (cur && !tree) {
            rc = KUBE_ENOMEM;
            break;
        }
        rc = fn(ctx, tree, atomic_load(&s->rv) + 1, &next, &del, &again, st);
        if (rc != KUBE_OK) {
            cJSON_Delete(next);
            break;
        }
        if (del && !cur) {
            cJSON_Delete(next);
            break;
        }
        if (!del && (!next || is_noop(cur, next))) {
            cJSON_Delete(next);
            emu_obj_ref(cur);
            emu_obj_unref(result);
            result = cur;
            continue;
        }
        rc = commit(s, r, cur, next, del, &o);
        if (rc != KUBE_OK) {
            emu_obj_unref(o);
            break;
        }
        wrote = 1;
        emu_obj_unref(result);
        result = o;
        emu_obj_unref(cur);
        cur = del ? NULL : o;
        emu_obj_ref(cur);
    }
    emu_obj_unref(cur);
    pthread_rwlock_unlock(&s->lock);
    free(key);
    if (wrote)
        notify(s);
    if (rc != KUBE_OK) {
        emu_obj_unref(result);
        return rc;
    }
    *out = result;
    return KUBE_OK;
}

/* ------------------------------------------------------------------ */
/* History                                                             */
/* ------------------------------------------------------------------ */

static int64_t oldest_locked(const emu_store *s)
{
    if (s->count == s->cap && s->count > 0)
        return s->ring[s->head].rv;
    return s->hist_start + 1;
}

static int check_rv_locked(const emu_store *s, int64_t rv, int64_t *oldest)
{
    int64_t o = oldest_locked(s);

    if (oldest)
        *oldest = o - 1;
    return rv < o - 1 ? KUBE_EGONE : KUBE_OK;
}

int emu_store_check_rv(emu_store *s, int64_t rv, int64_t *oldest)
{
    int rc;

    pthread_rwlock_rdlock(&s->lock);
    rc = check_rv_locked(s, rv, oldest);
    pthread_rwlock_unlock(&s->lock);
    return rc;
}

/* Index (0..count) of the first ring event with rv > after. */
static size_t first_after(const emu_store *s, int64_t after)
{
    size_t lo = 0, hi = s->count;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->ring[(s->head + mid) % s->cap].rv <= after)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int emu_store_events(emu_store *s, int64_t after, emu_event *out, size_t max, size_t *n,
                     int64_t *upto, int64_t *oldest)
{
    size_t i, k = 0;
    int rc;

    *n = 0;
    pthread_rwlock_rdlock(&s->lock);
    rc = check_rv_locked(s, after, oldest);
    if (rc == KUBE_OK) {
        for (i = first_after(s, after); i < s->count && k < max; i++, k++) {
            out[k] = s->ring[(s->head + i) % s->cap];
            emu_obj_ref(out[k].obj);
            emu_obj_ref(out[k].prev);
        }
        *n = k;
        /* with no event left the caller has seen everything up to the
         * current rv (the counter moves without an event only at restart) */
        *upto =
            k == 0 ? (atomic_load(&s->rv) > after ? atomic_load(&s->rv) : after) : out[k - 1].rv;
    }
    pthread_rwlock_unlock(&s->lock);
    return rc;
}

uint64_t emu_store_epoch(emu_store *s)
{
    return atomic_load(&s->epoch);
}

uint64_t emu_store_wait(emu_store *s, int64_t after, int timeout_ms)
{
    struct timespec deadline;
    uint64_t epoch = atomic_load(&s->epoch);

    kube_deadline_after(&deadline, CLOCK_MONOTONIC, timeout_ms);
    pthread_mutex_lock(&s->nmu);
    while (atomic_load(&s->rv) <= after && atomic_load(&s->epoch) == epoch)
        if (pthread_cond_timedwait(&s->ncv, &s->nmu, &deadline) != 0)
            break;
    pthread_mutex_unlock(&s->nmu);
    return atomic_load(&s->epoch);
}

void emu_store_drop_watches(emu_store *s)
{
    pthread_mutex_lock(&s->nmu);
    atomic_fetch_add(&s->epoch, 1);
    pthread_cond_broadcast(&s->ncv);
    pthread_mutex_unlock(&s->nmu);
}

void emu_store_restart(emu_store *s)
{
    pthread_rwlock_wrlock(&s->lock);
    ring_clear(s);
    /* a new apiserver's watch cache starts above every version handed out
     * so far: anything older (tokens, watches) is now expired */
    atomic_fetch_add(&s->rv, 1);
    s->hist_start = atomic_load(&s->rv);
    pthread_rwlock_unlock(&s->lock);
    emu_store_drop_watches(s);
}

void emu_store_wake_all(emu_store *s)
{
    emu_store_drop_watches(s);
}

/* ------------------------------------------------------------------ */
/* Lists                                                               */
/* ------------------------------------------------------------------ */

typedef struct collect {
    emu_obj **items;
    size_t n;
    size_t cap;
} collect;

static int collect_add(collect *c, emu_obj *o)
{
    if (KUBE_ARRAY_RESERVE(c->items, c->cap, c->n + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    emu_obj_ref(o);
    c->items[c->n++] = o;
    return KUBE_OK;
}

static int in_scope(const emu_obj *o, const emu_list_query *q)
{
    if (q->ns && *q->ns && strcmp(o->ns, q->ns) != 0)
        return 0;
    if (!q->start)
        return 1;
    return q->start_exclusive ? strcmp(o->key, q->start) > 0 : strcmp(o->key, q->start) >= 0;
}

/* The state at q->at_rv: current objects overlaid with the previous
 * versions of everything changed since. */
static int collect_at(emu_store *s, emu_resource *r, const emu_list_query *q, collect *c)
{
    emu_map *changed = map_new();
    int rc = changed ? KUBE_OK : KUBE_ENOMEM;

    for (size_t i = first_after(s, q->at_rv); rc == KUBE_OK && i < s->count; i++) {
        emu_event *e = &s->ring[(s->head + i) % s->cap];
        emu_obj *marker = e->prev ? e->prev : e->obj;
        if (e->obj->res != r || map_get(changed, e->obj->key))
            continue;
        /* remember the version at at_rv (or "absent" as a marker whose
         * rv is newer than at_rv) */
        emu_obj_ref(marker);
        rc = map_put(changed, marker);
    }
    for (size_t b = 0; rc == KUBE_OK && b < r->objects->nb; b++)
        for (map_entry *e = r->objects->buckets[b]; e && rc == KUBE_OK; e = e->next)
            if (!map_get(changed, e->obj->key) && in_scope(e->obj, q))
                rc = collect_add(c, e->obj);
    for (size_t b = 0; changed && rc == KUBE_OK && b < changed->nb; b++)
        for (map_entry *e = changed->buckets[b]; e && rc == KUBE_OK; e = e->next)
            if (e->obj->rv <= q->at_rv && in_scope(e->obj, q))
                rc = collect_add(c, e->obj);
    map_free(changed);
    return rc;
}

static int collect_current(emu_resource *r, const emu_list_query *q, collect *c)
{
    int rc = KUBE_OK;

    for (size_t b = 0; rc == KUBE_OK && b < r->objects->nb; b++)
        for (map_entry *e = r->objects->buckets[b]; e && rc == KUBE_OK; e = e->next)
            if (in_scope(e->obj, q))
                rc = collect_add(c, e->obj);
    return rc;
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp((*(emu_obj *const *)a)->key, (*(emu_obj *const *)b)->key);
}

void emu_list_result_free(emu_list_result *res)
{
    for (size_t i = 0; i < res->n; i++)
        emu_obj_unref(res->items[i]);
    free(res->items);
    memset(res, 0, sizeof(*res));
}

int emu_store_list(emu_store *s, emu_resource *r, const emu_list_query *q, emu_list_result *out)
{
    collect c = {0};
    size_t i, kept = 0;
    int rc = KUBE_OK;

    memset(out, 0, sizeof(*out));
    pthread_rwlock_rdlock(&s->lock);
    out->rv = atomic_load(&s->rv);
    if (q->at_rv > out->rv)
        rc = KUBE_ERANGE;
    else if (q->at_rv > 0 && check_rv_locked(s, q->at_rv, NULL) != KUBE_OK)
        rc = KUBE_EGONE;
    else if (q->at_rv > 0 && q->at_rv < out->rv)
        rc = collect_at(s, r, q, &c);
    else
        rc = collect_current(r, q, &c);
    pthread_rwlock_unlock(&s->lock);
    if (q->at_rv > 0)
        out->rv = q->at_rv;
    if (rc != KUBE_OK)
        goto done;
    if (c.n > 1)
        qsort(c.items, c.n, sizeof(*c.items), cmp_key);
    for (i = 0; i < c.n; i++) {
        if (q->limit > 0 && (int64_t)kept >= q->limit)
            break;
        if (emu_obj_matches(c.items[i], q->labels, q->fields)) {
            c.items[kept++] = c.items[i];
        } else {
            emu_obj_unref(c.items[i]);
        }
    }
    out->more = i < c.n;
    out->remaining = (int64_t)(c.n - i);
    for (size_t j = i; j < c.n; j++)
        emu_obj_unref(c.items[j]);
    out->items = c.items;
    out->n = kept;
    return KUBE_OK;
done:
    for (i = 0; i < c.n; i++)
        emu_obj_unref(c.items[i]);
    free(c.items);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Matching                                                            */
/* ------------------------------------------------------------------ */

static const char *label_value(const emu_obj *o, const char *key)
{
    for (size_t i = 0; i < o->n_labels; i++)
        if (!strcmp(o->label_keys[i], key))
            return o->label_vals[i];
    return NULL;
}

static const char *field_value(const emu_obj *o, const char *field)
{
    if (!strcmp(field, "metadata.name"))
        return o->name;
    if (!strcmp(field, "metadata.namespace"))
        return o->ns;
    for (size_t i = 0; o->res->fields && o->res->fields[i] && i < EMU_MAX_FIELDS; i++)
        if (!strcmp(o->res->fields[i], field))
            return o->field_vals[i] ? o->field_vals[i] : "";
    return "";
}

static int in_values(const emu_req *rq, const char *v)
{
    for (size_t i = 0; i < rq->n_values; i++)
        if (!strcmp(rq->values[i], v))
            return 1;
    return 0;
}

static int req_matches(const emu_req *rq, const char *v)
{
    switch (rq->op) {
    case SEL_EQ:
        return v && in_values(rq, v);
    case SEL_NEQ:
        return !v || !in_values(rq, v);
    case SEL_IN:
        return v && in_values(rq, v);
    case SEL_NOTIN:
        return !v || !in_values(rq, v);
    case SEL_EXISTS:
        return v != NULL;
    case SEL_NOTEXISTS:
        return v == NULL;
    default:
        return 0;
    }
}

int emu_obj_matches(const emu_obj *o, const emu_selector *labels, const emu_selector *fields)
{
    for (size_t i = 0; labels && i < labels->n; i++)
        if (!req_matches(&labels->reqs[i], label_value(o, labels->reqs[i].key)))
            return 0;
    for (size_t i = 0; fields && i < fields->n; i++)
        if (!req_matches(&fields->reqs[i], field_value(o, fields->reqs[i].key)))
            return 0;
    return 1;
}
