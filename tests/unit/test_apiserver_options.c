/*
 * tests/unit/test_apiserver_options.c - apiserver/options.c: stickyvm-apiserver's flags, connection
 * flags, refused flags and duration flags.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube/serving/authsource.h"
#include "kube/serving/authsource_testing.h"
#include "kube/serving/cache.h"
#include "kube/serving/certs.h"
#include "kube/serving/certs_testing.h"
#include "kube/serving/delegate.h"
#include "apiserver/metrics.h"
#include "apiserver/options.h"
#include "apiserver/options_testing.h"
#include "kube/serving/pool.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/serving/cache_testing.h"
#include "metrics_testing.h"
#include "kube/serving/authn_testing.h"

static void parses_flags(void **state)
{
    char *argv[] = {"stickyvm-apiserver",
                    "--secure-port=9443",
                    "--bind-address",
                    "127.0.0.1",
                    "--requestheader-allowed-names=front-proxy-client, aggregator",
                    "--authentication-token-webhook-cache-ttl=1m30s",
                    "-v",
                    "4",
                    "--authentication-skip-lookup",
                    "--authorization-always-allow-groups=",
                    "--tls-cert-file=/c",
                    "--tls-private-key-file=/k"};
    apis_options o;
    char err[256] = "";
    (void)state;

    assert_int_equal(apis_options_parse(12, argv, &o, err, sizeof(err)), KUBE_OK);
    assert_int_equal(o.serving.secure_port, 9443);
    assert_string_equal(o.serving.bind_address, "127.0.0.1");
    assert_int_equal(o.serving.requestheader_allowed_names.n, 2);
    assert_string_equal(o.serving.requestheader_allowed_names.v[1], "aggregator");
    assert_true(o.serving.allowed_names_set);
    assert_int_equal(o.serving.token_cache_ttl_ms, 90000);
    assert_int_equal(o.logs.verbosity, 4);
    assert_true(o.serving.authentication_skip_lookup);
    assert_int_equal(o.serving.always_allow_groups.n, 0);
    assert_int_equal(o.serving.always_allow_paths.n, 3);
    assert_int_equal(o.serving.authorized_ttl_ms, 10000);
    assert_string_equal(o.serving.cert_dir, "apiserver.local.config/certificates");
    assert_string_equal(o.pin_annotation_key, "stickyvm.io/node");
    apis_options_free(&o);

    char *custom[] = {"stickyvm-apiserver", "--pin-annotation-key", "Example.COM/Pinned_Node"};
    assert_int_equal(apis_options_parse(3, custom, &o, err, sizeof(err)), KUBE_OK);
    assert_string_equal(o.pin_annotation_key, "Example.COM/Pinned_Node");
    apis_options_free(&o);
}

/* The connection bounds: defaults, values, and refused values. */
static void parses_connection_flags(void **state)
{
    char *defaults[] = {"x"};
    char *set[] = {"x", "--tls-handshake-timeout=3s", "--read-header-timeout", "1m",
                   "--max-connections=64"};
    char *bad[][2] = {{"x", "--max-connections=0"},
                      {"x", "--tls-handshake-timeout=10"},
                      {"x", "--read-header-timeout=soon"}};
    apis_options o;
    char err[256] = "";
    (void)state;

    assert_int_equal(apis_options_parse(1, defaults, &o, err, sizeof(err)), KUBE_OK);
    assert_int_equal(o.tls_handshake_timeout_ms, 10000);
    assert_int_equal(o.read_header_timeout_ms, 32000);
    assert_int_equal(o.max_connections, 1024);
    apis_options_free(&o);
    assert_int_equal(apis_options_parse(5, set, &o, err, sizeof(err)), KUBE_OK);
    assert_int_equal(o.tls_handshake_timeout_ms, 3000);
    assert_int_equal(o.read_header_timeout_ms, 60000);
    assert_int_equal(o.max_connections, 64);
    apis_options_free(&o);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(apis_options_parse(2, bad[i], &o, err, sizeof(err)), KUBE_ECONFIG);
        assert_non_null(strstr(err, "invalid argument"));
        apis_options_free(&o);
    }
}

static void rejects_bad_flags(void **state)
{
    static const struct {
        int argc;
        char *argv[3];
        const char *why;
    } cases[] = {
        {2, {"x", "--no-such-flag"}, "unknown flag"},
        {2, {"x", "--secure-port"}, "needs an argument"},
        {2, {"x", "--secure-port=70000"}, "secure-port"},
        {2, {"x", "--request-timeout=10"}, "request-timeout"},
        {2, {"x", "--tls-cert-file=/c"}, "together"},
        {2, {"x", "stray"}, "unexpected"},
        {2,
         {"x", "--pin-annotation-key=a b"},
         "invalid argument \"a b\" for \"--pin-annotation-key\" flag: Invalid value: \"a b\": "
         "name part must consist of"},
        {2, {"x", "--pin-annotation-key="}, "\"--pin-annotation-key\" flag: Required value"},
        {2, {"x", "--pin-annotation-key=x.io/"}, "name part must be non-empty"},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        apis_options o;
        char err[256] = "";
        assert_int_equal(apis_options_parse(cases[i].argc, cases[i].argv, &o, err, sizeof(err)),
                         KUBE_ECONFIG);
        if (!strstr(err, cases[i].why))
            fail_msg("%s: \"%s\"", cases[i].argv[1], err);
        apis_options_free(&o);
    }
}

/* Duration flags use kube/util/duration (Go syntax) and refuse negative values. */
static void parses_durations(void **state)
{
    static const struct {
        const char *in;
        int64_t ms;
    } ok[] = {{"0", 0},       {"10s", 10000},    {"1m30s", 90000},
              {"500ms", 500}, {"1.5h", 5400000}, {"2000us", 2}};
    static const char *const bad[] = {"", "10", "s", "-1s", "1x", "1e3s", "10 s"};
    char flag[64], err[256];
    apis_options o;
    (void)state;

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        char *argv[] = {"stickyvm-apiserver", flag};
        snprintf(flag, sizeof(flag), "--request-timeout=%s", ok[i].in);
        assert_int_equal(apis_options_parse(2, argv, &o, err, sizeof(err)), KUBE_OK);
        assert_int_equal(o.request_timeout_ms, ok[i].ms);
        apis_options_free(&o);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *argv[] = {"stickyvm-apiserver", flag};
        snprintf(flag, sizeof(flag), "--request-timeout=%s", bad[i]);
        assert_int_equal(apis_options_parse(2, argv, &o, err, sizeof(err)), KUBE_ECONFIG);
        apis_options_free(&o);
    }
}

int test_group_apiserver_options(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_flags),
        cmocka_unit_test(rejects_bad_flags),
        cmocka_unit_test(parses_connection_flags),
        cmocka_unit_test(parses_durations),
    };
    return cmocka_run_group_tests_name("apiserver_options", tests, NULL, NULL);
}
