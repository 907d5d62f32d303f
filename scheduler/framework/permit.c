/*
 * scheduler/framework/permit.c - Permit and waiting pods (kube-scheduler's
 * waitingPod / waitingPodsMap): a pod that a Permit plugin asked to wait
 * blocks in fw_framework_wait_on_permit() until every such plugin allows
 * it, one rejects it, or a plugin's timeout passes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "framework/internal.h"
#include "kube/util/buf.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "framework/framework_testing.h"

typedef struct pending_plugin {
    const char *plugin; /* static name */
    int64_t timeout_ms;
    int64_t deadline_ms; /* kube_now_ms() based */
} pending_plugin;

typedef struct waiting_pod {
    fw_pod_info *pi; /* reference */
    pending_plugin *pending;
    size_t n_pending;
    int done;
    fw_status *result; /* NULL = allowed */
    pthread_cond_t cv; /* CLOCK_MONOTONIC, signalled on done */
} waiting_pod;

static void waiting_pod_free(waiting_pod *wp)
{
    if (!wp)
        return;
    pthread_cond_destroy(&wp->cv);
    fw_status_free(wp->result);
    fw_pod_info_unref(wp->pi);
    free(wp->pending);
    free(wp);
}

static waiting_pod *waiting_pod_new(const fw_pod_info *pod, const pending_plugin *pending, size_t n)
{
    waiting_pod *wp = calloc(1, sizeof(*wp));
    if (!wp)
        return NULL;
    wp->pending = calloc(n ? n : 1, sizeof(*wp->pending));
    if (!wp->pending) {
        free(wp);
        return NULL;
    }
    memcpy(wp->pending, pending, n * sizeof(*pending));
    wp->n_pending = n;
    wp->pi = fw_pod_info_ref((fw_pod_info *)pod);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&wp->cv, &attr);
    pthread_condattr_destroy(&attr);
    return wp;
}

/* Under fw->wmu. */
static void wp_reject(waiting_pod *wp, const char *plugin, const char *msg)
{
    if (wp->done)
        return;
    wp->done = 1;
    wp->result = fw_status_new(FW_UNSCHEDULABLE, msg);
    fw_status_set_plugin(wp->result, plugin);
    pthread_cond_broadcast(&wp->cv);
}

/* Under fw->wmu. */
static void wp_allow(waiting_pod *wp, const char *plugin)
{
    for (size_t i = 0; i < wp->n_pending; i++) {
        if (strcmp(wp->pending[i].plugin, plugin) == 0) {
            wp->pending[i] = wp->pending[--wp->n_pending];
            break;
        }
    }
    if (wp->n_pending == 0 && !wp->done) {
        wp->done = 1;
        pthread_cond_broadcast(&wp->cv);
    }
}

static void run_permit_plugin(fw_framework *fw, const fw_inst *in, fw_cycle_state *cs,
                              const fw_pod_info *pod, const char *node, fw_status **st,
                              int64_t *timeout_ms)
{
    int64_t tp = fw_cycle_state_record_plugin_metrics(cs) ? kube_now_ns() : 0;
    *timeout_ms = 0;
    *st = in->desc->permit(in->self, cs, pod, node, timeout_ms);
    if (tp)
        fw__observe_plugin(fw, cs, in->desc->name, "Permit", *st, tp);
}

static fw_status *add_waiting(fw_framework *fw, const fw_pod_info *pod,
                              const pending_plugin *pending, size_t n)
{
    waiting_pod *wp = waiting_pod_new(pod, pending, n);
    if (!wp)
        return fw_status_error(KUBE_ENOMEM, NULL);
    pthread_mutex_lock(&fw->wmu);
    void *old = NULL;
    int rc = kube_strmap_put(&fw->waiting, pod->uid, wp, &old);
    pthread_mutex_unlock(&fw->wmu);
    waiting_pod_free(old);
    if (rc != KUBE_OK) {
        waiting_pod_free(wp);
        return fw_status_error(rc, NULL);
    }
    KLOG_V(4, "One or more plugins asked to wait and no plugin rejected pod pod=\"%s/%s\"",
           pod->namespace_, pod->name);
    return fw_status_newf(
        FW_WAIT, "one or more plugins asked to wait and no plugin rejected pod \"%s\"", pod->name);
}

fw_status *fw_framework_run_permit(fw_framework *fw, fw_cycle_state *cs, const fw_pod_info *pod,
                                   const char *node)
{
    int64_t t0 = kube_now_ns();
    size_t np = fw->n_pt[FW_PT_PERMIT], n_wait = 0;
    pending_plugin *pending = calloc(np ? np : 1, sizeof(*pending));
    fw_status *st = pending ? NULL : fw_status_error(KUBE_ENOMEM, NULL);
    for (size_t i = 0; i < np && !st; i++) {
        const fw_inst *in = fw->pt[FW_PT_PERMIT][i];
        fw_status *s;
        int64_t timeout;
        run_permit_plugin(fw, in, cs, pod, node, &s, &timeout);
        if (fw_status_is_success(s)) {
            fw_status_free(s);
        } else if (fw_status_is_unschedulable(s)) {
            KLOG_V(4, "Pod rejected by plugin pod=\"%s/%s\" plugin=\"%s\"", pod->namespace_,
                   pod->name, in->desc->name);
            fw_status_set_plugin(s, in->desc->name);
            st = s;
        } else if (fw_status_is_wait(s)) {
            fw_status_free(s);
            if (timeout > FW_PERMIT_MAX_TIMEOUT_MS)
                timeout = FW_PERMIT_MAX_TIMEOUT_MS;
            pending[n_wait++] = (pending_plugin){in->desc->name, timeout, kube_now_ms() + timeout};
        } else {
            KLOG_ERROR("Plugin failed plugin=\"%s\" pod=\"%s/%s\"", in->desc->name, pod->namespace_,
                       pod->name);
            fw_status *w = fw__wrap_error(s, "running Permit plugin \"%s\"", in->desc->name);
            fw_status_set_plugin(w, in->desc->name);
            st = w;
        }
    }
    if (!st && n_wait)
        st = add_waiting(fw, pod, pending, n_wait);
    free(pending);
    fw__observe_point(fw, "Permit", st, t0);
    return st;
}

