/*
 * bench/bench_stickyvm.c - what StickyVM costs per pod. The emulator is
 * seeded with 1000 nodes; the bench plays virt-controller for 1000 VMs
 * (VM, then its VMI, then its virt-launcher pod with schedulerName
 * stickyvm), runs stickyvm-scheduler in-process with the profile of the
 * example configuration (leader election off), and restarts every VM once (pod and
 * VMI deleted, VMI and pod recreated). For each phase it prints, per pod:
 *   - the API requests the scheduler made, from the emulator's counters
 *     (goal: first placement 1 VM write and 0 reads; re-placement nothing
 *     beyond the bind and its Scheduled event);
 *   - StickyVM's Filter calls (goal for a pinned pod: 1);
 *   - the scheduler's CPU time (every thread but the bench's own, which
 *     creates and deletes the objects).
 * The scheduler's client has no rate limit (qps 0) so the figures measure
 * work, not throttling.
 *
 * With --pods N, another case instead: VMI updates of VMs StickyVM does
 * not place. The cluster holds N pods: --foreign-vms VMs (VM, VMI Running on a
 * node, and a bound virt-launcher pod with schedulerName default-scheduler)
 * and bound pods of no VM for the rest. Once the scheduler is synced and
 * quiet, the bench writes --updates VMI status updates (round-robin over
 * the VMIs, as virt-handler writes them, each acknowledged before the
 * next) and prints the scheduler's CPU per update, which must not follow
 * N (within 1.5x from 5,000 to 50,000 pods). The updates are sent from the
 * bench's own thread (excluded), one connection each; the pin status
 * refresh, a walk of every pod, is pushed out of the measurement.
 *
 *   bench-stickyvm [--vms N] [--nodes N] [--v N]
 *   bench-stickyvm --pods N [--foreign-vms N] [--updates N] [--nodes N]
 */
#include <dirent.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/flags.h"
#include "common/procstat.h"
#include "config/config.h"
#include "kube/transport/config_testing.h"
#include "plugins/registry.h"
#include "framework/framework.h"
#include "harness.h"
#include "kube/transport/api.h"
#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/util/clock.h"
#include "kube/transport/config.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "pins/controller_testing.h"
#include "plugins/plugins.h"
#include "plugins/stickyvm/stickyvm.h"
#include "scheduler.h"
#include "scheduler_testing.h"

#define NS "default"
#define PHASE_TIMEOUT_MS 600000

/* manifests/scheduler/stickyvm-scheduler-config.yaml, leader election off. */
static const char sched_yaml[] = "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                 "kind: KubeSchedulerConfiguration\n"
                                 "leaderElection:\n"
                                 "  leaderElect: false\n"
                                 "profiles:\n"
                                 "  - schedulerName: stickyvm\n"
                                 "    plugins:\n"
                                 "      preFilter:\n"
                                 "        enabled: [{name: StickyVM}]\n"
                                 "      filter:\n"
                                 "        enabled: [{name: StickyVM}]\n"
                                 "      postBind:\n"
                                 "        enabled: [{name: StickyVM}]\n";

typedef struct bench_args {
    int vms, nodes, verbosity;
    int pods, foreign_vms, updates; /* the VMI-update case when pods > 0 */
} bench_args;

/* StickyVM with its Filter and PostBind counted. */
static atomic_long g_filter_calls, g_post_binds;

static fw_status *counting_filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pi,
                                  const fw_node_info *ni)
{
    atomic_fetch_add_explicit(&g_filter_calls, 1, memory_order_relaxed);
    return plugin_stickyvm.filter(self, cs, pi, ni);
}

static void counting_post_bind(void *self, fw_cycle_state *cs, const fw_pod_info *pi,
                               const char *node)
{
    plugin_stickyvm.post_bind(self, cs, pi, node);
    atomic_fetch_add(&g_post_binds, 1);
}

