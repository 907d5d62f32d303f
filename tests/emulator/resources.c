/*
 * tests/emulator/resources.c - the built-in REST API: resource table,
 * routing of /api and /apis resource paths, and the handlers for get,
 * create, update (PUT), patch, delete, deletecollection, the status
 * subresources and pods/binding, with kube-apiserver's Status answers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"
#include "kube/util/clock.h"
#include "kube/util/clock_testing.h"
#include "kube/util/log.h"

/* ------------------------------------------------------------------ */
/* Resource table                                                      */
/* ------------------------------------------------------------------ */

static const emu_resource_def builtin_defs[] = {
    {"", "v1", "pods", "pod", "Pod", "PodList", "po", "all", 1, 1, 0, NULL},
    {"", "v1", "nodes", "node", "Node", "NodeList", "no", NULL, 0, 1, 0, NULL},
    {"", "v1", "namespaces", "namespace", "Namespace", "NamespaceList", "ns", NULL, 0, 1, 0, NULL},
    {"", "v1", "configmaps", "configmap", "ConfigMap", "ConfigMapList", "cm", NULL, 1, 0, 0, NULL},
    {"", "v1", "events", "event", "Event", "EventList", "ev", NULL, 1, 0, 0, NULL},
    {"events.k8s.io", "v1", "events", "event", "Event", "EventList", "ev", NULL, 1, 0, 0, NULL},
    {"coordination.k8s.io", "v1", "leases", "lease", "Lease", "LeaseList", NULL, NULL, 1, 0, 0,
     NULL},
    {"kubevirt.io", "v1", "virtualmachines", "virtualmachine", "VirtualMachine",
     "VirtualMachineList", "vm,vms", "all", 1, 1, 1, NULL},
    {"kubevirt.io", "v1", "virtualmachineinstances", "virtualmachineinstance",
     "VirtualMachineInstance", "VirtualMachineInstanceList", "vmi,vmis", "all", 1, 1, 1, NULL},
};

static const emu_kind_ops *const builtin_ops[] = {
    &emu_pod_ops,       &emu_node_ops,  &emu_namespace_ops, &emu_configmap_ops, &emu_event_ops,
    &emu_eventsk8s_ops, &emu_lease_ops, &emu_custom_ops,    &emu_custom_ops,
};

static const char *const *const builtin_fields[] = {
    emu_pod_fields, emu_node_fields, NULL, NULL, emu_event_fields, NULL, NULL, NULL, NULL,
};

static emu_resource *g_pods, *g_namespaces;

int emu_resources_init(emu_server *s)
{
    for (size_t i = 0; i < sizeof(builtin_defs) / sizeof(builtin_defs[0]); i++) {
        emu_resource *r;
        int rc = emu_store_add_resource(s->store, &builtin_defs[i], builtin_ops[i], &r);
        if (rc != KUBE_OK)
            return rc;
        r->fields = builtin_fields[i];
    }
    g_pods = emu_store_find(s->store, "", "v1", "pods");
    g_namespaces = emu_store_find(s->store, "", "v1", "namespaces");
    return emu_events_mirror_init(s);
}

int emu_resource_register(emu_server *s, const emu_resource_def *def)
{
    return emu_store_add_resource(s->store, def, def->custom ? &emu_custom_ops : &emu_generic_ops,
                                  NULL);
}

emu_resource *emu_resource_find(emu_server *s, const char *group, const char *version,
                                const char *plural)
{
    return emu_store_find(s->store, group, version, plural);
}

const emu_resource_def *emu_resource_definition(const emu_resource *r)
{
    return r->def;
}

/* ------------------------------------------------------------------ */
/* Status answers                                                      */
/* ------------------------------------------------------------------ */

static int not_found(cJSON **st, const emu_resource *r, const char *name)
{
    return emu_fail(st, 404, "NotFound", emu_details(name, r->def->group, r->def->plural),
                    "%s \"%s\" not found", r->group_resource, name);
}

static int conflict_modified(cJSON **st, const emu_resource *r, const char *name)
{
    return emu_fail(st, 409, "Conflict", emu_details(name, r->def->group, r->def->plural),
                    "Operation cannot be fulfilled on %s \"%s\": the object has been modified; "
                    "please apply your changes to the latest version and try again",
                    r->group_resource, name);
}

static void registry_key(const emu_resource *r, const char *ns, const char *name, char *out,
                         size_t n)
{
    const char *res =
        !strcmp(r->def->plural, "nodes") && !*r->def->group ? "minions" : r->def->plural;

    snprintf(out, n, "/registry/%s%s%s/%s%s%s",
             *r->def->group && r->def->custom ? r->def->group : "",
             *r->def->group && r->def->custom ? "/" : "", res, ns && *ns ? ns : "",
             ns && *ns ? "/" : "", name);
}

/* A failed storage precondition (uid or resourceVersion). */
static int precondition_failed(cJSON **st, const emu_resource *r, const char *ns, const char *name,
                               const char *what, const char *want, const char *have)
{
    char key[512];

    registry_key(r, r->def->namespaced ? ns : NULL, name, key, sizeof(key));
    return emu_fail(st, 409, "Conflict", emu_details(name, r->def->group, r->def->plural),
                    "Operation cannot be fulfilled on %s \"%s\": StorageError: invalid object, "
                    "Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: Precondition "
                    "failed: %s in precondition: %s, %s in object meta: %s",
                    r->group_resource, name, key, what, want, what, have);
}

static int method_not_allowed(emu_response *resp)
{
    return emu_response_status(resp, 405, "MethodNotAllowed",
                               "the server does not allow this method on the requested resource",
                               cJSON_CreateObject());
}

static int answer_status(emu_response *resp, cJSON *st)
{
    int code = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(st, "code"));
    int rc = emu_response_json(resp, code ? code : 500, st);

    cJSON_Delete(st);
    return rc;
}

static int answer_obj(emu_response *resp, int code, const emu_obj *o)
{
    return emu_response_raw(resp, code, "application/json", o->json, o->len);
}

