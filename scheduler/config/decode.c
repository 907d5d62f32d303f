/*
 * scheduler/config/decode.c - KubeSchedulerConfiguration decoded from
 * YAML (libyaml's document API) strictly, as sigs.k8s.io/yaml with
 * UnmarshalStrict: unknown and duplicate fields are errors naming their
 * path; scalars resolve as YAML 1.1 (go-yaml v2). Plugin args are kept as
 * JSON for their plugin to decode (fw_config_resolve()).
 */
#include "config/config_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"

int sched_cfg_fail(sched_cfg_dec *d, const char *fmt, ...)
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

size_t sched_cfg_push_key(sched_cfg_dec *d, const char *key)
{
    size_t old = d->plen;
    int w = snprintf(d->path + d->plen, sizeof(d->path) - d->plen, "%s%s", d->plen ? "." : "", key);
    if (w > 0)
        d->plen = d->plen + (size_t)w < sizeof(d->path) ? d->plen + (size_t)w : sizeof(d->path) - 1;
    return old;
}

size_t sched_cfg_push_index(sched_cfg_dec *d, size_t i)
{
    size_t old = d->plen;
    int w = snprintf(d->path + d->plen, sizeof(d->path) - d->plen, "[%zu]", i);
    if (w > 0)
        d->plen = d->plen + (size_t)w < sizeof(d->path) ? d->plen + (size_t)w : sizeof(d->path) - 1;
    return old;
}

void sched_cfg_pop(sched_cfg_dec *d, size_t old)
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

static const char *const true_words[] = {"y",  "Y",  "yes",  "Yes",  "YES",  "on",
                                         "On", "ON", "true", "True", "TRUE", NULL};
static const char *const false_words[] = {"n",   "N",   "no",    "No",    "NO",    "off",
                                          "Off", "OFF", "false", "False", "FALSE", NULL};
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
    if (word_in(s, (const char *const[]){".inf", ".Inf", ".INF", "+.inf", "-.inf", ".nan", ".NaN",
                                         ".NAN", NULL}))
        return 1;
    char *end;
    errno = 0;
    strtod(s, &end);
    return *s && *end == '\0' && !isspace((unsigned char)*s) && strpbrk(s, "0123456789");
}

int sched_cfg_plain_is_string(const char *s)
{
    return *s && !word_in(s, null_words) && !word_in(s, true_words) && !word_in(s, false_words) &&
           !looks_int(s) && !looks_float(s);
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

static yaml_node_t *node_at(sched_cfg_dec *d, int index)
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
    case SK_NULL:
        return "null";
    case SK_BOOL:
        return "bool";
    case SK_INT:
    case SK_FLOAT:
        return "number";
    default:
        return "string";
    }
}

/* Field decoders. Each takes the value node; null leaves the default. */

static int get_string(sched_cfg_dec *d, const yaml_node_t *n, char **out)
{
    if (is_null(n))
        return KUBE_OK;
    if (n->type != YAML_SCALAR_NODE || classify(n) != SK_STRING)
        return sched_cfg_fail(d, "expected a string, got %s", kind_name(n));
    char *s = kube_strdup(scalar_text(n));
    if (!s)
        return KUBE_ENOMEM;
    free(*out);
    *out = s;
    return KUBE_OK;
}

static int get_int(sched_cfg_dec *d, const yaml_node_t *n, int64_t min, int64_t max, int64_t *out,
                   int *set)
{
    if (is_null(n))
        return KUBE_OK;
    if (n->type != YAML_SCALAR_NODE || classify(n) != SK_INT)
        return sched_cfg_fail(d, "expected an integer, got %s", kind_name(n));
    char buf[64];
    size_t k = 0;
    for (const char *s = scalar_text(n); *s && k + 1 < sizeof(buf); s++)
        if (*s != '_')
            buf[k++] = *s;
    buf[k] = '\0';
    if (kube_parse_int64(buf, min, max, out) != KUBE_OK)
        return sched_cfg_fail(d, "integer %s out of range", scalar_text(n));
    if (set)
        *set = 1;
    return KUBE_OK;
}

