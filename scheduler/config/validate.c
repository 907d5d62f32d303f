/*
 * scheduler/config/validate.c - kube-scheduler's
 * ValidateKubeSchedulerConfiguration (apis/config/validation) on a
 * defaulted configuration. Plugin names and plugin args are the
 * framework's to check (fw_config_resolve()).
 */
#include "config/config_int.h"

#include <stdio.h>
#include <string.h>

#include "kube/util/errors.h"
#include "kube/util/log.h"

static int validate_leader_election(sched_cfg_dec *d, const sched_leader_election *le)
{
    char f[64], g[64];
    if (!le->leader_elect)
        return KUBE_OK;
    if (le->lease_duration_ms <= 0)
        return sched_cfg_fail_at(d, "leaderElection.leaseDuration", "must be greater than zero");
    if (le->renew_deadline_ms <= 0)
        return sched_cfg_fail_at(d, "leaderElection.renewDeadline", "must be greater than zero");
    if (le->retry_period_ms <= 0)
        return sched_cfg_fail_at(d, "leaderElection.retryPeriod", "must be greater than zero");
    if (le->lease_duration_ms <= le->renew_deadline_ms) {
        kube_duration_format(le->renew_deadline_ms, f, sizeof(f));
        return sched_cfg_fail_at(d, "leaderElection.leaseDuration",
                                 "LeaseDuration must be greater than RenewDeadline (%s)", f);
    }
    if (le->renew_deadline_ms * 10 <= le->retry_period_ms * 12) {
        kube_duration_format(le->renew_deadline_ms, f, sizeof(f));
        kube_duration_format(le->retry_period_ms, g, sizeof(g));
        return sched_cfg_fail_at(
            d, "leaderElection.renewDeadline",
            "renewDeadline (%s) must be greater than retryPeriod*JitterFactor (%s*1.2)", f, g);
    }
    if (strcmp(le->resource_lock, "leases") != 0)
        return sched_cfg_fail_at(d, "leaderElection.resourceLock",
                                 "unsupported value \"%s\": only \"leases\" is supported",
                                 le->resource_lock);
    return KUBE_OK;
}

static int validate_client(sched_cfg_dec *d, const sched_client_connection *cc)
{
    if (cc->burst < 0)
        return sched_cfg_fail_at(d, "clientConnection.burst", "must be non-negative, got %d",
                                 cc->burst);
    if (strcmp(cc->content_type, "application/vnd.kubernetes.protobuf") == 0)
        KLOG_WARN("%s: clientConnection.contentType: protobuf is not supported by "
                  "stickyvm-scheduler; using application/json",
                  d->source);
    else if (strcmp(cc->content_type, "application/json") != 0)
        return sched_cfg_fail_at(d, "clientConnection.contentType",
                                 "unsupported value \"%s\": supported values: \"application/json\"",
                                 cc->content_type);
    return KUBE_OK;
}

static int set_equal(const sched_plugin_set *a, const sched_plugin_set *b)
{
    if (a->n_enabled != b->n_enabled || a->n_disabled != b->n_disabled)
        return 0;
    for (size_t i = 0; i < a->n_enabled; i++)
        if (strcmp(a->enabled[i].name, b->enabled[i].name) ||
            a->enabled[i].weight != b->enabled[i].weight)
            return 0;
    for (size_t i = 0; i < a->n_disabled; i++)
        if (strcmp(a->disabled[i].name, b->disabled[i].name))
            return 0;
    return 1;
}

static int validate_profile(sched_cfg_dec *d, const sched_config *cfg, size_t i)
{
    const sched_profile *p = &cfg->profiles[i];
    char path[128];
    if (!p->scheduler_name || !*p->scheduler_name) {
        snprintf(path, sizeof(path), "profiles[%zu].schedulerName", i);
        return sched_cfg_fail_at(d, path, "required value");
    }
    for (size_t k = 0; k < i; k++)
        if (strcmp(cfg->profiles[k].scheduler_name, p->scheduler_name) == 0) {
            snprintf(path, sizeof(path), "profiles[%zu].schedulerName", i);
            return sched_cfg_fail_at(d, path, "duplicate value \"%s\"", p->scheduler_name);
        }
    if (p->has_percentage &&
        (p->percentage_of_nodes_to_score < 0 || p->percentage_of_nodes_to_score > 100)) {
        snprintf(path, sizeof(path), "profiles[%zu].percentageOfNodesToScore", i);
        return sched_cfg_fail_at(d, path, "not in valid range [0-100], got %d",
                                 p->percentage_of_nodes_to_score);
    }
    for (size_t j = 0; j < p->n_plugin_config; j++)
        for (size_t k = 0; k < j; k++)
            if (strcmp(p->plugin_config[j].name, p->plugin_config[k].name) == 0) {
                snprintf(path, sizeof(path), "profiles[%zu].pluginConfig[%zu]", i, j);
                return sched_cfg_fail_at(d, path, "duplicate value \"%s\"",
                                         p->plugin_config[j].name);
            }
    if (i > 0 && !set_equal(&cfg->profiles[0].plugins[SCHED_EP_QUEUE_SORT],
                            &p->plugins[SCHED_EP_QUEUE_SORT])) {
        snprintf(path, sizeof(path), "profiles[%zu].plugins.queueSort", i);
        return sched_cfg_fail_at(d, path, "queueSort must be the same for all profiles");
    }
    return KUBE_OK;
}

int sched_cfg_validate(sched_cfg_dec *d, const sched_config *cfg)
{
    if (cfg->parallelism <= 0)
        return sched_cfg_fail_at(d, "parallelism",
                                 "should be an integer value greater than zero, got %d",
                                 cfg->parallelism);
    if (cfg->percentage_of_nodes_to_score < 0 || cfg->percentage_of_nodes_to_score > 100)
        return sched_cfg_fail_at(d, "percentageOfNodesToScore",
                                 "not in valid range [0-100], got %d",
                                 cfg->percentage_of_nodes_to_score);
    if (cfg->pod_initial_backoff_seconds <= 0)
        return sched_cfg_fail_at(d, "podInitialBackoffSeconds", "must be greater than 0, got %lld",
                                 (long long)cfg->pod_initial_backoff_seconds);
    if (cfg->pod_max_backoff_seconds < cfg->pod_initial_backoff_seconds)
        return sched_cfg_fail_at(
            d, "podMaxBackoffSeconds",
            "must be greater than or equal to PodInitialBackoffSeconds, got %lld",
            (long long)cfg->pod_max_backoff_seconds);
    int rc = validate_client(d, &cfg->client_connection);
    if (rc == KUBE_OK)
        rc = validate_leader_election(d, &cfg->leader_election);
    for (size_t i = 0; i < cfg->n_profiles && rc == KUBE_OK; i++)
        rc = validate_profile(d, cfg, i);
    return rc;
}
