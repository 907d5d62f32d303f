/*
 * kube/types/pod.c - v1 Pod decoding, compact, into the struct the
 * scheduler reads (pod.h); the resource requests are pod_requests.c.
 */
#include "kube/types/pod_int.h"

/* ---- small helpers ---- */

/* A string member read in place, not kept: "" when absent. */
static int peek_str(const cJSON *j, const char *key, const char **out)
{
    const cJSON *v = kube_json_get(j, key);

    *out = "";
    if (!v)
        return KUBE_OK;
    if (!cJSON_IsString(v) || !v->valuestring)
        return KUBE_EPARSE;
    *out = v->valuestring;
    return KUBE_OK;
}

/* ---- tolerations ---- */

static int toleration_fn(const cJSON *j, kube_arena *a, void *elem, void *ctx)
{
    kube_toleration *t = elem;
    const char *op, *effect;
    int64_t secs;
    int rc;

    (void)ctx;
    if ((rc = kube_json_str_shared(j, "key", a, "", &t->key)) ||
        (rc = kube_json_str_shared(j, "value", a, "", &t->value)) ||
        (rc = peek_str(j, "operator", &op)) || (rc = peek_str(j, "effect", &effect)) ||
        (rc = kube_json_int64(j, "tolerationSeconds", INT64_MIN, INT64_MAX, 0, &secs)))
        return rc;
    t->has_seconds = kube_json_get(j, "tolerationSeconds") != NULL;
    t->seconds = secs;
    if (strcmp(op, "") == 0 || strcmp(op, "Equal") == 0)
        t->op = KUBE_TOL_EQUAL;
    else if (strcmp(op, "Exists") == 0)
        t->op = KUBE_TOL_EXISTS;
    else
        t->op = KUBE_TOL_INVALID;
    if (strcmp(effect, "") == 0)
        t->effect = KUBE_EFFECT_ALL;
    else if (strcmp(effect, "NoSchedule") == 0)
        t->effect = KUBE_EFFECT_NO_SCHEDULE;
    else if (strcmp(effect, "PreferNoSchedule") == 0)
        t->effect = KUBE_EFFECT_PREFER_NO_SCHEDULE;
    else if (strcmp(effect, "NoExecute") == 0)
        t->effect = KUBE_EFFECT_NO_EXECUTE;
    else
        t->op = KUBE_TOL_INVALID; /* an effect no taint has: tolerates nothing */
    return KUBE_OK;
}

int kube_toleration_tolerates(const kube_toleration *t, const kube_taint *taint)
{
    if (t->effect != KUBE_EFFECT_ALL && t->effect != taint->effect)
        return 0;
    if (t->key[0] && strcmp(t->key, taint->key) != 0)
        return 0;
    if (t->op == KUBE_TOL_EXISTS)
        return 1;
    return t->op == KUBE_TOL_EQUAL && strcmp(t->value, taint->value) == 0;
}

/* ---- affinity ---- */

/* One PodAffinityTerm; NULL reads as an empty term. */
static int affinity_term_decode(const cJSON *j, kube_arena *a, kube_pod_affinity_term *t)
{
    int rc;

    if (j && !cJSON_IsObject(j))
        return KUBE_EPARSE;
    if ((rc = kube_label_selector_decode(kube_json_get(j, "labelSelector"), a,
                                         &t->label_selector)) ||
        (rc = kube_json_strings(j, "namespaces", a, &t->namespaces, &t->n_namespaces)) ||
        (rc = kube_label_selector_decode(kube_json_get(j, "namespaceSelector"), a,
                                         &t->namespace_selector)) ||
        (rc = kube_json_str_shared(j, "topologyKey", a, "", &t->topology_key)) ||
        (rc = kube_json_strings(j, "matchLabelKeys", a, &t->match_label_keys,
                                &t->n_match_label_keys)))
        return rc;
    return kube_json_strings(j, "mismatchLabelKeys", a, &t->mismatch_label_keys,
                             &t->n_mismatch_label_keys);
}

static int affinity_term_fn(const cJSON *j, kube_arena *a, void *elem, void *ctx)
{
    (void)ctx;
    return affinity_term_decode(j, a, elem);
}

static int weighted_term_fn(const cJSON *j, kube_arena *a, void *elem, void *ctx)
{
    kube_weighted_pod_affinity_term *w = elem;
    const cJSON *term;
    int rc;

    (void)ctx;
    if ((rc = kube_json_int32(j, "weight", 0, &w->weight)) ||
        (rc = kube_json_object(j, "podAffinityTerm", &term)))
        return rc;
    return affinity_term_decode(term, a, &w->term);
}

