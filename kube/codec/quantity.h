/*
 * kube/codec/quantity.h - resource quantities exactly as apimachinery's
 * resource.Quantity parses them:
 *
 *   <quantity> ::= <signedNumber><suffix>
 *   <suffix>   ::= Ki | Mi | Gi | Ti | Pi | Ei      (binary, 2^10 ...)
 *                | n | u | m | "" | k | M | G | T | P | E   (decimal SI)
 *                | e<signedNumber> | E<signedNumber>        (decimal exponent)
 *
 * e.g. "100m", "4G", "4Gi", "1k", "1e3", "1.5", ".5", "0.1Gi", "-1", "+2".
 * As in Kubernetes, a parsed value is rounded up (away from zero) to the
 * nearest 10^-9, and a binary-suffixed magnitude is capped at 2^63-1
 * units ("9Ei" parses as 9223372036854775807; "12E" is not capped).
 * Parsing is exact (no floating point).
 *
 * Memory: nothing here allocates. A kube_quantity is a plain value.
 */
#ifndef KUBE_QUANTITY_H
#define KUBE_QUANTITY_H

#include <cjson/cJSON.h>
#include <stdint.h>

/* Magnitudes from KUBE_QUANTITY_HUGE nanos (about 1.3e27 units) up are
 * clamped to it: such values have no int64 Value() anyway. */
#define KUBE_QUANTITY_HUGE ((__int128)1 << 120)

/* The exact value in units of 10^-9 (nano), and whether Kubernetes would
 * hold it as an inf.Dec rather than an int64Amount (which only changes how
 * a negative non-integral value rounds). */
typedef struct kube_quantity {
    __int128 nanos;
    int dec;
} kube_quantity;

/* Parses s (a whole C string, no surrounding spaces) into *out. Returns
 * KUBE_OK, or KUBE_EPARSE for anything resource.ParseQuantity rejects
 * (empty, bad suffix, "1.1.1", "1e", " 1", "1 ", ...); *out is untouched on
 * error. s NULL is KUBE_EINVAL. */
int kube_quantity_parse(const char *s, kube_quantity *out);

/* Quantity.Value(): the value in units, rounded up to an integer exactly
 * as Kubernetes rounds it. Returns KUBE_OK, or KUBE_ERANGE when the result
 * does not fit an int64 (*out untouched). */
int kube_quantity_value(const kube_quantity *q, int64_t *out);

/* Quantity.MilliValue(): the value in thousandths, rounded up as
 * Kubernetes does ("100m" -> 100, "1" -> 1000, "0.1m" -> 1). Returns KUBE_OK
 * or KUBE_ERANGE (e.g. "9223372036854775807" has no int64 milli value). */
int kube_quantity_milli_value(const kube_quantity *q, int64_t *out);

/* A quantity as Quantity.UnmarshalJSON reads it: a JSON string (surrounding
 * whitespace trimmed) or a JSON number; JSON null is zero. Anything else,
 * or an unparsable string, is KUBE_EPARSE. */
int kube_quantity_from_json(const cJSON *v, kube_quantity *out);

/* *acc += *q (exact; saturates at KUBE_QUANTITY_HUGE). */
void kube_quantity_add(kube_quantity *acc, const kube_quantity *q);

/* Quantity.Cmp: -1, 0 or 1. */
int kube_quantity_cmp(const kube_quantity *a, const kube_quantity *b);

#endif
