/*
 * kube/codec/base64.c - standard base64 (RFC 4648 section 4, with padding), the
 * encoding of kubeconfig *-data fields, Secret data and JSON []byte fields.
 * The contract is in base64.h.
 */
#include "kube/codec/base64.h"

#include "kube/util/errors.h"

#include <limits.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

int kube_base64_encode(const void *data, size_t len, char **out, size_t *out_len)
{
    size_t text_len;
    char *text;

    *out = NULL;
    if (len > (size_t)INT_MAX / 4 * 3)
        return KUBE_ERANGE;
    text_len = (len + 2) / 3 * 4;
    text = malloc(text_len + 1);
    if (!text)
        return KUBE_ENOMEM;
    /* EVP_EncodeBlock writes text_len characters and a NUL. */
    EVP_EncodeBlock((unsigned char *)text, data, (int)len);
    *out = text;
    if (out_len)
        *out_len = text_len;
    return KUBE_OK;
}

static int b64_is_alphabet(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/';
}

/* Copies text without CR/LF into a new buffer, checking the alphabet and the
 * padding. Returns the cleaned length through *clean_len and the number of
 * '=' through *pad. */
static int b64_clean(const char *text, size_t len, char **clean, size_t *clean_len, size_t *pad)
{
    char *buf = malloc(len + 1);
    size_t n = 0, npad = 0;

    if (!buf)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\r' || c == '\n')
            continue;
        if (c == '=') {
            npad++;
        } else if (!b64_is_alphabet(c) || npad > 0) {
            free(buf); /* foreign character, or data after padding */
            return KUBE_EPARSE;
        }
        buf[n++] = (char)c;
    }
    buf[n] = '\0';
    if (n % 4 != 0 || npad > 2 || n > (size_t)INT_MAX) {
        free(buf);
        return KUBE_EPARSE;
    }
    *clean = buf;
    *clean_len = n;
    *pad = npad;
    return KUBE_OK;
}

int kube_base64_decode(const char *text, size_t len, unsigned char **out, size_t *out_len)
{
    char *clean;
    size_t clean_len, pad;
    unsigned char *bytes;
    int n, rc;

    *out = NULL;
    rc = b64_clean(text, len, &clean, &clean_len, &pad);
    if (rc != KUBE_OK)
        return rc;
    bytes = malloc(clean_len / 4 * 3 + 1);
    if (!bytes) {
        free(clean);
        return KUBE_ENOMEM;
    }
    n = EVP_DecodeBlock(bytes, (const unsigned char *)clean, (int)clean_len);
    free(clean);
    if (n < 0 || (size_t)n < pad) {
        free(bytes);
        return KUBE_EPARSE;
    }
    /* EVP_DecodeBlock counts padding as zero bytes; drop them. */
    n -= (int)pad;
    bytes[n] = '\0';
    *out = bytes;
    if (out_len)
        *out_len = (size_t)n;
    return KUBE_OK;
}
