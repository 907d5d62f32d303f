/*
 * tests/emulator/printers.c - server-side printing's dispatch and cell
 * helpers, the pod printer (pkg/printers/internalversion as of v1.23) and
 * the default convertor (Name, Created At) for built-in kinds without a
 * printer. The other built-in kinds are printers_kinds.c, custom resources
 * printers_crd.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/codec/object.h"
#include "printers.h"

const char emu_desc_name[] =
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: http://kubernetes.io/docs/user-guide/"
    "identifiers#names";
const char emu_desc_created[] =
    "CreationTimestamp is a timestamp representing the server time when this object was created. "
    "It is not guaranteed to be set in happens-before order across separate operations. Clients "
    "may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by "
    "the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/"
    "devel/sig-architecture/api-conventions.md#metadata";

/* ------------------------------------------------------------------ */
/* Shared helpers                                                      */
/* ------------------------------------------------------------------ */

void emu_columns_add(cJSON *cols, const emu_column *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", c[i].name);
        cJSON_AddStringToObject(o, "type", c[i].type);
        cJSON_AddStringToObject(o, "format", c[i].format);
        cJSON_AddStringToObject(o, "description", c[i].description);
        cJSON_AddNumberToObject(o, "priority", c[i].priority);
        cJSON_AddItemToArray(cols, o);
    }
}

/* kube's duration.HumanDuration for d seconds. */
static void human_duration(long long d, char *out, size_t n)
{
    long long m = d / 60, h = d / 3600, days = h / 24;

    if (d < -1)
        snprintf(out, n, "<invalid>");
    else if (d < 120)
        snprintf(out, n, "%llds", d < 0 ? 0 : d);
    else if (m < 10)
        snprintf(out, n, d % 60 ? "%lldm%llds" : "%lldm", m, d % 60);
    else if (m < 180)
        snprintf(out, n, "%lldm", m);
    else if (h < 8)
        snprintf(out, n, m % 60 ? "%lldh%lldm" : "%lldh", h, m % 60);
    else if (h < 48)
        snprintf(out, n, "%lldh", h);
    else if (h < 24 * 8)
        snprintf(out, n, h % 24 ? "%lldd%lldh" : "%lldd", days, h % 24);
    else if (h < 24 * 365 * 2)
        snprintf(out, n, "%lldd", days);
    else if (h < 24 * 365 * 8)
        snprintf(out, n, days % 365 ? "%lldy%lldd" : "%lldy", days / 365, days % 365);
    else
        snprintf(out, n, "%lldy", days / 365);
}

void emu_human_since(const char *ts, char *out, size_t n)
{
    int64_t us;

    if (!ts || !*ts || kube_time_parse(ts, &us) != KUBE_OK) {
        snprintf(out, n, "<unknown>");
        return;
    }
    human_duration((long long)time(NULL) - (long long)(us / 1000000), out, n);
}

void emu_cell_str(cJSON *cells, const char *s)
{
    cJSON_AddItemToArray(cells, cJSON_CreateString(s ? s : ""));
}

void emu_cell_str_or(cJSON *cells, const char *s, const char *fallback)
{
    emu_cell_str(cells, s && *s ? s : fallback);
}

void emu_cell_int(cJSON *cells, double v)
{
    cJSON_AddItemToArray(cells, cJSON_CreateNumber(v));
}

