/*
 * tests/unit/test_sched_config.c - KubeSchedulerConfiguration loading:
 * kube-scheduler v1.28 defaults, v1/v1beta3 default plugins (all of them
 * in the built-in registry), plugin-set merging, errors naming file and field, durations, YAML
 * round trip.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "config/config_testing.h"
#include "unit/test_plugin_util.h"
#include "plugins/registry.h"
#include "framework/framework.h"
#include "framework/framework_testing.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"

/* ------------------------------------------------------------------ */
/* A registry holding every kube-scheduler plugin name, with args      */
/* hooks that default like kube-scheduler's defaults.go.               */
/* ------------------------------------------------------------------ */

static int overlay_defaults(const cJSON *in, cJSON **out, const char *defaults)
{
    *out = cJSON_Parse(defaults);
    if (!*out)
        return KUBE_ENOMEM;
    for (const cJSON *c = in ? in->child : NULL; c; c = c->next) {
        cJSON_DeleteItemFromObjectCaseSensitive(*out, c->string);
        cJSON_AddItemToObject(*out, c->string, cJSON_Duplicate(c, 1));
    }
    return KUBE_OK;
}

static int fit_args(const cJSON *in, cJSON **out, char *err, size_t errlen)
{
    const cJSON *ss = in ? cJSON_GetObjectItemCaseSensitive(in, "scoringStrategy") : NULL;
    const cJSON *type = ss ? cJSON_GetObjectItemCaseSensitive(ss, "type") : NULL;
    if (type && (!cJSON_IsString(type) || (strcmp(type->valuestring, "LeastAllocated") &&
                                           strcmp(type->valuestring, "MostAllocated")))) {
        snprintf(err, errlen, "scoringStrategy.type: unsupported value \"%s\"",
                 cJSON_IsString(type) ? type->valuestring : "?");
        *out = NULL;
        return KUBE_ECONFIG;
    }
    return overlay_defaults(
        in, out,
        "{\"scoringStrategy\":{\"type\":\"LeastAllocated\",\"resources\":"
        "[{\"name\":\"cpu\",\"weight\":1},{\"name\":\"memory\",\"weight\":1}]}}");
}

#define ARGS_HOOK(fn, json)                                               \
    static int fn(const cJSON *in, cJSON **out, char *err, size_t errlen) \
    {                                                                     \
        return overlay_defaults(in, out, json);                           \
    }
ARGS_HOOK(preemption_args, "{\"minCandidateNodesPercentage\":10,\"minCandidateNodesAbsolute\":100}")
ARGS_HOOK(ipa_args, "{\"hardPodAffinityWeight\":1}")
ARGS_HOOK(node_affinity_args, "{}")
ARGS_HOOK(balanced_args, "{\"resources\":[{\"name\":\"cpu\",\"weight\":1},{\"name\":\"memory\","
                         "\"weight\":1}]}")
ARGS_HOOK(spread_args, "{\"defaultingType\":\"System\"}")
ARGS_HOOK(volume_binding_args, "{\"bindTimeoutSeconds\":600}")

static int fake_create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                       size_t errlen)
{
    *self = NULL;
    return KUBE_OK;
}

static int less_prio(void *self, const fw_queued_pod_info *a, const fw_queued_pod_info *b)
{
    return 0;
}

static fw_status *bind_ok(void *self, fw_cycle_state *cs, const fw_pod_info *pod, const char *node)
{
    return NULL;
}

static fw_status *filter_ok(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                            const fw_node_info *ni)
{
    return NULL;
}

static fw_status *enqueue_ok(void *self, const fw_pod_info *pod)
{
    return NULL;
}

static fw_status *score_ok(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                           const fw_node_info *ni, int64_t *score)
{
    *score = 0;
    return NULL;
}

#define PLUGIN(var, nm, ...) \
    static const fw_plugin_desc var = {.name = nm, .create = fake_create, __VA_ARGS__};
PLUGIN(p_sort, "PrioritySort", .less = less_prio)
PLUGIN(p_binder, "DefaultBinder", .bind = bind_ok)
PLUGIN(p_unsched, "NodeUnschedulable", .filter = filter_ok)
PLUGIN(p_nodename, "NodeName", .filter = filter_ok)
PLUGIN(p_taint, "TaintToleration", .filter = filter_ok, .score = score_ok)
PLUGIN(p_affinity, "NodeAffinity", .filter = filter_ok, .score = score_ok,
       .default_args = node_affinity_args)
