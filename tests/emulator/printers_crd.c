/*
 * tests/emulator/printers_crd.c - Tables for custom resources as
 * apiextensions-apiserver's tableconvertor builds them: a Name column,
 * then the CRD version's additionalPrinterColumns (name, type, format,
 * description or "Custom resource definition column (in JSONPath format):
 * PATH", priority), or Age (.metadata.creationTimestamp, type date) when
 * the CRD declares none. The emulator's custom resources are KubeVirt's
 * VirtualMachine and VirtualMachineInstance, with the columns of KubeVirt's
 * own CRDs (virt-operator's crds.go).
 *
 * Cells evaluate each column's JSONPath (the simple forms CRDs use:
 * .a.b, escaped dots "stickyvm\.io/node", [N], [*] and filters
 * [?(@.type=='Ready')]); the first result is converted by column type as
 * cellForJSONValue does (date: a human age; string: the printed value;
 * integer, number, boolean: the JSON value of that type), anything missing
 * or of another type is null.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "printers.h"

typedef struct crd_column {
    emu_column col; /* description NULL: the default text */
    const char *json_path;
} crd_column;

static const char ready_path[] = ".status.conditions[?(@.type=='Ready')].status";

static const crd_column age_only[] = {
    {{"Age", "date", "", emu_desc_created, 0}, ".metadata.creationTimestamp"},
};

static const crd_column vm_columns[] = {
    {{"Age", "date", "", NULL, 0}, ".metadata.creationTimestamp"},
    {{"Status", "string", "", "Human Readable Status", 0}, ".status.printableStatus"},
    {{"Ready", "string", "", NULL, 0}, ready_path},
};

static const crd_column vmi_columns[] = {
    {{"Age", "date", "", NULL, 0}, ".metadata.creationTimestamp"},
    {{"Phase", "string", "", NULL, 0}, ".status.phase"},
    {{"IP", "string", "", NULL, 0}, ".status.interfaces[0].ipAddress"},
    {{"NodeName", "string", "", NULL, 0}, ".status.nodeName"},
    {{"Ready", "string", "", NULL, 0}, ready_path},
    {{"Live-Migratable", "string", "", NULL, 1},
     ".status.conditions[?(@.type=='LiveMigratable')].status"},
    {{"Paused", "string", "", NULL, 1}, ".status.conditions[?(@.type=='Paused')].status"},
};

static const crd_column *columns_of(const emu_resource *r, size_t *n)
{
    if (!strcmp(r->def->group, "kubevirt.io") && !strcmp(r->def->plural, "virtualmachines")) {
        *n = sizeof(vm_columns) / sizeof(vm_columns[0]);
        return vm_columns;
    }
    if (!strcmp(r->def->group, "kubevirt.io") &&
        !strcmp(r->def->plural, "virtualmachineinstances")) {
        *n = sizeof(vmi_columns) / sizeof(vmi_columns[0]);
        return vmi_columns;
    }
    *n = 1;
    return age_only;
}

cJSON *emu_crd_columns(const emu_resource *r)
{
    static const emu_column name = {"Name", "string", "name", emu_desc_name, 0};
    size_t n;
    const crd_column *c = columns_of(r, &n);
    cJSON *cols = cJSON_CreateArray();

    if (!cols)
        return NULL;
    emu_columns_add(cols, &name, 1);
    for (size_t i = 0; i < n; i++) {
        char desc[256];
        emu_column one = c[i].col;
        if (!one.description) {
            snprintf(desc, sizeof(desc),
                     "Custom resource definition column (in JSONPath format): %s", c[i].json_path);
            one.description = desc;
        }
        emu_columns_add(cols, &one, 1);
    }
    return cols;
}

/* ------------------------------------------------------------------ */
/* JSONPath                                                            */
/* ------------------------------------------------------------------ */

static const cJSON *jp_eval(const cJSON *node, const char *p, int depth);

/* A member name up to an unescaped '.' or '[' ("\." is a literal dot). */
static const char *jp_key(const char *p, char *out, size_t n)
{
    size_t o = 0;

    while (*p && *p != '.' && *p != '[') {
        if (*p == '\\' && p[1])
            p++;
        if (o + 1 < n)
            out[o++] = *p;
        p++;
    }
    out[o] = '\0';
    return p;
}

/* The text of a scalar for comparisons and string cells. */
static void scalar_text(const cJSON *v, char *out, size_t n)
{
    if (cJSON_IsString(v))
        snprintf(out, n, "%s", v->valuestring);
    else if (cJSON_IsBool(v))
        snprintf(out, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNumber(v) && v->valuedouble == (double)(long long)v->valuedouble)
        snprintf(out, n, "%lld", (long long)v->valuedouble);
    else if (cJSON_IsNumber(v))
        snprintf(out, n, "%g", v->valuedouble);
    else
        out[0] = '\0';
}

