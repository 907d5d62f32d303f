/*
 * tests/unit/test_plugin_volume_util.h - what the volume plugin groups
 * (test_plugin_volume_*.c, test_plugin_node_volume_limits.c) share: a
 * "world" of PersistentVolumes, PersistentVolumeClaims, StorageClasses and
 * CSINodes in kube_stores behind store-backed listers, objects written in
 * single-quoted JSON (tp_json), and plugin instances made through the
 * plugins' explicit-listers constructors.
 *
 * Memory: vt_world_new() / vt_world_free(); vt_plugin() returns a
 * tp_plugin freed with tp_plugin_free(). Failures abort the test.
 */
#ifndef TEST_PLUGIN_VOLUME_UTIL_H
#define TEST_PLUGIN_VOLUME_UTIL_H

#include "plugins/volumebinding/volume_binding.h"
#include "unit/test_plugin_util.h"

struct kube_factory;

/* A fake informer factory (kube/machinery/factory.h) and the volume
 * listers over it. */
typedef struct vt_world {
    struct kube_factory *informers;
    plugin_vol_listers *l;
} vt_world;

vt_world *vt_world_new(void);
void vt_world_free(vt_world *w);
/* Decodes the object (single-quoted JSON; a PVC without namespace goes to
 * "default") and adds or replaces it. */
void vt_put(vt_world *w, plugin_vol_kind k, const char *json);
void vt_putf(vt_world *w, plugin_vol_kind k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Removes ns/name. */
void vt_delete(vt_world *w, plugin_vol_kind k, const char *ns, const char *name);

/* A plugin instance of one of the volume plugins (desc selects which),
 * reading w. args single-quoted JSON or NULL (VolumeBinding only). */
tp_plugin *vt_plugin(const fw_plugin_desc *desc, vt_world *w, const char *args, fw_snapshot *snap);

#endif
