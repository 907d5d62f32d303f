/*
 * tests/unit/test_authn.c - who is asking: the front-proxy
 * (requestheader) and client-certificate rules as tables, after
 * k8s.io/apiserver's x509_test.go and requestheader_test.go cases, plus the
 * extension-apiserver-authentication ConfigMap and bearer token parsing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <string.h>

#include "kube/serving/authn.h"
#include "kube/serving/authn_testing.h"
#include "kube/util/certkit.h"
#include "kube/serving/httpreq.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"

#define DAY 86400L

typedef struct pki {
    X509 *ca; /* front-proxy CA */
    EVP_PKEY *ca_key;
    X509 *other_ca; /* same name, different key */
    EVP_PKEY *other_key;
    X509 *inter; /* intermediate under ca, clientAuth only */
    EVP_PKEY *inter_key;
    X509 *inter_server; /* intermediate under ca restricted to serverAuth */
    EVP_PKEY *inter_server_key;
} pki;

static pki g;

static X509 *issue(X509 *issuer, EVP_PKEY *ikey, const kube_cert_spec *spec, EVP_PKEY **key)
{
    X509 *x = NULL;
    EVP_PKEY *k = NULL;

    assert_int_equal(kube_certkit_issue(issuer, ikey, spec, &x, &k), KUBE_OK);
    if (key)
        *key = k;
    else
        EVP_PKEY_free(k);
    return x;
}

static int setup(void **state)
{
    kube_cert_spec ca = {.cn = "front-proxy-ca", .ca = 1, .not_before_s = -DAY, .not_after_s = DAY};
    kube_cert_spec inter = {.cn = "intermediate",
                            .ca = 1,
                            .eku = "clientAuth",
                            .not_before_s = -DAY,
                            .not_after_s = DAY};
    kube_cert_spec inter_srv = {.cn = "intermediate-server",
                                .ca = 1,
                                .eku = "serverAuth",
                                .not_before_s = -DAY,
                                .not_after_s = DAY};
    (void)state;

    g.ca = issue(NULL, NULL, &ca, &g.ca_key);
    g.other_ca = issue(NULL, NULL, &ca, &g.other_key);
    g.inter = issue(g.ca, g.ca_key, &inter, &g.inter_key);
    g.inter_server = issue(g.ca, g.ca_key, &inter_srv, &g.inter_server_key);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    X509_free(g.ca);
    X509_free(g.other_ca);
    X509_free(g.inter);
    X509_free(g.inter_server);
    EVP_PKEY_free(g.ca_key);
    EVP_PKEY_free(g.other_key);
    EVP_PKEY_free(g.inter_key);
    EVP_PKEY_free(g.inter_server_key);
    return 0;
}

/* A configuration trusting g.ca for the front proxy (and the client CA). */
static kube_authn_config *config_with(const char *const *allowed)
{
    kube_authn_config *cfg;
    kube_strlist names = {0};
    char *pem = kube_certkit_cert_pem(g.ca);

    assert_int_equal(kube_authn_config_new(&cfg), KUBE_OK);
    assert_int_equal(kube_authn_config_set_requestheader_ca(cfg, pem, strlen(pem), "test", NULL, 0),
                     KUBE_OK);
    assert_int_equal(kube_authn_config_set_client_ca(cfg, pem, strlen(pem), "test", NULL, 0),
                     KUBE_OK);
    for (size_t i = 0; allowed && allowed[i]; i++)
        kube_strlist_add(&names, allowed[i]);
    assert_int_equal(kube_authn_config_set_list(cfg, KUBE_AUTHN_ALLOWED_NAMES, &names), KUBE_OK);
    kube_strlist_free(&names);
    free(pem);
    return cfg;
}

enum { SIGNER_CA, SIGNER_OTHER_CA, SIGNER_INTER, SIGNER_INTER_SERVER, SIGNER_SELF };

typedef struct x509_case {
    const char *name;
    const char *cn;
    const char *eku;
    int signer;
    int send_intermediate;
    long not_before_s, not_after_s;
    const char *const *allowed;
    int want; /* KUBE_OK or KUBE_EUNAUTHORIZED */
} x509_case;

static const char *const allow_fp[] = {"front-proxy-client", NULL};
static const char *const allow_other[] = {"other-proxy", NULL};

