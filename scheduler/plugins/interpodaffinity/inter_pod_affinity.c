/*
 * scheduler/plugins/interpodaffinity/inter_pod_affinity.c - InterPodAffinity (kube-scheduler
 * v1.28 pkg/scheduler/framework/plugins/interpodaffinity).
 *
 * Terms are the pod infos' pre-parsed AffinityTerms. The incoming pod's
 * terms get their namespaceSelector unrolled into namespaces through the
 * namespace lister (mergeAffinityTermNamespacesIfNotEmpty: a non-empty
 * selector becomes the list of matching namespaces, an empty one keeps
 * matching every namespace); existing pods' terms match the incoming pod
 * with the labels of the incoming pod's namespace.
 *
 * PreFilter counts, per topology pair (key, value of the node's label):
 * existing pods whose required anti-affinity terms match the incoming pod,
 * existing pods matching ALL the incoming pod's required affinity terms,
 * and existing pods matching each of its required anti-affinity terms; it
 * returns Skip when there is nothing to check. Filter reads the counts:
 * affinity ("node(s) didn't match pod affinity rules",
 * UnschedulableAndUnresolvable; a pod matching its own terms may go first
 * when nothing matches anywhere), anti-affinity ("node(s) didn't match pod
 * anti-affinity rules") and existing pods' anti-affinity ("node(s) didn't
 * satisfy existing pods anti-affinity rules"), both Unschedulable. AddPod /
 * RemovePod update the counts for preemption.
 *
 * PreScore sums weights per topology pair: the incoming pod's preferred
 * (anti-)affinity terms against existing pods (all pods when it has such
 * terms, else only pods with affinity), existing pods' required affinity
 * terms (hardPodAffinityWeight) and preferred (anti-)affinity terms
 * against the incoming pod. Score adds the pairs of the node's labels;
 * NormalizeScore maps [min, max] to [0, 100].
 *
 * Args: hardPodAffinityWeight (default 1, 0..100),
 * ignorePreferredTermsOfExistingPods (default false: Skip scoring when the
 * incoming pod has no preferred terms).
 *
 * Namespace labels come from a namespaces informer the plugin adds to the
 * handle's hub (one per profile); without a hub no namespace is known.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/arena.h"
#include "kube/errors.h"
#include "kube/node.h"
#include "kube/pod.h"
#include "kube/selector.h"
#include "plugins/helper.h"
#include "plugins/interpodaffinity/inter_pod_affinity.h"
#include "plugins/plugins.h"
#include "plugins/podtopologyspread/pairs.h"

#define NAME "InterPodAffinity"
#define PRE_FILTER_KEY "PreFilter" NAME
#define PRE_SCORE_KEY "PreScore" NAME
#define ERR_EXISTING_ANTI "node(s) didn't satisfy existing pods anti-affinity rules"
#define ERR_AFFINITY "node(s) didn't match pod affinity rules"
#define ERR_ANTI "node(s) didn't match pod anti-affinity rules"
#define DEFAULT_HARD_WEIGHT 1
#define MAX_HARD_WEIGHT 100

typedef struct inter_pod_affinity {
    fw_handle *h;
    int32_t hard_weight;
    int ignore_preferred_of_existing;
    plugin_ns_lister *ns; /* NULL: no namespace known */
} inter_pod_affinity;

/* The cycle's snapshot; a handle without one (tests) has no nodes. */
static const fw_snapshot *snapshot_of(const inter_pod_affinity *pl)
{
    static const fw_snapshot empty;
    return pl->h->svc.snapshot ? pl->h->svc.snapshot : &empty;
}

/* ------------------------------------------------------------------ */
/* Args: InterPodAffinityArgs                                          */
/* ------------------------------------------------------------------ */

typedef struct ipa_args {
    int64_t hard_weight;
    int ignore_preferred;
} ipa_args;

