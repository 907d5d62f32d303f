/*
 * scheduler/framework/status.c - framework.Status, Diagnosis and the
 * FitError message.
 */
#include "framework/status.h"
#include "framework/status_testing.h"
#include "framework/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/array.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"

static char oom_reason[] = "out of memory";
static char *oom_reasons[] = {oom_reason};
static fw_status oom_status = {FW_ERROR, oom_reasons, 1, NULL, KUBE_ENOMEM};

static const char *const code_names[] = {
    "Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Wait", "Skip",
};

const char *fw_code_string(fw_code code)
{
    if ((unsigned)code < sizeof(code_names) / sizeof(code_names[0]))
        return code_names[code];
    return "Unknown";
}

static fw_status *status_alloc(fw_code code)
{
    fw_status *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    st->code = code;
    st->err = code == FW_ERROR ? KUBE_EINVAL : KUBE_OK;
    return st;
}

fw_status *fw_status_new(fw_code code, const char *reason)
{
    if (code == FW_SUCCESS && !reason)
        return NULL;
    fw_status *st = status_alloc(code);
    if (!st)
        return &oom_status;
    if (reason && fw_status_add_reason(st, reason) != KUBE_OK) {
        fw_status_free(st);
        return &oom_status;
    }
    return st;
}

__attribute__((format(printf, 3, 0))) static fw_status *status_vnew(fw_code code, int err,
                                                                    const char *fmt, va_list ap)
{
    char *tmp;
    int n;
    va_list cp;

    va_copy(cp, ap);
    n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0 || !(tmp = malloc((size_t)n + 1)))
        return &oom_status;
    vsnprintf(tmp, (size_t)n + 1, fmt, ap);
    fw_status *st = status_alloc(code);
    if (!st) {
        free(tmp);
        return &oom_status;
    }
    if (err)
        st->err = err;
    st->reasons = malloc(sizeof(char *));
    if (!st->reasons) {
        free(tmp);
        free(st);
        return &oom_status;
    }
    st->reasons[0] = tmp;
    st->n_reasons = 1;
    return st;
}

fw_status *fw_status_newf(fw_code code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fw_status *st = status_vnew(code, 0, fmt, ap);
    va_end(ap);
    return st;
}

fw_status *fw_status_error(int err, const char *fmt, ...)
{
    if (err == KUBE_OK)
        err = KUBE_EINVAL;
    if (!fmt) {
        fw_status *st = fw_status_new(FW_ERROR, kube_strerror(err));
        if (st != &oom_status)
            st->err = err;
        return st;
    }
    va_list ap;
    va_start(ap, fmt);
    fw_status *st = status_vnew(FW_ERROR, err, fmt, ap);
    va_end(ap);
    return st;
}

int fw_status_add_reason(fw_status *st, const char *reason)
{
    if (st == &oom_status)
        return KUBE_ENOMEM;
    char *copy = kube_strdup(reason ? reason : "");
    if (!copy)
        return KUBE_ENOMEM;
    char **r = realloc(st->reasons, (st->n_reasons + 1) * sizeof(char *));
    if (!r) {
        free(copy);
        return KUBE_ENOMEM;
    }
    r[st->n_reasons++] = copy;
    st->reasons = r;
    return KUBE_OK;
}

fw_status *fw_status_clone(const fw_status *st)
{
    if (!st)
        return NULL;
    if (st == &oom_status)
        return &oom_status;
    fw_status *c = status_alloc(st->code);
    if (!c)
        return &oom_status;
    c->plugin = st->plugin;
    c->err = st->err;
    for (size_t i = 0; i < st->n_reasons; i++) {
        if (fw_status_add_reason(c, st->reasons[i]) != KUBE_OK) {
            fw_status_free(c);
            return &oom_status;
        }
    }
    return c;
}

void fw__status_release(fw_status *st)
{
    if (st == &oom_status)
        return;
    for (size_t i = 0; i < st->n_reasons; i++)
        free(st->reasons[i]);
    free(st->reasons);
    free(st);
}

void fw_status_set_plugin(fw_status *st, const char *plugin)
{
    if (st && st != &oom_status)
        st->plugin = plugin;
}

