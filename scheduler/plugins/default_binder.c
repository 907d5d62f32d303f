/*
 * scheduler/plugins/default_binder.c - DefaultBinder (kube-scheduler v1.28
 * pkg/scheduler/framework/plugins/defaultbinder): binds the pod by POSTing
 * a Binding to pods/{name}/binding, guarded by the pod's UID, through the
 * client of the handle's services. A failed request is an FW_ERROR status
 * carrying the API error (its Status message, as client-go's error text).
 * Binds with or without a waiting thread (bind / bind_async): the request
 * is the same.
 */
#include <stdlib.h>

#include "kube/transport/api.h"
#include "kube/transport/client.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"

/* The Bind status of a binding request's outcome: NULL when bound, else
 * an FW_ERROR carrying the API's message. */
static fw_status *bind_status(int rc, const kube_status *st)
{
    if (rc == KUBE_OK)
        return NULL;
    if (st->message[0])
        return fw_status_error(rc, "%s", st->message);
    return fw_status_error(rc, NULL);
}

/* The handle's client, or NULL after the error status in *err. */
static struct kube_client *binder_client(void *self, const fw_pod_info *pod, const char *node,
                                         fw_status **err)
{
    const plugin_handle_only *pl = self;
    struct kube_client *c = pl->h ? pl->h->svc.client : NULL;

    *err = NULL;
    if (!c) {
        *err = fw_status_error(KUBE_EINVAL, "binding pod %s/%s: no API client", pod->namespace_,
                               pod->name);
        return NULL;
    }
    KLOG_V(3, "\"Attempting to bind pod to node\" pod=\"%s/%s\" node=\"%s\"", pod->namespace_,
           pod->name, node);
    return c;
}

static fw_status *bind_pod(void *self, fw_cycle_state *cs, const fw_pod_info *pod, const char *node)
{
    fw_status *err;
    struct kube_client *c = binder_client(self, pod, node, &err);
    kube_status st = {0};

    (void)cs;
    if (!c)
        return err;
    return bind_status(kube_api_bind(c, pod->namespace_, pod->name, pod->uid, node, &st), &st);
}

/* An asynchronous binding's caller. */
typedef struct bind_waiter {
    void (*done)(void *ud, fw_status *st);
    void *ud;
} bind_waiter;

/* kube_api_bind_async's done, on the client's I/O thread. */
static void bind_pod_done(void *ud, int rc, const kube_status *st)
{
    bind_waiter w = *(bind_waiter *)ud;

    free(ud);
    w.done(w.ud, bind_status(rc, st));
}

static fw_status *bind_pod_async(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                                 const char *node, void (*done)(void *ud, fw_status *st), void *ud)
{
    fw_status *err;
    struct kube_client *c = binder_client(self, pod, node, &err);
    bind_waiter *w;
    int rc;

    (void)cs;
    if (!c)
        return err;
    if (!(w = malloc(sizeof(*w))))
        return fw_status_error(KUBE_ENOMEM, NULL);
    *w = (bind_waiter){done, ud};
    rc = kube_api_bind_async(c, pod->namespace_, pod->name, pod->uid, node, bind_pod_done, w);
    if (rc == KUBE_OK)
        return NULL;
    free(w);
    return fw_status_error(rc, "binding pod %s/%s: %s", pod->namespace_, pod->name,
                           kube_strerror(rc));
}

const fw_plugin_desc plugin_default_binder = {
    .name = "DefaultBinder",
    .create = plugin_handle_only_create,
    .destroy = plugin_handle_only_destroy,
    .bind = bind_pod,
    .bind_async = bind_pod_async,
};
