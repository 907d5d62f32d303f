/*
 * tests/emulator/impersonation.c - user impersonation as kube-apiserver's
 * WithImpersonation filter does it (kubectl --as, --as-group, --as-uid):
 *
 *   Impersonate-User: NAME          verb impersonate on users NAME (core), or
 *                                   serviceaccounts NAME in NS for
 *                                   system:serviceaccount:NS:NAME (NS a
 *                                   DNS-1123 label, NAME a subdomain)
 *   Impersonate-Group: G (repeated) verb impersonate on groups G
 *   Impersonate-Extra-KEY: V        verb impersonate on userextras/key V
 *                                   (key lower-cased and %-unescaped)
 *   Impersonate-Uid: UID            verb impersonate on uids UID
 *
 * checked in that order, each as the requester through the authorizer. The
 * first refused check is answered 403 Forbidden for those acting-as
 * attributes, e.g. users "alice" is forbidden: User "bob" cannot
 * impersonate resource "users" in API group "" at the cluster scope
 * (details {name, kind}): the authenticator keeps the requester and notes
 * the refusal, which authz.c's authorizer turns into that answer. Otherwise
 * the request runs as the impersonated user: its groups are those asked
 * for (a service account without Impersonate-Group gets
 * system:serviceaccounts and system:serviceaccounts:NS), system:authenticated
 * is added by the server. Groups, uid or extras without Impersonate-User
 * answer 401 here (kube-apiserver: 500, plain text).
 *
 * Also the single entry point authz.c calls after authentication
 * (authz_ext.h), which first notes the request facts RBAC needs.
 *
 * Threads: the refusal is per thread (one request at a time per thread).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "authz_ext.h"
#include "kube/util/buf.h"
#include "kube/util/log.h"

#define EXTRA_PREFIX "Impersonate-Extra-"
#define SA_PREFIX "system:serviceaccount:"

/* The acting-as attributes of the impersonation this thread's request was
 * refused. Names point into the request's headers; namespace and extra
 * key are copied here (a key beyond 255 bytes is shortened in the 403). */
typedef struct refusal {
    int pending;
    emu_attrs attrs;
    char ns[64];
    char sub[256];
} refusal;

static __thread refusal t_refusal;

/* What one check asks: resource (with sub for userextras) NAME in NS. */
typedef struct acting_as {
    const char *resource;
    const char *sub;
    const char *ns;
    const char *name;
} acting_as;

static void note_refusal(const emu_attrs *a)
{
    refusal *r = &t_refusal;

    r->pending = 1;
    r->attrs = *a;
    snprintf(r->ns, sizeof(r->ns), "%s", a->namespace_);
    snprintf(r->sub, sizeof(r->sub), "%s", a->subresource);
    r->attrs.namespace_ = r->ns;
    r->attrs.subresource = r->sub;
}

/* Asks may whether u may impersonate what; notes the refusal when not. */
static int may_impersonate(const emu_user *u, emu_authz_may_fn may, const acting_as *what)
{
    int auth_group = !strcmp(what->resource, "userextras") || !strcmp(what->resource, "uids");
    emu_attrs a = {.is_resource = 1,
                   .verb = "impersonate",
                   .path = "",
                   .api_prefix = auth_group ? "apis" : "api",
                   .api_group = auth_group ? "authentication.k8s.io" : "",
                   .api_version = "v1",
                   .namespace_ = what->ns,
                   .resource = what->resource,
                   .subresource = what->sub,
                   .name = what->name};

    if (may(u, &a))
        return 1;
    KLOG_V(1, "impersonation: %s may not impersonate %s%s%s \"%s\"", u->name, what->resource,
           *what->sub ? "/" : "", what->sub, what->name);
    note_refusal(&a);
    return 0;
}

