/*
 * bench/bench_apiserver.c - stickyvm-apiserver throughput and latency.
 *
 * Starts the API emulator (64 VMs, 16 nodes) and the stickyvm-apiserver
 * binary as a child process against it, then sends BENCH_REQUESTS (default
 * 10,000) pin/unpin requests from BENCH_CONCURRENCY (default 64) client
 * threads straight to stickyvm-apiserver over TLS, each thread on its own
 * keep-alive connection with the emulator's valid front-proxy certificate
 * (X-Remote-User: admin, X-Remote-Group: system:masters). Thread i works on
 * VM vm-(i mod 64), alternating GET .../pin?node=node-K (K rotating) and
 * PUT .../unpin, so every request reads the VM and writes its annotation
 * (a pin also reads the node) through kube-apiserver calls made on the
 * server's worker pool.
 *
 * Prints requests, wall time, throughput, p50/p99/max latency, the
 * server's peak RSS (VmHWM of the child) and the error count (any answer
 * other than 200, or a transport failure). Exits non-zero when there were
 * errors.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include "common/procstat.h"
#include "harness.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"

#define N_VMS 64
#define N_NODES 16

typedef struct bench {
    harness *h;
    int port;
    pid_t server;
    int requests;
    int concurrency;
    const char *cert, *key, *ca;
    int64_t *latency_ns; /* one per request */
    int next;            /* next request index, atomically taken */
    int errors;
} bench;

static bench B;

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    int64_t n;

    return v && kube_parse_int64(v, 1, 10000000, &n) == KUBE_OK ? (int)n : dflt;
}

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return size * n;
}

static CURL *client(struct curl_slist *headers)
{
    CURL *c = curl_easy_init();

    curl_easy_setopt(c, CURLOPT_CAINFO, B.ca);
    curl_easy_setopt(c, CURLOPT_SSLCERT, B.cert);
    curl_easy_setopt(c, CURLOPT_SSLKEY, B.key);
    curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    return c;
}

static long get(CURL *c, const char *path, const char *method)
{
    char url[512];
    long status = 0;

    snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", B.port, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (!strcmp(method, "PUT")) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
    } else {
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    }
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

static void *worker(void *arg)
{
    long id = (long)arg;
    struct curl_slist *h = curl_slist_append(NULL, "X-Remote-User: admin");
    CURL *c;
    int round = 0;

    h = curl_slist_append(h, "X-Remote-Group: system:masters");
    c = client(h);
    for (;;) {
        int i = __atomic_fetch_add(&B.next, 1, __ATOMIC_RELAXED);
        char path[256];
        int64_t t0;
        long status;
        if (i >= B.requests)
            break;
        if (round % 2 == 0)
            snprintf(path, sizeof(path),
                     "/apis/subresources.stickyvm.io/v1/namespaces/default/virtualmachines/vm-%ld/"
                     "pin?node=node-%d",
                     id % N_VMS, (int)((id + round / 2) % N_NODES));
        else
            snprintf(
                path, sizeof(path),
                "/apis/subresources.stickyvm.io/v1/namespaces/default/virtualmachines/vm-%ld/unpin",
                id % N_VMS);
        t0 = kube_now_ns();
        status = get(c, path, round % 2 ? "PUT" : "GET");
        B.latency_ns[i] = kube_now_ns() - t0;
        if (status != 200 && __atomic_add_fetch(&B.errors, 1, __ATOMIC_RELAXED) <= 5)
            fprintf(stderr, "bench: %s answered %ld\n", path, status);
        round++;
    }
    curl_easy_cleanup(c);
    curl_slist_free_all(h);
    return NULL;
}

static int start_server(const char *cert, const char *key)
{
    char port[32], kubeconfig[1024], tls_cert[1024], tls_key[1024], log[1024];
    char *const argv[] = {STICKYVM_BINARY_DIR "/stickyvm-apiserver",
                          port,
                          "--bind-address=127.0.0.1",
                          kubeconfig,
                          tls_cert,
                          tls_key,
                          "--workers=32",
                          "--max-requests-inflight=400",
                          NULL};

    B.port = harness_free_port();
    if (B.port <= 0)
        return KUBE_EIO;
    snprintf(port, sizeof(port), "--secure-port=%d", B.port);
    snprintf(kubeconfig, sizeof(kubeconfig), "--kubeconfig=%s", harness_kubeconfig(B.h));
    snprintf(tls_cert, sizeof(tls_cert), "--tls-cert-file=%s", cert);
    snprintf(tls_key, sizeof(tls_key), "--tls-private-key-file=%s", key);
    snprintf(log, sizeof(log), "%s/apiserver.log", harness_data_dir(B.h));
    B.server = fork();
    if (B.server < 0)
        return KUBE_EIO;
    if (B.server == 0) {
        FILE *f = freopen(log, "w", stderr);
        (void)f;
        execv(argv[0], argv);
        _exit(127);
    }
    return KUBE_OK;
}

