/*
 * kube/types/storage.c - PersistentVolume, PersistentVolumeClaim, StorageClass
 * and CSINode decoding, and the volume helpers the scheduler uses.
 */
#include "kube/types/storage.h"
#include "kube/types/storage_testing.h"

#include <string.h>

#include "kube/codec/arena.h"
#include "kube/util/errors.h"

const kube_resource KUBE_RES_PVS = {"", "v1", "persistentvolumes", "PersistentVolume", 0};
const kube_resource KUBE_RES_PVCS = {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim",
                                     1};
const kube_resource KUBE_RES_STORAGECLASSES = {"storage.k8s.io", "v1", "storageclasses",
                                               "StorageClass", 0};
const kube_resource KUBE_RES_CSINODES = {"storage.k8s.io", "v1", "csinodes", "CSINode", 0};

/* ---- shared field decoders ---- */

unsigned kube_access_mode_parse(const char *s)
{
    static const struct {
        const char *name;
        unsigned bit;
    } modes[] = {
        {"ReadWriteOnce", KUBE_ACCESS_RWO},
        {"ReadOnlyMany", KUBE_ACCESS_ROX},
        {"ReadWriteMany", KUBE_ACCESS_RWX},
        {"ReadWriteOncePod", KUBE_ACCESS_RWOP},
    };

    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
        if (strcmp(s, modes[i].name) == 0)
            return modes[i].bit;
    return 0;
}

static int access_modes_decode(const cJSON *spec, unsigned *out)
{
    const cJSON *arr, *it;
    size_t n;
    int rc = kube_json_array(spec, "accessModes", &arr, &n);

    *out = 0;
    if (rc != KUBE_OK)
        return rc;
    cJSON_ArrayForEach(it, arr)
    {
        if (!cJSON_IsString(it))
            return KUBE_EPARSE;
        *out |= kube_access_mode_parse(it->valuestring);
    }
    return KUBE_OK;
}

static int volume_mode_decode(const cJSON *spec, kube_volume_mode *out)
{
    const cJSON *v = kube_json_get(spec, "volumeMode");

    *out = KUBE_VOLUME_FILESYSTEM;
    if (!v)
        return KUBE_OK;
    if (!cJSON_IsString(v))
        return KUBE_EPARSE;
    if (strcmp(v->valuestring, "Block") == 0)
        *out = KUBE_VOLUME_BLOCK;
    return KUBE_OK;
}

/* The "storage" entry of a ResourceList member (capacity, requests). */
static int storage_quantity(const cJSON *parent, const char *key, kube_quantity *q, int *has)
{
    const cJSON *list, *v;
    int rc = kube_json_object(parent, key, &list);

    memset(q, 0, sizeof(*q));
    if (has)
        *has = 0;
    if (rc != KUBE_OK || !list)
        return rc;
    if (!(v = kube_json_get(list, "storage")))
        return KUBE_OK;
    if (has)
        *has = 1;
    return kube_quantity_from_json(v, q);
}

/* ---- PersistentVolume ---- */

static int claim_ref_decode(const cJSON *spec, kube_arena *a, const kube_claim_ref **out)
{
    const cJSON *j;
    kube_claim_ref *ref;
    int rc = kube_json_object(spec, "claimRef", &j);

    *out = NULL;
    if (rc != KUBE_OK || !j)
        return rc;
    if (!(ref = kube_arena_alloc(a, sizeof(*ref))))
        return KUBE_ENOMEM;
    if ((rc = kube_json_str(j, "namespace", a, "", &ref->namespace_)) ||
        (rc = kube_json_str(j, "name", a, "", &ref->name)) ||
        (rc = kube_json_str(j, "uid", a, "", &ref->uid)))
        return rc;
    *out = ref;
    return KUBE_OK;
}

static int pv_node_affinity_decode(const cJSON *spec, kube_arena *a, kube_pv *pv)
{
    const cJSON *na;
    int rc = kube_json_object(spec, "nodeAffinity", &na);

    if (rc != KUBE_OK || !na)
        return rc;
    return kube_node_selector_decode(kube_json_get(na, "required"), a, &pv->node_affinity);
}

