/*
 * scheduler/framework/node_info.c - NodeInfo and the Snapshot.
 */
#include <stdlib.h>
#include <string.h>

#include "framework/types.h"
#include "kube/util/array.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "framework/types_testing.h"

static atomic_llong generation_counter;

int64_t fw_next_generation(void)
{
    return (int64_t)atomic_fetch_add(&generation_counter, 1) + 1;
}

fw_node_info *fw_node_info_new(void)
{
    fw_node_info *ni = calloc(1, sizeof(*ni));
    if (ni)
        ni->generation = fw_next_generation();
    return ni;
}

static void unref_all(fw_pod_info **pods, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fw_pod_info_unref(pods[i]);
}

void fw_node_info_free(fw_node_info *ni)
{
    if (!ni)
        return;
    unref_all(ni->pods, ni->n_pods);
    unref_all(ni->pods_with_affinity, ni->n_pods_with_affinity);
    unref_all(ni->pods_with_required_anti_affinity, ni->n_pods_with_required_anti_affinity);
    free(ni->pods);
    free(ni->pods_with_affinity);
    free(ni->pods_with_required_anti_affinity);
    fw_host_ports_free(&ni->used_ports);
    fw_resource_free(&ni->requested);
    fw_resource_free(&ni->allocatable);
    fw_image_states_unref(ni->image_states);
    if (ni->node)
        kube_object_unref(&ni->node->base);
    free(ni->name);
    free(ni);
}

int fw_node_info_set_node(fw_node_info *ni, struct kube_node *node)
{
    const char *name = node->base.meta.name;
    if (!ni->name || strcmp(ni->name, name) != 0) {
        char *copy = kube_strdup(name);
        if (!copy)
            return KUBE_ENOMEM;
        free(ni->name);
        ni->name = copy;
    }
    if (fw_resource_from_kube(&ni->allocatable, &node->allocatable) != KUBE_OK)
        return KUBE_ENOMEM;
    kube_object_ref(&node->base);
    if (ni->node)
        kube_object_unref(&ni->node->base);
    ni->node = node;
    ni->generation = fw_next_generation();
    return KUBE_OK;
}

void fw_node_info_remove_node(fw_node_info *ni)
{
    if (ni->node)
        kube_object_unref(&ni->node->base);
    ni->node = NULL;
    ni->generation = fw_next_generation();
}

void fw_node_info_set_image_states(fw_node_info *ni, fw_image_states *s)
{
    fw_image_states_ref(s);
    fw_image_states_unref(ni->image_states);
    ni->image_states = s;
    ni->generation = fw_next_generation();
}

/* Room for one more pointer in *arr (n used, *cap allocated; 32-bit
 * counts). KUBE_OK or KUBE_ENOMEM. */
