/*
 * scheduler/schedule_one.c - kube-scheduler's schedule_one.go: the
 * scheduling thread (scheduleOne: Filter, Score, assume, Reserve, Permit),
 * the binding cycle a binding thread runs (WaitOnPermit, PreBind, Bind,
 * PostBind, handleBindingCycleError) and handleSchedulingFailure
 * (PodScheduled condition, nominatedNodeName, FailedScheduling event).
 */
#include "scheduler_int.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/transport/api.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/array.h"
#include "kube/util/errors.h"
#include "kube/util/hash.h"
#include "kube/util/log.h"
#include "kube/util/rand.h"
#include "kube/types/pod.h"
#include "kube/machinery/recorder.h"

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

static kube_recorder *recorder_for(sched_scheduler *s, const fw_framework *fw)
{
    for (size_t i = 0; i < s->n_fws; i++)
        if (s->fws[i] == fw)
            return s->recorders[i];
    return NULL;
}

static double since_s(int64_t t0)
{
    return (double)(kube_now_ns() - t0) / 1e9;
}

/* The hash of a condition message; never 0 (no condition recorded). */
static uint64_t fnv1a(const char *s)
{
    uint64_t h = kube_fnv1a_str(KUBE_FNV1A_INIT, s);

    return h ? h : 1;
}

/* rand.Intn(100) < PLUGIN_METRICS_SAMPLE_PERCENT, per thread. */
static int sample_plugin_metrics(void)
{
    return (int)(kube_rand_next(kube_rand_local()) % 100) < PLUGIN_METRICS_SAMPLE_PERCENT;
}

static void pod_ref(const kube_pod *pod, kube_recorder_ref *r)
{
    memset(r, 0, sizeof(*r));
    r->kind = "Pod";
    r->api_version = "v1";
    r->namespace_ = pod->base.meta.namespace_;
    r->name = pod->base.meta.name;
    r->uid = pod->base.meta.uid;
    r->resource_version = pod->base.meta.resource_version;
}

/* truncateMessage: at most NOTE_LENGTH_LIMIT bytes, " ..." when cut (on a
 * UTF-8 boundary). */
static void truncate_note(const char *msg, char *out, size_t n)
{
    size_t len = strlen(msg), cut;

    if (len < n && len <= NOTE_LENGTH_LIMIT) {
        memcpy(out, msg, len + 1);
        return;
    }
    cut = NOTE_LENGTH_LIMIT - 4;
    if (cut > n - 5)
        cut = n - 5;
    while (cut > 0 && ((unsigned char)msg[cut] & 0xC0) == 0x80)
        cut--;
    memcpy(out, msg, cut);
    memcpy(out + cut, " ...", 5);
}

/* ------------------------------------------------------------------ */
/* handleSchedulingFailure                                             */
/* ------------------------------------------------------------------ */

typedef struct failure {
    fw_code code;
    const char *msg;
    const char *const *plugins; /* rejecting plugins (FitError) */
    size_t n_plugins;
    fw_nominating_mode mode; /* NominatingInfo */
    const char *node;
    int64_t start_ns;
} failure;

static int is_unschedulable(fw_code c)
{
    return c == FW_UNSCHEDULABLE || c == FW_UNSCHEDULABLE_AND_UNRESOLVABLE;
}

/* podutil.UpdatePodCondition would change something. */
static int condition_changed(const kube_pod *pod, const char *reason, uint64_t msg_hash,
                             uint64_t last_hash, int *status_changed)
{
    const kube_pod_condition *c = kube_pod_condition_get(pod, "PodScheduled");

    *status_changed = !c || strcmp(c->status, "False");
    if (*status_changed || strcmp(c->reason, reason))
        return 1;
    return msg_hash != last_hash;
}

