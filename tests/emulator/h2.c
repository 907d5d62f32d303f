/*
 * tests/emulator/h2.c - the emulator's HTTP/2 server side (see h2.h): ALPN,
 * an nghttp2 session per connection driven by the connection thread over
 * non-blocking TLS, and one handler thread per stream writing its answer
 * into the stream's buffer, which the session's data provider drains
 * (deferred while empty, resumed when the handler wakes the loop through
 * the connection's eventfd).
 *
 * Stream life: created on its first HEADERS; its request is gathered until
 * END_STREAM, then a pooled thread (spawn.h) runs the pipeline (or the
 * connection thread answers a 431/413 itself). A stream is freed once
 * nghttp2 closed it (answered, or reset by the client) and its handler is
 * done; the connection ends after every handler has returned.
 * Locking: hc->mu guards every field a handler thread and the connection
 * thread share (marked "shared" below); the session is touched only by the
 * connection thread, never under hc->mu except in the data provider.
 */
#include <errno.h>
#include <fcntl.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "h2.h"
#include "spawn.h"
#include "kube/util/clock.h"
#include "kube/util/log.h"

#define MAX_STREAMS 250           /* kube-apiserver's (Go's) default */
#define OUT_HIGH_WATER (1u << 20) /* a handler waits above this much unsent */
#define WBUF_MAX (64u * 1024)     /* TLS bytes queued before writing */
#define GOAWAY_GRACE_MS 5000      /* streams get this long to end after GOAWAY */
#define WRITE_TIMEOUT_MS 30000    /* a peer that reads nothing this long is dropped */
#define STREAM_STACK (512 * 1024)

static const unsigned char ALPN_H2[] = "h2";
static const unsigned char ALPN_H1[] = "http/1.1";

typedef struct h2_conn h2_conn;

typedef struct h2_stream {
    h2_conn *hc;
    int32_t id;
    /* the request (connection thread until the handler starts) */
    char *method;
    char *target;
    char *authority;
    emu_header *headers;
    size_t n_headers;
    size_t header_bytes;
    int headers_too_large;
    kube_buf body;
    int body_too_large;
    /* the answer (shared) */
    char *nv_text; /* "name\0value\0..." of the HEADERS to submit */
    size_t nv_len;
    int has_body; /* the HEADERS are followed by DATA */
    kube_buf out; /* body bytes not yet given to nghttp2 */
    size_t out_off;
    int eof;      /* the handler ended the body */
    int deferred; /* the data provider waits for out or eof */
    int closed;   /* nghttp2 closed the stream (done or reset) */
    int done;     /* the handler finished (or there was none) */
    /* connection thread only */
    int started; /* a handler runs or ran */
    int head_sent;
    struct h2_stream *next;
} h2_stream;

struct h2_conn {
    const emu_h2_link *l;
    nghttp2_session *session;
    pthread_mutex_t mu;
    pthread_cond_t room; /* signalled when out buffers drain or close, or a handler returns */
    h2_stream *streams;
    kube_buf wbuf; /* TLS output not yet written */
    size_t woff;
    int failed;        /* the transport broke */
    int abort;         /* a fault asked to close without answering (under mu) */
    int handlers;      /* handlers that have not returned (under mu) */
    int64_t active_ms; /* last time bytes arrived */
    int64_t wrote_ms;  /* last time TLS took bytes (or output began) */
};

/* ------------------------------------------------------------------ */
/* ALPN                                                                */
/* ------------------------------------------------------------------ */

/* 1 if the wire-format list in (len) offers proto. */
static int alpn_offers(const unsigned char *in, unsigned len, const unsigned char *proto,
                       size_t plen)
{
    for (unsigned i = 0; i < len; i += 1u + in[i])
        if (in[i] == plen && i + 1u + plen <= len && memcmp(in + i + 1, proto, plen) == 0)
            return 1;
    return 0;
}

