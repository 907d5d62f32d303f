/*
 * tests/emulator/seed.c - the objects a fresh cluster has (namespaces
 * default, kube-system, kube-public, kube-node-lease, the kube-root-ca.crt
 * config maps, kube-system/extension-apiserver-authentication), plus the
 * --nodes / --pods benchmark fleet and the --demo cluster. Everything goes
 * through the same create path as HTTP requests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"
#include "kube/util/log.h"

static const char *const zones[] = {"zone-a", "zone-b", "zone-c"};

static int create(emu_server *s, const char *plural, const char *ns, cJSON *obj)
{
    emu_resource *r = emu_resource_find(s, "", "v1", plural);
    cJSON *st = NULL;
    int rc = r ? emu_store_create(s, r, ns, obj, NULL, &st) : KUBE_EINVAL;

    if (rc != KUBE_OK) {
        char *msg = st ? emu_json_print(st) : NULL;
        KLOG_ERROR("seeding %s failed: %s", plural, msg ? msg : kube_strerror(rc));
        free(msg);
    }
    cJSON_Delete(st);
    cJSON_Delete(obj);
    return rc;
}

static cJSON *named(const char *name)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *meta = cJSON_AddObjectToObject(o, "metadata");

    cJSON_AddStringToObject(meta, "name", name);
    return o;
}

static int seed_namespace(emu_server *s, const char *name)
{
    cJSON *cm = named("kube-root-ca.crt");
    cJSON *data = cJSON_AddObjectToObject(cm, "data");
    int rc;

    cJSON_AddStringToObject(data, "ca.crt", s->certs.ca_pem);
    rc = create(s, "namespaces", NULL, named(name));
    if (rc == KUBE_OK)
        rc = create(s, "configmaps", name, cm);
    else
        cJSON_Delete(cm);
    return rc;
}

static int seed_auth_configmap(emu_server *s)
{
    cJSON *cm = named("extension-apiserver-authentication");
    cJSON *data = cJSON_AddObjectToObject(cm, "data");

    cJSON_AddStringToObject(data, "client-ca-file", s->certs.ca_pem);
    cJSON_AddStringToObject(data, "requestheader-allowed-names", "[\"front-proxy-client\"]");
    cJSON_AddStringToObject(data, "requestheader-client-ca-file", s->certs.fp_ca_pem);
    cJSON_AddStringToObject(data, "requestheader-extra-headers-prefix", "[\"X-Remote-Extra-\"]");
    cJSON_AddStringToObject(data, "requestheader-group-headers", "[\"X-Remote-Group\"]");
    cJSON_AddStringToObject(data, "requestheader-username-headers", "[\"X-Remote-User\"]");
    return create(s, "configmaps", "kube-system", cm);
}

static cJSON *node_object(int i)
{
    char name[32], ip[32];
    cJSON *node, *labels, *status, *res, *cond, *addr;
    static const char node_status[] =
        "{\"capacity\":{\"cpu\":\"32\",\"devices.kubevirt.io/kvm\":\"1k\",\"memory\":\"256Gi\","
        "\"pods\":\"110\"},\"allocatable\":{\"cpu\":\"32\",\"devices.kubevirt.io/kvm\":\"1k\","
        "\"memory\":\"256Gi\",\"pods\":\"110\"},\"daemonEndpoints\":{\"kubeletEndpoint\":{"
        "\"Port\":10250}},\"nodeInfo\":{\"machineID\":\"\",\"systemUUID\":\"\",\"bootID\":\"\","
        "\"kernelVersion\":\"6.1.0\",\"osImage\":\"Debian GNU/Linux 12 (bookworm)\","
        "\"containerRuntimeVersion\":\"containerd://1.6.20\",\"kubeletVersion\":\"v1.23.17\","
        "\"kubeProxyVersion\":\"v1.23.17\",\"operatingSystem\":\"linux\",\"architecture\":"
        "\"amd64\"}}";

    snprintf(name, sizeof(name), "node-%d", i);
    snprintf(ip, sizeof(ip), "10.0.%d.%d", (i / 250) % 256, i % 250 + 1);
    node = named(name);
    labels = cJSON_AddObjectToObject(cJSON_GetObjectItemCaseSensitive(node, "metadata"), "labels");
    cJSON_AddStringToObject(labels, "kubernetes.io/arch", "amd64");
    cJSON_AddStringToObject(labels, "kubernetes.io/hostname", name);
    cJSON_AddStringToObject(labels, "kubernetes.io/os", "linux");
    cJSON_AddStringToObject(labels, "topology.kubernetes.io/zone", zones[i % 3]);
    cJSON_AddObjectToObject(node, "spec");
    status = cJSON_Parse(node_status);
    res = cJSON_AddArrayToObject(status, "conditions");
    cond = cJSON_CreateObject();
    cJSON_AddStringToObject(cond, "type", "Ready");
    cJSON_AddStringToObject(cond, "status", "True");
    cJSON_AddStringToObject(cond, "lastHeartbeatTime", "2026-01-01T00:00:00Z");
    cJSON_AddStringToObject(cond, "lastTransitionTime", "2026-01-01T00:00:00Z");
    cJSON_AddStringToObject(cond, "reason", "KubeletReady");
    cJSON_AddStringToObject(cond, "message", "kubelet is posting ready status");
    cJSON_AddItemToArray(res, cond);
    res = cJSON_AddArrayToObject(status, "addresses");
    addr = cJSON_CreateObject();
    cJSON_AddStringToObject(addr, "type", "InternalIP");
    cJSON_AddStringToObject(addr, "address", ip);
    cJSON_AddItemToArray(res, addr);
    addr = cJSON_CreateObject();
    cJSON_AddStringToObject(addr, "type", "Hostname");
    cJSON_AddStringToObject(addr, "address", name);
    cJSON_AddItemToArray(res, addr);
    cJSON_AddItemToObject(node, "status", status);
    return node;
}

static cJSON *pod_object(int i)
{
    char name[32];
    cJSON *pod = cJSON_Parse("{\"metadata\":{\"labels\":{\"app\":\"load\"}},\"spec\":{"
                             "\"schedulerName\":\"stickyvm\",\"containers\":[{\"name\":\"c\","
                             "\"image\":\"registry.invalid/pause:3.9\",\"resources\":{"
                             "\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"}}}]}}");

    snprintf(name, sizeof(name), "pod-%d", i);
    if (pod)
        emu_json_put_str(cJSON_GetObjectItemCaseSensitive(pod, "metadata"), "name", name);
    return pod;
}

int emu_seed(emu_server *s)
{
    static const char *const base[] = {"default", "kube-system", "kube-public", "kube-node-lease"};
    int nodes = s->cfg.nodes, rc = KUBE_OK;

    for (size_t i = 0; rc == KUBE_OK && i < sizeof(base) / sizeof(base[0]); i++)
        rc = seed_namespace(s, base[i]);
    if (rc == KUBE_OK)
        rc = seed_auth_configmap(s);
    if (rc == KUBE_OK && s->cfg.demo) {
        rc = seed_namespace(s, "stickyvm-system");
        if (nodes == 0)
            nodes = 4;
    }
    for (int i = 0; rc == KUBE_OK && i < nodes; i++)
        rc = create(s, "nodes", NULL, node_object(i));
    for (int i = 0; rc == KUBE_OK && i < s->cfg.pods; i++)
        rc = create(s, "pods", "default", pod_object(i));
    return rc;
}