static cJSON *status_patch(const char *reason, const char *msg, int with_condition,
                           int status_changed, int set_nnn, const char *nnn)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *status = cJSON_AddObjectToObject(root, "status");
    char now[40];

    if (with_condition) {
        cJSON *conds = cJSON_AddArrayToObject(status, "conditions");
        cJSON *c = cJSON_CreateObject();
        cJSON_AddItemToArray(conds, c);
        cJSON_AddStringToObject(c, "type", "PodScheduled");
        cJSON_AddStringToObject(c, "status", "False");
        cJSON_AddStringToObject(c, "reason", reason);
        cJSON_AddStringToObject(c, "message", msg);
        if (status_changed) {
            kube_time_rfc3339(now, sizeof(now));
            cJSON_AddNullToObject(c, "lastProbeTime");
            cJSON_AddStringToObject(c, "lastTransitionTime", now);
        }
    }
    if (set_nnn) {
        if (nnn && *nnn)
            cJSON_AddStringToObject(status, "nominatedNodeName", nnn);
        else
            cJSON_AddNullToObject(status, "nominatedNodeName");
    }
    return root;
}

/* updatePod: the PodScheduled=False condition and nominatedNodeName. */
static void update_pod_status(sched_scheduler *s, const kube_pod *pod, const char *reason,
                              const char *msg, int cond_changed, int status_changed,
                              const failure *f)
{
    int set_nnn = f->mode == FW_NOMINATING_OVERRIDE &&
                  strcmp(pod->nominated_node_name, f->node ? f->node : "");
    kube_status st;
    cJSON *patch;
    int rc;

    if (!cond_changed && !set_nnn)
        return;
    patch = status_patch(reason, msg, cond_changed, status_changed, set_nnn, f->node);
    if (!patch) {
        KLOG_ERROR("out of memory building the status of pod %s/%s", pod->base.meta.namespace_,
                   pod->base.meta.name);
        return;
    }
    memset(&st, 0, sizeof(st));
    rc = kube_api_patch_pod_status(s->client, pod->base.meta.namespace_, pod->base.meta.name, patch,
                                   &st);
    if (rc != KUBE_OK)
        KLOG_ERROR("error updating pod %s/%s: %s", pod->base.meta.namespace_, pod->base.meta.name,
                   st.message[0] ? st.message : kube_strerror(rc));
    cJSON_Delete(patch);
}

/* Hands qp back to the queue with the informer's latest version of the
 * pod; frees it when the pod is gone or assigned. */
static void requeue(sched_scheduler *s, sched_queued_pod *qp, const kube_pod *cached)
{
    const fw_pod_info *pi = qp->info.pi;

    if (!cached) {
        KLOG_INFO("pod %s/%s doesn't exist in informer cache", pi->namespace_, pi->name);
        sched_queued_pod_free(qp);
        return;
    }
    if (*cached->node_name) {
        KLOG_INFO("pod %s/%s has been assigned to node %s. Abort adding it back to queue.",
                  pi->namespace_, pi->name, cached->node_name);
        sched_queued_pod_free(qp);
        return;
    }
    if (cached != pi->pod) {
        fw_pod_info *fresh = NULL;
        if (fw_pod_info_new((kube_pod *)cached, &fresh) == KUBE_OK)
            sched_queued_pod_set_pod_info(qp, fresh);
        fw_pod_info_unref(fresh);
    }
    sched_queue_add_unschedulable_if_not_present(s->queue, qp,
                                                 sched_queue_scheduling_cycle(s->queue));
}

static void count_failure(sched_scheduler *s, const fw_framework *fw, const failure *f)
{
    int unsched = is_unschedulable(f->code);

    sched_core_metrics_attempt(&s->cm, unsched ? "unschedulable" : "error",
                               fw_framework_profile_name(fw), since_s(f->start_ns));
    atomic_fetch_add(unsched ? &s->n_unschedulable : &s->n_errors, 1);
}

