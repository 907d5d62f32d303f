/*
 * scheduler/cache/node_tree.h - kube-scheduler's nodeTree
 * (internal/cache/node_tree.go): the node names grouped by zone, listed
 * round robin across zones so that the nodes a cycle looks at first are
 * spread over the zones.
 *
 * A zone is utilnode.GetZoneKey: the region and zone labels (the
 * topology.kubernetes.io ones, else the failure-domain.beta ones); nodes
 * with neither share the zone "".
 *
 * Threads: none of its own; the cache's lock covers it.
 * Memory: the tree owns copies of the names; sched_node_tree_free()
 * releases them. sched_node_tree_list()'s array belongs to the tree and
 * stays valid until the next change.
 */
#ifndef SCHED_NODE_TREE_H
#define SCHED_NODE_TREE_H

#include <stddef.h>

struct kube_node;
typedef struct node_zone node_zone;

typedef struct sched_node_tree {
    node_zone *zones;
    size_t n_zones, cap_zones;
    size_t n_nodes;     /* in every zone */
    const char **order; /* scratch for the list */
    size_t cap_order;
} sched_node_tree;

/* Releases everything the tree holds; it is empty (zeroed) afterwards. */
void sched_node_tree_free(sched_node_tree *t);
/* addNode: the node's name in its zone (once). KUBE_OK or KUBE_ENOMEM. */
int sched_node_tree_add(sched_node_tree *t, const struct kube_node *node);
/* removeNode: logs an error when the node is not in its zone. */
void sched_node_tree_remove(sched_node_tree *t, const struct kube_node *node);
/* updateNode: moves the node when its zone changed (old_node NULL: adds).
 * KUBE_OK or KUBE_ENOMEM. */
int sched_node_tree_update(sched_node_tree *t, const struct kube_node *old_node,
                           const struct kube_node *new_node);
/* list(): every name, round robin across zones, into *names (the tree's
 * array, *n entries). KUBE_OK or KUBE_ENOMEM. */
int sched_node_tree_list(sched_node_tree *t, const char *const **names, size_t *n);

#endif
