/*
 * kube/codec/jsonscratch.c - cJSON trees parsed into a per-thread scratch arena:
 * a list of blocks, bump-allocated while kube_jsonscratch_parse() runs and
 * emptied by kube_jsonscratch_release().
 */
#include "kube/codec/jsonscratch.h"

#include <pthread.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define BLOCK_SIZE (64u * 1024u)
#define ALIGN alignof(max_align_t)

typedef struct block {
    struct block *next;
    size_t size, used;
    alignas(max_align_t) unsigned char data[];
} block;

typedef struct scratch {
    block *blocks; /* newest first */
    int parsing;   /* the hooks allocate from the arena */
    int live;      /* a scratch tree is held */
} scratch;

static __thread scratch *tl_scratch;
static pthread_key_t scratch_key;
static int key_ok;

static void *arena_alloc(scratch *s, size_t n)
{
    block *b = s->blocks;

    n = (n + ALIGN - 1) & ~(ALIGN - 1);
    if (!b || b->size - b->used < n) {
        size_t size = n > BLOCK_SIZE ? n : BLOCK_SIZE;
        b = malloc(sizeof(*b) + size);
        if (!b)
            return NULL;
        b->size = size;
        b->used = 0;
        b->next = s->blocks;
        s->blocks = b;
    }
    b->used += n;
    return b->data + b->used - n;
}

static int arena_holds(const scratch *s, const void *p)
{
    for (const block *b = s->blocks; b; b = b->next)
        if ((const unsigned char *)p >= b->data && (const unsigned char *)p < b->data + b->size)
            return 1;
    return 0;
}

/* Empties the arena, keeping one block of the default size. */
static void arena_reset(scratch *s)
{
    block *keep = NULL, *b = s->blocks;

    while (b) {
        block *next = b->next;
        if (!keep && b->size == BLOCK_SIZE) {
            keep = b;
            keep->used = 0;
            keep->next = NULL;
        } else {
            free(b);
        }
        b = next;
    }
    s->blocks = keep;
}

static void scratch_free(void *p)
{
    scratch *s = p;

    if (!s)
        return;
    if (tl_scratch == s)
        tl_scratch = NULL;
    arena_reset(s);
    free(s->blocks);
    free(s);
}

static void *hook_malloc(size_t n)
{
    scratch *s = tl_scratch;

    return s && s->parsing ? arena_alloc(s, n) : malloc(n);
}

static void hook_free(void *p)
{
    scratch *s = tl_scratch;

    if (!s || !arena_holds(s, p))
        free(p);
}

/* Installed before main, while the process has one thread. */
__attribute__((constructor)) static void install_hooks(void)
{
    cJSON_Hooks hooks = {hook_malloc, hook_free};

    key_ok = pthread_key_create(&scratch_key, scratch_free) == 0;
    cJSON_InitHooks(&hooks);
}

/* The exiting thread (main) gets no key destructor call. */
__attribute__((destructor)) static void free_main_scratch(void)
{
    scratch *s = tl_scratch;

    if (key_ok)
        pthread_setspecific(scratch_key, NULL);
    scratch_free(s);
}

/* The calling thread's scratch, made on first use; NULL on OOM. */
static scratch *thread_scratch(void)
{
    scratch *s = tl_scratch;

    if (s || !key_ok)
        return s;
    s = calloc(1, sizeof(*s));
    if (s && pthread_setspecific(scratch_key, s) != 0) {
        free(s);
        s = NULL;
    }
    tl_scratch = s;
    return s;
}

cJSON *kube_jsonscratch_parse(const char *text, size_t len)
{
    scratch *s = thread_scratch();
    cJSON *root;

    if (!s || s->live)
        return cJSON_ParseWithLength(text, len);
    s->parsing = 1;
    root = cJSON_ParseWithLength(text, len);
    s->parsing = 0;
    if (root)
        s->live = 1;
    else
        arena_reset(s);
    return root;
}

void kube_jsonscratch_release(cJSON *root)
{
    scratch *s = tl_scratch;

    if (!root)
        return;
    if (s && s->live && arena_holds(s, root)) {
        s->live = 0;
        arena_reset(s);
        return;
    }
    cJSON_Delete(root);
}
