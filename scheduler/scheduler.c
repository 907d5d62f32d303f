/*
 * scheduler/scheduler.c - the scheduler (scheduler.h): construction of
 * every part, the scheduling thread (scheduleOne and handleSchedulingFailure
 * of schedule_one.go), the binding pool (bindingCycle and
 * handleBindingCycleError), leadership and housekeeping.
 */
#include "scheduler.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eventhandlers.h"
#include "kube/api.h"
#include "kube/buf.h"
#include "kube/errors.h"
#include "kube/informer.h"
#include "kube/leader.h"
#include "kube/log.h"
#include "kube/pod.h"
#include "kube/recorder.h"

#define DEFAULT_BINDING_WORKERS 8
/* Pods assumed and waiting for a binding thread, per thread: the
 * scheduling thread waits beyond that (each holds its cycle state). */
#define BIND_BACKLOG_PER_WORKER 4
#define PLUGIN_METRICS_SAMPLE_PERCENT 10
#define POP_POLL_MS 200
#define HOUSEKEEPING_MS 1000
#define NOTE_LENGTH_LIMIT 1024
#define POD_SELECTOR "status.phase!=Succeeded,status.phase!=Failed"
#define EVENT_STOP_DEADLINE_MS 2000

/* A pod handed from the scheduling thread to a binding thread. */
typedef struct bind_job {
    struct bind_job *next;
    sched_queued_pod *qp;
    fw_cycle_state *cs;
    char node[254];
    int64_t start_ns;
} bind_job;

/* A pod a Permit plugin made wait gets a thread of its own (kube-scheduler
 * runs every binding cycle in its own goroutine): waiting pods must not
 * hold the pool's threads, or pods they wait for could never bind. */
typedef struct waiter {
    struct waiter *next;
    struct sched_scheduler *s;
    bind_job *job;
    pthread_t thread;
    int done;
} waiter;

struct sched_scheduler {
    const sched_config *cfg;
    kube_client *client, *leader_client;
    char *identity;
    void (*on_lost)(void *ud);
    void *ud;

    sched_metrics *metrics;
    int own_metrics;
    sched_core_metrics cm;
    kube_hub *hub;
    kube_informer *pod_inf, *node_inf;
    fw_parallelizer *par;
    fw_snapshot *snap;
    kube_recorder **recorders;   /* one per profile */
    fw_framework **fws;
    size_t n_fws;
    sched_queue *queue;
    sched_nominator *nominator;  /* built before the frameworks and the queue */
    sched_cache *cache;
    sched_event_ctx ev;
    fw_sched_state st;
    kube_leader *leader;

    pthread_mutex_t mu;          /* guards the flags' waits and the bind queue */
    pthread_cond_t cv;           /* leadership, stop */
    pthread_cond_t bind_cv;      /* bind jobs queued, stop */
    pthread_cond_t space_cv;     /* the pool's backlog shrank */
    pthread_cond_t idle_cv;      /* in_flight reached 0 */
    atomic_int active;           /* leading (or no election) */
    atomic_int stopping;
    int started, stopped;
    pthread_t sched_thread, house_thread;
    pthread_t *binders;
    size_t n_binders;
    bind_job *jobs_head, *jobs_tail;
    size_t in_flight;            /* jobs queued or running, waiters included */
    size_t pool_jobs;            /* jobs queued or running in the pool */
    waiter *waiters;             /* permit-waiting pods' threads */
    int binders_exit;

    atomic_uint_fast64_t n_attempts, n_scheduled, n_unschedulable, n_errors;
};

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

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h ? h : 1;
}

