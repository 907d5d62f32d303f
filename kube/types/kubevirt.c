/*
 * kube/types/kubevirt.c - VirtualMachine and VirtualMachineInstance decoding.
 */
#include "kube/types/kubevirt.h"

#include "kube/codec/arena.h"
#include "kube/types/localvolumes.h"
#include "kube/util/errors.h"

/* The claims of vm_json or vmi_json (one of them), copied into the arena. */
static int decode_claims(const cJSON *vm_json, const cJSON *vmi_json, kube_arena *a,
                         const kube_vm_claim **out, uint32_t *n)
{
    kube_vm_claims cl = {.n = 0};
    kube_vm_claim *items;

    kube_vm_claims_collect(vm_json, vmi_json, &cl);
    if (cl.n == 0)
        return KUBE_OK;
    if (!(items = kube_arena_alloc(a, cl.n * sizeof(*items))))
        return KUBE_ENOMEM;
    for (size_t i = 0; i < cl.n; i++)
        if (!(items[i].volume = kube_arena_str(a, cl.items[i].volume)) ||
            !(items[i].claim = kube_arena_str(a, cl.items[i].claim)))
            return KUBE_ENOMEM;
    *out = items;
    *n = (uint32_t)cl.n;
    return KUBE_OK;
}

static int vm_fill(const cJSON *json, kube_arena *a, kube_object *obj)
{
    kube_vm *vm = (kube_vm *)obj;
    const cJSON *spec, *tmpl, *tspec;
    int rc;

    if ((rc = kube_json_object(json, "spec", &spec)) ||
        (rc = kube_json_object(spec, "template", &tmpl)) ||
        (rc = kube_json_object(tmpl, "spec", &tspec)) ||
        (rc = kube_json_str(tspec, "schedulerName", a, NULL, &vm->template_scheduler_name)) ||
        (rc = kube_json_bool(spec, "running", -1, &vm->running)) ||
        (rc = kube_json_str(spec, "runStrategy", a, NULL, &vm->run_strategy)))
        return rc;
    return decode_claims(json, NULL, a, &vm->claims, &vm->n_claims);
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
        (rc = kube_json_str(status, "phase", a, "", &vmi->phase)) ||
        (rc = decode_migration(status, a, vmi)))
        return rc;
    return decode_claims(NULL, json, a, &vmi->claims, &vmi->n_claims);
}

KUBE_KIND_DEFINE(vm, "VirtualMachine", kube_vm, vm_fill)
KUBE_KIND_DEFINE(vmi, "VirtualMachineInstance", kube_vmi, vmi_fill)
