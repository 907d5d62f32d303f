/*
 * scheduler/pins/nodeloss.c - stickyvm.io/on-node-loss: Unpin (see
 * pins/nodeloss.h): since when a pinned node is lost (this replica's own
 * observation, monotonic clock), the local-volume hold, and the unpin with
 * its Warning event.
 */
#include "pins/nodeloss.h"
#include "pins/nodeloss_testing.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/machinery/recorder.h"
#include "kube/transport/api.h"
#include "kube/types/kubevirt.h"
#include "kube/types/localvolumes.h"
#include "kube/types/node.h"
#include "kube/types/pin.h"
#include "kube/types/storage.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/duration.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/util/metrics.h"
#include "kube/util/strmap.h"
#include "pins/pinned_index.h"

/* "namespace/name": a namespace is <= 63 bytes, a name <= 253. */
#define KEY_MAX 320
/* How long a VM waits while the caches have not synced yet. */
#define SYNC_WAIT_MS 1000

/* What this replica saw of a lost node (the value of nl->lost). */
typedef struct lost_rec {
    int64_t since_ms;      /* monotonic: when it was first seen lost */
    int64_t transition_us; /* the Ready condition's lastTransitionTime then (0: none) */
    int ready;             /* KUBE_NODE_READY_* then; MISSING once deleted */
} lost_rec;

#define MISSING (-1)

struct sched_pins_nodeloss {
    sched_pins_nodeloss_options o;
    char *key, *pinned_by;
    kube_lister *nodes, *vms, *pvcs, *pvs;
    pthread_mutex_t mu; /* lost, told */
    /* node name -> lost_rec (owned): lost nodes, and deleted ones some VM
     * is still pinned to */
    kube_strmap lost;
    /* VM key -> what it was told (owned): "invalid:VALUE" or "held:NODE";
     * forgotten with the VM */
    kube_strmap told;
    int64_t led_ms; /* monotonic ms this replica started leading; 0: not yet (worker) */
    kube_metric *unpins_metric;
    atomic_ulong unpins;
};

static int leading(const sched_pins_nodeloss *nl)
{
    const fw_leadership *l = &nl->o.leadership;
    return !l->is_leader || l->is_leader(l->ud);
}

static void vm_key(const kube_object *vm, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", vm->meta.namespace_, vm->meta.name);
}

/* Whether VM key was told what already; remembers it. */
static int told_before(sched_pins_nodeloss *nl, const char *key, const char *what)
{
    char *copy = NULL;
    void *old = NULL;
    pthread_mutex_lock(&nl->mu);
    const char *seen = kube_strmap_get(&nl->told, key);
    int was = seen && strcmp(seen, what) == 0;
    if (!was && (copy = kube_strdup(what)) &&
        kube_strmap_put(&nl->told, key, copy, &old) != KUBE_OK)
        free(copy);
    pthread_mutex_unlock(&nl->mu);
    free(old);
    return was;
}

/* ------------------------------------------------------------------ */
/* Node events                                                         */
/* ------------------------------------------------------------------ */

static int node_lost(const kube_node *n)
{
    return n && (n->ready == KUBE_NODE_READY_FALSE || n->ready == KUBE_NODE_READY_UNKNOWN);
}

/* ------------------------------------------------------------------ */
/* Lost since: this replica's own observation                          */
/* ------------------------------------------------------------------ */

/* Records that node is lost (ready: its status, or MISSING; transition_us:
 * its Ready condition's lastTransitionTime, 0 when none), first seen now
 * unless seen before. The server's time is an identity, never a clock: a
 * lost node whose condition shows another transition with the same status
 * went Ready and back unseen, and its count starts again (later, never
 * earlier). nl->mu held. */
static void note_lost_locked(sched_pins_nodeloss *nl, const char *node, int ready,
                             int64_t transition_us)
{
    lost_rec *r = kube_strmap_get(&nl->lost, node);
    if (!r) {
        if (!(r = calloc(1, sizeof(*r))) || kube_strmap_put(&nl->lost, node, r, NULL) != KUBE_OK) {
            free(r); /* counted from the next sighting instead: later, the safe side */
            return;
        }
        r->since_ms = kube_now_ms();
    } else if (ready == r->ready && transition_us && r->transition_us &&
               transition_us != r->transition_us) {
        r->since_ms = kube_now_ms();
    }
    if (ready != MISSING) {
        r->ready = ready;
        r->transition_us = transition_us;
    } else {
        r->ready = MISSING;
    }
}

