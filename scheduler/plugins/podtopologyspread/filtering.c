/*
 * scheduler/plugins/podtopologyspread/filtering.c - PodTopologySpread's
 * PreFilter (per-node counts, cached across cycles by selector; critical
 * paths), its AddPod/RemovePod and Filter (upstream filtering.go).
 */
#include "plugins/podtopologyspread/internal.h"

/* ------------------------------------------------------------------ */
/* Per-node count cache                                                */
/* ------------------------------------------------------------------ */

static const char *const op_names[] = {"in", "notin", "exists", "!", "gt", "lt", "?"};

/* "namespace\x1fkey\x1eop\x1ev1\x1dv2..\x1c..." or NULL (nil selector or
 * out of memory: not cached). Caller frees. */
static char *selector_sig(const kube_label_selector *sel, const char *ns)
{
    kube_buf b = KUBE_BUF_INIT;
    int rc;

    if (!sel)
        return NULL;
    rc = kube_buf_printf(&b, "%s\x1f", ns);
    for (size_t i = 0; rc == KUBE_OK && i < sel->n_reqs; i++) {
        const kube_requirement *r = &sel->reqs[i];
        rc = kube_buf_printf(&b, "%s\x1e%s\x1e", r->key, op_names[r->op]);
        for (size_t v = 0; rc == KUBE_OK && v < r->n_values; v++)
            rc = kube_buf_printf(&b, "%s\x1d", r->values[v]);
        if (rc == KUBE_OK)
            rc = kube_buf_puts(&b, "\x1c");
    }
    if (rc != KUBE_OK) {
        kube_buf_free(&b);
        return NULL;
    }
    return kube_buf_take(&b);
}

static void cache_clear(count_cache *c)
{
    if (c->slots)
        memset(c->slots, 0, c->cap * sizeof(*c->slots));
    c->len = 0;
}

/* Makes room for `more` new slots without growing later (slot pointers
 * handed out stay valid); a table grown past 4x the nodes is reset (nodes
 * that left keep their slots otherwise). */
static int cache_reserve(count_cache *c, size_t more)
{
    size_t cap = 64;
    if (c->len > 4 * more)
        cache_clear(c);
    if ((c->len + more) * 2 <= c->cap)
        return KUBE_OK;
    while (cap < (c->len + more) * 2)
        cap *= 2;
    node_count *slots = calloc(cap, sizeof(*slots));
    if (!slots)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < c->cap; i++) {
        if (!c->slots[i].ni)
            continue;
        size_t j = ((uintptr_t)c->slots[i].ni >> 4) & (cap - 1);
        while (slots[j].ni)
            j = (j + 1) & (cap - 1);
        slots[j] = c->slots[i];
    }
    free(c->slots);
    c->slots = slots;
    c->cap = cap;
    return KUBE_OK;
}

static node_count *cache_slot(count_cache *c, const fw_node_info *ni)
{
    size_t j = ((uintptr_t)ni >> 4) & (c->cap - 1);
    while (c->slots[j].ni && c->slots[j].ni != ni)
        j = (j + 1) & (c->cap - 1);
    if (!c->slots[j].ni) {
        c->slots[j] = (node_count){ni, -1, 0};
        c->len++;
    }
    return &c->slots[j];
}

/* The cache of sig (taken), the least recently used one recycled. NULL
 * when sig is NULL. */
static count_cache *cache_for(pod_topology_spread *pl, char *sig)
{
    count_cache *lru = &pl->caches[0];

    if (!sig)
        return NULL;
    pl->tick++;
    for (size_t i = 0; i < CACHE_SELECTORS; i++) {
        count_cache *c = &pl->caches[i];
        if (c->sig && strcmp(c->sig, sig) == 0) {
            free(sig);
            c->used = pl->tick;
            return c;
        }
        if (c->used < lru->used)
            lru = c;
    }
    free(lru->sig);
    lru->sig = sig;
    lru->used = pl->tick;
    cache_clear(lru);
    return lru;
}

/* ------------------------------------------------------------------ */
/* PreFilter state                                                     */
/* ------------------------------------------------------------------ */

typedef struct critical_path {
    const char *value;
    int64_t num;
} critical_path;

