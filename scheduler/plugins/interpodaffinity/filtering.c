/*
 * scheduler/plugins/interpodaffinity/filtering.c - InterPodAffinity's
 * PreFilter (the topology pairs of existing and incoming terms), its
 * AddPod/RemovePod and Filter (upstream filtering.go).
 */
#include "plugins/interpodaffinity/internal.h"

/* PreFilter state                                                     */
/* ------------------------------------------------------------------ */

typedef struct pre_filter_state {
    incoming *in;
    plugin_tp_table existing_anti; /* existing pods' anti-affinity matching the pod */
    plugin_tp_table affinity;      /* existing pods matching all affinity terms */
    plugin_tp_table anti;          /* existing pods matching an anti-affinity term */
    const char **anti_keys;        /* the distinct keys of existing_anti's entries */
    size_t n_anti_keys, cap_anti_keys;
} pre_filter_state;

static void pre_filter_state_free(void *data)
{
    pre_filter_state *s = data;
    if (!s)
        return;
    plugin_tp_free(&s->existing_anti);
    plugin_tp_free(&s->affinity);
    plugin_tp_free(&s->anti);
    free(s->anti_keys);
    ipa_incoming_unref(s->in);
    free(s);
}

static void *pre_filter_state_clone(const void *data)
{
    const pre_filter_state *s = data;
    pre_filter_state *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->in = ipa_incoming_ref(s->in);
    if (s->n_anti_keys) {
        if (!(c->anti_keys = malloc(s->n_anti_keys * sizeof(*c->anti_keys)))) {
            pre_filter_state_free(c);
            return NULL;
        }
        memcpy(c->anti_keys, s->anti_keys, s->n_anti_keys * sizeof(*c->anti_keys));
        c->n_anti_keys = c->cap_anti_keys = s->n_anti_keys;
    }
    if (plugin_tp_clone(&c->existing_anti, &s->existing_anti) != KUBE_OK ||
        plugin_tp_clone(&c->affinity, &s->affinity) != KUBE_OK ||
        plugin_tp_clone(&c->anti, &s->anti) != KUBE_OK) {
        pre_filter_state_free(c);
        return NULL;
    }
    return c;
}

static const fw_state_ops pre_filter_ops = {pre_filter_state_clone, pre_filter_state_free};

/* topologyToMatchedTermCount.update: (key, node's value) += delta when the
 * node has the key. */
static int update_pair(plugin_tp_table *m, const kube_node *node, const char *key, int64_t delta)
{
    const char *v = kube_meta_label(&node->base.meta, key);
    return v ? plugin_tp_add(m, key, v, delta, NULL, NULL) : KUBE_OK;
}

/* Remembers key as one of existing_anti's keys (Filter checks the node's
 * value of each). */
static int add_anti_key(pre_filter_state *s, const char *key)
{
    return kube_array_add_distinct(&s->anti_keys, &s->n_anti_keys, &s->cap_anti_keys, key);
}

/* updateWithAntiAffinityTerms for the required anti-affinity terms of an
 * existing pod, matched with the incoming pod's namespace labels. */
static int update_existing_anti(pre_filter_state *s, const fw_pod_info *existing,
                                const kube_node *node, int64_t delta)
{
    int rc = KUBE_OK;
    for (size_t i = 0; rc == KUBE_OK && i < existing->n_required_anti_affinity_terms; i++) {
        const fw_affinity_term *t = &existing->required_anti_affinity_terms[i];
        if (!ipa_existing_term_matches_incoming(t, s->in) ||
            !kube_meta_label(&node->base.meta, t->topology_key))
            continue;
        rc = add_anti_key(s, t->topology_key);
        if (rc == KUBE_OK)
            rc = update_pair(&s->existing_anti, node, t->topology_key, delta);
    }
    return rc;
}