static void parse_args(const cJSON *in, ipa_args *a, plugin_field_errs *e)
{
    static const char *const known[] = {"hardPodAffinityWeight",
                                        "ignorePreferredTermsOfExistingPods", NULL};
    const cJSON *ign;

    a->hard_weight = DEFAULT_HARD_WEIGHT;
    a->ignore_preferred = 0;
    if (!plugin_args_object(in, "", known, e))
        return;
    if (plugin_args_int(in, "", "hardPodAffinityWeight", INT32_MIN, INT32_MAX,
                        DEFAULT_HARD_WEIGHT, &a->hard_weight, e) &&
        (a->hard_weight < 0 || a->hard_weight > MAX_HARD_WEIGHT))
        plugin_field_errs_add(e, "hardPodAffinityWeight: Invalid value: %lld: not in valid "
                              "range [0-%d]", (long long)a->hard_weight, MAX_HARD_WEIGHT);
    ign = kube_json_get(in, "ignorePreferredTermsOfExistingPods");
    if (ign && !cJSON_IsBool(ign))
        plugin_field_errs_add(e, "ignorePreferredTermsOfExistingPods: expected a boolean");
    a->ignore_preferred = cJSON_IsTrue(ign);
}

static int default_args(const cJSON *in, cJSON **out, char *err, size_t errlen)
{
    plugin_field_errs e = PLUGIN_FIELD_ERRS_INIT;
    ipa_args a;
    int rc;

    *out = NULL;
    parse_args(in, &a, &e);
    if ((rc = plugin_field_errs_finish(&e, err, errlen)) != KUBE_OK)
        return rc;
    if (!(*out = cJSON_CreateObject()) ||
        !cJSON_AddNumberToObject(*out, "hardPodAffinityWeight", (double)a.hard_weight) ||
        !cJSON_AddBoolToObject(*out, "ignorePreferredTermsOfExistingPods", a.ignore_preferred)) {
        cJSON_Delete(*out);
        *out = NULL;
        return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

static void destroy(void *self)
{
    inter_pod_affinity *pl = self;
    if (!pl)
        return;
    plugin_ns_lister_free(pl->ns);
    free(pl);
}

int plugin_inter_pod_affinity_new(const cJSON *args, fw_handle *h, plugin_ns_lister *ns,
                                  void **self, char *err, size_t errlen)
{
    plugin_field_errs e = PLUGIN_FIELD_ERRS_INIT;
    inter_pod_affinity *pl;
    ipa_args a;
    int rc;

    *self = NULL;
    parse_args(args, &a, &e);
    if ((rc = plugin_field_errs_finish(&e, err, errlen)) != KUBE_OK) {
        plugin_ns_lister_free(ns);
        return rc;
    }
    if (!(pl = calloc(1, sizeof(*pl)))) {
        plugin_ns_lister_free(ns);
        return KUBE_ENOMEM;
    }
    pl->h = h;
    pl->hard_weight = (int32_t)a.hard_weight;
    pl->ignore_preferred_of_existing = a.ignore_preferred;
    pl->ns = ns;
    *self = pl;
    return KUBE_OK;
}

static int create(const cJSON *args, fw_handle *h, void **self, char *err, size_t errlen)
{
    plugin_ns_lister *ns = NULL;
    int rc;

    if (h->svc.hub && (rc = plugin_ns_lister_from_hub(h->svc.hub, &ns)) != KUBE_OK) {
        snprintf(err, errlen, "adding the namespaces informer: %s", kube_strerror(rc));
        return rc;
    }
    return plugin_inter_pod_affinity_new(args, h, ns, self, err, errlen);
}

/* ------------------------------------------------------------------ */
/* The incoming pod: terms with namespaceSelector unrolled             */
/* ------------------------------------------------------------------ */

/* Shared, immutable after build (refcounted): the incoming pod, its
 * namespace (for its labels) and its merged terms of one kind. */
typedef struct incoming {
    atomic_int refs;
    fw_pod_info *pod;
    kube_object *ns;                 /* the pod's namespace, or NULL */
    kube_arena arena;
    fw_affinity_term *affinity, *anti;          /* required (PreFilter) */
    size_t n_affinity, n_anti;
    fw_weighted_affinity_term *pref, *pref_anti; /* preferred (PreScore) */
    size_t n_pref, n_pref_anti;
} incoming;

static void incoming_unref(incoming *in)
{
    if (!in || atomic_fetch_sub(&in->refs, 1) != 1)
        return;
    fw_pod_info_unref(in->pod);
    kube_object_unref(in->ns);
    kube_arena_release(&in->arena);
    free(in);
}

static incoming *incoming_ref(incoming *in)
{
    atomic_fetch_add(&in->refs, 1);
    return in;
}

typedef struct ns_names {
    kube_arena *a;
    const char **names;
    size_t n, cap;
    int oom;
} ns_names;

static void collect_ns(void *ud, const char *name)
{
    ns_names *c = ud;
    if (c->oom)
        return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 8;
        const char **names = kube_arena_alloc(c->a, cap * sizeof(*names));
        if (!names) {
            c->oom = 1;
            return;
        }
        if (c->n)
            memcpy(names, c->names, c->n * sizeof(*names));
        c->names = names;
        c->cap = cap;
    }
    if (!(c->names[c->n] = kube_arena_strdup(c->a, name)))
        c->oom = 1;
    else
        c->n++;
}

/* mergeAffinityTermNamespacesIfNotEmpty: a term whose namespaceSelector
 * has requirements gets the matching namespaces added and the selector
 * replaced by "nothing". */
static int merge_namespaces(const inter_pod_affinity *pl, fw_affinity_term *t, kube_arena *a)
{
    const kube_label_selector *sel = t->namespace_selector;
    ns_names c = {a, NULL, 0, 0, 0};

    if (!sel || sel->n_reqs == 0)
        return KUBE_OK;
    for (size_t i = 0; i < t->n_namespaces; i++)
        collect_ns(&c, t->namespaces[i]);
    if (pl->ns)
        plugin_ns_lister_each_match(pl->ns, sel, collect_ns, &c);
    if (c.oom)
        return KUBE_ENOMEM;
    t->namespaces = c.names;
    t->n_namespaces = c.n;
    t->namespace_selector = NULL;
    return KUBE_OK;
}

static int merge_terms(const inter_pod_affinity *pl, const fw_affinity_term *src, size_t n,
                       fw_affinity_term **out, kube_arena *a)
{
    *out = n ? kube_arena_alloc(a, n * sizeof(**out)) : NULL;
    if (n && !*out)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        (*out)[i] = src[i];
        int rc = merge_namespaces(pl, &(*out)[i], a);
        if (rc != KUBE_OK)
            return rc;
    }
    return KUBE_OK;
}

