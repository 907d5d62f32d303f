/*
 * kube/codec/arena.h - a bump allocator so that one decoded object is one
 * allocation, freed at once.
 *
 * An arena hands out zeroed memory from a current region. A growable arena
 * (kube_arena_init) starts in an optional caller buffer and adds malloc'd
 * chunks as needed; kube_arena_release() frees those chunks (never the
 * caller's buffer). A fixed arena (kube_arena_init_fixed) never grows: it
 * fails with NULL when its block is full.
 *
 * kube_arena_build() is how decoders get objects sized exactly to need: it
 * runs a fill function twice, first in a growable scratch arena (which
 * measures and validates), then into one malloc'd block of exactly the
 * measured size. The fill function must be deterministic: the same input
 * must make the same sequence of allocations.
 *
 * Memory: the arena never owns the pointers it hands out individually;
 * they live until the arena's chunks (or the built block) are freed.
 * Not thread-safe; one arena per decoding thread at a time.
 */
#ifndef KUBE_ARENA_H
#define KUBE_ARENA_H

#include <stdalign.h>
#include <stddef.h>

struct kube_arena_chunk;

typedef struct kube_arena {
    char *cur;                       /* next free byte of the current region */
    char *end;                       /* end of the current region */
    size_t used;                     /* bytes handed out, counted as one contiguous block */
    struct kube_arena_chunk *chunks; /* malloc'd chunks (growable arenas), owned */
    int fixed;                       /* 1: never grows */
    char *first;                     /* the caller's buffer or fixed block (borrowed) */
    size_t first_size;
} kube_arena;

/* Where an array that may be shared (kube_arena_share) is built: in the
 * caller's stage when small enough for the pool of kube/codec/intern.h, else
 * directly in the arena. Lives on the caller's stack. */
#define KUBE_ARENA_STAGE_SIZE 1024u
typedef struct kube_arena_stage {
    alignas(16) unsigned char buf[KUBE_ARENA_STAGE_SIZE];
} kube_arena_stage;

/* Initialises a growable arena that first uses buf (n bytes, may be NULL/0;
 * must be aligned to 16 bytes when given). Allocates nothing. */
void kube_arena_init(kube_arena *a, void *buf, size_t n);

/* Initialises a fixed arena over block (n bytes, aligned to 16). The caller
 * keeps ownership of block. */
void kube_arena_init_fixed(kube_arena *a, void *block, size_t n);

/* Returns n zeroed bytes aligned to 8, owned by the arena, or NULL when
 * memory runs out (growable) or the block is full (fixed). n may be 0. */
void *kube_arena_alloc(kube_arena *a, size_t n);

/* Copies n bytes of s plus a NUL into the arena (no alignment padding).
 * Returns the copy, or NULL when memory runs out. s may hold NULs. */
char *kube_arena_strndup(kube_arena *a, const char *s, size_t n);

/* kube_arena_strndup(a, s, strlen(s)). s must not be NULL. */
char *kube_arena_strdup(kube_arena *a, const char *s);

/* Bytes handed out so far as if the arena were one block starting at a
 * 16-aligned address (alignment padding included): the size a fixed block
 * needs to replay the same allocations. */
size_t kube_arena_used(const kube_arena *a);

/* 1 when p points into memory of the arena (its first region or one of
 * its chunks), else 0. */
int kube_arena_owns(const kube_arena *a, const void *p);

/* n zeroed bytes, aligned to 8, to build an array in: st's buffer when n
 * fits in it, else n bytes of the arena. NULL when memory runs out (or n
 * is 0). Finish the array with kube_arena_share(). */
void *kube_arena_stage_alloc(kube_arena *a, kube_arena_stage *st, size_t n);

/* Finishes the immutable array p of count elements of size bytes, each
 * starting with ptrs pointer members (its only pointers), built in memory
 * from kube_arena_stage_alloc(a, st, count * size). Built in the arena
 * (too large to share): returns p. Built in st: returns the pooled copy
 * (kube/codec/intern.h: permanent, shared with every object holding the same
 * bytes) when no pointer of p points into the arena, i.e. every string in
 * it is static or pooled, and the pool takes it; else a copy of p in the
 * arena. NULL when memory runs out. Deterministic for a given pool state,
 * and never larger in the second pass of kube_arena_build(), as two-pass
 * building needs. */
const void *kube_arena_share(kube_arena *a, kube_arena_stage *st, const void *p, size_t count,
                             size_t size, size_t ptrs);

/* Frees the chunks a growable arena malloc'd (never the caller's initial
 * buffer or a fixed block) and leaves the arena empty and unusable until
 * re-initialised. NULL-safe. */
void kube_arena_release(kube_arena *a);

/* Fills memory from a: allocates the result with its first allocation
 * (which becomes the start of the block) and stores it in *first. Returns
 * KUBE_OK or a negative KUBE_E* code. */
typedef int (*kube_arena_fill_fn)(kube_arena *a, void *ctx, void **first);

/* Runs fill once in a scratch arena (to validate and measure), then once
 * more into a single malloc'd block of exactly the measured size, and
 * stores that block in *out: the caller frees it with free(). On error
 * *out is NULL, the error of the first pass is returned (KUBE_ENOMEM if
 * memory runs out) and nothing stays allocated. */
int kube_arena_build(kube_arena_fill_fn fill, void *ctx, void **out);

#endif