static void forget_lost_locked(sched_pins_nodeloss *nl, const char *node)
{
    free(kube_strmap_del(&nl->lost, node));
}

/* Forgets deleted node once no VM is pinned to it (nl->mu held). */
static void forget_if_unused_locked(sched_pins_nodeloss *nl, const char *node)
{
    const lost_rec *r = kube_strmap_get(&nl->lost, node);
    if (r && r->ready == MISSING && sched_pins_pinned_count(nl->vms, nl->key, node) == 0)
        forget_lost_locked(nl, node);
}

/* The status of node as the informer shows it now. */
static void observe(sched_pins_nodeloss *nl, const char *name, const kube_node *n)
{
    pthread_mutex_lock(&nl->mu);
    if (node_lost(n))
        note_lost_locked(nl, name, (int)n->ready, n->lost_since_us);
    else
        forget_lost_locked(nl, name);
    pthread_mutex_unlock(&nl->mu);
}

/* Since when node is lost (monotonic ms; 0: it is not), and *word its
 * status (kube_node_ready_word()): when this replica first saw it lost,
 * and never before it started leading. A lost node without a record (never
 * seen by the handlers, e.g. deleted before this replica started) is first
 * seen now; a missing one only while some VM is pinned to it. */
static int64_t lost_since(sched_pins_nodeloss *nl, const char *node, const char **word)
{
    kube_object *obj = kube_lister_get(nl->nodes, NULL, node);
    const kube_node *n = kube_node_from(obj);
    int64_t since = 0;
    *word = kube_node_ready_word(n);
    if (!n || node_lost(n)) {
        pthread_mutex_lock(&nl->mu);
        if (!kube_strmap_get(&nl->lost, node))
            note_lost_locked(nl, node, n ? (int)n->ready : MISSING, n ? n->lost_since_us : 0);
        const lost_rec *r = kube_strmap_get(&nl->lost, node);
        since = r ? r->since_ms : kube_now_ms();
        if (!n)
            forget_if_unused_locked(nl, node); /* the VM asking was stale */
        pthread_mutex_unlock(&nl->mu);
        if (since < nl->led_ms)
            since = nl->led_ms; /* a new leader starts its own count */
    }
    kube_object_unref(obj);
    return since;
}

/* ------------------------------------------------------------------ */
/* Node and VM events                                                  */
/* ------------------------------------------------------------------ */

typedef struct pinned_to {
    sched_pins_nodeloss *nl;
    const char *node;
} pinned_to;

/* sched_pins_pinned_foreach() callback: a VM with the annotation is queued. */
static void enqueue_one(void *ud, kube_object *obj)
{
    const pinned_to *p = ud;
    if (kube_meta_annotation(&obj->meta, SCHED_PINS_NODELOSS_ANN))
        p->nl->o.enqueue(p->nl->o.enqueue_ud, obj->meta.namespace_, obj->meta.name);
}

/* Queues the VMs pinned to node (the leader only). */
static void enqueue_pinned(sched_pins_nodeloss *nl, const char *node)
{
    pinned_to p = {nl, node};
    if (leading(nl))
        sched_pins_pinned_foreach(nl->vms, nl->key, node, enqueue_one, &p);
}

static void on_node_add(void *ud, kube_object *obj)
{
    sched_pins_nodeloss *nl = ud;
    const kube_node *n = kube_node_from(obj);
    observe(nl, obj->meta.name, n);
    if (node_lost(n))
        enqueue_pinned(nl, obj->meta.name);
}

static void on_node_update(void *ud, kube_object *old_obj, kube_object *new_obj)
{
    const kube_node *a = kube_node_from(old_obj), *b = kube_node_from(new_obj);
    observe(ud, new_obj->meta.name, b);
    if (a && b && (a->ready != b->ready || a->lost_since_us != b->lost_since_us))
        enqueue_pinned(ud, new_obj->meta.name);
}

static void on_node_delete(void *ud, kube_object *obj)
{
    sched_pins_nodeloss *nl = ud;
    pthread_mutex_lock(&nl->mu);
    note_lost_locked(nl, obj->meta.name, MISSING, 0);
    forget_if_unused_locked(nl, obj->meta.name);
    pthread_mutex_unlock(&nl->mu);
    enqueue_pinned(nl, obj->meta.name);
}

