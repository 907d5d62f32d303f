/*
 * tests/emulator/rbac.c - RBAC (rbac.authorization.k8s.io/v1) in the
 * emulator: the four kinds are always served (so `kubectl apply` of RBAC
 * manifests works), and with
 *
 *     --authorization-mode=RBAC      (kube-apiserver's flag; a comma list)
 *
 * they are enforced: emu_rbac_allows() (authz_ext.h) evaluates the stored
 * ClusterRoleBindings and the RoleBindings of the request's namespace as
 * k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac does (subjects User,
 * Group and ServiceAccount; roleRef ClusterRole or Role; rules with verbs,
 * apiGroups, resources ("*", "res/sub", "star/sub"), resourceNames (exact
 * names, no wildcard) and nonResourceURLs with a trailing "*"; RoleBindings
 * only for resource requests in their namespace). A list or watch that names one
 * object with fieldSelector=metadata.name=NAME is checked against
 * resourceNames with that name, as kube-apiserver's RequestInfo does.
 * aggregationRule is not evaluated.
 *
 * RBAC mode also seeds the bootstrap roles stickyvm's manifests bind to:
 * ClusterRoles cluster-admin and system:auth-delegator, and the Role
 * kube-system/extension-apiserver-authentication-reader (labelled
 * kubernetes.io/bootstrapping=rbac-defaults, as kube-apiserver makes them).
 * system:masters, discovery and health stay allowed by the authz plug-in.
 *
 * Without the flag nothing is seeded and nothing changes for other users
 * of the emulator.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "authz_ext.h"
#include "emu_internal.h"
#include "kube/util/log.h"

#define RBAC_GROUP "rbac.authorization.k8s.io"

static const emu_resource_def defs[] = {
    {RBAC_GROUP, "v1", "clusterroles", "clusterrole", "ClusterRole", "ClusterRoleList", NULL, NULL,
     0, 0, 0, NULL},
    {RBAC_GROUP, "v1", "clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding",
     "ClusterRoleBindingList", NULL, NULL, 0, 0, 0, NULL},
    {RBAC_GROUP, "v1", "roles", "role", "Role", "RoleList", NULL, NULL, 1, 0, 0, NULL},
    {RBAC_GROUP, "v1", "rolebindings", "rolebinding", "RoleBinding", "RoleBindingList", NULL, NULL,
     1, 0, 0, NULL},
};
enum { K_CR, K_CRB, K_ROLE, K_RB, K_COUNT };

static const char *const top_order[] = {
    "kind", "apiVersion", "metadata", "rules", "aggregationRule", "subjects", "roleRef", NULL};
static const emu_kind_ops rbac_ops = {.order = top_order};

static emu_resource *g_res[K_COUNT];
static emu_server *g_server;
static int g_enabled;

/* The metadata.name a list/watch of the current request selects, or "". */
static __thread char t_selected[254];

/* ------------------------------------------------------------------ */
/* Matching                                                            */
/* ------------------------------------------------------------------ */

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* 1 if the string array holds s or "*". */
static int list_has(const cJSON *arr, const char *s)
{
    const cJSON *it;

    cJSON_ArrayForEach(it, arr) if (cJSON_IsString(it) && (!strcmp(it->valuestring, "*") ||
                                                           !strcmp(it->valuestring, s))) return 1;
    return 0;
}

static int resource_matches(const cJSON *resources, const char *res, const char *sub)
{
    char combined[256];
    const cJSON *it;

    snprintf(combined, sizeof(combined), "%s%s%s", res, *sub ? "/" : "", sub);
    cJSON_ArrayForEach(it, resources)
    {
        const char *r = cJSON_IsString(it) ? it->valuestring : "";
        if (!strcmp(r, "*") || !strcmp(r, combined))
            return 1;
        if (*sub && !strncmp(r, "*/", 2) && !strcmp(r + 2, sub))
            return 1;
    }
    return 0;
}

/* 1 if the string array holds s exactly (no wildcard: resourceNames). */
static int list_has_exact(const cJSON *arr, const char *s)
{
    const cJSON *it;

    cJSON_ArrayForEach(it, arr) if (cJSON_IsString(it) && !strcmp(it->valuestring, s)) return 1;
    return 0;
}

/* NonResourceURLMatches: "*", the path, or a prefix ending in stars (all
 * trailing stars trimmed, as strings.TrimRight does). */
