/*
 * tests/unit/test_tls.c - kube/transport/tls: a kubeconfig's TLS material parsed once
 * and installed into OpenSSL contexts (trust store, client certificate with
 * its chain, key), and the errors for material OpenSSL refuses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/certkit.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/transport/tls.h"

/* A CA, an intermediate it signed, a client leaf the intermediate signed,
 * and a second unrelated CA, with their keys. */
typedef struct kit {
    X509 *ca, *mid, *leaf, *other;
    EVP_PKEY *ca_key, *mid_key, *leaf_key, *other_key;
} kit;

static int kit_setup(void **state)
{
    kit *k = calloc(1, sizeof(*k));
    kube_cert_spec ca = {"test-ca", NULL, NULL, 1, -60, 3600, NULL};
    kube_cert_spec mid = {"test-mid", NULL, NULL, 1, -60, 3600, NULL};
    kube_cert_spec leaf = {"client", NULL, "clientAuth", 0, -60, 3600, NULL};
    kube_cert_spec other = {"other-ca", NULL, NULL, 1, -60, 3600, NULL};

    if (!k || kube_certkit_issue(NULL, NULL, &ca, &k->ca, &k->ca_key) != KUBE_OK ||
        kube_certkit_issue(k->ca, k->ca_key, &mid, &k->mid, &k->mid_key) != KUBE_OK ||
        kube_certkit_issue(k->mid, k->mid_key, &leaf, &k->leaf, &k->leaf_key) != KUBE_OK ||
        kube_certkit_issue(NULL, NULL, &other, &k->other, &k->other_key) != KUBE_OK)
        return -1;
    *state = k;
    return 0;
}

static int kit_teardown(void **state)
{
    kit *k = *state;

    X509_free(k->ca);
    X509_free(k->mid);
    X509_free(k->leaf);
    X509_free(k->other);
    EVP_PKEY_free(k->ca_key);
    EVP_PKEY_free(k->mid_key);
    EVP_PKEY_free(k->leaf_key);
    EVP_PKEY_free(k->other_key);
    free(k);
    return 0;
}

/* The PEM of a key (caller frees). */
static char *key_pem(EVP_PKEY *key)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *data, *out;
    long n;

    assert_int_equal(PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL), 1);
    n = BIO_get_mem_data(b, &data);
    out = calloc(1, (size_t)n + 1);
    memcpy(out, data, (size_t)n);
    BIO_free(b);
    return out;
}

/* Concatenates the PEM of two certificates (caller frees). */
static char *two_pems(X509 *a, X509 *b)
{
    char *pa = kube_certkit_cert_pem(a), *pb = kube_certkit_cert_pem(b);
    kube_buf out = KUBE_BUF_INIT;

    assert_int_equal(kube_buf_printf(&out, "%s%s", pa, pb), KUBE_OK);
    free(pa);
    free(pb);
    return kube_buf_take(&out);
}

static SSL_CTX *applied(const kube_tls *t)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

    assert_non_null(ctx);
    assert_int_equal(kube_tls_apply(t, ctx), 1);
    return ctx;
}

/* Every certificate of a CA blob is trusted; the store is what a context
 * then verifies against. */
static void ca_blob_becomes_the_trust_store(void **state)
{
    kit *k = *state;
    char *ca = two_pems(k->ca, k->other), why[256] = "";
    kube_tls *t = kube_tls_alloc();
    SSL_CTX *ctx;

    assert_non_null(t);
    assert_false(kube_tls_has_ca(t));
    assert_int_equal(kube_tls_add_ca(t, ca, strlen(ca), why, sizeof(why)), KUBE_OK);
    assert_true(kube_tls_has_ca(t));
    ctx = applied(t);
    assert_int_equal(sk_X509_OBJECT_num(X509_STORE_get0_objects(SSL_CTX_get_cert_store(ctx))), 2);
    assert_null(SSL_CTX_get0_certificate(ctx));
    SSL_CTX_free(ctx);
    kube_tls_free(t); /* the context kept its own reference: freed in any order */
    free(ca);
}

/* Without a CA the system's store stays the trust root. */
static void no_ca_means_the_system_store(void **state)
{
    kube_tls *t = kube_tls_alloc();
    (void)state;

    assert_non_null(t);
    assert_false(kube_tls_has_ca(t));
    assert_false(kube_tls_has_ca(NULL));
    kube_tls_free(t);
    kube_tls_free(NULL);
}

/* The client certificate, its chain after it, and the key are installed. */
static void identity_with_chain_is_installed(void **state)
{
    kit *k = *state;
    char *cert = two_pems(k->leaf, k->mid), *key = key_pem(k->leaf_key), why[256] = "";
    kube_tls *t = kube_tls_alloc();
    kube_tls_part bad;
    STACK_OF(X509) *chain = NULL;
    SSL_CTX *ctx;

    assert_int_equal(
        kube_tls_add_identity(t, cert, strlen(cert), key, strlen(key), &bad, why, sizeof(why)),
        KUBE_OK);
    ctx = applied(t);
    assert_int_equal(X509_cmp(SSL_CTX_get0_certificate(ctx), k->leaf), 0);
    assert_int_equal(SSL_CTX_check_private_key(ctx), 1);
    assert_int_equal(SSL_CTX_get0_chain_certs(ctx, &chain), 1);
    assert_int_equal(sk_X509_num(chain), 1);
    assert_int_equal(X509_cmp(sk_X509_value(chain, 0), k->mid), 0);
    SSL_CTX_free(ctx);
    kube_tls_free(t);
    free(cert);
    free(key);
}

/* Adds an identity to new material and returns the part refused. */
static kube_tls_part refused_identity(const char *cert, const char *key)
{
    kube_tls *t = kube_tls_alloc();
    kube_tls_part bad = KUBE_TLS_CA;
    char why[256] = "";

    assert_int_equal(kube_tls_add_identity(t, cert, strlen(cert), key, key ? strlen(key) : 0, &bad,
                                           why, sizeof(why)),
                     KUBE_ECONFIG);
    assert_true(why[0] != '\0');
    kube_tls_free(t);
    return bad;
}

/* Material OpenSSL refuses fails at once, naming the part that is wrong. */
static void refused_material_names_the_part(void **state)
{
    kit *k = *state;
    char *cert = kube_certkit_cert_pem(k->leaf), *wrong_key = key_pem(k->other_key), why[256] = "";
    kube_tls *t = kube_tls_alloc();

    assert_int_equal(refused_identity(cert, wrong_key), KUBE_TLS_MISMATCH);
    assert_int_equal(
        refused_identity(cert,
                         "-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----\n"),
        KUBE_TLS_KEY);
    assert_int_equal(refused_identity("junk", NULL), KUBE_TLS_CERT);

    assert_int_equal(kube_tls_add_ca(t, "no certificate here", 19, why, sizeof(why)), KUBE_ECONFIG);
    assert_string_equal(why, "no CERTIFICATE block");
    assert_false(kube_tls_has_ca(t));
    kube_tls_free(t);
    free(cert);
    free(wrong_key);
}

int test_group_tls(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ca_blob_becomes_the_trust_store),
        cmocka_unit_test(no_ca_means_the_system_store),
        cmocka_unit_test(identity_with_chain_is_installed),
        cmocka_unit_test(refused_material_names_the_part),
    };
    return cmocka_run_group_tests_name("tls", tests, kit_setup, kit_teardown);
}
