/*
 * scheduler/options.c - stickyvm-scheduler's flag sets and their
 * precedence over the configuration file (options.h), after
 * kube-scheduler's app/options (options.go, deprecated.go).
 */
#include "options.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "feature_gates.h"
#include "framework/framework.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "plugins/registry.h"
#include "server.h"

#define JSON_CONTENT_TYPE "application/json"
#define DEFAULT_MAX_IN_UNSCHEDULABLE_MS (5 * 60 * 1000)

static int set_qps(void *dst, const kube_flag *f, const char *value, char *why, size_t n);
static int set_content_type(void *dst, const kube_flag *f, const char *value, char *why, size_t n);
static int set_feature_gates(void *dst, const kube_flag *f, const char *value, char *why, size_t n);

#define O(field) offsetof(sched_options, field)
#define LE(field) (O(leader_election) + offsetof(sched_leader_election, field))
#define STR KUBE_FLAG_STRING
#define DUR KUBE_FLAG_DURATION
#define BOOL KUBE_FLAG_BOOL
#define IGNORED " This parameter is ignored if a config file is specified in --config."

static const kube_flag misc_flags[] = {
    {"config", STR, O(config), 0, 0, NULL, "The path to the configuration file.", NULL},
    {"master", STR, O(master), 0, 0, NULL,
     "The address of the Kubernetes API server (overrides any value in kubeconfig)", NULL},
    {"write-config-to", STR, O(write_config_to), 0, 0, NULL,
     "If set, write the configuration values to this file and exit.", NULL},
};

static const kube_flag deprecated_flags[] = {
    {"contention-profiling", BOOL, O(contention_profiling), 0, 0, NULL,
     "DEPRECATED: enable block profiling, if profiling is enabled." IGNORED " (default true)",
     NULL},
    {"kube-api-burst", KUBE_FLAG_INT, O(burst), 0, INT32_MAX, "int32",
     "DEPRECATED: burst to use while talking with kubernetes apiserver." IGNORED " (default 100)",
     NULL},
    {"kube-api-content-type", KUBE_FLAG_CUSTOM, O(content_type), 0, 0, "string",
     "DEPRECATED: content type of requests sent to apiserver; stickyvm-scheduler speaks "
     "\"" JSON_CONTENT_TYPE "\" only." IGNORED " (default \"" JSON_CONTENT_TYPE "\")",
     set_content_type},
    {"kube-api-qps", KUBE_FLAG_CUSTOM, O(qps), 0, 0, "float32",
     "DEPRECATED: QPS to use while talking with kubernetes apiserver." IGNORED " (default 50)",
     set_qps},
    {"kubeconfig", STR, O(kubeconfig), 0, 0, NULL,
     "DEPRECATED: path to kubeconfig file with authorization and master location "
     "information." IGNORED,
     NULL},
    {"pod-max-in-unschedulable-pods-duration", DUR, O(pod_max_in_unschedulable_ms), 0, 0, NULL,
     "DEPRECATED: the maximum time a pod can stay in unschedulablePods. If a pod stays in "
     "unschedulablePods for longer than this value, the pod will be moved from "
     "unschedulablePods to backoffQ or activeQ. This flag is deprecated and will be removed in "
     "a future version. (default 5m0s)",
     NULL},
    {"profiling", BOOL, O(profiling), 0, 0, NULL,
     "DEPRECATED: enable profiling via web interface host:port/debug/pprof/ (stickyvm-scheduler "
     "has no pprof: accepted, without effect)." IGNORED " (default true)",
     NULL},
};