static int merge_weighted(const inter_pod_affinity *pl, const fw_weighted_affinity_term *src,
                          size_t n, fw_weighted_affinity_term **out, kube_arena *a)
{
    *out = n ? kube_arena_alloc(a, n * sizeof(**out)) : NULL;
    if (n && !*out)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        (*out)[i] = src[i];
        int rc = merge_namespaces(pl, &(*out)[i].term, a);
        if (rc != KUBE_OK)
            return rc;
    }
    return KUBE_OK;
}

/* The incoming pod with its required (preferred == 0) or preferred terms
 * merged. *out NULL on error (KUBE_ENOMEM). */
static int incoming_new(const inter_pod_affinity *pl, const fw_pod_info *pi, int preferred,
                        incoming **out)
{
    incoming *in = calloc(1, sizeof(*in));
    int rc;

    *out = NULL;
    if (!in)
        return KUBE_ENOMEM;
    atomic_init(&in->refs, 1);
    in->pod = fw_pod_info_ref((fw_pod_info *)pi);
    kube_arena_init(&in->arena, NULL, 0);
    in->ns = pl->ns ? plugin_ns_lister_get(pl->ns, pi->namespace_) : NULL;
    if (preferred) {
        in->n_pref = pi->n_preferred_affinity_terms;
        in->n_pref_anti = pi->n_preferred_anti_affinity_terms;
        rc = merge_weighted(pl, pi->preferred_affinity_terms, in->n_pref, &in->pref, &in->arena);
        if (rc == KUBE_OK)
            rc = merge_weighted(pl, pi->preferred_anti_affinity_terms, in->n_pref_anti,
                                &in->pref_anti, &in->arena);
    } else {
        in->n_affinity = pi->n_required_affinity_terms;
        in->n_anti = pi->n_required_anti_affinity_terms;
        rc = merge_terms(pl, pi->required_affinity_terms, in->n_affinity, &in->affinity,
                         &in->arena);
        if (rc == KUBE_OK)
            rc = merge_terms(pl, pi->required_anti_affinity_terms, in->n_anti, &in->anti,
                             &in->arena);
    }
    if (rc != KUBE_OK) {
        incoming_unref(in);
        return rc;
    }
    *out = in;
    return KUBE_OK;
}

