/*
 * scheduler/config/extenders.c - the `extenders` of a
 * KubeSchedulerConfiguration (kube-scheduler v1.28's Extender,
 * ExtenderTLSConfig and ExtenderManagedResource): decoded strictly as the
 * rest of the file, validated as apis/config/validation's
 * validateExtenders, their ignoredByScheduler resources handed to
 * NodeResourcesFit as buildExtenders does, freed, and written back.
 */
#include "config/config_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/codec/base64.h"
#include "kube/codec/validation.h"
#include "kube/types/node.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"

#define FIT_PLUGIN "NodeResourcesFit"

/* ------------------------------------------------------------------ */
/* Decoding                                                            */
/* ------------------------------------------------------------------ */

/* A []byte field: base64 text decoded into *out / *len. */
static int get_bytes(sched_cfg_dec *d, const yaml_node_t *v, char **out, size_t *len)
{
    char *text = NULL;
    unsigned char *bytes = NULL;
    int rc = sched_cfg_get_string(d, v, &text);

    if (rc != KUBE_OK || !text)
        return rc;
    rc = kube_base64_decode(text, strlen(text), &bytes, len);
    free(text);
    if (rc == KUBE_EPARSE)
        return sched_cfg_fail(d, "illegal base64 data");
    if (rc != KUBE_OK)
        return rc;
    free(*out);
    *out = (char *)bytes;
    return KUBE_OK;
}

static int tls_field(sched_cfg_dec *d, void *ud, const char *key, yaml_node_t *v)
{
    sched_extender_tls *t = ud;

    if (strcmp(key, "insecure") == 0)
        return sched_cfg_get_bool(d, v, &t->insecure);
    if (strcmp(key, "serverName") == 0)
        return sched_cfg_get_string(d, v, &t->server_name);
    if (strcmp(key, "certFile") == 0)
        return sched_cfg_get_string(d, v, &t->cert_file);
    if (strcmp(key, "keyFile") == 0)
        return sched_cfg_get_string(d, v, &t->key_file);
    if (strcmp(key, "caFile") == 0)
        return sched_cfg_get_string(d, v, &t->ca_file);
    if (strcmp(key, "certData") == 0)
        return get_bytes(d, v, &t->cert_data, &t->cert_len);
    if (strcmp(key, "keyData") == 0)
        return get_bytes(d, v, &t->key_data, &t->key_len);
    if (strcmp(key, "caData") == 0)
        return get_bytes(d, v, &t->ca_data, &t->ca_len);
    return sched_cfg_unknown_field(d, key);
}

static int resource_field(sched_cfg_dec *d, void *ud, const char *key, yaml_node_t *v)
{
    sched_extender_resource *r = ud;

    if (strcmp(key, "name") == 0)
        return sched_cfg_get_string(d, v, &r->name);
    if (strcmp(key, "ignoredByScheduler") == 0)
        return sched_cfg_get_bool(d, v, &r->ignored_by_scheduler);
    return sched_cfg_unknown_field(d, key);
}

/* The length of a sequence (0 for null); KUBE_ECONFIG for anything else. */
static int seq_len(sched_cfg_dec *d, const yaml_node_t *n, size_t *len)
{
    *len = 0;
    if (!n || sched_cfg_is_null(n))
        return KUBE_OK;
    if (n->type != YAML_SEQUENCE_NODE)
        return sched_cfg_fail(d, "expected an array, got %s", sched_cfg_kind_name(n));
    *len = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    return KUBE_OK;
}

static int decode_resources(sched_cfg_dec *d, const yaml_node_t *n, sched_extender_config *e)
{
    size_t len;
    int rc = seq_len(d, n, &len);

    if (rc != KUBE_OK || len == 0)
        return rc;
    e->managed_resources = calloc(len, sizeof(*e->managed_resources));
    if (!e->managed_resources)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < len && rc == KUBE_OK; i++) {
        size_t old = sched_cfg_push_index(d, i);
        sched_extender_resource *r = &e->managed_resources[i];
        e->n_managed_resources = i + 1;
        rc = sched_cfg_walk_map(d, sched_cfg_item(d, n, i), resource_field, r);
        if (rc == KUBE_OK && !r->name && !(r->name = kube_strdup("")))
            rc = KUBE_ENOMEM;
        if (rc == KUBE_OK)
            sched_cfg_pop(d, old);
    }
    return rc;
}