static int pod_affinity_decode(const cJSON *j, kube_arena *a, kube_pod_affinity *pa)
{
    int rc;

    if (!j)
        return KUBE_OK;
    if (!cJSON_IsObject(j))
        return KUBE_EPARSE;
    if ((rc = kube_json_objects(j, "requiredDuringSchedulingIgnoredDuringExecution", a,
                                sizeof(kube_pod_affinity_term), affinity_term_fn, NULL,
                                (void **)&pa->required, &pa->n_required)))
        return rc;
    return kube_json_objects(j, "preferredDuringSchedulingIgnoredDuringExecution", a,
                             sizeof(kube_weighted_pod_affinity_term), weighted_term_fn, NULL,
                             (void **)&pa->preferred, &pa->n_preferred);
}

static int preferred_term_fn(const cJSON *j, kube_arena *a, void *elem, void *ctx)
{
    kube_preferred_term *p = elem;
    int rc;

    (void)ctx;
    if ((rc = kube_json_int32(j, "weight", 0, &p->weight)))
        return rc;
    return kube_node_selector_term_decode(kube_json_get(j, "preference"), a, &p->preference);
}

static int node_affinity_decode(const cJSON *j, kube_arena *a, kube_affinity *af)
{
    int rc;

    if (!j)
        return KUBE_OK;
    if (!cJSON_IsObject(j))
        return KUBE_EPARSE;
    if ((rc = kube_node_selector_decode(
             kube_json_get(j, "requiredDuringSchedulingIgnoredDuringExecution"), a,
             &af->node_required)))
        return rc;
    return kube_json_objects(j, "preferredDuringSchedulingIgnoredDuringExecution", a,
                             sizeof(kube_preferred_term), preferred_term_fn, NULL,
                             (void **)&af->node_preferred, &af->n_node_preferred);
}

static int affinity_decode(const cJSON *spec, kube_arena *a, const kube_affinity **out)
{
    const cJSON *j;
    kube_affinity *af;
    int rc = kube_json_object(spec, "affinity", &j);

    *out = NULL;
    if (rc != KUBE_OK || !j)
        return rc;
    if (!(af = kube_arena_alloc(a, sizeof(*af))))
        return KUBE_ENOMEM;
    if ((rc = node_affinity_decode(kube_json_get(j, "nodeAffinity"), a, af)) ||
        (rc = pod_affinity_decode(kube_json_get(j, "podAffinity"), a, &af->pod_affinity)) ||
        (rc = pod_affinity_decode(kube_json_get(j, "podAntiAffinity"), a, &af->pod_anti_affinity)))
        return rc;
    *out = af;
    return KUBE_OK;
}

/* ---- topology spread ---- */

static int policy_decode(const cJSON *j, const char *key, kube_inclusion_policy def,
                         kube_inclusion_policy *out)
{
    const cJSON *v = kube_json_get(j, key);

    *out = def;
    if (!v)
        return KUBE_OK;
    if (!cJSON_IsString(v))
        return KUBE_EPARSE;
    if (strcmp(v->valuestring, "Honor") == 0)
        *out = KUBE_POLICY_HONOR;
    else if (strcmp(v->valuestring, "Ignore") == 0)
        *out = KUBE_POLICY_IGNORE;
    else
        return KUBE_EPARSE;
    return KUBE_OK;
}

static int spread_fn(const cJSON *j, kube_arena *a, void *elem, void *ctx)
{
    kube_spread_constraint *c = elem;
    const cJSON *when = kube_json_get(j, "whenUnsatisfiable");
    int rc;

    (void)ctx;
    if (!cJSON_IsString(when))
        return KUBE_EPARSE;
    if (strcmp(when->valuestring, "DoNotSchedule") == 0)
        c->when_unsatisfiable = KUBE_DO_NOT_SCHEDULE;
    else if (strcmp(when->valuestring, "ScheduleAnyway") == 0)
        c->when_unsatisfiable = KUBE_SCHEDULE_ANYWAY;
    else
        return KUBE_EPARSE;
    if ((rc = kube_json_int32(j, "maxSkew", 0, &c->max_skew)) ||
        (rc = kube_json_str_shared(j, "topologyKey", a, "", &c->topology_key)) ||
        (rc = kube_label_selector_decode(kube_json_get(j, "labelSelector"), a,
                                         &c->label_selector)) ||
        (rc = kube_json_int32(j, "minDomains", 0, &c->min_domains)) ||
        (rc =
             policy_decode(j, "nodeAffinityPolicy", KUBE_POLICY_HONOR, &c->node_affinity_policy)) ||
        (rc = policy_decode(j, "nodeTaintsPolicy", KUBE_POLICY_IGNORE, &c->node_taints_policy)))
        return rc;
    return kube_json_strings(j, "matchLabelKeys", a, &c->match_label_keys, &c->n_match_label_keys);
}

