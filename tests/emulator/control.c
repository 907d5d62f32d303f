/*
 * tests/emulator/control.c - the control API under /emulator/v1/ (admin
 * only: a member of system:masters; never subject to fault injection):
 *
 *   POST/DELETE/GET /emulator/v1/faults   set, clear, show fault injection:
 *       one rule or {"rules":[rule,...]} (at most 16; the first live rule
 *       matching a request takes it), a rule being
 *       {"action":"status"|"reset"|"stall"|"webhook", "errorRate":0..1,
 *        "errorCode":400..599, "retryAfterSeconds":N, "delayMs":N,
 *        "message":"...", "count":N (0: unlimited), "forMs":N (0: until
 *        cleared), "verbs":[...], "resources":["pods/binding",...],
 *        "users":[...], "names":[...], "webhook":"NAME"}  (lists: empty or
 *        absent match all; action "webhook": 500 "failed calling webhook
 *        \"NAME\"", as a down validating webhook, for writes by default;
 *        errorRate defaults to 1 for reset and stall, and for status when
 *        count or forMs is given unless only delayMs is, else 0)
 *   GET/DELETE /emulator/v1/requests      the request log
 *       (?verb=&resource=&user=), clear it
 *   POST /emulator/v1/restart             drop watches, forget the history
 *   POST /emulator/v1/drop-watches        end every watch
 *   GET/DELETE /emulator/v1/counters      request and connection counters, reset
 *   POST /emulator/v1/identities          {"kind":"cert"|"token","user","groups"}
 *                                         ("token": the caller's own token, which
 *                                         the emulator then accepts; else random)
 *                                         or {"kind":"serving","cn","dns","ips"}
 *
 * and the bearer tokens issued by it, and the connection counters.
 */
#include <openssl/rand.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "emu_internal.h"
#include "spawn.h"
#include "kube/util/log.h"

typedef struct token_entry {
    char *token;
    emu_user user;
} token_entry;

static pthread_mutex_t g_tok_mu = PTHREAD_MUTEX_INITIALIZER;
static token_entry *g_tokens;
static size_t g_n_tokens;
static unsigned g_serial;

int emu_tokens_add(const char *token, const emu_user *u)
{
    token_entry *t;
    int rc;

    pthread_mutex_lock(&g_tok_mu);
    t = realloc(g_tokens, (g_n_tokens + 1) * sizeof(*t));
    if (!t) {
        pthread_mutex_unlock(&g_tok_mu);
        return KUBE_ENOMEM;
    }
    g_tokens = t;
    t = &g_tokens[g_n_tokens];
    t->token = kube_strdup(token);
    rc = t->token ? emu_user_copy(&t->user, u) : KUBE_ENOMEM;
    if (rc == KUBE_OK)
        g_n_tokens++;
    else
        free(t->token);
    pthread_mutex_unlock(&g_tok_mu);
    return rc;
}

int emu_token_lookup(emu_server *s, const char *token, emu_user *out)
{
    int rc = EMU_AUTHN_FAIL;

    (void)s;
    pthread_mutex_lock(&g_tok_mu);
    for (size_t i = 0; i < g_n_tokens; i++) {
        if (!strcmp(g_tokens[i].token, token)) {
            rc = emu_user_copy(out, &g_tokens[i].user) == KUBE_OK ? EMU_AUTHN_OK : EMU_AUTHN_FAIL;
            break;
        }
    }
    pthread_mutex_unlock(&g_tok_mu);
    return rc;
}

void emu_tokens_free(void)
{
    pthread_mutex_lock(&g_tok_mu);
    for (size_t i = 0; i < g_n_tokens; i++) {
        free(g_tokens[i].token);
        emu_user_clear(&g_tokens[i].user);
    }
    free(g_tokens);
    g_tokens = NULL;
    g_n_tokens = 0;
    pthread_mutex_unlock(&g_tok_mu);
}

/* ------------------------------------------------------------------ */
/* Connection counters                                                 */
/* ------------------------------------------------------------------ */

static atomic_llong g_conns[2]; /* by EMU_PROTO_* */
static atomic_llong g_h2_streams;
static atomic_llong g_h2_open; /* a gauge: never reset */

void emu_counters_connection(int proto)
{
    atomic_fetch_add(&g_conns[proto == EMU_PROTO_H2], 1);
}

void emu_counters_h2_stream(int opened)
{
    if (opened)
        atomic_fetch_add(&g_h2_streams, 1);
    atomic_fetch_add(&g_h2_open, opened ? 1 : -1);
}

