/*
 * scheduler/plugins/noderesources/fit.c - NodeResourcesFit (kube-scheduler
 * v1.28 pkg/scheduler/framework/plugins/noderesources/fit.go with
 * least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go).
 *
 * PreFilter: the pod's request (PodRequests: containers and sidecars
 * summed, max'ed with each init container, plus overhead - precomputed in
 * the pod info) reduced to what Filter must check: cpu, memory,
 * ephemeral-storage and the non-zero scalar resources that are not ignored
 * (ignoredResources / ignoredResourceGroups apply to extended resources
 * only).
 * Filter: "Too many pods" when the node is full, then "Insufficient <r>"
 * for each requested resource exceeding allocatable - requested; all
 * reasons are kept, Unschedulable.
 * PreScore/Score: the scoring strategy (LeastAllocated by default, cpu and
 * memory weight 1; MostAllocated; RequestedToCapacityRatio with a shape of
 * 0..10 scores scaled to 0..100) over NodeInfo.NonZeroRequested for cpu and
 * memory (resource_allocation.h).
 *
 * Args (NodeResourcesFitArgs, v1 defaults and validation):
 *   ignoredResources: [string], ignoredResourceGroups: [string],
 *   scoringStrategy: {type, resources: [{name, weight}],
 *                     requestedToCapacityRatio: {shape: [{utilization, score}]}}
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"
#include "plugins/noderesources/resource_allocation.h"

#define PRE_FILTER_KEY "PreFilterNodeResourcesFit"
#define PRE_SCORE_KEY "PreScoreNodeResourcesFit"
#define MAX_CUSTOM_PRIORITY_SCORE 10 /* config.MaxCustomPriorityScore */
#define MAX_UTILIZATION 100

typedef enum fit_strategy {
    LEAST_ALLOCATED = 0,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    N_STRATEGIES
} fit_strategy;

static const char *const strategy_names[N_STRATEGIES] = {"LeastAllocated", "MostAllocated",
                                                         "RequestedToCapacityRatio"};

/* NodeResourcesFitArgs after defaulting. */
typedef struct fit_args {
    char **ignored; /* ignoredResources, owned copies */
    size_t n_ignored;
    char **groups; /* ignoredResourceGroups, owned copies */
    size_t n_groups;
    fit_strategy type;
    plugin_res_spec *resources; /* owned */
    size_t n_resources;
    int has_shape;             /* requestedToCapacityRatio was given */
    plugin_shape_point *shape; /* owned; scores as configured (0..10) */
    size_t n_shape;
} fit_args;

typedef struct fit {
    fit_args args;
    plugin_res_scorer scorer;
} fit;

/* ------------------------------------------------------------------ */
/* Args                                                                */
/* ------------------------------------------------------------------ */