/* rand.Intn(100) < PLUGIN_METRICS_SAMPLE_PERCENT, per thread. */
static int sample_plugin_metrics(void)
{
    static __thread uint64_t x;

    if (!x)
        x = (uint64_t)kube_now_ns() | 1;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return (int)(x % 100) < PLUGIN_METRICS_SAMPLE_PERCENT;
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
/* The nominator's pod lister                                          */
/* ------------------------------------------------------------------ */

/* The nominator's pod lister: the pod exists and is not assigned. */
static int pod_pending(void *ud, const char *ns, const char *name)
{
    sched_scheduler *s = ud;
    kube_object *obj = kube_informer_get(s->pod_inf, ns, name);
    const kube_pod *pod = kube_pod_from(obj);
    int r = pod && !*pod->node_name;

    kube_object_unref(obj);
    return r;
}

/* ------------------------------------------------------------------ */
/* handleSchedulingFailure                                             */
/* ------------------------------------------------------------------ */

typedef struct failure {
    fw_code code;
    const char *msg;
    const char *const *plugins;  /* rejecting plugins (FitError) */
    size_t n_plugins;
    fw_nominating_mode mode;     /* NominatingInfo */
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
    rc = kube_api_patch_pod_status(s->client, pod->base.meta.namespace_, pod->base.meta.name,
                                   patch, &st);
    if (rc != KUBE_OK)
        KLOG_ERROR("error updating pod %s/%s: %s", pod->base.meta.namespace_,
                   pod->base.meta.name, st.message[0] ? st.message : kube_strerror(rc));
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
    kube_object *cached_obj = kube_informer_get(s->pod_inf, pi->namespace_, pi->name);
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
    kube_recorder_eventf(recorder_for(s, fw), &ref, NULL, KUBE_RECORDER_WARNING,
                         "FailedScheduling", "Scheduling", "%s", note);
    update_pod_status(s, pod, reason, f->msg, changed, status_changed, f);
    kube_object_unref(cached_obj);
    fw_pod_info_unref(pi);
}

/* A failure described by a status (non-FitError). */
static void fail_with_status(sched_scheduler *s, sched_queued_pod *qp, const fw_status *st,
                             int64_t start_ns)
{
    char *msg = fw_status_message_dup(st);
    failure f = {fw_status_code(st), msg ? msg : "out of memory", NULL, 0,
                 FW_NOMINATING_OVERRIDE, "", start_ns};

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
    failure f = {st->code, msg, plugin ? &plugin : NULL, plugin ? 1 : 0,
                 FW_NOMINATING_OVERRIDE, "", start_ns};
    handle_failure(s, qp, &f);
    free(msg);
    fw_diagnosis_clear(&d);
}

/* ------------------------------------------------------------------ */
/* Binding cycle                                                       */
/* ------------------------------------------------------------------ */

static void bind_done(sched_scheduler *s, bind_job *job)
{
    fw_cycle_state_free(job->cs);
    free(job);
    pthread_mutex_lock(&s->mu);
    if (--s->in_flight == 0)
        pthread_cond_broadcast(&s->idle_cv);
    pthread_mutex_unlock(&s->mu);
}

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
    sched_metric_observe(s->cm.pod_scheduling_attempts, NULL, attempts);
    if (qp->info.initial_attempt_ns)
        sched_metric_observe(s->cm.pod_scheduling_sli_duration, &label,
                             since_s(qp->info.initial_attempt_ns));
    atomic_fetch_add(&s->n_scheduled, 1);
}

/* bindingCycle: WaitOnPermit, PreBind, Bind (+FinishBinding), PostBind. */
static void binding_cycle(sched_scheduler *s, bind_job *job)
{
    sched_queued_pod *qp = job->qp;
    fw_framework *fw = qp->fw;
    fw_pod_info *pi = qp->info.pi;
    fw_status *st = fw_framework_wait_on_permit(fw, pi);

    if (fw_status_is_success(st))
        st = fw_framework_run_pre_bind(fw, job->cs, pi, job->node);
    if (fw_status_is_success(st)) {
        st = fw_framework_run_bind(fw, job->cs, pi, job->node);
        sched_cache_finish_binding(s->cache, pi);
        if (fw_status_is_skip(st)) {
            fw_status_free(st);
            st = fw_status_error(KUBE_EINVAL, "no bind plugin bound pod %s/%s", pi->namespace_,
                                 pi->name);
        }
    }
    if (!fw_status_is_success(st)) {
        KLOG_V(1, "failed to bind pod %s/%s", pi->namespace_, pi->name);
        binding_failed(s, job, st);
        fw_status_free(st);
        return;
    }
    bound(s, job);
    fw_framework_run_post_bind(fw, job->cs, pi, job->node);
    sched_queued_pod_free(qp);
}