static void handle_failure(sched_scheduler *s, sched_queued_pod *qp, const failure *f)
{
    fw_framework *fw = qp->fw;
    fw_pod_info *pi = fw_pod_info_ref(qp->info.pi);
    const char *reason = is_unschedulable(f->code) ? "Unschedulable" : "SchedulerError";
    kube_object *cached_obj = kube_lister_get(s->pods, pi->namespace_, pi->name);
    const kube_pod *cached = kube_pod_from(cached_obj);
    const kube_pod *pod = cached ? cached : pi->pod;
    uint64_t h = fnv1a(f->msg);
    int status_changed = 0;
    int changed = condition_changed(pod, reason, h, qp->condition_hash, &status_changed);
    kube_recorder_ref ref;
    char note[NOTE_LENGTH_LIMIT + 8];

    count_failure(s, fw, f);
    if (f->code == FW_ERROR)
        KLOG_ERROR("error scheduling pod %s/%s; retrying: %s", pi->namespace_, pi->name, f->msg);
    else
        KLOG_V(2, "unable to schedule pod %s/%s; waiting: %s", pi->namespace_, pi->name, f->msg);
    if (f->n_plugins && sched_queued_pod_set_unschedulable_plugins(qp, f->plugins, f->n_plugins))
        KLOG_ERROR("out of memory recording the plugins that rejected %s/%s", pi->namespace_,
                   pi->name);
    if (changed)
        qp->condition_hash = h;
    requeue(s, qp, cached);
    if (sched_nominator_add(s->nominator, pi, f->mode, f->node) != KUBE_OK)
        KLOG_ERROR("out of memory nominating pod %s/%s", pi->namespace_, pi->name);
    truncate_note(f->msg, note, sizeof(note));
    pod_ref(pod, &ref);
    kube_recorder_eventf(recorder_for(s, fw), &ref, NULL, KUBE_RECORDER_WARNING, "FailedScheduling",
                         "Scheduling", "%s", note);
    update_pod_status(s, pod, reason, f->msg, changed, status_changed, f);
    kube_object_unref(cached_obj);
    fw_pod_info_unref(pi);
}

/* A failure described by a status (non-FitError). */
static void fail_with_status(sched_scheduler *s, sched_queued_pod *qp, const fw_status *st,
                             int64_t start_ns)
{
    char *msg = fw_status_message_dup(st);
    failure f = {fw_status_code(st),
                 msg ? msg : "out of memory",
                 NULL,
                 0,
                 FW_NOMINATING_OVERRIDE,
                 "",
                 start_ns};

    if (f.code == FW_SUCCESS || f.code == FW_SKIP || f.code == FW_WAIT)
        f.code = FW_ERROR;
    handle_failure(s, qp, &f);
    free(msg);
}

/* A FitError on the single node a Reserve/Permit/WaitOnPermit rejected. */
static void fail_on_node(sched_scheduler *s, sched_queued_pod *qp, const fw_status *st,
                         const char *node, int64_t start_ns)
{
    fw_diagnosis d = FW_DIAGNOSIS_INIT;
    char *msg = NULL;
    const char *plugin = st->plugin;

    if (fw_diagnosis_add_node(&d, node, fw_status_clone(st)) == KUBE_OK)
        msg = fw_fit_error_message(1, &d);
    if (!msg) {
        fw_diagnosis_clear(&d);
        fail_with_status(s, qp, st, start_ns);
        return;
    }
    failure f = {st->code, msg,     plugin ? &plugin : NULL, plugin ? 1 : 0, FW_NOMINATING_OVERRIDE,
                 "",       start_ns};
    handle_failure(s, qp, &f);
    free(msg);
    fw_diagnosis_clear(&d);
}

/* ------------------------------------------------------------------ */
/* Binding cycle                                                       */
/* ------------------------------------------------------------------ */

static int pre_check_other_pod(void *ud, const fw_pod_info *pi)
{
    return strcmp(pi->uid, ud) != 0;
}

/* handleBindingCycleError. */
static void binding_failed(sched_scheduler *s, bind_job *job, fw_status *st)
{
    sched_queued_pod *qp = job->qp;
    fw_pod_info *pi = fw_pod_info_ref(qp->info.pi);
    int forgotten;

    fw_framework_run_unreserve(qp->fw, job->cs, pi, job->node);
    forgotten = sched_cache_forget_pod(s->cache, pi, job->node) == KUBE_OK;
    if (!fw_status_is_unschedulable(st)) {
        if (forgotten)
            sched_queue_move_all(s->queue, &SCHED_EV_ASSIGNED_POD_DELETE, &pi->pod->base, NULL,
                                 NULL, NULL);
        fail_with_status(s, qp, st, job->start_ns);
    } else {
        fail_on_node(s, qp, st, job->node, job->start_ns);
        if (forgotten)
            sched_queue_move_all(s->queue, &SCHED_EV_ASSIGNED_POD_DELETE, &pi->pod->base, NULL,
                                 pre_check_other_pod, (void *)pi->uid);
    }
    fw_pod_info_unref(pi);
}

