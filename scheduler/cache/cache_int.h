/*
 * scheduler/cache/cache_int.h - the cache's state, shared by cache.c and
 * snapshot.c. Not a public header: only scheduler/cache/ includes it.
 */
#ifndef SCHED_CACHE_INT_H
#define SCHED_CACHE_INT_H

#include <pthread.h>
#include <stdint.h>

#include "cache/cache.h"
#include "cache/node_tree.h"
#include "kube/util/strmap.h"

/* A node info in the recency list (nodeInfoListItem). */
typedef struct node_item {
    fw_node_info *info;
    struct node_item *prev, *next;
    char name[]; /* the node name (also for pods-only items) */
} node_item;

/* One pod in the cache: small, as there is one per pod of the cluster. */
typedef struct pod_state {
    fw_pod_info *pi;     /* one reference; pi->uid is the table key */
    node_item *item;     /* where it is placed (alive while it has pods) */
    int64_t deadline_ms; /* when binding_finished and the TTL is set */
    uint8_t assumed;
    uint8_t binding_finished;
} pod_state;

/* Pod states by UID: open addressing over the states themselves, keyed by
 * the UID their pod info borrows from the pod (no key copies). */
#define PT_TOMB ((pod_state *)1)

typedef struct pod_table {
    pod_state **slots;
    size_t cap, len, used; /* cap a power of two; used counts tombstones */
} pod_table;

/* Nodes that have one image (imageState). */
typedef struct image_state {
    int64_t size;
    kube_strmap nodes; /* node name -> (void *)1 */
} image_state;

struct sched_cache {
    pthread_mutex_t mu;
    int64_t ttl_ms;
    int64_t (*now_ms)(void *ud);
    void *clock_ud;
    sched_core_metrics *metrics;
    kube_strmap nodes; /* name -> node_item * */
    node_item *head;
    pod_table pods; /* uid -> pod_state */
    size_t n_assumed;
    kube_strmap images;   /* image name -> image_state * */
    sched_node_tree tree; /* nodeTree */
};

#endif
