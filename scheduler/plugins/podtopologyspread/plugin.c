/*
 * scheduler/plugins/podtopologyspread/plugin.c - PodTopologySpread
 * (kube-scheduler v1.28 pkg/scheduler/framework/plugins/podtopologyspread,
 * with MinDomainsInPodTopologySpread, NodeInclusionPolicyInPodTopologySpread
 * and MatchLabelKeysInPodTopologySpread on, as in v1.28).
 *
 * Constraints: the pod's topologySpreadConstraints of one
 * whenUnsatisfiable action (DoNotSchedule for filtering, ScheduleAnyway for
 * scoring); matchLabelKeys add `key in (pod's value)` requirements to the
 * selector; minDomains defaults to 1, nodeAffinityPolicy to Honor (the
 * node must match the pod's nodeSelector and required node affinity to
 * count), nodeTaintsPolicy to Ignore (Honor: the node must have no
 * untolerated NoSchedule/NoExecute taint).
 *
 * Default constraints (args, buildDefaultConstraints): a pod with no
 * topologySpreadConstraints at all gets those of the defaults with the
 * action, the configured ones (defaultingType List) or the system ones
 * (System, the default: kubernetes.io/hostname maxSkew 3 and
 * topology.kubernetes.io/zone maxSkew 5, both ScheduleAnyway, so they only
 * score), every one with the selector of helper.DefaultSelector
 * (plugin_default_selector in helper.c): the Services of the pod's
 * namespace selecting it, and its controller when that is a
 * ReplicationController, ReplicaSet or StatefulSet. An empty selector
 * means no default constraint, as for a KubeVirt virt-launcher pod (owned
 * by its VirtualMachineInstance) that no Service selects. When some
 * default constraint exists, create() asks the scheduler's informer
 * factory for the listers of the four kinds (kube/types/workload.h), as
 * kube-scheduler's New() does. With System defaulting, scoring a pod without
 * constraints of its own does not require nodes to have every topology key
 * (requireAllTopologies): a node without a zone label still spreads by
 * hostname, its pods counting in the ("zone", "") domain.
 *
 * Counting follows v1.28 exactly, including its keying by topology KEY:
 * two constraints with the same topologyKey share their per-value counts,
 * critical paths and domain counts.
 *
 * PreFilter counts, per topology key, the pods matching each constraint's
 * selector (same namespace, not terminating) on every node that has all the
 * constraints' keys and passes the constraint's inclusion policies, plus
 * the two smallest domains (critical paths). Filter is then lookups only.
 * PreScore counts the same way for ScheduleAnyway constraints over the
 * domains of the feasible nodes; Score is lookups plus, for hostname
 * constraints, a count of the node's own pods.
 */
#include "plugins/podtopologyspread/internal.h"

static const pts_default system_defaults[] = {
    {LABEL_HOSTNAME, 3, 1, KUBE_SCHEDULE_ANYWAY, KUBE_POLICY_HONOR, KUBE_POLICY_IGNORE},
    {"topology.kubernetes.io/zone", 5, 1, KUBE_SCHEDULE_ANYWAY, KUBE_POLICY_HONOR,
     KUBE_POLICY_IGNORE},
};

/* The cycle's snapshot; a handle without one (tests) has no nodes. */
const fw_snapshot *pts_snapshot_of(const pod_topology_spread *pl)
{
    static const fw_snapshot empty;
    return pl->h->svc.snapshot ? pl->h->svc.snapshot : &empty;
}

/* ------------------------------------------------------------------ */
/* Args: PodTopologySpreadArgs                                         */
/* ------------------------------------------------------------------ */

