/*
 * apiserver/kubectl/cmd.h - kubectl-stickyvm's commands against the API:
 * pin and unpin (GET .../virtualmachines/VM/pin|unpin of
 * subresources.stickyvm.io/v1, as `kubectl get --raw` calls them), list
 * (virtualmachinepins, or the VMs' pin annotations when the server does
 * not serve that resource) and why (why.c).
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