static int update_incoming_anti(plugin_tp_table *m, const incoming *in, const kube_pod *pod,
                                const kube_node *node, int64_t delta)
{
    int rc = KUBE_OK;
    for (size_t i = 0; rc == KUBE_OK && i < in->n_anti; i++)
        if (ipa_incoming_term_matches(&in->anti[i], pod))
            rc = update_pair(m, node, in->anti[i].topology_key, delta);
    return rc;
}

/* updateWithAffinityTerms: every term's pair when pod matches ALL terms. */
static int update_incoming_affinity(plugin_tp_table *m, const incoming *in, const kube_pod *pod,
                                    const kube_node *node, int64_t delta)
{
    int rc = KUBE_OK;
    if (!ipa_matches_all_terms(in->affinity, in->n_affinity, pod))
        return KUBE_OK;
    for (size_t i = 0; rc == KUBE_OK && i < in->n_affinity; i++)
        rc = update_pair(m, node, in->affinity[i].topology_key, delta);
    return rc;
}

/* getExistingAntiAffinityCounts over the nodes with such pods. */
static int count_existing_anti(pre_filter_state *s, const fw_snapshot *snap)
{
    int rc = KUBE_OK;
    for (size_t i = 0; rc == KUBE_OK && i < snap->n_have_pods_with_required_anti_affinity; i++) {
        const fw_node_info *ni = snap->have_pods_with_required_anti_affinity[i];
        for (size_t j = 0; ni->node && rc == KUBE_OK && j < ni->n_pods_with_required_anti_affinity;
             j++)
            rc = update_existing_anti(s, ni->pods_with_required_anti_affinity[j], ni->node, 1);
    }
    return rc;
}

/* getIncomingAffinityAntiAffinityCounts over every node's pods. */
static int count_incoming(pre_filter_state *s, const fw_snapshot *snap)
{
    const incoming *in = s->in;
    int rc = KUBE_OK;

    if (in->n_affinity == 0 && in->n_anti == 0)
        return KUBE_OK;
    for (size_t i = 0; rc == KUBE_OK && i < snap->n_list; i++) {
        const fw_node_info *ni = snap->list[i];
        for (size_t j = 0; ni->node && rc == KUBE_OK && j < ni->n_pods; j++) {
            const kube_pod *p = ni->pods[j]->pod;
            rc = update_incoming_affinity(&s->affinity, in, p, ni->node, 1);
            if (rc == KUBE_OK)
                rc = update_incoming_anti(&s->anti, in, p, ni->node, 1);
        }
    }
    return rc;
}

fw_status *ipa_pre_filter(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                          fw_pre_filter_result **result)
{
    const inter_pod_affinity *pl = self;
    const fw_snapshot *snap = ipa_snapshot_of(pl);
    pre_filter_state *s;
    int rc;

    if (pod->parse_error)
        return ipa_parse_error_status(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, "parsing pod");
    if (!(s = calloc(1, sizeof(*s))))
        return fw_status_error(KUBE_ENOMEM, NULL);
    if ((rc = ipa_incoming_new(pl, pod, 0, &s->in)) != KUBE_OK ||
        (rc = count_existing_anti(s, snap)) != KUBE_OK ||
        (rc = count_incoming(s, snap)) != KUBE_OK) {
        pre_filter_state_free(s);
        return fw_status_error(rc, NULL);
    }
    if (s->existing_anti.nonzero == 0 && s->in->n_affinity == 0 && s->in->n_anti == 0) {
        pre_filter_state_free(s);
        return fw_status_new(FW_SKIP, NULL);
    }
    rc = fw_cycle_state_write(cs, PRE_FILTER_KEY, s, &pre_filter_ops);
    return rc == KUBE_OK ? NULL : fw_status_error(rc, NULL);
}

