/*
 * tests/emulator/printers.c - kube-apiserver's printers for the built-in
 * kinds the emulator serves (pkg/printers/internalversion as of v1.23, and
 * kube-aggregator's APIService convertor): pods, nodes, namespaces, core
 * and events.k8s.io events, leases, deployments, services, config maps,
 * secrets, service accounts, PodDisruptionBudgets and APIServices. Other
 * built-in kinds get the default convertor (Name, Created At); custom
 * resources go to printers_crd.c.
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

#define NAME_COL                                   \
    {                                              \
        "Name", "string", "name", emu_desc_name, 0 \
    }
#define AGE_COL                                  \
    {                                            \
        "Age", "string", "", emu_desc_created, 0 \
    }
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

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

static void add_str(cJSON *cells, const char *s)
{
    cJSON_AddItemToArray(cells, cJSON_CreateString(s ? s : ""));
}

static void add_str_or(cJSON *cells, const char *s, const char *fallback)
{
    add_str(cells, s && *s ? s : fallback);
}

static void add_int(cJSON *cells, double v)
{
    cJSON_AddItemToArray(cells, cJSON_CreateNumber(v));
}

static double num_at(const cJSON *o, const char *path, double dflt)
{
    const cJSON *v = emu_json_at(o, path);

    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static void add_age(cJSON *cells, const cJSON *o)
{
    char age[32];

    emu_human_since(emu_json_str(o, "metadata.creationTimestamp"), age, sizeof(age));
    add_str(cells, age);
}

static void add_name(cJSON *cells, const cJSON *o)
{
    add_str(cells, emu_json_str(o, "metadata.name"));
}

/* Joins the string member key of each element of arr with sep. */
static void join_member(const cJSON *arr, const char *key, const char *sep, kube_buf *b)
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
static void format_labels(const cJSON *m, kube_buf *b)
{
    const cJSON *it;
    char *items[64];
    size_t n = 0;

    cJSON_ArrayForEach(it, m) if (cJSON_IsString(it) && n < N_OF(items))
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

/* ------------------------------------------------------------------ */
/* Pods                                                                */
/* ------------------------------------------------------------------ */

static const emu_column pod_cols[] = {
    NAME_COL,
    {"Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic.", 0},
    {"Status", "string", "", "The aggregate status of the containers in this pod.", 0},
    {"Restarts", "string", "",
     "The number of times the containers in this pod have been restarted and when the last "
     "container in this pod has restarted.",
     0},
    AGE_COL,
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

    p->restarts += (long long)num_at(cs, "restartCount", 0);
    if (fin && kube_time_parse(fin, &us) == KUBE_OK && us > p->last_restart_us)
        p->last_restart_us = us;
}

/* A terminated container's reason, or Signal:N / ExitCode:N (prefix
 * "Init:" for init containers). */
static void terminated_reason(const cJSON *term, const char *prefix, char *out, size_t n)
{
    const char *reason = emu_json_str(term, "reason");
    double sig = num_at(term, "signal", 0);

    if (reason && *reason)
        snprintf(out, n, "%s%s", prefix, reason);
    else if (sig != 0)
        snprintf(out, n, "%sSignal:%d", prefix, (int)sig);
    else
        snprintf(out, n, "%sExitCode:%d", prefix, (int)num_at(term, "exitCode", 0));
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
        if (term && num_at(term, "exitCode", 0) == 0) {
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
    add_name(cells, o);
    add_str(cells, ready);
    add_str(cells, p.reason);
    add_str(cells, restarts);
    add_age(cells, o);
    add_str_or(cells, emu_json_str(cJSON_GetArrayItem(emu_json_at(o, "status.podIPs"), 0), "ip"),
               "<none>");
    add_str_or(cells, emu_json_str(o, "spec.nodeName"), "<none>");
    add_str_or(cells, emu_json_str(o, "status.nominatedNodeName"), "<none>");
    readiness_gates(o, gates, sizeof(gates));
    add_str(cells, gates);
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
/* Nodes, namespaces                                                   */
/* ------------------------------------------------------------------ */

static const char desc_addresses[] =
    "List of addresses reachable to the node. Queried from cloud provider, if available. More "
    "info: https://kubernetes.io/docs/concepts/nodes/node/#addresses Note: This field is "
    "declared as mergeable, but the merge key is not sufficiently unique, which can cause data "
    "corruption when it is merged. Callers should instead use a full-replacement patch. See "
    "http://pr.k8s.io/79391 for an example.";

static const emu_column node_cols[] = {
    NAME_COL,
    {"Status", "string", "", "The status of the node", 0},
    {"Roles", "string", "", "The roles of the node", 0},
    AGE_COL,
    {"Version", "string", "", "Kubelet Version reported by the node.", 0},
    {"Internal-IP", "string", "", desc_addresses, 1},
    {"External-IP", "string", "", desc_addresses, 1},
    {"OS-Image", "string", "",
     "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).", 1},
    {"Kernel-Version", "string", "",
     "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", 1},
    {"Container-Runtime", "string", "",
     "ContainerRuntime Version reported by the node through runtime remote API (e.g. "
     "containerd://1.4.2).",
     1},
};

static const char *node_address(const cJSON *o, const char *type)
{
    const cJSON *a;

    cJSON_ArrayForEach(a, emu_json_at(o, "status.addresses"))
    {
        const char *t = emu_json_str(a, "type");
        if (t && !strcmp(t, type))
            return emu_json_str(a, "address");
    }
    return NULL;
}

/* findNodeRoles: node-role.kubernetes.io/<role> and kubernetes.io/role,
 * sorted and de-duplicated. */
static void node_roles(const cJSON *o, kube_buf *b)
{
    static const char prefix[] = "node-role.kubernetes.io/";
    const char *roles[32];
    const cJSON *l;
    size_t n = 0;

    cJSON_ArrayForEach(l, emu_json_at(o, "metadata.labels"))
    {
        const char *role = NULL;
        if (!strncmp(l->string, prefix, sizeof(prefix) - 1) && l->string[sizeof(prefix) - 1])
            role = l->string + sizeof(prefix) - 1;
        else if (!strcmp(l->string, "kubernetes.io/role") && cJSON_IsString(l) && *l->valuestring)
            role = l->valuestring;
        if (role && n < N_OF(roles))
            roles[n++] = role;
    }
    qsort(roles, n, sizeof(roles[0]), by_string);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(roles[i], roles[i - 1]))
            kube_buf_printf(b, "%s%s", b->len ? "," : "", roles[i]);
    if (!b->len)
        kube_buf_puts(b, "<none>");
}

static void node_cells(cJSON *cells, const cJSON *o)
{
    const cJSON *c;
    const char *ready = NULL;
    kube_buf status = KUBE_BUF_INIT, roles = KUBE_BUF_INIT;

    cJSON_ArrayForEach(c, emu_json_at(o, "status.conditions"))
    {
        const char *t = emu_json_str(c, "type"), *st = emu_json_str(c, "status");
        if (t && !strcmp(t, "Ready"))
            ready = st && !strcmp(st, "True") ? "Ready" : "NotReady";
    }
    kube_buf_puts(&status, ready ? ready : "Unknown");
    if (cJSON_IsTrue(emu_json_at(o, "spec.unschedulable")))
        kube_buf_puts(&status, ",SchedulingDisabled");
    node_roles(o, &roles);
    add_name(cells, o);
    add_str(cells, status.data);
    add_str(cells, roles.data);
    add_age(cells, o);
    add_str(cells, emu_json_str(o, "status.nodeInfo.kubeletVersion"));
    add_str_or(cells, node_address(o, "InternalIP"), "<none>");
    add_str_or(cells, node_address(o, "ExternalIP"), "<none>");
    add_str_or(cells, emu_json_str(o, "status.nodeInfo.osImage"), "<unknown>");
    add_str_or(cells, emu_json_str(o, "status.nodeInfo.kernelVersion"), "<unknown>");
    add_str_or(cells, emu_json_str(o, "status.nodeInfo.containerRuntimeVersion"), "<unknown>");
    kube_buf_free(&status);
    kube_buf_free(&roles);
}

static const emu_column namespace_cols[] = {
    NAME_COL, {"Status", "string", "", "The status of the namespace", 0}, AGE_COL};

static void namespace_cells(cJSON *cells, const cJSON *o)
{
    add_name(cells, o);
    add_str(cells, emu_json_str(o, "status.phase"));
    add_age(cells, o);
}

/* ------------------------------------------------------------------ */
/* Events (core/v1 and events.k8s.io/v1)                               */
/* ------------------------------------------------------------------ */

static const emu_column event_cols[] = {
    {"Last Seen", "string", "",
     "The time at which the most recent occurrence of this event was recorded.", 0},
    {"Type", "string", "",
     "Type of this event (Normal, Warning), new types could be added in the future", 0},
    {"Reason", "string", "",
     "This should be a short, machine understandable string that gives the reason for the "
     "transition into the object's current status.",
     0},
    {"Object", "string", "", "The object that this event is about.", 0},
    {"Subobject", "string", "",
     "If referring to a piece of an object instead of an entire object, this string should "
     "contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. "
     "For example, if the object reference is to a container within a pod, this would take on a "
     "value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container "
     "that triggered the event) or if no container name is specified \"spec.containers[2]\" "
     "(container with index 2 in this pod). This syntax is chosen only to have some well-defined "
     "way of referencing a part of an object.",
     1},
    {"Source", "string", "",
     "The component reporting this event. Should be a short machine understandable string.", 1},
    {"Message", "string", "", "A human-readable description of the status of this operation.", 0},
    {"First Seen", "string", "",
     "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)", 1},
    {"Count", "string", "", "The number of times this event has occurred.", 1},
    {"Name", "string", "name", emu_desc_name, 1},
};

/* The fields of a core/v1 Event, read from either API's shape (the
 * events.k8s.io/v1 names are converted as kube-apiserver converts). */
typedef struct event_view {
    const char *first, *last, *event_time, *series_last;
    double count, series_count;
    const cJSON *regarding, *source;
    const char *type, *reason, *message, *controller, *instance;
} event_view;

static void event_read(const cJSON *o, int k8s_io, event_view *v)
{
    v->first = emu_json_str(o, k8s_io ? "deprecatedFirstTimestamp" : "firstTimestamp");
    v->last = emu_json_str(o, k8s_io ? "deprecatedLastTimestamp" : "lastTimestamp");
    v->count = num_at(o, k8s_io ? "deprecatedCount" : "count", 0);
    v->regarding = emu_json_at(o, k8s_io ? "regarding" : "involvedObject");
    v->source = emu_json_at(o, k8s_io ? "deprecatedSource" : "source");
    v->message = emu_json_str(o, k8s_io ? "note" : "message");
    v->event_time = emu_json_str(o, "eventTime");
    v->series_last = emu_json_str(o, "series.lastObservedTime");
    v->series_count = num_at(o, "series.count", 0);
    v->type = emu_json_str(o, "type");
    v->reason = emu_json_str(o, "reason");
    v->controller = emu_json_str(o, "reportingController");
    if (!v->controller)
        v->controller = emu_json_str(o, "reportingComponent");
    v->instance = emu_json_str(o, "reportingInstance");
}

static const char *first_set(const char *a, const char *b)
{
    return a && *a ? a : b ? b : "";
}

/* strings.TrimSpace of s into b. */
static void trim_space(const char *s, kube_buf *b)
{
    size_t n;

    s = s ? s : "";
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    kube_buf_printf(b, "%.*s", (int)n, s);
}

static void event_cells_of(cJSON *cells, const cJSON *o, int k8s_io)
{
    event_view v;
    char first[32], last[32];
    const char *kind, *name, *comp, *host;
    kube_buf target = KUBE_BUF_INIT, src = KUBE_BUF_INIT, msg = KUBE_BUF_INIT;
    double count;

    event_read(o, k8s_io, &v);
    emu_human_since(v.first && *v.first ? v.first : v.event_time, first, sizeof(first));
    if (v.last && *v.last)
        emu_human_since(v.last, last, sizeof(last));
    else
        snprintf(last, sizeof(last), "%s", first);
    count = v.count ? v.count : 1;
    if (emu_json_at(o, "series")) {
        emu_human_since(v.series_last, last, sizeof(last));
        count = v.series_count;
    }
    kind = emu_json_str(v.regarding, "kind");
    name = emu_json_str(v.regarding, "name");
    for (const char *p = kind ? kind : ""; *p; p++)
        kube_buf_printf(&target, "%c", *p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    if (name && *name)
        kube_buf_printf(&target, "/%s", name);
    comp = first_set(emu_json_str(v.source, "component"), v.controller);
    host = first_set(emu_json_str(v.source, "host"), v.instance);
    kube_buf_printf(&src, *host ? "%s, %s" : "%s", comp, host);
    trim_space(v.message, &msg);
    add_str(cells, last);
    add_str(cells, v.type);
    add_str(cells, v.reason);
    add_str(cells, target.data);
    add_str(cells, emu_json_str(v.regarding, "fieldPath"));
    add_str(cells, src.data);
    add_str(cells, msg.data);
    add_str(cells, first);
    add_int(cells, count);
    add_name(cells, o);
    kube_buf_free(&target);
    kube_buf_free(&src);
    kube_buf_free(&msg);
}

static void event_cells(cJSON *cells, const cJSON *o)
{
    event_cells_of(cells, o, 0);
}

static void eventk8s_cells(cJSON *cells, const cJSON *o)
{
    event_cells_of(cells, o, 1);
}

/* ------------------------------------------------------------------ */
/* Leases, deployments, services, APIServices                          */
/* ------------------------------------------------------------------ */

static const emu_column lease_cols[] = {
    NAME_COL,
    {"Holder", "string", "",
     "holderIdentity contains the identity of the holder of a current lease.", 0},
    AGE_COL};

static void lease_cells(cJSON *cells, const cJSON *o)
{
    add_name(cells, o);
    add_str(cells, emu_json_str(o, "spec.holderIdentity"));
    add_age(cells, o);
}

static const emu_column deploy_cols[] = {
    NAME_COL,
    {"Ready", "string", "", "Number of the pod with ready state", 0},
    {"Up-to-date", "string", "",
     "Total number of non-terminated pods targeted by this deployment that have the desired "
     "template spec.",
     0},
    {"Available", "string", "",
     "Total number of available pods (ready for at least minReadySeconds) targeted by this "
     "deployment.",
     0},
    AGE_COL,
    {"Containers", "string", "", "Names of each container in the template.", 1},
    {"Images", "string", "", "Images referenced by each container in the template.", 1},
    {"Selector", "string", "",
     "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the "
     "ones affected by this deployment. It must match the pod template's labels.",
     1},
};

void emu_label_selector_string(const cJSON *sel, kube_buf *b)
{
    const cJSON *it, *v;
    char *items[64];
    size_t n = 0;

    if (!sel) {
        kube_buf_puts(b, "<none>");
        return;
    }
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sel, "matchLabels"))
    {
        kube_buf one = KUBE_BUF_INIT;
        kube_buf_printf(&one, "%s=%s", it->string, cJSON_IsString(it) ? it->valuestring : "");
        if (n < N_OF(items))
            items[n++] = one.data;
        else
            kube_buf_free(&one);
    }
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sel, "matchExpressions"))
    {
        const char *key = emu_json_str(it, "key"), *op = emu_json_str(it, "operator");
        kube_buf one = KUBE_BUF_INIT;
        op = op ? op : "";
        if (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) {
            kube_buf_printf(&one, "%s%s", *op == 'D' ? "!" : "", key ? key : "");
        } else {
            kube_buf_printf(&one, "%s %s (", key ? key : "", !strcmp(op, "In") ? "in" : "notin");
            cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(it, "values"))
                kube_buf_printf(&one, "%s%s", one.data[one.len - 1] == '(' ? "" : ",",
                                cJSON_IsString(v) ? v->valuestring : "");
            kube_buf_puts(&one, ")");
        }
        if (n < N_OF(items))
            items[n++] = one.data;
        else
            kube_buf_free(&one);
    }
    qsort(items, n, sizeof(items[0]), by_string);
    for (size_t i = 0; i < n; i++) {
        kube_buf_printf(b, "%s%s", i ? "," : "", items[i] ? items[i] : "");
        free(items[i]);
    }
}

