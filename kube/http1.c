/*
 * kube/http1.c - a lean HTTP/1.1 keep-alive client over OpenSSL (contract in
 * kube/http1.h).
 */
#include "kube/http1.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kube/errors.h"

#define H1_POOL_MAX 16          /* idle connections kept */
#define H1_HEAD_MAX (64 * 1024) /* status line + headers */
#define H1_SLICE_MS 200         /* longest wait between cancel checks */
#define H1_READ_CHUNK 16384
#define H1_EOF 1                /* h1_fill: the peer closed the connection */

typedef struct h1_conn {
    int fd;
    SSL *ssl; /* NULL for plain http */
    char *in; /* bytes read but not consumed */
    size_t in_len, in_cap;
} h1_conn;

struct kube_h1 {
    int tls;
    char *host, *verify_name, *host_header;
    char port[8];
    int verify_is_ip;
    long connect_timeout_ms;
    SSL_CTX *ctx;
    pthread_mutex_t pool_lock;
    h1_conn *idle[H1_POOL_MAX];
    size_t n_idle;
};

/* One exchange's deadline, cancel flag and error text. */
typedef struct h1_call {
    int64_t deadline_ms;
    atomic_int *cancel;
    char *err;
    size_t errlen;
    int got_bytes; /* a byte of the answer arrived */
} h1_call;

/* What the head of an answer says about its body and connection. */
typedef struct h1_head {
    long code;
    int chunked;
    int64_t length; /* -1: not given */
    int keep_alive;
    long retry_after_s;
} h1_head;

/* Records why (the first reason wins) and returns rc. */
static int h1_fail(h1_call *call, int rc, const char *what)
{
    if (call->err && call->errlen && !call->err[0])
        snprintf(call->err, call->errlen, "%s", what);
    return rc;
}

/* ---- a socket BIO that never raises SIGPIPE ----------------------------- */

static BIO_METHOD *h1_bio_method;
static pthread_once_t h1_bio_once = PTHREAD_ONCE_INIT;

static int h1_bio_fd(BIO *b)
{
    return (int)(intptr_t)BIO_get_data(b);
}

static int h1_bio_write(BIO *b, const char *data, int n)
{
    ssize_t w = send(h1_bio_fd(b), data, (size_t)n, MSG_NOSIGNAL);

    BIO_clear_retry_flags(b);
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        BIO_set_retry_write(b);
    return (int)w;
}

static int h1_bio_read(BIO *b, char *out, int n)
{
    ssize_t r = recv(h1_bio_fd(b), out, (size_t)n, 0);

    BIO_clear_retry_flags(b);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        BIO_set_retry_read(b);
    return (int)r;
}

static long h1_bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b;
    (void)num;
    (void)ptr;
    return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static void h1_bio_init(void)
{
    h1_bio_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "kube_h1 socket");
    if (!h1_bio_method)
        return;
    BIO_meth_set_write(h1_bio_method, h1_bio_write);
    BIO_meth_set_read(h1_bio_method, h1_bio_read);
    BIO_meth_set_ctrl(h1_bio_method, h1_bio_ctrl);
}

/* A BIO over fd (which stays the caller's to close), or NULL. */
static BIO *h1_bio_new(int fd)
{
    BIO *b;

    pthread_once(&h1_bio_once, h1_bio_init);
    if (!h1_bio_method || !(b = BIO_new(h1_bio_method)))
        return NULL;
    BIO_set_data(b, (void *)(intptr_t)fd);
    BIO_set_init(b, 1);
    return b;
}

/* ---- TLS context ------------------------------------------------------ */

/* Peer verification: none when insecure, else the material's CA or the
 * system's trust store; then the client identity. */
static int h1_trust(SSL_CTX *ctx, const kube_h1_target *t, char *err, size_t errlen)
{
    if (t->insecure) {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    } else {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        if (!kube_tls_has_ca(t->material) && SSL_CTX_set_default_verify_paths(ctx) != 1) {
            kube_tls_error(err, errlen, "the system's trust store");
            return KUBE_ECONFIG;
        }
    }
    if (t->material && !kube_tls_apply(t->material, ctx))
        return KUBE_ENOMEM;
    return KUBE_OK;
}

