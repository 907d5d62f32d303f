/*
 * scheduler/extender_calls.c - the extender calls of a scheduling cycle
 * (extender.h): findNodesThatPassExtenders, the extenders' part of
 * prioritizeNodes, and the preemption evaluator's callExtenders, with
 * kube's extender/v1 JSON (ExtenderArgs, ExtenderFilterResult,
 * HostPriorityList, ExtenderPreemptionArgs / Result).
 */
#include "extender_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/types/node.h"
#include "kube/types/pod.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "kube/util/strmap.h"

/* j when it is of that cJSON type (cJSON_Array, cJSON_Object), else NULL:
 * what cJSON_ArrayForEach iterates over safely. */
static const cJSON *of_type(const cJSON *j, int type)
{
    return j && (j->type & 0xFF) == type ? j : NULL;
}

/* ------------------------------------------------------------------ */
/* ExtenderArgs                                                        */
/* ------------------------------------------------------------------ */

static cJSON *kv_json(const kube_kv *kv, size_t n)
{
    cJSON *o = cJSON_CreateObject();

    for (size_t i = 0; o && i < n; i++)
        cJSON_AddStringToObject(o, kv[i].key, kv[i].value);
    return o;
}

static void add_quantity(cJSON *o, const char *name, int64_t v, const char *suffix)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "%lld%s", (long long)v, suffix);
    cJSON_AddStringToObject(o, name, buf);
}

static cJSON *allocatable_json(const fw_resource *r)
{
    cJSON *o = cJSON_CreateObject();

    if (!o)
        return NULL;
    add_quantity(o, "cpu", r->milli_cpu, "m");
    add_quantity(o, "memory", r->memory, "");
    add_quantity(o, "ephemeral-storage", r->ephemeral_storage, "");
    add_quantity(o, "pods", r->allowed_pod_number, "");
    for (uint32_t i = 0; i < r->n_scalars; i++)
        add_quantity(o, r->scalars[i].name, r->scalars[i].value, "");
    return o;
}

static const char *effect_name(kube_taint_effect e)
{
    return e == KUBE_EFFECT_NO_SCHEDULE          ? "NoSchedule"
           : e == KUBE_EFFECT_PREFER_NO_SCHEDULE ? "PreferNoSchedule"
                                                 : "NoExecute";
}

/* A v1.Node from what the cache keeps of it. */
static cJSON *node_json(const fw_node_info *ni)
{
    const kube_node *node = ni->node;
    cJSON *o = cJSON_CreateObject(), *meta, *spec, *status, *taints;

    if (!o || !node)
        return o;
    meta = cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(meta, "name", ni->name);
    cJSON_AddStringToObject(meta, "uid", node->base.meta.uid);
    cJSON_AddStringToObject(meta, "resourceVersion", node->base.meta.resource_version);
    cJSON_AddItemToObject(meta, "labels",
                          kv_json(node->base.meta.labels, node->base.meta.n_labels));
    cJSON_AddItemToObject(meta, "annotations",
                          kv_json(node->base.meta.annotations, node->base.meta.n_annotations));
    spec = cJSON_AddObjectToObject(o, "spec");
    if (node->unschedulable)
        cJSON_AddTrueToObject(spec, "unschedulable");
    taints = node->n_taints ? cJSON_AddArrayToObject(spec, "taints") : NULL;
    for (uint32_t i = 0; taints && i < node->n_taints; i++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddItemToArray(taints, t);
        cJSON_AddStringToObject(t, "key", node->taints[i].key);
        if (*node->taints[i].value)
            cJSON_AddStringToObject(t, "value", node->taints[i].value);
        cJSON_AddStringToObject(t, "effect", effect_name(node->taints[i].effect));
    }
    status = cJSON_AddObjectToObject(o, "status");
    cJSON_AddItemToObject(status, "allocatable", allocatable_json(&ni->allocatable));
    return o;
}

/* ExtenderArgs {pod, nodes | nodenames} over nodes[0..n), or NULL with
 * the reason in err. The pod is a reference into x's cache. */
