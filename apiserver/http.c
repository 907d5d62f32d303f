#include "http.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/buf.h"
#include "kube/errors.h"

#define CHUNK_LINE_MAX 1024
#define TRAILER_MAX 4096
#define METHOD_MAX 32

void apis_http_limits_default(apis_http_limits *lim)
{
    lim->max_header_bytes = 32 * 1024;
    lim->max_headers = 100;
    lim->max_target = 8 * 1024;
    lim->max_body = 64 * 1024;
}

/* Parse outcome inside this file: KUBE_OK, NEED_MORE, or an HTTP code. */
enum { NEED_MORE = 1 };

static int is_tchar(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return 1;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int is_field_vchar(unsigned char c)
{
    return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static const char *find_crlf(const char *p, const char *end)
{
    for (; p + 1 < end; p++)
        if (p[0] == '\r' && p[1] == '\n')
            return p;
    return NULL;
}

/* A bare LF or CR anywhere in the header section is a syntax error. */
static int bare_line_break(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n' && (i == 0 || p[i - 1] != '\r'))
            return 1;
        if (p[i] == '\r' && i + 1 < n && p[i + 1] != '\n')
            return 1;
    }
    return 0;
}

/* Locates the end of the header section. Returns KUBE_OK with *hdr_len
 * (including the blank line), NEED_MORE, or an HTTP error code. */
static int header_section(const char *buf, size_t len, const apis_http_limits *lim,
                          size_t *hdr_len)
{
    size_t scan = len < lim->max_header_bytes ? len : lim->max_header_bytes;
    const char *line_end = find_crlf(buf, buf + scan);

    for (size_t i = 0; i + 3 < scan; i++) {
        if (memcmp(buf + i, "\r\n\r\n", 4) == 0) {
            *hdr_len = i + 4;
            if (memchr(buf, '\0', *hdr_len) || bare_line_break(buf, *hdr_len))
                return 400;
            return KUBE_OK;
        }
    }
    if (memchr(buf, '\0', scan) || bare_line_break(buf, scan))
        return 400;
    if (!line_end && scan > lim->max_target + METHOD_MAX + 16)
        return 414;
    if (len >= lim->max_header_bytes)
        return line_end ? 431 : 414;
    return NEED_MORE;
}

static int parse_version(const char *v, int *minor)
{
    if (strncmp(v, "HTTP/", 5) != 0)
        return 400;
    if (strlen(v) != 8 || v[6] != '.' || v[5] < '0' || v[5] > '9' || v[7] < '0' || v[7] > '9')
        return 400;
    if (v[5] != '1' || (v[7] != '0' && v[7] != '1'))
        return 505;
    *minor = v[7] - '0';
    return KUBE_OK;
}

/* line is NUL-terminated (the CRLF already replaced). */
static int parse_request_line(char *line, const apis_http_limits *lim, apis_http_request *req)
{
    char *sp1 = strchr(line, ' ');
    char *sp2;
    size_t mlen;

    if (!sp1)
        return 400;
    mlen = (size_t)(sp1 - line);
    if (mlen == 0 || mlen > METHOD_MAX)
        return 400;
    for (size_t i = 0; i < mlen; i++)
        if (!is_tchar((unsigned char)line[i]))
            return 400;
    sp2 = strchr(sp1 + 1, ' ');
    if (!sp2 || sp2 == sp1 + 1)
        return 400;
    if ((size_t)(sp2 - sp1 - 1) > lim->max_target)
        return 414;
    for (char *p = sp1 + 1; p < sp2; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p == 0x7f)
            return 400;
    *sp1 = '\0';
    *sp2 = '\0';
    req->method = line;
    req->target = sp1 + 1;
    return parse_version(sp2 + 1, &req->minor);
}

static void trim_trailing_ows(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
}

static int parse_field(char *line, apis_http_header *h)
{
    char *colon = strchr(line, ':');
    char *v;

    if (!colon || colon == line)
        return 400;
    for (char *p = line; p < colon; p++)
        if (!is_tchar((unsigned char)*p))
            return 400; /* includes whitespace before the colon and obs-fold */
    *colon = '\0';
    v = colon + 1;
    while (*v == ' ' || *v == '\t')
        v++;
    for (char *p = v; *p; p++)
        if (!is_field_vchar((unsigned char)*p))
            return 400;
    trim_trailing_ows(v);
    h->name = line;
    h->value = v;
    return KUBE_OK;
}

static size_t count_lines(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i + 1 < n; i++)
        if (s[i] == '\r' && s[i + 1] == '\n')
            c++;
    return c;
}

/* Splits the copied header section (NUL-terminated) into the request line
 * and fields, in place. */
