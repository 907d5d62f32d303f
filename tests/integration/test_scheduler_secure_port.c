/*
 * tests/integration/test_scheduler_secure_port.c - stickyvm-scheduler as a
 * drop-in for kube-scheduler's kubeadm static pod, and its secure port:
 *   - the real binary (build/stickyvm-scheduler) runs kubeadm's command line
 *     unchanged but for the binary name:
 *       --authentication-kubeconfig=/etc/kubernetes/scheduler.conf
 *       --authorization-kubeconfig=/etc/kubernetes/scheduler.conf
 *       --bind-address=127.0.0.1 --kubeconfig=/etc/kubernetes/scheduler.conf
 *       --leader-elect=true
 *     with the emulator's admin kubeconfig at /etc/kubernetes/scheduler.conf
 *     in a private mount namespace (unshare -rm, an overlay on /etc), or,
 *     where user namespaces are not allowed, the same flags pointing at a
 *     copy in a temporary directory. kubeadm's line sets no --secure-port:
 *     the default 10259 is used when free, else a free port is added;
 *   - it schedules a pod; /healthz, /readyz and /livez answer without
 *     credentials; /metrics without credentials is 401, with a token the
 *     SubjectAccessReview denies 403 with kube's message, with an allowed
 *     one 200; /configz is the KubeSchedulerConfiguration in kube's
 *     {"componentconfig": ...} shape; /healthz/leaderElection and
 *     /healthz?verbose show the leaderElection check; /metrics/resources
 *     has the pod's kube_pod_resource_request and _limit;
 *   - the leaderElection check itself (kube_leader_check): healthy while
 *     renewing, unhealthy once this replica, still believing it leads, has
 *     not renewed within leaseDuration plus the tolerance.
 *
 * The emulator runs with a policy granting the user "prom" get on
 * /metrics, /metrics/resources, /configz and every path under /healthz/; "nobody" has
 * nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "kube/machinery/leader.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "sched_fixture.h"

#define WAIT_MS 30000
#define KUBEADM_CONF "/etc/kubernetes/scheduler.conf"
#define POLICY                                                                                 \
    "{\"rules\":[{\"users\":[\"prom\"],\"verbs\":[\"get\"],\"nonResourceURLs\":[\"/metrics\"," \
    "\"/metrics/resources\",\"/configz\",\"/healthz/*\"]}]}"

typedef struct env {
    harness *h;
    char dir[64];
    char policy_flag[160];
    const harness_identity *prom, *nobody;
    pid_t pid;
    int port;
    char log[128];
    char conf[128]; /* the kubeconfig path on the command line */
} env;

static env E;

static int setup(void **state)
{
    static const char *const monitoring[] = {"monitoring"};
    const char *args[] = {E.policy_flag, NULL};
    harness_opts o = HARNESS_OPTS_INIT;
    char path[128];
    FILE *f;
    (void)state;

    memset(&E, 0, sizeof(E));
    snprintf(E.dir, sizeof(E.dir), "/tmp/sched-secure-XXXXXX");
    if (!mkdtemp(E.dir))
        return -1;
    snprintf(path, sizeof(path), "%s/policy.json", E.dir);
    f = fopen(path, "w");
    if (!f || fputs(POLICY, f) < 0 || fclose(f) != 0)
        return -1;
    snprintf(E.policy_flag, sizeof(E.policy_flag), "--authorization-policy-file=%s", path);
    o.nodes = 1;
    o.extra_args = args;
    if (harness_start(&o, &E.h) != KUBE_OK ||
        harness_add_token_user(E.h, "prom", monitoring, 1, &E.prom) != KUBE_OK ||
        harness_add_token_user(E.h, "nobody", NULL, 0, &E.nobody) != KUBE_OK)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    char cmd[160];
    (void)state;

    harness_stop(E.h);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", E.dir);
    if (system(cmd) != 0)
        return -1;
    return 0;
}

/* ---- HTTPS ---- */

static size_t collect(char *data, size_t size, size_t n, void *ud)
{
    kube_buf_append(ud, data, size * n);
    return size * n;
}

/* GET path on the scheduler's port with a bearer token (NULL: none); the
 * body goes to b (reset first). The status code, 0 when unreachable. */
