/*
 * kube/machinery/store.c - namespace/name keyed object store and delta delivery.
 * See store.h.
 *
 * Open addressing with linear probing. A slot is one word: the object
 * pointer, with its low bit set when the replace in progress has seen the
 * object (objects are at least 8-aligned), so a table of thousands of
 * objects costs 8 bytes a slot. Key hashes are recomputed from the object
 * when a slot moves (resize, deletion) rather than stored. Deletion shifts
 * the following run back, so no tombstones accumulate.
 *
 * Indexes: per index, a string map key -> bucket (an array of the stored
 * object pointers with that key; the table holds the references). An
 * object's keys are computed again when it leaves (index functions are
 * pure), so nothing per object is stored. Every change inserts the new
 * object's entries first (the only step that allocates, undone on failure),
 * then swaps the table slot and removes the old object's entries, which
 * never fails: when the old keys cannot be computed (out of memory), every
 * bucket of the index is searched instead.
 */
#include "kube/machinery/store.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/machinery/store_testing.h"
#include "kube/util/array.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/hash.h"
#include "kube/util/strmap.h"
#include "kube/codec/jsonstream.h"
#include "kube/util/log.h"

#define MIN_CAP 64u
#define SEEN ((uintptr_t)1)

_Static_assert(alignof(kube_object) >= 2, "the low bit of an object pointer is free");

typedef uintptr_t slot; /* 0: empty */

struct kube_index_keys {
    char **v;
    size_t n, cap;
};

/* The stored objects with one key of an index (borrowed pointers). */
typedef struct bucket {
    kube_object **objs;
    size_t n, cap;
} bucket;

typedef struct store_index {
    char *name;
    kube_index_fn fn;
    kube_strmap keys; /* key -> bucket (owned) */
} store_index;

struct kube_store {
    pthread_rwlock_t lock;
    slot *slots;
    size_t cap; /* power of two */
    size_t count;
    store_index *idx;
    size_t n_idx, cap_idx;
};

static kube_object *slot_obj(slot v)
{
    return (kube_object *)(v & ~SEEN);
}

static const char *ns_of(const kube_object *o)
{
    return o->meta.namespace_ ? o->meta.namespace_ : "";
}

/* FNV-1a of "ns/name", folded to 32 bits. */
static uint32_t key_hash(const char *ns, const char *name)
{
    uint64_t h = kube_fnv1a_str(KUBE_FNV1A_INIT, ns ? ns : "");

    h = kube_fnv1a_str(kube_fnv1a_byte(h, '/'), name);
    return (uint32_t)(h ^ (h >> 32));
}

static uint32_t obj_hash(const kube_object *o)
{
    return key_hash(ns_of(o), o->meta.name);
}

static int key_eq(const kube_object *o, const char *ns, const char *name)
{
    return strcmp(o->meta.name, name) == 0 && strcmp(ns_of(o), ns ? ns : "") == 0;
}

int kube_store_new(kube_store **out)
{
    kube_store *s = calloc(1, sizeof(*s));

    *out = NULL;
    if (s == NULL)
        return KUBE_ENOMEM;
    s->slots = calloc(MIN_CAP, sizeof(slot));
    if (s->slots == NULL || pthread_rwlock_init(&s->lock, NULL) != 0) {
        free(s->slots);
        free(s);
        return KUBE_ENOMEM;
    }
    s->cap = MIN_CAP;
    *out = s;
    return KUBE_OK;
}

static void index_free(store_index *ix);

void kube_store_free(kube_store *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n_idx; i++)
        index_free(&s->idx[i]);
    free(s->idx);
    for (size_t i = 0; i < s->cap; i++)
        kube_object_unref(slot_obj(s->slots[i]));
    free(s->slots);
    pthread_rwlock_destroy(&s->lock);
    free(s);
}

/* Index of the slot holding ns/name, or of the empty slot ending its run. */
static size_t find(const kube_store *s, uint32_t h, const char *ns, const char *name)
{
    size_t mask = s->cap - 1, i = h & mask;

    while (s->slots[i] != 0) {
        if (key_eq(slot_obj(s->slots[i]), ns, name))
            return i;
        i = (i + 1) & mask;
    }
    return i;
}

