/*
 * scheduler/cache/cache.c - the scheduler cache (cache.h): pods assumed,
 * bound and removed, nodes, images, and expiry of assumed pods. The
 * snapshot update is snapshot.c, the zones node_tree.c.
 */
#include "cache/cache_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/clock.h"
#include "kube/util/hash.h"
#include "kube/util/strmap.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "cache/cache_testing.h"

static int64_t now_ms(const sched_cache *c)
{
    return c->now_ms ? c->now_ms(c->clock_ud) : kube_now_ms();
}

/* ------------------------------------------------------------------ */
/* Pod table                                                           */
/* ------------------------------------------------------------------ */

static size_t pt_hash(const char *s)
{
    return (size_t)kube_fnv1a_str(KUBE_FNV1A_INIT, s);
}

/* The slot holding uid, or the slot where it would go (first tombstone
 * or empty one seen). */
static pod_state **pt_find(const pod_table *t, const char *uid, int *found)
{
    size_t mask = t->cap - 1, i = pt_hash(uid) & mask;
    pod_state **tomb = NULL;

    for (;;) {
        pod_state *ps = t->slots[i];
        if (!ps) {
            *found = 0;
            return tomb ? tomb : &t->slots[i];
        }
        if (ps == PT_TOMB) {
            if (!tomb)
                tomb = &t->slots[i];
        } else if (!strcmp(ps->pi->uid, uid)) {
            *found = 1;
            return &t->slots[i];
        }
        i = (i + 1) & mask;
    }
}

static pod_state *pt_get(const pod_table *t, const char *uid)
{
    int found = 0;
    pod_state **slot = t->cap ? pt_find(t, uid, &found) : NULL;

    return found ? *slot : NULL;
}

static int pt_grow(pod_table *t)
{
    /* mostly tombstones: rehash at the same size */
    size_t cap = !t->cap ? 64 : t->len * 4 < t->cap ? t->cap : t->cap * 2;
    pod_table n = {calloc(cap, sizeof(pod_state *)), cap, 0, 0};

    if (!n.slots)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < t->cap; i++) {
        int found;
        pod_state *ps = t->slots[i];
        if (ps && ps != PT_TOMB) {
            *pt_find(&n, ps->pi->uid, &found) = ps;
            n.len++;
        }
    }
    n.used = n.len;
    free(t->slots);
    *t = n;
    return KUBE_OK;
}

/* Inserts ps (its UID must be absent). KUBE_OK or KUBE_ENOMEM. */
static int pt_put(pod_table *t, pod_state *ps)
{
    int found;
    pod_state **slot;

    if ((t->used + 1) * 4 > t->cap * 3 && pt_grow(t) != KUBE_OK)
        return KUBE_ENOMEM;
    slot = pt_find(t, ps->pi->uid, &found);
    if (!*slot)
        t->used++;
    *slot = ps;
    t->len++;
    return KUBE_OK;
}

static void pt_del(pod_table *t, const char *uid)
{
    int found = 0;
    pod_state **slot = t->cap ? pt_find(t, uid, &found) : NULL;

    if (found) {
        *slot = PT_TOMB;
        t->len--;
    }
}

/* ------------------------------------------------------------------ */
/* Node items                                                          */
/* ------------------------------------------------------------------ */

static void move_to_head(sched_cache *c, node_item *it)
{
    if (c->head == it)
        return;
    if (it->prev)
        it->prev->next = it->next;
    if (it->next)
        it->next->prev = it->prev;
    it->prev = NULL;
    it->next = c->head;
    if (c->head)
        c->head->prev = it;
    c->head = it;
}