/* Matching the existing pods' terms against the incoming pod uses the
 * labels of its namespace (GetNamespaceLabelsSnapshot). */
static int existing_term_matches_incoming(const fw_affinity_term *t, const incoming *in)
{
    const kube_kv *labels = in->ns ? in->ns->meta.labels : NULL;
    size_t n = in->ns ? in->ns->meta.n_labels : 0;
    return fw_affinity_term_matches(t, in->pod->pod, labels, n);
}

/* The incoming pod's merged terms match without namespace labels. */
static int incoming_term_matches(const fw_affinity_term *t, const kube_pod *pod)
{
    return fw_affinity_term_matches(t, pod, NULL, 0);
}

/* podMatchesAllAffinityTerms: at least one term, all matching. */
static int matches_all_terms(const fw_affinity_term *terms, size_t n, const kube_pod *pod)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!incoming_term_matches(&terms[i], pod))
            return 0;
    return 1;
}

static fw_status *parse_error_status(fw_code code, const char *prefix)
{
    return fw_status_newf(code, "%s: invalid label selector in a pod (anti-)affinity term",
                          prefix);
}

/* ------------------------------------------------------------------ */
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
    incoming_unref(s->in);
    free(s);
}

static void *pre_filter_state_clone(const void *data)
{
    const pre_filter_state *s = data;
    pre_filter_state *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->in = incoming_ref(s->in);
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
    for (size_t i = 0; i < s->n_anti_keys; i++)
        if (strcmp(s->anti_keys[i], key) == 0)
            return KUBE_OK;
    if (s->n_anti_keys == s->cap_anti_keys) {
        size_t cap = s->cap_anti_keys ? 2 * s->cap_anti_keys : 4;
        const char **keys = realloc(s->anti_keys, cap * sizeof(*keys));
        if (!keys)
            return KUBE_ENOMEM;
        s->anti_keys = keys;
        s->cap_anti_keys = cap;
    }
    s->anti_keys[s->n_anti_keys++] = key;
    return KUBE_OK;
}

/* updateWithAntiAffinityTerms for the required anti-affinity terms of an
 * existing pod, matched with the incoming pod's namespace labels. */