/* Rehashes into a table of ncap slots (a power of two above count). */
static int resize(kube_store *s, size_t ncap)
{
    size_t mask = ncap - 1;
    slot *ns = calloc(ncap, sizeof(slot));

    if (ns == NULL)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < s->cap; i++) {
        if (s->slots[i] == 0)
            continue;
        size_t j = obj_hash(slot_obj(s->slots[i])) & mask;
        while (ns[j] != 0)
            j = (j + 1) & mask;
        ns[j] = s->slots[i];
    }
    free(s->slots);
    s->slots = ns;
    s->cap = ncap;
    return KUBE_OK;
}

static int grow(kube_store *s)
{
    return resize(s, s->cap * 2);
}

/* Sizes the table for n objects at once (a list result), so a large list
 * costs one table instead of a doubling series. Write lock held. */
static int reserve_locked(kube_store *s, size_t n)
{
    size_t ncap = s->cap;

    while ((n + 1) * 4 > ncap * 3)
        ncap *= 2;
    return ncap == s->cap ? KUBE_OK : resize(s, ncap);
}

/* Stores obj (new reference, marked seen) under the write lock; *old
 * receives the replaced object's reference, or NULL. */
static int put_locked(kube_store *s, kube_object *obj, kube_object **old)
{
    size_t i;

    *old = NULL;
    if ((s->count + 1) * 4 > s->cap * 3 && grow(s) != KUBE_OK)
        return KUBE_ENOMEM;
    i = find(s, obj_hash(obj), ns_of(obj), obj->meta.name);
    if (s->slots[i] != 0)
        *old = slot_obj(s->slots[i]);
    else
        s->count++;
    s->slots[i] = (slot)(uintptr_t)kube_object_ref(obj) | SEEN;
    return KUBE_OK;
}

/* Empties slot i and shifts back the entries of the run after it. */
static void remove_at(kube_store *s, size_t i)
{
    size_t mask = s->cap - 1, j = i;

    s->slots[i] = 0;
    s->count--;
    for (;;) {
        j = (j + 1) & mask;
        if (s->slots[j] == 0)
            return;
        size_t home = obj_hash(slot_obj(s->slots[j])) & mask;
        /* j may move to i unless its home lies cyclically in (i, j] */
        int stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
        if (stays)
            continue;
        s->slots[i] = s->slots[j];
        s->slots[j] = 0;
        i = j;
    }
}

/* ---- indexes ------------------------------------------------------------ */

int kube_index_keys_add(kube_index_keys *keys, const char *key)
{
    char *copy;

    if (keys == NULL || key == NULL)
        return KUBE_EINVAL;
    for (size_t i = 0; i < keys->n; i++)
        if (strcmp(keys->v[i], key) == 0)
            return KUBE_OK;
    if (KUBE_ARRAY_RESERVE(keys->v, keys->cap, keys->n + 1) != KUBE_OK ||
        (copy = kube_strdup(key)) == NULL)
        return KUBE_ENOMEM;
    keys->v[keys->n++] = copy;
    return KUBE_OK;
}

static void keys_clear(kube_index_keys *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->v[i]);
    free(k->v);
    *k = (kube_index_keys){0};
}

/* obj's keys in ix into *k (empty on failure). KUBE_OK or fn's error. */
static int index_keys(const store_index *ix, const kube_object *obj, kube_index_keys *k)
{
    int rc;

    *k = (kube_index_keys){0};
    rc = ix->fn(obj, k);
    if (rc != KUBE_OK)
        keys_clear(k);
    return rc;
}

/* Adds obj to key's bucket (created when new). KUBE_OK or KUBE_ENOMEM
 * (nothing changed). */
static int bucket_add(store_index *ix, const char *key, kube_object *obj)
{
    bucket *b = kube_strmap_get(&ix->keys, key);
    int fresh = b == NULL;

    if (fresh && (b = calloc(1, sizeof(*b))) == NULL)
        return KUBE_ENOMEM;
    if (KUBE_ARRAY_RESERVE(b->objs, b->cap, b->n + 1) != KUBE_OK ||
        (fresh && kube_strmap_put(&ix->keys, key, b, NULL) != KUBE_OK)) {
        if (fresh) {
            free(b->objs);
            free(b);
        }
        return KUBE_ENOMEM;
    }
    b->objs[b->n++] = obj;
    return KUBE_OK;
}

