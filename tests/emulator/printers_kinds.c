/*
 * tests/emulator/printers_kinds.c - kube-apiserver's printers for the
 * built-in kinds besides pods (pkg/printers/internalversion as of v1.23,
 * and kube-aggregator's APIService convertor): nodes, namespaces, core and
 * events.k8s.io events, leases, deployments, services, APIServices, config
 * maps, secrets, service accounts and PodDisruptionBudgets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "printers.h"

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
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
    EMU_NAME_COL,
    {"Status", "string", "", "The status of the node", 0},
    {"Roles", "string", "", "The roles of the node", 0},
    EMU_AGE_COL,
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
        if (role && n < EMU_N_OF(roles))
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
    emu_cell_name(cells, o);
    emu_cell_str(cells, status.data);
    emu_cell_str(cells, roles.data);
    emu_cell_age(cells, o);
    emu_cell_str(cells, emu_json_str(o, "status.nodeInfo.kubeletVersion"));
    emu_cell_str_or(cells, node_address(o, "InternalIP"), "<none>");
    emu_cell_str_or(cells, node_address(o, "ExternalIP"), "<none>");
    emu_cell_str_or(cells, emu_json_str(o, "status.nodeInfo.osImage"), "<unknown>");
    emu_cell_str_or(cells, emu_json_str(o, "status.nodeInfo.kernelVersion"), "<unknown>");
    emu_cell_str_or(cells, emu_json_str(o, "status.nodeInfo.containerRuntimeVersion"), "<unknown>");
    kube_buf_free(&status);
    kube_buf_free(&roles);
}

static const emu_column namespace_cols[] = {
    EMU_NAME_COL, {"Status", "string", "", "The status of the namespace", 0}, EMU_AGE_COL};

static void namespace_cells(cJSON *cells, const cJSON *o)
{
    emu_cell_name(cells, o);
    emu_cell_str(cells, emu_json_str(o, "status.phase"));
    emu_cell_age(cells, o);
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
    v->count = emu_num_at(o, k8s_io ? "deprecatedCount" : "count", 0);
    v->regarding = emu_json_at(o, k8s_io ? "regarding" : "involvedObject");
    v->source = emu_json_at(o, k8s_io ? "deprecatedSource" : "source");
    v->message = emu_json_str(o, k8s_io ? "note" : "message");
    v->event_time = emu_json_str(o, "eventTime");
    v->series_last = emu_json_str(o, "series.lastObservedTime");
    v->series_count = emu_num_at(o, "series.count", 0);
    v->type = emu_json_str(o, "type");
    v->reason = emu_json_str(o, "reason");
    v->controller = emu_json_str(o, "reportingController");
    if (!v->controller)
        v->controller = emu_json_str(o, "reportingComponent");
    v->instance = emu_json_str(o, "reportingInstance");
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
    comp = emu_first_set(emu_json_str(v.source, "component"), v.controller);
    host = emu_first_set(emu_json_str(v.source, "host"), v.instance);
    kube_buf_printf(&src, *host ? "%s, %s" : "%s", comp, host);
    trim_space(v.message, &msg);
    emu_cell_str(cells, last);
    emu_cell_str(cells, v.type);
    emu_cell_str(cells, v.reason);
    emu_cell_str(cells, target.data);
    emu_cell_str(cells, emu_json_str(v.regarding, "fieldPath"));
    emu_cell_str(cells, src.data);
    emu_cell_str(cells, msg.data);
    emu_cell_str(cells, first);
    emu_cell_int(cells, count);
    emu_cell_name(cells, o);
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
    EMU_NAME_COL,
    {"Holder", "string", "",
     "holderIdentity contains the identity of the holder of a current lease.", 0},
    EMU_AGE_COL};

static void lease_cells(cJSON *cells, const cJSON *o)
{
    emu_cell_name(cells, o);
    emu_cell_str(cells, emu_json_str(o, "spec.holderIdentity"));
    emu_cell_age(cells, o);
}

static const emu_column deploy_cols[] = {
    EMU_NAME_COL,
    {"Ready", "string", "", "Number of the pod with ready state", 0},
    {"Up-to-date", "string", "",
     "Total number of non-terminated pods targeted by this deployment that have the desired "
     "template spec.",
     0},
    {"Available", "string", "",
     "Total number of available pods (ready for at least minReadySeconds) targeted by this "
     "deployment.",
     0},
    EMU_AGE_COL,
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
        if (n < EMU_N_OF(items))
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
        if (n < EMU_N_OF(items))
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

    snprintf(ready, sizeof(ready), "%.0f/%.0f", emu_num_at(o, "status.readyReplicas", 0),
             emu_num_at(o, "spec.replicas", 1));
    emu_join_member(ctrs, "name", ",", &names);
    emu_join_member(ctrs, "image", ",", &images);
    emu_label_selector_string(emu_json_at(o, "spec.selector"), &sel);
    emu_cell_name(cells, o);
    emu_cell_str(cells, ready);
    emu_cell_int(cells, emu_num_at(o, "status.updatedReplicas", 0));
    emu_cell_int(cells, emu_num_at(o, "status.availableReplicas", 0));
    emu_cell_age(cells, o);
    emu_cell_str(cells, names.data);
    emu_cell_str(cells, images.data);
    emu_cell_str(cells, sel.data);
    kube_buf_free(&names);
    kube_buf_free(&images);
    kube_buf_free(&sel);
}

static const emu_column service_cols[] = {
    EMU_NAME_COL,
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
     "clusterIP is the IP address of the service and is usually assigned randomly. If an "
     "address is specified manually, is in-range (as per system configuration), and is not in "
     "use, it will be allocated to the service; otherwise creation of the service will fail. "
     "This field may not be changed through updates unless the type field is also being "
     "changed to ExternalName (which requires this field to be blank) or the type field is "
     "being changed from ExternalName (in which case this field may optionally be specified, "
     "as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP "
     "address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is "
     "useful when direct endpoint connections are preferred and proxying is not required.  "
     "Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified "
     "when creating a Service of type ExternalName, creation will fail. This field will be "
     "wiped when updating a Service to type ExternalName. More info: "
     "https://kubernetes.io/docs/concepts/services-networking/service/"
     "#virtual-ips-and-service-proxies",
     0},
    {"External-IP", "string", "",
     "externalIPs is a list of IP addresses for which nodes in the cluster will also accept "
     "traffic for this service.  These IPs are not managed by Kubernetes.  The user is "
     "responsible for ensuring that traffic arrives at a node with this IP.  A common example "
     "is external load-balancers that are not part of the Kubernetes system.",
     0},
    {"Port(s)", "string", "",
     "The list of ports that are exposed by this service. More info: "
     "https://kubernetes.io/docs/concepts/services-networking/service/"
     "#virtual-ips-and-service-proxies",
     0},
    EMU_AGE_COL,
    {"Selector", "string", "",
     "Route service traffic to pods with label keys and values matching this selector. If "
     "empty or not present, the service is assumed to have an external process managing its "
     "endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, "
     "and LoadBalancer. Ignored if type is ExternalName. More info: "
     "https://kubernetes.io/docs/concepts/services-networking/service/",
     1},
};

static void service_external_ip(const cJSON *o, const char *type, kube_buf *b)
{
    const cJSON *ext = emu_json_at(o, "spec.externalIPs"), *it;

    if (!strcmp(type, "ExternalName")) {
        kube_buf_puts(b, emu_first_set(emu_json_str(o, "spec.externalName"), ""));
        return;
    }
    if (!strcmp(type, "LoadBalancer"))
        cJSON_ArrayForEach(it, emu_json_at(o, "status.loadBalancer.ingress"))
            kube_buf_printf(b, "%s%s", b->len ? "," : "",
                            emu_first_set(emu_json_str(it, "ip"), emu_json_str(it, "hostname")));
    cJSON_ArrayForEach(it, ext) if (cJSON_IsString(it))
        kube_buf_printf(b, "%s%s", b->len ? "," : "", it->valuestring);
    if (!b->len)
        kube_buf_puts(b, !strcmp(type, "LoadBalancer")                             ? "<pending>"
                         : !strcmp(type, "ClusterIP") || !strcmp(type, "NodePort") ? "<none>"
                                                                                   : "<unknown>");
}

static void service_cells(cJSON *cells, const cJSON *o)
{
    const char *type = emu_first_set(emu_json_str(o, "spec.type"), "ClusterIP");
    const cJSON *p, *ip = cJSON_GetArrayItem(emu_json_at(o, "spec.clusterIPs"), 0);
    kube_buf ext = KUBE_BUF_INIT, ports = KUBE_BUF_INIT, sel = KUBE_BUF_INIT;

    service_external_ip(o, type, &ext);
    cJSON_ArrayForEach(p, emu_json_at(o, "spec.ports"))
    {
        double node_port = emu_num_at(p, "nodePort", 0);
        kube_buf_printf(&ports, "%s%.0f", ports.len ? "," : "", emu_num_at(p, "port", 0));
        if (node_port > 0)
            kube_buf_printf(&ports, ":%.0f", node_port);
        kube_buf_printf(&ports, "/%s", emu_first_set(emu_json_str(p, "protocol"), "TCP"));
    }
    emu_format_labels(emu_json_at(o, "spec.selector"), &sel);
    emu_cell_name(cells, o);
    emu_cell_str(cells, type);
    emu_cell_str_or(cells, cJSON_IsString(ip) ? ip->valuestring : NULL, "<none>");
    emu_cell_str(cells, ext.data);
    emu_cell_str_or(cells, ports.data, "<none>");
    emu_cell_age(cells, o);
    emu_cell_str(cells, sel.data);
    kube_buf_free(&ext);
    kube_buf_free(&ports);
    kube_buf_free(&sel);
}

static const emu_column apiservice_cols[] = {
    EMU_NAME_COL,
    {"Service", "string", "", "The reference to the service that hosts this API endpoint.", 0},
    {"Available", "string", "", "Whether this service is available.", 0},
    EMU_AGE_COL};

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
        snprintf(service, sizeof(service), "%s/%s",
                 emu_first_set(emu_json_str(svc, "namespace"), ""),
                 emu_first_set(emu_json_str(svc, "name"), ""));
    else
        snprintf(service, sizeof(service), "Local");
    emu_cell_name(cells, o);
    emu_cell_str(cells, service);
    emu_cell_str(cells, avail);
    emu_cell_age(cells, o);
}

/* ------------------------------------------------------------------ */
/* Config maps, secrets, service accounts, PodDisruptionBudgets        */
/* ------------------------------------------------------------------ */

