/*
 * apiserver/discovery.c - the fixed documents stickyvm-apiserver serves: the
 * root path list, API discovery (/apis, /apis/subresources.stickyvm.io,
 * /apis/subresources.stickyvm.io/v1, which the aggregator probes to mark the
 * APIService Available) and a minimal OpenAPI v2 (Swagger 2.0) document that
 * the aggregator fetches and merges into the cluster's /openapi/v2. The
 * contract is in discovery.h.
 */
#include "discovery.h"

#include <openssl/sha.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "request.h"

#define GV_JSON "{\"groupVersion\":\"" APIS_GROUP_VERSION "\",\"version\":\"" APIS_VERSION "\"}"

static const char root_doc[] =
    "{\"paths\":[\"/apis\",\"/apis/" APIS_GROUP "\",\"/apis/" APIS_GROUP_VERSION "\","
    "\"/healthz\",\"/livez\",\"/metrics\",\"/openapi/v2\",\"/readyz\"]}\n";

static const char group_list_doc[] =
    "{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":[{\"name\":\"" APIS_GROUP "\","
    "\"versions\":[" GV_JSON "],\"preferredVersion\":" GV_JSON "}]}\n";

static const char group_doc[] =
    "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",\"name\":\"" APIS_GROUP "\","
    "\"versions\":[" GV_JSON "],\"preferredVersion\":" GV_JSON "}\n";

#define SUBRESOURCE_JSON(sub)                                                          \
    "{\"name\":\"virtualmachines/" sub "\",\"singularName\":\"\",\"namespaced\":true," \
    "\"kind\":\"VirtualMachinePin\",\"verbs\":[\"get\",\"update\",\"create\"]}"

/* The read-only resource (vmpins.h): kubectl resolves "vmpin" through
 * shortNames and "virtualmachinepin" through singularName. */
#define VMPINS_JSON                                                                              \
    "{\"name\":\"virtualmachinepins\",\"singularName\":\"virtualmachinepin\","                   \
    "\"namespaced\":true,\"kind\":\"VirtualMachinePin\",\"verbs\":[\"get\",\"list\",\"watch\"]," \
    "\"shortNames\":[\"vmpin\"]}"

static const char resource_list_doc[] =
    "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":\"" APIS_GROUP_VERSION
    "\",\"resources\":[" SUBRESOURCE_JSON("pin") "," SUBRESOURCE_JSON("unpin") "," VMPINS_JSON
                                                                               "]}\n";

/* The Swagger 2.0 document: the pin and unpin subresources, the
 * virtualmachinepins resource (vmpins.h) and VirtualMachinePin(List). */
/* clang-format off */
/* The watch parameters of a virtualmachinepins list (vmpins_watch.h). */
#define WATCH_PARAMS                                                                          \
    "{\"name\":\"watch\",\"in\":\"query\",\"type\":\"boolean\",\"uniqueItems\":true,"                \
    "\"description\":\"watch for changes: ADDED, MODIFIED, DELETED (and BOOKMARK) events\"},"      \
    "{\"name\":\"resourceVersion\",\"in\":\"query\",\"type\":\"string\",\"uniqueItems\":true,"     \
    "\"description\":\"with watch: the changes after this version (empty or 0: the current state first)\"}," \
    "{\"name\":\"timeoutSeconds\",\"in\":\"query\",\"type\":\"integer\",\"uniqueItems\":true,"      \
    "\"description\":\"with watch: end it after this many seconds\"},"                             \
    "{\"name\":\"allowWatchBookmarks\",\"in\":\"query\",\"type\":\"boolean\","                        \
    "\"uniqueItems\":true,\"description\":\"with watch: send BOOKMARK events\"}"

static const char openapi_doc[] =
    "{\"swagger\":\"2.0\",\"info\":{\"title\":\"stickyvm-apiserver\",\"version\":\"v1\"},"
    "\"paths\":{\"/apis/subresources.stickyvm.io/v1/namespaces/{namespace}/virtualmachines/{name}/pin\":{\"get\":{\"description\":\"pin\","
    "\"operationId\":\"readSubresourcesStickyvmIoV1NamespacedVirtualMachinePin\","
    "\"consumes\":[\"*/*\"],\"produces\":[\"application/json\"],\"schemes\":[\"https\"],"
    "\"tags\":[\"subresources_stickyvm_io_v1\"],"
    "\"responses\":{\"200\":{\"description\":\"OK\","
    "\"schema\":{\"$ref\":\"#/definitions/io.stickyvm.subresources.v1.VirtualMachinePin\"}},"
    "\"401\":{\"description\":\"Unauthorized\"}},\"x-kubernetes-action\":\"get\","
    "\"x-kubernetes-group-version-kind\":{\"group\":\"subresources.stickyvm.io\","
    "\"version\":\"v1\",\"kind\":\"VirtualMachinePin\"}},\"put\":{\"description\":\"pin\","
    "\"operationId\":\"replaceSubresourcesStickyvmIoV1NamespacedVirtualMachinePin\","
    "\"consumes\":[\"*/*\"],\"produces\":[\"application/json\"],\"schemes\":[\"https\"],"
    "\"tags\":[\"subresources_stickyvm_io_v1\"],"
    "\"responses\":{\"200\":{\"description\":\"OK\","
    "\"schema\":{\"$ref\":\"#/definitions/io.stickyvm.subresources.v1.VirtualMachinePin\"}},"
    "\"401\":{\"description\":\"Unauthorized\"}},\"x-kubernetes-action\":\"put\","
    "\"x-kubernetes-group-version-kind\":{\"group\":\"subresources.stickyvm.io\","
    "\"version\":\"v1\",\"kind\":\"VirtualMachinePin\"}},\"post\":{\"description\":\"pin\","
    "\"operationId\":\"createSubresourcesStickyvmIoV1NamespacedVirtualMachinePin\","
    "\"consumes\":[\"*/*\"],\"produces\":[\"application/json\"],\"schemes\":[\"https\"],"
    "\"tags\":[\"subresources_stickyvm_io_v1\"],"
    "\"responses\":{\"200\":{\"description\":\"OK\","
    "\"schema\":{\"$ref\":\"#/definitions/io.stickyvm.subresources.v1.VirtualMachinePin\"}},"
    "\"401\":{\"description\":\"Unauthorized\"}},\"x-kubernetes-action\":\"post\","
    "\"x-kubernetes-group-version-kind\":{\"group\":\"subresources.stickyvm.io\","
    "\"version\":\"v1\",\"kind\":\"VirtualMachinePin\"}},"
    "\"parameters\":[{\"name\":\"namespace\",\"in\":\"path\",\"type\":\"string\","
    "\"uniqueItems\":true,\"description\":\"namespace of the VirtualMachine\","
    "\"required\":true},{\"name\":\"name\",\"in\":\"path\",\"type\":\"string\","
    "\"uniqueItems\":true,\"description\":\"name of the VirtualMachine\",\"required\":true},"
    "{\"name\":\"node\",\"in\":\"query\",\"type\":\"string\",\"uniqueItems\":true,"
    "\"description\":\"the node to pin to; default: the node the VM's instance runs on\"},"
    "{\"name\":\"dryRun\",\"in\":\"query\",\"type\":\"string\",\"uniqueItems\":true,"
    "\"description\":\"All: answer what would change, write nothing\"},{\"name\":\"force\","
    "\"in\":\"query\",\"type\":\"boolean\",\"uniqueItems\":true,"
    "\"description\":\"pin even to a node outside a local volume's node affinity\"},"
    "{\"name\":\"from\",\"in\":\"query\",\"type\":\"string\",\"uniqueItems\":true,"
    "\"description\":\"precondition: move only if the VM is pinned to this node now (empty: "
    "only if it is unpinned); otherwise 409 Conflict naming the current pin\"}]},"
    "\"/apis/subresources.stickyvm.io/v1/namespaces/{namespace}/virtualmachines/{name}/unpin\":{\"get\":{\"description\":\"unpin\","
    "\"operationId\":\"readSubresourcesStickyvmIoV1NamespacedVirtualMachineUnpin\","
    "\"consumes\":[\"*/*\"],\"produces\":[\"application/json\"],\"schemes\":[\"https\"],"
    "\"tags\":[\"subresources_stickyvm_io_v1\"],"
    "\"responses\":{\"200\":{\"description\":\"OK\","
    "\"schema\":{\"$ref\":\"#/definitions/io.stickyvm.subresources.v1.VirtualMachinePin\"}},"
    "\"401\":{\"description\":\"Unauthorized\"}},\"x-kubernetes-action\":\"get\","
    "\"x-kubernetes-group-version-kind\":{\"group\":\"subresources.stickyvm.io\","
    "\"version\":\"v1\",\"kind\":\"VirtualMachinePin\"}},\"put\":{\"description\":\"unpin\","
    "\"operationId\":\"replaceSubresourcesStickyvmIoV1NamespacedVirtualMachineUnpin\","
    "\"consumes\":[\"*/*\"],\"produces\":[\"application/json\"],\"schemes\":[\"https\"],"
    "\"tags\":[\"subresources_stickyvm_io_v1\"],"
    "\"responses\":{\"200\":{\"description\":\"OK\","
    "\"schema\":{\"$ref\":\"#/definitions/io.stickyvm.subresources.v1.VirtualMachinePin\"}},"
    "\"401\":{\"description\":\"Unauthorized\"}},\"x-kubernetes-action\":\"put\","
    "\"x-kubernetes-group-version-kind\":{\"group\":\"subresources.stickyvm.io\","
    "\"version\":\"v1\",\"kind\":\"VirtualMachinePin\"}},\"post\":{\"description\":\"unpin\","
    "\"operationId\":\"createSubresourcesStickyvmIoV1NamespacedVirtualMachineUnpin\","
    "\"consumes\":[\"*/*\"],\"produces\":[\"application/json\"],\"schemes\":[\"https\"],"
    "\"tags\":[\"subresources_stickyvm_io_v1\"],"
    "\"responses\":{\"200\":{\"description\":\"OK\","
    "\"schema\":{\"$ref\":\"#/definitions/io.stickyvm.subresources.v1.VirtualMachinePin\"}},"
    "\"401\":{\"description\":\"Unauthorized\"}},\"x-kubernetes-action\":\"post\","
    "\"x-kubernetes-group-version-kind\":{\"group\":\"subresources.stickyvm.io\","
    "\"version\":\"v1\",\"kind\":\"VirtualMachinePin\"}},"
    "\"parameters\":[{\"name\":\"namespace\",\"in\":\"path\",\"type\":\"string\","
    "\"uniqueItems\":true,\"description\":\"namespace of the VirtualMachine\","
    "\"required\":true},{\"name\":\"name\",\"in\":\"path\",\"type\":\"string\","
    "\"uniqueItems\":true,\"description\":\"name of the VirtualMachine\",\"required\":true},"
    "{\"name\":\"dryRun\",\"in\":\"query\",\"type\":\"string\",\"uniqueItems\":true,"
    "\"description\":\"All: answer what would change, write nothing\"},"
    "{\"name\":\"from\",\"in\":\"query\",\"type\":\"string\",\"uniqueItems\":true,"
    "\"description\":\"precondition: unpin only if the VM is pinned to this node now (empty: "
    "only if it is unpinned); otherwise 409 Conflict naming the current pin\"}]},"
    "\"/apis/subresources.stickyvm.io/v1/virtualmachinepins\":{\"get\":{\"description\":\"list the pins of every VirtualMachine\","
    "\"operationId\":\"listSubresourcesStickyvmIoV1VirtualMachinePinForAllNamespaces\","
    "\"consumes\":[\"*/*\"],\"produces\":[\"application/json\","
    "\"application/json;as=Table;v=v1;g=meta.k8s.io\","
    "\"application/json;as=Table;v=v1beta1;g=meta.k8s.io\"],\"schemes\":[\"https\"],"
    "\"tags\":[\"subresources_stickyvm_io_v1\"],"
    "\"responses\":{\"200\":{\"description\":\"OK\","
    "\"schema\":{\"$ref\":\"#/definitions/io.stickyvm.subresources.v1.VirtualMachinePinList\"}},"
    "\"401\":{\"description\":\"Unauthorized\"}},\"x-kubernetes-action\":\"list\","
    "\"x-kubernetes-group-version-kind\":{\"group\":\"subresources.stickyvm.io\","
    "\"version\":\"v1\",\"kind\":\"VirtualMachinePinList\"}},"
    "\"parameters\":[{\"name\":\"labelSelector\",\"in\":\"query\",\"type\":\"string\","
    "\"uniqueItems\":true,\"description\":\"select by the VirtualMachine's labels\"},"
    "{\"name\":\"fieldSelector\",\"in\":\"query\",\"type\":\"string\",\"uniqueItems\":true,"
    "\"description\":\"node, status.nodeStatus (the whole value, a comma escaped as \\\\,),"
    " metadata.name, metadata.namespace (=, ==, !=)\"},"
    "{\"name\":\"includeObject\",\"in\":\"query\",\"type\":\"string\",\"uniqueItems\":true,"
    "\"description\":\"with a Table: None, Metadata (default) or Object\"}," WATCH_PARAMS "]},"
    "\"/apis/subresources.stickyvm.io/v1/namespaces/{namespace}/virtualmachinepins\":{\"get\":{\"description\":\"list the pins of a namespace's VirtualMachines\","
    "\"operationId\":\"listSubresourcesStickyvmIoV1NamespacedVirtualMachinePin\","
    "\"consumes\":[\"*/*\"],\"produces\":[\"application/json\","
    "\"application/json;as=Table;v=v1;g=meta.k8s.io\","
    "\"application/json;as=Table;v=v1beta1;g=meta.k8s.io\"],\"schemes\":[\"https\"],"
    "\"tags\":[\"subresources_stickyvm_io_v1\"],"
    "\"responses\":{\"200\":{\"description\":\"OK\","
    "\"schema\":{\"$ref\":\"#/definitions/io.stickyvm.subresources.v1.VirtualMachinePinList\"}},"
    "\"401\":{\"description\":\"Unauthorized\"}},\"x-kubernetes-action\":\"list\","
    "\"x-kubernetes-group-version-kind\":{\"group\":\"subresources.stickyvm.io\","
    "\"version\":\"v1\",\"kind\":\"VirtualMachinePinList\"}},"
    "\"parameters\":[{\"name\":\"namespace\",\"in\":\"path\",\"type\":\"string\","
    "\"uniqueItems\":true,\"description\":\"namespace of the VirtualMachine\","
    "\"required\":true},{\"name\":\"labelSelector\",\"in\":\"query\",\"type\":\"string\","
    "\"uniqueItems\":true,\"description\":\"select by the VirtualMachine's labels\"},"
    "{\"name\":\"fieldSelector\",\"in\":\"query\",\"type\":\"string\",\"uniqueItems\":true,"
    "\"description\":\"node, status.nodeStatus (the whole value, a comma escaped as \\\\,),"
    " metadata.name, metadata.namespace (=, ==, !=)\"},"
    "{\"name\":\"includeObject\",\"in\":\"query\",\"type\":\"string\",\"uniqueItems\":true,"
    "\"description\":\"with a Table: None, Metadata (default) or Object\"}," WATCH_PARAMS "]},"
    "\"/apis/subresources.stickyvm.io/v1/namespaces/{namespace}/virtualmachinepins/{name}\":{\"get\":{\"description\":\"read the pin of a VirtualMachine\","
    "\"operationId\":\"readSubresourcesStickyvmIoV1NamespacedVirtualMachinePin\","
    "\"consumes\":[\"*/*\"],\"produces\":[\"application/json\","
    "\"application/json;as=Table;v=v1;g=meta.k8s.io\","
    "\"application/json;as=Table;v=v1beta1;g=meta.k8s.io\"],\"schemes\":[\"https\"],"
    "\"tags\":[\"subresources_stickyvm_io_v1\"],"
    "\"responses\":{\"200\":{\"description\":\"OK\","
    "\"schema\":{\"$ref\":\"#/definitions/io.stickyvm.subresources.v1.VirtualMachinePin\"}},"
    "\"401\":{\"description\":\"Unauthorized\"}},\"x-kubernetes-action\":\"get\","
    "\"x-kubernetes-group-version-kind\":{\"group\":\"subresources.stickyvm.io\","
    "\"version\":\"v1\",\"kind\":\"VirtualMachinePin\"}},"
    "\"parameters\":[{\"name\":\"namespace\",\"in\":\"path\",\"type\":\"string\","
    "\"uniqueItems\":true,\"description\":\"namespace of the VirtualMachine\","
    "\"required\":true},{\"name\":\"name\",\"in\":\"path\",\"type\":\"string\","
    "\"uniqueItems\":true,\"description\":\"name of the VirtualMachine\",\"required\":true},"
    "{\"name\":\"includeObject\",\"in\":\"query\",\"type\":\"string\",\"uniqueItems\":true,"
    "\"description\":\"with a Table: None, Metadata (default) or Object\"}]}},"
    "\"definitions\":{\"io.stickyvm.subresources.v1.VirtualMachinePin\":{\"description\":\"The pin of a VirtualMachine (the stickyvm.io/node annotation and its record). The virtualmachinepins resource serves node,"
    " since, by and reason; a pin or unpin answers node, previousNode and changed.\","
    "\"type\":\"object\",\"properties\":{\"apiVersion\":{\"type\":\"string\"},"
    "\"kind\":{\"type\":\"string\"},\"metadata\":{\"type\":\"object\","
    "\"description\":\"the VirtualMachine's name, namespace, uid, resourceVersion,"
    " creationTimestamp and labels\"},\"node\":{\"type\":\"string\","
    "\"description\":\"the node the VM is pinned to, null when unpinned\"},"
    "\"since\":{\"type\":\"string\","
    "\"description\":\"when the pin was last written (stickyvm.io/pinned-at), RFC 3339\"},"
    "\"by\":{\"type\":\"string\",\"description\":\"who wrote it (stickyvm.io/pinned-by)\"},"
    "\"reason\":{\"type\":\"string\",\"description\":\"why: FirstPlacement,"
    " API or Migration (stickyvm.io/pin-reason)\"},\"previousNode\":{\"type\":\"string\","
    "\"description\":\"pin and unpin answers: the node before the request,"
    " null when it was unpinned\"},\"changed\":{\"type\":\"boolean\","
    "\"description\":\"pin and unpin answers: whether the request changed (or, with dryRun,"
    " would change) the pin\"},\"status\":{\"type\":\"object\",\"properties\":{"
    "\"nodeStatus\":{\"type\":\"string\",\"description\":\"the pinned node as kubectl get nodes"
    " words it: Ready, NotReady or Unknown, then ,SchedulingDisabled when cordoned; Missing when"
    " no Node has that name; null when unpinned\"}}}},"
    "\"x-kubernetes-group-version-kind\":[{\"group\":\"subresources.stickyvm.io\","
    "\"version\":\"v1\",\"kind\":\"VirtualMachinePin\"}]},"
    "\"io.stickyvm.subresources.v1.VirtualMachinePinList\":{\"description\":\"A list of VirtualMachinePins.\","
    "\"type\":\"object\",\"required\":[\"items\"],"
    "\"properties\":{\"apiVersion\":{\"type\":\"string\"},\"kind\":{\"type\":\"string\"},"
    "\"metadata\":{\"type\":\"object\"},\"items\":{\"type\":\"array\","
    "\"items\":{\"$ref\":\"#/definitions/io.stickyvm.subresources.v1.VirtualMachinePin\"}}},"
    "\"x-kubernetes-group-version-kind\":[{\"group\":\"subresources.stickyvm.io\","
    "\"version\":\"v1\",\"kind\":\"VirtualMachinePinList\"}]}}}\n";
/* clang-format on */

static const char *with_len(const char *doc, size_t size, size_t *len)
{
    if (len)
        *len = size - 1;
    return doc;
}

const char *apis_discovery_root(size_t *len)
{
    return with_len(root_doc, sizeof(root_doc), len);
}

const char *apis_discovery_group_list(size_t *len)
{
    return with_len(group_list_doc, sizeof(group_list_doc), len);
}

const char *apis_discovery_group(size_t *len)
{
    return with_len(group_doc, sizeof(group_doc), len);
}

const char *apis_discovery_resource_list(size_t *len)
{
    return with_len(resource_list_doc, sizeof(resource_list_doc), len);
}

const char *apis_openapi_v2(size_t *len)
{
    return with_len(openapi_doc, sizeof(openapi_doc), len);
}

static char etag[2 * SHA256_DIGEST_LENGTH + 3];
static pthread_once_t etag_once = PTHREAD_ONCE_INIT;

static void compute_etag(void)
{
    unsigned char md[SHA256_DIGEST_LENGTH];
    size_t pos = 0;

    SHA256((const unsigned char *)openapi_doc, sizeof(openapi_doc) - 1, md);
    etag[pos++] = '"';
    for (size_t i = 0; i < sizeof(md); i++, pos += 2)
        snprintf(etag + pos, sizeof(etag) - pos, "%02x", md[i]);
    etag[pos++] = '"';
    etag[pos] = '\0';
}

const char *apis_openapi_v2_etag(void)
{
    pthread_once(&etag_once, compute_etag);
    return etag;
}