static const char *attempts_label(int attempts, char *buf, size_t n)
{
    if (attempts >= 15)
        return "15+";
    snprintf(buf, n, "%d", attempts);
    return buf;
}

static void bound(sched_scheduler *s, bind_job *job)
{
    sched_queued_pod *qp = job->qp;
    const fw_pod_info *pi = qp->info.pi;
    const char *profile = fw_framework_profile_name(qp->fw);
    kube_recorder_ref ref;
    char buf[16];
    const char *label = attempts_label(qp->info.attempts, buf, sizeof(buf));
    double attempts = qp->info.attempts;

    KLOG_V(2, "successfully bound pod %s/%s to node %s", pi->namespace_, pi->name, job->node);
    pod_ref(pi->pod, &ref);
    kube_recorder_eventf(recorder_for(s, qp->fw), &ref, NULL, KUBE_RECORDER_NORMAL, "Scheduled",
                         "Binding", "Successfully assigned %s/%s to %s", pi->namespace_, pi->name,
                         job->node);
    sched_core_metrics_attempt(&s->cm, "scheduled", profile, since_s(job->start_ns));
    kube_metric_observe(s->cm.pod_scheduling_attempts, NULL, attempts);
    if (qp->info.initial_attempt_ns)
        kube_metric_observe(s->cm.pod_scheduling_sli_duration, &label,
                            since_s(qp->info.initial_attempt_ns));
    atomic_fetch_add(&s->n_scheduled, 1);
}

/* Bind's answer as the binding cycle takes it: no bind plugin (all
 * skipped) is an error. Takes st. */
static fw_status *bind_answer(const fw_pod_info *pi, fw_status *st)
{
    if (!fw_status_is_skip(st))
        return st;
    fw_status_free(st);
    return fw_status_error(KUBE_EINVAL, "no bind plugin bound pod %s/%s", pi->namespace_, pi->name);
}

/* The end of a binding cycle whose Bind succeeded or failed with st
 * (taken): handleBindingCycleError, or the Scheduled event and PostBind.
 * Frees or requeues the job's pod. */
static void binding_end(sched_scheduler *s, bind_job *job, fw_status *st)
{
    sched_queued_pod *qp = job->qp;
    fw_pod_info *pi = qp->info.pi;

    if (!fw_status_is_success(st)) {
        KLOG_V(1, "failed to bind pod %s/%s", pi->namespace_, pi->name);
        binding_failed(s, job, st);
        fw_status_free(st);
        return;
    }
    bound(s, job);
    fw_framework_run_post_bind(qp->fw, job->cs, pi, job->node);
    sched_queued_pod_free(qp);
}

void sched_binding_cycle(sched_scheduler *s, bind_job *job)
{
    sched_queued_pod *qp = job->qp;
    fw_framework *fw = qp->fw;
    fw_pod_info *pi = qp->info.pi;
    fw_status *st;

    if (job->bind_failure) { /* PreBind or Bind ran without a thread, and failed */
        st = job->bind_failure;
        job->bind_failure = NULL;
        binding_end(s, job, st);
        return;
    }
    st = fw_framework_wait_on_permit(fw, pi);
    if (fw_status_is_success(st))
        st = fw_framework_run_pre_bind(fw, job->cs, pi, job->node);
    if (fw_status_is_success(st)) {
        if (!sched_extenders_bind(s->extenders, pi, job->node, &st))
            st = bind_answer(pi, fw_framework_run_bind(fw, job->cs, pi, job->node));
        sched_cache_finish_binding(s->cache, pi);
    }
    binding_end(s, job, st);
}

/* An asynchronous Bind's end, on the client's I/O thread: a bound pod's
 * binding cycle ends here (its PostBind cannot block); a failure goes to a
 * binding thread, since handling it writes the pod's status. */
