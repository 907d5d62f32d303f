/*
 * apiserver/vmpins_render.c - the pure pieces of virtualmachinepins: the
 * Accept header, the selectors, the VirtualMachinePin object (with its
 * node's status), the list and the meta.k8s.io Table. The contract is in vmpins.h.
 */
#include "vmpins.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "kube/types/pin.h"
#include "kube/types/pod.h"
#include "kube/util/array.h"
#include "kube/util/duration.h"
#include "kube/util/clock.h"
#include "kube/util/errors.h"

#define PIN_KIND APIS_VMPIN_KIND

/* ---- Accept ---- */

/* One media range's parameter value (e.g. "as"), copied into out. */
static void media_param(const char *range, size_t len, const char *name, char *out, size_t n)
{
    size_t nl = strlen(name);
    const char *p = memchr(range, ';', len), *end = range + len;

    out[0] = '\0';
    while (p && p < end) {
        const char *next = memchr(p + 1, ';', (size_t)(end - p - 1));
        const char *q = p + 1;
        size_t plen;
        while (q < end && *q == ' ')
            q++;
        plen = (size_t)((next ? next : end) - q);
        if (plen > nl && strncmp(q, name, nl) == 0 && q[nl] == '=') {
            snprintf(out, n, "%.*s", (int)(plen - nl - 1), q + nl + 1);
            return;
        }
        p = next;
    }
}

/* 1 for a JSON range (application/json, application/ or any wildcard), table
 * version set for a Table range we serve, 0 for anything else. */
static int media_range(const char *range, size_t len, const char **table)
{
    char as[32], v[32], g[32];
    size_t tl;

    while (len && *range == ' ')
        range++, len--;
    tl = strcspn(range, ";");
    tl = tl < len ? tl : len;
    while (tl && range[tl - 1] == ' ')
        tl--;
    if (!(tl == 16 && strncasecmp(range, "application/json", 16) == 0) &&
        !(tl == 13 && strncmp(range, "application/*", 13) == 0) &&
        !(tl == 3 && strncmp(range, "*/*", 3) == 0))
        return 0;
    media_param(range, len, "as", as, sizeof(as));
    if (!*as)
        return 1;
    media_param(range, len, "v", v, sizeof(v));
    media_param(range, len, "g", g, sizeof(g));
    if (strcmp(as, "Table") != 0 || strcmp(g, "meta.k8s.io") != 0)
        return 0;
    if (strcmp(v, "v1") == 0)
        *table = "v1";
    else if (strcmp(v, "v1beta1") == 0)
        *table = "v1beta1";
    return *table != NULL;
}

int apis_vmpins_accept_parse(const char *accept, apis_vmpins_format *f)
{
    const char *p = accept;

    f->table_version = NULL;
    if (!accept || !*accept)
        return KUBE_OK;
    while (p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (media_range(p, len, &f->table_version))
            return KUBE_OK;
        p = comma ? comma + 1 : NULL;
    }
    return KUBE_EINVAL;
}

/* ---- selectors ---- */

static const char *const field_labels[] = {"node", "status.nodeStatus", "metadata.name",
                                           "metadata.namespace"};

/* 1 when key is a field we select on. */
static int known_field(const char *key)
{
    for (size_t k = 0; k < sizeof(field_labels) / sizeof(field_labels[0]); k++)
        if (strcmp(key, field_labels[k]) == 0)
            return 1;
    return 0;
}

int apis_vmpins_filter_parse(const char *labels, const char *fields, apis_vmpins_filter *f,
                             char *msg, size_t n)
{
    int rc = KUBE_OK;

    memset(f, 0, sizeof(*f));
    if (labels && (rc = kube_label_selector_parse(labels, &f->labels)) == KUBE_EPARSE) {
        snprintf(msg, n, "unable to parse requirement: invalid label selector \"%s\"", labels);
        return KUBE_EBADREQUEST;
    }
    if (rc == KUBE_OK && fields &&
        (rc = kube_field_selector_parse(fields, &f->fields)) == KUBE_EPARSE) {
        snprintf(msg, n, "invalid field selector \"%s\"", fields);
        return KUBE_EBADREQUEST;
    }
    for (size_t i = 0; rc == KUBE_OK && i < f->fields.n_terms; i++)
        if (!known_field(f->fields.terms[i].key)) {
            snprintf(msg, n, "field label not supported: %s", f->fields.terms[i].key);
            return KUBE_EBADREQUEST;
        }
    return rc;
}

