/*
 * tests/emulator/authz.c - the emulator's authentication and authorization
 * plug-in: static bearer tokens, a small RBAC-like policy, and the
 * delegated-auth APIs an aggregated API server calls.
 *
 * Flags (plug-in flags take "=value"):
 *   --token-auth-file=PATH   kube-apiserver's static token file format, one
 *                            token a line: token,user,uid[,"group1,group2"]
 *                            (lines starting with # are comments)
 *   --authorization-policy-file=PATH   JSON policy:
 *     {"rules": [
 *       {"users": ["alice"], "groups": ["team-a"],          subjects ("*": anyone)
 *        "verbs": ["get", "update", "create"],               or ["*"]
 *        "apiGroups": ["subresources.stickyvm.io"],         resource rules
 *        "resources": ["virtualmachines/pin", "*"],         RBAC matching: "*",
 *                                                           "res/sub", "star/sub"
 *        "namespaces": ["default"],                         absent: every namespace
 *        "resourceNames": ["vm1"]},                         absent: every name
 *       {"groups": ["system:serviceaccounts"], "verbs": ["get"],
 *        "nonResourceURLs": ["/metrics", "/apis/x*"]}]}     non-resource rules
 *                                           (a trailing star matches any suffix)
 *
 * Decisions, the same for the emulator's own requests (installed as its
 * authorizer) and for SubjectAccessReviews: members of system:masters may
 * do everything (as kube-apiserver's superuser authorizer); every
 * authenticated user may read discovery and health (/api, /apis, /openapi,
 * /healthz, /livez, /readyz, /version: the bootstrap system:discovery and
 * system:public-info-viewer roles); anything else needs a policy rule. With
 * no policy file only those defaults apply.
 *
 * Endpoints (virtual create-only resources), answering as the recorded
 * fixtures (tokenreview-*-201.json, sar-*-201.json): 201 with the spec
 * echoed, metadata {creationTimestamp: null, managedFields}, and
 *   POST /apis/authentication.k8s.io/v1/tokenreviews
 *        status {authenticated, user {username, uid, groups (with
 *        system:authenticated)}, audiences} or {user: {}, error: "invalid
 *        bearer token"}; tokens from the token file, then the control API's;
 *   POST /apis/authorization.k8s.io/v1/subjectaccessreviews
 *        status {allowed}; a spec with neither or both attribute kinds, or
 *        neither user nor groups, is 422 Invalid;
 *   POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews
 *        (kubectl auth can-i) the same decision for the requesting user;
 *   POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews
 *        (kubectl auth can-i --list) the requesting user's rules in
 *        spec.namespace: the defaults, the policy file's and RBAC's;
 *        every authenticated user may create these two (system:basic-user).
 * Bearer tokens of the token file also authenticate requests to the
 * emulator itself (before the default certificate/control-API tokens).
 * Hooks (authz_ext.h): RBAC objects (rbac.c, --authorization-mode=RBAC)
 * are ORed into every decision; impersonation headers (impersonation.c)
 * are applied after authentication, and a refused impersonation is
 * answered 403 for its acting-as attributes, as kube-apiserver does.
 *
 * Memory: everything is loaded once in init() and freed in fini().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "authz_ext.h"
#include "emu.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/log.h"

typedef struct strs {
    char **v;
    size_t n;
} strs;

typedef struct rule {
    strs users, groups, verbs, api_groups, resources, namespaces, names, urls;
    int non_resource;
} rule;

typedef struct token_entry {
    char *token;
    char *user;
    char *uid;
    strs groups;
} token_entry;

typedef struct authz_state {
    char *policy_file;
    char *token_file;
    rule *rules;
    size_t n_rules;
    token_entry *tokens;
    size_t n_tokens;
} authz_state;

static authz_state g;

/* What is asked, for both the emulator's requests and reviews. */
typedef struct ask {
    int resource;
    const char *verb;
    const char *path;
    const char *group;
    const char *resource_name; /* plural */
    const char *subresource;
    const char *namespace_;
    const char *name;
} ask;

/* ---- string lists ---- */

static int strs_add(strs *l, const char *s)
{
    char **v = realloc(l->v, (l->n + 1) * sizeof(*v));

    if (!v)
        return KUBE_ENOMEM;
    l->v = v;
    if (!(l->v[l->n] = kube_strdup(s)))
        return KUBE_ENOMEM;
    l->n++;
    return KUBE_OK;
}

static void strs_free(strs *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

static int strs_has(const strs *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], "*") || !strcmp(l->v[i], s))
            return 1;
    return 0;
}

/* ---- decisions ---- */

static int in_groups(char *const *groups, size_t n, const char *g1)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(groups[i], g1))
            return 1;
    return 0;
}

