/*
 * apiserver/options.h - command-line flags of stickyvm-apiserver, in named
 * flag sets (kube/util/flags.h): k8s.io/apiserver's "Secure serving",
 * "Authentication" and "Authorization" sets (kube/serving/options.h: port
 * 8443, --cert-dir apiserver.local.config/certificates,
 * --authentication-tolerate-lookup-failure false), the "Misc" set of its
 * own, then the shared "Logs" set (kube/util/log.h: -v/--v, --vmodule,
 * --logging-format):
 *
 *   --kubeconfig
 *   --authorization-always-allow-groups (system:masters)
 *   --max-requests-inflight (400)  --request-timeout (60s)
 *   --shutdown-delay-duration (0s)  --shutdown-timeout (30s)  --workers (16)
 *   --tls-handshake-timeout (10s)  --read-header-timeout (32s)
 *   --max-connections (1024)
 *   --pin-annotation-key (stickyvm.io/node): the VM annotation /pin and
 *     /unpin write; must be the StickyVM plugin's annotationKey (checked
 *     as an annotation key by kube/types/pin.h)
 * (-h/--help and --version are kube/util/cli.h's Global set.)
 *
 * Values follow pflag: "--name=value" or "--name value"; lists are
 * comma-separated; durations use Go syntax ("10s", "1m30s", "500ms").
 * --secure-port 0 picks a free port.
 *
 * Memory: apis_options_defaults() fills a caller-owned apis_options whose
 * strings and lists apis_options_free() releases. The flag sets point into
 * it.
 */
#ifndef APIS_OPTIONS_H
#define APIS_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

#include "kube/serving/options.h"
#include "kube/util/flags.h"
#include "kube/util/log.h"

typedef struct apis_options {
    kube_serving_options serving;
    char *kubeconfig;
    int max_requests_inflight;
    int64_t request_timeout_ms;
    int64_t shutdown_timeout_ms;
    int64_t shutdown_delay_ms; /* --shutdown-delay-duration */
    int64_t tls_handshake_timeout_ms;
    int64_t read_header_timeout_ms;
    int max_connections;
    int workers;
    char *pin_annotation_key;
    klog_options logs; /* -v/--v, --vmodule, --logging-format */
} apis_options;

/* Fills o with the defaults. Returns KUBE_OK or KUBE_ENOMEM. */
int apis_options_defaults(apis_options *o);
/* The named flag sets bound to o, in --help's order (Misc, Secure
 * serving, Authentication, Authorization, Logs), into out (room for cap).
 * Returns the count. */
size_t apis_options_flag_sets(apis_options *o, kube_flag_set *out, size_t cap);
/* The checks across flags, after parsing: KUBE_OK or KUBE_ECONFIG with
 * the message in err. */
int apis_options_validate(const apis_options *o, char *err, size_t errlen);
void apis_options_free(apis_options *o);

#endif
