/*
 * kube/serving/certs.h - the serving certificate of the secure servers.
 *
 * With --tls-cert-file/--tls-private-key-file those files are served (the
 * certificate file may carry the chain after the leaf). Without them, as
 * k8s.io/apiserver's MaybeDefaultWithSelfSignedCerts does, <cert-dir>/
 * apiserver.crt and apiserver.key are used, generated on first start: a
 * self-signed CA and a serving certificate it signs (ECDSA P-256, one year,
 * SANs localhost, the host name, 127.0.0.1, ::1 and a specific
 * --bind-address), the file holding the serving certificate then the CA.
 *
 * Rotation: kube_certs_reload_if_changed() re-reads both files when either
 * changes (inode, size or modification time) and the new pair is consistent
 * (the key matches the certificate); new TLS handshakes then get it through
 * the SSL_CTX certificate callback installed by kube_certs_attach().
 * Connections already open keep the certificate they negotiated. A broken
 * pair is logged and the previous one stays in use.
 *
 * Threads: reload and the handshake callback are thread-safe.
 * Memory: kube_certs_new() allocates, kube_certs_free() frees (after the
 * SSL_CTX it was attached to is gone).
 */
#ifndef KUBE_SERVING_CERTS_H
#define KUBE_SERVING_CERTS_H

#include <openssl/ssl.h>
#include <stddef.h>

typedef struct kube_certs kube_certs;

/* The same with the generated pair named <cert_dir>/<pair_name>.crt and
 * .key (kube-scheduler's "kube-scheduler"; kube_certs_new() uses
 * "apiserver"). An empty or NULL cert_dir keeps a generated pair in
 * memory only (memfd). */
int kube_certs_new_named(const char *cert_file, const char *key_file, const char *cert_dir,
                         const char *pair_name, const char *bind_address, kube_certs **out,
                         char *err, size_t errlen);
void kube_certs_free(kube_certs *c);

/* The files in use (absolute or as given). */
const char *kube_certs_cert_file(const kube_certs *c);
const char *kube_certs_key_file(const kube_certs *c);

/* Makes every handshake on ctx use the current pair. */
void kube_certs_attach(kube_certs *c, SSL_CTX *ctx);

/* Returns 1 when a changed pair was loaded, 0 when nothing changed or the
 * new files are not usable (the old pair stays). */
int kube_certs_reload_if_changed(kube_certs *c);

#endif
