/*
 * scheduler/plugins/defaultpreemption/candidates.c - the candidate search
 * of kube-scheduler v1.28 preemption (Evaluator.findCandidates,
 * DryRunPreemption, DefaultPreemption.SelectVictimsOnNode,
 * filterPodsWithPDBViolation, SelectCandidate, pickOneNodeForPreemption).
 *
 * Start times: kube_pod carries no status.startTime, so a pod's start time
 * is its creationTimestamp (now when unset, as upstream for a pod not
 * started yet); victims of equal priority are ordered by it.
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/array.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/rand.h"
#include "kube/types/pod.h"
#include "plugins/defaultpreemption/internal.h"

void plugin_preemption_candidates_free(plugin_preemption_candidate *c, size_t n)
{
    fw_preemption_candidates_free(c, n);
}

int64_t dp_pod_start_ns(const fw_pod_info *pi)
{
    int64_t created = pi->pod->base.meta.creation_unix;
    return created ? created * 1000000000LL : kube_now_ns();
}

/* util.MoreImportantPod */
static int more_important(const fw_pod_info *a, const fw_pod_info *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    return dp_pod_start_ns(a) < dp_pod_start_ns(b);
}

static void sort_by_importance(fw_pod_info **v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        fw_pod_info *x = v[i];
        size_t j = i;
        while (j > 0 && more_important(x, v[j - 1])) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

/* ------------------------------------------------------------------ */
/* PDBs                                                                */
/* ------------------------------------------------------------------ */

typedef struct pdb_list {
    kube_object **v;
    size_t n, cap;
    int oom;
} pdb_list;

static void collect_pdb(void *ud, kube_object *obj)
{
    pdb_list *l = ud;
    if (l->oom || !kube_pdb_from(obj))
        return;
    if (KUBE_ARRAY_RESERVE(l->v, l->cap, l->n + 1) != KUBE_OK) {
        l->oom = 1;
        return;
    }
    l->v[l->n++] = kube_object_ref(obj);
}

int dp_list_pdbs(default_preemption *pl, kube_object ***out, size_t *n)
{
    pdb_list l = {NULL, 0, 0, 0};

    if (pl->pdb_lister)
        kube_lister_foreach(pl->pdb_lister, collect_pdb, &l);
    else if (pl->pdb_store)
        kube_store_foreach(pl->pdb_store, collect_pdb, &l);
    if (l.oom) {
        dp_pdbs_free(l.v, l.n);
        return KUBE_ENOMEM;
    }
    *out = l.v;
    *n = l.n;
    return KUBE_OK;
}

void dp_pdbs_free(kube_object **pdbs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        kube_object_unref(pdbs[i]);
    free(pdbs);
}

/* filterPodsWithPDBViolation: marks violating[i] for each pod (order kept
 * by the caller). allowed has one counter per PDB. */
static int pdb_violated(const fw_pod_info *pi, kube_object *const *pdbs, size_t n, int32_t *allowed)
{
    const kube_meta *m = &pi->pod->base.meta;
    int violated = 0;

    if (m->n_labels == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const kube_pdb *pdb = kube_pdb_from(pdbs[i]);
        const kube_label_selector *sel = pdb->selector;
        if (strcmp(pdb->base.meta.namespace_, m->namespace_) != 0)
            continue;
        if (!sel || !sel->valid || sel->n_reqs == 0 ||
            !kube_label_selector_matches(sel, m->labels, m->n_labels))
            continue;
        if (kube_pdb_has_disrupted_pod(pdb, m->name))
            continue;
        if (--allowed[i] < 0)
            violated = 1;
    }
    return violated;
}

/* ------------------------------------------------------------------ */
/* SelectVictimsOnNode                                                 */
/* ------------------------------------------------------------------ */

typedef struct node_try {
    default_preemption *pl;
    fw_cycle_state *cs; /* the clone for this node */
    const fw_pod_info *pod;
    fw_node_info *ni; /* the clone for this node */
} node_try;

static fw_status *remove_pod(node_try *t, fw_pod_info *victim)
{
    if (fw_node_info_remove_pod(t->ni, victim->uid) != KUBE_OK)
        return fw_status_error(KUBE_ENOTFOUND, "pod %s/%s not found on node %s", victim->namespace_,
                               victim->name, t->ni->name);
    return fw_framework_run_pre_filter_remove_pod(t->pl->h->fw, t->cs, t->pod, victim, t->ni);
}

static fw_status *add_pod(node_try *t, fw_pod_info *victim)
{
    if (fw_node_info_add_pod(t->ni, victim) != KUBE_OK)
        return fw_status_error(KUBE_ENOMEM, NULL);
    return fw_framework_run_pre_filter_add_pod(t->pl->h->fw, t->cs, t->pod, victim, t->ni);
}

/* The status as an error status (status.AsError()). */
static fw_status *as_error(fw_status *st)
{
    if (st && st->code != FW_ERROR) {
        st->code = FW_ERROR;
        st->err = KUBE_EINVAL;
    }
    return st;
}

/* reprievePod: adds pi back; 1 when the pod still fits (pi stays), 0 when
 * pi is a victim (removed again), or an error status. */
static fw_status *reprieve(node_try *t, fw_pod_info *pi, int *fits)
{
    fw_status *st = add_pod(t, pi);

    if (!fw_status_is_success(st))
        return as_error(st);
    st = fw_framework_run_filter_with_nominated_pods(t->pl->h->fw, t->cs, t->pod, t->ni);
    *fits = fw_status_is_success(st);
    fw_status_free(st);
    if (*fits)
        return NULL;
    st = remove_pod(t, pi);
    return fw_status_is_success(st) ? NULL : as_error(st);
}

/* Removes every lower-priority pod; *pv receives them (references). */
static fw_status *remove_lower(node_try *t, fw_pod_info ***pv, size_t *n)
{
    size_t cap = t->ni->n_pods;
    fw_pod_info **lower = calloc(cap ? cap : 1, sizeof(*lower));
    fw_status *st = NULL;

    *pv = lower;
    *n = 0;
    if (!lower)
        return fw_status_error(KUBE_ENOMEM, NULL);
    for (size_t i = 0; i < cap; i++)
        if (t->ni->pods[i]->priority < t->pod->priority)
            lower[(*n)++] = fw_pod_info_ref(t->ni->pods[i]);
    for (size_t i = 0; i < *n && !st; i++) {
        st = remove_pod(t, lower[i]);
        if (!fw_status_is_success(st))
            st = as_error(st);
    }
    return st;
}

static void unref_all(fw_pod_info **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fw_pod_info_unref(v[i]);
    free(v);
}

/* The victims of one node (references, most important first) and how many
 * violate a PDB; a non-success status when the node is no candidate. */
static fw_status *select_victims(node_try *t, kube_object *const *pdbs, size_t n_pdbs,
                                 plugin_preemption_candidate *c)
{
    fw_pod_info **pv;
    size_t n;
    int32_t *allowed = NULL;
    char *viol = NULL;
    fw_status *st = remove_lower(t, &pv, &n);

    if (!st && n == 0)
        st = fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                           "No preemption victims found for incoming pod");
    if (!st)
        st = fw_framework_run_filter_with_nominated_pods(t->pl->h->fw, t->cs, t->pod, t->ni);
    if (!st && (!(c->victims = calloc(n, sizeof(*c->victims))) ||
                !(allowed = calloc(n_pdbs + 1, sizeof(*allowed))) || !(viol = calloc(n, 1))))
        st = fw_status_error(KUBE_ENOMEM, NULL);
    if (st)
        goto out;
    sort_by_importance(pv, n);
    for (size_t i = 0; i < n_pdbs; i++)
        allowed[i] = kube_pdb_from(pdbs[i])->disruptions_allowed;
    for (size_t i = 0; i < n; i++)
        viol[i] = (char)pdb_violated(pv[i], pdbs, n_pdbs, allowed);
    /* reprieve the PDB-violating victims first, then the others */
    for (int pass = 1; pass >= 0 && !st; pass--) {
        for (size_t i = 0; i < n && !st; i++) {
            int fits = 0;
            if (viol[i] != pass || (st = reprieve(t, pv[i], &fits)) || fits)
                continue;
            c->victims[c->n_victims++] = fw_pod_info_ref(pv[i]);
            c->num_pdb_violations += pass;
        }
    }
out:
    free(allowed);
    free(viol);
    unref_all(pv, n);
    return st;
}

