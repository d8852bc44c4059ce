/* Wall time from CLOCK_MONOTONIC and per-thread CPU time from getrusage(RUSAGE_THREAD). */
#ifndef SM_AGENT_MEASURE_CLOCK_H
#define SM_AGENT_MEASURE_CLOCK_H

#include <stdint.h>

#include "proto/clock.h"

/* Nanoseconds on CLOCK_MONOTONIC (vDSO, no system call), unsigned for the measurements'
 * arithmetic. */
static inline uint64_t sm_now_ns(void)
{
    return (uint64_t)sm_mono_ns();
}

/* User and system CPU seconds of the calling thread. */
typedef struct sm_cpu {
    double user_s;
    double sys_s;
} sm_cpu;

/* Reads the calling thread's CPU time; on failure both are 0 (getrusage on the calling thread
 * cannot fail on Linux but the contract does not promise it). */
void sm_cpu_thread(sm_cpu *out);

/* after - before, clamped at 0 per field. */
sm_cpu sm_cpu_diff(const sm_cpu *after, const sm_cpu *before);

#endif
