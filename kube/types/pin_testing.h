/*
 * kube/types/pin_testing.h - the test hooks of kube/types/pin.h: entry
 * points the tests use and the daemons never call.
 *
 * Threads: thread-safe. Memory: nothing is allocated.
 */
#ifndef KUBE_PIN_TESTING_H
#define KUBE_PIN_TESTING_H

#include <stdint.h>

/* From now on every pin write of this process records pinned-at its wall
 * clock plus seconds (a writer whose clock is ahead: > 0); 0 again for
 * the real clock. Nothing orders decisions by it (kube/types/pin.h). */
void kube_pin_clock_offset_set(int64_t seconds);

#endif
