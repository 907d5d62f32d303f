/*
 * scheduler/plugins/podtopologyspread/pairs.h - a hash table of topology
 * pairs (topology key, topology value) -> int64 count: the
 * map[topologyPair]int of kube-scheduler's PodTopologySpread and
 * InterPodAffinity plugins, sized once per cycle so that Filter and Score
 * only look up (allocation-free, safe from many threads at once).
 *
 * Strings are BORROWED: keys come from pod specs or plugin args, values
 * from node labels of the cycle's snapshot; the table must not be read
 * after those are gone (cycle states holding a table are read only during
 * the scheduling cycle). Entries are never removed: an entry whose count
 * went back to 0 stays (PodTopologySpread counts it as a domain); `nonzero`
 * counts the entries with a non-zero count, which is len() of
 * InterPodAffinity's maps (they delete entries at 0).
 *
 * Memory: plugin_tp_init() allocates the slots, plugin_tp_free() frees
 * them; plugin_tp_clone() allocates a copy. Not thread-safe for writes;
 * concurrent plugin_tp_get() calls are.
 *
 * Also PodTopologySpread's constructor with the listers of DefaultSelector
 * given (tests), at the end.
 */
#ifndef PLUGIN_POD_TOPOLOGY_SPREAD_PAIRS_H
#define PLUGIN_POD_TOPOLOGY_SPREAD_PAIRS_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "framework/framework.h"
#include "kube/types/workload.h"

typedef struct plugin_tp_entry {
    const char *key; /* NULL: empty slot */
    const char *value;
    uint64_t hash;
    int64_t count;
} plugin_tp_entry;

typedef struct plugin_tp_table {
    plugin_tp_entry *slots;
    size_t cap;     /* power of two, or 0 before the first insert */
    size_t len;     /* entries */
    size_t nonzero; /* entries whose count is not 0 */
} plugin_tp_table;

#define PLUGIN_TP_TABLE_INIT \
    {                        \
        NULL, 0, 0, 0        \
    }

/* Sizes an empty table for about `expected` entries (0: allocate on the
 * first insert). KUBE_OK or KUBE_ENOMEM. */
int plugin_tp_init(plugin_tp_table *t, size_t expected);
/* The entry of (key, value), or NULL. */
const plugin_tp_entry *plugin_tp_get(const plugin_tp_table *t, const char *key, const char *value);
/* The count of (key, value); 0 when absent. */
int64_t plugin_tp_count(const plugin_tp_table *t, const char *key, const char *value);
/* Adds delta to (key, value), inserting it (count delta) when absent.
 * *created (may be NULL) tells whether it was inserted. The entry (valid
 * until the next insert) is returned in *entry when entry is non-NULL.
 * KUBE_OK or KUBE_ENOMEM (table unchanged; only an insert can fail). */
int plugin_tp_add(plugin_tp_table *t, const char *key, const char *value, int64_t delta,
                  int *created, plugin_tp_entry **entry);
/* dst = a copy of src (dst uninitialised on entry). KUBE_OK or KUBE_ENOMEM
 * (dst then empty). */
int plugin_tp_clone(plugin_tp_table *dst, const plugin_tp_table *src);
/* Frees the slots and empties t. */
void plugin_tp_free(plugin_tp_table *t);

/* PodTopologySpread's create() with the listers of helper.DefaultSelector
 * given: listers (borrowed, copied; its informers or stores must outlive
 * the instance) instead of the informer factory's. NULL: as create(),
 * which asks h->svc.informers for the Service, ReplicationController,
 * ReplicaSet and StatefulSet listers when there are default constraints
 * (System defaulting, or List with some) and a factory. *self is freed by the
 * descriptor's destroy. Returns KUBE_OK, KUBE_ECONFIG (args, message in
 * err), KUBE_ENOMEM or the factory's error (message in err). */
int plugin_pod_topology_spread_new(const cJSON *args, fw_handle *h,
                                   const kube_workload_listers *listers, void **self, char *err,
                                   size_t errlen);

#endif
