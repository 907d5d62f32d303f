/*
 * apiserver/http.h - a strict, bounded HTTP/1.1 request parser.
 *
 * libwebsockets 4.1 only exposes the first occurrence of a header it does
 * not know, but the front proxy sends X-Remote-Group once per group, so
 * stickyvm-apiserver takes the decrypted bytes from lws in raw mode and
 * parses requests itself, with explicit limits (the whole header section,
 * the header count, the request-target, the body) and the RFC 7230 rules
 * that keep request smuggling out: CRLF line endings only, no obs-fold,
 * no whitespace before a colon, exactly one Host on HTTP/1.1, a
 * Content-Length of digits only (repeated only with the same value), and
 * Transfer-Encoding "chunked" alone and never together with Content-Length.
 *
 * Memory: apis_http_parse() fills a caller-provided apis_http_request whose
 * strings live in allocations it owns; apis_http_request_free() releases
 * them (safe on a zeroed or already-freed request). On error nothing is left
 * allocated. The parser keeps no state between calls: callers buffer the
 * bytes received so far and call it again when more arrive.
 */
#ifndef APIS_HTTP_H
#define APIS_HTTP_H

#include <stddef.h>

typedef struct apis_http_limits {
    size_t max_header_bytes; /* request line + headers + blank line */
    size_t max_headers;      /* header fields */
    size_t max_target;       /* request-target length */
    size_t max_body;         /* decoded body */
} apis_http_limits;

/* The limits stickyvm-apiserver uses: 32 KiB of headers, 100 fields, an
 * 8 KiB target and a 64 KiB body. */
void apis_http_limits_default(apis_http_limits *lim);

typedef struct apis_http_header {
    const char *name;  /* as received (case kept) */
    const char *value; /* surrounding whitespace removed */
} apis_http_header;

typedef struct apis_http_request {
    const char *method;
    const char *target;          /* the raw request-target */
    int minor;                   /* HTTP/1.<minor> */
    apis_http_header *headers;
    size_t n_headers;
    char *body;                  /* decoded (de-chunked), NUL-terminated */
    size_t body_len;
    int keep_alive;              /* the connection may carry another request */
    int expect_continue;         /* Expect: 100-continue */
    int upgrade;                 /* an Upgrade header or Connection: upgrade */
    char *storage_;              /* private */
    size_t storage_len_;         /* private */
} apis_http_request;

/* Parses the request at the start of buf[0..len).
 * Returns the number of bytes the request occupies (> 0) when it is whole,
 * 0 when more bytes are needed, or KUBE_EBADREQUEST with *http_status set
 * to the answer to give before closing: 400, 413 (body too large), 414
 * (target too long), 431 (header section too large or too many fields),
 * 501 (unsupported Transfer-Encoding) or 505 (not HTTP/1.x). KUBE_ENOMEM
 * when memory runs out. On any non-positive return *req is left zeroed. */
int apis_http_parse(const char *buf, size_t len, const apis_http_limits *lim,
                    apis_http_request *req, int *http_status);

/* Non-zero when the bytes received so far already hold a complete header
 * section (so a caller can send 100 Continue before the body arrives). */
int apis_http_headers_complete(const char *buf, size_t len);

/* First value of a header (case-insensitive name), or NULL. Borrowed. */
const char *apis_http_header_get(const apis_http_request *req, const char *name);
/* Number of fields with that name. */
size_t apis_http_header_count(const apis_http_request *req, const char *name);
/* Removes every field whose name starts with prefix (case-insensitive);
 * returns how many were removed. */
size_t apis_http_header_remove_prefix(apis_http_request *req, const char *prefix);

/* Frees the request, wiping its header bytes (they may hold credentials). */
void apis_http_request_free(apis_http_request *req);

/* The reason phrase of a status code ("OK", "Not Found", ...); static. */
const char *apis_http_reason_phrase(int code);

#endif
