/*
 * scheduler/framework/internal.h - the framework's private state, shared
 * by runtime.c (construction), run.c (extension points), permit.c (waiting
 * pods) and schedule.c (node finding). Not for plugins.
 */
#ifndef FW_INTERNAL_H
#define FW_INTERNAL_H

#include <pthread.h>

#include "framework/framework.h"
#include "kube/util/clock.h"

typedef struct fw_inst {
    const fw_plugin_desc *desc;
    void *self;
    int weight; /* score weight, 0 when not a score plugin */
} fw_inst;

struct fw_framework {
    char *profile;
    int32_t pct; /* profile percentageOfNodesToScore, -1 unset */
    fw_handle handle;
    fw_inst *insts; /* every instantiated plugin */
    size_t n_insts;
    fw_inst **pt[FW_PT_COUNT];
    size_t n_pt[FW_PT_COUNT];
    pthread_mutex_t wmu; /* guards waiting */
    kube_strmap waiting; /* pod UID -> struct waiting_pod * */
};

/* Metric helpers (run_metrics.c). t0 from kube_now_ns(). */
void fw__observe_point(const fw_framework *fw, const char *point, const fw_status *st, int64_t t0);
void fw__observe_plugin(const fw_framework *fw, const fw_cycle_state *cs, const char *plugin,
                        const char *point, const fw_status *st, int64_t t0);

/* How the per-node loops of Filter and Score time plugins in a cycle:
 * OFF when it records no plugin durations; else one clock read per plugin,
 * observed at once (DIRECT) or through the hooks' per-thread buffer
 * (DEFERRED; the caller then runs fw__flush_plugin_metrics on every thread
 * that ran the loop). */
enum { FW_CLOCK_OFF = 0, FW_CLOCK_DIRECT, FW_CLOCK_DEFERRED };

/* The mode for cs: DEFERRED only when may_defer and the hooks can defer. */
int fw__clock_mode(const fw_framework *fw, const fw_cycle_state *cs, int may_defer);
/* kube_now_ns() when cs records plugin durations, else 0 (no clock read). */
int64_t fw__start_clock(const fw_framework *fw, const fw_cycle_state *cs);

/* A chained clock over the plugins a per-node loop runs: each plugin's
 * interval ends at the clock read that starts the next one's. */
typedef struct fw_plugin_clock {
    int mode; /* FW_CLOCK_* */
    int64_t t;
} fw_plugin_clock;

/* fw__clock_lap's work when clk is not OFF (run_metrics.c). */
void fw__clock_observe(const fw_framework *fw, fw_plugin_clock *clk, const char *plugin,
                       const char *point, const fw_status *st);

/* Starts clk for a loop in mode (FW_CLOCK_OFF: no clock read). Inline, as
 * fw__clock_lap: the per-node loops call them once per plugin and node, and
 * nine cycles in ten are not timed. */
static inline void fw__clock_start(fw_plugin_clock *clk, int mode)
{
    clk->mode = mode;
    clk->t = mode == FW_CLOCK_OFF ? 0 : kube_now_ns();
}

/* Ends the interval of the plugin that just returned st: observes it (as
 * clk's mode says; nothing when OFF) and starts the next interval. */
static inline void fw__clock_lap(const fw_framework *fw, fw_plugin_clock *clk, const char *plugin,
                                 const char *point, const fw_status *st)
{
    if (clk->mode != FW_CLOCK_OFF)
        fw__clock_observe(fw, clk, plugin, point, st);
}
/* Merges the calling thread's deferred plugin durations (plugin_flush). */
void fw__flush_plugin_metrics(const fw_framework *fw);
/* fw_framework_run_filter_with_nominated_pods timing plugins as mode says
 * (fw__clock_mode); nominated 0 (fw__any_nominated() said none) skips the
 * nominated pods. Returns the same status, owned by the caller. */
fw_status *fw__run_filter_with_nominated_pods(fw_framework *fw, const fw_cycle_state *cs,
                                              const fw_pod_info *pod, const fw_node_info *ni,
                                              int mode, int nominated);
/* 0 when the nominator knows that no pod is nominated anywhere, else 1. */
int fw__any_nominated(const fw_framework *fw);

/* How many nodes fw__run_filter_nodes takes at once. */
#define FW_FILTER_BATCH 16

/* fw_framework_run_filter over nodes[0..n) (n <= FW_FILTER_BATCH), one
 * plugin at a time over the nodes still passing: out[i] receives what
 * fw_framework_run_filter gives nodes[i] (NULL when it fits; the caller
 * takes each status). Plugins are not timed: for cycles that time none. */
void fw__run_filter_nodes(fw_framework *fw, const fw_cycle_state *cs, const fw_pod_info *pod,
                          const fw_node_info *const *nodes, size_t n, fw_status **out);

/* Replaces *slot (freed) with a copy of text; NULL clears. KUBE_OK or
 * KUBE_ENOMEM (*slot unchanged). (status.c) */
int fw__set_text(char **slot, const char *text);

/* AsStatus(fmt.Errorf(fmt+": %w", args..., st.AsError())): a new FW_ERROR
 * status "<formatted prefix>: <st's message>" keeping st's error code;
 * frees st. */
fw_status *fw__wrap_error(fw_status *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The cycle's skip-filter set as a bitmask over owner's Filter plugins
 * (bit i: fw->pt[FW_PT_FILTER][i] is skipped), cached in the cycle state by
 * the runtime after PreFilter (cycle_state.c). Adding to or clearing the
 * set drops it; clones keep it. _filter_mask returns 1 and fills *mask when
 * a mask for owner is cached, else 0. */
void fw__cycle_state_set_filter_mask(fw_cycle_state *cs, const void *owner, uint64_t mask);
int fw__cycle_state_filter_mask(const fw_cycle_state *cs, const void *owner, uint64_t *mask);

/* Frees every waiting pod (permit.c), for fw_framework_free(). */
void fw__free_waiting(fw_framework *fw);

#endif
