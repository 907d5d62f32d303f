/*
 * tests/unit/test_serving_options.c - the secure port's options
 * (kube/serving/options.h): each daemon's defaults, the three named flag
 * sets on a command line, Go's TLS version and cipher suite names mapped to
 * OpenSSL's (an unknown name is an error naming it), and
 * --authorization-always-allow-paths matching as k8s.io/apiserver's path
 * authorizer (exact, or a prefix ending in "*").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/options.h"
#include "kube/serving/delegate.h"
#include "kube/serving/options.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "server.h"

static void each_daemon_has_its_defaults(void **state)
{
    kube_serving_options s;
    apis_options a;
    (void)state;

    assert_int_equal(sched_server_defaults(&s), KUBE_OK);
    assert_int_equal(s.secure_port, 10259);
    assert_string_equal(s.cert_dir, "");
    assert_string_equal(s.pair_name, "kube-scheduler");
    assert_string_equal(s.bind_address, "0.0.0.0");
    assert_true(s.authentication_tolerate_lookup_failure);
    assert_int_equal(s.token_cache_ttl_ms, 10000);
    assert_int_equal(s.authorized_ttl_ms, 10000);
    assert_int_equal(s.unauthorized_ttl_ms, 10000);
    assert_int_equal(s.always_allow_paths.n, 3);
    assert_string_equal(s.always_allow_paths.v[0], "/healthz");
    assert_string_equal(s.always_allow_paths.v[2], "/livez");
    assert_string_equal(s.always_allow_groups.v[0], "system:masters");
    kube_serving_options_free(&s);

    assert_int_equal(apis_options_defaults(&a), KUBE_OK);
    assert_int_equal(a.serving.secure_port, 8443);
    assert_string_equal(a.serving.cert_dir, "apiserver.local.config/certificates");
    assert_false(a.serving.authentication_tolerate_lookup_failure);
    apis_options_free(&a);
}

static void the_three_sets_parse(void **state)
{
    char *argv[] = {"x",
                    "--secure-port=10300",
                    "--bind-address",
                    "127.0.0.1",
                    "--tls-min-version=VersionTLS13",
                    "--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,"
                    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,TLS_AES_128_GCM_SHA256",
                    "--permit-port-sharing",
                    "--authentication-kubeconfig=/a.conf",
                    "--authentication-tolerate-lookup-failure=false",
                    "--requestheader-allowed-names=front-proxy-client",
                    "--authorization-kubeconfig=/z.conf",
                    "--authorization-always-allow-paths=/healthz,/debug/*",
                    "--authorization-webhook-cache-unauthorized-ttl=30s"};
    kube_serving_options s;
    kube_flag_set sets[KUBE_SERVING_FLAG_SETS];
    kube_buf ciphers = KUBE_BUF_INIT;
    char err[256] = "";
    int version = 0;
    (void)state;

    assert_int_equal(sched_server_defaults(&s), KUBE_OK);
    kube_serving_flag_sets(&s, sets);
    assert_string_equal(sets[0].name, "Secure serving");
    assert_string_equal(sets[1].name, "Authentication");
    assert_string_equal(sets[2].name, "Authorization");
    assert_int_equal(
        kube_flag_sets_parse(sets, KUBE_SERVING_FLAG_SETS, 13, argv, NULL, err, sizeof(err)),
        KUBE_OK);
    assert_int_equal(kube_serving_options_validate(&s, err, sizeof(err)), KUBE_OK);
    assert_int_equal(s.secure_port, 10300);
    assert_string_equal(s.bind_address, "127.0.0.1");
    assert_true(s.permit_port_sharing);
    assert_string_equal(s.authentication_kubeconfig, "/a.conf");
    assert_false(s.authentication_tolerate_lookup_failure);
    assert_true(s.allowed_names_set);
    assert_string_equal(s.authorization_kubeconfig, "/z.conf");
    assert_int_equal(s.unauthorized_ttl_ms, 30000);
    assert_int_equal(kube_serving_tls_version(s.tls_min_version, &version, err, sizeof(err)),
                     KUBE_OK);
    assert_int_equal(version, TLS1_3_VERSION);
    /* TLS 1.3 suites are accepted and, as Go, not configurable */
    assert_int_equal(kube_serving_cipher_list(&s.tls_cipher_suites, &ciphers, err, sizeof(err)),
                     KUBE_OK);
    assert_string_equal(ciphers.data, "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305");
    assert_true(kube_authz_path_always_allowed(&s.always_allow_paths, "/healthz"));
    assert_false(kube_authz_path_always_allowed(&s.always_allow_paths, "/healthz/ping"));
    assert_false(kube_authz_path_always_allowed(&s.always_allow_paths, "/readyz"));
    assert_true(kube_authz_path_always_allowed(&s.always_allow_paths, "/debug/pprof"));
    assert_false(kube_authz_path_always_allowed(&s.always_allow_paths, "/debu"));
    kube_buf_free(&ciphers);
    kube_serving_options_free(&s);
}

static void bad_values_are_named(void **state)
{
    kube_serving_options s;
    char err[256] = "";
    int version = 0;
    (void)state;

    assert_int_equal(kube_serving_tls_version(NULL, &version, err, sizeof(err)), KUBE_OK);
    assert_int_equal(version, TLS1_2_VERSION);
    assert_int_equal(kube_serving_tls_version("VersionTLS10", &version, err, sizeof(err)), KUBE_OK);
    assert_int_equal(version, TLS1_VERSION);
    assert_int_equal(kube_serving_tls_version("TLS12", &version, err, sizeof(err)), KUBE_ECONFIG);
    assert_string_equal(err, "unknown tls version \"TLS12\"");

    assert_int_equal(sched_server_defaults(&s), KUBE_OK);
    kube_strlist_split(&s.tls_cipher_suites,
                       "TLS_RSA_WITH_AES_128_GCM_SHA256,ECDHE-RSA-AES128-SHA");
    assert_int_equal(kube_serving_options_validate(&s, err, sizeof(err)), KUBE_ECONFIG);
    assert_string_equal(err, "Cipher suite ECDHE-RSA-AES128-SHA not supported or doesn't exist");
    kube_strlist_free(&s.tls_cipher_suites);
    s.tls_cert_file = strdup("/only-the-cert");
    assert_int_equal(kube_serving_options_validate(&s, err, sizeof(err)), KUBE_ECONFIG);
    assert_string_equal(err, "--tls-cert-file and --tls-private-key-file must be given together");
    kube_serving_options_free(&s);
}

int test_group_serving_options(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_daemon_has_its_defaults),
        cmocka_unit_test(the_three_sets_parse),
        cmocka_unit_test(bad_values_are_named),
    };
    return cmocka_run_group_tests_name("serving_options", tests, NULL, NULL);
}
