/*
 * scheduler/extender_int.h - what the extender files share: extender.c
 * (the set, the HTTP exchange and its errors, the pod sent, binding) and
 * extender_calls.c (filter, prioritize and preemption). Not a public
 * header.
 */
#ifndef SCHED_EXTENDER_INT_H
#define SCHED_EXTENDER_INT_H

#include <cjson/cJSON.h>

#include "extender.h"
#include "kube/transport/config.h"

/* kube-scheduler's DefaultExtenderTimeout and extenderv1.MaxExtenderPriority. */
#define EXT_DEFAULT_TIMEOUT_MS 5000
#define EXT_MAX_PRIORITY 10
#define EXT_ERR_MAX 1024

/* One HTTPExtender. */
typedef struct http_extender {
    const sched_extender_config *cfg; /* borrowed: verbs, weight, flags */
    char *url;                        /* urlPrefix without trailing '/' */
    char *dial;                       /* "host:port" of the URL (dial errors) */
    kube_config *kc;
    kube_client *client;
} http_extender;

struct sched_extenders {
    http_extender *v; /* ignorable ones last */
    size_t n;
    kube_client *api;
    const fw_snapshot *snap;
    /* the pod last sent (scheduling thread only) */
    cJSON *pod;
    char *pod_uid;
    char *pod_rv;
};

/* POSTs args to the extender's verb and decodes the answer into *result
 * (caller frees). On failure returns a KUBE_E* code with kube-scheduler's
 * message in err (EXT_ERR_MAX bytes). */
int ext_send(const http_extender *e, const char *verb, const cJSON *args, cJSON **result,
             char *err);

/* IsInterested: no managedResources, or the pod requests one of them. */
int ext_interested(const http_extender *e, const fw_pod_info *pod);

/* The pod as the API server has it (borrowed from x's cache), or NULL
 * with the reason in err. */
const cJSON *ext_pod_json(sched_extenders *x, const fw_pod_info *pod, char *err);

/* extender_calls.c: the fw_extenders functions (framework.h), ud the set. */
fw_status *ext_filter(void *ud, const fw_pod_info *pod, const fw_node_info **nodes, size_t *n,
                      fw_diagnosis *d);
void ext_prioritize(void *ud, const fw_pod_info *pod, const fw_node_info *const *nodes,
                    fw_score_list *scores);
fw_status *ext_preempt(void *ud, const fw_pod_info *pod, fw_preemption_candidate **c, size_t *n);

#endif
