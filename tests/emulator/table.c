/*
 * tests/emulator/table.c - server-side printing: kubectl get asks for
 * application/json;as=Table;v=v1;g=meta.k8s.io and prints the columns the
 * server chooses. Columns follow kube-apiserver's printers for pods, nodes
 * and namespaces; other kinds get Name and Age (Created At for core kinds
 * without a printer). Rows carry the object's metadata as
 * PartialObjectMetadata (includeObject=Metadata, the default).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu_internal.h"

static int wants_table(const emu_request *req)
{
    const char *accept = emu_header_get(req, "Accept");

    return accept && strstr(accept, "as=Table") && strstr(accept, "g=meta.k8s.io");
}

/* kubectl's HumanDuration. */
static void human_age(const char *ts, char *out, size_t n)
{
    struct tm tm = {0};
    long long d, m, h;

    if (!ts || !strptime(ts, "%Y-%m-%dT%H:%M:%SZ", &tm)) {
        snprintf(out, n, "<unknown>");
        return;
    }
    d = (long long)(time(NULL) - timegm(&tm));
    if (d < -1) {
        snprintf(out, n, "<invalid>");
    } else if (d < 120) {
        snprintf(out, n, "%llds", d < 0 ? 0 : d);
    } else if ((m = d / 60) < 10) {
        if (d % 60)
            snprintf(out, n, "%lldm%llds", m, d % 60);
        else
            snprintf(out, n, "%lldm", m);
    } else if (m < 180) {
        snprintf(out, n, "%lldm", m);
    } else if ((h = d / 3600) < 8) {
        if (m % 60)
            snprintf(out, n, "%lldh%lldm", h, m % 60);
        else
            snprintf(out, n, "%lldh", h);
    } else if (h < 48) {
        snprintf(out, n, "%lldh", h);
    } else if (h < 24 * 8) {
        if (h % 24)
            snprintf(out, n, "%lldd%lldh", h / 24, h % 24);
        else
            snprintf(out, n, "%lldd", h / 24);
    } else {
        snprintf(out, n, "%lldd", h / 24);
    }
}

static void add_column(cJSON *cols, const char *name, const char *type, const char *format,
                       const char *desc, int priority)
{
    cJSON *c = cJSON_CreateObject();

    cJSON_AddStringToObject(c, "name", name);
    cJSON_AddStringToObject(c, "type", type);
    cJSON_AddStringToObject(c, "format", format);
    cJSON_AddStringToObject(c, "description", desc);
    cJSON_AddNumberToObject(c, "priority", priority);
    cJSON_AddItemToArray(cols, c);
}

static const char name_desc[] =
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: http://kubernetes.io/docs/user-guide/"
    "identifiers#names";
static const char age_desc[] =
    "CreationTimestamp is a timestamp representing the server time when this object was created. "
    "It is not guaranteed to be set in happens-before order across separate operations. Clients "
    "may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by "
    "the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/"
    "devel/sig-architecture/api-conventions.md#metadata";

static cJSON *columns(const emu_resource *r)
{
    cJSON *cols = cJSON_CreateArray();
    const char *p = r->def->plural;

    add_column(cols, "Name", "string", "name", name_desc, 0);
    if (!strcmp(p, "pods") && !*r->def->group) {
        add_column(cols, "Ready", "string", "",
                   "The aggregate readiness state of this pod for "
                   "accepting traffic.",
                   0);
        add_column(cols, "Status", "string", "",
                   "The aggregate status of the containers in this "
                   "pod.",
                   0);
        add_column(cols, "Restarts", "string", "",
                   "The number of times the containers in this pod "
                   "have been restarted and when the last container "
                   "in this pod has restarted.",
                   0);
        add_column(cols, "Age", "string", "", age_desc, 0);
        add_column(cols, "IP", "string", "",
                   "IP address allocated to the pod. Routable at least "
                   "within the cluster. Empty if not yet allocated.",
                   1);
        add_column(cols, "Node", "string", "",
                   "NodeName is a request to schedule this pod onto a "
                   "specific node.",
                   1);
        add_column(cols, "Nominated Node", "string", "",
                   "nominatedNodeName is set only when this "
                   "pod preempts other pods on the node.",
                   1);
        add_column(cols, "Readiness Gates", "string", "",
                   "If specified, all readiness gates will "
                   "be evaluated for pod readiness.",
                   1);
    } else if (!strcmp(p, "nodes")) {
        add_column(cols, "Status", "string", "", "The status of the node", 0);
        add_column(cols, "Roles", "string", "", "The roles of the node", 0);
        add_column(cols, "Age", "string", "", age_desc, 0);
        add_column(cols, "Version", "string", "", "Kubelet Version reported by the node.", 0);
    } else if (!strcmp(p, "namespaces")) {
        add_column(cols, "Status", "string", "", "The status of the namespace", 0);
        add_column(cols, "Age", "string", "", age_desc, 0);
    } else if (r->def->custom) {
        add_column(cols, "Age", "date", "", age_desc, 0);
    } else {
        add_column(cols, "Created At", "date", "", age_desc, 0);
    }
    return cols;
}

static int count_ready(const cJSON *pod)
{
    const cJSON *cs;
    int ready = 0;

    cJSON_ArrayForEach(cs, emu_json_at(pod, "status.containerStatuses")) ready +=
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cs, "ready"));
    return ready;
}