/* ------------------------------------------------------------------ */
/* Body decoding                                                       */
/* ------------------------------------------------------------------ */

static void summarize(const char *body, size_t len, char *out, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t shown = len > 30 ? 30 : len, o = 0;

    if (len == 0) {
        snprintf(out, n, "<empty>");
        return;
    }
    if (body[0] == '{') {
        snprintf(out, n, "%.*s%s", (int)shown, body, len > 30 ? " ..." : "");
        return;
    }
    for (size_t i = 0; i < shown && o + 3 < n; i++) {
        out[o++] = hex[(unsigned char)body[i] >> 4];
        out[o++] = hex[(unsigned char)body[i] & 15];
    }
    out[o] = '\0';
    if (len > 30)
        kube_strlcpy(out + o, " ...", n - o);
}

int emu_decode_body(const emu_request *req, const char *kind, cJSON **out, cJSON **st)
{
    char err[256], summary[128];

    *out = NULL;
    if (emu_pb_is_protobuf(emu_header_get(req, "Content-Type")))
        return emu_pb_decode(req, kind, out, st);
    if (emu_json_parse(req->body, req->body_len, out, err, sizeof(err)) != KUBE_OK) {
        summarize(req->body, req->body_len, summary, sizeof(summary));
        return emu_fail(st, 400, "BadRequest", NULL,
                        "the object provided is unrecognized (must be of type %s): couldn't get "
                        "version/kind; json parse error: %s (%s)",
                        kind, err, summary);
    }
    if (!cJSON_IsObject(*out)) {
        cJSON_Delete(*out);
        *out = NULL;
        summarize(req->body, req->body_len, summary, sizeof(summary));
        return emu_fail(st, 400, "BadRequest", NULL,
                        "the object provided is unrecognized (must be of type %s): couldn't get "
                        "version/kind; json parse error: json: cannot unmarshal %s into Go value "
                        "of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; "
                        "Kind string \"json:\\\"kind,omitempty\\\"\" } (%s)",
                        kind, cJSON_IsArray(*out) ? "array" : "string", summary);
    }
    return KUBE_OK;
}

static void group_version(const emu_resource *r, char *out, size_t n)
{
    snprintf(out, n, "%s%s%s", r->def->group, *r->def->group ? "/" : "", r->def->version);
}

/* Checks kind/apiVersion of a body against the resource and fills them. */
static int check_type(const emu_resource *r, const char *expect_kind, cJSON *obj, cJSON **st)
{
    char gv[128];
    const char *kind = emu_json_str(obj, "kind");
    const char *api = emu_json_str(obj, "apiVersion");

    group_version(r, gv, sizeof(gv));
    if ((kind && *kind && strcmp(kind, expect_kind)) ||
        (api && *api && strcmp(api, gv) && strcmp(expect_kind, r->def->kind) == 0))
        return emu_fail(st, 400, "BadRequest", NULL,
                        "%s in version \"%s\" cannot be handled as a %s: no kind \"%s\" is "
                        "registered for version \"%s\"",
                        kind && *kind ? kind : expect_kind, api && *api ? api : gv, expect_kind,
                        kind && *kind ? kind : expect_kind, api && *api ? api : gv);
    emu_json_put_str(obj, "kind", expect_kind);
    emu_json_put_str(obj, "apiVersion", strcmp(expect_kind, r->def->kind) ? "v1" : gv);
    return KUBE_OK;
}

static int check_namespace(const emu_resource *r, const char *url_ns, cJSON *obj, cJSON **st)
{
    cJSON *meta = emu_json_obj(obj, "metadata");
    const char *ns = emu_json_str(obj, "metadata.namespace");

    if (!meta)
        return emu_fail(st, 500, "InternalError", NULL, "out of memory");
    if (!r->def->namespaced) {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "namespace");
        return KUBE_OK;
    }
    if (ns && *ns && strcmp(ns, url_ns))
        return emu_fail(st, 400, "BadRequest", NULL,
                        "the namespace of the provided object does not match the namespace sent "
                        "on the request");
    return emu_json_put_str(meta, "namespace", url_ns);
}

/* ------------------------------------------------------------------ */
/* Create                                                              */
/* ------------------------------------------------------------------ */

static void generate_name(cJSON *meta)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    const char *prefix = emu_json_str(meta, "generateName");
    char name[300], uuid[37];
    size_t n;

    if (emu_json_str(meta, "name") && *emu_json_str(meta, "name"))
        return;
    if (!prefix || !*prefix)
        return;
    emu_uuid(uuid);
    n = (size_t)snprintf(name, sizeof(name), "%.*s", 58, prefix);
    for (int i = 0; i < 5 && n + 1 < sizeof(name); i++)
        name[n++] = alphabet[(unsigned char)uuid[(i * 5) % 36] % (sizeof(alphabet) - 1)];
    name[n] = '\0';
    emu_json_put_str(meta, "name", name);
}

static int namespace_ready(emu_server *s, const char *ns, const emu_resource *r, const char *name,
                           cJSON **st)
{
    emu_obj *o = emu_store_lookup(s->store, g_namespaces, NULL, ns);
    int terminating;

    if (!o)
        return emu_fail(st, 404, "NotFound", emu_details(ns, "", "namespaces"),
                        "namespaces \"%s\" not found", ns);
    {
        cJSON *t = emu_obj_tree(o);
        terminating = emu_json_at(t, "metadata.deletionTimestamp") != NULL;
        cJSON_Delete(t);
    }
    emu_obj_unref(o);
    if (terminating)
        return emu_fail(st, 403, "Forbidden", emu_details(name, r->def->group, r->def->plural),
                        "%s \"%s\" is forbidden: unable to create new content in namespace %s "
                        "because it is being terminated",
                        r->group_resource, name, ns);
    return KUBE_OK;
}

