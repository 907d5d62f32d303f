/*
 * kube/types/pin.c - reading, validating and writing a VirtualMachine's pin (see
 * kube/types/pin.h): one merge patch with the companion annotations, and the
 * read-compare-patch loop on conflicts.
 */
#include "kube/types/pin.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kube/transport/api.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/codec/validation.h"
#include "kube/types/pin_testing.h"

/* Keys this long (a qualified name has at most 253 + 1 + 63 characters)
 * are reported as too long, without the qualified-name details. */
#define KEY_MAX 511

const char *kube_pin_reason_name(kube_pin_reason r)
{
    switch (r) {
    case KUBE_PIN_FIRST_PLACEMENT:
        return "FirstPlacement";
    case KUBE_PIN_API:
        return "API";
    case KUBE_PIN_MIGRATION:
        return "Migration";
    case KUBE_PIN_NODE_LOST:
        return "NodeLost";
    }
    return "";
}

int kube_pin_key_check(const char *key, char *msg, size_t n)
{
    char lower[KEY_MAX + 1], why[1024];
    size_t len = key ? strlen(key) : 0;

    if (len == 0) {
        snprintf(msg, n, "Required value");
        return KUBE_EINVAL;
    }
    if (len > KEY_MAX) {
        snprintf(msg, n, "Invalid value: \"%.40s...\": too long", key);
        return KUBE_EINVAL;
    }
    for (size_t i = 0; i <= len; i++)
        lower[i] = (char)(key[i] >= 'A' && key[i] <= 'Z' ? key[i] - 'A' + 'a' : key[i]);
    if (kube_qualified_name_msgs(lower, "; ", why, sizeof(why)) == 0)
        return KUBE_OK;
    snprintf(msg, n, "Invalid value: \"%s\": %s", key, why);
    return KUBE_EINVAL;
}

const char *kube_pin_get(const kube_vm *vm, const char *key)
{
    const char *p = vm && key ? kube_meta_annotation(&vm->base.meta, key) : NULL;
    return p && *p ? p : NULL;
}

const char *kube_pin_followed(const kube_vm *vm)
{
    return kube_pin_get(vm, KUBE_PIN_ANN_FOLLOWED);
}

int kube_pin_is_decision(kube_pin_reason r)
{
    return r == KUBE_PIN_API || r == KUBE_PIN_NODE_LOST;
}

/* Seconds added to this process's pinned-at (tests: a writer's clock
 * ahead; pin_testing.h). */
static _Atomic int64_t g_clock_offset_s;

void kube_pin_clock_offset_set(int64_t seconds)
{
    atomic_store(&g_clock_offset_s, seconds);
}

/* A write needs a key and an author; a node, when given, is not empty;
 * only a Migration pin records a migration. */
static int write_valid(const kube_pin_write *w)
{
    return w && w->key && *w->key && w->by && (!w->node || *w->node) &&
           (!w->migration_uid || w->reason == KUBE_PIN_MIGRATION);
}

cJSON *kube_pin_patch_new(const kube_pin_write *w, const char *rv, time_t now)
{
    char at[32];

    if (!write_valid(w))
        return NULL;
    kube_time_format((int64_t)now * 1000000LL, 0, at, sizeof(at));
    kube_kv kv[7] = {
        {w->key, w->node},
        {KUBE_PIN_ANN_AT, at},
        {KUBE_PIN_ANN_BY, w->by},
        {KUBE_PIN_ANN_REASON, kube_pin_reason_name(w->reason)},
    };
    size_t n = 4;
    if (w->migration_uid)
        kv[n++] = (kube_kv){KUBE_PIN_ANN_FOLLOWED, w->migration_uid};
    if (w->seen) {
        kv[n++] = (kube_kv){KUBE_PIN_ANN_SEEN_PODS, w->seen->pods};
        kv[n++] = (kube_kv){KUBE_PIN_ANN_SEEN_MIGRATION,
                            w->seen->migration[0] ? w->seen->migration : NULL};
    }
    return kube_api_annotations_patch_new(kv, n, rv);
}

void kube_pin_result_clear(kube_pin_result *res)
{
    if (!res)
        return;
    kube_object_unref(res->vm);
    res->vm = NULL;
}

/* 1 when cur already holds what w writes. */
static int already(const kube_vm *cur, const kube_pin_write *w)
{
    const char *pin = kube_pin_get(cur, w->key);
    return w->node ? pin && strcmp(pin, w->node) == 0 : pin == NULL;
}

/* One GET of the VM, decoded; KUBE_ENOTFOUND also when its uid is not uid. */
static int reread(kube_client *c, const kube_vm *vm, kube_pin_result *res, kube_object **out)
{
    const kube_meta *m = &vm->base.meta;
    cJSON *json = NULL;
    int rc;

    *out = NULL;
    res->reads++;
    rc = kube_api_get(c, &KUBE_RES_VMS, m->namespace_, m->name, &json, &res->status);
    if (rc == KUBE_OK)
        rc = kube_vm_codec.decode(json, out);
    cJSON_Delete(json);
    if (rc == KUBE_OK && m->uid && *m->uid && strcmp((*out)->meta.uid, m->uid) != 0) {
        kube_object_unref(*out);
        *out = NULL;
        rc = KUBE_ENOTFOUND;
    }
    return rc;
}

/* What a decision on cur sees now (kube_pin_observe()), counted in res. */
static int observe(kube_client *c, const kube_vm *cur, kube_pin_result *res, kube_pin_seen *out)
{
    res->observations++;
    return kube_pin_observe(c, cur->base.meta.namespace_, cur->base.meta.name, out, &res->status);
}

