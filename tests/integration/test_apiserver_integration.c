/*
 * tests/integration/test_apiserver_integration.c - stickyvm-apiserver
 * behind the emulator playing kube-apiserver's aggregation layer.
 *
 * One fixture for the group: the emulator (8 nodes, the authz policy below,
 * the Service stickyvm-system/stickyvm-apiserver resolved to our port), a
 * serving certificate for stickyvm-apiserver.stickyvm-system.svc issued by
 * the emulator CA, stickyvm-apiserver itself running in-process (so ASan
 * and valgrind see it), and the APIService v1.subresources.stickyvm.io
 * created through the API with the CA as caBundle and waited Available.
 *
 * Requests go either through the proxy (harness_request: the emulator
 * authenticates, authorizes, and forwards with the front-proxy
 * certificate) or straight to stickyvm-apiserver (direct(): libcurl with a
 * chosen client certificate, headers and token).
 *
 * Waits use deadlines; nothing asserts speed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <openssl/pem.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "apiserver/app_testing.h"
#include "apis_fixture.h"
#include "kube/serving/authsource.h"
#include "kube/serving/authsource_testing.h"
#include "apiserver/metrics.h"
#include "apiserver/options.h"
#include "harness.h"
#include "kube/codec/base64.h"
#include "kube/util/certkit.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "metrics_testing.h"
#include "test_emulator_kubectl.h"

#define WAIT_MS 30000
#define GV "/apis/subresources.stickyvm.io/v1"
#define VMS GV "/namespaces/default/virtualmachines"
#define N_NODES 8
#define SHUTDOWN_DELAY_MS 3000 /* --shutdown-delay-duration */

static const char policy[] =
    "{\"rules\":[{\"users\":[\"alice\"],\"verbs\":[\"get\",\"update\",\"create\"],"
    "\"apiGroups\":[\"subresources.stickyvm.io\"],"
    "\"resources\":[\"virtualmachines/pin\",\"virtualmachines/unpin\"],"
    "\"namespaces\":[\"default\"]},"
    "{\"users\":[\"alice\"],\"verbs\":[\"get\",\"list\"],"
    "\"apiGroups\":[\"subresources.stickyvm.io\"],\"resources\":[\"virtualmachinepins\"],"
    "\"namespaces\":[\"default\"]}]}";

typedef struct fixture {
    harness *h;
    char dir[64];
    int port;
    af_server server;                         /* stickyvm-apiserver, in-process */
    char fp_cert[512], fp_key[512];           /* the emulator's front-proxy client */
    char wrong_cert[512], wrong_key[512];     /* CN=front-proxy-client, another CA */
    char outside_cert[512], outside_key[512]; /* front-proxy CA, CN not allowed */
    const harness_identity *alice, *bob;      /* cluster-CA client certificates */
} fixture;

static fixture F;

/* ---- helpers ---- */

static size_t collect(char *p, size_t size, size_t n, void *ud)
{
    return kube_buf_append(ud, p, size * n) == KUBE_OK ? size * n : 0;
}

typedef struct call {
    const char *method;
    const char *path;
    const char *cert, *key;     /* client certificate, may be NULL */
    const char *const *headers; /* NULL-terminated, may be NULL */
    const char *body;           /* NULL: none */
} call;

/* A request straight to stickyvm-apiserver. Returns the status (0 when the
 * transport failed); *json receives the parsed body when asked. */
static long direct(const call *c, cJSON **json)
{
    CURL *curl = curl_easy_init();
    struct curl_slist *h = NULL;
    kube_buf body = KUBE_BUF_INIT;
    char url[1024];
    long status = 0;

    snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", F.port, c->path);
    for (size_t i = 0; c->headers && c->headers[i]; i++)
        h = curl_slist_append(h, c->headers[i]);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CAINFO, harness_ca_file(F.h));
    curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, c->method);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    if (c->body)
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, c->body);
    if (c->cert) {
        curl_easy_setopt(curl, CURLOPT_SSLCERT, c->cert);
        curl_easy_setopt(curl, CURLOPT_SSLKEY, c->key);
    }
    if (curl_easy_perform(curl) == CURLE_OK)
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (json)
        *json = body.data ? cJSON_Parse(body.data) : NULL;
    kube_buf_free(&body);
    curl_slist_free_all(h);
    curl_easy_cleanup(curl);
    return status;
}

static const char *jstr(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int jbool(const cJSON *j, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, key));
}

/* Through the emulator as admin (id NULL) or another identity. */
static long via_proxy(const harness_identity *id, const char *method, const char *path,
                      cJSON **json)
{
    long status = 0;
    cJSON *j = NULL;

    assert_int_equal(harness_request_json(F.h, id, method, path, NULL, &status, &j), KUBE_OK);
    if (json)
        *json = j;
    else
        cJSON_Delete(j);
    return status;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- fixture ---- */

/* Non-zero while a request is in flight on a worker. */
static int server_busy(apis_metrics *m)
{
    kube_buf b = KUBE_BUF_INIT;
    int busy;

    apis_metrics_render(m, &b);
    busy = b.data && strstr(b.data, "stickyvm_apiserver_inflight_requests 1\n") != NULL;
    kube_buf_free(&b);
    return busy;
}

static int write_policy(char *path, size_t n)
{
    FILE *f;

    snprintf(path, n, "%s/policy.json", F.dir);
    f = fopen(path, "w");
    if (!f)
        return KUBE_EIO;
    fputs(policy, f);
    return fclose(f) == 0 ? KUBE_OK : KUBE_EIO;
}

static void start_emulator(void)
{
    char policy_path[128], endpoint[AF_FLAG_LEN], policy_flag[160];
    const char *args[] = {endpoint, policy_flag, "--aggregator-probe-interval-ms=200", NULL};
    harness_opts o = HARNESS_OPTS_INIT;

    snprintf(F.dir, sizeof(F.dir), "/tmp/apis-it-XXXXXX");
    assert_non_null(mkdtemp(F.dir));
    assert_int_equal(write_policy(policy_path, sizeof(policy_path)), KUBE_OK);
    F.port = harness_free_port();
    assert_true(F.port > 0);
    af_endpoint_flag(F.port, endpoint, sizeof(endpoint));
    snprintf(policy_flag, sizeof(policy_flag), "--authorization-policy-file=%s", policy_path);
    o.nodes = N_NODES;
    o.extra_args = args;
    assert_int_equal(harness_start(&o, &F.h), KUBE_OK);
    snprintf(F.fp_cert, sizeof(F.fp_cert), "%s", harness_front_proxy_cert_file(F.h));
    snprintf(F.fp_key, sizeof(F.fp_key), "%s", harness_front_proxy_key_file(F.h));
}

static void start_apiserver(void)
{
    apis_options o;

    af_options(F.h, F.port, &o);
    o.shutdown_delay_ms = SHUTDOWN_DELAY_MS;
    o.workers = 8;
    af_start(&o, &F.server);
}

static void wait_ready(void)
{
    call c = {"GET", "/readyz", NULL, NULL, NULL, NULL};
    WAIT_TRUE_MS_MSG(direct(&c, NULL) == 200, WAIT_MS, "stickyvm-apiserver never became ready");
}

static int apiservice_available(void)
{
    cJSON *j = NULL, *c;
    int ok = 0;

    via_proxy(NULL, "GET",
              "/apis/apiregistration.k8s.io/v1/apiservices/v1.subresources.stickyvm.io", &j);
    cJSON_ArrayForEach(
        c, cJSON_GetObjectItem(cJSON_GetObjectItem(j, "status"),
                               "conditions")) if (jstr(c, "type") &&
                                                  !strcmp(jstr(c, "type"), "Available") &&
                                                  jstr(c, "status")) ok =
        !strcmp(jstr(c, "status"), "True");
    cJSON_Delete(j);
    return ok;
}

static void wait_available(void)
{
    WAIT_TRUE_MS_MSG(apiservice_available(), WAIT_MS, "the APIService never became Available");
}

static void create_vm(const char *name, const char *vmi_node)
{
    char body[512], path[256];
    harness_response r = {0};
    long status = 0;

    snprintf(
        body, sizeof(body),
        "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\",\"metadata\":{\"name\":"
        "\"%s\"},\"spec\":{\"running\":true,\"template\":{\"spec\":{\"domain\":{\"devices\":{}}}}}"
        "}",
        name);
    assert_int_equal(
        harness_create(F.h, "/apis/kubevirt.io/v1/namespaces/default/virtualmachines", body, NULL),
        KUBE_OK);
    if (!vmi_node)
        return;
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstance\",\"metadata\":"
             "{\"name\":\"%s\"},\"spec\":{\"domain\":{\"devices\":{}}}}",
             name);
    assert_int_equal(
        harness_create(F.h, "/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances", body,
                       NULL),
        KUBE_OK);
    if (!*vmi_node)
        return; /* an instance not running anywhere */
    snprintf(path, sizeof(path),
             "/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances/%s/status", name);
    snprintf(body, sizeof(body), "{\"status\":{\"nodeName\":\"%s\",\"phase\":\"Running\"}}",
             vmi_node);
    assert_int_equal(
        harness_request(F.h, NULL, "PATCH", path, "application/merge-patch+json", body, &r),
        KUBE_OK);
    status = r.status;
    harness_response_free(&r);
    assert_int_equal(status, 200);
}

static X509 *read_cert(const char *path)
{
    FILE *f = fopen(path, "r");
    X509 *x = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;

    if (f)
        fclose(f);
    return x;
}

static EVP_PKEY *read_key(const char *path)
{
    FILE *f = fopen(path, "r");
    EVP_PKEY *k = f ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;

    if (f)
        fclose(f);
    return k;
}

