/*
 * tests/emulator/kinds.c - what differs per kind: defaulting (the pod
 * defaults and admission plug-ins a v1.23 cluster applies), validation
 * (names, labels, pod update rules), field-selector values, key order of
 * the serialized object (Go struct order for typed kinds, sorted keys for
 * custom resources) and the empty object a BOOKMARK carries.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

/* ------------------------------------------------------------------ */
/* Field errors and the Invalid status                                 */
/* ------------------------------------------------------------------ */

void emu_ferrs_free(emu_ferrs *e)
{
    for (size_t i = 0; i < e->n; i++) {
        free(e->items[i].field);
        free(e->items[i].body);
    }
    memset(e, 0, sizeof(*e));
}

void emu_ferr_add(emu_ferrs *e, const char *type, const char *field, const char *fmt, ...)
{
    va_list ap;
    char body[1024];

    if (e->n >= sizeof(e->items) / sizeof(e->items[0]))
        return;
    va_start(ap, fmt);
    vsnprintf(body, sizeof(body), fmt, ap);
    va_end(ap);
    e->items[e->n].type = type;
    e->items[e->n].field = kube_strdup(field);
    e->items[e->n].body = kube_strdup(body);
    e->n++;
}

int emu_invalid(cJSON **st, const emu_resource *r, const char *name, emu_ferrs *errs)
{
    kube_buf msg = KUBE_BUF_INIT;
    cJSON *details = emu_details(name, r->def->group, r->def->kind);
    cJSON *causes = cJSON_CreateArray();
    int rc;

    kube_buf_printf(&msg, "%s%s%s \"%s\" is invalid: %s", r->def->kind, *r->def->group ? "." : "",
                    r->def->group, name ? name : "", errs->n > 1 ? "[" : "");
    for (size_t i = 0; i < errs->n; i++) {
        cJSON *c = cJSON_CreateObject();
        kube_buf_printf(&msg, "%s%s: %s", i ? ", " : "", errs->items[i].field, errs->items[i].body);
        cJSON_AddStringToObject(c, "reason", errs->items[i].type);
        cJSON_AddStringToObject(c, "message", errs->items[i].body);
        cJSON_AddStringToObject(c, "field", errs->items[i].field);
        cJSON_AddItemToArray(causes, c);
    }
    if (errs->n > 1)
        kube_buf_puts(&msg, "]");
    cJSON_AddItemToObject(details, "causes", causes);
    rc = emu_fail(st, 422, "Invalid", details, "%s", msg.data ? msg.data : "");
    kube_buf_free(&msg);
    emu_ferrs_free(errs);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Names and labels                                                    */
/* ------------------------------------------------------------------ */

static const char dns1123_subdomain_msg[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
static const char dns1123_label_msg[] =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
static const char label_value_msg[] =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

static int lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int is_dns_label(const char *s, size_t n)
{
    if (n == 0 || n > 63 || !lower_alnum(s[0]) || !lower_alnum(s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!lower_alnum(s[i]) && s[i] != '-')
            return 0;
    return 1;
}

static int is_dns_subdomain(const char *s)
{
    const char *p = s;

    if (!*s || strlen(s) > 253)
        return 0;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n == 0 || !lower_alnum(p[0]) || !lower_alnum(p[n - 1]))
            return 0;
        for (size_t i = 0; i < n; i++)
            if (!lower_alnum(p[i]) && p[i] != '-')
                return 0;
        if (!dot)
            return 1;
        p = dot + 1;
    }
}

/* path.IsValidPathSegmentName: RBAC objects (ValidateRBACName) may be named
 * "system:auth-delegator". */
static void check_path_segment_name(const char *name, emu_ferrs *errs)
{
    const char *why = !strcmp(name, ".")    ? "may not be '.'"
                      : !strcmp(name, "..") ? "may not be '..'"
                      : strchr(name, '/')   ? "may not contain '/'"
                      : strchr(name, '%')   ? "may not contain '%'"
                                            : NULL;

    if (why)
        emu_ferr_add(errs, "FieldValueInvalid", "metadata.name", "Invalid value: \"%s\": %s", name,
                     why);
}

static void check_name(const emu_resource *r, const char *name, emu_ferrs *errs)
{
    int label = !strcmp(r->def->plural, "namespaces");
    size_t max = label ? 63 : 253;

    if (!name || !*name) {
        emu_ferr_add(errs, "FieldValueRequired", "metadata.name",
                     "Required value: name or generateName is required");
        return;
    }
    if (!strcmp(r->def->group, "rbac.authorization.k8s.io")) {
        check_path_segment_name(name, errs);
        return;
    }
    if (label ? !is_dns_label(name, strlen(name)) : !is_dns_subdomain(name))
        emu_ferr_add(errs, "FieldValueInvalid", "metadata.name", "Invalid value: \"%s\": %s", name,
                     label ? dns1123_label_msg : dns1123_subdomain_msg);
    if (strlen(name) > max)
        emu_ferr_add(errs, "FieldValueInvalid", "metadata.name",
                     "Invalid value: \"%s\": must be no more than %zu characters", name, max);
}

static int label_value_ok(const char *v)
{
    size_t n = strlen(v);

    if (n == 0)
        return 1;
    if (n > 63 || !isalnum((unsigned char)v[0]) || !isalnum((unsigned char)v[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)v[i]) && !strchr("-_.", v[i]))
            return 0;
    return 1;
}

static int label_key_ok(const char *k)
{
    const char *slash = strchr(k, '/');
    const char *name = slash ? slash + 1 : k;

    if (!*name || !label_value_ok(name))
        return 0;
    if (slash) {
        char prefix[254];
        size_t n = (size_t)(slash - k);
        if (n == 0 || n > 253)
            return 0;
        memcpy(prefix, k, n);
        prefix[n] = '\0';
        return is_dns_subdomain(prefix);
    }
    return 1;
}

static void check_labels(const cJSON *obj, emu_ferrs *errs)
{
    const cJSON *labels = emu_json_at(obj, "metadata.labels"), *l;

    if (labels && !cJSON_IsObject(labels)) {
        emu_ferr_add(errs, "FieldValueInvalid", "metadata.labels", "Invalid value: %s",
                     "must be a map of strings");
        return;
    }
    cJSON_ArrayForEach(l, labels)
    {
        if (!label_key_ok(l->string))
            emu_ferr_add(errs, "FieldValueInvalid", "metadata.labels",
                         "Invalid value: \"%s\": name part must consist of alphanumeric "
                         "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                         "character",
                         l->string);
        else if (!cJSON_IsString(l) || !label_value_ok(l->valuestring))
            emu_ferr_add(errs, "FieldValueInvalid", "metadata.labels", "Invalid value: \"%s\": %s",
                         cJSON_IsString(l) ? l->valuestring : "", label_value_msg);
    }
}

int emu_validate_meta(const emu_resource *r, const cJSON *obj, cJSON **st)
{
    emu_ferrs errs = {0};
    const char *name = emu_json_str(obj, "metadata.name");

    check_name(r, name, &errs);
    check_labels(obj, &errs);
    if (errs.n)
        return emu_invalid(st, r, name, &errs);
    return KUBE_OK;
}

/* ------------------------------------------------------------------ */
/* Key order                                                           */
/* ------------------------------------------------------------------ */

static const char *const meta_order[] = {"name",
                                         "generateName",
                                         "namespace",
                                         "selfLink",
                                         "uid",
                                         "resourceVersion",
                                         "generation",
                                         "creationTimestamp",
                                         "deletionTimestamp",
                                         "deletionGracePeriodSeconds",
                                         "labels",
                                         "annotations",
                                         "ownerReferences",
                                         "finalizers",
                                         "clusterName",
                                         "managedFields",
                                         NULL};
static const char *const top_order[] = {"kind", "apiVersion", "metadata", NULL};
static const char *const podspec_order[] = {"volumes",
                                            "initContainers",
                                            "containers",
                                            "ephemeralContainers",
                                            "restartPolicy",
                                            "terminationGracePeriodSeconds",
                                            "activeDeadlineSeconds",
                                            "dnsPolicy",
                                            "nodeSelector",
                                            "serviceAccountName",
                                            "serviceAccount",
                                            "automountServiceAccountToken",
                                            "nodeName",
                                            "hostNetwork",
                                            "hostPID",
                                            "hostIPC",
                                            "shareProcessNamespace",
                                            "securityContext",
                                            "imagePullSecrets",
                                            "hostname",
                                            "subdomain",
                                            "affinity",
                                            "schedulerName",
                                            "tolerations",
                                            "hostAliases",
                                            "priorityClassName",
                                            "priority",
                                            "dnsConfig",
                                            "readinessGates",
                                            "runtimeClassName",
                                            "enableServiceLinks",
                                            "preemptionPolicy",
                                            "overhead",
                                            "topologySpreadConstraints",
                                            "setHostnameAsFQDN",
                                            "os",
                                            NULL};
static const char *const container_order[] = {"name",
                                              "image",
                                              "command",
                                              "args",
                                              "workingDir",
                                              "ports",
                                              "envFrom",
                                              "env",
                                              "resources",
                                              "volumeMounts",
                                              "volumeDevices",
                                              "livenessProbe",
                                              "readinessProbe",
                                              "startupProbe",
                                              "lifecycle",
                                              "terminationMessagePath",
                                              "terminationMessagePolicy",
                                              "imagePullPolicy",
                                              "securityContext",
                                              "stdin",
                                              "stdinOnce",
                                              "tty",
                                              NULL};
static const char *const podstatus_order[] = {"phase",
                                              "conditions",
                                              "message",
                                              "reason",
                                              "nominatedNodeName",
                                              "hostIP",
                                              "podIP",
                                              "podIPs",
                                              "startTime",
                                              "initContainerStatuses",
                                              "containerStatuses",
                                              "qosClass",
                                              "ephemeralContainerStatuses",
                                              NULL};
static const char *const condition_order[] = {
    "type",    "status", "lastProbeTime", "lastHeartbeatTime", "lastTransitionTime", "reason",
    "message", NULL};
static const char *const resources_order[] = {"limits", "requests", NULL};
static const char *const toleration_order[] = {"key",    "operator",          "value",
                                               "effect", "tolerationSeconds", NULL};
static const char *const nodespec_order[] = {"podCIDR",       "podCIDRs", "providerID",
                                             "unschedulable", "taints",   "configSource",
                                             "externalID",    NULL};
static const char *const nodestatus_order[] = {
    "capacity", "allocatable", "phase",        "conditions",      "addresses", "daemonEndpoints",
    "nodeInfo", "images",      "volumesInUse", "volumesAttached", "config",    NULL};
static const char *const lease_order[] = {"holderIdentity", "leaseDurationSeconds", "acquireTime",
                                          "renewTime",      "leaseTransitions",     NULL};
static const char *const event_order[] = {"kind",
                                          "apiVersion",
                                          "metadata",
                                          "involvedObject",
                                          "reason",
                                          "message",
                                          "source",
                                          "firstTimestamp",
                                          "lastTimestamp",
                                          "count",
                                          "type",
                                          "eventTime",
                                          "series",
                                          "action",
                                          "related",
                                          "reportingComponent",
                                          "reportingInstance",
                                          NULL};
static const char *const eventsk8s_order[] = {"kind",
                                              "apiVersion",
                                              "metadata",
                                              "eventTime",
                                              "series",
                                              "reportingController",
                                              "reportingInstance",
                                              "action",
                                              "reason",
                                              "regarding",
                                              "related",
                                              "note",
                                              "type",
                                              "deprecatedSource",
                                              "deprecatedFirstTimestamp",
                                              "deprecatedLastTimestamp",
                                              "deprecatedCount",
                                              NULL};
static const char *const objref_order[] = {"kind",       "namespace",       "name",      "uid",
                                           "apiVersion", "resourceVersion", "fieldPath", NULL};
static const char *const configmap_order[] = {"kind", "apiVersion", "metadata", "immutable",
                                              "data", "binaryData", NULL};

static void order_each(cJSON *list, const char *const *order)
{
    cJSON *e;

    cJSON_ArrayForEach(e, list) emu_json_order_keys(e, order);
}

static void sort_at(cJSON *obj, const char *path)
{
    cJSON *m = emu_json_at(obj, path);

    if (cJSON_IsObject(m)) {
        /* a Go map: keys sorted (values are strings or quantities) */
        cJSON *saved = m->child;
        size_t n = 0;
        for (cJSON *c = saved; c; c = c->next)
            n++;
        if (n > 1)
            emu_json_sort_keys(m);
    }
}

/* ObjectMeta's omitempty maps and lists vanish when empty. */
static void drop_empty_meta(cJSON *obj)
{
    static const char *const keys[] = {"labels", "annotations", "ownerReferences", "finalizers",
                                       "generateName"};
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");

    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, keys[i]);
        if (v && (cJSON_IsNull(v) || ((cJSON_IsObject(v) || cJSON_IsArray(v)) && !v->child) ||
                  (cJSON_IsString(v) && !*v->valuestring)))
            cJSON_DeleteItemFromObjectCaseSensitive(meta, keys[i]);
    }
}

