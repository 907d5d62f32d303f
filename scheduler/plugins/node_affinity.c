/*
 * scheduler/plugins/node_affinity.c - NodeAffinity (kube-scheduler v1.28
 * pkg/scheduler/framework/plugins/nodeaffinity).
 *
 * PreFilter: skips the plugin when neither the pod (nodeSelector,
 * requiredDuringSchedulingIgnoredDuringExecution) nor the args
 * (addedAffinity.required...) constrain nodes; otherwise, when every
 * required term names nodes through matchFields metadata.name In, returns
 * those nodes as the PreFilterResult (the union over terms of each term's
 * intersection; an empty union is "pod affinity terms conflict").
 * Filter: addedAffinity's required selector ("node(s) didn't match
 * scheduler-enforced node affinity"), then the pod's nodeSelector and
 * required terms ("node(s) didn't match Pod's node affinity/selector"),
 * both UnschedulableAndUnresolvable.
 * PreScore/Score: the sum of the weights of the preferred terms (the pod's
 * and addedAffinity's) the node matches; NormalizeScore scales to 0..100.
 *
 * Args (NodeAffinityArgs): addedAffinity, a v1.NodeAffinity; no defaults.
 * Validation reports selector errors with apimachinery's messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/codec/arena.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "kube/codec/selector.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"

#define ERR_REASON_POD "node(s) didn't match Pod's node affinity/selector"
#define ERR_REASON_ENFORCED "node(s) didn't match scheduler-enforced node affinity"
#define ERR_REASON_CONFLICT "pod affinity terms conflict"
#define ADDED_REQUIRED "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
#define ADDED_PREFERRED "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution"

typedef struct node_affinity {
    kube_arena arena;                         /* owns the decoded selectors */
    const kube_node_selector *added_required; /* NULL: none */
    kube_preferred_term *added_preferred;     /* terms with a weight and a requirement */
    size_t n_added_preferred;
} node_affinity;

/* ------------------------------------------------------------------ */
/* Args validation (nodeaffinity.NewNodeSelector / NewPreferredSchedulingTerms) */
/* ------------------------------------------------------------------ */

/* %#v of a []string: []string(nil) or []string{"a", "b"}. */
static void values_repr(const cJSON *values, kube_buf *b)
{
    const cJSON *it;
    int first = 1;

    if (!values) {
        kube_buf_puts(b, "[]string(nil)");
        return;
    }
    kube_buf_puts(b, "[]string{");
    cJSON_ArrayForEach(it, values)
    {
        kube_buf_printf(b, "%s\"%s\"", first ? "" : ", ",
                        cJSON_IsString(it) ? it->valuestring : "");
        first = 0;
    }
    kube_buf_puts(b, "}");
}

static void invalid_values(const char *p, const cJSON *values, const char *detail,
                           plugin_field_errs *e)
{
    kube_buf b = KUBE_BUF_INIT;
    values_repr(values, &b);
    plugin_field_errs_add(e, "%s.values: Invalid value: %s: %s", p, b.data ? b.data : "", detail);
    kube_buf_free(&b);
}

static int is_int64(const char *s)
{
    int64_t v;
    return kube_parse_int64(s, INT64_MIN, INT64_MAX, &v) == KUBE_OK;
}

/* labels.NewRequirement's checks for one matchExpressions entry. */
static void validate_label_requirement(const char *p, const char *key, const char *op,
                                       const cJSON *values, plugin_field_errs *e)
{
    int n = values ? cJSON_GetArraySize(values) : 0, i = 0;
    const cJSON *it;
    char msgs[2048];

    if (plugin_qualified_name_msgs(key, "; ", msgs, sizeof(msgs)))
        plugin_field_errs_add(e, "%s.key: Invalid value: \"%s\": %s", p, key, msgs);
    if ((!strcmp(op, "In") || !strcmp(op, "NotIn")) && n == 0)
        invalid_values(p, values, "for 'in', 'notin' operators, values set can't be empty", e);
    if ((!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) && n != 0)
        invalid_values(p, values, "values set must be empty for exists and does not exist", e);
    if (!strcmp(op, "Gt") || !strcmp(op, "Lt")) {
        if (n != 1)
            invalid_values(p, values, "for 'Gt', 'Lt' operators, exactly one value is required", e);
        cJSON_ArrayForEach(it, values)
        {
            if (!cJSON_IsString(it) || !is_int64(it->valuestring))
                plugin_field_errs_add(e,
                                      "%s.values[%d]: Invalid value: \"%s\": for 'Gt', 'Lt' "
                                      "operators, the value must be an integer",
                                      p, i, cJSON_IsString(it) ? it->valuestring : "");
            i++;
        }
    }
    i = 0;
    cJSON_ArrayForEach(it, values)
    {
        const char *v = cJSON_IsString(it) ? it->valuestring : "";
        if (plugin_label_value_msgs(v, "; ", msgs, sizeof(msgs)))
            plugin_field_errs_add(e, "%s.values[%d][%s]: Invalid value: \"%s\": %s", p, i, key, v,
                                  msgs);
        i++;
    }
}