/* A DNS-1123 label (dots 0) or subdomain (dots 1) of n bytes. */
static int is_dns_name(const char *s, size_t n, int dots, size_t max)
{
    if (n == 0 || n > max || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isupper(c) || !(isalnum(c) || c == '-' || (dots && c == '.')))
            return 0;
        if (c == '.' && (s[i - 1] == '.' || s[i + 1] == '.' || s[i - 1] == '-' || s[i + 1] == '-'))
            return 0;
    }
    return 1;
}

/* serviceaccount.SplitUsername: 1 and ns (size n) + *name for a valid
 * system:serviceaccount:NS:NAME, else 0 (then it is a plain user name). */
static int split_sa_username(const char *user, char *ns, size_t n, const char **name)
{
    const char *rest, *colon;

    if (strncmp(user, SA_PREFIX, sizeof(SA_PREFIX) - 1) != 0)
        return 0;
    rest = user + sizeof(SA_PREFIX) - 1;
    colon = strchr(rest, ':');
    if (!colon || strchr(colon + 1, ':') || !is_dns_name(rest, (size_t)(colon - rest), 0, 63) ||
        !is_dns_name(colon + 1, strlen(colon + 1), 1, 253) || (size_t)(colon - rest) >= n)
        return 0;
    memcpy(ns, rest, (size_t)(colon - rest));
    ns[colon - rest] = '\0';
    *name = colon + 1;
    return 1;
}

/* The extra key of an Impersonate-Extra-* header name: lower-cased, then
 * %-unescaped (url.PathUnescape; kept as is when malformed). Caller frees. */
