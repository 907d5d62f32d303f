/*
 * kube/util/metrics.c - the Prometheus registry (metrics.h).
 *
 * Values live in atomics (doubles as their bit patterns, updated with
 * compare-and-swap), so observations never lock. Children are found by
 * their joined label values in the family's map under the family's lock;
 * a small per-thread cache keyed by the family's unique id and the label
 * strings' addresses (checked by content on a hit) skips that lock on the
 * hot paths.
 */
#include "kube/util/array.h"
#include "kube/util/metrics.h"
#include "kube/util/metrics_testing.h"
#include "kube/util/metrics_int.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/strmap.h"
#include "kube/util/errors.h"

static atomic_uint_fast64_t next_family_id = 1;

/* ------------------------------------------------------------------ */
/* Atomic doubles                                                      */
/* ------------------------------------------------------------------ */

static uint64_t d2u(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof(u));
    return u;
}

static void atomic_add_double(_Atomic uint64_t *a, double v)
{
    uint64_t old = atomic_load_explicit(a, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(a, &old, d2u(kube_metrics_u2d(old) + v),
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

/* ------------------------------------------------------------------ */
/* Registry                                                            */
/* ------------------------------------------------------------------ */

int kube_metrics_new(kube_metrics **out)
{
    kube_metrics *r = calloc(1, sizeof(*r));

    *out = NULL;
    if (!r)
        return KUBE_ENOMEM;
    pthread_mutex_init(&r->mu, NULL);
    *out = r;
    return KUBE_OK;
}

static void child_free(kube_metric_child *c, size_t n_labels)
{
    if (!c)
        return;
    for (size_t i = 0; i < n_labels; i++)
        free(c->values[i]);
    free(c->values);
    free(c->buckets);
    free(c);
}

static void family_free(kube_metric *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_list; i++)
        child_free(m->list[i], m->n_labels);
    free(m->list);
    kube_strmap_free(&m->children);
    for (size_t i = 0; i < m->n_labels; i++)
        free(m->labels[i]);
    free(m->buckets);
    free(m->name);
    free(m->help);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

void kube_metrics_free(kube_metrics *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        family_free(r->fams[i]);
    free(r->fams);
    kube_strmap_free(&r->by_name);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

static int valid_name(const char *s, int allow_colon)
{
    if (!s || !*s)
        return 0;
    for (const char *p = s; *p; p++) {
        char ch = *p;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
                 (allow_colon && ch == ':') || (p != s && ch >= '0' && ch <= '9');
        if (!ok)
            return 0;
    }
    return 1;
}

static int valid_opts(const kube_metric_opts *o)
{
    if (!o || !valid_name(o->name, 1) || !o->help || o->n_labels > KUBE_METRIC_MAX_LABELS ||
        (o->n_labels && !o->labels) || o->type > KUBE_METRIC_HISTOGRAM)
        return 0;
    for (size_t i = 0; i < o->n_labels; i++) {
        if (!valid_name(o->labels[i], 0) || !strncmp(o->labels[i], "__", 2))
            return 0;
        if (o->type == KUBE_METRIC_HISTOGRAM && !strcmp(o->labels[i], "le"))
            return 0;
        for (size_t k = 0; k < i; k++)
            if (!strcmp(o->labels[k], o->labels[i]))
                return 0;
    }
    if (o->type != KUBE_METRIC_HISTOGRAM)
        return 1;
    if (!o->buckets || o->n_buckets == 0 || o->n_buckets > KUBE_METRIC_MAX_BUCKETS)
        return 0;
    for (size_t i = 1; i < o->n_buckets; i++)
        if (!(o->buckets[i] > o->buckets[i - 1]))
            return 0;
    return 1;
}

static kube_metric *family_new(const kube_metric_opts *o)
{
    kube_metric *m = calloc(1, sizeof(*m));
    int ok;

    if (!m)
        return NULL;
    pthread_mutex_init(&m->mu, NULL);
    m->id = atomic_fetch_add(&next_family_id, 1);
    m->type = o->type;
    m->stability = o->stability;
    m->name = strdup(o->name);
    m->help = strdup(o->help);
    ok = m->name && m->help;
    for (size_t i = 0; ok && i < o->n_labels; i++) {
        m->labels[i] = strdup(o->labels[i]);
        m->n_labels = i + 1;
        ok = m->labels[i] != NULL;
    }
    if (ok && o->type == KUBE_METRIC_HISTOGRAM) {
        m->buckets = malloc(o->n_buckets * sizeof(double));
        ok = m->buckets != NULL;
        if (ok) {
            memcpy(m->buckets, o->buckets, o->n_buckets * sizeof(double));
            m->n_buckets = o->n_buckets;
        }
    }
    if (!ok) {
        family_free(m);
        return NULL;
    }
    return m;
}

int kube_metrics_register(kube_metrics *r, const kube_metric_opts *o, kube_metric **out)
{
    kube_metric *m;
    int rc = KUBE_OK;

    if (out)
        *out = NULL;
    if (!r || !valid_opts(o))
        return KUBE_EINVAL;
    m = family_new(o);
    if (!m)
        return KUBE_ENOMEM;
    pthread_mutex_lock(&r->mu);
    if (kube_strmap_get(&r->by_name, o->name)) {
        rc = KUBE_EEXIST;
    } else {
        rc = KUBE_ARRAY_RESERVE(r->fams, r->cap, r->n + 1);
    }
    if (rc == KUBE_OK)
        rc = kube_strmap_put(&r->by_name, m->name, m, NULL);
    if (rc == KUBE_OK)
        r->fams[r->n++] = m;
    pthread_mutex_unlock(&r->mu);
    if (rc != KUBE_OK) {
        family_free(m);
        return rc;
    }
    if (out)
        *out = m;
    return KUBE_OK;
}

kube_metric *kube_metrics_find(kube_metrics *r, const char *name)
{
    kube_metric *m;

    if (!r || !name)
        return NULL;
    pthread_mutex_lock(&r->mu);
    m = kube_strmap_get(&r->by_name, name);
    pthread_mutex_unlock(&r->mu);
    return m;
}

kube_metric *kube_metrics_ensure(kube_metrics *r, const kube_metric_opts *o)
{
    kube_metric *m = NULL;
    int rc = kube_metrics_register(r, o, &m);
    if (rc == KUBE_EEXIST)
        m = kube_metrics_find(r, o->name);
    kube_metric_with(m, NULL); /* exported from 0, as client_golang does */
    return m;
}

/* ------------------------------------------------------------------ */
/* Children                                                            */
/* ------------------------------------------------------------------ */

/* Label values joined with 0x1f; NULL when they do not fit. */
static const char *join_values(const kube_metric *m, const char *const *values, char *buf, size_t n)
{
    size_t len = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < m->n_labels; i++) {
        size_t l = strlen(values[i]);
        if (len + l + 2 > n)
            return NULL;
        memcpy(buf + len, values[i], l);
        len += l;
        buf[len++] = '\x1f';
        buf[len] = '\0';
    }
    return buf;
}

static kube_metric_child *child_new(kube_metric *m, const char *const *values)
{
    kube_metric_child *c = calloc(1, sizeof(*c));
    int ok;

    if (!c)
        return NULL;
    c->family = m;
    c->values = calloc(m->n_labels ? m->n_labels : 1, sizeof(char *));
    ok = c->values != NULL;
    for (size_t i = 0; ok && i < m->n_labels; i++) {
        c->values[i] = strdup(values[i]);
        ok = c->values[i] != NULL;
    }
    if (ok && m->type == KUBE_METRIC_HISTOGRAM) {
        c->buckets = calloc(m->n_buckets, sizeof(*c->buckets));
        ok = c->buckets != NULL;
    }
    if (!ok) {
        child_free(c, m->n_labels);
        return NULL;
    }
    return c;
}

static int list_append(kube_metric *m, kube_metric_child *c)
{
    if (KUBE_ARRAY_RESERVE(m->list, m->cap_list, m->n_list + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    m->list[m->n_list++] = c;
    return KUBE_OK;
}

static kube_metric_child *lookup_locked(kube_metric *m, const char *const *values)
{
    char stack[512];
    char *heap = NULL;
    const char *key = join_values(m, values, stack, sizeof(stack));
    kube_metric_child *c;

    if (!key) {
        size_t need = 2;
        for (size_t i = 0; i < m->n_labels; i++)
            need += strlen(values[i]) + 1;
        heap = malloc(need);
        if (!heap)
            return NULL;
        key = join_values(m, values, heap, need);
    }
    c = kube_strmap_get(&m->children, key);
    if (!c) {
        c = child_new(m, values);
        if (c && list_append(m, c) != KUBE_OK) {
            child_free(c, m->n_labels);
            c = NULL;
        }
        if (c && kube_strmap_put(&m->children, key, c, NULL) != KUBE_OK) {
            m->n_list--;
            child_free(c, m->n_labels);
            c = NULL;
        }
    }
    free(heap);
    return c;
}

/* Per-thread cache of recent lookups, for every family and label count up
 * to TL_LABELS. The one other cache of children is the scheduler's
 * (scheduler/metrics.c): plugin durations, recorded once per plugin per
 * node in sampled cycles, keyed by three static names and carrying the
 * slot's deferred observations, with an inline hit; it falls back to this
 * one on a miss. */
#define TL_SLOTS 256
#define TL_LABELS 4

typedef struct tl_entry {
    uint64_t id;
    const char *ptrs[TL_LABELS];
    kube_metric_child *child;
} tl_entry;

/* The thread's TL_SLOTS entries, allocated on its first lookup: as a
 * static __thread array they were 12 KB of every thread's start-up
 * (static TLS is copied and zeroed when a thread starts), used or not. */
static __thread tl_entry *tl_cache;
static pthread_key_t tl_key;
static int tl_key_ok;

/* Installed before main, while the process has one thread. */
__attribute__((constructor)) static void tl_key_init(void)
{
    tl_key_ok = pthread_key_create(&tl_key, free) == 0;
}

/* The exiting thread (main) gets no key destructor call. */
__attribute__((destructor)) static void tl_free_main(void)
{
    if (tl_key_ok)
        pthread_setspecific(tl_key, NULL);
    free(tl_cache);
    tl_cache = NULL;
}

/* The calling thread's cache, allocated on first use; NULL when memory
 * runs out (lookups then take the lock, as a miss does). */
static tl_entry *tl_table(void)
{
    if (tl_cache || !tl_key_ok)
        return tl_cache;
    tl_cache = calloc(TL_SLOTS, sizeof(tl_entry));
    if (tl_cache && pthread_setspecific(tl_key, tl_cache) != 0) {
        free(tl_cache);
        tl_cache = NULL;
    }
    return tl_cache;
}

static size_t tl_slot(uint64_t id, const char *const *values, size_t n)
{
    uint64_t h = id * 0x9E3779B97F4A7C15ULL;

    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint64_t)(uintptr_t)values[i]) * 0x100000001B3ULL;
    return (size_t)(h >> 32) % TL_SLOTS;
}

/* A cached lookup matches when the addresses match and, unless the values
 * are static, the contents too (an address may be reused after a free). */
static int tl_hit(const tl_entry *e, const kube_metric *m, const char *const *values, int is_static)
{
    if (e->id != m->id || !e->child)
        return 0;
    for (size_t i = 0; i < m->n_labels; i++)
        if (e->ptrs[i] != values[i] || (!is_static && strcmp(e->child->values[i], values[i])))
            return 0;
    return 1;
}

static kube_metric_child *metric_with(kube_metric *m, const char *const *values, int is_static)
{
    kube_metric_child *c;
    tl_entry *e = NULL;

    if (!m || (m->n_labels && !values))
        return NULL;
    for (size_t i = 0; i < m->n_labels; i++)
        if (!values[i])
            return NULL;
    tl_entry *table = m->n_labels <= TL_LABELS ? tl_table() : NULL;
    if (table) {
        e = &table[tl_slot(m->id, values, m->n_labels)];
        if (tl_hit(e, m, values, is_static))
            return e->child;
    }
    pthread_mutex_lock(&m->mu);
    c = lookup_locked(m, values);
    pthread_mutex_unlock(&m->mu);
    if (c && e) {
        e->id = m->id;
        for (size_t i = 0; i < m->n_labels; i++)
            e->ptrs[i] = values[i];
        e->child = c;
    }
    return c;
}

kube_metric_child *kube_metric_with(kube_metric *m, const char *const *values)
{
    return metric_with(m, values, 0);
}

kube_metric_child *kube_metric_with_static(kube_metric *m, const char *const *values)
{
    return metric_with(m, values, 1);
}

void kube_metric_child_add(kube_metric_child *c, double v)
{
    if (!c || c->family->type == KUBE_METRIC_HISTOGRAM)
        return;
    if (c->family->type == KUBE_METRIC_COUNTER && !(v >= 0))
        return;
    atomic_add_double(&c->bits, v);
}

void kube_metric_child_set(kube_metric_child *c, double v)
{
    if (c && c->family->type == KUBE_METRIC_GAUGE)
        atomic_store_explicit(&c->bits, d2u(v), memory_order_relaxed);
}

/* The first bucket of histogram m whose upper bound is >= v; n_buckets
 * means +Inf. */
static size_t bucket_index(const kube_metric *m, double v)
{
    size_t lo = 0, hi = m->n_buckets;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v <= m->buckets[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

void kube_metric_child_observe(kube_metric_child *c, double v)
{
    const kube_metric *m;
    size_t lo;

    if (!c || c->family->type != KUBE_METRIC_HISTOGRAM)
        return;
    m = c->family;
    lo = bucket_index(m, v);
    if (lo < m->n_buckets)
        atomic_fetch_add_explicit(&c->buckets[lo], 1, memory_order_relaxed);
    atomic_add_double(&c->sum_bits, v);
    atomic_fetch_add_explicit(&c->count, 1, memory_order_relaxed);
}

void kube_metric_child_observe_many(kube_metric_child *c, const uint32_t *per_bucket,
                                    uint64_t count, double sum)
{
    if (!c || c->family->type != KUBE_METRIC_HISTOGRAM)
        return;
    for (size_t b = 0; b < c->family->n_buckets; b++)
        if (per_bucket[b])
            atomic_fetch_add_explicit(&c->buckets[b], per_bucket[b], memory_order_relaxed);
    atomic_add_double(&c->sum_bits, sum);
    atomic_fetch_add_explicit(&c->count, count, memory_order_relaxed);
}

const double *kube_metric_child_buckets(const kube_metric_child *c, size_t *n)
{
    *n = c ? c->family->n_buckets : 0;
    return c ? c->family->buckets : NULL;
}

uint64_t kube_metric_id(const kube_metric *m)
{
    return m ? m->id : 0;
}

double kube_metric_child_value(const kube_metric_child *c)
{
    if (!c)
        return 0;
    if (c->family->type == KUBE_METRIC_HISTOGRAM)
        return (double)atomic_load(&c->count);
    return kube_metrics_u2d(atomic_load(&c->bits));
}

double kube_metric_child_sum(const kube_metric_child *c)
{
    return c ? kube_metrics_u2d(atomic_load(&c->sum_bits)) : 0;
}

void kube_metric_add(kube_metric *m, const char *const *values, double v)
{
    kube_metric_child_add(kube_metric_with(m, values), v);
}

void kube_metric_set(kube_metric *m, const char *const *values, double v)
{
    kube_metric_child_set(kube_metric_with(m, values), v);
}

void kube_metric_observe(kube_metric *m, const char *const *values, double v)
{
    kube_metric_child_observe(kube_metric_with(m, values), v);
}

double kube_metric_value(kube_metric *m, const char *const *values)
{
    char buf[512];
    const char *key;
    kube_metric_child *c;

    if (!m)
        return 0;
    key = join_values(m, values, buf, sizeof(buf));
    if (!key)
        return 0;
    pthread_mutex_lock(&m->mu);
    c = kube_strmap_get(&m->children, key);
    pthread_mutex_unlock(&m->mu);
    return kube_metric_child_value(c);
}

int kube_metric_replace(kube_metric *m, const char *const *values, const double *v, size_t n)
{
    int rc = KUBE_OK;

    if (!m || m->type != KUBE_METRIC_GAUGE)
        return KUBE_OK;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->n_list; i++)
        m->list[i]->hidden = 1;
    for (size_t i = 0; i < n; i++) {
        kube_metric_child *c = lookup_locked(m, values + i * m->n_labels);
        if (!c) {
            rc = KUBE_ENOMEM;
            continue;
        }
        atomic_store_explicit(&c->bits, d2u(v[i]), memory_order_relaxed);
        c->hidden = 0;
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}
