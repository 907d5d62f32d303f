/*
 * scheduler/plugins/volumebinding/volume_binding.h - what the volume plugins
 * (VolumeBinding, VolumeRestrictions, VolumeZone, NodeVolumeLimits) share
 * besides their descriptors: the listers of PersistentVolumes,
 * PersistentVolumeClaims, StorageClasses and CSINodes they read
 * (kube-scheduler's shared informer listers), and constructors taking
 * explicit listers for callers without an informer hub (unit tests).
 *
 * Listers: every volume plugin of every profile built on the same hub
 * shares ONE set of four informers (as kube-scheduler's
 * SharedInformerFactory), added to the hub by the first plugin created
 * and kept until the last one is destroyed (the informers stay with the
 * hub; their handlers reference no lister). A store-backed lister reads
 * caller-filled kube_stores instead (objects decoded with kube/types/storage.h
 * codecs).
 *
 * Changes: every add/update/delete of a PV or PVC bumps a process-wide
 * generation that plugin_vol_listers_wait() waits on (VolumeBinding's
 * PreBind waits for the PV controller this way instead of polling every
 * second). Store-backed listers see changes applied with
 * plugin_vol_listers_handlers().
 *
 * Events: the scheduler's event handlers (kube-scheduler's
 * addAllEventHandlers for PersistentVolume, PersistentVolumeClaim,
 * StorageClass and CSINode) subscribe to the same informers with
 * plugin_vol_listers_subscribe(hub, ...) instead of adding their own, and
 * requeue the pods these plugins rejected.
 *
 * Threads: every function is thread-safe.
 * Memory: acquire/from_stores return a reference released with
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

struct kube_hub;
struct kube_store;

typedef enum plugin_vol_kind {
    PLUGIN_VOL_PV = 0,
    PLUGIN_VOL_PVC,
    PLUGIN_VOL_SC,
    PLUGIN_VOL_CSINODE,
    PLUGIN_VOL_KINDS
} plugin_vol_kind;

typedef struct plugin_vol_listers plugin_vol_listers;

/* The shared listers of hub (created with their informers on first use).
 * KUBE_OK, KUBE_ENOMEM or the hub's error. */
int plugin_vol_listers_acquire(struct kube_hub *hub, plugin_vol_listers **out);
/* Listers over stores[kind] (borrowed, must outlive the listers; a NULL
 * store lists nothing). KUBE_OK or KUBE_ENOMEM. */
int plugin_vol_listers_from_stores(struct kube_store *const stores[PLUGIN_VOL_KINDS],
                                   plugin_vol_listers **out);
/* Takes one more reference; returns l. */
plugin_vol_listers *plugin_vol_listers_ref(plugin_vol_listers *l);
/* Drops a reference; the last one frees the listers (never the informers,
 * which the hub owns, nor the stores). NULL-safe. */
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
/* The handlers of kind k for kube_store_apply() on a store-backed lister's
 * stores (they bump the generation and notify subscribers of l). Borrowed
 * from l. */
const kube_informer_handlers *plugin_vol_listers_handlers(plugin_vol_listers *l, plugin_vol_kind k);

/* An event of kind k: old_obj NULL for an add, new_obj NULL for a delete
 * (both borrowed for the call). Runs on the hub's thread. */
typedef void (*plugin_vol_event_fn)(void *ud, plugin_vol_kind k, kube_object *old_obj,
                                    kube_object *new_obj);
/* Calls fn(ud, ...) for every event of the listers of source: a hub (the
 * listers its volume plugins acquired, now or later) or store-backed
 * listers. ud is borrowed and must stay valid until unsubscribed; fn must
 * not subscribe or unsubscribe. KUBE_OK or KUBE_ENOMEM. */
int plugin_vol_listers_subscribe(const void *source, plugin_vol_event_fn fn, void *ud);
/* Removes the subscription with these three values (no-op when absent). */
void plugin_vol_listers_unsubscribe(const void *source, plugin_vol_event_fn fn, void *ud);

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
 * hub (acquired here, released before returning; without a hub, empty
 * store-backed listers). Failing to get them writes "adding the volume
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
