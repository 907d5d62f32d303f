/*
 * scheduler/framework/run.c - running the extension points with
 * kube-scheduler v1.28's semantics (runtime/framework.go).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/internal.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "framework/framework_testing.h"

fw_status *fw__wrap_error(fw_status *st, const char *fmt, ...)
{
    char *msg = fw_status_message_dup(st);
    int err = st && st->code == FW_ERROR ? st->err : KUBE_EINVAL;
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    fw_status *w = fw_status_error(err, "%s: %s", prefix, msg ? msg : "");
    free(msg);
    fw_status_free(st);
    return w;
}

/* ---- PreEnqueue, QueueSort ---- */

int fw_framework_queue_sort_less(const fw_framework *fw, const fw_queued_pod_info *a,
                                 const fw_queued_pod_info *b)
{
    const fw_inst *in = fw->pt[FW_PT_QUEUE_SORT][0];
    return in->desc->less(in->self, a, b);
}

fw_status *fw_framework_run_pre_enqueue(fw_framework *fw, const fw_pod_info *pod)
{
    int64_t t0 = kube_now_ns();
    fw_status *st = NULL;
    for (size_t i = 0; i < fw->n_pt[FW_PT_PRE_ENQUEUE]; i++) {
        const fw_inst *in = fw->pt[FW_PT_PRE_ENQUEUE][i];
        st = in->desc->pre_enqueue(in->self, pod);
        if (fw_status_is_success(st)) {
            fw_status_free(st);
            st = NULL;
            continue;
        }
        fw_status_set_plugin(st, in->desc->name);
        if (!fw_status_is_unschedulable(st))
            st = fw__wrap_error(st, "running PreEnqueue plugin \"%s\"", in->desc->name);
        break;
    }
    fw__observe_point(fw, "PreEnqueue", st, t0);
    return st;
}

/* ---- PreFilter ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

fw_pre_filter_result *fw_pre_filter_result_new(const char *const *names, size_t n)
{
    fw_pre_filter_result *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->node_names = calloc(n ? n : 1, sizeof(char *));
    if (!r->node_names) {
        free(r);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        r->node_names[i] = kube_strdup(names[i]);
        if (!r->node_names[i]) {
            r->n = i;
            fw_pre_filter_result_free(r);
            return NULL;
        }
    }
    qsort(r->node_names, n, sizeof(char *), cmp_str);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (w && strcmp(r->node_names[w - 1], r->node_names[i]) == 0)
            free(r->node_names[i]);
        else
            r->node_names[w++] = r->node_names[i];
    }
    r->n = w;
    return r;
}

void fw_pre_filter_result_free(fw_pre_filter_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        free(r->node_names[i]);
    free(r->node_names);
    free(r->excluded_reason);
    free(r->note);
    free(r->plugins);
    free(r);
}

void fw_preemption_candidate_clear(fw_preemption_candidate *c)
{
    free(c->node);
    for (size_t j = 0; j < c->n_victims; j++)
        fw_pod_info_unref(c->victims[j]);
    free(c->victims);
    memset(c, 0, sizeof(*c));
}

void fw_preemption_candidates_free(fw_preemption_candidate *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++)
        fw_preemption_candidate_clear(&c[i]);
    free(c);
}

int fw_pre_filter_result_explain(fw_pre_filter_result *r, const char *excluded_reason,
                                 const char *note)
{
    int err = fw__set_text(&r->excluded_reason, excluded_reason);
    return err ? err : fw__set_text(&r->note, note);
}

int fw_pre_filter_result_has(const fw_pre_filter_result *r, const char *name)
{
    if (!r)
        return 1;
    return bsearch(&name, r->node_names, r->n, sizeof(char *), cmp_str) != NULL;
}

fw_pre_filter_result *fw_pre_filter_result_merge(const fw_pre_filter_result *a,
                                                 const fw_pre_filter_result *b, int *err)
{
    *err = KUBE_OK;
    if (!a && !b)
        return NULL;
    const fw_pre_filter_result *src = a ? a : b;
    const char **names = calloc(src->n ? src->n : 1, sizeof(*names));
    if (!names) {
        *err = KUBE_ENOMEM;
        return NULL;
    }
    size_t n = 0;
    for (size_t i = 0; i < src->n; i++)
        if (!a || !b || fw_pre_filter_result_has(b, src->node_names[i]))
            names[n++] = src->node_names[i];
    fw_pre_filter_result *r = fw_pre_filter_result_new(names, n);
    free(names);
    const fw_pre_filter_result *ex = a && (a->excluded_reason || a->note) ? a : b;
    if (r && ex && fw_pre_filter_result_explain(r, ex->excluded_reason, ex->note) != KUBE_OK) {
        fw_pre_filter_result_free(r);
        r = NULL;
    }
    if (!r)
        *err = KUBE_ENOMEM;
    return r;
}

static fw_status *empty_merge_status(const char **with_nodes, size_t n)
{
    kube_buf b = KUBE_BUF_INIT;
    int err = KUBE_OK;
    if (n == 1) {
        err = kube_buf_printf(&b, "node(s) didn't satisfy plugin %s", with_nodes[0]);
    } else {
        err = kube_buf_puts(&b, "node(s) didn't satisfy plugin(s) [");
        for (size_t i = 0; i < n && !err; i++)
            err = kube_buf_printf(&b, "%s%s", i ? " " : "", with_nodes[i]);
        if (!err)
            err = kube_buf_puts(&b, "] simultaneously");
    }
    fw_status *st =
        err ? fw_status_error(KUBE_ENOMEM, NULL) : fw_status_new(FW_UNSCHEDULABLE, b.data);
    kube_buf_free(&b);
    return st;
}

/* Caches which Filter plugins PreFilter skipped as a bitmask (when they fit
 * in 64 bits), so fw_framework_run_filter visits only the others on each
 * node. */
