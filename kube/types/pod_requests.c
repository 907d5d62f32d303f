/*
 * kube/types/pod_requests.c - a pod's resource requests as the scheduler counts
 * them: resourcehelper.PodRequests and framework.calculateResource of
 * v1.28, with sidecar (restartable) init containers and overhead, and the
 * non-zero cpu/memory scoring uses; and its limits (PodLimits, the same
 * walk over resources.limits, overhead added only to limits that are set).
 */
#include "kube/util/array.h"
#include "kube/types/pod_int.h"

/* ---- requests (resourcehelper.PodRequests, v1.28) ---- */

/* A resource list being accumulated (heap; names borrowed from JSON). */
typedef struct rlist {
    kube_resource_entry *v;
    size_t n, cap;
} rlist;

static kube_resource_entry *rlist_find(const rlist *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].name, name) == 0)
            return &l->v[i];
    return NULL;
}

static int rlist_slot(rlist *l, const char *name, kube_resource_entry **out)
{
    if ((*out = rlist_find(l, name)))
        return KUBE_OK;
    if (KUBE_ARRAY_RESERVE(l->v, l->cap, l->n + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    *out = &l->v[l->n++];
    memset(*out, 0, sizeof(**out));
    (*out)->name = name;
    return KUBE_OK;
}

/* addResourceList(dst, src) */
static int rlist_add(rlist *dst, const kube_resource_entry *src, size_t n)
{
    kube_resource_entry *e;
    int rc;

    for (size_t i = 0; i < n; i++) {
        if ((rc = rlist_slot(dst, src[i].name, &e)))
            return rc;
        kube_quantity_add(&e->q, &src[i].q);
    }
    return KUBE_OK;
}

/* maxResourceList(dst, src) */
static int rlist_max(rlist *dst, const rlist *src)
{
    kube_resource_entry *e;
    int rc;

    for (size_t i = 0; i < src->n; i++) {
        int fresh = !rlist_find(dst, src->v[i].name);
        if ((rc = rlist_slot(dst, src->v[i].name, &e)))
            return rc;
        if (fresh || kube_quantity_cmp(&src->v[i].q, &e->q) > 0)
            e->q = src->v[i].q;
    }
    return KUBE_OK;
}

/* schedutil.GetNonzeroRequests */
static int nonzero(const kube_resource_entry *l, size_t n, int64_t *cpu, int64_t *mem)
{
    int rc;

    *cpu = KUBE_DEFAULT_MILLI_CPU_REQUEST;
    *mem = KUBE_DEFAULT_MEMORY_REQUEST;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(l[i].name, "cpu") == 0 && (rc = kube_quantity_milli_value(&l[i].q, cpu)))
            return rc;
        if (strcmp(l[i].name, "memory") == 0 && (rc = kube_quantity_value(&l[i].q, mem)))
            return rc;
    }
    return KUBE_OK;
}

typedef struct req_state {
    int limits;      /* PodLimits: resources.limits, overhead only on what is set */
    int nonmissing;  /* PodResourcesOptions.NonMissingContainerRequests set */
    rlist reqs;      /* the pod's requests */
    rlist sidecars;  /* restartableInitContainerReqs */
    rlist init_max;  /* initContainerReqs */
    int any_sidecar; /* an init container has restartPolicy Always */
    int64_t non0_cpu, non0_mem, non0_init_cpu, non0_init_mem;
} req_state;

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static int add_checked(int64_t *acc, int64_t v)
{
    return __builtin_add_overflow(*acc, v, acc) ? KUBE_ERANGE : KUBE_OK;
}

