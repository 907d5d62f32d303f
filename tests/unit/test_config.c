/*
 * tests/unit/test_config.c - kubeconfig and in-cluster loading, token
 * files, precedence, and the base64 helpers they rest on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube/codec/base64.h"
#include "kube/util/buf.h"
#include "kube/transport/config.h"
#include "kube/util/errors.h"
#include "kube/transport/config_testing.h"

/* A throwaway CA, a client certificate it signed, that certificate's key,
 * and an unrelated key (EC P-256, valid until 2126). */
static const char CA_PEM[] = "-----BEGIN CERTIFICATE-----\n"
                             "MIIBejCCASGgAwIBAgIUSFxxs1AnctvdP/Ku+Se5t6RoFPAwCgYIKoZIzj0EAwIw\n"
                             "EjEQMA4GA1UEAwwHdGVzdC1jYTAgFw0yNjExMjExMDM5NThaGA8yMTI2MTAyODEw\n"
                             "Mzk1OFowEjEQMA4GA1UEAwwHdGVzdC1jYTBZMBMGByqGSM49AgEGCCqGSM49AwEH\n"
                             "A0IABPXJk7qi3OTEKWWETP9Gl6Y35TJfxsN58NRebdVsEgVrOVt/1cl6DvUbqYZT\n"
                             "DxbltH3EPDhfr5Li75mvuMN+/j2jUzBRMB0GA1UdDgQWBBSW+z4F48waOSwMG90Z\n"
                             "59Ff0e+BIzAfBgNVHSMEGDAWgBSW+z4F48waOSwMG90Z59Ff0e+BIzAPBgNVHRMB\n"
                             "Af8EBTADAQH/MAoGCCqGSM49BAMCA0cAMEQCIFlsTZdHERmSMrH2Tcj5hzxZREcc\n"
                             "w+hypuhbUeS67EEQAiAYC+saj4ia8UKIjxTUBAeG55qcJqAhD4Jst3r++oBP/A==\n"
                             "-----END CERTIFICATE-----\n";
static const char CERT_PEM[] = "-----BEGIN CERTIFICATE-----\n"
                               "MIIBNzCB3gIUMZBYj4n54av1bLO0BHsCk9iFagQwCgYIKoZIzj0EAwIwEjEQMA4G\n"
                               "A1UEAwwHdGVzdC1jYTAgFw0yNjExMjExMDM5NThaGA8yMTI2MTAyODEwMzk1OFow\n"
                               "KTEOMAwGA1UEAwwFYWRtaW4xFzAVBgNVBAoMDnN5c3RlbTptYXN0ZXJzMFkwEwYH\n"
                               "KoZIzj0CAQYIKoZIzj0DAQcDQgAEiC4YLhq2jFjP08lvTxsbkiAdtq/UWO0/D+p2\n"
                               "JZY6F/GVEjHsrb1Wd/cGagP0MAhTbdTxp6jCIycipi/KSqzNkzAKBggqhkjOPQQD\n"
                               "AgNIADBFAiB9tA/JvsHb5vs4ScJ2EkK8Lbm5wMawADLVhBs2vwKvTwIhALVqB3AQ\n"
                               "M9e/ucp8Uwf0APkWUzElKpAOazl4xTZrhVRb\n"
                               "-----END CERTIFICATE-----\n";
static const char KEY_PEM[] = "-----BEGIN EC PRIVATE KEY-----\n"
                              "MHcCAQEEILDB3/xjbNsLdNhg1ZsBMsHN0XyWJBzGmnFSvlRpAQT7oAoGCCqGSM49\n"
                              "AwEHoUQDQgAEiC4YLhq2jFjP08lvTxsbkiAdtq/UWO0/D+p2JZY6F/GVEjHsrb1W\n"
                              "d/cGagP0MAhTbdTxp6jCIycipi/KSqzNkw==\n"
                              "-----END EC PRIVATE KEY-----\n";
static const char OTHER_KEY_PEM[] =
    "-----BEGIN EC PRIVATE KEY-----\n"
    "MHcCAQEEIKVuxitAkN5YD2Ys2RHQaycuN7WoSC+nKQpLoocNcYAxoAoGCCqGSM49\n"
    "AwEHoUQDQgAEwqzleEICkZCivdbqW0YED4xDLVPxmtF8Kt+ludMKHy2ErNgdoKJQ\n"
    "CncaYyAvsWROL8YEwRYasrhIY6PNFsyFbw==\n"
    "-----END EC PRIVATE KEY-----\n";

/* ---- fixture: a temporary directory and a clean environment ----------- */

static const char *const saved_env_names[] = {"KUBECONFIG", "KUBERNETES_SERVICE_HOST",
                                              "KUBERNETES_SERVICE_PORT", "KUBE_SA_DIR"};
#define N_ENV (sizeof(saved_env_names) / sizeof(saved_env_names[0]))

typedef struct cfg_fixture {
    char dir[64];
    char *saved_env[N_ENV];
    char path[256];    /* last path built by fx_path */
    char kc_path[256]; /* last kubeconfig written by fx_kubeconfig */
    char env[1024];    /* last KUBECONFIG set by fx_kubeconfig_env */
    char err[512];
} cfg_fixture;

static int fx_setup(void **state)
{
    cfg_fixture *fx = calloc(1, sizeof(*fx));

    if (!fx)
        return -1;
    kube_strlcpy(fx->dir, "/tmp/stickyvm-config-XXXXXX", sizeof(fx->dir));
    if (!mkdtemp(fx->dir)) {
        free(fx);
        return -1;
    }
    for (size_t i = 0; i < N_ENV; i++) {
        fx->saved_env[i] = kube_strdup(getenv(saved_env_names[i]));
        unsetenv(saved_env_names[i]);
    }
    *state = fx;
    return 0;
}