/* Client certificates the server must not trust as a front proxy. */
static void make_bad_certs(void)
{
    kube_cert_spec ca_spec = {
        .cn = "front-proxy-ca", .ca = 1, .not_before_s = -3600, .not_after_s = 86400};
    kube_cert_spec fp = {.cn = "front-proxy-client",
                         .eku = "clientAuth",
                         .not_before_s = -3600,
                         .not_after_s = 86400};
    kube_cert_spec outside = {.cn = "not-the-front-proxy",
                              .eku = "clientAuth",
                              .not_before_s = -3600,
                              .not_after_s = 86400};
    char ca_key_path[512];
    X509 *other_ca, *leaf, *fp_ca;
    EVP_PKEY *other_key, *key, *fp_key;

    assert_int_equal(kube_certkit_issue(NULL, NULL, &ca_spec, &other_ca, &other_key), KUBE_OK);
    assert_int_equal(kube_certkit_issue(other_ca, other_key, &fp, &leaf, &key), KUBE_OK);
    snprintf(F.wrong_cert, sizeof(F.wrong_cert), "%s/wrong.crt", F.dir);
    snprintf(F.wrong_key, sizeof(F.wrong_key), "%s/wrong.key", F.dir);
    assert_int_equal(kube_certkit_write(F.wrong_cert, F.wrong_key, leaf, NULL, key), KUBE_OK);
    X509_free(leaf);
    EVP_PKEY_free(key);
    X509_free(other_ca);
    EVP_PKEY_free(other_key);

    snprintf(ca_key_path, sizeof(ca_key_path), "%s/front-proxy-ca.key", harness_data_dir(F.h));
    fp_ca = read_cert(harness_front_proxy_ca_file(F.h));
    fp_key = read_key(ca_key_path);
    assert_non_null(fp_ca);
    assert_non_null(fp_key);
    assert_int_equal(kube_certkit_issue(fp_ca, fp_key, &outside, &leaf, &key), KUBE_OK);
    snprintf(F.outside_cert, sizeof(F.outside_cert), "%s/outside.crt", F.dir);
    snprintf(F.outside_key, sizeof(F.outside_key), "%s/outside.key", F.dir);
    assert_int_equal(kube_certkit_write(F.outside_cert, F.outside_key, leaf, NULL, key), KUBE_OK);
    X509_free(leaf);
    EVP_PKEY_free(key);
    X509_free(fp_ca);
    EVP_PKEY_free(fp_key);
}

static int setup(void **state)
{
    (void)state;
    memset(&F, 0, sizeof(F));
    curl_global_init(CURL_GLOBAL_DEFAULT);
    start_emulator();
    start_apiserver();
    wait_ready();
    af_register_apiservice(F.h);
    wait_available();
    create_vm("vm-a", "node-1");
    create_vm("vm-b", "node-2");
    create_vm("vm-idle", "");
    create_vm("vm-novmi", NULL);
    create_vm("vm-race", NULL);
    make_bad_certs();
    assert_int_equal(harness_add_cert_user(F.h, "alice", NULL, 0, &F.alice), KUBE_OK);
    assert_int_equal(harness_add_cert_user(F.h, "bob", NULL, 0, &F.bob), KUBE_OK);
    return 0;
}

static int teardown(void **state)
{
    char cmd[128];

    (void)state;
    af_stop(&F.server);
    harness_stop(F.h);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", F.dir);
    if (F.dir[0] && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", F.dir);
    curl_global_cleanup();
    return 0;
}

/* ---- tests ---- */

/* The body of a GET of path straight to stickyvm-apiserver (no identity)
 * into out; returns the status. */
static long direct_text(const char *path, kube_buf *out)
{
    CURL *curl = curl_easy_init();
    char url[256];
    long status = 0;

    kube_buf_reset(out);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", F.port, path);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CAINFO, harness_ca_file(F.h));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    if (curl_easy_perform(curl) == CURLE_OK)
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(curl);
    return status;
}

static void pins_and_unpins_through_the_proxy(void **state)
{
    cJSON *j = NULL;
    (void)state;

    assert_int_equal(via_proxy(NULL, "GET", VMS "/vm-a/pin?node=node-0&timeout=32s", &j), 200);
    assert_string_equal(jstr(j, "kind"), "VirtualMachinePin");
    assert_string_equal(jstr(j, "node"), "node-0");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "previousNode")));
    assert_true(jbool(j, "changed"));
    cJSON_Delete(j);

    /* the annotation really is on the VM */
    assert_int_equal(
        via_proxy(NULL, "GET", "/apis/kubevirt.io/v1/namespaces/default/virtualmachines/vm-a", &j),
        200);
    const cJSON *ann = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "metadata"), "annotations");
    assert_string_equal(jstr(ann, "stickyvm.io/node"), "node-0");
    /* with its history, written in the same patch (kube/types/pin.h) */
    assert_string_equal(jstr(ann, "stickyvm.io/pin-reason"), "API");
    assert_string_equal(jstr(ann, "stickyvm.io/pinned-by"), "admin"); /* the proxied user */
    assert_int_equal(strlen(jstr(ann, "stickyvm.io/pinned-at")), strlen("2026-01-01T00:00:00Z"));
    cJSON_Delete(j);

    assert_int_equal(via_proxy(NULL, "PUT", VMS "/vm-a/unpin", &j), 200);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "node")));
    assert_string_equal(jstr(j, "previousNode"), "node-0");
    cJSON_Delete(j);

    /* without ?node=, the node the instance runs on */
    assert_int_equal(via_proxy(NULL, "POST", VMS "/vm-a/pin", &j), 200);
    assert_string_equal(jstr(j, "node"), "node-1");
    cJSON_Delete(j);
}

static void repin_and_unpin_are_idempotent(void **state)
{
    cJSON *j = NULL;
    (void)state;

    assert_int_equal(via_proxy(NULL, "GET", VMS "/vm-b/pin?node=node-3", &j), 200);
    assert_true(jbool(j, "changed"));
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "PUT", VMS "/vm-b/pin?node=node-3", &j), 200);
    assert_false(jbool(j, "changed"));
    assert_string_equal(jstr(j, "node"), "node-3");
    assert_string_equal(jstr(j, "previousNode"), "node-3");
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "PUT", VMS "/vm-b/unpin", &j), 200);
    assert_true(jbool(j, "changed"));
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "PUT", VMS "/vm-b/unpin", &j), 200);
    assert_false(jbool(j, "changed"));
    cJSON_Delete(j);
}

/* A ?node= too long to be a node name: 422 naming the whole value, as
 * field.Invalid prints it (apimachinery does not shorten it), with one
 * cause per rule it breaks. */
static void too_long_node_is_shown_whole(void)
{
    char node[301], path[512], want[512];
    cJSON *j = NULL;

    memset(node, 'n', 300);
    node[300] = '\0';
    snprintf(path, sizeof(path), VMS "/vm-a/pin?node=%s", node);
    assert_int_equal(via_proxy(NULL, "GET", path, &j), 422);
    snprintf(want, sizeof(want),
             "VirtualMachinePin.subresources.stickyvm.io \"vm-a\" is invalid: node: Invalid "
             "value: \"%s\": must be no more than 253 characters",
             node);
    assert_string_equal(jstr(j, "message"), want);
    const cJSON *causes = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "details"), "causes");
    assert_int_equal(cJSON_GetArraySize(causes), 1);
    assert_string_equal(jstr(cJSON_GetArrayItem(causes, 0), "field"), "node");
    cJSON_Delete(j);

    node[0] = 'N'; /* too long and not lower case: both rules */
    snprintf(path, sizeof(path), VMS "/vm-a/pin?node=%s", node);
    assert_int_equal(via_proxy(NULL, "GET", path, &j), 422);
    causes = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "details"), "causes");
    assert_int_equal(cJSON_GetArraySize(causes), 2);
    assert_non_null(
        strstr(jstr(cJSON_GetArrayItem(causes, 1), "message"), "a lowercase RFC 1123 subdomain"));
    assert_non_null(strstr(jstr(j, "message"), "is invalid: [node: Invalid value: \"Nnnn"));
    cJSON_Delete(j);
}

static void answers_errors_with_status(void **state)
{
    cJSON *j = NULL;
    (void)state;

    assert_int_equal(via_proxy(NULL, "GET", VMS "/no-such-vm/pin?node=node-0", &j), 404);
    assert_string_equal(jstr(j, "reason"), "NotFound");
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vm-idle/pin", &j), 409);
    assert_string_equal(jstr(j, "reason"), "Conflict");
    assert_non_null(strstr(jstr(j, "message"), "?node="));
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vm-novmi/pin", &j), 409);
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vm-a/pin?node=node-99", &j), 422);
    assert_string_equal(jstr(j, "reason"), "Invalid");
    cJSON_Delete(j);
    too_long_node_is_shown_whole();
    /* an empty ?node= is field.Required, as kube words it */
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vm-a/pin?node=", &j), 422);
    assert_string_equal(jstr(j, "message"), "VirtualMachinePin.subresources.stickyvm.io \"vm-a\" "
                                            "is invalid: node: Required value");
    assert_string_equal(
        jstr(
            cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "details"), "causes"), 0),
            "reason"),
        "FieldValueRequired");
    cJSON_Delete(j);
    /* a quote in the value is escaped as %q does */
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vm-a/pin?node=a%22b", &j), 422);
    assert_non_null(strstr(jstr(j, "message"), "node: Invalid value: \"a\\\"b\": "));
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "DELETE", VMS "/vm-a/pin", &j), 405);
    assert_string_equal(jstr(j, "reason"), "MethodNotAllowed");
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "GET", VMS "/Bad_Name/pin", &j), 400);
    assert_string_equal(jstr(j, "reason"), "BadRequest");
    cJSON_Delete(j);
}

static void serves_discovery_and_openapi(void **state)
{
    static const char *const aggregator[] = {"X-Remote-User: system:aggregator", NULL};
    call openapi = {"GET", "/openapi/v2", F.fp_cert, F.fp_key, aggregator, NULL};
    cJSON *j = NULL;
    (void)state;

    assert_int_equal(via_proxy(F.bob, "GET", GV, &j), 200);
    assert_string_equal(jstr(j, "kind"), "APIResourceList");
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "GET", "/apis/subresources.stickyvm.io", &j), 200);
    assert_string_equal(jstr(j, "kind"), "APIGroup");
    cJSON_Delete(j);
    assert_int_equal(direct(&openapi, &j), 200);
    assert_string_equal(jstr(j, "swagger"), "2.0");
    cJSON_Delete(j);
}

static void forged_headers_without_a_certificate_are_401(void **state)
{
    static const char *const forged[] = {"X-Remote-User: admin", "X-Remote-Group: system:masters",
                                         NULL};
    call c = {"GET", VMS "/vm-a/pin?node=node-2", NULL, NULL, forged, NULL};
    cJSON *j = NULL;
    (void)state;

    assert_int_equal(direct(&c, &j), 401);
    assert_string_equal(jstr(j, "reason"), "Unauthorized");
    cJSON_Delete(j);
}