PLUGIN(p_ports, "NodePorts", .filter = filter_ok)
PLUGIN(p_fit, "NodeResourcesFit", .filter = filter_ok, .score = score_ok, .default_args = fit_args)
PLUGIN(p_vr, "VolumeRestrictions", .filter = filter_ok)
PLUGIN(p_ebs, "EBSLimits", .filter = filter_ok)
PLUGIN(p_gce, "GCEPDLimits", .filter = filter_ok)
PLUGIN(p_nvl, "NodeVolumeLimits", .filter = filter_ok)
PLUGIN(p_azure, "AzureDiskLimits", .filter = filter_ok)
PLUGIN(p_vb, "VolumeBinding", .filter = filter_ok, .default_args = volume_binding_args)
PLUGIN(p_vz, "VolumeZone", .filter = filter_ok)
PLUGIN(p_pts, "PodTopologySpread", .filter = filter_ok, .score = score_ok,
       .default_args = spread_args)
PLUGIN(p_ipa, "InterPodAffinity", .filter = filter_ok, .score = score_ok, .default_args = ipa_args)
PLUGIN(p_preempt, "DefaultPreemption", .default_args = preemption_args)
PLUGIN(p_balanced, "NodeResourcesBalancedAllocation", .score = score_ok,
       .default_args = balanced_args)
PLUGIN(p_image, "ImageLocality", .score = score_ok)
PLUGIN(p_gates, "SchedulingGates", .pre_enqueue = enqueue_ok)
PLUGIN(p_custom, "StickyVM", .filter = filter_ok)

static const fw_plugin_desc *const all_list[] = {
    &p_sort, &p_binder,  &p_unsched,  &p_nodename, &p_taint, &p_affinity, &p_ports, &p_fit,
    &p_vr,   &p_ebs,     &p_gce,      &p_nvl,      &p_azure, &p_vb,       &p_vz,    &p_pts,
    &p_ipa,  &p_preempt, &p_balanced, &p_image,    &p_gates, &p_custom,
};
static const fw_registry all_registry = {all_list, sizeof(all_list) / sizeof(all_list[0]), NULL};

/* Lacks PodTopologySpread and the volume plugins. */
static const fw_plugin_desc *const some_list[] = {&p_sort, &p_binder, &p_fit, &p_taint, &p_custom};
static const fw_registry some_registry = {some_list, sizeof(some_list) / sizeof(some_list[0]),
                                          NULL};

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

#define HEADER "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

static sched_config *load_ok(const char *yaml, const fw_registry *reg)
{
    sched_config *cfg = NULL;
    char err[512] = "";
    int rc = tp_config_load(yaml, "sched.yaml", reg, &cfg, err, sizeof(err));
    if (rc != KUBE_OK)
        fail_msg("load failed (%d): %s", rc, err);
    return cfg;
}

static void load_err(const char *yaml, const fw_registry *reg, int want_rc, const char *want)
{
    sched_config *cfg = NULL;
    char err[512] = "";
    int rc = tp_config_load(yaml, "sched.yaml", reg, &cfg, err, sizeof(err));
    assert_null(cfg);
    assert_int_equal(rc, want_rc);
    if (strcmp(err, want) != 0)
        fail_msg("error\n  got:  %s\n  want: %s", err, want);
}

static void names_of(const sched_plugin_set *s, int disabled, char *out, size_t n)
{
    const sched_plugin *l = disabled ? s->disabled : s->enabled;
    size_t cnt = disabled ? s->n_disabled : s->n_enabled;
    out[0] = '\0';
    for (size_t i = 0; i < cnt; i++) {
        size_t len = strlen(out);
        if (l[i].weight)
            snprintf(out + len, n - len, "%s%s:%d", i ? "," : "", l[i].name, l[i].weight);
        else
            snprintf(out + len, n - len, "%s%s", i ? "," : "", l[i].name);
    }
}

static void expect_set(const sched_plugin_set *s, int disabled, const char *want)
{
    char got[1024];
    names_of(s, disabled, got, sizeof(got));
    assert_string_equal(got, want);
}

