/*
 * kube/transport/config.c - where the cluster is and who we are: kubeconfig files and
 * in-cluster service-account configuration. The contract is in config.h.
 */
#include "kube/util/clock.h"
#include "kube/transport/config_int.h"

/* ---- errors ---------------------------------------------------------- */

int kube_config_fail(char *err, size_t errlen, int code, const char *source, const char *field,
                     const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    if (!err || errlen == 0)
        return code;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (field)
        snprintf(err, errlen, "%s: %s: %s", source, field, msg);
    else
        snprintf(err, errlen, "%s: %s", source, msg);
    return code;
}

/* ---- config object --------------------------------------------------- */

kube_config *kube_config_alloc(const char *source)
{
    kube_config *cfg = calloc(1, sizeof(*cfg));

    if (!cfg)
        return NULL;
    if (pthread_mutex_init(&cfg->lock, NULL) != 0) {
        free(cfg);
        return NULL;
    }
    cfg->refresh_ms = CONFIG_TOKEN_REFRESH_MS;
    cfg->source = strdup(source);
    if (!cfg->source) {
        kube_config_free(cfg);
        return NULL;
    }
    return cfg;
}

void kube_config_free_secret(char *s, size_t len)
{
    if (!s)
        return;
    OPENSSL_cleanse(s, len);
    free(s);
}

void kube_config_free(kube_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->source);
    free(cfg->server);
    free(cfg->ca_pem);
    free(cfg->cert_pem);
    kube_config_free_secret(cfg->key_pem, cfg->key_len);
    kube_tls_free(cfg->tls);
    free(cfg->tls_server_name);
    free(cfg->namespace_);
    if (cfg->static_token)
        kube_config_free_secret(cfg->static_token, strlen(cfg->static_token));
    free(cfg->token_file);
    if (cfg->file_token)
        kube_config_free_secret(cfg->file_token, strlen(cfg->file_token));
    pthread_mutex_destroy(&cfg->lock);
    free(cfg);
}

/* ---- small helpers --------------------------------------------------- */

/* Strips leading and trailing white space in place (as Go's TrimSpace). */
static void config_trim(char *s)
{
    size_t len = strlen(s), start = 0;

    while (len > 0 && isspace((unsigned char)s[len - 1]))
        s[--len] = '\0';
    while (start < len && isspace((unsigned char)s[start]))
        start++;
    memmove(s, s + start, len - start + 1);
}

/* A bearer token is one non-empty word of printable ASCII: anything else
 * (white space, control characters) could split the Authorization header. */
int kube_config_token_valid(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
            return 0;
    return 1;
}

/* Reads a token file, trimmed. Returns KUBE_OK, KUBE_EIO (errno kept),
 * KUBE_EPARSE (not one token: empty, several words, control or NUL
 * characters) or KUBE_ENOMEM. */
int kube_config_read_token(const char *path, char **out)
{
    char *text;
    size_t len;
    int rc = kube_read_file(path, &text, &len);

    if (rc != KUBE_OK)
        return rc;
    if (strlen(text) != len) {
        kube_config_free_secret(text, len);
        return KUBE_EPARSE; /* NUL byte inside */
    }
    config_trim(text);
    if (!kube_config_token_valid(text)) {
        kube_config_free_secret(text, strlen(text));
        return KUBE_EPARSE;
    }
    *out = text;
    return KUBE_OK;
}

/* A DNS-1123 label, as clientcmd requires of a context namespace. */
int kube_config_is_dns_label(const char *s)
{
    size_t len = strlen(s);

    if (len == 0 || len > 63 || s[0] == '-' || s[len - 1] == '-')
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
            return 0;
    return 1;
}

/* ---- TLS material ---------------------------------------------------- */

/* The config's parsed material, created on first use; NULL when out of
 * memory. */
static kube_tls *config_tls(kube_config *cfg)
{
    if (!cfg->tls)
        cfg->tls = kube_tls_alloc();
    return cfg->tls;
}

/* Parses the CA bundle cfg->ca_pem into cfg's material, reporting a bad
 * bundle against field. */
int kube_config_add_ca(kube_config *cfg, const char *src, const char *field, char *err,
                       size_t errlen)
{
    kube_tls *t = config_tls(cfg);
    char why[256];
    int rc = t ? kube_tls_add_ca(t, cfg->ca_pem, cfg->ca_len, why, sizeof(why)) : KUBE_ENOMEM;

    if (rc == KUBE_ECONFIG)
        return kube_config_fail(err, errlen, rc, src, field, "no valid PEM certificate (%s)", why);
    return rc;
}

/* Parses the client certificate and key into cfg's material and checks
 * they belong together, reporting a bad part against its field. */
