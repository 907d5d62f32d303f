/*
 * tests/emulator/faults.c - fault injection and the request counters
 * benchmarks read ("verb resource" -> count).
 *
 * Faults are up to MAX_RULES rules; the first live rule that matches a
 * request (verbs, resources, users, names) applies: after delayMs it
 * answers errorCode as a Status (action "status", errorRate of the
 * requests), closes the connection without an answer ("reset") or holds
 * the request until the rule expires or is cleared and then closes it
 * ("stall"). A rule lives until its count is spent or forMs ran out.
 * Action "webhook" answers as kube-apiserver does when a validating
 * webhook with failurePolicy Fail cannot be called (down): 500
 * InternalError "failed calling webhook \"NAME\": failed to call webhook:
 * Post ...: connect: connection refused" (NAME from "webhook"), for the
 * write verbs (create, update, patch, delete, deletecollection) unless
 * verbs says which; with users it refuses only those users' writes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu_internal.h"
#include "kube/util/clock.h"
#include "kube/util/rand.h"

#define MAX_MATCH 16
#define MAX_RULES 16
#define MAX_COUNTERS 1024
#define STALL_POLL_MS 200

enum { ACTION_STATUS, ACTION_RESET, ACTION_STALL, ACTION_WEBHOOK };

static const char *const g_actions[] = {"status", "reset", "stall", "webhook"};
static const char *const g_write_verbs[] = {"create", "update", "patch", "delete",
                                            "deletecollection"};

typedef struct match_list {
    char v[MAX_MATCH][256];
    size_t n;
} match_list;

typedef struct rule {
    double rate;
    int code;
    int retry_after;
    int delay_ms;
    int action;
    int64_t remaining;  /* requests left; -1: unlimited */
    int64_t for_ms;     /* 0: until cleared */
    int64_t expires_ms; /* kube_now_ms() deadline; 0: none */
    char message[256];  /* "" : the default text for the code */
    char webhook[128];  /* ACTION_WEBHOOK: the webhook's name */
    match_list verbs, resources, users, names;
} rule;

/* What the rule that took a request decided, copied out of the lock. */
typedef struct verdict {
    int hit;
    int action;
    int code;
    int retry_after;
    int delay_ms;
    int64_t expires_ms;
    uint64_t generation;
    char message[256];
    char webhook[128];
} verdict;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_changed = PTHREAD_COND_INITIALIZER;
static rule *g_rules; /* MAX_RULES, allocated on first set */
static size_t g_n_rules;
static uint64_t g_generation; /* bumped by every set and clear */
static uint64_t g_rng = 0x9e3779b97f4a7c15ULL;

typedef struct counter {
    char *key;
    int64_t n;
} counter;

static counter g_counters[MAX_COUNTERS];
static size_t g_n_counters;
static int64_t g_total;

/* ------------------------------------------------------------------ */
/* Parsing rules                                                       */
/* ------------------------------------------------------------------ */

static int copy_list(const cJSON *spec, const char *field, match_list *out, char *err, size_t errn)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(spec, field), *v;

    out->n = 0;
    if (!arr)
        return KUBE_OK;
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > MAX_MATCH) {
        snprintf(err, errn, "%s must be an array of at most %d strings", field, MAX_MATCH);
        return KUBE_EINVAL;
    }
    cJSON_ArrayForEach(v, arr)
    {
        if (!cJSON_IsString(v) ||
            kube_strlcpy(out->v[out->n], v->valuestring, sizeof(out->v[0])) != KUBE_OK) {
            snprintf(err, errn, "%s must hold strings shorter than %zu bytes", field,
                     sizeof(out->v[0]));
            return KUBE_EINVAL;
        }
        out->n++;
    }
    return KUBE_OK;
}

static int number_in(const cJSON *spec, const char *key, double min, double max, double def,
                     double *out, char *err, size_t errn)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, key);

    *out = def;
    if (!v)
        return KUBE_OK;
    if (!cJSON_IsNumber(v) || v->valuedouble < min || v->valuedouble > max) {
        snprintf(err, errn, "%s must be a number in [%g, %g]", key, min, max);
        return KUBE_EINVAL;
    }
    *out = v->valuedouble;
    return KUBE_OK;
}

