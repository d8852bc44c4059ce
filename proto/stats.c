/* Summary statistics of repeated samples, with a distribution-free CI of the median. */
#include "proto/stats.h"

#include "proto/err.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* Sorted copy of the finite values of x. The header speaks of NaNs, but an infinity would
 * turn mean and stddev into NaN/inf as well, so it is dropped too ("no finite value remains").
 * Returns SM_ENOMEM, else 0 with *out (NULL when *m is 0) and *m set. */
static int sorted_finite(const double *x, size_t n, double **out, size_t *m)
{
    *out = NULL;
    *m = 0;
    if (n == 0)
        return 0;
    if (n > SIZE_MAX / sizeof(double))
        return SM_ENOMEM;
    double *v = malloc(n * sizeof(double));
    if (!v)
        return SM_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(x[i]))
            v[k++] = x[i];
    }
    qsort(v, k, sizeof(double), cmp_double);
    *out = v;
    *m = k;
    return 0;
}

static double median_sorted(const double *v, size_t m)
{
    /* Halving each term first cannot overflow near DBL_MAX and is exact for normal numbers. */
    if (m % 2 == 0)
        return 0.5 * v[m / 2 - 1] + 0.5 * v[m / 2];
    return v[m / 2];
}

/* Adds term to *sum with Neumaier compensation in *comp: log C(n, i) reaches ~7e4 for n = 1e5
 * and is built from ~5e4 small terms; plain summation drifts to ~1e-9 relative error in the
 * tail probabilities, compensated summation stays near 1e-11 (checked against lgammal). */
static void add_compensated(double *sum, double *comp, double term)
{
    double t = *sum + term;
    if (fabs(*sum) >= fabs(term))
        *comp += (*sum - t) + term;
    else
        *comp += (term - t) + *sum;
    *sum = t;
}

/* Picks l for the interval [x(l), x(n+1-l)] and returns its coverage 1 - 2 P(B <= l-1),
 * B ~ Binomial(n, 1/2). Probabilities are built in log space because 2^-n underflows long
 * before n = 1e5; the terms that underflow are far too small to move the sum. */
static double median_ci_rank(size_t n, size_t *l_out)
{
    double log_c = 0.0, comp = 0.0; /* log C(n, i), starting at i = 0 */
    double log_half_n = (double)n * log(0.5);
    double cdf = exp(log_half_n);      /* P(B <= 0) */
    double coverage = 1.0 - 2.0 * cdf; /* l = 1: [min, max], the fallback even when < 95% */
    size_t l = 1;
    /* Coverage falls as l grows, so the first l that misses 95% ends the search; l stays at
     * most (n+1)/2 so that x(l) <= x(n+1-l). */
    for (size_t i = 1; i + 1 <= (n + 1) / 2; i++) {
        add_compensated(&log_c, &comp, log((double)(n - i + 1) / (double)i));
        cdf += exp(log_c + comp + log_half_n); /* now P(B <= i), the candidate l = i + 1 */
        double cov = 1.0 - 2.0 * cdf;
        if (cov < 0.95)
            break;
        coverage = cov;
        l = i + 1;
    }
    *l_out = l;
    return coverage;
}

int sm_stats_summarize(const double *x, size_t n, sm_summary *out)
{
    memset(out, 0, sizeof *out);
    double *v;
    size_t m;
    int rc = sorted_finite(x, n, &v, &m);
    if (rc)
        return rc;
    if (m == 0) {
        free(v);
        return SM_EINVAL;
    }

    double sum = 0.0;
    for (size_t i = 0; i < m; i++)
        sum += v[i];
    double mean = sum / (double)m;
    /* Two passes: subtracting the mean first avoids the cancellation of sum(x^2) - n*mean^2. */
    double ss = 0.0;
    for (size_t i = 0; i < m; i++)
        ss += (v[i] - mean) * (v[i] - mean);
    double stddev = m < 2 ? 0.0 : sqrt(ss / (double)(m - 1));

    size_t l;
    double coverage = median_ci_rank(m, &l);

    out->n = m;
    out->median = median_sorted(v, m);
    out->mean = mean;
    out->stddev = stddev;
    out->min = v[0];
    out->max = v[m - 1];
    out->cv = mean == 0.0 ? 0.0 : stddev / fabs(mean);
    out->ci95_low = v[l - 1];
    out->ci95_high = v[m - l];
    out->ci_coverage = coverage;
    free(v);
    return 0;
}

/* Skips non-finite values like sm_stats_summarize, so both report the same median. With no
 * error code to return, an allocation failure also yields NaN. */
double sm_stats_median(const double *x, size_t n)
{
    double *v;
    size_t m;
    if (sorted_finite(x, n, &v, &m) || m == 0) {
        free(v);
        return NAN;
    }
    double med = median_sorted(v, m);
    free(v);
    return med;
}

double sm_stats_median_in(const double *x, size_t n, size_t stride, double *scratch)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(x[i * stride]))
            scratch[m++] = x[i * stride];
    }
    if (m == 0)
        return NAN;
    qsort(scratch, m, sizeof(double), cmp_double);
    return median_sorted(scratch, m);
}
