/*
 * tests/emulator/emu.h - the internal contract of the API emulator
 * (stickyvm-emulator): a test-only kube-apiserver v1.23 look-alike that the
 * tests, benchmarks, e2e suite and demo run against.
 *
 * Request pipeline (server.c), for every request on the TLS port, HTTP/1.1
 * or an HTTP/2 stream (h2.c; ALPN "h2" unless --disable-http2):
 *
 *   parse -> request attributes -> /emulator/ control API (admin only,
 *         not counted, no faults) -> counters -> authenticate (hook; 401
 *         unless the path is /healthz, /livez, /readyz or /version)
 *         -> authorize (hook; 403) -> fault injection -> routes (hooks)
 *         -> built-in dispatch (discovery, resources, list, watch)
 *
 * Plug-ins (tests/emulator/authz.c, tests/emulator/aggregator.c, owned by
 * other engineers) do not edit main.c: each file registers itself from a
 * constructor,
 *
 *     static const emu_plugin plugin = {.name = "authz", .flag = ..., .init = ...};
 *     __attribute__((constructor)) static void reg(void) { emu_plugin_register(&plugin); }
 *
 * and in init() installs its hooks with emu_set_authenticator(),
 * emu_set_authorizer(), emu_add_route(), emu_add_discovery() and
 * emu_resource_register(). Until a hook is installed the defaults are: a
 * client certificate signed by the emulator CA authenticates as CN = user,
 * O = groups; a bearer token made with the control API authenticates as its
 * user; everybody authenticated is allowed everything; anything else is a
 * 401 Status.
 *
 * Threads: one thread per connection, plus one per HTTP/2 stream (its
 * request runs there). Hooks are called concurrently from any of these
 * threads and must be thread-safe. Hooks are installed in
 * init(), before the first connection is accepted, and never change after.
 *
 * Errors follow kube/util/errors.h: 0 or a negative KUBE_E* code.
 * Memory: stated above each function. "borrowed" means the callee keeps no
 * reference beyond the call; strings in emu_request and emu_attrs live as
 * long as the request.
 */
#ifndef STICKYVM_EMU_H
#define STICKYVM_EMU_H

#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/util/buf.h"
#include "kube/util/errors.h"

typedef struct emu_server emu_server;
typedef struct emu_conn emu_conn;
struct emu_sink_ops; /* emu_internal.h */

/* ------------------------------------------------------------------ */
/* Users and request attributes                                        */
/* ------------------------------------------------------------------ */

/* An authenticated identity (user.Info). All strings owned by the struct;
 * free with emu_user_clear(). extra is NULL or a cJSON object mapping a key
 * to an array of strings. */
typedef struct emu_user {
    char *name;
    char *uid;
    char **groups;
    size_t n_groups;
    cJSON *extra;
} emu_user;

/* Sets the name (copied). Returns KUBE_OK or KUBE_ENOMEM. */
int emu_user_set_name(emu_user *u, const char *name);
/* Appends a group (copied) unless already present. */
int emu_user_add_group(emu_user *u, const char *group);
/* 1 if the user is in group, else 0. */
int emu_user_in_group(const emu_user *u, const char *group);
/* Deep copy of src into *dst (dst zeroed first). */
int emu_user_copy(emu_user *dst, const emu_user *src);
/* Frees everything the user owns and zeroes it. */
void emu_user_clear(emu_user *u);

/* What the request is, as kube-apiserver's RequestInfo computes it.
 * For a resource request (is_resource 1) verb is one of get, list, watch,
 * create, update, patch, delete, deletecollection; for a non-resource
 * request it is the lower-case HTTP method and only path is meaningful.
 * Empty strings (never NULL) for parts that are absent. Owned by the
 * request. */
typedef struct emu_attrs {
    int is_resource;
    const char *verb;
    const char *path;       /* URL path, decoded, without the query */
    const char *api_prefix; /* "api" or "apis" ("" for non-resource) */
    const char *api_group;  /* "" for core */
    const char *api_version;
    const char *namespace_;
    const char *resource;    /* plural, e.g. "pods" */
    const char *subresource; /* "binding", "status", "pin", ... */
    const char *name;
} emu_attrs;

/* ------------------------------------------------------------------ */
/* Requests and responses                                              */
/* ------------------------------------------------------------------ */

typedef struct emu_header {
    char *name; /* as received (compare case-insensitively) */
    char *value;
} emu_header;