/* Go's metav1.Time members without omitempty effect are always written
 * (null when unset). */
static void condition_times(cJSON *conds, const char *const *keys)
{
    cJSON *c;

    cJSON_ArrayForEach(c, conds) for (size_t i = 0; keys[i];
                                      i++) if (cJSON_IsObject(c) &&
                                               !cJSON_GetObjectItemCaseSensitive(c, keys[i]))
        cJSON_AddNullToObject(c, keys[i]);
}

static void normalize_meta(cJSON *obj)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");

    drop_empty_meta(obj);
    emu_json_order_keys(meta, meta_order);
    sort_at(obj, "metadata.labels");
    sort_at(obj, "metadata.annotations");
}

static void normalize_containers(cJSON *list)
{
    cJSON *c;

    cJSON_ArrayForEach(c, list)
    {
        emu_json_order_keys(c, container_order);
        emu_json_order_keys(cJSON_GetObjectItemCaseSensitive(c, "resources"), resources_order);
        sort_at(c, "resources.limits");
        sort_at(c, "resources.requests");
    }
}

static void normalize_pod(cJSON *obj)
{
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");

    emu_json_order_keys(spec, podspec_order);
    normalize_containers(cJSON_GetObjectItemCaseSensitive(spec, "containers"));
    normalize_containers(cJSON_GetObjectItemCaseSensitive(spec, "initContainers"));
    order_each(cJSON_GetObjectItemCaseSensitive(spec, "tolerations"), toleration_order);
    sort_at(obj, "spec.nodeSelector");
    emu_json_order_keys(status, podstatus_order);
    condition_times(cJSON_GetObjectItemCaseSensitive(status, "conditions"),
                    (const char *const[]){"lastProbeTime", "lastTransitionTime", NULL});
    order_each(cJSON_GetObjectItemCaseSensitive(status, "conditions"), condition_order);
}

