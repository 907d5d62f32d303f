/*
 * scheduler/scheduler.c - the scheduler (scheduler.h): construction of
 * every part (nominator, frameworks, queue, cache, informers, elector),
 * start and stop, leadership and housekeeping. The scheduling and binding
 * cycles are schedule_one.c; the binding pipeline binders.c, an object of
 * its own (s->binders).
 */
#include "scheduler_int.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eventhandlers.h"
#include "pins/launcher_index.h"
#include "kube/util/clock.h"
#include "kube/transport/api.h"
#include "kube/util/buf.h"
#include "kube/util/array.h"
#include "kube/util/errors.h"
#include "kube/machinery/factory.h"
#include "kube/machinery/leader.h"
#include "kube/util/log.h"
#include "kube/types/pod.h"
#include "kube/machinery/recorder.h"
#include "plugins/registry.h"

/* ------------------------------------------------------------------ */
/* The nominator's pod lister                                          */
/* ------------------------------------------------------------------ */

/* The nominator's pod lister: the pod exists and is not assigned. */
static int pod_pending(void *ud, const char *ns, const char *name)
{
    sched_scheduler *s = ud;
    kube_object *obj = kube_lister_get(s->pods, ns, name);
    const kube_pod *pod = kube_pod_from(obj);
    int r = pod && !*pod->node_name;

    kube_object_unref(obj);
    return r;
}