static int fx_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int fx_teardown(void **state)
{
    cfg_fixture *fx = *state;

    nftw(fx->dir, fx_rm, 8, FTW_DEPTH | FTW_PHYS);
    for (size_t i = 0; i < N_ENV; i++) {
        if (fx->saved_env[i])
            setenv(saved_env_names[i], fx->saved_env[i], 1);
        else
            unsetenv(saved_env_names[i]);
        free(fx->saved_env[i]);
    }
    free(fx);
    return 0;
}

/* dir/name, in fx->path. */
static const char *fx_path(cfg_fixture *fx, const char *name)
{
    snprintf(fx->path, sizeof(fx->path), "%s/%s", fx->dir, name);
    return fx->path;
}

static void fx_write(cfg_fixture *fx, const char *name, const char *text)
{
    char path[300];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", fx->dir, name);
    f = fopen(path, "w");

    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static char *b64(const char *text)
{
    char *out;
    assert_int_equal(kube_base64_encode(text, strlen(text), &out, NULL), KUBE_OK);
    return out;
}

/* Writes a kubeconfig whose current context "ctx" uses cluster "c1" and
 * user "u1" with the given YAML bodies (indented by the caller). */
static const char *fx_kubeconfig(cfg_fixture *fx, const char *name, const char *cluster,
                                 const char *user)
{
    kube_buf b = KUBE_BUF_INIT;

    assert_int_equal(kube_buf_printf(&b,
                                     "apiVersion: v1\n"
                                     "kind: Config\n"
                                     "current-context: ctx\n"
                                     "contexts:\n"
                                     "- name: other\n"
                                     "  context: {cluster: nope, user: nope}\n"
                                     "- name: ctx\n"
                                     "  context:\n"
                                     "    cluster: c1\n"
                                     "    user: u1\n"
                                     "    namespace: team-a\n"
                                     "clusters:\n"
                                     "- name: c0\n"
                                     "  cluster: {server: https://wrong:1}\n"
                                     "- name: c1\n"
                                     "  cluster:\n%s"
                                     "users:\n"
                                     "- name: u1\n"
                                     "  user:\n%s",
                                     cluster, user),
                     KUBE_OK);
    fx_write(fx, name, b.data);
    kube_buf_free(&b);
    snprintf(fx->kc_path, sizeof(fx->kc_path), "%s/%s", fx->dir, name);
    return fx->kc_path;
}

typedef const char *(*pem_getter)(const kube_config *, size_t *);

static void assert_pem(const kube_config *cfg, pem_getter get, const char *want)
{
    size_t len = 0;
    const char *got = get(cfg, &len);

    assert_non_null(got);
    assert_int_equal(len, strlen(want));
    assert_memory_equal(got, want, len);
}

/* Loads path expecting failure rc, and checks the message names the file
 * and contains fragment. */
static void expect_error(cfg_fixture *fx, const char *path, int rc, const char *fragment)
{
    kube_config *cfg = (kube_config *)1;
    char want_prefix[300];

    fx->err[0] = '\0';
    assert_int_equal(kube_config_from_file(path, &cfg, fx->err, sizeof(fx->err)), rc);
    assert_null(cfg);
    snprintf(want_prefix, sizeof(want_prefix), "%s: ", path);
    if (strncmp(fx->err, want_prefix, strlen(want_prefix)) != 0 || !strstr(fx->err, fragment))
        fail_msg("error \"%s\" should start with \"%s\" and contain \"%s\"", fx->err, want_prefix,
                 fragment);
}

/* ---- kubeconfig ------------------------------------------------------ */

static void loads_embedded_data(void **state)
{
    cfg_fixture *fx = *state;
    char *ca = b64(CA_PEM), *cert = b64(CERT_PEM), *key = b64(KEY_PEM);
    char cluster[2048], user[2048], tok[64];
    kube_config *cfg;
    const char *path;

    snprintf(cluster, sizeof(cluster),
             "    server: https://10.0.0.1:6443/\n"
             "    certificate-authority-data: %s\n"
             "    tls-server-name: kubernetes.default\n",
             ca);
    snprintf(user, sizeof(user),
             "    client-certificate-data: %s\n"
             "    client-key-data: %s\n",
             cert, key);
    path = fx_kubeconfig(fx, "kubeconfig", cluster, user);
    assert_int_equal(kube_config_from_file(path, &cfg, fx->err, sizeof(fx->err)), KUBE_OK);
    assert_string_equal(kube_config_server(cfg), "https://10.0.0.1:6443");
    assert_pem(cfg, kube_config_ca_pem, CA_PEM);
    assert_pem(cfg, kube_config_cert_pem, CERT_PEM);
    assert_pem(cfg, kube_config_key_pem, KEY_PEM);
    assert_int_equal(kube_config_insecure(cfg), 0);
    assert_string_equal(kube_config_tls_server_name(cfg), "kubernetes.default");
    assert_string_equal(kube_config_namespace(cfg), "team-a");
    assert_string_equal(kube_config_source(cfg), path);
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok), 0), KUBE_ENOTFOUND);
    kube_config_free(cfg);
    free(ca);
    free(cert);
    free(key);
}

