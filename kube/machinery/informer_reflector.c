/*
 * kube/machinery/informer_reflector.c - an informer's list and watch, as client-go's
 * Reflector runs them: paginated lists (resourceVersion semantics, the
 * pager's full relist after a 410), then a watch with bookmarks from the
 * listed version, frames decoded as they stream in (kube/codec/jsonstream).
 */
#include "kube/util/clock.h"
#include "kube/machinery/informer_int.h"

/* ---- listing ------------------------------------------------------------ */

static void list_failed(kube_informer *inf, int err, long retry_after_s);
void kube_inf_watch_begin(kube_informer *inf);

static int list_path(kube_informer *inf, kube_buf *b)
{
    int rc = kube_path(b, inf->res, inf->ns, NULL, NULL);
    const char *sep = "?";

    if (rc == KUBE_OK && inf->list_limit > 0) {
        rc = kube_buf_printf(b, "%slimit=%d", sep, inf->list_limit);
        sep = "&";
    }
    /* A continue page must not name a version (the token carries it). */
    if (rc == KUBE_OK && inf->cont)
        rc = kube_inf_put_param(b, &sep, "continue", inf->cont);
    else if (rc == KUBE_OK && inf->list_rv[0] != '\0')
        rc = kube_inf_put_param(b, &sep, "resourceVersion", inf->list_rv);
    if (rc == KUBE_OK)
        rc = kube_inf_put_selectors(inf, b, &sep);
    return rc;
}

static void list_page(kube_informer *inf)
{
    kube_buf path = KUBE_BUF_INIT;
    int rc;

    inf->state = ST_LISTING;
    kube_jsonstream_free(&inf->js);
    kube_jsonstream_init(&inf->js, KUBE_JSONSTREAM_LIST, 0);
    rc = list_path(inf, &path);
    if (rc == KUBE_OK) {
        KLOG_V(4, "informer %s: GET %s", inf->name, path.data);
        rc = kube_inf_transfer_start(inf, path.data, 0);
    }
    kube_buf_free(&path);
    if (rc != KUBE_OK) {
        KLOG_ERROR("informer %s: cannot start a list: %s", inf->name, kube_strerror(rc));
        kube_inf_transfer_end(inf);
        list_failed(inf, rc, 0);
    }
}

/* Starts a list attempt at the version client-go's relistResourceVersion()
 * would use, with its pager's page size. */
void kube_inf_list_begin(kube_informer *inf)
{
    const char *rv = inf->rv_unavailable ? "" : inf->last_rv[0] ? inf->last_rv : "0";

    kube_strlcpy(inf->list_rv, rv, sizeof(inf->list_rv));
    free(inf->cont);
    inf->cont = NULL;
    kube_inf_items_clear(inf);
    inf->full_fallback = 0;
    inf->retried_unavailable = 0;
    inf->list_paginated = 0;
    if (inf->page_size > 0)
        inf->list_limit = inf->page_size;
    else if (inf->paginated_result || rv[0] == '\0' || strcmp(rv, "0") == 0)
        inf->list_limit = DEFAULT_PAGE_SIZE;
    else
        inf->list_limit = 0; /* served from the watch cache */
    atomic_fetch_add(&inf->lists, 1);
    list_page(inf);
}

/* Restarts the current attempt with different parameters (same counters). */
static void list_restart(kube_informer *inf, const char *rv, int limit)
{
    kube_strlcpy(inf->list_rv, rv, sizeof(inf->list_rv));
    free(inf->cont);
    inf->cont = NULL;
    kube_inf_items_clear(inf);
    inf->list_limit = limit;
    list_page(inf);
}

static void log_item_error(kube_informer *inf, const cJSON *item, const char *why)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(item, "metadata");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(md, "namespace");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(md, "name");

    KLOG_ERROR("informer %s: skipping list item %s/%s: %s", inf->name,
               cJSON_IsString(ns) ? ns->valuestring : "",
               cJSON_IsString(name) ? name->valuestring : "?", why);
    atomic_fetch_add(&inf->errors, 1);
}