static void normalize_node(cJSON *obj)
{
    cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");

    emu_json_order_keys(cJSON_GetObjectItemCaseSensitive(obj, "spec"), nodespec_order);
    emu_json_order_keys(status, nodestatus_order);
    sort_at(obj, "status.capacity");
    sort_at(obj, "status.allocatable");
    condition_times(cJSON_GetObjectItemCaseSensitive(status, "conditions"),
                    (const char *const[]){"lastHeartbeatTime", "lastTransitionTime", NULL});
    order_each(cJSON_GetObjectItemCaseSensitive(status, "conditions"), condition_order);
}

void emu_normalize_meta(const emu_resource *r, cJSON *obj)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");

    if (r->def->custom)
        emu_json_sort_keys(meta);
    else
        emu_json_order_keys(meta, meta_order);
}

void emu_normalize(const emu_resource *r, cJSON *obj)
{
    const char *plural = r->def->plural;

    if (r->def->custom) {
        drop_empty_meta(obj);
        emu_json_sort_keys(obj);
        return;
    }
    if (!strcmp(plural, "events") && !*r->def->group) {
        emu_json_order_keys(obj, event_order);
        emu_json_order_keys(cJSON_GetObjectItemCaseSensitive(obj, "involvedObject"), objref_order);
    } else if (!strcmp(plural, "events")) {
        emu_json_order_keys(obj, eventsk8s_order);
        emu_json_order_keys(cJSON_GetObjectItemCaseSensitive(obj, "regarding"), objref_order);
        emu_json_order_keys(cJSON_GetObjectItemCaseSensitive(obj, "related"), objref_order);
    } else if (!strcmp(plural, "configmaps")) {
        emu_json_order_keys(obj, configmap_order);
        sort_at(obj, "data");
        sort_at(obj, "binaryData");
    } else {
        emu_json_order_keys(obj, top_order);
    }
    normalize_meta(obj);
    if (!strcmp(plural, "pods"))
        normalize_pod(obj);
    else if (!strcmp(plural, "nodes"))
        normalize_node(obj);
    else if (!strcmp(plural, "leases"))
        emu_json_order_keys(cJSON_GetObjectItemCaseSensitive(obj, "spec"), lease_order);
}