static const fw_plugin_desc *g_list[64];
static fw_plugin_desc g_sticky;

static fw_registry counting_registry(void)
{
    const fw_registry *def = plugin_registry_in_tree();
    g_sticky = plugin_stickyvm;
    g_sticky.filter = counting_filter;
    g_sticky.post_bind = counting_post_bind;
    for (size_t i = 0; i < def->n && i < 64; i++)
        g_list[i] = def->plugins[i] == &plugin_stickyvm ? &g_sticky : def->plugins[i];
    return (fw_registry){g_list, def->n < 64 ? def->n : 64, NULL};
}

static int parse_args(int argc, char **argv, bench_args *a)
{
    static const kube_flag flags[] = {
        {"vms", KUBE_FLAG_INT, offsetof(bench_args, vms), 1, 1000000, NULL, "VMs", NULL},
        {"nodes", KUBE_FLAG_INT, offsetof(bench_args, nodes), 1, 1000000, NULL, "nodes", NULL},
        {"v", KUBE_FLAG_INT, offsetof(bench_args, verbosity), 0, 10, NULL, "log verbosity", NULL},
        {"pods", KUBE_FLAG_INT, offsetof(bench_args, pods), 0, 1000000, NULL,
         "pods in the cluster: the VMI-update case (0: the placement phases)", NULL},
        {"foreign-vms", KUBE_FLAG_INT, offsetof(bench_args, foreign_vms), 1, 1000000, NULL,
         "VMs of default-scheduler in the VMI-update case", NULL},
        {"updates", KUBE_FLAG_INT, offsetof(bench_args, updates), 1, 10000000, NULL,
         "VMI status updates in the VMI-update case", NULL},
    };
    int rc = bench_flags_parse(flags, sizeof(flags) / sizeof(flags[0]), argc, argv, a);

    if (rc == KUBE_OK && a->pods > 0 && a->pods < a->foreign_vms)
        return KUBE_EINVAL;
    return rc == KUBE_OK && (a->vms <= 0 || a->nodes <= 0) ? KUBE_EINVAL : rc;
}

static int make_client(kube_config *cfg, kube_client **out)
{
    kube_client_options o;
    kube_client_options_default(&o);
    o.qps = 0;
    return kube_client_new(cfg, &o, out);
}

/* ------------------------------------------------------------------ */
/* Playing virt-controller                                             */
/* ------------------------------------------------------------------ */

static int create(kube_client *c, const kube_resource *r, const char *text, char *uid, size_t n)
{
    cJSON *body = cJSON_Parse(text), *out = NULL;
    kube_status st;
    int rc = body ? kube_api_create(c, r, NS, body, &out, &st) : KUBE_ENOMEM;
    if (rc == KUBE_OK && uid) {
        const cJSON *u = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(out, "metadata"), "uid");
        kube_strlcpy(uid, cJSON_IsString(u) ? u->valuestring : "", n);
    }
    if (rc != KUBE_OK)
        fprintf(stderr, "create %s: %s (%s)\n", r->plural, kube_strerror(rc), st.message);
    cJSON_Delete(body);
    cJSON_Delete(out);
    return rc;
}

static int create_vm(kube_client *c, int i, char *uid, size_t n)
{
    char text[512];
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\",\"metadata\":{"
             "\"name\":\"vm-%04d\"},\"spec\":{\"running\":true,\"template\":{\"spec\":{"
             "\"schedulerName\":\"stickyvm\"}}}}",
             i);
    return create(c, &KUBE_RES_VMS, text, uid, n);
}

static int create_vmi(kube_client *c, int i, const char *vm_uid, char *uid, size_t n)
{
    char text[768];
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstance\","
             "\"metadata\":{\"name\":\"vm-%04d\",\"ownerReferences\":[{\"apiVersion\":"
             "\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\",\"name\":\"vm-%04d\",\"uid\":"
             "\"%s\",\"controller\":true,\"blockOwnerDeletion\":true}]},\"spec\":{}}",
             i, i, vm_uid);
    return create(c, &KUBE_RES_VMIS, text, uid, n);
}