static void cache_filter_mask(const fw_framework *fw, fw_cycle_state *cs)
{
    uint64_t mask = 0;

    if (fw->n_pt[FW_PT_FILTER] > 64)
        return;
    for (size_t i = 0; i < fw->n_pt[FW_PT_FILTER]; i++)
        if (fw_cycle_state_skip_filter_has(cs, fw->pt[FW_PT_FILTER][i]->desc->name))
            mask |= UINT64_C(1) << i;
    fw__cycle_state_set_filter_mask(cs, fw, mask);
}

fw_status *fw_framework_run_pre_filter(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                       fw_pre_filter_result **result)
{
    int64_t t0 = kube_now_ns();
    fw_pre_filter_result *merged = NULL;
    fw_status *st = NULL;
    size_t n = fw->n_pt[FW_PT_PRE_FILTER], n_with = 0;
    const char **with_nodes = calloc(n ? n : 1, sizeof(*with_nodes));
    *result = NULL;
    if (!with_nodes)
        return fw_status_error(KUBE_ENOMEM, NULL);
    fw_cycle_state_skip_filter_clear(cs);
    for (size_t i = 0; i < n && !st; i++) {
        const fw_inst *in = fw->pt[FW_PT_PRE_FILTER][i];
        fw_pre_filter_result *r = NULL;
        int64_t tp = fw__start_clock(fw, cs);
        fw_status *s = in->desc->pre_filter(in->self, cs, pod, &r);
        if (tp)
            fw__observe_plugin(fw, cs, in->desc->name, "PreFilter", s, tp);
        if (fw_status_is_skip(s)) {
            fw_status_free(s);
            fw_pre_filter_result_free(r);
            if (fw_cycle_state_skip_filter_add(cs, in->desc->name) != KUBE_OK)
                st = fw_status_error(KUBE_ENOMEM, NULL);
            continue;
        }
        if (!fw_status_is_success(s)) {
            fw_pre_filter_result_free(r);
            fw_status_set_plugin(s, in->desc->name);
            if (fw_status_is_unschedulable(s)) {
                st = s;
            } else {
                st = fw__wrap_error(s, "running PreFilter plugin \"%s\"", in->desc->name);
                fw_status_set_plugin(st, in->desc->name);
            }
            break;
        }
        fw_status_free(s);
        if (r)
            with_nodes[n_with++] = in->desc->name;
        int err = KUBE_OK;
        fw_pre_filter_result *m = r ? fw_pre_filter_result_merge(merged, r, &err) : merged;
        if (r) {
            fw_pre_filter_result_free(merged);
            fw_pre_filter_result_free(r);
        }
        merged = m;
        if (err)
            st = fw_status_error(err, NULL);
        else if (merged && merged->n == 0)
            st = empty_merge_status(with_nodes, n_with);
    }
    if (st || !merged) {
        free(with_nodes);
        fw_pre_filter_result_free(merged);
    } else {
        merged->plugins = with_nodes;
        merged->n_plugins = n_with;
        *result = merged;
    }
    cache_filter_mask(fw, cs);
    fw__observe_point(fw, "PreFilter", st, t0);
    return st;
}

