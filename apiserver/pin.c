#include "pin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/api.h"
#include "kube/errors.h"
#include "kube/log.h"
#include "request.h"
#include "status.h"

#define KUBEVIRT_GROUP "kubevirt.io"
#define PIN_KIND "VirtualMachinePin"

static const char subdomain_rule[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

typedef struct answer {
    int *code;
    kube_buf *body;
} answer;

/* The state of the VM as last read. */
typedef struct vm_state {
    cJSON *json;
    const char *rv;
    const char *node; /* current annotation, NULL when absent */
} vm_state;

static int status_answer(const answer *a, int code, const char *reason, const char *message,
                         const apis_status_details *d)
{
    *a->code = code;
    return apis_status_json(a->body, code, reason, message, d);
}

/* An upstream failure we have no specific answer for. */
static int upstream_error(const answer *a, int err, const kube_status *st, const char *what)
{
    char msg[768];

    KLOG_WARN("%s: %s (%s)", what, kube_strerror(err), st->message);
    if (err == KUBE_ETOOMANY)
        return status_answer(a, 429, "TooManyRequests", st->message[0] ? st->message : what, NULL);
    snprintf(msg, sizeof(msg), "Internal error occurred: %s: %s", what,
             st->message[0] ? st->message : kube_strerror(err));
    if (err == KUBE_ETIMEDOUT)
        return status_answer(a, 504, "Timeout", msg, NULL);
    return status_answer(a, 500, "InternalError", msg, NULL);
}

static int vm_not_found(const answer *a, const apis_pin_request *r, const kube_status *st)
{
    char msg[512];
    apis_status_details d = {.name = r->name, .group = KUBEVIRT_GROUP, .kind = "virtualmachines"};

    if (st->message[0])
        kube_strlcpy(msg, st->message, sizeof(msg));
    else
        snprintf(msg, sizeof(msg), "virtualmachines.kubevirt.io \"%s\" not found", r->name);
    return status_answer(a, 404, "NotFound", msg, &d);
}

static int invalid_node(const answer *a, const apis_pin_request *r, const char *cause_reason,
                        const char *body)
{
    char msg[1024];
    apis_status_details d = {.name = r->name, .group = APIS_GROUP, .kind = PIN_KIND,
                             .cause_reason = cause_reason, .cause_message = body,
                             .cause_field = "node"};

    snprintf(msg, sizeof(msg), PIN_KIND "." APIS_GROUP " \"%s\" is invalid: node: %s", r->name,
             body);
    return status_answer(a, 422, "Invalid", msg, &d);
}

static int read_vm(kube_client *c, const apis_pin_request *r, vm_state *vm, kube_status *st)
{
    const cJSON *meta, *rv, *ann, *node;
    int rc;

    cJSON_Delete(vm->json);
    memset(vm, 0, sizeof(*vm));
    rc = kube_api_get(c, &KUBE_RES_VMS, r->namespace_, r->name, &vm->json, st);
    if (rc != KUBE_OK)
        return rc;
    meta = cJSON_GetObjectItemCaseSensitive(vm->json, "metadata");
    rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
    ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
    node = cJSON_GetObjectItemCaseSensitive(ann, APIS_PIN_ANNOTATION);
    if (!cJSON_IsString(rv))
        return KUBE_EPARSE;
    vm->rv = rv->valuestring;
    vm->node = cJSON_IsString(node) ? node->valuestring : NULL;
    return KUBE_OK;
}

/* ?node=: the node must be a valid name of an existing Node. Returns
 * KUBE_OK when it is, else writes the answer and returns 1. */
static int check_node(kube_client *c, const apis_pin_request *r, const answer *a, int *rc)
{
    kube_status st = {0};
    cJSON *node = NULL;
    char body[1024];
    int err;

    if (!r->node_valid) {
        snprintf(body, sizeof(body), "Invalid value: \"%s\": %s", r->node, subdomain_rule);
        *rc = invalid_node(a, r, "FieldValueInvalid", body);
        return 1;
    }
    err = kube_api_get(c, &KUBE_RES_NODES, NULL, r->node, &node, &st);
    cJSON_Delete(node);
    if (err == KUBE_OK)
        return KUBE_OK;
    if (err == KUBE_ENOTFOUND) {
        snprintf(body, sizeof(body), "Not found: \"%s\"", r->node);
        *rc = invalid_node(a, r, "FieldValueNotFound", body);
    } else {
        *rc = upstream_error(a, err, &st, "reading the node");
    }
    return 1;
}

/* Without ?node=: the node of the running instance, copied into out. */
static int instance_node(kube_client *c, const apis_pin_request *r, const answer *a, char *out,
                         size_t n, int *rc)
{
    kube_status st = {0};
    cJSON *vmi = NULL;
    const cJSON *node;
    char msg[768];
    apis_status_details d = {.name = r->name, .group = APIS_GROUP, .kind = "virtualmachines"};
    int err = kube_api_get(c, &KUBE_RES_VMIS, r->namespace_, r->name, &vmi, &st);

    node = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(vmi, "status"),
                                            "nodeName");
    if (err == KUBE_OK && cJSON_IsString(node) && *node->valuestring) {
        kube_strlcpy(out, node->valuestring, n);
        cJSON_Delete(vmi);
        return KUBE_OK;
    }
    cJSON_Delete(vmi);
    if (err != KUBE_OK && err != KUBE_ENOTFOUND) {
        *rc = upstream_error(a, err, &st, "reading the VirtualMachineInstance");
        return 1;
    }
    snprintf(msg, sizeof(msg),
             "VirtualMachine %s/%s has no running VirtualMachineInstance with a node to pin to; "
             "name the node explicitly with ?node=NODE",
             r->namespace_, r->name);
    *rc = status_answer(a, 409, "Conflict", msg, &d);
    return 1;
}