/* applyNonMissing: appends 100m cpu / 200Mi memory when missing. */
static int apply_non_missing(kube_resource_entry **list, size_t *n)
{
    static const kube_resource_entry defaults[] = {
        {"cpu", {(__int128)KUBE_DEFAULT_MILLI_CPU_REQUEST * 1000000, 0}},
        {"memory", {(__int128)KUBE_DEFAULT_MEMORY_REQUEST * 1000000000, 0}},
    };
    kube_resource_entry *v = realloc(*list, (*n + 2) * sizeof(*v));

    if (!v)
        return KUBE_ENOMEM;
    *list = v;
    for (size_t d = 0; d < 2; d++) {
        size_t i = 0;
        while (i < *n && strcmp(v[i].name, defaults[d].name) != 0)
            i++;
        if (i == *n)
            v[(*n)++] = defaults[d];
    }
    return KUBE_OK;
}

/* A container's resources.requests, or .limits (malloc'd, caller frees). */
static int container_requests(const cJSON *c, const req_state *st, kube_resource_entry **list,
                              size_t *n)
{
    const cJSON *res;
    int rc;

    if (!cJSON_IsObject(c))
        return KUBE_EPARSE;
    if ((rc = kube_json_object(c, "resources", &res)) ||
        (rc = kube_resource_list_decode(kube_json_get(res, st->limits ? "limits" : "requests"),
                                        list, n)))
        return rc;
    if (st->nonmissing && (rc = apply_non_missing(list, n))) {
        free(*list);
        *list = NULL;
    }
    return rc;
}

static int app_container(req_state *st, const kube_resource_entry *list, size_t n)
{
    int64_t cpu, mem;
    int rc;

    if ((rc = rlist_add(&st->reqs, list, n)) || (rc = nonzero(list, n, &cpu, &mem)) ||
        (rc = add_checked(&st->non0_cpu, cpu)))
        return rc;
    return add_checked(&st->non0_mem, mem);
}

static int is_sidecar(const cJSON *c, int *out)
{
    const cJSON *policy = kube_json_get(c, "restartPolicy");

    if (policy && !cJSON_IsString(policy))
        return KUBE_EPARSE;
    *out = policy && strcmp(policy->valuestring, "Always") == 0;
    return KUBE_OK;
}

static int init_container(req_state *st, const cJSON *c, const kube_resource_entry *list, size_t n)
{
    rlist tmp = {0};
    const rlist *eff = &tmp;
    int64_t cpu, mem;
    int sidecar, rc;

    if ((rc = is_sidecar(c, &sidecar)))
        return rc;
    if (sidecar) {
        st->any_sidecar = 1;
        if ((rc = rlist_add(&st->reqs, list, n)) || (rc = rlist_add(&st->sidecars, list, n)))
            return rc;
        eff = &st->sidecars;
    } else if ((rc = rlist_add(&tmp, list, n)) ||
               (rc = rlist_add(&tmp, st->sidecars.v, st->sidecars.n))) {
        free(tmp.v);
        return rc;
    }
    rc = nonzero(eff->v, eff->n, &cpu, &mem);
    if (rc == KUBE_OK) {
        st->non0_init_cpu = max64(st->non0_init_cpu, cpu);
        st->non0_init_mem = max64(st->non0_init_mem, mem);
        rc = rlist_max(&st->init_max, eff);
    }
    free(tmp.v);
    return rc;
}

/* Adds the requests of one container list (init or not) to st. */
static int each_container(const cJSON *spec, const char *key, req_state *st, int init)
{
    const cJSON *arr, *c;
    kube_resource_entry *list;
    size_t count, n;
    int rc = kube_json_array(spec, key, &arr, &count);

    if (rc != KUBE_OK)
        return rc;
    cJSON_ArrayForEach(c, arr)
    {
        if ((rc = container_requests(c, st, &list, &n)))
            return rc;
        rc = init ? init_container(st, c, list, n) : app_container(st, list, n);
        free(list);
        if (rc)
            return rc;
    }
    return KUBE_OK;
}

/* Overhead: added to the requests, and its cpu/memory to the non-zero;
 * for limits, added only to the limits that are set. */
