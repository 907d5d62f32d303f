/*
 * scheduler/plugins/plugins.h - the descriptors of every plugin built into
 * stickyvm-scheduler. Owned by the plugins engineer(s).
 *
 * To add a plugin NAME (file scheduler/plugins/name.c):
 *   1. in name.c define `const fw_plugin_desc plugin_name = { .name = "Name", ... };`
 *      (the only non-static symbol of the file besides helpers it exports);
 *   2. declare it below: `extern const fw_plugin_desc plugin_name;`
 *   3. list `&plugin_name,` in fw_in_tree_plugins[] in registry_list.c.
 * The framework's registry (scheduler/framework/registry.c) reads only
 * fw_in_tree_plugins; configuration naming a plugin that is not listed is
 * rejected, and kube-scheduler default plugins not listed are left out of the
 * default profile with a warning.
 */
#ifndef SCHED_PLUGINS_H
#define SCHED_PLUGINS_H

#include "framework/framework.h"

/* Descriptors (one line per plugin, kube-scheduler's name in the comment). */
/* (none yet) */

/* Every built-in plugin, NULL-terminated (registry_list.c). */
extern const fw_plugin_desc *const fw_in_tree_plugins[];

#endif