/* ------------------------------------------------------------------ */
/* DryRunPreemption                                                    */
/* ------------------------------------------------------------------ */

typedef struct cand_list {
    plugin_preemption_candidate *v;
    size_t n, cap;
} cand_list;

typedef struct dry_run {
    default_preemption *pl;
    const fw_cycle_state *cs;
    const fw_pod_info *pod;
    fw_node_info *const *nodes;
    size_t n_nodes;
    int32_t offset, num_candidates;
    kube_object **pdbs;
    size_t n_pdbs;
    pthread_mutex_t mu;
    cand_list nonviolating, violating;
    fw_diagnosis *statuses;
    kube_buf errs; /* error messages, ", "-joined */
    int n_errs;
    atomic_int stop;
} dry_run;

static void record_status(dry_run *dr, const char *node, fw_status *st)
{
    pthread_mutex_lock(&dr->mu);
    if (st->code == FW_ERROR) {
        char *msg = fw_status_message_dup(st);
        kube_buf_printf(&dr->errs, "%s%s", dr->n_errs++ ? ", " : "", msg ? msg : "");
        free(msg);
    }
    fw_diagnosis_add_node(dr->statuses, node, st);
    pthread_mutex_unlock(&dr->mu);
}

/* Keeps c (moved) while its list has room (candidateList.add), and stops
 * the dry runs once enough candidates are found. */
