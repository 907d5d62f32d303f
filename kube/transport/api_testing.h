/*
 * kube/transport/api_testing.h - the test hooks of api.h: entry points only the
 * tests and benchmarks call, never the daemons.
 */
#ifndef KUBE_TRANSPORT_API_TESTING_H
#define KUBE_TRANSPORT_API_TESTING_H

#include "kube/transport/api.h"
#include "kube/util/buf.h"

/* Appends the Binding kube_api_bind sends, written as text:
 * {"apiVersion":"v1","kind":"Binding","metadata":{"name","namespace"
 * [,"uid"]},"target":{"apiVersion":"v1","kind":"Node","name"}}, kube-
 * scheduler's key order. KUBE_OK or KUBE_ENOMEM; body stays the caller's. */
int kube_api_binding_body(kube_buf *body, const char *ns, const char *pod, const char *uid,
                          const char *node);

/* PATCH with application/json-patch+json (patch is a JSON array). */
int kube_api_json_patch(kube_client *c, const kube_resource *r, const char *ns, const char *name,
                        const cJSON *patch, cJSON **out, kube_status *st);

/* Sets one annotation with a merge patch that carries resource_version when
 * it is non-NULL (so a stale version fails with KUBE_ECONFLICT). value NULL
 * removes the annotation. */
int kube_api_set_annotation(kube_client *c, const kube_resource *r, const char *ns,
                            const char *name, const char *key, const char *value,
                            const char *resource_version, cJSON **out, kube_status *st);

/* The merge patch kube_api_set_annotation() sends; caller frees with
 * cJSON_Delete(); NULL on memory. */
cJSON *kube_api_annotation_patch_new(const char *key, const char *value,
                                     const char *resource_version);

#endif
