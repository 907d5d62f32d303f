/*
 * scheduler/framework/runtime.c - building a profile's framework from its
 * configuration (kube-scheduler's NewFramework: plugin instantiation,
 * per-point lists, multiPoint expansion, score weights) and introspection.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/internal.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log.h"
#include "framework/framework_testing.h"

/* kube-scheduler's getExtensionPoints() order. */
static const fw_point point_order[] = {
    FW_PT_PRE_FILTER, FW_PT_FILTER, FW_PT_POST_FILTER, FW_PT_RESERVE,
    FW_PT_PRE_SCORE,  FW_PT_SCORE,  FW_PT_PRE_BIND,    FW_PT_BIND,
    FW_PT_POST_BIND,  FW_PT_PERMIT, FW_PT_PRE_ENQUEUE, FW_PT_QUEUE_SORT,
};
#define N_POINTS (sizeof(point_order) / sizeof(point_order[0]))

/* The config set of a point: sched_ext_point and fw_point share order. */
static const sched_plugin_set *config_set(const sched_profile *prof, fw_point p)
{
    return &prof->plugins[(sched_ext_point)p];
}

static int implements(const fw_plugin_desc *d, fw_point p)
{
    switch (p) {
    case FW_PT_PRE_ENQUEUE:
        return d->pre_enqueue != NULL;
    case FW_PT_QUEUE_SORT:
        return d->less != NULL;
    case FW_PT_PRE_FILTER:
        return d->pre_filter != NULL;
    case FW_PT_FILTER:
        return d->filter != NULL;
    case FW_PT_POST_FILTER:
        return d->post_filter != NULL;
    case FW_PT_PRE_SCORE:
        return d->pre_score != NULL;
    case FW_PT_SCORE:
        return d->score != NULL;
    case FW_PT_RESERVE:
        return d->reserve != NULL;
    case FW_PT_PERMIT:
        return d->permit != NULL;
    case FW_PT_PRE_BIND:
        return d->pre_bind != NULL;
    case FW_PT_BIND:
        return d->bind != NULL;
    case FW_PT_POST_BIND:
        return d->post_bind != NULL;
    default:
        return 0;
    }
}

static void errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static fw_inst *find_inst(const fw_framework *fw, const char *name)
{
    for (size_t i = 0; i < fw->n_insts; i++)
        if (strcmp(fw->insts[i].desc->name, name) == 0)
            return &fw->insts[i];
    return NULL;
}

/* ---- plugin instantiation ---- */

static int name_listed(const char **names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return 1;
    return 0;
}

/* pluginsNeeded: every name enabled at any point or in multiPoint, once. */
static int plugins_needed(const sched_profile *prof, const char ***out, size_t *n_out)
{
    size_t cap = 0, n = 0;
    for (int e = 0; e < SCHED_EP_COUNT; e++)
        cap += prof->plugins[e].n_enabled;
    const char **names = calloc(cap ? cap : 1, sizeof(*names));
    if (!names)
        return KUBE_ENOMEM;
    for (size_t k = 0; k <= N_POINTS; k++) {
        const sched_plugin_set *s =
            k < N_POINTS ? config_set(prof, point_order[k]) : &prof->plugins[SCHED_EP_MULTI_POINT];
        for (size_t i = 0; i < s->n_enabled; i++)
            if (!name_listed(names, n, s->enabled[i].name))
                names[n++] = s->enabled[i].name;
    }
    *out = names;
    *n_out = n;
    return KUBE_OK;
}

static int check_plugin_config(const sched_profile *prof, char *err, size_t errlen)
{
    for (size_t i = 0; i < prof->n_plugin_config; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(prof->plugin_config[i].name, prof->plugin_config[j].name) == 0) {
                errf(err, errlen, "repeated config for plugin %s", prof->plugin_config[i].name);
                return KUBE_ECONFIG;
            }
    return KUBE_OK;
}

/* Creates plugin d with the profile's (resolved, so defaulted) args and
 * adds the instance. KUBE_OK, or the plugin's error with err set. */
static int create_plugin(fw_framework *fw, const sched_profile *prof, const fw_plugin_desc *d,
                         void *deps, char *err, size_t errlen)
{
    /* resolved: a plugin that takes args has its defaulted entry */
    const cJSON *args = sched_profile_args(prof, d->name);
    char msg[512] = "";
    void *self = NULL;
    int rc = d->create(args, &fw->handle, deps, &self, msg, sizeof(msg));
    if (rc != KUBE_OK) {
        errf(err, errlen, "initializing plugin \"%s\": %s", d->name,
             msg[0] ? msg : kube_strerror(rc));
        return rc;
    }
    fw->insts[fw->n_insts++] = (fw_inst){d, self, 0};
    return KUBE_OK;
}

