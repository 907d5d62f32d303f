/*
 * kube/serving/delegate.c - delegated authentication and authorization: the
 * TokenReview (authentication.k8s.io/v1) and SubjectAccessReview
 * (authorization.k8s.io/v1) round trips to kube-apiserver, with the caches
 * and always-allow rules of k8s.io/apiserver's delegating options: - bearer
 * tokens: TokenReview answers (valid and invalid) cached for the token TTL
 * (default 10 s) under the token's SHA-256, never the token; transport
 * failures are not cached; - authorization: paths in always_allow_paths
 * (/healthz, /readyz, /livez) and users in always_allow_groups
 * (system:masters, which kube-apiserver itself never denies) skip the review;
 * otherwise a SubjectAccessReview decides, allowed answers cached for
 * allow_ttl and denied ones for deny_ttl (10 s each by default). The contract
 * is in delegate.h.
 */
#include "kube/serving/delegate.h"

#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/serving/cache.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"

#define CACHE_ENTRIES 8192
#define TOKENREVIEW_PATH "/apis/authentication.k8s.io/v1/tokenreviews"
#define SAR_PATH "/apis/authorization.k8s.io/v1/subjectaccessreviews"
#define INVALID_TOKEN "-" /* cached value of a token kube-apiserver rejected */

struct kube_delegate {
    kube_client *authn_client;
    kube_client *authz_client;
    int64_t token_ttl_ms, allow_ttl_ms, deny_ttl_ms;
    kube_strlist allow_paths, allow_groups;
    const kube_serving_observer *observer;
    kube_ttl_cache *tokens;
    kube_ttl_cache *decisions;
};

static int copy_list(kube_strlist *dst, const kube_strlist *src)
{
    for (size_t i = 0; src && i < src->n; i++)
        if (kube_strlist_add(dst, src->v[i]) != KUBE_OK)
            return KUBE_ENOMEM;
    return KUBE_OK;
}

int kube_delegate_new(const kube_delegate_options *o, kube_delegate **out)
{
    kube_delegate *d = calloc(1, sizeof(*d));
    int rc;

    *out = NULL;
    if (!d)
        return KUBE_ENOMEM;
    d->authn_client = o->authn_client;
    d->authz_client = o->authz_client;
    d->token_ttl_ms = o->token_ttl_ms;
    d->allow_ttl_ms = o->allow_ttl_ms;
    d->deny_ttl_ms = o->deny_ttl_ms;
    d->observer = o->observer;
    rc = copy_list(&d->allow_paths, o->always_allow_paths);
    if (rc == KUBE_OK)
        rc = copy_list(&d->allow_groups, o->always_allow_groups);
    if (rc == KUBE_OK)
        rc = kube_ttl_cache_new(CACHE_ENTRIES, &d->tokens);
    if (rc == KUBE_OK)
        rc = kube_ttl_cache_new(CACHE_ENTRIES, &d->decisions);
    if (rc != KUBE_OK) {
        kube_delegate_free(d);
        return rc;
    }
    *out = d;
    return KUBE_OK;
}

void kube_delegate_free(kube_delegate *d)
{
    if (!d)
        return;
    kube_strlist_free(&d->allow_paths);
    kube_strlist_free(&d->allow_groups);
    kube_ttl_cache_free(d->tokens);
    kube_ttl_cache_free(d->decisions);
    free(d);
}

/* ---- users as JSON (the cache stores them in this form) ---- */

static cJSON *user_to_json(const kube_user *u)
{
    cJSON *j = cJSON_CreateObject();
    cJSON *groups = cJSON_AddArrayToObject(j, "groups");
    cJSON *extra = cJSON_AddObjectToObject(j, "extra");

    if (!j || !groups || !extra || !cJSON_AddStringToObject(j, "username", u->name) ||
        (u->uid && !cJSON_AddStringToObject(j, "uid", u->uid)))
        goto nomem;
    for (size_t i = 0; i < u->groups.n; i++)
        if (!cJSON_AddItemToArray(groups, cJSON_CreateString(u->groups.v[i])))
            goto nomem;
    for (size_t i = 0; i < u->n_extra; i++) {
        cJSON *vals = cJSON_AddArrayToObject(extra, u->extra[i].key);
        if (!vals)
            goto nomem;
        for (size_t k = 0; k < u->extra[i].values.n; k++)
            if (!cJSON_AddItemToArray(vals, cJSON_CreateString(u->extra[i].values.v[k])))
                goto nomem;
    }
    return j;
nomem:
    cJSON_Delete(j);
    return NULL;
}