/* OpenSSL's ALPN callback: arg is non-NULL when h2 may be chosen. */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    int offer_h2 = arg != NULL;

    (void)ssl;
    if (offer_h2 && alpn_offers(in, inlen, ALPN_H2, 2)) {
        *out = ALPN_H2;
        *outlen = 2;
        return SSL_TLSEXT_ERR_OK;
    }
    if (alpn_offers(in, inlen, ALPN_H1, 8)) {
        *out = ALPN_H1;
        *outlen = 8;
        return SSL_TLSEXT_ERR_OK;
    }
    return SSL_TLSEXT_ERR_NOACK;
}

/* See h2.h. */
void emu_h2_setup_alpn(SSL_CTX *ctx, int offer_h2)
{
    static int on = 1;

    SSL_CTX_set_alpn_select_cb(ctx, alpn_select, offer_h2 ? &on : NULL);
}

/* See h2.h. */
int emu_h2_negotiated(SSL *ssl)
{
    const unsigned char *p = NULL;
    unsigned int n = 0;

    SSL_get0_alpn_selected(ssl, &p, &n);
    return n == 2 && memcmp(p, ALPN_H2, 2) == 0;
}

/* ------------------------------------------------------------------ */
/* Streams                                                             */
/* ------------------------------------------------------------------ */

static void wake(h2_conn *hc)
{
    eventfd_write(hc->l->wake_fd, 1);
}

/* Frees a stream nghttp2 closed and no handler uses any more. */
static void stream_free(h2_stream *st)
{
    free(st->method);
    free(st->target);
    free(st->authority);
    for (size_t i = 0; i < st->n_headers; i++) {
        free(st->headers[i].name);
        free(st->headers[i].value);
    }
    free(st->headers);
    kube_buf_free(&st->body);
    free(st->nv_text);
    kube_buf_free(&st->out);
    free(st);
    emu_counters_h2_stream(0);
}

/* Header fields HTTP/2 forbids in answers (RFC 9113 8.2.2). */
static int connection_specific(const char *name)
{
    static const char *const names[] = {"connection",        "keep-alive", "proxy-connection",
                                        "transfer-encoding", "upgrade",    NULL};
    for (size_t i = 0; names[i]; i++)
        if (!strcasecmp(name, names[i]))
            return 1;
    return 0;
}

/* Appends name (lower-cased) and value, each NUL-terminated. */
static int nv_put(kube_buf *b, const char *name, const char *value)
{
    size_t at = b->len;
    int rc = kube_buf_append(b, name, strlen(name) + 1);

    for (size_t i = at; rc == KUBE_OK && i < b->len; i++)
        if (b->data[i] >= 'A' && b->data[i] <= 'Z')
            b->data[i] = (char)(b->data[i] - 'A' + 'a');
    return rc == KUBE_OK ? kube_buf_append(b, value, strlen(value) + 1) : rc;
}

/* Hands the HEADERS of r (content_length < 0: none) to the connection
 * thread. has_body: DATA follows. */
static int stream_set_head(h2_stream *st, const emu_response *r, long content_length, int has_body)
{
    kube_buf b = KUBE_BUF_INIT;
    emu_fields f;
    char num[24];
    int rc;

    emu_response_fields(r, &f);
    snprintf(num, sizeof(num), "%d", r->status);
    rc = nv_put(&b, ":status", num);
    for (size_t i = 0; rc == KUBE_OK && i < f.n; i++)
        if (!connection_specific(f.v[i].name))
            rc = nv_put(&b, f.v[i].name, f.v[i].value);
    snprintf(num, sizeof(num), "%ld", content_length);
    if (rc == KUBE_OK && content_length >= 0)
        rc = nv_put(&b, "content-length", num);
    if (rc != KUBE_OK) {
        kube_buf_free(&b);
        return rc;
    }
    pthread_mutex_lock(&st->hc->mu);
    free(st->nv_text);
    st->nv_len = b.len;
    st->nv_text = kube_buf_take(&b);
    st->has_body = has_body;
    rc = st->nv_text ? KUBE_OK : KUBE_ENOMEM; /* the loop takes nv_text once woken */
    pthread_mutex_unlock(&st->hc->mu);
    wake(st->hc);
    return rc;
}

