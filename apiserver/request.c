/*
 * apiserver/request.c - what a request asks for: the route of its path, the
 * query parameters stickyvm-apiserver reads, the authorization verb, and the
 * body rule. The contract is in request.h.
 */
#include "request.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/codec/selector.h"
#include "kube/codec/validation.h"
#include "kube/serving/query.h"
#include "kube/util/buf.h"
#include "kube/util/duration.h"
#include "kube/util/errors.h"
#include "kube/util/flags.h"

#define MAX_SEGMENTS 9

static const char label_rule[] =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character";
static const char subdomain_rule[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character";

static int fail(char *msg, size_t msglen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *msg, size_t msglen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
    return KUBE_EBADREQUEST;
}

/* Origin-form, no percent-encoding, no empty or dot segments. */
static int check_path(const char *path, char *msg, size_t msglen)
{
    const char *p = path + 1;

    if (strchr(path, '%'))
        return fail(msg, msglen, "invalid path %s: percent-encoded characters are not allowed",
                    path);
    if (strcmp(path, "/") == 0)
        return KUBE_OK;
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 0)
            return fail(msg, msglen, "invalid path %s: empty path segment%s", path,
                        slash ? " (double slash)" : " (trailing slash)");
        if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
            return fail(msg, msglen, "invalid path %s: \".\" and \"..\" segments are not allowed",
                        path);
        if (!slash)
            return KUBE_OK;
        p = slash + 1;
    }
}

/* Splits a checked path (not "/") in place into at most MAX_SEGMENTS. */
static size_t split(char *copy, char **segs)
{
    size_t n = 0;
    char *p = copy + 1;

    while (p && n < MAX_SEGMENTS) {
        char *slash = strchr(p, '/');
        if (slash)
            *slash = '\0';
        segs[n++] = p;
        p = slash ? slash + 1 : NULL;
    }
    return p ? MAX_SEGMENTS + 1 : n;
}

static apis_route_kind single_segment(const char *s)
{
    if (strcmp(s, "metrics") == 0)
        return APIS_ROUTE_METRICS;
    if (strcmp(s, "apis") == 0)
        return APIS_ROUTE_APIS;
    return APIS_ROUTE_NOT_FOUND;
}

/* Checks and copies the namespace (and name, when non-NULL). */
static int take_names(const char *ns, const char *name, apis_route *out, char *msg, size_t msglen)
{
    if (!kube_is_dns1123_label(ns))
        return fail(msg, msglen, "invalid namespace \"%s\": %s", ns, label_rule);
    if (name && !kube_is_dns1123_subdomain_n(name, strlen(name)))
        return fail(msg, msglen, "invalid name \"%s\": %s", name, subdomain_rule);
    kube_strlcpy(out->namespace_, ns, sizeof(out->namespace_));
    if (name)
        kube_strlcpy(out->name, name, sizeof(out->name));
    return KUBE_OK;
}

/* .../namespaces/{ns}/virtualmachines/{name}/{pin,unpin} (8 segments). */
static int pin_route(char **segs, apis_route *out, char *msg, size_t msglen)
{
    const char *sub = segs[7];
    int rc;

    if (strcmp(segs[3], "namespaces") != 0 || strcmp(segs[5], "virtualmachines") != 0)
        return KUBE_OK;
    if (strcmp(sub, "pin") != 0 && strcmp(sub, "unpin") != 0)
        return KUBE_OK;
    rc = take_names(segs[4], segs[6], out, msg, msglen);
    if (rc == KUBE_OK)
        out->kind = strcmp(sub, "pin") == 0 ? APIS_ROUTE_PIN : APIS_ROUTE_UNPIN;
    return rc;
}

/* .../virtualmachinepins (4 segments), .../namespaces/{ns}/virtualmachinepins
 * (6) and .../namespaces/{ns}/virtualmachinepins/{name} (7). */
