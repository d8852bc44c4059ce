/* Summary statistics of repeated samples: median with a distribution-free 95% CI. */
#ifndef SM_PROTO_STATS_H
#define SM_PROTO_STATS_H

#include <stddef.h>

typedef struct sm_summary {
    size_t n;
    double median, mean, stddev; /* stddev: sample (n-1); 0 when n < 2 */
    double min, max;
    double cv; /* stddev / |mean|; 0 when mean is 0 */
    /* 95% confidence interval of the median from order statistics (binomial, no distribution
     * assumed): the narrowest [x(l), x(n+1-l)] whose coverage is >= 95%. With n < 6 no such
     * interval exists; the CI is then [min, max] and ci_coverage (< 0.95) says so. */
    double ci95_low, ci95_high;
    double ci_coverage; /* the interval's exact coverage probability, 0..1 */
} sm_summary;

/* Summarises x[0..n-1]; non-finite values (NaN, infinities) are skipped and out->n counts the
 * rest. x is not modified. Returns 0, or SM_EINVAL when no finite value remains, or SM_ENOMEM;
 * on either error *out is zeroed. */
int sm_stats_summarize(const double *x, size_t n, sm_summary *out);

/* Median of the finite values of x[0..n-1] (a sorted copy); NaN when there is none or when
 * memory runs out. */
double sm_stats_median(const double *x, size_t n);

/* Median of the finite values among x[0], x[stride], ... (n of them), sorted in scratch (room
 * for n doubles; it may be x itself when stride is 1, as the copy never overtakes the read).
 * NaN when none is finite. Allocates nothing, so NaN never means out of memory. */
double sm_stats_median_in(const double *x, size_t n, size_t stride, double *scratch);

#endif