static void bind_finished(void *ud, fw_status *st)
{
    bind_job *job = ud;
    sched_scheduler *s = job->s;

    sched_cache_finish_binding(s->cache, job->qp->info.pi);
    if (fw_status_is_success(st)) {
        binding_end(s, job, st);
        sched_binders_release(s->binders, job);
        return;
    }
    job->bind_failure = bind_answer(job->qp->info.pi, st);
    sched_binders_push(s->binders, job);
}

/* The binding cycle of an admitted light job, without a binding thread:
 * PreBind here, Bind on the client's I/O thread and the rest in
 * bind_finished there (a failure on a binding thread). */
static void bind_without_thread(sched_scheduler *s, bind_job *job)
{
    fw_framework *fw = job->qp->fw;
    const fw_pod_info *pi = job->qp->info.pi;
    fw_status *st = fw_framework_run_pre_bind(fw, job->cs, pi, job->node);

    if (!fw_status_is_success(st)) {
        job->bind_failure = st;
        sched_binders_push(s->binders, job);
        return;
    }
    st = fw_framework_run_bind_async(fw, job->cs, pi, job->node, bind_finished, job);
    if (st) /* it did not start */
        bind_finished(job, st);
}

void sched_binding_drop(sched_scheduler *s, bind_job *job)
{
    sched_queued_pod *qp = job->qp;
    fw_pod_info *pi = qp->info.pi;

    KLOG_V(2, "not binding pod %s/%s to node %s: not the leader", pi->namespace_, pi->name,
           job->node);
    fw_framework_run_unreserve(qp->fw, job->cs, pi, job->node);
    sched_cache_forget_pod(s->cache, pi, job->node);
    sched_queued_pod_free(qp);
}

/* ------------------------------------------------------------------ */
/* Scheduling cycle                                                    */
/* ------------------------------------------------------------------ */

/* The pod could fit no node: PostFilter, then the FitError. */
static void no_fit(sched_scheduler *s, sched_queued_pod *qp, fw_cycle_state *cs, fw_diagnosis *d,
                   int64_t start_ns)
{
    fw_post_filter_result pf = {FW_NOMINATING_NOOP, ""};
    char *msg;

    if (fw_framework_has_post_filter_plugins(qp->fw)) {
        fw_status *pst = fw_framework_run_post_filter(qp->fw, cs, qp->info.pi, d, &pf);
        char *pmsg = fw_status_message_dup(pst);
        if (fw_status_code(pst) == FW_ERROR)
            KLOG_ERROR("status after running PostFilter plugins for pod %s/%s: %s",
                       qp->info.pi->namespace_, qp->info.pi->name, pmsg ? pmsg : "");
        fw_diagnosis_set_post_filter_msg(d, pmsg && *pmsg ? pmsg : NULL);
        free(pmsg);
        fw_status_free(pst);
    }
    msg = fw_fit_error_message((int)s->snap->n_list, d);
    failure f = {FW_UNSCHEDULABLE,
                 msg ? msg : "out of memory",
                 (const char *const *)d->unschedulable_plugins,
                 d->n_unschedulable_plugins,
                 pf.mode,
                 pf.node,
                 start_ns};
    handle_failure(s, qp, &f);
    free(msg);
}

/* What Reserve and Permit decided for an assumed pod. */
typedef enum permit_outcome {
    PERMIT_FAILED,  /* a plugin failed: the pod is forgotten, the failure handled */
    PERMIT_ALLOWED, /* the pod may bind */
    PERMIT_WAITING, /* a Permit plugin made it wait */
} permit_outcome;

