/*
 * bench/bench_scheduler.c - stickyvm-scheduler against the API emulator.
 *
 * For each size (default 1000 nodes / 3000 pods, then 5000 / 10000; or the
 * pairs given as arguments: bench-scheduler NODES PODS [NODES PODS ...]):
 * the emulator is seeded with the nodes (32 cpu, 256Gi) and the pending
 * pods (schedulerName stickyvm, 100m / 128Mi), the stickyvm-scheduler
 * binary is started with profiles default-scheduler and stickyvm and no
 * client rate limit, and the run ends when the emulator has counted one
 * binding per pod and no pod is left unassigned.
 *
 * Figures, for the scheduler process alone (read from /proc/<pid>):
 *   throughput  pods / (all bound - informers synced), pods/s
 *   cpu/pod     (utime + stime) / pods, whole run (lists and startup
 *               included), and the part after the informers synced
 *   peak RSS    VmHWM
 *   writes      binds and Event creates/patches the emulator counted by
 *               then (to turn per-pod figures into per-request ones)
 *   by thread   cpu/pod of each thread name (sched-cycle, sched-bind,
 *               kube-informers, kube-recorder, ...; same-named threads
 *               summed), read just before the scheduler is stopped
 *   Scheduled   the occurrences of reason Scheduled in the Events the
 *               emulator holds (an Event counts 1, or its series.count),
 *               against the pods bound, once the emulator has counted no
 *               Event write for EVENTS_QUIET_MS after the last bind (at
 *               most EVENTS_WAIT_MS); the run FAILS (exit 1) when they
 *               differ: every binding has its Scheduled event, as
 *               kube-scheduler writes them. The scheduler's CPU until then
 *               is given too ("with events"): the figures above stop at
 *               the last bind, before the recorder's backlog is written
 * and one for the emulator, which shares the machine's cores:
 *   server CPU  its utime + stime / pods from sync until all were bound
 *               (what the throughput on a small machine also depends on)
 * Goals: <= 0.3 ms CPU/pod at 1000 nodes, <= 0.5 ms at 5000, <= 40 MB
 * peak RSS at 5000 / 10000. kube-scheduler v1.23 does 3.6-3.8 ms/pod and
 * 190-321 MB on the same workload.
 *
 * bench-scheduler --http1 [...]: the emulator offers only HTTP/1.1 (ALPN), so
 * the scheduler's requests use keep-alive connections instead of one
 * multiplexed HTTP/2 connection; by default both sides speak h2, as with
 * a real kube-apiserver.
 *
 * bench-scheduler --token [...]: the scheduler authenticates with a made-up
 * JWT-shaped bearer token of BENCH_TOKEN_LEN bytes (a ServiceAccount
 * token's size), which the emulator accepts through its token path,
 * instead of the admin client certificate: every request then carries
 * the Authorization line, as in a cluster.
 *
 * bench-scheduler --scheduler PATH [...]: runs the scheduler binary PATH
 * (default: the one built beside the bench), so that two builds can be
 * measured alternately against the same emulator and bench.
 *
 * bench-scheduler --mixed [NODES PODS] (default 1000 / 3000): the mixed
 * workload of the scheduler issue. The pods are VM-like (virt-launcher
 * labels, 100m / 128Mi) and created through the API before the scheduler
 * starts: every fifth pod carries a required pod anti-affinity on its
 * group's label (groups of MIXED_AA_GROUP, topologyKey hostname: one VM of
 * a group per node), every fifth pod after it a topology spread over zone
 * (maxSkew 1, DoNotSchedule) and hostname (maxSkew 1, ScheduleAnyway) among
 * its group (groups of MIXED_TS_GROUP); the rest are plain. Goal: <= 1 ms
 * CPU/pod at 1000 nodes.
 */
#include <curl/curl.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/rand.h"

#ifndef STICKYVM_BINARY_DIR
#define STICKYVM_BINARY_DIR "."
#endif

