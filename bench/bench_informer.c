/*
 * bench/bench_informer.c - how fast and how lean the informers sync a large
 * cluster: the emulator is seeded with 5000 nodes and 10000 pods, then a
 * pods and a nodes informer on one hub list (paginated, streamed) and
 * start watching. Prints the time from kube_hub_start() to synced, the peak
 * RSS of this process (VmHWM) and its CPU time. For scale it also prints the
 * peak RSS before the informers started (shared libraries, TLS, harness),
 * the heap the informers hold once synced (glibc mallinfo2: the decoded
 * objects and the stores), the block of one decoded pod and node, and what
 * the shared pool of kube/codec/intern.h holds.
 *
 * The peak is read once synced, while every object is held, and again at
 * exit, and the larger is printed: the kernel folds the current RSS into
 * VmHWM lazily, so a peak followed by frees (kube_hub_free) can read low.
 *
 *   bench-informer [--nodes N] [--pods N] [--page-size N] [--v N]
 *
 * Goal on the project machine: under 1 s and under 20 MB.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/procstat.h"
#include "harness.h"
#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/util/clock.h"
#include "kube/transport/config.h"
#include "kube/transport/config_testing.h"
#include "common/flags.h"
#include "kube/util/errors.h"
#include "kube/machinery/informer.h"
#include "kube/machinery/informer_testing.h"
#include "kube/codec/intern.h"
#include "kube/codec/intern_testing.h"
#include "kube/util/log.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"

typedef struct bench_args {
    int nodes, pods, page_size, verbosity;
} bench_args;

/* What run() measures once synced. */
typedef struct bench_figures {
    size_t n_pods, n_nodes;
    double secs;
    unsigned long errors;
    size_t heap;                  /* mallinfo2 in-use bytes */
    long peak_kib;                /* VmHWM with every object held */
    size_t pod_bytes, node_bytes; /* malloc_usable_size of one decoded object */
} bench_figures;

static int parse_args(int argc, char **argv, bench_args *a)
{
    static const kube_flag flags[] = {
        {"nodes", KUBE_FLAG_INT, offsetof(bench_args, nodes), 0, 1000000, NULL, "nodes", NULL},
        {"pods", KUBE_FLAG_INT, offsetof(bench_args, pods), 0, 1000000, NULL, "pods", NULL},
        {"page-size", KUBE_FLAG_INT, offsetof(bench_args, page_size), 0, 1000000, NULL,
         "list page size", NULL},
        {"v", KUBE_FLAG_INT, offsetof(bench_args, verbosity), 0, 10, NULL, "log verbosity", NULL},
    };
    return bench_flags_parse(flags, sizeof(flags) / sizeof(flags[0]), argc, argv, a);
}

static int make_client(harness *h, kube_config **cfg, kube_client **client)
{
    char err[256];
    kube_client_options o;
    int rc = kube_config_from_file(harness_kubeconfig(h), cfg, err, sizeof(err));

    if (rc != KUBE_OK) {
        fprintf(stderr, "kubeconfig: %s\n", err);
        return rc;
    }
    kube_client_options_default(&o); /* kube-scheduler's qps 50, burst 100 */
    return kube_client_new(*cfg, &o, client);
}

/* The heap block of the stored object ns/name, 0 when absent. */
static size_t object_bytes(kube_informer *inf, const char *ns, const char *name)
{
    kube_object *obj = kube_informer_get(inf, ns, name);
    size_t n = obj ? malloc_usable_size(obj) : 0;

    kube_object_unref(obj);
    return n;
}

