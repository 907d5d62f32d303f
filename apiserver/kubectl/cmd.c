/*
 * apiserver/kubectl/cmd.c - pin, unpin and list, and the pins' list
 * evacuate walks (cmd.h).
 */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>

#include "kube/util/duration.h"
#include "kube/codec/object.h"
#include "kube/types/pin.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "output.h"

const char *kctl_str(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int kctl_get_json(kctl_ctx *c, const char *path, cJSON **out, kube_response *resp)
{
    *out = NULL;
    int rc = kube_client_do(c->client, "GET", path, NULL, NULL, 0, resp);
    if (rc != KUBE_OK)
        return rc;
    if (!(*out = cJSON_Parse(resp->body))) {
        resp->status.code = (int)resp->code;
        snprintf(resp->status.message, sizeof(resp->status.message),
                 "the server answered %s with something that is not JSON", path);
        return KUBE_EPARSE;
    }
    return KUBE_OK;
}

/* Prints a failed call and gives the exit code. */
static int failed(kctl_ctx *c, kube_response *resp)
{
    kctl_print_error(c->err, resp);
    kube_response_clear(resp);
    return KCTL_EXIT_ERROR;
}

/* ---- pin, unpin ------------------------------------------------------- */

/* "?" before the first query parameter, "&" before the others. */
static int query_param(kube_buf *b, const char *name, const char *value)
{
    int rc = kube_buf_printf(b, "%c%s=", strchr(b->data, '?') ? '&' : '?', name);
    return rc == KUBE_OK ? kube_buf_put_escaped(b, value) : rc;
}

/* Appends one path segment: escaped, and "." or ".." as %2E so no URL
 * normalisation (libcurl's included) can take it as a dot segment. */
static int put_segment(kube_buf *b, const char *s)
{
    if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return kube_buf_puts(b, s[1] ? "%2E%2E" : "%2E");
    return kube_buf_put_escaped(b, s);
}

int kctl_object_path(kube_buf *b, const char *api, const char *ns, const char *plural,
                     const char *name)
{
    int rc = kube_buf_puts(b, api);
    if (rc == KUBE_OK && ns)
        rc = kube_buf_puts(b, "/namespaces/");
    if (rc == KUBE_OK && ns)
        rc = put_segment(b, ns);
    if (rc == KUBE_OK)
        rc = kube_buf_printf(b, "/%s", plural);
    if (rc == KUBE_OK && name)
        rc = kube_buf_puts(b, "/");
    if (rc == KUBE_OK && name)
        rc = put_segment(b, name);
    return rc;
}

int kctl_pin_path(kube_buf *b, const char *ns, const char *vm, int unpin, const char *node,
                  const char *from, int dry_run, int force)
{
    int rc = kctl_object_path(b, "/apis/" KCTL_GROUP_VERSION, ns, "virtualmachines", vm);
    if (rc == KUBE_OK)
        rc = kube_buf_puts(b, unpin ? "/unpin" : "/pin");
    if (rc == KUBE_OK && node && *node)
        rc = query_param(b, "node", node);
    if (rc == KUBE_OK && from)
        rc = query_param(b, "from", from);
    if (rc == KUBE_OK && dry_run)
        rc = query_param(b, "dryRun", "All");
    if (rc == KUBE_OK && force)
        rc = query_param(b, "force", "true");
    return rc;
}

/* "virtualmachine.kubevirt.io/vm1 pinned to node-2 (was node-1)". */
static void print_pin_result(kctl_ctx *c, const cJSON *pin)
{
    const char *node = kctl_str(pin, "node"), *prev = kctl_str(pin, "previousNode");
    int changed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(pin, "changed"));
    const char *dry = c->o->dry_run ? " (server dry run)" : "";
    fprintf(c->out, "virtualmachine.kubevirt.io/%s ", c->o->target);
    if (c->o->cmd == KCTL_PIN && changed && prev)
        fprintf(c->out, "pinned to %s (was %s)%s\n", node ? node : "", prev, dry);
    else if (c->o->cmd == KCTL_PIN && changed)
        fprintf(c->out, "pinned to %s%s\n", node ? node : "", dry);
    else if (c->o->cmd == KCTL_PIN)
        fprintf(c->out, "already pinned to %s%s\n", node ? node : "", dry);
    else if (changed)
        fprintf(c->out, "unpinned (was %s)%s\n", prev ? prev : "<none>", dry);
    else
        fprintf(c->out, "was not pinned%s\n", dry);
}

