/*
 * scheduler/plugins/podtopologyspread/scoring.c - PodTopologySpread's
 * PreScore, Score and NormalizeScore (upstream scoring.go).
 */
#include "plugins/podtopologyspread/internal.h"

/* ------------------------------------------------------------------ */
/* Scoring                                                             */
/* ------------------------------------------------------------------ */

/* Read-only once PreScore wrote it: clones share it (refcounted). */
typedef struct pre_score_state {
    fw_shared shared; /* first: the clones share the state (fw_shared_ops) */
    pts_constraints *c;
    int require_all;         /* requireAllTopologies */
    plugin_tp_table ignored; /* (name, "") of feasible nodes lacking a key */
    plugin_tp_table counts;  /* matching pods per pair, non-hostname keys */
    double weights[];        /* topologyNormalizingWeight per constraint */
} pre_score_state;

/* Frees the state once its last reference is gone (fw_shared.release). */
static void pre_score_state_release(void *data)
{
    pre_score_state *s = data;
    plugin_tp_free(&s->ignored);
    plugin_tp_free(&s->counts);
    pts_constraints_unref(s->c);
    free(s);
}

static int is_hostname(const char *key)
{
    return strcmp(key, LABEL_HOSTNAME) == 0;
}

static const char *label_or_empty(const kube_node *node, const char *key)
{
    const char *v = pts_node_label(node, key);
    return v ? v : "";
}

/* initPreScoreState's pass over the feasible nodes: the ignored nodes
 * (lacking a key, only when requireAllTopologies), the pairs to count, and
 * each constraint's normalizing weight (a pair counts for the first
 * constraint adding it). */
static int init_pairs(pre_score_state *s, const fw_node_info *const *nodes, size_t n)
{
    const pts_constraints *c = s->c;
    size_t *size = calloc(c->n, sizeof(*size));
    int rc = size ? KUBE_OK : KUBE_ENOMEM;

    for (size_t i = 0; rc == KUBE_OK && i < n; i++) {
        const kube_node *node = nodes[i]->node;
        if (!node)
            continue;
        if (s->require_all && !pts_node_has_all_keys(node, c)) {
            rc = plugin_tp_add(&s->ignored, nodes[i]->name, "", 1, NULL, NULL);
            continue;
        }
        for (size_t j = 0; rc == KUBE_OK && j < c->n; j++) {
            const char *key = c->items[j].topology_key;
            int created = 0;
            if (is_hostname(key))
                continue;
            rc = plugin_tp_add(&s->counts, key, label_or_empty(node, key), 0, &created, NULL);
            size[j] += created;
        }
    }
    for (size_t j = 0; rc == KUBE_OK && j < c->n; j++) {
        size_t sz = is_hostname(c->items[j].topology_key) ? n - s->ignored.len : size[j];
        s->weights[j] = log((double)(sz + 2));
    }
    free(size);
    return rc;
}

typedef struct score_count_job {
    const pre_score_state *s;
    const kube_pod *pod;
    const fw_node_info *const *nodes;
    int64_t *counts; /* [node][constraint], -1: nothing to add */
} score_count_job;

/* processAllNode: the node's matching pods for each constraint whose pair
 * is one of the feasible nodes' (read-only on the table). */
static void score_count_node(void *ud, size_t i)
{
    const score_count_job *job = ud;
    const pts_constraints *c = job->s->c;
    const kube_node *node = job->nodes[i]->node;
    int64_t *out = &job->counts[i * c->n];

    for (size_t j = 0; j < c->n; j++)
        out[j] = -1;
    if (!node || (job->s->require_all && !pts_node_has_all_keys(node, c)))
        return;
    int affinity_ok = pts_required_node_affinity_matches(job->pod, node);
    for (size_t j = 0; j < c->n; j++) {
        const pts_constraint *t = &c->items[j];
        if (pts_match_inclusion_policies(t, job->pod, node, affinity_ok) &&
            plugin_tp_get(&job->s->counts, t->topology_key, label_or_empty(node, t->topology_key)))
            out[j] =
                pts_count_matching_pods(job->nodes[i], t->selector, job->pod->base.meta.namespace_);
    }
}

static int count_score_pairs(const pod_topology_spread *pl, pre_score_state *s, const kube_pod *pod,
                             const fw_snapshot *snap)
{
    const pts_constraints *c = s->c;
    const fw_node_info *const *nodes = (const fw_node_info *const *)snap->list;
    int64_t *counts = malloc(snap->n_list * c->n * sizeof(*counts));

    if (!counts)
        return KUBE_ENOMEM;
    score_count_job job = {s, pod, nodes, counts};
    fw_parallelize(pl->h->svc.parallelizer, snap->n_list, score_count_node, &job, NULL);
    for (size_t i = 0; i < snap->n_list; i++)
        for (size_t j = 0; j < c->n; j++)
            if (counts[i * c->n + j] >= 0)
                plugin_tp_add(&s->counts, c->items[j].topology_key,
                              label_or_empty(nodes[i]->node, c->items[j].topology_key),
                              counts[i * c->n + j], NULL, NULL);
    free(counts);
    return KUBE_OK;
}

