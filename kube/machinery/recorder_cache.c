/*
 * kube/machinery/recorder_cache.c - the recorder's aggregation cache (recorder.h):
 * isomorphic events within a window become one Event with a series, with
 * heartbeats and a final count, in a hash table with LRU eviction.
 */
#include "kube/machinery/recorder_testing.h"
#include "kube/util/clock.h"

#include "kube/util/hash.h"

/* ---- aggregation cache ---------------------------------------------------- */

/* An entry holds its event whole while it may be written (its create in
 * flight, a series). A single event once written is kept slim: ev NULL,
 * its name, namespace and wall time, and two hashes of its key (a repeat
 * brings every other field back, being isomorphic). bench-scheduler at
 * 5000 nodes / 10,000 pods holds 10,000 Scheduled events for the 6-minute
 * window: its peak RSS was 8.6 MB higher with them whole. */
typedef struct cache_entry {
    kube_recorder_event *ev; /* NULL when slim */
    char *name, *ns;         /* a slim entry's event's */
    int64_t wall_ns;         /* a slim entry's event's */
    uint64_t hash, hash2;
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
    return kube_fnv1a_str(KUBE_FNV1A_INIT, s);
}

/* A second 64-bit hash of the key, unlike FNV-1a (a multiply-xorshift per
 * byte): a slim entry is matched on both, 128 bits, instead of the key. */
static uint64_t key_hash2(const char *s)
{
    uint64_t h = 0x243F6A8885A308D3ULL;

    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 29;
    }
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
    free(e->name);
    free(e->ns);
    free(e);
}

/* Keeps only what a slim entry needs of its written single event. */
static void entry_slim(cache_entry *e)
{
    kube_recorder_event *ev = e->ev;

    e->name = ev->name;
    e->ns = ev->ns;
    e->wall_ns = ev->wall_ns;
    ev->name = ev->ns = NULL;
    ev->entry = NULL;
    kube_recorder_event_free(ev);
    e->ev = NULL;
}

/* A repeat ev of a slim entry's event becomes its event again: the first
 * occurrence's name and time, every other field the repeat's (equal). */
static void entry_adopt(cache_entry *e, kube_recorder_event *ev)
{
    free(ev->name);
    free(ev->ns);
    ev->name = e->name;
    ev->ns = e->ns;
    ev->wall_ns = e->wall_ns;
    kube_time_format(e->wall_ns / 1000, 1, ev->event_time, sizeof(ev->event_time));
    e->name = e->ns = NULL;
    ev->entry = e;
    e->ev = ev;
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

static cache_entry *table_find(const kube_recorder_cache *c, const char *key, uint64_t hash,
                               uint64_t hash2)
{
    cache_entry *e = c->buckets[hash % c->nbuckets];

    while (e && (e->hash != hash || e->hash2 != hash2 || (e->ev && strcmp(e->ev->key, key) != 0)))
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
 * counts wait on the dirty list for their final PATCH, those whose create
 * is still in flight (ev->writing) for kube_recorder_cache_sent(). */
static void cache_expire(kube_recorder_cache *c, int64_t now_ms)
{
    while (c->head && now_ms - c->head->last_ms >= c->window_ms) {
        cache_entry *e = c->head;

        table_remove(c, e);
        if (e->dirty || (e->ev && e->ev->writing))
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
    e->hash2 = key_hash2(ev->key);
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
    e = table_find(c, ev->key, key_hash(ev->key), key_hash2(ev->key));
    if (!e)
        return cache_insert(c, ev, now_ms, send);
    if (e->ev)
        kube_recorder_event_free(ev);
    else
        entry_adopt(e, ev);
    kube_time_format(wall_ns / 1000, 1, e->ev->series_last, sizeof(e->ev->series_last));
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
    else if (e->ev->series_count == 0 && !e->ev->writing)
        entry_slim(e);
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