int kube_config_add_identity(kube_config *cfg, const char *src, const char *cert_field,
                             const char *key_field, char *err, size_t errlen)
{
    kube_tls *t = config_tls(cfg);
    kube_tls_part bad = KUBE_TLS_CERT;
    char why[256];
    int rc = t ? kube_tls_add_identity(t, cfg->cert_pem, cfg->cert_len, cfg->key_pem, cfg->key_len,
                                       &bad, why, sizeof(why))
               : KUBE_ENOMEM;

    if (rc != KUBE_ECONFIG)
        return rc;
    if (bad == KUBE_TLS_CERT)
        return kube_config_fail(err, errlen, rc, src, cert_field, "no valid PEM certificate (%s)",
                                why);
    if (bad == KUBE_TLS_KEY)
        return kube_config_fail(err, errlen, rc, src, key_field,
                                "no valid unencrypted PEM private key (%s)", why);
    return kube_config_fail(err, errlen, rc, src, key_field, "private key does not match %s",
                            cert_field);
}

/* ---- a server other than the API server ---------------------------- */

/* dataFromSliceOrFile: a copy of data (len bytes) when given, else the
 * file's contents; *out stays NULL when neither is given. */
static int data_or_file(const char *data, size_t len, const char *file, const char *src,
                        const char *file_field, char **out, size_t *out_len, char *err,
                        size_t errlen)
{
    int rc;

    if (data && len) {
        if (!(*out = malloc(len + 1)))
            return KUBE_ENOMEM;
        memcpy(*out, data, len);
        (*out)[len] = '\0';
        *out_len = len;
        return KUBE_OK;
    }
    if (!file || !*file)
        return KUBE_OK;
    rc = kube_read_file(file, out, out_len);
    if (rc == KUBE_EIO)
        return kube_config_fail(err, errlen, rc, src, file_field, "reading %s: %s", file,
                                strerror(errno));
    return rc;
}

/* The CA and the client identity of o into cfg. */
static int config_server_tls(kube_config *cfg, const kube_tls_options *o, const char *src,
                             char *err, size_t errlen)
{
    const char *cf = o->cert_data && o->cert_len ? "certData" : "certFile";
    const char *kf = o->key_data && o->key_len ? "keyData" : "keyFile";
    int rc = data_or_file(o->ca_data, o->ca_len, o->ca_file, src, "caFile", &cfg->ca_pem,
                          &cfg->ca_len, err, errlen);

    if (rc == KUBE_OK && cfg->ca_pem && o->insecure)
        return kube_config_fail(err, errlen, KUBE_ECONFIG, src, "insecure",
                                "specifying a root certificates file with the insecure flag is "
                                "not allowed");
    if (rc == KUBE_OK)
        rc = data_or_file(o->cert_data, o->cert_len, o->cert_file, src, "certFile", &cfg->cert_pem,
                          &cfg->cert_len, err, errlen);
    if (rc == KUBE_OK)
        rc = data_or_file(o->key_data, o->key_len, o->key_file, src, "keyFile", &cfg->key_pem,
                          &cfg->key_len, err, errlen);
    if (rc == KUBE_OK && !cfg->cert_pem != !cfg->key_pem)
        return kube_config_fail(err, errlen, KUBE_ECONFIG, src, cfg->cert_pem ? kf : cf,
                                "a client certificate needs its key and a key its certificate");
    if (rc == KUBE_OK && cfg->ca_pem)
        rc = kube_config_add_ca(cfg, src, o->ca_data && o->ca_len ? "caData" : "caFile", err,
                                errlen);
    if (rc == KUBE_OK && cfg->cert_pem)
        rc = kube_config_add_identity(cfg, src, cf, kf, err, errlen);
    return rc;
}

