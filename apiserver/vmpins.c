/*
 * apiserver/vmpins.c - virtualmachinepins served from the VM, Node and Pod
 * listers of the app's informer factory: the listers and the watchers, the request's
 * parameters, the selection from the store, and the answer. The contract
 * is in vmpins.h; the rendering is in vmpins_render.c.
 */
#include "vmpins.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/machinery/factory.h"
#include "kube/types/pin.h"
#include "kube/types/pod.h"
#include "kube/util/array.h"
#include "kube/util/strmap.h"
#include "kube/serving/query.h"
#include "kube/util/errors.h"
#include "kube/util/rand.h"
#include "kube/util/flags.h"
#include "status.h"
#include "vmpins_watch.h"

#define SYNC_WAIT_MS 10000
#define CT_JSON "application/json"
#define MIN_REQUEST_TIMEOUT_S 1800 /* kube-apiserver's --min-request-timeout */

struct apis_vmpins {
    kube_factory *informers; /* the app's (borrowed) */
    kube_lister *vms;
    kube_lister *nodes;
    kube_lister *pods;
    apis_vmwatch *watch;
    char *key;
    apis_vmpins_world world; /* the pin key and the two listers */
};

/* ---- the world a VirtualMachinePin reads ---- */

static kube_object *world_node(void *ud, const char *name)
{
    const apis_vmpins *v = ud;

    return kube_lister_get(v->nodes, "", name);
}

/* The VM (name, in the pod's namespace) whose virt-launcher pod p is: its
 * controller is the VirtualMachineInstance KubeVirt names after the VM
 * (whose controller is that VM). NULL for any other pod, and for one that
 * ended. */
static const char *launched_vm(const kube_pod *p)
{
    const kube_owner_ref *c = p ? kube_meta_controller(&p->base.meta) : NULL;

    if (!c || strcmp(c->kind, "VirtualMachineInstance") != 0 || kube_pod_is_terminal(p))
        return NULL;
    return c->name;
}

/* 1 when p is the VM's current pod rather than best: the Running one,
 * else the newest (a migration's target is Pending beside its Running
 * source). */
static int better_pod(const kube_pod *p, const kube_pod *best)
{
    if (!best)
        return 1;
    if (strcmp(best->phase, "Running") == 0)
        return 0;
    return strcmp(p->phase, "Running") == 0 ||
           p->base.meta.creation_unix > best->base.meta.creation_unix;
}

/* One VM's pods, and the current one so far (a reference). */
typedef struct pod_pick {
    const kube_vm *vm;
    kube_object *best;
} pod_pick;

static void pick_pod(void *ud, kube_object *obj)
{
    pod_pick *pp = ud;
    const kube_pod *p = kube_pod_from(obj);
    const char *vm = launched_vm(p);

    if (!vm || strcmp(vm, pp->vm->base.meta.name) != 0 ||
        strcmp(p->base.meta.namespace_, pp->vm->base.meta.namespace_) != 0 ||
        !better_pod(p, kube_pod_from(pp->best)))
        return;
    kube_object_unref(pp->best);
    pp->best = kube_object_ref(obj);
}

/* One pass over the pods (a watch event's one row). */
static kube_object *world_pod(void *ud, const kube_vm *vm)
{
    const apis_vmpins *v = ud;
    pod_pick pp = {vm, NULL};

    kube_lister_foreach(v->pods, pick_pod, &pp);
    return pp.best;
}

/* The current pod of every VM, by "namespace/name" (references): a Table
 * of n rows reads the pods once, not n times. */
typedef struct pod_index {
    const apis_vmpins *v;
    kube_strmap by_vm;
    int rc;
} pod_index;

static void index_pod(void *ud, kube_object *obj)
{
    pod_index *ix = ud;
    const kube_pod *p = kube_pod_from(obj);
    const char *vm = launched_vm(p);
    char key[512];
    void *old = NULL;

    if (ix->rc != KUBE_OK || !vm)
        return;
    snprintf(key, sizeof(key), "%s/%s", p->base.meta.namespace_, vm);
    if (!better_pod(p, kube_pod_from(kube_strmap_get(&ix->by_vm, key))))
        return;
    ix->rc = kube_strmap_put(&ix->by_vm, key, kube_object_ref(obj), &old);
    kube_object_unref(ix->rc == KUBE_OK ? old : obj);
}

static kube_object *indexed_pod(void *ud, const kube_vm *vm)
{
    const pod_index *ix = ud;
    char key[512];

    snprintf(key, sizeof(key), "%s/%s", vm->base.meta.namespace_, vm->base.meta.name);
    return kube_object_ref(kube_strmap_get(&ix->by_vm, key));
}

static kube_object *indexed_node(void *ud, const char *name)
{
    const pod_index *ix = ud;

    return world_node((void *)ix->v, name);
}

