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
#include "kube/log.h"

static EVP_PKEY *new_key(void)
{
    return EVP_EC_gen("P-256");
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509_EXTENSION *ext;
    int ok;

    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!ext)
        return KUBE_EINVAL;
    ok = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return ok ? KUBE_OK : KUBE_ENOMEM;
}

static int set_serial(X509 *cert)
{
    unsigned char buf[16];
    BIGNUM *bn;
    int ok;

    if (RAND_bytes(buf, sizeof(buf)) != 1)
        return KUBE_EIO;
    buf[0] &= 0x7f;
    bn = BN_bin2bn(buf, sizeof(buf), NULL);
    if (!bn)
        return KUBE_ENOMEM;
    ok = BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) != NULL;
    BN_free(bn);
    return ok ? KUBE_OK : KUBE_ENOMEM;
}

static int set_subject(X509 *cert, const char *cn, const char *const *orgs, size_t n_orgs)
{
    X509_NAME *name = X509_get_subject_name(cert);

    for (size_t i = 0; i < n_orgs; i++)
        if (!X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, (const unsigned char *)orgs[i],
                                        -1, -1, 0))
            return KUBE_EINVAL;
    if (!X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1,
                                    0))
        return KUBE_EINVAL;
    return KUBE_OK;
}

/* A certificate skeleton: version 3, serial, validity, subject, key. */
static X509 *cert_base(const char *cn, const char *const *orgs, size_t n_orgs, EVP_PKEY *key,
                       int days)
{
    X509 *cert = X509_new();

    if (!cert)
        return NULL;
    if (!X509_set_version(cert, 2) || set_serial(cert) != KUBE_OK ||
        !X509_gmtime_adj(X509_getm_notBefore(cert), -3600) ||
        !X509_gmtime_adj(X509_getm_notAfter(cert), (long)days * 86400) ||
        set_subject(cert, cn, orgs, n_orgs) != KUBE_OK || !X509_set_pubkey(cert, key)) {
        X509_free(cert);
        return NULL;
    }
    return cert;
}

static int make_ca(const char *cn, X509 **cert_out, EVP_PKEY **key_out)
{
    EVP_PKEY *key = new_key();
    X509 *cert = key ? cert_base(cn, NULL, 0, key, 3650) : NULL;

    if (!cert || !X509_set_issuer_name(cert, X509_get_subject_name(cert)) ||
        add_ext(cert, cert, NID_basic_constraints, "critical,CA:TRUE") != KUBE_OK ||
        add_ext(cert, cert, NID_key_usage, "critical,digitalSignature,keyCertSign,cRLSign") !=
            KUBE_OK ||
        add_ext(cert, cert, NID_subject_key_identifier, "hash") != KUBE_OK ||
        !X509_sign(cert, key, EVP_sha256())) {
        X509_free(cert);
        EVP_PKEY_free(key);
        return KUBE_ENOMEM;
    }
    *cert_out = cert;
    *key_out = key;
    return KUBE_OK;
}

static int san_value(const emu_cert_req *req, kube_buf *b)
{
    int rc = KUBE_OK;

    for (size_t i = 0; i < req->n_dns && rc == KUBE_OK; i++)
        rc = kube_buf_printf(b, "%sDNS:%s", b->len ? "," : "", req->dns[i]);
    for (size_t i = 0; i < req->n_ips && rc == KUBE_OK; i++)
        rc = kube_buf_printf(b, "%sIP:%s", b->len ? "," : "", req->ips[i]);
    return rc;
}

static int leaf_extensions(X509 *cert, X509 *issuer, const emu_cert_req *req)
{
    kube_buf san = KUBE_BUF_INIT;
    int rc;

    rc = add_ext(cert, issuer, NID_basic_constraints, "critical,CA:FALSE");
    if (rc == KUBE_OK)
        rc = add_ext(cert, issuer, NID_key_usage, "critical,digitalSignature,keyEncipherment");
    if (rc == KUBE_OK)
        rc = add_ext(cert, issuer, NID_ext_key_usage, req->server ? "serverAuth" : "clientAuth");
    if (rc == KUBE_OK)
        rc = add_ext(cert, issuer, NID_authority_key_identifier, "keyid:always");
    if (rc == KUBE_OK)
        rc = san_value(req, &san);
    if (rc == KUBE_OK && san.len)
        rc = add_ext(cert, issuer, NID_subject_alt_name, san.data);
    kube_buf_free(&san);
    return rc;
}

static char *pem_of(int (*write)(BIO *, void *), void *what)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *data, *out = NULL;
    long n;

    if (!bio)
        return NULL;
    if (write(bio, what)) {
        n = BIO_get_mem_data(bio, &data);
        out = malloc((size_t)n + 1);
        if (out) {
            memcpy(out, data, (size_t)n);
            out[n] = '\0';
        }
    }
    BIO_free(bio);
    return out;
}

static int write_cert_bio(BIO *b, void *c)
{
    return PEM_write_bio_X509(b, c);
}

static int write_key_bio(BIO *b, void *k)
{
    return PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
}

static int issue(X509 *ca, EVP_PKEY *ca_key, const emu_cert_req *req, char **cert_pem,
                 char **key_pem)
{
    EVP_PKEY *key = new_key();
    X509 *cert =
        key ? cert_base(req->cn, req->orgs, req->n_orgs, key, req->days ? req->days : 365) : NULL;
    int rc = KUBE_ENOMEM;

    *cert_pem = *key_pem = NULL;
    if (cert && X509_set_issuer_name(cert, X509_get_subject_name(ca)) &&
        leaf_extensions(cert, ca, req) == KUBE_OK && X509_sign(cert, ca_key, EVP_sha256())) {
        *cert_pem = pem_of(write_cert_bio, cert);
        *key_pem = pem_of(write_key_bio, key);
        rc = (*cert_pem && *key_pem) ? KUBE_OK : KUBE_ENOMEM;
    }
    if (rc != KUBE_OK) {
        free(*cert_pem);
        free(*key_pem);
        *cert_pem = *key_pem = NULL;
    }
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
    char *key_pem = pem_of(write_key_bio, key);
    int rc;

    *pem = pem_of(write_cert_bio, cert);
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