static void pod_cells(cJSON *cells, const cJSON *o, const char *age)
{
    char ready[32];
    const char *phase = emu_json_str(o, "status.phase");
    const char *reason = emu_json_str(o, "status.reason");
    const char *ip = emu_json_str(o, "status.podIP");
    const char *node = emu_json_str(o, "spec.nodeName");
    const char *nom = emu_json_str(o, "status.nominatedNodeName");

    snprintf(ready, sizeof(ready), "%d/%d", count_ready(o),
             cJSON_GetArraySize(emu_json_at(o, "spec.containers")));
    cJSON_AddItemToArray(cells, cJSON_CreateString(ready));
    if (emu_json_at(o, "metadata.deletionTimestamp"))
        cJSON_AddItemToArray(cells, cJSON_CreateString("Terminating"));
    else
        cJSON_AddItemToArray(cells, cJSON_CreateString(reason ? reason : phase ? phase : ""));
    cJSON_AddItemToArray(cells, cJSON_CreateNumber(0));
    cJSON_AddItemToArray(cells, cJSON_CreateString(age));
    cJSON_AddItemToArray(cells, cJSON_CreateString(ip ? ip : "<none>"));
    cJSON_AddItemToArray(cells, cJSON_CreateString(node && *node ? node : "<none>"));
    cJSON_AddItemToArray(cells, cJSON_CreateString(nom && *nom ? nom : "<none>"));
    cJSON_AddItemToArray(cells, cJSON_CreateString("<none>"));
}

static void node_cells(cJSON *cells, const cJSON *o, const char *age)
{
    const cJSON *c;
    const char *ready = "Unknown";
    const char *ver = emu_json_str(o, "status.nodeInfo.kubeletVersion");
    char status[64];

    cJSON_ArrayForEach(c, emu_json_at(o, "status.conditions"))
    {
        const char *t = emu_json_str(c, "type"), *st = emu_json_str(c, "status");
        if (t && st && !strcmp(t, "Ready"))
            ready = !strcmp(st, "True") ? "Ready" : "NotReady";
    }
    snprintf(status, sizeof(status), "%s%s", ready,
             cJSON_IsTrue(emu_json_at(o, "spec.unschedulable")) ? ",SchedulingDisabled" : "");
    cJSON_AddItemToArray(cells, cJSON_CreateString(status));
    cJSON_AddItemToArray(cells, cJSON_CreateString("<none>"));
    cJSON_AddItemToArray(cells, cJSON_CreateString(age));
    cJSON_AddItemToArray(cells, cJSON_CreateString(ver && *ver ? ver : ""));
}

static cJSON *row(const emu_resource *r, const emu_obj *obj)
{
    cJSON *o = emu_obj_tree(obj), *rowj = cJSON_CreateObject(), *cells = cJSON_CreateArray(), *pom;
    const char *p = r->def->plural, *created = emu_json_str(o, "metadata.creationTimestamp");
    char age[32];

    human_age(created, age, sizeof(age));
    cJSON_AddItemToArray(cells, cJSON_CreateString(obj->name));
    if (!strcmp(p, "pods") && !*r->def->group)
        pod_cells(cells, o, age);
    else if (!strcmp(p, "nodes"))
        node_cells(cells, o, age);
    else if (!strcmp(p, "namespaces")) {
        const char *phase = emu_json_str(o, "status.phase");
        cJSON_AddItemToArray(cells, cJSON_CreateString(phase ? phase : ""));
        cJSON_AddItemToArray(cells, cJSON_CreateString(age));
    } else if (r->def->custom) {
        cJSON_AddItemToArray(cells, cJSON_CreateString(age));
    } else {
        cJSON_AddItemToArray(cells, cJSON_CreateString(created ? created : ""));
    }
    cJSON_AddItemToObject(rowj, "cells", cells);
    pom = cJSON_CreateObject();
    cJSON_AddStringToObject(pom, "kind", "PartialObjectMetadata");
    cJSON_AddStringToObject(pom, "apiVersion", "meta.k8s.io/v1");
    cJSON_AddItemToObject(pom, "metadata", cJSON_DetachItemFromObjectCaseSensitive(o, "metadata"));
    cJSON_AddItemToObject(rowj, "object", pom);
    cJSON_Delete(o);
    return rowj;
}

static int answer_table(emu_response *resp, const emu_resource *r, emu_obj *const *items, size_t n,
                        int64_t rv, const char *cont, int64_t remaining)
{
    cJSON *t = cJSON_CreateObject(), *meta, *rows;
    char rvs[32];
    int rc;

    cJSON_AddStringToObject(t, "kind", "Table");
    cJSON_AddStringToObject(t, "apiVersion", "meta.k8s.io/v1");
    meta = cJSON_AddObjectToObject(t, "metadata");
    if (rv > 0) {
        snprintf(rvs, sizeof(rvs), "%lld", (long long)rv);
        cJSON_AddStringToObject(meta, "resourceVersion", rvs);
    }
    if (cont)
        cJSON_AddStringToObject(meta, "continue", cont);
    if (cont && remaining >= 0)
        cJSON_AddNumberToObject(meta, "remainingItemCount", (double)remaining);
    cJSON_AddItemToObject(t, "columnDefinitions", columns(r));
    rows = cJSON_AddArrayToObject(t, "rows");
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(rows, row(r, items[i]));
    rc = emu_response_json(resp, 200, t);
    cJSON_Delete(t);
    return rc;
}

int emu_table_or_obj(emu_response *resp, const emu_request *req, const emu_resource *r,
                     const emu_obj *o)
{
    emu_obj *one = (emu_obj *)o;

    if (wants_table(req))
        return answer_table(resp, r, &one, 1, 0, NULL, -1);
    return emu_response_raw(resp, 200, "application/json", o->json, o->len);
}

int emu_table_list(emu_response *resp, const emu_request *req, const emu_resource *r,
                   emu_obj *const *items, size_t n, int64_t rv, const char *cont, int64_t remaining)
{
    if (!wants_table(req))
        return 0;
    answer_table(resp, r, items, n, rv, cont, remaining);
    return 1;
}
