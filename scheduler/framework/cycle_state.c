/*
 * scheduler/framework/cycle_state.c - CycleState: a small array of keyed
 * values (a cycle holds a dozen at most, so a linear scan beats hashing).
 */
#include "framework/cycle_state.h"
#include "framework/cycle_state_testing.h"

#include <stdlib.h>
#include <string.h>

#include <limits.h>
#include <stdint.h>

#include "kube/util/array.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"

typedef struct entry {
    char *key;
    const char *origin; /* the pointer the key was written with (a lookup hint) */
    void *data;
    const fw_state_ops *ops;
} entry;

typedef struct name_set {
    const char **names;
    size_t n, cap;
} name_set;

/* Slots of the origin hint table (a power of two). */
#define HINT_SLOTS 32

struct fw_cycle_state {
    entry *entries;
    size_t n, cap;
    /* hint[hint_slot(origin)]: 1 + the index of an entry written with that
     * origin (0: none), so fw_cycle_state_read_static finds a plugin's
     * entry without scanning; kept by write, delete and clone. */
    unsigned char hint[HINT_SLOTS];
    name_set skip_filter;
    name_set skip_score;
    int record_plugin_metrics;
    /* The skip-filter set as a bitmask over one framework's Filter plugins,
     * computed once per cycle after PreFilter (fw__cycle_state_set_filter_mask)
     * so per-node Filter runs test a bit instead of comparing names. Valid
     * only for mask_owner; any change to the set drops it. */
    const void *mask_owner;
    uint64_t filter_mask;
};

fw_cycle_state *fw_cycle_state_new(void)
{
    return calloc(1, sizeof(fw_cycle_state));
}

static void entry_release(entry *e)
{
    if (e->ops && e->ops->free)
        e->ops->free(e->data);
    free(e->key);
}

void fw_cycle_state_free(fw_cycle_state *cs)
{
    if (!cs)
        return;
    for (size_t i = 0; i < cs->n; i++)
        entry_release(&cs->entries[i]);
    free(cs->entries);
    free(cs->skip_filter.names);
    free(cs->skip_score.names);
    free(cs);
}

/* Plugins pass the same string literal on every call, so an entry written
 * with the very pointer is found with one comparison; many keys share long
 * prefixes ("PreFilterNode..."), which makes a plain strcmp scan the cost
 * of every Filter/Score read. The pointer is only a hint: a match is
 * confirmed by content, and a miss falls back to the full scan. */
static entry *find(const fw_cycle_state *cs, const char *key)
{
    for (size_t i = 0; i < cs->n; i++)
        if (cs->entries[i].origin == key && strcmp(cs->entries[i].key, key) == 0)
            return &cs->entries[i];
    for (size_t i = 0; i < cs->n; i++)
        if (strcmp(cs->entries[i].key, key) == 0)
            return &cs->entries[i];
    return NULL;
}

/* The hint slot of a key address. */
static size_t hint_slot(const char *origin)
{
    return (size_t)(((uintptr_t)origin * UINT64_C(0x9E3779B97F4A7C15)) >> 40) % HINT_SLOTS;
}

/* Points origin's slot at entry i (entries past 254 get no hint). */
static void hint_set(fw_cycle_state *cs, size_t i)
{
    if (i < UCHAR_MAX)
        cs->hint[hint_slot(cs->entries[i].origin)] = (unsigned char)(i + 1);
}

static int reserve_one(fw_cycle_state *cs)
{
    return KUBE_ARRAY_RESERVE(cs->entries, cs->cap, cs->n + 1);
}

int fw_cycle_state_write(fw_cycle_state *cs, const char *key, void *data, const fw_state_ops *ops)
{
    entry *e = find(cs, key);
    if (e) {
        if (e->ops && e->ops->free && e->data != data)
            e->ops->free(e->data);
        e->data = data;
        e->ops = ops;
        return KUBE_OK;
    }
    char *k = kube_strdup(key);
    if (!k || reserve_one(cs) != KUBE_OK) {
        free(k);
        if (ops && ops->free)
            ops->free(data);
        return KUBE_ENOMEM;
    }
    cs->entries[cs->n] = (entry){k, key, data, ops};
    hint_set(cs, cs->n++);
    return KUBE_OK;
}

void *fw_cycle_state_read(const fw_cycle_state *cs, const char *key)
{
    entry *e = find(cs, key);
    return e ? e->data : NULL;
}

/* An entry's origin equal to a static key means it was written with that
 * address, whose contents never change: the key matches without strcmp. */
void *fw_cycle_state_read_static(const fw_cycle_state *cs, const char *key)
{
    unsigned h = cs->hint[hint_slot(key)];
    if (h && h <= cs->n && cs->entries[h - 1].origin == key)
        return cs->entries[h - 1].data;
    for (size_t i = 0; i < cs->n; i++)
        if (cs->entries[i].origin == key)
            return cs->entries[i].data;
    return fw_cycle_state_read(cs, key);
}

void fw_cycle_state_delete(fw_cycle_state *cs, const char *key)
{
    entry *e = find(cs, key);
    if (!e)
        return;
    entry_release(e);
    *e = cs->entries[--cs->n];
    memset(cs->hint, 0, sizeof(cs->hint));
    for (size_t i = 0; i < cs->n; i++)
        hint_set(cs, i);
}

static int set_copy(name_set *dst, const name_set *src)
{
    if (!src->n)
        return KUBE_OK;
    dst->names = malloc(src->n * sizeof(*dst->names));
    if (!dst->names)
        return KUBE_ENOMEM;
    memcpy(dst->names, src->names, src->n * sizeof(*dst->names));
    dst->n = dst->cap = src->n;
    return KUBE_OK;
}

