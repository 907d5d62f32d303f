/*
 * tests/unit/test_plugin_util.h - helpers the plugin test groups
 * (test_plugin_*.c) share: pods and nodes decoded from small JSON through
 * kube's decoders, node infos built through the framework's types.h API,
 * plugin instances made through their descriptor (args defaulted like the
 * config loader does), and status assertions.
 *
 * JSON is written with single quotes for readability; tp_json() turns
 * them into double quotes (no test string contains a real quote).
 *
 * Memory: every tp_* constructor returns something the caller frees with
 * the matching release (fw_pod_info_unref, fw_node_info_free,
 * tp_plugin_free, fw_snapshot_free). Failures abort the test (cmocka).
 */
#ifndef TEST_PLUGIN_UTIL_H
#define TEST_PLUGIN_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "framework/framework.h"

/* A copy of s with ' turned into " (static rotating buffers: valid until
 * the 8th next call). */
const char *tp_json(const char *s);

/* Decodes a pod from single-quoted JSON (metadata.namespace defaults to
 * "default", uid to "uid-<name>" when absent). One reference. */
fw_pod_info *tp_pod(const char *json);
/* Same with printf formatting. */
fw_pod_info *tp_podf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A pod named name whose containers request what each element of
 * requests says (a JSON array of ResourceList objects, single-quoted, e.g.
 * "[{'cpu':'1','memory':'2'},{}]"; {} is a container without requests).
 * extra_spec (may be NULL) is appended inside spec, e.g.
 * ",'initContainers':[...]" or ",'nodeName':'n1'". */
fw_pod_info *tp_pod_requests(const char *name, const char *requests, const char *extra_spec);

/* Any object decoded by codec from single-quoted JSON, as it is (no
 * default filled in). One reference: kube_object_unref(). */
kube_object *tp_object(const kube_codec *codec, const char *json);

/* A node info for the node in single-quoted JSON, with pods added. */
fw_node_info *tp_node(const char *json, fw_pod_info *const *pods, size_t n);
/* A node info named name with allocatable (single-quoted ResourceList JSON,
 * may be NULL), labels (single-quoted JSON object, may be NULL), taints
 * (single-quoted JSON array, may be NULL). */
fw_node_info *tp_node_simple(const char *name, const char *allocatable, const char *labels,
                             const char *taints);
/* Adds a pod (a new reference is taken). */
void tp_node_add(fw_node_info *ni, fw_pod_info *pi);

/* A plugin instance: the descriptor's default_args (when it has one) runs
 * on args (single-quoted JSON, NULL for none), then create. */
typedef struct tp_plugin {
    const fw_plugin_desc *desc;
    void *self;
    fw_handle handle;
} tp_plugin;

tp_plugin *tp_plugin_new(const fw_plugin_desc *desc, const char *args, fw_snapshot *snap);
void tp_plugin_free(tp_plugin *p);
/* default_args's return code on args, the message in err. */
int tp_default_args(const fw_plugin_desc *desc, const char *args, char *err, size_t errlen);
/* default_args's defaulted output as compact JSON (caller frees), or NULL
 * on error. */
char *tp_defaulted(const fw_plugin_desc *desc, const char *args);

/* Asserts st has code and, when msg is non-NULL, the joined message; frees
 * st. A NULL st is Success. */
void tp_assert_status(fw_status *st, fw_code code, const char *msg);

/* Asserts that p registers exactly the n events want (resource and
 * action, in order); returns the registered events (borrowed from p). */
const fw_cluster_event_with_hint *tp_assert_events(tp_plugin *p, const fw_cluster_event *want,
                                                   size_t n);

/* Runs PreScore (when the plugin has one) over nodes, then Score on each
 * node into scores[i] (asserting that score_nodes, when the plugin has it,
 * gives the same), then NormalizeScore (when normalize and present).
 * Returns the PreScore status code (FW_SKIP skips Score: scores all 0). */
fw_code tp_score(tp_plugin *p, const fw_pod_info *pod, fw_node_info *const *nodes, size_t n,
                 int normalize, int64_t *scores);

/* Runs PreFilter then Filter on one node; returns the Filter status (or
 * the PreFilter status when it is not success/skip; a PreFilter Skip
 * returns NULL). *result (may be NULL) receives the PreFilter result. */
fw_status *tp_filter(tp_plugin *p, const fw_pod_info *pod, const fw_node_info *ni,
                     fw_pre_filter_result **result);

/* What the scheduler does with a configuration: yaml (NULL: no file, the
 * defaults) loaded under the name source, then resolved against reg (NULL:
 * the in-tree registry). KUBE_OK, or the error with the message in err and
 * *out NULL. */
int tp_config_load(const char *yaml, const char *source, const fw_registry *reg, sched_config **out,
                   char *err, size_t errlen);
/* The same from a file. */
int tp_config_load_file(const char *path, const fw_registry *reg, sched_config **out, char *err,
                        size_t errlen);

#endif
