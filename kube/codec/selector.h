/*
 * kube/codec/selector.h - label selectors and node selectors, with the matching
 * semantics of k8s.io/apimachinery/pkg/labels and of
 * k8s.io/component-helpers/scheduling/corev1/nodeaffinity (v1.28).
 *
 * - A metav1.LabelSelector decodes to a kube_label_selector: matchLabels
 *   become In requirements with one value, followed by matchExpressions
 *   (In, NotIn, Exists, DoesNotExist). A nil selector is represented by a
 *   NULL pointer and matches nothing (labels.Nothing()); an empty selector
 *   ({}) matches everything.
 * - A v1.NodeSelector decodes to terms ORed together; each term ANDs its
 *   matchExpressions (In, NotIn, Exists, DoesNotExist, Gt, Lt) and its
 *   matchFields (only "metadata.name", In/NotIn with exactly one value).
 *   A term with neither matches nothing.
 * - Anything labels.NewRequirement() / LabelSelectorAsSelector() would
 *   reject (unknown operator, In without values, Exists with values, Gt
 *   with a non-integer, invalid key or value) does not fail decoding: it
 *   marks the selector or term invalid (valid == 0), and an invalid
 *   selector or term matches nothing, as the scheduler treats it. Callers
 *   that must report the error (PreFilter/PreScore) check `valid`.
 *
 * Memory: decoded selectors live in the arena of the object that holds
 * them. kube_label_selector_parse() returns one block freed with
 * kube_label_selector_free(). Matching allocates nothing.
 */
#ifndef KUBE_SELECTOR_H
#define KUBE_SELECTOR_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "kube/codec/object.h"
#include "kube/codec/validation.h"

struct kube_arena;

typedef enum kube_sel_op {
    KUBE_SEL_IN = 0, /* also "=", "==" in selector strings */
    KUBE_SEL_NOT_IN, /* also "!=" */
    KUBE_SEL_EXISTS,
    KUBE_SEL_DOES_NOT_EXIST,
    KUBE_SEL_GT, /* node selectors and selector strings only */
    KUBE_SEL_LT,
    KUBE_SEL_INVALID /* unknown operator: never matches */
} kube_sel_op;

typedef struct kube_requirement {
    const char *key;
    const char *const *values;
    size_t n_values;
    kube_sel_op op;
} kube_requirement;

typedef struct kube_label_selector {
    const kube_requirement *reqs; /* ANDed */
    size_t n_reqs;
    int valid; /* 0: a requirement is malformed; matches nothing */
} kube_label_selector;

typedef struct kube_node_selector_term {
    const kube_requirement *match_expressions; /* against node labels */
    size_t n_match_expressions;
    const kube_requirement *match_fields; /* against metadata.name */
    size_t n_match_fields;
    int valid; /* 0: malformed; matches nothing */
} kube_node_selector_term;

typedef struct kube_node_selector {
    const kube_node_selector_term *terms; /* ORed */
    size_t n_terms;
} kube_node_selector;

/* nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[i]. */
typedef struct kube_preferred_term {
    int32_t weight;
    kube_node_selector_term preference;
} kube_preferred_term;

/* labels.Requirement.Matches against a label set. Gt/Lt parse the label
 * value as a base-10 int64 (no match when it does not parse). Returns 1 or
 * 0; KUBE_SEL_INVALID returns 0. */
int kube_requirement_matches(const kube_requirement *r, const kube_kv *labels, size_t n);

/* 1 when every requirement matches. NULL (nil selector) or an invalid
 * selector: 0. A selector without requirements: 1. */
int kube_label_selector_matches(const kube_label_selector *s, const kube_kv *labels, size_t n);

/* 1 when the term matches a node with this name and these labels. An
 * empty or invalid term: 0. */
int kube_node_selector_term_matches(const kube_node_selector_term *t, const char *node_name,
                                    const kube_kv *labels, size_t n);

/* 1 when any term matches. NULL: 0 (callers treat an absent
 * requiredDuringScheduling selector as "all nodes" themselves). */
int kube_node_selector_matches(const kube_node_selector *ns, const char *node_name,
                               const kube_kv *labels, size_t n);

/* Parses a selector string as labels.Parse() does, e.g.
 * "a=b,c!=d,e in (x,y),!f,g,h notin (z),n>3". "" is an empty selector
 * (everything). Returns KUBE_OK with *out a single allocation the caller
 * frees with kube_label_selector_free(), KUBE_EPARSE on syntax errors or
 * an invalid requirement (so the result is always valid), KUBE_ENOMEM, or
 * KUBE_EINVAL for NULL arguments. */
int kube_label_selector_parse(const char *s, kube_label_selector **out);

/* Frees a selector from kube_label_selector_parse(). NULL-safe. */
void kube_label_selector_free(kube_label_selector *s);

/* One term of a field selector (fields.Requirement): key = value, or !=
 * when negated. */
typedef struct kube_field_term {
    const char *key, *value; /* in the selector's text, unescaped */
    int negated;
} kube_field_term;

/* A parsed field selector: its terms, ANDed (none: everything). */
typedef struct kube_field_selector {
    kube_field_term *terms;
    size_t n_terms;
    char *text; /* the copy of the selector the terms point into */
} kube_field_selector;

/* Parses a field selector as fields.ParseSelector does: terms split at
 * unescaped commas, each "key op value" with op the first unescaped "!=",
 * "==" or "=", values unescaped from \\, \, and \= (any other escape, or
 * an unescaped ',' or '=' in a value, is an error), empty terms skipped.
 * Which keys are valid is the caller's rule. KUBE_OK with *out filled
 * (free with kube_field_selector_free() in every case), KUBE_EPARSE or
 * KUBE_ENOMEM. Implemented in kube/codec/selector_fields.c. */
int kube_field_selector_parse(const char *s, kube_field_selector *out);

/* Frees what kube_field_selector_parse() filled and zeroes it. */
void kube_field_selector_free(kube_field_selector *s);

/* For decoder implementations: decode into arena a.
 * A JSON null or absent selector yields *out NULL (nil). Wrong JSON types
 * return KUBE_EPARSE; KUBE_ENOMEM when the arena is exhausted. */
int kube_label_selector_decode(const cJSON *j, struct kube_arena *a,
                               const kube_label_selector **out);
/* Decodes one v1.NodeSelectorTerm into *t. */
int kube_node_selector_term_decode(const cJSON *j, struct kube_arena *a,
                                   kube_node_selector_term *t);
/* Decodes a v1.NodeSelector; null/absent yields *out NULL. */
int kube_node_selector_decode(const cJSON *j, struct kube_arena *a, const kube_node_selector **out);

#endif
