/*
 * apiserver/pin.c - /pin and /unpin: the node to pin to (?node= checked
 * against the Nodes, or the running instance's node), then the write
 * through kube/types/pin.h (one merge patch with the VM's resourceVersion and
 * the pin's history; a conflict reads the VM again, at most
 * KUBE_PIN_MAX_ATTEMPTS patches), answered as a VirtualMachinePin or a
 * metav1.Status.
 */
#include "pin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/machinery/recorder.h"
#include "kube/transport/api.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/types/pin.h"
#include "kube/codec/validation.h"
#include "pintarget.h"
#include "pinvolumes.h"
#include "request.h"
#include "status.h"

#define KUBEVIRT_GROUP "kubevirt.io"
#define PIN_KIND "VirtualMachinePin"

typedef struct answer {
    int *code;
    kube_buf *body;
    int rc; /* after VERDICT_ANSWERED: what writing the answer returned */
} answer;

/* What a check before the write decided: go on, or stop with the answer
 * written (its rc in the answer). */
typedef enum verdict { VERDICT_PROCEED, VERDICT_ANSWERED } verdict;

static verdict answered(answer *a, int rc)
{
    a->rc = rc;
    return VERDICT_ANSWERED;
}

static int status_answer(const answer *a, int code, const char *reason, const char *message,
                         const kube_status_details *d)
{
    *a->code = code;
    return kube_status_json(a->body, code, reason, message, d);
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
    kube_status_details d = {.name = r->name, .group = KUBEVIRT_GROUP, .kind = "virtualmachines"};

    if (st->message[0])
        kube_strlcpy(msg, st->message, sizeof(msg));
    else
        snprintf(msg, sizeof(msg), "virtualmachines.kubevirt.io \"%s\" not found", r->name);
    return status_answer(a, 404, "NotFound", msg, &d);
}

/* The 422 of field errors of ?node= (one or two bodies), as
 * apierrors.NewInvalid words it: one error alone, several as "[e1, e2]". */
static int invalid_node(const answer *a, const apis_pin_request *r, const char *cause_reason,
                        const char *body, const char *body2)
{
    kube_buf msg = KUBE_BUF_INIT;
    kube_status_details d = {.name = r->name,
                             .group = APIS_GROUP,
                             .kind = PIN_KIND,
                             .cause_reason = cause_reason,
                             .cause_message = body,
                             .cause_field = "node",
                             .cause_message2 = body2};
    int rc = body2 ? kube_buf_printf(&msg,
                                     PIN_KIND "." APIS_GROUP " \"%s\" is invalid: [node: %s, "
                                              "node: %s]",
                                     r->name, body, body2)
                   : kube_buf_printf(&msg, PIN_KIND "." APIS_GROUP " \"%s\" is invalid: node: %s",
                                     r->name, body);

    if (rc == KUBE_OK)
        rc = status_answer(a, 422, "Invalid", msg.data, &d);
    kube_buf_free(&msg);
    return rc;
}

/* GET the VM, decoded (the same reading of the pin as the scheduler's)
 * and as JSON (its volumes), both the caller's. */
static int read_vm(kube_client *c, const apis_pin_request *r, kube_object **vm, cJSON **json,
                   kube_status *st)
{
    int rc = kube_api_get(c, &KUBE_RES_VMS, r->namespace_, r->name, json, st);

    *vm = NULL;
    if (rc == KUBE_OK)
        rc = kube_vm_codec.decode(*json, vm);
    return rc;
}

/* ?node= is not a DNS-1123 subdomain: field.Invalid for each rule it
 * breaks, showing the whole value quoted as kube-apiserver does (%q). */