/* ------------------------------------------------------------------ */
/* Pods                                                                */
/* ------------------------------------------------------------------ */

static void default_str(cJSON *o, const char *key, const char *value)
{
    if (!cJSON_GetObjectItemCaseSensitive(o, key))
        cJSON_AddStringToObject(o, key, value);
}

static void default_num(cJSON *o, const char *key, double value)
{
    if (!cJSON_GetObjectItemCaseSensitive(o, key))
        cJSON_AddNumberToObject(o, key, value);
}

static const char *pull_policy(const char *image)
{
    const char *slash = image ? strrchr(image, '/') : NULL;
    const char *tail = slash ? slash + 1 : image;
    const char *colon = tail ? strchr(tail, ':') : NULL;

    if (!image || strchr(image, '@'))
        return "IfNotPresent";
    if (!colon || !strcmp(colon, ":latest"))
        return "Always";
    return "IfNotPresent";
}

static void default_container(cJSON *c)
{
    if (!cJSON_IsObject(c))
        return;
    if (!cJSON_GetObjectItemCaseSensitive(c, "resources"))
        cJSON_AddItemToObject(c, "resources", cJSON_CreateObject());
    default_str(c, "terminationMessagePath", "/dev/termination-log");
    default_str(c, "terminationMessagePolicy", "File");
    default_str(c, "imagePullPolicy", pull_policy(emu_json_str(c, "image")));
}