static void untrusted_proxy_certificates_are_401(void **state)
{
    static const char *const forged[] = {"X-Remote-User: admin", "X-Remote-Group: system:masters",
                                         NULL};
    call wrong_ca = {"GET", GV, F.wrong_cert, F.wrong_key, forged, NULL};
    call outside = {"GET", GV, F.outside_cert, F.outside_key, forged, NULL};
    call good = {"GET", GV, F.fp_cert, F.fp_key, forged, NULL};
    (void)state;

    assert_int_equal(direct(&wrong_ca, NULL), 401);
    assert_int_equal(direct(&outside, NULL), 401);
    assert_int_equal(direct(&good, NULL), 200);
}

static void client_certificates_ignore_front_proxy_headers(void **state)
{
    static const char *const as_alice[] = {"X-Remote-User: alice", NULL};
    call c = {"GET", VMS "/vm-b/pin?node=node-4", NULL, NULL, as_alice, NULL};
    (void)state;

    /* alice's own certificate: allowed by the policy */
    c.cert = F.alice->cert_file;
    c.key = F.alice->key_file;
    assert_int_equal(direct(&c, NULL), 200);
    /* bob's certificate claiming to be alice stays bob: denied */
    c.cert = F.bob->cert_file;
    c.key = F.bob->key_file;
    assert_int_equal(direct(&c, NULL), 403);
}

static void policy_denials_are_403(void **state)
{
    static const char *const as_bob[] = {"X-Remote-User: bob", "X-Remote-Group: team-b", NULL};
    static const char *const as_alice[] = {"X-Remote-User: alice", NULL};
    call bob_direct = {"GET", VMS "/vm-a/pin?node=node-0", F.fp_cert, F.fp_key, as_bob, NULL};
    call alice_other_ns = {"GET",     GV "/namespaces/kube-system/virtualmachines/vm-a/pin",
                           F.fp_cert, F.fp_key,
                           as_alice,  NULL};
    call metrics = {"GET", "/metrics", F.fp_cert, F.fp_key, as_bob, NULL};
    cJSON *j = NULL;
    (void)state;

    /* denied by stickyvm-apiserver's own SubjectAccessReview */
    assert_int_equal(direct(&bob_direct, &j), 403);
    assert_string_equal(jstr(j, "reason"), "Forbidden");
    assert_non_null(strstr(jstr(j, "message"), "User \"bob\" cannot get resource "
                                               "\"virtualmachines/pin\""));
    cJSON_Delete(j);
    assert_int_equal(direct(&alice_other_ns, NULL), 403);
    assert_int_equal(direct(&metrics, NULL), 403);
    /* and by the aggregator before proxying */
    assert_int_equal(via_proxy(F.bob, "GET", VMS "/vm-a/pin", NULL), 403);
}

static void bearer_tokens_go_through_tokenreview(void **state)
{
    static const char *const groups[] = {"system:masters"};
    const harness_identity *carol = NULL;
    char auth[512];
    const char *hdr[] = {auth, NULL};
    call c = {"GET", GV, NULL, NULL, hdr, NULL};
    (void)state;

    assert_int_equal(harness_add_token_user(F.h, "carol", groups, 1, &carol), KUBE_OK);
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", carol->token);
    assert_int_equal(direct(&c, NULL), 200);
    assert_int_equal(direct(&c, NULL), 200); /* cached */
    snprintf(auth, sizeof(auth), "Authorization: Bearer not-a-token");
    assert_int_equal(direct(&c, NULL), 401);
}

static void rejects_upgrades_and_bad_bodies(void **state)
{
    static const char *const upgrade[] = {"X-Remote-User: admin", "X-Remote-Group: system:masters",
                                          "Connection: Upgrade", "Upgrade: websocket", NULL};
    static const char *const admin[] = {"X-Remote-User: admin", "X-Remote-Group: system:masters",
                                        "Content-Type: application/json", NULL};
    call up = {"GET", VMS "/vm-a/pin", F.fp_cert, F.fp_key, upgrade, NULL};
    call body = {"PUT", VMS "/vm-a/pin", F.fp_cert, F.fp_key, admin, "{\"node\":\"node-0\"}"};
    call empty = {"PUT", VMS "/vm-a/unpin", F.fp_cert, F.fp_key, admin, "{}"};
    (void)state;

    assert_int_equal(direct(&up, NULL), 400);
    assert_int_equal(direct(&body, NULL), 400);
    assert_int_equal(direct(&empty, NULL), 200);
}

typedef struct racer {
    char node[32];
    long status;
    int changed;
    char previous[32]; /* "" for null */
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    static const char *const admin[] = {"X-Remote-User: admin", "X-Remote-Group: system:masters",
                                        NULL};
    char path[256];
    call c = {"PUT", path, F.fp_cert, F.fp_key, admin, NULL};
    cJSON *j = NULL;

    snprintf(path, sizeof(path), VMS "/vm-race/pin?node=%s", r->node);
    r->status = direct(&c, &j);
    r->changed = jbool(j, "changed");
    snprintf(r->previous, sizeof(r->previous), "%s",
             jstr(j, "previousNode") ? jstr(j, "previousNode") : "");
    cJSON_Delete(j);
    return NULL;
}

/* Concurrent pins to different nodes: each must have changed the
 * annotation from a distinct previous value, so the answers chain into one
 * history (a lost update would show two answers with the same
 * previousNode). */
static void concurrent_pins_are_not_lost(void **state)
{
    racer r[N_NODES];
    pthread_t t[N_NODES];
    int seen_null = 0;
    cJSON *j = NULL;
    const char *final;
    (void)state;

    for (int i = 0; i < N_NODES; i++) {
        memset(&r[i], 0, sizeof(r[i]));
        snprintf(r[i].node, sizeof(r[i].node), "node-%d", i);
        assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
    }
    for (int i = 0; i < N_NODES; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < N_NODES; i++) {
        assert_int_equal(r[i].status, 200);
        assert_true(r[i].changed);
        seen_null += r[i].previous[0] == '\0';
        for (int k = i + 1; k < N_NODES; k++)
            if (!strcmp(r[i].previous, r[k].previous))
                fail_msg("two pins both replaced \"%s\": an update was lost", r[i].previous);
    }
    assert_int_equal(seen_null, 1);
    assert_int_equal(via_proxy(NULL, "GET",
                               "/apis/kubevirt.io/v1/namespaces/default/virtualmachines/vm-race",
                               &j),
                     200);
    final = jstr(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "metadata"), "annotations"),
                 "stickyvm.io/node");
    assert_non_null(final);
    /* the final node is the one no answer saw replaced */
    for (int i = 0; i < N_NODES; i++)
        assert_string_not_equal(r[i].previous, final);
    cJSON_Delete(j);
    /* its pin lands on a random node: gone, it cannot show in later lists */
    assert_int_equal(via_proxy(NULL, "DELETE",
                               "/apis/kubevirt.io/v1/namespaces/default/virtualmachines/vm-race",
                               NULL),
                     200);
}

/* A changed allowed-names list in the watched ConfigMap applies without a
 * restart. */
static void follows_the_authentication_configmap(void **state)
{
    static const char *const admin[] = {"X-Remote-User: admin", "X-Remote-Group: system:masters",
                                        NULL};
    const char *path =
        "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication";
    call c = {"GET", GV, F.fp_cert, F.fp_key, admin, NULL};
    kube_authn_source *src = apis_app_authn_source(F.server.app);
    uint64_t gen = kube_authn_source_generation(src);
    harness_response r = {0};
    (void)state;

    assert_int_equal(direct(&c, NULL), 200);
    assert_int_equal(
        harness_request(F.h, NULL, "PATCH", path, "application/merge-patch+json",
                        "{\"data\":{\"requestheader-allowed-names\":\"[\\\"someone-else\\\"]\"}}",
                        &r),
        KUBE_OK);
    assert_int_equal(r.status, 200);
    harness_response_free(&r);
    WAIT_TRUE_MS_MSG(kube_authn_source_generation(src) != gen, WAIT_MS,
                     "the ConfigMap change never arrived");
    assert_int_equal(direct(&c, NULL), 401);
    gen = kube_authn_source_generation(src);
    assert_int_equal(
        harness_request(
            F.h, NULL, "PATCH", path, "application/merge-patch+json",
            "{\"data\":{\"requestheader-allowed-names\":\"[\\\"front-proxy-client\\\"]\"}}", &r),
        KUBE_OK);
    harness_response_free(&r);
    WAIT_TRUE_MS_MSG(kube_authn_source_generation(src) != gen, WAIT_MS,
                     "the ConfigMap change never arrived");
    assert_int_equal(direct(&c, NULL), 200);
}

typedef struct slow_call {
    long status;
    int finished;
} slow_call;

static void *slow_pin(void *arg)
{
    static const char *const admin[] = {"X-Remote-User: admin", "X-Remote-Group: system:masters",
                                        NULL};
    call c = {"GET", VMS "/vm-b/pin?node=node-5", F.fp_cert, F.fp_key, admin, NULL};
    slow_call *s = arg;

    s->status = direct(&c, NULL);
    __atomic_store_n(&s->finished, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* A request stuck on a slow kube-apiserver holds a worker, not the server:
 * while it waits, other clients are answered. */
static void slow_upstreams_do_not_stall_other_clients(void **state)
{
    static const char *const verbs[] = {"get", NULL};
    static const char *const resources[] = {"virtualmachines", NULL};
    static const char *const admin[] = {"X-Remote-User: admin", "X-Remote-Group: system:masters",
                                        NULL};
    harness_faults f = {.delay_ms = 4000, .verbs = verbs, .resources = resources};
    call discovery = {"GET", GV, F.fp_cert, F.fp_key, admin, NULL};
    call health = {"GET", "/healthz", NULL, NULL, NULL, NULL};
    apis_metrics *m = apis_app_metrics(F.server.app);
    unsigned long before = apis_metrics_requests_with_code(m, 200);
    slow_call s = {0};
    pthread_t t;
    (void)state;

    assert_int_equal(harness_set_faults(F.h, &f), KUBE_OK);
    assert_int_equal(pthread_create(&t, NULL, slow_pin, &s), 0);
    /* wait until the slow request is inside the server */
    WAIT_TRUE_MS_MSG(server_busy(m), WAIT_MS, "the slow request never arrived");
    assert_int_equal(direct(&discovery, NULL), 200);
    assert_int_equal(direct(&health, NULL), 200);
    assert_false(__atomic_load_n(&s.finished, __ATOMIC_SEQ_CST));
    assert_int_equal(harness_clear_faults(F.h), KUBE_OK);
    pthread_join(t, NULL);
    assert_int_equal(s.status, 200);
    assert_true(apis_metrics_requests_with_code(m, 200) >= before + 3);
}

/* The reason of APIService name's Available condition now (NULL while it
 * has none); it points into *j, which this replaces (the caller deletes the
 * last one). */
static const char *available_reason(const char *name, cJSON **j)
{
    char path[256];
    const cJSON *c;
    const char *reason = NULL;

    cJSON_Delete(*j);
    *j = NULL;
    snprintf(path, sizeof(path), "/apis/apiregistration.k8s.io/v1/apiservices/%s", name);
    via_proxy(NULL, "GET", path, j);
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(*j, "status"), "conditions"))
    {
        if (jstr(c, "type") && !strcmp(jstr(c, "type"), "Available"))
            reason = jstr(c, "reason");
    }
    return reason;
}

