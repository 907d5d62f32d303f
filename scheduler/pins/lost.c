/*
 * scheduler/pins/lost.c - the PinnedNodeDeleted Warning on the VMs pinned
 * to a deleted Node (see pins/lost.h).
 */
#include "pins/lost.h"
#include "pins/lost_testing.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/machinery/recorder.h"
#include "kube/transport/api.h"
#include "kube/types/kubevirt.h"
#include "kube/types/node.h"
#include "kube/types/pin.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/util/strmap.h"
#include "pins/pinned_index.h"

/* "namespace/name": a namespace is <= 63 bytes, a name <= 253. */
#define KEY_MAX 320

struct sched_pins_lost {
    char *key;
    struct kube_recorder *recorder;
    fw_leadership leadership;
    kube_lister *vms, *nodes;
    /* VM key -> uid (owned) of the deleted node it was last warned about,
     * while the VM is still pinned to that node (the informers' thread) */
    kube_strmap warned;
    atomic_size_t n_warned; /* its size, for any thread */
    atomic_ulong warnings;
};

/* A node deleted: who is told about it. */
typedef struct lost_node {
    sched_pins_lost *l;
    const kube_object *node;
} lost_node;

/* Whether VM key was already warned about the deletion of node uid;
 * remembers it. */
static int warned_before(sched_pins_lost *l, const char *key, const char *uid)
{
    const char *seen = kube_strmap_get(&l->warned, key);
    char *copy = NULL;
    void *old = NULL;
    if (seen && strcmp(seen, uid) == 0)
        return 1;
    if ((copy = kube_strdup(uid)) && kube_strmap_put(&l->warned, key, copy, &old) != KUBE_OK)
        free(copy);
    free(old);
    atomic_store(&l->n_warned, kube_strmap_len(&l->warned));
    return 0;
}

/* VM obj is no longer pinned where it was warned about (or is gone). */
static void forget(sched_pins_lost *l, const kube_object *obj)
{
    char key[KEY_MAX];
    snprintf(key, sizeof(key), "%s/%s", obj->meta.namespace_, obj->meta.name);
    free(kube_strmap_del(&l->warned, key));
    atomic_store(&l->n_warned, kube_strmap_len(&l->warned));
}

static void warn(sched_pins_lost *l, const kube_object *vm, const char *node)
{
    kube_recorder_ref reg = kube_pin_event_ref(kube_vm_from(vm));
    if (l->recorder)
        kube_recorder_eventf(l->recorder, &reg, NULL, KUBE_RECORDER_WARNING, "PinnedNodeDeleted",
                             "Pin",
                             "Pinned node %s was deleted: the VM cannot start until a node of "
                             "that name returns or the pin moves (\"kubectl stickyvm evacuate "
                             "%s\", or \"kubectl stickyvm pin %s -n %s --node NODE --force\")",
                             node, node, vm->meta.name, vm->meta.namespace_);
    atomic_fetch_add(&l->warnings, 1);
}

/* sched_pins_pinned_foreach() callback: a VM pinned to the deleted node gets
 * its warning, once per deletion. */
static void warn_one(void *ud, kube_object *obj)
{
    lost_node *ln = ud;
    const char *node = ln->node->meta.name;
    char key[KEY_MAX];
    snprintf(key, sizeof(key), "%s/%s", obj->meta.namespace_, obj->meta.name);
    if (warned_before(ln->l, key, ln->node->meta.uid))
        return;
    KLOG_INFO("StickyVM: VM %s is pinned to node %s, which was deleted", key, node);
    warn(ln->l, obj, node);
}

/* A Node deleted (the leader only): each VM pinned to it is warned. */
static void on_node_delete(void *ud, kube_object *obj)
{
    lost_node ln = {ud, obj};
    const fw_leadership *lead = &ln.l->leadership;
    if (!lead->is_leader || lead->is_leader(lead->ud))
        sched_pins_pinned_foreach(ln.l->vms, ln.l->key, obj->meta.name, warn_one, &ln);
}

/* A VM whose pin moved or went is forgotten (it was warned about its old
 * node, if at all). */
static void on_vm_update(void *ud, kube_object *old_obj, kube_object *new_obj)
{
    sched_pins_lost *l = ud;
    const char *was = kube_pin_get(kube_vm_from(old_obj), l->key);
    const char *is = kube_pin_get(kube_vm_from(new_obj), l->key);
    if (was && (!is || strcmp(was, is) != 0))
        forget(l, new_obj);
}

static void on_vm_delete(void *ud, kube_object *obj)
{
    forget(ud, obj);
}

static int add_handler(sched_pins_lost *l, kube_factory *f)
{
    kube_informer_options vm_o = {.resource = &KUBE_RES_VMS, .codec = &kube_vm_codec};
    kube_informer_options node_o = {.resource = &KUBE_RES_NODES, .codec = &kube_node_codec};
    kube_informer_handlers h = {NULL, NULL, on_node_delete, l};
    kube_informer_handlers vh = {NULL, on_vm_update, on_vm_delete, l};
    int rc = kube_factory_lister(f, &vm_o, &l->vms);
    if (rc == KUBE_OK)
        rc = kube_factory_lister(f, &node_o, &l->nodes);
    if (rc == KUBE_OK)
        rc = sched_pins_pinned_index_add(l->vms, l->key);
    if (rc == KUBE_OK)
        rc = kube_lister_add_handlers(l->vms, &vh);
    return rc == KUBE_OK ? kube_lister_add_handlers(l->nodes, &h) : rc;
}

int sched_pins_lost_new(kube_factory *informers, const char *key, struct kube_recorder *recorder,
                        fw_leadership leadership, sched_pins_lost **out)
{
    *out = NULL;
    if (!informers || !key)
        return KUBE_EINVAL;
    sched_pins_lost *l = calloc(1, sizeof(*l));
    if (!l || !(l->key = kube_strdup(key))) {
        sched_pins_lost_free(l);
        return KUBE_ENOMEM;
    }
    l->recorder = recorder;
    l->leadership = leadership;
    int rc = add_handler(l, informers);
    if (rc != KUBE_OK) {
        sched_pins_lost_free(l);
        return rc;
    }
    *out = l;
    return KUBE_OK;
}

unsigned long sched_pins_lost_warnings(sched_pins_lost *l)
{
    return atomic_load(&l->warnings);
}

size_t sched_pins_lost_entries(sched_pins_lost *l)
{
    return atomic_load(&l->n_warned);
}

static void free_value(void *ud, const char *key, void *value)
{
    (void)ud, (void)key;
    free(value);
}

void sched_pins_lost_free(sched_pins_lost *l)
{
    if (!l)
        return;
    kube_strmap_foreach(&l->warned, free_value, NULL);
    kube_strmap_free(&l->warned);
    free(l->key);
    free(l);
}