/* Per topology key: matching pods per value, the domains counted in
 * PreFilter, and the two critical paths (paths[0].num is the minimum). */
typedef struct pts_key_state {
    plugin_tp_table values;
    int64_t domains;
    critical_path paths[2];
} pts_key_state;

typedef struct pre_filter_state {
    pts_constraints *c;
    pts_key_state *keys; /* c->n_keys */
} pre_filter_state;

static void pre_filter_state_free(void *data)
{
    pre_filter_state *s = data;
    if (!s)
        return;
    for (size_t k = 0; s->keys && k < s->c->n_keys; k++)
        plugin_tp_free(&s->keys[k].values);
    free(s->keys);
    pts_constraints_unref(s->c);
    free(s);
}

static pre_filter_state *pre_filter_state_new(pts_constraints *c)
{
    pre_filter_state *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->c = c;
    if (!(s->keys = calloc(c->n_keys, sizeof(*s->keys)))) {
        pre_filter_state_free(s);
        return NULL;
    }
    return s;
}

static void *pre_filter_state_clone(const void *data)
{
    const pre_filter_state *s = data;
    pre_filter_state *c = pre_filter_state_new(pts_constraints_ref(s->c));
    if (!c) {
        pts_constraints_unref(s->c);
        return NULL;
    }
    for (size_t k = 0; k < s->c->n_keys; k++) {
        c->keys[k] = s->keys[k];
        if (plugin_tp_clone(&c->keys[k].values, &s->keys[k].values) != KUBE_OK) {
            for (size_t j = k + 1; j < s->c->n_keys; j++)
                c->keys[j].values = (plugin_tp_table)PLUGIN_TP_TABLE_INIT;
            pre_filter_state_free(c);
            return NULL;
        }
    }
    return c;
}

static const fw_state_ops pre_filter_ops = {pre_filter_state_clone, pre_filter_state_free};

/* criticalPaths.update. */
static void paths_update(critical_path *p, const char *value, int64_t num)
{
    int i = strcmp(value, p[0].value) == 0 ? 0 : strcmp(value, p[1].value) == 0 ? 1 : -1;

    if (i >= 0) {
        p[i].num = num;
        if (p[0].num > p[1].num) {
            critical_path tmp = p[0];
            p[0] = p[1];
            p[1] = tmp;
        }
    } else if (num < p[0].num) {
        p[1] = p[0];
        p[0] = (critical_path){value, num};
    } else if (num < p[1].num) {
        p[1] = (critical_path){value, num};
    }
}

/* ---- Counting over the snapshot (parallel over nodes) ---- */

typedef struct count_job {
    const pts_constraints *c;
    const kube_pod *pod;
    const fw_node_info *const *nodes;
    int64_t *counts;    /* [node][constraint], -1: the node does not count */
    node_count **slots; /* [node][constraint], NULL: not cached */
} count_job;

/* The node's matching pods for constraint j, from its cache slot when the
 * node did not change. */
static int64_t cached_count(const count_job *job, size_t i, size_t j)
{
    const fw_node_info *ni = job->nodes[i];
    node_count *slot = job->slots ? job->slots[i * job->c->n + j] : NULL;

    if (slot && slot->generation == ni->generation)
        return slot->count;
    int64_t n =
        pts_count_matching_pods(ni, job->c->items[j].selector, job->pod->base.meta.namespace_);
    if (slot) {
        slot->generation = ni->generation;
        slot->count = n;
    }
    return n;
}

static void count_node(void *ud, size_t i)
{
    const count_job *job = ud;
    const pts_constraints *c = job->c;
    const kube_node *node = job->nodes[i]->node;
    int64_t *out = &job->counts[i * c->n];

    for (size_t j = 0; j < c->n; j++)
        out[j] = -1;
    if (!node || !pts_node_has_all_keys(node, c))
        return;
    int affinity_ok = pts_required_node_affinity_matches(job->pod, node);
    for (size_t j = 0; j < c->n; j++)
        if (pts_match_inclusion_policies(&c->items[j], job->pod, node, affinity_ok))
            out[j] = cached_count(job, i, j);
}

/* One cache slot per node and constraint, or NULL when memory runs out
 * (then nothing is cached this cycle). Every cache is chosen and sized
 * before any slot is handed out, so no slot moves; at most half the caches
 * serve one pod, so none of them is recycled under another constraint. */