/* The aggregator checks the backend against the APIService caBundle: one
 * pointing at stickyvm-apiserver with another CA never becomes Available
 * and its requests are 503. */
static void aggregator_verifies_the_ca_bundle(void **state)
{
    kube_cert_spec spec = {.cn = "other-ca", .ca = 1, .not_before_s = -60, .not_after_s = 3600};
    X509 *ca = NULL;
    EVP_PKEY *key = NULL;
    char *pem = NULL, *b64 = NULL, path[256];
    kube_buf body = KUBE_BUF_INIT;
    cJSON *j = NULL;
    const char *reason = NULL;
    (void)state;

    assert_int_equal(kube_certkit_issue(NULL, NULL, &spec, &ca, &key), KUBE_OK);
    snprintf(path, sizeof(path), "%s/other-ca.crt", F.dir);
    assert_int_equal(kube_certkit_write(path, NULL, ca, NULL, NULL), KUBE_OK);
    assert_int_equal(kube_read_file(path, &pem, NULL), KUBE_OK);
    assert_int_equal(kube_base64_encode(pem, strlen(pem), &b64, NULL), KUBE_OK);
    kube_buf_printf(
        &body,
        "{\"apiVersion\":\"apiregistration.k8s.io/v1\",\"kind\":\"APIService\","
        "\"metadata\":{\"name\":\"v1beta1.other.example.com\"},\"spec\":{"
        "\"group\":\"other.example.com\",\"version\":\"v1beta1\","
        "\"groupPriorityMinimum\":1000,\"versionPriority\":15,\"caBundle\":\"%s\","
        "\"service\":{\"namespace\":\"stickyvm-system\",\"name\":\"stickyvm-apiserver\","
        "\"port\":443}}}",
        b64);
    assert_int_equal(
        harness_create(F.h, "/apis/apiregistration.k8s.io/v1/apiservices", body.data, NULL),
        KUBE_OK);
    WAIT_TRUE_MS_MSG((reason = available_reason("v1beta1.other.example.com", &j)) != NULL, WAIT_MS,
                     "no availability verdict for v1beta1.other.example.com");
    assert_string_equal(reason, "FailedDiscoveryCheck");
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "GET", "/apis/other.example.com/v1beta1", NULL), 503);
    assert_int_equal(
        via_proxy(NULL, "DELETE",
                  "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.other.example.com", NULL),
        200);
    kube_buf_free(&body);
    free(pem);
    free(b64);
    X509_free(ca);
    EVP_PKEY_free(key);
}

static cJSON *load_fixture(const char *name)
{
    char path[512], *text = NULL;
    size_t n;
    cJSON *j;

    snprintf(path, sizeof(path), "%s/%s", STICKYVM_FIXTURES_DIR, name);
    assert_int_equal(kube_read_file(path, &text, &n), KUBE_OK);
    j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    return j;
}

/* The emulator's review endpoints answer the recorded requests as the real
 * kube-apiserver did (kind, apiVersion, the echoed spec, the status). */
static void review_endpoints_answer_like_the_fixtures(void **state)
{
    static const char *const files[] = {"sar-allowed-201.json", "sar-nonresource-metrics-201.json",
                                        "tokenreview-invalid-201.json"};
    static const char *const keys[] = {"kind", "apiVersion", "spec", "status"};
    (void)state;

    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        cJSON *fx = load_fixture(files[i]), *got = NULL;
        const cJSON *req = cJSON_GetObjectItem(fx, "request"),
                    *want = cJSON_GetObjectItem(fx, "body");
        char *body = cJSON_PrintUnformatted(cJSON_GetObjectItem(req, "body"));
        long status = 0;

        assert_int_equal(
            harness_request_json(F.h, NULL, "POST", jstr(req, "path"), body, &status, &got),
            KUBE_OK);
        assert_int_equal(status, cJSON_GetObjectItem(fx, "status")->valueint);
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
            if (!cJSON_Compare(cJSON_GetObjectItem(got, keys[k]),
                               cJSON_GetObjectItem(want, keys[k]), 1))
                fail_msg("%s: %s differs", files[i], keys[k]);
        assert_true(cJSON_IsNull(
            cJSON_GetObjectItem(cJSON_GetObjectItem(got, "metadata"), "creationTimestamp")));
        free(body);
        cJSON_Delete(got);
        cJSON_Delete(fx);
    }
}

static void exports_metrics(void **state)
{
    apis_metrics *m = apis_app_metrics(F.server.app);
    kube_buf b = KUBE_BUF_INIT;
    (void)state;

    assert_true(apis_metrics_requests_with_code(m, 200) > 0);
    assert_true(apis_metrics_requests_with_code(m, 401) > 0);
    assert_int_equal(apis_metrics_render(m, &b), KUBE_OK);
    assert_non_null(
        strstr(b.data, "stickyvm_apiserver_request_total{verb=\"PUT\",subresource=\"pin\""));
    assert_non_null(strstr(b.data, "stickyvm_apiserver_request_duration_seconds_bucket"));
    kube_buf_free(&b);
}

/* ---- virtualmachinepins, audit Events, dryRun, local volumes ---- */

#define PINS GV "/namespaces/default/virtualmachinepins"
#define TABLE_ACCEPT "Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

static void create_json(const char *collection, const char *json)
{
    assert_int_equal(harness_create(F.h, collection, json, NULL), KUBE_OK);
}

static void create_labelled_vm(const char *name, const char *app, const char *volumes)
{
    char body[1024];

    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\",\"metadata\":{"
             "\"name\":\"%s\",\"labels\":{\"app\":\"%s\"}},\"spec\":{\"running\":true,"
             "\"template\":{\"spec\":{\"domain\":{\"devices\":{}},\"volumes\":[%s]}}}}",
             name, app, volumes);
    create_json("/apis/kubevirt.io/v1/namespaces/default/virtualmachines", body);
}

/* The names of a list's items, comma-separated, into out. */
static void item_names(const cJSON *list, char *out, size_t n)
{
    const cJSON *it;
    size_t used = 0;

    out[0] = '\0';
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(list, "items"))
    {
        const char *name = jstr(cJSON_GetObjectItem(it, "metadata"), "name");
        used += (size_t)snprintf(out + used, n - used, "%s%s", used ? "," : "", name);
        if (used >= n)
            break;
    }
}

/* 1 if the pin of vm shows node (NULL: unpinned) in what the informer
 * serves now. */
static int pin_listed(const char *vm, const char *node)
{
    char path[256];
    cJSON *j = NULL;

    snprintf(path, sizeof(path), PINS "/%s", vm);
    long st = via_proxy(NULL, "GET", path, &j);
    const char *got = jstr(j, "node");
    int ok = st == 200 && (node ? got && !strcmp(got, node) : !got);
    cJSON_Delete(j);
    return ok;
}

/* Waits until the pin of vm shows node (NULL: unpinned) in the list the
 * informer serves. */
static void wait_pin_listed(const char *vm, const char *node)
{
    WAIT_TRUE_MS_MSG(pin_listed(vm, node), WAIT_MS, "the pin of %s never showed %s", vm,
                     node ? node : "unpinned");
}

static void vmpins_list_get_and_select(void **state)
{
    cJSON *j = NULL, *item;
    char names[512];
    (void)state;

    create_labelled_vm("vp-db", "db", "");
    create_labelled_vm("vp-web", "web", "");
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-db/pin?node=node-3", NULL), 200);
    wait_pin_listed("vp-db", "node-3");
    wait_pin_listed("vp-web", NULL);

    assert_int_equal(via_proxy(NULL, "GET", GV "/virtualmachinepins", &j), 200);
    assert_string_equal(jstr(j, "kind"), "VirtualMachinePinList");
    assert_non_null(jstr(cJSON_GetObjectItem(j, "metadata"), "resourceVersion"));
    item_names(j, names, sizeof(names));
    assert_non_null(strstr(names, "vp-db,vp-web")); /* sorted by namespace, name */
    cJSON_Delete(j);

    assert_int_equal(via_proxy(NULL, "GET", PINS "?fieldSelector=node%3Dnode-3", &j), 200);
    item_names(j, names, sizeof(names));
    assert_string_equal(names, "vp-db");
    cJSON_Delete(j);
    assert_int_equal(
        via_proxy(NULL, "GET", PINS "?fieldSelector=metadata.name%3Dvp-web,node%3D", &j), 200);
    item_names(j, names, sizeof(names));
    assert_string_equal(names, "vp-web");
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "GET", PINS "?labelSelector=app%3Dweb", &j), 200);
    item_names(j, names, sizeof(names));
    assert_string_equal(names, "vp-web");
    cJSON_Delete(j);
    /* an empty selection is an empty list (and sorts nothing: UBSan) */
    assert_int_equal(via_proxy(NULL, "GET", PINS "?fieldSelector=node%3Dno-such-node", &j), 200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "items")), 0);
    cJSON_Delete(j);

    assert_int_equal(via_proxy(NULL, "GET", PINS "/vp-db", &j), 200);
    assert_string_equal(jstr(j, "kind"), "VirtualMachinePin");
    assert_string_equal(jstr(j, "node"), "node-3");
    assert_string_equal(jstr(j, "by"), "admin");
    assert_string_equal(jstr(j, "reason"), "API");
    assert_non_null(jstr(j, "since"));
    item = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "metadata"), "labels");
    assert_string_equal(jstr(item, "app"), "db");
    cJSON_Delete(j);

    assert_int_equal(via_proxy(NULL, "GET", PINS "/no-such-vm", &j), 404);
    assert_string_equal(jstr(j, "reason"), "NotFound");
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "GET", PINS "?fieldSelector=spec.x%3Dy", &j), 400);
    assert_non_null(strstr(jstr(j, "message"), "field label not supported: spec.x"));
    cJSON_Delete(j);
}