static void resolves_relative_file_references(void **state)
{
    cfg_fixture *fx = *state;
    kube_config *cfg;
    char abs_ca[300];

    assert_int_equal(mkdir(fx_path(fx, "conf"), 0700), 0);
    assert_int_equal(mkdir(fx_path(fx, "conf/pki"), 0700), 0);
    fx_write(fx, "conf/pki/client.crt", CERT_PEM);
    fx_write(fx, "conf/pki/client.key", KEY_PEM);
    fx_write(fx, "ca.crt", CA_PEM);
    kube_strlcpy(abs_ca, fx_path(fx, "ca.crt"), sizeof(abs_ca));
    fx_write(fx, "conf/token", "  file-token-1\n");
    {
        char cluster[512];
        snprintf(cluster, sizeof(cluster),
                 "    server: https://api.example:6443\n"
                 "    certificate-authority: %s\n",
                 abs_ca);
        fx_kubeconfig(fx, "conf/kubeconfig", cluster,
                      "    client-certificate: pki/client.crt\n"
                      "    client-key: ./pki/client.key\n"
                      "    tokenFile: token\n");
    }
    assert_int_equal(
        kube_config_from_file(fx_path(fx, "conf/kubeconfig"), &cfg, fx->err, sizeof(fx->err)),
        KUBE_OK);
    assert_pem(cfg, kube_config_ca_pem, CA_PEM);
    assert_pem(cfg, kube_config_cert_pem, CERT_PEM);
    assert_pem(cfg, kube_config_key_pem, KEY_PEM);
    {
        char tok[64];
        assert_int_equal(kube_config_token(cfg, tok, sizeof(tok), 0), KUBE_OK);
        assert_string_equal(tok, "file-token-1");
    }
    kube_config_free(cfg);
}

static void missing_referenced_file_names_field(void **state)
{
    cfg_fixture *fx = *state;
    const char *path = fx_kubeconfig(fx, "kubeconfig",
                                     "    server: https://h:6443\n"
                                     "    certificate-authority: missing/ca.crt\n",
                                     "    token: abc\n");
    char want[400];

    snprintf(want, sizeof(want),
             "clusters[1].cluster.certificate-authority: cannot read %s/missing/ca.crt", fx->dir);
    expect_error(fx, path, KUBE_ECONFIG, want);
}

static void token_and_token_file(void **state)
{
    cfg_fixture *fx = *state;
    kube_config *cfg;
    const char *path;
    char tok[64];

    /* token alone */
    path = fx_kubeconfig(fx, "k1", "    server: https://h:6443\n", "    token: inline-token\n");
    assert_int_equal(kube_config_from_file(path, &cfg, fx->err, sizeof(fx->err)), KUBE_OK);
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok), 1), KUBE_OK);
    assert_string_equal(tok, "inline-token");
    assert_int_equal(kube_config_token(cfg, tok, 5, 0), KUBE_ERANGE);
    kube_config_free(cfg);

    /* both: the file wins while readable, the inline token is the fallback */
    fx_write(fx, "tok", "from-file\n");
    path = fx_kubeconfig(fx, "k2", "    server: https://h:6443\n",
                         "    token: inline-token\n    tokenFile: tok\n");
    assert_int_equal(kube_config_from_file(path, &cfg, fx->err, sizeof(fx->err)), KUBE_OK);
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok), 0), KUBE_OK);
    assert_string_equal(tok, "from-file");
    kube_config_free(cfg);
    assert_int_equal(unlink(fx_path(fx, "tok")), 0);
    assert_int_equal(kube_config_from_file(fx_path(fx, "k2"), &cfg, fx->err, sizeof(fx->err)),
                     KUBE_OK);
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok), 1), KUBE_OK);
    assert_string_equal(tok, "inline-token");
    kube_config_free(cfg);

    /* tokenFile alone must be readable and hold one token */
    path = fx_kubeconfig(fx, "k3", "    server: https://h:6443\n", "    tokenFile: tok\n");
    expect_error(fx, path, KUBE_ECONFIG, "users[0].user.tokenFile: cannot read");
    fx_write(fx, "tok", "two words\n");
    expect_error(fx, path, KUBE_ECONFIG, "users[0].user.tokenFile:");
    path = fx_kubeconfig(fx, "k4", "    server: https://h:6443\n", "    token: \"a\\r\\nX: y\"\n");
    expect_error(fx, path, KUBE_ECONFIG, "users[0].user.token: not a single bearer token");
}

static void token_file_is_reread(void **state)
{
    cfg_fixture *fx = *state;
    kube_config *cfg;
    const char *path;
    char tok[64];

    fx_write(fx, "tok", "first\n");
    path = fx_kubeconfig(fx, "kubeconfig", "    server: https://h:6443\n", "    tokenFile: tok\n");
    assert_int_equal(kube_config_from_file(path, &cfg, fx->err, sizeof(fx->err)), KUBE_OK);
    fx_write(fx, "tok", "second\n");
    /* within the refresh period the cached token stays, unless forced */
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok), 0), KUBE_OK);
    assert_string_equal(tok, "first");
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok), 1), KUBE_OK);
    assert_string_equal(tok, "second");
    /* with a zero period every call re-reads */
    kube_config_set_token_refresh_ms(cfg, 0);
    fx_write(fx, "tok", "third\n");
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok), 0), KUBE_OK);
    assert_string_equal(tok, "third");
    /* a failed re-read keeps the last good token */
    assert_int_equal(unlink(fx_path(fx, "tok")), 0);
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok), 0), KUBE_OK);
    assert_string_equal(tok, "third");
    fx_write(fx, "tok", "");
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok), 1), KUBE_OK);
    assert_string_equal(tok, "third");
    kube_config_free(cfg);
}

