/*
 * tests/emulator/patch.c - PATCH bodies: JSON merge patch (RFC 7386), JSON
 * patch (RFC 6902) and strategic merge patch for the built-in types (lists
 * merged by their patchMergeKey, e.g. pod status.conditions by "type";
 * $patch, $retainKeys, $setElementOrder and $deleteFromPrimitiveList
 * directives). Errors answer like kube-apiserver: 400 for a body that is not
 * JSON, 415 for an unsupported patch type, 422 for a JSON patch that does
 * not apply ("the server rejected our request due to an error in our
 * request"). Server-side apply (application/apply-patch+yaml) is refused as
 * a kube-apiserver without the ServerSideApply feature refuses it: 415
 * listing only the patch types above (so kubectl apply --server-side fails
 * cleanly instead of being told the type it sent is accepted).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

/* ------------------------------------------------------------------ */
/* JSON merge patch                                                    */
/* ------------------------------------------------------------------ */

static cJSON *merge_patch(cJSON *target, const cJSON *patch)
{
    const cJSON *p;

    if (!cJSON_IsObject(patch)) {
        cJSON_Delete(target);
        return cJSON_Duplicate(patch, 1);
    }
    if (!cJSON_IsObject(target)) {
        cJSON_Delete(target);
        target = cJSON_CreateObject();
        if (!target)
            return NULL;
    }
    cJSON_ArrayForEach(p, patch)
    {
        cJSON *cur;
        if (cJSON_IsNull(p)) {
            cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
            continue;
        }
        cur = cJSON_DetachItemFromObjectCaseSensitive(target, p->string);
        cur = merge_patch(cur, p);
        if (!cur || emu_json_put(target, p->string, cur) != KUBE_OK) {
            cJSON_Delete(target);
            return NULL;
        }
    }
    return target;
}

/* ------------------------------------------------------------------ */
/* JSON patch                                                          */
/* ------------------------------------------------------------------ */

/* Splits a JSON pointer into unescaped tokens. Returns the count or -1. */
static int pointer_tokens(const char *ptr, char ***out)
{
    char **toks = NULL;
    int n = 0;
    const char *p = ptr;

    *out = NULL;
    if (*p == '\0')
        return 0;
    if (*p != '/')
        return -1;
    while (*p == '/') {
        const char *end = strchr(p + 1, '/');
        size_t len = end ? (size_t)(end - p - 1) : strlen(p + 1);
        char *t = malloc(len + 1), **grow;
        size_t k = 0;
        if (!t)
            goto fail;
        for (size_t i = 0; i < len; i++) {
            const char *c = p + 1 + i;
            if (c[0] == '~' && i + 1 < len && (c[1] == '0' || c[1] == '1')) {
                t[k++] = c[1] == '0' ? '~' : '/';
                i++;
            } else {
                t[k++] = *c;
            }
        }
        t[k] = '\0';
        grow = realloc(toks, (size_t)(n + 1) * sizeof(*toks));
        if (!grow) {
            free(t);
            goto fail;
        }
        toks = grow;
        toks[n++] = t;
        p = end ? end : p + 1 + len;
    }
    *out = toks;
    return n;
fail:
    for (int i = 0; i < n; i++)
        free(toks[i]);
    free(toks);
    return -1;
}

static void free_tokens(char **t, int n)
{
    for (int i = 0; i < n; i++)
        free(t[i]);
    free(t);
}

/* Array index of token t for array a: -1 invalid, len for "-" (append). */
static int array_index(const cJSON *a, const char *t, int for_add)
{
    int64_t v;
    int len = cJSON_GetArraySize(a);

    if (!strcmp(t, "-"))
        return for_add ? len : -1;
    if ((t[0] == '0' && t[1]) || kube_parse_int64(t, 0, 1 << 30, &v) != KUBE_OK)
        return -1;
    if (v > len || (!for_add && v == len))
        return -1;
    return (int)v;
}

/* Walks to the parent container of the pointer's last token. */
static cJSON *walk_parent(cJSON *doc, char **toks, int n)
{
    cJSON *cur = doc;

    for (int i = 0; i < n - 1 && cur; i++) {
        if (cJSON_IsObject(cur)) {
            cur = cJSON_GetObjectItemCaseSensitive(cur, toks[i]);
        } else if (cJSON_IsArray(cur)) {
            int idx = array_index(cur, toks[i], 0);
            cur = idx < 0 ? NULL : cJSON_GetArrayItem(cur, idx);
        } else {
            cur = NULL;
        }
    }
    return cur;
}

