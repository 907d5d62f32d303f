/*
 * kube/tls.h - a kubeconfig's TLS material (certificate authority, client
 * certificate with its chain, client key) parsed once and installed into
 * any number of OpenSSL contexts: kube/http1's, and libcurl's, which would
 * otherwise parse the PEM blobs again for every new connection (a private
 * key decode alone costs OpenSSL 3 millions of instructions).
 *
 * The trust store is shared by reference (X509_STORE is safe for concurrent
 * verification); certificates and key are installed by reference too.
 *
 * Errors: negative KUBE_E* codes (kube/errors.h).
 * Threads: after kube_tls_new, kube_tls_apply may run on any thread.
 * Memory: kube_tls_new copies nothing it is given (it parses); the material
 * is freed by kube_tls_free, which contexts that got it may outlive (they
 * hold their own references).
 */
#ifndef KUBE_TLS_H
#define KUBE_TLS_H

#include <openssl/ssl.h>
#include <stddef.h>

typedef struct kube_tls kube_tls;

typedef struct kube_tls_pem {
    const char *ca;   /* PEM certificates to trust, or NULL (the system's store) */
    size_t ca_len;
    const char *cert; /* client certificate, then its chain, or NULL */
    size_t cert_len;
    const char *key;  /* the client key, or NULL */
    size_t key_len;
} kube_tls_pem;

/* Parses pem. Returns KUBE_OK, KUBE_ECONFIG (a blob OpenSSL rejects, or a
 * key that does not match the certificate; err says which) or KUBE_ENOMEM. */
int kube_tls_new(const kube_tls_pem *pem, kube_tls **out, char *err, size_t errlen);
void kube_tls_free(kube_tls *t);

/* Whether a certificate authority was given (else the system's store is
 * the trust root). */
int kube_tls_has_ca(const kube_tls *t);

/* Installs the material into ctx: the trust store when a CA was given, the
 * client certificate, chain and key when given. Returns 1, or 0 when
 * OpenSSL refuses (out of memory). */
int kube_tls_apply(const kube_tls *t, SSL_CTX *ctx);

/* Writes "<what>: <OpenSSL's first queued error>" (or "<what>: rejected")
 * into err (may be NULL) and clears OpenSSL's error queue. */
void kube_tls_error(char *err, size_t errlen, const char *what);

#endif
