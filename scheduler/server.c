/*
 * scheduler/server.c - the secure port (server.h) on libwebsockets' HTTP
 * server role. A self-signed certificate is generated with OpenSSL and
 * handed to libwebsockets through anonymous memory files (memfd), so it
 * never touches the disk. Connections are capped below RLIMIT_NOFILE
 * (kube/serving/lws.h) so running out of descriptors never spins the accept loop.
 */
#include "server.h"

#include <libwebsockets.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kube/serving/lws.h"
#include "kube/util/buf.h"
#include "kube/util/certkit.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"

#define CHUNK 16384
#define MAX_CONNECTIONS 1024 /* probes and scrapers; lowered to fit RLIMIT_NOFILE */
#define FD_RESERVE 128       /* informers, leader election, events, binding */
#define CT_TEXT "text/plain; charset=utf-8"
#define CT_METRICS "text/plain; version=0.0.4; charset=utf-8"

struct sched_server {
    struct lws_context *lws;
    struct lws_vhost *vhost;
    pthread_t thread;
    int running;
    atomic_int stop;
    int port;
    kube_metrics *metrics;
    int (*ready)(void *ud);
    void *ud;
    unsigned char scratch[LWS_PRE + CHUNK];
};

/* One HTTP transaction's answer. */
typedef struct pss {
    kube_buf body;
    size_t sent;
} pss;

/* ------------------------------------------------------------------ */
/* Answers                                                             */
/* ------------------------------------------------------------------ */

static int answer(sched_server *s, const char *path, int is_get, kube_buf *body, const char **ctype)
{
    *ctype = CT_TEXT;
    if (!is_get) {
        kube_buf_puts(body, "405: Method Not Allowed");
        return HTTP_STATUS_METHOD_NOT_ALLOWED;
    }
    if (!strcmp(path, "/healthz") || !strcmp(path, "/livez")) {
        kube_buf_puts(body, "ok");
        return HTTP_STATUS_OK;
    }
    if (!strcmp(path, "/readyz")) {
        if (!s->ready || s->ready(s->ud)) {
            kube_buf_puts(body, "ok");
            return HTTP_STATUS_OK;
        }
        kube_buf_puts(body, "[+]ping ok\n[-]sched-handler-sync failed: reason withheld\n"
                            "readyz check failed\n");
        return HTTP_STATUS_INTERNAL_SERVER_ERROR;
    }
    if (!strcmp(path, "/metrics")) {
        *ctype = CT_METRICS;
        if (s->metrics && kube_metrics_write(s->metrics, body) != KUBE_OK) {
            kube_buf_reset(body);
            kube_buf_puts(body, "out of memory");
            *ctype = CT_TEXT;
            return HTTP_STATUS_INTERNAL_SERVER_ERROR;
        }
        return HTTP_STATUS_OK;
    }
    kube_buf_puts(body, "404 page not found\n");
    return HTTP_STATUS_NOT_FOUND;
}

static int send_headers(struct lws *wsi, sched_server *s, int status, const char *ctype, size_t len)
{
    unsigned char *start = s->scratch + LWS_PRE, *p = start, *end = s->scratch + sizeof(s->scratch);
    static const char nosniff[] = "nosniff";

    if (lws_add_http_common_headers(wsi, (unsigned)status, ctype, (lws_filepos_t)len, &p, end) ||
        lws_add_http_header_by_name(wsi, (const unsigned char *)"x-content-type-options:",
                                    (const unsigned char *)nosniff, sizeof(nosniff) - 1, &p, end) ||
        lws_finalize_write_http_header(wsi, start, &p, end))
        return -1;
    return 0;
}

static int on_http(struct lws *wsi, sched_server *s, pss *ps, const char *path)
{
    const char *ctype;
    int is_get = lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0;
    int status;

    kube_buf_free(&ps->body);
    ps->sent = 0;
    status = answer(s, path ? path : "", is_get, &ps->body, &ctype);
    if (send_headers(wsi, s, status, ctype, ps->body.len))
        return -1;
    if (ps->body.len == 0)
        return lws_http_transaction_completed(wsi) ? -1 : 0;
    lws_callback_on_writable(wsi);
    return 0;
}

