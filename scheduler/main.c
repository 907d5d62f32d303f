/*
 * scheduler/main.c - the stickyvm-scheduler binary: kube-scheduler's
 * command line (--config, --kubeconfig, --leader-elect*, --write-config-to,
 * --v, and the secure port's "Secure serving", "Authentication" and
 * "Authorization" flag sets of kube/serving/options.h), the secure port, leader election, and
 * graceful shutdown on SIGTERM/SIGINT (stop popping, finish in-flight bindings for up to 10 s,
 * release the Lease, stop informers, free everything). Losing the Lease exits 1, as kube-scheduler
 * does.
 */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "plugins/registry.h"
#include "framework/framework.h"
#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "kube/util/errors.h"
#include "kube/util/flags.h"
#include "kube/machinery/leader.h"
#include "kube/serving/options.h"
#include "kube/util/log.h"
#include "scheduler.h"
#include "server.h"

#define STOP_TIMEOUT_MS 10000
/* glibc gives every thread that allocates its own arena; the binding,
 * informer, recorder and Filter threads would each keep one partly empty.
 * One arena measured smallest at 5000 nodes / 10000 pods, at no CPU cost
 * (memory is a goal: see bench/bench_scheduler.c). */
#define MALLOC_ARENAS 1

/* The command line (kube/util/flags.h); -1 or NULL: not given. */
typedef struct flags {
    char *config;
    char *kubeconfig;
    char *write_config_to;
    int verbosity;
    int leader_elect;
    int64_t lease_duration_ms;
    int64_t renew_deadline_ms;
    int64_t retry_period_ms;
    char *resource_lock;
    char *resource_name;
    char *resource_namespace;
    int help;
} flags;

#define FO(field) offsetof(flags, field)
#define STR KUBE_FLAG_STRING
#define DUR KUBE_FLAG_DURATION

static const kube_flag flag_defs[] = {
    {"config", STR, FO(config), 0, 0, NULL, "The path to the configuration file.", NULL},
    {"kubeconfig", STR, FO(kubeconfig), 0, 0, NULL,
     "Path to kubeconfig file with authorization and master location information (overrides "
     "clientConnection.kubeconfig).",
     NULL},
    {"write-config-to", STR, FO(write_config_to), 0, 0, NULL,
     "If set, write the configuration values to this file and exit.", NULL},
    {"leader-elect", KUBE_FLAG_BOOL, FO(leader_elect), 0, 0, NULL,
     "Start a leader election client and gain leadership before executing the main loop.", NULL},
    {"leader-elect-lease-duration", DUR, FO(lease_duration_ms), 0, 0, NULL,
     "The duration that non-leader candidates will wait after observing a leadership renewal "
     "until attempting to acquire leadership. (default 15s)",
     NULL},
    {"leader-elect-renew-deadline", DUR, FO(renew_deadline_ms), 0, 0, NULL,
     "The interval between attempts by the acting master to renew a leadership slot before it "
     "stops leading. (default 10s)",
     NULL},
    {"leader-elect-retry-period", DUR, FO(retry_period_ms), 0, 0, NULL,
     "The duration the clients should wait between attempting acquisition and renewal of a "
     "leadership. (default 2s)",
     NULL},
    {"leader-elect-resource-lock", STR, FO(resource_lock), 0, 0, NULL,
     "The type of resource object that is used for locking during leader election. Only "
     "'leases' is supported. (default \"leases\")",
     NULL},
    {"leader-elect-resource-name", STR, FO(resource_name), 0, 0, NULL,
     "The name of resource object that is used for locking during leader election. (default "
     "\"" SCHED_DEFAULT_LEASE_NAME "\")",
     NULL},
    {"leader-elect-resource-namespace", STR, FO(resource_namespace), 0, 0, NULL,
     "The namespace of resource object that is used for locking during leader election. "
     "(default \"kube-system\")",
     NULL},
    {"v", KUBE_FLAG_INT, FO(verbosity), 0, 10, NULL, "number for the log level verbosity", NULL},
    {"help", KUBE_FLAG_BOOL, FO(help), 0, 0, NULL, "help for stickyvm-scheduler", NULL},
};

#define N_FLAGS (sizeof(flag_defs) / sizeof(flag_defs[0]))
#define N_SETS (1 + KUBE_SERVING_FLAG_SETS)

/* The secure port's options (kube/serving/options.h). */
static kube_serving_options serving;

/* The named flag sets: ours, then the secure port's three. */
static void flag_sets(flags *fl, kube_flag_set sets[N_SETS])
{
    sets[0] = (kube_flag_set){"Misc", flag_defs, N_FLAGS, fl};
    kube_serving_flag_sets(&serving, sets + 1);
}

/* Prints the usage, as kube-scheduler's. */
static void usage(FILE *f, flags *fl)
{
    kube_flag_set sets[N_SETS];

    flag_sets(fl, sets);
    fprintf(f, "Usage:\n  stickyvm-scheduler [flags]\n");
    kube_flag_sets_usage(f, sets, N_SETS);
}