static cJSON *jp_get(cJSON *doc, const char *ptr)
{
    char **toks;
    int n = pointer_tokens(ptr, &toks);
    cJSON *parent, *v = NULL;

    if (n < 0)
        return NULL;
    if (n == 0)
        return doc;
    parent = walk_parent(doc, toks, n);
    if (cJSON_IsObject(parent)) {
        v = cJSON_GetObjectItemCaseSensitive(parent, toks[n - 1]);
    } else if (cJSON_IsArray(parent)) {
        int idx = array_index(parent, toks[n - 1], 0);
        v = idx < 0 ? NULL : cJSON_GetArrayItem(parent, idx);
    }
    free_tokens(toks, n);
    return v;
}

/* Removes and returns the value at ptr (NULL if missing). */
static cJSON *jp_detach(cJSON *doc, const char *ptr)
{
    char **toks;
    int n = pointer_tokens(ptr, &toks);
    cJSON *parent, *v = NULL;

    if (n <= 0) {
        free_tokens(toks, n < 0 ? 0 : n);
        return NULL;
    }
    parent = walk_parent(doc, toks, n);
    if (cJSON_IsObject(parent)) {
        v = cJSON_DetachItemFromObjectCaseSensitive(parent, toks[n - 1]);
    } else if (cJSON_IsArray(parent)) {
        int idx = array_index(parent, toks[n - 1], 0);
        v = idx < 0 ? NULL : cJSON_DetachItemFromArray(parent, idx);
    }
    free_tokens(toks, n);
    return v;
}

/* Adds value (taken over) at ptr. *doc may be replaced (ptr ""). */
static int jp_add(cJSON **doc, const char *ptr, cJSON *value, int replace)
{
    char **toks;
    int n = pointer_tokens(ptr, &toks), rc = KUBE_EINVAL;
    cJSON *parent;

    if (n < 0) {
        cJSON_Delete(value);
        return KUBE_EINVAL;
    }
    if (n == 0) {
        cJSON_Delete(*doc);
        *doc = value;
        return KUBE_OK;
    }
    parent = walk_parent(*doc, toks, n);
    if (cJSON_IsObject(parent)) {
        if (replace && !cJSON_GetObjectItemCaseSensitive(parent, toks[n - 1])) {
            cJSON_Delete(value);
        } else {
            rc = emu_json_put(parent, toks[n - 1], value);
        }
    } else if (cJSON_IsArray(parent)) {
        int idx = array_index(parent, toks[n - 1], !replace);
        if (idx < 0) {
            cJSON_Delete(value);
        } else if (replace) {
            rc = cJSON_ReplaceItemInArray(parent, idx, value) ? KUBE_OK : KUBE_ENOMEM;
        } else {
            rc = cJSON_InsertItemInArray(parent, idx, value) ? KUBE_OK : KUBE_ENOMEM;
        }
    } else {
        cJSON_Delete(value);
    }
    free_tokens(toks, n);
    return rc;
}

static int json_patch_op(cJSON **doc, const cJSON *op)
{
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(op, "op"));
    const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(op, "path"));
    const char *from = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(op, "from"));
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(op, "value");
    cJSON *v;

    if (!name || !path)
        return KUBE_EINVAL;
    if (!strcmp(name, "add") || !strcmp(name, "replace")) {
        if (!value)
            return KUBE_EINVAL;
        return jp_add(doc, path, cJSON_Duplicate(value, 1), !strcmp(name, "replace"));
    }
    if (!strcmp(name, "remove")) {
        v = jp_detach(*doc, path);
        cJSON_Delete(v);
        return v ? KUBE_OK : KUBE_EINVAL;
    }
    if (!strcmp(name, "test")) {
        v = jp_get(*doc, path);
        return v && value && emu_json_equal(v, value) ? KUBE_OK : KUBE_EINVAL;
    }
    if (!from)
        return KUBE_EINVAL;
    if (!strcmp(name, "copy")) {
        v = jp_get(*doc, from);
        return v ? jp_add(doc, path, cJSON_Duplicate(v, 1), 0) : KUBE_EINVAL;
    }
    if (!strcmp(name, "move")) {
        v = jp_detach(*doc, from);
        return v ? jp_add(doc, path, v, 0) : KUBE_EINVAL;
    }
    return KUBE_EINVAL;
}

static int json_patch(cJSON **doc, const cJSON *patch, cJSON **st)
{
    const cJSON *op;

    if (!cJSON_IsArray(patch))
        return emu_fail(st, 400, "BadRequest", NULL,
                        "json: cannot unmarshal %s into Go value of type jsonpatch.Patch",
                        cJSON_IsObject(patch) ? "object" : "value");
    if (cJSON_GetArraySize(patch) > 10000)
        return emu_fail(st, 413, "RequestEntityTooLarge", NULL,
                        "Request entity too large: The allowed maximum operations in a JSON patch "
                        "is 10000, got %d",
                        cJSON_GetArraySize(patch));
    cJSON_ArrayForEach(op, patch)
    {
        if (json_patch_op(doc, op) != KUBE_OK)
            return emu_fail(st, 422, "Invalid", cJSON_CreateObject(),
                            "the server rejected our request due to an error in our request");
    }
    return KUBE_OK;
}

