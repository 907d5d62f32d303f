/*
 * kube/machinery/recorder.c - the events.k8s.io/v1 recorder (see recorder.h).
 *
 * Callers only append to the queue under the mutex. The sender thread owns
 * the aggregation cache: it takes the queued events, folds each into the
 * cache, performs the writes the cache asks for (first occurrences up to
 * RECORDER_WINDOW at a time without waiting for each, through
 * kube_client_do_async; series PATCHes one by one after them), then the
 * due heartbeats and final counts, and sleeps on the condition variable
 * until the next event or the cache's next deadline.
 */
#include "kube/util/clock.h"
#include "kube/machinery/recorder_testing.h"

/* ---- the recorder ------------------------------------------------------- */

typedef struct queued {
    kube_recorder_event *ev;
    int64_t mono_ms;
    int64_t wall_ns;
    struct queued *next;
} queued;

struct kube_recorder {
    kube_client *client;
    char *controller;
    char *instance;
    kube_recorder_options opts;
    kube_recorder_cache *cache; /* sender thread only */

    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake;     /* to the sender: work, flush or stop */
    pthread_cond_t progress; /* to flush waiters */
    queued *head, *tail;
    size_t len;
    int stopping;
    int exited;
    int joined;
    int64_t stop_deadline_ms;
    uint64_t enq_seq, done_seq;
    uint64_t flush_req, flush_done;
    int64_t last_wall_ns;
    int64_t last_drop_log_ms;
    kube_recorder_stats stats;
};

typedef enum { WRITE_DONE, WRITE_FAILED, WRITE_RETRY } write_result;

#define RECORDER_WINDOW 8 /* event creates in flight at once */

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

static void stat_add(kube_recorder *r, unsigned long *field, unsigned long n)
{
    pthread_mutex_lock(&r->mu);
    *field += n;
    pthread_mutex_unlock(&r->mu);
}

static int past_stop_deadline(kube_recorder *r)
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

/* Sleeps ms, cut short when a stop's deadline comes first. */
static void retry_sleep(kube_recorder *r, int64_t ms)
{
    int64_t until = kube_now_ms() + ms;

    pthread_mutex_lock(&r->mu);
    for (;;) {
        int64_t end = until;
        struct timespec ts;

        if (r->stopping && r->stop_deadline_ms < end)
            end = r->stop_deadline_ms;
        if (kube_now_ms() >= end)
            break;
        abs_deadline(&ts, end - kube_now_ms());
        pthread_cond_timedwait(&r->wake, &r->mu, &ts);
    }
    pthread_mutex_unlock(&r->mu);
}

static int64_t jitter(int64_t ms, double factor)
{
    uint32_t x = 0;

    if (getrandom(&x, sizeof(x), GRND_NONBLOCK) != (ssize_t)sizeof(x))
        x = (uint32_t)kube_now_ns();
    return ms + (int64_t)((double)ms * factor * ((double)x / 4294967296.0));
}

/* The POST of ev: its path (events of its namespace) and body as text.
 * KUBE_OK, or an error with nothing to free. */
static int create_request(const kube_recorder_event *ev, kube_buf *path, char **body)
{
    cJSON *json = NULL;
    int rc = kube_recorder_event_body(ev, &json);

    *body = NULL;
    if (rc == KUBE_OK && !(*body = cJSON_PrintUnformatted(json)))
        rc = KUBE_ENOMEM;
    cJSON_Delete(json);
    if (rc == KUBE_OK)
        rc = kube_path(path, &KUBE_RES_EVENTS, ev->ns, NULL, NULL);
    if (rc != KUBE_OK) {
        free(*body);
        *body = NULL;
        kube_buf_free(path);
    }
    return rc;
}

static int post_event(kube_recorder *r, const kube_recorder_event *ev)
{
    kube_buf path = KUBE_BUF_INIT;
    kube_response resp = {0};
    char *body;
    int rc = create_request(ev, &path, &body);

    if (rc == KUBE_OK)
        rc = kube_client_do(r->client, "POST", path.data, "application/json", body, strlen(body),
                            &resp);
    kube_response_clear(&resp);
    kube_buf_free(&path);
    free(body);
    return rc;
}

/* A strategic-merge PATCH, as client-go's EventSinkImpl.Patch. */
static int patch_series(kube_recorder *r, const kube_recorder_event *ev)
{
    kube_buf path = KUBE_BUF_INIT;
    kube_response resp;
    cJSON *patch = NULL;
    char *text = NULL;
    int rc;

    memset(&resp, 0, sizeof(resp));
    if ((rc = kube_recorder_event_series_patch(ev, &patch)) != KUBE_OK)
        return rc;
    text = cJSON_PrintUnformatted(patch);
    cJSON_Delete(patch);
    if (!text)
        return KUBE_ENOMEM;
    rc = kube_path(&path, &KUBE_RES_EVENTS, ev->ns, ev->name, NULL);
    if (rc == KUBE_OK)
        rc = kube_client_do(r->client, "PATCH", path.data, "application/strategic-merge-patch+json",
                            text, strlen(text), &resp);
    kube_response_clear(&resp);
    kube_buf_free(&path);
    free(text);
    return rc;
}

