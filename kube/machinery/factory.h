/*
 * kube/machinery/factory.h - the shared informer factory (client-go's
 * SharedInformerFactory) on top of kube/machinery/informer.h.
 *
 * A factory owns one informer hub and at most ONE informer per resource,
 * created on the first request for it (kube_factory_lister()) and shared by
 * every later caller: a profile's plugins, the scheduler's event handlers
 * and the pin controller all read the same store and the same watch.
 * What nobody asked for is never listed nor watched. kube_factory_start()
 * starts them together (an informer requested later starts at once);
 * kube_factory_wait_synced() is WaitForCacheSync.
 *
 * A kube_lister is the reading side of a shared informer (a client-go
 * Lister plus HasSynced) and the place to add event handlers
 * (SharedIndexInformer.AddEventHandler): every handler added before the
 * factory starts gets every add, update and delete, in the order the
 * handlers were added, on the hub's thread (kube/machinery/informer.h's
 * rules: borrowed objects, do not block, never stop the factory from a
 * handler). Each lister also counts its changes (a generation) so a reader
 * can wait for the cache to move instead of polling (kube_listers_wait()).
 *
 * A factory made without a client is a fake one (client-go's fake
 * informers): its listers are plain stores that tests fill with
 * kube_lister_apply() (factory_testing.h), which delivers to the handlers
 * as a watch would; they count as synced.
 *
 * Memory: kube_factory_new() allocates the factory; kube_factory_free()
 * stops it and frees its hub, its listers and their stores. Listers belong
 * to the factory. kube_lister_get() returns a new reference the caller
 * releases with kube_object_unref(). Handler uds are borrowed and must
 * outlive the factory's hub (kube_factory_stop()).
 * Threads: requesting listers and adding handlers from the controlling
 * thread; reads, generations and waits from any thread.
 */
#ifndef KUBE_FACTORY_H
#define KUBE_FACTORY_H

#include <stddef.h>
#include <stdint.h>

#include "kube/machinery/informer.h"
#include "kube/machinery/store.h"

typedef struct kube_factory kube_factory;
typedef struct kube_lister kube_lister;

/* Allocates a factory (not started) listing and watching through client
 * (borrowed, must outlive the factory); client NULL makes a fake factory
 * (see above). KUBE_OK, or kube_hub_new()'s error (KUBE_EINVAL,
 * KUBE_ENOMEM). */
int kube_factory_new(kube_client *client, kube_factory **out);
/* Stops the factory if needed and frees it. NULL-safe. */
void kube_factory_free(kube_factory *f);

/* The shared informer of o->resource: created with o (strings copied,
 * resource and codec borrowed) on the first request, the same one after.
 * A later request with another codec or other selectors or namespace is
 * KUBE_EINVAL (one informer per resource). *out is owned by the factory.
 * KUBE_OK, KUBE_EINVAL, KUBE_ENOMEM, KUBE_ECANCELED after stop. */
int kube_factory_lister(kube_factory *f, const kube_informer_options *o, kube_lister **out);

/* Starts every informer (the hub thread). KUBE_OK (also when started),
 * KUBE_ECANCELED after stop, KUBE_ENOMEM. */
int kube_factory_start(kube_factory *f);
/* Stops the hub and closes every watch (never from a handler);
 * idempotent. Stores stay readable until kube_factory_free(). */
void kube_factory_stop(kube_factory *f);
/* WaitForCacheSync: every informer synced. KUBE_OK, KUBE_ETIMEDOUT,
 * KUBE_ECANCELED once stopped. */
int kube_factory_wait_synced(kube_factory *f, long timeout_ms);

/* Adds handlers (copied; any member may be NULL; h->ud borrowed) to l.
 * Only before the factory starts: KUBE_EINVAL after. KUBE_OK, KUBE_ENOMEM. */
int kube_lister_add_handlers(kube_lister *l, const kube_informer_handlers *h);

/* Reads; l may be NULL (nothing listed). ns "" for cluster-scoped. */
kube_object *kube_lister_get(kube_lister *l, const char *ns, const char *name);
/* fn for every object, under the store's read lock (fn must not call back
 * into l). */
void kube_lister_foreach(kube_lister *l, void (*fn)(void *ud, kube_object *obj), void *ud);
/* AddIndexers: adds the index name (copied) computed by fn to l's store,
 * at any time (built at once from what the store holds, then kept on every
 * change; kube/machinery/store.h). KUBE_OK (also when l already has name
 * with fn), KUBE_EEXIST (name with another fn), KUBE_EINVAL (l, name or fn
 * NULL), KUBE_ENOMEM, or fn's error. */
int kube_lister_add_index(kube_lister *l, const char *name, kube_index_fn fn);
/* ByIndex: fn for each object of l that the index name gives key, under
 * the store's read lock (fn must not call back into l; its object is
 * borrowed for the call). Costs the matching objects, not the store.
 * KUBE_OK (also when none match, and for l NULL: nothing listed),
 * KUBE_EINVAL (l has no index name, or key is NULL). */
int kube_lister_by_index(kube_lister *l, const char *name, const char *key,
                         void (*fn)(void *ud, kube_object *obj), void *ud);
/* 1 once the first list was delivered (always for a fake lister). */
int kube_lister_has_synced(kube_lister *l);

/* The resourceVersion the informer last listed or watched, into out
 * (size n; "" before the first list, and for a fake lister). */
void kube_lister_last_rv(kube_lister *l, char *out, size_t n);

/* The number of changes delivered so far (adds, updates, deletes). */
uint64_t kube_lister_generation(kube_lister *l);
/* Waits until the sum of the generations of ls[0..n) (NULL entries count
 * 0) differs from *gen, or timeout_ms passes; *gen receives the current
 * sum. 1 when it changed. With every entry NULL (nothing listed), sleeps
 * timeout_ms and returns 0. */
int kube_listers_wait(kube_lister *const *ls, size_t n, uint64_t *gen, long timeout_ms);
/* The sum of the generations of ls[0..n). */
uint64_t kube_listers_generation(kube_lister *const *ls, size_t n);

#endif
