/*
 * kube/types/node.h - v1 Node as the scheduler needs it.
 *
 * Memory: a kube_node is one allocation owned through its reference count
 * (kube/codec/object.h); every pointer inside lives at least as long as the
 * object (taints, scalar resources and image names are usually shared with
 * other objects through the permanent pool of kube/codec/intern.h).
 */
#ifndef KUBE_NODE_H
#define KUBE_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "kube/codec/object.h"
#include "kube/codec/quantity.h"

/* A taint's effect; KUBE_EFFECT_ALL only appears in tolerations (an empty
 * effect tolerates every effect). */
typedef enum kube_taint_effect {
    KUBE_EFFECT_ALL = 0,
    KUBE_EFFECT_NO_SCHEDULE,
    KUBE_EFFECT_PREFER_NO_SCHEDULE,
    KUBE_EFFECT_NO_EXECUTE
} kube_taint_effect;

typedef struct kube_taint {
    const char *key;
    const char *value;        /* "" when unset */
    kube_taint_effect effect; /* never KUBE_EFFECT_ALL */
} kube_taint;

/* An extended/scalar resource: devices.kubevirt.io/kvm, hugepages-2Mi,
 * attachable-volumes-*, example.com/gpu ... (Quantity.Value()). */
typedef struct kube_scalar {
    const char *name;
    int64_t value;
} kube_scalar;

/* framework.Resource: what a node offers or what a pod requests. */
typedef struct kube_resources {
    int64_t milli_cpu;          /* Quantity.MilliValue() */
    int64_t memory;             /* bytes */
    int64_t ephemeral_storage;  /* bytes */
    int64_t allowed_pods;       /* the "pods" resource (for a pod: its own "pods" request,
                                   which Resource.Add counts but NodeResourcesFit's
                                   SetMaxResource ignores) */
    const kube_scalar *scalars; /* resources for which schedutil.IsScalarResourceName
                                   holds, in first-seen order, names unique */
    size_t n_scalars;
} kube_resources;

/* status.images[i] */
typedef struct kube_node_image {
    const char *const *names;
    size_t n_names;
    int64_t size_bytes;
} kube_node_image;

/* The status of the node's Ready condition (status.conditions). */
typedef enum kube_node_ready {
    KUBE_NODE_READY_ABSENT = 0, /* no Ready condition */
    KUBE_NODE_READY_TRUE,
    KUBE_NODE_READY_FALSE,
    KUBE_NODE_READY_UNKNOWN, /* node-lifecycle: the kubelet stopped posting */
} kube_node_ready;

typedef struct kube_node {
    kube_object base;      /* base.meta.name is the node name */
    int unschedulable;     /* spec.unschedulable */
    kube_node_ready ready; /* the Ready condition's status */
    uint32_t n_taints;     /* 32-bit, beside unschedulable: no padding */
    const kube_taint *taints;
    kube_resources allocatable; /* status.allocatable (all zero when absent) */
    const kube_node_image *images;
    size_t n_images;
    /* The Ready condition's lastTransitionTime (unix microseconds) when
     * Ready is False or Unknown: since when the node is lost; 0 when Ready
     * is True or absent, or the time is missing or malformed (parsed only
     * for a lost node: healthy nodes, the hot path, pay nothing). */
    int64_t lost_since_us;
} kube_node;

extern const kube_codec kube_node_codec;

/* The kube_node behind obj (whose codec is kube_node_codec), or NULL when
 * obj is NULL or another kind. Borrowed: no reference is taken. */
const kube_node *kube_node_from(const kube_object *obj);

/* What a pin's node looks like, in the words `kubectl get nodes` uses:
 * "Ready" (Ready condition True), "NotReady" (False), "Unknown" (Unknown,
 * or no Ready condition; kubectl writes NotReady for a condition whose
 * status is Unknown, we keep the unreachable node apart), then
 * ",SchedulingDisabled" when cordoned; "Missing" when node is NULL (no
 * Node object of that name). Writes into out (size n, at least
 * KUBE_NODE_STATUS_MAX). Returns KUBE_OK or KUBE_ERANGE when it does not fit. */
#define KUBE_NODE_STATUS_MAX 32
int kube_node_status(const kube_node *node, char *out, size_t n);

/* The first word of kube_node_status(): "Ready", "NotReady", "Unknown" or
 * "Missing" (static). */
const char *kube_node_ready_word(const kube_node *node);

/* The value of a scalar resource, 0 when absent. */
int64_t kube_resources_scalar(const kube_resources *r, const char *name);
/* 1 when a and b request or offer the same amounts of every resource. */
int kube_resources_equal(const kube_resources *a, const kube_resources *b);

/* v1helper.IsExtendedResourceName: a domain-prefixed name outside
 * kubernetes.io/, not "requests."-prefixed, that is a qualified name once
 * prefixed with "requests.". Returns 1 or 0. */
int kube_is_extended_resource_name(const char *name);

/* schedutil.IsScalarResourceName: extended resources (a domain-prefixed
 * name outside kubernetes.io/ that is a qualified name once prefixed with
 * "requests."), hugepages-*, attachable-volumes-* and kubernetes.io/
 * prefixed native resources. Returns 1 or 0. */
int kube_is_scalar_resource_name(const char *name);

/* ---- For decoder implementations ---- */

/* One entry of a v1.ResourceList. name is borrowed (not copied). */
typedef struct kube_resource_entry {
    const char *name;
    kube_quantity q;
} kube_resource_entry;

struct kube_arena;

/* Reads a JSON ResourceList (an object of quantities; NULL reads as
 * empty) into a malloc'd array the caller frees (*out NULL when empty).
 * Names point into the JSON. A repeated name keeps its last value, as
 * Go's map decoding does. Returns KUBE_OK, KUBE_EPARSE or KUBE_ENOMEM. */
int kube_resource_list_decode(const cJSON *map, kube_resource_entry **out, size_t *n);

/* Sets *out to framework.NewResource(list): cpu (MilliValue), memory,
 * ephemeral-storage and pods (Value), and every scalar resource (Value;
 * names kept with kube_arena_str_shared() and the array shared through
 * kube_arena_share() when the pool takes it, else in the arena); other
 * names are ignored. The list holds each name once. Returns KUBE_OK,
 * KUBE_ERANGE (a used value without an int64 form) or KUBE_ENOMEM. */
int kube_resources_from_list(const kube_resource_entry *list, size_t n, struct kube_arena *a,
                             kube_resources *out);

#endif