static void validate_topology_key(const char *p, const char *key, plugin_field_errs *e)
{
    char msgs[2048];

    if (!*key) {
        plugin_field_errs_add(e, "%s.topologyKey: Required value: can not be empty", p);
        return;
    }
    if (!plugin_qualified_name_msgs(key, "\n", msgs, sizeof(msgs)))
        return;
    for (char *m = msgs, *nl; m; m = nl ? nl + 1 : NULL) {
        if ((nl = strchr(m, '\n')))
            *nl = '\0';
        plugin_field_errs_add(e, "%s.topologyKey: Invalid value: \"%s\": %s", p, key, m);
    }
}

static void validate_when(const char *p, const char *when, plugin_field_errs *e)
{
    if (!*when)
        plugin_field_errs_add(e, "%s.whenUnsatisfiable: Required value: can not be empty", p);
    else if (strcmp(when, "DoNotSchedule") != 0 && strcmp(when, "ScheduleAnyway") != 0)
        plugin_field_errs_add(e,
                              "%s.whenUnsatisfiable: Unsupported value: \"%s\": supported "
                              "values: \"DoNotSchedule\", \"ScheduleAnyway\"",
                              p, when);
}

/* Decodes the typed fields of defaultConstraints[i] (strict) and reports
 * what validation.ValidatePodTopologySpreadArgs reports for it. */
static void validate_constraint(const cJSON *c, const char *p, const cJSON *all, long idx,
                                plugin_field_errs *e)
{
    static const char *const known[] = {"maxSkew",          "topologyKey",    "whenUnsatisfiable",
                                        "labelSelector",    "minDomains",     "nodeAffinityPolicy",
                                        "nodeTaintsPolicy", "matchLabelKeys", NULL};
    const char *key = "", *when = "", *s;
    const cJSON *arr;
    int64_t skew = 0, v;

    if (!cJSON_IsObject(c)) {
        plugin_field_errs_add(e, "%s: expected an object", p);
        return;
    }
    plugin_args_unknown_fields(c, p, known, e);
    plugin_args_int(c, p, "maxSkew", INT32_MIN, INT32_MAX, 0, &skew, e);
    plugin_args_int(c, p, "minDomains", INT32_MIN, INT32_MAX, 0, &v, e);
    plugin_args_str(c, p, "topologyKey", "", &key, e);
    plugin_args_str(c, p, "whenUnsatisfiable", "", &when, e);
    plugin_args_str(c, p, "nodeAffinityPolicy", "", &s, e);
    plugin_args_str(c, p, "nodeTaintsPolicy", "", &s, e);
    plugin_args_array(c, p, "matchLabelKeys", &arr, e);
    if (skew <= 0)
        plugin_field_errs_add(e, "%s.maxSkew: Invalid value: %lld: not in valid range (0, inf)", p,
                              (long long)skew);
    validate_topology_key(p, key, e);
    validate_when(p, when, e);
    if (kube_json_get(c, "labelSelector"))
        plugin_field_errs_add(e,
                              "%s.labelSelector: Forbidden: constraint must not define a "
                              "selector, as they deduced for each pod",
                              p);
    for (long i = 0; i < idx; i++) {
        const cJSON *o = cJSON_GetArrayItem(all, (int)i);
        const cJSON *ok = kube_json_get(o, "topologyKey"),
                    *ow = kube_json_get(o, "whenUnsatisfiable");
        if (strcmp(cJSON_IsString(ok) ? ok->valuestring : "", key) == 0 &&
            strcmp(cJSON_IsString(ow) ? ow->valuestring : "", when) == 0) {
            plugin_field_errs_add(e, "defaultConstraints[%ld]: Duplicate value: \"{%s, %s}\"", idx,
                                  key, when);
            break;
        }
    }
}

