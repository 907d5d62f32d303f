/*
 * kube/transport/config_int.h - what the configuration's files share: the config
 * object, the helpers that fill it, and the kubeconfig file set the
 * precedence rules choose from. config.c holds the object, its TLS
 * material, precedence, accessors and the token; config_kubeconfig.c reads
 * kubeconfig files; config_incluster.c the service account. Not a public
 * header.
 */
#ifndef KUBE_CONFIG_INT_H
#define KUBE_CONFIG_INT_H

#include "kube/transport/config.h"

#include "kube/codec/base64.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/transport/tls.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define CONFIG_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define CONFIG_TOKEN_REFRESH_MS 60000L

struct kube_config {
    char *source; /* kubeconfig path or "in-cluster" */
    char *server;
    char *ca_pem;
    size_t ca_len;
    char *cert_pem;
    size_t cert_len;
    char *key_pem;
    size_t key_len;
    int insecure;
    kube_tls *tls; /* the PEM material above, parsed; NULL when there is none */
    char *tls_server_name;
    char *namespace_;
    char *static_token; /* user.token */
    char *token_file;   /* user.tokenFile or the service-account token */

    pthread_mutex_t lock; /* guards the fields below */
    char *file_token;     /* last good read of token_file */
    int64_t file_read_ms; /* when token_file was last read (tried) */
    long refresh_ms;
};

/* ---- YAML document access -------------------------------------------- */

/* One kubeconfig file: its parsed document and where it lives. Released by
 * kc_close(). */
typedef struct kc_loader {
    char *path; /* the kubeconfig, for messages */
    char *dir;  /* its directory, for relative file references */
    yaml_document_t doc;
    int have_doc;      /* doc was loaded and must be deleted */
    yaml_node_t *root; /* the top-level mapping, once checked */
    char *err;
    size_t errlen;
} kc_loader;

/* The kubeconfig files of one load in precedence order, merged as clientcmd
 * merges them: for contexts, clusters and users the first file that defines
 * a name wins whole, and so does the first file that sets current-context.
 * Each entry is read with the file that defines it, so its relative paths
 * and its error messages belong to that file. Released by kube_config_files_free(). */
typedef struct kc_set {
    kc_loader *files; /* room for every candidate, reserved up front */
    size_t n;
    kube_buf source; /* the files' paths joined with ':' */
    char *err;
    size_t errlen;
} kc_set;

/* Writes "<source>: <field>: <message>" (field may be NULL) into err and
 * returns code. */
int kube_config_fail(char *err, size_t errlen, int code, const char *source, const char *field,
                     const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* A zeroed config with a copy of source and its lock, or NULL. */
kube_config *kube_config_alloc(const char *source);

/* Wipes s (len bytes) and frees it. NULL-safe. */
void kube_config_free_secret(char *s, size_t len);

/* A bearer token is one non-empty word of printable ASCII: anything else
 * (white space, control characters) could split the Authorization header. */
int kube_config_token_valid(const char *s);

/* Reads a token file, trimmed. Returns KUBE_OK, KUBE_EIO (errno kept),
 * KUBE_EPARSE (not one token: empty, several words, control or NUL
 * characters) or KUBE_ENOMEM. */
int kube_config_read_token(const char *path, char **out);

/* A DNS-1123 label, as clientcmd requires of a context namespace. */
int kube_config_is_dns_label(const char *s);

/* Parses the CA bundle cfg->ca_pem into cfg's material, reporting a bad
 * bundle against field. */
int kube_config_add_ca(kube_config *cfg, const char *src, const char *field, char *err,
                       size_t errlen);

/* Parses the client certificate and key into cfg's material and checks
 * they belong together, reporting a bad part against its field. */
int kube_config_add_identity(kube_config *cfg, const char *src, const char *cert_field,
                             const char *key_field, char *err, size_t errlen);

/* Releases the files and the set's memory. */
void kube_config_files_free(kc_set *s);

/* Fills the set from a ':'-separated KUBECONFIG list: empty entries, missing
 * or empty files and repeated entries are skipped. s is initialised here and
 * released by the caller with kube_config_files_free(), also after a failure. */
int kube_config_files_from_list(kc_set *s, const char *list, char *err, size_t errlen);

/* Builds the configuration of the set's current context (or of context,
 * when not NULL or "") into *out; its source is the set's file list. */
int kube_config_files_build(kc_set *s, const char *context, kube_config **out);

/* kube_config_from_file() of the named context (NULL or "": current). */
int kube_config_file_context(const char *path, const char *context, kube_config **out, char *err,
                             size_t errlen);

#endif
