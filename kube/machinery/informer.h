/*
 * kube/machinery/informer.h - client-go style shared informers in C.
 *
 * An informer lists a resource (paginated with limit/continue), then watches
 * from the list's resourceVersion with allowWatchBookmarks=true, parsing the
 * chunked stream of JSON lines as it arrives. It tracks the last
 * resourceVersion (bookmarks included). A watch that ends normally is
 * re-opened from there. A 410 Expired (HTTP, or an in-stream ERROR event)
 * triggers a re-list whose difference with the store is delivered as
 * add/update/delete, so handlers see a consistent sequence. Failures
 * reconnect with jittered exponential backoff (capped at 30 s).
 *
 * All informers of a kube_hub share one thread, driven by curl's multi
 * interface. Handlers run on that thread, one event at a time, in order;
 * they must not block for long. Handlers receive borrowed objects: take a
 * reference with kube_object_ref() to keep one past the call. A handler may
 * read any informer's store and add informers, but must not call
 * kube_hub_stop()/kube_hub_free() (the hub thread would wait for itself).
 *
 * Lists do not block the watches: they are not made with kube_client_do()
 * but run on the same curl multi handle as the watches, as ordinary
 * non-blocking transfers, and the response is decoded item by item as it
 * arrives (kube/codec/jsonstream.h, LIST mode). Neither a list worker thread nor a
 * whole-body buffer is needed, so memory stays bounded by the store itself
 * even when kube-apiserver answers a resourceVersion=0 list from its watch
 * cache in one response (it ignores limit there), and a slow list of one
 * informer only costs the others the decoding time of each chunk. The
 * items of a list are staged and applied to the store only once the last
 * page arrived (a list that fails half-way changes nothing). The only
 * blocking call on the hub thread is kube_client_wait_rate() before each
 * request (bounded by 1/qps).
 *
 * Reflector semantics follow client-go v1.23: the first list asks
 * resourceVersion=0 (served from the watch cache); a re-list asks the last
 * seen version, without limit unless the server paginated before or
 * page_size is set; a list answering 410 Expired (or "Too large resource
 * version") is retried at once with resourceVersion="" (a consistent read);
 * a continue page answering 410 falls back to one full list (no limit) at
 * the requested version. A watch that ends normally is re-opened at once
 * from the last version; one that ends in under a second with no event is
 * retried with backoff. HTTP 410 or an ERROR event with code 410 re-lists;
 * any other failure (transport, 429, 5xx, other ERROR events) re-watches
 * from the last version after the backoff (800 ms doubling to 30 s,
 * jittered, Retry-After honoured, reset after 2 min without failures).
 * Malformed stream lines and objects the codec rejects are logged, counted
 * in stats.errors and skipped. Store deliveries are described in
 * kube/machinery/store.h (a recreated object, same name but new uid, is delivered as
 * on_delete(old) then on_add(new)).
 *
 * Memory: kube_hub_new() allocates a hub freed by kube_hub_free() (after
 * kube_hub_stop()). Informers belong to their hub and are freed with it.
 * The store keeps one reference per object. kube_informer_get() returns a
 * new reference the caller releases with kube_object_unref().
 */
#ifndef KUBE_INFORMER_H
#define KUBE_INFORMER_H

#include <stddef.h>

#include "kube/transport/api.h"
#include "kube/transport/client.h"
#include "kube/codec/object.h"

typedef struct kube_hub kube_hub;
typedef struct kube_informer kube_informer;
struct kube_store; /* kube/machinery/store.h */

typedef struct kube_informer_handlers {
    void (*on_add)(void *ud, kube_object *obj);
    void (*on_update)(void *ud, kube_object *old_obj, kube_object *new_obj);
    void (*on_delete)(void *ud, kube_object *obj);
    void *ud;
} kube_informer_handlers;