double emu_num_at(const cJSON *o, const char *path, double dflt)
{
    const cJSON *v = emu_json_at(o, path);

    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

void emu_cell_age(cJSON *cells, const cJSON *o)
{
    char age[32];

    emu_human_since(emu_json_str(o, "metadata.creationTimestamp"), age, sizeof(age));
    emu_cell_str(cells, age);
}

void emu_cell_name(cJSON *cells, const cJSON *o)
{
    emu_cell_str(cells, emu_json_str(o, "metadata.name"));
}

/* Joins the string member key of each element of arr with sep. */
void emu_join_member(const cJSON *arr, const char *key, const char *sep, kube_buf *b)
{
    const cJSON *it;

    cJSON_ArrayForEach(it, arr)
    {
        const char *s = emu_json_str(it, key);
        kube_buf_printf(b, "%s%s", b->len ? sep : "", s ? s : "");
    }
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* labels.FormatLabels: "k=v,..." sorted by key, "<none>" when empty. */
void emu_format_labels(const cJSON *m, kube_buf *b)
{
    const cJSON *it;
    char *items[64];
    size_t n = 0;

    cJSON_ArrayForEach(it, m) if (cJSON_IsString(it) && n < EMU_N_OF(items))
    {
        kube_buf one = KUBE_BUF_INIT;
        kube_buf_printf(&one, "%s=%s", it->string, it->valuestring);
        items[n++] = one.data;
    }
    qsort(items, n, sizeof(items[0]), by_string);
    for (size_t i = 0; i < n; i++) {
        kube_buf_printf(b, "%s%s", i ? "," : "", items[i] ? items[i] : "");
        free(items[i]);
    }
    if (!n)
        kube_buf_puts(b, "<none>");
}

const char *emu_first_set(const char *a, const char *b)
{
    return a && *a ? a : b ? b : "";
}

/* ------------------------------------------------------------------ */
/* Pods                                                                */
/* ------------------------------------------------------------------ */

static const emu_column pod_cols[] = {
    EMU_NAME_COL,
    {"Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic.", 0},
    {"Status", "string", "", "The aggregate status of the containers in this pod.", 0},
    {"Restarts", "string", "",
     "The number of times the containers in this pod have been restarted and when the last "
     "container in this pod has restarted.",
     0},
    EMU_AGE_COL,
    {"IP", "string", "",
     "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet "
     "allocated.",
     1},
    {"Node", "string", "",
     "NodeName is a request to schedule this pod onto a specific node. If it is non-empty, the "
     "scheduler simply schedules this pod onto that node, assuming that it fits resource "
     "requirements.",
     1},
    {"Nominated Node", "string", "",
     "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot "
     "be scheduled right away as preemption victims receive their graceful termination periods. "
     "This field does not guarantee that the pod will be scheduled on this node. Scheduler may "
     "decide to place the pod elsewhere if other nodes become available sooner. Scheduler may "
     "also decide to give the resources on this node to a higher priority pod that is created "
     "after preemption. As a result, this field may be different than PodSpec.nodeName when the "
     "pod is scheduled.",
     1},
    {"Readiness Gates", "string", "",
     "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when "
     "all its containers are ready AND all conditions specified in the readiness gates have "
     "status equal to \"True\" More info: "
     "https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates",
     1},
};

typedef struct pod_state {
    char reason[128];
    long long restarts;
    int64_t last_restart_us;
    int ready;
} pod_state;

static void note_restart(pod_state *p, const cJSON *cs)
{
    const char *fin = emu_json_str(cs, "lastState.terminated.finishedAt");
    int64_t us;

    p->restarts += (long long)emu_num_at(cs, "restartCount", 0);
    if (fin && kube_time_parse(fin, &us) == KUBE_OK && us > p->last_restart_us)
        p->last_restart_us = us;
}

/* A terminated container's reason, or Signal:N / ExitCode:N (prefix
 * "Init:" for init containers). */
static void terminated_reason(const cJSON *term, const char *prefix, char *out, size_t n)
{
    const char *reason = emu_json_str(term, "reason");
    double sig = emu_num_at(term, "signal", 0);

    if (reason && *reason)
        snprintf(out, n, "%s%s", prefix, reason);
    else if (sig != 0)
        snprintf(out, n, "%sSignal:%d", prefix, (int)sig);
    else
        snprintf(out, n, "%sExitCode:%d", prefix, (int)emu_num_at(term, "exitCode", 0));
}

/* Returns 1 while the pod is still initializing (reason set). */
static int pod_init_state(pod_state *p, const cJSON *pod)
{
    const cJSON *cs;
    int i = 0, n_init = cJSON_GetArraySize(emu_json_at(pod, "spec.initContainers"));

    cJSON_ArrayForEach(cs, emu_json_at(pod, "status.initContainerStatuses"))
    {
        const cJSON *term = emu_json_at(cs, "state.terminated");
        const char *waiting = emu_json_str(cs, "state.waiting.reason");
        note_restart(p, cs);
        if (term && emu_num_at(term, "exitCode", 0) == 0) {
            i++;
            continue;
        }
        if (term)
            terminated_reason(term, "Init:", p->reason, sizeof(p->reason));
        else if (waiting && *waiting && strcmp(waiting, "PodInitializing"))
            snprintf(p->reason, sizeof(p->reason), "Init:%s", waiting);
        else
            snprintf(p->reason, sizeof(p->reason), "Init:%d/%d", i, n_init);
        return 1;
    }
    return 0;
}

static int pod_ready_condition(const cJSON *pod)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, emu_json_at(pod, "status.conditions"))
    {
        const char *t = emu_json_str(c, "type"), *s = emu_json_str(c, "status");
        if (t && s && !strcmp(t, "Ready") && !strcmp(s, "True"))
            return 1;
    }
    return 0;
}