static const kube_flag leader_flags[] = {
    {"leader-elect", BOOL, LE(leader_elect), 0, 0, NULL,
     "Start a leader election client and gain leadership before executing the main loop. "
     "Enable this when running replicated components for high availability. (default true)",
     NULL},
    {"leader-elect-lease-duration", DUR, LE(lease_duration_ms), 0, 0, NULL,
     "The duration that non-leader candidates will wait after observing a leadership renewal "
     "until attempting to acquire leadership of a led but unrenewed leader slot. This is "
     "effectively the maximum duration that a leader can be stopped before it is replaced by "
     "another candidate. This is only applicable if leader election is enabled. (default 15s)",
     NULL},
    {"leader-elect-renew-deadline", DUR, LE(renew_deadline_ms), 0, 0, NULL,
     "The interval between attempts by the acting master to renew a leadership slot before it "
     "stops leading. This must be less than the lease duration. This is only applicable if "
     "leader election is enabled. (default 10s)",
     NULL},
    {"leader-elect-resource-lock", STR, LE(resource_lock), 0, 0, NULL,
     "The type of resource object that is used for locking during leader election. Supported "
     "options are 'leases'. (default \"leases\")",
     NULL},
    {"leader-elect-resource-name", STR, LE(resource_name), 0, 0, NULL,
     "The name of resource object that is used for locking during leader election. (default "
     "\"" SCHED_DEFAULT_LEASE_NAME "\")",
     NULL},
    {"leader-elect-resource-namespace", STR, LE(resource_namespace), 0, 0, NULL,
     "The namespace of resource object that is used for locking during leader election. "
     "(default \"kube-system\")",
     NULL},
    {"leader-elect-retry-period", DUR, LE(retry_period_ms), 0, 0, NULL,
     "The duration the clients should wait between attempting acquisition and renewal of a "
     "leadership. This is only applicable if leader election is enabled. (default 2s)",
     NULL},
};

static const kube_flag feature_flags[] = {
    {"feature-gates", KUBE_FLAG_CUSTOM, O(feature_gates), 0, 0, "mapStringBool",
     "A set of key=value pairs that describe feature gates for alpha/experimental features. "
     "Options are:\n"
     "AllAlpha=true|false (ALPHA - default=false)\n"
     "AllBeta=true|false (BETA - default=false)\n"
     "DynamicResourceAllocation=true|false (ALPHA - default=false)\n"
     "InPlacePodVerticalScaling=true|false (ALPHA - default=false)\n"
     "MatchLabelKeysInPodTopologySpread=true|false (BETA - default=true)\n"
     "MinDomainsInPodTopologySpread=true|false (BETA - default=true)\n"
     "NodeInclusionPolicyInPodTopologySpread=true|false (BETA - default=true)\n"
     "PodDisruptionConditions=true|false (BETA - default=true)\n"
     "PodSchedulingReadiness=true|false (BETA - default=true)\n"
     "ReadWriteOncePod=true|false (BETA - default=true)\n"
     "SidecarContainers=true|false (ALPHA - default=false)\n"
     "VolumeCapacityPriority=true|false (ALPHA - default=false)\n"
     "The ALPHA gates are not implemented by stickyvm-scheduler: they must stay false.",
     set_feature_gates},
};

#define N(t) (sizeof(t) / sizeof((t)[0]))

/* --kube-api-qps: a float32 (strconv.ParseFloat), not negative. */
static int set_qps(void *dst, const kube_flag *f, const char *value, char *why, size_t n)
{
    char *end = NULL;
    double v;

    errno = 0;
    v = strtod(value, &end);
    if (!*value || *end || errno || !isfinite(v) || v < 0) {
        snprintf(why, n, "strconv.ParseFloat: parsing \"%s\": invalid syntax", value);
        return KUBE_ECONFIG;
    }
    *(double *)((char *)dst + f->offset) = v;
    return KUBE_OK;
}

/* --kube-api-content-type: JSON only. */
static int set_content_type(void *dst, const kube_flag *f, const char *value, char *why, size_t n)
{
    char **field = (char **)((char *)dst + f->offset);
    char *copy;

    if (strcmp(value, JSON_CONTENT_TYPE)) {
        snprintf(why, n, "stickyvm-scheduler speaks JSON only: the content type must be \"%s\"",
                 JSON_CONTENT_TYPE);
        return KUBE_ECONFIG;
    }
    if (!(copy = kube_strdup(value)))
        return KUBE_ENOMEM;
    free(*field);
    *field = copy;
    return KUBE_OK;
}

/* --feature-gates: checked now, applied by main(); repeated flags add up,
 * as pflag's mapStringBool does. */
