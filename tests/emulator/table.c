/*
 * tests/emulator/table.c - the media-type transforms kube-apiserver's
 * get and list handlers offer (handlers/response.go):
 *
 *   Accept: application/json;as=Table;v=v1;g=meta.k8s.io  (or v=v1beta1)
 *       a meta.k8s.io Table: columnDefinitions and rows from printers.c;
 *       each row's "object" follows ?includeObject=: Metadata (default) a
 *       PartialObjectMetadata, Object the whole object, None nothing;
 *   Accept: application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io
 *       (one object) and ...;as=PartialObjectMetadataList;... (a list).
 *
 * The Accept list is read in order and the first media type the emulator
 * can serve wins (kubectl get sends Table v1, Table v1beta1, then plain
 * JSON); YAML and protobuf are answered as JSON; a list of nothing
 * servable (an unknown transform, text/html) is 406 NotAcceptable naming
 * the served types. A transform of the wrong shape (PartialObjectMetadata of a list)
 * is 406 NotAcceptable, an unknown includeObject is 400, as kube-apiserver
 * answers. Without a transform the object or list is plain JSON. A watch
 * asking for a Table (kubectl get -w) gets each event's object as a
 * one-row Table, the column definitions only in the first (NoHeaders
 * after it); ERROR and BOOKMARK objects are left as they are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"
#include "printers.h"

enum { AS_JSON = 0, AS_TABLE, AS_PARTIAL, AS_PARTIAL_LIST, AS_UNSERVABLE };

typedef struct transform {
    int as;
    char version[16]; /* "v1" or "v1beta1" */
} transform;

/* ------------------------------------------------------------------ */
/* Negotiation                                                         */
/* ------------------------------------------------------------------ */

static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

/* The value of parameter key in the ";"-separated params of one media
 * range (p, n), copied to out ("" when absent). */
static void media_param(const char *p, size_t n, const char *key, char *out, size_t outn)
{
    size_t klen = strlen(key);

    out[0] = '\0';
    while (n) {
        const char *semi = memchr(p, ';', n);
        size_t len = semi ? (size_t)(semi - p) : n;
        const char *q = p;
        size_t qn = len;
        trim(&q, &qn);
        if (qn > klen && !strncmp(q, key, klen) && q[klen] == '=')
            snprintf(out, outn, "%.*s", (int)(qn - klen - 1), q + klen + 1);
        p += len + (semi ? 1 : 0);
        n -= len + (semi ? 1 : 0);
    }
}

/* What one media range (text p, n) asks for. */
static int media_range(const char *p, size_t n, transform *t)
{
    const char *semi = memchr(p, ';', n);
    const char *mt = p;
    size_t mn = semi ? (size_t)(semi - p) : n;
    char as[48], g[48];

    trim(&mt, &mn);
    if (!(mn == 16 && !strncmp(mt, "application/json", 16)) &&
        !(mn == 3 && !strncmp(mt, "*/*", 3)) && !(mn == 13 && !strncmp(mt, "application/*", 13)))
        return AS_UNSERVABLE;
    media_param(p, n, "as", as, sizeof(as));
    if (!*as)
        return AS_JSON;
    media_param(p, n, "g", g, sizeof(g));
    media_param(p, n, "v", t->version, sizeof(t->version));
    if (strcmp(g, "meta.k8s.io") || (strcmp(t->version, "v1") && strcmp(t->version, "v1beta1")))
        return AS_UNSERVABLE;
    if (!strcmp(as, "Table"))
        return AS_TABLE;
    if (!strcmp(as, "PartialObjectMetadata"))
        return AS_PARTIAL;
    if (!strcmp(as, "PartialObjectMetadataList"))
        return AS_PARTIAL_LIST;
    return AS_UNSERVABLE;
}

/* 1 if the media range (p, n) is one kube-apiserver serves and the
 * emulator answers as JSON instead (YAML, protobuf without a transform). */