static const x509_case x509_cases[] = {
    {"client cert, no allowed names", "front-proxy-client", "clientAuth", SIGNER_CA, 0, -DAY, DAY,
     NULL, KUBE_OK},
    {"client cert, CN in allowed names", "front-proxy-client", "clientAuth", SIGNER_CA, 0, -DAY,
     DAY, allow_fp, KUBE_OK},
    {"CN not in allowed names", "front-proxy-client", "clientAuth", SIGNER_CA, 0, -DAY, DAY,
     allow_other, KUBE_EUNAUTHORIZED},
    {"empty CN with allowed names", "", "clientAuth", SIGNER_CA, 0, -DAY, DAY, allow_fp,
     KUBE_EUNAUTHORIZED},
    {"any CN when allowed names is empty", "someone-else", "clientAuth", SIGNER_CA, 0, -DAY, DAY,
     NULL, KUBE_OK},
    {"wrong CA (same name, other key)", "front-proxy-client", "clientAuth", SIGNER_OTHER_CA, 0,
     -DAY, DAY, allow_fp, KUBE_EUNAUTHORIZED},
    {"self signed", "front-proxy-client", "clientAuth", SIGNER_SELF, 0, -DAY, DAY, NULL,
     KUBE_EUNAUTHORIZED},
    {"server cert (serverAuth only)", "front-proxy-client", "serverAuth", SIGNER_CA, 0, -DAY, DAY,
     NULL, KUBE_EUNAUTHORIZED},
    {"code signing only", "front-proxy-client", "codeSigning", SIGNER_CA, 0, -DAY, DAY, NULL,
     KUBE_EUNAUTHORIZED},
    {"multiple usages including clientAuth", "front-proxy-client", "serverAuth,clientAuth",
     SIGNER_CA, 0, -DAY, DAY, NULL, KUBE_OK},
    {"any extended key usage", "front-proxy-client", "anyExtendedKeyUsage", SIGNER_CA, 0, -DAY, DAY,
     NULL, KUBE_OK},
    {"no extended key usage (Go: any)", "front-proxy-client", NULL, SIGNER_CA, 0, -DAY, DAY, NULL,
     KUBE_OK},
    {"expired", "front-proxy-client", "clientAuth", SIGNER_CA, 0, -2 * DAY, -DAY, NULL,
     KUBE_EUNAUTHORIZED},
    {"not yet valid", "front-proxy-client", "clientAuth", SIGNER_CA, 0, DAY, 2 * DAY, NULL,
     KUBE_EUNAUTHORIZED},
    {"multi-level, valid", "front-proxy-client", "clientAuth", SIGNER_INTER, 1, -DAY, DAY, allow_fp,
     KUBE_OK},
    {"multi-level, missing intermediate", "front-proxy-client", "clientAuth", SIGNER_INTER, 0, -DAY,
     DAY, NULL, KUBE_EUNAUTHORIZED},
    {"multi-level, intermediate restricted to serverAuth", "front-proxy-client", "clientAuth",
     SIGNER_INTER_SERVER, 1, -DAY, DAY, NULL, KUBE_EUNAUTHORIZED},
};

static X509 *issue_case(const x509_case *c, STACK_OF(X509) * *chain)
{
    kube_cert_spec spec = {
        .cn = c->cn, .eku = c->eku, .not_before_s = c->not_before_s, .not_after_s = c->not_after_s};
    X509 *signer = NULL, *inter = NULL;
    EVP_PKEY *key = NULL;

    switch (c->signer) {
    case SIGNER_CA:
        signer = g.ca;
        key = g.ca_key;
        break;
    case SIGNER_OTHER_CA:
        signer = g.other_ca;
        key = g.other_key;
        break;
    case SIGNER_INTER:
        signer = inter = g.inter;
        key = g.inter_key;
        break;
    case SIGNER_INTER_SERVER:
        signer = inter = g.inter_server;
        key = g.inter_server_key;
        break;
    default:
        break;
    }
    *chain = sk_X509_new_null();
    if (c->send_intermediate && inter)
        sk_X509_push(*chain, inter);
    return issue(signer, key, &spec, NULL);
}

static void verifies_front_proxy_certificates(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(x509_cases) / sizeof(x509_cases[0]); i++) {
        const x509_case *c = &x509_cases[i];
        kube_authn_config *cfg = config_with(c->allowed);
        STACK_OF(X509) * chain;
        X509 *leaf = issue_case(c, &chain);
        char msg[512] = "";
        int rc = kube_authn_verify_front_proxy(cfg, leaf, chain, msg, sizeof(msg));

        if (rc != c->want)
            fail_msg("%s: got %d (%s), want %d", c->name, rc, msg, c->want);
        if (rc != KUBE_OK && msg[0] == '\0')
            fail_msg("%s: no reason given", c->name);
        X509_free(leaf);
        sk_X509_free(chain);
        kube_authn_config_unref(cfg);
    }
}

