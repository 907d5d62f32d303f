/*
 * kube/transport/api.h - resource descriptors, REST paths and the typed writes both
 * daemons use: get, create, merge patch (optionally carrying
 * metadata.resourceVersion for optimistic concurrency), JSON patch,
 * strategic-merge patch of pods/status, delete, and the pods/binding
 * subresource.
 *
 * Memory: functions that return JSON give the caller a cJSON tree (*out) to
 * free with cJSON_Delete(); on error *out is NULL. Path buffers are the
 * caller's kube_buf. st (may be NULL) receives the Status of a failed call.
 * All functions are thread-safe (they go through kube_client_do()).
 *
 * Arguments: out may be NULL (answer discarded) everywhere but
 * kube_api_get(). Object calls need a name, and a namespace for namespaced
 * kinds; a missing one, or a body of the wrong JSON type, is KUBE_EINVAL
 * with st->message saying what is wrong. A 2xx answer that is not JSON is
 * KUBE_EPARSE when the caller asked for *out. Errors otherwise as
 * kube_client_do().
 */
#ifndef KUBE_API_H
#define KUBE_API_H

#include <cjson/cJSON.h>

#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/codec/object.h"

typedef struct kube_resource {
    const char *group;   /* "" for the core group */
    const char *version; /* "v1" */
    const char *plural;  /* "pods" */
    const char *kind;    /* "Pod" */
    int namespaced;
} kube_resource;

extern const kube_resource KUBE_RES_PODS;
extern const kube_resource KUBE_RES_NODES;
extern const kube_resource KUBE_RES_NAMESPACES;
extern const kube_resource KUBE_RES_CONFIGMAPS;
extern const kube_resource KUBE_RES_EVENTS; /* events.k8s.io/v1 */
extern const kube_resource KUBE_RES_LEASES; /* coordination.k8s.io/v1 */
extern const kube_resource KUBE_RES_VMS;    /* kubevirt.io/v1 virtualmachines */
extern const kube_resource KUBE_RES_VMIS;   /* kubevirt.io/v1 virtualmachineinstances */

/* Appends the REST path of a collection (name NULL) or an object, with an
 * optional subresource ("binding", "status"), to out:
 * /api/v1/namespaces/ns/pods/name/binding or /apis/g/v/... . ns is ignored
 * for cluster-scoped resources and may be NULL for all namespaces.
 * Names are path-escaped. Returns KUBE_OK or KUBE_ENOMEM. */
int kube_path(kube_buf *out, const kube_resource *r, const char *ns, const char *name,
              const char *subresource);

/* GET one object. */
int kube_api_get(kube_client *c, const kube_resource *r, const char *ns, const char *name,
                 cJSON **out, kube_status *st);
/* POST a new object (body is the full object). *out (may be NULL) receives
 * the created object. */
int kube_api_create(kube_client *c, const kube_resource *r, const char *ns, const cJSON *body,
                    cJSON **out, kube_status *st);
/* PUT a whole object (update). */
int kube_api_update(kube_client *c, const kube_resource *r, const char *ns, const char *name,
                    const cJSON *body, cJSON **out, kube_status *st);
/* PATCH with application/merge-patch+json. */
int kube_api_merge_patch(kube_client *c, const kube_resource *r, const char *ns, const char *name,
                         const cJSON *patch, cJSON **out, kube_status *st);
/* The same for the n (>= 1) annotations kv[] in ONE merge patch (a NULL
 * value removes its key); kv is borrowed for the call. */
int kube_api_set_annotations(kube_client *c, const kube_resource *r, const char *ns,
                             const char *name, const kube_kv *kv, size_t n,
                             const char *resource_version, cJSON **out, kube_status *st);
/* DELETE one object. */
int kube_api_delete(kube_client *c, const kube_resource *r, const char *ns, const char *name,
                    kube_status *st);
/* POST pods/{name}/binding to node. uid (may be NULL) guards against binding
 * a recreated pod of the same name. */
int kube_api_bind(kube_client *c, const char *ns, const char *pod, const char *uid,
                  const char *node, kube_status *st);
/* Called once when kube_api_bind_async's request ends, on the client's I/O
 * thread, with rc and st as kube_api_bind gives them (st borrowed for the
 * call). Must not block. */
typedef void (*kube_api_done_fn)(void *ud, int rc, const kube_status *st);
/* kube_api_bind without waiting (kube_client_do_async): KUBE_OK and done
 * runs once, or KUBE_EINVAL / KUBE_ENOMEM / KUBE_ECANCELED and it never
 * runs. */
int kube_api_bind_async(kube_client *c, const char *ns, const char *pod, const char *uid,
                        const char *node, kube_api_done_fn done, void *ud);

/* The annotation patch kube_api_set_annotations sends:
 * {"metadata":{"annotations":{kv[0].key:kv[0].value|null, ...}
 * [,"resourceVersion":rv]}}. Caller frees with cJSON_Delete(); NULL when
 * memory runs out, and for an empty key. */
cJSON *kube_api_annotations_patch_new(const kube_kv *kv, size_t n, const char *resource_version);

/* PATCH pods/{name}/status with application/strategic-merge-patch+json. */
int kube_api_patch_pod_status(kube_client *c, const char *ns, const char *pod, const cJSON *patch,
                              kube_status *st);

#endif
