/*
 * scheduler/plugins/helper.c - score normalisation, tolerations, resource
 * names, DefaultSelector and args field errors shared by the built-in
 * plugins.
 */
#include "plugins/helper.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/array.h"
#include "kube/codec/arena.h"
#include "kube/util/errors.h"
#include "kube/codec/selector.h"
#include "kube/codec/validation.h"

void plugin_default_normalize_score(int64_t max_priority, int reverse, fw_node_score *scores,
                                    size_t n)
{
    int64_t max_count = 0;
    for (size_t i = 0; i < n; i++)
        if (scores[i].score > max_count)
            max_count = scores[i].score;
    if (max_count == 0) {
        for (size_t i = 0; reverse && i < n; i++)
            scores[i].score = max_priority;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t s = max_priority * scores[i].score / max_count;
        scores[i].score = reverse ? max_priority - s : s;
    }
}

int plugin_tolerations_tolerate(const kube_toleration *tols, size_t n, const kube_taint *taint)
{
    for (size_t i = 0; i < n; i++)
        if (kube_toleration_tolerates(&tols[i], taint))
            return 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* DefaultSelector                                                     */
/* ------------------------------------------------------------------ */

/* The selector being built: requirements in a malloc'd array (freed by
 * plugin_default_selector), their strings already copied into the arena. */
typedef struct sel_builder {
    const kube_pod *pod;
    kube_arena *a;
    kube_requirement *reqs;
    size_t n, cap;
    int rc; /* KUBE_ENOMEM once anything failed */
} sel_builder;

/* A new zeroed requirement at the end of b, or NULL (b->rc set, or already
 * failed). Borrowed until the next push. */
static kube_requirement *builder_push(sel_builder *b)
{
    if (KUBE_ARRAY_RESERVE(b->reqs, b->cap, b->rc == KUBE_OK && b->n + 1) != KUBE_OK) {
        b->rc = KUBE_ENOMEM;
        return NULL;
    }
    if (b->rc != KUBE_OK)
        return NULL;
    b->reqs[b->n] = (kube_requirement){0};
    return &b->reqs[b->n++];
}

/* Sets r to `key in (value)` with arena copies; b->rc on failure. */
static void builder_equals(sel_builder *b, kube_requirement *r, const kube_kv *kv)
{
    const char **v = kube_arena_alloc(b->a, sizeof(*v));

    if (!r->key)
        r->key = kube_arena_strdup(b->a, kv->key);
    if (!v || !r->key || !(*v = kube_arena_strdup(b->a, kv->value))) {
        b->rc = KUBE_ENOMEM;
        return;
    }
    *r = (kube_requirement){r->key, v, 1, KUBE_SEL_IN};
}

/* labels.Merge of a map selector into the label set: a key already there
 * takes the new value. */
static void builder_merge_map(sel_builder *b, const kube_workload *w)
{
    for (uint32_t i = 0; b->rc == KUBE_OK && i < w->n_map; i++) {
        kube_requirement *r = NULL;
        for (size_t j = 0; !r && j < b->n; j++)
            if (strcmp(b->reqs[j].key, w->map[i].key) == 0)
                r = &b->reqs[j];
        if (r || (r = builder_push(b)))
            builder_equals(b, r, &w->map[i]);
    }
}

/* Selector.Add of a copy of src (key and values copied into the arena). */
static void builder_add(sel_builder *b, const kube_requirement *src)
{
    kube_requirement *r = builder_push(b);
    const char **v = src->n_values ? kube_arena_alloc(b->a, src->n_values * sizeof(*v)) : NULL;

    if (!r)
        return;
    if ((src->n_values && !v) || !(r->key = kube_arena_strdup(b->a, src->key)))
        b->rc = KUBE_ENOMEM;
    for (size_t i = 0; b->rc == KUBE_OK && i < src->n_values; i++)
        if (!(v[i] = kube_arena_strdup(b->a, src->values[i])))
            b->rc = KUBE_ENOMEM;
    r->values = v;
    r->n_values = src->n_values;
    r->op = src->op;
}

/* GetPodServices' test for one Service of the pod's namespace. */
static void merge_service(void *ud, const kube_workload *svc)
{
    sel_builder *b = ud;
    const kube_meta *m = &b->pod->base.meta;

    if (kube_workload_map_matches(svc, m->labels, m->n_labels))
        builder_merge_map(b, svc);
}

/* 1 when schema.ParseGroupVersion(api_version) is group/version: no slash
 * is the core group, one slash splits, more do not parse. */
static int group_version_is(const char *api_version, const char *group, const char *version)
{
    const char *slash = strchr(api_version, '/');
    size_t glen = slash ? (size_t)(slash - api_version) : 0;

    if (!slash)
        return !*group && strcmp(api_version, version) == 0;
    if (strchr(slash + 1, '/'))
        return 0;
    return strlen(group) == glen && strncmp(api_version, group, glen) == 0 &&
           strcmp(slash + 1, version) == 0;
}

/* The supported controller kind of an owner reference into *k; 0 when it
 * is none of v1 ReplicationController, apps/v1 ReplicaSet, StatefulSet. */
static int owner_kind(const kube_owner_ref *o, kube_workload_kind *k)
{
    if (group_version_is(o->api_version, "", "v1") && !strcmp(o->kind, "ReplicationController"))
        *k = KUBE_WORKLOAD_RC;
    else if (group_version_is(o->api_version, "apps", "v1") && !strcmp(o->kind, "ReplicaSet"))
        *k = KUBE_WORKLOAD_RS;
    else if (group_version_is(o->api_version, "apps", "v1") && !strcmp(o->kind, "StatefulSet"))
        *k = KUBE_WORKLOAD_SS;
    else
        return 0;
    return 1;
}

/* The controller owner's part of DefaultSelector. */
static void add_owner(sel_builder *b, const kube_workload_listers *l)
{
    const kube_meta *m = &b->pod->base.meta;
    const kube_owner_ref *o = kube_meta_controller(m);
    kube_workload_kind k;
    kube_object *obj;
    const kube_workload *w;

    if (!o || !o->api_version || !o->kind || !o->name || !owner_kind(o, &k))
        return;
    obj = kube_workload_get(l, k, m->namespace_, o->name);
    w = kube_workload_from(obj);
    if (w && w->kind == KUBE_WORKLOAD_RC && k == KUBE_WORKLOAD_RC)
        builder_merge_map(b, w);
    else if (w && w->kind == k && w->selector && w->selector->valid)
        for (size_t i = 0; i < w->selector->n_reqs; i++)
            builder_add(b, &w->selector->reqs[i]);
    kube_object_unref(obj);
}

/* Stable insertion sort of the requirements by key (sort.Sort(ByKey)). */
static void sort_by_key(kube_requirement *r, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        kube_requirement x = r[i];
        size_t j = i;
        for (; j > 0 && strcmp(r[j - 1].key, x.key) > 0; j--)
            r[j] = r[j - 1];
        r[j] = x;
    }
}

