/*
 * scheduler/metrics.c - the Prometheus registry and kube-scheduler's
 * metric set (see metrics.h).
 *
 * Values live in atomics (doubles as their bit patterns, updated with
 * compare-and-swap), so observations never lock. Children are found by
 * their joined label values in the family's map under the family's lock;
 * a small per-thread cache keyed by the family's unique id and the label
 * strings' addresses (checked by content on a hit) skips that lock on the
 * hot paths.
 */
#include "metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/strmap.h"
#include "kube/errors.h"

struct sched_metric_child {
    sched_metric *family;
    char **values;                 /* n_labels owned strings */
    _Atomic uint64_t bits;         /* counter/gauge value (double bits) */
    _Atomic uint64_t count;        /* histogram samples */
    _Atomic uint64_t sum_bits;     /* histogram sum (double bits) */
    _Atomic uint64_t *buckets;     /* per-bucket (not cumulative) counts */
};

struct sched_metric {
    uint64_t id;
    char *name, *help;
    sched_metric_type type;
    sched_stability stability;
    char *labels[SCHED_METRIC_MAX_LABELS];
    size_t n_labels;
    double *buckets;
    size_t n_buckets;
    pthread_mutex_t mu;            /* guards children and list */
    fw_strmap children;            /* joined values -> child */
    sched_metric_child **list;
    size_t n_list, cap_list;
};

struct sched_metrics {
    pthread_mutex_t mu;
    fw_strmap by_name;
    sched_metric **fams;
    size_t n, cap;
};

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

static double u2d(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof(d));
    return d;
}

