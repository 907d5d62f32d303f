/*
 * scheduler/pins/pinned_index.c - VMs by pinned node on the VM informer (see
 * pinned_index.h).
 */
#include "pins/pinned_index.h"

#include <stdio.h>

#include "kube/types/kubevirt.h"
#include "kube/types/pin.h"
#include "kube/util/errors.h"

/* "stickyvm.io/vms-by-pin=" and an annotation key (<= 317 bytes). */
#define INDEX_NAME_MAX 400

/* kube_index_fn: ud is the pin key. */
static int pin_of_vm(void *ud, const kube_object *vm, kube_index_keys *keys)
{
    const char *pin = kube_pin_get(kube_vm_from(vm), ud);
    return pin && *pin ? kube_index_keys_add(keys, pin) : KUBE_OK;
}

/* The index name of key into out; KUBE_EINVAL when it does not fit. */
static int index_name(const char *key, char *out, size_t n)
{
    int len = snprintf(out, n, "stickyvm.io/vms-by-pin=%s", key);
    return len < 0 || (size_t)len >= n ? KUBE_EINVAL : KUBE_OK;
}

int sched_pins_pinned_index_add(kube_lister *vms, const char *key)
{
    char name[INDEX_NAME_MAX];
    if (!vms || !key || index_name(key, name, sizeof(name)) != KUBE_OK)
        return KUBE_EINVAL;
    /* the same name means the same key: a second caller's copy is not kept */
    return kube_lister_add_index(vms, name, pin_of_vm, (void *)key);
}

int sched_pins_pinned_foreach(kube_lister *vms, const char *key, const char *node,
                              void (*fn)(void *ud, kube_object *vm), void *ud)
{
    char name[INDEX_NAME_MAX];
    if (!key || index_name(key, name, sizeof(name)) != KUBE_OK)
        return KUBE_EINVAL;
    int rc = kube_lister_by_index(vms, name, node, fn, ud);
    if (rc != KUBE_EINVAL || !node)
        return rc;
    rc = sched_pins_pinned_index_add(vms, key); /* a lister built without it */
    return rc == KUBE_OK ? kube_lister_by_index(vms, name, node, fn, ud) : rc;
}

static void count_one(void *ud, kube_object *vm)
{
    (void)vm;
    (*(size_t *)ud)++;
}

size_t sched_pins_pinned_count(kube_lister *vms, const char *key, const char *node)
{
    size_t n = 0;
    return sched_pins_pinned_foreach(vms, key, node, count_one, &n) == KUBE_OK ? n : 0;
}