static int add_string_items(const cJSON *arr, kube_strlist *l)
{
    const cJSON *it;

    cJSON_ArrayForEach(it, arr)
    {
        if (cJSON_IsString(it) && kube_strlist_add(l, it->valuestring) != KUBE_OK)
            return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

/* Reads a TokenReview status.user (or our cached form). */
static int user_from_json(const cJSON *j, kube_user **out)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "username");
    const cJSON *uid = cJSON_GetObjectItemCaseSensitive(j, "uid");
    const cJSON *extra = cJSON_GetObjectItemCaseSensitive(j, "extra");
    const cJSON *kv, *v;

    if (!cJSON_IsObject(extra))
        extra = NULL;
    kube_user *u;
    int rc;

    *out = NULL;
    if (!cJSON_IsString(name) || !*name->valuestring)
        return KUBE_EPARSE;
    u = kube_user_new(name->valuestring);
    if (!u)
        return KUBE_ENOMEM;
    rc = add_string_items(cJSON_GetObjectItemCaseSensitive(j, "groups"), &u->groups);
    if (rc == KUBE_OK && cJSON_IsString(uid) && *uid->valuestring &&
        !(u->uid = kube_strdup(uid->valuestring)))
        rc = KUBE_ENOMEM;
    cJSON_ArrayForEach(kv, extra)
    {
        cJSON_ArrayForEach(v, kv)
        {
            if (rc == KUBE_OK && cJSON_IsString(v))
                rc = kube_user_add_extra(u, kv->string, v->valuestring);
        }
    }
    if (rc != KUBE_OK) {
        kube_user_free(u);
        return rc;
    }
    *out = u;
    return KUBE_OK;
}

/* ---- TokenReview ---- */

static void token_key(const char *token, char key[2 * SHA256_DIGEST_LENGTH + 4])
{
    unsigned char md[SHA256_DIGEST_LENGTH];

    SHA256((const unsigned char *)token, strlen(token), md);
    memcpy(key, "tr:", 3);
    for (size_t i = 0; i < sizeof(md); i++)
        snprintf(key + 3 + 2 * i, 3, "%02x", md[i]);
}

int kube_delegate_token_cached(kube_delegate *d, const char *token, kube_user **out)
{
    char key[2 * SHA256_DIGEST_LENGTH + 4];
    char *cached = NULL;
    cJSON *j;
    int rc;

    *out = NULL;
    token_key(token, key);
    rc = kube_ttl_cache_get(d->tokens, key, &cached);
    if (rc != KUBE_OK)
        return rc;
    if (strcmp(cached, INVALID_TOKEN) == 0) {
        free(cached);
        return KUBE_EUNAUTHORIZED;
    }
    j = cJSON_Parse(cached);
    free(cached);
    rc = j ? user_from_json(j, out) : KUBE_EPARSE;
    cJSON_Delete(j);
    return rc;
}

static int tokenreview_body(const char *token, char **out)
{
    cJSON *tr = cJSON_CreateObject();
    cJSON *spec = cJSON_AddObjectToObject(tr, "spec");

    *out = NULL;
    if (tr && spec && cJSON_AddStringToObject(tr, "apiVersion", "authentication.k8s.io/v1") &&
        cJSON_AddStringToObject(tr, "kind", "TokenReview") &&
        cJSON_AddStringToObject(spec, "token", token))
        *out = cJSON_PrintUnformatted(tr);
    cJSON_Delete(tr);
    return *out ? KUBE_OK : KUBE_ENOMEM;
}

/* Reads status of a TokenReview answer into *out (NULL: not authenticated). */
static int tokenreview_result(const char *body, kube_user **out)
{
    cJSON *j = cJSON_Parse(body);
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(j, "status");
    const cJSON *authed = cJSON_GetObjectItemCaseSensitive(status, "authenticated");
    int rc = KUBE_OK;

    *out = NULL;
    if (!cJSON_IsObject(status))
        rc = KUBE_EPARSE;
    else if (cJSON_IsTrue(authed))
        rc = user_from_json(cJSON_GetObjectItemCaseSensitive(status, "user"), out);
    cJSON_Delete(j);
    return rc;
}