static char *extra_key(const char *header_name)
{
    const char *enc = header_name + sizeof(EXTRA_PREFIX) - 1;
    size_t n = strlen(enc), o = 0;
    char *lower = kube_strdup(enc), *out = malloc(n + 1);

    if (!lower || !out) {
        free(lower);
        free(out);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        lower[i] = (char)tolower((unsigned char)lower[i]);
    for (size_t i = 0; i < n; i++) {
        if (lower[i] != '%') {
            out[o++] = lower[i];
        } else if (i + 2 < n && kube_hex_digit(lower[i + 1]) >= 0 &&
                   kube_hex_digit(lower[i + 2]) >= 0) {
            out[o++] = (char)(kube_hex_digit(lower[i + 1]) * 16 + kube_hex_digit(lower[i + 2]));
            i += 2;
        } else {
            free(out);
            return lower; /* malformed: the lower-cased key itself */
        }
    }
    out[o] = '\0';
    free(lower);
    return out;
}

/* Impersonate-User. Returns 1 (out named; sa_ns, size n, holds the
 * namespace of a service account, else ""), 0 refused or out of memory. */
static int take_user(const emu_user *u, emu_authz_may_fn may, const char *as, emu_user *out,
                     char *sa_ns, size_t n)
{
    acting_as what = {"users", "", "", as};

    sa_ns[0] = '\0';
    if (split_sa_username(as, sa_ns, n, &what.name)) {
        what.resource = "serviceaccounts";
        what.ns = sa_ns;
    }
    return may_impersonate(u, may, &what) && emu_user_set_name(out, as) == KUBE_OK;
}

/* Every Impersonate-Group, checked and added to out. */
static int take_groups(const emu_request *req, const emu_user *u, emu_authz_may_fn may,
                       emu_user *out, int *seen)
{
    for (size_t i = 0; i < req->n_headers; i++) {
        const emu_header *h = &req->headers[i];
        acting_as what = {"groups", "", "", h->value};
        if (strcasecmp(h->name, "Impersonate-Group") != 0)
            continue;
        *seen = 1;
        if (!may_impersonate(u, may, &what) || emu_user_add_group(out, h->value) != KUBE_OK)
            return 0;
    }
    return 1;
}

static int add_extra(emu_user *out, const char *key, const char *value)
{
    cJSON *vals, *v;

    if (!out->extra && !(out->extra = cJSON_CreateObject()))
        return 0;
    vals = cJSON_GetObjectItemCaseSensitive(out->extra, key);
    if (!vals && !(vals = cJSON_AddArrayToObject(out->extra, key)))
        return 0;
    v = cJSON_CreateString(value);
    return v && cJSON_AddItemToArray(vals, v);
}

/* Every Impersonate-Extra-KEY value, checked and added to out. */
static int take_extras(const emu_request *req, const emu_user *u, emu_authz_may_fn may,
                       emu_user *out)
{
    for (size_t i = 0; i < req->n_headers; i++) {
        const emu_header *h = &req->headers[i];
        char *key;
        int ok;
        if (strncasecmp(h->name, EXTRA_PREFIX, sizeof(EXTRA_PREFIX) - 1) != 0)
            continue;
        if (!(key = extra_key(h->name)))
            return 0;
        {
            acting_as what = {"userextras", key, "", h->value};
            ok = may_impersonate(u, may, &what) && add_extra(out, key, h->value);
        }
        free(key);
        if (!ok)
            return 0;
    }
    return 1;
}

static int take_uid(const emu_user *u, emu_authz_may_fn may, const char *uid, emu_user *out)
{
    acting_as what = {"uids", "", "", uid};

    return may_impersonate(u, may, &what) && (out->uid = kube_strdup(uid)) != NULL;
}

/* The service account's groups, unless Impersonate-Group named groups. */
static int add_sa_groups(emu_user *out, const char *sa_ns, int groups_given)
{
    char group[128];

    if (!*sa_ns || groups_given)
        return 1;
    snprintf(group, sizeof(group), "system:serviceaccounts:%s", sa_ns);
    return emu_user_add_group(out, "system:serviceaccounts") == KUBE_OK &&
           emu_user_add_group(out, group) == KUBE_OK;
}

/* 1 if the request has an Impersonate-Group or Impersonate-Extra-* header. */
static int has_groups_or_extras(const emu_request *req)
{
    for (size_t i = 0; i < req->n_headers; i++)
        if (!strcasecmp(req->headers[i].name, "Impersonate-Group") ||
            !strncasecmp(req->headers[i].name, EXTRA_PREFIX, sizeof(EXTRA_PREFIX) - 1))
            return 1;
    return 0;
}

static int impersonate(const emu_request *req, emu_user *u, emu_authz_may_fn may)
{
    const char *as = emu_header_get(req, "Impersonate-User");
    const char *uid = emu_header_get(req, "Impersonate-Uid");
    emu_user out = {0};
    char sa_ns[64] = "";
    int groups = 0, ok;

    if (as && !*as)
        as = NULL;
    if (uid && !*uid)
        uid = NULL;
    if (!as)
        /* groups, uid or extras need a user: malformed before any check */
        return uid || has_groups_or_extras(req) ? EMU_AUTHN_FAIL : EMU_AUTHN_OK;
    ok = take_user(u, may, as, &out, sa_ns, sizeof(sa_ns));
    ok = ok && take_groups(req, u, may, &out, &groups);
    ok = ok && take_extras(req, u, may, &out);
    ok = ok && (!uid || take_uid(u, may, uid, &out));
    ok = ok && add_sa_groups(&out, sa_ns, groups);
    if (!ok) {
        emu_user_clear(&out);
        /* a refusal keeps the requester: the authorizer answers it 403 */
        return t_refusal.pending ? EMU_AUTHN_OK : EMU_AUTHN_FAIL;
    }
    KLOG_V(3, "impersonation: %s acts as %s", u->name, out.name);
    emu_user_clear(u);
    *u = out;
    return EMU_AUTHN_OK;
}

int emu_authz_ext_authenticated(const emu_request *req, emu_user *u, emu_authz_may_fn may)
{
    t_refusal.pending = 0;
    emu_rbac_note_request(req);
    return impersonate(req, u, may);
}

int emu_authz_ext_take_refusal(emu_attrs *out)
{
    if (!t_refusal.pending)
        return 0;
    t_refusal.pending = 0;
    *out = t_refusal.attrs;
    return 1;
}
