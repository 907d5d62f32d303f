/*
 * tests/unit/test_plugin_default_binder.c - DefaultBinder: Bind POSTs a
 * Binding (with the pod's UID) to pods/{name}/binding through the handle's
 * client, against a scripted loopback HTTP server; an API failure is an
 * FW_ERROR status carrying the Status message and code, as
 * framework.AsStatus(err) in kube-scheduler's default_binder_test.go.
 * The asynchronous Bind sends the same request and reports the same
 * statuses through its one done.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kube/util/buf.h"
#include "kube/transport/client.h"
#include "kube/transport/config.h"
#include "kube/transport/config_testing.h"
#include "kube/util/errors.h"
#include "plugins/plugins.h"
#include "unit/test_plugin_util.h"

/* One-request-per-connection server answering every request with reply. */
typedef struct bind_server {
    int fd, port, stop;
    pthread_t thread;
    int code;
    const char *body;
    char request[8192];
    char dir[64], kubeconfig[128];
} bind_server;

static size_t read_request(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    long want = -1;

    while (len + 1 < cap) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0)
            break;
        ssize_t n = recv(fd, buf + len, cap - 1 - len, 0);
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
        char *end = strstr(buf, "\r\n\r\n");
        if (end && want < 0) {
            const char *cl = strcasestr(buf, "\r\ncontent-length:");
            int64_t v = 0;
            if (cl) {
                char num[32];
                size_t k = 0;
                for (cl += 17; *cl == ' '; cl++)
                    ;
                while (k + 1 < sizeof(num) && cl[k] >= '0' && cl[k] <= '9') {
                    num[k] = cl[k];
                    k++;
                }
                num[k] = '\0';
                kube_parse_int64(num, 0, 1 << 20, &v);
            }
            want = (long)(end - buf) + 4 + (long)v;
        }
        if (want >= 0 && (long)len >= want)
            break;
    }
    return len;
}

static void *serve(void *arg)
{
    bind_server *s = arg;
    while (!__atomic_load_n(&s->stop, __ATOMIC_SEQ_CST)) {
        struct pollfd p = {s->fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            continue;
        read_request(c, s->request, sizeof(s->request));
        kube_buf out = KUBE_BUF_INIT;
        kube_buf_printf(&out,
                        "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                        "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                        s->code, strlen(s->body), s->body);
        send(c, out.data, out.len, MSG_NOSIGNAL);
        kube_buf_free(&out);
        close(c);
    }
    return NULL;
}

static int server_setup(void **state)
{
    bind_server *s = calloc(1, sizeof(*s));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);
    FILE *f;

    if (!s)
        return -1;
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s->fd, 8) != 0 ||
        getsockname(s->fd, (struct sockaddr *)&a, &alen) != 0)
        return -1;
    s->port = ntohs(a.sin_port);
    kube_strlcpy(s->dir, "/tmp/stickyvm-binder-XXXXXX", sizeof(s->dir));
    if (!mkdtemp(s->dir))
        return -1;
    snprintf(s->kubeconfig, sizeof(s->kubeconfig), "%s/kubeconfig", s->dir);
    if (!(f = fopen(s->kubeconfig, "w")))
        return -1;
    fprintf(f,
            "current-context: c\n"
            "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
            "clusters: [{name: c, cluster: {server: \"http://127.0.0.1:%d\"}}]\n"
            "users: [{name: u, user: {token: t}}]\n",
            s->port);
    fclose(f);
    s->code = 201;
    s->body = "{}";
    if (pthread_create(&s->thread, NULL, serve, s) != 0)
        return -1;
    *state = s;
    return 0;
}

static int server_teardown(void **state)
{
    bind_server *s = *state;
    __atomic_store_n(&s->stop, 1, __ATOMIC_SEQ_CST);
    pthread_join(s->thread, NULL);
    close(s->fd);
    unlink(s->kubeconfig);
    rmdir(s->dir);
    free(s);
    return 0;
}

typedef struct client_env {
    kube_config *cfg;
    kube_client *c;
} client_env;

static client_env new_client(bind_server *s)
{
    client_env e;
    kube_client_options o;
    char err[512];

    assert_int_equal(kube_config_from_file(s->kubeconfig, &e.cfg, err, sizeof(err)), KUBE_OK);
    kube_client_options_default(&o);
    o.max_retries = 0;
    o.timeout_ms = 5000;
    assert_int_equal(kube_client_new(e.cfg, &o, &e.c), KUBE_OK);
    return e;
}

/* The server got foo's Binding to node1, guarded by its UID. */
static void assert_binding_sent(const bind_server *s)
{
    assert_non_null(strstr(s->request, "POST /api/v1/namespaces/ns/pods/foo/binding "));
    assert_non_null(strstr(s->request, "\"uid\":\"u-1\""));
    assert_non_null(strstr(s->request, "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\","
                                       "\"name\":\"node1\"}"));
}