/* ---- volumes ---- */

/* The source member of a volume and its type, or NULL/OTHER. */
static const cJSON *volume_source(const cJSON *j, kube_volume_type *type)
{
    static const struct {
        const char *key;
        kube_volume_type type;
    } kinds[] = {
        {"persistentVolumeClaim", KUBE_VOL_PVC},
        {"ephemeral", KUBE_VOL_EPHEMERAL},
        {"gcePersistentDisk", KUBE_VOL_GCE_PD},
        {"awsElasticBlockStore", KUBE_VOL_AWS_EBS},
        {"rbd", KUBE_VOL_RBD},
        {"iscsi", KUBE_VOL_ISCSI},
        {"azureDisk", KUBE_VOL_AZURE_DISK},
    };

    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        const cJSON *src = kube_json_get(j, kinds[i].key);
        if (src) {
            *type = kinds[i].type;
            return src;
        }
    }
    *type = KUBE_VOL_OTHER;
    return NULL;
}

/* ephemeral.VolumeClaimName: "<pod>-<volume>" */
static int ephemeral_claim_name(kube_arena *a, const char *pod, const char *vol, const char **out)
{
    size_t lp = strlen(pod), lv = strlen(vol);
    char *s = kube_arena_strndup(a, pod, lp + 1 + lv);

    if (!s)
        return KUBE_ENOMEM;
    memcpy(s, pod, lp);
    s[lp] = '-';
    memcpy(s + lp + 1, vol, lv + 1);
    *out = s;
    return KUBE_OK;
}

static int disk_decode(const cJSON *src, kube_volume_type type, kube_arena *a, kube_volume *v)
{
    kube_volume_disk *d = kube_arena_alloc(a, sizeof(*d));
    int rc;

    if (!d)
        return KUBE_ENOMEM;
    v->disk = d;
    if (type == KUBE_VOL_RBD) {
        if ((rc = kube_json_strings(src, "monitors", a, &d->monitors, &d->n_monitors)) ||
            (rc = kube_json_str(src, "pool", a, "", &d->pool)))
            return rc;
        return kube_json_str(src, "image", a, "", &v->id);
    }
    if ((rc = kube_json_str(src, "targetPortal", a, "", &d->target_portal)) ||
        (rc = kube_json_int32(src, "lun", 0, &d->lun)))
        return rc;
    return kube_json_str(src, "iqn", a, "", &v->id);
}

static int volume_id_decode(const cJSON *src, kube_volume_type type, kube_arena *a, kube_volume *v)
{
    switch (type) {
    case KUBE_VOL_PVC:
        return kube_json_str(src, "claimName", a, "", &v->id);
    case KUBE_VOL_GCE_PD:
        return kube_json_str(src, "pdName", a, "", &v->id);
    case KUBE_VOL_AWS_EBS:
        return kube_json_str(src, "volumeID", a, "", &v->id);
    case KUBE_VOL_AZURE_DISK:
        return kube_json_str(src, "diskName", a, "", &v->id);
    case KUBE_VOL_RBD:
    case KUBE_VOL_ISCSI:
        return disk_decode(src, type, a, v);
    default:
        return KUBE_OK;
    }
}

static int volume_fn(const cJSON *j, kube_arena *a, void *elem, void *ctx)
{
    kube_volume *v = elem;
    const kube_pod *pod = ctx;
    const cJSON *src = volume_source(j, &v->type);
    int rc;

    if ((rc = kube_json_str(j, "name", a, "", &v->name)))
        return rc;
    if (!src)
        return KUBE_OK;
    if (!cJSON_IsObject(src))
        return KUBE_EPARSE;
    if (v->type == KUBE_VOL_EPHEMERAL)
        return ephemeral_claim_name(a, pod->base.meta.name, v->name, &v->id);
    if ((rc = kube_json_bool(src, "readOnly", 0, &v->read_only)))
        return rc;
    return volume_id_decode(src, v->type, a, v);
}

