/*
 * scheduler/config/load.c - loading a KubeSchedulerConfiguration: the
 * steps of config.h (decode, default, validate) over a file, text, or no
 * file at all, and freeing it.
 */
#include "config/config_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "config/config_testing.h"

void sched_config_free(sched_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->n_profiles; i++) {
        sched_profile *p = &cfg->profiles[i];
        free(p->scheduler_name);
        for (int e = 0; e < SCHED_EP_COUNT; e++)
            sched_cfg_plugin_set_free(&p->plugins[e]);
        for (size_t j = 0; j < p->n_plugin_config; j++) {
            free(p->plugin_config[j].name);
            free(p->plugin_config[j].field);
            cJSON_Delete(p->plugin_config[j].args);
        }
        free(p->plugin_config);
    }
    free(cfg->profiles);
    sched_cfg_extenders_free(cfg);
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

/* Decodes, defaults and validates the root node (NULL: no file). */
static int build(sched_cfg_dec *d, const yaml_node_t *root, sched_config *cfg, int need_api)
{
    sched_cfg_given g = {0};
    int rc = sched_cfg_decode(d, root, cfg, &g, need_api);

    if (rc == KUBE_OK)
        rc = sched_cfg_apply_defaults(cfg, &g);
    if (rc == KUBE_OK)
        rc = sched_cfg_validate(d, cfg);
    if (rc == KUBE_OK)
        rc = sched_cfg_validate_extenders(d, cfg);
    return rc;
}

/* A zeroed config whose source is a copy of source, or NULL. */
static sched_config *config_alloc(const char *source)
{
    sched_config *cfg = calloc(1, sizeof(*cfg));
    if (cfg && !(cfg->source = kube_strdup(source))) {
        free(cfg);
        cfg = NULL;
    }
    return cfg;
}

int sched_config_default(sched_config **out, char *err, size_t errlen)
{
    *out = NULL;
    sched_config *cfg = config_alloc("");
    if (!cfg)
        return KUBE_ENOMEM;
    sched_cfg_dec d = {.doc = NULL, .source = "defaults", .err = err, .errlen = errlen};
    int rc = build(&d, NULL, cfg, 0);
    if (rc != KUBE_OK) {
        sched_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return KUBE_OK;
}

int sched_config_load_string(const char *yaml, size_t len, const char *source, sched_config **out,
                             char *err, size_t errlen)
{
    *out = NULL;
    if (err && errlen)
        err[0] = '\0';
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return KUBE_ENOMEM;
    yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
    sched_cfg_dec d = {
        .doc = &doc, .source = source ? source : "config", .err = err, .errlen = errlen};
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

int sched_config_load_file(const char *path, sched_config **out, char *err, size_t errlen)
{
    char *text;
    size_t len;
    *out = NULL;
    int rc = kube_read_file(path, &text, &len);
    if (rc != KUBE_OK) {
        if (err && errlen)
            snprintf(err, errlen, "%s: %s", path,
                     rc == KUBE_EIO ? strerror(errno) : kube_strerror(rc));
        return rc;
    }
    rc = sched_config_load_string(text, len, path, out, err, errlen);
    free(text);
    return rc;
}

int sched_config_validate(const sched_config *cfg, const char *source, char *err, size_t errlen)
{
    sched_cfg_dec d = {.doc = NULL, .source = source, .err = err, .errlen = errlen};

    return sched_cfg_validate(&d, cfg);
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