static node_count **cache_slots(pod_topology_spread *pl, const pts_constraints *c,
                                const kube_pod *pod, const fw_node_info *const *nodes, size_t n)
{
    node_count **slots = calloc(n * c->n + 1, sizeof(*slots));
    count_cache **caches = calloc(c->n, sizeof(*caches));
    int rc = slots && caches ? KUBE_OK : KUBE_ENOMEM;

    for (size_t j = 0; rc == KUBE_OK && j < c->n && j < CACHE_SELECTORS / 2; j++)
        caches[j] = cache_for(pl, selector_sig(c->items[j].selector, pod->base.meta.namespace_));
    for (size_t j = 0; rc == KUBE_OK && j < c->n; j++)
        if (caches[j])
            rc = cache_reserve(caches[j], n);
    for (size_t j = 0; rc == KUBE_OK && j < c->n; j++)
        for (size_t i = 0; caches[j] && i < n; i++)
            slots[i * c->n + j] = cache_slot(caches[j], nodes[i]);
    free(caches);
    if (rc != KUBE_OK) {
        free(slots);
        return NULL;
    }
    return slots;
}

static int64_t *count_all_nodes(pod_topology_spread *pl, const pts_constraints *c,
                                const kube_pod *pod, const fw_node_info *const *nodes, size_t n)
{
    int64_t *counts = malloc((n ? n : 1) * c->n * sizeof(*counts));
    if (!counts)
        return NULL;
    count_job job = {c, pod, nodes, counts, cache_slots(pl, c, pod, nodes, n)};
    fw_parallelize(pl->h->svc.parallelizer, n, count_node, &job, NULL);
    free(job.slots);
    return counts;
}

/* Adds one node's counts: per key, the count of the LAST counting
 * constraint with that key (v1.28 assigns tpCounts[pair] per constraint). */