static int create_pod(kube_client *c, int i, int round, const char *vmi_uid)
{
    char text[1536];
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
             "\"virt-launcher-vm-%04d-r%04d\",\"labels\":{\"kubevirt.io\":\"virt-launcher\","
             "\"kubevirt.io/created-by\":\"%s\",\"vm.kubevirt.io/name\":\"vm-%04d\"},"
             "\"ownerReferences\":[{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":"
             "\"VirtualMachineInstance\",\"name\":\"vm-%04d\",\"uid\":\"%s\",\"controller\":"
             "true,\"blockOwnerDeletion\":true}]},\"spec\":{\"schedulerName\":\"stickyvm\","
             "\"containers\":[{\"name\":\"compute\",\"image\":"
             "\"quay.io/kubevirt/virt-launcher:v1.1.0\",\"resources\":{\"requests\":{\"cpu\":"
             "\"100m\",\"memory\":\"300Mi\",\"devices.kubevirt.io/kvm\":\"1\"},\"limits\":{"
             "\"devices.kubevirt.io/kvm\":\"1\"}}}]}}",
             i, round, vmi_uid, i, i, vmi_uid);
    return create(c, &KUBE_RES_PODS, text, NULL, 0);
}

static int delete_named(kube_client *c, const kube_resource *r, const char *name)
{
    kube_status st;
    int rc = kube_api_delete(c, r, NS, name, &st);
    if (rc != KUBE_OK)
        fprintf(stderr, "delete %s %s: %s\n", r->plural, name, kube_strerror(rc));
    return rc;
}

/* ------------------------------------------------------------------ */
/* Measuring                                                           */
/* ------------------------------------------------------------------ */

typedef struct mark {
    int64_t wall_ms;
    double cpu, main_cpu;
    long filters, binds;
} mark;

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static mark mark_now(void)
{
    mark m = {kube_now_ms(), bench_cpu_seconds(NULL, NULL), thread_cpu(),
              atomic_load(&g_filter_calls), atomic_load(&g_post_binds)};
    return m;
}

static int wait_post_binds(long want)
{
    int64_t deadline = kube_now_ms() + PHASE_TIMEOUT_MS;
    while (atomic_load(&g_post_binds) < want) {
        if (kube_now_ms() > deadline) {
            fprintf(stderr, "timed out: %ld of %ld pods bound\n", atomic_load(&g_post_binds), want);
            return KUBE_ETIMEDOUT;
        }
        usleep(20000);
    }
    return KUBE_OK;
}

/* Waits until the emulator's request total stops moving for 500 ms (the
 * event recorder sends asynchronously), at most 30 s. */
static void wait_quiet(harness *h)
{
    int64_t deadline = kube_now_ms() + 30000, last = -1, since = kube_now_ms();
    while (kube_now_ms() < deadline) {
        cJSON *c = NULL;
        int64_t total = -1;
        if (harness_counters(h, &c) == KUBE_OK) {
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "total");
            total = cJSON_IsNumber(t) ? (int64_t)t->valuedouble : -1;
        }
        cJSON_Delete(c);
        if (total != last) {
            last = total;
            since = kube_now_ms();
        } else if (kube_now_ms() - since >= 500) {
            return;
        }
        usleep(100000);
    }
}

/* Requests the scheduler makes, by emulator counter key. */
static const char *const sched_keys[] = {
    "get virtualmachines",
    "get virtualmachineinstances",
    "patch virtualmachines",
    "create pods/binding",
    "create events",
    /* Scheduled (+ Pinned) */ "patch events",
    "patch pods/status",
    "get pods",
    "get nodes",
    NULL,
};

