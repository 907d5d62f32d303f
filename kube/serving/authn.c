/*
 * kube/serving/authn.c - who is asking: the identity rules of k8s.io/apiserver's
 * delegated authentication, without the network part (TokenReview lives in
 * delegate.h). The contract is in authn.h.
 */
#include "kube/serving/authn.h"
#include "kube/serving/authn_testing.h"

#include <ctype.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/util/array.h"
#include "kube/util/buf.h"
#include "kube/util/certkit.h"
#include "kube/serving/query.h"
#include "kube/util/errors.h"

#define AUTHENTICATED_GROUP "system:authenticated"
#define ANONYMOUS_USER "system:anonymous"

struct kube_authn_config {
    atomic_int refs;
    X509_STORE *requestheader_ca;
    X509_STORE *client_ca;
    kube_strlist lists[4]; /* indexed by kube_authn_list */
};

static int strlist_copy(kube_strlist *dst, const kube_strlist *src)
{
    kube_strlist fresh = {0};

    for (size_t i = 0; i < src->n; i++) {
        if (kube_strlist_add(&fresh, src->v[i]) != KUBE_OK) {
            kube_strlist_free(&fresh);
            return KUBE_ENOMEM;
        }
    }
    kube_strlist_free(dst);
    *dst = fresh;
    return KUBE_OK;
}

/* ---- users ---- */

kube_user *kube_user_new(const char *name)
{
    kube_user *u = calloc(1, sizeof(*u));

    if (!u)
        return NULL;
    u->name = kube_strdup(name);
    if (!u->name) {
        free(u);
        return NULL;
    }
    return u;
}

