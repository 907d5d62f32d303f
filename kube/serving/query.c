/*
 * kube/serving/query.c - a request's query string, pair by pair, decoded.
 * The contract is in query.h.
 */
#include "kube/serving/query.h"

#include <string.h>

#include "kube/util/buf.h"
#include "kube/util/errors.h"

/* Percent escapes decoded, and '+' as a space when plus_is_space: the one
 * decoder behind kube_query_unescape and kube_path_unescape. */
static int unescape(const char *s, size_t n, int plus_is_space, char *out, size_t outlen,
                    size_t *outn)
{
    size_t o = 0;

    if (outlen == 0)
        return KUBE_ERANGE;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= n)
                return KUBE_EBADREQUEST;
            if (kube_hex_digit(s[i + 1]) < 0 || kube_hex_digit(s[i + 2]) < 0)
                return KUBE_EBADREQUEST;
            c = (char)(kube_hex_digit(s[i + 1]) * 16 + kube_hex_digit(s[i + 2]));
            i += 2;
        } else if (c == '+' && plus_is_space) {
            c = ' ';
        }
        if (o + 1 >= outlen)
            return KUBE_ERANGE;
        out[o++] = c;
    }
    out[o] = '\0';
    *outn = o;
    return KUBE_OK;
}

int kube_query_unescape(const char *s, size_t n, char *out, size_t outlen, size_t *outn)
{
    return unescape(s, n, 1, out, outlen, outn);
}

int kube_path_unescape(const char *s, size_t n, char *out, size_t outlen, size_t *outn)
{
    return unescape(s, n, 0, out, outlen, outn);
}

int kube_query_next(const char **query, kube_query_pair *p)
{
    const char *q = *query;
    size_t len, kn;
    const char *eq;

    while (q && *q == '&')
        q++;
    if (!q || !*q) {
        *query = q;
        return 0;
    }
    len = strcspn(q, "&");
    eq = memchr(q, '=', len);
    p->raw_key = q;
    p->raw_key_len = eq ? (size_t)(eq - q) : len;
    p->has_value = eq != NULL;
    p->raw_value = eq ? eq + 1 : q + len;
    p->raw_value_len = (size_t)(q + len - p->raw_value);
    p->key_rc = kube_query_unescape(p->raw_key, p->raw_key_len, p->key, sizeof(p->key), &kn);
    if (p->key_rc == KUBE_OK && strlen(p->key) != kn)
        p->key_rc = KUBE_EINVAL;
    p->value_rc = kube_query_unescape(p->raw_value, p->raw_value_len, p->value, sizeof(p->value),
                                      &p->value_len);
    *query = q + len;
    return 1;
}

int kube_query_get(const char *query, const char *key, char *out, size_t n)
{
    kube_query_pair p;

    while (kube_query_next(&query, &p)) {
        if (p.key_rc == KUBE_EBADREQUEST)
            return KUBE_EBADREQUEST;
        if (p.key_rc != KUBE_OK || strcmp(p.key, key) != 0)
            continue;
        if (p.value_rc != KUBE_OK)
            return p.value_rc;
        if (strlen(p.value) != p.value_len)
            return KUBE_EBADREQUEST;
        if (p.value_len >= n)
            return KUBE_ERANGE;
        memcpy(out, p.value, p.value_len + 1);
        return KUBE_OK;
    }
    return KUBE_ENOTFOUND;
}
