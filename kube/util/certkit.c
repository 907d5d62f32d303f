/*
 * kube/util/certkit.c - keys and certificates issued to order (certkit.h).
 */
#include "kube/util/certkit.h"

#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/util/errors.h"

/* Adds extension nid with the OpenSSL config text value. 1 or 0. */
static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509_EXTENSION *ext;
    int ok;

    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!ext)
        return 0;
    ok = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return ok;
}

/* A random positive 127-bit serial. 1 or 0. */
static int set_serial(X509 *x)
{
    unsigned char serial[16];
    BIGNUM *bn = NULL;
    int ok = RAND_bytes(serial, sizeof(serial)) == 1;

    serial[0] &= 0x7f;
    if (ok)
        bn = BN_bin2bn(serial, sizeof(serial), NULL);
    ok = ok && bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x));
    BN_free(bn);
    return ok;
}

/* O= entries then CN= (none when cn is NULL or ""). 1 or 0. */
static int set_subject(X509 *x, const kube_cert_spec *spec)
{
    X509_NAME *name = X509_get_subject_name(x);

    for (size_t i = 0; spec->orgs && spec->orgs[i]; i++)
        if (!X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                                        (const unsigned char *)spec->orgs[i], -1, -1, 0))
            return 0;
    if (!spec->cn || !*spec->cn)
        return 1;
    return X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)spec->cn,
                                      -1, -1, 0);
}

/* The extensions spec asks for, and the key identifiers. 1 or 0. */
static int extensions(X509 *x, X509 *issuer, const kube_cert_spec *spec)
{
    if (!add_ext(x, issuer, NID_basic_constraints,
                 spec->ca ? "critical,CA:TRUE" : "critical,CA:FALSE"))
        return 0;
    if (!add_ext(x, issuer, NID_key_usage,
                 spec->ca ? "critical,digitalSignature,keyCertSign,cRLSign"
                          : "critical,digitalSignature,keyEncipherment"))
        return 0;
    if (spec->eku && !add_ext(x, issuer, NID_ext_key_usage, spec->eku))
        return 0;
    if (spec->san && *spec->san && !add_ext(x, issuer, NID_subject_alt_name, spec->san))
        return 0;
    if (!add_ext(x, issuer, NID_subject_key_identifier, "hash"))
        return 0;
    return issuer == x || add_ext(x, issuer, NID_authority_key_identifier, "keyid:always");
}

int kube_certkit_issue(X509 *issuer, EVP_PKEY *issuer_key, const kube_cert_spec *spec, X509 **cert,
                       EVP_PKEY **key)
{
    EVP_PKEY *k = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    int ok = k && x && X509_set_version(x, 2) && set_serial(x) &&
             X509_gmtime_adj(X509_getm_notBefore(x), spec->not_before_s) &&
             X509_gmtime_adj(X509_getm_notAfter(x), spec->not_after_s) && set_subject(x, spec) &&
             X509_set_pubkey(x, k);

    if (ok && !issuer) {
        issuer = x;
        issuer_key = k;
    }
    ok = ok && X509_set_issuer_name(x, X509_get_subject_name(issuer)) &&
         extensions(x, issuer, spec) && X509_sign(x, issuer_key, EVP_sha256());
    ERR_clear_error();
    if (!ok) {
        X509_free(x);
        EVP_PKEY_free(k);
        return KUBE_ENOMEM;
    }
    *cert = x;
    *key = k;
    return KUBE_OK;
}

/* The memory BIO's text as a malloc'd string, or NULL. */
static char *bio_text(BIO *bio, int written)
{
    char *data = NULL, *out = NULL;
    long n;

    if (written && (n = BIO_get_mem_data(bio, &data)) > 0 && (out = malloc((size_t)n + 1))) {
        memcpy(out, data, (size_t)n);
        out[n] = '\0';
    }
    BIO_free(bio);
    return out;
}

char *kube_certkit_cert_pem(X509 *cert)
{
    BIO *bio = BIO_new(BIO_s_mem());
    return bio ? bio_text(bio, PEM_write_bio_X509(bio, cert)) : NULL;
}

char *kube_certkit_key_pem(EVP_PKEY *key)
{
    BIO *bio = BIO_new(BIO_s_mem());
    return bio ? bio_text(bio, PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL))
               : NULL;
}

/* Writes path through path.tmp (mode) renamed into place: the certificate
 * and the chain, or the key when key is set. */
static int write_atomic(const char *path, int mode, X509 *cert, STACK_OF(X509) * chain,
                        EVP_PKEY *key)
{
    char tmp[4096];
    int fd, ok;
    FILE *f;

    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
        return KUBE_ERANGE;
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd < 0)
        return KUBE_EIO;
    f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        return KUBE_EIO;
    }
    if (key) {
        ok = PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
    } else {
        ok = PEM_write_X509(f, cert);
        for (int i = 0; ok && chain && i < sk_X509_num(chain); i++)
            ok = PEM_write_X509(f, sk_X509_value(chain, i));
    }
    if (fclose(f) != 0 || !ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return KUBE_EIO;
    }
    return KUBE_OK;
}

int kube_certkit_write(const char *cert_path, const char *key_path, X509 *cert,
                       STACK_OF(X509) * chain, EVP_PKEY *key)
{
    int rc = key_path ? write_atomic(key_path, 0600, NULL, NULL, key) : KUBE_OK;

    return rc == KUBE_OK ? write_atomic(cert_path, 0644, cert, chain, NULL) : rc;
}

int kube_certkit_san(kube_buf *b, const char *const *dns, const char *const *ips)
{
    int rc = KUBE_OK;

    for (size_t i = 0; dns && dns[i] && rc == KUBE_OK; i++)
        rc = kube_buf_printf(b, "%sDNS:%s", b->len ? "," : "", dns[i]);
    for (size_t i = 0; ips && ips[i] && rc == KUBE_OK; i++)
        rc = kube_buf_printf(b, "%sIP:%s", b->len ? "," : "", ips[i]);
    return rc;
}

int kube_certkit_read_certs(const char *pem, size_t len, STACK_OF(X509) * *out, int *malformed)
{
    STACK_OF(X509) *all = sk_X509_new_null();
    BIO *b = len <= 0x7fffffff ? BIO_new_mem_buf(pem, (int)len) : NULL;
    X509 *x;

    ERR_clear_error();
    *malformed = 0;
    *out = NULL;
    if (!all || !b) {
        sk_X509_free(all);
        BIO_free(b);
        return KUBE_ENOMEM;
    }
    while ((x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL)
        if (!sk_X509_push(all, x))
            X509_free(x);
    /* The loop ends at the end of the data (no start line) or a broken block. */
    *malformed = ERR_GET_REASON(ERR_peek_last_error()) != PEM_R_NO_START_LINE;
    BIO_free(b);
    *out = all;
    return KUBE_OK;
}