int kube_user_add_extra(kube_user *u, const char *key, const char *value)
{
    kube_user_extra *e;

    for (size_t i = 0; i < u->n_extra; i++)
        if (strcmp(u->extra[i].key, key) == 0)
            return kube_strlist_add(&u->extra[i].values, value);
    if (KUBE_ARRAY_RESERVE(u->extra, u->cap_extra, u->n_extra + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    e = u->extra;
    memset(&e[u->n_extra], 0, sizeof(*e));
    e[u->n_extra].key = kube_strdup(key);
    if (!e[u->n_extra].key)
        return KUBE_ENOMEM;
    u->n_extra++;
    return kube_strlist_add(&e[u->n_extra - 1].values, value);
}

int kube_user_add_authenticated(kube_user *u)
{
    if (strcmp(u->name, ANONYMOUS_USER) == 0 ||
        kube_strlist_contains(&u->groups, AUTHENTICATED_GROUP))
        return KUBE_OK;
    return kube_strlist_add(&u->groups, AUTHENTICATED_GROUP);
}

kube_user *kube_user_dup(const kube_user *u)
{
    kube_user *c = kube_user_new(u->name);
    int rc = c ? KUBE_OK : KUBE_ENOMEM;

    if (rc == KUBE_OK && u->uid && !(c->uid = kube_strdup(u->uid)))
        rc = KUBE_ENOMEM;
    if (rc == KUBE_OK)
        rc = strlist_copy(&c->groups, &u->groups);
    for (size_t i = 0; rc == KUBE_OK && i < u->n_extra; i++)
        for (size_t j = 0; rc == KUBE_OK && j < u->extra[i].values.n; j++)
            rc = kube_user_add_extra(c, u->extra[i].key, u->extra[i].values.v[j]);
    if (rc != KUBE_OK) {
        kube_user_free(c);
        return NULL;
    }
    return c;
}

void kube_user_free(kube_user *u)
{
    if (!u)
        return;
    free(u->name);
    free(u->uid);
    kube_strlist_free(&u->groups);
    for (size_t i = 0; i < u->n_extra; i++) {
        free(u->extra[i].key);
        kube_strlist_free(&u->extra[i].values);
    }
    free(u->extra);
    free(u);
}

/* ---- configuration snapshots ---- */

static int default_headers(kube_authn_config *cfg)
{
    int rc = kube_strlist_add(&cfg->lists[KUBE_AUTHN_USERNAME_HEADERS], "X-Remote-User");
    if (rc == KUBE_OK)
        rc = kube_strlist_add(&cfg->lists[KUBE_AUTHN_GROUP_HEADERS], "X-Remote-Group");
    if (rc == KUBE_OK)
        rc = kube_strlist_add(&cfg->lists[KUBE_AUTHN_EXTRA_PREFIXES], "X-Remote-Extra-");
    return rc;
}

int kube_authn_config_new(kube_authn_config **out)
{
    kube_authn_config *cfg = calloc(1, sizeof(*cfg));

    *out = NULL;
    if (!cfg)
        return KUBE_ENOMEM;
    atomic_init(&cfg->refs, 1);
    if (default_headers(cfg) != KUBE_OK) {
        kube_authn_config_unref(cfg);
        return KUBE_ENOMEM;
    }
    *out = cfg;
    return KUBE_OK;
}

kube_authn_config *kube_authn_config_ref(kube_authn_config *cfg)
{
    if (cfg)
        atomic_fetch_add(&cfg->refs, 1);
    return cfg;
}

void kube_authn_config_unref(kube_authn_config *cfg)
{
    if (!cfg || atomic_fetch_sub(&cfg->refs, 1) != 1)
        return;
    X509_STORE_free(cfg->requestheader_ca);
    X509_STORE_free(cfg->client_ca);
    for (size_t i = 0; i < sizeof(cfg->lists) / sizeof(cfg->lists[0]); i++)
        kube_strlist_free(&cfg->lists[i]);
    free(cfg);
}

static void set_err(char *err, size_t errlen, const char *source, const char *what)
{
    if (err && errlen)
        snprintf(err, errlen, "%s: %s", source, what);
}

/* Builds a store of every certificate in a PEM bundle. */
static int load_store(const char *pem, size_t len, const char *source, X509_STORE **out, char *err,
                      size_t errlen)
{
    STACK_OF(X509) *certs = NULL;
    X509_STORE *store = X509_STORE_new();
    int count = 0, rc = KUBE_OK, malformed;

    *out = NULL;
    if (!store || kube_certkit_read_certs(pem, len, &certs, &malformed) != KUBE_OK) {
        rc = KUBE_ENOMEM;
        goto done;
    }
    for (int i = 0; i < sk_X509_num(certs); i++)
        count += X509_STORE_add_cert(store, sk_X509_value(certs, i)) == 1;
    ERR_clear_error();
    if (count == 0) {
        set_err(err, errlen, source, "no PEM certificate found");
        rc = KUBE_EPARSE;
        goto done;
    }
    *out = store;
    store = NULL;
done:
    sk_X509_pop_free(certs, X509_free);
    X509_STORE_free(store);
    return rc;
}

int kube_authn_config_set_client_ca(kube_authn_config *cfg, const char *pem, size_t len,
                                    const char *source, char *err, size_t errlen)
{
    X509_STORE *store;
    int rc = load_store(pem, len, source, &store, err, errlen);

    if (rc != KUBE_OK)
        return rc;
    X509_STORE_free(cfg->client_ca);
    cfg->client_ca = store;
    return KUBE_OK;
}

int kube_authn_config_set_requestheader_ca(kube_authn_config *cfg, const char *pem, size_t len,
                                           const char *source, char *err, size_t errlen)
{
    X509_STORE *store;
    int rc = load_store(pem, len, source, &store, err, errlen);

    if (rc != KUBE_OK)
        return rc;
    X509_STORE_free(cfg->requestheader_ca);
    cfg->requestheader_ca = store;
    return KUBE_OK;
}

int kube_authn_config_set_list(kube_authn_config *cfg, kube_authn_list which, const kube_strlist *l)
{
    return strlist_copy(&cfg->lists[which], l);
}

/* A data value holding a JSON array of strings, as kube-apiserver writes
 * requestheader-allowed-names and the header lists. */
static int json_string_array(const char *text, const char *key, kube_strlist *out, char *err,
                             size_t errlen)
{
    cJSON *arr = cJSON_Parse(text);
    const cJSON *it;
    int rc = KUBE_OK;

    if (!cJSON_IsArray(arr)) {
        set_err(err, errlen, key, "not a JSON array of strings");
        cJSON_Delete(arr);
        return KUBE_EPARSE;
    }
    cJSON_ArrayForEach(it, arr)
    {
        if (!cJSON_IsString(it)) {
            set_err(err, errlen, key, "not a JSON array of strings");
            rc = KUBE_EPARSE;
            break;
        }
        if (*it->valuestring && (rc = kube_strlist_add(out, it->valuestring)) != KUBE_OK)
            break;
    }
    cJSON_Delete(arr);
    return rc;
}

static const char *data_string(const cJSON *data, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int configmap_list(kube_authn_config *cfg, const cJSON *data, const char *key,
                          kube_authn_list which, int keep_default, char *err, size_t errlen)
{
    const char *text = data_string(data, key);
    kube_strlist l = {0};
    int rc;

    if (!text && keep_default)
        return KUBE_OK;
    if (text && (rc = json_string_array(text, key, &l, err, errlen)) != KUBE_OK) {
        kube_strlist_free(&l);
        return rc;
    }
    rc = kube_authn_config_set_list(cfg, which, &l);
    kube_strlist_free(&l);
    return rc;
}

int kube_authn_config_from_configmap(kube_authn_config *cfg, const cJSON *data, char *err,
                                     size_t errlen)
{
    const char *client = data_string(data, "client-ca-file");
    const char *rh = data_string(data, "requestheader-client-ca-file");
    int rc = KUBE_OK;

    if (!cJSON_IsObject(data)) {
        set_err(err, errlen, "data", "missing");
        return KUBE_EPARSE;
    }
    if (client && *client)
        rc = kube_authn_config_set_client_ca(cfg, client, strlen(client), "client-ca-file", err,
                                             errlen);
    if (rc == KUBE_OK && rh && *rh)
        rc = kube_authn_config_set_requestheader_ca(cfg, rh, strlen(rh),
                                                    "requestheader-client-ca-file", err, errlen);
    if (rc == KUBE_OK)
        rc = configmap_list(cfg, data, "requestheader-allowed-names", KUBE_AUTHN_ALLOWED_NAMES, 0,
                            err, errlen);
    if (rc == KUBE_OK)
        rc = configmap_list(cfg, data, "requestheader-username-headers",
                            KUBE_AUTHN_USERNAME_HEADERS, 0, err, errlen);
    if (rc == KUBE_OK)
        rc = configmap_list(cfg, data, "requestheader-group-headers", KUBE_AUTHN_GROUP_HEADERS, 0,
                            err, errlen);
    if (rc == KUBE_OK)
        rc = configmap_list(cfg, data, "requestheader-extra-headers-prefix",
                            KUBE_AUTHN_EXTRA_PREFIXES, 0, err, errlen);
    return rc;
}

int kube_authn_config_has_requestheader(const kube_authn_config *cfg)
{
    return cfg->requestheader_ca != NULL;
}

int kube_authn_config_has_client_ca(const kube_authn_config *cfg)
{
    return cfg->client_ca != NULL;
}

/* ---- certificate verification ---- */

/* The subject CN as Go reads it: the last commonName attribute wins. A CN
 * with an embedded NUL or too long for out reads as empty. */
static void subject_cn(X509 *x, char *out, size_t n)
{
    X509_NAME *name = X509_get_subject_name(x);
    int idx = -1, last = -1;
    unsigned char *utf8 = NULL;
    int len;

    out[0] = '\0';
    while (name && (idx = X509_NAME_get_index_by_NID(name, NID_commonName, idx)) >= 0)
        last = idx;
    if (last < 0)
        return;
    len = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, last)));
    if (len >= 0 && (size_t)len < n && strlen((char *)utf8) == (size_t)len)
        memcpy(out, utf8, (size_t)len + 1);
    OPENSSL_free(utf8);
}

