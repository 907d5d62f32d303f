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

/* The in-tree registry, its factories closing over nothing. Never NULL. */
const fw_registry *plugin_registry_in_tree(void);

/* StickyVM's hand-off to the scheduler's pin controller
 * (scheduler/pins/controller.h): enqueue hands the controller a
 * VirtualMachine ns/name whose pin the plugin could not write, and the
 * controller writes it until it lands or is no longer needed. NULL
 * enqueue: no controller. Thread-safe; strings borrowed for the call. */
typedef struct plugin_pin_handoff {
    void (*enqueue)(void *ud, const char *ns, const char *name);
    void *ud;
} plugin_pin_handoff;

/* What in-tree plugins' factories close over (kube-scheduler's
 * PluginFactory closures, app.WithPlugin): the dependencies a plugin gets
 * besides the framework handle, given by whoever builds the scheduler. */
typedef struct plugin_factory_args {
    plugin_pin_handoff pins; /* StickyVM's */
} plugin_factory_args;

#define PLUGIN_REGISTRY_MAX 64

/* A registry whose factories close over a plugin_factory_args. reg.deps
 * points into deps: use it in place, never copy it. */
typedef struct plugin_registry {
    fw_registry reg;
    void *deps[PLUGIN_REGISTRY_MAX];
} plugin_registry;

/* Fills *out with base's plugins, each in-tree factory closing over its
 * part of fa (StickyVM, by name: &fa->pins). base and fa are borrowed
 * and must outlive out and every framework built from it. KUBE_OK, or
 * KUBE_ERANGE when base holds more than PLUGIN_REGISTRY_MAX plugins. */
int plugin_registry_with_args(const fw_registry *base, const plugin_factory_args *fa,
                              plugin_registry *out);

#endif