typedef struct emu_request {
    const char *method; /* "GET", "POST", ... */
    const char *target; /* request target as received, with query */
    const char *path;   /* percent-decoded path, no query */
    const char *query;  /* raw query after '?', "" if none */
    const emu_header *headers;
    size_t n_headers;
    const char *body; /* NUL-terminated; "" if none */
    size_t body_len;
    X509 *peer_cert;         /* the client certificate the peer presented, NOT
                              * verified: check it with emu_certs_verify_client()
                              * (borrowed, NULL if none) */
    const char *remote_addr; /* "127.0.0.1:54321" */
    emu_user user;           /* filled by authentication */
    emu_attrs attrs;         /* filled before authentication */
    emu_conn *conn;          /* the connection it came on */
    emu_server *server;
    const struct emu_sink_ops *sink; /* how streamed answers reach the client */
    void *sink_ctx;
    uint64_t log_id; /* its entry in the request log (0: none) */
} emu_request;

/* Returns the first header value with that name (case-insensitive), or
 * NULL. Borrowed from the request. */
const char *emu_header_get(const emu_request *req, const char *name);
/* Returns the query parameter value, percent-decoded, or NULL when absent.
 * The caller frees the result with free(). */
char *emu_query_get(const emu_request *req, const char *key);

#define EMU_MAX_RESP_HEADERS 8

/* A buffered answer. status 0 means "not answered yet". Streamed answers
 * (emu_stream_begin) set streamed and leave body empty. Everything is owned
 * by the response and freed by the server after sending. */
typedef struct emu_response {
    int status;
    char content_type[64];
    kube_buf body;
    emu_header headers[EMU_MAX_RESP_HEADERS];
    size_t n_headers;
    int streamed;
    int close; /* close the connection after this answer */
    int abort; /* close the connection without any answer (a crashed server) */
} emu_response;

/* Adds a response header (both strings copied). KUBE_ERANGE when full. */
int emu_response_header(emu_response *r, const char *name, const char *value);
/* Sets status and a JSON body (printed unformatted). */
int emu_response_json(emu_response *r, int status, const cJSON *body);
/* Sets status and a JSON body that is already text (copied). */
int emu_response_raw(emu_response *r, int status, const char *content_type, const char *body,
                     size_t len);
/* Sets a plain-text answer, e.g. 404 "404 page not found\n". */
int emu_response_text(emu_response *r, int status, const char *text);

/* A metav1.Status failure. reason is the StatusReason ("NotFound"),
 * details NULL or an object that is taken over (freed by this call).
 * The answer is
 * {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
 *  "message":...,"reason":...,"details":...,"code":code}. */
int emu_response_status(emu_response *r, int code, const char *reason, const char *message,
                        cJSON *details);
/* The standard 401: {"message":"Unauthorized","reason":"Unauthorized"}. */
int emu_respond_unauthorized(emu_response *r);
/* The standard RBAC 403 for attrs, e.g. pods is forbidden: User "alice"
 * cannot list resource "pods" in API group "" in the namespace "default".
 * why (may be NULL or "") is appended after ": " as the authorizer reason. */
int emu_respond_forbidden(emu_response *r, const emu_user *u, const emu_attrs *a, const char *why);

/* Streaming (watch, proxied streams): begin sends the status line and the
 * headers of r (status, content_type, headers) with Transfer-Encoding:
 * chunked (HTTP/2: a HEADERS frame); each write sends one chunk (HTTP/2:
 * DATA); end sends the last chunk (HTTP/2: END_STREAM). A write returns
 * KUBE_EIO once the peer is gone (HTTP/2: the stream was reset). After
 * begin, the handler must not use r->body. */
int emu_stream_begin(emu_request *req, emu_response *r);
int emu_stream_write(emu_request *req, const void *data, size_t n);
int emu_stream_end(emu_request *req);
/* 1 when the server is shutting down or the connection was told to stop
 * (drop-watches, restart). Streams poll this between writes. */
int emu_stream_should_stop(const emu_request *req);

/* ------------------------------------------------------------------ */
/* Hooks                                                               */
/* ------------------------------------------------------------------ */

enum {
    EMU_AUTHN_NONE = 0, /* no credentials this authenticator understands */
    EMU_AUTHN_OK = 1,   /* *out filled */
    EMU_AUTHN_FAIL = 2, /* credentials present but invalid: 401 */
};
/* Fills out (zeroed on entry) from the request's peer certificate, headers
 * (Authorization: Bearer) and so on. Returns one of EMU_AUTHN_*. The server
 * adds "system:authenticated" to the groups of an authenticated user. */
typedef int (*emu_authn_fn)(void *ctx, const emu_request *req, emu_user *out);

enum {
    EMU_AUTHZ_ALLOW = 1,
    EMU_AUTHZ_DENY = 0,
};
/* Decides whether u may do attrs. why (size n, may be left empty) receives
 * the reason appended to the 403 message. Returns one of EMU_AUTHZ_*. */
typedef int (*emu_authz_fn)(void *ctx, const emu_user *u, const emu_attrs *a, char *why, size_t n);

