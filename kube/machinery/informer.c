/*
 * kube/machinery/informer.c - list/watch informers driven by one curl multi handle
 * per hub (through kube/transport/poller.h). See informer.h for the semantics and the
 * design choices.
 *
 * Each informer is a small state machine run by the hub thread:
 *
 *   IDLE (due_ms, next action LIST or WATCH) --due--> LISTING or WATCHING
 *   LISTING: one page transfer at a time; items staged; on the last page the
 *            store is replaced and the watch starts.
 *   WATCHING: one watch transfer; events applied as frames arrive; when the
 *            transfer ends the outcome picks the next action and its delay.
 *
 * Only the hub thread touches the state. Other threads read the store (its
 * own lock), last_rv (inf->mu), counters (atomics) and the synced counts
 * (hub->mu).
 */
#include "kube/transport/poller.h"
#include "kube/util/clock.h"
#include "kube/util/array.h"
#include "kube/util/rand.h"
#include "kube/machinery/informer_int.h"
#include "kube/machinery/informer_testing.h"

/* ---- small helpers ---------------------------------------------------- */

/* Uniform in [0, 1). */
double kube_inf_rng_unit(kube_hub *hub)
{
    return kube_rand_unit(&hub->rng);
}

void kube_inf_set_last_rv(kube_informer *inf, const char *rv)
{
    pthread_mutex_lock(&inf->mu);
    kube_strlcpy(inf->last_rv, rv, sizeof(inf->last_rv));
    pthread_mutex_unlock(&inf->mu);
}

void kube_inf_schedule(kube_informer *inf, int action, int64_t delay_ms)
{
    inf->state = ST_IDLE;
    inf->next_action = action;
    inf->due_ms = kube_now_ms() + delay_ms;
}

/* The next backoff delay: exponential with full jitter, capped; reset when
 * the previous failure is old. retry_after_s (0: none) is a floor. */
int64_t kube_inf_backoff_next(kube_informer *inf, long retry_after_s)
{
    int64_t now = kube_now_ms(), d;

    if (inf->backoff_ms == 0 || now - inf->last_backoff_ms > BACKOFF_RESET_MS)
        inf->backoff_ms = inf->backoff_initial_ms;
    inf->last_backoff_ms = now;
    d = inf->backoff_ms + (int64_t)(kube_inf_rng_unit(inf->hub) * (double)inf->backoff_ms);
    if (d > inf->backoff_max_ms)
        d = inf->backoff_max_ms;
    inf->backoff_ms *= 2;
    if (inf->backoff_ms > inf->backoff_max_ms)
        inf->backoff_ms = inf->backoff_max_ms;
    if (retry_after_s > 0 && d < retry_after_s * 1000)
        d = retry_after_s * 1000;
    return d;
}

static void wipe_headers(struct curl_slist *l)
{
    for (struct curl_slist *p = l; p; p = p->next)
        explicit_bzero(p->data, strlen(p->data));
    curl_slist_free_all(l);
}

void kube_inf_items_clear(kube_informer *inf)
{
    for (size_t i = 0; i < inf->n_items; i++)
        kube_object_unref(inf->items[i]);
    inf->n_items = 0;
}