/* Queues a whole (buffered) answer: its HEADERS and its body, ended. */
static int stream_answer(h2_stream *st, emu_response *r, int head_only)
{
    int has_body;
    long length;

    if (r->status == 0)
        emu_response_status(r, 500, "InternalError", "no answer", NULL);
    has_body = r->body.len > 0 && !head_only;
    length = (long)r->body.len;
    pthread_mutex_lock(&st->hc->mu);
    if (has_body) {
        kube_buf_free(&st->out);
        st->out = r->body;
        memset(&r->body, 0, sizeof(r->body));
    }
    st->eof = 1;
    pthread_mutex_unlock(&st->hc->mu);
    return stream_set_head(st, r, length, has_body);
}

/* ---- the sink of a stream's handler ---- */

static int sink_begin(void *ctx, const emu_response *r)
{
    return stream_set_head(ctx, r, -1, 1);
}

/* Appends body bytes; waits while more than OUT_HIGH_WATER is unsent
 * (the client's flow control holds them). KUBE_EIO once the stream closed. */
static int sink_write(void *ctx, const void *data, size_t n)
{
    h2_stream *st = ctx;
    h2_conn *hc = st->hc;
    int rc = KUBE_OK;

    pthread_mutex_lock(&hc->mu);
    while (!st->closed && st->out.len - st->out_off > OUT_HIGH_WATER)
        pthread_cond_wait(&hc->room, &hc->mu);
    if (st->closed)
        rc = KUBE_EIO;
    else
        rc = kube_buf_append(&st->out, data, n);
    pthread_mutex_unlock(&hc->mu);
    wake(hc);
    return rc;
}

/* Strips HTTP/1.1 chunk framing ("<hex>\r\n<data>\r\n"...) from whole
 * chunks the handler made itself. */
static int sink_write_framed(void *ctx, const void *data, size_t n)
{
    const char *p = data, *end = p + n;
    kube_buf plain = KUBE_BUF_INIT;
    int rc = KUBE_OK;

    while (rc == KUBE_OK && p < end) {
        char *eol;
        unsigned long long size = strtoull(p, &eol, 16);
        if (eol == p || end - eol < 2 || (unsigned long long)(end - eol - 2) < size + 2)
            rc = KUBE_EINVAL;
        else
            rc = kube_buf_append(&plain, eol + 2, (size_t)size);
        p = rc == KUBE_OK ? eol + 2 + size + 2 : end;
    }
    if (rc == KUBE_OK && plain.len)
        rc = sink_write(ctx, plain.data, plain.len);
    kube_buf_free(&plain);
    return rc;
}

/* Ends the body: END_STREAM follows the last bytes. */
static int sink_end(void *ctx)
{
    h2_stream *st = ctx;

    pthread_mutex_lock(&st->hc->mu);
    st->eof = 1;
    pthread_mutex_unlock(&st->hc->mu);
    wake(st->hc);
    return KUBE_OK;
}

/* 1 once the client reset the stream or the server stops. */
static int sink_should_stop(void *ctx)
{
    h2_stream *st = ctx;
    int stop;

    pthread_mutex_lock(&st->hc->mu);
    stop = st->closed;
    pthread_mutex_unlock(&st->hc->mu);
    return stop || emu_server_stopping(st->hc->l->server);
}

static const emu_sink_ops h2_sink = {sink_begin, sink_write, sink_write_framed, sink_end,
                                     sink_should_stop};

/* A fault's "reset" or "stall": the connection ends with no answer on any
 * stream, as when the server crashed. */
static void abort_connection(h2_conn *hc)
{
    pthread_mutex_lock(&hc->mu);
    hc->abort = 1;
    pthread_mutex_unlock(&hc->mu);
}

