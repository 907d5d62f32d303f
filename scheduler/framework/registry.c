/*
 * scheduler/framework/registry.c - the registry of built-in plugins (the
 * list itself lives in scheduler/plugins/registry_list.c) and the names of
 * kube-scheduler v1.28's in-tree plugins.
 */
#include <pthread.h>
#include <string.h>

#include "framework/framework.h"
#include "plugins/plugins.h"

static size_t count_in_tree(void)
{
    size_t n = 0;
    while (fw_in_tree_plugins[n])
        n++;
    return n;
}

static fw_registry default_registry;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void init_default(void)
{
    default_registry.plugins = fw_in_tree_plugins;
    default_registry.n = count_in_tree();
}

const fw_registry *fw_registry_default(void)
{
    pthread_once(&default_once, init_default);
    return &default_registry;
}

const fw_plugin_desc *fw_registry_find(const fw_registry *r, const char *name)
{
    for (size_t i = 0; r && i < r->n; i++)
        if (strcmp(r->plugins[i]->name, name) == 0)
            return r->plugins[i];
    return NULL;
}

/* pkg/scheduler/framework/plugins/names (v1.28) plus the in-tree plugins
 * registered by NewInTreeRegistry. */
static const char *const upstream_names[] = {
    "PrioritySort",
    "DefaultBinder",
    "DefaultPreemption",
    "DynamicResources",
    "ImageLocality",
    "InterPodAffinity",
    "NodeAffinity",
    "NodeName",
    "NodePorts",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",
    "NodeUnschedulable",
    "NodeVolumeLimits",
    "AzureDiskLimits",
    "EBSLimits",
    "GCEPDLimits",
    "PodTopologySpread",
    "SchedulingGates",
    "TaintToleration",
    "VolumeBinding",
    "VolumeRestrictions",
    "VolumeZone",
};

int fw_upstream_plugin_known(const char *name)
{
    for (size_t i = 0; i < sizeof(upstream_names) / sizeof(upstream_names[0]); i++)
        if (strcmp(upstream_names[i], name) == 0)
            return 1;
    return 0;
}
