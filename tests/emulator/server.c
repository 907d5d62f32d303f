/*
 * tests/emulator/server.c - the TLS HTTP/1.1 server: one thread per
 * connection, keep-alive, bounded headers and bodies, idle timeouts,
 * chunked streaming, and the request pipeline of emu.h (authentication,
 * attributes, control API, authorization, faults, routes, built-ins) that
 * HTTP/2 streams (h2.c) go through too. A connection whose ALPN chose h2 is
 * handed to h2.c after the TLS handshake.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "emu_internal.h"
#include "h2.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/array.h"
#include "kube/serving/httpreq.h"
#include "kube/util/log.h"

#define MAX_HEADER_BYTES EMU_MAX_HEADER_BYTES
#define MAX_HEADERS EMU_MAX_HEADERS
#define READ_TIMEOUT_MS 30000
#define MAX_ROUTES 16

struct emu_conn {
    int fd;
    SSL *ssl;
    emu_server *server;
    char remote[64];
    X509 *peer;
    char *in; /* read buffer */
    size_t in_len;
    size_t in_cap;
    int streaming;
    int broken;
    int wake_fd; /* h2: wakes its loop (set under g_priv.mu), else -1 */
    pthread_t tid;
    struct emu_conn *next;
    struct emu_conn *prev;
};

typedef struct route {
    emu_route_fn fn;
    void *ctx;
} route;

typedef struct disc_hook {
    emu_discovery_fn fn;
    void *ctx;
} disc_hook;

struct emu_private {
    emu_authn_fn authn;
    void *authn_ctx;
    emu_authz_fn authz;
    void *authz_ctx;
    route routes[MAX_ROUTES];
    size_t n_routes;
    disc_hook disc[MAX_ROUTES];
    size_t n_disc;
    SSL_CTX *ssl_ctx;
    int listen_fd;
    volatile sig_atomic_t stopping;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct emu_conn *conns; /* live connections */
    size_t n_conns;
    struct emu_conn *zombies; /* finished threads waiting to be joined */
};

static struct emu_private g_priv = {
    .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .listen_fd = -1};

/* ------------------------------------------------------------------ */
/* Hooks                                                               */
/* ------------------------------------------------------------------ */

void emu_set_authenticator(emu_server *s, emu_authn_fn fn, void *ctx)
{
    s->priv->authn = fn;
    s->priv->authn_ctx = ctx;
}

void emu_set_authorizer(emu_server *s, emu_authz_fn fn, void *ctx)
{
    s->priv->authz = fn;
    s->priv->authz_ctx = ctx;
}

int emu_add_route(emu_server *s, emu_route_fn fn, void *ctx)
{
    if (s->priv->n_routes >= MAX_ROUTES)
        return KUBE_ERANGE;
    s->priv->routes[s->priv->n_routes++] = (route){fn, ctx};
    return KUBE_OK;
}

int emu_add_discovery(emu_server *s, emu_discovery_fn fn, void *ctx)
{
    if (s->priv->n_disc >= MAX_ROUTES)
        return KUBE_ERANGE;
    s->priv->disc[s->priv->n_disc++] = (disc_hook){fn, ctx};
    return KUBE_OK;
}

int emu_discovery_run_hooks(emu_server *s, cJSON *groups)
{
    for (size_t i = 0; i < s->priv->n_disc; i++) {
        int rc = s->priv->disc[i].fn(s->priv->disc[i].ctx, groups);
        if (rc < 0)
            return rc;
    }
    return KUBE_OK;
}

/* ------------------------------------------------------------------ */
/* Users                                                               */
/* ------------------------------------------------------------------ */

int emu_user_set_name(emu_user *u, const char *name)
{
    char *copy = kube_strdup(name);

    if (!copy)
        return KUBE_ENOMEM;
    free(u->name);
    u->name = copy;
    return KUBE_OK;
}

int emu_user_in_group(const emu_user *u, const char *group)
{
    for (size_t i = 0; i < u->n_groups; i++)
        if (strcmp(u->groups[i], group) == 0)
            return 1;
    return 0;
}

int emu_user_add_group(emu_user *u, const char *group)
{
    char **g;

    if (emu_user_in_group(u, group))
        return KUBE_OK;
    g = realloc(u->groups, (u->n_groups + 1) * sizeof(*g));
    if (!g)
        return KUBE_ENOMEM;
    u->groups = g;
    g[u->n_groups] = kube_strdup(group);
    if (!g[u->n_groups])
        return KUBE_ENOMEM;
    u->n_groups++;
    return KUBE_OK;
}

void emu_user_clear(emu_user *u)
{
    free(u->name);
    free(u->uid);
    for (size_t i = 0; i < u->n_groups; i++)
        free(u->groups[i]);
    free(u->groups);
    cJSON_Delete(u->extra);
    memset(u, 0, sizeof(*u));
}

int emu_user_copy(emu_user *dst, const emu_user *src)
{
    memset(dst, 0, sizeof(*dst));
    if ((src->name && !(dst->name = kube_strdup(src->name))) ||
        (src->uid && !(dst->uid = kube_strdup(src->uid))))
        goto fail;
    for (size_t i = 0; i < src->n_groups; i++)
        if (emu_user_add_group(dst, src->groups[i]) != KUBE_OK)
            goto fail;
    if (src->extra && !(dst->extra = cJSON_Duplicate(src->extra, 1)))
        goto fail;
    return KUBE_OK;
fail:
    emu_user_clear(dst);
    return KUBE_ENOMEM;
}

/* ------------------------------------------------------------------ */
/* Authentication                                                      */
/* ------------------------------------------------------------------ */