#define KUBE_DEFAULT_MULTIPOINT                                                           \
    "PrioritySort,NodeUnschedulable,NodeName,TaintToleration:3,NodeAffinity:2,NodePorts," \
    "NodeResourcesFit:1,VolumeRestrictions,EBSLimits,GCEPDLimits,NodeVolumeLimits,"       \
    "AzureDiskLimits,VolumeBinding,VolumeZone,PodTopologySpread:2,InterPodAffinity:2,"    \
    "DefaultPreemption,NodeResourcesBalancedAllocation:1,ImageLocality:1,DefaultBinder,"  \
    "SchedulingGates"

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

/* The defaulted configuration kube-scheduler v1.28 writes with
 * --write-config-to, except resourceName (ours) and contentType (JSON). */
static void defaults_match_kube(void **state)
{
    (void)state;
    sched_config *cfg = NULL;
    assert_int_equal(tp_config_load(NULL, NULL, &all_registry, &cfg, NULL, 0), KUBE_OK);
    assert_string_equal(cfg->api_version, SCHED_API_V1);
    assert_int_equal(cfg->parallelism, 16);
    assert_int_equal(cfg->percentage_of_nodes_to_score, 0);
    assert_int_equal(cfg->pod_initial_backoff_seconds, 1);
    assert_int_equal(cfg->pod_max_backoff_seconds, 10);
    assert_true(cfg->enable_profiling);
    assert_true(cfg->enable_contention_profiling);
    assert_true(cfg->client_connection.qps == 50.0);
    assert_int_equal(cfg->client_connection.burst, 100);
    assert_string_equal(cfg->client_connection.content_type, "application/json");
    assert_string_equal(cfg->client_connection.kubeconfig, "");
    const sched_leader_election *le = &cfg->leader_election;
    assert_true(le->leader_elect);
    assert_int_equal(le->lease_duration_ms, 15000);
    assert_int_equal(le->renew_deadline_ms, 10000);
    assert_int_equal(le->retry_period_ms, 2000);
    assert_string_equal(le->resource_lock, "leases");
    assert_string_equal(le->resource_name, "stickyvm-scheduler");
    assert_string_equal(le->resource_namespace, "kube-system");
    assert_int_equal(cfg->n_profiles, 1);
    const sched_profile *p = &cfg->profiles[0];
    assert_string_equal(p->scheduler_name, "default-scheduler");
    assert_false(p->has_percentage);
    expect_set(&p->plugins[SCHED_EP_MULTI_POINT], 0, KUBE_DEFAULT_MULTIPOINT);
    for (int e = 0; e < SCHED_EP_MULTI_POINT; e++) {
        assert_int_equal(p->plugins[e].n_enabled, 0);
        assert_int_equal(p->plugins[e].n_disabled, 0);
    }
    /* pluginConfig: every default plugin with args, sorted by name. */
    const char *want[] = {
        "DefaultPreemption", "InterPodAffinity",  "NodeAffinity", "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",  "PodTopologySpread", "VolumeBinding"};
    assert_int_equal(p->n_plugin_config, 7);
    for (size_t i = 0; i < 7; i++)
        assert_string_equal(p->plugin_config[i].name, want[i]);
    const cJSON *fit = sched_profile_args(p, "NodeResourcesFit");
    const cJSON *type = cJSON_GetObjectItem(cJSON_GetObjectItem(fit, "scoringStrategy"), "type");
    assert_string_equal(type->valuestring, "LeastAllocated");
    assert_null(sched_profile_args(p, "PrioritySort"));

    /* The defaults build a framework with kube-scheduler's weights. */
    fw_framework *fw = NULL;
    char err[256];
    assert_int_equal(fw_framework_new(p, &all_registry, NULL, &fw, err, sizeof(err)), KUBE_OK);
    assert_int_equal(fw_framework_score_weight(fw, "TaintToleration"), 3);
    assert_int_equal(fw_framework_score_weight(fw, "NodeAffinity"), 2);
    assert_int_equal(fw_framework_score_weight(fw, "NodeResourcesFit"), 1);
    assert_int_equal(fw_framework_score_weight(fw, "PodTopologySpread"), 2);
    assert_int_equal(fw_framework_score_weight(fw, "InterPodAffinity"), 2);
    assert_int_equal(fw_framework_score_weight(fw, "NodeResourcesBalancedAllocation"), 1);
    assert_int_equal(fw_framework_score_weight(fw, "ImageLocality"), 1);
    const char *names[32];
    size_t n = fw_framework_plugins_at(fw, FW_PT_FILTER, names, 32);
    assert_int_equal(n, 15);
    assert_string_equal(names[0], "NodeUnschedulable");
    assert_string_equal(names[14], "InterPodAffinity");
    n = fw_framework_plugins_at(fw, FW_PT_PRE_ENQUEUE, names, 32);
    assert_int_equal(n, 1);
    assert_string_equal(names[0], "SchedulingGates");
    fw_framework_free(fw);
    sched_config_free(cfg);

    /* An empty file is the same configuration. */
    cfg = load_ok(HEADER, &all_registry);
    expect_set(&cfg->profiles[0].plugins[SCHED_EP_MULTI_POINT], 0, KUBE_DEFAULT_MULTIPOINT);
    assert_int_equal(cfg->profiles[0].n_plugin_config, 7);
    sched_config_free(cfg);
}

