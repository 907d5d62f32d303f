/*
 * kube/serving/healthz.c - the health check registry and the answers of
 * /healthz, /livez, /readyz and their checks. The contract is in
 * healthz.h.
 */
#include "kube/serving/healthz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/serving/query.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"

static const struct {
    const char *name;
    unsigned root;
} roots[] = {{"healthz", KUBE_HEALTHZ}, {"livez", KUBE_LIVEZ}, {"readyz", KUBE_READYZ}};

static const kube_healthz_check ping = {"ping", KUBE_HEALTHZ_ALL, kube_healthz_ping, NULL};

int kube_healthz_add(kube_healthz *h, unsigned roots_mask, const char *name, kube_healthz_fn fn,
                     void *ud)
{
    if (h->n >= KUBE_HEALTHZ_MAX_CHECKS || strlen(name) >= KUBE_HEALTHZ_NAME_MAX)
        return KUBE_ERANGE;
    h->checks[h->n++] = (kube_healthz_check){name, roots_mask, fn, ud};
    return KUBE_OK;
}

int kube_healthz_ping(void *ud, const kube_health_state *hs, char *why, size_t n)
{
    (void)ud, (void)hs, (void)why, (void)n;
    return KUBE_OK;
}

int kube_healthz_shutdown(void *ud, const kube_health_state *hs, char *why, size_t n)
{
    (void)ud;
    if (!hs->shutting_down)
        return KUBE_OK;
    snprintf(why, n, "process is shutting down");
    return KUBE_ECANCELED;
}

/* ---- the request ---- */

/* ?verbose and ?exclude=NAME (repeatable). */
static void read_query(kube_healthz_request *r, const char *q)
{
    kube_query_pair p;

    while (kube_query_next(&q, &p)) {
        if (p.key_rc != KUBE_OK)
            continue;
        if (!strcmp(p.key, "verbose"))
            r->verbose = 1;
        else if (!strcmp(p.key, "exclude") && p.value_rc == KUBE_OK && p.value_len &&
                 p.value_len < KUBE_HEALTHZ_NAME_MAX && r->n_excludes < KUBE_HEALTHZ_MAX_EXCLUDES)
            memcpy(r->excludes[r->n_excludes++], p.value, p.value_len + 1);
    }
}

int kube_healthz_parse(const char *target, kube_healthz_request *r)
{
    size_t plen = strcspn(target, "?");

    memset(r, 0, sizeof(*r));
    if (target[0] != '/')
        return 0;
    for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
        size_t n = strlen(roots[i].name), rlen;
        const char *rest;

        if (plen < n + 1 || strncmp(target + 1, roots[i].name, n) != 0)
            continue;
        rest = target + 1 + n;
        rlen = plen - 1 - n;
        if (rlen == 0) {
            r->root = roots[i].root;
        } else if (rest[0] == '/' && rlen > 1 && rlen - 1 < KUBE_HEALTHZ_NAME_MAX) {
            r->root = roots[i].root;
            memcpy(r->check, rest + 1, rlen - 1);
        } else {
            continue;
        }
        if (target[plen] == '?')
            read_query(r, target + plen + 1);
        return 1;
    }
    return 0;
}

/* ---- the answers ---- */

static const char *root_name(unsigned root)
{
    for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
        if (roots[i].root == root)
            return roots[i].name;
    return "";
}

/* The checks of root, in order; ping when there are none. */
static size_t checks_of(const kube_healthz *h, unsigned root, const kube_healthz_check **out)
{
    size_t n = 0;

    for (size_t i = 0; i < h->n; i++)
        if (h->checks[i].roots & root)
            out[n++] = &h->checks[i];
    if (!n)
        out[n++] = &ping;
    return n;
}

