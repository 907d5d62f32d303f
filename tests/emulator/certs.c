/*
 * tests/emulator/certs.c - the emulator's PKI, generated at startup with the
 * OpenSSL 3 API: a cluster CA (serving and client certificates), a
 * front-proxy CA (requestheader-client-ca) with its front-proxy-client
 * certificate, the serving certificate for 127.0.0.1/::1/localhost, the admin
 * client certificate (CN=admin, O=system:masters) and admin.kubeconfig.
 * Keys are EC P-256 (fast to generate, accepted by curl, Go and kubectl).
 */
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu_internal.h"
#include "kube/util/certkit.h"
#include "kube/util/log.h"

#define MAX_NAMES 16

/* A CA valid ten years. */
static int make_ca(const char *cn, X509 **cert_out, EVP_PKEY **key_out)
{
    kube_cert_spec spec = {cn, NULL, NULL, 1, -3600, 3650L * 86400, NULL};
    return kube_certkit_issue(NULL, NULL, &spec, cert_out, key_out);
}

/* n strings as a NULL-terminated list in out (room for MAX_NAMES). */
static const char *const *terminated(const char *const *v, size_t n, const char **out)
{
    size_t i;
    for (i = 0; i < n && i < MAX_NAMES; i++)
        out[i] = v[i];
    out[i] = NULL;
    return out;
}

/* A leaf req asks for, signed by ca, as PEM texts (the caller's). */
static int issue(X509 *ca, EVP_PKEY *ca_key, const emu_cert_req *req, char **cert_pem,
                 char **key_pem)
{
    const char *orgs[MAX_NAMES + 1], *dns[MAX_NAMES + 1], *ips[MAX_NAMES + 1];
    kube_buf san = KUBE_BUF_INIT;
    kube_cert_spec spec = {req->cn,
                           terminated(req->orgs, req->n_orgs, orgs),
                           req->server ? "serverAuth" : "clientAuth",
                           0,
                           -3600,
                           (long)(req->days ? req->days : 365) * 86400,
                           NULL};
    X509 *cert = NULL;
    EVP_PKEY *key = NULL;
    int rc = kube_certkit_san(&san, terminated(req->dns, req->n_dns, dns),
                              terminated(req->ips, req->n_ips, ips));

    *cert_pem = *key_pem = NULL;
    spec.san = san.data;
    if (rc == KUBE_OK)
        rc = kube_certkit_issue(ca, ca_key, &spec, &cert, &key);
    if (rc == KUBE_OK) {
        *cert_pem = kube_certkit_cert_pem(cert);
        *key_pem = kube_certkit_key_pem(key);
        rc = (*cert_pem && *key_pem) ? KUBE_OK : KUBE_ENOMEM;
    }
    if (rc != KUBE_OK) {
        free(*cert_pem);
        free(*key_pem);
        *cert_pem = *key_pem = NULL;
    }
    kube_buf_free(&san);
    X509_free(cert);
    EVP_PKEY_free(key);
    return rc;
}

int emu_certs_issue(const emu_certs *c, const emu_cert_req *req, char **cert_pem, char **key_pem)
{
    if (!req->cn || !*req->cn)
        return KUBE_EINVAL;
    if (req->front_proxy)
        return issue(c->fp_ca_cert, c->fp_ca_key, req, cert_pem, key_pem);
    return issue(c->ca_cert, c->ca_key, req, cert_pem, key_pem);
}

static int write_file(const char *path, const char *data, int private_)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, private_ ? 0600 : 0644);
    size_t len = strlen(data), off = 0;

    if (fd < 0)
        return KUBE_EIO;
    while (off < len) {
        ssize_t n = write(fd, data + off, len - off);
        if (n <= 0) {
            close(fd);
            return KUBE_EIO;
        }
        off += (size_t)n;
    }
    return close(fd) == 0 ? KUBE_OK : KUBE_EIO;
}

static char *path_in(const char *dir, const char *file)
{
    kube_buf b = KUBE_BUF_INIT;

    if (kube_buf_printf(&b, "%s/%s", dir, file) != KUBE_OK) {
        kube_buf_free(&b);
        return NULL;
    }
    return kube_buf_take(&b);
}

/* Issues and writes <dir>/<base>.crt and .key; stores the paths. */
static int issue_files(const emu_certs *c, const emu_cert_req *req, const char *dir,
                       const char *base, char **cert_file, char **key_file)
{
    char *cert_pem, *key_pem, name[128];
    int rc = emu_certs_issue(c, req, &cert_pem, &key_pem);

    if (rc != KUBE_OK)
        return rc;
    snprintf(name, sizeof(name), "%s.crt", base);
    *cert_file = path_in(dir, name);
    snprintf(name, sizeof(name), "%s.key", base);
    *key_file = path_in(dir, name);
    if (!*cert_file || !*key_file)
        rc = KUBE_ENOMEM;
    if (rc == KUBE_OK)
        rc = write_file(*cert_file, cert_pem, 0);
    if (rc == KUBE_OK)
        rc = write_file(*key_file, key_pem, 1);
    free(cert_pem);
    free(key_pem);
    return rc;
}

