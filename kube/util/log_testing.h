/*
 * kube/util/log_testing.h - a test hook of kube/util/log.h: where lines go.
 * Not for daemons.
 */
#ifndef KUBE_LOG_TESTING_H
#define KUBE_LOG_TESTING_H

#include <stdio.h>

/* Sends log lines to f (borrowed; NULL: back to stderr). */
void klog_testing_set_output(FILE *f);

int klog_verbosity(void);

#endif
