/*
 * tests/unit/test_certs.c - kube/serving/certs.c: serving certificates generated, reloaded when
 * their files change, kept when the new ones break.
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

static void generates_and_reloads_serving_certificates(void **state)
{
    char dir[64], certdir[128], cert[160], key[160], other_cert[160], other_key[160], err[256];
    const char *const dns[] = {"localhost", NULL};
    kube_certs *c = NULL;
    struct stat st;
    (void)state;

    make_tmp(dir, sizeof(dir));
    snprintf(certdir, sizeof(certdir), "%s/a/b", dir);
    assert_int_equal(kube_certs_new(NULL, NULL, certdir, "10.0.0.7", &c, err, sizeof(err)),
                     KUBE_OK);
    snprintf(cert, sizeof(cert), "%s/apiserver.crt", certdir);
    snprintf(key, sizeof(key), "%s/apiserver.key", certdir);
    assert_string_equal(kube_certs_cert_file(c), cert);
    assert_int_equal(stat(key, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(kube_certs_reload_if_changed(c), 0);
    kube_certs_free(c);

    /* given files: reloaded when they change, kept when the new ones break */
    assert_int_equal(kube_certs_new(cert, key, NULL, NULL, &c, err, sizeof(err)), KUBE_OK);
    snprintf(other_cert, sizeof(other_cert), "%s/o.crt", dir);
    snprintf(other_key, sizeof(other_key), "%s/o.key", dir);
    assert_int_equal(kube_certs_generate(other_cert, other_key, dns, NULL, err, sizeof(err)),
                     KUBE_OK);
    assert_int_equal(rename(other_cert, cert), 0);
    bump_mtime(cert);
    assert_int_equal(kube_certs_reload_if_changed(c), 0); /* key does not match yet */
    assert_int_equal(rename(other_key, key), 0);
    bump_mtime(key);
    assert_int_equal(kube_certs_reload_if_changed(c), 1);
    assert_int_equal(kube_certs_reload_if_changed(c), 0);
    kube_certs_free(c);

    assert_int_equal(kube_certs_new(other_cert, key, NULL, NULL, &c, err, sizeof(err)), KUBE_EIO);
    assert_non_null(strstr(err, other_cert));
    remove_tree(dir);
}

int test_group_certs(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(generates_and_reloads_serving_certificates),
    };
    return cmocka_run_group_tests_name("certs", tests, NULL, NULL);
}