static void insecure_skip_tls_verify(void **state)
{
    cfg_fixture *fx = *state;
    kube_config *cfg;
    const char *path;
    char cluster[2048];
    char *ca = b64(CA_PEM);

    path = fx_kubeconfig(fx, "k1",
                         "    server: 127.0.0.1:6443\n"
                         "    insecure-skip-tls-verify: true\n",
                         "    token: t\n");
    assert_int_equal(kube_config_from_file(path, &cfg, fx->err, sizeof(fx->err)), KUBE_OK);
    assert_int_equal(kube_config_insecure(cfg), 1);
    assert_null(kube_config_ca_pem(cfg, NULL));
    assert_string_equal(kube_config_server(cfg), "https://127.0.0.1:6443");
    kube_config_free(cfg);

    snprintf(cluster, sizeof(cluster),
             "    server: https://h:6443\n"
             "    insecure-skip-tls-verify: true\n"
             "    certificate-authority-data: %s\n",
             ca);
    path = fx_kubeconfig(fx, "k2", cluster, "    token: t\n");
    expect_error(fx, path, KUBE_ECONFIG,
                 "clusters[1].cluster.insecure-skip-tls-verify: cannot be combined");
    path = fx_kubeconfig(fx, "k3",
                         "    server: https://h:6443\n"
                         "    insecure-skip-tls-verify: maybe\n",
                         "    token: t\n");
    expect_error(fx, path, KUBE_ECONFIG,
                 "clusters[1].cluster.insecure-skip-tls-verify: expected true or false");
    free(ca);
}

/* kube-scheduler's --master replaces the server, normalised as
 * cluster.server; a bad URL is refused and the server kept. */
static void master_overrides_the_server(void **state)
{
    cfg_fixture *fx = *state;
    kube_config *cfg;
    const char *path = fx_kubeconfig(fx, "k1", "    server: https://h:6443\n", "    token: t\n");

    assert_int_equal(kube_config_from_file(path, &cfg, fx->err, sizeof(fx->err)), KUBE_OK);
    assert_int_equal(kube_config_set_server(cfg, "10.0.0.1:6443/", fx->err, sizeof(fx->err)),
                     KUBE_OK);
    assert_string_equal(kube_config_server(cfg), "https://10.0.0.1:6443");
    assert_int_equal(kube_config_set_server(cfg, "ftp://x", fx->err, sizeof(fx->err)),
                     KUBE_ECONFIG);
    assert_string_equal(
        fx->err, "--master: unsupported URL scheme in \"ftp://x\" (want https:// or http://)");
    assert_string_equal(kube_config_server(cfg), "https://10.0.0.1:6443");
    kube_config_free(cfg);
}

static void missing_pieces_are_named(void **state)
{
    cfg_fixture *fx = *state;

    fx_write(fx, "k1", "apiVersion: v1\nkind: Config\nclusters: []\n");
    expect_error(fx, fx_path(fx, "k1"), KUBE_ECONFIG, "current-context: not set");
    fx_write(fx, "k2", "current-context: gone\ncontexts:\n- name: ctx\n  context: {}\n");
    expect_error(fx, fx_path(fx, "k2"), KUBE_ECONFIG,
                 "current-context: context \"gone\" not found in contexts");
    fx_write(fx, "k3",
             "current-context: ctx\n"
             "contexts:\n- name: ctx\n  context: {cluster: c9, user: u1}\n"
             "clusters:\n- name: c1\n  cluster: {server: https://h}\n"
             "users:\n- name: u1\n  user: {token: t}\n");
    expect_error(fx, fx_path(fx, "k3"), KUBE_ECONFIG,
                 "contexts[0].context.cluster: cluster \"c9\" not found in clusters");
    fx_write(fx, "k4",
             "current-context: ctx\n"
             "contexts:\n- name: ctx\n  context: {cluster: c1, user: u9}\n"
             "clusters:\n- name: c1\n  cluster: {server: https://h}\n"
             "users:\n- name: u1\n  user: {token: t}\n");
    expect_error(fx, fx_path(fx, "k4"), KUBE_ECONFIG,
                 "contexts[0].context.user: user \"u9\" not found in users");
    fx_write(fx, "k5",
             "current-context: ctx\n"
             "contexts:\n- name: ctx\n  context: {cluster: c1}\n"
             "clusters:\n- name: c1\n  cluster: {server: https://h}\n");
    expect_error(fx, fx_path(fx, "k5"), KUBE_ECONFIG, "contexts[0].context.user: not set");
    expect_error(fx,
                 fx_kubeconfig(fx, "k6", "    insecure-skip-tls-verify: true\n", "    token: t\n"),
                 KUBE_ECONFIG, "clusters[1].cluster.server: not set");
    expect_error(fx, fx_kubeconfig(fx, "k7", "    server: ftp://h\n", "    token: t\n"),
                 KUBE_ECONFIG, "clusters[1].cluster.server: unsupported URL scheme");
    fx_write(fx, "k8", "current-context: [a\n");
    expect_error(fx, fx_path(fx, "k8"), KUBE_EPARSE, "invalid YAML at line");
    fx_write(fx, "k9", "");
    expect_error(fx, fx_path(fx, "k9"), KUBE_ECONFIG, "file is empty");
    fx_write(fx, "k10", "- just\n- a list\n");
    expect_error(fx, fx_path(fx, "k10"), KUBE_ECONFIG, "not a kubeconfig");
    fx_write(fx, "k11", "current-context: ctx\ncontexts: {ctx: {}}\n");
    expect_error(fx, fx_path(fx, "k11"), KUBE_ECONFIG, "contexts: expected a list");
    expect_error(fx, fx_path(fx, "does-not-exist"), KUBE_EIO, "cannot read");
}

static void bad_base64_names_field(void **state)
{
    cfg_fixture *fx = *state;
    char *cert = b64(CERT_PEM);
    char user[2048], want[400];
    const char *path;

    snprintf(user, sizeof(user),
             "    client-certificate-data: %s\n"
             "    client-key-data: bm90-base64!\n",
             cert);
    path = fx_kubeconfig(fx, "kubeconfig", "    server: https://h:6443\n", user);
    snprintf(want, sizeof(want), "%s: users[0].user.client-key-data: invalid base64", path);
    expect_error(fx, path, KUBE_ECONFIG, "");
    assert_string_equal(fx->err, want);
    free(cert);
}

