/*
 * scheduler/plugins/noderesources/resource_allocation.c - the resource allocation scorer
 * shared by NodeResourcesFit and NodeResourcesBalancedAllocation.
 */
#include "plugins/noderesources/resource_allocation.h"

#include <stdlib.h>
#include <string.h>

#include "kube/codec/intern.h"
#include "kube/util/errors.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "plugins/helper.h"

/* Fills spec for a resource name (interned here) and weight. */
static int spec_init(plugin_res_spec *spec, const char *name, int64_t weight)
{
    spec->name = kube_intern_name(name);
    if (!spec->name)
        return KUBE_ENOMEM;
    spec->weight = weight;
    if (strcmp(name, "cpu") == 0)
        spec->kind = PLUGIN_RES_CPU;
    else if (strcmp(name, "memory") == 0)
        spec->kind = PLUGIN_RES_MEMORY;
    else if (strcmp(name, "ephemeral-storage") == 0)
        spec->kind = PLUGIN_RES_EPHEMERAL_STORAGE;
    else if (kube_is_scalar_resource_name(name))
        spec->kind = PLUGIN_RES_SCALAR;
    else
        spec->kind = PLUGIN_RES_OTHER;
    return KUBE_OK;
}

int plugin_res_specs_default(plugin_res_spec **out, size_t *n)
{
    *out = calloc(2, sizeof(**out));
    if (!*out)
        return KUBE_ENOMEM;
    *n = 2;
    if (spec_init(&(*out)[0], "cpu", 1) != KUBE_OK || spec_init(&(*out)[1], "memory", 1) != KUBE_OK)
        return KUBE_ENOMEM;
    return KUBE_OK;
}