static void validate_requirement(const cJSON *r, const char *p, int fields, plugin_field_errs *e)
{
    static const char *const label_ops[] = {"In", "NotIn", "Exists", "DoesNotExist",
                                            "Gt", "Lt",    NULL};
    static const char *const known[] = {"key", "operator", "values", NULL};
    const char *key = "", *op = "";
    const cJSON *values = NULL;
    size_t k = 0;

    if (!cJSON_IsObject(r)) {
        plugin_field_errs_add(e, "%s: expected an object", p);
        return;
    }
    plugin_args_unknown_fields(r, p, known, e);
    plugin_args_str(r, p, "key", "", &key, e);
    plugin_args_str(r, p, "operator", "", &op, e);
    plugin_args_array(r, p, "values", &values, e);
    if (fields) {
        if (strcmp(op, "In") != 0 && strcmp(op, "NotIn") != 0)
            plugin_field_errs_add(e,
                                  "%s.operator: Unsupported value: \"%s\": supported values: "
                                  "\"In\", \"NotIn\"",
                                  p, op);
        else if (!values || cJSON_GetArraySize(values) != 1)
            invalid_values(p, values, "must have one element", e);
        return;
    }
    while (label_ops[k] && strcmp(label_ops[k], op) != 0)
        k++;
    if (!label_ops[k])
        plugin_field_errs_add(e,
                              "%s.operator: Unsupported value: \"%s\": supported values: "
                              "\"DoesNotExist\", \"Exists\", \"Gt\", \"In\", \"Lt\", \"NotIn\"",
                              p, op);
    else
        validate_label_requirement(p, key, op, values, e);
}

/* A term with neither matchExpressions nor matchFields selects nothing and
 * is not validated. Returns 1 when the term is empty. */
static int validate_term(const cJSON *t, const char *path, plugin_field_errs *e)
{
    static const char *const known[] = {"matchExpressions", "matchFields", NULL};
    static const char *const keys[] = {"matchExpressions", "matchFields"};
    const cJSON *arr[2], *it;
    char p[320], rp[360];
    int empty = 1;

    if (!plugin_args_object(t, path, known, e))
        return 1;
    for (int k = 0; k < 2; k++)
        if (plugin_args_array(t, path, keys[k], &arr[k], e) && arr[k] &&
            cJSON_GetArraySize(arr[k]) > 0)
            empty = 0;
    for (int k = 0; !empty && k < 2; k++) {
        long i = 0;
        plugin_args_path(p, sizeof(p), path, keys[k], 0);
        cJSON_ArrayForEach(it, arr[k])
        {
            plugin_args_path(rp, sizeof(rp), p, NULL, i++);
            validate_requirement(it, rp, k == 1, e);
        }
    }
    return empty;
}

static void validate_required(const cJSON *ns, plugin_field_errs *e)
{
    static const char *const known[] = {"nodeSelectorTerms", NULL};
    const cJSON *terms, *it;
    char p[320];
    long i = 0;

    if (!plugin_args_object(ns, ADDED_REQUIRED, known, e) ||
        !plugin_args_array(ns, ADDED_REQUIRED, "nodeSelectorTerms", &terms, e))
        return;
    cJSON_ArrayForEach(it, terms)
    {
        plugin_args_path(p, sizeof(p), ADDED_REQUIRED ".nodeSelectorTerms", NULL, i++);
        validate_term(it, p, e);
    }
}