static void v1beta3_defaults_equal_v1(void **state)
{
    (void)state;
    size_t n1, n3;
    const sched_plugin *d1 = sched_default_plugins(SCHED_API_V1, &n1);
    const sched_plugin *d3 = sched_default_plugins(SCHED_API_V1BETA3, &n3);
    assert_int_equal(n1, 21);
    assert_int_equal(n1, n3);
    for (size_t i = 0; i < n1; i++) {
        assert_string_equal(d1[i].name, d3[i].name);
        assert_int_equal(d1[i].weight, d3[i].weight);
    }
    assert_null(sched_default_plugins("kubescheduler.config.k8s.io/v1beta2", &n1));
    sched_config *cfg = load_ok("apiVersion: kubescheduler.config.k8s.io/v1beta3\n"
                                "kind: KubeSchedulerConfiguration\n",
                                &all_registry);
    assert_string_equal(cfg->api_version, SCHED_API_V1BETA3);
    expect_set(&cfg->profiles[0].plugins[SCHED_EP_MULTI_POINT], 0, KUBE_DEFAULT_MULTIPOINT);
    sched_config_free(cfg);
}

static void defaults_filtered_by_registry(void **state)
{
    (void)state;
    sched_config *cfg = NULL;
    assert_int_equal(tp_config_load(NULL, NULL, &some_registry, &cfg, NULL, 0), KUBE_OK);
    expect_set(&cfg->profiles[0].plugins[SCHED_EP_MULTI_POINT], 0,
               "PrioritySort,TaintToleration:3,NodeResourcesFit:1,DefaultBinder");
    assert_int_equal(cfg->profiles[0].n_plugin_config, 1);
    assert_string_equal(cfg->profiles[0].plugin_config[0].name, "NodeResourcesFit");
    sched_config_free(cfg);
    /* Disabling a kube-scheduler plugin we lack is fine. */
    cfg = load_ok(HEADER "profiles:\n- plugins:\n    multiPoint:\n      disabled:\n"
                         "      - name: PodTopologySpread\n",
                  &some_registry);
    sched_config_free(cfg);
}

/* The built-in registry has every kube-scheduler v1.28 default plugin: the
 * defaulted profile is kube-scheduler's whole MultiPoint set, the in-tree
 * volume limits plugins may be named, and only plugins stickyvm lacks
 * (DynamicResources) are "not implemented". */
static void builtin_registry_has_every_default(void **state)
{
    (void)state;
    const fw_registry *r = plugin_registry_in_tree();
    sched_config *cfg = NULL;
    assert_int_equal(tp_config_load(NULL, NULL, r, &cfg, NULL, 0), KUBE_OK);
    expect_set(&cfg->profiles[0].plugins[SCHED_EP_MULTI_POINT], 0, KUBE_DEFAULT_MULTIPOINT);
    assert_int_equal(cfg->profiles[0].n_plugin_config, 7);
    sched_config_free(cfg);
    cfg = load_ok(HEADER "profiles:\n- plugins:\n    multiPoint:\n      disabled:\n"
                         "      - name: '*'\n      enabled:\n      - name: EBSLimits\n"
                         "      - name: GCEPDLimits\n      - name: AzureDiskLimits\n",
                  r);
    expect_set(&cfg->profiles[0].plugins[SCHED_EP_MULTI_POINT], 0,
               "EBSLimits,GCEPDLimits,AzureDiskLimits");
    sched_config_free(cfg);
    load_err(HEADER "profiles:\n- plugins:\n    filter:\n      enabled:\n"
                    "      - name: DynamicResources\n",
             r, KUBE_ECONFIG,
             "sched.yaml: profiles[0].plugins.filter.enabled[0].name: plugin "
             "\"DynamicResources\" is not implemented by stickyvm-scheduler");
}

