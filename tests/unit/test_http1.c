/*
 * tests/unit/test_http1.c - kube/http1, the lean HTTP/1.1 keep-alive client,
 * against a scripted plain-HTTP server on loopback: keep-alive reuse, the
 * request bytes as sent, chunked, interim 1xx, Retry-After, close-delimited
 * bodies, connections the server closed while idle or under a request,
 * malformed answers, timeouts, cancellation, refused connections, and the
 * argument checks of kube_h1_new (and kube/tls refusing material that is
 * not PEM).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kube/buf.h"
#include "kube/errors.h"
#include "kube/http1.h"
#include "kube/tls.h"

/* ---- a scripted HTTP/1.1 server on loopback ---------------------------- */

#define SRV_MAX 16
#define SRV_WAIT_MS 10000 /* bound of every wait of the server thread */

typedef struct srv_step {
    const char *answer; /* bytes sent once the request is read; NULL: none */
    int close;          /* 1: close the connection afterwards; 2: only send
                           the FIN (shutdown SHUT_WR) and keep reading it */
} srv_step;

typedef struct srv {
    int lfd;
    int port;
    pthread_t thread;
    int running;
    atomic_int stop;
    const srv_step *steps;
    int n_steps;
    pthread_mutex_t lock;
    char *requests[SRV_MAX]; /* raw bytes, NUL-terminated */
    int n_requests;
    int accepts;
    int steps_done;
    kube_h1 *h;
    kube_h1_response r;
} srv;

static int srv_get(srv *s, int *field)
{
    int v;

    pthread_mutex_lock(&s->lock);
    v = *field;
    pthread_mutex_unlock(&s->lock);
    return v;
}

static void srv_add(srv *s, int *field)
{
    pthread_mutex_lock(&s->lock);
    (*field)++;
    pthread_mutex_unlock(&s->lock);
}

/* Waits (bounded, in slices so stop is seen) until fd is readable. */
static int srv_wait(srv *s, int fd)
{
    for (int waited = 0; waited < SRV_WAIT_MS && !atomic_load(&s->stop); waited += 20) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 20) > 0)
            return 1;
    }
    return 0;
}

static int srv_accept(srv *s)
{
    int fd;

    if (!srv_wait(s, s->lfd) || (fd = accept(s->lfd, NULL, NULL)) < 0)
        return -1;
    srv_add(s, &s->accepts);
    return fd;
}

/* The end of the head ("\r\n\r\n" included) in in, or 0. */
static size_t srv_head_end(const kube_buf *in)
{
    for (size_t i = 0; i + 4 <= in->len; i++)
        if (!memcmp(in->data + i, "\r\n\r\n", 4))
            return i + 4;
    return 0;
}

/* The Content-Length of the head [p, p+n), 0 when absent, -1 if malformed. */
static long srv_content_length(const char *p, size_t n)
{
    const char *end = p + n;

    for (const char *line = p; line < end;) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        size_t len = eol ? (size_t)(eol - line) : (size_t)(end - line);

        if (len > 15 && !strncasecmp(line, "Content-Length:", 15)) {
            char num[32];
            int64_t v;
            size_t k = len - 15;
            const char *d = line + 15;

            while (k && *d == ' ')
                d++, k--;
            while (k && (d[k - 1] == '\r' || d[k - 1] == ' '))
                k--;
            if (k == 0 || k >= sizeof(num))
                return -1;
            memcpy(num, d, k);
            num[k] = '\0';
            return kube_parse_int64(num, 0, 1 << 20, &v) == KUBE_OK ? (long)v : -1;
        }
        line += len + 1;
    }
    return 0;
}

/* Reads one whole request into in; returns its length, or 0 when the
 * client closed the connection (or went quiet past the bound). */
static size_t srv_read_request(srv *s, int fd, kube_buf *in)
{
    char chunk[4096];
    size_t head;
    long cl = -1;

    for (;;) {
        ssize_t n;

        if ((head = srv_head_end(in)) != 0) {
            if (cl < 0 && (cl = srv_content_length(in->data, head)) < 0)
                return 0;
            if (in->len >= head + (size_t)cl)
                return head + (size_t)cl;
        }
        if (!srv_wait(s, fd) || (n = recv(fd, chunk, sizeof(chunk), 0)) <= 0)
            return 0;
        if (kube_buf_append(in, chunk, (size_t)n) != KUBE_OK)
            return 0;
    }
}

