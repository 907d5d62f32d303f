/*
 * kube/machinery/leader.c - Lease leader election (see leader.h for the semantics).
 *
 * The elector thread alone writes the observed record and the cached Lease
 * object; the mutex guards what other threads read (is_leader, get_leader)
 * and the stop flag the condition variable waits on.
 */
#include "kube/util/clock.h"
#include "kube/machinery/leader.h"

#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "kube/transport/api.h"
#include "kube/util/backoff.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/machinery/recorder.h"

#define JITTER_FACTOR 1.2

struct kube_leader {
    kube_client *client;
    char *ns;
    char *name;
    char *identity;
    long lease_duration_ms;
    long renew_deadline_ms;
    long retry_period_ms;
    int release_on_cancel;
    struct kube_recorder *recorder;
    kube_leader_callbacks cb;

    pthread_t thread;
    int started;
    int joined;

    pthread_mutex_t mu;
    pthread_cond_t cond;
    int stopping;                /* under mu */
    int leading;                 /* under mu */
    int64_t valid_until_ms;      /* under mu: last write start + renew deadline */
    kube_leader_record observed; /* written under mu by the thread only */
    int64_t observed_ms;

    /* elector thread only */
    cJSON *lease; /* last Lease read or written */
    char reported[KUBE_LEADER_HOLDER_MAX];
};

/* ---- pure pieces ---------------------------------------------------- */

static int copy_string_field(const cJSON *spec, const char *key, char *out, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, key);

    out[0] = '\0';
    if (!v || cJSON_IsNull(v))
        return KUBE_OK;
    if (!cJSON_IsString(v))
        return KUBE_EPARSE;
    return kube_strlcpy(out, v->valuestring, n);
}

static int copy_int_field(const cJSON *spec, const char *key, int64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, key);

    *out = 0;
    if (!v || cJSON_IsNull(v))
        return KUBE_OK;
    if (!cJSON_IsNumber(v) || v->valuedouble < (double)INT32_MIN ||
        v->valuedouble > (double)INT32_MAX)
        return KUBE_EPARSE;
    *out = (int64_t)v->valuedouble;
    return KUBE_OK;
}

int kube_leader_record_decode(const cJSON *lease, kube_leader_record *out)
{
    const cJSON *spec;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!cJSON_IsObject(lease))
        return KUBE_EPARSE;
    spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
    if (!spec || cJSON_IsNull(spec))
        return KUBE_OK;
    if (!cJSON_IsObject(spec))
        return KUBE_EPARSE;
    if ((rc = copy_string_field(spec, "holderIdentity", out->holder, sizeof(out->holder))) ||
        (rc = copy_int_field(spec, "leaseDurationSeconds", &out->lease_duration_s)) ||
        (rc = copy_string_field(spec, "acquireTime", out->acquire_time,
                                sizeof(out->acquire_time))) ||
        (rc = copy_string_field(spec, "renewTime", out->renew_time, sizeof(out->renew_time))) ||
        (rc = copy_int_field(spec, "leaseTransitions", &out->transitions)))
        return rc;
    return KUBE_OK;
}

int kube_leader_record_equal(const kube_leader_record *a, const kube_leader_record *b)
{
    return strcmp(a->holder, b->holder) == 0 && a->lease_duration_s == b->lease_duration_s &&
           strcmp(a->acquire_time, b->acquire_time) == 0 &&
           strcmp(a->renew_time, b->renew_time) == 0 && a->transitions == b->transitions;
}

int kube_leader_lease_valid(const kube_leader_record *observed, int64_t observed_ms, int64_t now_ms)
{
    return observed_ms + observed->lease_duration_s * 1000 > now_ms;
}

kube_leader_decision kube_leader_decide(const kube_leader_record *observed, int64_t observed_ms,
                                        int64_t now_ms, const char *identity)
{
    int ours = strcmp(observed->holder, identity) == 0;

    if (observed->holder[0] && !ours && kube_leader_lease_valid(observed, observed_ms, now_ms))
        return KUBE_LEADER_WAIT;
    return ours ? KUBE_LEADER_RENEW : KUBE_LEADER_TAKEOVER;
}

