/*
 * scheduler/plugins/interpodaffinity/plugin.c - InterPodAffinity (kube-scheduler v1.28
 * pkg/scheduler/framework/plugins/interpodaffinity).
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
 * Namespace labels come from the namespaces lister of the handle's informer
 * factory (shared by every profile); without a factory no namespace is
 * known.
 */
#include "plugins/interpodaffinity/internal.h"

/* The cycle's snapshot; a handle without one (tests) has no nodes. */
const fw_snapshot *ipa_snapshot_of(const inter_pod_affinity *pl)
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
    if (plugin_args_int(in, "", "hardPodAffinityWeight", INT32_MIN, INT32_MAX, DEFAULT_HARD_WEIGHT,
                        &a->hard_weight, e) &&
        (a->hard_weight < 0 || a->hard_weight > MAX_HARD_WEIGHT))
        plugin_field_errs_add(e,
                              "hardPodAffinityWeight: Invalid value: %lld: not in valid "
                              "range [0-%d]",
                              (long long)a->hard_weight, MAX_HARD_WEIGHT);
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

static int create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                  size_t errlen)
{
    plugin_ns_lister *ns = NULL;
    int rc;

    if (h->svc.informers &&
        (rc = plugin_ns_lister_from_factory(h->svc.informers, &ns)) != KUBE_OK) {
        snprintf(err, errlen, "adding the namespaces informer: %s", kube_strerror(rc));
        return rc;
    }
    return plugin_inter_pod_affinity_new(args, h, ns, self, err, errlen);
}

/* ------------------------------------------------------------------ */
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
    .pre_filter = ipa_pre_filter,
    .pre_filter_add_pod = ipa_pre_filter_add_pod,
    .pre_filter_remove_pod = ipa_pre_filter_remove_pod,
    .filter = ipa_filter,
    .pre_score = ipa_pre_score,
    .score = ipa_score,
    .score_nodes = ipa_score_nodes,
    .normalize_score = ipa_normalize_score,
    .events_to_register = events_to_register,
};
