/* Unit tests of the summary statistics and the median's order-statistic CI (proto/stats.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "proto/err.h"
#include "proto/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EPS 1e-12

#include "tests/unit/testutil.h"

static void test_stats_odd_n_gives_middle_value_and_sample_stddev(void **state)
{
    (void)state;
    /* mean 3; squared deviations 4 + 4 + 0 = 8; sample variance 8 / 2 = 4; stddev 2. */
    const double x[] = {5, 1, 3};
    sm_summary s;
    assert_int_equal(sm_stats_summarize(x, 3, &s), 0);
    assert_int_equal(s.n, 3);
    assert_double_near(s.median, 3, EPS);
    assert_double_near(s.mean, 3, EPS);
    assert_double_near(s.stddev, 2, EPS);
    assert_double_near(s.min, 1, 0);
    assert_double_near(s.max, 5, 0);
    assert_double_near(s.cv, 2.0 / 3.0, EPS);
}

static void test_stats_even_n_averages_the_two_middle_values(void **state)
{
    (void)state;
    /* Sorted 2 4 4 4 5 5 7 9: median (4 + 5) / 2 = 4.5; mean 40 / 8 = 5; squared deviations
     * 9 + 1 + 1 + 1 + 0 + 0 + 4 + 16 = 32; sample variance 32 / 7. */
    const double x[] = {9, 2, 4, 4, 5, 4, 5, 7};
    sm_summary s;
    assert_int_equal(sm_stats_summarize(x, 8, &s), 0);
    assert_int_equal(s.n, 8);
    assert_double_near(s.median, 4.5, EPS);
    assert_double_near(s.mean, 5, EPS);
    assert_double_near(s.stddev, sqrt(32.0 / 7.0), EPS);
    assert_double_near(s.stddev, 2.1380899352993950, EPS);
    assert_double_near(s.min, 2, 0);
    assert_double_near(s.max, 9, 0);
    assert_double_near(s.cv, 2.1380899352993950 / 5, EPS);
}

static void test_stats_skips_nan_and_infinite_values_and_leaves_input_alone(void **state)
{
    (void)state;
    double x[] = {NAN, 5, INFINITY, 1, NAN, 3, -INFINITY};
    double copy[sizeof x / sizeof x[0]];
    memcpy(copy, x, sizeof x);
    sm_summary s;
    assert_int_equal(sm_stats_summarize(x, 7, &s), 0);
    assert_int_equal(s.n, 3);
    assert_double_near(s.median, 3, EPS);
    assert_double_near(s.mean, 3, EPS);
    assert_double_near(s.stddev, 2, EPS);
    assert_double_near(s.min, 1, 0);
    assert_double_near(s.max, 5, 0);
    assert_memory_equal(x, copy, sizeof x);
}

static void test_stats_all_nan_returns_einval_and_zeroes_summary(void **state)
{
    (void)state;
    const double x[] = {NAN, NAN, NAN};
    sm_summary s, zero;
    memset(&s, 0xa5, sizeof s);
    memset(&zero, 0, sizeof zero);
    assert_int_equal(sm_stats_summarize(x, 3, &s), SM_EINVAL);
    assert_memory_equal(&s, &zero, sizeof s);

    memset(&s, 0xa5, sizeof s);
    assert_int_equal(sm_stats_summarize(NULL, 0, &s), SM_EINVAL);
    assert_memory_equal(&s, &zero, sizeof s);
}

static void test_stats_cv_is_zero_for_zero_mean_and_uses_absolute_mean(void **state)
{
    (void)state;
    const double zero_mean[] = {-1, 1};
    sm_summary s;
    assert_int_equal(sm_stats_summarize(zero_mean, 2, &s), 0);
    assert_double_near(s.mean, 0, 0);
    assert_double_near(s.stddev, sqrt(2.0), EPS);
    assert_double_near(s.cv, 0, 0);

    /* mean -2, stddev sqrt(2): cv is sqrt(2)/2, positive. */
    const double negative[] = {-1, -3};
    assert_int_equal(sm_stats_summarize(negative, 2, &s), 0);
    assert_double_near(s.cv, sqrt(2.0) / 2, EPS);
}

static void test_stats_single_value_has_point_ci_with_zero_coverage(void **state)
{
    (void)state;
    const double x[] = {42.5};
    sm_summary s;
    assert_int_equal(sm_stats_summarize(x, 1, &s), 0);
    assert_int_equal(s.n, 1);
    assert_double_near(s.median, 42.5, 0);
    assert_double_near(s.mean, 42.5, 0);
    assert_double_near(s.stddev, 0, 0);
    assert_double_near(s.cv, 0, 0);
    assert_double_near(s.ci95_low, 42.5, 0);
    assert_double_near(s.ci95_high, 42.5, 0);
    assert_double_near(s.ci_coverage, 0, EPS);
}