static int has_toleration(const cJSON *tols, const char *key)
{
    const cJSON *t;

    cJSON_ArrayForEach(t, tols)
    {
        const char *k = emu_json_str(t, "key");
        if (k && !strcmp(k, key))
            return 1;
    }
    return 0;
}

static void default_tolerations(cJSON *spec)
{
    static const char *const keys[] = {"node.kubernetes.io/not-ready",
                                       "node.kubernetes.io/unreachable"};
    cJSON *tols = cJSON_GetObjectItemCaseSensitive(spec, "tolerations");

    if (!tols) {
        tols = cJSON_CreateArray();
        cJSON_AddItemToObject(spec, "tolerations", tols);
    }
    for (size_t i = 0; i < 2; i++) {
        cJSON *t;
        if (has_toleration(tols, keys[i]))
            continue;
        t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "key", keys[i]);
        cJSON_AddStringToObject(t, "operator", "Exists");
        cJSON_AddStringToObject(t, "effect", "NoExecute");
        cJSON_AddNumberToObject(t, "tolerationSeconds", 300);
        cJSON_AddItemToArray(tols, t);
    }
}

/* The projected service-account volume the ServiceAccount admission adds. */
static void add_sa_volume(cJSON *spec)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    char name[32], uuid[37];
    cJSON *vols, *vol, *c;
    const cJSON *automount = cJSON_GetObjectItemCaseSensitive(spec, "automountServiceAccountToken");

    if (cJSON_IsFalse(automount))
        return;
    emu_uuid(uuid);
    snprintf(name, sizeof(name), "kube-api-access-");
    for (int i = 0; i < 5; i++)
        name[16 + i] = alphabet[(unsigned char)uuid[i * 7 % 36] % (sizeof(alphabet) - 1)];
    name[21] = '\0';
    vols = cJSON_GetObjectItemCaseSensitive(spec, "volumes");
    if (!vols) {
        vols = cJSON_CreateArray();
        cJSON_AddItemToObject(spec, "volumes", vols);
    }
    vol =
        cJSON_Parse("{\"projected\":{\"sources\":[{\"serviceAccountToken\":{\"expirationSeconds\":"
                    "3607,\"path\":\"token\"}},{\"configMap\":{\"name\":\"kube-root-ca.crt\","
                    "\"items\":[{\"key\":\"ca.crt\",\"path\":\"ca.crt\"}]}},{\"downwardAPI\":{"
                    "\"items\":[{\"path\":\"namespace\",\"fieldRef\":{\"apiVersion\":\"v1\","
                    "\"fieldPath\":\"metadata.namespace\"}}]}}],\"defaultMode\":420}}");
    if (!vol)
        return;
    cJSON_AddItemToObject(vol, "name", cJSON_CreateString(name));
    emu_json_order_keys(vol, (const char *const[]){"name", "projected", NULL});
    cJSON_AddItemToArray(vols, vol);
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "containers"))
    {
        cJSON *mounts = cJSON_GetObjectItemCaseSensitive(c, "volumeMounts"), *m;
        if (!mounts) {
            mounts = cJSON_CreateArray();
            cJSON_AddItemToObject(c, "volumeMounts", mounts);
        }
        m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "name", name);
        cJSON_AddTrueToObject(m, "readOnly");
        cJSON_AddStringToObject(m, "mountPath", "/var/run/secrets/kubernetes.io/serviceaccount");
        cJSON_AddItemToArray(mounts, m);
    }
}

static void pod_spec_defaults(cJSON *spec)
{
    cJSON *c;

    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "containers"))
        default_container(c);
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "initContainers"))
        default_container(c);
    default_str(spec, "restartPolicy", "Always");
    default_num(spec, "terminationGracePeriodSeconds", 30);
    default_str(spec, "dnsPolicy", "ClusterFirst");
    default_str(spec, "serviceAccountName", "default");
    default_str(spec, "serviceAccount", emu_json_str(spec, "serviceAccountName"));
    if (!cJSON_GetObjectItemCaseSensitive(spec, "securityContext"))
        cJSON_AddItemToObject(spec, "securityContext", cJSON_CreateObject());
    default_str(spec, "schedulerName", "default-scheduler");
    default_tolerations(spec);
    default_num(spec, "priority", 0);
    if (!cJSON_GetObjectItemCaseSensitive(spec, "enableServiceLinks"))
        cJSON_AddTrueToObject(spec, "enableServiceLinks");
    default_str(spec, "preemptionPolicy", "PreemptLowerPriority");
}