static void pod_containers_state(pod_state *p, const cJSON *pod)
{
    const cJSON *all = emu_json_at(pod, "status.containerStatuses");
    int has_running = 0;

    p->restarts = 0;
    for (int i = cJSON_GetArraySize(all) - 1; i >= 0; i--) {
        const cJSON *cs = cJSON_GetArrayItem(all, i);
        const char *waiting = emu_json_str(cs, "state.waiting.reason");
        const cJSON *term = emu_json_at(cs, "state.terminated");
        note_restart(p, cs);
        if (waiting && *waiting) {
            snprintf(p->reason, sizeof(p->reason), "%s", waiting);
        } else if (term) {
            terminated_reason(term, "", p->reason, sizeof(p->reason));
        } else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cs, "ready")) &&
                   emu_json_at(cs, "state.running")) {
            has_running = 1;
            p->ready++;
        }
    }
    if (!strcmp(p->reason, "Completed") && has_running)
        snprintf(p->reason, sizeof(p->reason), "%s",
                 pod_ready_condition(pod) ? "Running" : "NotReady");
}

static void readiness_gates(const cJSON *pod, char *out, size_t n)
{
    const cJSON *gates = emu_json_at(pod, "spec.readinessGates"), *g, *c;
    int ok = 0;

    if (cJSON_GetArraySize(gates) == 0) {
        snprintf(out, n, "<none>");
        return;
    }
    cJSON_ArrayForEach(g, gates)
    {
        const char *want = emu_json_str(g, "conditionType");
        cJSON_ArrayForEach(c, emu_json_at(pod, "status.conditions"))
        {
            const char *t = emu_json_str(c, "type"), *s = emu_json_str(c, "status");
            if (want && t && !strcmp(t, want)) {
                ok += s && !strcmp(s, "True");
                break;
            }
        }
    }
    snprintf(out, n, "%d/%d", ok, cJSON_GetArraySize(gates));
}

