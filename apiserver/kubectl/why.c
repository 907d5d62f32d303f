/*
 * apiserver/kubectl/why.c - `kubectl stickyvm why POD|VM`: gathers what
 * keeps a VM from running (why.h) and prints the report.
 */
#include "why.h"

#include <stdlib.h>
#include <string.h>

#include "kube/codec/object.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "output.h"

#define KCTL_KUBEVIRT_API "/apis/kubevirt.io/v1"

void kctl_why_facts_clear(kctl_why_facts *f)
{
    cJSON_Delete(f->vm);
    cJSON_Delete(f->pin);
    kube_object_unref(f->pod);
    kube_object_unref(f->node);
    free(f->failed_msg);
    memset(f, 0, sizeof(*f));
}

/* GET of an object path; 404 is *out NULL with KUBE_OK. Other failures are
 * printed. */
static int get_optional(kctl_ctx *c, const char *path, cJSON **out)
{
    kube_response resp = {0};
    int rc = kctl_get_json(c, path, out, &resp);
    if (rc == KUBE_ENOTFOUND)
        rc = KUBE_OK;
    else if (rc != KUBE_OK)
        kctl_print_error(c->err, &resp);
    kube_response_clear(&resp);
    return rc;
}

/* get_optional of one object, or of a collection when name is NULL, at
 * kctl_object_path(api, ns, plural, name). */
static int get_object(kctl_ctx *c, const char *api, const char *ns, const char *plural,
                      const char *name, cJSON **out)
{
    kube_buf path = KUBE_BUF_INIT;
    int rc = kctl_object_path(&path, api, ns, plural, name);
    if (rc == KUBE_OK)
        rc = get_optional(c, path.data, out);
    else
        *out = NULL;
    kube_buf_free(&path);
    return rc;
}

static int decode(const kube_codec *codec, const cJSON *json, kube_object **out)
{
    return codec->decode(json, out);
}

/* The VM a virt-launcher pod belongs to: its VMI owner's name (the VMI and
 * the VM share it), else the label vm.kubevirt.io/name. */
static const char *vm_of_pod(const kube_object *pod)
{
    for (uint32_t i = 0; i < pod->meta.n_owners; i++)
        if (strcmp(pod->meta.owners[i].kind, "VirtualMachineInstance") == 0)
            return pod->meta.owners[i].name;
    return kube_meta_label(&pod->meta, "vm.kubevirt.io/name");
}

/* The target is a VM, or a pod of one: f->vm and f->vm_name (and f->pod
 * for a pod). Prints what is wrong otherwise. */
static int find_vm(kctl_ctx *c, kctl_why_facts *f)
{
    cJSON *pod = NULL;
    const char *name = c->o->target, *vm;
    if (get_object(c, KCTL_KUBEVIRT_API, f->ns, "virtualmachines", name, &f->vm) != KUBE_OK)
        return KUBE_EIO;
    if (f->vm) {
        kube_strlcpy(f->vm_name, name, sizeof(f->vm_name));
        return KUBE_OK;
    }
    if (get_object(c, "/api/v1", f->ns, "pods", name, &pod) != KUBE_OK)
        return KUBE_EIO;
    if (!pod || decode(&kube_pod_codec, pod, &f->pod) != KUBE_OK) {
        fprintf(c->err,
                "Error from server (NotFound): no VirtualMachine or Pod named \"%s\" in namespace "
                "\"%s\"\n",
                name, f->ns);
        cJSON_Delete(pod);
        return KUBE_ENOTFOUND;
    }
    cJSON_Delete(pod);
    if (!(vm = vm_of_pod(f->pod))) {
        fprintf(c->err,
                "error: pod \"%s\" is not a KubeVirt VM's pod (no VirtualMachineInstance "
                "owner, no vm.kubevirt.io/name label)\n",
                name);
        return KUBE_EINVAL;
    }
    kube_strlcpy(f->vm_name, vm, sizeof(f->vm_name));
    if (get_object(c, KCTL_KUBEVIRT_API, f->ns, "virtualmachines", vm, &f->vm) != KUBE_OK)
        return KUBE_EIO;
    if (!f->vm)
        fprintf(c->err,
                "Error from server (NotFound): virtualmachines.kubevirt.io \"%s\" not found\n", vm);
    return f->vm ? KUBE_OK : KUBE_ENOTFOUND;
}

