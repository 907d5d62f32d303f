/*
 * kube/transport/config.h - where the cluster is and who we are: kubeconfig files and
 * in-cluster service-account configuration.
 *
 * Precedence (as client-go's clientcmd): the --kubeconfig flag (exactly
 * that one file, which must exist; never split on ':'), then the KUBECONFIG
 * environment variable, then in-cluster (KUBERNETES_SERVICE_HOST/_PORT with
 * the service account CA and token under
 * /var/run/secrets/kubernetes.io/serviceaccount, overridable with
 * KUBE_SA_DIR for tests). The default ~/.kube/config is not consulted.
 *
 * KUBECONFIG is a ':'-separated list merged as clientcmd's loading rules
 * merge it: empty entries, files that do not exist and empty files are
 * skipped, a repeated entry is read once, and a file that exists but cannot
 * be read or parsed is an error naming it. The first file that sets
 * current-context wins; for contexts, clusters and users the first file that
 * defines a name wins, whole (later files never override earlier ones). An
 * entry's relative file references resolve against the directory of the
 * file that defines it, and errors about it name that file. When no listed
 * file holds a kubeconfig, in-cluster configuration is tried (as client-go
 * falls back on an empty config).
 *
 * Supported kubeconfig fields, of the current-context only:
 *   clusters[].cluster: server, certificate-authority(-data),
 *     insecure-skip-tls-verify, tls-server-name
 *   users[].user: client-certificate(-data), client-key(-data), token,
 *     tokenFile
 *   contexts[].context: cluster, user, namespace
 * Relative file paths resolve against the kubeconfig's directory. Fields
 * this library cannot honour (exec, auth-provider, username/password,
 * impersonation, proxy-url) are rejected with a "not supported" error rather
 * than ignored. As clientcmd validates, a field given both inline (-data) and
 * as a file is an error, a client certificate needs its key, and
 * insecure-skip-tls-verify cannot be combined with a CA. PEM material is
 * parsed once at load time (the CA holds certificates, the key matches the
 * certificate) into the kube_tls the clients use (kube_config_tls). With both token and tokenFile,
 * the file's contents win whenever it can be read and token is the fallback (client-go semantics).
 *
 * Memory: kube_config_load() allocates a kube_config that the caller frees
 * with kube_config_free(). All strings inside are owned by the config. PEM
 * material is held in memory (files are read at load time); a token file is
 * re-read by kube_config_token() about once a minute because bound
 * service-account tokens expire. The config is safe to share between threads.
 */
#ifndef KUBE_CONFIG_H
#define KUBE_CONFIG_H

#include <stddef.h>

typedef struct kube_config kube_config;
typedef struct kube_tls kube_tls;

/* Loads configuration with the precedence above. kubeconfig_flag may be
 * NULL or "". On error returns KUBE_ECONFIG/KUBE_EIO/KUBE_EPARSE and writes a
 * message naming the file and field into err (may be NULL). */
int kube_config_load(const char *kubeconfig_flag, kube_config **out, char *err, size_t errlen);

/* kube_config_load() of the named context (kubectl's --context) instead of
 * current-context; NULL or "" is the current-context. The context must
 * exist (KUBE_ECONFIG naming "--context"); in-cluster configuration has no
 * contexts and ignores it. */
int kube_config_load_context(const char *kubeconfig_flag, const char *context, kube_config **out,
                             char *err, size_t errlen);

/* Builds the in-cluster configuration. Same error contract. */
int kube_config_in_cluster(kube_config **out, char *err, size_t errlen);

/* The TLS settings of a server that is not the API server (client-go's
 * rest.TLSClientConfig; a scheduler extender's tlsConfig). Every pointer
 * may be NULL. The *_data are PEM bytes of the given length and win over
 * the matching *_file, as client-go's dataFromSliceOrFile. */
typedef struct kube_tls_options {
    int insecure;
    const char *server_name;
    const char *cert_file;
    const char *key_file;
    const char *ca_file;
    const char *cert_data;
    size_t cert_len;
    const char *key_data;
    size_t key_len;
    const char *ca_data;
    size_t ca_len;
} kube_tls_options;

/* A configuration for talking to server ("http(s)://host:port[/path]"; a
 * client appends request paths to it) with tls (NULL: none), no bearer
 * token. Files are read now. Errors, named "<source>: <field>: ..." with
 * the option's name as field ("caFile", "certData", ...): a CA together
 * with insecure ("specifying a root certificates file with the insecure
 * flag is not allowed", as client-go), a client certificate without its key
 * or the reverse, unreadable files, PEM that does not parse, a key that
 * does not match. Returns KUBE_OK, KUBE_ECONFIG, KUBE_EIO or KUBE_ENOMEM;
 * *out is freed with kube_config_free(). */
int kube_config_for_server(const char *server, const kube_tls_options *tls, const char *source,
                           kube_config **out, char *err, size_t errlen);

/* Frees the config and wipes the secrets it holds. NULL is a no-op. */
void kube_config_free(kube_config *cfg);

/* Accessors. Returned pointers live as long as the config. */
/* Replaces the server (kube-scheduler's --master: "overrides any value in
 * kubeconfig"), normalised as cluster.server is. Before any client uses
 * cfg. KUBE_OK, KUBE_ENOMEM, or KUBE_ECONFIG ("--master: invalid server
 * URL ..." in err; the server unchanged). */
int kube_config_set_server(kube_config *cfg, const char *server, char *err, size_t errlen);
const char *kube_config_server(const kube_config *cfg); /* "https://h:p" */
/* The kubeconfig's CA, client certificate and key, parsed once at load
 * time (owned by the config, which must outlive its users), or NULL when
 * there is no PEM material. */
const kube_tls *kube_config_tls(const kube_config *cfg);
int kube_config_insecure(const kube_config *cfg);
/* TLS server name override (kubeconfig cluster.tls-server-name), or NULL. */
const char *kube_config_tls_server_name(const kube_config *cfg);

/* Copies the current bearer token into out (size n) and returns KUBE_OK, or
 * KUBE_ENOTFOUND when the config has no token. A tokenFile is re-read when
 * the cached copy is older than 60 s (or whenever force is non-zero, which a
 * client does after a 401). Thread-safe. The token must never be logged. */
int kube_config_token(kube_config *cfg, char *out, size_t n, int force);

/* The context's namespace (in-cluster: the service account's namespace), or
 * NULL when none is configured. Lives as long as the config. */
const char *kube_config_namespace(const kube_config *cfg);

/* Where the configuration came from: the kubeconfig path (for a KUBECONFIG
 * list, the paths of the files that were read, joined with ':'), or
 * "in-cluster". For log lines. Lives as long as the config. */
const char *kube_config_source(const kube_config *cfg);

#endif