static int get_int32(sched_cfg_dec *d, const yaml_node_t *n, int32_t *out, int *set)
{
    int64_t v = *out;
    int rc = get_int(d, n, INT32_MIN, INT32_MAX, &v, set);
    *out = (int32_t)v;
    return rc;
}

static int get_float(sched_cfg_dec *d, const yaml_node_t *n, double *out)
{
    if (is_null(n))
        return KUBE_OK;
    scalar_kind k = n->type == YAML_SCALAR_NODE ? classify(n) : SK_STRING;
    if (n->type != YAML_SCALAR_NODE || (k != SK_INT && k != SK_FLOAT))
        return sched_cfg_fail(d, "expected a number, got %s", kind_name(n));
    *out = strtod(scalar_text(n), NULL);
    return KUBE_OK;
}

static int get_bool(sched_cfg_dec *d, const yaml_node_t *n, int *out)
{
    if (is_null(n))
        return KUBE_OK;
    if (n->type != YAML_SCALAR_NODE || classify(n) != SK_BOOL)
        return sched_cfg_fail(d, "expected a boolean, got %s", kind_name(n));
    *out = word_in(scalar_text(n), true_words);
    return KUBE_OK;
}

static int get_duration(sched_cfg_dec *d, const yaml_node_t *n, int64_t *ms)
{
    if (is_null(n))
        return KUBE_OK;
    if (n->type != YAML_SCALAR_NODE || classify(n) != SK_STRING)
        return sched_cfg_fail(d, "expected a duration string such as \"15s\", got %s",
                              kind_name(n));
    if (kube_duration_parse(scalar_text(n), ms) != KUBE_OK)
        return sched_cfg_fail(d, "invalid duration \"%s\"", scalar_text(n));
    return KUBE_OK;
}

/* Walks a mapping, calling field(d, ud, key, value) for each pair with the
 * key pushed on the path. Duplicate keys are errors. */
typedef int (*field_fn)(sched_cfg_dec *d, void *ud, const char *key, yaml_node_t *value);

static int walk_map(sched_cfg_dec *d, const yaml_node_t *n, field_fn field, void *ud)
{
    if (is_null(n))
        return KUBE_OK;
    if (n->type != YAML_MAPPING_NODE)
        return sched_cfg_fail(d, "expected an object, got %s", kind_name(n));
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node_at(d, p->key), *v = node_at(d, p->value);
        if (!k || !v || k->type != YAML_SCALAR_NODE)
            return sched_cfg_fail(d, "object keys must be strings");
        const char *key = scalar_text(k);
        for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *k2 = node_at(d, q->key);
            if (k2 && k2->type == YAML_SCALAR_NODE && strcmp(scalar_text(k2), key) == 0) {
                size_t old = sched_cfg_push_key(d, key);
                int rc = sched_cfg_fail(d, "duplicate field \"%s\"", key);
                sched_cfg_pop(d, old);
                return rc;
            }
        }
        size_t old = sched_cfg_push_key(d, key);
        int rc = field(d, ud, key, v);
        if (rc != KUBE_OK)
            return rc;
        sched_cfg_pop(d, old);
    }
    return KUBE_OK;
}

static int unknown_field(sched_cfg_dec *d, const char *key)
{
    return sched_cfg_fail(d, "unknown field \"%s\"", key);
}

