/*
 * scheduler/config/config_int.h - what the configuration's files share:
 * the decoder's state (the YAML document, the field path of the value being
 * decoded, the error buffer) and the steps of a load. decode.c decodes,
 * defaults.c defaults, validate.c validates, load.c runs the steps, write.c
 * writes YAML back. Not a public header: only scheduler/config/ includes it.
 */
#ifndef SCHED_CONFIG_INT_H
#define SCHED_CONFIG_INT_H

#include <yaml.h>

#include "config/config.h"

/* Decoder state: errors read "<source>: <path>: <what>". */
typedef struct sched_cfg_dec {
    yaml_document_t *doc; /* NULL: no file (the defaults) */
    const char *source;
    char *err;
    size_t errlen;
    char path[512];
    size_t plen;
} sched_cfg_dec;

/* Which pointer fields the file set (kube-scheduler defaults nil ones). */
typedef struct sched_cfg_given {
    int parallelism, pct, initial_backoff, max_backoff;
    int enable_profiling, enable_contention, leader_elect;
    int kind;
} sched_cfg_given;

/* Writes "<source>: <path>: <message>" (or "<source>: <message>" at the
 * root) into d->err and returns KUBE_ECONFIG. */
int sched_cfg_fail(sched_cfg_dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* sched_cfg_fail at path (relative to the current one). */
int sched_cfg_fail_at(sched_cfg_dec *d, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends ".key" ("key" at the root) or "[i]" to the path; returns the old
 * length for sched_cfg_pop(). */
size_t sched_cfg_push_key(sched_cfg_dec *d, const char *key);
size_t sched_cfg_push_index(sched_cfg_dec *d, size_t i);
void sched_cfg_pop(sched_cfg_dec *d, size_t old);

/* decode.c: decodes the root mapping into cfg (profiles included), noting
 * in g which fields the file set; root NULL decodes nothing but the one
 * default profile. need_api: apiVersion and kind are required (a file). */
int sched_cfg_decode(sched_cfg_dec *d, const yaml_node_t *root, sched_config *cfg,
                     sched_cfg_given *g, int need_api);

/* decode.c: 1 when the plain scalar s reads back as the string s (not as
 * null, a bool or a number, and not empty). */
int sched_cfg_plain_is_string(const char *s);

/* defaults.c: the profile's plugin sets merged with the default MultiPoint
 * set of api (mergePluginSet). KUBE_OK or KUBE_ENOMEM. */
int sched_cfg_merge_profile_plugins(const char *api, sched_profile *p);
/* defaults.c: every top-level default the file left unset. KUBE_OK or
 * KUBE_ENOMEM. */
int sched_cfg_apply_defaults(sched_config *cfg, const sched_cfg_given *g);
/* defaults.c: frees the names and fields of a set and zeroes it. */
void sched_cfg_plugin_set_free(sched_plugin_set *s);

/* decode.c: the field decoders, for the other decoding files. Each takes
 * the value node (null leaves *out as it is) and reports a wrong type at
 * the current path. walk_map calls field(d, ud, key, value) for each pair
 * of a mapping with the key pushed on the path. */
typedef int (*sched_cfg_field_fn)(sched_cfg_dec *d, void *ud, const char *key, yaml_node_t *v);
int sched_cfg_walk_map(sched_cfg_dec *d, const yaml_node_t *n, sched_cfg_field_fn field, void *ud);
int sched_cfg_get_string(sched_cfg_dec *d, const yaml_node_t *n, char **out);
int sched_cfg_get_int64(sched_cfg_dec *d, const yaml_node_t *n, int64_t *out);
int sched_cfg_get_bool(sched_cfg_dec *d, const yaml_node_t *n, int *out);
int sched_cfg_get_duration(sched_cfg_dec *d, const yaml_node_t *n, int64_t *ms);
int sched_cfg_unknown_field(sched_cfg_dec *d, const char *key);
/* "object", "array", "null", "bool", "number" or "string". */
const char *sched_cfg_kind_name(const yaml_node_t *n);
/* 1 when n is a null scalar. */
int sched_cfg_is_null(const yaml_node_t *n);
/* Item i of the sequence seq (borrowed from the document). */
yaml_node_t *sched_cfg_item(sched_cfg_dec *d, const yaml_node_t *seq, size_t i);

/* extenders.c: decodes the `extenders` sequence into cfg (n NULL: none).
 * KUBE_OK, KUBE_ECONFIG, KUBE_ENOMEM. */
int sched_cfg_decode_extenders(sched_cfg_dec *d, const yaml_node_t *n, sched_config *cfg);
/* extenders.c: validateExtenders (weights, one binder, managed resource
 * names), then buildExtenders' ignoredByScheduler resources written into
 * every profile's NodeResourcesFit args (ignoredResources). */
int sched_cfg_validate_extenders(sched_cfg_dec *d, sched_config *cfg);
/* extenders.c: frees cfg's extenders. */
void sched_cfg_extenders_free(sched_config *cfg);
/* extenders.c: the extenders as JSON (the written configuration's
 * `extenders`), or NULL when out of memory. */
cJSON *sched_cfg_extenders_json(const sched_config *cfg);

/* validate.c: kube-scheduler's ValidateKubeSchedulerConfiguration on the
 * defaulted cfg (plugin names and args excepted: the framework checks
 * those, fw_config_resolve()). KUBE_OK or KUBE_ECONFIG. */
int sched_cfg_validate(sched_cfg_dec *d, const sched_config *cfg);

#endif