int kctl_pin(kctl_ctx *c)
{
    kube_buf path = KUBE_BUF_INIT;
    kube_response resp = {0};
    cJSON *pin = NULL;
    const kctl_options *o = c->o;
    int rc = kctl_pin_path(&path, c->ns, o->target, o->cmd == KCTL_UNPIN, o->node, o->from,
                           o->dry_run, o->force);
    if (rc != KUBE_OK) {
        kube_buf_free(&path);
        return KCTL_EXIT_ERROR;
    }
    rc = kctl_get_json(c, path.data, &pin, &resp);
    kube_buf_free(&path);
    if (rc != KUBE_OK)
        return failed(c, &resp);
    if (c->o->output && *c->o->output)
        kctl_print_object(c->out, pin, c->o->output);
    else
        print_pin_result(c, pin);
    cJSON_Delete(pin);
    kube_response_clear(&resp);
    return KCTL_EXIT_OK;
}

int kctl_server_version(kctl_ctx *c)
{
    kube_response resp = {0};
    cJSON *v = NULL;
    const char *git;
    if (kctl_get_json(c, "/version", &v, &resp) != KUBE_OK) {
        fprintf(c->err, "Server Version: unknown (%s)\n",
                resp.status.message[0] ? resp.status.message : "the server is not reachable");
    } else {
        git = kctl_str(v, "gitVersion");
        fprintf(c->out, "Server Version: %s\n", git ? git : "unknown");
    }
    cJSON_Delete(v);
    kube_response_clear(&resp);
    return KCTL_EXIT_OK;
}

/* ---- list --------------------------------------------------------------- */

