/*
 * kube/machinery/recorder.c - the events.k8s.io/v1 recorder (see recorder.h).
 *
 * Callers only append to the queue under the mutex. The sender thread owns
 * the aggregation cache: it takes the queued events, folds each into the
 * cache, performs the writes the cache asks for (creates as many at once
 * as the window of kube/machinery/recorder_send.c allows, without waiting
 * for each; a series PATCH after its event's create), then the due
 * heartbeats and final counts, and sleeps on the condition variable until
 * the next event, an ended create, or the cache's next deadline. Here too:
 * the counts of drops (stats and stickyvm_events_dropped_total) and their
 * warning.
 */
#include "kube/util/clock.h"
#include "kube/machinery/recorder_testing.h"

/* ---- the recorder ------------------------------------------------------- */

/* The label values of stickyvm_events_dropped_total, by recorder_drop_reason. */
static const char *const drop_reasons[RECORDER_DROP_REASONS] = {
    "queue_full", /* eventf found the queue full */
    "shutdown",   /* unwritten at a stop's deadline, or the client shut down / fenced */
    "rejected",   /* the server refused it (a Status other than AlreadyExists) */
    "retries",    /* transport errors until max_tries */
};

void kube_recorder_options_default(kube_recorder_options *o)
{
    memset(o, 0, sizeof(*o));
    o->reporting_controller = "stickyvm-scheduler";
    o->queue_capacity = 1000;
    o->series_heartbeat_ms = 30000;
    o->series_window_ms = 6 * 60 * 1000;
    o->retry_sleep_ms = 10000;
    o->max_tries = 12;
}

void kube_recorder_stat_add(kube_recorder *r, unsigned long *field, unsigned long n)
{
    pthread_mutex_lock(&r->mu);
    *field += n;
    pthread_mutex_unlock(&r->mu);
}

void kube_recorder_count_drop(kube_recorder *r, recorder_drop_reason why, unsigned long n,
                              int locked)
{
    if (!locked)
        pthread_mutex_lock(&r->mu);
    r->stats.dropped += n;
    if (!locked)
        pthread_mutex_unlock(&r->mu);
    kube_metric_child_add(r->dropped[why], (double)n);
}

int kube_recorder_past_deadline(kube_recorder *r)
{
    int past;

    pthread_mutex_lock(&r->mu);
    past = r->stopping && kube_now_ms() >= r->stop_deadline_ms;
    pthread_mutex_unlock(&r->mu);
    return past;
}

static void abs_deadline(struct timespec *ts, int64_t ms)
{
    kube_deadline_after(ts, CLOCK_MONOTONIC, ms);
}

/* Logs the queue-full drops not logged yet (the count since the last such
 * line), at most every DROP_LOG_PERIOD_MS unless force. Under r->mu. */
static void log_drops(kube_recorder *r, int force)
{
    int64_t now = kube_now_ms();

    if (!r->drops_unlogged ||
        (!force && r->drop_logged && now - r->last_drop_log_ms < DROP_LOG_PERIOD_MS))
        return;
    KLOG_WARN("event queue full (%zu events): %lu event%s dropped since the last such line, the "
              "last %s",
              r->opts.queue_capacity, r->drops_unlogged, r->drops_unlogged == 1 ? "" : "s",
              r->last_drop);
    r->drops_unlogged = 0;
    r->last_drop_log_ms = now;
    r->drop_logged = 1;
}

/* Milliseconds until log_drops has a line to write, -1 if none. Under r->mu. */
static int64_t drop_log_deadline(const kube_recorder *r)
{
    int64_t t;

    if (!r->drops_unlogged)
        return -1;
    t = r->last_drop_log_ms + DROP_LOG_PERIOD_MS - kube_now_ms();
    return t > 0 ? t : 0;
}

/* Folds one queued event into the cache and writes what it asks for:
 * a create goes out when the window has room; a series PATCH waits for its
 * event's create, then is written. */
static void process_one(kube_recorder *r, queued *q)
{
    kube_recorder_send send;

    if (kube_recorder_past_deadline(r)) {
        kube_recorder_event_free(q->ev);
        kube_recorder_count_drop(r, RECORDER_DROP_SHUTDOWN, 1, 0);
        return;
    }
    if (kube_recorder_cache_observe(r->cache, q->ev, q->mono_ms, q->wall_ns, &send) != KUBE_OK) {
        KLOG_ERROR("event recorder: out of memory, event dropped");
        kube_recorder_stat_add(r, &r->stats.failed, 1);
        return;
    }
    if (send.op == KUBE_RECORDER_SEND_CREATE) {
        kube_recorder_send_create(r, send.ev);
        return;
    }
    kube_recorder_stat_add(r, &r->stats.aggregated, 1);
    if (send.op != KUBE_RECORDER_SEND_NONE) {
        kube_recorder_wait_create(r, send.ev);
        kube_recorder_perform(r, &send);
    }
}