static int url_matches(const cJSON *urls, const char *path)
{
    const cJSON *it;

    cJSON_ArrayForEach(it, urls)
    {
        const char *u = cJSON_IsString(it) ? it->valuestring : "";
        size_t n = strlen(u);
        if (!strcmp(u, "*") || !strcmp(u, path))
            return 1;
        if (!n || u[n - 1] != '*')
            continue;
        while (n && u[n - 1] == '*')
            n--;
        if (!strncmp(u, path, n))
            return 1;
    }
    return 0;
}

static int rule_allows(const cJSON *rule, const emu_attrs *a, const char *name)
{
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(rule, "resourceNames");

    if (!list_has(cJSON_GetObjectItemCaseSensitive(rule, "verbs"), a->verb))
        return 0;
    if (!a->is_resource)
        return url_matches(cJSON_GetObjectItemCaseSensitive(rule, "nonResourceURLs"), a->path);
    if (!list_has(cJSON_GetObjectItemCaseSensitive(rule, "apiGroups"), a->api_group) ||
        !resource_matches(cJSON_GetObjectItemCaseSensitive(rule, "resources"), a->resource,
                          a->subresource))
        return 0;
    if (cJSON_GetArraySize(names) == 0)
        return 1;
    return list_has_exact(names, name);
}

static int role_allows(const cJSON *role, const emu_attrs *a, const char *name)
{
    const cJSON *rule;

    cJSON_ArrayForEach(rule, cJSON_GetObjectItemCaseSensitive(
                                 role, "rules")) if (rule_allows(rule, a, name)) return 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Bindings                                                            */
/* ------------------------------------------------------------------ */

typedef struct who {
    const char *user;
    char *const *groups;
    size_t n;
    const emu_attrs *a;
    const char *name; /* the object name RBAC sees */
} who;

static int subject_matches(const cJSON *subj, const char *binding_ns, const who *w)
{
    const char *kind = str_of(subj, "kind"), *name = str_of(subj, "name");

    if (!strcmp(kind, "User"))
        return w->user && !strcmp(w->user, name);
    if (!strcmp(kind, "Group")) {
        for (size_t i = 0; i < w->n; i++)
            if (!strcmp(w->groups[i], name))
                return 1;
        return 0;
    }
    if (!strcmp(kind, "ServiceAccount")) {
        const char *ns = *str_of(subj, "namespace") ? str_of(subj, "namespace") : binding_ns;
        char sa[600];
        if (!*ns)
            return 0; /* no namespace to default to (a ClusterRoleBinding) */
        snprintf(sa, sizeof(sa), "system:serviceaccount:%s:%s", ns, name);
        return w->user && !strcmp(w->user, sa);
    }
    return 0;
}

static int binding_applies(const cJSON *binding, const who *w)
{
    const char *ns = emu_json_str(binding, "metadata.namespace");
    const cJSON *subj;

    cJSON_ArrayForEach(
        subj, cJSON_GetObjectItemCaseSensitive(
                  binding, "subjects")) if (subject_matches(subj, ns ? ns : "", w)) return 1;
    return 0;
}

/* The role a binding refers to (Role only from a RoleBinding). */
static int bound_role_allows(const cJSON *binding, const who *w, int namespaced)
{
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(binding, "roleRef");
    const char *kind = str_of(ref, "kind"), *ns = emu_json_str(binding, "metadata.namespace");
    cJSON *role = NULL;
    int allowed;

    if (!strcmp(kind, "ClusterRole"))
        emu_store_get(g_server, g_res[K_CR], NULL, str_of(ref, "name"), &role);
    else if (namespaced && !strcmp(kind, "Role") && ns)
        emu_store_get(g_server, g_res[K_ROLE], ns, str_of(ref, "name"), &role);
    allowed = role && role_allows(role, w->a, w->name);
    cJSON_Delete(role);
    return allowed;
}

static int visit_cluster_binding(void *ctx, const cJSON *b)
{
    return binding_applies(b, ctx) && bound_role_allows(b, ctx, 0);
}

static int visit_binding(void *ctx, const cJSON *b)
{
    return binding_applies(b, ctx) && bound_role_allows(b, ctx, 1);
}

int emu_rbac_allows(const char *user, char *const *groups, size_t n_groups, const emu_attrs *a)
{
    who w = {user, groups, n_groups, a, a->name};

    if (!g_enabled)
        return 0;
    if (!*w.name && a->is_resource && (!strcmp(a->verb, "list") || !strcmp(a->verb, "watch")))
        w.name = t_selected;
    if (emu_store_each(g_server, g_res[K_CRB], NULL, visit_cluster_binding, &w) > 0)
        return 1;
    if (!a->is_resource || !*a->namespace_)
        return 0;
    return emu_store_each(g_server, g_res[K_RB], a->namespace_, visit_binding, &w) > 0;
}

/* ------------------------------------------------------------------ */
/* Rules (SelfSubjectRulesReview)                                      */
/* ------------------------------------------------------------------ */

typedef struct rules_ctx {
    who w;
    cJSON *res;    /* resourceRules */
    cJSON *nonres; /* nonResourceRules */
} rules_ctx;

static void copy_member(cJSON *dst, const cJSON *rule, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(rule, key);

    if (cJSON_GetArraySize(v) > 0)
        cJSON_AddItemToObject(dst, key, cJSON_Duplicate(v, 1));
}

/* RBACAuthorizer.RulesFor: a rule with resources is a resource rule, one
 * with nonResourceURLs a non-resource rule. */
static void add_role_rules(rules_ctx *c, const cJSON *role)
{
    const cJSON *rule;

    cJSON_ArrayForEach(rule, cJSON_GetObjectItemCaseSensitive(role, "rules"))
    {
        const cJSON *verbs = cJSON_GetObjectItemCaseSensitive(rule, "verbs");
        if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rule, "resources")) > 0) {
            cJSON *r = cJSON_CreateObject();
            cJSON_AddItemToObject(r, "verbs", cJSON_Duplicate(verbs, 1));
            copy_member(r, rule, "apiGroups");
            copy_member(r, rule, "resources");
            copy_member(r, rule, "resourceNames");
            cJSON_AddItemToArray(c->res, r);
        }
        if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rule, "nonResourceURLs")) > 0) {
            cJSON *r = cJSON_CreateObject();
            cJSON_AddItemToObject(r, "verbs", cJSON_Duplicate(verbs, 1));
            copy_member(r, rule, "nonResourceURLs");
            cJSON_AddItemToArray(c->nonres, r);
        }
    }
}

