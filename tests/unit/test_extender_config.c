/*
 * tests/unit/test_extender_config.c - the `extenders` of a
 * KubeSchedulerConfiguration: every field decoded (tlsConfig's []byte
 * fields from base64), kube-scheduler's validateExtenders errors naming the
 * file and field, unknown fields, ignoredByScheduler resources handed to
 * NodeResourcesFit's ignoredResources (buildExtenders), and the YAML round
 * trip of --write-config-to.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "extender.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "plugins/registry.h"
#include "unit/test_plugin_util.h"

#define HEADER "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

static sched_config *load_ok(const char *yaml)
{
    sched_config *cfg = NULL;
    char err[512] = "";

    if (tp_config_load(yaml, "sched.yaml", plugin_registry_in_tree(), &cfg, err, sizeof(err)) !=
        KUBE_OK)
        fail_msg("load failed: %s", err);
    return cfg;
}

static void load_err(const char *yaml, const char *want)
{
    sched_config *cfg = NULL;
    char err[512] = "";
    int rc = tp_config_load(yaml, "sched.yaml", plugin_registry_in_tree(), &cfg, err, sizeof(err));

    assert_null(cfg);
    assert_int_equal(rc, KUBE_ECONFIG);
    if (strcmp(err, want) != 0)
        fail_msg("error\n  got:  %s\n  want: %s", err, want);
}

static const char full[] = HEADER "extenders:\n"
                                  "- urlPrefix: https://gpu.example:8443/scheduler/\n"
                                  "  filterVerb: filter\n"
                                  "  preemptVerb: preempt\n"
                                  "  prioritizeVerb: prioritize\n"
                                  "  bindVerb: bind\n"
                                  "  weight: 5\n"
                                  "  enableHTTPS: true\n"
                                  "  tlsConfig:\n"
                                  "    insecure: false\n"
                                  "    serverName: gpu.internal\n"
                                  "    certFile: /etc/ext/tls.crt\n"
                                  "    keyFile: /etc/ext/tls.key\n"
                                  "    caFile: /etc/ext/ca.crt\n"
                                  "    certData: YWJj\n"
                                  "    keyData: a2V5\n"
                                  "    caData: Y2E=\n"
                                  "  httpTimeout: 30s\n"
                                  "  nodeCacheCapable: true\n"
                                  "  managedResources:\n"
                                  "  - name: example.com/gpu\n"
                                  "    ignoredByScheduler: true\n"
                                  "  - name: example.com/fpga\n"
                                  "  ignorable: true\n"
                                  "- urlPrefix: http://127.0.0.1:8888\n";

static void decodes_every_field(void **state)
{
    (void)state;
    sched_config *cfg = load_ok(full);
    const sched_extender_config *e = &cfg->extenders[0];

    assert_int_equal(cfg->n_extenders, 2);
    assert_string_equal(e->url_prefix, "https://gpu.example:8443/scheduler/");
    assert_string_equal(e->filter_verb, "filter");
    assert_string_equal(e->preempt_verb, "preempt");
    assert_string_equal(e->prioritize_verb, "prioritize");
    assert_string_equal(e->bind_verb, "bind");
    assert_int_equal(e->weight, 5);
    assert_true(e->enable_https);
    assert_non_null(e->tls);
    assert_false(e->tls->insecure);
    assert_string_equal(e->tls->server_name, "gpu.internal");
    assert_string_equal(e->tls->cert_file, "/etc/ext/tls.crt");
    assert_string_equal(e->tls->key_file, "/etc/ext/tls.key");
    assert_string_equal(e->tls->ca_file, "/etc/ext/ca.crt");
    assert_int_equal(e->tls->cert_len, 3);
    assert_string_equal(e->tls->cert_data, "abc");
    assert_string_equal(e->tls->key_data, "key");
    assert_string_equal(e->tls->ca_data, "ca");
    assert_int_equal(e->http_timeout_ms, 30000);
    assert_true(e->node_cache_capable);
    assert_int_equal(e->n_managed_resources, 2);
    assert_string_equal(e->managed_resources[0].name, "example.com/gpu");
    assert_true(e->managed_resources[0].ignored_by_scheduler);
    assert_false(e->managed_resources[1].ignored_by_scheduler);
    assert_true(e->ignorable);
    /* the second one: everything unset */
    e = &cfg->extenders[1];
    assert_string_equal(e->filter_verb, "");
    assert_string_equal(e->bind_verb, "");
    assert_null(e->tls);
    assert_int_equal(e->http_timeout_ms, 0);
    assert_false(e->ignorable);
    sched_config_free(cfg);
}