static void merges_plugin_sets(void **state)
{
    (void)state;
    sched_config *cfg = load_ok(HEADER "profiles:\n"
                                       "- schedulerName: a\n"
                                       "  plugins:\n"
                                       "    multiPoint:\n"
                                       "      enabled:\n"
                                       "      - name: NodeAffinity\n"
                                       "        weight: 5\n"
                                       "      - name: StickyVM\n"
                                       "      disabled:\n"
                                       "      - name: ImageLocality\n"
                                       "      - name: VolumeBinding\n"
                                       "    score:\n"
                                       "      disabled:\n"
                                       "      - name: '*'\n"
                                       "      enabled:\n"
                                       "      - name: NodeResourcesFit\n"
                                       "        weight: 4\n"
                                       "- schedulerName: stickyvm\n"
                                       "  percentageOfNodesToScore: 30\n"
                                       "  plugins:\n"
                                       "    multiPoint:\n"
                                       "      disabled:\n"
                                       "      - name: '*'\n"
                                       "      enabled:\n"
                                       "      - name: PrioritySort\n"
                                       "      - name: DefaultBinder\n"
                                       "      - name: StickyVM\n",
                                &all_registry);
    assert_int_equal(cfg->n_profiles, 2);
    const sched_profile *a = sched_config_profile(cfg, "a");
    expect_set(&a->plugins[SCHED_EP_MULTI_POINT], 0,
               "PrioritySort,NodeUnschedulable,NodeName,TaintToleration:3,NodeAffinity:5,NodePorts,"
               "NodeResourcesFit:1,VolumeRestrictions,EBSLimits,GCEPDLimits,NodeVolumeLimits,"
               "AzureDiskLimits,VolumeZone,PodTopologySpread:2,InterPodAffinity:2,"
               "DefaultPreemption,NodeResourcesBalancedAllocation:1,DefaultBinder,"
               "SchedulingGates,StickyVM");
    expect_set(&a->plugins[SCHED_EP_MULTI_POINT], 1, "ImageLocality,VolumeBinding");
    expect_set(&a->plugins[SCHED_EP_SCORE], 0, "NodeResourcesFit:4");
    expect_set(&a->plugins[SCHED_EP_SCORE], 1, "*");
    /* VolumeBinding is disabled: no default args entry for it. */
    assert_null(sched_profile_args(a, "VolumeBinding"));
    assert_non_null(sched_profile_args(a, "NodeResourcesFit"));

    fw_framework *fw = NULL;
    char err[256];
    assert_int_equal(fw_framework_new(a, &all_registry, NULL, &fw, err, sizeof(err)), KUBE_OK);
    const char *names[32];
    size_t n = fw_framework_plugins_at(fw, FW_PT_SCORE, names, 32);
    assert_int_equal(n, 1); /* "*" at score: no multiPoint expansion there */
    assert_string_equal(names[0], "NodeResourcesFit");
    assert_int_equal(fw_framework_score_weight(fw, "NodeResourcesFit"), 4);
    n = fw_framework_plugins_at(fw, FW_PT_FILTER, names, 32);
    assert_string_equal(names[n - 1], "StickyVM");
    fw_framework_free(fw);

    const sched_profile *s = sched_config_profile(cfg, "stickyvm");
    assert_true(s->has_percentage);
    assert_int_equal(s->percentage_of_nodes_to_score, 30);
    expect_set(&s->plugins[SCHED_EP_MULTI_POINT], 0, "PrioritySort,DefaultBinder,StickyVM");
    assert_int_equal(s->n_plugin_config, 0);
    sched_config_free(cfg);
}