static int extender_field(sched_cfg_dec *d, void *ud, const char *key, yaml_node_t *v)
{
    sched_extender_config *e = ud;

    if (strcmp(key, "urlPrefix") == 0)
        return sched_cfg_get_string(d, v, &e->url_prefix);
    if (strcmp(key, "filterVerb") == 0)
        return sched_cfg_get_string(d, v, &e->filter_verb);
    if (strcmp(key, "preemptVerb") == 0)
        return sched_cfg_get_string(d, v, &e->preempt_verb);
    if (strcmp(key, "prioritizeVerb") == 0)
        return sched_cfg_get_string(d, v, &e->prioritize_verb);
    if (strcmp(key, "bindVerb") == 0)
        return sched_cfg_get_string(d, v, &e->bind_verb);
    if (strcmp(key, "weight") == 0)
        return sched_cfg_get_int64(d, v, &e->weight);
    if (strcmp(key, "enableHTTPS") == 0)
        return sched_cfg_get_bool(d, v, &e->enable_https);
    if (strcmp(key, "httpTimeout") == 0)
        return sched_cfg_get_duration(d, v, &e->http_timeout_ms);
    if (strcmp(key, "nodeCacheCapable") == 0)
        return sched_cfg_get_bool(d, v, &e->node_cache_capable);
    if (strcmp(key, "ignorable") == 0)
        return sched_cfg_get_bool(d, v, &e->ignorable);
    if (strcmp(key, "managedResources") == 0)
        return decode_resources(d, v, e);
    if (strcmp(key, "tlsConfig") == 0) {
        if (sched_cfg_is_null(v))
            return KUBE_OK;
        if (!e->tls && !(e->tls = calloc(1, sizeof(*e->tls))))
            return KUBE_ENOMEM;
        return sched_cfg_walk_map(d, v, tls_field, e->tls);
    }
    return sched_cfg_unknown_field(d, key);
}

/* Unset verbs and the URL read as "". */
static int fill_empty_strings(sched_extender_config *e)
{
    char **s[] = {&e->url_prefix, &e->filter_verb, &e->preempt_verb, &e->prioritize_verb,
                  &e->bind_verb};

    for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
        if (!*s[i] && !(*s[i] = kube_strdup("")))
            return KUBE_ENOMEM;
    return KUBE_OK;
}