static fw_status *run_extension(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                const fw_pod_info *other, const fw_node_info *ni, int add)
{
    for (size_t i = 0; i < fw->n_pt[FW_PT_PRE_FILTER]; i++) {
        const fw_inst *in = fw->pt[FW_PT_PRE_FILTER][i];
        if (!in->desc->pre_filter_add_pod || !in->desc->pre_filter_remove_pod ||
            fw_cycle_state_skip_filter_has(cs, in->desc->name))
            continue;
        int64_t tp = fw__start_clock(fw, cs);
        fw_status *s = add ? in->desc->pre_filter_add_pod(in->self, cs, pod, other, ni)
                           : in->desc->pre_filter_remove_pod(in->self, cs, pod, other, ni);
        if (tp)
            fw__observe_plugin(fw, cs, in->desc->name,
                               add ? "PreFilterExtensionAddPod" : "PreFilterExtensionRemovePod", s,
                               tp);
        if (!fw_status_is_success(s)) {
            KLOG_ERROR("Plugin failed pod=\"%s/%s\" node=\"%s\" operation=\"%s\" plugin=\"%s\"",
                       pod->namespace_, pod->name, ni->name ? ni->name : "",
                       add ? "addPod" : "removePod", in->desc->name);
            return fw__wrap_error(s,
                                  add ? "running AddPod on PreFilter plugin \"%s\""
                                      : "running RemovePod on PreFilter plugin \"%s\"",
                                  in->desc->name);
        }
        fw_status_free(s);
    }
    return NULL;
}

fw_status *fw_framework_run_pre_filter_add_pod(fw_framework *fw, fw_cycle_state *cs,
                                               const fw_pod_info *pod,
                                               const fw_pod_info *pod_to_add,
                                               const fw_node_info *ni)
{
    return run_extension(fw, cs, pod, pod_to_add, ni, 1);
}

fw_status *fw_framework_run_pre_filter_remove_pod(fw_framework *fw, fw_cycle_state *cs,
                                                  const fw_pod_info *pod,
                                                  const fw_pod_info *pod_to_remove,
                                                  const fw_node_info *ni)
{
    return run_extension(fw, cs, pod, pod_to_remove, ni, 0);
}

/* ---- Filter ---- */

/* One Filter plugin on one node: NULL when it passes, else its status
 * (errors wrapped) naming the plugin. */
/* Filter plugin in's failure s as runFilterPlugins reports it (takes s). */
static fw_status *filter_failure(const fw_inst *in, fw_status *s)
{
    if (!fw_status_is_unschedulable(s))
        s = fw__wrap_error(s, "running \"%s\" filter plugin", in->desc->name);
    fw_status_set_plugin(s, in->desc->name);
    return s;
}

