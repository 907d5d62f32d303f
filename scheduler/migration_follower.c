/*
 * scheduler/migration_follower.c - the pin follows completed live
 * migrations, level-triggered, on the leader (see migration_follower.h):
 * a deduplicating queue of VMI keys, a worker that compares each VMI with
 * its VM from the informers, and a resync of every VMI whenever leadership
 * is acquired.
 */
#include "migration_follower.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/util/clock.h"
#include "kube/util/strmap.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/machinery/recorder.h"

/* "namespace/name": a namespace is <= 63 bytes, a name <= 253. */
#define KEY_MAX 320

typedef struct work_item {
    struct work_item *next;
    char key[KEY_MAX];
} work_item;

struct sched_follower {
    sched_follower_options o;
    char *key, *pinned_by;

    pthread_mutex_t mu; /* queue, queued, stopping */
    pthread_cond_t cv;  /* work queued, stop */
    work_item *head, *tail;
    kube_strmap queued; /* keys in the queue (values unused) */
    int stopping;
    int was_leader; /* worker thread only */
    pthread_t worker;
};

/* Whether this replica leads (always, without leader election). */
static int leading(const sched_follower *f)
{
    const fw_leadership *l = &f->o.leadership;
    return !l->is_leader || l->is_leader(l->ud);
}

/* ------------------------------------------------------------------ */
/* The rule (pure)                                                     */
/* ------------------------------------------------------------------ */

/* vmi's migration when it completed without failure where the VMI runs. */
static const kube_vmi_migration_state *completed_migration(const kube_vmi *vmi)
{
    const kube_vmi_migration_state *m = vmi ? vmi->migration : NULL;
    if (!m || !m->completed || m->failed || !*m->target_node || !*m->source_node ||
        !*m->migration_uid || strcmp(m->target_node, vmi->node_name) != 0)
        return NULL;
    return m;
}

const char *sched_follower_target(const kube_vmi *vmi, const kube_vm *vm, const char *key)
{
    const kube_vmi_migration_state *m = completed_migration(vmi);
    const char *pin = kube_pin_get(vm, key), *followed = kube_pin_followed(vm);
    if (!m || !pin || strcmp(pin, m->source_node) != 0 || strcmp(pin, m->target_node) == 0)
        return NULL;
    if (followed && strcmp(followed, m->migration_uid) == 0)
        return NULL;
    return m->target_node;
}

/* ------------------------------------------------------------------ */
/* Queue                                                               */
/* ------------------------------------------------------------------ */

/* Queues VMI ns/name unless it is queued already (logged when memory runs
 * out: the next event or resync queues it again). */
static void enqueue(sched_follower *f, const char *ns, const char *name)
{
    work_item *w = calloc(1, sizeof(*w));
    if (!w) {
        KLOG_ERROR("StickyVM: out of memory queueing VMI %s/%s for the migration follower", ns,
                   name);
        return;
    }
    snprintf(w->key, sizeof(w->key), "%s/%s", ns, name);
    pthread_mutex_lock(&f->mu);
    if (kube_strmap_get(&f->queued, w->key) || kube_strmap_put(&f->queued, w->key, w, NULL)) {
        free(w); /* already queued (or no memory for the set) */
    } else {
        if (f->tail)
            f->tail->next = w;
        else
            f->head = w;
        f->tail = w;
        pthread_cond_signal(&f->cv);
    }
    pthread_mutex_unlock(&f->mu);
}

/* Pops one item; caller locks. */
static work_item *dequeue_locked(sched_follower *f)
{
    work_item *w = f->head;
    if (!w)
        return NULL;
    if (!(f->head = w->next))
        f->tail = NULL;
    kube_strmap_del(&f->queued, w->key);
    return w;
}

/* Empties the queue (leadership lost, or freeing). */
static void drop_queue(sched_follower *f)
{
    work_item *w;
    pthread_mutex_lock(&f->mu);
    while ((w = dequeue_locked(f)))
        free(w);
    pthread_mutex_unlock(&f->mu);
}

/* A VMI was added or changed (obj borrowed): queued when leading. */
static void vmi_changed(sched_follower *f, const kube_object *obj)
{
    const kube_vmi *vmi = kube_vmi_from(obj);
    if (!completed_migration(vmi) || !leading(f))
        return;
    enqueue(f, obj->meta.namespace_, obj->meta.name);
}

