/*
 * kube/types/pin.h - the one owner of a VirtualMachine's pin: the annotation
 * (stickyvm.io/node by default; the key is configurable) naming the node
 * the VM must run on. The StickyVM plugin (first placement), the
 * scheduler's pin controller (durable first pins, live migrations) and
 * stickyvm-apiserver (/pin, /unpin) all read and write it
 * here, so they agree on the key's rules, the patch and the conflict loop.
 *
 * A write is ONE JSON merge patch of the VM carrying its
 * metadata.resourceVersion (optimistic concurrency) and, besides the pin
 * key, companion annotations recording the pin's history:
 *
 *   stickyvm.io/pinned-at          RFC 3339 UTC time of the write
 *   stickyvm.io/pinned-by          who wrote it (KUBE_PIN_BY_SCHEDULER, the
 *                                  scheduler name, or the API user's name)
 *   stickyvm.io/pin-reason         FirstPlacement, API, Migration or
 *                                  NodeLost
 *   stickyvm.io/followed-migration the live migration's UID a Migration
 *                                  write followed (only those writes)
 *   stickyvm.io/seen-pods          the UIDs (comma-separated, "" none) of
 *                                  the VM's launcher pods that were bound
 *                                  when a decision (API, NodeLost) was
 *                                  written: a bound launcher pod not among
 *                                  them is a newer placement
 *   stickyvm.io/seen-migration     the UID of the VMI's completed live
 *                                  migration that decision saw ("" none)
 *
 * Decisions are ordered by identity, never by clocks: pinned-at is for
 * people. A decision's write (reason API or NodeLost) reads the VM's
 * VirtualMachineInstance (same namespace and name) and lists the
 * namespace's pods right before each patch (kube_pin_observe()), and
 * records what it saw in seen-pods and seen-migration; FirstPlacement and
 * Migration writes follow placements and leave both as they are. A pod
 * bound between that read and the patch is not among seen-pods, so it
 * counts as newer: the VM ends pinned where it runs rather than unpinned
 * while it runs.
 *
 * These companion keys are fixed under stickyvm.io/ whatever the pin key is.
 * An unpin removes the pin key (null in the patch) and sets pinned-at, -by
 * and -reason; it never removes followed-migration (a migration once
 * followed must never be followed again).
 *
 * On 409 Conflict the VM is read again (GET) and the write is decided anew
 * over the current VM: the value already there ends the loop with
 * KUBE_PIN_UNCHANGED; otherwise the caller's callback says whether the
 * write still goes ahead. At most KUBE_PIN_MAX_ATTEMPTS patches are sent.
 *
 * Memory: a kube_pin_result holds one reference to a VM object, released by
 * kube_pin_result_clear(). Strings passed in are borrowed for the call.
 * Threads: every function is thread-safe (the write blocks on the network).
 */
#ifndef KUBE_PIN_H
#define KUBE_PIN_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <time.h>

#include "kube/machinery/recorder.h"
#include "kube/transport/client.h"
#include "kube/types/kubevirt.h"

#define KUBE_PIN_DEFAULT_KEY "stickyvm.io/node"
#define KUBE_PIN_ANN_AT "stickyvm.io/pinned-at"
#define KUBE_PIN_ANN_BY "stickyvm.io/pinned-by"
#define KUBE_PIN_ANN_REASON "stickyvm.io/pin-reason"
#define KUBE_PIN_ANN_FOLLOWED "stickyvm.io/followed-migration"
#define KUBE_PIN_ANN_SEEN_PODS "stickyvm.io/seen-pods"
#define KUBE_PIN_ANN_SEEN_MIGRATION "stickyvm.io/seen-migration"
/* Launcher pod UIDs seen-pods records at most (a VM has one or two). */
#define KUBE_PIN_SEEN_MAX 16
/* A UID's length at most (RFC 4122 text is 36). */
#define KUBE_PIN_UID_MAX 63
/* pinned-by of the scheduler's writes when no better name is known. */
#define KUBE_PIN_BY_SCHEDULER "system:stickyvm-scheduler"
/* Patches sent per write at most (the first one included). */
#define KUBE_PIN_MAX_ATTEMPTS 10

typedef enum kube_pin_reason {
    KUBE_PIN_FIRST_PLACEMENT, /* "FirstPlacement" */
    KUBE_PIN_API,             /* "API" */
    KUBE_PIN_MIGRATION,       /* "Migration" */
    KUBE_PIN_NODE_LOST,       /* "NodeLost" (an unpin: stickyvm.io/on-node-loss) */
} kube_pin_reason;

/* The pin-reason value of r (static). */
const char *kube_pin_reason_name(kube_pin_reason r);

/* The VM as the object a pin Event is about (regarding): its kind, API
 * version, namespace, name and uid. The strings are borrowed from vm. */
kube_recorder_ref kube_pin_event_ref(const kube_vm *vm);

/* Checks key as a Kubernetes annotation key (apimachinery's
 * ValidateAnnotations: IsQualifiedName of the lower-cased key: an optional
 * DNS-1123 subdomain prefix of at most 253 characters and '/', then a name
 * of at most 63 characters of [A-Za-z0-9._-] starting and ending
 * alphanumeric). KUBE_OK, or KUBE_EINVAL with msg (size n) holding the
 * field error body without the field, e.g. `Required value` or
 * `Invalid value: "a b": name part must consist of ...`. */
int kube_pin_key_check(const char *key, char *msg, size_t n);

/* The node vm is pinned to under key, or NULL when unpinned (an empty
 * value counts as unpinned). Borrowed from vm. */
const char *kube_pin_get(const kube_vm *vm, const char *key);
/* The UID of the last live migration the pin followed, or NULL. Borrowed. */
const char *kube_pin_followed(const kube_vm *vm);