static void unref_pod(void *ud, const char *key, void *value)
{
    (void)ud;
    (void)key;
    kube_object_unref(value);
}

static void pod_index_free(pod_index *ix)
{
    kube_strmap_foreach(&ix->by_vm, unref_pod, NULL);
    kube_strmap_free(&ix->by_vm);
}

/* The Node and Pod listers; the Node handlers feed the watchers. */
static int open_listers(apis_vmpins *v, kube_factory *f)
{
    kube_informer_options no = {.resource = &KUBE_RES_NODES, .codec = &kube_node_codec};
    kube_informer_options po = {.resource = &KUBE_RES_PODS, .codec = &kube_pod_codec};
    kube_informer_handlers h = apis_vmwatch_node_handlers(v->watch);
    int rc = kube_factory_lister(f, &no, &v->nodes);

    if (rc == KUBE_OK)
        rc = kube_lister_add_handlers(v->nodes, &h);
    if (rc == KUBE_OK)
        rc = kube_factory_lister(f, &po, &v->pods);
    return rc;
}

int apis_vmpins_new(kube_factory *f, const char *key, apis_vmpins **out)
{
    apis_vmpins *v = calloc(1, sizeof(*v));
    kube_informer_options io = {.resource = &KUBE_RES_VMS, .codec = &kube_vm_codec};
    kube_informer_handlers h;
    int rc;

    *out = NULL;
    if (!v || !(v->key = kube_strdup(key ? key : KUBE_PIN_DEFAULT_KEY))) {
        free(v);
        return KUBE_ENOMEM;
    }
    v->informers = f;
    v->world = (apis_vmpins_world){v->key, world_node, world_pod, v};
    rc = apis_vmwatch_new(&v->world, &v->watch);
    if (rc == KUBE_OK)
        rc = kube_factory_lister(f, &io, &v->vms);
    if (rc == KUBE_OK)
        rc = open_listers(v, f);
    if (rc == KUBE_OK) {
        h = apis_vmwatch_handlers(v->watch);
        rc = kube_lister_add_handlers(v->vms, &h);
    }
    if (rc != KUBE_OK) {
        apis_vmpins_free(v);
        return rc;
    }
    apis_vmwatch_set_listers(v->watch, v->vms, v->nodes);
    *out = v;
    return KUBE_OK;
}

void apis_vmpins_free(apis_vmpins *v)
{
    if (!v)
        return;
    apis_vmwatch_free(v->watch);
    free(v->key);
    free(v);
}

/* ---- one request ---- */

/* The VMs one request selects, and what selects them. */
typedef struct selection {
    const apis_vmpins *v;
    const apis_route *r;
    const apis_vmpins_filter *f;
    kube_object **items;
    size_t n, cap;
    int rc;
} selection;

/* kube_informer_foreach() callback: keeps (a reference to) a VM of the
 * route's namespace that the filter selects; out of memory stops it. */
static void select_one(void *ud, kube_object *obj)
{
    selection *s = ud;
    const kube_vm *vm = kube_vm_from(obj);

    if (s->rc != KUBE_OK || !vm)
        return;
    if (s->r->namespace_[0] && strcmp(vm->base.meta.namespace_, s->r->namespace_) != 0)
        return;
    if (!apis_vmpins_filter_matches(s->f, vm, &s->v->world))
        return;
    if ((s->rc = KUBE_ARRAY_RESERVE(s->items, s->cap, s->n + 1)) == KUBE_OK)
        s->items[s->n++] = kube_object_ref(obj);
}

/* etcd's order: namespace, then name. */
static int by_key(const void *a, const void *b)
{
    const kube_meta *x = &(*(kube_object *const *)a)->meta, *y = &(*(kube_object *const *)b)->meta;
    int c = strcmp(x->namespace_, y->namespace_);

    return c ? c : strcmp(x->name, y->name);
}

/* Drops the references taken and the array. */
static void selection_free(selection *s)
{
    for (size_t i = 0; i < s->n; i++)
        kube_object_unref(s->items[i]);
    free(s->items);
}

/* Replaces body with a Status; returns code (500 when out of memory). */
static int status(kube_buf *body, int code, const char *reason, const char *msg,
                  const kube_status_details *d)
{
    kube_buf_reset(body);
    return kube_status_json(body, code, reason, msg, d) == KUBE_OK ? code : 500;
}

