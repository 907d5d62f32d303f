/*
 * apiserver/vmpins.h - the read-only resource virtualmachinepins
 * (subresources.stickyvm.io/v1, kind VirtualMachinePin, short name vmpin):
 * one object per VirtualMachine, served from the VM lister of
 * stickyvm-apiserver's one informer factory (never a GET per request).
 *
 * A VirtualMachinePin carries the VM's name, namespace, uid,
 * resourceVersion, creationTimestamp and labels, and the pin record of
 * kube/types/pin.h: node (null when unpinned), since (pinned-at), by
 * (pinned-by) and reason (pin-reason: FirstPlacement, API, Migration),
 * each null when absent; and status.nodeStatus, the pinned node as
 * `kubectl get nodes` words it (kube_node_status(): Ready, NotReady,
 * Unknown, then ",SchedulingDisabled" when cordoned; Missing when no Node
 * has that name), null when unpinned. The Nodes and the pods come from
 * listers of the same factory.
 *
 *   GET .../virtualmachinepins                     list, all namespaces
 *   GET .../namespaces/{ns}/virtualmachinepins     list, one namespace
 *   GET .../namespaces/{ns}/virtualmachinepins/{n} get
 *
 * Lists are VirtualMachinePinList sorted by namespace and name, with the
 * informer's resourceVersion. labelSelector selects on the VM's labels;
 * fieldSelector on node (the pinned node, "" when unpinned),
 * status.nodeStatus (the whole value, "" when unpinned), metadata.name
 * and metadata.namespace (=, ==, !=; any other field is a
 * 400 "field label not supported"). A list with ?watch=true (or 1) is a
 * watch (vmpins_watch.h: resourceVersion, timeoutSeconds, the selectors
 * and Tables apply); a get ignores watch, as kube-apiserver's. With Accept
 * application/json;as=Table;v=v1 (or v1beta1); g=meta.k8s.io the answer is a meta.k8s.io Table with
 * the columns Name, Node, Node-Status, Since, By and Age, and for -o wide
 * (priority 1) Pod (the VM's current virt-launcher pod) and Waiting (how
 * long that pod has been Pending), each row's object as includeObject asks (None,
 * Metadata: a PartialObjectMetadata, the default; Object: the whole
 * VirtualMachinePin; anything else 400). An Accept that allows neither
 * JSON nor a Table is 406.
 *
 * Threads: apis_vmpins_serve() may block until the informer synced (at
 * most 10 s, then 503): run it on a worker. Everything else is
 * thread-safe.
 * Memory: apis_vmpins_new() allocates; apis_vmpins_free() frees (after
 * the factory stopped: its VM and Node handlers point here). The factory is
 * borrowed and must outlive the object. Answers are appended to the
 * caller's kube_buf.
 */
#ifndef APIS_VMPINS_H
#define APIS_VMPINS_H

#include <stdint.h>

#include "kube/codec/selector.h"
#include "kube/machinery/factory.h"
#include "kube/serving/exchange.h"
#include "kube/types/kubevirt.h"
#include "kube/types/node.h"
#include "kube/util/buf.h"
#include "request.h"

#define APIS_VMPIN_KIND "VirtualMachinePin"

typedef struct apis_vmpins apis_vmpins;

/* Takes the VM, Node and Pod listers of f (the factory not started yet:
 * its handlers are added) and serves from it once f starts. key: the pin annotation
 * (NULL: the default). KUBE_OK, or kube_factory_lister()'s and
 * kube_lister_add_handlers()' errors. */
int apis_vmpins_new(kube_factory *f, const char *key, apis_vmpins **out);
void apis_vmpins_free(apis_vmpins *v);

/* Answers a VMPINS or VMPIN route (accept may be NULL): the body is
 * appended to body, *content_type set (static), the HTTP code returned.
 * v NULL answers 503. */
int apis_vmpins_serve(apis_vmpins *v, const apis_route *r, const char *accept,
                      const char **content_type, kube_buf *body);

/* 1 when r is a watch (a VMPINS list with ?watch=true or 1). */
int apis_vmpins_is_watch(const apis_route *r);
/* Serves a watch (may block until the informer synced, at most 10 s):
 * answers x with the stream, or a Status (400, 406, 503). v NULL answers
 * 503. */