fw_status *pts_pre_score(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *const *nodes, size_t n)
{
    const pod_topology_spread *pl = self;
    const fw_snapshot *snap = pts_snapshot_of(pl);
    pts_constraints *c;
    pre_score_state *s;
    int rc;

    if (n == 0 || snap->n_list == 0)
        return fw_status_new(FW_SKIP, NULL);
    if ((rc = pts_get_constraints(pl, (fw_pod_info *)pod, KUBE_SCHEDULE_ANYWAY, &c)) == KUBE_EINVAL)
        return fw_status_error(rc, "calculating preScoreState: obtaining pod's soft topology "
                                   "spread constraints: invalid label selector");
    if (rc != KUBE_OK)
        return fw_status_error(rc, NULL);
    if (!c)
        return fw_status_new(FW_SKIP, NULL);
    if (!(s = calloc(1, sizeof(*s) + c->n * sizeof(double)))) {
        pts_constraints_unref(c);
        return fw_status_error(KUBE_ENOMEM, NULL);
    }
    fw_shared_init(&s->shared, pre_score_state_release);
    s->c = c;
    /* Only the pod's own or List defaults need every topology key. */
    s->require_all = pod->pod->n_spread > 0 || !pl->system_defaulted;
    if ((rc = init_pairs(s, nodes, n)) != KUBE_OK ||
        (rc = count_score_pairs(pl, s, pod->pod, snap)) != KUBE_OK) {
        fw_shared_unref(s);
        return fw_status_error(rc, NULL);
    }
    rc = fw_cycle_state_write(cs, PRE_SCORE_KEY, s, &fw_shared_ops);
    return rc == KUBE_OK ? NULL : fw_status_error(rc, NULL);
}

static const pre_score_state *read_pre_score(const fw_cycle_state *cs)
{
    return fw_cycle_state_read_static(cs, PRE_SCORE_KEY);
}

fw_status *pts_score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                     const fw_node_info *ni, int64_t *out)
{
    const pre_score_state *s = read_pre_score(cs);
    const kube_node *node = ni->node;
    double sum = 0;

    *out = 0;
    if (!node)
        return fw_status_error(KUBE_ENOTFOUND, "getting node %s from Snapshot: not found",
                               ni->name ? ni->name : "");
    if (!s)
        return fw_status_error(KUBE_ENOTFOUND, "error reading \"%s\" from cycleState: not found",
                               PRE_SCORE_KEY);
    if (plugin_tp_get(&s->ignored, ni->name, ""))
        return NULL;
    for (size_t j = 0; j < s->c->n; j++) {
        const pts_constraint *t = &s->c->items[j];
        const char *value = pts_node_label(node, t->topology_key);
        int64_t cnt;
        if (!value)
            continue;
        if (is_hostname(t->topology_key))
            cnt = pts_count_matching_pods(ni, t->selector, pod->namespace_);
        else
            cnt = plugin_tp_count(&s->counts, t->topology_key, value);
        sum += (double)cnt * s->weights[j] + (double)(t->max_skew - 1);
    }
    *out = (int64_t)round(sum);
    return NULL;
}

fw_status *pts_normalize_score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                               fw_node_score *scores, size_t n)
{
    const pre_score_state *s = read_pre_score(cs);
    int64_t min_score = INT64_MAX, max_score = 0;

    if (!s)
        return fw_status_error(KUBE_ENOTFOUND, "error reading \"%s\" from cycleState: not found",
                               PRE_SCORE_KEY);
    for (size_t i = 0; i < n; i++) {
        if (plugin_tp_get(&s->ignored, scores[i].name, "")) {
            scores[i].score = INVALID_SCORE;
            continue;
        }
        if (scores[i].score < min_score)
            min_score = scores[i].score;
        if (scores[i].score > max_score)
            max_score = scores[i].score;
    }
    for (size_t i = 0; i < n; i++) {
        if (scores[i].score == INVALID_SCORE)
            scores[i].score = 0;
        else if (max_score == 0)
            scores[i].score = FW_MAX_NODE_SCORE;
        else
            scores[i].score =
                FW_MAX_NODE_SCORE * (max_score + min_score - scores[i].score) / max_score;
    }
    return NULL;
}