static void process_due(kube_recorder *r, int force)
{
    kube_recorder_send send;

    while (kube_recorder_cache_next_due(r->cache, kube_now_ms(), force, &send)) {
        if (kube_recorder_past_deadline(r)) {
            kube_recorder_count_drop(r, RECORDER_DROP_SHUTDOWN, 1, 0);
            kube_recorder_cache_sent(r->cache, send.ev, kube_now_ms());
            continue;
        }
        kube_recorder_wait_create(r, send.ev);
        kube_recorder_perform(r, &send);
    }
}

/* Waits for work; returns the queued events taken, in order. */
static queued *wait_for_work(kube_recorder *r, int *force, uint64_t *gen, int *stopping)
{
    queued *batch;

    pthread_mutex_lock(&r->mu);
    log_drops(r, 0);
    while (!r->head && !r->stopping && r->flush_req == r->flush_done && !r->ended) {
        int64_t next = kube_recorder_cache_next_deadline(r->cache, kube_now_ms()), log_next;
        struct timespec ts;

        if (drop_log_deadline(r) == 0)
            log_drops(r, 0);
        log_next = drop_log_deadline(r); /* -1, or later: drops logged a while ago */
        if (log_next > 0 && (next < 0 || log_next < next))
            next = log_next;
        if (next < 0) {
            pthread_cond_wait(&r->wake, &r->mu);
            continue;
        }
        if (next == 0)
            break;
        abs_deadline(&ts, next);
        if (pthread_cond_timedwait(&r->wake, &r->mu, &ts) != 0)
            break;
    }
    batch = r->head;
    r->head = r->tail = NULL;
    r->len = 0;
    *stopping = r->stopping;
    *gen = r->flush_req;
    *force = r->stopping || r->flush_req != r->flush_done;
    pthread_mutex_unlock(&r->mu);
    return batch;
}

static void *recorder_main(void *arg)
{
    kube_recorder *r = arg;

    pthread_setname_np(pthread_self(), "kube-recorder");

    for (;;) {
        int force, stopping;
        uint64_t gen, n = 0;
        queued *q = wait_for_work(r, &force, &gen, &stopping);

        while (q) {
            queued *next = q->next;

            process_one(r, q);
            free(q);
            q = next;
            n++;
        }
        kube_recorder_settle(r);
        if (force) /* a flush or stop: every create written first */
            kube_recorder_drain(r);
        process_due(r, force);
        pthread_mutex_lock(&r->mu);
        r->done_seq += n;
        if (force)
            r->flush_done = gen;
        pthread_cond_broadcast(&r->progress);
        if (stopping && !r->head) {
            log_drops(r, 1);
            r->exited = 1;
            pthread_mutex_unlock(&r->mu);
            return NULL;
        }
        pthread_mutex_unlock(&r->mu);
    }
}

static int recorder_init_sync(kube_recorder *r)
{
    pthread_condattr_t attr;
    int ok;

    if (pthread_condattr_init(&attr) != 0)
        return KUBE_ENOMEM;
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    ok = pthread_mutex_init(&r->mu, NULL) == 0;
    if (ok && pthread_cond_init(&r->wake, &attr) != 0) {
        pthread_mutex_destroy(&r->mu);
        ok = 0;
    }
    if (ok && pthread_cond_init(&r->progress, &attr) != 0) {
        pthread_cond_destroy(&r->wake);
        pthread_mutex_destroy(&r->mu);
        ok = 0;
    }
    pthread_condattr_destroy(&attr);
    return ok ? KUBE_OK : KUBE_ENOMEM;
}

static int recorder_names(kube_recorder *r)
{
    char host[256];
    kube_buf b = KUBE_BUF_INIT;

    r->controller = kube_strdup(r->opts.reporting_controller);
    if (r->opts.reporting_instance) {
        r->instance = kube_strdup(r->opts.reporting_instance);
    } else {
        if (gethostname(host, sizeof(host)) != 0)
            return KUBE_EIO;
        host[sizeof(host) - 1] = '\0';
        if (kube_buf_printf(&b, "%s-%s", r->opts.reporting_controller, host) == KUBE_OK)
            r->instance = kube_buf_take(&b);
        kube_buf_free(&b);
    }
    r->opts.reporting_controller = NULL;
    r->opts.reporting_instance = NULL;
    return (r->controller && r->instance) ? KUBE_OK : KUBE_ENOMEM;
}