static void no_certificate_or_no_ca_is_not_a_proxy(void **state)
{
    kube_authn_config *cfg = config_with(NULL), *empty;
    kube_cert_spec spec = {
        .cn = "front-proxy-client", .eku = "clientAuth", .not_before_s = -DAY, .not_after_s = DAY};
    X509 *leaf = issue(g.ca, g.ca_key, &spec, NULL);
    char msg[256];
    (void)state;

    assert_int_equal(kube_authn_verify_front_proxy(cfg, NULL, NULL, msg, sizeof(msg)),
                     KUBE_ENOTFOUND);
    assert_int_equal(kube_authn_config_new(&empty), KUBE_OK);
    assert_false(kube_authn_config_has_requestheader(empty));
    assert_int_equal(kube_authn_verify_front_proxy(empty, leaf, NULL, msg, sizeof(msg)),
                     KUBE_ENOTFOUND);
    X509_free(leaf);
    kube_authn_config_unref(empty);
    kube_authn_config_unref(cfg);
}

static void authenticates_client_certificates(void **state)
{
    static const char *const orgs[] = {"system:masters", "team-a", NULL};
    kube_cert_spec ok = {
        .cn = "alice", .orgs = orgs, .eku = "clientAuth", .not_before_s = -DAY, .not_after_s = DAY};
    kube_cert_spec nocn = {
        .cn = "", .orgs = orgs, .eku = "clientAuth", .not_before_s = -DAY, .not_after_s = DAY};
    kube_authn_config *cfg = config_with(NULL);
    X509 *leaf = issue(g.ca, g.ca_key, &ok, NULL);
    X509 *bad = issue(g.other_ca, g.other_key, &ok, NULL);
    X509 *anon = issue(g.ca, g.ca_key, &nocn, NULL);
    kube_user *u = NULL;
    char msg[256];
    (void)state;

    assert_int_equal(kube_authn_verify_client_cert(cfg, leaf, NULL, &u, msg, sizeof(msg)), KUBE_OK);
    assert_string_equal(u->name, "alice");
    assert_int_equal(u->groups.n, 2);
    assert_string_equal(u->groups.v[0], "system:masters");
    assert_string_equal(u->groups.v[1], "team-a");
    kube_user_free(u);
    assert_int_equal(kube_authn_verify_client_cert(cfg, bad, NULL, &u, msg, sizeof(msg)),
                     KUBE_EUNAUTHORIZED);
    assert_null(u);
    assert_int_equal(kube_authn_verify_client_cert(cfg, anon, NULL, &u, msg, sizeof(msg)),
                     KUBE_ENOTFOUND);
    X509_free(leaf);
    X509_free(bad);
    X509_free(anon);
    kube_authn_config_unref(cfg);
}

/* ---- requestheader ---- */

static void request(const char *headers, kube_httpreq_request *req, kube_buf *raw)
{
    kube_httpreq_limits lim;
    int status;

    kube_httpreq_limits_default(&lim);
    kube_buf_reset(raw);
    kube_buf_printf(raw, "GET / HTTP/1.1\r\nHost: h\r\n%s\r\n", headers);
    assert_true(kube_httpreq_parse(raw->data, raw->len, &lim, req, &status) > 0);
}

typedef struct header_case {
    const char *name;
    const char *headers;
    const char *user;   /* NULL: not authenticated */
    const char *groups; /* comma-joined */
    const char *extra;  /* "key=v1|v2;key2=v" */
} header_case;

static const header_case header_cases[] = {
    {"no user", "X-Remote-Group: g\r\n", NULL, "", ""},
    {"empty user", "X-Remote-User: \r\n", NULL, "", ""},
    {"user, no groups", "X-Remote-User: alice\r\n", "alice", "", ""},
    {"user with repeated groups",
     "X-Remote-Group: system:masters\r\nX-Remote-User: admin\r\nX-Remote-Group: "
     "system:authenticated\r\n",
     "admin", "system:masters,system:authenticated", ""},
    {"names are case-insensitive", "x-remote-user: bob\r\nX-REMOTE-GROUP: g1\r\n", "bob", "g1", ""},
    {"first user header wins", "X-Remote-User: first\r\nX-Remote-User: second\r\n", "first", "",
     ""},
    {"blank groups skipped", "X-Remote-User: u\r\nX-Remote-Group:  \r\nX-Remote-Group: g\r\n", "u",
     "g", ""},
    {"commas are not split", "X-Remote-User: u\r\nX-Remote-Group: a,b\r\n", "u", "a,b", ""},
    {"extras",
     "X-Remote-User: u\r\nX-Remote-Extra-Scopes: read\r\nX-Remote-Extra-scopes: write\r\n"
     "X-Remote-Extra-Acme.com%2Fproject: p1\r\n",
     "u", "", "scopes=read|write;acme.com/project=p1"},
    {"bad escape kept as is", "X-Remote-User: u\r\nX-Remote-Extra-A%zzb: v\r\n", "u", "",
     "a%zzb=v"},
    {"a plus is no space (url.PathUnescape)", "X-Remote-User: u\r\nX-Remote-Extra-A+B%41: v\r\n",
     "u", "", "a+bA=v"},
};