static int aborted(h2_conn *hc)
{
    int v;

    pthread_mutex_lock(&hc->mu);
    v = hc->abort;
    pthread_mutex_unlock(&hc->mu);
    return v;
}

/* The handler (a pooled thread): the stream's request through the
 * pipeline. st is not touched once done is set; hc lives until every
 * handler has returned (conn_drain). */
static void stream_main(void *arg)
{
    h2_stream *st = arg;
    h2_conn *hc = st->hc;
    const emu_h2_link *l = st->hc->l;
    emu_request req = {0};
    emu_response resp = {0};
    char *path = NULL, *query = NULL;
    int64_t start = kube_now_ms();

    if (emu_target_split(st->target, &path, &query) == KUBE_OK) {
        req = (emu_request){.method = st->method,
                            .target = st->target,
                            .path = path,
                            .query = query,
                            .headers = st->headers,
                            .n_headers = st->n_headers,
                            .body = st->body.data ? st->body.data : "",
                            .body_len = st->body.len,
                            .peer_cert = l->peer,
                            .remote_addr = l->remote,
                            .conn = l->conn,
                            .server = l->server,
                            .sink = &h2_sink,
                            .sink_ctx = st};
        emu_request_serve(&req, &resp);
    } else {
        emu_response_status(&resp, 500, "InternalError", kube_strerror(KUBE_ENOMEM), NULL);
    }
    if (resp.abort)
        abort_connection(st->hc);
    else if (resp.streamed)
        sink_end(st);
    else
        stream_answer(st, &resp, !strcmp(st->method, "HEAD"));
    if (req.method)
        emu_request_finish(&req, &resp, start);
    else
        emu_response_clear(&resp);
    free(path);
    free(query);
    pthread_mutex_lock(&hc->mu);
    st->done = 1;
    pthread_cond_broadcast(&hc->room);
    pthread_mutex_unlock(&hc->mu);
    wake(hc);
    pthread_mutex_lock(&hc->mu);
    hc->handlers--;
    pthread_cond_broadcast(&hc->room);
    pthread_mutex_unlock(&hc->mu);
}

/* Answers a request the pipeline never sees (431, 413, 400) from the
 * connection thread. */
static void stream_refuse(h2_stream *st, size_t max_body)
{
    emu_response r = {0};
    char msg[128];

    if (st->headers_too_large) {
        emu_response_text(&r, 431, "431 Request Header Fields Too Large");
    } else if (st->body_too_large) {
        snprintf(msg, sizeof(msg), "Request entity too large: limit is %zu", max_body);
        emu_response_status(&r, 413, "RequestEntityTooLarge", msg, NULL);
    } else {
        emu_response_text(&r, 400, "400 Bad Request");
    }
    stream_answer(st, &r, 0);
    emu_response_clear(&r);
    st->done = 1;
}

/* The request is complete: run it on a thread of its own. */
static void stream_start(h2_conn *hc, h2_stream *st)
{
    if (st->headers_too_large || st->body_too_large || !st->method || !st->target ||
        st->target[0] != '/') {
        stream_refuse(st, hc->l->server->cfg.max_body);
        return;
    }
    pthread_mutex_lock(&hc->mu);
    hc->handlers++;
    pthread_mutex_unlock(&hc->mu);
    st->started = emu_spawn(stream_main, st, STREAM_STACK) == KUBE_OK;
    if (!st->started) {
        pthread_mutex_lock(&hc->mu);
        hc->handlers--;
        pthread_mutex_unlock(&hc->mu);
        st->done = st->head_sent = 1;
        nghttp2_submit_rst_stream(hc->session, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_REFUSED_STREAM);
    }
}

/* ------------------------------------------------------------------ */
/* nghttp2 callbacks (connection thread)                               */
/* ------------------------------------------------------------------ */