/* Renders the selection (VMPIN: the one VM, or 404). */
static int answer(const apis_vmpins *v, const apis_route *r, selection *s,
                  const apis_vmpins_format *f, kube_buf *body)
{
    kube_status_details d = {.name = r->name, .group = APIS_GROUP, .kind = "virtualmachinepins"};
    pod_index ix = {.v = v, .by_vm = KUBE_STRMAP_INIT, .rc = KUBE_OK};
    apis_vmpins_world world = {v->key, indexed_node, indexed_pod, &ix};
    char rv[64], msg[512];
    int rc;

    if (r->kind == APIS_ROUTE_VMPIN && s->n == 0) {
        snprintf(msg, sizeof(msg), "virtualmachinepins." APIS_GROUP " \"%s\" not found", r->name);
        return status(body, 404, "NotFound", msg, &d);
    }
    if (s->n > 1)
        qsort(s->items, s->n, sizeof(*s->items), by_key);
    if (r->kind == APIS_ROUTE_VMPIN)
        kube_strlcpy(rv,
                     s->items[0]->meta.resource_version ? s->items[0]->meta.resource_version : "",
                     sizeof(rv));
    else
        kube_lister_last_rv(v->vms, rv, sizeof(rv));
    if (f->table_version) /* the Pod column */
        kube_lister_foreach(v->pods, index_pod, &ix);
    rc = ix.rc;
    if (rc == KUBE_OK)
        rc = apis_vmpins_render((const kube_vm *const *)s->items, s->n, r->kind == APIS_ROUTE_VMPIN,
                                &world, rv, f, (int64_t)time(NULL), body);
    pod_index_free(&ix);
    return rc == KUBE_OK ? 200 : status(body, 500, "InternalError", "out of memory", NULL);
}

/* One query parameter into out ("" when absent). KUBE_OK or a 400. */
static int param(const apis_route *r, const char *key, char *out, size_t n, kube_buf *body,
                 int *code)
{
    char msg[160];
    int rc = kube_query_get(r->query, key, out, n);

    if (rc == KUBE_ENOTFOUND)
        out[0] = '\0';
    if (rc == KUBE_OK || rc == KUBE_ENOTFOUND)
        return KUBE_OK;
    snprintf(msg, sizeof(msg), "invalid value for the query parameter %s", key);
    *code = status(body, 400, "BadRequest", msg, NULL);
    return KUBE_EBADREQUEST;
}

/* includeObject: "" and Metadata, None, Object; else a 400. */
static int include_param(const apis_route *r, apis_vmpins_format *f, kube_buf *body, int *code)
{
    char inc[64], msg[160];

    if (param(r, "includeObject", inc, sizeof(inc), body, code) != KUBE_OK)
        return KUBE_EBADREQUEST;
    if (!*inc || !strcmp(inc, "Metadata"))
        f->include = APIS_VMPINS_INCLUDE_METADATA;
    else if (!strcmp(inc, "None"))
        f->include = APIS_VMPINS_INCLUDE_NONE;
    else if (!strcmp(inc, "Object"))
        f->include = APIS_VMPINS_INCLUDE_OBJECT;
    else {
        snprintf(msg, sizeof(msg), "unrecognized includeObject value: \"%s\"", inc);
        *code = status(body, 400, "BadRequest", msg, NULL);
        return KUBE_EBADREQUEST;
    }
    return KUBE_OK;
}

/* The selectors of the query. KUBE_OK or a 400. */
static int filter_params(const apis_route *r, apis_vmpins_filter *f, kube_buf *body, int *code)
{
    char labels[1024], fields[1024], msg[1200];
    int rc = param(r, "labelSelector", labels, sizeof(labels), body, code);

    if (rc == KUBE_OK)
        rc = param(r, "fieldSelector", fields, sizeof(fields), body, code);
    if (rc == KUBE_OK)
        rc = apis_vmpins_filter_parse(labels, fields, f, msg, sizeof(msg));
    if (rc == KUBE_EBADREQUEST && !*code)
        *code = status(body, 400, "BadRequest", msg, NULL);
    else if (rc == KUBE_ENOMEM)
        *code = status(body, 500, "InternalError", "out of memory", NULL);
    return rc;
}

int apis_vmpins_is_watch(const apis_route *r)
{
    char w[16];

    return r->kind == APIS_ROUTE_VMPINS &&
           kube_query_get(r->query, "watch", w, sizeof(w)) == KUBE_OK && kube_parse_bool(w) == 1;
}

/* The request's format and filter; 0 when answered (an error). */
static int prepare(const apis_route *r, const char *accept, apis_vmpins_format *f,
                   apis_vmpins_filter *flt, kube_buf *body, int *code)
{
    if (apis_vmpins_accept_parse(accept, f) != KUBE_OK) {
        *code = status(body, 406, "NotAcceptable",
                       "only the following media types are accepted: application/json, "
                       "application/json;as=Table;v=v1;g=meta.k8s.io, "
                       "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
                       NULL);
        return 0;
    }
    if (f->table_version && include_param(r, f, body, code) != KUBE_OK)
        return 0;
    if (r->kind == APIS_ROUTE_VMPIN)
        return 1; /* a get ignores selectors */
    return filter_params(r, flt, body, code) == KUBE_OK;
}

