/*
 * tests/emulator/printers.h - server-side printing for the API emulator:
 * the column definitions and row cells kube-apiserver's TableConvertors
 * give for each kind (pkg/printers/internalversion for the built-in kinds,
 * kube-aggregator's for APIServices, apiextensions-apiserver's
 * additionalPrinterColumns for custom resources, the default convertor for
 * the rest). table.c frames them into a meta.k8s.io Table.
 *
 * Memory: every function returns a fresh cJSON tree the caller frees.
 * Threads: stateless, callable from any request thread.
 */
#ifndef STICKYVM_EMU_PRINTERS_H
#define STICKYVM_EMU_PRINTERS_H

#include <stdint.h>

#include "emu_internal.h"

/* One TableColumnDefinition (strings static). */
typedef struct emu_column {
    const char *name;
    const char *type; /* "string", "integer", "number", "boolean", "date" */
    const char *format;
    const char *description;
    int priority; /* 1: shown by -o wide only */
} emu_column;

#define EMU_N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define EMU_NAME_COL                               \
    {                                              \
        "Name", "string", "name", emu_desc_name, 0 \
    }
#define EMU_AGE_COL                              \
    {                                            \
        "Age", "string", "", emu_desc_created, 0 \
    }

/* A built-in kind's printer: its columns and the function appending one
 * object's cells (all of them, in column order) to cells. */
typedef struct emu_printer {
    const char *group;
    const char *plural;
    const emu_column *cols;
    size_t n_cols;
    void (*cells)(cJSON *cells, const cJSON *obj);
} emu_printer;

#define EMU_PRINTER(g, p, cols, fn)    \
    {                                  \
        g, p, cols, EMU_N_OF(cols), fn \
    }

/* printers_kinds.c: the printer of group/plural, or NULL (static). */
const emu_printer *emu_printer_of_kind(const char *group, const char *plural);

/* The columnDefinitions array of r's Table (NULL on ENOMEM). */
cJSON *emu_printer_columns(const emu_resource *r);
/* One TableRow for obj (a stored object of r) without its "object":
 * {"cells":[...]} plus "conditions" where the printer sets them. NULL on
 * ENOMEM. */
cJSON *emu_printer_row(const emu_resource *r, const cJSON *obj);

/* printers.c helpers shared with printers_kinds.c and printers_crd.c.
 * Cells: a string (NULL as ""), a string or fallback when NULL or empty,
 * a number, the object's name, its age (human duration since
 * metadata.creationTimestamp). */
void emu_cell_str(cJSON *cells, const char *s);
void emu_cell_str_or(cJSON *cells, const char *s, const char *fallback);
void emu_cell_int(cJSON *cells, double v);
void emu_cell_name(cJSON *cells, const cJSON *obj);
void emu_cell_age(cJSON *cells, const cJSON *obj);
/* The number at dotted path of o, or dflt. */
double emu_num_at(const cJSON *o, const char *path, double dflt);
/* a when non-empty, else b, else "". */
const char *emu_first_set(const char *a, const char *b);
/* Appends member key of each element of arr to b, separated by sep. */
void emu_join_member(const cJSON *arr, const char *key, const char *sep, kube_buf *b);
/* labels.FormatLabels of map m ("k=v,..." sorted, "<none>" when empty). */
void emu_format_labels(const cJSON *m, kube_buf *b);
/* Appends the column definitions (name, type, format, description,
 * priority, in kube-apiserver's key order) to cols. */
void emu_columns_add(cJSON *cols, const emu_column *c, size_t n);
/* kube's duration.HumanDuration of now - ts (an RFC 3339 time), or
 * "<unknown>" when ts is absent or unparsable. */
void emu_human_since(const char *ts, char *out, size_t n);
/* metav1.LabelSelectorAsSelector(sel).String() appended to b: the
 * requirements sorted ("a=b,c in (x,y),!d"); "<none>" for a NULL sel. */
void emu_label_selector_string(const cJSON *sel, kube_buf *b);
/* The ObjectMeta name and creationTimestamp descriptions. */
extern const char emu_desc_name[], emu_desc_created[];

/* printers_crd.c: a custom resource's columns (its CRD's
 * additionalPrinterColumns, or Age when it has none) and cells. */
cJSON *emu_crd_columns(const emu_resource *r);
cJSON *emu_crd_cells(const emu_resource *r, const cJSON *obj);

#endif
