/* The process's clocks: monotonic time for how long things take, wall time for what is stored
 * or shown. Inline, so that a measurement's clock read stays a vDSO call and nothing more. */
#ifndef SM_PROTO_CLOCK_H
#define SM_PROTO_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds on CLOCK_MONOTONIC: intervals, deadlines; a step of the wall clock leaves it. */
static inline int64_t sm_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Milliseconds on CLOCK_MONOTONIC. */
static inline int64_t sm_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds since the Unix epoch on CLOCK_REALTIME: times that are stored, sent or shown. */
static inline int64_t sm_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