static int subject_matches(const rule *r, const char *user, char *const *groups, size_t n)
{
    if (user && strs_has(&r->users, user))
        return 1;
    for (size_t i = 0; i < n; i++)
        if (strs_has(&r->groups, groups[i]))
            return 1;
    return 0;
}

static int url_matches(const strs *urls, const char *path)
{
    for (size_t i = 0; i < urls->n; i++) {
        const char *u = urls->v[i];
        size_t len = strlen(u);
        if (!strcmp(u, path) || !strcmp(u, "*"))
            return 1;
        if (len && u[len - 1] == '*' && !strncmp(u, path, len - 1))
            return 1;
    }
    return 0;
}

/* RBAC's ResourceMatches: "*", "resource[/sub]" or "*" + "/sub". */
static int resource_matches(const strs *resources, const char *res, const char *sub)
{
    char combined[256];

    snprintf(combined, sizeof(combined), "%s%s%s", res, *sub ? "/" : "", sub);
    for (size_t i = 0; i < resources->n; i++) {
        const char *r = resources->v[i];
        if (!strcmp(r, "*") || !strcmp(r, combined))
            return 1;
        if (*sub && !strncmp(r, "*/", 2) && !strcmp(r + 2, sub))
            return 1;
    }
    return 0;
}

static int rule_allows(const rule *r, const ask *a)
{
    if (!strs_has(&r->verbs, a->verb))
        return 0;
    if (!a->resource)
        return r->non_resource && url_matches(&r->urls, a->path);
    if (r->non_resource || !strs_has(&r->api_groups, a->group) ||
        !resource_matches(&r->resources, a->resource_name, a->subresource))
        return 0;
    if (r->namespaces.n && !strs_has(&r->namespaces, a->namespace_))
        return 0;
    return !r->names.n || strs_has(&r->names, a->name);
}

static int default_allows(char *const *groups, size_t n, const ask *a)
{
    static const char *const public_paths[] = {"/healthz", "/livez",    "/readyz",
                                               "/version", "/version/", NULL};
    static const char *const discovery_prefixes[] = {"/api", "/apis", "/openapi", NULL};

    if (in_groups(groups, n, "system:masters"))
        return 1;
    if (a->resource && !strcmp(a->verb, "create") && !strcmp(a->group, "authorization.k8s.io") &&
        (!strcmp(a->resource_name, "selfsubjectaccessreviews") ||
         !strcmp(a->resource_name, "selfsubjectrulesreviews")) &&
        in_groups(groups, n, "system:authenticated"))
        return 1; /* the system:basic-user role */
    if (a->resource || strcmp(a->verb, "get") != 0 || !in_groups(groups, n, "system:authenticated"))
        return 0;
    for (size_t i = 0; public_paths[i]; i++)
        if (!strcmp(a->path, public_paths[i]))
            return 1;
    for (size_t i = 0; discovery_prefixes[i]; i++) {
        size_t len = strlen(discovery_prefixes[i]);
        if (!strncmp(a->path, discovery_prefixes[i], len) &&
            (a->path[len] == '\0' || a->path[len] == '/'))
            return 1;
    }
    return 0;
}

static int decide(const char *user, char *const *groups, size_t n, const ask *a)
{
    if (default_allows(groups, n, a))
        return 1;
    for (size_t i = 0; i < g.n_rules; i++)
        if (subject_matches(&g.rules[i], user, groups, n) && rule_allows(&g.rules[i], a))
            return 1;
    {
        emu_attrs ea = {.is_resource = a->resource,
                        .verb = a->verb,
                        .path = a->path,
                        .api_prefix = "",
                        .api_group = a->group,
                        .api_version = "",
                        .namespace_ = a->namespace_,
                        .resource = a->resource_name,
                        .subresource = a->subresource,
                        .name = a->name};
        return emu_rbac_allows(user, groups, n, &ea); /* rbac.c, with --authorization-mode=RBAC */
    }
}

/* ---- loading ---- */

