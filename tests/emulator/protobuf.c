/*
 * tests/emulator/protobuf.c - the protobuf request bodies kubectl sends
 * (Content-Type: application/vnd.kubernetes.protobuf), turned into the JSON
 * the emulator would have received. kubectl's typed clients send them: the
 * DeleteOptions of a DELETE (drain without eviction), Evictions (older
 * kubectl), the SelfSubject{Access,Rules}Reviews of auth can-i, and the
 * objects of kubectl create namespace / configmap / secret generic /
 * serviceaccount / role / clusterrole / rolebinding / clusterrolebinding /
 * poddisruptionbudget.
 *
 * A body is Kubernetes' envelope: the magic "k8s\0", then a
 * runtime.Unknown message {typeMeta (1) {apiVersion 1, kind 2}, raw (2),
 * ...} whose raw bytes are the object's message. Each kind has a schema
 * (field number -> JSON member and type, as k8s.io/api's generated.proto);
 * fields a schema does not name (creationTimestamp, ownerReferences,
 * status, ...) are dropped, and empty strings and zero numbers of
 * non-pointer fields (which gogo-protobuf always writes) are left out as
 * omitempty leaves them out of JSON.
 *
 * Any other kind (deployments, services, pods: their schemas are not
 * here) is 415 UnsupportedMediaType naming the JSON and YAML types; a body
 * that is not such an envelope is 400 as kube-apiserver's protobuf
 * serializer answers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "emu_internal.h"
#include "kube/codec/base64.h"

typedef struct pb {
    const unsigned char *p;
    size_t n;
} pb;

typedef struct pb_field {
    uint32_t num;
    int wire;
    uint64_t v; /* varint value */
    pb sub;     /* length-delimited bytes */
} pb_field;

static int pb_varint(pb *b, uint64_t *out)
{
    uint64_t v = 0;

    for (int shift = 0; shift < 64 && b->n; shift += 7) {
        unsigned char c = *b->p++;
        b->n--;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return KUBE_OK;
        }
    }
    return KUBE_EPARSE;
}

/* Reads the next field of b. Returns 1 when one was read, 0 at the end,
 * KUBE_EPARSE on a malformed message. */
static int pb_next(pb *b, pb_field *f)
{
    uint64_t key, len;

    if (!b->n)
        return 0;
    if (pb_varint(b, &key) != KUBE_OK)
        return KUBE_EPARSE;
    f->num = (uint32_t)(key >> 3);
    f->wire = (int)(key & 7);
    switch (f->wire) {
    case 0:
        return pb_varint(b, &f->v) == KUBE_OK ? 1 : KUBE_EPARSE;
    case 1:
    case 5:
        len = f->wire == 1 ? 8 : 4;
        break;
    case 2:
        if (pb_varint(b, &len) != KUBE_OK)
            return KUBE_EPARSE;
        break;
    default:
        return KUBE_EPARSE;
    }
    if (len > b->n)
        return KUBE_EPARSE;
    f->sub.p = b->p;
    f->sub.n = (size_t)len;
    b->p += len;
    b->n -= (size_t)len;
    return 1;
}

/* ------------------------------------------------------------------ */
/* Schemas: field number -> JSON member                                */
/* ------------------------------------------------------------------ */

typedef enum {
    F_STR,      /* string (empty: omitted, as omitempty) */
    F_INT,      /* varint int64 (0 omitted unless F_KEEP) */
    F_BOOL,     /* varint bool (false omitted unless F_KEEP) */
    F_MSG,      /* message, decoded with sub */
    F_MSGS,     /* repeated message */
    F_STRS,     /* repeated string */
    F_STRMAP,   /* map<string,string> */
    F_BYTESMAP, /* map<string,bytes>: values base64 as in JSON */
    F_INTSTR,   /* intstr.IntOrString {type 1, intVal 2, strVal 3} */
} ftype;

enum { F_KEEP = 1 }; /* a pointer field: its zero value is meaningful */

typedef struct pb_schema pb_schema;

typedef struct pb_fdef {
    uint32_t num;
    const char *json;
    ftype type;
    const pb_schema *sub;
    int flags;
} pb_fdef;

struct pb_schema {
    const pb_fdef *f;
    size_t n;
};