/* The VMI lister's handlers (hub thread). */
static void on_vmi_add(void *ud, kube_object *obj)
{
    vmi_changed(ud, obj);
}

static void on_vmi_update(void *ud, kube_object *old_obj, kube_object *new_obj)
{
    (void)old_obj;
    vmi_changed(ud, new_obj);
}

/* kube_lister_foreach() callback of the resync: queues obj when it
 * shows a completed migration. */
static void resync_one(void *ud, kube_object *obj)
{
    sched_follower *f = ud;
    if (completed_migration(kube_vmi_from(obj)))
        enqueue(f, obj->meta.namespace_, obj->meta.name);
}

/* ------------------------------------------------------------------ */
/* Following one migration                                             */
/* ------------------------------------------------------------------ */

typedef struct move {
    const char *key, *source, *uid;
} move;

/* After a conflict: still pinned to the source, migration not followed. */
static int still_applies(void *ud, const kube_vm *cur)
{
    const move *mv = ud;
    const char *pin = kube_pin_get(cur, mv->key), *followed = kube_pin_followed(cur);
    return pin && strcmp(pin, mv->source) == 0 && !(followed && strcmp(followed, mv->uid) == 0);
}

/* The Normal event Repinned on the VM (none without a recorder). */
static void record_event(sched_follower *f, const kube_vm *vm, const char *from, const char *to)
{
    kube_recorder_ref reg = kube_pin_event_ref(vm);
    if (f->o.recorder)
        kube_recorder_eventf(f->o.recorder, &reg, NULL, KUBE_RECORDER_NORMAL, "Repinned", "Pin",
                             "Pin moved from node %s to node %s after live migration", from, to);
}

/* Logs the write's outcome, records the event when the pin moved, and
 * tells the owner (done). */
static void report(sched_follower *f, const kube_vm *vm, const move *mv, const char *target, int rc,
                   const kube_pin_result *res)
{
    const kube_meta *m = &vm->base.meta;
    if (rc == KUBE_OK && res->outcome == KUBE_PIN_WRITTEN) {
        KLOG_INFO("StickyVM: VM %s/%s migrated from node %s to node %s (migration %s); pin moved",
                  m->namespace_, m->name, mv->source, target, mv->uid);
        record_event(f, vm, mv->source, target);
    } else if (rc != KUBE_OK || res->outcome == KUBE_PIN_GONE) {
        KLOG_ERROR("StickyVM: could not move the pin of VM %s/%s to node %s after migration: "
                   "%s (%s)",
                   m->namespace_, m->name, target,
                   rc != KUBE_OK ? kube_strerror(rc) : "the VM is gone", res->status.message);
    }
    if (f->o.done)
        f->o.done(f->o.ud, vm, rc, res);
}

/* Moves vm's pin when vmi's completed migration calls for it (one patch
 * through kube/pin, with the migration's UID). */
static void follow(sched_follower *f, const kube_vmi *vmi, const kube_vm *vm)
{
    const char *target = sched_follower_target(vmi, vm, f->key);
    if (!target)
        return;
    move mv = {f->key, vmi->migration->source_node, vmi->migration->migration_uid};
    kube_pin_write w = {.key = f->key,
                        .node = target,
                        .reason = KUBE_PIN_MIGRATION,
                        .by = f->pinned_by,
                        .migration_uid = mv.uid};
    kube_pin_result res;
    int rc = kube_pin_set(f->o.client, vm, &w, still_applies, &mv, &res);
    report(f, vm, &mv, target, rc, &res);
    kube_pin_result_clear(&res);
}

/* The VMI's controller when it is a kubevirt.io VirtualMachine. */
static const kube_owner_ref *vm_owner(const kube_meta *vmi)
{
    const kube_owner_ref *o = kube_meta_controller(vmi);
    if (!o || !o->kind || strcmp(o->kind, "VirtualMachine") != 0 || !o->api_version ||
        strncmp(o->api_version, "kubevirt.io/", 12) != 0 || !o->name)
        return NULL;
    return o;
}