static int read_list(const cJSON *rule_json, const char *key, strs *out, const char *file,
                     size_t index)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(rule_json, key);
    const cJSON *it;

    if (!arr)
        return KUBE_OK;
    if (!cJSON_IsArray(arr)) {
        KLOG_ERROR("%s: rules[%zu].%s: not a list of strings", file, index, key);
        return KUBE_ECONFIG;
    }
    cJSON_ArrayForEach(it, arr)
    {
        if (!cJSON_IsString(it)) {
            KLOG_ERROR("%s: rules[%zu].%s: not a list of strings", file, index, key);
            return KUBE_ECONFIG;
        }
        if (strs_add(out, it->valuestring) != KUBE_OK)
            return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

static int load_rule(const cJSON *j, rule *r, const char *file, size_t i)
{
    int rc = KUBE_OK;

    if (rc == KUBE_OK)
        rc = read_list(j, "users", &r->users, file, i);
    if (rc == KUBE_OK)
        rc = read_list(j, "groups", &r->groups, file, i);
    if (rc == KUBE_OK)
        rc = read_list(j, "verbs", &r->verbs, file, i);
    if (rc == KUBE_OK)
        rc = read_list(j, "apiGroups", &r->api_groups, file, i);
    if (rc == KUBE_OK)
        rc = read_list(j, "resources", &r->resources, file, i);
    if (rc == KUBE_OK)
        rc = read_list(j, "namespaces", &r->namespaces, file, i);
    if (rc == KUBE_OK)
        rc = read_list(j, "resourceNames", &r->names, file, i);
    if (rc == KUBE_OK)
        rc = read_list(j, "nonResourceURLs", &r->urls, file, i);
    if (rc != KUBE_OK)
        return rc;
    r->non_resource = r->urls.n > 0;
    if (!r->users.n && !r->groups.n) {
        KLOG_ERROR("%s: rules[%zu]: needs users or groups", file, i);
        return KUBE_ECONFIG;
    }
    if (!r->verbs.n || (!r->non_resource && (!r->api_groups.n || !r->resources.n))) {
        KLOG_ERROR("%s: rules[%zu]: needs verbs, and apiGroups+resources or nonResourceURLs", file,
                   i);
        return KUBE_ECONFIG;
    }
    return KUBE_OK;
}

static int load_policy(const char *file)
{
    char *text = NULL;
    size_t len;
    cJSON *doc;
    const cJSON *rules, *it;
    int rc = kube_read_file(file, &text, &len);

    if (rc != KUBE_OK) {
        KLOG_ERROR("%s: cannot read the authorization policy", file);
        return KUBE_ECONFIG;
    }
    doc = cJSON_Parse(text);
    free(text);
    rules = cJSON_GetObjectItemCaseSensitive(doc, "rules");
    if (!cJSON_IsArray(rules)) {
        KLOG_ERROR("%s: rules: missing or not a list", file);
        cJSON_Delete(doc);
        return KUBE_ECONFIG;
    }
    g.rules = calloc((size_t)cJSON_GetArraySize(rules) + 1, sizeof(*g.rules));
    rc = g.rules ? KUBE_OK : KUBE_ENOMEM;
    cJSON_ArrayForEach(it, rules)
    {
        if (rc != KUBE_OK)
            break;
        rc = load_rule(it, &g.rules[g.n_rules], file, g.n_rules);
        g.n_rules++;
    }
    cJSON_Delete(doc);
    return rc;
}

/* Splits one CSV line of the token file (quoted fields may hold commas). */
static size_t csv_fields(char *line, char **fields, size_t max)
{
    size_t n = 0;
    char *p = line;

    while (n < max) {
        if (*p == '"') {
            char *end = strchr(p + 1, '"');
            fields[n++] = p + 1;
            if (!end)
                break;
            *end = '\0';
            p = end + 1;
            if (*p != ',')
                break;
            p++;
            continue;
        }
        fields[n++] = p;
        p = strchr(p, ',');
        if (!p)
            break;
        *p++ = '\0';
    }
    return n;
}

static int add_token(char **f, size_t nf)
{
    token_entry *t = realloc(g.tokens, (g.n_tokens + 1) * sizeof(*t));
    char *group, *save = NULL;

    if (!t)
        return KUBE_ENOMEM;
    g.tokens = t;
    t = &g.tokens[g.n_tokens++];
    memset(t, 0, sizeof(*t));
    t->token = kube_strdup(f[0]);
    t->user = kube_strdup(f[1]);
    t->uid = kube_strdup(nf > 2 ? f[2] : "");
    if (!t->token || !t->user || !t->uid)
        return KUBE_ENOMEM;
    for (group = nf > 3 ? strtok_r(f[3], ",", &save) : NULL; group;
         group = strtok_r(NULL, ",", &save))
        if (*group && strs_add(&t->groups, group) != KUBE_OK)
            return KUBE_ENOMEM;
    return KUBE_OK;
}

static int load_tokens(const char *file)
{
    char *text = NULL, *line, *save = NULL;
    size_t len, lineno = 0;
    int rc = kube_read_file(file, &text, &len);

    if (rc != KUBE_OK) {
        KLOG_ERROR("%s: cannot read the token file", file);
        return KUBE_ECONFIG;
    }
    for (line = strtok_r(text, "\n", &save); line && rc == KUBE_OK;
         line = strtok_r(NULL, "\n", &save)) {
        char *fields[4];
        size_t nf;
        lineno++;
        line[strcspn(line, "\r")] = '\0';
        if (!*line || *line == '#')
            continue;
        nf = csv_fields(line, fields, 4);
        if (nf < 2 || !*fields[0] || !*fields[1]) {
            KLOG_ERROR("%s:%zu: want token,user,uid[,\"groups\"]", file, lineno);
            rc = KUBE_ECONFIG;
        } else {
            rc = add_token(fields, nf);
        }
    }
    free(text);
    return rc;
}

static const token_entry *find_token(const char *token)
{
    for (size_t i = 0; i < g.n_tokens; i++)
        if (!strcmp(g.tokens[i].token, token))
            return &g.tokens[i];
    return NULL;
}

static int user_from_entry(const token_entry *t, emu_user *out)
{
    int rc = emu_user_set_name(out, t->user);

    if (rc == KUBE_OK && *t->uid && !(out->uid = kube_strdup(t->uid)))
        rc = KUBE_ENOMEM;
    for (size_t i = 0; rc == KUBE_OK && i < t->groups.n; i++)
        rc = emu_user_add_group(out, t->groups.v[i]);
    return rc;
}

/* ---- hooks for the emulator's own requests ---- */

static const char *bearer(const emu_request *req)
{
    const char *auth = emu_header_get(req, "Authorization");

    if (!auth || strncasecmp(auth, "Bearer ", 7) != 0)
        return NULL;
    auth += 7;
    while (*auth == ' ')
        auth++;
    return auth;
}

/* Impersonation checks (impersonation.c), made as the requester. */
static int may_impersonate(const emu_user *u, const emu_attrs *a)
{
    ask q = {a->is_resource, a->verb,        a->path,       a->api_group,
             a->resource,    a->subresource, a->namespace_, a->name};

    return decide(u->name, u->groups, u->n_groups, &q);
}

static int authenticate(void *ctx, const emu_request *req, emu_user *out)
{
    const char *tok = bearer(req);
    const token_entry *t = tok ? find_token(tok) : NULL;
    int rc;

    if (t)
        rc = user_from_entry(t, out) == KUBE_OK ? EMU_AUTHN_OK : EMU_AUTHN_FAIL;
    else
        rc = emu_default_authenticate(ctx, req, out);
    return rc == EMU_AUTHN_OK ? emu_authz_ext_authenticated(req, out, may_impersonate) : rc;
}

/* Denies a request whose impersonation was refused (impersonation.c).
 * kube-apiserver's impersonation filter answers the 403 for the acting-as
 * attributes (users "alice" is forbidden: User "bob" cannot impersonate
 * ...), not the request's; the server answers the 403 for the attributes it
 * passed to the authorizer, which are the request's own (req->attrs), so
 * the acting-as ones replace them for the rest of this request. */
static int deny_refused_impersonation(const emu_attrs *a)
{
    emu_attrs acting_as;

    if (!emu_authz_ext_take_refusal(&acting_as))
        return 0;
    *(emu_attrs *)a = acting_as;
    return 1;
}

static int authorize(void *ctx, const emu_user *u, const emu_attrs *a, char *why, size_t n)
{
    ask q = {a->is_resource, a->verb,        a->path,       a->api_group,
             a->resource,    a->subresource, a->namespace_, a->name};

    (void)ctx;
    if (n)
        why[0] = '\0';
    if (deny_refused_impersonation(a))
        return EMU_AUTHZ_DENY;
    if (decide(u->name, u->groups, u->n_groups, &q))
        return EMU_AUTHZ_ALLOW;
    return EMU_AUTHZ_DENY;
}

/* ---- review answers ---- */

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* managedFields' fieldsV1 for an object: keys sorted, as the field set
 * serializes, and nested objects get a "." entry. */
static cJSON *fields_v1(const cJSON *obj, int depth)
{
    cJSON *f = cJSON_CreateObject();
    const cJSON *it, *items[64];
    size_t n = 0;
    char key[256];

    if (depth > 0 && f)
        cJSON_AddItemToObject(f, ".", cJSON_CreateObject());
    cJSON_ArrayForEach(it, obj) if (n < sizeof(items) / sizeof(items[0])) items[n++] = it;
    qsort(items, n, sizeof(items[0]), by_name);
    for (size_t i = 0; i < n; i++) {
        snprintf(key, sizeof(key), "f:%s", items[i]->string);
        cJSON_AddItemToObject(f, key,
                              cJSON_IsObject(items[i]) && cJSON_GetArraySize(items[i]) > 0
                                  ? fields_v1(items[i], depth + 1)
                                  : cJSON_CreateObject());
    }
    return f;
}

static void manager_name(const emu_request *req, char *out, size_t n)
{
    const char *ua = emu_header_get(req, "User-Agent");
    size_t len = ua ? strcspn(ua, "/") : 0;

    if (!len)
        snprintf(out, n, "unknown");
    else
        snprintf(out, n, "%.*s", (int)len, ua);
}

static cJSON *review_metadata(const emu_request *req, const char *api_version, const cJSON *spec)
{
    cJSON *meta = cJSON_CreateObject();
    cJSON *mf, *entry = cJSON_CreateObject(), *fv1 = cJSON_CreateObject();
    char manager[64], now[40];

    cJSON_AddNullToObject(meta, "creationTimestamp");
    mf = cJSON_AddArrayToObject(meta, "managedFields");
    manager_name(req, manager, sizeof(manager));
    kube_time_rfc3339(now, sizeof(now));
    cJSON_AddStringToObject(entry, "manager", manager);
    cJSON_AddStringToObject(entry, "operation", "Update");
    cJSON_AddStringToObject(entry, "apiVersion", api_version);
    cJSON_AddStringToObject(entry, "time", now);
    cJSON_AddStringToObject(entry, "fieldsType", "FieldsV1");
    cJSON_AddItemToObject(fv1, "f:spec", fields_v1(spec, 0));
    cJSON_AddItemToObject(entry, "fieldsV1", fv1);
    cJSON_AddItemToArray(mf, entry);
    return meta;
}

static cJSON *review_answer(const emu_request *req, const char *kind, const char *api_version,
                            cJSON *spec, cJSON *status)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "kind", kind);
    cJSON_AddStringToObject(o, "apiVersion", api_version);
    cJSON_AddItemToObject(o, "metadata", review_metadata(req, api_version, spec));
    cJSON_AddItemToObject(o, "spec", spec);
    cJSON_AddItemToObject(o, "status", status);
    return o;
}

