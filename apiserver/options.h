/*
 * apiserver/options.h - command-line flags of stickyvm-apiserver, in named
 * flag sets (kube/util/flags.h): k8s.io/apiserver's "Secure serving",
 * "Authentication" and "Authorization" sets (kube/serving/options.h: port
 * 8443, --cert-dir apiserver.local.config/certificates,
 * --authentication-tolerate-lookup-failure false), and the "Misc" set of
 * its own:
 *
 *   --kubeconfig
 *   --authorization-always-allow-groups (system:masters)
 *   --max-requests-inflight (400)  --request-timeout (60s)
 *   --shutdown-timeout (30s)  --workers (16)  --v / -v (0)
 *   --tls-handshake-timeout (10s)  --read-header-timeout (32s)
 *   --max-connections (1024)
 *   --pin-annotation-key (stickyvm.io/node): the VM annotation /pin and
 *     /unpin write; must be the StickyVM plugin's annotationKey (checked
 *     as an annotation key by kube/types/pin.h)
 *   --help
 *
 * Values follow pflag: "--name=value" or "--name value"; lists are
 * comma-separated; durations use Go syntax ("10s", "1m30s", "500ms").
 * --secure-port 0 picks a free port.
 *
 * Memory: apis_options_parse() fills a caller-owned apis_options whose
 * strings and lists apis_options_free() releases. The flag sets point into
 * it.
 */
#ifndef APIS_OPTIONS_H
#define APIS_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

#include "kube/serving/options.h"

#define APIS_FLAG_SETS (KUBE_SERVING_FLAG_SETS + 1)

typedef struct apis_options {
    kube_serving_options serving;
    char *kubeconfig;
    int max_requests_inflight;
    int64_t request_timeout_ms;
    int64_t shutdown_timeout_ms;
    int64_t tls_handshake_timeout_ms;
    int64_t read_header_timeout_ms;
    int max_connections;
    int workers;
    char *pin_annotation_key;
    int verbosity;
    int help;
} apis_options;

/* Fills o with the defaults. Returns KUBE_OK or KUBE_ENOMEM. */
int apis_options_defaults(apis_options *o);
/* The flag sets of the command line, writing into o. */
void apis_options_flag_sets(apis_options *o, kube_flag_set sets[APIS_FLAG_SETS]);
/* Defaults, then argv[1..argc). On a bad flag returns KUBE_ECONFIG with a
 * message naming it in err. "--help" sets o->help. */
int apis_options_parse(int argc, char *const *argv, apis_options *o, char *err, size_t errlen);
void apis_options_free(apis_options *o);
/* --help, in sections, as kube's commands print it. */
void apis_options_usage(FILE *f);

#endif
