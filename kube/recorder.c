/*
 * kube/recorder.c - the events.k8s.io/v1 recorder (see recorder.h).
 *
 * Callers only append to the queue under the mutex. The sender thread owns
 * the aggregation cache: it takes the queued events, folds each into the
 * cache, performs the writes the cache asks for, then the due heartbeats
 * and final counts, and sleeps on the condition variable until the next
 * event or the cache's next deadline.
 */
#include "kube/recorder.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "kube/api.h"
#include "kube/buf.h"
#include "kube/errors.h"
#include "kube/log.h"

#define NOTE_MAX 1024
#define TIME_MAX 40
#define DROP_LOG_PERIOD_MS 10000
#define REF_FIELDS 7

/* ---- events ----------------------------------------------------------- */

/* ObjectReference fields, in the order of ref_keys. */
static const char *const ref_keys[REF_FIELDS] = {
    "kind", "apiVersion", "namespace", "name", "uid", "resourceVersion", "fieldPath",
};

typedef struct event_ref {
    char *f[REF_FIELDS];
} event_ref;

struct cache_entry;

struct kube_recorder_event {
    char *name;
    char *ns;
    char *type;
    char *reason;
    char *action;
    char *note;
    char *controller;
    char *instance;
    char *key;
    char event_time[TIME_MAX];
    event_ref regarding;
    event_ref related;
    int has_related;
    int64_t series_count;
    char series_last[TIME_MAX];
    struct cache_entry *entry;
};

void kube_recorder_format_micro(int64_t wall_ns, char *out, size_t n)
{
    time_t secs = (time_t)(wall_ns / 1000000000LL);
    long usec = (long)((wall_ns % 1000000000LL) / 1000);
    char base[32];
    struct tm tm;

    gmtime_r(&secs, &tm);
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    if (snprintf(out, n, "%s.%06ldZ", base, usec) >= (int)n)
        KLOG_ERROR("timestamp buffer of %zu bytes is too small", n);
}

static int64_t wall_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static const char *ref_field(const kube_recorder_ref *r, int i)
{
    const char *v[REF_FIELDS] = {r->kind, r->api_version,      r->namespace_, r->name,
                                 r->uid,  r->resource_version, r->field_path};
    return v[i];
}

