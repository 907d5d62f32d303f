/*
 * apiserver/pinvolumes.c - the local-volume check of /pin: the VM's and
 * its instance's claims and their PersistentVolumes, read with GETs, judged
 * by kube/types/localvolumes.h. The contract is in pinvolumes.h.
 */
#include "pinvolumes.h"

#include <stdio.h>
#include <string.h>

#include "kube/codec/object.h"
#include "kube/transport/api.h"
#include "kube/types/kubevirt.h"
#include "kube/types/localvolumes.h"
#include "kube/types/node.h"
#include "kube/util/errors.h"

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

/* Where the VM is to go: to node (a pin), or anywhere but pinned, among
 * nodes (an unpin). */
typedef struct target {
    const kube_node *node;
    const char *pinned;
    kube_lister *nodes;
} target;

/* 1 when pv (bound to claim cl) keeps the VM from t, with why (size n). */
static int refuses(const target *t, const kube_vm_claim *cl, const kube_pv *pv, char *why, size_t n)
{
    if (t->node && !kube_pv_allows_node(pv, t->node)) {
        kube_pv_conflict_describe(cl, pv, t->node->base.meta.name, why, n);
        return 1;
    }
    if (!t->node && kube_pv_holds_to_node(pv, t->pinned, t->nodes)) {
        snprintf(why, n,
                 "volume \"%s\" (PersistentVolumeClaim \"%s\", PersistentVolume \"%s\") lives "
                 "on node %s, and its node affinity allows no other node",
                 cl->volume, cl->claim, pv->base.meta.name, t->pinned);
        return 1;
    }
    return 0;
}

/* Checks each claim of cl against t. */
static int check_claims(kube_client *c, const char *ns, const kube_vm_claims *cl, const target *t,
                        char *why, size_t n, kube_status *st)
{
    int rc = KUBE_OK;

    for (size_t i = 0; rc == KUBE_OK && i < cl->n; i++) {
        kube_object *obj = NULL;
        const kube_pv *pv;
        rc = claim_pv(c, ns, cl->items[i].claim, &obj, st);
        pv = kube_pv_from(obj);
        if (rc == KUBE_OK && pv && refuses(t, &cl->items[i], pv, why, n))
            rc = KUBE_ECONFLICT;
        kube_object_unref(obj);
    }
    return rc;
}

/* The claims of VM ns/name (vm: its JSON, and its instance, read here)
 * into cl; vmi receives the instance's JSON (the caller frees). */
static int read_claims(kube_client *c, const char *ns, const char *name, const cJSON *vm,
                       kube_vm_claims *cl, cJSON **vmi, kube_status *st)
{
    int rc = kube_api_get(c, &KUBE_RES_VMIS, ns, name, vmi, st);

    if (rc != KUBE_OK && rc != KUBE_ENOTFOUND)
        return rc;
    kube_vm_claims_collect(vm, *vmi, cl);
    return KUBE_OK;
}

int apis_pin_volumes_check(kube_client *c, const char *ns, const char *name, const cJSON *vm,
                           const cJSON *node, char *why, size_t n, kube_status *st)
{
    kube_vm_claims cl = {.n = 0};
    kube_object *nobj = NULL;
    cJSON *vmi = NULL;
    int rc = read_claims(c, ns, name, vm, &cl, &vmi, st);

    if (rc == KUBE_OK && cl.n)
        rc = kube_node_codec.decode(node, &nobj);
    if (rc == KUBE_OK && cl.n) {
        target t = {.node = kube_node_from(nobj)};
        rc = check_claims(c, ns, &cl, &t, why, n, st);
    }
    kube_object_unref(nobj);
    cJSON_Delete(vmi);
    return rc;
}

int apis_unpin_volumes_check(kube_client *c, kube_lister *nodes, const char *ns, const char *name,
                             const cJSON *vm, const char *pinned, char *why, size_t n,
                             kube_status *st)
{
    kube_vm_claims cl = {.n = 0};
    cJSON *vmi = NULL;
    target t = {.pinned = pinned, .nodes = nodes};
    int rc = read_claims(c, ns, name, vm, &cl, &vmi, st);

    if (rc == KUBE_OK && cl.n)
        rc = check_claims(c, ns, &cl, &t, why, n, st);
    cJSON_Delete(vmi);
    return rc;
}
