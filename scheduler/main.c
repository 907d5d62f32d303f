/*
 * scheduler/main.c - the stickyvm-scheduler binary: kube-scheduler's
 * command line (--config, --kubeconfig, --leader-elect*, --secure-port,
 * --bind-address, --tls-cert-file, --tls-private-key-file,
 * --write-config-to, --v), the secure port, leader election, and graceful
 * shutdown on SIGTERM/SIGINT (stop popping, finish in-flight bindings for
 * up to 10 s, release the Lease, stop informers, free everything). Losing
 * the Lease exits 1, as kube-scheduler does.
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
#include "kube/buf.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/errors.h"
#include "kube/leader.h"
#include "kube/log.h"
#include "scheduler.h"
#include "server.h"

#define STOP_TIMEOUT_MS 10000
#define DEFAULT_SECURE_PORT 10259
/* glibc gives every thread that allocates its own arena; the binding,
 * informer, recorder and Filter threads would each keep one partly empty.
 * One arena measured smallest at 5000 nodes / 10000 pods, at no CPU cost
 * (memory is a goal: see bench/bench_scheduler.c). */
#define MALLOC_ARENAS 1

typedef struct flags {
    const char *config;
    const char *kubeconfig;
    const char *write_config_to;
    const char *bind_address;
    const char *tls_cert_file;
    const char *tls_key_file;
    int64_t secure_port;
    int64_t verbosity;
    const char *leader_elect; /* "true"/"false" when given */
    const char *lease_duration;
    const char *renew_deadline;
    const char *retry_period;
    const char *resource_lock;
    const char *resource_name;
    const char *resource_namespace;
    int help;
} flags;

typedef enum flag_kind { F_STRING, F_INT, F_BOOL } flag_kind;

typedef struct flag_def {
    const char *name;
    flag_kind kind;
    size_t offset;
    const char *usage;
} flag_def;

#define FO(field) offsetof(flags, field)

static const flag_def flag_defs[] = {
    {"config", F_STRING, FO(config), "The path to the configuration file."},
    {"kubeconfig", F_STRING, FO(kubeconfig),
     "Path to kubeconfig file with authorization and master location information (overrides "
     "clientConnection.kubeconfig)."},
    {"write-config-to", F_STRING, FO(write_config_to),
     "If set, write the configuration values to this file and exit."},
    {"secure-port", F_INT, FO(secure_port),
     "The port on which to serve HTTPS with authentication and authorization. (default 10259)"},
    {"bind-address", F_STRING, FO(bind_address),
     "The IP address on which to listen for the --secure-port port. (default 0.0.0.0)"},
    {"tls-cert-file", F_STRING, FO(tls_cert_file),
     "File containing the default x509 Certificate for HTTPS. If not set, a self-signed "
     "certificate is generated in memory."},
    {"tls-private-key-file", F_STRING, FO(tls_key_file),
     "File containing the default x509 private key matching --tls-cert-file."},
    {"leader-elect", F_BOOL, FO(leader_elect),
     "Start a leader election client and gain leadership before executing the main loop."},
    {"leader-elect-lease-duration", F_STRING, FO(lease_duration),
     "The duration that non-leader candidates will wait after observing a leadership renewal "
     "until attempting to acquire leadership. (default 15s)"},
    {"leader-elect-renew-deadline", F_STRING, FO(renew_deadline),
     "The interval between attempts by the acting master to renew a leadership slot before it "
     "stops leading. (default 10s)"},
    {"leader-elect-retry-period", F_STRING, FO(retry_period),
     "The duration the clients should wait between attempting acquisition and renewal of a "
     "leadership. (default 2s)"},
    {"leader-elect-resource-lock", F_STRING, FO(resource_lock),
     "The type of resource object that is used for locking during leader election. Only "
     "'leases' is supported. (default \"leases\")"},
    {"leader-elect-resource-name", F_STRING, FO(resource_name),
     "The name of resource object that is used for locking during leader election. (default "
     "\"" SCHED_DEFAULT_LEASE_NAME "\")"},
    {"leader-elect-resource-namespace", F_STRING, FO(resource_namespace),
     "The namespace of resource object that is used for locking during leader election. "
     "(default \"kube-system\")"},
    {"v", F_INT, FO(verbosity), "number for the log level verbosity"},
    {"help", F_BOOL, FO(help), "help for stickyvm-scheduler"},
};

#define N_FLAGS (sizeof(flag_defs) / sizeof(flag_defs[0]))

static void usage(FILE *f)
{
    fprintf(f, "Usage:\n  stickyvm-scheduler [flags]\n\nFlags:\n");
    for (size_t i = 0; i < N_FLAGS; i++)
        fprintf(f, "      --%-32s %s\n", flag_defs[i].name, flag_defs[i].usage);
}