static int malformed_node(const answer *a, const apis_pin_request *r, const char *const why[2],
                          int n)
{
    kube_buf b[2] = {KUBE_BUF_INIT, KUBE_BUF_INIT};
    size_t qn = 4 * strlen(r->node) + 8;
    char *q = malloc(qn);
    int rc = q ? KUBE_OK : KUBE_ENOMEM;

    if (q)
        kube_quote(q, qn, r->node, qn);
    for (int i = 0; rc == KUBE_OK && i < n; i++)
        rc = kube_buf_printf(&b[i], "Invalid value: %s: %s", q, why[i]);
    free(q);
    if (rc == KUBE_OK)
        rc = invalid_node(a, r, "FieldValueInvalid", b[0].data, n > 1 ? b[1].data : NULL);
    kube_buf_free(&b[0]);
    kube_buf_free(&b[1]);
    return rc;
}

/* The 409 of a move a local volume cannot follow: why, then what to do
 * instead (advice) or with force=true (what, "pin" or "unpin"). */
static int volume_conflict(const answer *a, const apis_pin_request *r, const char *why,
                           const char *advice, const char *what)
{
    kube_status_details d = {.name = r->name, .group = APIS_GROUP, .kind = "virtualmachines"};
    char msg[1024];

    snprintf(msg, sizeof(msg),
             "Operation cannot be fulfilled on virtualmachines.kubevirt.io \"%s\": %s; %s, or add "
             "force=true to %s anyway (the VM would lose that data)",
             r->name, why, advice, what);
    return status_answer(a, 409, "Conflict", msg, &d);
}

/* Without force: no volume of the VM (vm JSON) may be bound to a
 * PersistentVolume whose node affinity excludes node (the Node's JSON). */
static verdict check_volumes(kube_client *c, const apis_pin_request *r, const cJSON *vm,
                             const cJSON *node, answer *a)
{
    kube_status st = {0};
    char why[768] = "";
    int err;

    if (r->force)
        return VERDICT_PROCEED;
    err = apis_pin_volumes_check(c, r->namespace_, r->name, vm, node, why, sizeof(why), &st);
    if (err == KUBE_OK)
        return VERDICT_PROCEED;
    if (err == KUBE_ECONFLICT)
        return answered(a, volume_conflict(a, r, why, "pin to that node", "pin"));
    return answered(a, upstream_error(a, err, &st, "reading the VM's volumes"));
}

/* The pin's key, or the default. */
static const char *pin_key(const apis_pin_request *r)
{
    return r->key && *r->key ? r->key : KUBE_PIN_DEFAULT_KEY;
}

/* Without force, an unpin of a VM pinned to a node its local volumes
 * allow alone (kube_pv_holds_to_node) is refused (vm: its JSON). */
static verdict check_unpin(kube_client *c, const apis_pin_request *r, const kube_vm *vm,
                           const cJSON *json, answer *a)
{
    const char *pinned = kube_pin_get(vm, pin_key(r));
    kube_status st = {0};
    char why[768] = "";
    int err;

    if (r->force || !pinned || !r->nodes)
        return VERDICT_PROCEED;
    err = apis_unpin_volumes_check(c, r->nodes, r->namespace_, r->name, json, pinned, why,
                                   sizeof(why), &st);
    if (err == KUBE_OK)
        return VERDICT_PROCEED;
    if (err == KUBE_ECONFLICT)
        return answered(
            a, volume_conflict(a, r, why, "keep the pin (the VM waits for that node)", "unpin"));
    return answered(a, upstream_error(a, err, &st, "reading the VM's volumes"));
}

/* Without force, the target node must be able to take the VM's next pod
 * (pintarget.h): else a 409 saying why, and that force=true overrides. */