/* The children of stickyvm_events_dropped_total in the options' registry
 * (registered by the first recorder, found by the others), each exported
 * from 0. KUBE_OK without a registry. */
static int recorder_metrics(kube_recorder *r)
{
    static const char *const labels[] = {"reason"};
    kube_metric_opts o = {.name = "stickyvm_events_dropped_total",
                          .help = "Events the recorder did not write, by reason: queue_full, "
                                  "shutdown, rejected, retries.",
                          .type = KUBE_METRIC_COUNTER,
                          .labels = labels,
                          .n_labels = 1};
    kube_metric *m = NULL;
    int rc;

    if (!r->opts.metrics)
        return KUBE_OK;
    rc = kube_metrics_register(r->opts.metrics, &o, &m);
    if (rc == KUBE_EEXIST) {
        m = kube_metrics_find(r->opts.metrics, o.name);
        rc = m ? KUBE_OK : KUBE_EEXIST;
    }
    for (int i = 0; rc == KUBE_OK && i < RECORDER_DROP_REASONS; i++) {
        const char *v[] = {drop_reasons[i]};
        if (!(r->dropped[i] = kube_metric_with_static(m, v)))
            rc = KUBE_ENOMEM;
        kube_metric_child_add(r->dropped[i], 0);
    }
    r->opts.metrics = NULL;
    return rc;
}

static int options_valid(const kube_recorder_options *o)
{
    return o->reporting_controller && o->reporting_controller[0] && o->queue_capacity > 0 &&
           o->series_heartbeat_ms > 0 && o->series_window_ms > 0 && o->retry_sleep_ms >= 0 &&
           o->max_tries > 0 && (!o->reporting_instance || o->reporting_instance[0]);
}

static void recorder_destroy(kube_recorder *r)
{
    kube_recorder_cache_free(r->cache);
    kube_ratelimit_free(r->rl);
    free(r->controller);
    free(r->instance);
    free(r);
}

int kube_recorder_new(kube_client *client, const kube_recorder_options *opts, kube_recorder **out)
{
    kube_recorder *r;
    int rc;

    *out = NULL;
    r = calloc(1, sizeof(*r));
    if (!r)
        return KUBE_ENOMEM;
    if (opts)
        r->opts = *opts;
    else
        kube_recorder_options_default(&r->opts);
    if (!client || !options_valid(&r->opts)) {
        free(r);
        return KUBE_EINVAL;
    }
    r->client = client;
    kube_recorder_window_init(&r->window);
    if ((rc = recorder_names(r)) != KUBE_OK || (rc = recorder_metrics(r)) != KUBE_OK ||
        (rc = kube_client_ratelimit_new(client, &r->rl)) != KUBE_OK ||
        (rc = kube_recorder_cache_new(r->opts.series_window_ms, r->opts.series_heartbeat_ms,
                                      &r->cache)) != KUBE_OK) {
        recorder_destroy(r);
        return rc;
    }
    if ((rc = recorder_init_sync(r)) != KUBE_OK) {
        recorder_destroy(r);
        return rc;
    }
    if (pthread_create(&r->thread, NULL, recorder_main, r) != 0) {
        pthread_cond_destroy(&r->wake);
        pthread_cond_destroy(&r->progress);
        pthread_mutex_destroy(&r->mu);
        recorder_destroy(r);
        return KUBE_ENOMEM;
    }
    *out = r;
    return KUBE_OK;
}

__attribute__((format(printf, 1, 0))) static char *format_note(const char *fmt, va_list ap)
{
    va_list ap2;
    char *out;
    int n;

    if (!fmt)
        return kube_strdup("");
    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return NULL;
    out = malloc((size_t)n + 1);
    if (out)
        vsnprintf(out, (size_t)n + 1, fmt, ap);
    return out;
}

/* A unique wall-clock time: names differ even within one nanosecond tick. */
static int64_t next_wall_ns(kube_recorder *r)
{
    int64_t t = kube_wall_us() * 1000LL;

    pthread_mutex_lock(&r->mu);
    if (t <= r->last_wall_ns)
        t = r->last_wall_ns + 1;
    r->last_wall_ns = t;
    pthread_mutex_unlock(&r->mu);
    return t;
}

/* Counts ev dropped at a full queue, and logs the drops since the last
 * line unless one was logged less than DROP_LOG_PERIOD_MS ago (the sender
 * logs those later). Under r->mu. */
static void drop_full(kube_recorder *r, const kube_recorder_event *ev)
{
    kube_recorder_count_drop(r, RECORDER_DROP_QUEUE_FULL, 1, 1);
    r->drops_unlogged++;
    snprintf(r->last_drop, sizeof(r->last_drop), "%s %s for %s/%s", ev->type, ev->reason, ev->ns,
             ev->regarding.f[3] ? ev->regarding.f[3] : "");
    log_drops(r, 0);
}

