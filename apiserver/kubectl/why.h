/*
 * apiserver/kubectl/why.h - what `kubectl stickyvm why` found, between
 * gathering it (why.c: the VM, its pin, its newest virt-launcher pod, the
 * pinned node and what the pods on it request, the latest FailedScheduling)
 * and telling it (why_report.c: the reasons, what to do, as text or as a
 * JSON object for -o json|yaml).
 *
 * Memory: a kctl_why_facts holds references (objects) and JSON trees it
 * owns, released by kctl_why_facts_clear(). Threads: the caller's.
 */
#ifndef KCTL_WHY_H
#define KCTL_WHY_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "cmd.h"
#include "kube/types/node.h"
#include "kube/types/pod.h"

typedef struct kctl_why_facts {
    const char *ns;
    char vm_name[254];
    cJSON *vm;                                   /* the VirtualMachine */
    cJSON *pin;                                  /* its VirtualMachinePin (kctl_pin_from_vm) */
    int vmi_exists;                              /* a VirtualMachineInstance of the VM exists */
    char vmi_phase[32];                          /* its status.phase */
    kube_object *pod;                            /* the newest virt-launcher pod, or NULL */
    int node_exists;                             /* the pinned node (when pinned) exists */
    kube_object *node;                           /* it, decoded; NULL when missing or unpinned */
    int64_t req_milli_cpu, req_memory, req_pods; /* pods on it, non-terminal */
    char *failed_msg;   /* the latest FailedScheduling note of the pod, or NULL;
                           never a stale one: from before the pod, for a pod bound
                           since, or naming another pin than the VM's */
    char failed_at[40]; /* its time (RFC 3339), "" when unknown */
} kctl_why_facts;

/* Builds the report of f: {vm, pin, pod, node, failedScheduling, reasons,
 * suggestions}. Caller frees; NULL on out-of-memory. */
cJSON *kctl_why_report(const kctl_ctx *c, const kctl_why_facts *f);

/* Writes the report as text. */
void kctl_why_print(const kctl_ctx *c, const cJSON *report);

void kctl_why_facts_clear(kctl_why_facts *f);

#endif
