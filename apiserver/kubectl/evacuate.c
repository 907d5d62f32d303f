/*
 * apiserver/kubectl/evacuate.c - `kubectl stickyvm evacuate NODE`: the
 * plan, one pin or unpin request per VM, the table (evacuate.h).
 */
#include "evacuate.h"

#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "kube/util/array.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "output.h"

int kctl_evac_plan_init(kctl_evac_plan *plan, const cJSON *list, const char *node, const char *to)
{
    const cJSON *it;
    memset(plan, 0, sizeof(*plan));
    plan->node = node;
    plan->to = to;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(it, "metadata");
        const char *pinned = kctl_str(it, "node"), *ns = kctl_str(meta, "namespace"),
                   *name = kctl_str(meta, "name");
        if (!pinned || strcmp(pinned, node) != 0 || !ns || !name)
            continue;
        if (KUBE_ARRAY_RESERVE(plan->items, plan->cap, plan->n + 1) != KUBE_OK)
            return KUBE_ENOMEM;
        kctl_evac_item *e = &plan->items[plan->n++];
        memset(e, 0, sizeof(*e));
        kube_strlcpy(e->ns, ns, sizeof(e->ns));
        kube_strlcpy(e->name, name, sizeof(e->name));
    }
    return KUBE_OK;
}

void kctl_evac_plan_free(kctl_evac_plan *plan)
{
    free(plan->items);
    memset(plan, 0, sizeof(*plan));
}

/* The server's reason of a refusal: its Conflict message without the
 * "Operation cannot be fulfilled on KIND "NAME": " head and the advice
 * after ";" (the table says what --force does). */
static void refusal_of(const char *message, char *out, size_t n)
{
    const char *why = strstr(message, "\": ");
    why = why ? why + 3 : message;
    snprintf(out, n, "Refused: %.*s", (int)strcspn(why, ";"), why);
}

/* The current pin a 409 of a failed from= names (its cause of field
 * "from"): 1 with it in out ("" unpinned), 0 when the answer is another
 * 409. */
static int moved_meanwhile(const kube_response *resp, char *out, size_t n)
{
    cJSON *st = resp->body ? cJSON_ParseWithLength(resp->body, resp->len) : NULL;
    const cJSON *cause, *details = cJSON_GetObjectItemCaseSensitive(st, "details");
    int found = 0;
    cJSON_ArrayForEach(cause, cJSON_GetObjectItemCaseSensitive(details, "causes"))
    {
        const char *field = kctl_str(cause, "field"), *msg = kctl_str(cause, "message");
        if (!found && field && strcmp(field, "from") == 0) {
            kube_strlcpy(out, msg ? msg : "", n);
            found = 1;
        }
    }
    cJSON_Delete(st);
    return found;
}

void kctl_evac_record(kctl_evac_item *it, int rc, const kube_response *resp, const cJSON *answer,
                      int unpin, int dry_run)
{
    const char *dry = dry_run ? " (server dry run)" : "";
    const kube_status *st = &resp->status;
    char now[254];
    it->from[0] = '\0';
    if (rc == KUBE_OK) {
        const char *prev = kctl_str(answer, "previousNode");
        int changed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(answer, "changed"));
        kube_strlcpy(it->from, prev ? prev : "", sizeof(it->from));
        it->outcome = changed ? KCTL_EVAC_MOVED : KCTL_EVAC_UNCHANGED;
        snprintf(it->result, sizeof(it->result), "%s%s",
                 !changed ? "Unchanged"
                 : unpin  ? "Unpinned"
                          : "Repinned",
                 dry);
    } else if (resp->code == 409 && moved_meanwhile(resp, now, sizeof(now))) {
        it->outcome = KCTL_EVAC_SKIPPED;
        kube_strlcpy(it->from, *now ? now : "<none>", sizeof(it->from));
        snprintf(it->result, sizeof(it->result), "Skipped: %s%s meanwhile, not moved",
                 *now ? "re-pinned to " : "unpinned", now);
    } else if (resp->code == 409 && strstr(st->message, "force=true")) {
        it->outcome = KCTL_EVAC_REFUSED;
        refusal_of(st->message, it->result, sizeof(it->result));
    } else {
        it->outcome = KCTL_EVAC_FAILED;
        if (resp->code == 0)
            snprintf(it->result, sizeof(it->result), "Failed: unable to connect to the server: %s",
                     st->message[0] ? st->message : kube_strerror(rc));
        else
            snprintf(it->result, sizeof(it->result), "Failed (%s): %s",
                     st->reason[0] ? st->reason : "InternalError",
                     st->message[0] ? st->message : kube_strerror(rc));
    }
}