static int h1_context(kube_h1 *h, const kube_h1_target *t, char *err, size_t errlen)
{
    static const unsigned char alpn[] = "\x08http/1.1";

    h->ctx = SSL_CTX_new(TLS_client_method());
    if (!h->ctx)
        return KUBE_ENOMEM;
    SSL_CTX_set_min_proto_version(h->ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(h->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_read_ahead(h->ctx, 1); /* one recv for several records, not two per record */
    if (SSL_CTX_set_alpn_protos(h->ctx, alpn, sizeof(alpn) - 1) != 0)
        return KUBE_ENOMEM;
    return h1_trust(h->ctx, t, err, errlen);
}

/* ---- the client --------------------------------------------------------- */

static int h1_is_ip(const char *s)
{
    unsigned char a[sizeof(struct in6_addr)];

    return inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1;
}

/* "Host: h:port\r\n", with brackets around an IPv6 literal; NULL when out
 * of memory. */
static char *h1_host_header(const char *host, const char *port)
{
    kube_buf b = KUBE_BUF_INIT;
    int v6 = strchr(host, ':') != NULL;

    if (kube_buf_printf(&b, "Host: %s%s%s:%s\r\n", v6 ? "[" : "", host, v6 ? "]" : "", port) !=
        KUBE_OK)
        return NULL;
    return kube_buf_take(&b);
}

int kube_h1_new(const kube_h1_target *t, kube_h1 **out, char *err, size_t errlen)
{
    kube_h1 *h;
    int rc = KUBE_OK;

    *out = NULL;
    if (!t || !t->host || t->port <= 0 || t->port > 65535)
        return KUBE_EINVAL;
    h = calloc(1, sizeof(*h));
    if (!h)
        return KUBE_ENOMEM;
    pthread_mutex_init(&h->pool_lock, NULL);
    h->tls = t->tls;
    h->connect_timeout_ms = t->connect_timeout_ms > 0 ? t->connect_timeout_ms : 10000;
    snprintf(h->port, sizeof(h->port), "%d", t->port);
    h->host = strdup(t->host);
    h->verify_name = strdup(t->verify_name ? t->verify_name : t->host);
    h->host_header = h1_host_header(t->host, h->port);
    if (!h->host || !h->verify_name || !h->host_header)
        rc = KUBE_ENOMEM;
    if (rc == KUBE_OK)
        h->verify_is_ip = h1_is_ip(h->verify_name);
    if (rc == KUBE_OK && h->tls)
        rc = h1_context(h, t, err, errlen);
    if (rc != KUBE_OK) {
        kube_h1_free(h);
        return rc;
    }
    *out = h;
    return KUBE_OK;
}

static void h1_conn_close(h1_conn *k)
{
    if (!k)
        return;
    SSL_free(k->ssl); /* and its BIO; no close_notify: the socket just closes */
    if (k->fd >= 0)
        close(k->fd);
    free(k->in);
    free(k);
}

void kube_h1_free(kube_h1 *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->n_idle; i++)
        h1_conn_close(h->idle[i]);
    SSL_CTX_free(h->ctx);
    pthread_mutex_destroy(&h->pool_lock);
    free(h->host);
    free(h->verify_name);
    free(h->host_header);
    free(h);
}

/* ---- waiting ------------------------------------------------------------ */

/* Waits until fd is ready for events, in slices so *cancel is seen.
 * Returns KUBE_OK, KUBE_ETIMEDOUT, KUBE_ECANCELED or KUBE_EIO. */
static int h1_wait(h1_call *call, int fd, short events)
{
    for (;;) {
        struct pollfd p = {fd, events, 0};
        int64_t left = call->deadline_ms - kube_now_ms();
        int r;

        if (call->cancel && atomic_load(call->cancel))
            return h1_fail(call, KUBE_ECANCELED, "client shut down");
        if (left <= 0)
            return h1_fail(call, KUBE_ETIMEDOUT, "timed out");
        r = poll(&p, 1, (int)(left < H1_SLICE_MS ? left : H1_SLICE_MS));
        if (r > 0)
            return KUBE_OK;
        if (r < 0 && errno != EINTR)
            return h1_fail(call, KUBE_EIO, strerror(errno));
    }
}

/* ---- connecting --------------------------------------------------------- */

/* A socket connected to ai, or -1. */
static int h1_socket_connect(h1_call *call, const struct addrinfo *ai)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    int one = 1, soerr = 0;
    socklen_t len = sizeof(soerr);

    if (fd < 0)
        return -1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
        return fd;
    if (errno == EINPROGRESS && h1_wait(call, fd, POLLOUT) == KUBE_OK &&
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 && soerr == 0)
        return fd;
    close(fd);
    return -1;
}