int kube_inf_frame_item(void *ud, const char *frame, size_t len)
{
    kube_informer *inf = ud;
    cJSON *item = kube_jsonscratch_parse(frame, len);
    kube_object *obj = NULL;
    int rc;

    if (atomic_load(&inf->hub->stop)) {
        kube_jsonscratch_release(item);
        inf->abort = ABORT_STOP;
        return 1;
    }
    if (!cJSON_IsObject(item)) {
        KLOG_ERROR("informer %s: list item of %zu bytes is not a JSON object", inf->name, len);
        atomic_fetch_add(&inf->errors, 1);
        kube_jsonscratch_release(item);
        return 0;
    }
    rc = inf->codec->decode(item, &obj);
    if (rc == KUBE_OK && (obj->meta.name == NULL || obj->meta.name[0] == '\0')) {
        kube_object_unref(obj);
        rc = KUBE_EPARSE;
    }
    if (rc == KUBE_OK && (rc = kube_inf_items_push(inf, obj)) != KUBE_OK)
        kube_object_unref(obj);
    if (rc != KUBE_OK)
        log_item_error(inf, item, kube_strerror(rc));
    kube_jsonscratch_release(item);
    return rc == KUBE_ENOMEM ? rc : 0;
}

/* Reads metadata.resourceVersion and metadata.continue of a list. */
static int list_meta(kube_informer *inf, char *rv, size_t n, char **cont)
{
    size_t len;
    const char *text = kube_jsonstream_skeleton(&inf->js, &len);
    cJSON *doc = cJSON_ParseWithLength(text, len);
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(md, "continue");
    int rc = doc ? kube_json_resource_version(doc, rv, n) : KUBE_EPARSE;

    *cont = NULL;
    if (rc == KUBE_OK && cJSON_IsString(c) && c->valuestring[0] != '\0' &&
        (*cont = kube_strdup(c->valuestring)) == NULL)
        rc = KUBE_ENOMEM;
    cJSON_Delete(doc);
    return rc == KUBE_ENOTFOUND || rc == KUBE_ERANGE ? KUBE_EPARSE : rc;
}

static void mark_synced(kube_informer *inf)
{
    kube_hub *hub = inf->hub;

    if (atomic_load(&inf->synced))
        return;
    pthread_mutex_lock(&hub->mu);
    atomic_store(&inf->synced, 1);
    hub->n_synced++;
    pthread_cond_broadcast(&hub->cond);
    pthread_mutex_unlock(&hub->mu);
}

/* The last page arrived: replace the store and start watching. */
static void list_complete(kube_informer *inf, const char *rv)
{
    int rc;

    if (strcmp(inf->list_rv, "0") == 0 && inf->list_paginated)
        inf->paginated_result = 1;
    inf->rv_unavailable = 0;
    KLOG_V(2, "informer %s: listed %zu objects at resourceVersion %s", inf->name, inf->n_items, rv);
    rc = kube_store_replace(inf->store, inf->items, inf->n_items, &inf->h);
    kube_inf_items_clear(inf);
    free(inf->items); /* lists are rare: do not keep their staging memory */
    inf->items = NULL;
    inf->cap_items = 0;
    if (rc != KUBE_OK) {
        KLOG_ERROR("informer %s: applying the list failed: %s", inf->name, kube_strerror(rc));
        list_failed(inf, rc, 0);
        return;
    }
    kube_inf_set_last_rv(inf, rv);
    mark_synced(inf);
    kube_inf_watch_begin(inf);
}

void kube_inf_list_page_done(kube_informer *inf)
{
    char rv[KUBE_RV_MAX];
    char *cont = NULL;
    int rc = kube_jsonstream_finish(&inf->js, kube_inf_frame_item, inf);

    if (rc == KUBE_OK)
        rc = list_meta(inf, rv, sizeof(rv), &cont);
    kube_inf_transfer_end(inf);
    if (rc != KUBE_OK) {
        KLOG_ERROR("informer %s: unreadable list answer: %s", inf->name, kube_strerror(rc));
        list_failed(inf, rc, 0);
        return;
    }
    free(inf->cont);
    inf->cont = cont;
    if (cont != NULL) {
        inf->list_paginated = 1;
        list_page(inf);
        return;
    }
    list_complete(inf, rv);
}

static int is_too_large_rv(int err, const kube_status *st)
{
    return err == KUBE_ESERVER && st->code == 504 &&
           strstr(st->message, "Too large resource version") != NULL;
}

