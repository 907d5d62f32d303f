/*
 * kube/codec/validation.c - apimachinery's name validations
 * (k8s.io/apimachinery/pkg/util/validation) and their messages.
 */
#include "kube/codec/validation.h"

#include <stdio.h>
#include <string.h>

static int is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$ over s[0..n), any length */
static int matches_name_part(const char *s, size_t n)
{
    if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

/* a qualified name's name part: the pattern above, at most 63 chars */
static int is_qualified_part(const char *s, size_t n)
{
    return n <= 63 && matches_name_part(s, n);
}

static int is_dns_label_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* dot-separated [a-z0-9]([-a-z0-9]*[a-z0-9])? over s[0..n), any length */
static int matches_dns1123_subdomain(const char *s, size_t n)
{
    size_t start = 0;

    if (n == 0)
        return 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.') {
            if (!is_dns_label_char(s[i]) && s[i] != '-')
                return 0;
            continue;
        }
        if (i == start || !is_dns_label_char(s[start]) || !is_dns_label_char(s[i - 1]))
            return 0;
        start = i + 1;
    }
    return 1;
}

/* DNS-1123 subdomain: the pattern above, at most 253 chars */
static int is_dns1123_subdomain(const char *s, size_t n)
{
    return n <= KUBE_DNS1123_SUBDOMAIN_MAX && matches_dns1123_subdomain(s, n);
}

int kube_is_dns1123_subdomain_n(const char *s, size_t n)
{
    return s && is_dns1123_subdomain(s, n);
}

int kube_is_dns1123_label(const char *s)
{
    size_t n;

    if (!s)
        return 0;
    n = strlen(s);
    return n <= KUBE_DNS1123_LABEL_MAX && !memchr(s, '.', n) && matches_dns1123_subdomain(s, n);
}

int kube_is_qualified_name(const char *s)
{
    const char *slash;

    if (!s)
        return 0;
    slash = strchr(s, '/');
    if (!slash)
        return is_qualified_part(s, strlen(s));
    if (strchr(slash + 1, '/'))
        return 0;
    return is_dns1123_subdomain(s, (size_t)(slash - s)) &&
           is_qualified_part(slash + 1, strlen(slash + 1));
}

#define QUALIFIED_NAME_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define QUALIFIED_NAME_MSG                                                              \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end " \
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "     \
    "regex used for validation is '" QUALIFIED_NAME_FMT "')"
#define LABEL_VALUE_MSG                                                                      \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' " \
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "    \
    "'my_value',  or '12345', regex used for validation is '(" QUALIFIED_NAME_FMT ")?')"
#define DNS1123_SUBDOMAIN_MSG                                                             \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, " \
    "'-' or '.', and must start and end with an alphanumeric character (e.g. "            \
    "'example.com', regex used for validation is "                                        \
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

#define DNS1123_LABEL_MSG                                                                    \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', " \
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', " \
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"

/* Messages joined with a separator into a bounded buffer. */
typedef struct msg_out {
    char *out;
    size_t n, len;
    const char *sep;
    int count;
} msg_out;

static void msg_add(msg_out *m, const char *prefix, const char *msg)
{
    int w = snprintf(m->out + m->len, m->n - m->len, "%s%s%s", m->count ? m->sep : "", prefix, msg);
    if (w > 0)
        m->len = m->len + (size_t)w < m->n ? m->len + (size_t)w : m->n - 1;
    m->count++;
}

static void prefix_msgs(msg_out *m, const char *value, size_t plen)
{
    if (plen == 0) {
        msg_add(m, "prefix part ", "must be non-empty");
        return;
    }
    if (plen > 253)
        msg_add(m, "prefix part ", "must be no more than 253 characters");
    if (!matches_dns1123_subdomain(value, plen))
        msg_add(m, "prefix part ", DNS1123_SUBDOMAIN_MSG);
}

int kube_qualified_name_msgs(const char *value, const char *sep, char *out, size_t n)
{
    msg_out m = {out, n, 0, sep, 0};
    const char *slash = strchr(value, '/'), *name = value;

    out[0] = '\0';
    if (slash && strchr(slash + 1, '/')) {
        msg_add(&m, "a qualified name ",
                QUALIFIED_NAME_MSG
                " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
        return m.count;
    }
    if (slash) {
        prefix_msgs(&m, value, (size_t)(slash - value));
        name = slash + 1;
    }
    size_t len = strlen(name);
    if (len == 0)
        msg_add(&m, "name part ", "must be non-empty");
    else if (len > 63)
        msg_add(&m, "name part ", "must be no more than 63 characters");
    if (!matches_name_part(name, len))
        msg_add(&m, "name part ", QUALIFIED_NAME_MSG);
    return m.count;
}

int kube_dns1123_subdomain_msgs(const char *value, const char *msgs[2])
{
    size_t len = strlen(value);
    int n = 0;

    if (len > KUBE_DNS1123_SUBDOMAIN_MAX)
        msgs[n++] = "must be no more than 253 characters";
    if (!matches_dns1123_subdomain(value, len))
        msgs[n++] = DNS1123_SUBDOMAIN_MSG;
    return n;
}

int kube_dns1123_label_msgs(const char *value, const char *msgs[2])
{
    size_t len = strlen(value);
    int n = 0;

    if (len > KUBE_DNS1123_LABEL_MAX)
        msgs[n++] = "must be no more than 63 characters";
    if (memchr(value, '.', len) || !matches_dns1123_subdomain(value, len))
        msgs[n++] = DNS1123_LABEL_MSG;
    return n;
}

int kube_label_value_msgs(const char *value, const char *sep, char *out, size_t n)
{
    msg_out m = {out, n, 0, sep, 0};
    size_t len = strlen(value);

    out[0] = '\0';
    if (len > 63)
        msg_add(&m, "", "must be no more than 63 characters");
    if (len && !matches_name_part(value, len))
        msg_add(&m, "", LABEL_VALUE_MSG);
    return m.count;
}

int kube_is_label_value(const char *s)
{
    size_t n;

    if (!s)
        return 0;
    n = strlen(s);
    return n == 0 || is_qualified_part(s, n);
}
