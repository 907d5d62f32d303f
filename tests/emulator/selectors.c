/*
 * tests/emulator/selectors.c - label selectors (=, ==, !=, in, notin,
 * exists, !key) and field selectors (=, ==, != joined by commas, with
 * backslash escapes), parsed and validated as apimachinery does.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

void emu_selector_free(emu_selector *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->reqs[i].key);
        for (size_t j = 0; j < s->reqs[i].n_values; j++)
            free(s->reqs[i].values[j]);
        free(s->reqs[i].values);
    }
    free(s->reqs);
    memset(s, 0, sizeof(*s));
}

int emu_selector_empty(const emu_selector *s)
{
    return !s || s->n == 0;
}

static emu_req *add_req(emu_selector *s, const char *key, size_t klen, int op)
{
    emu_req *r = realloc(s->reqs, (s->n + 1) * sizeof(*r));

    if (!r)
        return NULL;
    s->reqs = r;
    r = &s->reqs[s->n];
    memset(r, 0, sizeof(*r));
    r->key = malloc(klen + 1);
    if (!r->key)
        return NULL;
    memcpy(r->key, key, klen);
    r->key[klen] = '\0';
    r->op = op;
    s->n++;
    return r;
}

static int add_value(emu_req *r, const char *v, size_t n)
{
    char **vals = realloc(r->values, (r->n_values + 1) * sizeof(*vals));

    if (!vals)
        return KUBE_ENOMEM;
    r->values = vals;
    vals[r->n_values] = malloc(n + 1);
    if (!vals[r->n_values])
        return KUBE_ENOMEM;
    memcpy(vals[r->n_values], v, n);
    vals[r->n_values][n] = '\0';
    r->n_values++;
    return KUBE_OK;
}

/* ------------------------------------------------------------------ */
/* Label selectors                                                     */
/* ------------------------------------------------------------------ */

static int name_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

/* A label value: empty, or up to 63 chars [A-Za-z0-9-_.] starting and
 * ending alphanumeric. */
