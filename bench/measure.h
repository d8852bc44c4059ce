/* What the benchmarks built in C read of themselves: a monotonic clock and the process's peak
 * memory. */
#ifndef SM_BENCH_MEASURE_H
#define SM_BENCH_MEASURE_H

/* CLOCK_MONOTONIC in seconds. */
double bench_now_s(void);

/* Peak resident set (getrusage ru_maxrss), MB = 10^6 bytes. */
double bench_peak_rss_mb(void);

/* Peak of the address space (VmPeak), which untouched pages count in although the RSS does
 * not, and which RLIMIT_AS bounds; 0 when /proc is not there. */
double bench_peak_vm_mb(void);

#endif
