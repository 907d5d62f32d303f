/*
 * kube/codec/validation.h - apimachinery's name validations
 * (k8s.io/apimachinery/pkg/util/validation): label keys and values
 * (qualified names), DNS-1123 subdomains, as predicates and with
 * apimachinery's messages, so callers word field errors as kube-apiserver
 * does.
 *
 * Pure functions, thread-safe. Messages are written to the caller's buffer
 * or are static strings.
 */
#ifndef KUBE_VALIDATION_H
#define KUBE_VALIDATION_H

#include <stddef.h>

#define KUBE_DNS1123_LABEL_MAX 63      /* validation.DNS1123LabelMaxLength */
#define KUBE_DNS1123_SUBDOMAIN_MAX 253 /* validation.DNS1123SubdomainMaxLength */

/* validation.IsQualifiedName (label keys): [prefix/]name, name <= 63
 * chars of [A-Za-z0-9._-] starting and ending alphanumeric, prefix a
 * DNS-1123 subdomain <= 253 chars. Returns 1 or 0. */
int kube_is_qualified_name(const char *s);

/* The messages explaining why value is not a qualified name (apimachinery's
 * IsQualifiedName messages, e.g. "name part must consist of alphanumeric
 * characters, ..."), joined with sep into out (size n, truncated; "" when
 * valid). Returns how many there are (0: valid). */
int kube_qualified_name_msgs(const char *value, const char *sep, char *out, size_t n);
/* validation.IsDNS1123Subdomain (object names such as a Node's): its
 * messages, static strings, in apimachinery's order into msgs ("must be no
 * more than 253 characters", then "a lowercase RFC 1123 subdomain must
 * consist of ..."). Returns how many (0: valid). */
int kube_dns1123_subdomain_msgs(const char *value, const char *msgs[2]);
/* validation.IsDNS1123Label (namespaces): its messages, static strings,
 * as kube_dns1123_subdomain_msgs ("must be no more than 63 characters",
 * "a lowercase RFC 1123 label must consist of ..."). Returns how many (0:
 * valid). */
int kube_dns1123_label_msgs(const char *value, const char *msgs[2]);
/* The same for IsValidLabelValue ("must be no more than 63 characters",
 * "a valid label must be an empty string or ..."). */
int kube_label_value_msgs(const char *value, const char *sep, char *out, size_t n);

/* validation.IsDNS1123Label (namespaces): at most 63 chars of [a-z0-9-]
 * starting and ending alphanumeric. Returns 1 or 0. */
int kube_is_dns1123_label(const char *s);
/* validation.IsDNS1123Subdomain (most object names): dot-separated
 * DNS-1123 labels, at most 253 chars, over s[0..n) (a decoded value may
 * hold a NUL before its end, which is invalid). Returns 1 or 0. */
int kube_is_dns1123_subdomain_n(const char *s, size_t n);

/* validation.IsValidLabelValue: "" or <= 63 chars of [A-Za-z0-9._-]
 * starting and ending alphanumeric. Returns 1 or 0. */
int kube_is_label_value(const char *s);

#endif