static void add_candidate(dry_run *dr, plugin_preemption_candidate *c)
{
    pthread_mutex_lock(&dr->mu);
    cand_list *l = c->num_pdb_violations == 0 ? &dr->nonviolating : &dr->violating;
    if (l->n < l->cap) {
        l->v[l->n++] = *c;
        memset(c, 0, sizeof(*c));
    }
    if (dr->nonviolating.n > 0 &&
        dr->nonviolating.n + dr->violating.n >= (size_t)dr->num_candidates)
        atomic_store(&dr->stop, 1);
    pthread_mutex_unlock(&dr->mu);
    fw_preemption_candidate_clear(c);
}

static void check_node(void *ud, size_t i)
{
    dry_run *dr = ud;
    const fw_node_info *src = dr->nodes[((size_t)dr->offset + i) % dr->n_nodes];
    node_try t = {dr->pl, fw_cycle_state_clone(dr->cs), dr->pod, fw_node_info_clone(src)};
    plugin_preemption_candidate c = {0};
    fw_status *st;

    if (!t.cs || !t.ni)
        st = fw_status_error(KUBE_ENOMEM, NULL);
    else
        st = select_victims(&t, dr->pdbs, dr->n_pdbs, &c);
    if (fw_status_is_success(st) && c.n_victims == 0)
        st = fw_status_error(KUBE_EINVAL, "expected at least one victim pod on node \"%s\"",
                             src->name);
    if (fw_status_is_success(st) && !(c.node = strdup(src->name)))
        st = fw_status_error(KUBE_ENOMEM, NULL);
    if (fw_status_is_success(st)) {
        add_candidate(dr, &c);
    } else {
        record_status(dr, src->name, st);
        fw_preemption_candidate_clear(&c);
    }
    fw_cycle_state_free(t.cs);
    fw_node_info_free(t.ni);
}