static struct timespec abs_monotonic(int64_t deadline_ms)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t wait = deadline_ms - kube_now_ms();
    if (wait < 0)
        wait = 0;
    int64_t ns = now.tv_nsec + (wait % 1000) * 1000000;
    struct timespec ts = {now.tv_sec + wait / 1000 + ns / 1000000000, ns % 1000000000};
    return ts;
}

/* Under fw->wmu: rejects the pod for the first plugin whose deadline has
 * passed, or returns the earliest deadline still ahead. */
static int64_t check_timeouts(waiting_pod *wp)
{
    int64_t now = kube_now_ms(), earliest = INT64_MAX;
    for (size_t i = 0; i < wp->n_pending; i++) {
        const pending_plugin *p = &wp->pending[i];
        if (p->deadline_ms <= now) {
            char dur[32], msg[256];
            kube_duration_format(p->timeout_ms, dur, sizeof(dur));
            snprintf(msg, sizeof(msg), "rejected due to timeout after waiting %s at plugin %s", dur,
                     p->plugin);
            wp_reject(wp, p->plugin, msg);
            return 0;
        }
        if (p->deadline_ms < earliest)
            earliest = p->deadline_ms;
    }
    return earliest;
}

fw_status *fw_framework_wait_on_permit(fw_framework *fw, const fw_pod_info *pod)
{
    pthread_mutex_lock(&fw->wmu);
    waiting_pod *wp = kube_strmap_get(&fw->waiting, pod->uid);
    if (!wp) {
        pthread_mutex_unlock(&fw->wmu);
        return NULL;
    }
    KLOG_V(4, "Pod waiting on permit pod=\"%s/%s\"", pod->namespace_, pod->name);
    int64_t t0 = kube_now_ns();
    while (!wp->done) {
        int64_t deadline = check_timeouts(wp);
        if (wp->done)
            break;
        struct timespec ts = abs_monotonic(deadline);
        pthread_cond_timedwait(&wp->cv, &fw->wmu, &ts);
    }
    kube_strmap_del(&fw->waiting, pod->uid);
    pthread_mutex_unlock(&fw->wmu);
    fw_status *st = wp->result;
    wp->result = NULL;
    waiting_pod_free(wp);
    const fw_metrics_hooks *m = &fw->handle.svc.metrics;
    if (m->permit_wait)
        m->permit_wait(m->ud, fw_code_string(fw_status_code(st)),
                       (double)(kube_now_ns() - t0) / 1e9);
    if (st && !fw_status_is_unschedulable(st)) {
        const char *plugin = st->plugin;
        fw_status *w = fw_status_newf(FW_ERROR, "waiting on permit for pod: %s",
                                      st->n_reasons ? st->reasons[0] : "");
        fw_status_set_plugin(w, plugin);
        fw_status_free(st);
        st = w;
    } else if (st) {
        KLOG_V(4, "Pod rejected while waiting on permit pod=\"%s/%s\"", pod->namespace_, pod->name);
    }
    return st;
}

int fw_framework_allow_waiting_pod(fw_framework *fw, const char *uid, const char *plugin)
{
    pthread_mutex_lock(&fw->wmu);
    waiting_pod *wp = kube_strmap_get(&fw->waiting, uid);
    if (wp)
        wp_allow(wp, plugin);
    pthread_mutex_unlock(&fw->wmu);
    return wp != NULL;
}

int fw_framework_reject_waiting_pod(fw_framework *fw, const char *uid, const char *plugin,
                                    const char *msg)
{
    pthread_mutex_lock(&fw->wmu);
    waiting_pod *wp = kube_strmap_get(&fw->waiting, uid);
    if (wp)
        wp_reject(wp, plugin, msg ? msg : "removed");
    pthread_mutex_unlock(&fw->wmu);
    return wp != NULL;
}

typedef struct iter_ctx {
    void (*fn)(void *ud, const fw_pod_info *pod, const char *const *pending, size_t n_pending);
    void *ud;
} iter_ctx;

static void iter_one(void *ud, const char *key, void *value)
{
    iter_ctx *c = ud;
    waiting_pod *wp = value;
    const char *names[FW_PT_COUNT * 4];
    size_t n = 0;
    (void)key;
    for (size_t i = 0; i < wp->n_pending && n < sizeof(names) / sizeof(names[0]); i++)
        names[n++] = wp->pending[i].plugin;
    c->fn(c->ud, wp->pi, names, n);
}

void fw_framework_foreach_waiting_pod(fw_framework *fw,
                                      void (*fn)(void *ud, const fw_pod_info *pod,
                                                 const char *const *pending, size_t n_pending),
                                      void *ud)
{
    iter_ctx c = {fn, ud};
    pthread_mutex_lock(&fw->wmu);
    kube_strmap_foreach(&fw->waiting, iter_one, &c);
    pthread_mutex_unlock(&fw->wmu);
}

static void free_one(void *ud, const char *key, void *value)
{
    (void)ud;
    (void)key;
    waiting_pod_free(value);
}

void fw__free_waiting(fw_framework *fw)
{
    pthread_mutex_lock(&fw->wmu);
    kube_strmap_foreach(&fw->waiting, free_one, NULL);
    kube_strmap_free(&fw->waiting);
    pthread_mutex_unlock(&fw->wmu);
}