static int done(const answer *a, const apis_pin_request *r, const char *node, const char *prev,
                int changed)
{
    *a->code = 200;
    return apis_pin_answer_json(a->body, r->namespace_, r->name, node, prev, changed);
}

static int exhausted(const answer *a, const apis_pin_request *r)
{
    char msg[512];
    apis_status_details d = {.name = r->name, .group = APIS_GROUP, .kind = "virtualmachines"};

    snprintf(msg, sizeof(msg),
             "Operation cannot be fulfilled on virtualmachines.kubevirt.io \"%s\": the object kept "
             "changing; %d attempts failed, please try again",
             r->name, APIS_PIN_MAX_ATTEMPTS);
    return status_answer(a, 409, "Conflict", msg, &d);
}

/* The read-compare-patch loop. target NULL means unpin. */
static int write_loop(kube_client *c, apis_metrics *m, const apis_pin_request *r,
                      const char *target, vm_state *vm, const answer *a)
{
    for (int attempt = 0; attempt < APIS_PIN_MAX_ATTEMPTS; attempt++) {
        kube_status st = {0};
        char prev[APIS_DNS_SUBDOMAIN_MAX + 1];
        int had = vm->node != NULL, err;

        if (attempt > 0 && (err = read_vm(c, r, vm, &st)) != KUBE_OK)
            return err == KUBE_ENOTFOUND ? vm_not_found(a, r, &st)
                                         : upstream_error(a, err, &st, "reading the VirtualMachine");
        had = vm->node != NULL;
        if ((!target && !had) || (target && had && strcmp(vm->node, target) == 0))
            return done(a, r, target, target, 0);
        if (had)
            kube_strlcpy(prev, vm->node, sizeof(prev));
        err = kube_api_set_annotation(c, &KUBE_RES_VMS, r->namespace_, r->name,
                                      APIS_PIN_ANNOTATION, target, vm->rv, NULL, &st);
        if (err == KUBE_OK)
            return done(a, r, target, had ? prev : NULL, 1);
        if (err == KUBE_ENOTFOUND)
            return vm_not_found(a, r, &st);
        if (err != KUBE_ECONFLICT)
            return upstream_error(a, err, &st, "updating the VirtualMachine");
        if (m)
            apis_metrics_conflict_retry(m);
        KLOG_V(2, "pin %s/%s: conflict, re-reading (attempt %d)", r->namespace_, r->name,
               attempt + 1);
    }
    return exhausted(a, r);
}

int apis_pin_execute(kube_client *c, apis_metrics *m, const apis_pin_request *r, int *code,
                     kube_buf *body)
{
    answer a = {code, body};
    vm_state vm = {0};
    kube_status st = {0};
    char node[APIS_DNS_SUBDOMAIN_MAX + 1] = "";
    int rc = read_vm(c, r, &vm, &st);

    if (rc == KUBE_ENOTFOUND)
        rc = vm_not_found(&a, r, &st);
    else if (rc != KUBE_OK)
        rc = upstream_error(&a, rc, &st, "reading the VirtualMachine");
    else if (r->unpin)
        rc = write_loop(c, m, r, NULL, &vm, &a);
    else if (r->has_node && check_node(c, r, &a, &rc) == KUBE_OK)
        rc = write_loop(c, m, r, r->node, &vm, &a);
    else if (!r->has_node && instance_node(c, r, &a, node, sizeof(node), &rc) == KUBE_OK)
        rc = write_loop(c, m, r, node, &vm, &a);
    cJSON_Delete(vm.json);
    return rc;
}
