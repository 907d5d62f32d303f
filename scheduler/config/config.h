/*
 * scheduler/config/config.h - KubeSchedulerConfiguration
 * (kubescheduler.config.k8s.io/v1 and v1beta3) loaded from YAML with
 * libyaml, defaulted and validated as kube-scheduler v1.28 does, and
 * written back as YAML (--write-config-to). The configuration knows plugins
 * only by name: the framework checks the names against its registry and
 * has each plugin decode, validate and default its own args
 * (fw_config_resolve() in framework/framework.h), which the scheduler runs
 * after loading and before it builds a framework or writes the config.
 *
 * Defaulting (kube-scheduler's apis/config/v1 defaults.go):
 *   clientConnection: qps 50, burst 100, contentType application/json
 *     (kube-scheduler's default is protobuf, which stickyvm does not speak;
 *     a configured protobuf type is accepted with a warning and JSON used)
 *   leaderElection: leaderElect true, leaseDuration 15s, renewDeadline 10s,
 *     retryPeriod 2s, resourceLock leases, resourceName stickyvm-scheduler,
 *     resourceNamespace kube-system
 *   parallelism 16, percentageOfNodesToScore 0 (adaptive),
 *   podInitialBackoffSeconds 1, podMaxBackoffSeconds 10,
 *   enableProfiling true, enableContentionProfiling true,
 *   profiles: one profile "default-scheduler" when none is given; a single
 *   profile without schedulerName gets "default-scheduler".
 *   Each profile's plugins = merge(default MultiPoint set, the profile's
 *   plugins) with kube-scheduler's mergePluginSet rules. Resolving against a
 *   registry (fw_config_resolve()) then gives pluginConfig, for every
 *   enabled plugin that takes args and has no entry, an entry with the
 *   plugin's defaulted args (sorted by plugin name), and defaults the given
 *   entries in place.
 *
 * The default MultiPoint set is kube-scheduler v1.28's (v1 and v1beta3 are
 * the same in 1.28): SchedulingGates... see sched_default_plugins(). When
 * resolving, default plugins that stickyvm has not built (absent from the
 * registry) are left out of the profile with a warning logged once - never
 * silently. A plugin NAMED in the file (enabled, multiPoint or
 * pluginConfig) that is not in the registry is an error: "unknown plugin"
 * or, for kube-scheduler plugins we lack (sched_config_upstream_plugin()),
 * "plugin %q is not implemented by stickyvm-scheduler". Disabling such a
 * plugin is accepted.
 *
 * Validation errors and unknown fields are reported as ONE message
 * "<file>: <field path>: <what>", e.g.
 *   sched.yaml: profiles[1].plugins.filter.enabled[0].name: unknown plugin "Foo"
 *   sched.yaml: profiles[1].schedulerName: duplicate value "x"
 *   sched.yaml: parallelism: must be greater than 0, got -1
 *   sched.yaml: leaderElection.leaseDuration: invalid duration "15x"
 * Plugin args errors come from the plugin's default_args hook, prefixed
 * with the file and "profiles[i].pluginConfig[j].args".
 *
 * Extenders (`extenders`, kube-scheduler's Extender): every field is
 * decoded (tlsConfig's certData / keyData / caData are base64, as Go's
 * []byte); validation is validateExtenders': prioritizeVerb needs a
 * positive weight, at most one extender has a bindVerb, managed resource
 * names are extended resource names, unique across extenders. As
 * buildExtenders, the managed resources with ignoredByScheduler become
 * every profile's NodeResourcesFit ignoredResources (an error when a
 * profile has NodeResourcesFit disabled). The extenders themselves are
 * scheduler/extender.h's.
 *
 * Memory: sched_config_* constructors allocate a sched_config that the
 * caller frees with sched_config_free(); every string and cJSON inside is
 * owned by it. Nothing is retained from the YAML text.
 */
