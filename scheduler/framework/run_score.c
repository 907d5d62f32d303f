/*
 * scheduler/framework/run_score.c - PreScore and Score with kube-scheduler
 * v1.28's semantics (runtime/framework.go RunPreScorePlugins,
 * RunScorePlugins): per-node scores in parallel, NormalizeScore, weights.
 * In a cycle that times no plugin, a plugin with score_nodes scores the
 * whole list in one call instead (same scores, no per-node calls).
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

/* ---- PreScore, Score ---- */

fw_status *fw_framework_run_pre_score(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                      const fw_node_info *const *nodes, size_t n)
{
    int64_t t0 = kube_now_ns();
    fw_status *st = NULL;
    fw_cycle_state_skip_score_clear(cs);
    for (size_t i = 0; i < fw->n_pt[FW_PT_PRE_SCORE] && !st; i++) {
        const fw_inst *in = fw->pt[FW_PT_PRE_SCORE][i];
        int64_t tp = fw__start_clock(fw, cs);
        fw_status *s = in->desc->pre_score(in->self, cs, pod, nodes, n);
        if (tp)
            fw__observe_plugin(fw, cs, in->desc->name, "PreScore", s, tp);
        if (fw_status_is_skip(s)) {
            fw_status_free(s);
            if (fw_cycle_state_skip_score_add(cs, in->desc->name) != KUBE_OK)
                st = fw_status_error(KUBE_ENOMEM, NULL);
            continue;
        }
        if (!fw_status_is_success(s))
            st = fw__wrap_error(s, "running PreScore plugin \"%s\"", in->desc->name);
        else
            fw_status_free(s);
    }
    fw__observe_point(fw, "PreScore", st, t0);
    return st;
}

void fw_score_list_free(fw_score_list *l)
{
    if (!l)
        return;
    free(l->nodes);
    free(l->storage);
    memset(l, 0, sizeof(*l));
}

typedef struct score_job {
    fw_framework *fw;
    const fw_cycle_state *cs;
    const fw_pod_info *pod;
    const fw_node_info *const *nodes;
    size_t n;
    const fw_inst **plugins;
    size_t n_plugins;
    size_t *per_node; /* indices into plugins that score_node runs */
    size_t n_per_node;
    fw_node_score **scores; /* [plugin][node] */
    fw_status **errs;       /* per node (score) or per plugin (normalize) */
    int clock;              /* FW_CLOCK_* for the Score loop */
    atomic_int stop;
} score_job;

/* Records plugin in's failure s on node i (takes s) and stops the job. */
static void score_failed(score_job *j, size_t i, const fw_inst *in, fw_status *s)
{
    char prefix[256];
    snprintf(prefix, sizeof(prefix), "plugin \"%s\" failed with", in->desc->name);
    j->errs[i] = fw__wrap_error(s, "%s", prefix);
    atomic_store(&j->stop, 1);
}

static void score_node(void *ud, size_t i)
{
    score_job *j = ud;
    const fw_node_info *ni = j->nodes[i];
    const fw_cycle_state *cs = j->cs;
    const fw_pod_info *pod = j->pod;
    fw_plugin_clock clk;
    fw__clock_start(&clk, j->clock);
    for (size_t m = 0; m < j->n_per_node; m++) {
        size_t k = j->per_node[m];
        const fw_inst *in = j->plugins[k];
        int64_t v = 0;
        fw_status *s = in->desc->score(in->self, cs, pod, ni, &v);
        fw__clock_lap(j->fw, &clk, in->desc->name, "Score", s);
        if (!fw_status_is_success(s)) {
            score_failed(j, i, in, s);
            return;
        }
        fw_status_free(s);
        j->scores[k][i] = (fw_node_score){ni->name, v};
    }
}

/* fw_parallelize_done's epilogue for the Score loop. */
static void score_flush(void *ud)
{
    const score_job *j = ud;
    fw__flush_plugin_metrics(j->fw);
}

static void normalize_plugin(void *ud, size_t k)
{
    score_job *j = ud;
    const fw_inst *in = j->plugins[k];
    if (!in->desc->normalize_score)
        return;
    int64_t tp = fw__start_clock(j->fw, j->cs);
    fw_status *s = in->desc->normalize_score(in->self, j->cs, j->pod, j->scores[k], j->n);
    if (tp)
        fw__observe_plugin(j->fw, j->cs, in->desc->name, "ScoreExtensionNormalize", s, tp);
    if (!fw_status_is_success(s)) {
        char prefix[256];
        snprintf(prefix, sizeof(prefix), "plugin \"%s\" failed with", in->desc->name);
        j->errs[k] = fw__wrap_error(s, "%s", prefix);
        atomic_store(&j->stop, 1);
        return;
    }
    fw_status_free(s);
}

/* The first error in index order, wrapped with the stage; frees them all. */
static fw_status *first_error(fw_status **errs, size_t n, const char *stage)
{
    fw_status *first = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!first && errs[i])
            first = errs[i];
        else
            fw_status_free(errs[i]);
        errs[i] = NULL;
    }
    return first ? fw__wrap_error(first, "%s", stage) : NULL;
}

/* Node i's weighted scores into ns (cells: its n_plugins entries); an
 * error status when a plugin's normalized score is out of range. */