static int system_meta(const emu_resource *r, cJSON *obj, cJSON **st)
{
    cJSON *meta = emu_json_obj(obj, "metadata");
    char uid[37], now[40];
    const char *rv = emu_json_str(obj, "metadata.resourceVersion");

    if (rv && *rv)
        return emu_fail(st, 500, "InternalError", NULL,
                        "resourceVersion should not be set on objects to be created");
    emu_uuid(uid);
    kube_time_rfc3339(now, sizeof(now));
    emu_json_put_str(meta, "uid", uid);
    emu_json_put_str(meta, "creationTimestamp", now);
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "deletionTimestamp");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "deletionGracePeriodSeconds");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "selfLink");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "generation");
    if (r->ops && r->ops->generation)
        cJSON_AddNumberToObject(meta, "generation", 1);
    if (r->def->custom && r->def->has_status)
        cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
    return KUBE_OK;
}

typedef struct create_ctx {
    cJSON *obj; /* taken by the write */
    const emu_resource *r;
} create_ctx;

static int create_fn(void *ctx, cJSON *cur, int64_t rv, cJSON **next, int *del, int *again,
                     cJSON **st)
{
    create_ctx *c = ctx;

    (void)rv;
    (void)del;
    (void)again;
    if (cur) {
        const char *name = emu_json_str(cur, "metadata.name");
        int rc = emu_fail(st, 409, "AlreadyExists",
                          emu_details(name, c->r->def->group, c->r->def->plural),
                          "%s \"%s\" already exists", c->r->group_resource, name);
        cJSON_Delete(cur);
        return rc;
    }
    *next = c->obj;
    c->obj = NULL;
    return KUBE_OK;
}

/* Creates obj (taken over) in r. On success *out is the stored version. */
static int create_object(emu_server *s, emu_resource *r, const char *ns, cJSON *obj, emu_obj **out,
                         cJSON **st)
{
    create_ctx ctx = {obj, r};
    cJSON *meta;
    const char *name;
    int rc;

    *out = NULL;
    rc = check_type(r, r->def->kind, obj, st);
    if (rc == KUBE_OK)
        rc = check_namespace(r, ns ? ns : "", obj, st);
    meta = emu_json_obj(obj, "metadata");
    if (rc == KUBE_OK)
        generate_name(meta);
    if (rc == KUBE_OK)
        rc = emu_validate_meta(r, obj, st);
    name = emu_json_str(obj, "metadata.name");
    if (rc == KUBE_OK && r->def->namespaced)
        rc = namespace_ready(s, ns, r, name, st);
    if (rc == KUBE_OK)
        rc = system_meta(r, obj, st);
    if (rc == KUBE_OK && r->ops && r->ops->on_create)
        rc = r->ops->on_create(r, obj, st);
    if (rc != KUBE_OK) {
        cJSON_Delete(obj);
        return rc;
    }
    emu_normalize(r, obj);
    rc = emu_store_write(s->store, r, ns, emu_json_str(obj, "metadata.name"), create_fn, &ctx, out,
                         st);
    cJSON_Delete(ctx.obj);
    if (rc == KUBE_OK)
        emu_events_mirror(s, r, ns, (*out)->name);
    return rc;
}

static int handle_create(emu_server *s, emu_request *req, emu_resource *r, emu_response *resp)
{
    cJSON *obj = NULL, *st = NULL;
    emu_obj *o = NULL;
    int rc = emu_decode_body(req, r->def->kind, &obj, &st);

    if (rc == KUBE_OK && r->def->virtual_create) {
        rc = r->def->virtual_create(s, req, obj, resp);
        cJSON_Delete(obj);
        if (rc < 0 && resp->status == 0)
            emu_response_status(resp, 500, "InternalError", kube_strerror(rc), NULL);
        return 1;
    }
    if (rc == KUBE_OK)
        rc = create_object(s, r, req->attrs.namespace_, obj, &o, &st);
    if (rc != KUBE_OK)
        return answer_status(resp, st), 1;
    answer_obj(resp, 201, o);
    emu_obj_unref(o);
    return 1;
}

int emu_store_create(emu_server *s, emu_resource *r, const char *ns, const cJSON *obj, cJSON **out,
                     cJSON **status_out)
{
    cJSON *copy = cJSON_Duplicate(obj, 1), *st = NULL;
    emu_obj *o = NULL;
    int rc;

    if (out)
        *out = NULL;
    if (status_out)
        *status_out = NULL;
    if (!copy)
        return KUBE_ENOMEM;
    rc = create_object(s, r, ns, copy, &o, &st);
    if (rc == KUBE_OK && out)
        *out = emu_obj_tree(o);
    emu_obj_unref(o);
    if (status_out)
        *status_out = st;
    else
        cJSON_Delete(st);
    return rc;
}

int emu_store_get(emu_server *s, emu_resource *r, const char *ns, const char *name, cJSON **out)
{
    emu_obj *o = emu_store_lookup(s->store, r, ns, name);

    *out = NULL;
    if (!o)
        return KUBE_ENOTFOUND;
    *out = emu_obj_tree(o);
    emu_obj_unref(o);
    return *out ? KUBE_OK : KUBE_ENOMEM;
}