/* A VM's pin left node (or the VM left): what was kept for them goes. */
static void vm_left(sched_pins_nodeloss *nl, const kube_object *vm, const char *node, int deleted)
{
    char key[KEY_MAX];
    pthread_mutex_lock(&nl->mu);
    if (node)
        forget_if_unused_locked(nl, node);
    if (deleted) {
        vm_key(vm, key, sizeof(key));
        free(kube_strmap_del(&nl->told, key));
    }
    pthread_mutex_unlock(&nl->mu);
}

static void on_vm_update(void *ud, kube_object *old_obj, kube_object *new_obj)
{
    sched_pins_nodeloss *nl = ud;
    const char *was = kube_pin_get(kube_vm_from(old_obj), nl->key);
    const char *is = kube_pin_get(kube_vm_from(new_obj), nl->key);
    if (was && (!is || strcmp(was, is) != 0))
        vm_left(nl, old_obj, was, 0);
}

static void on_vm_delete(void *ud, kube_object *obj)
{
    sched_pins_nodeloss *nl = ud;
    vm_left(nl, obj, kube_pin_get(kube_vm_from(obj), nl->key), 1);
}

/* ------------------------------------------------------------------ */
/* The local-volume hold                                               */
/* ------------------------------------------------------------------ */

/* The PV claim cl of namespace ns is bound to (a reference), or NULL. */
static kube_object *bound_pv(sched_pins_nodeloss *nl, const char *ns, const kube_vm_claim *cl)
{
    kube_object *pvc = kube_lister_get(nl->pvcs, ns, cl->claim);
    const kube_pvc *p = kube_pvc_from(pvc);
    kube_object *pv = p && *p->volume_name ? kube_lister_get(nl->pvs, NULL, p->volume_name) : NULL;
    kube_object_unref(pvc);
    return pv;
}

/* Whether a PV of the VM's claims allows no node but the lost one (logged
 * once per VM and node). */
static int held_by_volume(sched_pins_nodeloss *nl, const kube_object *vm, const kube_object *vmi,
                          const char *node)
{
    kube_vm_claims cl = {.n = 0};
    char key[KEY_MAX], what[300];
    int held = 0;
    kube_vm_claims_of(kube_vm_from(vm), kube_vmi_from(vmi), &cl);
    vm_key(vm, key, sizeof(key));
    snprintf(what, sizeof(what), "held:%s", node);
    for (size_t i = 0; !held && i < cl.n; i++) {
        kube_object *obj = bound_pv(nl, vm->meta.namespace_, &cl.items[i]);
        held = kube_pv_holds_to_node(kube_pv_from(obj), node, nl->nodes);
        if (held && !told_before(nl, key, what))
            KLOG_INFO("StickyVM: VM %s stays pinned to lost node %s (%s: Unpin): volume \"%s\" "
                      "(PersistentVolumeClaim \"%s\", PersistentVolume \"%s\") allows no other "
                      "node",
                      key, node, SCHED_PINS_NODELOSS_ANN, cl.items[i].volume, cl.items[i].claim,
                      obj->meta.name);
        kube_object_unref(obj);
    }
    return held;
}

/* ------------------------------------------------------------------ */
/* The policy                                                          */
/* ------------------------------------------------------------------ */

/* Whether vm asks for Unpin; an unknown value counts as Wait, with one
 * Warning event per VM and value. */
static int wants_unpin(sched_pins_nodeloss *nl, const kube_object *vm)
{
    const char *v = kube_meta_annotation(&vm->meta, SCHED_PINS_NODELOSS_ANN);
    char key[KEY_MAX], what[300];
    if (!v || strcmp(v, SCHED_PINS_NODELOSS_WAIT) == 0)
        return 0;
    if (strcmp(v, SCHED_PINS_NODELOSS_UNPIN) == 0)
        return 1;
    vm_key(vm, key, sizeof(key));
    snprintf(what, sizeof(what), "invalid:%s", v);
    if (told_before(nl, key, what))
        return 0;
    KLOG_WARN("StickyVM: VM %s: unknown %s value \"%s\", treated as Wait", key,
              SCHED_PINS_NODELOSS_ANN, v);
    kube_recorder_ref reg = kube_pin_event_ref(kube_vm_from(vm));
    if (nl->o.recorder)
        kube_recorder_eventf(
            nl->o.recorder, &reg, NULL, KUBE_RECORDER_WARNING, "InvalidOnNodeLoss", "Pin",
            "Unsupported value \"%s\" of %s: supported values are \"Wait\" and "
            "\"Unpin\"; treated as Wait (the VM keeps its pin if its node is lost)",
            v, SCHED_PINS_NODELOSS_ANN);
    return 0;
}

