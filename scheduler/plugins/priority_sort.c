/*
 * scheduler/plugins/priority_sort.c - PrioritySort (kube-scheduler v1.28
 * pkg/scheduler/framework/plugins/queuesort): the QueueSort plugin.
 * Higher spec.priority first; equal priorities in the order they entered
 * the queue.
 */
#include "kube/util/errors.h"
#include "plugins/plugins.h"

static int create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                  size_t errlen)
{
    *self = NULL;
    return KUBE_OK;
}

static int less(void *self, const fw_queued_pod_info *a, const fw_queued_pod_info *b)
{
    int32_t p1 = a->pi->priority, p2 = b->pi->priority;
    return p1 > p2 || (p1 == p2 && a->timestamp_ns < b->timestamp_ns);
}

const fw_plugin_desc plugin_priority_sort = {
    .name = "PrioritySort",
    .create = create,
    .less = less,
};