static int add_overhead(const cJSON *spec, req_state *st)
{
    kube_resource_entry *list, *e;
    size_t n;
    int64_t v;
    int rc = kube_resource_list_decode(kube_json_get(spec, "overhead"), &list, &n);

    if (rc != KUBE_OK)
        return rc;
    if (st->limits) {
        for (size_t i = 0; i < n; i++)
            if ((e = rlist_find(&st->reqs, list[i].name)))
                kube_quantity_add(&e->q, &list[i].q);
        free(list);
        return KUBE_OK;
    }
    rc = rlist_add(&st->reqs, list, n);
    for (size_t i = 0; rc == KUBE_OK && i < n; i++) {
        if (strcmp(list[i].name, "cpu") == 0 &&
            (rc = kube_quantity_milli_value(&list[i].q, &v)) == KUBE_OK)
            rc = add_checked(&st->non0_cpu, v);
        else if (strcmp(list[i].name, "memory") == 0 &&
                 (rc = kube_quantity_value(&list[i].q, &v)) == KUBE_OK)
            rc = add_checked(&st->non0_mem, v);
    }
    free(list);
    return rc;
}

/* resourcehelper.PodRequests into st->reqs, with the non-zero totals of
 * framework.calculateResource alongside. */
static int pod_requests(const cJSON *spec, req_state *st)
{
    int rc;

    if ((rc = each_container(spec, "containers", st, 0)) ||
        (rc = each_container(spec, "initContainers", st, 1)) ||
        (rc = rlist_max(&st->reqs, &st->init_max)))
        return rc;
    st->non0_cpu = max64(st->non0_cpu, st->non0_init_cpu);
    st->non0_mem = max64(st->non0_mem, st->non0_init_mem);
    return add_overhead(spec, st);
}

/* The cpu (milli) and memory of a request list, 0 when absent. */
static int cpu_and_memory(const rlist *l, int64_t *cpu, int64_t *mem)
{
    const kube_resource_entry *e;
    int rc = KUBE_OK;

    *cpu = 0;
    *mem = 0;
    if ((e = rlist_find(l, "cpu")))
        rc = kube_quantity_milli_value(&e->q, cpu);
    if (rc == KUBE_OK && (e = rlist_find(l, "memory")))
        rc = kube_quantity_value(&e->q, mem);
    return rc;
}

static void req_state_free(req_state *st)
{
    free(st->reqs.v);
    free(st->sidecars.v);
    free(st->init_max.v);
}

/* PodLimits into pod->limits (NULL when the pod sets none). */
static int pod_limits(const cJSON *spec, kube_arena *a, kube_pod *pod)
{
    req_state lim;
    kube_resources *r;
    int rc;

    memset(&lim, 0, sizeof(lim));
    lim.limits = 1;
    rc = pod_requests(spec, &lim);
    if (rc == KUBE_OK && lim.reqs.n) {
        r = kube_arena_alloc(a, sizeof(*r));
        rc = r ? kube_resources_from_list(lim.reqs.v, lim.reqs.n, a, r) : KUBE_ENOMEM;
        pod->limits = rc == KUBE_OK ? r : NULL;
    }
    req_state_free(&lim);
    return rc;
}

int kube_pod_requests_decode(const cJSON *spec, kube_arena *a, kube_pod *pod)
{
    req_state st, score;
    int rc;

    memset(&st, 0, sizeof(st));
    memset(&score, 0, sizeof(score));
    score.nonmissing = 1;
    rc = pod_requests(spec, &st);
    if (rc == KUBE_OK)
        rc = kube_resources_from_list(st.reqs.v, st.reqs.n, a, &pod->requests);
    if (rc == KUBE_OK)
        rc = pod_requests(spec, &score);
    if (rc == KUBE_OK)
        rc = cpu_and_memory(&score.reqs, &pod->score_milli_cpu, &pod->score_memory);
    if (rc == KUBE_OK)
        rc = pod_limits(spec, a, pod);
    pod->nonzero_milli_cpu = st.non0_cpu;
    pod->nonzero_memory = st.non0_mem;
    pod->has_restartable_init_container = st.any_sidecar;
    req_state_free(&st);
    req_state_free(&score);
    return rc == KUBE_ERANGE ? KUBE_EPARSE : rc;
}
