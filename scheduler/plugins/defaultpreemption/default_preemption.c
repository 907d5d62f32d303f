/*
 * scheduler/plugins/defaultpreemption/default_preemption.c - DefaultPreemption (kube-scheduler
 * v1.28 pkg/scheduler/framework/plugins/defaultpreemption with
 * framework/preemption.Evaluator.Preempt).
 *
 * PostFilter, after no node fit the pod:
 *   1. the pod must be eligible: not preemptionPolicy Never ("not eligible
 *      due to preemptionPolicy=Never."), and when it already has a
 *      nominated node that is not UnschedulableAndUnresolvable, no pod of
 *      lower priority may still be terminating there ("not eligible due to
 *      a terminating pod on the nominated node.");
 *   2. candidates: the nodes where preemption might help are dry-run from a
 *      random offset in parallel (default_preemption_candidates.c), until
 *      enough candidates are found (max(n * minCandidateNodesPercentage /
 *      100, minCandidateNodesAbsolute), at most n); none: the FitError of
 *      the dry runs ("0/3 nodes are available: ...") and the nomination is
 *      cleared;
 *   3. the best candidate is chosen; each victim is rejected if it waits
 *      on a Permit plugin, else given the DisruptionTarget condition (with
 *      the PodDisruptionConditions feature gate on, its default) and
 *      deleted, with a Normal "Preempted" event ("Preempted by pod <uid>
 *      on node <node>"); the nominations of lower-priority pods on that
 *      node are cleared (pods/status patches);
 *   4. the node is returned as the pod's nominated node.
 * Every non-success message is prefixed "preemption: ". Metrics (when the
 * handle has a registry): scheduler_preemption_attempts_total counts every
 * PostFilter, scheduler_preemption_victims observes the victims of each
 * preemption.
 *
 *   2b. scheduler extenders supporting preemption (extender.h) narrow the
 *      candidates (callExtenders); a non-ignorable one failing fails the
 *      PostFilter with its error;
 * Not done: the preemptor is not re-read from a pod lister before step 1
 * (the scheduler's copy is used).
 *
 * Args (DefaultPreemptionArgs): minCandidateNodesPercentage (default 10,
 * [0, 100]) and minCandidateNodesAbsolute (default 100, >= 0), not both 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feature_gates.h"
#include "kube/transport/api.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/util/rand.h"
#include "kube/types/pod.h"
#include "kube/machinery/recorder.h"
#include "plugins/defaultpreemption/internal.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"
#include "plugins/defaultpreemption/default_preemption_testing.h"

#define PCT "minCandidateNodesPercentage"
#define ABS "minCandidateNodesAbsolute"

/* ------------------------------------------------------------------ */
/* Args                                                                */
/* ------------------------------------------------------------------ */

static void validate_args(const cJSON *in, int32_t *pct, int32_t *abs_, plugin_field_errs *e)
{
    static const char *const known[] = {PCT, ABS, NULL};
    int64_t p = PREEMPTION_DEFAULT_MIN_PCT, a = PREEMPTION_DEFAULT_MIN_ABS;

    if (in && !cJSON_IsNull(in) && !cJSON_IsObject(in)) {
        plugin_field_errs_add(e, "expected an object");
        return;
    }
    if (cJSON_IsObject(in)) {
        plugin_args_unknown_fields(in, "", known, e);
        plugin_args_int(in, "", PCT, INT32_MIN, INT32_MAX, PREEMPTION_DEFAULT_MIN_PCT, &p, e);
        plugin_args_int(in, "", ABS, INT32_MIN, INT32_MAX, PREEMPTION_DEFAULT_MIN_ABS, &a, e);
    }
    if (p < 0 || p > 100)
        plugin_field_errs_add(e, PCT ": Invalid value: %lld: not in valid range [0, 100]",
                              (long long)p);
    if (a < 0)
        plugin_field_errs_add(e, ABS ": Invalid value: %lld: not in valid range [0, inf)",
                              (long long)a);
    if (p == 0 && a == 0) {
        plugin_field_errs_add(e, PCT ": Invalid value: 0: cannot be zero at the same time as " ABS);
        plugin_field_errs_add(e, ABS ": Invalid value: 0: cannot be zero at the same time as " PCT);
    }
    *pct = (int32_t)p;
    *abs_ = (int32_t)a;
}

