/*
 * kube/serving/server_request.c - a connection's requests: the head parsed
 * incrementally, the exchange started on it (authenticated and authorized
 * before any body is read), the body read only then, and the upstream
 * work run on the pool's workers, never on the libwebsockets thread.
 */
#include "kube/serving/server_int.h"

/* ---- the worker side ---- */

static void complete(job *j)
{
    kube_server *s = j->srv;

    pthread_mutex_lock(&s->done_mu);
    if (s->done_tail)
        s->done_tail->next = j;
    else
        s->done_head = j;
    s->done_tail = j;
    pthread_mutex_unlock(&s->done_mu);
    lws_cancel_service(s->lws);
}

static void run_job(void *arg)
{
    job *j = arg;

    j->rc = kube_exchange_run(j->x, 1);
    complete(j);
}

static void finish_job(kube_server *s, job *j)
{
    s->inflight--;
    kube_observe_inflight(s->ctx.observer, -1);
    if (j->c->wsi)
        kube_srv_step(j->c, j->x, j->rc);
    else
        kube_exchange_free(j->x);
    kube_srv_conn_unref(j->c);
    free(j);
}

void kube_srv_drain_completions(kube_server *s)
{
    job *j;

    pthread_mutex_lock(&s->done_mu);
    j = s->done_head;
    s->done_head = s->done_tail = NULL;
    pthread_mutex_unlock(&s->done_mu);
    while (j) {
        job *next = j->next;
        finish_job(s, j);
        j = next;
    }
}

/* ---- requests ---- */

static void load_peer(conn *c)
{
    SSL *ssl = lws_get_ssl(c->wsi);

    c->peer_loaded = 1;
    if (!ssl)
        return;
    c->pc.leaf = SSL_get1_peer_certificate(ssl);
    c->pc.chain = SSL_get_peer_cert_chain(ssl);
}

static int offload(conn *c, kube_exchange *x)
{
    kube_server *s = c->srv;
    job *j = calloc(1, sizeof(*j));

    if (!j)
        return KUBE_ENOMEM;
    j->srv = s;
    j->c = c;
    j->x = x;
    c->refs++;
    if (kube_pool_submit(s->pool, run_job, j) != KUBE_OK) {
        c->refs--;
        free(j);
        return KUBE_ECANCELED;
    }
    s->inflight++;
    kube_observe_inflight(s->ctx.observer, 1);
    return KUBE_OK;
}

/* The exchange is authorized: reads its body (none: at once), after a
 * 100 Continue when the client waits for one. */
static void await_body(conn *c, kube_exchange *x)
{
    if (!kube_httpreq_has_body(&c->req)) {
        kube_exchange_set_body(x, NULL, 0);
        kube_srv_step(c, x, kube_exchange_run(x, 0));
        return;
    }
    c->x = x;
    c->phase = PH_BODY;
    if (c->req.expect_continue) {
        kube_srv_out_prepare(c);
        if (kube_buf_puts(&c->out, CONTINUE_LINE) == KUBE_OK)
            lws_callback_on_writable(c->wsi);
    }
    if (c->rx_paused) {
        c->rx_paused = 0;
        lws_rx_flow_control(c->wsi, 1);
    }
    kube_srv_advance_input(c);
}

/* Moves an exchange on after kube_exchange_run() said rc. */
void kube_srv_step(conn *c, kube_exchange *x, int rc)
{
    kube_server *s = c->srv;

    if (rc == KUBE_EXCHANGE_BLOCKED) {
        if (s->inflight >= s->max_inflight)
            kube_exchange_fail(x, 429, "TooManyRequests",
                               "Too many requests, please try again later.");
        else if (offload(c, x) == KUBE_OK)
            return;
        else
            kube_exchange_fail(x, 503, "ServiceUnavailable", "the server is shutting down");
    } else if (rc == KUBE_EXCHANGE_NEED_BODY) {
        await_body(c, x);
        return;
    }
    kube_srv_respond(c, x);
    kube_exchange_observe(x);
    kube_exchange_free(x);
}

/* The head is whole: authentication and authorization start on it. */
static void start_request(conn *c)
{
    kube_server *s = c->srv;
    kube_exchange *x = NULL;

    c->phase = PH_EXCHANGE;
    c->started = 1;
    c->keep_alive = c->req.keep_alive && !s->draining;
    kube_srv_set_timeout(c, s->request_timeout_s);
    if (!c->peer_loaded)
        load_peer(c);
    if (kube_exchange_new(&s->ctx, &c->req, c->pc.leaf ? &c->pc : NULL, &x) != KUBE_OK) {
        kube_srv_kill_conn(c);
        return;
    }
    kube_srv_step(c, x, kube_exchange_run(x, 0));
}

static void read_head(conn *c)
{
    int status = 0;
    int n = kube_httpreq_parse_head(&c->parser, c->in.data, c->in.len, &c->req, &status);

    if (n == 0)
        return;
    if (n < 0) {
        kube_srv_answer_parse_error(c, n == KUBE_ENOMEM ? 500 : status);
        return;
    }
    c->req_len = kube_httpreq_has_body(&c->req) ? 0 : (size_t)n;
    start_request(c);
}

static void read_body(conn *c)
{
    kube_exchange *x = c->x;
    int status = 0;
    int n = kube_httpreq_parse_body(&c->parser, c->in.data, c->in.len, &c->req, &status);

    if (n == 0)
        return;
    c->x = NULL;
    if (n < 0) {
        kube_exchange_free(x);
        kube_srv_answer_parse_error(c, n == KUBE_ENOMEM ? 500 : status);
        return;
    }
    c->req_len = (size_t)n;
    c->phase = PH_EXCHANGE;
    kube_exchange_set_body(x, c->req.body, c->req.body_len);
    kube_srv_step(c, x, kube_exchange_run(x, 0));
}

/* Parses what arrived, as far as the connection's phase allows. */
void kube_srv_advance_input(conn *c)
{
    if (c->phase == PH_HEAD)
        read_head(c);
    else if (c->phase == PH_BODY)
        read_body(c);
}
