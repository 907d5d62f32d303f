/*
 * tests/emulator/emu_internal.h - declarations shared by the emulator core
 * files (not part of the plug-in contract in emu.h).
 *
 * Memory: as stated per function. emu_obj versions are immutable and
 * reference counted: emu_obj_ref()/emu_obj_unref(); every function that
 * "returns" an emu_obj hands the caller one reference.
 */
#ifndef STICKYVM_EMU_INTERNAL_H
#define STICKYVM_EMU_INTERNAL_H

#include <stdatomic.h>

#include "emu.h"
#include "kube/util/clock.h"

#define EMU_MAX_FIELDS 12
#define EMU_MAX_RESOURCES 48

/* ------------------------------------------------------------------ */
/* json.c: JSON helpers                                                */
/* ------------------------------------------------------------------ */

/* Parses text as one JSON value. On a syntax error returns KUBE_EPARSE and
 * writes the message encoding/json would give ("invalid character 'x'
 * looking for beginning of value", "unexpected end of JSON input") to err.
 * *out is freed by the caller with cJSON_Delete(). */
int emu_json_parse(const char *text, size_t len, cJSON **out, char *err, size_t errn);
/* Unformatted print; caller frees. NULL on ENOMEM. */
char *emu_json_print(const cJSON *j);
/* Sorts the members of every object in j by key (Go map order). */
void emu_json_sort_keys(cJSON *j);
/* Moves the listed keys (NULL-terminated) of object j to the front, in that
 * order; other members keep their relative order after them. */
void emu_json_order_keys(cJSON *j, const char *const *order);
/* Returns the object at dotted path ("metadata.labels"), or NULL. */
cJSON *emu_json_at(const cJSON *j, const char *dotted);
/* The string at dotted path, or NULL when absent or not a string. */
const char *emu_json_str(const cJSON *j, const char *dotted);
/* The object member key of j, created as an empty object when absent (or
 * replaced when it is not an object). NULL on ENOMEM or j not an object. */
cJSON *emu_json_obj(cJSON *j, const char *key);
/* Replaces or adds member key of object j. item is taken over. */
int emu_json_put(cJSON *j, const char *key, cJSON *item);
int emu_json_put_str(cJSON *j, const char *key, const char *value);
/* 1 if a and b are equal JSON values. */
int emu_json_equal(const cJSON *a, const cJSON *b);

/* RFC 4122 v4 uuid, 36 chars + NUL. */
void emu_uuid(char out[37]);
/* Base64 URL alphabet without padding (Go base64.RawURLEncoding). Caller
 * frees. Decode accepts padded and std alphabet too; NULL if invalid. */
char *emu_b64url_encode(const void *data, size_t n);
unsigned char *emu_b64_decode(const char *s, size_t *n);

/* A metav1.Status failure object. details taken over (may be NULL). */
cJSON *emu_status_new(int code, const char *reason, const char *message, cJSON *details);
/* {"name":..,"group":..,"kind":..} omitting empty members. */
cJSON *emu_details(const char *name, const char *group, const char *kind);
/* Formats a message and stores a Status in *st (if st non-NULL; an
 * existing *st is freed). Returns the KUBE_E* error for code. */
