/*
 * apiserver/fuzz_request.c - libFuzzer target for everything
 * stickyvm-apiserver does with the bytes a client sends before any network
 * call: HTTP/1.1 framing (pipelined requests, chunked bodies, limits), the
 * path/query/body rules, front-proxy header extraction and stripping,
 * bearer token parsing, and the whole pipeline (authentication,
 * authorization by the always-allow rules, local handlers, Status bodies,
 * response serialization) with no kube-apiserver behind it.
 *
 * Input: the first byte picks the connection's client certificate (bit 0:
 * a trusted front-proxy certificate, bit 1: an untrusted one) and (bit 2)
 * whether the stream arrives in one read or split into reads of (data[0] >> 3)
 * + 1 bytes, which must not change what is parsed; the rest is the byte
 * stream of one connection.
 *
 * Invariants checked: every rejection names an HTTP error code, no request
 * claims more bytes than were given, incremental parsing agrees with a
 * whole-buffer parse, and a ?node= judged valid holds no byte past its
 * decoded length (a decoded %00 must not end validation early).
 *
 * Built by CMake with -DSTICKYVM_FUZZ=ON -DCMAKE_C_COMPILER=clang; run by
 * scripts/test-fuzz.sh.
 */
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/serving/authn.h"
#include "kube/serving/authsource.h"
#include "kube/serving/delegate.h"
#include "kube/serving/exchange.h"
#include "kube/util/certkit.h"
#include "kube/serving/httpreq.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "handlers.h"
#include "request.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
/* Parses the request at the start of buf as a server reading `step`-byte
 * pieces would: one parser, the same growing prefix. */
static int parse_in_steps(const char *buf, size_t len, size_t step, const kube_httpreq_limits *lim,
                          kube_httpreq_request *req, int *status)
{
    kube_httpreq_parser p;
    size_t have = 0;
    int rc = 0, head_done = 0;

    kube_httpreq_parser_init(&p, lim);
    while (rc == 0 && have < len) {
        have = have + step < len ? have + step : len;
        if (!head_done) {
            rc = kube_httpreq_parse_head(&p, buf, have, req, status);
            if (rc <= 0)
                continue;
            head_done = 1;
        }
        rc = kube_httpreq_parse_body(&p, buf, have, req, status);
    }
    if (rc == 0)
        kube_httpreq_request_free(req);
    kube_httpreq_parser_reset(&p);
    return rc;
}

/* The incremental parse must agree with the whole-buffer one: the same
 * request and body, or a rejection too (which rule fires first may depend
 * on how much had arrived, e.g. 414 before a later NUL is seen). */