static void srv_send(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static void *srv_thread(void *arg)
{
    srv *s = arg;
    kube_buf in = KUBE_BUF_INIT;
    int fd = -1;

    for (int i = 0; i < s->n_steps && !atomic_load(&s->stop); i++) {
        const srv_step *st = &s->steps[i];
        size_t len = 0;
        char *copy;

        while (len == 0 && !atomic_load(&s->stop)) {
            if (fd < 0) {
                kube_buf_reset(&in);
                if ((fd = srv_accept(s)) < 0)
                    break;
            }
            if ((len = srv_read_request(s, fd, &in)) == 0) { /* the client closed it */
                close(fd);
                fd = -1;
            }
        }
        if (len == 0)
            break;
        copy = malloc(len + 1);
        if (copy) {
            memcpy(copy, in.data, len);
            copy[len] = '\0';
        }
        pthread_mutex_lock(&s->lock);
        if (s->n_requests < SRV_MAX)
            s->requests[s->n_requests++] = copy;
        else
            free(copy);
        pthread_mutex_unlock(&s->lock);
        memmove(in.data, in.data + len, in.len - len);
        in.len -= len;
        if (st->answer)
            srv_send(fd, st->answer, strlen(st->answer));
        if (st->close == 2) {
            shutdown(fd, SHUT_WR);
        } else if (st->close) {
            close(fd);
            fd = -1;
        }
        srv_add(s, &s->steps_done);
    }
    /* script done: keep the connection as it is until told to stop */
    for (int waited = 0; waited < SRV_WAIT_MS && !atomic_load(&s->stop); waited += 10)
        poll(NULL, 0, 10);
    if (fd >= 0)
        close(fd);
    kube_buf_free(&in);
    return NULL;
}

static int srv_setup(void **state)
{
    srv *s = calloc(1, sizeof(*s));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);

    if (!s)
        return -1;
    pthread_mutex_init(&s->lock, NULL);
    *state = s;
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(s->lfd, 16) != 0 || getsockname(s->lfd, (struct sockaddr *)&a, &alen) != 0)
        return -1;
    s->port = ntohs(a.sin_port);
    return 0;
}

/* Stops the server thread and waits for it: the requests and counts are
 * final afterwards. */
static void srv_finish(srv *s)
{
    if (!s->running)
        return;
    atomic_store(&s->stop, 1);
    pthread_join(s->thread, NULL);
    s->running = 0;
}

static int srv_teardown(void **state)
{
    srv *s = *state;

    if (!s)
        return 0;
    srv_finish(s);
    kube_h1_free(s->h);
    kube_buf_free(&s->r.body);
    if (s->lfd >= 0)
        close(s->lfd);
    for (int i = 0; i < s->n_requests; i++)
        free(s->requests[i]);
    pthread_mutex_destroy(&s->lock);
    free(s);
    return 0;
}

/* Starts the server on the script and makes the client for it. */
static void srv_run(srv *s, const srv_step *steps, int n)
{
    kube_h1_target t = {0};
    char err[256] = "";

    s->steps = steps;
    s->n_steps = n;
    assert_int_equal(pthread_create(&s->thread, NULL, srv_thread, s), 0);
    s->running = 1;
    t.tls = 0;
    t.host = "127.0.0.1";
    t.port = s->port;
    t.connect_timeout_ms = 2000;
    assert_int_equal(kube_h1_new(&t, &s->h, err, sizeof(err)), KUBE_OK);
    assert_non_null(s->h);
}

/* One exchange into s->r (its body emptied first). */
static int call(srv *s, const char *method, const char *target, const char *headers,
                const char *body, long timeout_ms, atomic_int *cancel, char *err, size_t errlen)
{
    kube_h1_request q = {method, target, headers, body, body ? strlen(body) : 0,
                         timeout_ms, cancel};

    kube_buf_reset(&s->r.body);
    return kube_h1_exchange(s->h, &q, &s->r, err, errlen);
}

static int get(srv *s, const char *target)
{
    char err[256] = "";
    int rc = call(s, "GET", target, NULL, NULL, 5000, NULL, err, sizeof(err));

    if (rc != KUBE_OK)
        print_message("GET %s: rc %d: %s\n", target, rc, err);
    return rc;
}

