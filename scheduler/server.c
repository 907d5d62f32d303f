/*
 * scheduler/server.c - the scheduler's handlers on the shared secure
 * server (kube/serving/secure.h): kube's health endpoints and their
 * checks, /metrics, /metrics/resources and /configz. The contract is in
 * server.h.
 */
#include "server.h"
#include "server_testing.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/serving/delegate.h"
#include "kube/serving/secure.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"

#define PATH_MAX_LEN 1024
#define MAX_EXCLUDES 8
#define NAME_MAX_LEN 64
#define SHUTDOWN_TIMEOUT_MS 2000 /* requests in flight at exit */

struct sched_server {
    kube_secure *secure;
    kube_handlers handlers;
    const kube_serving_options *serving;
    kube_metrics *metrics;
    int (*ready)(void *ud);
    void *ud;
    kube_leader *leader;
    const sched_config *config;
    sched_pod_walk pods;
    void *pods_ud;
};

/* ---- routes ---- */

enum root { ROOT_HEALTHZ, ROOT_LIVEZ, ROOT_READYZ, ROOT_NONE };
static const char *const root_names[] = {"healthz", "livez", "readyz"};

typedef struct req_state {
    char path[PATH_MAX_LEN];
    char verb[16];
    enum root root;
    char check[NAME_MAX_LEN]; /* /<root>/<check>; "" for the root */
    int verbose;
    char excludes[MAX_EXCLUDES][NAME_MAX_LEN];
    int n_excludes;
} req_state;

/* ?verbose and ?exclude=<name> (repeatable) of the query q. */
static void parse_query(req_state *r, const char *q)
{
    while (q && *q) {
        size_t n = strcspn(q, "&");
        if (n == 7 && !strncmp(q, "verbose", 7))
            r->verbose = 1;
        else if (!strncmp(q, "verbose=", 8) && n >= 8)
            r->verbose = 1;
        else if (!strncmp(q, "exclude=", 8) && n > 8 && n - 8 < NAME_MAX_LEN &&
                 r->n_excludes < MAX_EXCLUDES)
            snprintf(r->excludes[r->n_excludes++], NAME_MAX_LEN, "%.*s", (int)(n - 8), q + 8);
        q += n;
        if (*q == '&')
            q++;
    }
}

/* Which health root path names (and its check, if any). */
static void parse_health(req_state *r)
{
    r->root = ROOT_NONE;
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(root_names[i]);
        if (r->path[0] != '/' || strncmp(r->path + 1, root_names[i], n) != 0)
            continue;
        if (r->path[n + 1] == '\0') {
            r->root = (enum root)i;
        } else if (r->path[n + 1] == '/' && r->path[n + 2] &&
                   strlen(r->path + n + 2) < NAME_MAX_LEN) {
            r->root = (enum root)i;
            snprintf(r->check, sizeof(r->check), "%s", r->path + n + 2);
        }
    }
}

static int route(void *ud, const char *method, const char *target, void **state, char *msg,
                 size_t n)
{
    req_state *r;
    size_t plen = strcspn(target, "?");

    (void)ud;
    *state = NULL;
    if (target[0] != '/' || plen >= PATH_MAX_LEN) {
        snprintf(msg, n, "the request path must be an absolute path of at most %d bytes",
                 PATH_MAX_LEN - 1);
        return KUBE_EBADREQUEST;
    }
    r = calloc(1, sizeof(*r));
    if (!r)
        return KUBE_ENOMEM;
    memcpy(r->path, target, plen);
    for (size_t i = 0; method[i] && i + 1 < sizeof(r->verb); i++)
        r->verb[i] = (char)tolower((unsigned char)method[i]);
    parse_health(r);
    if (target[plen] == '?')
        parse_query(r, target + plen + 1);
    *state = r;
    return KUBE_OK;
}

/* ---- health checks ---- */

typedef struct check {
    const char *name;
    int (*fn)(sched_server *s, const kube_health_state *hs, char *why, size_t n);
} check;

static int check_ping(sched_server *s, const kube_health_state *hs, char *why, size_t n)
{
    (void)s, (void)hs, (void)why, (void)n;
    return KUBE_OK;
}

static int check_leader(sched_server *s, const kube_health_state *hs, char *why, size_t n)
{
    (void)hs;
    return kube_leader_check(s->leader, KUBE_LEADER_HEALTHZ_TIMEOUT_MS, why, n);
}

static int check_shutdown(sched_server *s, const kube_health_state *hs, char *why, size_t n)
{
    (void)s;
    if (!hs->shutting_down)
        return KUBE_OK;
    snprintf(why, n, "process is shutting down");
    return KUBE_ECANCELED;
}