/* The VMI named by key ("ns/name") against its VM, both from the cache. */
static void process(sched_follower *f, const char *key)
{
    char ns[KEY_MAX];
    const char *slash = strchr(key, '/');
    if (!slash || (size_t)(slash - key) >= sizeof(ns))
        return;
    memcpy(ns, key, (size_t)(slash - key));
    ns[slash - key] = '\0';
    kube_object *vmi = kube_lister_get(f->o.vmis, ns, slash + 1);
    const kube_owner_ref *ref = vmi ? vm_owner(&vmi->meta) : NULL;
    kube_object *vm = ref ? kube_lister_get(f->o.vms, ns, ref->name) : NULL;
    if (vm && (!ref->uid || !*ref->uid || strcmp(vm->meta.uid, ref->uid) == 0))
        follow(f, kube_vmi_from(vmi), kube_vm_from(vm));
    kube_object_unref(vm);
    kube_object_unref(vmi);
}

/* ------------------------------------------------------------------ */
/* Worker                                                              */
/* ------------------------------------------------------------------ */

/* Waits for work or stop, at most ms; caller locks. */
static void wait_locked(sched_follower *f, long ms)
{
    struct timespec ts;
    kube_deadline_after(&ts, CLOCK_MONOTONIC, ms);
    pthread_cond_timedwait(&f->cv, &f->mu, &ts);
}

/* Leadership edges: acquired (with both informers synced, so that no VM
 * is missed for not being cached yet) -> every VMI again; lost -> drop
 * the queue. */
static void check_leadership(sched_follower *f)
{
    int now = leading(f) && kube_lister_has_synced(f->o.vmis) && kube_lister_has_synced(f->o.vms);
    if (now && !f->was_leader) {
        KLOG_V(2, "StickyVM: leading: comparing every VMI's migration with its VM's pin");
        kube_lister_foreach(f->o.vmis, resync_one, f);
    } else if (!now && f->was_leader) {
        drop_queue(f);
    }
    f->was_leader = now;
}

/* The worker: leadership edges, then one queued VMI at a time (processed
 * only while leading), until stopped. */
static void *worker_main(void *arg)
{
    sched_follower *f = arg;
    pthread_setname_np(pthread_self(), "stickyvm-pin");
    for (;;) {
        check_leadership(f);
        pthread_mutex_lock(&f->mu);
        if (!f->head && !f->stopping)
            wait_locked(f, SCHED_FOLLOWER_LEADER_POLL_MS);
        work_item *w = f->stopping ? NULL : dequeue_locked(f);
        int stop = f->stopping;
        pthread_mutex_unlock(&f->mu);
        if (stop)
            break;
        if (w && leading(f))
            process(f, w->key);
        free(w);
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */
/* ------------------------------------------------------------------ */

/* Frees what sched_follower_new() set up (the worker not running). */
static void follower_release(sched_follower *f)
{
    drop_queue(f);
    kube_strmap_free(&f->queued);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    free(f->key);
    free(f->pinned_by);
    free(f);
}

int sched_follower_new(const sched_follower_options *o, sched_follower **out)
{
    pthread_condattr_t ca;
    *out = NULL;
    if (!o || !o->client || !o->vmis || !o->vms || !o->key || !*o->key)
        return KUBE_EINVAL;
    sched_follower *f = calloc(1, sizeof(*f));
    if (!f)
        return KUBE_ENOMEM;
    f->o = *o;
    f->key = kube_strdup(o->key);
    f->pinned_by = kube_strdup(o->pinned_by ? o->pinned_by : KUBE_PIN_BY_SCHEDULER);
    pthread_mutex_init(&f->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&f->cv, &ca);
    pthread_condattr_destroy(&ca);
    kube_informer_handlers h = {on_vmi_add, on_vmi_update, NULL, f};
    int rc = f->key && f->pinned_by ? kube_lister_add_handlers(o->vmis, &h) : KUBE_ENOMEM;
    if (rc == KUBE_OK && pthread_create(&f->worker, NULL, worker_main, f) != 0)
        rc = KUBE_ENOMEM;
    if (rc != KUBE_OK) {
        follower_release(f);
        return rc;
    }
    *out = f;
    return KUBE_OK;
}

void sched_follower_free(sched_follower *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&f->mu);
    f->stopping = 1;
    pthread_cond_signal(&f->cv);
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->worker, NULL);
    follower_release(f);
}