/* ------------------------------------------------------------------ */
/* Strategic merge patch                                               */
/* ------------------------------------------------------------------ */

typedef struct merge_rule {
    const char *path; /* dotted, array levels elided */
    const char *key;  /* merge key, or "" for a merged list of primitives */
} merge_rule;

static const merge_rule rules[] = {
    {"metadata.ownerReferences", "uid"},
    {"metadata.finalizers", ""},
    {"spec.containers", "name"},
    {"spec.initContainers", "name"},
    {"spec.ephemeralContainers", "name"},
    {"spec.containers.ports", "containerPort"},
    {"spec.initContainers.ports", "containerPort"},
    {"spec.containers.env", "name"},
    {"spec.initContainers.env", "name"},
    {"spec.containers.volumeMounts", "mountPath"},
    {"spec.initContainers.volumeMounts", "mountPath"},
    {"spec.containers.volumeDevices", "devicePath"},
    {"spec.volumes", "name"},
    {"spec.imagePullSecrets", "name"},
    {"spec.hostAliases", "ip"},
    {"spec.topologySpreadConstraints", "topologyKey"},
    {"spec.podCIDRs", ""},
    {"status.conditions", "type"},
    {"status.addresses", "type"},
    {"status.podIPs", "ip"},
    {NULL, NULL},
};

static const merge_rule *rule_for(const char *path)
{
    for (size_t i = 0; rules[i].path; i++)
        if (!strcmp(rules[i].path, path))
            return &rules[i];
    return NULL;
}

static cJSON *smp_object(cJSON *target, const cJSON *patch, const char *path, int *bad);

static int is_directive(const char *k)
{
    return k[0] == '$';
}

static cJSON *find_by_key(cJSON *list, const char *key, const cJSON *want)
{
    cJSON *e;

    cJSON_ArrayForEach(
        e, list) if (emu_json_equal(cJSON_GetObjectItemCaseSensitive(e, key), want)) return e;
    return NULL;
}

/* Merges a patch list into a list of maps by key. */
static cJSON *smp_keyed_list(cJSON *target, const cJSON *patch, const char *key, const char *path,
                             int *bad)
{
    const cJSON *p;

    if (!cJSON_IsArray(target)) {
        cJSON_Delete(target);
        target = cJSON_CreateArray();
    }
    cJSON_ArrayForEach(p, patch)
    {
        const cJSON *kv = cJSON_GetObjectItemCaseSensitive(p, key);
        const char *directive = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "$patch"));
        cJSON *cur;
        if (!cJSON_IsObject(p) || !kv) {
            *bad = 1;
            return target;
        }
        cur = find_by_key(target, key, kv);
        if (directive && !strcmp(directive, "delete")) {
            if (cur)
                cJSON_Delete(cJSON_DetachItemViaPointer(target, cur));
            continue;
        }
        if (cur) {
            smp_object(cur, p, path, bad); /* merged in place, keeps its position */
        } else {
            cJSON_AddItemToArray(target, smp_object(cJSON_CreateObject(), p, path, bad));
        }
    }
    return target;
}

static cJSON *smp_primitive_list(cJSON *target, const cJSON *patch)
{
    const cJSON *p;

    if (!cJSON_IsArray(target)) {
        cJSON_Delete(target);
        target = cJSON_CreateArray();
    }
    cJSON_ArrayForEach(p, patch)
    {
        cJSON *e;
        int found = 0;
        cJSON_ArrayForEach(e, target) found |= emu_json_equal(e, p);
        if (!found)
            cJSON_AddItemToArray(target, cJSON_Duplicate(p, 1));
    }
    return target;
}

static void delete_primitives(cJSON *list, const cJSON *remove)
{
    const cJSON *r;

    cJSON_ArrayForEach(r, remove)
    {
        cJSON *e = list ? list->child : NULL;
        while (e) {
            cJSON *next = e->next;
            if (emu_json_equal(e, r))
                cJSON_Delete(cJSON_DetachItemViaPointer(list, e));
            e = next;
        }
    }
}

static void retain_keys(cJSON *target, const cJSON *keys)
{
    cJSON *c = target->child;

    while (c) {
        cJSON *next = c->next, *k;
        int keep = 0;
        cJSON_ArrayForEach(k, keys) keep |= cJSON_IsString(k) && !strcmp(k->valuestring, c->string);
        if (!keep)
            cJSON_Delete(cJSON_DetachItemViaPointer(target, c));
        c = next;
    }
}

static void child_path(char *out, size_t n, const char *path, const char *key)
{
    snprintf(out, n, "%s%s%s", path, *path ? "." : "", key);
}