int plugin_default_selector(const kube_pod *pod, const kube_workload_listers *l,
                            struct kube_arena *a, const kube_label_selector **out)
{
    sel_builder b = {pod, a, NULL, 0, 0, KUBE_OK};
    kube_label_selector *sel = kube_arena_alloc(a, sizeof(*sel));
    kube_requirement *reqs = NULL;

    *out = NULL;
    kube_workload_foreach_ns(l, KUBE_WORKLOAD_SERVICE, pod->base.meta.namespace_, merge_service,
                             &b);
    if (b.rc == KUBE_OK)
        add_owner(&b, l);
    if (b.rc == KUBE_OK && b.n && !(reqs = kube_arena_alloc(a, b.n * sizeof(*reqs))))
        b.rc = KUBE_ENOMEM;
    if (b.rc == KUBE_OK && sel) {
        sort_by_key(b.reqs, b.n);
        if (b.n)
            memcpy(reqs, b.reqs, b.n * sizeof(*reqs));
        *sel = (kube_label_selector){reqs, b.n, 1};
        *out = sel;
    }
    free(b.reqs);
    return *out ? KUBE_OK : KUBE_ENOMEM;
}

/* ------------------------------------------------------------------ */
/* apimachinery's validation messages                                  */
/* ------------------------------------------------------------------ */

int plugin_qualified_name_msgs(const char *value, const char *sep, char *out, size_t n)
{
    return kube_qualified_name_msgs(value, sep, out, n);
}

int plugin_label_value_msgs(const char *value, const char *sep, char *out, size_t n)
{
    return kube_label_value_msgs(value, sep, out, n);
}

/* ------------------------------------------------------------------ */
/* Field errors                                                        */
/* ------------------------------------------------------------------ */

/* 1 when msg already is one of the ", "-joined messages of e. */
static int seen(const plugin_field_errs *e, const char *msg)
{
    size_t len = strlen(msg);
    const char *p = e->text.data;
    while (p && (p = strstr(p, msg)) != NULL) {
        int starts = p == e->text.data || (p >= e->text.data + 2 && p[-2] == ',' && p[-1] == ' ');
        int ends = p[len] == '\0' || (p[len] == ',' && p[len + 1] == ' ');
        if (starts && ends)
            return 1;
        p++;
    }
    return 0;
}