static void *binder_main(void *arg)
{
    sched_scheduler *s = arg;

    pthread_setname_np(pthread_self(), "sched-bind");
    static const char *const op[] = {"binding"};

    pthread_mutex_lock(&s->mu);
    for (;;) {
        bind_job *job;
        while (!s->jobs_head && !s->binders_exit)
            pthread_cond_wait(&s->bind_cv, &s->mu);
        if (!s->jobs_head)
            break;
        job = s->jobs_head;
        s->jobs_head = job->next;
        if (!s->jobs_head)
            s->jobs_tail = NULL;
        pthread_mutex_unlock(&s->mu);
        sched_metric_add(s->cm.goroutines, op, 1);
        binding_cycle(s, job);
        sched_metric_add(s->cm.goroutines, op, -1);
        bind_done(s, job);
        pthread_mutex_lock(&s->mu);
        s->pool_jobs--;
        pthread_cond_signal(&s->space_cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Queues a job for the pool, waiting while its backlog is full. */
static void submit_bind(sched_scheduler *s, bind_job *job)
{
    size_t cap = s->n_binders * (1 + BIND_BACKLOG_PER_WORKER);

    pthread_mutex_lock(&s->mu);
    while (s->pool_jobs >= cap && !s->binders_exit)
        pthread_cond_wait(&s->space_cv, &s->mu);
    s->in_flight++;
    s->pool_jobs++;
    if (s->jobs_tail)
        s->jobs_tail->next = job;
    else
        s->jobs_head = job;
    s->jobs_tail = job;
    pthread_cond_signal(&s->bind_cv);
    pthread_mutex_unlock(&s->mu);
}

static void *waiter_main(void *arg)
{
    waiter *w = arg;

    pthread_setname_np(pthread_self(), "sched-permit");
    sched_scheduler *s = w->s;

    binding_cycle(s, w->job);
    bind_done(s, w->job);
    pthread_mutex_lock(&s->mu);
    w->done = 1;
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* A binding thread for a pod waiting on Permit; 0 when none could be
 * started (the caller then uses the pool). */
static int submit_waiting(sched_scheduler *s, bind_job *job)
{
    waiter *w = calloc(1, sizeof(*w));

    if (!w)
        return 0;
    w->s = s;
    w->job = job;
    pthread_mutex_lock(&s->mu);
    s->in_flight++;
    if (pthread_create(&w->thread, NULL, waiter_main, w) != 0) {
        s->in_flight--;
        pthread_mutex_unlock(&s->mu);
        free(w);
        return 0;
    }
    w->next = s->waiters;
    s->waiters = w;
    pthread_mutex_unlock(&s->mu);
    return 1;
}

/* Joins waiter threads that ended (all of them when all is set). */
static void reap_waiters(sched_scheduler *s, int all)
{
    waiter *done = NULL, **pp;

    pthread_mutex_lock(&s->mu);
    for (pp = &s->waiters; *pp;) {
        waiter *w = *pp;
        if (all || w->done) {
            *pp = w->next;
            w->next = done;
            done = w;
        } else {
            pp = &w->next;
        }
    }
    pthread_mutex_unlock(&s->mu);
    while (done) {
        waiter *w = done;
        done = w->next;
        pthread_join(w->thread, NULL);
        free(w);
    }
}

/* ------------------------------------------------------------------ */
/* Scheduling cycle                                                    */
/* ------------------------------------------------------------------ */

/* The pod could fit no node: PostFilter, then the FitError. */
static void no_fit(sched_scheduler *s, sched_queued_pod *qp, fw_cycle_state *cs,
                   fw_diagnosis *d, int64_t start_ns)
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
    failure f = {FW_UNSCHEDULABLE, msg ? msg : "out of memory",
                 (const char *const *)d->unschedulable_plugins, d->n_unschedulable_plugins,
                 pf.mode, pf.node, start_ns};
    handle_failure(s, qp, &f);
    free(msg);
}

/* Reserve and Permit after assume: 1 when the pod may bind, 2 when a
 * Permit plugin made it wait, 0 when it failed (handled). */
static int reserve_and_permit(sched_scheduler *s, sched_queued_pod *qp, fw_cycle_state *cs,
                              const char *host, int64_t start_ns)
{
    fw_framework *fw = qp->fw;
    fw_pod_info *pi = qp->info.pi;
    fw_status *st = fw_framework_run_reserve(fw, cs, pi, host);

    if (fw_status_is_success(st)) {
        st = fw_framework_run_permit(fw, cs, pi, host);
        if (fw_status_is_wait(st) || fw_status_is_success(st)) {
            int waits = fw_status_is_wait(st);
            fw_status_free(st);
            return waits ? 2 : 1;
        }
    }
    fw_framework_run_unreserve(fw, cs, pi, host);
    sched_cache_forget_pod(s->cache, pi, host);
    if (fw_status_is_unschedulable(st))
        fail_on_node(s, qp, st, host, start_ns);
    else
        fail_with_status(s, qp, st, start_ns);
    fw_status_free(st);
    return 0;
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

static void schedule_one(sched_scheduler *s, sched_queued_pod *qp)
{
    int64_t start = kube_now_ns();
    fw_cycle_state *cs;
    fw_diagnosis d = FW_DIAGNOSIS_INIT;
    fw_schedule_result res;
    fw_status *st = NULL;
    int rc, permitted;

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
    sched_metric_observe(s->cm.scheduling_algorithm_duration, NULL, since_s(start));
    rc = sched_cache_assume_pod(s->cache, qp->info.pi, res.suggested_host);
    if (rc != KUBE_OK) {
        st = fw_status_error(rc, "assuming pod %s/%s: %s", qp->info.pi->namespace_,
                             qp->info.pi->name, kube_strerror(rc));
        fail_with_status(s, qp, st, start);
        goto out;
    }
    permitted = reserve_and_permit(s, qp, cs, res.suggested_host, start);
    if (!permitted)
        goto out;
    bind_job *job = calloc(1, sizeof(*job));
    if (!job) {
        fw_framework_run_unreserve(qp->fw, cs, qp->info.pi, res.suggested_host);
        sched_cache_forget_pod(s->cache, qp->info.pi, res.suggested_host);
        st = fw_status_error(KUBE_ENOMEM, NULL);
        fail_with_status(s, qp, st, start);
        goto out;
    }
    job->qp = qp;
    job->cs = cs;
    job->start_ns = start;
    kube_strlcpy(job->node, res.suggested_host, sizeof(job->node));
    cs = NULL;
    if (permitted != 2 || !submit_waiting(s, job))
        submit_bind(s, job);
out:
    fw_status_free(st);
    fw_diagnosis_clear(&d);
    fw_cycle_state_free(cs);
}

static void wait_ms(sched_scheduler *s, long ms)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&s->mu);
    if (!atomic_load(&s->stopping))
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    pthread_mutex_unlock(&s->mu);
}

static void *sched_main(void *arg)
{
    sched_scheduler *s = arg;

    pthread_setname_np(pthread_self(), "sched-cycle");
    int synced = 0;

    while (!atomic_load(&s->stopping)) {
        sched_queued_pod *qp = NULL;
        int rc;
        if (!atomic_load(&s->active)) {
            wait_ms(s, POP_POLL_MS);
            continue;
        }
        if (!synced) {
            synced = kube_hub_wait_synced(s->hub, POP_POLL_MS) == KUBE_OK;
            continue;
        }
        rc = sched_queue_pop_timeout(s->queue, POP_POLL_MS, &qp);
        if (rc == KUBE_ECANCELED)
            break;
        if (rc != KUBE_OK)
            continue;
        if (!atomic_load(&s->active) || atomic_load(&s->stopping)) {
            sched_queue_add_unschedulable_if_not_present(s->queue, qp,
                                                         sched_queue_scheduling_cycle(s->queue));
            continue;
        }
        schedule_one(s, qp);
    }
    return NULL;
}

static void *house_main(void *arg)
{
    sched_scheduler *s = arg;

    pthread_setname_np(pthread_self(), "sched-house");

    while (!atomic_load(&s->stopping)) {
        sched_cache_cleanup_assumed(s->cache);
        reap_waiters(s, 0);
        /* hand back pages freed by queue entries, JSON parsing and old
         * object versions, so RSS follows what is live */
        malloc_trim(0);
        wait_ms(s, HOUSEKEEPING_MS);
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Leadership                                                          */
/* ------------------------------------------------------------------ */

static void set_active(sched_scheduler *s, int on)
{
    pthread_mutex_lock(&s->mu);
    atomic_store(&s->active, on);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void on_started_leading(void *ud)
{
    sched_scheduler *s = ud;

    KLOG_INFO("started leading: scheduling pods");
    set_active(s, 1);
}

static void on_stopped_leading(void *ud, int lost)
{
    sched_scheduler *s = ud;

    set_active(s, 0);
    if (!lost || atomic_load(&s->stopping)) {
        KLOG_INFO("requested to terminate, stopped leading");
        return;
    }
    KLOG_ERROR("leaderelection lost");
    if (s->on_lost)
        s->on_lost(s->ud);
}

static int leader_new(sched_scheduler *s)
{
    const sched_leader_election *le = &s->cfg->leader_election;
    kube_leader_config lc;
    kube_leader_callbacks cb = {on_started_leading, on_stopped_leading, NULL, s};

    kube_leader_config_default(&lc);
    lc.namespace_ = le->resource_namespace;
    lc.name = le->resource_name;
    lc.identity = s->identity;
    lc.lease_duration_ms = (long)le->lease_duration_ms;
    lc.renew_deadline_ms = (long)le->renew_deadline_ms;
    lc.retry_period_ms = (long)le->retry_period_ms;
    lc.release_on_cancel = 1;
    lc.recorder = s->n_fws ? s->recorders[0] : NULL;
    return kube_leader_new(s->leader_client, &lc, &cb, &s->leader);
}

/* fw_leadership for plugins: the elector's view (s->leader is built
 * after the frameworks, before anything can call this). */
static int leading(void *ud)
{
    sched_scheduler *s = ud;
    return s->leader && kube_leader_is_leader(s->leader);
}

/* ------------------------------------------------------------------ */
/* Construction                                                        */
/* ------------------------------------------------------------------ */

/* What every profile's plugins share; the recorder is set per profile. */
static fw_services shared_services(sched_scheduler *s)
{
    fw_services svc;

    memset(&svc, 0, sizeof(svc));
    svc.client = s->client;
    svc.hub = s->hub;
    svc.snapshot = s->snap;
    svc.parallelizer = s->par;
    svc.nominator = sched_nominator_view(s->nominator);
    svc.metrics = sched_core_metrics_hooks(&s->cm);
    if (s->cfg->leader_election.leader_elect)
        svc.leadership = (fw_leadership){leading, s};
    svc.metrics_registry = s->metrics;
    svc.events = sched_event_sink(&s->ev);
    return svc;
}

static int build_frameworks(sched_scheduler *s, const fw_registry *reg, char *err, size_t errlen)
{
    const sched_config *cfg = s->cfg;
    int rc = KUBE_OK;

    s->fws = calloc(cfg->n_profiles, sizeof(*s->fws));
    s->recorders = calloc(cfg->n_profiles, sizeof(*s->recorders));
    if (!s->fws || !s->recorders)
        return KUBE_ENOMEM;
    for (size_t i = 0; rc == KUBE_OK && i < cfg->n_profiles; i++) {
        const sched_profile *p = &cfg->profiles[i];
        kube_recorder_options ro;
        fw_services svc;
        kube_recorder_options_default(&ro);
        ro.reporting_controller = p->scheduler_name;
        rc = kube_recorder_new(s->client, &ro, &s->recorders[i]);
        if (rc != KUBE_OK) {
            snprintf(err, errlen, "profile \"%s\": event recorder: %s", p->scheduler_name,
                     kube_strerror(rc));
            break;
        }
        svc = shared_services(s);
        svc.recorder = s->recorders[i];
        rc = fw_framework_new(p, reg, &svc, &s->fws[i], err, errlen);
        s->n_fws = i + 1;
    }
    if (rc == KUBE_OK && s->n_fws == 0) {
        snprintf(err, errlen, "no profiles configured");
        rc = KUBE_EINVAL;
    }
    return rc;
}

static int build_queue_and_cache(sched_scheduler *s)
{
    sched_queue_options qo;
    sched_cache_options co = {0, NULL, NULL, &s->cm};
    int rc;

    memset(&qo, 0, sizeof(qo));
    qo.frameworks = s->fws;
    qo.n_frameworks = s->n_fws;
    qo.initial_backoff_ms = s->cfg->pod_initial_backoff_seconds * 1000;
    qo.max_backoff_ms = s->cfg->pod_max_backoff_seconds * 1000;
    qo.nominator = s->nominator;
    qo.metrics = &s->cm;
    rc = sched_queue_new(&qo, &s->queue);
    if (rc == KUBE_OK)
        rc = sched_cache_new(&co, &s->cache);
    return rc;
}

static int build_informers(sched_scheduler *s)
{
    kube_informer_options po, no;
    kube_informer_handlers ph, nh;
    int rc;

    s->ev.queue = s->queue;
    s->ev.cache = s->cache;
    s->ev.frameworks = s->fws;
    s->ev.n_frameworks = s->n_fws;
    ph = sched_pod_handlers(&s->ev);
    nh = sched_node_handlers(&s->ev);
    memset(&po, 0, sizeof(po));
    po.resource = &KUBE_RES_PODS;
    po.codec = &kube_pod_codec;
    po.field_selector = POD_SELECTOR;
    memset(&no, 0, sizeof(no));
    no.resource = &KUBE_RES_NODES;
    no.codec = &kube_node_codec;
    rc = kube_hub_add_informer(s->hub, &no, &nh, &s->node_inf);
    if (rc == KUBE_OK)
        rc = kube_hub_add_informer(s->hub, &po, &ph, &s->pod_inf);
    if (rc == KUBE_OK)
        rc = sched_volume_events_subscribe(&s->ev, s->hub);
    return rc;
}

static int build_basics(sched_scheduler *s, const sched_scheduler_options *o)
{
    int rc = KUBE_OK;

    s->metrics = o->metrics;
    if (!s->metrics) {
        rc = sched_metrics_new(&s->metrics);
        s->own_metrics = rc == KUBE_OK;
    }
    if (rc == KUBE_OK)
        rc = sched_core_metrics_register(s->metrics, &s->cm);
    if (rc == KUBE_OK)
        rc = kube_hub_new(s->client, &s->hub);
    if (rc == KUBE_OK)
        rc = fw_parallelizer_new(s->cfg->parallelism > 0 ? s->cfg->parallelism : 16, &s->par);
    if (rc == KUBE_OK) {
        s->snap = fw_snapshot_new();
        rc = s->snap ? KUBE_OK : KUBE_ENOMEM;
    }
    s->st.percentage_of_nodes_to_score = s->cfg->percentage_of_nodes_to_score;
    s->st.rng = (uint64_t)kube_now_ns() | 1;
    return rc;
}

static sched_scheduler *alloc_scheduler(const sched_scheduler_options *o)
{
    sched_scheduler *s = calloc(1, sizeof(*s));
    pthread_condattr_t ca;

    if (!s)
        return NULL;
    s->cfg = o->config;
    s->client = o->client;
    s->leader_client = o->leader_client;
    s->on_lost = o->on_leadership_lost;
    s->ud = o->ud;
    s->n_binders = o->binding_workers > 0 ? (size_t)o->binding_workers : DEFAULT_BINDING_WORKERS;
    s->identity = kube_strdup(o->identity);
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&s->bind_cv, NULL);
    pthread_cond_init(&s->space_cv, NULL);
    pthread_cond_init(&s->idle_cv, NULL);
    return s;
}

int sched_scheduler_new(const sched_scheduler_options *o, sched_scheduler **out, char *err,
                        size_t errlen)
{
    sched_scheduler *s;
    int rc;

    *out = NULL;
    if (errlen)
        err[0] = '\0';
    if (!o || !o->config || !o->client || o->config->n_profiles == 0) {
        snprintf(err, errlen, "a configuration with profiles and a client are required");
        return KUBE_EINVAL;
    }
    if (o->config->leader_election.leader_elect && !o->leader_client) {
        snprintf(err, errlen, "leader election needs a leader client");
        return KUBE_EINVAL;
    }
    s = alloc_scheduler(o);
    if (!s)
        return KUBE_ENOMEM;
    rc = build_basics(s, o);
    if (rc == KUBE_OK)
        rc = sched_nominator_new(pod_pending, s, &s->nominator);
    if (rc == KUBE_OK)
        rc = build_frameworks(s, o->registry ? o->registry : fw_registry_default(), err, errlen);
    if (rc == KUBE_OK)
        rc = build_queue_and_cache(s);
    if (rc == KUBE_OK)
        rc = build_informers(s);
    if (rc == KUBE_OK && s->cfg->leader_election.leader_elect)
        rc = leader_new(s);
    if (rc != KUBE_OK) {
        if (errlen && !err[0])
            snprintf(err, errlen, "building the scheduler: %s", kube_strerror(rc));
        sched_scheduler_free(s);
        return rc;
    }
    *out = s;
    return KUBE_OK;
}

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */
/* ------------------------------------------------------------------ */

static int start_binders(sched_scheduler *s)
{
    s->binders = calloc(s->n_binders, sizeof(*s->binders));
    if (!s->binders)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < s->n_binders; i++) {
        if (pthread_create(&s->binders[i], NULL, binder_main, s) != 0) {
            s->n_binders = i;
            return KUBE_ENOMEM;
        }
    }
    return KUBE_OK;
}

int sched_scheduler_start(sched_scheduler *s)
{
    int rc;

    if (s->started)
        return KUBE_EINVAL;
    s->started = 1;
    rc = kube_hub_start(s->hub);
    if (rc == KUBE_OK)
        rc = sched_queue_run(s->queue);
    if (rc == KUBE_OK)
        rc = start_binders(s);
    if (rc == KUBE_OK && pthread_create(&s->house_thread, NULL, house_main, s) != 0)
        rc = KUBE_ENOMEM;
    if (rc == KUBE_OK && pthread_create(&s->sched_thread, NULL, sched_main, s) != 0) {
        atomic_store(&s->stopping, 1);
        pthread_join(s->house_thread, NULL);
        rc = KUBE_ENOMEM;
    }
    if (rc != KUBE_OK) {
        s->stopped = 1;
        atomic_store(&s->stopping, 1);
        return rc;
    }
    if (s->leader)
        return kube_leader_start(s->leader);
    set_active(s, 1);
    return KUBE_OK;
}

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
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        char **a = realloc(l->uids, cap * sizeof(*a));
        if (!a)
            return;
        l->uids = a;
        l->cap = cap;
    }
    l->uids[l->n] = strdup(pod->uid);
    if (l->uids[l->n])
        l->n++;
}

/* Rejects every pod waiting on Permit, so their binding threads end. */
static void reject_waiting(sched_scheduler *s)
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

/* Waits for the bind jobs, at most timeout_ms; 1 when none is left. */
static int wait_binds(sched_scheduler *s, long timeout_ms)
{
    struct timespec ts;
    int idle;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&s->mu);
    while (s->in_flight > 0 && pthread_cond_timedwait(&s->idle_cv, &s->mu, &ts) != ETIMEDOUT)
        ;
    idle = s->in_flight == 0;
    pthread_mutex_unlock(&s->mu);
    return idle;
}

