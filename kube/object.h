/*
 * kube/object.h - the common shape of every decoded Kubernetes object.
 *
 * Decoders (kube/pod.h, kube/node.h, kube/kubevirt.h, kube/lease.h, ...) turn
 * a cJSON tree into a compact, immutable C struct that begins with a
 * kube_object. Only the fields we use are kept; no JSON tree is retained.
 *
 * Reference counting: a decoded object starts with one reference owned by
 * whoever decoded it. Informer stores hold one reference per stored object
 * and hand out new ones (kube_object_ref); anyone holding a reference
 * releases it with kube_object_unref(), and the last release frees the
 * object through its codec. Objects are immutable after decoding, so any
 * thread may read one it holds a reference to.
 *
 * Strings in a kube_meta are owned by the object and live as long as it.
 */
#ifndef KUBE_OBJECT_H
#define KUBE_OBJECT_H

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kube_kv {
    const char *key;
    const char *value;
} kube_kv;

typedef struct kube_owner_ref {
    const char *api_version; /* "kubevirt.io/v1" */
    const char *kind;        /* "VirtualMachineInstance" */
    const char *name;
    const char *uid;
    int controller;          /* ownerReferences[].controller == true */
} kube_owner_ref;

typedef struct kube_meta {
    const char *name;
    const char *namespace_;       /* "" for cluster-scoped objects */
    const char *uid;
    const char *resource_version;
    const char *generate_name;
    kube_kv *labels;
    size_t n_labels;
    kube_kv *annotations;
    size_t n_annotations;
    kube_owner_ref *owners;
    size_t n_owners;
    int64_t creation_unix;        /* seconds; 0 when absent */
    int deleting;                 /* metadata.deletionTimestamp is set */
} kube_meta;

struct kube_codec;

typedef struct kube_object {
    atomic_int refs;
    const struct kube_codec *codec;
    kube_meta meta;
} kube_object;

/* How to decode and free one kind. decode() returns KUBE_OK with *out
 * holding one reference, or KUBE_EPARSE/KUBE_ENOMEM with *out NULL; it never
 * crashes on malformed input (wrong types, missing fields). */
typedef struct kube_codec {
    const char *kind;
    int (*decode)(const cJSON *json, kube_object **out);
    void (*destroy)(kube_object *obj);
} kube_codec;

/* Takes one more reference; returns obj. NULL-safe. */
kube_object *kube_object_ref(kube_object *obj);
/* Drops one reference; frees the object on the last. NULL-safe. */
void kube_object_unref(kube_object *obj);

/* Lookups; NULL when absent. */
const char *kube_meta_label(const kube_meta *m, const char *key);
const char *kube_meta_annotation(const kube_meta *m, const char *key);
/* The ownerReference with controller=true, or NULL. */
const kube_owner_ref *kube_meta_controller(const kube_meta *m);

/* Decodes metadata from a JSON object into m, allocating strings from the
 * given arena (see kube/arena.h). For decoder implementations. */
struct kube_arena;
int kube_meta_decode(const cJSON *metadata, struct kube_arena *arena, kube_meta *m);

#endif