/* Go's x509 checks the requested key usage on every certificate of the
 * chain that restricts its usages (an absent EKU extension, or
 * anyExtendedKeyUsage, allows all). */
static int chain_allows_client_auth(STACK_OF(X509) * chain)
{
    for (int i = 0; i < sk_X509_num(chain); i++) {
        X509 *x = sk_X509_value(chain, i);
        uint32_t xku;
        if (!(X509_get_extension_flags(x) & EXFLAG_XKUSAGE))
            continue;
        xku = X509_get_extended_key_usage(x);
        if (!(xku & (XKU_SSL_CLIENT | XKU_ANYEKU)))
            return 0;
    }
    return 1;
}

static int verify_chain(X509_STORE *store, X509 *leaf, STACK_OF(X509) * intermediates, char *msg,
                        size_t msglen)
{
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    char cn[256];
    int rc = KUBE_EUNAUTHORIZED;

    subject_cn(leaf, cn, sizeof(cn));
    if (!ctx || X509_STORE_CTX_init(ctx, store, leaf, intermediates) != 1) {
        X509_STORE_CTX_free(ctx);
        return KUBE_ENOMEM;
    }
    X509_STORE_CTX_set_flags(ctx, X509_V_FLAG_PARTIAL_CHAIN);
    if (X509_verify_cert(ctx) != 1) {
        snprintf(msg, msglen, "verifying certificate CN=%s failed: %s", cn,
                 X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
    } else if (!chain_allows_client_auth(X509_STORE_CTX_get0_chain(ctx))) {
        snprintf(msg, msglen,
                 "verifying certificate CN=%s failed: x509: certificate specifies an incompatible "
                 "key usage",
                 cn);
    } else {
        rc = KUBE_OK;
    }
    X509_STORE_CTX_free(ctx);
    ERR_clear_error();
    return rc;
}

int kube_authn_verify_front_proxy(const kube_authn_config *cfg, X509 *leaf, STACK_OF(X509) * chain,
                                  char *msg, size_t msglen)
{
    const kube_strlist *allowed = &cfg->lists[KUBE_AUTHN_ALLOWED_NAMES];
    char cn[256];
    int rc;

    if (!leaf || !cfg->requestheader_ca)
        return KUBE_ENOTFOUND;
    rc = verify_chain(cfg->requestheader_ca, leaf, chain, msg, msglen);
    if (rc != KUBE_OK)
        return rc;
    subject_cn(leaf, cn, sizeof(cn));
    if (allowed->n > 0 && !kube_strlist_contains(allowed, cn)) {
        snprintf(msg, msglen, "x509: subject with cn=%s is not in the allowed list", cn);
        return KUBE_EUNAUTHORIZED;
    }
    return KUBE_OK;
}

static int add_subject_orgs(kube_user *u, X509 *leaf)
{
    X509_NAME *name = X509_get_subject_name(leaf);
    int idx = -1;

    while ((idx = X509_NAME_get_index_by_NID(name, NID_organizationName, idx)) >= 0) {
        X509_NAME_ENTRY *e = X509_NAME_get_entry(name, idx);
        unsigned char *utf8 = NULL;
        int len = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(e));
        int rc;
        if (len < 0)
            continue;
        rc = (strlen((char *)utf8) == (size_t)len) ? kube_strlist_add(&u->groups, (char *)utf8)
                                                   : KUBE_OK;
        OPENSSL_free(utf8);
        if (rc != KUBE_OK)
            return rc;
    }
    return KUBE_OK;
}

