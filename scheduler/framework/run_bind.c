/*
 * scheduler/framework/run_bind.c - the binding cycle's extension points
 * with kube-scheduler v1.28's semantics (runtime/framework.go): PreBind,
 * Bind and PostBind, and Bind started without a waiting thread for a pod
 * whose PreBind and PostBind cannot block (the scheduler then runs the
 * whole binding cycle without a binding thread; see schedule_one.c).
 */
#include <stdlib.h>
#include <string.h>

#include "framework/internal.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"

fw_status *fw_framework_run_pre_bind(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                     const char *node)
{
    int64_t t0 = kube_now_ns();
    fw_status *st = NULL;
    for (size_t i = 0; i < fw->n_pt[FW_PT_PRE_BIND] && !st; i++) {
        const fw_inst *in = fw->pt[FW_PT_PRE_BIND][i];
        int64_t tp = fw__start_clock(fw, cs);
        fw_status *s = in->desc->pre_bind(in->self, cs, pod, node);
        if (tp)
            fw__observe_plugin(fw, cs, in->desc->name, "PreBind", s, tp);
        if (fw_status_is_success(s)) {
            fw_status_free(s);
            continue;
        }
        if (fw_status_is_unschedulable(s)) {
            fw_status_set_plugin(s, in->desc->name);
            st = s;
        } else {
            KLOG_ERROR("Failed running PreBind plugin plugin=\"%s\" pod=\"%s/%s\"", in->desc->name,
                       pod->namespace_, pod->name);
            st = fw__wrap_error(s, "running PreBind plugin \"%s\"", in->desc->name);
        }
    }
    fw__observe_point(fw, "PreBind", st, t0);
    return st;
}

/* The Bind point's answer from plugin in's status s (taken): Success and
 * Skip as they are, Unschedulable naming the plugin, any other failure
 * logged and wrapped ("running Bind plugin %q"). */
static fw_status *bind_outcome(const fw_inst *in, const fw_pod_info *pod, const char *node,
                               fw_status *s)
{
    if (fw_status_is_success(s) || fw_status_is_skip(s))
        return s;
    if (fw_status_is_unschedulable(s)) {
        fw_status_set_plugin(s, in->desc->name);
        return s;
    }
    KLOG_ERROR("Failed running Bind plugin plugin=\"%s\" pod=\"%s/%s\" node=\"%s\"", in->desc->name,
               pod->namespace_, pod->name, node);
    return fw__wrap_error(s, "running Bind plugin \"%s\"", in->desc->name);
}

fw_status *fw_framework_run_bind(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                 const char *node)
{
    int64_t t0 = kube_now_ns();
    fw_status *st = fw_status_new(FW_SKIP, NULL);
    for (size_t i = 0; i < fw->n_pt[FW_PT_BIND]; i++) {
        const fw_inst *in = fw->pt[FW_PT_BIND][i];
        int64_t tp = fw__start_clock(fw, cs);
        fw_status *s = in->desc->bind(in->self, cs, pod, node);
        if (tp)
            fw__observe_plugin(fw, cs, in->desc->name, "Bind", s, tp);
        fw_status_free(st);
        st = bind_outcome(in, pod, node, s);
        if (!fw_status_is_skip(st))
            break;
    }
    fw__observe_point(fw, "Bind", st, t0);
    return st;
}

void fw_framework_run_post_bind(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                const char *node)
{
    int64_t t0 = kube_now_ns();
    for (size_t i = 0; i < fw->n_pt[FW_PT_POST_BIND]; i++) {
        const fw_inst *in = fw->pt[FW_PT_POST_BIND][i];
        int64_t tp = fw__start_clock(fw, cs);
        in->desc->post_bind(in->self, cs, pod, node);
        if (tp)
            fw__observe_plugin(fw, cs, in->desc->name, "PostBind", NULL, tp);
    }
    fw__observe_point(fw, "PostBind", NULL, t0);
}

/* ---- Bind without a waiting thread ---- */

/* Whether a plugin at point pt may block in pod's binding cycle. */
static int point_may_block(const fw_framework *fw, int pt, const fw_cycle_state *cs,
                           const fw_pod_info *pod, const char *node)
{
    for (size_t i = 0; i < fw->n_pt[pt]; i++) {
        const fw_inst *in = fw->pt[pt][i];
        if (!in->desc->binding_may_block || in->desc->binding_may_block(in->self, cs, pod, node))
            return 1;
    }
    return 0;
}

int fw_framework_binding_is_light(fw_framework *fw, const fw_cycle_state *cs,
                                  const fw_pod_info *pod, const char *node)
{
    const fw_inst *bind = fw->n_pt[FW_PT_BIND] ? fw->pt[FW_PT_BIND][0] : NULL;
    return bind && bind->desc->bind_async && !point_may_block(fw, FW_PT_PRE_BIND, cs, pod, node) &&
           !point_may_block(fw, FW_PT_POST_BIND, cs, pod, node);
}

/* One asynchronous Bind: what its completion needs to observe and report. */
typedef struct bind_call {
    fw_framework *fw;
    const fw_inst *in;
    fw_cycle_state *cs;
    const fw_pod_info *pod;
    const char *node;
    int64_t t0, tp; /* the point's and the plugin's clocks */
    fw_bind_done_fn done;
    void *ud;
} bind_call;

/* The plugin's done: the Bind metrics, then the caller's done with the
 * point's status. Frees the call. */
static void bind_call_done(void *ud, fw_status *s)
{
    bind_call *b = ud;
    fw_bind_done_fn done = b->done;
    void *done_ud = b->ud;

    if (b->tp)
        fw__observe_plugin(b->fw, b->cs, b->in->desc->name, "Bind", s, b->tp);
    s = bind_outcome(b->in, b->pod, b->node, s);
    fw__observe_point(b->fw, "Bind", s, b->t0);
    free(b);
    done(done_ud, s);
}

fw_status *fw_framework_run_bind_async(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                       const char *node, fw_bind_done_fn done, void *ud)
{
    const fw_inst *in = fw->n_pt[FW_PT_BIND] ? fw->pt[FW_PT_BIND][0] : NULL;
    bind_call *b;
    fw_status *st;

    if (!in || !in->desc->bind_async)
        return fw_status_error(KUBE_EINVAL, "pod %s/%s: no Bind plugin binds without waiting",
                               pod->namespace_, pod->name);
    b = malloc(sizeof(*b));
    if (!b)
        return fw_status_error(KUBE_ENOMEM, NULL);
    *b = (bind_call){fw, in, cs, pod, node, kube_now_ns(), fw__start_clock(fw, cs), done, ud};
    st = in->desc->bind_async(in->self, cs, pod, node, bind_call_done, b);
    if (!st)
        return NULL;
    if (b->tp)
        fw__observe_plugin(fw, cs, in->desc->name, "Bind", st, b->tp);
    st = bind_outcome(in, pod, node, st);
    fw__observe_point(fw, "Bind", st, b->t0);
    free(b);
    return st;
}
