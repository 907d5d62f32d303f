/*
 * scheduler/pins/launcher_index.c - virt-launcher pods by VMI on the pod
 * informer (see launcher_index.h).
 */
#include "pins/launcher_index.h"

#include <stdio.h>

#include "kube/util/errors.h"
#include "plugins/stickyvm/stickyvm.h"

/* "namespace/name": a namespace is <= 63 bytes, a name <= 253. */
#define VMI_KEY_MAX 320

/* kube_index_fn: a pod's VMI as "namespace/name", or no key. */
static int vmi_of_pod(void *ud, const kube_object *pod, kube_index_keys *keys)
{
    const kube_owner_ref *ref = stickyvm_vmi_owner(&pod->meta);
    char key[VMI_KEY_MAX];

    (void)ud;
    if (!ref)
        return KUBE_OK;
    snprintf(key, sizeof(key), "%s/%s", pod->meta.namespace_ ? pod->meta.namespace_ : "",
             ref->name);
    return kube_index_keys_add(keys, key);
}

int sched_pins_launcher_index_add(kube_lister *pods)
{
    return kube_lister_add_index(pods, SCHED_PINS_LAUNCHER_INDEX, vmi_of_pod, NULL);
}

int sched_pins_launchers_foreach(kube_lister *pods, const char *ns, const char *name,
                                 void (*fn)(void *ud, kube_object *pod), void *ud)
{
    char key[VMI_KEY_MAX];
    int rc;

    snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name);
    rc = kube_lister_by_index(pods, SCHED_PINS_LAUNCHER_INDEX, key, fn, ud);
    if (rc != KUBE_EINVAL)
        return rc;
    rc = sched_pins_launcher_index_add(pods); /* a lister built without it (tests) */
    return rc == KUBE_OK ? kube_lister_by_index(pods, SCHED_PINS_LAUNCHER_INDEX, key, fn, ud) : rc;
}
