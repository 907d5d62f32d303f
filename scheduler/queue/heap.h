/*
 * scheduler/queue/heap.h - the binary heap of queued pods that activeQ and
 * backoffQ are made of (kube-scheduler's internal/heap), ordered by a less
 * function the queue supplies. Each pod records its index in the heap
 * (sched_queued_pod.heap_index), so removal and re-ordering are O(log n).
 *
 * Threads: none of its own; the queue's lock covers it.
 * Memory: the heap owns its array (sched_heap_free() frees it), never the
 * pods it orders.
 */
#ifndef SCHED_HEAP_H
#define SCHED_HEAP_H

#include <stddef.h>

struct sched_queued_pod;

/* 1 when a orders before b. */
typedef int (*sched_heap_less_fn)(void *ud, const struct sched_queued_pod *a,
                                  const struct sched_queued_pod *b);

typedef struct sched_heap {
    struct sched_queued_pod **a;
    size_t n, cap;
    sched_heap_less_fn less;
    void *ud;
} sched_heap;

/* An empty heap ordered by less(ud, a, b). */
void sched_heap_init(sched_heap *h, sched_heap_less_fn less, void *ud);
/* Frees the array (not the pods); the heap is empty afterwards. */
void sched_heap_free(sched_heap *h);
/* Adds qp. KUBE_OK, or KUBE_ENOMEM leaving the heap unchanged. */
int sched_heap_push(sched_heap *h, struct sched_queued_pod *qp);
/* Removes qp, which must be in h. */
void sched_heap_remove(sched_heap *h, struct sched_queued_pod *qp);
/* Restores the order after qp's sort key changed (qp in h). */
void sched_heap_fix(sched_heap *h, struct sched_queued_pod *qp);
/* The first pod, or NULL when empty. */
struct sched_queued_pod *sched_heap_peek(const sched_heap *h);

#endif
