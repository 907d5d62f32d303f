/*
 * kube/serving/server.c - the TLS listener of both daemons (stickyvm-apiserver, stickyvm-scheduler)
 * on libwebsockets. The contract is in server.h.
 */
#include "kube/serving/server_int.h"
#include "kube/util/clock.h"

/* ---- connections ---- */

void kube_srv_conn_unref(conn *c)
{
    if (--c->refs > 0)
        return;
    if (c->in.data)
        explicit_bzero(c->in.data, c->in.len);
    kube_buf_free(&c->in);
    kube_buf_free(&c->out);
    kube_httpreq_request_free(&c->req);
    kube_httpreq_parser_reset(&c->parser);
    kube_exchange_free(c->x);
    kube_peer_cache_clear(&c->pc);
    kube_stream_unref(c->stream);
    free(c);
}

static void conn_link(kube_server *s, conn *c)
{
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    if (++s->n_conns > s->peak_conns)
        s->peak_conns = s->n_conns;
}

/* After a burst of connections, gives the freed memory back to the system
 * once few remain (glibc keeps freed heap otherwise). */
static void trim_after_burst(kube_server *s)
{
    if (s->n_conns > TRIM_LOW_WATER || s->peak_conns < TRIM_HIGH_WATER)
        return;
    malloc_trim(0);
    s->peak_conns = s->n_conns;
}

static void conn_unlink(kube_server *s, conn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
    s->n_conns--;
    trim_after_burst(s);
}

void kube_srv_set_timeout(conn *c, int secs)
{
    lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, secs);
}

