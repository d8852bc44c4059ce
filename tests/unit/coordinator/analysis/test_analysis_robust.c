/* Unit tests of the analysis's robust statistics: the robust z and the median polish. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "coordinator/analysis/analysis.h"
#include "proto/err.h"
#include "tests/unit/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double MAD_K = 0.6745;

/* ---- robust z ---- */

static void test_analysis_robust_z_matches_hand_computed_values(void **state)
{
    (void)state;
    const double x[5] = {1, 2, 3, 4, 100};
    double z[5], med, mad;
    assert_int_equal(sm_robust_z(x, 5, z, &med, &mad), 0);
    assert_double_near(med, 3, 0);
    assert_double_near(mad, 1, 0);
    const double want[5] = {-2 * MAD_K, -MAD_K, 0, MAD_K, 97 * MAD_K};
    for (size_t i = 0; i < 5; i++)
        assert_double_near(z[i], want[i], 1e-12);
}

static void test_analysis_robust_z_skips_non_finite_values(void **state)
{
    (void)state;
    const double x[7] = {NAN, 1, 2, INFINITY, 3, 4, 100};
    double z[7], med, mad;
    assert_int_equal(sm_robust_z(x, 7, z, &med, &mad), 0);
    assert_double_near(med, 3, 0);
    assert_double_near(mad, 1, 0);
    assert_true(isnan(z[0]));
    assert_true(isnan(z[3]));
    assert_double_near(z[6], 97 * MAD_K, 1e-12);
    /* Even counts take the mean of the middle two, for the median and the MAD alike. */
    const double y[4] = {1, 2, 4, 10};
    assert_int_equal(sm_robust_z(y, 4, z, &med, &mad), 0);
    assert_double_near(med, 3, 0);
    assert_double_near(mad, 1.5, 0); /* |y - 3| = 2, 1, 1, 7 */
    assert_double_near(z[3], MAD_K * 7 / 1.5, 1e-12);
}

static void test_analysis_robust_z_with_mad_0_is_0_or_infinite(void **state)
{
    (void)state;
    const double x[5] = {5, 5, 5, 7, 2};
    double z[5], med, mad;
    assert_int_equal(sm_robust_z(x, 5, z, &med, &mad), 0);
    assert_double_near(med, 5, 0);
    assert_double_near(mad, 0, 0);
    assert_double_near(z[0], 0, 0);
    assert_double_near(z[2], 0, 0);
    assert_true(isinf(z[3]) && z[3] > 0);
    assert_true(isinf(z[4]) && z[4] < 0);
}

static void test_analysis_robust_z_without_finite_values_is_nan(void **state)
{
    (void)state;
    const double x[2] = {NAN, -INFINITY};
    double z[2] = {1, 1}, med = 0, mad = 0;
    assert_int_equal(sm_robust_z(x, 2, z, &med, &mad), 0);
    assert_true(isnan(med));
    assert_true(isnan(mad));
    assert_true(isnan(z[0]) && isnan(z[1]));
    med = mad = 0;
    assert_int_equal(sm_robust_z(NULL, 0, NULL, &med, &mad), 0);
    assert_true(isnan(med) && isnan(mad));
}

/* ---- median polish ---- */

/* R's ?medpolish example (parachuting deaths), whose result is an exact fixed point. */
static void test_analysis_median_polish_reproduces_rs_deaths_example(void **state)
{
    (void)state;
    const double m[15] = {14, 15, 14, 7, 4, 7, 8, 2, 10, 15, 9, 10, 0, 2, 0};
    const double want_row[5] = {6, -1, 0, 2, -8}, want_col[3] = {0, -1, 0};
    const double want_res[15] = {0, 2, 0, 0, -2, 0, 0, -5, 2, 5, 0, 0, 0, 3, 0};
    double overall, row[5], col[3], res[15];
    assert_int_equal(sm_median_polish(m, 5, 3, 10, &overall, row, col, res), 0);
    assert_double_near(overall, 8, 0);
    for (size_t r = 0; r < 5; r++)
        assert_double_near(row[r], want_row[r], 0);
    for (size_t c = 0; c < 3; c++)
        assert_double_near(col[c], want_col[c], 0);
    for (size_t i = 0; i < 15; i++)
        assert_double_near(res[i], want_res[i], 0);
}