/* kubectl's server-side printing, through the aggregator. */
static void vmpins_tables(void **state)
{
    static const char *const accept[] = {TABLE_ACCEPT, NULL};
    static const char *const names[] = {"Name", "Node", "Node-Status", "Since",
                                        "By",   "Age",  "Pod",         "Waiting"};
    harness_response r = {0};
    cJSON *t, *row, *c;
    size_t i = 0;
    (void)state;

    assert_int_equal(harness_request_headers(F.h, NULL, "GET", PINS "?fieldSelector=node%3Dnode-3",
                                             accept, NULL, NULL, &r),
                     KUBE_OK);
    assert_int_equal(r.status, 200);
    if (!r.content_type || !strstr(r.content_type, "as=Table"))
        fail_msg("content type %s, body %.300s", r.content_type ? r.content_type : "(none)",
                 r.body);
    t = cJSON_Parse(r.body);
    harness_response_free(&r);
    assert_string_equal(jstr(t, "kind"), "Table");
    assert_string_equal(jstr(t, "apiVersion"), "meta.k8s.io/v1");
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(t, "columnDefinitions"))
        assert_string_equal(jstr(c, "name"), names[i++]);
    assert_int_equal(i, 8);
    row = cJSON_GetArrayItem(cJSON_GetObjectItem(t, "rows"), 0);
    c = cJSON_GetObjectItem(row, "cells");
    assert_string_equal(cJSON_GetArrayItem(c, 0)->valuestring, "vp-db");
    assert_string_equal(cJSON_GetArrayItem(c, 1)->valuestring, "node-3");
    assert_string_equal(cJSON_GetArrayItem(c, 2)->valuestring, "Ready");
    assert_string_equal(cJSON_GetArrayItem(c, 4)->valuestring, "admin");
    assert_string_equal(cJSON_GetArrayItem(c, 6)->valuestring, "<none>"); /* no pod */
    assert_string_equal(jstr(cJSON_GetObjectItem(row, "object"), "kind"), "PartialObjectMetadata");
    cJSON_Delete(t);

    assert_int_equal(harness_request_headers(F.h, NULL, "GET", PINS "/vp-db?includeObject=Object",
                                             accept, NULL, NULL, &r),
                     KUBE_OK);
    t = cJSON_Parse(r.body);
    harness_response_free(&r);
    row = cJSON_GetArrayItem(cJSON_GetObjectItem(t, "rows"), 0);
    assert_string_equal(jstr(cJSON_GetObjectItem(row, "object"), "kind"), "VirtualMachinePin");
    cJSON_Delete(t);

    assert_int_equal(harness_request_headers(F.h, NULL, "GET", PINS "?includeObject=All", accept,
                                             NULL, NULL, &r),
                     KUBE_OK);
    assert_int_equal(r.status, 400);
    harness_response_free(&r);
}

/* ---- watch on virtualmachinepins ---- */

/* A watch through the aggregator, on its own thread (its answer is whole
 * once the watch's timeoutSeconds ended it). */
typedef struct watch_call {
    const char *path;
    const char *const *headers;
    harness_response r;
    pthread_t thread;
} watch_call;

static void *watch_run(void *arg)
{
    watch_call *w = arg;

    harness_request_headers(F.h, NULL, "GET", w->path, w->headers, NULL, NULL, &w->r);
    return NULL;
}

static void watch_start(watch_call *w, const char *path, const char *const *headers)
{
    memset(w, 0, sizeof(*w));
    w->path = path;
    w->headers = headers;
    assert_int_equal(pthread_create(&w->thread, NULL, watch_run, w), 0);
}

/* Joins the watch; its events as "TYPE name[@node]" joined by '|', only
 * those of VMs whose name starts with prefix. */
static void watch_events(watch_call *w, const char *prefix, char *out, size_t n)
{
    char *save = NULL, *line;
    size_t used = 0;

    pthread_join(w->thread, NULL);
    assert_int_equal(w->r.status, 200);
    out[0] = '\0';
    for (line = strtok_r(w->r.body, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *ev = cJSON_Parse(line), *o = cJSON_GetObjectItem(ev, "object");
        const char *name = jstr(cJSON_GetObjectItem(o, "metadata"), "name"),
                   *node = jstr(o, "node");
        if (!ev)
            fail_msg("not an event: %s", line);
        if (name && !strncmp(name, prefix, strlen(prefix)))
            used += (size_t)snprintf(out + used, used < n ? n - used : 0, "%s%s %s%s%s",
                                     used ? "|" : "", jstr(ev, "type"), name, node ? "@" : "",
                                     node ? node : "");
        cJSON_Delete(ev);
    }
    harness_response_free(&w->r);
}

/* ---- status.nodeStatus ---- */

/* A request that must answer 200 (body: a JSON object, or NULL). */
static void request_ok(const char *method, const char *path, const char *ct, const char *body)
{
    harness_response r = {0};
    long status;

    assert_int_equal(harness_request(F.h, NULL, method, path, ct, body, &r), KUBE_OK);
    status = r.status;
    if (status != 200)
        fail_msg("%s %s: %ld %.300s", method, path, status, r.body ? r.body : "");
    harness_response_free(&r);
}

/* Sets the status of node's Ready condition, as the kubelet or the
 * node-lifecycle controller would. */
static void set_node_ready(const char *node, const char *ready)
{
    char path[128], body[256];

    snprintf(path, sizeof(path), "/api/v1/nodes/%s/status", node);
    snprintf(body, sizeof(body),
             "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\","
             "\"reason\":\"KubeletNotReady\"}]}}",
             ready);
    request_ok("PATCH", path, "application/merge-patch+json", body);
}

/* 1 if the pin of vm shows the node status want now. */
static int node_status_is(const char *vm, const char *want)
{
    char path[256];
    cJSON *j = NULL;

    snprintf(path, sizeof(path), PINS "/%s", vm);
    long st = via_proxy(NULL, "GET", path, &j);
    const char *got = jstr(cJSON_GetObjectItem(j, "status"), "nodeStatus");
    int ok = st == 200 && got && !strcmp(got, want);
    cJSON_Delete(j);
    return ok;
}

/* Waits until the pin of vm shows the node status want. */
static void wait_node_status(const char *vm, const char *want)
{
    WAIT_TRUE_MS_MSG(node_status_is(vm, want), WAIT_MS,
                     "the pin of %s never showed the node status %s", vm, want);
}

/* A virt-launcher pod of vm (its controller the VMI named after it), left
 * Pending (no scheduler takes it). */
static void create_launcher_pod(const char *vm, const char *name)
{
    char body[768];

    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"ownerReferences\":[{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":"
             "\"VirtualMachineInstance\",\"name\":\"%s\",\"uid\":\"6a1b\",\"controller\":true}]},"
             "\"spec\":{\"schedulerName\":\"nobody\",\"containers\":[{\"name\":\"compute\","
             "\"image\":\"virt-launcher\"}]}}",
             name, vm);
    create_json("/api/v1/namespaces/default/pods", body);
}

/* Cell col of a Table's first row. */
static const char *table_cell(const cJSON *t, int col)
{
    const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(t, "rows"), 0);

    return cJSON_GetArrayItem(cJSON_GetObjectItem(row, "cells"), col)->valuestring;
}

/* The names starting with "ns-" a list with this fieldSelector (escaped
 * for the URL) returns, comma-separated (other tests pin elsewhere). */
static void names_selected(const char *selector, char *names, size_t n)
{
    char path[512];
    cJSON *j = NULL, *it;
    size_t used = 0;

    snprintf(path, sizeof(path), PINS "?fieldSelector=%s", selector);
    assert_int_equal(via_proxy(NULL, "GET", path, &j), 200);
    names[0] = '\0';
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(j, "items"))
    {
        const char *name = jstr(cJSON_GetObjectItem(it, "metadata"), "name");
        if (!strncmp(name, "ns-", 3) && used < n)
            used += (size_t)snprintf(names + used, n - used, "%s%s", used ? "," : "", name);
    }
    cJSON_Delete(j);
}

/* status.nodeStatus follows the Node: NotReady on get and list, selected
 * by a fieldSelector and sent to watches (entering and leaving a filtered
 * one); Ready,SchedulingDisabled when cordoned; Missing once deleted. */