static void *house_main(void *arg)
{
    sched_scheduler *s = arg;

    pthread_setname_np(pthread_self(), "sched-house");

    while (!atomic_load(&s->stopping)) {
        sched_cache_cleanup_assumed(s->cache);
        sched_binders_reap(s->binders, 0);
        /* hand back pages freed by queue entries, JSON parsing and old
         * object versions, so RSS follows what is live */
        malloc_trim(0);
        sched_wait_ms(s, HOUSEKEEPING_MS);
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
    kube_client_shutdown(s->leader_client); /* the elector is done: nothing of it holds the exit */
    if (s->on_lost)
        s->on_lost(s->ud);
}

static int leader_new(sched_scheduler *s)
{
    const sched_leader_election *le = &s->cfg->leader_election;
    kube_leader_config lc;
    kube_leader_callbacks cb = {on_started_leading, on_stopped_leading, NULL, s, sched_fence};
    kube_recorder_options ro;
    int rc;

    kube_recorder_options_default(&ro); /* kube-scheduler's: the first profile's name */
    ro.reporting_controller = s->cfg->profiles[0].scheduler_name;
    ro.metrics = s->metrics;
    if ((rc = kube_recorder_new(s->leader_client, &ro, &s->leader_recorder)) != KUBE_OK)
        return rc;
    kube_leader_config_default(&lc);
    lc.namespace_ = le->resource_namespace;
    lc.name = le->resource_name;
    lc.identity = s->identity;
    lc.lease_duration_ms = (long)le->lease_duration_ms;
    lc.renew_deadline_ms = (long)le->renew_deadline_ms;
    lc.retry_period_ms = (long)le->retry_period_ms;
    lc.release_on_cancel = 1;
    lc.recorder = s->leader_recorder; /* the fence shuts s->client down before "stopped leading" */
    return kube_leader_new(s->leader_client, &lc, &cb, &s->leader);
}

/* fw_leadership for plugins: the elector's view (s->leader is built
 * after the frameworks, before anything can call this). */
static int leading(void *ud)
{
    sched_scheduler *s = ud;
    return s->leader && kube_leader_is_leader(s->leader);
}

/* StickyVM's hand-off (plugin_factory_args.pins): the pin controller
 * (built after the frameworks, before anything can call this). */
static void pins_enqueue(void *ud, const char *ns, const char *name)
{
    sched_scheduler *s = ud;
    if (s->pins)
        sched_pins_enqueue(s->pins, ns, name);
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
    svc.informers = s->informers;
    svc.snapshot = s->snap;
    svc.parallelizer = s->par;
    svc.nominator = sched_nominator_view(s->nominator);
    svc.metrics = sched_core_metrics_hooks(&s->cm);
    if (s->cfg->leader_election.leader_elect)
        svc.leadership = (fw_leadership){leading, s};
    svc.metrics_registry = s->metrics;
    svc.extenders = sched_extenders_view(s->extenders);
    return svc;
}

static int build_frameworks(sched_scheduler *s, const fw_registry *base, char *err, size_t errlen)
{
    const sched_config *cfg = s->cfg;
    const fw_registry *reg = &s->registry.reg;
    int rc;

    s->factory_args.pins = (plugin_pin_handoff){pins_enqueue, s};
    if ((rc = plugin_registry_with_args(base, &s->factory_args, &s->registry)) != KUBE_OK) {
        snprintf(err, errlen, "the plugin registry holds more than %d plugins",
                 PLUGIN_REGISTRY_MAX);
        return rc;
    }

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
        ro.metrics = s->metrics;
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
    qo.max_in_unschedulable_ms = s->max_in_unschedulable_ms;
    rc = sched_queue_new(&qo, &s->queue);
    if (rc == KUBE_OK)
        rc = sched_cache_new(&co, &s->cache);
    return rc;
}

/* addAllEventHandlers on the factory the plugins already asked for their
 * listers. */
static int build_informers(sched_scheduler *s)
{
    s->ev.queue = s->queue;
    s->ev.cache = s->cache;
    s->ev.frameworks = s->fws;
    s->ev.n_frameworks = s->n_fws;
    int rc = sched_add_all_event_handlers(&s->ev, s->informers, &s->pods, &s->nodes);

    s->debugger =
        (sched_cache_debugger){s->cache, s->queue, s->nodes, s->pods, s->fws, s->n_fws, NULL};
    return rc;
}

/* The recorder of the profile named name (the first one's otherwise). */
static kube_recorder *recorder_of(sched_scheduler *s, const char *name)
{
    for (size_t i = 0; i < s->n_fws; i++)
        if (strcmp(s->cfg->profiles[i].scheduler_name, name) == 0)
            return s->recorders[i];
    return s->recorders[0];
}

/* The pin controller, ONE per scheduler, when any profile enables
 * StickyVM, with the pin key of their args. */
static int build_pins(sched_scheduler *s, char *err, size_t errlen)
{
    const char **names = calloc(s->n_fws, sizeof(*names));
    sched_pins_profile_set ps = {.names = names};
    if (!names)
        return KUBE_ENOMEM;
    int rc = sched_pins_profiles(s->cfg, s->fws, s->n_fws, &ps, err, errlen);
    if (rc == KUBE_OK && ps.key) {
        sched_pins_options o = {.client = s->client,
                                .informers = s->informers,
                                .pods = s->pods,
                                .recorder = recorder_of(s, names[0]),
                                .key = ps.key,
                                .scheduler_names = names,
                                .n_scheduler_names = ps.n_names,
                                .node_loss_grace_ms = ps.node_loss_grace_ms,
                                .registry = s->metrics};
        if (s->cfg->leader_election.leader_elect)
            o.leadership = (fw_leadership){leading, s};
        /* the pin controller finds a VMI's launcher pods by this index */
        rc = sched_pins_launcher_index_add(s->pods);
        if (rc == KUBE_OK)
            rc = sched_pins_new(&o, &s->pins);
    }
    free(names);
    return rc;
}

/* The cache debugger on SIGUSR2 (as kube-scheduler's ListenForSignal);
 * a scheduler without it still runs. */
static void debugger_listen(sched_scheduler *s)
{
    int rc = sched_cache_debugger_listen(&s->debugger);

    if (rc == KUBE_OK)
        s->debugger_listening = 1;
    else
        KLOG_ERROR("cache debugger: cannot listen for SIGUSR2: %s", kube_strerror(rc));
}

/* The pipeline's ops: the binding cycle and dropping a pod, on the
 * scheduler (ud). */
static void binders_run(void *ud, bind_job *job)
{
    sched_binding_cycle(ud, job);
}

static void binders_drop(void *ud, bind_job *job)
{
    sched_binding_drop(ud, job);
}

static void binders_reject_waiting(void *ud)
{
    sched_reject_waiting(ud);
}

/* The binding pipeline, o->binding_workers threads (or the default). */
static int build_binders(sched_scheduler *s, const sched_scheduler_options *o)
{
    sched_binders_ops ops = {binders_run, binders_drop, binders_reject_waiting, s,
                             s->cm.goroutines};
    size_t n = o->binding_workers > 0 ? (size_t)o->binding_workers : DEFAULT_BINDING_WORKERS;

    return sched_binders_new(n, &ops, &s->binders);
}

static int build_basics(sched_scheduler *s, const sched_scheduler_options *o)
{
    int rc = KUBE_OK;

    s->metrics = o->metrics;
    if (!s->metrics) {
        rc = kube_metrics_new(&s->metrics);
        s->own_metrics = rc == KUBE_OK;
    }
    if (rc == KUBE_OK)
        rc = sched_core_metrics_register(s->metrics, &s->cm);
    if (rc == KUBE_OK)
        rc = build_binders(s, o);
    if (rc == KUBE_OK)
        rc = kube_factory_new(s->client, &s->informers);
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
    s->identity = kube_strdup(o->identity);
    s->max_in_unschedulable_ms = o->pod_max_in_unschedulable_ms;
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&s->cycle_cv, NULL); /* the fence's deadlines are CLOCK_REALTIME */
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
        rc = sched_extenders_new(s->cfg, s->client, s->snap, &s->extenders, err, errlen);
    if (rc == KUBE_OK)
        rc = sched_nominator_new(pod_pending, s, &s->nominator);
    if (rc == KUBE_OK)
        rc =
            build_frameworks(s, o->registry ? o->registry : plugin_registry_in_tree(), err, errlen);
    if (rc == KUBE_OK)
        rc = build_queue_and_cache(s);
    if (rc == KUBE_OK)
        rc = build_informers(s);
    if (rc == KUBE_OK)
        rc = build_pins(s, err, errlen);
    if (rc == KUBE_OK && s->cfg->leader_election.leader_elect)
        rc = leader_new(s);
    if (rc == KUBE_OK && s->leader) {
        kube_client_set_fence(s->client, sched_fence_check, s);
        sched_extenders_set_fence(s->extenders, sched_fence_check, s);
    }
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

int sched_scheduler_start(sched_scheduler *s)
{
    int rc;

    if (s->started)
        return KUBE_EINVAL;
    s->started = 1;
    rc = kube_factory_start(s->informers);
    if (rc == KUBE_OK && s->pins)
        rc = sched_pins_start(s->pins);
    if (rc == KUBE_OK)
        rc = sched_queue_run(s->queue);
    if (rc == KUBE_OK)
        rc = sched_binders_start(s->binders);
    if (rc == KUBE_OK && pthread_create(&s->house_thread, NULL, house_main, s) != 0)
        rc = KUBE_ENOMEM;
    if (rc == KUBE_OK && pthread_create(&s->sched_thread, NULL, sched_cycle_main, s) != 0) {
        atomic_store(&s->stopping, 1);
        pthread_join(s->house_thread, NULL);
        rc = KUBE_ENOMEM;
    }
    if (rc != KUBE_OK) {
        s->stopped = 1;
        atomic_store(&s->stopping, 1);
        sched_binders_stop(s->binders, 0); /* joins the pool threads that started */
        return rc;
    }
    debugger_listen(s);
    if (s->leader)
        return kube_leader_start(s->leader);
    set_active(s, 1);
    return KUBE_OK;
}

void sched_scheduler_stop(sched_scheduler *s, long timeout_ms)
{
    if (!s->started || s->stopped) {
        s->stopped = 1;
        return;
    }
    s->stopped = 1;
    if (s->debugger_listening)
        sched_cache_debugger_unlisten(&s->debugger);
    pthread_mutex_lock(&s->mu);
    atomic_store(&s->stopping, 1);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    sched_queue_close(s->queue);
    pthread_join(s->sched_thread, NULL);
    sched_binders_stop(s->binders, timeout_ms);
    pthread_join(s->house_thread, NULL);
    sched_pins_stop(s->pins);
    kube_leader_stop(s->leader);
    if (s->leader_recorder)
        kube_recorder_stop(s->leader_recorder, EVENT_STOP_DEADLINE_MS);
    for (size_t i = 0; i < s->n_fws; i++)
        kube_recorder_stop(s->recorders[i], EVENT_STOP_DEADLINE_MS);
    kube_factory_stop(s->informers);
    KLOG_INFO("scheduler stopped");
}

void sched_scheduler_free(sched_scheduler *s)
{
    if (!s)
        return;
    if (s->started && !s->stopped)
        sched_scheduler_stop(s, 0);
    kube_factory_stop(s->informers);
    sched_pins_free(s->pins); /* its handlers are the factory's: stopped above */
    if (s->leader)            /* the client is borrowed: it outlives the fence's ud */
        kube_client_set_fence(s->client, NULL, NULL);
    sched_queue_free(s->queue);
    for (size_t i = 0; i < s->n_fws; i++)
        fw_framework_free(s->fws[i]);
    sched_nominator_free(s->nominator); /* after the frameworks, which use it */
    sched_extenders_free(s->extenders);
    kube_leader_free(s->leader); /* after the plugins, which may ask it */
    kube_recorder_free(s->leader_recorder);
    kube_factory_free(s->informers);
    sched_cache_free(s->cache);
    fw_snapshot_free(s->snap);
    fw_parallelizer_free(s->par);
    for (size_t i = 0; s->recorders && i < s->cfg->n_profiles; i++)
        kube_recorder_free(s->recorders[i]);
    free(s->recorders);
    free(s->fws);
    sched_binders_free(s->binders);
    if (s->own_metrics)
        kube_metrics_free(s->metrics);
    free(s->identity);
    pthread_cond_destroy(&s->cycle_cv);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* ------------------------------------------------------------------ */
/* Getters                                                             */
/* ------------------------------------------------------------------ */

int sched_scheduler_synced(sched_scheduler *s)
{
    return kube_lister_has_synced(s->pods) && kube_lister_has_synced(s->nodes);
}

int sched_scheduler_wait_synced(sched_scheduler *s, long timeout_ms)
{
    return kube_factory_wait_synced(s->informers, timeout_ms);
}

int sched_scheduler_active(sched_scheduler *s)
{
    return atomic_load(&s->active) && !atomic_load(&s->stopping);
}

kube_metrics *sched_scheduler_metrics(sched_scheduler *s)
{
    return s->metrics;
}

struct sched_pins *sched_scheduler_pins(sched_scheduler *s)
{
    return s->pins;
}

void sched_scheduler_stats_get(sched_scheduler *s, sched_scheduler_stats *out)
{
    memset(out, 0, sizeof(*out));
    out->attempts = atomic_load(&s->n_attempts);
    out->scheduled = atomic_load(&s->n_scheduled);
    out->unschedulable = atomic_load(&s->n_unschedulable);
    out->errors = atomic_load(&s->n_errors);
    out->binding_in_flight = s->binders ? sched_binders_in_flight(s->binders) : 0;
    sched_queue_get_counts(s->queue, &out->queue);
    sched_cache_get_counts(s->cache, &out->cache);
}

kube_leader *sched_scheduler_leader(sched_scheduler *s)
{
    return s->leader;
}

struct kube_factory *sched_scheduler_informers(sched_scheduler *s)
{
    return s->informers;
}

void sched_scheduler_foreach_pod(sched_scheduler *s, void (*fn)(void *ud, kube_object *obj),
                                 void *ud)
{
    if (s->pods)
        kube_lister_foreach(s->pods, fn, ud);
}