/* Reserve and Permit after assume. */
static permit_outcome reserve_and_permit(sched_scheduler *s, sched_queued_pod *qp,
                                         fw_cycle_state *cs, const char *host, int64_t start_ns)
{
    fw_framework *fw = qp->fw;
    fw_pod_info *pi = qp->info.pi;
    fw_status *st = fw_framework_run_reserve(fw, cs, pi, host);

    if (fw_status_is_success(st)) {
        st = fw_framework_run_permit(fw, cs, pi, host);
        if (fw_status_is_wait(st) || fw_status_is_success(st)) {
            int waits = fw_status_is_wait(st);
            fw_status_free(st);
            return waits ? PERMIT_WAITING : PERMIT_ALLOWED;
        }
    }
    fw_framework_run_unreserve(fw, cs, pi, host);
    sched_cache_forget_pod(s->cache, pi, host);
    if (fw_status_is_unschedulable(st))
        fail_on_node(s, qp, st, host, start_ns);
    else
        fail_with_status(s, qp, st, start_ns);
    fw_status_free(st);
    return PERMIT_FAILED;
}

/* skipPodSchedule. */
static int skip_pod(sched_scheduler *s, sched_queued_pod *qp)
{
    const fw_pod_info *pi = qp->info.pi;
    kube_recorder_ref ref;

    if (pi->pod->base.meta.deleting) {
        pod_ref(pi->pod, &ref);
        kube_recorder_eventf(recorder_for(s, qp->fw), &ref, NULL, KUBE_RECORDER_WARNING,
                             "FailedScheduling", "Scheduling", "skip schedule deleting pod: %s/%s",
                             pi->namespace_, pi->name);
        return 1;
    }
    if (sched_cache_is_assumed(s->cache, pi->uid)) {
        KLOG_V(3, "skip schedule pod %s/%s: it is assumed", pi->namespace_, pi->name);
        return 1;
    }
    return 0;
}

/* Whether job's pod can bind without a binding thread: Permit allowed it,
 * its PreBind and PostBind cannot block, its Bind is asynchronous and no
 * extender binds it. */
static int binds_light(sched_scheduler *s, const bind_job *job, permit_outcome permitted)
{
    const fw_pod_info *pi = job->qp->info.pi;

    return permitted == PERMIT_ALLOWED && !sched_extenders_may_bind(s->extenders, pi) &&
           fw_framework_binding_is_light(job->qp->fw, job->cs, pi, job->node);
}

static void schedule_one(sched_scheduler *s, sched_queued_pod *qp)
{
    int64_t start = kube_now_ns();
    fw_cycle_state *cs;
    fw_diagnosis d = FW_DIAGNOSIS_INIT;
    fw_schedule_result res;
    fw_status *st = NULL;
    permit_outcome permitted;
    int rc, light;

    if (skip_pod(s, qp)) {
        sched_queued_pod_free(qp);
        return;
    }
    atomic_fetch_add(&s->n_attempts, 1);
    cs = fw_cycle_state_new();
    if (!cs) {
        st = fw_status_error(KUBE_ENOMEM, NULL);
        fail_with_status(s, qp, st, start);
        fw_status_free(st);
        return;
    }
    fw_cycle_state_set_record_plugin_metrics(cs, sample_plugin_metrics());
    rc = sched_cache_update_snapshot(s->cache, s->snap);
    if (rc != KUBE_OK)
        st = fw_status_error(rc, "updating the scheduler snapshot: %s", kube_strerror(rc));
    else
        st = fw_framework_schedule_pod(qp->fw, cs, qp->info.pi, s->snap, &s->st, &d, &res);
    if (fw_status_code(st) == FW_UNSCHEDULABLE) {
        no_fit(s, qp, cs, &d, start);
        goto out;
    }
    if (!fw_status_is_success(st)) {
        fail_with_status(s, qp, st, start);
        goto out;
    }
    kube_metric_observe(s->cm.scheduling_algorithm_duration, NULL, since_s(start));
    rc = sched_cache_assume_pod(s->cache, qp->info.pi, res.suggested_host);
    if (rc != KUBE_OK) {
        st = fw_status_error(rc, "assuming pod %s/%s: %s", qp->info.pi->namespace_,
                             qp->info.pi->name, kube_strerror(rc));
        fail_with_status(s, qp, st, start);
        goto out;
    }
    permitted = reserve_and_permit(s, qp, cs, res.suggested_host, start);
    if (permitted == PERMIT_FAILED)
        goto out;
    bind_job *job = calloc(1, sizeof(*job));
    if (!job) {
        fw_framework_run_unreserve(qp->fw, cs, qp->info.pi, res.suggested_host);
        sched_cache_forget_pod(s->cache, qp->info.pi, res.suggested_host);
        st = fw_status_error(KUBE_ENOMEM, NULL);
        fail_with_status(s, qp, st, start);
        goto out;
    }
    job->s = s;
    job->qp = qp;
    job->cs = cs;
    job->start_ns = start;
    kube_strlcpy(job->node, res.suggested_host, sizeof(job->node));
    cs = NULL;
    if (permitted == PERMIT_WAITING && sched_binders_submit_waiting(s->binders, job))
        goto out;
    light = binds_light(s, job, permitted);
    if (!sched_binders_admit(s->binders))
        sched_binders_drop(s->binders, job); /* fenced */
    else if (light)
        bind_without_thread(s, job);
    else
        sched_binders_push(s->binders, job);
out:
    fw_status_free(st);
    fw_diagnosis_clear(&d);
    fw_cycle_state_free(cs);
}