static int ptr_reserve(fw_pod_info ***arr, uint32_t n, uint32_t *cap)
{
    size_t c = *cap;

    if (n == UINT32_MAX || KUBE_ARRAY_RESERVE(*arr, c, (size_t)n + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    *cap = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
    return KUBE_OK;
}

static int has_required_anti(const fw_pod_info *pi)
{
    return pi->n_required_anti_affinity_terms > 0;
}

/* Reserves room in every list add_pod may append to, so it cannot fail
 * half-way. */
static int reserve_for(fw_node_info *ni, const fw_pod_info *pi)
{
    const kube_pod *pod = pi->pod;
    if (ptr_reserve(&ni->pods, ni->n_pods, &ni->cap_pods) != KUBE_OK)
        return KUBE_ENOMEM;
    if (fw_pod_info_has_affinity(pi) &&
        ptr_reserve(&ni->pods_with_affinity, ni->n_pods_with_affinity,
                    &ni->cap_pods_with_affinity) != KUBE_OK)
        return KUBE_ENOMEM;
    if (has_required_anti(pi) &&
        ptr_reserve(&ni->pods_with_required_anti_affinity, ni->n_pods_with_required_anti_affinity,
                    &ni->cap_pods_with_required_anti_affinity) != KUBE_OK)
        return KUBE_ENOMEM;
    size_t need = ni->used_ports.n + pod->n_host_ports;
    if (KUBE_ARRAY_RESERVE(ni->used_ports.items, ni->used_ports.cap, need) != KUBE_OK)
        return KUBE_ENOMEM;
    /* Scalars: make sure every scalar the pod requests has a slot. */
    for (uint32_t i = 0; i < pi->request.n_scalars; i++)
        if (fw_resource_add_scalar(&ni->requested, pi->request.scalars[i].name, 0) != KUBE_OK)
            return KUBE_ENOMEM;
    return KUBE_OK;
}

static void update_totals(fw_node_info *ni, const fw_pod_info *pi, int64_t sign)
{
    const fw_resource *r = &pi->request;
    ni->requested.milli_cpu += sign * r->milli_cpu;
    ni->requested.memory += sign * r->memory;
    ni->requested.ephemeral_storage += sign * r->ephemeral_storage;
    for (uint32_t i = 0; i < r->n_scalars; i++)
        fw_resource_add_scalar(&ni->requested, r->scalars[i].name, sign * r->scalars[i].value);
    ni->non_zero_requested.milli_cpu += sign * pi->non0_milli_cpu;
    ni->non_zero_requested.memory += sign * pi->non0_memory;
    const kube_pod *pod = pi->pod;
    for (size_t i = 0; i < pod->n_host_ports; i++) {
        const kube_host_port *hp = &pod->host_ports[i];
        if (sign > 0)
            fw_host_ports_add(&ni->used_ports, hp->host_ip, hp->protocol, hp->port);
        else
            fw_host_ports_remove(&ni->used_ports, hp->host_ip, hp->protocol, hp->port);
    }
    ni->generation = fw_next_generation();
}

int fw_node_info_add_pod(fw_node_info *ni, fw_pod_info *pi)
{
    if (reserve_for(ni, pi) != KUBE_OK)
        return KUBE_ENOMEM;
    ni->pods[ni->n_pods++] = fw_pod_info_ref(pi);
    if (fw_pod_info_has_affinity(pi))
        ni->pods_with_affinity[ni->n_pods_with_affinity++] = fw_pod_info_ref(pi);
    if (has_required_anti(pi))
        ni->pods_with_required_anti_affinity[ni->n_pods_with_required_anti_affinity++] =
            fw_pod_info_ref(pi);
    update_totals(ni, pi, 1);
    return KUBE_OK;
}

/* Removes the pod with uid from arr (the last element fills the hole, as
 * kube-scheduler does) and drops that reference. 1 when found. */
static int remove_uid(fw_pod_info **arr, uint32_t *n, const char *uid)
{
    for (uint32_t i = 0; i < *n; i++) {
        if (strcmp(arr[i]->uid, uid) == 0) {
            fw_pod_info_unref(arr[i]);
            arr[i] = arr[--*n];
            return 1;
        }
    }
    return 0;
}

int fw_node_info_remove_pod(fw_node_info *ni, const char *uid)
{
    fw_pod_info *pi = NULL;
    for (size_t i = 0; i < ni->n_pods && !pi; i++)
        if (strcmp(ni->pods[i]->uid, uid) == 0)
            pi = ni->pods[i];
    if (!pi)
        return KUBE_ENOTFOUND;
    fw_pod_info_ref(pi);
    remove_uid(ni->pods_with_affinity, &ni->n_pods_with_affinity, uid);
    remove_uid(ni->pods_with_required_anti_affinity, &ni->n_pods_with_required_anti_affinity, uid);
    remove_uid(ni->pods, &ni->n_pods, uid);
    update_totals(ni, pi, -1);
    fw_pod_info_unref(pi);
    return KUBE_OK;
}

static int copy_pods(fw_pod_info ***dst, uint32_t *dn, uint32_t *dcap, fw_pod_info *const *src,
                     uint32_t sn)
{
    if (sn > *dcap) {
        fw_pod_info **a = realloc(*dst, sn * sizeof(*a));
        if (!a)
            return KUBE_ENOMEM;
        *dst = a;
        *dcap = sn;
    }
    for (size_t i = 0; i < sn; i++)
        fw_pod_info_ref(src[i]);
    unref_all(*dst, *dn);
    if (sn)
        memcpy(*dst, src, sn * sizeof(**dst));
    *dn = sn;
    return KUBE_OK;
}

int fw_node_info_copy(fw_node_info *dst, const fw_node_info *src)
{
    if (dst == src)
        return KUBE_OK;
    if (!dst->name || !src->name || strcmp(dst->name, src->name) != 0) {
        char *copy = kube_strdup(src->name);
        if (src->name && !copy)
            return KUBE_ENOMEM;
        free(dst->name);
        dst->name = copy;
    }
    if (copy_pods(&dst->pods, &dst->n_pods, &dst->cap_pods, src->pods, src->n_pods) ||
        copy_pods(&dst->pods_with_affinity, &dst->n_pods_with_affinity,
                  &dst->cap_pods_with_affinity, src->pods_with_affinity,
                  src->n_pods_with_affinity) ||
        copy_pods(&dst->pods_with_required_anti_affinity, &dst->n_pods_with_required_anti_affinity,
                  &dst->cap_pods_with_required_anti_affinity, src->pods_with_required_anti_affinity,
                  src->n_pods_with_required_anti_affinity) ||
        fw_host_ports_copy(&dst->used_ports, &src->used_ports) ||
        fw_resource_copy(&dst->requested, &src->requested) ||
        fw_resource_copy(&dst->allocatable, &src->allocatable))
        return KUBE_ENOMEM;
    if (dst->node != src->node) {
        if (src->node)
            kube_object_ref(&src->node->base);
        if (dst->node)
            kube_object_unref(&dst->node->base);
        dst->node = src->node;
    }
    if (dst->image_states != src->image_states) {
        fw_image_states_ref(src->image_states);
        fw_image_states_unref(dst->image_states);
        dst->image_states = src->image_states;
    }
    dst->non_zero_requested = src->non_zero_requested;
    dst->generation = src->generation;
    return KUBE_OK;
}

fw_node_info *fw_node_info_clone(const fw_node_info *src)
{
    fw_node_info *ni = calloc(1, sizeof(*ni));
    if (!ni)
        return NULL;
    if (fw_node_info_copy(ni, src) != KUBE_OK) {
        fw_node_info_free(ni);
        return NULL;
    }
    return ni;
}

/* ------------------------------------------------------------------ */
/* Snapshot                                                            */
/* ------------------------------------------------------------------ */

fw_snapshot *fw_snapshot_new(void)
{
    return calloc(1, sizeof(fw_snapshot));
}

static void free_value(void *ud, const char *key, void *value)
{
    (void)ud;
    (void)key;
    fw_node_info_free(value);
}

void fw_snapshot_free(fw_snapshot *s)
{
    if (!s)
        return;
    kube_strmap_foreach(&s->by_name, free_value, NULL);
    kube_strmap_free(&s->by_name);
    free(s->list);
    free(s->have_pods_with_affinity);
    free(s->have_pods_with_required_anti_affinity);
    free(s);
}

const fw_node_info *fw_snapshot_get(const fw_snapshot *s, const char *name)
{
    return kube_strmap_get(&s->by_name, name);
}

int fw_snapshot_upsert(fw_snapshot *s, const fw_node_info *src, int *added, int *aff_changed,
                       int *anti_changed)
{
    int is_new = 0;
    fw_node_info *ni = kube_strmap_get(&s->by_name, src->name);
    if (!ni) {
        ni = calloc(1, sizeof(*ni));
        if (!ni)
            return KUBE_ENOMEM;
        if (kube_strmap_put(&s->by_name, src->name, ni, NULL) != KUBE_OK) {
            free(ni);
            return KUBE_ENOMEM;
        }
        is_new = 1;
    }
    int had_aff = ni->n_pods_with_affinity > 0;
    int had_anti = ni->n_pods_with_required_anti_affinity > 0;
    int err = fw_node_info_copy(ni, src);
    if (added)
        *added = is_new;
    if (aff_changed)
        *aff_changed = had_aff != (ni->n_pods_with_affinity > 0);
    if (anti_changed)
        *anti_changed = had_anti != (ni->n_pods_with_required_anti_affinity > 0);
    if (src->generation > s->generation)
        s->generation = src->generation;
    return err;
}

void fw_snapshot_remove(fw_snapshot *s, const char *name)
{
    fw_node_info_free(kube_strmap_del(&s->by_name, name));
}

static int list_reserve(fw_node_info ***arr, size_t *cap, size_t need)
{
    return KUBE_ARRAY_RESERVE(*arr, *cap, need);
}

int fw_snapshot_rebuild_affinity_lists(fw_snapshot *s)
{
    if (list_reserve(&s->have_pods_with_affinity, &s->cap_aff, s->n_list) ||
        list_reserve(&s->have_pods_with_required_anti_affinity, &s->cap_anti, s->n_list))
        return KUBE_ENOMEM;
    s->n_have_pods_with_affinity = 0;
    s->n_have_pods_with_required_anti_affinity = 0;
    for (size_t i = 0; i < s->n_list; i++) {
        fw_node_info *ni = s->list[i];
        if (ni->n_pods_with_affinity)
            s->have_pods_with_affinity[s->n_have_pods_with_affinity++] = ni;
        if (ni->n_pods_with_required_anti_affinity)
            s->have_pods_with_required_anti_affinity[s->n_have_pods_with_required_anti_affinity++] =
                ni;
    }
    return KUBE_OK;
}

int fw_snapshot_rebuild_lists(fw_snapshot *s, const char *const *names, size_t n)
{
    if (list_reserve(&s->list, &s->cap_list, n))
        return KUBE_ENOMEM;
    s->n_list = 0;
    for (size_t i = 0; i < n; i++) {
        fw_node_info *ni = kube_strmap_get(&s->by_name, names[i]);
        if (!ni) {
            KLOG_ERROR("node %s exists in the node tree but not in the snapshot", names[i]);
            continue;
        }
        s->list[s->n_list++] = ni;
    }
    return fw_snapshot_rebuild_affinity_lists(s);
}

int fw_snapshot_from_nodes(fw_node_info *const *nodes, size_t n, fw_snapshot **out)
{
    *out = NULL;
    fw_snapshot *s = fw_snapshot_new();
    const char **names = calloc(n ? n : 1, sizeof(*names));
    int err = s && names ? KUBE_OK : KUBE_ENOMEM;
    for (size_t i = 0; i < n && !err; i++) {
        err = fw_snapshot_upsert(s, nodes[i], NULL, NULL, NULL);
        names[i] = nodes[i]->name;
    }
    if (!err)
        err = fw_snapshot_rebuild_lists(s, names, n);
    free(names);
    if (err) {
        fw_snapshot_free(s);
        return err;
    }
    *out = s;
    return KUBE_OK;
}