static cJSON *extender_args(sched_extenders *x, const http_extender *e, const fw_pod_info *pod,
                            const fw_node_info *const *nodes, size_t n, char *err)
{
    const cJSON *pj = ext_pod_json(x, pod, err);
    cJSON *args = pj ? cJSON_CreateObject() : NULL, *list = NULL;

    if (!args)
        return NULL;
    cJSON_AddItemReferenceToObject(args, "Pod", (cJSON *)pj);
    if (e->cfg->node_cache_capable) {
        cJSON_AddNullToObject(args, "Nodes");
        list = cJSON_AddArrayToObject(args, "NodeNames");
        for (size_t i = 0; list && i < n; i++)
            cJSON_AddItemToArray(list, cJSON_CreateString(nodes[i]->name));
    } else {
        cJSON *nl = cJSON_AddObjectToObject(args, "Nodes");
        cJSON_AddObjectToObject(nl, "metadata");
        list = cJSON_AddArrayToObject(nl, "items");
        cJSON_AddNullToObject(args, "NodeNames");
        for (size_t i = 0; list && i < n; i++)
            cJSON_AddItemToArray(list, node_json(nodes[i]));
    }
    if (!list || cJSON_GetArraySize(list) != (int)n) {
        snprintf(err, EXT_ERR_MAX, "%s", kube_strerror(KUBE_ENOMEM));
        cJSON_Delete(args);
        return NULL;
    }
    return args;
}

