/*
 * scheduler/plugins/interpodaffinity/namespaces.c - the namespace lister of
 * InterPodAffinity and the minimal v1 Namespace codec it decodes with.
 */
#include <stdlib.h>
#include <string.h>

#include "kube/transport/api.h"
#include "kube/util/errors.h"
#include "kube/machinery/factory.h"
#include "kube/machinery/store.h"
#include "plugins/interpodaffinity/inter_pod_affinity.h"
#include "plugins/interpodaffinity/inter_pod_affinity_testing.h"

struct plugin_ns_lister {
    kube_lister *inf; /* the factory's, or the store below */
    kube_store *store;
};

static int namespace_fill(const cJSON *json, struct kube_arena *a, kube_object *obj)
{
    return KUBE_OK; /* metadata (name, labels) is all InterPodAffinity reads */
}

static int namespace_decode(const cJSON *json, kube_object **out)
{
    return kube_object_build(&plugin_namespace_codec, sizeof(kube_object), json, namespace_fill,
                             out);
}

const kube_codec plugin_namespace_codec = {"Namespace", namespace_decode, kube_object_free_block};

int plugin_ns_lister_from_factory(struct kube_factory *f, plugin_ns_lister **out)
{
    kube_informer_options opts = {0};
    plugin_ns_lister *l = calloc(1, sizeof(*l));
    int rc;

    *out = NULL;
    if (!l)
        return KUBE_ENOMEM;
    opts.resource = &KUBE_RES_NAMESPACES;
    opts.codec = &plugin_namespace_codec;
    if ((rc = kube_factory_lister(f, &opts, &l->inf)) != KUBE_OK) {
        free(l);
        return rc;
    }
    *out = l;
    return KUBE_OK;
}

int plugin_ns_lister_from_store(struct kube_store *store, plugin_ns_lister **out)
{
    plugin_ns_lister *l = calloc(1, sizeof(*l));

    *out = l;
    if (!l)
        return KUBE_ENOMEM;
    l->store = store;
    return KUBE_OK;
}

void plugin_ns_lister_free(plugin_ns_lister *l)
{
    free(l);
}

kube_object *plugin_ns_lister_get(const plugin_ns_lister *l, const char *name)
{
    return l->inf ? kube_lister_get(l->inf, "", name) : kube_store_get(l->store, "", name);
}

typedef struct match_ctx {
    const kube_label_selector *sel;
    void (*fn)(void *ud, const char *name);
    void *ud;
} match_ctx;

static void match_one(void *ud, kube_object *obj)
{
    const match_ctx *m = ud;
    if (kube_label_selector_matches(m->sel, obj->meta.labels, obj->meta.n_labels))
        m->fn(m->ud, obj->meta.name);
}

void plugin_ns_lister_each_match(const plugin_ns_lister *l, const kube_label_selector *sel,
                                 void (*fn)(void *ud, const char *name), void *ud)
{
    match_ctx m = {sel, fn, ud};
    if (l->inf)
        kube_lister_foreach(l->inf, match_one, &m);
    else
        kube_store_foreach(l->store, match_one, &m);
}