static fw_status *weigh_node(const score_job *j, size_t i, fw_node_plugin_scores *ns,
                             fw_plugin_score *cells)
{
    const fw_inst *const *plugins = j->plugins;
    fw_node_score *const *scores = j->scores;
    size_t np = j->n_plugins;
    int64_t total = 0;
    for (size_t k = 0; k < np; k++) {
        int64_t v = scores[k][i].score;
        if (v > FW_MAX_NODE_SCORE || v < FW_MIN_NODE_SCORE)
            return fw_status_error(
                KUBE_EINVAL,
                "applying score defaultWeights on Score plugins: plugin \"%s\" returns an "
                "invalid score %lld, it should in the range of [%d, %d] after normalizing",
                plugins[k]->desc->name, (long long)v, FW_MIN_NODE_SCORE, FW_MAX_NODE_SCORE);
        int64_t w = v * plugins[k]->weight;
        cells[k] = (fw_plugin_score){plugins[k]->desc->name, w};
        total += w;
    }
    *ns = (fw_node_plugin_scores){
        .name = j->nodes[i]->name, .scores = cells, .n_scores = np, .total = total};
    return NULL;
}

static fw_status *apply_weights(score_job *j, fw_score_list *out)
{
    /* every field and cell is written below: no zeroing */
    out->nodes = malloc((j->n ? j->n : 1) * sizeof(*out->nodes));
    size_t cells = j->n * j->n_plugins;
    out->storage = malloc((cells ? cells : 1) * sizeof(*out->storage));
    out->n = j->n;
    if (!out->nodes || !out->storage)
        return fw_status_error(KUBE_ENOMEM, NULL);
    for (size_t i = 0; i < j->n; i++) {
        fw_status *st = weigh_node(j, i, &out->nodes[i], &out->storage[i * j->n_plugins]);
        if (st)
            return st;
    }
    return NULL;
}

/* Plugin in's scores of every node through its score_nodes hook into
 * j->scores[k]; 0 when it has none, the cycle times plugins, or the hook
 * failed (score_node then scores it node by node). */
static int score_list(score_job *j, size_t k)
{
    const fw_inst *in = j->plugins[k];
    fw_node_score *scores = j->scores[k];
    fw_status *s;

    if (!in->desc->score_nodes || j->clock != FW_CLOCK_OFF)
        return 0;
    s = in->desc->score_nodes(in->self, j->cs, j->pod, j->nodes, j->n, scores);
    if (s) {
        fw_status_free(s);
        return 0;
    }
    if (in->desc->normalize_score) /* the names are read there only */
        for (size_t i = 0; i < j->n; i++)
            scores[i].name = j->nodes[i]->name;
    return 1;
}

static fw_status *score_all(score_job *j, fw_score_list *out)
{
    fw_parallelizer *par = j->fw->handle.svc.parallelizer;
    for (size_t k = 0; k < j->n_plugins; k++)
        if (!score_list(j, k))
            j->per_node[j->n_per_node++] = k;
    if (j->n_per_node) {
        fw_parallelize_done(par, j->n, score_node, j, &j->stop,
                            j->clock == FW_CLOCK_DEFERRED ? score_flush : NULL);
        fw_status *st = first_error(j->errs, j->n, "running Score plugins");
        if (st)
            return st;
    }
    fw_parallelize(par, j->n_plugins, normalize_plugin, j, &j->stop);
    fw_status *st = first_error(j->errs, j->n_plugins, "running Normalize on Score plugins");
    return st ? st : apply_weights(j, out);
}

fw_status *fw_framework_run_score(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                  const fw_node_info *const *nodes, size_t n, fw_score_list *out)
{
    int64_t t0 = kube_now_ns();
    size_t np = fw->n_pt[FW_PT_SCORE];
    score_job j = {
        .fw = fw, .cs = cs, .pod = pod, .nodes = nodes, .n = n, .clock = fw__clock_mode(fw, cs, 1)};
    memset(out, 0, sizeof(*out));
    j.plugins = calloc(np ? np : 1, sizeof(*j.plugins));
    j.per_node = calloc(np ? np : 1, sizeof(*j.per_node));
    j.scores = calloc(np ? np : 1, sizeof(*j.scores));
    j.errs = calloc((n > np ? n : np) + 1, sizeof(*j.errs));
    /* one block for all plugins' scores; score_node and score_list write
     * each cell before anything reads it (a name only where NormalizeScore
     * reads it), so it is not zeroed */
    fw_node_score *cells = malloc((np ? np : 1) * (n ? n : 1) * sizeof(*cells));
    fw_status *st = j.plugins && j.per_node && j.scores && j.errs && cells
                        ? NULL
                        : fw_status_error(KUBE_ENOMEM, NULL);
    atomic_init(&j.stop, 0);
    for (size_t k = 0; k < np && !st; k++) {
        const fw_inst *in = fw->pt[FW_PT_SCORE][k];
        if (fw_cycle_state_skip_score_has(cs, in->desc->name))
            continue;
        j.scores[j.n_plugins] = cells + j.n_plugins * n;
        j.plugins[j.n_plugins++] = in;
    }
    if (!st)
        st = score_all(&j, out);
    if (st)
        fw_score_list_free(out);
    free(cells);
    free(j.scores);
    free(j.plugins);
    free(j.per_node);
    free(j.errs);
    fw__observe_point(fw, "Score", st, t0);
    return st;
}