static int vmpins_route(char **segs, size_t n, apis_route *out, char *msg, size_t msglen)
{
    int rc;

    if (n == 4) {
        if (strcmp(segs[3], "virtualmachinepins") == 0)
            out->kind = APIS_ROUTE_VMPINS;
        return KUBE_OK;
    }
    if (strcmp(segs[3], "namespaces") != 0 || strcmp(segs[5], "virtualmachinepins") != 0)
        return KUBE_OK;
    rc = take_names(segs[4], n == 7 ? segs[6] : NULL, out, msg, msglen);
    if (rc == KUBE_OK)
        out->kind = n == 7 ? APIS_ROUTE_VMPIN : APIS_ROUTE_VMPINS;
    return rc;
}

/* Routes under /apis/subresources.stickyvm.io (n >= 2 segments). */
static int group_route(char **segs, size_t n, apis_route *out, char *msg, size_t msglen)
{
    if (n == 2) {
        out->kind = APIS_ROUTE_GROUP;
        return KUBE_OK;
    }
    if (strcmp(segs[2], APIS_VERSION) != 0)
        return KUBE_OK;
    if (n == 3)
        out->kind = APIS_ROUTE_VERSION;
    else if (n == 8)
        return pin_route(segs, out, msg, msglen);
    else if (n == 4 || n == 6 || n == 7)
        return vmpins_route(segs, n, out, msg, msglen);
    return KUBE_OK;
}

static int classify(const char *path, apis_route *out, char *msg, size_t msglen)
{
    char *segs[MAX_SEGMENTS];
    char *copy;
    size_t n;
    int rc = KUBE_OK;

    if (strcmp(path, "/") == 0) {
        out->kind = APIS_ROUTE_ROOT;
        return KUBE_OK;
    }
    copy = kube_strdup(path);
    if (!copy)
        return KUBE_ENOMEM;
    n = split(copy, segs);
    if (n == 1)
        out->kind = single_segment(segs[0]);
    else if (n == 2 && strcmp(segs[0], "openapi") == 0 && strcmp(segs[1], "v2") == 0)
        out->kind = APIS_ROUTE_OPENAPI_V2;
    else if (n >= 2 && n <= MAX_SEGMENTS && strcmp(segs[0], "apis") == 0 &&
             strcmp(segs[1], APIS_GROUP) == 0)
        rc = group_route(segs, n, out, msg, msglen);
    free(copy);
    return rc;
}

static int has_control_byte(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return 1;
    return 0;
}

static int take_node(const char *val, size_t vlen, apis_route *out, char *msg, size_t msglen)
{
    int rc;

    if (out->has_node)
        return fail(msg, msglen, "the query parameter node may be given only once");
    out->has_node = 1;
    /* the whole value (a decoded value is never longer), so that an
     * invalid one can be shown as it was given */
    out->node = malloc(vlen + 1);
    if (!out->node)
        return KUBE_ENOMEM;
    rc = kube_query_unescape(val, vlen, out->node, vlen + 1, &out->node_len);
    if (rc == KUBE_EBADREQUEST)
        return fail(msg, msglen, "invalid escape in query parameter node");
    if (rc == KUBE_OK && has_control_byte(out->node, out->node_len))
        return fail(msg, msglen,
                    "invalid query parameter node: control characters are not allowed");
    out->node_valid = rc == KUBE_OK && kube_is_dns1123_subdomain_n(out->node, out->node_len);
    return rc;
}

/* ?from=: the precondition, empty or a node name, given once. */
static int take_from(const char *val, apis_route *out, char *msg, size_t msglen)
{
    if (out->has_from)
        return fail(msg, msglen, "the query parameter from may be given only once");
    if (*val && (!kube_is_dns1123_subdomain_n(val, strlen(val)) ||
                 kube_strlcpy(out->from, val, sizeof(out->from)) != KUBE_OK))
        return fail(msg, msglen,
                    "invalid value \"%s\" for the query parameter from: want a node name (a "
                    "DNS-1123 subdomain), or nothing for \"only if unpinned\"",
                    val);
    out->has_from = 1;
    return KUBE_OK;
}

/* One decoded parameter of /pin or /unpin other than node: from, dryRun,
 * force or timeout, else a 400 naming it. */