typedef struct unpin_ctx {
    const char *key, *node;
} unpin_ctx;

/* After a conflict: still pinned to the lost node, still asking Unpin. */
static int still_due(void *ud, const kube_vm *cur)
{
    const unpin_ctx *u = ud;
    const char *pin = kube_pin_get(cur, u->key);
    const char *v = kube_meta_annotation(&cur->base.meta, SCHED_PINS_NODELOSS_ANN);
    return pin && strcmp(pin, u->node) == 0 && v && strcmp(v, SCHED_PINS_NODELOSS_UNPIN) == 0;
}

/* The event and counts of an unpin written. */
static void unpinned(sched_pins_nodeloss *nl, const kube_object *vm, const char *node,
                     const char *word, int64_t lost_ms)
{
    char key[KEY_MAX], lost[32], grace[32];
    kube_recorder_ref reg = kube_pin_event_ref(kube_vm_from(vm));
    vm_key(vm, key, sizeof(key));
    kube_duration_format(lost_ms / 1000 * 1000, lost, sizeof(lost));
    kube_duration_format(nl->o.grace_ms, grace, sizeof(grace));
    KLOG_INFO("StickyVM: VM %s unpinned from node %s, %s for %s (%s: Unpin)", key, node, word, lost,
              SCHED_PINS_NODELOSS_ANN);
    if (nl->o.recorder)
        kube_recorder_eventf(nl->o.recorder, &reg, NULL, KUBE_RECORDER_WARNING, "Unpinned", "Unpin",
                             "Unpinned from node %s, %s for %s (reason NodeLost; %s: Unpin, "
                             "nodeLossGracePeriod %s)",
                             node, word, lost, SCHED_PINS_NODELOSS_ANN, grace);
    atomic_fetch_add(&nl->unpins, 1);
    kube_metric_add(nl->unpins_metric, NULL, 1);
}

/* Unpins vm from node, lost (word) for lost_ms. */
static sched_pins_nodeloss_verdict unpin(sched_pins_nodeloss *nl, const kube_object *vm,
                                         const char *node, const char *word, int64_t lost_ms)
{
    unpin_ctx u = {nl->key, node};
    kube_pin_write w = {
        .key = nl->key, .node = NULL, .reason = KUBE_PIN_NODE_LOST, .by = nl->pinned_by};
    kube_pin_result res = {0};
    char key[KEY_MAX];
    int rc = kube_pin_set(nl->o.client, kube_vm_from(vm), &w, still_due, &u, &res);
    if (rc == KUBE_OK && res.outcome == KUBE_PIN_WRITTEN)
        unpinned(nl, vm, node, word, lost_ms);
    if (rc != KUBE_OK) {
        vm_key(vm, key, sizeof(key));
        KLOG_ERROR("StickyVM: unpinning VM %s from lost node %s failed (%s%s%s); retried", key,
                   node, kube_strerror(rc), res.status.message[0] ? ": " : "", res.status.message);
    }
    kube_pin_result_clear(&res);
    return rc == KUBE_OK ? SCHED_PINS_NODELOSS_DONE : SCHED_PINS_NODELOSS_RETRY;
}

/* Whether every cache the policy reads has synced, and leadership began. */
static int ready(const sched_pins_nodeloss *nl)
{
    return nl->led_ms && kube_lister_has_synced(nl->nodes) && kube_lister_has_synced(nl->pvcs) &&
           kube_lister_has_synced(nl->pvs);
}