static int answer(emu_response *resp, cJSON *o)
{
    int rc = o ? emu_response_json(resp, 201, o) : KUBE_ENOMEM;

    cJSON_Delete(o);
    return rc;
}

static int reviewed_user(emu_server *s, const char *token, emu_user *u)
{
    const token_entry *t = find_token(token);

    if (t)
        return user_from_entry(t, u) == KUBE_OK;
    return emu_token_lookup(s, token, u) == EMU_AUTHN_OK;
}

static cJSON *tokenreview_status(emu_server *s, const char *token)
{
    cJSON *status = cJSON_CreateObject(), *user, *groups, *aud;
    emu_user u = {0};

    if (!reviewed_user(s, token, &u) || emu_user_add_group(&u, "system:authenticated") != KUBE_OK) {
        cJSON_AddObjectToObject(status, "user");
        cJSON_AddStringToObject(status, "error", "invalid bearer token");
        emu_user_clear(&u);
        return status;
    }
    cJSON_AddTrueToObject(status, "authenticated");
    user = cJSON_AddObjectToObject(status, "user");
    cJSON_AddStringToObject(user, "username", u.name);
    if (u.uid && *u.uid)
        cJSON_AddStringToObject(user, "uid", u.uid);
    groups = cJSON_AddArrayToObject(user, "groups");
    for (size_t i = 0; i < u.n_groups; i++)
        cJSON_AddItemToArray(groups, cJSON_CreateString(u.groups[i]));
    if (u.extra)
        cJSON_AddItemToObject(user, "extra", cJSON_Duplicate(u.extra, 1));
    aud = cJSON_AddArrayToObject(status, "audiences");
    cJSON_AddItemToArray(aud, cJSON_CreateString("https://kubernetes.default.svc"));
    emu_user_clear(&u);
    return status;
}