/* The source we know, with its identity. */
static int pv_source_decode(const cJSON *spec, kube_arena *a, kube_pv *pv)
{
    static const struct {
        const char *key, *id;
        kube_pv_source type;
    } kinds[] = {
        {"csi", "volumeHandle", KUBE_PV_CSI},
        {"gcePersistentDisk", "pdName", KUBE_PV_GCE_PD},
        {"awsElasticBlockStore", "volumeID", KUBE_PV_AWS_EBS},
        {"azureDisk", "diskName", KUBE_PV_AZURE_DISK},
    };

    pv->driver = "";
    pv->volume_handle = "";
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        const cJSON *src = kube_json_get(spec, kinds[i].key);
        int rc;
        if (!src)
            continue;
        if (!cJSON_IsObject(src))
            return KUBE_EPARSE;
        pv->source = kinds[i].type;
        if (kinds[i].type == KUBE_PV_CSI && (rc = kube_json_str(src, "driver", a, "", &pv->driver)))
            return rc;
        return kube_json_str(src, kinds[i].id, a, "", &pv->volume_handle);
    }
    return KUBE_OK;
}

static int pv_fill(const cJSON *json, kube_arena *a, kube_object *obj)
{
    kube_pv *pv = (kube_pv *)obj;
    const cJSON *spec, *status;
    int rc;

    if ((rc = kube_json_object(json, "spec", &spec)) ||
        (rc = kube_json_object(json, "status", &status)) ||
        (rc = kube_json_str(spec, "storageClassName", a, "", &pv->storage_class)) ||
        (rc = storage_quantity(spec, "capacity", &pv->capacity, NULL)) ||
        (rc = access_modes_decode(spec, &pv->access_modes)) ||
        (rc = volume_mode_decode(spec, &pv->volume_mode)) ||
        (rc = pv_node_affinity_decode(spec, a, pv)) ||
        (rc = claim_ref_decode(spec, a, &pv->claim_ref)) ||
        (rc = kube_json_str(status, "phase", a, "", &pv->phase)))
        return rc;
    return pv_source_decode(spec, a, pv);
}

KUBE_KIND_DEFINE(pv, "PersistentVolume", kube_pv, pv_fill)

/* ---- PersistentVolumeClaim ---- */

static int pvc_fill(const cJSON *json, kube_arena *a, kube_object *obj)
{
    kube_pvc *pvc = (kube_pvc *)obj;
    const cJSON *spec, *status, *res;
    int rc;

    if ((rc = kube_json_object(json, "spec", &spec)) ||
        (rc = kube_json_object(json, "status", &status)) ||
        (rc = kube_json_object(spec, "resources", &res)) ||
        (rc = kube_json_str(spec, "storageClassName", a, "", &pvc->storage_class)) ||
        (rc = kube_json_str(spec, "volumeName", a, "", &pvc->volume_name)) ||
        (rc = access_modes_decode(spec, &pvc->access_modes)) ||
        (rc = volume_mode_decode(spec, &pvc->volume_mode)) ||
        (rc = storage_quantity(res, "requests", &pvc->request, &pvc->has_request)) ||
        (rc = kube_label_selector_decode(kube_json_get(spec, "selector"), a, &pvc->selector)))
        return rc;
    return kube_json_str(status, "phase", a, "", &pvc->phase);
}

KUBE_KIND_DEFINE(pvc, "PersistentVolumeClaim", kube_pvc, pvc_fill)

/* ---- StorageClass ---- */

static int binding_mode_decode(const cJSON *json, kube_binding_mode *out)
{
    const cJSON *v = kube_json_get(json, "volumeBindingMode");

    *out = KUBE_BINDING_UNSET;
    if (!v)
        return KUBE_OK;
    if (!cJSON_IsString(v))
        return KUBE_EPARSE;
    if (strcmp(v->valuestring, "Immediate") == 0)
        *out = KUBE_BINDING_IMMEDIATE;
    else if (strcmp(v->valuestring, "WaitForFirstConsumer") == 0)
        *out = KUBE_BINDING_WAIT_FOR_FIRST_CONSUMER;
    else
        *out = KUBE_BINDING_UNKNOWN;
    return KUBE_OK;
}

/* One TopologySelectorLabelRequirement as an In requirement. */
static int topology_req_decode(const cJSON *j, kube_arena *a, void *elem, void *ctx)
{
    kube_requirement *r = elem;
    int rc;

    r->op = KUBE_SEL_IN;
    if ((rc = kube_json_str(j, "key", a, "", &r->key)))
        return rc;
    return kube_json_strings(j, "values", a, &r->values, &r->n_values);
}

static int topology_term_decode(const cJSON *j, kube_arena *a, void *elem, void *ctx)
{
    kube_topology_term *t = elem;

    return kube_json_objects(j, "matchLabelExpressions", a, sizeof(kube_requirement),
                             topology_req_decode, NULL, (void **)&t->reqs, &t->n_reqs);
}