sched_pins_nodeloss_verdict sched_pins_nodeloss_reconcile(sched_pins_nodeloss *nl,
                                                          const kube_object *vm,
                                                          const kube_object *vmi, int64_t *wait_ms)
{
    const char *pin = kube_pin_get(kube_vm_from(vm), nl->key), *word = NULL;
    if (!pin || !wants_unpin(nl, vm))
        return SCHED_PINS_NODELOSS_NONE;
    if (!ready(nl)) {
        *wait_ms = SYNC_WAIT_MS;
        return SCHED_PINS_NODELOSS_LATER;
    }
    int64_t since = lost_since(nl, pin, &word);
    if (!since)
        return SCHED_PINS_NODELOSS_NONE;
    int64_t lost_ms = kube_now_ms() - since; /* one clock: never negative */
    if (lost_ms < nl->o.grace_ms) {
        *wait_ms = nl->o.grace_ms - lost_ms;
        return SCHED_PINS_NODELOSS_LATER;
    }
    if (held_by_volume(nl, vm, vmi, pin) || !leading(nl))
        return SCHED_PINS_NODELOSS_DONE;
    return unpin(nl, vm, pin, word, lost_ms);
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */
/* ------------------------------------------------------------------ */

void sched_pins_nodeloss_leading(sched_pins_nodeloss *nl, int leading)
{
    nl->led_ms = leading ? kube_now_ms() : 0;
}

static int get_lister(kube_factory *f, const kube_resource *res, const kube_codec *codec,
                      kube_lister **out)
{
    kube_informer_options o = {.resource = res, .codec = codec};
    return kube_factory_lister(f, &o, out);
}

static int add_handlers(sched_pins_nodeloss *nl)
{
    kube_factory *f = nl->o.informers;
    kube_informer_handlers h = {on_node_add, on_node_update, on_node_delete, nl};
    kube_informer_handlers vh = {NULL, on_vm_update, on_vm_delete, nl};
    int rc = get_lister(f, &KUBE_RES_NODES, &kube_node_codec, &nl->nodes);
    if (rc == KUBE_OK)
        rc = get_lister(f, &KUBE_RES_VMS, &kube_vm_codec, &nl->vms);
    if (rc == KUBE_OK)
        rc = get_lister(f, &KUBE_RES_PVCS, &kube_pvc_codec, &nl->pvcs);
    if (rc == KUBE_OK)
        rc = get_lister(f, &KUBE_RES_PVS, &kube_pv_codec, &nl->pvs);
    if (rc == KUBE_OK)
        rc = sched_pins_pinned_index_add(nl->vms, nl->key);
    if (rc == KUBE_OK)
        rc = kube_lister_add_handlers(nl->vms, &vh);
    return rc == KUBE_OK ? kube_lister_add_handlers(nl->nodes, &h) : rc;
}

static void register_metric(sched_pins_nodeloss *nl)
{
    kube_metric_opts o = {.name = "stickyvm_node_loss_unpins_total",
                          .help = "VirtualMachines unpinned because their pinned node was lost "
                                  "longer than nodeLossGracePeriod (stickyvm.io/on-node-loss: "
                                  "Unpin).",
                          .type = KUBE_METRIC_COUNTER};
    if (nl->o.registry)
        nl->unpins_metric = kube_metrics_ensure(nl->o.registry, &o);
}

int sched_pins_nodeloss_new(const sched_pins_nodeloss_options *o, sched_pins_nodeloss **out)
{
    *out = NULL;
    if (!o || !o->client || !o->informers || !o->key || !o->enqueue || o->grace_ms < 0)
        return KUBE_EINVAL;
    sched_pins_nodeloss *nl = calloc(1, sizeof(*nl));
    if (!nl)
        return KUBE_ENOMEM;
    nl->o = *o;
    pthread_mutex_init(&nl->mu, NULL);
    nl->key = kube_strdup(o->key);
    nl->pinned_by = kube_strdup(o->pinned_by ? o->pinned_by : KUBE_PIN_BY_SCHEDULER);
    int rc = nl->key && nl->pinned_by ? add_handlers(nl) : KUBE_ENOMEM;
    if (rc != KUBE_OK) {
        sched_pins_nodeloss_free(nl);
        return rc;
    }
    register_metric(nl);
    *out = nl;
    return KUBE_OK;
}

unsigned long sched_pins_nodeloss_unpins(sched_pins_nodeloss *nl)
{
    return atomic_load(&nl->unpins);
}

void sched_pins_nodeloss_entries(sched_pins_nodeloss *nl, size_t *told, size_t *lost)
{
    pthread_mutex_lock(&nl->mu);
    *told = kube_strmap_len(&nl->told);
    *lost = kube_strmap_len(&nl->lost);
    pthread_mutex_unlock(&nl->mu);
}

static void free_value(void *ud, const char *key, void *value)
{
    (void)ud, (void)key;
    free(value);
}

void sched_pins_nodeloss_free(sched_pins_nodeloss *nl)
{
    if (!nl)
        return;
    kube_strmap_foreach(&nl->lost, free_value, NULL);
    kube_strmap_free(&nl->lost);
    kube_strmap_foreach(&nl->told, free_value, NULL);
    kube_strmap_free(&nl->told);
    free(nl->key);
    free(nl->pinned_by);
    pthread_mutex_destroy(&nl->mu);
    free(nl);
}