/* buildExtenders: NodeResourcesFitArgs.ignoredResources of every profile
 * become the managed resources ignoredByScheduler (replacing any given). */
static void ignored_resources_go_to_fit(void **state)
{
    (void)state;
    sched_config *cfg = load_ok(HEADER "profiles:\n"
                                       "- schedulerName: a\n"
                                       "- schedulerName: b\n"
                                       "  pluginConfig:\n"
                                       "  - name: NodeResourcesFit\n"
                                       "    args:\n"
                                       "      ignoredResources: [other.com/x]\n"
                                       "extenders:\n"
                                       "- urlPrefix: http://e\n"
                                       "  managedResources:\n"
                                       "  - name: example.com/gpu\n"
                                       "    ignoredByScheduler: true\n"
                                       "  - name: example.com/nic\n");

    for (size_t i = 0; i < cfg->n_profiles; i++) {
        const cJSON *args = sched_profile_args(&cfg->profiles[i], "NodeResourcesFit");
        const cJSON *ign = cJSON_GetObjectItemCaseSensitive(args, "ignoredResources");
        char *text = cJSON_PrintUnformatted(ign);
        assert_string_equal(text, "[\"example.com/gpu\"]");
        free(text);
        /* resolving defaulted the rest of the args */
        assert_non_null(cJSON_GetObjectItemCaseSensitive(args, "scoringStrategy"));
    }
    sched_config_free(cfg);
    load_err(HEADER "profiles:\n- plugins:\n    multiPoint:\n      disabled:\n"
                    "      - name: NodeResourcesFit\n"
                    "extenders:\n- urlPrefix: http://e\n  managedResources:\n"
                    "  - name: example.com/gpu\n    ignoredByScheduler: true\n",
             "sched.yaml: profiles[0].pluginConfig: can't find NodeResourcesFitArgs in plugin "
             "config (an extender's managed resource is ignoredByScheduler)");
}

