/*
 * kube/util/residency.c - unmaps start-up's file-backed pages
 * (kube/util/residency.h).
 */
#include "kube/util/residency.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kube/util/array.h"
#include "kube/util/errors.h"

/* One mapping of /proc/self/smaps, as far as read. */
typedef struct res_map {
    uintptr_t start, end;
    int candidate; /* private, read-only, file-backed */
    long rss_kib, anon_kib;
} res_map;

typedef struct res_list {
    res_map *v;
    size_t n, cap;
} res_list;

/* Parses a mapping's header line ("start-end perms offset dev inode path")
 * into *m. 1 when line is a header, 0 otherwise (a "Key: value" line). */
static int parse_header(const char *line, res_map *m)
{
    char *end;
    unsigned long long lo = strtoull(line, &end, 16), hi;
    const char *perms, *path;

    if (end == line || *end != '-')
        return 0;
    hi = strtoull(end + 1, &end, 16);
    if (*end != ' ')
        return 0;
    perms = end + 1;
    memset(m, 0, sizeof(*m));
    m->start = (uintptr_t)lo;
    m->end = (uintptr_t)hi;
    m->rss_kib = -1;
    m->anon_kib = -1;
    if (strlen(perms) < 5)
        return 1;
    path = strchr(perms, '/');
    m->candidate = perms[0] == 'r' && perms[1] == '-' && perms[3] == 'p' && path != NULL;
    return 1;
}

/* Reads "Key:   N kB" into *out when line starts with key. */
static void parse_kib(const char *line, const char *key, long *out)
{
    size_t n = strlen(key);

    if (strncmp(line, key, n) == 0)
        *out = strtol(line + n, NULL, 10);
}

/* Appends m to l when it is a candidate with resident pages and no
 * anonymous page. KUBE_OK or KUBE_ENOMEM. */
static int keep(res_list *l, const res_map *m)
{
    if (!m->candidate || m->rss_kib <= 0 || m->anon_kib != 0)
        return KUBE_OK;
    if (KUBE_ARRAY_RESERVE(l->v, l->cap, l->n + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    l->v[l->n++] = *m;
    return KUBE_OK;
}

/* Collects the mappings to release into l (owned by the caller).
 * KUBE_OK, KUBE_EIO or KUBE_ENOMEM. */
static int collect(res_list *l)
{
    FILE *f = fopen("/proc/self/smaps", "re");
    char *line = NULL;
    size_t len = 0;
    res_map m = {0};
    int have = 0, rc = KUBE_OK;

    if (f == NULL)
        return KUBE_EIO;
    while (rc == KUBE_OK && getline(&line, &len, f) > 0) {
        res_map next;
        if (parse_header(line, &next)) {
            if (have)
                rc = keep(l, &m);
            m = next;
            have = 1;
            continue;
        }
        parse_kib(line, "Rss:", &m.rss_kib);
        parse_kib(line, "Anonymous:", &m.anon_kib);
    }
    if (rc == KUBE_OK && have)
        rc = keep(l, &m);
    free(line);
    fclose(f);
    return rc;
}

int kube_residency_release_file_pages(size_t *released_kib)
{
    res_list l = {0};
    size_t kib = 0;
    int rc = collect(&l);

    for (size_t i = 0; rc == KUBE_OK && i < l.n; i++) {
        if (madvise((void *)l.v[i].start, l.v[i].end - l.v[i].start, MADV_DONTNEED) == 0)
            kib += (size_t)l.v[i].rss_kib;
    }
    free(l.v);
    if (released_kib)
        *released_kib = kib;
    return rc;
}