static void report(harness *h, const char *phase, int pods, const mark *a, int64_t bound_ms,
                   const mark *b)
{
    cJSON *counters = NULL;
    double secs = (double)(bound_ms - a->wall_ms) / 1000.0;
    double sched_cpu = (b->cpu - a->cpu) - (b->main_cpu - a->main_cpu);
    printf("== %s: %d pods bound in %.2f s (%.0f pods/s)\n", phase, pods, secs,
           secs > 0 ? pods / secs : 0.0);
    if (harness_counters(h, &counters) == KUBE_OK) {
        const cJSON *req = cJSON_GetObjectItemCaseSensitive(counters, "requests");
        double other = 0;
        const cJSON *it;
        for (int k = 0; sched_keys[k]; k++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, sched_keys[k]);
            printf("   %-30s %8.3f per pod\n", sched_keys[k],
                   cJSON_IsNumber(v) ? v->valuedouble / pods : 0.0);
        }
        cJSON_ArrayForEach(it, req)
        {
            int known = strncmp(it->string, "create ", 7) == 0 && !strstr(it->string, "/") &&
                        strcmp(it->string, "create events") != 0;
            known |= strncmp(it->string, "delete ", 7) == 0;
            known |= strncmp(it->string, "watch ", 6) == 0 || strncmp(it->string, "list ", 5) == 0;
            for (int k = 0; sched_keys[k]; k++)
                known |= strcmp(it->string, sched_keys[k]) == 0;
            if (!known)
                other += it->valuedouble;
        }
        printf("   %-30s %8.3f per pod\n", "other (scheduler)", other / pods);
        cJSON_Delete(counters);
    }
    printf("   StickyVM Filter calls          %8.3f per pod\n",
           (double)(b->filters - a->filters) / pods);
    printf("   scheduler CPU                  %8.1f us per pod (%.3f s)\n", sched_cpu * 1e6 / pods,
           sched_cpu);
}

/* ------------------------------------------------------------------ */
/* Phases                                                              */
/* ------------------------------------------------------------------ */

typedef struct bench {
    harness *h;
    kube_config *cfg;
    kube_client *client, *sched_client;
    sched_config *sched_cfg;
    sched_scheduler *s;
    fw_registry reg;
    char (*vm_uid)[64];
    char (*vmi_uid)[64];
    int n;
} bench;

static int setup_objects(bench *b)
{
    for (int i = 0; i < b->n; i++)
        if (create_vm(b->client, i, b->vm_uid[i], 64) != KUBE_OK ||
            create_vmi(b->client, i, b->vm_uid[i], b->vmi_uid[i], 64) != KUBE_OK)
            return KUBE_EIO;
    return KUBE_OK;
}

static int start_scheduler(bench *b)
{
    char err[512] = "";
    int rc = sched_config_load_string(sched_yaml, sizeof(sched_yaml) - 1, "bench", &b->sched_cfg,
                                      err, sizeof(err));
    if (rc == KUBE_OK)
        rc = fw_config_resolve(b->sched_cfg, &b->reg, err, sizeof(err));
    if (rc == KUBE_OK) {
        sched_scheduler_options o = {
            .config = b->sched_cfg, .client = b->sched_client, .registry = &b->reg};
        rc = sched_scheduler_new(&o, &b->s, err, sizeof(err));
    }
    if (rc == KUBE_OK)
        rc = sched_scheduler_start(b->s);
    if (rc == KUBE_OK)
        rc = sched_scheduler_wait_synced(b->s, 120000);
    if (rc != KUBE_OK)
        fprintf(stderr, "scheduler: %s %s\n", kube_strerror(rc), err);
    return rc;
}