void plugin_field_errs_add(plugin_field_errs *e, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (seen(e, msg))
        return;
    if ((e->n && kube_buf_puts(&e->text, ", ") != KUBE_OK) ||
        kube_buf_puts(&e->text, msg) != KUBE_OK)
        e->oom = 1;
    e->n++;
}

int plugin_field_errs_finish(plugin_field_errs *e, char *err, size_t errlen)
{
    int rc = KUBE_OK;
    if (e->oom)
        rc = KUBE_ENOMEM;
    else if (e->n == 1)
        rc = KUBE_ECONFIG, snprintf(err, errlen, "%s", e->text.data);
    else if (e->n > 1)
        rc = KUBE_ECONFIG, snprintf(err, errlen, "[%s]", e->text.data);
    plugin_field_errs_free(e);
    return rc;
}

void plugin_field_errs_free(plugin_field_errs *e)
{
    kube_buf_free(&e->text);
    e->n = 0;
    e->oom = 0;
}

const char *plugin_args_path(char *out, size_t n, const char *path, const char *key, long index)
{
    if (!key)
        snprintf(out, n, "%s[%ld]", path, index);
    else if (!path || !*path)
        snprintf(out, n, "%s", key);
    else
        snprintf(out, n, "%s.%s", path, key);
    return out;
}

void plugin_args_unknown_fields(const cJSON *obj, const char *path, const char *const *known,
                                plugin_field_errs *e)
{
    const cJSON *it;

    cJSON_ArrayForEach(it, obj)
    {
        size_t i = 0;
        while (known[i] && strcmp(known[i], it->string) != 0)
            i++;
        if (known[i])
            continue;
        if (path && *path)
            plugin_field_errs_add(e, "%s: unknown field \"%s\"", path, it->string);
        else
            plugin_field_errs_add(e, "unknown field \"%s\"", it->string);
    }
}

int plugin_args_object(const cJSON *obj, const char *path, const char *const *known,
                       plugin_field_errs *e)
{
    if (!obj || cJSON_IsNull(obj))
        return 0;
    if (!cJSON_IsObject(obj)) {
        if (*path)
            plugin_field_errs_add(e, "%s: expected an object", path);
        else
            plugin_field_errs_add(e, "expected an object");
        return 0;
    }
    plugin_args_unknown_fields(obj, path, known, e);
    return 1;
}

int plugin_args_int(const cJSON *obj, const char *path, const char *key, int64_t min, int64_t max,
                    int64_t def, int64_t *out, plugin_field_errs *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char p[256];

    *out = def;
    if (!v || cJSON_IsNull(v))
        return 1;
    if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int64_t)v->valuedouble ||
        v->valuedouble < (double)min || v->valuedouble > (double)max) {
        plugin_field_errs_add(e, "%s: expected an integer",
                              plugin_args_path(p, sizeof(p), path, key, 0));
        return 0;
    }
    *out = (int64_t)v->valuedouble;
    return 1;
}

int plugin_args_str(const cJSON *obj, const char *path, const char *key, const char *def,
                    const char **out, plugin_field_errs *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char p[256];

    *out = def;
    if (!v || cJSON_IsNull(v))
        return 1;
    if (!cJSON_IsString(v)) {
        plugin_field_errs_add(e, "%s: expected a string",
                              plugin_args_path(p, sizeof(p), path, key, 0));
        return 0;
    }
    *out = v->valuestring;
    return 1;
}

int plugin_args_array(const cJSON *obj, const char *path, const char *key, const cJSON **out,
                      plugin_field_errs *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char p[256];

    *out = NULL;
    if (!v || cJSON_IsNull(v))
        return 1;
    if (!cJSON_IsArray(v)) {
        plugin_field_errs_add(e, "%s: expected an array",
                              plugin_args_path(p, sizeof(p), path, key, 0));
        return 0;
    }
    *out = v;
    return 1;
}

int plugin_handle_only_create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                              size_t errlen)
{
    plugin_handle_only *pl = calloc(1, sizeof(*pl));
    (void)args, (void)err, (void)errlen;
    if (!pl)
        return KUBE_ENOMEM;
    pl->h = h;
    *self = pl;
    return KUBE_OK;
}

void plugin_handle_only_destroy(void *self)
{
    free(self);
}