static long get(const char *path, const char *token, kube_buf *b)
{
    char url[256], auth[512];
    struct curl_slist *headers = NULL;
    long code = 0;
    CURL *c = curl_easy_init();

    kube_buf_reset(b);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", E.port, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
    if (token) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
        headers = curl_slist_append(NULL, auth);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    }
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    curl_slist_free_all(headers);
    kube_buf_puts(b, ""); /* NUL-terminated even when empty */
    return code;
}

/* ---- the binary ---- */

/* 1 when 127.0.0.1:port can be bound now. */
static int port_free(int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

/* Copies the emulator's kubeconfig to <dir>/etc/kubernetes/scheduler.conf
 * (the overlay's upper layer). */
static void stage_kubeconfig(void)
{
    char cmd[1024];

    snprintf(cmd, sizeof(cmd), "mkdir -p '%s/upper/kubernetes' '%s/work' && cp '%s' '%s/upper/%s'",
             E.dir, E.dir, harness_kubeconfig(E.h), E.dir, "kubernetes/scheduler.conf");
    assert_int_equal(system(cmd), 0);
}

/* 1 when this machine lets an unprivileged process mount an overlay on
 * /etc in a user and mount namespace of its own. */
static int namespaces_work(void)
{
    char cmd[1024];

    snprintf(cmd, sizeof(cmd),
             "unshare -rm sh -c 'mount -t overlay overlay -o lowerdir=/etc,upperdir=%s/upper,"
             "workdir=%s/work /etc && test -r " KUBEADM_CONF "' >/dev/null 2>&1",
             E.dir, E.dir);
    return system(cmd) == 0;
}

/* Runs kubeadm's line: in a namespace with the kubeconfig at its kubeadm
 * path (private_etc), else pointing at the staged copy. extra: a
 * --secure-port flag or "". */
static void exec_kubeadm_line(int private_etc, const char *extra)
{
    char mount[512] = "", script[2048];
    int fd = open(E.log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    if (private_etc)
        snprintf(mount, sizeof(mount),
                 "mount -t overlay overlay -o lowerdir=/etc,upperdir=%s/upper,workdir=%s/work "
                 "/etc && ",
                 E.dir, E.dir);
    snprintf(script, sizeof(script),
             "%sexec %s/stickyvm-scheduler --authentication-kubeconfig=%s "
             "--authorization-kubeconfig=%s --bind-address=127.0.0.1 --kubeconfig=%s "
             "--leader-elect=true %s",
             mount, STICKYVM_BINARY_DIR, E.conf, E.conf, E.conf, extra);
    if (private_etc)
        execlp("unshare", "unshare", "-rm", "sh", "-c", script, (char *)NULL);
    else
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
    _exit(127);
}

static void start_scheduler(void)
{
    int private_etc, default_port = port_free(10259);
    char extra[64] = "";
    kube_buf b = KUBE_BUF_INIT;
    int ready = 0;

    stage_kubeconfig();
    private_etc = namespaces_work();
    if (private_etc)
        snprintf(E.conf, sizeof(E.conf), "%s", KUBEADM_CONF);
    else
        snprintf(E.conf, sizeof(E.conf), "%s/upper/kubernetes/scheduler.conf", E.dir);
    E.port = 10259;
    if (!default_port) {
        E.port = harness_free_port();
        snprintf(extra, sizeof(extra), "--secure-port=%d", E.port);
    }
    print_message("kubeadm line %s, port %d%s\n",
                  private_etc ? "as is (" KUBEADM_CONF " in a mount namespace)"
                              : "pointing at a copy of the kubeconfig",
                  E.port,
                  default_port ? " (the default)" : " (10259 is busy: --secure-port added)");
    snprintf(E.log, sizeof(E.log), "%s/scheduler.log", E.dir);
    E.pid = fork();
    assert_true(E.pid >= 0);
    if (E.pid == 0)
        exec_kubeadm_line(private_etc, extra);
    /* ready, or exited */
    WAIT_TRUE_MS_MSG((ready = get("/readyz", NULL, &b) == 200) ||
                         waitpid(E.pid, NULL, WNOHANG) == E.pid,
                     WAIT_MS, "stickyvm-scheduler did not become ready; see %s", E.log);
    if (!ready)
        fail_msg("stickyvm-scheduler exited before it was ready; see %s", E.log);
    kube_buf_free(&b);
}

static void stop_scheduler(void)
{
    int status = 0;

    kill(E.pid, SIGTERM);
    waitpid(E.pid, &status, 0);
    assert_true(WIFEXITED(status) || WIFSIGNALED(status));
}

/* ---- tests ---- */

static void create_pod(const char *name)
{
    char json[1024];

    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"default\"},\"spec\":{\"priority\":7,\"containers\":[{\"name\":\"c\","
             "\"image\":\"registry.invalid/pause:3.9\",\"resources\":{\"requests\":{\"cpu\":"
             "\"100m\",\"memory\":\"64Mi\"},\"limits\":{\"cpu\":\"1500m\"}}}]}}",
             name);
    assert_int_equal(harness_create(E.h, "/api/v1/namespaces/default/pods", json, NULL), KUBE_OK);
}

static void kubeadm_command_line_runs(void **state)
{
    kube_buf b = KUBE_BUF_INIT;
    cJSON *cz;
    char *node;
    (void)state;

    start_scheduler();
    create_pod("kubeadm-pod");
    node = sf_wait_bound(E.h, "kubeadm-pod");
    assert_string_equal(node, "node-0");
    free(node);

    /* the probes' paths are open */
    assert_int_equal(get("/healthz", NULL, &b), 200);
    assert_string_equal(b.data, "ok");
    assert_int_equal(get("/livez", NULL, &b), 200);
    assert_int_equal(get("/readyz?verbose", NULL, &b), 200);
    assert_string_equal(b.data, "[+]leaderElection ok\n[+]shutdown ok\n[+]sched-handler-sync ok\n"
                                "readyz check passed\n");
    assert_int_equal(get("/healthz?verbose", NULL, &b), 200);
    assert_string_equal(b.data, "[+]leaderElection ok\nhealthz check passed\n");

    /* /metrics: 401 without credentials, 403 denied, 200 allowed */
    assert_int_equal(get("/metrics", NULL, &b), 401);
    assert_non_null(strstr(b.data, "\"reason\":\"Unauthorized\""));
    assert_int_equal(get("/metrics", "not-a-token", &b), 401);
    assert_int_equal(get("/metrics", E.nobody->token, &b), 403);
    assert_non_null(
        strstr(b.data, "forbidden: User \\\"nobody\\\" cannot get path \\\"/metrics\\\""));
    assert_int_equal(get("/metrics", E.prom->token, &b), 200);
    assert_non_null(strstr(b.data, "scheduler_schedule_attempts_total{result=\"scheduled\","
                                   "profile=\"default-scheduler\"} 1\n"));

    /* /healthz/leaderElection is not an always-allowed path */
    assert_int_equal(get("/healthz/leaderElection", NULL, &b), 401);
    assert_int_equal(get("/healthz/leaderElection", E.nobody->token, &b), 403);
    assert_int_equal(get("/healthz/leaderElection", E.prom->token, &b), 200);
    assert_string_equal(b.data, "ok");

    /* /configz */
    assert_int_equal(get("/configz", E.nobody->token, &b), 403);
    assert_int_equal(get("/configz", E.prom->token, &b), 200);
    cz = cJSON_Parse(b.data);
    assert_non_null(cz);
    assert_string_equal(sf_str_at(cz, "componentconfig", "apiVersion"),
                        "kubescheduler.config.k8s.io/v1");
    assert_string_equal(sf_str_at(cz, "componentconfig", "kind"), "KubeSchedulerConfiguration");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cz, "componentconfig"), "leaderElection"),
        "leaderElect")));
    assert_string_equal(
        sf_str_at(cJSON_GetObjectItem(cz, "componentconfig"), "clientConnection", "kubeconfig"),
        E.conf);
    cJSON_Delete(cz);

    /* /metrics/resources */
    assert_int_equal(get("/metrics/resources", E.prom->token, &b), 200);
    assert_non_null(strstr(b.data,
                           "kube_pod_resource_request{namespace=\"default\",node=\"node-0\","
                           "pod=\"kubeadm-pod\",priority=\"7\",resource=\"cpu\","
                           "scheduler=\"default-scheduler\",unit=\"cores\"} 0.1\n"));
    assert_non_null(strstr(b.data, "resource=\"memory\",scheduler=\"default-scheduler\","
                                   "unit=\"bytes\"} 6.7108864e+07\n"));
    assert_non_null(strstr(b.data, "kube_pod_resource_limit{namespace=\"default\",node=\"node-0\","
                                   "pod=\"kubeadm-pod\",priority=\"7\",resource=\"cpu\","
                                   "scheduler=\"default-scheduler\",unit=\"cores\"} 1.5\n"));
    assert_null(strstr(b.data, "kube_pod_resource_limit{namespace=\"default\",node=\"node-0\","
                               "pod=\"kubeadm-pod\",priority=\"7\",resource=\"memory\""));

    /* a path no policy allows */
    assert_int_equal(get("/nope", E.prom->token, &b), 403);
    stop_scheduler();
    kube_buf_free(&b);
}