static void assert_body(const srv *s, const char *want)
{
    assert_int_equal(s->r.body.len, strlen(want));
    assert_memory_equal(s->r.body.data, want, s->r.body.len);
}

static void assert_contains(const char *hay, const char *needle)
{
    if (!strstr(hay, needle))
        fail_msg("\"%s\" not found in \"%s\"", needle, hay);
}

/* Request i as the server received it (after srv_finish). */
static const char *request(const srv *s, int i)
{
    assert_true(i < s->n_requests);
    assert_non_null(s->requests[i]);
    return s->requests[i];
}

#define OK_HELLO "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"

/* ---- the cases ---------------------------------------------------------- */

/* 1: two GETs share one connection. */
static void keep_alive_reuses_the_connection(void **state)
{
    srv *s = *state;
    static const srv_step steps[] = {{OK_HELLO, 0}, {OK_HELLO, 0}};

    srv_run(s, steps, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(get(s, "/api/v1/pods"), KUBE_OK);
        assert_int_equal(s->r.code, 200);
        assert_int_equal(s->r.retry_after_s, -1);
        assert_body(s, "hello");
    }
    srv_finish(s);
    assert_int_equal(s->n_requests, 2);
    assert_int_equal(s->accepts, 1);
}

/* 2: the request bytes as sent. */
static void sends_the_request_as_specified(void **state)
{
    srv *s = *state;
    static const srv_step steps[] = {{OK_HELLO, 0}, {OK_HELLO, 0}, {OK_HELLO, 0}, {OK_HELLO, 0}};
    char want[256], err[256] = "";

    srv_run(s, steps, 4);
    assert_int_equal(call(s, "POST", "/apis/x?y=1", "Content-Type: application/json\r\n", "abc",
                          5000, NULL, err, sizeof(err)),
                     KUBE_OK);
    assert_int_equal(get(s, "/api/v1/nodes"), KUBE_OK);
    assert_int_equal(call(s, "PATCH", "/p", NULL, NULL, 5000, NULL, err, sizeof(err)), KUBE_OK);
    assert_int_equal(call(s, "POST", "/q", NULL, NULL, 5000, NULL, err, sizeof(err)), KUBE_OK);
    srv_finish(s);
    assert_int_equal(s->n_requests, 4);
    snprintf(want, sizeof(want),
             "POST /apis/x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
             "Content-Type: application/json\r\nContent-Length: 3\r\n\r\nabc",
             s->port);
    assert_string_equal(request(s, 0), want);
    snprintf(want, sizeof(want), "GET /api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n",
             s->port);
    assert_string_equal(request(s, 1), want);
    assert_null(strcasestr(request(s, 1), "Content-Length"));
    snprintf(want, sizeof(want), "PATCH /p HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 0\r\n\r\n",
             s->port);
    assert_string_equal(request(s, 2), want);
    snprintf(want, sizeof(want), "POST /q HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 0\r\n\r\n",
             s->port);
    assert_string_equal(request(s, 3), want);
    assert_int_equal(s->accepts, 1);
}

/* 3: chunked body with an extension and a trailer; the connection is reused. */
static void reads_chunked_bodies(void **state)
{
    srv *s = *state;
    static const srv_step steps[] = {
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
         "4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\nTrailer: x\r\n\r\n",
         0},
        {OK_HELLO, 0}};

    srv_run(s, steps, 2);
    assert_int_equal(get(s, "/a"), KUBE_OK);
    assert_int_equal(s->r.code, 200);
    assert_body(s, "Wikipedia");
    assert_int_equal(get(s, "/b"), KUBE_OK);
    assert_body(s, "hello");
    srv_finish(s);
    assert_int_equal(s->n_requests, 2);
    assert_int_equal(s->accepts, 1);
}

/* 4: an interim 100 Continue is skipped. */
static void skips_interim_answers(void **state)
{
    srv *s = *state;
    static const srv_step steps[] = {
        {"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", 0}};

    srv_run(s, steps, 1);
    assert_int_equal(get(s, "/a"), KUBE_OK);
    assert_int_equal(s->r.code, 201);
    assert_body(s, "ok");
}