static void free_strings(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void args_free(fit_args *a)
{
    free_strings(a->ignored, a->n_ignored);
    free_strings(a->groups, a->n_groups);
    free(a->resources);
    free(a->shape);
    memset(a, 0, sizeof(*a));
}

/* Copies the strings of a JSON array (non-strings are reported). */
static int read_strings(const cJSON *arr, const char *path, char ***out, size_t *n,
                        plugin_field_errs *e)
{
    size_t cap = (size_t)cJSON_GetArraySize(arr), i = 0;
    const cJSON *it;
    char p[256];

    *out = calloc(cap ? cap : 1, sizeof(char *));
    if (!*out)
        return KUBE_ENOMEM;
    cJSON_ArrayForEach(it, arr)
    {
        if (!cJSON_IsString(it))
            plugin_field_errs_add(e, "%s: expected a string",
                                  plugin_args_path(p, sizeof(p), path, NULL, (long)i));
        else if (!((*out)[(*n)++] = kube_strdup(it->valuestring)))
            return KUBE_ENOMEM;
        i++;
    }
    return KUBE_OK;
}

/* metav1validation.ValidateLabelName: one error per message. */
static void validate_label_name(const char *v, const char *path, plugin_field_errs *e)
{
    char msgs[2048], *save = NULL;
    if (plugin_qualified_name_msgs(v, "\n", msgs, sizeof(msgs)) == 0)
        return;
    for (char *m = strtok_r(msgs, "\n", &save); m; m = strtok_r(NULL, "\n", &save))
        plugin_field_errs_add(e, "%s: Invalid value: \"%s\": %s", path, v, m);
}

static int parse_ignored(const cJSON *in, fit_args *a, plugin_field_errs *e)
{
    const cJSON *arr;
    char p[256];
    int rc = KUBE_OK;

    if (plugin_args_array(in, "", "ignoredResources", &arr, e) && arr)
        rc = read_strings(arr, "ignoredResources", &a->ignored, &a->n_ignored, e);
    for (size_t i = 0; rc == KUBE_OK && i < a->n_ignored; i++)
        validate_label_name(a->ignored[i],
                            plugin_args_path(p, sizeof(p), "ignoredResources", NULL, (long)i), e);
    if (rc == KUBE_OK && plugin_args_array(in, "", "ignoredResourceGroups", &arr, e) && arr)
        rc = read_strings(arr, "ignoredResourceGroups", &a->groups, &a->n_groups, e);
    for (size_t i = 0; rc == KUBE_OK && i < a->n_groups; i++) {
        plugin_args_path(p, sizeof(p), "ignoredResourceGroups", NULL, (long)i);
        if (strchr(a->groups[i], '/'))
            plugin_field_errs_add(e,
                                  "%s: Invalid value: \"%s\": resource group name can't "
                                  "contain '/'",
                                  p, a->groups[i]);
        validate_label_name(a->groups[i], p, e);
    }
    return rc;
}

/* requestedToCapacityRatio.shape */
static int parse_shape(const cJSON *rtcr, fit_args *a, plugin_field_errs *e)
{
    static const char *const known_rtcr[] = {"shape", NULL};
    static const char *const known_point[] = {"utilization", "score", NULL};
    const char *path = "scoringStrategy.requestedToCapacityRatio";
    const cJSON *arr, *it;
    char p[256];
    long i = 0;

    a->has_shape = 1;
    if (!plugin_args_object(rtcr, path, known_rtcr, e) ||
        !plugin_args_array(rtcr, path, "shape", &arr, e) || !arr)
        return KUBE_OK;
    a->shape = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(*a->shape));
    if (!a->shape)
        return KUBE_ENOMEM;
    cJSON_ArrayForEach(it, arr)
    {
        plugin_shape_point *pt = &a->shape[a->n_shape];
        plugin_args_path(p, sizeof(p), "scoringStrategy.requestedToCapacityRatio.shape", NULL, i++);
        if (!cJSON_IsObject(it)) {
            plugin_field_errs_add(e, "%s: expected an object", p);
            continue;
        }
        plugin_args_unknown_fields(it, p, known_point, e);
        plugin_args_int(it, p, "utilization", INT32_MIN, INT32_MAX, 0, &pt->utilization, e);
        plugin_args_int(it, p, "score", INT32_MIN, INT32_MAX, 0, &pt->score, e);
        a->n_shape++;
    }
    return KUBE_OK;
}

static int parse_strategy(const cJSON *in, fit_args *a, plugin_field_errs *e)
{
    static const char *const known[] = {"type", "resources", "requestedToCapacityRatio", NULL};
    const cJSON *ss = cJSON_GetObjectItemCaseSensitive(in, "scoringStrategy");
    const cJSON *arr = NULL, *rtcr;
    const char *type = "";
    int rc;

    if (!ss || cJSON_IsNull(ss)) {
        a->type = LEAST_ALLOCATED;
        return plugin_res_specs_default(&a->resources, &a->n_resources);
    }
    if (!plugin_args_object(ss, "scoringStrategy", known, e))
        return KUBE_OK;
    plugin_args_str(ss, "scoringStrategy", "type", "", &type, e);
    for (a->type = 0; a->type < N_STRATEGIES; a->type++)
        if (strcmp(type, strategy_names[a->type]) == 0)
            break;
    if (a->type == N_STRATEGIES)
        plugin_field_errs_add(e,
                              "scoringStrategy.type: Unsupported value: \"%s\": supported "
                              "values: \"LeastAllocated\", \"MostAllocated\", "
                              "\"RequestedToCapacityRatio\"",
                              type);
    plugin_args_array(ss, "scoringStrategy", "resources", &arr, e);
    rc =
        plugin_res_specs_parse(arr, "scoringStrategy.resources", &a->resources, &a->n_resources, e);
    if (rc != KUBE_OK)
        return rc;
    rtcr = cJSON_GetObjectItemCaseSensitive(ss, "requestedToCapacityRatio");
    if (rtcr && !cJSON_IsNull(rtcr))
        return parse_shape(rtcr, a, e);
    return KUBE_OK;
}

