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
#include "plugins/plugins.h"

typedef struct default_binder {
    const fw_handle *h;
} default_binder;

static int create(const cJSON *args, fw_handle *h, void **self, char *err, size_t errlen)
{
    default_binder *pl = calloc(1, sizeof(*pl));
    if (!pl)
        return KUBE_ENOMEM;
    pl->h = h;
    *self = pl;
    return KUBE_OK;
}

static void destroy(void *self)
{
    free(self);
}

static fw_status *bind_pod(void *self, fw_cycle_state *cs, const fw_pod_info *pod, const char *node)
{
    const default_binder *pl = self;
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
    .create = create,
    .destroy = destroy,
    .bind = bind_pod,
};