/* A list request failed with err: the pager and reflector fallbacks, or a
 * new attempt after the backoff. */
void kube_inf_list_failed_status(kube_informer *inf, int err, const kube_status *st,
                                 long retry_after_s)
{
    if (err == KUBE_EGONE && inf->cont != NULL && !inf->full_fallback) {
        KLOG_V(2, "informer %s: continue token expired, listing in full", inf->name);
        inf->full_fallback = 1;
        list_restart(inf, inf->list_rv, 0);
        return;
    }
    if ((err == KUBE_EGONE || is_too_large_rv(err, st)) && !inf->retried_unavailable) {
        KLOG_V(2, "informer %s: resourceVersion %s unavailable, listing at the latest", inf->name,
               inf->list_rv);
        inf->rv_unavailable = 1;
        inf->retried_unavailable = 1;
        list_restart(inf, "", inf->list_limit);
        return;
    }
    list_failed(inf, err, retry_after_s);
}

static void list_failed(kube_informer *inf, int err, long retry_after_s)
{
    int64_t d = kube_inf_backoff_next(inf, retry_after_s);

    atomic_fetch_add(&inf->errors, 1);
    KLOG_WARN("informer %s: list failed (%s), retrying in %lld ms", inf->name, kube_strerror(err),
              (long long)d);
    free(inf->cont);
    inf->cont = NULL;
    kube_inf_items_clear(inf);
    kube_inf_schedule(inf, ACT_LIST, d);
}

/* ---- watching ----------------------------------------------------------- */

static int watch_timeout(kube_informer *inf)
{
    int min = inf->watch_timeout_s > 0 ? inf->watch_timeout_s : MIN_WATCH_TIMEOUT_S;

    return min + (int)(kube_inf_rng_unit(inf->hub) * (double)min);
}

static int watch_path(kube_informer *inf, kube_buf *b, int timeout_s)
{
    int rc = kube_path(b, inf->res, inf->ns, NULL, NULL);
    const char *sep = "&";

    if (rc == KUBE_OK)
        rc = kube_buf_puts(b, "?watch=1&allowWatchBookmarks=true");
    if (rc == KUBE_OK)
        rc = kube_inf_put_param(b, &sep, "resourceVersion", inf->last_rv);
    if (rc == KUBE_OK)
        rc = kube_buf_printf(b, "&timeoutSeconds=%d", timeout_s);
    if (rc == KUBE_OK)
        rc = kube_inf_put_selectors(inf, b, &sep);
    return rc;
}

void kube_inf_watch_begin(kube_informer *inf)
{
    kube_buf path = KUBE_BUF_INIT;
    int timeout_s = watch_timeout(inf);
    int rc = watch_path(inf, &path, timeout_s);

    inf->state = ST_WATCHING;
    kube_jsonstream_free(&inf->js);
    kube_jsonstream_init(&inf->js, KUBE_JSONSTREAM_LINES, 0);
    inf->watch_started_ms = kube_now_ms();
    inf->watch_events = 0;
    if (rc == KUBE_OK) {
        KLOG_V(4, "informer %s: GET %s", inf->name, path.data);
        atomic_fetch_add(&inf->watches, 1);
        rc = kube_inf_transfer_start(inf, path.data, timeout_s);
    }
    kube_buf_free(&path);
    if (rc != KUBE_OK) {
        int64_t d = kube_inf_backoff_next(inf, 0);
        KLOG_ERROR("informer %s: cannot start a watch: %s", inf->name, kube_strerror(rc));
        atomic_fetch_add(&inf->errors, 1);
        kube_inf_transfer_end(inf);
        kube_inf_schedule(inf, ACT_WATCH, d);
    }
}

static int event_error(kube_informer *inf, const kube_watch_event *ev)
{
    if (ev->code == 410) {
        KLOG_V(2, "informer %s: watch expired: %s", inf->name, ev->message);
        inf->abort = ABORT_GONE;
    } else {
        KLOG_WARN("informer %s: watch error %d %s: %s", inf->name, ev->code, ev->reason,
                  ev->message);
        atomic_fetch_add(&inf->errors, 1);
        inf->abort = ABORT_ERROR;
    }
    return 1;
}