/* validateResources */
static void validate_resources(const fit_args *a, plugin_field_errs *e)
{
    for (size_t i = 0; i < a->n_resources; i++)
        if (a->resources[i].weight <= 0 || a->resources[i].weight > 100)
            plugin_field_errs_add(e,
                                  "scoringStrategy.resources[%zu].weight: Invalid value: "
                                  "%lld: resource weight of %s not in valid range (0, 100]",
                                  i, (long long)a->resources[i].weight, a->resources[i].name);
}

/* validateFunctionShape (kube reports it under "scoringStrategy.shape"). */
static void validate_shape(const fit_args *a, plugin_field_errs *e)
{
    const char *path = "scoringStrategy.shape";

    if (a->n_shape == 0) {
        plugin_field_errs_add(e, "%s: Required value: at least one point must be specified", path);
        return;
    }
    for (size_t i = 1; i < a->n_shape; i++)
        if (a->shape[i - 1].utilization >= a->shape[i].utilization) {
            plugin_field_errs_add(e,
                                  "%s[%zu].utilization: Invalid value: %lld: should be "
                                  "greater than previous element",
                                  path, i, (long long)a->shape[i].utilization);
            break;
        }
    for (size_t i = 0; i < a->n_shape; i++) {
        if (a->shape[i].utilization < 0 || a->shape[i].utilization > MAX_UTILIZATION)
            plugin_field_errs_add(e,
                                  "%s[%zu].utilization: Invalid value: %lld: not in valid "
                                  "range [0, 100]",
                                  path, i, (long long)a->shape[i].utilization);
        if (a->shape[i].score < 0 || a->shape[i].score > MAX_CUSTOM_PRIORITY_SCORE)
            plugin_field_errs_add(e,
                                  "%s[%zu].score: Invalid value: %lld: not in valid range "
                                  "[0, 10]",
                                  path, i, (long long)a->shape[i].score);
    }
}

/* Decodes, defaults and validates in (NULL: all defaults) into a. Returns
 * KUBE_OK, KUBE_ECONFIG (message in err) or KUBE_ENOMEM; a is freed on
 * error. */
static int parse_args(const cJSON *in, fit_args *a, char *err, size_t errlen)
{
    static const char *const known[] = {"ignoredResources", "ignoredResourceGroups",
                                        "scoringStrategy", NULL};
    plugin_field_errs e = PLUGIN_FIELD_ERRS_INIT;
    int rc = KUBE_OK;

    memset(a, 0, sizeof(*a));
    if (plugin_args_object(in, "", known, &e))
        rc = parse_ignored(in, a, &e);
    if (rc == KUBE_OK)
        rc = parse_strategy(cJSON_IsObject(in) ? in : NULL, a, &e);
    if (rc == KUBE_OK) {
        validate_resources(a, &e);
        if (a->has_shape)
            validate_shape(a, &e);
        else if (a->type == REQUESTED_TO_CAPACITY_RATIO)
            plugin_field_errs_add(&e, "scoringStrategy.requestedToCapacityRatio: Required "
                                      "value: a shape is required by the RequestedToCapacityRatio "
                                      "strategy");
    }
    if (rc != KUBE_OK)
        plugin_field_errs_free(&e);
    else
        rc = plugin_field_errs_finish(&e, err, errlen);
    if (rc != KUBE_OK)
        args_free(a);
    return rc;
}

static cJSON *strings_json(char *const *v, size_t n)
{
    return cJSON_CreateStringArray((const char *const *)v, (int)n);
}