static node_item *item_get_or_create(sched_cache *c, const char *name)
{
    node_item *it = kube_strmap_get(&c->nodes, name);

    if (it)
        return it;
    it = calloc(1, sizeof(*it) + strlen(name) + 1);
    if (!it)
        return NULL;
    memcpy(it->name, name, strlen(name) + 1);
    it->info = fw_node_info_new();
    if (!it->info || kube_strmap_put(&c->nodes, name, it, NULL) != KUBE_OK) {
        fw_node_info_free(it->info);
        free(it);
        return NULL;
    }
    it->next = c->head;
    if (c->head)
        c->head->prev = it;
    c->head = it;
    return it;
}

static void item_remove(sched_cache *c, const char *name)
{
    node_item *it = kube_strmap_del(&c->nodes, name);

    if (!it)
        return;
    if (it->prev)
        it->prev->next = it->next;
    else
        c->head = it->next;
    if (it->next)
        it->next->prev = it->prev;
    fw_node_info_free(it->info);
    free(it);
}

/* ------------------------------------------------------------------ */
/* Image states                                                        */
/* ------------------------------------------------------------------ */

static void image_states_remove(sched_cache *c, const kube_node *node)
{
    if (!node)
        return;
    for (size_t i = 0; i < node->n_images; i++) {
        const kube_node_image *img = &node->images[i];
        for (size_t k = 0; k < img->n_names; k++) {
            image_state *st = kube_strmap_get(&c->images, img->names[k]);
            if (!st)
                continue;
            kube_strmap_del(&st->nodes, node->base.meta.name);
            if (kube_strmap_len(&st->nodes) == 0) {
                kube_strmap_del(&c->images, img->names[k]);
                kube_strmap_free(&st->nodes);
                free(st);
            }
        }
    }
}

static image_state *image_state_get(sched_cache *c, const char *name, int64_t size)
{
    image_state *st = kube_strmap_get(&c->images, name);

    if (st)
        return st;
    st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    st->size = size;
    if (kube_strmap_put(&c->images, name, st, NULL) != KUBE_OK) {
        free(st);
        return NULL;
    }
    return st;
}

static size_t image_count(const kube_node *node)
{
    size_t n = 0;

    for (size_t i = 0; i < node->n_images; i++)
        n += node->images[i].n_names;
    return n;
}

/* addNodeImageStates: records the node's images and gives its node info
 * their summaries. */
