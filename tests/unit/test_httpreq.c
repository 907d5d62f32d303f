/*
 * tests/unit/test_httpreq.c - kube/serving/httpreq, the HTTP/1.1 request parser of
 * stickyvm-apiserver and the emulator: framing, limits and the smuggling
 * rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "kube/serving/httpreq.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"

static int parse(const char *text, kube_httpreq_request *req, int *status)
{
    kube_httpreq_limits lim;

    kube_httpreq_limits_default(&lim);
    return kube_httpreq_parse(text, strlen(text), &lim, req, status);
}

static void parses_a_simple_get(void **state)
{
    const char *t = "GET /apis/subresources.stickyvm.io/v1?timeout=32s HTTP/1.1\r\n"
                    "Host: 10.96.0.50:8443\r\nUser-Agent: Go-http-client/1.1\r\n"
                    "X-Remote-Group: system:masters\r\nX-Remote-User:  system:kube-aggregator \r\n"
                    "Accept-Encoding: gzip\r\n\r\n";
    kube_httpreq_request req;
    int status;
    (void)state;

    assert_int_equal(parse(t, &req, &status), (int)strlen(t));
    assert_string_equal(req.method, "GET");
    assert_string_equal(req.target, "/apis/subresources.stickyvm.io/v1?timeout=32s");
    assert_int_equal(req.minor, 1);
    assert_int_equal(req.n_headers, 5);
    assert_string_equal(kube_httpreq_header_get(&req, "x-remote-user"), "system:kube-aggregator");
    assert_int_equal(req.keep_alive, 1);
    assert_int_equal(req.body_len, 0);
    assert_int_equal(req.upgrade, 0);
    kube_httpreq_request_free(&req);
}

static void keeps_repeated_headers_in_order(void **state)
{
    const char *t = "GET / HTTP/1.1\r\nHost: h\r\nX-Remote-Group: system:masters\r\n"
                    "X-Remote-User: admin\r\nX-Remote-Group: system:authenticated\r\n\r\n";
    kube_httpreq_request req;
    int status;
    (void)state;

    assert_true(parse(t, &req, &status) > 0);
    assert_int_equal(kube_httpreq_header_count(&req, "X-REMOTE-GROUP"), 2);
    assert_string_equal(req.headers[1].value, "system:masters");
    assert_string_equal(req.headers[3].value, "system:authenticated");
    assert_int_equal(kube_httpreq_header_remove_prefix(&req, "x-remote-"), 3);
    assert_int_equal(req.n_headers, 1);
    assert_string_equal(req.headers[0].name, "Host");
    kube_httpreq_request_free(&req);
}

static void needs_more_until_complete(void **state)
{
    const char *t = "PUT /x HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}";
    kube_httpreq_limits lim;
    kube_httpreq_request req;
    int status;
    size_t n = strlen(t);
    (void)state;

    kube_httpreq_limits_default(&lim);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(kube_httpreq_parse(t, i, &lim, &req, &status), 0);
    assert_int_equal(kube_httpreq_parse(t, n, &lim, &req, &status), (int)n);
    assert_string_equal(req.body, "{}");
    kube_httpreq_request_free(&req);
}

static void consumes_one_pipelined_request(void **state)
{
    const char *one = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
    kube_buf b = KUBE_BUF_INIT;
    kube_httpreq_request req;
    int status;
    (void)state;

    kube_buf_puts(&b, one);
    kube_buf_puts(&b, "GET /b HTTP/1.1\r\nHost: h\r\n\r\n");
    assert_int_equal(parse(b.data, &req, &status), (int)strlen(one));
    assert_string_equal(req.target, "/a");
    kube_httpreq_request_free(&req);
    assert_int_equal(parse(b.data + strlen(one), &req, &status), (int)strlen(one));
    assert_string_equal(req.target, "/b");
    kube_httpreq_request_free(&req);
    kube_buf_free(&b);
}

static void decodes_chunked_bodies(void **state)
{
    /* what kubectl replace/create --raw send: an empty chunked body */
    const char *empty =
        "POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
    const char *data = "PUT /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n"
                       "1;ext=1\r\n{\r\n1\r\n}\r\n0\r\nX-Trailer: t\r\n\r\nGET";
    kube_httpreq_request req;
    int status;
    (void)state;

    assert_int_equal(parse(empty, &req, &status), (int)strlen(empty));
    assert_int_equal(req.body_len, 0);
    kube_httpreq_request_free(&req);
    assert_int_equal(parse(data, &req, &status), (int)strlen(data) - 3);
    assert_string_equal(req.body, "{}");
    kube_httpreq_request_free(&req);
}

