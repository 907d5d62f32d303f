/*
 * kube/util/log.c - klog-style logging: klog's text header or
 * component-base's JSON object per line, --v and --vmodule, and the Logs
 * flag set. The contract is in log.h.
 */
#include "kube/util/log.h"

#include <fnmatch.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "kube/util/buf.h"
#include "kube/util/errors.h"
#include "kube/util/log_testing.h"

#define VMODULE_MAX 32
#define PATTERN_MAX 128

typedef struct vmodule_filter {
    char pattern[PATTERN_MAX];
    int level;
    int full_path; /* the pattern holds a '/': matched against the path */
} vmodule_filter;

static atomic_int log_verbosity;
static atomic_int log_format;
static vmodule_filter vmodule[VMODULE_MAX];
static atomic_int n_vmodule;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *log_out; /* NULL: stderr */

void klog_set_verbosity(int v)
{
    atomic_store(&log_verbosity, v);
}

int klog_verbosity(void)
{
    return atomic_load(&log_verbosity);
}

void klog_set_format(klog_format f)
{
    atomic_store(&log_format, (int)f);
}

void klog_testing_set_output(FILE *f)
{
    pthread_mutex_lock(&log_lock);
    log_out = f;
    pthread_mutex_unlock(&log_lock);
}

/* ------------------------------------------------------------------ */
/* --vmodule                                                           */
/* ------------------------------------------------------------------ */

#define VMODULE_SYNTAX "syntax error: expect comma-separated list of filename=N"

/* One "pattern=N" of len bytes at s into *f (klog's moduleSpec.Set).
 * KUBE_OK, 1 (level 0: no filter) or KUBE_ECONFIG (*why set). */
static int parse_filter(const char *s, size_t len, vmodule_filter *f, const char **why)
{
    const char *eq = memchr(s, '=', len);
    size_t nlevel = eq ? len - (size_t)(eq - s) - 1 : 0;
    char level[16];
    int64_t v;

    *why = VMODULE_SYNTAX;
    if (!eq || eq == s || (size_t)(eq - s) >= PATTERN_MAX || !nlevel || nlevel >= sizeof(level))
        return KUBE_ECONFIG;
    snprintf(level, sizeof(level), "%.*s", (int)nlevel, eq + 1);
    if (kube_parse_int64(level, INT32_MIN, INT32_MAX, &v) != KUBE_OK)
        return KUBE_ECONFIG;
    if (v < 0) {
        *why = "negative value for vmodule level";
        return KUBE_ECONFIG;
    }
    snprintf(f->pattern, sizeof(f->pattern), "%.*s", (int)(eq - s), s);
    f->level = (int)v;
    f->full_path = strchr(f->pattern, '/') != NULL;
    return v == 0 ? 1 : KUBE_OK;
}

/* Parses spec into out (at most VMODULE_MAX filters); *n the count. Empty
 * entries and level 0 are skipped, as klog skips them. KUBE_OK or
 * KUBE_ECONFIG with *why. */
static int parse_vmodule(const char *spec, vmodule_filter *out, int *n, const char **why)
{
    const char *p = spec;
    int rc;

    *n = 0;
    while (p && *p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len && *n == VMODULE_MAX) {
            *why = "too many --vmodule patterns";
            return KUBE_ECONFIG;
        }
        rc = len ? parse_filter(p, len, &out[*n], why) : 1;
        if (rc == KUBE_ECONFIG)
            return rc;
        *n += rc == KUBE_OK;
        p = comma ? comma + 1 : NULL;
    }
    return KUBE_OK;
}

int klog_set_vmodule(const char *spec, char *err, size_t errlen)
{
    vmodule_filter parsed[VMODULE_MAX];
    const char *why = NULL;
    int n = 0;

    if (parse_vmodule(spec, parsed, &n, &why) != KUBE_OK) {
        snprintf(err, errlen, "%s", why);
        return KUBE_ECONFIG;
    }
    atomic_store(&n_vmodule, 0);
    memcpy(vmodule, parsed, sizeof(parsed[0]) * (size_t)n);
    atomic_store(&n_vmodule, n);
    return KUBE_OK;
}