/* A TCP socket connected to the host (each address tried in turn, within
 * the connect timeout), or -1 with the reason in call->err. */
static int h1_tcp(kube_h1 *h, h1_call *call)
{
    struct addrinfo hints, *res = NULL;
    int fd = -1, gai;
    int64_t deadline = call->deadline_ms;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    gai = getaddrinfo(h->host, h->port, &hints, &res);
    if (gai != 0) {
        if (call->err && call->errlen)
            snprintf(call->err, call->errlen, "resolving %s: %s", h->host, gai_strerror(gai));
        return -1;
    }
    if (kube_now_ms() + h->connect_timeout_ms < deadline)
        call->deadline_ms = kube_now_ms() + h->connect_timeout_ms;
    for (const struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next)
        fd = h1_socket_connect(call, ai);
    call->deadline_ms = deadline;
    freeaddrinfo(res);
    if (fd < 0 && call->err && call->errlen && !call->err[0])
        snprintf(call->err, call->errlen, "connecting to %s port %s failed", h->host, h->port);
    return fd;
}

/* Runs an SSL operation until it completes, waiting as OpenSSL asks.
 * Returns the operation's positive result, 0 for an end of stream, or a
 * negative KUBE_E* code. */
static int h1_ssl_io(h1_call *call, h1_conn *k, int (*op)(SSL *, void *, int), void *buf,
                     int n)
{
    for (;;) {
        int r = op(k->ssl, buf, n), e, rc;

        if (r > 0)
            return r;
        e = SSL_get_error(k->ssl, r);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
            rc = h1_wait(call, k->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT);
            if (rc != KUBE_OK)
                return rc;
            continue;
        }
        if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)) {
            ERR_clear_error();
            return 0; /* closed, with or without close_notify */
        }
        kube_tls_error(call->err, call->errlen, "TLS");
        return KUBE_EIO;
    }
}

static int h1_op_handshake(SSL *ssl, void *buf, int n)
{
    (void)buf;
    (void)n;
    return SSL_connect(ssl);
}

static int h1_op_read(SSL *ssl, void *buf, int n)
{
    return SSL_read(ssl, buf, n);
}

static int h1_op_write(SSL *ssl, void *buf, int n)
{
    return SSL_write(ssl, buf, n);
}

/* Sets SNI and the name the peer certificate must carry. */
static int h1_ssl_names(kube_h1 *h, SSL *ssl)
{
    if (h->verify_is_ip)
        return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), h->verify_name) == 1;
    return SSL_set_tlsext_host_name(ssl, h->verify_name) == 1 &&
           SSL_set1_host(ssl, h->verify_name) == 1;
}

static int h1_tls(kube_h1 *h, h1_call *call, h1_conn *k)
{
    BIO *bio = h1_bio_new(k->fd);
    long verify;
    int r;

    k->ssl = bio ? SSL_new(h->ctx) : NULL;
    if (!k->ssl) {
        BIO_free(bio);
        return h1_fail(call, KUBE_ENOMEM, "out of memory");
    }
    SSL_set_bio(k->ssl, bio, bio);
    if (!h1_ssl_names(h, k->ssl))
        return h1_fail(call, KUBE_ENOMEM, "out of memory");
    r = h1_ssl_io(call, k, h1_op_handshake, NULL, 0);
    if (r > 0)
        return KUBE_OK;
    verify = SSL_get_verify_result(k->ssl);
    if (verify != X509_V_OK && call->err && call->errlen) {
        snprintf(call->err, call->errlen, "TLS handshake with %s: certificate verify failed: %s",
                 h->verify_name, X509_verify_cert_error_string(verify));
        return KUBE_EIO;
    }
    return r < 0 ? r : h1_fail(call, KUBE_EIO, "TLS handshake: connection closed");
}

static int h1_connect(kube_h1 *h, h1_call *call, h1_conn **out)
{
    h1_conn *k = calloc(1, sizeof(*k));
    int rc = KUBE_OK;

    *out = NULL;
    if (!k)
        return KUBE_ENOMEM;
    k->fd = h1_tcp(h, call);
    if (k->fd < 0)
        rc = call->cancel && atomic_load(call->cancel) ? KUBE_ECANCELED : KUBE_EIO;
    if (rc == KUBE_OK && h->tls)
        rc = h1_tls(h, call, k);
    if (rc != KUBE_OK) {
        h1_conn_close(k);
        return rc;
    }
    *out = k;
    return KUBE_OK;
}