int kctl_evac_write_table(const kctl_evac_plan *plan, int all, FILE *f)
{
    static const char *const headers[] = {"NAMESPACE", "VM", "FROM", "TO", "RESULT"};
    kctl_table t;
    if (kctl_table_init(&t, all ? 5 : 4, headers + !all) != KUBE_OK)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < plan->n; i++) {
        const kctl_evac_item *it = &plan->items[i];
        const char *from = *it->from ? it->from : plan->node;
        const char *row[] = {it->ns, it->name, from, plan->to, it->result};
        if (kctl_table_add(&t, row + !all) != KUBE_OK) {
            kctl_table_free(&t);
            return KUBE_ENOMEM;
        }
    }
    kctl_table_write(&t, f);
    kctl_table_free(&t);
    return KUBE_OK;
}

size_t kctl_evac_count(const kctl_evac_plan *plan, kctl_evac_outcome outcome)
{
    size_t n = 0;
    for (size_t i = 0; i < plan->n; i++)
        n += plan->items[i].outcome == outcome;
    return n;
}

/* One pin or unpin request for it, recorded in it. */
static void move_one(kctl_ctx *c, const kctl_evac_plan *plan, kctl_evac_item *it)
{
    kube_buf path = KUBE_BUF_INIT;
    kube_response resp = {0};
    cJSON *answer = NULL;
    const kctl_options *o = c->o;
    int unpin = plan->to == NULL;
    int rc =
        kctl_pin_path(&path, it->ns, it->name, unpin, plan->to, plan->node, o->dry_run, o->force);
    if (rc == KUBE_OK)
        rc = kctl_get_json(c, path.data, &answer, &resp);
    kctl_evac_record(it, rc, &resp, answer, unpin, o->dry_run);
    cJSON_Delete(answer);
    kube_response_clear(&resp);
    kube_buf_free(&path);
}

/* After the table: what was refused or failed, and the exit code. */
static int summarize(kctl_ctx *c, const kctl_evac_plan *plan)
{
    size_t refused = kctl_evac_count(plan, KCTL_EVAC_REFUSED),
           failed = kctl_evac_count(plan, KCTL_EVAC_FAILED),
           skipped = kctl_evac_count(plan, KCTL_EVAC_SKIPPED);
    if (skipped)
        fprintf(c->err,
                "%zu VM(s) skipped: no longer pinned to %s when asked (FROM shows their pin now); "
                "nothing was changed on them\n",
                skipped, plan->node);
    if (refused)
        fprintf(c->err,
                "error: %zu VM(s) refused: their local volumes live on %s and cannot follow them; "
                "they stay pinned there. --force moves them anyway, leaving that data behind.\n",
                refused, plan->node);
    if (failed)
        fprintf(c->err, "error: %zu VM(s) could not be moved (RESULT says why)\n", failed);
    return refused || failed ? KCTL_EXIT_ERROR : KCTL_EXIT_OK;
}

/* Nothing pinned there: kubectl's "No resources found" wording. */
static int nothing_pinned(kctl_ctx *c)
{
    if (c->o->all_namespaces)
        fprintf(c->err, "No VMs pinned to node %s found\n", c->o->target);
    else
        fprintf(c->err, "No VMs pinned to node %s found in %s namespace.\n", c->o->target, c->ns);
    return KCTL_EXIT_OK;
}

int kctl_evacuate(kctl_ctx *c)
{
    kube_response resp = {0};
    kctl_evac_plan plan;
    cJSON *list = NULL;
    int rc = kctl_fetch_pins(c, c->o->target, &list, &resp);
    if (rc != KUBE_OK) {
        kctl_print_error(c->err, &resp);
        kube_response_clear(&resp);
        return KCTL_EXIT_ERROR;
    }
    kube_response_clear(&resp);
    rc = kctl_evac_plan_init(&plan, list, c->o->target, c->o->to);
    cJSON_Delete(list);
    if (rc == KUBE_OK && plan.n == 0) {
        kctl_evac_plan_free(&plan);
        return nothing_pinned(c);
    }
    for (size_t i = 0; rc == KUBE_OK && i < plan.n; i++)
        move_one(c, &plan, &plan.items[i]);
    if (rc == KUBE_OK)
        rc = kctl_evac_write_table(&plan, c->o->all_namespaces, c->out);
    int code = rc == KUBE_OK ? summarize(c, &plan) : KCTL_EXIT_ERROR;
    if (rc != KUBE_OK)
        fprintf(c->err, "error: out of memory\n");
    kctl_evac_plan_free(&plan);
    return code;
}
