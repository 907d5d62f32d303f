/*
 * kube/util/strmap.c - the open-addressing string map (strmap.h).
 */
#include "kube/util/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/hash.h"

static char tomb_marker;
#define TOMB (&tomb_marker)

static size_t hash_str(const char *s)
{
    return (size_t)kube_fnv1a_str(KUBE_FNV1A_INIT, s);
}

static kube_strmap_slot *find_slot(const kube_strmap *m, const char *key, size_t h)
{
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        kube_strmap_slot *s = &m->slots[i];
        if (!s->key)
            return NULL;
        if (s->key != TOMB && s->hash == h && strcmp(s->key, key) == 0)
            return s;
    }
}

static void insert_fresh(kube_strmap_slot *slots, size_t cap, char *key, void *value, size_t h)
{
    size_t mask = cap - 1;
    size_t i = h & mask;
    while (slots[i].key && slots[i].key != TOMB)
        i = (i + 1) & mask;
    slots[i].key = key;
    slots[i].value = value;
    slots[i].hash = h;
}

static int grow(kube_strmap *m)
{
    /* Rehash to a load of at most 1/2 (tombstones are dropped). */
    size_t cap = 8;
    while ((m->len + 1) * 2 > cap)
        cap *= 2;
    kube_strmap_slot *slots = calloc(cap, sizeof(*slots));
    if (!slots)
        return KUBE_ENOMEM;
    for (size_t i = 0; i < m->cap; i++) {
        kube_strmap_slot *s = &m->slots[i];
        if (s->key && s->key != TOMB)
            insert_fresh(slots, cap, s->key, s->value, s->hash);
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    m->used = m->len;
    return KUBE_OK;
}

int kube_strmap_put(kube_strmap *m, const char *key, void *value, void **old)
{
    size_t h = hash_str(key);
    kube_strmap_slot *s = find_slot(m, key, h);
    if (s) {
        if (old)
            *old = s->value;
        s->value = value;
        return KUBE_OK;
    }
    if ((m->used + 1) * 4 > m->cap * 3 && grow(m) != KUBE_OK)
        return KUBE_ENOMEM;
    char *k = kube_strdup(key);
    if (!k)
        return KUBE_ENOMEM;
    size_t mask = m->cap - 1;
    size_t i = h & mask;
    while (m->slots[i].key && m->slots[i].key != TOMB)
        i = (i + 1) & mask;
    if (!m->slots[i].key)
        m->used++;
    m->slots[i].key = k;
    m->slots[i].value = value;
    m->slots[i].hash = h;
    m->len++;
    if (old)
        *old = NULL;
    return KUBE_OK;
}

void *kube_strmap_get(const kube_strmap *m, const char *key)
{
    kube_strmap_slot *s = find_slot(m, key, hash_str(key));
    return s ? s->value : NULL;
}

void *kube_strmap_del(kube_strmap *m, const char *key)
{
    kube_strmap_slot *s = find_slot(m, key, hash_str(key));
    if (!s)
        return NULL;
    void *v = s->value;
    free(s->key);
    s->key = TOMB;
    s->value = NULL;
    m->len--;
    return v;
}

void kube_strmap_foreach(const kube_strmap *m, void (*fn)(void *ud, const char *key, void *value),
                         void *ud)
{
    for (size_t i = 0; i < m->cap; i++) {
        kube_strmap_slot *s = &m->slots[i];
        if (s->key && s->key != TOMB)
            fn(ud, s->key, s->value);
    }
}

void kube_strmap_free(kube_strmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key && m->slots[i].key != TOMB)
            free(m->slots[i].key);
    free(m->slots);
    memset(m, 0, sizeof(*m));
}