/* m = 4 + (-3, 0, 3) by row + (-1, 0, 1) by column, diagonal missing. Medians of two values
 * average them, so the polish approaches the truth by a factor 4 per iteration. */
static void test_analysis_median_polish_sweeps_rows_first_and_skips_a_nan_diagonal(void **state)
{
    (void)state;
    const double m[9] = {NAN, 1, 2, 3, NAN, 5, 6, 7, NAN};
    double overall, row[3], col[3], res[9];
    /* One iteration, by hand: row medians 1.5, 4, 6.5; column medians of what is left -0.75,
     * 0, 0.75; the row effects' median 4 moves into overall. Columns first would differ. */
    assert_int_equal(sm_median_polish(m, 3, 3, 1, &overall, row, col, res), 0);
    assert_double_near(overall, 4, 0);
    const double r1[3] = {-2.5, 0, 2.5}, c1[3] = {-0.75, 0, 0.75};
    const double res1[9] = {NAN, -0.5, -0.25, -0.25, NAN, 0.25, 0.25, 0.5, NAN};
    for (size_t i = 0; i < 3; i++) {
        assert_double_near(row[i], r1[i], 0);
        assert_double_near(col[i], c1[i], 0);
    }
    for (size_t i = 0; i < 9; i++) {
        if (i % 4 == 0)
            assert_true(isnan(res[i]));
        else
            assert_double_near(res[i], res1[i], 0);
    }
    assert_int_equal(sm_median_polish(m, 3, 3, 100, &overall, row, col, res), 0);
    assert_double_near(overall, 4, 0);
    for (size_t i = 0; i < 3; i++) {
        assert_double_near(row[i], 3.0 * ((double)i - 1), 1e-8);
        assert_double_near(col[i], (double)i - 1, 1e-8);
    }
    assert_true(isnan(res[0]) && isnan(res[4]) && isnan(res[8]));
    assert_double_near(res[1], 0, 1e-8);
}

static void test_analysis_median_polish_leaves_an_empty_row_at_effect_0(void **state)
{
    (void)state;
    const double m[9] = {1, 2, 3, NAN, NAN, NAN, 11, 12, 13};
    double overall, row[3], col[3], res[9];
    assert_int_equal(sm_median_polish(m, 3, 3, 10, &overall, row, col, res), 0);
    assert_double_near(row[1], 0, 0);
    assert_double_near(overall, 7, 0);
    assert_double_near(row[0], -5, 0);
    assert_double_near(row[2], 5, 0);
    assert_double_near(col[0], -1, 0);
    assert_double_near(col[2], 1, 0);
    for (size_t c = 0; c < 3; c++)
        assert_true(isnan(res[3 + c]));
}

static void test_analysis_median_polish_without_values_is_einval(void **state)
{
    (void)state;
    const double m[4] = {NAN, NAN, INFINITY, NAN};
    double overall, row[2], col[2], res[4];
    assert_int_equal(sm_median_polish(m, 2, 2, 10, &overall, row, col, res), SM_EINVAL);
    assert_int_equal(sm_median_polish(m, 0, 2, 10, &overall, row, col, res), SM_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_analysis_robust_z_matches_hand_computed_values),
        cmocka_unit_test(test_analysis_robust_z_skips_non_finite_values),
        cmocka_unit_test(test_analysis_robust_z_with_mad_0_is_0_or_infinite),
        cmocka_unit_test(test_analysis_robust_z_without_finite_values_is_nan),
        cmocka_unit_test(test_analysis_median_polish_reproduces_rs_deaths_example),
        cmocka_unit_test(test_analysis_median_polish_sweeps_rows_first_and_skips_a_nan_diagonal),
        cmocka_unit_test(test_analysis_median_polish_leaves_an_empty_row_at_effect_0),
        cmocka_unit_test(test_analysis_median_polish_without_values_is_einval),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
