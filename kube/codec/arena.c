/*
 * kube/codec/arena.c - bump allocator and the two-pass exact-size build.
 */
#include "kube/codec/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"
#include "kube/codec/intern.h"

#define ARENA_ALIGN 8u
#define CHUNK_MIN 4096u
#define SCRATCH_SIZE 4096u

typedef struct kube_arena_chunk {
    struct kube_arena_chunk *next;
    size_t size;
    alignas(16) char data[];
} kube_arena_chunk;

static size_t align_up(size_t n, size_t al)
{
    return (n + al - 1) & ~(al - 1);
}

void kube_arena_init(kube_arena *a, void *buf, size_t n)
{
    a->cur = buf;
    a->end = buf ? (char *)buf + n : NULL;
    a->used = 0;
    a->chunks = NULL;
    a->fixed = 0;
    a->first = buf;
    a->first_size = buf ? n : 0;
}

void kube_arena_init_fixed(kube_arena *a, void *block, size_t n)
{
    kube_arena_init(a, block, n);
    a->fixed = 1;
}

/* Adds a chunk large enough for n bytes at any alignment up to 8. */
static int arena_grow(kube_arena *a, size_t n)
{
    size_t size = CHUNK_MIN;
    kube_arena_chunk *c;

    if (a->fixed || n > SIZE_MAX / 2 - sizeof(*c))
        return KUBE_ENOMEM;
    while (size < n + ARENA_ALIGN)
        size *= 2;
    c = malloc(sizeof(*c) + size);
    if (!c)
        return KUBE_ENOMEM;
    c->next = a->chunks;
    c->size = size;
    a->chunks = c;
    a->cur = c->data;
    a->end = c->data + size;
    return KUBE_OK;
}

/* Reserves n bytes aligned to al in the current region (growing when
 * needed) and advances the contiguous count the same way. */
static void *arena_take(kube_arena *a, size_t n, size_t al)
{
    uintptr_t p;

    if (a->cur) {
        p = align_up((uintptr_t)a->cur, al);
        if (p <= (uintptr_t)a->end && (uintptr_t)a->end - p >= n)
            goto found;
    }
    if (arena_grow(a, n) != KUBE_OK)
        return NULL;
    p = (uintptr_t)a->cur;
found:
    a->cur = (char *)p + n;
    a->used = align_up(a->used, al) + n;
    return (void *)p;
}

void *kube_arena_alloc(kube_arena *a, size_t n)
{
    void *p = arena_take(a, n, ARENA_ALIGN);

    if (p && n)
        memset(p, 0, n);
    return p;
}

char *kube_arena_strndup(kube_arena *a, const char *s, size_t n)
{
    char *p;

    if (n == SIZE_MAX)
        return NULL;
    p = arena_take(a, n + 1, 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *kube_arena_strdup(kube_arena *a, const char *s)
{
    return kube_arena_strndup(a, s, strlen(s));
}

size_t kube_arena_used(const kube_arena *a)
{
    return a->used;
}

static int in_range(uintptr_t p, const char *start, size_t size)
{
    return start && p >= (uintptr_t)start && p - (uintptr_t)start < size;
}

int kube_arena_owns(const kube_arena *a, const void *p)
{
    uintptr_t u = (uintptr_t)p;

    if (in_range(u, a->first, a->first_size))
        return 1;
    for (const kube_arena_chunk *c = a->chunks; c; c = c->next)
        if (in_range(u, c->data, c->size))
            return 1;
    return 0;
}

/* 1 when one of the ptrs leading pointers of an element of p points into
 * the arena. */
static int points_into(const kube_arena *a, const void *p, size_t count, size_t size, size_t ptrs)
{
    for (size_t i = 0; i < count; i++) {
        const char *elem = (const char *)p + i * size;
        for (size_t k = 0; k < ptrs; k++) {
            const void *q;
            memcpy(&q, elem + k * sizeof(q), sizeof(q));
            if (kube_arena_owns(a, q))
                return 1;
        }
    }
    return 0;
}

_Static_assert(KUBE_ARENA_STAGE_SIZE <= KUBE_INTERN_MAX_ENTRY,
               "a staged array must fit in one pool entry");

void *kube_arena_stage_alloc(kube_arena *a, kube_arena_stage *st, size_t n)
{
    if (n == 0)
        return NULL;
    if (n > sizeof(st->buf))
        return kube_arena_alloc(a, n);
    memset(st->buf, 0, n);
    return st->buf;
}

const void *kube_arena_share(kube_arena *a, kube_arena_stage *st, const void *p, size_t count,
                             size_t size, size_t ptrs)
{
    const void *shared = NULL;
    size_t n = count * size;
    void *copy;

    if (p != st->buf)
        return p;
    if (!points_into(a, p, count, size, ptrs))
        shared = kube_intern_bytes(p, n);
    if (shared)
        return shared;
    if ((copy = arena_take(a, n, ARENA_ALIGN)))
        memcpy(copy, p, n);
    return copy;
}

void kube_arena_release(kube_arena *a)
{
    kube_arena_chunk *c, *next;

    if (!a)
        return;
    for (c = a->chunks; c; c = next) {
        next = c->next;
        free(c);
    }
    memset(a, 0, sizeof(*a));
    a->fixed = 1;
}

int kube_arena_build(kube_arena_fill_fn fill, void *ctx, void **out)
{
    alignas(16) char scratch[SCRATCH_SIZE];
    kube_arena a;
    void *first = NULL, *block;
    size_t need;
    int rc;

    *out = NULL;
    kube_arena_init(&a, scratch, sizeof(scratch));
    rc = fill(&a, ctx, &first);
    need = kube_arena_used(&a);
    kube_arena_release(&a);
    if (rc != KUBE_OK)
        return rc;
    block = malloc(need ? need : 1);
    if (!block)
        return KUBE_ENOMEM;
    kube_arena_init_fixed(&a, block, need);
    rc = fill(&a, ctx, &first);
    if (rc != KUBE_OK || first != block) {
        free(block);
        return rc != KUBE_OK ? rc : KUBE_EINVAL;
    }
    *out = block;
    return KUBE_OK;
}