/* The index of name among r's excludes, or -1. */
static int exclude_index(const kube_healthz_request *r, const char *name)
{
    for (int i = 0; i < r->n_excludes; i++)
        if (!strcmp(r->excludes[i], name))
            return i;
    return -1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "warn: ..." for the excluded names no check has, sorted, quoted. */
static int warn_unmatched(const kube_healthz_request *r, const int *matched, kube_buf *b)
{
    const char *names[KUBE_HEALTHZ_MAX_EXCLUDES];
    size_t n = 0;
    int rc = KUBE_OK;

    for (int i = 0; i < r->n_excludes; i++)
        if (!matched[i] && exclude_index(r, r->excludes[i]) == i)
            names[n++] = r->excludes[i];
    if (!n)
        return KUBE_OK;
    qsort(names, n, sizeof(names[0]), by_name);
    rc = kube_buf_puts(b, "warn: some health checks cannot be excluded: no matches for ");
    for (size_t i = 0; i < n && rc == KUBE_OK; i++)
        rc = kube_buf_printf(b, "%s\"%s\"", i ? ", " : "", names[i]);
    return rc == KUBE_OK ? kube_buf_puts(b, "\n") : rc;
}

/* One line per check of r's root into b; *failed set when one failed. */
static int run_checks(const kube_healthz *h, const kube_healthz_request *r,
                      const kube_health_state *hs, kube_buf *b, int *failed)
{
    const kube_healthz_check *list[KUBE_HEALTHZ_MAX_CHECKS];
    int matched[KUBE_HEALTHZ_MAX_EXCLUDES] = {0};
    size_t n = checks_of(h, r->root, list);
    char why[256];
    int rc = KUBE_OK;

    for (size_t i = 0; i < n && rc == KUBE_OK; i++) {
        int x = exclude_index(r, list[i]->name);
        why[0] = '\0';
        if (x >= 0) {
            matched[x] = 1;
            rc = kube_buf_printf(b, "[+]%s excluded: ok\n", list[i]->name);
        } else if (list[i]->fn(list[i]->ud, hs, why, sizeof(why)) != KUBE_OK) {
            *failed = 1;
            KLOG_V(1, "%s check failed: %s: %s", root_name(r->root), list[i]->name, why);
            rc = kube_buf_printf(b, "[-]%s failed: reason withheld\n", list[i]->name);
        } else {
            rc = kube_buf_printf(b, "[+]%s ok\n", list[i]->name);
        }
    }
    return rc == KUBE_OK ? warn_unmatched(r, matched, b) : rc;
}

/* /ROOT (handleRootHealth). */
static void serve_root(const kube_healthz *h, const kube_healthz_request *r,
                       const kube_health_state *hs, kube_exchange *x)
{
    kube_buf *b = kube_exchange_answer_body(x);
    int failed = 0, rc = run_checks(h, r, hs, b, &failed);

    if (rc == KUBE_OK && failed) {
        rc = kube_buf_printf(b, "%s check failed\n", root_name(r->root));
    } else if (rc == KUBE_OK && !r->verbose) {
        kube_buf_reset(b);
        rc = kube_buf_puts(b, "ok");
    } else if (rc == KUBE_OK) {
        rc = kube_buf_printf(b, "%s check passed\n", root_name(r->root));
    }
    kube_exchange_answer_filled(x, rc, failed ? 500 : 200, KUBE_CT_TEXT);
}

/* /ROOT/NAME (adaptCheckToHandler). */
static void serve_check(const kube_healthz *h, const kube_healthz_request *r,
                        const kube_health_state *hs, kube_exchange *x)
{
    const kube_healthz_check *list[KUBE_HEALTHZ_MAX_CHECKS];
    size_t n = checks_of(h, r->root, list);
    char why[256] = "", text[320];

    for (size_t i = 0; i < n; i++) {
        if (strcmp(list[i]->name, r->check) != 0)
            continue;
        if (list[i]->fn(list[i]->ud, hs, why, sizeof(why)) == KUBE_OK) {
            kube_exchange_answer(x, 200, KUBE_CT_TEXT, "ok", 2);
        } else {
            snprintf(text, sizeof(text), "internal server error: %s\n", why);
            kube_exchange_answer(x, 500, KUBE_CT_TEXT, text, strlen(text));
        }
        return;
    }
    kube_exchange_answer(x, 404, KUBE_CT_TEXT, "404 page not found\n", 19);
}

void kube_healthz_serve(const kube_healthz *h, const kube_healthz_request *r,
                        const kube_health_state *hs, kube_exchange *x)
{
    if (r->check[0])
        serve_check(h, r, hs, x);
    else
        serve_root(h, r, hs, x);
}
