/*
 * scheduler/config/defaults.c - kube-scheduler v1.28's defaulting of
 * KubeSchedulerConfiguration (apis/config/v1 defaults.go and
 * default_plugins.go: the default MultiPoint set and mergePluginSet), the
 * names of its in-tree plugins and of the extension points.
 */
#include "config/config_int.h"

#include <stdlib.h>
#include <string.h>

#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"

/* The YAML keys of the extension points. */
static const char *const ep_keys[SCHED_EP_COUNT] = {
    [SCHED_EP_PRE_ENQUEUE] = "preEnqueue",
    [SCHED_EP_QUEUE_SORT] = "queueSort",
    [SCHED_EP_PRE_FILTER] = "preFilter",
    [SCHED_EP_FILTER] = "filter",
    [SCHED_EP_POST_FILTER] = "postFilter",
    [SCHED_EP_PRE_SCORE] = "preScore",
    [SCHED_EP_SCORE] = "score",
    [SCHED_EP_RESERVE] = "reserve",
    [SCHED_EP_PERMIT] = "permit",
    [SCHED_EP_PRE_BIND] = "preBind",
    [SCHED_EP_BIND] = "bind",
    [SCHED_EP_POST_BIND] = "postBind",
    [SCHED_EP_MULTI_POINT] = "multiPoint",
};

const char *sched_ext_point_key(sched_ext_point ep)
{
    return (unsigned)ep < SCHED_EP_COUNT ? ep_keys[ep] : "";
}

/* kube-scheduler v1.28 getDefaultPlugins() for v1 and v1beta3 (identical
 * in 1.28; SchedulingGates appended because PodSchedulingReadiness is on
 * by default). The built-in registry has every one of them, the in-tree
 * volume limits EBSLimits, GCEPDLimits and AzureDiskLimits included. */
static const sched_plugin default_plugins_v1[] = {
    {"PrioritySort", 0, NULL},      {"NodeUnschedulable", 0, NULL},
    {"NodeName", 0, NULL},          {"TaintToleration", 3, NULL},
    {"NodeAffinity", 2, NULL},      {"NodePorts", 0, NULL},
    {"NodeResourcesFit", 1, NULL},  {"VolumeRestrictions", 0, NULL},
    {"EBSLimits", 0, NULL},         {"GCEPDLimits", 0, NULL},
    {"NodeVolumeLimits", 0, NULL},  {"AzureDiskLimits", 0, NULL},
    {"VolumeBinding", 0, NULL},     {"VolumeZone", 0, NULL},
    {"PodTopologySpread", 2, NULL}, {"InterPodAffinity", 2, NULL},
    {"DefaultPreemption", 0, NULL}, {"NodeResourcesBalancedAllocation", 1, NULL},
    {"ImageLocality", 1, NULL},     {"DefaultBinder", 0, NULL},
    {"SchedulingGates", 0, NULL},
};

const sched_plugin *sched_default_plugins(const char *api_version, size_t *n)
{
    if (api_version &&
        (strcmp(api_version, SCHED_API_V1) == 0 || strcmp(api_version, SCHED_API_V1BETA3) == 0)) {
        *n = sizeof(default_plugins_v1) / sizeof(default_plugins_v1[0]);
        return default_plugins_v1;
    }
    *n = 0;
    return NULL;
}

/* pkg/scheduler/framework/plugins/names (v1.28) plus the in-tree plugins
 * registered by NewInTreeRegistry. */
static const char *const upstream_names[] = {
    "PrioritySort",       "DefaultBinder",
    "DefaultPreemption",  "DynamicResources",
    "ImageLocality",      "InterPodAffinity",
    "NodeAffinity",       "NodeName",
    "NodePorts",          "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",   "NodeUnschedulable",
    "NodeVolumeLimits",   "AzureDiskLimits",
    "EBSLimits",          "GCEPDLimits",
    "PodTopologySpread",  "SchedulingGates",
    "TaintToleration",    "VolumeBinding",
    "VolumeRestrictions", "VolumeZone",
};

int sched_config_upstream_plugin(const char *name)
{
    for (size_t i = 0; i < sizeof(upstream_names) / sizeof(upstream_names[0]); i++)
        if (strcmp(upstream_names[i], name) == 0)
            return 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Profile defaulting: plugins and pluginConfig                        */
/* ------------------------------------------------------------------ */

/* A deep copy of src into dst. KUBE_OK or KUBE_ENOMEM. */
static int plugin_copy(sched_plugin *dst, const sched_plugin *src)
{
    dst->weight = src->weight;
    dst->name = kube_strdup(src->name);
    dst->field = src->field ? kube_strdup(src->field) : NULL;
    return dst->name && (dst->field || !src->field) ? KUBE_OK : KUBE_ENOMEM;
}

static int list_has(const sched_plugin *l, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i].name, name) == 0)
            return 1;
    return 0;
}

