/*
 * apiserver/kubectl/evacuate.h - `kubectl stickyvm evacuate NODE`: every
 * VM pinned to NODE (virtualmachinepins with fieldSelector node=NODE, -n
 * or -A, -l) is re-pinned to --to (GET .../pin?node=OTHER) or unpinned
 * (.../unpin), one request per VM, so the server audits each as it does
 * any pin; --dry-run adds dryRun=All, --force force=true. Every request
 * carries from=NODE: a VM re-pinned or unpinned since the list was read
 * (a live migration followed, another operator) is not moved; the
 * server's 409 names its current pin, and it is listed as Skipped with
 * that node in FROM. FROM of a VM moved is the server's previousNode. The server's
 * local-volume guard refuses to pin a VM away from the node its data lives
 * on (409 suggesting force=true): such a VM is listed as refused and
 * stays. The result is one table (NAMESPACE with -A, VM, FROM, TO,
 * RESULT); the exit code is 1 when any VM was refused or failed.
 *
 * The plan, each answer's outcome and the table are pure functions here
 * (the unit tests call them); kctl_evacuate() (cmd.h) runs them.
 *
 * Threads: pure, on the caller's data. Memory: a kctl_evac_plan owns its
 * items, freed by kctl_evac_plan_free(); node and to are borrowed.
 */
#ifndef KCTL_EVACUATE_H
#define KCTL_EVACUATE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>

#include "kube/transport/client.h"

typedef enum kctl_evac_outcome {
    KCTL_EVAC_PENDING,   /* not asked yet */
    KCTL_EVAC_MOVED,     /* re-pinned or unpinned (or would be, on a dry run) */
    KCTL_EVAC_UNCHANGED, /* the server wrote nothing: it was there already */
    KCTL_EVAC_REFUSED,   /* the local-volume guard: --force would move it */
    KCTL_EVAC_SKIPPED,   /* no longer pinned to NODE (from=NODE failed) */
    KCTL_EVAC_FAILED     /* any other error */
} kctl_evac_outcome;

typedef struct kctl_evac_item {
    char ns[64], name[254];
    kctl_evac_outcome outcome;
    char result[640]; /* the RESULT cell: a Status message and more */
    char from[254];   /* the FROM cell: previousNode, or the pin now when
                         skipped ("" before the answer: NODE) */
} kctl_evac_item;

typedef struct kctl_evac_plan {
    const char *node; /* FROM */
    const char *to;   /* TO; NULL: unpin */
    kctl_evac_item *items;
    size_t n, cap;
} kctl_evac_plan;

/* Starts plan (zeroed here) with the VMs of list (a VirtualMachinePinList)
 * pinned to node, in the list's order, each PENDING. KUBE_OK or
 * KUBE_ENOMEM; call kctl_evac_plan_free() in both cases. */
int kctl_evac_plan_init(kctl_evac_plan *plan, const cJSON *list, const char *node, const char *to);
void kctl_evac_plan_free(kctl_evac_plan *plan);

/* Records in it the answer to its request: rc and resp of the call and,
 * on success, the VirtualMachinePin answered (pin: unpin 0). Sets
 * it->outcome, it->from (previousNode, "" without; on a failed from=, the cause's
 * current pin, "<none>" when unpinned) and it->result ("Repinned",
 * "Unpinned", "Unchanged", with " (server dry run)" on a dry run;
 * "Skipped: ..."; "Refused: <the server's reason>"; "Failed: ..."). */
void kctl_evac_record(kctl_evac_item *it, int rc, const kube_response *resp, const cJSON *answer,
                      int unpin, int dry_run);

/* Writes the plan as kubectl's table (NAMESPACE first when all) to f.
 * KUBE_OK or KUBE_ENOMEM. */
int kctl_evac_write_table(const kctl_evac_plan *plan, int all, FILE *f);

/* How many items of plan ended with outcome. */
size_t kctl_evac_count(const kctl_evac_plan *plan, kctl_evac_outcome outcome);

#endif
