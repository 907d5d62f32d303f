/*
 * scheduler/plugins/registry_list.c - the list of built-in plugins the
 * framework registry serves (see plugins.h for how to add one).
 */
#include "plugins/plugins.h"

const fw_plugin_desc *const fw_in_tree_plugins[] = {
    &plugin_priority_sort,
    &plugin_scheduling_gates,
    &plugin_node_unschedulable,
    &plugin_node_name,
    &plugin_taint_toleration,
    &plugin_node_affinity,
    &plugin_node_ports,
    &plugin_node_resources_fit,
    &plugin_node_resources_balanced_allocation,
    &plugin_image_locality,
    &plugin_default_binder,
    &plugin_stickyvm,
    &plugin_pod_topology_spread,
    &plugin_inter_pod_affinity,
    &plugin_volume_binding,
    &plugin_volume_restrictions,
    &plugin_volume_zone,
    &plugin_node_volume_limits,
    &plugin_default_preemption,
    &plugin_ebs_limits,
    &plugin_gce_pd_limits,
    &plugin_azure_disk_limits,
    /* add plugins above this line */
    NULL,
};