static void validate_args(const cJSON *in, const char **type, plugin_field_errs *e)
{
    static const char *const known[] = {"defaultConstraints", "defaultingType", NULL};
    const cJSON *list = NULL, *it;
    char p[64];
    long i = 0;

    *type = "System";
    if (!plugin_args_object(in, "", known, e))
        return;
    plugin_args_str(in, "", "defaultingType", "System", type, e);
    if (!**type)
        *type = "System";
    plugin_args_array(in, "", "defaultConstraints", &list, e);
    if (strcmp(*type, "System") != 0 && strcmp(*type, "List") != 0)
        plugin_field_errs_add(e,
                              "defaultingType: Unsupported value: \"%s\": supported values: "
                              "\"System\", \"List\"",
                              *type);
    else if (!strcmp(*type, "System") && cJSON_GetArraySize(list) > 0)
        plugin_field_errs_add(e, "defaultingType: Invalid value: \"System\": when "
                                 ".defaultConstraints are not empty");
    cJSON_ArrayForEach(it, list)
    {
        snprintf(p, sizeof(p), "defaultConstraints[%ld]", i);
        validate_constraint(it, p, list, i, e);
        i++;
    }
}

static int default_args(const cJSON *in, cJSON **out, char *err, size_t errlen)
{
    plugin_field_errs e = PLUGIN_FIELD_ERRS_INIT;
    const char *type;
    const cJSON *list;
    int rc;

    *out = NULL;
    validate_args(in, &type, &e);
    if ((rc = plugin_field_errs_finish(&e, err, errlen)) != KUBE_OK)
        return rc;
    if (!(*out = cJSON_CreateObject()))
        return KUBE_ENOMEM;
    list = kube_json_get(in, "defaultConstraints");
    if (cJSON_GetArraySize(list) > 0 &&
        !cJSON_AddItemToObject(*out, "defaultConstraints", cJSON_Duplicate(list, 1)))
        rc = KUBE_ENOMEM;
    if (rc == KUBE_OK && !cJSON_AddStringToObject(*out, "defaultingType", type))
        rc = KUBE_ENOMEM;
    if (rc != KUBE_OK) {
        cJSON_Delete(*out);
        *out = NULL;
    }
    return rc;
}

/* A policy field of a default constraint: Honor when it says so, Ignore
 * for any other value (only Honor is tested upstream), def when unset. */
static kube_inclusion_policy policy_of(const cJSON *c, const char *key, kube_inclusion_policy def)
{
    const cJSON *v = kube_json_get(c, key);
    if (!cJSON_IsString(v))
        return def;
    return strcmp(v->valuestring, "Honor") == 0 ? KUBE_POLICY_HONOR : KUBE_POLICY_IGNORE;
}

/* Decodes one validated defaultConstraints[i] into d, its topologyKey
 * copied into a. KUBE_OK or KUBE_ENOMEM. */
static int decode_default(const cJSON *c, kube_arena *a, pts_default *d)
{
    const cJSON *key = kube_json_get(c, "topologyKey"),
                *when = kube_json_get(c, "whenUnsatisfiable");
    const cJSON *min = kube_json_get(c, "minDomains");

    d->max_skew = (int32_t)cJSON_GetNumberValue(kube_json_get(c, "maxSkew"));
    d->min_domains = cJSON_IsNumber(min) ? (int32_t)min->valuedouble : 1;
    d->when = strcmp(when->valuestring, "DoNotSchedule") == 0 ? KUBE_DO_NOT_SCHEDULE
                                                              : KUBE_SCHEDULE_ANYWAY;
    d->affinity_policy = policy_of(c, "nodeAffinityPolicy", KUBE_POLICY_HONOR);
    d->taints_policy = policy_of(c, "nodeTaintsPolicy", KUBE_POLICY_IGNORE);
    d->topology_key = kube_arena_strdup(a, key->valuestring);
    return d->topology_key ? KUBE_OK : KUBE_ENOMEM;
}