static int has_cpu_mem(const cJSON *list)
{
    return cJSON_GetObjectItemCaseSensitive(list, "cpu") ||
           cJSON_GetObjectItemCaseSensitive(list, "memory");
}

static const char *qos_class(const cJSON *spec)
{
    const cJSON *c;
    int any = 0, guaranteed = 1;

    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "containers"))
    {
        const cJSON *req = emu_json_at(c, "resources.requests");
        const cJSON *lim = emu_json_at(c, "resources.limits");
        static const char *const res[] = {"cpu", "memory"};
        any |= has_cpu_mem(req) || has_cpu_mem(lim);
        for (size_t i = 0; i < 2; i++) {
            const cJSON *l = cJSON_GetObjectItemCaseSensitive(lim, res[i]);
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(req, res[i]);
            if (!l || (r && !emu_json_equal(l, r)))
                guaranteed = 0;
        }
    }
    if (!any)
        return "BestEffort";
    return guaranteed ? "Guaranteed" : "Burstable";
}

static int pod_validate_spec(const emu_resource *r, const cJSON *obj, cJSON **st)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    const cJSON *containers = cJSON_GetObjectItemCaseSensitive(spec, "containers"), *c;
    emu_ferrs errs = {0};
    int i = 0;
    char field[64];

    if (cJSON_GetArraySize(containers) == 0)
        emu_ferr_add(&errs, "FieldValueRequired", "spec.containers", "Required value");
    cJSON_ArrayForEach(c, containers)
    {
        if (!emu_json_str(c, "name")) {
            snprintf(field, sizeof(field), "spec.containers[%d].name", i);
            emu_ferr_add(&errs, "FieldValueRequired", field, "Required value");
        }
        if (!emu_json_str(c, "image")) {
            snprintf(field, sizeof(field), "spec.containers[%d].image", i);
            emu_ferr_add(&errs, "FieldValueRequired", field, "Required value");
        }
        i++;
    }
    if (errs.n)
        return emu_invalid(st, r, emu_json_str(obj, "metadata.name"), &errs);
    return KUBE_OK;
}

static int pod_create(emu_resource *r, cJSON *obj, cJSON **st)
{
    cJSON *spec = emu_json_obj(obj, "spec"), *status;
    int rc = pod_validate_spec(r, obj, st);

    if (rc != KUBE_OK)
        return rc;
    pod_spec_defaults(spec);
    add_sa_volume(spec); /* spec.nodeName kept: such a pod bypasses the scheduler */
    status = cJSON_CreateObject();
    cJSON_AddStringToObject(status, "phase", "Pending");
    cJSON_AddStringToObject(status, "qosClass", qos_class(spec));
    return emu_json_put(obj, "status", status);
}

/* What a pod update may change: images, activeDeadlineSeconds,
 * terminationGracePeriodSeconds and added tolerations. */
static int pod_spec_update_ok(const cJSON *old_spec, const cJSON *new_spec)
{
    cJSON *copy = cJSON_Duplicate(new_spec, 1), *c;
    const cJSON *oc;
    int ok;

    if (!copy)
        return 0;
    pod_spec_defaults(copy);
    static const char *const lists[] = {"containers", "initContainers"};
    for (size_t l = 0; l < 2; l++) {
        cJSON *nl = cJSON_GetObjectItemCaseSensitive(copy, lists[l]);
        const cJSON *ol = cJSON_GetObjectItemCaseSensitive(old_spec, lists[l]);
        if (cJSON_GetArraySize(nl) != cJSON_GetArraySize(ol))
            continue;
        for (c = nl ? nl->child : NULL, oc = ol ? ol->child : NULL; c && oc;
             c = c->next, oc = oc->next) {
            const cJSON *img = cJSON_GetObjectItemCaseSensitive(oc, "image");
            if (img)
                emu_json_put(c, "image", cJSON_Duplicate(img, 1));
        }
    }
    static const char *const free_keys[] = {"activeDeadlineSeconds",
                                            "terminationGracePeriodSeconds", "tolerations"};
    for (size_t k = 0; k < 3; k++) {
        const cJSON *ov = cJSON_GetObjectItemCaseSensitive(old_spec, free_keys[k]);
        cJSON_DeleteItemFromObjectCaseSensitive(copy, free_keys[k]);
        if (ov)
            cJSON_AddItemToObject(copy, free_keys[k], cJSON_Duplicate(ov, 1));
    }
    ok = emu_json_equal(copy, old_spec);
    cJSON_Delete(copy);
    return ok;
}

