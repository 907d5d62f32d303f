/*
 * tests/integration/kubevirt_chain.h - playing virt-controller in the
 * integration tests: the VirtualMachine -> VirtualMachineInstance ->
 * virt-launcher pod chain, created on the emulator (tests/harness.h) with
 * the ownerReferences and labels KubeVirt sets (as in
 * ../shared/kubevirt-real/).
 *
 * The helpers assert through cmocka: a failed create fails the running
 * test. Memory: nothing outlives a call; uids are copied into the
 * caller's buffer.
 */
#ifndef STICKYVM_TESTS_KUBEVIRT_CHAIN_H
#define STICKYVM_TESTS_KUBEVIRT_CHAIN_H

#include <stddef.h>

#include "harness.h"

/* Creates VirtualMachine ns/name, running, its template scheduled by
 * stickyvm. ann: members of metadata.annotations without braces (e.g.
 * "\"stickyvm.io/node\":\"node-1\""; NULL or "": none); tmpl: members
 * appended to the template's spec after schedulerName, each with its
 * leading comma (e.g. ",\"volumes\":[...]"; NULL: none). Copies the VM's
 * uid into uid (size n). */
void kvc_create_vm(harness *h, const char *ns, const char *name, const char *ann, const char *tmpl,
                   char *uid, size_t n);

/* Creates VirtualMachineInstance ns/name owned (controller) by VM name of
 * vm_uid; copies its uid into uid (size n). */
void kvc_create_vmi(harness *h, const char *ns, const char *name, const char *vm_uid, char *uid,
                    size_t n);

/* Creates virt-launcher pod ns/pod of VMI vm (uid vmi_uid), left to the
 * stickyvm scheduler, requesting 1 CPU and 1Gi. */
void kvc_create_launcher(harness *h, const char *ns, const char *vm, const char *vmi_uid,
                         const char *pod);

#endif