void kube_leader_next_record(kube_leader_decision d, const kube_leader_record *old,
                             const char *identity, int64_t lease_duration_s, const char *now,
                             kube_leader_record *out)
{
    memset(out, 0, sizeof(*out));
    kube_strlcpy(out->holder, identity, sizeof(out->holder));
    out->lease_duration_s = lease_duration_s;
    kube_strlcpy(out->renew_time, now, sizeof(out->renew_time));
    if (d == KUBE_LEADER_RENEW) {
        kube_strlcpy(out->acquire_time, old->acquire_time, sizeof(out->acquire_time));
        out->transitions = old->transitions;
    } else {
        kube_strlcpy(out->acquire_time, now, sizeof(out->acquire_time));
        out->transitions = old->transitions + 1;
    }
}

void kube_leader_release_record(const kube_leader_record *observed, const char *now,
                                kube_leader_record *out)
{
    memset(out, 0, sizeof(*out));
    out->lease_duration_s = 1;
    kube_strlcpy(out->acquire_time, now, sizeof(out->acquire_time));
    kube_strlcpy(out->renew_time, now, sizeof(out->renew_time));
    out->transitions = observed->transitions;
}

static int add_time(cJSON *spec, const char *key, const char *value)
{
    cJSON *v =
        value[0] ? cJSON_AddStringToObject(spec, key, value) : cJSON_AddNullToObject(spec, key);
    return v ? KUBE_OK : KUBE_ENOMEM;
}

/* The LeaseSpec client-go's LeaderElectionRecordToLeaseSpec produces. */
static cJSON *spec_json(const kube_leader_record *rec)
{
    cJSON *spec = cJSON_CreateObject();

    if (!spec || !cJSON_AddStringToObject(spec, "holderIdentity", rec->holder) ||
        !cJSON_AddNumberToObject(spec, "leaseDurationSeconds", (double)rec->lease_duration_s) ||
        add_time(spec, "acquireTime", rec->acquire_time) ||
        add_time(spec, "renewTime", rec->renew_time) ||
        !cJSON_AddNumberToObject(spec, "leaseTransitions", (double)rec->transitions)) {
        cJSON_Delete(spec);
        return NULL;
    }
    return spec;
}

int kube_leader_create_body(const char *ns, const char *name, const kube_leader_record *rec,
                            cJSON **out)
{
    cJSON *body = cJSON_CreateObject();
    cJSON *meta = cJSON_CreateObject();
    cJSON *spec = spec_json(rec);

    *out = NULL;
    if (!body || !meta || !spec || !cJSON_AddStringToObject(meta, "name", name) ||
        !cJSON_AddStringToObject(meta, "namespace", ns) ||
        !cJSON_AddStringToObject(body, "apiVersion", "coordination.k8s.io/v1") ||
        !cJSON_AddStringToObject(body, "kind", "Lease")) {
        cJSON_Delete(body);
        cJSON_Delete(meta);
        cJSON_Delete(spec);
        return KUBE_ENOMEM;
    }
    cJSON_AddItemToObject(body, "metadata", meta);
    cJSON_AddItemToObject(body, "spec", spec);
    *out = body;
    return KUBE_OK;
}