int sched_cfg_decode_extenders(sched_cfg_dec *d, const yaml_node_t *n, sched_config *cfg)
{
    size_t old = sched_cfg_push_key(d, "extenders"), len;
    int rc = seq_len(d, n, &len);

    if (rc == KUBE_OK && len && !(cfg->extenders = calloc(len, sizeof(*cfg->extenders))))
        rc = KUBE_ENOMEM;
    for (size_t i = 0; i < len && rc == KUBE_OK; i++) {
        size_t o2 = sched_cfg_push_index(d, i);
        cfg->n_extenders = i + 1;
        rc = sched_cfg_walk_map(d, sched_cfg_item(d, n, i), extender_field, &cfg->extenders[i]);
        if (rc == KUBE_OK)
            rc = fill_empty_strings(&cfg->extenders[i]);
        if (rc == KUBE_OK)
            sched_cfg_pop(d, o2);
    }
    if (rc == KUBE_OK)
        sched_cfg_pop(d, old);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Validation                                                          */
/* ------------------------------------------------------------------ */

/* validateExtendedResourceName, and a name no other managed resource of
 * any extender (before it) has. */
static int validate_resource(sched_cfg_dec *d, const sched_config *cfg, size_t i, size_t j)
{
    const char *name = cfg->extenders[i].managed_resources[j].name;
    char path[96], msgs[1024];

    snprintf(path, sizeof(path), "extenders[%zu].managedResources[%zu].name", i, j);
    if (kube_qualified_name_msgs(name, "; ", msgs, sizeof(msgs)) > 0)
        return sched_cfg_fail_at(d, path, "invalid value \"%s\": %s", name, msgs);
    if (!kube_is_extended_resource_name(name))
        return sched_cfg_fail_at(
            d, path, "invalid value \"%s\": is an invalid extended resource name", name);
    for (size_t k = 0; k <= i; k++) {
        const sched_extender_config *e = &cfg->extenders[k];
        for (size_t l = 0; l < (k == i ? j : e->n_managed_resources); l++)
            if (strcmp(e->managed_resources[l].name, name) == 0)
                return sched_cfg_fail_at(
                    d, path, "invalid value \"%s\": duplicate extender managed resource name",
                    name);
    }
    return KUBE_OK;
}

static int validate_one(sched_cfg_dec *d, const sched_config *cfg, size_t i)
{
    const sched_extender_config *e = &cfg->extenders[i];
    char path[64];
    int rc = KUBE_OK;

    if (*e->prioritize_verb && e->weight <= 0) {
        snprintf(path, sizeof(path), "extenders[%zu].weight", i);
        return sched_cfg_fail_at(d, path, "must have a positive weight applied to it, got %lld",
                                 (long long)e->weight);
    }
    for (size_t j = 0; j < e->n_managed_resources && rc == KUBE_OK; j++)
        rc = validate_resource(d, cfg, i, j);
    return rc;
}

/* 1 when plugin is enabled at some point of the (merged) profile. */
static int enabled_anywhere(const sched_profile *p, const char *plugin)
{
    for (int e = 0; e < SCHED_EP_COUNT; e++)
        for (size_t i = 0; i < p->plugins[e].n_enabled; i++)
            if (strcmp(p->plugins[e].enabled[i].name, plugin) == 0)
                return 1;
    return 0;
}

/* The profile's NodeResourcesFit pluginConfig entry, appended (with no
 * args) when the plugin is enabled without one: resolving defaults the
 * rest of its args. NULL with *rc KUBE_ECONFIG when the plugin is not
 * enabled (kube-scheduler: "can't find NodeResourcesFitArgs"). */
static sched_plugin_config *fit_entry(sched_cfg_dec *d, sched_profile *p, size_t i, int *rc)
{
    char path[64];
    sched_plugin_config *pc;

    for (size_t j = 0; j < p->n_plugin_config; j++)
        if (strcmp(p->plugin_config[j].name, FIT_PLUGIN) == 0)
            return &p->plugin_config[j];
    if (!enabled_anywhere(p, FIT_PLUGIN)) {
        snprintf(path, sizeof(path), "profiles[%zu].pluginConfig", i);
        *rc = sched_cfg_fail_at(d, path,
                                "can't find NodeResourcesFitArgs in plugin config (an extender's "
                                "managed resource is ignoredByScheduler)");
        return NULL;
    }
    pc = realloc(p->plugin_config, (p->n_plugin_config + 1) * sizeof(*pc));
    if (!pc) {
        *rc = KUBE_ENOMEM;
        return NULL;
    }
    p->plugin_config = pc;
    pc = &p->plugin_config[p->n_plugin_config];
    memset(pc, 0, sizeof(*pc));
    if (!(pc->name = kube_strdup(FIT_PLUGIN))) {
        *rc = KUBE_ENOMEM;
        return NULL;
    }
    p->n_plugin_config++;
    return pc;
}

/* The names of the managed resources ignoredByScheduler, as a JSON array,
 * or NULL when there are none (*rc KUBE_ENOMEM when out of memory). */
static cJSON *ignored_resources(const sched_config *cfg, int *rc)
{
    cJSON *a = NULL;

    for (size_t i = 0; i < cfg->n_extenders; i++)
        for (size_t j = 0; j < cfg->extenders[i].n_managed_resources; j++) {
            const sched_extender_resource *r = &cfg->extenders[i].managed_resources[j];
            if (!r->ignored_by_scheduler)
                continue;
            if ((!a && !(a = cJSON_CreateArray())) ||
                !cJSON_AddItemToArray(a, cJSON_CreateString(r->name))) {
                *rc = KUBE_ENOMEM;
                cJSON_Delete(a);
                return NULL;
            }
        }
    return a;
}

/* buildExtenders: every profile's NodeResourcesFitArgs.ignoredResources
 * becomes the list of the managed resources ignoredByScheduler. */
static int apply_ignored_resources(sched_cfg_dec *d, sched_config *cfg)
{
    int rc = KUBE_OK;
    cJSON *names = ignored_resources(cfg, &rc);

    for (size_t i = 0; names && i < cfg->n_profiles && rc == KUBE_OK; i++) {
        sched_plugin_config *pc = fit_entry(d, &cfg->profiles[i], i, &rc);
        cJSON *copy = pc ? cJSON_Duplicate(names, 1) : NULL;
        if (pc && !cJSON_IsObject(pc->args)) {
            cJSON_Delete(pc->args);
            pc->args = cJSON_CreateObject();
        }
        if (pc && (!copy || !pc->args)) {
            cJSON_Delete(copy);
            rc = KUBE_ENOMEM;
        } else if (pc) {
            cJSON_DeleteItemFromObjectCaseSensitive(pc->args, "ignoredResources");
            cJSON_AddItemToObject(pc->args, "ignoredResources", copy);
        }
    }
    cJSON_Delete(names);
    return rc;
}

int sched_cfg_validate_extenders(sched_cfg_dec *d, sched_config *cfg)
{
    size_t binders = 0;
    int rc = KUBE_OK;

    for (size_t i = 0; i < cfg->n_extenders && rc == KUBE_OK; i++) {
        rc = validate_one(d, cfg, i);
        binders += *cfg->extenders[i].bind_verb != '\0';
    }
    if (rc == KUBE_OK && binders > 1)
        return sched_cfg_fail_at(d, "extenders",
                                 "found %zu extenders implementing bind: only one extender can "
                                 "implement bind",
                                 binders);
    return rc == KUBE_OK ? apply_ignored_resources(d, cfg) : rc;
}

/* ------------------------------------------------------------------ */
/* Freeing and writing                                                 */
/* ------------------------------------------------------------------ */

static void tls_free(sched_extender_tls *t)
{
    if (!t)
        return;
    free(t->server_name);
    free(t->cert_file);
    free(t->key_file);
    free(t->ca_file);
    free(t->cert_data);
    if (t->key_data)
        explicit_bzero(t->key_data, t->key_len);
    free(t->key_data);
    free(t->ca_data);
    free(t);
}

void sched_cfg_extenders_free(sched_config *cfg)
{
    for (size_t i = 0; i < cfg->n_extenders; i++) {
        sched_extender_config *e = &cfg->extenders[i];
        free(e->url_prefix);
        free(e->filter_verb);
        free(e->preempt_verb);
        free(e->prioritize_verb);
        free(e->bind_verb);
        tls_free(e->tls);
        for (size_t j = 0; j < e->n_managed_resources; j++)
            free(e->managed_resources[j].name);
        free(e->managed_resources);
    }
    free(cfg->extenders);
    cfg->extenders = NULL;
    cfg->n_extenders = 0;
}

/* key: value when value is non-empty (Go's omitempty). */
static void add_string(cJSON *o, const char *key, const char *value)
{
    if (value && *value)
        cJSON_AddStringToObject(o, key, value);
}

static void add_bytes(cJSON *o, const char *key, const char *data, size_t len)
{
    char *text = NULL;

    if (data && len && kube_base64_encode(data, len, &text, NULL) == KUBE_OK)
        cJSON_AddStringToObject(o, key, text);
    free(text);
}

static cJSON *tls_json(const sched_extender_tls *t)
{
    cJSON *o = cJSON_CreateObject();

    if (!o)
        return NULL;
    if (t->insecure)
        cJSON_AddTrueToObject(o, "insecure");
    add_string(o, "serverName", t->server_name);
    add_string(o, "certFile", t->cert_file);
    add_string(o, "keyFile", t->key_file);
    add_string(o, "caFile", t->ca_file);
    add_bytes(o, "certData", t->cert_data, t->cert_len);
    add_bytes(o, "keyData", t->key_data, t->key_len);
    add_bytes(o, "caData", t->ca_data, t->ca_len);
    return o;
}

static cJSON *resources_json(const sched_extender_config *e)
{
    cJSON *a = cJSON_CreateArray();

    for (size_t j = 0; a && j < e->n_managed_resources; j++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToArray(a, r);
        cJSON_AddStringToObject(r, "name", e->managed_resources[j].name);
        if (e->managed_resources[j].ignored_by_scheduler)
            cJSON_AddTrueToObject(r, "ignoredByScheduler");
    }
    return a;
}

static cJSON *extender_json(const sched_extender_config *e)
{
    cJSON *o = cJSON_CreateObject();
    char timeout[64];

    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "urlPrefix", e->url_prefix);
    add_string(o, "filterVerb", e->filter_verb);
    add_string(o, "preemptVerb", e->preempt_verb);
    add_string(o, "prioritizeVerb", e->prioritize_verb);
    add_string(o, "bindVerb", e->bind_verb);
    if (e->weight)
        cJSON_AddNumberToObject(o, "weight", (double)e->weight);
    if (e->enable_https)
        cJSON_AddTrueToObject(o, "enableHTTPS");
    if (e->tls)
        cJSON_AddItemToObject(o, "tlsConfig", tls_json(e->tls));
    kube_duration_format(e->http_timeout_ms, timeout, sizeof(timeout));
    cJSON_AddStringToObject(o, "httpTimeout", timeout);
    if (e->node_cache_capable)
        cJSON_AddTrueToObject(o, "nodeCacheCapable");
    if (e->n_managed_resources)
        cJSON_AddItemToObject(o, "managedResources", resources_json(e));
    if (e->ignorable)
        cJSON_AddTrueToObject(o, "ignorable");
    return o;
}

cJSON *sched_cfg_extenders_json(const sched_config *cfg)
{
    cJSON *a = cJSON_CreateArray();

    for (size_t i = 0; a && i < cfg->n_extenders; i++)
        cJSON_AddItemToArray(a, extender_json(&cfg->extenders[i]));
    return a;
}