/* Removes one entry of obj from b; 1 when one was there. */
static int bucket_drop(bucket *b, const kube_object *obj)
{
    for (size_t i = 0; i < b->n; i++) {
        if (b->objs[i] == obj) {
            b->objs[i] = b->objs[--b->n];
            return 1;
        }
    }
    return 0;
}

/* Removes one entry of obj from key's bucket, and the key once empty. */
static void bucket_remove(store_index *ix, const char *key, const kube_object *obj)
{
    bucket *b = kube_strmap_get(&ix->keys, key);

    if (b == NULL)
        return;
    bucket_drop(b, obj);
    if (b->n == 0) {
        kube_strmap_del(&ix->keys, key);
        free(b->objs);
        free(b);
    }
}

/* kube_strmap_foreach() callback: drops one entry of ud (an object) from a
 * bucket (an emptied bucket stays until the store is freed). */
static void scrub_bucket(void *ud, const char *key, void *value)
{
    (void)key;
    bucket_drop(value, ud);
}

/* Removes one entry of obj per key of ix. Never fails. */
static void index_forget(store_index *ix, const kube_object *obj)
{
    kube_index_keys k;

    if (index_keys(ix, obj, &k) != KUBE_OK) {
        kube_strmap_foreach(&ix->keys, scrub_bucket, (void *)(uintptr_t)obj);
        return;
    }
    for (size_t i = 0; i < k.n; i++)
        bucket_remove(ix, k.v[i], obj);
    keys_clear(&k);
}

/* Removes obj from every index. Write lock held. Never fails. */
static void index_forget_locked(kube_store *s, const kube_object *obj)
{
    for (size_t i = 0; i < s->n_idx; i++)
        index_forget(&s->idx[i], obj);
}

/* Adds obj under each of its keys in ix. KUBE_OK, or the error with
 * nothing added. */
static int index_insert(store_index *ix, kube_object *obj)
{
    kube_index_keys k;
    size_t i = 0;
    int rc = index_keys(ix, obj, &k);

    while (rc == KUBE_OK && i < k.n && (rc = bucket_add(ix, k.v[i], obj)) == KUBE_OK)
        i++;
    while (rc != KUBE_OK && i > 0)
        bucket_remove(ix, k.v[--i], obj);
    keys_clear(&k);
    return rc;
}

/* Adds obj to every index. Write lock held. KUBE_OK, or the error with
 * nothing added. */
static int index_insert_locked(kube_store *s, kube_object *obj)
{
    for (size_t i = 0; i < s->n_idx; i++) {
        int rc = index_insert(&s->idx[i], obj);
        if (rc != KUBE_OK) {
            while (i > 0)
                index_forget(&s->idx[--i], obj);
            return rc;
        }
    }
    return KUBE_OK;
}

static void free_bucket(void *ud, const char *key, void *value)
{
    bucket *b = value;

    (void)ud, (void)key;
    free(b->objs);
    free(b);
}

static void index_free(store_index *ix)
{
    kube_strmap_foreach(&ix->keys, free_bucket, NULL);
    kube_strmap_free(&ix->keys);
    free(ix->name);
}

static store_index *find_index(const kube_store *s, const char *name)
{
    for (size_t i = 0; i < s->n_idx; i++)
        if (strcmp(s->idx[i].name, name) == 0)
            return &s->idx[i];
    return NULL;
}

/* A new index name of fn over what s holds. Write lock held. */
static int index_build_locked(kube_store *s, const char *name, kube_index_fn fn)
{
    store_index ix = {.name = kube_strdup(name), .fn = fn};
    int rc = ix.name ? KUBE_ARRAY_RESERVE(s->idx, s->cap_idx, s->n_idx + 1) : KUBE_ENOMEM;

    for (size_t i = 0; rc == KUBE_OK && i < s->cap; i++)
        if (s->slots[i] != 0)
            rc = index_insert(&ix, slot_obj(s->slots[i]));
    if (rc != KUBE_OK) {
        index_free(&ix);
        return rc;
    }
    s->idx[s->n_idx++] = ix;
    return KUBE_OK;
}