typedef struct lead_state {
    int started, stopped;
} lead_state;

static void on_started(void *ud)
{
    ((lead_state *)ud)->started = 1;
}

static void on_stopped(void *ud, int lost)
{
    (void)lost;
    ((lead_state *)ud)->stopped = 1;
}

/* client-go's HealthzAdaptor: healthy while renewing; unhealthy once a
 * replica that believes it leads has not renewed for leaseDuration plus
 * the tolerance (here its renewals fail: every lease call is refused). */
static void leader_check_reports_a_stale_lease(void **state)
{
    static const char *const leases[] = {"leases", NULL};
    harness_faults f = {0};
    kube_config *kc = NULL;
    kube_client *c = NULL;
    kube_client_options co;
    kube_leader_config lc;
    lead_state ls = {0};
    kube_leader_callbacks cb = {on_started, on_stopped, NULL, &ls, NULL};
    kube_leader *le = NULL;
    char msg[256] = "", err[256];
    (void)state;

    assert_int_equal(kube_config_load(harness_kubeconfig(E.h), &kc, err, sizeof(err)), KUBE_OK);
    kube_leader_config_default(&lc);
    lc.namespace_ = "default";
    lc.name = "healthz-test";
    lc.lease_duration_ms = 1000;
    lc.renew_deadline_ms = 800;
    lc.retry_period_ms = 200;
    kube_client_options_default(&co);
    kube_leader_client_options(&lc, &co);
    assert_int_equal(kube_client_new(kc, &co, &c), KUBE_OK);
    assert_int_equal(kube_leader_new(c, &lc, &cb, &le), KUBE_OK);
    assert_int_equal(kube_leader_check(le, 0, msg, sizeof(msg)), KUBE_OK); /* not leading */
    assert_int_equal(kube_leader_start(le), KUBE_OK);
    WAIT_TRUE_MS(kube_leader_is_leader(le), WAIT_MS);
    usleep(1500 * 1000); /* renewing: past one lease duration */
    assert_int_equal(kube_leader_check(le, 0, msg, sizeof(msg)), KUBE_OK);
    f.error_rate = 1.0;
    f.error_code = 500;
    f.resources = leases;
    assert_int_equal(harness_set_faults(E.h, &f), KUBE_OK);
    usleep(1600 * 1000); /* > leaseDuration without a renewal */
    assert_int_equal(kube_leader_check(le, 0, msg, sizeof(msg)), KUBE_ETIMEDOUT);
    assert_string_equal(msg, "failed election to renew leadership on lease healthz-test");
    assert_int_equal(kube_leader_check(le, KUBE_LEADER_HEALTHZ_TIMEOUT_MS, msg, sizeof(msg)),
                     KUBE_OK);
    assert_int_equal(harness_clear_faults(E.h), KUBE_OK);
    kube_leader_free(le);
    kube_client_free(c);
    kube_config_free(kc);
}

int test_group_scheduler_secure_port(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kubeadm_command_line_runs),
        cmocka_unit_test(leader_check_reports_a_stale_lease),
    };
    return cmocka_run_group_tests_name("scheduler_secure_port", tests, setup, teardown);
}