static void test_stats_two_values_ci_is_min_max_with_half_coverage(void **state)
{
    (void)state;
    /* l = 1: coverage 1 - 2 P(B <= 0) = 1 - 2/4. */
    const double x[] = {3, 1};
    sm_summary s;
    assert_int_equal(sm_stats_summarize(x, 2, &s), 0);
    assert_double_near(s.median, 2, EPS);
    assert_double_near(s.ci95_low, 1, 0);
    assert_double_near(s.ci95_high, 3, 0);
    assert_double_near(s.ci_coverage, 0.5, EPS);
}

static void test_stats_ci_for_five_is_min_max_below_95_percent(void **state)
{
    (void)state;
    /* l = 1: 1 - 2 P(B <= 0) = 1 - 2/32 = 0.9375 < 0.95, the best five samples can do. */
    const double x[] = {50, 10, 40, 20, 30};
    sm_summary s;
    assert_int_equal(sm_stats_summarize(x, 5, &s), 0);
    assert_double_near(s.median, 30, 0);
    assert_double_near(s.ci95_low, 10, 0);
    assert_double_near(s.ci95_high, 50, 0);
    assert_double_near(s.ci_coverage, 0.9375, EPS);
}

static void test_stats_ci_for_six_is_first_min_max_reaching_95_percent(void **state)
{
    (void)state;
    /* l = 1: 1 - 2/64 = 0.96875; l = 2: 1 - 2 * 7/64 = 0.78125, so l = 1. */
    const double x[] = {6, 5, 4, 3, 2, 1};
    sm_summary s;
    assert_int_equal(sm_stats_summarize(x, 6, &s), 0);
    assert_double_near(s.ci95_low, 1, 0);
    assert_double_near(s.ci95_high, 6, 0);
    assert_double_near(s.ci_coverage, 0.96875, EPS);
}

static void test_stats_ci_for_ten_is_second_to_ninth_order_statistic(void **state)
{
    (void)state;
    /* Sorted x(i) = 1.5 i. P(B <= 1) = (1 + 10)/1024, l = 2 covers 1 - 22/1024 = 0.978515625;
     * P(B <= 2) = 56/1024, l = 3 covers 0.890625 < 0.95. So [x(2), x(9)] = [3, 13.5]. */
    const double x[] = {10.5, 4.5, 13.5, 1.5, 15, 6, 12, 3, 9, 7.5};
    sm_summary s;
    assert_int_equal(sm_stats_summarize(x, 10, &s), 0);
    assert_double_near(s.median, 8.25, EPS);
    assert_double_near(s.ci95_low, 3, 0);
    assert_double_near(s.ci95_high, 13.5, 0);
    assert_double_near(s.ci_coverage, 1.0 - 2.0 * 11.0 / 1024.0, EPS);
    assert_double_near(s.ci_coverage, 0.978515625, EPS);
}

static void test_stats_ci_for_twenty_is_sixth_to_fifteenth_order_statistic(void **state)
{
    (void)state;
    /* n = 20, 2^20 = 1048576. C(20, k) for k = 0..6: 1 20 190 1140 4845 15504 38760, so
     * P(B <= 5) = 21700/2^20 and P(B <= 6) = 60460/2^20.
     * l = 6: 1 - 2 * 21700/2^20 = 1 - 43400/1048576 = 0.95861053466796875 >= 0.95
     * l = 7: 1 - 2 * 60460/2^20 = 0.88468170166015625 < 0.95
     * so l = 6 and the CI is [x(6), x(15)]. With x(i) = 100 i: [600, 1500]. */
    double x[20];
    for (size_t i = 0; i < 20; i++)
        x[i] = 100.0 * (double)((i * 7) % 20 + 1); /* 7 is coprime to 20: a permutation */
    sm_summary s;
    assert_int_equal(sm_stats_summarize(x, 20, &s), 0);
    assert_double_near(s.min, 100, 0);
    assert_double_near(s.max, 2000, 0);
    assert_double_near(s.median, 1050, EPS);
    assert_double_near(s.ci95_low, 600, 0);
    assert_double_near(s.ci95_high, 1500, 0);
    assert_double_near(s.ci_coverage, 1.0 - 43400.0 / 1048576.0, EPS);
    assert_double_near(s.ci_coverage, 0.95861053466796875, EPS);
}

