/*
 * tests/unit/test_delegate.c - kube/serving/delegate.c: delegated authentication and authorization:
 * review bodies as the recorded fixtures, always-allow rules.
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

static cJSON *fixture_spec(const char *file)
{
    char path[512], *text = NULL;
    size_t n;
    cJSON *doc, *spec;

    snprintf(path, sizeof(path), "%s/%s", STICKYVM_FIXTURES_DIR, file);
    assert_int_equal(kube_read_file(path, &text, &n), KUBE_OK);
    doc = cJSON_Parse(text);
    free(text);
    spec = cJSON_DetachItemFromObject(
        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "request"), "body"), "spec");
    cJSON_Delete(doc);
    return spec;
}

static void builds_reviews_like_the_fixtures(void **state)
{
    kube_user *admin = kube_user_new("admin");
    kube_user *prom = kube_user_new("system:serviceaccount:monitoring:prometheus");
    kube_authz_attrs res = {.user = admin,
                            .verb = "get",
                            .resource_request = 1,
                            .namespace_ = "default",
                            .group = "subresources.stickyvm.io",
                            .version = "v1",
                            .resource = "virtualmachines",
                            .subresource = "pin",
                            .name = "vm-a"};
    kube_authz_attrs nonres = {.user = prom, .verb = "get", .path = "/metrics"};
    cJSON *want, *got;
    (void)state;

    kube_strlist_add(&admin->groups, "system:masters");
    kube_strlist_add(&admin->groups, "system:authenticated");
    kube_strlist_add(&prom->groups, "system:serviceaccounts");
    kube_strlist_add(&prom->groups, "system:authenticated");
    want = fixture_spec("sar-allowed-201.json");
    got = kube_delegate_sar_body(&res);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(got, "kind")),
                        "SubjectAccessReview");
    assert_true(cJSON_Compare(cJSON_GetObjectItem(got, "spec"), want, 1));
    cJSON_Delete(want);
    cJSON_Delete(got);
    want = fixture_spec("sar-nonresource-metrics-201.json");
    got = kube_delegate_sar_body(&nonres);
    assert_true(cJSON_Compare(cJSON_GetObjectItem(got, "spec"), want, 1));
    cJSON_Delete(want);
    cJSON_Delete(got);
    kube_user_free(admin);
    kube_user_free(prom);
}

static void always_allow_rules(void **state)
{
    kube_strlist paths = {0}, groups = {0};
    kube_delegate_options o = {0};
    kube_delegate *d;
    kube_user *admin = kube_user_new("admin"), *bob = kube_user_new("bob");
    kube_authz_attrs a = {.verb = "get", .path = "/healthz"};
    kube_authz_decision dec;
    kube_user *u = NULL;
    (void)state;

    kube_strlist_split(&paths, "/healthz,/readyz,/livez");
    kube_strlist_add(&groups, "system:masters");
    kube_strlist_add(&admin->groups, "system:masters");
    o.always_allow_paths = &paths;
    o.always_allow_groups = &groups;
    o.allow_ttl_ms = o.deny_ttl_ms = o.token_ttl_ms = 10000;
    assert_int_equal(kube_delegate_new(&o, &d), KUBE_OK);
    a.user = bob;
    assert_int_equal(kube_delegate_authorize_cached(d, &a, &dec), KUBE_OK);
    assert_true(dec.allowed);
    a.path = "/metrics";
    assert_int_equal(kube_delegate_authorize_cached(d, &a, &dec), KUBE_ENOTFOUND);
    a.user = admin;
    assert_int_equal(kube_delegate_authorize_cached(d, &a, &dec), KUBE_OK);
    assert_true(dec.allowed);
    /* no reviewer configured: nothing else is allowed */
    a.user = bob;
    assert_int_equal(kube_delegate_authorize(d, &a, &dec), KUBE_OK);
    assert_false(dec.allowed);
    assert_int_equal(kube_delegate_token_cached(d, "tok", &u), KUBE_ENOTFOUND);
    assert_int_equal(kube_delegate_authenticate_token(d, "tok", &u), KUBE_EUNAUTHORIZED);
    kube_delegate_free(d);
    kube_user_free(admin);
    kube_user_free(bob);
    kube_strlist_free(&paths);
    kube_strlist_free(&groups);
}

int test_group_delegate(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(builds_reviews_like_the_fixtures),
        cmocka_unit_test(always_allow_rules),
    };
    return cmocka_run_group_tests_name("delegate", tests, NULL, NULL);
}
