/*
 * tests/unit/test_apiserver_misc.c - the supporting pieces of
 * stickyvm-apiserver: the TTL cache, metrics exposition, flags and
 * durations, serving certificates (generation, reload, broken files),
 * the authentication settings source (flag files, ConfigMap data), the
 * worker pool, and the delegated authorization rules and review bodies.
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
#include "apiserver/pin.h"
#include "apiserver/request.h"
#include "kube/util/log_testing.h"
#include "kube/serving/pool.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/serving/cache_testing.h"
#include "metrics_testing.h"
#include "kube/serving/authn_testing.h"

static int64_t fake_now;

static int64_t fake_clock(void)
{
    return fake_now;
}

static void cache_expires_and_evicts(void **state)
{
    kube_ttl_cache *c;
    char *v = NULL;
    (void)state;

    fake_now = 1000;
    assert_int_equal(kube_ttl_cache_new(3, &c), KUBE_OK);
    kube_ttl_cache_set_clock(c, fake_clock);
    assert_int_equal(kube_ttl_cache_put(c, "a", "1", 100), KUBE_OK);
    assert_int_equal(kube_ttl_cache_get(c, "a", &v), KUBE_OK);
    assert_string_equal(v, "1");
    free(v);
    assert_int_equal(kube_ttl_cache_put(c, "a", "2", 100), KUBE_OK);
    assert_int_equal(kube_ttl_cache_get(c, "a", &v), KUBE_OK);
    assert_string_equal(v, "2");
    free(v);
    fake_now = 1100;
    assert_int_equal(kube_ttl_cache_get(c, "a", &v), KUBE_ENOTFOUND);
    assert_null(v);
    assert_int_equal(kube_ttl_cache_put(c, "zero", "x", 0), KUBE_OK);
    assert_int_equal(kube_ttl_cache_get(c, "zero", &v), KUBE_ENOTFOUND);
    /* full: expired entries go first, then the one closest to expiry */
    assert_int_equal(kube_ttl_cache_put(c, "b", "b", 50), KUBE_OK);
    assert_int_equal(kube_ttl_cache_put(c, "c", "c", 500), KUBE_OK);
    assert_int_equal(kube_ttl_cache_put(c, "d", "d", 500), KUBE_OK);
    assert_true(kube_ttl_cache_size(c) <= 3);
    assert_int_equal(kube_ttl_cache_put(c, "e", "e", 500), KUBE_OK);
    assert_int_equal(kube_ttl_cache_size(c), 3);
    assert_int_equal(kube_ttl_cache_get(c, "b", &v), KUBE_ENOTFOUND);
    assert_int_equal(kube_ttl_cache_get(c, "e", &v), KUBE_OK);
    free(v);
    kube_ttl_cache_free(c);
}

static void metrics_render_prometheus_text(void **state)
{
    apis_metrics *m;
    kube_buf b = KUBE_BUF_INIT;
    (void)state;

    assert_int_equal(apis_metrics_new(&m), KUBE_OK);
    apis_metrics_observe(m, "PUT", "pin", 200, 0.003);
    apis_metrics_observe(m, "PUT", "pin", 200, 0.2);
    apis_metrics_observe(m, "BREW", "weird", 418, 0.001);
    apis_metrics_authz(m, KUBE_AUTHZ_CACHE_HIT);
    apis_metrics_conflict_retry(m);
    apis_metrics_inflight(m, 2);
    apis_metrics_inflight(m, -1);
    assert_int_equal(apis_metrics_requests_with_code(m, 200), 2);
    assert_int_equal(apis_metrics_authz_count(m, KUBE_AUTHZ_CACHE_HIT), 1);
    assert_int_equal(apis_metrics_render(m, &b), KUBE_OK);
    assert_non_null(strstr(b.data, "# TYPE stickyvm_apiserver_request_total counter\n"));
    assert_non_null(strstr(
        b.data,
        "stickyvm_apiserver_request_total{verb=\"PUT\",subresource=\"pin\",code=\"200\"} 2\n"));
    /* unknown labels fold into bounded values */
    assert_non_null(strstr(
        b.data,
        "stickyvm_apiserver_request_total{verb=\"other\",subresource=\"\",code=\"418\"} 1\n"));
    /* buckets are cumulative */
    assert_non_null(strstr(
        b.data, "duration_seconds_bucket{verb=\"PUT\",subresource=\"pin\",le=\"0.005\"} 1\n"));
    assert_non_null(strstr(
        b.data, "duration_seconds_bucket{verb=\"PUT\",subresource=\"pin\",le=\"0.25\"} 2\n"));
    assert_non_null(strstr(
        b.data, "duration_seconds_bucket{verb=\"PUT\",subresource=\"pin\",le=\"+Inf\"} 2\n"));
    assert_non_null(strstr(b.data, "duration_seconds_count{verb=\"PUT\",subresource=\"pin\"} 2\n"));
    assert_non_null(strstr(b.data, "stickyvm_apiserver_inflight_requests 1\n"));
    assert_non_null(strstr(b.data, "stickyvm_apiserver_pin_conflict_retries_total 1\n"));
    kube_buf_free(&b);
    apis_metrics_free(m);
}