#define RUN_TIMEOUT_MS (15 * 60 * 1000)
#define EVENTS_QUIET_MS 2000 /* no Event write for this long: the recorder is done */
#define EVENTS_WAIT_MS 60000 /* at most this long after the last bind */
#define EVENTS_PATH "/apis/events.k8s.io/v1/events"
#define MIXED_AA_GROUP 10
#define MIXED_TS_GROUP 20
#define PODS_PATH "/api/v1/namespaces/default/pods"
#define MIXED_SELECTOR "\"labelSelector\":{\"matchLabels\":{\"vm.group\":\"%s\"}}"

#define MAX_THREAD_NAMES 16
#define BENCH_TOKEN_LEN 1024
#define BENCH_USAGE \
    "usage: bench-scheduler [--mixed] [--http1] [--token] [--scheduler PATH] [NODES PODS]...\n"

/* What the command line asks for besides the sizes. */
typedef struct bench_opts {
    int mixed, http1, token;
    const char *scheduler; /* binary path, or NULL: the one built here */
} bench_opts;

typedef struct thread_cpu {
    char name[32];
    double cpu_s, sys_s; /* utime + stime, stime */
    int threads;
} thread_cpu;

typedef struct result {
    int nodes, pods;
    double sync_s, run_s, throughput;
    double cpu_total_s, cpu_after_sync_s;
    double server_cpu_s; /* the emulator's, from sync until all were bound */
    long peak_rss_kib;
    thread_cpu threads[MAX_THREAD_NAMES];
    int n_threads;
    int64_t binds, event_writes; /* as the emulator counted them when all were bound */
    int64_t event_writes_end;    /* the same once the recorder was done */
    int64_t scheduled_events;    /* occurrences of reason Scheduled the emulator holds */
    double events_s;             /* from the last bind until the recorder was done */
    double cpu_events_s;         /* the scheduler's CPU, whole run, until then */
} result;

static int64_t bench_now_ms(void)
{
    return kube_now_ms();
}

/* A made-up JWT of BENCH_TOKEN_LEN bytes: a base64url header, a payload
 * and an RS256-sized signature of base64url characters (never verified). */
static void bench_token(char *tok, size_t n)
{
    static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    static const char header[] = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImJlbmNoIn0.";
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    size_t sig = n - 1 - 342; /* the '.' before a 256-byte signature */

    memcpy(tok, header, sizeof(header) - 1);
    for (size_t i = sizeof(header) - 1; i < n - 1; i++)
        tok[i] = i == sig ? '.' : b64url[kube_rand_next(&x) & 63];
    tok[n - 1] = '\0';
}

/* The kubeconfig the scheduler runs with: the admin's client certificate,
 * or (token) a bearer token identity of system:masters. */
static int bench_kubeconfig(harness *h, int token, const char **out)
{
    static const char *const groups[] = {"system:masters"};
    char tok[BENCH_TOKEN_LEN + 1];
    const harness_identity *id;
    int rc;

    *out = harness_kubeconfig(h);
    if (!token)
        return KUBE_OK;
    bench_token(tok, sizeof(tok));
    rc = harness_add_given_token_user(h, "system:serviceaccount:kube-system:stickyvm-scheduler",
                                      groups, 1, tok, &id);
    if (rc == KUBE_OK)
        *out = id->kubeconfig;
    return rc;
}

static int write_config(harness *h, const char *kubeconfig, char *path, size_t n)
{
    FILE *f;

    snprintf(path, n, "%s/bench-scheduler.yaml", harness_data_dir(h));
    f = fopen(path, "w");
    if (!f)
        return KUBE_EIO;
    fprintf(f,
            "apiVersion: kubescheduler.config.k8s.io/v1\n"
            "kind: KubeSchedulerConfiguration\n"
            "clientConnection:\n"
            "  kubeconfig: %s\n"
            "  qps: 100000\n"
            "  burst: 100000\n"
            "leaderElection:\n"
            "  leaderElect: false\n"
            "profiles:\n"
            "- schedulerName: default-scheduler\n"
            "- schedulerName: stickyvm\n",
            kubeconfig);
    return fclose(f) == 0 ? KUBE_OK : KUBE_EIO;
}

