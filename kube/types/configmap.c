/*
 * kube/types/configmap.c - v1 ConfigMap decoding.
 */
#include "kube/types/configmap.h"
#include "kube/types/configmap_testing.h"

#include <string.h>

#include "kube/codec/arena.h"
#include "kube/util/errors.h"

static int configmap_fill(const cJSON *json, kube_arena *a, kube_object *obj)
{
    kube_configmap *cm = (kube_configmap *)obj;

    return kube_json_string_map(json, "data", a, &cm->data, &cm->n_data);
}

KUBE_KIND_DEFINE(configmap, "ConfigMap", kube_configmap, configmap_fill)

const char *kube_configmap_get(const kube_configmap *cm, const char *key)
{
    for (size_t i = 0; cm && key && i < cm->n_data; i++)
        if (strcmp(cm->data[i].key, key) == 0)
            return cm->data[i].value;
    return NULL;
}
