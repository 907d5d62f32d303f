/*
 * tests/emulator/storage_kinds.c - the storage and policy kinds the
 * scheduler's volume and preemption plugins watch, and a small PV
 * controller so that volume binding completes as in a real cluster.
 *
 * Kinds (a plug-in: registered from a constructor, added in init()):
 *   v1 persistentvolumes (cluster-scoped, /status), v1
 *   persistentvolumeclaims (/status), storage.k8s.io/v1 storageclasses and
 *   csinodes, policy/v1 poddisruptionbudgets (/status). Creates get the API
 *   server's defaults: PV persistentVolumeReclaimPolicy Retain, volumeMode
 *   Filesystem, status.phase Pending; PVC volumeMode Filesystem,
 *   status.phase Pending; StorageClass reclaimPolicy Delete,
 *   volumeBindingMode Immediate.
 *
 * PV controller (one thread, woken by every store change), a subset of
 * kube-controller-manager's persistentvolume controller:
 *   - a PV without claimRef in phase Pending becomes Available;
 *   - a PV whose claimRef names an existing claim (uid empty or equal) gets
 *     the claim's uid and phase Bound, and the claim gets spec.volumeName,
 *     the annotations pv.kubernetes.io/bind-completed (and
 *     bound-by-controller when the controller chose the volume),
 *     status.phase Bound, status.accessModes and status.capacity - this is
 *     how the scheduler's PreBind (claimRef written on the PV) completes;
 *   - a claim pre-bound by spec.volumeName to a PV without claimRef binds;
 *   - an unbound claim of an Immediate class (or without class) binds to
 *     the smallest Available PV of its class that fits;
 *   - an unbound claim annotated volume.kubernetes.io/selected-node whose
 *     class has a provisioner is provisioned: a PV "pvc-<claim uid>" of the
 *     requested size with node affinity kubernetes.io/hostname In [node],
 *     pre-bound to the claim.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"
#include "kube/util/array.h"
#include "kube/util/log.h"
#include "kube/codec/quantity.h"

static const char *const top_order[] = {"kind", "apiVersion", "metadata", "spec", "status", NULL};

static const emu_resource_def defs[] = {
    {"", "v1", "persistentvolumes", "persistentvolume", "PersistentVolume", "PersistentVolumeList",
     "pv", NULL, 0, 1, 0, NULL},
    {"", "v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim",
     "PersistentVolumeClaimList", "pvc", NULL, 1, 1, 0, NULL},
    {"storage.k8s.io", "v1", "storageclasses", "storageclass", "StorageClass", "StorageClassList",
     "sc", NULL, 0, 0, 0, NULL},
    {"storage.k8s.io", "v1", "csinodes", "csinode", "CSINode", "CSINodeList", NULL, NULL, 0, 0, 0,
     NULL},
    {"policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget",
     "PodDisruptionBudgetList", "pdb", NULL, 1, 1, 0, NULL},
};
enum { K_PV, K_PVC, K_SC, K_CSINODE, K_PDB, K_COUNT };

static emu_resource *g_res[K_COUNT];

/* ------------------------------------------------------------------ */
/* Defaults on create                                                  */
/* ------------------------------------------------------------------ */

static void default_str(cJSON *obj, const char *key, const char *value)
{
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(obj, key)))
        emu_json_put_str(obj, key, value);
}

static int pv_create(emu_resource *r, cJSON *obj, cJSON **st)
{
    cJSON *spec = emu_json_obj(obj, "spec");

    default_str(spec, "persistentVolumeReclaimPolicy", "Retain");
    default_str(spec, "volumeMode", "Filesystem");
    emu_json_put_str(emu_json_obj(obj, "status"), "phase", "Pending");
    return KUBE_OK;
}

static int pvc_create(emu_resource *r, cJSON *obj, cJSON **st)
{
    default_str(emu_json_obj(obj, "spec"), "volumeMode", "Filesystem");
    emu_json_put_str(emu_json_obj(obj, "status"), "phase", "Pending");
    return KUBE_OK;
}

static int sc_create(emu_resource *r, cJSON *obj, cJSON **st)
{
    default_str(obj, "reclaimPolicy", "Delete");
    default_str(obj, "volumeBindingMode", "Immediate");
    return KUBE_OK;
}

