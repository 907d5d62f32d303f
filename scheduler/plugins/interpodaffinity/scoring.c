/*
 * scheduler/plugins/interpodaffinity/scoring.c - InterPodAffinity's
 * PreScore, Score and NormalizeScore (upstream scoring.go).
 */
#include "plugins/interpodaffinity/internal.h"

/* Scoring                                                             */
/* ------------------------------------------------------------------ */

/* Read-only once PreScore wrote it: clones share it (refcounted). */
typedef struct pre_score_state {
    fw_shared shared; /* first: the clones share the state (fw_shared_ops) */
    incoming *in;
    plugin_tp_table scores; /* summed weights per pair */
    const char **keys;      /* topology keys with an entry */
    size_t n_keys, cap_keys;
} pre_score_state;

/* Frees the state once its last reference is gone (fw_shared.release). */
static void pre_score_state_release(void *data)
{
    pre_score_state *s = data;
    plugin_tp_free(&s->scores);
    free(s->keys);
    ipa_incoming_unref(s->in);
    free(s);
}

static int add_key(pre_score_state *s, const char *key)
{
    return kube_array_add_distinct(&s->keys, &s->n_keys, &s->cap_keys, key);
}

/* scoreMap.processTerm: weight * multiplier on the node's pair of the
 * term's key when the term matches pod. `existing` says whose term it is
 * (an existing pod's terms match with the incoming pod's namespace
 * labels). */
static int process_term(pre_score_state *s, const fw_affinity_term *t, int32_t weight,
                        const kube_pod *pod, int existing, const kube_node *node, int32_t mult)
{
    int match =
        existing ? ipa_existing_term_matches_incoming(t, s->in) : ipa_incoming_term_matches(t, pod);
    const char *v;
    int rc;

    if (!match || !(v = kube_meta_label(&node->base.meta, t->topology_key)))
        return KUBE_OK;
    if ((rc = add_key(s, t->topology_key)) != KUBE_OK)
        return rc;
    return plugin_tp_add(&s->scores, t->topology_key, v, (int64_t)(weight * mult), NULL, NULL);
}

static int process_weighted(pre_score_state *s, const fw_weighted_affinity_term *t, size_t n,
                            const kube_pod *pod, int existing, const kube_node *node, int32_t mult)
{
    int rc = KUBE_OK;
    for (size_t i = 0; rc == KUBE_OK && i < n; i++)
        rc = process_term(s, &t[i].term, t[i].weight, pod, existing, node, mult);
    return rc;
}

/* processExistingPod. */
static int process_existing_pod(const inter_pod_affinity *pl, pre_score_state *s,
                                const fw_pod_info *existing, const kube_node *node)
{
    const incoming *in = s->in;
    int rc;

    if (node->base.meta.n_labels == 0)
        return KUBE_OK;
    rc = process_weighted(s, in->pref, in->n_pref, existing->pod, 0, node, 1);
    if (rc == KUBE_OK)
        rc = process_weighted(s, in->pref_anti, in->n_pref_anti, existing->pod, 0, node, -1);
    for (size_t i = 0;
         rc == KUBE_OK && pl->hard_weight > 0 && i < existing->n_required_affinity_terms; i++)
        rc = process_term(s, &existing->required_affinity_terms[i], pl->hard_weight, NULL, 1, node,
                          1);
    if (rc == KUBE_OK)
        rc = process_weighted(s, existing->preferred_affinity_terms,
                              existing->n_preferred_affinity_terms, NULL, 1, node, 1);
    if (rc == KUBE_OK)
        rc = process_weighted(s, existing->preferred_anti_affinity_terms,
                              existing->n_preferred_anti_affinity_terms, NULL, 1, node, -1);
    return rc;
}

static int has_preferred_terms(const kube_pod *p)
{
    return p->affinity &&
           (p->affinity->pod_affinity.n_preferred || p->affinity->pod_anti_affinity.n_preferred);
}