/* The VMI's existence and phase; its uid into uid (n bytes; "" when none). */
static int read_vmi(kctl_ctx *c, kctl_why_facts *f, char *uid, size_t n)
{
    cJSON *vmi = NULL;
    int rc = get_object(c, KCTL_KUBEVIRT_API, f->ns, "virtualmachineinstances", f->vm_name, &vmi);
    const char *phase = kctl_str(cJSON_GetObjectItemCaseSensitive(vmi, "status"), "phase");
    const char *u = kctl_str(cJSON_GetObjectItemCaseSensitive(vmi, "metadata"), "uid");
    f->vmi_exists = vmi != NULL;
    kube_strlcpy(f->vmi_phase, phase ? phase : "", sizeof(f->vmi_phase));
    kube_strlcpy(uid, u ? u : "", n);
    cJSON_Delete(vmi);
    return rc;
}

/* 1 when pod is a virt-launcher pod of the VM (label kubevirt.io/created-by
 * = the VMI's uid, or a VirtualMachineInstance owner of the VM's name). */
static int launcher_of(const kube_object *pod, const char *vm, const char *vmi_uid)
{
    const char *by = kube_meta_label(&pod->meta, "kubevirt.io/created-by");
    const char *owner = NULL;
    for (uint32_t i = 0; i < pod->meta.n_owners; i++)
        if (strcmp(pod->meta.owners[i].kind, "VirtualMachineInstance") == 0)
            owner = pod->meta.owners[i].name;
    return (*vmi_uid && by && strcmp(by, vmi_uid) == 0) || (owner && strcmp(owner, vm) == 0);
}

/* The newest virt-launcher pod of the VM (unless the target was one). */
static int find_launcher(kctl_ctx *c, kctl_why_facts *f, const char *vmi_uid)
{
    kube_buf path = KUBE_BUF_INIT;
    kube_response resp = {0};
    cJSON *list = NULL;
    const cJSON *it;
    if (f->pod)
        return KUBE_OK;
    int rc = kctl_object_path(&path, "/api/v1", f->ns, "pods", NULL);
    if (rc == KUBE_OK)
        rc = kctl_get_json(c, path.data, &list, &resp);
    kube_buf_free(&path);
    if (rc != KUBE_OK) {
        kctl_print_error(c->err, &resp);
        kube_response_clear(&resp);
        return rc;
    }
    kube_response_clear(&resp);
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        kube_object *p = NULL;
        if (decode(&kube_pod_codec, it, &p) != KUBE_OK)
            continue;
        if (launcher_of(p, f->vm_name, vmi_uid) &&
            (!f->pod || p->meta.creation_unix >= f->pod->meta.creation_unix)) {
            kube_object_unref(f->pod);
            f->pod = kube_object_ref(p);
        }
        kube_object_unref(p);
    }
    cJSON_Delete(list);
    return KUBE_OK;
}

/* The pinned node and what its non-terminal pods request. */
static int read_node(kctl_ctx *c, kctl_why_facts *f, const char *node)
{
    kube_buf q = KUBE_BUF_INIT;
    kube_response resp = {0};
    cJSON *json = NULL, *list = NULL;
    const cJSON *it;
    if (get_object(c, "/api/v1", NULL, "nodes", node, &json) != KUBE_OK)
        return KUBE_EIO;
    f->node_exists = json != NULL;
    int rc = json ? decode(&kube_node_codec, json, &f->node) : KUBE_OK;
    cJSON_Delete(json);
    if (!f->node_exists || rc != KUBE_OK)
        return rc;
    rc = kube_buf_puts(&q, "/api/v1/pods?fieldSelector=");
    if (rc == KUBE_OK)
        rc = kube_buf_put_escaped(&q, "spec.nodeName=");
    if (rc == KUBE_OK)
        rc = kube_buf_put_escaped(&q, node);
    if (rc == KUBE_OK && (rc = kctl_get_json(c, q.data, &list, &resp)) != KUBE_OK)
        kctl_print_error(c->err, &resp);
    kube_response_clear(&resp);
    kube_buf_free(&q);
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        kube_object *p = NULL;
        const kube_pod *pod;
        if (decode(&kube_pod_codec, it, &p) != KUBE_OK)
            continue;
        pod = kube_pod_from(p);
        if (pod && !kube_pod_is_terminal(pod) && strcmp(pod->node_name, node) == 0) {
            f->req_milli_cpu += pod->requests.milli_cpu;
            f->req_memory += pod->requests.memory;
            f->req_pods++;
        }
        kube_object_unref(p);
    }
    cJSON_Delete(list);
    return rc;
}

/* The time of an events.k8s.io/v1 Event: series.lastObservedTime,
 * eventTime, deprecatedLastTimestamp, or its creation. Borrowed. */
static const char *event_time(const cJSON *ev)
{
    const char *t = kctl_str(cJSON_GetObjectItemCaseSensitive(ev, "series"), "lastObservedTime");
    if (!t)
        t = kctl_str(ev, "eventTime");
    if (!t)
        t = kctl_str(ev, "deprecatedLastTimestamp");
    if (!t)
        t = kctl_str(cJSON_GetObjectItemCaseSensitive(ev, "metadata"), "creationTimestamp");
    return t;
}