static int create_plugins(fw_framework *fw, const sched_profile *prof, const fw_registry *reg,
                          char *err, size_t errlen)
{
    const char **names;
    size_t n;
    int rc = plugins_needed(prof, &names, &n);
    if (rc != KUBE_OK)
        return rc;
    fw->insts = calloc(n ? n : 1, sizeof(*fw->insts));
    if (!fw->insts)
        rc = KUBE_ENOMEM;
    for (size_t i = 0; i < n && rc == KUBE_OK; i++) {
        const fw_plugin_desc *d = fw_registry_find(reg, names[i]);
        if (!d || !d->create) {
            errf(err, errlen, "plugin \"%s\" does not exist", names[i]);
            rc = KUBE_ECONFIG;
            break;
        }
        rc = create_plugin(fw, prof, d, fw_registry_deps(reg, d), err, errlen);
    }
    free(names);
    return rc;
}

/* ---- per-point lists ---- */

static const char *const type_names[FW_PT_COUNT] = {
    [FW_PT_PRE_ENQUEUE] = "PreEnqueuePlugin",
    [FW_PT_QUEUE_SORT] = "QueueSortPlugin",
    [FW_PT_PRE_FILTER] = "PreFilterPlugin",
    [FW_PT_FILTER] = "FilterPlugin",
    [FW_PT_POST_FILTER] = "PostFilterPlugin",
    [FW_PT_PRE_SCORE] = "PreScorePlugin",
    [FW_PT_SCORE] = "ScorePlugin",
    [FW_PT_RESERVE] = "ReservePlugin",
    [FW_PT_PERMIT] = "PermitPlugin",
    [FW_PT_PRE_BIND] = "PreBindPlugin",
    [FW_PT_BIND] = "BindPlugin",
    [FW_PT_POST_BIND] = "PostBindPlugin",
};

static int in_list(fw_inst *const *list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i]->desc->name, name) == 0)
            return 1;
    return 0;
}

/* updatePluginList: the point's explicit enabled list. */
static int fill_point(fw_framework *fw, const sched_profile *prof, fw_point p, char *err,
                      size_t errlen)
{
    const sched_plugin_set *s = config_set(prof, p);
    fw->pt[p] = calloc(fw->n_insts ? fw->n_insts : 1, sizeof(fw_inst *));
    if (!fw->pt[p])
        return KUBE_ENOMEM;
    for (size_t i = 0; i < s->n_enabled; i++) {
        const char *name = s->enabled[i].name;
        fw_inst *in = find_inst(fw, name);
        if (!in) {
            errf(err, errlen, "%s \"%s\" does not exist", type_names[p], name);
            return KUBE_ECONFIG;
        }
        if (!implements(in->desc, p)) {
            errf(err, errlen, "plugin \"%s\" does not extend %s plugin", name, type_names[p]);
            return KUBE_ECONFIG;
        }
        if (in_list(fw->pt[p], fw->n_pt[p], name)) {
            errf(err, errlen, "plugin \"%s\" already registered as \"%s\"", name, type_names[p]);
            return KUBE_ECONFIG;
        }
        fw->pt[p][fw->n_pt[p]++] = in;
    }
    return KUBE_OK;
}

static int disabled_has(const sched_plugin_set *s, const char *name)
{
    for (size_t i = 0; i < s->n_disabled; i++)
        if (strcmp(s->disabled[i].name, name) == 0)
            return 1;
    return 0;
}

/* expandMultiPointPlugins for one point: overrides (explicitly listed at
 * the point and in multiPoint) keep their explicit order first, then
 * multiPoint-only plugins, then the rest of the explicit list. */