static void vmpins_show_the_node_status(void **state)
{
    static const char *const accept[] = {TABLE_ACCEPT, NULL};
    watch_call all, down;
    harness_response r = {0};
    char names[512], got[1024], all_path[256], down_path[320];
    cJSON *t;
    (void)state;

    create_labelled_vm("ns-down", "db", "");
    create_launcher_pod("ns-down", "virt-launcher-ns-down-x7k2p");
    create_labelled_vm("ns-cordon", "db", "");
    create_labelled_vm("ns-gone", "db", "");
    assert_int_equal(via_proxy(NULL, "GET", VMS "/ns-down/pin?node=node-5", NULL), 200);
    assert_int_equal(via_proxy(NULL, "GET", VMS "/ns-cordon/pin?node=node-6", NULL), 200);
    assert_int_equal(via_proxy(NULL, "GET", VMS "/ns-gone/pin?node=node-7", NULL), 200);
    wait_node_status("ns-down", "Ready");
    wait_node_status("ns-cordon", "Ready");
    wait_node_status("ns-gone", "Ready");

    /* from the list's version: whenever they reach the server, the watches
     * see every change after it (without one, a late start would miss
     * them; vmpins_watch_starts_with_the_state covers that case) */
    t = NULL;
    assert_int_equal(via_proxy(NULL, "GET", PINS, &t), 200);
    snprintf(all_path, sizeof(all_path), PINS "?watch=true&timeoutSeconds=10&resourceVersion=%s",
             jstr(cJSON_GetObjectItem(t, "metadata"), "resourceVersion"));
    snprintf(down_path, sizeof(down_path), "%s&fieldSelector=status.nodeStatus%%3DNotReady",
             all_path);
    cJSON_Delete(t);
    watch_start(&all, all_path, NULL);
    watch_start(&down, down_path, NULL);
    set_node_ready("node-5", "False");
    wait_node_status("ns-down", "NotReady");
    names_selected("status.nodeStatus%3DNotReady", names, sizeof(names));
    assert_string_equal(names, "ns-down");
    assert_int_equal(
        harness_request_headers(F.h, NULL, "GET", PINS "/ns-down", accept, NULL, NULL, &r),
        KUBE_OK);
    t = cJSON_Parse(r.body);
    harness_response_free(&r);
    assert_string_equal(table_cell(t, 2), "NotReady");
    assert_string_equal(table_cell(t, 6), "virt-launcher-ns-down-x7k2p");
    assert_string_not_equal(table_cell(t, 7), "<none>"); /* Pending: how long */
    cJSON_Delete(t);
    /* Running, with a migration's target Pending beside it: the Running one */
    request_ok("PATCH", "/api/v1/namespaces/default/pods/virt-launcher-ns-down-x7k2p/status",
               "application/merge-patch+json", "{\"status\":{\"phase\":\"Running\"}}");
    sleep_ms(1100); /* the target is newer by a creationTimestamp second */
    create_launcher_pod("ns-down", "virt-launcher-ns-down-t4rgt");
    assert_int_equal(
        harness_request_headers(F.h, NULL, "GET", PINS "/ns-down", accept, NULL, NULL, &r),
        KUBE_OK);
    t = cJSON_Parse(r.body);
    harness_response_free(&r);
    assert_string_equal(table_cell(t, 6), "virt-launcher-ns-down-x7k2p");
    assert_string_equal(table_cell(t, 7), "<none>");
    cJSON_Delete(t);
    set_node_ready("node-5", "True");
    wait_node_status("ns-down", "Ready");
    watch_events(&all, "ns-down", got, sizeof(got));
    assert_string_equal(got, "MODIFIED ns-down@node-5|MODIFIED ns-down@node-5");
    watch_events(&down, "ns-", got, sizeof(got));
    assert_string_equal(got, "ADDED ns-down@node-5|DELETED ns-down@node-5");

    request_ok("PATCH", "/api/v1/nodes/node-6", "application/merge-patch+json",
               "{\"spec\":{\"unschedulable\":true}}");
    wait_node_status("ns-cordon", "Ready,SchedulingDisabled");
    names_selected("status.nodeStatus%3DReady%5C%2CSchedulingDisabled", names, sizeof(names));
    assert_string_equal(names, "ns-cordon");
    request_ok("PATCH", "/api/v1/nodes/node-6", "application/merge-patch+json",
               "{\"spec\":{\"unschedulable\":false}}");

    request_ok("DELETE", "/api/v1/nodes/node-7", NULL, NULL);
    wait_node_status("ns-gone", "Missing");
    names_selected("status.nodeStatus%3DMissing", names, sizeof(names));
    assert_string_equal(names, "ns-gone");
}

static void delete_vm(const char *name)
{
    harness_response r = {0};
    char path[256];

    snprintf(path, sizeof(path), "/apis/kubevirt.io/v1/namespaces/default/virtualmachines/%s",
             name);
    assert_int_equal(harness_request(F.h, NULL, "DELETE", path, NULL, NULL, &r), KUBE_OK);
    assert_int_equal(r.status, 200);
    harness_response_free(&r);
}

/* resourceVersion "" starts with the current state; the watch ends at
 * timeoutSeconds. */
static void vmpins_watch_starts_with_the_state(void **state)
{
    watch_call w;
    char got[1024];
    int64_t t0 = kube_now_ms();
    (void)state;

    watch_start(&w, PINS "?watch=true&timeoutSeconds=1", NULL);
    watch_events(&w, "vp-", got, sizeof(got));
    assert_string_equal(got, "ADDED vp-db@node-3|ADDED vp-web");
    assert_true(kube_now_ms() - t0 >= 900);
    assert_true(kube_now_ms() - t0 < 5000);
    assert_int_equal(via_proxy(NULL, "GET", PINS "?watch=1&timeoutSeconds=x", NULL), 400);
}

/* allowWatchBookmarks: a BOOKMARK 2 s before the timeout (the cacher's
 * rule), with the kind and a resourceVersion alone; none unasked. */
static void vmpins_watch_bookmarks(void **state)
{
    harness_response r = {0};
    cJSON *ev, *o;
    const char *last;
    (void)state;

    assert_int_equal(harness_request(F.h, NULL, "GET",
                                     PINS "?watch=true&allowWatchBookmarks=true&timeoutSeconds=3",
                                     NULL, NULL, &r),
                     KUBE_OK);
    assert_int_equal(r.status, 200);
    assert_true(r.len > 1);
    r.body[r.len - 1] = '\0'; /* the last line's newline */
    last = strrchr(r.body, '\n') ? strrchr(r.body, '\n') + 1 : r.body;
    ev = cJSON_Parse(last);
    harness_response_free(&r);
    assert_string_equal(jstr(ev, "type"), "BOOKMARK");
    o = cJSON_GetObjectItem(ev, "object");
    assert_string_equal(jstr(o, "kind"), "VirtualMachinePin");
    assert_string_equal(jstr(o, "apiVersion"), "subresources.stickyvm.io/v1");
    assert_non_null(jstr(cJSON_GetObjectItem(o, "metadata"), "resourceVersion"));
    assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "metadata"), "name"));
    cJSON_Delete(ev);
    assert_int_equal(
        harness_request(F.h, NULL, "GET", PINS "?watch=true&timeoutSeconds=3", NULL, NULL, &r),
        KUBE_OK);
    assert_null(strstr(r.body, "BOOKMARK"));
    harness_response_free(&r);
}

/* From a list's resourceVersion: the changes after it, through the
 * selectors (a VM entering the selection is ADDED, one leaving DELETED). */
static void vmpins_watch_sends_changes(void **state)
{
    watch_call by_label, by_node;
    cJSON *list = NULL;
    char path1[512], path2[512], got[1024];
    const char *rv;
    (void)state;

    assert_int_equal(via_proxy(NULL, "GET", PINS, &list), 200);
    rv = jstr(cJSON_GetObjectItem(list, "metadata"), "resourceVersion");
    snprintf(path1, sizeof(path1),
             PINS "?watch=true&resourceVersion=%s&timeoutSeconds=4"
                  "&labelSelector=app%%3Dwatched",
             rv);
    snprintf(path2, sizeof(path2),
             PINS "?watch=true&resourceVersion=%s&timeoutSeconds=4"
                  "&fieldSelector=node%%3Dnode-2",
             rv);
    cJSON_Delete(list);
    watch_start(&by_label, path1, NULL);
    watch_start(&by_node, path2, NULL);
    sleep_ms(300);
    create_labelled_vm("vw-one", "watched", "");
    create_labelled_vm("vw-other", "other", "");
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vw-one/pin?node=node-2", NULL), 200);
    wait_pin_listed("vw-one", "node-2");
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vw-one/pin?node=node-1", NULL), 200);
    wait_pin_listed("vw-one", "node-1");
    delete_vm("vw-one");
    delete_vm("vw-other");
    watch_events(&by_label, "vw-", got, sizeof(got));
    assert_string_equal(got, "ADDED vw-one|MODIFIED vw-one@node-2|MODIFIED vw-one@node-1|"
                             "DELETED vw-one@node-1");
    watch_events(&by_node, "vw-", got, sizeof(got));
    assert_string_equal(got, "ADDED vw-one@node-2|DELETED vw-one@node-2");
}

/* A resourceVersion older than the history: one ERROR event (410 Expired)
 * and the end, at once. */
static void vmpins_watch_too_old_is_expired(void **state)
{
    harness_response r = {0};
    cJSON *ev;
    int64_t t0 = kube_now_ms();
    (void)state;

    assert_int_equal(harness_request(F.h, NULL, "GET",
                                     PINS "?watch=true&resourceVersion=1&timeoutSeconds=20", NULL,
                                     NULL, &r),
                     KUBE_OK);
    assert_int_equal(r.status, 200);
    assert_true(kube_now_ms() - t0 < 10000);
    ev = cJSON_Parse(r.body);
    harness_response_free(&r);
    assert_string_equal(jstr(ev, "type"), "ERROR");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "object"), "code")->valueint, 410);
    assert_string_equal(jstr(cJSON_GetObjectItem(ev, "object"), "reason"), "Expired");
    assert_non_null(strstr(jstr(cJSON_GetObjectItem(ev, "object"), "message"),
                           "too old resource version: 1 ("));
    cJSON_Delete(ev);
}

/* kubectl get -w: Table events, the columns in the first one only. */
static void vmpins_watch_tables(void **state)
{
    static const char *const accept[] = {TABLE_ACCEPT, NULL};
    watch_call w;
    char *save = NULL, *line;
    int i = 0;
    (void)state;

    watch_start(&w, PINS "?watch=true&timeoutSeconds=1", accept);
    pthread_join(w.thread, NULL);
    assert_int_equal(w.r.status, 200);
    assert_non_null(strstr(w.r.content_type, "as=Table"));
    for (line = strtok_r(w.r.body, "\n", &save); line; line = strtok_r(NULL, "\n", &save), i++) {
        cJSON *ev = cJSON_Parse(line), *t = cJSON_GetObjectItem(ev, "object");
        assert_string_equal(jstr(t, "kind"), "Table");
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(t, "rows")), 1);
        if (i == 0)
            assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(t, "columnDefinitions")), 8);
        else
            assert_true(cJSON_IsNull(cJSON_GetObjectItem(t, "columnDefinitions")));
        cJSON_Delete(ev);
    }
    assert_true(i >= 2);
    harness_response_free(&w.r);
}

/* The real kubectl, if there: a pin made once kubectl printed its list
 * (the watch follows from the list's version) shows before kubectl is
 * stopped (streamed by stickyvm-apiserver and the aggregator; buffered,
 * nothing would come before the end). */