static int set_feature_gates(void *dst, const kube_flag *f, const char *value, char *why, size_t n)
{
    char **field = (char **)((char *)dst + f->offset);
    kube_buf b = KUBE_BUF_INIT;
    int rc;

    if (*field && **field)
        rc = kube_buf_printf(&b, "%s,%s", *field, value);
    else
        rc = kube_buf_puts(&b, value);
    if (rc != KUBE_OK)
        return KUBE_ENOMEM;
    if (sched_features_check(b.data, why, n) != KUBE_OK) {
        kube_buf_free(&b);
        return KUBE_ECONFIG;
    }
    free(*field);
    *field = kube_buf_take(&b);
    return *field ? KUBE_OK : KUBE_ENOMEM;
}

int sched_options_init(sched_options *o)
{
    sched_leader_election *le = &o->leader_election;

    memset(o, 0, sizeof(*o));
    o->profiling = o->contention_profiling = 1;
    o->qps = 50;
    o->burst = 100;
    o->pod_max_in_unschedulable_ms = DEFAULT_MAX_IN_UNSCHEDULABLE_MS;
    le->leader_elect = 1;
    le->lease_duration_ms = 15000;
    le->renew_deadline_ms = 10000;
    le->retry_period_ms = 2000;
    le->resource_lock = kube_strdup("leases");
    le->resource_name = kube_strdup(SCHED_DEFAULT_LEASE_NAME);
    le->resource_namespace = kube_strdup("kube-system");
    o->content_type = kube_strdup(JSON_CONTENT_TYPE);
    if (!le->resource_lock || !le->resource_name || !le->resource_namespace || !o->content_type)
        return KUBE_ENOMEM;
    return sched_server_defaults(&o->serving);
}

void sched_options_free(sched_options *o)
{
    char **strings[] = {&o->config,
                        &o->master,
                        &o->write_config_to,
                        &o->kubeconfig,
                        &o->content_type,
                        &o->feature_gates,
                        &o->leader_election.resource_lock,
                        &o->leader_election.resource_name,
                        &o->leader_election.resource_namespace};

    for (size_t i = 0; i < N(strings); i++) {
        free(*strings[i]);
        *strings[i] = NULL;
    }
    klog_options_free(&o->logs);
    kube_serving_options_free(&o->serving);
}

size_t sched_options_flag_sets(sched_options *o, kube_flag_set *out, size_t cap)
{
    kube_flag_set sets[KUBE_SERVING_FLAG_SETS + 5] = {{"Misc", misc_flags, N(misc_flags), o}};
    const kube_flag_set rest[] = {
        {"Deprecated", deprecated_flags, N(deprecated_flags), o},
        {"Leader election", leader_flags, N(leader_flags), o},
        {"Feature gate", feature_flags, N(feature_flags), o},
        klog_flag_set(&o->logs),
    };
    size_t n = N(sets) < cap ? N(sets) : cap;

    kube_serving_flag_sets(&o->serving, sets + 1);
    memcpy(sets + 1 + KUBE_SERVING_FLAG_SETS, rest, sizeof(rest));
    memcpy(out, sets, n * sizeof(*out));
    return n;
}

void sched_options_seen(void *ud, const kube_flag_set *set, const kube_flag *f)
{
    sched_options *o = ud;

    (void)set;
    if (!sched_options_changed(o, f->name) && o->n_changed < SCHED_OPTIONS_MAX_CHANGED)
        o->changed[o->n_changed++] = f;
}