int kube_inf_items_push(kube_informer *inf, kube_object *obj)
{
    if (KUBE_ARRAY_RESERVE(inf->items, inf->cap_items, inf->n_items + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    inf->items[inf->n_items++] = obj;
    return KUBE_OK;
}

/* ---- transfers ---------------------------------------------------------- */

void kube_inf_transfer_end(kube_informer *inf)
{
    if (inf->easy) {
        curl_multi_remove_handle(inf->hub->multi, inf->easy);
        curl_easy_cleanup(inf->easy);
        inf->easy = NULL;
    }
    wipe_headers(inf->headers);
    inf->headers = NULL;
    atomic_fetch_add(&inf->errors, inf->js.dropped); /* oversized frames */
    kube_jsonstream_reset(&inf->js);
    kube_buf_reset(&inf->err_body);
    inf->http_code = 0;
    inf->abort = ABORT_NONE;
}

int kube_inf_frame_item(void *ud, const char *frame, size_t len);
int kube_inf_frame_event(void *ud, const char *frame, size_t len);

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    kube_informer *inf = ud;
    size_t n = size * nmemb;
    int rc;

    if (atomic_load(&inf->hub->stop)) {
        inf->abort = ABORT_STOP;
        return 0;
    }
    if (inf->http_code == 0)
        curl_easy_getinfo(inf->easy, CURLINFO_RESPONSE_CODE, &inf->http_code);
    if (inf->http_code < 200 || inf->http_code > 299) {
        if (inf->err_body.len + n <= ERROR_BODY_MAX && kube_buf_append(&inf->err_body, data, n))
            return 0;
        return n;
    }
    rc = kube_jsonstream_feed(&inf->js, data, n,
                              inf->state == ST_LISTING ? kube_inf_frame_item : kube_inf_frame_event,
                              inf);
    if (rc == KUBE_ENOMEM) {
        KLOG_ERROR("informer %s: out of memory reading the stream", inf->name);
        inf->abort = ABORT_ERROR;
    }
    return rc == 0 ? n : 0;
}

/* Appends "?key=value" or "&key=value" (value query-escaped). */
int kube_inf_put_param(kube_buf *b, const char **sep, const char *key, const char *value)
{
    int rc = kube_buf_printf(b, "%s%s=", *sep, key);

    *sep = "&";
    return rc == KUBE_OK ? kube_buf_put_escaped(b, value) : rc;
}

/* Appends the selector parameters shared by lists and watches. */
int kube_inf_put_selectors(kube_informer *inf, kube_buf *b, const char **sep)
{
    int rc = KUBE_OK;

    if (inf->field_selector)
        rc = kube_inf_put_param(b, sep, "fieldSelector", inf->field_selector);
    if (rc == KUBE_OK && inf->label_selector)
        rc = kube_inf_put_param(b, sep, "labelSelector", inf->label_selector);
    return rc;
}

/* Starts a GET of path on the hub's multi handle. */
int kube_inf_transfer_start(kube_informer *inf, const char *path, int watch_timeout_s)
{
    kube_hub *hub = inf->hub;
    int rc;

    kube_client_wait_rate(hub->client);
    inf->easy = curl_easy_init();
    if (inf->easy == NULL)
        return KUBE_ENOMEM;
    rc = kube_client_setup_stream(hub->client, inf->easy, path, &inf->headers);
    if (rc != KUBE_OK)
        return rc;
    curl_easy_setopt(inf->easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(inf->easy, CURLOPT_WRITEDATA, inf);
    curl_easy_setopt(inf->easy, CURLOPT_PRIVATE, inf);
    if (watch_timeout_s > 0) {
        curl_easy_setopt(inf->easy, CURLOPT_TIMEOUT, (long)watch_timeout_s + WATCH_GRACE_S);
    } else {
        curl_easy_setopt(inf->easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(inf->easy, CURLOPT_LOW_SPEED_TIME, LIST_STALL_S);
    }
    if (curl_multi_add_handle(hub->multi, inf->easy) != CURLM_OK)
        return KUBE_ENOMEM;
    return KUBE_OK;
}

/* ---- completion dispatch ------------------------------------------------ */

/* The HTTP outcome of a finished transfer as a KUBE_E* code and Status. */
static int transfer_status(kube_informer *inf, CURLcode cc, kube_status *st, long *retry_after)
{
    curl_off_t ra = 0;

    memset(st, 0, sizeof(*st));
    *retry_after = 0;
    if (inf->easy)
        curl_easy_getinfo(inf->easy, CURLINFO_RESPONSE_CODE, &inf->http_code);
    if (inf->easy && curl_easy_getinfo(inf->easy, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
        *retry_after = ra > 3600 ? 3600 : (long)ra;
    if (inf->http_code >= 200 && inf->http_code <= 299)
        return KUBE_OK;
    if (inf->http_code == 0)
        return cc == CURLE_OPERATION_TIMEDOUT ? KUBE_ETIMEDOUT : KUBE_EIO;
    kube_status_decode(inf->err_body.data ? inf->err_body.data : "", inf->err_body.len,
                       inf->http_code, st);
    return kube_err_from_status(inf->http_code, st->reason);
}

static void list_done(kube_informer *inf, CURLcode cc, int err, const kube_status *st,
                      long retry_after_s)
{
    int abort = inf->abort;

    if (abort == ABORT_NONE && cc == CURLE_OK && err == KUBE_OK) {
        kube_inf_list_page_done(inf);
        return;
    }
    kube_inf_transfer_end(inf);
    if (abort == ABORT_STOP)
        return;
    if (err == KUBE_OK)
        err = abort != ABORT_NONE              ? KUBE_ENOMEM
              : cc == CURLE_OPERATION_TIMEDOUT ? KUBE_ETIMEDOUT
                                               : KUBE_EIO;
    if (st->message[0])
        KLOG_V(2, "informer %s: list answered %d: %s", inf->name, st->code, st->message);
    kube_inf_list_failed_status(inf, err, st, retry_after_s);
}

static void transfer_done(kube_informer *inf, CURLcode cc)
{
    kube_status st;
    long retry_after = 0;
    int err = transfer_status(inf, cc, &st, &retry_after);

    if (cc != CURLE_OK && inf->abort == ABORT_NONE)
        KLOG_V(2, "informer %s: transfer failed: %s", inf->name, curl_easy_strerror(cc));
    if (inf->state == ST_LISTING)
        list_done(inf, cc, err, &st, retry_after);
    else
        kube_inf_watch_done(inf, cc, err, &st, retry_after);
}

static void drain_done(kube_hub *hub)
{
    CURLMsg *msg;
    int left;

    while ((msg = curl_multi_info_read(hub->multi, &left)) != NULL) {
        char *priv = NULL;
        if (msg->msg != CURLMSG_DONE)
            continue;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
        if (priv != NULL)
            transfer_done((kube_informer *)(void *)priv, msg->data.result);
    }
}

/* ---- the hub thread ----------------------------------------------------- */

static void adopt_incoming(kube_hub *hub)
{
    kube_informer *in;

    pthread_mutex_lock(&hub->mu);
    in = hub->incoming;
    hub->incoming = NULL;
    pthread_mutex_unlock(&hub->mu);
    while (in) {
        kube_informer *next = in->next;
        in->next = hub->informers;
        hub->informers = in;
        kube_inf_schedule(in, ACT_LIST, 0);
        in = next;
    }
}

/* Starts what is due; returns how long the hub may sleep. */
static int run_due(kube_hub *hub)
{
    int64_t now = kube_now_ms(), wait = POLL_MAX_MS;

    for (kube_informer *inf = hub->informers; inf && !atomic_load(&hub->stop); inf = inf->next) {
        if (inf->state != ST_IDLE)
            continue;
        if (inf->due_ms <= now) {
            if (inf->next_action == ACT_LIST)
                kube_inf_list_begin(inf);
            else
                kube_inf_watch_begin(inf);
            now = kube_now_ms();
        }
        if (inf->state == ST_IDLE && inf->due_ms - now < wait)
            wait = inf->due_ms - now > 0 ? inf->due_ms - now : 0;
    }
    return (int)wait;
}

static void *hub_main(void *arg)
{
    kube_hub *hub = arg;

    pthread_setname_np(pthread_self(), "kube-informers");

    while (!atomic_load(&hub->stop)) {
        adopt_incoming(hub);
        int wait = run_due(hub);
        if (atomic_load(&hub->stop))
            break;
        kube_poller_run(hub->poller, wait);
        drain_done(hub);
    }
    for (kube_informer *inf = hub->informers; inf; inf = inf->next)
        kube_inf_transfer_end(inf);
    return NULL;
}

/* ---- public API --------------------------------------------------------- */

int kube_hub_new(kube_client *client, kube_hub **out)
{
    kube_hub *hub;
    pthread_condattr_t ca;

    *out = NULL;
    if (client == NULL)
        return KUBE_EINVAL;
    hub = calloc(1, sizeof(*hub));
    if (hub == NULL)
        return KUBE_ENOMEM;
    hub->client = client;
    hub->rng = (uint64_t)kube_now_ns() ^ (uint64_t)(uintptr_t)hub ^ 0x9e3779b97f4a7c15ULL;
    hub->multi = curl_multi_init();
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (hub->multi == NULL || kube_poller_new(hub->multi, &hub->poller) != KUBE_OK ||
        pthread_mutex_init(&hub->mu, NULL) != 0 || pthread_cond_init(&hub->cond, &ca) != 0) {
        pthread_condattr_destroy(&ca);
        if (hub->multi)
            curl_multi_cleanup(hub->multi);
        kube_poller_free(hub->poller);
        free(hub);
        return KUBE_ENOMEM;
    }
    pthread_condattr_destroy(&ca);
    *out = hub;
    return KUBE_OK;
}

static void informer_free(kube_informer *inf)
{
    kube_inf_transfer_end(inf);
    kube_jsonstream_free(&inf->js);
    kube_buf_free(&inf->err_body);
    kube_inf_items_clear(inf);
    free(inf->items);
    free(inf->cont);
    free(inf->ns);
    free(inf->field_selector);
    free(inf->label_selector);
    kube_store_free(inf->store);
    pthread_mutex_destroy(&inf->mu);
    free(inf);
}

static void informer_name(kube_informer *inf)
{
    const char *g = inf->res->group && inf->res->group[0] ? inf->res->group : "";

    snprintf(inf->name, sizeof(inf->name), "%s%s%s%s%s", g, g[0] ? "/" : "", inf->res->plural,
             inf->ns ? " in " : "", inf->ns ? inf->ns : "");
}

static int informer_config(kube_informer *inf, const kube_informer_options *o)
{
    inf->res = o->resource;
    inf->codec = o->codec;
    inf->page_size = o->page_size > 0 ? o->page_size : 0;
    inf->watch_timeout_s = o->watch_timeout_s > 0 ? o->watch_timeout_s : 0;
    inf->backoff_initial_ms =
        o->backoff_initial_ms > 0 ? o->backoff_initial_ms : BACKOFF_INITIAL_MS;
    inf->backoff_max_ms = o->backoff_max_ms > 0 ? o->backoff_max_ms : BACKOFF_MAX_MS;
    if (inf->backoff_max_ms < inf->backoff_initial_ms)
        inf->backoff_max_ms = inf->backoff_initial_ms;
    if ((o->namespace_ && o->namespace_[0] && o->resource->namespaced &&
         (inf->ns = kube_strdup(o->namespace_)) == NULL) ||
        (o->field_selector && o->field_selector[0] &&
         (inf->field_selector = kube_strdup(o->field_selector)) == NULL) ||
        (o->label_selector && o->label_selector[0] &&
         (inf->label_selector = kube_strdup(o->label_selector)) == NULL))
        return KUBE_ENOMEM;
    informer_name(inf);
    return KUBE_OK;
}

/* Whether two optional strings are the same ("" and NULL alike). */
static int same_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* An informer already added for the same resource, codec, namespace and
 * selectors, or NULL. Caller holds hub->mu. */
static kube_informer *find_shared(kube_hub *hub, const kube_informer_options *o)
{
    const char *ns = o->resource->namespaced ? o->namespace_ : NULL;

    for (kube_informer *inf = hub->all; inf; inf = inf->next_all)
        if (inf->res == o->resource && inf->codec == o->codec && same_str(inf->ns, ns) &&
            same_str(inf->field_selector, o->field_selector) &&
            same_str(inf->label_selector, o->label_selector))
            return inf;
    return NULL;
}

int kube_hub_add_informer(kube_hub *hub, const kube_informer_options *opts,
                          const kube_informer_handlers *handlers, kube_informer **out)
{
    kube_informer *inf;

    if (out)
        *out = NULL;
    if (!hub || !opts || !opts->resource || !opts->codec || !opts->codec->decode)
        return KUBE_EINVAL;
    if (atomic_load(&hub->stop))
        return KUBE_ECANCELED;
    if (!handlers) { /* a store only: share one with the same list and watch */
        pthread_mutex_lock(&hub->mu);
        inf = find_shared(hub, opts);
        pthread_mutex_unlock(&hub->mu);
        if (inf) {
            if (out)
                *out = inf;
            return KUBE_OK;
        }
    }
    inf = calloc(1, sizeof(*inf));
    if (inf == NULL)
        return KUBE_ENOMEM;
    inf->hub = hub;
    if (handlers)
        inf->h = *handlers;
    kube_jsonstream_init(&inf->js, KUBE_JSONSTREAM_LINES, 0);
    if (pthread_mutex_init(&inf->mu, NULL) != 0) {
        free(inf);
        return KUBE_ENOMEM;
    }
    if (informer_config(inf, opts) != KUBE_OK || kube_store_new(&inf->store) != KUBE_OK) {
        informer_free(inf);
        return KUBE_ENOMEM;
    }
    pthread_mutex_lock(&hub->mu);
    inf->next = hub->incoming;
    hub->incoming = inf;
    inf->next_all = hub->all;
    hub->all = inf;
    hub->n_informers++;
    pthread_mutex_unlock(&hub->mu);
    kube_poller_wake(hub->poller);
    if (out)
        *out = inf;
    return KUBE_OK;
}

int kube_hub_start(kube_hub *hub)
{
    if (hub == NULL)
        return KUBE_EINVAL;
    if (atomic_load(&hub->stop))
        return KUBE_ECANCELED;
    if (hub->started)
        return KUBE_OK;
    if (pthread_create(&hub->thread, NULL, hub_main, hub) != 0)
        return KUBE_ENOMEM;
    hub->started = 1;
    return KUBE_OK;
}

void kube_hub_stop(kube_hub *hub)
{
    if (hub == NULL)
        return;
    atomic_store(&hub->stop, 1);
    kube_poller_wake(hub->poller);
    if (hub->started) {
        pthread_join(hub->thread, NULL);
        hub->started = 0;
    }
    pthread_mutex_lock(&hub->mu);
    pthread_cond_broadcast(&hub->cond);
    pthread_mutex_unlock(&hub->mu);
}

static void free_list(kube_informer *inf)
{
    while (inf) {
        kube_informer *next = inf->next;
        informer_free(inf);
        inf = next;
    }
}

void kube_hub_free(kube_hub *hub)
{
    if (hub == NULL)
        return;
    kube_hub_stop(hub);
    free_list(hub->informers);
    free_list(hub->incoming);
    curl_multi_cleanup(hub->multi);
    kube_poller_free(hub->poller); /* after the multi: its cleanup calls back */
    pthread_cond_destroy(&hub->cond);
    pthread_mutex_destroy(&hub->mu);
    free(hub);
}

int kube_informer_has_synced(kube_informer *inf)
{
    return inf ? atomic_load(&inf->synced) : 0;
}

int kube_hub_wait_synced(kube_hub *hub, long timeout_ms)
{
    struct timespec dl;
    int rc = KUBE_OK;

    kube_deadline_after(&dl, CLOCK_MONOTONIC, timeout_ms);
    pthread_mutex_lock(&hub->mu);
    while (hub->n_synced < hub->n_informers && rc == KUBE_OK) {
        if (atomic_load(&hub->stop))
            rc = KUBE_ECANCELED;
        else if (pthread_cond_timedwait(&hub->cond, &hub->mu, &dl) != 0)
            rc = hub->n_synced < hub->n_informers ? KUBE_ETIMEDOUT : KUBE_OK;
    }
    pthread_mutex_unlock(&hub->mu);
    return rc;
}

kube_object *kube_informer_get(kube_informer *inf, const char *ns, const char *name)
{
    return kube_store_get(inf->store, ns, name);
}

size_t kube_informer_count(kube_informer *inf)
{
    return kube_store_count(inf->store);
}

void kube_informer_foreach(kube_informer *inf, void (*fn)(void *ud, kube_object *obj), void *ud)
{
    kube_store_foreach(inf->store, fn, ud);
}

struct kube_store *kube_informer_store(kube_informer *inf)
{
    return inf->store;
}

void kube_informer_last_rv(kube_informer *inf, char *out, size_t n)
{
    pthread_mutex_lock(&inf->mu);
    kube_strlcpy(out, inf->last_rv, n);
    pthread_mutex_unlock(&inf->mu);
}

void kube_informer_stats_get(kube_informer *inf, kube_informer_stats *out)
{
    out->lists = atomic_load(&inf->lists);
    out->watches = atomic_load(&inf->watches);
    out->relists_410 = atomic_load(&inf->relists_410);
    out->events = atomic_load(&inf->events);
    out->bookmarks = atomic_load(&inf->bookmarks);
    out->errors = atomic_load(&inf->errors);
}