static void pod_cells(cJSON *cells, const cJSON *o)
{
    pod_state p = {.reason = ""};
    const char *phase = emu_json_str(o, "status.phase"), *reason = emu_json_str(o, "status.reason");
    char ready[32], restarts[64], ago[32], gates[32];

    snprintf(p.reason, sizeof(p.reason), "%s", reason && *reason ? reason : phase ? phase : "");
    if (!pod_init_state(&p, o))
        pod_containers_state(&p, o);
    if (emu_json_at(o, "metadata.deletionTimestamp"))
        snprintf(p.reason, sizeof(p.reason), "%s",
                 reason && !strcmp(reason, "NodeLost") ? "Unknown" : "Terminating");
    snprintf(ready, sizeof(ready), "%d/%d", p.ready,
             cJSON_GetArraySize(emu_json_at(o, "spec.containers")));
    snprintf(restarts, sizeof(restarts), "%lld", p.restarts);
    if (p.restarts && p.last_restart_us) {
        human_duration((long long)time(NULL) - (long long)(p.last_restart_us / 1000000), ago,
                       sizeof(ago));
        snprintf(restarts, sizeof(restarts), "%lld (%s ago)", p.restarts, ago);
    }
    emu_cell_name(cells, o);
    emu_cell_str(cells, ready);
    emu_cell_str(cells, p.reason);
    emu_cell_str(cells, restarts);
    emu_cell_age(cells, o);
    emu_cell_str_or(cells,
                    emu_json_str(cJSON_GetArrayItem(emu_json_at(o, "status.podIPs"), 0), "ip"),
                    "<none>");
    emu_cell_str_or(cells, emu_json_str(o, "spec.nodeName"), "<none>");
    emu_cell_str_or(cells, emu_json_str(o, "status.nominatedNodeName"), "<none>");
    readiness_gates(o, gates, sizeof(gates));
    emu_cell_str(cells, gates);
}

/* podSuccessConditions / podFailedConditions: kubectl hides completed pods. */
static cJSON *pod_conditions(const cJSON *o)
{
    const char *phase = emu_json_str(o, "status.phase");
    int ok = phase && !strcmp(phase, "Succeeded");
    cJSON *conds, *c;

    if (!phase || (!ok && strcmp(phase, "Failed")))
        return NULL;
    conds = cJSON_CreateArray();
    c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "type", "Completed");
    cJSON_AddStringToObject(c, "status", "True");
    cJSON_AddStringToObject(c, "reason", phase);
    cJSON_AddStringToObject(c, "message",
                            ok ? "The pod has completed successfully." : "The pod failed.");
    cJSON_AddItemToArray(conds, c);
    return conds;
}

/* ------------------------------------------------------------------ */
/* The default convertor and dispatch                                  */
/* ------------------------------------------------------------------ */

static const emu_column default_cols[] = {EMU_NAME_COL,
                                          {"Created At", "date", "", emu_desc_created, 0}};

static void default_cells(cJSON *cells, const cJSON *o)
{
    emu_cell_name(cells, o);
    emu_cell_str(cells, emu_json_str(o, "metadata.creationTimestamp"));
}

static const emu_printer pod_printer = EMU_PRINTER("", "pods", pod_cols, pod_cells);
static const emu_printer default_printer = EMU_PRINTER("", "", default_cols, default_cells);

static const emu_printer *printer_for(const emu_resource *r)
{
    const emu_printer *p;

    if (!strcmp(r->def->group, "") && !strcmp(r->def->plural, "pods"))
        return &pod_printer;
    p = emu_printer_of_kind(r->def->group, r->def->plural);
    return p ? p : &default_printer;
}

cJSON *emu_printer_columns(const emu_resource *r)
{
    const emu_printer *p;
    cJSON *cols;

    if (r->def->custom)
        return emu_crd_columns(r);
    p = printer_for(r);
    cols = cJSON_CreateArray();
    if (cols)
        emu_columns_add(cols, p->cols, p->n_cols);
    return cols;
}

cJSON *emu_printer_row(const emu_resource *r, const cJSON *obj)
{
    cJSON *row = cJSON_CreateObject(), *cells, *conds = NULL;

    if (!row)
        return NULL;
    if (r->def->custom) {
        cells = emu_crd_cells(r, obj);
    } else {
        cells = cJSON_CreateArray();
        if (cells)
            printer_for(r)->cells(cells, obj);
        if (!strcmp(r->def->plural, "pods") && !*r->def->group)
            conds = pod_conditions(obj);
    }
    cJSON_AddItemToObject(row, "cells", cells ? cells : cJSON_CreateArray());
    if (conds)
        cJSON_AddItemToObject(row, "conditions", conds);
    return row;
}
