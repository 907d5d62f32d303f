/*
 * kube/transport/config_incluster.c - the in-cluster configuration, as client-go's
 * rest.InClusterConfig: KUBERNETES_SERVICE_HOST/PORT, the service
 * account's CA, token file and namespace.
 */
#include "kube/util/clock.h"
#include "kube/transport/config_int.h"

/* ---- in-cluster ------------------------------------------------------ */

static int ic_set_server(kube_config *cfg, const char *host, const char *port, char *err,
                         size_t errlen)
{
    kube_buf b = KUBE_BUF_INIT;
    int64_t p;
    int rc;

    if (kube_parse_int64(port, 1, 65535, &p) != KUBE_OK)
        return kube_config_fail(err, errlen, KUBE_ECONFIG, "in-cluster", "KUBERNETES_SERVICE_PORT",
                                "\"%s\" is not a port number", port);
    if (strpbrk(host, "/[] \t"))
        return kube_config_fail(err, errlen, KUBE_ECONFIG, "in-cluster", "KUBERNETES_SERVICE_HOST",
                                "\"%s\" is not a host name or address", host);
    if (strchr(host, ':')) /* IPv6 literal */
        rc = kube_buf_printf(&b, "https://[%s]:%d", host, (int)p);
    else
        rc = kube_buf_printf(&b, "https://%s:%d", host, (int)p);
    if (rc != KUBE_OK)
        return rc;
    cfg->server = kube_buf_take(&b);
    return cfg->server ? KUBE_OK : KUBE_ENOMEM;
}

/* client-go logs and falls back to the system roots when ca.crt is
 * unusable; so do we. */
static int ic_load_ca(kube_config *cfg, const char *dir)
{
    kube_buf path = KUBE_BUF_INIT;
    char msg[512];
    int rc;

    if (kube_buf_printf(&path, "%s/ca.crt", dir) != KUBE_OK)
        return KUBE_ENOMEM;
    rc = kube_read_file(path.data, &cfg->ca_pem, &cfg->ca_len);
    if (rc == KUBE_EIO) {
        KLOG_ERROR("in-cluster: expected to load root CA from %s: %s; using system roots",
                   path.data, strerror(errno));
        rc = KUBE_OK;
    } else if (rc == KUBE_OK &&
               kube_config_add_ca(cfg, "in-cluster", path.data, msg, sizeof(msg)) != KUBE_OK) {
        KLOG_ERROR("%s; using system roots", msg);
        free(cfg->ca_pem);
        cfg->ca_pem = NULL;
        cfg->ca_len = 0;
        kube_tls_free(cfg->tls); /* in-cluster material is the CA alone */
        cfg->tls = NULL;
    }
    kube_buf_free(&path);
    return rc;
}

static int ic_load_namespace(kube_config *cfg, const char *dir)
{
    kube_buf path = KUBE_BUF_INIT;
    char *ns = NULL;
    int rc;

    if (kube_buf_printf(&path, "%s/namespace", dir) != KUBE_OK)
        return KUBE_ENOMEM;
    rc = kube_config_read_token(path.data, &ns);
    kube_buf_free(&path);
    if (rc == KUBE_ENOMEM)
        return rc;
    if (rc == KUBE_OK && kube_config_is_dns_label(ns))
        cfg->namespace_ = ns;
    else
        free(ns);
    return KUBE_OK;
}

static int ic_load_token(kube_config *cfg, const char *dir, char *err, size_t errlen)
{
    kube_buf path = KUBE_BUF_INIT;
    int rc;

    if (kube_buf_printf(&path, "%s/token", dir) != KUBE_OK)
        return KUBE_ENOMEM;
    cfg->token_file = kube_buf_take(&path);
    if (!cfg->token_file)
        return KUBE_ENOMEM;
    rc = kube_config_read_token(cfg->token_file, &cfg->file_token);
    cfg->file_read_ms = kube_now_ms();
    if (rc == KUBE_EIO)
        return kube_config_fail(err, errlen, KUBE_ECONFIG, "in-cluster", cfg->token_file,
                                "cannot read service account token: %s", strerror(errno));
    if (rc == KUBE_EPARSE)
        return kube_config_fail(err, errlen, KUBE_ECONFIG, "in-cluster", cfg->token_file,
                                "does not hold one bearer token (empty, or white space inside)");
    return rc;
}

int kube_config_in_cluster(kube_config **out, char *err, size_t errlen)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    const char *dir = getenv("KUBE_SA_DIR");
    kube_config *cfg;
    int rc;

    *out = NULL;
    if (!host || !*host || !port || !*port)
        return kube_config_fail(err, errlen, KUBE_ECONFIG, "in-cluster", NULL,
                                "not running in a cluster: KUBERNETES_SERVICE_HOST and "
                                "KUBERNETES_SERVICE_PORT must be set");
    if (!dir || !*dir)
        dir = CONFIG_SA_DIR;
    cfg = kube_config_alloc("in-cluster");
    if (!cfg)
        return KUBE_ENOMEM;
    rc = ic_set_server(cfg, host, port, err, errlen);
    if (rc == KUBE_OK)
        rc = ic_load_token(cfg, dir, err, errlen);
    if (rc == KUBE_OK)
        rc = ic_load_ca(cfg, dir);
    if (rc == KUBE_OK)
        rc = ic_load_namespace(cfg, dir);
    if (rc != KUBE_OK) {
        kube_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return KUBE_OK;
}