/* 1 when a FailedScheduling note names a pin other than pin ("VM ns/name
 * is pinned to node X", the StickyVM plugin's words): written before the
 * pin moved. */
static int names_other_pin(const char *note, const char *pin)
{
    static const char marker[] = "is pinned to node ";
    const char *p = strstr(note, marker);
    size_t len;

    if (!p || !pin)
        return 0;
    p += sizeof(marker) - 1;
    len = strcspn(p, " ,;()\"");
    return len != strlen(pin) || strncmp(p, pin, len) != 0;
}

/* 1 when the FailedScheduling ev (regarding the pod) no longer explains
 * anything: the pod was bound since, the event was created before the pod
 * (both times kube-apiserver's), or it names another pin. */
static int stale_event(const kctl_why_facts *f, const cJSON *ev, const char *note)
{
    const char *created =
        kctl_str(cJSON_GetObjectItemCaseSensitive(ev, "metadata"), "creationTimestamp");
    const kube_pod *pod = kube_pod_from(f->pod);
    int64_t us;

    if (pod && *pod->node_name)
        return 1;
    if (created && kube_time_parse(created, &us) == KUBE_OK &&
        us / 1000000 < f->pod->meta.creation_unix)
        return 1;
    return names_other_pin(note, kctl_str(f->pin, "node"));
}

/* The latest FailedScheduling event regarding the pod that is not stale
 * (stale_event). */
static int read_failed_scheduling(kctl_ctx *c, kctl_why_facts *f)
{
    kube_buf path = KUBE_BUF_INIT;
    kube_response resp = {0};
    cJSON *list = NULL;
    const cJSON *it;
    int64_t best = -1;
    if (!f->pod)
        return KUBE_OK;
    int rc = kctl_object_path(&path, "/apis/events.k8s.io/v1", f->ns, "events", NULL);
    if (rc == KUBE_OK)
        rc = kctl_get_json(c, path.data, &list, &resp);
    kube_buf_free(&path);
    if (rc != KUBE_OK)
        kctl_print_error(c->err, &resp);
    kube_response_clear(&resp);
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const cJSON *reg = cJSON_GetObjectItemCaseSensitive(it, "regarding");
        const char *name = kctl_str(reg, "name"), *uid = kctl_str(reg, "uid");
        const char *reason = kctl_str(it, "reason"), *note = kctl_str(it, "note");
        const char *t = event_time(it);
        int64_t us = 0;
        if (!name || strcmp(name, f->pod->meta.name) != 0 || !reason ||
            strcmp(reason, "FailedScheduling") != 0 || !note ||
            (uid && *f->pod->meta.uid && strcmp(uid, f->pod->meta.uid) != 0) ||
            stale_event(f, it, note))
            continue;
        if (t)
            kube_time_parse(t, &us);
        if (us < best)
            continue;
        best = us;
        free(f->failed_msg);
        f->failed_msg = kube_strdup(note);
        kube_strlcpy(f->failed_at, t ? t : "", sizeof(f->failed_at));
    }
    cJSON_Delete(list);
    return rc;
}

static int gather(kctl_ctx *c, kctl_why_facts *f)
{
    char vmi_uid[128];
    int rc = find_vm(c, f);
    if (rc == KUBE_OK && !(f->pin = kctl_pin_from_vm(f->vm)))
        rc = KUBE_ENOMEM;
    if (rc == KUBE_OK)
        rc = read_vmi(c, f, vmi_uid, sizeof(vmi_uid));
    if (rc == KUBE_OK)
        rc = find_launcher(c, f, vmi_uid);
    const char *node = kctl_str(f->pin, "node");
    if (rc == KUBE_OK && node)
        rc = read_node(c, f, node);
    if (rc == KUBE_OK)
        rc = read_failed_scheduling(c, f);
    return rc;
}

int kctl_why(kctl_ctx *c)
{
    kctl_why_facts f = {.ns = c->ns};
    int rc = gather(c, &f);
    cJSON *report = rc == KUBE_OK ? kctl_why_report(c, &f) : NULL;
    if (report && c->o->output && *c->o->output)
        kctl_print_object(c->out, report, c->o->output);
    else if (report)
        kctl_why_print(c, report);
    if (rc == KUBE_ENOMEM || (rc == KUBE_OK && !report))
        fprintf(c->err, "error: out of memory\n");
    cJSON_Delete(report);
    kctl_why_facts_clear(&f);
    return report ? KCTL_EXIT_OK : KCTL_EXIT_ERROR;
}