static int first_placements(bench *b)
{
    mark a, z;
    harness_reset_counters(b->h);
    a = mark_now();
    for (int i = 0; i < b->n; i++)
        if (create_pod(b->client, i, 0, b->vmi_uid[i]) != KUBE_OK)
            return KUBE_EIO;
    int rc = wait_post_binds(b->n);
    int64_t bound_ms = kube_now_ms();
    wait_quiet(b->h);
    z = mark_now();
    if (rc == KUBE_OK)
        report(b->h, "first placement (VM unpinned: PostBind pins it)", b->n, &a, bound_ms, &z);
    return rc;
}

static int restart_one(bench *b, int i)
{
    char pod[64], vmi[32];
    snprintf(pod, sizeof(pod), "virt-launcher-vm-%04d-r%04d", i, 0);
    snprintf(vmi, sizeof(vmi), "vm-%04d", i);
    if (delete_named(b->client, &KUBE_RES_PODS, pod) ||
        delete_named(b->client, &KUBE_RES_VMIS, vmi) ||
        create_vmi(b->client, i, b->vm_uid[i], b->vmi_uid[i], 64) ||
        create_pod(b->client, i, 1, b->vmi_uid[i]))
        return KUBE_EIO;
    return KUBE_OK;
}

static int re_placements(bench *b)
{
    mark a, z;
    /* let the pins of the first phase reach the VM informer */
    sleep(1);
    harness_reset_counters(b->h);
    a = mark_now();
    for (int i = 0; i < b->n; i++)
        if (restart_one(b, i) != KUBE_OK)
            return KUBE_EIO;
    int rc = wait_post_binds(2L * b->n);
    int64_t bound_ms = kube_now_ms();
    wait_quiet(b->h);
    z = mark_now();
    if (rc == KUBE_OK)
        report(b->h, "re-placement (VM pinned: restart)", b->n, &a, bound_ms, &z);
    return rc;
}

/* ------------------------------------------------------------------ */
/* VMI updates of VMs StickyVM does not place                          */
/* ------------------------------------------------------------------ */

/* VM foreign-i (template scheduled by default-scheduler), its VMI Running
 * on node, and its launcher pod bound there. */
static int create_foreign(bench *b, int i, const char *node)
{
    char text[1536], vm_uid[64], vmi_uid[64];
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\",\"metadata\":{"
             "\"name\":\"foreign-%05d\"},\"spec\":{\"running\":true,\"template\":{\"spec\":{}}}}",
             i);
    int rc = create(b->client, &KUBE_RES_VMS, text, vm_uid, sizeof(vm_uid));
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstance\",\"metadata\":{"
             "\"name\":\"foreign-%05d\",\"ownerReferences\":[{\"apiVersion\":\"kubevirt.io/v1\","
             "\"kind\":\"VirtualMachine\",\"name\":\"foreign-%05d\",\"uid\":\"%s\",\"controller\":"
             "true}]},\"spec\":{},\"status\":{\"phase\":\"Running\",\"nodeName\":\"%s\"}}",
             i, i, vm_uid, node);
    if (rc == KUBE_OK)
        rc = create(b->client, &KUBE_RES_VMIS, text, vmi_uid, sizeof(vmi_uid));
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
             "\"virt-launcher-foreign-%05d\",\"labels\":{\"kubevirt.io\":\"virt-launcher\","
             "\"kubevirt.io/created-by\":\"%s\"},\"ownerReferences\":[{\"apiVersion\":"
             "\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstance\",\"name\":\"foreign-%05d\","
             "\"uid\":\"%s\",\"controller\":true}]},\"spec\":{\"schedulerName\":"
             "\"default-scheduler\",\"nodeName\":\"%s\",\"containers\":[{\"name\":\"compute\","
             "\"image\":\"quay.io/kubevirt/virt-launcher:v1.1.0\"}]},\"status\":{\"phase\":"
             "\"Running\"}}",
             i, vmi_uid, i, vmi_uid, node);
    return rc == KUBE_OK ? create(b->client, &KUBE_RES_PODS, text, NULL, 0) : rc;
}