int plugin_res_specs_parse(const cJSON *arr, const char *path, plugin_res_spec **out, size_t *n,
                           plugin_field_errs *e)
{
    static const char *const known[] = {"name", "weight", NULL};
    size_t cap = (size_t)cJSON_GetArraySize(arr);
    const cJSON *it;
    char p[256];
    long i = 0;

    if (cap == 0)
        return plugin_res_specs_default(out, n);
    *out = calloc(cap, sizeof(**out));
    if (!*out)
        return KUBE_ENOMEM;
    cJSON_ArrayForEach(it, arr)
    {
        const char *name = "";
        int64_t weight = 0;
        plugin_args_path(p, sizeof(p), path, NULL, i++);
        if (!cJSON_IsObject(it)) {
            plugin_field_errs_add(e, "%s: expected an object", p);
            continue;
        }
        plugin_args_unknown_fields(it, p, known, e);
        plugin_args_str(it, p, "name", "", &name, e);
        plugin_args_int(it, p, "weight", INT64_MIN, INT64_MAX, 0, &weight, e);
        if (spec_init(&(*out)[(*n)++], name, weight ? weight : 1))
            return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

void plugin_res_scorer_free(plugin_res_scorer *s)
{
    if (!s)
        return;
    free(s->resources);
    free(s->shape);
    memset(s, 0, sizeof(*s));
}

/* calculatePodResourceRequest for one resource. Resources a node never
 * offers (PLUGIN_RES_OTHER) are left out whatever the pod asks. */
static int64_t pod_request_of(const plugin_res_scorer *s, const fw_pod_info *pod,
                              const plugin_res_spec *r)
{
    switch (r->kind) {
    case PLUGIN_RES_CPU:
        return s->use_requested ? pod->request.milli_cpu : pod->pod->score_milli_cpu;
    case PLUGIN_RES_MEMORY:
        return s->use_requested ? pod->request.memory : pod->pod->score_memory;
    case PLUGIN_RES_EPHEMERAL_STORAGE:
        return pod->request.ephemeral_storage;
    case PLUGIN_RES_SCALAR:
        return fw_resource_scalar(&pod->request, r->name);
    default:
        return 0;
    }
}

static void pod_requests(const plugin_res_scorer *s, const fw_pod_info *pod, int64_t *out)
{
    for (size_t i = 0; i < s->n; i++)
        out[i] = pod_request_of(s, pod, &s->resources[i]);
}

/* calculateResourceAllocatableRequest: (allocatable, requested + pod). */
static void alloc_request(const plugin_res_scorer *s, const fw_node_info *ni,
                          const plugin_res_spec *r, int64_t pod_req, int64_t *alloc, int64_t *req)
{
    int64_t req_cpu = s->use_requested ? ni->requested.milli_cpu : ni->non_zero_requested.milli_cpu;
    int64_t req_mem = s->use_requested ? ni->requested.memory : ni->non_zero_requested.memory;

    *alloc = *req = 0;
    if (pod_req == 0 && r->kind == PLUGIN_RES_SCALAR)
        return; /* a scalar the pod does not request is not scored */
    switch (r->kind) {
    case PLUGIN_RES_CPU:
        *alloc = ni->allocatable.milli_cpu;
        *req = req_cpu + pod_req;
        break;
    case PLUGIN_RES_MEMORY:
        *alloc = ni->allocatable.memory;
        *req = req_mem + pod_req;
        break;
    case PLUGIN_RES_EPHEMERAL_STORAGE:
        *alloc = ni->allocatable.ephemeral_storage;
        *req = ni->requested.ephemeral_storage + pod_req;
        break;
    case PLUGIN_RES_SCALAR:
        *alloc = fw_resource_scalar(&ni->allocatable, r->name);
        if (*alloc)
            *req = fw_resource_scalar(&ni->requested, r->name) + pod_req;
        break;
    default:
        break;
    }
}

typedef struct pod_requests_state {
    size_t n;
    int64_t req[];
} pod_requests_state;

static size_t state_size(size_t n)
{
    return sizeof(pod_requests_state) + n * sizeof(int64_t);
}

fw_status *plugin_res_pre_score(const plugin_res_scorer *s, fw_cycle_state *cs, const char *key,
                                const fw_pod_info *pod)
{
    pod_requests_state *st = fw_flat_state_alloc(state_size(s->n));
    if (!st)
        return fw_status_error(KUBE_ENOMEM, NULL);
    st->n = s->n;
    pod_requests(s, pod, st->req);
    int rc = fw_cycle_state_write(cs, key, st, &fw_flat_state_ops);
    return rc == KUBE_OK ? NULL : fw_status_error(rc, NULL);
}

/* The pod's request of each resource of s: the PreScore state under key,
 * else computed into pod_req (s->n entries). */
static const int64_t *requests_of(const plugin_res_scorer *s, const fw_cycle_state *cs,
                                  const char *key, const fw_pod_info *pod, int64_t *pod_req)
{
    const pod_requests_state *st = fw_cycle_state_read_static(cs, key);

    if (st && st->n == s->n)
        return st->req;
    pod_requests(s, pod, pod_req);
    return pod_req;
}

/* The score of ni for requests reqs, with two arrays of s->n entries from
 * buf (2 * s->n int64). Inline: plugin_res_score_nodes runs it per node. */
static inline int64_t score_with(const plugin_res_scorer *s, const int64_t *reqs,
                                 const fw_node_info *ni, int64_t *buf)
{
    int64_t *requested = buf, *allocatable = buf + s->n;

    for (size_t i = 0; i < s->n; i++)
        alloc_request(s, ni, &s->resources[i], reqs[i], &allocatable[i], &requested[i]);
    return s->fn(s, requested, allocatable);
}

fw_status *plugin_res_score_node(const plugin_res_scorer *s, const fw_cycle_state *cs,
                                 const char *key, const fw_pod_info *pod, const fw_node_info *ni,
                                 int64_t *score)
{
    int64_t stack[3 * PLUGIN_RES_STACK];
    int64_t *buf = stack;

    *score = 0;
    if (!ni->node)
        return fw_status_new(FW_ERROR, "node not found");
    if (s->n == 0)
        return fw_status_new(FW_ERROR, "resources not found");
    if (s->n > PLUGIN_RES_STACK && !(buf = malloc(3 * s->n * sizeof(*buf))))
        return fw_status_error(KUBE_ENOMEM, NULL);
    *score = score_with(s, requests_of(s, cs, key, pod, buf + 2 * s->n), ni, buf);
    if (buf != stack)
        free(buf);
    return NULL;
}

fw_status *plugin_res_score_nodes(const plugin_res_scorer *s, const fw_cycle_state *cs,
                                  const char *key, const fw_pod_info *pod,
                                  const fw_node_info *const *nodes, size_t n, fw_node_score *scores)
{
    int64_t buf[3 * PLUGIN_RES_STACK];
    const int64_t *reqs;

    if (s->n == 0 || s->n > PLUGIN_RES_STACK)
        return fw_status_new(FW_ERROR, "scored node by node");
    reqs = requests_of(s, cs, key, pod, buf + 2 * s->n);
    for (size_t i = 0; i < n; i++) {
        if (!nodes[i]->node)
            return fw_status_new(FW_ERROR, "node not found");
        scores[i].score = score_with(s, reqs, nodes[i], buf);
    }
    return NULL;
}
