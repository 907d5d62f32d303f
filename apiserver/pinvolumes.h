/*
 * apiserver/pinvolumes.h - whether a VM's data can follow it to a node,
 * read with GETs: the claims of the VM and its instance, the
 * PersistentVolumes they are bound to (spec.volumeName), and the rule of
 * kube/types/localvolumes.h (the one the scheduler's node-loss unpin also
 * applies): each bound PV must allow the target Node of a pin, and an
 * unpin must not take the VM away from the only node its data lives on.
 *
 * Threads: both checks block (GETs to kube-apiserver); run
 * it on a worker. Memory: nothing allocated survives the call.
 */
#ifndef APIS_PINVOLUMES_H
#define APIS_PINVOLUMES_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "kube/machinery/factory.h"
#include "kube/transport/client.h"

/* Checks the claims of VM ns/name (vm: its JSON) against node (the Node's
 * JSON). Returns KUBE_OK when every bound PV allows the node;
 * KUBE_ECONFLICT with why (size n) saying which volume, claim and PV, and
 * the node they live on; or the error of a GET (st filled). */
int apis_pin_volumes_check(kube_client *c, const char *ns, const char *name, const cJSON *vm,
                           const cJSON *node, char *why, size_t n, kube_status *st);

/* Checks the claims of VM ns/name (vm: its JSON), pinned to node pinned,
 * before an unpin: returns KUBE_ECONFLICT with why (size n) when a bound
 * PV has node affinity that allows no Node of nodes (a Node lister,
 * borrowed) but pinned (kube_pv_holds_to_node: its data lives there);
 * KUBE_OK when none does; or the error of a GET (st filled). */
int apis_unpin_volumes_check(kube_client *c, kube_lister *nodes, const char *ns, const char *name,
                             const cJSON *vm, const char *pinned, char *why, size_t n,
                             kube_status *st);

#endif
