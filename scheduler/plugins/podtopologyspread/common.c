/*
 * scheduler/plugins/podtopologyspread/common.c - PodTopologySpread's
 * constraints (the pod's, or the defaults) and the node and pod
 * predicates filtering and scoring share (upstream common.go).
 */
#include "plugins/podtopologyspread/internal.h"

#include "feature_gates.h"

/* ------------------------------------------------------------------ */
/* Constraints                                                         */
/* ------------------------------------------------------------------ */

void pts_constraints_unref(pts_constraints *c)
{
    if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    fw_pod_info_unref(c->pod);
    kube_arena_release(&c->arena);
    free(c);
}

pts_constraints *pts_constraints_ref(pts_constraints *c)
{
    atomic_fetch_add(&c->refs, 1);
    return c;
}

static int has_kv(const kube_requirement *r, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(r[i].key, key) == 0)
            return 1;
    return 0;
}

/* mergeLabelSetWithSelector: `key in (value)` for each matchLabelKeys key
 * the pod has, plus the selector's own requirements (none when nil). The
 * selector is unchanged when the pod has none of the keys. */
static int merge_match_label_keys(const kube_spread_constraint *sc, const kube_pod *pod,
                                  kube_arena *a, const kube_label_selector **out)
{
    const kube_label_selector *orig = sc->label_selector;
    size_t n_orig = orig ? orig->n_reqs : 0, n = 0;
    kube_requirement *reqs;
    kube_label_selector *sel;

    *out = orig;
    if (sc->n_match_label_keys == 0 ||
        !sched_feature_enabled(SCHED_FEATURE_MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD))
        return KUBE_OK;
    reqs = kube_arena_alloc(a, (sc->n_match_label_keys + n_orig) * sizeof(*reqs));
    if (!reqs)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < sc->n_match_label_keys; i++) {
        const char *key = sc->match_label_keys[i];
        const char *value = kube_meta_label(&pod->base.meta, key), **v;
        if (!value || has_kv(reqs, n, key))
            continue;
        if (!(v = kube_arena_alloc(a, sizeof(*v))))
            return KUBE_ENOMEM;
        *v = value;
        reqs[n++] = (kube_requirement){key, v, 1, KUBE_SEL_IN};
    }
    if (n == 0)
        return KUBE_OK;
    if (n_orig)
        memcpy(reqs + n, orig->reqs, n_orig * sizeof(*reqs));
    if (!(sel = kube_arena_alloc(a, sizeof(*sel))))
        return KUBE_ENOMEM;
    *sel = (kube_label_selector){reqs, n + n_orig, 1};
    *out = sel;
    return KUBE_OK;
}

static size_t key_index(pts_constraints *c, const char *key)
{
    size_t k = 0;
    while (k < c->n_keys && strcmp(c->keys[k], key) != 0)
        k++;
    if (k == c->n_keys)
        c->keys[c->n_keys++] = key;
    return k;
}

/* filterTopologySpreadConstraints for one constraint of the pod. */
static int add_constraint(pts_constraints *c, const kube_spread_constraint *sc, const kube_pod *pod)
{
    pts_constraint *t = &c->items[c->n];
    int rc;

    if (sc->label_selector && !sc->label_selector->valid)
        return KUBE_EINVAL;
    if ((rc = merge_match_label_keys(sc, pod, &c->arena, &t->selector)) != KUBE_OK)
        return rc;
    t->topology_key = sc->topology_key;
    t->max_skew = sc->max_skew;
    t->min_domains = 1;
    if (sc->min_domains && sched_feature_enabled(SCHED_FEATURE_MIN_DOMAINS_IN_POD_TOPOLOGY_SPREAD))
        t->min_domains = sc->min_domains;
    t->affinity_policy = KUBE_POLICY_HONOR;
    t->taints_policy = KUBE_POLICY_IGNORE;
    if (sched_feature_enabled(SCHED_FEATURE_NODE_INCLUSION_POLICY_IN_POD_TOPOLOGY_SPREAD)) {
        t->affinity_policy = sc->node_affinity_policy;
        t->taints_policy = sc->node_taints_policy;
    }
    t->key = key_index(c, sc->topology_key);
    t->self_match =
        kube_label_selector_matches(t->selector, pod->base.meta.labels, pod->base.meta.n_labels);
    c->n++;
    return KUBE_OK;
}

/* An empty constraint set for pi with room for n constraints (one
 * reference), or NULL when memory runs out. */
static pts_constraints *constraints_new(fw_pod_info *pi, size_t n)
{
    pts_constraints *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    atomic_init(&c->refs, 1);
    c->pod = fw_pod_info_ref(pi);
    kube_arena_init(&c->arena, NULL, 0);
    c->items = kube_arena_alloc(&c->arena, n * sizeof(*c->items));
    c->keys = kube_arena_alloc(&c->arena, n * sizeof(*c->keys));
    if (!c->items || !c->keys) {
        pts_constraints_unref(c);
        return NULL;
    }
    return c;
}

/* One default constraint with the pod's default selector
 * (buildDefaultConstraints after filterTopologySpreadConstraints). */
static void add_default(pts_constraints *c, const pts_default *d, const kube_label_selector *sel,
                        const kube_pod *pod)
{
    pts_constraint *t = &c->items[c->n++];

    t->topology_key = d->topology_key;
    t->selector = sel;
    t->max_skew = d->max_skew;
    t->min_domains = d->min_domains;
    t->affinity_policy = d->affinity_policy;
    t->taints_policy = d->taints_policy;
    t->key = key_index(c, d->topology_key);
    t->self_match =
        kube_label_selector_matches(sel, pod->base.meta.labels, pod->base.meta.n_labels);
}