int emu_store_each(emu_server *s, emu_resource *r, const char *ns,
                   int (*fn)(void *ctx, const cJSON *obj), void *ctx)
{
    emu_list_query q = {.ns = ns};
    emu_list_result res;
    int rc = emu_store_list(s->store, r, &q, &res);

    for (size_t i = 0; rc == KUBE_OK && i < res.n; i++) {
        cJSON *t = emu_obj_tree(res.items[i]);
        rc = t ? fn(ctx, t) : KUBE_ENOMEM;
        cJSON_Delete(t);
    }
    emu_list_result_free(&res);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Update and patch                                                    */
/* ------------------------------------------------------------------ */

typedef struct update_ctx {
    emu_resource *r;
    const char *ns;
    const char *name;
    int status_only;
    cJSON *body;            /* PUT: the new object (owned) */
    const emu_request *req; /* PATCH: body and content type */
} update_ctx;

static void copy_meta_field(cJSON *meta, const cJSON *old_meta, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(old_meta, key);

    cJSON_DeleteItemFromObjectCaseSensitive(meta, key);
    if (v)
        cJSON_AddItemToObject(meta, key, cJSON_Duplicate(v, 1));
}

/* 1 if a and b differ outside metadata and status. */
static int spec_changed(const cJSON *a, const cJSON *b)
{
    cJSON *x = cJSON_Duplicate(a, 1), *y = cJSON_Duplicate(b, 1);
    int changed;

    cJSON_DeleteItemFromObjectCaseSensitive(x, "metadata");
    cJSON_DeleteItemFromObjectCaseSensitive(y, "metadata");
    cJSON_DeleteItemFromObjectCaseSensitive(x, "status");
    cJSON_DeleteItemFromObjectCaseSensitive(y, "status");
    changed = !emu_json_equal(x, y);
    cJSON_Delete(x);
    cJSON_Delete(y);
    return changed;
}

static int status_only_result(const cJSON *old, cJSON **obj)
{
    cJSON *result = cJSON_Duplicate(old, 1);
    cJSON *status = cJSON_DetachItemFromObjectCaseSensitive(*obj, "status");

    if (!result) {
        cJSON_Delete(status);
        return KUBE_ENOMEM;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(result, "status");
    if (status)
        cJSON_AddItemToObject(result, "status", status);
    cJSON_Delete(*obj);
    *obj = result;
    return KUBE_OK;
}

/* Turns obj (a PUT body or a patched copy) into the next version of old. */
static int finish_update(update_ctx *u, const cJSON *old, cJSON **obj, cJSON **st)
{
    emu_resource *r = u->r;
    const char *old_rv = emu_json_str(old, "metadata.resourceVersion");
    const char *rv = emu_json_str(*obj, "metadata.resourceVersion");
    const char *old_uid = emu_json_str(old, "metadata.uid");
    const char *uid = emu_json_str(*obj, "metadata.uid");
    const char *name = emu_json_str(*obj, "metadata.name");
    const cJSON *old_meta = cJSON_GetObjectItemCaseSensitive(old, "metadata");
    cJSON *meta;
    int rc;

    if (!cJSON_IsObject(*obj))
        return emu_fail(st, 400, "BadRequest", NULL, "the patched object is not an object");
    if (rv && *rv && old_rv && strcmp(rv, old_rv))
        return conflict_modified(st, r, u->name);
    if (uid && *uid && old_uid && strcmp(uid, old_uid))
        return precondition_failed(st, r, u->ns, u->name, "UID", uid, old_uid);
    if (!name || strcmp(name, u->name)) {
        emu_ferrs errs = {0};
        emu_ferr_add(&errs, "FieldValueInvalid", "metadata.name",
                     "Invalid value: \"%s\": field is immutable", name ? name : "");
        return emu_invalid(st, r, u->name, &errs);
    }
    if (u->status_only && status_only_result(old, obj) != KUBE_OK)
        return emu_fail(st, 500, "InternalError", NULL, "out of memory");
    rc = check_type(r, r->def->kind, *obj, st);
    if (rc != KUBE_OK)
        return rc;
    meta = emu_json_obj(*obj, "metadata");
    if (r->def->namespaced)
        emu_json_put_str(meta, "namespace", u->ns);
    static const char *const kept[] = {"uid", "creationTimestamp", "deletionTimestamp",
                                       "deletionGracePeriodSeconds", "generation"};
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
        copy_meta_field(meta, old_meta, kept[i]);
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "managedFields");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "selfLink");
    if (!u->status_only && r->def->has_status) {
        const cJSON *old_status = cJSON_GetObjectItemCaseSensitive(old, "status");
        cJSON_DeleteItemFromObjectCaseSensitive(*obj, "status");
        if (old_status)
            cJSON_AddItemToObject(*obj, "status", cJSON_Duplicate(old_status, 1));
    }
    if (r->ops && r->ops->on_update) {
        rc = r->ops->on_update(r, old, *obj, u->status_only, st);
        if (rc != KUBE_OK)
            return rc;
    }
    rc = emu_validate_meta(r, *obj, st);
    if (rc != KUBE_OK)
        return rc;
    if (r->ops && r->ops->generation && spec_changed(old, *obj)) {
        double g = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(meta, "generation"));
        emu_json_put(meta, "generation", cJSON_CreateNumber((g != g ? 0 : g) + 1));
    }
    emu_normalize(r, *obj);
    return KUBE_OK;
}

static int has_finalizers(const cJSON *obj);

static int update_fn(void *ctx, cJSON *cur, int64_t rv, cJSON **next, int *del, int *again,
                     cJSON **st)
{
    update_ctx *u = ctx;
    cJSON *obj;
    int rc;

    (void)rv;
    (void)again;
    if (!cur)
        return not_found(st, u->r, u->name);
    if (u->req) {
        obj = cJSON_Duplicate(cur, 1);
        rc = obj ? emu_patch_apply(&obj, emu_header_get(u->req, "Content-Type"), u->req->body,
                                   u->req->body_len, u->r, st)
                 : KUBE_ENOMEM;
    } else {
        obj = u->body;
        u->body = NULL;
        rc = obj ? KUBE_OK : KUBE_EINVAL;
    }
    if (rc == KUBE_OK)
        rc = finish_update(u, cur, &obj, st);
    cJSON_Delete(cur);
    if (rc != KUBE_OK) {
        cJSON_Delete(obj);
        return rc;
    }
    /* the last finalizer of an object being deleted is gone: delete it */
    if (emu_json_at(obj, "metadata.deletionTimestamp") && !has_finalizers(obj) &&
        !u->r->def->virtual_create && u->r != g_namespaces)
        *del = 1;
    *next = obj;
    return KUBE_OK;
}