static void pem_material_is_checked(void **state)
{
    cfg_fixture *fx = *state;
    char *cert = b64(CERT_PEM), *other = b64(OTHER_KEY_PEM), *junk = b64("not a pem\n");
    char text[2048];

    snprintf(text, sizeof(text), "    client-certificate-data: %s\n    client-key-data: %s\n", cert,
             other);
    expect_error(fx, fx_kubeconfig(fx, "k1", "    server: https://h\n", text), KUBE_ECONFIG,
                 "users[0].user.client-key-data: private key does not match");
    snprintf(text, sizeof(text), "    client-certificate-data: %s\n", cert);
    expect_error(fx, fx_kubeconfig(fx, "k2", "    server: https://h\n", text), KUBE_ECONFIG,
                 "users[0].user.client-certificate-data: set without client-key");
    snprintf(text, sizeof(text), "    server: https://h\n    certificate-authority-data: %s\n",
             junk);
    expect_error(fx, fx_kubeconfig(fx, "k3", text, "    token: t\n"), KUBE_ECONFIG,
                 "clusters[1].cluster.certificate-authority-data: no valid PEM certificate");
    fx_write(fx, "key.pem", KEY_PEM);
    snprintf(text, sizeof(text),
             "    client-key: key.pem\n    client-key-data: %s\n"
             "    client-certificate-data: %s\n",
             other, cert);
    expect_error(fx, fx_kubeconfig(fx, "k4", "    server: https://h\n", text), KUBE_ECONFIG,
                 "users[0].user.client-key-data: both client-key-data and client-key are set");
    free(cert);
    free(other);
    free(junk);
}

static void unsupported_auth_is_rejected(void **state)
{
    cfg_fixture *fx = *state;

    expect_error(fx,
                 fx_kubeconfig(fx, "k1", "    server: https://h\n",
                               "    exec:\n"
                               "      apiVersion: client.authentication.k8s.io/v1beta1\n"
                               "      command: aws\n"),
                 KUBE_ECONFIG, "users[0].user.exec: not supported");
    expect_error(fx,
                 fx_kubeconfig(fx, "k2", "    server: https://h\n",
                               "    auth-provider:\n      name: oidc\n"),
                 KUBE_ECONFIG, "users[0].user.auth-provider: not supported");
    expect_error(fx,
                 fx_kubeconfig(fx, "k3", "    server: https://h\n",
                               "    username: admin\n    password: secret\n"),
                 KUBE_ECONFIG, "users[0].user.username: not supported");
    expect_error(fx,
                 fx_kubeconfig(fx, "k4", "    server: https://h\n    proxy-url: http://p:3128\n",
                               "    token: t\n"),
                 KUBE_ECONFIG, "clusters[1].cluster.proxy-url: not supported");
}

/* ---- in-cluster and precedence -------------------------------------- */

/* A service-account directory with token, ca.crt and namespace. */
static void fx_service_account(cfg_fixture *fx, const char *token)
{
    char sa[256];

    kube_strlcpy(sa, fx_path(fx, "sa"), sizeof(sa));
    mkdir(sa, 0700);
    fx_write(fx, "sa/token", token);
    fx_write(fx, "sa/ca.crt", CA_PEM);
    fx_write(fx, "sa/namespace", "kube-system");
    setenv("KUBE_SA_DIR", sa, 1);
}

static void in_cluster_from_env(void **state)
{
    cfg_fixture *fx = *state;
    kube_config *cfg;
    char tok[64];

    assert_int_equal(kube_config_in_cluster(&cfg, fx->err, sizeof(fx->err)), KUBE_ECONFIG);
    assert_non_null(strstr(fx->err, "KUBERNETES_SERVICE_HOST"));
    fx_service_account(fx, "sa-token-1\n");
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    assert_int_equal(kube_config_in_cluster(&cfg, fx->err, sizeof(fx->err)), KUBE_OK);
    assert_string_equal(kube_config_server(cfg), "https://10.96.0.1:443");
    assert_pem(cfg, kube_config_ca_pem, CA_PEM);
    assert_string_equal(kube_config_namespace(cfg), "kube-system");
    assert_string_equal(kube_config_source(cfg), "in-cluster");
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok), 0), KUBE_OK);
    assert_string_equal(tok, "sa-token-1");
    /* bound tokens rotate: the file is re-read */
    fx_write(fx, "sa/token", "sa-token-2");
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok), 1), KUBE_OK);
    assert_string_equal(tok, "sa-token-2");
    kube_config_free(cfg);

    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    assert_int_equal(kube_config_in_cluster(&cfg, fx->err, sizeof(fx->err)), KUBE_OK);
    assert_string_equal(kube_config_server(cfg), "https://[fd00::1]:443");
    kube_config_free(cfg);

    setenv("KUBERNETES_SERVICE_PORT", "https", 1);
    assert_int_equal(kube_config_in_cluster(&cfg, fx->err, sizeof(fx->err)), KUBE_ECONFIG);
    assert_non_null(strstr(fx->err, "KUBERNETES_SERVICE_PORT"));
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);

    /* no CA: system roots, as client-go; no token: an error */
    assert_int_equal(unlink(fx_path(fx, "sa/ca.crt")), 0);
    assert_int_equal(kube_config_in_cluster(&cfg, fx->err, sizeof(fx->err)), KUBE_OK);
    assert_null(kube_config_ca_pem(cfg, NULL));
    kube_config_free(cfg);
    assert_int_equal(unlink(fx_path(fx, "sa/token")), 0);
    assert_int_equal(kube_config_in_cluster(&cfg, fx->err, sizeof(fx->err)), KUBE_ECONFIG);
    assert_null(cfg);
    assert_non_null(strstr(fx->err, "sa/token"));
}

