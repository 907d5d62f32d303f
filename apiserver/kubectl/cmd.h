/*
 * apiserver/kubectl/cmd.h - kubectl-stickyvm's commands against the API:
 * pin and unpin (GET .../virtualmachines/VM/pin|unpin of
 * subresources.stickyvm.io/v1, as `kubectl get --raw` calls them), list
 * (virtualmachinepins, or the VMs' pin annotations when the server does
 * not serve that resource), why (why.c), evacuate (evacuate.c) and the
 * server's version.
 *
 * Each command prints its result to ctx->out and errors to ctx->err, and
 * returns the process's exit code (cli.h). Threads: one command at a time
 * per context. Memory: everything a command allocates is freed before it
 * returns; the context's fields are borrowed.
 */
#ifndef KCTL_CMD_H
#define KCTL_CMD_H

#include <cjson/cJSON.h>
#include <stdio.h>
#include <time.h>

#include "cli.h"
#include "kube/transport/client.h"
#include "kube/util/buf.h"

#define KCTL_GROUP_VERSION "subresources.stickyvm.io/v1"

typedef struct kctl_ctx {
    kube_client *client;
    const kctl_options *o;
    const char *ns; /* the namespace: -n, the context's, or "default" */
    FILE *out, *err;
    time_t now;
} kctl_ctx;

int kctl_pin(kctl_ctx *c);
int kctl_list(kctl_ctx *c);
int kctl_why(kctl_ctx *c);
int kctl_evacuate(kctl_ctx *c);
/* version: "Server Version: v1.32.0" (kube-apiserver's /version,
 * gitVersion) to c->out; an unreachable server is a line on c->err and
 * still exit 0 (the plugin's own version was printed). */
int kctl_server_version(kctl_ctx *c);

/* Appends api (a literal such as "/api/v1" or "/apis/kubevirt.io/v1"),
 * then "/namespaces/NS" unless ns is NULL, "/PLURAL" (a literal), and
 * "/NAME" unless name is NULL, to b: NS and NAME percent-escaped, so no
 * name can add a segment, a query or a fragment. KUBE_OK or KUBE_ENOMEM. */
int kctl_object_path(kube_buf *b, const char *api, const char *ns, const char *plural,
                     const char *name);

/* Appends the path of a pin (unpin 0; node NULL: where its VMI runs) or an
 * unpin of VM ns/vm to b: .../virtualmachines/VM/pin?node=&from=&
 * dryRun=All&force=true (from NULL: no precondition; "": from= empty, only
 * if unpinned), every name and value escaped (kctl_object_path). KUBE_OK
 * or KUBE_ENOMEM. */
int kctl_pin_path(kube_buf *b, const char *ns, const char *vm, int unpin, const char *node,
                  const char *from, int dry_run, int force);

/* The pins of -n's namespace (or every one with -A), of the VMs matching
 * -l, pinned to node when node is not NULL (fieldSelector node=NODE):
 * virtualmachinepins, or the VMs' annotations on a server without it.
 * KUBE_OK with *out a VirtualMachinePinList (caller frees), else the
 * call's error with resp filled (caller clears resp in both cases). */
int kctl_fetch_pins(kctl_ctx *c, const char *node, cJSON **out, kube_response *resp);

/* The pinned node's state the server wrote in a VirtualMachinePin
 * (status.nodeStatus: "Ready", "NotReady,SchedulingDisabled", "Missing"),
 * or NULL. Borrowed from pin. */
const char *kctl_node_status(const cJSON *pin);

/* Whether status (NULL: never) is in states, a comma-separated list: its
 * first word is one of them, or states has SchedulingDisabled and status
 * carries it. */
int kctl_node_status_matches(const char *status, const char *states);

/* Keeps the items of list (a VirtualMachinePinList) whose node status is
 * in states (kctl_node_status_matches). */
void kctl_keep_node_status(cJSON *list, const char *states);

/* Writes list as list's table (NAMESPACE with -A; NAME, NODE,
 * NODE-STATUS, SINCE, BY, AGE against c->now), or "No resources found"
 * to c->err when empty. KUBE_OK or KUBE_ENOMEM. */
int kctl_print_pin_table(kctl_ctx *c, const cJSON *list);

/* GETs path and decodes the JSON answer into *out (caller frees). KUBE_OK,
 * else the call's error with resp->status filled (resp cleared by the
 * caller), or KUBE_EPARSE for an answer that is not JSON. */
int kctl_get_json(kctl_ctx *c, const char *path, cJSON **out, kube_response *resp);

/* The string at key of obj, or NULL. Borrowed from obj. */
const char *kctl_str(const cJSON *obj, const char *key);

/* The VirtualMachinePin of a kubevirt.io VM object (the pin annotations
 * of kube/types/pin.h: node, since = pinned-at, by, reason); caller frees.
 * NULL on out-of-memory. */
cJSON *kctl_pin_from_vm(const cJSON *vm);

#endif
