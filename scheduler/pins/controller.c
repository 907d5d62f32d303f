/*
 * scheduler/pins/controller.c - the pin controller (see pins/controller.h):
 * one rate-limited work queue of VirtualMachine keys fed by the VMI, VM
 * and pod informers and by a resync whenever leadership is acquired; a
 * worker whose reconcile follows completed live migrations and writes the
 * durable first pin, retrying failed writes with backoff. The rules it
 * applies are in scheduler/pins/rules.c.
 */
#include "pins/controller.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/machinery/recorder.h"
#include "kube/transport/api.h"
#include "kube/machinery/workqueue.h"
#include "kube/machinery/workqueue_testing.h"
#include "kube/util/clock.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/util/metrics.h"
#include "kube/util/strmap.h"
#include "pins/controller_testing.h"
#include "pins/lost.h"
#include "pins/nodeloss.h"
#include "pins/status.h"
#include "plugins/stickyvm/stickyvm.h"

/* "namespace/name": a namespace is <= 63 bytes, a name <= 253. */
#define KEY_MAX 320

typedef struct pins_metrics {
    kube_metric *pending, *retries, *recorded, *moved, *errors;
} pins_metrics;

struct sched_pins {
    sched_pins_options o;
    char *key, *pinned_by;
    char **names;
    kube_lister *vmis, *vms;
    kube_workqueue *q;

    pthread_mutex_t mu;  /* pending */
    kube_strmap pending; /* VM keys due a first pin not written yet */
    /* VM key -> resourceVersion (owned) of our last write, until the VM
     * cache shows it (worker thread only) */
    kube_strmap written;
    atomic_size_t n_written; /* its size, for the tests */
    pins_metrics m;
    sched_pins_status *status;     /* the pinned VMs' gauges (worker thread) */
    sched_pins_lost *lost;         /* PinnedNodeDeleted */
    sched_pins_nodeloss *nodeloss; /* stickyvm.io/on-node-loss */
    int64_t status_due_ms;         /* its next refresh (monotonic) */
    atomic_ulong first_pins, migrations, retries, resyncs;
    atomic_int leading_seen; /* was_leader, for the stats */

    int was_leader; /* worker thread only */
    int started;
    pthread_t worker;
};

/* Whether this replica leads (always, without leader election). */
static int leading(const sched_pins *c)
{
    const fw_leadership *l = &c->o.leadership;
    return !l->is_leader || l->is_leader(l->ud);
}

/* ------------------------------------------------------------------ */
/* Pending first pins                                                  */
/* ------------------------------------------------------------------ */

/* Marks VM key due a first pin (on) or not (off); the gauge follows. */
static void pending_set(sched_pins *c, const char *key, int on)
{
    pthread_mutex_lock(&c->mu);
    if (on && !kube_strmap_get(&c->pending, key))
        kube_strmap_put(&c->pending, key, c, NULL);
    else if (!on)
        kube_strmap_del(&c->pending, key);
    double n = (double)kube_strmap_len(&c->pending);
    pthread_mutex_unlock(&c->mu);
    kube_metric_set(c->m.pending, NULL, n);
}

static void pending_clear(sched_pins *c)
{
    pthread_mutex_lock(&c->mu);
    kube_strmap_free(&c->pending);
    pthread_mutex_unlock(&c->mu);
    kube_metric_set(c->m.pending, NULL, 0);
}

/* ------------------------------------------------------------------ */
/* Our writes the cache has not shown yet                              */
/* ------------------------------------------------------------------ */

/* Remembers the version res left VM key at (the cache catches up). */
static void written_set(sched_pins *c, const char *key, const kube_pin_result *res)
{
    char *rv = res->vm ? kube_strdup(res->vm->meta.resource_version) : NULL;
    void *old = NULL;
    if (rv && kube_strmap_put(&c->written, key, rv, &old) != KUBE_OK)
        free(rv);
    free(old);
    atomic_store(&c->n_written, kube_strmap_len(&c->written));
}

static void written_forget(sched_pins *c, const char *key)
{
    free(kube_strmap_del(&c->written, key));
    atomic_store(&c->n_written, kube_strmap_len(&c->written));
}

