/*
 * apiserver/pin.h - pin and unpin: the one write stickyvm-apiserver makes.
 *
 * Pin sets the VirtualMachine's pin annotation (--pin-annotation-key,
 * stickyvm.io/node by default) to the node named by ?node= (a DNS-1123
 * subdomain naming an existing Node: else 422 Invalid, showing the whole
 * value as kube-apiserver's field errors do) or, without it, to the node
 * the VM's VirtualMachineInstance (same namespace and name) runs on
 * (status.nodeName; none is a 409 Conflict that suggests ?node=). Unpin
 * removes the annotation. The write goes through kube/types/pin.h: a JSON merge
 * patch carrying the VM's resourceVersion and the pin's history
 * (stickyvm.io/pinned-at, pinned-by = the authenticated user, pin-reason
 * API), so a concurrent change makes it fail with a Conflict; the VM is then
 * re-read and the patch retried (KUBE_PIN_MAX_ATTEMPTS patches at most,
 * then 409), which keeps concurrent pins from being lost. Writing what is
 * already there is answered with "changed": false and writes nothing,
 * unless what the decision saw (below) differs from what the VM records:
 * then that alone is written, the pin unchanged, and no Event.
 *
 * ?from=NODE is a precondition: the write goes ahead only while the VM is
 * pinned to NODE (?from= empty: only while it is unpinned), checked on the
 * VM read first and again on every re-read after a conflict; otherwise
 * the answer is a 409 Conflict whose message names the current pin and
 * whose one cause (reason FieldValueInvalid, field "from") carries it as
 * its message ("" when unpinned), and nothing is written (dryRun too).
 * Every decision written records what it saw (stickyvm.io/seen-pods,
 * seen-migration: kube/types/pin.h), which orders it against the
 * scheduler's later placements and migrations.
 *
 * A ?node= that cannot take the VM's next pod (apiserver/pintarget.h:
 * cordoned, NotReady, Unknown, an untolerated NoSchedule/NoExecute taint)
 * is a 409 Conflict saying which, unless force=true or the VM is already
 * pinned there; an empty ?node= is a 422 "Required value".
 *
 * dryRun=All answers the same VirtualMachinePin (what would change) and
 * writes nothing. A pin to a node outside the node affinity of a
 * PersistentVolume the VM's volumes are bound to (pinvolumes.h) is a 409
 * Conflict naming the volume, unless force=true. Every write that changed
 * the pin records an events.k8s.io/v1 Event on the VM (reason Pinned,
 * Repinned or Unpinned, action Pin or Unpin; the note names the user, the
 * previous node, the new one, and "forced" for force=true), and every
 * request is logged at the default verbosity (user, VM, code, latency).
 *
 * Threads: blocking (several requests to kube-apiserver); run on a worker.
 * Memory: the answer is appended to the caller's kube_buf.
 */
#ifndef APIS_PIN_H
#define APIS_PIN_H

#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "metrics.h"
#include "request.h"

typedef struct apis_pin_request {
    const char *namespace_;
    const char *name;
    int unpin;
    int has_node;                   /* ?node= given (pin only) */
    const char *node;               /* its value, whole (checked here) */
    const char *from;               /* ?from= (NULL: none; "": only if unpinned) */
    const char *key;                /* the pin annotation; NULL: stickyvm.io/node */
    const char *user;               /* the authenticated user (pinned-by); may be NULL */
    int dry_run;                    /* ?dryRun=All: write nothing */
    int force;                      /* ?force=true: override the target and volume guards */
    struct kube_lister *nodes;      /* the Node lister (/unpin's guard); NULL: no guard */
    struct kube_recorder *recorder; /* audit Events; NULL: none */
} apis_pin_request;

/* Performs the request and writes the HTTP code and JSON body of the answer
 * (the VirtualMachinePin, or a metav1.Status) to *code and body. Returns
 * KUBE_OK whenever an answer was produced (errors included), KUBE_ENOMEM
 * otherwise. m may be NULL. */
int apis_pin_execute(kube_client *c, apis_metrics *m, const apis_pin_request *r, int *code,
                     kube_buf *body);

/* Logs one pin or unpin request at the default verbosity: the
 * subresource, the VM, the user, node/dryRun/force, the answer's code and
 * the request's latency (secs). */
void apis_pin_log(const apis_route *r, const char *user, int code, double secs);

#endif