static int merge_node_counts(pre_filter_state *s, const kube_node *node, const int64_t *counts)
{
    const pts_constraints *c = s->c;
    for (size_t k = 0; k < c->n_keys; k++) {
        int64_t count = -1;
        for (size_t j = 0; j < c->n; j++)
            if (c->items[j].key == k && counts[j] >= 0)
                count = counts[j];
        if (count >= 0 &&
            plugin_tp_add(&s->keys[k].values, c->keys[k], pts_node_label(node, c->keys[k]), count,
                          NULL, NULL) != KUBE_OK)
            return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

static void init_paths(pts_key_state *ks)
{
    ks->domains = (int64_t)ks->values.len;
    ks->paths[0] = ks->paths[1] = (critical_path){"", MAX_PATH_NUM};
    for (size_t i = 0; i < ks->values.cap; i++)
        if (ks->values.slots[i].key)
            paths_update(ks->paths, ks->values.slots[i].value, ks->values.slots[i].count);
}

static int fill_pre_filter_state(pod_topology_spread *pl, pre_filter_state *s, const kube_pod *pod,
                                 const fw_snapshot *snap)
{
    const pts_constraints *c = s->c;
    const fw_node_info *const *nodes = (const fw_node_info *const *)snap->list;
    int64_t *counts = count_all_nodes(pl, c, pod, nodes, snap->n_list);
    int rc = counts ? KUBE_OK : KUBE_ENOMEM;

    for (size_t k = 0; rc == KUBE_OK && k < c->n_keys; k++)
        rc = plugin_tp_init(&s->keys[k].values,
                            strcmp(c->keys[k], LABEL_HOSTNAME) == 0 ? snap->n_list : 0);
    for (size_t i = 0; rc == KUBE_OK && i < snap->n_list; i++)
        if (nodes[i]->node)
            rc = merge_node_counts(s, nodes[i]->node, &counts[i * c->n]);
    for (size_t k = 0; rc == KUBE_OK && k < c->n_keys; k++)
        init_paths(&s->keys[k]);
    free(counts);
    return rc;
}

fw_status *pts_pre_filter(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                          fw_pre_filter_result **result)
{
    pod_topology_spread *pl = self;
    pts_constraints *c;
    pre_filter_state *s;
    int rc = pts_get_constraints(pl, (fw_pod_info *)pod, KUBE_DO_NOT_SCHEDULE, &c);

    if (rc == KUBE_EINVAL)
        return fw_status_error(rc, "obtaining pod's hard topology spread constraints: "
                                   "invalid label selector");
    if (rc != KUBE_OK)
        return fw_status_error(rc, NULL);
    if (!c)
        return fw_status_new(FW_SKIP, NULL);
    if (!(s = pre_filter_state_new(c))) {
        pts_constraints_unref(c);
        return fw_status_error(KUBE_ENOMEM, NULL);
    }
    if ((rc = fill_pre_filter_state(pl, s, pod->pod, pts_snapshot_of(pl))) != KUBE_OK) {
        pre_filter_state_free(s);
        return fw_status_error(rc, NULL);
    }
    rc = fw_cycle_state_write(cs, PRE_FILTER_KEY, s, &pre_filter_ops);
    return rc == KUBE_OK ? NULL : fw_status_error(rc, NULL);
}

static fw_status *state_not_found(const char *key)
{
    return fw_status_error(KUBE_ENOTFOUND, "reading \"%s\" from cycleState: not found", key);
}

/* updateWithPod: what AddPod (delta 1) and RemovePod (delta -1) share. */
static fw_status *update_with_pod(fw_cycle_state *cs, const fw_pod_info *pod,
                                  const fw_pod_info *updated, const fw_node_info *ni, int delta)
{
    pre_filter_state *s = fw_cycle_state_read_static(cs, PRE_FILTER_KEY);
    const kube_pod *preemptor = pod->pod, *p = updated->pod;
    const kube_node *node = ni->node;

    if (!s)
        return state_not_found(PRE_FILTER_KEY);
    if (strcmp(p->base.meta.namespace_, preemptor->base.meta.namespace_) != 0 || !node ||
        !pts_node_has_all_keys(node, s->c))
        return NULL;
    int affinity_ok = pts_required_node_affinity_matches(preemptor, node);
    for (size_t j = 0; j < s->c->n; j++) {
        const pts_constraint *t = &s->c->items[j];
        plugin_tp_entry *e;
        if (!pts_selector_matches_pod(t->selector, p) ||
            !pts_match_inclusion_policies(t, preemptor, node, affinity_ok))
            continue;
        pts_key_state *ks = &s->keys[t->key];
        const char *value = pts_node_label(node, t->topology_key);
        if (plugin_tp_add(&ks->values, t->topology_key, value, delta, NULL, &e) != KUBE_OK)
            return fw_status_error(KUBE_ENOMEM, NULL);
        paths_update(ks->paths, e->value, e->count);
    }
    return NULL;
}

fw_status *pts_pre_filter_add_pod(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                                  const fw_pod_info *pod_to_add, const fw_node_info *ni)
{
    return update_with_pod(cs, pod, pod_to_add, ni, 1);
}

fw_status *pts_pre_filter_remove_pod(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                                     const fw_pod_info *pod_to_remove, const fw_node_info *ni)
{
    return update_with_pod(cs, pod, pod_to_remove, ni, -1);
}

/* ------------------------------------------------------------------ */
/* Filter                                                              */
/* ------------------------------------------------------------------ */

fw_status *pts_filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                      const fw_node_info *ni)
{
    const pre_filter_state *s = fw_cycle_state_read_static(cs, PRE_FILTER_KEY);
    const kube_node *node = ni->node;

    if (!node)
        return fw_status_error(KUBE_ENOTFOUND, "node not found");
    if (!s)
        return state_not_found(PRE_FILTER_KEY);
    for (size_t j = 0; j < s->c->n; j++) {
        const pts_constraint *t = &s->c->items[j];
        const pts_key_state *ks = &s->keys[t->key];
        const char *value = pts_node_label(node, t->topology_key);
        if (!value)
            return fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                 ERR_REASON_NODE_LABEL_NOT_MATCH);
        if (ks->domains == 0)
            continue; /* v1.28: no domain for the key is an internal error, skipped */
        int64_t min_match = ks->domains < t->min_domains ? 0 : ks->paths[0].num;
        int64_t skew =
            plugin_tp_count(&ks->values, t->topology_key, value) + t->self_match - min_match;
        if (skew > t->max_skew)
            return fw_status_new(FW_UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH);
    }
    return NULL;
}
