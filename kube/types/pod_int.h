/*
 * kube/types/pod_int.h - what pod.c (decoding) and pod_requests.c (the resource
 * requests computed while decoding) share. Not a public header.
 */
#ifndef KUBE_POD_INT_H
#define KUBE_POD_INT_H

#include "kube/types/pod.h"

#include <stdlib.h>
#include <string.h>

#include "kube/codec/arena.h"
#include "kube/util/errors.h"

/* Computes the pod's requests (and non-zero cpu/memory, the sidecar flag)
 * from its spec into pod, arena-allocating the lists. KUBE_OK,
 * KUBE_EPARSE (a quantity does not parse) or KUBE_ENOMEM. */
int kube_pod_requests_decode(const cJSON *spec, kube_arena *a, kube_pod *pod);

#endif