/* A bound pod of no VM. */
static int create_filler(bench *b, int i, const char *node)
{
    char text[768];
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"filler-%06d\","
             "\"labels\":{\"app\":\"filler\"}},\"spec\":{\"schedulerName\":\"default-scheduler\","
             "\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\",\"image\":"
             "\"registry.invalid/pause:3.9\"}]},\"status\":{\"phase\":\"Running\"}}",
             i, node);
    return create(b->client, &KUBE_RES_PODS, text, NULL, 0);
}

static int seed_foreign(bench *b, const bench_args *a)
{
    char node[32];
    int rc = KUBE_OK;
    for (int i = 0; rc == KUBE_OK && i < a->foreign_vms; i++) {
        snprintf(node, sizeof(node), "node-%d", i % a->nodes);
        rc = create_foreign(b, i, node);
    }
    for (int i = 0; rc == KUBE_OK && i < a->pods - a->foreign_vms; i++) {
        snprintf(node, sizeof(node), "node-%d", i % a->nodes);
        rc = create_filler(b, i, node);
    }
    return rc;
}

/* CPU time of the process's threads by tid, from
 * /proc/self/task/TID/schedstat (nanoseconds, not clock ticks). */
typedef struct thread_times {
    int tid[256];
    int64_t ns[256];
    int n;
} thread_times;

static void threads_read(thread_times *t)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    t->n = 0;
    while (d && (e = readdir(d)) && t->n < 256) {
        char path[300];
        long long run = 0;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fscanf(f, "%lld", &run) == 1) {
            t->tid[t->n] = (int)strtol(e->d_name, NULL, 10);
            t->ns[t->n++] = run;
        }
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
}

/* The scheduler's CPU seconds from a to b: the threads alive at both (a
 * short-lived thread, such as curl's resolver of the bench's requests, is
 * left out), but the bench's own. */
static double sched_cpu_between(const thread_times *a, const thread_times *b)
{
    int self = (int)syscall(SYS_gettid);
    int64_t ns = 0;
    for (int i = 0; i < b->n; i++)
        for (int j = 0; j < a->n; j++)
            if (b->tid[i] == a->tid[j] && b->tid[i] != self)
                ns += b->ns[i] - a->ns[j];
    return (double)ns / 1e9;
}

/* Waits until the scheduler's CPU stays under 2 ms over 500 ms (at most
 * 120 s); *at receives the thread times then. */
static void wait_cpu_quiet(thread_times *at)
{
    int64_t deadline = kube_now_ms() + 120000;
    thread_times last;
    threads_read(&last);
    while (kube_now_ms() < deadline) {
        usleep(500000);
        threads_read(at);
        if (sched_cpu_between(&last, at) < 0.002)
            return;
        last = *at;
    }
}

/* One VMI status update of VMI foreign-i, as virt-handler writes them. */
static int update_vmi(bench *b, int i, int seq)
{
    char path[256], body[512];
    harness_response r = {0};
    snprintf(path, sizeof(path),
             "/apis/kubevirt.io/v1/namespaces/" NS "/virtualmachineinstances/foreign-%05d/status",
             i);
    snprintf(body, sizeof(body),
             "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
             "\"lastProbeTime\":null,\"reason\":\"Probe%d\"}]}}",
             seq);
    int rc = harness_request(b->h, NULL, "PATCH", path, "application/merge-patch+json", body, &r);
    if (rc == KUBE_OK && (r.status < 200 || r.status > 299)) {
        fprintf(stderr, "PATCH %s: %ld %s\n", path, r.status, r.body);
        rc = KUBE_EIO;
    }
    harness_response_free(&r);
    return rc;
}

