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
 * in it (%00, %0A, ...) is refused. Every
 * violation is a 400 BadRequest with a message saying which rule.
 *
 * Memory: apis_route_parse() fills a caller-provided apis_route; its path
 * and node are allocated and released by apis_route_free() (safe on a
 * zeroed route).
 */
#ifndef APIS_REQUEST_H
#define APIS_REQUEST_H

#include <stddef.h>

#define APIS_GROUP "subresources.stickyvm.io"
#define APIS_VERSION "v1"
#define APIS_GROUP_VERSION APIS_GROUP "/" APIS_VERSION

#define APIS_DNS_LABEL_MAX 63
#define APIS_DNS_SUBDOMAIN_MAX 253

typedef enum apis_route_kind {
    APIS_ROUTE_NOT_FOUND = 0, /* answered "404 page not found" after authz */
    APIS_ROUTE_ROOT,          /* "/" */
    APIS_ROUTE_HEALTHZ,
    APIS_ROUTE_READYZ,
    APIS_ROUTE_LIVEZ,
    APIS_ROUTE_METRICS,
    APIS_ROUTE_OPENAPI_V2,
    APIS_ROUTE_APIS,    /* /apis: APIGroupList */
    APIS_ROUTE_GROUP,   /* /apis/subresources.stickyvm.io: APIGroup */
    APIS_ROUTE_VERSION, /* /apis/subresources.stickyvm.io/v1: APIResourceList */
    APIS_ROUTE_PIN,     /* .../namespaces/{ns}/virtualmachines/{name}/pin */
    APIS_ROUTE_UNPIN,   /* .../unpin */
} apis_route_kind;

typedef struct apis_route {
    apis_route_kind kind;
    char *path;                              /* the path, without the query */
    char namespace_[APIS_DNS_LABEL_MAX + 1]; /* PIN/UNPIN only */
    char name[APIS_DNS_SUBDOMAIN_MAX + 1];   /* PIN/UNPIN only */
    int has_node;                            /* ?node= was given */
    char *node;                              /* its decoded value, whole (owned) */
    size_t node_len;                         /* its decoded length */
    int node_valid;                          /* that value is a DNS-1123 subdomain */
} apis_route;

/* Parses a request-target. Returns KUBE_OK, KUBE_EBADREQUEST (msg receives
 * the reason, suitable for a Status message) or KUBE_ENOMEM. On error the
 * route is left zeroed. */
int apis_route_parse(const char *target, apis_route *out, char *msg, size_t msglen);
void apis_route_free(apis_route *r);

/* Non-zero for PIN and UNPIN (the resource requests). */
int apis_route_is_resource(const apis_route_kind kind);
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

/* DNS-1123 validators (lowercase alphanumerics and '-', alphanumeric at
 * both ends; subdomains are dot-separated labels). Return non-zero when
 * valid. */
int apis_dns1123_label(const char *s);
int apis_dns1123_subdomain(const char *s);
/* The same on n bytes (a decoded value may hold a NUL before its end). */
int apis_dns1123_subdomain_n(const char *s, size_t n);

#endif
