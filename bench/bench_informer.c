/*
 * bench/bench_informer.c - how fast and how lean the informers sync a large
 * cluster: the emulator is seeded with 5000 nodes and 10000 pods, then a
 * pods and a nodes informer on one hub list (paginated, streamed) and
 * start watching. Prints the time from kube_hub_start() to synced, the peak
 * RSS of this process (VmHWM) and its CPU time until synced. For scale it also prints the
 * peak RSS before the informers started (shared libraries, TLS, harness),
 * the heap the informers hold once synced (glibc mallinfo2: the decoded
 * objects and the stores), the block of one decoded pod and node, and what
 * the shared pool of kube/codec/intern.h holds.
 *
 * The peak is read once synced, while every object is held, and again
 * before the scheduler's caches below are built, and the larger is
 * printed: the kernel folds the current RSS into VmHWM lazily.
 *
 * Then, from the synced objects, what the scheduler keeps per node and per
 * pod beside the informers, measured by call site as the heap (glibc
 * mallinfo2, every arena, mmapped blocks included) before and after each
 * call over all objects, divided by their number:
 *   a node   sched_cache_add_node() (the cache's node info, its recency
 *            item, the node tree), then sched_cache_update_snapshot() (the
 *            cycle's copy of the node info);
 *   a pod    fw_pod_info_new() + sched_cache_assume_pod() on a node (the
 *            pod info, the pod state, the node info's arrays), then the
 *            snapshot's update (its copies of those arrays).
 * The scheduling queue's entry of a pending pod is not in it (it needs the
 * profiles); heaptrack on the scheduler gave it as about 240 bytes a pod.
 * And the fixed cost: this process's resident memory before the informers
 * start (its binary, the libraries, TLS set up, the harness's threads),
 * split into file-backed and anonymous pages (/proc/self/smaps_rollup).
 *
 *   bench-informer [--nodes N] [--pods N] [--page-size N] [--v N]
 *
 * Goal on the project machine: under 1 s and under 20 MB.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
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
#include "framework/types.h"

typedef struct bench_args {
    int nodes, pods, page_size, verbosity;
} bench_args;

/* What run() measures once synced. */
typedef struct bench_figures {
    size_t n_pods, n_nodes;
    double secs;
    double cpu, user, sys; /* this process's CPU time once synced */
    unsigned long errors;
    size_t heap;                  /* mallinfo2 in-use bytes */
    long peak_kib;                /* VmHWM with every object held */
    size_t pod_bytes, node_bytes; /* malloc_usable_size of one decoded object */
    /* Heap bytes per object by call site (the top); -1 when not measured. */
    double node_cache, node_snapshot, pod_cache, pod_snapshot;
} bench_figures;

/* Fills the scheduler's cache from the informers' objects. */
typedef struct fill_ctx {
    sched_cache *cache;
    size_t n_nodes, i;
    int rc;
} fill_ctx;

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

/* In-use heap bytes of every arena, mmapped blocks included. */
static double heap_now(void)
{
    struct mallinfo2 mi = mallinfo2();

    return (double)mi.uordblks + (double)mi.hblkhd;
}

static void add_node(void *ud, kube_object *obj)
{
    fill_ctx *f = ud;
    kube_node *node = (kube_node *)kube_node_from(obj);

    if (node && f->rc == KUBE_OK)
        f->rc = sched_cache_add_node(f->cache, node, NULL);
}

/* Assumes the pod on node-(i mod nodes), as a binding cycle would. */
static void assume_pod(void *ud, kube_object *obj)
{
    fill_ctx *f = ud;
    kube_pod *pod = (kube_pod *)kube_pod_from(obj);
    fw_pod_info *pi = NULL;
    char node[32];

    if (!pod || f->rc != KUBE_OK || f->n_nodes == 0)
        return;
    snprintf(node, sizeof(node), "node-%zu", f->i++ % f->n_nodes);
    f->rc = fw_pod_info_new(pod, &pi);
    if (f->rc == KUBE_OK)
        f->rc = sched_cache_assume_pod(f->cache, pi, node);
    fw_pod_info_unref(pi);
}

/* The scheduler's caches built from the synced objects, the heap measured
 * around each call (the top). KUBE_OK or the first error. */
static int measure_caches(kube_informer *pods, kube_informer *nodes, bench_figures *f)
{
    fill_ctx fc = {NULL, f->n_nodes, 0, KUBE_OK};
    fw_snapshot *snap = fw_snapshot_new();
    double h0, h1, h2, h3, h4;
    int rc = snap ? sched_cache_new(NULL, &fc.cache) : KUBE_ENOMEM;

    h0 = heap_now();
    if (rc == KUBE_OK) {
        kube_informer_foreach(nodes, add_node, &fc);
        rc = fc.rc;
    }
    h1 = heap_now();
    if (rc == KUBE_OK)
        rc = sched_cache_update_snapshot(fc.cache, snap);
    h2 = heap_now();
    if (rc == KUBE_OK) {
        kube_informer_foreach(pods, assume_pod, &fc);
        rc = fc.rc;
    }
    h3 = heap_now();
    if (rc == KUBE_OK)
        rc = sched_cache_update_snapshot(fc.cache, snap);
    h4 = heap_now();
    if (rc == KUBE_OK && f->n_nodes && f->n_pods) {
        f->node_cache = (h1 - h0) / (double)f->n_nodes;
        f->node_snapshot = (h2 - h1) / (double)f->n_nodes;
        f->pod_cache = (h3 - h2) / (double)f->n_pods;
        f->pod_snapshot = (h4 - h3) / (double)f->n_pods;
    }
    fw_snapshot_free(snap);
    sched_cache_free(fc.cache);
    return rc;
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
    f->cpu = bench_cpu_seconds(&f->user, &f->sys);
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
        long peak = bench_peak_rss_kib();
        if (peak > f->peak_kib)
            f->peak_kib = peak;
        rc = measure_caches(pods, nodes, f);
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
    double cpu0, user0, sys0;
    long rss0 = 0, peak, frss = -1, fanon = -1, fthreads = -1;
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
    bench_rss_kinds_kib(&frss, &fanon, &fthreads);
    heap0 = mallinfo2().uordblks;
    cpu0 = bench_cpu_seconds(&user0, &sys0);
    if (rc == KUBE_OK)
        rc = run(client, &a, &f);
    peak = f.peak_kib; /* read before the caches were built (the top) */
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
        printf("fixed cost before the informers: %.1f MB resident = %.1f MB file-backed "
               "(binary, libraries) + %.1f MB anonymous (heap, TLS, %ld threads' stacks)\n",
               frss / 1024.0, (frss - fanon) / 1024.0, fanon / 1024.0, fthreads);
        printf("scheduler caches, heap by call site: a node %.0f bytes (cache %.0f: "
               "sched_cache_add_node, snapshot %.0f: sched_cache_update_snapshot), a pod "
               "%.0f (cache %.0f: fw_pod_info_new + sched_cache_assume_pod, snapshot %.0f); "
               "beside the informers' decoded objects and stores\n",
               f.node_cache + f.node_snapshot, f.node_cache, f.node_snapshot,
               f.pod_cache + f.pod_snapshot, f.pod_cache, f.pod_snapshot);
        printf("CPU time during sync: %.3f s (user %.3f, sys %.3f); whole process %.3f s\n",
               f.cpu - cpu0, f.user - user0, f.sys - sys0, f.cpu);
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
