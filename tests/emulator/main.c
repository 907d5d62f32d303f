/*
 * tests/emulator/main.c - stickyvm-emulator: flags, plug-in registry,
 * startup (certificates, store, seed, plug-ins) and shutdown.
 *
 * Usage: stickyvm-emulator --data-dir DIR [--port 0] [--bookmark-interval-ms 60000]
 *          [--history 10000] [--nodes N] [--pods N] [--demo] [--v N]
 *          [--idle-timeout-ms 120000] [--max-body-bytes 3145728] [--disable-http2]
 * --disable-http2: ALPN offers only http/1.1 (default: h2 and http/1.1).
 * Once ready it writes the port to DIR/port and prints the URL on stdout.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu_internal.h"
#include "kube/log.h"

#define MAX_PLUGINS 16

static const emu_plugin *g_plugins[MAX_PLUGINS];
static size_t g_n_plugins;
static emu_server g_server;

void emu_plugin_register(const emu_plugin *p)
{
    if (g_n_plugins < MAX_PLUGINS)
        g_plugins[g_n_plugins++] = p;
}

const emu_plugin *const *emu_plugins(size_t *n)
{
    *n = g_n_plugins;
    return g_plugins;
}

emu_server *emu_server_get(void)
{
    return &g_server;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: stickyvm-emulator --data-dir DIR [--port N] [--bookmark-interval-ms MS]\n"
            "         [--history N] [--nodes N] [--pods N] [--demo] [--v N]\n"
            "         [--idle-timeout-ms MS] [--max-body-bytes N] [--disable-http2]\n");
}

static int int_flag(const char *name, const char *value, int64_t min, int64_t max, int64_t *out)
{
    if (!value || kube_parse_int64(value, min, max, out) != KUBE_OK) {
        fprintf(stderr, "stickyvm-emulator: flag %s: invalid value \"%s\"\n", name,
                value ? value : "");
        return KUBE_ECONFIG;
    }
    return KUBE_OK;
}

static int plugin_flag(const char *name, const char *value)
{
    for (size_t i = 0; i < g_n_plugins; i++) {
        int rc;
        if (!g_plugins[i]->flag)
            continue;
        rc = g_plugins[i]->flag(name, value);
        if (rc != 0)
            return rc < 0 ? rc : KUBE_OK;
    }
    fprintf(stderr, "stickyvm-emulator: unknown flag %s\n", name);
    return KUBE_ECONFIG;
}

static int known_flag(emu_config *c, const char *name, const char *value, int *consumed)
{
    int64_t v = 0;
    int rc = KUBE_OK;

    *consumed = 1;
    if (!strcmp(name, "--data-dir")) {
        if (!value || !*value)
            return KUBE_ECONFIG;
        free(c->data_dir);
        c->data_dir = kube_strdup(value);
        return c->data_dir ? KUBE_OK : KUBE_ENOMEM;
    }
    if (!strcmp(name, "--demo")) {
        c->demo = 1;
        return KUBE_OK;
    }
    if (!strcmp(name, "--disable-http2")) {
        c->http2 = 0;
        return KUBE_OK;
    }
    if (!strcmp(name, "--port") && (rc = int_flag(name, value, 0, 65535, &v)) == KUBE_OK)
        c->port = (int)v;
    else if (!strcmp(name, "--bookmark-interval-ms") &&
             (rc = int_flag(name, value, 1, 86400000, &v)) == KUBE_OK)
        c->bookmark_interval_ms = v;
    else if (!strcmp(name, "--history") && (rc = int_flag(name, value, 1, 10000000, &v)) == KUBE_OK)
        c->history = (int)v;
    else if (!strcmp(name, "--nodes") && (rc = int_flag(name, value, 0, 1000000, &v)) == KUBE_OK)
        c->nodes = (int)v;
    else if (!strcmp(name, "--pods") && (rc = int_flag(name, value, 0, 1000000, &v)) == KUBE_OK)
        c->pods = (int)v;
    else if ((!strcmp(name, "--v") || !strcmp(name, "-v")) &&
             (rc = int_flag(name, value, 0, 10, &v)) == KUBE_OK)
        c->verbosity = (int)v;
    else if (!strcmp(name, "--idle-timeout-ms") &&
             (rc = int_flag(name, value, 100, 86400000, &v)) == KUBE_OK)
        c->idle_timeout_ms = (int)v;
    else if (!strcmp(name, "--max-body-bytes") &&
             (rc = int_flag(name, value, 1024, 1 << 30, &v)) == KUBE_OK)
        c->max_body = (size_t)v;
    else if (rc == KUBE_OK)
        *consumed = 0;
    return rc;
}

static int is_builtin_valued(const char *name)
{
    static const char *const names[] = {
        "--data-dir", "--port", "--bookmark-interval-ms", "--history",        "--nodes", "--pods",
        "--v",        "-v",     "--idle-timeout-ms",      "--max-body-bytes", NULL};
    for (size_t i = 0; names[i]; i++)
        if (!strcmp(name, names[i]))
            return 1;
    return 0;
}

static int parse_flags(emu_config *c, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        char name[128];
        const char *value = NULL, *eq = strchr(argv[i], '=');
        int consumed, rc;
        if (strncmp(argv[i], "-", 1) != 0) {
            fprintf(stderr, "stickyvm-emulator: unexpected argument %s\n", argv[i]);
            return KUBE_ECONFIG;
        }
        if (eq) {
            snprintf(name, sizeof(name), "%.*s", (int)(eq - argv[i]), argv[i]);
            value = eq + 1;
        } else {
            kube_strlcpy(name, argv[i], sizeof(name));
            if (is_builtin_valued(name) && i + 1 < argc)
                value = argv[++i];
        }
        if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
            usage();
            exit(0);
        }
        rc = known_flag(c, name, value, &consumed);
        if (rc != KUBE_OK)
            return rc;
        if (!consumed && plugin_flag(name, value) != KUBE_OK)
            return KUBE_ECONFIG;
    }
    if (!c->data_dir) {
        fprintf(stderr, "stickyvm-emulator: --data-dir is required\n");
        usage();
        return KUBE_ECONFIG;
    }
    return KUBE_OK;
}

static int make_dirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);

    if (n >= sizeof(buf))
        return KUBE_ERANGE;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        buf[i] = '\0';
        if (mkdir(buf, 0700) < 0 && errno != EEXIST)
            return KUBE_EIO;
        buf[i] = i < n ? '/' : '\0';
    }
    return KUBE_OK;
}

static int write_port_file(const emu_server *s)
{
    char tmp[4096], path[4096];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s/port.tmp", s->cfg.data_dir);
    snprintf(path, sizeof(path), "%s/port", s->cfg.data_dir);
    f = fopen(tmp, "w");
    if (!f)
        return KUBE_EIO;
    fprintf(f, "%d\n", s->port);
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        return KUBE_EIO;
    return KUBE_OK;
}

static void on_signal(int sig)
{
    (void)sig;
    emu_server_stop(&g_server);
}

static int write_admin_kubeconfig(emu_server *s)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s/admin.kubeconfig", s->cfg.data_dir);
    return emu_write_kubeconfig(path, s->url, s->certs.ca_file, "admin", s->certs.admin_cert_file,
                                s->certs.admin_key_file, NULL);
}

static int init_plugins(emu_server *s)
{
    for (size_t i = 0; i < g_n_plugins; i++) {
        int rc = g_plugins[i]->init ? g_plugins[i]->init(s) : KUBE_OK;
        if (rc != KUBE_OK) {
            KLOG_ERROR("plug-in %s failed to start: %s", g_plugins[i]->name, kube_strerror(rc));
            return rc;
        }
    }
    return KUBE_OK;
}

static int start(emu_server *s)
{
    int rc = make_dirs(s->cfg.data_dir);

    if (rc != KUBE_OK) {
        KLOG_ERROR("cannot create data dir %s: %s", s->cfg.data_dir, strerror(errno));
        return rc;
    }
    rc = emu_certs_init(&s->certs, s->cfg.data_dir);
    if (rc == KUBE_OK)
        rc = emu_store_new(&s->store, s->cfg.history);
    if (rc == KUBE_OK)
        rc = emu_server_prepare(s);
    if (rc == KUBE_OK)
        rc = write_admin_kubeconfig(s);
    if (rc == KUBE_OK)
        rc = emu_resources_init(s);
    if (rc == KUBE_OK)
        rc = emu_seed(s);
    if (rc == KUBE_OK)
        rc = init_plugins(s);
    if (rc == KUBE_OK)
        rc = write_port_file(s);
    return rc;
}

static void cleanup(emu_server *s)
{
    for (size_t i = 0; i < g_n_plugins; i++)
        if (g_plugins[i]->fini)
            g_plugins[i]->fini(s);
    emu_store_free(s->store);
    emu_certs_free(&s->certs);
    emu_tokens_free();
    emu_faults_clear();
    emu_counters_reset();
    free(s->cfg.data_dir);
}

int main(int argc, char **argv)
{
    emu_server *s = &g_server;
    struct sigaction sa;
    int rc;

    s->cfg.bookmark_interval_ms = 60000;
    s->cfg.history = 10000;
    s->cfg.idle_timeout_ms = 120000;
    s->cfg.max_body = 3 * 1024 * 1024;
    s->cfg.http2 = 1;
    if (parse_flags(&s->cfg, argc, argv) != KUBE_OK) {
        free(s->cfg.data_dir);
        return 2;
    }
    klog_set_verbosity(s->cfg.verbosity);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    rc = start(s);
    if (rc != KUBE_OK) {
        cleanup(s);
        return 1;
    }
    KLOG_INFO("serving on %s (data dir %s, %d nodes, %d pods, history %d)", s->url, s->cfg.data_dir,
              s->cfg.nodes, s->cfg.pods, s->cfg.history);
    printf("%s\n", s->url);
    fflush(stdout);
    emu_server_run(s);
    KLOG_INFO("stopped");
    cleanup(s);
    return 0;
}