static void validate_preferred(const cJSON *arr, plugin_field_errs *e)
{
    static const char *const known[] = {"weight", "preference", NULL};
    const cJSON *it;
    char p[320];
    long i = 0;

    cJSON_ArrayForEach(it, arr)
    {
        int64_t weight = 0;
        plugin_args_path(p, sizeof(p), ADDED_PREFERRED, NULL, i++);
        if (!cJSON_IsObject(it)) {
            plugin_field_errs_add(e, "%s: expected an object", p);
            continue;
        }
        plugin_args_unknown_fields(it, p, known, e);
        plugin_args_int(it, p, "weight", INT32_MIN, INT32_MAX, 0, &weight, e);
        if (weight != 0)
            validate_term(cJSON_GetObjectItemCaseSensitive(it, "preference"), p, e);
    }
}

/* ValidateNodeAffinityArgs plus strict decoding of the known fields. */
static void validate_args(const cJSON *in, plugin_field_errs *e)
{
    static const char *const known[] = {"addedAffinity", NULL};
    static const char *const known_aff[] = {"requiredDuringSchedulingIgnoredDuringExecution",
                                            "preferredDuringSchedulingIgnoredDuringExecution",
                                            NULL};
    const cJSON *aff, *req, *pref = NULL;

    if (!plugin_args_object(in, "", known, e))
        return;
    aff = cJSON_GetObjectItemCaseSensitive(in, "addedAffinity");
    if (!plugin_args_object(aff, "addedAffinity", known_aff, e))
        return;
    req = cJSON_GetObjectItemCaseSensitive(aff, "requiredDuringSchedulingIgnoredDuringExecution");
    if (req && !cJSON_IsNull(req))
        validate_required(req, e);
    if (plugin_args_array(aff, "addedAffinity", "preferredDuringSchedulingIgnoredDuringExecution",
                          &pref, e) &&
        pref)
        validate_preferred(pref, e);
}

static int default_args(const cJSON *in, cJSON **out, char *err, size_t errlen)
{
    plugin_field_errs e = PLUGIN_FIELD_ERRS_INIT;
    int rc;

    *out = NULL;
    validate_args(in, &e);
    if ((rc = plugin_field_errs_finish(&e, err, errlen)) != KUBE_OK)
        return rc;
    *out = cJSON_IsObject(in) ? cJSON_Duplicate(in, 1) : cJSON_CreateObject();
    return *out ? KUBE_OK : KUBE_ENOMEM;
}

/* ------------------------------------------------------------------ */
/* Plugin                                                              */
/* ------------------------------------------------------------------ */

static int term_is_empty(const kube_node_selector_term *t)
{
    return t->n_match_expressions == 0 && t->n_match_fields == 0;
}

/* Keeps the added preferred terms that count: a weight and a requirement. */
static int decode_added_preferred(node_affinity *pl, const cJSON *arr)
{
    size_t cap = (size_t)cJSON_GetArraySize(arr);
    const cJSON *it;

    if (cap == 0)
        return KUBE_OK;
    pl->added_preferred = kube_arena_alloc(&pl->arena, cap * sizeof(kube_preferred_term));
    if (!pl->added_preferred)
        return KUBE_ENOMEM;
    cJSON_ArrayForEach(it, arr)
    {
        kube_preferred_term *t = &pl->added_preferred[pl->n_added_preferred];
        int rc = kube_json_int32(it, "weight", 0, &t->weight);
        if (rc == KUBE_OK)
            rc = kube_node_selector_term_decode(kube_json_get(it, "preference"), &pl->arena,
                                                &t->preference);
        if (rc != KUBE_OK)
            return rc;
        if (t->weight != 0 && !term_is_empty(&t->preference))
            pl->n_added_preferred++;
    }
    return KUBE_OK;
}

static int decode_added(node_affinity *pl, const cJSON *args)
{
    const cJSON *aff = kube_json_get(args, "addedAffinity");
    int rc;

    if (!aff)
        return KUBE_OK;
    rc = kube_node_selector_decode(
        kube_json_get(aff, "requiredDuringSchedulingIgnoredDuringExecution"), &pl->arena,
        &pl->added_required);
    if (rc != KUBE_OK)
        return rc;
    const cJSON *pref = kube_json_get(aff, "preferredDuringSchedulingIgnoredDuringExecution");
    return pref ? decode_added_preferred(pl, pref) : KUBE_OK;
}

