/*
 * scheduler/plugins/scheduling_gates.c - SchedulingGates (kube-scheduler
 * v1.28 pkg/scheduler/framework/plugins/schedulinggates): a PreEnqueue
 * plugin keeping pods with spec.schedulingGates out of the active queue
 * ("waiting for scheduling gates: [a b]"). PodSchedulingReadiness is on
 * by default in v1.28.
 */
#include "feature_gates.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/types/pod.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"

static int create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                  size_t errlen)
{
    *self = NULL;
    return KUBE_OK;
}

static fw_status *pre_enqueue(void *self, const fw_pod_info *pod)
{
    const kube_pod *p = pod->pod;
    kube_buf msg = KUBE_BUF_INIT;
    int rc;

    if (!sched_feature_enabled(SCHED_FEATURE_POD_SCHEDULING_READINESS) ||
        p->n_scheduling_gates == 0)
        return NULL;
    /* fmt's %v of a []string: "[a b]" */
    rc = kube_buf_puts(&msg, "waiting for scheduling gates: [");
    for (size_t i = 0; rc == KUBE_OK && i < p->n_scheduling_gates; i++)
        rc = kube_buf_printf(&msg, "%s%s", i ? " " : "", p->scheduling_gates[i]);
    if (rc == KUBE_OK)
        rc = kube_buf_puts(&msg, "]");
    fw_status *st = rc == KUBE_OK ? fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE, msg.data)
                                  : fw_status_error(rc, NULL);
    kube_buf_free(&msg);
    return st;
}

/* A gate is only ever removed by updating the pod. */
static const fw_cluster_event_with_hint events[] = {
    {{FW_GVK_POD, FW_ACT_UPDATE, ""}, NULL},
};

PLUGIN_EVENTS_TO_REGISTER(events)

const fw_plugin_desc plugin_scheduling_gates = {
    .name = "SchedulingGates",
    .create = create,
    .pre_enqueue = pre_enqueue,
    .events_to_register = events_to_register,
};