/* Frees the strings the command line gave. */
static void flags_free(flags *fl)
{
    char **strings[] = {&fl->config,        &fl->kubeconfig,    &fl->write_config_to,
                        &fl->resource_lock, &fl->resource_name, &fl->resource_namespace};
    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
        free(*strings[i]);
        *strings[i] = NULL;
    }
}

/* pflag syntax (kube/util/flags.h) into fl, the unset fields -1 or NULL. */
static int parse_flags(int argc, char **argv, flags *fl)
{
    kube_flag_set sets[N_SETS];
    char err[512];
    int rc;

    memset(fl, 0, sizeof(*fl));
    fl->verbosity = -1;
    fl->leader_elect = -1;
    fl->lease_duration_ms = fl->renew_deadline_ms = fl->retry_period_ms = -1;
    rc = sched_server_defaults(&serving);
    flag_sets(fl, sets);
    if (rc == KUBE_OK)
        rc = kube_flag_sets_parse(sets, N_SETS, argc, argv, NULL, err, sizeof(err));
    if (rc == KUBE_OK)
        rc = kube_serving_options_validate(&serving, err, sizeof(err));
    if (rc != KUBE_OK)
        fprintf(stderr, "Error: %s\n", err);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */

static int replace_str(char **dst, const char *value)
{
    char *copy = strdup(value);

    if (!copy)
        return KUBE_ENOMEM;
    free(*dst);
    *dst = copy;
    return KUBE_OK;
}

/* The flags that override the configuration (leader election, kubeconfig). */
static int apply_flags(const flags *fl, sched_config *cfg)
{
    sched_leader_election *le = &cfg->leader_election;
    int rc = KUBE_OK;

    if (fl->kubeconfig)
        rc = replace_str(&cfg->client_connection.kubeconfig, fl->kubeconfig);
    if (fl->leader_elect >= 0)
        le->leader_elect = fl->leader_elect;
    if (fl->lease_duration_ms >= 0)
        le->lease_duration_ms = fl->lease_duration_ms;
    if (fl->renew_deadline_ms >= 0)
        le->renew_deadline_ms = fl->renew_deadline_ms;
    if (fl->retry_period_ms >= 0)
        le->retry_period_ms = fl->retry_period_ms;
    if (rc == KUBE_OK && fl->resource_lock) {
        if (strcmp(fl->resource_lock, "leases")) {
            fprintf(stderr, "Error: --leader-elect-resource-lock: only \"leases\" is supported\n");
            return KUBE_ECONFIG;
        }
        rc = replace_str(&le->resource_lock, fl->resource_lock);
    }
    if (rc == KUBE_OK && fl->resource_name)
        rc = replace_str(&le->resource_name, fl->resource_name);
    if (rc == KUBE_OK && fl->resource_namespace)
        rc = replace_str(&le->resource_namespace, fl->resource_namespace);
    return rc;
}

static int load_config(const flags *fl, sched_config **out)
{
    char err[1024] = "";
    int rc;

    if (fl->config)
        rc = sched_config_load_file(fl->config, out, err, sizeof(err));
    else
        rc = sched_config_default(out, err, sizeof(err));
    if (rc == KUBE_OK)
        rc = fw_config_resolve(*out, plugin_registry_in_tree(), err, sizeof(err));
    if (rc != KUBE_OK) {
        fprintf(stderr, "Error: %s\n", err[0] ? err : kube_strerror(rc));
        sched_config_free(*out);
        *out = NULL;
        return rc;
    }
    rc = apply_flags(fl, *out);
    if (rc != KUBE_OK) {
        sched_config_free(*out);
        *out = NULL;
    }
    return rc;
}

static int write_config(const sched_config *cfg, const char *path)
{
    kube_buf b = KUBE_BUF_INIT;
    FILE *f;
    int rc = sched_config_write_yaml(cfg, &b);

    if (rc != KUBE_OK)
        return rc;
    f = fopen(path, "w");
    if (!f || fwrite(b.data, 1, b.len, f) != b.len) {
        fprintf(stderr, "Error: writing %s failed\n", path);
        rc = KUBE_EIO;
    }
    if (f && fclose(f) != 0)
        rc = KUBE_EIO;
    kube_buf_free(&b);
    if (rc == KUBE_OK)
        KLOG_INFO("wrote configuration to %s", path);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Running                                                             */
/* ------------------------------------------------------------------ */

typedef struct app {
    sched_config *cfg;
    kube_config *kc;
    kube_client *client, *leader_client;
    sched_scheduler *sched;
    sched_server *server;
} app;

static atomic_int lease_lost;

static void on_lease_lost(void *ud)
{
    (void)ud;
    atomic_store(&lease_lost, 1);
    kill(getpid(), SIGUSR1);
}

static int scheduler_ready(void *ud)
{
    return sched_scheduler_synced(ud);
}

static void scheduler_pods(void *ud, void (*fn)(void *ud, kube_object *obj), void *fn_ud)
{
    sched_scheduler_foreach_pod(ud, fn, fn_ud);
}

static int make_clients(app *a)
{
    const sched_client_connection *cc = &a->cfg->client_connection;
    kube_client_options o;
    kube_leader_config lc;
    char err[1024] = "";
    int rc = kube_config_load(cc->kubeconfig, &a->kc, err, sizeof(err));

    if (rc != KUBE_OK) {
        fprintf(stderr, "Error: %s\n", err[0] ? err : kube_strerror(rc));
        return rc;
    }
    KLOG_INFO("using cluster configuration from %s", kube_config_source(a->kc));
    kube_client_options_default(&o);
    o.qps = cc->qps;
    o.burst = cc->burst;
    o.user_agent = "stickyvm-scheduler";
    rc = kube_client_new(a->kc, &o, &a->client);
    if (rc != KUBE_OK || !a->cfg->leader_election.leader_elect)
        return rc;
    kube_leader_config_default(&lc);
    lc.renew_deadline_ms = (long)a->cfg->leader_election.renew_deadline_ms;
    kube_leader_client_options(&lc, &o);
    return kube_client_new(a->kc, &o, &a->leader_client);
}

static int start(app *a)
{
    sched_scheduler_options so;
    sched_server_options vo;
    char err[1024] = "";
    int rc = make_clients(a);

    if (rc != KUBE_OK)
        return rc;
    memset(&so, 0, sizeof(so));
    so.config = a->cfg;
    so.client = a->client;
    so.leader_client = a->leader_client;
    so.on_leadership_lost = on_lease_lost;
    rc = sched_scheduler_new(&so, &a->sched, err, sizeof(err));
    if (rc == KUBE_OK && serving.secure_port != 0) { /* 0: no HTTPS, as kube-scheduler */
        memset(&vo, 0, sizeof(vo));
        vo.serving = &serving;
        vo.client = a->client;
        vo.metrics = sched_scheduler_metrics(a->sched);
        vo.ready = scheduler_ready;
        vo.ud = a->sched;
        vo.leader = sched_scheduler_leader(a->sched);
        vo.config = a->cfg;
        vo.pods = scheduler_pods;
        vo.pods_ud = a->sched;
        rc = sched_server_new(&vo, &a->server, err, sizeof(err));
    }
    if (rc == KUBE_OK)
        rc = sched_scheduler_start(a->sched);
    if (rc != KUBE_OK)
        fprintf(stderr, "Error: %s\n", err[0] ? err : kube_strerror(rc));
    return rc;
}

static void shutdown_app(app *a)
{
    if (a->sched)
        sched_scheduler_stop(a->sched, atomic_load(&lease_lost) ? 0 : STOP_TIMEOUT_MS);
    sched_server_free(a->server);
    sched_scheduler_free(a->sched);
    kube_client_free(a->leader_client);
    kube_client_free(a->client);
    kube_config_free(a->kc);
    sched_config_free(a->cfg);
}

static int wait_for_signal(const sigset_t *set)
{
    int sig = 0;

    while (sigwait(set, &sig) == 0) {
        if (sig == SIGTERM || sig == SIGINT) {
            KLOG_INFO("received signal %d, shutting down", sig);
            return 0;
        }
        if (sig == SIGUSR1 && atomic_load(&lease_lost))
            return 1;
    }
    return 1;
}

int main(int argc, char **argv)
{
    flags fl;
    app a;
    sigset_t set;
    int rc, code = 1;

    memset(&a, 0, sizeof(a));
    mallopt(M_ARENA_MAX, MALLOC_ARENAS);
    if (parse_flags(argc, argv, &fl) != KUBE_OK) {
        usage(stderr, &fl);
        flags_free(&fl);
        kube_serving_options_free(&serving);
        return 1;
    }
    if (fl.help) {
        usage(stdout, &fl);
        flags_free(&fl);
        kube_serving_options_free(&serving);
        return 0;
    }
    if (fl.verbosity >= 0)
        klog_set_verbosity(fl.verbosity);
    if (load_config(&fl, &a.cfg) != KUBE_OK) {
        flags_free(&fl);
        kube_serving_options_free(&serving);
        return 1;
    }
    if (fl.write_config_to) {
        rc = write_config(a.cfg, fl.write_config_to);
        sched_config_free(a.cfg);
        flags_free(&fl);
        kube_serving_options_free(&serving);
        return rc == KUBE_OK ? 0 : 1;
    }
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (start(&a) == KUBE_OK)
        code = wait_for_signal(&set);
    shutdown_app(&a);
    flags_free(&fl);
    kube_serving_options_free(&serving);
    return code;
}
