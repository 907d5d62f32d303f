/*
 * tests/integration/apis_fixture.c - stickyvm-apiserver in-process behind
 * the emulator's aggregation layer, for the integration tests that need it
 * (apis_fixture.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apis_fixture.h"
#include "kube/codec/base64.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"

const char *af_endpoint_flag(int port, char *buf, size_t n)
{
    snprintf(buf, n, "--service-endpoint=stickyvm-system/stickyvm-apiserver=127.0.0.1:%d", port);
    return buf;
}

void af_options(harness *h, int port, apis_options *o)
{
    static const char *const dns[] = {"stickyvm-apiserver.stickyvm-system.svc", "localhost"};
    static const char *const ips[] = {"127.0.0.1"};
    const char *cert = NULL, *key = NULL;

    assert_int_equal(
        harness_issue_serving_cert(h, "stickyvm-apiserver", dns, 2, ips, 1, &cert, &key), KUBE_OK);
    assert_int_equal(apis_options_defaults(o), KUBE_OK);
    o->serving.secure_port = port;
    free(o->serving.bind_address);
    o->serving.bind_address = strdup("127.0.0.1");
    o->kubeconfig = strdup(harness_kubeconfig(h));
    o->serving.tls_cert_file = strdup(cert);
    o->serving.tls_private_key_file = strdup(key);
    o->shutdown_timeout_ms = 5000;
}

static void *serve(void *app)
{
    apis_app_run(app);
    return NULL;
}

void af_start(apis_options *o, af_server *s)
{
    char err[512] = "";
    int rc = apis_app_new(o, &s->app, err, sizeof(err));

    apis_options_free(o);
    if (rc != KUBE_OK)
        fail_msg("stickyvm-apiserver did not start: %s", err);
    assert_int_equal(pthread_create(&s->thread, NULL, serve, s->app), 0);
    s->running = 1;
}

void af_join(af_server *s)
{
    if (!s->running)
        return;
    pthread_join(s->thread, NULL);
    s->running = 0;
}

void af_stop(af_server *s)
{
    if (s->running)
        apis_app_stop(s->app);
    af_join(s);
    apis_app_free(s->app);
    s->app = NULL;
}

void af_register_apiservice(harness *h)
{
    char *ca = NULL, *b64 = NULL;
    size_t len = 0;
    kube_buf body = KUBE_BUF_INIT;

    assert_int_equal(kube_read_file(harness_ca_file(h), &ca, &len), KUBE_OK);
    assert_int_equal(kube_base64_encode(ca, len, &b64, NULL), KUBE_OK);
    kube_buf_printf(&body,
                    "{\"apiVersion\":\"apiregistration.k8s.io/v1\",\"kind\":\"APIService\","
                    "\"metadata\":{\"name\":\"v1.subresources.stickyvm.io\"},\"spec\":{"
                    "\"group\":\"subresources.stickyvm.io\",\"version\":\"v1\","
                    "\"groupPriorityMinimum\":1000,\"versionPriority\":15,\"caBundle\":\"%s\","
                    "\"service\":{\"namespace\":\"stickyvm-system\",\"name\":"
                    "\"stickyvm-apiserver\",\"port\":443}}}",
                    b64);
    assert_int_equal(
        harness_create(h, "/apis/apiregistration.k8s.io/v1/apiservices", body.data, NULL), KUBE_OK);
    kube_buf_free(&body);
    free(ca);
    free(b64);
}