/* Converts a YAML node to cJSON (plugin args). */
static int to_json(sched_cfg_dec *d, const yaml_node_t *n, cJSON **out, int depth)
{
    *out = NULL;
    if (depth > 64)
        return sched_cfg_fail(d, "nesting too deep");
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
                return sched_cfg_fail(d, "object keys must be strings");
            }
            if (cJSON_GetObjectItemCaseSensitive(o, scalar_text(k))) {
                size_t old = sched_cfg_push_key(d, scalar_text(k));
                int rc = sched_cfg_fail(d, "duplicate field \"%s\"", scalar_text(k));
                sched_cfg_pop(d, old);
                cJSON_Delete(o);
                return rc;
            }
            size_t old = sched_cfg_push_key(d, scalar_text(k));
            int rc = to_json(d, v, &child, depth + 1);
            if (rc != KUBE_OK) {
                cJSON_Delete(o);
                return rc;
            }
            sched_cfg_pop(d, old);
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
            size_t old = sched_cfg_push_index(d, i);
            int rc = to_json(d, node_at(d, *it), &child, depth + 1);
            if (rc != KUBE_OK) {
                cJSON_Delete(a);
                return rc;
            }
            sched_cfg_pop(d, old);
            cJSON_AddItemToArray(a, child);
        }
        *out = a;
        return KUBE_OK;
    }
    const char *s = scalar_text(n);
    switch (classify(n)) {
    case SK_NULL:
        *out = cJSON_CreateNull();
        break;
    case SK_BOOL:
        *out = cJSON_CreateBool(word_in(s, true_words));
        break;
    case SK_INT:
    case SK_FLOAT:
        *out = cJSON_CreateNumber(strtod(s, NULL));
        break;
    default:
        *out = cJSON_CreateString(s);
        break;
    }
    return *out ? KUBE_OK : KUBE_ENOMEM;
}

/* Reports an error at a path built from a format. */
int sched_cfg_fail_at(sched_cfg_dec *d, const char *path, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    size_t old = sched_cfg_push_key(d, path);
    int rc = sched_cfg_fail(d, "%s", msg);
    sched_cfg_pop(d, old);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Decoding                                                            */
/* ------------------------------------------------------------------ */

typedef struct top_ctx {
    sched_config *cfg;
    sched_cfg_given *g;
    const yaml_node_t *profiles; /* decoded after apiVersion is known */
    const yaml_node_t *extenders;
} top_ctx;

static int client_field(sched_cfg_dec *d, void *ud, const char *key, yaml_node_t *v)
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
    sched_cfg_given *g;
} le_ctx;

static int le_field(sched_cfg_dec *d, void *ud, const char *key, yaml_node_t *v)
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

typedef struct plugin_ctx {
    sched_plugin *p;
    int disabled;
} plugin_ctx;

static int plugin_field(sched_cfg_dec *d, void *ud, const char *key, yaml_node_t *v)
{
    plugin_ctx *c = ud;
    if (strcmp(key, "name") == 0) {
        int rc = get_string(d, v, &c->p->name);
        if (rc == KUBE_OK && c->p->name && !(c->p->field = kube_strdup(d->path)))
            rc = KUBE_ENOMEM;
        return rc;
    }
    if (strcmp(key, "weight") == 0)
        return get_int32(d, v, &c->p->weight, NULL);
    return unknown_field(d, key);
}

static int decode_plugin_list(sched_cfg_dec *d, const yaml_node_t *n, sched_plugin **out,
                              size_t *count, int disabled)
{
    if (is_null(n))
        return KUBE_OK;
    if (n->type != YAML_SEQUENCE_NODE)
        return sched_cfg_fail(d, "expected an array, got %s", kind_name(n));
    size_t len = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    *out = calloc(len ? len : 1, sizeof(**out));
    if (!*out)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < len; i++) {
        size_t old = sched_cfg_push_index(d, i);
        plugin_ctx c = {&(*out)[i], disabled};
        *count = i + 1;
        int rc = walk_map(d, node_at(d, n->data.sequence.items.start[i]), plugin_field, &c);
        if (rc == KUBE_OK && !(*out)[i].name) {
            size_t o2 = sched_cfg_push_key(d, "name");
            rc = sched_cfg_fail(d, "required value");
            sched_cfg_pop(d, o2);
        }
        if (rc != KUBE_OK)
            return rc;
        sched_cfg_pop(d, old);
    }
    return KUBE_OK;
}

static int set_field(sched_cfg_dec *d, void *ud, const char *key, yaml_node_t *v)
{
    sched_plugin_set *s = ud;
    if (strcmp(key, "enabled") == 0)
        return decode_plugin_list(d, v, &s->enabled, &s->n_enabled, 0);
    if (strcmp(key, "disabled") == 0)
        return decode_plugin_list(d, v, &s->disabled, &s->n_disabled, 1);
    return unknown_field(d, key);
}

