/*
 * scheduler/plugins/podtopologyspread/pod_topology_spread.c - PodTopologySpread
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
 * default constraint exists, create() adds informers for the four kinds
 * (kube/workload.h) to the scheduler's hub, as kube-scheduler's New()
 * registers their listers. With System defaulting, scoring a pod without
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
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/arena.h"
#include "kube/errors.h"
#include "kube/node.h"
#include "kube/pod.h"
#include "kube/selector.h"
#include "kube/workload.h"
#include "plugins/helper.h"
#include "plugins/plugins.h"
#include "plugins/podtopologyspread/pairs.h"

#define NAME "PodTopologySpread"
#define PRE_FILTER_KEY "PreFilter" NAME
#define PRE_SCORE_KEY "PreScore" NAME
#define ERR_REASON_CONSTRAINTS_NOT_MATCH "node(s) didn't match pod topology spread constraints"
#define ERR_REASON_NODE_LABEL_NOT_MATCH ERR_REASON_CONSTRAINTS_NOT_MATCH " (missing required label)"
#define LABEL_HOSTNAME "kubernetes.io/hostname"
#define INVALID_SCORE (-1)
#define MAX_PATH_NUM ((int64_t)2147483647) /* math.MaxInt32 */

/* Matching pods per node for one (namespace, selector), valid while the
 * node info's generation is unchanged: PreFilter recounts only the nodes
 * that changed since a pod with the same selector was last scheduled. */
typedef struct node_count {
    const fw_node_info *ni;   /* NULL: empty slot */
    int64_t generation;
    int64_t count;
} node_count;

typedef struct count_cache {
    char *sig;                /* owned "namespace\x1fselector"; NULL: unused */
    uint64_t used;            /* LRU tick */
    node_count *slots;        /* open addressing on ni */
    size_t cap, len;
} count_cache;

#define CACHE_SELECTORS 16

/* One default constraint (args.defaultConstraints or the system ones). */
typedef struct pts_default {
    const char *topology_key;       /* static or in the plugin's arena */
    int32_t max_skew;
    int32_t min_domains;            /* 1 unless set */
    kube_unsatisfiable when;
    kube_inclusion_policy affinity_policy, taints_policy;
} pts_default;

static const pts_default system_defaults[] = {
    {LABEL_HOSTNAME, 3, 1, KUBE_SCHEDULE_ANYWAY, KUBE_POLICY_HONOR, KUBE_POLICY_IGNORE},
    {"topology.kubernetes.io/zone", 5, 1, KUBE_SCHEDULE_ANYWAY, KUBE_POLICY_HONOR,
     KUBE_POLICY_IGNORE},
};

/* The caches are plugin state across cycles, read and written only by
 * PreFilter (the scheduling thread; its parallel counting touches one
 * node's slots per task); Filter and Score never see them. The defaults
 * and listers are immutable after create(). */
typedef struct pod_topology_spread {
    fw_handle *h;
    count_cache caches[CACHE_SELECTORS];
    uint64_t tick;
    const pts_default *defaults;
    size_t n_defaults;
    int system_defaulted;           /* defaultingType System */
    kube_arena arena;               /* the List defaults */
    kube_workload_listers listers;
} pod_topology_spread;

/* The cycle's snapshot; a handle without one (tests) has no nodes. */
static const fw_snapshot *snapshot_of(const pod_topology_spread *pl)
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
        plugin_field_errs_add(e, "%s.whenUnsatisfiable: Unsupported value: \"%s\": supported "
                              "values: \"DoNotSchedule\", \"ScheduleAnyway\"", p, when);
}

/* Decodes the typed fields of defaultConstraints[i] (strict) and reports
 * what validation.ValidatePodTopologySpreadArgs reports for it. */
