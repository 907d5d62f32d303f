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
#define VMPINS_JSON                                                                    \
    "{\"name\":\"virtualmachinepins\",\"singularName\":\"virtualmachinepin\","         \
    "\"namespaced\":true,\"kind\":\"VirtualMachinePin\",\"verbs\":[\"get\",\"list\"]," \
    "\"shortNames\":[\"vmpin\"]}"

static const char resource_list_doc[] =
    "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":\"" APIS_GROUP_VERSION
    "\",\"resources\":[" SUBRESOURCE_JSON("pin") "," SUBRESOURCE_JSON("unpin") "," VMPINS_JSON
                                                                               "]}\n";

#define DEF_NAME "io.stickyvm.subresources.v1.VirtualMachinePin"
#define PATH_PARAMS                                                                   \
    "[{\"name\":\"namespace\",\"in\":\"path\",\"required\":true,\"type\":\"string\"," \
    "\"description\":\"namespace of the VirtualMachine\",\"uniqueItems\":true},"      \
    "{\"name\":\"name\",\"in\":\"path\",\"required\":true,\"type\":\"string\","       \
    "\"description\":\"name of the VirtualMachine\",\"uniqueItems\":true}"
#define NODE_PARAM                                                                   \
    ",{\"name\":\"node\",\"in\":\"query\",\"type\":\"string\",\"uniqueItems\":true," \
    "\"description\":\"the node to pin to; default: the node the VM's instance runs on\"}"
#define RESPONSES                                                              \
    "\"responses\":{\"200\":{\"description\":\"OK\",\"schema\":{\"$ref\":\"#/" \
    "definitions/" DEF_NAME "\"}},\"401\":{\"description\":\"Unauthorized\"}}"
#define OPERATION(verb, id, action)                                                       \
    "\"" verb "\":{\"description\":\"" action "\",\"operationId\":\"" id "\","            \
    "\"consumes\":[\"*/*\"],\"produces\":[\"application/json\"],\"schemes\":[\"https\"]," \
    "\"tags\":[\"subresources_stickyvm_io_v1\"]," RESPONSES ","                           \
    "\"x-kubernetes-action\":\"" action "\",\"x-kubernetes-group-version-kind\":"         \
    "{\"group\":\"" APIS_GROUP "\",\"version\":\"" APIS_VERSION                           \
    "\",\"kind\":\"VirtualMachinePin\"}}"
#define PATH_ITEM(sub, Sub, params)                                                     \
    "\"/apis/" APIS_GROUP_VERSION "/namespaces/{namespace}/virtualmachines/{name}/" sub \
    "\":{" OPERATION("get", "read" Sub, "get") "," OPERATION(                           \
        "put", "replace" Sub, "put") "," OPERATION("post", "create" Sub,                \
                                                   "post") ",\"parameters\":" params "]}"

static const char openapi_doc[] =
    "{\"swagger\":\"2.0\",\"info\":{\"title\":\"stickyvm-apiserver\",\"version\":\"v1\"},"
    "\"paths\":{" PATH_ITEM(
        "pin", "SubresourcesStickyvmIoV1NamespacedVirtualMachinePin",
        PATH_PARAMS
            NODE_PARAM) "," PATH_ITEM("unpin",
                                      "SubresourcesStickyvmIoV1NamespacedVirtualMachineUnpin",
                                      PATH_PARAMS) "},\"definitions\":{\"" DEF_NAME
                                                   "\":{\"description\":\"The node a "
                                                   "VirtualMachine is pinned "
                                                   "to (the stickyvm.io/node annotation) after a "
                                                   "pin or unpin.\",\"type\":\"object\","
                                                   "\"required\":[\"node\",\"previousNode\","
                                                   "\"changed\"],\"properties\":{"
                                                   "\"apiVersion\":{\"type\":\"string\"},\"kind\":{"
                                                   "\"type\":\"string\"},"
                                                   "\"metadata\":{\"type\":\"object\","
                                                   "\"properties\":{\"name\":{\"type\":\"string\"},"
                                                   "\"namespace\":{\"type\":\"string\"}}},"
                                                   "\"node\":{\"description\":\"the node after the "
                                                   "request, null when "
                                                   "unpinned\",\"type\":\"string\"},"
                                                   "\"previousNode\":{\"description\":\"the node "
                                                   "before the request, null when it was "
                                                   "unpinned\","
                                                   "\"type\":\"string\"},"
                                                   "\"changed\":{\"description\":\"whether the "
                                                   "request changed the "
                                                   "annotation\",\"type\":\"boolean\"}},"
                                                   "\"x-kubernetes-group-version-kind\":[{"
                                                   "\"group\":\"" APIS_GROUP
                                                   "\",\"version\":\"" APIS_VERSION
                                                   "\",\"kind\":\"VirtualMachinePin\"}]}}}\n";

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
