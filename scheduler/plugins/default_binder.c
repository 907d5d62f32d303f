/*
 * scheduler/plugins/default_binder.c - DefaultBinder (kube-scheduler v1.28
 * pkg/scheduler/framework/plugins/defaultbinder): binds the pod by POSTing
 * a Binding to pods/{name}/binding, guarded by the pod's UID, through the
 * client of the handle's services. A failed request is an FW_ERROR status
 * carrying the API error (its Status message, as client-go's error text).
 */
#include <stdlib.h>

#include "kube/transport/api.h"
#include "kube/transport/client.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"

static fw_status *bind_pod(void *self, fw_cycle_state *cs, const fw_pod_info *pod, const char *node)
{
    const plugin_handle_only *pl = self;
    struct kube_client *c = pl->h ? pl->h->svc.client : NULL;
    kube_status st = {0};

    if (!c)
        return fw_status_error(KUBE_EINVAL, "binding pod %s/%s: no API client", pod->namespace_,
                               pod->name);
    KLOG_V(3, "\"Attempting to bind pod to node\" pod=\"%s/%s\" node=\"%s\"", pod->namespace_,
           pod->name, node);
    int rc = kube_api_bind(c, pod->namespace_, pod->name, pod->uid, node, &st);
    if (rc == KUBE_OK)
        return NULL;
    if (st.message[0])
        return fw_status_error(rc, "%s", st.message);
    return fw_status_error(rc, NULL);
}

const fw_plugin_desc plugin_default_binder = {
    .name = "DefaultBinder",
    .create = plugin_handle_only_create,
    .destroy = plugin_handle_only_destroy,
    .bind = bind_pod,
};