static verdict check_target(const apis_pin_request *r, const cJSON *vm, const cJSON *node,
                            answer *a)
{
    kube_status_details d = {.name = r->name, .group = APIS_GROUP, .kind = "virtualmachines"};
    const char *cause = "";
    char why[512], msg[1024];
    int err =
        r->force ? KUBE_OK : apis_pin_target_check(vm, pin_key(r), node, why, sizeof(why), &cause);

    if (err == KUBE_OK)
        return VERDICT_PROCEED;
    if (err != KUBE_ECONFLICT)
        return answered(a, upstream_error(a, err, &(kube_status){0}, "reading the node"));
    snprintf(msg, sizeof(msg),
             "Operation cannot be fulfilled on virtualmachines.kubevirt.io \"%s\": %s, so the "
             "VM's next pod would wait for it; pin to another node, or add force=true to pin "
             "anyway",
             r->name, why);
    d.cause_reason = cause;
    d.cause_message = why;
    d.cause_field = "node";
    return answered(a, status_answer(a, 409, "Conflict", msg, &d));
}

/* ?node=: the node must be a valid name of an existing Node, where the
 * VM's local volumes can follow (vm: its JSON). */
static verdict check_node(kube_client *c, const apis_pin_request *r, const cJSON *vm, answer *a)
{
    kube_status st = {0};
    cJSON *node = NULL;
    const char *why[2];
    char body[512];
    int n = kube_dns1123_subdomain_msgs(r->node, why), err;
    verdict v;

    if (!*r->node) /* field.Required, as kube words an empty value */
        return answered(a, invalid_node(a, r, "FieldValueRequired", "Required value", NULL));
    if (n > 0)
        return answered(a, malformed_node(a, r, why, n));
    err = kube_api_get(c, &KUBE_RES_NODES, NULL, r->node, &node, &st);
    if (err == KUBE_OK) {
        v = check_target(r, vm, node, a);
        if (v == VERDICT_PROCEED)
            v = check_volumes(c, r, vm, node, a);
        cJSON_Delete(node);
        return v;
    }
    if (err != KUBE_ENOTFOUND)
        return answered(a, upstream_error(a, err, &st, "reading the node"));
    snprintf(body, sizeof(body), "Not found: \"%s\"", r->node);
    return answered(a, invalid_node(a, r, "FieldValueNotFound", body, NULL));
}

/* Without ?node=: the node of the running instance, copied into out. */
static verdict instance_node(kube_client *c, const apis_pin_request *r, answer *a, char *out,
                             size_t n)
{
    kube_status st = {0};
    cJSON *vmi = NULL;
    const cJSON *node;
    char msg[768];
    kube_status_details d = {.name = r->name, .group = APIS_GROUP, .kind = "virtualmachines"};
    int err = kube_api_get(c, &KUBE_RES_VMIS, r->namespace_, r->name, &vmi, &st);

    node = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(vmi, "status"),
                                            "nodeName");
    if (err == KUBE_OK && cJSON_IsString(node) && *node->valuestring) {
        kube_strlcpy(out, node->valuestring, n);
        cJSON_Delete(vmi);
        return VERDICT_PROCEED;
    }
    cJSON_Delete(vmi);
    if (err != KUBE_OK && err != KUBE_ENOTFOUND)
        return answered(a, upstream_error(a, err, &st, "reading the VirtualMachineInstance"));
    snprintf(msg, sizeof(msg),
             "VirtualMachine %s/%s has no running VirtualMachineInstance with a node to pin to; "
             "name the node explicitly with ?node=NODE",
             r->namespace_, r->name);
    return answered(a, status_answer(a, 409, "Conflict", msg, &d));
}

static int done(const answer *a, const apis_pin_request *r, const char *node, const char *prev,
                int changed)
{
    *a->code = 200;
    return apis_pin_answer_json(a->body, r->namespace_, r->name, node, prev, changed);
}

/* The 409 of a precondition ?from= the VM no longer meets: current is
 * its pin now ("" unpinned), named in the message and as the cause. */
