/*
 * scheduler/framework/pod_info.c - PodInfo (pre-parsed affinity terms,
 * requests) and image-state blocks.
 */
#include <stdlib.h>
#include <string.h>

#include "framework/types.h"
#include "kube/util/errors.h"
#include "kube/types/pod.h"
#include "kube/codec/selector.h"

static void term_from_kube(const kube_pod *pod, const kube_pod_affinity_term *k,
                           fw_affinity_term *t, int *parse_error)
{
    if (k->n_namespaces == 0 && !k->namespace_selector) {
        t->namespaces = (const char *const *)&pod->base.meta.namespace_;
        t->n_namespaces = 1;
    } else {
        t->namespaces = k->namespaces;
        t->n_namespaces = k->n_namespaces;
    }
    t->selector = k->label_selector;
    t->namespace_selector = k->namespace_selector;
    t->topology_key = k->topology_key;
    if ((k->label_selector && !k->label_selector->valid) ||
        (k->namespace_selector && !k->namespace_selector->valid))
        *parse_error = KUBE_EINVAL;
}

static int required_terms(const kube_pod *pod, const kube_pod_affinity *a, fw_affinity_term **out,
                          size_t *n, int *parse_error)
{
    *out = NULL;
    *n = 0;
    if (!a->n_required)
        return KUBE_OK;
    *out = calloc(a->n_required, sizeof(**out));
    if (!*out)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < a->n_required; i++)
        term_from_kube(pod, &a->required[i], &(*out)[i], parse_error);
    *n = a->n_required;
    return KUBE_OK;
}

static int preferred_terms(const kube_pod *pod, const kube_pod_affinity *a,
                           fw_weighted_affinity_term **out, size_t *n, int *parse_error)
{
    *out = NULL;
    *n = 0;
    if (!a->n_preferred)
        return KUBE_OK;
    *out = calloc(a->n_preferred, sizeof(**out));
    if (!*out)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < a->n_preferred; i++) {
        term_from_kube(pod, &a->preferred[i].term, &(*out)[i].term, parse_error);
        (*out)[i].weight = a->preferred[i].weight;
    }
    *n = a->n_preferred;
    return KUBE_OK;
}

static int parse_terms(fw_pod_info *pi, const kube_pod *pod)
{
    const kube_affinity *a = pod->affinity;
    int pe = KUBE_OK;
    if (!a)
        return KUBE_OK;
    if (required_terms(pod, &a->pod_affinity, &pi->required_affinity_terms,
                       &pi->n_required_affinity_terms, &pe) ||
        required_terms(pod, &a->pod_anti_affinity, &pi->required_anti_affinity_terms,
                       &pi->n_required_anti_affinity_terms, &pe) ||
        preferred_terms(pod, &a->pod_affinity, &pi->preferred_affinity_terms,
                        &pi->n_preferred_affinity_terms, &pe) ||
        preferred_terms(pod, &a->pod_anti_affinity, &pi->preferred_anti_affinity_terms,
                        &pi->n_preferred_anti_affinity_terms, &pe))
        return KUBE_ENOMEM;
    pi->parse_error = pe;
    return KUBE_OK;
}

static void pod_info_destroy(fw_pod_info *pi)
{
    free(pi->required_affinity_terms);
    free(pi->required_anti_affinity_terms);
    free(pi->preferred_affinity_terms);
    free(pi->preferred_anti_affinity_terms);
    fw_resource_free(&pi->request);
    kube_object_unref(&pi->pod->base);
    free(pi);
}