/* Whether the cached vm is older than our last write of it: its rules
 * would be judged on a stale VM (the VM informer's update queues it again
 * once the cache shows the write). */
static int cache_behind(sched_pins *c, const char *key, const kube_object *vm)
{
    const char *rv = kube_strmap_get(&c->written, key);
    int cmp = 0;
    if (!rv)
        return 0;
    if (kube_rv_compare(vm->meta.resource_version, rv, &cmp) == KUBE_OK && cmp < 0)
        return 1;
    written_forget(c, key);
    return 0;
}

static void free_value(void *ud, const char *key, void *value)
{
    (void)ud, (void)key;
    free(value);
}

/* Forgets every write (leadership lost: the next leader judges anew). */
static void written_clear(sched_pins *c)
{
    kube_strmap_foreach(&c->written, free_value, NULL);
    kube_strmap_free(&c->written);
    atomic_store(&c->n_written, 0);
}

/* ------------------------------------------------------------------ */
/* Queueing                                                            */
/* ------------------------------------------------------------------ */

void sched_pins_enqueue(sched_pins *c, const char *ns, const char *name)
{
    char key[KEY_MAX];
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    if (kube_workqueue_add(c->q, key) == KUBE_ENOMEM)
        KLOG_ERROR("StickyVM: out of memory queueing VM %s for the pin controller (the next "
                   "event or resync queues it again)",
                   key);
}

static void handoff_enqueue(void *ud, const char *ns, const char *name)
{
    sched_pins_enqueue(ud, ns, name);
}

plugin_pin_handoff sched_pins_handoff(sched_pins *c)
{
    return (plugin_pin_handoff){handoff_enqueue, c};
}

/* The VM of a VMI: its controller when a kubevirt.io VirtualMachine, else
 * the VMI's own name (KubeVirt names them alike). */
static const char *vm_name_of_vmi(const kube_object *vmi)
{
    const kube_owner_ref *o = stickyvm_vm_owner(&vmi->meta);
    return o ? o->name : vmi->meta.name;
}

static void on_vmi(void *ud, kube_object *obj)
{
    sched_pins *c = ud;
    if (leading(c))
        sched_pins_enqueue(c, obj->meta.namespace_, vm_name_of_vmi(obj));
}

static void on_vmi_update(void *ud, kube_object *old_obj, kube_object *new_obj)
{
    (void)old_obj;
    on_vmi(ud, new_obj);
}

static void on_vm(void *ud, kube_object *obj)
{
    sched_pins *c = ud;
    if (leading(c))
        sched_pins_enqueue(c, obj->meta.namespace_, obj->meta.name);
}

static void on_vm_update(void *ud, kube_object *old_obj, kube_object *new_obj)
{
    (void)old_obj;
    on_vm(ud, new_obj);
}

/* A deleted VM is queued too: its reconcile finds it gone and forgets
 * what the controller kept for it (written, pending). */
static void on_vm_delete(void *ud, kube_object *obj)
{
    on_vm(ud, obj);
}

/* Whether pod belongs to one of StickyVM's profiles. */
static int ours(const sched_pins *c, const kube_pod *pod)
{
    for (size_t i = 0; i < c->o.n_scheduler_names; i++)
        if (strcmp(pod->scheduler_name, c->names[i]) == 0)
            return 1;
    return 0;
}

/* A bound launcher pod of ours queues its VM. */
static void on_pod(void *ud, kube_object *obj)
{
    sched_pins *c = ud;
    const kube_pod *pod = kube_pod_from(obj);
    const kube_owner_ref *ref = pod ? stickyvm_vmi_owner(&obj->meta) : NULL;
    if (!ref || !*pod->node_name || !ours(c, pod) || !leading(c))
        return;
    kube_object *vmi = kube_lister_get(c->vmis, obj->meta.namespace_, ref->name);
    sched_pins_enqueue(c, obj->meta.namespace_, vmi ? vm_name_of_vmi(vmi) : ref->name);
    kube_object_unref(vmi);
}

static void on_pod_update(void *ud, kube_object *old_obj, kube_object *new_obj)
{
    (void)old_obj;
    on_pod(ud, new_obj);
}