static void validation_errors(void **state)
{
    (void)state;
    load_err(HEADER "extenders:\n- urlPrefix: http://e\n  prioritizeVerb: p\n",
             "sched.yaml: extenders[0].weight: must have a positive weight applied to it, got 0");
    load_err(HEADER "extenders:\n- urlPrefix: http://e\n- urlPrefix: http://f\n"
                    "  prioritizeVerb: p\n  weight: -2\n",
             "sched.yaml: extenders[1].weight: must have a positive weight applied to it, got -2");
    load_err(HEADER "extenders:\n- urlPrefix: http://e\n  bindVerb: b\n"
                    "- urlPrefix: http://f\n  bindVerb: b\n",
             "sched.yaml: extenders: found 2 extenders implementing bind: only one extender can "
             "implement bind");
    load_err(HEADER "extenders:\n- urlPrefix: http://e\n  managedResources:\n  - name: cpu\n",
             "sched.yaml: extenders[0].managedResources[0].name: invalid value \"cpu\": is an "
             "invalid extended resource name");
    load_err(HEADER "extenders:\n- urlPrefix: http://e\n  managedResources:\n"
                    "  - name: kubernetes.io/gpu\n",
             "sched.yaml: extenders[0].managedResources[0].name: invalid value "
             "\"kubernetes.io/gpu\": is an invalid extended resource name");
    load_err(HEADER "extenders:\n- urlPrefix: http://e\n  managedResources:\n"
                    "  - name: example.com/a\n"
                    "- urlPrefix: http://f\n  managedResources:\n  - name: example.com/a\n",
             "sched.yaml: extenders[1].managedResources[0].name: invalid value \"example.com/a\": "
             "duplicate extender managed resource name");
    load_err(HEADER "extenders:\n- urlPrefix: http://e\n  managedResources:\n  - name: a/b/c\n",
             "sched.yaml: extenders[0].managedResources[0].name: invalid value \"a/b/c\": a "
             "qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
             "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
             "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
             "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
}

static void decoding_errors(void **state)
{
    (void)state;
    load_err(HEADER "extenders:\n- urlPrefix: http://e\n  filterverb: f\n",
             "sched.yaml: extenders[0].filterverb: unknown field \"filterverb\"");
    load_err(HEADER "extenders:\n- urlPrefix: http://e\n  tlsConfig:\n    caFil: x\n",
             "sched.yaml: extenders[0].tlsConfig.caFil: unknown field \"caFil\"");
    load_err(HEADER "extenders:\n- urlPrefix: http://e\n  tlsConfig:\n    caData: '%%%'\n",
             "sched.yaml: extenders[0].tlsConfig.caData: illegal base64 data");
    load_err(HEADER "extenders:\n- urlPrefix: http://e\n  weight: heavy\n",
             "sched.yaml: extenders[0].weight: expected an integer, got string");
    load_err(HEADER "extenders:\n- urlPrefix: http://e\n  httpTimeout: 5\n",
             "sched.yaml: extenders[0].httpTimeout: expected a duration string such as \"15s\", "
             "got number");
    load_err(HEADER "extenders:\n- urlPrefix: http://e\n  ignorable: maybe\n",
             "sched.yaml: extenders[0].ignorable: expected a boolean, got string");
    load_err(HEADER "extenders:\n- urlPrefix: http://e\n  managedResources:\n"
                    "  - name: example.com/a\n    ignored: true\n",
             "sched.yaml: extenders[0].managedResources[0].ignored: unknown field \"ignored\"");
    load_err(HEADER "extenders:\n  urlPrefix: http://e\n",
             "sched.yaml: extenders: expected an array, got object");
}

static void write_and_reload(void **state)
{
    (void)state;
    sched_config *cfg = load_ok(full), *again;
    kube_buf a = KUBE_BUF_INIT, b = KUBE_BUF_INIT;

    assert_int_equal(sched_config_write_yaml(cfg, &a), KUBE_OK);
    assert_non_null(strstr(a.data, "\nextenders:\n- bindVerb: bind\n"));
    assert_non_null(strstr(a.data, "    certData: YWJj\n"));
    assert_non_null(strstr(a.data, "  httpTimeout: 30s\n"));
    assert_non_null(strstr(a.data, "- httpTimeout: 0s\n  urlPrefix: http://127.0.0.1:8888\n"));
    assert_non_null(strstr(a.data, "  - ignoredByScheduler: true\n    name: example.com/gpu\n"));
    again = load_ok(a.data);
    assert_int_equal(sched_config_write_yaml(again, &b), KUBE_OK);
    assert_string_equal(a.data, b.data);
    assert_int_equal(again->n_extenders, 2);
    assert_string_equal(again->extenders[0].tls->key_data, "key");
    /* /configz's JSON carries everything but the private key */
    cJSON *j = sched_config_to_json(cfg);
    cJSON *tls = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "extenders"), 0),
                                     "tlsConfig");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(tls, "certData")), "YWJj");
    assert_null(cJSON_GetObjectItem(tls, "keyData"));
    cJSON_Delete(j);
    kube_buf_free(&a);
    kube_buf_free(&b);
    sched_config_free(cfg);
    sched_config_free(again);
    /* none: no `extenders` key */
    cfg = load_ok(HEADER "extenders: []\n");
    assert_int_equal(cfg->n_extenders, 0);
    assert_int_equal(sched_config_write_yaml(cfg, &a), KUBE_OK);
    assert_null(strstr(a.data, "extenders"));
    kube_buf_free(&a);
    sched_config_free(cfg);
}

