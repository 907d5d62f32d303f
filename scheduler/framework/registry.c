/*
 * scheduler/framework/registry.c - looking a plugin up by name in a
 * registry (the type only: the in-tree registry is scheduler/plugins/).
 */
#include <string.h>

#include "framework/framework.h"

const fw_plugin_desc *fw_registry_find(const fw_registry *r, const char *name)
{
    for (size_t i = 0; r && i < r->n; i++)
        if (strcmp(r->plugins[i]->name, name) == 0)
            return r->plugins[i];
    return NULL;
}

void *fw_registry_deps(const fw_registry *r, const fw_plugin_desc *d)
{
    for (size_t i = 0; r && r->deps && i < r->n; i++)
        if (r->plugins[i] == d)
            return r->deps[i];
    return NULL;
}