/* 4b: a 101 Switching Protocols is final, and its connection is not
 * pooled: it no longer speaks HTTP/1.1. */
static void switching_protocols_is_not_pooled(void **state)
{
    srv *s = *state;
    static const srv_step steps[] = {
        {"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n", 0},
        {OK_HELLO, 0}};

    srv_run(s, steps, 2);
    assert_int_equal(get(s, "/a"), KUBE_OK);
    assert_int_equal(s->r.code, 101);
    assert_int_equal(get(s, "/b"), KUBE_OK);
    assert_body(s, "hello");
    srv_finish(s);
    assert_int_equal(s->accepts, 2);
}

/* 5: Retry-After in seconds is reported; an HTTP-date is not. */
static void reports_retry_after_seconds(void **state)
{
    srv *s = *state;
    static const srv_step steps[] = {
        {"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: 0\r\n\r\n", 0},
        {"HTTP/1.1 503 Service Unavailable\r\nRetry-After: Wed, 21 Oct 2015 07:28:00 GMT\r\n"
         "Content-Length: 0\r\n\r\n",
         0}};

    srv_run(s, steps, 2);
    assert_int_equal(get(s, "/a"), KUBE_OK);
    assert_int_equal(s->r.code, 429);
    assert_int_equal(s->r.retry_after_s, 7);
    assert_int_equal(s->r.body.len, 0);
    assert_int_equal(get(s, "/b"), KUBE_OK);
    assert_int_equal(s->r.code, 503);
    assert_int_equal(s->r.retry_after_s, -1);
}

#define BIG_HEAD "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n"
#define BIG_BODY 200000

/* 6: a body delimited by the server's close; the next request connects anew. */
static void reads_close_delimited_bodies(void **state)
{
    srv *s = *state;
    static char big[sizeof(BIG_HEAD) - 1 + BIG_BODY + 1];
    static const srv_step steps[] = {{"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbye", 1},
                                     {OK_HELLO, 0},
                                     {big, 1}};

    /* an HTTP/1.1 answer without length, larger than one read */
    memcpy(big, BIG_HEAD, sizeof(BIG_HEAD) - 1);
    memset(big + sizeof(BIG_HEAD) - 1, 'x', BIG_BODY);
    big[sizeof(big) - 1] = '\0';
    srv_run(s, steps, 3);
    assert_int_equal(get(s, "/a"), KUBE_OK);
    assert_int_equal(s->r.code, 200);
    assert_body(s, "bye");
    assert_int_equal(get(s, "/b"), KUBE_OK);
    assert_body(s, "hello");
    assert_int_equal(get(s, "/c"), KUBE_OK);
    assert_int_equal(s->r.body.len, BIG_BODY);
    for (size_t i = 0; i < BIG_BODY; i++)
        if (s->r.body.data[i] != 'x')
            fail_msg("body byte %zu is %d", i, s->r.body.data[i]);
    srv_finish(s);
    assert_int_equal(s->n_requests, 3);
    assert_int_equal(s->accepts, 2);
}

/* Two GETs where the server ends the first connection after its answer
 * (close 1: closes it, 2: half-closes it, the socket kept open for
 * reading): the second GET succeeds, and on a new connection. */
static void second_get_after_idle_close(srv *s, int close)
{
    const srv_step steps[] = {{OK_HELLO, close}, {OK_HELLO, 0}};

    srv_run(s, steps, 2);
    assert_int_equal(get(s, "/a"), KUBE_OK);
    /* bounded wait until the server has ended the first connection */
    for (int i = 0; i < 500 && srv_get(s, &s->steps_done) < 1; i++)
        poll(NULL, 0, 10);
    assert_int_equal(srv_get(s, &s->steps_done), 1);
    assert_int_equal(get(s, "/b"), KUBE_OK);
    assert_int_equal(s->r.code, 200);
    assert_body(s, "hello");
    srv_finish(s);
    assert_int_equal(s->n_requests, 2);
    assert_int_equal(s->accepts, 2); /* 1: /b went on the ended connection */
}

/* 7: the server closed a kept-alive connection while it was idle. */
static void drops_idle_connections_the_server_closed(void **state)
{
    second_get_after_idle_close(*state, 1);
}

/* 7 again, observed from the server: after its FIN on an idle connection,
 * the client must not send the next request on that connection (the resend
 * on a failed reused connection would hide it after a full close). */