static int vmi_updates(bench *b, const bench_args *a)
{
    int rc = seed_foreign(b, a);
    /* the pin status refresh walks every pod every 10 s: not per update */
    sched_pins_status_refresh_ms_set(3600000);
    if (rc == KUBE_OK)
        rc = start_scheduler(b);
    if (rc != KUBE_OK)
        return rc;
    static thread_times idle0, t0, t1; /* 4 KiB each: not on the stack */
    wait_cpu_quiet(&idle0);            /* the lists and the start's resync of every VM */
    int64_t idle_ms = kube_now_ms();
    sleep(3);
    threads_read(&t0);
    int64_t start_ms = kube_now_ms();
    double idle = sched_cpu_between(&idle0, &t0) / ((double)(start_ms - idle_ms) / 1000.0);
    for (int k = 0; rc == KUBE_OK && k < a->updates; k++)
        rc = update_vmi(b, k % a->foreign_vms, k);
    int64_t sent_ms = kube_now_ms() - start_ms;
    wait_cpu_quiet(&t1);
    double secs = (double)(kube_now_ms() - start_ms) / 1000.0;
    double cpu = sched_cpu_between(&t0, &t1), net = cpu - idle * secs;
    if (rc == KUBE_OK)
        printf("== VMI updates: %d pods (%d VMs of default-scheduler), %d updates sent in %.2f s\n"
               "   scheduler CPU                  %8.1f us per VMI update (%.3f s in %.2f s)\n"
               "   idle CPU                       %8.1f us per s (before the updates)\n"
               "   scheduler CPU less idle        %8.1f us per VMI update\n",
               a->pods, a->foreign_vms, a->updates, (double)sent_ms / 1000.0,
               cpu * 1e6 / a->updates, cpu, secs, idle * 1e6, net * 1e6 / a->updates);
    return rc;
}

static void teardown(bench *b)
{
    sched_scheduler_free(b->s);
    sched_config_free(b->sched_cfg);
    kube_client_free(b->sched_client);
    kube_client_free(b->client);
    kube_config_free(b->cfg);
    harness_stop(b->h);
    free(b->vm_uid);
    free(b->vmi_uid);
}

int main(int argc, char **argv)
{
    bench_args args = {1000, 1000, 0, 0, 2000, 4000};
    bench b = {0};
    harness_opts ho = HARNESS_OPTS_INIT;
    char err[256];
    if (parse_args(argc, argv, &args) != KUBE_OK)
        return 2;
    klog_set_verbosity(args.verbosity);
    b.n = args.vms;
    b.reg = counting_registry();
    b.vm_uid = calloc((size_t)b.n, sizeof(*b.vm_uid));
    b.vmi_uid = calloc((size_t)b.n, sizeof(*b.vmi_uid));
    ho.nodes = args.nodes;
    ho.history = 200000;
    int rc = b.vm_uid && b.vmi_uid ? harness_start(&ho, &b.h) : KUBE_ENOMEM;
    if (rc == KUBE_OK)
        rc = kube_config_from_file(harness_kubeconfig(b.h), &b.cfg, err, sizeof(err));
    if (rc == KUBE_OK && (rc = make_client(b.cfg, &b.client)) == KUBE_OK)
        rc = make_client(b.cfg, &b.sched_client);
    if (args.pods > 0) {
        printf("bench-stickyvm: VMI updates, %d pods, %d nodes\n", args.pods, args.nodes);
        rc = rc == KUBE_OK ? vmi_updates(&b, &args) : rc;
        printf("peak RSS %ld KiB\n", bench_peak_rss_kib());
        teardown(&b);
        return rc == KUBE_OK ? 0 : 1;
    }
    printf("bench-stickyvm: %d VMs, %d nodes\n", b.n, args.nodes);
    if (rc == KUBE_OK)
        rc = setup_objects(&b);
    if (rc == KUBE_OK)
        rc = start_scheduler(&b);
    if (rc == KUBE_OK)
        rc = first_placements(&b);
    if (rc == KUBE_OK)
        rc = re_placements(&b);
    printf("peak RSS %ld KiB\n", bench_peak_rss_kib());
    teardown(&b);
    return rc == KUBE_OK ? 0 : 1;
}
