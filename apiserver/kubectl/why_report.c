/*
 * apiserver/kubectl/why_report.c - the reasons a VM does not run and what
 * to do about them, from what why.c gathered (why.h), as a JSON report and
 * as text.
 */
#include "why.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kube/types/node_target.h"
#include "kube/util/duration.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "output.h"

/* Appends a formatted string to the array arr. */
static void addf(cJSON *arr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void addf(cJSON *arr, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    cJSON_AddItemToArray(arr, cJSON_CreateString(text));
}

/* 1 when the pod (NULL: none known) tolerates the taint. */
static int tolerated(const kube_pod *pod, const kube_taint *t)
{
    for (uint32_t i = 0; pod && i < pod->n_tolerations; i++)
        if (kube_toleration_tolerates(&pod->tolerations[i], t))
            return 1;
    return 0;
}

/* 1 for a taint the control plane owns (node.kubernetes.io/...: the node
 * lifecycle controller's not-ready and unreachable, the cordon's
 * unschedulable...): it puts them back, so removing one is never advice. */
static int control_plane_taint(const kube_taint *t)
{
    return strncmp(t->key, "node.kubernetes.io/", 19) == 0;
}

/* The taints that keep the pod off the node, into the node report, the
 * reasons (each after prefix) and the suggestions. Returns how many. */
static int taints(const kube_node *node, const kube_pod *pod, const char *prefix, cJSON *jn,
                  cJSON *why, cJSON *todo)
{
    cJSON *arr = cJSON_AddArrayToObject(jn, "taints");
    int blocking = 0;
    for (uint32_t i = 0; i < node->n_taints; i++) {
        const kube_taint *t = &node->taints[i];
        char text[512];
        snprintf(text, sizeof(text), "%s%s%s:%s", t->key, *t->value ? "=" : "", t->value,
                 kube_taint_effect_name(t->effect));
        cJSON_AddItemToArray(arr, cJSON_CreateString(text));
        if (t->effect == KUBE_EFFECT_PREFER_NO_SCHEDULE || tolerated(pod, t))
            continue;
        blocking++;
        if (control_plane_taint(t)) {
            addf(why, "%snode %s has the taint %s, which the control plane set (node %s)", prefix,
                 node->base.meta.name, text, kube_node_ready_word(node));
            continue;
        }
        addf(why, "%snode %s has the taint %s, which the VM's pod does not tolerate", prefix,
             node->base.meta.name, text);
        addf(todo, "kubectl taint nodes %s %s-", node->base.meta.name, text);
    }
    return blocking;
}

/* One resource: used + the pod's need against what the node offers. */
static int resource(cJSON *jn, cJSON *why, const char *prefix, const char *node, const char *name,
                    int64_t alloc, int64_t used, int64_t need, const char *unit)
{
    cJSON *r = cJSON_AddObjectToObject(jn, name);
    cJSON_AddNumberToObject(r, "allocatable", (double)alloc);
    cJSON_AddNumberToObject(r, "requested", (double)used);
    cJSON_AddNumberToObject(r, "podRequests", (double)need);
    if (alloc <= 0 || used + need <= alloc)
        return 0;
    addf(why,
         "%snode %s lacks %s: %lld%s of %lld%s requested by its pods, the VM's pod needs %lld%s",
         prefix, node, name, (long long)used, unit, (long long)alloc, unit, (long long)need, unit);
    return 1;
}

/* The node's part: status, cordon, taints, room, each reason after prefix.
 * Returns 1 when something there keeps the pod off it. */
static int node_part(const kctl_why_facts *f, const char *prefix, cJSON *rep, cJSON *why,
                     cJSON *todo)
{
    const kube_node *node = kube_node_from(f->node);
    const kube_pod *pod = kube_pod_from(f->pod);
    const char *name = node->base.meta.name;
    cJSON *jn = cJSON_AddObjectToObject(rep, "node");
    char status[KUBE_NODE_STATUS_MAX];
    int bad = 0;
    kube_node_status(node, status, sizeof(status));
    cJSON_AddStringToObject(jn, "name", name);
    cJSON_AddBoolToObject(jn, "exists", 1);
    cJSON_AddStringToObject(jn, "status", status);
    cJSON_AddBoolToObject(jn, "unschedulable", node->unschedulable);
    if (node->unschedulable) {
        addf(why, "%snode %s is cordoned (spec.unschedulable)", prefix, name);
        addf(todo, "kubectl uncordon %s", name);
        bad = 1;
    }
    bad |= taints(node, pod, prefix, jn, why, todo) > 0;
    int64_t need_cpu = pod ? pod->requests.milli_cpu : 0, need_mem = pod ? pod->requests.memory : 0;
    int on_node = pod && strcmp(pod->node_name, name) == 0; /* already counted */
    int full = resource(jn, why, prefix, name, "cpu", node->allocatable.milli_cpu, f->req_milli_cpu,
                        on_node ? 0 : need_cpu, "m");
    full |= resource(jn, why, prefix, name, "memory", node->allocatable.memory, f->req_memory,
                     on_node ? 0 : need_mem, "");
    full |= resource(jn, why, prefix, name, "pods", node->allocatable.allowed_pods, f->req_pods,
                     on_node ? 0 : 1, "");
    if (full)
        addf(todo, "free room on node %s (move or shrink pods running there)", name);
    return bad | full;
}

/* The pinned node is NotReady, Unknown or Missing: what that means, and
 * the ways out that never touch the control plane's taints. */
static void lost_part(const kctl_ctx *c, const kctl_why_facts *f, const char *pin,
                      const char *status, int running_there, cJSON *why, cJSON *todo)
{
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(f->vm, "metadata"), "annotations");
    const char *policy = kctl_str(ann, "stickyvm.io/on-node-loss");

    if (!f->node_exists)
        addf(why, "node %s, the VM's pinned node, does not exist (Missing)", pin);
    else if (strcmp(status, "NotReady") == 0)
        addf(why,
             "node %s, the VM's pinned node, is NotReady: its kubelet reports it cannot run pods",
             pin);
    else
        addf(why,
             "node %s, the VM's pinned node, is Unknown: its kubelet stopped posting status (the "
             "node is down or unreachable)",
             pin);
    if (running_there)
        addf(why, "its pod %s is still bound to %s, but with the node %s the VM may not run",
             f->pod->meta.name, pin, status);
    addf(why, "the pin (annotation stickyvm.io/node) excludes every other node");
    addf(todo,
         "kubectl stickyvm evacuate %s --to OTHER   # move every VM pinned to %s to a Ready node",
         pin, pin);
    addf(todo,
         "kubectl stickyvm pin %s -n %s --node OTHER --force   # or this VM alone (data on %s's "
         "local disks stays there)",
         f->vm_name, c->ns, pin);
    addf(todo,
         "kubectl -n %s annotate vm %s stickyvm.io/on-node-loss=Unpin   # or let the scheduler "
         "unpin it when its node is lost (policy now: %s)",
         c->ns, f->vm_name, policy && *policy ? policy : "Wait");
    addf(todo, "kubectl stickyvm unpin %s -n %s   # or release it: any node, pinned anew",
         f->vm_name, c->ns);
    addf(todo, "# never remove the node.kubernetes.io/* taints: the control plane owns them and "
               "puts them back");
}