static int tokenreview_create(emu_server *s, emu_request *req, const cJSON *body,
                              emu_response *resp)
{
    const cJSON *tok =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(body, "spec"), "token");
    cJSON *spec;

    if (!cJSON_IsString(tok) || !*tok->valuestring)
        return emu_response_status(resp, 400, "BadRequest",
                                   "token is required for TokenReview in authentication", NULL);
    spec = cJSON_CreateObject();
    cJSON_AddStringToObject(spec, "token", tok->valuestring);
    return answer(resp, review_answer(req, "TokenReview", "authentication.k8s.io/v1", spec,
                                      tokenreview_status(s, tok->valuestring)));
}

static const char *attr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* Rebuilds the spec in the order kube-apiserver writes it. */
static cJSON *sar_spec(const cJSON *in)
{
    static const char *const res_keys[] = {"namespace", "verb",        "group", "version",
                                           "resource",  "subresource", "name",  NULL};
    static const char *const nonres_keys[] = {"path", "verb", NULL};
    static const char *const tail_keys[] = {"user", "groups", "extra", "uid", NULL};
    const char *const *keys[] = {res_keys, nonres_keys};
    const char *objs[] = {"resourceAttributes", "nonResourceAttributes"};
    cJSON *spec = cJSON_CreateObject();

    for (size_t k = 0; k < 2; k++) {
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(in, objs[k]);
        cJSON *dst;
        if (!cJSON_IsObject(src))
            continue;
        dst = cJSON_AddObjectToObject(spec, objs[k]);
        for (size_t i = 0; keys[k][i]; i++)
            if (*attr(src, keys[k][i]))
                cJSON_AddStringToObject(dst, keys[k][i], attr(src, keys[k][i]));
    }
    for (size_t i = 0; tail_keys[i]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(in, tail_keys[i]);
        if (v && !(cJSON_IsString(v) && !*v->valuestring))
            cJSON_AddItemToObject(spec, tail_keys[i], cJSON_Duplicate(v, 1));
    }
    return spec;
}