void sched_cfg_plugin_set_free(sched_plugin_set *s)
{
    for (size_t i = 0; i < s->n_enabled; i++) {
        free(s->enabled[i].name);
        free(s->enabled[i].field);
    }
    for (size_t i = 0; i < s->n_disabled; i++) {
        free(s->disabled[i].name);
        free(s->disabled[i].field);
    }
    free(s->enabled);
    free(s->disabled);
    memset(s, 0, sizeof(*s));
}

/* mergePluginSet(defaults, custom) into out (custom is left untouched). */
static int merge_set(const sched_plugin *def, size_t n_def, const sched_plugin_set *custom,
                     sched_plugin_set *out)
{
    size_t cap = n_def + custom->n_enabled;
    out->enabled = calloc(cap ? cap : 1, sizeof(sched_plugin));
    out->disabled = calloc(custom->n_disabled ? custom->n_disabled : 1, sizeof(sched_plugin));
    char *replaced = calloc(custom->n_enabled ? custom->n_enabled : 1, 1);
    int rc = out->enabled && out->disabled && replaced ? KUBE_OK : KUBE_ENOMEM;
    for (size_t i = 0; i < custom->n_disabled && !rc; i++, out->n_disabled++)
        rc = plugin_copy(&out->disabled[i], &custom->disabled[i]);
    int all_off = list_has(custom->disabled, custom->n_disabled, "*");
    for (size_t i = 0; i < n_def && !rc && !all_off; i++) {
        if (list_has(custom->disabled, custom->n_disabled, def[i].name))
            continue;
        const sched_plugin *use = &def[i];
        for (size_t k = custom->n_enabled; k-- > 0;)
            if (strcmp(custom->enabled[k].name, def[i].name) == 0) {
                use = &custom->enabled[k];
                replaced[k] = 1;
                KLOG_V(2, "Default plugin is explicitly re-configured; overriding plugin=\"%s\"",
                       def[i].name);
                break;
            }
        rc = plugin_copy(&out->enabled[out->n_enabled++], use);
    }
    for (size_t k = 0; k < custom->n_enabled && !rc; k++)
        if (!replaced[k])
            rc = plugin_copy(&out->enabled[out->n_enabled++], &custom->enabled[k]);
    free(replaced);
    return rc;
}

int sched_cfg_merge_profile_plugins(const char *api, sched_profile *p)
{
    size_t n_def;
    const sched_plugin *def = sched_default_plugins(api, &n_def);
    int rc = KUBE_OK;
    for (int e = 0; e < SCHED_EP_COUNT && rc == KUBE_OK; e++) {
        sched_plugin_set merged = {0};
        rc = e == SCHED_EP_MULTI_POINT ? merge_set(def, n_def, &p->plugins[e], &merged)
                                       : merge_set(NULL, 0, &p->plugins[e], &merged);
        sched_cfg_plugin_set_free(&p->plugins[e]);
        p->plugins[e] = merged;
    }
    return rc;
}

/* *s, when unset or empty, becomes a copy of def. KUBE_OK or KUBE_ENOMEM. */
static int default_string(char **s, const char *def)
{
    if (*s && **s)
        return KUBE_OK;
    free(*s);
    *s = kube_strdup(def);
    return *s ? KUBE_OK : KUBE_ENOMEM;
}

int sched_cfg_apply_defaults(sched_config *cfg, const sched_cfg_given *g)
{
    if (!g->parallelism)
        cfg->parallelism = 16;
    if (!g->initial_backoff)
        cfg->pod_initial_backoff_seconds = 1;
    if (!g->max_backoff)
        cfg->pod_max_backoff_seconds = 10;
    if (!g->enable_profiling)
        cfg->enable_profiling = 1;
    if (!g->enable_contention)
        cfg->enable_contention_profiling = 1;
    sched_client_connection *cc = &cfg->client_connection;
    if (cc->qps == 0)
        cc->qps = 50;
    if (cc->burst == 0)
        cc->burst = 100;
    sched_leader_election *le = &cfg->leader_election;
    if (!g->leader_elect)
        le->leader_elect = 1;
    if (le->lease_duration_ms == 0)
        le->lease_duration_ms = 15000;
    if (le->renew_deadline_ms == 0)
        le->renew_deadline_ms = 10000;
    if (le->retry_period_ms == 0)
        le->retry_period_ms = 2000;
    if (default_string(&cc->content_type, "application/json") ||
        default_string(&le->resource_lock, "leases") ||
        default_string(&le->resource_name, SCHED_DEFAULT_LEASE_NAME) ||
        default_string(&le->resource_namespace, "kube-system"))
        return KUBE_ENOMEM;
    if (!cc->kubeconfig && !(cc->kubeconfig = kube_strdup("")))
        return KUBE_ENOMEM;
    if (!cc->accept_content_types && !(cc->accept_content_types = kube_strdup("")))
        return KUBE_ENOMEM;
    return KUBE_OK;
}
