/*
 * kube/serving/delegate.h - delegated authentication and authorization: the
 * TokenReview (authentication.k8s.io/v1) and SubjectAccessReview
 * (authorization.k8s.io/v1) round trips to kube-apiserver, with the caches
 * and always-allow rules of k8s.io/apiserver's delegating options:
 *   - bearer tokens: TokenReview answers (valid and invalid) cached for the
 *     token TTL (default 10 s) under the token's SHA-256, never the token;
 *     transport failures are not cached;
 *   - authorization: paths in always_allow_paths (/healthz, /readyz,
 *     /livez; an entry ending in "*" is a prefix) and users in always_allow_groups (system:masters,
 * which kube-apiserver itself never denies) skip the review; otherwise a SubjectAccessReview
 * decides, allowed answers cached for allow_ttl and denied ones for deny_ttl (10 s each by
 * default).
 *
 * Threads: the blocking functions (authenticate_token, authorize) issue
 * HTTP requests and must run on worker threads; the *_cached variants never
 * block and may run on the service thread. All are thread-safe.
 *
 * Memory: kube_delegate_new() copies the options' lists; the clients and
 * observer are borrowed and must outlive the delegate. Users handed out are
 * the caller's to free with kube_user_free().
 */
#ifndef KUBE_SERVING_DELEGATE_H
#define KUBE_SERVING_DELEGATE_H

#include <stdint.h>

#include "kube/serving/authn.h"
#include "kube/transport/client.h"
#include "kube/serving/observer.h"

typedef struct kube_delegate kube_delegate;

typedef struct kube_delegate_options {
    kube_client *authn_client; /* TokenReview; may be NULL: tokens rejected */
    kube_client *authz_client; /* SubjectAccessReview; NULL: only always-allow */
    int64_t token_ttl_ms;
    int64_t allow_ttl_ms;
    int64_t deny_ttl_ms;
    const kube_strlist *always_allow_paths;  /* may be NULL */
    const kube_strlist *always_allow_groups; /* may be NULL */
    const kube_serving_observer *observer;   /* may be NULL; borrowed */
} kube_delegate_options;

int kube_delegate_new(const kube_delegate_options *o, kube_delegate **out);
void kube_delegate_free(kube_delegate *d);

/* Cached answer for a token. Returns KUBE_OK with *out, KUBE_EUNAUTHORIZED
 * when the token is known to be invalid, KUBE_ENOTFOUND when not cached. */
int kube_delegate_token_cached(kube_delegate *d, const char *token, kube_user **out);
/* TokenReview (through the cache). Returns KUBE_OK with *out,
 * KUBE_EUNAUTHORIZED for an invalid token, or the transport error. */
int kube_delegate_authenticate_token(kube_delegate *d, const char *token, kube_user **out);

typedef struct kube_authz_attrs {
    const kube_user *user;
    const char *verb;
    int resource_request;
    const char *path;       /* non-resource requests */
    const char *namespace_; /* resource requests */
    const char *group;
    const char *version;
    const char *resource;
    const char *subresource;
    const char *name;
} kube_authz_attrs;

typedef struct kube_authz_decision {
    int allowed;
    char reason[512];
} kube_authz_decision;

/* 1 when path is in paths, as k8s.io/apiserver's path authorizer reads
 * --authorization-always-allow-paths: an entry ending in "*" is a prefix,
 * any other must equal path. */
int kube_authz_path_always_allowed(const kube_strlist *paths, const char *path);

/* Decides from the always-allow rules or the cache. Returns KUBE_OK with
 * *out, or KUBE_ENOTFOUND when a SubjectAccessReview is needed. */
int kube_delegate_authorize_cached(kube_delegate *d, const kube_authz_attrs *a,
                                   kube_authz_decision *out);
/* Full decision. Returns KUBE_OK with *out, or the error of the review
 * (the caller answers 500, as k8s.io/apiserver does). */
int kube_delegate_authorize(kube_delegate *d, const kube_authz_attrs *a, kube_authz_decision *out);

/* The SubjectAccessReview body for a, as a cJSON tree the caller frees
 * (NULL when out of memory). Exposed for tests. */
cJSON *kube_delegate_sar_body(const kube_authz_attrs *a);

#endif
