/*
 * tests/harness.h - starts the API emulator (stickyvm-emulator) for one
 * integration test or benchmark and talks to its control API.
 *
 *     harness *h;
 *     harness_opts o = HARNESS_OPTS_INIT;
 *     o.bookmark_interval_ms = 200;
 *     assert_int_equal(harness_start(&o, &h), KUBE_OK);
 *     ... kube_config_load(harness_kubeconfig(h)) ... or harness_request(h, ...)
 *     harness_stop(h);
 *
 * harness_start() makes a fresh temporary directory, runs
 * STICKYVM_BINARY_DIR "/stickyvm-emulator" on 127.0.0.1 with --port 0
 * (the emulator picks a free port) and --data-dir in that directory, and
 * returns once the emulator answers /readyz. The emulator generates its own
 * CA, a serving certificate for 127.0.0.1/localhost and an admin client
 * certificate (CN=admin, O=system:masters), and writes admin.kubeconfig.
 * Its log goes to <data dir>/emulator.log (or to stderr when the
 * environment variable STICKYVM_EMULATOR_LOG=stderr); the log is printed
 * to stderr when harness_stop() is called on a harness that saw a failed
 * start. harness_stop() stops the process (SIGTERM, then SIGKILL after 5 s)
 * and removes the directory unless STICKYVM_KEEP_TEMP is set.
 *
 * Control API (the harness calls it over HTTPS as admin; faults never apply
 * to it):
 *   POST   /emulator/v1/faults      {"errorRate":0.3,"errorCode":429,
 *                                    "retryAfterSeconds":1,"delayMs":50,
 *                                    "verbs":["create"],"resources":["pods"]}
 *                                   or {"rules":[rule,...]}, see harness_fault_rule
 *   DELETE /emulator/v1/faults      clear
 *   GET    /emulator/v1/requests    ?verb=&resource=&user=: the request log
 *   DELETE /emulator/v1/requests    clear it
 *   POST   /emulator/v1/restart     drop watches, forget the event history
 *   POST   /emulator/v1/drop-watches
 *   GET    /emulator/v1/counters    {"total":N,"requests":{"list pods":N,...},
 *                                    "connections":{"http/1.1":N,"h2":N},
 *                                    "streams":{"h2":N,"h2Open":N},
 *                                    "threads":{"started":N}}
 *   DELETE /emulator/v1/counters    reset
 *   POST   /emulator/v1/identities  {"kind":"cert"|"token"|"serving",...}
 *
 * Threads: a harness may be used from several threads at once (requests go
 * through separate curl handles); harness_stop() must be called once, after
 * every other call returned. The emulator is tied to the thread that called
 * harness_start() (it gets SIGTERM when that thread ends, so a crashed test
 * leaves no process behind): start it from a thread that outlives it.
 *
 * Protocols: the emulator offers h2 and http/1.1 by ALPN (HTTP/2 unless
 * disable_http2); the harness's own requests always use HTTP/1.1, one
 * connection each.
 *
 * The emulator answers /healthz, /livez, /readyz and /version without
 * credentials (as RBAC's system:public-info-viewer allows); every other
 * path needs a client certificate signed by its CA or a token it issued.
 * Environment: STICKYVM_EMULATOR_WRAPPER="valgrind --leak-check=full" runs
 * the emulator under a wrapper command (the binary path and flags follow).
 *
 * Errors: functions return KUBE_OK or a negative KUBE_E* code. A non-2xx
 * answer of the control API is KUBE_ESERVER (or the code's KUBE_E* error).
 *
 * Memory: the harness owns everything it returns as const (paths,
 * identities); they stay valid until harness_stop(). Responses are filled
 * into caller structs whose contents harness_response_free() frees.
 */
#ifndef STICKYVM_TESTS_HARNESS_H
#define STICKYVM_TESTS_HARNESS_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "kube/util/clock.h"

