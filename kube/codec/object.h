/*
 * kube/codec/object.h - the common shape of every decoded Kubernetes object.
 *
 * Decoders (kube/types/pod.h, kube/types/node.h, kube/types/kubevirt.h, ...)
 * turn a cJSON tree into a compact, immutable C struct that begins with a kube_object. Only the
 * fields we use are kept; no JSON tree is retained.
 *
 * Reference counting: a decoded object starts with one reference owned by
 * whoever decoded it. Informer stores hold one reference per stored object
 * and hand out new ones (kube_object_ref); anyone holding a reference
 * releases it with kube_object_unref(), and the last release frees the
 * object through its codec. Objects are immutable after decoding, so any
 * thread may read one it holds a reference to.
 *
 * Strings and arrays in a kube_meta live at least as long as the object:
 * they are in its block, static, or (labels, namespace, generateName,
 * annotation keys, owner kinds) shared with other objects through the
 * permanent pool of kube/codec/intern.h. Never free or modify them.
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

/* 1 when the two sets of pairs hold the same keys with the same values
 * (order ignored; keys are unique within a set). */
int kube_kv_set_equal(const kube_kv *a, size_t na, const kube_kv *b, size_t nb);

typedef struct kube_owner_ref {
    const char *api_version; /* "kubevirt.io/v1" */
    const char *kind;        /* "VirtualMachineInstance" */
    const char *name;
    const char *uid;
    int controller; /* ownerReferences[].controller == true */
} kube_owner_ref;

/* Counts of decoded arrays are 32-bit (a JSON array holds fewer than
 * INT_MAX elements) and grouped, so that the structs every stored object
 * repeats carry no padding. */