static void deploy_cells(cJSON *cells, const cJSON *o)
{
    const cJSON *ctrs = emu_json_at(o, "spec.template.spec.containers");
    kube_buf names = KUBE_BUF_INIT, images = KUBE_BUF_INIT, sel = KUBE_BUF_INIT;
    char ready[48];

    snprintf(ready, sizeof(ready), "%.0f/%.0f", num_at(o, "status.readyReplicas", 0),
             num_at(o, "spec.replicas", 1));
    join_member(ctrs, "name", ",", &names);
    join_member(ctrs, "image", ",", &images);
    emu_label_selector_string(emu_json_at(o, "spec.selector"), &sel);
    add_name(cells, o);
    add_str(cells, ready);
    add_int(cells, num_at(o, "status.updatedReplicas", 0));
    add_int(cells, num_at(o, "status.availableReplicas", 0));
    add_age(cells, o);
    add_str(cells, names.data);
    add_str(cells, images.data);
    add_str(cells, sel.data);
    kube_buf_free(&names);
    kube_buf_free(&images);
    kube_buf_free(&sel);
}

static const emu_column service_cols[] = {
    NAME_COL,
    {"Type", "string", "",
     "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are "
     "ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a "
     "cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by "
     "the selector or if that is not specified, by manual construction of an Endpoints object "
     "or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the "
     "endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" "
     "builds on ClusterIP and allocates a port on every node which routes to the same endpoints "
     "as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external "
     "load-balancer (if supported in the current cloud) which routes to the same endpoints as "
     "the clusterIP. \"ExternalName\" aliases this service to the specified externalName. "
     "Several other fields do not apply to ExternalName services. More info: "
     "https://kubernetes.io/docs/concepts/services-networking/service/"
     "#publishing-services-service-types",
     0},
    {"Cluster-IP", "string", "",
     "clusterIP is the IP address of the service and is usually assigned randomly.", 0},
    {"External-IP", "string", "",
     "externalIPs is a list of IP addresses for which nodes in the cluster will also accept "
     "traffic for this service.",
     0},
    {"Port(s)", "string", "", "The list of ports that are exposed by this service.", 0},
    AGE_COL,
    {"Selector", "string", "",
     "Route service traffic to pods with label keys and values matching this selector.", 1},
};

