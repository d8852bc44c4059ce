/* Scheduling: one pass over the waiting jobs picks those that may start now. */
#include "coordinator/schedule.h"

#include <stdlib.h>

/* Round bookkeeping for fleets up to this size lives on the stack. */
#define STACK_HOSTS 256

static bool host_ok(int32_t h, size_t n_hosts)
{
    return h >= 0 && (size_t)h < n_hosts;
}

size_t sm_schedule_pick(const sm_sched_job *jobs, size_t n_jobs, bool *busy, size_t n_hosts,
                        bool parallel, size_t running, size_t *picked, size_t max)
{
    if (max == 0 || (!parallel && running > 0))
        return 0;
    /* first[h]: the lowest round of a waiting pair job on host h seen so far in the pass
     * (UINT32_MAX: none). The jobs come sorted by round, so that is the earliest round that
     * still needs h, and a later-round pair job on h must wait for it. */
    uint32_t stack_first[STACK_HOSTS];
    uint32_t *first = stack_first;
    if (n_hosts > STACK_HOSTS)
        first = malloc(n_hosts * sizeof *first);
    /* Without memory for per-host rounds, keep the rule by a stricter one that still always
     * progresses: only the earliest waiting pair round may start. */
    uint32_t lowest = UINT32_MAX;
    if (first)
        for (size_t h = 0; h < n_hosts; h++)
            first[h] = UINT32_MAX;

    size_t n = 0;
    for (size_t i = 0; i < n_jobs && n < max; i++) {
        const sm_sched_job *j = &jobs[i];
        if (!j->waiting || !host_ok(j->host, n_hosts))
            continue;
        bool is_pair = j->peer >= 0;
        /* A job naming a host the caller does not know can never be placed safely. */
        if (is_pair && !host_ok(j->peer, n_hosts))
            continue;
        bool ok = !busy[j->host] && !(is_pair && busy[j->peer]);
        if (is_pair) {
            if (first)
                ok = ok && first[j->host] >= j->round && first[j->peer] >= j->round;
            else
                ok = ok && lowest >= j->round;
            if (first) {
                if (j->round < first[j->host])
                    first[j->host] = j->round;
                if (j->round < first[j->peer])
                    first[j->peer] = j->round;
            }
            if (j->round < lowest)
                lowest = j->round;
        }
        if (!ok)
            continue;
        busy[j->host] = true;
        if (is_pair)
            busy[j->peer] = true;
        picked[n++] = i;
        if (!parallel)
            break;
    }
    if (first != stack_first)
        free(first);
    return n;
}
