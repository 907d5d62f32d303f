/*
 * kube/machinery/store.h - the informer's store: objects keyed by namespace/name, and
 * the application of watch events and list results to it, with the handler
 * calls they imply (client-go's indexer + sharedIndexInformer.HandleDeltas).
 *
 * The table is an open-addressing hash table under a read-write lock:
 * lookups, counts and iterations may run on any thread while one thread
 * (the informer's hub thread) applies changes. Handlers are called with no
 * lock held, after the store was changed, one at a time, on the calling
 * thread; a handler may read the store.
 *
 * Delivery rules (all keyed by namespace/name, as client-go):
 *   ADDED or MODIFIED of an unknown key        -> on_add(new)
 *   ADDED or MODIFIED of a known key, same uid -> on_update(old, new)
 *   ... of a known key with another uid        -> on_delete(old), on_add(new)
 *   DELETED of a known key -> on_delete(final state from the event, or the
 *                             stored object if the uids differ)
 *   DELETED of an unknown key -> nothing (handlers never saw it)
 * A replace (re-list) delivers, in list order, on_add for new keys and
 * on_update for objects whose resourceVersion changed (an unchanged one is
 * stored silently, like client-go's Replaced-as-resync), the uid rule
 * above, then on_delete for each stored key the list no longer has.
 * (client-go delivers a recreated object as one update; stickyvm splits it
 * so a handler tracking uids never sees an update cross objects.)
 *
 * Indexes (client-go's Indexers, AddIndexers and ByIndex): a named index
 * function gives each object zero or more string keys; the store keeps, per
 * index, key -> the objects with that key, updated under the same write
 * lock as the table on every add, update, delete and replace, so a lookup
 * by key (kube_store_by_index) visits only the matching objects instead of
 * walking the store. A key whose last object leaves is dropped. An index
 * may be added at any time: it is built at once from what the store holds.
 *
 * Memory: kube_store_new() allocates a store freed with kube_store_free(),
 * which drops the store's references and frees its indexes. The store holds
 * one reference per object; index entries point at the same objects and
 * hold none. Objects passed in are borrowed: the store takes its own
 * reference. kube_store_get() returns a new reference the caller releases
 * with kube_object_unref(). Handler arguments are borrowed for the call.
 * Index keys are copied by kube_index_keys_add(); index names are copied.
 */
#ifndef KUBE_STORE_H
#define KUBE_STORE_H

#include <stddef.h>

#include "kube/machinery/informer.h"
#include "kube/codec/object.h"

typedef struct kube_store kube_store;

/* The keys an index function gives one object (see kube_index_fn). */
typedef struct kube_index_keys kube_index_keys;
/* Adds key (copied; NULL is KUBE_EINVAL) to keys; a key already added is
 * ignored. KUBE_OK, KUBE_EINVAL or KUBE_ENOMEM. */
int kube_index_keys_add(kube_index_keys *keys, const char *key);

/* An index function: adds obj's keys (none is fine) with
 * kube_index_keys_add() and returns KUBE_OK, or the first error of
 * kube_index_keys_add(). It must be pure (the same object always gives the
 * same keys: the keys of an object leaving the store are computed again)
 * and must not touch the store; it runs under the store's write lock. */
typedef int (*kube_index_fn)(const kube_object *obj, kube_index_keys *keys);

/* Allocates an empty store. Returns KUBE_OK or KUBE_ENOMEM. */
int kube_store_new(kube_store **out);
/* Drops every reference and frees the store. NULL-safe. */
void kube_store_free(kube_store *s);

/* Returns a new reference to the object at ns/name (ns "" or NULL for
 * cluster-scoped), or NULL. Thread-safe. */
kube_object *kube_store_get(kube_store *s, const char *ns, const char *name);
/* Number of objects. Thread-safe. */
size_t kube_store_count(kube_store *s);
/* Calls fn for each object under the read lock (fn must not modify the
 * store). Thread-safe. */
void kube_store_foreach(kube_store *s, void (*fn)(void *ud, kube_object *obj), void *ud);

/* Adds the index name (copied) computed by fn, built from the objects
 * stored now and kept from then on. Thread-safe, at any time. KUBE_OK (also
 * when name already exists with this fn), KUBE_EEXIST (name exists with
 * another fn), KUBE_EINVAL (NULL name or fn), KUBE_ENOMEM (no index added),
 * or fn's error. */
int kube_store_add_index(kube_store *s, const char *name, kube_index_fn fn);
/* Calls fn for each stored object the index name gives key, in no set
 * order, under the read lock (fn must not modify the store; its object is
 * borrowed for the call: kube_object_ref() it to keep it). Costs the number
 * of matching objects, not the store's size. KUBE_OK (also when none
 * match), KUBE_EINVAL (no index name, or NULL key). Thread-safe. */
int kube_store_by_index(kube_store *s, const char *name, const char *key,
                        void (*fn)(void *ud, kube_object *obj), void *ud);

/* Applies one watch event (type KUBE_WATCH_ADDED, _MODIFIED or _DELETED from
 * kube/codec/jsonstream.h) and calls the handlers (h and its members may be NULL).
 * obj is borrowed. Returns KUBE_OK, KUBE_EINVAL (other type) or KUBE_ENOMEM
 * or an index function's error (store and indexes unchanged, nothing
 * delivered). */
int kube_store_apply(kube_store *s, int type, kube_object *obj, const kube_informer_handlers *h);

/* Makes the store hold exactly objs[0..n) (a complete list result) and
 * delivers the difference as described above. objs are borrowed. Returns
 * KUBE_OK or KUBE_ENOMEM (then the store may hold part of the list; what
 * was changed was delivered, so handlers stay consistent with the store). */
int kube_store_replace(kube_store *s, kube_object *const *objs, size_t n,
                       const kube_informer_handlers *h);

#endif