static void checks_idle_connections_before_use(void **state)
{
    second_get_after_idle_close(*state, 2);
}

/* 7b: the server closes a reused connection after reading the request,
 * without answering: the request goes once more, on a new connection, and
 * only once (a second failure, on that new connection, is the answer). */
static void resends_once_when_a_reused_connection_fails(void **state)
{
    srv *s = *state;
    static const srv_step steps[] = {{OK_HELLO, 0}, {NULL, 1}, {OK_HELLO, 0}, {NULL, 1},
                                     {NULL, 1}};
    char err[256] = "";

    srv_run(s, steps, 5);
    assert_int_equal(get(s, "/a"), KUBE_OK);
    assert_int_equal(get(s, "/b"), KUBE_OK);
    assert_int_equal(s->r.code, 200);
    assert_body(s, "hello");
    /* /c goes on the pooled second connection, fails, goes once more on a
     * third one, fails again: no third try (it would find no server step
     * and time out) */
    assert_int_equal(call(s, "GET", "/c", NULL, NULL, 2000, NULL, err, sizeof(err)), KUBE_EIO);
    assert_true(err[0] != '\0');
    srv_finish(s);
    assert_int_equal(s->n_requests, 5);
    assert_contains(request(s, 0), "GET /a ");
    assert_contains(request(s, 1), "GET /b ");
    assert_contains(request(s, 2), "GET /b ");
    assert_contains(request(s, 3), "GET /c ");
    assert_contains(request(s, 4), "GET /c ");
    assert_int_equal(s->accepts, 3);
}

/* 8: a malformed answer. */
static void rejects_malformed_answers(void **state)
{
    srv *s = *state;
    static const srv_step steps[] = {{"garbage\r\n\r\n", 0}};
    char err[256] = "";

    srv_run(s, steps, 1);
    assert_int_equal(call(s, "GET", "/a", NULL, NULL, 5000, NULL, err, sizeof(err)), KUBE_EIO);
    assert_true(err[0] != '\0');
    srv_finish(s);
    assert_int_equal(s->n_requests, 1);
    assert_int_equal(s->accepts, 1);
}

/* 9a: no answer within timeout_ms. */
static void times_out_without_an_answer(void **state)
{
    srv *s = *state;
    static const srv_step steps[] = {{NULL, 0}};
    char err[256] = "";
    int64_t t0, took;

    srv_run(s, steps, 1);
    t0 = kube_now_ms();
    assert_int_equal(call(s, "GET", "/a", NULL, NULL, 300, NULL, err, sizeof(err)),
                     KUBE_ETIMEDOUT);
    took = kube_now_ms() - t0;
    assert_true(err[0] != '\0');
    assert_true(took >= 250);
    assert_true(took < 3000);
    srv_finish(s);
    assert_int_equal(s->n_requests, 1);
}

typedef struct canceller {
    srv *s;
    atomic_int *flag;
} canceller;

/* Sets the flag once the server holds the request (a bounded wait). */
static void *cancel_thread(void *arg)
{
    canceller *c = arg;

    for (int i = 0; i < 500 && srv_get(c->s, &c->s->n_requests) < 1; i++)
        poll(NULL, 0, 10);
    atomic_store(c->flag, 1);
    return NULL;
}

/* 9b: cancellation, from another thread while the answer is awaited, and
 * set before the call. */
static void cancels(void **state)
{
    srv *s = *state;
    static const srv_step steps[] = {{NULL, 0}};
    atomic_int flag = 0;
    canceller c = {s, &flag};
    pthread_t t;
    char err[256] = "";
    int64_t t0;
    int rc;

    srv_run(s, steps, 1);
    assert_int_equal(pthread_create(&t, NULL, cancel_thread, &c), 0);
    t0 = kube_now_ms();
    rc = call(s, "GET", "/a", NULL, NULL, 10000, &flag, err, sizeof(err));
    pthread_join(t, NULL);
    assert_int_equal(rc, KUBE_ECANCELED);
    assert_true(err[0] != '\0');
    assert_true(kube_now_ms() - t0 < 3000);

    /* still set: the next call ends at once (the script has ended, so the
     * server thread no longer reads) */
    err[0] = '\0';
    t0 = kube_now_ms();
    assert_int_equal(call(s, "GET", "/b", NULL, NULL, 10000, &flag, err, sizeof(err)),
                     KUBE_ECANCELED);
    assert_true(err[0] != '\0');
    assert_true(kube_now_ms() - t0 < 3000);
    srv_finish(s);
    assert_int_equal(s->n_requests, 1);
    assert_contains(request(s, 0), "GET /a ");
}

