/*
 * tests/unit/test_authsource.c - kube/serving/authsource.c: the authentication settings source,
 * following flag files and the ConfigMap's data.
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
#include "test_files.h"
#include "kube/util/errors.h"
#include "kube/serving/cache_testing.h"
#include "metrics_testing.h"
#include "kube/serving/authn_testing.h"

static void authentication_settings_follow_files_and_configmap(void **state)
{
    char dir[64], ca[128], c1[128], k1[128], c2[128], k2[128], err[256];
    const char *const dns[] = {"x", NULL};
    kube_authn_source_options o = {0};
    kube_authn_source *s;
    kube_authn_config *cfg;
    char *pem;
    cJSON *data;
    uint64_t gen;
    (void)state;

    make_tmp(dir, sizeof(dir));
    snprintf(ca, sizeof(ca), "%s/ca.crt", dir);
    snprintf(c1, sizeof(c1), "%s/1.crt", dir);
    snprintf(k1, sizeof(k1), "%s/1.key", dir);
    snprintf(c2, sizeof(c2), "%s/2.crt", dir);
    snprintf(k2, sizeof(k2), "%s/2.key", dir);
    assert_int_equal(kube_certs_generate(c1, k1, dns, NULL, err, sizeof(err)), KUBE_OK);
    assert_int_equal(kube_certs_generate(c2, k2, dns, NULL, err, sizeof(err)), KUBE_OK);
    pem = file_text(c1);
    write_file(ca, pem);
    free(pem);

    o.requestheader_ca_file = ca;
    assert_int_equal(kube_authn_source_new(&o, &s, err, sizeof(err)), KUBE_OK);
    assert_true(kube_authn_source_ready(s)); /* no lookup: ready at once */
    cfg = kube_authn_source_get(s);
    assert_true(kube_authn_config_has_requestheader(cfg));
    assert_false(kube_authn_config_has_client_ca(cfg));
    kube_authn_config_unref(cfg);

    gen = kube_authn_source_generation(s);
    kube_authn_source_check_files(s);
    assert_int_equal(kube_authn_source_generation(s), gen);
    pem = file_text(c2);
    write_file(ca, pem);
    free(pem);
    bump_mtime(ca);
    kube_authn_source_check_files(s);
    assert_int_equal(kube_authn_source_generation(s), gen + 1);
    /* a broken file keeps the settings */
    write_file(ca, "not a certificate");
    bump_mtime(ca);
    kube_authn_source_check_files(s);
    assert_int_equal(kube_authn_source_generation(s), gen + 1);

    /* ConfigMap data: the client CA comes from it, the flag still wins
     * for the front proxy; broken data is ignored */
    pem = file_text(c1);
    data = cJSON_CreateObject();
    cJSON_AddStringToObject(data, "client-ca-file", pem);
    free(pem);
    kube_authn_source_apply_configmap(s, data);
    assert_int_equal(kube_authn_source_generation(s), gen + 2);
    cfg = kube_authn_source_get(s);
    assert_true(kube_authn_config_has_client_ca(cfg));
    assert_true(kube_authn_config_has_requestheader(cfg));
    kube_authn_config_unref(cfg);
    cJSON_ReplaceItemInObject(data, "client-ca-file", cJSON_CreateString("garbage"));
    kube_authn_source_apply_configmap(s, data);
    assert_int_equal(kube_authn_source_generation(s), gen + 2);
    cJSON_Delete(data);
    kube_authn_source_free(s);

    o.requestheader_ca_file = "/nonexistent/ca.crt";
    assert_int_equal(kube_authn_source_new(&o, &s, err, sizeof(err)), KUBE_EIO);
    assert_non_null(strstr(err, "/nonexistent/ca.crt"));
    remove_tree(dir);
}

int test_group_authsource(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(authentication_settings_follow_files_and_configmap),
    };
    return cmocka_run_group_tests_name("authsource", tests, NULL, NULL);
}