static void errors_name_file_and_field(void **state)
{
    (void)state;
    const fw_registry *r = &all_registry;
    load_err(HEADER "foo: 1\n", r, KUBE_ECONFIG, "sched.yaml: foo: unknown field \"foo\"");
    load_err(HEADER "leaderElection:\n  leaseDurationX: 1s\n", r, KUBE_ECONFIG,
             "sched.yaml: leaderElection.leaseDurationX: unknown field \"leaseDurationX\"");
    load_err(HEADER "leaderElection:\n  leaseDuration: 15x\n", r, KUBE_ECONFIG,
             "sched.yaml: leaderElection.leaseDuration: invalid duration \"15x\"");
    load_err(HEADER "parallelism: abc\n", r, KUBE_ECONFIG,
             "sched.yaml: parallelism: expected an integer, got string");
    load_err(HEADER "parallelism: \"16\"\n", r, KUBE_ECONFIG,
             "sched.yaml: parallelism: expected an integer, got string");
    load_err(HEADER "parallelism: 0\n", r, KUBE_ECONFIG,
             "sched.yaml: parallelism: should be an integer value greater than zero, got 0");
    load_err(HEADER "parallelism: 1\nparallelism: 2\n", r, KUBE_ECONFIG,
             "sched.yaml: parallelism: duplicate field \"parallelism\"");
    load_err(HEADER "percentageOfNodesToScore: 101\n", r, KUBE_ECONFIG,
             "sched.yaml: percentageOfNodesToScore: not in valid range [0-100], got 101");
    load_err(HEADER "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n", r, KUBE_ECONFIG,
             "sched.yaml: podMaxBackoffSeconds: must be greater than or equal to "
             "PodInitialBackoffSeconds, got 2");
    load_err(HEADER "leaderElection:\n  leaseDuration: 5s\n", r, KUBE_ECONFIG,
             "sched.yaml: leaderElection.leaseDuration: LeaseDuration must be greater than "
             "RenewDeadline (10s)");
    load_err(HEADER "leaderElection:\n  resourceLock: endpoints\n", r, KUBE_ECONFIG,
             "sched.yaml: leaderElection.resourceLock: unsupported value \"endpoints\": only "
             "\"leases\" is supported");
    load_err(HEADER "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n"
                    "    filter:\n      enabled:\n      - name: Foo\n",
             r, KUBE_ECONFIG,
             "sched.yaml: profiles[1].plugins.filter.enabled[0].name: unknown plugin \"Foo\"");
    load_err(HEADER "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n"
                    "      - name: PodTopologySpread\n",
             &some_registry, KUBE_ECONFIG,
             "sched.yaml: profiles[0].plugins.multiPoint.enabled[0].name: plugin "
             "\"PodTopologySpread\" is not implemented by stickyvm-scheduler");
    load_err(HEADER "profiles:\n- plugins:\n    filter:\n      disabled:\n      - name: Bar\n", r,
             KUBE_ECONFIG,
             "sched.yaml: profiles[0].plugins.filter.disabled[0].name: unknown plugin \"Bar\"");
    load_err(HEADER "profiles:\n- plugins:\n    filters: {}\n", r, KUBE_ECONFIG,
             "sched.yaml: profiles[0].plugins.filters: unknown field \"filters\"");
    load_err(HEADER "profiles:\n- plugins:\n    filter:\n      enabled:\n      - weight: 2\n", r,
             KUBE_ECONFIG,
             "sched.yaml: profiles[0].plugins.filter.enabled[0].name: required value");
    load_err(HEADER "profiles:\n- schedulerName: a\n- schedulerName: a\n", r, KUBE_ECONFIG,
             "sched.yaml: profiles[1].schedulerName: duplicate value \"a\"");
    load_err(HEADER "profiles:\n- schedulerName: a\n- {}\n", r, KUBE_ECONFIG,
             "sched.yaml: profiles[1].schedulerName: required value");
    load_err(HEADER "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                    "      scoringStrategy:\n        type: Foo\n",
             r, KUBE_ECONFIG,
             "sched.yaml: profiles[0].pluginConfig[0].args: scoringStrategy.type: unsupported "
             "value \"Foo\"");
    load_err(HEADER "profiles:\n- pluginConfig:\n  - name: PrioritySort\n    args:\n      a: 1\n",
             r, KUBE_ECONFIG,
             "sched.yaml: profiles[0].pluginConfig[0].args: plugin \"PrioritySort\" takes no args");
    load_err(HEADER "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                    "      kind: NodeAffinityArgs\n",
             r, KUBE_ECONFIG,
             "sched.yaml: profiles[0].pluginConfig[0].args: kind: must be "
             "\"NodeResourcesFitArgs\" for plugin \"NodeResourcesFit\"");
    load_err(HEADER "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n  - name: NodeAffinity\n",
             r, KUBE_ECONFIG,
             "sched.yaml: profiles[0].pluginConfig[1]: duplicate value \"NodeAffinity\"");
    load_err(HEADER
             "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n"
             "      disabled:\n      - name: '*'\n      enabled:\n      - name: PrioritySort\n",
             r, KUBE_ECONFIG,
             "sched.yaml: profiles[1].plugins.queueSort: queueSort must be the same for all "
             "profiles");
    load_err(HEADER "clientConnection:\n  contentType: text/plain\n", r, KUBE_ECONFIG,
             "sched.yaml: clientConnection.contentType: unsupported value \"text/plain\": "
             "supported values: \"application/json\"");
    load_err("kind: KubeSchedulerConfiguration\n", r, KUBE_ECONFIG,
             "sched.yaml: apiVersion: required value (\"kubescheduler.config.k8s.io/v1\")");
    load_err("apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n",
             r, KUBE_ECONFIG,
             "sched.yaml: apiVersion: unsupported value \"kubescheduler.config.k8s.io/v1beta2\": "
             "supported values: \"kubescheduler.config.k8s.io/v1\", "
             "\"kubescheduler.config.k8s.io/v1beta3\"");
    load_err("apiVersion: kubescheduler.config.k8s.io/v1\nkind: Pod\n", r, KUBE_ECONFIG,
             "sched.yaml: kind: expected \"KubeSchedulerConfiguration\", got \"Pod\"");
    load_err(HEADER "profiles: [\n", r, KUBE_EPARSE,
             "sched.yaml: line 4: did not find expected node content");
    load_err(HEADER "- a\n", r, KUBE_EPARSE, "sched.yaml: line 3: did not find expected key");
    load_err("[1, 2]\n", r, KUBE_ECONFIG, "sched.yaml: expected an object, got array");
}