static int on_writeable(struct lws *wsi, sched_server *s, pss *ps)
{
    size_t n = ps->body.len - ps->sent;
    int final;

    if (n > CHUNK)
        n = CHUNK;
    final = ps->sent + n == ps->body.len;
    memcpy(s->scratch + LWS_PRE, ps->body.data + ps->sent, n);
    if (lws_write(wsi, s->scratch + LWS_PRE, n, final ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) <
        (int)n)
        return -1;
    ps->sent += n;
    if (!final) {
        lws_callback_on_writable(wsi);
        return 0;
    }
    kube_buf_free(&ps->body);
    return lws_http_transaction_completed(wsi) ? -1 : 0;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len)
{
    sched_server *s = lws_context_user(lws_get_context(wsi));
    pss *ps = user;

    switch (reason) {
    case LWS_CALLBACK_OPENSSL_LOAD_EXTRA_SERVER_VERIFY_CERTS:
        /* idle and half-open connections keep no 16 KiB TLS buffers */
        SSL_CTX_set_mode((SSL_CTX *)user, SSL_MODE_RELEASE_BUFFERS);
        return 0;
    case LWS_CALLBACK_HTTP:
        return on_http(wsi, s, ps, in);
    case LWS_CALLBACK_HTTP_WRITEABLE:
        return ps ? on_writeable(wsi, s, ps) : -1;
    case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
    case LWS_CALLBACK_CLOSED_HTTP:
        if (ps)
            kube_buf_free(&ps->body);
        return 0;
    default:
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    }
}