int kube_leader_update_body(const cJSON *lease, const kube_leader_record *rec, cJSON **out)
{
    cJSON *body;
    cJSON *spec;

    *out = NULL;
    if (!cJSON_IsObject(lease))
        return KUBE_EINVAL;
    body = cJSON_Duplicate(lease, 1);
    spec = spec_json(rec);
    if (!body || !spec) {
        cJSON_Delete(body);
        cJSON_Delete(spec);
        return KUBE_ENOMEM;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(body, "spec");
    cJSON_AddItemToObject(body, "spec", spec);
    *out = body;
    return KUBE_OK;
}

int kube_leader_default_identity(char *out, size_t n)
{
    char host[256];
    unsigned char u[16];
    int w;

    if (gethostname(host, sizeof(host)) != 0)
        return KUBE_EIO;
    host[sizeof(host) - 1] = '\0';
    if (getrandom(u, sizeof(u), 0) != (ssize_t)sizeof(u))
        return KUBE_EIO;
    u[6] = (unsigned char)((u[6] & 0x0f) | 0x40); /* version 4 */
    u[8] = (unsigned char)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    w = snprintf(out, n, "%s_%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 host, u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
                 u[12], u[13], u[14], u[15]);
    return (w < 0 || (size_t)w >= n) ? KUBE_ERANGE : KUBE_OK;
}

/* ---- configuration ---------------------------------------------------- */

void kube_leader_config_default(kube_leader_config *c)
{
    memset(c, 0, sizeof(*c));
    c->lease_duration_ms = 15000;
    c->renew_deadline_ms = 10000;
    c->retry_period_ms = 2000;
}

void kube_leader_client_options(const kube_leader_config *cfg, kube_client_options *o)
{
    long timeout = cfg->renew_deadline_ms / 2;

    o->timeout_ms = timeout < 1000 ? 1000 : timeout;
    o->max_retries = 0;
}

static const char *config_error(const kube_leader_config *cfg, const kube_leader_callbacks *cb)
{
    if (!cfg->namespace_ || !cfg->namespace_[0] || !cfg->name || !cfg->name[0])
        return "lease namespace and name are required";
    if (cfg->lease_duration_ms <= cfg->renew_deadline_ms)
        return "leaseDuration must be greater than renewDeadline";
    if ((double)cfg->renew_deadline_ms <= JITTER_FACTOR * (double)cfg->retry_period_ms)
        return "renewDeadline must be greater than retryPeriod*JitterFactor";
    if (cfg->lease_duration_ms < 1000)
        return "leaseDuration must be at least one second";
    if (cfg->renew_deadline_ms < 1 || cfg->retry_period_ms < 1)
        return "renewDeadline and retryPeriod must be greater than zero";
    if (!cb || !cb->on_started_leading)
        return "OnStartedLeading callback must not be nil";
    if (!cb->on_stopped_leading)
        return "OnStoppedLeading callback must not be nil";
    if (cfg->identity && strlen(cfg->identity) >= KUBE_LEADER_HOLDER_MAX)
        return "identity is too long";
    return NULL;
}

static int leader_init_sync(kube_leader *le)
{
    pthread_condattr_t attr;
    int rc;

    if (pthread_mutex_init(&le->mu, NULL) != 0)
        return KUBE_ENOMEM;
    if (pthread_condattr_init(&attr) != 0) {
        pthread_mutex_destroy(&le->mu);
        return KUBE_ENOMEM;
    }
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    rc = pthread_cond_init(&le->cond, &attr);
    pthread_condattr_destroy(&attr);
    if (rc != 0) {
        pthread_mutex_destroy(&le->mu);
        return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

static int leader_copy_names(kube_leader *le, const kube_leader_config *cfg)
{
    char id[KUBE_LEADER_HOLDER_MAX];
    int rc;

    if (cfg->identity) {
        le->identity = kube_strdup(cfg->identity);
    } else {
        if ((rc = kube_leader_default_identity(id, sizeof(id))) != KUBE_OK)
            return rc;
        le->identity = kube_strdup(id);
    }
    le->ns = kube_strdup(cfg->namespace_);
    le->name = kube_strdup(cfg->name);
    return (le->identity && le->ns && le->name) ? KUBE_OK : KUBE_ENOMEM;
}

static void leader_free_names(kube_leader *le)
{
    free(le->identity);
    free(le->ns);
    free(le->name);
}

int kube_leader_new(kube_client *client, const kube_leader_config *cfg,
                    const kube_leader_callbacks *cb, kube_leader **out)
{
    const char *err;
    kube_leader *le;
    int rc;

    *out = NULL;
    if (!client || !cfg)
        return KUBE_EINVAL;
    if ((err = config_error(cfg, cb)) != NULL) {
        KLOG_ERROR("leader election config: %s", err);
        return KUBE_EINVAL;
    }
    le = calloc(1, sizeof(*le));
    if (!le)
        return KUBE_ENOMEM;
    le->client = client;
    le->lease_duration_ms = cfg->lease_duration_ms;
    le->renew_deadline_ms = cfg->renew_deadline_ms;
    le->retry_period_ms = cfg->retry_period_ms;
    le->release_on_cancel = cfg->release_on_cancel;
    le->recorder = cfg->recorder;
    le->cb = *cb;
    if ((rc = leader_copy_names(le, cfg)) != KUBE_OK || (rc = leader_init_sync(le)) != KUBE_OK) {
        leader_free_names(le);
        free(le);
        return rc;
    }
    *out = le;
    return KUBE_OK;
}

const char *kube_leader_identity(const kube_leader *le)
{
    return le->identity;
}

int kube_leader_is_leader(kube_leader *le)
{
    int r;

    pthread_mutex_lock(&le->mu);
    r = le->leading && strcmp(le->observed.holder, le->identity) == 0 &&
        kube_now_ms() < le->valid_until_ms;
    pthread_mutex_unlock(&le->mu);
    return r;
}

int kube_leader_check(kube_leader *le, long max_tolerable_expired_ms, char *msg, size_t n)
{
    int64_t since;
    int ours;

    pthread_mutex_lock(&le->mu);
    ours = strcmp(le->observed.holder, le->identity) == 0;
    since = kube_now_ms() - le->observed_ms;
    pthread_mutex_unlock(&le->mu);
    if (!ours || since <= le->lease_duration_ms + max_tolerable_expired_ms)
        return KUBE_OK;
    snprintf(msg, n, "failed election to renew leadership on lease %s", le->name);
    return KUBE_ETIMEDOUT;
}

int kube_leader_get_leader(kube_leader *le, char *out, size_t n)
{
    int rc;

    pthread_mutex_lock(&le->mu);
    rc = kube_strlcpy(out, le->observed.holder, n);
    pthread_mutex_unlock(&le->mu);
    return rc;
}

/* ---- elector thread ----------------------------------------------------- */

/* Waits ms milliseconds unless a stop comes first. Returns 1 when stopping. */
static int leader_wait(kube_leader *le, int64_t ms)
{
    struct timespec ts;
    int stopping;

    kube_deadline_after(&ts, CLOCK_MONOTONIC, ms);
    pthread_mutex_lock(&le->mu);
    while (!le->stopping && pthread_cond_timedwait(&le->cond, &le->mu, &ts) == 0)
        ;
    stopping = le->stopping;
    pthread_mutex_unlock(&le->mu);
    return stopping;
}

static int leader_stopping(kube_leader *le)
{
    int s;

    pthread_mutex_lock(&le->mu);
    s = le->stopping;
    pthread_mutex_unlock(&le->mu);
    return s;
}

/* retry * (1 + rand * JitterFactor), as wait.Jitter. */
static int64_t jittered_retry(const kube_leader *le)
{
    return kube_jitter(le->retry_period_ms, JITTER_FACTOR);
}

static int observed_is_us(const kube_leader *le)
{
    return strcmp(le->observed.holder, le->identity) == 0;
}

static void set_observed(kube_leader *le, const kube_leader_record *rec)
{
    pthread_mutex_lock(&le->mu);
    le->observed = *rec;
    le->observed_ms = kube_now_ms();
    pthread_mutex_unlock(&le->mu);
}

/* After a successful write of ours begun at write_start_ms. */
static void set_written(kube_leader *le, const kube_leader_record *rec, int64_t write_start_ms)
{
    pthread_mutex_lock(&le->mu);
    le->observed = *rec;
    le->observed_ms = kube_now_ms();
    if (strcmp(rec->holder, le->identity) == 0)
        le->valid_until_ms = write_start_ms + le->renew_deadline_ms;
    pthread_mutex_unlock(&le->mu);
}

static void set_leading(kube_leader *le, int leading)
{
    pthread_mutex_lock(&le->mu);
    le->leading = leading;
    pthread_mutex_unlock(&le->mu);
}

static void replace_lease(kube_leader *le, cJSON *lease)
{
    cJSON_Delete(le->lease);
    le->lease = lease;
}

/* PUT the cached Lease with rec as its spec. */
static int put_lease(kube_leader *le, const kube_leader_record *rec)
{
    cJSON *body = NULL;
    cJSON *got = NULL;
    kube_status st;
    int rc;

    if (!le->lease)
        return KUBE_EINVAL;
    if ((rc = kube_leader_update_body(le->lease, rec, &body)) != KUBE_OK)
        return rc;
    rc = kube_api_update(le->client, &KUBE_RES_LEASES, le->ns, le->name, body, &got, &st);
    cJSON_Delete(body);
    if (rc == KUBE_OK && got)
        replace_lease(le, got);
    else
        cJSON_Delete(got);
    return rc;
}

static int create_lease(kube_leader *le, const char *now)
{
    kube_leader_record rec;
    cJSON *body = NULL;
    cJSON *got = NULL;
    kube_status st;
    int64_t start = kube_now_ms();
    int rc;

    memset(&rec, 0, sizeof(rec));
    kube_strlcpy(rec.holder, le->identity, sizeof(rec.holder));
    rec.lease_duration_s = le->lease_duration_ms / 1000;
    kube_strlcpy(rec.acquire_time, now, sizeof(rec.acquire_time));
    kube_strlcpy(rec.renew_time, now, sizeof(rec.renew_time));
    if ((rc = kube_leader_create_body(le->ns, le->name, &rec, &body)) != KUBE_OK)
        return 0;
    rc = kube_api_create(le->client, &KUBE_RES_LEASES, le->ns, body, &got, &st);
    cJSON_Delete(body);
    if (rc != KUBE_OK) {
        cJSON_Delete(got);
        KLOG_ERROR("error initially creating leader election record: %s", kube_strerror(rc));
        return 0;
    }
    replace_lease(le, got);
    set_written(le, &rec, start);
    return 1;
}

/* Fast path: the leader renews the Lease it wrote last, without a GET. */
static int try_renew_optimistic(kube_leader *le, const char *now)
{
    kube_leader_record rec;
    int64_t start = kube_now_ms();
    int rc;

    kube_leader_next_record(KUBE_LEADER_RENEW, &le->observed, le->identity,
                            le->lease_duration_ms / 1000, now, &rec);
    rc = put_lease(le, &rec);
    if (rc == KUBE_OK) {
        set_written(le, &rec, start);
        return 1;
    }
    KLOG_ERROR("Failed to update lock optimistically: %s, falling back to slow path",
               kube_strerror(rc));
    return 0;
}

/* Reads the Lease into le->lease and *rec; creates it when missing. Returns
 * 1 when created (done), 0 when read, -1 on failure. */
static int read_or_create(kube_leader *le, const char *now, kube_leader_record *rec)
{
    cJSON *got = NULL;
    kube_status st;
    int rc = kube_api_get(le->client, &KUBE_RES_LEASES, le->ns, le->name, &got, &st);

    if (rc == KUBE_ENOTFOUND)
        return create_lease(le, now) ? 1 : -1;
    if (rc == KUBE_OK)
        rc = kube_leader_record_decode(got, rec);
    if (rc != KUBE_OK) {
        cJSON_Delete(got);
        KLOG_ERROR("error retrieving resource lock %s/%s: %s", le->ns, le->name, kube_strerror(rc));
        return -1;
    }
    replace_lease(le, got);
    return 0;
}

/* client-go's tryAcquireOrRenew. Returns 1 when we hold the Lease. */
static int try_acquire_or_renew(kube_leader *le)
{
    char now[KUBE_LEADER_TIME_MAX];
    kube_leader_record old, rec;
    kube_leader_decision d;
    int64_t start;
    int r;

    kube_time_rfc3339_micro(now, sizeof(now));
    if (observed_is_us(le) && le->lease &&
        kube_leader_lease_valid(&le->observed, le->observed_ms, kube_now_ms()) &&
        try_renew_optimistic(le, now))
        return 1;
    if ((r = read_or_create(le, now, &old)) != 0)
        return r > 0;
    if (!kube_leader_record_equal(&le->observed, &old))
        set_observed(le, &old);
    d = kube_leader_decide(&le->observed, le->observed_ms, kube_now_ms(), le->identity);
    if (d == KUBE_LEADER_WAIT) {
        KLOG_V(4, "lock is held by %s and has not yet expired", old.holder);
        return 0;
    }
    kube_leader_next_record(d, &old, le->identity, le->lease_duration_ms / 1000, now, &rec);
    start = kube_now_ms();
    if ((r = put_lease(le, &rec)) != KUBE_OK) {
        KLOG_ERROR("Failed to update lock: %s", kube_strerror(r));
        return 0;
    }
    set_written(le, &rec, start);
    return 1;
}

static void maybe_report_transition(kube_leader *le)
{
    if (strcmp(le->observed.holder, le->reported) == 0)
        return;
    kube_strlcpy(le->reported, le->observed.holder, sizeof(le->reported));
    if (le->cb.on_new_leader)
        le->cb.on_new_leader(le->cb.ud, le->reported);
}

/* The LeaseLock's RecordEvent. */
static void record_event(kube_leader *le, const char *what)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(le->lease, "metadata");
    const cJSON *uid = cJSON_GetObjectItemCaseSensitive(meta, "uid");
    kube_recorder_ref ref = {
        .kind = "Lease",
        .api_version = "coordination.k8s.io/v1",
        .namespace_ = le->ns,
        .name = le->name,
        .uid = cJSON_IsString(uid) ? uid->valuestring : NULL,
    };

    if (le->recorder)
        kube_recorder_eventf(le->recorder, &ref, NULL, KUBE_RECORDER_NORMAL, "LeaderElection",
                             "LeaderElection", "%s %s", le->identity, what);
}

/* Returns 1 once acquired, 0 when stopped first. */
static int acquire_loop(kube_leader *le)
{
    KLOG_INFO("attempting to acquire leader lease %s/%s...", le->ns, le->name);
    while (!leader_stopping(le)) {
        int ok = try_acquire_or_renew(le);

        maybe_report_transition(le);
        if (ok) {
            KLOG_INFO("successfully acquired lease %s/%s", le->ns, le->name);
            return 1;
        }
        KLOG_V(4, "failed to acquire lease %s/%s", le->ns, le->name);
        if (leader_wait(le, jittered_retry(le)))
            break;
    }
    return 0;
}

/* One renew round: retries every retry period until renew_deadline.
 * Returns 1 when renewed. */
static int renew_round(kube_leader *le)
{
    int64_t deadline = kube_now_ms() + le->renew_deadline_ms;

    for (;;) {
        int64_t left;

        if (try_acquire_or_renew(le))
            return 1;
        left = deadline - kube_now_ms();
        if (left <= 0)
            return 0;
        if (leader_wait(le, left < le->retry_period_ms ? left : le->retry_period_ms))
            return 0;
        if (kube_now_ms() >= deadline)
            return 0;
    }
}

/* Returns 1 when leadership was lost, 0 when stopped. */
static int renew_loop(kube_leader *le)
{
    while (!leader_stopping(le)) {
        int ok = renew_round(le);

        maybe_report_transition(le);
        if (!ok) {
            if (leader_stopping(le))
                return 0;
            KLOG_INFO("failed to renew lease %s/%s: timed out waiting for the condition", le->ns,
                      le->name);
            return 1;
        }
        KLOG_V(5, "successfully renewed lease %s/%s", le->ns, le->name);
        if (leader_wait(le, le->retry_period_ms))
            break;
    }
    return 0;
}

/* client-go's release: clear the holder so a candidate need not wait. */
static void release(kube_leader *le)
{
    char now[KUBE_LEADER_TIME_MAX];
    kube_leader_record rec;
    int64_t start = kube_now_ms();
    int rc;

    if (!observed_is_us(le))
        return;
    kube_time_rfc3339_micro(now, sizeof(now));
    kube_leader_release_record(&le->observed, now, &rec);
    if ((rc = put_lease(le, &rec)) != KUBE_OK) {
        KLOG_ERROR("Failed to release lock: %s", kube_strerror(rc));
        return;
    }
    set_written(le, &rec, start);
    KLOG_INFO("released lease %s/%s", le->ns, le->name);
}

static void *leader_main(void *arg)
{
    kube_leader *le = arg;

    pthread_setname_np(pthread_self(), "kube-leader");
    int lost = 0;

    if (acquire_loop(le)) {
        set_leading(le, 1);
        record_event(le, "became leader");
        le->cb.on_started_leading(le->cb.ud);
        lost = renew_loop(le);
        set_leading(le, 0);
        if (le->cb.on_fence)
            le->cb.on_fence(le->cb.ud, lost);
        if (le->release_on_cancel)
            release(le);
        record_event(le, "stopped leading");
        if (lost && le->recorder) /* the holder exits next: let the event leave first */
            kube_recorder_flush(le->recorder, KUBE_LEADER_EVENT_FLUSH_MS);
    }
    le->cb.on_stopped_leading(le->cb.ud, lost);
    return NULL;
}

int kube_leader_start(kube_leader *le)
{
    if (!le || le->started)
        return KUBE_EINVAL;
    if (pthread_create(&le->thread, NULL, leader_main, le) != 0)
        return KUBE_ENOMEM;
    le->started = 1;
    return KUBE_OK;
}

void kube_leader_stop(kube_leader *le)
{
    if (!le)
        return;
    pthread_mutex_lock(&le->mu);
    le->stopping = 1;
    pthread_cond_broadcast(&le->cond);
    pthread_mutex_unlock(&le->mu);
    if (le->started && !le->joined && !pthread_equal(pthread_self(), le->thread)) {
        pthread_join(le->thread, NULL);
        le->joined = 1;
    }
}

void kube_leader_free(kube_leader *le)
{
    if (!le)
        return;
    kube_leader_stop(le);
    cJSON_Delete(le->lease);
    pthread_cond_destroy(&le->cond);
    pthread_mutex_destroy(&le->mu);
    leader_free_names(le);
    free(le);
}