static int check_synced(sched_server *s, const kube_health_state *hs, char *why, size_t n)
{
    (void)hs;
    if (!s->ready || s->ready(s->ud))
        return KUBE_OK;
    snprintf(why, n, "waiting for handlers to sync");
    return KUBE_EINVAL;
}

static const check c_ping = {"ping", check_ping}, c_leader = {"leaderElection", check_leader},
                   c_shutdown = {"shutdown", check_shutdown},
                   c_synced = {"sched-handler-sync", check_synced};

/* kube-scheduler's lists: /healthz and /livez [leaderElection] (else the
 * ping k8s.io/apiserver's healthz installs when given none), /readyz
 * [leaderElection,] shutdown, sched-handler-sync. */
static size_t checks_of(const sched_server *s, enum root root, const check **out)
{
    size_t n = 0;

    if (s->leader)
        out[n++] = &c_leader;
    if (root == ROOT_READYZ) {
        out[n++] = &c_shutdown;
        out[n++] = &c_synced;
    } else if (!n) {
        out[n++] = &c_ping;
    }
    return n;
}

static int excluded(const req_state *r, const char *name)
{
    for (int i = 0; i < r->n_excludes; i++)
        if (!strcmp(r->excludes[i], name))
            return 1;
    return 0;
}

/* The root handler of k8s.io/apiserver's healthz (handleRootHealth). */
static void serve_root(sched_server *s, const req_state *r, const kube_health_state *hs,
                       kube_exchange *x)
{
    const check *list[4];
    size_t n = checks_of(s, r->root, list);
    kube_buf *b = kube_exchange_answer_body(x);
    char why[256];
    int failed = 0, rc = KUBE_OK;

    for (size_t i = 0; i < n && rc == KUBE_OK; i++) {
        if (excluded(r, list[i]->name))
            continue;
        why[0] = '\0';
        if (list[i]->fn(s, hs, why, sizeof(why)) != KUBE_OK) {
            failed = 1;
            KLOG_V(1, "%s check failed: %s: %s", root_names[r->root], list[i]->name, why);
            rc = kube_buf_printf(b, "[-]%s failed: reason withheld\n", list[i]->name);
        } else {
            rc = kube_buf_printf(b, "[+]%s ok\n", list[i]->name);
        }
    }
    if (failed && rc == KUBE_OK)
        rc = kube_buf_printf(b, "%s check failed\n", root_names[r->root]);
    else if (!r->verbose && rc == KUBE_OK) {
        kube_buf_reset(b);
        rc = kube_buf_puts(b, "ok");
    } else if (rc == KUBE_OK)
        rc = kube_buf_printf(b, "%s check passed\n", root_names[r->root]);
    kube_exchange_answer_filled(x, rc, failed ? 500 : 200, KUBE_CT_TEXT);
}

/* /<root>/<check> (adaptCheckToHandler). */
static void serve_check(sched_server *s, const req_state *r, const kube_health_state *hs,
                        kube_exchange *x)
{
    const check *list[4];
    size_t n = checks_of(s, r->root, list);
    char why[256] = "", text[320];

    for (size_t i = 0; i < n; i++) {
        if (strcmp(list[i]->name, r->check) != 0)
            continue;
        if (list[i]->fn(s, hs, why, sizeof(why)) == KUBE_OK) {
            kube_exchange_answer(x, 200, KUBE_CT_TEXT, "ok", 2);
        } else {
            snprintf(text, sizeof(text), "internal server error: %s\n", why);
            kube_exchange_answer(x, 500, KUBE_CT_TEXT, text, strlen(text));
        }
        return;
    }
    kube_exchange_answer(x, 404, KUBE_CT_TEXT, "404 page not found\n", 19);
}

/* ---- the other endpoints ---- */

static void serve_metrics(sched_server *s, kube_exchange *x)
{
    kube_buf *b = kube_exchange_answer_body(x);
    int rc = s->metrics ? kube_metrics_write(s->metrics, b) : KUBE_OK;

    kube_exchange_answer_filled(x, rc, 200, KUBE_CT_METRICS);
}

static void serve_resources(sched_server *s, kube_exchange *x)
{
    int rc = sched_resource_metrics_write(s->pods, s->pods_ud, kube_exchange_answer_body(x));

    kube_exchange_answer_filled(x, rc, 200, KUBE_CT_METRICS);
}

