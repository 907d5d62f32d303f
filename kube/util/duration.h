/*
 * kube/util/duration.h - Go's time.Duration text, the one parser and formatter
 * of durations in configuration files and flags (both daemons): parsed as
 * time.ParseDuration parses it ("15s", "1m30s", "1.5h", "300ms", "2h45m0.5s",
 * "-2s", "0"; units ns, us, µs, ms, s, m, h) and formatted as
 * Duration.String() does; and apimachinery's HumanDuration, the ages
 * kubectl prints.
 *
 * Threads: pure functions. Memory: nothing is allocated.
 */
#ifndef KUBE_DURATION_H
#define KUBE_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Parses s into *ms, rounded toward zero to milliseconds. Returns KUBE_OK,
 * or KUBE_EINVAL leaving *ms unchanged (not a duration, or out of range). */
int kube_duration_parse(const char *s, int64_t *ms);
/* Formats ms like Go's time.Duration.String() ("15s", "1m30s", "1.5s",
 * "500ms", "0s") into out (size n). */
void kube_duration_format(int64_t ms, char *out, size_t n);

/* duration.HumanDuration of k8s.io/apimachinery (kubectl's AGE column):
 * "45s", "5m30s", "3h", "2d4h", "3y", ... of secs seconds ("0s" for -1,
 * "<invalid>" below), into out (size n). */
void kube_duration_human(int64_t secs, char *out, size_t n);

#endif