/* For cmocka tests: the one deadline loop. WAIT_TRUE(cond) waits up to
 * HARNESS_WAIT_MS, polling every 10 ms, for cond to hold, else fails the
 * test naming cond. For what an asynchronous actor changes after the effect
 * the test saw (a counter bumped once the write returned, a callback run
 * after the flag it follows): reading it at once races.
 *
 * WAIT_TRUE_MS(cond, ms) waits ms instead; WAIT_TRUE_MSG(cond, fmt, ...)
 * fails with fail_msg(fmt, ...) instead (its arguments are evaluated at the
 * timeout, so they can show what cond last saw); WAIT_TRUE_MS_MSG(cond, ms,
 * fmt, ...) does both. cond is evaluated each round, so it may have side
 * effects (fill a buffer the message shows). To wait for something and then
 * assert a property of it, wait for the positive condition, then assert. */
#define HARNESS_WAIT_MS 20000
#define HARNESS_WAIT_POLL_US 10000
#define WAIT_TRUE_MS_MSG(cond, ms, ...)                         \
    do {                                                        \
        int64_t wait_deadline_ = kube_now_ms() + (int64_t)(ms); \
        while (!(cond)) {                                       \
            if (kube_now_ms() > wait_deadline_)                 \
                fail_msg(__VA_ARGS__);                          \
            usleep(HARNESS_WAIT_POLL_US);                       \
        }                                                       \
    } while (0)