static void service_external_ip(const cJSON *o, const char *type, kube_buf *b)
{
    const cJSON *ext = emu_json_at(o, "spec.externalIPs"), *it;

    if (!strcmp(type, "ExternalName")) {
        kube_buf_puts(b, first_set(emu_json_str(o, "spec.externalName"), ""));
        return;
    }
    if (!strcmp(type, "LoadBalancer"))
        cJSON_ArrayForEach(it, emu_json_at(o, "status.loadBalancer.ingress"))
            kube_buf_printf(b, "%s%s", b->len ? "," : "",
                            first_set(emu_json_str(it, "ip"), emu_json_str(it, "hostname")));
    cJSON_ArrayForEach(it, ext) if (cJSON_IsString(it))
        kube_buf_printf(b, "%s%s", b->len ? "," : "", it->valuestring);
    if (!b->len)
        kube_buf_puts(b, !strcmp(type, "LoadBalancer")                             ? "<pending>"
                         : !strcmp(type, "ClusterIP") || !strcmp(type, "NodePort") ? "<none>"
                                                                                   : "<unknown>");
}

static void service_cells(cJSON *cells, const cJSON *o)
{
    const char *type = first_set(emu_json_str(o, "spec.type"), "ClusterIP");
    const cJSON *p, *ip = cJSON_GetArrayItem(emu_json_at(o, "spec.clusterIPs"), 0);
    kube_buf ext = KUBE_BUF_INIT, ports = KUBE_BUF_INIT, sel = KUBE_BUF_INIT;

    service_external_ip(o, type, &ext);
    cJSON_ArrayForEach(p, emu_json_at(o, "spec.ports"))
    {
        double node_port = num_at(p, "nodePort", 0);
        kube_buf_printf(&ports, "%s%.0f", ports.len ? "," : "", num_at(p, "port", 0));
        if (node_port > 0)
            kube_buf_printf(&ports, ":%.0f", node_port);
        kube_buf_printf(&ports, "/%s", first_set(emu_json_str(p, "protocol"), "TCP"));
    }
    format_labels(emu_json_at(o, "spec.selector"), &sel);
    add_name(cells, o);
    add_str(cells, type);
    add_str_or(cells, cJSON_IsString(ip) ? ip->valuestring : NULL, "<none>");
    add_str(cells, ext.data);
    add_str_or(cells, ports.data, "<none>");
    add_age(cells, o);
    add_str(cells, sel.data);
    kube_buf_free(&ext);
    kube_buf_free(&ports);
    kube_buf_free(&sel);
}

