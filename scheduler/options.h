/*
 * scheduler/options.h - stickyvm-scheduler's command line, as
 * kube-scheduler's cmd/kube-scheduler/app/options: named flag sets (--help
 * prints one section each, in this order) and how they combine with the
 * configuration file.
 *
 *   Misc:            --config, --master, --write-config-to
 *   Secure serving, Authentication, Authorization: the shared sets of
 *                    kube/serving/options.h with kube-scheduler's defaults
 *                    (sched_server_defaults(): port 10259, an in-memory
 *                    certificate, lookup failures tolerated)
 *   Deprecated:      --contention-profiling, --kube-api-burst,
 *                    --kube-api-content-type, --kube-api-qps, --kubeconfig,
 *                    --pod-max-in-unschedulable-pods-duration, --profiling
 *   Leader election: --leader-elect, --leader-elect-lease-duration,
 *                    --leader-elect-renew-deadline,
 *                    --leader-elect-resource-lock,
 *                    --leader-elect-resource-name,
 *                    --leader-elect-resource-namespace,
 *                    --leader-elect-retry-period
 *   Feature gate:    --feature-gates (scheduler/feature_gates.h)
 *   Logs:            -v/--v, --vmodule, --logging-format (kube/util/log.h)
 *   (Global, added by kube/util/cli.h: -h/--help, --version)
 *
 * Precedence, as kube-scheduler's Options.ApplyTo: without --config the
 * deprecated flags that were given (pflag's Changed) override the default
 * configuration; with --config they are ignored, and a warning names them.
 * The leader-election flags that were given override either.
 * --pod-max-in-unschedulable-pods-duration applies in both cases (it has
 * no configuration field), as does --master (the kubeconfig's server).
 * --kube-api-content-type accepts only "application/json": stickyvm speaks
 * JSON, not protobuf.
 *
 * Memory: sched_options_init() fills a caller-owned sched_options whose
 * strings sched_options_free() releases. Threads: main()'s.
 */
#ifndef SCHED_OPTIONS_H
#define SCHED_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "kube/serving/options.h"
#include "kube/util/flags.h"
#include "kube/util/log.h"

#define SCHED_OPTIONS_MAX_CHANGED 64

typedef struct sched_options {
    /* Misc */
    char *config;
    char *master;
    char *write_config_to;
    /* Secure serving, Authentication, Authorization */
    kube_serving_options serving;
    /* Deprecated */
    int profiling;
    int contention_profiling;
    char *kubeconfig;
    char *content_type;
    double qps;
    int burst;
    int64_t pod_max_in_unschedulable_ms;
    /* Leader election (defaults as the configuration's) */
    sched_leader_election leader_election;
    /* Feature gate */
    char *feature_gates;
    /* Logs */
    klog_options logs;
    /* The flags given on the command line (pflag's Changed); borrowed. */
    const kube_flag *changed[SCHED_OPTIONS_MAX_CHANGED];
    size_t n_changed;
} sched_options;

/* o with kube-scheduler's defaults. KUBE_OK or KUBE_ENOMEM (o is then
 * still safe to free). */
int sched_options_init(sched_options *o);
void sched_options_free(sched_options *o);

/* The named flag sets bound to o, in --help's order, into out (room for
 * cap). Returns the count. */
size_t sched_options_flag_sets(sched_options *o, kube_flag_set *out, size_t cap);
/* The kube_flags_hooks.seen hook recording Changed flags; ud is the
 * sched_options. */
void sched_options_seen(void *ud, const kube_flag_set *set, const kube_flag *f);
/* 1 when the flag name (without dashes) was given. */
int sched_options_changed(const sched_options *o, const char *name);

/* The configuration the options describe: --config's file (or the
 * defaults), with the flags applied by the precedence above, validated
 * and resolved against the in-tree plugins. KUBE_OK with *out (freed with
 * sched_config_free()), or an error with the message in err. */
int sched_options_config(const sched_options *o, sched_config **out, char *err, size_t errlen);

#endif
