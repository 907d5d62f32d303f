/*
 * kube/transport/config_kubeconfig.c - kubeconfig files read as client-go's
 * clientcmd reads them: a KUBECONFIG list merged (the first file to define
 * a name or set current-context wins), the current context's cluster and
 * user, relative paths resolved per file, errors naming file and field.
 */
#include "kube/util/clock.h"
#include "kube/transport/config_int.h"

/* One entry (a context, cluster or user) and the file that defines it. */
typedef struct kc_entry {
    kc_loader *owner;
    int index;         /* its position in owner's list, for messages */
    yaml_node_t *body; /* its context/cluster/user mapping */
} kc_entry;

static yaml_node_t *ky_node(kc_loader *l, int index)
{
    return yaml_document_get_node(&l->doc, index);
}

/* The value of key in a mapping node, or NULL. */
static yaml_node_t *ky_get(kc_loader *l, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = ky_node(l, p->key);
        if (k && k->type == YAML_SCALAR_NODE && strcmp((char *)k->data.scalar.value, key) == 0)
            return ky_node(l, p->value);
    }
    return NULL;
}

/* A YAML null: absent, empty or the plain words ~ / null. */
static int ky_is_null(const yaml_node_t *n)
{
    const char *v;

    if (!n)
        return 1;
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    v = (const char *)n->data.scalar.value;
    return !*v || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
           strcmp(v, "NULL") == 0;
}

/* Reads an optional string field: *out is NULL when absent or empty. */
static int ky_string(kc_loader *l, yaml_node_t *map, const char *key, const char *field,
                     const char **out)
{
    yaml_node_t *n = ky_get(l, map, key);

    *out = NULL;
    if (ky_is_null(n))
        return KUBE_OK;
    if (n->type != YAML_SCALAR_NODE)
        return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, field,
                                "expected a string");
    if (n->data.scalar.length != strlen((char *)n->data.scalar.value))
        return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, field,
                                "contains a NUL character");
    if (n->data.scalar.length > 0)
        *out = (const char *)n->data.scalar.value;
    return KUBE_OK;
}

/* Reads an optional boolean (YAML 1.1 words, as sigs.k8s.io/yaml). */
static int ky_bool(kc_loader *l, yaml_node_t *map, const char *key, const char *field, int *out)
{
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES",
                                      "on",   "On",   "ON",   "y",   "Y"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No", "NO",
                                     "off",   "Off",   "OFF",   "n",  "N"};
    const char *v;
    int rc = ky_string(l, map, key, field, &v);

    *out = 0;
    if (rc != KUBE_OK || !v)
        return rc;
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcmp(v, yes[i]) == 0) {
            *out = 1;
            return KUBE_OK;
        }
        if (strcmp(v, no[i]) == 0)
            return KUBE_OK;
    }
    return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, field,
                            "expected true or false, got \"%s\"", v);
}

/* Finds, in one file, the entry of list `key` (clusters, users, contexts)
 * whose name is name. Returns KUBE_OK with *index (its position) and *body
 * (its `body_key` mapping), KUBE_ENOTFOUND without a message when the file
 * does not define it, or KUBE_ECONFIG naming the malformed field. */
static int ky_find_named(kc_loader *l, const char *key, const char *body_key, const char *name,
                         int *index, yaml_node_t **body)
{
    yaml_node_t *list = ky_get(l, l->root, key);
    char field[160];
    int i = 0;

    if (list && !ky_is_null(list) && list->type != YAML_SEQUENCE_NODE)
        return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, key, "expected a list");
    if (!list || list->type != YAML_SEQUENCE_NODE)
        return KUBE_ENOTFOUND;
    for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top;
         it++, i++) {
        yaml_node_t *entry = ky_node(l, *it);
        const char *entry_name;
        int rc;

        snprintf(field, sizeof(field), "%s[%d].name", key, i);
        rc = ky_string(l, entry, "name", field, &entry_name);
        if (rc != KUBE_OK)
            return rc;
        if (!entry_name || strcmp(entry_name, name) != 0)
            continue;
        *index = i;
        *body = ky_get(l, entry, body_key);
        snprintf(field, sizeof(field), "%s[%d].%s", key, i, body_key);
        if (!*body || (*body)->type != YAML_MAPPING_NODE)
            return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, field,
                                    "missing or not a mapping");
        return KUBE_OK;
    }
    return KUBE_ENOTFOUND;
}