/* configz's {"componentconfig": <the configuration>}. */
static void serve_configz(sched_server *s, kube_exchange *x)
{
    cJSON *root = cJSON_CreateObject(), *cfg = sched_config_to_json(s->config);
    char *text = NULL;

    if (root && cfg) {
        cJSON_AddItemToObject(root, "componentconfig", cfg);
        cfg = NULL;
        text = cJSON_PrintUnformatted(root);
    }
    if (text)
        kube_exchange_answer(x, 200, KUBE_CT_JSON, text, strlen(text));
    else
        kube_exchange_fail(x, 500, "InternalError", "out of memory");
    free(text);
    cJSON_Delete(cfg);
    cJSON_Delete(root);
}

static void dispatch(sched_server *s, const req_state *r, const kube_health_state *hs,
                     kube_exchange *x)
{
    const char *m = kube_exchange_method(x);

    if (strcmp(m, "GET") != 0 && strcmp(m, "HEAD") != 0) {
        kube_exchange_answer(x, 405, KUBE_CT_TEXT, "405: Method Not Allowed", 23);
        kube_exchange_set_allow(x, "GET, HEAD");
    } else if (r->root != ROOT_NONE && !r->check[0]) {
        serve_root(s, r, hs, x);
    } else if (r->root != ROOT_NONE) {
        serve_check(s, r, hs, x);
    } else if (!strcmp(r->path, "/metrics")) {
        serve_metrics(s, x);
    } else if (!strcmp(r->path, "/metrics/resources")) {
        serve_resources(s, x);
    } else if (!strcmp(r->path, "/configz") && s->config) {
        serve_configz(s, x);
    } else {
        kube_exchange_answer(x, 404, KUBE_CT_TEXT, "404 page not found\n", 19);
    }
}

/* ---- the handler table ---- */

/* A path of --authorization-always-allow-paths is served to anyone, as
 * kube-scheduler serves it to system:anonymous without a review. */
static int open_path(void *ud, void *state, const kube_health_state *hs, kube_exchange *x)
{
    sched_server *s = ud;
    req_state *r = state;

    if (!kube_authz_path_always_allowed(&s->serving->always_allow_paths, r->path))
        return 0;
    dispatch(s, r, hs, x);
    return 1;
}

static int authz(void *ud, void *state, const char *method, int i, kube_authz_attrs *a)
{
    req_state *r = state;

    (void)ud;
    (void)method;
    if (i != 0)
        return 0;
    a->verb = r->verb;
    a->path = r->path;
    return 1;
}

static int serve(void *ud, void *state, kube_exchange *x, int may_block)
{
    kube_health_state hs;

    (void)may_block;
    kube_exchange_health_state(x, &hs);
    dispatch(ud, state, &hs, x);
    return KUBE_EXCHANGE_DONE;
}

static void free_state(void *state)
{
    free(state);
}

/* ---- lifecycle ---- */

int sched_server_defaults(kube_serving_options *o)
{
    static const kube_serving_defaults d = {
        .secure_port = 10259,
        .cert_dir = "",
        .pair_name = "kube-scheduler",
        .tolerate_lookup = 1,
        .port_zero = "If 0, don't serve HTTPS at all.",
    };
    return kube_serving_options_defaults(o, &d);
}

int sched_server_new(const sched_server_options *o, sched_server **out, char *err, size_t errlen)
{
    sched_server *s;
    kube_secure_options so = {0};
    int rc;

    *out = NULL;
    if (errlen)
        err[0] = '\0';
    if (!o || !o->serving)
        return KUBE_EINVAL;
    s = calloc(1, sizeof(*s));
    if (!s)
        return KUBE_ENOMEM;
    s->serving = o->serving;
    s->metrics = o->metrics;
    s->ready = o->ready;
    s->ud = o->ud;
    s->leader = o->leader;
    s->config = o->config;
    s->pods = o->pods;
    s->pods_ud = o->pods_ud;
    s->handlers = (kube_handlers){.route = route,
                                  .health = open_path,
                                  .authz = authz,
                                  .serve = serve,
                                  .free_state = free_state,
                                  .ud = s};
    so.serving = o->serving;
    so.client = o->client;
    so.handlers = &s->handlers;
    so.user_agent = "stickyvm-scheduler";
    so.thread_name = "sched-https";
    so.workers = 2;
    so.shutdown_timeout_ms = SHUTDOWN_TIMEOUT_MS;
    rc = kube_secure_new(&so, &s->secure, err, errlen);
    if (rc == KUBE_OK)
        rc = kube_secure_start(s->secure);
    if (rc != KUBE_OK) {
        sched_server_free(s);
        return rc;
    }
    *out = s;
    return KUBE_OK;
}

int sched_server_port(const sched_server *s)
{
    return kube_secure_port(s->secure);
}

void sched_server_free(sched_server *s)
{
    if (!s)
        return;
    kube_secure_free(s->secure);
    free(s);
}