/* node name -> index + 1 over nodes[0..n). */
static int index_nodes(kube_strmap *m, const fw_node_info *const *nodes, size_t n)
{
    int rc = KUBE_OK;

    for (size_t i = 0; i < n && rc == KUBE_OK; i++)
        rc = kube_strmap_put(m, nodes[i]->name, (void *)(i + 1), NULL);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Filter                                                              */
/* ------------------------------------------------------------------ */

/* The names the extender kept: nodenames (nodeCacheCapable) or
 * nodes.items[].metadata.name; NULL for none. */
static const cJSON *kept_names(const http_extender *e, const cJSON *res, int *from_nodes)
{
    const cJSON *names = cJSON_GetObjectItem(res, "NodeNames");
    const cJSON *nl = cJSON_GetObjectItem(res, "Nodes");

    *from_nodes = 0;
    if (e->cfg->node_cache_capable && cJSON_IsArray(names))
        return names;
    *from_nodes = 1;
    return cJSON_GetObjectItem(nl, "items");
}

/* nodes[0..*n) narrowed to the names the extender kept, in its order. */
static int narrow(const http_extender *e, const cJSON *res, const fw_node_info **nodes, size_t *n,
                  char *err)
{
    kube_strmap m = KUBE_STRMAP_INIT;
    const fw_node_info **keep = calloc(*n ? *n : 1, sizeof(*keep));
    int from_nodes, rc = keep ? index_nodes(&m, nodes, *n) : KUBE_ENOMEM;
    const cJSON *item, *names = kept_names(e, res, &from_nodes);
    size_t k = 0;

    cJSON_ArrayForEach(item, of_type(names, cJSON_Array))
    {
        const cJSON *name =
            from_nodes ? cJSON_GetObjectItem(cJSON_GetObjectItem(item, "metadata"), "name") : item;
        size_t idx = cJSON_IsString(name) ? (size_t)kube_strmap_get(&m, name->valuestring) : 0;
        if (rc != KUBE_OK)
            break;
        if (idx == 0 || k == *n) {
            snprintf(
                err, EXT_ERR_MAX,
                "extender \"%s\" claims a filtered node \"%s\" which is not found in the input "
                "node list",
                e->url, cJSON_IsString(name) ? name->valuestring : "");
            rc = KUBE_EINVAL;
            break;
        }
        keep[k++] = nodes[idx - 1];
    }
    if (rc == KUBE_OK) {
        memcpy(nodes, keep, k * sizeof(*keep));
        *n = k;
    }
    free(keep);
    kube_strmap_free(&m);
    return rc;
}

/* statuses.Set(node, status) of findNodesThatPassExtenders (v1.28): an
 * unresolvable failure makes the node's status unresolvable with its
 * reasons plus msg; an Unschedulable one is a new status or appended as a
 * reason. */
static int set_node_status(fw_diagnosis *d, const char *node, fw_code code, const char *msg)
{
    fw_node_status *ns = NULL;

    for (size_t i = 0; i < d->n_nodes && !ns; i++)
        if (strcmp(d->nodes[i].node, node) == 0)
            ns = &d->nodes[i];
    if (!ns)
        return fw_diagnosis_add_node(d, node, fw_status_new(code, msg));
    if (code == FW_UNSCHEDULABLE_AND_UNRESOLVABLE)
        ns->status->code = code;
    return fw_status_add_reason(ns->status, msg);
}

/* failedAndUnresolvableNodes, then failedNodes not in it. */
static int record_failed(const cJSON *res, fw_diagnosis *d)
{
    const cJSON *unres = cJSON_GetObjectItem(res, "FailedAndUnresolvableNodes");
    const cJSON *failed = cJSON_GetObjectItem(res, "FailedNodes"), *f;
    int rc = KUBE_OK;

    cJSON_ArrayForEach(f, of_type(unres, cJSON_Object))
    {
        if (rc == KUBE_OK && cJSON_IsString(f))
            rc = set_node_status(d, f->string, FW_UNSCHEDULABLE_AND_UNRESOLVABLE, f->valuestring);
    }
    cJSON_ArrayForEach(f, of_type(failed, cJSON_Object))
    {
        if (rc != KUBE_OK || !cJSON_IsString(f) ||
            (cJSON_IsObject(unres) && cJSON_GetObjectItemCaseSensitive(unres, f->string)))
            continue;
        rc = set_node_status(d, f->string, FW_UNSCHEDULABLE, f->valuestring);
    }
    return rc;
}

/* HTTPExtender.Filter plus the bookkeeping of findNodesThatPassExtenders. */
static int filter_one(sched_extenders *x, const http_extender *e, const fw_pod_info *pod,
                      const fw_node_info **nodes, size_t *n, fw_diagnosis *d, char *err)
{
    cJSON *args = extender_args(x, e, pod, nodes, *n, err), *res = NULL;
    const cJSON *msg;
    int rc = args ? ext_send(e, e->cfg->filter_verb, args, &res, err) : KUBE_EIO;

    msg = cJSON_GetObjectItem(res, "Error");
    if (rc == KUBE_OK && cJSON_IsString(msg) && *msg->valuestring) {
        snprintf(err, EXT_ERR_MAX, "%s", msg->valuestring);
        rc = KUBE_ESERVER;
    }
    if (rc == KUBE_OK)
        rc = narrow(e, res, nodes, n, err);
    if (rc == KUBE_OK && record_failed(res, d) != KUBE_OK)
        rc = KUBE_ENOMEM;
    cJSON_Delete(args);
    cJSON_Delete(res);
    return rc;
}

fw_status *ext_filter(void *ud, const fw_pod_info *pod, const fw_node_info **nodes, size_t *n,
                      fw_diagnosis *d)
{
    sched_extenders *x = ud;
    char err[EXT_ERR_MAX];

    for (size_t i = 0; i < x->n && *n; i++) {
        const http_extender *e = &x->v[i];
        int rc;
        if (!*e->cfg->filter_verb || !ext_interested(e, pod))
            continue;
        rc = filter_one(x, e, pod, nodes, n, d, err);
        if (rc == KUBE_OK)
            continue;
        if (!e->cfg->ignorable)
            return fw_status_error(rc, "%s", err);
        KLOG_INFO("Skipping extender as it returned error and has ignorable flag set "
                  "extender=\"%s\" err=\"%s\"",
                  e->url, err);
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Prioritize                                                          */
/* ------------------------------------------------------------------ */

/* One extender's prioritization, run on a thread of its own when several
 * extenders prioritize (kube-scheduler runs each in a goroutine). */
typedef struct prio_job {
    sched_extenders *x;
    const http_extender *e;
    const fw_pod_info *pod;
    const fw_node_info *const *nodes;
    size_t n;
    int64_t *add; /* per node: score * weight * 10 (n entries, zeroed) */
    int rc;
    char err[EXT_ERR_MAX];
    pthread_t thread;
    int threaded;
} prio_job;

/* HTTPExtender.Prioritize: the HostPriorityList into j->add. */
static int prioritize_one(prio_job *j)
{
    kube_strmap m = KUBE_STRMAP_INIT;
    cJSON *args = extender_args(j->x, j->e, j->pod, j->nodes, j->n, j->err), *res = NULL;
    const cJSON *hp;
    int rc = args ? ext_send(j->e, j->e->cfg->prioritize_verb, args, &res, j->err) : KUBE_EIO;

    if (rc == KUBE_OK)
        rc = index_nodes(&m, j->nodes, j->n);
    cJSON_ArrayForEach(hp, of_type(rc == KUBE_OK ? res : NULL, cJSON_Array))
    {
        const cJSON *host = cJSON_GetObjectItem(hp, "Host");
        const cJSON *score = cJSON_GetObjectItem(hp, "Score");
        size_t idx = cJSON_IsString(host) ? (size_t)kube_strmap_get(&m, host->valuestring) : 0;
        if (idx && cJSON_IsNumber(score))
            j->add[idx - 1] += (int64_t)score->valuedouble * j->e->cfg->weight *
                               (FW_MAX_NODE_SCORE / EXT_MAX_PRIORITY);
    }
    kube_strmap_free(&m);
    cJSON_Delete(args);
    cJSON_Delete(res);
    return rc;
}

static void *prioritize_main(void *arg)
{
    prio_job *j = arg;

    pthread_setname_np(pthread_self(), "sched-extender");
    j->rc = prioritize_one(j);
    return NULL;
}

/* The interested prioritizing extenders' jobs (each with its add array),
 * or NULL (*n 0) when there is none or memory runs out. */
static prio_job *prioritize_jobs(sched_extenders *x, const fw_pod_info *pod,
                                 const fw_node_info *const *nodes, size_t n_nodes, size_t *n)
{
    prio_job *jobs = calloc(x->n, sizeof(*jobs));

    *n = 0;
    for (size_t i = 0; jobs && i < x->n; i++) {
        const http_extender *e = &x->v[i];
        if (!*e->cfg->prioritize_verb || !ext_interested(e, pod))
            continue;
        jobs[*n] = (prio_job){.x = x, .e = e, .pod = pod, .nodes = nodes, .n = n_nodes};
        if (!(jobs[*n].add = calloc(n_nodes ? n_nodes : 1, sizeof(int64_t))))
            break;
        (*n)++;
    }
    return jobs;
}

void ext_prioritize(void *ud, const fw_pod_info *pod, const fw_node_info *const *nodes,
                    fw_score_list *scores)
{
    sched_extenders *x = ud;
    size_t n = 0;
    prio_job *jobs = prioritize_jobs(x, pod, nodes, scores->n, &n);
    char err[EXT_ERR_MAX];

    /* read once here: the threads then only read the cached pod */
    if (n > 1 && !ext_pod_json(x, pod, err)) {
        KLOG_V(5, "Failed to run the extenders' priority functions. No score given. error=\"%s\"",
               err);
        n = 0;
    }
    for (size_t k = 0; k < n; k++)
        jobs[k].threaded =
            n > 1 && !pthread_create(&jobs[k].thread, NULL, prioritize_main, &jobs[k]);
    for (size_t k = 0; k < n; k++) {
        if (jobs[k].threaded)
            pthread_join(jobs[k].thread, NULL);
        else
            jobs[k].rc = prioritize_one(&jobs[k]);
        for (size_t i = 0; jobs[k].rc == KUBE_OK && i < scores->n; i++)
            scores->nodes[i].total += jobs[k].add[i];
        if (jobs[k].rc != KUBE_OK)
            KLOG_V(5,
                   "Failed to run extender's priority function. No score given by this extender. "
                   "error=\"%s\" pod=\"%s/%s\" extender=\"%s\"",
                   jobs[k].err, pod->namespace_, pod->name, jobs[k].e->url);
    }
    for (size_t k = 0; jobs && k < x->n; k++)
        free(jobs[k].add);
    free(jobs);
}

/* ------------------------------------------------------------------ */
/* Preemption                                                          */
/* ------------------------------------------------------------------ */

/* A victim as sent without nodeCacheCapable: its identity and placement. */
static cJSON *victim_json(const fw_pod_info *v)
{
    cJSON *o = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(o, "metadata");
    cJSON *spec = cJSON_AddObjectToObject(o, "spec");

    cJSON_AddStringToObject(meta, "name", v->name);
    cJSON_AddStringToObject(meta, "namespace", v->namespace_);
    cJSON_AddStringToObject(meta, "uid", v->uid);
    cJSON_AddStringToObject(spec, "nodeName", v->pod->node_name);
    cJSON_AddNumberToObject(spec, "priority", v->pod->priority);
    return o;
}

/* nodeNameToVictims, or nodeNameToMetaVictims (pods as {uid}). */
static cJSON *victims_map(const fw_preemption_candidate *c, size_t n, int meta)
{
    cJSON *m = cJSON_CreateObject();

    for (size_t i = 0; m && i < n; i++) {
        cJSON *v = cJSON_AddObjectToObject(m, c[i].node);
        cJSON *pods = cJSON_AddArrayToObject(v, "Pods");
        for (size_t j = 0; pods && j < c[i].n_victims; j++) {
            cJSON *p = meta ? cJSON_CreateObject() : victim_json(c[i].victims[j]);
            if (meta)
                cJSON_AddStringToObject(p, "UID", c[i].victims[j]->uid);
            cJSON_AddItemToArray(pods, p);
        }
        cJSON_AddNumberToObject(v, "NumPDBViolations", (double)c[i].num_pdb_violations);
    }
    return m;
}

/* convertPodUIDToPod: a new reference to the pod of that UID on ni. */
static fw_pod_info *pod_on_node(const http_extender *e, const fw_node_info *ni, const char *uid,
                                char *err)
{
    for (size_t i = 0; i < ni->n_pods; i++)
        if (strcmp(ni->pods[i]->uid, uid) == 0)
            return fw_pod_info_ref(ni->pods[i]);
    snprintf(err, EXT_ERR_MAX,
             "extender: %s claims to preempt pod (UID: &{%s}) on node: %s, but the pod is not "
             "found on that node",
             e->url, uid, ni->name);
    return NULL;
}

/* convertToVictims for one node of the answer, into c. */
static int to_candidate(sched_extenders *x, const http_extender *e, const cJSON *mv,
                        fw_preemption_candidate *c, char *err)
{
    const fw_node_info *ni = fw_snapshot_get(x->snap, mv->string);
    const cJSON *pods = cJSON_GetObjectItem(mv, "Pods"), *p;
    const cJSON *pdb = cJSON_GetObjectItem(mv, "NumPDBViolations");
    size_t n = (size_t)cJSON_GetArraySize(pods);

    if (!ni) {
        snprintf(err, EXT_ERR_MAX, "nodeinfo not found for node name \"%s\"", mv->string);
        return KUBE_ENOTFOUND;
    }
    if (!(c->node = kube_strdup(mv->string)) ||
        !(c->victims = calloc(n ? n : 1, sizeof(*c->victims))))
        return KUBE_ENOMEM;
    c->num_pdb_violations = cJSON_IsNumber(pdb) ? (int64_t)pdb->valuedouble : 0;
    cJSON_ArrayForEach(p, of_type(pods, cJSON_Array))
    {
        const cJSON *uid = cJSON_GetObjectItem(p, "UID");
        if (!(c->victims[c->n_victims] =
                  pod_on_node(e, ni, cJSON_IsString(uid) ? uid->valuestring : "", err)))
            return KUBE_ENOTFOUND;
        c->n_victims++;
    }
    return KUBE_OK;
}

/* The answer's nodeNameToMetaVictims as candidates; a node without
 * victims is dropped (ignorable extender) or an error. */
static int to_candidates(sched_extenders *x, const http_extender *e, const cJSON *res,
                         fw_preemption_candidate **out, size_t *n_out, char *err)
{
    const cJSON *map = cJSON_GetObjectItem(res, "NodeNameToMetaVictims"), *mv;
    size_t cap = (size_t)cJSON_GetArraySize(map), n = 0;
    fw_preemption_candidate *c = calloc(cap ? cap : 1, sizeof(*c));
    int rc = c ? KUBE_OK : KUBE_ENOMEM;

    cJSON_ArrayForEach(mv, of_type(map, cJSON_Object))
    {
        if (rc == KUBE_OK)
            rc = to_candidate(x, e, mv, &c[n++], err);
        if (rc != KUBE_OK || c[n - 1].n_victims)
            continue;
        fw_preemption_candidate_clear(&c[--n]);
        if (!e->cfg->ignorable) {
            snprintf(err, EXT_ERR_MAX, "expected at least one victim pod on node \"%s\"",
                     mv->string);
            rc = KUBE_EINVAL;
            continue;
        }
        KLOG_INFO("Ignored node for which the extender didn't report victims node=\"%s\" "
                  "extender=\"%s\"",
                  mv->string, e->url);
    }
    if (rc != KUBE_OK) {
        fw_preemption_candidates_free(c, n);
        return rc;
    }
    *out = c;
    *n_out = n;
    return KUBE_OK;
}

/* HTTPExtender.ProcessPreemption: *c / *n replaced by its answer. */
static int preempt_one(sched_extenders *x, const http_extender *e, const fw_pod_info *pod,
                       fw_preemption_candidate **c, size_t *n, char *err)
{
    const cJSON *pj = ext_pod_json(x, pod, err);
    int meta = e->cfg->node_cache_capable;
    cJSON *args = pj ? cJSON_CreateObject() : NULL, *res = NULL;
    fw_preemption_candidate *out = NULL;
    size_t n_out = 0;
    int rc = args ? KUBE_OK : KUBE_EIO;

    if (rc == KUBE_OK) {
        cJSON_AddItemReferenceToObject(args, "Pod", (cJSON *)pj);
        cJSON_AddItemToObject(args, "NodeNameToVictims",
                              meta ? cJSON_CreateNull() : victims_map(*c, *n, meta));
        cJSON_AddItemToObject(args, "NodeNameToMetaVictims",
                              meta ? victims_map(*c, *n, meta) : cJSON_CreateNull());
        rc = ext_send(e, e->cfg->preempt_verb, args, &res, err);
    }
    if (rc == KUBE_OK)
        rc = to_candidates(x, e, res, &out, &n_out, err);
    if (rc == KUBE_OK) {
        fw_preemption_candidates_free(*c, *n);
        *c = out;
        *n = n_out;
    }
    cJSON_Delete(args);
    cJSON_Delete(res);
    return rc;
}

fw_status *ext_preempt(void *ud, const fw_pod_info *pod, fw_preemption_candidate **c, size_t *n)
{
    sched_extenders *x = ud;
    char err[EXT_ERR_MAX];

    for (size_t i = 0; i < x->n && *n; i++) {
        const http_extender *e = &x->v[i];
        int rc;
        if (!*e->cfg->preempt_verb || !ext_interested(e, pod))
            continue;
        rc = preempt_one(x, e, pod, c, n, err);
        if (rc == KUBE_OK)
            continue;
        if (!e->cfg->ignorable)
            return fw_status_error(rc, "%s", err);
        KLOG_INFO("Skipped extender as it returned error and has ignorable flag set "
                  "extender=\"%s\" err=\"%s\"",
                  e->url, err);
    }
    return NULL;
}
