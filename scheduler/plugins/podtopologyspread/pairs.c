/*
 * scheduler/plugins/podtopologyspread/pairs.c - the topology pair table
 * (open addressing, linear probing, load factor at most 1/2).
 */
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"
#include "kube/util/hash.h"
#include "plugins/podtopologyspread/pairs.h"

#define MIN_CAP 16

/* FNV-1a over key, a separator and value. */
static uint64_t pair_hash(const char *key, const char *value)
{
    uint64_t h = kube_fnv1a_str(KUBE_FNV1A_INIT, key);

    return kube_fnv1a_str(kube_fnv1a_byte(h, 0xffu), value);
}

static int same_pair(const plugin_tp_entry *e, uint64_t h, const char *key, const char *value)
{
    return e->hash == h && (e->key == key || strcmp(e->key, key) == 0) &&
           (e->value == value || strcmp(e->value, value) == 0);
}

static size_t cap_for(size_t expected)
{
    size_t cap = MIN_CAP;
    while (cap < expected * 2)
        cap *= 2;
    return cap;
}

int plugin_tp_init(plugin_tp_table *t, size_t expected)
{
    *t = (plugin_tp_table)PLUGIN_TP_TABLE_INIT;
    if (expected == 0)
        return KUBE_OK;
    t->cap = cap_for(expected);
    t->slots = calloc(t->cap, sizeof(*t->slots));
    if (!t->slots) {
        t->cap = 0;
        return KUBE_ENOMEM;
    }
    return KUBE_OK;
}

static plugin_tp_entry *find_slot(plugin_tp_entry *slots, size_t cap, uint64_t h, const char *key,
                                  const char *value)
{
    size_t mask = cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask)
        if (!slots[i].key || same_pair(&slots[i], h, key, value))
            return &slots[i];
}

const plugin_tp_entry *plugin_tp_get(const plugin_tp_table *t, const char *key, const char *value)
{
    if (t->len == 0)
        return NULL;
    const plugin_tp_entry *e = find_slot(t->slots, t->cap, pair_hash(key, value), key, value);
    return e->key ? e : NULL;
}

int64_t plugin_tp_count(const plugin_tp_table *t, const char *key, const char *value)
{
    const plugin_tp_entry *e = plugin_tp_get(t, key, value);
    return e ? e->count : 0;
}

static int grow(plugin_tp_table *t)
{
    size_t cap = t->cap ? t->cap * 2 : MIN_CAP;
    plugin_tp_entry *slots = calloc(cap, sizeof(*slots));
    if (!slots)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < t->cap; i++) {
        const plugin_tp_entry *e = &t->slots[i];
        if (e->key)
            *find_slot(slots, cap, e->hash, e->key, e->value) = *e;
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return KUBE_OK;
}

static void set_count(plugin_tp_table *t, plugin_tp_entry *e, int64_t count)
{
    t->nonzero += (count != 0) - (e->count != 0);
    e->count = count;
}

int plugin_tp_add(plugin_tp_table *t, const char *key, const char *value, int64_t delta,
                  int *created, plugin_tp_entry **entry)
{
    uint64_t h = pair_hash(key, value);
    plugin_tp_entry *e = t->cap ? find_slot(t->slots, t->cap, h, key, value) : NULL;
    int insert = !e || !e->key;

    if (insert && (t->len + 1) * 2 > t->cap) {
        if (grow(t) != KUBE_OK)
            return KUBE_ENOMEM;
        e = find_slot(t->slots, t->cap, h, key, value);
    }
    if (insert) {
        *e = (plugin_tp_entry){key, value, h, 0};
        t->len++;
    }
    if (created)
        *created = insert;
    set_count(t, e, e->count + delta);
    if (entry)
        *entry = e;
    return KUBE_OK;
}

int plugin_tp_clone(plugin_tp_table *dst, const plugin_tp_table *src)
{
    *dst = *src;
    if (src->cap == 0)
        return KUBE_OK;
    dst->slots = malloc(src->cap * sizeof(*src->slots));
    if (!dst->slots) {
        *dst = (plugin_tp_table)PLUGIN_TP_TABLE_INIT;
        return KUBE_ENOMEM;
    }
    memcpy(dst->slots, src->slots, src->cap * sizeof(*src->slots));
    return KUBE_OK;
}

void plugin_tp_free(plugin_tp_table *t)
{
    free(t->slots);
    *t = (plugin_tp_table)PLUGIN_TP_TABLE_INIT;
}
