/*
 * scheduler/queue/nominator.c - the pods nominated to nodes (nominator.h).
 */
#include "queue/nominator.h"
#include "queue/nominator_testing.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/array.h"
#include "kube/util/strmap.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/types/pod.h"

/* Pods nominated to one node. */
typedef struct nom_list {
    fw_pod_info **pis;
    size_t n, cap;
} nom_list;

struct sched_nominator {
    pthread_rwlock_t lock;
    atomic_size_t n_nominated; /* entries of node_of, read without the lock */
    kube_strmap node_of;       /* uid -> char *node (owned) */
    kube_strmap pods;          /* node -> nom_list * (owned) */
    sched_pod_pending_fn pod_pending;
    void *lister_ud;
};

int sched_nominator_new(sched_pod_pending_fn pod_pending, void *ud, sched_nominator **out)
{
    sched_nominator *n = calloc(1, sizeof(*n));

    *out = NULL;
    if (!n)
        return KUBE_ENOMEM;
    pthread_rwlock_init(&n->lock, NULL);
    n->pod_pending = pod_pending;
    n->lister_ud = ud;
    *out = n;
    return KUBE_OK;
}

static void free_node_name(void *ud, const char *key, void *value)
{
    (void)ud;
    (void)key;
    free(value);
}

static void free_list(void *ud, const char *key, void *value)
{
    nom_list *l = value;

    (void)ud;
    (void)key;
    for (size_t i = 0; i < l->n; i++)
        fw_pod_info_unref(l->pis[i]);
    free(l->pis);
    free(l);
}

void sched_nominator_free(sched_nominator *n)
{
    if (!n)
        return;
    kube_strmap_foreach(&n->node_of, free_node_name, NULL);
    kube_strmap_free(&n->node_of);
    kube_strmap_foreach(&n->pods, free_list, NULL);
    kube_strmap_free(&n->pods);
    pthread_rwlock_destroy(&n->lock);
    free(n);
}

/* Forgets the nomination of uid (write lock held). */
static void delete_locked(sched_nominator *n, const char *uid)
{
    char *node = kube_strmap_del(&n->node_of, uid);
    nom_list *l;

    if (!node)
        return;
    atomic_fetch_sub(&n->n_nominated, 1);
    l = kube_strmap_get(&n->pods, node);
    for (size_t i = 0; l && i < l->n; i++) {
        if (strcmp(l->pis[i]->uid, uid))
            continue;
        fw_pod_info_unref(l->pis[i]);
        memmove(&l->pis[i], &l->pis[i + 1], (l->n - i - 1) * sizeof(*l->pis));
        l->n--;
        break;
    }
    if (l && l->n == 0) {
        kube_strmap_del(&n->pods, node);
        free(l->pis);
        free(l);
    }
    free(node);
}

/* Adds pi (a new reference) to node's list unless present. KUBE_OK or
 * KUBE_ENOMEM (write lock held). */