/* Resolves a file reference against the kubeconfig's directory. */
static char *kc_resolve(kc_loader *l, const char *file)
{
    kube_buf b = KUBE_BUF_INIT;

    if (file[0] == '/')
        return strdup(file);
    if (kube_buf_printf(&b, "%s/%s", l->dir, file) != KUBE_OK) {
        kube_buf_free(&b);
        return NULL;
    }
    return kube_buf_take(&b);
}

/* Loads PEM material given inline (base64 `data_key`) or as a file
 * (`file_key`); at most one of the two. *out stays NULL when neither is set. */
static int kc_load_material(kc_loader *l, yaml_node_t *map, const char *prefix,
                            const char *file_key, const char *data_key, char **out, size_t *out_len)
{
    char file_field[160], data_field[160];
    const char *file, *data;
    char *path;
    int rc;

    snprintf(file_field, sizeof(file_field), "%s.%s", prefix, file_key);
    snprintf(data_field, sizeof(data_field), "%s.%s", prefix, data_key);
    if ((rc = ky_string(l, map, file_key, file_field, &file)) != KUBE_OK ||
        (rc = ky_string(l, map, data_key, data_field, &data)) != KUBE_OK)
        return rc;
    if (file && data)
        return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, data_field,
                                "both %s and %s are set; use one", data_key, file_key);
    if (data) {
        rc = kube_base64_decode(data, strlen(data), (unsigned char **)out, out_len);
        if (rc == KUBE_EPARSE)
            return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, data_field,
                                    "invalid base64");
        return rc;
    }
    if (!file)
        return KUBE_OK;
    path = kc_resolve(l, file);
    if (!path)
        return KUBE_ENOMEM;
    rc = kube_read_file(path, out, out_len);
    if (rc == KUBE_EIO)
        rc = kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, file_field,
                              "cannot read %s: %s", path, strerror(errno));
    free(path);
    return rc;
}

/* Rejects keys this library cannot honour instead of ignoring them. */
static int kc_reject_unsupported(kc_loader *l, yaml_node_t *map, const char *prefix,
                                 const char *const *keys, size_t n, const char *why)
{
    char field[160];

    for (size_t i = 0; i < n; i++) {
        if (ky_is_null(ky_get(l, map, keys[i])))
            continue;
        snprintf(field, sizeof(field), "%s.%s", prefix, keys[i]);
        return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, field,
                                "not supported (%s)", why);
    }
    return KUBE_OK;
}

/* ---- kubeconfig sections --------------------------------------------- */

/* Normalises cluster.server into cfg->server: http(s)://host[:port][/prefix]
 * without a trailing slash; a bare host:port means https. */
static int kc_set_server(kc_loader *l, const char *field, const char *server, kube_config *cfg)
{
    kube_buf b = KUBE_BUF_INIT;
    const char *sep = strstr(server, "://");
    const char *host;
    int rc;

    if (sep && strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0)
        return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, field,
                                "unsupported URL scheme in \"%s\" (want https:// or http://)",
                                server);
    rc = sep ? kube_buf_puts(&b, server) : kube_buf_printf(&b, "https://%s", server);
    if (rc != KUBE_OK)
        return rc;
    while (b.len > 0 && b.data[b.len - 1] == '/')
        b.data[--b.len] = '\0';
    host = strstr(b.data, "://") + 3;
    if (!*host || *host == '/' || strpbrk(b.data, " \t\r\n?#")) {
        kube_buf_free(&b);
        return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, field,
                                "invalid server URL \"%s\"", server);
    }
    cfg->server = kube_buf_take(&b);
    return cfg->server ? KUBE_OK : KUBE_ENOMEM;
}

int kube_config_set_server(kube_config *cfg, const char *server, char *err, size_t errlen)
{
    kc_loader l = {.path = "--master", .err = err, .errlen = errlen};
    char *old = cfg->server;
    int rc;

    cfg->server = NULL;
    rc = kc_set_server(&l, NULL, server, cfg);
    if (rc != KUBE_OK)
        cfg->server = old;
    else
        free(old);
    return rc;
}