/* buildDefaultConstraints: the default constraints with this action, all
 * with the pod's DefaultSelector, into *out; NULL when there are none or
 * the selector is empty. KUBE_OK or KUBE_ENOMEM. */
static int default_constraints(const pod_topology_spread *pl, fw_pod_info *pi,
                               kube_unsatisfiable action, pts_constraints **out)
{
    const kube_label_selector *sel;
    pts_constraints *c;
    size_t n = 0;
    int rc;

    for (size_t i = 0; i < pl->n_defaults; i++)
        n += pl->defaults[i].when == action;
    if (n == 0)
        return KUBE_OK;
    if (!(c = constraints_new(pi, n)))
        return KUBE_ENOMEM;
    rc = plugin_default_selector(pi->pod, &pl->listers, &c->arena, &sel);
    if (rc != KUBE_OK || sel->n_reqs == 0) {
        pts_constraints_unref(c);
        return rc;
    }
    for (size_t i = 0; i < pl->n_defaults; i++)
        if (pl->defaults[i].when == action)
            add_default(c, &pl->defaults[i], sel, pi->pod);
    *out = c;
    return KUBE_OK;
}

/* The pod's constraints with this action into *out (NULL when there are
 * none); a pod with no constraints of either action gets the default ones
 * (default_constraints). KUBE_OK, KUBE_EINVAL (a selector of the pod's
 * does not parse) or KUBE_ENOMEM. */
int pts_get_constraints(const pod_topology_spread *pl, fw_pod_info *pi, kube_unsatisfiable action,
                        pts_constraints **out)
{
    const kube_pod *pod = pi->pod;
    pts_constraints *c;
    size_t n = 0;
    int rc = KUBE_OK;

    *out = NULL;
    if (pod->n_spread == 0)
        return default_constraints(pl, pi, action, out);
    for (size_t i = 0; i < pod->n_spread; i++)
        n += pod->spread[i].when_unsatisfiable == action;
    if (n == 0)
        return KUBE_OK;
    if (!(c = constraints_new(pi, n)))
        return KUBE_ENOMEM;
    for (size_t i = 0; rc == KUBE_OK && i < pod->n_spread; i++)
        if (pod->spread[i].when_unsatisfiable == action)
            rc = add_constraint(c, &pod->spread[i], pod);
    if (rc != KUBE_OK) {
        pts_constraints_unref(c);
        return rc;
    }
    *out = c;
    return KUBE_OK;
}

/* ------------------------------------------------------------------ */
/* Node and pod predicates                                             */
/* ------------------------------------------------------------------ */

const char *pts_node_label(const kube_node *node, const char *key)
{
    return kube_meta_label(&node->base.meta, key);
}

/* nodeLabelsMatchSpreadConstraints: the node has every topology key. */
int pts_node_has_all_keys(const kube_node *node, const pts_constraints *c)
{
    for (size_t k = 0; k < c->n_keys; k++)
        if (!pts_node_label(node, c->keys[k]))
            return 0;
    return 1;
}

/* nodeaffinity.GetRequiredNodeAffinity(pod).Match(node). */
int pts_required_node_affinity_matches(const kube_pod *pod, const kube_node *node)
{
    const kube_node_selector *req = pod->affinity ? pod->affinity->node_required : NULL;

    for (size_t i = 0; i < pod->n_node_selector; i++) {
        const char *v = pts_node_label(node, pod->node_selector[i].key);
        if (!v || strcmp(v, pod->node_selector[i].value) != 0)
            return 0;
    }
    return !req || kube_node_selector_matches(req, node->base.meta.name, node->base.meta.labels,
                                              node->base.meta.n_labels);
}

static int has_untolerated_no_schedule_taint(const kube_pod *pod, const kube_node *node)
{
    return plugin_find_untolerated_taint(node, pod,
                                         PLUGIN_EFFECT(KUBE_EFFECT_NO_SCHEDULE) |
                                             PLUGIN_EFFECT(KUBE_EFFECT_NO_EXECUTE)) != NULL;
}

/* matchNodeInclusionPolicies; affinity_ok is the node's
 * required_node_affinity_matches(), computed once per node. */
int pts_match_inclusion_policies(const pts_constraint *t, const kube_pod *pod,
                                 const kube_node *node, int affinity_ok)
{
    if (t->affinity_policy == KUBE_POLICY_HONOR && !affinity_ok)
        return 0;
    return t->taints_policy != KUBE_POLICY_HONOR || !has_untolerated_no_schedule_taint(pod, node);
}

int pts_selector_matches_pod(const kube_label_selector *s, const kube_pod *p)
{
    return kube_label_selector_matches(s, p->base.meta.labels, p->base.meta.n_labels);
}

/* countPodsMatchSelector: pods of namespace ns, not terminating. */
int64_t pts_count_matching_pods(const fw_node_info *ni, const kube_label_selector *s,
                                const char *ns)
{
    int64_t n = 0;
    for (size_t i = 0; i < ni->n_pods; i++) {
        const kube_pod *p = ni->pods[i]->pod;
        const char *pns = p->base.meta.namespace_;
        if (p->base.meta.deleting || (pns != ns && strcmp(pns, ns) != 0))
            continue;
        n += pts_selector_matches_pod(s, p);
    }
    return n;
}
