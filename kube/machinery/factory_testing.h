/*
 * kube/machinery/factory_testing.h - what only tests use of the informer
 * factory (factory.h): filling a fake factory's listers.
 */
#ifndef KUBE_FACTORY_TESTING_H
#define KUBE_FACTORY_TESTING_H

#include "kube/machinery/factory.h"

/* Fake factories only: applies a watch event (KUBE_WATCH_ADDED, _MODIFIED,
 * _DELETED) to l's store and delivers it to l's handlers, as a watch
 * would. obj borrowed. KUBE_OK, KUBE_EINVAL (a real lister, another type),
 * KUBE_ENOMEM. */
int kube_lister_apply(kube_lister *l, int type, kube_object *obj);

#endif