static int kc_load_cluster(kc_loader *l, yaml_node_t *cluster, int index, kube_config *cfg)
{
    static const char *const unsupported[] = {"proxy-url"};
    char prefix[64], field[160];
    const char *server, *tls_name;
    int rc;

    snprintf(prefix, sizeof(prefix), "clusters[%d].cluster", index);
    rc = kc_reject_unsupported(l, cluster, prefix, unsupported, 1,
                               "connect directly or set HTTPS_PROXY");
    if (rc != KUBE_OK)
        return rc;
    snprintf(field, sizeof(field), "%s.server", prefix);
    if ((rc = ky_string(l, cluster, "server", field, &server)) != KUBE_OK)
        return rc;
    if (!server)
        return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, field, "not set");
    if ((rc = kc_set_server(l, field, server, cfg)) != KUBE_OK)
        return rc;
    rc = kc_load_material(l, cluster, prefix, "certificate-authority", "certificate-authority-data",
                          &cfg->ca_pem, &cfg->ca_len);
    if (rc != KUBE_OK)
        return rc;
    snprintf(field, sizeof(field), "%s.insecure-skip-tls-verify", prefix);
    if ((rc = ky_bool(l, cluster, "insecure-skip-tls-verify", field, &cfg->insecure)) != KUBE_OK)
        return rc;
    if (cfg->insecure && cfg->ca_pem)
        return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, field,
                                "cannot be combined with a certificate authority");
    if (cfg->ca_pem) {
        snprintf(field, sizeof(field), "%s.certificate-authority%s", prefix,
                 ky_get(l, cluster, "certificate-authority-data") ? "-data" : "");
        if ((rc = kube_config_add_ca(cfg, l->path, field, l->err, l->errlen)) != KUBE_OK)
            return rc;
    }
    snprintf(field, sizeof(field), "%s.tls-server-name", prefix);
    if ((rc = ky_string(l, cluster, "tls-server-name", field, &tls_name)) != KUBE_OK)
        return rc;
    if (tls_name && !(cfg->tls_server_name = strdup(tls_name)))
        return KUBE_ENOMEM;
    return KUBE_OK;
}

static int kc_load_client_cert(kc_loader *l, yaml_node_t *user, const char *prefix,
                               kube_config *cfg)
{
    char cert_field[160], key_field[160];
    int rc;

    rc = kc_load_material(l, user, prefix, "client-certificate", "client-certificate-data",
                          &cfg->cert_pem, &cfg->cert_len);
    if (rc == KUBE_OK)
        rc = kc_load_material(l, user, prefix, "client-key", "client-key-data", &cfg->key_pem,
                              &cfg->key_len);
    if (rc != KUBE_OK)
        return rc;
    snprintf(cert_field, sizeof(cert_field), "%s.client-certificate%s", prefix,
             ky_get(l, user, "client-certificate-data") ? "-data" : "");
    snprintf(key_field, sizeof(key_field), "%s.client-key%s", prefix,
             ky_get(l, user, "client-key-data") ? "-data" : "");
    if (cfg->cert_pem && !cfg->key_pem)
        return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, cert_field,
                                "set without client-key or client-key-data");
    if (cfg->key_pem && !cfg->cert_pem)
        return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, key_field,
                                "set without client-certificate or client-certificate-data");
    if (!cfg->cert_pem)
        return KUBE_OK;
    return kube_config_add_identity(cfg, l->path, cert_field, key_field, l->err, l->errlen);
}