static void stop_binders(sched_scheduler *s, long timeout_ms)
{
    if (!wait_binds(s, timeout_ms > 0 ? timeout_ms : 0)) {
        KLOG_WARN("binding still in flight after %ld ms; rejecting pods waiting on permit",
                  timeout_ms);
        reject_waiting(s);
    }
    pthread_mutex_lock(&s->mu);
    s->binders_exit = 1;
    pthread_cond_broadcast(&s->bind_cv);
    pthread_cond_broadcast(&s->space_cv);
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; i < s->n_binders; i++)
        pthread_join(s->binders[i], NULL);
    s->n_binders = 0;
    reap_waiters(s, 1);
}

void sched_scheduler_stop(sched_scheduler *s, long timeout_ms)
{
    if (!s->started || s->stopped) {
        s->stopped = 1;
        return;
    }
    s->stopped = 1;
    pthread_mutex_lock(&s->mu);
    atomic_store(&s->stopping, 1);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    sched_queue_close(s->queue);
    pthread_join(s->sched_thread, NULL);
    stop_binders(s, timeout_ms);
    pthread_join(s->house_thread, NULL);
    kube_leader_stop(s->leader);
    for (size_t i = 0; i < s->n_fws; i++)
        kube_recorder_stop(s->recorders[i], EVENT_STOP_DEADLINE_MS);
    kube_hub_stop(s->hub);
    KLOG_INFO("scheduler stopped");
}