void apis_vmpins_filter_free(apis_vmpins_filter *f)
{
    kube_label_selector_free(f->labels);
    kube_field_selector_free(&f->fields);
    memset(f, 0, sizeof(*f));
}

const char *apis_vmpins_node_status(const apis_vmpins_world *w, const kube_vm *vm, char *out,
                                    size_t n)
{
    const char *node = kube_pin_get(vm, w->key);
    kube_object *obj;
    int rc;

    if (!node)
        return NULL;
    obj = w->node(w->ud, node);
    rc = kube_node_status(kube_node_from(obj), out, n);
    kube_object_unref(obj);
    return rc == KUBE_OK ? out : NULL;
}

int apis_vmpins_filter_matches(const apis_vmpins_filter *f, const kube_vm *vm,
                               const apis_vmpins_world *w)
{
    const kube_meta *m = &vm->base.meta;
    const char *node = kube_pin_get(vm, w->key), *status;
    char st[KUBE_NODE_STATUS_MAX];

    if (f->labels && !kube_label_selector_matches(f->labels, m->labels, m->n_labels))
        return 0;
    if (!f->fields.n_terms)
        return 1;
    status = apis_vmpins_node_status(w, vm, st, sizeof(st));
    for (size_t i = 0; i < f->fields.n_terms; i++) {
        const kube_field_term *t = &f->fields.terms[i];
        const char *k = t->key, *v;
        if (!strcmp(k, "node"))
            v = node ? node : "";
        else if (!strcmp(k, "status.nodeStatus"))
            v = status ? status : "";
        else
            v = !strcmp(k, "metadata.name") ? m->name : m->namespace_;
        if ((strcmp(v, t->value) == 0) == t->negated)
            return 0;
    }
    return 1;
}

/* ---- objects ---- */

/* RFC 3339 UTC seconds, as metav1.Time marshals. */
static void format_time(int64_t unix_s, char *out, size_t n)
{
    kube_time_format(unix_s * 1000000LL, 0, out, n);
}

/* o[k] = v, or null when v is NULL; NULL when out of memory. */
static cJSON *add_string_or_null(cJSON *o, const char *k, const char *v)
{
    return v ? cJSON_AddStringToObject(o, k, v) : cJSON_AddNullToObject(o, k);
}

/* The metadata of the VirtualMachinePin of vm: the VM's. */
static cJSON *pin_metadata(const kube_vm *vm)
{
    const kube_meta *m = &vm->base.meta;
    cJSON *md = cJSON_CreateObject(), *labels;
    char ts[40];
    int ok = md != NULL;

    ok = ok && cJSON_AddStringToObject(md, "name", m->name);
    ok = ok && cJSON_AddStringToObject(md, "namespace", m->namespace_);
    if (ok && m->uid)
        ok = cJSON_AddStringToObject(md, "uid", m->uid) != NULL;
    if (ok && m->resource_version)
        ok = cJSON_AddStringToObject(md, "resourceVersion", m->resource_version) != NULL;
    format_time(m->creation_unix, ts, sizeof(ts));
    ok = ok && cJSON_AddStringToObject(md, "creationTimestamp", ts);
    if (ok && m->n_labels) {
        ok = (labels = cJSON_AddObjectToObject(md, "labels")) != NULL;
        for (uint32_t i = 0; ok && i < m->n_labels; i++)
            ok = cJSON_AddStringToObject(labels, m->labels[i].key, m->labels[i].value) != NULL;
    }
    if (!ok) {
        cJSON_Delete(md);
        return NULL;
    }
    return md;
}

