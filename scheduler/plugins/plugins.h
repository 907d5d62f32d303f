/*
 * scheduler/plugins/plugins.h - the descriptors of every plugin built into
 * stickyvm-scheduler. Owned by the plugins engineer(s).
 *
 * The in-tree registry that lists them is plugins/registry.h (which says
 * how to add one).
 */
#ifndef SCHED_PLUGINS_H
#define SCHED_PLUGINS_H

#include "framework/framework.h"

/* Descriptors (one line per plugin, kube-scheduler's name in the comment). */
extern const fw_plugin_desc plugin_priority_sort;      /* PrioritySort */
extern const fw_plugin_desc plugin_scheduling_gates;   /* SchedulingGates */
extern const fw_plugin_desc plugin_node_unschedulable; /* NodeUnschedulable */
extern const fw_plugin_desc plugin_node_name;          /* NodeName */
extern const fw_plugin_desc plugin_taint_toleration;   /* TaintToleration */
extern const fw_plugin_desc plugin_node_affinity;      /* NodeAffinity */
extern const fw_plugin_desc plugin_node_ports;         /* NodePorts */
extern const fw_plugin_desc plugin_node_resources_fit; /* NodeResourcesFit */
extern const fw_plugin_desc plugin_node_resources_balanced_allocation;
/* NodeResourcesBalancedAllocation */
extern const fw_plugin_desc plugin_image_locality;      /* ImageLocality */
extern const fw_plugin_desc plugin_default_binder;      /* DefaultBinder */
extern const fw_plugin_desc plugin_stickyvm;            /* StickyVM (stickyvm's own) */
extern const fw_plugin_desc plugin_pod_topology_spread; /* PodTopologySpread */
extern const fw_plugin_desc plugin_inter_pod_affinity;  /* InterPodAffinity */
extern const fw_plugin_desc plugin_volume_binding;      /* VolumeBinding */
extern const fw_plugin_desc plugin_volume_restrictions; /* VolumeRestrictions */
extern const fw_plugin_desc plugin_volume_zone;         /* VolumeZone */
extern const fw_plugin_desc plugin_node_volume_limits;  /* NodeVolumeLimits */
extern const fw_plugin_desc plugin_default_preemption;  /* DefaultPreemption */
extern const fw_plugin_desc plugin_ebs_limits;          /* EBSLimits */
extern const fw_plugin_desc plugin_gce_pd_limits;       /* GCEPDLimits */
extern const fw_plugin_desc plugin_azure_disk_limits;   /* AzureDiskLimits */

/* The admission predicates (kube-scheduler's AdmissionCheck, which
 * kubelet shares): the checks of a plugin's Filter that need no cycle
 * state, each owned by its plugin and used by its Filter. The pre-check
 * for a new or changed node (scheduler/eventhandlers.c) asks them. All
 * borrow their arguments and return 1 when the pod fits. */

/* noderesources.Fits: ni has room for pod's request (no resource ignored). */
int plugin_node_resources_fits(const fw_pod_info *pod, const fw_node_info *ni);
/* nodeaffinity.GetRequiredNodeAffinity(pod).Match(node): the pod's
 * nodeSelector and required node affinity match node. */
int plugin_node_affinity_required_matches(const struct kube_pod *pod, const struct kube_node *node);
/* NodeUnschedulable's Filter on a node: node is not cordoned, or pod
 * tolerates node.kubernetes.io/unschedulable:NoSchedule. */
int plugin_node_unschedulable_fits(const struct kube_pod *pod, const struct kube_node *node);
/* nodename.Fits: pod names no node or node. */
int plugin_node_name_fits(const struct kube_pod *pod, const struct kube_node *node);
/* nodeports.Fits: none of pod's host ports is in use on ni. */
int plugin_node_ports_fits(const struct kube_pod *pod, const fw_node_info *ni);

/* One of the three in-tree volume limits plugins above (desc) over
 * explicit volume listers l (plugins/volumebinding/volume_binding.h; a reference is
 * taken), for callers without an informer factory (unit tests). *self is
 * freed with desc->destroy. KUBE_OK; KUBE_EINVAL when desc is not one of
 * them, KUBE_ENOMEM, KUBE_EIO (no random bytes): *self NULL. */
struct plugin_vol_listers;
int plugin_non_csi_limits_new(const fw_plugin_desc *desc, struct plugin_vol_listers *l,
                              void **self);

#endif