/* A route sees every authenticated and authorized request (after faults)
 * before the built-in handlers. Returns 1 when it answered (filled resp or
 * streamed), 0 to pass the request on, or a KUBE_E* code (answered as 500).
 * The aggregation proxy is a route for /apis/<aggregated group>/... */
typedef int (*emu_route_fn)(void *ctx, emu_request *req, emu_response *resp);

/* Lets a plug-in add API groups to discovery: called while /apis is
 * answered, with the APIGroupList "groups" array to append
 * {"name","versions":[{"groupVersion","version"}],"preferredVersion"} to. */
typedef int (*emu_discovery_fn)(void *ctx, cJSON *groups);

/* A plug-in: registered from a constructor in its own file. */
typedef struct emu_plugin {
    const char *name;
    /* Offered each command-line flag main.c does not know ("--foo", value
     * or NULL for "--foo" without "=value"). Returns 1 if consumed, 0 if
     * not this plug-in's, or KUBE_ECONFIG (the emulator exits). May be
     * NULL. */
    int (*flag)(const char *name, const char *value);
    /* Called once after the certificates, the store and the built-in
     * resources exist and before serving. May be NULL. */
    int (*init)(emu_server *s);
    /* Called once at shutdown after the last connection ended. May be NULL. */
    void (*fini)(emu_server *s);
} emu_plugin;

/* Registers p (borrowed, must be static). Call from a constructor. At most
 * 16 plug-ins. */
void emu_plugin_register(const emu_plugin *p);

/* Installers, valid only inside a plug-in's init(). ctx is borrowed and
 * passed to every call. The last authenticator/authorizer installed wins
 * (an authenticator may call emu_default_authenticate to chain); routes
 * and discovery hooks run in installation order. */
void emu_set_authenticator(emu_server *s, emu_authn_fn fn, void *ctx);
void emu_set_authorizer(emu_server *s, emu_authz_fn fn, void *ctx);
int emu_add_route(emu_server *s, emu_route_fn fn, void *ctx);
int emu_add_discovery(emu_server *s, emu_discovery_fn fn, void *ctx);

/* The default authenticator: x509 client certificate verified against the
 * emulator CA (CN = name, O = groups), then control-API bearer tokens. */
int emu_default_authenticate(void *ctx, const emu_request *req, emu_user *out);
/* Looks up a bearer token issued through the control API
 * (POST /emulator/v1/identities {"kind":"token",...}). Returns
 * EMU_AUTHN_OK and fills out, or EMU_AUTHN_FAIL. */
int emu_token_lookup(emu_server *s, const char *token, emu_user *out);

/* ------------------------------------------------------------------ */
/* Certificates (certs.c)                                              */
/* ------------------------------------------------------------------ */

/* Everything generated at startup under the data dir. Paths are absolute
 * and owned by the struct; X509/EVP_PKEY owned too. */
typedef struct emu_certs {
    X509 *ca_cert; /* cluster CA: signs serving and client certs */
    EVP_PKEY *ca_key;
    X509 *fp_ca_cert; /* front-proxy CA (requestheader-client-ca) */
    EVP_PKEY *fp_ca_key;
    char *ca_pem;            /* PEM of ca_cert */
    char *fp_ca_pem;         /* PEM of fp_ca_cert */
    char *ca_file;           /* <dir>/ca.crt */
    char *ca_key_file;       /* <dir>/ca.key */
    char *serving_cert_file; /* <dir>/serving.crt: 127.0.0.1, ::1, localhost */
    char *serving_key_file;
    char *admin_cert_file; /* <dir>/admin.crt: CN=admin, O=system:masters */
    char *admin_key_file;
    char *fp_ca_file; /* <dir>/front-proxy-ca.crt */
    char *fp_ca_key_file;
    char *fp_client_cert_file; /* <dir>/front-proxy-client.crt, CN=front-proxy-client */
    char *fp_client_key_file;
} emu_certs;

/* What to issue. cn required; orgs/dns/ips may be empty. server 1 makes a
 * serverAuth certificate (with SANs), else clientAuth. front_proxy 1 signs
 * with the front-proxy CA instead of the cluster CA. */
typedef struct emu_cert_req {
    const char *cn;
    const char *const *orgs;
    size_t n_orgs;
    const char *const *dns;
    size_t n_dns;
    const char *const *ips;
    size_t n_ips;
    int server;
    int front_proxy;
    int days; /* 0: 365 */
} emu_cert_req;

/* Generates the CAs and certificates and writes them (keys mode 0600) to
 * dir. Returns KUBE_OK, KUBE_EIO or KUBE_ENOMEM. Free with
 * emu_certs_free(). */
int emu_certs_init(emu_certs *c, const char *dir);
void emu_certs_free(emu_certs *c);
/* Issues a certificate and a fresh EC P-256 key; *cert_pem and *key_pem are
 * PEM strings the caller frees with free(). */