static int event_apply(kube_informer *inf, kube_watch_event *ev)
{
    int rc;

    if (ev->type == KUBE_WATCH_ERROR)
        return event_error(inf, ev);
    inf->watch_events++;
    if (ev->type == KUBE_WATCH_BOOKMARK) {
        atomic_fetch_add(&inf->bookmarks, 1);
    } else {
        rc = kube_store_apply(inf->store, ev->type, ev->obj, &inf->h);
        if (rc != KUBE_OK) {
            KLOG_ERROR("informer %s: store update failed: %s; re-listing", inf->name,
                       kube_strerror(rc));
            atomic_fetch_add(&inf->errors, 1);
            inf->abort = ABORT_RELIST;
            return 1;
        }
        atomic_fetch_add(&inf->events, 1);
    }
    if (ev->rv[0] != '\0')
        kube_inf_set_last_rv(inf, ev->rv);
    return 0;
}

int kube_inf_frame_event(void *ud, const char *frame, size_t len)
{
    kube_informer *inf = ud;
    kube_watch_event ev;
    char why[64];
    int rc;

    if (atomic_load(&inf->hub->stop)) {
        inf->abort = ABORT_STOP;
        return 1;
    }
    rc = kube_watch_event_decode(frame, len, inf->codec, &ev, why, sizeof(why));
    if (rc != KUBE_OK) {
        KLOG_ERROR("informer %s: skipping a watch line of %zu bytes (%s%s%s): %s", inf->name, len,
                   kube_watch_type_name(ev.type), ev.rv[0] ? " at " : "", ev.rv, why);
        atomic_fetch_add(&inf->errors, 1);
        kube_watch_event_clear(&ev);
        return 0;
    }
    rc = event_apply(inf, &ev);
    kube_watch_event_clear(&ev);
    return rc;
}

static void relist_after_410(kube_informer *inf)
{
    atomic_fetch_add(&inf->relists_410, 1);
    kube_inf_list_begin(inf);
}

static void rewatch_later(kube_informer *inf, const char *why, long retry_after_s)
{
    int64_t d = kube_inf_backoff_next(inf, retry_after_s);

    KLOG_WARN("informer %s: watch ended (%s), re-watching from %s in %lld ms", inf->name, why,
              inf->last_rv, (long long)d);
    kube_inf_schedule(inf, ACT_WATCH, d);
}

/* The transfer was ended from the write callback: act on why. */
static void watch_aborted(kube_informer *inf)
{
    int abort = inf->abort;

    kube_inf_transfer_end(inf);
    if (abort == ABORT_GONE)
        relist_after_410(inf);
    else if (abort == ABORT_RELIST)
        kube_inf_list_begin(inf);
    else if (abort == ABORT_ERROR)
        rewatch_later(inf, "error event", 0);
}

/* The watch stream ended cleanly (timeoutSeconds or server close). */
static void watch_ended(kube_informer *inf)
{
    /* A last line without its newline: delivered (and reported if bad). */
    kube_jsonstream_finish(&inf->js, kube_inf_frame_event, inf);
    if (inf->abort != ABORT_NONE) {
        watch_aborted(inf);
        return;
    }
    kube_inf_transfer_end(inf);
    if (inf->watch_events == 0 && kube_now_ms() - inf->watch_started_ms < SHORT_WATCH_MS) {
        atomic_fetch_add(&inf->errors, 1);
        rewatch_later(inf, "very short watch with no event", 0);
        return;
    }
    KLOG_V(4, "informer %s: watch closed after %lu events", inf->name, inf->watch_events);
    kube_inf_watch_begin(inf);
}

/* A watch transfer finished: pick the next step from how it ended. */
void kube_inf_watch_done(kube_informer *inf, CURLcode cc, int err, const kube_status *st,
                         long retry_after_s)
{
    if (inf->abort != ABORT_NONE) {
        watch_aborted(inf);
        return;
    }
    if (cc == CURLE_OK && err == KUBE_OK) {
        watch_ended(inf);
        return;
    }
    kube_inf_transfer_end(inf);
    if (err == KUBE_EGONE) {
        relist_after_410(inf);
        return;
    }
    atomic_fetch_add(&inf->errors, 1);
    if (err != KUBE_OK)
        rewatch_later(inf, st->message[0] ? st->message : kube_strerror(err), retry_after_s);
    else
        rewatch_later(inf, curl_easy_strerror(cc), retry_after_s);
}