void kube_srv_kill_conn(conn *c)
{
    lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

/* Drops the first n bytes, wiping the vacated tail (requests may carry
 * credentials). */
static void consume(kube_buf *b, size_t n)
{
    memmove(b->data, b->data + n, b->len - n);
    explicit_bzero(b->data + b->len - n, n);
    b->len -= n;
}

/* Appends to what is still to be written (a 100 Continue may be). */
void kube_srv_out_prepare(conn *c)
{
    if (c->out_off < c->out.len)
        return;
    kube_buf_reset(&c->out);
    c->out_off = 0;
}

/* The current request is answered: forgets it and the bytes it used (all
 * of them when its body was not read: the connection closes then). */
static void request_done(conn *c)
{
    consume(&c->in, c->req_len && c->req_len <= c->in.len ? c->req_len : c->in.len);
    c->req_len = 0;
    kube_httpreq_request_free(&c->req);
    kube_httpreq_parser_reset(&c->parser);
    c->phase = PH_ANSWER;
}

/* Queues an answer already in c->out for writing. */
static void send_answer(conn *c, int close_after)
{
    c->close_after = close_after || c->srv->draining;
    request_done(c);
    kube_srv_set_timeout(c, WRITE_TIMEOUT_S);
    lws_callback_on_writable(c->wsi);
}

/* An answer given before an exchange exists (unparseable request). */
void kube_srv_answer_parse_error(conn *c, int code)
{
    kube_buf body = KUBE_BUF_INIT;
    char msg[128];

    snprintf(msg, sizeof(msg), "the request could not be read: %s",
             kube_httpreq_reason_phrase(code));
    c->req_len = 0;
    kube_srv_out_prepare(c);
    if (kube_status_json(&body, code, code == 413 ? "RequestEntityTooLarge" : "BadRequest", msg,
                         NULL) == KUBE_OK &&
        kube_buf_printf(&c->out,
                        "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                        "X-Content-Type-Options: nosniff\r\nContent-Length: %zu\r\n"
                        "Connection: close\r\n\r\n",
                        code, kube_httpreq_reason_phrase(code), body.len) == KUBE_OK &&
        kube_buf_append(&c->out, body.data, body.len) == KUBE_OK) {
        kube_observe_request(c->srv->ctx.observer, "other", "", code, 0);
        send_answer(c, 1);
    } else {
        kube_srv_kill_conn(c);
    }
    kube_buf_free(&body);
}

static void wake_service(void *ud);

/* Answers the exchange. A request whose body was not read (answered before
 * it, as a 401 or 403 is) closes its connection: its bytes are never
 * parsed. */
void kube_srv_respond(conn *c, kube_exchange *x)
{
    int body_unread = c->req_len == 0;
    int close_after =
        !c->keep_alive || kube_exchange_must_close(x) || c->srv->draining || body_unread;

    kube_srv_out_prepare(c);
    if (kube_exchange_serialize(x, !close_after, &c->out) != KUBE_OK) {
        kube_srv_kill_conn(c);
        return;
    }
    send_answer(c, close_after);
    c->stream = kube_exchange_take_stream(x);
    if (c->stream) { /* bounded by its deadline, not the write timeout */
        kube_srv_set_timeout(c, 0);
        kube_stream_attach(c->stream, wake_service, c->srv);
    }
}

/* ---- streamed answers (stream.h) ---- */

static void wake_service(void *ud)
{
    kube_server *s = ud;

    if (s->lws)
        lws_cancel_service(s->lws);
}

/* Has the streams with something to write written. */
static void wake_streams(kube_server *s)
{
    for (conn *c = s->conns; c; c = c->next)
        if (c->wsi && c->stream && kube_stream_pending(c->stream))
            lws_callback_on_writable(c->wsi);
}

/* Ends the streams past their deadline (all of them when draining). */
static void expire_streams(kube_server *s)
{
    int64_t now = kube_now_ms();

    for (conn *c = s->conns; c; c = c->next) {
        int64_t deadline = c->stream ? kube_stream_deadline(c->stream) : 0;
        if (c->wsi && c->stream && (s->draining || (deadline && now >= deadline))) {
            kube_stream_cancel(c->stream, 1);
            lws_callback_on_writable(c->wsi);
        }
    }
}

/* Takes what the stream produced into c->out; at its end, the connection
 * is bounded by the write timeout again. -1 when out of memory. */
static int take_stream(conn *c)
{
    int rc;

    kube_srv_out_prepare(c);
    rc = kube_stream_take(c->stream, &c->out);
    if (rc < 0)
        return -1;
    if (rc == 1) { /* over: the producer hears it too */
        kube_stream_cancel(c->stream, 1);
        kube_stream_unref(c->stream);
        c->stream = NULL;
        kube_srv_set_timeout(c, WRITE_TIMEOUT_S);
    }
    return 0;
}

/* ---- libwebsockets callbacks ---- */

/* Not one byte of a request yet: still in its TLS handshake, or silent
 * after it. */
static int silent(const conn *c)
{
    return c->phase == PH_HEAD && !c->started && c->in.len == 0;
}

/* At the cap, makes room for a new connection by closing the oldest silent
 * one (so a flood of half-open handshakes cannot lock out a health probe
 * or kube-apiserver). Returns 0 when there is room. */
static int make_room(kube_server *s)
{
    conn *oldest = NULL;

    if (s->n_conns < (size_t)s->max_conns)
        return 0;
    for (conn *c = s->conns; c; c = c->next) /* newest first */
        if (c->wsi && silent(c))
            oldest = c;
    if (!oldest)
        return -1;
    KLOG_V(2, "at %d connections: closing the oldest one still without a request", s->max_conns);
    kube_srv_kill_conn(oldest);
    conn_unlink(s, oldest); /* no longer counted; lws closes it next */
    oldest->evicted = 1;
    return 0;
}

static int on_adopt(kube_server *s, struct lws *wsi)
{
    conn *c;

    if (s->draining || !atomic_load(&s->accepting) || make_room(s) != 0)
        return -1;
    c = calloc(1, sizeof(*c));
    if (!c)
        return -1;
    c->srv = s;
    c->wsi = wsi;
    c->refs = 1;
    kube_httpreq_parser_init(&c->parser, &s->limits);
    lws_set_opaque_user_data(wsi, c);
    conn_link(s, c);
    /* the TLS handshake has its own bound, not the idle timeout (lws may
     * adopt before or after the handshake) */
    if (lws_get_ssl(wsi) && SSL_is_init_finished(lws_get_ssl(wsi)))
        kube_srv_set_timeout(c, s->header_timeout_s);
    else
        kube_srv_set_timeout(c, s->handshake_timeout_s);
    return 0;
}

/* The first request's head must come within the header timeout (armed
 * from the first writeable callback after the handshake: when it ends, lws
 * sets its own timeout after telling us). */
static void arm_header_timeout(conn *c)
{
    c->handshake_done = 2;
    if (silent(c))
        kube_srv_set_timeout(c, c->srv->header_timeout_s);
}

static int on_rx(conn *c, const void *in, size_t len)
{
    if (c->phase == PH_HEAD && c->in.len == 0)
        kube_srv_set_timeout(c, c->srv->header_timeout_s);
    if (kube_buf_append(&c->in, in, len) != KUBE_OK)
        return -1;
    if (c->phase == PH_EXCHANGE || c->phase == PH_ANSWER) {
        if (c->in.len > MAX_BUFFERED && !c->rx_paused) {
            c->rx_paused = 1;
            lws_rx_flow_control(c->wsi, 0);
        }
        return 0;
    }
    kube_srv_advance_input(c);
    return 0;
}

/* The answer went out: the connection waits for the next request. */
static int answer_done(conn *c)
{
    kube_buf_reset(&c->out);
    c->out_off = 0;
    c->flushing = 0;
    if (c->close_after)
        return -1;
    c->phase = PH_HEAD;
    kube_srv_set_timeout(c, c->in.len ? c->srv->header_timeout_s : IDLE_TIMEOUT_S);
    if (c->rx_paused) {
        c->rx_paused = 0;
        lws_rx_flow_control(c->wsi, 1);
    }
    if (c->in.len)
        kube_srv_advance_input(c);
    return 0;
}

static int on_writeable(conn *c)
{
    kube_server *s = c->srv;
    size_t n;

    if (c->handshake_done == 1)
        arm_header_timeout(c);
    if (c->flushing)
        return answer_done(c);
    if (c->stream && c->out_off >= c->out.len && take_stream(c) < 0)
        return -1;
    if (c->out_off >= c->out.len)
        return 0;
    n = c->out.len - c->out_off;
    if (n > WRITE_CHUNK)
        n = WRITE_CHUNK;
    memcpy(s->scratch + LWS_PRE, c->out.data + c->out_off, n);
    if (lws_write(c->wsi, s->scratch + LWS_PRE, n, LWS_WRITE_RAW) < (int)n)
        return -1;
    c->out_off += n;
    if (c->out_off >= c->out.len && c->phase == PH_ANSWER && !c->stream)
        c->flushing = 1;
    if (c->out_off < c->out.len || c->flushing || (c->stream && kube_stream_pending(c->stream)))
        lws_callback_on_writable(c->wsi);
    return 0;
}

static void on_close(conn *c)
{
    if (c->stream) {
        kube_stream_cancel(c->stream, 0);
        kube_stream_unref(c->stream);
        c->stream = NULL;
    }
    if (!c->evicted)
        conn_unlink(c->srv, c);
    c->wsi = NULL;
    kube_srv_conn_unref(c);
}

static int accept_any_certificate(int preverify_ok, X509_STORE_CTX *ctx)
{
    (void)preverify_ok;
    (void)ctx;
    return 1; /* requested, not required: verified per request by the exchange */
}

static void configure_tls(kube_server *s, SSL_CTX *ctx)
{
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, accept_any_certificate);
    SSL_CTX_set_min_proto_version(ctx, s->tls_min_version ? s->tls_min_version : TLS1_2_VERSION);
    if (s->cipher_list && SSL_CTX_set_cipher_list(ctx, s->cipher_list) != 1)
        KLOG_ERROR("--tls-cipher-suites: OpenSSL accepts none of %s", s->cipher_list);
    /* the certificate a connection proved is cached per connection: it
     * must not change under it */
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
    /* idle and half-open connections keep no 16 KiB read/write buffers */
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    kube_certs_attach(s->certs, ctx);
}