/* o.status: {"nodeStatus": the pinned node's status, or null}. */
static int add_status(cJSON *o, const kube_vm *vm, const apis_vmpins_world *w)
{
    char st[KUBE_NODE_STATUS_MAX];
    cJSON *status = cJSON_AddObjectToObject(o, "status");

    return status &&
           add_string_or_null(status, "nodeStatus", apis_vmpins_node_status(w, vm, st, sizeof(st)));
}

cJSON *apis_vmpin_object(const kube_vm *vm, const apis_vmpins_world *w)
{
    const kube_meta *m = &vm->base.meta;
    const char *key = w->key;
    cJSON *o = cJSON_CreateObject(), *md = pin_metadata(vm);
    int ok = o && md;

    ok = ok && cJSON_AddStringToObject(o, "kind", PIN_KIND);
    ok = ok && cJSON_AddStringToObject(o, "apiVersion", APIS_GROUP_VERSION);
    if (ok) {
        cJSON_AddItemToObject(o, "metadata", md);
        md = NULL;
    }
    ok = ok && add_string_or_null(o, "node", kube_pin_get(vm, key));
    ok = ok && add_string_or_null(o, "since", kube_meta_annotation(m, KUBE_PIN_ANN_AT));
    ok = ok && add_string_or_null(o, "by", kube_meta_annotation(m, KUBE_PIN_ANN_BY));
    ok = ok && add_string_or_null(o, "reason", kube_meta_annotation(m, KUBE_PIN_ANN_REASON));
    ok = ok && add_status(o, vm, w);
    cJSON_Delete(md);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* ---- the Table ---- */

static const char columns_json[] =
    "[{\"name\":\"Name\",\"type\":\"string\",\"format\":\"name\",\"description\":\"The "
    "VirtualMachine's name.\",\"priority\":0},"
    "{\"name\":\"Node\",\"type\":\"string\",\"format\":\"\",\"description\":\"The node the VM is "
    "pinned to (stickyvm.io/node).\",\"priority\":0},"
    "{\"name\":\"Node-Status\",\"type\":\"string\",\"format\":\"\",\"description\":\"The "
    "pinned node's status as kubectl get nodes writes it; Missing when no Node has that "
    "name.\",\"priority\":0},"
    "{\"name\":\"Since\",\"type\":\"string\",\"format\":\"\",\"description\":\"How long ago the "
    "pin was last written (stickyvm.io/pinned-at).\",\"priority\":0},"
    "{\"name\":\"By\",\"type\":\"string\",\"format\":\"\",\"description\":\"Who wrote the pin "
    "(stickyvm.io/pinned-by).\",\"priority\":0},"
    "{\"name\":\"Age\",\"type\":\"date\",\"format\":\"\",\"description\":\"CreationTimestamp "
    "of the VirtualMachine.\",\"priority\":0},"
    "{\"name\":\"Pod\",\"type\":\"string\",\"format\":\"\",\"description\":\"The VM's "
    "current virt-launcher pod.\",\"priority\":1},"
    "{\"name\":\"Waiting\",\"type\":\"string\",\"format\":\"\",\"description\":\"How "
    "long that pod has been Pending.\",\"priority\":1}]";

/* How long ago the RFC 3339 time s was, or "<none>". */
static void since_cell(const char *s, int64_t now_s, char *out, size_t n)
{
    int64_t us;

    if (!s || kube_time_parse(s, &us) != KUBE_OK)
        snprintf(out, n, "<none>");
    else
        kube_duration_human(now_s - us / 1000000, out, n);
}

/* The cells Pod and Waiting: the VM's current pod, and how long it has
 * been Pending (NULL: out of memory). */
static int add_pod_cells(cJSON *cells, const kube_vm *vm, const apis_vmpins_world *w, int64_t now_s)
{
    kube_object *obj = w->pod(w->ud, vm);
    const kube_pod *p = kube_pod_from(obj);
    char waiting[32] = "<none>";
    cJSON *pod = cJSON_CreateString(p ? p->base.meta.name : "<none>");

    if (p && strcmp(p->phase, "Pending") == 0)
        kube_duration_human(now_s - p->base.meta.creation_unix, waiting, sizeof(waiting));
    kube_object_unref(obj);
    if (!pod)
        return 0;
    cJSON_AddItemToArray(cells, pod);
    return cJSON_AddItemToArray(cells, cJSON_CreateString(waiting));
}

/* The cells Name, Node, Node-Status, Since, By, Age, Pod, Waiting of vm
 * (NULL: out of memory). */
static cJSON *row_cells(const kube_vm *vm, const apis_vmpins_world *w, int64_t now_s)
{
    const kube_meta *m = &vm->base.meta;
    const char *node = kube_pin_get(vm, w->key), *by = kube_meta_annotation(m, KUBE_PIN_ANN_BY);
    char since[32], age[32], st[KUBE_NODE_STATUS_MAX];
    const char *cells[6], *status = apis_vmpins_node_status(w, vm, st, sizeof(st));
    cJSON *arr;

    since_cell(node ? kube_meta_annotation(m, KUBE_PIN_ANN_AT) : NULL, now_s, since, sizeof(since));
    kube_duration_human(now_s - m->creation_unix, age, sizeof(age));
    cells[0] = m->name;
    cells[1] = node ? node : "<none>";
    cells[2] = status ? status : "<none>";
    cells[3] = since;
    cells[4] = node && by ? by : "<none>";
    cells[5] = age;
    arr = cJSON_CreateStringArray(cells, 6);
    if (arr && !add_pod_cells(arr, vm, w, now_s)) {
        cJSON_Delete(arr);
        return NULL;
    }
    return arr;
}

/* The row's object as includeObject asks (NULL for None: no member). */
static int row_object(cJSON *row, const kube_vm *vm, const apis_vmpins_world *w,
                      const apis_vmpins_format *f)
{
    cJSON *o;
    char av[32];

    if (f->include == APIS_VMPINS_INCLUDE_NONE)
        return KUBE_OK;
    if (f->include == APIS_VMPINS_INCLUDE_OBJECT) {
        o = apis_vmpin_object(vm, w);
    } else {
        o = cJSON_CreateObject();
        snprintf(av, sizeof(av), "meta.k8s.io/%s", f->table_version);
        if (o && (!cJSON_AddStringToObject(o, "kind", "PartialObjectMetadata") ||
                  !cJSON_AddStringToObject(o, "apiVersion", av) ||
                  !cJSON_AddItemToObject(o, "metadata", pin_metadata(vm)))) {
            cJSON_Delete(o);
            o = NULL;
        }
    }
    if (!o)
        return KUBE_ENOMEM;
    cJSON_AddItemToObject(row, "object", o);
    return KUBE_OK;
}

/* A Table with its metadata and columns, without rows (NULL: out of memory). */
static cJSON *table_new(const char *rv, const apis_vmpins_format *f)
{
    cJSON *t = cJSON_CreateObject(), *md, *cols = cJSON_Parse(columns_json);
    char av[32];
    int ok = t && cols;

    snprintf(av, sizeof(av), "meta.k8s.io/%s", f->table_version);
    ok = ok && cJSON_AddStringToObject(t, "kind", "Table");
    ok = ok && cJSON_AddStringToObject(t, "apiVersion", av);
    ok = ok && (md = cJSON_AddObjectToObject(t, "metadata")) != NULL;
    if (ok && rv && *rv)
        ok = cJSON_AddStringToObject(md, "resourceVersion", rv) != NULL;
    if (ok) {
        cJSON_AddItemToObject(t, "columnDefinitions", cols);
        return t;
    }
    cJSON_Delete(cols);
    cJSON_Delete(t);
    return NULL;
}

/* The Table of vms (NULL: out of memory). */
static cJSON *render_table(const kube_vm *const *vms, size_t n, const apis_vmpins_world *w,
                           const char *rv, const apis_vmpins_format *f, int64_t now_s)
{
    cJSON *t = table_new(rv, f), *rows = t ? cJSON_AddArrayToObject(t, "rows") : NULL;
    int ok = rows != NULL;

    for (size_t i = 0; ok && i < n; i++) {
        cJSON *row = cJSON_CreateObject(), *cells = row_cells(vms[i], w, now_s);
        ok = row && cells;
        if (ok)
            cJSON_AddItemToObject(row, "cells", cells);
        else
            cJSON_Delete(cells);
        ok = ok && row_object(row, vms[i], w, f) == KUBE_OK;
        if (row)
            cJSON_AddItemToArray(rows, row);
    }
    if (!ok) {
        cJSON_Delete(t);
        return NULL;
    }
    return t;
}

/* The VirtualMachinePinList of vms (NULL: out of memory). */
static cJSON *render_list(const kube_vm *const *vms, size_t n, const apis_vmpins_world *w,
                          const char *rv)
{
    cJSON *l = cJSON_CreateObject(), *md, *items;
    int ok = l != NULL;

    ok = ok && cJSON_AddStringToObject(l, "kind", PIN_KIND "List");
    ok = ok && cJSON_AddStringToObject(l, "apiVersion", APIS_GROUP_VERSION);
    ok = ok && (md = cJSON_AddObjectToObject(l, "metadata")) != NULL;
    ok = ok && cJSON_AddStringToObject(md, "resourceVersion", rv ? rv : "");
    ok = ok && (items = cJSON_AddArrayToObject(l, "items")) != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        cJSON *o = apis_vmpin_object(vms[i], w);
        ok = o != NULL;
        if (ok)
            cJSON_AddItemToArray(items, o);
    }
    if (!ok) {
        cJSON_Delete(l);
        return NULL;
    }
    return l;
}

