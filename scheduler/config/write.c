/*
 * scheduler/config/write.c - a configuration written back as YAML, as
 * kube-scheduler's --write-config-to writes it: apiVersion, kind, every
 * field, keys sorted, durations as Go prints them, plugin args with their
 * apiVersion and kind; and the same as a JSON tree (/configz). The configuration becomes JSON,
 * which libyaml's emitter writes; a string is quoted when it would read back as another type.
 */
#include "config/config_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/buf.h"
#include "kube/util/errors.h"

/* Appends what the emitter writes to the kube_buf ud; 1 on success. */
static int out_handler(void *ud, unsigned char *buf, size_t size)
{
    return kube_buf_append(ud, buf, size) == KUBE_OK;
}

/* Emits one event built by the caller (libyaml frees it). */
static int put(yaml_emitter_t *e, yaml_event_t *ev, int built)
{
    return built && yaml_emitter_emit(e, ev) ? KUBE_OK : KUBE_ENOMEM;
}

/* A scalar: plain when it reads back as the same string, else quoted. */
static int put_text(yaml_emitter_t *e, const char *s, int is_string)
{
    yaml_event_t ev;
    yaml_scalar_style_t style = !is_string || sched_cfg_plain_is_string(s)
                                    ? YAML_PLAIN_SCALAR_STYLE
                                    : YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    return put(e, &ev,
               yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1,
                                            style));
}

/* A JSON scalar: strings as put_text, numbers as integers when whole. */
static int put_scalar(yaml_emitter_t *e, const cJSON *v)
{
    char num[64];

    if (cJSON_IsString(v))
        return put_text(e, v->valuestring, 1);
    if (cJSON_IsBool(v))
        return put_text(e, cJSON_IsTrue(v) ? "true" : "false", 0);
    if (!cJSON_IsNumber(v))
        return put_text(e, "null", 0);
    if (v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 9007199254740992.0)
        snprintf(num, sizeof(num), "%lld", (long long)v->valuedouble);
    else
        snprintf(num, sizeof(num), "%.17g", v->valuedouble);
    return put_text(e, num, 0);
}

static int put_value(yaml_emitter_t *e, const cJSON *v);

static int cmp_item(const void *a, const void *b)
{
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* A mapping with its keys sorted; {} when empty. */
static int put_object(yaml_emitter_t *e, const cJSON *o)
{
    size_t n = (size_t)cJSON_GetArraySize(o), k = 0;
    const cJSON **items = calloc(n ? n : 1, sizeof(*items));
    yaml_event_t ev;
    int rc = items ? KUBE_OK : KUBE_ENOMEM;

    for (const cJSON *c = o->child; c && rc == KUBE_OK; c = c->next)
        items[k++] = c;
    qsort(items, k, sizeof(*items), cmp_item);
    if (rc == KUBE_OK)
        rc = put(e, &ev,
                 yaml_mapping_start_event_initialize(
                     &ev, NULL, NULL, 1, n ? YAML_BLOCK_MAPPING_STYLE : YAML_FLOW_MAPPING_STYLE));
    for (size_t i = 0; i < k && rc == KUBE_OK; i++) {
        rc = put_text(e, items[i]->string, 1);
        if (rc == KUBE_OK)
            rc = put_value(e, items[i]);
    }
    if (rc == KUBE_OK)
        rc = put(e, &ev, yaml_mapping_end_event_initialize(&ev));
    free(items);
    return rc;
}

/* A sequence; [] when empty. */
static int put_array(yaml_emitter_t *e, const cJSON *a)
{
    yaml_event_t ev;
    int rc = put(e, &ev,
                 yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
                                                      a->child ? YAML_BLOCK_SEQUENCE_STYLE
                                                               : YAML_FLOW_SEQUENCE_STYLE));
    for (const cJSON *c = a->child; c && rc == KUBE_OK; c = c->next)
        rc = put_value(e, c);
    return rc == KUBE_OK ? put(e, &ev, yaml_sequence_end_event_initialize(&ev)) : rc;
}

static int put_value(yaml_emitter_t *e, const cJSON *v)
{
    if (cJSON_IsObject(v))
        return put_object(e, v);
    if (cJSON_IsArray(v))
        return put_array(e, v);
    return put_scalar(e, v);
}

/* The whole stream of one document holding root. */
static int put_document(yaml_emitter_t *e, const cJSON *root)
{
    yaml_event_t ev;
    int rc = put(e, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
    if (rc == KUBE_OK)
        rc = put(e, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1));
    if (rc == KUBE_OK)
        rc = put_value(e, root);
    if (rc == KUBE_OK)
        rc = put(e, &ev, yaml_document_end_event_initialize(&ev, 1));
    if (rc == KUBE_OK)
        rc = put(e, &ev, yaml_stream_end_event_initialize(&ev));
    return rc;
}

static cJSON *duration_json(int64_t ms)
{
    char buf[64];
    kube_duration_format(ms, buf, sizeof(buf));
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
        cJSON_AddItemToObject(plugins, sched_ext_point_key(e), plugin_set_json(&p->plugins[e]));
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
    if (cfg->n_extenders)
        cJSON_AddItemToObject(o, "extenders", sched_cfg_extenders_json(cfg));
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
    cJSON_AddNumberToObject(o, "podInitialBackoffSeconds",
                            (double)cfg->pod_initial_backoff_seconds);
    cJSON_AddNumberToObject(o, "podMaxBackoffSeconds", (double)cfg->pod_max_backoff_seconds);
    cJSON *ps = cJSON_AddArrayToObject(o, "profiles");
    for (size_t i = 0; ps && i < cfg->n_profiles; i++)
        cJSON_AddItemToArray(ps, profile_json(cfg, &cfg->profiles[i]));
    return o;
}

/* Drops each extender's tlsConfig.keyData from o: a private key is no
 * business of a debugging endpoint (client-go prints it as REDACTED). */
static void redact_extender_keys(cJSON *o)
{
    cJSON *ext;
    cJSON_ArrayForEach(ext, cJSON_GetObjectItemCaseSensitive(o, "extenders"))
        cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(ext, "tlsConfig"),
                                                "keyData");
}

cJSON *sched_config_to_json(const sched_config *cfg)
{
    cJSON *o = config_json(cfg);
    if (o)
        redact_extender_keys(o);
    return o;
}

int sched_config_write_yaml(const sched_config *cfg, kube_buf *out)
{
    cJSON *o = config_json(cfg);
    yaml_emitter_t e;
    int rc;

    if (!o)
        return KUBE_ENOMEM;
    if (!yaml_emitter_initialize(&e)) {
        cJSON_Delete(o);
        return KUBE_ENOMEM;
    }
    yaml_emitter_set_output(&e, out_handler, out);
    yaml_emitter_set_unicode(&e, 1);
    yaml_emitter_set_width(&e, -1);
    yaml_emitter_set_indent(&e, 2);
    rc = put_document(&e, o);
    yaml_emitter_delete(&e);
    cJSON_Delete(o);
    return rc;
}
