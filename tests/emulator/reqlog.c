/*
 * tests/emulator/reqlog.c - the request log behind GET
 * /emulator/v1/requests: the last LOG_CAP API requests (a ring), each with
 * the wall-clock time it arrived, the authenticated user, verb, resource
 * ("pods/binding"), namespace, name (from the URL) and the status code it
 * got (0 while in flight, or when a fault closed the connection without
 * an answer). Entries are kept in arrival order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu_internal.h"
#include "kube/util/buf.h"

#define LOG_CAP 100000

enum { F_USER, F_VERB, F_RESOURCE, F_NAMESPACE, F_NAME, F_COUNT };

typedef struct log_entry {
    uint64_t id; /* 0: empty */
    int64_t time_ns;
    int code;
    char *fields; /* F_COUNT NUL-terminated strings, back to back */
} log_entry;

static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
static log_entry *g_ring; /* LOG_CAP entries, allocated on first use */
static uint64_t g_last;   /* id of the newest entry */
static uint64_t g_first;  /* ids below this were cleared */

static int64_t wall_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The fields of req, packed (caller frees), NULL when out of memory. */
static char *pack_fields(const emu_request *req)
{
    const emu_attrs *a = &req->attrs;
    kube_buf b = KUBE_BUF_INIT;
    const char *res = a->is_resource ? a->resource : a->path;
    int rc = kube_buf_append(&b, req->user.name ? req->user.name : "",
                             strlen(req->user.name ? req->user.name : "") + 1);

    if (rc == KUBE_OK)
        rc = kube_buf_append(&b, a->verb, strlen(a->verb) + 1);
    if (rc == KUBE_OK)
        rc = kube_buf_append(&b, res, strlen(res));
    if (rc == KUBE_OK && a->is_resource && *a->subresource)
        rc = kube_buf_printf(&b, "/%s", a->subresource);
    if (rc == KUBE_OK)
        rc = kube_buf_append(&b, "", 1);
    if (rc == KUBE_OK)
        rc = kube_buf_append(&b, a->namespace_, strlen(a->namespace_) + 1);
    if (rc == KUBE_OK)
        rc = kube_buf_append(&b, a->name, strlen(a->name) + 1);
    if (rc != KUBE_OK) {
        kube_buf_free(&b);
        return NULL;
    }
    return b.data;
}

uint64_t emu_reqlog_add(const emu_request *req)
{
    char *fields = pack_fields(req);
    uint64_t id = 0;
    log_entry *e;

    if (!fields)
        return 0;
    pthread_mutex_lock(&g_log_mu);
    if (!g_ring)
        g_ring = calloc(LOG_CAP, sizeof(*g_ring));
    if (g_ring) {
        id = ++g_last;
        e = &g_ring[(id - 1) % LOG_CAP];
        free(e->fields);
        *e = (log_entry){id, wall_ns(), 0, fields};
        fields = NULL;
    }
    pthread_mutex_unlock(&g_log_mu);
    free(fields);
    return id;
}

void emu_reqlog_done(uint64_t id, int code)
{
    pthread_mutex_lock(&g_log_mu);
    if (id && g_ring && g_ring[(id - 1) % LOG_CAP].id == id)
        g_ring[(id - 1) % LOG_CAP].code = code;
    pthread_mutex_unlock(&g_log_mu);
}

/* The field-th string of e. */
static const char *field(const log_entry *e, int which)
{
    const char *p = e->fields;

    for (int i = 0; i < which; i++)
        p += strlen(p) + 1;
    return p;
}

static int wanted(const log_entry *e, const char *verb, const char *resource, const char *user)
{
    return (!verb || !strcmp(field(e, F_VERB), verb)) &&
           (!resource || !strcmp(field(e, F_RESOURCE), resource)) &&
           (!user || !strcmp(field(e, F_USER), user));
}

static cJSON *entry_json(const log_entry *e)
{
    cJSON *j = cJSON_CreateObject();
    char ns[24];

    /* as an integer: a double would round nanoseconds since 1970 */
    snprintf(ns, sizeof(ns), "%lld", (long long)e->time_ns);
    cJSON_AddRawToObject(j, "timeNs", ns);
    cJSON_AddStringToObject(j, "user", field(e, F_USER));
    cJSON_AddStringToObject(j, "verb", field(e, F_VERB));
    cJSON_AddStringToObject(j, "resource", field(e, F_RESOURCE));
    cJSON_AddStringToObject(j, "namespace", field(e, F_NAMESPACE));
    cJSON_AddStringToObject(j, "name", field(e, F_NAME));
    cJSON_AddNumberToObject(j, "code", e->code);
    return j;
}

cJSON *emu_reqlog_json(const char *verb, const char *resource, const char *user)
{
    cJSON *j = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(j, "items");
    uint64_t from;

    pthread_mutex_lock(&g_log_mu);
    from = g_last > LOG_CAP ? g_last - LOG_CAP + 1 : 1;
    if (from < g_first)
        from = g_first;
    for (uint64_t id = from; g_ring && items && id <= g_last; id++) {
        const log_entry *e = &g_ring[(id - 1) % LOG_CAP];
        if (e->id == id && wanted(e, verb, resource, user))
            cJSON_AddItemToArray(items, entry_json(e));
    }
    pthread_mutex_unlock(&g_log_mu);
    return j;
}

void emu_reqlog_clear(void)
{
    pthread_mutex_lock(&g_log_mu);
    for (size_t i = 0; g_ring && i < LOG_CAP; i++)
        free(g_ring[i].fields);
    free(g_ring);
    g_ring = NULL;
    g_first = g_last + 1;
    pthread_mutex_unlock(&g_log_mu);
}