static void precedence_flag_env_in_cluster(void **state)
{
    cfg_fixture *fx = *state;
    char a[256], b[256], env[600];
    kube_config *cfg;

    kube_strlcpy(a, fx_kubeconfig(fx, "a", "    server: https://flag:1\n", "    token: t\n"),
                 sizeof(a));
    kube_strlcpy(b, fx_kubeconfig(fx, "b", "    server: https://env:2\n", "    token: t\n"),
                 sizeof(b));
    fx_service_account(fx, "sa-token");
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    snprintf(env, sizeof(env), "%s/none::%s", fx->dir, b);
    setenv("KUBECONFIG", env, 1);

    assert_int_equal(kube_config_load(a, &cfg, fx->err, sizeof(fx->err)), KUBE_OK);
    assert_string_equal(kube_config_server(cfg), "https://flag:1");
    kube_config_free(cfg);
    assert_int_equal(kube_config_load("", &cfg, fx->err, sizeof(fx->err)), KUBE_OK);
    assert_string_equal(kube_config_server(cfg), "https://env:2");
    kube_config_free(cfg);
    /* a KUBECONFIG naming no existing file falls back to in-cluster */
    snprintf(env, sizeof(env), "%s/none", fx->dir);
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(kube_config_load(NULL, &cfg, fx->err, sizeof(fx->err)), KUBE_OK);
    assert_string_equal(kube_config_server(cfg), "https://10.96.0.1:443");
    kube_config_free(cfg);
    unsetenv("KUBECONFIG");
    assert_int_equal(kube_config_load(NULL, &cfg, fx->err, sizeof(fx->err)), KUBE_OK);
    assert_string_equal(kube_config_source(cfg), "in-cluster");
    kube_config_free(cfg);
    /* an explicit flag must exist */
    assert_int_equal(kube_config_load(fx_path(fx, "none"), &cfg, fx->err, sizeof(fx->err)),
                     KUBE_EIO);
    /* nothing at all */
    unsetenv("KUBERNETES_SERVICE_HOST");
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(kube_config_load(NULL, &cfg, fx->err, sizeof(fx->err)), KUBE_ECONFIG);
    assert_non_null(strstr(fx->err, "KUBECONFIG"));
}

/* ---- KUBECONFIG lists ------------------------------------------------ */

/* Sets KUBECONFIG to the ':'-separated names, each non-empty one prefixed
 * with the fixture directory (empty entries stay empty). */
static const char *fx_kubeconfig_env(cfg_fixture *fx, const char *names)
{
    kube_buf b = KUBE_BUF_INIT;

    for (const char *p = names;; p++) {
        size_t n = strcspn(p, ":");

        if (n > 0)
            assert_int_equal(kube_buf_printf(&b, "%s/%.*s", fx->dir, (int)n, p), KUBE_OK);
        p += n;
        if (!*p)
            break;
        assert_int_equal(kube_buf_puts(&b, ":"), KUBE_OK);
    }
    kube_strlcpy(fx->env, b.data ? b.data : "", sizeof(fx->env));
    kube_buf_free(&b);
    setenv("KUBECONFIG", fx->env, 1);
    return fx->env;
}

/* Loads with KUBECONFIG set to names (see fx_kubeconfig_env); must succeed. */
static kube_config *load_list(cfg_fixture *fx, const char *names)
{
    kube_config *cfg = NULL;

    fx_kubeconfig_env(fx, names);
    if (kube_config_load(NULL, &cfg, fx->err, sizeof(fx->err)) != KUBE_OK)
        fail_msg("KUBECONFIG=%s: %s", fx->env, fx->err);
    return cfg;
}

/* Loads with KUBECONFIG set to names expecting rc, with a message that
 * starts with "<dir>/<file>: " (file may hold several names joined by ':')
 * and contains fragment. */
static void expect_list_error(cfg_fixture *fx, const char *names, int rc, const char *file,
                              const char *fragment)
{
    kube_config *cfg = (kube_config *)1;
    char prefix[600];

    snprintf(prefix, sizeof(prefix), "%s: ", fx_kubeconfig_env(fx, file));
    fx_kubeconfig_env(fx, names);
    fx->err[0] = '\0';
    assert_int_equal(kube_config_load(NULL, &cfg, fx->err, sizeof(fx->err)), rc);
    assert_null(cfg);
    if (strncmp(fx->err, prefix, strlen(prefix)) != 0 || !strstr(fx->err, fragment))
        fail_msg("error \"%s\" should start with \"%s\" and contain \"%s\"", fx->err, prefix,
                 fragment);
}

static void assert_token(kube_config *cfg, const char *want)
{
    char tok[64];

    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok), 0), KUBE_OK);
    assert_string_equal(tok, want);
}

/* "one" defines context, cluster and user "a"; "two" defines "a" again
 * (other server, namespace, tls-server-name and token), "b", and "mix"
 * (cluster b with user a); "sel-X" only sets current-context X. */
static void fx_two_kubeconfigs(cfg_fixture *fx)
{
    fx_write(fx, "one",
             "current-context: a\n"
             "contexts:\n- name: a\n  context: {cluster: a, user: a}\n"
             "clusters:\n- name: a\n  cluster: {server: \"https://one-a:1\"}\n"
             "users:\n- name: a\n  user: {token: one-a}\n");
    fx_write(fx, "two",
             "current-context: b\n"
             "contexts:\n"
             "- name: a\n  context: {cluster: a, user: a, namespace: two}\n"
             "- name: b\n  context: {cluster: b, user: b, namespace: two-b}\n"
             "- name: mix\n  context: {cluster: b, user: a}\n"
             "clusters:\n"
             "- name: a\n  cluster: {server: \"https://two-a:2\", tls-server-name: two-a}\n"
             "- name: b\n  cluster: {server: \"https://two-b:3\"}\n"
             "users:\n"
             "- name: a\n  user: {token: two-a}\n"
             "- name: b\n  user: {token: two-b}\n");
    fx_write(fx, "sel-b", "current-context: b\n");
    fx_write(fx, "sel-mix", "current-context: mix\n");
}

