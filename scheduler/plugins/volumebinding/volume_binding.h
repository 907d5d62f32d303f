/*
 * scheduler/plugins/volumebinding/volume_binding.h - what the volume plugins
 * (VolumeBinding, VolumeRestrictions, VolumeZone, NodeVolumeLimits) share
 * besides their descriptors: the listers of PersistentVolumes,
 * PersistentVolumeClaims, StorageClasses and CSINodes they read
 * (kube-scheduler's shared informer listers), and constructors taking
 * explicit listers (unit tests).
 *
 * Listers: the scheduler's informer factory's (kube/machinery/factory.h,
 * kube-scheduler's SharedInformerFactory listers), which the handle gives
 * (h->svc.informers): every volume plugin of every profile reads the same
 * four informers, created by the first request. Tests fill a fake
 * factory's listers with kube_lister_apply() (factory_testing.h).
 *
 * Changes: every add/update/delete of a PV or PVC moves the generation
 * that plugin_vol_listers_wait() waits on (VolumeBinding's PreBind waits
 * for the PV controller this way instead of polling every second).
 *
 * Events: the scheduler's event handlers (eventhandlers.c) requeue the pods
 * these plugins rejected on the events they register (EnqueueExtensions).
 *
 * Threads: every function is thread-safe.
 * Memory: plugin_vol_listers_new() returns a reference released with
 * plugin_vol_listers_release(); get returns a new object reference.
 */
#ifndef PLUGIN_VOLUME_BINDING_H
#define PLUGIN_VOLUME_BINDING_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "framework/framework.h"
#include "kube/machinery/informer.h"
#include "kube/codec/object.h"

struct kube_factory;
struct kube_lister;

typedef enum plugin_vol_kind {
    PLUGIN_VOL_PV = 0,
    PLUGIN_VOL_PVC,
    PLUGIN_VOL_SC,
    PLUGIN_VOL_CSINODE,
    PLUGIN_VOL_KINDS
} plugin_vol_kind;

typedef struct plugin_vol_listers plugin_vol_listers;

/* The factory's lister of kind k (created on first request); as
 * kube_factory_lister(). */
int plugin_vol_lister_of(struct kube_factory *f, plugin_vol_kind k, struct kube_lister **out);
/* The four listers of f (f NULL: listers that list nothing). KUBE_OK,
 * KUBE_ENOMEM or the factory's error. */
int plugin_vol_listers_new(struct kube_factory *f, plugin_vol_listers **out);
/* Takes one more reference; returns l. */
plugin_vol_listers *plugin_vol_listers_ref(plugin_vol_listers *l);
/* Drops a reference; the last one frees l (never the factory's listers).
 * NULL-safe. */
void plugin_vol_listers_release(plugin_vol_listers *l);

/* The object ns/name (ns "" for cluster-scoped kinds): a new reference or
 * NULL. */
kube_object *plugin_vol_listers_get(plugin_vol_listers *l, plugin_vol_kind k, const char *ns,
                                    const char *name);
/* Calls fn for every object of kind k (under the store's read lock: fn
 * must not call back into the listers). */
void plugin_vol_listers_foreach(plugin_vol_listers *l, plugin_vol_kind k,
                                void (*fn)(void *ud, kube_object *obj), void *ud);

/* The change generation (PV and PVC events). */
uint64_t plugin_vol_listers_generation(plugin_vol_listers *l);
/* Waits until the generation differs from *gen or timeout_ms passes;
 * stores the current generation in *gen. 1 when it changed. */
int plugin_vol_listers_wait(plugin_vol_listers *l, uint64_t *gen, long timeout_ms);
/* The plugins' create() with explicit listers (a reference is taken).
 * Same contract as fw_plugin_desc.create otherwise; destroy with the
 * descriptor's destroy. args as the descriptor's default_args output
 * (ignored by the plugins without args). */
typedef int (*plugin_vol_new_fn)(const cJSON *args, fw_handle *h, plugin_vol_listers *l,
                                 void **self, char *err, size_t errlen);
int plugin_volume_binding_new(const cJSON *args, fw_handle *h, plugin_vol_listers *l, void **self,
                              char *err, size_t errlen);
int plugin_volume_restrictions_new(const cJSON *args, fw_handle *h, plugin_vol_listers *l,
                                   void **self, char *err, size_t errlen);
int plugin_volume_zone_new(const cJSON *args, fw_handle *h, plugin_vol_listers *l, void **self,
                           char *err, size_t errlen);
int plugin_node_volume_limits_new(const cJSON *args, fw_handle *h, plugin_vol_listers *l,
                                  void **self, char *err, size_t errlen);

/* fw_plugin_desc.create of a volume plugin: new_fn over the listers of h's
 * informer factory (taken here, released before returning; without a
 * factory, listers that list nothing). Failing to get them writes "adding the volume
 * informers: <error>" to err and returns the error (*self NULL). */
int plugin_vol_create(const cJSON *args, fw_handle *h, plugin_vol_new_fn new_fn, void **self,
                      char *err, size_t errlen);

/* VolumeBinding's conflict reasons (binder.go). */
#define VB_REASON_BIND_CONFLICT "node(s) didn't find available persistent volumes to bind"
#define VB_REASON_NODE_CONFLICT "node(s) had volume node affinity conflict"
#define VB_REASON_NOT_ENOUGH_SPACE "node(s) did not have enough free storage"
#define VB_REASON_PV_NOT_EXIST \
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
#define VB_REASON_UNBOUND_IMMEDIATE "pod has unbound immediate PersistentVolumeClaims"

#endif