/* The VM is pinned: what its node says. */
static void pinned_part(const kctl_ctx *c, const kctl_why_facts *f, const char *pin, cJSON *rep,
                        cJSON *why, cJSON *todo)
{
    const kube_pod *pod = kube_pod_from(f->pod);
    const kube_node *node = kube_node_from(f->node);
    int running_there = pod && strcmp(pod->node_name, pin) == 0;
    int elsewhere = pod && *pod->node_name && !running_there;
    char status[KUBE_NODE_STATUS_MAX] = "Missing";
    int blocked = 0;
    if (node)
        kube_node_status(node, status, sizeof(status));
    status[strcspn(status, ",")] = '\0'; /* the readiness word */
    if (!f->node_exists) {
        cJSON *jn = cJSON_AddObjectToObject(rep, "node");
        cJSON_AddStringToObject(jn, "name", pin);
        cJSON_AddBoolToObject(jn, "exists", 0);
        cJSON_AddStringToObject(jn, "status", "Missing");
    } else {
        blocked = node_part(f, running_there ? "its next pod would wait: " : "", rep, why, todo);
    }
    if (strcmp(status, "Ready") != 0) {
        lost_part(c, f, pin, status, running_there, why, todo);
        return;
    }
    if (running_there) {
        cJSON_InsertItemInArray(why, 0,
                                cJSON_CreateString("nothing: the VM runs on its pinned node"));
        return;
    }
    if (elsewhere) {
        addf(why,
             "nothing now: the VM runs on %s, but it is pinned to %s (the pin moved after its pod "
             "started); its next pod will run on %s",
             pod->node_name, pin, pin);
        addf(todo, "virtctl restart %s -n %s   # to move it to %s now", f->vm_name, c->ns, pin);
        addf(todo, "kubectl stickyvm pin %s -n %s --node %s   # or keep it where it runs",
             f->vm_name, c->ns, pod->node_name);
        return;
    }
    if (blocked || (f->failed_msg && pod && !*pod->node_name)) {
        if (f->failed_msg && !blocked)
            addf(why, "the scheduler says: %s", f->failed_msg);
        addf(why, "the pin (annotation stickyvm.io/node) excludes every other node");
        addf(todo,
             "kubectl stickyvm pin %s -n %s --node NODE   # move it (data on %s's local "
             "disks stays there)",
             f->vm_name, c->ns, pin);
        addf(todo, "kubectl stickyvm unpin %s -n %s   # or release it: any node, pinned anew",
             f->vm_name, c->ns);
    }
}