static int image_states_add(sched_cache *c, const kube_node *node, fw_node_info *info)
{
    size_t total = image_count(node), n = 0;
    fw_image_state *sums;
    fw_image_states *block = NULL;
    int rc = KUBE_OK;

    if (total == 0) {
        fw_node_info_set_image_states(info, NULL);
        return KUBE_OK;
    }
    sums = calloc(total, sizeof(*sums));
    if (!sums)
        return KUBE_ENOMEM;
    for (size_t i = 0; rc == KUBE_OK && i < node->n_images; i++) {
        const kube_node_image *img = &node->images[i];
        for (size_t k = 0; rc == KUBE_OK && k < img->n_names; k++) {
            image_state *st = image_state_get(c, img->names[k], img->size_bytes);
            if (!st ||
                kube_strmap_put(&st->nodes, node->base.meta.name, (void *)1, NULL) != KUBE_OK)
                rc = KUBE_ENOMEM;
            else
                sums[n++] =
                    (fw_image_state){img->names[k], st->size, (int)kube_strmap_len(&st->nodes)};
        }
    }
    if (rc == KUBE_OK)
        rc = fw_image_states_new(sums, n, &block);
    if (rc == KUBE_OK) {
        fw_node_info_set_image_states(info, block);
        fw_image_states_unref(block);
    }
    free(sums);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */
/* ------------------------------------------------------------------ */

int sched_cache_new(const sched_cache_options *opts, sched_cache **out)
{
    sched_cache *c = calloc(1, sizeof(*c));

    *out = NULL;
    if (!c)
        return KUBE_ENOMEM;
    pthread_mutex_init(&c->mu, NULL);
    if (opts) {
        c->ttl_ms = opts->assumed_ttl_ms > 0 ? opts->assumed_ttl_ms : 0;
        c->now_ms = opts->now_ms;
        c->clock_ud = opts->clock_ud;
        c->metrics = opts->metrics;
    }
    *out = c;
    return KUBE_OK;
}

static void free_pod_state(pod_state *ps)
{
    fw_pod_info_unref(ps->pi);
    free(ps);
}

static void free_image_state(void *ud, const char *key, void *value)
{
    image_state *st = value;

    (void)ud;
    (void)key;
    kube_strmap_free(&st->nodes);
    free(st);
}

void sched_cache_free(sched_cache *c)
{
    node_item *it, *next;

    if (!c)
        return;
    for (it = c->head; it; it = next) {
        next = it->next;
        fw_node_info_free(it->info);
        free(it);
    }
    kube_strmap_free(&c->nodes);
    for (size_t i = 0; i < c->pods.cap; i++)
        if (c->pods.slots[i] && c->pods.slots[i] != PT_TOMB)
            free_pod_state(c->pods.slots[i]);
    free(c->pods.slots);
    kube_strmap_foreach(&c->images, free_image_state, NULL);
    kube_strmap_free(&c->images);
    sched_node_tree_free(&c->tree);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* ------------------------------------------------------------------ */
/* Pods                                                                */
/* ------------------------------------------------------------------ */

/* Places pi on node (creating a node item if the node is unknown); *out
 * receives the item. */
static int place_pod(sched_cache *c, fw_pod_info *pi, const char *node, node_item **out)
{
    node_item *it = item_get_or_create(c, node);
    int rc;

    if (!it)
        return KUBE_ENOMEM;
    rc = fw_node_info_add_pod(it->info, pi);
    if (rc == KUBE_OK) {
        move_to_head(c, it);
        *out = it;
    } else if (!it->info->node && it->info->n_pods == 0) {
        item_remove(c, node);
    }
    return rc;
}

/* Takes pi off its item; an item with neither node nor pods goes away. */
static void unplace_pod(sched_cache *c, const fw_pod_info *pi, node_item *it)
{
    if (fw_node_info_remove_pod(it->info, pi->uid) != KUBE_OK)
        KLOG_ERROR("pod %s/%s not found on node %s in the cache", pi->namespace_, pi->name,
                   it->name);
    if (!it->info->node && it->info->n_pods == 0)
        item_remove(c, it->name);
    else
        move_to_head(c, it);
}

static int state_new(sched_cache *c, fw_pod_info *pi, const char *node, int assumed)
{
    pod_state *ps = calloc(1, sizeof(*ps));
    int rc;

    if (!ps)
        return KUBE_ENOMEM;
    ps->pi = fw_pod_info_ref(pi);
    ps->assumed = (uint8_t)assumed;
    rc = place_pod(c, pi, node, &ps->item);
    if (rc == KUBE_OK) {
        rc = pt_put(&c->pods, ps);
        if (rc != KUBE_OK)
            unplace_pod(c, pi, ps->item);
    }
    if (rc != KUBE_OK) {
        free_pod_state(ps);
        return rc;
    }
    c->n_assumed += ps->assumed;
    return KUBE_OK;
}

/* removePod: the state and its placement. */
static void state_remove(sched_cache *c, pod_state *ps)
{
    unplace_pod(c, ps->pi, ps->item);
    pt_del(&c->pods, ps->pi->uid);
    c->n_assumed -= ps->assumed;
    free_pod_state(ps);
}

int sched_cache_assume_pod(sched_cache *c, fw_pod_info *pi, const char *node)
{
    int rc;

    if (!pi || !node || !*node)
        return KUBE_EINVAL;
    pthread_mutex_lock(&c->mu);
    if (pt_get(&c->pods, pi->uid))
        rc = KUBE_EEXIST;
    else
        rc = state_new(c, pi, node, 1);
    pthread_mutex_unlock(&c->mu);
    if (rc == KUBE_EEXIST)
        KLOG_ERROR("pod %s/%s(%s) is in the cache, so can't be assumed", pi->namespace_, pi->name,
                   pi->uid);
    return rc;
}

int sched_cache_finish_binding(sched_cache *c, const fw_pod_info *pi)
{
    pod_state *ps;

    pthread_mutex_lock(&c->mu);
    ps = pt_get(&c->pods, pi->uid);
    if (ps && ps->assumed) {
        ps->binding_finished = 1;
        ps->deadline_ms = now_ms(c) + c->ttl_ms;
    }
    pthread_mutex_unlock(&c->mu);
    return KUBE_OK;
}

int sched_cache_forget_pod(sched_cache *c, const fw_pod_info *pi, const char *node)
{
    pod_state *ps;
    int rc = KUBE_OK;

    pthread_mutex_lock(&c->mu);
    ps = pt_get(&c->pods, pi->uid);
    if (ps && node && strcmp(ps->item->name, node)) {
        KLOG_ERROR("pod %s/%s(%s) was assumed on %s but assigned to %s", pi->namespace_, pi->name,
                   pi->uid, node, ps->item->name);
        rc = KUBE_EINVAL;
    } else if (ps && ps->assumed) {
        state_remove(c, ps);
    } else {
        KLOG_ERROR("pod %s/%s(%s) wasn't assumed so cannot be forgotten", pi->namespace_, pi->name,
                   pi->uid);
        rc = KUBE_ENOTFOUND;
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* Replaces the state's pod by a new pod info on node (updatePod). The
 * table key (the UID) is unchanged. */
static int state_replace(sched_cache *c, pod_state *ps, fw_pod_info *pi, const char *node)
{
    char old_node[256];
    node_item *it;
    int rc;

    kube_strlcpy(old_node, ps->item->name, sizeof(old_node));
    unplace_pod(c, ps->pi, ps->item);
    rc = place_pod(c, pi, node, &it);
    if (rc != KUBE_OK) {
        /* put the old one back where it was */
        if (place_pod(c, ps->pi, old_node, &ps->item) != KUBE_OK) {
            KLOG_ERROR("cache: lost pod %s/%s while out of memory", pi->namespace_, pi->name);
            pt_del(&c->pods, ps->pi->uid);
            c->n_assumed -= ps->assumed;
            free_pod_state(ps);
        }
        return rc;
    }
    fw_pod_info_unref(ps->pi);
    ps->pi = fw_pod_info_ref(pi);
    ps->item = it;
    return KUBE_OK;
}

static int add_pod_locked(sched_cache *c, struct kube_pod *pod, fw_pod_info *pi)
{
    pod_state *ps = pt_get(&c->pods, pi->uid);
    int rc;

    if (!ps)
        return state_new(c, pi, pod->node_name, 0);
    if (!ps->assumed) {
        KLOG_ERROR("pod %s/%s(%s) was already in added state", pi->namespace_, pi->name, pi->uid);
        return KUBE_EEXIST;
    }
    if (strcmp(ps->item->name, pod->node_name))
        KLOG_INFO("pod %s/%s was added to a different node (%s) than it was assumed (%s)",
                  pi->namespace_, pi->name, pod->node_name, ps->item->name);
    rc = state_replace(c, ps, pi, pod->node_name);
    if (rc == KUBE_OK) {
        ps->assumed = 0;
        ps->binding_finished = 0;
        c->n_assumed--;
    }
    return rc;
}

int sched_cache_add_pod(sched_cache *c, struct kube_pod *pod)
{
    fw_pod_info *pi = NULL;
    int rc;

    if (!pod || !*pod->node_name)
        return KUBE_EINVAL;
    rc = fw_pod_info_new(pod, &pi);
    if (rc != KUBE_OK)
        return rc;
    pthread_mutex_lock(&c->mu);
    rc = add_pod_locked(c, pod, pi);
    pthread_mutex_unlock(&c->mu);
    fw_pod_info_unref(pi);
    return rc;
}

int sched_cache_update_pod(sched_cache *c, struct kube_pod *old_pod, struct kube_pod *new_pod)
{
    fw_pod_info *pi = NULL;
    pod_state *ps;
    int rc;

    (void)old_pod;
    if (!new_pod || !*new_pod->node_name)
        return KUBE_EINVAL;
    rc = fw_pod_info_new(new_pod, &pi);
    if (rc != KUBE_OK)
        return rc;
    pthread_mutex_lock(&c->mu);
    ps = pt_get(&c->pods, pi->uid);
    if (!ps || ps->assumed) {
        KLOG_ERROR("pod %s/%s(%s) is not added to scheduler cache, so cannot be updated",
                   pi->namespace_, pi->name, pi->uid);
        rc = KUBE_ENOTFOUND;
    } else {
        rc = state_replace(c, ps, pi, new_pod->node_name);
    }
    pthread_mutex_unlock(&c->mu);
    fw_pod_info_unref(pi);
    return rc;
}

int sched_cache_remove_pod(sched_cache *c, const struct kube_pod *pod)
{
    const kube_meta *m = &pod->base.meta;
    pod_state *ps;
    int rc = KUBE_OK;

    pthread_mutex_lock(&c->mu);
    ps = pt_get(&c->pods, m->uid);
    if (!ps) {
        KLOG_ERROR("pod %s/%s(%s) is not found in scheduler cache, so cannot be removed from it",
                   m->namespace_, m->name, m->uid);
        rc = KUBE_ENOTFOUND;
    } else {
        if (*pod->node_name && strcmp(ps->item->name, pod->node_name))
            KLOG_ERROR("pod %s/%s was assumed to be on %s but got %s", m->namespace_, m->name,
                       ps->item->name, pod->node_name);
        state_remove(c, ps);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int sched_cache_is_assumed(sched_cache *c, const char *uid)
{
    const pod_state *ps;
    int r;

    pthread_mutex_lock(&c->mu);
    ps = pt_get(&c->pods, uid);
    r = ps && ps->assumed;
    pthread_mutex_unlock(&c->mu);
    return r;
}

int sched_cache_pod_node(sched_cache *c, const char *uid, char *out, size_t n)
{
    const pod_state *ps;
    int found;

    pthread_mutex_lock(&c->mu);
    ps = pt_get(&c->pods, uid);
    found = ps != NULL;
    if (found && out)
        kube_strlcpy(out, ps->item->name, n);
    pthread_mutex_unlock(&c->mu);
    return found;
}

/* ------------------------------------------------------------------ */
/* Nodes                                                               */
/* ------------------------------------------------------------------ */

static int clone_out(const node_item *it, fw_node_info **info)
{
    if (!info)
        return KUBE_OK;
    *info = fw_node_info_clone(it->info);
    return *info ? KUBE_OK : KUBE_ENOMEM;
}

/* AddNode / UpdateNode share everything but the tree step. */
static int set_node_locked(sched_cache *c, struct kube_node *old_node, struct kube_node *node,
                           fw_node_info **info)
{
    node_item *it = kube_strmap_get(&c->nodes, node->base.meta.name);
    int rc;

    if (it) {
        image_states_remove(c, it->info->node);
    } else {
        it = item_get_or_create(c, node->base.meta.name);
        if (!it)
            return KUBE_ENOMEM;
        old_node = NULL;
    }
    move_to_head(c, it);
    rc = sched_node_tree_update(&c->tree, old_node, node);
    if (rc == KUBE_OK)
        rc = image_states_add(c, node, it->info);
    if (rc == KUBE_OK)
        rc = fw_node_info_set_node(it->info, node);
    if (rc == KUBE_OK)
        rc = clone_out(it, info);
    return rc;
}

int sched_cache_add_node(sched_cache *c, struct kube_node *node, fw_node_info **info)
{
    int rc;

    if (info)
        *info = NULL;
    pthread_mutex_lock(&c->mu);
    rc = set_node_locked(c, NULL, node, info);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int sched_cache_update_node(sched_cache *c, struct kube_node *old_node, struct kube_node *new_node,
                            fw_node_info **info)
{
    int rc;

    if (info)
        *info = NULL;
    pthread_mutex_lock(&c->mu);
    rc = set_node_locked(c, old_node, new_node, info);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int sched_cache_remove_node(sched_cache *c, const struct kube_node *node)
{
    const char *name = node->base.meta.name;
    node_item *it;
    int rc = KUBE_OK;

    pthread_mutex_lock(&c->mu);
    it = kube_strmap_get(&c->nodes, name);
    if (!it) {
        KLOG_ERROR("node %s is not found in the scheduler cache", name);
        rc = KUBE_ENOTFOUND;
    } else {
        fw_node_info_remove_node(it->info);
        if (it->info->n_pods == 0)
            item_remove(c, name);
        else
            move_to_head(c, it);
        sched_node_tree_remove(&c->tree, node);
        image_states_remove(c, node);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Housekeeping                                                        */
/* ------------------------------------------------------------------ */

static void update_size_gauges(sched_cache *c)
{
    static const char *const assumed[] = {"assumed_pods"};
    static const char *const pods[] = {"pods"};
    static const char *const nodes[] = {"nodes"};

    if (!c->metrics)
        return;
    kube_metric_set(c->metrics->cache_size, assumed, (double)c->n_assumed);
    kube_metric_set(c->metrics->cache_size, pods, (double)c->pods.len);
    kube_metric_set(c->metrics->cache_size, nodes, (double)kube_strmap_len(&c->nodes));
}

/* Removes assumed pods whose binding finished before now - TTL. */
static size_t expire_locked(sched_cache *c, int64_t now)
{
    size_t n = 0;

    for (size_t i = 0; c->n_assumed && i < c->pods.cap; i++) {
        pod_state *ps = c->pods.slots[i];
        if (!ps || ps == PT_TOMB || !ps->assumed || !ps->binding_finished || now <= ps->deadline_ms)
            continue;
        KLOG_INFO("pod %s/%s expired", ps->pi->namespace_, ps->pi->name);
        state_remove(c, ps);
        n++;
    }
    return n;
}

size_t sched_cache_cleanup_assumed(sched_cache *c)
{
    size_t n = 0;

    pthread_mutex_lock(&c->mu);
    if (c->ttl_ms > 0)
        n = expire_locked(c, now_ms(c));
    update_size_gauges(c);
    pthread_mutex_unlock(&c->mu);
    return n;
}

void sched_cache_get_counts(sched_cache *c, sched_cache_counts *out)
{
    pthread_mutex_lock(&c->mu);
    out->nodes = c->tree.n_nodes;
    out->pods = c->pods.len;
    out->assumed = c->n_assumed;
    pthread_mutex_unlock(&c->mu);
}

int sched_cache_node_order(sched_cache *c, char ***out, size_t *n)
{
    const char *const *names = NULL;
    int rc;

    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&c->mu);
    rc = sched_node_tree_list(&c->tree, &names, n);
    if (rc == KUBE_OK && *n) {
        *out = calloc(*n, sizeof(char *));
        rc = *out ? KUBE_OK : KUBE_ENOMEM;
        for (size_t i = 0; rc == KUBE_OK && i < *n; i++) {
            (*out)[i] = strdup(names[i]);
            if (!(*out)[i])
                rc = KUBE_ENOMEM;
        }
        if (rc != KUBE_OK && *out) {
            for (size_t i = 0; i < *n; i++)
                free((*out)[i]);
            free(*out);
            *out = NULL;
        }
    }
    if (rc != KUBE_OK)
        *n = 0;
    pthread_mutex_unlock(&c->mu);
    return rc;
}