void apis_vmpins_watch(apis_vmpins *v, const apis_route *r, const char *accept, kube_exchange *x);

/* ---- the pure pieces, for tests ---- */

/* What a VirtualMachinePin reads beside its VM: the pin annotation and
 * two look-ups (the listers in the server, fixed objects in tests). */
typedef struct apis_vmpins_world {
    const char *key; /* the pin annotation */
    /* The Node named name, a reference the caller drops; NULL when none. */
    kube_object *(*node)(void *ud, const char *name);
    /* The VM's current virt-launcher pod, a reference the caller drops;
     * NULL when none. */
    kube_object *(*pod)(void *ud, const kube_vm *vm);
    void *ud;
} apis_vmpins_world;

/* status.nodeStatus of vm written into out (size n, at least
 * KUBE_NODE_STATUS_MAX) and returned; NULL when vm is unpinned. */
const char *apis_vmpins_node_status(const apis_vmpins_world *w, const kube_vm *vm, char *out,
                                    size_t n);

typedef enum apis_vmpins_include {
    APIS_VMPINS_INCLUDE_METADATA = 0,
    APIS_VMPINS_INCLUDE_NONE,
    APIS_VMPINS_INCLUDE_OBJECT,
} apis_vmpins_include;

typedef struct apis_vmpins_format {
    const char *table_version; /* NULL: plain JSON; "v1" or "v1beta1": a Table */
    apis_vmpins_include include;
} apis_vmpins_format;

/* Reads an Accept header (NULL or "": JSON) into f->table_version.
 * KUBE_OK, or KUBE_EINVAL when no media range is served (406). */
int apis_vmpins_accept_parse(const char *accept, apis_vmpins_format *f);

/* What one request selects. */
typedef struct apis_vmpins_filter {
    kube_label_selector *labels; /* NULL: everything */
    kube_field_selector fields;  /* ANDed; none: everything */
} apis_vmpins_filter;

/* Parses labelSelector and fieldSelector (either may be NULL; the fields
 * as fields.ParseSelector: terms split at commas, values unescaped from
 * \\, \, and \=, so "status.nodeStatus=Ready\,SchedulingDisabled"). KUBE_OK, or
 * KUBE_EBADREQUEST with msg (size n) for the 400, or KUBE_ENOMEM. Free
 * with apis_vmpins_filter_free() in every case. */
int apis_vmpins_filter_parse(const char *labels, const char *fields, apis_vmpins_filter *f,
                             char *msg, size_t n);
void apis_vmpins_filter_free(apis_vmpins_filter *f);
/* 1 when vm (as w sees it) is selected. */
int apis_vmpins_filter_matches(const apis_vmpins_filter *f, const kube_vm *vm,
                               const apis_vmpins_world *w);

/* The VirtualMachinePin of vm as w sees it, a cJSON tree the caller frees
 * (NULL when out of memory). */
cJSON *apis_vmpin_object(const kube_vm *vm, const apis_vmpins_world *w);

/* Renders vms[0..n) (the VMs selected, in order) as f asks: a list
 * (VirtualMachinePinList with resourceVersion rv) or, when single, the one
 * object; or a Table. now_s: the clock for the Since, Age and Waiting cells.
 * KUBE_OK or KUBE_ENOMEM. */
int apis_vmpins_render(const kube_vm *const *vms, size_t n, int single, const apis_vmpins_world *w,
                       const char *rv, const apis_vmpins_format *f, int64_t now_s, kube_buf *out);

/* One watch event line ({"type":type,"object":...} and a newline) of vm
 * as w sees it and f asks: the VirtualMachinePin, or a Table of its one row
 * (columnDefinitions null unless columns). rv: the event's
 * resourceVersion (NULL: the VM's). KUBE_OK or KUBE_ENOMEM. */
int apis_vmpins_render_event(const char *type, const kube_vm *vm, const apis_vmpins_world *w,
                             const char *rv, const apis_vmpins_format *f, int columns,
                             int64_t now_s, kube_buf *out);

#endif