static const emu_kind_ops pv_ops = {.on_create = pv_create, .order = top_order};
static const emu_kind_ops pvc_ops = {.on_create = pvc_create, .order = top_order};
static const emu_kind_ops sc_ops = {.on_create = sc_create};
static const emu_kind_ops plain_ops = {.order = top_order};
static const emu_kind_ops *const kind_ops[K_COUNT] = {&pv_ops, &pvc_ops, &sc_ops, &plain_ops,
                                                      &plain_ops};

/* ------------------------------------------------------------------ */
/* A snapshot of the storage objects, for one reconcile pass           */
/* ------------------------------------------------------------------ */

typedef struct objs {
    cJSON **v;
    size_t n, cap;
} objs;

static int collect(void *ctx, const cJSON *obj)
{
    objs *o = ctx;
    if (KUBE_ARRAY_RESERVE(o->v, o->cap, o->n + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    if (!(o->v[o->n] = cJSON_Duplicate(obj, 1)))
        return KUBE_ENOMEM;
    o->n++;
    return 0;
}

static void objs_free(objs *o)
{
    for (size_t i = 0; i < o->n; i++)
        cJSON_Delete(o->v[i]);
    free(o->v);
    memset(o, 0, sizeof(*o));
}

static const char *str_at(const cJSON *j, const char *path)
{
    const char *s = emu_json_str(j, path);
    return s ? s : "";
}

static cJSON *find_obj(const objs *o, const char *ns, const char *name)
{
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(str_at(o->v[i], "metadata.name"), name) &&
            (!ns || !strcmp(str_at(o->v[i], "metadata.namespace"), ns)))
            return o->v[i];
    return NULL;
}

static const char *annotation(const cJSON *obj, const char *key)
{
    const cJSON *ann = emu_json_at(obj, "metadata.annotations");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(ann, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A storage quantity at path ("spec.capacity" + storage), zero if absent. */
static kube_quantity storage_at(const cJSON *obj, const char *path)
{
    kube_quantity q = {0, 0};
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(emu_json_at(obj, path), "storage");
    if (v)
        kube_quantity_from_json(v, &q);
    return q;
}

static const char *class_of(const cJSON *obj)
{
    const char *beta = annotation(obj, "volume.beta.kubernetes.io/storage-class");
    return beta ? beta : str_at(obj, "spec.storageClassName");
}

/* ------------------------------------------------------------------ */
/* Writes                                                              */
/* ------------------------------------------------------------------ */

typedef int (*mutate_fn)(cJSON *obj, const void *arg); /* 1 changed, 0 no-op */

typedef struct write_ctx {
    mutate_fn fn;
    const void *arg;
    emu_resource *r;
} write_ctx;

static int write_fn(void *ctx, cJSON *cur, int64_t rv, cJSON **next, int *del, int *again,
                    cJSON **st)
{
    write_ctx *w = ctx;

    if (!cur)
        return KUBE_ENOTFOUND;
    if (w->fn(cur, w->arg) <= 0) {
        cJSON_Delete(cur);
        return KUBE_OK; /* no-op */
    }
    emu_normalize(w->r, cur);
    *next = cur;
    return KUBE_OK;
}

static void write_obj(emu_server *s, int kind, const cJSON *obj, mutate_fn fn, const void *arg)
{
    write_ctx w = {fn, arg, g_res[kind]};
    const char *ns = kind == K_PVC ? str_at(obj, "metadata.namespace") : NULL;
    emu_obj *out = NULL;
    cJSON *st = NULL;

    if (emu_store_write(s->store, g_res[kind], ns, str_at(obj, "metadata.name"), write_fn, &w, &out,
                        &st) == KUBE_OK)
        emu_obj_unref(out);
    cJSON_Delete(st);
}

static int set_phase(cJSON *obj, const void *arg)
{
    if (!strcmp(str_at(obj, "status.phase"), arg))
        return 0;
    emu_json_put_str(emu_json_obj(obj, "status"), "phase", arg);
    return 1;
}

/* PV: claimRef to the claim (uid filled) and phase Bound, unless the PV is
 * bound to another claim meanwhile. */
static int bind_pv(cJSON *pv, const void *arg)
{
    const cJSON *pvc = arg;
    const char *uid = str_at(pvc, "metadata.uid");
    cJSON *ref = emu_json_at(pv, "spec.claimRef");
    int changed = 0;

    if (ref && (strcmp(str_at(ref, "name"), str_at(pvc, "metadata.name")) ||
                strcmp(str_at(ref, "namespace"), str_at(pvc, "metadata.namespace")) ||
                (*str_at(ref, "uid") && strcmp(str_at(ref, "uid"), uid))))
        return 0;
    if (!ref) {
        ref = emu_json_obj(emu_json_obj(pv, "spec"), "claimRef");
        emu_json_put_str(ref, "kind", "PersistentVolumeClaim");
        emu_json_put_str(ref, "namespace", str_at(pvc, "metadata.namespace"));
        emu_json_put_str(ref, "name", str_at(pvc, "metadata.name"));
        emu_json_put_str(ref, "apiVersion", "v1");
        changed = 1;
    }
    if (strcmp(str_at(ref, "uid"), uid)) {
        emu_json_put_str(ref, "uid", uid);
        changed = 1;
    }
    return set_phase(pv, "Bound") || changed;
}

static void put_annotation(cJSON *obj, const char *key, const char *value)
{
    emu_json_put_str(emu_json_obj(emu_json_obj(obj, "metadata"), "annotations"), key, value);
}

/* PVC: volumeName, annotations, status Bound with the PV's modes and
 * capacity, unless pre-bound to another volume. */
static int bind_pvc(cJSON *pvc, const void *arg)
{
    const cJSON *pv = arg;
    const char *pv_name = str_at(pv, "metadata.name");
    const char *vol = str_at(pvc, "spec.volumeName");
    cJSON *status;

    if (*vol && strcmp(vol, pv_name))
        return 0;
    if (!strcmp(str_at(pvc, "status.phase"), "Bound") &&
        annotation(pvc, "pv.kubernetes.io/bind-completed"))
        return 0;
    if (!*vol) {
        emu_json_put_str(emu_json_obj(pvc, "spec"), "volumeName", pv_name);
        put_annotation(pvc, "pv.kubernetes.io/bound-by-controller", "yes");
    }
    put_annotation(pvc, "pv.kubernetes.io/bind-completed", "yes");
    status = emu_json_obj(pvc, "status");
    emu_json_put_str(status, "phase", "Bound");
    emu_json_put(status, "accessModes", cJSON_Duplicate(emu_json_at(pv, "spec.accessModes"), 1));
    emu_json_put(status, "capacity", cJSON_Duplicate(emu_json_at(pv, "spec.capacity"), 1));
    return 1;
}

/* ------------------------------------------------------------------ */
/* Reconcile                                                           */
/* ------------------------------------------------------------------ */

typedef struct snapshot {
    objs pv, pvc, sc;
} snapshot;

static int claim_matches(const cJSON *ref, const cJSON *pvc)
{
    const char *uid = str_at(ref, "uid");
    return *uid == '\0' || !strcmp(uid, str_at(pvc, "metadata.uid"));
}

static int pvc_fully_bound(const cJSON *pvc, const char *pv_name)
{
    return !strcmp(str_at(pvc, "spec.volumeName"), pv_name) &&
           !strcmp(str_at(pvc, "status.phase"), "Bound") &&
           annotation(pvc, "pv.kubernetes.io/bind-completed");
}

/* A claim pre-bound (spec.volumeName) to this unclaimed PV, or NULL. */
static const cJSON *prebound_claim(const snapshot *sn, const char *pv_name)
{
    for (size_t i = 0; i < sn->pvc.n; i++)
        if (!strcmp(str_at(sn->pvc.v[i], "spec.volumeName"), pv_name))
            return sn->pvc.v[i];
    return NULL;
}

static void sync_pv(emu_server *s, const snapshot *sn, const cJSON *pv)
{
    const cJSON *ref = emu_json_at(pv, "spec.claimRef");
    const char *name = str_at(pv, "metadata.name");
    const cJSON *pvc;

    if (!ref) {
        if ((pvc = prebound_claim(sn, name)))
            write_obj(s, K_PV, pv, bind_pv, pvc);
        else if (!strcmp(str_at(pv, "status.phase"), "Pending") || !*str_at(pv, "status.phase"))
            write_obj(s, K_PV, pv, set_phase, "Available");
        return;
    }
    pvc = find_obj(&sn->pvc, str_at(ref, "namespace"), str_at(ref, "name"));
    if (!pvc || !claim_matches(ref, pvc))
        return;
    if (strcmp(str_at(pv, "status.phase"), "Bound") || !*str_at(ref, "uid"))
        write_obj(s, K_PV, pv, bind_pv, pvc);
    if (!pvc_fully_bound(pvc, name))
        write_obj(s, K_PVC, pvc, bind_pvc, pv);
}

/* Access modes of the claim all offered by the PV. */
static int modes_fit(const cJSON *pvc, const cJSON *pv)
{
    const cJSON *m, *pm;
    cJSON_ArrayForEach(m, emu_json_at(pvc, "spec.accessModes"))
    {
        int found = 0;
        cJSON_ArrayForEach(pm, emu_json_at(pv, "spec.accessModes")) found |=
            cJSON_IsString(m) && cJSON_IsString(pm) && !strcmp(m->valuestring, pm->valuestring);
        if (!found)
            return 0;
    }
    return 1;
}

/* The smallest Available, unclaimed PV of the claim's class that fits. */
static const cJSON *match_pv(const snapshot *sn, const cJSON *pvc)
{
    kube_quantity want = storage_at(pvc, "spec.resources.requests"), best_q = {0, 0};
    const cJSON *best = NULL;

    for (size_t i = 0; i < sn->pv.n; i++) {
        const cJSON *pv = sn->pv.v[i];
        kube_quantity q = storage_at(pv, "spec.capacity");
        if (emu_json_at(pv, "spec.claimRef") || strcmp(str_at(pv, "status.phase"), "Available") ||
            strcmp(class_of(pv), class_of(pvc)) || kube_quantity_cmp(&q, &want) < 0 ||
            !modes_fit(pvc, pv))
            continue;
        if (!best || kube_quantity_cmp(&q, &best_q) < 0) {
            best = pv;
            best_q = q;
        }
    }
    return best;
}

/* Creates the provisioned PV of a claim with a selected node. */
static void provision(emu_server *s, const cJSON *pvc, const char *provisioner, const char *node)
{
    cJSON *pv = cJSON_CreateObject(), *meta, *spec, *ref, *expr, *vals;
    char name[96];

    snprintf(name, sizeof(name), "pvc-%s", str_at(pvc, "metadata.uid"));
    if (!pv)
        return;
    cJSON_AddStringToObject(pv, "apiVersion", "v1");
    cJSON_AddStringToObject(pv, "kind", "PersistentVolume");
    meta = cJSON_AddObjectToObject(pv, "metadata");
    cJSON_AddStringToObject(meta, "name", name);
    put_annotation(pv, "pv.kubernetes.io/provisioned-by", provisioner);
    spec = cJSON_AddObjectToObject(pv, "spec");
    cJSON_AddItemToObject(spec, "accessModes",
                          cJSON_Duplicate(emu_json_at(pvc, "spec.accessModes"), 1));
    cJSON_AddItemToObject(
        cJSON_AddObjectToObject(spec, "capacity"), "storage",
        cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(
                            emu_json_at(pvc, "spec.resources.requests"), "storage"),
                        1));
    cJSON_AddStringToObject(spec, "storageClassName", class_of(pvc));
    cJSON_AddStringToObject(spec, "persistentVolumeReclaimPolicy", "Delete");
    cJSON_AddItemToObject(spec, "hostPath", cJSON_CreateObject());
    cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(spec, "hostPath"), "path", "/tmp");
    ref = cJSON_AddObjectToObject(spec, "claimRef");
    cJSON_AddStringToObject(ref, "kind", "PersistentVolumeClaim");
    cJSON_AddStringToObject(ref, "namespace", str_at(pvc, "metadata.namespace"));
    cJSON_AddStringToObject(ref, "name", str_at(pvc, "metadata.name"));
    cJSON_AddStringToObject(ref, "uid", str_at(pvc, "metadata.uid"));
    cJSON_AddStringToObject(ref, "apiVersion", "v1");
    expr = cJSON_CreateObject();
    cJSON_AddStringToObject(expr, "key", "kubernetes.io/hostname");
    cJSON_AddStringToObject(expr, "operator", "In");
    vals = cJSON_AddArrayToObject(expr, "values");
    cJSON_AddItemToArray(vals, cJSON_CreateString(node));
    cJSON *terms = cJSON_AddArrayToObject(
        cJSON_AddObjectToObject(cJSON_AddObjectToObject(spec, "nodeAffinity"), "required"),
        "nodeSelectorTerms");
    cJSON *term = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(term, "matchExpressions"), expr);
    cJSON_AddItemToArray(terms, term);
    emu_store_create(s, g_res[K_PV], NULL, pv, NULL, NULL);
    cJSON_Delete(pv);
}

