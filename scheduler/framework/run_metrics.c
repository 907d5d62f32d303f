/*
 * scheduler/framework/run_metrics.c - timing the extension points and the
 * plugins as they run (scheduler_framework_extension_point_duration_seconds
 * and scheduler_plugin_execution_duration_seconds, the latter in sampled
 * cycles only), through the scheduler's metric hooks.
 */
#include "framework/internal.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"

void fw__observe_point(const fw_framework *fw, const char *point, const fw_status *st, int64_t t0)
{
    const fw_metrics_hooks *m = &fw->handle.svc.metrics;
    if (m->extension_point)
        m->extension_point(m->ud, point, fw_code_string(fw_status_code(st)), fw->profile,
                           (double)(kube_now_ns() - t0) / 1e9);
}

void fw__observe_plugin(const fw_framework *fw, const fw_cycle_state *cs, const char *plugin,
                        const char *point, const fw_status *st, int64_t t0)
{
    const fw_metrics_hooks *m = &fw->handle.svc.metrics;
    if (m->plugin && cs && fw_cycle_state_record_plugin_metrics(cs))
        m->plugin(m->ud, plugin, point, fw_code_string(fw_status_code(st)),
                  (double)(kube_now_ns() - t0) / 1e9);
}

/* Whether per-plugin timings are taken this cycle. */
static int timing(const fw_framework *fw, const fw_cycle_state *cs)
{
    return fw->handle.svc.metrics.plugin && cs && fw_cycle_state_record_plugin_metrics(cs);
}

int64_t fw__start_clock(const fw_framework *fw, const fw_cycle_state *cs)
{
    return timing(fw, cs) ? kube_now_ns() : 0;
}

int fw__clock_mode(const fw_framework *fw, const fw_cycle_state *cs, int may_defer)
{
    const fw_metrics_hooks *m = &fw->handle.svc.metrics;
    if (!timing(fw, cs))
        return FW_CLOCK_OFF;
    return may_defer && m->plugin_defer && m->plugin_flush ? FW_CLOCK_DEFERRED : FW_CLOCK_DIRECT;
}

void fw__flush_plugin_metrics(const fw_framework *fw)
{
    const fw_metrics_hooks *m = &fw->handle.svc.metrics;
    if (m->plugin_flush)
        m->plugin_flush(m->ud);
}

void fw__clock_observe(const fw_framework *fw, fw_plugin_clock *clk, const char *plugin,
                       const char *point, const fw_status *st)
{
    const fw_metrics_hooks *m = &fw->handle.svc.metrics;
    int64_t now = kube_now_ns();
    double secs = (double)(now - clk->t) / 1e9;
    const char *code = fw_code_string(fw_status_code(st));
    if (clk->mode == FW_CLOCK_DEFERRED)
        m->plugin_defer(m->ud, plugin, point, code, secs);
    else
        m->plugin(m->ud, plugin, point, code, secs);
    clk->t = now;
}
