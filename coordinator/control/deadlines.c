/* A binary min-heap of deadlines whose entries remember where they are in it. */
#include "coordinator/control/deadlines.h"

#include <stdlib.h>

#include "proto/err.h"

void sm_deadlines_init(sm_deadlines *h)
{
    h->heap = NULL;
    h->n = h->cap = 0;
}

void sm_deadlines_fini(sm_deadlines *h)
{
    for (size_t i = 0; i < h->n; i++)
        h->heap[i]->slot = 0;
    free(h->heap);
    sm_deadlines_init(h);
}

static void place(sm_deadlines *h, size_t i, sm_deadline *d)
{
    h->heap[i] = d;
    d->slot = i + 1;
}

static void sift_up(sm_deadlines *h, size_t i)
{
    sm_deadline *d = h->heap[i];
    while (i > 0) {
        const size_t parent = (i - 1) / 2;
        if (h->heap[parent]->at <= d->at)
            break;
        place(h, i, h->heap[parent]);
        i = parent;
    }
    place(h, i, d);
}

static void sift_down(sm_deadlines *h, size_t i)
{
    sm_deadline *d = h->heap[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= h->n)
            break;
        if (child + 1 < h->n && h->heap[child + 1]->at < h->heap[child]->at)
            child++;
        if (d->at <= h->heap[child]->at)
            break;
        place(h, i, h->heap[child]);
        i = child;
    }
    place(h, i, d);
}

int sm_deadlines_reserve(sm_deadlines *h, size_t n)
{
    if (n <= h->cap)
        return 0;
    size_t cap = h->cap ? h->cap : 64;
    while (cap < n)
        cap *= 2;
    sm_deadline **grown = realloc(h->heap, cap * sizeof *grown);
    if (!grown)
        return SM_ENOMEM;
    h->heap = grown;
    h->cap = cap;
    return 0;
}

int sm_deadlines_set(sm_deadlines *h, sm_deadline *d, int64_t at)
{
    if (d->slot) {
        const int64_t was = d->at;
        d->at = at;
        if (at < was)
            sift_up(h, d->slot - 1);
        else if (at > was)
            sift_down(h, d->slot - 1);
        return 0;
    }
    if (sm_deadlines_reserve(h, h->n + 1) != 0)
        return SM_ENOMEM;
    d->at = at;
    place(h, h->n++, d);
    sift_up(h, h->n - 1);
    return 0;
}

void sm_deadlines_remove(sm_deadlines *h, sm_deadline *d)
{
    if (!d->slot)
        return;
    const size_t i = d->slot - 1;
    d->slot = 0;
    sm_deadline *last = h->heap[--h->n];
    if (i == h->n)
        return;
    /* The last entry fills the hole and goes whichever way its deadline says. */
    place(h, i, last);
    if (i > 0 && h->heap[(i - 1) / 2]->at > last->at)
        sift_up(h, i);
    else
        sift_down(h, i);
}

sm_deadline *sm_deadlines_peek(const sm_deadlines *h)
{
    return h->n ? h->heap[0] : NULL;
}

sm_deadline *sm_deadlines_pop_due(sm_deadlines *h, int64_t now)
{
    sm_deadline *d = sm_deadlines_peek(h);
    if (!d || d->at > now)
        return NULL;
    sm_deadlines_remove(h, d);
    return d;
}

size_t sm_deadlines_size(const sm_deadlines *h)
{
    return h->n;
}
