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
 * Memory: kube_store_new() allocates a store freed with kube_store_free(),
 * which drops the store's references. The store holds one reference per
 * object. Objects passed in are borrowed: the store takes its own reference.
 * kube_store_get() returns a new reference the caller releases with
 * kube_object_unref(). Handler arguments are borrowed for the call.
 */
#ifndef KUBE_STORE_H
#define KUBE_STORE_H

#include <stddef.h>

#include "kube/machinery/informer.h"
#include "kube/codec/object.h"

typedef struct kube_store kube_store;

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

/* Applies one watch event (type KUBE_WATCH_ADDED, _MODIFIED or _DELETED from
 * kube/codec/jsonstream.h) and calls the handlers (h and its members may be NULL).
 * obj is borrowed. Returns KUBE_OK, KUBE_EINVAL (other type) or KUBE_ENOMEM
 * (store unchanged, nothing delivered). */
int kube_store_apply(kube_store *s, int type, kube_object *obj, const kube_informer_handlers *h);

/* Makes the store hold exactly objs[0..n) (a complete list result) and
 * delivers the difference as described above. objs are borrowed. Returns
 * KUBE_OK or KUBE_ENOMEM (then the store may hold part of the list; what
 * was changed was delivered, so handlers stay consistent with the store). */
int kube_store_replace(kube_store *s, kube_object *const *objs, size_t n,
                       const kube_informer_handlers *h);

#endif
