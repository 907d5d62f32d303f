/*
 * tests/emulator/faults.c - fault injection (error rate with a status code
 * and Retry-After, added latency, restricted to verbs/resources) and the
 * request counters benchmarks read ("verb resource" -> count).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu_internal.h"
#include "kube/util/clock.h"
#include "kube/util/rand.h"

#define MAX_MATCH 16
#define MAX_COUNTERS 1024

typedef struct faults {
    int active;
    double rate;
    int code;
    int retry_after;
    int delay_ms;
    char verbs[MAX_MATCH][32];
    size_t n_verbs;
    char resources[MAX_MATCH][96];
    size_t n_resources;
    uint64_t rng;
} faults;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static faults g_faults;

typedef struct counter {
    char *key;
    int64_t n;
} counter;

static counter g_counters[MAX_COUNTERS];
static size_t g_n_counters;
static int64_t g_total;

/* ------------------------------------------------------------------ */
/* Faults                                                              */
/* ------------------------------------------------------------------ */

static int copy_list(const cJSON *arr, char *dst, size_t width, size_t *n, char *err, size_t errn,
                     const char *field)
{
    const cJSON *v;

    *n = 0;
    if (!arr)
        return KUBE_OK;
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > MAX_MATCH) {
        snprintf(err, errn, "%s must be an array of at most %d strings", field, MAX_MATCH);
        return KUBE_EINVAL;
    }
    cJSON_ArrayForEach(v, arr)
    {
        if (!cJSON_IsString(v) ||
            kube_strlcpy(dst + *n * width, v->valuestring, width) != KUBE_OK) {
            snprintf(err, errn, "%s must hold short strings", field);
            return KUBE_EINVAL;
        }
        (*n)++;
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

int emu_faults_set(const cJSON *spec, char *err, size_t errn)
{
    faults f = {0};
    double rate, code, retry, delay;
    int rc;

    if (!cJSON_IsObject(spec)) {
        snprintf(err, errn, "the fault specification must be a JSON object");
        return KUBE_EINVAL;
    }
    rc = number_in(spec, "errorRate", 0, 1, 0, &rate, err, errn);
    if (rc == KUBE_OK)
        rc = number_in(spec, "errorCode", 400, 599, 500, &code, err, errn);
    if (rc == KUBE_OK)
        rc = number_in(spec, "retryAfterSeconds", 0, 3600, 0, &retry, err, errn);
    if (rc == KUBE_OK)
        rc = number_in(spec, "delayMs", 0, 60000, 0, &delay, err, errn);
    if (rc == KUBE_OK)
        rc = copy_list(cJSON_GetObjectItemCaseSensitive(spec, "verbs"), &f.verbs[0][0],
                       sizeof(f.verbs[0]), &f.n_verbs, err, errn, "verbs");
    if (rc == KUBE_OK)
        rc = copy_list(cJSON_GetObjectItemCaseSensitive(spec, "resources"), &f.resources[0][0],
                       sizeof(f.resources[0]), &f.n_resources, err, errn, "resources");
    if (rc != KUBE_OK)
        return rc;
    f.active = 1;
    f.rate = rate;
    f.code = (int)code;
    f.retry_after = (int)retry;
    f.delay_ms = (int)delay;
    f.rng = kube_rand_seed();
    pthread_mutex_lock(&g_mu);
    g_faults = f;
    pthread_mutex_unlock(&g_mu);
    return KUBE_OK;
}

void emu_faults_clear(void)
{
    pthread_mutex_lock(&g_mu);
    memset(&g_faults, 0, sizeof(g_faults));
    pthread_mutex_unlock(&g_mu);
}

static int listed(const char list[][96], size_t n, const char *v)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(list[i], v))
            return 1;
    return 0;
}

static int verb_listed(const faults *f, const char *v)
{
    for (size_t i = 0; i < f->n_verbs; i++)
        if (!strcmp(f->verbs[i], v))
            return 1;
    return 0;
}

static void resource_name(const emu_attrs *a, char *out, size_t n)
{
    if (!a->is_resource)
        snprintf(out, n, "%s", a->path);
    else if (*a->subresource)
        snprintf(out, n, "%s/%s", a->resource, a->subresource);
    else
        snprintf(out, n, "%s", a->resource);
}

static double next_random(faults *f)
{
    return kube_rand_unit(&f->rng);
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

static void answer_fault(emu_response *resp, int code, int retry_after)
{
    cJSON *details = NULL;
    char msg[128], ra[16];

    if (code == 429)
        snprintf(msg, sizeof(msg), "Too many requests, please try again later.");
    else if (code >= 500 && code != 503 && code != 504)
        snprintf(msg, sizeof(msg), "Internal error occurred: injected fault");
    else
        snprintf(msg, sizeof(msg), "injected fault (HTTP %d)", code);
    if (retry_after > 0) {
        details = cJSON_CreateObject();
        cJSON_AddNumberToObject(details, "retryAfterSeconds", retry_after);
        snprintf(ra, sizeof(ra), "%d", retry_after);
        emu_response_header(resp, "Retry-After", ra);
    }
    emu_response_status(resp, code, reason_for(code), msg, details);
}

int emu_faults_apply(emu_server *s, const emu_request *req, emu_response *resp)
{
    char res[256];
    int hit = 0, code = 0, retry = 0, delay = 0;

    (void)s;
    resource_name(&req->attrs, res, sizeof(res));
    pthread_mutex_lock(&g_mu);
    if (g_faults.active && (g_faults.n_verbs == 0 || verb_listed(&g_faults, req->attrs.verb)) &&
        (g_faults.n_resources == 0 || listed(g_faults.resources, g_faults.n_resources, res) ||
         listed(g_faults.resources, g_faults.n_resources, req->attrs.resource))) {
        delay = g_faults.delay_ms;
        hit = g_faults.rate > 0 && next_random(&g_faults) < g_faults.rate;
        code = g_faults.code;
        retry = g_faults.retry_after;
    }
    pthread_mutex_unlock(&g_mu);
    if (delay > 0) {
        struct timespec ts = {delay / 1000, (long)(delay % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (!hit)
        return 0;
    answer_fault(resp, code, retry);
    return 1;
}

cJSON *emu_faults_json(void)
{
    cJSON *j = cJSON_CreateObject();

    pthread_mutex_lock(&g_mu);
    cJSON_AddBoolToObject(j, "active", g_faults.active);
    if (g_faults.active) {
        cJSON_AddNumberToObject(j, "errorRate", g_faults.rate);
        cJSON_AddNumberToObject(j, "errorCode", g_faults.code);
        cJSON_AddNumberToObject(j, "retryAfterSeconds", g_faults.retry_after);
        cJSON_AddNumberToObject(j, "delayMs", g_faults.delay_ms);
    }
    pthread_mutex_unlock(&g_mu);
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