/* Past the renew deadline the client's fence refuses every write: no pod
 * is popped until the elector renews or gives up. */
static int still_leading(sched_scheduler *s)
{
    return !s->leader || kube_leader_is_leader(s->leader);
}

/* Marks the scheduling thread in scheduleOne, unless scheduling stopped
 * (the fence waits for in_cycle to clear). Returns 1 when it may go on. */
static int enter_cycle(sched_scheduler *s)
{
    int go;

    pthread_mutex_lock(&s->mu);
    go = atomic_load(&s->active) && !atomic_load(&s->stopping);
    s->in_cycle = go;
    pthread_mutex_unlock(&s->mu);
    return go;
}

static void leave_cycle(sched_scheduler *s)
{
    pthread_mutex_lock(&s->mu);
    s->in_cycle = 0;
    pthread_cond_broadcast(&s->cycle_cv);
    pthread_mutex_unlock(&s->mu);
}

/* The UIDs of the pods waiting on Permit (collect_waiting's list). */
typedef struct uid_list {
    char **uids;
    size_t n, cap;
} uid_list;

static void collect_waiting(void *ud, const fw_pod_info *pod, const char *const *pending,
                            size_t n_pending)
{
    uid_list *l = ud;

    (void)pending;
    (void)n_pending;
    if (KUBE_ARRAY_RESERVE(l->uids, l->cap, l->n + 1) != KUBE_OK)
        return;
    l->uids[l->n] = strdup(pod->uid);
    if (l->uids[l->n])
        l->n++;
}

void sched_reject_waiting(sched_scheduler *s)
{
    for (size_t i = 0; i < s->n_fws; i++) {
        uid_list l = {NULL, 0, 0};
        fw_framework_foreach_waiting_pod(s->fws[i], collect_waiting, &l);
        for (size_t k = 0; k < l.n; k++) {
            fw_framework_reject_waiting_pod(s->fws[i], l.uids[k], "", "scheduler stopping");
            free(l.uids[k]);
        }
        free(l.uids);
    }
}

void *sched_cycle_main(void *arg)
{
    sched_scheduler *s = arg;

    pthread_setname_np(pthread_self(), "sched-cycle");
    int synced = 0;

    while (!atomic_load(&s->stopping)) {
        sched_queued_pod *qp = NULL;
        int rc;
        if (!atomic_load(&s->active) || !still_leading(s)) {
            sched_wait_ms(s, POP_POLL_MS);
            continue;
        }
        if (!synced) {
            synced = kube_factory_wait_synced(s->informers, POP_POLL_MS) == KUBE_OK;
            continue;
        }
        rc = sched_queue_pop_timeout(s->queue, POP_POLL_MS, &qp);
        if (rc == KUBE_ECANCELED)
            break;
        if (rc != KUBE_OK)
            continue;
        if (!enter_cycle(s)) {
            sched_queue_add_unschedulable_if_not_present(s->queue, qp,
                                                         sched_queue_scheduling_cycle(s->queue));
            continue;
        }
        schedule_one(s, qp);
        leave_cycle(s);
    }
    return NULL;
}