/* Pin and unpin requests by user and code: the first
 * APIS_METRICS_MAX_USERS users keep their name, the rest fold into
 * "(other)", no identity is user="". */
static void metrics_count_pin_requests_by_bounded_user(void **state)
{
    apis_metrics *m;
    kube_buf b = KUBE_BUF_INIT;
    char user[32];
    (void)state;

    assert_int_equal(apis_metrics_new(&m), KUBE_OK);
    apis_metrics_pin_request(m, "pin", "admin", 200);
    apis_metrics_pin_request(m, "pin", "admin", 200);
    apis_metrics_pin_request(m, "unpin", "system:serviceaccount:ops:drainer", 403);
    apis_metrics_pin_request(m, "pin", NULL, 401);
    for (int i = 0; i < APIS_METRICS_MAX_USERS; i++) {
        snprintf(user, sizeof(user), "user-%d", i);
        apis_metrics_pin_request(m, "pin", user, 404);
    }
    apis_metrics_pin_request(m, "pin", "admin", 409);
    apis_metrics_pin_request(NULL, "pin", "admin", 200);
    assert_int_equal(apis_metrics_render(m, &b), KUBE_OK);
    assert_non_null(strstr(b.data, "# TYPE stickyvm_apiserver_pin_requests_total counter\n"));
    assert_non_null(strstr(b.data, "stickyvm_apiserver_pin_requests_total{subresource=\"pin\","
                                   "user=\"admin\",code=\"200\"} 2\n"));
    assert_non_null(strstr(b.data, "{subresource=\"unpin\",user=\"system:serviceaccount:ops:"
                                   "drainer\",code=\"403\"} 1\n"));
    assert_non_null(strstr(b.data, "{subresource=\"pin\",user=\"\",code=\"401\"} 1\n"));
    /* admin, the drainer and user-0 .. user-(MAX - 3) took the names; a
     * known user keeps its label after that */
    snprintf(user, sizeof(user), "user=\"user-%d\",code=\"404\"} 1\n", APIS_METRICS_MAX_USERS - 3);
    assert_non_null(strstr(b.data, user));
    snprintf(user, sizeof(user), "user=\"user-%d\"", APIS_METRICS_MAX_USERS - 2);
    assert_null(strstr(b.data, user));
    assert_non_null(strstr(b.data, "{subresource=\"pin\",user=\"(other)\",code=\"404\"} 2\n"));
    assert_non_null(strstr(b.data, "{subresource=\"pin\",user=\"admin\",code=\"409\"} 1\n"));
    kube_buf_free(&b);
    apis_metrics_free(m);
}

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

/* Duration flags use kube/duration (Go syntax) and refuse negative values. */
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