/* 10: nothing listens on the port. */
static void reports_refused_connections(void **state)
{
    srv *s = *state;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);
    kube_h1_target t = {0};
    kube_h1_request q = {"GET", "/a", NULL, NULL, 0, 2000, NULL};
    char err[256] = "", port[16];
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

    /* a port bound but not listening: connecting to it is refused */
    assert_true(fd >= 0);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
        close(fd);
        fail_msg("cannot bind a loopback port");
    }
    t.host = "127.0.0.1";
    t.port = ntohs(a.sin_port);
    if (kube_h1_new(&t, &s->h, err, sizeof(err)) != KUBE_OK) {
        close(fd);
        fail_msg("kube_h1_new: %s", err);
    }
    rc = kube_h1_exchange(s->h, &q, &s->r, err, sizeof(err));
    close(fd);
    assert_int_equal(rc, KUBE_EIO);
    assert_int_equal(s->r.connected, 0);
    snprintf(port, sizeof(port), "%d", t.port);
    assert_contains(err, "127.0.0.1");
    assert_contains(err, port);
}

/* kube_h1_new: argument checks and TLS material. */
static void new_checks_its_arguments(void **state)
{
    kube_h1_target t = {0};
    kube_h1 *h = (kube_h1 *)(void *)&t; /* must be reset to NULL */
    char err[256] = "";

    (void)state;
    assert_int_equal(kube_h1_new(NULL, &h, err, sizeof(err)), KUBE_EINVAL);
    assert_null(h);
    t.host = "127.0.0.1";
    t.port = 0;
    h = (kube_h1 *)(void *)&t;
    assert_int_equal(kube_h1_new(&t, &h, err, sizeof(err)), KUBE_EINVAL);
    assert_null(h);
    t.port = 65536;
    assert_int_equal(kube_h1_new(&t, &h, err, sizeof(err)), KUBE_EINVAL);
    t.port = 443;
    t.host = NULL;
    assert_int_equal(kube_h1_new(&t, &h, err, sizeof(err)), KUBE_EINVAL);

    /* (TLS material that is not PEM is refused by kube/tls before it gets
     * here: tests/unit/test_tls.c) */
    t.host = "127.0.0.1";
    /* tls=1 without material: the system's store, or none when insecure */
    t.tls = 1;
    t.insecure = 1;
    err[0] = '\0';
    assert_int_equal(kube_h1_new(&t, &h, err, sizeof(err)), KUBE_OK);
    assert_non_null(h);
    kube_h1_free(h);

    /* plain http */
    t.tls = 0;
    t.insecure = 0;
    assert_int_equal(kube_h1_new(&t, &h, err, sizeof(err)), KUBE_OK);
    assert_non_null(h);
    kube_h1_free(h);
    kube_h1_free(NULL);
}

#define SRV_TEST(f) cmocka_unit_test_setup_teardown(f, srv_setup, srv_teardown)

int test_group_http1(void)
{
    const struct CMUnitTest tests[] = {
        SRV_TEST(keep_alive_reuses_the_connection),
        SRV_TEST(sends_the_request_as_specified),
        SRV_TEST(reads_chunked_bodies),
        SRV_TEST(skips_interim_answers),
        SRV_TEST(switching_protocols_is_not_pooled),
        SRV_TEST(reports_retry_after_seconds),
        SRV_TEST(reads_close_delimited_bodies),
        SRV_TEST(drops_idle_connections_the_server_closed),
        SRV_TEST(checks_idle_connections_before_use),
        SRV_TEST(resends_once_when_a_reused_connection_fails),
        SRV_TEST(rejects_malformed_answers),
        SRV_TEST(times_out_without_an_answer),
        SRV_TEST(cancels),
        SRV_TEST(reports_refused_connections),
        cmocka_unit_test(new_checks_its_arguments),
    };

    return cmocka_run_group_tests_name("http1", tests, NULL, NULL);
}
