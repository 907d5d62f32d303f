/*
 * scheduler/plugins/noderesources/balanced_allocation.c -
 * NodeResourcesBalancedAllocation (kube-scheduler v1.28
 * pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go):
 * favours nodes whose resource usage fractions (requested / allocatable,
 * capped at 1, over NodeInfo.Requested plus the pod's PodRequests) are
 * close to each other: score = (1 - std) * 100, std being |f1 - f2| / 2 for
 * two resources and the population standard deviation for more.
 *
 * Args (NodeResourcesBalancedAllocationArgs): resources: [{name, weight}],
 * default cpu and memory; a weight of 0 defaults to 1 and any other weight
 * than 1 is rejected, as are duplicate names.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"
#include "plugins/noderesources/resource_allocation.h"

#define PRE_SCORE_KEY "PreScoreNodeResourcesBalancedAllocation"

typedef struct balanced_allocation {
    plugin_res_scorer scorer;
} balanced_allocation;

/* ------------------------------------------------------------------ */
/* Args                                                                */
/* ------------------------------------------------------------------ */

/* ValidateNodeResourcesBalancedAllocationArgs */
static void validate(const plugin_res_scorer *s, plugin_field_errs *e)
{
    for (size_t i = 0; i < s->n; i++) {
        for (size_t j = 0; j < i; j++)
            if (s->resources[j].name == s->resources[i].name) {
                plugin_field_errs_add(e, "resources[%zu].name: Duplicate value: \"%s\"", i,
                                      s->resources[i].name);
                break;
            }
        if (s->resources[i].weight != 1)
            plugin_field_errs_add(e, "resources[%zu].weight: Invalid value: %lld: must be 1", i,
                                  (long long)s->resources[i].weight);
    }
}

/* Decodes, defaults and validates in (NULL: defaults) into s's resources.
 * KUBE_OK, KUBE_ECONFIG (message in err) or KUBE_ENOMEM; s freed on error. */
static int parse_args(const cJSON *in, plugin_res_scorer *s, char *err, size_t errlen)
{
    static const char *const known[] = {"resources", NULL};
    plugin_field_errs e = PLUGIN_FIELD_ERRS_INIT;
    const cJSON *arr = NULL;
    int rc;

    memset(s, 0, sizeof(*s));
    if (plugin_args_object(in, "", known, &e))
        plugin_args_array(in, "", "resources", &arr, &e);
    rc = plugin_res_specs_parse(arr, "resources", &s->resources, &s->n, &e);
    if (rc == KUBE_OK) {
        validate(s, &e);
        rc = plugin_field_errs_finish(&e, err, errlen);
    } else
        plugin_field_errs_free(&e);
    if (rc != KUBE_OK)
        plugin_res_scorer_free(s);
    return rc;
}

static cJSON *args_json(const plugin_res_scorer *s)
{
    cJSON *o = cJSON_CreateObject(), *res = NULL;
    int ok = o && (res = cJSON_AddArrayToObject(o, "resources"));

    for (size_t i = 0; ok && i < s->n; i++) {
        cJSON *r = cJSON_CreateObject();
        ok = r && cJSON_AddItemToArray(res, r) &&
             cJSON_AddStringToObject(r, "name", s->resources[i].name) &&
             cJSON_AddNumberToObject(r, "weight", (double)s->resources[i].weight);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int default_args(const cJSON *in, cJSON **out, char *err, size_t errlen)
{
    plugin_res_scorer s;
    int rc = parse_args(in, &s, err, errlen);

    *out = NULL;
    if (rc != KUBE_OK)
        return rc;
    *out = args_json(&s);
    plugin_res_scorer_free(&s);
    return *out ? KUBE_OK : KUBE_ENOMEM;
}

/* ------------------------------------------------------------------ */
/* Scoring                                                             */
/* ------------------------------------------------------------------ */

static double fraction(int64_t requested, int64_t allocatable)
{
    double f = (double)requested / (double)allocatable;
    return f > 1 ? 1 : f;
}

/* balancedResourceScorer. The fractions are recomputed in the second pass
 * instead of being stored, with the same floating-point operations in the
 * same order as kube-scheduler. */
static int64_t balanced_resource_score(const plugin_res_scorer *s, const int64_t *requested,
                                       const int64_t *allocatable)
{
    double total = 0, first[2] = {0, 0}, std = 0;
    size_t count = 0;

    for (size_t i = 0; i < s->n; i++) {
        if (allocatable[i] == 0)
            continue;
        double f = fraction(requested[i], allocatable[i]);
        total += f;
        if (count < 2)
            first[count] = f;
        count++;
    }
    if (count == 2) {
        std = fabs((first[0] - first[1]) / 2);
    } else if (count > 2) {
        double mean = total / (double)count, sum = 0;
        for (size_t i = 0; i < s->n; i++) {
            if (allocatable[i] == 0)
                continue;
            double d = fraction(requested[i], allocatable[i]) - mean;
            sum = sum + d * d;
        }
        std = sqrt(sum / (double)count);
    }
    return (int64_t)((1 - std) * (double)FW_MAX_NODE_SCORE);
}

/* ------------------------------------------------------------------ */
/* Plugin                                                              */
/* ------------------------------------------------------------------ */

static void destroy(void *self)
{
    balanced_allocation *ba = self;
    if (!ba)
        return;
    plugin_res_scorer_free(&ba->scorer);
    free(ba);
}

static int create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                  size_t errlen)
{
    balanced_allocation *ba = calloc(1, sizeof(*ba));
    int rc;

    *self = NULL;
    if (!ba)
        return KUBE_ENOMEM;
    if ((rc = parse_args(args, &ba->scorer, err, errlen)) != KUBE_OK) {
        free(ba);
        return rc;
    }
    ba->scorer.use_requested = 1;
    ba->scorer.fn = balanced_resource_score;
    *self = ba;
    return KUBE_OK;
}

static fw_status *pre_score(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                            const fw_node_info *const *nodes, size_t n)
{
    const balanced_allocation *ba = self;
    return plugin_res_pre_score(&ba->scorer, cs, PRE_SCORE_KEY, pod);
}

static fw_status *score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                        const fw_node_info *ni, int64_t *out)
{
    const balanced_allocation *ba = self;
    return plugin_res_score_node(&ba->scorer, cs, PRE_SCORE_KEY, pod, ni, out);
}

static fw_status *score_nodes(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                              const fw_node_info *const *nodes, size_t n, fw_node_score *scores)
{
    const balanced_allocation *ba = self;
    return plugin_res_score_nodes(&ba->scorer, cs, PRE_SCORE_KEY, pod, nodes, n, scores);
}

const fw_plugin_desc plugin_node_resources_balanced_allocation = {
    .name = "NodeResourcesBalancedAllocation",
    .default_args = default_args,
    .create = create,
    .destroy = destroy,
    .pre_score = pre_score,
    .score = score,
    .score_nodes = score_nodes,
};
