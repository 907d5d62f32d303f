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
#include "kube/serving/healthz.h"
#include "kube/serving/secure.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"

#define PATH_MAX_LEN 1024
#define SHUTDOWN_TIMEOUT_MS 2000 /* requests in flight at exit */

struct sched_server {
    kube_secure *secure;
    kube_handlers handlers;
    kube_healthz health;
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

typedef struct req_state {
    char path[PATH_MAX_LEN];
    char verb[16];
    int health; /* a health path (kube/serving/healthz.h) */
    kube_healthz_request hr;
} req_state;

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
    r->health = kube_healthz_parse(target, &r->hr);
    *state = r;
    return KUBE_OK;
}

/* ---- health checks ---- */

static int check_leader(void *ud, const kube_health_state *hs, char *why, size_t n)
{
    (void)hs;
    return kube_leader_check(ud, KUBE_LEADER_HEALTHZ_TIMEOUT_MS, why, n);
}

static int check_synced(void *ud, const kube_health_state *hs, char *why, size_t n)
{
    sched_server *s = ud;

    (void)hs;
    if (!s->ready || s->ready(s->ud))
        return KUBE_OK;
    snprintf(why, n, "waiting for handlers to sync");
    return KUBE_EINVAL;
}

/* kube-scheduler's lists: /healthz and /livez [leaderElection] (else the
 * ping k8s.io/apiserver's healthz installs when given none), /readyz
 * [leaderElection,] shutdown, sched-handler-sync. */
static int add_checks(sched_server *s)
{
    int rc = KUBE_OK;

    if (s->leader)
        rc = kube_healthz_add(&s->health, KUBE_HEALTHZ_ALL, "leaderElection", check_leader,
                              s->leader);
    if (rc == KUBE_OK)
        rc = kube_healthz_add(&s->health, KUBE_READYZ, "shutdown", kube_healthz_shutdown, NULL);
    if (rc == KUBE_OK)
        rc = kube_healthz_add(&s->health, KUBE_READYZ, "sched-handler-sync", check_synced, s);
    return rc;
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
    } else if (r->health) {
        kube_healthz_serve(&s->health, &r->hr, hs, x);
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
    rc = add_checks(s);
    if (rc != KUBE_OK) {
        sched_server_free(s);
        return rc;
    }
    so.serving = o->serving;
    so.client = o->client;
    so.informers = o->informers;
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
