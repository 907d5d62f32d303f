/*
 * scheduler/plugins/interpodaffinity/incoming.c - the incoming pod's
 * affinity terms with their namespaceSelector unrolled into namespace
 * names, shared (refcounted) by PreFilter and PreScore states, and the
 * term matching both use.
 */
#include "plugins/interpodaffinity/internal.h"

/* The incoming pod: terms with namespaceSelector unrolled             */
/* ------------------------------------------------------------------ */

void ipa_incoming_unref(incoming *in)
{
    if (!in || atomic_fetch_sub(&in->refs, 1) != 1)
        return;
    fw_pod_info_unref(in->pod);
    kube_object_unref(in->ns);
    kube_arena_release(&in->arena);
    free(in);
}

incoming *ipa_incoming_ref(incoming *in)
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
int ipa_incoming_new(const inter_pod_affinity *pl, const fw_pod_info *pi, int preferred,
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
        rc =
            merge_terms(pl, pi->required_affinity_terms, in->n_affinity, &in->affinity, &in->arena);
        if (rc == KUBE_OK)
            rc = merge_terms(pl, pi->required_anti_affinity_terms, in->n_anti, &in->anti,
                             &in->arena);
    }
    if (rc != KUBE_OK) {
        ipa_incoming_unref(in);
        return rc;
    }
    *out = in;
    return KUBE_OK;
}

/* Matching the existing pods' terms against the incoming pod uses the
 * labels of its namespace (GetNamespaceLabelsSnapshot). */
int ipa_existing_term_matches_incoming(const fw_affinity_term *t, const incoming *in)
{
    const kube_kv *labels = in->ns ? in->ns->meta.labels : NULL;
    size_t n = in->ns ? in->ns->meta.n_labels : 0;
    return fw_affinity_term_matches(t, in->pod->pod, labels, n);
}

/* The incoming pod's merged terms match without namespace labels. */
int ipa_incoming_term_matches(const fw_affinity_term *t, const kube_pod *pod)
{
    return fw_affinity_term_matches(t, pod, NULL, 0);
}

/* podMatchesAllAffinityTerms: at least one term, all matching. */
int ipa_matches_all_terms(const fw_affinity_term *terms, size_t n, const kube_pod *pod)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!ipa_incoming_term_matches(&terms[i], pod))
            return 0;
    return 1;
}

fw_status *ipa_parse_error_status(fw_code code, const char *prefix)
{
    return fw_status_newf(code, "%s: invalid label selector in a pod (anti-)affinity term", prefix);
}

/* ------------------------------------------------------------------ */