int apis_vmpins_serve(apis_vmpins *v, const apis_route *r, const char *accept,
                      const char **content_type, kube_buf *body)
{
    apis_vmpins_format f = {0};
    apis_vmpins_filter flt = {0};
    selection s = {.v = v, .r = r, .f = &flt};
    int code = 0;

    *content_type = CT_JSON;
    kube_buf_reset(body);
    if (!v)
        return status(body, 503, "ServiceUnavailable", "no connection to kube-apiserver", NULL);
    if (!prepare(r, accept, &f, &flt, body, &code)) {
        apis_vmpins_filter_free(&flt);
        return code;
    }
    if (kube_factory_wait_synced(v->informers, SYNC_WAIT_MS) != KUBE_OK) {
        apis_vmpins_filter_free(&flt);
        return status(body, 503, "ServiceUnavailable", "the VirtualMachine cache is not synced yet",
                      NULL);
    }
    if (r->kind == APIS_ROUTE_VMPIN) {
        kube_object *obj = kube_lister_get(v->vms, r->namespace_, r->name);
        if (obj)
            select_one(&s, obj);
        kube_object_unref(obj);
    } else {
        kube_lister_foreach(v->vms, select_one, &s);
    }
    code = s.rc == KUBE_OK ? answer(v, r, &s, &f, body)
                           : status(body, 500, "InternalError", "out of memory", NULL);
    if (f.table_version && code == 200)
        *content_type = strcmp(f.table_version, "v1") == 0
                            ? "application/json;as=Table;v=v1;g=meta.k8s.io"
                            : "application/json;as=Table;v=v1beta1;g=meta.k8s.io";
    selection_free(&s);
    apis_vmpins_filter_free(&flt);
    return code;
}

/* timeoutSeconds, else kube-apiserver's random [1, 2) times
 * --min-request-timeout. KUBE_OK or a 400. */
static int timeout_param(const apis_route *r, int64_t *out, kube_buf *body, int *code)
{
    char t[32], *end;
    long long v;

    if (param(r, "timeoutSeconds", t, sizeof(t), body, code) != KUBE_OK)
        return KUBE_EBADREQUEST;
    if (!*t) {
        *out = MIN_REQUEST_TIMEOUT_S +
               (int64_t)(kube_rand_next(kube_rand_local()) % MIN_REQUEST_TIMEOUT_S);
        return KUBE_OK;
    }
    v = strtoll(t, &end, 10);
    if (*end || v < 0) {
        *code = status(body, 400, "BadRequest", "invalid value for timeoutSeconds", NULL);
        return KUBE_EBADREQUEST;
    }
    *out = v ? v : MIN_REQUEST_TIMEOUT_S;
    return KUBE_OK;
}

/* A watch that cannot start: the Status in x. */
static void watch_refused(kube_exchange *x, int code, kube_buf *body)
{
    kube_buf *answer = kube_exchange_answer_body(x);
    int rc = kube_buf_append(answer, body->data ? body->data : "", body->len);

    kube_exchange_answer_filled(x, rc, code, CT_JSON);
}

void apis_vmpins_watch(apis_vmpins *v, const apis_route *r, const char *accept, kube_exchange *x)
{
    apis_vmwatch_request w = {.namespace_ = r->namespace_};
    kube_buf body = KUBE_BUF_INIT;
    char rv[64], bookmarks[16];
    int code = 0, rc;

    if (!v)
        code = status(&body, 503, "ServiceUnavailable", "no connection to kube-apiserver", NULL);
    else if (prepare(r, accept, &w.format, &w.filter, &body, &code) &&
             param(r, "resourceVersion", rv, sizeof(rv), &body, &code) == KUBE_OK &&
             timeout_param(r, &w.timeout_s, &body, &code) == KUBE_OK &&
             param(r, "allowWatchBookmarks", bookmarks, sizeof(bookmarks), &body, &code) ==
                 KUBE_OK &&
             kube_factory_wait_synced(v->informers, SYNC_WAIT_MS) != KUBE_OK)
        code = status(&body, 503, "ServiceUnavailable",
                      "the VirtualMachine cache is not synced yet", NULL);
    if (!code) {
        w.resource_version = rv;
        w.bookmarks = kube_parse_bool(bookmarks) == 1;
        rc = apis_vmwatch_start(v->watch, &w, x);
        if (rc == KUBE_EBADREQUEST)
            code = status(&body, 400, "BadRequest", "invalid resourceVersion", NULL);
        else if (rc != KUBE_OK)
            code = status(&body, 500, "InternalError", "out of memory", NULL);
    } else {
        apis_vmpins_filter_free(&w.filter);
    }
    if (code)
        watch_refused(x, code, &body);
    kube_buf_free(&body);
}