static ssize_t data_read(nghttp2_session *session, int32_t id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    h2_stream *st = src->ptr;
    h2_conn *hc = ud;
    size_t avail, n;

    (void)session;
    (void)id;
    pthread_mutex_lock(&hc->mu);
    avail = st->out.len - st->out_off;
    n = avail < length ? avail : length;
    if (n)
        memcpy(buf, st->out.data + st->out_off, n);
    st->out_off += n;
    if (st->out_off == st->out.len) {
        kube_buf_reset(&st->out);
        st->out_off = 0;
    } else if (st->out_off > OUT_HIGH_WATER) { /* keep the buffer bounded */
        memmove(st->out.data, st->out.data + st->out_off, st->out.len - st->out_off);
        st->out.len -= st->out_off;
        st->out_off = 0;
    }
    if (n == avail && st->eof)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    else if (n == 0)
        st->deferred = 1;
    if (n)
        pthread_cond_broadcast(&hc->room);
    pthread_mutex_unlock(&hc->mu);
    return n == 0 && !(*flags & NGHTTP2_DATA_FLAG_EOF) ? NGHTTP2_ERR_DEFERRED : (ssize_t)n;
}

/* A new request stream: its state, attached to the session's stream. */
static int on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *ud)
{
    h2_conn *hc = ud;
    h2_stream *st;

    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    st = calloc(1, sizeof(*st));
    if (!st)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    st->hc = hc;
    st->id = frame->hd.stream_id;
    st->next = hc->streams;
    hc->streams = st;
    emu_counters_h2_stream(1);
    return nghttp2_session_set_stream_user_data(session, st->id, st) == 0
               ? 0
               : NGHTTP2_ERR_CALLBACK_FAILURE;
}

/* Copies one request header; past EMU_MAX_HEADERS the stream gets 431. */
static int add_header(h2_stream *st, const char *name, size_t nlen, const char *value, size_t vlen)
{
    emu_header *h;

    if (st->n_headers >= EMU_MAX_HEADERS) {
        st->headers_too_large = 1;
        return 0;
    }
    h = realloc(st->headers, (st->n_headers + 1) * sizeof(*h));
    if (!h)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    st->headers = h;
    h[st->n_headers].name = strndup(name, nlen);
    h[st->n_headers].value = strndup(value, vlen);
    st->n_headers++;
    return h[st->n_headers - 1].name && h[st->n_headers - 1].value ? 0
                                                                   : NGHTTP2_ERR_CALLBACK_FAILURE;
}

/* :method, :path, :authority; ":scheme" is https by construction. */
static int set_pseudo(h2_stream *st, const char *name, const char *value, size_t vlen)
{
    char **slot = !strcmp(name, ":method")      ? &st->method
                  : !strcmp(name, ":path")      ? &st->target
                  : !strcmp(name, ":authority") ? &st->authority
                                                : NULL;

    if (!slot)
        return 0;
    free(*slot);
    *slot = strndup(value, vlen);
    return *slot ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE;
}

/* One request header field (pseudo-headers included), counted against
 * EMU_MAX_HEADER_BYTES. */
static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
                     size_t nlen, const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
    h2_stream *st = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);

    (void)flags;
    (void)ud;
    if (!st || frame->hd.type != NGHTTP2_HEADERS || st->headers_too_large)
        return 0;
    st->header_bytes += nlen + vlen + 32; /* RFC 7541 4.1 field size */
    if (st->header_bytes > EMU_MAX_HEADER_BYTES) {
        st->headers_too_large = 1;
        return 0;
    }
    if (nlen && name[0] == ':')
        return set_pseudo(st, (const char *)name, (const char *)value, vlen);
    return add_header(st, (const char *)name, nlen, (const char *)value, vlen);
}

/* Request body bytes; past --max-body-bytes they are dropped (413). */
static int on_data(nghttp2_session *session, uint8_t flags, int32_t id, const uint8_t *data,
                   size_t len, void *ud)
{
    h2_stream *st = nghttp2_session_get_stream_user_data(session, id);
    h2_conn *hc = ud;

    (void)flags;
    if (!st || st->body_too_large)
        return 0;
    if (st->body.len + len > hc->l->server->cfg.max_body) {
        st->body_too_large = 1;
        kube_buf_free(&st->body);
        return 0;
    }
    return kube_buf_append(&st->body, data, len) == KUBE_OK ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE;
}