static fw_status *filter_one(fw_framework *fw, const fw_cycle_state *cs, const fw_pod_info *pod,
                             const fw_node_info *ni, size_t i, fw_plugin_clock *clk)
{
    const fw_inst *in = fw->pt[FW_PT_FILTER][i];
    fw_status *s = in->desc->filter(in->self, cs, pod, ni);
    fw__clock_lap(fw, clk, in->desc->name, "Filter", s);
    if (fw_status_is_success(s)) {
        fw_status_free(s);
        return NULL;
    }
    return filter_failure(in, s);
}

/* Whether cs skips the Filter of plugin i (mask: the cycle's skip mask,
 * when have_mask). */
static int filter_skipped(const fw_framework *fw, const fw_cycle_state *cs, int have_mask,
                          uint64_t mask, size_t i)
{
    if (have_mask)
        return (int)((mask >> i) & 1);
    return fw_cycle_state_skip_filter_has(cs, fw->pt[FW_PT_FILTER][i]->desc->name);
}

/* Plugin in's Filter over live[0..n): a node that fails leaves live, its
 * status in out[pos[m]]. Returns how many nodes pass. */
static size_t filter_survivors(const fw_inst *in, const fw_cycle_state *cs, const fw_pod_info *pod,
                               const fw_node_info **live, size_t *pos, size_t n, fw_status **out)
{
    size_t kept = 0;

    for (size_t m = 0; m < n; m++) {
        fw_status *s = in->desc->filter(in->self, cs, pod, live[m]);
        if (!fw_status_is_success(s)) {
            out[pos[m]] = filter_failure(in, s);
            continue;
        }
        fw_status_free(s);
        live[kept] = live[m];
        pos[kept++] = pos[m];
    }
    return kept;
}

void fw__run_filter_nodes(fw_framework *fw, const fw_cycle_state *cs, const fw_pod_info *pod,
                          const fw_node_info *const *nodes, size_t n, fw_status **out)
{
    const fw_node_info *live[FW_FILTER_BATCH];
    size_t pos[FW_FILTER_BATCH];
    uint64_t mask = 0;
    int have_mask = fw__cycle_state_filter_mask(cs, fw, &mask);

    for (size_t m = 0; m < n; m++) {
        out[m] = NULL;
        live[m] = nodes[m];
        pos[m] = m;
    }
    for (size_t i = 0; i < fw->n_pt[FW_PT_FILTER] && n; i++)
        if (!filter_skipped(fw, cs, have_mask, mask, i))
            n = filter_survivors(fw->pt[FW_PT_FILTER][i], cs, pod, live, pos, n, out);
}

/* fw_framework_run_filter timing plugins as mode says. */
static fw_status *run_filter(fw_framework *fw, const fw_cycle_state *cs, const fw_pod_info *pod,
                             const fw_node_info *ni, int mode)
{
    uint64_t mask = 0;
    int have_mask = fw__cycle_state_filter_mask(cs, fw, &mask);
    size_t n = fw->n_pt[FW_PT_FILTER];
    fw_status *s = NULL;
    fw_plugin_clock clk;

    fw__clock_start(&clk, mode);
    if (have_mask) {
        /* the mask exists only for n <= 64: visit the plugins not skipped,
         * in order, instead of testing every plugin on every node */
        uint64_t run = ~mask & (n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1);
        for (; run && !s; run &= run - 1)
            s = filter_one(fw, cs, pod, ni, (size_t)__builtin_ctzll(run), &clk);
        return s;
    }
    for (size_t i = 0; i < n && !s; i++)
        if (!filter_skipped(fw, cs, 0, 0, i))
            s = filter_one(fw, cs, pod, ni, i, &clk);
    return s;
}

fw_status *fw_framework_run_filter(fw_framework *fw, const fw_cycle_state *cs,
                                   const fw_pod_info *pod, const fw_node_info *ni)
{
    return run_filter(fw, cs, pod, ni, fw__clock_mode(fw, cs, 0));
}

