/*
 * scheduler/plugins/helper.c - score normalisation, tolerations, resource
 * names and args field errors shared by the built-in plugins.
 */
#include "plugins/helper.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kube/errors.h"
#include "kube/selector.h"

void plugin_default_normalize_score(int64_t max_priority, int reverse, fw_node_score *scores,
                                    size_t n)
{
    int64_t max_count = 0;
    for (size_t i = 0; i < n; i++)
        if (scores[i].score > max_count)
            max_count = scores[i].score;
    if (max_count == 0) {
        for (size_t i = 0; reverse && i < n; i++)
            scores[i].score = max_priority;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t s = max_priority * scores[i].score / max_count;
        scores[i].score = reverse ? max_priority - s : s;
    }
}

int plugin_tolerations_tolerate(const kube_toleration *tols, size_t n, const kube_taint *taint)
{
    for (size_t i = 0; i < n; i++)
        if (kube_toleration_tolerates(&tols[i], taint))
            return 1;
    return 0;
}

int plugin_is_extended_resource_name(const char *name)
{
    static const char prefix[] = "requests.";
    char quota[320];

    if (!strchr(name, '/') || strstr(name, "kubernetes.io/"))
        return 0; /* native */
    if (strncmp(name, prefix, sizeof(prefix) - 1) == 0)
        return 0;
    if ((size_t)snprintf(quota, sizeof(quota), "%s%s", prefix, name) >= sizeof(quota))
        return 0; /* far beyond a qualified name's 316 characters */
    return kube_is_qualified_name(quota);
}

/* ------------------------------------------------------------------ */
/* apimachinery's validation messages                                  */
/* ------------------------------------------------------------------ */

#define QUALIFIED_NAME_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define QUALIFIED_NAME_MSG                                                               \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end " \
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "    \
    "regex used for validation is '" QUALIFIED_NAME_FMT "')"
#define DNS1123_SUBDOMAIN_MSG                                                              \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, " \
    "'-' or '.', and must start and end with an alphanumeric character (e.g. "            \
    "'example.com', regex used for validation is "                                       \
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define LABEL_VALUE_MSG                                                                      \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' " \
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "   \
    "'my_value',  or '12345', regex used for validation is '(" QUALIFIED_NAME_FMT ")?')"

static int is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$ over s[0..n) */
static int matches_name_part(const char *s, size_t n)
{
    if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

/* One DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])? */
static int matches_dns_label(const char *s, size_t n)
{
    if (n == 0 || s[0] == '-' || s[n - 1] == '-')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return 0;
    return 1;
}

static int matches_dns_subdomain(const char *s, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.')
            continue;
        if (!matches_dns_label(s + start, i - start))
            return 0;
        start = i + 1;
    }
    return 1;
}

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

