/*
 * tests/emulator/watch.c - WATCH as kube-apiserver's watch cache serves it:
 * HTTP 200 with a chunked stream of {"type","object"} lines; from a
 * resourceVersion the history after it is replayed; absent or "0" starts
 * with synthetic ADDED events of the current state; a version older than
 * the history gets one ERROR event (Status 410 Expired, "too old resource
 * version: X (Y)"); BOOKMARKs every --bookmark-interval-ms when asked for;
 * label/field selectors filter events, and an object that stops matching is
 * sent as DELETED (its previous state at the event's version). With
 * kubectl get -w's Accept header the objects are Tables (table.c).
 *
 * Each watcher reads the store's shared event ring: objects were serialized
 * once when written, a watcher only frames them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"
#include "kube/util/clock.h"
#include "kube/util/log.h"

#define BATCH 256

typedef struct watcher {
    emu_server *s;
    emu_request *req;
    emu_resource *r;
    const char *ns;
    emu_selector labels;
    emu_selector fields;
    int bookmarks;
    int64_t cursor;
    int64_t deadline_ms;
    int64_t next_bookmark_ms;
    uint64_t epoch;
    kube_buf out;
    emu_table_watch table;
} watcher;

static const char *type_name(int t)
{
    return t == EV_ADDED ? "ADDED" : t == EV_MODIFIED ? "MODIFIED" : "DELETED";
}

static int frame_raw(watcher *w, const char *type, const char *obj, size_t len);

/* Appends one event as its own chunk to the output buffer (its object as
 * a Table when the watch asked for Tables). */
static int frame(watcher *w, const char *type, const char *obj, size_t len)
{
    char *table;
    int rc;

    if (!w->table.on || !strcmp(type, "ERROR") || !strcmp(type, "BOOKMARK"))
        return frame_raw(w, type, obj, len);
    table = emu_table_watch_object(&w->table, w->r, obj, len);
    if (!table)
        return KUBE_ENOMEM;
    rc = frame_raw(w, type, table, strlen(table));
    free(table);
    return rc;
}

static int frame_raw(watcher *w, const char *type, const char *obj, size_t len)
{
    char head[64];
    size_t body = strlen("{\"type\":\"\",\"object\":}\n") + strlen(type) + len;
    int rc;

    snprintf(head, sizeof(head), "%zx\r\n{\"type\":\"%s\",\"object\":", body, type);
    rc = kube_buf_puts(&w->out, head);
    if (rc == KUBE_OK)
        rc = kube_buf_append(&w->out, obj, len);
    if (rc == KUBE_OK)
        rc = kube_buf_puts(&w->out, "}\n\r\n");
    return rc;
}

static int flush(watcher *w)
{
    int rc = KUBE_OK;

    if (w->out.len)
        rc = emu_stream_write_raw(w->req, w->out.data, w->out.len);
    kube_buf_reset(&w->out);
    return rc;
}

static int in_ns(const watcher *w, const emu_obj *o)
{
    return !w->ns || !*w->ns || !strcmp(o->ns, w->ns);
}

static int matches(const watcher *w, const emu_obj *o)
{
    return o && in_ns(w, o) && emu_obj_matches(o, &w->labels, &w->fields);
}

/* The previous state of an object, at the event's resourceVersion. */
static int frame_prev_as_deleted(watcher *w, const emu_event *e)
{
    cJSON *t = emu_obj_tree(e->prev);
    char rv[32], *json;
    int rc = KUBE_ENOMEM;

    snprintf(rv, sizeof(rv), "%lld", (long long)e->rv);
    if (t && emu_json_put_str(emu_json_obj(t, "metadata"), "resourceVersion", rv) == KUBE_OK &&
        (json = emu_json_print(t)) != NULL) {
        rc = frame(w, "DELETED", json, strlen(json));
        free(json);
    }
    cJSON_Delete(t);
    return rc;
}