/* ---- containers: images and host ports ---- */

static int image_fn(const cJSON *j, kube_arena *a, void *elem, void *ctx)
{
    return kube_json_str_shared(j, "image", a, "", elem);
}

/* The images of the containers listed at key, shared. */
static int images_decode(const cJSON *spec, const char *key, kube_arena *a, const char *const **out,
                         size_t *n)
{
    return kube_json_objects_shared(spec, key, a, sizeof(const char *), 1, image_fn, (void **)out,
                                    n);
}

/* Counts (out NULL) or fills the hostPort > 0 entries of one container. */
static int container_ports(const cJSON *c, kube_arena *a, kube_host_port *out, size_t *n)
{
    const cJSON *ports, *p;
    size_t count;
    int32_t port;
    int rc = kube_json_array(c, "ports", &ports, &count);

    if (rc != KUBE_OK)
        return rc;
    cJSON_ArrayForEach(p, ports)
    {
        if (!cJSON_IsObject(p))
            return KUBE_EPARSE;
        if ((rc = kube_json_int32(p, "hostPort", 0, &port)))
            return rc;
        if (port <= 0)
            continue;
        if (out) {
            kube_host_port *hp = &out[*n];
            hp->port = port;
            if ((rc = kube_json_str_shared(p, "hostIP", a, "", &hp->host_ip)) ||
                (rc = kube_json_str_shared(p, "protocol", a, "", &hp->protocol)))
                return rc;
            if (!hp->host_ip[0])
                hp->host_ip = "0.0.0.0";
            if (!hp->protocol[0])
                hp->protocol = "TCP";
        }
        (*n)++;
    }
    return KUBE_OK;
}

static int host_ports_decode(const cJSON *spec, kube_arena *a, kube_pod *pod)
{
    const cJSON *containers, *c;
    kube_host_port *ports;
    size_t count, n = 0;
    kube_arena_stage st;
    int rc = kube_json_array(spec, "containers", &containers, &count);

    if (rc != KUBE_OK)
        return rc;
    cJSON_ArrayForEach(c, containers)
    {
        if (!cJSON_IsObject(c))
            return KUBE_EPARSE;
        if ((rc = container_ports(c, a, NULL, &n)))
            return rc;
    }
    if (n == 0)
        return KUBE_OK;
    if (!(ports = kube_arena_stage_alloc(a, &st, n * sizeof(*ports))))
        return KUBE_ENOMEM;
    n = 0;
    cJSON_ArrayForEach(c, containers)
    {
        if ((rc = container_ports(c, a, ports, &n)))
            return rc;
    }
    pod->host_ports = kube_arena_share(a, &st, ports, n, sizeof(*ports), 2);
    pod->n_host_ports = (uint32_t)n;
    return pod->host_ports ? KUBE_OK : KUBE_ENOMEM;
}

/* ---- the rest of the pod ---- */

static int gate_fn(const cJSON *j, kube_arena *a, void *elem, void *ctx)
{
    (void)ctx;
    return kube_json_str_shared(j, "name", a, "", elem);
}

static int condition_fn(const cJSON *j, kube_arena *a, void *elem, void *ctx)
{
    kube_pod_condition *c = elem;
    int rc;

    (void)ctx;
    if ((rc = kube_json_str_shared(j, "type", a, "", &c->type)) ||
        (rc = kube_json_str_shared(j, "status", a, "", &c->status)) ||
        (rc = kube_json_str_shared(j, "reason", a, "", &c->reason)) ||
        (rc = kube_json_str(j, "message", a, "", &c->message)))
        return rc;
    return kube_json_time(j, "lastTransitionTime", &c->last_transition_us);
}

static int preemption_decode(const cJSON *spec, kube_pod *pod)
{
    const cJSON *v = kube_json_get(spec, "preemptionPolicy");

    pod->preemption_policy = KUBE_PREEMPT_LOWER_PRIORITY;
    if (!v)
        return KUBE_OK;
    if (!cJSON_IsString(v))
        return KUBE_EPARSE;
    if (strcmp(v->valuestring, "Never") == 0)
        pod->preemption_policy = KUBE_PREEMPT_NEVER;
    else if (strcmp(v->valuestring, "PreemptLowerPriority") != 0)
        return KUBE_EPARSE;
    return KUBE_OK;
}