typedef struct kube_meta {
    const char *name;
    const char *namespace_; /* "" for cluster-scoped objects */
    const char *uid;
    const char *resource_version;
    const char *generate_name;
    kube_kv *labels;
    kube_kv *annotations;
    kube_owner_ref *owners;
    int64_t creation_unix; /* seconds; 0 when absent */
    uint32_t n_labels;
    uint32_t n_annotations;
    uint32_t n_owners;
    int deleting; /* metadata.deletionTimestamp is set */
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

/* Compares resourceVersions a and b as etcd writes them (decimal
 * integers): *cmp -1, 0 or 1. KUBE_OK, or KUBE_EINVAL when either is NULL
 * or not one (resourceVersions are opaque to clients: then only equality
 * can be told). Allocates nothing. */
int kube_rv_compare(const char *a, const char *b, int *cmp);

/* Parses an RFC 3339 time ("2026-11-21T10:00:00Z", with an optional
 * fraction of up to 9 digits and a Z or +hh:mm/-hh:mm offset) into unix
 * microseconds (the fraction truncated). Returns KUBE_OK, KUBE_EPARSE, or
 * KUBE_EINVAL for NULL arguments. Allocates nothing. */
int kube_time_parse(const char *s, int64_t *unix_us);

/*
 * ---- For decoder implementations ----
 *
 * Every kind is decoded with kube_object_build(), so the object and all
 * its own strings and arrays are one malloc'd block sized exactly to need;
 * what many objects repeat is shared instead (the *_shared getters and
 * kube_arena_share(): well-known strings are static, the rest pooled by
 * kube/codec/intern.h), so the block holds only what is the object's own.
 * The kube_json_* getters read one member of a JSON object (obj NULL or
 * not an object reads as empty): an absent member or a JSON null yields
 * the default (as Go's decoder leaves the zero value); a member of the
 * wrong JSON type is KUBE_EPARSE. Strings (interned when well known) and
 * arrays are copied into the arena unless the getter is a *_shared one.
 * Integer getters reject non-integral numbers and numbers outside
 * [min, max] with KUBE_EPARSE.
 */
struct kube_arena;

/* Decodes metadata from a JSON object into m, allocating strings from the
 * given arena (see kube/codec/arena.h). metadata must be an object with a
 * non-empty string name; otherwise KUBE_EPARSE. */
int kube_meta_decode(const cJSON *metadata, struct kube_arena *arena, kube_meta *m);

/* Fills the kind-specific part of obj (already zeroed, with meta decoded)
 * from json, allocating from a. Must be deterministic (it runs twice). */
typedef int (*kube_object_fill_fn)(const cJSON *json, struct kube_arena *a, kube_object *obj);

/* Builds one object of `size` bytes (a struct starting with kube_object):
 * checks that json is an object whose "kind" (if present) is codec->kind,
 * decodes "metadata" with kube_meta_decode(), then calls fill. On success
 * *out holds one reference (codec set, refs 1) to a single block that
 * codec->destroy (kube_object_free_block) frees. On error *out is NULL and
 * nothing stays allocated: KUBE_EPARSE or KUBE_ENOMEM. */
int kube_object_build(const kube_codec *codec, size_t size, const cJSON *json,
                      kube_object_fill_fn fill, kube_object **out);

/* The destroy function of every kind built by kube_object_build(). */
void kube_object_free_block(kube_object *obj);

/* Defines a decoded kind NAME in a .c file: the codec kube_NAME_codec (its
 * kind string KIND, objects of C type TYPE filled by FILL through
 * kube_object_build()) and the checked downcast
 * `const TYPE *kube_NAME_from(const kube_object *obj)` (NULL when obj is
 * NULL or of another kind). The header declares both. */
#define KUBE_KIND_DEFINE(NAME, KIND, TYPE, FILL)                                               \
    static int NAME##_kind_decode(const cJSON *json, kube_object **out)                        \
    {                                                                                          \
        return kube_object_build(&kube_##NAME##_codec, sizeof(TYPE), json, FILL, out);         \
    }                                                                                          \
    const kube_codec kube_##NAME##_codec = {KIND, NAME##_kind_decode, kube_object_free_block}; \
    const TYPE *kube_##NAME##_from(const kube_object *obj)                                     \
    {                                                                                          \
        return obj && obj->codec == &kube_##NAME##_codec ? (const TYPE *)obj : NULL;           \
    }

/* kube_intern_static(s), or else a copy of s in the arena (NULL when
 * memory runs out). How decoders store the strings they keep. */
const char *kube_arena_str(struct kube_arena *a, const char *s);

/* kube_intern_str(s) (kube/codec/intern.h: static or pooled, shared with other
 * objects), or else a copy of s in the arena when the pool refuses it
 * (NULL when memory runs out). For strings that repeat across objects
 * (label keys and values, images, node names, taint keys ...), never for
 * names, uids or resourceVersions. */
const char *kube_arena_str_shared(struct kube_arena *a, const char *s);

/* The member `key` of obj, or NULL when absent or JSON null. */
const cJSON *kube_json_get(const cJSON *obj, const char *key);
/* A string member copied into the arena; def (static storage, may be NULL)
 * when absent. */
int kube_json_str(const cJSON *obj, const char *key, struct kube_arena *a, const char *def,
                  const char **out);
/* kube_json_str, keeping the string with kube_arena_str_shared(). */
int kube_json_str_shared(const cJSON *obj, const char *key, struct kube_arena *a, const char *def,
                         const char **out);
/* An integral number member within [min, max]; def when absent. */
int kube_json_int64(const cJSON *obj, const char *key, int64_t min, int64_t max, int64_t def,
                    int64_t *out);
/* kube_json_int64 for an int32 member. */
int kube_json_int32(const cJSON *obj, const char *key, int32_t def, int32_t *out);
/* A boolean member as 1/0; def when absent. */
int kube_json_bool(const cJSON *obj, const char *key, int def, int *out);
/* An object member; *out NULL when absent. */
int kube_json_object(const cJSON *obj, const char *key, const cJSON **out);
/* An array member and its length; *out NULL and *n 0 when absent. */
int kube_json_array(const cJSON *obj, const char *key, const cJSON **out, size_t *n);
/* Fills the zeroed element elem from the JSON object j (arena a, ctx as
 * given to the caller below). KUBE_OK or an error, which stops decoding. */
typedef int (*kube_json_elem_fn)(const cJSON *j, struct kube_arena *a, void *elem, void *ctx);
/* An array member of objects decoded into a new arena array of elements of
 * size bytes, each filled by fn. *out NULL and *n 0 when absent or empty
 * (and on error). KUBE_EPARSE when the member is not an array or an
 * element not an object, KUBE_ENOMEM, or fn's error. The array belongs to
 * the arena. */
int kube_json_objects(const cJSON *obj, const char *key, struct kube_arena *a, size_t size,
                      kube_json_elem_fn fn, void *ctx, void **out, size_t *n);
/* kube_json_objects for elements whose only pointers are their first ptrs
 * members, all shared strings: the array is shared with the objects that
 * hold the same bytes (kube_arena_share). fn gets ctx NULL. */
int kube_json_objects_shared(const cJSON *obj, const char *key, struct kube_arena *a, size_t size,
                             size_t ptrs, kube_json_elem_fn fn, void **out, size_t *n);
/* An array of strings copied into the arena (NULL, 0 when absent or
 * empty); a null element reads as "". */
int kube_json_strings(const cJSON *obj, const char *key, struct kube_arena *a,
                      const char *const **out, size_t *n);
/* kube_json_strings with shared strings (kube_arena_str_shared); the
 * array itself is shared too when all its strings are (kube_arena_share). */
int kube_json_strings_shared(const cJSON *obj, const char *key, struct kube_arena *a,
                             const char *const **out, size_t *n);
/* An object of string values (annotations, ConfigMap data) copied into the
 * arena in document order (NULL, 0 when absent or empty); a null value
 * reads as "". */
int kube_json_string_map(const cJSON *obj, const char *key, struct kube_arena *a,
                         const kube_kv **out, size_t *n);
/* kube_json_string_map with shared keys and values, and the array shared
 * when all of them are (labels, nodeSelector). */
int kube_json_string_map_shared(const cJSON *obj, const char *key, struct kube_arena *a,
                                const kube_kv **out, size_t *n);
/* A time string member parsed with kube_time_parse(); 0 when absent. */
int kube_json_time(const cJSON *obj, const char *key, int64_t *unix_us);

#endif
