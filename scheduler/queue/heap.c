/*
 * scheduler/queue/heap.c - the binary heap of queued pods (heap.h).
 */
#include "queue/heap.h"

#include <stdlib.h>

#include "kube/util/array.h"
#include "kube/util/errors.h"
#include "queue/queue.h"

void sched_heap_init(sched_heap *h, sched_heap_less_fn less, void *ud)
{
    *h = (sched_heap){NULL, 0, 0, less, ud};
}

void sched_heap_free(sched_heap *h)
{
    free(h->a);
    h->a = NULL;
    h->n = h->cap = 0;
}

/* Puts qp at index i and records it there. */
static void set_at(sched_heap *h, size_t i, sched_queued_pod *qp)
{
    h->a[i] = qp;
    qp->heap_index = i;
}

/* Moves the pod at i towards the root while it orders before its parent. */
static void sift_up(sched_heap *h, size_t i)
{
    sched_queued_pod *qp = h->a[i];

    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!h->less(h->ud, qp, h->a[parent]))
            break;
        set_at(h, i, h->a[parent]);
        i = parent;
    }
    set_at(h, i, qp);
}

/* Moves the pod at i towards the leaves while a child orders before it. */
static void sift_down(sched_heap *h, size_t i)
{
    sched_queued_pod *qp = h->a[i];

    for (;;) {
        size_t l = 2 * i + 1, best = i;
        const sched_queued_pod *bp = qp;
        if (l < h->n && h->less(h->ud, h->a[l], bp)) {
            best = l;
            bp = h->a[l];
        }
        if (l + 1 < h->n && h->less(h->ud, h->a[l + 1], bp))
            best = l + 1;
        if (best == i)
            break;
        set_at(h, i, h->a[best]);
        i = best;
    }
    set_at(h, i, qp);
}

int sched_heap_push(sched_heap *h, sched_queued_pod *qp)
{
    if (KUBE_ARRAY_RESERVE(h->a, h->cap, h->n + 1) != KUBE_OK)
        return KUBE_ENOMEM;
    h->a[h->n] = qp;
    qp->heap_index = h->n++;
    sift_up(h, qp->heap_index);
    return KUBE_OK;
}

void sched_heap_remove(sched_heap *h, sched_queued_pod *qp)
{
    size_t i = qp->heap_index;

    h->n--;
    if (i == h->n)
        return;
    set_at(h, i, h->a[h->n]);
    sched_heap_fix(h, h->a[i]);
}

void sched_heap_fix(sched_heap *h, sched_queued_pod *qp)
{
    size_t i = qp->heap_index;

    sift_down(h, i);
    sift_up(h, h->a[i] == qp ? i : qp->heap_index);
}

sched_queued_pod *sched_heap_peek(const sched_heap *h)
{
    return h->n ? h->a[0] : NULL;
}
