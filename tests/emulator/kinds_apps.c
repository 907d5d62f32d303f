/*
 * tests/emulator/kinds_apps.c - the kinds `kubectl apply -k manifests/`
 * installs besides those the emulator already serves, so the manifests,
 * scripts/gen-apiserver-certs.sh, the e2e suite and the demo run against the
 * emulator as against a cluster. A plug-in; each kind is stored and served
 * (get, list, watch, create, update, patch, delete) but nothing acts on it:
 * there is no Deployment controller, no Service endpoints, no token
 * controller.
 *
 *   v1 serviceaccounts (sa), v1 secrets (stringData folded into data as
 *   kube-apiserver does, type defaulting to Opaque), v1 services (svc),
 *   apps/v1 deployments (deploy, /status, metadata.generation).
 *
 * and those stickyvm-scheduler watches for PodTopologySpread's default
 * constraints (helper.DefaultSelector), with v1.23's short names and
 * categories (the /scale subresources are not served):
 *
 *   v1 replicationcontrollers (rc), apps/v1 replicasets (rs) and
 *   statefulsets (sts), each with /status and metadata.generation.
 *
 * A kind another plug-in or the core already serves is left to it.
 */
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"
#include "kube/codec/base64.h"

static const char *const top_order[] = {"kind", "apiVersion", "metadata", "spec", "status", NULL};
static const char *const secret_order[] = {"kind", "apiVersion", "metadata", "data", "type", NULL};

static const emu_resource_def defs[] = {
    {"", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", "ServiceAccountList", "sa",
     NULL, 1, 0, 0, NULL},
    {"", "v1", "secrets", "secret", "Secret", "SecretList", NULL, NULL, 1, 0, 0, NULL},
    {"", "v1", "services", "service", "Service", "ServiceList", "svc", "all", 1, 1, 0, NULL},
    {"apps", "v1", "deployments", "deployment", "Deployment", "DeploymentList", "deploy", "all", 1,
     1, 0, NULL},
    {"", "v1", "replicationcontrollers", "replicationcontroller", "ReplicationController",
     "ReplicationControllerList", "rc", "all", 1, 1, 0, NULL},
    {"apps", "v1", "replicasets", "replicaset", "ReplicaSet", "ReplicaSetList", "rs", "all", 1, 1,
     0, NULL},
    {"apps", "v1", "statefulsets", "statefulset", "StatefulSet", "StatefulSetList", "sts", "all", 1,
     1, 0, NULL},
};
enum { K_SA, K_SECRET, K_SVC, K_DEPLOY, K_RC, K_RS, K_SS, K_COUNT };

/* kube-apiserver writes stringData into data (base64) and drops it. */
static int fold_string_data(cJSON *obj)
{
    cJSON *sd = cJSON_DetachItemFromObjectCaseSensitive(obj, "stringData");
    const cJSON *it;
    cJSON *data;
    int rc = KUBE_OK;

    if (!sd)
        return KUBE_OK;
    data = emu_json_obj(obj, "data");
    cJSON_ArrayForEach(it, sd)
    {
        char *enc = NULL;
        if (!cJSON_IsString(it))
            continue;
        rc = kube_base64_encode(it->valuestring, strlen(it->valuestring), &enc, NULL);
        if (rc == KUBE_OK)
            rc = emu_json_put_str(data, it->string, enc);
        free(enc);
        if (rc != KUBE_OK)
            break;
    }
    cJSON_Delete(sd);
    return rc;
}

static int secret_create(emu_resource *r, cJSON *obj, cJSON **st)
{
    (void)r;
    (void)st;
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(obj, "type")))
        emu_json_put_str(obj, "type", "Opaque");
    return fold_string_data(obj);
}

static int secret_update(emu_resource *r, const cJSON *old, cJSON *obj, int status_only, cJSON **st)
{
    (void)old;
    (void)status_only;
    return secret_create(r, obj, st);
}

static const emu_kind_ops plain_ops = {.order = top_order};
static const emu_kind_ops secret_ops = {
    .on_create = secret_create, .on_update = secret_update, .order = secret_order};
static const emu_kind_ops workload_ops = {.order = top_order, .generation = 1};
static const emu_kind_ops *const kind_ops[K_COUNT] = {&plain_ops,    &secret_ops,   &plain_ops,
                                                      &workload_ops, &workload_ops, &workload_ops,
                                                      &workload_ops};

static int init(emu_server *s)
{
    for (int k = 0; k < K_COUNT; k++) {
        int rc;
        if (emu_resource_find(s, defs[k].group, defs[k].version, defs[k].plural))
            continue;
        rc = emu_store_add_resource(s->store, &defs[k], kind_ops[k], NULL);
        if (rc != KUBE_OK)
            return rc;
    }
    return KUBE_OK;
}

static const emu_plugin plugin = {.name = "kinds-apps", .init = init};

__attribute__((constructor)) static void register_plugin(void)
{
    emu_plugin_register(&plugin);
}
