/*
 * kube/serving/httpreq.h - the one HTTP/1.1 request parser of the project: strict,
 * bounded and incremental. stickyvm-apiserver (which reads the decrypted
 * bytes from libwebsockets in raw mode, because lws 4.1 keeps only the
 * first of repeated unknown headers and the front proxy sends X-Remote-Group
 * once per group) and the API emulator both parse requests with it.
 *
 * Rules (RFC 7230, the ones that keep request smuggling out): explicit
 * limits (the header section, the header count, the request-target, the
 * body, the chunked encoding); CRLF line endings only, no NUL, no obs-fold,
 * no whitespace before a colon; repeated fields kept in order; exactly one
 * Host on HTTP/1.1; a Content-Length of digits only (repeated only with the
 * same value); Transfer-Encoding "chunked" alone and never together with
 * Content-Length.
 *
 * Incremental use: a kube_httpreq_parser is fed the same growing buffer
 * (every byte of the current request received so far, from its first
 * byte). It keeps how far it scanned the header section and the chunked
 * decoder's state, so each byte is looked at once whatever the size of the
 * reads: kube_httpreq_parse_head() until the header section is whole, then
 * (after authenticating on the headers, say) kube_httpreq_parse_body().
 * kube_httpreq_parse() does both at once for a whole buffer.
 *
 * Memory: the parser owns the body being decoded until the request is
 * whole; kube_httpreq_parser_reset() frees it (safe at any time, also on a
 * zeroed parser). A kube_httpreq_request's strings live in allocations it
 * owns; kube_httpreq_request_free() releases them (safe on a zeroed or
 * already-freed request). On error nothing is left allocated in the
 * request. Threads: a parser and a request are used by one thread at a time.
 */
#ifndef KUBE_HTTPREQ_H
#define KUBE_HTTPREQ_H

#include <stddef.h>
#include <stdint.h>

#include "kube/util/buf.h"

typedef struct kube_httpreq_limits {
    size_t max_header_bytes; /* request line + headers + blank line */
    size_t max_headers;      /* header fields */
    size_t max_target;       /* request-target length */
    size_t max_body;         /* decoded body */
} kube_httpreq_limits;

/* The limits stickyvm-apiserver uses: 32 KiB of headers, 100 fields, an
 * 8 KiB target and a 64 KiB body. */
void kube_httpreq_limits_default(kube_httpreq_limits *lim);

typedef struct kube_httpreq_header {
    const char *name;  /* as received (case kept) */
    const char *value; /* surrounding whitespace removed */
} kube_httpreq_header;

typedef struct kube_httpreq_request {
    const char *method;
    const char *target; /* the raw request-target */
    int minor;          /* HTTP/1.<minor> */
    kube_httpreq_header *headers;
    size_t n_headers;
    int64_t content_length; /* -1 when absent */
    int chunked;            /* Transfer-Encoding: chunked */
    char *body;             /* decoded (de-chunked), NUL-terminated; set
                             * once the body is whole */
    size_t body_len;
    int keep_alive;      /* the connection may carry another request */
    int expect_continue; /* Expect: 100-continue */
    int upgrade;         /* an Upgrade header or Connection: upgrade */
    char *storage_;      /* private */
    size_t storage_len_; /* private */
} kube_httpreq_request;

/* The state of one request being read. Zero it or call init before use. */
typedef struct kube_httpreq_parser {
    kube_httpreq_limits lim;
    size_t scanned;  /* header bytes checked so far */
    size_t line_end; /* end of the request line, 0: not seen yet */
    size_t head_len; /* 0 until the header section is whole */
    int64_t content_length;
    int chunked;
    int cstate;           /* chunked decoder: size line, data, data CRLF, trailers */
    size_t pos;           /* next byte of the body to decode */
    size_t line_scan;     /* where the search for the current line's CRLF resumes */
    size_t trailer_start; /* where the trailer section began */
    uint64_t chunk_left;
    kube_buf body;
} kube_httpreq_parser;

/* Starts a parser with a copy of lim. */
void kube_httpreq_parser_init(kube_httpreq_parser *p, const kube_httpreq_limits *lim);
/* Forgets the current request (frees the partial body); the limits stay. */
void kube_httpreq_parser_reset(kube_httpreq_parser *p);

/* Reads the header section from buf[0..len), every byte of the request so
 * far. Returns the header section's length (> 0) once it is whole and
 * parsed into *req (its body not read: kube_httpreq_parse_body), 0 when
 * more bytes are needed, or KUBE_EBADREQUEST with *http_status set to the
 * answer to give before closing: 400, 413 (Content-Length over the body
 * limit), 414 (target too long), 417 (unknown expectation), 431 (header
 * section too large or too many fields), 501 (unsupported
 * Transfer-Encoding) or 505 (not HTTP/1.x); KUBE_ENOMEM when memory runs
 * out. On any non-positive return *req is left zeroed. */
int kube_httpreq_parse_head(kube_httpreq_parser *p, const char *buf, size_t len,
                            kube_httpreq_request *req, int *http_status);

/* Reads the body of the request whose head was parsed, from the same
 * buffer. Returns the whole request's length (> 0) once the body is whole
 * (req->body set, owned by req), 0 when more bytes are needed, or
 * KUBE_EBADREQUEST with *http_status (400, 413 body too large, 431
 * trailers too large) or KUBE_ENOMEM; on those errors *req is freed and
 * left zeroed. */
int kube_httpreq_parse_body(kube_httpreq_parser *p, const char *buf, size_t len,
                            kube_httpreq_request *req, int *http_status);

/* Non-zero when the request announces a body (chunked or a Content-Length
 * above 0), i.e. bytes follow its header section. */
int kube_httpreq_has_body(const kube_httpreq_request *req);

/* Parses a whole request at the start of buf[0..len): head and body with
 * a fresh parser. Returns the request's length (> 0), 0 when more bytes
 * are needed, or the errors of the two calls above. */
int kube_httpreq_parse(const char *buf, size_t len, const kube_httpreq_limits *lim,
                       kube_httpreq_request *req, int *http_status);

/* First value of a header (case-insensitive name), or NULL. Borrowed. */
const char *kube_httpreq_header_get(const kube_httpreq_request *req, const char *name);
/* Number of fields with that name. */
size_t kube_httpreq_header_count(const kube_httpreq_request *req, const char *name);
/* Removes every field whose name starts with prefix (case-insensitive);
 * returns how many were removed. */
size_t kube_httpreq_header_remove_prefix(kube_httpreq_request *req, const char *prefix);

/* Frees the request, wiping its header bytes (they may hold credentials). */
void kube_httpreq_request_free(kube_httpreq_request *req);

/* The reason phrase of a status code ("OK", "Not Found", ...); static. */
const char *kube_httpreq_reason_phrase(int code);

#endif
