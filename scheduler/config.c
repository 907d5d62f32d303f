/*
 * scheduler/config.c - KubeSchedulerConfiguration: YAML decoding (libyaml
 * document API, strict: unknown and duplicate fields are errors), v1.28
 * defaulting (defaults.go, default_plugins.go mergePluginSet), validation
 * (apis/config/validation) and YAML output (--write-config-to).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "framework/framework.h"
#include "kube/buf.h"
#include "kube/errors.h"
#include "kube/log.h"

/* ------------------------------------------------------------------ */
/* Go durations                                                        */
/* ------------------------------------------------------------------ */

static int64_t unit_ns(const char *u, size_t n)
{
    static const struct {
        const char *name;
        int64_t ns;
    } units[] = {
        {"ns", 1},          {"us", 1000},          {"\xc2\xb5s", 1000}, {"\xce\xbcs", 1000},
        {"ms", 1000000},    {"s", 1000000000LL},   {"m", 60000000000LL}, {"h", 3600000000000LL},
    };
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strlen(units[i].name) == n && memcmp(units[i].name, u, n) == 0)
            return units[i].ns;
    return 0;
}

/* One "<number><unit>" element of a duration, added to *total (ns). */
static int duration_element(const char **sp, __int128 *total)
{
    const char *s = *sp;
    __int128 whole = 0, frac = 0, scale = 1;
    int digits = 0;
    for (; isdigit((unsigned char)*s); s++, digits++) {
        whole = whole * 10 + (*s - '0');
        if (whole > (__int128)INT64_MAX)
            return KUBE_EINVAL;
    }
    if (*s == '.') {
        for (s++; isdigit((unsigned char)*s); s++, digits++)
            if (scale < (__int128)1000000000000000000LL) {
                frac = frac * 10 + (*s - '0');
                scale *= 10;
            }
    }
    if (!digits)
        return KUBE_EINVAL;
    const char *u = s;
    while (*s && !isdigit((unsigned char)*s) && *s != '.')
        s++;
    int64_t ns = unit_ns(u, (size_t)(s - u));
    if (!ns)
        return KUBE_EINVAL;
    *total += whole * ns + frac * ns / scale;
    if (*total > (__int128)INT64_MAX)
        return KUBE_EINVAL;
    *sp = s;
    return KUBE_OK;
}

int sched_parse_duration(const char *s, int64_t *ms)
{
    if (!s || !*s)
        return KUBE_EINVAL;
    int neg = 0;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    if (strcmp(s, "0") == 0) {
        *ms = 0;
        return KUBE_OK;
    }
    if (!*s)
        return KUBE_EINVAL;
    __int128 total = 0;
    while (*s)
        if (duration_element(&s, &total) != KUBE_OK)
            return KUBE_EINVAL;
    int64_t v = (int64_t)(total / 1000000);
    *ms = neg ? -v : v;
    return KUBE_OK;
}

void sched_format_duration(int64_t ms, char *out, size_t n)
{
    const char *sign = ms < 0 ? "-" : "";
    uint64_t v = ms < 0 ? (uint64_t)(-(ms + 1)) + 1 : (uint64_t)ms;
    if (v == 0) {
        snprintf(out, n, "0s");
        return;
    }
    if (v < 1000) {
        snprintf(out, n, "%s%llums", sign, (unsigned long long)v);
        return;
    }
    unsigned long long h = v / 3600000, m = v / 60000 % 60, s = v / 1000 % 60, f = v % 1000;
    char sec[32];
    if (f) {
        char frac[4];
        snprintf(frac, sizeof(frac), "%03llu", f);
        for (int i = 2; i > 0 && frac[i] == '0'; i--)
            frac[i] = '\0';
        snprintf(sec, sizeof(sec), "%llu.%ss", s, frac);
    } else {
        snprintf(sec, sizeof(sec), "%llus", s);
    }
    if (h)
        snprintf(out, n, "%s%lluh%llum%s", sign, h, m, sec);
    else if (m)
        snprintf(out, n, "%s%llum%s", sign, m, sec);
    else
        snprintf(out, n, "%s%s", sign, sec);
}

/* ------------------------------------------------------------------ */
/* Static tables                                                       */
/* ------------------------------------------------------------------ */

static const char *const ep_keys[SCHED_EP_COUNT] = {
    [SCHED_EP_PRE_ENQUEUE] = "preEnqueue", [SCHED_EP_QUEUE_SORT] = "queueSort",
    [SCHED_EP_PRE_FILTER] = "preFilter",   [SCHED_EP_FILTER] = "filter",
    [SCHED_EP_POST_FILTER] = "postFilter", [SCHED_EP_PRE_SCORE] = "preScore",
    [SCHED_EP_SCORE] = "score",            [SCHED_EP_RESERVE] = "reserve",
    [SCHED_EP_PERMIT] = "permit",          [SCHED_EP_PRE_BIND] = "preBind",
    [SCHED_EP_BIND] = "bind",              [SCHED_EP_POST_BIND] = "postBind",
    [SCHED_EP_MULTI_POINT] = "multiPoint",
};

const char *sched_ext_point_key(sched_ext_point ep)
{
    return (unsigned)ep < SCHED_EP_COUNT ? ep_keys[ep] : "";
}

/* kube-scheduler v1.28 getDefaultPlugins() for v1 and v1beta3 (identical
 * in 1.28; SchedulingGates appended because PodSchedulingReadiness is on
 * by default). The built-in registry has every one of them, the in-tree
 * volume limits EBSLimits, GCEPDLimits and AzureDiskLimits included. */
static const sched_plugin default_plugins_v1[] = {
    {"PrioritySort", 0},
    {"NodeUnschedulable", 0},
    {"NodeName", 0},
    {"TaintToleration", 3},
    {"NodeAffinity", 2},
    {"NodePorts", 0},
    {"NodeResourcesFit", 1},
    {"VolumeRestrictions", 0},
    {"EBSLimits", 0},
    {"GCEPDLimits", 0},
    {"NodeVolumeLimits", 0},
    {"AzureDiskLimits", 0},
    {"VolumeBinding", 0},
    {"VolumeZone", 0},
    {"PodTopologySpread", 2},
    {"InterPodAffinity", 2},
    {"DefaultPreemption", 0},
    {"NodeResourcesBalancedAllocation", 1},
    {"ImageLocality", 1},
    {"DefaultBinder", 0},
    {"SchedulingGates", 0},
};

const sched_plugin *sched_default_plugins(const char *api_version, size_t *n)
{
    if (api_version &&
        (strcmp(api_version, SCHED_API_V1) == 0 || strcmp(api_version, SCHED_API_V1BETA3) == 0)) {
        *n = sizeof(default_plugins_v1) / sizeof(default_plugins_v1[0]);
        return default_plugins_v1;
    }
    *n = 0;
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Decoder state, paths and errors                                     */
/* ------------------------------------------------------------------ */

typedef struct dec {
    yaml_document_t *doc;
    const char *source;
    const fw_registry *reg;
    char *err;
    size_t errlen;
    char path[512];
    size_t plen;
} dec;

static int fail(dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(dec *d, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (d->err && d->errlen) {
        if (d->plen)
            snprintf(d->err, d->errlen, "%s: %s: %s", d->source, d->path, msg);
        else
            snprintf(d->err, d->errlen, "%s: %s", d->source, msg);
    }
    return KUBE_ECONFIG;
}

static size_t push_key(dec *d, const char *key)
{
    size_t old = d->plen;
    int w = snprintf(d->path + d->plen, sizeof(d->path) - d->plen, "%s%s", d->plen ? "." : "", key);
    if (w > 0)
        d->plen = d->plen + (size_t)w < sizeof(d->path) ? d->plen + (size_t)w : sizeof(d->path) - 1;
    return old;
}

static size_t push_index(dec *d, size_t i)
{
    size_t old = d->plen;
    int w = snprintf(d->path + d->plen, sizeof(d->path) - d->plen, "[%zu]", i);
    if (w > 0)
        d->plen = d->plen + (size_t)w < sizeof(d->path) ? d->plen + (size_t)w : sizeof(d->path) - 1;
    return old;
}

static void pop(dec *d, size_t old)
{
    d->plen = old;
    d->path[old] = '\0';
}

/* ------------------------------------------------------------------ */
/* YAML scalars (YAML 1.1 resolution, as sigs.k8s.io/yaml's go-yaml v2)  */
/* ------------------------------------------------------------------ */

typedef enum scalar_kind { SK_STRING, SK_NULL, SK_BOOL, SK_INT, SK_FLOAT } scalar_kind;

static int word_in(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (strcmp(s, *words) == 0)
            return 1;
    return 0;
}

static const char *const true_words[] = {"y", "Y", "yes", "Yes", "YES", "on", "On", "ON",
                                         "true", "True", "TRUE", NULL};
static const char *const false_words[] = {"n", "N", "no", "No", "NO", "off", "Off", "OFF",
                                          "false", "False", "FALSE", NULL};
static const char *const null_words[] = {"", "~", "null", "Null", "NULL", NULL};

static int looks_int(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s) && *s != '_')
            return 0;
    return 1;
}

