/*
 * tests/emulator/mirror.c - core/v1 events and events.k8s.io/v1 events are
 * one resource in kube-apiserver (two versions of the same stored object):
 * an event written through either API is visible through both. The emulator
 * keeps one store per API and, after each write to one, brings the other in
 * line with the converted object (same name and uid; the copy gets the next
 * resourceVersion).
 */
#include <string.h>

#include "emu_internal.h"

typedef struct field_map {
    const char *core;
    const char *k8s;
} field_map;

/* core/v1 Event member <-> events.k8s.io/v1 Event member */
static const field_map fields[] = {
    {"involvedObject", "regarding"},
    {"message", "note"},
    {"reportingComponent", "reportingController"},
    {"reportingInstance", "reportingInstance"},
    {"source", "deprecatedSource"},
    {"firstTimestamp", "deprecatedFirstTimestamp"},
    {"lastTimestamp", "deprecatedLastTimestamp"},
    {"count", "deprecatedCount"},
    {"reason", "reason"},
    {"type", "type"},
    {"action", "action"},
    {"eventTime", "eventTime"},
    {"series", "series"},
    {"related", "related"},
    {NULL, NULL},
};

static emu_resource *g_core, *g_k8s;
static __thread int t_mirroring;

int emu_events_mirror_init(emu_server *s)
{
    g_core = emu_store_find(s->store, "", "v1", "events");
    g_k8s = emu_store_find(s->store, "events.k8s.io", "v1", "events");
    return KUBE_OK;
}

static void add_missing(cJSON *o, const char *const *objs, const char *const *nulls)
{
    for (size_t i = 0; objs[i]; i++)
        if (!cJSON_GetObjectItemCaseSensitive(o, objs[i]))
            cJSON_AddItemToObject(o, objs[i], cJSON_CreateObject());
    for (size_t i = 0; nulls[i]; i++)
        if (!cJSON_GetObjectItemCaseSensitive(o, nulls[i]))
            cJSON_AddNullToObject(o, nulls[i]);
}

/* The object of resource `from` converted for resource `to`. */
static cJSON *convert(const emu_obj *o, const emu_resource *to)
{
    cJSON *src = emu_obj_tree(o), *dst = cJSON_CreateObject(), *meta;
    int to_core = to == g_core;

    if (!src || !dst) {
        cJSON_Delete(src);
        cJSON_Delete(dst);
        return NULL;
    }
    cJSON_AddStringToObject(dst, "kind", "Event");
    cJSON_AddStringToObject(dst, "apiVersion", to_core ? "v1" : "events.k8s.io/v1");
    meta = cJSON_DetachItemFromObjectCaseSensitive(src, "metadata");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
    cJSON_AddItemToObject(dst, "metadata", meta ? meta : cJSON_CreateObject());
    for (size_t i = 0; fields[i].core; i++) {
        cJSON *v =
            cJSON_DetachItemFromObjectCaseSensitive(src, to_core ? fields[i].k8s : fields[i].core);
        if (v)
            cJSON_AddItemToObject(dst, to_core ? fields[i].core : fields[i].k8s, v);
    }
    cJSON_Delete(src);
    /* the members Go always writes, null or empty when unset */
    if (to_core) {
        static const char *const objs[] = {"involvedObject", "source", NULL};
        static const char *const nulls[] = {"firstTimestamp", "lastTimestamp", "eventTime", NULL};
        add_missing(dst, objs, nulls);
        if (!cJSON_GetObjectItemCaseSensitive(dst, "reportingComponent"))
            cJSON_AddStringToObject(dst, "reportingComponent", "");
        if (!cJSON_GetObjectItemCaseSensitive(dst, "reportingInstance"))
            cJSON_AddStringToObject(dst, "reportingInstance", "");
    } else {
        static const char *const objs[] = {"regarding", "deprecatedSource", NULL};
        static const char *const nulls[] = {"eventTime", "deprecatedFirstTimestamp",
                                            "deprecatedLastTimestamp", NULL};
        add_missing(dst, objs, nulls);
    }
    emu_normalize(to, dst);
    return dst;
}

typedef struct mirror_ctx {
    cJSON *obj; /* NULL: delete */
} mirror_ctx;

static int mirror_fn(void *ctx, cJSON *cur, int64_t rv, cJSON **next, int *del, int *again,
                     cJSON **st)
{
    mirror_ctx *m = ctx;

    (void)rv;
    (void)again;
    (void)st;
    *del = m->obj == NULL;
    *next = *del ? cur : m->obj;
    if (!*del)
        cJSON_Delete(cur);
    m->obj = NULL;
    return KUBE_OK;
}

void emu_events_mirror(emu_server *s, const emu_resource *r, const char *ns, const char *name)
{
    emu_resource *to = r == g_core ? g_k8s : r == g_k8s ? g_core : NULL;
    emu_obj *o, *out = NULL;
    mirror_ctx m = {NULL};
    cJSON *st = NULL;

    if (!to || t_mirroring)
        return;
    o = emu_store_lookup(s->store, (emu_resource *)r, ns, name);
    if (o) {
        m.obj = convert(o, to);
        emu_obj_unref(o);
        if (!m.obj)
            return; /* not representable in the other version: leave it */
    }
    t_mirroring = 1;
    emu_store_write(s->store, to, ns, name, mirror_fn, &m, &out, &st);
    t_mirroring = 0;
    emu_obj_unref(out);
    cJSON_Delete(st);
    cJSON_Delete(m.obj);
}