static int default_args(const cJSON *in, cJSON **out, char *err, size_t errlen)
{
    plugin_field_errs e = PLUGIN_FIELD_ERRS_INIT;
    int32_t pct, abs_;
    int rc;

    *out = NULL;
    validate_args(in, &pct, &abs_, &e);
    if ((rc = plugin_field_errs_finish(&e, err, errlen)) != KUBE_OK)
        return rc;
    if (!(*out = cJSON_CreateObject()) || !cJSON_AddNumberToObject(*out, PCT, pct) ||
        !cJSON_AddNumberToObject(*out, ABS, abs_)) {
        cJSON_Delete(*out);
        *out = NULL;
        return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

/* ------------------------------------------------------------------ */
/* API writes                                                          */
/* ------------------------------------------------------------------ */

static fw_status *api_status(int rc, const kube_status *st)
{
    return fw_status_error(rc, "%s", st->message[0] ? st->message : kube_strerror(rc));
}

void dp_clear_nomination(default_preemption *pl, const fw_pod_info *pi)
{
    cJSON *patch = cJSON_CreateObject(), *status;
    kube_status st;
    int rc;

    if (!pi->pod->nominated_node_name[0] || !pl->h->svc.client) {
        cJSON_Delete(patch);
        return;
    }
    memset(&st, 0, sizeof(st));
    rc = (status = cJSON_AddObjectToObject(patch, "status")) &&
                 cJSON_AddNullToObject(status, "nominatedNodeName")
             ? kube_api_patch_pod_status(pl->h->svc.client, pi->namespace_, pi->name, patch, &st)
             : KUBE_ENOMEM;
    if (rc != KUBE_OK)
        KLOG_ERROR("Cannot clear 'NominatedNodeName' field pod=\"%s/%s\" err=\"%s\"",
                   pi->namespace_, pi->name, st.message[0] ? st.message : kube_strerror(rc));
    cJSON_Delete(patch);
}

/* The DisruptionTarget condition patch (a strategic merge patch of the
 * victim's status, as util.PatchPodStatus computes it), or NULL when the
 * victim already has it. */
static cJSON *disruption_patch(const kube_pod *victim, const char *scheduler)
{
    const kube_pod_condition *old = kube_pod_condition_get(victim, "DisruptionTarget");
    cJSON *patch, *status, *order, *conds, *c;
    char now[64], msg[300];

    if (old && strcmp(old->status, "True") == 0 &&
        strcmp(old->reason, "PreemptionByScheduler") == 0)
        return NULL;
    kube_time_rfc3339(now, sizeof(now));
    snprintf(msg, sizeof(msg), "%s: preempting to accommodate a higher priority pod", scheduler);
    if (!(patch = cJSON_CreateObject()) || !(status = cJSON_AddObjectToObject(patch, "status")) ||
        !(order = cJSON_AddArrayToObject(status, "$setElementOrder/conditions")) ||
        !(conds = cJSON_AddArrayToObject(status, "conditions")) || !(c = cJSON_CreateObject())) {
        cJSON_Delete(patch);
        return NULL;
    }
    for (size_t i = 0; i < victim->n_conditions; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "type", victim->conditions[i].type);
        cJSON_AddItemToArray(order, o);
    }
    if (!old) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "type", "DisruptionTarget");
        cJSON_AddItemToArray(order, o);
    }
    cJSON_AddNullToObject(c, "lastProbeTime");
    cJSON_AddStringToObject(c, "lastTransitionTime", now);
    cJSON_AddStringToObject(c, "message", msg);
    cJSON_AddStringToObject(c, "reason", "PreemptionByScheduler");
    cJSON_AddStringToObject(c, "status", "True");
    cJSON_AddStringToObject(c, "type", "DisruptionTarget");
    cJSON_AddItemToArray(conds, c);
    return patch;
}

