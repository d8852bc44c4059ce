/* Fixed-seed random draws that the tests and the benchmarks share, so that a failure or a
 * figure reproduces: xorshift64, a uniform double, and the round trips of a loopback rr job
 * as bench/hist_decode.c, testkit/rr_run.c and the swarm's rr results draw them. */
#ifndef SM_TESTKIT_DRAW_H
#define SM_TESTKIT_DRAW_H

#include <stdint.h>

/* The next value of the xorshift64 generator whose state is *s (never 0). */
uint64_t draw_next(uint64_t *s);

/* Uniform in (0, 1), never 0 or 1 (a logarithm of it is finite). */
double draw_uniform(uint64_t *s);

/* A median for a loopback rr job's round trips: 18 to 26 us, in ns. */
double draw_rtt_median_ns(uint64_t *s);

/* One round trip around median_ns: log-normal (sigma 0.04, a few hundred 16 ns buckets of a
 * histogram), and one in two hundred in a tail out to about 250 times the median. */
uint64_t draw_rtt_ns(uint64_t *s, double median_ns);

#endif
