/*
 * kube/util/metrics_text.c - the registry's text exposition (metrics.h):
 * Prometheus' text format 0.0.4, families sorted by name, children by
 * their label values, histograms as cumulative buckets, with
 * kube-scheduler's stability prefixes in the help text.
 */
#include "kube/util/metrics.h"
#include "kube/util/metrics_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/buf.h"
#include "kube/util/errors.h"

/* ------------------------------------------------------------------ */
/* Exposition                                                          */
/* ------------------------------------------------------------------ */

void kube_metrics_exp_buckets(double start, double factor, size_t n, double *out)
{
    for (size_t i = 0; i < n; i++) {
        out[i] = start;
        start *= factor;
    }
}

void kube_metrics_format_float(double v, char *out, size_t n)
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

static const char *stability_prefix(kube_stability s)
{
    switch (s) {
    case KUBE_STABILITY_STABLE:
        return "[STABLE] ";
    case KUBE_STABILITY_BETA:
        return "[BETA] ";
    default:
        return "[ALPHA] ";
    }
}

static const char *type_name(kube_metric_type t)
{
    return t == KUBE_METRIC_COUNTER ? "counter" : t == KUBE_METRIC_GAUGE ? "gauge" : "histogram";
}

/* {a="x",b="y"[,le="..."]} or "" when there is nothing to write. */
static int put_labels(kube_buf *b, const kube_metric *m, const kube_metric_child *c, const char *le)
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

static int put_sample(kube_buf *b, const kube_metric *m, const char *suffix,
                      const kube_metric_child *c, const char *le, double v)
{
    char num[40];
    int rc = kube_buf_printf(b, "%s%s", m->name, suffix);

    if (rc == KUBE_OK)
        rc = put_labels(b, m, c, le);
    kube_metrics_format_float(v, num, sizeof(num));
    if (rc == KUBE_OK)
        rc = kube_buf_printf(b, " %s\n", num);
    return rc;
}

static int write_histogram(kube_buf *b, const kube_metric *m, const kube_metric_child *c)
{
    uint64_t cum = 0;
    char le[40];
    int rc = KUBE_OK;

    for (size_t i = 0; rc == KUBE_OK && i < m->n_buckets; i++) {
        cum += atomic_load(&c->buckets[i]);
        kube_metrics_format_float(m->buckets[i], le, sizeof(le));
        rc = put_sample(b, m, "_bucket", c, le, (double)cum);
    }
    if (rc == KUBE_OK)
        rc = put_sample(b, m, "_bucket", c, "+Inf", (double)atomic_load(&c->count));
    if (rc == KUBE_OK)
        rc = put_sample(b, m, "_sum", c, NULL, kube_metrics_u2d(atomic_load(&c->sum_bits)));
    if (rc == KUBE_OK)
        rc = put_sample(b, m, "_count", c, NULL, (double)atomic_load(&c->count));
    return rc;
}

static int cmp_child(const void *a, const void *b)
{
    const kube_metric_child *x = *(kube_metric_child *const *)a;
    const kube_metric_child *y = *(kube_metric_child *const *)b;

    for (size_t i = 0; i < x->family->n_labels; i++) {
        int c = strcmp(x->values[i], y->values[i]);
        if (c)
            return c;
    }
    return 0;
}

static int cmp_family(const void *a, const void *b)
{
    return strcmp((*(kube_metric *const *)a)->name, (*(kube_metric *const *)b)->name);
}

static int write_family(kube_buf *b, kube_metric *m)
{
    kube_metric_child **kids;
    size_t n;
    int rc = KUBE_OK;

    pthread_mutex_lock(&m->mu);
    kids = m->n_list ? malloc(m->n_list * sizeof(*kids)) : NULL;
    n = 0;
    for (size_t i = 0; kids && i < m->n_list; i++)
        if (!m->list[i]->hidden)
            kids[n++] = m->list[i];
    rc = m->n_list && !kids ? KUBE_ENOMEM : KUBE_OK;
    pthread_mutex_unlock(&m->mu);
    if (n == 0) {
        free(kids);
        return rc;
    }
    qsort(kids, n, sizeof(*kids), cmp_child);
    rc = kube_buf_printf(b, "# HELP %s %s", m->name, stability_prefix(m->stability));
    if (rc == KUBE_OK)
        rc = put_escaped(b, m->help, 0);
    if (rc == KUBE_OK)
        rc = kube_buf_printf(b, "\n# TYPE %s %s\n", m->name, type_name(m->type));
    for (size_t i = 0; rc == KUBE_OK && i < n; i++) {
        if (m->type == KUBE_METRIC_HISTOGRAM)
            rc = write_histogram(b, m, kids[i]);
        else
            rc = put_sample(b, m, "", kids[i], NULL, kube_metrics_u2d(atomic_load(&kids[i]->bits)));
    }
    free(kids);
    return rc;
}

int kube_metrics_write(kube_metrics *r, kube_buf *out)
{
    kube_metric **fams;
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
