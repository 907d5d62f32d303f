/*
 * apiserver/pintarget.h - /pin's guard on the target node: a node that
 * cannot take the VM's next pod (kube/types/node_target.h: cordoned,
 * NotReady, Unknown, or a NoSchedule/NoExecute taint the VM's template
 * does not tolerate) is refused with a 409 unless force=true, so that a
 * pin never leaves the VM's next pod waiting forever. A pin to the node the
 * VM is already pinned to is never refused (nothing moves).
 *
 * Threads: pure. Memory: everything is borrowed; nothing is kept.
 */
#ifndef APIS_PINTARGET_H
#define APIS_PINTARGET_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Whether the Node node (its JSON) can take the VM vm (its JSON, pin
 * annotation key) that /pin would move there. KUBE_OK (it can, or the VM
 * is already pinned to it); KUBE_ECONFLICT with the reason in why (n
 * bytes: `node node-2 is cordoned (SchedulingDisabled)`) and the cause's
 * reason in *cause (static: NodeUnschedulable, NodeNotReady, NodeUnknown
 * or NodeTainted); KUBE_EPARSE (a Node that does not decode) or
 * KUBE_ENOMEM. */
int apis_pin_target_check(const cJSON *vm, const char *key, const cJSON *node, char *why, size_t n,
                          const char **cause);

#endif