static const flag_def *find_flag(const char *name, size_t len)
{
    for (size_t i = 0; i < N_FLAGS; i++)
        if (strlen(flag_defs[i].name) == len && !strncmp(flag_defs[i].name, name, len))
            return &flag_defs[i];
    return NULL;
}

static int set_flag(flags *fl, const flag_def *d, const char *value)
{
    char *field = (char *)fl + d->offset;

    switch (d->kind) {
    case F_STRING:
        *(const char **)field = value;
        return KUBE_OK;
    case F_INT:
        return kube_parse_int64(value, 0, 65535, (int64_t *)field);
    case F_BOOL:
        if (strcmp(value, "true") && strcmp(value, "false"))
            return KUBE_EINVAL;
        if (d->offset == FO(help))
            fl->help = !strcmp(value, "true");
        else
            *(const char **)field = !strcmp(value, "true") ? "true" : "false";
        return KUBE_OK;
    }
    return KUBE_EINVAL;
}

/* pflag syntax: --name=value, --name value, bool --name, -v N / -v=N. */
static int parse_flags(int argc, char **argv, flags *fl)
{
    memset(fl, 0, sizeof(*fl));
    fl->secure_port = DEFAULT_SECURE_PORT;
    fl->verbosity = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *name, *eq, *value;
        const flag_def *d;
        if (a[0] != '-' || !a[1]) {
            fprintf(stderr, "Error: unexpected argument \"%s\"\n", a);
            return KUBE_EINVAL;
        }
        name = a + (a[1] == '-' ? 2 : 1);
        eq = strchr(name, '=');
        d = find_flag(name, eq ? (size_t)(eq - name) : strlen(name));
        if (!d || (a[1] != '-' && strcmp(d->name, "v"))) {
            fprintf(stderr, "Error: unknown flag: %s\n", a);
            return KUBE_EINVAL;
        }
        if (eq)
            value = eq + 1;
        else if (d->kind == F_BOOL)
            value = "true";
        else if (i + 1 < argc)
            value = argv[++i];
        else {
            fprintf(stderr, "Error: flag needs an argument: %s\n", a);
            return KUBE_EINVAL;
        }
        if (set_flag(fl, d, value) != KUBE_OK) {
            fprintf(stderr, "Error: invalid argument \"%s\" for \"--%s\" flag\n", value, d->name);
            return KUBE_EINVAL;
        }
    }
    return KUBE_OK;
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

static int apply_duration(const char *flag, const char *value, int64_t *ms)
{
    if (!value)
        return KUBE_OK;
    if (kube_duration_parse(value, ms) != KUBE_OK) {
        fprintf(stderr, "Error: invalid argument \"%s\" for \"--%s\" flag\n", value, flag);
        return KUBE_ECONFIG;
    }
    return KUBE_OK;
}

/* The flags that override the configuration (leader election, kubeconfig). */
static int apply_flags(const flags *fl, sched_config *cfg)
{
    sched_leader_election *le = &cfg->leader_election;
    int rc = KUBE_OK;

    if (fl->kubeconfig)
        rc = replace_str(&cfg->client_connection.kubeconfig, fl->kubeconfig);
    if (fl->leader_elect)
        le->leader_elect = !strcmp(fl->leader_elect, "true");
    if (rc == KUBE_OK)
        rc = apply_duration("leader-elect-lease-duration", fl->lease_duration,
                            &le->lease_duration_ms);
    if (rc == KUBE_OK)
        rc = apply_duration("leader-elect-renew-deadline", fl->renew_deadline,
                            &le->renew_deadline_ms);
    if (rc == KUBE_OK)
        rc = apply_duration("leader-elect-retry-period", fl->retry_period, &le->retry_period_ms);
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

static int start(app *a, const flags *fl)
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
    if (rc == KUBE_OK) {
        memset(&vo, 0, sizeof(vo));
        vo.bind_address = fl->bind_address;
        vo.port = (int)fl->secure_port;
        vo.cert_file = fl->tls_cert_file;
        vo.key_file = fl->tls_key_file;
        vo.metrics = sched_scheduler_metrics(a->sched);
        vo.ready = scheduler_ready;
        vo.ud = a->sched;
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
        usage(stderr);
        return 1;
    }
    if (fl.help) {
        usage(stdout);
        return 0;
    }
    if (fl.verbosity >= 0)
        klog_set_verbosity((int)fl.verbosity);
    if (load_config(&fl, &a.cfg) != KUBE_OK)
        return 1;
    if (fl.write_config_to) {
        rc = write_config(a.cfg, fl.write_config_to);
        sched_config_free(a.cfg);
        return rc == KUBE_OK ? 0 : 1;
    }
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (start(&a, &fl) == KUBE_OK)
        code = wait_for_signal(&set);
    shutdown_app(&a);
    return code;
}