static int update_existing_anti(pre_filter_state *s, const fw_pod_info *existing,
                                const kube_node *node, int64_t delta)
{
    int rc = KUBE_OK;
    for (size_t i = 0; rc == KUBE_OK && i < existing->n_required_anti_affinity_terms; i++) {
        const fw_affinity_term *t = &existing->required_anti_affinity_terms[i];
        if (!existing_term_matches_incoming(t, s->in) ||
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
        if (incoming_term_matches(&in->anti[i], pod))
            rc = update_pair(m, node, in->anti[i].topology_key, delta);
    return rc;
}

/* updateWithAffinityTerms: every term's pair when pod matches ALL terms. */
static int update_incoming_affinity(plugin_tp_table *m, const incoming *in, const kube_pod *pod,
                                    const kube_node *node, int64_t delta)
{
    int rc = KUBE_OK;
    if (!matches_all_terms(in->affinity, in->n_affinity, pod))
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
        for (size_t j = 0; ni->node && rc == KUBE_OK &&
                           j < ni->n_pods_with_required_anti_affinity; j++)
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

static fw_status *pre_filter(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                             fw_pre_filter_result **result)
{
    const inter_pod_affinity *pl = self;
    const fw_snapshot *snap = snapshot_of(pl);
    pre_filter_state *s;
    int rc;

    if (pod->parse_error)
        return parse_error_status(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, "parsing pod");
    if (!(s = calloc(1, sizeof(*s))))
        return fw_status_error(KUBE_ENOMEM, NULL);
    if ((rc = incoming_new(pl, pod, 0, &s->in)) != KUBE_OK ||
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
        return fw_status_error(KUBE_ENOTFOUND,
                               "error reading \"%s\" from cycleState: not found", PRE_FILTER_KEY);
    if (!node)
        return NULL;
    if ((rc = update_existing_anti(s, updated, node, delta)) != KUBE_OK ||
        (rc = update_incoming_affinity(&s->affinity, s->in, updated->pod, node, delta)) !=
            KUBE_OK ||
        (rc = update_incoming_anti(&s->anti, s->in, updated->pod, node, delta)) != KUBE_OK)
        return fw_status_error(rc, NULL);
    return NULL;
}

static fw_status *pre_filter_add_pod(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                                     const fw_pod_info *pod_to_add, const fw_node_info *ni)
{
    return update_with_pod(cs, pod_to_add, ni, 1);
}

static fw_status *pre_filter_remove_pod(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
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
                          matches_all_terms(in->affinity, in->n_affinity, in->pod->pod));
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

static fw_status *filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *ni)
{
    const pre_filter_state *s = fw_cycle_state_read_static(cs, PRE_FILTER_KEY);
    const kube_node *node = ni->node;

    if (!node)
        return fw_status_new(FW_ERROR, "node not found");
    if (!s)
        return fw_status_error(KUBE_ENOTFOUND,
                               "error reading \"%s\" from cycleState: not found", PRE_FILTER_KEY);
    if (!satisfies_pod_affinity(s, node))
        return fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_AFFINITY);
    if (!satisfies_pod_anti_affinity(s, node))
        return fw_status_new(FW_UNSCHEDULABLE, ERR_ANTI);
    if (!satisfies_existing_anti_affinity(s, node))
        return fw_status_new(FW_UNSCHEDULABLE, ERR_EXISTING_ANTI);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Scoring                                                             */
/* ------------------------------------------------------------------ */

/* Read-only once PreScore wrote it: clones share it (refcounted). */
typedef struct pre_score_state {
    atomic_int refs;
    incoming *in;
    plugin_tp_table scores;           /* summed weights per pair */
    const char **keys;                /* topology keys with an entry */
    size_t n_keys, cap_keys;
} pre_score_state;

static void *pre_score_state_ref(const void *data)
{
    pre_score_state *s = (pre_score_state *)data;
    atomic_fetch_add(&s->refs, 1);
    return s;
}

static void pre_score_state_unref(void *data)
{
    pre_score_state *s = data;
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    plugin_tp_free(&s->scores);
    free(s->keys);
    incoming_unref(s->in);
    free(s);
}

static const fw_state_ops pre_score_ops = {pre_score_state_ref, pre_score_state_unref};

static int add_key(pre_score_state *s, const char *key)
{
    for (size_t i = 0; i < s->n_keys; i++)
        if (strcmp(s->keys[i], key) == 0)
            return KUBE_OK;
    if (s->n_keys == s->cap_keys) {
        size_t cap = s->cap_keys ? 2 * s->cap_keys : 4;
        const char **keys = realloc(s->keys, cap * sizeof(*keys));
        if (!keys)
            return KUBE_ENOMEM;
        s->keys = keys;
        s->cap_keys = cap;
    }
    s->keys[s->n_keys++] = key;
    return KUBE_OK;
}

/* scoreMap.processTerm: weight * multiplier on the node's pair of the
 * term's key when the term matches pod. `existing` says whose term it is
 * (an existing pod's terms match with the incoming pod's namespace
 * labels). */
static int process_term(pre_score_state *s, const fw_affinity_term *t, int32_t weight,
                        const kube_pod *pod, int existing, const kube_node *node, int32_t mult)
{
    int match = existing ? existing_term_matches_incoming(t, s->in)
                         : incoming_term_matches(t, pod);
    const char *v;
    int rc;

    if (!match || !(v = kube_meta_label(&node->base.meta, t->topology_key)))
        return KUBE_OK;
    if ((rc = add_key(s, t->topology_key)) != KUBE_OK)
        return rc;
    return plugin_tp_add(&s->scores, t->topology_key, v, (int64_t)(weight * mult), NULL, NULL);
}

static int process_weighted(pre_score_state *s, const fw_weighted_affinity_term *t, size_t n,
                            const kube_pod *pod, int existing, const kube_node *node,
                            int32_t mult)
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
    for (size_t i = 0; rc == KUBE_OK && pl->hard_weight > 0 &&
                       i < existing->n_required_affinity_terms; i++)
        rc = process_term(s, &existing->required_affinity_terms[i], pl->hard_weight, NULL, 1,
                          node, 1);
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
    const fw_snapshot *snap = snapshot_of(pl);
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

static fw_status *pre_score(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
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
        return parse_error_status(FW_ERROR, "failed to parse pod");
    if (!(s = calloc(1, sizeof(*s))))
        return fw_status_error(KUBE_ENOMEM, NULL);
    atomic_init(&s->refs, 1);
    if ((rc = incoming_new(pl, pod, 1, &s->in)) != KUBE_OK ||
        (rc = score_all_nodes(pl, s, has_constraints)) != KUBE_OK) {
        pre_score_state_unref(s);
        return fw_status_error(rc, NULL);
    }
    rc = fw_cycle_state_write(cs, PRE_SCORE_KEY, s, &pre_score_ops);
    return rc == KUBE_OK ? NULL : fw_status_error(rc, NULL);
}

static fw_status *pre_score_not_found(void)
{
    return fw_status_error(KUBE_ENOTFOUND, "failed to read \"%s\" from cycleState: not found",
                           PRE_SCORE_KEY);
}

static fw_status *score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                        const fw_node_info *ni, int64_t *out)
{
    const pre_score_state *s = fw_cycle_state_read_static(cs, PRE_SCORE_KEY);
    const kube_node *node = ni->node;

    *out = 0;
    if (!node)
        return fw_status_error(KUBE_ENOTFOUND, "failed to get node %s from Snapshot: not found",
                               ni->name ? ni->name : "");
    if (!s)
        return pre_score_not_found();
    for (size_t k = 0; k < s->n_keys; k++) {
        const char *v = kube_meta_label(&node->base.meta, s->keys[k]);
        if (v)
            *out += plugin_tp_count(&s->scores, s->keys[k], v);
    }
    return NULL;
}

static fw_status *normalize_score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
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

/* ------------------------------------------------------------------ */
/* Descriptor                                                          */
/* ------------------------------------------------------------------ */

static const fw_cluster_event_with_hint events[] = {
    {{FW_GVK_POD, FW_ACT_ALL, ""}, NULL},
    {{FW_GVK_NODE, FW_ACT_ADD | FW_ACT_UPDATE_NODE_LABEL, ""}, NULL},
};

PLUGIN_EVENTS_TO_REGISTER(events)

const fw_plugin_desc plugin_inter_pod_affinity = {
    .name = NAME,
    .default_args = default_args,
    .create = create,
    .destroy = destroy,
    .pre_filter = pre_filter,
    .pre_filter_add_pod = pre_filter_add_pod,
    .pre_filter_remove_pod = pre_filter_remove_pod,
    .filter = filter,
    .pre_score = pre_score,
    .score = score,
    .normalize_score = normalize_score,
    .events_to_register = events_to_register,
};
