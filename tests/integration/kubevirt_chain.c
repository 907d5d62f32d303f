/*
 * tests/integration/kubevirt_chain.c - the VM -> VMI -> launcher pod chain
 * the integration tests create. The contract is in kubevirt_chain.h.
 */
#include "kubevirt_chain.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "kube/util/errors.h"
#include "kube/util/buf.h"

/* POSTs body to the collection at path and copies the answer's uid. */
static void create_with_uid(harness *h, const char *path, const char *body, char *uid, size_t n)
{
    cJSON *created = NULL;
    assert_int_equal(harness_create(h, path, body, &created), KUBE_OK);
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(created, "metadata");
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "uid"));
    assert_non_null(v);
    kube_strlcpy(uid, v, n);
    cJSON_Delete(created);
}

void kvc_create_vm(harness *h, const char *ns, const char *name, const char *ann, const char *tmpl,
                   char *uid, size_t n)
{
    char path[256], body[2048];
    snprintf(path, sizeof(path), "/apis/kubevirt.io/v1/namespaces/%s/virtualmachines", ns);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\",\"metadata\":{"
             "\"name\":\"%s\",\"namespace\":\"%s\",\"annotations\":{%s}},\"spec\":{\"running\":"
             "true,\"template\":{\"spec\":{\"schedulerName\":\"stickyvm\"%s}}}}",
             name, ns, ann ? ann : "", tmpl ? tmpl : "");
    create_with_uid(h, path, body, uid, n);
}

void kvc_create_vmi(harness *h, const char *ns, const char *name, const char *vm_uid, char *uid,
                    size_t n)
{
    char path[256], body[1024];
    snprintf(path, sizeof(path), "/apis/kubevirt.io/v1/namespaces/%s/virtualmachineinstances", ns);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstance\","
             "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"ownerReferences\":[{"
             "\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\",\"name\":\"%s\","
             "\"uid\":\"%s\",\"controller\":true,\"blockOwnerDeletion\":true}]},\"spec\":{}}",
             name, ns, name, vm_uid);
    create_with_uid(h, path, body, uid, n);
}

void kvc_create_launcher(harness *h, const char *ns, const char *vm, const char *vmi_uid,
                         const char *pod)
{
    char path[256], body[1536];
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{\"kubevirt.io\":\"virt-launcher\",\"kubevirt.io/created-by\":\"%s\","
             "\"vm.kubevirt.io/name\":\"%s\"},\"ownerReferences\":[{\"apiVersion\":"
             "\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstance\",\"name\":\"%s\",\"uid\":"
             "\"%s\",\"controller\":true,\"blockOwnerDeletion\":true}]},\"spec\":{"
             "\"schedulerName\":\"stickyvm\",\"containers\":[{\"name\":\"compute\",\"image\":"
             "\"quay.io/kubevirt/virt-launcher:v1.1.0\",\"resources\":{\"requests\":{\"cpu\":"
             "\"1\",\"memory\":\"1Gi\"}}}]}}",
             pod, vmi_uid, vm, vm, vmi_uid);
    assert_int_equal(harness_create(h, path, body, NULL), KUBE_OK);
}
