/*
 * kube/serving/authsource.h - where the authentication settings come from,
 * kept current while the server runs.
 *
 * As k8s.io/apiserver's delegating authentication does, the settings are
 * read from the ConfigMap kube-system/extension-apiserver-authentication
 * (written by kube-apiserver): client-ca-file, requestheader-client-ca-file,
 * requestheader-allowed-names, requestheader-username-headers,
 * requestheader-group-headers and requestheader-extra-headers-prefix. The
 * ConfigMap is WATCHED (a lister of the daemon's kube/machinery/factory.h), so a rotated
 * front-proxy CA or a changed allowed-names list applies to the next request without a restart.
 * Flags override it:
 *   --client-ca-file replaces client-ca-file;
 *   --requestheader-client-ca-file replaces the whole requestheader block
 *     (allowed names from --requestheader-allowed-names, header names from
 *     their flags or the X-Remote-* defaults);
 *   --requestheader-{username,group}-headers / -extra-headers-prefix and
 *   --requestheader-allowed-names, when given, override those settings.
 * Flag files are re-read when they change (kube_authn_source_check_files).
 * A ConfigMap or file that does not parse is logged and the previous
 * settings stay in force.
 *
 * Threads: thread-safe. Informer callbacks run on the factory's hub thread.
 * Memory: kube_authn_source_new() allocates; kube_authn_source_free()
 * frees (the factory it watches through stopped first). kube_authn_source_get() returns a new
 * reference the caller releases with kube_authn_config_unref().
 */
#ifndef KUBE_SERVING_AUTHSOURCE_H
#define KUBE_SERVING_AUTHSOURCE_H

#include <stdint.h>

#include "kube/machinery/factory.h"
#include "kube/serving/authn.h"
#include "kube/transport/client.h"

typedef struct kube_authn_source kube_authn_source;

typedef struct kube_authn_source_options {
    kube_client *client;               /* NULL: no ConfigMap lookup */
    const char *client_ca_file;        /* NULL: from the ConfigMap */
    const char *requestheader_ca_file; /* NULL: from the ConfigMap */
    const kube_strlist *allowed_names; /* used when allowed_names_set or the CA flag is given */
    int allowed_names_set;
    const kube_strlist *username_headers; /* empty or NULL: not overridden */
    const kube_strlist *group_headers;
    const kube_strlist *extra_prefixes;
} kube_authn_source_options;

#define KUBE_AUTHN_CONFIGMAP_NAMESPACE "kube-system"
#define KUBE_AUTHN_CONFIGMAP_NAME "extension-apiserver-authentication"

/* Reads the flag files (errors name the file in err). Nothing is watched
 * until kube_authn_source_watch(). */
int kube_authn_source_new(const kube_authn_source_options *o, kube_authn_source **out, char *err,
                          size_t errlen);
/* Reads the ConfigMap once, as k8s.io/apiserver's startup lookup does
 * (no-op without a client): a missing ConfigMap leaves the settings empty;
 * any other failure is KUBE_E* with err saying "unable to load configmap
 * based request-header-client-ca-file: ...", or, with tolerate, is logged
 * and KUBE_OK (requests then authenticate by token only). Either way the
 * source counts as ready afterwards unless the failure is returned. */
int kube_authn_source_lookup(kube_authn_source *s, int tolerate, char *err, size_t errlen);
/* Watches the ConfigMap through f (borrowed; a factory listing through
 * the source's client, not started yet): takes its ConfigMap lister and
 * adds the source's handlers (no-op without a client). f must be stopped
 * before kube_authn_source_free(). KUBE_OK or kube_factory_lister()'s and
 * kube_lister_add_handlers()' errors. */
int kube_authn_source_watch(kube_authn_source *s, kube_factory *f);
void kube_authn_source_free(kube_authn_source *s);

/* The current settings (a new reference, never NULL). */
kube_authn_config *kube_authn_source_get(kube_authn_source *s);
/* Non-zero once the ConfigMap was read (always, without lookup): /readyz. */
int kube_authn_source_ready(kube_authn_source *s);
/* Re-reads the flag files that changed and rebuilds the settings. */
void kube_authn_source_check_files(kube_authn_source *s);

#endif
