/*
 * kube/transport/api.c - resource descriptors, REST paths and the typed writes both
 * daemons use: get, create, merge patch (optionally carrying
 * metadata.resourceVersion for optimistic concurrency), JSON patch,
 * strategic-merge patch of pods/status, delete, and the pods/binding
 * subresource. The contract is in api.h.
 */
#include "kube/transport/api.h"
#include "kube/transport/api_testing.h"

#include "kube/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const kube_resource KUBE_RES_PODS = {"", "v1", "pods", "Pod", 1};
const kube_resource KUBE_RES_NODES = {"", "v1", "nodes", "Node", 0};
const kube_resource KUBE_RES_NAMESPACES = {"", "v1", "namespaces", "Namespace", 0};
const kube_resource KUBE_RES_CONFIGMAPS = {"", "v1", "configmaps", "ConfigMap", 1};
const kube_resource KUBE_RES_EVENTS = {"events.k8s.io", "v1", "events", "Event", 1};
const kube_resource KUBE_RES_LEASES = {"coordination.k8s.io", "v1", "leases", "Lease", 1};
const kube_resource KUBE_RES_VMS = {"kubevirt.io", "v1", "virtualmachines", "VirtualMachine", 1};
const kube_resource KUBE_RES_VMIS = {"kubevirt.io", "v1", "virtualmachineinstances",
                                     "VirtualMachineInstance", 1};

#define API_MERGE_PATCH "application/merge-patch+json"
#define API_JSON_PATCH "application/json-patch+json"
#define API_STRATEGIC_PATCH "application/strategic-merge-patch+json"
#define API_JSON "application/json"

int kube_path(kube_buf *out, const kube_resource *r, const char *ns, const char *name,
              const char *subresource)
{
    int rc;

    if (r->group[0])
        rc = kube_buf_printf(out, "/apis/%s/%s", r->group, r->version);
    else
        rc = kube_buf_printf(out, "/api/%s", r->version);
    if (rc == KUBE_OK && r->namespaced && ns && *ns) {
        rc = kube_buf_puts(out, "/namespaces/");
        if (rc == KUBE_OK)
            rc = kube_buf_put_escaped(out, ns);
    }
    if (rc == KUBE_OK)
        rc = kube_buf_printf(out, "/%s", r->plural);
    if (rc == KUBE_OK && name) {
        rc = kube_buf_puts(out, "/");
        if (rc == KUBE_OK)
            rc = kube_buf_put_escaped(out, name);
    }
    if (rc == KUBE_OK && name && subresource)
        rc = kube_buf_printf(out, "/%s", subresource);
    return rc;
}

/* Rejects bad arguments, leaving a Status that says so. */
static int api_invalid(kube_status *st, const char *what)
{
    if (st) {
        memset(st, 0, sizeof(*st));
        snprintf(st->message, sizeof(st->message), "invalid argument: %s", what);
    }
    return KUBE_EINVAL;
}

/* An object path needs a name, and a namespace for namespaced kinds. */
static int api_object_path(kube_buf *out, const kube_resource *r, const char *ns, const char *name,
                           const char *subresource)
{
    if (!r || !name || !*name || (r->namespaced && (!ns || !*ns)))
        return KUBE_EINVAL;
    return kube_path(out, r, ns, name, subresource);
}

static void api_copy_status(kube_status *st, const kube_response *resp, int rc)
{
    if (!st)
        return;
    if (rc == KUBE_OK) {
        memset(st, 0, sizeof(*st));
        st->code = (int)resp->code;
    } else {
        *st = resp->status;
    }
}

/* Sends one request and parses the answer into *out (when out is
 * non-NULL). A 2xx answer that is not JSON is KUBE_EPARSE. */
static int api_call(kube_client *c, const char *method, const char *path, const char *content_type,
                    const cJSON *body, cJSON **out, kube_status *st)
{
    kube_response resp = {0};
    char *text = NULL;
    int rc;

    if (out)
        *out = NULL;
    if (body && !(text = cJSON_PrintUnformatted(body))) {
        if (st) {
            memset(st, 0, sizeof(*st));
            kube_strlcpy(st->message, "cannot serialise the request body", sizeof(st->message));
        }
        return KUBE_ENOMEM;
    }
    rc = kube_client_do(c, method, path, text ? content_type : NULL, text, text ? strlen(text) : 0,
                        &resp);
    free(text);
    if (rc == KUBE_OK && out) {
        *out = cJSON_ParseWithLength(resp.body, resp.len);
        if (!*out) {
            rc = KUBE_EPARSE;
            snprintf(resp.status.message, sizeof(resp.status.message),
                     "%s %s: the answer (HTTP %ld) is not JSON", method, path, resp.code);
        }
    }
    if (rc == KUBE_EPARSE && st) {
        *st = resp.status;
        st->code = (int)resp.code;
    } else {
        api_copy_status(st, &resp, rc);
    }
    kube_response_clear(&resp);
    return rc;
}