#ifndef SCHED_CONFIG_H
#define SCHED_CONFIG_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/util/buf.h"
#include "kube/util/duration.h"

#define SCHED_API_V1 "kubescheduler.config.k8s.io/v1"
#define SCHED_API_V1BETA3 "kubescheduler.config.k8s.io/v1beta3"
#define SCHED_DEFAULT_SCHEDULER_NAME "default-scheduler"
#define SCHED_DEFAULT_LEASE_NAME "stickyvm-scheduler"

/* Extension points of a profile's `plugins`, in kube-scheduler's order of
 * execution. SCHED_EP_MULTI_POINT is the multiPoint set. */
typedef enum sched_ext_point {
    SCHED_EP_PRE_ENQUEUE = 0,
    SCHED_EP_QUEUE_SORT,
    SCHED_EP_PRE_FILTER,
    SCHED_EP_FILTER,
    SCHED_EP_POST_FILTER,
    SCHED_EP_PRE_SCORE,
    SCHED_EP_SCORE,
    SCHED_EP_RESERVE,
    SCHED_EP_PERMIT,
    SCHED_EP_PRE_BIND,
    SCHED_EP_BIND,
    SCHED_EP_POST_BIND,
    SCHED_EP_MULTI_POINT,
    SCHED_EP_COUNT
} sched_ext_point;

/* The YAML key of a point: "preEnqueue", ..., "multiPoint". */
const char *sched_ext_point_key(sched_ext_point ep);

typedef struct sched_plugin {
    char *name;     /* owned; "*" allowed in disabled lists */
    int32_t weight; /* score weight; 0 = not set */
    char *field;    /* owned: the path of its name in the file, e.g.
                       "profiles[0].plugins.filter.enabled[1].name";
                       NULL for a default plugin */
} sched_plugin;

typedef struct sched_plugin_set {
    sched_plugin *enabled;
    size_t n_enabled;
    sched_plugin *disabled;
    size_t n_disabled;
} sched_plugin_set;

typedef struct sched_plugin_config {
    char *name;  /* owned */
    cJSON *args; /* owned: as given; once resolved, fully defaulted by the
                    plugin's hook; NULL: none */
    char *field; /* owned: its path in the file ("profiles[0].pluginConfig[1]"),
                    NULL for an entry resolving added */
} sched_plugin_config;

typedef struct sched_profile {
    char *scheduler_name;                 /* owned */
    int32_t percentage_of_nodes_to_score; /* valid when has_percentage */
    int has_percentage;
    /* After defaulting: the MERGED sets (defaults + the file), as
     * kube-scheduler's defaulted profile; the framework expands multiPoint. */
    sched_plugin_set plugins[SCHED_EP_COUNT];
    sched_plugin_config *plugin_config;
    size_t n_plugin_config;
    int resolved; /* names checked and args defaulted (fw_config_resolve) */
} sched_profile;

typedef struct sched_client_connection {
    char *kubeconfig;           /* owned, "" when unset */
    char *content_type;         /* owned */
    char *accept_content_types; /* owned */
    double qps;
    int32_t burst;
} sched_client_connection;

typedef struct sched_leader_election {
    int leader_elect;
    int64_t lease_duration_ms;
    int64_t renew_deadline_ms;
    int64_t retry_period_ms;
    char *resource_lock;      /* owned; only "leases" is supported */
    char *resource_name;      /* owned */
    char *resource_namespace; /* owned */
} sched_leader_election;

/* extenders[i].tlsConfig (ExtenderTLSConfig). Strings owned, NULL when
 * unset; the *_data fields are the decoded bytes of the file's base64
 * text (NUL-terminated; *_len their length). */
typedef struct sched_extender_tls {
    int insecure;
    char *server_name;
    char *cert_file;
    char *key_file;
    char *ca_file;
    char *cert_data;
    size_t cert_len;
    char *key_data;
    size_t key_len;
    char *ca_data;
    size_t ca_len;
} sched_extender_tls;