int kube_authn_verify_client_cert(const kube_authn_config *cfg, X509 *leaf, STACK_OF(X509) * chain,
                                  kube_user **out, char *msg, size_t msglen)
{
    char cn[256];
    kube_user *u;
    int rc;

    *out = NULL;
    if (!leaf || !cfg->client_ca)
        return KUBE_ENOTFOUND;
    rc = verify_chain(cfg->client_ca, leaf, chain, msg, msglen);
    if (rc != KUBE_OK)
        return rc;
    subject_cn(leaf, cn, sizeof(cn));
    if (cn[0] == '\0')
        return KUBE_ENOTFOUND;
    u = kube_user_new(cn);
    if (!u || add_subject_orgs(u, leaf) != KUBE_OK) {
        kube_user_free(u);
        return KUBE_ENOMEM;
    }
    *out = u;
    return KUBE_OK;
}

static int asn1_time(const ASN1_TIME *t, time_t *out)
{
    struct tm tm;

    if (!t || ASN1_TIME_to_tm(t, &tm) != 1)
        return KUBE_EPARSE;
    *out = timegm(&tm);
    return KUBE_OK;
}

/* Narrows [*from, *until) to one certificate's validity. */
static int narrow_validity(X509 *x, time_t *from, time_t *until)
{
    time_t nb, na;

    if (asn1_time(X509_get0_notBefore(x), &nb) != KUBE_OK ||
        asn1_time(X509_get0_notAfter(x), &na) != KUBE_OK)
        return KUBE_EPARSE;
    if (nb > *from)
        *from = nb;
    if (na < *until)
        *until = na;
    return KUBE_OK;
}

void kube_authn_chain_validity(X509 *leaf, STACK_OF(X509) * chain, time_t *from, time_t *until)
{
    int rc = KUBE_OK;

    *from = 0;
    *until = (time_t)INT64_MAX;
    if (leaf)
        rc = narrow_validity(leaf, from, until);
    for (int i = 0; rc == KUBE_OK && chain && i < sk_X509_num(chain); i++)
        rc = narrow_validity(sk_X509_value(chain, i), from, until);
    if (rc != KUBE_OK)
        *from = *until = 0;
}

/* ---- front-proxy headers ---- */

static int is_blank(const char *s)
{
    for (; *s; s++)
        if (!isspace((unsigned char)*s))
            return 0;
    return 1;
}

static int add_groups(const kube_authn_config *cfg, const kube_httpreq_request *req, kube_user *u)
{
    const kube_strlist *names = &cfg->lists[KUBE_AUTHN_GROUP_HEADERS];

    for (size_t n = 0; n < names->n; n++) {
        for (size_t i = 0; i < req->n_headers; i++) {
            const kube_httpreq_header *h = &req->headers[i];
            if (strcasecmp(h->name, names->v[n]) != 0 || is_blank(h->value))
                continue;
            if (kube_strlist_add(&u->groups, h->value) != KUBE_OK)
                return KUBE_ENOMEM;
        }
    }
    return KUBE_OK;
}