static int check_put_body(const emu_request *req, emu_resource *r, cJSON *obj, cJSON **st)
{
    const char *name = emu_json_str(obj, "metadata.name");
    const char *ns = emu_json_str(obj, "metadata.namespace");

    if (!name || strcmp(name, req->attrs.name))
        return emu_fail(st, 400, "BadRequest", NULL,
                        "the name of the object (%s) does not match the name on the URL (%s)",
                        name ? name : "", req->attrs.name);
    if (r->def->namespaced && ns && *ns && strcmp(ns, req->attrs.namespace_))
        return emu_fail(st, 400, "BadRequest", NULL,
                        "the namespace of the provided object does not match the namespace sent "
                        "on the request");
    return KUBE_OK;
}

static int handle_update(emu_server *s, emu_request *req, emu_resource *r, int status_only,
                         int patch, emu_response *resp)
{
    update_ctx u = {r,    req->attrs.namespace_, req->attrs.name, status_only,
                    NULL, patch ? req : NULL};
    cJSON *st = NULL;
    emu_obj *o = NULL;
    int rc = KUBE_OK;

    if (!patch) {
        rc = emu_decode_body(req, r->def->kind, &u.body, &st);
        if (rc == KUBE_OK)
            rc = check_put_body(req, r, u.body, &st);
    } else {
        rc = emu_patch_check_type(emu_header_get(req, "Content-Type"), r, &st);
    }
    if (rc == KUBE_OK)
        rc = emu_store_write(s->store, r, u.ns, u.name, update_fn, &u, &o, &st);
    if (rc == KUBE_OK)
        emu_events_mirror(s, r, u.ns, u.name);
    cJSON_Delete(u.body);
    if (rc != KUBE_OK)
        return answer_status(resp, st), 1;
    answer_obj(resp, 200, o);
    emu_obj_unref(o);
    return 1;
}

/* ------------------------------------------------------------------ */
/* Delete                                                              */
/* ------------------------------------------------------------------ */

typedef struct delete_ctx {
    emu_resource *r;
    const char *ns;
    const char *name;
    char *uid;     /* precondition or NULL */
    char *rv;      /* precondition or NULL */
    int64_t grace; /* -1: unset */
    int steps;
    int pending; /* finalizers keep the object */
} delete_ctx;

static int is_pod(const emu_resource *r)
{
    return r == g_pods;
}

static int is_namespace(const emu_resource *r)
{
    return r == g_namespaces;
}

static int has_finalizers(const cJSON *obj)
{
    return cJSON_GetArraySize(emu_json_at(obj, "metadata.finalizers")) > 0;
}

static int mark_deleting(delete_ctx *d, cJSON *cur)
{
    cJSON *meta = emu_json_obj(cur, "metadata");
    int64_t grace = d->grace;
    char ts[40];

    if (is_pod(d->r)) {
        const cJSON *tg = emu_json_at(cur, "spec.terminationGracePeriodSeconds");
        if (grace < 0)
            grace = cJSON_IsNumber(tg) ? (int64_t)tg->valuedouble : 30;
        if (!emu_json_str(cur, "spec.nodeName") || !*emu_json_str(cur, "spec.nodeName"))
            grace = 0; /* never scheduled: nothing to stop */
    } else {
        grace = 0;
    }
    kube_time_rfc3339_after(ts, sizeof(ts), grace); /* as kube: now + the grace */
    emu_json_put_str(meta, "deletionTimestamp", ts);
    emu_json_put(meta, "deletionGracePeriodSeconds", cJSON_CreateNumber((double)grace));
    if (is_namespace(d->r))
        emu_json_put_str(emu_json_obj(cur, "status"), "phase", "Terminating");
    emu_normalize(d->r, cur);
    return KUBE_OK;
}

static int delete_fn(void *ctx, cJSON *cur, int64_t rv, cJSON **next, int *del, int *again,
                     cJSON **st)
{
    delete_ctx *d = ctx;
    const char *uid = emu_json_str(cur, "metadata.uid");
    const char *cur_rv = emu_json_str(cur, "metadata.resourceVersion");
    int graceful = is_pod(d->r) || is_namespace(d->r);

    (void)rv;
    if (!cur)
        return not_found(st, d->r, d->name);
    if (d->steps++ == 0) {
        int rc = KUBE_OK;
        if (d->uid && uid && strcmp(d->uid, uid))
            rc = precondition_failed(st, d->r, d->ns, d->name, "UID", d->uid, uid);
        else if (d->rv && cur_rv && strcmp(d->rv, cur_rv))
            rc = precondition_failed(st, d->r, d->ns, d->name, "ResourceVersion", d->rv, cur_rv);
        if (rc != KUBE_OK) {
            cJSON_Delete(cur);
            return rc;
        }
        if (has_finalizers(cur)) {
            /* deletion waits until the finalizers are removed */
            d->pending = 1;
            if (!emu_json_at(cur, "metadata.deletionTimestamp"))
                mark_deleting(d, cur);
            *next = cur;
            return KUBE_OK;
        }
        if (graceful && !emu_json_at(cur, "metadata.deletionTimestamp")) {
            mark_deleting(d, cur);
            *next = cur;
            *again = is_pod(d->r); /* the emulator plays the kubelet */
            return KUBE_OK;
        }
    }
    *del = 1;
    *next = cur;
    return KUBE_OK;
}

/* Takes gracePeriodSeconds and the preconditions of a DeleteOptions
 * (opts may be NULL). */
static void apply_delete_options(delete_ctx *d, const cJSON *opts)
{
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(opts, "gracePeriodSeconds");

    if (cJSON_IsNumber(g))
        d->grace = (int64_t)g->valuedouble;
    if (d->grace < -1)
        d->grace = 0;
    d->uid = kube_strdup(emu_json_str(opts, "preconditions.uid"));
    d->rv = kube_strdup(emu_json_str(opts, "preconditions.resourceVersion"));
}

