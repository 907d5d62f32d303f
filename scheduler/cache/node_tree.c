/*
 * scheduler/cache/node_tree.c - the node names by zone, listed round robin
 * (node_tree.h).
 */
#include "cache/node_tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/array.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/types/node.h"

/* The nodes of one zone, in add order. */
struct node_zone {
    char *key;
    char **names;
    size_t n, cap;
};

void sched_node_tree_free(sched_node_tree *t)
{
    for (size_t i = 0; i < t->n_zones; i++) {
        for (size_t k = 0; k < t->zones[i].n; k++)
            free(t->zones[i].names[k]);
        free(t->zones[i].names);
        free(t->zones[i].key);
    }
    free(t->zones);
    free(t->order);
    memset(t, 0, sizeof(*t));
}

/* utilnode.GetZoneKey: "region:\0:zone" ("" without either label). The
 * NUL is kept by writing it as \x01 (a label value cannot contain it). */
static void zone_key(const kube_node *node, char *out, size_t n)
{
    const kube_meta *m = &node->base.meta;
    const char *zone = kube_meta_label(m, "topology.kubernetes.io/zone");
    const char *region = kube_meta_label(m, "topology.kubernetes.io/region");

    if (!zone)
        zone = kube_meta_label(m, "failure-domain.beta.kubernetes.io/zone");
    if (!region)
        region = kube_meta_label(m, "failure-domain.beta.kubernetes.io/region");
    if ((!zone || !*zone) && (!region || !*region)) {
        out[0] = '\0';
        return;
    }
    snprintf(out, n, "%s:\x01:%s", region ? region : "", zone ? zone : "");
}

/* The zone of key (its index in *idx when idx is set), or NULL. */
static node_zone *zone_find(sched_node_tree *t, const char *key, size_t *idx)
{
    for (size_t i = 0; i < t->n_zones; i++) {
        if (!strcmp(t->zones[i].key, key)) {
            if (idx)
                *idx = i;
            return &t->zones[i];
        }
    }
    return NULL;
}

int sched_node_tree_add(sched_node_tree *t, const kube_node *node)
{
    char key[512];
    const char *name = node->base.meta.name;
    node_zone *z;

    zone_key(node, key, sizeof(key));
    z = zone_find(t, key, NULL);
    if (!z) {
        if (KUBE_ARRAY_RESERVE(t->zones, t->cap_zones, t->n_zones + 1) != KUBE_OK)
            return KUBE_ENOMEM;
        z = &t->zones[t->n_zones];
        memset(z, 0, sizeof(*z));
        z->key = strdup(key);
        if (!z->key)
            return KUBE_ENOMEM;
        t->n_zones++;
    }
    for (size_t i = 0; i < z->n; i++)
        if (!strcmp(z->names[i], name))
            return KUBE_OK;
    if (KUBE_ARRAY_RESERVE(z->names, z->cap, z->n + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    z->names[z->n] = strdup(name);
    if (!z->names[z->n])
        return KUBE_ENOMEM;
    z->n++;
    t->n_nodes++;
    return KUBE_OK;
}

void sched_node_tree_remove(sched_node_tree *t, const kube_node *node)
{
    char key[512];
    const char *name = node->base.meta.name;
    size_t zi;
    node_zone *z;

    zone_key(node, key, sizeof(key));
    z = zone_find(t, key, &zi);
    for (size_t i = 0; z && i < z->n; i++) {
        if (strcmp(z->names[i], name))
            continue;
        free(z->names[i]);
        memmove(&z->names[i], &z->names[i + 1], (z->n - i - 1) * sizeof(char *));
        z->n--;
        t->n_nodes--;
        if (z->n == 0) {
            free(z->names);
            free(z->key);
            memmove(&t->zones[zi], &t->zones[zi + 1], (t->n_zones - zi - 1) * sizeof(node_zone));
            t->n_zones--;
        }
        return;
    }
    KLOG_ERROR("node %s not found in the node tree", name);
}

int sched_node_tree_update(sched_node_tree *t, const kube_node *old_node, const kube_node *new_node)
{
    char a[512], b[512];

    if (old_node) {
        zone_key(old_node, a, sizeof(a));
        zone_key(new_node, b, sizeof(b));
        if (!strcmp(a, b))
            return KUBE_OK;
        sched_node_tree_remove(t, old_node);
    }
    return sched_node_tree_add(t, new_node);
}

int sched_node_tree_list(sched_node_tree *t, const char *const **names, size_t *n)
{
    size_t got = 0, exhausted = 0;

    if (t->cap_order < t->n_nodes) {
        const char **a = realloc(t->order, t->n_nodes * sizeof(*a));
        if (!a)
            return KUBE_ENOMEM;
        t->order = a;
        t->cap_order = t->n_nodes;
    }
    for (size_t idx = 0; got < t->n_nodes && exhausted < t->n_zones; idx++) {
        for (size_t z = 0; z < t->n_zones; z++) {
            if (idx >= t->zones[z].n) {
                if (idx == t->zones[z].n)
                    exhausted++;
                continue;
            }
            t->order[got++] = t->zones[z].names[idx];
        }
    }
    *names = t->order;
    *n = got;
    return KUBE_OK;
}
