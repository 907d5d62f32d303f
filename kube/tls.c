/*
 * kube/tls.c - TLS material parsed once (contract in kube/tls.h).
 */
#include "kube/tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>

#include "kube/errors.h"

struct kube_tls {
    X509_STORE *store;     /* NULL: no CA given */
    X509 *cert;            /* NULL: no client certificate */
    STACK_OF(X509) *chain; /* certificates after the first, may be NULL */
    EVP_PKEY *key;         /* NULL: no client key */
};

void kube_tls_error(char *err, size_t errlen, const char *what)
{
    char detail[256];
    unsigned long e = ERR_get_error();

    ERR_error_string_n(e, detail, sizeof(detail));
    ERR_clear_error();
    if (err && errlen)
        snprintf(err, errlen, "%s: %s", what, e ? detail : "rejected");
}

/* Every certificate of a PEM blob, in order (an empty stack when there is
 * none), or NULL when out of memory. */
static STACK_OF(X509) *tls_read_certs(const char *pem, size_t len)
{
    STACK_OF(X509) *all = sk_X509_new_null();
    BIO *b = BIO_new_mem_buf(pem, (int)len);
    X509 *x;

    if (!all || !b) {
        sk_X509_free(all);
        BIO_free(b);
        return NULL;
    }
    while ((x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL)
        if (!sk_X509_push(all, x))
            X509_free(x);
    ERR_clear_error(); /* the end of the blob reads as an error */
    BIO_free(b);
    return all;
}

static int tls_load_ca(kube_tls *t, const kube_tls_pem *pem, char *err, size_t errlen)
{
    STACK_OF(X509) *certs = tls_read_certs(pem->ca, pem->ca_len);
    int n = 0;

    if (!certs)
        return KUBE_ENOMEM;
    t->store = X509_STORE_new();
    for (int i = 0; t->store && i < sk_X509_num(certs); i++)
        n += X509_STORE_add_cert(t->store, sk_X509_value(certs, i)) == 1;
    sk_X509_pop_free(certs, X509_free);
    ERR_clear_error(); /* a certificate given twice is not an error */
    if (!t->store)
        return KUBE_ENOMEM;
    if (n > 0)
        return KUBE_OK;
    kube_tls_error(err, errlen, "certificate authority data holds no certificate");
    return KUBE_ECONFIG;
}

static int tls_load_cert(kube_tls *t, const kube_tls_pem *pem, char *err, size_t errlen)
{
    t->chain = tls_read_certs(pem->cert, pem->cert_len);
    if (!t->chain)
        return KUBE_ENOMEM;
    t->cert = sk_X509_shift(t->chain);
    if (t->cert)
        return KUBE_OK;
    kube_tls_error(err, errlen, "client certificate data holds no certificate");
    return KUBE_ECONFIG;
}

static int tls_load_key(kube_tls *t, const kube_tls_pem *pem, char *err, size_t errlen)
{
    BIO *b = BIO_new_mem_buf(pem->key, (int)pem->key_len);

    if (!b)
        return KUBE_ENOMEM;
    t->key = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
    BIO_free(b);
    if (!t->key) {
        kube_tls_error(err, errlen, "client key data");
        return KUBE_ECONFIG;
    }
    if (t->cert && X509_check_private_key(t->cert, t->key) != 1) {
        kube_tls_error(err, errlen, "client key does not match the client certificate");
        return KUBE_ECONFIG;
    }
    return KUBE_OK;
}

int kube_tls_new(const kube_tls_pem *pem, kube_tls **out, char *err, size_t errlen)
{
    kube_tls *t = calloc(1, sizeof(*t));
    int rc = t ? KUBE_OK : KUBE_ENOMEM;

    *out = NULL;
    if (rc == KUBE_OK && pem->ca)
        rc = tls_load_ca(t, pem, err, errlen);
    if (rc == KUBE_OK && pem->cert)
        rc = tls_load_cert(t, pem, err, errlen);
    if (rc == KUBE_OK && pem->key)
        rc = tls_load_key(t, pem, err, errlen);
    if (rc != KUBE_OK) {
        kube_tls_free(t);
        return rc;
    }
    *out = t;
    return KUBE_OK;
}

void kube_tls_free(kube_tls *t)
{
    if (!t)
        return;
    X509_STORE_free(t->store);
    X509_free(t->cert);
    sk_X509_pop_free(t->chain, X509_free);
    EVP_PKEY_free(t->key);
    free(t);
}

int kube_tls_has_ca(const kube_tls *t)
{
    return t && t->store != NULL;
}

/* Installs the client certificate, its chain and the key. */
static int tls_apply_identity(const kube_tls *t, SSL_CTX *ctx)
{
    if (t->cert && SSL_CTX_use_certificate(ctx, t->cert) != 1)
        return 0;
    for (int i = 0; t->chain && i < sk_X509_num(t->chain); i++)
        if (SSL_CTX_add1_chain_cert(ctx, sk_X509_value(t->chain, i)) != 1)
            return 0;
    return !t->key || SSL_CTX_use_PrivateKey(ctx, t->key) == 1;
}

int kube_tls_apply(const kube_tls *t, SSL_CTX *ctx)
{
    if (t->store)
        SSL_CTX_set1_cert_store(ctx, t->store); /* shared, reference counted */
    return tls_apply_identity(t, ctx);
}