static int expand_point(fw_framework *fw, const sched_profile *prof, fw_point p, char *err,
                        size_t errlen)
{
    const sched_plugin_set *s = config_set(prof, p);
    const sched_plugin_set *mp = &prof->plugins[SCHED_EP_MULTI_POINT];
    if (disabled_has(s, "*"))
        return KUBE_OK;
    size_t n_explicit = fw->n_pt[p];
    fw_inst **explicit_ = fw->pt[p];
    fw_inst **mp_list = calloc(fw->n_insts ? fw->n_insts : 1, sizeof(fw_inst *));
    fw_inst **out = calloc(fw->n_insts ? fw->n_insts : 1, sizeof(fw_inst *));
    char *override = calloc(n_explicit ? n_explicit : 1, 1);
    size_t n_mp = 0, n_out = 0;
    int rc = mp_list && out && override ? KUBE_OK : KUBE_ENOMEM;
    for (size_t i = 0; i < mp->n_enabled && rc == KUBE_OK; i++) {
        const char *name = mp->enabled[i].name;
        fw_inst *in = find_inst(fw, name);
        if (!in) {
            errf(err, errlen, "%s \"%s\" does not exist", type_names[p], name);
            rc = KUBE_ECONFIG;
            break;
        }
        if (!implements(in->desc, p) || disabled_has(s, name))
            continue;
        size_t k;
        for (k = 0; k < n_explicit && explicit_[k] != in; k++)
            ;
        if (k < n_explicit) {
            KLOG_V(2, "MultiPoint plugin is explicitly re-configured; overriding plugin=\"%s\"",
                   name);
            override[k] = 1;
            continue;
        }
        if (in_list(mp_list, n_mp, name)) {
            errf(err, errlen, "plugin \"%s\" already registered as \"%s\"", name, type_names[p]);
            rc = KUBE_ECONFIG;
            break;
        }
        mp_list[n_mp++] = in;
    }
    if (rc == KUBE_OK) {
        for (size_t k = 0; k < n_explicit; k++)
            if (override[k])
                out[n_out++] = explicit_[k];
        for (size_t k = 0; k < n_mp; k++)
            out[n_out++] = mp_list[k];
        for (size_t k = 0; k < n_explicit; k++)
            if (!override[k])
                out[n_out++] = explicit_[k];
        free(fw->pt[p]);
        fw->pt[p] = out;
        fw->n_pt[p] = n_out;
        out = NULL;
    }
    free(mp_list);
    free(out);
    free(override);
    return rc;
}

/* getScoreWeights over Score.Enabled then MultiPoint.Enabled: the first
 * mention wins, 0 means 1, and the total must not overflow. */
static int score_weights(fw_framework *fw, const sched_profile *prof, char *err, size_t errlen)
{
    int64_t total = 0;
    const sched_plugin_set *sets[2] = {config_set(prof, FW_PT_SCORE),
                                       &prof->plugins[SCHED_EP_MULTI_POINT]};
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < sets[k]->n_enabled; i++) {
            fw_inst *in = find_inst(fw, sets[k]->enabled[i].name);
            if (!in || !implements(in->desc, FW_PT_SCORE) || in->weight)
                continue;
            in->weight = sets[k]->enabled[i].weight ? sets[k]->enabled[i].weight : 1;
            if ((int64_t)in->weight * FW_MAX_NODE_SCORE > FW_MAX_TOTAL_SCORE - total) {
                errf(err, errlen, "total score of Score plugins could overflow");
                return KUBE_ECONFIG;
            }
            total += (int64_t)in->weight * FW_MAX_NODE_SCORE;
        }
    }
    for (size_t i = 0; i < fw->n_pt[FW_PT_SCORE]; i++)
        if (!fw->pt[FW_PT_SCORE][i]->weight) {
            errf(err, errlen, "score plugin \"%s\" is not configured with weight",
                 fw->pt[FW_PT_SCORE][i]->desc->name);
            return KUBE_ECONFIG;
        }
    return KUBE_OK;
}

static int build_points(fw_framework *fw, const sched_profile *prof, char *err, size_t errlen)
{
    int rc = KUBE_OK;
    for (size_t k = 0; k < N_POINTS && rc == KUBE_OK; k++)
        rc = fill_point(fw, prof, point_order[k], err, errlen);
    if (rc == KUBE_OK && prof->plugins[SCHED_EP_MULTI_POINT].n_enabled)
        for (size_t k = 0; k < N_POINTS && rc == KUBE_OK; k++)
            rc = expand_point(fw, prof, point_order[k], err, errlen);
    if (rc != KUBE_OK)
        return rc;
    if (fw->n_pt[FW_PT_QUEUE_SORT] != 1) {
        errf(err, errlen,
             "only one queue sort plugin required for profile with scheduler name \"%s\", but "
             "got %zu",
             fw->profile, fw->n_pt[FW_PT_QUEUE_SORT]);
        return KUBE_ECONFIG;
    }
    if (fw->n_pt[FW_PT_BIND] == 0) {
        errf(err, errlen,
             "at least one bind plugin is needed for profile with scheduler name \"%s\"",
             fw->profile);
        return KUBE_ECONFIG;
    }
    return score_weights(fw, prof, err, errlen);
}

