/*
 * scheduler/plugins/stickyvm/notes.h - StickyVM's notes: the pins this
 * process wrote (or is writing), kept until the VM informer shows them, so
 * that a pod recreated at once cannot miss a pin the cache has not
 * delivered yet, and so that two pods of one VM never both pin it.
 *
 * A note is keyed by the VM's "namespace/name" and holds its uid, the node
 * and the resourceVersion of our write (none while in flight). It is
 * dropped once the informer shows a VM of another uid (or none), a version
 * at least ours, or after STICKYVM_NOTE_TTL_MS: when the VM is read, and
 * for every note at each sweep (stickyvm_notes_sweep(), before each first
 * pin).
 *
 * Memory: stickyvm_notes_new() allocates the set, freed with its notes by
 * stickyvm_notes_free(). Strings passed in are copied.
 * Threads: every function is thread-safe (one mutex).
 */
#ifndef PLUGIN_STICKYVM_NOTES_H
#define PLUGIN_STICKYVM_NOTES_H

#include <stddef.h>

#include "kube/types/kubevirt.h"

/* A written pin the VM informer never confirms is forgotten after this. */
#define STICKYVM_NOTE_TTL_MS (5LL * 60 * 1000)

typedef struct stickyvm_notes stickyvm_notes;

/* KUBE_OK or KUBE_ENOMEM. */
int stickyvm_notes_new(stickyvm_notes **out);
/* NULL-safe. */
void stickyvm_notes_free(stickyvm_notes *n);

/* The pin PreFilter must honour for vm, written to out (size len): pin
 * (vm's annotation, "" when unpinned) unless a note says more recent: a
 * pin we wrote the cache has not shown yet, or one being written for an
 * unpinned VM. */
void stickyvm_notes_effective_pin(stickyvm_notes *n, const kube_vm *vm, const char *pin, char *out,
                                  size_t len);

/* Claims the first pin of vm for node: 1 when no note existed (one is
 * added, in flight), 0 when another write of ours got there first or
 * memory ran out. */
int stickyvm_notes_claim(stickyvm_notes *n, const kube_vm *vm, const char *node);

/* Records what the server now holds for VM ns/name after our write: final
 * (NULL: unknown or gone) pinned to pin ("" or NULL: unpinned, the note
 * is dropped). */
void stickyvm_notes_settle(stickyvm_notes *n, const char *ns, const char *name,
                           const kube_vm *final, const char *pin);

/* The cached VM ns/name: a new reference, or NULL when not cached. */
typedef kube_object *(*stickyvm_vm_get_fn)(void *ud, const char *ns, const char *name);
/* Drops every note the VM cache (get_vm, called under the notes' lock)
 * shows stale: a VM of another uid, or one at least at our write's
 * version; a written note of a VM not cached is dropped after
 * STICKYVM_NOTE_TTL_MS. */
void stickyvm_notes_sweep(stickyvm_notes *n, stickyvm_vm_get_fn get_vm, void *ud);

#endif