static void list_first_file_defining_a_name_wins(void **state)
{
    cfg_fixture *fx = *state;
    kube_config *cfg;
    char want[600];

    fx_two_kubeconfigs(fx);
    /* "a" comes whole from "one": nothing of two's "a" is mixed in */
    cfg = load_list(fx, "one:two");
    assert_string_equal(kube_config_server(cfg), "https://one-a:1");
    assert_null(kube_config_tls_server_name(cfg));
    assert_null(kube_config_namespace(cfg));
    assert_token(cfg, "one-a");
    snprintf(want, sizeof(want), "%s/one:%s/two", fx->dir, fx->dir);
    assert_string_equal(kube_config_source(cfg), want);
    kube_config_free(cfg);
    /* "b", defined only by "two", is usable through its context */
    cfg = load_list(fx, "sel-b:one:two");
    assert_string_equal(kube_config_server(cfg), "https://two-b:3");
    assert_string_equal(kube_config_namespace(cfg), "two-b");
    assert_token(cfg, "two-b");
    kube_config_free(cfg);
    /* a context of "two" naming user "a" gets the first file's "a" */
    cfg = load_list(fx, "sel-mix:one:two");
    assert_string_equal(kube_config_server(cfg), "https://two-b:3");
    assert_token(cfg, "one-a");
    kube_config_free(cfg);
    /* the other order: "two" wins for "a" and sets current-context */
    cfg = load_list(fx, "two:one:sel-mix");
    assert_string_equal(kube_config_server(cfg), "https://two-b:3");
    assert_token(cfg, "two-b");
    kube_config_free(cfg);
}

static void list_current_context_from_first_file_setting_it(void **state)
{
    cfg_fixture *fx = *state;
    kube_config *cfg;

    fx_two_kubeconfigs(fx);
    fx_write(fx, "no-cc",
             "contexts:\n- name: c\n  context: {cluster: a, user: a}\n"
             "clusters:\n- name: a\n  cluster: {server: \"https://no-cc:4\"}\n");
    fx_write(fx, "empty-cc", "current-context: \"\"\n");
    /* "no-cc" and "empty-cc" set none; "two" is the first that does (b) */
    cfg = load_list(fx, "no-cc:empty-cc:two:one");
    assert_string_equal(kube_config_server(cfg), "https://two-b:3");
    kube_config_free(cfg);
    /* "one" sets a; "a"'s cluster comes from "no-cc", listed first */
    cfg = load_list(fx, "no-cc:empty-cc:one:two");
    assert_string_equal(kube_config_server(cfg), "https://no-cc:4");
    assert_token(cfg, "one-a");
    kube_config_free(cfg);
    expect_list_error(fx, "no-cc", KUBE_ECONFIG, "no-cc", "current-context: not set");
    expect_list_error(fx, "no-cc:empty-cc", KUBE_ECONFIG, "no-cc:empty-cc",
                      "current-context: not set");
}

static void list_skips_missing_empty_and_repeated_files(void **state)
{
    cfg_fixture *fx = *state;
    kube_config *cfg;
    char want[300];

    fx_two_kubeconfigs(fx);
    fx_write(fx, "empty", "");
    cfg = load_list(fx, ":missing::one:empty:one:two:");
    assert_string_equal(kube_config_server(cfg), "https://one-a:1");
    snprintf(want, sizeof(want), "%s/one:%s/two", fx->dir, fx->dir);
    assert_string_equal(kube_config_source(cfg), want);
    kube_config_free(cfg);
    /* nothing usable: in-cluster when there, else the existing error */
    fx_kubeconfig_env(fx, "missing:empty");
    assert_int_equal(kube_config_load(NULL, &cfg, fx->err, sizeof(fx->err)), KUBE_ECONFIG);
    assert_null(cfg);
    assert_non_null(strstr(fx->err, "KUBECONFIG"));
    fx_service_account(fx, "sa-token");
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    cfg = load_list(fx, "missing:empty");
    assert_string_equal(kube_config_source(cfg), "in-cluster");
    kube_config_free(cfg);
}

static void list_errors_name_the_file(void **state)
{
    cfg_fixture *fx = *state;

    fx_two_kubeconfigs(fx);
    /* every listed file is read, even when an earlier one is enough */
    fx_write(fx, "bad", "current-context: [a\n");
    expect_list_error(fx, "one:missing:bad", KUBE_EPARSE, "bad", "invalid YAML at line");
    fx_write(fx, "seq", "- a\n");
    expect_list_error(fx, "one:seq", KUBE_ECONFIG, "seq", "not a kubeconfig");
    assert_int_equal(mkdir(fx_path(fx, "subdir"), 0700), 0);
    expect_list_error(fx, "one:subdir", KUBE_EIO, "subdir", "cannot read");
    /* an entry's error names the file that defines it */
    fx_write(fx, "broken-b",
             "contexts:\n- name: b\n  context: {cluster: b, user: b}\n"
             "clusters:\n- name: b\n  cluster: {server: \"ftp://x\"}\n");
    expect_list_error(fx, "sel-b:broken-b:two", KUBE_ECONFIG, "broken-b",
                      "clusters[0].cluster.server: unsupported URL scheme");
    /* a name no file defines: the referencing file and field */
    expect_list_error(fx, "sel-b:one", KUBE_ECONFIG, "sel-b",
                      "current-context: context \"b\" not found in contexts of any listed "
                      "file");
    fx_write(fx, "user-c", "contexts:\n- name: b\n  context: {cluster: a, user: c}\n");
    expect_list_error(fx, "sel-b:user-c:one", KUBE_ECONFIG, "user-c",
                      "contexts[0].context.user: user \"c\" not found in users");
}