/* ---- the pool ----------------------------------------------------------- */

/* Whether an idle connection is still usable. A readable idle socket means
 * the server closed it, unless what arrived was only TLS housekeeping (a
 * TLS 1.3 session ticket), which a non-blocking peek consumes. */
static int h1_idle_alive(const h1_conn *k)
{
    struct pollfd p = {k->fd, POLLIN, 0};
    char c;
    int r;

    if (k->in_len != 0 || (k->ssl && SSL_has_pending(k->ssl)))
        return 0;
    if (poll(&p, 1, 0) == 0)
        return 1;
    if (!k->ssl)
        return 0;
    r = SSL_peek(k->ssl, &c, 1);
    if (r <= 0 && SSL_get_error(k->ssl, r) == SSL_ERROR_WANT_READ)
        return 1;
    ERR_clear_error();
    return 0;
}

/* A live idle connection (most recently used first), or NULL. */
static h1_conn *h1_pool_get(kube_h1 *h)
{
    for (;;) {
        h1_conn *k = NULL;

        pthread_mutex_lock(&h->pool_lock);
        if (h->n_idle > 0)
            k = h->idle[--h->n_idle];
        pthread_mutex_unlock(&h->pool_lock);
        if (!k || h1_idle_alive(k))
            return k;
        h1_conn_close(k);
    }
}

static void h1_pool_put(kube_h1 *h, h1_conn *k)
{
    pthread_mutex_lock(&h->pool_lock);
    if (h->n_idle < H1_POOL_MAX) {
        h->idle[h->n_idle++] = k;
        k = NULL;
    }
    pthread_mutex_unlock(&h->pool_lock);
    h1_conn_close(k);
}

/* ---- raw I/O on a connection ------------------------------------------- */

/* Waits for the socket after a would-block plain send/recv; other errors
 * end the exchange. */
static int h1_plain_retry(h1_call *call, h1_conn *k, short events)
{
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        return h1_fail(call, KUBE_EIO, strerror(errno));
    return h1_wait(call, k->fd, events);
}

/* One write: the count written, or a negative KUBE_E* code. */
static int h1_write_some(h1_call *call, h1_conn *k, const char *data, int n)
{
    int w, rc;

    if (k->ssl) {
        w = h1_ssl_io(call, k, h1_op_write, (void *)data, n);
        return w == 0 ? h1_fail(call, KUBE_EIO, "connection closed while sending") : w;
    }
    for (;;) {
        ssize_t s = send(k->fd, data, (size_t)n, MSG_NOSIGNAL);
        if (s >= 0)
            return (int)s;
        if ((rc = h1_plain_retry(call, k, POLLOUT)) != KUBE_OK)
            return rc;
    }
}

static int h1_write_all(h1_call *call, h1_conn *k, const char *data, size_t len)
{
    while (len > 0) {
        int w = h1_write_some(call, k, data, len > INT32_MAX ? INT32_MAX : (int)len);
        if (w < 0)
            return w;
        data += w;
        len -= (size_t)w;
    }
    return KUBE_OK;
}

/* One read into k->in: the count, 0 at end of stream, or a negative code. */
static int h1_read_some(h1_call *call, h1_conn *k)
{
    char *at = k->in + k->in_len;
    size_t room = k->in_cap - k->in_len;
    int rc;

    if (k->ssl)
        return h1_ssl_io(call, k, h1_op_read, at, room > INT32_MAX ? INT32_MAX : (int)room);
    for (;;) {
        ssize_t s = recv(k->fd, at, room, 0);
        if (s >= 0)
            return (int)s;
        if ((rc = h1_plain_retry(call, k, POLLIN)) != KUBE_OK)
            return rc;
    }
}

/* Reads more bytes into k->in. Returns KUBE_OK, H1_EOF when the peer closed
 * the connection, or a negative KUBE_E* code. */