static cJSON *smp_value(cJSON *cur, const cJSON *p, const char *path, int *bad)
{
    const merge_rule *rule;

    if (cJSON_IsObject(p)) {
        const char *directive = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "$patch"));
        if (directive && !strcmp(directive, "replace")) {
            cJSON_Delete(cur);
            cur = cJSON_CreateObject();
        }
        return smp_object(cJSON_IsObject(cur) ? cur : (cJSON_Delete(cur), cJSON_CreateObject()), p,
                          path, bad);
    }
    rule = cJSON_IsArray(p) ? rule_for(path) : NULL;
    if (rule && *rule->key)
        return smp_keyed_list(cur, p, rule->key, path, bad);
    if (rule)
        return smp_primitive_list(cur, p);
    cJSON_Delete(cur);
    return cJSON_Duplicate(p, 1);
}

static cJSON *smp_object(cJSON *target, const cJSON *patch, const char *path, int *bad)
{
    const cJSON *p;
    char sub[256];

    if (!target)
        return NULL;
    cJSON_ArrayForEach(p, patch)
    {
        cJSON *cur;
        if (!strncmp(p->string, "$deleteFromPrimitiveList/", 25)) {
            delete_primitives(cJSON_GetObjectItemCaseSensitive(target, p->string + 25), p);
            continue;
        }
        if (!strcmp(p->string, "$retainKeys")) {
            retain_keys(target, p);
            continue;
        }
        if (is_directive(p->string))
            continue; /* $patch, $setElementOrder/... */
        if (cJSON_IsNull(p)) {
            cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
            continue;
        }
        if (cJSON_IsObject(p)) {
            const char *d = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "$patch"));
            if (d && !strcmp(d, "delete")) {
                cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
                continue;
            }
        }
        child_path(sub, sizeof(sub), path, p->string);
        cur = cJSON_DetachItemFromObjectCaseSensitive(target, p->string);
        cur = smp_value(cur, p, sub, bad);
        if (!cur || emu_json_put(target, p->string, cur) != KUBE_OK) {
            *bad = 1;
            return target;
        }
    }
    return target;
}

/* ------------------------------------------------------------------ */
/* Entry point                                                         */
/* ------------------------------------------------------------------ */

static const char *media_type(const char *content_type, char *buf, size_t n)
{
    const char *semi = content_type ? strchr(content_type, ';') : NULL;
    size_t len;

    if (!content_type)
        return "";
    len = semi ? (size_t)(semi - content_type) : strlen(content_type);
    while (len > 0 && content_type[len - 1] == ' ')
        len--;
    snprintf(buf, n, "%.*s", (int)len, content_type);
    return buf;
}

int emu_patch_check_type(const char *content_type, const emu_resource *r, cJSON **st)
{
    char buf[128];
    const char *mt = media_type(content_type, buf, sizeof(buf));
    int strategic_ok = !r->def->custom;

    if (strcmp(mt, "application/json-patch+json") && strcmp(mt, "application/merge-patch+json") &&
        (!strategic_ok || strcmp(mt, "application/strategic-merge-patch+json")))
        return emu_fail(st, 415, "UnsupportedMediaType", NULL,
                        "the body of the request was in an unknown format - accepted media types "
                        "include: application/json-patch+json, application/merge-patch+json%s",
                        strategic_ok ? ", application/strategic-merge-patch+json" : "");
    return KUBE_OK;
}

int emu_patch_apply(cJSON **obj, const char *content_type, const char *body, size_t len,
                    const emu_resource *r, cJSON **st)
{
    char buf[128], err[256];
    const char *mt = media_type(content_type, buf, sizeof(buf));
    cJSON *patch = NULL, *out;
    int bad = 0, rc = emu_patch_check_type(content_type, r, st);

    if (rc != KUBE_OK)
        return rc;
    if (emu_json_parse(body, len, &patch, err, sizeof(err)) != KUBE_OK)
        return emu_fail(st, 400, "BadRequest", NULL, "error decoding patch: %s", err);
    if (!strcmp(mt, "application/json-patch+json")) {
        rc = json_patch(obj, patch, st);
        cJSON_Delete(patch);
        return rc;
    }
    if (!cJSON_IsObject(patch)) {
        cJSON_Delete(patch);
        return emu_fail(st, 400, "BadRequest", NULL,
                        "json: cannot unmarshal array into Go value of type map[string]interface "
                        "{}");
    }
    if (!strcmp(mt, "application/merge-patch+json"))
        out = merge_patch(*obj, patch);
    else
        out = smp_object(*obj, patch, "", &bad);
    *obj = out;
    cJSON_Delete(patch);
    if (!out)
        return emu_fail(st, 500, "InternalError", NULL, "out of memory");
    if (bad)
        return emu_fail(st, 400, "BadRequest", NULL,
                        "unable to find api field in struct for the merge key of a list element");
    return KUBE_OK;
}
