/*
 * kube/util/clock.h - the clocks: monotonic time for intervals and deadlines,
 * wall time as Kubernetes writes it (RFC 3339).
 *
 * Threads: every function is thread-safe. Memory: nothing is allocated.
 */
#ifndef KUBE_CLOCK_H
#define KUBE_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Monotonic clock in milliseconds and nanoseconds. */
int64_t kube_now_ms(void);
int64_t kube_now_ns(void);

/* *ts becomes clock's current time plus ms (ms >= 0), normalised: the
 * absolute deadline pthread_cond_timedwait() takes on a condition variable
 * that uses that clock (CLOCK_MONOTONIC, or CLOCK_REALTIME for the
 * default attribute). */
void kube_deadline_after(struct timespec *ts, clockid_t clock, int64_t ms);

/* The wall clock (CLOCK_REALTIME) in microseconds since the epoch. */
int64_t kube_wall_us(void);

/* The one RFC 3339 formatter (kube_time_parse() in kube/codec/object.h is
 * the one parser): unix_us, UTC, as metav1.MicroTime marshals it with
 * micro ("2026-01-02T10:00:00.000001Z"), else as metav1.Time
 * ("2026-01-02T10:00:00Z", the fraction dropped). Into out (n bytes; 32
 * suffice; truncated when smaller). */
void kube_time_format(int64_t unix_us, int micro, char *out, size_t n);

/* Wall clock formatted as RFC 3339 with microseconds ("...T10:00:00.000000Z"),
 * into out (at least 32 bytes). */
void kube_time_rfc3339_micro(char *out, size_t n);
/* Wall clock formatted as RFC 3339 seconds ("...T10:00:00Z"). */
void kube_time_rfc3339(char *out, size_t n);

#endif