/* GET counters: the request counters plus "connections", "streams" and
 * "threads" (the pooled handler threads created, spawn.h). */
static cJSON *counters_json(void)
{
    cJSON *j = emu_counters_json(), *conns, *streams, *threads;

    conns = j ? cJSON_AddObjectToObject(j, "connections") : NULL;
    streams = conns ? cJSON_AddObjectToObject(j, "streams") : NULL;
    threads = streams ? cJSON_AddObjectToObject(j, "threads") : NULL;
    if (!threads) {
        cJSON_Delete(j);
        return NULL;
    }
    cJSON_AddNumberToObject(conns, "http/1.1", (double)atomic_load(&g_conns[EMU_PROTO_HTTP1]));
    cJSON_AddNumberToObject(conns, "h2", (double)atomic_load(&g_conns[EMU_PROTO_H2]));
    cJSON_AddNumberToObject(streams, "h2", (double)atomic_load(&g_h2_streams));
    cJSON_AddNumberToObject(streams, "h2Open", (double)atomic_load(&g_h2_open));
    cJSON_AddNumberToObject(threads, "started", (double)emu_spawn_started());
    return j;
}

static void counters_reset(void)
{
    emu_counters_reset();
    atomic_store(&g_conns[EMU_PROTO_HTTP1], 0);
    atomic_store(&g_conns[EMU_PROTO_H2], 0);
    atomic_store(&g_h2_streams, 0);
    emu_spawn_reset_started();
}

/* ------------------------------------------------------------------ */
/* Identities                                                          */
/* ------------------------------------------------------------------ */

static int strings_of(const cJSON *arr, const char **out, size_t max, size_t *n)
{
    const cJSON *v;

    *n = 0;
    cJSON_ArrayForEach(v, arr)
    {
        if (!cJSON_IsString(v) || *n >= max)
            return KUBE_EINVAL;
        out[(*n)++] = v->valuestring;
    }
    return KUBE_OK;
}