static int sar_invalid(emu_response *resp, const char *kind, const char *field, const char *detail)
{
    char msg[512];
    cJSON *details = cJSON_CreateObject(), *causes, *cause;

    snprintf(msg, sizeof(msg), "%s.authorization.k8s.io \"\" is invalid: %s: %s", kind, field,
             detail);
    cJSON_AddStringToObject(details, "group", "authorization.k8s.io");
    cJSON_AddStringToObject(details, "kind", kind);
    causes = cJSON_AddArrayToObject(details, "causes");
    cause = cJSON_CreateObject();
    cJSON_AddStringToObject(cause, "reason", "FieldValueInvalid");
    cJSON_AddStringToObject(cause, "message", detail);
    cJSON_AddStringToObject(cause, "field", field);
    cJSON_AddItemToArray(causes, cause);
    return emu_response_status(resp, 422, "Invalid", msg, details);
}

/* The decision for the attributes of spec, for user and groups. */
static int review_decide(const cJSON *spec, const char *user, char *const *groups, size_t n)
{
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(spec, "resourceAttributes");
    const cJSON *nonres = cJSON_GetObjectItemCaseSensitive(spec, "nonResourceAttributes");
    ask q = {0};

    q.resource = res != NULL;
    q.verb = attr(res ? res : nonres, "verb");
    q.path = attr(nonres, "path");
    q.group = attr(res, "group");
    q.resource_name = attr(res, "resource");
    q.subresource = attr(res, "subresource");
    q.namespace_ = attr(res, "namespace");
    q.name = attr(res, "name");
    return decide(user, groups, n, &q);
}

static int sar_decide(const cJSON *spec)
{
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(spec, "groups"), *it;
    char *gv[64];
    size_t n = 0;

    cJSON_ArrayForEach(it, groups) if (cJSON_IsString(it) && n < 64) gv[n++] = it->valuestring;
    return review_decide(spec, attr(spec, "user"), gv, n);
}

/* A spec with exactly one of resourceAttributes and nonResourceAttributes,
 * else the 422 (answered; returns 1). */
static int review_attrs_invalid(emu_response *resp, const char *kind, const cJSON *in)
{
    int has_res = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(in, "resourceAttributes"));
    int has_nonres = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(in, "nonResourceAttributes"));

    if (!has_res && !has_nonres)
        return sar_invalid(resp, kind, "spec.resourceAttributes",
                           "Invalid value: \"null\": exactly one "
                           "of nonResourceAttributes or resourceAttributes must be specified"),
               1;
    if (has_res && has_nonres)
        return sar_invalid(resp, kind, "spec.nonResourceAttributes",
                           "Invalid value: \"\": cannot be "
                           "specified in combination with resourceAttributes"),
               1;
    return 0;
}

static int sar_create(emu_server *s, emu_request *req, const cJSON *body, emu_response *resp)
{
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(body, "spec");
    cJSON *spec, *status;

    (void)s;
    if (review_attrs_invalid(resp, "SubjectAccessReview", in))
        return KUBE_OK;
    if (!*attr(in, "user") &&
        cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(in, "groups")) == 0)
        return sar_invalid(resp, "SubjectAccessReview", "spec.user",
                           "Invalid value: \"\": at least one of user or group must be specified");
    spec = sar_spec(in);
    status = cJSON_CreateObject();
    cJSON_AddBoolToObject(status, "allowed", sar_decide(spec));
    return answer(
        resp, review_answer(req, "SubjectAccessReview", "authorization.k8s.io/v1", spec, status));
}

/* SelfSubjectAccessReview: the same decision for the requesting user (as
 * authenticated, after impersonation); the answer echoes only the
 * attributes. */