/* updateWithPod: AddPod (delta 1) / RemovePod (delta -1). */
static fw_status *update_with_pod(fw_cycle_state *cs, const fw_pod_info *updated,
                                  const fw_node_info *ni, int64_t delta)
{
    pre_filter_state *s = fw_cycle_state_read_static(cs, PRE_FILTER_KEY);
    const kube_node *node = ni->node;
    int rc;

    if (!s)
        return fw_status_error(KUBE_ENOTFOUND, "error reading \"%s\" from cycleState: not found",
                               PRE_FILTER_KEY);
    if (!node)
        return NULL;
    if ((rc = update_existing_anti(s, updated, node, delta)) != KUBE_OK ||
        (rc = update_incoming_affinity(&s->affinity, s->in, updated->pod, node, delta)) !=
            KUBE_OK ||
        (rc = update_incoming_anti(&s->anti, s->in, updated->pod, node, delta)) != KUBE_OK)
        return fw_status_error(rc, NULL);
    return NULL;
}

fw_status *ipa_pre_filter_add_pod(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                                  const fw_pod_info *pod_to_add, const fw_node_info *ni)
{
    return update_with_pod(cs, pod_to_add, ni, 1);
}

fw_status *ipa_pre_filter_remove_pod(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                                     const fw_pod_info *pod_to_remove, const fw_node_info *ni)
{
    return update_with_pod(cs, pod_to_remove, ni, -1);
}

/* ------------------------------------------------------------------ */
/* Filter                                                              */
/* ------------------------------------------------------------------ */

static int satisfies_pod_affinity(const pre_filter_state *s, const kube_node *node)
{
    const incoming *in = s->in;
    int pods_exist = 1;

    for (size_t i = 0; i < in->n_affinity; i++) {
        const char *key = in->affinity[i].topology_key;
        const char *v = kube_meta_label(&node->base.meta, key);
        if (!v)
            return 0; /* every topology label must exist on the node */
        if (plugin_tp_count(&s->affinity, key, v) <= 0)
            pods_exist = 0;
    }
    /* The first pod of a group with affinity to itself may go anywhere
     * with the topologies when no pod matches anywhere yet. */
    return pods_exist || (s->affinity.nonzero == 0 &&
                          ipa_matches_all_terms(in->affinity, in->n_affinity, in->pod->pod));
}

static int satisfies_pod_anti_affinity(const pre_filter_state *s, const kube_node *node)
{
    const incoming *in = s->in;

    if (s->anti.nonzero == 0)
        return 1;
    for (size_t i = 0; i < in->n_anti; i++) {
        const char *key = in->anti[i].topology_key;
        const char *v = kube_meta_label(&node->base.meta, key);
        if (v && plugin_tp_count(&s->anti, key, v) > 0)
            return 0;
    }
    return 1;
}

/* Any pair of the node's labels with a positive count rejects it: looked
 * up through the table's keys rather than every label of the node. */
static int satisfies_existing_anti_affinity(const pre_filter_state *s, const kube_node *node)
{
    if (s->existing_anti.nonzero == 0)
        return 1;
    for (size_t i = 0; i < s->n_anti_keys; i++) {
        const char *v = kube_meta_label(&node->base.meta, s->anti_keys[i]);
        if (v && plugin_tp_count(&s->existing_anti, s->anti_keys[i], v) > 0)
            return 0;
    }
    return 1;
}

fw_status *ipa_filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                      const fw_node_info *ni)
{
    const pre_filter_state *s = fw_cycle_state_read_static(cs, PRE_FILTER_KEY);
    const kube_node *node = ni->node;

    if (!node)
        return fw_status_new(FW_ERROR, "node not found");
    if (!s)
        return fw_status_error(KUBE_ENOTFOUND, "error reading \"%s\" from cycleState: not found",
                               PRE_FILTER_KEY);
    if (!satisfies_pod_affinity(s, node))
        return fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_AFFINITY);
    if (!satisfies_pod_anti_affinity(s, node))
        return fw_status_new(FW_UNSCHEDULABLE, ERR_ANTI);
    if (!satisfies_existing_anti_affinity(s, node))
        return fw_status_new(FW_UNSCHEDULABLE, ERR_EXISTING_ANTI);
    return NULL;
}

/* ------------------------------------------------------------------ */
