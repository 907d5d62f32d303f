/*
 * apiserver/options.c - command-line flags of stickyvm-apiserver: the
 * secure port's three sets (kube/serving/options.h), its own "Misc" set
 * and the Logs set (kube/util/log.h). The contract is in options.h.
 */
#include "options.h"

#include <stdlib.h>
#include <string.h>

#include "kube/types/pin.h"
#include "kube/util/errors.h"
#include "kube/util/flags.h"

static int set_groups(void *dst, const kube_flag *f, const char *value, char *why, size_t n);

#define OFF(field) offsetof(apis_options, field)

static const kube_flag misc_flags[] = {
    {"authorization-always-allow-groups", KUBE_FLAG_CUSTOM, OFF(serving), 0, 0, "strings",
     "groups allowed without a SubjectAccessReview (default [system:masters])", set_groups},
    {"kubeconfig", KUBE_FLAG_STRING, OFF(kubeconfig), 0, 0, NULL,
     "kubeconfig of kube-apiserver (default: KUBECONFIG, then in-cluster)", NULL},
    {"max-connections", KUBE_FLAG_INT, OFF(max_connections), 1, 1000000, NULL,
     "client connections held at once (also bounded by the descriptor limit) (default 1024)", NULL},
    {"max-requests-inflight", KUBE_FLAG_INT, OFF(max_requests_inflight), 1, 100000, NULL,
     "requests served at once; more are answered 429 (default 400)", NULL},
    {"pin-annotation-key", KUBE_FLAG_STRING, OFF(pin_annotation_key), 0, 0, NULL,
     "VM annotation /pin and /unpin write (the StickyVM plugin's annotationKey) (default "
     "\"" KUBE_PIN_DEFAULT_KEY "\")",
     NULL},
    {"read-header-timeout", KUBE_FLAG_DURATION, OFF(read_header_timeout_ms), 0, 0, NULL,
     "longest time a request's headers may take to arrive (default 32s)", NULL},
    {"request-timeout", KUBE_FLAG_DURATION, OFF(request_timeout_ms), 0, 0, NULL,
     "longest time a request may take (reading it included) (default 1m0s)", NULL},
    {"shutdown-delay-duration", KUBE_FLAG_DURATION, OFF(shutdown_delay_ms), 0, 0, NULL,
     "on SIGTERM, how long to keep serving as usual while /readyz fails (so load balancers "
     "stop sending) before the graceful shutdown starts (default 0s)",
     NULL},
    {"shutdown-timeout", KUBE_FLAG_DURATION, OFF(shutdown_timeout_ms), 0, 0, NULL,
     "on SIGTERM, how long to let requests in flight finish (default 30s)", NULL},
    {"tls-handshake-timeout", KUBE_FLAG_DURATION, OFF(tls_handshake_timeout_ms), 0, 0, NULL,
     "longest time a client may take to finish its TLS handshake (default 10s)", NULL},
    {"workers", KUBE_FLAG_INT, OFF(workers), 1, 1024, NULL,
     "threads calling kube-apiserver (default 16)", NULL},
};

#define N_MISC (sizeof(misc_flags) / sizeof(misc_flags[0]))

/* --authorization-always-allow-groups: the list in the serving options. */
static int set_groups(void *dst, const kube_flag *f, const char *value, char *why, size_t n)
{
    kube_serving_options *so = (kube_serving_options *)((char *)dst + f->offset);

    (void)why;
    (void)n;
    kube_strlist_free(&so->always_allow_groups);
    return kube_strlist_split(&so->always_allow_groups, value);
}

int apis_options_defaults(apis_options *o)
{
    static const kube_serving_defaults d = {
        .secure_port = 8443,
        .cert_dir = "apiserver.local.config/certificates",
        .pair_name = "apiserver",
        .tolerate_lookup = 0,
        .port_zero = "If 0, a free port is picked.",
    };
    int rc;

    memset(o, 0, sizeof(*o));
    rc = kube_serving_options_defaults(&o->serving, &d);
    o->max_requests_inflight = 400;
    o->request_timeout_ms = 60000;
    o->shutdown_timeout_ms = 30000;
    o->tls_handshake_timeout_ms = 10000;
    o->read_header_timeout_ms = 32000;
    o->max_connections = 1024;
    o->workers = 16;
    o->pin_annotation_key = kube_strdup(KUBE_PIN_DEFAULT_KEY);
    if (rc == KUBE_OK && !o->pin_annotation_key)
        rc = KUBE_ENOMEM;
    return rc;
}

void apis_options_free(apis_options *o)
{
    kube_serving_options_free(&o->serving);
    free(o->kubeconfig);
    free(o->pin_annotation_key);
    o->kubeconfig = o->pin_annotation_key = NULL;
    klog_options_free(&o->logs);
}

/* --pin-annotation-key must be an annotation key, as the plugin's
 * annotationKey must. */
static int check_pin_key(const apis_options *o, char *err, size_t errlen)
{
    char msg[1280];
    if (kube_pin_key_check(o->pin_annotation_key, msg, sizeof(msg)) == KUBE_OK)
        return KUBE_OK;
    snprintf(err, errlen, "invalid argument \"%s\" for \"--pin-annotation-key\" flag: %s",
             o->pin_annotation_key, msg);
    return KUBE_ECONFIG;
}

size_t apis_options_flag_sets(apis_options *o, kube_flag_set *out, size_t cap)
{
    kube_flag_set sets[KUBE_SERVING_FLAG_SETS + 2];
    size_t n = sizeof(sets) / sizeof(sets[0]);

    sets[0] = (kube_flag_set){"Misc", misc_flags, N_MISC, o};
    kube_serving_flag_sets(&o->serving, sets + 1);
    sets[KUBE_SERVING_FLAG_SETS + 1] = klog_flag_set(&o->logs);
    n = n < cap ? n : cap;
    memcpy(out, sets, n * sizeof(*out));
    return n;
}

int apis_options_validate(const apis_options *o, char *err, size_t errlen)
{
    int rc = check_pin_key(o, err, errlen);

    if (rc == KUBE_OK && o->shutdown_delay_ms < 0) {
        snprintf(err, errlen, "--shutdown-delay-duration can not be negative value");
        rc = KUBE_ECONFIG;
    }
    if (rc == KUBE_OK)
        rc = kube_serving_options_validate(&o->serving, err, errlen);
    return rc;
}

int apis_options_parse(int argc, char *const *argv, apis_options *o, char *err, size_t errlen)
{
    kube_flag_set sets[8];
    int rc = apis_options_defaults(o);
    size_t n = apis_options_flag_sets(o, sets, sizeof(sets) / sizeof(sets[0]));

    if (rc == KUBE_OK)
        rc = kube_flag_sets_parse(sets, n, argc, argv, NULL, err, errlen);
    if (rc == KUBE_OK)
        rc = apis_options_validate(o, err, errlen);
    return rc;
}