static const emu_column apiservice_cols[] = {
    NAME_COL,
    {"Service", "string", "", "The reference to the service that hosts this API endpoint.", 0},
    {"Available", "string", "", "Whether this service is available.", 0},
    AGE_COL};

static void apiservice_cells(cJSON *cells, const cJSON *o)
{
    const cJSON *c, *svc = emu_json_at(o, "spec.service");
    char service[256], avail[256];

    snprintf(avail, sizeof(avail), "Unknown");
    cJSON_ArrayForEach(c, emu_json_at(o, "status.conditions"))
    {
        const char *t = emu_json_str(c, "type"), *st = emu_json_str(c, "status");
        const char *reason = emu_json_str(c, "reason");
        if (!t || strcmp(t, "Available"))
            continue;
        if (st && strcmp(st, "True") && reason && *reason)
            snprintf(avail, sizeof(avail), "%s (%s)", st, reason);
        else
            snprintf(avail, sizeof(avail), "%s", st ? st : "");
        break;
    }
    if (cJSON_IsObject(svc))
        snprintf(service, sizeof(service), "%s/%s", first_set(emu_json_str(svc, "namespace"), ""),
                 first_set(emu_json_str(svc, "name"), ""));
    else
        snprintf(service, sizeof(service), "Local");
    add_name(cells, o);
    add_str(cells, service);
    add_str(cells, avail);
    add_age(cells, o);
}