/* Stopping, and the shutdown delay (serving on with /readyz failing) is
 * over. */
static int drain_due(kube_server *s)
{
    return atomic_load(&s->stop_requested) &&
           kube_now_ms() >= atomic_load(&s->stop_at_ms) + s->shutdown_delay_ms;
}

static void begin_drain(kube_server *s)
{
    if (s->draining)
        return;
    s->draining = 1;
    s->drain_deadline_ms = kube_now_ms() + s->shutdown_timeout_ms;
    KLOG_INFO("shutting down: %zu connections, %d requests in flight", s->n_conns, s->inflight);
    for (conn *c = s->conns; c; c = c->next) {
        if (c->phase == PH_HEAD)
            kube_srv_kill_conn(c);
        else
            c->close_after = 1;
    }
    expire_streams(s);
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len)
{
    kube_server *s = lws_context_user(lws_get_context(wsi));
    conn *c = lws_get_opaque_user_data(wsi);

    switch (reason) {
    case LWS_CALLBACK_OPENSSL_LOAD_EXTRA_SERVER_VERIFY_CERTS:
        configure_tls(s, user);
        return 0;
    case LWS_CALLBACK_RAW_ADOPT:
        return on_adopt(s, wsi);
    case LWS_CALLBACK_SSL_INFO:
        if (c && (((struct lws_ssl_info *)in)->where & SSL_CB_HANDSHAKE_DONE)) {
            c->handshake_done = 1;
            lws_callback_on_writable(wsi);
        }
        return 0;
    case LWS_CALLBACK_RAW_RX:
        return c ? on_rx(c, in, len) : -1;
    case LWS_CALLBACK_RAW_WRITEABLE:
        return c ? on_writeable(c) : -1;
    case LWS_CALLBACK_RAW_CLOSE:
        if (c)
            on_close(c);
        lws_set_opaque_user_data(wsi, NULL);
        return 0;
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        if (!s)
            return 0;
        kube_srv_drain_completions(s);
        wake_streams(s);
        if (drain_due(s))
            begin_drain(s);
        return 0;
    default:
        return 0;
    }
}