static int moved_meanwhile(const answer *a, const apis_pin_request *r, const char *current)
{
    char msg[1024], want[300], now[300];
    kube_status_details d = {.name = r->name,
                             .group = KUBEVIRT_GROUP,
                             .kind = "virtualmachines",
                             .cause_reason = "FieldValueInvalid",
                             .cause_message = current,
                             .cause_field = "from"};

    if (*r->from)
        snprintf(want, sizeof(want), "pinned to node %s", r->from);
    else
        snprintf(want, sizeof(want), "unpinned");
    if (*current)
        snprintf(now, sizeof(now), "pinned to node %s", current);
    else
        snprintf(now, sizeof(now), "unpinned");
    snprintf(msg, sizeof(msg),
             "Operation cannot be fulfilled on virtualmachines.kubevirt.io \"%s\": the "
             "precondition from=%s failed: the VM is %s, not %s; nothing was written",
             r->name, r->from, now, want);
    return status_answer(a, 409, "Conflict", msg, &d);
}

/* Whether vm meets r's precondition ?from= (none: always). */
static int precondition_met(const apis_pin_request *r, const kube_vm *vm)
{
    const char *cur = kube_pin_get(vm, pin_key(r));
    if (!r->from)
        return 1;
    return *r->from ? cur && strcmp(cur, r->from) == 0 : cur == NULL;
}

static int exhausted(const answer *a, const apis_pin_request *r)
{
    char msg[512];
    kube_status_details d = {.name = r->name, .group = APIS_GROUP, .kind = "virtualmachines"};

    snprintf(msg, sizeof(msg),
             "Operation cannot be fulfilled on virtualmachines.kubevirt.io \"%s\": the object kept "
             "changing; %d attempts failed, please try again",
             r->name, KUBE_PIN_MAX_ATTEMPTS);
    return status_answer(a, 409, "Conflict", msg, &d);
}

/* The audit Event of a write that moved the pin from prev (NULL: none) to
 * target (NULL: unpinned), on the VM. */
static void audit_event(const apis_pin_request *r, const kube_vm *vm, const char *prev,
                        const char *target, const char *by)
{
    kube_recorder_ref reg = kube_pin_event_ref(vm);
    const char *forced = r->force ? " (forced)" : "";

    if (!r->recorder)
        return;
    if (!target)
        kube_recorder_eventf(r->recorder, &reg, NULL, KUBE_RECORDER_NORMAL, "Unpinned", "Unpin",
                             "Unpinned from node %s by %s through the API%s",
                             prev ? prev : "<none>", by, forced);
    else if (!prev)
        kube_recorder_eventf(r->recorder, &reg, NULL, KUBE_RECORDER_NORMAL, "Pinned", "Pin",
                             "Pinned to node %s by %s through the API%s", target, by, forced);
    else
        kube_recorder_eventf(r->recorder, &reg, NULL, KUBE_RECORDER_NORMAL, "Repinned", "Pin",
                             "Pin moved from node %s to node %s by %s through the API%s", prev,
                             target, by, forced);
}

/* dryRun=All: what writing target (NULL: unpin) over vm would answer. */
static int dry_run(const answer *a, const apis_pin_request *r, const char *target,
                   const kube_vm *vm)
{
    const char *cur = kube_pin_get(vm, pin_key(r));
    int same = cur && target ? strcmp(cur, target) == 0 : cur == target;

    return done(a, r, target, cur, !same);
}

/* Whether target (NULL: unpinned) is the pin previous ("" none). */
static int same_pin(const char *target, const char *previous)
{
    return target ? strcmp(target, previous) == 0 : !*previous;
}

/* Writes target (NULL: unpin) over vm through kube/types/pin, which reads the
 * VM again on conflicts; an explicit pin always proceeds. */