int sched_options_changed(const sched_options *o, const char *name)
{
    for (size_t i = 0; i < o->n_changed; i++)
        if (strcmp(o->changed[i]->name, name) == 0)
            return 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Precedence                                                          */
/* ------------------------------------------------------------------ */

static int replace_str(char **dst, const char *value)
{
    char *copy = kube_strdup(value);

    if (!copy)
        return KUBE_ENOMEM;
    free(*dst);
    *dst = copy;
    return KUBE_OK;
}

/* ApplyDeprecated: the deprecated flags given override cfg (no --config). */
static int apply_deprecated(const sched_options *o, sched_config *cfg)
{
    sched_client_connection *cc = &cfg->client_connection;
    int rc = KUBE_OK;

    if (sched_options_changed(o, "profiling"))
        cfg->enable_profiling = o->profiling;
    if (sched_options_changed(o, "contention-profiling"))
        cfg->enable_contention_profiling = o->contention_profiling;
    if (sched_options_changed(o, "kube-api-qps"))
        cc->qps = o->qps;
    if (sched_options_changed(o, "kube-api-burst"))
        cc->burst = o->burst;
    if (sched_options_changed(o, "kubeconfig"))
        rc = replace_str(&cc->kubeconfig, o->kubeconfig);
    if (rc == KUBE_OK && sched_options_changed(o, "kube-api-content-type"))
        rc = replace_str(&cc->content_type, o->content_type);
    return rc;
}

/* With --config the deprecated flags are ignored: says which. */
static void warn_ignored(const sched_options *o)
{
    kube_buf b = KUBE_BUF_INIT;

    for (size_t i = 0; i < N(deprecated_flags); i++) {
        const char *name = deprecated_flags[i].name;
        if (strcmp(name, "pod-max-in-unschedulable-pods-duration") &&
            sched_options_changed(o, name))
            kube_buf_printf(&b, "%s--%s", b.len ? ", " : "", name);
    }
    if (b.len)
        KLOG_WARN("ignoring %s: deprecated flags are ignored when a config file is specified in "
                  "--config (set the fields of the file instead)",
                  b.data);
    kube_buf_free(&b);
}

/* ApplyLeaderElectionTo: the leader-election flags given override cfg.
 * Returns 1 when one did (0 none, < 0 an error). */
static int apply_leader_election(const sched_options *o, sched_config *cfg)
{
    const sched_leader_election *src = &o->leader_election;
    sched_leader_election *le = &cfg->leader_election;
    int rc = KUBE_OK, any = 0;

    for (size_t i = 0; i < N(leader_flags); i++)
        any |= sched_options_changed(o, leader_flags[i].name);
    if (sched_options_changed(o, "leader-elect"))
        le->leader_elect = src->leader_elect;
    if (sched_options_changed(o, "leader-elect-lease-duration"))
        le->lease_duration_ms = src->lease_duration_ms;
    if (sched_options_changed(o, "leader-elect-renew-deadline"))
        le->renew_deadline_ms = src->renew_deadline_ms;
    if (sched_options_changed(o, "leader-elect-retry-period"))
        le->retry_period_ms = src->retry_period_ms;
    if (sched_options_changed(o, "leader-elect-resource-lock"))
        rc = replace_str(&le->resource_lock, src->resource_lock);
    if (rc == KUBE_OK && sched_options_changed(o, "leader-elect-resource-name"))
        rc = replace_str(&le->resource_name, src->resource_name);
    if (rc == KUBE_OK && sched_options_changed(o, "leader-elect-resource-namespace"))
        rc = replace_str(&le->resource_namespace, src->resource_namespace);
    return rc == KUBE_OK ? any : rc;
}

/* The flags over a loaded cfg, then validation when they changed it. */
static int apply_flags(const sched_options *o, sched_config *cfg, char *err, size_t errlen)
{
    int rc = KUBE_OK;

    if (!o->config)
        rc = apply_deprecated(o, cfg);
    else
        warn_ignored(o);
    if (rc == KUBE_OK && (rc = apply_leader_election(o, cfg)) > 0)
        rc = sched_config_validate(cfg, "flags", err, errlen);
    return rc;
}

int sched_options_config(const sched_options *o, sched_config **out, char *err, size_t errlen)
{
    sched_config *cfg = NULL;
    int rc;

    err[0] = '\0';
    if (o->config)
        rc = sched_config_load_file(o->config, &cfg, err, errlen);
    else
        rc = sched_config_default(&cfg, err, errlen);
    if (rc == KUBE_OK)
        rc = apply_flags(o, cfg, err, errlen);
    if (rc == KUBE_OK)
        rc = fw_config_resolve(cfg, plugin_registry_in_tree(), err, errlen);
    if (rc != KUBE_OK) {
        if (!err[0])
            snprintf(err, errlen, "%s", kube_strerror(rc));
        sched_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return KUBE_OK;
}
