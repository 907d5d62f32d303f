/*
 * tests/emulator/list.c - LIST: label and field selectors, limit/continue
 * pagination from a consistent snapshot (continue tokens are kube-apiserver's
 * base64url {"v":"meta.k8s.io/v1","rv":N,"start":"key\u0000"}), the
 * resourceVersion / resourceVersionMatch semantics of v1.23 (watch cache for
 * "0", etcd for "" and limits, Exact snapshots) and the 410 answers for
 * expired continue tokens and too old Exact versions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"
#include "kube/util/clock.h"

static const char inconsistent_continue[] =
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list.";

typedef struct list_opts {
    char *label_sel;
    char *field_sel;
    char *limit_s;
    char *cont;
    char *rv_s;
    char *match;
    emu_selector labels;
    emu_selector fields;
    int64_t limit;
    int64_t rv;       /* parsed resourceVersion, 0 if absent or "0" */
    int64_t token_rv; /* from the continue token, -1: latest */
    char *start;      /* relative start key from the token */
} list_opts;

static void opts_free(list_opts *o)
{
    free(o->label_sel);
    free(o->field_sel);
    free(o->limit_s);
    free(o->cont);
    free(o->rv_s);
    free(o->match);
    free(o->start);
    emu_selector_free(&o->labels);
    emu_selector_free(&o->fields);
}

static int bad_request(emu_response *resp, const char *msg)
{
    return emu_response_status(resp, 400, "BadRequest", msg, NULL);
}

int emu_list_options_invalid(emu_response *resp, const char *detail)
{
    char msg[512];
    cJSON *details = emu_details(NULL, "meta.k8s.io", "ListOptions"), *causes = cJSON_CreateArray(),
          *c = cJSON_CreateObject();

    snprintf(msg, sizeof(msg),
             "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: "
             "Forbidden: %s",
             detail);
    cJSON_AddStringToObject(c, "reason", "FieldValueForbidden");
    cJSON_AddStringToObject(
        c, "message",
        msg + strlen("ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: "));
    cJSON_AddStringToObject(c, "field", "resourceVersionMatch");
    cJSON_AddItemToArray(causes, c);
    cJSON_AddItemToObject(details, "causes", causes);
    return emu_response_status(resp, 422, "Invalid", msg, details);
}

/* Decodes a continue token. */
static int decode_continue(list_opts *o, emu_response *resp)
{
    size_t n;
    unsigned char *raw = emu_b64_decode(o->cont, &n);
    cJSON *tok = raw ? cJSON_ParseWithLength((const char *)raw, n) : NULL;
    const char *v = emu_json_str(tok, "v"), *start = emu_json_str(tok, "start");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(tok, "rv");
    int ok = v && !strcmp(v, "meta.k8s.io/v1") && start && cJSON_IsNumber(rv);

    if (ok) {
        o->token_rv = (int64_t)rv->valuedouble;
        o->start = kube_strdup(start);
    }
    free(raw);
    cJSON_Delete(tok);
    if (!ok) {
        bad_request(resp, "continue key is not valid: incorrect encoded start resourceVersion "
                          "(version meta.k8s.io/v1)");
        return KUBE_EBADREQUEST;
    }
    return KUBE_OK;
}

static int parse_opts(emu_request *req, emu_resource *r, list_opts *o, emu_response *resp)
{
    char err[512];

    o->label_sel = emu_query_get(req, "labelSelector");
    o->field_sel = emu_query_get(req, "fieldSelector");
    o->limit_s = emu_query_get(req, "limit");
    o->cont = emu_query_get(req, "continue");
    o->rv_s = emu_query_get(req, "resourceVersion");
    o->match = emu_query_get(req, "resourceVersionMatch");
    if (emu_label_selector_parse(o->label_sel, &o->labels, err, sizeof(err)) != KUBE_OK ||
        emu_field_selector_parse(o->field_sel, r->fields, &o->fields, err, sizeof(err)) != KUBE_OK)
        return bad_request(resp, err), KUBE_EBADREQUEST;
    if (o->limit_s && *o->limit_s &&
        kube_parse_int64(o->limit_s, INT64_MIN, INT64_MAX, &o->limit) != KUBE_OK) {
        snprintf(err, sizeof(err), "strconv.ParseInt: parsing \"%s\": invalid syntax", o->limit_s);
        return bad_request(resp, err), KUBE_EBADREQUEST;
    }
    if (o->rv_s && *o->rv_s && kube_parse_int64(o->rv_s, 0, INT64_MAX, &o->rv) != KUBE_OK) {
        snprintf(err, sizeof(err), "invalid resource version \"%s\"", o->rv_s);
        return bad_request(resp, err), KUBE_EBADREQUEST;
    }
    if (o->match && *o->match) {
        const char *why = NULL;
        if (!o->rv_s || !*o->rv_s)
            why = "resourceVersionMatch is forbidden unless resourceVersion is provided";
        else if (o->cont && *o->cont)
            why = "resourceVersionMatch is forbidden when continue is provided";
        else if (strcmp(o->match, "Exact") && strcmp(o->match, "NotOlderThan"))
            why = "resourceVersionMatch must be one of \"Exact\", \"NotOlderThan\"";
        else if (!strcmp(o->match, "Exact") && !strcmp(o->rv_s, "0"))
            why = "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"";
        if (why)
            return emu_list_options_invalid(resp, why), KUBE_EINVALID;
    }
    if (o->cont && *o->cont) {
        if (o->rv_s && *o->rv_s)
            return bad_request(resp, "specifying resource version is not allowed when using "
                                     "continue"),
                   KUBE_EBADREQUEST;
        return decode_continue(o, resp);
    }
    return KUBE_OK;
}