static void destroy(void *self)
{
    node_affinity *pl = self;
    if (!pl)
        return;
    kube_arena_release(&pl->arena);
    free(pl);
}

static int create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                  size_t errlen)
{
    plugin_field_errs e = PLUGIN_FIELD_ERRS_INIT;
    node_affinity *pl;
    int rc;

    *self = NULL;
    validate_args(args, &e);
    if ((rc = plugin_field_errs_finish(&e, err, errlen)) != KUBE_OK)
        return rc;
    if (!(pl = calloc(1, sizeof(*pl))))
        return KUBE_ENOMEM;
    kube_arena_init(&pl->arena, NULL, 0);
    if (cJSON_IsObject(args) && (rc = decode_added(pl, args)) != KUBE_OK) {
        snprintf(err, errlen, "parsing addedAffinity: %s", kube_strerror(rc));
        destroy(pl);
        return rc == KUBE_ENOMEM ? rc : KUBE_ECONFIG;
    }
    *self = pl;
    return KUBE_OK;
}

/* ---- PreFilter: node names from matchFields ---- */

static int is_name_in(const kube_requirement *r)
{
    return strcmp(r->key, "metadata.name") == 0 && r->op == KUBE_SEL_IN;
}

static int contains(const char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0)
            return 1;
    return 0;
}

/* The names one term allows (the intersection of its metadata.name In
 * requirements) into out; returns 0 when the term has none (any node). */
static int term_node_names(const kube_node_selector_term *t, const char **out, size_t *n)
{
    int set = 0;

    *n = 0;
    for (size_t i = 0; i < t->n_match_fields; i++) {
        const kube_requirement *r = &t->match_fields[i];
        if (!is_name_in(r))
            continue;
        if (!set) {
            for (size_t j = 0; j < r->n_values; j++)
                out[(*n)++] = r->values[j];
            set = 1;
            continue;
        }
        size_t w = 0;
        for (size_t j = 0; j < *n; j++)
            if (contains(r->values, r->n_values, out[j]))
                out[w++] = out[j];
        *n = w;
    }
    return set;
}

static size_t count_name_values(const kube_node_selector *ns)
{
    size_t total = 0;
    for (size_t t = 0; t < ns->n_terms; t++)
        for (size_t i = 0; i < ns->terms[t].n_match_fields; i++)
            total += ns->terms[t].match_fields[i].n_values;
    return total;
}

/* The PreFilterResult of the required terms: *result stays NULL (all
 * nodes) when a term does not restrict node names. */
static fw_status *node_names_result(const kube_node_selector *ns, fw_pre_filter_result **result)
{
    size_t cap = count_name_values(ns), n_all = 0, n_term;
    const char **all = calloc(cap ? 2 * cap : 1, sizeof(*all)), **term = all + cap;
    fw_status *st = NULL;

    if (!all)
        return fw_status_error(KUBE_ENOMEM, NULL);
    for (size_t t = 0; t < ns->n_terms; t++) {
        if (!term_node_names(&ns->terms[t], term, &n_term)) {
            free(all);
            return NULL;
        }
        memmove(all + n_all, term, n_term * sizeof(*all));
        n_all += n_term;
    }
    if (n_all == 0)
        st = fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT);
    else if (!(*result = fw_pre_filter_result_new(all, n_all)))
        st = fw_status_error(KUBE_ENOMEM, NULL);
    free(all);
    return st;
}

static fw_status *pre_filter(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                             fw_pre_filter_result **result)
{
    const node_affinity *pl = self;
    const kube_pod *p = pod->pod;
    const kube_node_selector *required = p->affinity ? p->affinity->node_required : NULL;

    if (!required && !pl->added_required && p->n_node_selector == 0)
        return fw_status_new(FW_SKIP, NULL);
    if (!required || required->n_terms == 0)
        return NULL;
    return node_names_result(required, result);
}

/* ---- Filter ---- */