/* A string member, or JSON null when s is NULL. */
static void add_str_or_null(cJSON *obj, const char *key, const char *s)
{
    cJSON_AddItemToObject(obj, key, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

cJSON *kctl_pin_from_vm(const cJSON *vm)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(vm, "metadata");
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
    const char *node = kctl_str(ann, KUBE_PIN_DEFAULT_KEY);
    cJSON *pin = cJSON_CreateObject(), *m;
    if (!pin || !cJSON_AddStringToObject(pin, "apiVersion", KCTL_GROUP_VERSION) ||
        !cJSON_AddStringToObject(pin, "kind", "VirtualMachinePin") ||
        !(m = cJSON_AddObjectToObject(pin, "metadata"))) {
        cJSON_Delete(pin);
        return NULL;
    }
    add_str_or_null(m, "name", kctl_str(meta, "name"));
    add_str_or_null(m, "namespace", kctl_str(meta, "namespace"));
    add_str_or_null(m, "creationTimestamp", kctl_str(meta, "creationTimestamp"));
    add_str_or_null(pin, "node", node && *node ? node : NULL);
    add_str_or_null(pin, "since", kctl_str(ann, KUBE_PIN_ANN_AT));
    add_str_or_null(pin, "by", kctl_str(ann, KUBE_PIN_ANN_BY));
    add_str_or_null(pin, "reason", kctl_str(ann, KUBE_PIN_ANN_REASON));
    return pin;
}

/* The collection's path: group/version/[namespaces/NS/]plural, with
 * labelSelector (-l) and, when node is given, fieldSelector=node=NODE. */
static int list_path(const kctl_ctx *c, kube_buf *b, const char *gv, const char *plural,
                     const char *node)
{
    char field[300], api[128];
    snprintf(api, sizeof(api), "/apis/%s", gv);
    int rc = kctl_object_path(b, api, c->o->all_namespaces ? NULL : c->ns, plural, NULL);
    if (rc == KUBE_OK && c->o->selector && *c->o->selector)
        rc = query_param(b, "labelSelector", c->o->selector);
    if (rc == KUBE_OK && node && *node) {
        snprintf(field, sizeof(field), "node=%s", node);
        rc = query_param(b, "fieldSelector", field);
    }
    return rc;
}

/* The VMs' pins as a VirtualMachinePinList (a server without the
 * virtualmachinepins resource). */
static int list_from_vms(kctl_ctx *c, cJSON **out, kube_response *resp)
{
    kube_buf path = KUBE_BUF_INIT;
    cJSON *vms = NULL, *items;
    int rc = list_path(c, &path, "kubevirt.io/v1", "virtualmachines", NULL);
    if (rc == KUBE_OK)
        rc = kctl_get_json(c, path.data, &vms, resp);
    kube_buf_free(&path);
    if (rc != KUBE_OK)
        return rc;
    *out = cJSON_CreateObject();
    if (!*out || !cJSON_AddStringToObject(*out, "apiVersion", KCTL_GROUP_VERSION) ||
        !cJSON_AddStringToObject(*out, "kind", "VirtualMachinePinList") ||
        !cJSON_AddObjectToObject(*out, "metadata") ||
        !(items = cJSON_AddArrayToObject(*out, "items"))) {
        cJSON_Delete(vms);
        return KUBE_ENOMEM;
    }
    const cJSON *vm;
    cJSON_ArrayForEach(vm, cJSON_GetObjectItemCaseSensitive(vms, "items"))
    {
        cJSON *pin = kctl_pin_from_vm(vm);
        if (pin)
            cJSON_AddItemToArray(items, pin);
    }
    cJSON_Delete(vms);
    return KUBE_OK;
}

/* Keeps the items of list for which keep(item, arg) holds. */
static void keep_items(cJSON *list, int (*keep)(const cJSON *, const char *), const char *arg)
{
    cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items"),
          *it = items ? items->child : NULL;
    while (it) {
        cJSON *next = it->next;
        if (!keep(it, arg))
            cJSON_Delete(cJSON_DetachItemViaPointer(items, it));
        it = next;
    }
}

static int pinned_to(const cJSON *pin, const char *node)
{
    const char *n = kctl_str(pin, "node");
    return n && strcmp(n, node) == 0;
}

const char *kctl_node_status(const cJSON *pin)
{
    return kctl_str(cJSON_GetObjectItemCaseSensitive(pin, "status"), "nodeStatus");
}

int kctl_node_status_matches(const char *status, const char *states)
{
    size_t first = status ? strcspn(status, ",") : 0;
    for (const char *w = states; status && w;) {
        size_t len = strcspn(w, ",");
        if ((len == first && strncmp(w, status, len) == 0) ||
            (len == 18 && strncmp(w, "SchedulingDisabled", len) == 0 &&
             strstr(status + first, ",SchedulingDisabled")))
            return 1;
        w = w[len] ? w + len + 1 : NULL;
    }
    return 0;
}

static int node_status_in(const cJSON *pin, const char *states)
{
    return kctl_node_status_matches(kctl_node_status(pin), states);
}

void kctl_keep_node_status(cJSON *list, const char *states)
{
    keep_items(list, node_status_in, states);
}

int kctl_fetch_pins(kctl_ctx *c, const char *node, cJSON **out, kube_response *resp)
{
    kube_buf path = KUBE_BUF_INIT;
    int rc = list_path(c, &path, KCTL_GROUP_VERSION, "virtualmachinepins", node);
    *out = NULL;
    if (rc == KUBE_OK)
        rc = kctl_get_json(c, path.data, out, resp);
    kube_buf_free(&path);
    if (rc == KUBE_ENOTFOUND || resp->code == 503) {
        kube_response_clear(resp);
        rc = list_from_vms(c, out, resp);
    }
    if (rc != KUBE_OK) {
        cJSON_Delete(*out);
        *out = NULL;
        return rc;
    }
    if (node && *node) /* the fallback, or a server ignoring the selector */
        keep_items(*out, pinned_to, node);
    return KUBE_OK;
}

/* A timestamp's age, "<unknown>" when absent or malformed. */
static void age_of(const kctl_ctx *c, const char *ts, char *out, size_t n)
{
    int64_t us;
    if (!ts || kube_time_parse(ts, &us) != KUBE_OK)
        snprintf(out, n, "<unknown>");
    else
        kube_duration_human((int64_t)c->now - us / 1000000, out, n);
}

int kctl_print_pin_table(kctl_ctx *c, const cJSON *list)
{
    static const char *const headers[] = {"NAMESPACE", "NAME", "NODE", "NODE-STATUS",
                                          "SINCE",     "BY",   "AGE"};
    int all = c->o->all_namespaces;
    kctl_table t;
    const cJSON *it;
    if (kctl_table_init(&t, all ? 7 : 6, headers + !all) != KUBE_OK)
        return KUBE_ENOMEM;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(it, "metadata");
        const char *since = kctl_str(it, "since");
        char since_age[32] = "", age[32];
        if (since)
            age_of(c, since, since_age, sizeof(since_age));
        age_of(c, kctl_str(meta, "creationTimestamp"), age, sizeof(age));
        const char *row[] = {kctl_str(meta, "namespace"),
                             kctl_str(meta, "name"),
                             kctl_str(it, "node"),
                             kctl_node_status(it),
                             since_age,
                             kctl_str(it, "by"),
                             age};
        if (kctl_table_add(&t, row + !all) != KUBE_OK) {
            kctl_table_free(&t);
            return KUBE_ENOMEM;
        }
    }
    if (t.nrows > 1)
        kctl_table_write(&t, c->out);
    else if (all)
        fprintf(c->err, "No resources found\n");
    else
        fprintf(c->err, "No resources found in %s namespace.\n", c->ns);
    kctl_table_free(&t);
    return KUBE_OK;
}

int kctl_list(kctl_ctx *c)
{
    kube_response resp = {0};
    cJSON *list = NULL;
    int rc = kctl_fetch_pins(c, c->o->node, &list, &resp);
    if (rc != KUBE_OK)
        return failed(c, &resp);
    kube_response_clear(&resp);
    if (c->o->node_status)
        kctl_keep_node_status(list, c->o->node_status);
    if (c->o->output && *c->o->output)
        rc = kctl_print_object(c->out, list, c->o->output);
    else
        rc = kctl_print_pin_table(c, list);
    cJSON_Delete(list);
    return rc == KUBE_OK ? KCTL_EXIT_OK : KCTL_EXIT_ERROR;
}