static int looks_float(const char *s)
{
    if (word_in(s, (const char *const[]){".inf", ".Inf", ".INF", "+.inf", "-.inf", ".nan",
                                         ".NaN", ".NAN", NULL}))
        return 1;
    char *end;
    errno = 0;
    strtod(s, &end);
    return *s && *end == '\0' && !isspace((unsigned char)*s) && strpbrk(s, "0123456789");
}

static const char *scalar_text(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

static scalar_kind classify(const yaml_node_t *n)
{
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return SK_STRING;
    const char *s = scalar_text(n);
    if (word_in(s, null_words))
        return SK_NULL;
    if (word_in(s, true_words) || word_in(s, false_words))
        return SK_BOOL;
    if (looks_int(s))
        return SK_INT;
    if (looks_float(s))
        return SK_FLOAT;
    return SK_STRING;
}

static yaml_node_t *node_at(dec *d, int index)
{
    return yaml_document_get_node(d->doc, index);
}

static int is_null(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE && classify(n) == SK_NULL;
}

static const char *kind_name(const yaml_node_t *n)
{
    if (n->type == YAML_MAPPING_NODE)
        return "object";
    if (n->type == YAML_SEQUENCE_NODE)
        return "array";
    switch (classify(n)) {
    case SK_NULL: return "null";
    case SK_BOOL: return "bool";
    case SK_INT:
    case SK_FLOAT: return "number";
    default: return "string";
    }
}

/* Field decoders. Each takes the value node; null leaves the default. */

static int get_string(dec *d, const yaml_node_t *n, char **out)
{
    if (is_null(n))
        return KUBE_OK;
    if (n->type != YAML_SCALAR_NODE || classify(n) != SK_STRING)
        return fail(d, "expected a string, got %s", kind_name(n));
    char *s = kube_strdup(scalar_text(n));
    if (!s)
        return KUBE_ENOMEM;
    free(*out);
    *out = s;
    return KUBE_OK;
}

static int get_int(dec *d, const yaml_node_t *n, int64_t min, int64_t max, int64_t *out,
                   int *set)
{
    if (is_null(n))
        return KUBE_OK;
    if (n->type != YAML_SCALAR_NODE || classify(n) != SK_INT)
        return fail(d, "expected an integer, got %s", kind_name(n));
    char buf[64];
    size_t k = 0;
    for (const char *s = scalar_text(n); *s && k + 1 < sizeof(buf); s++)
        if (*s != '_')
            buf[k++] = *s;
    buf[k] = '\0';
    if (kube_parse_int64(buf, min, max, out) != KUBE_OK)
        return fail(d, "integer %s out of range", scalar_text(n));
    if (set)
        *set = 1;
    return KUBE_OK;
}

static int get_int32(dec *d, const yaml_node_t *n, int32_t *out, int *set)
{
    int64_t v = *out;
    int rc = get_int(d, n, INT32_MIN, INT32_MAX, &v, set);
    *out = (int32_t)v;
    return rc;
}

static int get_float(dec *d, const yaml_node_t *n, double *out)
{
    if (is_null(n))
        return KUBE_OK;
    scalar_kind k = n->type == YAML_SCALAR_NODE ? classify(n) : SK_STRING;
    if (n->type != YAML_SCALAR_NODE || (k != SK_INT && k != SK_FLOAT))
        return fail(d, "expected a number, got %s", kind_name(n));
    *out = strtod(scalar_text(n), NULL);
    return KUBE_OK;
}

static int get_bool(dec *d, const yaml_node_t *n, int *out)
{
    if (is_null(n))
        return KUBE_OK;
    if (n->type != YAML_SCALAR_NODE || classify(n) != SK_BOOL)
        return fail(d, "expected a boolean, got %s", kind_name(n));
    *out = word_in(scalar_text(n), true_words);
    return KUBE_OK;
}

static int get_duration(dec *d, const yaml_node_t *n, int64_t *ms)
{
    if (is_null(n))
        return KUBE_OK;
    if (n->type != YAML_SCALAR_NODE || classify(n) != SK_STRING)
        return fail(d, "expected a duration string such as \"15s\", got %s", kind_name(n));
    if (sched_parse_duration(scalar_text(n), ms) != KUBE_OK)
        return fail(d, "invalid duration \"%s\"", scalar_text(n));
    return KUBE_OK;
}

/* Walks a mapping, calling field(d, ud, key, value) for each pair with the
 * key pushed on the path. Duplicate keys are errors. */
typedef int (*field_fn)(dec *d, void *ud, const char *key, yaml_node_t *value);

static int walk_map(dec *d, const yaml_node_t *n, field_fn field, void *ud)
{
    if (is_null(n))
        return KUBE_OK;
    if (n->type != YAML_MAPPING_NODE)
        return fail(d, "expected an object, got %s", kind_name(n));
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node_at(d, p->key), *v = node_at(d, p->value);
        if (!k || !v || k->type != YAML_SCALAR_NODE)
            return fail(d, "object keys must be strings");
        const char *key = scalar_text(k);
        for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *k2 = node_at(d, q->key);
            if (k2 && k2->type == YAML_SCALAR_NODE && strcmp(scalar_text(k2), key) == 0) {
                size_t old = push_key(d, key);
                int rc = fail(d, "duplicate field \"%s\"", key);
                pop(d, old);
                return rc;
            }
        }
        size_t old = push_key(d, key);
        int rc = field(d, ud, key, v);
        if (rc != KUBE_OK)
            return rc;
        pop(d, old);
    }
    return KUBE_OK;
}

static int unknown_field(dec *d, const char *key)
{
    return fail(d, "unknown field \"%s\"", key);
}