/* The candidates, non-violating first, into *out. */
static int merge_candidates(dry_run *dr, plugin_preemption_candidate **out, size_t *n)
{
    size_t total = dr->nonviolating.n + dr->violating.n;
    plugin_preemption_candidate *v = calloc(total ? total : 1, sizeof(*v));

    if (!v)
        return KUBE_ENOMEM;
    memcpy(v, dr->nonviolating.v, dr->nonviolating.n * sizeof(*v));
    memcpy(v + dr->nonviolating.n, dr->violating.v, dr->violating.n * sizeof(*v));
    free(dr->nonviolating.v);
    free(dr->violating.v);
    dr->nonviolating = (cand_list){0};
    dr->violating = (cand_list){0};
    *out = v;
    *n = total;
    return KUBE_OK;
}

static int32_t offset_for(default_preemption *pl, int32_t n)
{
    if (pl->fixed_offset >= 0)
        return pl->fixed_offset % n;
    return (int32_t)(kube_rand_next(&pl->rng) % (uint64_t)n);
}

int32_t plugin_default_preemption_num_candidates(const void *self, int32_t n)
{
    const default_preemption *pl = self;
    int32_t k = (int32_t)(((int64_t)n * pl->min_pct) / 100);

    if (k < pl->min_abs)
        k = pl->min_abs;
    return k > n ? n : k;
}

/* The dry runs over nodes[0..n); errors aggregated into the status. */
static fw_status *dry_run_preemption(dry_run *dr, plugin_preemption_candidate **out, size_t *n)
{
    fw_status *st = NULL;

    dr->offset = offset_for(dr->pl, (int32_t)dr->n_nodes);
    dr->num_candidates = plugin_default_preemption_num_candidates(dr->pl, (int32_t)dr->n_nodes);
    dr->nonviolating.cap = dr->violating.cap = (size_t)dr->num_candidates;
    dr->nonviolating.v = calloc(dr->nonviolating.cap + 1, sizeof(plugin_preemption_candidate));
    dr->violating.v = calloc(dr->violating.cap + 1, sizeof(plugin_preemption_candidate));
    if (!dr->nonviolating.v || !dr->violating.v) {
        free(dr->nonviolating.v);
        free(dr->violating.v);
        return fw_status_error(KUBE_ENOMEM, NULL);
    }
    fw_parallelize(dr->pl->h->svc.parallelizer, dr->n_nodes, check_node, dr, &dr->stop);
    if (dr->n_errs)
        st = fw_status_error(KUBE_EINVAL, dr->n_errs > 1 ? "[%s]" : "%s",
                             dr->errs.data ? dr->errs.data : "");
    if (merge_candidates(dr, out, n) != KUBE_OK) {
        fw_status_free(st);
        st = fw_status_error(KUBE_ENOMEM, NULL);
    }
    return st;
}

/* nodesWherePreemptionMightHelp: the potential nodes (borrowed) and the
 * others' statuses. */
static int potential_nodes(const fw_snapshot *snap, const fw_diagnosis *d, fw_node_info ***out,
                           size_t *n, fw_diagnosis *statuses)
{
    fw_node_info **v = calloc(snap->n_list ? snap->n_list : 1, sizeof(*v));

    *out = v;
    *n = 0;
    if (!v)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < snap->n_list; i++) {
        const fw_status *st = fw_diagnosis_node_status(d, snap->list[i]->name);
        if (fw_status_code(st) != FW_UNSCHEDULABLE_AND_UNRESOLVABLE) {
            v[(*n)++] = snap->list[i];
            continue;
        }
        if (fw_diagnosis_add_node(statuses, snap->list[i]->name,
                                  fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                                "Preemption is not helpful for scheduling")) !=
            KUBE_OK)
            return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