static int parse_head(char *head, size_t hdr_len, const apis_http_limits *lim,
                      apis_http_request *req)
{
    char *line = head;
    char *end = strstr(line, "\r\n");
    size_t fields = count_lines(head, hdr_len);
    int rc;

    fields = fields >= 2 ? fields - 2 : 0;
    if (fields > lim->max_headers)
        return 431;
    *end = '\0';
    rc = parse_request_line(line, lim, req);
    if (rc != KUBE_OK)
        return rc;
    req->headers = calloc(fields ? fields : 1, sizeof(*req->headers));
    if (!req->headers)
        return 500;
    line = end + 2;
    while ((end = strstr(line, "\r\n")) != NULL && end != line) {
        *end = '\0';
        rc = parse_field(line, &req->headers[req->n_headers]);
        if (rc != KUBE_OK)
            return rc;
        req->n_headers++;
        line = end + 2;
    }
    return KUBE_OK;
}

/* Walks the comma-separated tokens of a header value. */
static int list_has_token(const char *value, const char *token)
{
    size_t tl = strlen(token);
    const char *p = value;

    while (*p) {
        const char *start, *stop;
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        start = p;
        while (*p && *p != ',')
            p++;
        stop = p;
        while (stop > start && (stop[-1] == ' ' || stop[-1] == '\t'))
            stop--;
        if ((size_t)(stop - start) == tl && strncasecmp(start, token, tl) == 0)
            return 1;
    }
    return 0;
}

static int any_field_has_token(const apis_http_request *req, const char *name, const char *tok)
{
    for (size_t i = 0; i < req->n_headers; i++)
        if (strcasecmp(req->headers[i].name, name) == 0 && list_has_token(req->headers[i].value, tok))
            return 1;
    return 0;
}

static int parse_content_length(const apis_http_request *req, int64_t *out)
{
    const char *first = NULL;

    *out = -1;
    for (size_t i = 0; i < req->n_headers; i++) {
        const char *v = req->headers[i].value;
        if (strcasecmp(req->headers[i].name, "Content-Length") != 0)
            continue;
        if (first && strcmp(first, v) != 0)
            return 400;
        first = v;
    }
    if (!first)
        return KUBE_OK;
    if (*first == '\0' || strlen(first) > 18 || strspn(first, "0123456789") != strlen(first))
        return 400;
    return kube_parse_int64(first, 0, INT64_MAX, out) == KUBE_OK ? KUBE_OK : 400;
}