static int read_delete_options(const emu_request *req, delete_ctx *d, cJSON **st)
{
    char *grace = emu_query_get(req, "gracePeriodSeconds");
    cJSON *opts = NULL;
    char err[256];
    int64_t g;
    int rc = KUBE_OK;

    d->grace = -1;
    if (grace && kube_parse_int64(grace, INT64_MIN, INT64_MAX, &g) == KUBE_OK)
        d->grace = g < 0 ? 0 : g;
    free(grace);
    if (req->body_len == 0)
        return KUBE_OK;
    if (emu_pb_is_protobuf(emu_header_get(req, "Content-Type")))
        rc = emu_pb_decode(req, "DeleteOptions", &opts, st);
    else if (emu_json_parse(req->body, req->body_len, &opts, err, sizeof(err)) != KUBE_OK)
        return emu_fail(st, 400, "BadRequest", NULL,
                        "the object provided is unrecognized (must be of type DeleteOptions): "
                        "couldn't get version/kind; json parse error: %s",
                        err);
    if (rc != KUBE_OK)
        return rc;
    apply_delete_options(d, opts);
    cJSON_Delete(opts);
    return rc;
}

static int delete_object(emu_server *s, emu_resource *r, const char *ns, const char *name,
                         delete_ctx *d, emu_obj **out, cJSON **st);

/* Deletes everything in namespace ns (the namespace controller's job). */
static void empty_namespace(emu_server *s, const char *ns)
{
    for (size_t i = 0; i < emu_store_n_resources(s->store); i++) {
        emu_resource *r = emu_store_resource_at(s->store, i);
        emu_list_query q = {.ns = ns};
        emu_list_result res;
        if (!r->def->namespaced || r->def->virtual_create ||
            emu_store_list(s->store, r, &q, &res) != KUBE_OK)
            continue;
        for (size_t j = 0; j < res.n; j++) {
            delete_ctx d = {.r = r, .ns = ns, .name = res.items[j]->name, .grace = 0};
            emu_obj *o = NULL;
            cJSON *st = NULL;
            delete_object(s, r, ns, res.items[j]->name, &d, &o, &st);
            emu_obj_unref(o);
            cJSON_Delete(st);
        }
        emu_list_result_free(&res);
    }
}

static int delete_object(emu_server *s, emu_resource *r, const char *ns, const char *name,
                         delete_ctx *d, emu_obj **out, cJSON **st)
{
    int rc = emu_store_write(s->store, r, ns, name, delete_fn, d, out, st);

    if (rc == KUBE_OK)
        emu_events_mirror(s, r, ns, name);

    if (rc == KUBE_OK && is_namespace(r)) {
        emu_obj *gone = NULL;
        delete_ctx fin = {.r = r, .name = name, .grace = 0, .steps = 1};
        empty_namespace(s, name);
        emu_store_write(s->store, r, NULL, name, delete_fn, &fin, &gone, st);
        emu_obj_unref(gone);
    }
    return rc;
}

int emu_object_delete(emu_server *s, emu_resource *r, const char *ns, const char *name,
                      const cJSON *opts, cJSON **st)
{
    delete_ctx d = {.r = r, .ns = ns, .name = name, .grace = -1};
    emu_obj *o = NULL;
    int rc;

    apply_delete_options(&d, opts);
    rc = delete_object(s, r, ns, name, &d, &o, st);
    emu_obj_unref(o);
    free(d.uid);
    free(d.rv);
    return rc;
}

static int answer_deleted(emu_response *resp, const emu_resource *r, const emu_obj *o, int pending)
{
    cJSON *st, *details;
    int rc;

    if (is_pod(r) || is_namespace(r) || pending)
        return answer_obj(resp, 200, o);
    details = emu_details(o->name, r->def->group, r->def->plural);
    cJSON_AddStringToObject(details, "uid", o->uid);
    st = emu_status_new(200, NULL, NULL, details);
    cJSON_DeleteItemFromObjectCaseSensitive(st, "code"); /* a deleted object's Status has none */
    rc = emu_response_json(resp, 200, st);
    cJSON_Delete(st);
    return rc;
}

static int protected_namespace(const char *name)
{
    return !strcmp(name, "default") || !strcmp(name, "kube-system") || !strcmp(name, "kube-public");
}

static int handle_delete(emu_server *s, emu_request *req, emu_resource *r, emu_response *resp)
{
    delete_ctx d = {.r = r, .ns = req->attrs.namespace_, .name = req->attrs.name, .grace = -1};
    cJSON *st = NULL;
    emu_obj *o = NULL;
    int rc;

    if (is_namespace(r) && protected_namespace(d.name)) {
        emu_fail(&st, 403, "Forbidden", emu_details(d.name, "", "namespaces"),
                 "namespaces \"%s\" is forbidden: this namespace may not be deleted", d.name);
        return answer_status(resp, st), 1;
    }
    rc = read_delete_options(req, &d, &st);
    if (rc == KUBE_OK)
        rc = delete_object(s, r, d.ns, d.name, &d, &o, &st);
    free(d.uid);
    free(d.rv);
    if (rc != KUBE_OK)
        return answer_status(resp, st), 1;
    answer_deleted(resp, r, o, d.pending);
    emu_obj_unref(o);
    return 1;
}

static int handle_delete_collection(emu_server *s, emu_request *req, emu_resource *r,
                                    emu_response *resp)
{
    emu_selector labels = {0}, fields = {0};
    char err[256], *ls = emu_query_get(req, "labelSelector"),
                   *fs = emu_query_get(req, "fieldSelector");
    emu_list_query q = {.ns = r->def->namespaced ? req->attrs.namespace_ : NULL};
    emu_list_result res = {0};
    kube_buf body = KUBE_BUF_INIT;
    char gv[128];
    int rc = emu_label_selector_parse(ls, &labels, err, sizeof(err));

    if (rc == KUBE_OK)
        rc = emu_field_selector_parse(fs, r->fields, &fields, err, sizeof(err));
    free(ls);
    free(fs);
    if (rc != KUBE_OK) {
        emu_response_status(resp, 400, "BadRequest", err, NULL);
        emu_selector_free(&labels);
        return 1;
    }
    q.labels = &labels;
    q.fields = &fields;
    rc = emu_store_list(s->store, r, &q, &res);
    group_version(r, gv, sizeof(gv));
    kube_buf_printf(&body,
                    "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\""
                    ":\"%lld\"},\"items\":[",
                    r->def->list_kind, gv, (long long)res.rv);
    for (size_t i = 0; rc == KUBE_OK && i < res.n; i++) {
        delete_ctx d = {.r = r, .ns = res.items[i]->ns, .name = res.items[i]->name, .grace = -1};
        emu_obj *o = NULL;
        cJSON *st = NULL;
        if (delete_object(s, r, d.ns, d.name, &d, &o, &st) == KUBE_OK)
            kube_buf_printf(&body, "%s%s", body.data[body.len - 1] == '[' ? "" : ",", o->json);
        emu_obj_unref(o);
        cJSON_Delete(st);
    }
    kube_buf_puts(&body, "]}");
    emu_response_raw(resp, 200, "application/json", body.data, body.len);
    kube_buf_free(&body);
    emu_list_result_free(&res);
    emu_selector_free(&labels);
    emu_selector_free(&fields);
    return 1;
}

