/*
 * kube/transport/tls.h - a kubeconfig's TLS material (certificate authority, client
 * certificate with its chain, client key) parsed once, by kube/transport/config when
 * it loads (which is also how a bad blob is found), and installed into any
 * number of OpenSSL contexts: libcurl's (kube/transport/client), which would
 * otherwise parse the PEM blobs again for every new connection (a private
 * key decode alone costs OpenSSL 3 millions of instructions).
 *
 * The trust store is shared by reference (X509_STORE is safe for concurrent
 * verification); certificates and key are installed by reference too.
 *
 * Errors: negative KUBE_E* codes (kube/util/errors.h).
 * Threads: once filled, kube_tls_apply may run on any thread.
 * Memory: the add calls copy nothing they are given (they parse); the
 * material is freed by kube_tls_free, which contexts that got it may
 * outlive (they hold their own references).
 */
#ifndef KUBE_TLS_H
#define KUBE_TLS_H

#include <openssl/ssl.h>
#include <stddef.h>

typedef struct kube_tls kube_tls;

/* The parts of the material, for reporting which one was refused. */
typedef enum kube_tls_part {
    KUBE_TLS_CA,
    KUBE_TLS_CERT,
    KUBE_TLS_KEY,
    KUBE_TLS_MISMATCH /* key and certificate do not belong together */
} kube_tls_part;

/* Empty material (no CA, no identity), to fill with the two calls below;
 * NULL when out of memory. Free with kube_tls_free. */
kube_tls *kube_tls_alloc(void);

/* Adds every certificate of a PEM bundle to the trust store. Returns
 * KUBE_OK, KUBE_ECONFIG (a block does not parse, or there is none; why
 * (may be NULL) gets OpenSSL's reason) or KUBE_ENOMEM. */
int kube_tls_add_ca(kube_tls *t, const char *pem, size_t len, char *why, size_t whylen);

/* Sets the client certificate (the blob's first, the rest its chain) and
 * key, either may be NULL, and checks that they belong together. Returns
 * KUBE_OK, KUBE_ECONFIG (*bad says which part; why gets OpenSSL's reason)
 * or KUBE_ENOMEM. Call at most once per material. */
int kube_tls_add_identity(kube_tls *t, const char *cert, size_t cert_len, const char *key,
                          size_t key_len, kube_tls_part *bad, char *why, size_t whylen);
void kube_tls_free(kube_tls *t);

/* Whether a certificate authority was given (else the system's store is
 * the trust root). */
int kube_tls_has_ca(const kube_tls *t);

/* Installs the material into ctx: the trust store when a CA was given, the
 * client certificate, chain and key when given. Returns 1, or 0 when
 * OpenSSL refuses (out of memory). */
int kube_tls_apply(const kube_tls *t, SSL_CTX *ctx);

#endif
