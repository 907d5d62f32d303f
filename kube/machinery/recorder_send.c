/*
 * kube/machinery/recorder_send.c - the recorder's writes (recorder.h): the
 * POST of an event and the strategic-merge PATCH of its series, retried as
 * client-go's recordEvent, and the window of creates in flight.
 *
 * First occurrences (creates: nothing orders them) go out without waiting,
 * through kube_client_do_async_limited, as many at once as the window
 * allows (AIMD, recorder_int.h); each ends on the client's I/O thread,
 * which only moves it to the recorder's list of ended creates and wakes the
 * sender. The sender settles them (the window, the counts, the retries of
 * a failed one, the cache). A series PATCH waits for its own event's
 * create, so it always follows it. Every request waits on the recorder's
 * own token bucket, never on the client's: events take no token from
 * bindings.
 */
#include "kube/util/backoff.h"
#include "kube/util/clock.h"
#include "kube/machinery/recorder_testing.h"

typedef enum { WRITE_DONE, WRITE_FAILED, WRITE_RETRY } write_result;

/* ---- the window --------------------------------------------------------- */

void kube_recorder_window_init(kube_recorder_window *w)
{
    w->size = KUBE_RECORDER_WINDOW_INIT;
    w->cut_ms = INT64_MIN;
}

size_t kube_recorder_window_allowed(const kube_recorder_window *w)
{
    return w->size < KUBE_RECORDER_WINDOW_MIN ? KUBE_RECORDER_WINDOW_MIN : (size_t)w->size;
}

/* Whether rc says the server (or the way to it) is overloaded. */
static int overloaded(int rc)
{
    return rc == KUBE_EIO || rc == KUBE_ETIMEDOUT || rc == KUBE_ETOOMANY || rc == KUBE_ESERVER ||
           rc == KUBE_EPARSE;
}

void kube_recorder_window_update(kube_recorder_window *w, int rc, int64_t sent_ms, int64_t now_ms,
                                 int pressed)
{
    if (overloaded(rc)) {
        if (sent_ms < w->cut_ms)
            return; /* sent with the larger window: already cut for */
        w->size /= 2;
        if (w->size < KUBE_RECORDER_WINDOW_MIN)
            w->size = KUBE_RECORDER_WINDOW_MIN;
        w->cut_ms = now_ms;
        return;
    }
    if (now_ms - sent_ms > KUBE_RECORDER_SLOW_MS && !pressed)
        return;
    w->size += 1.0 / w->size;
    if (w->size > KUBE_RECORDER_WINDOW_MAX)
        w->size = KUBE_RECORDER_WINDOW_MAX;
}

/* ---- one write ---------------------------------------------------------- */

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
        rc = kube_client_do_limited(r->client, r->rl, "POST", path.data, "application/json", body,
                                    strlen(body), &resp);
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
        rc = kube_client_do_limited(r->client, r->rl, "PATCH", path.data,
                                    "application/strategic-merge-patch+json", text, strlen(text),
                                    &resp);
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
 * again, anything else the server said is final (counted as dropped,
 * "rejected", unless the event was there already; "shutdown" when the
 * client was shut down or its fence refused the write). Logs it. */
static write_result failed_write(kube_recorder *r, const kube_recorder_event *ev, int series,
                                 int rc)
{
    if (is_transport_error(rc) || (series && rc == KUBE_EEXIST)) {
        KLOG_ERROR("Unable to write event %s/%s (may retry after sleeping): %s", ev->ns, ev->name,
                   kube_strerror(rc));
        return WRITE_RETRY;
    }
    if (rc == KUBE_EEXIST) {
        KLOG_V(5, "Server rejected event %s/%s (will not retry!): %s", ev->ns, ev->name,
               kube_strerror(rc));
    } else if (rc == KUBE_ECANCELED) { /* the client shut down, or its fence refused it */
        KLOG_V(2, "Event %s/%s not written: %s", ev->ns, ev->name, kube_strerror(rc));
        kube_recorder_count_drop(r, RECORDER_DROP_SHUTDOWN, 1, 0);
    } else {
        KLOG_ERROR("Server rejected event %s/%s (will not retry!): %s", ev->ns, ev->name,
                   kube_strerror(rc));
        kube_recorder_count_drop(r, RECORDER_DROP_REJECTED, 1, 0);
    }
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
            kube_recorder_stat_add(r, &r->stats.patched, 1);
            return WRITE_DONE;
        }
    }
    if (rc == KUBE_ENOTFOUND) {
        rc = post_event(r, ev);
        if (rc == KUBE_OK) {
            kube_recorder_stat_add(r, &r->stats.created, 1);
            return WRITE_DONE;
        }
    }
    return failed_write(r, ev, series, rc);
}

/* Writes ev until it is done or final: res is the outcome of the tries
 * made so far (WRITE_RETRY and 0 when none was), each further try after a
 * sleep, up to max_tries in all. Counts a write that never lands. */
