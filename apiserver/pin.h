/*
 * apiserver/pin.h - pin and unpin: the one write stickyvm-apiserver makes.
 *
 * Pin sets the VirtualMachine annotation stickyvm.io/node to the node named
 * by ?node= (which must exist: else 422 Invalid) or, without it, to the node
 * the VM's VirtualMachineInstance (same namespace and name) runs on
 * (status.nodeName; none is a 409 Conflict that suggests ?node=). Unpin
 * removes the annotation. The write is a JSON merge patch carrying the VM's
 * resourceVersion, so a concurrent change makes it fail with a Conflict; the
 * VM is then re-read and the patch retried (bounded), which keeps
 * concurrent pins from being lost. Writing what is already there is skipped
 * and answered with "changed": false.
 *
 * Threads: blocking (several requests to kube-apiserver); run on a worker.
 * Memory: the answer is appended to the caller's kube_buf.
 */
#ifndef APIS_PIN_H
#define APIS_PIN_H

#include "kube/buf.h"
#include "kube/client.h"
#include "metrics.h"

#define APIS_PIN_MAX_ATTEMPTS 10

typedef struct apis_pin_request {
    const char *namespace_;
    const char *name;
    int unpin;
    int has_node;        /* ?node= given (pin only) */
    const char *node;    /* its value */
    int node_valid;      /* that value is a DNS-1123 subdomain */
} apis_pin_request;

/* Performs the request and writes the HTTP code and JSON body of the answer
 * (the VirtualMachinePin, or a metav1.Status) to *code and body. Returns
 * KUBE_OK whenever an answer was produced (errors included), KUBE_ENOMEM
 * otherwise. m may be NULL. */
int apis_pin_execute(kube_client *c, apis_metrics *m, const apis_pin_request *r, int *code,
                     kube_buf *body);

#endif
