/*
 * kube/serving/status.h - the JSON bodies both secure servers answer
 * failures with: metav1.Status (shaped and worded as k8s.io/apiserver
 * writes them, compact, one trailing newline), and the messages of the
 * common failures (Forbidden, Unauthorized, MethodNotAllowed).
 *
 * Memory: every function appends to a caller-owned kube_buf and returns
 * KUBE_OK or KUBE_ENOMEM.
 */
#ifndef KUBE_SERVING_STATUS_H
#define KUBE_SERVING_STATUS_H

#include <cjson/cJSON.h>

#include "kube/util/buf.h"

typedef struct kube_status_details {
    const char *name; /* NULL: omitted */
    const char *group;
    const char *kind;
    /* one cause, as field.Error gives it (all NULL: no causes) */
    const char *cause_reason;  /* "FieldValueNotFound" */
    const char *cause_message; /* "Not found: \"node-9\"" */
    const char *cause_field;   /* "node" */
    /* a second cause of the same reason and field (a value failing two
     * rules, e.g. too long and malformed), NULL: none */
    const char *cause_message2;
} kube_status_details;

/* {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
 *  "message":...,"reason":...,"details":{...},"code":...}. details NULL
 * omits "details" (as apierrors.NewUnauthorized/NewBadRequest do); a zeroed
 * struct writes "details":{}. reason "" is omitted. */
int kube_status_json(kube_buf *out, int code, const char *reason, const char *message,
                     const kube_status_details *details);

/* The 403 of k8s.io/apiserver's authorization filter. For a resource
 * request (resource non-NULL): `<resource>.<group> "<name>" is forbidden:
 * User "<user>" cannot <verb> resource "<resource>/<sub>" in API group
 * "<group>" in the namespace "<ns>"`; for a non-resource request:
 * `forbidden: User "<user>" cannot <verb> path "<path>"`. A non-empty
 * reason is appended after ": ". */
typedef struct kube_forbidden {
    const char *user;
    const char *verb;
    const char *path;  /* non-resource */
    const char *group; /* resource */
    const char *resource;
    const char *subresource;
    const char *namespace_;
    const char *name;
    const char *reason; /* from the SubjectAccessReview, may be NULL */
} kube_forbidden;
int kube_status_forbidden(kube_buf *out, const kube_forbidden *f);

/* 401 {"message":"Unauthorized","reason":"Unauthorized"}. */
int kube_status_unauthorized(kube_buf *out);

/* 405 "the server does not allow this method on the requested resource". */
int kube_status_method_not_allowed(kube_buf *out);

/* Appends the compact form of json and a newline, then frees json (NULL:
 * KUBE_ENOMEM). For the daemons' own answer bodies. */
int kube_status_emit(kube_buf *out, cJSON *json);

#endif