/* kube_lister_foreach() callback of the resync: queues the VM. */
static void resync_one(void *ud, kube_object *obj)
{
    sched_pins_enqueue(ud, obj->meta.namespace_, obj->meta.name);
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */
/* ------------------------------------------------------------------ */

/* A Normal event on the VM (none without a recorder). */
static void vm_event(sched_pins *c, const kube_vm *vm, const char *reason, const char *note)
{
    kube_recorder_ref reg = kube_pin_event_ref(vm);
    if (c->o.recorder)
        kube_recorder_eventf(c->o.recorder, &reg, NULL, KUBE_RECORDER_NORMAL, reason, "Pin", "%s",
                             note);
}

/* Counts and logs a failed write of what (a sentence's start); the caller
 * retries it. */
static void write_failed(sched_pins *c, const char *key, const char *what, int rc,
                         const kube_pin_result *res)
{
    kube_metric_add(c->m.errors, NULL, 1);
    KLOG_ERROR("StickyVM: %s of VM %s failed (%s%s%s); the pin controller retries it (attempt %u)",
               what, key, rc != KUBE_OK ? kube_strerror(rc) : "the VM is gone",
               res->status.message[0] ? ": " : "", res->status.message,
               kube_workqueue_num_requeues(c->q, key) + 1);
}

typedef struct move {
    const char *key, *source, *uid;
} move;

/* After a conflict: still pinned to the source, the migration neither
 * followed nor seen by a newer decision. */
static int still_applies(void *ud, const kube_vm *cur)
{
    const move *mv = ud;
    return sched_pins_migration_due(cur, mv->key, mv->source, mv->uid);
}

/* The VMI of vm as kube-apiserver holds it now (a quorum GET), into *out:
 * a migration is followed only as it stands there, never as a lagging
 * cache shows it (an older migration seen again cannot move the pin
 * back). KUBE_OK (*out NULL when gone) or the request's error. */
static int fresh_vmi(sched_pins *c, const kube_vm *vm, kube_object **out, kube_status *st)
{
    cJSON *json = NULL;
    *out = NULL;
    int rc = kube_api_get(c->o.client, &KUBE_RES_VMIS, vm->base.meta.namespace_, vm->base.meta.name,
                          &json, st);
    if (rc == KUBE_OK)
        rc = kube_vmi_codec.decode(json, out);
    cJSON_Delete(json);
    return rc == KUBE_ENOTFOUND ? KUBE_OK : rc;
}

/* The event and counts of a migration followed from source to target. */
static void followed(sched_pins *c, const char *key, const kube_vm *vm, const move *mv,
                     const char *target)
{
    char note[640];
    KLOG_INFO("StickyVM: VM %s migrated from node %s to node %s (migration %s); pin moved", key,
              mv->source, target, mv->uid);
    snprintf(note, sizeof(note), "Pin moved from node %s to node %s after live migration",
             mv->source, target);
    vm_event(c, vm, "Repinned", note);
    atomic_fetch_add(&c->migrations, 1);
    kube_metric_add(c->m.recorded, NULL, 1);
    kube_metric_add(c->m.moved, NULL, 1);
}

/* Moves vm's pin after its VMI's completed migration, judged again on the
 * VMI read now. KUBE_OK when done (written, or no longer needed), else
 * the read's or the write's error. */
static int follow(sched_pins *c, const char *key, const kube_vm *vm)
{
    kube_pin_result res = {0};
    kube_object *obj = NULL;
    int rc = fresh_vmi(c, vm, &obj, &res.status);
    const kube_vmi *vmi = kube_vmi_from(obj);
    const char *target = vmi ? sched_pins_migration_target(vmi, vm, c->key) : NULL;
    if (rc != KUBE_OK || !target) {
        if (rc != KUBE_OK)
            write_failed(c, key, "reading the VMI to move the pin after live migration", rc, &res);
        kube_object_unref(obj);
        return rc;
    }
    move mv = {c->key, vmi->migration->source_node, vmi->migration->migration_uid};
    kube_pin_write w = {.key = c->key,
                        .node = target,
                        .reason = KUBE_PIN_MIGRATION,
                        .by = c->pinned_by,
                        .migration_uid = mv.uid};
    rc = kube_pin_set(c->o.client, vm, &w, still_applies, &mv, &res);
    if (rc == KUBE_OK)
        written_set(c, key, &res);
    if (rc == KUBE_OK && res.outcome == KUBE_PIN_WRITTEN)
        followed(c, key, vm, &mv, target);
    else if (rc != KUBE_OK)
        write_failed(c, key, "moving the pin after live migration", rc, &res);
    kube_pin_result_clear(&res);
    kube_object_unref(obj);
    return rc;
}

typedef struct first {
    const char *key, *pod_uid;
} first;

/* After a conflict: still unpinned, and no decision saw the pod. */
static int still_due(void *ud, const kube_vm *cur)
{
    const first *f = ud;
    return sched_pins_first_pin_due(cur, f->key, f->pod_uid);
}

/* Pins vm to p's node, where its current launcher pod runs. KUBE_OK when
 * done (written, or no longer needed), else the write's error. */
static int first_pin(sched_pins *c, const char *key, const kube_vm *vm,
                     const sched_pins_placement *p)
{
    first f = {c->key, p->pod_uid};
    kube_pin_write w = {
        .key = c->key, .node = p->node, .reason = KUBE_PIN_FIRST_PLACEMENT, .by = c->pinned_by};
    kube_pin_result res = {0};
    char note[640];
    int rc = kube_pin_set(c->o.client, vm, &w, still_due, &f, &res);
    if (rc == KUBE_OK)
        written_set(c, key, &res);
    if (rc == KUBE_OK && res.outcome == KUBE_PIN_WRITTEN) {
        KLOG_INFO("StickyVM: pin controller pinned VM %s to node %s, where its pod runs", key,
                  p->node);
        snprintf(note, sizeof(note), "Pinned to node %s, where its pod runs", p->node);
        vm_event(c, vm, "Pinned", note);
        atomic_fetch_add(&c->first_pins, 1);
        kube_metric_add(c->m.recorded, NULL, 1);
    } else if (rc != KUBE_OK) {
        write_failed(c, key, "pinning (first placement)", rc, &res);
    }
    kube_pin_result_clear(&res);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Reconcile                                                           */
/* ------------------------------------------------------------------ */

/* What a reconcile leaves to the queue. */
typedef enum verdict { DONE, SETTLE, RETRY } verdict;

/* The first-pin rule for vm, whose VMI is vmi. */
static verdict reconcile_first_pin(sched_pins *c, const char *key, const kube_object *vm,
                                   const kube_object *vmi, int64_t *wait_ms)
{
    sched_pins_placement p = {0};
    const kube_vmi *v = kube_vmi_from(vmi);
    /* a pinned VM never needs a first pin: no walk over every pod for it */
    int may_need = !kube_pin_get(kube_vm_from(vm), c->key);
    if (may_need && strcmp(v->phase, "Succeeded") != 0 && strcmp(v->phase, "Failed") != 0)
        sched_pins_placement_find(c->o.pods, (const char *const *)c->names, c->o.n_scheduler_names,
                                  vmi, &p);
    if (!p.found || !sched_pins_first_pin_due(kube_vm_from(vm), c->key, p.pod_uid)) {
        pending_set(c, key, 0);
        return DONE;
    }
    /* a delay, never an ordering: PostBind's own write may land meanwhile */
    if ((*wait_ms = sched_pins_settle_ms(p.bind_s)) > 0)
        return SETTLE;
    pending_set(c, key, 1);
    if (!leading(c))
        return DONE;
    if (first_pin(c, key, kube_vm_from(vm), &p) != KUBE_OK)
        return RETRY;
    pending_set(c, key, 0);
    return DONE;
}

/* The rules for vm (key), whose VMI is vmi (NULL: none): a completed
 * migration, the node-loss policy (pins/nodeloss.h), the first pin. */
static verdict reconcile_rules(sched_pins *c, const char *key, const kube_object *vm,
                               const kube_object *vmi, int64_t *wait_ms)
{
    const char *target =
        vmi ? sched_pins_migration_target(kube_vmi_from(vmi), kube_vm_from(vm), c->key) : NULL;
    if (target)
        return !leading(c) || follow(c, key, kube_vm_from(vm)) == KUBE_OK ? DONE : RETRY;
    switch (sched_pins_nodeloss_reconcile(c->nodeloss, vm, vmi, wait_ms)) {
    case SCHED_PINS_NODELOSS_NONE:
        break;
    case SCHED_PINS_NODELOSS_LATER:
        return SETTLE;
    case SCHED_PINS_NODELOSS_RETRY:
        return RETRY;
    case SCHED_PINS_NODELOSS_DONE:
        return DONE;
    }
    if (!vmi) {
        pending_set(c, key, 0);
        return DONE;
    }
    return reconcile_first_pin(c, key, vm, vmi, wait_ms);
}

/* The rules for VM ns/name (key), from the cache. */
static verdict reconcile_vm(sched_pins *c, const char *key, const char *ns, const char *name,
                            int64_t *wait_ms)
{
    kube_object *vm = kube_lister_get(c->vms, ns, name);
    kube_object *vmi = vm ? kube_lister_get(c->vmis, ns, name) : NULL;
    const kube_owner_ref *ref = vmi ? stickyvm_vm_owner(&vmi->meta) : NULL;
    verdict v = DONE;
    if (!vm)
        written_forget(c, key);
    if (!ref || strcmp(ref->name, name) != 0 ||
        (ref->uid && *ref->uid && strcmp(ref->uid, vm->meta.uid) != 0))
        ref = NULL; /* no VMI of the VM */
    if (vm && cache_behind(c, key, vm))
        v = DONE; /* judged again when the cache shows our write */
    else if (vm)
        v = reconcile_rules(c, key, vm, ref ? vmi : NULL, wait_ms);
    else
        pending_set(c, key, 0);
    kube_object_unref(vmi);
    kube_object_unref(vm);
    return v;
}

/* One queued VM key: reconciled, then forgotten, held back until its pod
 * settled, or retried after its backoff. */
static void reconcile(sched_pins *c, const char *key)
{
    char ns[KEY_MAX];
    const char *slash = strchr(key, '/');
    int64_t wait_ms = 0, delay = 0;
    if (!slash || (size_t)(slash - key) >= sizeof(ns))
        return;
    memcpy(ns, key, (size_t)(slash - key));
    ns[slash - key] = '\0';
    switch (reconcile_vm(c, key, ns, slash + 1, &wait_ms)) {
    case DONE:
        kube_workqueue_forget(c->q, key);
        break;
    case SETTLE:
        kube_workqueue_add_after(c->q, key, wait_ms);
        break;
    case RETRY:
        atomic_fetch_add(&c->retries, 1);
        kube_metric_add(c->m.retries, NULL, 1);
        kube_workqueue_add_rate_limited(c->q, key, &delay);
        KLOG_V(2, "StickyVM: pin of VM %s retried in %lld ms", key, (long long)delay);
        break;
    }
}

/* ------------------------------------------------------------------ */
/* Worker                                                              */
/* ------------------------------------------------------------------ */

/* Leadership edges: acquired (with the informers synced, so that nothing
 * is missed for not being cached yet) -> every VM again; lost -> the
 * queue and the pending set dropped. */
static void check_leadership(sched_pins *c)
{
    int now = leading(c) && kube_lister_has_synced(c->vmis) && kube_lister_has_synced(c->vms) &&
              kube_lister_has_synced(c->o.pods);
    if (now && !c->was_leader) {
        KLOG_V(2, "StickyVM: leading: reconciling every VM's pin");
        sched_pins_nodeloss_leading(c->nodeloss, 1);
        kube_lister_foreach(c->vms, resync_one, c);
        atomic_fetch_add(&c->resyncs, 1);
    } else if (!now && c->was_leader) {
        kube_workqueue_clear(c->q);
        pending_clear(c);
        written_clear(c);
        sched_pins_nodeloss_leading(c->nodeloss, 0);
    }
    c->was_leader = now;
    atomic_store(&c->leading_seen, now);
}

/* The refresh period (tests shorten it). */
static _Atomic int64_t status_refresh_ms = SCHED_PINS_STATUS_REFRESH_MS;

void sched_pins_status_refresh_ms_set(int64_t ms)
{
    atomic_store(&status_refresh_ms, ms > 0 ? ms : SCHED_PINS_STATUS_REFRESH_MS);
}

/* The pinned VMs' gauges, every SCHED_PINS_STATUS_REFRESH_MS on every
 * replica (from the caches, once they synced). */
static void refresh_status(sched_pins *c)
{
    int64_t now = kube_now_ms();
    if (now < c->status_due_ms || !kube_lister_has_synced(c->vms) ||
        !kube_lister_has_synced(c->o.pods))
        return;
    sched_pins_status_refresh(c->status);
    c->status_due_ms = now + atomic_load(&status_refresh_ms);
}

static void *worker_main(void *arg)
{
    sched_pins *c = arg;
    pthread_setname_np(pthread_self(), "stickyvm-pin");
    for (;;) {
        char *key = NULL;
        check_leadership(c);
        refresh_status(c);
        int rc = kube_workqueue_get(c->q, SCHED_PINS_LEADER_POLL_MS, &key);
        if (rc == KUBE_ECANCELED)
            break;
        if (rc != KUBE_OK)
            continue;
        if (leading(c))
            reconcile(c, key);
        kube_workqueue_done(c->q, key);
        free(key);
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */
/* ------------------------------------------------------------------ */

static void register_metrics(sched_pins *c)
{
    kube_metrics *r = c->o.registry;
    kube_metric_opts g = {.name = "stickyvm_pin_reconcile_pending",
                          .help = "VirtualMachines that should be pinned and are not yet (the pin "
                                  "controller retries their writes).",
                          .type = KUBE_METRIC_GAUGE};
    kube_metric_opts rt = {.name = "stickyvm_pin_write_retries_total",
                           .help = "Pin writes the pin controller retried after a failure.",
                           .type = KUBE_METRIC_COUNTER};
    kube_metric_opts rec = {.name = STICKYVM_METRIC_PINS_RECORDED,
                            .help = STICKYVM_METRIC_PINS_RECORDED_HELP,
                            .type = KUBE_METRIC_COUNTER};
    kube_metric_opts mv = {.name = STICKYVM_METRIC_MIGRATION_PINS_MOVED,
                           .help = STICKYVM_METRIC_MIGRATION_PINS_MOVED_HELP,
                           .type = KUBE_METRIC_COUNTER};
    kube_metric_opts er = {.name = STICKYVM_METRIC_PIN_RECORD_ERRORS,
                           .help = STICKYVM_METRIC_PIN_RECORD_ERRORS_HELP,
                           .type = KUBE_METRIC_COUNTER};
    if (!r)
        return;
    c->m.pending = kube_metrics_ensure(r, &g);
    c->m.retries = kube_metrics_ensure(r, &rt);
    c->m.recorded = kube_metrics_ensure(r, &rec);
    c->m.moved = kube_metrics_ensure(r, &mv);
    c->m.errors = kube_metrics_ensure(r, &er);
}

/* The VMI and VM listers of the factory. */
static int get_listers(sched_pins *c)
{
    kube_informer_options vmi_o = {.resource = &KUBE_RES_VMIS, .codec = &kube_vmi_codec};
    kube_informer_options vm_o = {.resource = &KUBE_RES_VMS, .codec = &kube_vm_codec};
    int rc = kube_factory_lister(c->o.informers, &vmi_o, &c->vmis);
    return rc == KUBE_OK ? kube_factory_lister(c->o.informers, &vm_o, &c->vms) : rc;
}

static int add_handlers(sched_pins *c)
{
    kube_informer_handlers vmi_h = {on_vmi, on_vmi_update, NULL, c};
    kube_informer_handlers vm_h = {on_vm, on_vm_update, on_vm_delete, c};
    kube_informer_handlers pod_h = {on_pod, on_pod_update, NULL, c};
    int rc = kube_lister_add_handlers(c->vmis, &vmi_h);
    if (rc == KUBE_OK)
        rc = kube_lister_add_handlers(c->vms, &vm_h);
    return rc == KUBE_OK ? kube_lister_add_handlers(c->o.pods, &pod_h) : rc;
}

/* The copies of o's strings. */
static int copy_strings(sched_pins *c, const sched_pins_options *o)
{
    c->key = kube_strdup(o->key);
    c->pinned_by = kube_strdup(o->pinned_by ? o->pinned_by : KUBE_PIN_BY_SCHEDULER);
    c->names = calloc(o->n_scheduler_names + 1, sizeof(*c->names));
    if (!c->key || !c->pinned_by || !c->names)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < o->n_scheduler_names; i++)
        if (!(c->names[i] = kube_strdup(o->scheduler_names[i])))
            return KUBE_ENOMEM;
    return KUBE_OK;
}

static void enqueue_cb(void *ud, const char *ns, const char *name)
{
    sched_pins_enqueue(ud, ns, name);
}

static int nodeloss_new(sched_pins *c)
{
    sched_pins_nodeloss_options o = {c->o.client,     c->o.informers,
                                     c->o.recorder,   c->key,
                                     c->pinned_by,    c->o.node_loss_grace_ms,
                                     c->o.leadership, c->o.registry,
                                     enqueue_cb,      c};
    return sched_pins_nodeloss_new(&o, &c->nodeloss);
}

int sched_pins_new(const sched_pins_options *o, sched_pins **out)
{
    *out = NULL;
    if (!o || !o->client || !o->informers || !o->pods || !o->key || !*o->key)
        return KUBE_EINVAL;
    sched_pins *c = calloc(1, sizeof(*c));
    if (!c)
        return KUBE_ENOMEM;
    c->o = *o;
    pthread_mutex_init(&c->mu, NULL);
    int rc = copy_strings(c, o);
    if (rc == KUBE_OK)
        rc = kube_workqueue_new(KUBE_WORKQUEUE_BASE_DELAY_MS, KUBE_WORKQUEUE_MAX_DELAY_MS, &c->q);
    if (rc == KUBE_OK)
        rc = get_listers(c);
    if (rc == KUBE_OK)
        rc = add_handlers(c);
    if (rc == KUBE_OK)
        rc = sched_pins_status_new(o->informers, o->pods, o->key, o->registry, &c->status);
    if (rc == KUBE_OK)
        rc = sched_pins_lost_new(o->informers, o->key, o->recorder, o->leadership, &c->lost);
    if (rc == KUBE_OK)
        rc = nodeloss_new(c);
    if (rc != KUBE_OK) {
        sched_pins_free(c);
        return rc;
    }
    register_metrics(c);
    *out = c;
    return KUBE_OK;
}

int sched_pins_start(sched_pins *c)
{
    if (c->started)
        return KUBE_EINVAL;
    if (pthread_create(&c->worker, NULL, worker_main, c) != 0)
        return KUBE_ENOMEM;
    c->started = 1;
    return KUBE_OK;
}

void sched_pins_stop(sched_pins *c)
{
    if (!c || !c->started)
        return;
    kube_workqueue_shutdown(c->q);
    pthread_join(c->worker, NULL);
    c->started = 0;
}

void sched_pins_free(sched_pins *c)
{
    if (!c)
        return;
    sched_pins_stop(c);
    kube_workqueue_free(c->q);
    sched_pins_status_free(c->status);
    sched_pins_lost_free(c->lost);
    sched_pins_nodeloss_free(c->nodeloss);
    kube_strmap_free(&c->pending);
    written_clear(c);
    for (size_t i = 0; c->names && i < c->o.n_scheduler_names; i++)
        free(c->names[i]);
    free(c->names);
    free(c->key);
    free(c->pinned_by);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

kube_lister *sched_pins_vmi_lister(sched_pins *c)
{
    return c->vmis;
}

void sched_pins_stats_get(sched_pins *c, sched_pins_stats *out)
{
    out->first_pins_written = atomic_load(&c->first_pins);
    out->migration_pins_moved = atomic_load(&c->migrations);
    out->write_retries = atomic_load(&c->retries);
    out->node_deleted_warnings = sched_pins_lost_warnings(c->lost);
    out->node_loss_unpins = sched_pins_nodeloss_unpins(c->nodeloss);
    pthread_mutex_lock(&c->mu);
    out->pending = kube_strmap_len(&c->pending);
    pthread_mutex_unlock(&c->mu);
    out->written = atomic_load(&c->n_written);
    out->leading = atomic_load(&c->leading_seen);
    out->resyncs = atomic_load(&c->resyncs);
    out->busy = kube_workqueue_busy(c->q);
}