static int enqueue(kube_recorder *r, kube_recorder_event *ev, int64_t wall_ns)
{
    queued *q = calloc(1, sizeof(*q));

    if (!q) {
        kube_recorder_event_free(ev);
        return KUBE_ENOMEM;
    }
    q->ev = ev;
    q->wall_ns = wall_ns;
    q->mono_ms = kube_now_ms();
    pthread_mutex_lock(&r->mu);
    if (r->stopping) {
        pthread_mutex_unlock(&r->mu);
        kube_recorder_event_free(ev);
        free(q);
        return KUBE_ECANCELED;
    }
    if (r->len >= r->opts.queue_capacity) {
        drop_full(r, ev);
        pthread_mutex_unlock(&r->mu);
        kube_recorder_event_free(ev);
        free(q);
        return KUBE_ETOOMANY;
    }
    if (r->tail)
        r->tail->next = q;
    else
        r->head = q;
    r->tail = q;
    r->len++;
    r->enq_seq++;
    r->stats.queued++;
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->mu);
    return KUBE_OK;
}

int kube_recorder_eventv(kube_recorder *r, const kube_recorder_ref *regarding,
                         const kube_recorder_ref *related, const char *type, const char *reason,
                         const char *action, const char *note_fmt, va_list ap)
{
    int64_t wall_ns;
    kube_recorder_event *ev = NULL;
    char *note;
    int rc;

    if (!r)
        return KUBE_EINVAL;
    note = format_note(note_fmt, ap);
    if (!note)
        return KUBE_ENOMEM;
    wall_ns = next_wall_ns(r);
    rc = kube_recorder_event_new(regarding, related, type, reason, action, note, r->controller,
                                 r->instance, wall_ns, &ev);
    free(note);
    if (rc == KUBE_EINVAL)
        KLOG_ERROR("event not recorded: bad type '%s', reason, action or object reference",
                   type ? type : "(null)");
    if (rc != KUBE_OK)
        return rc;
    KLOG_V(3, "Event occurred: object %s/%s kind %s type %s reason %s action %s note \"%s\"",
           ev->ns, regarding->name, regarding->kind ? regarding->kind : "", ev->type, ev->reason,
           ev->action, ev->note);
    return enqueue(r, ev, wall_ns);
}

int kube_recorder_eventf(kube_recorder *r, const kube_recorder_ref *regarding,
                         const kube_recorder_ref *related, const char *type, const char *reason,
                         const char *action, const char *note_fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, note_fmt);
    rc = kube_recorder_eventv(r, regarding, related, type, reason, action, note_fmt, ap);
    va_end(ap);
    return rc;
}

int kube_recorder_flush(kube_recorder *r, long timeout_ms)
{
    struct timespec ts;
    uint64_t target, gen;
    int rc = KUBE_OK;

    abs_deadline(&ts, timeout_ms);
    pthread_mutex_lock(&r->mu);
    target = r->enq_seq;
    gen = ++r->flush_req;
    pthread_cond_signal(&r->wake);
    while (!r->exited && (r->done_seq < target || r->flush_done < gen)) {
        if (pthread_cond_timedwait(&r->progress, &r->mu, &ts) != 0) {
            rc = KUBE_ETIMEDOUT;
            break;
        }
    }
    if (rc == KUBE_OK && r->exited && (r->done_seq < target || r->flush_done < gen))
        rc = KUBE_ECANCELED;
    pthread_mutex_unlock(&r->mu);
    return rc;
}

void kube_recorder_stop(kube_recorder *r, long deadline_ms)
{
    pthread_mutex_lock(&r->mu);
    if (!r->stopping) {
        r->stopping = 1;
        r->stop_deadline_ms = kube_now_ms() + deadline_ms;
    }
    pthread_cond_broadcast(&r->wake);
    pthread_mutex_unlock(&r->mu);
    if (!r->joined) {
        pthread_join(r->thread, NULL);
        r->joined = 1;
    }
}

void kube_recorder_free(kube_recorder *r)
{
    if (!r)
        return;
    kube_recorder_stop(r, 0);
    pthread_cond_destroy(&r->wake);
    pthread_cond_destroy(&r->progress);
    pthread_mutex_destroy(&r->mu);
    recorder_destroy(r);
}

void kube_recorder_stats_get(kube_recorder *r, kube_recorder_stats *out)
{
    pthread_mutex_lock(&r->mu);
    *out = r->stats;
    pthread_mutex_unlock(&r->mu);
}
