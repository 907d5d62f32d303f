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

/* The columnDefinitions array of r's Table (NULL on ENOMEM). */
cJSON *emu_printer_columns(const emu_resource *r);
/* One TableRow for obj (a stored object of r) without its "object":
 * {"cells":[...]} plus "conditions" where the printer sets them. NULL on
 * ENOMEM. */
cJSON *emu_printer_row(const emu_resource *r, const cJSON *obj);

/* printers.c helpers shared with printers_crd.c. */
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
