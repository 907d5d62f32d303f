/*
 * scheduler/plugins/registry_list.c - the list of built-in plugins the
 * framework registry serves (see plugins.h for how to add one).
 */
#include "plugins/plugins.h"

const fw_plugin_desc *const fw_in_tree_plugins[] = {
    /* add plugins above this line */
    NULL,
};
