/*
 * kube/serving/certs_testing.h - the test hooks of certs.h: entry points the
 * tests and benchmarks use and the daemons never call.
 */
#ifndef KUBE_SERVING_CERTS_TESTING_H
#define KUBE_SERVING_CERTS_TESTING_H

#include "kube/serving/certs.h"

/* cert_file and key_file both set, or both NULL (then cert_dir is used).
 * bind_address (may be NULL) is added to the SANs of a generated
 * certificate when it is a specific IP. Returns KUBE_OK, KUBE_EIO,
 * KUBE_EPARSE (err names the file) or KUBE_ENOMEM. */
int kube_certs_new(const char *cert_file, const char *key_file, const char *cert_dir,
                   const char *bind_address, kube_certs **out, char *err, size_t errlen);

/* Writes a self-signed CA and a serving certificate for the given DNS names
 * and IP addresses (NULL-terminated lists) to cert_path (certificate, then
 * CA) and key_path (mode 0600). Used for --cert-dir and by tests. */
int kube_certs_generate(const char *cert_path, const char *key_path, const char *const *dns,
                        const char *const *ips, char *err, size_t errlen);

#endif