static int parse_action(const cJSON *spec, rule *r, char *err, size_t errn)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, "action");

    r->action = ACTION_STATUS;
    if (!v)
        return KUBE_OK;
    for (size_t i = 0; cJSON_IsString(v) && i < sizeof(g_actions) / sizeof(g_actions[0]); i++) {
        if (!strcmp(v->valuestring, g_actions[i])) {
            r->action = (int)i;
            return KUBE_OK;
        }
    }
    snprintf(err, errn, "action must be \"status\", \"reset\", \"stall\" or \"webhook\"");
    return KUBE_EINVAL;
}

/* "webhook": the name of the webhook a webhook rule fails to call. */
static int parse_webhook(const cJSON *spec, rule *r, char *err, size_t errn)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, "webhook");

    kube_strlcpy(r->webhook, "validate.stickyvm-test.example.com", sizeof(r->webhook));
    if (!v)
        return KUBE_OK;
    if (!cJSON_IsString(v) || !*v->valuestring ||
        kube_strlcpy(r->webhook, v->valuestring, sizeof(r->webhook))) {
        snprintf(err, errn, "webhook must be a name shorter than %zu bytes", sizeof(r->webhook));
        return KUBE_EINVAL;
    }
    return KUBE_OK;
}

static int parse_message(const cJSON *spec, rule *r, char *err, size_t errn)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, "message");

    if (!v)
        return KUBE_OK;
    if (!cJSON_IsString(v) || kube_strlcpy(r->message, v->valuestring, sizeof(r->message))) {
        snprintf(err, errn, "message must be a string shorter than %zu bytes", sizeof(r->message));
        return KUBE_EINVAL;
    }
    return KUBE_OK;
}

/* Without errorRate: a reset or a stall takes every matching request; so
 * does a status rule with a count or a lifetime ("the next N requests
 * fail"), unless it is a slow link (delayMs without errorCode). */
static double default_rate(const cJSON *spec, const rule *r)
{
    int slow_link = cJSON_GetObjectItemCaseSensitive(spec, "delayMs") &&
                    !cJSON_GetObjectItemCaseSensitive(spec, "errorCode");

    if (r->action != ACTION_STATUS)
        return 1; /* reset, stall, webhook */
    return (r->remaining > 0 || r->for_ms > 0) && !slow_link ? 1 : 0;
}

static int parse_numbers(const cJSON *spec, rule *r, char *err, size_t errn)
{
    double code, retry, delay, count, for_ms;
    int rc = number_in(spec, "errorCode", 400, 599, 500, &code, err, errn);

    if (rc == KUBE_OK)
        rc = number_in(spec, "retryAfterSeconds", 0, 3600, 0, &retry, err, errn);
    if (rc == KUBE_OK)
        rc = number_in(spec, "delayMs", 0, 60000, 0, &delay, err, errn);
    if (rc == KUBE_OK)
        rc = number_in(spec, "count", 0, 1e9, 0, &count, err, errn);
    if (rc == KUBE_OK)
        rc = number_in(spec, "forMs", 0, 86400000, 0, &for_ms, err, errn);
    if (rc != KUBE_OK)
        return rc;
    r->code = (int)code;
    r->retry_after = (int)retry;
    r->delay_ms = (int)delay;
    r->remaining = count >= 1 ? (int64_t)count : -1;
    r->for_ms = (int64_t)for_ms;
    return number_in(spec, "errorRate", 0, 1, default_rate(spec, r), &r->rate, err, errn);
}

static int parse_rule(const cJSON *spec, rule *r, char *err, size_t errn)
{
    int rc;

    if (!cJSON_IsObject(spec)) {
        snprintf(err, errn, "a fault rule must be a JSON object");
        return KUBE_EINVAL;
    }
    rc = parse_action(spec, r, err, errn);
    if (rc == KUBE_OK)
        rc = parse_numbers(spec, r, err, errn);
    if (rc == KUBE_OK)
        rc = parse_message(spec, r, err, errn);
    if (rc == KUBE_OK)
        rc = parse_webhook(spec, r, err, errn);
    if (rc == KUBE_OK)
        rc = copy_list(spec, "verbs", &r->verbs, err, errn);
    if (rc == KUBE_OK && r->action == ACTION_WEBHOOK && r->verbs.n == 0)
        for (size_t i = 0; i < sizeof(g_write_verbs) / sizeof(g_write_verbs[0]); i++)
            kube_strlcpy(r->verbs.v[r->verbs.n++], g_write_verbs[i], sizeof(r->verbs.v[0]));
    if (rc == KUBE_OK)
        rc = copy_list(spec, "resources", &r->resources, err, errn);
    if (rc == KUBE_OK)
        rc = copy_list(spec, "users", &r->users, err, errn);
    if (rc == KUBE_OK)
        rc = copy_list(spec, "names", &r->names, err, errn);
    return rc;
}

