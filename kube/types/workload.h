/*
 * kube/types/workload.h - the objects kube-scheduler's helper.DefaultSelector
 * reads to build a pod's default topology spread selector, decoded down to
 * what it needs: metadata (namespace, name, uid) and the selector.
 *
 *   v1 Services                spec.selector (map; nil matches no pod)
 *   v1 ReplicationControllers  spec.selector (map)
 *   apps/v1 ReplicaSets        spec.selector (metav1.LabelSelector)
 *   apps/v1 StatefulSets       spec.selector (metav1.LabelSelector)
 *
 * The four kinds share one struct, kube_workload. The listers read them
 * from an informer factory's listers (the scheduler) or from plain stores
 * (tests).
 *
 * Memory: a kube_workload is one allocation owned through its reference
 * count (kube/codec/object.h); every pointer inside lives as long as the object.
 * A kube_workload_listers is a plain struct of borrowed pointers (the factory
 * owns the listers, the caller the stores); it allocates nothing.
 */
#ifndef KUBE_WORKLOAD_H
#define KUBE_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "kube/transport/api.h"
#include "kube/codec/object.h"
#include "kube/codec/selector.h"

struct kube_factory;
struct kube_lister;
struct kube_store;

typedef enum kube_workload_kind {
    KUBE_WORKLOAD_SERVICE = 0,
    KUBE_WORKLOAD_RC, /* ReplicationController */
    KUBE_WORKLOAD_RS, /* ReplicaSet */
    KUBE_WORKLOAD_SS, /* StatefulSet */
    KUBE_WORKLOAD_KINDS
} kube_workload_kind;

extern const kube_resource KUBE_RES_SERVICES;               /* v1 services */
extern const kube_resource KUBE_RES_REPLICATIONCONTROLLERS; /* v1 replicationcontrollers */
extern const kube_resource KUBE_RES_REPLICASETS;            /* apps/v1 replicasets */
extern const kube_resource KUBE_RES_STATEFULSETS;           /* apps/v1 statefulsets */

/* One codec per kind, indexed by kube_workload_kind. */
extern const kube_codec kube_workload_codecs[KUBE_WORKLOAD_KINDS];

typedef struct kube_workload {
    kube_object base;
    kube_workload_kind kind;
    /* Service, ReplicationController: spec.selector as a map; has_map 0
     * when it is nil (absent or null), 1 for a map, even an empty one. */
    const kube_kv *map;
    uint32_t n_map;
    int has_map;
    /* ReplicaSet, StatefulSet: spec.selector; NULL when nil. */
    const kube_label_selector *selector;
} kube_workload;

/* The kube_workload behind obj, or NULL when obj is NULL or not one of the
 * four kinds. Borrowed. */
const kube_workload *kube_workload_from(const kube_object *obj);

/* 1 when a map selector selects these labels (every pair present with the
 * same value, as labels.Set(m).AsSelectorPreValidated().Matches); an empty
 * map selects everything. A nil map (has_map 0) selects nothing. */
int kube_workload_map_matches(const kube_workload *w, const kube_kv *labels, size_t n);

/* Where each kind is read from: of[k] (an informer factory's lister) when
 * set, else store[k] when set, else nothing (an empty lister). */
typedef struct kube_workload_listers {
    struct kube_lister *of[KUBE_WORKLOAD_KINDS];
    struct kube_store *store[KUBE_WORKLOAD_KINDS];
} kube_workload_listers;

/* Points l->of at the factory's lister of each kind (all namespaces; the
 * informers are created on first request and owned by the factory). On
 * error l is unchanged. Returns KUBE_OK or kube_factory_lister()'s error. */
int kube_workload_listers_add(struct kube_factory *f, kube_workload_listers *l);

/* The object of kind k at ns/name: a new reference the caller releases
 * with kube_object_unref(), or NULL. */
kube_object *kube_workload_get(const kube_workload_listers *l, kube_workload_kind k, const char *ns,
                               const char *name);

/* Calls fn for every object of kind k in namespace ns (under the store's
 * read lock: fn must not call back into the lister; the object is
 * borrowed for the call). */
void kube_workload_foreach_ns(const kube_workload_listers *l, kube_workload_kind k, const char *ns,
                              void (*fn)(void *ud, const kube_workload *w), void *ud);

#endif
