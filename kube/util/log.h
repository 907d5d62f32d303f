/*
 * kube/util/log.h - klog-style logging, as kube-scheduler prints it. The
 * text format (the default):
 *
 *   I1121 10:00:00.000000   12345 scheduler.c:123] message
 *
 * and, with --logging-format=json, component-base's JSON shape, one object
 * a line:
 *
 *   {"ts":1700000000.123456,"caller":"scheduler.c:123","msg":"message","v":0}
 *
 * Severity letters are I, W, E and F. Verbosity is the `-v`/`--v` flag:
 * KLOG_V(n) logs only when the verbosity is at least n, or when --vmodule
 * gives the calling file a level of at least n (klog's "pattern=N,...":
 * the pattern is a glob matched against the file's base name without ".c",
 * or against its whole path without ".c" when it holds a '/'; the first
 * matching pattern decides). Structured lines (klog's InfoS/ErrorS) carry
 * key/value pairs: `"msg" key="value"` in text, extra members in JSON;
 * errors add "err". Lines are written to stderr whole, under a lock, so
 * threads never interleave within a line. The column after the time is
 * the thread id, as klog prints it.
 *
 * The "Logs flags" set (-v, --vmodule, --logging-format) is
 * klog_flag_set(): both daemons list it in their --help.
 *
 * Threads: logging is thread-safe. klog_set_vmodule(), klog_set_format()
 * and klog_options_apply() are meant for start-up, before other threads
 * log.
 *
 * Secrets (tokens, keys) must never be passed to these functions.
 * Memory: nothing is allocated that the caller must free, except the
 * strings of a klog_options (klog_options_free()).
 */
#ifndef KUBE_LOG_H
#define KUBE_LOG_H

#include <stdarg.h>
#include <stddef.h>

#include "kube/util/flags.h"

typedef enum klog_format {
    KLOG_FORMAT_TEXT = 0,
    KLOG_FORMAT_JSON,
} klog_format;

/* Sets the verbosity (the --v flag). Thread-safe. */
void klog_set_verbosity(int v);
/* Sets the output format. */
void klog_set_format(klog_format f);
/* Sets --vmodule ("pattern=N,..."; NULL or "" clears it). KUBE_OK, or
 * KUBE_ECONFIG with klog's message in err (the previous setting kept). */
int klog_set_vmodule(const char *spec, char *err, size_t errlen);
/* 1 when a KLOG_V(level) in file logs: the verbosity, else --vmodule. */
int klog_v_enabled(const char *file, int level);

/* Writes one line at verbosity 0. Use the macros below, which fill in file
 * and line. */
void klog_write(char severity, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Writes one line at verbosity v (JSON's "v"). */
void klog_write_v(char severity, int v, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Writes one structured line: msg, then err (NULL: none), then the
 * NULL-terminated list of key, value string pairs (a NULL value prints
 * as null / <nil>). */
void klog_write_s(char severity, int v, const char *file, int line, const char *err,
                  const char *msg, ...);

#define KLOG_INFO(...) klog_write('I', __FILE__, __LINE__, __VA_ARGS__)
#define KLOG_WARN(...) klog_write('W', __FILE__, __LINE__, __VA_ARGS__)
#define KLOG_ERROR(...) klog_write('E', __FILE__, __LINE__, __VA_ARGS__)
/* Logs at verbosity n: KLOG_V(4, "pod %s", name). */
#define KLOG_V(n, ...)                                               \
    do {                                                             \
        if (klog_v_enabled(__FILE__, (n)))                           \
            klog_write_v('I', (n), __FILE__, __LINE__, __VA_ARGS__); \
    } while (0)
/* klog.InfoS / ErrorS: a message then key, value strings (none or more):
 * KLOG_INFOS("Bound pod", "pod", name, "node", node);
 * KLOG_ERRORS(err, "command failed"). */
#define KLOG_INFOS(...) klog_write_s('I', 0, __FILE__, __LINE__, NULL, __VA_ARGS__, NULL)
#define KLOG_ERRORS(err, ...) klog_write_s('E', 0, __FILE__, __LINE__, err, __VA_ARGS__, NULL)

/* The Logs flags of a daemon (component-base's logs options). */
typedef struct klog_options {
    int verbosity; /* -v / --v: 0 */
    char *vmodule; /* --vmodule: NULL (owned) */
    char *format;  /* --logging-format: NULL means "text" (owned) */
} klog_options;

/* The "Logs" flag set bound to o (zeroed by the caller first): -v/--v,
 * --vmodule, --logging-format. --vmodule's syntax is checked while parsing.
 * The set's table is static; o is borrowed. */
kube_flag_set klog_flag_set(klog_options *o);
/* Applies o to the logger: verbosity, vmodule, format. KUBE_OK or
 * KUBE_ECONFIG (an unsupported format; the message in err, as
 * component-base words it). */
int klog_options_apply(const klog_options *o, char *err, size_t errlen);
/* Frees o's strings. */
void klog_options_free(klog_options *o);

#endif