static void check_steps(const char *buf, size_t len, size_t step, const kube_httpreq_limits *lim,
                        int whole_rc, const kube_httpreq_request *whole)
{
    kube_httpreq_request req = {0};
    int status = 0;
    int rc = parse_in_steps(buf, len, step, lim, &req, &status);

    if (whole_rc < 0 ? rc >= 0 : rc != whole_rc)
        abort();
    if (rc > 0 &&
        (req.body_len != whole->body_len || memcmp(req.body, whole->body, req.body_len) != 0))
        abort();
    kube_httpreq_request_free(&req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static kube_serving_context ctx;
static apis_handlers_ctx hctx;
static kube_handlers handlers;
static X509 *trusted, *untrusted;

/* A certificate for cn signed by issuer (self-signed when NULL); its key
 * is dropped (the fuzzer only presents certificates). Aborts on failure. */
static X509 *make_cert(const char *cn, X509 *issuer, EVP_PKEY *issuer_key, EVP_PKEY **key_out,
                       int ca)
{
    kube_cert_spec spec = {cn, NULL, ca ? NULL : "clientAuth", ca, -3600, 86400L * 365, NULL};
    X509 *x = NULL;
    EVP_PKEY *key = NULL;

    if (kube_certkit_issue(issuer, issuer_key, &spec, &x, &key) != KUBE_OK)
        abort();
    if (key_out)
        *key_out = key;
    else
        EVP_PKEY_free(key);
    return x;
}

static void write_ca(const char *path, X509 *ca)
{
    FILE *f = fopen(path, "w");

    if (!f || !PEM_write_X509(f, ca))
        abort();
    fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static char path[] = "/tmp/fuzz-request-ca-XXXXXX";
    EVP_PKEY *ca_key = NULL, *other_key = NULL;
    X509 *ca = make_cert("fuzz-ca", NULL, NULL, &ca_key, 1);
    X509 *other = make_cert("fuzz-ca", NULL, NULL, &other_key, 1);
    kube_authn_source_options so = {0};
    kube_delegate_options d = {0};
    kube_strlist allowed = {0}, paths = {0}, groups = {0};
    char err[256];
    int fd = mkstemp(path);

    (void)argc;
    (void)argv;
    klog_set_verbosity(-1);
    if (fd < 0)
        abort();
    close(fd);
    write_ca(path, ca);
    trusted = make_cert("front-proxy-client", ca, ca_key, NULL, 0);
    untrusted = make_cert("front-proxy-client", other, other_key, NULL, 0);
    kube_strlist_add(&allowed, "front-proxy-client");
    kube_strlist_split(&paths, "/healthz,/readyz,/livez");
    kube_strlist_add(&groups, "system:masters");
    so.requestheader_ca_file = path;
    so.client_ca_file = path;
    so.allowed_names = &allowed;
    so.allowed_names_set = 1;
    d.always_allow_paths = &paths;
    d.always_allow_groups = &groups;
    d.token_ttl_ms = d.allow_ttl_ms = d.deny_ttl_ms = 10000;
    if (kube_authn_source_new(&so, &ctx.authn, err, sizeof(err)) != KUBE_OK ||
        kube_delegate_new(&d, &ctx.delegate) != KUBE_OK ||
        apis_handlers_init(&handlers, &hctx) != KUBE_OK)
        abort();
    ctx.handlers = &handlers;
    unlink(path);
    kube_strlist_free(&allowed);
    kube_strlist_free(&paths);
    kube_strlist_free(&groups);
    X509_free(ca);
    X509_free(other);
    EVP_PKEY_free(ca_key);
    EVP_PKEY_free(other_key);
    return 0;
}

/* The pure rules on one parsed request, as the exchange would use them. */
static void rules(kube_httpreq_request *req)
{
    kube_authn_config *cfg = kube_authn_source_get(ctx.authn);
    apis_route route;
    kube_user *u = NULL;
    char msg[512], verb[40], token[256];

    if (apis_route_parse(req->target, &route, msg, sizeof(msg)) == KUBE_OK) {
        apis_request_verb(req->method, apis_route_is_resource(route.kind), verb, sizeof(verb));
        if (route.node_valid && (strlen(route.node) != route.node_len ||
                                 !kube_is_dns1123_subdomain_n(route.node, strlen(route.node))))
            abort(); /* validated on fewer bytes than the decoded value */
        apis_route_free(&route);
    }
    apis_body_check(req->body, req->body_len);
    kube_authn_bearer_token(req, token, sizeof(token));
    if (kube_authn_from_headers(cfg, req, &u) == KUBE_OK)
        kube_user_add_authenticated(u);
    kube_user_free(u);
    kube_authn_config_unref(cfg);
}

static void pipeline(kube_httpreq_request *req, X509 *peer)
{
    kube_peer_cache pc = {0};
    kube_exchange *x = NULL;
    kube_buf out = KUBE_BUF_INIT;

    if (peer) {
        X509_up_ref(peer);
        pc.leaf = peer;
    }
    if (kube_exchange_new(&ctx, req, peer ? &pc : NULL, &x) == KUBE_OK) {
        int rc = kube_exchange_run(x, 0);
        if (rc == KUBE_EXCHANGE_BLOCKED)
            rc = kube_exchange_run(x, 1); /* no clients: answered without a network */
        if (rc == KUBE_EXCHANGE_NEED_BODY) {
            kube_exchange_set_body(x, req->body, req->body_len);
            if (kube_exchange_run(x, 0) == KUBE_EXCHANGE_BLOCKED)
                kube_exchange_run(x, 1);
        }
        kube_exchange_serialize(x, req->keep_alive, &out);
        kube_exchange_free(x);
    }
    kube_buf_free(&out);
    kube_peer_cache_clear(&pc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kube_httpreq_limits lim;
    X509 *peer;
    size_t off = 1;

    if (size < 1)
        return 0;
    peer = (data[0] & 1) ? trusted : (data[0] & 2) ? untrusted : NULL;
    kube_httpreq_limits_default(&lim);
    lim.max_body = 4096; /* keep inputs small and the limits reachable */
    lim.max_header_bytes = 8192;
    while (off < size) {
        kube_httpreq_request req;
        int status = 0;
        int n = kube_httpreq_parse((const char *)data + off, size - off, &lim, &req, &status);
        if (data[0] & 4)
            check_steps((const char *)data + off, size - off, (size_t)(data[0] >> 3) + 1, &lim, n,
                        &req);
        if (n <= 0) {
            if (n == KUBE_EBADREQUEST && (status < 400 || status > 505))
                abort(); /* every rejection names an HTTP error code */
            break;
        }
        if ((size_t)n > size - off)
            abort(); /* never consume past the input */
        rules(&req);
        pipeline(&req, peer);
        kube_httpreq_request_free(&req);
        off += (size_t)n;
    }
    return 0;
}