#define SCHEMA(name, ...)                            \
    static const pb_fdef name##_f[] = {__VA_ARGS__}; \
    static const pb_schema name = {name##_f, sizeof(name##_f) / sizeof(name##_f[0])}

SCHEMA(object_meta, {1, "name", F_STR, NULL, 0}, {2, "generateName", F_STR, NULL, 0},
       {3, "namespace", F_STR, NULL, 0}, {5, "uid", F_STR, NULL, 0},
       {6, "resourceVersion", F_STR, NULL, 0}, {11, "labels", F_STRMAP, NULL, 0},
       {12, "annotations", F_STRMAP, NULL, 0}, {14, "finalizers", F_STRS, NULL, 0});
SCHEMA(preconditions, {1, "uid", F_STR, NULL, 0}, {2, "resourceVersion", F_STR, NULL, 0});
SCHEMA(delete_options, {1, "gracePeriodSeconds", F_INT, NULL, F_KEEP},
       {2, "preconditions", F_MSG, &preconditions, 0},
       {3, "orphanDependents", F_BOOL, NULL, F_KEEP}, {4, "propagationPolicy", F_STR, NULL, 0},
       {5, "dryRun", F_STRS, NULL, 0});
SCHEMA(eviction, {1, "metadata", F_MSG, &object_meta, 0},
       {2, "deleteOptions", F_MSG, &delete_options, 0});
SCHEMA(resource_attrs, {1, "namespace", F_STR, NULL, 0}, {2, "verb", F_STR, NULL, 0},
       {3, "group", F_STR, NULL, 0}, {4, "version", F_STR, NULL, 0},
       {5, "resource", F_STR, NULL, 0}, {6, "subresource", F_STR, NULL, 0},
       {7, "name", F_STR, NULL, 0});
SCHEMA(nonresource_attrs, {1, "path", F_STR, NULL, 0}, {2, "verb", F_STR, NULL, 0});
SCHEMA(ssar_spec, {1, "resourceAttributes", F_MSG, &resource_attrs, 0},
       {2, "nonResourceAttributes", F_MSG, &nonresource_attrs, 0});
SCHEMA(ssar, {1, "metadata", F_MSG, &object_meta, 0}, {2, "spec", F_MSG, &ssar_spec, 0});
SCHEMA(ssrr_spec, {1, "namespace", F_STR, NULL, 0});
SCHEMA(ssrr, {1, "metadata", F_MSG, &object_meta, 0}, {2, "spec", F_MSG, &ssrr_spec, 0});
SCHEMA(ns_spec, {1, "finalizers", F_STRS, NULL, 0});
SCHEMA(namespace, {1, "metadata", F_MSG, &object_meta, 0}, {2, "spec", F_MSG, &ns_spec, 0});
SCHEMA(configmap, {1, "metadata", F_MSG, &object_meta, 0}, {2, "data", F_STRMAP, NULL, 0},
       {3, "binaryData", F_BYTESMAP, NULL, 0}, {4, "immutable", F_BOOL, NULL, F_KEEP});
SCHEMA(secret, {1, "metadata", F_MSG, &object_meta, 0}, {2, "data", F_BYTESMAP, NULL, 0},
       {3, "type", F_STR, NULL, 0}, {4, "stringData", F_STRMAP, NULL, 0},
       {5, "immutable", F_BOOL, NULL, F_KEEP});
SCHEMA(object_ref, {1, "kind", F_STR, NULL, 0}, {2, "namespace", F_STR, NULL, 0},
       {3, "name", F_STR, NULL, 0}, {4, "uid", F_STR, NULL, 0}, {5, "apiVersion", F_STR, NULL, 0});
SCHEMA(local_ref, {1, "name", F_STR, NULL, 0});
SCHEMA(service_account, {1, "metadata", F_MSG, &object_meta, 0},
       {2, "secrets", F_MSGS, &object_ref, 0}, {3, "imagePullSecrets", F_MSGS, &local_ref, 0},
       {4, "automountServiceAccountToken", F_BOOL, NULL, F_KEEP});
SCHEMA(policy_rule, {1, "verbs", F_STRS, NULL, 0}, {2, "apiGroups", F_STRS, NULL, 0},
       {3, "resources", F_STRS, NULL, 0}, {4, "resourceNames", F_STRS, NULL, 0},
       {5, "nonResourceURLs", F_STRS, NULL, 0});
SCHEMA(label_req, {1, "key", F_STR, NULL, 0}, {2, "operator", F_STR, NULL, 0},
       {3, "values", F_STRS, NULL, 0});
SCHEMA(label_selector, {1, "matchLabels", F_STRMAP, NULL, 0},
       {2, "matchExpressions", F_MSGS, &label_req, 0});
SCHEMA(aggregation_rule, {1, "clusterRoleSelectors", F_MSGS, &label_selector, 0});
SCHEMA(role, {1, "metadata", F_MSG, &object_meta, 0}, {2, "rules", F_MSGS, &policy_rule, 0},
       {3, "aggregationRule", F_MSG, &aggregation_rule, 0});
SCHEMA(subject, {1, "kind", F_STR, NULL, 0}, {2, "apiGroup", F_STR, NULL, 0},
       {3, "name", F_STR, NULL, 0}, {4, "namespace", F_STR, NULL, 0});
SCHEMA(role_ref, {1, "apiGroup", F_STR, NULL, 0}, {2, "kind", F_STR, NULL, 0},
       {3, "name", F_STR, NULL, 0});
SCHEMA(binding, {1, "metadata", F_MSG, &object_meta, 0}, {2, "subjects", F_MSGS, &subject, 0},
       {3, "roleRef", F_MSG, &role_ref, 0});
SCHEMA(pdb_spec, {1, "minAvailable", F_INTSTR, NULL, 0}, {2, "selector", F_MSG, &label_selector, 0},
       {3, "maxUnavailable", F_INTSTR, NULL, 0}, {4, "unhealthyPodEvictionPolicy", F_STR, NULL, 0});
SCHEMA(pdb, {1, "metadata", F_MSG, &object_meta, 0}, {2, "spec", F_MSG, &pdb_spec, 0});

/* The kinds decoded (any group version of the envelope). */
static const struct {
    const char *kind;
    const pb_schema *schema;
} kinds[] = {
    {"DeleteOptions", &delete_options},
    {"Eviction", &eviction},
    {"SelfSubjectAccessReview", &ssar},
    {"SelfSubjectRulesReview", &ssrr},
    {"Namespace", &namespace},
    {"ConfigMap", &configmap},
    {"Secret", &secret},
    {"ServiceAccount", &service_account},
    {"Role", &role},
    {"ClusterRole", &role},
    {"RoleBinding", &binding},
    {"ClusterRoleBinding", &binding},
    {"PodDisruptionBudget", &pdb},
};

/* ------------------------------------------------------------------ */
/* Decoding                                                            */
/* ------------------------------------------------------------------ */

static int decode(pb b, const pb_schema *schema, cJSON *out, int depth);

/* A length-delimited field as a fresh string (NULs kept out: C strings). */
static char *pb_strdup(const pb *s)
{
    char *v = malloc(s->n + 1);

    if (v) {
        memcpy(v, s->p, s->n);
        v[s->n] = '\0';
    }
    return v;
}

static cJSON *array_member(cJSON *out, const char *key)
{
    cJSON *a = cJSON_GetObjectItemCaseSensitive(out, key);

    if (!cJSON_IsArray(a))
        emu_json_put(out, key, a = cJSON_CreateArray());
    return a;
}

/* A map entry {key 1, value 2} into out[key] (value base64 when bytes). */
static int decode_map_entry(pb b, cJSON *map, int bytes)
{
    pb_field f;
    char *key = NULL, *val = NULL;
    int rc;

    while ((rc = pb_next(&b, &f)) == 1) {
        if (f.wire != 2)
            continue;
        if (f.num == 1) {
            free(key);
            key = pb_strdup(&f.sub);
        } else if (f.num == 2) {
            free(val);
            val = NULL;
            if (bytes)
                rc = kube_base64_encode(f.sub.p, f.sub.n, &val, NULL);
            else
                val = pb_strdup(&f.sub);
            if (rc < 0)
                break;
        }
    }
    if (rc >= 0)
        emu_json_put_str(map, key ? key : "", val ? val : "");
    free(key);
    free(val);
    return rc < 0 ? rc : 0;
}

/* intstr.IntOrString as a JSON number or string. */
static int decode_int_or_string(pb b, cJSON *out, const char *key)
{
    pb_field f;
    uint64_t type = 0, ival = 0;
    char *sval = NULL;
    int rc;

    while ((rc = pb_next(&b, &f)) == 1) {
        if (f.num == 1 && f.wire == 0)
            type = f.v;
        else if (f.num == 2 && f.wire == 0)
            ival = f.v;
        else if (f.num == 3 && f.wire == 2) {
            free(sval);
            sval = pb_strdup(&f.sub);
        }
    }
    if (rc >= 0 && type == 1)
        emu_json_put_str(out, key, sval ? sval : "");
    else if (rc >= 0)
        emu_json_put(out, key, cJSON_CreateNumber((double)(int32_t)ival));
    free(sval);
    return rc < 0 ? rc : 0;
}

static int decode_field(const pb_fdef *d, const pb_field *f, cJSON *out, int depth)
{
    int want_len = d->type != F_INT && d->type != F_BOOL;
    char *v;

    if (want_len != (f->wire == 2))
        return 0; /* not the wire type of the schema: skipped */
    switch (d->type) {
    case F_STR:
        if (f->sub.n && (v = pb_strdup(&f->sub))) {
            emu_json_put_str(out, d->json, v);
            free(v);
        }
        return 0;
    case F_INT:
        if (f->v || (d->flags & F_KEEP))
            emu_json_put(out, d->json, cJSON_CreateNumber((double)(int64_t)f->v));
        return 0;
    case F_BOOL:
        if (f->v || (d->flags & F_KEEP))
            emu_json_put(out, d->json, cJSON_CreateBool(f->v != 0));
        return 0;
    case F_MSG:
        return decode(f->sub, d->sub, emu_json_obj(out, d->json), depth + 1);
    case F_MSGS: {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(array_member(out, d->json), o);
        return decode(f->sub, d->sub, o, depth + 1);
    }
    case F_STRS:
        if ((v = pb_strdup(&f->sub))) {
            cJSON_AddItemToArray(array_member(out, d->json), cJSON_CreateString(v));
            free(v);
        }
        return 0;
    case F_STRMAP:
    case F_BYTESMAP:
        return decode_map_entry(f->sub, emu_json_obj(out, d->json), d->type == F_BYTESMAP);
    case F_INTSTR:
        return decode_int_or_string(f->sub, out, d->json);
    }
    return 0;
}

/* Decodes message b with schema into the JSON object out; fields the
 * schema does not name are skipped. */
static int decode(pb b, const pb_schema *schema, cJSON *out, int depth)
{
    pb_field f;
    int rc;

    if (!out || depth > 16)
        return KUBE_EPARSE;
    while ((rc = pb_next(&b, &f)) == 1) {
        for (size_t i = 0; i < schema->n; i++)
            if (schema->f[i].num == f.num && (rc = decode_field(&schema->f[i], &f, out, depth)) < 0)
                return rc;
    }
    return rc;
}

/* Splits the envelope into its TypeMeta (into out as apiVersion, kind) and
 * raw bytes. */
static int unwrap(pb b, cJSON *out, pb *raw)
{
    static const pb_fdef tm_f[] = {{1, "apiVersion", F_STR, NULL, 0}, {2, "kind", F_STR, NULL, 0}};
    static const pb_schema type_meta = {tm_f, 2};
    pb_field f;
    int rc;

    raw->p = NULL;
    raw->n = 0;
    while ((rc = pb_next(&b, &f)) == 1) {
        if (f.num == 1 && f.wire == 2)
            rc = decode(f.sub, &type_meta, out, 0);
        else if (f.num == 2 && f.wire == 2)
            *raw = f.sub;
        if (rc < 0)
            return rc;
    }
    return rc;
}

static const pb_schema *schema_of(const char *kind)
{
    for (size_t i = 0; kind && i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (!strcmp(kinds[i].kind, kind))
            return kinds[i].schema;
    return NULL;
}

int emu_pb_is_protobuf(const char *content_type)
{
    static const char pbt[] = "application/vnd.kubernetes.protobuf";

    return content_type && !strncasecmp(content_type, pbt, sizeof(pbt) - 1) &&
           (content_type[sizeof(pbt) - 1] == '\0' || content_type[sizeof(pbt) - 1] == ';');
}

static int bad_envelope(const emu_request *req, const char *kind, cJSON **st)
{
    char hex[80];
    size_t o = 0;

    for (size_t i = 0; i < req->body_len && i < 16 && o + 3 < sizeof(hex); i++)
        o += (size_t)snprintf(hex + o, sizeof(hex) - o, "%02x", (unsigned char)req->body[i]);
    hex[o] = '\0';
    return emu_fail(st, 400, "BadRequest", NULL,
                    "the object provided is unrecognized (must be of type %s): provided data does "
                    "not appear to be a protobuf message, expected prefix [107 56 115 0] (%s)",
                    kind, hex);
}

int emu_pb_decode(const emu_request *req, const char *kind, cJSON **out, cJSON **st)
{
    pb body = {(const unsigned char *)req->body, req->body_len}, raw;
    cJSON *o = cJSON_CreateObject();
    const pb_schema *schema;
    int rc;

    *out = NULL;
    if (!o)
        return emu_fail(st, 500, "InternalError", NULL, "out of memory");
    if (body.n < 4 || memcmp(body.p, "k8s\0", 4)) {
        cJSON_Delete(o);
        return bad_envelope(req, kind, st);
    }
    body.p += 4;
    body.n -= 4;
    rc = unwrap(body, o, &raw);
    schema = schema_of(emu_json_str(o, "kind"));
    if (rc == 0 && schema)
        rc = decode(raw, schema, o, 0);
    else if (rc == 0) {
        cJSON_Delete(o);
        return emu_fail(st, 415, "UnsupportedMediaType", NULL,
                        "the body of the request was in an unknown format - accepted media types "
                        "include: application/json, application/yaml");
    }
    if (rc < 0) {
        cJSON_Delete(o);
        return emu_fail(st, 400, "BadRequest", NULL,
                        "the object provided is unrecognized (must be of type %s): unexpected EOF",
                        kind);
    }
    *out = o;
    return KUBE_OK;
}