/* pl->defaults from validated args: the system ones, or the list. */
static int set_defaults(pod_topology_spread *pl, const cJSON *args, const char *type)
{
    const cJSON *list = kube_json_get(args, "defaultConstraints"), *it;
    pts_default *d;
    size_t n = (size_t)cJSON_GetArraySize(list), i = 0;
    int rc = KUBE_OK;

    pl->system_defaulted = strcmp(type, "System") == 0;
    if (pl->system_defaulted) {
        pl->defaults = system_defaults;
        pl->n_defaults = sizeof(system_defaults) / sizeof(system_defaults[0]);
        return KUBE_OK;
    }
    if (n == 0)
        return KUBE_OK;
    if (!(d = kube_arena_alloc(&pl->arena, n * sizeof(*d))))
        return KUBE_ENOMEM;
    cJSON_ArrayForEach(it, list) if (rc == KUBE_OK) rc = decode_default(it, &pl->arena, &d[i++]);
    pl->defaults = d;
    pl->n_defaults = n;
    return rc;
}

static void destroy(void *self)
{
    pod_topology_spread *pl = self;
    if (!pl)
        return;
    for (size_t i = 0; i < CACHE_SELECTORS; i++) {
        free(pl->caches[i].sig);
        free(pl->caches[i].slots);
    }
    kube_arena_release(&pl->arena);
    free(pl);
}

/* The listers of DefaultSelector: the given ones, or, when there are
 * default constraints and a factory, the factory's. */
static int set_listers(pod_topology_spread *pl, const kube_workload_listers *listers, char *err,
                       size_t errlen)
{
    int rc;

    if (listers) {
        pl->listers = *listers;
        return KUBE_OK;
    }
    if (pl->n_defaults == 0 || !pl->h->svc.informers)
        return KUBE_OK;
    if ((rc = kube_workload_listers_add(pl->h->svc.informers, &pl->listers)) != KUBE_OK)
        snprintf(err, errlen,
                 "adding the Service, ReplicationController, ReplicaSet and "
                 "StatefulSet informers: %s",
                 kube_strerror(rc));
    return rc;
}

int plugin_pod_topology_spread_new(const cJSON *args, fw_handle *h,
                                   const kube_workload_listers *listers, void **self, char *err,
                                   size_t errlen)
{
    plugin_field_errs e = PLUGIN_FIELD_ERRS_INIT;
    pod_topology_spread *pl;
    const char *type;
    int rc;

    *self = NULL;
    validate_args(args, &type, &e);
    if ((rc = plugin_field_errs_finish(&e, err, errlen)) != KUBE_OK)
        return rc;
    if (!(pl = calloc(1, sizeof(*pl))))
        return KUBE_ENOMEM;
    pl->h = h;
    kube_arena_init(&pl->arena, NULL, 0);
    if ((rc = set_defaults(pl, args, type)) != KUBE_OK ||
        (rc = set_listers(pl, listers, err, errlen)) != KUBE_OK) {
        destroy(pl);
        return rc;
    }
    *self = pl;
    return KUBE_OK;
}

static int create(const cJSON *args, fw_handle *h, void *deps, void **self, char *err,
                  size_t errlen)
{
    return plugin_pod_topology_spread_new(args, h, NULL, self, err, errlen);
}

/* ------------------------------------------------------------------ */
/* Descriptor                                                          */
/* ------------------------------------------------------------------ */

static const fw_cluster_event_with_hint events[] = {
    {{FW_GVK_POD, FW_ACT_ALL, ""}, NULL},
    {{FW_GVK_NODE, FW_ACT_ADD | FW_ACT_DELETE | FW_ACT_UPDATE_NODE_LABEL, ""}, NULL},
};

PLUGIN_EVENTS_TO_REGISTER(events)

const fw_plugin_desc plugin_pod_topology_spread = {
    .name = NAME,
    .default_args = default_args,
    .create = create,
    .destroy = destroy,
    .pre_filter = pts_pre_filter,
    .pre_filter_add_pod = pts_pre_filter_add_pod,
    .pre_filter_remove_pod = pts_pre_filter_remove_pod,
    .filter = pts_filter,
    .pre_score = pts_pre_score,
    .score = pts_score,
    .normalize_score = pts_normalize_score,
    .events_to_register = events_to_register,
};