static int pod_update(emu_resource *r, const cJSON *old, cJSON *obj, int status_only, cJSON **st)
{
    const cJSON *old_spec = cJSON_GetObjectItemCaseSensitive(old, "spec");
    emu_ferrs errs = {0};

    if (status_only)
        return KUBE_OK;
    if (!pod_spec_update_ok(old_spec, cJSON_GetObjectItemCaseSensitive(obj, "spec"))) {
        emu_ferr_add(&errs, "FieldValueForbidden", "spec",
                     "Forbidden: pod updates may not change fields other than "
                     "`spec.containers[*].image`, `spec.initContainers[*].image`, "
                     "`spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to "
                     "existing tolerations) or `spec.terminationGracePeriodSeconds` (allow it to "
                     "be set to 1 if it was previously negative)");
        return emu_invalid(st, r, emu_json_str(obj, "metadata.name"), &errs);
    }
    /* keep the defaulted spec, with the allowed changes applied */
    {
        cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
        if (spec)
            pod_spec_defaults(spec);
    }
    return KUBE_OK;
}

static void pod_fields(const cJSON *obj, const char **v)
{
    v[0] = emu_json_str(obj, "spec.nodeName");
    v[1] = emu_json_str(obj, "spec.restartPolicy");
    v[2] = emu_json_str(obj, "spec.schedulerName");
    v[3] = emu_json_str(obj, "spec.serviceAccountName");
    v[4] = emu_json_str(obj, "status.phase");
    v[5] = emu_json_str(obj, "status.podIP");
    v[6] = emu_json_str(obj, "status.nominatedNodeName");
}

const char *const emu_pod_fields[] = {
    "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",       "spec.serviceAccountName",
    "status.phase",  "status.podIP",       "status.nominatedNodeName", NULL};

const emu_kind_ops emu_pod_ops = {
    .on_create = pod_create,
    .on_update = pod_update,
    .fields = pod_fields,
    .bookmark = "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"%RV%"
                "\",\"creationTimestamp\":null},\"spec\":{\"containers\":null},\"status\":{}}",
};

/* ------------------------------------------------------------------ */
/* Nodes, namespaces, events, leases, config maps, custom resources    */
/* ------------------------------------------------------------------ */

static void node_fields(const cJSON *obj, const char **v)
{
    const cJSON *u = emu_json_at(obj, "spec.unschedulable");

    v[0] = cJSON_IsTrue(u) ? "true" : "false";
}

const char *const emu_node_fields[] = {"spec.unschedulable", NULL};

const emu_kind_ops emu_node_ops = {
    .fields = node_fields,
    .bookmark = "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"%RV%"
                "\",\"creationTimestamp\":null},\"spec\":{},\"status\":{\"daemonEndpoints\":{"
                "\"kubeletEndpoint\":{\"Port\":0}},\"nodeInfo\":{\"machineID\":\"\","
                "\"systemUUID\":\"\",\"bootID\":\"\",\"kernelVersion\":\"\",\"osImage\":\"\","
                "\"containerRuntimeVersion\":\"\",\"kubeletVersion\":\"\",\"kubeProxyVersion\":"
                "\"\",\"operatingSystem\":\"\",\"architecture\":\"\"}}}",
};

static int namespace_create(emu_resource *r, cJSON *obj, cJSON **st)
{
    cJSON *spec = emu_json_obj(obj, "spec"), *status = cJSON_CreateObject(), *fin;
    cJSON *labels = emu_json_obj(emu_json_obj(obj, "metadata"), "labels");
    const char *name = emu_json_str(obj, "metadata.name");

    (void)r;
    (void)st;
    if (!cJSON_GetObjectItemCaseSensitive(spec, "finalizers")) {
        fin = cJSON_CreateArray();
        cJSON_AddItemToArray(fin, cJSON_CreateString("kubernetes"));
        cJSON_AddItemToObject(spec, "finalizers", fin);
    }
    cJSON_AddStringToObject(status, "phase", "Active");
    emu_json_put(obj, "status", status);
    return emu_json_put_str(labels, "kubernetes.io/metadata.name", name ? name : "");
}

const emu_kind_ops emu_namespace_ops = {
    .on_create = namespace_create,
    .bookmark = "{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":"
                "\"%RV%\",\"creationTimestamp\":null},\"spec\":{},\"status\":{}}",
};

const emu_kind_ops emu_configmap_ops = {
    .bookmark = "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":"
                "\"%RV%\",\"creationTimestamp\":null}}",
};