static int send_event(watcher *w, const emu_event *e)
{
    int now, before;

    if (e->obj->res != w->r)
        return KUBE_OK;
    now = e->type != EV_DELETED && matches(w, e->obj);
    before = matches(w, e->prev);
    if (e->type == EV_DELETED)
        return before ? frame(w, "DELETED", e->obj->json, e->obj->len) : KUBE_OK;
    if (now && !before)
        return frame(w, "ADDED", e->obj->json, e->obj->len);
    if (now)
        return frame(w, type_name(e->type), e->obj->json, e->obj->len);
    if (before)
        return frame_prev_as_deleted(w, e);
    return KUBE_OK;
}

static int send_bookmark(watcher *w)
{
    char rv[32];
    kube_buf obj = KUBE_BUF_INIT;
    int rc;

    snprintf(rv, sizeof(rv), "%lld", (long long)w->cursor);
    rc = kube_buf_printf(&obj, "%s%s%s", w->r->bookmark_prefix, rv, w->r->bookmark_suffix);
    if (rc == KUBE_OK)
        rc = frame(w, "BOOKMARK", obj.data, obj.len);
    kube_buf_free(&obj);
    return rc;
}

static int send_too_old(watcher *w, int64_t rv, int64_t oldest)
{
    char msg[128];
    cJSON *st;
    char *json;
    int rc = KUBE_ENOMEM;

    snprintf(msg, sizeof(msg), "too old resource version: %lld (%lld)", (long long)rv,
             (long long)oldest);
    st = emu_status_new(410, "Expired", msg, NULL);
    json = st ? emu_json_print(st) : NULL;
    if (json)
        rc = frame(w, "ERROR", json, strlen(json));
    free(json);
    cJSON_Delete(st);
    return rc == KUBE_OK ? flush(w) : rc;
}

/* Synthetic ADDED events for the current state. */
static int send_initial(watcher *w)
{
    emu_list_query q = {.ns = w->ns, .labels = &w->labels, .fields = &w->fields};
    emu_list_result res;
    int rc = emu_store_list(w->s->store, w->r, &q, &res);

    for (size_t i = 0; rc == KUBE_OK && i < res.n; i++) {
        rc = frame(w, "ADDED", res.items[i]->json, res.items[i]->len);
        if (rc == KUBE_OK && w->out.len > (1 << 20))
            rc = flush(w);
    }
    if (rc == KUBE_OK)
        w->cursor = res.rv;
    emu_list_result_free(&res);
    return rc == KUBE_OK ? flush(w) : rc;
}

static int stopped(watcher *w)
{
    return emu_stream_should_stop(w->req) || emu_store_epoch(w->s->store) != w->epoch ||
           kube_now_ms() >= w->deadline_ms;
}

static int pump(watcher *w)
{
    emu_event ev[BATCH];
    size_t n = 0;
    int64_t upto = w->cursor, oldest = 0;
    int rc = emu_store_events(w->s->store, w->cursor, ev, BATCH, &n, &upto, &oldest);

    if (rc == KUBE_EGONE) {
        KLOG_V(2, "watch of %s fell behind the event history; closing it", w->r->def->plural);
        return rc; /* a slow watcher is closed; it re-watches and gets the 410 */
    }
    for (size_t i = 0; i < n; i++) {
        if (rc == KUBE_OK)
            rc = send_event(w, &ev[i]);
        emu_event_release(&ev[i]);
    }
    if (rc != KUBE_OK)
        return rc;
    w->cursor = upto;
    rc = flush(w);
    if (rc == KUBE_OK && n == 0) {
        int64_t now = kube_now_ms(), wait = w->deadline_ms - now;
        if (w->bookmarks && w->next_bookmark_ms - now < wait)
            wait = w->next_bookmark_ms - now;
        if (wait > 500)
            wait = 500;
        if (wait > 0)
            emu_store_wait(w->s->store, w->cursor, (int)wait);
    }
    return rc;
}

static int run(watcher *w)
{
    int rc = KUBE_OK;

    while (rc == KUBE_OK && !stopped(w)) {
        rc = pump(w);
        if (rc == KUBE_OK && w->bookmarks && kube_now_ms() >= w->next_bookmark_ms) {
            rc = send_bookmark(w);
            if (rc == KUBE_OK)
                rc = flush(w);
            w->next_bookmark_ms = kube_now_ms() + w->s->cfg.bookmark_interval_ms;
        }
    }
    return rc;
}