/* A file stem under <data dir>/users/ that is safe for any user name. */
static void file_stem(emu_server *s, const char *user, char *out, size_t n)
{
    char safe[64];
    size_t k = 0;
    unsigned serial;

    for (const char *p = user; *p && k + 1 < sizeof(safe); p++)
        safe[k++] = (char)((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                                   (*p >= '0' && *p <= '9') || *p == '-' || *p == '.'
                               ? *p
                               : '_');
    safe[k] = '\0';
    pthread_mutex_lock(&g_tok_mu);
    serial = ++g_serial;
    pthread_mutex_unlock(&g_tok_mu);
    snprintf(out, n, "%s/users/%s-%u", s->cfg.data_dir, safe, serial);
}

static int write_text(const char *path, const char *text, int private_)
{
    FILE *f = fopen(path, "w");
    int ok;

    if (!f)
        return KUBE_EIO;
    if (private_)
        chmod(path, 0600);
    ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? KUBE_OK : KUBE_EIO;
}

static int issue_files(emu_server *s, const emu_cert_req *cr, const char *stem, cJSON *out)
{
    char *cert = NULL, *key = NULL, cert_path[4200], key_path[4200];
    int rc = emu_certs_issue(&s->certs, cr, &cert, &key);

    snprintf(cert_path, sizeof(cert_path), "%s.crt", stem);
    snprintf(key_path, sizeof(key_path), "%s.key", stem);
    if (rc == KUBE_OK)
        rc = write_text(cert_path, cert, 0);
    if (rc == KUBE_OK)
        rc = write_text(key_path, key, 1);
    if (rc == KUBE_OK) {
        cJSON_AddStringToObject(out, "certFile", cert_path);
        cJSON_AddStringToObject(out, "keyFile", key_path);
        cJSON_AddStringToObject(out, "certPEM", cert);
    }
    free(cert);
    free(key);
    return rc;
}

/* The token of a token identity: the spec's "token" (printable, no spaces,
 * as a bearer token is) or a random one. Caller frees *out. */
static int identity_token(const cJSON *spec, char **out)
{
    const char *given = emu_json_str(spec, "token");
    unsigned char raw[24];

    *out = NULL;
    if (given) {
        for (const char *p = given; *p; p++)
            if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
                return KUBE_EINVAL;
        *out = *given ? kube_strdup(given) : NULL;
        return *given ? (*out ? KUBE_OK : KUBE_ENOMEM) : KUBE_EINVAL;
    }
    if (RAND_bytes(raw, sizeof(raw)) != 1)
        return KUBE_EIO;
    *out = emu_b64url_encode(raw, sizeof(raw));
    return *out ? KUBE_OK : KUBE_ENOMEM;
}

static int identity_user(emu_server *s, const cJSON *spec, int token, cJSON *out)
{
    const char *user = emu_json_str(spec, "user");
    const char *groups[32];
    size_t n_groups = 0;
    char stem[4096], kubeconfig[4200];
    int rc;

    if (!user || !*user ||
        strings_of(cJSON_GetObjectItemCaseSensitive(spec, "groups"), groups, 32, &n_groups))
        return KUBE_EINVAL;
    file_stem(s, user, stem, sizeof(stem));
    snprintf(kubeconfig, sizeof(kubeconfig), "%s.kubeconfig", stem);
    if (token) {
        char *tok;
        emu_user u = {0};
        rc = identity_token(spec, &tok);
        if (rc != KUBE_OK)
            return rc;
        rc = tok ? emu_user_set_name(&u, user) : KUBE_ENOMEM;
        for (size_t i = 0; rc == KUBE_OK && i < n_groups; i++)
            rc = emu_user_add_group(&u, groups[i]);
        if (rc == KUBE_OK)
            rc = emu_tokens_add(tok, &u);
        if (rc == KUBE_OK)
            rc = emu_write_kubeconfig(kubeconfig, s->url, s->certs.ca_file, user, NULL, NULL, tok);
        if (rc == KUBE_OK)
            cJSON_AddStringToObject(out, "token", tok);
        emu_user_clear(&u);
        free(tok);
    } else {
        emu_cert_req cr = {.cn = user, .orgs = groups, .n_orgs = n_groups};
        rc = issue_files(s, &cr, stem, out);
        if (rc == KUBE_OK)
            rc = emu_write_kubeconfig(kubeconfig, s->url, s->certs.ca_file, user,
                                      emu_json_str(out, "certFile"), emu_json_str(out, "keyFile"),
                                      NULL);
    }
    if (rc == KUBE_OK)
        cJSON_AddStringToObject(out, "kubeconfig", kubeconfig);
    return rc;
}

static int identity_serving(emu_server *s, const cJSON *spec, cJSON *out)
{
    const char *cn = emu_json_str(spec, "cn");
    const char *dns[32], *ips[32];
    size_t n_dns = 0, n_ips = 0;
    char stem[4096];
    emu_cert_req cr = {0};

    if (!cn || !*cn || strings_of(cJSON_GetObjectItemCaseSensitive(spec, "dns"), dns, 32, &n_dns) ||
        strings_of(cJSON_GetObjectItemCaseSensitive(spec, "ips"), ips, 32, &n_ips))
        return KUBE_EINVAL;
    cr.cn = cn;
    cr.dns = dns;
    cr.n_dns = n_dns;
    cr.ips = ips;
    cr.n_ips = n_ips;
    cr.server = 1;
    file_stem(s, cn, stem, sizeof(stem));
    return issue_files(s, &cr, stem, out);
}

static int handle_identities(emu_server *s, const cJSON *spec, emu_response *resp)
{
    const char *kind = emu_json_str(spec, "kind");
    char dir[4200];
    cJSON *out = cJSON_CreateObject();
    int rc = KUBE_EINVAL;

    snprintf(dir, sizeof(dir), "%s/users", s->cfg.data_dir);
    mkdir(dir, 0700);
    if (kind && (!strcmp(kind, "cert") || !strcmp(kind, "token")))
        rc = identity_user(s, spec, !strcmp(kind, "token"), out);
    else if (kind && !strcmp(kind, "serving"))
        rc = identity_serving(s, spec, out);
    if (rc == KUBE_OK)
        emu_response_json(resp, 201, out);
    else if (rc == KUBE_EINVAL)
        emu_response_status(resp, 400, "BadRequest",
                            "an identity needs {\"kind\":\"cert\"|\"token\",\"user\":...,"
                            "\"groups\":[...]} or {\"kind\":\"serving\",\"cn\":...,\"dns\":[...],"
                            "\"ips\":[...]}",
                            NULL);
    else
        emu_response_status(resp, 500, "InternalError", kube_strerror(rc), NULL);
    cJSON_Delete(out);
    return 1;
}

/* ------------------------------------------------------------------ */
/* Routing                                                             */
/* ------------------------------------------------------------------ */

static int ok(emu_response *resp, const char *what)
{
    cJSON *j = cJSON_CreateObject();
    int rc;

    cJSON_AddStringToObject(j, "status", what);
    rc = emu_response_json(resp, 200, j);
    cJSON_Delete(j);
    return rc;
}

static int parse_body(const emu_request *req, cJSON **out, emu_response *resp)
{
    char err[256], msg[320];

    if (emu_json_parse(req->body, req->body_len, out, err, sizeof(err)) == KUBE_OK)
        return KUBE_OK;
    snprintf(msg, sizeof(msg), "invalid JSON body: %s", err);
    emu_response_status(resp, 400, "BadRequest", msg, NULL);
    return KUBE_EBADREQUEST;
}

static int handle_faults(emu_request *req, emu_response *resp)
{
    cJSON *spec = NULL;
    char err[256];

    if (!strcmp(req->method, "DELETE")) {
        emu_faults_clear();
        return ok(resp, "cleared"), 1;
    }
    if (!strcmp(req->method, "GET")) {
        cJSON *j = emu_faults_json();
        emu_response_json(resp, 200, j);
        cJSON_Delete(j);
        return 1;
    }
    if (strcmp(req->method, "POST") && strcmp(req->method, "PUT"))
        return 0;
    if (parse_body(req, &spec, resp) != KUBE_OK)
        return 1;
    if (emu_faults_set(spec, err, sizeof(err)) != KUBE_OK)
        emu_response_status(resp, 400, "BadRequest", err, NULL);
    else
        ok(resp, "set");
    cJSON_Delete(spec);
    return 1;
}

/* GET answers the log filtered by ?verb=&resource=&user=, DELETE clears. */
static int handle_requests(emu_request *req, emu_response *resp)
{
    char *verb, *resource, *user;
    cJSON *j;

    if (!strcmp(req->method, "DELETE")) {
        emu_reqlog_clear();
        return ok(resp, "cleared"), 1;
    }
    if (strcmp(req->method, "GET"))
        return 0;
    verb = emu_query_get(req, "verb");
    resource = emu_query_get(req, "resource");
    user = emu_query_get(req, "user");
    j = emu_reqlog_json(verb, resource, user);
    if (j)
        emu_response_json(resp, 200, j);
    else
        emu_response_status(resp, 500, "InternalError", kube_strerror(KUBE_ENOMEM), NULL);
    cJSON_Delete(j);
    free(verb);
    free(resource);
    free(user);
    return 1;
}

static int dispatch(emu_server *s, emu_request *req, emu_response *resp)
{
    const char *p = req->path + strlen("/emulator/v1/");
    const char *m = req->method;

    if (!strcmp(p, "faults"))
        return handle_faults(req, resp);
    if (!strcmp(p, "requests"))
        return handle_requests(req, resp);
    if (!strcmp(p, "restart") && !strcmp(m, "POST")) {
        emu_store_restart(s->store);
        KLOG_INFO("restart: watches dropped, event history forgotten at rv %lld",
                  (long long)emu_store_rv(s->store));
        return ok(resp, "restarted"), 1;
    }
    if (!strcmp(p, "drop-watches") && !strcmp(m, "POST")) {
        emu_store_drop_watches(s->store);
        return ok(resp, "dropped"), 1;
    }
    if (!strcmp(p, "counters") && !strcmp(m, "GET")) {
        cJSON *j = counters_json();
        if (j)
            emu_response_json(resp, 200, j);
        else
            emu_response_status(resp, 500, "InternalError", kube_strerror(KUBE_ENOMEM), NULL);
        cJSON_Delete(j);
        return 1;
    }
    if (!strcmp(p, "counters") && !strcmp(m, "DELETE")) {
        counters_reset();
        return ok(resp, "reset"), 1;
    }
    if (!strcmp(p, "identities") && !strcmp(m, "POST")) {
        cJSON *spec = NULL;
        if (parse_body(req, &spec, resp) == KUBE_OK)
            handle_identities(s, spec, resp);
        cJSON_Delete(spec);
        return 1;
    }
    return 0;
}

int emu_control_handle(emu_server *s, emu_request *req, emu_response *resp)
{
    int authn = emu_authenticate(s, req, &req->user);

    if (authn != EMU_AUTHN_OK)
        return emu_respond_unauthorized(resp), 1;
    if (!emu_user_in_group(&req->user, "system:masters"))
        return emu_respond_forbidden(resp, &req->user, &req->attrs,
                                     "the control API is for "
                                     "system:masters"),
               1;
    if (strncmp(req->path, "/emulator/v1/", 13) || !dispatch(s, req, resp))
        emu_response_text(resp, 404, "404 page not found\n");
    return 1;
}