int kube_store_add_index(kube_store *s, const char *name, kube_index_fn fn)
{
    const store_index *ix;
    int rc;

    if (s == NULL || name == NULL || fn == NULL)
        return KUBE_EINVAL;
    pthread_rwlock_wrlock(&s->lock);
    ix = find_index(s, name);
    if (ix)
        rc = ix->fn == fn ? KUBE_OK : KUBE_EEXIST;
    else
        rc = index_build_locked(s, name, fn);
    pthread_rwlock_unlock(&s->lock);
    return rc;
}

int kube_store_by_index(kube_store *s, const char *name, const char *key,
                        void (*fn)(void *ud, kube_object *obj), void *ud)
{
    const store_index *ix;
    const bucket *b;

    if (s == NULL || name == NULL || key == NULL)
        return KUBE_EINVAL;
    pthread_rwlock_rdlock(&s->lock);
    ix = find_index(s, name);
    b = ix ? kube_strmap_get(&ix->keys, key) : NULL;
    for (size_t i = 0; b && i < b->n; i++)
        fn(ud, b->objs[i]);
    pthread_rwlock_unlock(&s->lock);
    return ix ? KUBE_OK : KUBE_EINVAL;
}

size_t kube_store_index_len(kube_store *s, const char *name)
{
    const store_index *ix;
    size_t n;

    pthread_rwlock_rdlock(&s->lock);
    ix = find_index(s, name);
    n = ix ? kube_strmap_len(&ix->keys) : 0;
    pthread_rwlock_unlock(&s->lock);
    return n;
}

/* Removes ns/name; returns the store's reference, or NULL. */
static kube_object *take(kube_store *s, const char *ns, const char *name)
{
    kube_object *obj = NULL;

    pthread_rwlock_wrlock(&s->lock);
    size_t i = find(s, key_hash(ns, name), ns, name);
    if (s->slots[i] != 0) {
        obj = slot_obj(s->slots[i]);
        remove_at(s, i);
        index_forget_locked(s, obj);
    }
    pthread_rwlock_unlock(&s->lock);
    return obj;
}

kube_object *kube_store_get(kube_store *s, const char *ns, const char *name)
{
    kube_object *obj;

    if (name == NULL)
        return NULL;
    pthread_rwlock_rdlock(&s->lock);
    obj = kube_object_ref(slot_obj(s->slots[find(s, key_hash(ns, name), ns, name)]));
    pthread_rwlock_unlock(&s->lock);
    return obj;
}

size_t kube_store_count(kube_store *s)
{
    size_t n;

    pthread_rwlock_rdlock(&s->lock);
    n = s->count;
    pthread_rwlock_unlock(&s->lock);
    return n;
}

void kube_store_foreach(kube_store *s, void (*fn)(void *ud, kube_object *obj), void *ud)
{
    pthread_rwlock_rdlock(&s->lock);
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i] != 0)
            fn(ud, slot_obj(s->slots[i]));
    pthread_rwlock_unlock(&s->lock);
}

/* ---- delivery ----------------------------------------------------------- */

static void deliver_add(const kube_informer_handlers *h, kube_object *obj)
{
    if (h && h->on_add)
        h->on_add(h->ud, obj);
}

static void deliver_update(const kube_informer_handlers *h, kube_object *old, kube_object *obj)
{
    if (h && h->on_update)
        h->on_update(h->ud, old, obj);
}

static void deliver_delete(const kube_informer_handlers *h, kube_object *obj)
{
    if (h && h->on_delete)
        h->on_delete(h->ud, obj);
}

static int same_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Same object (uid), or one side does not say. */
static int same_uid(const kube_object *a, const kube_object *b)
{
    if (a->meta.uid == NULL || b->meta.uid == NULL)
        return 1;
    return strcmp(a->meta.uid, b->meta.uid) == 0;
}

/* Delivers the change from old (may be NULL) to obj already stored.
 * quiet_same_rv: an unchanged resourceVersion is not an update. */
static void deliver_change(const kube_informer_handlers *h, kube_object *old, kube_object *obj,
                           int quiet_same_rv)
{
    if (old == NULL) {
        deliver_add(h, obj);
    } else if (!same_uid(old, obj)) {
        deliver_delete(h, old);
        deliver_add(h, obj);
    } else if (!quiet_same_rv ||
               !same_str(old->meta.resource_version, obj->meta.resource_version)) {
        deliver_update(h, old, obj);
    }
}