int fw_framework_new(const sched_profile *prof, const fw_registry *reg, const fw_services *svc,
                     fw_framework **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!reg || !prof->resolved) {
        errf(err, errlen,
             "creating profile for scheduler name %s: the profile is not resolved "
             "against a plugin registry",
             prof->scheduler_name ? prof->scheduler_name : "");
        return KUBE_EINVAL;
    }
    fw_framework *fw = calloc(1, sizeof(*fw));
    if (!fw)
        return KUBE_ENOMEM;
    pthread_mutex_init(&fw->wmu, NULL);
    fw->profile = kube_strdup(prof->scheduler_name ? prof->scheduler_name : "");
    fw->pct = prof->has_percentage ? prof->percentage_of_nodes_to_score : -1;
    fw->handle.fw = fw;
    fw->handle.profile_name = fw->profile;
    if (svc)
        fw->handle.svc = *svc;
    char msg[768] = "";
    int rc = fw->profile ? KUBE_OK : KUBE_ENOMEM;
    if (rc == KUBE_OK)
        rc = check_plugin_config(prof, msg, sizeof(msg));
    if (rc == KUBE_OK)
        rc = create_plugins(fw, prof, reg, msg, sizeof(msg));
    if (rc == KUBE_OK)
        rc = build_points(fw, prof, msg, sizeof(msg));
    if (rc != KUBE_OK) {
        errf(err, errlen, "creating profile for scheduler name %s: %s",
             fw->profile ? fw->profile : "", msg[0] ? msg : kube_strerror(rc));
        fw_framework_free(fw);
        return rc;
    }
    *out = fw;
    return KUBE_OK;
}

void fw_framework_free(fw_framework *fw)
{
    if (!fw)
        return;
    fw__free_waiting(fw);
    for (size_t i = fw->n_insts; i-- > 0;)
        if (fw->insts[i].desc->destroy)
            fw->insts[i].desc->destroy(fw->insts[i].self);
    for (int p = 0; p < FW_PT_COUNT; p++)
        free(fw->pt[p]);
    free(fw->insts);
    kube_strmap_free(&fw->waiting);
    pthread_mutex_destroy(&fw->wmu);
    free(fw->profile);
    free(fw);
}

const char *fw_framework_profile_name(const fw_framework *fw)
{
    return fw->profile;
}

fw_framework *fw_framework_for(fw_framework *const *fws, size_t n, const char *scheduler_name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(fws[i]->profile, scheduler_name))
            return fws[i];
    return NULL;
}

fw_handle *fw_framework_handle(fw_framework *fw)
{
    return &fw->handle;
}

size_t fw_framework_plugins_at(const fw_framework *fw, fw_point p, const char **names, size_t cap)
{
    if ((unsigned)p >= FW_PT_COUNT)
        return 0;
    for (size_t i = 0; i < fw->n_pt[p] && i < cap; i++)
        names[i] = fw->pt[p][i]->desc->name;
    return fw->n_pt[p];
}

int fw_framework_score_weight(const fw_framework *fw, const char *plugin)
{
    for (size_t i = 0; i < fw->n_pt[FW_PT_SCORE]; i++)
        if (strcmp(fw->pt[FW_PT_SCORE][i]->desc->name, plugin) == 0)
            return fw->pt[FW_PT_SCORE][i]->weight;
    return 0;
}

int fw_framework_has_filter_plugins(const fw_framework *fw)
{
    return fw->n_pt[FW_PT_FILTER] > 0;
}

int fw_framework_has_score_plugins(const fw_framework *fw)
{
    return fw->n_pt[FW_PT_SCORE] > 0;
}

int fw_framework_has_post_filter_plugins(const fw_framework *fw)
{
    return fw->n_pt[FW_PT_POST_FILTER] > 0;
}

int fw_framework_has_plugin(const fw_framework *fw, const char *plugin)
{
    return find_inst(fw, plugin) != NULL;
}

static const fw_cluster_event_with_hint wildcard_event = {{FW_GVK_WILDCARD, FW_ACT_ALL, "*"}, NULL};

void fw_framework_foreach_event(const fw_framework *fw,
                                void (*fn)(void *ud, const char *plugin, void *self,
                                           const fw_cluster_event_with_hint *ev),
                                void *ud)
{
    for (size_t i = 0; i < fw->n_insts; i++) {
        const fw_inst *in = &fw->insts[i];
        if (!in->desc->events_to_register) {
            fn(ud, in->desc->name, in->self, &wildcard_event);
            continue;
        }
        const fw_cluster_event_with_hint *evs = NULL;
        size_t n = in->desc->events_to_register(in->self, &evs);
        for (size_t k = 0; k < n; k++)
            fn(ud, in->desc->name, in->self, &evs[k]);
    }
}