/* addNominatedPods: clones of state and node info with the nominated pods
 * of equal or higher priority added. *added = 0 when there are none (then
 * *cs_out / *ni_out are NULL). */
static fw_status *add_nominated_pods(fw_framework *fw, const fw_cycle_state *cs,
                                     const fw_pod_info *pod, const fw_node_info *ni, int *added,
                                     fw_cycle_state **cs_out, fw_node_info **ni_out)
{
    const fw_nominator *nom = &fw->handle.svc.nominator;
    fw_pod_info **pods = NULL;
    size_t n = 0;
    *added = 0;
    *cs_out = NULL;
    *ni_out = NULL;
    if (!nom->pods_for_node || !ni->node || !ni->name)
        return NULL;
    if (nom->pods_for_node(nom->ud, ni->name, &pods, &n) != KUBE_OK)
        return fw_status_error(KUBE_ENOMEM, NULL);
    fw_status *st = NULL;
    if (n) {
        *ni_out = fw_node_info_clone(ni);
        *cs_out = fw_cycle_state_clone(cs);
        if (!*ni_out || !*cs_out)
            st = fw_status_error(KUBE_ENOMEM, NULL);
    }
    for (size_t i = 0; i < n && !st; i++) {
        const fw_pod_info *p = pods[i];
        if (p->priority < pod->priority || strcmp(p->uid, pod->uid) == 0)
            continue;
        if (fw_node_info_add_pod(*ni_out, pods[i]) != KUBE_OK) {
            st = fw_status_error(KUBE_ENOMEM, NULL);
            break;
        }
        st = fw_framework_run_pre_filter_add_pod(fw, *cs_out, pod, p, *ni_out);
        *added = 1;
    }
    for (size_t i = 0; i < n; i++)
        fw_pod_info_unref(pods[i]);
    free(pods);
    if (st || !*added) {
        fw_cycle_state_free(*cs_out);
        fw_node_info_free(*ni_out);
        *cs_out = NULL;
        *ni_out = NULL;
        *added = 0;
    }
    return st;
}

int fw__any_nominated(const fw_framework *fw)
{
    const fw_nominator *nom = &fw->handle.svc.nominator;
    if (!nom->pods_for_node)
        return 0;
    return nom->any ? nom->any(nom->ud) : 1;
}

fw_status *fw__run_filter_with_nominated_pods(fw_framework *fw, const fw_cycle_state *cs,
                                              const fw_pod_info *pod, const fw_node_info *ni,
                                              int mode, int nominated)
{
    int added;
    fw_cycle_state *cs2;
    fw_node_info *ni2;
    if (!nominated)
        return run_filter(fw, cs, pod, ni, mode);
    fw_status *st = add_nominated_pods(fw, cs, pod, ni, &added, &cs2, &ni2);
    if (st)
        return st;
    if (!added)
        return run_filter(fw, cs, pod, ni, mode);
    st = run_filter(fw, cs2, pod, ni2, mode);
    fw_cycle_state_free(cs2);
    fw_node_info_free(ni2);
    if (!fw_status_is_success(st))
        return st;
    return run_filter(fw, cs, pod, ni, mode);
}

fw_status *fw_framework_run_filter_with_nominated_pods(fw_framework *fw, const fw_cycle_state *cs,
                                                       const fw_pod_info *pod,
                                                       const fw_node_info *ni)
{
    return fw__run_filter_with_nominated_pods(fw, cs, pod, ni, fw__clock_mode(fw, cs, 0), 1);
}

/* ---- PostFilter ---- */

