/*
 * kube/types/node.c - v1 Node decoding and the framework.Resource helpers.
 */
#include "kube/types/node.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/codec/arena.h"
#include "kube/util/errors.h"
#include "kube/codec/selector.h"

/* ---- resources ---- */

static int has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

int kube_is_extended_resource_name(const char *name)
{
    char buf[320];
    int n;

    if (!strchr(name, '/') || strstr(name, "kubernetes.io/") || has_prefix(name, "requests."))
        return 0;
    n = snprintf(buf, sizeof(buf), "requests.%s", name);
    return n > 0 && (size_t)n < sizeof(buf) && kube_is_qualified_name(buf);
}

int kube_is_scalar_resource_name(const char *name)
{
    if (!name)
        return 0;
    return kube_is_extended_resource_name(name) || has_prefix(name, "hugepages-") ||
           strstr(name, "kubernetes.io/") != NULL || has_prefix(name, "attachable-volumes-");
}

int64_t kube_resources_scalar(const kube_resources *r, const char *name)
{
    for (size_t i = 0; r && name && i < r->n_scalars; i++)
        if (strcmp(r->scalars[i].name, name) == 0)
            return r->scalars[i].value;
    return 0;
}

int kube_resources_equal(const kube_resources *a, const kube_resources *b)
{
    if (a->milli_cpu != b->milli_cpu || a->memory != b->memory ||
        a->ephemeral_storage != b->ephemeral_storage || a->allowed_pods != b->allowed_pods ||
        a->n_scalars != b->n_scalars)
        return 0;
    for (size_t i = 0; i < a->n_scalars; i++)
        if (kube_resources_scalar(b, a->scalars[i].name) != a->scalars[i].value)
            return 0;
    return 1;
}

/* The Resource field a name feeds, NULL for scalars and ignored names. */
static int64_t *native_slot(kube_resources *r, const char *name)
{
    if (strcmp(name, "memory") == 0)
        return &r->memory;
    if (strcmp(name, "ephemeral-storage") == 0)
        return &r->ephemeral_storage;
    if (strcmp(name, "pods") == 0)
        return &r->allowed_pods;
    return NULL;
}

int kube_resources_from_list(const kube_resource_entry *list, size_t n, struct kube_arena *a,
                             kube_resources *out)
{
    kube_scalar *scalars = NULL;
    size_t n_scalars = 0;
    kube_arena_stage st;
    int64_t *slot;
    int rc;

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < n; i++)
        n_scalars += kube_is_scalar_resource_name(list[i].name);
    if (n_scalars && !(scalars = kube_arena_stage_alloc(a, &st, n_scalars * sizeof(*scalars))))
        return KUBE_ENOMEM;
    n_scalars = 0;
    for (size_t i = 0; i < n; i++) {
        const kube_resource_entry *e = &list[i];
        if (strcmp(e->name, "cpu") == 0) {
            rc = kube_quantity_milli_value(&e->q, &out->milli_cpu);
        } else if ((slot = native_slot(out, e->name))) {
            rc = kube_quantity_value(&e->q, slot);
        } else if (kube_is_scalar_resource_name(e->name)) {
            kube_scalar *s = &scalars[n_scalars++];
            rc = kube_quantity_value(&e->q, &s->value);
            if (rc == KUBE_OK && !(s->name = kube_arena_str_shared(a, e->name)))
                rc = KUBE_ENOMEM;
        } else {
            rc = KUBE_OK;
        }
        if (rc != KUBE_OK)
            return rc;
    }
    if (n_scalars && !(scalars = (kube_scalar *)kube_arena_share(a, &st, scalars, n_scalars,
                                                                 sizeof(*scalars), 1)))
        return KUBE_ENOMEM;
    out->scalars = scalars;
    out->n_scalars = n_scalars;
    return KUBE_OK;
}

/* ---- node ---- */

static int decode_effect(const char *s, kube_taint_effect *out)
{
    if (strcmp(s, "NoSchedule") == 0)
        *out = KUBE_EFFECT_NO_SCHEDULE;
    else if (strcmp(s, "PreferNoSchedule") == 0)
        *out = KUBE_EFFECT_PREFER_NO_SCHEDULE;
    else if (strcmp(s, "NoExecute") == 0)
        *out = KUBE_EFFECT_NO_EXECUTE;
    else
        return KUBE_EPARSE;
    return KUBE_OK;
}

static int decode_taint(const cJSON *j, kube_arena *a, void *elem, void *ctx)
{
    const cJSON *effect = kube_json_get(j, "effect");
    kube_taint *t = elem;
    int rc;

    if (!cJSON_IsString(effect))
        return KUBE_EPARSE;
    if ((rc = kube_json_str_shared(j, "key", a, "", &t->key)) ||
        (rc = kube_json_str_shared(j, "value", a, "", &t->value)))
        return rc;
    return decode_effect(effect->valuestring, &t->effect);
}

/* Taints and images repeat across nodes: their strings and arrays are
 * shared (kube_arena_share). */
static int decode_taints(const cJSON *spec, kube_arena *a, kube_node *n)
{
    size_t count;
    int rc = kube_json_objects_shared(spec, "taints", a, sizeof(kube_taint), 2, decode_taint,
                                      (void **)&n->taints, &count);

    n->n_taints = (uint32_t)count;
    return rc;
}