static void cache_token(kube_delegate *d, const char *token, const kube_user *u)
{
    char key[2 * SHA256_DIGEST_LENGTH + 4];
    cJSON *j = u ? user_to_json(u) : NULL;
    char *text = j ? cJSON_PrintUnformatted(j) : NULL;

    token_key(token, key);
    if (!u || text)
        kube_ttl_cache_put(d->tokens, key, u ? text : INVALID_TOKEN, d->token_ttl_ms);
    free(text);
    cJSON_Delete(j);
}

int kube_delegate_authenticate_token(kube_delegate *d, const char *token, kube_user **out)
{
    kube_response resp = {0};
    char *body = NULL;
    int rc = kube_delegate_token_cached(d, token, out);

    if (rc != KUBE_ENOTFOUND)
        return rc;
    if (!d->authn_client)
        return KUBE_EUNAUTHORIZED;
    rc = tokenreview_body(token, &body);
    if (rc == KUBE_OK)
        rc = kube_client_do(d->authn_client, "POST", TOKENREVIEW_PATH, "application/json", body,
                            strlen(body), &resp);
    free(body);
    if (rc == KUBE_OK)
        rc = tokenreview_result(resp.body ? resp.body : "", out);
    else
        KLOG_WARN("TokenReview failed: %s (%s)", kube_strerror(rc), resp.status.message);
    kube_response_clear(&resp);
    if (rc != KUBE_OK)
        return rc;
    cache_token(d, token, *out);
    return *out ? KUBE_OK : KUBE_EUNAUTHORIZED;
}

/* ---- SubjectAccessReview ---- */

static int add_attr(cJSON *o, const char *key, const char *v)
{
    return !v || !*v || cJSON_AddStringToObject(o, key, v) != NULL;
}

static int add_attributes(cJSON *spec, const kube_authz_attrs *a)
{
    cJSON *attrs;

    if (!a->resource_request) {
        attrs = cJSON_AddObjectToObject(spec, "nonResourceAttributes");
        return attrs && add_attr(attrs, "path", a->path) && add_attr(attrs, "verb", a->verb);
    }
    attrs = cJSON_AddObjectToObject(spec, "resourceAttributes");
    return attrs && add_attr(attrs, "namespace", a->namespace_) &&
           add_attr(attrs, "verb", a->verb) && add_attr(attrs, "group", a->group) &&
           add_attr(attrs, "version", a->version) && add_attr(attrs, "resource", a->resource) &&
           add_attr(attrs, "subresource", a->subresource) && add_attr(attrs, "name", a->name);
}

static int add_user(cJSON *spec, const kube_user *u)
{
    cJSON *uj = user_to_json(u);
    cJSON *groups, *extra;

    if (!uj)
        return 0;
    groups = cJSON_DetachItemFromObject(uj, "groups");
    extra = cJSON_DetachItemFromObject(uj, "extra");
    cJSON_Delete(uj);
    if (!add_attr(spec, "user", u->name) || !groups || !extra) {
        cJSON_Delete(groups);
        cJSON_Delete(extra);
        return 0;
    }
    cJSON_AddItemToObject(spec, "groups", groups);
    if (cJSON_GetArraySize(extra) > 0)
        cJSON_AddItemToObject(spec, "extra", extra);
    else
        cJSON_Delete(extra);
    return add_attr(spec, "uid", u->uid);
}

cJSON *kube_delegate_sar_body(const kube_authz_attrs *a)
{
    cJSON *sar = cJSON_CreateObject();
    cJSON *spec = cJSON_CreateObject();

    if (!sar || !spec || !cJSON_AddStringToObject(sar, "apiVersion", "authorization.k8s.io/v1") ||
        !cJSON_AddStringToObject(sar, "kind", "SubjectAccessReview")) {
        cJSON_Delete(sar);
        cJSON_Delete(spec);
        return NULL;
    }
    cJSON_AddItemToObject(sar, "spec", spec);
    if (!add_attributes(spec, a) || !add_user(spec, a->user)) {
        cJSON_Delete(sar);
        return NULL;
    }
    return sar;
}

int kube_authz_path_always_allowed(const kube_strlist *paths, const char *path)
{
    for (size_t i = 0; paths && path && i < paths->n; i++) {
        const char *p = paths->v[i];
        size_t n = strlen(p);
        if (n && p[n - 1] == '*' ? strncmp(p, path, n - 1) == 0 : strcmp(p, path) == 0)
            return 1;
    }
    return 0;
}