/* ------------------------------------------------------------------ */
/* Config maps, secrets, service accounts, PodDisruptionBudgets        */
/* ------------------------------------------------------------------ */

static const emu_column configmap_cols[] = {
    NAME_COL,
    {"Data", "string", "",
     "Data contains the configuration data. Each key must consist of alphanumeric characters, "
     "'-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The "
     "keys stored in Data must not overlap with the keys in the BinaryData field, this is "
     "enforced during validation process.",
     0},
    AGE_COL};

static void configmap_cells(cJSON *cells, const cJSON *o)
{
    add_name(cells, o);
    add_int(cells, cJSON_GetArraySize(emu_json_at(o, "data")) +
                       cJSON_GetArraySize(emu_json_at(o, "binaryData")));
    add_age(cells, o);
}

static const emu_column secret_cols[] = {
    NAME_COL,
    {"Type", "string", "", "Used to facilitate programmatic handling of secret data.", 0},
    {"Data", "string", "",
     "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' "
     "or '.'. The serialized form of the secret data is a base64 encoded string, representing "
     "the arbitrary (possibly non-string) data value here. Described in "
     "https://tools.ietf.org/html/rfc4648#section-4",
     0},
    AGE_COL};

static void secret_cells(cJSON *cells, const cJSON *o)
{
    add_name(cells, o);
    add_str(cells, emu_json_str(o, "type"));
    add_int(cells, cJSON_GetArraySize(emu_json_at(o, "data")));
    add_age(cells, o);
}