static void join_groups(const kube_user *u, kube_buf *b)
{
    for (size_t i = 0; i < u->groups.n; i++)
        kube_buf_printf(b, "%s%s", i ? "," : "", u->groups.v[i]);
    if (!b->data)
        kube_buf_puts(b, "");
}

static void join_extra(const kube_user *u, kube_buf *b)
{
    for (size_t i = 0; i < u->n_extra; i++) {
        kube_buf_printf(b, "%s%s=", i ? ";" : "", u->extra[i].key);
        for (size_t j = 0; j < u->extra[i].values.n; j++)
            kube_buf_printf(b, "%s%s", j ? "|" : "", u->extra[i].values.v[j]);
    }
    if (!b->data)
        kube_buf_puts(b, "");
}

static void reads_users_from_front_proxy_headers(void **state)
{
    kube_authn_config *cfg = config_with(NULL);
    kube_buf raw = KUBE_BUF_INIT;
    (void)state;

    for (size_t i = 0; i < sizeof(header_cases) / sizeof(header_cases[0]); i++) {
        const header_case *c = &header_cases[i];
        kube_buf groups = KUBE_BUF_INIT, extra = KUBE_BUF_INIT;
        kube_httpreq_request req;
        kube_user *u = NULL;
        int rc;

        request(c->headers, &req, &raw);
        rc = kube_authn_from_headers(cfg, &req, &u);
        if (!c->user) {
            if (rc != KUBE_ENOTFOUND || u)
                fail_msg("%s: authenticated", c->name);
        } else {
            if (rc != KUBE_OK || strcmp(u->name, c->user) != 0)
                fail_msg("%s: rc %d user %s", c->name, rc, u ? u->name : "(none)");
            join_groups(u, &groups);
            join_extra(u, &extra);
            if (strcmp(groups.data, c->groups) != 0 || strcmp(extra.data, c->extra) != 0)
                fail_msg("%s: groups \"%s\" extra \"%s\"", c->name, groups.data, extra.data);
        }
        kube_user_free(u);
        kube_buf_free(&groups);
        kube_buf_free(&extra);
        kube_httpreq_request_free(&req);
    }
    kube_buf_free(&raw);
    kube_authn_config_unref(cfg);
}

static void honours_configured_header_names(void **state)
{
    kube_authn_config *cfg = config_with(NULL);
    kube_strlist users = {0}, groups = {0};
    kube_buf raw = KUBE_BUF_INIT;
    kube_httpreq_request req;
    kube_user *u = NULL;
    (void)state;

    kube_strlist_split(&users, "X-Remote-User, X-Other-User");
    kube_strlist_split(&groups, "X-Other-Group");
    kube_authn_config_set_list(cfg, KUBE_AUTHN_USERNAME_HEADERS, &users);
    kube_authn_config_set_list(cfg, KUBE_AUTHN_GROUP_HEADERS, &groups);
    request("X-Remote-User: \r\nX-Other-User: other\r\nX-Remote-Group: ignored\r\n"
            "X-Other-Group: counted\r\n",
            &req, &raw);
    assert_int_equal(kube_authn_from_headers(cfg, &req, &u), KUBE_OK);
    assert_string_equal(u->name, "other");
    assert_int_equal(u->groups.n, 1);
    assert_string_equal(u->groups.v[0], "counted");
    /* stripping removes the configured names and every X-Remote-* */
    kube_authn_strip_headers(cfg, &req);
    assert_int_equal(req.n_headers, 1);
    assert_string_equal(req.headers[0].name, "Host");
    kube_user_free(u);
    kube_httpreq_request_free(&req);
    kube_strlist_free(&users);
    kube_strlist_free(&groups);
    kube_buf_free(&raw);
    kube_authn_config_unref(cfg);
}