static void list_relative_paths_resolve_per_file(void **state)
{
    cfg_fixture *fx = *state;
    kube_config *cfg;

    assert_int_equal(mkdir(fx_path(fx, "d1"), 0700), 0);
    assert_int_equal(mkdir(fx_path(fx, "d2"), 0700), 0);
    assert_int_equal(mkdir(fx_path(fx, "d2/pki"), 0700), 0);
    fx_write(fx, "d1/ca.crt", CA_PEM);
    fx_write(fx, "d2/pki/client.crt", CERT_PEM);
    fx_write(fx, "d2/pki/client.key", KEY_PEM);
    fx_write(fx, "d2/token", "d2-token\n");
    fx_write(fx, "d1/config",
             "current-context: a\n"
             "contexts:\n- name: a\n  context: {cluster: a, user: a}\n"
             "clusters:\n- name: a\n"
             "  cluster: {server: \"https://h:1\", certificate-authority: ca.crt}\n");
    fx_write(fx, "d2/config",
             "clusters:\n- name: a\n"
             "  cluster: {server: \"https://h:2\", certificate-authority: no-such.crt}\n"
             "users:\n- name: a\n  user:\n"
             "    client-certificate: pki/client.crt\n"
             "    client-key: ./pki/client.key\n"
             "    tokenFile: token\n");
    cfg = load_list(fx, "d1/config:d2/config");
    assert_string_equal(kube_config_server(cfg), "https://h:1");
    assert_pem(cfg, kube_config_ca_pem, CA_PEM);
    assert_pem(cfg, kube_config_cert_pem, CERT_PEM);
    assert_pem(cfg, kube_config_key_pem, KEY_PEM);
    assert_token(cfg, "d2-token");
    kube_config_free(cfg);
}

static void explicit_kubeconfig_is_one_file(void **state)
{
    cfg_fixture *fx = *state;
    kube_config *cfg = (kube_config *)1;
    char flag[600], want[620];

    fx_two_kubeconfigs(fx);
    fx_write(fx, "empty", "");
    fx_kubeconfig_env(fx, "one");
    /* "dir/two:dir/one" names one file that does not exist */
    snprintf(flag, sizeof(flag), "%s/two:%s/one", fx->dir, fx->dir);
    assert_int_equal(kube_config_load(flag, &cfg, fx->err, sizeof(fx->err)), KUBE_EIO);
    assert_null(cfg);
    snprintf(want, sizeof(want), "%s: cannot read", flag);
    assert_int_equal(strncmp(fx->err, want, strlen(want)), 0);
    /* an explicit file is not skipped for being empty */
    assert_int_equal(kube_config_load(fx_path(fx, "empty"), &cfg, fx->err, sizeof(fx->err)),
                     KUBE_ECONFIG);
    assert_non_null(strstr(fx->err, "file is empty"));
    /* and it alone is read: KUBECONFIG's "one" does not fill in for it */
    assert_int_equal(kube_config_load(fx_path(fx, "sel-b"), &cfg, fx->err, sizeof(fx->err)),
                     KUBE_ECONFIG);
    assert_non_null(strstr(fx->err, "context \"b\" not found in contexts"));
    assert_int_equal(kube_config_load(fx_path(fx, "two"), &cfg, fx->err, sizeof(fx->err)), KUBE_OK);
    assert_string_equal(kube_config_server(cfg), "https://two-b:3");
    kube_config_free(cfg);
}

/* ---- base64 ---------------------------------------------------------- */

static void base64_round_trip_and_strictness(void **state)
{
    static const char *const bad[] = {
        "QQ=", "QQ==QQ==", "Q===", "QQ=A", "Q Q=", "QQ-_", "QUJD\x01", "====", "QUJDRA=X"};
    unsigned char *bytes;
    size_t n;
    char *text;
    (void)state;

    assert_int_equal(kube_base64_encode("\x00\xffhi", 4, &text, &n), KUBE_OK);
    assert_string_equal(text, "AP9oaQ==");
    assert_int_equal(n, 8);
    assert_int_equal(kube_base64_decode(text, n, &bytes, &n), KUBE_OK);
    assert_int_equal(n, 4);
    assert_memory_equal(bytes, "\x00\xffhi", 4);
    free(bytes);
    free(text);
    assert_int_equal(kube_base64_decode("QUJD\r\nRA==\n", 11, &bytes, &n), KUBE_OK);
    assert_string_equal((char *)bytes, "ABCD");
    free(bytes);
    assert_int_equal(kube_base64_decode("", 0, &bytes, &n), KUBE_OK);
    assert_int_equal(n, 0);
    free(bytes);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        bytes = (unsigned char *)"x";
        assert_int_equal(kube_base64_decode(bad[i], strlen(bad[i]), &bytes, &n), KUBE_EPARSE);
        assert_null(bytes);
    }
}

int test_group_config(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(loads_embedded_data, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(resolves_relative_file_references, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(missing_referenced_file_names_field, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(token_and_token_file, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(token_file_is_reread, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(insecure_skip_tls_verify, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(master_overrides_the_server, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(missing_pieces_are_named, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(bad_base64_names_field, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(pem_material_is_checked, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(unsupported_auth_is_rejected, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(in_cluster_from_env, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(precedence_flag_env_in_cluster, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(list_first_file_defining_a_name_wins, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(list_current_context_from_first_file_setting_it, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(list_skips_missing_empty_and_repeated_files, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(list_errors_name_the_file, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(list_relative_paths_resolve_per_file, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(explicit_kubeconfig_is_one_file, fx_setup, fx_teardown),
        cmocka_unit_test(base64_round_trip_and_strictness),
    };
    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
