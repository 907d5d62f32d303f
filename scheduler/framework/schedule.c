/*
 * scheduler/framework/schedule.c - schedulePod and its helpers from
 * kube-scheduler v1.28's schedule_one.go: findNodesThatFitPod (with the
 * nominated node first and the parallel, early-stopping filter over nodes
 * from the rotating start index), prioritizeNodes and selectHost.
 *
 * The parallel filter is deterministic: every node before the cut-off (the
 * node where numFeasibleNodesToFind feasible nodes have been found, in
 * evaluation order from the start index) is evaluated, nothing after it is
 * reported, so the feasible set, the diagnosis and the next start index
 * equal a serial run's. In a cycle that times no plugin and sees no
 * nominated pod, the parallel pieces are runs of FW_FILTER_BATCH nodes
 * filtered one plugin at a time (the same statuses, without the per-node
 * set-up); otherwise one node each.
 */
#include <stdlib.h>
#include <string.h>

#include "framework/internal.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/util/rand.h"
#include "kube/types/pod.h"

#define MIN_FEASIBLE_NODES_TO_FIND 100
#define MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND 5

int fw_num_feasible_nodes_to_find(int32_t profile_pct, int32_t global_pct, int num_all_nodes)
{
    if (num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND)
        return num_all_nodes;
    int32_t pct = profile_pct >= 0 ? profile_pct : global_pct;
    if (pct == 0) {
        pct = 50 - num_all_nodes / 125;
        if (pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND;
    }
    int64_t n = (int64_t)num_all_nodes * pct / 100;
    return n < MIN_FEASIBLE_NODES_TO_FIND ? MIN_FEASIBLE_NODES_TO_FIND : (int)n;
}

enum { NODE_UNSEEN = 0, NODE_FIT, NODE_FAIL, NODE_ERROR };

typedef struct filter_job {
    fw_framework *fw;
    const fw_cycle_state *cs;
    const fw_pod_info *pod;
    const fw_node_info *const *nodes;
    size_t n, start;
    int need;
    int clock;     /* FW_CLOCK_* */
    int nominated; /* some pod may be nominated (fw__any_nominated) */
    unsigned char *state;
    fw_status **statuses;
    atomic_int found;
    atomic_int stop;
} filter_job;

static void check_node(void *ud, size_t i)
{
    filter_job *j = ud;
    const fw_node_info *ni = j->nodes[(j->start + i) % j->n];
    fw_status *st =
        fw__run_filter_with_nominated_pods(j->fw, j->cs, j->pod, ni, j->clock, j->nominated);
    if (fw_status_is_success(st)) {
        fw_status_free(st);
        j->state[i] = NODE_FIT;
        if (atomic_fetch_add(&j->found, 1) + 1 >= j->need)
            atomic_store(&j->stop, 1);
        return;
    }
    j->statuses[i] = st;
    j->state[i] = st->code == FW_ERROR ? NODE_ERROR : NODE_FAIL;
    if (st->code == FW_ERROR)
        atomic_store(&j->stop, 1);
}

/* The nodes at evaluation positions [c * FW_FILTER_BATCH, ...) through
 * the Filter plugins at once (fw__run_filter_nodes): check_node's work for
 * cycles that time no plugin and see no nominated pod. */
static void check_chunk(void *ud, size_t c)
{
    filter_job *j = ud;
    size_t first = c * FW_FILTER_BATCH, m = j->n - first;
    const fw_node_info *nodes[FW_FILTER_BATCH] = {0};
    fw_status *st[FW_FILTER_BATCH];
    int fit = 0, failed = 0;

    if (m > FW_FILTER_BATCH)
        m = FW_FILTER_BATCH;
    for (size_t k = 0; k < m; k++)
        nodes[k] = j->nodes[(j->start + first + k) % j->n];
    fw__run_filter_nodes(j->fw, j->cs, j->pod, nodes, m, st);
    for (size_t k = 0; k < m; k++) {
        if (!st[k]) {
            j->state[first + k] = NODE_FIT;
            fit++;
            continue;
        }
        j->statuses[first + k] = st[k];
        j->state[first + k] = st[k]->code == FW_ERROR ? NODE_ERROR : NODE_FAIL;
        failed |= st[k]->code == FW_ERROR;
    }
    if (failed || atomic_fetch_add(&j->found, fit) + fit >= j->need)
        atomic_store(&j->stop, 1);
}

/* fw_parallelize_done's epilogue for the Filter loop. */
static void filter_flush(void *ud)
{
    const filter_job *j = ud;
    fw__flush_plugin_metrics(j->fw);
}

/* Collects results in evaluation order up to the cut-off. */
static fw_status *collect(filter_job *j, fw_diagnosis *d, const fw_node_info **feasible,
                          size_t *n_feasible, size_t *processed)
{
    fw_status *err = NULL;
    size_t i, nf = 0;
    for (i = 0; i < j->n && nf < (size_t)j->need && !err; i++) {
        const fw_node_info *ni = j->nodes[(j->start + i) % j->n];
        if (j->state[i] == NODE_UNSEEN)
            break;
        if (j->state[i] == NODE_FIT) {
            feasible[nf++] = ni;
        } else if (j->state[i] == NODE_ERROR) {
            err = j->statuses[i];
            j->statuses[i] = NULL;
        } else {
            const char *plugin = j->statuses[i]->plugin;
            if (fw_diagnosis_add_node(d, ni->name, j->statuses[i]) != KUBE_OK ||
                fw_diagnosis_add_unschedulable_plugin(d, plugin) != KUBE_OK)
                err = fw_status_error(KUBE_ENOMEM, NULL);
            j->statuses[i] = NULL;
        }
    }
    *n_feasible = nf;
    *processed = i;
    /* statuses[k] is set only for failed nodes (the array is not zeroed) */
    for (size_t k = 0; k < j->n; k++)
        if (j->state[k] == NODE_FAIL || j->state[k] == NODE_ERROR)
            fw_status_free(j->statuses[k]);
    return err;
}

/* findNodesThatPassFilters over nodes[] from start. *processed receives the
 * number of nodes evaluated (feasible + failed). */
static fw_status *pass_filters(fw_framework *fw, const fw_cycle_state *cs, const fw_pod_info *pod,
                               const fw_node_info *const *nodes, size_t n, size_t start,
                               int32_t global_pct, fw_diagnosis *d, const fw_node_info ***out,
                               size_t *n_out, size_t *processed)
{
    int need = fw_num_feasible_nodes_to_find(fw->pct, global_pct, (int)n);
    const fw_node_info **feasible = calloc(need > 0 ? (size_t)need : 1, sizeof(*feasible));
    *out = NULL;
    *n_out = *processed = 0;
    if (!feasible)
        return fw_status_error(KUBE_ENOMEM, NULL);
    if (!fw_framework_has_filter_plugins(fw)) {
        for (int i = 0; i < need; i++)
            feasible[i] = nodes[(start + (size_t)i) % n];
        *out = feasible;
        *n_out = *processed = (size_t)need;
        return NULL;
    }
    int64_t t0 = kube_now_ns();
    filter_job j = {.fw = fw,
                    .cs = cs,
                    .pod = pod,
                    .nodes = nodes,
                    .n = n,
                    .start = start,
                    .need = need,
                    .clock = fw__clock_mode(fw, cs, 1),
                    .nominated = fw__any_nominated(fw)};
    atomic_init(&j.found, 0);
    atomic_init(&j.stop, 0);
    j.state = calloc(n, 1);
    j.statuses = malloc((n ? n : 1) * sizeof(*j.statuses)); /* read where state says failed */
    fw_status *st = NULL;
    if (!j.state || !j.statuses) {
        st = fw_status_error(KUBE_ENOMEM, NULL);
    } else {
        if (j.clock == FW_CLOCK_OFF && !j.nominated)
            fw_parallelize_done(fw->handle.svc.parallelizer,
                                (n + FW_FILTER_BATCH - 1) / FW_FILTER_BATCH, check_chunk, &j,
                                &j.stop, NULL);
        else
            fw_parallelize_done(fw->handle.svc.parallelizer, n, check_node, &j, &j.stop,
                                j.clock == FW_CLOCK_DEFERRED ? filter_flush : NULL);
        st = collect(&j, d, feasible, n_out, processed);
    }
    free(j.state);
    free(j.statuses);
    fw__observe_point(fw, "Filter", st, t0);
    if (st) {
        free(feasible);
        *n_out = 0;
        return st;
    }
    *out = feasible;
    return NULL;
}

/* findNodesThatPassExtenders over the feasible nodes (nothing to do
 * without extenders or feasible nodes). */
static fw_status *pass_extenders(fw_framework *fw, const fw_pod_info *pod,
                                 const fw_node_info **feasible, size_t *n_feasible, fw_diagnosis *d)
{
    const fw_extenders *x = &fw->handle.svc.extenders;

    if (!x->ud || !*n_feasible)
        return NULL;
    return x->filter(x->ud, pod, feasible, n_feasible, d);
}

/* PreFilter rejected the pod: every node gets its status. */
static fw_status *prefilter_rejected(const fw_snapshot *snap, fw_status *s, fw_diagnosis *d)
{
    char *msg = fw_status_message_dup(s);
    int err = msg ? KUBE_OK : KUBE_ENOMEM;
    for (size_t i = 0; i < snap->n_list && !err; i++)
        err = fw_diagnosis_add_node(d, snap->list[i]->name, fw_status_clone(s));
    if (!err)
        err = fw_diagnosis_set_pre_filter_msg(d, msg);
    if (!err)
        err = fw_diagnosis_add_unschedulable_plugin(d, s->plugin);
    free(msg);
    fw_status_free(s);
    return err ? fw_status_error(err, NULL) : NULL;
}

/* evaluateNominatedNode: the one node, filtered alone. Its failure stays in
 * d (the caller takes it out again, see below). */
static void evaluate_nominated(fw_framework *fw, const fw_cycle_state *cs, const fw_pod_info *pod,
                               const fw_snapshot *snap, int32_t global_pct, fw_diagnosis *d,
                               const fw_node_info ***feasible, size_t *n_feasible)
{
    const char *nnn = pod->pod->nominated_node_name;
    const fw_node_info *ni = fw_snapshot_get(snap, nnn);
    size_t processed;
    *feasible = NULL;
    *n_feasible = 0;
    if (!ni) {
        KLOG_ERROR("Evaluation failed on nominated node pod=\"%s/%s\" node=\"%s\" "
                   "err=\"nodeinfo not found for node name \\\"%s\\\"\"",
                   pod->namespace_, pod->name, nnn, nnn);
        return;
    }
    fw_status *st =
        pass_filters(fw, cs, pod, &ni, 1, 0, global_pct, d, feasible, n_feasible, &processed);
    if (!st)
        st = pass_extenders(fw, pod, *feasible, n_feasible, d);
    if (st) {
        *n_feasible = 0;
        char msg[256];
        fw_status_message(st, msg, sizeof(msg));
        KLOG_ERROR("Evaluation failed on nominated node pod=\"%s/%s\" node=\"%s\" err=\"%s\"",
                   pod->namespace_, pod->name, nnn, msg);
        fw_status_free(st);
    }
}

/* The nodes of a PreFilterResult, looked up in the snapshot (sorted by
 * name). A name the snapshot lacks is an error, as in v1.28. */
static fw_status *result_nodes(const fw_snapshot *snap, const fw_pre_filter_result *r,
                               const fw_node_info ***out, size_t *n)
{
    const fw_node_info **nodes = calloc(r->n ? r->n : 1, sizeof(*nodes));
    if (!nodes)
        return fw_status_error(KUBE_ENOMEM, NULL);
    for (size_t i = 0; i < r->n; i++) {
        nodes[i] = fw_snapshot_get(snap, r->node_names[i]);
        if (!nodes[i]) {
            free(nodes);
            return fw_status_error(KUBE_ENOTFOUND, "nodeinfo not found for node name \"%s\"",
                                   r->node_names[i]);
        }
    }
    *out = nodes;
    *n = r->n;
    return NULL;
}

/* Moves the nominated node's failure (the last entry, if it is that node)
 * out of d, so the full pass can record it afresh. */
static fw_node_status take_nominated_failure(fw_diagnosis *d, const char *nnn)
{
    fw_node_status ns = {NULL, NULL};
    if (d->n_nodes && strcmp(d->nodes[d->n_nodes - 1].node, nnn) == 0)
        ns = d->nodes[--d->n_nodes];
    return ns;
}

static fw_status *full_pass(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                            const fw_snapshot *snap, fw_sched_state *st,
                            const fw_pre_filter_result *pre, fw_diagnosis *d,
                            const fw_node_info ***feasible, size_t *n_feasible)
{
    const fw_node_info *const *nodes = (const fw_node_info *const *)snap->list;
    const fw_node_info **owned = NULL;
    size_t n = snap->n_list, processed = 0;
    if (pre) {
        fw_status *s = result_nodes(snap, pre, &owned, &n);
        if (s)
            return s;
        nodes = owned;
    }
    fw_status *s = NULL;
    if (n)
        s = pass_filters(fw, cs, pod, nodes, n, st->next_start_node_index % n,
                         st->percentage_of_nodes_to_score, d, feasible, n_feasible, &processed);
    if (n)
        st->next_start_node_index = (st->next_start_node_index + processed) % n;
    free(owned);
    return s;
}

/* What a PreFilterResult tells the diagnosis: its explanation for the
 * FitError, and the plugins that narrowed the nodes among the unschedulable
 * plugins (so that their events requeue the pod). KUBE_OK or KUBE_ENOMEM. */
static int note_pre_filter_result(const fw_pre_filter_result *pre, fw_diagnosis *d)
{
    int err = KUBE_OK;
    if (pre->excluded_reason || pre->note)
        err = fw_diagnosis_set_explanation(d, pre->excluded_reason, pre->note);
    for (size_t i = 0; !err && i < pre->n_plugins; i++)
        err = fw_diagnosis_add_unschedulable_plugin(d, pre->plugins[i]);
    return err;
}

fw_status *fw_framework_find_nodes_that_fit(fw_framework *fw, fw_cycle_state *cs,
                                            const fw_pod_info *pod, const fw_snapshot *snap,
                                            fw_sched_state *st, fw_diagnosis *d,
                                            const fw_node_info ***feasible, size_t *n_feasible)
{
    fw_pre_filter_result *pre = NULL;
    *feasible = NULL;
    *n_feasible = 0;
    fw_status *s = fw_framework_run_pre_filter(fw, cs, pod, &pre);
    if (s) {
        if (!fw_status_is_unschedulable(s))
            return s;
        return prefilter_rejected(snap, s, d);
    }
    if (pre && note_pre_filter_result(pre, d) != KUBE_OK) {
        fw_pre_filter_result_free(pre);
        return fw_status_error(KUBE_ENOMEM, NULL);
    }
    const char *nnn = pod->pod->nominated_node_name;
    fw_node_status aside = {NULL, NULL};
    if (nnn && *nnn) {
        evaluate_nominated(fw, cs, pod, snap, st->percentage_of_nodes_to_score, d, feasible,
                           n_feasible);
        if (*n_feasible) {
            fw_pre_filter_result_free(pre);
            return NULL;
        }
        free(*feasible);
        *feasible = NULL;
        aside = take_nominated_failure(d, nnn);
    }
    s = full_pass(fw, cs, pod, snap, st, pre, d, feasible, n_feasible);
    if (!s && (s = pass_extenders(fw, pod, *feasible, n_feasible, d))) {
        free(*feasible);
        *feasible = NULL;
        *n_feasible = 0;
    }
    fw_pre_filter_result_free(pre);
    if (aside.node) {
        if (!s && !fw_diagnosis_node_status(d, aside.node))
            fw_diagnosis_add_node(d, aside.node, aside.status);
        else
            fw_status_free(aside.status);
        free(aside.node);
    }
    return s;
}

fw_status *fw_framework_prioritize_nodes(fw_framework *fw, fw_cycle_state *cs,
                                         const fw_pod_info *pod, const fw_node_info *const *nodes,
                                         size_t n, fw_score_list *out)
{
    const fw_extenders *x = &fw->handle.svc.extenders;
    memset(out, 0, sizeof(*out));
    if (!fw_framework_has_score_plugins(fw) && !x->ud) {
        out->nodes = calloc(n ? n : 1, sizeof(*out->nodes));
        if (!out->nodes)
            return fw_status_error(KUBE_ENOMEM, NULL);
        out->n = n;
        for (size_t i = 0; i < n; i++) {
            out->nodes[i].name = nodes[i]->name;
            out->nodes[i].total = 1;
        }
        return NULL;
    }
    fw_status *s = fw_framework_run_pre_score(fw, cs, pod, nodes, n);
    if (!s)
        s = fw_framework_run_score(fw, cs, pod, nodes, n, out);
    if (!s && x->ud)
        x->prioritize(x->ud, pod, nodes, out);
    return s;
}

const char *fw_select_host(const fw_node_plugin_scores *scores, size_t n, uint64_t *rng)
{
    if (n == 0)
        return NULL;
    int64_t max = scores[0].total;
    const char *selected = scores[0].name;
    uint64_t cnt = 1;
    for (size_t i = 1; i < n; i++) {
        if (scores[i].total > max) {
            max = scores[i].total;
            selected = scores[i].name;
            cnt = 1;
        } else if (scores[i].total == max) {
            cnt++;
            if (kube_rand_next(rng) % cnt == 0)
                selected = scores[i].name;
        }
    }
    return selected;
}

fw_status *fw_framework_schedule_pod(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                     const fw_snapshot *snap, fw_sched_state *st, fw_diagnosis *d,
                                     fw_schedule_result *res)
{
    memset(res, 0, sizeof(*res));
    if (snap->n_list == 0)
        return fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                             "no nodes available to schedule pods");
    const fw_node_info **feasible;
    size_t nf;
    fw_status *s = fw_framework_find_nodes_that_fit(fw, cs, pod, snap, st, d, &feasible, &nf);
    if (s)
        return s;
    if (nf == 0) {
        free(feasible);
        char *msg = fw_fit_error_message((int)snap->n_list, d);
        s = fw_status_new(FW_UNSCHEDULABLE, msg ? msg : "no node fits");
        free(msg);
        return s;
    }
    if (nf == 1) {
        kube_strlcpy(res->suggested_host, feasible[0]->name, sizeof(res->suggested_host));
        res->evaluated_nodes = 1 + (int)d->n_nodes;
        res->feasible_nodes = 1;
        free(feasible);
        return NULL;
    }
    fw_score_list scores;
    s = fw_framework_prioritize_nodes(fw, cs, pod, (const fw_node_info *const *)feasible, nf,
                                      &scores);
    if (!s) {
        const char *host = fw_select_host(scores.nodes, scores.n, &st->rng);
        kube_strlcpy(res->suggested_host, host, sizeof(res->suggested_host));
        res->evaluated_nodes = (int)(nf + d->n_nodes);
        res->feasible_nodes = (int)nf;
    }
    fw_score_list_free(&scores);
    free(feasible);
    return s;
}