static int user_from_cert(X509 *cert, emu_user *out)
{
    X509_NAME *name = X509_get_subject_name(cert);
    int rc = KUBE_OK;

    for (int i = 0; i < X509_NAME_entry_count(name) && rc == KUBE_OK; i++) {
        X509_NAME_ENTRY *e = X509_NAME_get_entry(name, i);
        int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(e));
        unsigned char *utf8 = NULL;
        if (nid != NID_commonName && nid != NID_organizationName)
            continue;
        if (ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(e)) < 0)
            return KUBE_ENOMEM;
        rc = nid == NID_commonName ? emu_user_set_name(out, (char *)utf8)
                                   : emu_user_add_group(out, (char *)utf8);
        OPENSSL_free(utf8);
    }
    return rc;
}

int emu_default_authenticate(void *ctx, const emu_request *req, emu_user *out)
{
    emu_server *s = ctx ? ctx : req->server;
    const char *auth = emu_header_get(req, "Authorization");

    if (req->peer_cert) {
        if (emu_certs_verify_client(&s->certs, req->peer_cert, 0) &&
            user_from_cert(req->peer_cert, out) == KUBE_OK && out->name && *out->name)
            return EMU_AUTHN_OK;
        emu_user_clear(out);
        if (!auth)
            return EMU_AUTHN_FAIL;
    }
    if (auth && strncasecmp(auth, "Bearer ", 7) == 0) {
        const char *tok = auth + 7;
        while (*tok == ' ')
            tok++;
        return emu_token_lookup(s, tok, out);
    }
    return auth ? EMU_AUTHN_FAIL : EMU_AUTHN_NONE;
}