static void pod_ref(const fw_pod_info *pi, kube_recorder_ref *r)
{
    memset(r, 0, sizeof(*r));
    r->kind = "Pod";
    r->api_version = "v1";
    r->namespace_ = pi->namespace_;
    r->name = pi->name;
    r->uid = pi->uid;
    r->resource_version = pi->pod->base.meta.resource_version;
}

/* Preempts one victim: rejects it while it waits on Permit, else marks
 * and deletes it; then the "Preempted" event. */
static fw_status *preempt_victim(default_preemption *pl, const fw_pod_info *pod,
                                 const fw_pod_info *victim, const char *node)
{
    kube_recorder_ref regarding, related;
    kube_status st;
    int rc;

    memset(&st, 0, sizeof(st));
    if (pl->h->fw &&
        fw_framework_reject_waiting_pod(pl->h->fw, victim->uid, PREEMPTION_NAME, "preempted")) {
        KLOG_V(2,
               "Preemptor pod rejected a waiting pod preemptor=\"%s/%s\" waitingPod=\"%s/%s\" "
               "node=\"%s\"",
               pod->namespace_, pod->name, victim->namespace_, victim->name, node);
    } else {
        cJSON *patch = sched_feature_enabled(SCHED_FEATURE_POD_DISRUPTION_CONDITIONS)
                           ? disruption_patch(victim->pod, pod->pod->scheduler_name)
                           : NULL;
        rc = patch ? kube_api_patch_pod_status(pl->h->svc.client, victim->namespace_, victim->name,
                                               patch, &st)
                   : KUBE_OK;
        cJSON_Delete(patch);
        if (rc != KUBE_OK) {
            KLOG_ERROR("Could not add DisruptionTarget condition due to preemption pod=\"%s/%s\"",
                       victim->namespace_, victim->name);
            return api_status(rc, &st);
        }
        if ((rc = kube_api_delete(pl->h->svc.client, &KUBE_RES_PODS, victim->namespace_,
                                  victim->name, &st)) != KUBE_OK) {
            KLOG_ERROR("Preempted pod pod=\"%s/%s\" preemptor=\"%s/%s\"", victim->namespace_,
                       victim->name, pod->namespace_, pod->name);
            return api_status(rc, &st);
        }
        KLOG_V(2,
               "Preemptor Pod preempted victim Pod preemptor=\"%s/%s\" victim=\"%s/%s\" "
               "node=\"%s\"",
               pod->namespace_, pod->name, victim->namespace_, victim->name, node);
    }
    pod_ref(victim, &regarding);
    pod_ref(pod, &related);
    if (pl->h->svc.recorder)
        kube_recorder_eventf(pl->h->svc.recorder, &regarding, &related, KUBE_RECORDER_NORMAL,
                             "Preempted", "Preempting", "Preempted by pod %s on node %s", pod->uid,
                             node);
    return NULL;
}

/* getLowerPriorityNominatedPods + ClearNominatedNodeName. */
static void clear_lower_nominations(default_preemption *pl, const fw_pod_info *pod,
                                    const char *node)
{
    const fw_nominator *nom = &pl->h->svc.nominator;
    fw_pod_info **pods = NULL;
    size_t n = 0;

    if (!nom->pods_for_node || nom->pods_for_node(nom->ud, node, &pods, &n) != KUBE_OK)
        return;
    for (size_t i = 0; i < n; i++) {
        if (pods[i]->priority < pod->priority)
            dp_clear_nomination(pl, pods[i]);
        fw_pod_info_unref(pods[i]);
    }
    free(pods);
}

/* prepareCandidate */
static fw_status *prepare_candidate(default_preemption *pl, const fw_pod_info *pod,
                                    const plugin_preemption_candidate *c)
{
    fw_status *st = NULL;

    if (!pl->h->svc.client)
        return fw_status_error(KUBE_EINVAL, "no API client to preempt pods with");
    for (size_t i = 0; i < c->n_victims && !st; i++)
        st = preempt_victim(pl, pod, c->victims[i], c->node);
    if (!st) {
        kube_metric_observe(pl->victims, NULL, (double)c->n_victims);
        clear_lower_nominations(pl, pod, c->node);
    }
    return st;
}