/* Builds the path then calls; the shared body of the typed functions. */
static int api_object_call(kube_client *c, const char *method, const kube_resource *r,
                           const char *ns, const char *name, const char *subresource,
                           const char *content_type, const cJSON *body, cJSON **out,
                           kube_status *st)
{
    kube_buf path = KUBE_BUF_INIT;
    int rc = api_object_path(&path, r, ns, name, subresource);

    if (out)
        *out = NULL;
    if (rc == KUBE_OK)
        rc = api_call(c, method, path.data, content_type, body, out, st);
    else if (rc == KUBE_EINVAL)
        api_invalid(st, "resource, name and (for namespaced kinds) namespace are required");
    kube_buf_free(&path);
    return rc;
}

int kube_api_get(kube_client *c, const kube_resource *r, const char *ns, const char *name,
                 cJSON **out, kube_status *st)
{
    if (!out)
        return api_invalid(st, "out is NULL");
    return api_object_call(c, "GET", r, ns, name, NULL, NULL, NULL, out, st);
}

int kube_api_create(kube_client *c, const kube_resource *r, const char *ns, const cJSON *body,
                    cJSON **out, kube_status *st)
{
    kube_buf path = KUBE_BUF_INIT;
    int rc;

    if (out)
        *out = NULL;
    if (!r || !cJSON_IsObject(body) || (r->namespaced && (!ns || !*ns)))
        return api_invalid(st, "resource, an object body and (for namespaced kinds) "
                               "namespace are required");
    rc = kube_path(&path, r, ns, NULL, NULL);
    if (rc == KUBE_OK)
        rc = api_call(c, "POST", path.data, API_JSON, body, out, st);
    kube_buf_free(&path);
    return rc;
}

/* A write of body (an object when want_object, else an array; otherwise
 * KUBE_EINVAL with why in st) to the named object. */
static int api_write(kube_client *c, const char *method, const kube_resource *r, const char *ns,
                     const char *name, const char *ctype, const cJSON *body, int want_object,
                     const char *why, cJSON **out, kube_status *st)
{
    if (out)
        *out = NULL;
    if (want_object ? !cJSON_IsObject(body) : !cJSON_IsArray(body))
        return api_invalid(st, why);
    return api_object_call(c, method, r, ns, name, NULL, ctype, body, out, st);
}

int kube_api_update(kube_client *c, const kube_resource *r, const char *ns, const char *name,
                    const cJSON *body, cJSON **out, kube_status *st)
{
    return api_write(c, "PUT", r, ns, name, API_JSON, body, 1, "the body must be a JSON object",
                     out, st);
}

int kube_api_merge_patch(kube_client *c, const kube_resource *r, const char *ns, const char *name,
                         const cJSON *patch, cJSON **out, kube_status *st)
{
    return api_write(c, "PATCH", r, ns, name, API_MERGE_PATCH, patch, 1,
                     "a merge patch must be a JSON object", out, st);
}

int kube_api_json_patch(kube_client *c, const kube_resource *r, const char *ns, const char *name,
                        const cJSON *patch, cJSON **out, kube_status *st)
{
    return api_write(c, "PATCH", r, ns, name, API_JSON_PATCH, patch, 0,
                     "a JSON patch must be a JSON array", out, st);
}

/* {"metadata":{"annotations":{key:value|null,...},"resourceVersion":rv}} */
cJSON *kube_api_annotations_patch_new(const kube_kv *kv, size_t n, const char *rv)
{
    cJSON *patch = cJSON_CreateObject();
    cJSON *meta = cJSON_AddObjectToObject(patch, "metadata");
    int ok = meta && (!rv || cJSON_AddStringToObject(meta, "resourceVersion", rv));
    cJSON *ann = ok ? cJSON_AddObjectToObject(meta, "annotations") : NULL;

    ok = ann != NULL;
    for (size_t i = 0; ok && i < n; i++)
        ok = kv[i].key && *kv[i].key &&
             (kv[i].value ? cJSON_AddStringToObject(ann, kv[i].key, kv[i].value)
                          : cJSON_AddNullToObject(ann, kv[i].key)) != NULL;
    if (!ok) {
        cJSON_Delete(patch);
        return NULL;
    }
    return patch;
}

cJSON *kube_api_annotation_patch_new(const char *key, const char *value, const char *rv)
{
    kube_kv kv = {key, value};
    return kube_api_annotations_patch_new(&kv, 1, rv);
}

int kube_api_set_annotations(kube_client *c, const kube_resource *r, const char *ns,
                             const char *name, const kube_kv *kv, size_t n,
                             const char *resource_version, cJSON **out, kube_status *st)
{
    cJSON *patch;
    int rc;

    if (out)
        *out = NULL;
    for (size_t i = 0; i < n; i++)
        if (!kv[i].key || !*kv[i].key)
            return api_invalid(st, "annotation key is empty");
    if (n == 0)
        return api_invalid(st, "no annotation to set");
    patch = kube_api_annotations_patch_new(kv, n, resource_version);
    if (!patch)
        return KUBE_ENOMEM;
    rc = kube_api_merge_patch(c, r, ns, name, patch, out, st);
    cJSON_Delete(patch);
    return rc;
}

