/*
 * kube/util/log.c - klog-style logging, as kube-scheduler prints it: *   I1121
 * 10:00:00.000000   12345 scheduler.c:123] message * Severity letters are I,
 * W, E and F. The contract is in log.h.
 */
#include "kube/util/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static atomic_int log_verbosity;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void klog_set_verbosity(int v)
{
    atomic_store(&log_verbosity, v);
}

int klog_verbosity(void)
{
    return atomic_load(&log_verbosity);
}

static const char *log_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

void klog_write(char severity, const char *file, int line, const char *fmt, ...)
{
    char msg[2048];
    struct timeval tv;
    struct tm tm;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    gettimeofday(&tv, NULL);
    localtime_r(&tv.tv_sec, &tm);
    pthread_mutex_lock(&log_lock);
    fprintf(stderr, "%c%02d%02d %02d:%02d:%02d.%06ld %7ld %s:%d] %s\n", severity, tm.tm_mon + 1,
            tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)tv.tv_usec,
            (long)syscall(SYS_gettid), log_basename(file), line, msg);
    pthread_mutex_unlock(&log_lock);
}