static const emu_column configmap_cols[] = {
    EMU_NAME_COL,
    {"Data", "string", "",
     "Data contains the configuration data. Each key must consist of alphanumeric characters, "
     "'-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The "
     "keys stored in Data must not overlap with the keys in the BinaryData field, this is "
     "enforced during validation process.",
     0},
    EMU_AGE_COL};

static void configmap_cells(cJSON *cells, const cJSON *o)
{
    emu_cell_name(cells, o);
    emu_cell_int(cells, cJSON_GetArraySize(emu_json_at(o, "data")) +
                            cJSON_GetArraySize(emu_json_at(o, "binaryData")));
    emu_cell_age(cells, o);
}

static const emu_column secret_cols[] = {
    EMU_NAME_COL,
    {"Type", "string", "", "Used to facilitate programmatic handling of secret data.", 0},
    {"Data", "string", "",
     "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' "
     "or '.'. The serialized form of the secret data is a base64 encoded string, representing "
     "the arbitrary (possibly non-string) data value here. Described in "
     "https://tools.ietf.org/html/rfc4648#section-4",
     0},
    EMU_AGE_COL};

static void secret_cells(cJSON *cells, const cJSON *o)
{
    emu_cell_name(cells, o);
    emu_cell_str(cells, emu_json_str(o, "type"));
    emu_cell_int(cells, cJSON_GetArraySize(emu_json_at(o, "data")));
    emu_cell_age(cells, o);
}