/* Runs the two informers to sync; fills the figures. */
static int run(kube_client *client, const bench_args *a, bench_figures *f)
{
    kube_informer_options po = {
        .resource = &KUBE_RES_PODS, .codec = &kube_pod_codec, .page_size = a->page_size};
    kube_informer_options no = {
        .resource = &KUBE_RES_NODES, .codec = &kube_node_codec, .page_size = a->page_size};
    kube_informer *pods = NULL, *nodes = NULL;
    kube_informer_stats ps, ns;
    kube_hub *hub;
    int64_t t0;
    int rc = kube_hub_new(client, &hub);

    if (rc == KUBE_OK)
        rc = kube_hub_add_informer(hub, &po, NULL, &pods);
    if (rc == KUBE_OK)
        rc = kube_hub_add_informer(hub, &no, NULL, &nodes);
    t0 = kube_now_ns();
    if (rc == KUBE_OK)
        rc = kube_hub_start(hub);
    if (rc == KUBE_OK)
        rc = kube_hub_wait_synced(hub, 120000);
    f->secs = (double)(kube_now_ns() - t0) / 1e9;
    f->heap = mallinfo2().uordblks;
    f->peak_kib = bench_peak_rss_kib();
    if (rc == KUBE_OK) {
        f->n_pods = kube_informer_count(pods);
        f->n_nodes = kube_informer_count(nodes);
        kube_informer_stats_get(pods, &ps);
        kube_informer_stats_get(nodes, &ns);
        f->errors = ps.errors + ns.errors;
        f->pod_bytes = object_bytes(pods, "default", "pod-0");
        f->node_bytes = object_bytes(nodes, "", "node-0");
    }
    kube_hub_free(hub);
    return rc;
}

int main(int argc, char **argv)
{
    bench_args a = {5000, 10000, 0, 0};
    harness_opts ho = HARNESS_OPTS_INIT;
    harness *h = NULL;
    kube_config *cfg = NULL;
    kube_client *client = NULL;
    bench_figures f = {0};
    kube_intern_stats pool;
    double cpu0, cpu1, user0, user1, sys0, sys1;
    long rss0 = 0, peak;
    size_t heap0 = 0;
    int rc;

    if (parse_args(argc, argv, &a) != KUBE_OK)
        return 2;
    klog_set_verbosity(a.verbosity);
    ho.nodes = a.nodes;
    ho.pods = a.pods;
    ho.start_timeout_ms = 120000;
    rc = harness_start(&ho, &h);
    if (rc == KUBE_OK)
        rc = make_client(h, &cfg, &client);
    rss0 = bench_peak_rss_kib();
    heap0 = mallinfo2().uordblks;
    cpu0 = bench_cpu_seconds(&user0, &sys0);
    if (rc == KUBE_OK)
        rc = run(client, &a, &f);
    cpu1 = bench_cpu_seconds(&user1, &sys1);
    peak = bench_peak_rss_kib();
    if (f.peak_kib > peak)
        peak = f.peak_kib;
    kube_intern_stats_get(&pool);
    if (rc == KUBE_OK) {
        printf("informer sync: %zu pods + %zu nodes in %.3f s (goal < 1 s)\n", f.n_pods, f.n_nodes,
               f.secs);
        printf("peak RSS (VmHWM): %.1f MB (goal < 20 MB); %.1f MB before the informers "
               "started; heap held once synced: %.1f MB\n",
               peak / 1024.0, rss0 / 1024.0, (double)(f.heap - heap0) / (1024.0 * 1024.0));
        printf("decoded objects: %zu bytes a pod, %zu a node; shared pool: %zu entries, "
               "%zu bytes\n",
               f.pod_bytes, f.node_bytes, pool.entries, pool.bytes);
        printf("CPU time during sync: %.3f s (user %.3f, sys %.3f); whole process %.3f s\n",
               cpu1 - cpu0, user1 - user0, sys1 - sys0, cpu1);
        printf("decode/stream errors: %lu\n", f.errors);
        if (f.n_pods != (size_t)a.pods || f.n_nodes != (size_t)a.nodes)
            rc = KUBE_EINVAL;
    } else {
        fprintf(stderr, "bench-informer: %s\n", kube_strerror(rc));
    }
    kube_client_free(client);
    kube_config_free(cfg);
    harness_stop(h);
    return rc == KUBE_OK ? 0 : 1;
}