/* Encodes the token for a list at rv continuing after key (relative). Go
 * writes the NUL that makes the start exclusive as "\u0000". */
static char *encode_continue(int64_t rv, const char *rel_key)
{
    cJSON *s = cJSON_CreateString(rel_key);
    char *json = s ? cJSON_PrintUnformatted(s) : NULL, *out = NULL;
    kube_buf b = KUBE_BUF_INIT;

    cJSON_Delete(s);
    if (json && json[0]) {
        json[strlen(json) - 1] = '\0'; /* drop the closing quote */
        if (kube_buf_printf(&b, "{\"v\":\"meta.k8s.io/v1\",\"rv\":%lld,\"start\":%s\\u0000\"}",
                            (long long)rv, json) == KUBE_OK)
            out = emu_b64url_encode(b.data, b.len);
    }
    free(json);
    kube_buf_free(&b);
    return out;
}

static const char *relative_key(const emu_resource *r, const char *ns, const emu_obj *o)
{
    return r->def->namespaced && ns && *ns ? o->name : o->key;
}

static char *absolute_start(const emu_resource *r, const char *ns, const char *rel)
{
    kube_buf b = KUBE_BUF_INIT;

    if (r->def->namespaced && ns && *ns)
        kube_buf_printf(&b, "%s/%s", ns, rel);
    else
        kube_buf_puts(&b, rel);
    return kube_buf_take(&b);
}

/* Appends item JSON without the leading kind/apiVersion of typed kinds
 * (kube-apiserver omits them inside lists). */
static int append_item(kube_buf *b, const emu_resource *r, const emu_obj *o, const char *prefix,
                       size_t plen)
{
    if (!r->def->custom && o->len > plen && !memcmp(o->json, prefix, plen))
        return kube_buf_puts(b, "{") == KUBE_OK ? kube_buf_append(b, o->json + plen, o->len - plen)
                                                : KUBE_ENOMEM;
    return kube_buf_append(b, o->json, o->len);
}

static int render(emu_response *resp, const emu_resource *r, const emu_list_result *res,
                  const char *cont, int64_t remaining)
{
    kube_buf b = KUBE_BUF_INIT;
    char gv[128], prefix[256], rest[128] = "";
    int rc;

    snprintf(gv, sizeof(gv), "%s%s%s", r->def->group, *r->def->group ? "/" : "", r->def->version);
    snprintf(prefix, sizeof(prefix), "{\"kind\":\"%s\",\"apiVersion\":\"%s\",", r->def->kind, gv);
    if (remaining >= 0)
        snprintf(rest, sizeof(rest), ",\"remainingItemCount\":%lld", (long long)remaining);
    if (r->def->custom)
        rc = kube_buf_printf(&b, "{\"apiVersion\":\"%s\",\"items\":[", gv);
    else
        rc = kube_buf_printf(&b,
                             "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{"
                             "\"resourceVersion\":\"%lld\"%s%s%s%s},\"items\":[",
                             r->def->list_kind, gv, (long long)res->rv,
                             cont ? ",\"continue\":\"" : "", cont ? cont : "", cont ? "\"" : "",
                             rest);
    for (size_t i = 0; rc == KUBE_OK && i < res->n; i++) {
        if (i)
            rc = kube_buf_puts(&b, ",");
        if (rc == KUBE_OK)
            rc = append_item(&b, r, res->items[i], prefix, strlen(prefix));
    }
    if (rc == KUBE_OK && r->def->custom)
        rc = kube_buf_printf(&b,
                             "],\"kind\":\"%s\",\"metadata\":{\"continue\":\"%s\"%s,"
                             "\"resourceVersion\":\"%lld\"}}",
                             r->def->list_kind, cont ? cont : "", rest, (long long)res->rv);
    else if (rc == KUBE_OK)
        rc = kube_buf_puts(&b, "]}");
    if (rc == KUBE_OK)
        rc = emu_response_raw(resp, 200, "application/json", b.data, b.len);
    kube_buf_free(&b);
    return rc;
}