int emu_authenticate(emu_server *s, const emu_request *req, emu_user *out)
{
    int rc;

    memset(out, 0, sizeof(*out));
    if (s->priv->authn)
        rc = s->priv->authn(s->priv->authn_ctx, req, out);
    else
        rc = emu_default_authenticate(s, req, out);
    if (rc == EMU_AUTHN_OK && (!out->name || emu_user_add_group(out, "system:authenticated")))
        rc = EMU_AUTHN_FAIL;
    if (rc != EMU_AUTHN_OK)
        emu_user_clear(out);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Requests                                                            */
/* ------------------------------------------------------------------ */

const char *emu_header_get(const emu_request *req, const char *name)
{
    for (size_t i = 0; i < req->n_headers; i++)
        if (strcasecmp(req->headers[i].name, name) == 0)
            return req->headers[i].value;
    return NULL;
}

/* Percent-decodes n bytes of s (plus_space: '+' is a space). Caller frees. */
static char *url_decode(const char *s, size_t n, int plus_space)
{
    char *out = malloc(n + 1);
    size_t o = 0;

    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && kube_hex_digit(s[i + 1]) >= 0 &&
            kube_hex_digit(s[i + 2]) >= 0) {
            out[o++] = (char)(kube_hex_digit(s[i + 1]) * 16 + kube_hex_digit(s[i + 2]));
            i += 2;
        } else if (plus_space && s[i] == '+') {
            out[o++] = ' ';
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
    return out;
}

int emu_target_split(const char *target, char **path, char **query)
{
    const char *q = strchr(target, '?');

    *path = url_decode(target, q ? (size_t)(q - target) : strlen(target), 0);
    *query = kube_strdup(q ? q + 1 : "");
    if (*path && *query)
        return KUBE_OK;
    free(*path);
    free(*query);
    *path = *query = NULL;
    return KUBE_ENOMEM;
}

char *emu_query_get(const emu_request *req, const char *key)
{
    const char *p = req->query;
    size_t klen = strlen(key);

    while (p && *p) {
        const char *amp = strchr(p, '&');
        size_t n = amp ? (size_t)(amp - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        size_t name_len = eq ? (size_t)(eq - p) : n;
        char *name = url_decode(p, name_len, 1);
        int match = name && strlen(name) == klen && memcmp(name, key, klen) == 0;
        free(name);
        if (match)
            return eq ? url_decode(eq + 1, n - name_len - 1, 1) : kube_strdup("");
        p = amp ? amp + 1 : NULL;
    }
    return NULL;
}

/* Splits the path into owned segments stored after the request. */
typedef struct attr_store {
    char *parts[16];
    size_t n;
    char *verb;
} attr_store;

static void attrs_set_empty(emu_attrs *a)
{
    a->api_prefix = a->api_group = a->api_version = a->namespace_ = a->resource = a->subresource =
        a->name = "";
}

static int query_flag(const emu_request *req, const char *key)
{
    char *v = emu_query_get(req, key);
    int on = v && (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0);

    free(v);
    return on;
}

static const char *method_verb(const char *m)
{
    if (!strcmp(m, "POST"))
        return "create";
    if (!strcmp(m, "GET") || !strcmp(m, "HEAD"))
        return "get";
    if (!strcmp(m, "PUT"))
        return "update";
    if (!strcmp(m, "PATCH"))
        return "patch";
    if (!strcmp(m, "DELETE"))
        return "delete";
    return "";
}

static __thread attr_store t_attrs;

static void attr_store_clear(attr_store *st)
{
    for (size_t i = 0; i < st->n; i++)
        free(st->parts[i]);
    free(st->verb);
    memset(st, 0, sizeof(*st));
}

static int split_path(const char *path, attr_store *st)
{
    const char *p = path;

    while (*p) {
        const char *slash;
        size_t n;
        while (*p == '/')
            p++;
        if (!*p)
            break;
        slash = strchr(p, '/');
        n = slash ? (size_t)(slash - p) : strlen(p);
        if (st->n >= sizeof(st->parts) / sizeof(st->parts[0]))
            return KUBE_ERANGE;
        st->parts[st->n] = malloc(n + 1);
        if (!st->parts[st->n])
            return KUBE_ENOMEM;
        memcpy(st->parts[st->n], p, n);
        st->parts[st->n][n] = '\0';
        st->n++;
        p += n;
    }
    return KUBE_OK;
}

static void resource_attrs(emu_request *req, emu_attrs *a, char **parts, size_t n)
{
    size_t i = 0;

    a->is_resource = 1;
    a->api_version = parts[i++];
    if (i < n && (!strcmp(parts[i], "watch") || !strcmp(parts[i], "proxy")) && i + 1 < n) {
        a->verb = parts[i++];
    } else {
        a->verb = method_verb(req->method);
    }
    if (i < n && !strcmp(parts[i], "namespaces")) {
        if (i + 1 < n) {
            a->namespace_ = parts[i + 1];
            if (i + 2 < n && strcmp(parts[i + 2], "status") && strcmp(parts[i + 2], "finalize"))
                i += 2;
        }
    }
    if (i < n)
        a->resource = parts[i];
    if (i + 1 < n)
        a->name = parts[i + 1];
    if (i + 2 < n && strcmp(a->verb, "watch") && strcmp(a->verb, "proxy"))
        a->subresource = parts[i + 2];
    if (!*a->name && !strcmp(a->verb, "get")) {
        a->verb = query_flag(req, "watch") ? "watch" : "list";
    } else if (!*a->name && !strcmp(a->verb, "delete")) {
        a->verb = "deletecollection";
    }
}

int emu_request_attrs(emu_request *req)
{
    emu_attrs *a = &req->attrs;
    attr_store *st = &t_attrs;
    char **parts;
    size_t n, base;
    int rc;

    attr_store_clear(st);
    memset(a, 0, sizeof(*a));
    attrs_set_empty(a);
    a->path = req->path;
    rc = split_path(req->path, st);
    if (rc != KUBE_OK)
        return rc;
    parts = st->parts;
    n = st->n;
    if (n >= 3 && (!strcmp(parts[0], "api") || (!strcmp(parts[0], "apis") && n >= 4))) {
        a->api_prefix = parts[0];
        base = 1;
        if (!strcmp(parts[0], "apis"))
            a->api_group = parts[base++];
        resource_attrs(req, a, parts + base, n - base);
        return KUBE_OK;
    }
    st->verb = strdup(req->method);
    if (!st->verb)
        return KUBE_ENOMEM;
    for (char *c = st->verb; *c; c++)
        *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    a->verb = st->verb;
    return KUBE_OK;
}

/* ------------------------------------------------------------------ */
/* Responses                                                           */
/* ------------------------------------------------------------------ */

int emu_response_header(emu_response *r, const char *name, const char *value)
{
    if (r->n_headers >= EMU_MAX_RESP_HEADERS)
        return KUBE_ERANGE;
    r->headers[r->n_headers].name = kube_strdup(name);
    r->headers[r->n_headers].value = kube_strdup(value);
    if (!r->headers[r->n_headers].name || !r->headers[r->n_headers].value) {
        free(r->headers[r->n_headers].name);
        free(r->headers[r->n_headers].value);
        return KUBE_ENOMEM;
    }
    r->n_headers++;
    return KUBE_OK;
}

int emu_response_raw(emu_response *r, int status, const char *content_type, const char *body,
                     size_t len)
{
    kube_buf_reset(&r->body);
    r->status = status;
    kube_strlcpy(r->content_type, content_type, sizeof(r->content_type));
    return kube_buf_append(&r->body, body, len);
}

int emu_response_json(emu_response *r, int status, const cJSON *body)
{
    char *text = emu_json_print(body);
    int rc;

    if (!text)
        return KUBE_ENOMEM;
    rc = emu_response_raw(r, status, "application/json", text, strlen(text));
    free(text);
    return rc;
}

int emu_response_text(emu_response *r, int status, const char *text)
{
    int rc = emu_response_raw(r, status, "text/plain; charset=utf-8", text, strlen(text));

    if (rc == KUBE_OK)
        rc = emu_response_header(r, "X-Content-Type-Options", "nosniff");
    return rc;
}

int emu_response_status(emu_response *r, int code, const char *reason, const char *message,
                        cJSON *details)
{
    cJSON *st = emu_status_new(code, reason, message, details);
    int rc;

    if (!st)
        return KUBE_ENOMEM;
    rc = emu_response_json(r, code, st);
    cJSON_Delete(st);
    return rc;
}

int emu_respond_unauthorized(emu_response *r)
{
    return emu_response_status(r, 401, "Unauthorized", "Unauthorized", NULL);
}

int emu_respond_forbidden(emu_response *r, const emu_user *u, const emu_attrs *a, const char *why)
{
    kube_buf msg = KUBE_BUF_INIT;
    const char *name = u && u->name ? u->name : "";
    int rc;

    if (!a->is_resource) {
        rc = kube_buf_printf(&msg, "forbidden: User \"%s\" cannot %s path \"%s\"", name, a->verb,
                             a->path);
    } else {
        rc = kube_buf_printf(&msg, "%s%s%s", a->resource, *a->api_group ? "." : "", a->api_group);
        if (rc == KUBE_OK && *a->name)
            rc = kube_buf_printf(&msg, " \"%s\"", a->name);
        if (rc == KUBE_OK)
            rc = kube_buf_printf(&msg,
                                 " is forbidden: User \"%s\" cannot %s resource \"%s%s%s\" "
                                 "in API group \"%s\"",
                                 name, a->verb, a->resource, *a->subresource ? "/" : "",
                                 a->subresource, a->api_group);
        if (rc == KUBE_OK && *a->namespace_)
            rc = kube_buf_printf(&msg, " in the namespace \"%s\"", a->namespace_);
        else if (rc == KUBE_OK)
            rc = kube_buf_puts(&msg, " at the cluster scope");
    }
    if (rc == KUBE_OK && why && *why)
        rc = kube_buf_printf(&msg, ": %s", why);
    if (rc == KUBE_OK)
        rc = emu_response_status(r, 403, "Forbidden", msg.data,
                                 a->is_resource ? emu_details(a->name, a->api_group, a->resource)
                                                : cJSON_CreateObject());
    kube_buf_free(&msg);
    return rc;
}

void emu_response_clear(emu_response *r)
{
    kube_buf_free(&r->body);
    for (size_t i = 0; i < r->n_headers; i++) {
        free(r->headers[i].name);
        free(r->headers[i].value);
    }
    memset(r, 0, sizeof(*r));
}

/* ------------------------------------------------------------------ */
/* Connection I/O                                                      */
/* ------------------------------------------------------------------ */

static int conn_write(emu_conn *c, const void *data, size_t n)
{
    const char *p = data;

    if (c->broken)
        return KUBE_EIO;
    while (n > 0) {
        int chunk = n > (1 << 30) ? (1 << 30) : (int)n;
        int w = SSL_write(c->ssl, p, chunk);
        if (w <= 0) {
            c->broken = 1;
            return KUBE_EIO;
        }
        p += w;
        n -= (size_t)w;
    }
    return KUBE_OK;
}

/* Waits until the connection can be read, up to timeout_ms. */
static int conn_wait(emu_conn *c, int timeout_ms)
{
    struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
    int waited = 0;

    if (SSL_pending(c->ssl) > 0)
        return KUBE_OK;
    while (waited < timeout_ms) {
        int step = timeout_ms - waited < 500 ? timeout_ms - waited : 500;
        int r = poll(&pfd, 1, step);
        if (r > 0)
            return KUBE_OK;
        if (r < 0 && errno != EINTR)
            return KUBE_EIO;
        if (g_priv.stopping)
            return KUBE_ECANCELED;
        waited += step;
    }
    return KUBE_ETIMEDOUT;
}

/* Reads more bytes into the buffer (at most max in total). */
static int conn_fill(emu_conn *c, size_t max, int timeout_ms)
{
    int rc, r;

    if (c->in_len >= max)
        return KUBE_ERANGE;
    if (KUBE_ARRAY_RESERVE(c->in, c->in_cap, c->in_len + 16384) != KUBE_OK)
        return KUBE_ENOMEM;
    rc = conn_wait(c, timeout_ms);
    if (rc != KUBE_OK)
        return rc;
    r = SSL_read(c->ssl, c->in + c->in_len, (int)(c->in_cap - c->in_len - 1));
    if (r <= 0) {
        c->broken = 1;
        return KUBE_EIO;
    }
    c->in_len += (size_t)r;
    c->in[c->in_len] = '\0';
    return KUBE_OK;
}

static void conn_consume(emu_conn *c, size_t n)
{
    memmove(c->in, c->in + n, c->in_len - n);
    c->in_len -= n;
    if (c->in)
        c->in[c->in_len] = '\0';
}

/* ------------------------------------------------------------------ */
/* Streaming                                                           */
/* ------------------------------------------------------------------ */

void emu_response_fields(const emu_response *r, emu_fields *f)
{
    time_t now = time(NULL);
    struct tm tm;

    emu_uuid(f->audit);
    gmtime_r(&now, &tm);
    strftime(f->date, sizeof(f->date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    f->v[0] = (emu_field){"Audit-Id", f->audit};
    f->v[1] = (emu_field){"Cache-Control", "no-cache, private"};
    f->v[2] =
        (emu_field){"Content-Type", r->content_type[0] ? r->content_type : "application/json"};
    f->v[3] = (emu_field){"Date", f->date};
    f->n = 4;
    for (size_t i = 0; i < r->n_headers; i++)
        f->v[f->n++] = (emu_field){r->headers[i].name, r->headers[i].value};
}

static int write_head(emu_conn *c, const emu_response *r, long content_length)
{
    kube_buf h = KUBE_BUF_INIT;
    emu_fields f;
    int rc;

    emu_response_fields(r, &f);
    rc =
        kube_buf_printf(&h, "HTTP/1.1 %d %s\r\n", r->status, kube_httpreq_reason_phrase(r->status));
    for (size_t i = 0; rc == KUBE_OK && i < f.n; i++)
        rc = kube_buf_printf(&h, "%s: %s\r\n", f.v[i].name, f.v[i].value);
    if (rc == KUBE_OK && content_length >= 0)
        rc = kube_buf_printf(&h, "Content-Length: %ld\r\n", content_length);
    else if (rc == KUBE_OK)
        rc = kube_buf_puts(&h, "Transfer-Encoding: chunked\r\n");
    if (rc == KUBE_OK && r->close)
        rc = kube_buf_puts(&h, "Connection: close\r\n");
    if (rc == KUBE_OK)
        rc = kube_buf_puts(&h, "\r\n");
    if (rc == KUBE_OK)
        rc = conn_write(c, h.data, h.len);
    kube_buf_free(&h);
    return rc;
}

/* The HTTP/1.1 sink: chunked transfer coding on the connection. */
static int h1_begin(void *ctx, const emu_response *r)
{
    emu_conn *c = ctx;

    c->streaming = 1;
    return write_head(c, r, -1);
}

static int h1_write(void *ctx, const void *data, size_t n)
{
    char head[32];
    kube_buf b = KUBE_BUF_INIT;
    int rc;

    snprintf(head, sizeof(head), "%zx\r\n", n);
    rc = kube_buf_puts(&b, head);
    if (rc == KUBE_OK)
        rc = kube_buf_append(&b, data, n);
    if (rc == KUBE_OK)
        rc = kube_buf_puts(&b, "\r\n");
    if (rc == KUBE_OK)
        rc = conn_write(ctx, b.data, b.len);
    kube_buf_free(&b);
    return rc;
}

static int h1_write_framed(void *ctx, const void *data, size_t n)
{
    return conn_write(ctx, data, n);
}

static int h1_end(void *ctx)
{
    return conn_write(ctx, "0\r\n\r\n", 5);
}

static int h1_should_stop(void *ctx)
{
    emu_conn *c = ctx;
    struct pollfd pfd = {.fd = c->fd, .events = POLLIN};

    if (g_priv.stopping || c->broken)
        return 1;
    /* A client sends nothing while it reads a stream: readable means it
     * closed (EOF or a TLS close_notify). */
    return poll(&pfd, 1, 0) > 0;
}

static const emu_sink_ops h1_sink = {h1_begin, h1_write, h1_write_framed, h1_end, h1_should_stop};

int emu_stream_begin(emu_request *req, emu_response *r)
{
    if (r->status == 0)
        r->status = 200;
    r->streamed = 1;
    return req->sink->begin(req->sink_ctx, r);
}

int emu_stream_write(emu_request *req, const void *data, size_t n)
{
    return n ? req->sink->write(req->sink_ctx, data, n) : KUBE_OK;
}

int emu_stream_write_raw(emu_request *req, const void *data, size_t n)
{
    return req->sink->write_framed(req->sink_ctx, data, n);
}

int emu_stream_end(emu_request *req)
{
    return req->sink->end(req->sink_ctx);
}

int emu_stream_should_stop(const emu_request *req)
{
    return req->sink->should_stop(req->sink_ctx);
}

/* ------------------------------------------------------------------ */
/* Parsing                                                             */
/* ------------------------------------------------------------------ */

typedef struct parsed {
    char *method;
    char *target;
    char *path;
    char *query;
    emu_header headers[MAX_HEADERS];
    size_t n_headers;
    char *body;
    size_t body_len;
    int keep_alive;
} parsed;

static void parsed_free(parsed *p)
{
    free(p->method);
    free(p->target);
    free(p->path);
    free(p->query);
    for (size_t i = 0; i < p->n_headers; i++) {
        free(p->headers[i].name);
        free(p->headers[i].value);
    }
    free(p->body);
    memset(p, 0, sizeof(*p));
}

/* Copies what the pipeline reads from a parsed head (kube/serving/httpreq). */
static int take_head(parsed *p, const kube_httpreq_request *req)
{
    const char *q = strchr(req->target, '?');

    p->method = kube_strdup(req->method);
    p->target = kube_strdup(req->target);
    p->path = url_decode(req->target, q ? (size_t)(q - req->target) : strlen(req->target), 0);
    p->query = kube_strdup(q ? q + 1 : "");
    p->keep_alive = req->keep_alive;
    if (!p->method || !p->target || !p->path || !p->query)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < req->n_headers; i++) {
        p->headers[i].name = kube_strdup(req->headers[i].name);
        p->headers[i].value = kube_strdup(req->headers[i].value);
        p->n_headers++;
        if (!p->headers[i].name || !p->headers[i].value)
            return KUBE_ENOMEM;
    }
    return p->target[0] == '/' ? KUBE_OK : KUBE_EBADREQUEST;
}

/* Reads until the parser says the head is whole. Returns its length (> 0)
 * or a negative error (*http_status set for a malformed request). */
static int read_head(emu_conn *c, kube_httpreq_parser *ps, kube_httpreq_request *req,
                     int first_timeout_ms, int *http_status)
{
    int n, timeout = first_timeout_ms;

    for (;;) {
        /* tolerate leading CRLFs between requests */
        while (c->in_len >= 2 && c->in[0] == '\r' && c->in[1] == '\n')
            conn_consume(c, 2);
        n = c->in_len ? kube_httpreq_parse_head(ps, c->in, c->in_len, req, http_status) : 0;
        if (n != 0)
            return n;
        n = conn_fill(c, SIZE_MAX, timeout);
        if (n != KUBE_OK)
            return n;
        timeout = READ_TIMEOUT_MS;
    }
}

/* Reads until the parser says the body is whole. Returns the request's
 * length (> 0) or a negative error. */
static int read_body(emu_conn *c, kube_httpreq_parser *ps, kube_httpreq_request *req,
                     int *http_status)
{
    for (;;) {
        int n = kube_httpreq_parse_body(ps, c->in, c->in_len, req, http_status);
        if (n != 0)
            return n;
        n = conn_fill(c, SIZE_MAX, READ_TIMEOUT_MS);
        if (n != KUBE_OK)
            return n;
    }
}

/* Reads and discards a too large body (up to 64 MiB) so the client sees
 * the 413 instead of a reset connection. */
static void drain(emu_conn *c, size_t len)
{
    if (len > (64u << 20))
        return;
    while (len > 0) {
        size_t take = c->in_len < len ? c->in_len : len;
        conn_consume(c, take);
        len -= take;
        if (len > 0 && conn_fill(c, 1 << 20, READ_TIMEOUT_MS) != KUBE_OK)
            return;
    }
}

/* The body once the head is read: the server's own limit on a
 * Content-Length (the body is drained then, unless the client waits for
 * 100 Continue), 100 Continue when asked, then the parser's chunked limit. */
static int take_body(emu_conn *c, kube_httpreq_parser *ps, kube_httpreq_request *req,
                     size_t head_len, size_t max, int *http_status)
{
    int n;

    if (req->content_length > 0 && (uint64_t)req->content_length > max) {
        conn_consume(c, head_len);
        if (!req->expect_continue)
            drain(c, (size_t)req->content_length);
        *http_status = 413;
        return KUBE_EBADREQUEST;
    }
    if (req->expect_continue && kube_httpreq_has_body(req))
        conn_write(c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
    ps->lim.max_body = max;
    n = read_body(c, ps, req, http_status);
    if (n > 0)
        conn_consume(c, (size_t)n);
    return n < 0 ? n : KUBE_OK;
}

/* Reads one request with kube/serving/httpreq (strict, bounded) into p. Returns
 * KUBE_OK, KUBE_EBADREQUEST with *http_status (the answer before closing),
 * or the connection's error. */
static int read_request(emu_conn *c, parsed *p, size_t max_body, int first_timeout_ms,
                        int *http_status)
{
    kube_httpreq_limits lim = {MAX_HEADER_BYTES, MAX_HEADERS, MAX_HEADER_BYTES, SIZE_MAX / 16};
    kube_httpreq_parser ps;
    kube_httpreq_request req = {0}; /* freed below even when no head came */
    int rc;

    kube_httpreq_parser_init(&ps, &lim);
    rc = read_head(c, &ps, &req, first_timeout_ms, http_status);
    if (rc > 0) {
        size_t head_len = (size_t)rc;
        rc = take_head(p, &req);
        if (rc == KUBE_EBADREQUEST)
            *http_status = 400;
        if (rc == KUBE_OK)
            rc = take_body(c, &ps, &req, head_len, max_body, http_status);
    }
    if (rc == KUBE_OK) {
        p->body_len = req.body_len;
        p->body = req.body;
        req.body = NULL;
    }
    kube_httpreq_request_free(&req);
    kube_httpreq_parser_reset(&ps);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Pipeline                                                            */
/* ------------------------------------------------------------------ */

static int is_public_path(const char *path)
{
    return !strcmp(path, "/healthz") || !strcmp(path, "/livez") || !strcmp(path, "/readyz") ||
           !strcmp(path, "/version") || !strncmp(path, "/healthz/", 9) ||
           !strncmp(path, "/livez/", 7) || !strncmp(path, "/readyz/", 8);
}

static int handle_health(emu_request *req, emu_response *resp)
{
    const char *p = req->path;

    if (!strcmp(p, "/healthz") || !strcmp(p, "/livez") || !strcmp(p, "/readyz") ||
        !strncmp(p, "/healthz/", 9) || !strncmp(p, "/livez/", 7) || !strncmp(p, "/readyz/", 8)) {
        emu_response_text(resp, 200, "ok");
        return 1;
    }
    return 0;
}

static int authorize(emu_server *s, emu_request *req, emu_response *resp)
{
    char why[512] = "";

    if (!s->priv->authz)
        return 1;
    if (s->priv->authz(s->priv->authz_ctx, &req->user, &req->attrs, why, sizeof(why)) ==
        EMU_AUTHZ_ALLOW)
        return 1;
    emu_respond_forbidden(resp, &req->user, &req->attrs, why);
    return 0;
}

static int run_routes(emu_server *s, emu_request *req, emu_response *resp)
{
    for (size_t i = 0; i < s->priv->n_routes; i++) {
        int rc = s->priv->routes[i].fn(s->priv->routes[i].ctx, req, resp);
        if (rc == 1)
            return 1;
        if (rc < 0) {
            emu_response_status(resp, 500, "InternalError", kube_strerror(rc), NULL);
            return 1;
        }
    }
    return 0;
}

void emu_request_serve(emu_request *req, emu_response *resp)
{
    emu_server *s = req->server;
    int authn;

    if (emu_request_attrs(req) != KUBE_OK) {
        emu_response_text(resp, 404, "404 page not found\n");
        return;
    }
    if (strncmp(req->path, "/emulator/", 10) == 0) {
        emu_control_handle(s, req, resp);
        return;
    }
    emu_counters_count(&req->attrs);
    authn = emu_authenticate(s, req, &req->user);
    req->log_id = emu_reqlog_add(req);
    if (authn != EMU_AUTHN_OK && !is_public_path(req->path)) {
        emu_respond_unauthorized(resp);
        return;
    }
    if (authn == EMU_AUTHN_OK && !authorize(s, req, resp))
        return;
    if (emu_faults_apply(s, req, resp))
        return;
    if (handle_health(req, resp))
        return;
    if (authn == EMU_AUTHN_OK && run_routes(s, req, resp))
        return;
    if (emu_discovery_handle(s, req, resp))
        return;
    if (emu_api_handle(s, req, resp))
        return;
    emu_response_text(resp, 404, "404 page not found\n");
}

static void answer_error(emu_conn *c, int http_status, size_t max_body)
{
    emu_response r = {0};
    char msg[128];

    r.close = 1;
    if (http_status == 413) {
        snprintf(msg, sizeof(msg), "Request entity too large: limit is %zu", max_body);
        emu_response_status(&r, 413, "RequestEntityTooLarge", msg, NULL);
    } else {
        snprintf(msg, sizeof(msg), "%d %s", http_status, kube_httpreq_reason_phrase(http_status));
        emu_response_text(&r, http_status, msg);
    }
    if (write_head(c, &r, (long)r.body.len) == KUBE_OK)
        conn_write(c, r.body.data, r.body.len);
    emu_response_clear(&r);
}

static int send_response(emu_conn *c, emu_request *req, emu_response *r)
{
    int rc;
    int head_only = !strcmp(req->method, "HEAD");

    if (r->streamed)
        return c->broken ? KUBE_EIO : KUBE_OK;
    if (r->status == 0)
        emu_response_status(r, 500, "InternalError", "no answer", NULL);
    rc = write_head(c, r, (long)r->body.len);
    if (rc == KUBE_OK && r->body.len && !head_only)
        rc = conn_write(c, r->body.data, r->body.len);
    return rc;
}

void emu_request_finish(emu_request *req, emu_response *resp, int64_t start_ms)
{
    KLOG_V(3, "%s %s %d %lldms user=%s", req->method, req->target, resp->status,
           (long long)(kube_now_ms() - start_ms), req->user.name ? req->user.name : "");
    if (req->log_id)
        emu_reqlog_done(req->log_id, resp->abort ? 0 : resp->status ? resp->status : 200);
    emu_user_clear(&req->user);
    attr_store_clear(&t_attrs);
    emu_response_clear(resp);
}

/* Serves one request. Returns 1 to keep the connection, 0 to close it. */
static int serve_one(emu_conn *c, int first_timeout_ms)
{
    emu_server *s = c->server;
    parsed p = {0};
    emu_request req = {0};
    emu_response resp = {0};
    int64_t start;
    int rc, keep, http_status = 0;

    rc = read_request(c, &p, s->cfg.max_body, first_timeout_ms, &http_status);
    if (rc != KUBE_OK) {
        if (rc == KUBE_EBADREQUEST && http_status)
            answer_error(c, http_status, s->cfg.max_body);
        parsed_free(&p);
        return 0;
    }
    start = kube_now_ms();
    req.method = p.method;
    req.target = p.target;
    req.path = p.path;
    req.query = p.query;
    req.headers = p.headers;
    req.n_headers = p.n_headers;
    req.body = p.body;
    req.body_len = p.body_len;
    req.peer_cert = c->peer;
    req.remote_addr = c->remote;
    req.conn = c;
    req.server = s;
    req.sink = &h1_sink;
    req.sink_ctx = c;
    keep = p.keep_alive;
    emu_request_serve(&req, &resp);
    if (resp.abort) { /* no answer, no TLS close_notify: as a crashed server */
        c->broken = 1;
        emu_request_finish(&req, &resp, start);
        parsed_free(&p);
        return 0;
    }
    if (!keep)
        resp.close = 1;
    rc = send_response(c, &req, &resp);
    keep = keep && rc == KUBE_OK && !resp.close && !resp.streamed;
    emu_request_finish(&req, &resp, start);
    parsed_free(&p);
    return keep;
}

/* ------------------------------------------------------------------ */
/* Connections                                                         */
/* ------------------------------------------------------------------ */

static int verify_accept_all(int preverify, X509_STORE_CTX *ctx)
{
    (void)preverify;
    (void)ctx;
    return 1; /* authentication decides later (emu_certs_verify_client) */
}

/* Moves a finished connection to the zombie list; the accept loop joins
 * its thread and frees it. */
static void conn_finished(emu_conn *c)
{
    pthread_mutex_lock(&g_priv.mu);
    if (c->prev)
        c->prev->next = c->next;
    else
        g_priv.conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    g_priv.n_conns--;
    c->prev = NULL;
    c->next = g_priv.zombies;
    g_priv.zombies = c;
    pthread_cond_broadcast(&g_priv.cv);
    pthread_mutex_unlock(&g_priv.mu);
}

static void reap_zombies(void)
{
    emu_conn *z;

    pthread_mutex_lock(&g_priv.mu);
    z = g_priv.zombies;
    g_priv.zombies = NULL;
    pthread_mutex_unlock(&g_priv.mu);
    while (z) {
        emu_conn *next = z->next;
        pthread_join(z->tid, NULL);
        free(z);
        z = next;
    }
}

static int conn_handshake(emu_conn *c)
{
    int rc = conn_wait(c, READ_TIMEOUT_MS);

    if (rc != KUBE_OK)
        return rc;
    /* blocking socket with a receive timeout bounds the handshake */
    if (SSL_accept(c->ssl) != 1) {
        KLOG_V(4, "TLS handshake with %s failed", c->remote);
        return KUBE_EIO;
    }
    c->peer = SSL_get1_peer_certificate(c->ssl);
    return KUBE_OK;
}

/* Hands a connection whose ALPN chose h2 to the HTTP/2 loop (h2.c) until
 * it ends; wait_connections() wakes that loop through c->wake_fd. */
static void conn_serve_h2(emu_conn *c)
{
    emu_h2_link l = {c->server, c, c->ssl, c->fd, -1, c->peer, c->remote};

    l.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (l.wake_fd < 0) {
        c->broken = 1;
        return;
    }
    pthread_mutex_lock(&g_priv.mu);
    c->wake_fd = l.wake_fd;
    pthread_mutex_unlock(&g_priv.mu);
    if (emu_h2_serve(&l) != KUBE_OK)
        c->broken = 1;
    pthread_mutex_lock(&g_priv.mu);
    c->wake_fd = -1;
    pthread_mutex_unlock(&g_priv.mu);
    close(l.wake_fd);
}

static void *conn_main(void *arg)
{
    emu_conn *c = arg;
    emu_server *s = c->server;
    int timeout = READ_TIMEOUT_MS;

    if (conn_handshake(c) == KUBE_OK) {
        int h2 = emu_h2_negotiated(c->ssl);
        emu_counters_connection(h2 ? EMU_PROTO_H2 : EMU_PROTO_HTTP1);
        if (h2)
            conn_serve_h2(c);
        while (!h2 && !g_priv.stopping && serve_one(c, timeout))
            timeout = s->cfg.idle_timeout_ms;
        if (!c->broken)
            SSL_shutdown(c->ssl);
    }
    ERR_clear_error();
    X509_free(c->peer);
    SSL_free(c->ssl);
    close(c->fd);
    free(c->in);
    OPENSSL_thread_stop();
    conn_finished(c);
    return NULL;
}

static void conn_start(emu_server *s, int fd, const struct sockaddr_in6 *addr)
{
    emu_conn *c = calloc(1, sizeof(*c));
    pthread_attr_t attr;
    struct timeval tv = {READ_TIMEOUT_MS / 1000, 0};
    int one = 1;
    char host[INET6_ADDRSTRLEN] = "?";

    if (!c) {
        close(fd);
        return;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (addr->sin6_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)addr)->sin_addr, host,
                  sizeof(host));
    else
        inet_ntop(AF_INET6, &addr->sin6_addr, host, sizeof(host));
    snprintf(c->remote, sizeof(c->remote), "%s:%u", host, ntohs(addr->sin6_port));
    c->fd = fd;
    c->wake_fd = -1;
    c->server = s;
    c->ssl = SSL_new(g_priv.ssl_ctx);
    if (!c->ssl || !SSL_set_fd(c->ssl, fd)) {
        SSL_free(c->ssl);
        close(fd);
        free(c);
        return;
    }
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 512 * 1024);
    /* registered under the lock before the thread can finish */
    pthread_mutex_lock(&g_priv.mu);
    if (pthread_create(&c->tid, &attr, conn_main, c) != 0) {
        pthread_mutex_unlock(&g_priv.mu);
        SSL_free(c->ssl);
        close(fd);
        free(c);
    } else {
        c->next = g_priv.conns;
        if (g_priv.conns)
            g_priv.conns->prev = c;
        g_priv.conns = c;
        g_priv.n_conns++;
        pthread_mutex_unlock(&g_priv.mu);
    }
    pthread_attr_destroy(&attr);
}

static int ssl_setup(emu_server *s)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

    if (!ctx)
        return KUBE_ENOMEM;
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    if (SSL_CTX_use_certificate_chain_file(ctx, s->certs.serving_cert_file) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, s->certs.serving_key_file, SSL_FILETYPE_PEM) != 1) {
        SSL_CTX_free(ctx);
        return KUBE_EIO;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, verify_accept_all);
    {
        STACK_OF(X509_NAME) *names = sk_X509_NAME_new_null();
        if (names) {
            sk_X509_NAME_push(names, X509_NAME_dup(X509_get_subject_name(s->certs.ca_cert)));
            sk_X509_NAME_push(names, X509_NAME_dup(X509_get_subject_name(s->certs.fp_ca_cert)));
            SSL_CTX_set_client_CA_list(ctx, names);
        }
    }
    emu_h2_setup_alpn(ctx, s->cfg.http2);
    SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"emu", 3);
    SSL_CTX_set_mode(ctx, SSL_MODE_AUTO_RETRY);
    g_priv.ssl_ctx = ctx;
    return KUBE_OK;
}