static int collect_binding(rules_ctx *c, const cJSON *b, int namespaced)
{
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(b, "roleRef");
    const char *kind = str_of(ref, "kind"), *ns = emu_json_str(b, "metadata.namespace");
    cJSON *role = NULL;

    if (!binding_applies(b, &c->w))
        return 0;
    if (!strcmp(kind, "ClusterRole"))
        emu_store_get(g_server, g_res[K_CR], NULL, str_of(ref, "name"), &role);
    else if (namespaced && !strcmp(kind, "Role") && ns)
        emu_store_get(g_server, g_res[K_ROLE], ns, str_of(ref, "name"), &role);
    if (role)
        add_role_rules(c, role);
    cJSON_Delete(role);
    return 0;
}

static int collect_cluster_binding(void *ctx, const cJSON *b)
{
    return collect_binding(ctx, b, 0);
}

static int collect_ns_binding(void *ctx, const cJSON *b)
{
    return collect_binding(ctx, b, 1);
}

void emu_rbac_rules(const char *user, char *const *groups, size_t n_groups, const char *ns,
                    cJSON *resource_rules, cJSON *nonresource_rules)
{
    rules_ctx c = {{user, groups, n_groups, NULL, ""}, resource_rules, nonresource_rules};

    if (!g_enabled)
        return;
    emu_store_each(g_server, g_res[K_CRB], NULL, collect_cluster_binding, &c);
    if (ns && *ns)
        emu_store_each(g_server, g_res[K_RB], ns, collect_ns_binding, &c);
}

/* ------------------------------------------------------------------ */
/* Request facts                                                       */
/* ------------------------------------------------------------------ */

/* fields.RequiresExactMatch("metadata.name") of a field selector. */
static void selected_name(const char *sel, char *out, size_t n)
{
    const char *p = sel;

    out[0] = '\0';
    while (p && *p) {
        const char *end = strchr(p, ','), *v = NULL;
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > 15 && !strncmp(p, "metadata.name==", 15))
            v = p + 15;
        else if (len > 14 && !strncmp(p, "metadata.name=", 14))
            v = p + 14;
        if (v && (size_t)(p + len - v) < n) {
            memcpy(out, v, (size_t)(p + len - v));
            out[p + len - v] = '\0';
        }
        p = end ? end + 1 : NULL;
    }
}

