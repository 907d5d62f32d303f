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

/* Checks each claim of cl against the node's labels. */
static int check_claims(kube_client *c, const char *ns, const kube_vm_claims *cl,
                        const kube_node *node, char *why, size_t n, kube_status *st)
{
    int rc = KUBE_OK;

    for (size_t i = 0; rc == KUBE_OK && i < cl->n; i++) {
        kube_object *obj = NULL;
        const kube_pv *pv;
        rc = claim_pv(c, ns, cl->items[i].claim, &obj, st);
        pv = kube_pv_from(obj);
        if (rc == KUBE_OK && pv && !kube_pv_allows_node(pv, node)) {
            kube_pv_conflict_describe(&cl->items[i], pv, node->base.meta.name, why, n);
            rc = KUBE_ECONFLICT;
        }
        kube_object_unref(obj);
    }
    return rc;
}

int apis_pin_volumes_check(kube_client *c, const char *ns, const char *name, const cJSON *vm,
                           const cJSON *node, char *why, size_t n, kube_status *st)
{
    kube_vm_claims cl = {.n = 0};
    kube_object *nobj = NULL;
    cJSON *vmi = NULL;
    int rc = kube_api_get(c, &KUBE_RES_VMIS, ns, name, &vmi, st);

    if (rc != KUBE_OK && rc != KUBE_ENOTFOUND)
        return rc;
    kube_vm_claims_collect(vm, vmi, &cl);
    rc = cl.n ? kube_node_codec.decode(node, &nobj) : KUBE_OK;
    if (rc == KUBE_OK && cl.n)
        rc = check_claims(c, ns, &cl, kube_node_from(nobj), why, n, st);
    kube_object_unref(nobj);
    cJSON_Delete(vmi);
    return rc;
}
