/*
 * kube/codec/selector_fields.c - field selectors, as apimachinery's
 * fields.ParseSelector reads them (kube/codec/selector.h).
 */
#include "kube/codec/selector.h"

#include <stdlib.h>
#include <string.h>

#include "kube/util/array.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"

/* The end of the term at s: the first unescaped comma, or the end. */
static char *term_end(char *s)
{
    for (; *s && *s != ','; s++)
        if (*s == '\\' && s[1])
            s++;
    return s;
}

/* Unescapes v in place (\\, \, and \=); an unescaped ',' or '=' or any
 * other escape is KUBE_EPARSE, as fields.UnescapeValue. */
static int unescape(char *v)
{
    char *w = v;

    for (; *v; v++) {
        if (*v == ',' || *v == '=')
            return KUBE_EPARSE;
        if (*v == '\\') {
            v++;
            if (*v != '\\' && *v != ',' && *v != '=')
                return KUBE_EPARSE;
        }
        *w++ = *v;
    }
    *w = '\0';
    return KUBE_OK;
}

/* One term "key op value" (op !=, == or =, the first unescaped one). */
static int parse_term(char *t, kube_field_term *out)
{
    static const char *const ops[] = {"!=", "==", "="};

    for (char *p = t; *p; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            continue;
        }
        for (size_t i = 0; i < 3; i++) {
            size_t len = strlen(ops[i]);
            if (strncmp(p, ops[i], len) != 0)
                continue;
            *p = '\0';
            *out = (kube_field_term){t, p + len, i == 0};
            return unescape(p + len);
        }
    }
    return KUBE_EPARSE;
}

int kube_field_selector_parse(const char *s, kube_field_selector *f)
{
    size_t cap = 0;
    char *t, *end;
    int rc = KUBE_OK, last = 0;

    memset(f, 0, sizeof(*f));
    if (!(f->text = kube_strdup(s)))
        return KUBE_ENOMEM;
    for (t = f->text; rc == KUBE_OK && !last; t = end + 1) {
        end = term_end(t);
        last = *end == '\0';
        *end = '\0';
        if (!*t)
            continue;
        rc = KUBE_ARRAY_RESERVE(f->terms, cap, f->n_terms + 1);
        if (rc == KUBE_OK && (rc = parse_term(t, &f->terms[f->n_terms])) == KUBE_OK)
            f->n_terms++;
    }
    return rc;
}

void kube_field_selector_free(kube_field_selector *s)
{
    free(s->terms);
    free(s->text);
    memset(s, 0, sizeof(*s));
}