/* Go's server hands the handler r.Host from :authority: the pipeline sees
 * it as a Host header (the aggregator forwards it as X-Forwarded-Host). */
static int add_host(h2_stream *st)
{
    for (size_t i = 0; i < st->n_headers; i++)
        if (!strcmp(st->headers[i].name, "host"))
            return 0;
    return st->authority ? add_header(st, "host", 4, st->authority, strlen(st->authority)) : 0;
}

/* END_STREAM from the client: the request is complete, start it. */
static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *ud)
{
    h2_stream *st;

    if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
        !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
        return 0;
    st = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (!st || st->started || st->done)
        return 0;
    if (add_host(st) != 0)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    stream_start(ud, st);
    return 0;
}

/* The stream ended (answered, or reset by the client): its handler sees
 * it through should_stop and failing writes. */
static int on_stream_close(nghttp2_session *session, int32_t id, uint32_t error_code, void *ud)
{
    h2_stream *st = nghttp2_session_get_stream_user_data(session, id);
    h2_conn *hc = ud;

    if (!st)
        return 0;
    if (error_code != NGHTTP2_NO_ERROR)
        KLOG_V(4, "h2 %s: stream %d reset (%s)", hc->l->remote, id,
               nghttp2_http2_strerror(error_code));
    pthread_mutex_lock(&hc->mu);
    st->closed = 1;
    pthread_cond_broadcast(&hc->room);
    pthread_mutex_unlock(&hc->mu);
    return 0;
}

/* ------------------------------------------------------------------ */
/* The connection loop                                                 */
/* ------------------------------------------------------------------ */

/* Submits the HEADERS in text ("name\0value\0"...), with the stream's
 * data provider when DATA follows. */
static void submit_head(h2_conn *hc, h2_stream *st, char *text, size_t len, int has_body)
{
    nghttp2_nv nva[EMU_MAX_RESP_HEADERS + 6];
    nghttp2_data_provider prd = {.source.ptr = st, .read_callback = data_read};
    size_t n = 0;
    int rv;

    for (size_t at = 0; at < len && n < sizeof(nva) / sizeof(nva[0]);) {
        char *name = text + at, *value = name + strlen(name) + 1;
        nva[n++] = (nghttp2_nv){(uint8_t *)name, (uint8_t *)value, strlen(name), strlen(value),
                                NGHTTP2_NV_FLAG_NONE};
        at = (size_t)(value - text) + strlen(value) + 1;
    }
    rv = nghttp2_submit_response(hc->session, st->id, nva, n, has_body ? &prd : NULL);
    st->head_sent = 1;
    if (rv != 0) {
        KLOG_WARN("h2 %s: stream %d: %s", hc->l->remote, st->id, nghttp2_strerror(rv));
        nghttp2_submit_rst_stream(hc->session, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_INTERNAL_ERROR);
    }
}

/* Submits what handlers queued: HEADERS (with the data provider), resumed
 * DATA; joins finished handlers and frees closed streams. */
static void streams_step(h2_conn *hc)
{
    h2_stream **pp = &hc->streams;

    while (*pp) {
        h2_stream *st = *pp;
        char *nv_text;
        size_t nv_len;
        int resume, done, closed, has_body;
        pthread_mutex_lock(&hc->mu);
        nv_text = st->nv_text;
        nv_len = st->nv_len;
        st->nv_text = NULL;
        resume = st->deferred && (st->out.len > st->out_off || st->eof);
        if (resume)
            st->deferred = 0;
        done = st->done;
        closed = st->closed;
        has_body = st->has_body;
        pthread_mutex_unlock(&hc->mu);
        if (nv_text && !closed)
            submit_head(hc, st, nv_text, nv_len, has_body);
        free(nv_text);
        if (resume && !closed)
            nghttp2_session_resume_data(hc->session, st->id);
        if (done && !closed && !st->head_sent) /* the handler could not answer */
            nghttp2_submit_rst_stream(hc->session, NGHTTP2_FLAG_NONE, st->id,
                                      NGHTTP2_INTERNAL_ERROR);
        st->head_sent |= done;
        if (closed && (done || !st->started)) {
            *pp = st->next;
            stream_free(st);
        } else {
            pp = &st->next;
        }
    }
}