void emu_rbac_note_request(const emu_request *req)
{
    char *sel;

    t_selected[0] = '\0';
    if (!req->attrs.is_resource || *req->attrs.name ||
        (strcmp(req->method, "GET") && strcmp(req->method, "HEAD")))
        return;
    sel = emu_query_get(req, "fieldSelector");
    if (sel)
        selected_name(sel, t_selected, sizeof(t_selected));
    free(sel);
}

/* ------------------------------------------------------------------ */
/* Bootstrap policy                                                    */
/* ------------------------------------------------------------------ */

#define BOOTSTRAP_META                                                                 \
    "\"labels\":{\"kubernetes.io/bootstrapping\":\"rbac-defaults\"},\"annotations\":{" \
    "\"rbac.authorization.kubernetes.io/autoupdate\":\"true\"}"

static const struct {
    int kind;
    const char *ns;
    const char *json;
} bootstrap[] = {
    {K_CR, NULL,
     "{\"metadata\":{\"name\":\"cluster-admin\"," BOOTSTRAP_META "},\"rules\":["
     "{\"apiGroups\":[\"*\"],\"resources\":[\"*\"],\"verbs\":[\"*\"]},"
     "{\"nonResourceURLs\":[\"*\"],\"verbs\":[\"*\"]}]}"},
    {K_CR, NULL,
     "{\"metadata\":{\"name\":\"system:auth-delegator\"," BOOTSTRAP_META "},\"rules\":["
     "{\"apiGroups\":[\"authentication.k8s.io\"],\"resources\":[\"tokenreviews\"],"
     "\"verbs\":[\"create\"]},"
     "{\"apiGroups\":[\"authorization.k8s.io\"],\"resources\":[\"subjectaccessreviews\"],"
     "\"verbs\":[\"create\"]}]}"},
    {K_ROLE, "kube-system",
     "{\"metadata\":{\"name\":\"extension-apiserver-authentication-reader\","
     "\"namespace\":\"kube-system\"," BOOTSTRAP_META "},\"rules\":["
     "{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
     "\"resourceNames\":[\"extension-apiserver-authentication\"],"
     "\"verbs\":[\"get\",\"list\",\"watch\"]}]}"},
};

static int seed(emu_server *s)
{
    for (size_t i = 0; i < sizeof(bootstrap) / sizeof(bootstrap[0]); i++) {
        cJSON *obj = cJSON_Parse(bootstrap[i].json), *st = NULL;
        int rc =
            obj ? emu_store_create(s, g_res[bootstrap[i].kind], bootstrap[i].ns, obj, NULL, &st)
                : KUBE_ENOMEM;
        if (rc != KUBE_OK) {
            char *msg = st ? emu_json_print(st) : NULL;
            KLOG_ERROR("rbac: seeding bootstrap role %zu failed: %s", i,
                       msg ? msg : kube_strerror(rc));
            free(msg);
        }
        cJSON_Delete(st);
        cJSON_Delete(obj);
        if (rc != KUBE_OK)
            return rc;
    }
    return KUBE_OK;
}

/* ------------------------------------------------------------------ */
/* Plug-in                                                             */
/* ------------------------------------------------------------------ */

static int flag(const char *name, const char *value)
{
    const char *p = value;

    if (strcmp(name, "--authorization-mode") != 0)
        return 0;
    if (!value || !*value) {
        fprintf(stderr, "stickyvm-emulator: --authorization-mode needs =MODE[,MODE]\n");
        return KUBE_ECONFIG;
    }
    while (p && *p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 4 && !strncmp(p, "RBAC", 4))
            g_enabled = 1;
        p = end ? end + 1 : NULL;
    }
    return 1;
}

static int init(emu_server *s)
{
    g_server = s;
    for (int k = 0; k < K_COUNT; k++) {
        int rc;
        g_res[k] = emu_resource_find(s, defs[k].group, defs[k].version, defs[k].plural);
        if (g_res[k])
            continue;
        rc = emu_store_add_resource(s->store, &defs[k], &rbac_ops, &g_res[k]);
        if (rc != KUBE_OK)
            return rc;
    }
    if (!g_enabled)
        return KUBE_OK;
    KLOG_V(1, "rbac: enforcing ClusterRoles, Roles and their bindings");
    return seed(s);
}

static void fini(emu_server *s)
{
    (void)s;
    g_enabled = 0;
    g_server = NULL;
    memset(g_res, 0, sizeof(g_res));
}

static const emu_plugin plugin = {.name = "rbac", .flag = flag, .init = init, .fini = fini};

__attribute__((constructor)) static void register_plugin(void)
{
    emu_plugin_register(&plugin);
}