int plugin_qualified_name_msgs(const char *value, const char *sep, char *out, size_t n)
{
    msg_out m = {out, n, 0, sep, 0};
    const char *slash = strchr(value, '/'), *name = value;

    out[0] = '\0';
    if (slash && strchr(slash + 1, '/')) {
        msg_add(&m, "a qualified name ", QUALIFIED_NAME_MSG
                " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
        return m.count;
    }
    if (slash) {
        size_t plen = (size_t)(slash - value);
        name = slash + 1;
        if (plen == 0)
            msg_add(&m, "prefix part ", "must be non-empty");
        else {
            if (plen > 253)
                msg_add(&m, "prefix part ", "must be no more than 253 characters");
            if (!matches_dns_subdomain(value, plen))
                msg_add(&m, "prefix part ", DNS1123_SUBDOMAIN_MSG);
        }
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

int plugin_label_value_msgs(const char *value, const char *sep, char *out, size_t n)
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

/* ------------------------------------------------------------------ */
/* Field errors                                                        */
/* ------------------------------------------------------------------ */

/* 1 when msg already is one of the ", "-joined messages of e. */
static int seen(const plugin_field_errs *e, const char *msg)
{
    size_t len = strlen(msg);
    const char *p = e->text.data;
    while (p && (p = strstr(p, msg)) != NULL) {
        int starts = p == e->text.data || (p >= e->text.data + 2 && p[-2] == ',' && p[-1] == ' ');
        int ends = p[len] == '\0' || (p[len] == ',' && p[len + 1] == ' ');
        if (starts && ends)
            return 1;
        p++;
    }
    return 0;
}

void plugin_field_errs_add(plugin_field_errs *e, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (seen(e, msg))
        return;
    if ((e->n && kube_buf_puts(&e->text, ", ") != KUBE_OK) ||
        kube_buf_puts(&e->text, msg) != KUBE_OK)
        e->oom = 1;
    e->n++;
}

int plugin_field_errs_finish(plugin_field_errs *e, char *err, size_t errlen)
{
    int rc = KUBE_OK;
    if (e->oom)
        rc = KUBE_ENOMEM;
    else if (e->n == 1)
        rc = KUBE_ECONFIG, snprintf(err, errlen, "%s", e->text.data);
    else if (e->n > 1)
        rc = KUBE_ECONFIG, snprintf(err, errlen, "[%s]", e->text.data);
    plugin_field_errs_free(e);
    return rc;
}

void plugin_field_errs_free(plugin_field_errs *e)
{
    kube_buf_free(&e->text);
    e->n = 0;
    e->oom = 0;
}

const char *plugin_args_path(char *out, size_t n, const char *path, const char *key, long index)
{
    if (!key)
        snprintf(out, n, "%s[%ld]", path, index);
    else if (!path || !*path)
        snprintf(out, n, "%s", key);
    else
        snprintf(out, n, "%s.%s", path, key);
    return out;
}

void plugin_args_unknown_fields(const cJSON *obj, const char *path, const char *const *known,
                                plugin_field_errs *e)
{
    const cJSON *it;

    cJSON_ArrayForEach(it, obj) {
        size_t i = 0;
        while (known[i] && strcmp(known[i], it->string) != 0)
            i++;
        if (known[i])
            continue;
        if (path && *path)
            plugin_field_errs_add(e, "%s: unknown field \"%s\"", path, it->string);
        else
            plugin_field_errs_add(e, "unknown field \"%s\"", it->string);
    }
}

int plugin_args_object(const cJSON *obj, const char *path, const char *const *known,
                       plugin_field_errs *e)
{
    if (!obj || cJSON_IsNull(obj))
        return 0;
    if (!cJSON_IsObject(obj)) {
        if (*path)
            plugin_field_errs_add(e, "%s: expected an object", path);
        else
            plugin_field_errs_add(e, "expected an object");
        return 0;
    }
    plugin_args_unknown_fields(obj, path, known, e);
    return 1;
}

int plugin_args_int(const cJSON *obj, const char *path, const char *key, int64_t min, int64_t max,
                    int64_t def, int64_t *out, plugin_field_errs *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char p[256];

    *out = def;
    if (!v || cJSON_IsNull(v))
        return 1;
    if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int64_t)v->valuedouble ||
        v->valuedouble < (double)min || v->valuedouble > (double)max) {
        plugin_field_errs_add(e, "%s: expected an integer",
                              plugin_args_path(p, sizeof(p), path, key, 0));
        return 0;
    }
    *out = (int64_t)v->valuedouble;
    return 1;
}

int plugin_args_str(const cJSON *obj, const char *path, const char *key, const char *def,
                    const char **out, plugin_field_errs *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char p[256];

    *out = def;
    if (!v || cJSON_IsNull(v))
        return 1;
    if (!cJSON_IsString(v)) {
        plugin_field_errs_add(e, "%s: expected a string",
                              plugin_args_path(p, sizeof(p), path, key, 0));
        return 0;
    }
    *out = v->valuestring;
    return 1;
}

int plugin_args_array(const cJSON *obj, const char *path, const char *key, const cJSON **out,
                      plugin_field_errs *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char p[256];

    *out = NULL;
    if (!v || cJSON_IsNull(v))
        return 1;
    if (!cJSON_IsArray(v)) {
        plugin_field_errs_add(e, "%s: expected an array",
                              plugin_args_path(p, sizeof(p), path, key, 0));
        return 0;
    }
    *out = v;
    return 1;
}