int kube_config_for_server(const char *server, const kube_tls_options *tls, const char *source,
                           kube_config **out, char *err, size_t errlen)
{
    kube_config *cfg = kube_config_alloc(source ? source : server);
    int rc = cfg && (cfg->server = strdup(server)) ? KUBE_OK : KUBE_ENOMEM;

    *out = NULL;
    if (rc == KUBE_OK && tls) {
        cfg->insecure = tls->insecure;
        if (tls->server_name && *tls->server_name &&
            !(cfg->tls_server_name = strdup(tls->server_name)))
            rc = KUBE_ENOMEM;
        if (rc == KUBE_OK)
            rc = config_server_tls(cfg, tls, cfg->source, err, errlen);
    }
    if (rc != KUBE_OK) {
        kube_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return KUBE_OK;
}

/* ---- precedence ------------------------------------------------------ */

/* KUBECONFIG lists no usable file: in-cluster, or an error naming both. */
static int config_fall_back(const char *env, kube_config **out, char *err, size_t errlen)
{
    int rc = kube_config_in_cluster(out, err, errlen);

    if (rc == KUBE_OK)
        KLOG_WARN("KUBECONFIG=%s: no listed file exists or holds a kubeconfig; using "
                  "in-cluster configuration",
                  env);
    else if (rc == KUBE_ECONFIG && !getenv("KUBERNETES_SERVICE_HOST"))
        rc = kube_config_fail(err, errlen, KUBE_ECONFIG, "KUBECONFIG", NULL,
                              "none of the files in \"%s\" exists (or all are empty), and not "
                              "running in a cluster",
                              env);
    return rc;
}

int kube_config_load(const char *kubeconfig_flag, kube_config **out, char *err, size_t errlen)
{
    return kube_config_load_context(kubeconfig_flag, NULL, out, err, errlen);
}

int kube_config_load_context(const char *kubeconfig_flag, const char *context, kube_config **out,
                             char *err, size_t errlen)
{
    const char *env = getenv("KUBECONFIG");
    kc_set s;
    int rc;

    *out = NULL;
    if (kubeconfig_flag && *kubeconfig_flag)
        return kube_config_file_context(kubeconfig_flag, context, out, err, errlen);
    if (!env || !*env)
        return kube_config_in_cluster(out, err, errlen);
    rc = kube_config_files_from_list(&s, env, err, errlen);
    if (rc == KUBE_OK && s.n > 0)
        rc = kube_config_files_build(&s, context, out);
    else if (rc == KUBE_OK)
        rc = config_fall_back(env, out, err, errlen);
    kube_config_files_free(&s);
    return rc;
}

/* ---- accessors ------------------------------------------------------- */

const char *kube_config_server(const kube_config *cfg)
{
    return cfg->server;
}

const kube_tls *kube_config_tls(const kube_config *cfg)
{
    return cfg->tls;
}

const char *kube_config_ca_pem(const kube_config *cfg, size_t *len)
{
    if (len)
        *len = cfg->ca_len;
    return cfg->ca_pem;
}

const char *kube_config_cert_pem(const kube_config *cfg, size_t *len)
{
    if (len)
        *len = cfg->cert_len;
    return cfg->cert_pem;
}

const char *kube_config_key_pem(const kube_config *cfg, size_t *len)
{
    if (len)
        *len = cfg->key_len;
    return cfg->key_pem;
}

int kube_config_insecure(const kube_config *cfg)
{
    return cfg->insecure;
}

const char *kube_config_tls_server_name(const kube_config *cfg)
{
    return cfg->tls_server_name;
}

const char *kube_config_namespace(const kube_config *cfg)
{
    return cfg->namespace_;
}

const char *kube_config_source(const kube_config *cfg)
{
    return cfg->source;
}

/* ---- token ----------------------------------------------------------- */

/* Re-reads token_file when due. Lock held. A failed read keeps the last good
 * token, as client-go's cached file token source does. */
static void config_refresh_token(kube_config *cfg, int force)
{
    int64_t now = kube_now_ms();
    char *fresh = NULL;
    int rc;

    if (!force && cfg->file_read_ms && now - cfg->file_read_ms < cfg->refresh_ms)
        return;
    cfg->file_read_ms = now;
    rc = kube_config_read_token(cfg->token_file, &fresh);
    if (rc != KUBE_OK) {
        KLOG_WARN("%s: cannot re-read token file %s (%s); keeping the previous token", cfg->source,
                  cfg->token_file,
                  rc == KUBE_EIO      ? strerror(errno)
                  : rc == KUBE_EPARSE ? "it does not hold one bearer token"
                                      : kube_strerror(rc));
        return;
    }
    if (cfg->file_token) {
        if (strcmp(cfg->file_token, fresh) != 0)
            KLOG_V(2, "%s: token file %s changed", cfg->source, cfg->token_file);
        kube_config_free_secret(cfg->file_token, strlen(cfg->file_token));
    }
    cfg->file_token = fresh;
}

int kube_config_token(kube_config *cfg, char *out, size_t n, int force)
{
    const char *token;
    int rc;

    pthread_mutex_lock(&cfg->lock);
    if (cfg->token_file)
        config_refresh_token(cfg, force);
    token = cfg->file_token ? cfg->file_token : cfg->static_token;
    if (!token)
        rc = KUBE_ENOTFOUND;
    else if (strlen(token) >= n)
        rc = KUBE_ERANGE;
    else
        rc = kube_strlcpy(out, token, n);
    pthread_mutex_unlock(&cfg->lock);
    return rc;
}

void kube_config_set_token_refresh_ms(kube_config *cfg, long ms)
{
    pthread_mutex_lock(&cfg->lock);
    cfg->refresh_ms = ms;
    pthread_mutex_unlock(&cfg->lock);
}