static void vmpins_kubectl_get_w_streams(void **state)
{
    char cmd[1024];
    FILE *p;
    kube_buf out = KUBE_BUF_INIT;
    char line[512];
    int repinned = 0, pinned = 0;
    (void)state;

    if (!ek_have_kubectl())
        skip();
    snprintf(cmd, sizeof(cmd),
             "timeout 5 " EK_KUBECTL " --kubeconfig %s get vmpin -n default -w 2>&1",
             harness_kubeconfig(F.h));
    p = popen(cmd, "r");
    assert_non_null(p);
    while (fgets(line, sizeof(line), p)) {
        kube_buf_puts(&out, line);
        repinned |= pinned && !strncmp(line, "vp-web ", 7) && strstr(line, " node-5 ");
        if (!pinned && !strncmp(line, "vp-db ", 6)) { /* the list is out */
            assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-web/pin?node=node-5", NULL), 200);
            pinned = 1;
        }
    }
    pclose(p);
    if (!out.data || !strstr(out.data, "NAME") || !strstr(out.data, "vp-db") ||
        !strstr(out.data, "node-3") || !repinned)
        fail_msg("kubectl get vmpin -w printed: %s", out.data ? out.data : "");
    kube_buf_free(&out);
}

static void vmpins_are_authorized(void **state)
{
    cJSON *j = NULL;
    (void)state;

    /* alice may list and get in default, nowhere else; bob nothing */
    assert_int_equal(via_proxy(F.alice, "GET", PINS, NULL), 200);
    assert_int_equal(via_proxy(F.alice, "GET", PINS "/vp-db", NULL), 200);
    assert_int_equal(via_proxy(F.alice, "GET", GV "/virtualmachinepins", &j), 403);
    cJSON_Delete(j);
    assert_int_equal(via_proxy(F.bob, "GET", PINS, NULL), 403);
    /* stickyvm-apiserver's own review, the proxy's skipped */
    {
        static const char *const as_bob[] = {"X-Remote-User: bob", NULL};
        call c = {"GET", PINS, F.fp_cert, F.fp_key, as_bob, NULL};
        assert_int_equal(direct(&c, &j), 403);
        assert_string_equal(jstr(j, "message"),
                            "virtualmachinepins.subresources.stickyvm.io is forbidden: User "
                            "\"bob\" cannot list resource \"virtualmachinepins\" in API group "
                            "\"subresources.stickyvm.io\" in the namespace \"default\"");
        cJSON_Delete(j);
    }
    /* watch is its own verb: alice may list, not watch */
    assert_int_equal(via_proxy(F.alice, "GET", PINS "?watch=true&timeoutSeconds=1", &j), 403);
    assert_non_null(strstr(jstr(j, "message"), "cannot watch resource \"virtualmachinepins\""));
    cJSON_Delete(j);
}

/* The notes of the Events on VM name with reason, joined by '|'. */
static void event_notes(const char *name, const char *reason, char *out, size_t n)
{
    cJSON *j = NULL, *e;
    size_t used = 0;

    out[0] = '\0';
    via_proxy(NULL, "GET", "/apis/events.k8s.io/v1/namespaces/default/events", &j);
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "items"))
    {
        const char *reg = jstr(cJSON_GetObjectItem(e, "regarding"), "name");
        if (reg && !strcmp(reg, name) && jstr(e, "reason") && !strcmp(jstr(e, "reason"), reason))
            used += (size_t)snprintf(out + used, used < n ? n - used : 0, "%s|", jstr(e, "note"));
    }
    cJSON_Delete(j);
}

static void wait_event(const char *name, const char *reason, const char *fragment)
{
    char notes[2048];

    WAIT_TRUE_MS_MSG((event_notes(name, reason, notes, sizeof(notes)), strstr(notes, fragment)),
                     WAIT_MS, "no %s Event on %s with \"%s\" (notes: %s)", reason, name, fragment,
                     notes);
}

static void audits_pins_with_events(void **state)
{
    char notes[2048];
    (void)state;

    create_labelled_vm("vp-audit", "audit", "");
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-audit/pin?node=node-1", NULL), 200);
    wait_event("vp-audit", "Pinned", "Pinned to node node-1 by admin through the API");
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-audit/pin?node=node-2", NULL), 200);
    wait_event("vp-audit", "Repinned", "Pin moved from node node-1 to node node-2 by admin");
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-audit/unpin", NULL), 200);
    wait_event("vp-audit", "Unpinned", "Unpinned from node node-2 by admin");
    /* a request changing nothing records nothing: the Event of a later
     * change is queued after any it would have recorded, and the recorder
     * sends them in that order on its one connection */
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-audit/unpin", NULL), 200);
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-audit/pin?node=node-2", NULL), 200);
    wait_event("vp-audit", "Pinned", "Pinned to node node-2 by admin through the API");
    event_notes("vp-audit", "Unpinned", notes, sizeof(notes));
    assert_int_equal(strchr(notes, '|') - notes + 1, strlen(notes)); /* one note */
}

static void dry_run_writes_nothing(void **state)
{
    cJSON *j = NULL;
    const cJSON *ann;
    (void)state;

    create_labelled_vm("vp-dry", "dry", "");
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-dry/pin?node=node-4&dryRun=All", &j), 200);
    assert_string_equal(jstr(j, "node"), "node-4");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "previousNode")));
    assert_true(jbool(j, "changed"));
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "GET",
                               "/apis/kubevirt.io/v1/namespaces/default/virtualmachines/vp-dry",
                               &j),
                     200);
    ann = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "metadata"), "annotations");
    assert_null(jstr(ann, "stickyvm.io/node"));
    assert_null(jstr(ann, "stickyvm.io/pinned-at"));
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-dry/unpin?dryRun=All", &j), 200);
    assert_false(jbool(j, "changed"));
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-dry/pin?node=node-4&dryRun=true", &j), 400);
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-dry/pin?nodee=node-4", &j), 400);
    assert_non_null(strstr(jstr(j, "message"), "\"nodee\""));
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-dry/unpin?node=node-4", &j), 400);
    cJSON_Delete(j);
}

/* The pin annotation of VM name as the server holds it (NULL: none), into
 * out (size n). */
static const char *vm_annotation(const char *name, const char *key, char *out, size_t n)
{
    char path[256];
    cJSON *j = NULL;
    snprintf(path, sizeof(path), "/apis/kubevirt.io/v1/namespaces/default/virtualmachines/%s",
             name);
    assert_int_equal(via_proxy(NULL, "GET", path, &j), 200);
    const char *v =
        jstr(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "metadata"), "annotations"), key);
    snprintf(out, n, "%s", v ? v : "");
    cJSON_Delete(j);
    return v ? out : NULL;
}

/* The 409 of a failed ?from=: its message and its one cause (field from)
 * name the current pin ("" unpinned), and nothing was written. */
static void assert_moved_meanwhile(const char *path, const char *current)
{
    cJSON *j = NULL;
    char want[128], at[64] = "";
    vm_annotation("vp-from", "stickyvm.io/pinned-at", at, sizeof(at));
    assert_int_equal(via_proxy(NULL, "GET", path, &j), 409);
    assert_string_equal(jstr(j, "reason"), "Conflict");
    snprintf(want, sizeof(want), "the VM is %s%s, not", *current ? "pinned to node " : "unpinned",
             current);
    assert_non_null(strstr(jstr(j, "message"), want));
    const cJSON *causes = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "details"), "causes");
    assert_int_equal(cJSON_GetArraySize(causes), 1);
    assert_string_equal(jstr(cJSON_GetArrayItem(causes, 0), "field"), "from");
    assert_string_equal(jstr(cJSON_GetArrayItem(causes, 0), "message"), current);
    cJSON_Delete(j);
    char node[64], after[64] = "";
    assert_string_equal(
        vm_annotation("vp-from", "stickyvm.io/node", node, sizeof(node)) ? node : "", current);
    vm_annotation("vp-from", "stickyvm.io/pinned-at", after, sizeof(after));
    assert_string_equal(after, at); /* not written */
}

/* ?from=NODE moves only a VM pinned to NODE now, ?from= only an unpinned
 * one; otherwise a 409 names the current pin and nothing is written (a
 * dry run too). A decision records what it saw (seen-pods). */
static void from_is_a_precondition(void **state)
{
    cJSON *j = NULL;
    char v[256];
    (void)state;

    create_labelled_vm("vp-from", "from", "");
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-from/pin?node=node-0&from=", &j), 200);
    assert_true(jbool(j, "changed"));
    cJSON_Delete(j);
    assert_non_null(vm_annotation("vp-from", "stickyvm.io/seen-pods", v, sizeof(v)));
    assert_string_equal(v, ""); /* no VMI: it saw no pod bound */
    assert_moved_meanwhile(VMS "/vp-from/pin?node=node-1&from=", "node-0");
    assert_moved_meanwhile(VMS "/vp-from/pin?node=node-1&from=node-2", "node-0");
    assert_moved_meanwhile(VMS "/vp-from/pin?node=node-1&from=node-2&dryRun=All", "node-0");
    assert_moved_meanwhile(VMS "/vp-from/unpin?from=node-2", "node-0");
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-from/pin?node=node-1&from=node-0", &j), 200);
    assert_string_equal(jstr(j, "previousNode"), "node-0");
    assert_string_equal(jstr(j, "node"), "node-1");
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "PUT", VMS "/vp-from/unpin?from=node-1", &j), 200);
    assert_string_equal(jstr(j, "previousNode"), "node-1");
    cJSON_Delete(j);
    assert_moved_meanwhile(VMS "/vp-from/unpin?from=node-1", "");
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-from/pin?node=node-2&from=node-1", &j), 409);
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-from/pin?node=node-0&from=Bad_Node", &j), 400);
    assert_non_null(strstr(jstr(j, "message"), "query parameter from"));
    cJSON_Delete(j);
}

/* A PV local to node-1 bound to claim, for VM volumes to use. */
static void create_local_volume(const char *pv, const char *claim)
{
    char body[1024];

    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"%s\"},"
             "\"spec\":{\"capacity\":{\"storage\":\"1Gi\"},\"accessModes\":[\"ReadWriteOnce\"],"
             "\"local\":{\"path\":\"/mnt/disks/%s\"},\"claimRef\":{\"namespace\":\"default\","
             "\"name\":\"%s\"},\"nodeAffinity\":{\"required\":{\"nodeSelectorTerms\":[{"
             "\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\",\"operator\":\"In\","
             "\"values\":[\"node-1\"]}]}]}}}}",
             pv, pv, claim);
    create_json("/api/v1/persistentvolumes", body);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":"
             "\"%s\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":"
             "{\"storage\":\"1Gi\"}},\"volumeName\":\"%s\"}}",
             claim, pv);
    create_json("/api/v1/namespaces/default/persistentvolumeclaims", body);
}