/* Converts a YAML node to cJSON (plugin args). */
static int to_json(dec *d, const yaml_node_t *n, cJSON **out, int depth)
{
    *out = NULL;
    if (depth > 64)
        return fail(d, "nesting too deep");
    if (n->type == YAML_MAPPING_NODE) {
        cJSON *o = cJSON_CreateObject();
        if (!o)
            return KUBE_ENOMEM;
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
            yaml_node_t *k = node_at(d, p->key), *v = node_at(d, p->value);
            cJSON *child;
            if (!k || !v || k->type != YAML_SCALAR_NODE) {
                cJSON_Delete(o);
                return fail(d, "object keys must be strings");
            }
            if (cJSON_GetObjectItemCaseSensitive(o, scalar_text(k))) {
                size_t old = push_key(d, scalar_text(k));
                int rc = fail(d, "duplicate field \"%s\"", scalar_text(k));
                pop(d, old);
                cJSON_Delete(o);
                return rc;
            }
            size_t old = push_key(d, scalar_text(k));
            int rc = to_json(d, v, &child, depth + 1);
            if (rc != KUBE_OK) {
                cJSON_Delete(o);
                return rc;
            }
            pop(d, old);
            cJSON_AddItemToObject(o, scalar_text(k), child);
        }
        *out = o;
        return KUBE_OK;
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        cJSON *a = cJSON_CreateArray();
        if (!a)
            return KUBE_ENOMEM;
        size_t i = 0;
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++, i++) {
            cJSON *child;
            size_t old = push_index(d, i);
            int rc = to_json(d, node_at(d, *it), &child, depth + 1);
            if (rc != KUBE_OK) {
                cJSON_Delete(a);
                return rc;
            }
            pop(d, old);
            cJSON_AddItemToArray(a, child);
        }
        *out = a;
        return KUBE_OK;
    }
    const char *s = scalar_text(n);
    switch (classify(n)) {
    case SK_NULL: *out = cJSON_CreateNull(); break;
    case SK_BOOL: *out = cJSON_CreateBool(word_in(s, true_words)); break;
    case SK_INT:
    case SK_FLOAT: *out = cJSON_CreateNumber(strtod(s, NULL)); break;
    default: *out = cJSON_CreateString(s); break;
    }
    return *out ? KUBE_OK : KUBE_ENOMEM;
}

/* ------------------------------------------------------------------ */
/* Decoding                                                            */
/* ------------------------------------------------------------------ */

/* Which pointer fields the file set (kube-scheduler defaults nil ones). */
typedef struct given {
    int parallelism, pct, initial_backoff, max_backoff;
    int enable_profiling, enable_contention, leader_elect;
    int kind;
} given;

typedef struct top_ctx {
    sched_config *cfg;
    given *g;
    const yaml_node_t *profiles; /* decoded after apiVersion is known */
    const yaml_node_t *extenders;
} top_ctx;

static int client_field(dec *d, void *ud, const char *key, yaml_node_t *v)
{
    sched_client_connection *c = ud;
    if (strcmp(key, "kubeconfig") == 0)
        return get_string(d, v, &c->kubeconfig);
    if (strcmp(key, "contentType") == 0)
        return get_string(d, v, &c->content_type);
    if (strcmp(key, "acceptContentTypes") == 0)
        return get_string(d, v, &c->accept_content_types);
    if (strcmp(key, "qps") == 0)
        return get_float(d, v, &c->qps);
    if (strcmp(key, "burst") == 0)
        return get_int32(d, v, &c->burst, NULL);
    return unknown_field(d, key);
}

typedef struct le_ctx {
    sched_leader_election *le;
    given *g;
} le_ctx;

static int le_field(dec *d, void *ud, const char *key, yaml_node_t *v)
{
    le_ctx *c = ud;
    sched_leader_election *le = c->le;
    if (strcmp(key, "leaderElect") == 0) {
        c->g->leader_elect = !is_null(v);
        return get_bool(d, v, &le->leader_elect);
    }
    if (strcmp(key, "leaseDuration") == 0)
        return get_duration(d, v, &le->lease_duration_ms);
    if (strcmp(key, "renewDeadline") == 0)
        return get_duration(d, v, &le->renew_deadline_ms);
    if (strcmp(key, "retryPeriod") == 0)
        return get_duration(d, v, &le->retry_period_ms);
    if (strcmp(key, "resourceLock") == 0)
        return get_string(d, v, &le->resource_lock);
    if (strcmp(key, "resourceName") == 0)
        return get_string(d, v, &le->resource_name);
    if (strcmp(key, "resourceNamespace") == 0)
        return get_string(d, v, &le->resource_namespace);
    return unknown_field(d, key);
}

/* A plugin named in the file must be one we have. */
static int check_plugin_name(dec *d, const char *name, int disabled)
{
    if (fw_registry_find(d->reg, name))
        return KUBE_OK;
    if (disabled && (strcmp(name, "*") == 0 || fw_upstream_plugin_known(name)))
        return KUBE_OK;
    if (fw_upstream_plugin_known(name))
        return fail(d, "plugin \"%s\" is not implemented by stickyvm-scheduler", name);
    return fail(d, "unknown plugin \"%s\"", name);
}

typedef struct plugin_ctx {
    sched_plugin *p;
    int disabled;
} plugin_ctx;

static int plugin_field(dec *d, void *ud, const char *key, yaml_node_t *v)
{
    plugin_ctx *c = ud;
    if (strcmp(key, "name") == 0) {
        int rc = get_string(d, v, &c->p->name);
        if (rc == KUBE_OK && c->p->name)
            rc = check_plugin_name(d, c->p->name, c->disabled);
        return rc;
    }
    if (strcmp(key, "weight") == 0)
        return get_int32(d, v, &c->p->weight, NULL);
    return unknown_field(d, key);
}

static int decode_plugin_list(dec *d, const yaml_node_t *n, sched_plugin **out, size_t *count,
                              int disabled)
{
    if (is_null(n))
        return KUBE_OK;
    if (n->type != YAML_SEQUENCE_NODE)
        return fail(d, "expected an array, got %s", kind_name(n));
    size_t len = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    *out = calloc(len ? len : 1, sizeof(**out));
    if (!*out)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < len; i++) {
        size_t old = push_index(d, i);
        plugin_ctx c = {&(*out)[i], disabled};
        *count = i + 1;
        int rc = walk_map(d, node_at(d, n->data.sequence.items.start[i]), plugin_field, &c);
        if (rc == KUBE_OK && !(*out)[i].name) {
            size_t o2 = push_key(d, "name");
            rc = fail(d, "required value");
            pop(d, o2);
        }
        if (rc != KUBE_OK)
            return rc;
        pop(d, old);
    }
    return KUBE_OK;
}

static int set_field(dec *d, void *ud, const char *key, yaml_node_t *v)
{
    sched_plugin_set *s = ud;
    if (strcmp(key, "enabled") == 0)
        return decode_plugin_list(d, v, &s->enabled, &s->n_enabled, 0);
    if (strcmp(key, "disabled") == 0)
        return decode_plugin_list(d, v, &s->disabled, &s->n_disabled, 1);
    return unknown_field(d, key);
}

static int plugins_field(dec *d, void *ud, const char *key, yaml_node_t *v)
{
    sched_plugin_set *sets = ud;
    for (int e = 0; e < SCHED_EP_COUNT; e++)
        if (strcmp(key, ep_keys[e]) == 0)
            return walk_map(d, v, set_field, &sets[e]);
    return unknown_field(d, key);
}

typedef struct pc_ctx {
    sched_plugin_config *pc;
    const yaml_node_t *args;
} pc_ctx;

static int pc_field(dec *d, void *ud, const char *key, yaml_node_t *v)
{
    pc_ctx *c = ud;
    if (strcmp(key, "name") == 0) {
        int rc = get_string(d, v, &c->pc->name);
        if (rc == KUBE_OK && c->pc->name)
            rc = check_plugin_name(d, c->pc->name, 0);
        return rc;
    }
    if (strcmp(key, "args") == 0) {
        c->args = v;
        return is_null(v) ? KUBE_OK : to_json(d, v, &c->pc->args, 0);
    }
    return unknown_field(d, key);
}

