/*
 * kube/serving/certs.c - the serving certificate of the secure servers. The
 * contract is in certs.h.
 */
#include "kube/serving/certs.h"
#include "kube/serving/certs_testing.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kube/util/buf.h"
#include "kube/util/certkit.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"

#define VALIDITY_DAYS 365

typedef struct file_id {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
} file_id;

typedef struct pair {
    X509 *leaf;
    STACK_OF(X509) * chain;
    EVP_PKEY *key;
} pair;

struct kube_certs {
    pthread_mutex_t mu;
    char *cert_file;
    char *key_file;
    int mem_fds[2]; /* in-memory pair (no --cert-dir): its memfds, else -1 */
    file_id cert_id, key_id;
    pair current;
};

static void pair_free(pair *p)
{
    X509_free(p->leaf);
    sk_X509_pop_free(p->chain, X509_free);
    EVP_PKEY_free(p->key);
    memset(p, 0, sizeof(*p));
}

static int stat_id(const char *path, file_id *id)
{
    struct stat st;

    if (stat(path, &st) != 0)
        return KUBE_EIO;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    id->size = st.st_size;
    id->mtime = st.st_mtim;
    return KUBE_OK;
}

static int same_id(const file_id *a, const file_id *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* The certificate file's first certificate (p->leaf) and the chain after
 * it (kube/util/certkit.h's reader). KUBE_OK, KUBE_EIO (unreadable),
 * KUBE_EPARSE (no certificate) or KUBE_ENOMEM; err says which file. */
static int load_chain(const char *path, pair *p, char *err, size_t errlen)
{
    char *pem = NULL;
    size_t len = 0;
    int malformed, rc = kube_read_file(path, &pem, &len);

    if (rc != KUBE_OK) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return KUBE_EIO;
    }
    rc = kube_certkit_read_certs(pem, len, &p->chain, &malformed);
    free(pem);
    ERR_clear_error();
    if (rc != KUBE_OK)
        return rc;
    p->leaf = sk_X509_shift(p->chain);
    if (!p->leaf) {
        snprintf(err, errlen, "%s: no PEM certificate found", path);
        return KUBE_EPARSE;
    }
    return KUBE_OK;
}

static int load_pair(const char *cert_file, const char *key_file, pair *out, char *err,
                     size_t errlen)
{
    pair p = {0};
    BIO *bio;
    int rc = load_chain(cert_file, &p, err, errlen);

    if (rc != KUBE_OK)
        goto fail;
    bio = BIO_new_file(key_file, "r");
    if (!bio) {
        snprintf(err, errlen, "%s: %s", key_file, strerror(errno));
        rc = KUBE_EIO;
        goto fail;
    }
    p.key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    BIO_free(bio);
    if (!p.key || X509_check_private_key(p.leaf, p.key) != 1) {
        snprintf(err, errlen, "%s: %s", key_file,
                 p.key ? "the private key does not match the certificate"
                       : "no PEM private key found");
        rc = KUBE_EPARSE;
        goto fail;
    }
    *out = p;
    return KUBE_OK;
fail:
    ERR_clear_error();
    pair_free(&p);
    return rc;
}

/* ---- generation ---- */

/* A self-signed CA (*ca, *ca_key) and a serving certificate it signs
 * (*leaf, *key) for the names given. */
static int issue_pair(const char *const *dns, const char *const *ips, X509 **ca, EVP_PKEY **ca_key,
                      X509 **leaf, EVP_PKEY **key)
{
    const char *host = dns && dns[0] ? dns[0] : "localhost";
    kube_buf san = KUBE_BUF_INIT;
    char ca_cn[128], cn[128];
    kube_cert_spec ca_spec = {ca_cn, NULL, NULL, 1, -3600, (long)VALIDITY_DAYS * 86400, NULL};
    kube_cert_spec leaf_spec = {cn,  NULL, "serverAuth", 0, -3600, (long)VALIDITY_DAYS * 86400,
                                NULL};
    int rc = kube_certkit_san(&san, dns, ips);

    snprintf(ca_cn, sizeof(ca_cn), "%s-ca@%lld", host, (long long)time(NULL));
    snprintf(cn, sizeof(cn), "%s@%lld", host, (long long)time(NULL));
    leaf_spec.san = san.data;
    if (rc == KUBE_OK)
        rc = kube_certkit_issue(NULL, NULL, &ca_spec, ca, ca_key);
    if (rc == KUBE_OK)
        rc = kube_certkit_issue(*ca, *ca_key, &leaf_spec, leaf, key);
    kube_buf_free(&san);
    return rc;
}

/* Writes the whole of text to fd. */
static int write_all(int fd, const char *text)
{
    size_t len = text ? strlen(text) : 0, off = 0;

    if (!text)
        return KUBE_ENOMEM;
    while (off < len) {
        ssize_t n = write(fd, text + off, len - off);
        if (n <= 0)
            return KUBE_EIO;
        off += (size_t)n;
    }
    return KUBE_OK;
}

/* The pair as PEM into two descriptors: the certificate then the CA, and
 * the key. */
static int write_pem(int cert_fd, int key_fd, X509 *leaf, X509 *ca, EVP_PKEY *key)
{
    char *leaf_pem = kube_certkit_cert_pem(leaf), *ca_pem = kube_certkit_cert_pem(ca);
    char *key_pem = kube_certkit_key_pem(key);
    int rc = write_all(cert_fd, leaf_pem);

    if (rc == KUBE_OK)
        rc = write_all(cert_fd, ca_pem);
    if (rc == KUBE_OK)
        rc = write_all(key_fd, key_pem);
    if (key_pem)
        OPENSSL_cleanse(key_pem, strlen(key_pem));
    free(leaf_pem);
    free(ca_pem);
    free(key_pem);
    return rc;
}

/* Generates the pair into files (paths) or, with fds, into descriptors. */
static int generate(const char *cert_path, const char *key_path, const int *fds,
                    const char *const *dns, const char *const *ips, char *err, size_t errlen)
{
    X509 *ca = NULL, *leaf = NULL;
    EVP_PKEY *ca_key = NULL, *key = NULL;
    STACK_OF(X509) *chain = sk_X509_new_null();
    int rc = chain ? issue_pair(dns, ips, &ca, &ca_key, &leaf, &key) : KUBE_ENOMEM;

    if (rc == KUBE_OK && fds)
        rc = write_pem(fds[0], fds[1], leaf, ca, key);
    else if (rc == KUBE_OK)
        rc = sk_X509_push(chain, ca) ? kube_certkit_write(cert_path, key_path, leaf, chain, key)
                                     : KUBE_ENOMEM;
    if (rc != KUBE_OK)
        snprintf(err, errlen, "generating a self-signed certificate into %s: %s", cert_path,
                 kube_strerror(rc));
    sk_X509_free(chain); /* ca is freed below */
    X509_free(ca);
    X509_free(leaf);
    EVP_PKEY_free(ca_key);
    EVP_PKEY_free(key);
    return rc;
}

int kube_certs_generate(const char *cert_path, const char *key_path, const char *const *dns,
                        const char *const *ips, char *err, size_t errlen)
{
    return generate(cert_path, key_path, NULL, dns, ips, err, errlen);
}

static int make_dirs(const char *dir)
{
    char buf[4096];
    size_t n = strlen(dir);

    if (n == 0 || n >= sizeof(buf))
        return KUBE_ERANGE;
    memcpy(buf, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        buf[i] = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return KUBE_EIO;
        buf[i] = i < n ? '/' : '\0';
    }
    return KUBE_OK;
}

/* Generates the self-signed pair into cert_path and key_path for
 * localhost, this host, the loopback addresses and a specific
 * bind_address. */
static int generate_default(const char *cert_path, const char *key_path, const int *fds,
                            const char *bind_address, char *err, size_t errlen)
{
    char hostname[256] = "localhost";
    const char *dns[] = {"localhost", hostname, NULL};
    const char *ips[] = {"127.0.0.1", "::1", NULL, NULL};

    gethostname(hostname, sizeof(hostname) - 1);
    if (bind_address && strcmp(bind_address, "0.0.0.0") != 0 && strcmp(bind_address, "::") != 0 &&
        strcmp(bind_address, "127.0.0.1") != 0)
        ips[2] = bind_address;
    return generate(cert_path, key_path, fds, dns, ips, err, errlen);
}

/* No --cert-dir: the generated pair is kept in two anonymous memory files
 * (memfd), never on disk, as kube-scheduler keeps it in memory. */
static int memory_pair(kube_certs *c, const char *bind_address, char *err, size_t errlen)
{
    char cert_path[64], key_path[64];

    c->mem_fds[0] = memfd_create("serving-cert", MFD_CLOEXEC);
    c->mem_fds[1] = memfd_create("serving-key", MFD_CLOEXEC);
    if (c->mem_fds[0] < 0 || c->mem_fds[1] < 0) {
        snprintf(err, errlen, "cannot keep a serving certificate in memory: %s", strerror(errno));
        return KUBE_EIO;
    }
    snprintf(cert_path, sizeof(cert_path), "/proc/self/fd/%d", c->mem_fds[0]);
    snprintf(key_path, sizeof(key_path), "/proc/self/fd/%d", c->mem_fds[1]);
    c->cert_file = kube_strdup(cert_path);
    c->key_file = kube_strdup(key_path);
    if (!c->cert_file || !c->key_file)
        return KUBE_ENOMEM;
    return generate_default(cert_path, key_path, c->mem_fds, bind_address, err, errlen);
}

/* <cert-dir>/<pair>.{crt,key}, generated when missing. */
static int default_pair(const char *cert_dir, const char *pair_name, const char *bind_address,
                        char **cert_file, char **key_file, char *err, size_t errlen)
{
    kube_buf c = KUBE_BUF_INIT, k = KUBE_BUF_INIT;
    int rc;

    if (kube_buf_printf(&c, "%s/%s.crt", cert_dir, pair_name) != KUBE_OK ||
        kube_buf_printf(&k, "%s/%s.key", cert_dir, pair_name) != KUBE_OK) {
        rc = KUBE_ENOMEM;
        goto done;
    }
    rc = KUBE_OK;
    if (access(c.data, R_OK) != 0 || access(k.data, R_OK) != 0) {
        rc = make_dirs(cert_dir);
        if (rc != KUBE_OK)
            snprintf(err, errlen, "--cert-dir %s: cannot create: %s", cert_dir, strerror(errno));
        else if ((rc = generate_default(c.data, k.data, NULL, bind_address, err, errlen)) ==
                 KUBE_OK)
            KLOG_INFO("generated a self-signed serving certificate in %s", c.data);
    }
    if (rc == KUBE_OK) {
        *cert_file = kube_buf_take(&c);
        *key_file = kube_buf_take(&k);
    }
done:
    kube_buf_free(&c);
    kube_buf_free(&k);
    return rc;
}

int kube_certs_new(const char *cert_file, const char *key_file, const char *cert_dir,
                   const char *bind_address, kube_certs **out, char *err, size_t errlen)
{
    return kube_certs_new_named(cert_file, key_file, cert_dir, "apiserver", bind_address, out, err,
                                errlen);
}

int kube_certs_new_named(const char *cert_file, const char *key_file, const char *cert_dir,
                         const char *pair_name, const char *bind_address, kube_certs **out,
                         char *err, size_t errlen)
{
    kube_certs *c = calloc(1, sizeof(*c));
    int rc = KUBE_OK;

    *out = NULL;
    if (!c)
        return KUBE_ENOMEM;
    pthread_mutex_init(&c->mu, NULL);
    c->mem_fds[0] = c->mem_fds[1] = -1;
    if (cert_file && key_file) {
        c->cert_file = kube_strdup(cert_file);
        c->key_file = kube_strdup(key_file);
        if (!c->cert_file || !c->key_file)
            rc = KUBE_ENOMEM;
    } else if (!cert_dir || !*cert_dir) {
        rc = memory_pair(c, bind_address, err, errlen);
    } else {
        rc = default_pair(cert_dir, pair_name, bind_address, &c->cert_file, &c->key_file, err,
                          errlen);
    }
    if (rc == KUBE_OK && (stat_id(c->cert_file, &c->cert_id) != KUBE_OK ||
                          stat_id(c->key_file, &c->key_id) != KUBE_OK)) {
        snprintf(err, errlen, "%s: %s", c->cert_file, strerror(errno));
        rc = KUBE_EIO;
    }
    if (rc == KUBE_OK)
        rc = load_pair(c->cert_file, c->key_file, &c->current, err, errlen);
    if (rc != KUBE_OK) {
        kube_certs_free(c);
        return rc;
    }
    *out = c;
    return KUBE_OK;
}

void kube_certs_free(kube_certs *c)
{
    if (!c)
        return;
    pair_free(&c->current);
    free(c->cert_file);
    free(c->key_file);
    for (int i = 0; i < 2; i++)
        if (c->mem_fds[i] >= 0)
            close(c->mem_fds[i]);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

const char *kube_certs_cert_file(const kube_certs *c)
{
    return c->cert_file;
}

const char *kube_certs_key_file(const kube_certs *c)
{
    return c->key_file;
}

static int cert_cb(SSL *ssl, void *arg)
{
    kube_certs *c = arg;
    int ok;

    pthread_mutex_lock(&c->mu);
    ok = SSL_use_certificate(ssl, c->current.leaf) == 1 &&
         SSL_use_PrivateKey(ssl, c->current.key) == 1 && SSL_set1_chain(ssl, c->current.chain) == 1;
    pthread_mutex_unlock(&c->mu);
    return ok ? 1 : 0;
}

void kube_certs_attach(kube_certs *c, SSL_CTX *ctx)
{
    SSL_CTX_set_cert_cb(ctx, cert_cb, c);
}

int kube_certs_reload_if_changed(kube_certs *c)
{
    file_id cid, kid;
    pair fresh = {0}, old;
    char err[512];

    if (stat_id(c->cert_file, &cid) != KUBE_OK || stat_id(c->key_file, &kid) != KUBE_OK)
        return 0;
    if (same_id(&cid, &c->cert_id) && same_id(&kid, &c->key_id))
        return 0;
    if (load_pair(c->cert_file, c->key_file, &fresh, err, sizeof(err)) != KUBE_OK) {
        KLOG_WARN("serving certificate not reloaded: %s", err);
        return 0; /* retried on the next check: the ids were not recorded */
    }
    pthread_mutex_lock(&c->mu);
    old = c->current;
    c->current = fresh;
    pthread_mutex_unlock(&c->mu);
    pair_free(&old);
    c->cert_id = cid;
    c->key_id = kid;
    KLOG_INFO("serving certificate reloaded from %s", c->cert_file);
    return 1;
}