static const struct lws_protocols protocols[] = {
    {"http", callback, sizeof(pss), 0, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

/* ------------------------------------------------------------------ */
/* Self-signed certificate                                             */
/* ------------------------------------------------------------------ */

/* A self-signed ECDSA P-256 certificate for localhost and this host, and
 * its key, as PEM text (the caller's). */
static int self_signed(char **cert_pem, char **key_pem)
{
    char host[256] = "localhost", cn[128], san[640];
    kube_cert_spec spec = {cn, NULL, "serverAuth", 0, -3600, 365L * 24 * 3600, san};
    X509 *x = NULL;
    EVP_PKEY *key = NULL;
    int rc;

    if (gethostname(host, sizeof(host) - 1) != 0 || !host[0])
        kube_strlcpy(host, "localhost", sizeof(host));
    snprintf(cn, sizeof(cn), "localhost@%lld", (long long)time(NULL));
    snprintf(san, sizeof(san), "DNS:localhost,DNS:%s,IP:127.0.0.1", host);
    *cert_pem = *key_pem = NULL;
    rc = kube_certkit_issue(NULL, NULL, &spec, &x, &key);
    if (rc == KUBE_OK) {
        *cert_pem = kube_certkit_cert_pem(x);
        *key_pem = kube_certkit_key_pem(key);
    }
    X509_free(x);
    EVP_PKEY_free(key);
    if (!*cert_pem || !*key_pem) {
        free(*cert_pem);
        free(*key_pem);
        *cert_pem = *key_pem = NULL;
        return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

/* An anonymous in-memory file holding text; -1 on failure. */
static int memfile(const char *name, const char *text)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    size_t len = strlen(text), off = 0;

    if (fd < 0)
        return -1;
    while (off < len) {
        ssize_t n = write(fd, text + off, len - off);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)n;
    }
    return fd;
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */
/* ------------------------------------------------------------------ */

static int create_context(sched_server *s, const sched_server_options *o, const char *cert,
                          const char *key, char *err, size_t errlen)
{
    struct lws_context_creation_info info;

    memset(&info, 0, sizeof(info));
    /* lws also gives each vhost a client TLS context; without
     * DISABLE_OS_CA_CERTS it loads the OS CA bundle into it (~80 ms of CPU
     * at startup), yet this server makes no outbound TLS connections. */
    info.options = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT | LWS_SERVER_OPTION_EXPLICIT_VHOSTS |
                   LWS_SERVER_OPTION_DISABLE_OS_CA_CERTS;
    info.port = o->port;
    info.iface = kube_lws_is_any_address(o->bind_address) ? NULL : o->bind_address;
    info.protocols = protocols;
    info.ssl_cert_filepath = cert;
    info.ssl_private_key_filepath = key;
    info.alpn = "http/1.1";
    info.timeout_secs = 10; /* the TLS handshake, among others */
    info.keepalive_timeout = 30;
    /* at the cap lws stops polling the listener, instead of failing
     * accept() with EMFILE in a busy loop when descriptors run out (and
     * closes keep-alive connections after their answer, so clients waiting
     * in the backlog get in) */
    info.simultaneous_ssl_restriction = kube_lws_connection_limit(MAX_CONNECTIONS, FD_RESERVE);
    info.user = s;
    s->lws = lws_create_context(&info);
    if (s->lws)
        s->vhost = lws_create_vhost(s->lws, &info);
    if (!s->lws || !s->vhost) {
        snprintf(err, errlen, "cannot serve HTTPS on %s:%d",
                 kube_lws_is_any_address(o->bind_address) ? "0.0.0.0" : o->bind_address, o->port);
        return KUBE_EIO;
    }
    s->port = lws_get_vhost_listen_port(s->vhost);
    return KUBE_OK;
}

/* Creates the context with the given files, or a self-signed pair. */
static int create_tls_context(sched_server *s, const sched_server_options *o, char *err,
                              size_t errlen)
{
    char *cert_pem = NULL, *key_pem = NULL, cert_path[64], key_path[64];
    int cfd = -1, kfd = -1, rc;

    if (o->cert_file)
        return create_context(s, o, o->cert_file, o->key_file, err, errlen);
    rc = self_signed(&cert_pem, &key_pem);
    if (rc == KUBE_OK) {
        cfd = memfile("sched-cert", cert_pem);
        kfd = memfile("sched-key", key_pem);
        if (cfd < 0 || kfd < 0)
            rc = KUBE_EIO;
    }
    if (rc == KUBE_OK) {
        snprintf(cert_path, sizeof(cert_path), "/proc/self/fd/%d", cfd);
        snprintf(key_path, sizeof(key_path), "/proc/self/fd/%d", kfd);
        rc = create_context(s, o, cert_path, key_path, err, errlen);
    } else {
        snprintf(err, errlen, "cannot generate a self-signed serving certificate");
    }
    if (key_pem)
        OPENSSL_cleanse(key_pem, strlen(key_pem));
    free(cert_pem);
    free(key_pem);
    if (cfd >= 0)
        close(cfd);
    if (kfd >= 0)
        close(kfd);
    return rc;
}

static void *serve(void *arg)
{
    sched_server *s = arg;

    pthread_setname_np(pthread_self(), "sched-https");

    while (!atomic_load(&s->stop))
        if (lws_service(s->lws, 0) < 0)
            break;
    return NULL;
}

int sched_server_new(const sched_server_options *o, sched_server **out, char *err, size_t errlen)
{
    sched_server *s;
    int rc;

    *out = NULL;
    if (errlen)
        err[0] = '\0';
    if (!o || o->port < 0 || o->port > 65535 || (!o->cert_file != !o->key_file)) {
        snprintf(err, errlen, "--tls-cert-file and --tls-private-key-file go together");
        return KUBE_EINVAL;
    }
    s = calloc(1, sizeof(*s));
    if (!s)
        return KUBE_ENOMEM;
    s->metrics = o->metrics;
    s->ready = o->ready;
    s->ud = o->ud;
    kube_lws_route_logs();
    rc = create_tls_context(s, o, err, errlen);
    if (rc == KUBE_OK && pthread_create(&s->thread, NULL, serve, s) != 0)
        rc = KUBE_ENOMEM;
    if (rc != KUBE_OK) {
        sched_server_free(s);
        return rc;
    }
    s->running = 1;
    KLOG_INFO("serving securely on %s:%d",
              kube_lws_is_any_address(o->bind_address) ? "[::]" : o->bind_address, s->port);
    *out = s;
    return KUBE_OK;
}

int sched_server_port(const sched_server *s)
{
    return s->port;
}

void sched_server_free(sched_server *s)
{
    if (!s)
        return;
    atomic_store(&s->stop, 1);
    if (s->running) {
        lws_cancel_service(s->lws);
        pthread_join(s->thread, NULL);
    }
    if (s->lws)
        lws_context_destroy(s->lws);
    free(s);
}