/* ------------------------------------------------------------------ */
/* PostFilter                                                          */
/* ------------------------------------------------------------------ */

/* PodEligibleToPreemptOthers: NULL when eligible, else the reason. */
static const char *not_eligible(default_preemption *pl, const fw_pod_info *pod,
                                const fw_diagnosis *d)
{
    const kube_pod *p = pod->pod;
    const char *nom = p->nominated_node_name;
    const fw_node_info *ni;

    if (p->preemption_policy == KUBE_PREEMPT_NEVER)
        return "not eligible due to preemptionPolicy=Never.";
    if (!nom[0])
        return NULL;
    if (fw_status_code(fw_diagnosis_node_status(d, nom)) == FW_UNSCHEDULABLE_AND_UNRESOLVABLE)
        return NULL;
    if (!pl->h->svc.snapshot || !(ni = fw_snapshot_get(pl->h->svc.snapshot, nom)))
        return NULL;
    for (size_t i = 0; i < ni->n_pods; i++)
        if (ni->pods[i]->pod->base.meta.deleting && ni->pods[i]->priority < pod->priority)
            return "not eligible due to a terminating pod on the nominated node.";
    return NULL;
}

/* The FitError of the dry runs: "0/N nodes are available: ...". */
static fw_status *no_candidate_status(const fw_diagnosis *statuses)
{
    char *msg = fw_fit_error_message((int)statuses->n_nodes, statuses);
    fw_status *st = msg ? fw_status_new(FW_UNSCHEDULABLE, msg) : fw_status_error(KUBE_ENOMEM, NULL);
    free(msg);
    return st;
}

/* callExtenders: the candidates the extenders supporting preemption keep
 * (none configured: all). */
static fw_status *call_extenders(default_preemption *pl, const fw_pod_info *pod,
                                 plugin_preemption_candidate **c, size_t *n)
{
    const fw_extenders *x = &pl->h->svc.extenders;

    return x->ud ? x->preempt(x->ud, pod, c, n) : NULL;
}

/* Evaluator.Preempt */
static fw_status *preempt(default_preemption *pl, fw_cycle_state *cs, const fw_pod_info *pod,
                          const fw_diagnosis *d, fw_post_filter_result *res)
{
    fw_diagnosis statuses = FW_DIAGNOSIS_INIT;
    plugin_preemption_candidate *c = NULL;
    size_t n = 0;
    const char *why = not_eligible(pl, pod, d);
    fw_status *st;
    long best;

    if (why)
        return fw_status_new(FW_UNSCHEDULABLE, why);
    st = plugin_default_preemption_find_candidates(pl, cs, pod, d, &c, &n, &statuses);
    if (st && n == 0) {
        fw_diagnosis_clear(&statuses);
        return st;
    }
    fw_status_free(st);
    if (n == 0) {
        st = no_candidate_status(&statuses);
        res->mode = FW_NOMINATING_OVERRIDE;
        res->node[0] = '\0';
    } else if ((st = call_extenders(pl, pod, &c, &n))) {
        /* a non-ignorable extender failed: its error */
    } else if ((best = plugin_default_preemption_select(c, n)) < 0) {
        st = fw_status_new(FW_UNSCHEDULABLE, "no candidate node for preemption");
    } else if (!(st = prepare_candidate(pl, pod, &c[best]))) {
        res->mode = FW_NOMINATING_OVERRIDE;
        kube_strlcpy(res->node, c[best].node, sizeof(res->node));
    }
    fw_diagnosis_clear(&statuses);
    plugin_preemption_candidates_free(c, n);
    return st;
}