static int served_as_json(const char *p, size_t n)
{
    const char *semi = memchr(p, ';', n);
    size_t mn = semi ? (size_t)(semi - p) : n;
    char as[8];

    trim(&p, &mn);
    media_param(p, n, "as", as, sizeof(as));
    return !*as && ((mn == 16 && !strncmp(p, "application/yaml", 16)) ||
                    (mn == 35 && !strncmp(p, "application/vnd.kubernetes.protobuf", 35)));
}

/* The first servable entry of the Accept header; plain JSON when there is
 * no header or the client also takes a type the emulator answers as JSON;
 * AS_UNSERVABLE when nothing it asks for can be served (406). */
static transform negotiate(const emu_request *req)
{
    const char *accept = emu_header_get(req, "Accept");
    transform t = {AS_JSON, "v1"};
    int unservable = accept && *accept;

    while (accept && *accept) {
        const char *comma = strchr(accept, ',');
        size_t n = comma ? (size_t)(comma - accept) : strlen(accept);
        transform one = {AS_JSON, "v1"};
        one.as = media_range(accept, n, &one);
        if (one.as != AS_UNSERVABLE)
            return one;
        unservable &= !served_as_json(accept, n);
        accept = comma ? comma + 1 : NULL;
    }
    t.as = unservable ? AS_UNSERVABLE : AS_JSON;
    return t;
}

/* negotiation.NewNotAcceptableError: the media types the resource serves. */
static int not_acceptable(emu_response *resp, const emu_resource *r)
{
    emu_response_status(resp, 406, "NotAcceptable",
                        r->def->custom ? "only the following media types are accepted: "
                                         "application/json, application/yaml"
                                       : "only the following media types are accepted: "
                                         "application/json, application/yaml, "
                                         "application/vnd.kubernetes.protobuf",
                        NULL);
    return 1;
}

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/* The Go type kube-apiserver names in its 406 (the internal version). */
static void go_type(const emu_resource *r, int list, char *out, size_t n)
{
    const char *g = r->def->group;
    size_t glen = strcspn(g, ".");

    if (r->def->custom)
        snprintf(out, n, "*unstructured.Unstructured%s", list ? "List" : "");
    else
        snprintf(out, n, "*%.*s.%s", *g ? (int)glen : 4, *g ? g : "core",
                 list ? r->def->list_kind : r->def->kind);
}

static int wrong_shape(emu_response *resp, const emu_resource *r, int as)
{
    char type[160], msg[320];

    go_type(r, as == AS_PARTIAL, type, sizeof(type));
    if (as == AS_PARTIAL)
        snprintf(msg, sizeof(msg),
                 "you requested PartialObjectMetadata, but the requested object is a list (%s)",
                 type);
    else
        snprintf(msg, sizeof(msg),
                 "you requested PartialObjectMetadataList, but the requested object is not a "
                 "list (%s)",
                 type);
    emu_response_status(resp, 406, "NotAcceptable", msg, NULL);
    return 1;
}

enum { INCLUDE_METADATA = 0, INCLUDE_OBJECT, INCLUDE_NONE, INCLUDE_BAD };

static int include_object(const emu_request *req)
{
    char *v = emu_query_get(req, "includeObject");
    int inc = !v || !*v || !strcmp(v, "Metadata") ? INCLUDE_METADATA
              : !strcmp(v, "Object")              ? INCLUDE_OBJECT
              : !strcmp(v, "None")                ? INCLUDE_NONE
                                                  : INCLUDE_BAD;

    free(v);
    return inc;
}

static int bad_include(emu_response *resp, const emu_request *req)
{
    char *v = emu_query_get(req, "includeObject"), msg[512];

    snprintf(msg, sizeof(msg),
             "Unable to convert to Table as requested: includeObject: Unsupported value: \"%s\": "
             "supported values: \"Metadata\", \"None\", \"Object\"",
             v ? v : "");
    free(v);
    emu_response_status(resp, 400, "BadRequest", msg, NULL);
    return 1;
}