void sched_scheduler_free(sched_scheduler *s)
{
    if (!s)
        return;
    if (s->started && !s->stopped)
        sched_scheduler_stop(s, 0);
    kube_hub_stop(s->hub);
    sched_volume_events_unsubscribe(&s->ev, s->hub);
    sched_queue_free(s->queue);
    for (size_t i = 0; i < s->n_fws; i++)
        fw_framework_free(s->fws[i]);
    sched_nominator_free(s->nominator); /* after the frameworks, which use it */
    kube_leader_free(s->leader); /* after the plugins, which may ask it */
    kube_hub_free(s->hub);
    sched_cache_free(s->cache);
    fw_snapshot_free(s->snap);
    fw_parallelizer_free(s->par);
    for (size_t i = 0; s->recorders && i < s->cfg->n_profiles; i++)
        kube_recorder_free(s->recorders[i]);
    free(s->recorders);
    free(s->fws);
    free(s->binders);
    if (s->own_metrics)
        sched_metrics_free(s->metrics);
    free(s->identity);
    pthread_cond_destroy(&s->idle_cv);
    pthread_cond_destroy(&s->space_cv);
    pthread_cond_destroy(&s->bind_cv);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* ------------------------------------------------------------------ */
/* Getters                                                             */
/* ------------------------------------------------------------------ */

int sched_scheduler_synced(sched_scheduler *s)
{
    return kube_informer_has_synced(s->pod_inf) && kube_informer_has_synced(s->node_inf);
}

int sched_scheduler_wait_synced(sched_scheduler *s, long timeout_ms)
{
    return kube_hub_wait_synced(s->hub, timeout_ms);
}

int sched_scheduler_active(sched_scheduler *s)
{
    return atomic_load(&s->active) && !atomic_load(&s->stopping);
}

sched_metrics *sched_scheduler_metrics(sched_scheduler *s)
{
    return s->metrics;
}

void sched_scheduler_stats_get(sched_scheduler *s, sched_scheduler_stats *out)
{
    memset(out, 0, sizeof(*out));
    out->attempts = atomic_load(&s->n_attempts);
    out->scheduled = atomic_load(&s->n_scheduled);
    out->unschedulable = atomic_load(&s->n_unschedulable);
    out->errors = atomic_load(&s->n_errors);
    pthread_mutex_lock(&s->mu);
    out->binding_in_flight = s->in_flight;
    pthread_mutex_unlock(&s->mu);
    sched_queue_get_counts(s->queue, &out->queue);
    sched_cache_get_counts(s->cache, &out->cache);
}
