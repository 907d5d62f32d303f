/*
 * kube/serving/observer.c - the NULL-safe calls of a serving observer. The
 * contract is in observer.h.
 */
#include "kube/serving/observer.h"

#include <stddef.h>

void kube_observe_request(const kube_serving_observer *o, const char *method, const char *label,
                          int code, double seconds)
{
    if (o && o->request)
        o->request(o->ud, method, label ? label : "", code, seconds);
}

void kube_observe_inflight(const kube_serving_observer *o, int delta)
{
    if (o && o->inflight)
        o->inflight(o->ud, delta);
}

void kube_observe_authn(const kube_serving_observer *o, kube_authn_result r)
{
    if (o && o->authn)
        o->authn(o->ud, r);
}

void kube_observe_authz(const kube_serving_observer *o, kube_authz_result r)
{
    if (o && o->authz)
        o->authz(o->ud, r);
}
