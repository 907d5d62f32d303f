/*
 * kube/serving/authn.h - who is asking: the identity rules of k8s.io/apiserver's
 * delegated authentication, without the network part (TokenReview lives in
 * delegate.h).
 *
 * A configuration snapshot holds the two trust roots and the front-proxy
 * rules, read from kube-system/extension-apiserver-authentication (or the
 * flags that override it):
 *   - requestheader-client-ca-file: the front-proxy CA. A connection whose
 *     client certificate verifies against it with the clientAuth extended
 *     key usage (on every certificate of the chain that restricts usages,
 *     as Go's x509 does) and, when requestheader-allowed-names is not empty,
 *     whose leaf CN is in that list, is a trusted front proxy: its
 *     X-Remote-User / X-Remote-Group / X-Remote-Extra-* headers (names from
 *     the requestheader-*-headers settings) carry the user.
 *   - client-ca-file: a client certificate verified against it (clientAuth,
 *     not expired) authenticates CN as the user and O as the groups.
 * Nowhere else are the front-proxy headers believed: callers strip them.
 *
 * Memory: kube_authn_config is immutable once built and reference counted
 * (kube_authn_config_ref/unref, thread-safe), so a request keeps the
 * snapshot it started with while a newer one is installed. kube_user
 * values are allocated by the functions that return them and freed with
 * kube_user_free().
 */
#ifndef KUBE_SERVING_AUTHN_H
#define KUBE_SERVING_AUTHN_H

#include <cjson/cJSON.h>
#include <openssl/x509.h>
#include <stddef.h>
#include <time.h>

#include "kube/serving/httpreq.h"
#include "kube/util/strlist.h"

typedef struct kube_user_extra {
    char *key;
    kube_strlist values;
} kube_user_extra;

typedef struct kube_user {
    char *name;
    char *uid; /* may be NULL */
    kube_strlist groups;
    kube_user_extra *extra;
    size_t n_extra, cap_extra;
} kube_user;

/* Allocates an empty user named name (copied). NULL when out of memory. */
kube_user *kube_user_new(const char *name);
/* Appends a value to the extra key (created when new). */
int kube_user_add_extra(kube_user *u, const char *key, const char *value);
/* Adds system:authenticated unless present (k8s AuthenticatedGroupAdder). */
int kube_user_add_authenticated(kube_user *u);
/* Deep copy; NULL when out of memory. */
kube_user *kube_user_dup(const kube_user *u);
void kube_user_free(kube_user *u);

typedef struct kube_authn_config kube_authn_config;

/* An empty configuration: no CA, default header names (X-Remote-User,
 * X-Remote-Group, X-Remote-Extra-), no allowed names. Reference count 1. */
int kube_authn_config_new(kube_authn_config **out);
kube_authn_config *kube_authn_config_ref(kube_authn_config *cfg);
void kube_authn_config_unref(kube_authn_config *cfg);

/* Builders, used before the snapshot is shared. PEM bundles may hold
 * several certificates; one without any is KUBE_EPARSE. err (may be NULL)
 * receives a message naming the source. */
int kube_authn_config_set_client_ca(kube_authn_config *cfg, const char *pem, size_t len,
                                    const char *source, char *err, size_t errlen);
int kube_authn_config_set_requestheader_ca(kube_authn_config *cfg, const char *pem, size_t len,
                                           const char *source, char *err, size_t errlen);
typedef enum kube_authn_list {
    KUBE_AUTHN_ALLOWED_NAMES,
    KUBE_AUTHN_USERNAME_HEADERS,
    KUBE_AUTHN_GROUP_HEADERS,
    KUBE_AUTHN_EXTRA_PREFIXES,
} kube_authn_list;
/* Replaces one list with a copy of l. */
int kube_authn_config_set_list(kube_authn_config *cfg, kube_authn_list which,
                               const kube_strlist *l);

/* Reads the data of the extension-apiserver-authentication ConfigMap
 * (the "data" object: PEM strings and JSON-array strings). Missing keys
 * leave the setting empty (requestheader authentication is then off). */
int kube_authn_config_from_configmap(kube_authn_config *cfg, const cJSON *data, char *err,
                                     size_t errlen);

/* Front proxy check of a connection's certificate (leaf, and the untrusted
 * intermediates it sent, may be NULL). Returns KUBE_OK when trusted,
 * KUBE_ENOTFOUND when there is no certificate or no front-proxy CA, and
 * KUBE_EUNAUTHORIZED when verification fails (why goes to msg). */
int kube_authn_verify_front_proxy(const kube_authn_config *cfg, X509 *leaf, STACK_OF(X509) * chain,
                                  char *msg, size_t msglen);

/* The user the front-proxy headers name (call only for a trusted proxy).
 * Returns KUBE_OK with *out, KUBE_ENOTFOUND when no username header has a
 * value, or KUBE_ENOMEM. Groups and extras are not given
 * system:authenticated here. */
int kube_authn_from_headers(const kube_authn_config *cfg, const kube_httpreq_request *req,
                            kube_user **out);

/* Removes every front-proxy header (username, group and extra prefixes of
 * this configuration, and the X-Remote- defaults) from req. */
void kube_authn_strip_headers(const kube_authn_config *cfg, kube_httpreq_request *req);

/* Client certificate authentication against client-ca-file. Returns KUBE_OK
 * with *out (CN as name, O as groups), KUBE_ENOTFOUND when there is no
 * certificate, no client CA or an empty CN, KUBE_EUNAUTHORIZED when
 * verification fails (why goes to msg). */
int kube_authn_verify_client_cert(const kube_authn_config *cfg, X509 *leaf, STACK_OF(X509) * chain,
                                  kube_user **out, char *msg, size_t msglen);

/* The window in which every certificate the peer sent (leaf and the
 * intermediates, chain may be NULL) is valid: *from is the latest
 * NotBefore, *until the earliest NotAfter. An unreadable time gives an
 * empty window (0, 0), so callers verify again each time. */
void kube_authn_chain_validity(X509 *leaf, STACK_OF(X509) * chain, time_t *from, time_t *until);

/* The token of an "Authorization: Bearer <token>" header, as
 * k8s.io/apiserver's bearertoken authenticator reads it, copied into out
 * (size n). Returns KUBE_OK, KUBE_ENOTFOUND (no bearer token) or
 * KUBE_ERANGE (longer than n - 1). */
int kube_authn_bearer_token(const kube_httpreq_request *req, char *out, size_t n);

#endif