/* file without its directory (unless full) and without ".c"/".h". */
static void module_name(const char *file, int full, char *out, size_t n)
{
    const char *slash = strrchr(file, '/');
    const char *base = (!full && slash) ? slash + 1 : file;
    size_t len = strlen(base);

    if (len > 2 && base[len - 2] == '.' && (base[len - 1] == 'c' || base[len - 1] == 'h'))
        len -= 2;
    snprintf(out, n, "%.*s", (int)len, base);
}

int klog_v_enabled(const char *file, int level)
{
    int n = atomic_load(&n_vmodule);
    char name[512];

    if (atomic_load(&log_verbosity) >= level)
        return 1;
    for (int i = 0; i < n; i++) {
        module_name(file, vmodule[i].full_path, name, sizeof(name));
        if (fnmatch(vmodule[i].pattern, name, vmodule[i].full_path ? FNM_PATHNAME : 0) == 0)
            return vmodule[i].level >= level;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Lines                                                               */
/* ------------------------------------------------------------------ */

/* The caller as zap's short caller prints it: "dir/file.c:123". */
static void short_caller(const char *file, int line, char *out, size_t n)
{
    const char *last = strrchr(file, '/'), *start = file;

    for (const char *p = file; last && p < last; p++)
        if (*p == '/')
            start = p + 1;
    snprintf(out, n, "%s:%d", start, line);
}

/* klog's header: "I1121 10:00:00.000000   12345 file.c:123] ". */
static void text_header(kube_buf *b, char severity, const struct timeval *tv, const char *file,
                        int line)
{
    const char *slash = strrchr(file, '/');
    struct tm tm;

    localtime_r(&tv->tv_sec, &tm);
    kube_buf_printf(b, "%c%02d%02d %02d:%02d:%02d.%06ld %7ld %s:%d] ", severity, tm.tm_mon + 1,
                    tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)tv->tv_usec,
                    (long)syscall(SYS_gettid), slash ? slash + 1 : file, line);
}

/* The JSON members before the key/values: ts, caller, msg, then v (info)
 * or err (errors). */
static void json_head(kube_buf *b, char severity, int v, const struct timeval *tv, const char *file,
                      int line, const char *msg, const char *err)
{
    char caller[256];

    short_caller(file, line, caller, sizeof(caller));
    kube_buf_printf(b, "{\"ts\":%ld.%06ld,\"caller\":", (long)tv->tv_sec, (long)tv->tv_usec);
    kube_buf_put_json_string(b, caller);
    kube_buf_puts(b, ",\"msg\":");
    kube_buf_put_json_string(b, msg);
    if (severity == 'E' || severity == 'F') {
        if (err) {
            kube_buf_puts(b, ",\"err\":");
            kube_buf_put_json_string(b, err);
        }
    } else {
        kube_buf_printf(b, ",\"v\":%d", v);
    }
}

/* One key/value member or pair (value NULL: null / <nil>). */
static void put_kv(kube_buf *b, int json, const char *key, const char *value)
{
    if (json) {
        kube_buf_puts(b, ",");
        kube_buf_put_json_string(b, key);
        kube_buf_puts(b, ":");
    } else {
        kube_buf_printf(b, " %s=", key);
    }
    if (value)
        kube_buf_put_json_string(b, value);
    else
        kube_buf_puts(b, json ? "null" : "<nil>");
}

/* Writes the line in b (a newline added) to the output, whole. */
static void emit(kube_buf *b)
{
    if (!b->data)
        return;
    kube_buf_puts(b, "\n");
    pthread_mutex_lock(&log_lock);
    fwrite(b->data, 1, b->len, log_out ? log_out : stderr);
    fflush(log_out ? log_out : stderr);
    pthread_mutex_unlock(&log_lock);
}

/* One line: structured (kv non-NULL: msg quoted, then err and kv) or
 * printf-style (msg as is). */
static void write_line(char severity, int v, const char *file, int line, const char *err,
                       const char *msg, va_list *kv)
{
    int json = atomic_load(&log_format) == KLOG_FORMAT_JSON;
    kube_buf b = KUBE_BUF_INIT;
    struct timeval tv;
    const char *key;

    gettimeofday(&tv, NULL);
    if (json)
        json_head(&b, severity, v, &tv, file, line, msg, err);
    else
        text_header(&b, severity, &tv, file, line);
    if (!json && kv)
        kube_buf_put_json_string(&b, msg);
    else if (!json)
        kube_buf_puts(&b, msg);
    if (!json && err)
        put_kv(&b, 0, "err", err);
    while (kv && (key = va_arg(*kv, const char *)) != NULL)
        put_kv(&b, json, key, va_arg(*kv, const char *));
    if (json)
        kube_buf_puts(&b, "}");
    emit(&b);
    kube_buf_free(&b);
}

/* Formats fmt, then writes it as a printf-style line. */
static void write_formatted(char severity, int v, const char *file, int line, const char *fmt,
                            va_list ap)
{
    char msg[2048];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    write_line(severity, v, file, line, NULL, msg, NULL);
}

void klog_write(char severity, const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    write_formatted(severity, 0, file, line, fmt, ap);
    va_end(ap);
}

void klog_write_v(char severity, int v, const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    write_formatted(severity, v, file, line, fmt, ap);
    va_end(ap);
}

void klog_write_s(char severity, int v, const char *file, int line, const char *err,
                  const char *msg, ...)
{
    va_list ap;

    va_start(ap, msg);
    write_line(severity, v, file, line, err, msg, &ap);
    va_end(ap);
}

/* ------------------------------------------------------------------ */
/* The Logs flag set                                                   */
/* ------------------------------------------------------------------ */

/* --vmodule: checked now, applied by klog_options_apply(). */
static int set_vmodule(void *dst, const kube_flag *f, const char *value, char *why, size_t n)
{
    vmodule_filter parsed[VMODULE_MAX];
    char **field = (char **)((char *)dst + f->offset);
    const char *reason = NULL;
    char *copy;
    int count;

    if (parse_vmodule(value, parsed, &count, &reason) != KUBE_OK) {
        snprintf(why, n, "%s", reason);
        return KUBE_ECONFIG;
    }
    if (!(copy = kube_strdup(value)))
        return KUBE_ENOMEM;
    free(*field);
    *field = copy;
    return KUBE_OK;
}

#define LO(field) offsetof(klog_options, field)

static const kube_flag log_flags[] = {
    {"logging-format", KUBE_FLAG_STRING, LO(format), 0, 0, NULL,
     "Sets the log format. Permitted formats: \"json\", \"text\". (default \"text\")", NULL},
    {"v", KUBE_FLAG_INT, LO(verbosity), 0, 1 << 30, "Level", "number for the log level verbosity",
     NULL},
    {"vmodule", KUBE_FLAG_CUSTOM, LO(vmodule), 0, 0, "pattern=N,...",
     "comma-separated list of pattern=N settings for file-filtered logging", set_vmodule},
};

kube_flag_set klog_flag_set(klog_options *o)
{
    kube_flag_set set = {"Logs", log_flags, sizeof(log_flags) / sizeof(log_flags[0]), o};
    return set;
}

int klog_options_apply(const klog_options *o, char *err, size_t errlen)
{
    klog_format format = KLOG_FORMAT_TEXT;

    if (o->format && strcmp(o->format, "text")) {
        if (strcmp(o->format, "json")) {
            snprintf(err, errlen,
                     "format: Unsupported value: \"%s\": supported values: \"json\", \"text\"",
                     o->format);
            return KUBE_ECONFIG;
        }
        format = KLOG_FORMAT_JSON;
    }
    if (klog_set_vmodule(o->vmodule, err, errlen) != KUBE_OK)
        return KUBE_ECONFIG;
    klog_set_format(format);
    klog_set_verbosity(o->verbosity);
    return KUBE_OK;
}

void klog_options_free(klog_options *o)
{
    free(o->vmodule);
    free(o->format);
    o->vmodule = o->format = NULL;
}