static int always_allowed(kube_delegate *d, const kube_authz_attrs *a)
{
    if (!a->resource_request && kube_authz_path_always_allowed(&d->allow_paths, a->path))
        return 1;
    for (size_t i = 0; i < a->user->groups.n; i++)
        if (kube_strlist_contains(&d->allow_groups, a->user->groups.v[i]))
            return 1;
    return 0;
}

/* Cached decisions are "1<reason>" or "0<reason>", keyed by the review. */
static int decision_from_cache(kube_delegate *d, const char *key, kube_authz_decision *out)
{
    char *v = NULL;
    int rc = kube_ttl_cache_get(d->decisions, key, &v);

    if (rc != KUBE_OK)
        return rc;
    out->allowed = v[0] == '1';
    kube_strlcpy(out->reason, v + 1, sizeof(out->reason));
    free(v);
    return KUBE_OK;
}

static void metric(kube_delegate *d, kube_authz_result r)
{
    kube_observe_authz(d->observer, r);
}

static char *review_key(const kube_authz_attrs *a)
{
    cJSON *sar = kube_delegate_sar_body(a);
    char *key = sar ? cJSON_PrintUnformatted(sar) : NULL;

    cJSON_Delete(sar);
    return key;
}

int kube_delegate_authorize_cached(kube_delegate *d, const kube_authz_attrs *a,
                                   kube_authz_decision *out)
{
    char *key;
    int rc;

    memset(out, 0, sizeof(*out));
    if (always_allowed(d, a)) {
        out->allowed = 1;
        metric(d, KUBE_AUTHZ_ALWAYS_ALLOWED);
        return KUBE_OK;
    }
    key = review_key(a);
    if (!key)
        return KUBE_ENOMEM;
    rc = decision_from_cache(d, key, out);
    free(key);
    if (rc == KUBE_OK)
        metric(d, KUBE_AUTHZ_CACHE_HIT);
    return rc;
}

static int read_decision(const char *body, kube_authz_decision *out)
{
    cJSON *j = cJSON_Parse(body);
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(j, "status");
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(status, "reason");
    int rc = KUBE_OK;

    if (!cJSON_IsObject(status))
        rc = KUBE_EPARSE;
    else {
        out->allowed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(status, "allowed"));
        if (cJSON_IsString(reason))
            kube_strlcpy(out->reason, reason->valuestring, sizeof(out->reason));
    }
    cJSON_Delete(j);
    return rc;
}

static void cache_decision(kube_delegate *d, const char *key, const kube_authz_decision *dec)
{
    kube_buf v = KUBE_BUF_INIT;

    if (kube_buf_printf(&v, "%c%s", dec->allowed ? '1' : '0', dec->reason) == KUBE_OK)
        kube_ttl_cache_put(d->decisions, key, v.data,
                           dec->allowed ? d->allow_ttl_ms : d->deny_ttl_ms);
    kube_buf_free(&v);
}

static int review(kube_delegate *d, const char *key, kube_authz_decision *out)
{
    kube_response resp = {0};
    int rc = kube_client_do(d->authz_client, "POST", SAR_PATH, "application/json", key, strlen(key),
                            &resp);

    if (rc == KUBE_OK)
        rc = read_decision(resp.body ? resp.body : "", out);
    else
        KLOG_WARN("SubjectAccessReview failed: %s (%s)", kube_strerror(rc), resp.status.message);
    kube_response_clear(&resp);
    return rc;
}

int kube_delegate_authorize(kube_delegate *d, const kube_authz_attrs *a, kube_authz_decision *out)
{
    int rc = kube_delegate_authorize_cached(d, a, out);
    char *key;

    if (rc != KUBE_ENOTFOUND)
        return rc;
    if (!d->authz_client) {
        metric(d, KUBE_AUTHZ_DENIED);
        return KUBE_OK; /* no authorizer: nothing but the always-allow rules */
    }
    key = review_key(a);
    if (!key)
        return KUBE_ENOMEM;
    rc = review(d, key, out);
    if (rc == KUBE_OK) {
        cache_decision(d, key, out);
        metric(d, out->allowed ? KUBE_AUTHZ_ALLOWED : KUBE_AUTHZ_DENIED);
    } else {
        metric(d, KUBE_AUTHZ_ERROR);
    }
    free(key);
    return rc;
}