static void durations(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        int64_t ms;
        const char *out;
    } cases[] = {
        {"15s", 15000, "15s"},
        {"1m30s", 90000, "1m30s"},
        {"1.5s", 1500, "1.5s"},
        {"300ms", 300, "300ms"},
        {"1h", 3600000, "1h0m0s"},
        {"2h45m0.5s", 9900500, "2h45m0.5s"},
        {"0", 0, "0s"},
        {"1.5h", 5400000, "1h30m0s"},
        {"-2s", -2000, "-2s"},
        {"1000000us", 1000, "1s"},
        {"90s", 90000, "1m30s"},
        {"0.25s", 250, "250ms"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t ms = -1;
        char buf[32];
        assert_int_equal(kube_duration_parse(cases[i].in, &ms), KUBE_OK);
        assert_int_equal(ms, cases[i].ms);
        kube_duration_format(ms, buf, sizeof(buf));
        assert_string_equal(buf, cases[i].out);
    }
    const char *bad[] = {"", "s", "15", "1x", "1.s.", "--1s", "1e3s", NULL};
    for (size_t i = 0; bad[i]; i++) {
        int64_t ms = 7;
        assert_int_equal(kube_duration_parse(bad[i], &ms), KUBE_EINVAL);
        assert_int_equal(ms, 7);
    }
}

/* The configuration knows plugins only by name: loading takes any name and
 * leaves args as given; resolving against a registry checks the names and
 * has each plugin default its args; a framework is built only from a
 * resolved profile. */
static void plugins_resolved_by_the_framework(void **state)
{
    (void)state;
    sched_config *cfg = NULL;
    char err[512] = "";
    const char *yaml = HEADER "profiles:\n- plugins:\n    filter:\n      enabled:\n"
                              "      - name: Foo\n";
    assert_int_equal(
        sched_config_load_string(yaml, strlen(yaml), "sched.yaml", &cfg, err, sizeof(err)),
        KUBE_OK);
    assert_false(cfg->profiles[0].resolved);
    fw_framework *fw = NULL;
    assert_int_equal(
        fw_framework_new(&cfg->profiles[0], &all_registry, NULL, &fw, err, sizeof(err)),
        KUBE_EINVAL);
    assert_null(fw);
    assert_int_equal(fw_config_resolve(cfg, &all_registry, err, sizeof(err)), KUBE_ECONFIG);
    assert_string_equal(
        err, "sched.yaml: profiles[0].plugins.filter.enabled[0].name: unknown plugin \"Foo\"");
    sched_config_free(cfg);

    assert_int_equal(sched_config_default(&cfg, err, sizeof(err)), KUBE_OK);
    assert_null(sched_profile_args(&cfg->profiles[0], "NodeResourcesFit"));
    assert_int_equal(fw_config_resolve(cfg, &all_registry, err, sizeof(err)), KUBE_OK);
    assert_true(cfg->profiles[0].resolved);
    assert_non_null(sched_profile_args(&cfg->profiles[0], "NodeResourcesFit"));
    size_t n = cfg->profiles[0].n_plugin_config;
    assert_int_equal(fw_config_resolve(cfg, &all_registry, err, sizeof(err)), KUBE_OK);
    assert_int_equal(cfg->profiles[0].n_plugin_config, n); /* idempotent */
    sched_config_free(cfg);
}