static int allowed_topologies_decode(const cJSON *json, kube_arena *a, kube_storage_class *sc)
{
    return kube_json_objects(json, "allowedTopologies", a, sizeof(kube_topology_term),
                             topology_term_decode, NULL, (void **)&sc->allowed_topologies,
                             &sc->n_allowed_topologies);
}

static int sc_fill(const cJSON *json, kube_arena *a, kube_object *obj)
{
    kube_storage_class *sc = (kube_storage_class *)obj;
    int rc;

    if ((rc = kube_json_str(json, "provisioner", a, "", &sc->provisioner)) ||
        (rc = binding_mode_decode(json, &sc->binding_mode)))
        return rc;
    return allowed_topologies_decode(json, a, sc);
}

KUBE_KIND_DEFINE(storage_class, "StorageClass", kube_storage_class, sc_fill)

/* ---- CSINode ---- */

static int csi_driver_decode(const cJSON *j, kube_arena *a, void *elem, void *ctx)
{
    kube_csi_driver_info *d = elem;
    const cJSON *alloc;
    int rc;

    if ((rc = kube_json_str(j, "name", a, "", &d->name)) ||
        (rc = kube_json_str(j, "nodeID", a, "", &d->node_id)) ||
        (rc = kube_json_strings(j, "topologyKeys", a, &d->topology_keys, &d->n_topology_keys)) ||
        (rc = kube_json_object(j, "allocatable", &alloc)))
        return rc;
    d->has_count = kube_json_get(alloc, "count") != NULL;
    return kube_json_int32(alloc, "count", 0, &d->count);
}

static int csi_node_fill(const cJSON *json, kube_arena *a, kube_object *obj)
{
    kube_csi_node *cn = (kube_csi_node *)obj;
    const cJSON *spec;
    int rc = kube_json_object(json, "spec", &spec);

    if (rc != KUBE_OK)
        return rc;
    return kube_json_objects(spec, "drivers", a, sizeof(kube_csi_driver_info), csi_driver_decode,
                             NULL, (void **)&cn->drivers, &cn->n_drivers);
}

KUBE_KIND_DEFINE(csi_node, "CSINode", kube_csi_node, csi_node_fill)

/* ---- helpers ---- */

const char *kube_pv_class(const kube_pv *pv)
{
    const char *beta = kube_meta_annotation(&pv->base.meta, KUBE_ANN_STORAGE_CLASS_BETA);
    return beta ? beta : pv->storage_class;
}

const char *kube_pvc_class(const kube_pvc *pvc)
{
    const char *beta = kube_meta_annotation(&pvc->base.meta, KUBE_ANN_STORAGE_CLASS_BETA);
    return beta ? beta : pvc->storage_class;
}

int kube_claim_ref_matches(const kube_claim_ref *ref, const kube_pvc *pvc)
{
    const kube_meta *m = &pvc->base.meta;

    if (!ref || strcmp(ref->name, m->name) != 0 || strcmp(ref->namespace_, m->namespace_) != 0)
        return 0;
    return ref->uid[0] == '\0' || strcmp(ref->uid, m->uid ? m->uid : "") == 0;
}

int kube_pv_node_affinity_matches(const kube_pv *pv, const kube_kv *labels, size_t n)
{
    if (!pv->node_affinity)
        return 1;
    return kube_node_selector_matches(pv->node_affinity, "", labels, n);
}

/* A term matches when each requirement's key is labelled with one of its
 * values; a requirement without values makes the selector invalid. */
static int topology_term_matches(const kube_topology_term *t, const kube_kv *labels, size_t n)
{
    for (size_t i = 0; i < t->n_reqs; i++)
        if (t->reqs[i].n_values == 0 || !kube_requirement_matches(&t->reqs[i], labels, n))
            return 0;
    return 1;
}

int kube_storage_class_allows(const kube_storage_class *sc, const kube_kv *labels, size_t n)
{
    if (sc->n_allowed_topologies == 0)
        return 1;
    for (size_t i = 0; i < sc->n_allowed_topologies; i++) {
        const kube_topology_term *t = &sc->allowed_topologies[i];
        if (t->n_reqs > 0 && topology_term_matches(t, labels, n))
            return 1;
    }
    return 0;
}

const kube_csi_driver_info *kube_csi_node_driver(const kube_csi_node *cn, const char *name)
{
    for (size_t i = 0; cn && i < cn->n_drivers; i++)
        if (strcmp(cn->drivers[i].name, name) == 0)
            return &cn->drivers[i];
    return NULL;
}
