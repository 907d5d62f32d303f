/*
 * scheduler/framework/parallelize.h - kube-scheduler's parallelize package:
 * run fn(i) for i in [0, n) on a fixed pool of `parallelism` threads, in
 * chunks of chunkSizeFor(n, parallelism) = max(1, min(sqrt(n),
 * n/parallelism + 1)) pieces, handed out in increasing order.
 *
 * Chunk sizes follow `parallelism` exactly as kube-scheduler, but at most
 * one thread per online CPU runs chunks (the caller plus min(parallelism,
 * CPUs) - 1 pool threads): more runners than CPUs only add wake-ups and
 * context switches, which cost scheduler CPU time.
 *
 * Jobs of fewer than FW_PARALLEL_MIN_PIECES pieces (Normalize over a few
 * plugins, Score over the feasible nodes, Filter on up to 8191 nodes, which
 * with `stop` usually ends after numFeasibleNodesToFind nodes) run on the
 * caller alone, in the same chunk order: waking a helper and waiting for it
 * costs more CPU (two context switches, cold caches) than it saves on such
 * jobs (bench-scheduler: 0.62 -> 0.34 ms CPU/pod at 1000 nodes, 0.65 ->
 * 0.54 at 5000). Results do not depend on who runs a piece.
 *
 * The calling thread takes part and fw_parallelize() returns when every
 * chunk is done. One fw_parallelize() at a time per parallelizer (calls from
 * several threads are serialised by a lock); fn must not call
 * fw_parallelize() on the same parallelizer.
 *
 * Cancellation: when `stop` is non-NULL, a chunk is not started once
 * atomic_load(stop) is non-zero; chunks already started run to the end
 * (pieces within a chunk are never skipped). So if a caller sets *stop
 * after seeing enough results, every piece BEFORE the first skipped chunk
 * has run - what makes the parallel filter deterministic.
 *
 * Memory: fw_parallelizer_new() allocates the pool (threads start at once);
 * fw_parallelizer_free() joins them and frees it.
 */
#ifndef FW_PARALLELIZE_H
#define FW_PARALLELIZE_H

#include <stdatomic.h>
#include <stddef.h>

typedef struct fw_parallelizer fw_parallelizer;

/* Jobs of fewer pieces run serially on the caller (see above). */
#define FW_PARALLEL_MIN_PIECES 8192

/* parallelism >= 1 (kube-scheduler's default is 16). Returns KUBE_OK,
 * KUBE_EINVAL or KUBE_ENOMEM. */
int fw_parallelizer_new(int parallelism, fw_parallelizer **out);
void fw_parallelizer_free(fw_parallelizer *p);

/* The chunk size kube-scheduler uses for n pieces. */
size_t fw_chunk_size_for(size_t n, int parallelism);

/* Runs fn(ud, i) for every i in [0, n) (see above). p NULL runs serially
 * on the caller. */
void fw_parallelize(fw_parallelizer *p, size_t n, void (*fn)(void *ud, size_t i), void *ud,
                    atomic_int *stop);
/* The same, then done(ud) (when not NULL) on every thread that took part -
 * the caller included, even when it ran no piece - after its last piece and
 * before fw_parallelize_done() returns (to merge per-thread results). */
void fw_parallelize_done(fw_parallelizer *p, size_t n, void (*fn)(void *ud, size_t i), void *ud,
                         atomic_int *stop, void (*done)(void *ud));

#endif