static int ssar_create(emu_server *s, emu_request *req, const cJSON *body, emu_response *resp)
{
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(body, "spec");
    cJSON *spec, *status;

    (void)s;
    if (review_attrs_invalid(resp, "SelfSubjectAccessReview", in))
        return KUBE_OK;
    spec = sar_spec(in);
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "user");
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "groups");
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "extra");
    cJSON_DeleteItemFromObjectCaseSensitive(spec, "uid");
    status = cJSON_CreateObject();
    cJSON_AddBoolToObject(status, "allowed",
                          review_decide(spec, req->user.name ? req->user.name : "",
                                        req->user.groups, req->user.n_groups));
    return answer(resp, review_answer(req, "SelfSubjectAccessReview", "authorization.k8s.io/v1",
                                      spec, status));
}

/* ---- SelfSubjectRulesReview ---- */

static cJSON *strings_json(const char *const *v)
{
    cJSON *a = cJSON_CreateArray();

    for (size_t i = 0; v[i]; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
    return a;
}

static cJSON *strs_json(const strs *l)
{
    cJSON *a = cJSON_CreateArray();

    for (size_t i = 0; i < l->n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(l->v[i]));
    return a;
}

/* {"verbs":..., key: values} appended to arr (arrays taken over). */
static void add_rule(cJSON *arr, cJSON *verbs, const char *k1, cJSON *v1, const char *k2, cJSON *v2)
{
    cJSON *r = cJSON_CreateObject();

    cJSON_AddItemToObject(r, "verbs", verbs);
    cJSON_AddItemToObject(r, k1, v1);
    if (k2)
        cJSON_AddItemToObject(r, k2, v2);
    cJSON_AddItemToArray(arr, r);
}

/* The rules of the built-in defaults: the superuser group, and the
 * bootstrap roles every authenticated user has (system:basic-user,
 * system:discovery, system:public-info-viewer). */
static void default_rules(char *const *groups, size_t n, cJSON *res, cJSON *nonres)
{
    static const char *const all[] = {"*", NULL}, *const create[] = {"create", NULL},
                             *const get[] = {"get", NULL},
                             *const authz[] = {"authorization.k8s.io", NULL};
    static const char *const selfs[] = {"selfsubjectaccessreviews", "selfsubjectrulesreviews",
                                        NULL};
    static const char *const discovery[] = {"/api",     "/api/*",   "/apis",     "/apis/*",
                                            "/healthz", "/livez",   "/openapi",  "/openapi/*",
                                            "/readyz",  "/version", "/version/", NULL};
    static const char *const info[] = {"/healthz", "/livez",    "/readyz",
                                       "/version", "/version/", NULL};

    if (in_groups(groups, n, "system:masters")) {
        add_rule(res, strings_json(all), "apiGroups", strings_json(all), "resources",
                 strings_json(all));
        add_rule(nonres, strings_json(all), "nonResourceURLs", strings_json(all), NULL, NULL);
    }
    if (!in_groups(groups, n, "system:authenticated"))
        return;
    add_rule(res, strings_json(create), "apiGroups", strings_json(authz), "resources",
             strings_json(selfs));
    add_rule(nonres, strings_json(get), "nonResourceURLs", strings_json(discovery), NULL, NULL);
    add_rule(nonres, strings_json(get), "nonResourceURLs", strings_json(info), NULL, NULL);
}

static void policy_rules(const char *user, char *const *groups, size_t n, const char *ns,
                         cJSON *res, cJSON *nonres)
{
    for (size_t i = 0; i < g.n_rules; i++) {
        const rule *r = &g.rules[i];
        if (!subject_matches(r, user, groups, n))
            continue;
        if (r->non_resource) {
            add_rule(nonres, strs_json(&r->verbs), "nonResourceURLs", strs_json(&r->urls), NULL,
                     NULL);
        } else if (!r->namespaces.n || strs_has(&r->namespaces, ns)) {
            add_rule(res, strs_json(&r->verbs), "apiGroups", strs_json(&r->api_groups), "resources",
                     strs_json(&r->resources));
            if (r->names.n)
                cJSON_AddItemToObject(cJSON_GetArrayItem(res, cJSON_GetArraySize(res) - 1),
                                      "resourceNames", strs_json(&r->names));
        }
    }
}

/* SelfSubjectRulesReview (kubectl auth can-i --list): every rule the
 * requesting user has in spec.namespace, from the defaults, the policy
 * file and RBAC; incomplete is false. */
static int ssrr_create(emu_server *s, emu_request *req, const cJSON *body, emu_response *resp)
{
    const char *ns = attr(cJSON_GetObjectItemCaseSensitive(body, "spec"), "namespace");
    const emu_user *u = &req->user;
    cJSON *spec = cJSON_CreateObject(), *status = cJSON_CreateObject();
    cJSON *res = cJSON_AddArrayToObject(status, "resourceRules");
    cJSON *nonres = cJSON_AddArrayToObject(status, "nonResourceRules");

    (void)s;
    if (*ns)
        cJSON_AddStringToObject(spec, "namespace", ns);
    default_rules(u->groups, u->n_groups, res, nonres);
    policy_rules(u->name, u->groups, u->n_groups, ns, res, nonres);
    emu_rbac_rules(u->name, u->groups, u->n_groups, ns, res, nonres);
    cJSON_AddFalseToObject(status, "incomplete");
    return answer(resp, review_answer(req, "SelfSubjectRulesReview", "authorization.k8s.io/v1",
                                      spec, status));
}

/* ---- plug-in ---- */

static const emu_resource_def tokenreviews = {"authentication.k8s.io",
                                              "v1",
                                              "tokenreviews",
                                              "",
                                              "TokenReview",
                                              "TokenReviewList",
                                              NULL,
                                              NULL,
                                              0,
                                              0,
                                              0,
                                              tokenreview_create};
static const emu_resource_def sars = {"authorization.k8s.io",
                                      "v1",
                                      "subjectaccessreviews",
                                      "",
                                      "SubjectAccessReview",
                                      "SubjectAccessReviewList",
                                      NULL,
                                      NULL,
                                      0,
                                      0,
                                      0,
                                      sar_create};

static const emu_resource_def ssars = {"authorization.k8s.io",
                                       "v1",
                                       "selfsubjectaccessreviews",
                                       "",
                                       "SelfSubjectAccessReview",
                                       "SelfSubjectAccessReviewList",
                                       NULL,
                                       NULL,
                                       0,
                                       0,
                                       0,
                                       ssar_create};

static const emu_resource_def ssrrs = {"authorization.k8s.io",
                                       "v1",
                                       "selfsubjectrulesreviews",
                                       "",
                                       "SelfSubjectRulesReview",
                                       "SelfSubjectRulesReviewList",
                                       NULL,
                                       NULL,
                                       0,
                                       0,
                                       0,
                                       ssrr_create};

static int flag(const char *name, const char *value)
{
    char **dst = !strcmp(name, "--authorization-policy-file") ? &g.policy_file
                 : !strcmp(name, "--token-auth-file")         ? &g.token_file
                                                              : NULL;

    if (!dst)
        return 0;
    if (!value || !*value) {
        fprintf(stderr, "stickyvm-emulator: %s needs =PATH\n", name);
        return KUBE_ECONFIG;
    }
    free(*dst);
    *dst = kube_strdup(value);
    return *dst ? 1 : KUBE_ENOMEM;
}

static int init(emu_server *s)
{
    int rc = KUBE_OK;

    if (g.policy_file)
        rc = load_policy(g.policy_file);
    if (rc == KUBE_OK && g.token_file)
        rc = load_tokens(g.token_file);
    if (rc == KUBE_OK && !emu_resource_find(s, "authentication.k8s.io", "v1", "tokenreviews"))
        rc = emu_resource_register(s, &tokenreviews);
    if (rc == KUBE_OK &&
        !emu_resource_find(s, "authorization.k8s.io", "v1", "subjectaccessreviews"))
        rc = emu_resource_register(s, &sars);
    if (rc == KUBE_OK &&
        !emu_resource_find(s, "authorization.k8s.io", "v1", "selfsubjectaccessreviews"))
        rc = emu_resource_register(s, &ssars);
    if (rc == KUBE_OK &&
        !emu_resource_find(s, "authorization.k8s.io", "v1", "selfsubjectrulesreviews"))
        rc = emu_resource_register(s, &ssrrs);
    if (rc != KUBE_OK)
        return rc;
    emu_set_authenticator(s, authenticate, s);
    emu_set_authorizer(s, authorize, s);
    KLOG_V(1, "authz: %zu policy rules, %zu static tokens", g.n_rules, g.n_tokens);
    return KUBE_OK;
}

static void fini(emu_server *s)
{
    (void)s;
    for (size_t i = 0; i < g.n_rules; i++) {
        rule *r = &g.rules[i];
        strs *lists[] = {&r->users,     &r->groups,     &r->verbs, &r->api_groups,
                         &r->resources, &r->namespaces, &r->names, &r->urls};
        for (size_t k = 0; k < sizeof(lists) / sizeof(lists[0]); k++)
            strs_free(lists[k]);
    }
    free(g.rules);
    for (size_t i = 0; i < g.n_tokens; i++) {
        free(g.tokens[i].token);
        free(g.tokens[i].user);
        free(g.tokens[i].uid);
        strs_free(&g.tokens[i].groups);
    }
    free(g.tokens);
    free(g.policy_file);
    free(g.token_file);
    memset(&g, 0, sizeof(g));
}

static const emu_plugin plugin = {.name = "authz", .flag = flag, .init = init, .fini = fini};

__attribute__((constructor)) static void register_plugin(void)
{
    emu_plugin_register(&plugin);
}