int emu_certs_issue(const emu_certs *c, const emu_cert_req *req, char **cert_pem, char **key_pem);
/* 1 if cert is a valid clientAuth certificate signed by the cluster CA
 * (front_proxy 0) or the front-proxy CA (front_proxy 1), else 0. */
int emu_certs_verify_client(const emu_certs *c, X509 *cert, int front_proxy);
/* Writes a kubeconfig for server url with a client certificate or a token
 * (exactly one of cert_file/key_file or token non-NULL). */
int emu_write_kubeconfig(const char *path, const char *url, const char *ca_file, const char *user,
                         const char *cert_file, const char *key_file, const char *token);

/* ------------------------------------------------------------------ */
/* Resources and the store                                             */
/* ------------------------------------------------------------------ */

typedef struct emu_store emu_store;

/* A create handler for a virtual (not stored) resource such as
 * SubjectAccessReview or TokenReview: body is the parsed request body
 * (borrowed). Answers resp. */
typedef int (*emu_virtual_create_fn)(emu_server *s, emu_request *req, const cJSON *body,
                                     emu_response *resp);

/* One served resource. Strings static (borrowed). */
typedef struct emu_resource_def {
    const char *group; /* "" for core */
    const char *version;
    const char *plural;      /* "pods" */
    const char *singular;    /* "pod" */
    const char *kind;        /* "Pod" */
    const char *list_kind;   /* "PodList" */
    const char *short_names; /* comma-separated, e.g. "po" or NULL */
    const char *categories;  /* comma-separated, e.g. "all" or NULL */
    int namespaced;
    int has_status; /* a /status subresource */
    int custom;     /* CRD-style: keys sorted, generation, list "continue":"" */
    emu_virtual_create_fn virtual_create; /* non-NULL: create-only, not stored */
} emu_resource_def;

/* A served resource with its store. Opaque. */
typedef struct emu_resource emu_resource;

/* Adds a resource type (for example apiregistration.k8s.io/v1 apiservices,
 * or authorization.k8s.io/v1 subjectaccessreviews with virtual_create).
 * Only inside a plug-in's init(). def is borrowed and must stay valid.
 * Returns KUBE_OK, KUBE_EEXIST or KUBE_ENOMEM. */
int emu_resource_register(emu_server *s, const emu_resource_def *def);
/* Finds a served resource by group, version and plural; NULL if none. */
emu_resource *emu_resource_find(emu_server *s, const char *group, const char *version,
                                const char *plural);
const emu_resource_def *emu_resource_definition(const emu_resource *r);

/* Store access for plug-ins and the seeder. Objects are returned as fresh
 * cJSON trees the caller frees with cJSON_Delete(). ns is NULL for
 * cluster-scoped resources. These go through the same validation,
 * defaulting, resourceVersion and watch machinery as HTTP requests; on
 * failure *status_out (may be NULL) receives the Status that the HTTP API
 * would have answered (caller frees). */
int emu_store_get(emu_server *s, emu_resource *r, const char *ns, const char *name, cJSON **out);
int emu_store_create(emu_server *s, emu_resource *r, const char *ns, const cJSON *obj, cJSON **out,
                     cJSON **status_out);
/* Calls fn for each stored object of r (in namespace ns, or all when NULL)
 * at one consistent resourceVersion; obj is borrowed for the call. fn
 * returning non-zero stops the walk and is returned. */
int emu_store_each(emu_server *s, emu_resource *r, const char *ns,
                   int (*fn)(void *ctx, const cJSON *obj), void *ctx);

/* ------------------------------------------------------------------ */
/* The server                                                          */
/* ------------------------------------------------------------------ */

typedef struct emu_config {
    char *data_dir;               /* --data-dir (created if missing) */
    int port;                     /* --port, 0 picks a free one */
    int64_t bookmark_interval_ms; /* --bookmark-interval-ms, default 60000 */
    int history;                  /* --history, event history size, default 10000 */
    int nodes;                    /* --nodes N seeds node-0.. */
    int pods;                     /* --pods N seeds unscheduled pods in default */
    int demo;                     /* --demo */
    int verbosity;                /* --v */
    int idle_timeout_ms;          /* --idle-timeout-ms, default 120000 */
    size_t max_body;              /* --max-body-bytes, default 3 MiB (etcd limit) */
    int http2;                    /* offer h2 by ALPN: 1 unless --disable-http2 */
} emu_config;

/* Server-wide state. Plug-ins may read cfg, certs, url and data_dir. */
struct emu_server {
    emu_config cfg;
    emu_certs certs;
    char url[64]; /* "https://127.0.0.1:PORT" */
    int port;
    emu_store *store;
    /* the rest is private to the emulator core */
    struct emu_private *priv;
};

/* The running server (one per process). */
emu_server *emu_server_get(void);

#endif