/* The defaulted args as kube-scheduler writes NodeResourcesFitArgs. */
static cJSON *args_json(const fit_args *a)
{
    cJSON *o = cJSON_CreateObject(), *ss = NULL, *res = NULL, *rtcr = NULL, *shape = NULL;
    int ok = o != NULL;

    if (ok && a->n_ignored)
        ok = cJSON_AddItemToObject(o, "ignoredResources", strings_json(a->ignored, a->n_ignored));
    if (ok && a->n_groups)
        ok =
            cJSON_AddItemToObject(o, "ignoredResourceGroups", strings_json(a->groups, a->n_groups));
    ok = ok && (ss = cJSON_AddObjectToObject(o, "scoringStrategy")) &&
         cJSON_AddStringToObject(ss, "type", strategy_names[a->type]) &&
         (res = cJSON_AddArrayToObject(ss, "resources"));
    for (size_t i = 0; ok && i < a->n_resources; i++) {
        cJSON *r = cJSON_CreateObject();
        ok = r && cJSON_AddItemToArray(res, r) &&
             cJSON_AddStringToObject(r, "name", a->resources[i].name) &&
             cJSON_AddNumberToObject(r, "weight", (double)a->resources[i].weight);
    }
    if (ok && a->has_shape)
        ok = (rtcr = cJSON_AddObjectToObject(ss, "requestedToCapacityRatio")) &&
             (shape = cJSON_AddArrayToObject(rtcr, "shape"));
    for (size_t i = 0; ok && a->has_shape && i < a->n_shape; i++) {
        cJSON *pt = cJSON_CreateObject();
        ok = pt && cJSON_AddItemToArray(shape, pt) &&
             cJSON_AddNumberToObject(pt, "utilization", (double)a->shape[i].utilization) &&
             cJSON_AddNumberToObject(pt, "score", (double)a->shape[i].score);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int default_args(const cJSON *in, cJSON **out, char *err, size_t errlen)
{
    fit_args a;
    int rc = parse_args(in, &a, err, errlen);

    *out = NULL;
    if (rc != KUBE_OK)
        return rc;
    *out = args_json(&a);
    args_free(&a);
    return *out ? KUBE_OK : KUBE_ENOMEM;
}

/* ------------------------------------------------------------------ */
/* Scoring strategies                                                  */
/* ------------------------------------------------------------------ */

static int64_t least_requested_score(int64_t requested, int64_t capacity)
{
    if (capacity == 0 || requested > capacity)
        return 0;
    return plugin_mul_wrap(capacity - requested, FW_MAX_NODE_SCORE) / capacity;
}

static int64_t most_requested_score(int64_t requested, int64_t capacity)
{
    if (capacity == 0)
        return 0;
    if (requested > capacity)
        requested = capacity; /* pods without requests count minimums */
    return plugin_mul_wrap(requested, FW_MAX_NODE_SCORE) / capacity;
}

/* The weighted mean (integer division) of per-resource scores. */
static int64_t weighted_score(const plugin_res_scorer *s, const int64_t *requested,
                              const int64_t *allocatable, int64_t (*one)(int64_t, int64_t))
{
    int64_t node_score = 0, weight_sum = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (allocatable[i] == 0)
            continue;
        node_score += one(requested[i], allocatable[i]) * s->resources[i].weight;
        weight_sum += s->resources[i].weight;
    }
    return weight_sum ? node_score / weight_sum : 0;
}

static int64_t least_allocated(const plugin_res_scorer *s, const int64_t *requested,
                               const int64_t *allocatable)
{
    return weighted_score(s, requested, allocatable, least_requested_score);
}

static int64_t most_allocated(const plugin_res_scorer *s, const int64_t *requested,
                              const int64_t *allocatable)
{
    return weighted_score(s, requested, allocatable, most_requested_score);
}

/* helper.BuildBrokenLinearFunction evaluated at p. */
static int64_t broken_linear(const plugin_shape_point *shape, size_t n, int64_t p)
{
    for (size_t i = 0; i < n; i++) {
        if (p > shape[i].utilization)
            continue;
        if (i == 0)
            return shape[0].score;
        return shape[i - 1].score + (shape[i].score - shape[i - 1].score) *
                                        (p - shape[i - 1].utilization) /
                                        (shape[i].utilization - shape[i - 1].utilization);
    }
    return shape[n - 1].score;
}

static int64_t ratio_resource_score(const plugin_res_scorer *s, int64_t requested, int64_t capacity)
{
    if (capacity == 0 || requested > capacity)
        return broken_linear(s->shape, s->n_shape, MAX_UTILIZATION);
    return broken_linear(s->shape, s->n_shape,
                         plugin_mul_wrap(requested, MAX_UTILIZATION) / capacity);
}

/* Resources scoring 0 are left out of the mean; the mean is rounded. */
static int64_t requested_to_capacity_ratio(const plugin_res_scorer *s, const int64_t *requested,
                                           const int64_t *allocatable)
{
    int64_t node_score = 0, weight_sum = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (allocatable[i] == 0)
            continue;
        int64_t rs = ratio_resource_score(s, requested[i], allocatable[i]);
        if (rs > 0) {
            node_score += rs * s->resources[i].weight;
            weight_sum += s->resources[i].weight;
        }
    }
    if (weight_sum == 0)
        return 0;
    return (int64_t)round((double)node_score / (double)weight_sum);
}

static const plugin_res_score_fn strategy_fns[N_STRATEGIES] = {least_allocated, most_allocated,
                                                               requested_to_capacity_ratio};

/* ------------------------------------------------------------------ */
/* Plugin                                                              */
/* ------------------------------------------------------------------ */