static const emu_column sa_cols[] = {
    NAME_COL,
    {"Secrets", "string", "",
     "Secrets is the list of secrets allowed to be used by pods running using this "
     "ServiceAccount. More info: https://kubernetes.io/docs/concepts/configuration/secret",
     0},
    AGE_COL};

static void sa_cells(cJSON *cells, const cJSON *o)
{
    add_name(cells, o);
    add_int(cells, cJSON_GetArraySize(emu_json_at(o, "secrets")));
    add_age(cells, o);
}

static const emu_column pdb_cols[] = {
    NAME_COL,
    {"Min Available", "string", "", "The minimum number of pods that must be available.", 0},
    {"Max Unavailable", "string", "", "The maximum number of pods that may be unavailable.", 0},
    {"Allowed Disruptions", "integer", "",
     "Calculated number of pods that may be disrupted at this time.", 0},
    AGE_COL};

/* An IntOrString as its String(), or N/A when absent. */
static void add_int_or_string(cJSON *cells, const cJSON *v)
{
    char buf[64];

    if (cJSON_IsNumber(v)) {
        snprintf(buf, sizeof(buf), "%.0f", v->valuedouble);
        add_str(cells, buf);
    } else {
        add_str(cells, cJSON_IsString(v) ? v->valuestring : "N/A");
    }
}