/* Connection semantics, Host, Expect, Upgrade and the body framing. */
static int check_semantics(apis_http_request *req, int64_t *content_length, int *chunked)
{
    size_t hosts = apis_http_header_count(req, "Host");
    size_t tes = apis_http_header_count(req, "Transfer-Encoding");
    const char *expect = apis_http_header_get(req, "Expect");
    int rc;

    if (hosts > 1 || (req->minor == 1 && hosts == 0))
        return 400;
    rc = parse_content_length(req, content_length);
    if (rc != KUBE_OK)
        return rc;
    *chunked = 0;
    if (tes > 1)
        return 501;
    if (tes == 1) {
        if (strcasecmp(apis_http_header_get(req, "Transfer-Encoding"), "chunked") != 0)
            return 501;
        if (*content_length >= 0 || req->minor == 0)
            return 400;
        *chunked = 1;
    }
    if (expect && strcasecmp(expect, "100-continue") != 0)
        return 417;
    req->expect_continue = expect != NULL;
    req->upgrade = apis_http_header_count(req, "Upgrade") > 0 ||
                   any_field_has_token(req, "Connection", "upgrade");
    if (req->minor == 1)
        req->keep_alive = !any_field_has_token(req, "Connection", "close");
    else
        req->keep_alive = any_field_has_token(req, "Connection", "keep-alive");
    return KUBE_OK;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Parses "HEX[;ext]" up to line_end. */
static int parse_chunk_size(const char *p, const char *line_end, uint64_t *size)
{
    uint64_t v = 0;
    int digits = 0;

    for (; p < line_end && hex_value(*p) >= 0; p++, digits++) {
        if (digits >= 15)
            return 400;
        v = v * 16 + (uint64_t)hex_value(*p);
    }
    if (digits == 0)
        return 400;
    while (p < line_end && (*p == ' ' || *p == '\t'))
        p++;
    if (p < line_end && *p != ';')
        return 400;
    for (; p < line_end; p++)
        if (!is_field_vchar((unsigned char)*p))
            return 400;
    *size = v;
    return KUBE_OK;
}

/* Skips the trailer section after the last chunk. */
static int skip_trailers(const char *p, const char *end, const char **after)
{
    const char *start = p;

    for (;;) {
        const char *le = find_crlf(p, end);
        if (!le)
            return (size_t)(end - start) > TRAILER_MAX ? 431 : NEED_MORE;
        if ((size_t)(le - start) > TRAILER_MAX)
            return 431;
        if (le == p) {
            *after = le + 2;
            return KUBE_OK;
        }
        p = le + 2;
    }
}

/* The encoded size a chunked body may reach, so tiny chunks with long
 * extensions cannot make a small body use unbounded memory. */
static size_t chunked_raw_limit(size_t max_body)
{
    return 8 * max_body + 64 * 1024;
}

static int decode_chunked(const char *p, const char *end, size_t max_body, kube_buf *body,
                          const char **after)
{
    const char *start = p;

    for (;;) {
        const char *le = find_crlf(p, end);
        uint64_t size;
        int rc;

        if ((size_t)(p - start) > chunked_raw_limit(max_body))
            return 413;
        if (!le)
            return (size_t)(end - p) > CHUNK_LINE_MAX ? 400 : NEED_MORE;
        if ((size_t)(le - p) > CHUNK_LINE_MAX)
            return 400;
        rc = parse_chunk_size(p, le, &size);
        if (rc != KUBE_OK)
            return rc;
        p = le + 2;
        if (size == 0)
            return skip_trailers(p, end, after);
        if (size > max_body || body->len + size > max_body)
            return 413;
        if ((uint64_t)(end - p) < size + 2)
            return NEED_MORE;
        if (p[size] != '\r' || p[size + 1] != '\n')
            return 400;
        if (kube_buf_append(body, p, (size_t)size) != KUBE_OK)
            return 500;
        p += size + 2;
    }
}

static int read_body(const char *buf, size_t len, size_t hdr_len, int64_t content_length,
                     int chunked, const apis_http_limits *lim, apis_http_request *req,
                     size_t *total)
{
    kube_buf body = KUBE_BUF_INIT;
    const char *after = buf + hdr_len;
    int rc = KUBE_OK;

    if (chunked) {
        rc = decode_chunked(buf + hdr_len, buf + len, lim->max_body, &body, &after);
    } else if (content_length > 0) {
        if ((uint64_t)content_length > lim->max_body)
            rc = 413;
        else if (len - hdr_len < (uint64_t)content_length)
            rc = NEED_MORE;
        else if (kube_buf_append(&body, buf + hdr_len, (size_t)content_length) != KUBE_OK)
            rc = 500;
        after = buf + hdr_len + (content_length > 0 ? content_length : 0);
    }
    if (rc != KUBE_OK) {
        kube_buf_free(&body);
        return rc;
    }
    req->body_len = body.len;
    req->body = kube_buf_take(&body);
    if (!req->body)
        return 500;
    *total = (size_t)(after - buf);
    return KUBE_OK;
}

static int parse_all(const char *buf, size_t len, const apis_http_limits *lim,
                     apis_http_request *req, size_t *total)
{
    size_t hdr_len = 0;
    int64_t content_length;
    int chunked;
    int rc = header_section(buf, len, lim, &hdr_len);

    if (rc != KUBE_OK)
        return rc;
    req->storage_ = malloc(hdr_len + 1);
    if (!req->storage_)
        return 500;
    req->storage_len_ = hdr_len + 1;
    memcpy(req->storage_, buf, hdr_len);
    req->storage_[hdr_len] = '\0';
    rc = parse_head(req->storage_, hdr_len, lim, req);
    if (rc == KUBE_OK)
        rc = check_semantics(req, &content_length, &chunked);
    if (rc == KUBE_OK)
        rc = read_body(buf, len, hdr_len, content_length, chunked, lim, req, total);
    return rc;
}

int apis_http_parse(const char *buf, size_t len, const apis_http_limits *lim,
                    apis_http_request *req, int *http_status)
{
    size_t total = 0;
    int rc;

    memset(req, 0, sizeof(*req));
    *http_status = 0;
    if (len == 0)
        return 0;
    rc = parse_all(buf, len, lim, req, &total);
    if (rc == KUBE_OK)
        return (int)total;
    apis_http_request_free(req);
    if (rc == NEED_MORE)
        return 0;
    if (rc == 500)
        return KUBE_ENOMEM;
    *http_status = rc;
    return KUBE_EBADREQUEST;
}

int apis_http_headers_complete(const char *buf, size_t len)
{
    for (size_t i = 0; i + 3 < len; i++)
        if (memcmp(buf + i, "\r\n\r\n", 4) == 0)
            return 1;
    return 0;
}

const char *apis_http_header_get(const apis_http_request *req, const char *name)
{
    for (size_t i = 0; i < req->n_headers; i++)
        if (strcasecmp(req->headers[i].name, name) == 0)
            return req->headers[i].value;
    return NULL;
}

size_t apis_http_header_count(const apis_http_request *req, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < req->n_headers; i++)
        if (strcasecmp(req->headers[i].name, name) == 0)
            n++;
    return n;
}

size_t apis_http_header_remove_prefix(apis_http_request *req, const char *prefix)
{
    size_t pl = strlen(prefix);
    size_t kept = 0, removed = 0;

    for (size_t i = 0; i < req->n_headers; i++) {
        if (strncasecmp(req->headers[i].name, prefix, pl) == 0) {
            removed++;
            continue;
        }
        req->headers[kept++] = req->headers[i];
    }
    req->n_headers = kept;
    return removed;
}

void apis_http_request_free(apis_http_request *req)
{
    if (req->storage_)
        explicit_bzero(req->storage_, req->storage_len_);
    free(req->storage_);
    free(req->headers);
    free(req->body);
    memset(req, 0, sizeof(*req));
}

const char *apis_http_reason_phrase(int code)
{
    switch (code) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Request Entity Too Large";
    case 414: return "Request URI Too Long";
    case 417: return "Expectation Failed";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
    }
}