static int take_param(const char *key, const char *val, apis_route *out, char *msg, size_t msglen)
{
    const char *sub = apis_route_subresource(out->kind);
    int64_t ms;

    if (strcmp(key, "from") == 0)
        return take_from(val, out, msg, msglen);
    if (strcmp(key, "dryRun") == 0) {
        if (strcmp(val, "All") != 0)
            return fail(msg, msglen, "dryRun: Unsupported value: \"%s\": supported values: \"All\"",
                        val);
        out->dry_run = 1;
        return KUBE_OK;
    }
    if (strcmp(key, "timeout") == 0) {
        if (kube_duration_parse(val, &ms) != KUBE_OK || ms < 0)
            return fail(msg, msglen, "invalid timeout specified in the request URL");
        return KUBE_OK;
    }
    if (strcmp(key, "force") == 0) {
        out->force = kube_parse_bool(val);
        if (out->force < 0)
            return fail(msg, msglen,
                        "invalid value \"%s\" for the query parameter force: want "
                        "true or false",
                        val);
        return KUBE_OK;
    }
    return fail(msg, msglen, "unknown query parameter \"%s\": %s accepts only %s", key, sub,
                out->kind == APIS_ROUTE_PIN ? "node, from, force, dryRun and timeout"
                                            : "from, force, dryRun and timeout");
}

/* A list whose fieldSelector requires metadata.name=X is authorized for
 * the name X, as k8s.io/apiserver's RequestInfo does (so resourceNames
 * rules apply): X goes to out->name. Anything unparsable is left to the
 * handler's 400. */
static void selected_name(apis_route *out)
{
    char fields[1024];
    kube_label_selector *sel = NULL;

    if (kube_query_get(out->query, "fieldSelector", fields, sizeof(fields)) != KUBE_OK ||
        kube_label_selector_parse(fields, &sel) != KUBE_OK)
        return;
    for (size_t i = 0; i < sel->n_reqs; i++) {
        const kube_requirement *r = &sel->reqs[i];
        if (r->op == KUBE_SEL_IN && r->n_values == 1 && strcmp(r->key, "metadata.name") == 0 &&
            strlen(r->values[0]) < sizeof(out->name))
            kube_strlcpy(out->name, r->values[0], sizeof(out->name));
    }
    kube_label_selector_free(sel);
}

/* A single-valued parameter (force, timeout) given twice is refused as a
 * repeated node is: kube-apiserver would silently take the first. dryRun
 * is list-valued in kube-apiserver (ValidateDryRun: every value All), so
 * dryRun=All&dryRun=All is accepted as it is there. seen: the parameters
 * met so far (bits), updated. */
static int once(const char *key, unsigned *seen, char *msg, size_t msglen)
{
    unsigned bit = strcmp(key, "force") == 0 ? 1u : strcmp(key, "timeout") == 0 ? 2u : 0u;
    if (bit & *seen)
        return fail(msg, msglen, "the query parameter %s may be given only once", key);
    *seen |= bit;
    return KUBE_OK;
}

/* Reads the query of /pin and /unpin: node (pin), from, force, dryRun,
 * timeout; any other parameter is a 400 naming it. Every parameter must
 * be well-formed. The virtualmachinepins routes keep the raw query. */
static int parse_query(const char *q, apis_route *out, char *msg, size_t msglen)
{
    kube_query_pair p;
    unsigned seen = 0;
    int rc = KUBE_OK;

    if (!apis_route_is_pin(out->kind)) {
        out->query = q ? kube_strdup(q) : NULL;
        if (q && !out->query)
            return KUBE_ENOMEM;
        if (out->kind == APIS_ROUTE_VMPINS)
            selected_name(out);
        return KUBE_OK;
    }
    while (rc == KUBE_OK && kube_query_next(&q, &p)) {
        if (p.key_rc == KUBE_EBADREQUEST || p.value_rc == KUBE_EBADREQUEST)
            return fail(msg, msglen, "invalid escape in query string");
        if (p.key_rc != KUBE_OK)
            return fail(msg, msglen, "invalid query parameter name");
        if (strcmp(p.key, "node") == 0 && out->kind == APIS_ROUTE_PIN)
            rc = take_node(p.raw_value, p.raw_value_len, out, msg, msglen);
        else if (p.value_rc != KUBE_OK || strlen(p.value) != p.value_len)
            rc = fail(msg, msglen, "invalid value for the query parameter %s", p.key);
        else if ((rc = once(p.key, &seen, msg, msglen)) == KUBE_OK)
            rc = take_param(p.key, p.value, out, msg, msglen);
    }
    return rc;
}

