/*
 * apiserver/kubectl/output.h - how kubectl-stickyvm prints: tables as
 * kubectl's printer writes them (upper-case headers, columns padded to the
 * widest cell plus 3 spaces, at least 6 wide, the last column unpadded),
 * ages as kubectl's HumanDuration, -o json (4-space indentation) and -o
 * yaml (libyaml's emitter), and errors as kubectl reports them ("Error from
 * server (NotFound): <the Status message>").
 *
 * Threads: pure, on the caller's data. Memory: a kctl_table owns copies of
 * its cells, freed by kctl_table_free().
 */
#ifndef KCTL_OUTPUT_H
#define KCTL_OUTPUT_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "kube/transport/client.h"

typedef struct kctl_table {
    size_t ncols, nrows, cap; /* nrows counts the header */
    char **cells;             /* nrows * ncols owned strings */
} kctl_table;

/* Starts a table with the ncols headers (copied). KUBE_OK or KUBE_ENOMEM
 * (t then needs no free). */
int kctl_table_init(kctl_table *t, size_t ncols, const char *const *headers);
/* Appends one row of ncols cells (copied; NULL or "" prints "<none>"). */
int kctl_table_add(kctl_table *t, const char *const *cells);
/* Writes the table (header first) to f. */
void kctl_table_write(const kctl_table *t, FILE *f);
void kctl_table_free(kctl_table *t);

/* Writes obj as kubectl's -o json (4-space indentation, a final newline)
 * or -o yaml ("yaml") to f. KUBE_OK, KUBE_EINVAL (another format) or
 * KUBE_ENOMEM. */
int kctl_print_object(FILE *f, const cJSON *obj, const char *format);

/* The YAML text of obj (libyaml's emitter; strings that would read as
 * another type are double-quoted, as kubectl's). Caller frees; NULL on
 * out-of-memory. */
char *kctl_yaml(const cJSON *obj);

/* Writes a failed call as kubectl does: "Error from server (<reason>):
 * <message>" from the Status of an answer, or "Unable to connect to the
 * server: <why>" when none came (resp->code 0). */
void kctl_print_error(FILE *f, const kube_response *resp);

#endif
