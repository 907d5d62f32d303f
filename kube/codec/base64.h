/*
 * kube/codec/base64.h - standard base64 (RFC 4648 section 4, with padding), the
 * encoding of kubeconfig *-data fields, Secret data and JSON []byte fields.
 *
 * Decoding is strict like Go's base64.StdEncoding: only the standard
 * alphabet, '=' padding to a multiple of four characters and only at the
 * end. Like Go, CR and LF anywhere in the input are skipped (PEM-style line
 * wrapping); any other character (space, '-', '_', ...) is an error.
 *
 * Memory: both functions allocate *out (NUL-terminated, for convenience
 * also after binary data); the caller frees it with free(). On error *out is
 * NULL.
 */
#ifndef KUBE_BASE64_H
#define KUBE_BASE64_H

#include <stddef.h>

/* Encodes len bytes of data. *out_len (may be NULL) receives the text
 * length. Returns KUBE_OK, KUBE_ENOMEM or KUBE_ERANGE (input too large). */
int kube_base64_encode(const void *data, size_t len, char **out, size_t *out_len);

/* Decodes len characters of text. *out_len (may be NULL) receives the byte
 * count. Returns KUBE_OK, KUBE_EPARSE (invalid base64) or KUBE_ENOMEM. */
int kube_base64_decode(const char *text, size_t len, unsigned char **out, size_t *out_len);

#endif