/* Array counts while decoding: the helpers count in size_t, the pod keeps
 * 32-bit counts (a cJSON array holds fewer than INT_MAX elements). */
typedef struct spec_counts {
    size_t node_selector, tolerations, spread, gates, volumes, images, init_images;
} spec_counts;

static int spec_arrays(const cJSON *spec, kube_arena *a, kube_pod *p, spec_counts *n)
{
    int rc;

    if ((rc = kube_json_string_map_shared(spec, "nodeSelector", a, &p->node_selector,
                                          &n->node_selector)) ||
        (rc = kube_json_objects_shared(spec, "tolerations", a, sizeof(kube_toleration), 2,
                                       toleration_fn, (void **)&p->tolerations, &n->tolerations)) ||
        (rc =
             kube_json_objects(spec, "topologySpreadConstraints", a, sizeof(kube_spread_constraint),
                               spread_fn, NULL, (void **)&p->spread, &n->spread)) ||
        (rc = kube_json_objects_shared(spec, "schedulingGates", a, sizeof(const char *), 1, gate_fn,
                                       (void **)&p->scheduling_gates, &n->gates)) ||
        (rc = kube_json_objects(spec, "volumes", a, sizeof(kube_volume), volume_fn, p,
                                (void **)&p->volumes, &n->volumes)) ||
        (rc = images_decode(spec, "containers", a, &p->images, &n->images)))
        return rc;
    return images_decode(spec, "initContainers", a, &p->init_images, &n->init_images);
}

static int spec_decode(const cJSON *spec, kube_arena *a, kube_pod *p)
{
    spec_counts n = {0};
    int rc;

    if ((rc = kube_json_str_shared(spec, "nodeName", a, "", &p->node_name)) ||
        (rc = kube_json_str_shared(spec, "schedulerName", a, KUBE_DEFAULT_SCHEDULER_NAME,
                                   &p->scheduler_name)) ||
        (rc = kube_json_int32(spec, "priority", 0, &p->priority)) ||
        (rc = preemption_decode(spec, p)) || (rc = affinity_decode(spec, a, &p->affinity)) ||
        (rc = spec_arrays(spec, a, p, &n)) || (rc = host_ports_decode(spec, a, p)))
        return rc;
    p->n_node_selector = (uint32_t)n.node_selector;
    p->n_tolerations = (uint32_t)n.tolerations;
    p->n_spread = (uint32_t)n.spread;
    p->n_scheduling_gates = (uint32_t)n.gates;
    p->n_volumes = (uint32_t)n.volumes;
    p->n_images = (uint32_t)n.images;
    p->n_init_images = (uint32_t)n.init_images;
    return kube_pod_requests_decode(spec, a, p);
}

static int status_decode(const cJSON *status, kube_arena *a, kube_pod *p)
{
    size_t n = 0;
    int rc;

    if ((rc = kube_json_str_shared(status, "phase", a, "", &p->phase)) ||
        (rc = kube_json_str_shared(status, "nominatedNodeName", a, "", &p->nominated_node_name)) ||
        (rc = kube_json_objects_shared(status, "conditions", a, sizeof(kube_pod_condition), 3,
                                       condition_fn, (void **)&p->conditions, &n)))
        return rc;
    p->n_conditions = (uint32_t)n;
    return KUBE_OK;
}

static int pod_fill(const cJSON *json, kube_arena *a, kube_object *obj)
{
    kube_pod *p = (kube_pod *)obj;
    const cJSON *spec, *status;
    int rc;

    if ((rc = kube_json_object(json, "spec", &spec)) ||
        (rc = kube_json_object(json, "status", &status)) || (rc = spec_decode(spec, a, p)))
        return rc;
    return status_decode(status, a, p);
}

KUBE_KIND_DEFINE(pod, "Pod", kube_pod, pod_fill)

int kube_pod_is_migration_target(const kube_pod *p)
{
    return p && kube_meta_label(&p->base.meta, KUBE_LABEL_MIGRATION_JOB_UID) != NULL;
}

int kube_pod_is_terminal(const kube_pod *p)
{
    return p && (strcmp(p->phase, "Succeeded") == 0 || strcmp(p->phase, "Failed") == 0);
}

const kube_pod_condition *kube_pod_condition_get(const kube_pod *p, const char *type)
{
    for (size_t i = 0; p && type && i < p->n_conditions; i++)
        if (strcmp(p->conditions[i].type, type) == 0)
            return &p->conditions[i];
    return NULL;
}
