/*
 * kube/serving/query.h - the one reader of a request's query string
 * (Go's url.ParseQuery, pair by pair): "&"-separated pairs, each
 * "key=value" or a bare "key", percent escapes and '+' (a space) decoded.
 * Both daemons read their parameters with it: the API server's /pin,
 * /unpin and virtualmachinepins parameters, and the health paths'
 * ?verbose and ?exclude (healthz.h).
 *
 * Pure functions, thread-safe. Memory: nothing is allocated; a pair is
 * decoded into the caller's kube_query_pair, and its raw slices point into
 * the query given.
 */
#ifndef KUBE_QUERY_H
#define KUBE_QUERY_H

#include <stddef.h>

#define KUBE_QUERY_KEY_MAX 256    /* a decoded key's room, NUL included */
#define KUBE_QUERY_VALUE_MAX 1024 /* a decoded value's room, NUL included */

/* One pair of a query, as sent and decoded. */
typedef struct kube_query_pair {
    const char *raw_key, *raw_value; /* into the query; raw_value "" after a bare key */
    size_t raw_key_len, raw_value_len;
    int has_value;                    /* the pair had an '=' */
    char key[KUBE_QUERY_KEY_MAX];     /* decoded (valid when key_rc is KUBE_OK) */
    char value[KUBE_QUERY_VALUE_MAX]; /* decoded (valid when value_rc is KUBE_OK) */
    size_t value_len;                 /* its length: a decoded %00 may come before it */
    /* KUBE_OK, KUBE_EBADREQUEST (a bad escape), KUBE_ERANGE (longer than
     * the room above), or for the key KUBE_EINVAL (a NUL once decoded) */
    int key_rc, value_rc;
} kube_query_pair;

/* Reads the next non-empty pair of *query (the raw query after '?'; NULL
 * or "" is an empty query) into p and moves *query past it. Empty pairs
 * ("a=1&&b=2") are skipped, as url.ParseQuery skips them. Returns 1 with a
 * pair, 0 at the end. */
int kube_query_next(const char **query, kube_query_pair *p);

/* Decodes s[0..n) (percent escapes, '+' as a space) into out (size
 * outlen, NUL-terminated; *outn receives the decoded length, which a %00
 * may precede). Returns KUBE_OK, KUBE_EBADREQUEST (bad escape) or
 * KUBE_ERANGE (out too small). */
int kube_query_unescape(const char *s, size_t n, char *out, size_t outlen, size_t *outn);

/* The same as url.PathUnescape: percent escapes only ('+' stays '+'). */
int kube_path_unescape(const char *s, size_t n, char *out, size_t outlen, size_t *outn);

/* The first value of key in query, decoded into out (size n). Returns
 * KUBE_OK, KUBE_ENOTFOUND, KUBE_EBADREQUEST (a bad escape in a key before
 * it or in its value, or a NUL in the value once decoded) or KUBE_ERANGE
 * (longer than n). */
int kube_query_get(const char *query, const char *key, char *out, size_t n);

#endif