static int expired_continue(emu_response *resp, const list_opts *o)
{
    char *tok = encode_continue(-1, o->start);
    cJSON *st = emu_status_new(410, "Expired", inconsistent_continue, NULL);
    int rc;

    if (tok && st)
        cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(st, "metadata"), "continue", tok);
    rc = emu_response_json(resp, 410, st);
    cJSON_Delete(st);
    free(tok);
    return rc;
}

static int too_large(emu_response *resp, int64_t want, int64_t cur)
{
    char msg[160];
    cJSON *details = cJSON_CreateObject(), *causes = cJSON_CreateArray(), *c = cJSON_CreateObject();

    snprintf(msg, sizeof(msg), "Timeout: Too large resource version: %lld, current: %lld",
             (long long)want, (long long)cur);
    cJSON_AddStringToObject(c, "reason", "ResourceVersionTooLarge");
    cJSON_AddStringToObject(c, "message", "Too large resource version");
    cJSON_AddItemToArray(causes, c);
    cJSON_AddItemToObject(details, "causes", causes);
    cJSON_AddNumberToObject(details, "retryAfterSeconds", 1);
    return emu_response_status(resp, 504, "Timeout", msg, details);
}

/* Waits up to 3 s for the store to reach rv (the watch cache's
 * waitUntilFreshAndBlock). Returns 1 when fresh enough. */
static int wait_fresh(emu_server *s, int64_t rv)
{
    int64_t deadline = kube_now_ms() + 3000;

    while (emu_store_rv(s->store) < rv && kube_now_ms() < deadline)
        emu_store_wait(s->store, emu_store_rv(s->store), 100);
    return emu_store_rv(s->store) >= rv;
}

int emu_list_handle(emu_server *s, emu_request *req, emu_resource *r, emu_response *resp)
{
    list_opts o = {0};
    emu_list_query q = {0};
    emu_list_result res = {0};
    const char *ns = r->def->namespaced ? req->attrs.namespace_ : NULL;
    char *abs_start = NULL, *cont = NULL;
    int exact, paginate, rc;

    o.token_rv = 0;
    if (parse_opts(req, r, &o, resp) != KUBE_OK)
        goto out;
    exact = o.match && !strcmp(o.match, "Exact");
    paginate = o.limit > 0 && !(o.rv_s && !strcmp(o.rv_s, "0") && !exact);
    q.ns = ns;
    q.labels = &o.labels;
    q.fields = &o.fields;
    q.limit = paginate ? o.limit : 0;
    if (o.start) {
        abs_start = absolute_start(r, ns, o.start);
        q.start = abs_start;
        q.start_exclusive = 1;
        q.at_rv = o.token_rv > 0 ? o.token_rv : 0;
    } else if (exact) {
        q.at_rv = o.rv;
    } else if (o.rv > 0 && o.rv > emu_store_rv(s->store) && !wait_fresh(s, o.rv)) {
        too_large(resp, o.rv, emu_store_rv(s->store));
        goto out;
    }
    rc = emu_store_list(s->store, r, &q, &res);
    if (rc == KUBE_EGONE && o.start) {
        expired_continue(resp, &o);
        goto out;
    }
    if (rc == KUBE_EGONE) {
        emu_response_status(resp, 410, "Expired",
                            "The resourceVersion for the provided list is too old.", NULL);
        goto out;
    }
    if (rc == KUBE_ERANGE) {
        too_large(resp, q.at_rv, emu_store_rv(s->store));
        goto out;
    }
    if (rc != KUBE_OK) {
        emu_response_status(resp, 500, "InternalError", kube_strerror(rc), NULL);
        goto out;
    }
    if (paginate && res.more && res.n > 0)
        cont = encode_continue(res.rv, relative_key(r, ns, res.items[res.n - 1]));
    if (!emu_table_list(resp, req, r, res.items, res.n, res.rv, cont,
                        cont && emu_selector_empty(&o.labels) && emu_selector_empty(&o.fields)
                            ? res.remaining
                            : -1))
        render(resp, r, &res, cont,
               cont && emu_selector_empty(&o.labels) && emu_selector_empty(&o.fields)
                   ? res.remaining
                   : -1);
out:
    free(cont);
    free(abs_start);
    emu_list_result_free(&res);
    opts_free(&o);
    return 1;
}