static int write_ca(const char *dir, const char *base, X509 *cert, EVP_PKEY *key, char **pem,
                    char **cert_file, char **key_file)
{
    char name[128];
    char *key_pem = kube_certkit_key_pem(key);
    int rc;

    *pem = kube_certkit_cert_pem(cert);
    snprintf(name, sizeof(name), "%s.crt", base);
    *cert_file = path_in(dir, name);
    snprintf(name, sizeof(name), "%s.key", base);
    *key_file = path_in(dir, name);
    rc = (*pem && key_pem && *cert_file && *key_file) ? KUBE_OK : KUBE_ENOMEM;
    if (rc == KUBE_OK)
        rc = write_file(*cert_file, *pem, 0);
    if (rc == KUBE_OK)
        rc = write_file(*key_file, key_pem, 1);
    free(key_pem);
    return rc;
}

int emu_write_kubeconfig(const char *path, const char *url, const char *ca_file, const char *user,
                         const char *cert_file, const char *key_file, const char *token)
{
    kube_buf b = KUBE_BUF_INIT;
    int rc;

    rc = kube_buf_printf(&b,
                         "apiVersion: v1\n"
                         "kind: Config\n"
                         "clusters:\n"
                         "- name: emulator\n"
                         "  cluster:\n"
                         "    server: %s\n"
                         "    certificate-authority: %s\n"
                         "users:\n"
                         "- name: %s\n"
                         "  user:\n",
                         url, ca_file, user);
    if (rc == KUBE_OK && token)
        rc = kube_buf_printf(&b, "    token: %s\n", token);
    else if (rc == KUBE_OK)
        rc = kube_buf_printf(&b, "    client-certificate: %s\n    client-key: %s\n", cert_file,
                             key_file);
    if (rc == KUBE_OK)
        rc = kube_buf_printf(&b,
                             "contexts:\n"
                             "- name: emulator\n"
                             "  context:\n"
                             "    cluster: emulator\n"
                             "    user: %s\n"
                             "    namespace: default\n"
                             "current-context: emulator\n",
                             user);
    if (rc == KUBE_OK)
        rc = write_file(path, b.data, 1);
    kube_buf_free(&b);
    return rc;
}

int emu_certs_init(emu_certs *c, const char *dir)
{
    static const char *const masters[] = {"system:masters"};
    static const char *const dns[] = {"localhost"};
    static const char *const ips[] = {"127.0.0.1", "::1"};
    emu_cert_req serving = {
        .cn = "kube-apiserver", .dns = dns, .n_dns = 1, .ips = ips, .n_ips = 2, .server = 1};
    emu_cert_req admin = {.cn = "admin", .orgs = masters, .n_orgs = 1};
    emu_cert_req fp = {.cn = "front-proxy-client", .front_proxy = 1};
    int rc;

    memset(c, 0, sizeof(*c));
    rc = make_ca("emulator-ca", &c->ca_cert, &c->ca_key);
    if (rc == KUBE_OK)
        rc = make_ca("front-proxy-ca", &c->fp_ca_cert, &c->fp_ca_key);
    if (rc == KUBE_OK)
        rc = write_ca(dir, "ca", c->ca_cert, c->ca_key, &c->ca_pem, &c->ca_file, &c->ca_key_file);
    if (rc == KUBE_OK)
        rc = write_ca(dir, "front-proxy-ca", c->fp_ca_cert, c->fp_ca_key, &c->fp_ca_pem,
                      &c->fp_ca_file, &c->fp_ca_key_file);
    if (rc == KUBE_OK)
        rc = issue_files(c, &serving, dir, "serving", &c->serving_cert_file, &c->serving_key_file);
    if (rc == KUBE_OK)
        rc = issue_files(c, &admin, dir, "admin", &c->admin_cert_file, &c->admin_key_file);
    if (rc == KUBE_OK)
        rc = issue_files(c, &fp, dir, "front-proxy-client", &c->fp_client_cert_file,
                         &c->fp_client_key_file);
    if (rc != KUBE_OK) {
        KLOG_ERROR("generating certificates in %s failed: %s", dir, kube_strerror(rc));
        emu_certs_free(c);
    }
    return rc;
}

void emu_certs_free(emu_certs *c)
{
    X509_free(c->ca_cert);
    EVP_PKEY_free(c->ca_key);
    X509_free(c->fp_ca_cert);
    EVP_PKEY_free(c->fp_ca_key);
    free(c->ca_pem);
    free(c->fp_ca_pem);
    free(c->ca_file);
    free(c->ca_key_file);
    free(c->serving_cert_file);
    free(c->serving_key_file);
    free(c->admin_cert_file);
    free(c->admin_key_file);
    free(c->fp_ca_file);
    free(c->fp_ca_key_file);
    free(c->fp_client_cert_file);
    free(c->fp_client_key_file);
    memset(c, 0, sizeof(*c));
}

int emu_certs_verify_client(const emu_certs *c, X509 *cert, int front_proxy)
{
    X509_STORE *store = X509_STORE_new();
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    int ok = 0;

    if (store && ctx && cert &&
        X509_STORE_add_cert(store, front_proxy ? c->fp_ca_cert : c->ca_cert) &&
        X509_STORE_CTX_init(ctx, store, cert, NULL) &&
        X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_CLIENT))
        ok = X509_verify_cert(ctx) == 1;
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);
    return ok;
}