static void validate_constraint(const cJSON *c, const char *p, const cJSON *all, long idx,
                                plugin_field_errs *e)
{
    static const char *const known[] = {"maxSkew", "topologyKey", "whenUnsatisfiable",
                                        "labelSelector", "minDomains", "nodeAffinityPolicy",
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
        plugin_field_errs_add(e, "%s.labelSelector: Forbidden: constraint must not define a "
                              "selector, as they deduced for each pod", p);
    for (long i = 0; i < idx; i++) {
        const cJSON *o = cJSON_GetArrayItem(all, (int)i);
        const cJSON *ok = kube_json_get(o, "topologyKey"), *ow = kube_json_get(o, "whenUnsatisfiable");
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
        plugin_field_errs_add(e, "defaultingType: Unsupported value: \"%s\": supported values: "
                              "\"System\", \"List\"", *type);
    else if (!strcmp(*type, "System") && cJSON_GetArraySize(list) > 0)
        plugin_field_errs_add(e, "defaultingType: Invalid value: \"System\": when "
                              ".defaultConstraints are not empty");
    cJSON_ArrayForEach(it, list) {
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
    const cJSON *key = kube_json_get(c, "topologyKey"), *when = kube_json_get(c, "whenUnsatisfiable");
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
    cJSON_ArrayForEach(it, list)
        if (rc == KUBE_OK)
            rc = decode_default(it, &pl->arena, &d[i++]);
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
 * default constraints and a hub, informers added to it. */
static int set_listers(pod_topology_spread *pl, const kube_workload_listers *listers,
                       char *err, size_t errlen)
{
    int rc;

    if (listers) {
        pl->listers = *listers;
        return KUBE_OK;
    }
    if (pl->n_defaults == 0 || !pl->h->svc.hub)
        return KUBE_OK;
    if ((rc = kube_workload_listers_add(pl->h->svc.hub, &pl->listers)) != KUBE_OK)
        snprintf(err, errlen, "adding the Service, ReplicationController, ReplicaSet and "
                              "StatefulSet informers: %s", kube_strerror(rc));
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

static int create(const cJSON *args, fw_handle *h, void **self, char *err, size_t errlen)
{
    return plugin_pod_topology_spread_new(args, h, NULL, self, err, errlen);
}

/* ------------------------------------------------------------------ */
/* Constraints                                                         */
/* ------------------------------------------------------------------ */

typedef struct pts_constraint {
    const char *topology_key;           /* borrowed from the pod */
    const kube_label_selector *selector; /* the pod's, or merged in the arena */
    int32_t max_skew;
    int32_t min_domains;
    kube_inclusion_policy affinity_policy, taints_policy;
    size_t key;                         /* index into keys[] */
    int self_match;                     /* the selector matches the pod itself */
} pts_constraint;

/* Constraints of one action, immutable once built and shared by clones
 * (refcounted). The pod is referenced: its strings back the constraints. */
typedef struct pts_constraints {
    atomic_int refs;
    fw_pod_info *pod;
    kube_arena arena;
    pts_constraint *items;
    size_t n;
    const char **keys;                  /* distinct topology keys */
    size_t n_keys;
} pts_constraints;

static void constraints_unref(pts_constraints *c)
{
    if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    fw_pod_info_unref(c->pod);
    kube_arena_release(&c->arena);
    free(c);
}

static pts_constraints *constraints_ref(pts_constraints *c)
{
    atomic_fetch_add(&c->refs, 1);
    return c;
}

static int has_kv(const kube_requirement *r, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(r[i].key, key) == 0)
            return 1;
    return 0;
}

/* mergeLabelSetWithSelector: `key in (value)` for each matchLabelKeys key
 * the pod has, plus the selector's own requirements (none when nil). The
 * selector is unchanged when the pod has none of the keys. */
static int merge_match_label_keys(const kube_spread_constraint *sc, const kube_pod *pod,
                                  kube_arena *a, const kube_label_selector **out)
{
    const kube_label_selector *orig = sc->label_selector;
    size_t n_orig = orig ? orig->n_reqs : 0, n = 0;
    kube_requirement *reqs;
    kube_label_selector *sel;

    *out = orig;
    if (sc->n_match_label_keys == 0)
        return KUBE_OK;
    reqs = kube_arena_alloc(a, (sc->n_match_label_keys + n_orig) * sizeof(*reqs));
    if (!reqs)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < sc->n_match_label_keys; i++) {
        const char *key = sc->match_label_keys[i];
        const char *value = kube_meta_label(&pod->base.meta, key), **v;
        if (!value || has_kv(reqs, n, key))
            continue;
        if (!(v = kube_arena_alloc(a, sizeof(*v))))
            return KUBE_ENOMEM;
        *v = value;
        reqs[n++] = (kube_requirement){key, v, 1, KUBE_SEL_IN};
    }
    if (n == 0)
        return KUBE_OK;
    if (n_orig)
        memcpy(reqs + n, orig->reqs, n_orig * sizeof(*reqs));
    if (!(sel = kube_arena_alloc(a, sizeof(*sel))))
        return KUBE_ENOMEM;
    *sel = (kube_label_selector){reqs, n + n_orig, 1};
    *out = sel;
    return KUBE_OK;
}

static size_t key_index(pts_constraints *c, const char *key)
{
    size_t k = 0;
    while (k < c->n_keys && strcmp(c->keys[k], key) != 0)
        k++;
    if (k == c->n_keys)
        c->keys[c->n_keys++] = key;
    return k;
}

/* filterTopologySpreadConstraints for one constraint of the pod. */
static int add_constraint(pts_constraints *c, const kube_spread_constraint *sc,
                          const kube_pod *pod)
{
    pts_constraint *t = &c->items[c->n];
    int rc;

    if (sc->label_selector && !sc->label_selector->valid)
        return KUBE_EINVAL;
    if ((rc = merge_match_label_keys(sc, pod, &c->arena, &t->selector)) != KUBE_OK)
        return rc;
    t->topology_key = sc->topology_key;
    t->max_skew = sc->max_skew;
    t->min_domains = sc->min_domains ? sc->min_domains : 1;
    t->affinity_policy = sc->node_affinity_policy;
    t->taints_policy = sc->node_taints_policy;
    t->key = key_index(c, sc->topology_key);
    t->self_match = kube_label_selector_matches(t->selector, pod->base.meta.labels,
                                                pod->base.meta.n_labels);
    c->n++;
    return KUBE_OK;
}

/* An empty constraint set for pi with room for n constraints (one
 * reference), or NULL when memory runs out. */
static pts_constraints *constraints_new(fw_pod_info *pi, size_t n)
{
    pts_constraints *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    atomic_init(&c->refs, 1);
    c->pod = fw_pod_info_ref(pi);
    kube_arena_init(&c->arena, NULL, 0);
    c->items = kube_arena_alloc(&c->arena, n * sizeof(*c->items));
    c->keys = kube_arena_alloc(&c->arena, n * sizeof(*c->keys));
    if (!c->items || !c->keys) {
        constraints_unref(c);
        return NULL;
    }
    return c;
}

/* One default constraint with the pod's default selector
 * (buildDefaultConstraints after filterTopologySpreadConstraints). */
static void add_default(pts_constraints *c, const pts_default *d,
                        const kube_label_selector *sel, const kube_pod *pod)
{
    pts_constraint *t = &c->items[c->n++];

    t->topology_key = d->topology_key;
    t->selector = sel;
    t->max_skew = d->max_skew;
    t->min_domains = d->min_domains;
    t->affinity_policy = d->affinity_policy;
    t->taints_policy = d->taints_policy;
    t->key = key_index(c, d->topology_key);
    t->self_match = kube_label_selector_matches(sel, pod->base.meta.labels,
                                                pod->base.meta.n_labels);
}

/* buildDefaultConstraints: the default constraints with this action, all
 * with the pod's DefaultSelector, into *out; NULL when there are none or
 * the selector is empty. KUBE_OK or KUBE_ENOMEM. */
static int default_constraints(const pod_topology_spread *pl, fw_pod_info *pi,
                               kube_unsatisfiable action, pts_constraints **out)
{
    const kube_label_selector *sel;
    pts_constraints *c;
    size_t n = 0;
    int rc;

    for (size_t i = 0; i < pl->n_defaults; i++)
        n += pl->defaults[i].when == action;
    if (n == 0)
        return KUBE_OK;
    if (!(c = constraints_new(pi, n)))
        return KUBE_ENOMEM;
    rc = plugin_default_selector(pi->pod, &pl->listers, &c->arena, &sel);
    if (rc != KUBE_OK || sel->n_reqs == 0) {
        constraints_unref(c);
        return rc;
    }
    for (size_t i = 0; i < pl->n_defaults; i++)
        if (pl->defaults[i].when == action)
            add_default(c, &pl->defaults[i], sel, pi->pod);
    *out = c;
    return KUBE_OK;
}

/* The pod's constraints with this action into *out (NULL when there are
 * none); a pod with no constraints of either action gets the default ones
 * (default_constraints). KUBE_OK, KUBE_EINVAL (a selector of the pod's
 * does not parse) or KUBE_ENOMEM. */
static int get_constraints(const pod_topology_spread *pl, fw_pod_info *pi,
                           kube_unsatisfiable action, pts_constraints **out)
{
    const kube_pod *pod = pi->pod;
    pts_constraints *c;
    size_t n = 0;
    int rc = KUBE_OK;

    *out = NULL;
    if (pod->n_spread == 0)
        return default_constraints(pl, pi, action, out);
    for (size_t i = 0; i < pod->n_spread; i++)
        n += pod->spread[i].when_unsatisfiable == action;
    if (n == 0)
        return KUBE_OK;
    if (!(c = constraints_new(pi, n)))
        return KUBE_ENOMEM;
    for (size_t i = 0; rc == KUBE_OK && i < pod->n_spread; i++)
        if (pod->spread[i].when_unsatisfiable == action)
            rc = add_constraint(c, &pod->spread[i], pod);
    if (rc != KUBE_OK) {
        constraints_unref(c);
        return rc;
    }
    *out = c;
    return KUBE_OK;
}

/* ------------------------------------------------------------------ */
/* Node and pod predicates                                             */
/* ------------------------------------------------------------------ */

static const char *node_label(const kube_node *node, const char *key)
{
    return kube_meta_label(&node->base.meta, key);
}

/* nodeLabelsMatchSpreadConstraints: the node has every topology key. */
static int node_has_all_keys(const kube_node *node, const pts_constraints *c)
{
    for (size_t k = 0; k < c->n_keys; k++)
        if (!node_label(node, c->keys[k]))
            return 0;
    return 1;
}

/* nodeaffinity.GetRequiredNodeAffinity(pod).Match(node). */
static int required_node_affinity_matches(const kube_pod *pod, const kube_node *node)
{
    const kube_node_selector *req = pod->affinity ? pod->affinity->node_required : NULL;

    for (size_t i = 0; i < pod->n_node_selector; i++) {
        const char *v = node_label(node, pod->node_selector[i].key);
        if (!v || strcmp(v, pod->node_selector[i].value) != 0)
            return 0;
    }
    return !req || kube_node_selector_matches(req, node->base.meta.name, node->base.meta.labels,
                                              node->base.meta.n_labels);
}

static int has_untolerated_no_schedule_taint(const kube_pod *pod, const kube_node *node)
{
    for (size_t i = 0; i < node->n_taints; i++) {
        const kube_taint *t = &node->taints[i];
        if ((t->effect == KUBE_EFFECT_NO_SCHEDULE || t->effect == KUBE_EFFECT_NO_EXECUTE) &&
            !plugin_tolerations_tolerate(pod->tolerations, pod->n_tolerations, t))
            return 1;
    }
    return 0;
}

/* matchNodeInclusionPolicies; affinity_ok is the node's
 * required_node_affinity_matches(), computed once per node. */
static int match_inclusion_policies(const pts_constraint *t, const kube_pod *pod,
                                    const kube_node *node, int affinity_ok)
{
    if (t->affinity_policy == KUBE_POLICY_HONOR && !affinity_ok)
        return 0;
    return t->taints_policy != KUBE_POLICY_HONOR || !has_untolerated_no_schedule_taint(pod, node);
}

static int selector_matches_pod(const kube_label_selector *s, const kube_pod *p)
{
    return kube_label_selector_matches(s, p->base.meta.labels, p->base.meta.n_labels);
}

/* countPodsMatchSelector: pods of namespace ns, not terminating. */
static int64_t count_matching_pods(const fw_node_info *ni, const kube_label_selector *s,
                                   const char *ns)
{
    int64_t n = 0;
    for (size_t i = 0; i < ni->n_pods; i++) {
        const kube_pod *p = ni->pods[i]->pod;
        const char *pns = p->base.meta.namespace_;
        if (p->base.meta.deleting || (pns != ns && strcmp(pns, ns) != 0))
            continue;
        n += selector_matches_pod(s, p);
    }
    return n;
}

/* ------------------------------------------------------------------ */
/* Per-node count cache                                                */
/* ------------------------------------------------------------------ */

static const char *const op_names[] = {"in", "notin", "exists", "!", "gt", "lt", "?"};

/* "namespace\x1fkey\x1eop\x1ev1\x1dv2..\x1c..." or NULL (nil selector or
 * out of memory: not cached). Caller frees. */
static char *selector_sig(const kube_label_selector *sel, const char *ns)
{
    kube_buf b = KUBE_BUF_INIT;
    int rc;

    if (!sel)
        return NULL;
    rc = kube_buf_printf(&b, "%s\x1f", ns);
    for (size_t i = 0; rc == KUBE_OK && i < sel->n_reqs; i++) {
        const kube_requirement *r = &sel->reqs[i];
        rc = kube_buf_printf(&b, "%s\x1e%s\x1e", r->key, op_names[r->op]);
        for (size_t v = 0; rc == KUBE_OK && v < r->n_values; v++)
            rc = kube_buf_printf(&b, "%s\x1d", r->values[v]);
        if (rc == KUBE_OK)
            rc = kube_buf_puts(&b, "\x1c");
    }
    if (rc != KUBE_OK) {
        kube_buf_free(&b);
        return NULL;
    }
    return kube_buf_take(&b);
}

static void cache_clear(count_cache *c)
{
    if (c->slots)
        memset(c->slots, 0, c->cap * sizeof(*c->slots));
    c->len = 0;
}

/* Makes room for `more` new slots without growing later (slot pointers
 * handed out stay valid); a table grown past 4x the nodes is reset (nodes
 * that left keep their slots otherwise). */
static int cache_reserve(count_cache *c, size_t more)
{
    size_t cap = 64;
    if (c->len > 4 * more)
        cache_clear(c);
    if ((c->len + more) * 2 <= c->cap)
        return KUBE_OK;
    while (cap < (c->len + more) * 2)
        cap *= 2;
    node_count *slots = calloc(cap, sizeof(*slots));
    if (!slots)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < c->cap; i++) {
        if (!c->slots[i].ni)
            continue;
        size_t j = ((uintptr_t)c->slots[i].ni >> 4) & (cap - 1);
        while (slots[j].ni)
            j = (j + 1) & (cap - 1);
        slots[j] = c->slots[i];
    }
    free(c->slots);
    c->slots = slots;
    c->cap = cap;
    return KUBE_OK;
}

static node_count *cache_slot(count_cache *c, const fw_node_info *ni)
{
    size_t j = ((uintptr_t)ni >> 4) & (c->cap - 1);
    while (c->slots[j].ni && c->slots[j].ni != ni)
        j = (j + 1) & (c->cap - 1);
    if (!c->slots[j].ni) {
        c->slots[j] = (node_count){ni, -1, 0};
        c->len++;
    }
    return &c->slots[j];
}

/* The cache of sig (taken), the least recently used one recycled. NULL
 * when sig is NULL. */
static count_cache *cache_for(pod_topology_spread *pl, char *sig)
{
    count_cache *lru = &pl->caches[0];

    if (!sig)
        return NULL;
    pl->tick++;
    for (size_t i = 0; i < CACHE_SELECTORS; i++) {
        count_cache *c = &pl->caches[i];
        if (c->sig && strcmp(c->sig, sig) == 0) {
            free(sig);
            c->used = pl->tick;
            return c;
        }
        if (c->used < lru->used)
            lru = c;
    }
    free(lru->sig);
    lru->sig = sig;
    lru->used = pl->tick;
    cache_clear(lru);
    return lru;
}

/* ------------------------------------------------------------------ */
/* PreFilter state                                                     */
/* ------------------------------------------------------------------ */

typedef struct critical_path {
    const char *value;
    int64_t num;
} critical_path;

/* Per topology key: matching pods per value, the domains counted in
 * PreFilter, and the two critical paths (paths[0].num is the minimum). */
typedef struct pts_key_state {
    plugin_tp_table values;
    int64_t domains;
    critical_path paths[2];
} pts_key_state;

typedef struct pre_filter_state {
    pts_constraints *c;
    pts_key_state *keys; /* c->n_keys */
} pre_filter_state;

static void pre_filter_state_free(void *data)
{
    pre_filter_state *s = data;
    if (!s)
        return;
    for (size_t k = 0; s->keys && k < s->c->n_keys; k++)
        plugin_tp_free(&s->keys[k].values);
    free(s->keys);
    constraints_unref(s->c);
    free(s);
}

static pre_filter_state *pre_filter_state_new(pts_constraints *c)
{
    pre_filter_state *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->c = c;
    if (!(s->keys = calloc(c->n_keys, sizeof(*s->keys)))) {
        pre_filter_state_free(s);
        return NULL;
    }
    return s;
}

static void *pre_filter_state_clone(const void *data)
{
    const pre_filter_state *s = data;
    pre_filter_state *c = pre_filter_state_new(constraints_ref(s->c));
    if (!c) {
        constraints_unref(s->c);
        return NULL;
    }
    for (size_t k = 0; k < s->c->n_keys; k++) {
        c->keys[k] = s->keys[k];
        if (plugin_tp_clone(&c->keys[k].values, &s->keys[k].values) != KUBE_OK) {
            for (size_t j = k + 1; j < s->c->n_keys; j++)
                c->keys[j].values = (plugin_tp_table)PLUGIN_TP_TABLE_INIT;
            pre_filter_state_free(c);
            return NULL;
        }
    }
    return c;
}

static const fw_state_ops pre_filter_ops = {pre_filter_state_clone, pre_filter_state_free};

/* criticalPaths.update. */
static void paths_update(critical_path *p, const char *value, int64_t num)
{
    int i = strcmp(value, p[0].value) == 0 ? 0 : strcmp(value, p[1].value) == 0 ? 1 : -1;

    if (i >= 0) {
        p[i].num = num;
        if (p[0].num > p[1].num) {
            critical_path tmp = p[0];
            p[0] = p[1];
            p[1] = tmp;
        }
    } else if (num < p[0].num) {
        p[1] = p[0];
        p[0] = (critical_path){value, num};
    } else if (num < p[1].num) {
        p[1] = (critical_path){value, num};
    }
}

/* ---- Counting over the snapshot (parallel over nodes) ---- */

typedef struct count_job {
    const pts_constraints *c;
    const kube_pod *pod;
    const fw_node_info *const *nodes;
    int64_t *counts;     /* [node][constraint], -1: the node does not count */
    node_count **slots;  /* [node][constraint], NULL: not cached */
} count_job;

/* The node's matching pods for constraint j, from its cache slot when the
 * node did not change. */
static int64_t cached_count(const count_job *job, size_t i, size_t j)
{
    const fw_node_info *ni = job->nodes[i];
    node_count *slot = job->slots ? job->slots[i * job->c->n + j] : NULL;

    if (slot && slot->generation == ni->generation)
        return slot->count;
    int64_t n = count_matching_pods(ni, job->c->items[j].selector,
                                    job->pod->base.meta.namespace_);
    if (slot) {
        slot->generation = ni->generation;
        slot->count = n;
    }
    return n;
}

static void count_node(void *ud, size_t i)
{
    const count_job *job = ud;
    const pts_constraints *c = job->c;
    const kube_node *node = job->nodes[i]->node;
    int64_t *out = &job->counts[i * c->n];

    for (size_t j = 0; j < c->n; j++)
        out[j] = -1;
    if (!node || !node_has_all_keys(node, c))
        return;
    int affinity_ok = required_node_affinity_matches(job->pod, node);
    for (size_t j = 0; j < c->n; j++)
        if (match_inclusion_policies(&c->items[j], job->pod, node, affinity_ok))
            out[j] = cached_count(job, i, j);
}

/* One cache slot per node and constraint, or NULL when memory runs out
 * (then nothing is cached this cycle). Every cache is chosen and sized
 * before any slot is handed out, so no slot moves; at most half the caches
 * serve one pod, so none of them is recycled under another constraint. */
static node_count **cache_slots(pod_topology_spread *pl, const pts_constraints *c,
                                const kube_pod *pod, const fw_node_info *const *nodes, size_t n)
{
    node_count **slots = calloc(n * c->n + 1, sizeof(*slots));
    count_cache **caches = calloc(c->n, sizeof(*caches));
    int rc = slots && caches ? KUBE_OK : KUBE_ENOMEM;

    for (size_t j = 0; rc == KUBE_OK && j < c->n && j < CACHE_SELECTORS / 2; j++)
        caches[j] = cache_for(pl, selector_sig(c->items[j].selector, pod->base.meta.namespace_));
    for (size_t j = 0; rc == KUBE_OK && j < c->n; j++)
        if (caches[j])
            rc = cache_reserve(caches[j], n);
    for (size_t j = 0; rc == KUBE_OK && j < c->n; j++)
        for (size_t i = 0; caches[j] && i < n; i++)
            slots[i * c->n + j] = cache_slot(caches[j], nodes[i]);
    free(caches);
    if (rc != KUBE_OK) {
        free(slots);
        return NULL;
    }
    return slots;
}

static int64_t *count_all_nodes(pod_topology_spread *pl, const pts_constraints *c,
                                const kube_pod *pod, const fw_node_info *const *nodes, size_t n)
{
    int64_t *counts = malloc((n ? n : 1) * c->n * sizeof(*counts));
    if (!counts)
        return NULL;
    count_job job = {c, pod, nodes, counts, cache_slots(pl, c, pod, nodes, n)};
    fw_parallelize(pl->h->svc.parallelizer, n, count_node, &job, NULL);
    free(job.slots);
    return counts;
}

/* Adds one node's counts: per key, the count of the LAST counting
 * constraint with that key (v1.28 assigns tpCounts[pair] per constraint). */
static int merge_node_counts(pre_filter_state *s, const kube_node *node, const int64_t *counts)
{
    const pts_constraints *c = s->c;
    for (size_t k = 0; k < c->n_keys; k++) {
        int64_t count = -1;
        for (size_t j = 0; j < c->n; j++)
            if (c->items[j].key == k && counts[j] >= 0)
                count = counts[j];
        if (count >= 0 && plugin_tp_add(&s->keys[k].values, c->keys[k],
                                        node_label(node, c->keys[k]), count, NULL,
                                        NULL) != KUBE_OK)
            return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

static void init_paths(pts_key_state *ks)
{
    ks->domains = (int64_t)ks->values.len;
    ks->paths[0] = ks->paths[1] = (critical_path){"", MAX_PATH_NUM};
    for (size_t i = 0; i < ks->values.cap; i++)
        if (ks->values.slots[i].key)
            paths_update(ks->paths, ks->values.slots[i].value, ks->values.slots[i].count);
}

static int fill_pre_filter_state(pod_topology_spread *pl, pre_filter_state *s,
                                 const kube_pod *pod, const fw_snapshot *snap)
{
    const pts_constraints *c = s->c;
    const fw_node_info *const *nodes = (const fw_node_info *const *)snap->list;
    int64_t *counts = count_all_nodes(pl, c, pod, nodes, snap->n_list);
    int rc = counts ? KUBE_OK : KUBE_ENOMEM;

    for (size_t k = 0; rc == KUBE_OK && k < c->n_keys; k++)
        rc = plugin_tp_init(&s->keys[k].values,
                            strcmp(c->keys[k], LABEL_HOSTNAME) == 0 ? snap->n_list : 0);
    for (size_t i = 0; rc == KUBE_OK && i < snap->n_list; i++)
        if (nodes[i]->node)
            rc = merge_node_counts(s, nodes[i]->node, &counts[i * c->n]);
    for (size_t k = 0; rc == KUBE_OK && k < c->n_keys; k++)
        init_paths(&s->keys[k]);
    free(counts);
    return rc;
}

static fw_status *pre_filter(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                             fw_pre_filter_result **result)
{
    pod_topology_spread *pl = self;
    pts_constraints *c;
    pre_filter_state *s;
    int rc = get_constraints(pl, (fw_pod_info *)pod, KUBE_DO_NOT_SCHEDULE, &c);

    if (rc == KUBE_EINVAL)
        return fw_status_error(rc, "obtaining pod's hard topology spread constraints: "
                                   "invalid label selector");
    if (rc != KUBE_OK)
        return fw_status_error(rc, NULL);
    if (!c)
        return fw_status_new(FW_SKIP, NULL);
    if (!(s = pre_filter_state_new(c))) {
        constraints_unref(c);
        return fw_status_error(KUBE_ENOMEM, NULL);
    }
    if ((rc = fill_pre_filter_state(pl, s, pod->pod, snapshot_of(pl))) != KUBE_OK) {
        pre_filter_state_free(s);
        return fw_status_error(rc, NULL);
    }
    rc = fw_cycle_state_write(cs, PRE_FILTER_KEY, s, &pre_filter_ops);
    return rc == KUBE_OK ? NULL : fw_status_error(rc, NULL);
}

static fw_status *state_not_found(const char *key)
{
    return fw_status_error(KUBE_ENOTFOUND, "reading \"%s\" from cycleState: not found", key);
}

/* updateWithPod: what AddPod (delta 1) and RemovePod (delta -1) share. */
static fw_status *update_with_pod(fw_cycle_state *cs, const fw_pod_info *pod,
                                  const fw_pod_info *updated, const fw_node_info *ni, int delta)
{
    pre_filter_state *s = fw_cycle_state_read_static(cs, PRE_FILTER_KEY);
    const kube_pod *preemptor = pod->pod, *p = updated->pod;
    const kube_node *node = ni->node;

    if (!s)
        return state_not_found(PRE_FILTER_KEY);
    if (strcmp(p->base.meta.namespace_, preemptor->base.meta.namespace_) != 0 || !node ||
        !node_has_all_keys(node, s->c))
        return NULL;
    int affinity_ok = required_node_affinity_matches(preemptor, node);
    for (size_t j = 0; j < s->c->n; j++) {
        const pts_constraint *t = &s->c->items[j];
        plugin_tp_entry *e;
        if (!selector_matches_pod(t->selector, p) ||
            !match_inclusion_policies(t, preemptor, node, affinity_ok))
            continue;
        pts_key_state *ks = &s->keys[t->key];
        const char *value = node_label(node, t->topology_key);
        if (plugin_tp_add(&ks->values, t->topology_key, value, delta, NULL, &e) != KUBE_OK)
            return fw_status_error(KUBE_ENOMEM, NULL);
        paths_update(ks->paths, e->value, e->count);
    }
    return NULL;
}

static fw_status *pre_filter_add_pod(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                                     const fw_pod_info *pod_to_add, const fw_node_info *ni)
{
    return update_with_pod(cs, pod, pod_to_add, ni, 1);
}

static fw_status *pre_filter_remove_pod(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                                        const fw_pod_info *pod_to_remove, const fw_node_info *ni)
{
    return update_with_pod(cs, pod, pod_to_remove, ni, -1);
}

/* ------------------------------------------------------------------ */
/* Filter                                                              */
/* ------------------------------------------------------------------ */

static fw_status *filter(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                         const fw_node_info *ni)
{
    const pre_filter_state *s = fw_cycle_state_read_static(cs, PRE_FILTER_KEY);
    const kube_node *node = ni->node;

    if (!node)
        return fw_status_error(KUBE_ENOTFOUND, "node not found");
    if (!s)
        return state_not_found(PRE_FILTER_KEY);
    for (size_t j = 0; j < s->c->n; j++) {
        const pts_constraint *t = &s->c->items[j];
        const pts_key_state *ks = &s->keys[t->key];
        const char *value = node_label(node, t->topology_key);
        if (!value)
            return fw_status_new(FW_UNSCHEDULABLE_AND_UNRESOLVABLE,
                                 ERR_REASON_NODE_LABEL_NOT_MATCH);
        if (ks->domains == 0)
            continue; /* v1.28: no domain for the key is an internal error, skipped */
        int64_t min_match = ks->domains < t->min_domains ? 0 : ks->paths[0].num;
        int64_t skew = plugin_tp_count(&ks->values, t->topology_key, value) + t->self_match -
                       min_match;
        if (skew > t->max_skew)
            return fw_status_new(FW_UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH);
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Scoring                                                             */
/* ------------------------------------------------------------------ */

/* Read-only once PreScore wrote it: clones share it (refcounted). */
typedef struct pre_score_state {
    atomic_int refs;
    pts_constraints *c;
    int require_all;           /* requireAllTopologies */
    plugin_tp_table ignored;   /* (name, "") of feasible nodes lacking a key */
    plugin_tp_table counts;    /* matching pods per pair, non-hostname keys */
    double weights[];          /* topologyNormalizingWeight per constraint */
} pre_score_state;

static void *pre_score_state_ref(const void *data)
{
    pre_score_state *s = (pre_score_state *)data;
    atomic_fetch_add(&s->refs, 1);
    return s;
}

static void pre_score_state_unref(void *data)
{
    pre_score_state *s = data;
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    plugin_tp_free(&s->ignored);
    plugin_tp_free(&s->counts);
    constraints_unref(s->c);
    free(s);
}

static const fw_state_ops pre_score_ops = {pre_score_state_ref, pre_score_state_unref};

static int is_hostname(const char *key)
{
    return strcmp(key, LABEL_HOSTNAME) == 0;
}

static const char *label_or_empty(const kube_node *node, const char *key)
{
    const char *v = node_label(node, key);
    return v ? v : "";
}

/* initPreScoreState's pass over the feasible nodes: the ignored nodes
 * (lacking a key, only when requireAllTopologies), the pairs to count, and
 * each constraint's normalizing weight (a pair counts for the first
 * constraint adding it). */
static int init_pairs(pre_score_state *s, const fw_node_info *const *nodes, size_t n)
{
    const pts_constraints *c = s->c;
    size_t *size = calloc(c->n, sizeof(*size));
    int rc = size ? KUBE_OK : KUBE_ENOMEM;

    for (size_t i = 0; rc == KUBE_OK && i < n; i++) {
        const kube_node *node = nodes[i]->node;
        if (!node)
            continue;
        if (s->require_all && !node_has_all_keys(node, c)) {
            rc = plugin_tp_add(&s->ignored, nodes[i]->name, "", 1, NULL, NULL);
            continue;
        }
        for (size_t j = 0; rc == KUBE_OK && j < c->n; j++) {
            const char *key = c->items[j].topology_key;
            int created = 0;
            if (is_hostname(key))
                continue;
            rc = plugin_tp_add(&s->counts, key, label_or_empty(node, key), 0, &created, NULL);
            size[j] += created;
        }
    }
    for (size_t j = 0; rc == KUBE_OK && j < c->n; j++) {
        size_t sz = is_hostname(c->items[j].topology_key) ? n - s->ignored.len : size[j];
        s->weights[j] = log((double)(sz + 2));
    }
    free(size);
    return rc;
}

typedef struct score_count_job {
    const pre_score_state *s;
    const kube_pod *pod;
    const fw_node_info *const *nodes;
    int64_t *counts; /* [node][constraint], -1: nothing to add */
} score_count_job;

/* processAllNode: the node's matching pods for each constraint whose pair
 * is one of the feasible nodes' (read-only on the table). */
static void score_count_node(void *ud, size_t i)
{
    const score_count_job *job = ud;
    const pts_constraints *c = job->s->c;
    const kube_node *node = job->nodes[i]->node;
    int64_t *out = &job->counts[i * c->n];

    for (size_t j = 0; j < c->n; j++)
        out[j] = -1;
    if (!node || (job->s->require_all && !node_has_all_keys(node, c)))
        return;
    int affinity_ok = required_node_affinity_matches(job->pod, node);
    for (size_t j = 0; j < c->n; j++) {
        const pts_constraint *t = &c->items[j];
        if (match_inclusion_policies(t, job->pod, node, affinity_ok) &&
            plugin_tp_get(&job->s->counts, t->topology_key, label_or_empty(node, t->topology_key)))
            out[j] = count_matching_pods(job->nodes[i], t->selector,
                                         job->pod->base.meta.namespace_);
    }
}

static int count_score_pairs(const pod_topology_spread *pl, pre_score_state *s,
                             const kube_pod *pod, const fw_snapshot *snap)
{
    const pts_constraints *c = s->c;
    const fw_node_info *const *nodes = (const fw_node_info *const *)snap->list;
    int64_t *counts = malloc(snap->n_list * c->n * sizeof(*counts));

    if (!counts)
        return KUBE_ENOMEM;
    score_count_job job = {s, pod, nodes, counts};
    fw_parallelize(pl->h->svc.parallelizer, snap->n_list, score_count_node, &job, NULL);
    for (size_t i = 0; i < snap->n_list; i++)
        for (size_t j = 0; j < c->n; j++)
            if (counts[i * c->n + j] >= 0)
                plugin_tp_add(&s->counts, c->items[j].topology_key,
                              label_or_empty(nodes[i]->node, c->items[j].topology_key),
                              counts[i * c->n + j], NULL, NULL);
    free(counts);
    return KUBE_OK;
}

static fw_status *pre_score(void *self, fw_cycle_state *cs, const fw_pod_info *pod,
                            const fw_node_info *const *nodes, size_t n)
{
    const pod_topology_spread *pl = self;
    const fw_snapshot *snap = snapshot_of(pl);
    pts_constraints *c;
    pre_score_state *s;
    int rc;

    if (n == 0 || snap->n_list == 0)
        return fw_status_new(FW_SKIP, NULL);
    if ((rc = get_constraints(pl, (fw_pod_info *)pod, KUBE_SCHEDULE_ANYWAY, &c)) == KUBE_EINVAL)
        return fw_status_error(rc, "calculating preScoreState: obtaining pod's soft topology "
                                   "spread constraints: invalid label selector");
    if (rc != KUBE_OK)
        return fw_status_error(rc, NULL);
    if (!c)
        return fw_status_new(FW_SKIP, NULL);
    if (!(s = calloc(1, sizeof(*s) + c->n * sizeof(double)))) {
        constraints_unref(c);
        return fw_status_error(KUBE_ENOMEM, NULL);
    }
    atomic_init(&s->refs, 1);
    s->c = c;
    /* Only the pod's own or List defaults need every topology key. */
    s->require_all = pod->pod->n_spread > 0 || !pl->system_defaulted;
    if ((rc = init_pairs(s, nodes, n)) != KUBE_OK ||
        (rc = count_score_pairs(pl, s, pod->pod, snap)) != KUBE_OK) {
        pre_score_state_unref(s);
        return fw_status_error(rc, NULL);
    }
    rc = fw_cycle_state_write(cs, PRE_SCORE_KEY, s, &pre_score_ops);
    return rc == KUBE_OK ? NULL : fw_status_error(rc, NULL);
}

static const pre_score_state *read_pre_score(const fw_cycle_state *cs)
{
    return fw_cycle_state_read_static(cs, PRE_SCORE_KEY);
}

static fw_status *score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                        const fw_node_info *ni, int64_t *out)
{
    const pre_score_state *s = read_pre_score(cs);
    const kube_node *node = ni->node;
    double sum = 0;

    *out = 0;
    if (!node)
        return fw_status_error(KUBE_ENOTFOUND, "getting node %s from Snapshot: not found",
                               ni->name ? ni->name : "");
    if (!s)
        return fw_status_error(KUBE_ENOTFOUND, "error reading \"%s\" from cycleState: not found",
                               PRE_SCORE_KEY);
    if (plugin_tp_get(&s->ignored, ni->name, ""))
        return NULL;
    for (size_t j = 0; j < s->c->n; j++) {
        const pts_constraint *t = &s->c->items[j];
        const char *value = node_label(node, t->topology_key);
        int64_t cnt;
        if (!value)
            continue;
        if (is_hostname(t->topology_key))
            cnt = count_matching_pods(ni, t->selector, pod->namespace_);
        else
            cnt = plugin_tp_count(&s->counts, t->topology_key, value);
        sum += (double)cnt * s->weights[j] + (double)(t->max_skew - 1);
    }
    *out = (int64_t)round(sum);
    return NULL;
}

static fw_status *normalize_score(void *self, const fw_cycle_state *cs, const fw_pod_info *pod,
                                  fw_node_score *scores, size_t n)
{
    const pre_score_state *s = read_pre_score(cs);
    int64_t min_score = INT64_MAX, max_score = 0;

    if (!s)
        return fw_status_error(KUBE_ENOTFOUND, "error reading \"%s\" from cycleState: not found",
                               PRE_SCORE_KEY);
    for (size_t i = 0; i < n; i++) {
        if (plugin_tp_get(&s->ignored, scores[i].name, "")) {
            scores[i].score = INVALID_SCORE;
            continue;
        }
        if (scores[i].score < min_score)
            min_score = scores[i].score;
        if (scores[i].score > max_score)
            max_score = scores[i].score;
    }
    for (size_t i = 0; i < n; i++) {
        if (scores[i].score == INVALID_SCORE)
            scores[i].score = 0;
        else if (max_score == 0)
            scores[i].score = FW_MAX_NODE_SCORE;
        else
            scores[i].score =
                FW_MAX_NODE_SCORE * (max_score + min_score - scores[i].score) / max_score;
    }
    return NULL;
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
    .pre_filter = pre_filter,
    .pre_filter_add_pod = pre_filter_add_pod,
    .pre_filter_remove_pod = pre_filter_remove_pod,
    .filter = filter,
    .pre_score = pre_score,
    .score = score,
    .normalize_score = normalize_score,
    .events_to_register = events_to_register,
};