/* The VM is stopped, or not pinned, or pinned. */
static void reasons(const kctl_ctx *c, const kctl_why_facts *f, cJSON *rep, cJSON *why, cJSON *todo)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(f->vm, "spec");
    const char *strategy = kctl_str(spec, "runStrategy");
    int stopped = cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(spec, "running")) ||
                  (strategy && strcmp(strategy, "Halted") == 0);
    const char *pin = kctl_str(f->pin, "node");
    if (stopped && !f->vmi_exists) {
        addf(why, "the VM is stopped (%s): nothing to schedule",
             strategy ? "runStrategy Halted" : "spec.running is false");
        addf(todo, "virtctl start %s -n %s", f->vm_name, c->ns);
        return;
    }
    if (!pin) {
        addf(why, "the VM is not pinned: stickyvm lets its next pod run on any node and pins it "
                  "there");
        if (f->failed_msg)
            addf(why, "the scheduler says: %s", f->failed_msg);
        return;
    }
    pinned_part(c, f, pin, rep, why, todo);
}

cJSON *kctl_why_report(const kctl_ctx *c, const kctl_why_facts *f)
{
    cJSON *rep = cJSON_CreateObject(), *vm, *why, *todo;
    if (!rep || !(vm = cJSON_AddObjectToObject(rep, "vm"))) {
        cJSON_Delete(rep);
        return NULL;
    }
    cJSON_AddStringToObject(vm, "namespace", c->ns);
    cJSON_AddStringToObject(vm, "name", f->vm_name);
    cJSON_AddItemToObject(rep, "pin", cJSON_Duplicate(f->pin, 1));
    if (f->pod) {
        const kube_pod *pod = kube_pod_from(f->pod);
        cJSON *jp = cJSON_AddObjectToObject(rep, "pod");
        cJSON_AddStringToObject(jp, "name", f->pod->meta.name);
        cJSON_AddStringToObject(jp, "phase", pod->phase);
        cJSON_AddStringToObject(jp, "node", pod->node_name);
    }
    if (f->failed_msg) {
        cJSON *fs = cJSON_AddObjectToObject(rep, "failedScheduling");
        cJSON_AddStringToObject(fs, "message", f->failed_msg);
        cJSON_AddStringToObject(fs, "time", f->failed_at);
    }
    why = cJSON_AddArrayToObject(rep, "reasons");
    todo = cJSON_AddArrayToObject(rep, "suggestions");
    if (!why || !todo) {
        cJSON_Delete(rep);
        return NULL;
    }
    reasons(c, f, rep, why, todo);
    if (cJSON_GetArraySize(why) == 0)
        addf(why, "%s",
             f->pod && !*kube_pod_from(f->pod)->node_name
                 ? "nothing stickyvm can see: its pod is Pending and no current FailedScheduling "
                   "explains it (the scheduler has not tried it yet, or waits to retry)"
             : f->pod ? "nothing: the VM's pod is bound to a node"
                      : "nothing stickyvm can see: the VM has no virt-launcher pod yet");
    return rep;
}