static void write_with_retries(kube_recorder *r, kube_recorder_op op, const kube_recorder_event *ev,
                               write_result res, int tries)
{
    for (; res == WRITE_RETRY && tries < r->opts.max_tries; tries++) {
        if (tries > 0)
            retry_sleep(r, kube_jitter(r->opts.retry_sleep_ms, 0.25));
        if (kube_recorder_past_deadline(r)) {
            kube_recorder_count_drop(r, RECORDER_DROP_SHUTDOWN, 1, 0);
            return;
        }
        res = record_once(r, op, ev);
    }
    if (res == WRITE_RETRY) {
        KLOG_ERROR("Unable to write event %s/%s (retry limit exceeded!)", ev->ns, ev->name);
        kube_recorder_count_drop(r, RECORDER_DROP_RETRIES, 1, 0);
    }
    if (res != WRITE_DONE)
        kube_recorder_stat_add(r, &r->stats.failed, 1);
}

void kube_recorder_perform(kube_recorder *r, const kube_recorder_send *send)
{
    if (send->op == KUBE_RECORDER_SEND_NONE)
        return;
    write_with_retries(r, send->op, send->ev, WRITE_RETRY, 0);
    kube_recorder_cache_sent(r->cache, send->ev, kube_now_ms());
}

/* ---- creates in flight -------------------------------------------------- */

/* kube_client_do_async_limited's done, on the client's I/O thread: the
 * create joins the ended list and the sender wakes. */
static void create_done(void *ud, int rc, kube_response *resp)
{
    recorder_call *c = ud;
    kube_recorder *r = c->r;

    (void)resp;
    c->rc = rc;
    c->next = NULL;
    pthread_mutex_lock(&r->mu);
    if (r->ended_tail)
        r->ended_tail->next = c;
    else
        r->ended = c;
    r->ended_tail = c;
    r->in_flight--;
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->mu);
}

/* Settles one ended create as a serial write would (a failed one goes on
 * with its retries here), then frees the call. */
static void settle_one(kube_recorder *r, recorder_call *c)
{
    int64_t now = kube_now_ms();
    int pressed;

    pthread_mutex_lock(&r->mu);
    pressed = r->len >= (r->opts.queue_capacity + 1) / 2;
    pthread_mutex_unlock(&r->mu);
    kube_recorder_window_update(&r->window, c->rc, c->sent_ms, now, pressed);
    if (c->rc == KUBE_OK)
        kube_recorder_stat_add(r, &r->stats.created, 1);
    else
        write_with_retries(r, KUBE_RECORDER_SEND_CREATE, c->ev, failed_write(r, c->ev, 0, c->rc),
                           1);
    c->ev->writing = 0;
    kube_recorder_cache_sent(r->cache, c->ev, kube_now_ms());
    free(c);
}

void kube_recorder_settle(kube_recorder *r)
{
    recorder_call *c;

    pthread_mutex_lock(&r->mu);
    c = r->ended;
    r->ended = r->ended_tail = NULL;
    pthread_mutex_unlock(&r->mu);
    while (c) {
        recorder_call *next = c->next;
        settle_one(r, c);
        c = next;
    }
}

/* Waits until a create ends (or none is in flight), then settles. */
static void wait_ended(kube_recorder *r)
{
    pthread_mutex_lock(&r->mu);
    while (!r->ended && r->in_flight > 0)
        pthread_cond_wait(&r->wake, &r->mu);
    pthread_mutex_unlock(&r->mu);
    kube_recorder_settle(r);
}

/* Whether no create is in flight or waits to be settled. */
static int all_settled(kube_recorder *r)
{
    int idle;

    pthread_mutex_lock(&r->mu);
    idle = r->in_flight == 0 && !r->ended;
    pthread_mutex_unlock(&r->mu);
    return idle;
}

void kube_recorder_wait_create(kube_recorder *r, const kube_recorder_event *ev)
{
    while (ev->writing)
        wait_ended(r);
}

void kube_recorder_drain(kube_recorder *r)
{
    while (!all_settled(r))
        wait_ended(r);
}

/* Whether the window has room for one more create. */
static int window_open(kube_recorder *r)
{
    int open;

    pthread_mutex_lock(&r->mu);
    open = r->in_flight < kube_recorder_window_allowed(&r->window);
    pthread_mutex_unlock(&r->mu);
    return open;
}

void kube_recorder_send_create(kube_recorder *r, kube_recorder_event *ev)
{
    recorder_call *c = calloc(1, sizeof(*c));
    kube_buf path = KUBE_BUF_INIT;
    char *body = NULL;
    int rc;

    kube_recorder_settle(r);
    while (!window_open(r))
        wait_ended(r);
    if (!c) { /* written serially instead */
        kube_recorder_send send = {KUBE_RECORDER_SEND_CREATE, ev};
        kube_recorder_perform(r, &send);
        return;
    }
    *c = (recorder_call){r, ev, kube_now_ms(), KUBE_OK, NULL};
    ev->writing = 1;
    pthread_mutex_lock(&r->mu);
    if (++r->in_flight > r->stats.max_in_flight)
        r->stats.max_in_flight = r->in_flight;
    pthread_mutex_unlock(&r->mu);
    rc = create_request(ev, &path, &body);
    if (rc == KUBE_OK)
        rc = kube_client_do_async_limited(r->client, r->rl, "POST", path.data, "application/json",
                                          body, strlen(body), create_done, c);
    kube_buf_free(&path);
    free(body);
    if (rc != KUBE_OK) /* it ends now, as a failed write */
        create_done(c, rc, NULL);
}