typedef struct kube_informer_options {
    const kube_resource *resource;
    const kube_codec *codec;
    const char *namespace_;     /* NULL: all namespaces */
    const char *field_selector; /* NULL: none, e.g. "spec.nodeName=" */
    const char *label_selector; /* NULL: none */
    int page_size;              /* list limit; 0: 500, as client-go's pager (see above) */
    int watch_timeout_s;        /* timeoutSeconds for a watch; 0: 300..600 jittered,
                                   n: n..2n jittered */
    /* Added (zero means the default): */
    int backoff_initial_ms; /* first failure backoff, default 800 */
    int backoff_max_ms;     /* backoff cap, default 30000 */
} kube_informer_options;

/* Allocates a hub (not started) on *out. The client is borrowed and must
 * outlive the hub. Returns KUBE_OK, KUBE_EINVAL or KUBE_ENOMEM. */
int kube_hub_new(kube_client *client, kube_hub **out);
/* Adds an informer before or after start (a running hub picks it up at
 * once). opts' strings are copied; opts->resource and opts->codec are
 * borrowed (static descriptors). handlers (may be NULL, and any member may
 * be NULL) are copied; handlers->ud is borrowed and must outlive the hub.
 * *out (may be NULL) receives the informer, owned by the hub. Without
 * handlers (a caller that only reads the store), an informer already added
 * for the same resource, codec, namespace and selectors is shared, as
 * client-go's shared informer factory does: *out then points at it and no
 * second list and watch run. Returns KUBE_OK, KUBE_EINVAL, KUBE_ENOMEM, or
 * KUBE_ECANCELED after stop. */
int kube_hub_add_informer(kube_hub *hub, const kube_informer_options *opts,
                          const kube_informer_handlers *handlers, kube_informer **out);
/* Starts the hub thread. Returns KUBE_OK (also when already started),
 * KUBE_ECANCELED after stop, or KUBE_ENOMEM. */
int kube_hub_start(kube_hub *hub);
/* Stops the thread and closes every watch; idempotent. Interrupts the
 * hub's waits (curl_multi_wakeup) and returns once the thread has exited,
 * i.e. after the handler running at that moment, if any, returns. Stores
 * stay readable until kube_hub_free(). Never call it from a handler. */
void kube_hub_stop(kube_hub *hub);
/* Stops the hub if needed, then frees it, its informers and their stores
 * (dropping the stores' references). NULL-safe. */
void kube_hub_free(kube_hub *hub);

/* Non-zero once the first list has been delivered. Thread-safe. */
int kube_informer_has_synced(kube_informer *inf);
/* Waits until every informer of the hub has synced, or timeout_ms passes.
 * Returns KUBE_OK, KUBE_ETIMEDOUT, or KUBE_ECANCELED once the hub stopped. */
int kube_hub_wait_synced(kube_hub *hub, long timeout_ms);

/* Store lookups, thread-safe. ns is "" for cluster-scoped objects. Returns
 * a new reference or NULL. */
kube_object *kube_informer_get(kube_informer *inf, const char *ns, const char *name);
/* Calls fn for every stored object (under the store's read lock; fn must not
 * call back into the informer). */
void kube_informer_foreach(kube_informer *inf, void (*fn)(void *ud, kube_object *obj), void *ud);
/* The informer's store (client-go's GetIndexer): owned by the hub, valid
 * until kube_hub_free(); for its indexes (kube_store_add_index,
 * kube_store_by_index in kube/machinery/store.h). Never apply changes to it. */
struct kube_store *kube_informer_store(kube_informer *inf);
/* The last resourceVersion seen (list, event or bookmark), copied into out
 * (n bytes, NUL-terminated; "" before the first list). Thread-safe. */
void kube_informer_last_rv(kube_informer *inf, char *out, size_t n);

/* Counters, for tests and metrics. Thread-safe.
 *   lists: list attempts (a paginated list with its fallbacks counts once)
 *   watches: watch requests started
 *   relists_410: re-lists caused by a 410 on a watch
 *   events: ADDED/MODIFIED/DELETED applied; bookmarks: BOOKMARKs seen
 *   errors: failed requests, malformed lines, objects the codec rejected */
typedef struct kube_informer_stats {
    unsigned long lists, watches, relists_410, events, bookmarks, errors;
} kube_informer_stats;

#endif
