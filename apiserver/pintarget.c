/*
 * apiserver/pintarget.c - /pin's guard on the target node (pintarget.h),
 * by kube/types/node_target.h's rule.
 */
#include "pintarget.h"

#include <stdio.h>
#include <string.h>

#include "kube/codec/object.h"
#include "kube/types/node.h"
#include "kube/types/node_target.h"
#include "kube/types/pod.h"
#include "kube/util/errors.h"

/* The tolerations of the VM's template (spec.template.spec.tolerations),
 * decoded through the pod codec into *pod (caller unrefs; no tolerations:
 * a pod without any). */
static int template_tolerations(const cJSON *vm, kube_object **pod)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(vm, "spec");
    const cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(spec, "template");
    const cJSON *tols = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(tmpl, "spec"), "tolerations");
    cJSON *json = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(json, "metadata");
    cJSON *pspec = cJSON_AddObjectToObject(json, "spec");
    cJSON *copy = cJSON_IsArray(tols) ? cJSON_Duplicate(tols, 1) : cJSON_CreateArray();
    int rc = KUBE_ENOMEM;

    *pod = NULL;
    if (json && meta && cJSON_AddStringToObject(meta, "name", "template") && pspec && copy &&
        cJSON_AddItemToObject(pspec, "tolerations", copy)) {
        copy = NULL;
        rc = kube_pod_codec.decode(json, pod);
    }
    cJSON_Delete(copy);
    cJSON_Delete(json);
    return rc;
}

/* 1 when the VM is already pinned to node name. */
static int pinned_there(const cJSON *vm, const char *key, const char *name)
{
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(vm, "metadata"), "annotations");
    const cJSON *pin = cJSON_GetObjectItemCaseSensitive(ann, key);

    return cJSON_IsString(pin) && strcmp(pin->valuestring, name) == 0;
}

/* Writes why the node cannot take the VM (r, t) into why; the cause. */
static const char *explain(const kube_node *node, kube_node_refusal r, const kube_taint *t,
                           char *why, size_t n)
{
    const char *name = node->base.meta.name, *ready = kube_node_ready_word(node);
    const char *cause = strcmp(ready, "NotReady") == 0 ? "NodeNotReady" : "NodeUnknown";

    switch (r) {
    case KUBE_NODE_CORDONED:
        snprintf(why, n, "node %s is cordoned (SchedulingDisabled)", name);
        return "NodeUnschedulable";
    case KUBE_NODE_TAINTED:
        if (kube_taint_is_not_ready(t) && node->ready != KUBE_NODE_READY_TRUE) {
            snprintf(why, n, "node %s is %s (it has the taint %s:%s)", name, ready, t->key,
                     kube_taint_effect_name(t->effect));
            return cause;
        }
        snprintf(why, n,
                 "node %s has the taint %s%s%s:%s, which the VM's template does not tolerate", name,
                 t->key, *t->value ? "=" : "", t->value, kube_taint_effect_name(t->effect));
        return "NodeTainted";
    default:
        snprintf(why, n, "node %s is %s%s", name, ready,
                 node->ready == KUBE_NODE_READY_FALSE ? ""
                                                      : " (its kubelet stopped posting status)");
        return cause;
    }
}

int apis_pin_target_check(const cJSON *vm, const char *key, const cJSON *node, char *why, size_t n,
                          const char **cause)
{
    kube_object *nobj = NULL, *pod = NULL;
    const kube_taint *t = NULL;
    const kube_node *kn;
    const kube_pod *kp;
    kube_node_refusal r;
    int rc = kube_node_codec.decode(node, &nobj);

    if (rc == KUBE_OK)
        rc = template_tolerations(vm, &pod);
    kn = kube_node_from(nobj);
    kp = kube_pod_from(pod);
    if (rc == KUBE_OK && (!kn || !kp))
        rc = KUBE_EPARSE;
    if (rc == KUBE_OK && !pinned_there(vm, key, kn->base.meta.name)) {
        r = kube_node_refuses(kn, kp->tolerations, kp->n_tolerations, &t);
        if (r != KUBE_NODE_TAKES) {
            *cause = explain(kn, r, t, why, n);
            rc = KUBE_ECONFLICT;
        }
    }
    kube_object_unref(pod);
    kube_object_unref(nobj);
    return rc;
}