/* ------------------------------------------------------------------ */
/* Answers                                                             */
/* ------------------------------------------------------------------ */

/* {"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/V","metadata":...} */
static cJSON *partial(const cJSON *obj, const char *version)
{
    cJSON *p = cJSON_CreateObject();
    char api[32];

    snprintf(api, sizeof(api), "meta.k8s.io/%s", version);
    cJSON_AddStringToObject(p, "kind", "PartialObjectMetadata");
    cJSON_AddStringToObject(p, "apiVersion", api);
    cJSON_AddItemToObject(p, "metadata",
                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), 1));
    return p;
}

static cJSON *list_meta(int64_t rv, const char *cont, int64_t remaining)
{
    cJSON *meta = cJSON_CreateObject();
    char rvs[32];

    if (rv > 0) {
        snprintf(rvs, sizeof(rvs), "%lld", (long long)rv);
        cJSON_AddStringToObject(meta, "resourceVersion", rvs);
    }
    if (cont && *cont)
        cJSON_AddStringToObject(meta, "continue", cont);
    if (cont && *cont && remaining >= 0)
        cJSON_AddNumberToObject(meta, "remainingItemCount", (double)remaining);
    return meta;
}

/* One row for obj (taken over). */
static cJSON *table_row(const emu_resource *r, cJSON *obj, int inc, const char *version)
{
    cJSON *row = obj ? emu_printer_row(r, obj) : NULL;

    if (row && inc == INCLUDE_OBJECT) {
        cJSON_AddItemToObject(row, "object", obj);
        return row;
    }
    if (row && inc == INCLUDE_METADATA)
        cJSON_AddItemToObject(row, "object", partial(obj, version));
    cJSON_Delete(obj);
    return row;
}

static int answer(emu_response *resp, cJSON *body)
{
    int rc = body ? emu_response_json(resp, 200, body) : KUBE_ENOMEM;

    cJSON_Delete(body);
    if (rc != KUBE_OK)
        emu_response_status(resp, 500, "InternalError", kube_strerror(rc), NULL);
    return 1;
}

/* A Table without rows; meta taken over; headers 0 leaves
 * columnDefinitions null (watch events after the first). */
static cJSON *table_new(const emu_resource *r, cJSON *meta, const char *version, int headers)
{
    cJSON *t = cJSON_CreateObject();
    char api[32];

    snprintf(api, sizeof(api), "meta.k8s.io/%s", version);
    cJSON_AddStringToObject(t, "kind", "Table");
    cJSON_AddStringToObject(t, "apiVersion", api);
    cJSON_AddItemToObject(t, "metadata", meta);
    cJSON_AddItemToObject(t, "columnDefinitions",
                          headers ? emu_printer_columns(r) : cJSON_CreateNull());
    cJSON_AddArrayToObject(t, "rows");
    return t;
}

static int answer_table(emu_response *resp, const emu_request *req, const emu_resource *r,
                        emu_obj *const *items, size_t n, cJSON *meta, const char *version)
{
    int inc = include_object(req);
    cJSON *t, *rows;

    if (inc == INCLUDE_BAD) {
        cJSON_Delete(meta);
        return bad_include(resp, req);
    }
    t = table_new(r, meta, version, 1);
    rows = cJSON_GetObjectItemCaseSensitive(t, "rows");
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(rows, table_row(r, emu_obj_tree(items[i]), inc, version));
    return answer(resp, t);
}