static int is_transport_error(int rc)
{
    return rc == KUBE_EIO || rc == KUBE_ETIMEDOUT || rc == KUBE_EPARSE;
}

/* What a write that failed with rc means, as client-go's recordEvent:
 * transport errors (and a series re-create finding the event) are tried
 * again, anything else the server said is final. Logs it. */
static write_result failed_write(const kube_recorder_event *ev, int series, int rc)
{
    if (is_transport_error(rc) || (series && rc == KUBE_EEXIST)) {
        KLOG_ERROR("Unable to write event %s/%s (may retry after sleeping): %s", ev->ns, ev->name,
                   kube_strerror(rc));
        return WRITE_RETRY;
    }
    if (rc == KUBE_EEXIST)
        KLOG_V(5, "Server rejected event %s/%s (will not retry!): %s", ev->ns, ev->name,
               kube_strerror(rc));
    else
        KLOG_ERROR("Server rejected event %s/%s (will not retry!): %s", ev->ns, ev->name,
                   kube_strerror(rc));
    return WRITE_FAILED;
}

/* One attempt, as client-go's recordEvent. */
static write_result record_once(kube_recorder *r, kube_recorder_op op,
                                const kube_recorder_event *ev)
{
    int series = op == KUBE_RECORDER_SEND_PATCH;
    int rc = KUBE_ENOTFOUND;

    if (series) {
        rc = patch_series(r, ev);
        if (rc == KUBE_OK) {
            stat_add(r, &r->stats.patched, 1);
            return WRITE_DONE;
        }
    }
    if (rc == KUBE_ENOTFOUND) {
        rc = post_event(r, ev);
        if (rc == KUBE_OK) {
            stat_add(r, &r->stats.created, 1);
            return WRITE_DONE;
        }
    }
    return failed_write(ev, series, rc);
}

/* Writes ev until it is done or final: res is the outcome of the tries
 * made so far (WRITE_RETRY and 0 when none was), each further try after a
 * sleep, up to max_tries in all. Counts a write that never lands. */
static void write_with_retries(kube_recorder *r, kube_recorder_op op, const kube_recorder_event *ev,
                               write_result res, int tries)
{
    for (; res == WRITE_RETRY && tries < r->opts.max_tries; tries++) {
        if (tries > 0)
            retry_sleep(r, jitter(r->opts.retry_sleep_ms, 0.25));
        if (past_stop_deadline(r)) {
            stat_add(r, &r->stats.dropped, 1);
            return;
        }
        res = record_once(r, op, ev);
    }
    if (res == WRITE_RETRY)
        KLOG_ERROR("Unable to write event %s/%s (retry limit exceeded!)", ev->ns, ev->name);
    if (res != WRITE_DONE)
        stat_add(r, &r->stats.failed, 1);
}

static void perform(kube_recorder *r, const kube_recorder_send *send)
{
    if (send->op == KUBE_RECORDER_SEND_NONE)
        return;
    write_with_retries(r, send->op, send->ev, WRITE_RETRY, 0);
    kube_recorder_cache_sent(r->cache, send->ev, kube_now_ms());
}

/* ---- creates in flight together ----------------------------------------- */

/* One event create sent without waiting, and its outcome. */
typedef struct create_call {
    struct create_group *g;
    kube_recorder_event *ev; /* the cache's, kept by the group's rules */
    int rc;
} create_call;

/* Up to RECORDER_WINDOW creates in flight on the client's I/O thread (the
 * first occurrences of events: nothing orders them), which the sender
 * waits for before any write that must follow them (a series PATCH), before
 * the cache could end their entries (half a series window after the
 * first), and at the end of each batch. */
typedef struct create_group {
    kube_recorder *r;
    create_call calls[RECORDER_WINDOW];
    size_t n, done;   /* done: under r->mu */
    int64_t first_ms; /* the first create's time */
} create_group;

/* kube_client_do_async's done, on the client's I/O thread. */
static void create_done(void *ud, int rc, kube_response *resp)
{
    create_call *c = ud;
    kube_recorder *r = c->g->r;

    (void)resp;
    c->rc = rc;
    pthread_mutex_lock(&r->mu);
    c->g->done++;
    pthread_cond_broadcast(&r->progress);
    pthread_mutex_unlock(&r->mu);
}

/* Sends ev's create without waiting (a failure to send counts as done). */
static void group_add(create_group *g, kube_recorder_event *ev, int64_t now_ms)
{
    create_call *c = &g->calls[g->n++];
    kube_buf path = KUBE_BUF_INIT;
    char *body;
    int rc = create_request(ev, &path, &body);

    if (g->n == 1)
        g->first_ms = now_ms;
    *c = (create_call){g, ev, KUBE_OK};
    if (rc == KUBE_OK)
        rc = kube_client_do_async(g->r->client, "POST", path.data, "application/json", body,
                                  strlen(body), create_done, c);
    kube_buf_free(&path);
    free(body);
    if (rc != KUBE_OK)
        create_done(c, rc, NULL);
}

