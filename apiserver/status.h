/*
 * apiserver/status.h - the VirtualMachinePin answer of /pin and /unpin; the
 * metav1.Status bodies are kube/serving/status.h's.
 *
 * Memory: appends to a caller-owned kube_buf; KUBE_OK or KUBE_ENOMEM.
 */
#ifndef APIS_STATUS_H
#define APIS_STATUS_H

#include "kube/serving/status.h"
#include "kube/util/buf.h"

/* The VirtualMachinePin answer. node / previous_node NULL write null. */
int apis_pin_answer_json(kube_buf *out, const char *ns, const char *name, const char *node,
                         const char *previous_node, int changed);

#endif