static void binds_through_the_api(void **state)
{
    bind_server *s = *state;
    client_env e = new_client(s);
    tp_plugin *p = tp_plugin_new(&plugin_default_binder, NULL, NULL);
    fw_pod_info *pod = tp_pod("{'metadata':{'name':'foo','namespace':'ns','uid':'u-1'},"
                              "'spec':{}}");

    p->handle.svc.client = e.c;
    tp_assert_status(p->desc->bind(p->self, NULL, pod, "node1"), FW_SUCCESS, NULL);
    assert_binding_sent(s);

    /* a failure is an error status with the API's message and code */
    s->code = 409;
    s->body = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
              "\"pod foo is already assigned to node \\\"node2\\\"\",\"reason\":\"Conflict\","
              "\"code\":409}";
    fw_status *st = p->desc->bind(p->self, NULL, pod, "node1");
    assert_int_equal(fw_status_code(st), FW_ERROR);
    assert_int_equal(st->err, KUBE_ECONFLICT);
    tp_assert_status(st, FW_ERROR, "pod foo is already assigned to node \"node2\"");

    fw_pod_info_unref(pod);
    tp_plugin_free(p);
    kube_client_free(e.c);
    kube_config_free(e.cfg);
}

/* What an asynchronous Bind's done saw. */
typedef struct async_done {
    sem_t sem;
    int calls;
    fw_status *st;
} async_done;

static void record_done(void *ud, fw_status *st)
{
    async_done *d = ud;
    d->calls++;
    d->st = st;
    sem_post(&d->sem);
}

/* Starts an asynchronous Bind and waits for its one done. */
static fw_status *bind_and_wait(tp_plugin *p, fw_pod_info *pod, async_done *d)
{
    memset(d, 0, sizeof(*d));
    sem_init(&d->sem, 0, 0);
    assert_null(p->desc->bind_async(p->self, NULL, pod, "node1", record_done, d));
    assert_int_equal(sem_wait(&d->sem), 0);
    usleep(20000); /* a second done would come now */
    assert_int_equal(d->calls, 1);
    sem_destroy(&d->sem);
    return d->st;
}

static void binds_without_waiting(void **state)
{
    bind_server *s = *state;
    client_env e = new_client(s);
    tp_plugin *p = tp_plugin_new(&plugin_default_binder, NULL, NULL);
    fw_pod_info *pod = tp_pod("{'metadata':{'name':'foo','namespace':'ns','uid':'u-1'},"
                              "'spec':{}}");
    async_done d;

    p->handle.svc.client = e.c;
    tp_assert_status(bind_and_wait(p, pod, &d), FW_SUCCESS, NULL);
    assert_binding_sent(s);

    s->code = 409;
    s->body = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
              "\"pod foo is already assigned\",\"reason\":\"Conflict\",\"code\":409}";
    fw_status *st = bind_and_wait(p, pod, &d);
    assert_int_equal(st->err, KUBE_ECONFLICT);
    tp_assert_status(st, FW_ERROR, "pod foo is already assigned");

    fw_pod_info_unref(pod);
    tp_plugin_free(p);
    kube_client_free(e.c);
    kube_config_free(e.cfg);
}

static void without_a_client_async_binding_does_not_start(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_default_binder, NULL, NULL);
    fw_pod_info *pod = tp_pod("{'metadata':{'name':'foo'},'spec':{}}");
    async_done d = {.calls = 0};

    tp_assert_status(p->desc->bind_async(p->self, NULL, pod, "node1", record_done, &d), FW_ERROR,
                     NULL);
    assert_int_equal(d.calls, 0);
    fw_pod_info_unref(pod);
    tp_plugin_free(p);
}

static void without_a_client_binding_fails(void **state)
{
    (void)state;
    tp_plugin *p = tp_plugin_new(&plugin_default_binder, NULL, NULL);
    fw_pod_info *pod = tp_pod("{'metadata':{'name':'foo'},'spec':{}}");

    tp_assert_status(p->desc->bind(p->self, NULL, pod, "node1"), FW_ERROR, NULL);
    assert_null(p->desc->default_args);
    assert_null(p->desc->events_to_register);
    fw_pod_info_unref(pod);
    tp_plugin_free(p);
}

int test_group_plugin_default_binder(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(binds_through_the_api, server_setup, server_teardown),
        cmocka_unit_test_setup_teardown(binds_without_waiting, server_setup, server_teardown),
        cmocka_unit_test(without_a_client_binding_fails),
        cmocka_unit_test(without_a_client_async_binding_does_not_start),
    };
    return cmocka_run_group_tests_name("plugin_default_binder", tests, NULL, NULL);
}