static fw_status *post_filter(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                              const fw_diagnosis *d, fw_post_filter_result *res)
{
    default_preemption *pl = self;
    fw_status *st = preempt(pl, cs, pod, d, res), *prefixed;
    char *msg;

    kube_metric_add(pl->attempts, NULL, 1);
    if (fw_status_is_success(st) || st->n_reasons == 0)
        return st;
    if (!(msg = fw_status_message_dup(st)))
        return st;
    prefixed = fw_status_newf(st->code, "preemption: %s", msg);
    free(msg);
    fw_status_free(st);
    return prefixed;
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */
/* ------------------------------------------------------------------ */

static void destroy(void *self)
{
    free(self);
}

/* A family of the scheduler's registry (already registered by another
 * profile's instance: that one). NULL without a registry. */
static kube_metric *metric(kube_metrics *reg, const kube_metric_opts *o)
{
    kube_metric *m = NULL;
    int rc = reg ? kube_metrics_register(reg, o, &m) : KUBE_OK;

    if (rc == KUBE_EEXIST)
        m = kube_metrics_find(reg, o->name);
    else if (rc != KUBE_OK)
        KLOG_WARN("DefaultPreemption: registering metric %s: %s", o->name, kube_strerror(rc));
    return m;
}

/* kube-scheduler's PreemptionAttempts and PreemptionVictims. */
static void register_metrics(default_preemption *pl)
{
    static const double buckets[] = {1, 2, 4, 8, 16, 32, 64};
    kube_metric_opts attempts = {.name = "scheduler_preemption_attempts_total",
                                 .help = "Total preemption attempts in the cluster till now",
                                 .type = KUBE_METRIC_COUNTER,
                                 .stability = KUBE_STABILITY_STABLE};
    kube_metric_opts victims = {.name = "scheduler_preemption_victims",
                                .help = "Number of selected preemption victims",
                                .type = KUBE_METRIC_HISTOGRAM,
                                .stability = KUBE_STABILITY_STABLE,
                                .buckets = buckets,
                                .n_buckets = sizeof(buckets) / sizeof(buckets[0])};

    pl->attempts = metric(pl->h->svc.metrics_registry, &attempts);
    pl->victims = metric(pl->h->svc.metrics_registry, &victims);
    /* exported from 0, as client_golang does for families without labels */
    kube_metric_with(pl->attempts, NULL);
    kube_metric_with(pl->victims, NULL);
}

static default_preemption *instance_new(const cJSON *args, fw_handle *h, char *err, size_t errlen,
                                        int *rc)
{
    plugin_field_errs e = PLUGIN_FIELD_ERRS_INIT;
    default_preemption *pl;
    int32_t pct, abs_;

    validate_args(args, &pct, &abs_, &e);
    if ((*rc = plugin_field_errs_finish(&e, err, errlen)) != KUBE_OK)
        return NULL;
    if (!(pl = calloc(1, sizeof(*pl)))) {
        *rc = KUBE_ENOMEM;
        return NULL;
    }
    pl->h = h;
    pl->min_pct = pct;
    pl->min_abs = abs_;
    pl->fixed_offset = -1;
    pl->rng = kube_rand_seed();
    register_metrics(pl);
    return pl;
}

int plugin_default_preemption_new(const cJSON *args, fw_handle *h, struct kube_store *pdbs,
                                  void **self, char *err, size_t errlen)
{
    int rc;
    default_preemption *pl = instance_new(args, h, err, errlen, &rc);

    *self = pl;
    if (pl)
        pl->pdb_store = pdbs;
    return rc;
}

void plugin_default_preemption_fix_offset(void *self, int32_t offset)
{
    ((default_preemption *)self)->fixed_offset = offset < 0 ? -1 : offset;
}

static int create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                  size_t errlen)
{
    kube_informer_options o = {0};
    int rc;
    default_preemption *pl = instance_new(args, h, err, errlen, &rc);

    *self = NULL;
    if (!pl)
        return rc;
    if (h->svc.informers) {
        o.resource = &KUBE_RES_PDBS;
        o.codec = &kube_pdb_codec;
        if ((rc = kube_factory_lister(h->svc.informers, &o, &pl->pdb_lister)) != KUBE_OK) {
            snprintf(err, errlen, "adding the PodDisruptionBudget informer: %s", kube_strerror(rc));
            free(pl);
            return rc;
        }
    }
    *self = pl;
    return KUBE_OK;
}

const fw_plugin_desc plugin_default_preemption = {
    .name = PREEMPTION_NAME,
    .default_args = default_args,
    .create = create,
    .destroy = destroy,
    .post_filter = post_filter,
};
