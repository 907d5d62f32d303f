/*
 * tests/integration/extender_server.c - the tests' scheduler extender
 * server (extender_server.h).
 */
#include "extender_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kube/serving/httpreq.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"

#define ES_MAX_RECORDS 256

typedef struct es_record {
    char verb[64];
    cJSON *body;
} es_record;

struct es_server {
    int fd, port;
    SSL_CTX *tls; /* NULL: plain HTTP */
    es_handler fn;
    void *ud;
    pthread_t thread;
    atomic_int stop;
    pthread_mutex_t mu;
    es_record rec[ES_MAX_RECORDS];
    size_t n_rec;
};

static void record(es_server *s, const char *verb, const cJSON *body)
{
    pthread_mutex_lock(&s->mu);
    if (s->n_rec < ES_MAX_RECORDS) {
        kube_strlcpy(s->rec[s->n_rec].verb, verb, sizeof(s->rec[s->n_rec].verb));
        s->rec[s->n_rec].body = body ? cJSON_Duplicate(body, 1) : NULL;
        s->n_rec++;
    }
    pthread_mutex_unlock(&s->mu);
}

/* One connection: its socket and, over TLS, its session. */
typedef struct es_conn {
    int fd;
    SSL *ssl;
} es_conn;

static ssize_t conn_read(es_conn *c, char *p, size_t n)
{
    return c->ssl ? SSL_read(c->ssl, p, (int)n) : read(c->fd, p, n);
}

static ssize_t conn_write(es_conn *c, const char *p, size_t n)
{
    return c->ssl ? SSL_write(c->ssl, p, (int)n) : write(c->fd, p, n);
}

/* Reads one whole request from c into req (buf keeps its bytes). */
static int read_request(es_conn *c, kube_buf *buf, kube_httpreq_request *req)
{
    kube_httpreq_limits lim;
    char chunk[4096];
    int status, rc = 0;

    kube_httpreq_limits_default(&lim);
    lim.max_body = 16 << 20;
    while (rc == 0) {
        struct pollfd p = {c->fd, POLLIN, 0};
        ssize_t n;
        if ((!c->ssl || !SSL_pending(c->ssl)) && poll(&p, 1, 5000) <= 0)
            return KUBE_EIO;
        if ((n = conn_read(c, chunk, sizeof(chunk))) <= 0)
            return KUBE_EIO;
        if (kube_buf_append(buf, chunk, (size_t)n) != KUBE_OK)
            return KUBE_ENOMEM;
        rc = kube_httpreq_parse(buf->data, buf->len, &lim, req, &status);
    }
    return rc > 0 ? KUBE_OK : rc;
}

static void write_all(es_conn *c, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = conn_write(c, p, len);
        if (n <= 0)
            return;
        p += n;
        len -= (size_t)n;
    }
}

static void serve(es_server *s, es_conn *c)
{
    kube_buf buf = KUBE_BUF_INIT, out = KUBE_BUF_INIT;
    kube_httpreq_request req;
    cJSON *args = NULL;
    char *answer = NULL;
    int code = 200;

    memset(&req, 0, sizeof(req));
    if (read_request(c, &buf, &req) == KUBE_OK) {
        const char *verb = req.target[0] == '/' ? req.target + 1 : req.target;
        args = req.body ? cJSON_Parse(req.body) : NULL;
        record(s, verb, args);
        answer = s->fn(s->ud, verb, args, &code);
        if (kube_buf_printf(&out,
                            "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: "
                            "%zu\r\nConnection: close\r\n\r\n%s",
                            code, kube_httpreq_reason_phrase(code), answer ? strlen(answer) : 0,
                            answer ? answer : "") == KUBE_OK)
            write_all(c, out.data, out.len);
    }
    free(answer);
    cJSON_Delete(args);
    kube_httpreq_request_free(&req);
    kube_buf_free(&buf);
    kube_buf_free(&out);
}

/* Accepts c's TLS session (when s serves TLS), serves it, closes it. */
static void handle(es_server *s, int fd)
{
    es_conn c = {fd, NULL};

    if (s->tls &&
        (!(c.ssl = SSL_new(s->tls)) || !SSL_set_fd(c.ssl, fd) || SSL_accept(c.ssl) != 1)) {
        SSL_free(c.ssl);
        close(fd);
        return;
    }
    serve(s, &c);
    if (c.ssl)
        SSL_shutdown(c.ssl);
    SSL_free(c.ssl);
    close(fd);
}

static void *es_main(void *arg)
{
    es_server *s = arg;
    sigset_t pipe;

    /* a client that hung up makes writes fail with EPIPE, not kill us */
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, NULL);

    while (!atomic_load(&s->stop)) {
        struct pollfd p = {s->fd, POLLIN, 0};
        int c;
        if (poll(&p, 1, 100) <= 0)
            continue;
        if ((c = accept(s->fd, NULL, NULL)) >= 0)
            handle(s, c);
    }
    return NULL;
}

static int es_start_ctx(es_handler fn, void *ud, SSL_CTX *tls, es_server **out);

int es_start(es_handler fn, void *ud, es_server **out)
{
    return es_start_ctx(fn, ud, NULL, out);
}

int es_start_tls(es_handler fn, void *ud, const char *cert_file, const char *key_file,
                 es_server **out)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    int rc;

    if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1) {
        SSL_CTX_free(ctx);
        *out = NULL;
        return KUBE_EIO;
    }
    rc = es_start_ctx(fn, ud, ctx, out);
    if (rc != KUBE_OK)
        SSL_CTX_free(ctx);
    return rc;
}

/* Listens and starts the thread; s takes ctx on success. */
static int es_start_ctx(es_handler fn, void *ud, SSL_CTX *tls, es_server **out)
{
    es_server *s = calloc(1, sizeof(*s));
    struct sockaddr_in a;
    socklen_t len = sizeof(a);

    *out = NULL;
    if (!s)
        return KUBE_ENOMEM;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    s->fn = fn;
    s->ud = ud;
    s->tls = tls;
    pthread_mutex_init(&s->mu, NULL);
    s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s->fd, 64) != 0 ||
        getsockname(s->fd, (struct sockaddr *)&a, &len) != 0 ||
        pthread_create(&s->thread, NULL, es_main, s) != 0) {
        if (s->fd >= 0)
            close(s->fd);
        pthread_mutex_destroy(&s->mu);
        free(s);
        return KUBE_EIO;
    }
    s->port = ntohs(a.sin_port);
    *out = s;
    return KUBE_OK;
}

int es_port(const es_server *s)
{
    return s->port;
}

void es_stop(es_server *s)
{
    if (!s)
        return;
    atomic_store(&s->stop, 1);
    pthread_join(s->thread, NULL);
    close(s->fd);
    for (size_t i = 0; i < s->n_rec; i++)
        cJSON_Delete(s->rec[i].body);
    pthread_mutex_destroy(&s->mu);
    SSL_CTX_free(s->tls);
    free(s);
}

int es_count(es_server *s, const char *verb)
{
    int n = 0;

    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->n_rec; i++)
        n += strcmp(s->rec[i].verb, verb) == 0;
    pthread_mutex_unlock(&s->mu);
    return n;
}

cJSON *es_last(es_server *s, const char *verb)
{
    cJSON *copy = NULL;

    pthread_mutex_lock(&s->mu);
    for (size_t i = s->n_rec; i-- > 0 && !copy;)
        if (strcmp(s->rec[i].verb, verb) == 0 && s->rec[i].body)
            copy = cJSON_Duplicate(s->rec[i].body, 1);
    pthread_mutex_unlock(&s->mu);
    return copy;
}
