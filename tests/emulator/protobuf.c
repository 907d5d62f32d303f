/*
 * tests/emulator/protobuf.c - the few protobuf request bodies kubectl
 * sends (Content-Type: application/vnd.kubernetes.protobuf): the
 * DeleteOptions of a DELETE, the Eviction of pods/eviction (kubectl
 * drain) and the SelfSubject{Access,Rules}Reviews of kubectl auth can-i. A body is Kubernetes'
 * envelope: the magic "k8s\0", then a runtime.Unknown message {typeMeta {apiVersion, kind}, raw,
 * ...} whose raw bytes are the object's message. Both kinds are turned into the JSON the emulator
 * would have received:
 *
 *   DeleteOptions: gracePeriodSeconds (1), preconditions (2: uid 1,
 *     resourceVersion 2), orphanDependents (3), propagationPolicy (4),
 *     dryRun (5, repeated);
 *   Eviction (policy/v1, policy/v1beta1): metadata (1, ObjectMeta: name 1,
 *     generateName 2, namespace 3, uid 5, resourceVersion 6),
 *     deleteOptions (2);
 *   SelfSubjectAccessReview (kubectl auth can-i): spec's attributes;
 *   SelfSubjectRulesReview (kubectl auth can-i --list): spec.namespace.
 *
 * Any other kind is 415 UnsupportedMediaType naming the JSON and YAML
 * types (the emulator stores JSON); a body that is not such an envelope is
 * 400 as kube-apiserver's protobuf serializer answers.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "emu_internal.h"

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

/* A string field as a NUL-terminated copy in buf (truncated to n - 1). */
static const char *pb_string(const pb *s, char *buf, size_t n)
{
    snprintf(buf, n, "%.*s", (int)(s->n < n ? s->n : n - 1), (const char *)s->p);
    return buf;
}

static void put_bytes(cJSON *o, const char *key, const pb *s)
{
    char buf[1024];

    emu_json_put_str(o, key, pb_string(s, buf, sizeof(buf)));
}

/* Preconditions / TypeMeta / the ObjectMeta strings: field number ->
 * JSON key for the string fields of a message. */
static int decode_strings(pb b, const char *const *keys, size_t n_keys, cJSON *out)
{
    pb_field f;
    int rc;

    while ((rc = pb_next(&b, &f)) == 1)
        if (f.wire == 2 && f.num >= 1 && f.num <= n_keys && keys[f.num - 1])
            put_bytes(out, keys[f.num - 1], &f.sub);
    return rc;
}

static int decode_delete_options(pb b, cJSON *out)
{
    static const char *const pre_keys[] = {"uid", "resourceVersion"};
    pb_field f;
    cJSON *dry = NULL;
    int rc;

    while ((rc = pb_next(&b, &f)) == 1) {
        if (f.num == 1 && f.wire == 0)
            emu_json_put(out, "gracePeriodSeconds", cJSON_CreateNumber((double)(int64_t)f.v));
        else if (f.num == 2 && f.wire == 2)
            rc = decode_strings(f.sub, pre_keys, 2, emu_json_obj(out, "preconditions"));
        else if (f.num == 3 && f.wire == 0)
            emu_json_put(out, "orphanDependents", cJSON_CreateBool(f.v != 0));
        else if (f.num == 4 && f.wire == 2)
            put_bytes(out, "propagationPolicy", &f.sub);
        else if (f.num == 5 && f.wire == 2) {
            char buf[64];
            if (!dry)
                emu_json_put(out, "dryRun", dry = cJSON_CreateArray());
            cJSON_AddItemToArray(dry, cJSON_CreateString(pb_string(&f.sub, buf, sizeof(buf))));
        }
        if (rc < 0)
            return rc;
    }
    return rc;
}

static int decode_eviction(pb b, cJSON *out)
{
    static const char *const meta_keys[] = {"name", "generateName", "namespace",
                                            NULL,   "uid",          "resourceVersion"};
    pb_field f;
    int rc;

    while ((rc = pb_next(&b, &f)) == 1) {
        if (f.num == 1 && f.wire == 2)
            rc = decode_strings(f.sub, meta_keys, 6, emu_json_obj(out, "metadata"));
        else if (f.num == 2 && f.wire == 2)
            rc = decode_delete_options(f.sub, emu_json_obj(out, "deleteOptions"));
        if (rc < 0)
            return rc;
    }
    return rc;
}

/* SelfSubjectAccessReview: spec (2) {resourceAttributes (1): namespace,
 * verb, group, version, resource, subresource, name; nonResourceAttributes
 * (2): path, verb}. */
static int decode_ssar(pb b, cJSON *out)
{
    static const char *const res_keys[] = {"namespace", "verb",        "group", "version",
                                           "resource",  "subresource", "name"};
    static const char *const nonres_keys[] = {"path", "verb"};
    pb_field f, g;
    int rc;

    while ((rc = pb_next(&b, &f)) == 1) {
        if (f.num != 2 || f.wire != 2)
            continue;
        while ((rc = pb_next(&f.sub, &g)) == 1) {
            if (g.num == 1 && g.wire == 2)
                rc = decode_strings(g.sub, res_keys, 7,
                                    emu_json_obj(emu_json_obj(out, "spec"), "resourceAttributes"));
            else if (g.num == 2 && g.wire == 2)
                rc = decode_strings(
                    g.sub, nonres_keys, 2,
                    emu_json_obj(emu_json_obj(out, "spec"), "nonResourceAttributes"));
            if (rc < 0)
                return rc;
        }
        if (rc < 0)
            return rc;
    }
    return rc;
}

/* SelfSubjectRulesReview: spec (2) {namespace (1)}. */
static int decode_ssrr(pb b, cJSON *out)
{
    static const char *const spec_keys[] = {"namespace"};
    pb_field f;
    int rc;

    while ((rc = pb_next(&b, &f)) == 1)
        if (f.num == 2 && f.wire == 2 &&
            (rc = decode_strings(f.sub, spec_keys, 1, emu_json_obj(out, "spec"))) < 0)
            return rc;
    return rc;
}

/* Splits the envelope into its TypeMeta (into out as apiVersion, kind) and
 * raw bytes. */
static int unwrap(pb b, cJSON *out, pb *raw)
{
    static const char *const tm_keys[] = {"apiVersion", "kind"};
    pb_field f;
    int rc;

    raw->p = NULL;
    raw->n = 0;
    while ((rc = pb_next(&b, &f)) == 1) {
        if (f.num == 1 && f.wire == 2)
            rc = decode_strings(f.sub, tm_keys, 2, out);
        else if (f.num == 2 && f.wire == 2)
            *raw = f.sub;
        if (rc < 0)
            return rc;
    }
    return rc;
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
    const char *got;
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
    got = emu_json_str(o, "kind");
    if (rc == 0 && got && !strcmp(got, "DeleteOptions"))
        rc = decode_delete_options(raw, o);
    else if (rc == 0 && got && !strcmp(got, "Eviction"))
        rc = decode_eviction(raw, o);
    else if (rc == 0 && got && !strcmp(got, "SelfSubjectAccessReview"))
        rc = decode_ssar(raw, o);
    else if (rc == 0 && got && !strcmp(got, "SelfSubjectRulesReview"))
        rc = decode_ssrr(raw, o);
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