/* Stores obj and moves the index entries from the object it replaces (in
 * *old, or NULL) to it. Write lock held. KUBE_OK, or the error with
 * nothing changed. */
static int put_indexed_locked(kube_store *s, kube_object *obj, kube_object **old)
{
    int rc;

    *old = NULL;
    /* room first, so that nothing fails once the indexes hold obj */
    if ((s->count + 1) * 4 > s->cap * 3 && grow(s) != KUBE_OK)
        return KUBE_ENOMEM;
    if ((rc = index_insert_locked(s, obj)) != KUBE_OK)
        return rc;
    rc = put_locked(s, obj, old);
    if (rc != KUBE_OK)
        index_forget_locked(s, obj); /* not reached: the room was made */
    else if (*old)
        index_forget_locked(s, *old);
    return rc;
}

static int put(kube_store *s, kube_object *obj, kube_object **old)
{
    int rc;

    pthread_rwlock_wrlock(&s->lock);
    rc = put_indexed_locked(s, obj, old);
    pthread_rwlock_unlock(&s->lock);
    return rc;
}

int kube_store_apply(kube_store *s, int type, kube_object *obj, const kube_informer_handlers *h)
{
    kube_object *old = NULL;
    int rc;

    switch (type) {
    case KUBE_WATCH_ADDED:
    case KUBE_WATCH_MODIFIED:
        rc = put(s, obj, &old);
        if (rc != KUBE_OK)
            return rc;
        deliver_change(h, old, obj, 0);
        break;
    case KUBE_WATCH_DELETED:
        old = take(s, ns_of(obj), obj->meta.name);
        if (old == NULL)
            KLOG_V(4, "store: DELETED %s/%s was not stored", ns_of(obj), obj->meta.name);
        else
            deliver_delete(h, same_uid(old, obj) ? obj : old);
        break;
    default:
        return KUBE_EINVAL;
    }
    kube_object_unref(old);
    return KUBE_OK;
}

/* Removes (and returns, with their references) the objects the replace in
 * progress did not see. */
static int take_stale(kube_store *s, kube_object ***out, size_t *n)
{
    kube_object **stale = NULL;
    size_t k = 0;

    pthread_rwlock_wrlock(&s->lock);
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i] != 0 && !(s->slots[i] & SEEN))
            k++;
    if (k > 0 && (stale = malloc(k * sizeof(*stale))) == NULL) {
        pthread_rwlock_unlock(&s->lock);
        return KUBE_ENOMEM;
    }
    k = 0;
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i] != 0 && !(s->slots[i] & SEEN))
            stale[k++] = slot_obj(s->slots[i]);
    for (size_t j = 0; j < k; j++) {
        const kube_object *o = stale[j];
        remove_at(s, find(s, obj_hash(o), ns_of(o), o->meta.name));
        index_forget_locked(s, o);
    }
    pthread_rwlock_unlock(&s->lock);
    *out = stale;
    *n = k;
    return KUBE_OK;
}

/* Starts a replace of n objects: nothing is seen yet, and the table is
 * sized for the list. */
static int replace_begin(kube_store *s, size_t n)
{
    int rc;

    pthread_rwlock_wrlock(&s->lock);
    for (size_t i = 0; i < s->cap; i++)
        s->slots[i] &= ~SEEN;
    rc = reserve_locked(s, n);
    pthread_rwlock_unlock(&s->lock);
    return rc;
}

int kube_store_replace(kube_store *s, kube_object *const *objs, size_t n,
                       const kube_informer_handlers *h)
{
    kube_object **stale = NULL;
    size_t n_stale = 0;
    int rc;

    if ((rc = replace_begin(s, n)) != KUBE_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        kube_object *old = NULL;
        rc = put(s, objs[i], &old);
        if (rc != KUBE_OK)
            return rc;
        deliver_change(h, old, objs[i], 1);
        kube_object_unref(old);
    }
    rc = take_stale(s, &stale, &n_stale);
    if (rc != KUBE_OK)
        return rc;
    for (size_t i = 0; i < n_stale; i++) {
        deliver_delete(h, stale[i]);
        kube_object_unref(stale[i]);
    }
    free(stale);
    return KUBE_OK;
}