int fw_pod_info_new(struct kube_pod *pod, fw_pod_info **out)
{
    *out = NULL;
    fw_pod_info *pi = calloc(1, sizeof(*pi));
    if (!pi)
        return KUBE_ENOMEM;
    atomic_init(&pi->refs, 1);
    pi->pod = pod;
    kube_object_ref(&pod->base);
    pi->name = pod->base.meta.name;
    pi->namespace_ = pod->base.meta.namespace_;
    pi->uid = pod->base.meta.uid;
    pi->priority = pod->priority;
    pi->non0_milli_cpu = pod->nonzero_milli_cpu;
    pi->non0_memory = pod->nonzero_memory;
    if (fw_resource_from_kube(&pi->request, &pod->requests) != KUBE_OK ||
        parse_terms(pi, pod) != KUBE_OK) {
        pod_info_destroy(pi);
        return KUBE_ENOMEM;
    }
    *out = pi;
    return KUBE_OK;
}

fw_pod_info *fw_pod_info_ref(fw_pod_info *pi)
{
    if (pi)
        atomic_fetch_add(&pi->refs, 1);
    return pi;
}

void fw_pod_info_unref(fw_pod_info *pi)
{
    if (pi && atomic_fetch_sub(&pi->refs, 1) == 1)
        pod_info_destroy(pi);
}

int fw_pod_info_has_affinity(const fw_pod_info *pi)
{
    return pi->n_required_affinity_terms || pi->n_preferred_affinity_terms ||
           pi->n_required_anti_affinity_terms || pi->n_preferred_anti_affinity_terms;
}

int fw_affinity_term_matches(const fw_affinity_term *t, const struct kube_pod *pod,
                             const kube_kv *ns_labels, size_t n_ns_labels)
{
    const char *ns = pod->base.meta.namespace_;
    int in_ns = 0;
    for (size_t i = 0; i < t->n_namespaces && !in_ns; i++)
        in_ns = strcmp(t->namespaces[i], ns) == 0;
    if (!in_ns && !kube_label_selector_matches(t->namespace_selector, ns_labels, n_ns_labels))
        return 0;
    return kube_label_selector_matches(t->selector, pod->base.meta.labels, pod->base.meta.n_labels);
}

/* ------------------------------------------------------------------ */
/* Image states                                                        */
/* ------------------------------------------------------------------ */

static int cmp_image(const void *a, const void *b)
{
    return strcmp(((const fw_image_state *)a)->name, ((const fw_image_state *)b)->name);
}

int fw_image_states_new(const fw_image_state *states, size_t n, fw_image_states **out)
{
    *out = NULL;
    size_t strings = 0;
    for (size_t i = 0; i < n; i++)
        strings += strlen(states[i].name) + 1;
    fw_image_states *s = malloc(sizeof(*s) + n * sizeof(fw_image_state) + strings);
    if (!s)
        return KUBE_ENOMEM;
    atomic_init(&s->refs, 1);
    char *p = (char *)&s->items[n];
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(states[i].name) + 1;
        memcpy(p, states[i].name, len);
        s->items[i] = states[i];
        s->items[i].name = p;
        p += len;
    }
    /* Insertion sort (a node lists tens of images): stable, so of equal
     * names the first given is kept by the dedup below. */
    for (size_t i = 1; i < n; i++) {
        fw_image_state cur = s->items[i];
        size_t j = i;
        for (; j > 0 && strcmp(s->items[j - 1].name, cur.name) > 0; j--)
            s->items[j] = s->items[j - 1];
        s->items[j] = cur;
    }
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (w == 0 || strcmp(s->items[w - 1].name, s->items[i].name) != 0)
            s->items[w++] = s->items[i];
    s->n = w;
    *out = s;
    return KUBE_OK;
}

fw_image_states *fw_image_states_ref(fw_image_states *s)
{
    if (s)
        atomic_fetch_add(&s->refs, 1);
    return s;
}

void fw_image_states_unref(fw_image_states *s)
{
    if (s && atomic_fetch_sub(&s->refs, 1) == 1)
        free(s);
}

const fw_image_state *fw_node_info_image(const fw_node_info *ni, const char *image)
{
    if (!ni->image_states)
        return NULL;
    fw_image_state key = {image, 0, 0};
    return bsearch(&key, ni->image_states->items, ni->image_states->n, sizeof(fw_image_state),
                   cmp_image);
}
