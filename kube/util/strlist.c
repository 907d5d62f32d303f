/*
 * kube/util/strlist.c - a list of owned strings (strlist.h).
 */
#include "kube/util/strlist.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "kube/util/array.h"
#include "kube/util/buf.h"
#include "kube/util/errors.h"

int kube_strlist_add(kube_strlist *l, const char *s)
{
    char *copy;

    if (KUBE_ARRAY_RESERVE(l->v, l->cap, l->n + 1) != KUBE_OK || !(copy = kube_strdup(s)))
        return KUBE_ENOMEM;
    l->v[l->n++] = copy;
    return KUBE_OK;
}

int kube_strlist_contains(const kube_strlist *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return 1;
    return 0;
}

int kube_strlist_split(kube_strlist *l, const char *csv)
{
    const char *p = csv;

    while (p && *p) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        const char *start = p;
        while (start < end && isspace((unsigned char)*start))
            start++;
        while (end > start && isspace((unsigned char)end[-1]))
            end--;
        if (end > start) {
            char *item = strndup(start, (size_t)(end - start));
            int rc = item ? kube_strlist_add(l, item) : KUBE_ENOMEM;
            free(item);
            if (rc != KUBE_OK)
                return rc;
        }
        p = comma ? comma + 1 : NULL;
    }
    return KUBE_OK;
}

void kube_strlist_free(kube_strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}
