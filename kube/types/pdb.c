/*
 * kube/types/pdb.c - policy/v1 PodDisruptionBudget decoding.
 */
#include "kube/types/pdb.h"

#include <string.h>

#include "kube/codec/arena.h"
#include "kube/util/errors.h"

const kube_resource KUBE_RES_PDBS = {"policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget",
                                     1};

static int int_or_string_decode(const cJSON *spec, const char *key, kube_arena *a,
                                kube_int_or_string *out)
{
    const cJSON *v = kube_json_get(spec, key);

    out->str_val = "";
    if (!v)
        return KUBE_OK;
    if (cJSON_IsString(v)) {
        out->type = KUBE_IOS_STRING;
        return (out->str_val = kube_arena_str(a, v->valuestring)) ? KUBE_OK : KUBE_ENOMEM;
    }
    out->type = KUBE_IOS_INT;
    return kube_json_int32(spec, key, 0, &out->int_val);
}

/* The keys of status.disruptedPods (pod name -> time). */
static int disrupted_decode(const cJSON *status, kube_arena *a, kube_pdb *pdb)
{
    const cJSON *map, *it;
    const char **names;
    size_t n = 0, i = 0;
    int rc = kube_json_object(status, "disruptedPods", &map);

    if (rc != KUBE_OK || !map)
        return rc;
    cJSON_ArrayForEach(it, map) n++;
    if (n == 0)
        return KUBE_OK;
    if (!(names = kube_arena_alloc(a, n * sizeof(*names))))
        return KUBE_ENOMEM;
    cJSON_ArrayForEach(it, map)
    {
        if (!it->string || !(names[i++] = kube_arena_str(a, it->string)))
            return it->string ? KUBE_ENOMEM : KUBE_EPARSE;
    }
    pdb->disrupted_pods = names;
    pdb->n_disrupted_pods = n;
    return KUBE_OK;
}

static int pdb_fill(const cJSON *json, kube_arena *a, kube_object *obj)
{
    kube_pdb *pdb = (kube_pdb *)obj;
    const cJSON *spec, *status;
    int rc;

    if ((rc = kube_json_object(json, "spec", &spec)) ||
        (rc = kube_json_object(json, "status", &status)) ||
        (rc = kube_label_selector_decode(kube_json_get(spec, "selector"), a, &pdb->selector)) ||
        (rc = int_or_string_decode(spec, "minAvailable", a, &pdb->min_available)) ||
        (rc = int_or_string_decode(spec, "maxUnavailable", a, &pdb->max_unavailable)) ||
        (rc = kube_json_int32(status, "disruptionsAllowed", 0, &pdb->disruptions_allowed)))
        return rc;
    return disrupted_decode(status, a, pdb);
}

KUBE_KIND_DEFINE(pdb, "PodDisruptionBudget", kube_pdb, pdb_fill)

int kube_pdb_has_disrupted_pod(const kube_pdb *pdb, const char *pod_name)
{
    for (size_t i = 0; i < pdb->n_disrupted_pods; i++)
        if (strcmp(pdb->disrupted_pods[i], pod_name) == 0)
            return 1;
    return 0;
}