/* Feeds what TLS has to the session. */
static int conn_recv(h2_conn *hc)
{
    uint8_t buf[16384];

    for (;;) {
        int r = SSL_read(hc->l->ssl, buf, sizeof(buf));
        ssize_t used;
        if (r <= 0) {
            int err = SSL_get_error(hc->l->ssl, r);
            if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE)
                return KUBE_OK;
            return err == SSL_ERROR_ZERO_RETURN ? KUBE_ECANCELED : KUBE_EIO;
        }
        hc->active_ms = kube_now_ms();
        used = nghttp2_session_mem_recv(hc->session, buf, (size_t)r);
        if (used < 0) {
            KLOG_V(2, "h2 %s: %s", hc->l->remote, nghttp2_strerror((int)used));
            return KUBE_EIO;
        }
    }
}

/* Serializes pending frames and writes as much as TLS takes now. */
static int conn_send(h2_conn *hc)
{
    for (;;) {
        while (hc->wbuf.len - hc->woff < WBUF_MAX) {
            const uint8_t *data;
            ssize_t n = nghttp2_session_mem_send(hc->session, &data);
            if (n < 0)
                return KUBE_EIO;
            if (n == 0)
                break;
            if (hc->wbuf.len == hc->woff)
                hc->wrote_ms = kube_now_ms();
            if (kube_buf_append(&hc->wbuf, data, (size_t)n) != KUBE_OK)
                return KUBE_ENOMEM;
        }
        if (hc->wbuf.len == hc->woff)
            return KUBE_OK;
        {
            int w = SSL_write(hc->l->ssl, hc->wbuf.data + hc->woff, (int)(hc->wbuf.len - hc->woff));
            int err = w > 0 ? SSL_ERROR_NONE : SSL_get_error(hc->l->ssl, w);
            if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ)
                return KUBE_OK;
            if (err != SSL_ERROR_NONE)
                return KUBE_EIO;
            hc->woff += (size_t)w;
            hc->wrote_ms = kube_now_ms();
            if (hc->woff == hc->wbuf.len) {
                kube_buf_reset(&hc->wbuf);
                hc->woff = 0;
            }
        }
    }
}

/* Waits for the socket (readable, or writable when output is pending) or
 * a wake-up, at most timeout_ms. */
static void conn_wait(h2_conn *hc, int timeout_ms)
{
    struct pollfd pfd[2] = {{.fd = hc->l->fd, .events = POLLIN},
                            {.fd = hc->l->wake_fd, .events = POLLIN}};
    eventfd_t v;

    if (hc->wbuf.len > hc->woff)
        pfd[0].events |= POLLOUT;
    if (SSL_pending(hc->l->ssl) > 0)
        timeout_ms = 0;
    if (poll(pfd, 2, timeout_ms) > 0 && (pfd[1].revents & POLLIN))
        eventfd_read(hc->l->wake_fd, &v);
}

/* GOAWAY once: when the server stops, or the connection idled too long. */
static int want_goaway(h2_conn *hc)
{
    const emu_server *s = hc->l->server;

    return emu_server_stopping(s) ||
           (!hc->streams && kube_now_ms() - hc->active_ms > s->cfg.idle_timeout_ms);
}

/* Drives the session until both sides are done, the transport breaks, the
 * peer stops reading, or the GOAWAY grace ran out. Returns KUBE_OK or the
 * transport's error. */