static int ref_copy(event_ref *dst, const kube_recorder_ref *src)
{
    for (int i = 0; i < REF_FIELDS; i++) {
        const char *v = ref_field(src, i);

        dst->f[i] = NULL;
        if (v && v[0] && !(dst->f[i] = kube_strdup(v)))
            return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

static void ref_free(event_ref *r)
{
    for (int i = 0; i < REF_FIELDS; i++)
        free(r->f[i]);
}

void kube_recorder_event_free(kube_recorder_event *ev)
{
    if (!ev)
        return;
    free(ev->name);
    free(ev->ns);
    free(ev->type);
    free(ev->reason);
    free(ev->action);
    free(ev->note);
    free(ev->controller);
    free(ev->instance);
    free(ev->key);
    ref_free(&ev->regarding);
    ref_free(&ev->related);
    free(ev);
}

/* Length-prefixed so that no two different field lists give one key.
 * Digits by hand: a printf per field was most of the cost of an event. */
static int key_put(kube_buf *b, const char *s)
{
    char num[24];
    size_t len = s ? strlen(s) : 0, i = sizeof(num);

    num[--i] = ':';
    do {
        num[--i] = (char)('0' + len % 10);
        len /= 10;
    } while (len);
    if (kube_buf_append(b, num + i, sizeof(num) - i) != KUBE_OK)
        return KUBE_ENOMEM;
    if (s && kube_buf_puts(b, s) != KUBE_OK)
        return KUBE_ENOMEM;
    return kube_buf_append(b, ";", 1);
}

static int event_make_key(kube_recorder_event *ev)
{
    kube_buf b = KUBE_BUF_INIT;
    const char *plain[] = {ev->type,       ev->action,   ev->reason,
                           ev->controller, ev->instance, ev->note};
    int rc = KUBE_OK;

    for (size_t i = 0; rc == KUBE_OK && i < sizeof(plain) / sizeof(plain[0]); i++)
        rc = key_put(&b, plain[i]);
    for (int i = 0; rc == KUBE_OK && i < REF_FIELDS; i++)
        rc = key_put(&b, ev->regarding.f[i]);
    if (rc == KUBE_OK)
        rc = kube_buf_puts(&b, ev->has_related ? "R;" : "-;");
    for (int i = 0; rc == KUBE_OK && i < REF_FIELDS; i++)
        rc = key_put(&b, ev->related.f[i]);
    if (rc == KUBE_OK && !(ev->key = kube_buf_take(&b)))
        rc = KUBE_ENOMEM;
    kube_buf_free(&b);
    return rc;
}

/* The note cut to NOTE_MAX bytes without splitting a UTF-8 sequence. */
static char *note_copy(const char *note)
{
    size_t len = note ? strlen(note) : 0;
    char *out;

    if (len > NOTE_MAX) {
        len = NOTE_MAX;
        while (len > 0 && ((unsigned char)note[len] & 0xC0) == 0x80)
            len--;
        KLOG_V(2, "event note cut to %zu bytes", len);
    }
    out = malloc(len + 1);
    if (!out)
        return NULL;
    if (len)
        memcpy(out, note, len);
    out[len] = '\0';
    return out;
}

static int event_check(const kube_recorder_ref *regarding, const char *type, const char *reason,
                       const char *action, const char *controller, const char *instance)
{
    if (!regarding || !regarding->name || !regarding->name[0])
        return KUBE_EINVAL;
    if (!type ||
        (strcmp(type, KUBE_RECORDER_NORMAL) != 0 && strcmp(type, KUBE_RECORDER_WARNING) != 0))
        return KUBE_EINVAL;
    if (!reason || !reason[0] || !action || !action[0])
        return KUBE_EINVAL;
    if (!controller || !controller[0] || !instance || !instance[0])
        return KUBE_EINVAL;
    return KUBE_OK;
}

static int event_fill(kube_recorder_event *ev, const kube_recorder_ref *regarding,
                      const kube_recorder_ref *related, const char *type, const char *reason,
                      const char *action, const char *note, const char *controller,
                      const char *instance, int64_t wall_ns)
{
    const char *ns =
        regarding->namespace_ && regarding->namespace_[0] ? regarding->namespace_ : "default";
    kube_buf name = KUBE_BUF_INIT;

    if (kube_buf_printf(&name, "%s.%llx", regarding->name, (unsigned long long)wall_ns) ||
        !(ev->name = kube_buf_take(&name))) {
        kube_buf_free(&name);
        return KUBE_ENOMEM;
    }
    kube_recorder_format_micro(wall_ns, ev->event_time, sizeof(ev->event_time));
    ev->ns = kube_strdup(ns);
    ev->type = kube_strdup(type);
    ev->reason = kube_strdup(reason);
    ev->action = kube_strdup(action);
    ev->note = note_copy(note);
    ev->controller = kube_strdup(controller);
    ev->instance = kube_strdup(instance);
    if (!ev->ns || !ev->type || !ev->reason || !ev->action || !ev->note || !ev->controller ||
        !ev->instance)
        return KUBE_ENOMEM;
    if (ref_copy(&ev->regarding, regarding) != KUBE_OK)
        return KUBE_ENOMEM;
    ev->has_related = related != NULL;
    if (related && ref_copy(&ev->related, related) != KUBE_OK)
        return KUBE_ENOMEM;
    return event_make_key(ev);
}

int kube_recorder_event_new(const kube_recorder_ref *regarding, const kube_recorder_ref *related,
                            const char *type, const char *reason, const char *action,
                            const char *note, const char *controller, const char *instance,
                            int64_t wall_ns, kube_recorder_event **out)
{
    kube_recorder_event *ev;
    int rc;

    *out = NULL;
    if ((rc = event_check(regarding, type, reason, action, controller, instance)) != KUBE_OK)
        return rc;
    ev = calloc(1, sizeof(*ev));
    if (!ev)
        return KUBE_ENOMEM;
    rc = event_fill(ev, regarding, related, type, reason, action, note, controller, instance,
                    wall_ns);
    if (rc != KUBE_OK) {
        kube_recorder_event_free(ev);
        return rc;
    }
    *out = ev;
    return KUBE_OK;
}

const char *kube_recorder_event_name(const kube_recorder_event *ev)
{
    return ev->name;
}

const char *kube_recorder_event_namespace(const kube_recorder_event *ev)
{
    return ev->ns;
}

int64_t kube_recorder_event_series_count(const kube_recorder_event *ev)
{
    return ev->series_count;
}

int kube_recorder_event_isomorphic(const kube_recorder_event *a, const kube_recorder_event *b)
{
    return strcmp(a->key, b->key) == 0;
}

static cJSON *ref_json(const event_ref *r)
{
    cJSON *o = cJSON_CreateObject();

    for (int i = 0; o && i < REF_FIELDS; i++) {
        if (r->f[i] && !cJSON_AddStringToObject(o, ref_keys[i], r->f[i])) {
            cJSON_Delete(o);
            return NULL;
        }
    }
    return o;
}

static cJSON *series_json(const kube_recorder_event *ev)
{
    cJSON *s = cJSON_CreateObject();

    if (!s || !cJSON_AddNumberToObject(s, "count", (double)ev->series_count) ||
        !cJSON_AddStringToObject(s, "lastObservedTime", ev->series_last)) {
        cJSON_Delete(s);
        return NULL;
    }
    return s;
}

/* Adds item to o under key; takes item even on failure. */
static int add_item(cJSON *o, const char *key, cJSON *item)
{
    if (!item)
        return KUBE_ENOMEM;
    if (!cJSON_AddItemToObject(o, key, item)) {
        cJSON_Delete(item);
        return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

typedef struct kv {
    const char *key;
    const char *value;
} kv;

/* Adds the non-empty string values. */
static int add_strings(cJSON *o, const kv *fields, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fields[i].value && fields[i].value[0] &&
            !cJSON_AddStringToObject(o, fields[i].key, fields[i].value))
            return KUBE_ENOMEM;
    return KUBE_OK;
}

static int event_body_fill(const kube_recorder_event *ev, cJSON *body)
{
    const kv meta_fields[] = {{"name", ev->name}, {"namespace", ev->ns}};
    const kv fields[] = {
        {"apiVersion", "events.k8s.io/v1"},
        {"kind", "Event"},
        {"eventTime", ev->event_time},
        {"reportingController", ev->controller},
        {"reportingInstance", ev->instance},
        {"action", ev->action},
        {"reason", ev->reason},
        {"note", ev->note},
        {"type", ev->type},
    };
    cJSON *meta = cJSON_CreateObject();
    int rc;

    if (!meta || add_strings(meta, meta_fields, 2) != KUBE_OK) {
        cJSON_Delete(meta);
        return KUBE_ENOMEM;
    }
    if ((rc = add_item(body, "metadata", meta)) ||
        (rc = add_strings(body, fields, sizeof(fields) / sizeof(fields[0]))) ||
        (rc = add_item(body, "regarding", ref_json(&ev->regarding))))
        return rc;
    if (ev->has_related && (rc = add_item(body, "related", ref_json(&ev->related))))
        return rc;
    if (ev->series_count >= 2 && (rc = add_item(body, "series", series_json(ev))))
        return rc;
    return KUBE_OK;
}

int kube_recorder_event_body(const kube_recorder_event *ev, cJSON **out)
{
    cJSON *body = cJSON_CreateObject();

    *out = NULL;
    if (!body || event_body_fill(ev, body) != KUBE_OK) {
        cJSON_Delete(body);
        return KUBE_ENOMEM;
    }
    *out = body;
    return KUBE_OK;
}

int kube_recorder_event_series_patch(const kube_recorder_event *ev, cJSON **out)
{
    cJSON *patch = cJSON_CreateObject();

    *out = NULL;
    if (!patch || add_item(patch, "series", series_json(ev)) != KUBE_OK) {
        cJSON_Delete(patch);
        return KUBE_ENOMEM;
    }
    *out = patch;
    return KUBE_OK;
}

/* ---- aggregation cache ---------------------------------------------------- */

typedef struct cache_entry {
    kube_recorder_event *ev;
    uint64_t hash;
    struct cache_entry *hnext;
    struct cache_entry *prev, *next;   /* live entries by last occurrence */
    struct cache_entry *dprev, *dnext; /* entries with unsent counts */
    int dirty;
    int ended; /* out of the table, awaiting its final PATCH */
    int64_t last_ms;
    int64_t sent_ms;
} cache_entry;

struct kube_recorder_cache {
    cache_entry **buckets;
    size_t nbuckets;
    size_t size;
    cache_entry *head, *tail;
    cache_entry *dirty;
    int64_t window_ms;
    int64_t heartbeat_ms;
};

static uint64_t key_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

int kube_recorder_cache_new(int64_t window_ms, int64_t heartbeat_ms, kube_recorder_cache **out)
{
    kube_recorder_cache *c;

    *out = NULL;
    if (window_ms <= 0 || heartbeat_ms <= 0)
        return KUBE_EINVAL;
    c = calloc(1, sizeof(*c));
    if (!c)
        return KUBE_ENOMEM;
    c->nbuckets = 64;
    c->buckets = calloc(c->nbuckets, sizeof(*c->buckets));
    if (!c->buckets) {
        free(c);
        return KUBE_ENOMEM;
    }
    c->window_ms = window_ms;
    c->heartbeat_ms = heartbeat_ms;
    *out = c;
    return KUBE_OK;
}

static void entry_free(cache_entry *e)
{
    kube_recorder_event_free(e->ev);
    free(e);
}

void kube_recorder_cache_free(kube_recorder_cache *c)
{
    cache_entry *e, *next;

    if (!c)
        return;
    for (e = c->dirty; e; e = next) {
        next = e->dnext;
        if (e->ended)
            entry_free(e);
    }
    for (e = c->head; e; e = next) {
        next = e->next;
        entry_free(e);
    }
    free(c->buckets);
    free(c);
}

size_t kube_recorder_cache_size(const kube_recorder_cache *c)
{
    return c->size;
}

static cache_entry *table_find(const kube_recorder_cache *c, const char *key, uint64_t hash)
{
    cache_entry *e = c->buckets[hash % c->nbuckets];

    while (e && (e->hash != hash || strcmp(e->ev->key, key) != 0))
        e = e->hnext;
    return e;
}

static void table_grow(kube_recorder_cache *c)
{
    size_t n = c->nbuckets * 2;
    cache_entry **b = calloc(n, sizeof(*b));

    if (!b)
        return; /* keep the smaller table: slower, still correct */
    for (cache_entry *e = c->head; e; e = e->next) {
        e->hnext = b[e->hash % n];
        b[e->hash % n] = e;
    }
    free(c->buckets);
    c->buckets = b;
    c->nbuckets = n;
}

static void table_insert(kube_recorder_cache *c, cache_entry *e)
{
    size_t i = e->hash % c->nbuckets;

    e->hnext = c->buckets[i];
    c->buckets[i] = e;
    e->prev = c->tail;
    e->next = NULL;
    if (c->tail)
        c->tail->next = e;
    else
        c->head = e;
    c->tail = e;
    c->size++;
    if (c->size > c->nbuckets)
        table_grow(c);
}

static void lru_unlink(kube_recorder_cache *c, cache_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->tail = e->prev;
    e->prev = e->next = NULL;
}

static void table_remove(kube_recorder_cache *c, cache_entry *e)
{
    cache_entry **p = &c->buckets[e->hash % c->nbuckets];

    while (*p != e)
        p = &(*p)->hnext;
    *p = e->hnext;
    lru_unlink(c, e);
    c->size--;
}

static void touch(kube_recorder_cache *c, cache_entry *e, int64_t now_ms)
{
    e->last_ms = now_ms;
    if (c->tail == e)
        return;
    lru_unlink(c, e);
    e->prev = c->tail;
    c->tail->next = e;
    c->tail = e;
}

static void dirty_add(kube_recorder_cache *c, cache_entry *e)
{
    if (e->dirty)
        return;
    e->dirty = 1;
    e->dprev = NULL;
    e->dnext = c->dirty;
    if (c->dirty)
        c->dirty->dprev = e;
    c->dirty = e;
}

static void dirty_remove(kube_recorder_cache *c, cache_entry *e)
{
    if (!e->dirty)
        return;
    if (e->dprev)
        e->dprev->dnext = e->dnext;
    else
        c->dirty = e->dnext;
    if (e->dnext)
        e->dnext->dprev = e->dprev;
    e->dirty = 0;
    e->dprev = e->dnext = NULL;
}

/* Ends the entries whose last occurrence is a window old: those with unsent
 * counts wait on the dirty list for their final PATCH. */
static void cache_expire(kube_recorder_cache *c, int64_t now_ms)
{
    while (c->head && now_ms - c->head->last_ms >= c->window_ms) {
        cache_entry *e = c->head;

        table_remove(c, e);
        if (e->dirty)
            e->ended = 1;
        else
            entry_free(e);
    }
}

static int cache_insert(kube_recorder_cache *c, kube_recorder_event *ev, int64_t now_ms,
                        kube_recorder_send *send)
{
    cache_entry *e = calloc(1, sizeof(*e));

    if (!e) {
        kube_recorder_event_free(ev);
        return KUBE_ENOMEM;
    }
    e->ev = ev;
    e->hash = key_hash(ev->key);
    e->last_ms = now_ms;
    e->sent_ms = now_ms;
    ev->entry = e;
    table_insert(c, e);
    send->op = KUBE_RECORDER_SEND_CREATE;
    send->ev = ev;
    return KUBE_OK;
}

int kube_recorder_cache_observe(kube_recorder_cache *c, kube_recorder_event *ev, int64_t now_ms,
                                int64_t wall_ns, kube_recorder_send *send)
{
    cache_entry *e;

    send->op = KUBE_RECORDER_SEND_NONE;
    send->ev = NULL;
    cache_expire(c, now_ms);
    e = table_find(c, ev->key, key_hash(ev->key));
    if (!e)
        return cache_insert(c, ev, now_ms, send);
    kube_recorder_event_free(ev);
    kube_recorder_format_micro(wall_ns, e->ev->series_last, sizeof(e->ev->series_last));
    touch(c, e, now_ms);
    if (e->ev->series_count == 0) {
        e->ev->series_count = 2;
        send->op = KUBE_RECORDER_SEND_PATCH;
        send->ev = e->ev;
    } else {
        e->ev->series_count++;
        dirty_add(c, e);
    }
    return KUBE_OK;
}

int kube_recorder_cache_next_due(kube_recorder_cache *c, int64_t now_ms, int force,
                                 kube_recorder_send *send)
{
    cache_expire(c, now_ms);
    for (cache_entry *e = c->dirty; e; e = e->dnext) {
        if (force || e->ended || now_ms - e->sent_ms >= c->heartbeat_ms) {
            send->op = KUBE_RECORDER_SEND_PATCH;
            send->ev = e->ev;
            return 1;
        }
    }
    send->op = KUBE_RECORDER_SEND_NONE;
    send->ev = NULL;
    return 0;
}

void kube_recorder_cache_sent(kube_recorder_cache *c, kube_recorder_event *ev, int64_t now_ms)
{
    cache_entry *e = ev ? ev->entry : NULL;

    if (!e)
        return;
    dirty_remove(c, e);
    e->sent_ms = now_ms;
    if (e->ended)
        entry_free(e);
}

int64_t kube_recorder_cache_next_deadline(const kube_recorder_cache *c, int64_t now_ms)
{
    int64_t best = -1;

    if (c->head)
        best = c->head->last_ms + c->window_ms - now_ms;
    for (const cache_entry *e = c->dirty; e; e = e->dnext) {
        int64_t t = e->ended ? 0 : e->sent_ms + c->heartbeat_ms - now_ms;

        if (best < 0 || t < best)
            best = t;
    }
    return best < 0 ? -1 : (best > 0 ? best : 0);
}

/* ---- the recorder ------------------------------------------------------- */

typedef struct queued {
    kube_recorder_event *ev;
    int64_t mono_ms;
    int64_t wall_ns;
    struct queued *next;
} queued;

struct kube_recorder {
    kube_client *client;
    char *controller;
    char *instance;
    kube_recorder_options opts;
    kube_recorder_cache *cache; /* sender thread only */

    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake;     /* to the sender: work, flush or stop */
    pthread_cond_t progress; /* to flush waiters */
    queued *head, *tail;
    size_t len;
    int stopping;
    int exited;
    int joined;
    int64_t stop_deadline_ms;
    uint64_t enq_seq, done_seq;
    uint64_t flush_req, flush_done;
    int64_t last_wall_ns;
    int64_t last_drop_log_ms;
    kube_recorder_stats stats;
};

typedef enum { WRITE_DONE, WRITE_FAILED, WRITE_RETRY } write_result;

void kube_recorder_options_default(kube_recorder_options *o)
{
    memset(o, 0, sizeof(*o));
    o->reporting_controller = "stickyvm-scheduler";
    o->queue_capacity = 1000;
    o->series_heartbeat_ms = 30000;
    o->series_window_ms = 6 * 60 * 1000;
    o->retry_sleep_ms = 10000;
    o->max_tries = 12;
}

static void stat_add(kube_recorder *r, unsigned long *field, unsigned long n)
{
    pthread_mutex_lock(&r->mu);
    *field += n;
    pthread_mutex_unlock(&r->mu);
}

static int past_stop_deadline(kube_recorder *r)
{
    int past;

    pthread_mutex_lock(&r->mu);
    past = r->stopping && kube_now_ms() >= r->stop_deadline_ms;
    pthread_mutex_unlock(&r->mu);
    return past;
}

static void abs_deadline(struct timespec *ts, int64_t ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += (time_t)(ms / 1000);
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* Sleeps ms, cut short when a stop's deadline comes first. */
static void retry_sleep(kube_recorder *r, int64_t ms)
{
    int64_t until = kube_now_ms() + ms;

    pthread_mutex_lock(&r->mu);
    for (;;) {
        int64_t end = until;
        struct timespec ts;

        if (r->stopping && r->stop_deadline_ms < end)
            end = r->stop_deadline_ms;
        if (kube_now_ms() >= end)
            break;
        abs_deadline(&ts, end - kube_now_ms());
        pthread_cond_timedwait(&r->wake, &r->mu, &ts);
    }
    pthread_mutex_unlock(&r->mu);
}

static int64_t jitter(int64_t ms, double factor)
{
    uint32_t x = 0;

    if (getrandom(&x, sizeof(x), GRND_NONBLOCK) != (ssize_t)sizeof(x))
        x = (uint32_t)kube_now_ns();
    return ms + (int64_t)((double)ms * factor * ((double)x / 4294967296.0));
}

static int post_event(kube_recorder *r, const kube_recorder_event *ev)
{
    cJSON *body = NULL;
    kube_status st;
    int rc = kube_recorder_event_body(ev, &body);

    if (rc == KUBE_OK)
        rc = kube_api_create(r->client, &KUBE_RES_EVENTS, ev->ns, body, NULL, &st);
    cJSON_Delete(body);
    return rc;
}

/* A strategic-merge PATCH, as client-go's EventSinkImpl.Patch. */
static int patch_series(kube_recorder *r, const kube_recorder_event *ev)
{
    kube_buf path = KUBE_BUF_INIT;
    kube_response resp;
    cJSON *patch = NULL;
    char *text = NULL;
    int rc;

    memset(&resp, 0, sizeof(resp));
    if ((rc = kube_recorder_event_series_patch(ev, &patch)) != KUBE_OK)
        return rc;
    text = cJSON_PrintUnformatted(patch);
    cJSON_Delete(patch);
    if (!text)
        return KUBE_ENOMEM;
    rc = kube_path(&path, &KUBE_RES_EVENTS, ev->ns, ev->name, NULL);
    if (rc == KUBE_OK)
        rc = kube_client_do(r->client, "PATCH", path.data, "application/strategic-merge-patch+json",
                            text, strlen(text), &resp);
    kube_response_clear(&resp);
    kube_buf_free(&path);
    free(text);
    return rc;
}

static int is_transport_error(int rc)
{
    return rc == KUBE_EIO || rc == KUBE_ETIMEDOUT || rc == KUBE_EPARSE;
}

/* One attempt, as client-go's recordEvent. */
static write_result record_once(kube_recorder *r, kube_recorder_op op,
                                const kube_recorder_event *ev)
{
    int series = op == KUBE_RECORDER_SEND_PATCH;
    int rc = KUBE_ENOTFOUND;

    if (series) {
        rc = patch_series(r, ev);
        if (rc == KUBE_OK) {
            stat_add(r, &r->stats.patched, 1);
            return WRITE_DONE;
        }
    }
    if (rc == KUBE_ENOTFOUND) {
        rc = post_event(r, ev);
        if (rc == KUBE_OK) {
            stat_add(r, &r->stats.created, 1);
            return WRITE_DONE;
        }
    }
    if (is_transport_error(rc) || (series && rc == KUBE_EEXIST)) {
        KLOG_ERROR("Unable to write event %s/%s (may retry after sleeping): %s", ev->ns, ev->name,
                   kube_strerror(rc));
        return WRITE_RETRY;
    }
    if (rc == KUBE_EEXIST)
        KLOG_V(5, "Server rejected event %s/%s (will not retry!): %s", ev->ns, ev->name,
               kube_strerror(rc));
    else
        KLOG_ERROR("Server rejected event %s/%s (will not retry!): %s", ev->ns, ev->name,
                   kube_strerror(rc));
    return WRITE_FAILED;
}

static void write_with_retries(kube_recorder *r, kube_recorder_op op, const kube_recorder_event *ev)
{
    for (int tries = 1;; tries++) {
        write_result res;

        if (past_stop_deadline(r)) {
            stat_add(r, &r->stats.dropped, 1);
            return;
        }
        res = record_once(r, op, ev);
        if (res == WRITE_DONE)
            return;
        if (res == WRITE_FAILED || tries >= r->opts.max_tries) {
            if (res == WRITE_RETRY)
                KLOG_ERROR("Unable to write event %s/%s (retry limit exceeded!)", ev->ns, ev->name);
            stat_add(r, &r->stats.failed, 1);
            return;
        }
        retry_sleep(r, jitter(r->opts.retry_sleep_ms, 0.25));
    }
}

static void perform(kube_recorder *r, const kube_recorder_send *send)
{
    if (send->op == KUBE_RECORDER_SEND_NONE)
        return;
    write_with_retries(r, send->op, send->ev);
    kube_recorder_cache_sent(r->cache, send->ev, kube_now_ms());
}

static void process_one(kube_recorder *r, queued *q)
{
    kube_recorder_send send;

    if (past_stop_deadline(r)) {
        kube_recorder_event_free(q->ev);
        stat_add(r, &r->stats.dropped, 1);
        return;
    }
    if (kube_recorder_cache_observe(r->cache, q->ev, q->mono_ms, q->wall_ns, &send) != KUBE_OK) {
        KLOG_ERROR("event recorder: out of memory, event dropped");
        stat_add(r, &r->stats.failed, 1);
        return;
    }
    if (send.op != KUBE_RECORDER_SEND_CREATE)
        stat_add(r, &r->stats.aggregated, 1);
    perform(r, &send);
}

static void process_due(kube_recorder *r, int force)
{
    kube_recorder_send send;

    while (kube_recorder_cache_next_due(r->cache, kube_now_ms(), force, &send)) {
        if (past_stop_deadline(r)) {
            stat_add(r, &r->stats.dropped, 1);
            kube_recorder_cache_sent(r->cache, send.ev, kube_now_ms());
            continue;
        }
        perform(r, &send);
    }
}

/* Waits for work; returns the queued events taken, in order. */
static queued *wait_for_work(kube_recorder *r, int *force, uint64_t *gen, int *stopping)
{
    queued *batch;

    pthread_mutex_lock(&r->mu);
    while (!r->head && !r->stopping && r->flush_req == r->flush_done) {
        int64_t next = kube_recorder_cache_next_deadline(r->cache, kube_now_ms());
        struct timespec ts;

        if (next < 0) {
            pthread_cond_wait(&r->wake, &r->mu);
            continue;
        }
        if (next == 0)
            break;
        abs_deadline(&ts, next);
        if (pthread_cond_timedwait(&r->wake, &r->mu, &ts) != 0)
            break;
    }
    batch = r->head;
    r->head = r->tail = NULL;
    r->len = 0;
    *stopping = r->stopping;
    *gen = r->flush_req;
    *force = r->stopping || r->flush_req != r->flush_done;
    pthread_mutex_unlock(&r->mu);
    return batch;
}

static void *recorder_main(void *arg)
{
    kube_recorder *r = arg;

    pthread_setname_np(pthread_self(), "kube-recorder");

    for (;;) {
        int force, stopping;
        uint64_t gen, n = 0;
        queued *q = wait_for_work(r, &force, &gen, &stopping);

        while (q) {
            queued *next = q->next;

            process_one(r, q);
            free(q);
            q = next;
            n++;
        }
        process_due(r, force);
        pthread_mutex_lock(&r->mu);
        r->done_seq += n;
        if (force)
            r->flush_done = gen;
        pthread_cond_broadcast(&r->progress);
        if (stopping && !r->head) {
            r->exited = 1;
            pthread_mutex_unlock(&r->mu);
            return NULL;
        }
        pthread_mutex_unlock(&r->mu);
    }
}

static int recorder_init_sync(kube_recorder *r)
{
    pthread_condattr_t attr;
    int ok;

    if (pthread_condattr_init(&attr) != 0)
        return KUBE_ENOMEM;
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    ok = pthread_mutex_init(&r->mu, NULL) == 0;
    if (ok && pthread_cond_init(&r->wake, &attr) != 0) {
        pthread_mutex_destroy(&r->mu);
        ok = 0;
    }
    if (ok && pthread_cond_init(&r->progress, &attr) != 0) {
        pthread_cond_destroy(&r->wake);
        pthread_mutex_destroy(&r->mu);
        ok = 0;
    }
    pthread_condattr_destroy(&attr);
    return ok ? KUBE_OK : KUBE_ENOMEM;
}

static int recorder_names(kube_recorder *r)
{
    char host[256];
    kube_buf b = KUBE_BUF_INIT;

    r->controller = kube_strdup(r->opts.reporting_controller);
    if (r->opts.reporting_instance) {
        r->instance = kube_strdup(r->opts.reporting_instance);
    } else {
        if (gethostname(host, sizeof(host)) != 0)
            return KUBE_EIO;
        host[sizeof(host) - 1] = '\0';
        if (kube_buf_printf(&b, "%s-%s", r->opts.reporting_controller, host) == KUBE_OK)
            r->instance = kube_buf_take(&b);
        kube_buf_free(&b);
    }
    r->opts.reporting_controller = NULL;
    r->opts.reporting_instance = NULL;
    return (r->controller && r->instance) ? KUBE_OK : KUBE_ENOMEM;
}

static int options_valid(const kube_recorder_options *o)
{
    return o->reporting_controller && o->reporting_controller[0] && o->queue_capacity > 0 &&
           o->series_heartbeat_ms > 0 && o->series_window_ms > 0 && o->retry_sleep_ms >= 0 &&
           o->max_tries > 0 && (!o->reporting_instance || o->reporting_instance[0]);
}

static void recorder_destroy(kube_recorder *r)
{
    kube_recorder_cache_free(r->cache);
    free(r->controller);
    free(r->instance);
    free(r);
}

int kube_recorder_new(kube_client *client, const kube_recorder_options *opts, kube_recorder **out)
{
    kube_recorder *r;
    int rc;

    *out = NULL;
    r = calloc(1, sizeof(*r));
    if (!r)
        return KUBE_ENOMEM;
    if (opts)
        r->opts = *opts;
    else
        kube_recorder_options_default(&r->opts);
    if (!client || !options_valid(&r->opts)) {
        free(r);
        return KUBE_EINVAL;
    }
    r->client = client;
    if ((rc = recorder_names(r)) != KUBE_OK ||
        (rc = kube_recorder_cache_new(r->opts.series_window_ms, r->opts.series_heartbeat_ms,
                                      &r->cache)) != KUBE_OK) {
        recorder_destroy(r);
        return rc;
    }
    if ((rc = recorder_init_sync(r)) != KUBE_OK) {
        recorder_destroy(r);
        return rc;
    }
    if (pthread_create(&r->thread, NULL, recorder_main, r) != 0) {
        pthread_cond_destroy(&r->wake);
        pthread_cond_destroy(&r->progress);
        pthread_mutex_destroy(&r->mu);
        recorder_destroy(r);
        return KUBE_ENOMEM;
    }
    *out = r;
    return KUBE_OK;
}

__attribute__((format(printf, 1, 0))) static char *format_note(const char *fmt, va_list ap)
{
    va_list ap2;
    char *out;
    int n;

    if (!fmt)
        return kube_strdup("");
    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return NULL;
    out = malloc((size_t)n + 1);
    if (out)
        vsnprintf(out, (size_t)n + 1, fmt, ap);
    return out;
}

/* A unique wall-clock time: names differ even within one nanosecond tick. */
static int64_t next_wall_ns(kube_recorder *r)
{
    int64_t t = wall_now_ns();

    pthread_mutex_lock(&r->mu);
    if (t <= r->last_wall_ns)
        t = r->last_wall_ns + 1;
    r->last_wall_ns = t;
    pthread_mutex_unlock(&r->mu);
    return t;
}

static void log_drop(kube_recorder *r, const kube_recorder_event *ev)
{
    int64_t now = kube_now_ms();

    if (r->stats.dropped != 1 && now - r->last_drop_log_ms < DROP_LOG_PERIOD_MS)
        return;
    r->last_drop_log_ms = now;
    KLOG_WARN("event queue full (%zu events): dropped event %s %s for %s/%s (%lu dropped so far)",
              r->opts.queue_capacity, ev->type, ev->reason, ev->ns,
              ev->regarding.f[3] ? ev->regarding.f[3] : "", r->stats.dropped);
}

static int enqueue(kube_recorder *r, kube_recorder_event *ev, int64_t wall_ns)
{
    queued *q = calloc(1, sizeof(*q));

    if (!q) {
        kube_recorder_event_free(ev);
        return KUBE_ENOMEM;
    }
    q->ev = ev;
    q->wall_ns = wall_ns;
    q->mono_ms = kube_now_ms();
    pthread_mutex_lock(&r->mu);
    if (r->stopping) {
        pthread_mutex_unlock(&r->mu);
        kube_recorder_event_free(ev);
        free(q);
        return KUBE_ECANCELED;
    }
    if (r->len >= r->opts.queue_capacity) {
        r->stats.dropped++;
        log_drop(r, ev);
        pthread_mutex_unlock(&r->mu);
        kube_recorder_event_free(ev);
        free(q);
        return KUBE_ETOOMANY;
    }
    if (r->tail)
        r->tail->next = q;
    else
        r->head = q;
    r->tail = q;
    r->len++;
    r->enq_seq++;
    r->stats.queued++;
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->mu);
    return KUBE_OK;
}

int kube_recorder_eventv(kube_recorder *r, const kube_recorder_ref *regarding,
                         const kube_recorder_ref *related, const char *type, const char *reason,
                         const char *action, const char *note_fmt, va_list ap)
{
    int64_t wall_ns;
    kube_recorder_event *ev = NULL;
    char *note;
    int rc;

    if (!r)
        return KUBE_EINVAL;
    note = format_note(note_fmt, ap);
    if (!note)
        return KUBE_ENOMEM;
    wall_ns = next_wall_ns(r);
    rc = kube_recorder_event_new(regarding, related, type, reason, action, note, r->controller,
                                 r->instance, wall_ns, &ev);
    free(note);
    if (rc == KUBE_EINVAL)
        KLOG_ERROR("event not recorded: bad type '%s', reason, action or object reference",
                   type ? type : "(null)");
    if (rc != KUBE_OK)
        return rc;
    KLOG_V(3, "Event occurred: object %s/%s kind %s type %s reason %s action %s note \"%s\"",
           ev->ns, regarding->name, regarding->kind ? regarding->kind : "", ev->type, ev->reason,
           ev->action, ev->note);
    return enqueue(r, ev, wall_ns);
}

int kube_recorder_eventf(kube_recorder *r, const kube_recorder_ref *regarding,
                         const kube_recorder_ref *related, const char *type, const char *reason,
                         const char *action, const char *note_fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, note_fmt);
    rc = kube_recorder_eventv(r, regarding, related, type, reason, action, note_fmt, ap);
    va_end(ap);
    return rc;
}

int kube_recorder_flush(kube_recorder *r, long timeout_ms)
{
    struct timespec ts;
    uint64_t target, gen;
    int rc = KUBE_OK;

    abs_deadline(&ts, timeout_ms);
    pthread_mutex_lock(&r->mu);
    target = r->enq_seq;
    gen = ++r->flush_req;
    pthread_cond_signal(&r->wake);
    while (!r->exited && (r->done_seq < target || r->flush_done < gen)) {
        if (pthread_cond_timedwait(&r->progress, &r->mu, &ts) != 0) {
            rc = KUBE_ETIMEDOUT;
            break;
        }
    }
    if (rc == KUBE_OK && r->exited && (r->done_seq < target || r->flush_done < gen))
        rc = KUBE_ECANCELED;
    pthread_mutex_unlock(&r->mu);
    return rc;
}

void kube_recorder_stop(kube_recorder *r, long deadline_ms)
{
    pthread_mutex_lock(&r->mu);
    if (!r->stopping) {
        r->stopping = 1;
        r->stop_deadline_ms = kube_now_ms() + deadline_ms;
    }
    pthread_cond_broadcast(&r->wake);
    pthread_mutex_unlock(&r->mu);
    if (!r->joined) {
        pthread_join(r->thread, NULL);
        r->joined = 1;
    }
}

void kube_recorder_free(kube_recorder *r)
{
    if (!r)
        return;
    kube_recorder_stop(r, 0);
    pthread_cond_destroy(&r->wake);
    pthread_cond_destroy(&r->progress);
    pthread_mutex_destroy(&r->mu);
    recorder_destroy(r);
}

void kube_recorder_stats_get(kube_recorder *r, kube_recorder_stats *out)
{
    pthread_mutex_lock(&r->mu);
    *out = r->stats;
    pthread_mutex_unlock(&r->mu);
}