static int decode_image(const cJSON *j, kube_arena *a, void *elem, void *ctx)
{
    kube_node_image *img = elem;
    int rc;

    if ((rc = kube_json_strings_shared(j, "names", a, &img->names, &img->n_names)))
        return rc;
    return kube_json_int64(j, "sizeBytes", INT64_MIN, INT64_MAX, 0, &img->size_bytes);
}

static int decode_images(const cJSON *status, kube_arena *a, kube_node *n)
{
    return kube_json_objects_shared(status, "images", a, sizeof(kube_node_image), 1, decode_image,
                                    (void **)&n->images, &n->n_images);
}

int kube_resource_list_decode(const cJSON *map, kube_resource_entry **out, size_t *n)
{
    kube_resource_entry *list;
    const cJSON *it;
    size_t count = 0, i;
    int rc;

    *out = NULL;
    *n = 0;
    if (!map || cJSON_IsNull(map))
        return KUBE_OK;
    if (!cJSON_IsObject(map))
        return KUBE_EPARSE;
    cJSON_ArrayForEach(it, map) count++;
    if (count == 0)
        return KUBE_OK;
    if (!(list = malloc(count * sizeof(*list))))
        return KUBE_ENOMEM;
    count = 0;
    cJSON_ArrayForEach(it, map)
    {
        if (!it->string) {
            free(list);
            return KUBE_EPARSE;
        }
        for (i = 0; i < count && strcmp(list[i].name, it->string) != 0; i++)
            ;
        list[i].name = it->string;
        if ((rc = kube_quantity_from_json(it, &list[i].q))) {
            free(list);
            return rc == KUBE_ENOMEM ? rc : KUBE_EPARSE;
        }
        count += i == count;
    }
    *out = list;
    *n = count;
    return KUBE_OK;
}

/* status.allocatable */
static int decode_allocatable(const cJSON *status, kube_arena *a, kube_resources *out)
{
    kube_resource_entry *list;
    size_t n;
    int rc = kube_resource_list_decode(kube_json_get(status, "allocatable"), &list, &n);

    if (rc != KUBE_OK)
        return rc;
    rc = kube_resources_from_list(list, n, a, out);
    free(list);
    return rc == KUBE_ERANGE ? KUBE_EPARSE : rc;
}

/* The Ready condition c's status (anything unexpected reads as Unknown,
 * as the node lifecycle controller would treat it) and, when it is not
 * True, its lastTransitionTime into n->lost_since_us. */
static void decode_ready_condition(const cJSON *c, kube_node *n)
{
    const cJSON *st = kube_json_get(c, "status"), *at;

    if (cJSON_IsString(st) && !strcmp(st->valuestring, "True")) {
        n->ready = KUBE_NODE_READY_TRUE;
        n->lost_since_us = 0;
        return;
    }
    n->ready = cJSON_IsString(st) && !strcmp(st->valuestring, "False") ? KUBE_NODE_READY_FALSE
                                                                       : KUBE_NODE_READY_UNKNOWN;
    at = kube_json_get(c, "lastTransitionTime");
    if (!cJSON_IsString(at) || kube_time_parse(at->valuestring, &n->lost_since_us) != KUBE_OK)
        n->lost_since_us = 0;
}

/* status.conditions[type=Ready] */
static int decode_ready(const cJSON *status, kube_node *n)
{
    const cJSON *arr, *it;
    size_t count;
    int rc = kube_json_array(status, "conditions", &arr, &count);

    n->ready = KUBE_NODE_READY_ABSENT;
    if (rc != KUBE_OK || count == 0)
        return rc;
    cJSON_ArrayForEach(it, arr)
    {
        const cJSON *type = kube_json_get(it, "type");

        if (cJSON_IsString(type) && strcmp(type->valuestring, "Ready") == 0)
            decode_ready_condition(it, n);
    }
    return KUBE_OK;
}

const char *kube_node_ready_word(const kube_node *node)
{
    if (!node)
        return "Missing";
    switch (node->ready) {
    case KUBE_NODE_READY_TRUE:
        return "Ready";
    case KUBE_NODE_READY_FALSE:
        return "NotReady";
    default:
        return "Unknown";
    }
}

int kube_node_status(const kube_node *node, char *out, size_t n)
{
    int len = snprintf(out, n, "%s%s", kube_node_ready_word(node),
                       node && node->unschedulable ? ",SchedulingDisabled" : "");

    return len < 0 || (size_t)len >= n ? KUBE_ERANGE : KUBE_OK;
}

static int node_fill(const cJSON *json, kube_arena *a, kube_object *obj)
{
    kube_node *n = (kube_node *)obj;
    const cJSON *spec, *status;
    int rc;

    if ((rc = kube_json_object(json, "spec", &spec)) ||
        (rc = kube_json_object(json, "status", &status)) ||
        (rc = kube_json_bool(spec, "unschedulable", 0, &n->unschedulable)) ||
        (rc = decode_taints(spec, a, n)) || (rc = decode_ready(status, n)) ||
        (rc = decode_allocatable(status, a, &n->allocatable)))
        return rc;
    return decode_images(status, a, n);
}

KUBE_KIND_DEFINE(node, "Node", kube_node, node_fill)