static void event_fields(const cJSON *obj, const char **v)
{
    v[0] = emu_json_str(obj, "involvedObject.kind");
    v[1] = emu_json_str(obj, "involvedObject.namespace");
    v[2] = emu_json_str(obj, "involvedObject.name");
    v[3] = emu_json_str(obj, "involvedObject.uid");
    v[4] = emu_json_str(obj, "involvedObject.apiVersion");
    v[5] = emu_json_str(obj, "involvedObject.resourceVersion");
    v[6] = emu_json_str(obj, "involvedObject.fieldPath");
    v[7] = emu_json_str(obj, "reason");
    v[8] = emu_json_str(obj, "reportingComponent");
    v[9] = emu_json_str(obj, "source.component");
    v[10] = emu_json_str(obj, "type");
}

const char *const emu_event_fields[] = {"involvedObject.kind",
                                        "involvedObject.namespace",
                                        "involvedObject.name",
                                        "involvedObject.uid",
                                        "involvedObject.apiVersion",
                                        "involvedObject.resourceVersion",
                                        "involvedObject.fieldPath",
                                        "reason",
                                        "reportingComponent",
                                        "source",
                                        "type",
                                        NULL};

static int event_create(emu_resource *r, cJSON *obj, cJSON **st)
{
    (void)r;
    (void)st;
    if (!cJSON_GetObjectItemCaseSensitive(obj, "involvedObject"))
        cJSON_AddItemToObject(obj, "involvedObject", cJSON_CreateObject());
    if (!cJSON_GetObjectItemCaseSensitive(obj, "source"))
        cJSON_AddItemToObject(obj, "source", cJSON_CreateObject());
    if (!cJSON_GetObjectItemCaseSensitive(obj, "firstTimestamp"))
        cJSON_AddNullToObject(obj, "firstTimestamp");
    if (!cJSON_GetObjectItemCaseSensitive(obj, "lastTimestamp"))
        cJSON_AddNullToObject(obj, "lastTimestamp");
    if (!cJSON_GetObjectItemCaseSensitive(obj, "eventTime"))
        cJSON_AddNullToObject(obj, "eventTime");
    default_str(obj, "reportingComponent", "");
    default_str(obj, "reportingInstance", "");
    return KUBE_OK;
}

const emu_kind_ops emu_event_ops = {
    .on_create = event_create,
    .fields = event_fields,
    .bookmark = "{\"kind\":\"Event\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\""
                "%RV%\",\"creationTimestamp\":null},\"involvedObject\":{},\"source\":{},"
                "\"firstTimestamp\":null,\"lastTimestamp\":null,\"eventTime\":null,"
                "\"reportingComponent\":\"\",\"reportingInstance\":\"\"}",
};

static int eventsk8s_create(emu_resource *r, cJSON *obj, cJSON **st)
{
    emu_ferrs errs = {0};

    if (!cJSON_GetObjectItemCaseSensitive(obj, "eventTime") ||
        cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(obj, "eventTime")))
        emu_ferr_add(&errs, "FieldValueRequired", "eventTime", "Required value");
    if (errs.n)
        return emu_invalid(st, r, emu_json_str(obj, "metadata.name"), &errs);
    if (!cJSON_GetObjectItemCaseSensitive(obj, "regarding"))
        cJSON_AddItemToObject(obj, "regarding", cJSON_CreateObject());
    if (!cJSON_GetObjectItemCaseSensitive(obj, "deprecatedSource"))
        cJSON_AddItemToObject(obj, "deprecatedSource", cJSON_CreateObject());
    if (!cJSON_GetObjectItemCaseSensitive(obj, "deprecatedFirstTimestamp"))
        cJSON_AddNullToObject(obj, "deprecatedFirstTimestamp");
    if (!cJSON_GetObjectItemCaseSensitive(obj, "deprecatedLastTimestamp"))
        cJSON_AddNullToObject(obj, "deprecatedLastTimestamp");
    return KUBE_OK;
}

const emu_kind_ops emu_eventsk8s_ops = {
    .on_create = eventsk8s_create,
    .bookmark = "{\"kind\":\"Event\",\"apiVersion\":\"events.k8s.io/v1\",\"metadata\":{"
                "\"resourceVersion\":\"%RV%\",\"creationTimestamp\":null},\"eventTime\":null,"
                "\"regarding\":{},\"deprecatedSource\":{},\"deprecatedFirstTimestamp\":null,"
                "\"deprecatedLastTimestamp\":null}",
};

const emu_kind_ops emu_lease_ops = {
    .bookmark = "{\"kind\":\"Lease\",\"apiVersion\":\"coordination.k8s.io/v1\",\"metadata\":{"
                "\"resourceVersion\":\"%RV%\",\"creationTimestamp\":null},\"spec\":{}}",
};

const emu_kind_ops emu_custom_ops = {
    .generation = 1,
};

const emu_kind_ops emu_generic_ops = {0};