/* A PV (any phase) already claiming this claim. */
static int claimed(const snapshot *sn, const cJSON *pvc)
{
    for (size_t i = 0; i < sn->pv.n; i++) {
        const cJSON *ref = emu_json_at(sn->pv.v[i], "spec.claimRef");
        if (ref && !strcmp(str_at(ref, "name"), str_at(pvc, "metadata.name")) &&
            !strcmp(str_at(ref, "namespace"), str_at(pvc, "metadata.namespace")))
            return 1;
    }
    return 0;
}

static void sync_unbound_pvc(emu_server *s, const snapshot *sn, const cJSON *pvc)
{
    const cJSON *sc = find_obj(&sn->sc, NULL, class_of(pvc));
    const char *mode = sc ? str_at(sc, "volumeBindingMode") : "Immediate";
    const char *provisioner = sc ? str_at(sc, "provisioner") : "";
    const char *node = annotation(pvc, "volume.kubernetes.io/selected-node");
    const cJSON *pv;

    if (*str_at(pvc, "spec.volumeName") || claimed(sn, pvc))
        return;
    if (node && *provisioner && strcmp(provisioner, "kubernetes.io/no-provisioner"))
        provision(s, pvc, provisioner, node);
    else if (!strcmp(mode, "Immediate") && (pv = match_pv(sn, pvc)))
        write_obj(s, K_PV, pv, bind_pv, pvc);
}