static const struct lws_protocols protocols[] = {
    {"stickyvm-https", callback, 0, 0, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

/* ---- housekeeping ---- */

static void housekeeping(lws_sorted_usec_list_t *sul)
{
    kube_server *s = lws_container_of(sul, kube_server, housekeeping);

    kube_certs_reload_if_changed(s->certs);
    kube_authn_source_check_files(s->ctx.authn);
    if (drain_due(s))
        begin_drain(s);
    expire_streams(s);
    lws_sul_schedule(s->lws, 0, &s->housekeeping, housekeeping, HOUSEKEEPING_US);
}

/* ---- lifecycle ---- */

static int server_ready(void *ud)
{
    kube_server *s = ud;
    return !atomic_load(&s->stop_requested);
}

static int create_context(kube_server *s, const kube_server_options *o, char *err, size_t errlen)
{
    struct lws_context_creation_info info;

    memset(&info, 0, sizeof(info));
    /* DISABLE_OS_CA_CERTS: lws would load the OS CA bundle into the vhost's
     * client TLS context, which this server never uses (its upstream calls
     * go through kube/transport/client; peers are verified in authn.c). */
    info.options = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT | LWS_SERVER_OPTION_EXPLICIT_VHOSTS |
                   LWS_SERVER_OPTION_ADOPT_APPLY_LISTEN_ACCEPT_CONFIG |
                   LWS_SERVER_OPTION_DISABLE_OS_CA_CERTS;
    if (o->permit_port_sharing)
        info.options |= LWS_SERVER_OPTION_ALLOW_LISTEN_SHARE;
    info.port = o->port;
    info.iface = kube_lws_is_any_address(o->bind_address) ? NULL : o->bind_address;
    info.protocols = protocols;
    info.listen_accept_role = "raw-skt";
    info.listen_accept_protocol = protocols[0].name;
    info.ssl_cert_filepath = kube_certs_cert_file(s->certs);
    info.ssl_private_key_filepath = kube_certs_key_file(s->certs);
    info.alpn = "http/1.1";
    info.timeout_secs = (unsigned)s->handshake_timeout_s; /* lws's TLS accept bound */
    info.ssl_info_event_mask = SSL_CB_HANDSHAKE_DONE;
    /* lws stops polling the listener a little past the cap */
    info.simultaneous_ssl_restriction = s->max_conns + EVICT_SLACK;
    /* Without it lws sizes two zeroed tables by RLIMIT_NOFILE, 16 bytes a
     * descriptor: 16 MB at a container's usual 1048576, for a server that
     * never holds more than these (lws then finds a socket's connection
     * by a scan of this many slots, not by index). */
    info.fd_limit_per_thread = (unsigned)(s->max_conns + EVICT_SLACK + LWS_OWN_FDS);
    info.user = s;
    s->lws = lws_create_context(&info);
    if (s->lws)
        s->vhost = lws_create_vhost(s->lws, &info);
    if (!s->lws || !s->vhost) {
        snprintf(err, errlen, "cannot listen on %s:%d",
                 kube_lws_is_any_address(o->bind_address) ? "*" : o->bind_address, o->port);
        return KUBE_EIO;
    }
    s->port = lws_get_vhost_listen_port(s->vhost);
    return KUBE_OK;
}

/* A duration flag in whole seconds for lws timers (at least 1). */
static int secs(int64_t ms, int64_t dflt)
{
    if (ms <= 0)
        ms = dflt;
    return ms >= INT32_MAX / 2 ? INT32_MAX / 2 / 1000 : (int)((ms + 999) / 1000);
}

int kube_server_new(const kube_server_options *o, kube_server **out, char *err, size_t errlen)
{
    kube_server *s = calloc(1, sizeof(*s));
    int rc, workers;

    *out = NULL;
    if (!s)
        return KUBE_ENOMEM;
    pthread_mutex_init(&s->done_mu, NULL);
    atomic_init(&s->stop_requested, 0);
    atomic_init(&s->stop_at_ms, 0);
    atomic_init(&s->accepting, 1);
    s->certs = o->certs;
    s->ctx = o->ctx;
    s->tls_min_version = o->tls_min_version;
    if (o->cipher_list && !(s->cipher_list = kube_strdup(o->cipher_list))) {
        kube_server_free(s);
        return KUBE_ENOMEM;
    }
    s->ctx.ready = server_ready;
    s->ctx.ready_ud = s;
    s->max_inflight = o->max_inflight > 0 ? o->max_inflight : 400;
    s->request_timeout_s = secs(o->request_timeout_ms, 60000);
    s->handshake_timeout_s = secs(o->tls_handshake_timeout_ms, 10000);
    s->header_timeout_s = secs(o->read_header_timeout_ms, 32000);
    s->shutdown_timeout_ms = o->shutdown_timeout_ms >= 0 ? o->shutdown_timeout_ms : 30000;
    s->shutdown_delay_ms = o->shutdown_delay_ms > 0 ? o->shutdown_delay_ms : 0;
    workers = o->workers > 0 ? o->workers : 16;
    s->max_conns = kube_lws_connection_limit(o->max_connections > 0 ? o->max_connections : 1024,
                                             FD_RESERVE_MIN + 2 * workers + EVICT_SLACK);
    kube_httpreq_limits_default(&s->limits);
    kube_lws_route_logs();
    rc = kube_pool_new(workers, &s->pool);
    if (rc == KUBE_OK)
        rc = create_context(s, o, err, errlen);
    if (rc != KUBE_OK) {
        kube_server_free(s);
        return rc;
    }
    lws_sul_schedule(s->lws, 0, &s->housekeeping, housekeeping, HOUSEKEEPING_US);
    *out = s;
    return KUBE_OK;
}

int kube_server_port(const kube_server *s)
{
    return s->port;
}

static int drained(kube_server *s)
{
    if (!s->draining)
        return 0;
    return (s->n_conns == 0 && s->inflight == 0) || kube_now_ms() >= s->drain_deadline_ms;
}

int kube_server_run(kube_server *s)
{
    KLOG_INFO("serving securely on port %d (at most %d connections)", s->port, s->max_conns);
    while (!drained(s))
        if (lws_service(s->lws, 0) < 0)
            break;
    atomic_store(&s->accepting, 0);
    /* let running jobs end while the context can still be woken */
    kube_pool_free(s->pool);
    s->pool = NULL;
    kube_srv_drain_completions(s);
    lws_sul_cancel(&s->housekeeping);
    lws_context_destroy(s->lws);
    s->lws = NULL;
    KLOG_INFO("stopped serving");
    return KUBE_OK;
}

void kube_server_stop(kube_server *s)
{
    int_fast64_t none = 0;

    if (atomic_compare_exchange_strong(&s->stop_at_ms, &none, kube_now_ms()) &&
        s->shutdown_delay_ms > 0)
        KLOG_INFO("shutting down in %lld ms: /readyz fails, requests are still served",
                  (long long)s->shutdown_delay_ms);
    atomic_store(&s->stop_requested, 1);
    if (s->lws)
        lws_cancel_service(s->lws);
}

void kube_server_free(kube_server *s)
{
    if (!s)
        return;
    kube_pool_free(s->pool);
    if (s->lws) {
        kube_srv_drain_completions(s);
        lws_sul_cancel(&s->housekeeping);
        lws_context_destroy(s->lws);
    }
    pthread_mutex_destroy(&s->done_mu);
    free(s->cipher_list);
    free(s);
}
