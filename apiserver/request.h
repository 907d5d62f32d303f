/*
 * apiserver/request.h - what a request asks for: the route of its path, the
 * query parameters stickyvm-apiserver reads, the authorization verb, and the
 * body rule. Pure functions, no I/O; the fuzz target drives them.
 *
 * Paths are checked before anything else looks at them: origin-form only,
 * no percent-encoding (so no %2F smuggled into a name), no empty segment
 * (double or trailing slash), no "." or ".." segment. Namespaces must be
 * DNS-1123 labels and VirtualMachine names DNS-1123 subdomains. A
 * decoded ?node= is validated on its decoded length, and a control byte
 * in it (%00, %0A, ...) is refused. /pin accepts node, from, force, dryRun
 * and timeout, /unpin from, force, dryRun and timeout: any other parameter
 * (unpin?node= included) is refused naming it; from (the precondition,
 * apiserver/pin.h) must be empty or a DNS-1123 subdomain; dryRun must be
 * All, force a Go boolean and timeout a Go duration. node, from, force and
 * timeout may be given once; dryRun, a list in kube-apiserver, as often as
 * wanted, each All. The virtualmachinepins routes keep their raw query for
 * their handler (vmpins.h); the health paths
 * (/healthz, /livez, /readyz, /ROOT/CHECK) their check, ?verbose and
 * ?exclude (kube/serving/healthz.h). Queries are read with
 * kube/serving/query.h, names checked with kube/codec/validation.h. Every
 * violation is a 400 BadRequest with a message saying which rule.
 *
 * Memory: apis_route_parse() fills a caller-provided apis_route; its path,
 * node and query are allocated and released by apis_route_free() (safe on a
 * zeroed route).
 */
#ifndef APIS_REQUEST_H
#define APIS_REQUEST_H

#include <stddef.h>

#include "kube/codec/validation.h"
#include "kube/serving/healthz.h"

#define APIS_GROUP "subresources.stickyvm.io"
#define APIS_VERSION "v1"
#define APIS_GROUP_VERSION APIS_GROUP "/" APIS_VERSION

typedef enum apis_route_kind {
    APIS_ROUTE_NOT_FOUND = 0, /* answered "404 page not found" after authz */
    APIS_ROUTE_ROOT,          /* "/" */
    APIS_ROUTE_HEALTH,        /* /healthz, /livez, /readyz and their checks */
    APIS_ROUTE_METRICS,
    APIS_ROUTE_OPENAPI_V2,
    APIS_ROUTE_APIS,    /* /apis: APIGroupList */
    APIS_ROUTE_GROUP,   /* /apis/subresources.stickyvm.io: APIGroup */
    APIS_ROUTE_VERSION, /* /apis/subresources.stickyvm.io/v1: APIResourceList */
    APIS_ROUTE_PIN,     /* .../namespaces/{ns}/virtualmachines/{name}/pin */
    APIS_ROUTE_UNPIN,   /* .../unpin */
    APIS_ROUTE_VMPINS,  /* .../[namespaces/{ns}/]virtualmachinepins (list) */
    APIS_ROUTE_VMPIN,   /* .../namespaces/{ns}/virtualmachinepins/{name} (get) */
} apis_route_kind;

typedef struct apis_route {
    apis_route_kind kind;
    char *path;                                  /* the path, without the query */
    char namespace_[KUBE_DNS1123_LABEL_MAX + 1]; /* resources; "" for VMPINS of all
                                                    namespaces */
    char name[KUBE_DNS1123_SUBDOMAIN_MAX + 1];   /* PIN, UNPIN, VMPIN; VMPINS: a
                                                    fieldSelector's metadata.name=X */
    char *query;                                 /* VMPINS, VMPIN: the raw query (owned), or NULL */
    int dry_run;                                 /* PIN, UNPIN: ?dryRun=All */
    int force;                                   /* PIN: ?force=true */
    int has_node;                                /* ?node= was given */
    int has_from;                                /* PIN, UNPIN: ?from= was given */
    char from[KUBE_DNS1123_SUBDOMAIN_MAX + 1];   /* its value ("": only if unpinned) */
    char *node;                                  /* its decoded value, whole (owned) */
    size_t node_len;                             /* its decoded length */
    int node_valid;                              /* that value is a DNS-1123 subdomain */
    kube_healthz_request health;                 /* HEALTH: the check, ?verbose, ?exclude */
} apis_route;

/* Parses a request-target. Returns KUBE_OK, KUBE_EBADREQUEST (msg receives
 * the reason, suitable for a Status message) or KUBE_ENOMEM. On error the
 * route is left zeroed. */
int apis_route_parse(const char *target, apis_route *out, char *msg, size_t msglen);
void apis_route_free(apis_route *r);

/* Non-zero for PIN, UNPIN, VMPINS and VMPIN (the resource requests). */
int apis_route_is_resource(const apis_route_kind kind);
/* Non-zero for PIN and UNPIN (the requests that may change a pin). */
int apis_route_is_pin(apis_route_kind kind);
/* The authorization resource: "virtualmachines" (PIN, UNPIN),
 * "virtualmachinepins" (VMPINS, VMPIN), "" otherwise. Static. */
const char *apis_route_resource(apis_route_kind kind);
/* The authorization verb of a request on r: apis_request_verb(), except
 * that a GET of VMPINS is "list", or "watch" with ?watch=true|1. */
void apis_route_verb(const apis_route *r, const char *method, char *out, size_t n);
/* "pin", "unpin" or "" (non-resource). Static. */
const char *apis_route_subresource(apis_route_kind kind);

/* The authorization verb for a method, as k8s.io/apiserver derives it:
 * resource requests map GET/HEAD to get, PUT to update, POST to create,
 * PATCH to patch, DELETE to delete; anything else (and every non-resource
 * request) is the lowercased method. Written into out (size n). */
void apis_request_verb(const char *method, int resource_request, char *out, size_t n);

/* Body rule for pin/unpin: empty, or a JSON empty object `{}` (whitespace
 * allowed). Returns KUBE_OK or KUBE_EBADREQUEST. */
int apis_body_check(const char *body, size_t len);

#endif