static void test_stats_ci_stays_exact_for_one_hundred_thousand_samples(void **state)
{
    (void)state;
    /* Exact big-integer arithmetic (Python: sum of comb(100000, k), compared as integers)
     * gives l = 49690 with coverage 0.9504442853304751, and l = 49691 with 0.9497059426453364.
     * x holds 0..99999, so x(l) = l - 1 = 49689 and x(n + 1 - l) = n - l = 50310. */
    enum { N = 100000 };
    double *x = malloc(N * sizeof *x);
    assert_non_null(x);
    for (size_t i = 0; i < N; i++)
        x[i] = (double)((i * 7919) % N); /* 7919 is prime, coprime to 10^5: a permutation */
    sm_summary s;
    assert_int_equal(sm_stats_summarize(x, N, &s), 0);
    free(x);
    assert_int_equal(s.n, N);
    assert_double_near(s.median, 49999.5, EPS);
    assert_double_near(s.ci95_low, 49689, 0);
    assert_double_near(s.ci95_high, 50310, 0);
    /* Compensated log-space sums land within ~2e-13; plain summation drifts to ~6e-11. */
    assert_double_near(s.ci_coverage, 0.9504442853304751, 1e-11);
}

static void test_stats_median_sorts_a_copy_and_returns_nan_when_empty(void **state)
{
    (void)state;
    double odd[] = {9, 1, 5};
    double even[] = {4, 1, 3, 2};
    double with_nan[] = {NAN, 8, 2};
    const double odd_before[] = {9, 1, 5};
    assert_double_near(sm_stats_median(odd, 3), 5, 0);
    assert_memory_equal(odd, odd_before, sizeof odd);
    assert_double_near(sm_stats_median(even, 4), 2.5, EPS);
    assert_double_near(sm_stats_median(with_nan, 3), 5, EPS);
    assert_true(isnan(sm_stats_median(NULL, 0)));
    assert_true(isnan(sm_stats_median(with_nan, 1)));
}

static void test_stats_median_in_reads_every_stride_th_value_into_scratch(void **state)
{
    (void)state;
    /* A 3x3 row-major matrix: column 1 is {7, INFINITY, 3}, read with stride 3. */
    const double m[] = {1, 7, 100, 2, INFINITY, 200, 5, 3, 300};
    double scratch[3] = {-1, -1, -1};
    assert_double_near(sm_stats_median_in(m + 1, 3, 3, scratch), 5, EPS);
    assert_double_near(scratch[0], 3, 0); /* the finite values, sorted, in scratch */
    assert_double_near(scratch[1], 7, 0);
    assert_double_near(sm_stats_median_in(m, 3, 3, scratch), 2, 0);
    double in_place[] = {4, NAN, 1, 3};
    assert_double_near(sm_stats_median_in(in_place, 4, 1, in_place), 3, 0);
    const double none[] = {NAN, INFINITY};
    assert_true(isnan(sm_stats_median_in(none, 2, 1, scratch)));
    assert_true(isnan(sm_stats_median_in(NULL, 0, 1, scratch)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_odd_n_gives_middle_value_and_sample_stddev),
        cmocka_unit_test(test_stats_even_n_averages_the_two_middle_values),
        cmocka_unit_test(test_stats_skips_nan_and_infinite_values_and_leaves_input_alone),
        cmocka_unit_test(test_stats_all_nan_returns_einval_and_zeroes_summary),
        cmocka_unit_test(test_stats_cv_is_zero_for_zero_mean_and_uses_absolute_mean),
        cmocka_unit_test(test_stats_single_value_has_point_ci_with_zero_coverage),
        cmocka_unit_test(test_stats_two_values_ci_is_min_max_with_half_coverage),
        cmocka_unit_test(test_stats_ci_for_five_is_min_max_below_95_percent),
        cmocka_unit_test(test_stats_ci_for_six_is_first_min_max_reaching_95_percent),
        cmocka_unit_test(test_stats_ci_for_ten_is_second_to_ninth_order_statistic),
        cmocka_unit_test(test_stats_ci_for_twenty_is_sixth_to_fifteenth_order_statistic),
        cmocka_unit_test(test_stats_ci_stays_exact_for_one_hundred_thousand_samples),
        cmocka_unit_test(test_stats_median_sorts_a_copy_and_returns_nan_when_empty),
        cmocka_unit_test(test_stats_median_in_reads_every_stride_th_value_into_scratch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
