/*
 * scheduler/plugins/stickyvm/source.h - where StickyVM reads VMIs and VMs:
 * the informer factory's listers (or, in unit tests, a caller's lookup), a
 * brief wait for a synced lister to deliver an object not cached yet (the
 * listers' change generation, kube/machinery/factory.h), then at most the
 * GETs the caller allows.
 *
 * Memory: stickyvm_source_new() allocates the source, freed by
 * stickyvm_source_free(); the lookup's ud, the informers, the client and
 * the read counter are borrowed and must outlive it. Objects returned are
 * new references the caller releases with kube_object_unref().
 * Threads: every function is thread-safe; stickyvm_source_set_listers()
 * is called once, before the informers start.
 */
#ifndef PLUGIN_STICKYVM_SOURCE_H
#define PLUGIN_STICKYVM_SOURCE_H

#include <stdatomic.h>

#include "kube/transport/api.h"
#include "kube/machinery/factory.h"
#include "plugins/stickyvm/stickyvm.h"

typedef struct stickyvm_source stickyvm_source;

/* lk (may be NULL: informers) is copied; client may be NULL (no GET);
 * reads (may be NULL) counts the GETs. KUBE_OK or KUBE_ENOMEM. */
int stickyvm_source_new(const stickyvm_lookup *lk, kube_client *client, atomic_ulong *reads,
                        stickyvm_source **out);
void stickyvm_source_set_listers(stickyvm_source *s, kube_lister *vmis, kube_lister *vms);
/* NULL-safe. */
void stickyvm_source_free(stickyvm_source *s);

/* The cached object ns/name (r: &KUBE_RES_VMIS or &KUBE_RES_VMS) when its
 * uid is uid (NULL or "" accepts any); a new reference or NULL. */
kube_object *stickyvm_source_cached(stickyvm_source *s, const kube_resource *r, const char *ns,
                                    const char *name, const char *uid);

/* The object an owner reference names: the cache, a wait of up to
 * STICKYVM_CACHE_WAIT_MS for a synced lister, then one GET while *gets >
 * 0 (decremented). KUBE_OK with *out a new reference, KUBE_ENOTFOUND (also
 * for another uid), or the GET's error. */
int stickyvm_source_fetch(stickyvm_source *s, const kube_resource *r, const kube_codec *codec,
                          const char *ns, const kube_owner_ref *ref, int *gets, kube_object **out);

#endif
