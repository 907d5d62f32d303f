/*
 * kube/types/kubevirt.c - VirtualMachine and VirtualMachineInstance decoding.
 */
#include "kube/types/kubevirt.h"

#include "kube/codec/arena.h"
#include "kube/util/errors.h"

static int vm_fill(const cJSON *json, kube_arena *a, kube_object *obj)
{
    kube_vm *vm = (kube_vm *)obj;
    const cJSON *spec, *tmpl, *tspec;
    int rc;

    if ((rc = kube_json_object(json, "spec", &spec)) ||
        (rc = kube_json_object(spec, "template", &tmpl)) ||
        (rc = kube_json_object(tmpl, "spec", &tspec)) ||
        (rc = kube_json_str(tspec, "schedulerName", a, NULL, &vm->template_scheduler_name)) ||
        (rc = kube_json_bool(spec, "running", -1, &vm->running)))
        return rc;
    return kube_json_str(spec, "runStrategy", a, NULL, &vm->run_strategy);
}

static int decode_migration(const cJSON *status, kube_arena *a, kube_vmi *vmi)
{
    const cJSON *ms;
    kube_vmi_migration_state *m;
    int rc = kube_json_object(status, "migrationState", &ms);

    if (rc != KUBE_OK || !ms)
        return rc;
    if (!(m = kube_arena_alloc(a, sizeof(*m))))
        return KUBE_ENOMEM;
    if ((rc = kube_json_str(ms, "targetNode", a, "", &m->target_node)) ||
        (rc = kube_json_str(ms, "sourceNode", a, "", &m->source_node)) ||
        (rc = kube_json_str(ms, "migrationUid", a, "", &m->migration_uid)) ||
        (rc = kube_json_bool(ms, "completed", 0, &m->completed)) ||
        (rc = kube_json_bool(ms, "failed", 0, &m->failed)))
        return rc;
    vmi->migration = m;
    return KUBE_OK;
}

static int vmi_fill(const cJSON *json, kube_arena *a, kube_object *obj)
{
    kube_vmi *vmi = (kube_vmi *)obj;
    const cJSON *status;
    int rc;

    if ((rc = kube_json_object(json, "status", &status)) ||
        (rc = kube_json_str(status, "nodeName", a, "", &vmi->node_name)) ||
        (rc = kube_json_str(status, "phase", a, "", &vmi->phase)))
        return rc;
    return decode_migration(status, a, vmi);
}

static int vm_decode(const cJSON *json, kube_object **out)
{
    return kube_object_build(&kube_vm_codec, sizeof(kube_vm), json, vm_fill, out);
}

static int vmi_decode(const cJSON *json, kube_object **out)
{
    return kube_object_build(&kube_vmi_codec, sizeof(kube_vmi), json, vmi_fill, out);
}

const kube_codec kube_vm_codec = {"VirtualMachine", vm_decode, kube_object_free_block};
const kube_codec kube_vmi_codec = {"VirtualMachineInstance", vmi_decode, kube_object_free_block};

const kube_vm *kube_vm_from(const kube_object *obj)
{
    return obj && obj->codec == &kube_vm_codec ? (const kube_vm *)obj : NULL;
}

const kube_vmi *kube_vmi_from(const kube_object *obj)
{
    return obj && obj->codec == &kube_vmi_codec ? (const kube_vmi *)obj : NULL;
}
