/* Unit tests of the stopping rule of adaptive repetitions (proto/reps.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "proto/err.h"
#include "proto/reps.h"

#include <math.h>
#include <string.h>

static const sm_reps_rule rule_5_30 = {5, 30, 0.05};

static void test_reps_stops_at_min_when_the_interval_is_tight(void **state)
{
    (void)state;
    /* Five samples within +-1% of 1.0: [min, max] is the interval, half-width 0.01. */
    const double x[] = {0.99, 1.00, 1.01, 1.00, 0.995};
    sm_reps_decision d;
    assert_int_equal(sm_reps_decide(x, 5, 5, &rule_5_30, &d), 0);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_CI);
    assert_int_equal(d.n_ok, 5);
    assert_true(fabs(d.median - 1.0) < 1e-12);
    assert_true(fabs(d.half_width - 0.01) < 1e-12);
    assert_string_equal(sm_reps_stop_name(d.why), "ci");
}

static void test_reps_adds_a_round_when_the_interval_is_wide(void **state)
{
    (void)state;
    /* Half-width (1.3 - 0.8) / 2 = 0.25 against 5% of the median 1.0. */
    const double x[] = {0.8, 1.0, 1.3, 0.9, 1.1};
    sm_reps_decision d;
    assert_int_equal(sm_reps_decide(x, 5, 5, &rule_5_30, &d), 0);
    assert_true(d.more);
    assert_int_equal(d.why, SM_REPS_NONE);
    assert_true(fabs(d.half_width - 0.25) < 1e-12);
}

static void test_reps_exactly_at_the_bound_is_tight(void **state)
{
    (void)state;
    /* Half-width 0.0625 = 6.25% of 1.0, every value exact in binary. */
    const sm_reps_rule r = {5, 30, 0.0625};
    const double y[] = {0.9375, 1.0, 1.0625, 1.0, 1.0};
    sm_reps_decision d;
    assert_int_equal(sm_reps_decide(y, 5, 5, &r, &d), 0);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_CI);
}

static void test_reps_stops_at_max_and_says_so(void **state)
{
    (void)state;
    double x[30];
    for (size_t i = 0; i < 30; i++)
        x[i] = i % 2 ? 1.0 : 2.0; /* half the samples at 1, half at 2: never tight */
    sm_reps_decision d;
    assert_int_equal(sm_reps_decide(x, 29, 29, &rule_5_30, &d), 0);
    assert_true(d.more);
    assert_int_equal(sm_reps_decide(x, 30, 30, &rule_5_30, &d), 0);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_MAX);
    assert_string_equal(sm_reps_stop_name(d.why), "max");
    /* max equal to min: no round is ever added. */
    const sm_reps_rule fixed = {5, 5, 0.05};
    assert_int_equal(sm_reps_decide(x, 5, 5, &fixed, &d), 0);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_MAX);
}

static void test_reps_tight_at_max_is_ci_not_max(void **state)
{
    (void)state;
    const double x[] = {1.0, 1.0, 1.01, 1.0, 1.0};
    const sm_reps_rule r = {3, 5, 0.05};
    sm_reps_decision d;
    assert_int_equal(sm_reps_decide(x, 5, 5, &r, &d), 0);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_CI);
}

static void test_reps_ignores_failed_samples(void **state)
{
    (void)state;
    /* A failed repetition (NaN) is no sample: four ok ones are below min, so one more round
     * makes up for it, tight as they are. */
    const double x[] = {1.0, NAN, 1.0, 1.01, 1.0};
    sm_reps_decision d;
    assert_int_equal(sm_reps_decide(x, 5, 5, &rule_5_30, &d), 0);
    assert_int_equal(d.n_ok, 4);
    assert_true(d.more);
    /* With the round made up, it is tight; the failure did not widen anything. */
    const double y[] = {1.0, NAN, 1.0, 1.01, 1.0, 0.995};
    assert_int_equal(sm_reps_decide(y, 6, 6, &rule_5_30, &d), 0);
    assert_int_equal(d.n_ok, 5);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_CI);
}

static void test_reps_a_cell_that_only_fails_stops_after_min(void **state)
{
    (void)state;
    const double x[] = {NAN, NAN, NAN, NAN, NAN};
    sm_reps_decision d;
    assert_int_equal(sm_reps_decide(x, 4, 4, &rule_5_30, &d), 0);
    assert_true(d.more); /* below min: the planned repetitions are not all in */
    assert_int_equal(sm_reps_decide(x, 5, 5, &rule_5_30, &d), 0);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_FAILED);
    assert_int_equal(d.n_ok, 0);
    assert_true(isnan(d.median));
    assert_int_equal(sm_reps_decide(NULL, 0, 5, &rule_5_30, &d), 0);
    assert_int_equal(d.why, SM_REPS_FAILED);
}