int apis_route_parse(const char *target, apis_route *out, char *msg, size_t msglen)
{
    const char *q;
    size_t plen;
    int rc;

    memset(out, 0, sizeof(*out));
    if (target[0] != '/')
        return fail(msg, msglen,
                    "invalid request target %s: only paths beginning with '/' are served", target);
    if (strchr(target, '#'))
        return fail(msg, msglen, "invalid request target %s: a fragment is not allowed", target);
    q = strchr(target, '?');
    plen = q ? (size_t)(q - target) : strlen(target);
    out->path = strndup(target, plen);
    if (!out->path)
        return KUBE_ENOMEM;
    rc = check_path(out->path, msg, msglen);
    if (rc == KUBE_OK && kube_healthz_parse(target, &out->health))
        out->kind = APIS_ROUTE_HEALTH;
    else if (rc == KUBE_OK)
        rc = classify(out->path, out, msg, msglen);
    if (rc == KUBE_OK && apis_route_is_resource(out->kind))
        rc = parse_query(q ? q + 1 : NULL, out, msg, msglen);
    if (rc != KUBE_OK)
        apis_route_free(out);
    return rc;
}

void apis_route_free(apis_route *r)
{
    free(r->path);
    free(r->node);
    free(r->query);
    memset(r, 0, sizeof(*r));
}

int apis_route_is_resource(const apis_route_kind kind)
{
    return apis_route_is_pin(kind) || kind == APIS_ROUTE_VMPINS || kind == APIS_ROUTE_VMPIN;
}

int apis_route_is_pin(apis_route_kind kind)
{
    return kind == APIS_ROUTE_PIN || kind == APIS_ROUTE_UNPIN;
}

const char *apis_route_resource(apis_route_kind kind)
{
    if (apis_route_is_pin(kind))
        return "virtualmachines";
    if (kind == APIS_ROUTE_VMPINS || kind == APIS_ROUTE_VMPIN)
        return "virtualmachinepins";
    return "";
}

const char *apis_route_subresource(apis_route_kind kind)
{
    if (kind == APIS_ROUTE_PIN)
        return "pin";
    if (kind == APIS_ROUTE_UNPIN)
        return "unpin";
    return "";
}

void apis_request_verb(const char *method, int resource_request, char *out, size_t n)
{
    static const struct {
        const char *method, *verb;
    } map[] = {{"GET", "get"},     {"HEAD", "get"},    {"PUT", "update"},
               {"POST", "create"}, {"PATCH", "patch"}, {"DELETE", "delete"}};
    size_t i;

    if (resource_request) {
        for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
            if (strcmp(method, map[i].method) == 0) {
                kube_strlcpy(out, map[i].verb, n);
                return;
            }
        }
    }
    for (i = 0; method[i] && i + 1 < n; i++)
        out[i] = (char)tolower((unsigned char)method[i]);
    if (n)
        out[i < n ? i : n - 1] = '\0';
}

void apis_route_verb(const apis_route *r, const char *method, char *out, size_t n)
{
    char watch[16];

    apis_request_verb(method, apis_route_is_resource(r->kind), out, n);
    if (r->kind != APIS_ROUTE_VMPINS || strcmp(out, "get") != 0)
        return;
    if (kube_query_get(r->query, "watch", watch, sizeof(watch)) == KUBE_OK &&
        kube_parse_bool(watch) == 1)
        kube_strlcpy(out, "watch", n);
    else
        kube_strlcpy(out, "list", n);
}

static const char *skip_json_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p;
}

int apis_body_check(const char *body, size_t len)
{
    const char *end = body ? body + len : NULL;
    const char *p;

    if (!body || len == 0)
        return KUBE_OK;
    p = skip_json_ws(body, end);
    if (p == end)
        return KUBE_OK;
    if (*p != '{')
        return KUBE_EBADREQUEST;
    p = skip_json_ws(p + 1, end);
    if (p == end || *p != '}')
        return KUBE_EBADREQUEST;
    p = skip_json_ws(p + 1, end);
    return p == end ? KUBE_OK : KUBE_EBADREQUEST;
}