static int kc_load_token(kc_loader *l, yaml_node_t *user, const char *prefix, kube_config *cfg)
{
    char field[160];
    const char *token, *token_file;
    int rc;

    snprintf(field, sizeof(field), "%s.token", prefix);
    if ((rc = ky_string(l, user, "token", field, &token)) != KUBE_OK)
        return rc;
    if (token && !kube_config_token_valid(token))
        return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, field,
                                "not a single bearer token (white space or control characters)");
    if (token && !(cfg->static_token = strdup(token)))
        return KUBE_ENOMEM;
    snprintf(field, sizeof(field), "%s.tokenFile", prefix);
    if ((rc = ky_string(l, user, "tokenFile", field, &token_file)) != KUBE_OK)
        return rc;
    if (!token_file)
        return KUBE_OK;
    if (!(cfg->token_file = kc_resolve(l, token_file)))
        return KUBE_ENOMEM;
    rc = kube_config_read_token(cfg->token_file, &cfg->file_token);
    cfg->file_read_ms = kube_now_ms();
    if (rc == KUBE_OK || rc == KUBE_ENOMEM)
        return rc;
    if (token) { /* client-go: the inline token is the fallback */
        KLOG_WARN("%s: %s: cannot read %s; using user.token until it can be read", l->path, field,
                  cfg->token_file);
        return KUBE_OK;
    }
    if (rc == KUBE_EPARSE)
        return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, field,
                                "%s does not hold one bearer token (empty, or white space inside)",
                                cfg->token_file);
    return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, field, "cannot read %s: %s",
                            cfg->token_file, strerror(errno));
}

static int kc_load_user(kc_loader *l, yaml_node_t *user, int index, kube_config *cfg)
{
    static const char *const plugins[] = {"exec", "auth-provider"};
    static const char *const basic[] = {"username", "password"};
    static const char *const impersonation[] = {"as", "as-uid", "as-groups", "as-user-extra"};
    char prefix[64];
    int rc;

    snprintf(prefix, sizeof(prefix), "users[%d].user", index);
    rc = kc_reject_unsupported(l, user, prefix, plugins, 2,
                               "credential plugins; use token, tokenFile or a client "
                               "certificate");
    if (rc == KUBE_OK)
        rc = kc_reject_unsupported(l, user, prefix, basic, 2,
                                   "basic authentication was removed from Kubernetes");
    if (rc == KUBE_OK)
        rc = kc_reject_unsupported(l, user, prefix, impersonation, 4, "impersonation");
    if (rc == KUBE_OK)
        rc = kc_load_client_cert(l, user, prefix, cfg);
    if (rc == KUBE_OK)
        rc = kc_load_token(l, user, prefix, cfg);
    return rc;
}

/* ---- kubeconfig files ------------------------------------------------ */

/* Parses the YAML text into l->doc. */
static int kc_parse(kc_loader *l, const char *text, size_t len)
{
    yaml_parser_t parser;
    int ok;

    if (!yaml_parser_initialize(&parser))
        return KUBE_ENOMEM;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    ok = yaml_parser_load(&parser, &l->doc);
    if (!ok) {
        kube_config_fail(l->err, l->errlen, KUBE_EPARSE, l->path, NULL,
                         "invalid YAML at line %lu column %lu: %s",
                         (unsigned long)parser.problem_mark.line + 1,
                         (unsigned long)parser.problem_mark.column + 1,
                         parser.problem ? parser.problem : "syntax error");
        yaml_parser_delete(&parser);
        return KUBE_EPARSE;
    }
    yaml_parser_delete(&parser);
    l->have_doc = 1;
    return KUBE_OK;
}

/* Sets l->root to the document's top-level mapping. An empty document is
 * KUBE_ENOTFOUND when listed (clientcmd reads it as an empty config), an
 * error otherwise. */
static int kc_check_root(kc_loader *l, int listed)
{
    yaml_node_t *root = yaml_document_get_root_node(&l->doc);

    if (!root && listed)
        return KUBE_ENOTFOUND;
    if (!root)
        return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, NULL, "file is empty");
    if (root->type != YAML_MAPPING_NODE)
        return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, NULL,
                                "not a kubeconfig (top level is not a mapping)");
    l->root = root;
    return KUBE_OK;
}

/* The directory part of path ("." when there is none). Caller frees. */
static char *kc_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* Reads and parses the kubeconfig at path into l, whose err/errlen are set.
 * listed: a KUBECONFIG entry, for which a missing (ENOENT) or empty file is
 * KUBE_ENOTFOUND, to be skipped as clientcmd skips it. Whatever the result,
 * the caller releases l with kc_close(). */