static void test_reps_a_cell_measured_only_while_disturbed_goes_on(void **state)
{
    (void)state;
    /* Five repetitions that ran while the host was busy: no sample, but no failure either;
     * the next round may be clean, up to max. */
    const double x[] = {SM_REPS_DISTURBED, SM_REPS_DISTURBED, NAN, SM_REPS_DISTURBED,
                        SM_REPS_DISTURBED};
    sm_reps_decision d;
    assert_int_equal(sm_reps_decide(x, 5, 5, &rule_5_30, &d), 0);
    assert_int_equal(d.n_ok, 0);
    assert_true(d.more);
    assert_int_equal(sm_reps_decide(x, 5, 30, &rule_5_30, &d), 0);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_MAX);
}

static void test_reps_interval_of_many_samples_uses_order_statistics(void **state)
{
    (void)state;
    /* n = 20: the 95% interval is [x(6), x(15)], so two wild values at each end do not keep
     * the cell going as [min, max] would. */
    double x[20];
    for (size_t i = 0; i < 20; i++)
        x[i] = 1.0 + (double)i * 0.001;
    x[0] = 0.1;
    x[19] = 9.0;
    sm_reps_decision d;
    assert_int_equal(sm_reps_decide(x, 20, 20, &rule_5_30, &d), 0);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_CI);
    assert_true(d.half_width < 0.01);
}

static void test_reps_negative_median_uses_its_magnitude(void **state)
{
    (void)state;
    const double x[] = {-1.0, -1.01, -0.99, -1.0, -1.0};
    sm_reps_decision d;
    assert_int_equal(sm_reps_decide(x, 5, 5, &rule_5_30, &d), 0);
    assert_int_equal(d.why, SM_REPS_CI);
}

static void test_reps_rule_out_of_bounds_is_einval(void **state)
{
    (void)state;
    const double x[] = {1.0};
    sm_reps_decision d;
    const sm_reps_rule bad[] = {{0, 5, 0.05}, {6, 5, 0.05}, {1, 5, 0}, {1, 5, 1}, {1, 5, NAN}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(sm_reps_check(&bad[i], 100), SM_EINVAL);
        assert_int_equal(sm_reps_decide(x, 1, 1, &bad[i], &d), SM_EINVAL);
    }
    const sm_reps_rule over = {1, 101, 0.05};
    assert_int_equal(sm_reps_check(&over, 100), SM_EINVAL);
    assert_int_equal(sm_reps_check(&rule_5_30, 100), 0);
}

static void test_reps_stop_names_round_trip(void **state)
{
    (void)state;
    assert_null(sm_reps_stop_name(SM_REPS_NONE));
    for (int w = SM_REPS_CI; w <= SM_REPS_FAILED; w++)
        assert_int_equal(sm_reps_stop_parse(sm_reps_stop_name((sm_reps_stop)w)), w);
    assert_int_equal(sm_reps_stop_parse(""), SM_REPS_NONE);
    assert_int_equal(sm_reps_stop_parse(NULL), SM_REPS_NONE);
    assert_int_equal(sm_reps_stop_parse("maybe"), SM_REPS_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reps_stops_at_min_when_the_interval_is_tight),
        cmocka_unit_test(test_reps_adds_a_round_when_the_interval_is_wide),
        cmocka_unit_test(test_reps_exactly_at_the_bound_is_tight),
        cmocka_unit_test(test_reps_stops_at_max_and_says_so),
        cmocka_unit_test(test_reps_tight_at_max_is_ci_not_max),
        cmocka_unit_test(test_reps_ignores_failed_samples),
        cmocka_unit_test(test_reps_a_cell_that_only_fails_stops_after_min),
        cmocka_unit_test(test_reps_a_cell_measured_only_while_disturbed_goes_on),
        cmocka_unit_test(test_reps_interval_of_many_samples_uses_order_statistics),
        cmocka_unit_test(test_reps_negative_median_uses_its_magnitude),
        cmocka_unit_test(test_reps_rule_out_of_bounds_is_einval),
        cmocka_unit_test(test_reps_stop_names_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