static void write_and_reload(void **state)
{
    (void)state;
    sched_config *cfg =
        load_ok(HEADER "parallelism: 8\n"
                       "percentageOfNodesToScore: 20\n"
                       "leaderElection:\n  leaderElect: false\n  leaseDuration: 1m30s\n"
                       "clientConnection:\n  kubeconfig: /etc/kube/config\n  qps: 20.5\n"
                       "profiles:\n"
                       "- schedulerName: stickyvm\n"
                       "  plugins:\n"
                       "    multiPoint:\n"
                       "      enabled:\n"
                       "      - name: StickyVM\n"
                       "  pluginConfig:\n"
                       "  - name: NodeResourcesFit\n"
                       "    args:\n"
                       "      apiVersion: kubescheduler.config.k8s.io/v1\n"
                       "      kind: NodeResourcesFitArgs\n"
                       "      scoringStrategy:\n"
                       "        type: MostAllocated\n",
                &all_registry);
    kube_buf a = KUBE_BUF_INIT, b = KUBE_BUF_INIT;
    assert_int_equal(sched_config_write_yaml(cfg, &a), KUBE_OK);
    assert_non_null(strstr(a.data, "apiVersion: kubescheduler.config.k8s.io/v1\n"));
    assert_non_null(strstr(a.data, "\n  leaseDuration: 1m30s\n"));
    assert_non_null(strstr(a.data, "\n  qps: 20.5\n"));
    assert_non_null(strstr(a.data, "\n  kubeconfig: /etc/kube/config\n"));
    assert_non_null(strstr(a.data, "\n  acceptContentTypes: \"\"\n"));
    assert_non_null(strstr(a.data, "      kind: NodeResourcesFitArgs\n"));
    assert_non_null(strstr(a.data, "        type: MostAllocated\n"));
    assert_non_null(strstr(a.data, "    bind: {}\n"));
    assert_non_null(strstr(a.data, "      - name: TaintToleration\n        weight: 3\n"));
    sched_config *again = load_ok(a.data, &all_registry);
    assert_int_equal(sched_config_write_yaml(again, &b), KUBE_OK);
    assert_string_equal(a.data, b.data);
    assert_int_equal(again->parallelism, 8);
    assert_false(again->leader_election.leader_elect);
    assert_int_equal(again->profiles[0].n_plugin_config, 7);
    kube_buf_free(&a);
    kube_buf_free(&b);
    sched_config_free(cfg);
    sched_config_free(again);

    /* The defaults round-trip too, and a file loads the same way. */
    assert_int_equal(tp_config_load(NULL, NULL, &all_registry, &cfg, NULL, 0), KUBE_OK);
    assert_int_equal(sched_config_write_yaml(cfg, &a), KUBE_OK);
    char path[] = "/tmp/sched-config-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, a.data, a.len), (ssize_t)a.len);
    close(fd);
    char err[256];
    assert_int_equal(tp_config_load_file(path, &all_registry, &again, err, sizeof(err)), KUBE_OK);
    assert_string_equal(again->source, path);
    assert_int_equal(sched_config_write_yaml(again, &b), KUBE_OK);
    assert_string_equal(a.data, b.data);
    sched_config_free(again);
    unlink(path);
    assert_int_equal(tp_config_load_file(path, &all_registry, &again, err, sizeof(err)), KUBE_EIO);
    assert_non_null(strstr(err, path));
    kube_buf_free(&a);
    kube_buf_free(&b);
    sched_config_free(cfg);
}

int test_group_sched_config(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_match_kube),
        cmocka_unit_test(v1beta3_defaults_equal_v1),
        cmocka_unit_test(defaults_filtered_by_registry),
        cmocka_unit_test(plugins_resolved_by_the_framework),
        cmocka_unit_test(builtin_registry_has_every_default),
        cmocka_unit_test(merges_plugin_sets),
        cmocka_unit_test(errors_name_file_and_field),
        cmocka_unit_test(durations),
        cmocka_unit_test(write_and_reload),
    };
    return cmocka_run_group_tests_name("sched_config", tests, NULL, NULL);
}