static void atomic_add_double(_Atomic uint64_t *a, double v)
{
    uint64_t old = atomic_load_explicit(a, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(a, &old, d2u(u2d(old) + v),
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

/* ------------------------------------------------------------------ */
/* Registry                                                            */
/* ------------------------------------------------------------------ */

int sched_metrics_new(sched_metrics **out)
{
    sched_metrics *r = calloc(1, sizeof(*r));

    *out = NULL;
    if (!r)
        return KUBE_ENOMEM;
    pthread_mutex_init(&r->mu, NULL);
    *out = r;
    return KUBE_OK;
}

static void child_free(sched_metric_child *c, size_t n_labels)
{
    if (!c)
        return;
    for (size_t i = 0; i < n_labels; i++)
        free(c->values[i]);
    free(c->values);
    free(c->buckets);
    free(c);
}

static void family_free(sched_metric *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_list; i++)
        child_free(m->list[i], m->n_labels);
    free(m->list);
    fw_strmap_free(&m->children);
    for (size_t i = 0; i < m->n_labels; i++)
        free(m->labels[i]);
    free(m->buckets);
    free(m->name);
    free(m->help);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

void sched_metrics_free(sched_metrics *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        family_free(r->fams[i]);
    free(r->fams);
    fw_strmap_free(&r->by_name);
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

static int valid_opts(const sched_metric_opts *o)
{
    if (!o || !valid_name(o->name, 1) || !o->help || o->n_labels > SCHED_METRIC_MAX_LABELS ||
        (o->n_labels && !o->labels) || o->type > SCHED_METRIC_HISTOGRAM)
        return 0;
    for (size_t i = 0; i < o->n_labels; i++) {
        if (!valid_name(o->labels[i], 0) || !strncmp(o->labels[i], "__", 2))
            return 0;
        if (o->type == SCHED_METRIC_HISTOGRAM && !strcmp(o->labels[i], "le"))
            return 0;
        for (size_t k = 0; k < i; k++)
            if (!strcmp(o->labels[k], o->labels[i]))
                return 0;
    }
    if (o->type != SCHED_METRIC_HISTOGRAM)
        return 1;
    if (!o->buckets || o->n_buckets == 0 || o->n_buckets > SCHED_METRIC_MAX_BUCKETS)
        return 0;
    for (size_t i = 1; i < o->n_buckets; i++)
        if (!(o->buckets[i] > o->buckets[i - 1]))
            return 0;
    return 1;
}

static sched_metric *family_new(const sched_metric_opts *o)
{
    sched_metric *m = calloc(1, sizeof(*m));
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
    if (ok && o->type == SCHED_METRIC_HISTOGRAM) {
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

int sched_metrics_register(sched_metrics *r, const sched_metric_opts *o, sched_metric **out)
{
    sched_metric *m;
    int rc = KUBE_OK;

    if (out)
        *out = NULL;
    if (!r || !valid_opts(o))
        return KUBE_EINVAL;
    m = family_new(o);
    if (!m)
        return KUBE_ENOMEM;
    pthread_mutex_lock(&r->mu);
    if (fw_strmap_get(&r->by_name, o->name)) {
        rc = KUBE_EEXIST;
    } else if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 32;
        sched_metric **f = realloc(r->fams, cap * sizeof(*f));
        if (f) {
            r->fams = f;
            r->cap = cap;
        } else {
            rc = KUBE_ENOMEM;
        }
    }
    if (rc == KUBE_OK)
        rc = fw_strmap_put(&r->by_name, m->name, m, NULL);
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

sched_metric *sched_metrics_find(sched_metrics *r, const char *name)
{
    sched_metric *m;

    if (!r || !name)
        return NULL;
    pthread_mutex_lock(&r->mu);
    m = fw_strmap_get(&r->by_name, name);
    pthread_mutex_unlock(&r->mu);
    return m;
}

/* ------------------------------------------------------------------ */
/* Children                                                            */
/* ------------------------------------------------------------------ */

/* Label values joined with 0x1f; NULL when they do not fit. */
static const char *join_values(const sched_metric *m, const char *const *values, char *buf,
                               size_t n)
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

static sched_metric_child *child_new(sched_metric *m, const char *const *values)
{
    sched_metric_child *c = calloc(1, sizeof(*c));
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
    if (ok && m->type == SCHED_METRIC_HISTOGRAM) {
        c->buckets = calloc(m->n_buckets, sizeof(*c->buckets));
        ok = c->buckets != NULL;
    }
    if (!ok) {
        child_free(c, m->n_labels);
        return NULL;
    }
    return c;
}

static int list_append(sched_metric *m, sched_metric_child *c)
{
    if (m->n_list == m->cap_list) {
        size_t cap = m->cap_list ? m->cap_list * 2 : 8;
        sched_metric_child **l = realloc(m->list, cap * sizeof(*l));
        if (!l)
            return KUBE_ENOMEM;
        m->list = l;
        m->cap_list = cap;
    }
    m->list[m->n_list++] = c;
    return KUBE_OK;
}

static sched_metric_child *lookup_locked(sched_metric *m, const char *const *values)
{
    char stack[512];
    char *heap = NULL;
    const char *key = join_values(m, values, stack, sizeof(stack));
    sched_metric_child *c;

    if (!key) {
        size_t need = 2;
        for (size_t i = 0; i < m->n_labels; i++)
            need += strlen(values[i]) + 1;
        heap = malloc(need);
        if (!heap)
            return NULL;
        key = join_values(m, values, heap, need);
    }
    c = fw_strmap_get(&m->children, key);
    if (!c) {
        c = child_new(m, values);
        if (c && list_append(m, c) != KUBE_OK) {
            child_free(c, m->n_labels);
            c = NULL;
        }
        if (c && fw_strmap_put(&m->children, key, c, NULL) != KUBE_OK) {
            m->n_list--;
            child_free(c, m->n_labels);
            c = NULL;
        }
    }
    free(heap);
    return c;
}

/* Per-thread cache of recent lookups. */
#define TL_SLOTS 256
#define TL_LABELS 4

typedef struct tl_entry {
    uint64_t id;
    const char *ptrs[TL_LABELS];
    sched_metric_child *child;
} tl_entry;

static __thread tl_entry tl_cache[TL_SLOTS];

static size_t tl_slot(uint64_t id, const char *const *values, size_t n)
{
    uint64_t h = id * 0x9E3779B97F4A7C15ULL;

    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint64_t)(uintptr_t)values[i]) * 0x100000001B3ULL;
    return (size_t)(h >> 32) % TL_SLOTS;
}

/* A cached lookup matches when the addresses match and, unless the values
 * are static, the contents too (an address may be reused after a free). */
static int tl_hit(const tl_entry *e, const sched_metric *m, const char *const *values,
                  int is_static)
{
    if (e->id != m->id || !e->child)
        return 0;
    for (size_t i = 0; i < m->n_labels; i++)
        if (e->ptrs[i] != values[i] || (!is_static && strcmp(e->child->values[i], values[i])))
            return 0;
    return 1;
}

static sched_metric_child *metric_with(sched_metric *m, const char *const *values, int is_static)
{
    sched_metric_child *c;
    tl_entry *e = NULL;

    if (!m || (m->n_labels && !values))
        return NULL;
    for (size_t i = 0; i < m->n_labels; i++)
        if (!values[i])
            return NULL;
    if (m->n_labels <= TL_LABELS) {
        e = &tl_cache[tl_slot(m->id, values, m->n_labels)];
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

sched_metric_child *sched_metric_with(sched_metric *m, const char *const *values)
{
    return metric_with(m, values, 0);
}

sched_metric_child *sched_metric_with_static(sched_metric *m, const char *const *values)
{
    return metric_with(m, values, 1);
}

void sched_metric_child_add(sched_metric_child *c, double v)
{
    if (!c || c->family->type == SCHED_METRIC_HISTOGRAM)
        return;
    if (c->family->type == SCHED_METRIC_COUNTER && !(v >= 0))
        return;
    atomic_add_double(&c->bits, v);
}

void sched_metric_child_set(sched_metric_child *c, double v)
{
    if (c && c->family->type == SCHED_METRIC_GAUGE)
        atomic_store_explicit(&c->bits, d2u(v), memory_order_relaxed);
}

/* The first bucket of histogram m whose upper bound is >= v; n_buckets
 * means +Inf. */
static size_t bucket_index(const sched_metric *m, double v)
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

void sched_metric_child_observe(sched_metric_child *c, double v)
{
    const sched_metric *m;
    size_t lo;

    if (!c || c->family->type != SCHED_METRIC_HISTOGRAM)
        return;
    m = c->family;
    lo = bucket_index(m, v);
    if (lo < m->n_buckets)
        atomic_fetch_add_explicit(&c->buckets[lo], 1, memory_order_relaxed);
    atomic_add_double(&c->sum_bits, v);
    atomic_fetch_add_explicit(&c->count, 1, memory_order_relaxed);
}

double sched_metric_child_value(const sched_metric_child *c)
{
    if (!c)
        return 0;
    if (c->family->type == SCHED_METRIC_HISTOGRAM)
        return (double)atomic_load(&c->count);
    return u2d(atomic_load(&c->bits));
}

double sched_metric_child_sum(const sched_metric_child *c)
{
    return c ? u2d(atomic_load(&c->sum_bits)) : 0;
}

void sched_metric_add(sched_metric *m, const char *const *values, double v)
{
    sched_metric_child_add(sched_metric_with(m, values), v);
}

void sched_metric_set(sched_metric *m, const char *const *values, double v)
{
    sched_metric_child_set(sched_metric_with(m, values), v);
}

void sched_metric_observe(sched_metric *m, const char *const *values, double v)
{
    sched_metric_child_observe(sched_metric_with(m, values), v);
}

double sched_metric_value(sched_metric *m, const char *const *values)
{
    char buf[512];
    const char *key;
    sched_metric_child *c;

    if (!m)
        return 0;
    key = join_values(m, values, buf, sizeof(buf));
    if (!key)
        return 0;
    pthread_mutex_lock(&m->mu);
    c = fw_strmap_get(&m->children, key);
    pthread_mutex_unlock(&m->mu);
    return sched_metric_child_value(c);
}

/* ------------------------------------------------------------------ */
/* Exposition                                                          */
/* ------------------------------------------------------------------ */

void sched_metrics_exp_buckets(double start, double factor, size_t n, double *out)
{
    for (size_t i = 0; i < n; i++) {
        out[i] = start;
        start *= factor;
    }
}

void sched_metrics_format_float(double v, char *out, size_t n)
{
    char buf[40];
    const char *e;
    int prec, exp;

    if (isnan(v)) {
        snprintf(out, n, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(out, n, "%s", v > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (v == 0) {
        snprintf(out, n, "0");
        return;
    }
    /* the shortest digits that read back as v */
    for (prec = 1; prec < 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*e", prec - 1, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    snprintf(buf, sizeof(buf), "%.*e", prec - 1, v);
    e = strchr(buf, 'e');
    exp = e ? (int)strtol(e + 1, NULL, 10) : 0;
    /* strconv 'g' with shortest precision: %e when exp < -4 || exp >= 6 */
    if (exp < -4 || exp >= 6)
        snprintf(out, n, "%s", buf);
    else
        snprintf(out, n, "%.*f", prec - 1 - exp > 0 ? prec - 1 - exp : 0, v);
}

static int put_escaped(kube_buf *b, const char *s, int quote)
{
    int rc = KUBE_OK;

    for (; *s && rc == KUBE_OK; s++) {
        if (*s == '\\')
            rc = kube_buf_puts(b, "\\\\");
        else if (*s == '\n')
            rc = kube_buf_puts(b, "\\n");
        else if (quote && *s == '"')
            rc = kube_buf_puts(b, "\\\"");
        else
            rc = kube_buf_append(b, s, 1);
    }
    return rc;
}

static const char *stability_prefix(sched_stability s)
{
    switch (s) {
    case SCHED_STABILITY_STABLE:
        return "[STABLE] ";
    case SCHED_STABILITY_BETA:
        return "[BETA] ";
    default:
        return "[ALPHA] ";
    }
}

static const char *type_name(sched_metric_type t)
{
    return t == SCHED_METRIC_COUNTER ? "counter" : t == SCHED_METRIC_GAUGE ? "gauge" : "histogram";
}

/* {a="x",b="y"[,le="..."]} or "" when there is nothing to write. */
static int put_labels(kube_buf *b, const sched_metric *m, const sched_metric_child *c,
                      const char *le)
{
    int rc = KUBE_OK;
    int first = 1;

    if (m->n_labels == 0 && !le)
        return KUBE_OK;
    rc = kube_buf_puts(b, "{");
    for (size_t i = 0; rc == KUBE_OK && i < m->n_labels; i++) {
        rc = kube_buf_printf(b, "%s%s=\"", first ? "" : ",", m->labels[i]);
        if (rc == KUBE_OK)
            rc = put_escaped(b, c->values[i], 1);
        if (rc == KUBE_OK)
            rc = kube_buf_puts(b, "\"");
        first = 0;
    }
    if (rc == KUBE_OK && le)
        rc = kube_buf_printf(b, "%sle=\"%s\"", first ? "" : ",", le);
    if (rc == KUBE_OK)
        rc = kube_buf_puts(b, "}");
    return rc;
}

static int put_sample(kube_buf *b, const sched_metric *m, const char *suffix,
                      const sched_metric_child *c, const char *le, double v)
{
    char num[40];
    int rc = kube_buf_printf(b, "%s%s", m->name, suffix);

    if (rc == KUBE_OK)
        rc = put_labels(b, m, c, le);
    sched_metrics_format_float(v, num, sizeof(num));
    if (rc == KUBE_OK)
        rc = kube_buf_printf(b, " %s\n", num);
    return rc;
}

static int write_histogram(kube_buf *b, const sched_metric *m, const sched_metric_child *c)
{
    uint64_t cum = 0;
    char le[40];
    int rc = KUBE_OK;

    for (size_t i = 0; rc == KUBE_OK && i < m->n_buckets; i++) {
        cum += atomic_load(&c->buckets[i]);
        sched_metrics_format_float(m->buckets[i], le, sizeof(le));
        rc = put_sample(b, m, "_bucket", c, le, (double)cum);
    }
    if (rc == KUBE_OK)
        rc = put_sample(b, m, "_bucket", c, "+Inf", (double)atomic_load(&c->count));
    if (rc == KUBE_OK)
        rc = put_sample(b, m, "_sum", c, NULL, u2d(atomic_load(&c->sum_bits)));
    if (rc == KUBE_OK)
        rc = put_sample(b, m, "_count", c, NULL, (double)atomic_load(&c->count));
    return rc;
}

static int cmp_child(const void *a, const void *b)
{
    const sched_metric_child *x = *(sched_metric_child *const *)a;
    const sched_metric_child *y = *(sched_metric_child *const *)b;

    for (size_t i = 0; i < x->family->n_labels; i++) {
        int c = strcmp(x->values[i], y->values[i]);
        if (c)
            return c;
    }
    return 0;
}

static int cmp_family(const void *a, const void *b)
{
    return strcmp((*(sched_metric *const *)a)->name, (*(sched_metric *const *)b)->name);
}

static int write_family(kube_buf *b, sched_metric *m)
{
    sched_metric_child **kids;
    size_t n;
    int rc = KUBE_OK;

    pthread_mutex_lock(&m->mu);
    n = m->n_list;
    kids = n ? malloc(n * sizeof(*kids)) : NULL;
    if (kids)
        memcpy(kids, m->list, n * sizeof(*kids));
    pthread_mutex_unlock(&m->mu);
    if (n == 0)
        return KUBE_OK;
    if (!kids)
        return KUBE_ENOMEM;
    qsort(kids, n, sizeof(*kids), cmp_child);
    rc = kube_buf_printf(b, "# HELP %s %s", m->name, stability_prefix(m->stability));
    if (rc == KUBE_OK)
        rc = put_escaped(b, m->help, 0);
    if (rc == KUBE_OK)
        rc = kube_buf_printf(b, "\n# TYPE %s %s\n", m->name, type_name(m->type));
    for (size_t i = 0; rc == KUBE_OK && i < n; i++) {
        if (m->type == SCHED_METRIC_HISTOGRAM)
            rc = write_histogram(b, m, kids[i]);
        else
            rc = put_sample(b, m, "", kids[i], NULL, u2d(atomic_load(&kids[i]->bits)));
    }
    free(kids);
    return rc;
}

int sched_metrics_write(sched_metrics *r, kube_buf *out)
{
    sched_metric **fams;
    size_t n;
    int rc = KUBE_OK;

    pthread_mutex_lock(&r->mu);
    n = r->n;
    fams = n ? malloc(n * sizeof(*fams)) : NULL;
    if (fams)
        memcpy(fams, r->fams, n * sizeof(*fams));
    pthread_mutex_unlock(&r->mu);
    if (n && !fams)
        return KUBE_ENOMEM;
    if (n)
        qsort(fams, n, sizeof(*fams), cmp_family);
    for (size_t i = 0; rc == KUBE_OK && i < n; i++)
        rc = write_family(out, fams[i]);
    free(fams);
    return rc;
}

/* ------------------------------------------------------------------ */
/* kube-scheduler's metric set                                         */
/* ------------------------------------------------------------------ */

static const char *const L_RESULT_PROFILE[] = {"result", "profile"};
static const char *const L_QUEUE[] = {"queue"};
static const char *const L_QUEUE_EVENT[] = {"queue", "event"};
static const char *const L_ATTEMPTS[] = {"attempts"};
static const char *const L_POINT[] = {"extension_point", "status", "profile"};
static const char *const L_PLUGIN[] = {"plugin", "extension_point", "status"};
static const char *const L_RESULT[] = {"result"};
static const char *const L_PLUGIN_PROFILE[] = {"plugin", "profile"};
static const char *const L_TYPE[] = {"type"};
static const char *const L_OPERATION[] = {"operation"};

typedef struct core_def {
    size_t offset;                 /* of the sched_metric * in sched_core_metrics */
    const char *name, *help;
    sched_metric_type type;
    sched_stability stability;
    const char *const *labels;
    size_t n_labels;
    double start, factor;          /* exponential buckets */
    size_t n_buckets;
} core_def;

#define CORE(field) offsetof(sched_core_metrics, field)

static const core_def core_defs[] = {
    {CORE(schedule_attempts), "scheduler_schedule_attempts_total",
     "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could "
     "not be scheduled, while 'error' means an internal scheduler problem.",
     SCHED_METRIC_COUNTER, SCHED_STABILITY_STABLE, L_RESULT_PROFILE, 2, 0, 0, 0},
    {CORE(scheduling_attempt_duration), "scheduler_scheduling_attempt_duration_seconds",
     "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
     SCHED_METRIC_HISTOGRAM, SCHED_STABILITY_STABLE, L_RESULT_PROFILE, 2, 0.001, 2, 15},
    {CORE(scheduling_algorithm_duration), "scheduler_scheduling_algorithm_duration_seconds",
     "Scheduling algorithm latency in seconds", SCHED_METRIC_HISTOGRAM, SCHED_STABILITY_ALPHA,
     NULL, 0, 0.001, 2, 15},
    {CORE(pending_pods), "scheduler_pending_pods",
     "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
     "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
     "unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the "
     "number of unschedulable pods that the scheduler never attempted to schedule because "
     "they are gated.",
     SCHED_METRIC_GAUGE, SCHED_STABILITY_STABLE, L_QUEUE, 1, 0, 0, 0},
    {CORE(queue_incoming_pods), "scheduler_queue_incoming_pods_total",
     "Number of pods added to scheduling queues by event and queue type.", SCHED_METRIC_COUNTER,
     SCHED_STABILITY_STABLE, L_QUEUE_EVENT, 2, 0, 0, 0},
    {CORE(pod_scheduling_attempts), "scheduler_pod_scheduling_attempts",
     "Number of attempts to successfully schedule a pod.", SCHED_METRIC_HISTOGRAM,
     SCHED_STABILITY_STABLE, NULL, 0, 1, 2, 5},
    {CORE(pod_scheduling_sli_duration), "scheduler_pod_scheduling_sli_duration_seconds",
     "E2e latency for a pod being scheduled, from the time the pod enters the scheduling "
     "queue an d might involve multiple scheduling attempts.",
     SCHED_METRIC_HISTOGRAM, SCHED_STABILITY_BETA, L_ATTEMPTS, 1, 0.01, 2, 20},
    {CORE(framework_extension_point_duration), "scheduler_framework_extension_point_duration_seconds",
     "Latency for running all plugins of a specific extension point.", SCHED_METRIC_HISTOGRAM,
     SCHED_STABILITY_STABLE, L_POINT, 3, 0.0001, 2, 12},
    {CORE(plugin_execution_duration), "scheduler_plugin_execution_duration_seconds",
     "Duration for running a plugin at a specific extension point.", SCHED_METRIC_HISTOGRAM,
     SCHED_STABILITY_ALPHA, L_PLUGIN, 3, 0.00001, 1.5, 20},
    {CORE(permit_wait_duration), "scheduler_permit_wait_duration_seconds",
     "Duration of waiting on permit.", SCHED_METRIC_HISTOGRAM, SCHED_STABILITY_ALPHA, L_RESULT, 1,
     0.001, 2, 15},
    {CORE(unschedulable_pods), "scheduler_unschedulable_pods",
     "The number of unschedulable pods broken down by plugin name. A pod will increment the "
     "gauge for all plugins that caused it to not schedule and so this metric have meaning "
     "only when broken down by plugin.",
     SCHED_METRIC_GAUGE, SCHED_STABILITY_ALPHA, L_PLUGIN_PROFILE, 2, 0, 0, 0},
    {CORE(cache_size), "scheduler_scheduler_cache_size",
     "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
     SCHED_METRIC_GAUGE, SCHED_STABILITY_ALPHA, L_TYPE, 1, 0, 0, 0},
    {CORE(goroutines), "scheduler_goroutines",
     "Number of running goroutines split by the work they do such as binding.",
     SCHED_METRIC_GAUGE, SCHED_STABILITY_ALPHA, L_OPERATION, 1, 0, 0, 0},
};

static int register_def(sched_metrics *r, const core_def *d, sched_metric **out)
{
    double buckets[SCHED_METRIC_MAX_BUCKETS];
    sched_metric_opts o = {d->name, d->help, d->type, d->stability, d->labels, d->n_labels,
                           NULL, 0};

    if (d->type == SCHED_METRIC_HISTOGRAM) {
        sched_metrics_exp_buckets(d->start, d->factor, d->n_buckets, buckets);
        o.buckets = buckets;
        o.n_buckets = d->n_buckets;
    }
    return sched_metrics_register(r, &o, out);
}

int sched_core_metrics_register(sched_metrics *r, sched_core_metrics *m)
{
    static const char *const queues[SCHED_PENDING_COUNT] = {"active", "backoff",
                                                           "unschedulable", "gated"};
    int rc = KUBE_OK;

    memset(m, 0, sizeof(*m));
    for (size_t i = 0; rc == KUBE_OK && i < sizeof(core_defs) / sizeof(core_defs[0]); i++)
        rc = register_def(r, &core_defs[i],
                          (sched_metric **)((char *)m + core_defs[i].offset));
    for (int i = 0; rc == KUBE_OK && i < SCHED_PENDING_COUNT; i++) {
        m->pending[i] = sched_metric_with(m->pending_pods, &queues[i]);
        if (!m->pending[i])
            rc = KUBE_ENOMEM;
    }
    return rc;
}

static void hook_point(void *ud, const char *point, const char *status, const char *profile,
                       double seconds)
{
    sched_core_metrics *m = ud;
    const char *v[3] = {point, status, profile ? profile : ""};

    sched_metric_observe(m->framework_extension_point_duration, v, seconds);
}

/* hook_plugin's per-thread cache: the framework passes static names, so the
 * child for (family id, plugin, point, status) is found by the four words
 * alone, without metric_with()'s general checks and loops (sampled cycles
 * record one duration per plugin per node). A miss or collision falls back
 * to sched_metric_with_static(). pend: the slot's entry in the thread's
 * deferred observations (below), NULL when it has none. */
#define PLUGIN_SLOTS 128

struct pending_obs;

typedef struct plugin_slot {
    uint64_t id;
    const char *v[3];
    sched_metric_child *child;
    struct pending_obs *pend;
} plugin_slot;

static __thread plugin_slot plugin_cache[PLUGIN_SLOTS];

/* The cache slot holding the child of v, filled on a miss; NULL when m is
 * NULL or memory runs out. */
static plugin_slot *plugin_slot_for(sched_metric *m, const char *const v[3])
{
    uintptr_t h = ((uintptr_t)v[0] * 31u + (uintptr_t)v[1]) * 31u + (uintptr_t)v[2];
    plugin_slot *e;
    sched_metric_child *c;

    if (!m)
        return NULL;
    e = &plugin_cache[(h >> 3) % PLUGIN_SLOTS];
    if (e->child && e->id == m->id && e->v[0] == v[0] && e->v[1] == v[1] && e->v[2] == v[2])
        return e;
    c = sched_metric_with_static(m, v);
    if (!c)
        return NULL;
    *e = (plugin_slot){m->id, {v[0], v[1], v[2]}, c, NULL};
    return e;
}

static void hook_plugin(void *ud, const char *plugin, const char *point, const char *status,
                        double seconds)
{
    sched_core_metrics *m = ud;
    const char *v[3] = {plugin, point, status};
    plugin_slot *e = plugin_slot_for(m->plugin_execution_duration, v);

    /* the framework passes static names here (framework.h) */
    if (e)
        sched_metric_child_observe(e->child, seconds);
}

/* hook_plugin_defer's per-thread buffer: a child's observations counted
 * without atomics (bucket counts, sum, count) until hook_plugin_flush adds
 * them to the child. An entry is reached through the cache slot pointing at
 * it; a slot taken over by another key leaves its entry to the flush (the
 * key then gets a second entry). The framework flushes before an extension
 * point returns, so no entry outlives its registry. */
#define PENDING_SLOTS 32
#define PENDING_MAX_COUNT UINT32_MAX

typedef struct pending_obs {
    sched_metric_child *child;
    plugin_slot *slot;
    uint64_t count;
    double sum;
    uint32_t buckets[SCHED_METRIC_MAX_BUCKETS]; /* per bucket, +Inf not kept */
} pending_obs;

static __thread pending_obs pending[PENDING_SLOTS];
static __thread size_t n_pending;

/* Adds entry p to its child and empties it. */
static void pending_merge(pending_obs *p)
{
    sched_metric_child *c = p->child;

    for (size_t b = 0; b < c->family->n_buckets; b++) {
        if (p->buckets[b])
            atomic_fetch_add_explicit(&c->buckets[b], p->buckets[b], memory_order_relaxed);
        p->buckets[b] = 0;
    }
    atomic_add_double(&c->sum_bits, p->sum);
    atomic_fetch_add_explicit(&c->count, p->count, memory_order_relaxed);
    p->slot->pend = NULL;
    p->count = 0;
    p->sum = 0;
}

static void hook_plugin_flush(void *ud)
{
    (void)ud;
    for (size_t i = 0; i < n_pending; i++)
        pending_merge(&pending[i]);
    n_pending = 0;
}

/* The thread's pending entry for slot e, taken (after a flush when the
 * buffer is full) when it has none. */
static pending_obs *pending_for(plugin_slot *e)
{
    if (e->pend)
        return e->pend;
    if (n_pending == PENDING_SLOTS)
        hook_plugin_flush(NULL);
    e->pend = &pending[n_pending++];
    e->pend->child = e->child;
    e->pend->slot = e;
    return e->pend;
}

static void hook_plugin_defer(void *ud, const char *plugin, const char *point,
                              const char *status, double seconds)
{
    sched_core_metrics *m = ud;
    const char *v[3] = {plugin, point, status};
    plugin_slot *e = plugin_slot_for(m->plugin_execution_duration, v);
    const double *buckets;
    pending_obs *p;
    size_t b, n;

    if (!e)
        return;
    p = pending_for(e);
    /* a plugin call mostly lands in the first buckets: scan from there */
    buckets = e->child->family->buckets;
    n = e->child->family->n_buckets;
    for (b = 0; b < n && seconds > buckets[b]; b++)
        ;
    if (b < n)
        p->buckets[b]++;
    p->sum += seconds;
    if (++p->count == PENDING_MAX_COUNT)
        hook_plugin_flush(ud);
}

static void hook_permit(void *ud, const char *result, double seconds)
{
    sched_core_metrics *m = ud;

    sched_metric_observe(m->permit_wait_duration, &result, seconds);
}

fw_metrics_hooks sched_core_metrics_hooks(sched_core_metrics *m)
{
    fw_metrics_hooks h = {hook_point, hook_plugin, hook_permit, m, hook_plugin_defer,
                          hook_plugin_flush};
    return h;
}

void sched_core_metrics_attempt(sched_core_metrics *m, const char *result, const char *profile,
                                double seconds)
{
    const char *v[2] = {result, profile};

    if (!m)
        return;
    sched_metric_add(m->schedule_attempts, v, 1);
    sched_metric_observe(m->scheduling_attempt_duration, v, seconds);
}