static pid_t spawn_scheduler(harness *h, const char *config, int port, const char *scheduler)
{
    char bin[512], log[512], port_s[16];
    pid_t pid;

    if (scheduler)
        snprintf(bin, sizeof(bin), "%s", scheduler);
    else
        snprintf(bin, sizeof(bin), "%s/stickyvm-scheduler", STICKYVM_BINARY_DIR);
    snprintf(log, sizeof(log), "%s/scheduler.log", harness_data_dir(h));
    snprintf(port_s, sizeof(port_s), "%d", port);
    pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 2);
            dup2(fd, 1);
            close(fd);
        }
        execl(bin, bin, "--config", config, "--secure-port", port_s, "--bind-address", "127.0.0.1",
              (char *)NULL);
        _exit(127);
    }
    return pid;
}

static size_t discard(char *d, size_t s, size_t n, void *ud)
{
    (void)d;
    (void)ud;
    return s * n;
}

/* Whether the scheduler answers /readyz with 200. The caller's handle c is
 * reused across polls, so its connection is kept alive: a new TLS
 * handshake per poll would be counted as scheduler CPU. */
static int ready(CURL *c, int port)
{
    char url[128];
    long code = 0;

    snprintf(url, sizeof(url), "https://127.0.0.1:%d/readyz", port);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 2000L);
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    return code == 200;
}

/* utime + stime in seconds from a /proc stat file, -1 when unreadable;
 * *sys (may be NULL) receives the stime part. */
static double stat_cpu(const char *path, double *sys)
{
    char buf[2048];
    FILE *f;
    size_t n;
    char *p;
    unsigned long long ut = 0, st = 0;

    f = fopen(path, "r");
    if (!f)
        return -1;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')');
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    if (sys)
        *sys = (double)st / (double)sysconf(_SC_CLK_TCK);
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* utime + stime of pid in seconds, -1 when unreadable. */
static double proc_cpu(pid_t pid)
{
    char path[64];

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    return stat_cpu(path, NULL);
}

/* Reads a thread's name (comm) into name; "?" when unreadable. */
static void thread_name(pid_t pid, const char *tid, char *name, size_t n)
{
    char path[384];
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int)pid, tid);
    snprintf(name, n, "?");
    f = fopen(path, "r");
    if (!f)
        return;
    if (fgets(name, (int)n, f))
        name[strcspn(name, "\n")] = '\0';
    fclose(f);
}

/* Adds one thread's CPU to the per-name totals (at most MAX_THREAD_NAMES). */
static void add_thread(thread_cpu *t, int *n, const char *name, double cpu, double sys)
{
    int i;

    for (i = 0; i < *n && strcmp(t[i].name, name); i++)
        ;
    if (i == *n) {
        if (*n == MAX_THREAD_NAMES)
            return;
        snprintf(t[i].name, sizeof(t[i].name), "%s", name);
        t[i].cpu_s = 0;
        t[i].sys_s = 0;
        t[i].threads = 0;
        (*n)++;
    }
    t[i].cpu_s += cpu;
    t[i].sys_s += sys;
    t[i].threads++;
}

/* The scheduler's CPU time per thread name (threads of one name summed),
 * read while it runs: which part of the scheduler the CPU goes to. */
static void proc_thread_cpu(pid_t pid, result *r)
{
    char dir[64], path[384], name[32];
    DIR *d;
    struct dirent *e;

    r->n_threads = 0;
    snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
    d = opendir(dir);
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s/stat", dir, e->d_name);
        thread_name(pid, e->d_name, name, sizeof(name));
        double sys = 0, cpu = stat_cpu(path, &sys);
        if (cpu >= 0)
            add_thread(r->threads, &r->n_threads, name, cpu, sys);
    }
    closedir(d);
}

static long proc_hwm_kib(pid_t pid)
{
    char path[64], line[256];
    FILE *f;
    long kib = -1;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    f = fopen(path, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, "VmHWM:", 6))
            kib = strtol(line + 6, NULL, 10);
    fclose(f);
    return kib;
}

static int unassigned_pods(harness *h)
{
    long status = 0;
    cJSON *j = NULL;
    int n = -1;

    if (harness_request_json(h, NULL, "GET",
                             "/api/v1/namespaces/default/pods?fieldSelector=spec.nodeName%3D", NULL,
                             &status, &j) == KUBE_OK &&
        status == 200)
        n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "items"));
    cJSON_Delete(j);
    return n;
}

