/*
 * kube/util/buf.h - a growable byte buffer and the safe string helpers that
 * replace strcpy/sprintf/atoi across the project (those are banned).
 *
 * Memory: a kube_buf owns its data. Initialise with KUBE_BUF_INIT (or zero
 * it), free with kube_buf_free(). kube_buf_take() hands the data to the
 * caller, who frees it with free(). The data is always NUL-terminated after
 * any successful append, so it can be used as a C string.
 */
#ifndef KUBE_BUF_H
#define KUBE_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct kube_buf {
    char *data;
    size_t len;
    size_t cap;
} kube_buf;

#define KUBE_BUF_INIT \
    {                 \
        NULL, 0, 0    \
    }

/* Appends n bytes. Returns KUBE_OK or KUBE_ENOMEM (buffer unchanged). */
int kube_buf_append(kube_buf *b, const void *data, size_t n);
/* Appends a C string. */
int kube_buf_puts(kube_buf *b, const char *s);
/* Appends formatted text. */
int kube_buf_printf(kube_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s with URL query escaping (RFC 3986 unreserved kept). */
int kube_buf_put_escaped(kube_buf *b, const char *s);
/* Appends s as a JSON string: quoted, with JSON's escapes for '"', '\\'
 * and control characters (bytes from 0x80 pass as they are). KUBE_OK or
 * KUBE_ENOMEM. */
int kube_buf_put_json_string(kube_buf *b, const char *s);
/* Writes s into dst (size n >= 8, always NUL-terminated) quoted as Go's
 * %q quotes ASCII: '"' and '\\' escaped, \a \b \f \n \r \t \v, other bytes
 * below 0x20 and 0x7f as \xNN (bytes from 0x80 pass). At most max bytes of
 * s are shown; "..." follows the closing quote when s was cut (by max or
 * by n). For echoing a name someone typed in a message or a log line.
 * Returns dst. */
const char *kube_quote(char *dst, size_t n, const char *s, size_t max);
/* Empties the buffer, keeping its memory. */
void kube_buf_reset(kube_buf *b);
/* Frees the data and zeroes the buffer. */
void kube_buf_free(kube_buf *b);
/* Returns the data (never NULL: "" for an empty buffer, caller frees),
 * shrunk to its length when much room was left, and zeroes the buffer. Returns NULL only when
 * memory runs out. */
char *kube_buf_take(kube_buf *b);

/* strdup that accepts NULL (returns NULL). Caller frees. */
char *kube_strdup(const char *s);
/* Copies src into dst of size n, always NUL-terminating. Returns KUBE_OK or
 * KUBE_ERANGE when src was truncated. */
int kube_strlcpy(char *dst, const char *src, size_t n);
/* Parses a whole decimal integer (optional sign, no trailing text) within
 * [min, max]. Returns KUBE_OK, KUBE_EINVAL or KUBE_ERANGE; *out untouched on
 * error. The replacement for atoi(). */
int kube_parse_int64(const char *s, int64_t min, int64_t max, int64_t *out);
/* The value of the hex digit c (0-9, a-f, A-F), or -1. */
int kube_hex_digit(char c);
/* Reads a whole file into a NUL-terminated buffer the caller frees.
 * Returns KUBE_OK, KUBE_EIO (errno kept) or KUBE_ENOMEM. */
int kube_read_file(const char *path, char **out, size_t *len);

#endif
