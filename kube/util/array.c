/*
 * kube/util/array.c - the growable array's capacity (array.h).
 */
#include "kube/util/array.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/errors.h"

int kube_array_reserve(void *items, size_t *cap, size_t need, size_t size)
{
    void *old, *grown;
    size_t ncap = *cap ? *cap : 4;

    if (need <= *cap)
        return KUBE_OK;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return KUBE_ENOMEM;
        ncap *= 2;
    }
    if (size && ncap > SIZE_MAX / size)
        return KUBE_ENOMEM;
    memcpy(&old, items, sizeof(old));
    grown = realloc(old, ncap * size);
    if (!grown)
        return KUBE_ENOMEM;
    memcpy(items, &grown, sizeof(grown));
    *cap = ncap;
    return KUBE_OK;
}

int kube_array_add_distinct(const char ***items, size_t *n, size_t *cap, const char *s)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*items)[i], s) == 0)
            return KUBE_OK;
    if (KUBE_ARRAY_RESERVE(*items, *cap, *n + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    (*items)[(*n)++] = s;
    return KUBE_OK;
}