static int wait_all_bound(harness *h, pid_t pid, int pods, int64_t deadline)
{
    int status;

    for (;;) {
        if (waitpid(pid, &status, WNOHANG) == pid) {
            fprintf(stderr, "scheduler exited early\n");
            return KUBE_EIO;
        }
        if (harness_count(h, "create", "pods/binding") >= pods && unassigned_pods(h) == 0)
            return KUBE_OK;
        if (bench_now_ms() > deadline)
            return KUBE_ETIMEDOUT;
        usleep(100000);
    }
}

/* The Event writes (creates and patches) the emulator counted. */
static int64_t event_writes(harness *h)
{
    return harness_count(h, "create", "events") + harness_count(h, "patch", "events");
}

/* Waits until the emulator has counted no Event write for EVENTS_QUIET_MS
 * (at most EVENTS_WAIT_MS, or until the scheduler exits): the recorder has
 * written what it will. Returns the writes counted by then. */
static int64_t wait_events_quiet(harness *h, pid_t pid)
{
    int64_t last = event_writes(h), changed = bench_now_ms(), end = changed + EVENTS_WAIT_MS;
    int status;

    while (bench_now_ms() - changed < EVENTS_QUIET_MS && bench_now_ms() < end) {
        int64_t n;
        if (waitpid(pid, &status, WNOHANG) == pid)
            break;
        usleep(100000);
        n = event_writes(h);
        if (n != last) {
            last = n;
            changed = bench_now_ms();
        }
    }
    return last;
}

/* Occurrences of reason Scheduled in the Events the emulator holds: 1 for
 * an Event, its series.count for a series. Negative KUBE_E* when the list
 * fails. */
static int64_t scheduled_events(harness *h)
{
    long status = 0;
    cJSON *list = NULL;
    const cJSON *ev;
    int64_t n = 0;
    int rc = harness_request_json(h, NULL, "GET", EVENTS_PATH, NULL, &status, &list);

    if (rc != KUBE_OK || status != 200) {
        cJSON_Delete(list);
        return rc != KUBE_OK ? rc : KUBE_EIO;
    }
    cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const cJSON *reason = cJSON_GetObjectItemCaseSensitive(ev, "reason");
        const cJSON *series = cJSON_GetObjectItemCaseSensitive(ev, "series");
        const cJSON *count = cJSON_GetObjectItemCaseSensitive(series, "count");

        if (!cJSON_IsString(reason) || strcmp(reason->valuestring, "Scheduled"))
            continue;
        n += cJSON_IsNumber(count) && count->valuedouble >= 1 ? (int64_t)count->valuedouble : 1;
    }
    cJSON_Delete(list);
    return n;
}

static int measure(harness *h, const char *config, const char *scheduler, result *r)
{
    int port = harness_free_port(), rc = KUBE_OK, status;
    int64_t t0, t_sync, t_end, deadline;
    pid_t pid;
    double cpu_sync, server_sync;
    CURL *poll_handle;

    if (port <= 0)
        return KUBE_EIO;
    t0 = bench_now_ms();
    deadline = t0 + RUN_TIMEOUT_MS;
    pid = spawn_scheduler(h, config, port, scheduler);
    if (pid < 0)
        return KUBE_EIO;
    poll_handle = curl_easy_init();
    while (poll_handle && !ready(poll_handle, port) && bench_now_ms() < deadline)
        usleep(20000);
    curl_easy_cleanup(poll_handle);
    t_sync = bench_now_ms();
    cpu_sync = proc_cpu(pid);
    server_sync = proc_cpu(harness_pid(h));
    rc = wait_all_bound(h, pid, r->pods, deadline);
    r->server_cpu_s = proc_cpu(harness_pid(h)) - server_sync;
    t_end = bench_now_ms();
    r->binds = harness_count(h, "create", "pods/binding");
    r->event_writes = harness_count(h, "create", "events") + harness_count(h, "patch", "events");
    r->cpu_total_s = proc_cpu(pid);
    proc_thread_cpu(pid, r);
    r->peak_rss_kib = proc_hwm_kib(pid);
    r->cpu_after_sync_s = r->cpu_total_s - cpu_sync;
    r->sync_s = (double)(t_sync - t0) / 1000;
    r->run_s = (double)(t_end - t_sync) / 1000;
    r->throughput = r->run_s > 0 ? r->pods / r->run_s : 0;
    if (rc == KUBE_OK) {
        r->event_writes_end = wait_events_quiet(h, pid);
        r->events_s = (double)(bench_now_ms() - t_end) / 1000;
        r->cpu_events_s = proc_cpu(pid);
        r->scheduled_events = scheduled_events(h);
    }
    kill(pid, SIGTERM);
    waitpid(pid, &status, 0);
    return rc;
}