/* What a decision saw (kube_pin_observe()). */
typedef struct kube_pin_seen {
    /* the bound launcher pods' UIDs, comma-separated; "" none */
    char pods[KUBE_PIN_SEEN_MAX * (KUBE_PIN_UID_MAX + 1)];
    char migration[KUBE_PIN_UID_MAX + 1]; /* the completed migration's UID; "" none */
} kube_pin_seen;

/* What to write. node NULL is an unpin. */
typedef struct kube_pin_write {
    const char *key;  /* the pin annotation; required */
    const char *node; /* the node, or NULL to unpin */
    kube_pin_reason reason;
    const char *by;            /* pinned-by; required */
    const char *migration_uid; /* followed-migration; non-NULL only for a
                                  KUBE_PIN_MIGRATION pin */
    /* The precondition (NULL: none): write only while the VM is pinned to
     * this node ("": only while it is unpinned); else nothing is written
     * and the outcome is KUBE_PIN_PRECONDITION. */
    const char *from;
    /* seen-pods and seen-migration to record (NULL: none). kube_pin_set()
     * fills it for a decision (API, NodeLost); callers leave it NULL. */
    const kube_pin_seen *seen;
} kube_pin_write;

/* Whether a write of reason r is a decision (API, NodeLost) that records
 * what it saw. */
int kube_pin_is_decision(kube_pin_reason r);

/* The merge patch of w over a VM at resource_version rv (NULL: none), with
 * pinned-at = now: {"metadata":{"resourceVersion":rv,"annotations":{key:
 * node|null, pinned-at, pinned-by, pin-reason[, followed-migration]
 * [, seen-pods, seen-migration (null when "")]}}}.
 * Caller frees with cJSON_Delete(); NULL on bad arguments or memory. */
cJSON *kube_pin_patch_new(const kube_pin_write *w, const char *rv, time_t now);

/* What a decision on VM ns/name sees now: its VirtualMachineInstance
 * (GET ns/name; 404: none, and so no pods) and the pods of the namespace
 * (one LIST) that VMI controls (ownerReference controller, kind
 * VirtualMachineInstance, its uid) and that are bound (spec.nodeName set):
 * their UIDs into out->pods (at most KUBE_PIN_SEEN_MAX), and the VMI's
 * migration when it completed without failure into out->migration.
 * KUBE_OK, or the request's error with st filled. */
int kube_pin_observe(kube_client *c, const char *ns, const char *name, kube_pin_seen *out,
                     kube_status *st);

/* Whether vm's last decision saw the launcher pod uid bound: 1 it did, 0
 * it did not (a newer placement), -1 vm records a decision (pinned-at and
 * pin-reason API or NodeLost) but no seen-pods (written before this rule:
 * which placements it saw is unknown). A VM with no decision recorded saw
 * nothing: 0. */
int kube_pin_saw_pod(const kube_vm *vm, const char *uid);

/* The migration UID vm's last decision saw (seen-migration), or NULL.
 * Borrowed from vm. */
const char *kube_pin_seen_migration(const kube_vm *vm);

/* After a conflict, whether the write still goes ahead over cur (the VM as
 * just read, neither gone nor already holding the value): 1 go, 0 yield. */
typedef int (*kube_pin_decide_fn)(void *ud, const kube_vm *cur);

typedef enum kube_pin_outcome {
    KUBE_PIN_WRITTEN,      /* our patch was applied */
    KUBE_PIN_UNCHANGED,    /* the VM already held the value: nothing written */
    KUBE_PIN_YIELDED,      /* decide() refused over the current VM */
    KUBE_PIN_GONE,         /* the VM was deleted, or replaced (another uid) */
    KUBE_PIN_PRECONDITION, /* not pinned to w->from: nothing written;
                              previous holds the current pin */
} kube_pin_outcome;

typedef struct kube_pin_result {
    kube_pin_outcome outcome;
    /* The VM as the server holds it afterwards (WRITTEN: the patch's
     * answer; UNCHANGED/YIELDED: the last VM compared), one reference;
     * NULL when GONE or on error. */
    kube_object *vm;
    /* The pin the write replaced (WRITTEN) or found (otherwise); "" none. */
    char previous[254];
    int reads, writes;  /* GETs of the VM and PATCHes sent */
    int observations;   /* kube_pin_observe() calls (a GET and a LIST each) */
    kube_status status; /* the failed call's Status on error, or the 404 */
} kube_pin_result;

/* Writes w on vm (the VM as the caller last saw it; its resourceVersion
 * guards the first patch, so a first placement costs one PATCH and no
 * GET). Before every patch the current VM is compared: not pinned to
 * w->from (when given) -> PRECONDITION; already holding w's value ->
 * UNCHANGED; after a conflict decide (NULL: always go) may yield. A
 * decision observes (kube_pin_observe()) before each patch and records
 * it; over a VM already holding its value it observes too, and writes the
 * same value with what it saw when that differs from what the VM records
 * (WRITTEN with previous equal to the value), else UNCHANGED. A 404, or a re-read VM with another
 * uid, is GONE. Returns KUBE_OK with res->outcome set; KUBE_ECONFLICT when KUBE_PIN_MAX_ATTEMPTS
 * patches conflicted; KUBE_EINVAL for bad arguments; else the request's error (res->status says
 * more). Call kube_pin_result_clear() in every case. */
int kube_pin_set(kube_client *c, const kube_vm *vm, const kube_pin_write *w,
                 kube_pin_decide_fn decide, void *ud, kube_pin_result *res);

/* Releases res->vm. NULL-safe; res may be zeroed or used again after. */
void kube_pin_result_clear(kube_pin_result *res);

#endif
