/*
 * scheduler/framework/cycle_state.h - per-scheduling-cycle key/value store
 * plugins use to pass data between their own extension points (e.g.
 * PreFilter computes, Filter reads), as kube-scheduler's CycleState.
 *
 * Keys are strings, conventionally "PreFilter<PluginName>". Each value comes
 * with its operations: clone (for fw_cycle_state_clone(), used by preemption
 * and by filtering with nominated pods) and free.
 *
 * Threads: fw_cycle_state_read() may run concurrently from many threads
 * (Filter and Score run in parallel across nodes). write/delete must NOT
 * run concurrently with anything else on the same state: plugins write only
 * from serial points (PreFilter, PreScore, Reserve, Permit, ...) and from
 * PreFilter AddPod/RemovePod, which the framework calls on a CLONED state
 * owned by a single thread. The values themselves are read-only while
 * shared; a plugin that mutates its value in AddPod/RemovePod does so on
 * the clone's copy.
 *
 * Memory: fw_cycle_state_new() allocates a state freed by
 * fw_cycle_state_free(), which calls each value's free op. write() takes
 * ownership of data (also on error, when it calls ops->free(data)). read()
 * returns a BORROWED pointer valid until the key is overwritten/deleted or
 * the state freed. ops must point to static storage.
 */
#ifndef FW_CYCLE_STATE_H
#define FW_CYCLE_STATE_H

#include <stdatomic.h>
#include <stddef.h>

typedef struct fw_state_ops {
    /* Deep copy of data; NULL on out-of-memory. NULL clone: the value is
     * immutable and shared by pointer between clones (then free must be
     * NULL too or the value must be refcounted by the plugin). */
    void *(*clone)(const void *data);
    /* Frees data. NULL: nothing to free. */
    void (*free)(void *data);
} fw_state_ops;

/* A value the clones of a cycle state share, read-only, by reference: the
 * first member of a plugin's state struct, set up with fw_shared_init()
 * and written with &fw_shared_ops. A clone takes a reference, a free drops
 * one; the last calls release(the struct), which frees it. */
typedef struct fw_shared {
    atomic_int refs;
    void (*release)(void *self);
} fw_shared;

/* One reference, and the function that frees the struct s begins. */
void fw_shared_init(fw_shared *s, void (*release)(void *self));
/* Drops a reference to the struct that begins with s (NULL-safe); the last
 * releases it. */
void fw_shared_unref(void *s);
/* The ops of a struct that begins with an fw_shared. */
extern const fw_state_ops fw_shared_ops;

/* A value that is one block holding no pointer to memory of its own (a
 * struct with a flexible array of plain values): fw_flat_state_alloc()
 * returns size bytes, uninitialised (NULL on OOM), to be written with
 * &fw_flat_state_ops, whose clone copies the size bytes and whose free
 * releases the block. */
void *fw_flat_state_alloc(size_t size);
extern const fw_state_ops fw_flat_state_ops;

typedef struct fw_cycle_state fw_cycle_state;

/* Allocates an empty state (plugin metrics recording off). NULL on OOM. */
fw_cycle_state *fw_cycle_state_new(void);
/* Frees the state and all values. NULL-safe. */
void fw_cycle_state_free(fw_cycle_state *cs);

/* Stores data under key, replacing (and freeing) any previous value. key is
 * copied. Returns KUBE_OK or KUBE_ENOMEM. */
int fw_cycle_state_write(fw_cycle_state *cs, const char *key, void *data, const fw_state_ops *ops);
/* The value stored under key, or NULL when absent (kube-scheduler's
 * ErrNotFound: plugins then return an FW_ERROR status whose message says
 * "reading %q from cycleState: not found" or similar). Borrowed. */
void *fw_cycle_state_read(const fw_cycle_state *cs, const char *key);
/* fw_cycle_state_read() for a key of static storage (a string literal or a
 * static const array, so its address never holds other contents): an
 * entry written with that very address is found by address alone, without
 * comparing strings; any other entry by content. Filter and Score read
 * their state once per node, which makes this the hot lookup. */
void *fw_cycle_state_read_static(const fw_cycle_state *cs, const char *key);

/* Deep copy: each value via its clone op, the skip sets and the metrics
 * flag copied. NULL on OOM. Caller frees with fw_cycle_state_free(). */
fw_cycle_state *fw_cycle_state_clone(const fw_cycle_state *cs);

/* Whether plugin execution durations are recorded this cycle (kube-scheduler
 * samples 10% of cycles). Set by the scheduler before running the cycle. */
void fw_cycle_state_set_record_plugin_metrics(fw_cycle_state *cs, int on);
int fw_cycle_state_record_plugin_metrics(const fw_cycle_state *cs);

/* The sets of plugins whose PreFilter / PreScore returned Skip: the
 * framework fills them and then skips their Filter / Score. Names are
 * static plugin names (borrowed). add returns KUBE_OK or KUBE_ENOMEM. */
int fw_cycle_state_skip_filter_add(fw_cycle_state *cs, const char *plugin);
int fw_cycle_state_skip_filter_has(const fw_cycle_state *cs, const char *plugin);
int fw_cycle_state_skip_score_add(fw_cycle_state *cs, const char *plugin);
int fw_cycle_state_skip_score_has(const fw_cycle_state *cs, const char *plugin);
/* Empties one set / both sets. */
void fw_cycle_state_skip_filter_clear(fw_cycle_state *cs);
void fw_cycle_state_skip_score_clear(fw_cycle_state *cs);

#endif