static void destroy(void *self)
{
    fit *f = self;
    if (!f)
        return;
    args_free(&f->args);
    plugin_res_scorer_free(&f->scorer);
    free(f);
}

/* The scorer of the strategy: resources copied, shape scaled to 0..100. */
static int build_scorer(fit *f)
{
    const fit_args *a = &f->args;
    plugin_res_scorer *s = &f->scorer;

    s->fn = strategy_fns[a->type];
    s->use_requested = 0;
    s->resources = calloc(a->n_resources ? a->n_resources : 1, sizeof(*s->resources));
    if (!s->resources)
        return KUBE_ENOMEM;
    memcpy(s->resources, a->resources, a->n_resources * sizeof(*s->resources));
    s->n = a->n_resources;
    if (a->type != REQUESTED_TO_CAPACITY_RATIO)
        return KUBE_OK;
    s->shape = calloc(a->n_shape, sizeof(*s->shape));
    if (!s->shape)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < a->n_shape; i++) {
        s->shape[i].utilization = a->shape[i].utilization;
        s->shape[i].score = a->shape[i].score * (FW_MAX_NODE_SCORE / MAX_CUSTOM_PRIORITY_SCORE);
    }
    s->n_shape = a->n_shape;
    return KUBE_OK;
}

static int create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                  size_t errlen)
{
    fit *f = calloc(1, sizeof(*f));
    int rc;

    *self = NULL;
    if (!f)
        return KUBE_ENOMEM;
    if ((rc = parse_args(args, &f->args, err, errlen)) != KUBE_OK) {
        free(f);
        return rc;
    }
    if ((rc = build_scorer(f)) != KUBE_OK) {
        destroy(f);
        return rc;
    }
    *self = f;
    return KUBE_OK;
}

/* What Filter checks: the pod's request without the resources it does not
 * need to check. Scalar names are interned, values > 0. */
typedef struct pre_filter_state {
    int64_t milli_cpu, memory, ephemeral_storage;
    size_t n;
    fw_scalar scalars[];
} pre_filter_state;

static size_t state_size(size_t n)
{
    return sizeof(pre_filter_state) + n * sizeof(fw_scalar);
}

static int has_string(char *const *v, size_t n, const char *s, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(v[i]) == len && strncmp(v[i], s, len) == 0)
            return 1;
    return 0;
}

/* An extended resource in ignoredResources, or whose domain (the part
 * before '/') is in ignoredResourceGroups. */
static int ignored(const fit_args *a, const char *name)
{
    if (!kube_is_extended_resource_name(name))
        return 0;
    return has_string(a->ignored, a->n_ignored, name, strlen(name)) ||
           (a->n_groups && has_string(a->groups, a->n_groups, name, strcspn(name, "/")));
}

static fw_status *pre_filter(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                             fw_pre_filter_result **result)
{
    const fit *f = self;
    const fw_resource *req = &pod->request;
    pre_filter_state *s;

    /* v1.28 with the SidecarContainers feature gate off (its default). */
    if (pod->pod->has_restartable_init_container)
        return fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                             "Pod has a restartable init container and the SidecarContainers "
                             "feature is disabled");
    s = fw_flat_state_alloc(state_size(req->n_scalars));
    if (!s)
        return fw_status_error(KUBE_ENOMEM, NULL);
    s->milli_cpu = req->milli_cpu;
    s->memory = req->memory;
    s->ephemeral_storage = req->ephemeral_storage;
    s->n = 0;
    for (uint32_t i = 0; i < req->n_scalars; i++)
        if (req->scalars[i].value != 0 && !ignored(&f->args, req->scalars[i].name))
            s->scalars[s->n++] = req->scalars[i];
    int rc = fw_cycle_state_write(cs, PRE_FILTER_KEY, s, &fw_flat_state_ops);
    return rc == KUBE_OK ? NULL : fw_status_error(rc, NULL);
}

/* A request fitsRequest checks: the pod's or what PreFilter kept of it. */
typedef struct fit_request {
    int64_t milli_cpu, memory, ephemeral_storage;
    const fw_scalar *scalars; /* borrowed; a value <= 0 asks for nothing */
    size_t n;
} fit_request;

/* Told each resource a node lacks ("pods" when it is full); returns 0 to
 * stop at that one. */
typedef int (*lack_fn)(void *ud, const char *resource);

static int exceeds(int64_t want, int64_t allocatable, int64_t requested)
{
    return want > 0 && want > allocatable - requested;
}