static int append_locked(sched_nominator *n, const char *node, fw_pod_info *pi)
{
    nom_list *l = kube_strmap_get(&n->pods, node);

    if (!l) {
        l = calloc(1, sizeof(*l));
        if (!l || kube_strmap_put(&n->pods, node, l, NULL) != KUBE_OK) {
            free(l);
            return KUBE_ENOMEM;
        }
    }
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->pis[i]->uid, pi->uid))
            return KUBE_OK;
    if (KUBE_ARRAY_RESERVE(l->pis, l->cap, l->n + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    l->pis[l->n++] = fw_pod_info_ref(pi);
    return KUBE_OK;
}

/* addNominatedPodUnlocked (write lock held). */
static int add_locked(sched_nominator *n, fw_pod_info *pi, fw_nominating_mode mode,
                      const char *node)
{
    char *copy;
    int rc;

    delete_locked(n, pi->uid);
    if (mode == FW_NOMINATING_NOOP)
        node = pi->pod->nominated_node_name;
    if (!node || !*node)
        return KUBE_OK;
    if (n->pod_pending && !n->pod_pending(n->lister_ud, pi->namespace_, pi->name)) {
        KLOG_V(4, "pod %s/%s is gone or already scheduled: not nominating it", pi->namespace_,
               pi->name);
        return KUBE_OK;
    }
    copy = strdup(node);
    if (!copy)
        return KUBE_ENOMEM;
    rc = kube_strmap_put(&n->node_of, pi->uid, copy, NULL);
    if (rc == KUBE_OK)
        rc = append_locked(n, copy, pi);
    if (rc != KUBE_OK) {
        kube_strmap_del(&n->node_of, pi->uid);
        free(copy);
        return rc;
    }
    atomic_fetch_add(&n->n_nominated, 1);
    return KUBE_OK;
}

int sched_nominator_add(sched_nominator *n, fw_pod_info *pi, fw_nominating_mode mode,
                        const char *node)
{
    int rc;

    pthread_rwlock_wrlock(&n->lock);
    rc = add_locked(n, pi, mode, node);
    pthread_rwlock_unlock(&n->lock);
    return rc;
}

void sched_nominator_add_logged(sched_nominator *n, fw_pod_info *pi)
{
    if (sched_nominator_add(n, pi, FW_NOMINATING_NOOP, NULL) != KUBE_OK)
        KLOG_ERROR("out of memory recording the nomination of %s/%s", pi->namespace_, pi->name);
}

void sched_nominator_delete(sched_nominator *n, const char *uid)
{
    pthread_rwlock_wrlock(&n->lock);
    delete_locked(n, uid);
    pthread_rwlock_unlock(&n->lock);
}

void sched_nominator_update(sched_nominator *n, const struct kube_pod *old_pod, fw_pod_info *new_pi)
{
    const char *old_uid = old_pod ? old_pod->base.meta.uid : new_pi->uid;
    const char *old_nnn = old_pod ? old_pod->nominated_node_name : "";
    char keep[256] = "";

    pthread_rwlock_wrlock(&n->lock);
    if (!*old_nnn && !*new_pi->pod->nominated_node_name) {
        const char *node = kube_strmap_get(&n->node_of, old_uid);
        if (node)
            kube_strlcpy(keep, node, sizeof(keep));
    }
    delete_locked(n, old_uid);
    if (add_locked(n, new_pi, *keep ? FW_NOMINATING_OVERRIDE : FW_NOMINATING_NOOP, keep) != KUBE_OK)
        KLOG_ERROR("out of memory recording the nomination of %s/%s", new_pi->namespace_,
                   new_pi->name);
    pthread_rwlock_unlock(&n->lock);
}

int sched_nominator_node_of(sched_nominator *n, const char *uid, char *out, size_t len)
{
    const char *node;
    int found;

    pthread_rwlock_rdlock(&n->lock);
    node = kube_strmap_get(&n->node_of, uid);
    found = node != NULL;
    if (found && out)
        kube_strlcpy(out, node, len);
    pthread_rwlock_unlock(&n->lock);
    return found;
}

int sched_nominator_any(const sched_nominator *n)
{
    return atomic_load_explicit(&n->n_nominated, memory_order_acquire) != 0;
}

/* fw_nominator.pods_for_node: new references to the pods nominated to
 * node, in a caller-freed array. */
static int view_pods_for_node(void *ud, const char *node, fw_pod_info ***out, size_t *count)
{
    sched_nominator *n = ud;
    const nom_list *l;
    int rc = KUBE_OK;

    *out = NULL;
    *count = 0;
    /* Filter asks for every node: skip the lock when nobody is nominated */
    if (!sched_nominator_any(n))
        return KUBE_OK;
    pthread_rwlock_rdlock(&n->lock);
    l = kube_strmap_get(&n->pods, node);
    if (l && l->n) {
        *out = malloc(l->n * sizeof(**out));
        if (*out) {
            for (size_t i = 0; i < l->n; i++)
                (*out)[i] = fw_pod_info_ref(l->pis[i]);
            *count = l->n;
        } else {
            rc = KUBE_ENOMEM;
        }
    }
    pthread_rwlock_unlock(&n->lock);
    return rc;
}

/* fw_nominator.add: a node nominates it, none (or "") keeps the pod's own. */
static int view_add(void *ud, fw_pod_info *pi, const char *node)
{
    return sched_nominator_add(ud, pi, node && *node ? FW_NOMINATING_OVERRIDE : FW_NOMINATING_NOOP,
                               node);
}

/* fw_nominator.remove. */
static void view_remove(void *ud, const fw_pod_info *pi)
{
    sched_nominator_delete(ud, pi->uid);
}

/* fw_nominator.any. */
static int view_any(void *ud)
{
    return sched_nominator_any(ud);
}

fw_nominator sched_nominator_view(sched_nominator *n)
{
    fw_nominator v = {view_pods_for_node, view_add, view_remove, n, view_any};
    return v;
}
