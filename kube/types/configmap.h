/*
 * kube/types/configmap.h - v1 ConfigMap (data only; binaryData is not kept).
 *
 * Memory: a kube_configmap is one allocation owned through its reference
 * count (kube/codec/object.h); every pointer inside lives as long as the object.
 */
#ifndef KUBE_CONFIGMAP_H
#define KUBE_CONFIGMAP_H

#include <stddef.h>

#include "kube/codec/object.h"

typedef struct kube_configmap {
    kube_object base;
    const kube_kv *data; /* in document order */
    size_t n_data;
} kube_configmap;

extern const kube_codec kube_configmap_codec;

/* The kube_configmap behind obj, or NULL. Borrowed. */
const kube_configmap *kube_configmap_from(const kube_object *obj);

#endif