static void make_tmp(char *dir, size_t n)
{
    snprintf(dir, n, "/tmp/apis-misc-XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static void remove_tree(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void bump_mtime(const char *path)
{
    struct stat st;
    struct timespec times[2];

    assert_int_equal(stat(path, &st), 0);
    times[0] = st.st_atim;
    times[1] = st.st_mtim;
    times[1].tv_sec += 10;
    assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
}

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

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static char *file_text(const char *path)
{
    char *t = NULL;
    size_t n;
    assert_int_equal(kube_read_file(path, &t, &n), KUBE_OK);
    return t;
}

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

static atomic_int jobs_run;

static void job(void *arg)
{
    (void)arg;
    atomic_fetch_add(&jobs_run, 1);
}

static void pool_runs_every_job(void **state)
{
    kube_pool *p;
    kube_pool *none;
    (void)state;

    atomic_store(&jobs_run, 0);
    assert_int_equal(kube_pool_new(0, &none), KUBE_EINVAL);
    assert_int_equal(kube_pool_new(4, &p), KUBE_OK);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(kube_pool_submit(p, job, NULL), KUBE_OK);
    kube_pool_free(p);
    assert_int_equal(atomic_load(&jobs_run), 1000);
}

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

/* The log line of a pin request whose target parsed into a route. */
static char *pin_log_line(const char *target, int code)
{
    apis_route r;
    char msg[256], *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    assert_non_null(f);
    assert_int_equal(apis_route_parse(target, &r, msg, sizeof(msg)), KUBE_OK);
    klog_testing_set_output(f);
    apis_pin_log(&r, "admin", code, 0.001);
    klog_testing_set_output(NULL);
    fclose(f);
    apis_route_free(&r);
    return text;
}

/* A refused ?node= is logged as asked for, quoted as Go's %q and cut; a
 * valid one as it is (it used to log "node=: 422"). */
static void pin_log_quotes_a_refused_node(void **state)
{
    static const char vm[] = "/apis/subresources.stickyvm.io/v1/namespaces/demo/"
                             "virtualmachines/vm-web/pin?node=";
    char target[600], *line;
    (void)state;

    snprintf(target, sizeof(target), "%sa%%20b%%22c", vm);
    line = pin_log_line(target, 422);
    assert_non_null(strstr(line, "pin demo/vm-web user=admin node=\"a b\\\"c\": 422"));
    free(line);
    snprintf(target, sizeof(target), "%snode-2&dryRun=All", vm);
    line = pin_log_line(target, 200);
    assert_non_null(strstr(line, "user=admin node=node-2 dryRun=All: 200"));
    free(line);
    snprintf(target, sizeof(target), "%s%0300d", vm, 0); /* too long */
    line = pin_log_line(target, 422);
    assert_non_null(strstr(line, " node=\"0000000000000000000000000000000000000000000000000000000"
                                 "000000000\"...: 422"));
    free(line);
    snprintf(target, sizeof(target), "%s", vm); /* ?node= empty */
    line = pin_log_line(target, 422);
    assert_non_null(strstr(line, " node=\"\": 422"));
    free(line);
}

/* kube_quote: Go's %q for ASCII, cut after max bytes with "...". */
static void quotes_as_go_does(void **state)
{
    char q[64];
    (void)state;

    assert_string_equal(kube_quote(q, sizeof(q), "vm-web\x01", 80), "\"vm-web\\x01\"");
    assert_string_equal(kube_quote(q, sizeof(q), "a\"b\\c\n\t\x7f", 80),
                        "\"a\\\"b\\\\c\\n\\t\\x7f\"");
    assert_string_equal(kube_quote(q, sizeof(q), "abcdef", 3), "\"abc\"...");
    assert_string_equal(kube_quote(q, sizeof(q), "", 3), "\"\"");
    assert_string_equal(kube_quote(q, 12, "abcdefghijkl", 80), "\"abcdef\"...");
}

int test_group_apiserver_misc(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cache_expires_and_evicts),
        cmocka_unit_test(metrics_render_prometheus_text),
        cmocka_unit_test(metrics_count_pin_requests_by_bounded_user),
        cmocka_unit_test(parses_flags),
        cmocka_unit_test(rejects_bad_flags),
        cmocka_unit_test(parses_connection_flags),
        cmocka_unit_test(parses_durations),
        cmocka_unit_test(generates_and_reloads_serving_certificates),
        cmocka_unit_test(authentication_settings_follow_files_and_configmap),
        cmocka_unit_test(pool_runs_every_job),
        cmocka_unit_test(builds_reviews_like_the_fixtures),
        cmocka_unit_test(always_allow_rules),
        cmocka_unit_test(pin_log_quotes_a_refused_node),
        cmocka_unit_test(quotes_as_go_does),
    };
    return cmocka_run_group_tests_name("apiserver_misc", tests, NULL, NULL);
}