static void adds_the_authenticated_group_once(void **state)
{
    kube_user *u = kube_user_new("u"), *anon = kube_user_new("system:anonymous"), *copy;
    (void)state;

    assert_int_equal(kube_user_add_authenticated(u), KUBE_OK);
    assert_int_equal(kube_user_add_authenticated(u), KUBE_OK);
    assert_int_equal(u->groups.n, 1);
    assert_string_equal(u->groups.v[0], "system:authenticated");
    assert_int_equal(kube_user_add_authenticated(anon), KUBE_OK);
    assert_int_equal(anon->groups.n, 0);
    kube_user_add_extra(u, "k", "v");
    copy = kube_user_dup(u);
    assert_string_equal(copy->extra[0].values.v[0], "v");
    kube_user_free(copy);
    kube_user_free(u);
    kube_user_free(anon);
}

static cJSON *fixture_data(void)
{
    char *text = NULL;
    size_t len;
    cJSON *doc, *data;

    assert_int_equal(kube_read_file(STICKYVM_FIXTURES_DIR
                                    "/configmap-extension-apiserver-authentication-200.json",
                                    &text, &len),
                     KUBE_OK);
    doc = cJSON_Parse(text);
    free(text);
    data = cJSON_DetachItemFromObject(cJSON_GetObjectItem(doc, "body"), "data");
    cJSON_Delete(doc);
    assert_non_null(data);
    return data;
}

static void reads_the_configmap_fixture(void **state)
{
    cJSON *data = fixture_data();
    kube_authn_config *cfg;
    char err[256] = "";
    (void)state;

    assert_int_equal(kube_authn_config_new(&cfg), KUBE_OK);
    assert_int_equal(kube_authn_config_from_configmap(cfg, data, err, sizeof(err)), KUBE_OK);
    assert_true(kube_authn_config_has_requestheader(cfg));
    assert_true(kube_authn_config_has_client_ca(cfg));
    kube_authn_config_unref(cfg);

    /* a broken allowed-names value is an error naming the key */
    cJSON_ReplaceItemInObject(data, "requestheader-allowed-names", cJSON_CreateString("[front"));
    assert_int_equal(kube_authn_config_new(&cfg), KUBE_OK);
    assert_int_equal(kube_authn_config_from_configmap(cfg, data, err, sizeof(err)), KUBE_EPARSE);
    assert_non_null(strstr(err, "requestheader-allowed-names"));
    kube_authn_config_unref(cfg);

    cJSON_ReplaceItemInObject(data, "requestheader-client-ca-file", cJSON_CreateString("junk"));
    assert_int_equal(kube_authn_config_new(&cfg), KUBE_OK);
    assert_int_equal(kube_authn_config_from_configmap(cfg, data, err, sizeof(err)), KUBE_EPARSE);
    assert_non_null(strstr(err, "requestheader-client-ca-file"));
    kube_authn_config_unref(cfg);
    cJSON_Delete(data);
}

static void parses_bearer_tokens(void **state)
{
    static const struct {
        const char *header;
        int rc;
        const char *token;
    } cases[] = {
        {"Authorization: Bearer abc.def\r\n", KUBE_OK, "abc.def"},
        {"Authorization: bearer abc\r\n", KUBE_OK, "abc"},
        {"Authorization:   Bearer abc extra\r\n", KUBE_OK, "abc"},
        {"Authorization: Bearer  abc\r\n", KUBE_ENOTFOUND, NULL},
        {"Authorization: Bearer\r\n", KUBE_ENOTFOUND, NULL},
        {"Authorization: Basic YWRtaW4=\r\n", KUBE_ENOTFOUND, NULL},
        {"X-Other: x\r\n", KUBE_ENOTFOUND, NULL},
    };
    kube_buf raw = KUBE_BUF_INIT;
    char token[64];
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kube_httpreq_request req;
        request(cases[i].header, &req, &raw);
        assert_int_equal(kube_authn_bearer_token(&req, token, sizeof(token)), cases[i].rc);
        if (cases[i].token)
            assert_string_equal(token, cases[i].token);
        kube_httpreq_request_free(&req);
    }
    kube_buf_free(&raw);
}

int test_group_authn(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(verifies_front_proxy_certificates),
        cmocka_unit_test(no_certificate_or_no_ca_is_not_a_proxy),
        cmocka_unit_test(authenticates_client_certificates),
        cmocka_unit_test(reads_users_from_front_proxy_headers),
        cmocka_unit_test(honours_configured_header_names),
        cmocka_unit_test(adds_the_authenticated_group_once),
        cmocka_unit_test(reads_the_configmap_fixture),
        cmocka_unit_test(parses_bearer_tokens),
    };
    return cmocka_run_group_tests_name("authn", tests, setup, teardown);
}