static int plugins_field(sched_cfg_dec *d, void *ud, const char *key, yaml_node_t *v)
{
    sched_plugin_set *sets = ud;
    for (int e = 0; e < SCHED_EP_COUNT; e++)
        if (strcmp(key, sched_ext_point_key(e)) == 0)
            return walk_map(d, v, set_field, &sets[e]);
    return unknown_field(d, key);
}

typedef struct pc_ctx {
    sched_plugin_config *pc;
    const yaml_node_t *args;
} pc_ctx;

static int pc_field(sched_cfg_dec *d, void *ud, const char *key, yaml_node_t *v)
{
    pc_ctx *c = ud;
    if (strcmp(key, "name") == 0)
        return get_string(d, v, &c->pc->name);
    if (strcmp(key, "args") == 0) {
        c->args = v;
        return is_null(v) ? KUBE_OK : to_json(d, v, &c->pc->args, 0);
    }
    return unknown_field(d, key);
}

static int decode_plugin_config(sched_cfg_dec *d, const yaml_node_t *n, sched_profile *p)
{
    if (is_null(n))
        return KUBE_OK;
    if (n->type != YAML_SEQUENCE_NODE)
        return sched_cfg_fail(d, "expected an array, got %s", kind_name(n));
    size_t len = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    p->plugin_config = calloc(len ? len : 1, sizeof(*p->plugin_config));
    if (!p->plugin_config)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < len; i++) {
        size_t old = sched_cfg_push_index(d, i);
        pc_ctx c = {&p->plugin_config[i], NULL};
        p->n_plugin_config = i + 1;
        if (!(c.pc->field = kube_strdup(d->path)))
            return KUBE_ENOMEM;
        int rc = walk_map(d, node_at(d, n->data.sequence.items.start[i]), pc_field, &c);
        if (rc == KUBE_OK && !c.pc->name) {
            size_t o2 = sched_cfg_push_key(d, "name");
            rc = sched_cfg_fail(d, "required value");
            sched_cfg_pop(d, o2);
        }
        if (rc != KUBE_OK)
            return rc;
        sched_cfg_pop(d, old);
    }
    return KUBE_OK;
}

typedef struct prof_ctx {
    sched_profile *p;
    int plugins_given;
} prof_ctx;

static int profile_field(sched_cfg_dec *d, void *ud, const char *key, yaml_node_t *v)
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