/* Whether seen differs from what vm's last decision recorded (none
 * recorded: it does). */
static int news(const kube_vm *vm, const kube_pin_seen *seen)
{
    const char *pods = kube_meta_annotation(&vm->base.meta, KUBE_PIN_ANN_SEEN_PODS);
    const char *mig = kube_pin_seen_migration(vm);
    return !pods || strcmp(pods, seen->pods) != 0 || strcmp(mig ? mig : "", seen->migration) != 0;
}

/* One patch of w over cur (a decision records what it observed: seen, or
 * observed here when NULL). On success *out is the server's answer. */
static int patch(kube_client *c, const kube_vm *cur, const kube_pin_write *w,
                 const kube_pin_seen *seen, kube_pin_result *res, kube_object **out)
{
    const kube_meta *m = &cur->base.meta;
    kube_pin_write dw = *w;
    kube_pin_seen mine;
    cJSON *body = NULL, *json = NULL;
    int rc = KUBE_OK;

    *out = NULL;
    if (kube_pin_is_decision(w->reason) && !seen) {
        rc = observe(c, cur, res, &mine);
        seen = &mine;
    }
    if (rc != KUBE_OK)
        return rc;
    dw.seen = kube_pin_is_decision(w->reason) ? seen : NULL;
    body = kube_pin_patch_new(&dw, m->resource_version,
                              time(NULL) + (time_t)atomic_load(&g_clock_offset_s));
    if (!body)
        return KUBE_ENOMEM;
    res->writes++;
    rc = kube_api_merge_patch(c, &KUBE_RES_VMS, m->namespace_, m->name, body, &json, &res->status);
    cJSON_Delete(body);
    if (rc == KUBE_OK)
        rc = kube_vm_codec.decode(json, out);
    cJSON_Delete(json);
    return rc;
}

/* Whether the pin p (NULL: none) meets the precondition from (NULL: none;
 * "": unpinned). */
static int meets(const char *p, const char *from)
{
    return !from || (*from ? p && strcmp(p, from) == 0 : p == NULL);
}

/* Compares cur with w: 1 when the loop ends here (res->outcome set and
 * res->vm holding cur), 0 when the patch goes ahead. */
static int settled(kube_object *cur, const kube_pin_write *w, int conflicted,
                   kube_pin_decide_fn decide, void *ud, kube_pin_result *res)
{
    const kube_vm *vm = kube_vm_from(cur);
    const char *pin = kube_pin_get(vm, w->key);

    kube_strlcpy(res->previous, pin ? pin : "", sizeof(res->previous));
    if (!meets(pin, w->from))
        res->outcome = KUBE_PIN_PRECONDITION;
    else if (already(vm, w))
        res->outcome = KUBE_PIN_UNCHANGED;
    else if (conflicted && decide && !decide(ud, vm))
        res->outcome = KUBE_PIN_YIELDED;
    else
        return 0;
    res->vm = kube_object_ref(cur);
    return 1;
}

int kube_pin_set(kube_client *c, const kube_vm *vm, const kube_pin_write *w,
                 kube_pin_decide_fn decide, void *ud, kube_pin_result *res)
{
    kube_object *cur = vm ? kube_object_ref((kube_object *)&vm->base) : NULL;
    int rc = KUBE_OK;

    memset(res, 0, sizeof(*res));
    if (!c || !vm || !write_valid(w)) {
        kube_object_unref(cur);
        return KUBE_EINVAL;
    }
    for (int attempt = 0; attempt < KUBE_PIN_MAX_ATTEMPTS; attempt++) {
        if (attempt > 0) { /* the last patch conflicted: read the VM again */
            kube_object_unref(cur);
            if ((rc = reread(c, vm, res, &cur)) != KUBE_OK)
                break;
        }
        kube_pin_seen seen;
        const kube_pin_seen *fresh = NULL;
        if (settled(cur, w, attempt > 0, decide, ud, res)) {
            /* the value is there: a decision still records what it saw
             * when that is news (a placement or migration since the last) */
            if (res->outcome != KUBE_PIN_UNCHANGED || !kube_pin_is_decision(w->reason) ||
                (rc = observe(c, kube_vm_from(cur), res, &seen)) != KUBE_OK ||
                !news(kube_vm_from(cur), &seen))
                break;
            kube_pin_result_clear(res);
            fresh = &seen;
        }
        kube_object *answer = NULL;
        rc = patch(c, kube_vm_from(cur), w, fresh, res, &answer);
        if (rc == KUBE_OK) {
            res->outcome = KUBE_PIN_WRITTEN;
            res->vm = answer;
        }
        if (rc != KUBE_ECONFLICT)
            break;
        KLOG_V(2, "pin of VM %s/%s: conflict, reading it again (attempt %d)",
               vm->base.meta.namespace_, vm->base.meta.name, attempt + 1);
    }
    kube_object_unref(cur);
    if (rc == KUBE_ENOTFOUND) {
        res->outcome = KUBE_PIN_GONE;
        rc = KUBE_OK;
    }
    return rc;
}

kube_recorder_ref kube_pin_event_ref(const kube_vm *vm)
{
    const kube_meta *m = &vm->base.meta;
    return (kube_recorder_ref){.kind = "VirtualMachine",
                               .api_version = "kubevirt.io/v1",
                               .namespace_ = m->namespace_,
                               .name = m->name,
                               .uid = m->uid};
}