static int answer_partial_list(emu_response *resp, emu_obj *const *items, size_t n, cJSON *meta,
                               const char *version)
{
    cJSON *l = cJSON_CreateObject(), *arr = n ? cJSON_CreateArray() : cJSON_CreateNull();
    char api[32];

    snprintf(api, sizeof(api), "meta.k8s.io/%s", version);
    cJSON_AddStringToObject(l, "kind", "PartialObjectMetadataList");
    cJSON_AddStringToObject(l, "apiVersion", api);
    cJSON_AddItemToObject(l, "metadata", meta);
    for (size_t i = 0; i < n; i++) {
        cJSON *obj = emu_obj_tree(items[i]);
        cJSON_AddItemToArray(arr, partial(obj, version));
        cJSON_Delete(obj);
    }
    cJSON_AddItemToObject(l, "items", arr);
    return answer(resp, l);
}

int emu_table_or_obj(emu_response *resp, const emu_request *req, const emu_resource *r,
                     const emu_obj *o)
{
    transform t = negotiate(req);
    emu_obj *one = (emu_obj *)o;
    cJSON *obj;

    switch (t.as) {
    case AS_TABLE:
        return answer_table(resp, req, r, &one, 1, list_meta(o->rv, NULL, -1), t.version);
    case AS_PARTIAL:
        obj = emu_obj_tree(o);
        answer(resp, obj ? partial(obj, t.version) : NULL);
        cJSON_Delete(obj);
        return 1;
    case AS_PARTIAL_LIST:
        return wrong_shape(resp, r, t.as);
    case AS_UNSERVABLE:
        return not_acceptable(resp, r);
    default:
        return emu_response_raw(resp, 200, "application/json", o->json, o->len), 1;
    }
}

int emu_table_list(emu_response *resp, const emu_request *req, const emu_resource *r,
                   emu_obj *const *items, size_t n, int64_t rv, const char *cont, int64_t remaining)
{
    transform t = negotiate(req);

    switch (t.as) {
    case AS_TABLE:
        return answer_table(resp, req, r, items, n, list_meta(rv, cont, remaining), t.version);
    case AS_PARTIAL_LIST:
        return answer_partial_list(resp, items, n, list_meta(rv, cont, remaining), t.version);
    case AS_PARTIAL:
        return wrong_shape(resp, r, t.as);
    case AS_UNSERVABLE:
        return not_acceptable(resp, r);
    default:
        return 0;
    }
}

int emu_table_watch_begin(const emu_request *req, const emu_resource *r, emu_response *resp,
                          emu_table_watch *tw)
{
    transform t = negotiate(req);

    memset(tw, 0, sizeof(*tw));
    if (t.as == AS_UNSERVABLE)
        return not_acceptable(resp, r), KUBE_EINVAL;
    if (t.as == AS_PARTIAL_LIST)
        return wrong_shape(resp, r, t.as), KUBE_EINVAL;
    if (t.as == AS_JSON)
        return KUBE_OK;
    tw->include = t.as == AS_TABLE ? include_object(req) : INCLUDE_METADATA;
    if (tw->include == INCLUDE_BAD) {
        bad_include(resp, req);
        return KUBE_EINVAL;
    }
    tw->on = 1;
    tw->table = t.as == AS_TABLE;
    tw->headers = 1;
    kube_strlcpy(tw->version, t.version, sizeof(tw->version));
    return KUBE_OK;
}

char *emu_table_watch_object(emu_table_watch *tw, const emu_resource *r, const char *json,
                             size_t len)
{
    cJSON *obj = NULL, *t;
    char err[64], *out;
    const char *rv;

    if (emu_json_parse(json, len, &obj, err, sizeof(err)) != KUBE_OK)
        return NULL;
    if (!tw->table) {
        t = partial(obj, tw->version);
        cJSON_Delete(obj);
    } else {
        rv = emu_json_str(obj, "metadata.resourceVersion");
        t = table_new(r, list_meta(0, NULL, -1), tw->version, tw->headers);
        if (rv)
            cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(t, "metadata"),
                                    "resourceVersion", rv);
        cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(t, "rows"),
                             table_row(r, obj, tw->include, tw->version));
        tw->headers = 0;
    }
    out = t ? emu_json_print(t) : NULL;
    cJSON_Delete(t);
    return out;
}