static void local_volumes_refuse_other_nodes(void **state)
{
    cJSON *j = NULL;
    (void)state;

    create_local_volume("pv-local-1", "vp-local-data");
    create_labelled_vm("vp-local", "local",
                       "{\"name\":\"data\",\"dataVolume\":{\"name\":\"vp-local-data\"}}");
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-local/pin?node=node-2", &j), 409);
    assert_string_equal(jstr(j, "reason"), "Conflict");
    assert_non_null(strstr(jstr(j, "message"), "volume \"data\""));
    assert_non_null(strstr(jstr(j, "message"), "lives on node node-1"));
    cJSON_Delete(j);
    /* dryRun answers the same */
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-local/pin?node=node-2&dryRun=All", NULL), 409);
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-local/pin?node=node-1", NULL), 200);
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-local/pin?node=node-2&force=true", &j), 200);
    assert_string_equal(jstr(j, "node"), "node-2");
    cJSON_Delete(j);
    wait_event("vp-local", "Repinned",
               "from node node-1 to node node-2 by admin through the "
               "API (forced)");
}

/* A volume hotplugged into the running instance counts too (KubeVirt
 * #16945): found in the VMI's status.volumeStatus. */
static void hotplugged_volumes_refuse_other_nodes(void **state)
{
    static const char vmi[] =
        "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstance\",\"metadata\":"
        "{\"name\":\"vp-hot\"},\"spec\":{\"domain\":{\"devices\":{}}}}";
    static const char status[] =
        "{\"status\":{\"nodeName\":\"node-1\",\"phase\":\"Running\",\"volumeStatus\":[{\"name\":"
        "\"hp\",\"hotplugVolume\":{},\"persistentVolumeClaimInfo\":{\"claimName\":"
        "\"vp-hot-data\"}}]}}";
    harness_response r = {0};
    cJSON *j = NULL;
    (void)state;

    create_local_volume("pv-local-2", "vp-hot-data");
    create_labelled_vm("vp-hot", "hot", "");
    create_json("/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances", vmi);
    assert_int_equal(harness_request(F.h, NULL, "PATCH",
                                     "/apis/kubevirt.io/v1/namespaces/default/"
                                     "virtualmachineinstances/vp-hot/status",
                                     "application/merge-patch+json", status, &r),
                     KUBE_OK);
    assert_int_equal(r.status, 200);
    harness_response_free(&r);
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-hot/pin?node=node-2", &j), 409);
    assert_non_null(strstr(jstr(j, "message"),
                           "volume \"hp\" (PersistentVolumeClaim "
                           "\"vp-hot-data\", PersistentVolume \"pv-local-2\")"));
    cJSON_Delete(j);
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-hot/pin", &j), 200);
    assert_string_equal(jstr(j, "node"), "node-1");
    cJSON_Delete(j);
}

/* A pin of vm to node answered 409 whose cause names reason and whose
 * message has fragment and says force=true overrides. */
static void assert_target_refused(const char *vm, const char *node, const char *reason,
                                  const char *fragment)
{
    char path[256];
    cJSON *j = NULL;

    snprintf(path, sizeof(path), VMS "/%s/pin?node=%s", vm, node);
    assert_int_equal(via_proxy(NULL, "GET", path, &j), 409);
    assert_string_equal(jstr(j, "reason"), "Conflict");
    if (!strstr(jstr(j, "message"), fragment) || !strstr(jstr(j, "message"), "force=true"))
        fail_msg("409 of %s: %s", path, jstr(j, "message"));
    assert_string_equal(
        jstr(
            cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "details"), "causes"), 0),
            "reason"),
        reason);
    cJSON_Delete(j);
    /* a dry run answers the same */
    snprintf(path, sizeof(path), VMS "/%s/pin?node=%s&dryRun=All", vm, node);
    assert_int_equal(via_proxy(NULL, "GET", path, NULL), 409);
}

/* A node that cannot take the VM's next pod is refused with a 409 unless
 * force=true: cordoned, NotReady, Unknown, or a NoSchedule taint the
 * template does not tolerate (a VM that tolerates it may go). The node the
 * VM is already pinned to stays allowed. */
static void unfit_targets_are_refused(void **state)
{
    char body[1024];
    cJSON *j = NULL;
    (void)state;

    create_labelled_vm("vp-target", "target", "");
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\",\"metadata\":{"
             "\"name\":\"vp-tolerant\"},\"spec\":{\"running\":true,\"template\":{\"spec\":{"
             "\"domain\":{\"devices\":{}},\"tolerations\":[{\"key\":\"dedicated\","
             "\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]}}}}");
    create_json("/apis/kubevirt.io/v1/namespaces/default/virtualmachines", body);
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-target/pin?node=node-1", NULL), 200);

    request_ok("PATCH", "/api/v1/nodes/node-4", "application/merge-patch+json",
               "{\"spec\":{\"unschedulable\":true}}");
    assert_target_refused("vp-target", "node-4", "NodeUnschedulable",
                          "node node-4 is cordoned (SchedulingDisabled)");
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-target/pin?node=node-4&force=true", &j), 200);
    assert_string_equal(jstr(j, "node"), "node-4");
    cJSON_Delete(j);
    /* already pinned there: allowed, nothing changes */
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-target/pin?node=node-4", &j), 200);
    assert_false(jbool(j, "changed"));
    cJSON_Delete(j);
    request_ok("PATCH", "/api/v1/nodes/node-4", "application/merge-patch+json",
               "{\"spec\":{\"unschedulable\":false}}");
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-target/pin?node=node-1", NULL), 200);

    set_node_ready("node-4", "False");
    assert_target_refused("vp-target", "node-4", "NodeNotReady", "node node-4 is NotReady");
    set_node_ready("node-4", "Unknown");
    assert_target_refused("vp-target", "node-4", "NodeUnknown", "node node-4 is Unknown");
    set_node_ready("node-4", "True");

    request_ok("PATCH", "/api/v1/nodes/node-4", "application/merge-patch+json",
               "{\"spec\":{\"taints\":[{\"key\":\"dedicated\",\"value\":\"gpu\","
               "\"effect\":\"NoSchedule\"}]}}");
    assert_target_refused("vp-target", "node-4", "NodeTainted",
                          "node node-4 has the taint dedicated=gpu:NoSchedule, which the VM's "
                          "template does not tolerate");
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-tolerant/pin?node=node-4", NULL), 200);
    request_ok("PATCH", "/api/v1/nodes/node-4", "application/merge-patch+json",
               "{\"spec\":{\"taints\":null}}");
    assert_int_equal(via_proxy(NULL, "GET", VMS "/vp-target/pin?node=node-4", NULL), 200);
}

/* The readiness checks by name; then, from the stop (SIGTERM) on, /readyz
 * fails at once ("shutdown", k8s.io/apiserver's check) while the server
 * keeps answering new connections, /healthz and the API included, for
 * --shutdown-delay-duration; then it stops. */
static void readyz_fails_while_shutting_down(void **state)
{
    static const char *const admin[] = {"X-Remote-User: admin", "X-Remote-Group: system:masters",
                                        NULL};
    call discovery = {"GET", GV, F.fp_cert, F.fp_key, admin, NULL};
    kube_buf b = KUBE_BUF_INIT;
    (void)state;

    assert_int_equal(direct_text("/readyz?verbose", &b), 200);
    assert_string_equal(b.data, "[+]ping ok\n[+]informer-sync ok\n"
                                "[+]extension-apiserver-authentication ok\n[+]shutdown ok\n"
                                "readyz check passed\n");
    apis_app_stop(F.server.app);
    assert_int_equal(direct_text("/readyz", &b), 500);
    assert_non_null(strstr(b.data, "[-]shutdown failed: reason withheld\n"));
    assert_non_null(strstr(b.data, "readyz check failed\n"));
    assert_int_equal(direct_text("/readyz/shutdown", &b), 500);
    assert_string_equal(b.data, "internal server error: process is shutting down\n");
    assert_int_equal(direct_text("/healthz", &b), 200);
    assert_string_equal(b.data, "ok");
    assert_int_equal(direct(&discovery, NULL), 200);
    af_join(&F.server); /* the delay, then the drain */
    assert_int_equal(direct_text("/healthz", &b), 0);
    kube_buf_free(&b);
}

int test_group_apiserver_integration(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pins_and_unpins_through_the_proxy),
        cmocka_unit_test(repin_and_unpin_are_idempotent),
        cmocka_unit_test(answers_errors_with_status),
        cmocka_unit_test(serves_discovery_and_openapi),
        cmocka_unit_test(forged_headers_without_a_certificate_are_401),
        cmocka_unit_test(untrusted_proxy_certificates_are_401),
        cmocka_unit_test(client_certificates_ignore_front_proxy_headers),
        cmocka_unit_test(policy_denials_are_403),
        cmocka_unit_test(bearer_tokens_go_through_tokenreview),
        cmocka_unit_test(rejects_upgrades_and_bad_bodies),
        cmocka_unit_test(concurrent_pins_are_not_lost),
        cmocka_unit_test(follows_the_authentication_configmap),
        cmocka_unit_test(slow_upstreams_do_not_stall_other_clients),
        cmocka_unit_test(aggregator_verifies_the_ca_bundle),
        cmocka_unit_test(review_endpoints_answer_like_the_fixtures),
        cmocka_unit_test(exports_metrics),
        cmocka_unit_test(vmpins_list_get_and_select),
        cmocka_unit_test(vmpins_tables),
        cmocka_unit_test(vmpins_are_authorized),
        cmocka_unit_test(vmpins_watch_starts_with_the_state),
        cmocka_unit_test(vmpins_watch_bookmarks),
        cmocka_unit_test(vmpins_watch_sends_changes),
        cmocka_unit_test(vmpins_watch_too_old_is_expired),
        cmocka_unit_test(vmpins_watch_tables),
        cmocka_unit_test(vmpins_kubectl_get_w_streams),
        cmocka_unit_test(vmpins_show_the_node_status),
        cmocka_unit_test(audits_pins_with_events),
        cmocka_unit_test(dry_run_writes_nothing),
        cmocka_unit_test(from_is_a_precondition),
        cmocka_unit_test(local_volumes_refuse_other_nodes),
        cmocka_unit_test(hotplugged_volumes_refuse_other_nodes),
        cmocka_unit_test(unfit_targets_are_refused),
        cmocka_unit_test(readyz_fails_while_shutting_down), /* last: stops the server */
    };
    return cmocka_run_group_tests_name("apiserver_integration", tests, setup, teardown);
}
