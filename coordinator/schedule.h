/* Scheduling: which waiting jobs may start now (a pure function, no I/O). The rule that makes
 * results trustworthy: a host takes part in at most one job at a time. */
#ifndef SM_COORD_SCHEDULE_H
#define SM_COORD_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A job as the scheduler sees it. Hosts are small integers (indexes into the caller's list). */
typedef struct sm_sched_job {
    int32_t host;   /* local: the host; pair: the client */
    int32_t peer;   /* pair: the server; -1 for local */
    uint32_t round; /* from sm_plan (pair jobs), 0 for local */
    uint32_t order; /* lower first */
    bool waiting;   /* may be picked (not running, not finished) */
} sm_sched_job;

/* jobs must be sorted by (round, order) (the plan's order); one linear pass picks.
 * Picks jobs to start now, in order of (round, order), skipping any job whose hosts are busy or
 * already taken by a job picked in this call; with parallel false, at most one job may run
 * fleet-wide (none when running > 0). busy[h] says host h is in a running job (updated in place
 * for the picks). Writes the indexes of picked jobs to picked (at most max) and returns how
 * many. A pair job of round r is not started while a waiting pair job of an earlier round shares
 * one of its hosts, so rounds keep their shape. */
size_t sm_schedule_pick(const sm_sched_job *jobs, size_t n_jobs, bool *busy, size_t n_hosts,
                        bool parallel, size_t running, size_t *picked, size_t max);

#endif
