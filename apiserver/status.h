/*
 * apiserver/status.h - the JSON bodies stickyvm-apiserver answers with:
 * metav1.Status for every failure (shaped and worded as k8s.io/apiserver
 * writes them, compact, one trailing newline), the VirtualMachinePin
 * answer, and the messages of the common failures (Forbidden, NotFound,
 * Invalid, Conflict).
 *
 * Memory: every function appends to a caller-owned kube_buf and returns
 * KUBE_OK or KUBE_ENOMEM.
 */
#ifndef APIS_STATUS_H
#define APIS_STATUS_H

#include "kube/util/buf.h"

typedef struct apis_status_details {
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
} apis_status_details;

/* {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
 *  "message":...,"reason":...,"details":{...},"code":...}. details NULL
 * omits "details" (as apierrors.NewUnauthorized/NewBadRequest do); a zeroed
 * struct writes "details":{}. reason "" is omitted. */
int apis_status_json(kube_buf *out, int code, const char *reason, const char *message,
                     const apis_status_details *details);

/* The 403 of k8s.io/apiserver's authorization filter. For a resource
 * request (resource non-NULL): `<resource>.<group> "<name>" is forbidden:
 * User "<user>" cannot <verb> resource "<resource>/<sub>" in API group
 * "<group>" in the namespace "<ns>"`; for a non-resource request:
 * `forbidden: User "<user>" cannot <verb> path "<path>"`. A non-empty
 * reason is appended after ": ". */
typedef struct apis_forbidden {
    const char *user;
    const char *verb;
    const char *path;  /* non-resource */
    const char *group; /* resource */
    const char *resource;
    const char *subresource;
    const char *namespace_;
    const char *name;
    const char *reason; /* from the SubjectAccessReview, may be NULL */
} apis_forbidden;
int apis_status_forbidden(kube_buf *out, const apis_forbidden *f);

/* 401 {"message":"Unauthorized","reason":"Unauthorized"}. */
int apis_status_unauthorized(kube_buf *out);

/* 405 "the server does not allow this method on the requested resource". */
int apis_status_method_not_allowed(kube_buf *out);

/* The VirtualMachinePin answer. node / previous_node NULL write null. */
int apis_pin_answer_json(kube_buf *out, const char *ns, const char *name, const char *node,
                         const char *previous_node, int changed);

#endif