static int status_join(const fw_status *st, kube_buf *b)
{
    if (!st)
        return KUBE_OK;
    for (size_t i = 0; i < st->n_reasons; i++) {
        if (i && kube_buf_puts(b, ", ") != KUBE_OK)
            return KUBE_ENOMEM;
        if (kube_buf_puts(b, st->reasons[i]) != KUBE_OK)
            return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

void fw_status_message(const fw_status *st, char *out, size_t n)
{
    if (!n)
        return;
    out[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; st && i < st->n_reasons && used + 1 < n; i++) {
        int w = snprintf(out + used, n - used, "%s%s", i ? ", " : "", st->reasons[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

char *fw_status_message_dup(const fw_status *st)
{
    kube_buf b = KUBE_BUF_INIT;
    if (status_join(st, &b) != KUBE_OK) {
        kube_buf_free(&b);
        return NULL;
    }
    return kube_buf_take(&b);
}

static int precedence(fw_code c)
{
    switch (c) {
    case FW_ERROR:
        return 3;
    case FW_UNSCHEDULABLE_AND_UNRESOLVABLE:
        return 2;
    case FW_UNSCHEDULABLE:
        return 1;
    case FW_SUCCESS:
        return -1;
    default:
        return 0;
    }
}

fw_status *fw_status_merge(fw_status *const *sts, size_t n)
{
    if (n == 0)
        return NULL;
    fw_status *m = status_alloc(FW_SUCCESS);
    if (!m)
        return &oom_status;
    for (size_t i = 0; i < n; i++) {
        const fw_status *s = sts[i];
        fw_code c = fw_status_code(s);
        if (c == FW_ERROR)
            m->err = s->err;
        if (precedence(c) > precedence(m->code)) {
            m->code = c;
            m->plugin = s->plugin;
        }
        for (size_t k = 0; s && k < s->n_reasons; k++)
            if (fw_status_add_reason(m, s->reasons[k]) != KUBE_OK) {
                fw_status_free(m);
                return &oom_status;
            }
    }
    return m;
}

/* ------------------------------------------------------------------ */
/* Diagnosis                                                           */
/* ------------------------------------------------------------------ */

int fw_diagnosis_add_node(fw_diagnosis *d, const char *node, fw_status *st)
{
    if (KUBE_ARRAY_RESERVE(d->nodes, d->cap_nodes, d->n_nodes + 1) != KUBE_OK) {
        fw_status_free(st);
        return KUBE_ENOMEM;
    }
    char *name = kube_strdup(node);
    if (!name) {
        fw_status_free(st);
        return KUBE_ENOMEM;
    }
    d->nodes[d->n_nodes].node = name;
    d->nodes[d->n_nodes].status = st;
    d->n_nodes++;
    return KUBE_OK;
}

static int set_insert(const char ***set, size_t *n, size_t *cap, const char *name)
{
    if (!name || !*name)
        return KUBE_OK;
    return kube_array_add_distinct(set, n, cap, name);
}

int fw_diagnosis_add_unschedulable_plugin(fw_diagnosis *d, const char *plugin)
{
    return set_insert(&d->unschedulable_plugins, &d->n_unschedulable_plugins,
                      &d->cap_unschedulable_plugins, plugin);
}

int fw__set_text(char **slot, const char *text)
{
    char *copy = NULL;
    if (text && !(copy = kube_strdup(text)))
        return KUBE_ENOMEM;
    free(*slot);
    *slot = copy;
    return KUBE_OK;
}

int fw_diagnosis_set_pre_filter_msg(fw_diagnosis *d, const char *msg)
{
    return fw__set_text(&d->pre_filter_msg, msg);
}

int fw_diagnosis_set_post_filter_msg(fw_diagnosis *d, const char *msg)
{
    return fw__set_text(&d->post_filter_msg, msg);
}

int fw_diagnosis_set_explanation(fw_diagnosis *d, const char *absent_reason, const char *note)
{
    int err = fw__set_text(&d->absent_reason, absent_reason);
    return err ? err : fw__set_text(&d->note, note);
}

const fw_status *fw_diagnosis_node_status(const fw_diagnosis *d, const char *node)
{
    for (size_t i = 0; i < d->n_nodes; i++)
        if (strcmp(d->nodes[i].node, node) == 0)
            return d->nodes[i].status;
    return NULL;
}

void fw_diagnosis_clear(fw_diagnosis *d)
{
    for (size_t i = 0; i < d->n_nodes; i++) {
        free(d->nodes[i].node);
        fw_status_free(d->nodes[i].status);
    }
    free(d->nodes);
    free(d->unschedulable_plugins);
    free(d->pending_plugins);
    free(d->pre_filter_msg);
    free(d->post_filter_msg);
    free(d->absent_reason);
    free(d->note);
    memset(d, 0, sizeof(*d));
}

/* ------------------------------------------------------------------ */
/* FitError                                                            */
/* ------------------------------------------------------------------ */

typedef struct reason_count {
    const char *reason;
    size_t count;
    char *text; /* "<count> <reason>" */
} reason_count;

static int cmp_text(const void *a, const void *b)
{
    return strcmp(((const reason_count *)a)->text, ((const reason_count *)b)->text);
}

/* Adds count to reason's entry of rc[0..*n) (a new entry when absent). */
static int add_reason(reason_count **rc, size_t *n, size_t *cap, const char *reason, size_t count)
{
    size_t k;
    for (k = 0; k < *n && strcmp((*rc)[k].reason, reason) != 0; k++)
        ;
    if (k < *n) {
        (*rc)[k].count += count;
        return KUBE_OK;
    }
    if (KUBE_ARRAY_RESERVE(*rc, *cap, *n + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    (*rc)[*n] = (reason_count){reason, count, NULL};
    (*n)++;
    return KUBE_OK;
}

/* Counts every reason of every node status (a reason appearing twice in
 * one status counts twice, as the Go loop does), and d->absent_reason once
 * per node of the num_all_nodes that d->nodes lacks. */
static int count_reasons(const fw_diagnosis *d, int num_all_nodes, reason_count **out,
                         size_t *n_out)
{
    reason_count *rc = NULL;
    size_t n = 0, cap = 0;
    int err = KUBE_OK;
    for (size_t i = 0; i < d->n_nodes && !err; i++) {
        const fw_status *st = d->nodes[i].status;
        for (size_t j = 0; st && j < st->n_reasons && !err; j++)
            err = add_reason(&rc, &n, &cap, st->reasons[j], 1);
    }
    if (!err && d->absent_reason && num_all_nodes > 0 && (size_t)num_all_nodes > d->n_nodes)
        err = add_reason(&rc, &n, &cap, d->absent_reason, (size_t)num_all_nodes - d->n_nodes);
    if (err) {
        free(rc);
        return err;
    }
    *out = rc;
    *n_out = n;
    return KUBE_OK;
}

static int append_histogram(const fw_diagnosis *d, int num_all_nodes, kube_buf *b)
{
    reason_count *rc;
    size_t n;
    int err = count_reasons(d, num_all_nodes, &rc, &n);
    if (err)
        return err;
    for (size_t i = 0; i < n && !err; i++) {
        kube_buf t = KUBE_BUF_INIT;
        err = kube_buf_printf(&t, "%zu %s", rc[i].count, rc[i].reason);
        rc[i].text = err ? NULL : kube_buf_take(&t);
        if (!err && !rc[i].text)
            err = KUBE_ENOMEM;
        kube_buf_free(&t);
    }
    if (!err && n) {
        qsort(rc, n, sizeof(*rc), cmp_text);
        err = kube_buf_puts(b, " ");
        for (size_t i = 0; i < n && !err; i++)
            err = kube_buf_printf(b, "%s%s", i ? ", " : "", rc[i].text);
        if (!err)
            err = kube_buf_puts(b, ".");
    }
    for (size_t i = 0; i < n; i++)
        free(rc[i].text);
    free(rc);
    return err;
}

char *fw_fit_error_message(int num_all_nodes, const fw_diagnosis *d)
{
    kube_buf b = KUBE_BUF_INIT;
    int err = kube_buf_printf(&b, FW_NO_NODE_AVAILABLE_FMT ":", num_all_nodes);
    const char *pre = d ? d->pre_filter_msg : NULL;
    if (!err && pre && *pre)
        err = kube_buf_printf(&b, " %s.", pre);
    else if (!err && d)
        err = append_histogram(d, num_all_nodes, &b);
    if (!err && d && d->note && *d->note)
        err = kube_buf_printf(&b, " %s.", d->note);
    if (!err && d && d->post_filter_msg && *d->post_filter_msg)
        err = kube_buf_printf(&b, " %s.", d->post_filter_msg); /* v1.28: " %v." again */
    if (err) {
        kube_buf_free(&b);
        return NULL;
    }
    return kube_buf_take(&b);
}