fw_status *plugin_default_preemption_find_candidates(void *self, fw_cycle_state *cs,
                                                     const fw_pod_info *pod, const fw_diagnosis *d,
                                                     plugin_preemption_candidate **out, size_t *n,
                                                     fw_diagnosis *statuses)
{
    default_preemption *pl = self;
    const fw_snapshot *snap = pl->h->svc.snapshot;
    dry_run dr;
    fw_node_info **nodes;
    size_t n_nodes;
    fw_status *st;

    *out = NULL;
    *n = 0;
    if (!snap || snap->n_list == 0)
        return fw_status_error(KUBE_EINVAL, "no nodes available");
    if (potential_nodes(snap, d, &nodes, &n_nodes, statuses) != KUBE_OK) {
        free(nodes);
        return fw_status_error(KUBE_ENOMEM, NULL);
    }
    if (n_nodes == 0) { /* preemption helps nowhere: clean the nomination up */
        free(nodes);
        dp_clear_nomination(pl, pod);
        return NULL;
    }
    memset(&dr, 0, sizeof(dr));
    dr.pl = pl;
    dr.cs = cs;
    dr.pod = pod;
    dr.nodes = nodes;
    dr.n_nodes = n_nodes;
    dr.statuses = statuses;
    pthread_mutex_init(&dr.mu, NULL);
    if (dp_list_pdbs(pl, &dr.pdbs, &dr.n_pdbs) != KUBE_OK)
        st = fw_status_error(KUBE_ENOMEM, NULL);
    else
        st = dry_run_preemption(&dr, out, n);
    pthread_mutex_destroy(&dr.mu);
    dp_pdbs_free(dr.pdbs, dr.n_pdbs);
    kube_buf_free(&dr.errs);
    free(nodes);
    return st;
}

/* ------------------------------------------------------------------ */
/* SelectCandidate                                                     */
/* ------------------------------------------------------------------ */

/* util.GetEarliestPodStartTime of the highest-priority victims. */
static int64_t earliest_start_of_top(const plugin_preemption_candidate *c)
{
    int32_t max = c->victims[0]->priority;
    int64_t earliest = dp_pod_start_ns(c->victims[0]);

    for (size_t i = 0; i < c->n_victims; i++) {
        const fw_pod_info *p = c->victims[i];
        if (p->priority == max && dp_pod_start_ns(p) < earliest) {
            earliest = dp_pod_start_ns(p);
        } else if (p->priority > max) {
            max = p->priority;
            earliest = dp_pod_start_ns(p);
        }
    }
    return earliest;
}

/* The score of candidate c under criterion k (higher is better). */
static int64_t score(const plugin_preemption_candidate *c, int k)
{
    int64_t sum = 0;

    switch (k) {
    case 0: /* fewest PDB violations */
        return -c->num_pdb_violations;
    case 1: /* lowest highest-priority victim */
        return -(int64_t)c->victims[0]->priority;
    case 2: /* smallest sum of priorities (each shifted to >= 0) */
        for (size_t i = 0; i < c->n_victims; i++)
            sum += (int64_t)c->victims[i]->priority + (int64_t)INT32_MAX + 1;
        return -sum;
    case 3: /* fewest victims */
        return -(int64_t)c->n_victims;
    default: /* latest start time of the highest-priority victims */
        return earliest_start_of_top(c);
    }
}

long plugin_default_preemption_select(const plugin_preemption_candidate *c, size_t n)
{
    size_t *keep = n ? malloc(n * sizeof(*keep)) : NULL;
    size_t n_keep = n;
    long best;

    if (n == 0)
        return -1;
    if (n == 1 || !keep) {
        free(keep);
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        keep[i] = i;
    for (int k = 0; k < 5 && n_keep > 1; k++) {
        int64_t max = INT64_MIN;
        size_t w = 0;
        for (size_t i = 0; i < n_keep; i++) {
            int64_t s = score(&c[keep[i]], k);
            if (s > max) {
                max = s;
                w = 0;
            }
            if (s == max)
                keep[w++] = keep[i];
        }
        n_keep = w;
    }
    best = (long)keep[0];
    free(keep);
    return best;
}
