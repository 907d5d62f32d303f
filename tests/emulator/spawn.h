/*
 * tests/emulator/spawn.h - running a task on a thread of its own without
 * creating one each time: kube-apiserver serves every HTTP/2 stream on a
 * goroutine of its own, which costs next to nothing, where a new thread
 * per stream made the emulator spend most of its time in clone() and the
 * kernel, taking CPU from the process under test on a small machine.
 *
 * Threads that finished a task wait EMU_SPAWN_IDLE_MS for the next one,
 * then exit. A task never waits for a thread: when none is idle, a new
 * one starts, so a task that blocks for long (a watch) holds up no other.
 */
#ifndef STICKYVM_EMU_SPAWN_H
#define STICKYVM_EMU_SPAWN_H

#include <stddef.h>

#define EMU_SPAWN_IDLE_MS 2000

/* Runs fn(arg) on an idle pooled thread, or on a new one with a stack of
 * stack bytes. fn owns arg. Returns KUBE_OK, or KUBE_ENOMEM when no memory
 * or no thread was to be had (fn is then not run; arg stays the caller's). */
int emu_spawn(void (*fn)(void *arg), void *arg, size_t stack);

/* Threads emu_spawn created since start or the last reset (the counters'
 * "threads": {"started"}): what shows whether the pool is reused. */
long long emu_spawn_started(void);

/* Sets that count back to 0 (with the other counters). */
void emu_spawn_reset_started(void);

#endif
