/*
 * scheduler/plugins/volumebinding/listers.c - the volume plugins' view of
 * the factory's PV / PVC / StorageClass / CSINode listers and their change
 * generation (see volume_binding.h).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "kube/machinery/factory.h"
#include "kube/types/storage.h"
#include "kube/util/errors.h"
#include "plugins/volumebinding/volume_binding.h"

struct plugin_vol_listers {
    atomic_int refs;
    kube_lister *of[PLUGIN_VOL_KINDS]; /* the factory's; NULL: no factory */
};

static const kube_resource *const kind_res[PLUGIN_VOL_KINDS] = {
    &KUBE_RES_PVS,
    &KUBE_RES_PVCS,
    &KUBE_RES_STORAGECLASSES,
    &KUBE_RES_CSINODES,
};
static const kube_codec *const kind_codec[PLUGIN_VOL_KINDS] = {
    &kube_pv_codec,
    &kube_pvc_codec,
    &kube_storage_class_codec,
    &kube_csi_node_codec,
};

int plugin_vol_lister_of(struct kube_factory *f, plugin_vol_kind k, kube_lister **out)
{
    kube_informer_options o = {0};

    o.resource = kind_res[k];
    o.codec = kind_codec[k];
    return kube_factory_lister(f, &o, out);
}

int plugin_vol_listers_new(struct kube_factory *f, plugin_vol_listers **out)
{
    plugin_vol_listers *l = calloc(1, sizeof(*l));
    int rc = KUBE_OK;

    *out = NULL;
    if (!l)
        return KUBE_ENOMEM;
    atomic_init(&l->refs, 1);
    for (int k = 0; f && rc == KUBE_OK && k < PLUGIN_VOL_KINDS; k++)
        rc = plugin_vol_lister_of(f, (plugin_vol_kind)k, &l->of[k]);
    if (rc != KUBE_OK) {
        free(l);
        return rc;
    }
    *out = l;
    return KUBE_OK;
}

plugin_vol_listers *plugin_vol_listers_ref(plugin_vol_listers *l)
{
    atomic_fetch_add(&l->refs, 1);
    return l;
}

void plugin_vol_listers_release(plugin_vol_listers *l)
{
    if (l && atomic_fetch_sub(&l->refs, 1) == 1)
        free(l);
}

/* ---- reads ---- */

kube_object *plugin_vol_listers_get(plugin_vol_listers *l, plugin_vol_kind k, const char *ns,
                                    const char *name)
{
    return kube_lister_get(l->of[k], ns, name);
}

void plugin_vol_listers_foreach(plugin_vol_listers *l, plugin_vol_kind k,
                                void (*fn)(void *ud, kube_object *obj), void *ud)
{
    kube_lister_foreach(l->of[k], fn, ud);
}

/* ---- change generation: PVs and PVCs ---- */

uint64_t plugin_vol_listers_generation(plugin_vol_listers *l)
{
    return kube_listers_generation(l->of, PLUGIN_VOL_PVC + 1);
}

int plugin_vol_listers_wait(plugin_vol_listers *l, uint64_t *gen, long timeout_ms)
{
    return kube_listers_wait(l->of, PLUGIN_VOL_PVC + 1, gen, timeout_ms);
}

/* ---- plugin creation ---- */

int plugin_vol_create(const cJSON *args, fw_handle *h, plugin_vol_new_fn new_fn, void **self,
                      char *err, size_t errlen)
{
    plugin_vol_listers *l;
    int rc = plugin_vol_listers_new(h->svc.informers, &l);

    *self = NULL;
    if (rc != KUBE_OK) {
        snprintf(err, errlen, "adding the volume informers: %s", kube_strerror(rc));
        return rc;
    }
    rc = new_fn(args, h, l, self, err, errlen);
    plugin_vol_listers_release(l);
    return rc;
}