static int clone_entry(const entry *src, entry *dst)
{
    dst->ops = src->ops;
    dst->origin = src->origin;
    dst->key = kube_strdup(src->key);
    if (!dst->key)
        return KUBE_ENOMEM;
    if (src->ops && src->ops->clone && src->data) {
        dst->data = src->ops->clone(src->data);
        if (!dst->data) {
            free(dst->key);
            return KUBE_ENOMEM;
        }
    } else {
        dst->data = src->data;
    }
    return KUBE_OK;
}

fw_cycle_state *fw_cycle_state_clone(const fw_cycle_state *cs)
{
    fw_cycle_state *c = fw_cycle_state_new();
    if (!c)
        return NULL;
    c->record_plugin_metrics = cs->record_plugin_metrics;
    memcpy(c->hint, cs->hint, sizeof(c->hint));
    c->mask_owner = cs->mask_owner;
    c->filter_mask = cs->filter_mask;
    if (set_copy(&c->skip_filter, &cs->skip_filter) != KUBE_OK ||
        set_copy(&c->skip_score, &cs->skip_score) != KUBE_OK)
        goto fail;
    if (cs->n) {
        c->entries = malloc(cs->n * sizeof(*c->entries));
        if (!c->entries)
            goto fail;
        c->cap = cs->n;
        for (size_t i = 0; i < cs->n; i++) {
            if (clone_entry(&cs->entries[i], &c->entries[i]) != KUBE_OK)
                goto fail;
            c->n++;
        }
    }
    return c;
fail:
    fw_cycle_state_free(c);
    return NULL;
}

void fw_cycle_state_set_record_plugin_metrics(fw_cycle_state *cs, int on)
{
    cs->record_plugin_metrics = on ? 1 : 0;
}

int fw_cycle_state_record_plugin_metrics(const fw_cycle_state *cs)
{
    return cs->record_plugin_metrics;
}

static int set_has(const name_set *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->names[i] == name || strcmp(s->names[i], name) == 0)
            return 1;
    return 0;
}

static int set_add(name_set *s, const char *name)
{
    if (set_has(s, name))
        return KUBE_OK;
    if (KUBE_ARRAY_RESERVE(s->names, s->cap, s->n + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    s->names[s->n++] = name;
    return KUBE_OK;
}

int fw_cycle_state_skip_filter_add(fw_cycle_state *cs, const char *plugin)
{
    cs->mask_owner = NULL;
    return set_add(&cs->skip_filter, plugin);
}

int fw_cycle_state_skip_filter_has(const fw_cycle_state *cs, const char *plugin)
{
    return set_has(&cs->skip_filter, plugin);
}

int fw_cycle_state_skip_score_add(fw_cycle_state *cs, const char *plugin)
{
    return set_add(&cs->skip_score, plugin);
}

int fw_cycle_state_skip_score_has(const fw_cycle_state *cs, const char *plugin)
{
    return set_has(&cs->skip_score, plugin);
}

void fw_cycle_state_skip_filter_clear(fw_cycle_state *cs)
{
    cs->mask_owner = NULL;
    cs->skip_filter.n = 0;
}

void fw__cycle_state_set_filter_mask(fw_cycle_state *cs, const void *owner, uint64_t mask)
{
    cs->mask_owner = owner;
    cs->filter_mask = mask;
}

int fw__cycle_state_filter_mask(const fw_cycle_state *cs, const void *owner, uint64_t *mask)
{
    if (!owner || cs->mask_owner != owner)
        return 0;
    *mask = cs->filter_mask;
    return 1;
}

void fw_cycle_state_skip_score_clear(fw_cycle_state *cs)
{
    cs->skip_score.n = 0;
}

void fw_cycle_state_skip_clear(fw_cycle_state *cs)
{
    cs->mask_owner = NULL;
    cs->skip_filter.n = 0;
    cs->skip_score.n = 0;
}

void fw_shared_init(fw_shared *s, void (*release)(void *self))
{
    atomic_init(&s->refs, 1);
    s->release = release;
}

/* fw_shared_ops.clone: another reference. */
static void *shared_ref(const void *data)
{
    fw_shared *s = (fw_shared *)data;
    atomic_fetch_add(&s->refs, 1);
    return s;
}

void fw_shared_unref(void *data)
{
    fw_shared *s = data;
    if (s && atomic_fetch_sub(&s->refs, 1) == 1)
        s->release(s);
}

const fw_state_ops fw_shared_ops = {shared_ref, fw_shared_unref};

/* A flat value's size, kept just before the bytes handed out. */
typedef union flat_header {
    size_t size;
    max_align_t align;
} flat_header;

void *fw_flat_state_alloc(size_t size)
{
    flat_header *h = malloc(sizeof(*h) + size);
    if (!h)
        return NULL;
    h->size = size;
    return h + 1;
}

/* fw_flat_state_ops.clone: the same bytes in a new block. */
static void *flat_clone(const void *data)
{
    const flat_header *h = (const flat_header *)data - 1;
    void *c = fw_flat_state_alloc(h->size);
    if (c)
        memcpy(c, data, h->size);
    return c;
}

/* fw_flat_state_ops.free. */
static void flat_free(void *data)
{
    if (data)
        free((flat_header *)data - 1);
}

const fw_state_ops fw_flat_state_ops = {flat_clone, flat_free};
