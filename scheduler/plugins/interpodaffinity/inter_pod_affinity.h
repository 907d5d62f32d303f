/*
 * scheduler/plugins/interpodaffinity/inter_pod_affinity.h - what InterPodAffinity exports
 * besides its descriptor: the namespace lister it reads namespace labels
 * from (kube-scheduler's NamespaceLister, for namespaceSelector terms),
 * the minimal v1 Namespace codec behind it (kube/ has none; only
 * metadata is kept), and a constructor taking a lister, for callers that
 * have no informer factory (tests, tools).
 *
 * Threads: a lister may be read from any thread (the informer store is
 * locked; a store-backed lister reads the caller's kube_store, which locks
 * too).
 */
#ifndef PLUGIN_INTER_POD_AFFINITY_H
#define PLUGIN_INTER_POD_AFFINITY_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "framework/framework.h"
#include "kube/codec/object.h"
#include "kube/codec/selector.h"

struct kube_factory;
struct kube_store;

/* v1 Namespace: a kube_object whose meta carries name and labels. */
extern const kube_codec plugin_namespace_codec;

typedef struct plugin_ns_lister plugin_ns_lister;

/* A lister over the factory's namespaces informer (f borrowed; it owns the
 * informer, created on first request). *out is freed with
 * plugin_ns_lister_free(). KUBE_OK, KUBE_ENOMEM or the factory's error. */
int plugin_ns_lister_from_factory(struct kube_factory *f, plugin_ns_lister **out);
/* Frees the lister (not the informer or store behind it). NULL-safe. */
void plugin_ns_lister_free(plugin_ns_lister *l);

/* The namespace named name: a new reference the caller releases with
 * kube_object_unref(), or NULL when unknown. */
kube_object *plugin_ns_lister_get(const plugin_ns_lister *l, const char *name);
/* Calls fn(ud, name) for every namespace whose labels sel matches (name
 * borrowed for the call; fn must not call back into the lister). */
void plugin_ns_lister_each_match(const plugin_ns_lister *l, const kube_label_selector *sel,
                                 void (*fn)(void *ud, const char *name), void *ud);

/* InterPodAffinity's create() with an explicit lister: ns (may be NULL:
 * no namespace is known, every namespace has no labels) is owned by the
 * instance from then on, also on error. Same contract as
 * fw_plugin_desc.create otherwise; destroy with
 * plugin_inter_pod_affinity.destroy. */
int plugin_inter_pod_affinity_new(const cJSON *args, fw_handle *h, plugin_ns_lister *ns,
                                  void **self, char *err, size_t errlen);

#endif