static int score_all_nodes(const inter_pod_affinity *pl, pre_score_state *s, int all_pods)
{
    const fw_snapshot *snap = ipa_snapshot_of(pl);
    fw_node_info *const *nodes = all_pods ? snap->list : snap->have_pods_with_affinity;
    size_t n = all_pods ? snap->n_list : snap->n_have_pods_with_affinity;
    int rc = KUBE_OK;

    for (size_t i = 0; rc == KUBE_OK && i < n; i++) {
        const fw_node_info *ni = nodes[i];
        fw_pod_info *const *pods = all_pods ? ni->pods : ni->pods_with_affinity;
        size_t n_pods = all_pods ? ni->n_pods : ni->n_pods_with_affinity;
        for (size_t j = 0; ni->node && rc == KUBE_OK && j < n_pods; j++)
            rc = process_existing_pod(pl, s, pods[j], ni->node);
    }
    return rc;
}

fw_status *ipa_pre_score(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *const *nodes, size_t n)
{
    const inter_pod_affinity *pl = self;
    int has_constraints = has_preferred_terms(pod->pod);
    pre_score_state *s;
    int rc;

    if (n == 0)
        return fw_status_new(FW_SKIP, NULL);
    if (pl->ignore_preferred_of_existing && !has_constraints)
        return fw_status_new(FW_SKIP, NULL);
    if (pod->parse_error)
        return ipa_parse_error_status(FW_ERROR, "failed to parse pod");
    if (!(s = calloc(1, sizeof(*s))))
        return fw_status_error(KUBE_ENOMEM, NULL);
    fw_shared_init(&s->shared, pre_score_state_release);
    if ((rc = ipa_incoming_new(pl, pod, 1, &s->in)) != KUBE_OK ||
        (rc = score_all_nodes(pl, s, has_constraints)) != KUBE_OK) {
        fw_shared_unref(s);
        return fw_status_error(rc, NULL);
    }
    rc = fw_cycle_state_write(cs, PRE_SCORE_KEY, s, &fw_shared_ops);
    return rc == KUBE_OK ? NULL : fw_status_error(rc, NULL);
}

static fw_status *pre_score_not_found(void)
{
    return fw_status_error(KUBE_ENOTFOUND, "failed to read \"%s\" from cycleState: not found",
                           PRE_SCORE_KEY);
}

/* The sum of the topology scores of node's values of the keys s holds. */
static int64_t topology_score(const pre_score_state *s, const kube_node *node)
{
    int64_t sum = 0;

    for (size_t k = 0; k < s->n_keys; k++) {
        const char *v = kube_meta_label(&node->base.meta, s->keys[k]);
        if (v)
            sum += plugin_tp_count(&s->scores, s->keys[k], v);
    }
    return sum;
}

static fw_status *node_not_found(const fw_node_info *ni)
{
    return fw_status_error(KUBE_ENOTFOUND, "failed to get node %s from Snapshot: not found",
                           ni->name ? ni->name : "");
}

fw_status *ipa_score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                     const fw_node_info *ni, int64_t *out)
{
    const pre_score_state *s = fw_cycle_state_read_static(cs, PRE_SCORE_KEY);

    *out = 0;
    if (!ni->node)
        return node_not_found(ni);
    if (!s)
        return pre_score_not_found();
    *out = topology_score(s, ni->node);
    return NULL;
}

fw_status *ipa_score_nodes(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                           const fw_node_info *const *nodes, size_t n, fw_node_score *scores)
{
    const pre_score_state *s = fw_cycle_state_read_static(cs, PRE_SCORE_KEY);

    if (!s)
        return pre_score_not_found();
    for (size_t i = 0; i < n; i++) {
        if (!nodes[i]->node)
            return node_not_found(nodes[i]);
        scores[i].score = topology_score(s, nodes[i]->node);
    }
    return NULL;
}

fw_status *ipa_normalize_score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                               fw_node_score *scores, size_t n)
{
    const pre_score_state *s = fw_cycle_state_read_static(cs, PRE_SCORE_KEY);
    int64_t min = INT64_MAX, max = INT64_MIN;

    if (!s)
        return pre_score_not_found();
    if (s->n_keys == 0)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (scores[i].score > max)
            max = scores[i].score;
        if (scores[i].score < min)
            min = scores[i].score;
    }
    for (size_t i = 0; i < n; i++) {
        double f = 0;
        if (max - min > 0)
            f = (double)FW_MAX_NODE_SCORE * ((double)(scores[i].score - min) / (double)(max - min));
        scores[i].score = (int64_t)f;
    }
    return NULL;
}
