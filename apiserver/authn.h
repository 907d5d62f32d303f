/*
 * apiserver/authn.h - who is asking: the identity rules of k8s.io/apiserver's
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
 * Memory: apis_authn_config is immutable once built and reference counted
 * (apis_authn_config_ref/unref, thread-safe), so a request keeps the
 * snapshot it started with while a newer one is installed. apis_user
 * values are allocated by the functions that return them and freed with
 * apis_user_free().
 */
#ifndef APIS_AUTHN_H
#define APIS_AUTHN_H

#include <cjson/cJSON.h>
#include <openssl/x509.h>
#include <stddef.h>
#include <time.h>

#include "kube/serving/httpreq.h"

typedef struct apis_strlist {
    char **v;
    size_t n;
} apis_strlist;

/* Appends a copy of s. Returns KUBE_OK or KUBE_ENOMEM. */
int apis_strlist_add(apis_strlist *l, const char *s);
int apis_strlist_contains(const apis_strlist *l, const char *s);
/* Splits a comma-separated flag value (items trimmed, empty items skipped). */
int apis_strlist_split(apis_strlist *l, const char *csv);
void apis_strlist_free(apis_strlist *l);

typedef struct apis_extra {
    char *key;
    apis_strlist values;
} apis_extra;

typedef struct apis_user {
    char *name;
    char *uid; /* may be NULL */
    apis_strlist groups;
    apis_extra *extra;
    size_t n_extra;
} apis_user;

/* Allocates an empty user named name (copied). NULL when out of memory. */
apis_user *apis_user_new(const char *name);
/* Appends a value to the extra key (created when new). */
int apis_user_add_extra(apis_user *u, const char *key, const char *value);
/* Adds system:authenticated unless present (k8s AuthenticatedGroupAdder). */
int apis_user_add_authenticated(apis_user *u);
/* Deep copy; NULL when out of memory. */
apis_user *apis_user_dup(const apis_user *u);
void apis_user_free(apis_user *u);

typedef struct apis_authn_config apis_authn_config;

/* An empty configuration: no CA, default header names (X-Remote-User,
 * X-Remote-Group, X-Remote-Extra-), no allowed names. Reference count 1. */
int apis_authn_config_new(apis_authn_config **out);
apis_authn_config *apis_authn_config_ref(apis_authn_config *cfg);
void apis_authn_config_unref(apis_authn_config *cfg);

/* Builders, used before the snapshot is shared. PEM bundles may hold
 * several certificates; one without any is KUBE_EPARSE. err (may be NULL)
 * receives a message naming the source. */
int apis_authn_config_set_client_ca(apis_authn_config *cfg, const char *pem, size_t len,
                                    const char *source, char *err, size_t errlen);
int apis_authn_config_set_requestheader_ca(apis_authn_config *cfg, const char *pem, size_t len,
                                           const char *source, char *err, size_t errlen);
typedef enum apis_authn_list {
    APIS_AUTHN_ALLOWED_NAMES,
    APIS_AUTHN_USERNAME_HEADERS,
    APIS_AUTHN_GROUP_HEADERS,
    APIS_AUTHN_EXTRA_PREFIXES,
} apis_authn_list;
/* Replaces one list with a copy of l. */
int apis_authn_config_set_list(apis_authn_config *cfg, apis_authn_list which,
                               const apis_strlist *l);

/* Reads the data of the extension-apiserver-authentication ConfigMap
 * (the "data" object: PEM strings and JSON-array strings). Missing keys
 * leave the setting empty (requestheader authentication is then off). */
int apis_authn_config_from_configmap(apis_authn_config *cfg, const cJSON *data, char *err,
                                     size_t errlen);

int apis_authn_config_has_requestheader(const apis_authn_config *cfg);
int apis_authn_config_has_client_ca(const apis_authn_config *cfg);

/* Front proxy check of a connection's certificate (leaf, and the untrusted
 * intermediates it sent, may be NULL). Returns KUBE_OK when trusted,
 * KUBE_ENOTFOUND when there is no certificate or no front-proxy CA, and
 * KUBE_EUNAUTHORIZED when verification fails (why goes to msg). */
int apis_authn_verify_front_proxy(const apis_authn_config *cfg, X509 *leaf, STACK_OF(X509) * chain,
                                  char *msg, size_t msglen);

/* The user the front-proxy headers name (call only for a trusted proxy).
 * Returns KUBE_OK with *out, KUBE_ENOTFOUND when no username header has a
 * value, or KUBE_ENOMEM. Groups and extras are not given
 * system:authenticated here. */
int apis_authn_from_headers(const apis_authn_config *cfg, const kube_httpreq_request *req,
                            apis_user **out);

/* Removes every front-proxy header (username, group and extra prefixes of
 * this configuration, and the X-Remote- defaults) from req. */
void apis_authn_strip_headers(const apis_authn_config *cfg, kube_httpreq_request *req);

/* Client certificate authentication against client-ca-file. Returns KUBE_OK
 * with *out (CN as name, O as groups), KUBE_ENOTFOUND when there is no
 * certificate, no client CA or an empty CN, KUBE_EUNAUTHORIZED when
 * verification fails (why goes to msg). */
int apis_authn_verify_client_cert(const apis_authn_config *cfg, X509 *leaf, STACK_OF(X509) * chain,
                                  apis_user **out, char *msg, size_t msglen);

/* The window in which every certificate the peer sent (leaf and the
 * intermediates, chain may be NULL) is valid: *from is the latest
 * NotBefore, *until the earliest NotAfter. An unreadable time gives an
 * empty window (0, 0), so callers verify again each time. */
void apis_authn_chain_validity(X509 *leaf, STACK_OF(X509) * chain, time_t *from, time_t *until);

/* The token of an "Authorization: Bearer <token>" header, as
 * k8s.io/apiserver's bearertoken authenticator reads it, copied into out
 * (size n). Returns KUBE_OK, KUBE_ENOTFOUND (no bearer token) or
 * KUBE_ERANGE (longer than n - 1). */
int apis_authn_bearer_token(const kube_httpreq_request *req, char *out, size_t n);

#endif