/* The scheduling constraints of mixed pod i (JSON spec members, may be
 * "") and its group label value. */
static void mixed_constraints(int i, char *group, size_t gn, char *spec, size_t sn)
{
    char s[128];

    spec[0] = '\0';
    if (i % 5 == 0) {
        snprintf(group, gn, "aa-%d", i / 5 / MIXED_AA_GROUP);
        snprintf(s, sizeof(s), MIXED_SELECTOR, group);
        snprintf(
            spec, sn,
            ",\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution"
            "\":[{%s,\"topologyKey\":\"kubernetes.io/hostname\"}]}}",
            s);
    } else if (i % 5 == 1) {
        snprintf(group, gn, "ts-%d", i / 5 / MIXED_TS_GROUP);
        snprintf(s, sizeof(s), MIXED_SELECTOR, group);
        snprintf(spec, sn,
                 ",\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":"
                 "\"topology.kubernetes.io/zone\",\"whenUnsatisfiable\":\"DoNotSchedule\",%s},"
                 "{\"maxSkew\":1,\"topologyKey\":\"kubernetes.io/hostname\","
                 "\"whenUnsatisfiable\":\"ScheduleAnyway\",%s}]",
                 s, s);
    } else {
        snprintf(group, gn, "plain");
    }
}

static int create_mixed_pods(harness *h, int pods)
{
    char body[2048], group[32], spec[1024];
    int rc = KUBE_OK;

    for (int i = 0; rc == KUBE_OK && i < pods; i++) {
        mixed_constraints(i, group, sizeof(group), spec, sizeof(spec));
        snprintf(body, sizeof(body),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                 "\"virt-launcher-vm-%06d-mixed\",\"namespace\":\"default\",\"labels\":{"
                 "\"kubevirt.io\":\"virt-launcher\",\"vm.kubevirt.io/name\":\"vm-%06d\","
                 "\"vm.group\":\"%s\"}},\"spec\":{\"schedulerName\":\"stickyvm\","
                 "\"containers\":[{\"name\":\"compute\",\"image\":\"virt-launcher\","
                 "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"}}}]%s}}",
                 i, i, group, spec);
        rc = harness_create(h, PODS_PATH, body, NULL);
    }
    return rc;
}

static void print_result(const result *r)
{
    printf("  informers synced      %8.2f s after start\n", r->sync_s);
    printf("  all pods bound        %8.2f s after sync\n", r->run_s);
    printf("  throughput            %8.0f pods/s\n", r->throughput);
    printf("  scheduler CPU         %8.3f ms/pod (whole run: %.2f s)\n",
           r->cpu_total_s * 1000 / r->pods, r->cpu_total_s);
    printf("  scheduler CPU (sched) %8.3f ms/pod (after sync: %.2f s)\n",
           r->cpu_after_sync_s * 1000 / r->pods, r->cpu_after_sync_s);
    printf("  scheduler peak RSS    %8.1f MB\n", (double)r->peak_rss_kib / 1024);
    printf("  server CPU (emulator) %8.3f ms/pod (after sync: %.2f s)\n",
           r->server_cpu_s * 1000 / r->pods, r->server_cpu_s);
    printf("  writes (server count) %8lld binds, %lld event creates and patches\n",
           (long long)r->binds, (long long)r->event_writes);
    printf(
        "  scheduler CPU (with events) %8.3f ms/pod (whole run, until no Event write for %.1f s: "
        "%.2f s, %.2f s after the last bind; %lld event writes)\n",
        r->cpu_events_s * 1000 / r->pods, EVENTS_QUIET_MS / 1000.0, r->cpu_events_s, r->events_s,
        (long long)r->event_writes_end);
    printf("  Scheduled events      %8lld written for %d pods bound%s\n",
           (long long)r->scheduled_events, r->pods,
           r->scheduled_events == r->pods ? "" : "  FAIL: they differ");
    printf("  scheduler CPU by thread (ms/pod, of which in the kernel):\n");
    for (int i = 0; i < r->n_threads; i++)
        if (r->threads[i].cpu_s > 0)
            printf("    %-16s x%-2d %8.3f  %8.3f\n", r->threads[i].name, r->threads[i].threads,
                   r->threads[i].cpu_s * 1000 / r->pods, r->threads[i].sys_s * 1000 / r->pods);
    fflush(stdout);
}