static int write_pin(kube_client *c, apis_metrics *m, const apis_pin_request *r, const char *target,
                     const kube_vm *vm, const answer *a)
{
    kube_pin_write w = {.key = pin_key(r),
                        .node = target,
                        .reason = KUBE_PIN_API,
                        .by = r->user && *r->user ? r->user : "stickyvm-apiserver",
                        .from = r->from};
    kube_pin_result res;
    int err, rc;

    if (r->dry_run)
        return dry_run(a, r, target, vm);
    err = kube_pin_set(c, vm, &w, NULL, NULL, &res);
    for (int i = 0; m && i < res.reads + (err == KUBE_ECONFLICT); i++)
        apis_metrics_conflict_retry(m);
    if (err == KUBE_ECONFLICT)
        rc = exhausted(a, r);
    else if (err != KUBE_OK)
        rc = upstream_error(a, err, &res.status, "updating the VirtualMachine");
    else if (res.outcome == KUBE_PIN_GONE)
        rc = vm_not_found(a, r, &res.status);
    else if (res.outcome == KUBE_PIN_PRECONDITION)
        rc = moved_meanwhile(a, r, res.previous);
    else if (res.outcome != KUBE_PIN_WRITTEN || same_pin(target, res.previous))
        rc = done(a, r, target, target, 0); /* the pin stays (what it saw recorded) */
    else {
        const char *prev = res.previous[0] ? res.previous : NULL;
        audit_event(r, vm, prev, target, w.by);
        rc = done(a, r, target, prev, 1);
    }
    kube_pin_result_clear(&res);
    return rc;
}

/* Decides the node and writes: the request's work once the VM was read. */
static int pin_vm(kube_client *c, apis_metrics *m, const apis_pin_request *r, const kube_vm *vm,
                  const cJSON *json, answer *a)
{
    char node[KUBE_DNS1123_SUBDOMAIN_MAX + 1] = "";
    const char *cur = kube_pin_get(vm, pin_key(r));

    if (!precondition_met(r, vm)) /* before any other check: nothing else matters */
        return moved_meanwhile(a, r, cur ? cur : "");
    if (r->unpin)
        return check_unpin(c, r, vm, json, a) == VERDICT_PROCEED ? write_pin(c, m, r, NULL, vm, a)
                                                                 : a->rc;
    if (r->has_node)
        return check_node(c, r, json, a) == VERDICT_PROCEED ? write_pin(c, m, r, r->node, vm, a)
                                                            : a->rc;
    return instance_node(c, r, a, node, sizeof(node)) == VERDICT_PROCEED
               ? write_pin(c, m, r, node, vm, a)
               : a->rc;
}

int apis_pin_execute(kube_client *c, apis_metrics *m, const apis_pin_request *r, int *code,
                     kube_buf *body)
{
    answer a = {code, body, KUBE_OK};
    kube_object *obj = NULL;
    cJSON *json = NULL;
    kube_status st = {0};
    int rc = read_vm(c, r, &obj, &json, &st);

    if (rc == KUBE_ENOTFOUND)
        rc = vm_not_found(&a, r, &st);
    else if (rc != KUBE_OK)
        rc = upstream_error(&a, rc, &st, "reading the VirtualMachine");
    else
        rc = pin_vm(c, m, r, kube_vm_from(obj), json, &a);
    cJSON_Delete(json);
    kube_object_unref(obj);
    return rc;
}

/* One INFO line per pin or unpin request (contract in pin.h): a node that
 * is no valid name is shown quoted (kube_quote) and cut after 64 bytes. */
void apis_pin_log(const apis_route *r, const char *user, int code, double secs)
{
    char quoted[300] = "";

    if (r->has_node && r->node)
        kube_quote(quoted, sizeof(quoted), r->node, 64);
    KLOG_INFO("%s %s/%s user=%s%s%s%s%s%s%s: %d in %.1fms", apis_route_subresource(r->kind),
              r->namespace_, r->name, user, r->has_node ? " node=" : "",
              !r->has_node    ? ""
              : r->node_valid ? r->node
                              : quoted,
              r->has_from ? " from=" : "", r->has_from ? r->from : "",
              r->dry_run ? " dryRun=All" : "", r->force ? " force=true" : "", code, secs * 1e3);
}