/* [?(@.KEY==VALUE)] at p (after '['): the first element matching, then
 * the rest of the path. */
static const cJSON *jp_filter(const cJSON *arr, const char *p, int depth)
{
    char key[128], want[128], have[128];
    const char *eq = strstr(p, "=="), *end = strstr(p, ")]"), *v;
    const cJSON *el;
    size_t wn;

    if (!eq || !end || eq > end || strncmp(p, "?(@.", 4) || (size_t)(eq - p - 3) >= sizeof(key))
        return NULL;
    snprintf(key, sizeof(key), "%.*s", (int)(eq - p - 3), p + 3);
    v = eq + 2;
    wn = (size_t)(end - v);
    if (wn >= 2 && (*v == '\'' || *v == '"') && v[wn - 1] == *v) {
        v++;
        wn -= 2;
    }
    snprintf(want, sizeof(want), "%.*s", (int)wn, v);
    cJSON_ArrayForEach(el, arr)
    {
        const cJSON *field = jp_eval(el, key, depth + 1), *hit;
        scalar_text(field, have, sizeof(have));
        if (field && !strcmp(have, want) && (hit = jp_eval(el, end + 2, depth + 1)))
            return hit;
    }
    return NULL;
}

/* [N] or [*] at p (after '['). */
static const cJSON *jp_index(const cJSON *arr, const char *p, int depth)
{
    const char *close = strchr(p, ']');
    const cJSON *el, *hit;
    char *endp;
    long idx;

    if (!close)
        return NULL;
    if (*p == '*') {
        cJSON_ArrayForEach(el, arr) if ((hit = jp_eval(el, close + 1, depth + 1))) return hit;
        return NULL;
    }
    idx = strtol(p, &endp, 10);
    if (endp != close || idx < 0 || idx >= cJSON_GetArraySize(arr))
        return NULL;
    return jp_eval(cJSON_GetArrayItem(arr, (int)idx), close + 1, depth + 1);
}

static const cJSON *jp_eval(const cJSON *node, const char *p, int depth)
{
    char key[256];

    if (!node || depth > 32)
        return NULL;
    if (!*p)
        return node;
    if (*p == '[') {
        if (!cJSON_IsArray(node))
            return NULL;
        return p[1] == '?' ? jp_filter(node, p + 1, depth) : jp_index(node, p + 1, depth);
    }
    if (*p == '.')
        p++;
    p = jp_key(p, key, sizeof(key));
    if (!cJSON_IsObject(node))
        return NULL;
    return jp_eval(cJSON_GetObjectItemCaseSensitive(node, key), p, depth + 1);
}

/* ------------------------------------------------------------------ */
/* Cells                                                               */
/* ------------------------------------------------------------------ */

static cJSON *cell_for(const char *type, const cJSON *v)
{
    char text[512];

    if (!v || cJSON_IsNull(v))
        return cJSON_CreateNull();
    if (!strcmp(type, "string")) {
        char *printed = NULL;
        cJSON *cell;
        if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
            printed = cJSON_PrintUnformatted(v);
            cell = cJSON_CreateString(printed ? printed : "");
            free(printed);
            return cell;
        }
        scalar_text(v, text, sizeof(text));
        return cJSON_CreateString(text);
    }
    if (!strcmp(type, "date") && cJSON_IsString(v)) {
        emu_human_since(v->valuestring, text, sizeof(text));
        return cJSON_CreateString(strcmp(text, "<unknown>") ? text : "<invalid>");
    }
    if (!strcmp(type, "integer") && cJSON_IsNumber(v))
        return cJSON_CreateNumber((double)(long long)v->valuedouble);
    if (!strcmp(type, "number") && cJSON_IsNumber(v))
        return cJSON_CreateNumber(v->valuedouble);
    if (!strcmp(type, "boolean") && cJSON_IsBool(v))
        return cJSON_CreateBool(cJSON_IsTrue(v));
    return cJSON_CreateNull();
}

cJSON *emu_crd_cells(const emu_resource *r, const cJSON *obj)
{
    size_t n;
    const crd_column *c = columns_of(r, &n);
    cJSON *cells = cJSON_CreateArray();

    if (!cells)
        return NULL;
    cJSON_AddItemToArray(cells, cJSON_CreateString(emu_json_str(obj, "metadata.name")
                                                       ? emu_json_str(obj, "metadata.name")
                                                       : ""));
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(cells, cell_for(c[i].col.type, jp_eval(obj, c[i].json_path, 0)));
    return cells;
}
