/*
 * kube/types/pin_seen.c - what a pin decision saw (see kube/types/pin.h):
 * the bound launcher pods of the VM's instance and its completed live
 * migration, observed before the decision's patch and read back by the
 * rules that order later placements and migrations after it.
 */
#include <stdio.h>
#include <string.h>

#include "kube/transport/api.h"
#include "kube/types/pin.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"

/* The string at o[key], or "" (borrowed). */
static const char *str_at(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* Whether the pod JSON is controlled by the VirtualMachineInstance of uid. */
static int controlled_by(const cJSON *pod, const char *uid)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata"), *ref;
    cJSON_ArrayForEach(ref, cJSON_GetObjectItemCaseSensitive(meta, "ownerReferences"))
    {
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")))
            return strcmp(str_at(ref, "kind"), "VirtualMachineInstance") == 0 &&
                   strcmp(str_at(ref, "uid"), uid) == 0;
    }
    return 0;
}

/* Appends uid to the comma-separated list out (size n) unless it is full. */
static void add_uid(char *out, size_t n, size_t *count, const char *uid)
{
    size_t len = strlen(out);
    if (!*uid || *count >= KUBE_PIN_SEEN_MAX || strlen(uid) > KUBE_PIN_UID_MAX ||
        len + strlen(uid) + 2 > n)
        return;
    snprintf(out + len, n - len, "%s%s", len ? "," : "", uid);
    (*count)++;
}

/* The bound pods of ns the VMI of uid controls, into out->pods (one LIST). */
static int bound_pods(kube_client *c, const char *ns, const char *uid, kube_pin_seen *out,
                      kube_status *st)
{
    kube_buf path = KUBE_BUF_INIT;
    kube_response resp = {0};
    size_t count = 0;
    const cJSON *pod;
    int rc = kube_path(&path, &KUBE_RES_PODS, ns, NULL, NULL);
    if (rc == KUBE_OK)
        rc = kube_client_do(c, "GET", path.data, NULL, NULL, 0, &resp);
    kube_buf_free(&path);
    cJSON *list = rc == KUBE_OK ? cJSON_ParseWithLength(resp.body, resp.len) : NULL;
    if (rc == KUBE_OK && !list)
        rc = KUBE_EPARSE;
    if (rc != KUBE_OK && st)
        *st = resp.status;
    cJSON_ArrayForEach(pod, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
        if (*str_at(spec, "nodeName") && controlled_by(pod, uid))
            add_uid(out->pods, sizeof(out->pods), &count,
                    str_at(cJSON_GetObjectItemCaseSensitive(pod, "metadata"), "uid"));
    }
    cJSON_Delete(list);
    kube_response_clear(&resp);
    return rc;
}

int kube_pin_observe(kube_client *c, const char *ns, const char *name, kube_pin_seen *out,
                     kube_status *st)
{
    cJSON *json = NULL;
    kube_object *obj = NULL;
    memset(out, 0, sizeof(*out));
    int rc = kube_api_get(c, &KUBE_RES_VMIS, ns, name, &json, st);
    if (rc == KUBE_ENOTFOUND)
        return KUBE_OK; /* no instance: no pods, no migration */
    if (rc == KUBE_OK)
        rc = kube_vmi_codec.decode(json, &obj);
    cJSON_Delete(json);
    if (rc != KUBE_OK)
        return rc;
    const kube_vmi *vmi = kube_vmi_from(obj);
    const kube_vmi_migration_state *m = vmi->migration;
    if (m && m->completed && !m->failed && strlen(m->migration_uid) <= KUBE_PIN_UID_MAX)
        kube_strlcpy(out->migration, m->migration_uid, sizeof(out->migration));
    if (obj->meta.uid && *obj->meta.uid)
        rc = bound_pods(c, ns, obj->meta.uid, out, st);
    kube_object_unref(obj);
    return rc;
}

int kube_pin_saw_pod(const kube_vm *vm, const char *uid)
{
    const kube_meta *m = vm ? &vm->base.meta : NULL;
    const char *seen = m ? kube_meta_annotation(m, KUBE_PIN_ANN_SEEN_PODS) : NULL;
    const char *reason = m ? kube_meta_annotation(m, KUBE_PIN_ANN_REASON) : NULL;
    size_t n = uid ? strlen(uid) : 0;
    if (!seen) /* a decision written before seen-pods existed: unknown */
        return reason && kube_meta_annotation(m, KUBE_PIN_ANN_AT) &&
                       (strcmp(reason, "API") == 0 || strcmp(reason, "NodeLost") == 0)
                   ? -1
                   : 0;
    for (const char *p = seen; n && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, uid, n) == 0)
            return 1;
        p += len + (comma ? 1 : 0);
    }
    return 0;
}

const char *kube_pin_seen_migration(const kube_vm *vm)
{
    return kube_pin_get(vm, KUBE_PIN_ANN_SEEN_MIGRATION);
}