static int listen_on(emu_server *s)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s->cfg.port)};
    socklen_t len = sizeof(a);
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return KUBE_EIO;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 1024) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
        KLOG_ERROR("listen on 127.0.0.1:%d: %s", s->cfg.port, strerror(errno));
        close(fd);
        return KUBE_EIO;
    }
    s->port = ntohs(a.sin_port);
    snprintf(s->url, sizeof(s->url), "https://127.0.0.1:%d", s->port);
    g_priv.listen_fd = fd;
    return KUBE_OK;
}

int emu_server_prepare(emu_server *s)
{
    int rc;

    s->priv = &g_priv;
    rc = ssl_setup(s);
    if (rc == KUBE_OK)
        rc = listen_on(s);
    return rc;
}

static void wait_connections(void)
{
    struct timespec deadline;

    pthread_mutex_lock(&g_priv.mu);
    for (emu_conn *c = g_priv.conns; c; c = c->next) {
        if (c->wake_fd >= 0) /* h2: the loop sends GOAWAY and ends its streams */
            eventfd_write(c->wake_fd, 1);
        else
            shutdown(c->fd, SHUT_RDWR);
    }
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    while (g_priv.n_conns > 0)
        if (pthread_cond_timedwait(&g_priv.cv, &g_priv.mu, &deadline) != 0)
            break;
    if (g_priv.n_conns > 0)
        KLOG_WARN("%zu connections did not end in time", g_priv.n_conns);
    pthread_mutex_unlock(&g_priv.mu);
    reap_zombies();
}

int emu_server_run(emu_server *s)
{
    while (!g_priv.stopping) {
        struct pollfd pfd = {.fd = g_priv.listen_fd, .events = POLLIN};
        struct sockaddr_in6 addr;
        socklen_t len = sizeof(addr);
        int fd;
        int ready = poll(&pfd, 1, 200);
        reap_zombies();
        if (ready <= 0)
            continue;
        fd = accept4(g_priv.listen_fd, (struct sockaddr *)&addr, &len, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        conn_start(s, fd, &addr);
    }
    close(g_priv.listen_fd);
    g_priv.listen_fd = -1;
    emu_store_wake_all(s->store);
    wait_connections();
    SSL_CTX_free(g_priv.ssl_ctx);
    g_priv.ssl_ctx = NULL;
    return KUBE_OK;
}

void emu_server_stop(emu_server *s)
{
    (void)s;
    g_priv.stopping = 1;
}

int emu_server_stopping(const emu_server *s)
{
    (void)s;
    return g_priv.stopping;
}