/* ------------------------------------------------------------------ */
/* pods/binding                                                        */
/* ------------------------------------------------------------------ */

typedef struct binding_ctx {
    const char *ns;
    const char *name;
    const char *node;
    const char *uid;
    const char *rv;
    const cJSON *annotations;
} binding_ctx;

static void set_scheduled(cJSON *pod)
{
    cJSON *status = emu_json_obj(pod, "status");
    cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions"), *c, *found = NULL;
    char now[40];

    if (!cJSON_IsArray(conds)) {
        conds = cJSON_CreateArray();
        emu_json_put(status, "conditions", conds);
    }
    cJSON_ArrayForEach(c, conds)
    {
        const char *t = emu_json_str(c, "type");
        if (t && !strcmp(t, "PodScheduled"))
            found = c;
    }
    if (found) {
        const char *st = emu_json_str(found, "status");
        if (st && !strcmp(st, "True"))
            return;
    }
    kube_time_rfc3339(now, sizeof(now));
    c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "type", "PodScheduled");
    cJSON_AddStringToObject(c, "status", "True");
    cJSON_AddNullToObject(c, "lastProbeTime");
    cJSON_AddStringToObject(c, "lastTransitionTime", now);
    if (found)
        cJSON_ReplaceItemViaPointer(conds, found, c);
    else
        cJSON_AddItemToArray(conds, c);
}

static int binding_fn(void *ctx, cJSON *cur, int64_t rv, cJSON **next, int *del, int *again,
                      cJSON **st)
{
    binding_ctx *b = ctx;
    const char *uid = emu_json_str(cur, "metadata.uid");
    const char *cur_rv = emu_json_str(cur, "metadata.resourceVersion");
    const char *node = emu_json_str(cur, "spec.nodeName");
    const cJSON *a;
    int rc = KUBE_OK;

    (void)rv;
    (void)del;
    (void)again;
    if (!cur)
        return not_found(st, g_pods, b->name);
    if (b->uid && *b->uid && uid && strcmp(b->uid, uid))
        rc = precondition_failed(st, g_pods, b->ns, b->name, "UID", b->uid, uid);
    else if (b->rv && *b->rv && cur_rv && strcmp(b->rv, cur_rv))
        rc = precondition_failed(st, g_pods, b->ns, b->name, "ResourceVersion", b->rv, cur_rv);
    else if (emu_json_at(cur, "metadata.deletionTimestamp"))
        rc = emu_fail(st, 409, "Conflict", emu_details(b->name, "", "pods/binding"),
                      "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is being "
                      "deleted, cannot be assigned to a host",
                      b->name, b->name);
    else if (node && *node)
        rc = emu_fail(st, 409, "Conflict", emu_details(b->name, "", "pods/binding"),
                      "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is already "
                      "assigned to node \"%s\"",
                      b->name, b->name, node);
    if (rc != KUBE_OK) {
        cJSON_Delete(cur);
        return rc;
    }
    emu_json_put_str(emu_json_obj(cur, "spec"), "nodeName", b->node);
    cJSON_ArrayForEach(a, b->annotations)
    {
        if (cJSON_IsString(a))
            emu_json_put_str(emu_json_obj(emu_json_obj(cur, "metadata"), "annotations"), a->string,
                             a->valuestring);
    }
    set_scheduled(cur);
    emu_normalize(g_pods, cur);
    *next = cur;
    return KUBE_OK;
}

static int validate_binding(const emu_request *req, const cJSON *b, cJSON **st)
{
    const char *name = emu_json_str(b, "metadata.name");
    const char *ns = emu_json_str(b, "metadata.namespace");
    const char *kind = emu_json_str(b, "target.kind");
    const char *target = emu_json_str(b, "target.name");

    if (!name || strcmp(name, req->attrs.name))
        return emu_fail(st, 400, "BadRequest", NULL,
                        "name in URL does not match name in Binding object");
    if (ns && *ns && strcmp(ns, req->attrs.namespace_))
        return emu_fail(st, 400, "BadRequest", NULL,
                        "the namespace of the provided object does not match the namespace sent "
                        "on the request");
    if (kind && *kind && strcmp(kind, "Node"))
        return emu_fail(st, 500, "", NULL,
                        "target.kind: Unsupported value: \"%s\": supported values: \"Node\", "
                        "\"<empty>\"",
                        kind);
    if (!target || !*target)
        return emu_fail(st, 500, "", NULL, "target.name: Required value");
    return KUBE_OK;
}