static int run_size(int nodes, int pods, const bench_opts *b)
{
    harness_opts o = HARNESS_OPTS_INIT;
    harness *h = NULL;
    const char *kubeconfig = NULL;
    char config[512];
    result r;
    int rc;

    memset(&r, 0, sizeof(r));
    r.nodes = nodes;
    r.pods = pods;
    o.nodes = nodes;
    o.pods = b->mixed ? 0 : pods;
    o.start_timeout_ms = 300000;
    o.disable_http2 = b->http1;
    printf("== %d nodes / %d pods%s, %s, %s ==\n", nodes, pods,
           b->mixed ? " (mixed: 20% anti-affinity, 20% topology spread)" : "",
           b->http1 ? "HTTP/1.1" : "HTTP/2", b->token ? "1 KB bearer token" : "client certificate");
    fflush(stdout);
    rc = harness_start(&o, &h);
    if (rc == KUBE_OK && b->mixed)
        rc = create_mixed_pods(h, pods);
    if (rc == KUBE_OK)
        rc = bench_kubeconfig(h, b->token, &kubeconfig);
    if (rc == KUBE_OK)
        rc = write_config(h, kubeconfig, config, sizeof(config));
    if (rc == KUBE_OK)
        rc = measure(h, config, b->scheduler, &r);
    if (rc != KUBE_OK) {
        printf("  failed: %s\n", kube_strerror(rc));
        harness_stop(h);
        return 1;
    }
    print_result(&r);
    harness_stop(h);
    return r.scheduled_events == r.pods ? 0 : 1;
}

int main(int argc, char **argv)
{
    static const int defaults[][2] = {{1000, 3000}, {5000, 10000}};
    int failed = 0;

    int first = 1;
    bench_opts b = {0, 0, 0, NULL};

    for (; first < argc && argv[first][0] == '-'; first++) {
        if (!strcmp(argv[first], "--mixed"))
            b.mixed = 1;
        else if (!strcmp(argv[first], "--http1"))
            b.http1 = 1;
        else if (!strcmp(argv[first], "--token"))
            b.token = 1;
        else if (!strcmp(argv[first], "--scheduler") && first + 1 < argc)
            b.scheduler = argv[++first];
        else
            break;
    }

    signal(SIGPIPE, SIG_IGN);
    if ((argc - first) % 2) {
        fprintf(stderr, BENCH_USAGE);
        return 2;
    }
    if (argc > first) {
        for (int i = first; i + 1 < argc; i += 2) {
            int64_t n, p;
            if (kube_parse_int64(argv[i], 1, 100000, &n) != KUBE_OK ||
                kube_parse_int64(argv[i + 1], 1, 1000000, &p) != KUBE_OK) {
                fprintf(stderr, BENCH_USAGE);
                return 2;
            }
            failed += run_size((int)n, (int)p, &b);
        }
        return failed ? 1 : 0;
    }
    for (size_t i = 0; i < (b.mixed ? 1 : sizeof(defaults) / sizeof(defaults[0])); i++)
        failed += run_size(defaults[i][0], defaults[i][1], &b);
    return failed ? 1 : 0;
}