static int conn_loop(h2_conn *hc)
{
    int64_t goaway_ms = 0;
    int rc = KUBE_OK;

    while (rc == KUBE_OK) {
        streams_step(hc);
        if (aborted(hc)) { /* before anything queued reaches the peer */
            rc = KUBE_EIO;
            break;
        }
        if (!goaway_ms && want_goaway(hc)) {
            nghttp2_submit_goaway(hc->session, NGHTTP2_FLAG_NONE,
                                  nghttp2_session_get_last_proc_stream_id(hc->session),
                                  NGHTTP2_NO_ERROR, NULL, 0);
            goaway_ms = kube_now_ms();
        }
        rc = conn_send(hc);
        if (rc != KUBE_OK)
            break;
        if (!nghttp2_session_want_read(hc->session) && !nghttp2_session_want_write(hc->session) &&
            hc->wbuf.len == hc->woff)
            break;
        if (goaway_ms && kube_now_ms() - goaway_ms > GOAWAY_GRACE_MS)
            break;
        if (hc->wbuf.len > hc->woff && kube_now_ms() - hc->wrote_ms > WRITE_TIMEOUT_MS) {
            rc = KUBE_ETIMEDOUT; /* as SO_SNDTIMEO ends an HTTP/1.1 connection */
            break;
        }
        conn_wait(hc, 200);
        rc = conn_recv(hc);
    }
    return rc == KUBE_ECANCELED ? KUBE_OK : rc;
}

/* Ends every stream (their handlers see it closed), waits until every
 * handler has returned, and frees the streams. */
static void conn_drain(h2_conn *hc)
{
    pthread_mutex_lock(&hc->mu);
    for (h2_stream *st = hc->streams; st; st = st->next)
        st->closed = 1;
    pthread_cond_broadcast(&hc->room);
    while (hc->handlers > 0)
        pthread_cond_wait(&hc->room, &hc->mu);
    pthread_mutex_unlock(&hc->mu);
    while (hc->streams) {
        h2_stream *st = hc->streams;
        hc->streams = st->next;
        stream_free(st);
    }
}

/* The server session with its callbacks and SETTINGS queued. */
static int session_new(h2_conn *hc)
{
    nghttp2_session_callbacks *cb;
    /* no SETTINGS_MAX_HEADER_LIST_SIZE: nghttp2 would refuse larger
     * streams (REFUSED_STREAM, which clients retry) where kube-apiserver
     * answers 431, as on_header() does */
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, MAX_STREAMS}};
    int rv;

    if (nghttp2_session_callbacks_new(&cb) != 0)
        return KUBE_ENOMEM;
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    rv = nghttp2_session_server_new(&hc->session, cb, hc);
    nghttp2_session_callbacks_del(cb);
    if (rv != 0)
        return KUBE_ENOMEM;
    rv = nghttp2_submit_settings(hc->session, NGHTTP2_FLAG_NONE, iv, sizeof(iv) / sizeof(iv[0]));
    return rv == 0 ? KUBE_OK : KUBE_ENOMEM;
}

/* See h2.h. */
int emu_h2_serve(const emu_h2_link *l)
{
    h2_conn hc = {.l = l, .active_ms = kube_now_ms()};
    int flags = fcntl(l->fd, F_GETFL);
    int rc;

    pthread_mutex_init(&hc.mu, NULL);
    pthread_cond_init(&hc.room, NULL);
    fcntl(l->fd, F_SETFL, flags | O_NONBLOCK);
    SSL_set_mode(l->ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    rc = session_new(&hc);
    if (rc == KUBE_OK)
        rc = conn_loop(&hc);
    conn_drain(&hc);
    nghttp2_session_del(hc.session);
    kube_buf_free(&hc.wbuf);
    fcntl(l->fd, F_SETFL, flags);
    pthread_cond_destroy(&hc.room);
    pthread_mutex_destroy(&hc.mu);
    return rc;
}