static int kc_open(kc_loader *l, const char *path, int listed)
{
    char *text;
    size_t len;
    int rc;

    l->path = strdup(path);
    l->dir = kc_dirname(path);
    if (!l->path || !l->dir)
        return KUBE_ENOMEM;
    rc = kube_read_file(path, &text, &len);
    if (rc == KUBE_EIO && listed && errno == ENOENT)
        return KUBE_ENOTFOUND;
    if (rc == KUBE_EIO)
        return kube_config_fail(l->err, l->errlen, KUBE_EIO, path, NULL, "cannot read: %s",
                                strerror(errno));
    if (rc != KUBE_OK)
        return rc;
    rc = kc_parse(l, text, len);
    kube_config_free_secret(text, len);
    return rc == KUBE_OK ? kc_check_root(l, listed) : rc;
}

/* Releases what kc_open() took. */
static void kc_close(kc_loader *l)
{
    if (l->have_doc)
        yaml_document_delete(&l->doc);
    free(l->path);
    free(l->dir);
}

/* Prepares an empty set with room for cap files. */
static int kc_set_init(kc_set *s, size_t cap, char *err, size_t errlen)
{
    *s = (kc_set){.err = err, .errlen = errlen};
    s->files = calloc(cap, sizeof(*s->files));
    return s->files ? KUBE_OK : KUBE_ENOMEM;
}

/* Releases the files and the set's memory. */
void kube_config_files_free(kc_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        kc_close(&s->files[i]);
    free(s->files);
    kube_buf_free(&s->source);
}

/* Opens path as the set's next file (room for it was reserved). A listed
 * file that is missing or empty is skipped: KUBE_OK, nothing added. */
static int kc_set_add(kc_set *s, const char *path, int listed)
{
    kc_loader *l = &s->files[s->n];
    int rc;

    *l = (kc_loader){.err = s->err, .errlen = s->errlen};
    rc = kc_open(l, path, listed);
    if (rc == KUBE_OK)
        rc = kube_buf_printf(&s->source, "%s%s", s->n > 0 ? ":" : "", path);
    if (rc != KUBE_OK) {
        kc_close(l);
        return rc == KUBE_ENOTFOUND ? KUBE_OK : rc;
    }
    s->n++;
    return KUBE_OK;
}

/* Whether the n-byte entry at `entry` appeared earlier in the ':'-separated
 * list that contains it. */
static int kc_listed_before(const char *list, const char *entry, size_t n)
{
    for (const char *p = list; p < entry; p++) {
        size_t m = strcspn(p, ":");

        if (m == n && memcmp(p, entry, n) == 0)
            return 1;
        p += m;
    }
    return 0;
}

/* Fills the set from a ':'-separated KUBECONFIG list: empty entries, missing
 * or empty files and repeated entries are skipped. s is initialised here and
 * released by the caller with kube_config_files_free(), also after a failure. */
int kube_config_files_from_list(kc_set *s, const char *list, char *err, size_t errlen)
{
    size_t entries = 1;
    int rc;

    for (const char *p = list; *p; p++)
        entries += *p == ':';
    rc = kc_set_init(s, entries, err, errlen);
    for (const char *p = list; rc == KUBE_OK && *p; p++) {
        size_t n = strcspn(p, ":");
        char *path;

        if (n > 0 && !kc_listed_before(list, p, n)) {
            path = strndup(p, n);
            rc = path ? kc_set_add(s, path, 1) : KUBE_ENOMEM;
            free(path);
        }
        p += n;
        if (!*p)
            break;
    }
    return rc;
}

/* Finds the entry of list `key` named `name` in the first file of the set
 * that defines it. ref and ref_field name the reference being followed, for
 * the message when no file defines it. */
static int kc_set_find(kc_set *s, const char *key, const char *body_key, const char *name,
                       kc_loader *ref, const char *ref_field, kc_entry *out)
{
    for (size_t i = 0; i < s->n; i++) {
        int rc = ky_find_named(&s->files[i], key, body_key, name, &out->index, &out->body);

        if (rc != KUBE_ENOTFOUND) {
            out->owner = &s->files[i];
            return rc;
        }
    }
    return kube_config_fail(ref->err, ref->errlen, KUBE_ECONFIG, ref->path, ref_field,
                            "%s \"%s\" not found in %s%s", body_key, name, key,
                            s->n > 1 ? " of any listed file" : "");
}

/* The current-context of the first file that sets one (*name), and that
 * file (*owner). */