static int wait_ready(void)
{
    CURL *c = client(NULL);
    int64_t deadline = kube_now_ms() + 30000;
    int ok = 0;

    while (!ok && kube_now_ms() < deadline) {
        ok = get(c, "/readyz", "GET") == 200;
        if (!ok)
            usleep(50000);
    }
    curl_easy_cleanup(c);
    return ok ? KUBE_OK : KUBE_ETIMEDOUT;
}

static int create_vms(void)
{
    for (int i = 0; i < N_VMS; i++) {
        char body[512];
        snprintf(
            body, sizeof(body),
            "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\",\"metadata\":"
            "{\"name\":\"vm-%d\"},\"spec\":{\"running\":true,\"template\":{\"spec\":{\"domain\":"
            "{\"devices\":{}}}}}}",
            i);
        if (harness_create(B.h, "/apis/kubevirt.io/v1/namespaces/default/virtualmachines", body,
                           NULL) != KUBE_OK)
            return KUBE_EIO;
    }
    return KUBE_OK;
}

static long child_peak_rss_kib(pid_t pid)
{
    char path[64], line[256];
    long kib = -1;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    f = fopen(path, "r");
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void stop_server(void)
{
    int status;

    if (B.server <= 0)
        return;
    kill(B.server, SIGTERM);
    waitpid(B.server, &status, 0);
    B.server = 0;
}

static int run(void)
{
    static const char *const dns[] = {"localhost"};
    static const char *const ips[] = {"127.0.0.1"};
    const char *cert, *key;
    pthread_t *threads = calloc((size_t)B.concurrency, sizeof(*threads));
    int64_t t0, wall;
    long rss;

    if (!threads ||
        harness_issue_serving_cert(B.h, "stickyvm-apiserver", dns, 1, ips, 1, &cert, &key) !=
            KUBE_OK ||
        create_vms() != KUBE_OK || start_server(cert, key) != KUBE_OK || wait_ready() != KUBE_OK) {
        fprintf(stderr, "bench: setup failed (see %s/apiserver.log)\n", harness_data_dir(B.h));
        free(threads);
        return 1;
    }
    t0 = kube_now_ns();
    for (long i = 0; i < B.concurrency; i++)
        pthread_create(&threads[i], NULL, worker, (void *)i);
    for (int i = 0; i < B.concurrency; i++)
        pthread_join(threads[i], NULL);
    wall = kube_now_ns() - t0;
    rss = child_peak_rss_kib(B.server);
    qsort(B.latency_ns, (size_t)B.requests, sizeof(int64_t), cmp_i64);
    printf("bench_apiserver: %d pin/unpin requests, concurrency %d, TLS with a front-proxy "
           "certificate\n",
           B.requests, B.concurrency);
    printf("  wall time      %.2f s\n", (double)wall / 1e9);
    printf("  throughput     %.0f requests/s\n", B.requests / ((double)wall / 1e9));
    printf("  latency p50    %.2f ms\n", (double)B.latency_ns[B.requests / 2] / 1e6);
    printf("  latency p99    %.2f ms\n", (double)B.latency_ns[(B.requests * 99) / 100] / 1e6);
    printf("  latency max    %.2f ms\n", (double)B.latency_ns[B.requests - 1] / 1e6);
    printf("  server peak RSS %.1f MiB\n", rss > 0 ? (double)rss / 1024 : -1.0);
    printf("  bench peak RSS  %.1f MiB\n", (double)bench_peak_rss_kib() / 1024);
    printf("  errors         %d\n", B.errors);
    free(threads);
    return B.errors ? 1 : 0;
}

int main(void)
{
    harness_opts o = HARNESS_OPTS_INIT;
    int rc;

    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    B.requests = env_int("BENCH_REQUESTS", 10000);
    B.concurrency = env_int("BENCH_CONCURRENCY", 64);
    B.latency_ns = calloc((size_t)B.requests, sizeof(int64_t));
    o.nodes = N_NODES;
    if (!B.latency_ns || harness_start(&o, &B.h) != KUBE_OK) {
        fprintf(stderr, "bench: cannot start the emulator\n");
        return 1;
    }
    B.cert = harness_front_proxy_cert_file(B.h);
    B.key = harness_front_proxy_key_file(B.h);
    B.ca = harness_ca_file(B.h);
    rc = run();
    stop_server();
    harness_stop(B.h);
    free(B.latency_ns);
    curl_global_cleanup();
    return rc;
}
