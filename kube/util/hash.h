/*
 * kube/util/hash.h - the one string hash: 64-bit FNV-1a, for the hash
 * tables of the library and both daemons (string maps, the informer store,
 * the intern pool, the caches). Not for anything an attacker may aim at
 * for collisions beyond a slower table.
 *
 * Header-only (the tables hash on every lookup): nothing to allocate or
 * free. Chain the calls to hash several strings as one key:
 * kube_fnv1a_str(kube_fnv1a_byte(kube_fnv1a_str(KUBE_FNV1A_INIT, ns), '/'),
 * name).
 */
#ifndef KUBE_HASH_H
#define KUBE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* The FNV-1a offset basis: the hash of nothing. */
#define KUBE_FNV1A_INIT 14695981039346656037ULL

/* h extended by the byte c. */
static inline uint64_t kube_fnv1a_byte(uint64_t h, unsigned char c)
{
    return (h ^ c) * 1099511628211ULL;
}

/* h extended by the n bytes at p. */
static inline uint64_t kube_fnv1a_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;

    for (size_t i = 0; i < n; i++)
        h = kube_fnv1a_byte(h, b[i]);
    return h;
}

/* h extended by the bytes of the NUL-terminated s (the NUL excluded). */
static inline uint64_t kube_fnv1a_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = kube_fnv1a_byte(h, (unsigned char)*s);
    return h;
}

#endif
