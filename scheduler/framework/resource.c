/*
 * scheduler/framework/resource.c - framework.Resource arithmetic (scalar
 * names interned with kube_intern_name) and the host-port set.
 */
#include <stdlib.h>
#include <string.h>

#include "framework/types.h"
#include "kube/codec/intern.h"
#include "kube/util/array.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/types/node.h"

static fw_scalar *scalar_find(const fw_resource *r, const char *name)
{
    for (uint32_t i = 0; i < r->n_scalars; i++)
        if (r->scalars[i].name == name)
            return &r->scalars[i];
    for (uint32_t i = 0; i < r->n_scalars; i++)
        if (strcmp(r->scalars[i].name, name) == 0)
            return &r->scalars[i];
    return NULL;
}

/* The scalar slot for name, created (value 0) when absent. */
static fw_scalar *scalar_slot(fw_resource *r, const char *name)
{
    fw_scalar *s = scalar_find(r, name);
    if (s)
        return s;
    const char *in = kube_intern_name(name);
    if (!in)
        return NULL;
    size_t cap = r->cap_scalars; /* kept as uint32_t: NodeInfo stays small */
    if (KUBE_ARRAY_RESERVE(r->scalars, cap, (size_t)r->n_scalars + 1) != KUBE_OK ||
        cap > UINT32_MAX)
        return NULL;
    r->cap_scalars = (uint32_t)cap;
    s = &r->scalars[r->n_scalars++];
    s->name = in;
    s->value = 0;
    return s;
}

int64_t fw_resource_scalar(const fw_resource *r, const char *name)
{
    fw_scalar *s = scalar_find(r, name);
    return s ? s->value : 0;
}

int fw_resource_set_scalar(fw_resource *r, const char *name, int64_t value)
{
    fw_scalar *s = scalar_slot(r, name);
    if (!s)
        return KUBE_ENOMEM;
    s->value = value;
    return KUBE_OK;
}

int fw_resource_add_scalar(fw_resource *r, const char *name, int64_t delta)
{
    fw_scalar *s = scalar_slot(r, name);
    if (!s)
        return KUBE_ENOMEM;
    s->value += delta;
    return KUBE_OK;
}

int fw_resource_from_kube(fw_resource *r, const struct kube_resources *kr)
{
    fw_resource_reset(r);
    r->n_scalars = 0;
    r->milli_cpu = kr->milli_cpu;
    r->memory = kr->memory;
    r->ephemeral_storage = kr->ephemeral_storage;
    r->allowed_pod_number = kr->allowed_pods;
    if (kr->n_scalars > r->cap_scalars && kr->n_scalars <= UINT32_MAX) {
        /* exactly the node's scalars: one such array per node */
        fw_scalar *n = realloc(r->scalars, kr->n_scalars * sizeof(*n));
        if (!n)
            return KUBE_ENOMEM;
        r->scalars = n;
        r->cap_scalars = (uint32_t)kr->n_scalars;
    }
    for (size_t i = 0; i < kr->n_scalars; i++)
        if (fw_resource_set_scalar(r, kr->scalars[i].name, kr->scalars[i].value) != KUBE_OK)
            return KUBE_ENOMEM;
    return KUBE_OK;
}

int fw_resource_copy(fw_resource *dst, const fw_resource *src)
{
    if (dst == src)
        return KUBE_OK;
    if (src->n_scalars > dst->cap_scalars) { /* a copy: exactly the size, not doubled */
        fw_scalar *n = realloc(dst->scalars, src->n_scalars * sizeof(*n));
        if (!n)
            return KUBE_ENOMEM;
        dst->scalars = n;
        dst->cap_scalars = src->n_scalars;
    }
    dst->milli_cpu = src->milli_cpu;
    dst->memory = src->memory;
    dst->ephemeral_storage = src->ephemeral_storage;
    dst->allowed_pod_number = src->allowed_pod_number;
    if (src->n_scalars)
        memcpy(dst->scalars, src->scalars, src->n_scalars * sizeof(fw_scalar));
    dst->n_scalars = src->n_scalars;
    return KUBE_OK;
}

void fw_resource_reset(fw_resource *r)
{
    r->milli_cpu = r->memory = r->ephemeral_storage = r->allowed_pod_number = 0;
    for (uint32_t i = 0; i < r->n_scalars; i++)
        r->scalars[i].value = 0;
}

void fw_resource_free(fw_resource *r)
{
    free(r->scalars);
    memset(r, 0, sizeof(*r));
}

/* ------------------------------------------------------------------ */
/* Host ports                                                          */
/* ------------------------------------------------------------------ */

static const char *sanitize_ip(const char *ip)
{
    return ip && *ip ? ip : "0.0.0.0";
}

static const char *sanitize_proto(const char *p)
{
    return p && *p ? p : "TCP";
}

static long port_find(const fw_host_ports *hp, const char *ip, const char *proto, int32_t port)
{
    for (size_t i = 0; i < hp->n; i++) {
        const fw_host_port *e = &hp->items[i];
        if (e->port == port && strcmp(e->protocol, proto) == 0 && strcmp(e->ip, ip) == 0)
            return (long)i;
    }
    return -1;
}

int fw_host_ports_add(fw_host_ports *hp, const char *ip, const char *protocol, int32_t port)
{
    if (port <= 0)
        return KUBE_OK;
    ip = sanitize_ip(ip);
    protocol = sanitize_proto(protocol);
    if (port_find(hp, ip, protocol, port) >= 0)
        return KUBE_OK;
    if (KUBE_ARRAY_RESERVE(hp->items, hp->cap, hp->n + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    hp->items[hp->n++] = (fw_host_port){ip, protocol, port};
    return KUBE_OK;
}

void fw_host_ports_remove(fw_host_ports *hp, const char *ip, const char *protocol, int32_t port)
{
    if (port <= 0)
        return;
    long i = port_find(hp, sanitize_ip(ip), sanitize_proto(protocol), port);
    if (i >= 0)
        hp->items[i] = hp->items[--hp->n];
}

int fw_host_ports_conflict(const fw_host_ports *hp, const char *ip, const char *protocol,
                           int32_t port)
{
    if (port <= 0)
        return 0;
    ip = sanitize_ip(ip);
    protocol = sanitize_proto(protocol);
    int any = strcmp(ip, "0.0.0.0") == 0;
    for (size_t i = 0; i < hp->n; i++) {
        const fw_host_port *e = &hp->items[i];
        if (e->port != port || strcmp(e->protocol, protocol) != 0)
            continue;
        if (any || strcmp(e->ip, "0.0.0.0") == 0 || strcmp(e->ip, ip) == 0)
            return 1;
    }
    return 0;
}

int fw_host_ports_copy(fw_host_ports *dst, const fw_host_ports *src)
{
    if (src->n > dst->cap) { /* a copy: exactly the size, not doubled */
        fw_host_port *n = realloc(dst->items, src->n * sizeof(*n));
        if (!n)
            return KUBE_ENOMEM;
        dst->items = n;
        dst->cap = src->n;
    }
    if (src->n)
        memcpy(dst->items, src->items, src->n * sizeof(*dst->items));
    dst->n = src->n;
    return KUBE_OK;
}

void fw_host_ports_free(fw_host_ports *hp)
{
    free(hp->items);
    memset(hp, 0, sizeof(*hp));
}
