/*
 * kube/serving/httpreq.c - the strict, bounded, incremental HTTP/1.1 request parser
 * (httpreq.h).
 */
#include "kube/serving/httpreq.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/util/buf.h"
#include "kube/util/errors.h"

#define CHUNK_LINE_MAX 1024
#define TRAILER_MAX 4096
#define METHOD_MAX 32

void kube_httpreq_limits_default(kube_httpreq_limits *lim)
{
    lim->max_header_bytes = 32 * 1024;
    lim->max_headers = 100;
    lim->max_target = 8 * 1024;
    lim->max_body = 64 * 1024;
}

/* Parse outcome inside this file: KUBE_OK, NEED_MORE, or an HTTP code. */
enum { NEED_MORE = 1, BODY_DONE = 2 };

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

/* Checks the header bytes not yet checked (NUL, bare CR or LF) and looks
 * for the blank line ending the section. Returns KUBE_OK with p->head_len
 * set, NEED_MORE, or an HTTP error code. */
static int scan_head(kube_httpreq_parser *p, const char *buf, size_t len)
{
    size_t scan = len < p->lim.max_header_bytes ? len : p->lim.max_header_bytes;
    size_t i;

    for (i = p->scanned; i < scan; i++) {
        char c = buf[i];
        if (c == '\0' || (c == '\n' && (i == 0 || buf[i - 1] != '\r')))
            return 400;
        if (c == '\r' && i + 1 == scan)
            break; /* its LF is not here yet */
        if (c == '\r' && buf[i + 1] != '\n')
            return 400;
        if (c == '\n' && !p->line_end)
            p->line_end = i;
        if (c == '\n' && i >= 3 && buf[i - 2] == '\n') {
            p->head_len = i + 1;
            return KUBE_OK;
        }
    }
    p->scanned = i;
    if (!p->line_end && scan > p->lim.max_target + METHOD_MAX + 16)
        return 414;
    if (len >= p->lim.max_header_bytes)
        return p->line_end ? 431 : 414;
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
static int parse_request_line(char *line, const kube_httpreq_limits *lim, kube_httpreq_request *req)
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

static int parse_field(char *line, kube_httpreq_header *h)
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
static int parse_head(char *head, size_t hdr_len, const kube_httpreq_limits *lim,
                      kube_httpreq_request *req)
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

static int any_field_has_token(const kube_httpreq_request *req, const char *name, const char *tok)
{
    for (size_t i = 0; i < req->n_headers; i++)
        if (strcasecmp(req->headers[i].name, name) == 0 &&
            list_has_token(req->headers[i].value, tok))
            return 1;
    return 0;
}

static int parse_content_length(const kube_httpreq_request *req, int64_t *out)
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
static int check_semantics(kube_httpreq_request *req, size_t max_body)
{
    size_t hosts = kube_httpreq_header_count(req, "Host");
    size_t tes = kube_httpreq_header_count(req, "Transfer-Encoding");
    const char *expect = kube_httpreq_header_get(req, "Expect");
    int rc;

    if (hosts > 1 || (req->minor == 1 && hosts == 0))
        return 400;
    rc = parse_content_length(req, &req->content_length);
    if (rc != KUBE_OK)
        return rc;
    if (tes > 1)
        return 501;
    if (tes == 1) {
        if (strcasecmp(kube_httpreq_header_get(req, "Transfer-Encoding"), "chunked") != 0)
            return 501;
        if (req->content_length >= 0 || req->minor == 0)
            return 400;
        req->chunked = 1;
    }
    if (expect && strcasecmp(expect, "100-continue") != 0)
        return 417;
    if (req->content_length > 0 && (uint64_t)req->content_length > max_body)
        return 413;
    req->expect_continue = expect != NULL;
    req->upgrade = kube_httpreq_header_count(req, "Upgrade") > 0 ||
                   any_field_has_token(req, "Connection", "upgrade");
    if (req->minor == 1)
        req->keep_alive = !any_field_has_token(req, "Connection", "close");
    else
        req->keep_alive = any_field_has_token(req, "Connection", "keep-alive");
    return KUBE_OK;
}

/* Parses "HEX[;ext]" up to line_end. */
static int parse_chunk_size(const char *p, const char *line_end, uint64_t *size)
{
    uint64_t v = 0;
    int digits = 0;

    for (; p < line_end && kube_hex_digit(*p) >= 0; p++, digits++) {
        if (digits >= 15)
            return 400;
        v = v * 16 + (uint64_t)kube_hex_digit(*p);
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

/* The encoded size a chunked body may reach, so tiny chunks with long
 * extensions cannot make a small body use unbounded memory. */
static size_t chunked_raw_limit(size_t max_body)
{
    return 8 * max_body + 64 * 1024;
}

enum { CS_SIZE, CS_DATA, CS_DATA_END, CS_TRAILER };

/* Finds the CRLF ending the line that starts at p->pos, resuming the search
 * where the previous call stopped. Returns KUBE_OK with *le, NEED_MORE, or
 * 400 / 431 when the line exceeds max. */
static int next_line(kube_httpreq_parser *p, const char *buf, size_t len, size_t max, int too_long,
                     size_t *le)
{
    size_t i = p->line_scan > p->pos ? p->line_scan : p->pos;

    for (; i + 1 < len; i++) {
        if (buf[i] == '\r' && buf[i + 1] == '\n') {
            if (i - p->pos > max)
                return too_long;
            *le = i;
            p->line_scan = 0;
            return KUBE_OK;
        }
    }
    p->line_scan = i;
    return len - p->pos > max ? too_long : NEED_MORE;
}

static int chunk_size_line(kube_httpreq_parser *p, const char *buf, size_t len)
{
    uint64_t size;
    size_t le;
    int rc = next_line(p, buf, len, CHUNK_LINE_MAX, 400, &le);

    if (rc != KUBE_OK)
        return rc;
    rc = parse_chunk_size(buf + p->pos, buf + le, &size);
    if (rc != KUBE_OK)
        return rc;
    p->pos = le + 2;
    if (size > p->lim.max_body || p->body.len + size > p->lim.max_body)
        return 413;
    p->chunk_left = size;
    p->cstate = size ? CS_DATA : CS_TRAILER;
    return KUBE_OK;
}

static int chunk_data(kube_httpreq_parser *p, const char *buf, size_t len)
{
    size_t n = len - p->pos;

    if (n == 0)
        return NEED_MORE;
    if (n > p->chunk_left)
        n = (size_t)p->chunk_left;
    if (kube_buf_append(&p->body, buf + p->pos, n) != KUBE_OK)
        return 500;
    p->pos += n;
    p->chunk_left -= n;
    if (p->chunk_left == 0)
        p->cstate = CS_DATA_END;
    return KUBE_OK;
}

static int chunk_data_end(kube_httpreq_parser *p, const char *buf, size_t len)
{
    if (len - p->pos < 2)
        return NEED_MORE;
    if (buf[p->pos] != '\r' || buf[p->pos + 1] != '\n')
        return 400;
    p->pos += 2;
    p->cstate = CS_SIZE;
    return KUBE_OK;
}

/* Skips one trailer field after the last chunk (TRAILER_MAX in all).
 * Returns BODY_DONE on the blank line that ends the body, KUBE_OK after a
 * field, NEED_MORE or an HTTP error code. */
static int chunk_trailer(kube_httpreq_parser *p, const char *buf, size_t len)
{
    size_t le;
    int rc = next_line(p, buf, len, TRAILER_MAX, 431, &le);

    if (rc == NEED_MORE && len - p->trailer_start > TRAILER_MAX)
        return 431;
    if (rc != KUBE_OK)
        return rc;
    if (le + 2 - p->trailer_start > TRAILER_MAX)
        return 431;
    rc = le == p->pos ? BODY_DONE : KUBE_OK;
    p->pos = le + 2;
    return rc;
}

/* Runs the chunked decoder over the bytes not decoded yet. Returns KUBE_OK
 * when the body is whole, NEED_MORE, or an HTTP error code. */
static int decode_chunked(kube_httpreq_parser *p, const char *buf, size_t len)
{
    for (;;) {
        int rc;
        if (p->pos - p->head_len > chunked_raw_limit(p->lim.max_body))
            return 413;
        switch (p->cstate) {
        case CS_SIZE:
            rc = chunk_size_line(p, buf, len);
            if (rc == KUBE_OK && p->cstate == CS_TRAILER)
                p->trailer_start = p->pos;
            break;
        case CS_DATA:
            rc = chunk_data(p, buf, len);
            break;
        case CS_DATA_END:
            rc = chunk_data_end(p, buf, len);
            break;
        default:
            rc = chunk_trailer(p, buf, len);
            if (rc == BODY_DONE)
                return KUBE_OK;
            break;
        }
        if (rc != KUBE_OK)
            return rc;
    }
}

void kube_httpreq_parser_init(kube_httpreq_parser *p, const kube_httpreq_limits *lim)
{
    memset(p, 0, sizeof(*p));
    p->lim = *lim;
}

void kube_httpreq_parser_reset(kube_httpreq_parser *p)
{
    kube_httpreq_limits lim = p->lim;

    if (p->body.data)
        explicit_bzero(p->body.data, p->body.len);
    kube_buf_free(&p->body);
    kube_httpreq_parser_init(p, &lim);
}

/* An error outcome of this file as the public return value. */
static int public_error(int rc, kube_httpreq_request *req, int *http_status)
{
    kube_httpreq_request_free(req);
    if (rc == NEED_MORE)
        return 0;
    if (rc == 500)
        return KUBE_ENOMEM;
    *http_status = rc;
    return KUBE_EBADREQUEST;
}

static int parse_head_section(kube_httpreq_parser *p, const char *buf, kube_httpreq_request *req)
{
    int rc;

    req->content_length = -1;
    req->storage_ = malloc(p->head_len + 1);
    if (!req->storage_)
        return 500;
    req->storage_len_ = p->head_len + 1;
    memcpy(req->storage_, buf, p->head_len);
    req->storage_[p->head_len] = '\0';
    rc = parse_head(req->storage_, p->head_len, &p->lim, req);
    if (rc == KUBE_OK)
        rc = check_semantics(req, p->lim.max_body);
    if (rc == KUBE_OK) {
        p->content_length = req->content_length;
        p->chunked = req->chunked;
        p->pos = p->head_len;
    }
    return rc;
}

int kube_httpreq_parse_head(kube_httpreq_parser *p, const char *buf, size_t len,
                            kube_httpreq_request *req, int *http_status)
{
    int rc;

    memset(req, 0, sizeof(*req));
    *http_status = 0;
    rc = scan_head(p, buf, len);
    if (rc == KUBE_OK)
        rc = parse_head_section(p, buf, req);
    if (rc != KUBE_OK) {
        p->head_len = 0;
        return public_error(rc, req, http_status);
    }
    return (int)p->head_len;
}

static int take_body(kube_httpreq_parser *p, kube_httpreq_request *req)
{
    req->body_len = p->body.len;
    req->body = kube_buf_take(&p->body);
    return req->body ? KUBE_OK : 500;
}

int kube_httpreq_parse_body(kube_httpreq_parser *p, const char *buf, size_t len,
                            kube_httpreq_request *req, int *http_status)
{
    int rc = KUBE_OK;

    *http_status = 0;
    if (p->chunked) {
        rc = decode_chunked(p, buf, len);
    } else if (p->content_length > 0) {
        if (len - p->head_len < (uint64_t)p->content_length)
            return 0;
        if (kube_buf_append(&p->body, buf + p->head_len, (size_t)p->content_length) != KUBE_OK)
            rc = 500;
        p->pos = p->head_len + (size_t)p->content_length;
    }
    if (rc == KUBE_OK)
        rc = take_body(p, req);
    if (rc == NEED_MORE)
        return 0;
    if (rc != KUBE_OK)
        return public_error(rc, req, http_status);
    return (int)p->pos;
}

int kube_httpreq_has_body(const kube_httpreq_request *req)
{
    return req->chunked || req->content_length > 0;
}

int kube_httpreq_parse(const char *buf, size_t len, const kube_httpreq_limits *lim,
                       kube_httpreq_request *req, int *http_status)
{
    kube_httpreq_parser p;
    int rc;

    kube_httpreq_parser_init(&p, lim);
    rc = kube_httpreq_parse_head(&p, buf, len, req, http_status);
    if (rc > 0)
        rc = kube_httpreq_parse_body(&p, buf, len, req, http_status);
    if (rc == 0)
        kube_httpreq_request_free(req);
    kube_httpreq_parser_reset(&p);
    return rc;
}

const char *kube_httpreq_header_get(const kube_httpreq_request *req, const char *name)
{
    for (size_t i = 0; i < req->n_headers; i++)
        if (strcasecmp(req->headers[i].name, name) == 0)
            return req->headers[i].value;
    return NULL;
}

size_t kube_httpreq_header_count(const kube_httpreq_request *req, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < req->n_headers; i++)
        if (strcasecmp(req->headers[i].name, name) == 0)
            n++;
    return n;
}

size_t kube_httpreq_header_remove_prefix(kube_httpreq_request *req, const char *prefix)
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

void kube_httpreq_request_free(kube_httpreq_request *req)
{
    if (req->storage_)
        explicit_bzero(req->storage_, req->storage_len_);
    free(req->storage_);
    free(req->headers);
    free(req->body);
    memset(req, 0, sizeof(*req));
}

const char *kube_httpreq_reason_phrase(int code)
{
    switch (code) {
    case 100:
        return "Continue";
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 202:
        return "Accepted";
    case 204:
        return "No Content";
    case 304:
        return "Not Modified";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 406:
        return "Not Acceptable";
    case 408:
        return "Request Timeout";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 413:
        return "Request Entity Too Large";
    case 414:
        return "Request URI Too Long";
    case 415:
        return "Unsupported Media Type";
    case 417:
        return "Expectation Failed";
    case 422:
        return "Unprocessable Entity";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Unknown";
    }
}