static int valid_label_value(const char *v, size_t n)
{
    if (n == 0)
        return 1;
    if (n > 63 || !isalnum((unsigned char)v[0]) || !isalnum((unsigned char)v[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!name_char(v[i]))
            return 0;
    return 1;
}

/* A label key: [prefix/]name, name a label value of 1..63 chars, prefix a
 * DNS subdomain. */
static int valid_label_key(const char *k, size_t n)
{
    const char *slash = memchr(k, '/', n);
    const char *name = slash ? slash + 1 : k;
    size_t nlen = slash ? n - (size_t)(slash - k) - 1 : n;

    if (nlen == 0 || !valid_label_value(name, nlen))
        return 0;
    if (slash) {
        size_t plen = (size_t)(slash - k);
        if (plen == 0 || plen > 253)
            return 0;
        for (size_t i = 0; i < plen; i++)
            if (!(islower((unsigned char)k[i]) || isdigit((unsigned char)k[i]) || k[i] == '-' ||
                  k[i] == '.'))
                return 0;
    }
    return 1;
}

typedef struct lexer {
    const char *p;
} lexer;

static void lex_ws(lexer *lx)
{
    while (*lx->p == ' ' || *lx->p == '\t')
        lx->p++;
}

static size_t lex_ident(lexer *lx, const char **start)
{
    const char *s;

    lex_ws(lx);
    s = lx->p;
    while (*lx->p && !strchr(" \t,()=!<>", *lx->p))
        lx->p++;
    *start = s;
    return (size_t)(lx->p - s);
}

static int parse_set(lexer *lx, emu_req *r, char *err, size_t errn)
{
    lex_ws(lx);
    if (*lx->p != '(') {
        snprintf(err, errn, "unable to parse requirement: found '%s', expected: '('", lx->p);
        return KUBE_EBADREQUEST;
    }
    lx->p++;
    for (;;) {
        const char *v;
        size_t n = lex_ident(lx, &v);
        lex_ws(lx);
        if (n > 0 || *lx->p == ',' || *lx->p == ')') {
            if (!(n == 0 && *lx->p == ')' && r->n_values == 0)) {
                if (!valid_label_value(v, n)) {
                    snprintf(err, errn,
                             "unable to parse requirement: invalid label value: "
                             "\"%.*s\"",
                             (int)n, v);
                    return KUBE_EBADREQUEST;
                }
                if (add_value(r, v, n) != KUBE_OK)
                    return KUBE_ENOMEM;
            }
        }
        if (*lx->p == ',') {
            lx->p++;
            continue;
        }
        if (*lx->p == ')') {
            lx->p++;
            break;
        }
        snprintf(err, errn, "unable to parse requirement: found '%s', expected: ',' or ')'", lx->p);
        return KUBE_EBADREQUEST;
    }
    if (r->n_values == 0) {
        snprintf(err, errn, "for 'in', 'notin' operators, values set can't be empty");
        return KUBE_EBADREQUEST;
    }
    return KUBE_OK;
}

static int word_is(const char *s, size_t n, const char *w)
{
    return n == strlen(w) && memcmp(s, w, n) == 0;
}

static int parse_requirement(lexer *lx, emu_selector *out, char *err, size_t errn)
{
    const char *key, *word;
    size_t klen, wlen;
    int negate = 0;
    emu_req *r;

    lex_ws(lx);
    if (*lx->p == '!') {
        negate = 1;
        lx->p++;
    }
    klen = lex_ident(lx, &key);
    if (klen == 0 || !valid_label_key(key, klen)) {
        snprintf(err, errn, "unable to parse requirement: invalid label key \"%.*s\"", (int)klen,
                 key);
        return KUBE_EBADREQUEST;
    }
    lex_ws(lx);
    if (negate || *lx->p == ',' || *lx->p == '\0')
        return add_req(out, key, klen, negate ? SEL_NOTEXISTS : SEL_EXISTS) ? KUBE_OK : KUBE_ENOMEM;
    if (lx->p[0] == '=' || (lx->p[0] == '!' && lx->p[1] == '=')) {
        int op = lx->p[0] == '!' ? SEL_NEQ : SEL_EQ;
        const char *v;
        size_t vlen;
        lx->p += (lx->p[0] == '!' || lx->p[1] == '=') ? 2 : 1;
        vlen = lex_ident(lx, &v);
        if (!valid_label_value(v, vlen)) {
            snprintf(err, errn, "unable to parse requirement: invalid label value: \"%.*s\"",
                     (int)vlen, v);
            return KUBE_EBADREQUEST;
        }
        r = add_req(out, key, klen, op);
        return r && add_value(r, v, vlen) == KUBE_OK ? KUBE_OK : KUBE_ENOMEM;
    }
    wlen = lex_ident(lx, &word);
    if (word_is(word, wlen, "in") || word_is(word, wlen, "notin")) {
        r = add_req(out, key, klen, word_is(word, wlen, "in") ? SEL_IN : SEL_NOTIN);
        return r ? parse_set(lx, r, err, errn) : KUBE_ENOMEM;
    }
    snprintf(err, errn,
             "unable to parse requirement: found '%.*s', expected: in, notin, =, ==, "
             "!=, gt, lt",
             (int)(wlen ? wlen : strlen(lx->p)), wlen ? word : lx->p);
    return KUBE_EBADREQUEST;
}

int emu_label_selector_parse(const char *text, emu_selector *out, char *err, size_t errn)
{
    lexer lx = {text ? text : ""};
    int rc = KUBE_OK;

    memset(out, 0, sizeof(*out));
    lex_ws(&lx);
    if (!*lx.p)
        return KUBE_OK;
    for (;;) {
        rc = parse_requirement(&lx, out, err, errn);
        if (rc != KUBE_OK)
            break;
        lex_ws(&lx);
        if (*lx.p == '\0')
            break;
        if (*lx.p != ',') {
            snprintf(err, errn, "found '%s', expected: ',' or 'end of string'", lx.p);
            rc = KUBE_EBADREQUEST;
            break;
        }
        lx.p++;
    }
    if (rc != KUBE_OK)
        emu_selector_free(out);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Field selectors                                                     */
/* ------------------------------------------------------------------ */

/* Unescapes \, \= \\ ; returns a new string (caller frees) or NULL. */
static char *unescape(const char *s, size_t n, int *bad)
{
    char *o = malloc(n + 1);
    size_t k = 0;

    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\') {
            if (i + 1 >= n || !strchr(",=\\", s[i + 1])) {
                *bad = 1;
                break;
            }
            i++;
        }
        o[k++] = s[i];
    }
    o[k] = '\0';
    return o;
}

static int allowed_field(const char *f, const char *const *allowed)
{
    if (!strcmp(f, "metadata.name") || !strcmp(f, "metadata.namespace"))
        return 1;
    for (size_t i = 0; allowed && allowed[i]; i++)
        if (!strcmp(f, allowed[i]))
            return 1;
    return 0;
}

static int field_term(const char *t, size_t n, const char *const *allowed, emu_selector *out,
                      char *err, size_t errn)
{
    size_t i;
    int op = -1, bad = 0;
    size_t oplen = 0;
    char *value;
    emu_req *r;

    for (i = 0; i < n; i++) {
        if (t[i] == '\\') {
            i++;
            continue;
        }
        if (t[i] == '!' && i + 1 < n && t[i + 1] == '=') {
            op = SEL_NEQ;
            oplen = 2;
        } else if (t[i] == '=' && i + 1 < n && t[i + 1] == '=') {
            op = SEL_EQ;
            oplen = 2;
        } else if (t[i] == '=') {
            op = SEL_EQ;
            oplen = 1;
        }
        if (op >= 0)
            break;
    }
    if (op < 0) {
        snprintf(err, errn, "invalid selector: '%.*s'; can't understand '%.*s'", (int)n, t, (int)n,
                 t);
        return KUBE_EBADREQUEST;
    }
    r = add_req(out, t, i, op);
    if (!r)
        return KUBE_ENOMEM;
    if (!allowed_field(r->key, allowed)) {
        snprintf(err, errn, "field label not supported: %s", r->key);
        return KUBE_EBADREQUEST;
    }
    value = unescape(t + i + oplen, n - i - oplen, &bad);
    if (!value)
        return KUBE_ENOMEM;
    if (bad) {
        free(value);
        snprintf(err, errn, "invalid field selector: invalid escape sequence");
        return KUBE_EBADREQUEST;
    }
    r->values = malloc(sizeof(char *));
    if (!r->values) {
        free(value);
        return KUBE_ENOMEM;
    }
    r->values[0] = value;
    r->n_values = 1;
    return KUBE_OK;
}

int emu_field_selector_parse(const char *text, const char *const *allowed, emu_selector *out,
                             char *err, size_t errn)
{
    const char *p = text ? text : "";
    int rc = KUBE_OK;

    memset(out, 0, sizeof(*out));
    while (*p && rc == KUBE_OK) {
        const char *end = p;
        while (*end && *end != ',') {
            if (*end == '\\' && end[1])
                end++;
            end++;
        }
        if (end > p)
            rc = field_term(p, (size_t)(end - p), allowed, out, err, errn);
        p = *end ? end + 1 : end;
    }
    if (rc != KUBE_OK)
        emu_selector_free(out);
    return rc;
}
