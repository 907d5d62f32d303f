/*
 * kube/types/localvolumes.c - a VM's claims and whether the PersistentVolumes
 * they are bound to allow a node (see localvolumes.h).
 */
#include "kube/types/localvolumes.h"

#include <stdio.h>
#include <string.h>

#define HOSTNAME_LABEL "kubernetes.io/hostname"

/* The non-empty string obj.a[.b], or NULL. Borrowed. */
static const char *str_at(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, a);

    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsString(v) && *v->valuestring ? v->valuestring : NULL;
}

void kube_vm_claims_add(kube_vm_claims *out, const char *volume, const char *claim)
{
    if (!claim || out->n >= KUBE_VM_MAX_CLAIMS)
        return;
    for (size_t i = 0; i < out->n; i++)
        if (strcmp(out->items[i].claim, claim) == 0)
            return;
    out->items[out->n].volume = volume ? volume : claim;
    out->items[out->n].claim = claim;
    out->n++;
}

/* volumes[] of a VM template or VMI spec: persistentVolumeClaim and
 * dataVolume sources. */
static void add_volumes(const cJSON *spec, kube_vm_claims *out)
{
    const cJSON *v;

    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(spec, "volumes"))
    {
        const char *name = str_at(v, "name", NULL);
        const char *claim = str_at(v, "persistentVolumeClaim", "claimName");
        kube_vm_claims_add(out, name, claim ? claim : str_at(v, "dataVolume", "name"));
    }
}

void kube_vm_claims_collect(const cJSON *vm, const cJSON *vmi, kube_vm_claims *out)
{
    const cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(vm, "spec"), "template"),
        "spec");
    const cJSON *st;

    add_volumes(tmpl, out);
    add_volumes(cJSON_GetObjectItemCaseSensitive(vmi, "spec"), out);
    cJSON_ArrayForEach(st, cJSON_GetObjectItemCaseSensitive(
                               cJSON_GetObjectItemCaseSensitive(vmi, "status"), "volumeStatus"))
        kube_vm_claims_add(out, str_at(st, "name", NULL),
                           str_at(st, "persistentVolumeClaimInfo", "claimName"));
}

void kube_vm_claims_of(const kube_vm *vm, const kube_vmi *vmi, kube_vm_claims *out)
{
    for (uint32_t i = 0; vm && i < vm->n_claims; i++)
        kube_vm_claims_add(out, vm->claims[i].volume, vm->claims[i].claim);
    for (uint32_t i = 0; vmi && i < vmi->n_claims; i++)
        kube_vm_claims_add(out, vmi->claims[i].volume, vmi->claims[i].claim);
}

/* The first value of an In requirement on key, or NULL. */
static const char *first_in(const kube_requirement *r, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (r[i].op == KUBE_SEL_IN && r[i].n_values > 0 && strcmp(r[i].key, key) == 0)
            return r[i].values[0];
    return NULL;
}

const char *kube_pv_home(const kube_pv *pv)
{
    const kube_node_selector_term *t;
    const char *home;

    if (!pv->node_affinity || pv->node_affinity->n_terms == 0)
        return NULL;
    t = &pv->node_affinity->terms[0];
    home = first_in(t->match_expressions, t->n_match_expressions, HOSTNAME_LABEL);
    return home ? home : first_in(t->match_fields, t->n_match_fields, "metadata.name");
}

int kube_pv_allows_node(const kube_pv *pv, const kube_node *node)
{
    const kube_meta *m = &node->base.meta;

    return kube_pv_node_affinity_matches(pv, m->labels, m->n_labels);
}

void kube_pv_conflict_describe(const kube_vm_claim *cl, const kube_pv *pv, const char *node,
                               char *why, size_t n)
{
    const char *home = kube_pv_home(pv);

    snprintf(why, n,
             "volume \"%s\" (PersistentVolumeClaim \"%s\", PersistentVolume \"%s\") lives on %s%s, "
             "and its node affinity does not allow node %s",
             cl->volume, cl->claim, pv->base.meta.name, home ? "node " : "other nodes",
             home ? home : "", node);
}

typedef struct elsewhere {
    const kube_pv *pv;
    const char *node;
    int found;
} elsewhere;

/* kube_lister_foreach() callback: a node other than e->node that the PV
 * allows. */
static void allows_other(void *ud, kube_object *obj)
{
    elsewhere *e = ud;

    if (!e->found && strcmp(obj->meta.name, e->node) != 0 &&
        kube_pv_allows_node(e->pv, kube_node_from(obj)))
        e->found = 1;
}

int kube_pv_holds_to_node(const kube_pv *pv, const char *node, kube_lister *nodes)
{
    elsewhere e = {pv, node, 0};

    if (!pv || !pv->node_affinity)
        return 0;
    kube_lister_foreach(nodes, allows_other, &e);
    return !e.found;
}