static int decode_plugin_config(dec *d, const yaml_node_t *n, sched_profile *p)
{
    if (is_null(n))
        return KUBE_OK;
    if (n->type != YAML_SEQUENCE_NODE)
        return fail(d, "expected an array, got %s", kind_name(n));
    size_t len = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    p->plugin_config = calloc(len ? len : 1, sizeof(*p->plugin_config));
    if (!p->plugin_config)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < len; i++) {
        size_t old = push_index(d, i);
        pc_ctx c = {&p->plugin_config[i], NULL};
        p->n_plugin_config = i + 1;
        int rc = walk_map(d, node_at(d, n->data.sequence.items.start[i]), pc_field, &c);
        if (rc == KUBE_OK && !c.pc->name) {
            size_t o2 = push_key(d, "name");
            rc = fail(d, "required value");
            pop(d, o2);
        }
        if (rc != KUBE_OK)
            return rc;
        pop(d, old);
    }
    return KUBE_OK;
}

typedef struct prof_ctx {
    sched_profile *p;
    int plugins_given;
} prof_ctx;

static int profile_field(dec *d, void *ud, const char *key, yaml_node_t *v)
{
    prof_ctx *c = ud;
    if (strcmp(key, "schedulerName") == 0)
        return get_string(d, v, &c->p->scheduler_name);
    if (strcmp(key, "percentageOfNodesToScore") == 0)
        return get_int32(d, v, &c->p->percentage_of_nodes_to_score, &c->p->has_percentage);
    if (strcmp(key, "plugins") == 0) {
        c->plugins_given = !is_null(v);
        return walk_map(d, v, plugins_field, c->p->plugins);
    }
    if (strcmp(key, "pluginConfig") == 0)
        return decode_plugin_config(d, v, c->p);
    return unknown_field(d, key);
}

static int top_field(dec *d, void *ud, const char *key, yaml_node_t *v)
{
    top_ctx *c = ud;
    sched_config *cfg = c->cfg;
    if (strcmp(key, "apiVersion") == 0)
        return get_string(d, v, &cfg->api_version);
    if (strcmp(key, "kind") == 0) {
        char *kind = NULL;
        int rc = get_string(d, v, &kind);
        if (rc == KUBE_OK && kind && strcmp(kind, "KubeSchedulerConfiguration") != 0)
            rc = fail(d, "expected \"KubeSchedulerConfiguration\", got \"%s\"", kind);
        c->g->kind = kind != NULL;
        free(kind);
        return rc;
    }
    if (strcmp(key, "parallelism") == 0)
        return get_int32(d, v, &cfg->parallelism, &c->g->parallelism);
    if (strcmp(key, "percentageOfNodesToScore") == 0)
        return get_int32(d, v, &cfg->percentage_of_nodes_to_score, &c->g->pct);
    if (strcmp(key, "podInitialBackoffSeconds") == 0)
        return get_int(d, v, INT64_MIN, INT64_MAX, &cfg->pod_initial_backoff_seconds,
                       &c->g->initial_backoff);
    if (strcmp(key, "podMaxBackoffSeconds") == 0)
        return get_int(d, v, INT64_MIN, INT64_MAX, &cfg->pod_max_backoff_seconds,
                       &c->g->max_backoff);
    if (strcmp(key, "enableProfiling") == 0) {
        c->g->enable_profiling = !is_null(v);
        return get_bool(d, v, &cfg->enable_profiling);
    }
    if (strcmp(key, "enableContentionProfiling") == 0) {
        c->g->enable_contention = !is_null(v);
        return get_bool(d, v, &cfg->enable_contention_profiling);
    }
    if (strcmp(key, "delayCacheUntilActive") == 0)
        return get_bool(d, v, &cfg->delay_cache_until_active);
    if (strcmp(key, "clientConnection") == 0)
        return walk_map(d, v, client_field, &cfg->client_connection);
    if (strcmp(key, "leaderElection") == 0) {
        le_ctx lc = {&cfg->leader_election, c->g};
        return walk_map(d, v, le_field, &lc);
    }
    if (strcmp(key, "profiles") == 0) {
        c->profiles = v;
        return KUBE_OK;
    }
    if (strcmp(key, "extenders") == 0) {
        c->extenders = v;
        return KUBE_OK;
    }
    return unknown_field(d, key);
}

/* ------------------------------------------------------------------ */
/* Profile defaulting: plugins and pluginConfig                        */
/* ------------------------------------------------------------------ */

static int plugin_copy(sched_plugin *dst, const sched_plugin *src)
{
    dst->weight = src->weight;
    dst->name = kube_strdup(src->name);
    return dst->name ? KUBE_OK : KUBE_ENOMEM;
}

static int list_has(const sched_plugin *l, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i].name, name) == 0)
            return 1;
    return 0;
}

static void set_free(sched_plugin_set *s)
{
    for (size_t i = 0; i < s->n_enabled; i++)
        free(s->enabled[i].name);
    for (size_t i = 0; i < s->n_disabled; i++)
        free(s->disabled[i].name);
    free(s->enabled);
    free(s->disabled);
    memset(s, 0, sizeof(*s));
}

/* mergePluginSet(defaults, custom) into out (custom is left untouched). */
static int merge_set(const sched_plugin *def, size_t n_def, const sched_plugin_set *custom,
                     sched_plugin_set *out)
{
    size_t cap = n_def + custom->n_enabled;
    out->enabled = calloc(cap ? cap : 1, sizeof(sched_plugin));
    out->disabled = calloc(custom->n_disabled ? custom->n_disabled : 1, sizeof(sched_plugin));
    char *replaced = calloc(custom->n_enabled ? custom->n_enabled : 1, 1);
    int rc = out->enabled && out->disabled && replaced ? KUBE_OK : KUBE_ENOMEM;
    for (size_t i = 0; i < custom->n_disabled && !rc; i++, out->n_disabled++)
        rc = plugin_copy(&out->disabled[i], &custom->disabled[i]);
    int all_off = list_has(custom->disabled, custom->n_disabled, "*");
    for (size_t i = 0; i < n_def && !rc && !all_off; i++) {
        if (list_has(custom->disabled, custom->n_disabled, def[i].name))
            continue;
        const sched_plugin *use = &def[i];
        for (size_t k = custom->n_enabled; k-- > 0;)
            if (strcmp(custom->enabled[k].name, def[i].name) == 0) {
                use = &custom->enabled[k];
                replaced[k] = 1;
                KLOG_V(2, "Default plugin is explicitly re-configured; overriding plugin=\"%s\"",
                       def[i].name);
                break;
            }
        rc = plugin_copy(&out->enabled[out->n_enabled++], use);
    }
    for (size_t k = 0; k < custom->n_enabled && !rc; k++)
        if (!replaced[k])
            rc = plugin_copy(&out->enabled[out->n_enabled++], &custom->enabled[k]);
    free(replaced);
    return rc;
}

/* The default MultiPoint set restricted to plugins the registry has; the
 * others (none with the built-in registry, some with a narrower one) are
 * reported once in *missing (a buffer of names). */