/* The extra key is the lowercased rest of the header name,
 * url.PathUnescape'd (kept as is when the escape is malformed or the key
 * does not fit out, n bytes), as k8s.io/apiserver's unescapeExtraKey. */
static int extra_key(const char *rest, char *out, size_t n)
{
    char lower[256];
    size_t len = 0, outn;

    for (; rest[len] && len + 1 < sizeof(lower); len++)
        lower[len] = (char)tolower((unsigned char)rest[len]);
    lower[len] = '\0';
    if (kube_path_unescape(lower, len, out, n, &outn) != KUBE_OK)
        kube_strlcpy(out, lower, n);
    return KUBE_OK;
}

static int add_extras(const kube_authn_config *cfg, const kube_httpreq_request *req, kube_user *u)
{
    const kube_strlist *prefixes = &cfg->lists[KUBE_AUTHN_EXTRA_PREFIXES];
    char key[256];

    for (size_t p = 0; p < prefixes->n; p++) {
        size_t pl = strlen(prefixes->v[p]);
        for (size_t i = 0; i < req->n_headers; i++) {
            const kube_httpreq_header *h = &req->headers[i];
            if (strncasecmp(h->name, prefixes->v[p], pl) != 0 || h->name[pl] == '\0')
                continue;
            extra_key(h->name + pl, key, sizeof(key));
            if (kube_user_add_extra(u, key, h->value) != KUBE_OK)
                return KUBE_ENOMEM;
        }
    }
    return KUBE_OK;
}

int kube_authn_from_headers(const kube_authn_config *cfg, const kube_httpreq_request *req,
                            kube_user **out)
{
    const kube_strlist *names = &cfg->lists[KUBE_AUTHN_USERNAME_HEADERS];
    const char *name = NULL;
    kube_user *u;

    *out = NULL;
    for (size_t i = 0; i < names->n && !name; i++) {
        const char *v = kube_httpreq_header_get(req, names->v[i]);
        if (v && *v)
            name = v;
    }
    if (!name)
        return KUBE_ENOTFOUND;
    u = kube_user_new(name);
    if (!u || add_groups(cfg, req, u) != KUBE_OK || add_extras(cfg, req, u) != KUBE_OK) {
        kube_user_free(u);
        return KUBE_ENOMEM;
    }
    *out = u;
    return KUBE_OK;
}

static void remove_exact(kube_httpreq_request *req, const char *name)
{
    size_t kept = 0;

    for (size_t i = 0; i < req->n_headers; i++)
        if (strcasecmp(req->headers[i].name, name) != 0)
            req->headers[kept++] = req->headers[i];
    req->n_headers = kept;
}

void kube_authn_strip_headers(const kube_authn_config *cfg, kube_httpreq_request *req)
{
    const kube_strlist *users = &cfg->lists[KUBE_AUTHN_USERNAME_HEADERS];
    const kube_strlist *groups = &cfg->lists[KUBE_AUTHN_GROUP_HEADERS];
    const kube_strlist *prefixes = &cfg->lists[KUBE_AUTHN_EXTRA_PREFIXES];

    for (size_t i = 0; i < users->n; i++)
        remove_exact(req, users->v[i]);
    for (size_t i = 0; i < groups->n; i++)
        remove_exact(req, groups->v[i]);
    for (size_t i = 0; i < prefixes->n; i++)
        kube_httpreq_header_remove_prefix(req, prefixes->v[i]);
    kube_httpreq_header_remove_prefix(req, "X-Remote-");
}

int kube_authn_bearer_token(const kube_httpreq_request *req, char *out, size_t n)
{
    const char *auth = kube_httpreq_header_get(req, "Authorization");
    const char *tok, *end;

    if (!auth)
        return KUBE_ENOTFOUND;
    while (isspace((unsigned char)*auth))
        auth++;
    if (strncasecmp(auth, "bearer ", 7) != 0)
        return KUBE_ENOTFOUND;
    tok = auth + 7;
    end = strchr(tok, ' ');
    if (!end)
        end = tok + strlen(tok);
    while (end > tok && isspace((unsigned char)end[-1]))
        end--;
    if (end == tok)
        return KUBE_ENOTFOUND;
    if ((size_t)(end - tok) + 1 > n)
        return KUBE_ERANGE;
    memcpy(out, tok, (size_t)(end - tok));
    out[end - tok] = '\0';
    return KUBE_OK;
}