static int top_field(sched_cfg_dec *d, void *ud, const char *key, yaml_node_t *v)
{
    top_ctx *c = ud;
    sched_config *cfg = c->cfg;
    if (strcmp(key, "apiVersion") == 0)
        return get_string(d, v, &cfg->api_version);
    if (strcmp(key, "kind") == 0) {
        char *kind = NULL;
        int rc = get_string(d, v, &kind);
        if (rc == KUBE_OK && kind && strcmp(kind, "KubeSchedulerConfiguration") != 0)
            rc = sched_cfg_fail(d, "expected \"KubeSchedulerConfiguration\", got \"%s\"", kind);
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

/* The profiles (one default profile when none): decoded, named, and their
 * plugin sets merged with the default MultiPoint set. */
static int decode_profiles(sched_cfg_dec *d, const yaml_node_t *n, sched_config *cfg)
{
    size_t len = 0;
    if (n && !is_null(n)) {
        if (n->type != YAML_SEQUENCE_NODE) {
            size_t old = sched_cfg_push_key(d, "profiles");
            int rc = sched_cfg_fail(d, "expected an array, got %s", kind_name(n));
            sched_cfg_pop(d, old);
            return rc;
        }
        len = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    }
    cfg->profiles = calloc(len ? len : 1, sizeof(*cfg->profiles));
    if (!cfg->profiles)
        return KUBE_ENOMEM;
    cfg->n_profiles = len ? len : 1;
    for (size_t i = 0; i < len; i++) {
        size_t old = sched_cfg_push_key(d, "profiles");
        sched_cfg_push_index(d, i);
        prof_ctx c = {&cfg->profiles[i], 0};
        int rc = walk_map(d, node_at(d, n->data.sequence.items.start[i]), profile_field, &c);
        if (rc != KUBE_OK)
            return rc;
        sched_cfg_pop(d, old);
    }
    if (cfg->n_profiles == 1 && !cfg->profiles[0].scheduler_name) {
        cfg->profiles[0].scheduler_name = kube_strdup(SCHED_DEFAULT_SCHEDULER_NAME);
        if (!cfg->profiles[0].scheduler_name)
            return KUBE_ENOMEM;
    }
    for (size_t i = 0; i < cfg->n_profiles; i++) {
        int rc = sched_cfg_merge_profile_plugins(cfg->api_version, &cfg->profiles[i]);
        if (rc != KUBE_OK)
            return rc;
    }
    return KUBE_OK;
}

/* apiVersion v1 or v1beta3 (deprecated: a warning) and kind are required. */
static int check_api_version(sched_cfg_dec *d, sched_config *cfg, const sched_cfg_given *g)
{
    if (!cfg->api_version)
        return sched_cfg_fail(d, "apiVersion: required value (\"%s\")", SCHED_API_V1);
    if (strcmp(cfg->api_version, SCHED_API_V1BETA3) == 0)
        KLOG_WARN("%s: KubeSchedulerConfiguration %s is deprecated in v1.26, use %s", d->source,
                  SCHED_API_V1BETA3, SCHED_API_V1);
    else if (strcmp(cfg->api_version, SCHED_API_V1) != 0)
        return sched_cfg_fail_at(d, "apiVersion",
                                 "unsupported value \"%s\": supported values: \"%s\", \"%s\"",
                                 cfg->api_version, SCHED_API_V1, SCHED_API_V1BETA3);
    if (!g->kind)
        return sched_cfg_fail_at(d, "kind", "required value (\"KubeSchedulerConfiguration\")");
    return KUBE_OK;
}

int sched_cfg_decode(sched_cfg_dec *d, const yaml_node_t *root, sched_config *cfg,
                     sched_cfg_given *g, int need_api)
{
    top_ctx c = {cfg, g, NULL, NULL};
    int rc = root ? walk_map(d, root, top_field, &c) : KUBE_OK;
    if (rc == KUBE_OK && need_api)
        rc = check_api_version(d, cfg, g);
    if (rc == KUBE_OK && !cfg->api_version && !(cfg->api_version = kube_strdup(SCHED_API_V1)))
        rc = KUBE_ENOMEM;
    if (rc == KUBE_OK)
        rc = sched_cfg_decode_extenders(d, c.extenders, cfg);
    if (rc == KUBE_OK)
        rc = decode_profiles(d, c.profiles, cfg);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The field decoders, for the other decoding files (config_int.h)     */
/* ------------------------------------------------------------------ */

int sched_cfg_walk_map(sched_cfg_dec *d, const yaml_node_t *n, sched_cfg_field_fn field, void *ud)
{
    return walk_map(d, n, field, ud);
}

int sched_cfg_get_string(sched_cfg_dec *d, const yaml_node_t *n, char **out)
{
    return get_string(d, n, out);
}

int sched_cfg_get_int64(sched_cfg_dec *d, const yaml_node_t *n, int64_t *out)
{
    return get_int(d, n, INT64_MIN, INT64_MAX, out, NULL);
}

int sched_cfg_get_bool(sched_cfg_dec *d, const yaml_node_t *n, int *out)
{
    return get_bool(d, n, out);
}

int sched_cfg_get_duration(sched_cfg_dec *d, const yaml_node_t *n, int64_t *ms)
{
    return get_duration(d, n, ms);
}

int sched_cfg_unknown_field(sched_cfg_dec *d, const char *key)
{
    return unknown_field(d, key);
}

const char *sched_cfg_kind_name(const yaml_node_t *n)
{
    return kind_name(n);
}

int sched_cfg_is_null(const yaml_node_t *n)
{
    return is_null(n);
}

yaml_node_t *sched_cfg_item(sched_cfg_dec *d, const yaml_node_t *seq, size_t i)
{
    return node_at(d, seq->data.sequence.items.start[i]);
}