#define WAIT_TRUE_MS(cond, ms) \
    WAIT_TRUE_MS_MSG(cond, ms, "still false after %d ms: %s", (int)(ms), #cond)
#define WAIT_TRUE_MSG(cond, ...) WAIT_TRUE_MS_MSG(cond, HARNESS_WAIT_MS, __VA_ARGS__)
#define WAIT_TRUE(cond) WAIT_TRUE_MS(cond, HARNESS_WAIT_MS)

typedef struct harness harness;

typedef struct harness_opts {
    int nodes;                     /* --nodes: seed node-0..node-N-1 */
    int pods;                      /* --pods: seed N unscheduled pods in default */
    int history;                   /* --history: event history size (0: default 10000) */
    int64_t bookmark_interval_ms;  /* 0: the emulator default (60000) */
    int demo;                      /* --demo: small demo cluster */
    int verbosity;                 /* --v */
    const char *const *extra_args; /* NULL-terminated extra flags, or NULL */
    int start_timeout_ms;          /* 0: 30000 */
    int disable_http2;             /* --disable-http2: ALPN offers only http/1.1 */
} harness_opts;

#define HARNESS_OPTS_INIT            \
    {                                \
        0, 0, 0, 0, 0, 0, NULL, 0, 0 \
    }

/* Starts an emulator. opts may be NULL (all defaults). On success *out is
 * a harness the caller stops with harness_stop(). On failure nothing is
 * left running and *out is NULL. */
int harness_start(const harness_opts *opts, harness **out);
/* Stops the emulator, removes its directory, frees h (NULL is a no-op). */
void harness_stop(harness *h);

/* "https://127.0.0.1:PORT" */
const char *harness_url(const harness *h);
int harness_port(const harness *h);
/* The emulator's process id (a bench reads its CPU time from /proc). */
pid_t harness_pid(const harness *h);
/* A TCP port free right now on 127.0.0.1 (for a daemon a test or bench
 * starts beside the emulator), or 0 when none could be found. */
int harness_free_port(void);
/* The emulator's data directory (certificates, kubeconfigs, log). */
const char *harness_data_dir(const harness *h);
/* The admin kubeconfig (CN=admin, O=system:masters, client certificate). */
const char *harness_kubeconfig(const harness *h);
/* PEM files: the cluster CA (verifies the serving cert and signs client
 * certificates), the admin client certificate and key, the front-proxy CA
 * and the front-proxy client certificate (CN=front-proxy-client). */
const char *harness_ca_file(const harness *h);
const char *harness_admin_cert_file(const harness *h);
const char *harness_admin_key_file(const harness *h);
const char *harness_front_proxy_ca_file(const harness *h);
const char *harness_front_proxy_cert_file(const harness *h);
const char *harness_front_proxy_key_file(const harness *h);
/* The emulator's log file (empty when logging to stderr). */
const char *harness_log_file(const harness *h);

/* An extra client identity. Exactly one of (cert_file, key_file) or token
 * is set; kubeconfig is a kubeconfig for it. Owned by the harness. */
typedef struct harness_identity {
    const char *user;
    const char *cert_file;
    const char *key_file;
    const char *token;
    const char *kubeconfig;
} harness_identity;

/* A client certificate signed by the emulator CA with CN=user and one O
 * per group (groups may be NULL when n_groups is 0). */
int harness_add_cert_user(harness *h, const char *user, const char *const *groups, size_t n_groups,
                          const harness_identity **out);
/* A bearer token the emulator authenticates as user with groups. */
int harness_add_token_user(harness *h, const char *user, const char *const *groups, size_t n_groups,
                           const harness_identity **out);
/* The same with the caller's token (printable ASCII, no spaces; e.g. a
 * JWT-shaped one of a real ServiceAccount's size), copied by the emulator. */
int harness_add_given_token_user(harness *h, const char *user, const char *const *groups,
                                 size_t n_groups, const char *token, const harness_identity **out);
/* A serving certificate signed by the emulator CA for the given DNS names
 * and IPs (for an aggregated API server under test). Writes cert and key
 * files into the data dir; *cert_file and *key_file are owned by the
 * harness. */
int harness_issue_serving_cert(harness *h, const char *cn, const char *const *dns, size_t n_dns,
                               const char *const *ips, size_t n_ips, const char **cert_file,
                               const char **key_file);

/* Fault injection. error_rate in [0,1] of matching requests answer
 * error_code (429 or 5xx) with a Status and, if retry_after_seconds > 0, a
 * Retry-After header; every matching request is first delayed delay_ms.
 * verbs/resources (NULL-terminated, or NULL for all) restrict which
 * requests match, e.g. {"create", NULL} and {"pods/binding", NULL}. */
typedef struct harness_faults {
    double error_rate;
    int error_code;
    int retry_after_seconds;
    int delay_ms;
    const char *const *verbs;
    const char *const *resources;
} harness_faults;

int harness_set_faults(harness *h, const harness_faults *f);
int harness_clear_faults(harness *h);

/* One fault rule. The first live rule that matches a request takes it:
 * it matches when each non-NULL list (NULL-terminated) names the request's
 * verb, resource ("pods" or "pods/binding"), user (as authenticated: a
 * certificate's CN, a token's user) and name (from the URL, e.g. a Lease's).
 * A rule lives until count matching requests took it (0: unlimited) and
 * for_ms after it was set (0: until cleared). Every request it takes waits
 * delay_ms, then error_rate of them (0: the emulator's default: 1 for
 * reset and stall; for status 1 when count or for_ms is set, unless the
 * rule is a slow link, delay_ms without error_code; else 0) get:
 *   HARNESS_FAULT_STATUS error_code (0: 500) as a Status with message (NULL:
 *                        a default text) and a Retry-After header if
 *                        retry_after_seconds > 0;
 *   HARNESS_FAULT_RESET  the connection closed without any answer;
 *   HARNESS_FAULT_STALL  no answer until the rule expires or is cleared,
 *                        then the connection closed;
 *   HARNESS_FAULT_WEBHOOK a down validating webhook (named by message;
 *                        NULL: a default name): kube-apiserver's 500
 *                        InternalError "failed calling webhook ...", for
 *                        the write verbs when verbs is NULL.
 * Strings are borrowed. */
typedef enum {
    HARNESS_FAULT_STATUS,
    HARNESS_FAULT_RESET,
    HARNESS_FAULT_STALL,
    HARNESS_FAULT_WEBHOOK
} harness_fault_action;

typedef struct harness_fault_rule {
    harness_fault_action action;
    double error_rate;
    int error_code;
    int retry_after_seconds;
    int delay_ms;
    int count;
    int64_t for_ms;
    const char *message;
    const char *const *verbs;
    const char *const *resources;
    const char *const *users;
    const char *const *names;
} harness_fault_rule;

/* Replaces the emulator's fault rules with rules[0..n) (n <= 16; 0 clears). */
int harness_set_fault_rules(harness *h, const harness_fault_rule *rules, size_t n);

/* The request log (the last 100,000 API requests, oldest first), filtered
 * by each non-NULL argument (resource as "pods/binding"). *items (caller
 * frees with cJSON_Delete) is an array of
 * {"timeNs":<CLOCK_REALTIME ns at arrival>,"user","verb","resource",
 *  "namespace","name","code":<status; 0: no answer (reset, stall) or in
 *  flight>}. */
int harness_requests(harness *h, const char *verb, const char *resource, const char *user,
                     cJSON **items);
/* Empties the request log. */
int harness_clear_requests(harness *h);
/* Simulates an apiserver restart: every watch ends, the event history is
 * lost (older resourceVersions now answer 410 Expired), the
 * resourceVersion counter keeps increasing, objects stay. */
int harness_restart(harness *h);
/* Ends every open watch (clients re-watch from their last version). */
int harness_drop_watches(harness *h);

/* Request counters, by "verb resource" key ("list pods", "create
 * pods/binding", "watch nodes", "get /version" for non-resource paths).
 * harness_counters gives the whole JSON document (caller frees with
 * cJSON_Delete); harness_count one key (0 if absent, negative KUBE_E* on
 * error). */
int harness_counters(harness *h, cJSON **out);
int64_t harness_count(harness *h, const char *verb, const char *resource);
/* One number of the counters document, member key of object group (0 if
 * absent; negative KUBE_E* on error). E.g. ("connections", "h2"): TLS
 * connections accepted that negotiated h2 ("http/1.1" also counts clients
 * without ALPN); ("streams", "h2"): HTTP/2 requests; ("streams", "h2Open"):
 * HTTP/2 streams not yet ended (a gauge, not reset); ("threads", "started"):
 * the emulator's pooled handler threads created (a stream handed to an idle
 * one creates none). */
int64_t harness_counter(harness *h, const char *group, const char *key);
int harness_reset_counters(harness *h);

/* A plain HTTPS request to the emulator, for tests. as NULL means admin.
 * content_type NULL means application/json (when body is non-NULL). body
 * NULL sends no body. */
typedef struct harness_response {
    long status;
    char *body; /* NUL-terminated, "" when empty */
    size_t len;
    char *content_type; /* may be NULL */
} harness_response;

int harness_request(harness *h, const harness_identity *as, const char *method, const char *path,
                    const char *content_type, const char *body, harness_response *out);
/* Like harness_request, with extra request headers: headers is a
 * NULL-terminated list of "Name: value" lines (NULL for none), e.g.
 * {"Impersonate-User: alice", NULL}. Strings borrowed. */
int harness_request_headers(harness *h, const harness_identity *as, const char *method,
                            const char *path, const char *const *headers, const char *content_type,
                            const char *body, harness_response *out);
/* Like harness_request_headers with a body of body_len bytes that may hold
 * NUL bytes (a protobuf body). An "Accept:" line in headers replaces the
 * default Accept: application/json. */
int harness_request_bytes(harness *h, const harness_identity *as, const char *method,
                          const char *path, const char *const *headers, const char *content_type,
                          const char *body, size_t body_len, harness_response *out);
/* Like harness_request; *json (caller frees) is the parsed body or NULL if
 * it was not JSON. Returns KUBE_OK when a response arrived (whatever its
 * status), so tests assert on out->status. */
int harness_request_json(harness *h, const harness_identity *as, const char *method,
                         const char *path, const char *body, long *status, cJSON **json);
/* Frees what a response holds and zeroes it. */
void harness_response_free(harness_response *r);

/* Creates an object from JSON text with POST to collection_path, expecting
 * 201; *created (may be NULL) receives the answer (caller frees). Returns
 * KUBE_OK or the answer's KUBE_E* error. */
int harness_create(harness *h, const char *collection_path, const char *json, cJSON **created);

#endif
