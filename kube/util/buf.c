/*
 * kube/util/buf.c - a growable byte buffer and the safe string helpers that
 * replace strcpy/sprintf/atoi across the project (those are banned). The
 * contract is in buf.h.
 */
#include "kube/util/buf.h"

#include "kube/util/errors.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

/* kube_buf_printf formats into the room already there (at least this many
 * bytes), and only when that is too small formats a second time into a
 * buffer grown to fit: one vsnprintf for the usual short text. */
#define BUF_PRINTF_ROOM 256

static int buf_reserve(kube_buf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    size_t cap = b->cap ? b->cap : 64;
    char *p;

    if (need < b->len)
        return KUBE_ENOMEM;
    if (need <= b->cap)
        return KUBE_OK;
    while (cap < need)
        cap *= 2;
    p = realloc(b->data, cap);
    if (!p)
        return KUBE_ENOMEM;
    b->data = p;
    b->cap = cap;
    return KUBE_OK;
}

int kube_buf_append(kube_buf *b, const void *data, size_t n)
{
    if (buf_reserve(b, n) != KUBE_OK)
        return KUBE_ENOMEM;
    if (n)
        memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
    return KUBE_OK;
}

int kube_buf_puts(kube_buf *b, const char *s)
{
    return kube_buf_append(b, s, strlen(s));
}

/* See BUF_PRINTF_ROOM. */
int kube_buf_printf(kube_buf *b, const char *fmt, ...)
{
    va_list ap;
    size_t room;
    int n;

    if (buf_reserve(b, BUF_PRINTF_ROOM) != KUBE_OK)
        return KUBE_ENOMEM;
    room = b->cap - b->len;
    va_start(ap, fmt);
    n = vsnprintf(b->data + b->len, room, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->data[b->len] = '\0';
        return KUBE_ENOMEM;
    }
    if ((size_t)n >= room) {
        if (buf_reserve(b, (size_t)n) != KUBE_OK) {
            b->data[b->len] = '\0';
            return KUBE_ENOMEM;
        }
        va_start(ap, fmt);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
    return KUBE_OK;
}

int kube_buf_put_escaped(kube_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";

    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.' || c == '~';
        char esc[3] = {'%', hex[c >> 4], hex[c & 15]};
        int rc = plain ? kube_buf_append(b, s, 1) : kube_buf_append(b, esc, 3);
        if (rc != KUBE_OK)
            return rc;
    }
    return KUBE_OK;
}

/* The JSON escape of c ("\\n", "\\u0001", ...) into esc; its length, 0
 * when c needs none. */
static size_t buf_json_escape(unsigned char c, char esc[7])
{
    static const char hex[] = "0123456789abcdef";
    const char *named = c == '"'    ? "\\\""
                        : c == '\\' ? "\\\\"
                        : c == '\n' ? "\\n"
                        : c == '\t' ? "\\t"
                        : c == '\r' ? "\\r"
                                    : NULL;

    if (named) {
        memcpy(esc, named, 2);
        return 2;
    }
    if (c >= 0x20)
        return 0;
    memcpy(esc, "\\u00", 4);
    esc[4] = hex[c >> 4];
    esc[5] = hex[c & 15];
    return 6;
}

int kube_buf_put_json_string(kube_buf *b, const char *s)
{
    const char *run = s;
    char esc[7];
    int rc = kube_buf_append(b, "\"", 1);

    for (; rc == KUBE_OK && *s; s++) {
        size_t n = buf_json_escape((unsigned char)*s, esc);
        if (!n)
            continue;
        rc = kube_buf_append(b, run, (size_t)(s - run));
        if (rc == KUBE_OK)
            rc = kube_buf_append(b, esc, n);
        run = s + 1;
    }
    if (rc == KUBE_OK)
        rc = kube_buf_append(b, run, (size_t)(s - run));
    return rc == KUBE_OK ? kube_buf_append(b, "\"", 1) : rc;
}

/* The escape of byte c as Go's strconv.Quote writes it (ASCII), in esc
 * (5 bytes): its length, 0 when c stands for itself. */
static size_t buf_go_escape(unsigned char c, char esc[5])
{
    static const char named[] = "abtnvfr"; /* \a = 7 .. \r = 13 */

    if (c == '"' || c == '\\') {
        esc[0] = '\\';
        esc[1] = (char)c;
        return 2;
    }
    if (c >= 7 && c <= 13) {
        esc[0] = '\\';
        esc[1] = named[c - 7];
        return 2;
    }
    if (c < 0x20 || c == 0x7f)
        return (size_t)snprintf(esc, 5, "\\x%02x", c);
    return 0;
}

const char *kube_quote(char *dst, size_t n, const char *s, size_t max)
{
    size_t len = 1, i = 0;
    char esc[5];

    dst[0] = '"';
    for (; s[i] && i < max; i++) {
        size_t k = buf_go_escape((unsigned char)s[i], esc);
        if (!k) {
            esc[0] = s[i];
            k = 1;
        }
        if (len + k + 5 > n) /* room for '"', "..." and the NUL */
            break;
        memcpy(dst + len, esc, k);
        len += k;
    }
    dst[len++] = '"';
    if (s[i] && len + 4 <= n) {
        memcpy(dst + len, "...", 3);
        len += 3;
    }
    dst[len] = '\0';
    return dst;
}

void kube_buf_reset(kube_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void kube_buf_free(kube_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

char *kube_buf_take(kube_buf *b)
{
    char *p = b->data ? b->data : strdup("");

    if (b->data && b->cap - b->len > BUF_PRINTF_ROOM / 2) { /* kept strings stay small */
        char *shrunk = realloc(b->data, b->len + 1);
        p = shrunk ? shrunk : b->data;
    }
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

char *kube_strdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

int kube_strlcpy(char *dst, const char *src, size_t n)
{
    size_t len = strlen(src);

    if (n == 0)
        return KUBE_ERANGE;
    if (len >= n) {
        memcpy(dst, src, n - 1);
        dst[n - 1] = '\0';
        return KUBE_ERANGE;
    }
    memcpy(dst, src, len + 1);
    return KUBE_OK;
}

int kube_parse_int64(const char *s, int64_t min, int64_t max, int64_t *out)
{
    char *end;
    long long v;

    if (!s || !*s)
        return KUBE_EINVAL;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (end == s || *end != '\0')
        return KUBE_EINVAL;
    if (errno == ERANGE || v < min || v > max)
        return KUBE_ERANGE;
    *out = (int64_t)v;
    return KUBE_OK;
}

int kube_read_file(const char *path, char **out, size_t *len)
{
    kube_buf b = KUBE_BUF_INIT;
    char chunk[8192];
    size_t n;
    FILE *f = fopen(path, "rb");

    if (!f)
        return KUBE_EIO;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (kube_buf_append(&b, chunk, n) != KUBE_OK) {
            fclose(f);
            kube_buf_free(&b);
            return KUBE_ENOMEM;
        }
    }
    if (ferror(f)) {
        fclose(f);
        kube_buf_free(&b);
        return KUBE_EIO;
    }
    fclose(f);
    if (len)
        *len = b.len;
    *out = kube_buf_take(&b);
    return *out ? KUBE_OK : KUBE_ENOMEM;
}

int kube_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}
