/*
 * apiserver/vmpins_watch.h - watch on virtualmachinepins, as
 * kube-apiserver's watch cache serves one: events derived from the VM
 * informer's deliveries (every VM change is a MODIFIED, its
 * resourceVersion is the event's) and from the Node informer's (a Node
 * whose status changes, or that is created or deleted, is a change of each
 * VM pinned to it, with the Node's resourceVersion: the cacher sees one
 * etcd revision for both), a short history of them for watches
 * from a resourceVersion, and the watchers, each streaming JSON lines
 * {"type":...,"object":...} over a chunked answer (kube/serving/stream.h).
 *
 *   resourceVersion "" or "0": synthetic ADDED events for the selected
 *     VMs in the store, then the changes;
 *   resourceVersion N: the changes after N from the history; N older than
 *     the history: one ERROR event (a metav1.Status 410 Expired "too old
 *     resource version: N (M)") and the end, as the cacher answers;
 *   selectors apply to both sides of a change, as the cacher's filter: a
 *     VM entering the selection is ADDED, one leaving it DELETED (its
 *     previous state, with the event's resourceVersion);
 *   a Table (Accept as=Table) event carries a Table of one row; only the
 *     first event of a watch carries the columnDefinitions;
 *   allowWatchBookmarks: a BOOKMARK event (the kind and the informer's
 *     resourceVersion alone) every minute and 2 s before the watch's
 *     timeout, as the cacher sends them (not on Table watches).
 *
 * Threads: the informer's handlers run on the hub thread; apis_vmwatch_start
 * on a worker; the streams' cancel callbacks on the server's thread; the
 * bookmarks on a thread of the watch's own; one mutex orders them.
 * Memory: apis_vmwatch_new() allocates; apis_vmwatch_free() frees the
 * history and any watcher left, and must come after the server (whose
 * streams point at the watchers) was freed.
 */
#ifndef APIS_VMPINS_WATCH_H
#define APIS_VMPINS_WATCH_H

#include <stdint.h>

#include "kube/machinery/factory.h"
#include "kube/serving/exchange.h"
#include "vmpins.h"

typedef struct apis_vmwatch apis_vmwatch;

/* world: what the pins read (borrowed; outlives the watch). KUBE_OK or
 * KUBE_ENOMEM. */
int apis_vmwatch_new(const apis_vmpins_world *world, apis_vmwatch **out);
void apis_vmwatch_free(apis_vmwatch *w);
/* The handlers to add to the VM lister, and the listers (borrowed). */
kube_informer_handlers apis_vmwatch_handlers(apis_vmwatch *w);
/* The handlers to add to the Node lister. */
kube_informer_handlers apis_vmwatch_node_handlers(apis_vmwatch *w);
void apis_vmwatch_set_listers(apis_vmwatch *w, kube_lister *vms, kube_lister *nodes);

/* What one watch asks. */
typedef struct apis_vmwatch_request {
    const char *namespace_; /* "" or NULL: all */
    const char *resource_version;
    int64_t timeout_s; /* > 0 */
    int bookmarks;     /* allowWatchBookmarks */
    apis_vmpins_format format;
    apis_vmpins_filter filter; /* taken over (freed by the watch) */
} apis_vmwatch_request;

/* Answers x with the watch's stream. KUBE_OK, KUBE_EBADREQUEST (a
 * resourceVersion that is not a number; nothing answered) or KUBE_ENOMEM.
 * The filter is freed in every case. */
int apis_vmwatch_start(apis_vmwatch *w, apis_vmwatch_request *r, kube_exchange *x);

#endif