static void pdb_cells(cJSON *cells, const cJSON *o)
{
    add_name(cells, o);
    add_int_or_string(cells, emu_json_at(o, "spec.minAvailable"));
    add_int_or_string(cells, emu_json_at(o, "spec.maxUnavailable"));
    add_int(cells, num_at(o, "status.disruptionsAllowed", 0));
    add_age(cells, o);
}

/* ------------------------------------------------------------------ */
/* The default convertor and dispatch                                  */
/* ------------------------------------------------------------------ */

static const emu_column default_cols[] = {NAME_COL,
                                          {"Created At", "date", "", emu_desc_created, 0}};

static void default_cells(cJSON *cells, const cJSON *o)
{
    add_name(cells, o);
    add_str(cells, emu_json_str(o, "metadata.creationTimestamp"));
}

typedef struct printer {
    const char *group;
    const char *plural;
    const emu_column *cols;
    size_t n_cols;
    void (*cells)(cJSON *cells, const cJSON *obj);
} printer;

#define PRINTER(g, p, cols, fn)    \
    {                              \
        g, p, cols, N_OF(cols), fn \
    }

static const printer printers[] = {
    PRINTER("", "pods", pod_cols, pod_cells),
    PRINTER("", "nodes", node_cols, node_cells),
    PRINTER("", "namespaces", namespace_cols, namespace_cells),
    PRINTER("", "events", event_cols, event_cells),
    PRINTER("events.k8s.io", "events", event_cols, eventk8s_cells),
    PRINTER("coordination.k8s.io", "leases", lease_cols, lease_cells),
    PRINTER("apps", "deployments", deploy_cols, deploy_cells),
    PRINTER("", "services", service_cols, service_cells),
    PRINTER("apiregistration.k8s.io", "apiservices", apiservice_cols, apiservice_cells),
    PRINTER("", "configmaps", configmap_cols, configmap_cells),
    PRINTER("", "secrets", secret_cols, secret_cells),
    PRINTER("", "serviceaccounts", sa_cols, sa_cells),
    PRINTER("policy", "poddisruptionbudgets", pdb_cols, pdb_cells),
};

static const printer default_printer = PRINTER("", "", default_cols, default_cells);

static const printer *printer_for(const emu_resource *r)
{
    for (size_t i = 0; i < N_OF(printers); i++)
        if (!strcmp(printers[i].group, r->def->group) &&
            !strcmp(printers[i].plural, r->def->plural))
            return &printers[i];
    return &default_printer;
}

cJSON *emu_printer_columns(const emu_resource *r)
{
    const printer *p;
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
