/* A monotonic clock and the process's peak memory (measure.h). */
#include "bench/measure.h"

#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double bench_peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss * 1024.0 / 1e6; /* Linux reports KiB */
}

double bench_peak_vm_mb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmPeak: %lf kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024.0 / 1e6;
}