int apis_vmpins_render(const kube_vm *const *vms, size_t n, int single, const apis_vmpins_world *w,
                       const char *rv, const apis_vmpins_format *f, int64_t now_s, kube_buf *out)
{
    cJSON *doc;
    char *text;
    int rc;

    if (f->table_version)
        doc = render_table(vms, n, w, rv, f, now_s);
    else if (single && n == 1)
        doc = apis_vmpin_object(vms[0], w);
    else
        doc = render_list(vms, n, w, rv);
    text = doc ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    if (!text)
        return KUBE_ENOMEM;
    rc = kube_buf_puts(out, text);
    if (rc == KUBE_OK)
        rc = kube_buf_puts(out, "\n");
    cJSON_free(text);
    return rc;
}

/* The object of one watch event (NULL: out of memory). */
static cJSON *event_object(const kube_vm *vm, const apis_vmpins_world *w, const char *rv,
                           const apis_vmpins_format *f, int columns, int64_t now_s)
{
    cJSON *o, *md;

    if (f->table_version) {
        o = render_table(&vm, 1, w, rv, f, now_s);
        if (o && !columns)
            cJSON_ReplaceItemInObject(o, "columnDefinitions", cJSON_CreateNull());
        return o;
    }
    o = apis_vmpin_object(vm, w);
    md = cJSON_GetObjectItemCaseSensitive(o, "metadata");
    if (md && rv && *rv) {
        cJSON_DeleteItemFromObjectCaseSensitive(md, "resourceVersion");
        if (!cJSON_AddStringToObject(md, "resourceVersion", rv)) {
            cJSON_Delete(o);
            return NULL;
        }
    }
    return o;
}

int apis_vmpins_render_event(const char *type, const kube_vm *vm, const apis_vmpins_world *w,
                             const char *rv, const apis_vmpins_format *f, int columns,
                             int64_t now_s, kube_buf *out)
{
    cJSON *ev = cJSON_CreateObject(), *o = event_object(vm, w, rv, f, columns, now_s);
    char *text = NULL;
    int rc = KUBE_ENOMEM;

    if (ev && o && cJSON_AddStringToObject(ev, "type", type)) {
        cJSON_AddItemToObject(ev, "object", o);
        o = NULL;
        text = cJSON_PrintUnformatted(ev);
    }
    if (text && (rc = kube_buf_puts(out, text)) == KUBE_OK)
        rc = kube_buf_puts(out, "\n");
    cJSON_free(text);
    cJSON_Delete(o);
    cJSON_Delete(ev);
    return rc;
}
