/*
 * tests/emulator/eviction.c - POST .../pods/NAME/eviction, as
 * kube-apiserver's EvictionREST (pkg/registry/core/pod/storage/eviction.go)
 * answers it. The body is a policy/v1 or policy/v1beta1 Eviction, in JSON
 * or protobuf (kubectl drain sends protobuf).
 *
 *   - the Eviction's name must be the URL's (400), the pod must exist (404);
 *   - a pod that is Succeeded, Failed, Pending or already being deleted is
 *     deleted without looking at budgets;
 *   - otherwise the PodDisruptionBudgets of the pod's namespace whose
 *     (non-empty) selector matches the pod's labels are consulted: more
 *     than one is 500; one whose status.observedGeneration is behind its
 *     generation, or whose status.disruptionsAllowed is 0, is 429
 *     TooManyRequests "Cannot evict pod as it would violate the pod's
 *     disruption budget." with a DisruptionBudget cause; a negative
 *     disruptionsAllowed is 403. Otherwise disruptionsAllowed is
 *     decremented and status.disruptedPods[pod] records the time (with the
 *     DisruptionAllowed condition turning False at 0), then the pod is
 *     deleted with the Eviction's deleteOptions (graceful, as DELETE).
 *   - success is 201 {"kind":"Status",...,"status":"Success","code":201}.
 * deleteOptions.dryRun ["All"] checks everything and writes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/clock.h"
#include "printers.h"

typedef struct pdb_ctx {
    const char *pod;
    int dry_run;
} pdb_ctx;

static int answer_status(emu_response *resp, cJSON *st)
{
    int code = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(st, "code"));
    int rc = emu_response_json(resp, code ? code : 500, st);

    cJSON_Delete(st);
    return rc < 0 ? rc : 1;
}

static int too_many_requests(cJSON **st, const char *cause)
{
    cJSON *details = cJSON_CreateObject(), *causes = cJSON_AddArrayToObject(details, "causes");
    cJSON *c = cJSON_CreateObject();

    cJSON_AddStringToObject(c, "reason", "DisruptionBudget");
    cJSON_AddStringToObject(c, "message", cause);
    cJSON_AddItemToArray(causes, c);
    return emu_fail(st, 429, "TooManyRequests", details,
                    "Cannot evict pod as it would violate the pod's disruption budget.");
}

/* The pod may be deleted without consulting budgets (canIgnorePDB). */
static int can_ignore_pdb(const cJSON *pod)
{
    const char *phase = emu_json_str(pod, "status.phase");

    return emu_json_at(pod, "metadata.deletionTimestamp") ||
           (phase &&
            (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed") || !strcmp(phase, "Pending")));
}

/* 1 if the PDB's selector is non-empty and matches the pod's labels. */
static int pdb_selects(const cJSON *pdb, const emu_obj *pod)
{
    const cJSON *sel = emu_json_at(pdb, "spec.selector");
    kube_buf text = KUBE_BUF_INIT;
    emu_selector s = {0};
    char err[128];
    int hit = 0;

    if (!sel)
        return 0;
    emu_label_selector_string(sel, &text);
    if (text.len && emu_label_selector_parse(text.data, &s, err, sizeof(err)) == KUBE_OK)
        hit = !emu_selector_empty(&s) && emu_obj_matches(pod, &s, NULL);
    emu_selector_free(&s);
    kube_buf_free(&text);
    return hit;
}

/* The name of the one budget covering pod (*name, caller frees; NULL when
 * none), or an error Status (more than one). */
static int find_budget(emu_server *s, emu_resource *pdbs, const emu_obj *pod, char **name,
                       cJSON **st)
{
    emu_list_query q = {.ns = pod->ns};
    emu_list_result res;
    int n = 0, rc;

    *name = NULL;
    if (!pdbs || emu_store_list(s->store, pdbs, &q, &res) != KUBE_OK)
        return KUBE_OK;
    for (size_t i = 0; i < res.n; i++) {
        cJSON *t = emu_obj_tree(res.items[i]);
        if (t && pdb_selects(t, pod) && n++ == 0)
            *name = kube_strdup(res.items[i]->name);
        cJSON_Delete(t);
    }
    emu_list_result_free(&res);
    rc = n > 1 ? emu_fail(st, 500, "InternalError", NULL,
                          "This pod has more than one PodDisruptionBudget, which the eviction "
                          "subresource does not support.")
               : KUBE_OK;
    if (rc != KUBE_OK) {
        free(*name);
        *name = NULL;
    }
    return rc;
}

static void disallow_condition(cJSON *status)
{
    cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions"), *c, *found = NULL;
    char now[40];

    if (!cJSON_IsArray(conds))
        emu_json_put(status, "conditions", conds = cJSON_CreateArray());
    cJSON_ArrayForEach(c, conds)
    {
        const char *t = emu_json_str(c, "type");
        if (t && !strcmp(t, "DisruptionAllowed"))
            found = c;
    }
    if (found && emu_json_str(found, "status") && !strcmp(emu_json_str(found, "status"), "False"))
        return;
    kube_time_rfc3339(now, sizeof(now));
    c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "type", "DisruptionAllowed");
    cJSON_AddStringToObject(c, "status", "False");
    cJSON_AddNumberToObject(
        c, "observedGeneration",
        cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(status, "observedGeneration")));
    cJSON_AddStringToObject(c, "lastTransitionTime", now);
    cJSON_AddStringToObject(c, "reason", "InsufficientPods");
    cJSON_AddStringToObject(c, "message", "");
    if (found)
        cJSON_ReplaceItemViaPointer(conds, found, c);
    else
        cJSON_AddItemToArray(conds, c);
}

