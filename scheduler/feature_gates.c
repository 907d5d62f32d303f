/*
 * scheduler/feature_gates.c - the feature gates stickyvm-scheduler models
 * (feature_gates.h): their table with v1.28's stages and defaults, and
 * --feature-gates parsing as component-base's featuregate parses it.
 */
#include "feature_gates.h"
#include "feature_gates_testing.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/flags.h"

typedef struct gate {
    const char *name;
    const char *stage; /* "ALPHA" or "BETA" */
    int def;           /* the v1.28 default */
    int both_ways;     /* stickyvm implements the non-default value too */
} gate;

/* In sched_feature order (alphabetical, as --help lists them). */
static const gate gates[SCHED_FEATURE_COUNT] = {
    {"DynamicResourceAllocation", "ALPHA", 0, 0},
    {"InPlacePodVerticalScaling", "ALPHA", 0, 0},
    {"MatchLabelKeysInPodTopologySpread", "BETA", 1, 1},
    {"MinDomainsInPodTopologySpread", "BETA", 1, 1},
    {"NodeInclusionPolicyInPodTopologySpread", "BETA", 1, 1},
    {"PodDisruptionConditions", "BETA", 1, 1},
    {"PodSchedulingReadiness", "BETA", 1, 1},
    {"ReadWriteOncePod", "BETA", 1, 1},
    {"SidecarContainers", "ALPHA", 0, 0},
    {"VolumeCapacityPriority", "ALPHA", 0, 0},
};

static atomic_int enabled[SCHED_FEATURE_COUNT] = {0, 0, 1, 1, 1, 1, 1, 1, 0, 0};

int sched_feature_enabled(sched_feature f)
{
    return f < SCHED_FEATURE_COUNT ? atomic_load(&enabled[f]) : 0;
}

void sched_features_reset(void)
{
    for (int i = 0; i < SCHED_FEATURE_COUNT; i++)
        atomic_store(&enabled[i], gates[i].def);
}

/* The parse of a spec: per gate -1 (not named) or its value; AllAlpha and
 * AllBeta likewise. */
typedef struct parsed {
    int value[SCHED_FEATURE_COUNT];
    int all_alpha, all_beta;
} parsed;

/* "unrecognized feature gate: X (known: ...)" into err. */
static int unknown_gate(const char *name, char *err, size_t errlen)
{
    kube_buf b = KUBE_BUF_INIT;

    kube_buf_printf(&b, "unrecognized feature gate: %s (known: AllAlpha, AllBeta", name);
    for (int i = 0; i < SCHED_FEATURE_COUNT; i++)
        kube_buf_printf(&b, ", %s", gates[i].name);
    kube_buf_puts(&b, ")");
    snprintf(err, errlen, "%s", b.data ? b.data : "unrecognized feature gate");
    kube_buf_free(&b);
    return KUBE_ECONFIG;
}

/* Where the value of gate name goes in p, or NULL. */
static int *slot(parsed *p, const char *name)
{
    if (strcmp(name, "AllAlpha") == 0)
        return &p->all_alpha;
    if (strcmp(name, "AllBeta") == 0)
        return &p->all_beta;
    for (int i = 0; i < SCHED_FEATURE_COUNT; i++)
        if (strcmp(name, gates[i].name) == 0)
            return &p->value[i];
    return NULL;
}

/* One "Key=bool" (trimmed) into p. */
static int parse_pair(const char *pair, parsed *p, char *err, size_t errlen)
{
    char key[128], value[64];
    const char *eq = strchr(pair, '=');
    int *dst, b;

    if (!eq || (size_t)(eq - pair) >= sizeof(key) || strlen(eq + 1) >= sizeof(value)) {
        snprintf(err, errlen, "malformed pair, expect string=bool");
        return KUBE_ECONFIG;
    }
    snprintf(key, sizeof(key), "%.*s", (int)(eq - pair), pair);
    snprintf(value, sizeof(value), "%s", eq + 1);
    if (!(dst = slot(p, key)))
        return unknown_gate(key, err, errlen);
    if ((b = kube_parse_bool(value)) < 0) {
        snprintf(err, errlen,
                 "invalid value of %s=%s, err: strconv.ParseBool: parsing \"%s\": invalid syntax",
                 key, value, value);
        return KUBE_ECONFIG;
    }
    *dst = b;
    return KUBE_OK;
}

/* Splits spec on ',' (blanks around each pair dropped) into p. */
static int parse_spec(const char *spec, parsed *p, char *err, size_t errlen)
{
    char pair[256];
    const char *s = spec;

    memset(p, 0xff, sizeof(*p)); /* every member -1 */
    while (s && *s) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        while (len && (*s == ' ' || *s == '\t'))
            s++, len--;
        while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
            len--;
        if (len >= sizeof(pair)) {
            snprintf(err, errlen, "malformed pair, expect string=bool");
            return KUBE_ECONFIG;
        }
        snprintf(pair, sizeof(pair), "%.*s", (int)len, s);
        if (len && parse_pair(pair, p, err, errlen) != KUBE_OK)
            return KUBE_ECONFIG;
        s = comma ? comma + 1 : NULL;
    }
    return KUBE_OK;
}

/* The value of gate i under p, or -1 for its default. */
static int value_of(const parsed *p, int i)
{
    if (p->value[i] >= 0)
        return p->value[i];
    if (strcmp(gates[i].stage, "ALPHA") == 0 && p->all_alpha >= 0)
        return p->all_alpha;
    if (strcmp(gates[i].stage, "BETA") == 0 && p->all_beta >= 0)
        return p->all_beta;
    return gates[i].def;
}

/* Parses spec into values[] (every gate's resulting value). */
static int resolve(const char *spec, int values[SCHED_FEATURE_COUNT], char *err, size_t errlen)
{
    parsed p;

    if (parse_spec(spec, &p, err, errlen) != KUBE_OK)
        return KUBE_ECONFIG;
    for (int i = 0; i < SCHED_FEATURE_COUNT; i++) {
        values[i] = value_of(&p, i);
        if (values[i] != gates[i].def && !gates[i].both_ways) {
            snprintf(err, errlen,
                     "feature gate %s=%s is not implemented by stickyvm-scheduler (only its "
                     "v1.28 default, %s)",
                     gates[i].name, values[i] ? "true" : "false", gates[i].def ? "true" : "false");
            return KUBE_ECONFIG;
        }
    }
    return KUBE_OK;
}

int sched_features_check(const char *spec, char *err, size_t errlen)
{
    int values[SCHED_FEATURE_COUNT];

    return resolve(spec, values, err, errlen);
}

int sched_features_apply(const char *spec, char *err, size_t errlen)
{
    int values[SCHED_FEATURE_COUNT];

    if (resolve(spec, values, err, errlen) != KUBE_OK)
        return KUBE_ECONFIG;
    for (int i = 0; i < SCHED_FEATURE_COUNT; i++)
        atomic_store(&enabled[i], values[i]);
    return KUBE_OK;
}
