/*
 * tests/emulator/impersonation.c - user impersonation as kube-apiserver's
 * WithImpersonation filter does it (kubectl --as, --as-group, --as-uid):
 *
 *   Impersonate-User: NAME          verb impersonate on users NAME (core), or
 *                                   serviceaccounts NAME in NS for
 *                                   system:serviceaccount:NS:NAME
 *   Impersonate-Group: G (repeated) verb impersonate on groups G
 *   Impersonate-Uid: UID            verb impersonate on uids UID
 *   Impersonate-Extra-KEY: V        verb impersonate on userextras/KEY V
 *
 * every check made as the requester through the authorizer. The request
 * then runs as the impersonated user: its groups are those asked for (a
 * service account also gets system:serviceaccounts and
 * system:serviceaccounts:NS), system:authenticated is added by the server.
 * Groups, uid or extras without Impersonate-User, or a refused check,
 * answer 401 here (kube-apiserver: 400 / 403).
 *
 * Also the single entry point authz.c calls after authentication
 * (authz_ext.h), which first notes the request facts RBAC needs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "authz_ext.h"
#include "kube/log.h"

#define EXTRA_PREFIX "Impersonate-Extra-"

static int may_impersonate(const emu_user *u, emu_authz_may_fn may, const char *resource,
                           const char *sub, const char *ns, const char *name)
{
    emu_attrs a = {.is_resource = 1,
                   .verb = "impersonate",
                   .path = "",
                   .api_prefix = "api",
                   .api_group = !strcmp(resource, "userextras") || !strcmp(resource, "uids")
                                    ? "authentication.k8s.io"
                                    : "",
                   .api_version = "v1",
                   .namespace_ = ns,
                   .resource = resource,
                   .subresource = sub,
                   .name = name};

    if (may(u, &a))
        return 1;
    KLOG_V(1, "impersonation: %s may not impersonate %s%s%s \"%s\"", u->name, resource,
           *sub ? "/" : "", sub, name);
    return 0;
}

static int check_user(const emu_user *u, emu_authz_may_fn may, const char *as, char *sa_ns,
                      size_t n)
{
    static const char prefix[] = "system:serviceaccount:";
    const char *colon;

    sa_ns[0] = '\0';
    if (strncmp(as, prefix, sizeof(prefix) - 1) != 0)
        return may_impersonate(u, may, "users", "", "", as);
    as += sizeof(prefix) - 1;
    colon = strchr(as, ':');
    if (!colon || colon == as || !colon[1] || (size_t)(colon - as) >= n)
        return 0;
    memcpy(sa_ns, as, (size_t)(colon - as));
    sa_ns[colon - as] = '\0';
    return may_impersonate(u, may, "serviceaccounts", "", sa_ns, colon + 1);
}

/* Checks every Impersonate-Group/-Extra-* header and adds it to out. */
static int take_groups_and_extras(const emu_request *req, const emu_user *u, emu_authz_may_fn may,
                                  emu_user *out, int *seen)
{
    for (size_t i = 0; i < req->n_headers; i++) {
        const emu_header *h = &req->headers[i];
        if (!strcasecmp(h->name, "Impersonate-Group")) {
            *seen = 1;
            if (!may_impersonate(u, may, "groups", "", "", h->value) ||
                emu_user_add_group(out, h->value) != KUBE_OK)
                return 0;
        } else if (!strncasecmp(h->name, EXTRA_PREFIX, sizeof(EXTRA_PREFIX) - 1)) {
            const char *key = h->name + sizeof(EXTRA_PREFIX) - 1;
            cJSON *vals;
            *seen = 1;
            if (!may_impersonate(u, may, "userextras", key, "", h->value))
                return 0;
            if (!out->extra && !(out->extra = cJSON_CreateObject()))
                return 0;
            vals = cJSON_GetObjectItemCaseSensitive(out->extra, key);
            if (!vals)
                vals = cJSON_AddArrayToObject(out->extra, key);
            if (!vals)
                return 0;
            cJSON_AddItemToArray(vals, cJSON_CreateString(h->value));
        }
    }
    return 1;
}

static int impersonate(const emu_request *req, emu_user *u, emu_authz_may_fn may)
{
    const char *as = emu_header_get(req, "Impersonate-User");
    const char *uid = emu_header_get(req, "Impersonate-Uid");
    emu_user out = {0};
    char sa_ns[256], group[300];
    int seen = uid != NULL, ok;

    ok = !as || check_user(u, may, as, sa_ns, sizeof(sa_ns));
    ok = ok && (!as || emu_user_set_name(&out, as) == KUBE_OK);
    ok = ok && take_groups_and_extras(req, u, may, &out, &seen);
    ok = ok && (!uid || may_impersonate(u, may, "uids", "", "", uid));
    ok = ok && (!uid || (out.uid = kube_strdup(uid)) != NULL);
    if (ok && !as && seen)
        ok = 0; /* groups, uid or extras need a user */
    if (ok && as && sa_ns[0]) {
        snprintf(group, sizeof(group), "system:serviceaccounts:%s", sa_ns);
        ok = emu_user_add_group(&out, "system:serviceaccounts") == KUBE_OK &&
             emu_user_add_group(&out, group) == KUBE_OK;
    }
    if (!ok || !as) {
        emu_user_clear(&out);
        return ok ? EMU_AUTHN_OK : EMU_AUTHN_FAIL;
    }
    KLOG_V(3, "impersonation: %s acts as %s", u->name, out.name);
    emu_user_clear(u);
    *u = out;
    return EMU_AUTHN_OK;
}

int emu_authz_ext_authenticated(const emu_request *req, emu_user *u, emu_authz_may_fn may)
{
    emu_rbac_note_request(req);
    return impersonate(req, u, may);
}
