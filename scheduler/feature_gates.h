/*
 * scheduler/feature_gates.h - the feature gates stickyvm-scheduler models
 * (kube-scheduler's --feature-gates, component-base's featuregate): the
 * Kubernetes v1.28 gates its plugins consult, with v1.28's defaults.
 *
 * Gates the plugins honour both ways: PodSchedulingReadiness
 * (SchedulingGates' PreEnqueue), MinDomainsInPodTopologySpread,
 * NodeInclusionPolicyInPodTopologySpread and
 * MatchLabelKeysInPodTopologySpread (PodTopologySpread's constraints),
 * ReadWriteOncePod (VolumeRestrictions) and PodDisruptionConditions
 * (DefaultPreemption's DisruptionTarget condition on victims). The alpha
 * ones (DynamicResourceAllocation, InPlacePodVerticalScaling,
 * SidecarContainers, VolumeCapacityPriority) are accepted at their v1.28
 * default, false, only (stickyvm lacks the other behaviour): setting them
 * otherwise is an error saying so.
 * AllAlpha and AllBeta set every ALPHA / BETA gate not named explicitly.
 *
 * Syntax: "Key=bool,Key=bool" (strconv.ParseBool values). Errors read as
 * component-base's: "unrecognized feature gate: X" (followed here by the
 * list of known gates), "invalid value of X=v, err: ...", "malformed
 * pair, expect string=bool".
 *
 * Threads: sched_feature_enabled() is safe from any thread;
 * sched_features_apply() and sched_features_reset() are for start-up (and
 * tests). Memory: static.
 */
#ifndef SCHED_FEATURES_H
#define SCHED_FEATURES_H

#include <stddef.h>

typedef enum sched_feature {
    SCHED_FEATURE_DYNAMIC_RESOURCE_ALLOCATION,
    SCHED_FEATURE_IN_PLACE_POD_VERTICAL_SCALING,
    SCHED_FEATURE_MATCH_LABEL_KEYS_IN_POD_TOPOLOGY_SPREAD,
    SCHED_FEATURE_MIN_DOMAINS_IN_POD_TOPOLOGY_SPREAD,
    SCHED_FEATURE_NODE_INCLUSION_POLICY_IN_POD_TOPOLOGY_SPREAD,
    SCHED_FEATURE_POD_DISRUPTION_CONDITIONS,
    SCHED_FEATURE_POD_SCHEDULING_READINESS,
    SCHED_FEATURE_READ_WRITE_ONCE_POD,
    SCHED_FEATURE_SIDECAR_CONTAINERS,
    SCHED_FEATURE_VOLUME_CAPACITY_PRIORITY,
    SCHED_FEATURE_COUNT
} sched_feature;

/* 1 when gate f is on. */
int sched_feature_enabled(sched_feature f);
/* Checks spec (NULL or "": nothing) without applying it. KUBE_OK or
 * KUBE_ECONFIG with the message in err. */
int sched_features_check(const char *spec, char *err, size_t errlen);
/* Every gate to its default, then spec over them. Errors as
 * sched_features_check() (nothing changed then). */
int sched_features_apply(const char *spec, char *err, size_t errlen);

#endif
