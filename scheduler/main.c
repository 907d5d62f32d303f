/*
 * scheduler/main.c - the stickyvm-scheduler binary: kube-scheduler's
 * command line (scheduler/options.h, run by kube/util/cli.h, with the
 * secure port's "Secure serving", "Authentication" and "Authorization"
 * sets of kube/serving/options.h), the secure port, leader election, and
 * graceful shutdown on SIGTERM/SIGINT (stop popping, finish in-flight
 * bindings for up to 10 s, release the Lease, stop informers, free
 * everything). Losing the Lease exits 1, as kube-scheduler does, at once
 * after the scheduler fenced itself and the elector released the Lease
 * (scheduler/fence.c); so do bad flags (after the usage and "Error: ...")
 * and a bad configuration. The secure port shares the scheduler's fenced
 * client: its TokenReviews and SubjectAccessReviews pass the fence.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "plugins/registry.h"
#include "framework/framework.h"
#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "kube/util/errors.h"
#include "kube/machinery/leader.h"
#include "kube/util/cli.h"
#include "kube/util/log.h"
#include "kube/util/residency.h"
#include "kube/util/version.h"
#include "feature_gates.h"
#include "options.h"
#include "scheduler.h"
#include "server.h"

#define STOP_TIMEOUT_MS 10000
/* How often the main thread looks for the informers' sync (wait_for_signal). */
#define SYNC_POLL_MS 20
/* glibc gives every thread that allocates its own arena; the binding,
 * informer, recorder and Filter threads would each keep one partly empty.
 * One arena was smallest, but every request's libcurl, nghttp2 and
 * OpenSSL buffers are allocated and freed on the client's I/O thread while
 * the binding and cycle threads allocate too: with one arena they queue on
 * its lock (about a third of the futex calls at 1000 nodes / 3000 pods).
 * Four cut the system calls ~10 % at the same peak RSS (see
 * bench/bench_scheduler.c for both goals). */
#define MALLOC_ARENAS 4

#define DESCRIPTION                                                                       \
    "stickyvm-scheduler is a drop-in for kube-scheduler: it assigns Pods to Nodes with\n" \
    "kube-scheduler's plugins, configuration file and command line, and keeps KubeVirt\n" \
    "VirtualMachines on the node they were pinned to (the StickyVM plugin)."

/* A failure after the command line was parsed, logged as kube's cli.Run
 * logs it: E... "command failed" err="...". */
static void command_failed(const char *err, int rc)
{
    KLOG_ERRORS(err && err[0] ? err : kube_strerror(rc), "command failed");
}