/* Waits for the group's creates, then settles each as a serial write would
 * (a failed one goes on with its retries here). */
static void group_flush(create_group *g)
{
    kube_recorder *r = g->r;

    pthread_mutex_lock(&r->mu);
    while (g->done < g->n)
        pthread_cond_wait(&r->progress, &r->mu);
    pthread_mutex_unlock(&r->mu);
    for (size_t i = 0; i < g->n; i++) {
        create_call *c = &g->calls[i];
        if (c->rc == KUBE_OK)
            stat_add(r, &r->stats.created, 1);
        else
            write_with_retries(r, KUBE_RECORDER_SEND_CREATE, c->ev, failed_write(c->ev, 0, c->rc),
                               1);
        kube_recorder_cache_sent(r->cache, c->ev, kube_now_ms());
    }
    g->n = g->done = 0;
}

/* Folds one queued event into the cache and writes what it asks for:
 * creates join the group, anything else waits for it. */
static void process_one(kube_recorder *r, queued *q, create_group *g)
{
    kube_recorder_send send;

    if (past_stop_deadline(r)) {
        kube_recorder_event_free(q->ev);
        stat_add(r, &r->stats.dropped, 1);
        return;
    }
    if (g->n && q->mono_ms - g->first_ms >= r->opts.series_window_ms / 2)
        group_flush(g);
    if (kube_recorder_cache_observe(r->cache, q->ev, q->mono_ms, q->wall_ns, &send) != KUBE_OK) {
        KLOG_ERROR("event recorder: out of memory, event dropped");
        stat_add(r, &r->stats.failed, 1);
        return;
    }
    if (send.op != KUBE_RECORDER_SEND_CREATE) {
        stat_add(r, &r->stats.aggregated, 1);
        if (send.op != KUBE_RECORDER_SEND_NONE)
            group_flush(g);
        perform(r, &send);
        return;
    }
    if (g->n == RECORDER_WINDOW)
        group_flush(g);
    group_add(g, send.ev, q->mono_ms);
}

static void process_due(kube_recorder *r, int force)
{
    kube_recorder_send send;

    while (kube_recorder_cache_next_due(r->cache, kube_now_ms(), force, &send)) {
        if (past_stop_deadline(r)) {
            stat_add(r, &r->stats.dropped, 1);
            kube_recorder_cache_sent(r->cache, send.ev, kube_now_ms());
            continue;
        }
        perform(r, &send);
    }
}

/* Waits for work; returns the queued events taken, in order. */
static queued *wait_for_work(kube_recorder *r, int *force, uint64_t *gen, int *stopping)
{
    queued *batch;

    pthread_mutex_lock(&r->mu);
    while (!r->head && !r->stopping && r->flush_req == r->flush_done) {
        int64_t next = kube_recorder_cache_next_deadline(r->cache, kube_now_ms());
        struct timespec ts;

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
    create_group g = {.r = r};

    pthread_setname_np(pthread_self(), "kube-recorder");

    for (;;) {
        int force, stopping;
        uint64_t gen, n = 0;
        queued *q = wait_for_work(r, &force, &gen, &stopping);

        while (q) {
            queued *next = q->next;

            process_one(r, q, &g);
            free(q);
            q = next;
            n++;
        }
        group_flush(&g);
        process_due(r, force);
        pthread_mutex_lock(&r->mu);
        r->done_seq += n;
        if (force)
            r->flush_done = gen;
        pthread_cond_broadcast(&r->progress);
        if (stopping && !r->head) {
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

static int options_valid(const kube_recorder_options *o)
{
    return o->reporting_controller && o->reporting_controller[0] && o->queue_capacity > 0 &&
           o->series_heartbeat_ms > 0 && o->series_window_ms > 0 && o->retry_sleep_ms >= 0 &&
           o->max_tries > 0 && (!o->reporting_instance || o->reporting_instance[0]);
}

static void recorder_destroy(kube_recorder *r)
{
    kube_recorder_cache_free(r->cache);
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
    if ((rc = recorder_names(r)) != KUBE_OK ||
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
    int64_t t = kube_recorder_wall_now_ns();

    pthread_mutex_lock(&r->mu);
    if (t <= r->last_wall_ns)
        t = r->last_wall_ns + 1;
    r->last_wall_ns = t;
    pthread_mutex_unlock(&r->mu);
    return t;
}

static void log_drop(kube_recorder *r, const kube_recorder_event *ev)
{
    int64_t now = kube_now_ms();

    if (r->stats.dropped != 1 && now - r->last_drop_log_ms < DROP_LOG_PERIOD_MS)
        return;
    r->last_drop_log_ms = now;
    KLOG_WARN("event queue full (%zu events): dropped event %s %s for %s/%s (%lu dropped so far)",
              r->opts.queue_capacity, ev->type, ev->reason, ev->ns,
              ev->regarding.f[3] ? ev->regarding.f[3] : "", r->stats.dropped);
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
        r->stats.dropped++;
        log_drop(r, ev);
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
