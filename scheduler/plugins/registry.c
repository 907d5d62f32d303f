/*
 * scheduler/plugins/registry.c - the in-tree registry (registry.h).
 */
#include "plugins/registry.h"

#include "plugins/plugins.h"

static const fw_plugin_desc *const in_tree[] = {
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
};

static const fw_registry in_tree_registry = {in_tree, sizeof(in_tree) / sizeof(in_tree[0])};

const fw_registry *plugin_registry_in_tree(void)
{
    return &in_tree_registry;
}