/* fitsRequest: calls lack for each resource ni has too little of for r,
 * in upstream's order, until lack returns 0. */
static inline void fits_request(const fit_request *r, const fw_node_info *ni, lack_fn lack,
                                void *ud)
{
    const fw_resource *alloc = &ni->allocatable, *used = &ni->requested;

    if ((int64_t)ni->n_pods + 1 > alloc->allowed_pod_number && !lack(ud, "pods"))
        return;
    if (exceeds(r->milli_cpu, alloc->milli_cpu, used->milli_cpu) && !lack(ud, "cpu"))
        return;
    if (exceeds(r->memory, alloc->memory, used->memory) && !lack(ud, "memory"))
        return;
    if (exceeds(r->ephemeral_storage, alloc->ephemeral_storage, used->ephemeral_storage) &&
        !lack(ud, "ephemeral-storage"))
        return;
    for (size_t i = 0; i < r->n; i++) {
        const fw_scalar *sc = &r->scalars[i];
        if (exceeds(sc->value, fw_resource_scalar(alloc, sc->name),
                    fw_resource_scalar(used, sc->name)) &&
            !lack(ud, sc->name))
            return;
    }
}

/* Adds the reason for resource to *(fw_status **)ud (created
 * Unschedulable on the first reason). */
static int add_reason(void *ud, const char *resource)
{
    fw_status **st = ud;
    char reason[300];

    if (strcmp(resource, "pods") == 0)
        snprintf(reason, sizeof(reason), "Too many pods");
    else
        snprintf(reason, sizeof(reason), "Insufficient %s", resource);
    if (!*st) {
        *st = fw_status_new(FW_UNSCHEDULABLE, reason);
        return 1;
    }
    if ((*st)->code == FW_UNSCHEDULABLE && fw_status_add_reason(*st, reason) != KUBE_OK) {
        fw_status_free(*st);
        *st = fw_status_error(KUBE_ENOMEM, NULL);
    }
    return 1;
}

static fw_status *filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *ni)
{
    const pre_filter_state *s = fw_cycle_state_read_static(cs, PRE_FILTER_KEY);
    fw_status *st = NULL;

    if (!s)
        return fw_status_error(KUBE_ENOTFOUND, "error reading \"%s\" from cycleState: not found",
                               PRE_FILTER_KEY);
    fit_request r = {s->milli_cpu, s->memory, s->ephemeral_storage, s->scalars, s->n};
    fits_request(&r, ni, add_reason, &st);
    return st;
}

static int no_fit(void *ud, const char *resource)
{
    *(int *)ud = 0;
    return 0;
}

int plugin_node_resources_fits(const fw_pod_info *pod, const fw_node_info *ni)
{
    const fw_resource *req = &pod->request;
    fit_request r = {req->milli_cpu, req->memory, req->ephemeral_storage, req->scalars,
                     req->n_scalars};
    int fits = 1;

    fits_request(&r, ni, no_fit, &fits);
    return fits;
}

static fw_status *pre_score(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                            const fw_node_info *const *nodes, size_t n)
{
    const fit *f = self;
    return plugin_res_pre_score(&f->scorer, cs, PRE_SCORE_KEY, pod);
}

static fw_status *score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                        const fw_node_info *ni, int64_t *out)
{
    const fit *f = self;
    return plugin_res_score_node(&f->scorer, cs, PRE_SCORE_KEY, pod, ni, out);
}

static fw_status *score_nodes(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                              const fw_node_info *const *nodes, size_t n, fw_node_score *scores)
{
    const fit *f = self;
    return plugin_res_score_nodes(&f->scorer, cs, PRE_SCORE_KEY, pod, nodes, n, scores);
}

/* Only a pod leaving or a node appearing or changing frees resources
 * (InPlacePodVerticalScaling, which adds pod updates, is off in v1.28). */
static const fw_cluster_event_with_hint events[] = {
    {{FW_GVK_POD, FW_ACT_DELETE, ""}, NULL},
    {{FW_GVK_NODE, FW_ACT_ADD | FW_ACT_UPDATE, ""}, NULL},
};

PLUGIN_EVENTS_TO_REGISTER(events)

const fw_plugin_desc plugin_node_resources_fit = {
    .name = "NodeResourcesFit",
    .default_args = default_args,
    .create = create,
    .destroy = destroy,
    .pre_filter = pre_filter,
    .filter = filter,
    .pre_score = pre_score,
    .score = score,
    .score_nodes = score_nodes,
    .events_to_register = events_to_register,
};
