/*
 * scheduler/plugins/registry.h - the in-tree registry: every plugin built
 * into stickyvm-scheduler, by name (kube-scheduler's
 * framework/plugins/registry.go NewInTreeRegistry). The framework never
 * sees this list; the scheduler hands it to the framework as a fw_registry.
 *
 * To add a plugin NAME (file scheduler/plugins/NAME.c, or a folder
 * scheduler/plugins/NAME/ when it spans several files):
 *   1. define `const fw_plugin_desc plugin_name = { .name = "Name", ... };`
 *      (its only non-static symbol besides helpers it exports);
 *   2. declare it in plugins/plugins.h;
 *   3. list `&plugin_name,` in registry.c.
 * Configuration naming a plugin that is not listed is rejected, and
 * kube-scheduler default plugins not listed are left out of the default
 * profile with a warning (fw_config_resolve()).
 *
 * Memory: static storage.
 */
#ifndef SCHED_PLUGINS_REGISTRY_H
#define SCHED_PLUGINS_REGISTRY_H

#include "framework/framework.h"

/* The in-tree registry. Never NULL. */
const fw_registry *plugin_registry_in_tree(void);

#endif