static int parse_watch(watcher *w, emu_request *req, emu_response *resp, int64_t *rv, int *from_now)
{
    char err[512], *ls = emu_query_get(req, "labelSelector"),
                   *fs = emu_query_get(req, "fieldSelector");
    char *rv_s = emu_query_get(req, "resourceVersion"), *to = emu_query_get(req, "timeoutSeconds");
    char *bm = emu_query_get(req, "allowWatchBookmarks");
    int64_t timeout = 1800 + (int64_t)(random() % 1800);
    int rc = emu_label_selector_parse(ls, &w->labels, err, sizeof(err));

    if (rc == KUBE_OK)
        rc = emu_field_selector_parse(fs, w->r->fields, &w->fields, err, sizeof(err));
    if (rc == KUBE_OK && *req->attrs.name) {
        emu_selector name_sel = {0};
        char sel[300];
        snprintf(sel, sizeof(sel), "metadata.name=%s", req->attrs.name);
        rc = emu_field_selector_parse(sel, NULL, &name_sel, err, sizeof(err));
        if (rc == KUBE_OK) {
            emu_req *grown = realloc(w->fields.reqs, (w->fields.n + 1) * sizeof(*grown));
            if (grown) {
                w->fields.reqs = grown;
                w->fields.reqs[w->fields.n++] = name_sel.reqs[0];
                free(name_sel.reqs);
            } else {
                emu_selector_free(&name_sel);
            }
        }
    }
    if (rc == KUBE_OK && rv_s && *rv_s && kube_parse_int64(rv_s, 0, INT64_MAX, rv) != KUBE_OK) {
        snprintf(err, sizeof(err), "invalid resource version \"%s\"", rv_s);
        rc = KUBE_EBADREQUEST;
    }
    if (rc == KUBE_OK && to && *to) {
        int64_t t;
        if (kube_parse_int64(to, 0, INT64_MAX / 1000, &t) == KUBE_OK)
            timeout = t;
    }
    *from_now = !rv_s || !*rv_s || *rv == 0;
    w->bookmarks = bm && (!strcmp(bm, "1") || !strcmp(bm, "true"));
    w->deadline_ms = kube_now_ms() + timeout * 1000;
    if (rc != KUBE_OK)
        emu_response_status(resp, 400, "BadRequest", err, NULL);
    free(ls);
    free(fs);
    free(rv_s);
    free(to);
    free(bm);
    return rc;
}

int emu_watch_handle(emu_server *s, emu_request *req, emu_resource *r, emu_response *resp)
{
    watcher w = {.s = s, .req = req, .r = r};
    int64_t rv = 0, oldest = 0;
    int from_now = 1, rc;

    w.ns = r->def->namespaced ? req->attrs.namespace_ : NULL;
    w.epoch = emu_store_epoch(s->store);
    {
        char *match = emu_query_get(req, "resourceVersionMatch");
        int forbidden = match && *match;
        free(match);
        if (forbidden) {
            emu_list_options_invalid(resp, "resourceVersionMatch is forbidden for watch");
            goto out;
        }
    }
    if (parse_watch(&w, req, resp, &rv, &from_now) != KUBE_OK ||
        emu_table_watch_begin(req, r, resp, &w.table) != KUBE_OK)
        goto out;
    w.next_bookmark_ms = kube_now_ms() + s->cfg.bookmark_interval_ms;
    resp->status = 200;
    kube_strlcpy(resp->content_type, "application/json", sizeof(resp->content_type));
    if (emu_stream_begin(req, resp) != KUBE_OK)
        goto out;
    if (!from_now && emu_store_check_rv(s->store, rv, &oldest) == KUBE_EGONE) {
        send_too_old(&w, rv, oldest);
    } else {
        w.cursor = rv;
        rc = from_now ? send_initial(&w) : KUBE_OK;
        if (rc == KUBE_OK)
            rc = run(&w);
        if (rc == KUBE_EGONE)
            rc = KUBE_OK;
    }
    emu_stream_end(req);
out:
    kube_buf_free(&w.out);
    emu_selector_free(&w.labels);
    emu_selector_free(&w.fields);
    return 1;
}