static int h1_fill(h1_call *call, h1_conn *k)
{
    int r;

    if (k->in_cap - k->in_len < H1_READ_CHUNK) {
        size_t cap = k->in_cap ? k->in_cap * 2 : 2 * H1_READ_CHUNK;
        char *p = realloc(k->in, cap);
        if (!p)
            return KUBE_ENOMEM;
        k->in = p;
        k->in_cap = cap;
    }
    r = h1_read_some(call, k);
    if (r <= 0)
        return r < 0 ? r : H1_EOF;
    k->in_len += (size_t)r;
    call->got_bytes = 1;
    return KUBE_OK;
}

/* h1_fill where the answer must go on: the end of stream is an error
 * naming what was being read. */
static int h1_need(h1_call *call, h1_conn *k, const char *reading)
{
    char what[96];
    int rc = h1_fill(call, k);

    if (rc != H1_EOF)
        return rc;
    snprintf(what, sizeof(what), "connection closed while reading %s", reading);
    return h1_fail(call, KUBE_EIO, what);
}

/* Drops the first n buffered bytes. */
static void h1_consume(h1_conn *k, size_t n)
{
    memmove(k->in, k->in + n, k->in_len - n);
    k->in_len -= n;
}

/* ---- parsing the answer ------------------------------------------------- */

/* The end of the first line in [p, p+n) ("\r\n" or "\n"), or NULL. */
static const char *h1_line_end(const char *p, size_t n)
{
    return memchr(p, '\n', n);
}

/* Parses a non-negative decimal or (hex) number spanning [p, end) with
 * optional surrounding blanks; -1 when malformed. */
static int64_t h1_number(const char *p, const char *end, int base)
{
    char tmp[24];
    size_t n;
    char *stop;
    long long v;

    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
        end--;
    n = (size_t)(end - p);
    if (n == 0 || n >= sizeof(tmp) || !(base == 16 ? isxdigit((unsigned char)*p) : isdigit((unsigned char)*p)))
        return -1;
    memcpy(tmp, p, n);
    tmp[n] = '\0';
    errno = 0;
    v = strtoll(tmp, &stop, base);
    return errno || *stop ? -1 : v;
}

/* Whether the header value [v, end) lists token (case-insensitive). */
static int h1_value_has(const char *v, const char *end, const char *token)
{
    size_t n = strlen(token);

    for (; v + n <= end; v++)
        if (strncasecmp(v, token, n) == 0)
            return 1;
    return 0;
}

/* Applies one header line [p, end) (without the line break). */
static int h1_header(h1_head *hd, const char *p, const char *end)
{
    const char *colon = memchr(p, ':', (size_t)(end - p));
    size_t name = colon ? (size_t)(colon - p) : 0;
    const char *v = colon ? colon + 1 : NULL;

    if (!colon)
        return KUBE_EIO;
    if (name == 14 && !strncasecmp(p, "Content-Length", 14)) {
        hd->length = h1_number(v, end, 10);
        return hd->length < 0 ? KUBE_EIO : KUBE_OK;
    }
    if (name == 17 && !strncasecmp(p, "Transfer-Encoding", 17))
        hd->chunked = h1_value_has(v, end, "chunked");
    else if (name == 10 && !strncasecmp(p, "Connection", 10))
        hd->keep_alive = h1_value_has(v, end, "close") ? 0
                         : h1_value_has(v, end, "keep-alive") ? 1
                                                              : hd->keep_alive;
    else if (name == 11 && !strncasecmp(p, "Retry-After", 11)) {
        int64_t s = h1_number(v, end, 10); /* only delay-seconds, as client-go */
        hd->retry_after_s = s >= 0 && s <= INT32_MAX ? (long)s : -1;
    }
    return KUBE_OK;
}

/* Parses the head [p, p+n) (status line and headers, the blank line
 * excluded). */