/* Parses one rule object or {"rules":[...]} into rules (MAX_RULES). */
static int parse_rules(const cJSON *spec, rule *rules, size_t *n, char *err, size_t errn)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(spec, "rules"), *v;
    int rc = KUBE_OK;

    *n = 0;
    if (!list)
        return parse_rule(spec, &rules[(*n)++], err, errn);
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) > MAX_RULES) {
        snprintf(err, errn, "rules must be an array of at most %d rules", MAX_RULES);
        return KUBE_EINVAL;
    }
    cJSON_ArrayForEach(v, list)
    {
        if (rc == KUBE_OK)
            rc = parse_rule(v, &rules[(*n)++], err, errn);
    }
    return rc;
}

int emu_faults_set(const cJSON *spec, char *err, size_t errn)
{
    rule *rules;
    size_t n;
    int64_t now = kube_now_ms();
    int rc;

    if (!cJSON_IsObject(spec)) {
        snprintf(err, errn, "the fault specification must be a JSON object");
        return KUBE_EINVAL;
    }
    rules = calloc(MAX_RULES, sizeof(*rules));
    if (!rules)
        return KUBE_ENOMEM;
    rc = parse_rules(spec, rules, &n, err, errn);
    if (rc != KUBE_OK) {
        free(rules);
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        rules[i].expires_ms = rules[i].for_ms ? now + rules[i].for_ms : 0;
    pthread_mutex_lock(&g_mu);
    free(g_rules);
    g_rules = rules;
    g_n_rules = n;
    g_generation++;
    pthread_cond_broadcast(&g_changed);
    pthread_mutex_unlock(&g_mu);
    return KUBE_OK;
}

void emu_faults_clear(void)
{
    pthread_mutex_lock(&g_mu);
    free(g_rules);
    g_rules = NULL;
    g_n_rules = 0;
    g_generation++;
    pthread_cond_broadcast(&g_changed);
    pthread_mutex_unlock(&g_mu);
}

/* ------------------------------------------------------------------ */
/* Matching and answering                                              */
/* ------------------------------------------------------------------ */

static void resource_name(const emu_attrs *a, char *out, size_t n)
{
    if (!a->is_resource)
        snprintf(out, n, "%s", a->path);
    else if (*a->subresource)
        snprintf(out, n, "%s/%s", a->resource, a->subresource);
    else
        snprintf(out, n, "%s", a->resource);
}

/* 1 when the list is empty (no restriction) or names one of a, b. */
static int allows(const match_list *l, const char *a, const char *b)
{
    if (l->n == 0)
        return 1;
    for (size_t i = 0; i < l->n; i++)
        if ((a && !strcmp(l->v[i], a)) || (b && !strcmp(l->v[i], b)))
            return 1;
    return 0;
}

static int rule_live(const rule *r, int64_t now)
{
    return r->remaining != 0 && (r->expires_ms == 0 || now < r->expires_ms);
}

static int rule_matches(const rule *r, const emu_request *req, const char *res)
{
    const emu_attrs *a = &req->attrs;

    return allows(&r->verbs, a->verb, NULL) && allows(&r->resources, res, a->resource) &&
           allows(&r->users, req->user.name ? req->user.name : "", NULL) &&
           allows(&r->names, a->name, NULL);
}

static double next_random(void)
{
    return kube_rand_unit(&g_rng);
}

/* Under g_mu: the first live rule matching req takes it (spending one of
 * its count) and decides. */
static void decide(const emu_request *req, verdict *v)
{
    char res[256];
    int64_t now = kube_now_ms();

    resource_name(&req->attrs, res, sizeof(res));
    for (size_t i = 0; i < g_n_rules; i++) {
        rule *r = &g_rules[i];
        if (!rule_live(r, now) || !rule_matches(r, req, res))
            continue;
        if (r->remaining > 0)
            r->remaining--;
        v->hit = r->rate > 0 && next_random() < r->rate;
        v->action = r->action;
        v->code = r->code;
        v->retry_after = r->retry_after;
        v->delay_ms = r->delay_ms;
        v->expires_ms = r->expires_ms;
        v->generation = g_generation;
        memcpy(v->message, r->message, sizeof(v->message));
        memcpy(v->webhook, r->webhook, sizeof(v->webhook));
        return;
    }
}

static const char *reason_for(int code)
{
    switch (code) {
    case 400:
        return "BadRequest";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "NotFound";
    case 409:
        return "Conflict";
    case 410:
        return "Expired";
    case 422:
        return "Invalid";
    case 429:
        return "TooManyRequests";
    case 503:
        return "ServiceUnavailable";
    case 504:
        return "Timeout";
    default:
        return "InternalError";
    }
}

/* A given message on a 500 is an error kube-apiserver did not turn into
 * an API status (etcd's "etcdserver: request timed out"): its
 * ErrorToAPIStatus answers it with no reason (StatusReasonUnknown). */
static void answer_fault(emu_response *resp, const verdict *v)
{
    cJSON *details = NULL;
    const char *reason = reason_for(v->code);
    char msg[256], ra[16];

    if (*v->message)
        snprintf(msg, sizeof(msg), "%s", v->message);
    else if (v->code == 429)
        snprintf(msg, sizeof(msg), "Too many requests, please try again later.");
    else if (v->code >= 500 && v->code != 503 && v->code != 504)
        snprintf(msg, sizeof(msg), "Internal error occurred: injected fault");
    else
        snprintf(msg, sizeof(msg), "injected fault (HTTP %d)", v->code);
    if (*v->message && v->code == 500)
        reason = "";
    if (v->retry_after > 0) {
        details = cJSON_CreateObject();
        cJSON_AddNumberToObject(details, "retryAfterSeconds", v->retry_after);
        snprintf(ra, sizeof(ra), "%d", v->retry_after);
        emu_response_header(resp, "Retry-After", ra);
    }
    emu_response_status(resp, v->code, reason, msg, details);
}

/* A validating webhook that cannot be called, as kube-apiserver answers
 * it: apierrors.NewInternalError of webhookutil.ErrCallingWebhook. */
static void answer_webhook(emu_response *resp, const verdict *v)
{
    char why[512], msg[640];
    cJSON *details = cJSON_CreateObject();
    cJSON *causes = details ? cJSON_AddArrayToObject(details, "causes") : NULL;
    cJSON *cause = causes ? cJSON_CreateObject() : NULL;

    snprintf(why, sizeof(why),
             "failed calling webhook \"%s\": failed to call webhook: Post "
             "\"https://webhook.stickyvm-test.svc:443/validate?timeout=10s\": dial tcp "
             "10.96.0.42:443: connect: connection refused",
             v->webhook);
    snprintf(msg, sizeof(msg), "Internal error occurred: %s", why);
    if (cause) {
        cJSON_AddStringToObject(cause, "message", why);
        cJSON_AddItemToArray(causes, cause);
    }
    emu_response_status(resp, 500, "InternalError", msg, details);
}

/* Holds the request until the rule that stalls it expires, the rules
 * change (set or clear) or the server stops. */
static void stall(const emu_server *s, const verdict *v)
{
    pthread_mutex_lock(&g_mu);
    while (g_generation == v->generation && !emu_server_stopping(s) &&
           (v->expires_ms == 0 || kube_now_ms() < v->expires_ms)) {
        struct timespec ts;
        kube_deadline_after(&ts, CLOCK_REALTIME, STALL_POLL_MS);
        pthread_cond_timedwait(&g_changed, &g_mu, &ts);
    }
    pthread_mutex_unlock(&g_mu);
}

int emu_faults_apply(emu_server *s, const emu_request *req, emu_response *resp)
{
    verdict v = {0};

    pthread_mutex_lock(&g_mu);
    decide(req, &v);
    pthread_mutex_unlock(&g_mu);
    if (v.delay_ms > 0) {
        struct timespec ts = {v.delay_ms / 1000, (long)(v.delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (!v.hit)
        return 0;
    if (v.action == ACTION_STALL)
        stall(s, &v);
    if (v.action == ACTION_STATUS)
        answer_fault(resp, &v);
    else if (v.action == ACTION_WEBHOOK)
        answer_webhook(resp, &v);
    else
        resp->abort = 1;
    return 1;
}

static cJSON *list_json(const match_list *l)
{
    cJSON *a = cJSON_CreateArray();

    for (size_t i = 0; a && i < l->n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(l->v[i]));
    return a;
}

static cJSON *rule_json(const rule *r, int64_t now)
{
    cJSON *j = cJSON_CreateObject();

    cJSON_AddBoolToObject(j, "live", rule_live(r, now));
    cJSON_AddStringToObject(j, "action", g_actions[r->action]);
    cJSON_AddNumberToObject(j, "errorRate", r->rate);
    cJSON_AddNumberToObject(j, "errorCode", r->code);
    cJSON_AddNumberToObject(j, "retryAfterSeconds", r->retry_after);
    cJSON_AddNumberToObject(j, "delayMs", r->delay_ms);
    if (r->remaining >= 0)
        cJSON_AddNumberToObject(j, "remaining", (double)r->remaining);
    if (r->expires_ms)
        cJSON_AddNumberToObject(j, "remainingMs",
                                (double)(r->expires_ms > now ? r->expires_ms - now : 0));
    if (*r->message)
        cJSON_AddStringToObject(j, "message", r->message);
    if (r->action == ACTION_WEBHOOK)
        cJSON_AddStringToObject(j, "webhook", r->webhook);
    cJSON_AddItemToObject(j, "verbs", list_json(&r->verbs));
    cJSON_AddItemToObject(j, "resources", list_json(&r->resources));
    cJSON_AddItemToObject(j, "users", list_json(&r->users));
    cJSON_AddItemToObject(j, "names", list_json(&r->names));
    return j;
}

cJSON *emu_faults_json(void)
{
    cJSON *j = cJSON_CreateObject(), *rules = cJSON_AddArrayToObject(j, "rules");
    int64_t now = kube_now_ms();
    int active = 0;

    pthread_mutex_lock(&g_mu);
    for (size_t i = 0; i < g_n_rules; i++) {
        active |= rule_live(&g_rules[i], now);
        cJSON_AddItemToArray(rules, rule_json(&g_rules[i], now));
    }
    pthread_mutex_unlock(&g_mu);
    cJSON_AddBoolToObject(j, "active", active);
    return j;
}

/* ------------------------------------------------------------------ */
/* Counters                                                            */
/* ------------------------------------------------------------------ */

void emu_counters_count(const emu_attrs *a)
{
    char key[320], res[256];

    resource_name(a, res, sizeof(res));
    snprintf(key, sizeof(key), "%s %s", a->verb, res);
    pthread_mutex_lock(&g_mu);
    g_total++;
    for (size_t i = 0; i < g_n_counters; i++) {
        if (!strcmp(g_counters[i].key, key)) {
            g_counters[i].n++;
            pthread_mutex_unlock(&g_mu);
            return;
        }
    }
    if (g_n_counters < MAX_COUNTERS && (g_counters[g_n_counters].key = kube_strdup(key)) != NULL)
        g_counters[g_n_counters++].n = 1;
    pthread_mutex_unlock(&g_mu);
}

cJSON *emu_counters_json(void)
{
    cJSON *j = cJSON_CreateObject(), *req;

    if (!j)
        return NULL;
    pthread_mutex_lock(&g_mu);
    cJSON_AddNumberToObject(j, "total", (double)g_total);
    req = cJSON_AddObjectToObject(j, "requests");
    for (size_t i = 0; req && i < g_n_counters; i++)
        cJSON_AddNumberToObject(req, g_counters[i].key, (double)g_counters[i].n);
    pthread_mutex_unlock(&g_mu);
    return j;
}

void emu_counters_reset(void)
{
    pthread_mutex_lock(&g_mu);
    for (size_t i = 0; i < g_n_counters; i++)
        free(g_counters[i].key);
    g_n_counters = 0;
    g_total = 0;
    pthread_mutex_unlock(&g_mu);
}
