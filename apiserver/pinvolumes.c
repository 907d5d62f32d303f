/*
 * apiserver/pinvolumes.c - the local-volume check of /pin: the VM's and
 * its instance's claims, their PersistentVolumes, and whether their node
 * affinity allows the target node. The contract is in pinvolumes.h.
 */
#include "pinvolumes.h"

#include <stdio.h>
#include <string.h>

#include "kube/codec/object.h"
#include "kube/transport/api.h"
#include "kube/types/kubevirt.h"
#include "kube/types/node.h"
#include "kube/util/errors.h"

#define HOSTNAME_LABEL "kubernetes.io/hostname"

/* The non-empty string obj.a[.b], or NULL. Borrowed. */
static const char *str_at(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, a);

    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsString(v) && *v->valuestring ? v->valuestring : NULL;
}

/* Appends a claim not yet listed (claim NULL: nothing). */
static void add_claim(apis_pin_claims *out, const char *volume, const char *claim)
{
    if (!claim || out->n >= APIS_PIN_MAX_CLAIMS)
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
static void add_volumes(const cJSON *spec, apis_pin_claims *out)
{
    const cJSON *v;

    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(spec, "volumes"))
    {
        const char *name = str_at(v, "name", NULL);
        const char *claim = str_at(v, "persistentVolumeClaim", "claimName");
        add_claim(out, name, claim ? claim : str_at(v, "dataVolume", "name"));
    }
}

void apis_pin_claims_collect(const cJSON *vm, const cJSON *vmi, apis_pin_claims *out)
{
    const cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(vm, "spec"), "template"),
        "spec");
    const cJSON *st;

    add_volumes(tmpl, out);
    add_volumes(cJSON_GetObjectItemCaseSensitive(vmi, "spec"), out);
    cJSON_ArrayForEach(st, cJSON_GetObjectItemCaseSensitive(
                               cJSON_GetObjectItemCaseSensitive(vmi, "status"), "volumeStatus"))
        add_claim(out, str_at(st, "name", NULL),
                  str_at(st, "persistentVolumeClaimInfo", "claimName"));
}

/* The first value of an In requirement on key, or NULL. */
static const char *first_in(const kube_requirement *r, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (r[i].op == KUBE_SEL_IN && r[i].n_values > 0 && strcmp(r[i].key, key) == 0)
            return r[i].values[0];
    return NULL;
}

const char *apis_pin_pv_home(const kube_pv *pv)
{
    const kube_node_selector_term *t;
    const char *home;

    if (!pv->node_affinity || pv->node_affinity->n_terms == 0)
        return NULL;
    t = &pv->node_affinity->terms[0];
    home = first_in(t->match_expressions, t->n_match_expressions, HOSTNAME_LABEL);
    return home ? home : first_in(t->match_fields, t->n_match_fields, "metadata.name");
}

/* GET name of res in ns, decoded with codec. KUBE_ENOTFOUND passes. */
static int get_decoded(kube_client *c, const kube_resource *res, const kube_codec *codec,
                       const char *ns, const char *name, kube_object **out, kube_status *st)
{
    cJSON *json = NULL;
    int rc = kube_api_get(c, res, ns, name, &json, st);

    *out = NULL;
    if (rc == KUBE_OK)
        rc = codec->decode(json, out);
    cJSON_Delete(json);
    return rc;
}

/* The PV one claim is bound to (*pv NULL: unbound or missing). */
static int claim_pv(kube_client *c, const char *ns, const char *claim, kube_object **pv,
                    kube_status *st)
{
    kube_object *pvc = NULL;
    const kube_pvc *p;
    int rc = get_decoded(c, &KUBE_RES_PVCS, &kube_pvc_codec, ns, claim, &pvc, st);

    *pv = NULL;
    p = kube_pvc_from(pvc);
    if (rc == KUBE_OK && p && *p->volume_name)
        rc = get_decoded(c, &KUBE_RES_PVS, &kube_pv_codec, NULL, p->volume_name, pv, st);
    kube_object_unref(pvc);
    return rc == KUBE_ENOTFOUND ? KUBE_OK : rc;
}

/* The Conflict's reason: which volume lives where, and the refused node. */
static void describe(const apis_pin_claim *cl, const kube_pv *pv, const char *node, char *why,
                     size_t n)
{
    const char *home = apis_pin_pv_home(pv);

    snprintf(why, n,
             "volume \"%s\" (PersistentVolumeClaim \"%s\", PersistentVolume \"%s\") lives on %s%s, "
             "and its node affinity does not allow node %s",
             cl->volume, cl->claim, pv->base.meta.name, home ? "node " : "other nodes",
             home ? home : "", node);
}

/* Checks each claim of cl against the node's labels. */
static int check_claims(kube_client *c, const char *ns, const apis_pin_claims *cl,
                        const kube_node *node, char *why, size_t n, kube_status *st)
{
    const kube_meta *m = &node->base.meta;
    int rc = KUBE_OK;

    for (size_t i = 0; rc == KUBE_OK && i < cl->n; i++) {
        kube_object *obj = NULL;
        const kube_pv *pv;
        rc = claim_pv(c, ns, cl->items[i].claim, &obj, st);
        pv = kube_pv_from(obj);
        if (rc == KUBE_OK && pv && !kube_pv_node_affinity_matches(pv, m->labels, m->n_labels)) {
            describe(&cl->items[i], pv, m->name, why, n);
            rc = KUBE_ECONFLICT;
        }
        kube_object_unref(obj);
    }
    return rc;
}

int apis_pin_volumes_check(kube_client *c, const char *ns, const char *name, const cJSON *vm,
                           const cJSON *node, char *why, size_t n, kube_status *st)
{
    apis_pin_claims cl = {.n = 0};
    kube_object *nobj = NULL;
    cJSON *vmi = NULL;
    int rc = kube_api_get(c, &KUBE_RES_VMIS, ns, name, &vmi, st);

    if (rc != KUBE_OK && rc != KUBE_ENOTFOUND)
        return rc;
    apis_pin_claims_collect(vm, vmi, &cl);
    rc = cl.n ? kube_node_codec.decode(node, &nobj) : KUBE_OK;
    if (rc == KUBE_OK && cl.n)
        rc = check_claims(c, ns, &cl, kube_node_from(nobj), why, n, st);
    kube_object_unref(nobj);
    cJSON_Delete(vmi);
    return rc;
}
