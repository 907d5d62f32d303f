/*
 * kube/transport/tls.c - TLS material parsed once (contract in kube/transport/tls.h).
 */
#include "kube/transport/tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>

#include "kube/util/certkit.h"
#include "kube/util/errors.h"

struct kube_tls {
    X509_STORE *store;      /* NULL: no CA given */
    X509 *cert;             /* NULL: no client certificate */
    STACK_OF(X509) * chain; /* certificates after the first, may be NULL */
    EVP_PKEY *key;          /* NULL: no client key */
};

/* OpenSSL's reason for the last queued error, or "no PEM data found". */
static const char *tls_reason(void)
{
    unsigned long e = ERR_peek_last_error();
    const char *why = e ? ERR_reason_error_string(e) : NULL;

    return why ? why : "no PEM data found";
}

/* Writes why (may be NULL) and returns KUBE_ECONFIG. */
static int tls_refuse(char *why, size_t whylen, const char *reason)
{
    if (why && whylen)
        snprintf(why, whylen, "%s", reason);
    return KUBE_ECONFIG;
}

int kube_tls_add_ca(kube_tls *t, const char *pem, size_t len, char *why, size_t whylen)
{
    int malformed, rc = KUBE_OK;
    STACK_OF(X509) *certs = NULL;

    if (kube_certkit_read_certs(pem, len, &certs, &malformed) != KUBE_OK)
        return KUBE_ENOMEM;
    if (malformed)
        rc = tls_refuse(why, whylen, tls_reason());
    else if (sk_X509_num(certs) == 0)
        rc = tls_refuse(why, whylen, "no CERTIFICATE block");
    if (rc == KUBE_OK && !t->store && !(t->store = X509_STORE_new()))
        rc = KUBE_ENOMEM;
    for (int i = 0; rc == KUBE_OK && i < sk_X509_num(certs); i++)
        X509_STORE_add_cert(t->store, sk_X509_value(certs, i));
    sk_X509_pop_free(certs, X509_free);
    ERR_clear_error(); /* a certificate given twice is not an error */
    return rc;
}

/* The client certificate (the blob's first) and the chain after it. Only
 * the first block must parse, as a kubeconfig's client certificate. */
static int tls_add_cert(kube_tls *t, const char *pem, size_t len, char *why, size_t whylen)
{
    int malformed;

    if (kube_certkit_read_certs(pem, len, &t->chain, &malformed) != KUBE_OK)
        return KUBE_ENOMEM;
    t->cert = sk_X509_shift(t->chain);
    return t->cert ? KUBE_OK : tls_refuse(why, whylen, tls_reason());
}

static int tls_add_key(kube_tls *t, const char *pem, size_t len, char *why, size_t whylen)
{
    BIO *b = BIO_new_mem_buf(pem, (int)len);

    if (!b)
        return KUBE_ENOMEM;
    ERR_clear_error();
    t->key = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
    BIO_free(b);
    return t->key ? KUBE_OK : tls_refuse(why, whylen, tls_reason());
}

int kube_tls_add_identity(kube_tls *t, const char *cert, size_t cert_len, const char *key,
                          size_t key_len, kube_tls_part *bad, char *why, size_t whylen)
{
    int rc = KUBE_OK;

    *bad = KUBE_TLS_CERT;
    if (cert)
        rc = tls_add_cert(t, cert, cert_len, why, whylen);
    if (rc == KUBE_OK && key) {
        *bad = KUBE_TLS_KEY;
        rc = tls_add_key(t, key, key_len, why, whylen);
    }
    if (rc == KUBE_OK && t->cert && t->key && X509_check_private_key(t->cert, t->key) != 1) {
        *bad = KUBE_TLS_MISMATCH;
        rc = tls_refuse(why, whylen, tls_reason());
    }
    ERR_clear_error();
    return rc;
}

kube_tls *kube_tls_alloc(void)
{
    return calloc(1, sizeof(kube_tls));
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
