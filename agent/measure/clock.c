/* Per-thread CPU accounting for both ends of a job. */
#include "agent/measure/clock.h"

#include <sys/resource.h>

static double tv_seconds(const struct timeval *tv)
{
    return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

void sm_cpu_thread(sm_cpu *out)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0) {
        out->user_s = 0;
        out->sys_s = 0;
        return;
    }
    out->user_s = tv_seconds(&ru.ru_utime);
    out->sys_s = tv_seconds(&ru.ru_stime);
}

sm_cpu sm_cpu_diff(const sm_cpu *after, const sm_cpu *before)
{
    sm_cpu d = {after->user_s - before->user_s, after->sys_s - before->sys_s};
    if (d.user_s < 0)
        d.user_s = 0;
    if (d.sys_s < 0)
        d.sys_s = 0;
    return d;
}
