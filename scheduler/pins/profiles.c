/*
 * scheduler/pins/profiles.c - what the profiles enabling StickyVM configure
 * for the scheduler's one pin controller: the pin key, the schedulerNames
 * and nodeLossGracePeriod, refused when two profiles differ (see
 * sched_pins_profiles() in pins/controller.h).
 */
#include <stdio.h>
#include <string.h>

#include "kube/util/duration.h"
#include "kube/util/errors.h"
#include "pins/controller.h"
#include "plugins/stickyvm/stickyvm.h"

/* The value of StickyVM's defaulted arg name in p, or def. */
static const char *profile_arg(const sched_profile *p, const char *name, const char *def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(sched_profile_args(p, STICKYVM_NAME), name);
    return cJSON_IsString(v) ? v->valuestring : def;
}

/* KUBE_ECONFIG with err naming profiles a and b, which configure
 * different values va and vb of StickyVM's arg. */
static int profiles_differ(const char *a, const char *b, const char *arg, const char *va,
                           const char *vb, char *err, size_t errlen)
{
    snprintf(err, errlen,
             "profiles \"%s\" and \"%s\" configure different StickyVM %s values (\"%s\" and "
             "\"%s\"): the scheduler runs one pin controller",
             a, b, arg, va, vb);
    return KUBE_ECONFIG;
}

int sched_pins_profiles(const sched_config *cfg, fw_framework *const *fws, size_t n,
                        sched_pins_profile_set *out, char *err, size_t errlen)
{
    const char *first = NULL, *grace = NULL;
    out->key = NULL;
    out->n_names = 0;
    for (size_t i = 0; i < n; i++) {
        const sched_profile *p = &cfg->profiles[i];
        if (!fw_framework_has_plugin(fws[i], STICKYVM_NAME))
            continue;
        const char *k = profile_arg(p, "annotationKey", KUBE_PIN_DEFAULT_KEY);
        const char *g = profile_arg(p, "nodeLossGracePeriod", STICKYVM_DEFAULT_NODE_LOSS_GRACE);
        if (out->key && strcmp(out->key, k) != 0)
            return profiles_differ(first, p->scheduler_name, "annotationKey", out->key, k, err,
                                   errlen);
        if (grace && strcmp(grace, g) != 0)
            return profiles_differ(first, p->scheduler_name, "nodeLossGracePeriod", grace, g, err,
                                   errlen);
        if (!out->key)
            out->key = k, grace = g, first = p->scheduler_name;
        out->names[out->n_names++] = p->scheduler_name;
    }
    if (grace && kube_duration_parse(grace, &out->node_loss_grace_ms) != KUBE_OK)
        return KUBE_ECONFIG; /* the plugin's args refused it already */
    return KUBE_OK;
}
