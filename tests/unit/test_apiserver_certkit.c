/*
 * tests/unit/test_apiserver_certkit.c - certificates made to order for the
 * stickyvm-apiserver tests (no test group here): CAs, intermediates and
 * leaves with a chosen CN, organizations, extended key usage and validity
 * window. The declarations are repeated in the test files that use them:
 *
 *   typedef struct apis_testkit_spec {...} apis_testkit_spec;
 *   int apis_testkit_issue(X509 *issuer, EVP_PKEY *issuer_key,
 *                          const apis_testkit_spec *spec, X509 **cert, EVP_PKEY **key);
 *   char *apis_testkit_pem(X509 *cert);
 *   int apis_testkit_write(const char *cert_path, const char *key_path, X509 *cert,
 *                          STACK_OF(X509) *chain, EVP_PKEY *key);
 *
 * Memory: certificates and keys returned are the caller's (X509_free,
 * EVP_PKEY_free); PEM strings are freed with free().
 */
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/buf.h"
#include "kube/errors.h"

typedef struct apis_testkit_spec {
    const char *cn;          /* "" or NULL: no CN */
    const char *const *orgs; /* NULL-terminated, or NULL */
    const char *eku;         /* "clientAuth", "serverAuth,clientAuth", ... or NULL: none */
    int ca;                  /* basicConstraints CA:TRUE */
    long not_before_s;       /* relative to now */
    long not_after_s;
    const char *san; /* "DNS:localhost,IP:127.0.0.1" or NULL */
} apis_testkit_spec;

int apis_testkit_issue(X509 *issuer, EVP_PKEY *issuer_key, const apis_testkit_spec *spec,
                       X509 **cert, EVP_PKEY **key);
char *apis_testkit_pem(X509 *cert);
int apis_testkit_write(const char *cert_path, const char *key_path, X509 *cert,
                       STACK_OF(X509) * chain, EVP_PKEY *key);

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

static int set_subject(X509 *x, const apis_testkit_spec *spec)
{
    X509_NAME *name = X509_get_subject_name(x);

    for (size_t i = 0; spec->orgs && spec->orgs[i]; i++)
        if (!X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                                        (const unsigned char *)spec->orgs[i], -1, -1, 0))
            return 0;
    if (!spec->cn || !*spec->cn)
        return 1; /* no CN at all */
    return X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)spec->cn,
                                      -1, -1, 0);
}

static int extensions(X509 *x, X509 *issuer, const apis_testkit_spec *spec)
{
    if (!add_ext(x, issuer, NID_basic_constraints, spec->ca ? "critical,CA:TRUE" : "CA:FALSE"))
        return 0;
    if (!add_ext(x, issuer, NID_key_usage,
                 spec->ca ? "critical,keyCertSign,digitalSignature"
                          : "critical,digitalSignature,keyEncipherment"))
        return 0;
    if (spec->eku && !add_ext(x, issuer, NID_ext_key_usage, spec->eku))
        return 0;
    if (spec->san && !add_ext(x, issuer, NID_subject_alt_name, spec->san))
        return 0;
    return add_ext(x, issuer, NID_subject_key_identifier, "hash");
}

int apis_testkit_issue(X509 *issuer, EVP_PKEY *issuer_key, const apis_testkit_spec *spec,
                       X509 **cert, EVP_PKEY **key)
{
    static long serial = 1000;
    EVP_PKEY *k = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    int ok = k && x && X509_set_version(x, 2) &&
             ASN1_INTEGER_set(X509_get_serialNumber(x), __atomic_add_fetch(&serial, 1, 0)) &&
             X509_gmtime_adj(X509_getm_notBefore(x), spec->not_before_s) &&
             X509_gmtime_adj(X509_getm_notAfter(x), spec->not_after_s) && set_subject(x, spec) &&
             X509_set_pubkey(x, k);

    if (ok && !issuer) {
        issuer = x;
        issuer_key = k;
    }
    ok = ok && X509_set_issuer_name(x, X509_get_subject_name(issuer)) &&
         extensions(x, issuer, spec) && X509_sign(x, issuer_key, EVP_sha256());
    if (!ok) {
        X509_free(x);
        EVP_PKEY_free(k);
        return KUBE_ENOMEM;
    }
    *cert = x;
    *key = k;
    return KUBE_OK;
}

char *apis_testkit_pem(X509 *cert)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *data = NULL, *out = NULL;
    long n;

    if (bio && PEM_write_bio_X509(bio, cert) && (n = BIO_get_mem_data(bio, &data)) > 0) {
        out = malloc((size_t)n + 1);
        if (out) {
            memcpy(out, data, (size_t)n);
            out[n] = '\0';
        }
    }
    BIO_free(bio);
    return out;
}

int apis_testkit_write(const char *cert_path, const char *key_path, X509 *cert,
                       STACK_OF(X509) * chain, EVP_PKEY *key)
{
    FILE *f = fopen(cert_path, "w");
    int ok = f && PEM_write_X509(f, cert);

    for (int i = 0; ok && chain && i < sk_X509_num(chain); i++)
        ok = PEM_write_X509(f, sk_X509_value(chain, i));
    if (f && fclose(f) != 0)
        ok = 0;
    if (ok && key_path) {
        f = fopen(key_path, "w");
        ok = f && PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
        if (f && fclose(f) != 0)
            ok = 0;
    }
    return ok ? KUBE_OK : KUBE_EIO;
}