fw_status *fw_framework_run_post_filter(fw_framework *fw, fw_cycle_state *cs,
                                        const fw_pod_info *pod, const fw_diagnosis *d,
                                        fw_post_filter_result *res)
{
    int64_t t0 = kube_now_ns();
    fw_post_filter_result last = {FW_NOMINATING_NOOP, ""};
    const char *failed = NULL;
    fw_status *acc = NULL, *ret = NULL;
    for (size_t i = 0; i < fw->n_pt[FW_PT_POST_FILTER] && !ret; i++) {
        const fw_inst *in = fw->pt[FW_PT_POST_FILTER][i];
        fw_post_filter_result r = {FW_NOMINATING_NOOP, ""};
        int64_t tp = fw__start_clock(fw, cs);
        fw_status *s = in->desc->post_filter(in->self, cs, pod, d, &r);
        if (tp)
            fw__observe_plugin(fw, cs, in->desc->name, "PostFilter", s, tp);
        if (fw_status_is_success(s)) {
            *res = r;
            fw_status_free(acc);
            fw__observe_point(fw, "PostFilter", s, t0);
            return s;
        }
        if (s->code == FW_UNSCHEDULABLE_AND_UNRESOLVABLE) {
            fw_status_set_plugin(s, in->desc->name);
            *res = r;
            ret = s;
            break;
        }
        if (!fw_status_is_unschedulable(s)) {
            /* AsStatus(s.AsError()).WithFailedPlugin(): same message. */
            if (s->code != FW_ERROR) {
                s->code = FW_ERROR;
                s->err = KUBE_EINVAL;
            }
            fw_status_set_plugin(s, in->desc->name);
            ret = s;
            break;
        }
        if (r.mode != FW_NOMINATING_NOOP)
            last = r;
        if (!acc)
            acc = fw_status_new(FW_UNSCHEDULABLE, NULL);
        for (size_t k = 0; k < s->n_reasons; k++)
            fw_status_add_reason(acc, s->reasons[k]);
        if (!failed)
            failed = in->desc->name;
        fw_status_free(s);
    }
    if (!ret) {
        *res = last;
        ret = acc ? acc : fw_status_new(FW_UNSCHEDULABLE, NULL);
        acc = NULL;
        fw_status_set_plugin(ret, failed);
    }
    fw_status_free(acc);
    fw__observe_point(fw, "PostFilter", ret, t0);
    return ret;
}

/* ---- Reserve, PreBind, Bind, PostBind ---- */

fw_status *fw_framework_run_reserve(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                    const char *node)
{
    int64_t t0 = kube_now_ns();
    fw_status *st = NULL;
    for (size_t i = 0; i < fw->n_pt[FW_PT_RESERVE] && !st; i++) {
        const fw_inst *in = fw->pt[FW_PT_RESERVE][i];
        int64_t tp = fw__start_clock(fw, cs);
        fw_status *s = in->desc->reserve(in->self, cs, pod, node);
        if (tp)
            fw__observe_plugin(fw, cs, in->desc->name, "Reserve", s, tp);
        if (fw_status_is_success(s)) {
            fw_status_free(s);
            continue;
        }
        if (fw_status_is_unschedulable(s)) {
            KLOG_V(4, "Pod rejected by plugin pod=\"%s/%s\" plugin=\"%s\"", pod->namespace_,
                   pod->name, in->desc->name);
            fw_status_set_plugin(s, in->desc->name);
            st = s;
        } else {
            KLOG_ERROR("Plugin failed plugin=\"%s\" pod=\"%s/%s\"", in->desc->name, pod->namespace_,
                       pod->name);
            st = fw__wrap_error(s, "running Reserve plugin \"%s\"", in->desc->name);
        }
    }
    fw__observe_point(fw, "Reserve", st, t0);
    return st;
}

void fw_framework_run_unreserve(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                const char *node)
{
    int64_t t0 = kube_now_ns();
    for (size_t i = fw->n_pt[FW_PT_RESERVE]; i-- > 0;) {
        const fw_inst *in = fw->pt[FW_PT_RESERVE][i];
        if (!in->desc->unreserve)
            continue;
        int64_t tp = fw__start_clock(fw, cs);
        in->desc->unreserve(in->self, cs, pod, node);
        if (tp)
            fw__observe_plugin(fw, cs, in->desc->name, "Unreserve", NULL, tp);
    }
    fw__observe_point(fw, "Unreserve", NULL, t0);
}