int emu_fail(cJSON **st, int code, const char *reason, cJSON *details, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* KUBE_E* error matching an HTTP code and reason. */
int emu_err_for(int code, const char *reason);

/* ------------------------------------------------------------------ */
/* Selectors (selectors.c)                                             */
/* ------------------------------------------------------------------ */

enum { SEL_EQ, SEL_NEQ, SEL_IN, SEL_NOTIN, SEL_EXISTS, SEL_NOTEXISTS };

typedef struct emu_req {
    char *key;
    int op;
    char **values;
    size_t n_values;
} emu_req;

typedef struct emu_selector {
    emu_req *reqs;
    size_t n;
} emu_selector;

/* Parses a label selector ("a=b,c in (x,y),!d"). On error returns
 * KUBE_EBADREQUEST with the message in err. Free with emu_selector_free. */
int emu_label_selector_parse(const char *text, emu_selector *out, char *err, size_t errn);
/* Parses a field selector ("spec.nodeName=,status.phase!=Failed") and checks
 * each field is one of allowed (NULL-terminated). */
int emu_field_selector_parse(const char *text, const char *const *allowed, emu_selector *out,
                             char *err, size_t errn);
void emu_selector_free(emu_selector *s);
int emu_selector_empty(const emu_selector *s);

/* ------------------------------------------------------------------ */
/* Objects and the store (store.c)                                     */
/* ------------------------------------------------------------------ */

typedef struct emu_obj {
    atomic_int refs;
    int64_t rv;
    emu_resource *res;
    char *key;        /* "ns/name" or "name" */
    const char *ns;   /* points into key ("" for cluster-scoped) */
    const char *name; /* points into key */
    char *uid;
    char *json; /* the serialized object */
    size_t len;
    char **label_keys;
    char **label_vals;
    size_t n_labels;
    char *field_vals[EMU_MAX_FIELDS]; /* values of res->fields[i] */
} emu_obj;

void emu_obj_ref(emu_obj *o);
void emu_obj_unref(emu_obj *o);
/* Parses o->json into a fresh tree (caller frees). NULL on ENOMEM. */
cJSON *emu_obj_tree(const emu_obj *o);
/* 1 if o matches the label and field selectors (either may be NULL). */
int emu_obj_matches(const emu_obj *o, const emu_selector *labels, const emu_selector *fields);

/* Per-kind behaviour, filled by resources.c. */
typedef struct emu_kind_ops emu_kind_ops;

struct emu_resource {
    const emu_resource_def *def;
    int index;
    const emu_kind_ops *ops;
    const char *const *fields; /* field-selector labels, NULL-terminated */
    char registry[96];         /* "/registry/pods/" */
    char group_resource[96];   /* "pods" or "virtualmachines.kubevirt.io" */
    char *bookmark_prefix;     /* serialized empty object up to the rv */
    char *bookmark_suffix;
    struct emu_map *objects; /* key -> emu_obj (current), under the store lock */
};

enum { EV_ADDED = 0, EV_MODIFIED = 1, EV_DELETED = 2 };

typedef struct emu_event {
    int type;
    int64_t rv;
    emu_obj *obj;  /* the new version (for DELETED: last state at the delete rv) */
    emu_obj *prev; /* the previous version, NULL for ADDED */
} emu_event;

void emu_event_release(emu_event *e);

int emu_store_new(emu_store **out, int history);
void emu_store_free(emu_store *s);
/* Adds a resource type. */
int emu_store_add_resource(emu_store *s, const emu_resource_def *def, const emu_kind_ops *ops,
                           emu_resource **out);
emu_resource *emu_store_find(emu_store *s, const char *group, const char *version,
                             const char *plural);
size_t emu_store_n_resources(emu_store *s);
emu_resource *emu_store_resource_at(emu_store *s, size_t i);
/* The current (latest) resourceVersion. */
int64_t emu_store_rv(emu_store *s);

/* The current version of an object (a reference) or NULL. */
emu_obj *emu_store_lookup(emu_store *s, emu_resource *r, const char *ns, const char *name);

/* A write. Under the store's write lock, fn sees the current object
 * (parsed, NULL when absent) and decides:
 *   - return KUBE_OK with *next a new tree: the object is written
 *     (ADDED or MODIFIED); metadata.resourceVersion is set by the store.
 *     A tree serializing exactly like the current version is a no-op.
 *   - return KUBE_OK with *next NULL and delete 1: the object is deleted.
 *   - return an error with *st a Status: nothing is written.
 * fn owns cur (may reuse it as *next). Up to two steps can be made in one
 * call (a pod's graceful MODIFIED then DELETED): fn sets *again to 1 to be
 * called once more with the result. *out receives the final version. */
typedef int (*emu_write_fn)(void *ctx, cJSON *cur, int64_t next_rv, cJSON **next, int *del,
                            int *again, cJSON **st);
int emu_store_write(emu_store *s, emu_resource *r, const char *ns, const char *name,
                    emu_write_fn fn, void *ctx, emu_obj **out, cJSON **st);

/* Lists. at_rv 0 means the current state, otherwise the state at that
 * resourceVersion (KUBE_EGONE if older than the history, KUBE_ERANGE if
 * newer than the current one). start is an absolute key to begin at
 * (inclusive) or NULL. limit 0 means all. */
typedef struct emu_list_query {
    const char *ns; /* NULL: all namespaces */
    const emu_selector *labels;
    const emu_selector *fields;
    int64_t at_rv;
    const char *start;
    int start_exclusive; /* start itself is excluded (continue tokens) */
    int64_t limit;
} emu_list_query;

typedef struct emu_list_result {
    emu_obj **items; /* references */
    size_t n;
    int64_t rv;        /* the list's resourceVersion */
    int more;          /* more keys after the last item */
    int64_t remaining; /* keys after the last item */
} emu_list_result;

int emu_store_list(emu_store *s, emu_resource *r, const emu_list_query *q, emu_list_result *out);
void emu_list_result_free(emu_list_result *res);

/* Watch support. emu_store_events copies up to max events with rv > after
 * (of any resource) into out (references); *upto receives the rv the caller
 * has now seen everything up to. Returns KUBE_EGONE when after is older
 * than the history (then *oldest receives the oldest rv a watch could
 * start from, for the message). */
int emu_store_events(emu_store *s, int64_t after, emu_event *out, size_t max, size_t *n,
                     int64_t *upto, int64_t *oldest);
/* Checks that a watch may start at rv (same rule as emu_store_events). */
int emu_store_check_rv(emu_store *s, int64_t rv, int64_t *oldest);
/* Waits until an event with rv > after exists, the epoch changes or
 * timeout_ms passes. Returns the current watch epoch. */
uint64_t emu_store_wait(emu_store *s, int64_t after, int timeout_ms);
uint64_t emu_store_epoch(emu_store *s);
/* Forgets the history (restart): older resourceVersions answer 410.
 * Also bumps the epoch (every watch ends). */
void emu_store_restart(emu_store *s);
/* Bumps the epoch: every watch ends. */
void emu_store_drop_watches(emu_store *s);
/* Wakes every waiter (shutdown). */
void emu_store_wake_all(emu_store *s);

/* ------------------------------------------------------------------ */
/* Server internals (server.c, main.c)                                 */
/* ------------------------------------------------------------------ */

/* Sets up TLS and listens on 127.0.0.1 (fills s->port and s->url). */
int emu_server_prepare(emu_server *s);
int emu_server_run(emu_server *s);   /* until stopped; KUBE_OK */
void emu_server_stop(emu_server *s); /* async-signal-safe */
int emu_server_stopping(const emu_server *s);
const emu_plugin *const *emu_plugins(size_t *n);

/* Writes bytes that are already framed as chunks to a begun stream. */
int emu_stream_write_raw(emu_request *req, const void *data, size_t n);

/* Where a streamed answer goes: HTTP/1.1 chunks on the connection
 * (server.c) or DATA frames of an HTTP/2 stream (h2.c). Each protocol
 * fills req->sink and req->sink_ctx (passed as ctx) before the pipeline
 * runs; the emu_stream_* functions call these. Called only from the thread
 * running the request. Returns as the emu_stream_* functions do. */
typedef struct emu_sink_ops {
    int (*begin)(void *ctx, const emu_response *r);             /* status and headers */
    int (*write)(void *ctx, const void *data, size_t n);        /* body bytes */
    int (*write_framed)(void *ctx, const void *data, size_t n); /* body framed as chunks */
    int (*end)(void *ctx);
    int (*should_stop)(void *ctx); /* 1: stop streaming */
} emu_sink_ops;

/* Runs the request pipeline of emu.h (attributes, control API, counters,
 * authentication, authorization, faults, routes, built-ins) on req, which
 * the protocol filled (method, target, path, query, headers, body,
 * peer_cert, remote_addr, conn, server, sink): the answer is left in resp
 * (zeroed by the caller), or was streamed through req->sink
 * (resp->streamed). The protocol then sends resp and calls
 * emu_request_finish() on the same thread. */
void emu_request_serve(emu_request *req, emu_response *resp);
/* Logs the request, frees what the pipeline put in req (user, attributes)
 * and everything resp owns (zeroing it). start_ms: kube_now_ms() when the
 * request arrived. */
void emu_request_finish(emu_request *req, emu_response *resp, int64_t start_ms);
/* Splits a request target into its percent-decoded path and its raw query
 * ("" when none). *path and *query are the caller's to free(). Returns
 * KUBE_OK or KUBE_ENOMEM (nothing allocated). */
int emu_target_split(const char *target, char **path, char **query);

/* The header fields every answer carries, in order: Audit-Id,
 * Cache-Control, Content-Type, Date, then the response's own headers.
 * Strings are borrowed from the response and from the struct itself. */
typedef struct emu_field {
    const char *name;
    const char *value;
} emu_field;

typedef struct emu_fields {
    emu_field v[EMU_MAX_RESP_HEADERS + 4];
    size_t n;
    char audit[37];
    char date[64];
} emu_fields;

/* Fills f from r (a fresh Audit-Id, the current Date). */
void emu_response_fields(const emu_response *r, emu_fields *f);
/* Frees everything r owns and zeroes it. */
void emu_response_clear(emu_response *r);

/* Limits on a request's header section (HTTP/1.1 head, HTTP/2 header
 * list): bytes and fields. Beyond them the answer is 431. */
#define EMU_MAX_HEADER_BYTES (64 * 1024)
#define EMU_MAX_HEADERS 128

/* Authenticates with the installed hook. */
int emu_authenticate(emu_server *s, const emu_request *req, emu_user *out);
/* Computes req->attrs from method, path and query. */
int emu_request_attrs(emu_request *req);

/* ------------------------------------------------------------------ */
/* Handlers                                                            */
/* ------------------------------------------------------------------ */

/* resources.c: built-in API. Returns 1 when answered, 0 if the path is not
 * an API path. */
int emu_api_handle(emu_server *s, emu_request *req, emu_response *resp);
int emu_resources_init(emu_server *s);
/* discovery.c */
int emu_discovery_handle(emu_server *s, emu_request *req, emu_response *resp);
int emu_discovery_run_hooks(emu_server *s, cJSON *groups);
/* table.c: answers o as a meta.k8s.io Table when the Accept header asks
 * for one (kubectl get), else as JSON. */
int emu_table_or_obj(emu_response *resp, const emu_request *req, const emu_resource *r,
                     const emu_obj *o);
/* Builds a Table for a list (items borrowed). Returns 1 if answered. */
int emu_table_list(emu_response *resp, const emu_request *req, const emu_resource *r,
                   emu_obj *const *items, size_t n, int64_t rv, const char *cont,
                   int64_t remaining);
/* resources.c: decodes a request body (JSON, or protobuf through
 * protobuf.c) into *out (caller frees); on error *st is the Status
 * kube-apiserver answers (400 naming kind, or 415). */
int emu_decode_body(const emu_request *req, const char *kind, cJSON **out, cJSON **st);
/* resources.c: deletes ns/name of r as a DELETE with DeleteOptions opts
 * (may be NULL: gracePeriodSeconds and preconditions are honoured) does,
 * graceful pods included. On error *st is the Status. */
int emu_object_delete(emu_server *s, emu_resource *r, const char *ns, const char *name,
                      const cJSON *opts, cJSON **st);
/* protobuf.c: 1 if content_type is application/vnd.kubernetes.protobuf. */
int emu_pb_is_protobuf(const char *content_type);
/* protobuf.c: decodes req's protobuf body (the "k8s\0" runtime.Unknown
 * envelope) of a DeleteOptions, an Eviction or a SelfSubject{Access,Rules}Review
 * into its JSON form (*out,
 * caller frees; "kind" and "apiVersion" from the envelope). Other kinds
 * are 415, malformed bodies 400 naming kind (*st, caller frees). */
int emu_pb_decode(const emu_request *req, const char *kind, cJSON **out, cJSON **st);
/* eviction.c: POST pods/NAME/eviction (policy/v1 or v1beta1 Eviction):
 * honours PodDisruptionBudgets, then deletes the pod. Returns 1 (answered). */
int emu_eviction_handle(emu_server *s, emu_request *req, emu_response *resp);
/* table.c: Table (kubectl get -w) and PartialObjectMetadata watch events. */
typedef struct emu_table_watch {
    int on;      /* the watch asked for a transform */
    int table;   /* 1: Tables, 0: PartialObjectMetadata */
    int headers; /* the next Table carries the column definitions */
    int include; /* includeObject */
    char version[16];
} emu_table_watch;
/* Fills *tw from req's Accept and includeObject for a watch of r (tw->on
 * 0: plain objects). An Accept of nothing servable (406), of
 * PartialObjectMetadataList (406) or a bad includeObject (400) is answered
 * in resp and returns KUBE_EINVAL. */
int emu_table_watch_begin(const emu_request *req, const emu_resource *r, emu_response *resp,
                          emu_table_watch *tw);
/* A watch event's object (JSON text of r's kind) as the one-row Table or
 * the PartialObjectMetadata asked for, as a string the caller frees; NULL
 * on ENOMEM or unparsable JSON. */
char *emu_table_watch_object(emu_table_watch *tw, const emu_resource *r, const char *json,
                             size_t len);
/* list.c / watch.c */
/* The 422 for invalid ListOptions: "resourceVersionMatch: Forbidden: <detail>". */
int emu_list_options_invalid(emu_response *resp, const char *detail);
int emu_list_handle(emu_server *s, emu_request *req, emu_resource *r, emu_response *resp);
int emu_watch_handle(emu_server *s, emu_request *req, emu_resource *r, emu_response *resp);
/* patch.c: applies a patch of the given content type to obj (in place or
 * replacing *obj). Errors answer like kube-apiserver (400/415/422). */
int emu_patch_apply(cJSON **obj, const char *content_type, const char *body, size_t len,
                    const emu_resource *r, cJSON **st);
/* patch.c: 415 unless content_type is a patch type r accepts. */
int emu_patch_check_type(const char *content_type, const emu_resource *r, cJSON **st);
/* control.c */
int emu_control_handle(emu_server *s, emu_request *req, emu_response *resp);
/* faults.c: 1 when a fault took the request: resp holds the answer, or
 * resp->abort is set (close the connection without one). A "stall" rule
 * holds the calling thread until the rule expires, the rules change or
 * the server stops. */
int emu_faults_apply(emu_server *s, const emu_request *req, emu_response *resp);
/* Replaces the rules with spec (one rule object or {"rules":[...]}, see
 * control.c); spec is borrowed. KUBE_EINVAL with err filled when invalid
 * (the old rules stay). */
int emu_faults_set(const cJSON *spec, char *err, size_t errn);
/* Removes every rule and releases stalled requests. */
void emu_faults_clear(void);
/* {"active":bool,"rules":[...]} with each rule's remaining count; caller
 * frees. */
cJSON *emu_faults_json(void);

/* reqlog.c: the request log. emu_reqlog_add records req as it arrives
 * (authenticated) and returns its id (0 when not recorded);
 * emu_reqlog_done sets the status code it got. emu_reqlog_json gives
 * {"items":[...]} oldest first, filtered by the non-NULL arguments (caller
 * frees). emu_reqlog_clear empties it and frees its memory. */
uint64_t emu_reqlog_add(const emu_request *req);
void emu_reqlog_done(uint64_t id, int code);
cJSON *emu_reqlog_json(const char *verb, const char *resource, const char *user);
void emu_reqlog_clear(void);
void emu_counters_count(const emu_attrs *a);
cJSON *emu_counters_json(void);
void emu_counters_reset(void);
/* control.c: connection counters, reported by GET /emulator/v1/counters as
 * "connections":{"http/1.1":N,"h2":N} (TLS connections accepted, by the
 * ALPN protocol served) and "streams":{"h2":N,"h2Open":M} (HTTP/2 requests
 * received; streams not yet freed, i.e. open or with a handler still
 * running), plus "threads":{"started":N} (spawn.h), and zeroed with the
 * request counters (except the h2Open gauge). Thread-safe. */
enum { EMU_PROTO_HTTP1 = 0, EMU_PROTO_H2 = 1 };
void emu_counters_connection(int proto);
/* opened 1: a stream began; 0: a stream was freed. */
void emu_counters_h2_stream(int opened);
/* tokens (control.c) */
int emu_tokens_add(const char *token, const emu_user *u);
void emu_tokens_free(void);
/* mirror.c: keeps core/v1 and events.k8s.io/v1 events as one resource.
 * emu_events_mirror() copies the current state of ns/name in r (an events
 * resource; other resources are ignored) to the other API's store. */
int emu_events_mirror_init(emu_server *s);
void emu_events_mirror(emu_server *s, const emu_resource *r, const char *ns, const char *name);
/* seed.c */
int emu_seed(emu_server *s);

/* kinds.c: field errors, validation, normalization, per-kind hooks */
typedef struct emu_ferr {
    const char *type; /* "FieldValueInvalid", "FieldValueRequired", ... */
    char *field;
    char *body; /* "Invalid value: \"x\": ..." */
} emu_ferr;

typedef struct emu_ferrs {
    emu_ferr items[16];
    size_t n;
} emu_ferrs;

void emu_ferr_add(emu_ferrs *e, const char *type, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void emu_ferrs_free(emu_ferrs *e);
/* Builds the 422 Invalid Status for r/name from errs (freed). */
int emu_invalid(cJSON **st, const emu_resource *r, const char *name, emu_ferrs *errs);
/* Validates metadata.name and labels. */
int emu_validate_meta(const emu_resource *r, const cJSON *obj, cJSON **st);
/* Orders keys as kube-apiserver serializes the kind. */
void emu_normalize(const emu_resource *r, cJSON *obj);
/* Re-orders only metadata (after the store set resourceVersion). */
void emu_normalize_meta(const emu_resource *r, cJSON *obj);

extern const struct emu_kind_ops emu_pod_ops, emu_node_ops, emu_namespace_ops, emu_configmap_ops,
    emu_event_ops, emu_eventsk8s_ops, emu_lease_ops, emu_custom_ops, emu_generic_ops;
extern const char *const emu_pod_fields[], *const emu_node_fields[], *const emu_event_fields[];

/* Kinds: the per-resource hooks resources.c uses (defaults, validation). */
struct emu_kind_ops {
    /* called on create after metadata checks, may add defaults */
    int (*on_create)(emu_resource *r, cJSON *obj, cJSON **st);
    /* called on update with the old object; may copy fields or refuse */
    int (*on_update)(emu_resource *r, const cJSON *old, cJSON *obj, int status_only, cJSON **st);
    /* extracts the field-selector values into vals (strings, may be "") */
    void (*fields)(const cJSON *obj, const char **vals);
    /* top-level key order (NULL-terminated) for typed objects */
    const char *const *order;
    /* the serialized empty object (for BOOKMARK), with "%RV%" for the rv */
    const char *bookmark;
    /* metadata.generation is maintained (CRDs) */
    int generation;
};

#endif
