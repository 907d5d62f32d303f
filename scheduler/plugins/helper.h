/*
 * scheduler/plugins/helper.h - what several built-in plugins share, as
 * kube-scheduler's pkg/scheduler/framework/plugins/helper package: score
 * normalisation, static event registration, tolerations, DefaultSelector
 * (the default topology spread selector of a pod), and the field errors
 * plugin args validation reports (k8s.io/apimachinery's field.ErrorList,
 * printed as ErrorList.ToAggregate().Error() prints it).
 *
 * Memory: nothing here allocates except a plugin_field_errs, which owns its
 * text until plugin_field_errs_finish() (or _free()) releases it, and
 * plugin_default_selector(), which allocates in the caller's arena.
 * Threads: the functions without a plugin_field_errs are pure and may run
 * concurrently (Score, NormalizeScore).
 */
#ifndef PLUGIN_HELPER_H
#define PLUGIN_HELPER_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "framework/framework.h"
#include "kube/util/buf.h"
#include "kube/types/pod.h"
#include "kube/types/workload.h"

struct kube_arena;

/* A plugin whose only state is the framework handle (DefaultBinder,
 * ImageLocality): its descriptor's create and destroy. create ignores args
 * and stores h (borrowed: the framework outlives the plugin) in a
 * plugin_handle_only it allocates; destroy frees it. */
typedef struct plugin_handle_only {
    const fw_handle *h;
} plugin_handle_only;
int plugin_handle_only_create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                              size_t errlen);
void plugin_handle_only_destroy(void *self);

/* helper.DefaultNormalizeScore: scales scores[0..n) to [0, max_priority]
 * by the highest score (integer division); reverse turns s into
 * max_priority - s. When every score is 0, reverse sets all to
 * max_priority and otherwise leaves them. */
void plugin_default_normalize_score(int64_t max_priority, int reverse, fw_node_score *scores,
                                    size_t n);

/* Defines the file-local fw_plugin_desc.events_to_register of a plugin
 * whose events are the static array table, the same for every instance:
 * it points *out at table (borrowed, static) and returns its length. */
#define PLUGIN_EVENTS_TO_REGISTER(table)                                                 \
    static size_t events_to_register(void *self, const fw_cluster_event_with_hint **out) \
    {                                                                                    \
        *out = (table);                                                                  \
        return sizeof(table) / sizeof((table)[0]);                                       \
    }

/* v1helper.TolerationsTolerateTaint: 1 when any of the n tolerations
 * tolerates taint. */
int plugin_tolerations_tolerate(const kube_toleration *tols, size_t n, const kube_taint *taint);

/* The bit of a kube_taint_effect in the effects mask below. */
#define PLUGIN_EFFECT(e) (1u << (e))

/* v1helper.FindMatchingUntoleratedTaint: the first of node's taints with
 * an effect in the mask effects (PLUGIN_EFFECT bits) that none of pod's
 * tolerations tolerates, or NULL. Borrowed from node. Inline: Filter runs
 * it for every node, most of which have no taint. */
static inline const kube_taint *plugin_find_untolerated_taint(const kube_node *node,
                                                              const kube_pod *pod, unsigned effects)
{
    for (size_t i = 0; i < node->n_taints; i++) {
        const kube_taint *t = &node->taints[i];
        if ((effects & PLUGIN_EFFECT(t->effect)) &&
            !plugin_tolerations_tolerate(pod->tolerations, pod->n_tolerations, t))
            return t;
    }
    return NULL;
}

/* helper.DefaultSelector (helper/spread.go): the union of
 *   - the selectors of the Services in the pod's namespace whose non-nil
 *     spec.selector selects the pod (helper.GetPodServices), merged as one
 *     label set (labels.Merge: a later Service's value wins for a key),
 *   - then, for the pod's controller ownerReference (the first with
 *     controller: true), looked up by the pod's namespace and the owner's
 *     name when its apiVersion parses (schema.ParseGroupVersion) to
 *     v1 ReplicationController: its spec.selector merged into that set;
 *     apps/v1 ReplicaSet or StatefulSet: the requirements of its
 *     spec.selector added (none when nil, empty or invalid),
 * as `key = value` requirements of the set followed by the added ones,
 * sorted by key. Owner uids are not compared (kube-scheduler does not).
 * *out (never NULL on success) and everything it points to are allocated
 * in a and copied, so they outlive the listers' objects; no requirement
 * (n_reqs 0) is the empty selector, for which no default constraint
 * applies. Returns KUBE_OK or KUBE_ENOMEM. */
