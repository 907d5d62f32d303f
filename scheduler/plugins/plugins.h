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

/* One of the three in-tree volume limits plugins above (desc) over
 * explicit volume listers l (plugins/volume_binding.h; a reference is
 * taken), for callers without an informer factory (unit tests). *self is
 * freed with desc->destroy. KUBE_OK; KUBE_EINVAL when desc is not one of
 * them, KUBE_ENOMEM, KUBE_EIO (no random bytes): *self NULL. */
struct plugin_vol_listers;
int plugin_non_csi_limits_new(const fw_plugin_desc *desc, struct plugin_vol_listers *l,
                              void **self);

#endif