static int kc_set_current(kc_set *s, kc_loader **owner, const char **name)
{
    for (size_t i = 0; i < s->n; i++) {
        kc_loader *l = &s->files[i];
        int rc = ky_string(l, l->root, "current-context", "current-context", name);

        if (rc != KUBE_OK || *name) {
            *owner = l;
            return rc;
        }
    }
    return kube_config_fail(s->err, s->errlen, KUBE_ECONFIG, s->source.data, "current-context",
                            "not set");
}

/* ---- the current context --------------------------------------------- */

/* Sets cfg->namespace_ from the context's optional namespace. */
static int kc_load_namespace(const kc_entry *ctx, kube_config *cfg)
{
    kc_loader *l = ctx->owner;
    const char *ns;
    char field[160];
    int rc;

    snprintf(field, sizeof(field), "contexts[%d].context.namespace", ctx->index);
    if ((rc = ky_string(l, ctx->body, "namespace", field, &ns)) != KUBE_OK)
        return rc;
    if (ns && !kube_config_is_dns_label(ns))
        return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, field,
                                "\"%s\" is not a valid namespace name (DNS-1123 label)", ns);
    if (ns && !(cfg->namespace_ = strdup(ns)))
        return KUBE_ENOMEM;
    return KUBE_OK;
}

/* Follows the context's `ref_key` (cluster or user) to the entry of list
 * `list_key` that the first defining file holds. */
static int kc_follow(kc_set *s, const kc_entry *ctx, const char *ref_key, const char *list_key,
                     kc_entry *out)
{
    kc_loader *l = ctx->owner;
    const char *name;
    char field[160];
    int rc;

    snprintf(field, sizeof(field), "contexts[%d].context.%s", ctx->index, ref_key);
    if ((rc = ky_string(l, ctx->body, ref_key, field, &name)) != KUBE_OK)
        return rc;
    if (!name)
        return kube_config_fail(l->err, l->errlen, KUBE_ECONFIG, l->path, field, "not set");
    return kc_set_find(s, list_key, ref_key, name, l, field, out);
}

/* Follows current-context (or the context named, kubectl's --context) to
 * its namespace, cluster and user. */
static int kc_load_context(kc_set *s, const char *named, kube_config *cfg)
{
    kc_entry ctx, cluster, user;
    kc_loader *owner = &s->files[0];
    const char *current = named;
    int rc = named && *named ? KUBE_OK : kc_set_current(s, &owner, &current);

    if (rc == KUBE_OK)
        rc = kc_set_find(s, "contexts", "context", current, owner,
                         named && *named ? "--context" : "current-context", &ctx);
    if (rc == KUBE_OK)
        rc = kc_load_namespace(&ctx, cfg);
    if (rc == KUBE_OK)
        rc = kc_follow(s, &ctx, "cluster", "clusters", &cluster);
    if (rc == KUBE_OK)
        rc = kc_load_cluster(cluster.owner, cluster.body, cluster.index, cfg);
    if (rc == KUBE_OK)
        rc = kc_follow(s, &ctx, "user", "users", &user);
    if (rc == KUBE_OK)
        rc = kc_load_user(user.owner, user.body, user.index, cfg);
    return rc;
}

/* Builds the configuration of the set's current context into *out; its
 * source is the set's file list. */
int kube_config_files_build(kc_set *s, const char *context, kube_config **out)
{
    kube_config *cfg = kube_config_alloc(s->source.data);
    int rc = cfg ? kc_load_context(s, context, cfg) : KUBE_ENOMEM;

    if (rc != KUBE_OK) {
        kube_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return KUBE_OK;
}

int kube_config_from_file(const char *path, kube_config **out, char *err, size_t errlen)
{
    return kube_config_file_context(path, NULL, out, err, errlen);
}

int kube_config_file_context(const char *path, const char *context, kube_config **out, char *err,
                             size_t errlen)
{
    kc_set s;
    int rc;

    *out = NULL;
    if (!path || !*path)
        return kube_config_fail(err, errlen, KUBE_EINVAL, "kubeconfig", NULL, "no path given");
    rc = kc_set_init(&s, 1, err, errlen);
    if (rc == KUBE_OK)
        rc = kc_set_add(&s, path, 0);
    if (rc == KUBE_OK)
        rc = kube_config_files_build(&s, context, out);
    kube_config_files_free(&s);
    return rc;
}
