/*
 * scheduler/cache/snapshot.c - UpdateSnapshot: brings a scheduling cycle's
 * fw_snapshot up to date with the cache, copying only the nodes whose
 * generation moved since the snapshot's (cache.h).
 */
#include "cache/cache_int.h"

#include <stdlib.h>
#include <string.h>

#include "kube/util/array.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"

typedef struct stale_ctx {
    sched_cache *c;
    char **names;
    size_t n, cap;
    int oom;
} stale_ctx;

static void collect_stale(void *ud, const char *name, void *value)
{
    stale_ctx *s = ud;
    const node_item *it = kube_strmap_get(&s->c->nodes, name);

    (void)value;
    if (s->oom || (it && it->info->node))
        return;
    if (KUBE_ARRAY_RESERVE(s->names, s->cap, s->n + 1) != KUBE_OK) {
        s->oom = 1;
        return;
    }
    s->names[s->n] = strdup(name);
    if (!s->names[s->n])
        s->oom = 1;
    else
        s->n++;
}

/* removeDeletedNodesFromSnapshot. */
static int remove_deleted(sched_cache *c, fw_snapshot *s)
{
    stale_ctx st = {c, NULL, 0, 0, 0};

    kube_strmap_foreach(&s->by_name, collect_stale, &st);
    for (size_t i = 0; i < st.n; i++) {
        fw_snapshot_remove(s, st.names[i]);
        free(st.names[i]);
    }
    free(st.names);
    return st.oom ? KUBE_ENOMEM : KUBE_OK;
}

static int rebuild_all(sched_cache *c, fw_snapshot *s)
{
    const char *const *names = NULL;
    size_t n = 0;
    int rc = sched_node_tree_list(&c->tree, &names, &n);

    if (rc == KUBE_OK)
        rc = fw_snapshot_rebuild_lists(s, names, n);
    return rc;
}

static int update_snapshot_locked(sched_cache *c, fw_snapshot *s)
{
    int64_t gen = s->generation;
    int all = 0, aff = 0, anti = 0, rc = KUBE_OK;

    for (node_item *it = c->head; it && rc == KUBE_OK; it = it->next) {
        int added = 0, a = 0, b = 0;
        if (it->info->generation <= gen)
            break;
        if (!it->info->node)
            continue;
        rc = fw_snapshot_upsert(s, it->info, &added, &a, &b);
        all |= added;
        aff |= a;
        anti |= b;
    }
    if (rc == KUBE_OK && c->head && c->head->info->generation > s->generation)
        s->generation = c->head->info->generation;
    if (rc == KUBE_OK && kube_strmap_len(&s->by_name) > c->tree.n_nodes) {
        rc = remove_deleted(c, s);
        all = 1;
    }
    if (rc == KUBE_OK && all)
        rc = rebuild_all(c, s);
    else if (rc == KUBE_OK && (aff || anti))
        rc = fw_snapshot_rebuild_affinity_lists(s);
    if (rc == KUBE_OK && s->n_list != c->tree.n_nodes) {
        KLOG_ERROR("snapshot state is not consistent, length of NodeInfoList=%zu not equal to "
                   "length of nodes in tree=%zu, length of NodeInfoMap=%zu, length of nodes in "
                   "cache=%zu, trying to recover",
                   s->n_list, c->tree.n_nodes, kube_strmap_len(&s->by_name),
                   kube_strmap_len(&c->nodes));
        rc = rebuild_all(c, s);
        if (rc == KUBE_OK)
            rc = KUBE_ESERVER;
    }
    return rc;
}

int sched_cache_update_snapshot(sched_cache *c, fw_snapshot *s)
{
    int rc;

    pthread_mutex_lock(&c->mu);
    rc = update_snapshot_locked(c, s);
    pthread_mutex_unlock(&c->mu);
    return rc;
}