static int node_selector_matches(const kube_pod *p, const kube_node *node)
{
    for (size_t i = 0; i < p->n_node_selector; i++) {
        const char *v = kube_meta_label(&node->base.meta, p->node_selector[i].key);
        if (!v || strcmp(v, p->node_selector[i].value) != 0)
            return 0;
    }
    return 1;
}

static int selector_matches(const kube_node_selector *ns, const kube_node *node)
{
    return kube_node_selector_matches(ns, node->base.meta.name, node->base.meta.labels,
                                      node->base.meta.n_labels);
}

int plugin_node_affinity_required_matches(const kube_pod *p, const kube_node *node)
{
    const kube_node_selector *required = p->affinity ? p->affinity->node_required : NULL;

    return node_selector_matches(p, node) && (!required || selector_matches(required, node));
}

static fw_status *filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *ni)
{
    const node_affinity *pl = self;
    const kube_pod *p = pod->pod;
    const kube_node *node = ni->node;

    if (!node)
        return fw_status_new(FW_ERROR, "node not found");
    if (pl->added_required && !selector_matches(pl->added_required, node))
        return fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED);
    if (!plugin_node_affinity_required_matches(p, node))
        return fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD);
    return NULL;
}

/* ---- PreScore / Score ---- */

static const kube_preferred_term *pod_preferred(const kube_pod *p, size_t *n)
{
    *n = p->affinity ? p->affinity->n_node_preferred : 0;
    return *n ? p->affinity->node_preferred : NULL;
}

/* NewPreferredSchedulingTerms' parse check: the first counted term that
 * does not parse, or -1. */
static long invalid_preferred(const kube_preferred_term *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].weight != 0 && !term_is_empty(&t[i].preference) && !t[i].preference.valid)
            return (long)i;
    return -1;
}

static fw_status *invalid_term_status(long i)
{
    return fw_status_error(KUBE_EINVAL, "[%ld]: invalid node selector term", i);
}

static fw_status *pre_score(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                            const fw_node_info *const *nodes, size_t n)
{
    const node_affinity *pl = self;
    size_t n_pref;
    const kube_preferred_term *pref = pod_preferred(pod->pod, &n_pref);
    long bad;

    if (n == 0)
        return NULL;
    if ((bad = invalid_preferred(pref, n_pref)) >= 0)
        return invalid_term_status(bad);
    if (n_pref == 0 && pl->n_added_preferred == 0)
        return fw_status_new(FW_SKIP, NULL);
    return NULL;
}

/* PreferredSchedulingTerms.Score: the weights of the matching terms. */
static int64_t preferred_score(const kube_preferred_term *t, size_t n, const kube_node *node)
{
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        if (t[i].weight != 0 &&
            kube_node_selector_term_matches(&t[i].preference, node->base.meta.name,
                                            node->base.meta.labels, node->base.meta.n_labels))
            sum += t[i].weight;
    return sum;
}

static fw_status *score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                        const fw_node_info *ni, int64_t *out)
{
    const node_affinity *pl = self;
    size_t n_pref;
    const kube_preferred_term *pref = pod_preferred(pod->pod, &n_pref);
    long bad;

    *out = 0;
    if (!ni->node)
        return fw_status_error(KUBE_ENOTFOUND, "getting node %s from Snapshot: not found",
                               ni->name ? ni->name : "");
    if ((bad = invalid_preferred(pref, n_pref)) >= 0)
        return invalid_term_status(bad);
    *out = preferred_score(pl->added_preferred, pl->n_added_preferred, ni->node) +
           preferred_score(pref, n_pref, ni->node);
    return NULL;
}

static fw_status *normalize_score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                                  fw_node_score *scores, size_t n)
{
    plugin_default_normalize_score(FW_MAX_NODE_SCORE, 0, scores, n);
    return NULL;
}

static const fw_cluster_event_with_hint events[] = {
    {{FW_GVK_NODE, FW_ACT_ADD | FW_ACT_UPDATE, ""}, NULL},
};

PLUGIN_EVENTS_TO_REGISTER(events)

const fw_plugin_desc plugin_node_affinity = {
    .name = "NodeAffinity",
    .default_args = default_args,
    .create = create,
    .destroy = destroy,
    .pre_filter = pre_filter,
    .filter = filter,
    .pre_score = pre_score,
    .score = score,
    .normalize_score = normalize_score,
    .events_to_register = events_to_register,
};