int plugin_default_selector(const kube_pod *pod, const kube_workload_listers *l,
                            struct kube_arena *a, const kube_label_selector **out);

/* validation.IsQualifiedName / IsValidLabelValue: the messages explaining
 * why value is not a qualified name (label key, resource name) / label
 * value, joined with sep into out (size n, "" when valid). Returns how many
 * there are (0: valid). Messages are apimachinery's, e.g. "name part must
 * consist of alphanumeric characters, '-', '_' or '.', and must start and
 * end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or
 * '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')". */
int plugin_qualified_name_msgs(const char *value, const char *sep, char *out, size_t n);
int plugin_label_value_msgs(const char *value, const char *sep, char *out, size_t n);

/*
 * Field errors of plugin args. Each error is one "<path>: <body>" line as
 * field.Error.Error() prints it (e.g. `scoringStrategy.type: Unsupported
 * value: "X": supported values: "LeastAllocated", ...`); finishing joins
 * them as utilerrors.NewAggregate does: one error alone, or
 * "[e1, e2, ...]" (repeated messages printed once).
 */
typedef struct plugin_field_errs {
    kube_buf text; /* the messages joined with ", " */
    int n;         /* distinct messages so far */
    int oom;       /* an append failed */
} plugin_field_errs;

#define PLUGIN_FIELD_ERRS_INIT \
    {                          \
        KUBE_BUF_INIT, 0, 0    \
    }

/* Adds one formatted message (duplicates are dropped). */
void plugin_field_errs_add(plugin_field_errs *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* KUBE_OK when e holds no error; otherwise writes the aggregate message to
 * err (size errlen, truncated) and returns KUBE_ECONFIG (KUBE_ENOMEM when
 * an append failed). Frees e's text either way. */
int plugin_field_errs_finish(plugin_field_errs *e, char *err, size_t errlen);
/* Frees e's text without reporting. */
void plugin_field_errs_free(plugin_field_errs *e);

/* Strict decoding of an args object: reports `<path>: unknown field "<k>"`
 * (path "" for the top level: `unknown field "<k>"`) for every member of
 * obj not in the NULL-terminated known list. obj must be an object. */
void plugin_args_unknown_fields(const cJSON *obj, const char *path, const char *const *known,
                                plugin_field_errs *e);

/* An optional object of args at path ("" for the args themselves): 0 when
 * obj is absent or null (the defaults apply) or is not an object (reports
 * `<path>: expected an object`, or `expected an object` at the top level);
 * 1 when it is an object, after reporting its unknown members as
 * plugin_args_unknown_fields does. */
int plugin_args_object(const cJSON *obj, const char *path, const char *const *known,
                       plugin_field_errs *e);

/* Reads member key of obj as an integer in [min, max] into *out (def when
 * absent or null). A non-integer reports `<path>.<key>: expected an
 * integer` and returns 0; otherwise 1. */
int plugin_args_int(const cJSON *obj, const char *path, const char *key, int64_t min, int64_t max,
                    int64_t def, int64_t *out, plugin_field_errs *e);

/* Reads member key of obj as a string (*out borrowed from obj; def when
 * absent or null). A non-string reports `<path>.<key>: expected a string`
 * and returns 0; otherwise 1. */
int plugin_args_str(const cJSON *obj, const char *path, const char *key, const char *def,
                    const char **out, plugin_field_errs *e);

/* Member key of obj as an array (*out NULL when absent or null). A
 * non-array reports `<path>.<key>: expected an array` and returns 0. */
int plugin_args_array(const cJSON *obj, const char *path, const char *key, const cJSON **out,
                      plugin_field_errs *e);

/* "<path>.<key>" (or "<key>" when path is ""), or "<path>[i]" when key is
 * NULL, into out (size n). Returns out. */
const char *plugin_args_path(char *out, size_t n, const char *path, const char *key, long index);

#endif