static void connection_semantics(void **state)
{
    kube_httpreq_request req;
    int status;
    (void)state;

    assert_true(parse("GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, close\r\n\r\n", &req,
                      &status) > 0);
    assert_int_equal(req.keep_alive, 0);
    kube_httpreq_request_free(&req);
    assert_true(parse("GET / HTTP/1.0\r\n\r\n", &req, &status) > 0);
    assert_int_equal(req.keep_alive, 0);
    kube_httpreq_request_free(&req);
    assert_true(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &req, &status) > 0);
    assert_int_equal(req.keep_alive, 1);
    kube_httpreq_request_free(&req);
    assert_true(parse("GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n",
                      &req, &status) > 0);
    assert_int_equal(req.upgrade, 1);
    kube_httpreq_request_free(&req);
    assert_true(parse("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\r\n", &req, &status) >
                0);
    assert_int_equal(req.upgrade, 1);
    kube_httpreq_request_free(&req);
    assert_true(
        parse("PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n",
              &req, &status) > 0);
    assert_int_equal(req.expect_continue, 1);
    kube_httpreq_request_free(&req);
}

typedef struct bad_case {
    const char *name;
    const char *text;
    int status;
} bad_case;

static const bad_case bad_cases[] = {
    {"missing Host on HTTP/1.1", "GET / HTTP/1.1\r\n\r\n", 400},
    {"two Host headers", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
    {"HTTP/2.0", "GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505},
    {"garbage version", "GET / HTTP/1.1x\r\nHost: h\r\n\r\n", 400},
    {"no version", "GET /\r\nHost: h\r\n\r\n", 400},
    {"empty request line", "\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
    {"bare LF", "GET / HTTP/1.1\nHost: h\n\n", 400},
    {"bare CR", "GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n", 400},
    {"obs-fold", "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\r\n b\r\n\r\n", 400},
    {"space before colon", "GET / HTTP/1.1\r\nHost : h\r\n\r\n", 400},
    {"no colon", "GET / HTTP/1.1\r\nHost h\r\n\r\n", 400},
    {"control byte in value", "GET / HTTP/1.1\r\nHost: h\x01\r\n\r\n", 400},
    {"DEL in target", "GET /a\x7f HTTP/1.1\r\nHost: h\r\n\r\n", 400},
    {"bad method", "G(T / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
    {"double space", "GET  / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
    {"CL and TE",
     "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n"
     "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
     400},
    {"TE gzip", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501},
    {"two TE",
     "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n"
     "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
     501},
    {"TE on HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
    {"CL not digits", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +5\r\n\r\nhello", 400},
    {"CL list", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2, 2\r\n\r\n{}", 400},
    {"CL differing",
     "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x", 400},
    {"CL too large", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999\r\n\r\n", 413},
    {"chunk size not hex",
     "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
     "zz\r\n",
     400},
    {"chunk without CRLF",
     "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
     "2\r\n{}}\r\n0\r\n\r\n",
     400},
    {"chunk too large",
     "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
     "FFFFFF\r\n",
     413},
    {"chunk size overflow",
     "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
     "10000000000000000\r\n",
     400},
    {"unknown expectation", "GET / HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\n\r\n", 417},
};

static void rejects_malformed_requests(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        kube_httpreq_request req;
        int status = 0;
        int rc = parse(bad_cases[i].text, &req, &status);
        if (rc != KUBE_EBADREQUEST || status != bad_cases[i].status)
            fail_msg("%s: rc %d status %d, want %d", bad_cases[i].name, rc, status,
                     bad_cases[i].status);
        assert_null(req.headers);
    }
}

/* NUL bytes cannot be written in the table's C strings. */
static void rejects_nul_bytes(void **state)
{
    static const char line[] = "GET /apis/\0x HTTP/1.1\r\nHost: h\r\n\r\n";
    static const char value[] = "GET / HTTP/1.1\r\nHost: h\0\r\n\r\n";
    static const char partial[] = "GET /\0";
    kube_httpreq_limits lim;
    kube_httpreq_request req;
    int status = 0;
    (void)state;

    kube_httpreq_limits_default(&lim);
    assert_int_equal(kube_httpreq_parse(line, sizeof(line) - 1, &lim, &req, &status),
                     KUBE_EBADREQUEST);
    assert_int_equal(status, 400);
    assert_int_equal(kube_httpreq_parse(value, sizeof(value) - 1, &lim, &req, &status),
                     KUBE_EBADREQUEST);
    assert_int_equal(kube_httpreq_parse(partial, sizeof(partial) - 1, &lim, &req, &status),
                     KUBE_EBADREQUEST);
}

static void enforces_size_limits(void **state)
{
    kube_httpreq_limits lim;
    kube_httpreq_request req;
    kube_buf b = KUBE_BUF_INIT;
    int status = 0;
    (void)state;

    kube_httpreq_limits_default(&lim);
    kube_buf_puts(&b, "GET / HTTP/1.1\r\nHost: h\r\n");
    for (size_t i = 0; i <= lim.max_headers; i++)
        kube_buf_printf(&b, "X-%zu: v\r\n", i);
    kube_buf_puts(&b, "\r\n");
    assert_int_equal(kube_httpreq_parse(b.data, b.len, &lim, &req, &status), KUBE_EBADREQUEST);
    assert_int_equal(status, 431);

    kube_buf_reset(&b);
    kube_buf_puts(&b, "GET / HTTP/1.1\r\nHost: h\r\nX-Big: ");
    while (b.len < lim.max_header_bytes)
        kube_buf_puts(&b, "aaaaaaaaaaaaaaaa");
    assert_int_equal(kube_httpreq_parse(b.data, b.len, &lim, &req, &status), KUBE_EBADREQUEST);
    assert_int_equal(status, 431);

    kube_buf_reset(&b);
    kube_buf_puts(&b, "GET /");
    while (b.len < lim.max_target + 100)
        kube_buf_puts(&b, "aaaaaaaaaaaaaaaa");
    assert_int_equal(kube_httpreq_parse(b.data, b.len, &lim, &req, &status), KUBE_EBADREQUEST);
    assert_int_equal(status, 414);

    /* tiny chunks with long extensions: the encoding is bounded too */
    kube_buf_reset(&b);
    kube_buf_puts(&b, "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n");
    for (int i = 0; i < 2000; i++) {
        kube_buf_puts(&b, "1;");
        for (int k = 0; k < 50; k++)
            kube_buf_puts(&b, "eeeeeeeeee");
        kube_buf_puts(&b, "\r\nx\r\n");
    }
    assert_int_equal(kube_httpreq_parse(b.data, b.len, &lim, &req, &status), KUBE_EBADREQUEST);
    assert_int_equal(status, 413);
    kube_buf_free(&b);
}

/* Feeds text one byte more at a time to one parser, as a server reading
 * 1-byte records would. Returns the request length, or the error. */
static int feed_bytewise(const char *text, size_t n, kube_httpreq_request *req, int *status)
{
    kube_httpreq_limits lim;
    kube_httpreq_parser p;
    size_t i = 0;
    int rc = 0;

    kube_httpreq_limits_default(&lim);
    kube_httpreq_parser_init(&p, &lim);
    while (rc == 0 && i < n)
        rc = kube_httpreq_parse_head(&p, text, ++i, req, status);
    if (rc > 0 && kube_httpreq_has_body(req)) {
        rc = kube_httpreq_parse_body(&p, text, i, req, status);
        while (rc == 0 && i < n)
            rc = kube_httpreq_parse_body(&p, text, ++i, req, status);
    } else if (rc > 0) {
        rc = kube_httpreq_parse_body(&p, text, i, req, status);
    }
    kube_httpreq_parser_reset(&p);
    return rc;
}

static void parses_incrementally(void **state)
{
    const char *chunked = "PUT /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n"
                          "Expect: 100-continue\r\n\r\n"
                          "1;ext=\"a b\"\r\n{\r\n1\r\n}\r\n0\r\nX-T: 1\r\nY-T: 2\r\n\r\nGET";
    const char *bare_cr = "GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n";
    kube_httpreq_request req;
    int status = 0;
    (void)state;

    assert_int_equal(feed_bytewise(chunked, strlen(chunked), &req, &status),
                     (int)strlen(chunked) - 3);
    assert_string_equal(req.body, "{}");
    assert_int_equal(req.chunked, 1);
    assert_int_equal(req.expect_continue, 1);
    assert_int_equal(req.content_length, -1);
    kube_httpreq_request_free(&req);
    /* a CR whose next byte comes in a later read is still checked */
    assert_int_equal(feed_bytewise(bare_cr, strlen(bare_cr), &req, &status), KUBE_EBADREQUEST);
    assert_int_equal(status, 400);
}

/* The head is complete and usable before any body byte arrives, so a
 * server can authenticate and answer without reading the body. */
static void the_head_comes_before_the_body(void **state)
{
    const char *head = "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n";
    kube_buf b = KUBE_BUF_INIT;
    kube_httpreq_limits lim;
    kube_httpreq_parser p;
    kube_httpreq_request req;
    int status = 0;
    (void)state;

    kube_httpreq_limits_default(&lim);
    kube_httpreq_parser_init(&p, &lim);
    kube_buf_puts(&b, head);
    assert_int_equal(kube_httpreq_parse_head(&p, b.data, b.len, &req, &status), (int)strlen(head));
    assert_true(kube_httpreq_has_body(&req));
    assert_int_equal(req.content_length, 5);
    assert_null(req.body);
    assert_int_equal(kube_httpreq_parse_body(&p, b.data, b.len, &req, &status), 0);
    kube_buf_puts(&b, "hello");
    assert_int_equal(kube_httpreq_parse_body(&p, b.data, b.len, &req, &status), (int)b.len);
    assert_string_equal(req.body, "hello");
    kube_httpreq_request_free(&req);
    kube_httpreq_parser_reset(&p);
    kube_buf_free(&b);
}

int test_group_httpreq(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_a_simple_get),
        cmocka_unit_test(keeps_repeated_headers_in_order),
        cmocka_unit_test(needs_more_until_complete),
        cmocka_unit_test(consumes_one_pipelined_request),
        cmocka_unit_test(decodes_chunked_bodies),
        cmocka_unit_test(connection_semantics),
        cmocka_unit_test(rejects_malformed_requests),
        cmocka_unit_test(rejects_nul_bytes),
        cmocka_unit_test(enforces_size_limits),
        cmocka_unit_test(parses_incrementally),
        cmocka_unit_test(the_head_comes_before_the_body),
    };
    return cmocka_run_group_tests_name("httpreq", tests, NULL, NULL);
}