static int available_defaults(dec *d, const char *api, sched_plugin *out, size_t *n,
                              kube_buf *missing)
{
    size_t nd;
    const sched_plugin *def = sched_default_plugins(api, &nd);
    *n = 0;
    for (size_t i = 0; i < nd; i++) {
        if (fw_registry_find(d->reg, def[i].name))
            out[(*n)++] = def[i];
        else if (!missing->len || !strstr(missing->data, def[i].name))
            if (kube_buf_printf(missing, "%s%s", missing->len ? ", " : "", def[i].name))
                return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

static int merge_profile_plugins(dec *d, const char *api, sched_profile *p, kube_buf *missing)
{
    sched_plugin def[32];
    size_t n_def;
    int rc = available_defaults(d, api, def, &n_def, missing);
    for (int e = 0; e < SCHED_EP_COUNT && rc == KUBE_OK; e++) {
        sched_plugin_set merged = {0};
        rc = e == SCHED_EP_MULTI_POINT ? merge_set(def, n_def, &p->plugins[e], &merged)
                                       : merge_set(NULL, 0, &p->plugins[e], &merged);
        set_free(&p->plugins[e]);
        p->plugins[e] = merged;
    }
    return rc;
}

static const fw_plugin_desc *desc_of(dec *d, const char *name)
{
    return fw_registry_find(d->reg, name);
}

/* Args may carry apiVersion/kind as kube-scheduler writes them: they must
 * name this plugin's args type and are dropped before decoding. */
static int strip_type_meta(dec *d, sched_plugin_config *pc)
{
    if (!cJSON_IsObject(pc->args))
        return pc->args && !cJSON_IsNull(pc->args) ? fail(d, "expected an object") : KUBE_OK;
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(pc->args, "kind");
    const cJSON *api = cJSON_GetObjectItemCaseSensitive(pc->args, "apiVersion");
    char want[160];
    snprintf(want, sizeof(want), "%sArgs", pc->name);
    if (kind && (!cJSON_IsString(kind) || strcmp(kind->valuestring, want) != 0))
        return fail(d, "kind: must be \"%s\" for plugin \"%s\"", want, pc->name);
    if (api && (!cJSON_IsString(api) || (strcmp(api->valuestring, SCHED_API_V1) != 0 &&
                                         strcmp(api->valuestring, SCHED_API_V1BETA3) != 0)))
        return fail(d, "apiVersion: unsupported value");
    cJSON_DeleteItemFromObjectCaseSensitive(pc->args, "kind");
    cJSON_DeleteItemFromObjectCaseSensitive(pc->args, "apiVersion");
    return KUBE_OK;
}

/* Defaults (and validates, through the plugin's hook) one entry's args. */
static int default_entry_args(dec *d, sched_plugin_config *pc)
{
    int rc0 = strip_type_meta(d, pc);
    if (rc0 != KUBE_OK)
        return rc0;
    if (cJSON_IsNull(pc->args)) {
        cJSON_Delete(pc->args);
        pc->args = NULL;
    }
    const fw_plugin_desc *desc = desc_of(d, pc->name);
    if (!desc || !desc->default_args) {
        if (pc->args && !(cJSON_IsObject(pc->args) && !pc->args->child))
            return fail(d, "plugin \"%s\" takes no args", pc->name);
        return KUBE_OK;
    }
    char msg[512] = "";
    cJSON *out = NULL;
    int rc = desc->default_args(pc->args, &out, msg, sizeof(msg));
    if (rc != KUBE_OK)
        return rc == KUBE_ENOMEM ? rc : fail(d, "%s", msg[0] ? msg : kube_strerror(rc));
    cJSON_Delete(pc->args);
    pc->args = out;
    return KUBE_OK;
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* pluginsNames(): every enabled name of every point, sorted, unique. */
static int enabled_names(const sched_profile *p, const char ***out, size_t *n)
{
    size_t cap = 0;
    for (int e = 0; e < SCHED_EP_COUNT; e++)
        cap += p->plugins[e].n_enabled;
    const char **names = calloc(cap ? cap : 1, sizeof(*names));
    if (!names)
        return KUBE_ENOMEM;
    size_t k = 0;
    for (int e = 0; e < SCHED_EP_COUNT; e++)
        for (size_t i = 0; i < p->plugins[e].n_enabled; i++)
            names[k++] = p->plugins[e].enabled[i].name;
    qsort(names, k, sizeof(*names), cmp_cstr);
    size_t w = 0;
    for (size_t i = 0; i < k; i++)
        if (!w || strcmp(names[w - 1], names[i]) != 0)
            names[w++] = names[i];
    *out = names;
    *n = w;
    return KUBE_OK;
}

static int has_config(const sched_profile *p, const char *name)
{
    for (size_t i = 0; i < p->n_plugin_config; i++)
        if (strcmp(p->plugin_config[i].name, name) == 0)
            return 1;
    return 0;
}

static int append_default_config(dec *d, sched_profile *p, const char *name)
{
    sched_plugin_config *pc = realloc(p->plugin_config, (p->n_plugin_config + 1) * sizeof(*pc));
    if (!pc)
        return KUBE_ENOMEM;
    p->plugin_config = pc;
    pc = &p->plugin_config[p->n_plugin_config];
    memset(pc, 0, sizeof(*pc));
    pc->name = kube_strdup(name);
    if (!pc->name)
        return KUBE_ENOMEM;
    p->n_plugin_config++;
    return default_entry_args(d, pc);
}

static int default_plugin_config(dec *d, sched_profile *p, size_t index)
{
    size_t base = push_key(d, "profiles");
    push_index(d, index);
    size_t prof = push_key(d, "pluginConfig");
    for (size_t j = 0; j < p->n_plugin_config; j++) {
        push_index(d, j);
        push_key(d, "args");
        int rc = default_entry_args(d, &p->plugin_config[j]);
        if (rc != KUBE_OK)
            return rc;
        pop(d, prof);
    }
    pop(d, base);
    const char **names = NULL;
    size_t n = 0;
    int rc = enabled_names(p, &names, &n);
    for (size_t i = 0; i < n && rc == KUBE_OK; i++) {
        const fw_plugin_desc *desc = desc_of(d, names[i]);
        if (desc && desc->default_args && !has_config(p, names[i]))
            rc = append_default_config(d, p, names[i]);
    }
    free(names);
    return rc;
}

static int decode_profiles(dec *d, const yaml_node_t *n, sched_config *cfg, kube_buf *missing)
{
    size_t len = 0;
    if (n && !is_null(n)) {
        if (n->type != YAML_SEQUENCE_NODE) {
            size_t old = push_key(d, "profiles");
            int rc = fail(d, "expected an array, got %s", kind_name(n));
            pop(d, old);
            return rc;
        }
        len = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    }
    cfg->profiles = calloc(len ? len : 1, sizeof(*cfg->profiles));
    if (!cfg->profiles)
        return KUBE_ENOMEM;
    cfg->n_profiles = len ? len : 1;
    for (size_t i = 0; i < len; i++) {
        size_t old = push_key(d, "profiles");
        push_index(d, i);
        prof_ctx c = {&cfg->profiles[i], 0};
        int rc = walk_map(d, node_at(d, n->data.sequence.items.start[i]), profile_field, &c);
        if (rc != KUBE_OK)
            return rc;
        pop(d, old);
    }
    if (cfg->n_profiles == 1 && !cfg->profiles[0].scheduler_name) {
        cfg->profiles[0].scheduler_name = kube_strdup(SCHED_DEFAULT_SCHEDULER_NAME);
        if (!cfg->profiles[0].scheduler_name)
            return KUBE_ENOMEM;
    }
    for (size_t i = 0; i < cfg->n_profiles; i++) {
        int rc = merge_profile_plugins(d, cfg->api_version, &cfg->profiles[i], missing);
        if (rc == KUBE_OK)
            rc = default_plugin_config(d, &cfg->profiles[i], i);
        if (rc != KUBE_OK)
            return rc;
    }
    return KUBE_OK;
}

/* ------------------------------------------------------------------ */
/* Top-level defaulting and validation                                 */
/* ------------------------------------------------------------------ */

static int default_string(char **s, const char *def)
{
    if (*s && **s)
        return KUBE_OK;
    free(*s);
    *s = kube_strdup(def);
    return *s ? KUBE_OK : KUBE_ENOMEM;
}

static int apply_defaults(sched_config *cfg, const given *g)
{
    if (!g->parallelism)
        cfg->parallelism = 16;
    if (!g->initial_backoff)
        cfg->pod_initial_backoff_seconds = 1;
    if (!g->max_backoff)
        cfg->pod_max_backoff_seconds = 10;
    if (!g->enable_profiling)
        cfg->enable_profiling = 1;
    if (!g->enable_contention)
        cfg->enable_contention_profiling = 1;
    sched_client_connection *cc = &cfg->client_connection;
    if (cc->qps == 0)
        cc->qps = 50;
    if (cc->burst == 0)
        cc->burst = 100;
    sched_leader_election *le = &cfg->leader_election;
    if (!g->leader_elect)
        le->leader_elect = 1;
    if (le->lease_duration_ms == 0)
        le->lease_duration_ms = 15000;
    if (le->renew_deadline_ms == 0)
        le->renew_deadline_ms = 10000;
    if (le->retry_period_ms == 0)
        le->retry_period_ms = 2000;
    if (default_string(&cc->content_type, "application/json") ||
        default_string(&le->resource_lock, "leases") ||
        default_string(&le->resource_name, SCHED_DEFAULT_LEASE_NAME) ||
        default_string(&le->resource_namespace, "kube-system"))
        return KUBE_ENOMEM;
    if (!cc->kubeconfig && !(cc->kubeconfig = kube_strdup("")))
        return KUBE_ENOMEM;
    if (!cc->accept_content_types && !(cc->accept_content_types = kube_strdup("")))
        return KUBE_ENOMEM;
    return KUBE_OK;
}

/* Reports an error at a path built from a format. */
static int fail_at(dec *d, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_at(dec *d, const char *path, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    size_t old = push_key(d, path);
    int rc = fail(d, "%s", msg);
    pop(d, old);
    return rc;
}

static int validate_leader_election(dec *d, const sched_leader_election *le)
{
    char f[64], g[64];
    if (!le->leader_elect)
        return KUBE_OK;
    if (le->lease_duration_ms <= 0)
        return fail_at(d, "leaderElection.leaseDuration", "must be greater than zero");
    if (le->renew_deadline_ms <= 0)
        return fail_at(d, "leaderElection.renewDeadline", "must be greater than zero");
    if (le->retry_period_ms <= 0)
        return fail_at(d, "leaderElection.retryPeriod", "must be greater than zero");
    if (le->lease_duration_ms <= le->renew_deadline_ms) {
        sched_format_duration(le->renew_deadline_ms, f, sizeof(f));
        return fail_at(d, "leaderElection.leaseDuration",
                       "LeaseDuration must be greater than RenewDeadline (%s)", f);
    }
    if (le->renew_deadline_ms * 10 <= le->retry_period_ms * 12) {
        sched_format_duration(le->renew_deadline_ms, f, sizeof(f));
        sched_format_duration(le->retry_period_ms, g, sizeof(g));
        return fail_at(d, "leaderElection.renewDeadline",
                       "renewDeadline (%s) must be greater than retryPeriod*JitterFactor (%s*1.2)",
                       f, g);
    }
    if (strcmp(le->resource_lock, "leases") != 0)
        return fail_at(d, "leaderElection.resourceLock",
                       "unsupported value \"%s\": only \"leases\" is supported", le->resource_lock);
    return KUBE_OK;
}

static int validate_client(dec *d, const sched_client_connection *cc)
{
    if (cc->burst < 0)
        return fail_at(d, "clientConnection.burst", "must be non-negative, got %d", cc->burst);
    if (strcmp(cc->content_type, "application/vnd.kubernetes.protobuf") == 0)
        KLOG_WARN("%s: clientConnection.contentType: protobuf is not supported by "
                  "stickyvm-scheduler; using application/json",
                  d->source);
    else if (strcmp(cc->content_type, "application/json") != 0)
        return fail_at(d, "clientConnection.contentType",
                       "unsupported value \"%s\": supported values: \"application/json\"",
                       cc->content_type);
    return KUBE_OK;
}

static int set_equal(const sched_plugin_set *a, const sched_plugin_set *b)
{
    if (a->n_enabled != b->n_enabled || a->n_disabled != b->n_disabled)
        return 0;
    for (size_t i = 0; i < a->n_enabled; i++)
        if (strcmp(a->enabled[i].name, b->enabled[i].name) || a->enabled[i].weight != b->enabled[i].weight)
            return 0;
    for (size_t i = 0; i < a->n_disabled; i++)
        if (strcmp(a->disabled[i].name, b->disabled[i].name))
            return 0;
    return 1;
}

static int validate_profile(dec *d, const sched_config *cfg, size_t i)
{
    const sched_profile *p = &cfg->profiles[i];
    char path[128];
    if (!p->scheduler_name || !*p->scheduler_name) {
        snprintf(path, sizeof(path), "profiles[%zu].schedulerName", i);
        return fail_at(d, path, "required value");
    }
    for (size_t k = 0; k < i; k++)
        if (strcmp(cfg->profiles[k].scheduler_name, p->scheduler_name) == 0) {
            snprintf(path, sizeof(path), "profiles[%zu].schedulerName", i);
            return fail_at(d, path, "duplicate value \"%s\"", p->scheduler_name);
        }
    if (p->has_percentage &&
        (p->percentage_of_nodes_to_score < 0 || p->percentage_of_nodes_to_score > 100)) {
        snprintf(path, sizeof(path), "profiles[%zu].percentageOfNodesToScore", i);
        return fail_at(d, path, "not in valid range [0-100], got %d",
                       p->percentage_of_nodes_to_score);
    }
    for (size_t j = 0; j < p->n_plugin_config; j++)
        for (size_t k = 0; k < j; k++)
            if (strcmp(p->plugin_config[j].name, p->plugin_config[k].name) == 0) {
                snprintf(path, sizeof(path), "profiles[%zu].pluginConfig[%zu]", i, j);
                return fail_at(d, path, "duplicate value \"%s\"", p->plugin_config[j].name);
            }
    if (i > 0 && !set_equal(&cfg->profiles[0].plugins[SCHED_EP_QUEUE_SORT],
                            &p->plugins[SCHED_EP_QUEUE_SORT])) {
        snprintf(path, sizeof(path), "profiles[%zu].plugins.queueSort", i);
        return fail_at(d, path, "queueSort must be the same for all profiles");
    }
    return KUBE_OK;
}

static int validate(dec *d, const sched_config *cfg)
{
    if (cfg->parallelism <= 0)
        return fail_at(d, "parallelism", "should be an integer value greater than zero, got %d",
                       cfg->parallelism);
    if (cfg->percentage_of_nodes_to_score < 0 || cfg->percentage_of_nodes_to_score > 100)
        return fail_at(d, "percentageOfNodesToScore", "not in valid range [0-100], got %d",
                       cfg->percentage_of_nodes_to_score);
    if (cfg->pod_initial_backoff_seconds <= 0)
        return fail_at(d, "podInitialBackoffSeconds", "must be greater than 0, got %lld",
                       (long long)cfg->pod_initial_backoff_seconds);
    if (cfg->pod_max_backoff_seconds < cfg->pod_initial_backoff_seconds)
        return fail_at(d, "podMaxBackoffSeconds",
                       "must be greater than or equal to PodInitialBackoffSeconds, got %lld",
                       (long long)cfg->pod_max_backoff_seconds);
    int rc = validate_client(d, &cfg->client_connection);
    if (rc == KUBE_OK)
        rc = validate_leader_election(d, &cfg->leader_election);
    for (size_t i = 0; i < cfg->n_profiles && rc == KUBE_OK; i++)
        rc = validate_profile(d, cfg, i);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */
/* ------------------------------------------------------------------ */

void sched_config_free(sched_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->n_profiles; i++) {
        sched_profile *p = &cfg->profiles[i];
        free(p->scheduler_name);
        for (int e = 0; e < SCHED_EP_COUNT; e++)
            set_free(&p->plugins[e]);
        for (size_t j = 0; j < p->n_plugin_config; j++) {
            free(p->plugin_config[j].name);
            cJSON_Delete(p->plugin_config[j].args);
        }
        free(p->plugin_config);
    }
    free(cfg->profiles);
    free(cfg->source);
    free(cfg->api_version);
    free(cfg->client_connection.kubeconfig);
    free(cfg->client_connection.content_type);
    free(cfg->client_connection.accept_content_types);
    free(cfg->leader_election.resource_lock);
    free(cfg->leader_election.resource_name);
    free(cfg->leader_election.resource_namespace);
    free(cfg);
}

static int check_api_version(dec *d, sched_config *cfg, const given *g)
{
    if (!cfg->api_version)
        return fail(d, "apiVersion: required value (\"%s\")", SCHED_API_V1);
    if (strcmp(cfg->api_version, SCHED_API_V1BETA3) == 0)
        KLOG_WARN("%s: KubeSchedulerConfiguration %s is deprecated in v1.26, use %s", d->source,
                  SCHED_API_V1BETA3, SCHED_API_V1);
    else if (strcmp(cfg->api_version, SCHED_API_V1) != 0)
        return fail_at(d, "apiVersion", "unsupported value \"%s\": supported values: \"%s\", \"%s\"",
                       cfg->api_version, SCHED_API_V1, SCHED_API_V1BETA3);
    if (!g->kind)
        return fail_at(d, "kind", "required value (\"KubeSchedulerConfiguration\")");
    return KUBE_OK;
}

/* Decodes, defaults and validates the root node (NULL: empty config). */
static int build(dec *d, const yaml_node_t *root, sched_config *cfg, int need_api)
{
    given g = {0};
    top_ctx c = {cfg, &g, NULL, NULL};
    int rc = root ? walk_map(d, root, top_field, &c) : KUBE_OK;
    if (rc == KUBE_OK && need_api)
        rc = check_api_version(d, cfg, &g);
    if (rc == KUBE_OK && !cfg->api_version && !(cfg->api_version = kube_strdup(SCHED_API_V1)))
        rc = KUBE_ENOMEM;
    if (rc == KUBE_OK && c.extenders && !is_null(c.extenders) &&
        !(c.extenders->type == YAML_SEQUENCE_NODE &&
          c.extenders->data.sequence.items.top == c.extenders->data.sequence.items.start))
        rc = fail_at(d, "extenders", "scheduler extenders are not supported by stickyvm-scheduler");
    kube_buf missing = KUBE_BUF_INIT;
    if (rc == KUBE_OK)
        rc = decode_profiles(d, c.profiles, cfg, &missing);
    if (rc == KUBE_OK && missing.len)
        KLOG_WARN("kube-scheduler default plugins not implemented by stickyvm-scheduler are left "
                  "out of the default profile: %s",
                  missing.data);
    kube_buf_free(&missing);
    if (rc == KUBE_OK)
        rc = apply_defaults(cfg, &g);
    if (rc == KUBE_OK)
        rc = validate(d, cfg);
    return rc;
}

static sched_config *config_alloc(const char *source)
{
    sched_config *cfg = calloc(1, sizeof(*cfg));
    if (cfg && !(cfg->source = kube_strdup(source))) {
        free(cfg);
        cfg = NULL;
    }
    return cfg;
}

int sched_config_default(const struct fw_registry *reg, sched_config **out, char *err,
                         size_t errlen)
{
    *out = NULL;
    sched_config *cfg = config_alloc("");
    if (!cfg)
        return KUBE_ENOMEM;
    dec d = {.doc = NULL, .source = "defaults", .reg = reg ? reg : fw_registry_default(),
             .err = err, .errlen = errlen};
    int rc = build(&d, NULL, cfg, 0);
    if (rc != KUBE_OK) {
        sched_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return KUBE_OK;
}

int sched_config_load_string(const char *yaml, size_t len, const char *source,
                             const struct fw_registry *reg, sched_config **out, char *err,
                             size_t errlen)
{
    *out = NULL;
    if (err && errlen)
        err[0] = '\0';
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return KUBE_ENOMEM;
    yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
    dec d = {.doc = &doc, .source = source ? source : "config",
             .reg = reg ? reg : fw_registry_default(), .err = err, .errlen = errlen};
    if (!yaml_parser_load(&parser, &doc)) {
        if (err && errlen)
            snprintf(err, errlen, "%s: line %zu: %s", d.source, parser.problem_mark.line + 1,
                     parser.problem ? parser.problem : "invalid YAML");
        yaml_parser_delete(&parser);
        return KUBE_EPARSE;
    }
    sched_config *cfg = config_alloc(d.source);
    int rc = cfg ? KUBE_OK : KUBE_ENOMEM;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (rc == KUBE_OK)
        rc = build(&d, root, cfg, 1);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (rc != KUBE_OK) {
        sched_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return KUBE_OK;
}

int sched_config_load_file(const char *path, const struct fw_registry *reg, sched_config **out,
                           char *err, size_t errlen)
{
    char *text;
    size_t len;
    *out = NULL;
    int rc = kube_read_file(path, &text, &len);
    if (rc != KUBE_OK) {
        if (err && errlen)
            snprintf(err, errlen, "%s: %s", path, rc == KUBE_EIO ? strerror(errno) : kube_strerror(rc));
        return rc;
    }
    rc = sched_config_load_string(text, len, path, reg, out, err, errlen);
    free(text);
    return rc;
}

const sched_profile *sched_config_profile(const sched_config *cfg, const char *scheduler_name)
{
    for (size_t i = 0; i < cfg->n_profiles; i++)
        if (strcmp(cfg->profiles[i].scheduler_name, scheduler_name) == 0)
            return &cfg->profiles[i];
    return NULL;
}

const cJSON *sched_profile_args(const sched_profile *p, const char *plugin)
{
    for (size_t i = 0; i < p->n_plugin_config; i++)
        if (strcmp(p->plugin_config[i].name, plugin) == 0)
            return p->plugin_config[i].args;
    return NULL;
}

/* ------------------------------------------------------------------ */
/* YAML output                                                         */
/* ------------------------------------------------------------------ */

/* Whether a string must be quoted to read back as the same string. */
static int needs_quote(const char *s)
{
    if (!*s || word_in(s, null_words) || word_in(s, true_words) || word_in(s, false_words) ||
        looks_int(s) || looks_float(s))
        return 1;
    if (strchr("-?:,[]{}#&*!|>'\"%@` ", s[0]) || s[strlen(s) - 1] == ' ')
        return 1;
    if (strstr(s, ": ") || strstr(s, " #") || s[strlen(s) - 1] == ':')
        return 1;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return 1;
    return 0;
}

static int put_string(kube_buf *b, const char *s)
{
    if (!needs_quote(s))
        return kube_buf_puts(b, s);
    int rc = kube_buf_puts(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p && !rc; p++) {
        if (*p == '"' || *p == '\\')
            rc = kube_buf_printf(b, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            rc = kube_buf_printf(b, "\\x%02x", *p);
        else
            rc = kube_buf_append(b, p, 1);
    }
    return rc ? rc : kube_buf_puts(b, "\"");
}

static int put_scalar(kube_buf *b, const cJSON *v)
{
    if (cJSON_IsString(v))
        return put_string(b, v->valuestring);
    if (cJSON_IsBool(v))
        return kube_buf_puts(b, cJSON_IsTrue(v) ? "true" : "false");
    if (cJSON_IsNumber(v)) {
        double x = v->valuedouble;
        if (x == floor(x) && fabs(x) < 9007199254740992.0)
            return kube_buf_printf(b, "%lld", (long long)x);
        return kube_buf_printf(b, "%.17g", x);
    }
    return kube_buf_puts(b, "null");
}

static int is_empty_container(const cJSON *v)
{
    return (cJSON_IsObject(v) || cJSON_IsArray(v)) && !v->child;
}

static int emit(kube_buf *b, const cJSON *v, int indent);

static int cmp_item(const void *a, const void *b)
{
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* Writes "key: value" lines of an object, keys sorted; the first line's
 * indentation is already written when first_inline is set. */
static int emit_object(kube_buf *b, const cJSON *o, int indent, int first_inline)
{
    size_t n = (size_t)cJSON_GetArraySize(o), k = 0;
    const cJSON **items = calloc(n ? n : 1, sizeof(*items));
    if (!items)
        return KUBE_ENOMEM;
    for (const cJSON *c = o->child; c; c = c->next)
        items[k++] = c;
    qsort(items, n, sizeof(*items), cmp_item);
    int rc = KUBE_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        const cJSON *c = items[i];
        if (i || !first_inline)
            rc = kube_buf_printf(b, "%*s", indent, "");
        if (!rc)
            rc = put_string(b, c->string);
        if (!rc)
            rc = kube_buf_puts(b, ":");
        if (rc)
            break;
        if (is_empty_container(c))
            rc = kube_buf_puts(b, cJSON_IsObject(c) ? " {}\n" : " []\n");
        else if (cJSON_IsObject(c))
            rc = kube_buf_puts(b, "\n") ? KUBE_ENOMEM : emit(b, c, indent + 2);
        else if (cJSON_IsArray(c))
            rc = kube_buf_puts(b, "\n") ? KUBE_ENOMEM : emit(b, c, indent);
        else
            rc = kube_buf_puts(b, " ") || put_scalar(b, c) || kube_buf_puts(b, "\n")
                     ? KUBE_ENOMEM
                     : KUBE_OK;
    }
    free(items);
    return rc;
}

static int emit_array(kube_buf *b, const cJSON *a, int indent)
{
    int rc = KUBE_OK;
    for (const cJSON *c = a->child; c && !rc; c = c->next) {
        rc = kube_buf_printf(b, "%*s- ", indent, "");
        if (rc)
            break;
        if (is_empty_container(c))
            rc = kube_buf_puts(b, cJSON_IsObject(c) ? "{}\n" : "[]\n");
        else if (cJSON_IsObject(c))
            rc = emit_object(b, c, indent + 2, 1);
        else if (cJSON_IsArray(c))
            rc = kube_buf_puts(b, "\n") ? KUBE_ENOMEM : emit_array(b, c, indent + 2);
        else
            rc = put_scalar(b, c) || kube_buf_puts(b, "\n") ? KUBE_ENOMEM : KUBE_OK;
    }
    return rc;
}

static int emit(kube_buf *b, const cJSON *v, int indent)
{
    if (cJSON_IsObject(v))
        return emit_object(b, v, indent, 0);
    return emit_array(b, v, indent);
}

static cJSON *duration_json(int64_t ms)
{
    char buf[64];
    sched_format_duration(ms, buf, sizeof(buf));
    return cJSON_CreateString(buf);
}

static cJSON *plugin_set_json(const sched_plugin_set *s)
{
    cJSON *o = cJSON_CreateObject();
    const sched_plugin *lists[2] = {s->enabled, s->disabled};
    size_t counts[2] = {s->n_enabled, s->n_disabled};
    const char *keys[2] = {"enabled", "disabled"};
    for (int k = 0; k < 2 && o; k++) {
        if (!counts[k])
            continue;
        cJSON *a = cJSON_AddArrayToObject(o, keys[k]);
        for (size_t i = 0; a && i < counts[k]; i++) {
            cJSON *p = cJSON_CreateObject();
            cJSON_AddItemToArray(a, p);
            cJSON_AddStringToObject(p, "name", lists[k][i].name);
            if (lists[k][i].weight)
                cJSON_AddNumberToObject(p, "weight", lists[k][i].weight);
        }
    }
    return o;
}

static cJSON *profile_json(const sched_config *cfg, const sched_profile *p)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "schedulerName", p->scheduler_name);
    if (p->has_percentage)
        cJSON_AddNumberToObject(o, "percentageOfNodesToScore", p->percentage_of_nodes_to_score);
    cJSON *plugins = cJSON_AddObjectToObject(o, "plugins");
    for (int e = 0; plugins && e < SCHED_EP_COUNT; e++)
        cJSON_AddItemToObject(plugins, ep_keys[e], plugin_set_json(&p->plugins[e]));
    if (p->n_plugin_config) {
        cJSON *pcs = cJSON_AddArrayToObject(o, "pluginConfig");
        for (size_t i = 0; pcs && i < p->n_plugin_config; i++) {
            cJSON *pc = cJSON_CreateObject();
            cJSON_AddItemToArray(pcs, pc);
            cJSON_AddStringToObject(pc, "name", p->plugin_config[i].name);
            if (!p->plugin_config[i].args)
                continue;
            cJSON *args = cJSON_Duplicate(p->plugin_config[i].args, 1);
            if (cJSON_IsObject(args)) {
                char kind[160];
                snprintf(kind, sizeof(kind), "%sArgs", p->plugin_config[i].name);
                cJSON_DeleteItemFromObjectCaseSensitive(args, "apiVersion");
                cJSON_DeleteItemFromObjectCaseSensitive(args, "kind");
                cJSON_AddStringToObject(args, "apiVersion", cfg->api_version);
                cJSON_AddStringToObject(args, "kind", kind);
            }
            cJSON_AddItemToObject(pc, "args", args);
        }
    }
    return o;
}

static cJSON *config_json(const sched_config *cfg)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "apiVersion", cfg->api_version);
    cJSON_AddStringToObject(o, "kind", "KubeSchedulerConfiguration");
    const sched_client_connection *cc = &cfg->client_connection;
    cJSON *c = cJSON_AddObjectToObject(o, "clientConnection");
    cJSON_AddStringToObject(c, "acceptContentTypes", cc->accept_content_types);
    cJSON_AddNumberToObject(c, "burst", cc->burst);
    cJSON_AddStringToObject(c, "contentType", cc->content_type);
    cJSON_AddStringToObject(c, "kubeconfig", cc->kubeconfig);
    cJSON_AddNumberToObject(c, "qps", (float)cc->qps);
    if (cfg->delay_cache_until_active)
        cJSON_AddTrueToObject(o, "delayCacheUntilActive");
    cJSON_AddBoolToObject(o, "enableContentionProfiling", cfg->enable_contention_profiling);
    cJSON_AddBoolToObject(o, "enableProfiling", cfg->enable_profiling);
    const sched_leader_election *le = &cfg->leader_election;
    cJSON *l = cJSON_AddObjectToObject(o, "leaderElection");
    cJSON_AddBoolToObject(l, "leaderElect", le->leader_elect);
    cJSON_AddItemToObject(l, "leaseDuration", duration_json(le->lease_duration_ms));
    cJSON_AddItemToObject(l, "renewDeadline", duration_json(le->renew_deadline_ms));
    cJSON_AddItemToObject(l, "retryPeriod", duration_json(le->retry_period_ms));
    cJSON_AddStringToObject(l, "resourceLock", le->resource_lock);
    cJSON_AddStringToObject(l, "resourceName", le->resource_name);
    cJSON_AddStringToObject(l, "resourceNamespace", le->resource_namespace);
    cJSON_AddNumberToObject(o, "parallelism", cfg->parallelism);
    cJSON_AddNumberToObject(o, "percentageOfNodesToScore", cfg->percentage_of_nodes_to_score);
    cJSON_AddNumberToObject(o, "podInitialBackoffSeconds", (double)cfg->pod_initial_backoff_seconds);
    cJSON_AddNumberToObject(o, "podMaxBackoffSeconds", (double)cfg->pod_max_backoff_seconds);
    cJSON *ps = cJSON_AddArrayToObject(o, "profiles");
    for (size_t i = 0; ps && i < cfg->n_profiles; i++)
        cJSON_AddItemToArray(ps, profile_json(cfg, &cfg->profiles[i]));
    return o;
}

int sched_config_write_yaml(const sched_config *cfg, kube_buf *out)
{
    cJSON *o = config_json(cfg);
    if (!o)
        return KUBE_ENOMEM;
    int rc = emit(out, o, 0);
    cJSON_Delete(o);
    return rc;
}
