/*
 * apiserver/status.c - the VirtualMachinePin answer of /pin and /unpin. The
 * contract is in status.h.
 */
#include "status.h"

#include <cjson/cJSON.h>

#include "kube/util/errors.h"
#include "request.h"

static cJSON *string_or_null(const char *s)
{
    return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

int apis_pin_answer_json(kube_buf *out, const char *ns, const char *name, const char *node,
                         const char *previous_node, int changed)
{
    cJSON *a = cJSON_CreateObject();
    cJSON *meta;

    if (!a || !cJSON_AddStringToObject(a, "apiVersion", APIS_GROUP_VERSION) ||
        !cJSON_AddStringToObject(a, "kind", "VirtualMachinePin") ||
        !(meta = cJSON_AddObjectToObject(a, "metadata")) ||
        !cJSON_AddStringToObject(meta, "name", name) ||
        !cJSON_AddStringToObject(meta, "namespace", ns)) {
        cJSON_Delete(a);
        return KUBE_ENOMEM;
    }
    cJSON_AddItemToObject(a, "node", string_or_null(node));
    cJSON_AddItemToObject(a, "previousNode", string_or_null(previous_node));
    if (!cJSON_AddBoolToObject(a, "changed", changed) || !cJSON_GetObjectItem(a, "node") ||
        !cJSON_GetObjectItem(a, "previousNode")) {
        cJSON_Delete(a);
        return KUBE_ENOMEM;
    }
    return kube_status_emit(out, a);
}