static int handle_binding(emu_server *s, emu_request *req, emu_response *resp)
{
    cJSON *body = NULL, *st = NULL;
    emu_obj *o = NULL;
    binding_ctx b = {req->attrs.namespace_, req->attrs.name, NULL, NULL, NULL, NULL};
    int rc = emu_decode_body(req, "Binding", &body, &st);

    if (rc == KUBE_OK)
        rc = check_type(g_pods, "Binding", body, &st);
    if (rc == KUBE_OK)
        rc = validate_binding(req, body, &st);
    if (rc == KUBE_OK) {
        b.node = emu_json_str(body, "target.name");
        b.uid = emu_json_str(body, "metadata.uid");
        b.rv = emu_json_str(body, "metadata.resourceVersion");
        b.annotations = emu_json_at(body, "metadata.annotations");
        rc = emu_store_write(s->store, g_pods, b.ns, b.name, binding_fn, &b, &o, &st);
    }
    cJSON_Delete(body);
    emu_obj_unref(o);
    if (rc != KUBE_OK)
        return answer_status(resp, st), 1;
    st = emu_status_new(201, NULL, NULL, NULL);
    return answer_status(resp, st), 1;
}

/* ------------------------------------------------------------------ */
/* Routing                                                             */
/* ------------------------------------------------------------------ */

static int handle_get(emu_server *s, emu_request *req, emu_resource *r, emu_response *resp)
{
    emu_obj *o = emu_store_lookup(s->store, r, req->attrs.namespace_, req->attrs.name);
    cJSON *st = NULL;

    if (!o) {
        not_found(&st, r, req->attrs.name);
        return answer_status(resp, st), 1;
    }
    emu_table_or_obj(resp, req, r, o);
    emu_obj_unref(o);
    return 1;
}

/* The canonical path for the attributes, to reject paths with extra or
 * misplaced segments. */
static int path_is_canonical(const emu_request *req, const emu_resource *r)
{
    const emu_attrs *a = &req->attrs;
    kube_buf b = KUBE_BUF_INIT;
    int ok;

    kube_buf_printf(&b, "/%s%s%s/%s", a->api_prefix, *a->api_group ? "/" : "", a->api_group,
                    a->api_version);
    if (!strcmp(a->verb, "watch") && strstr(req->path, "/watch/"))
        kube_buf_puts(&b, "/watch");
    if (r->def->namespaced && *a->namespace_)
        kube_buf_printf(&b, "/namespaces/%s", a->namespace_);
    kube_buf_printf(&b, "/%s", a->resource);
    if (*a->name)
        kube_buf_printf(&b, "/%s", a->name);
    if (*a->subresource)
        kube_buf_printf(&b, "/%s", a->subresource);
    ok = b.data && (!strcmp(b.data, req->path) ||
                    (b.len + 1 == strlen(req->path) && !strncmp(b.data, req->path, b.len) &&
                     req->path[b.len] == '/'));
    kube_buf_free(&b);
    return ok;
}

static int handle_subresource(emu_server *s, emu_request *req, emu_resource *r, emu_response *resp)
{
    const char *m = req->method, *sub = req->attrs.subresource;

    if (!strcmp(sub, "status") && r->def->has_status) {
        if (!strcmp(m, "GET"))
            return handle_get(s, req, r, resp);
        if (!strcmp(m, "PUT"))
            return handle_update(s, req, r, 1, 0, resp);
        if (!strcmp(m, "PATCH"))
            return handle_update(s, req, r, 1, 1, resp);
        return method_not_allowed(resp), 1;
    }
    if (!strcmp(sub, "binding") && is_pod(r)) {
        if (!strcmp(m, "POST"))
            return handle_binding(s, req, resp);
        return method_not_allowed(resp), 1;
    }
    if (!strcmp(sub, "eviction") && is_pod(r)) {
        if (!strcmp(m, "POST"))
            return emu_eviction_handle(s, req, resp);
        return method_not_allowed(resp), 1;
    }
    emu_response_text(resp, 404, "404 page not found\n");
    return 1;
}

static int handle_collection(emu_server *s, emu_request *req, emu_resource *r, emu_response *resp)
{
    const char *m = req->method;
    int has_ns = *req->attrs.namespace_ != 0;

    if (r->def->virtual_create)
        return strcmp(m, "POST") ? (method_not_allowed(resp), 1) : handle_create(s, req, r, resp);
    if (!strcmp(m, "GET") || !strcmp(m, "HEAD")) {
        if (!strcmp(req->attrs.verb, "watch"))
            return emu_watch_handle(s, req, r, resp), 1;
        return emu_list_handle(s, req, r, resp), 1;
    }
    if (r->def->namespaced && !has_ns)
        return method_not_allowed(resp), 1;
    if (!strcmp(m, "POST"))
        return handle_create(s, req, r, resp);
    if (!strcmp(m, "DELETE") && !r->def->virtual_create)
        return handle_delete_collection(s, req, r, resp);
    return method_not_allowed(resp), 1;
}

static int handle_item(emu_server *s, emu_request *req, emu_resource *r, emu_response *resp)
{
    const char *m = req->method;

    if (r->def->virtual_create)
        return method_not_allowed(resp), 1;
    if (!strcmp(req->attrs.verb, "watch"))
        return emu_watch_handle(s, req, r, resp), 1;
    if (!strcmp(m, "GET") || !strcmp(m, "HEAD"))
        return handle_get(s, req, r, resp);
    if (!strcmp(m, "PUT"))
        return handle_update(s, req, r, 0, 0, resp);
    if (!strcmp(m, "PATCH"))
        return handle_update(s, req, r, 0, 1, resp);
    if (!strcmp(m, "DELETE"))
        return handle_delete(s, req, r, resp);
    return method_not_allowed(resp), 1;
}

int emu_api_handle(emu_server *s, emu_request *req, emu_response *resp)
{
    const emu_attrs *a = &req->attrs;
    emu_resource *r;

    if (!a->is_resource)
        return 0;
    r = emu_store_find(s->store, a->api_group, a->api_version, a->resource);
    if (!r || (!r->def->namespaced && *a->namespace_ && !is_namespace(r)) ||
        (r->def->namespaced && *a->name && !*a->namespace_) || !path_is_canonical(req, r)) {
        emu_response_text(resp, 404, "404 page not found\n");
        return 1;
    }
    if (*a->subresource)
        return handle_subresource(s, req, r, resp);
    if (!*a->name)
        return handle_collection(s, req, r, resp);
    return handle_item(s, req, r, resp);
}
