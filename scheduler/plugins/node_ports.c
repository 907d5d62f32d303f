/*
 * scheduler/plugins/node_ports.c - NodePorts (kube-scheduler v1.28
 * pkg/scheduler/framework/plugins/nodeports): a pod's container host ports
 * must be free on the node. 0.0.0.0 conflicts with every address on the
 * same protocol and port (fw_host_ports_conflict). PreFilter records the
 * pod's host ports, or skips the plugin when it has none.
 */
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"
#include "kube/types/pod.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"

#define PRE_FILTER_KEY "PreFilterNodePorts"
#define ERR_REASON "node(s) didn't have free ports for the requested pod ports"

/* The wanted host ports: borrowed from the pod being scheduled. */
typedef struct pre_filter_state {
    const kube_host_port *ports;
    size_t n;
} pre_filter_state;

static void *state_clone(const void *data)
{
    pre_filter_state *c = malloc(sizeof(*c));
    if (c)
        memcpy(c, data, sizeof(*c));
    return c;
}

static const fw_state_ops state_ops = {state_clone, free};

static int create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                  size_t errlen)
{
    *self = NULL;
    return KUBE_OK;
}

static fw_status *pre_filter(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                             fw_pre_filter_result **result)
{
    const kube_pod *p = pod->pod;
    pre_filter_state *s;

    if (p->n_host_ports == 0)
        return fw_status_new(FW_SKIP, NULL);
    s = malloc(sizeof(*s));
    if (!s)
        return fw_status_error(KUBE_ENOMEM, NULL);
    s->ports = p->host_ports;
    s->n = p->n_host_ports;
    int rc = fw_cycle_state_write(cs, PRE_FILTER_KEY, s, &state_ops);
    return rc == KUBE_OK ? NULL : fw_status_error(rc, NULL);
}

/* fitsPorts: none of ports is in use on ni. */
static int fits_ports(const kube_host_port *ports, size_t n, const fw_node_info *ni)
{
    for (size_t i = 0; i < n; i++)
        if (fw_host_ports_conflict(&ni->used_ports, ports[i].host_ip, ports[i].protocol,
                                   ports[i].port))
            return 0;
    return 1;
}

int plugin_node_ports_fits(const kube_pod *p, const fw_node_info *ni)
{
    return fits_ports(p->host_ports, p->n_host_ports, ni);
}

static fw_status *filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *ni)
{
    const pre_filter_state *s = fw_cycle_state_read_static(cs, PRE_FILTER_KEY);

    if (!s)
        return fw_status_error(KUBE_ENOTFOUND, "reading \"%s\" from cycleState: not found",
                               PRE_FILTER_KEY);
    if (!fits_ports(s->ports, s->n, ni))
        return fw_status_new(FW_UNSCHEDULABLE, ERR_REASON);
    return NULL;
}

/* Container ports are immutable: only a pod leaving or a node appearing or
 * changing can free a port. */
static const fw_cluster_event_with_hint events[] = {
    {{FW_GVK_POD, FW_ACT_DELETE, ""}, NULL},
    {{FW_GVK_NODE, FW_ACT_ADD | FW_ACT_UPDATE, ""}, NULL},
};

PLUGIN_EVENTS_TO_REGISTER(events)

const fw_plugin_desc plugin_node_ports = {
    .name = "NodePorts",
    .create = create,
    .pre_filter = pre_filter,
    .filter = filter,
    .events_to_register = events_to_register,
};
