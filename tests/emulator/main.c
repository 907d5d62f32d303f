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
#include "kube/util/flags.h"
#include "kube/util/log.h"

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

/* --bookmark-interval-ms (int64_t). */
static int set_bookmark(void *dst, const kube_flag *f, const char *value, char *why, size_t n)
{
    (void)f;
    snprintf(why, n, "must be a whole number from 1 to 86400000");
    return kube_parse_int64(value, 1, 86400000, &((emu_config *)dst)->bookmark_interval_ms) ==
                   KUBE_OK
               ? KUBE_OK
               : KUBE_ECONFIG;
}

/* --max-body-bytes (size_t). */
static int set_max_body(void *dst, const kube_flag *f, const char *value, char *why, size_t n)
{
    int64_t v;
    (void)f;
    snprintf(why, n, "must be a whole number from 1024 to %d", 1 << 30);
    if (kube_parse_int64(value, 1024, 1 << 30, &v) != KUBE_OK)
        return KUBE_ECONFIG;
    ((emu_config *)dst)->max_body = (size_t)v;
    return KUBE_OK;
}

/* --disable-http2 [=true|false]. */
static int set_disable_http2(void *dst, const kube_flag *f, const char *value, char *why, size_t n)
{
    (void)f;
    (void)why;
    (void)n;
    if (strcmp(value, "true") && strcmp(value, "false"))
        return KUBE_ECONFIG;
    ((emu_config *)dst)->http2 = strcmp(value, "true") != 0;
    return KUBE_OK;
}

#define CO(field) offsetof(emu_config, field)

static const kube_flag emu_flags[] = {
    {"data-dir", KUBE_FLAG_STRING, CO(data_dir), 0, 0, NULL, "where the PKI and kubeconfig go",
     NULL},
    {"port", KUBE_FLAG_INT, CO(port), 0, 65535, NULL, "HTTPS port (0 picks a free one)", NULL},
    {"bookmark-interval-ms", KUBE_FLAG_CUSTOM, CO(bookmark_interval_ms), 0, 0, "int",
     "watch bookmark interval", set_bookmark},
    {"history", KUBE_FLAG_INT, CO(history), 1, 10000000, NULL, "event history size", NULL},
    {"nodes", KUBE_FLAG_INT, CO(nodes), 0, 1000000, NULL, "seed node-0.. N nodes", NULL},
    {"pods", KUBE_FLAG_INT, CO(pods), 0, 1000000, NULL, "seed N unscheduled pods", NULL},
    {"demo", KUBE_FLAG_BOOL, CO(demo), 0, 0, NULL, "seed the demo cluster", NULL},
    {"v", KUBE_FLAG_INT, CO(verbosity), 0, 10, NULL, "log verbosity", NULL},
    {"idle-timeout-ms", KUBE_FLAG_INT, CO(idle_timeout_ms), 100, 86400000, NULL,
     "idle keep-alive timeout", NULL},
    {"max-body-bytes", KUBE_FLAG_CUSTOM, CO(max_body), 0, 0, "int", "largest request body",
     set_max_body},
    {"disable-http2", KUBE_FLAG_CUSTOM, CO(http2), 0, 0, "", "offer only http/1.1 by ALPN",
     set_disable_http2},
};

#define N_EMU_FLAGS (sizeof(emu_flags) / sizeof(emu_flags[0]))

/* The usage, to stderr. */
static void usage(void)
{
    fprintf(stderr, "Usage: stickyvm-emulator --data-dir DIR [flags]\n\nFlags:\n");
    kube_flags_usage(stderr, emu_flags, N_EMU_FLAGS);
}

/* Flags the plug-ins take (kube_flags_unknown_fn). */
static int plugin_flag(void *dst, const char *name, const char *value)
{
    (void)dst;
    for (size_t i = 0; i < g_n_plugins; i++) {
        int rc;
        if (!g_plugins[i]->flag)
            continue;
        rc = g_plugins[i]->flag(name, value);
        if (rc != 0)
            return rc < 0 ? rc : 1;
    }
    return 0;
}

/* The command line into c; prints the error and the usage on failure. */
static int parse_flags(emu_config *c, int argc, char **argv)
{
    char err[512];

    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage();
            exit(0);
        }
    if (kube_flags_parse_ext(emu_flags, N_EMU_FLAGS, argc, argv, c, plugin_flag, err,
                             sizeof(err)) != KUBE_OK) {
        fprintf(stderr, "stickyvm-emulator: %s\n", err);
        usage();
        return KUBE_ECONFIG;
    }
    if (!c->data_dir || !*c->data_dir) {
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
    emu_reqlog_clear();
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
