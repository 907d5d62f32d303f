/*
 * kube/util/log.h - klog-style logging, as kube-scheduler prints it:
 *
 *   I1121 10:00:00.000000   12345 scheduler.c:123] message
 *
 * Severity letters are I, W, E and F. Verbosity is the `-v`/`--v` flag:
 * KLOG_V(n) logs only when the verbosity is at least n. Lines are written to
 * stderr whole, under a lock, so threads never interleave within a line.
 * The column after the time is the thread id, as klog prints it.
 *
 * Secrets (tokens, keys) must never be passed to these functions.
 * Memory: nothing is allocated that the caller must free.
 */
#ifndef KUBE_LOG_H
#define KUBE_LOG_H

#include <stdarg.h>

/* Sets the verbosity (the --v flag). Thread-safe. */
void klog_set_verbosity(int v);
int klog_verbosity(void);

/* Writes one line. Use the macros below, which fill in file and line. */
void klog_write(char severity, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define KLOG_INFO(...) klog_write('I', __FILE__, __LINE__, __VA_ARGS__)
#define KLOG_WARN(...) klog_write('W', __FILE__, __LINE__, __VA_ARGS__)
#define KLOG_ERROR(...) klog_write('E', __FILE__, __LINE__, __VA_ARGS__)
/* Logs at verbosity n: KLOG_V(4, "pod %s", name). */
#define KLOG_V(n, ...)                                        \
    do {                                                      \
        if (klog_verbosity() >= (n))                          \
            klog_write('I', __FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

#endif