/* A number of the budget's status (0 when absent). */
static double status_num(const cJSON *status, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(status, key);

    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* Why the budget refuses a disruption now (a Status in *st), or KUBE_OK. */
static int budget_refusal(const cJSON *pdb, cJSON **st)
{
    const char *name = emu_json_str(pdb, "metadata.name");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(pdb, "status");
    double allowed = status_num(status, "disruptionsAllowed");
    char msg[256];

    name = name ? name : "";
    /* NaN when the budget has no generation: never behind */
    if (status_num(status, "observedGeneration") <
        cJSON_GetNumberValue(emu_json_at(pdb, "metadata.generation"))) {
        snprintf(msg, sizeof(msg),
                 "The disruption budget %s is still being processed by the server.", name);
        return too_many_requests(st, msg);
    }
    if (allowed < 0)
        return emu_fail(
            st, 403, "Forbidden", emu_details(name, "policy", "poddisruptionbudget"),
            "poddisruptionbudget.policy \"%s\" is forbidden: pdb disruptions allowed is negative",
            name);
    if (allowed == 0) {
        snprintf(msg, sizeof(msg),
                 "The disruption budget %s needs %.0f healthy pods and has %.0f currently", name,
                 status_num(status, "desiredHealthy"), status_num(status, "currentHealthy"));
        return too_many_requests(st, msg);
    }
    return KUBE_OK;
}

/* checkAndDecrement, under the store's lock for the budget. */
static int decrement_fn(void *ctx, cJSON *cur, int64_t rv, cJSON **next, int *del, int *again,
                        cJSON **st)
{
    pdb_ctx *p = ctx;
    cJSON *status;
    char now[40];
    double allowed;
    int rc = budget_refusal(cur, st);

    (void)rv;
    (void)del;
    (void)again;
    if (rc != KUBE_OK || p->dry_run) {
        cJSON_Delete(cur);
        return rc;
    }
    status = emu_json_obj(cur, "status");
    allowed = status_num(status, "disruptionsAllowed") - 1;
    emu_json_put(status, "disruptionsAllowed", cJSON_CreateNumber(allowed));
    if (allowed == 0)
        disallow_condition(status);
    kube_time_rfc3339(now, sizeof(now));
    emu_json_put_str(emu_json_obj(status, "disruptedPods"), p->pod, now);
    *next = cur;
    return KUBE_OK;
}

static int check_budget(emu_server *s, const emu_obj *pod, int dry_run, cJSON **st)
{
    emu_resource *pdbs = emu_resource_find(s, "policy", "v1", "poddisruptionbudgets");
    pdb_ctx ctx = {pod->name, dry_run};
    emu_obj *out = NULL;
    char *name = NULL;
    int rc = find_budget(s, pdbs, pod, &name, st);

    if (rc == KUBE_OK && name)
        rc = emu_store_write(s->store, pdbs, pod->ns, name, decrement_fn, &ctx, &out, st);
    emu_obj_unref(out);
    free(name);
    return rc;
}

static int check_eviction(const emu_request *req, const cJSON *ev, cJSON **st)
{
    const char *kind = emu_json_str(ev, "kind"), *api = emu_json_str(ev, "apiVersion");
    const char *name = emu_json_str(ev, "metadata.name");

    if ((kind && *kind && strcmp(kind, "Eviction")) ||
        (api && *api && strcmp(api, "policy/v1") && strcmp(api, "policy/v1beta1")))
        return emu_fail(st, 400, "BadRequest", NULL,
                        "%s in version \"%s\" cannot be handled as a Eviction: no kind \"%s\" is "
                        "registered for version \"%s\"",
                        kind ? kind : "", api ? api : "", kind ? kind : "", api ? api : "");
    if (!name || strcmp(name, req->attrs.name))
        return emu_fail(st, 400, "BadRequest", NULL,
                        "name in URL does not match name in Eviction object");
    return KUBE_OK;
}

static int dry_run_all(const cJSON *opts)
{
    const cJSON *v;

    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(
                              opts, "dryRun")) if (cJSON_IsString(v) &&
                                                   !strcmp(v->valuestring, "All")) return 1;
    return 0;
}

static int evict(emu_server *s, const emu_request *req, const cJSON *ev, cJSON **st)
{
    emu_resource *pods = emu_resource_find(s, "", "v1", "pods");
    const cJSON *opts = cJSON_GetObjectItemCaseSensitive(ev, "deleteOptions");
    const char *ns = req->attrs.namespace_, *name = req->attrs.name;
    emu_obj *pod = emu_store_lookup(s->store, pods, ns, name);
    cJSON *tree = pod ? emu_obj_tree(pod) : NULL;
    int dry = dry_run_all(opts), rc = KUBE_OK;

    if (!pod)
        return emu_fail(st, 404, "NotFound", emu_details(name, "", "pods"), "pods \"%s\" not found",
                        name);
    if (!can_ignore_pdb(tree))
        rc = check_budget(s, pod, dry, st);
    if (rc == KUBE_OK && !dry)
        rc = emu_object_delete(s, pods, ns, name, opts, st);
    cJSON_Delete(tree);
    emu_obj_unref(pod);
    return rc;
}

int emu_eviction_handle(emu_server *s, emu_request *req, emu_response *resp)
{
    cJSON *ev = NULL, *st = NULL;
    int rc = emu_decode_body(req, "Eviction", &ev, &st);

    if (rc == KUBE_OK)
        rc = check_eviction(req, ev, &st);
    if (rc == KUBE_OK)
        rc = evict(s, req, ev, &st);
    cJSON_Delete(ev);
    if (rc != KUBE_OK)
        return answer_status(resp, st);
    return answer_status(resp, emu_status_new(201, NULL, NULL, NULL));
}