/* sched_extenders_new on a one-extender file whose extender is body;
 * err receives the message. */
static int build(const char *body, char *err, size_t errlen)
{
    char yaml[1024];
    sched_config *cfg;
    sched_extenders *x = NULL;
    int rc;

    snprintf(yaml, sizeof(yaml), HEADER "extenders:\n- %s", body);
    cfg = load_ok(yaml);
    err[0] = '\0';
    rc = sched_extenders_new(cfg, NULL, NULL, &x, err, errlen);
    assert_true(rc == KUBE_OK ? x != NULL : x == NULL);
    sched_extenders_free(x);
    sched_config_free(cfg);
    return rc;
}

static void build_err(const char *body, const char *want_prefix)
{
    char err[512];
    int rc = build(body, err, sizeof(err));

    assert_true(rc == KUBE_ECONFIG || rc == KUBE_EIO); /* EIO: a file that cannot be read */
    if (strncmp(err, want_prefix, strlen(want_prefix)) != 0)
        fail_msg("error\n  got:  %s\n  want: %s...", err, want_prefix);
}

/* NewHTTPExtender's checks when the scheduler starts: the URL and the
 * TLS material (client-go's TLSClientConfig rules). */
static void construction_errors(void **state)
{
    char err[512];
    sched_config *cfg = load_ok(HEADER);
    sched_extenders *x = (sched_extenders *)1;

    (void)state;
    assert_int_equal(sched_extenders_new(cfg, NULL, NULL, &x, err, sizeof(err)), KUBE_OK);
    assert_null(x); /* none configured: nothing to call, nothing built */
    sched_config_free(cfg);
    assert_int_equal(
        build("urlPrefix: http://127.0.0.1:1/ext/\n  enableHTTPS: true\n", err, sizeof(err)),
        KUBE_OK);
    build_err("urlPrefix: ftp://127.0.0.1\n",
              "sched.yaml: extenders[0].urlPrefix: invalid URL \"ftp://127.0.0.1\": want "
              "http(s)://host[:port][/path]");
    build_err("urlPrefix: ''\n", "sched.yaml: extenders[0].urlPrefix: invalid URL \"\"");
    build_err("urlPrefix: https://e\n  tlsConfig:\n    caFile: /nonexistent/ca.crt\n",
              "sched.yaml: extenders[0].tlsConfig: caFile: reading /nonexistent/ca.crt: No such "
              "file or directory");
    build_err("urlPrefix: https://e\n  tlsConfig:\n    insecure: true\n    caData: YWJj\n",
              "sched.yaml: extenders[0].tlsConfig: insecure: specifying a root certificates file "
              "with the insecure flag is not allowed");
    build_err("urlPrefix: https://e\n  tlsConfig:\n    caData: YWJj\n",
              "sched.yaml: extenders[0].tlsConfig: caData: no valid PEM certificate");
    build_err("urlPrefix: https://e\n  tlsConfig:\n    certData: YWJj\n",
              "sched.yaml: extenders[0].tlsConfig: keyFile: a client certificate needs its key");
}

int test_group_extender_config(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decodes_every_field), cmocka_unit_test(ignored_resources_go_to_fit),
        cmocka_unit_test(validation_errors),   cmocka_unit_test(decoding_errors),
        cmocka_unit_test(write_and_reload),    cmocka_unit_test(construction_errors),
    };
    return cmocka_run_group_tests_name("extender_config", tests, NULL, NULL);
}
