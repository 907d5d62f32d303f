/*
 * scheduler/framework/resolve.c - a loaded configuration resolved against
 * a registry (fw_config_resolve() in framework.h): the plugin names the
 * file gives are checked, default plugins the registry lacks leave the
 * profile, and every plugin decodes, validates and defaults its own args
 * through its descriptor. The configuration itself knows plugins only by
 * name; this is where names meet descriptors.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"

/* What resolving one configuration needs. */
typedef struct resolver {
    const sched_config *cfg;
    const fw_registry *reg;
    char *err;
    size_t errlen;
    kube_buf missing; /* default plugins the registry lacks, ", "-joined */
} resolver;

/* Writes "<source>: <field>[suffix]: <message>" ("<source>: <message>"
 * without a field) and returns KUBE_ECONFIG. */
static int fail(resolver *r, const char *field, const char *suffix, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(resolver *r, const char *field, const char *suffix, const char *fmt, ...)
{
    const char *source = r->cfg->source && *r->cfg->source ? r->cfg->source : "defaults";
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (!r->err || !r->errlen)
        return KUBE_ECONFIG;
    if (field)
        snprintf(r->err, r->errlen, "%s: %s%s: %s", source, field, suffix, msg);
    else
        snprintf(r->err, r->errlen, "%s: %s", source, msg);
    return KUBE_ECONFIG;
}

/* A plugin named in the file (at field) must be one the registry has;
 * disabling "*" or a kube-scheduler plugin we lack is fine. */
static int check_name(resolver *r, const char *name, const char *field, const char *suffix,
                      int disabled)
{
    if (fw_registry_find(r->reg, name))
        return KUBE_OK;
    if (disabled && (strcmp(name, "*") == 0 || sched_config_upstream_plugin(name)))
        return KUBE_OK;
    if (sched_config_upstream_plugin(name))
        return fail(r, field, suffix, "plugin \"%s\" is not implemented by stickyvm-scheduler",
                    name);
    return fail(r, field, suffix, "unknown plugin \"%s\"", name);
}

/* Notes a default plugin the registry lacks (once per resolve). */
static int note_missing(resolver *r, const char *name)
{
    if (r->missing.len && strstr(r->missing.data, name))
        return KUBE_OK;
    return kube_buf_printf(&r->missing, "%s%s", r->missing.len ? ", " : "", name);
}

/* Checks the named plugins of a set and drops the defaults reg lacks. */
static int resolve_set(resolver *r, sched_plugin_set *s)
{
    size_t w = 0;
    int rc = KUBE_OK;

    for (size_t i = 0; i < s->n_disabled && rc == KUBE_OK; i++)
        rc = check_name(r, s->disabled[i].name, s->disabled[i].field, "", 1);
    for (size_t i = 0; i < s->n_enabled; i++) {
        sched_plugin *p = &s->enabled[i];
        if (rc == KUBE_OK && p->field) {
            rc = check_name(r, p->name, p->field, "", 0);
        } else if (rc == KUBE_OK && !fw_registry_find(r->reg, p->name)) {
            rc = note_missing(r, p->name);
            free(p->name);
            continue;
        }
        s->enabled[w++] = *p;
    }
    s->n_enabled = w;
    return rc;
}

/* Args may carry apiVersion/kind as kube-scheduler writes them: they must
 * name this plugin's args type and are dropped before decoding. */
static int strip_type_meta(resolver *r, sched_plugin_config *pc)
{
    if (!cJSON_IsObject(pc->args))
        return pc->args && !cJSON_IsNull(pc->args)
                   ? fail(r, pc->field, ".args", "expected an object")
                   : KUBE_OK;
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(pc->args, "kind");
    const cJSON *api = cJSON_GetObjectItemCaseSensitive(pc->args, "apiVersion");
    char want[160];
    snprintf(want, sizeof(want), "%sArgs", pc->name);
    if (kind && (!cJSON_IsString(kind) || strcmp(kind->valuestring, want) != 0))
        return fail(r, pc->field, ".args", "kind: must be \"%s\" for plugin \"%s\"", want,
                    pc->name);
    if (api && (!cJSON_IsString(api) || (strcmp(api->valuestring, SCHED_API_V1) != 0 &&
                                         strcmp(api->valuestring, SCHED_API_V1BETA3) != 0)))
        return fail(r, pc->field, ".args", "apiVersion: unsupported value");
    cJSON_DeleteItemFromObjectCaseSensitive(pc->args, "kind");
    cJSON_DeleteItemFromObjectCaseSensitive(pc->args, "apiVersion");
    return KUBE_OK;
}

/* Defaults (and validates, through the plugin's hook) one entry's args. */
static int default_entry_args(resolver *r, sched_plugin_config *pc)
{
    int rc0 = strip_type_meta(r, pc);
    if (rc0 != KUBE_OK)
        return rc0;
    if (cJSON_IsNull(pc->args)) {
        cJSON_Delete(pc->args);
        pc->args = NULL;
    }
    const fw_plugin_desc *desc = fw_registry_find(r->reg, pc->name);
    if (!desc || !desc->default_args) {
        if (pc->args && !(cJSON_IsObject(pc->args) && !pc->args->child))
            return fail(r, pc->field, ".args", "plugin \"%s\" takes no args", pc->name);
        return KUBE_OK;
    }
    char msg[512] = "";
    cJSON *out = NULL;
    int rc = desc->default_args(pc->args, &out, msg, sizeof(msg));
    if (rc != KUBE_OK)
        return rc == KUBE_ENOMEM
                   ? rc
                   : fail(r, pc->field, ".args", "%s", msg[0] ? msg : kube_strerror(rc));
    cJSON_Delete(pc->args);
    pc->args = out;
    return KUBE_OK;
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* pluginsNames(): every enabled name of every point, sorted, unique, in a
 * new array (*out, caller frees; the names are the profile's). */
static int enabled_names(const sched_profile *p, const char ***out, size_t *n)
{
    size_t cap = 0;
    for (int e = 0; e < SCHED_EP_COUNT; e++)
        cap += p->plugins[e].n_enabled;
    const char **names = calloc(cap ? cap : 1, sizeof(*names));
    if (!names)
        return KUBE_ENOMEM;
    size_t k = 0;
    for (int e = 0; e < SCHED_EP_COUNT; e++)
        for (size_t i = 0; i < p->plugins[e].n_enabled; i++)
            names[k++] = p->plugins[e].enabled[i].name;
    qsort(names, k, sizeof(*names), cmp_cstr);
    size_t w = 0;
    for (size_t i = 0; i < k; i++)
        if (!w || strcmp(names[w - 1], names[i]) != 0)
            names[w++] = names[i];
    *out = names;
    *n = w;
    return KUBE_OK;
}

/* 1 when the profile has a pluginConfig entry for name. */
static int has_config(const sched_profile *p, const char *name)
{
    for (size_t i = 0; i < p->n_plugin_config; i++)
        if (strcmp(p->plugin_config[i].name, name) == 0)
            return 1;
    return 0;
}

/* Appends an entry with name's defaulted args. */
static int append_default_config(resolver *r, sched_profile *p, const char *name)
{
    sched_plugin_config *pc = realloc(p->plugin_config, (p->n_plugin_config + 1) * sizeof(*pc));
    if (!pc)
        return KUBE_ENOMEM;
    p->plugin_config = pc;
    pc = &p->plugin_config[p->n_plugin_config];
    memset(pc, 0, sizeof(*pc));
    pc->name = kube_strdup(name);
    if (!pc->name)
        return KUBE_ENOMEM;
    p->n_plugin_config++;
    return default_entry_args(r, pc);
}

/* The given entries defaulted in place, then one for every enabled plugin
 * that takes args and has none. */
static int resolve_plugin_config(resolver *r, sched_profile *p)
{
    int rc = KUBE_OK;
    for (size_t j = 0; j < p->n_plugin_config && rc == KUBE_OK; j++)
        rc = check_name(r, p->plugin_config[j].name, p->plugin_config[j].field, ".name", 0);
    for (size_t j = 0; j < p->n_plugin_config && rc == KUBE_OK; j++)
        rc = default_entry_args(r, &p->plugin_config[j]);
    const char **names = NULL;
    size_t n = 0;
    if (rc == KUBE_OK)
        rc = enabled_names(p, &names, &n);
    for (size_t i = 0; i < n && rc == KUBE_OK; i++) {
        const fw_plugin_desc *desc = fw_registry_find(r->reg, names[i]);
        if (desc && desc->default_args && !has_config(p, names[i]))
            rc = append_default_config(r, p, names[i]);
    }
    free(names);
    return rc;
}

/* One profile: its sets, then its pluginConfig. */
static int resolve_profile(resolver *r, sched_profile *p)
{
    int rc = KUBE_OK;
    for (int e = 0; e < SCHED_EP_COUNT && rc == KUBE_OK; e++)
        rc = resolve_set(r, &p->plugins[e]);
    if (rc == KUBE_OK)
        rc = resolve_plugin_config(r, p);
    if (rc == KUBE_OK)
        p->resolved = 1;
    return rc;
}

int fw_config_resolve(sched_config *cfg, const fw_registry *reg, char *err, size_t errlen)
{
    resolver r = {cfg, reg, err, errlen, KUBE_BUF_INIT};
    int rc = reg ? KUBE_OK : KUBE_EINVAL;

    if (err && errlen)
        err[0] = '\0';
    for (size_t i = 0; i < cfg->n_profiles && rc == KUBE_OK; i++)
        if (!cfg->profiles[i].resolved)
            rc = resolve_profile(&r, &cfg->profiles[i]);
    if (rc == KUBE_OK && r.missing.len)
        KLOG_WARN("kube-scheduler default plugins not implemented by stickyvm-scheduler are left "
                  "out of the default profile: %s",
                  r.missing.data);
    kube_buf_free(&r.missing);
    return rc;
}
