/*
 * kube/types/workload.c - Services, ReplicationControllers, ReplicaSets and
 * StatefulSets as helper.DefaultSelector reads them.
 */
#include "kube/types/workload.h"

#include <string.h>

#include "kube/codec/arena.h"
#include "kube/util/errors.h"
#include "kube/machinery/factory.h"
#include "kube/machinery/store.h"

const kube_resource KUBE_RES_SERVICES = {"", "v1", "services", "Service", 1};
const kube_resource KUBE_RES_REPLICATIONCONTROLLERS = {"", "v1", "replicationcontrollers",
                                                       "ReplicationController", 1};
const kube_resource KUBE_RES_REPLICASETS = {"apps", "v1", "replicasets", "ReplicaSet", 1};
const kube_resource KUBE_RES_STATEFULSETS = {"apps", "v1", "statefulsets", "StatefulSet", 1};

static const kube_resource *const resources[KUBE_WORKLOAD_KINDS] = {
    &KUBE_RES_SERVICES, &KUBE_RES_REPLICATIONCONTROLLERS, &KUBE_RES_REPLICASETS,
    &KUBE_RES_STATEFULSETS};

/* spec.selector as a map of strings (Service, ReplicationController). */
static int map_fill(const cJSON *spec, kube_arena *a, kube_workload *w)
{
    size_t n = 0;
    int rc;

    if (!kube_json_get(spec, "selector"))
        return KUBE_OK;
    rc = kube_json_string_map_shared(spec, "selector", a, &w->map, &n);
    w->has_map = 1;
    w->n_map = (uint32_t)n;
    return rc;
}

/* Fills the kind-specific part; kind is the codec's index. */
static int workload_fill(const cJSON *json, kube_arena *a, kube_object *obj,
                         kube_workload_kind kind)
{
    kube_workload *w = (kube_workload *)obj;
    const cJSON *spec;
    int rc;

    w->kind = kind;
    if ((rc = kube_json_object(json, "spec", &spec)) != KUBE_OK)
        return rc;
    if (kind == KUBE_WORKLOAD_SERVICE || kind == KUBE_WORKLOAD_RC)
        return map_fill(spec, a, w);
    return kube_label_selector_decode(kube_json_get(spec, "selector"), a, &w->selector);
}

static int service_fill(const cJSON *json, kube_arena *a, kube_object *obj)
{
    return workload_fill(json, a, obj, KUBE_WORKLOAD_SERVICE);
}

static int rc_fill(const cJSON *json, kube_arena *a, kube_object *obj)
{
    return workload_fill(json, a, obj, KUBE_WORKLOAD_RC);
}

static int rs_fill(const cJSON *json, kube_arena *a, kube_object *obj)
{
    return workload_fill(json, a, obj, KUBE_WORKLOAD_RS);
}

static int ss_fill(const cJSON *json, kube_arena *a, kube_object *obj)
{
    return workload_fill(json, a, obj, KUBE_WORKLOAD_SS);
}

static int service_decode(const cJSON *json, kube_object **out)
{
    return kube_object_build(&kube_workload_codecs[KUBE_WORKLOAD_SERVICE], sizeof(kube_workload),
                             json, service_fill, out);
}

static int rc_decode(const cJSON *json, kube_object **out)
{
    return kube_object_build(&kube_workload_codecs[KUBE_WORKLOAD_RC], sizeof(kube_workload), json,
                             rc_fill, out);
}

static int rs_decode(const cJSON *json, kube_object **out)
{
    return kube_object_build(&kube_workload_codecs[KUBE_WORKLOAD_RS], sizeof(kube_workload), json,
                             rs_fill, out);
}

static int ss_decode(const cJSON *json, kube_object **out)
{
    return kube_object_build(&kube_workload_codecs[KUBE_WORKLOAD_SS], sizeof(kube_workload), json,
                             ss_fill, out);
}

const kube_codec kube_workload_codecs[KUBE_WORKLOAD_KINDS] = {
    {"Service", service_decode, kube_object_free_block},
    {"ReplicationController", rc_decode, kube_object_free_block},
    {"ReplicaSet", rs_decode, kube_object_free_block},
    {"StatefulSet", ss_decode, kube_object_free_block},
};

const kube_workload *kube_workload_from(const kube_object *obj)
{
    if (!obj || obj->codec < &kube_workload_codecs[0] ||
        obj->codec >= &kube_workload_codecs[KUBE_WORKLOAD_KINDS])
        return NULL;
    return (const kube_workload *)obj;
}

int kube_workload_map_matches(const kube_workload *w, const kube_kv *labels, size_t n)
{
    if (!w->has_map)
        return 0;
    for (uint32_t i = 0; i < w->n_map; i++) {
        size_t j = 0;
        while (j < n && strcmp(labels[j].key, w->map[i].key) != 0)
            j++;
        if (j == n || strcmp(labels[j].value, w->map[i].value) != 0)
            return 0;
    }
    return 1;
}

int kube_workload_listers_add(struct kube_factory *f, kube_workload_listers *l)
{
    kube_lister *of[KUBE_WORKLOAD_KINDS];

    for (int k = 0; k < KUBE_WORKLOAD_KINDS; k++) {
        kube_informer_options o = {0};
        int rc;
        o.resource = resources[k];
        o.codec = &kube_workload_codecs[k];
        if ((rc = kube_factory_lister(f, &o, &of[k])) != KUBE_OK)
            return rc;
    }
    memcpy(l->of, of, sizeof(of));
    return KUBE_OK;
}

kube_object *kube_workload_get(const kube_workload_listers *l, kube_workload_kind k, const char *ns,
                               const char *name)
{
    if (l->of[k])
        return kube_lister_get(l->of[k], ns, name);
    return l->store[k] ? kube_store_get(l->store[k], ns, name) : NULL;
}

typedef struct ns_ctx {
    const char *ns;
    void (*fn)(void *ud, const kube_workload *w);
    void *ud;
} ns_ctx;

static void each_in_ns(void *ud, kube_object *obj)
{
    const ns_ctx *c = ud;
    const kube_workload *w = kube_workload_from(obj);
    if (w && strcmp(obj->meta.namespace_, c->ns) == 0)
        c->fn(c->ud, w);
}

void kube_workload_foreach_ns(const kube_workload_listers *l, kube_workload_kind k, const char *ns,
                              void (*fn)(void *ud, const kube_workload *w), void *ud)
{
    ns_ctx c = {ns, fn, ud};
    if (l->of[k])
        kube_lister_foreach(l->of[k], each_in_ns, &c);
    else if (l->store[k])
        kube_store_foreach(l->store[k], each_in_ns, &c);
}