static const emu_column sa_cols[] = {
    EMU_NAME_COL,
    {"Secrets", "string", "",
     "Secrets is the list of secrets allowed to be used by pods running using this "
     "ServiceAccount. More info: https://kubernetes.io/docs/concepts/configuration/secret",
     0},
    EMU_AGE_COL};

static void sa_cells(cJSON *cells, const cJSON *o)
{
    emu_cell_name(cells, o);
    emu_cell_int(cells, cJSON_GetArraySize(emu_json_at(o, "secrets")));
    emu_cell_age(cells, o);
}

static const emu_column pdb_cols[] = {
    EMU_NAME_COL,
    {"Min Available", "string", "", "The minimum number of pods that must be available.", 0},
    {"Max Unavailable", "string", "", "The maximum number of pods that may be unavailable.", 0},
    {"Allowed Disruptions", "integer", "",
     "Calculated number of pods that may be disrupted at this time.", 0},
    EMU_AGE_COL};

/* An IntOrString as its String(), or N/A when absent. */
static void add_int_or_string(cJSON *cells, const cJSON *v)
{
    char buf[64];

    if (cJSON_IsNumber(v)) {
        snprintf(buf, sizeof(buf), "%.0f", v->valuedouble);
        emu_cell_str(cells, buf);
    } else {
        emu_cell_str(cells, cJSON_IsString(v) ? v->valuestring : "N/A");
    }
}

static void pdb_cells(cJSON *cells, const cJSON *o)
{
    emu_cell_name(cells, o);
    add_int_or_string(cells, emu_json_at(o, "spec.minAvailable"));
    add_int_or_string(cells, emu_json_at(o, "spec.maxUnavailable"));
    emu_cell_int(cells, emu_num_at(o, "status.disruptionsAllowed", 0));
    emu_cell_age(cells, o);
}

/* ------------------------------------------------------------------ */
/* The table                                                           */
/* ------------------------------------------------------------------ */

static const emu_printer printers[] = {
    EMU_PRINTER("", "nodes", node_cols, node_cells),
    EMU_PRINTER("", "namespaces", namespace_cols, namespace_cells),
    EMU_PRINTER("", "events", event_cols, event_cells),
    EMU_PRINTER("events.k8s.io", "events", event_cols, eventk8s_cells),
    EMU_PRINTER("coordination.k8s.io", "leases", lease_cols, lease_cells),
    EMU_PRINTER("apps", "deployments", deploy_cols, deploy_cells),
    EMU_PRINTER("", "services", service_cols, service_cells),
    EMU_PRINTER("apiregistration.k8s.io", "apiservices", apiservice_cols, apiservice_cells),
    EMU_PRINTER("", "configmaps", configmap_cols, configmap_cells),
    EMU_PRINTER("", "secrets", secret_cols, secret_cells),
    EMU_PRINTER("", "serviceaccounts", sa_cols, sa_cells),
    EMU_PRINTER("policy", "poddisruptionbudgets", pdb_cols, pdb_cells),
};

const emu_printer *emu_printer_of_kind(const char *group, const char *plural)
{
    for (size_t i = 0; i < EMU_N_OF(printers); i++)
        if (!strcmp(printers[i].group, group) && !strcmp(printers[i].plural, plural))
            return &printers[i];
    return NULL;
}