/* extenders[i].managedResources[j] */
typedef struct sched_extender_resource {
    char *name; /* owned */
    int ignored_by_scheduler;
} sched_extender_resource;

/* extenders[i] (kube-scheduler's Extender). Strings owned, "" when unset. */
typedef struct sched_extender_config {
    char *url_prefix;
    char *filter_verb;
    char *preempt_verb;
    char *prioritize_verb;
    char *bind_verb;
    int64_t weight;
    int enable_https;
    sched_extender_tls *tls; /* owned; NULL when tlsConfig is absent */
    int64_t http_timeout_ms; /* 0: unset (the extender then uses 5s) */
    int node_cache_capable;
    sched_extender_resource *managed_resources; /* owned */
    size_t n_managed_resources;
    int ignorable;
} sched_extender_config;

typedef struct sched_config {
    char *source;      /* owned: file name used in errors, or "" */
    char *api_version; /* owned: SCHED_API_V1 or SCHED_API_V1BETA3 */
    int32_t parallelism;
    int32_t percentage_of_nodes_to_score;
    int64_t pod_initial_backoff_seconds;
    int64_t pod_max_backoff_seconds;
    int enable_profiling;
    int enable_contention_profiling;
    int delay_cache_until_active;
    sched_client_connection client_connection;
    sched_leader_election leader_election;
    sched_profile *profiles;
    size_t n_profiles;
    sched_extender_config *extenders; /* in the file's order */
    size_t n_extenders;
} sched_config;

/* The defaulted configuration with no file (kube-scheduler run without
 * --config), for api_version SCHED_API_V1. Returns KUBE_OK, KUBE_ENOMEM,
 * or KUBE_ECONFIG (message in err, errlen may be 0). */
int sched_config_default(sched_config **out, char *err, size_t errlen);

/* Reads, decodes, defaults and validates a file. Errors: KUBE_EIO (cannot
 * read), KUBE_EPARSE (not YAML), KUBE_ECONFIG (a field is wrong), with the
 * message in err naming file and field. */
int sched_config_load_file(const char *path, sched_config **out, char *err, size_t errlen);

/* Same from text in memory; source names it in errors. */
int sched_config_load_string(const char *yaml, size_t len, const char *source, sched_config **out,
                             char *err, size_t errlen);

/* Validates cfg again (after command-line flags changed it), as loading
 * does; errors read "<source>: <field>: <what>". KUBE_OK or KUBE_ECONFIG. */
int sched_config_validate(const sched_config *cfg, const char *source, char *err, size_t errlen);

/* Frees cfg and everything in it. NULL-safe. */
void sched_config_free(sched_config *cfg);

/* Appends the configuration as YAML (kube-scheduler's --write-config-to:
 * apiVersion, kind, every field, keys sorted as kube-scheduler writes them,
 * durations as Go prints them). The output loads back to an equal config.
 * Returns KUBE_OK or KUBE_ENOMEM. */
int sched_config_write_yaml(const sched_config *cfg, kube_buf *out);

/* The same configuration as a JSON tree (apiVersion, kind, every field
 * but the extenders' tlsConfig.keyData, a private key; /configz serves it). The caller frees it
 * with cJSON_Delete(); NULL when out of memory. */
cJSON *sched_config_to_json(const sched_config *cfg);

/* The pluginConfig args of a plugin in a profile (borrowed), or NULL. */
const cJSON *sched_profile_args(const sched_profile *p, const char *plugin);

/* kube-scheduler's default MultiPoint plugins for an apiVersion (v1 or
 * v1beta3), unfiltered, in order, with weights (0 = unset). *n receives the
 * count. Static storage. NULL for an unknown apiVersion. */
const sched_plugin *sched_default_plugins(const char *api_version, size_t *n);
/* 1 when name is one of kube-scheduler v1.28's in-tree plugins
 * (framework/plugins/names), else 0. */
int sched_config_upstream_plugin(const char *name);

#endif
