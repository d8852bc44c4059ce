/* Deadlines on one clock, kept in a binary min-heap so that the earliest is found in O(1) and a
 * deadline is set, moved or removed in O(log n). What waits embeds an sm_deadline and keeps its
 * place in the heap there, so that a moved deadline needs no search. Single-threaded. */
#ifndef SM_COORD_CONTROL_DEADLINES_H
#define SM_COORD_CONTROL_DEADLINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Embedded in what waits; zeroed (or sm_deadline_init) before first use. The heap does not own
 * it: whoever frees the thing it is in removes it first. */
typedef struct sm_deadline {
    int64_t at;  /* the deadline, valid while queued */
    size_t slot; /* 1 + its index in the heap, 0 when not queued */
} sm_deadline;

typedef struct sm_deadlines {
    sm_deadline **heap;
    size_t n, cap;
} sm_deadlines;

void sm_deadlines_init(sm_deadlines *h);
/* Frees the heap's own memory; the deadlines in it are left as they are (their owners go too). */
void sm_deadlines_fini(sm_deadlines *h);

static inline bool sm_deadline_queued(const sm_deadline *d)
{
    return d->slot != 0;
}

/* Queues d at time at, or moves it there when it is queued already. 0, or SM_ENOMEM (d is then
 * not queued, or stays at its old time). */
int sm_deadlines_set(sm_deadlines *h, sm_deadline *d, int64_t at);
/* Makes room for n deadlines in all, so that setting them fails no more. 0, or SM_ENOMEM. */
int sm_deadlines_reserve(sm_deadlines *h, size_t n);
/* Takes d out of the heap; a d not queued is left alone. */
void sm_deadlines_remove(sm_deadlines *h, sm_deadline *d);
/* The earliest deadline, or NULL when none is queued. */
sm_deadline *sm_deadlines_peek(const sm_deadlines *h);
/* Takes out and returns the earliest deadline when it is at or before now; NULL otherwise. */
sm_deadline *sm_deadlines_pop_due(sm_deadlines *h, int64_t now);
size_t sm_deadlines_size(const sm_deadlines *h);

#endif