static void reconcile(emu_server *s)
{
    snapshot sn;

    memset(&sn, 0, sizeof(sn));
    if (emu_store_each(s, g_res[K_PV], NULL, collect, &sn.pv) == KUBE_OK &&
        emu_store_each(s, g_res[K_PVC], NULL, collect, &sn.pvc) == KUBE_OK &&
        emu_store_each(s, g_res[K_SC], NULL, collect, &sn.sc) == KUBE_OK) {
        for (size_t i = 0; i < sn.pv.n; i++)
            sync_pv(s, &sn, sn.pv.v[i]);
        for (size_t i = 0; i < sn.pvc.n; i++)
            sync_unbound_pvc(s, &sn, sn.pvc.v[i]);
    }
    objs_free(&sn.pv);
    objs_free(&sn.pvc);
    objs_free(&sn.sc);
}

/* ------------------------------------------------------------------ */
/* The controller thread and the plug-in                               */
/* ------------------------------------------------------------------ */

static pthread_t g_thread;
static atomic_int g_stop;
static int g_started;

static void *controller(void *arg)
{
    emu_server *s = arg;
    int64_t seen = -1;

    while (!atomic_load(&g_stop)) {
        int64_t rv = emu_store_rv(s->store);
        if (rv != seen) {
            seen = rv;
            reconcile(s);
            continue;
        }
        emu_store_wait(s->store, seen, 200);
    }
    return NULL;
}

static int init(emu_server *s)
{
    for (int k = 0; k < K_COUNT; k++) {
        int rc = emu_store_add_resource(s->store, &defs[k], kind_ops[k], &g_res[k]);
        if (rc != KUBE_OK)
            return rc;
    }
    if (pthread_create(&g_thread, NULL, controller, s) != 0)
        return KUBE_ENOMEM;
    g_started = 1;
    return KUBE_OK;
}

static void fini(emu_server *s)
{
    if (!g_started)
        return;
    atomic_store(&g_stop, 1);
    pthread_join(g_thread, NULL);
    g_started = 0;
}

static const emu_plugin plugin = {.name = "storage", .init = init, .fini = fini};

__attribute__((constructor)) static void register_plugin(void)
{
    emu_plugin_register(&plugin);
}