static int h1_parse_head(h1_head *hd, const char *p, size_t n)
{
    const char *end = p + n, *eol = h1_line_end(p, n);
    int64_t code;

    if (!eol || n < 12 || strncmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ')
        return KUBE_EIO;
    code = h1_number(p + 9, p + 12, 10);
    if (code < 100 || code > 999)
        return KUBE_EIO;
    *hd = (h1_head){code, 0, -1, p[7] == '1', -1};
    for (p = eol + 1; p < end; p = eol + 1) {
        eol = h1_line_end(p, (size_t)(end - p));
        if (!eol)
            eol = end;
        if (h1_header(hd, p, eol) != KUBE_OK)
            return KUBE_EIO;
    }
    return KUBE_OK;
}

/* The length of the head in k->in including its blank line, or 0 if it is
 * not complete yet. *head_len receives the length without the blank line. */
static size_t h1_find_head(const h1_conn *k, size_t *head_len)
{
    for (size_t i = 0; i + 1 < k->in_len; i++) {
        if (k->in[i] != '\n')
            continue;
        if (k->in[i + 1] == '\n') {
            *head_len = i + 1;
            return i + 2;
        }
        if (k->in[i + 1] == '\r' && i + 2 < k->in_len && k->in[i + 2] == '\n') {
            *head_len = i + 1;
            return i + 3;
        }
    }
    return 0;
}

/* Reads and parses the head of the final (non-1xx) answer. */
static int h1_read_head(h1_call *call, h1_conn *k, h1_head *hd)
{
    for (;;) {
        size_t head_len = 0, total = h1_find_head(k, &head_len);
        int rc;

        if (!total) {
            if (k->in_len > H1_HEAD_MAX)
                return h1_fail(call, KUBE_EIO, "answer headers too long");
            if ((rc = h1_need(call, k, "the answer")) != KUBE_OK)
                return rc;
            continue;
        }
        if (h1_parse_head(hd, k->in, head_len) != KUBE_OK)
            return h1_fail(call, KUBE_EIO, "malformed HTTP answer");
        h1_consume(k, total);
        if (hd->code >= 200 || hd->code == 101)
            return KUBE_OK;
    }
}

/* Moves n bytes of body (reading as needed) into out. */
static int h1_body_bytes(h1_call *call, h1_conn *k, size_t n, kube_buf *out)
{
    while (n > 0) {
        size_t take = k->in_len < n ? k->in_len : n;
        int rc;

        if (take && kube_buf_append(out, k->in, take) != KUBE_OK)
            return KUBE_ENOMEM;
        h1_consume(k, take);
        n -= take;
        if (n && (rc = h1_need(call, k, "the answer body")) != KUBE_OK)
            return rc;
    }
    return KUBE_OK;
}

/* A whole line from the buffer (reading as needed): its length without the
 * line break in *len; the caller consumes *len + the break (*total). */
static int h1_line(h1_call *call, h1_conn *k, size_t *len, size_t *total)
{
    for (;;) {
        const char *eol = k->in_len ? h1_line_end(k->in, k->in_len) : NULL;
        int rc;

        if (eol) {
            *total = (size_t)(eol - k->in) + 1;
            *len = *total - 1 - (*total > 1 && eol[-1] == '\r');
            return KUBE_OK;
        }
        if (k->in_len > H1_HEAD_MAX)
            return h1_fail(call, KUBE_EIO, "chunk line too long");
        if ((rc = h1_need(call, k, "a chunk")) != KUBE_OK)
            return rc;
    }
}

static int h1_chunked(h1_call *call, h1_conn *k, kube_buf *out)
{
    for (;;) {
        size_t len, total, crlf_len, crlf_total;
        const char *semi;
        int64_t size;
        int rc = h1_line(call, k, &len, &total);

        if (rc != KUBE_OK)
            return rc;
        semi = memchr(k->in, ';', len);
        size = h1_number(k->in, semi ? semi : k->in + len, 16);
        if (size < 0)
            return h1_fail(call, KUBE_EIO, "malformed chunk size");
        h1_consume(k, total);
        if (size == 0)
            break;
        if ((rc = h1_body_bytes(call, k, (size_t)size, out)) != KUBE_OK)
            return rc;
        if ((rc = h1_line(call, k, &crlf_len, &crlf_total)) != KUBE_OK)
            return rc;
        if (crlf_len != 0)
            return h1_fail(call, KUBE_EIO, "malformed chunk");
        h1_consume(k, crlf_total);
    }
    for (;;) { /* trailers, up to the blank line */
        size_t len, total;
        int rc = h1_line(call, k, &len, &total);
        if (rc != KUBE_OK)
            return rc;
        h1_consume(k, total);
        if (len == 0)
            return KUBE_OK;
    }
}

/* Reads until the server closes: the body of an answer without length. */
static int h1_until_close(h1_call *call, h1_conn *k, kube_buf *out)
{
    for (;;) {
        int rc;

        if (k->in_len && kube_buf_append(out, k->in, k->in_len) != KUBE_OK)
            return KUBE_ENOMEM;
        k->in_len = 0;
        rc = h1_fill(call, k);
        if (rc != KUBE_OK)
            return rc == H1_EOF ? KUBE_OK : rc;
    }
}

/* Reads the body hd announces into out; *reusable says whether the
 * connection may carry another request afterwards. */
static int h1_read_body(h1_call *call, h1_conn *k, const h1_head *hd, const char *method,
                        kube_buf *out, int *reusable)
{
    *reusable = hd->keep_alive && hd->code != 101; /* 101: no longer HTTP/1.1 */
    if (!strcmp(method, "HEAD") || hd->code == 204 || hd->code == 304 || hd->code < 200)
        return KUBE_OK;
    if (hd->chunked)
        return h1_chunked(call, k, out);
    if (hd->length >= 0)
        return h1_body_bytes(call, k, (size_t)hd->length, out);
    *reusable = 0;
    return h1_until_close(call, k, out);
}

/* ---- the exchange ------------------------------------------------------- */

static int h1_needs_length(const kube_h1_request *q)
{
    return q->body || (strcmp(q->method, "GET") && strcmp(q->method, "DELETE") &&
                       strcmp(q->method, "HEAD"));
}

static int h1_format(kube_h1 *h, const kube_h1_request *q, kube_buf *req)
{
    int rc = kube_buf_printf(req, "%s %s HTTP/1.1\r\n%s%s", q->method, q->target, h->host_header,
                             q->headers ? q->headers : "");

    if (rc == KUBE_OK && h1_needs_length(q))
        rc = kube_buf_printf(req, "Content-Length: %zu\r\n", q->body ? q->len : 0);
    if (rc == KUBE_OK)
        rc = kube_buf_append(req, "\r\n", 2);
    if (rc == KUBE_OK && q->body && q->len)
        rc = kube_buf_append(req, q->body, q->len);
    return rc;
}

/* One try on connection k: send, then read the whole answer. */
static int h1_try(h1_call *call, h1_conn *k, const kube_h1_request *q, const kube_buf *req,
                  kube_h1_response *r, int *reusable)
{
    h1_head hd;
    int rc = h1_write_all(call, k, req->data, req->len);

    /* The answer cannot be there yet: wait for it rather than read first
     * (saves a read that would only say "not yet"). */
    if (rc == KUBE_OK && !(k->ssl && SSL_has_pending(k->ssl)))
        rc = h1_wait(call, k->fd, POLLIN);
    if (rc == KUBE_OK)
        rc = h1_read_head(call, k, &hd);
    if (rc == KUBE_OK)
        rc = h1_read_body(call, k, &hd, q->method, &r->body, reusable);
    if (rc == KUBE_OK) {
        r->code = hd.code;
        r->retry_after_s = hd.retry_after_s;
        *reusable = *reusable && k->in_len == 0;
    }
    return rc;
}

int kube_h1_exchange(kube_h1 *h, const kube_h1_request *q, kube_h1_response *r, char *err,
                     size_t errlen)
{
    h1_call call = {kube_now_ms() + (q->timeout_ms > 0 ? q->timeout_ms : 30000), q->cancel, err,
                    errlen, 0};
    kube_buf req = KUBE_BUF_INIT;
    int rc = h1_format(h, q, &req);

    if (err && errlen)
        err[0] = '\0';
    r->code = 0;
    r->retry_after_s = -1;
    r->connected = 0;
    for (int attempt = 0; rc == KUBE_OK; attempt++) {
        h1_conn *k = h1_pool_get(h);
        int reused = k != NULL, reusable = 0;

        if (!k && (rc = h1_connect(h, &call, &k)) != KUBE_OK)
            break;
        r->connected = 1;
        call.got_bytes = 0;
        rc = h1_try(&call, k, q, &req, r, &reusable);
        if (rc == KUBE_OK) {
            if (reusable)
                h1_pool_put(h, k);
            else
                h1_conn_close(k);
            break;
        }
        h1_conn_close(k);
        if (!(rc == KUBE_EIO && reused && !call.got_bytes && attempt == 0))
            break;
        /* The server closed a kept-alive connection under us: once more on a
         * new one. */
        kube_buf_reset(&r->body);
        if (err && errlen)
            err[0] = '\0';
        rc = KUBE_OK;
    }
    kube_buf_free(&req);
    return rc;
}