int kube_api_set_annotation(kube_client *c, const kube_resource *r, const char *ns,
                            const char *name, const char *key, const char *value,
                            const char *resource_version, cJSON **out, kube_status *st)
{
    kube_kv kv = {key, value};

    if (!key || !*key) {
        if (out)
            *out = NULL;
        return api_invalid(st, "annotation key is empty");
    }
    return kube_api_set_annotations(c, r, ns, name, &kv, 1, resource_version, out, st);
}

int kube_api_delete(kube_client *c, const kube_resource *r, const char *ns, const char *name,
                    kube_status *st)
{
    return api_object_call(c, "DELETE", r, ns, name, NULL, NULL, NULL, NULL, st);
}

/* The Binding kube-scheduler posts, field for field. */
int kube_api_binding_body(kube_buf *body, const char *ns, const char *pod, const char *uid,
                          const char *node)
{
    const char *parts[] = {"{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":",
                           pod,
                           ",\"namespace\":",
                           ns,
                           uid && *uid ? ",\"uid\":" : NULL,
                           uid,
                           "},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":",
                           node,
                           "}}"};
    const size_t n = sizeof(parts) / sizeof(parts[0]);
    int rc = KUBE_OK;

    for (size_t i = 0; rc == KUBE_OK && i < n; i += 2) {
        if (!parts[i])
            continue;
        rc = kube_buf_puts(body, parts[i]);
        if (rc == KUBE_OK && i + 1 < n)
            rc = kube_buf_put_json_string(body, parts[i + 1]);
    }
    return rc;
}

/* The pods/binding request: its path and its Binding. */
static int api_binding_request(kube_buf *path, kube_buf *body, const char *ns, const char *pod,
                               const char *uid, const char *node)
{
    int rc = api_object_path(path, &KUBE_RES_PODS, ns, pod, "binding");
    return rc == KUBE_OK ? kube_api_binding_body(body, ns, pod, uid, node) : rc;
}

int kube_api_bind(kube_client *c, const char *ns, const char *pod, const char *uid,
                  const char *node, kube_status *st)
{
    kube_buf path = KUBE_BUF_INIT, body = KUBE_BUF_INIT;
    kube_response resp = {0};
    int rc;

    if (!ns || !*ns || !pod || !*pod || !node || !*node)
        return api_invalid(st, "namespace, pod and node are required");
    rc = api_binding_request(&path, &body, ns, pod, uid, node);
    if (rc == KUBE_OK) {
        rc = kube_client_do(c, "POST", path.data, API_JSON, body.data, body.len, &resp);
        api_copy_status(st, &resp, rc);
    }
    kube_response_clear(&resp);
    kube_buf_free(&path);
    kube_buf_free(&body);
    return rc;
}

/* An asynchronous binding's caller. */
typedef struct api_bind_call {
    kube_api_done_fn done;
    void *ud;
} api_bind_call;

/* kube_client_do_async's done for a binding: the answer as a Status. */
static void api_bind_done(void *ud, int rc, kube_response *resp)
{
    api_bind_call call = *(api_bind_call *)ud;
    kube_status st;

    free(ud);
    api_copy_status(&st, resp, rc);
    call.done(call.ud, rc, &st);
}

int kube_api_bind_async(kube_client *c, const char *ns, const char *pod, const char *uid,
                        const char *node, kube_api_done_fn done, void *ud)
{
    kube_buf path = KUBE_BUF_INIT, body = KUBE_BUF_INIT;
    api_bind_call *call;
    int rc;

    if (!ns || !*ns || !pod || !*pod || !node || !*node || !done)
        return KUBE_EINVAL;
    if (!(call = malloc(sizeof(*call))))
        return KUBE_ENOMEM;
    *call = (api_bind_call){done, ud};
    rc = api_binding_request(&path, &body, ns, pod, uid, node);
    if (rc == KUBE_OK)
        rc = kube_client_do_async(c, "POST", path.data, API_JSON, body.data, body.len,
                                  api_bind_done, call);
    if (rc != KUBE_OK)
        free(call);
    kube_buf_free(&path);
    kube_buf_free(&body);
    return rc;
}

int kube_api_patch_pod_status(kube_client *c, const char *ns, const char *pod, const cJSON *patch,
                              kube_status *st)
{
    if (!cJSON_IsObject(patch))
        return api_invalid(st, "a strategic merge patch must be a JSON object");
    return api_object_call(c, "PATCH", &KUBE_RES_PODS, ns, pod, "status", API_STRATEGIC_PATCH,
                           patch, NULL, st);
}