/* ---- text ----------------------------------------------------------------- */

/* "5m ago" of an RFC 3339 time, "" when unknown. */
static void ago(const kctl_ctx *c, const char *t, char *out, size_t n)
{
    int64_t us;
    char d[32];
    *out = '\0';
    if (t && *t && kube_time_parse(t, &us) == KUBE_OK) {
        kube_duration_human((int64_t)c->now - us / 1000000, d, sizeof(d));
        snprintf(out, n, "%s ago", d);
    }
}

static void print_pin(const kctl_ctx *c, const cJSON *pin)
{
    const char *node = kctl_str(pin, "node"), *by = kctl_str(pin, "by");
    const char *reason = kctl_str(pin, "reason");
    char since[48];
    if (!node) {
        fprintf(c->out, "Pin:     <none>\n");
        return;
    }
    ago(c, kctl_str(pin, "since"), since, sizeof(since));
    fprintf(c->out, "Pin:     %s (pinned %s, by %s, reason %s)\n", node,
            *since ? since : "<unknown>", by ? by : "<unknown>", reason ? reason : "<unknown>");
}

static void print_node(const kctl_ctx *c, const cJSON *n)
{
    const cJSON *t;
    if (!n)
        return;
    /* the status as `kubectl get nodes` writes it (Unknown kept apart) */
    fprintf(c->out, "Node:    %s (%s)", kctl_str(n, "name"), kctl_str(n, "status"));
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(n, "exists"))) {
        fprintf(c->out, ": no such Node\n");
        return;
    }
    fprintf(c->out, "\n");
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(n, "taints"))
        fprintf(c->out, "         taint %s\n", t->valuestring);
    static const char *const res[] = {"cpu", "memory", "pods"};
    static const char *const unit[] = {"m", "Mi", ""};
    static const double scale[] = {1, 1024.0 * 1024.0, 1};
    for (size_t i = 0; i < 3; i++) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(n, res[i]);
        fprintf(c->out, "         %-7s %.0f%s requested of %.0f%s allocatable\n", res[i],
                cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "requested")) / scale[i],
                unit[i],
                cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "allocatable")) / scale[i],
                unit[i]);
    }
}

void kctl_why_print(const kctl_ctx *c, const cJSON *rep)
{
    const cJSON *vm = cJSON_GetObjectItemCaseSensitive(rep, "vm"), *pod, *fs, *it;
    char when[48];
    fprintf(c->out, "VM:      %s/%s\n", kctl_str(vm, "namespace"), kctl_str(vm, "name"));
    print_pin(c, cJSON_GetObjectItemCaseSensitive(rep, "pin"));
    if ((pod = cJSON_GetObjectItemCaseSensitive(rep, "pod")))
        fprintf(c->out, "Pod:     %s (%s%s%s)\n", kctl_str(pod, "name"), kctl_str(pod, "phase"),
                *kctl_str(pod, "node") ? " on " : "", kctl_str(pod, "node"));
    print_node(c, cJSON_GetObjectItemCaseSensitive(rep, "node"));
    if ((fs = cJSON_GetObjectItemCaseSensitive(rep, "failedScheduling"))) {
        ago(c, kctl_str(fs, "time"), when, sizeof(when));
        fprintf(c->out, "FailedScheduling%s%s%s: %s\n", *when ? " (" : "", when, *when ? ")" : "",
                kctl_str(fs, "message"));
    }
    fprintf(c->out, "\nWhat keeps it from running:\n");
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(rep, "reasons"))
        fprintf(c->out, "  - %s\n", it->valuestring);
    if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rep, "suggestions")) > 0) {
        fprintf(c->out, "\nWhat to do:\n");
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(rep, "suggestions"))
            fprintf(c->out, "  %s\n", it->valuestring);
    }
}