/* The configuration options and the flags describe (scheduler/options.h). */
static int load_config(const sched_options *o, sched_config **out)
{
    char err[1024] = "";
    int rc = sched_features_apply(o->feature_gates, err, sizeof(err));

    if (rc == KUBE_OK)
        rc = sched_options_config(o, out, err, sizeof(err));
    if (rc != KUBE_OK)
        command_failed(err, rc);
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
        KLOG_ERRORS("writing the file failed", "command failed", "path", path);
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

static int make_clients(app *a, const char *master)
{
    const sched_client_connection *cc = &a->cfg->client_connection;
    kube_client_options o;
    kube_leader_config lc;
    char err[1024] = "";
    int rc = kube_config_load(cc->kubeconfig, &a->kc, err, sizeof(err));

    if (rc == KUBE_OK && master && *master)
        rc = kube_config_set_server(a->kc, master, err, sizeof(err));
    if (rc != KUBE_OK) {
        command_failed(err, rc);
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

/* Gives back the file-backed pages used only once (kube/util/residency.h):
 * first when start-up is done and no request has gone out yet (the loader,
 * OpenSSL's and GnuTLS's set-up, flag and configuration parsing), then once
 * the informers have synced (the lists, the first TLS handshakes), before
 * the binding cycles grow the caches: about 6-7 MB of peak RSS at 5000
 * nodes. The residency contract holds at both points: every library is
 * loaded by then (NSS modules by the first connection, before the lists),
 * and neither daemon maps or unmaps files or unloads libraries. A failure
 * only costs that memory. */
static void release_startup_pages(void)
{
    size_t kib = 0;
    int rc = kube_residency_release_file_pages(&kib);

    if (rc != KUBE_OK)
        KLOG_V(2, "start-up pages not released: %s", kube_strerror(rc));
    else
        KLOG_V(4, "released %zu KiB of start-up file pages", kib);
}

static int start(app *a, const sched_options *o)
{
    sched_scheduler_options so;
    sched_server_options vo;
    char err[1024] = "";
    int rc = make_clients(a, o->master);

    if (rc != KUBE_OK)
        return rc;
    memset(&so, 0, sizeof(so));
    so.config = a->cfg;
    so.client = a->client;
    so.leader_client = a->leader_client;
    so.on_leadership_lost = on_lease_lost;
    so.pod_max_in_unschedulable_ms = o->pod_max_in_unschedulable_ms;
    rc = sched_scheduler_new(&so, &a->sched, err, sizeof(err));
    if (rc == KUBE_OK && o->serving.secure_port != 0) { /* 0: no HTTPS, as kube-scheduler */
        memset(&vo, 0, sizeof(vo));
        vo.serving = &o->serving;
        vo.client = a->client;
        vo.metrics = sched_scheduler_metrics(a->sched);
        vo.ready = scheduler_ready;
        vo.ud = a->sched;
        vo.leader = sched_scheduler_leader(a->sched);
        vo.informers = sched_scheduler_informers(a->sched);
        vo.config = a->cfg;
        vo.pods = scheduler_pods;
        vo.pods_ud = a->sched;
        rc = sched_server_new(&vo, &a->server, err, sizeof(err));
    }
    if (rc == KUBE_OK)
        release_startup_pages();
    if (rc == KUBE_OK)
        rc = sched_scheduler_start(a->sched);
    if (rc != KUBE_OK)
        command_failed(err, rc);
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

/* Waits for SIGTERM/SIGINT (0) or the lost Lease (1). Until the informers
 * have synced it wakes every SYNC_POLL_MS; once they have, the pages the
 * lists and the first connections touched only once leave (as at start,
 * release_startup_pages()): the caches are full then, and the scheduling
 * cycles map back only what they use. */
static int wait_for_signal(app *a, const sigset_t *set)
{
    struct timespec poll = {0, SYNC_POLL_MS * 1000000L};
    int released = 0;

    for (;;) {
        int sig = released ? sigwaitinfo(set, NULL) : sigtimedwait(set, NULL, &poll);
        int err = sig < 0 ? errno : 0;
        if (err == EAGAIN && sched_scheduler_synced(a->sched)) {
            release_startup_pages();
            released = 1;
        }
        if (err == EAGAIN || err == EINTR)
            continue;
        if (sig < 0)
            return 1;
        if (sig == SIGTERM || sig == SIGINT) {
            KLOG_INFO("received signal %d, shutting down", sig);
            return 0;
        }
        if (sig == SIGUSR1 && atomic_load(&lease_lost))
            return 1;
    }
}

/* The command line (kube/util/cli.h): KUBE_CLI_CONTINUE to run, or the
 * exit status. */
static int parse_command_line(sched_options *o, int argc, char **argv)
{
    kube_flag_set sets[KUBE_CLI_MAX_SETS];
    kube_flags_hooks hooks = {NULL, NULL, sched_options_seen, o};
    kube_cli cli = {"stickyvm-scheduler", DESCRIPTION, sets, 0, &hooks, &o->logs};
    char err[512] = "";
    int code;

    if (sched_options_init(o) != KUBE_OK) {
        fprintf(stderr, "Error: %s\n", kube_strerror(KUBE_ENOMEM));
        return 1;
    }
    cli.nsets = sched_options_flag_sets(o, sets, KUBE_CLI_MAX_SETS - 1);
    code = kube_cli_parse(&cli, argc, argv);
    if (code == KUBE_CLI_CONTINUE &&
        kube_serving_options_validate(&o->serving, err, sizeof(err)) != KUBE_OK) {
        command_failed(err, KUBE_ECONFIG);
        code = 1;
    }
    return code;
}

int main(int argc, char **argv)
{
    sched_options o;
    app a;
    sigset_t set;
    int rc, code;

    memset(&a, 0, sizeof(a));
    mallopt(M_ARENA_MAX, MALLOC_ARENAS);
    code = parse_command_line(&o, argc, argv);
    if (code != KUBE_CLI_CONTINUE || load_config(&o, &a.cfg) != KUBE_OK) {
        sched_options_free(&o);
        return code == KUBE_CLI_CONTINUE ? 1 : code;
    }
    if (o.write_config_to) {
        rc = write_config(a.cfg, o.write_config_to);
        sched_config_free(a.cfg);
        sched_options_free(&o);
        return rc == KUBE_OK ? 0 : 1;
    }
    KLOG_INFOS("Starting stickyvm-scheduler", "version", kube_version());
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    code = 1;
    if (start(&a, &o) == KUBE_OK)
        code = wait_for_signal(&a, &set);
    shutdown_app(&a);
    sched_options_free(&o);
    return code;
}
