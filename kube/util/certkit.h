/*
 * kube/util/certkit.h - the one certificate kit: EC P-256 keys and X.509
 * certificates issued to order (CAs, serving and client certificates with
 * a chosen subject, key usage, SANs and validity window), PEM text, and
 * certificate and key files written atomically. stickyvm-apiserver's
 * self-signed mode, the API emulator's PKI and the tests all use it.
 *
 * Threads: every function is thread-safe (OpenSSL 3).
 * Memory: certificates and keys returned are the caller's (X509_free,
 * EVP_PKEY_free); PEM strings are the caller's (free()).
 */
#ifndef KUBE_CERTKIT_H
#define KUBE_CERTKIT_H

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "kube/util/buf.h"

typedef struct kube_cert_spec {
    const char *cn;          /* NULL or "": no CN */
    const char *const *orgs; /* O= entries, NULL-terminated, or NULL */
    const char *eku;         /* "serverAuth", "clientAuth", "serverAuth,clientAuth" or NULL */
    int ca;                  /* basicConstraints CA:TRUE, keyCertSign */
    long not_before_s;       /* validity, relative to now (e.g. -3600) */
    long not_after_s;
    const char *san; /* "DNS:localhost,IP:127.0.0.1" or NULL */
} kube_cert_spec;

/* A new P-256 key (*key) and a certificate for it (*cert) as spec says,
 * signed by issuer with issuer_key, or self-signed when issuer is NULL: a
 * random positive 127-bit serial, the subject key identifier, and the
 * authority key identifier when issued by another. KUBE_OK, or KUBE_ENOMEM
 * (OpenSSL failed: a bad SAN or EKU text too) with nothing allocated. */
int kube_certkit_issue(X509 *issuer, EVP_PKEY *issuer_key, const kube_cert_spec *spec, X509 **cert,
                       EVP_PKEY **key);

/* The PEM text of cert, or of key (PKCS#8, unencrypted); NULL when memory
 * runs out. The caller frees it. */
char *kube_certkit_cert_pem(X509 *cert);
char *kube_certkit_key_pem(EVP_PKEY *key);

/* Writes cert then the chain (may be NULL) to cert_path (mode 0644), and
 * key to key_path (mode 0600; NULL: no key file), each through a temporary
 * file renamed into place. KUBE_OK, KUBE_ERANGE (path too long) or
 * KUBE_EIO. */
int kube_certkit_write(const char *cert_path, const char *key_path, X509 *cert,
                       STACK_OF(X509) * chain, EVP_PKEY *key);

/* The one PEM certificate reader: every certificate of the PEM text
 * pem[0..len), in order, into *out (a new stack; the caller frees it with
 * sk_X509_pop_free(*out, X509_free)). *malformed is set when a block did
 * not parse (rather than the text simply ending); OpenSSL's last queued
 * error then says why. KUBE_OK (possibly with no certificate: the caller
 * decides whether that is an error) or KUBE_ENOMEM (*out NULL). */
int kube_certkit_read_certs(const char *pem, size_t len, STACK_OF(X509) * *out, int *malformed);

/* Appends "DNS:<d>" for each of dns and "IP:<i>" for each of ips
 * (NULL-terminated lists, either may be NULL), comma-separated, to b: a
 * kube_cert_spec.san. KUBE_OK or KUBE_ENOMEM. */
int kube_certkit_san(kube_buf *b, const char *const *dns, const char *const *ips);

#endif
