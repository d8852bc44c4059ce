/* Unit tests of the stopping rule of repetitions, adaptive and remeasured (proto/reps.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "proto/err.h"
#include "proto/reps.h"

#include <math.h>
#include <string.h>

static const sm_reps_rule rule_5_30 = {5, 30, 0.05, 0};
/* "repetitions": 3 with "remeasure": 3. */
static const sm_reps_rule fixed_3 = {3, 3, 0, 3};

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
    const sm_reps_rule r = {5, 30, 0.0625, 0};
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
    const sm_reps_rule fixed = {5, 5, 0.05, 0};
    assert_int_equal(sm_reps_decide(x, 5, 5, &fixed, &d), 0);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_MAX);
}

static void test_reps_tight_at_max_is_ci_not_max(void **state)
{
    (void)state;
    const double x[] = {1.0, 1.0, 1.01, 1.0, 1.0};
    const sm_reps_rule r = {3, 5, 0.05, 0};
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
    const double x[] = {SM_REPS_DISTURBED_SAMPLE, SM_REPS_DISTURBED_SAMPLE, NAN,
                        SM_REPS_DISTURBED_SAMPLE, SM_REPS_DISTURBED_SAMPLE};
    sm_reps_decision d;
    assert_int_equal(sm_reps_decide(x, 5, 5, &rule_5_30, &d), 0);
    assert_int_equal(d.n_ok, 0);
    assert_true(d.more);
    assert_int_equal(sm_reps_decide(x, 5, 30, &rule_5_30, &d), 0);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_MAX);
}

static void test_reps_fixed_count_with_clean_samples_stops_with_no_reason(void **state)
{
    (void)state;
    /* Wide as it is: a fixed count has no CI to reach. */
    const double x[] = {1.0, 2.0, 3.0};
    sm_reps_decision d;
    assert_int_equal(sm_reps_decide(x, 3, 3, &fixed_3, &d), 0);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_NONE);
    assert_int_equal(d.n_ok, 3);
    assert_int_equal(d.n_disturbed, 0);
}

static void test_reps_fixed_count_measures_disturbed_samples_again(void **state)
{
    (void)state;
    const double x[] = {SM_REPS_DISTURBED_SAMPLE, 1.0, SM_REPS_DISTURBED_SAMPLE, 1.0, 1.0, 1.0};
    sm_reps_decision d;
    /* 2 of 3 disturbed: one more round, and it is one for remeasuring. */
    assert_int_equal(sm_reps_decide(x, 3, 3, &fixed_3, &d), 0);
    assert_true(d.more);
    assert_true(d.remeasure);
    assert_int_equal(d.why, SM_REPS_NONE);
    assert_int_equal(d.n_ok, 1);
    assert_int_equal(d.n_disturbed, 2);
    /* Still one short after a clean fourth: another. */
    assert_int_equal(sm_reps_decide(x, 4, 4, &fixed_3, &d), 0);
    assert_true(d.more);
    /* Three clean of five: the count asked for is in, and it stops as fixed counts do. */
    assert_int_equal(sm_reps_decide(x, 5, 5, &fixed_3, &d), 0);
    assert_false(d.more);
    assert_false(d.remeasure);
    assert_int_equal(d.why, SM_REPS_NONE);
    assert_int_equal(d.n_ok, 3);
}

static void test_reps_fixed_count_stops_disturbed_at_its_remeasure_bound(void **state)
{
    (void)state;
    double x[6];
    for (size_t i = 0; i < 6; i++)
        x[i] = i == 1 ? 1.0 : SM_REPS_DISTURBED_SAMPLE;
    sm_reps_decision d;
    assert_int_equal(sm_reps_decide(x, 5, 5, &fixed_3, &d), 0);
    assert_true(d.more); /* 2 of 3 extra so far */
    assert_int_equal(sm_reps_decide(x, 6, 6, &fixed_3, &d), 0);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_DISTURBED);
    assert_string_equal(sm_reps_stop_name(d.why), "disturbed");
    assert_int_equal(d.n_ok, 1);
    assert_int_equal(d.n_disturbed, 5);
    assert_true(fabs(d.median - 1.0) < 1e-12);
    /* remeasure 0 turns it off: the fixed count ends as it always did. */
    const sm_reps_rule off = {3, 3, 0, 0};
    assert_int_equal(sm_reps_decide(x, 3, 3, &off, &d), 0);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_NONE);
}

static void test_reps_failed_repetitions_are_never_measured_again(void **state)
{
    (void)state;
    sm_reps_decision d;
    /* Every repetition failed and none was disturbed: no round, whatever remeasure allows. */
    const double failed[] = {NAN, NAN, NAN};
    assert_int_equal(sm_reps_decide(failed, 3, 3, &fixed_3, &d), 0);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_NONE);
    /* A failure without a result (absent from x) is a failure too. */
    assert_int_equal(sm_reps_decide(NULL, 0, 3, &fixed_3, &d), 0);
    assert_false(d.more);
    /* Two failed and one disturbed: the disturbed one is measured again, the failed ones
     * are the host's answer; a failed fourth ends it, with no clean sample to judge. */
    const double mixed[] = {NAN, SM_REPS_DISTURBED_SAMPLE, NAN, NAN};
    assert_int_equal(sm_reps_decide(mixed, 3, 3, &fixed_3, &d), 0);
    assert_true(d.more);
    assert_int_equal(sm_reps_decide(mixed, 4, 4, &fixed_3, &d), 0);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_NONE);
}

static void test_reps_adaptive_at_max_measures_disturbed_samples_again(void **state)
{
    (void)state;
    /* min 2, max 4, 4 more: half the samples at 1, half at 2 (never tight), one of the first
     * four disturbed. */
    const sm_reps_rule r = {2, 4, 0.05, 4};
    double x[8];
    for (size_t i = 0; i < 8; i++)
        x[i] = i % 2 ? 1.0 : 2.0;
    x[1] = SM_REPS_DISTURBED_SAMPLE;
    sm_reps_decision d;
    assert_int_equal(sm_reps_decide(x, 4, 4, &r, &d), 0);
    assert_true(d.more);
    assert_true(d.remeasure);
    /* The fifth is clean: four undisturbed repetitions are max, and it stops as before. */
    assert_int_equal(sm_reps_decide(x, 5, 5, &r, &d), 0);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_MAX);
    /* Disturbed again and again: rounds until max + remeasure, then "disturbed". */
    for (size_t i = 4; i < 8; i++)
        x[i] = SM_REPS_DISTURBED_SAMPLE;
    for (uint32_t reps = 4; reps < 8; reps++) {
        assert_int_equal(sm_reps_decide(x, reps, reps, &r, &d), 0);
        assert_true(d.more);
        assert_true(d.remeasure);
    }
    assert_int_equal(sm_reps_decide(x, 8, 8, &r, &d), 0);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_DISTURBED);
    assert_int_equal(d.n_disturbed, 5);
    /* Tight on its clean samples beats all of it. */
    const double tight[] = {1.0, SM_REPS_DISTURBED_SAMPLE, 1.0, 1.0};
    assert_int_equal(sm_reps_decide(tight, 4, 4, &r, &d), 0);
    assert_false(d.more);
    assert_int_equal(d.why, SM_REPS_CI);
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
    /* ci_rel 0 is a fixed count, so min and max must agree; remeasure has the same bound as
     * max. */
    const sm_reps_rule bad[] = {{0, 5, 0.05, 0}, {6, 5, 0.05, 0}, {1, 5, 0, 0},
                                {1, 5, 1, 0},    {1, 5, NAN, 0},  {1, 5, -0.05, 0}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(sm_reps_check(&bad[i], 100), SM_EINVAL);
        assert_int_equal(sm_reps_decide(x, 1, 1, &bad[i], &d), SM_EINVAL);
    }
    const sm_reps_rule over = {1, 101, 0.05, 0};
    assert_int_equal(sm_reps_check(&over, 100), SM_EINVAL);
    const sm_reps_rule over_remeasure = {5, 5, 0, 101};
    assert_int_equal(sm_reps_check(&over_remeasure, 100), SM_EINVAL);
    assert_int_equal(sm_reps_check(&rule_5_30, 100), 0);
    assert_int_equal(sm_reps_check(&fixed_3, 100), 0);
}

static void test_reps_stop_names_round_trip(void **state)
{
    (void)state;
    assert_null(sm_reps_stop_name(SM_REPS_NONE));
    for (int w = SM_REPS_CI; w <= SM_REPS_DISTURBED; w++)
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
        cmocka_unit_test(test_reps_fixed_count_with_clean_samples_stops_with_no_reason),
        cmocka_unit_test(test_reps_fixed_count_measures_disturbed_samples_again),
        cmocka_unit_test(test_reps_fixed_count_stops_disturbed_at_its_remeasure_bound),
        cmocka_unit_test(test_reps_failed_repetitions_are_never_measured_again),
        cmocka_unit_test(test_reps_adaptive_at_max_measures_disturbed_samples_again),
        cmocka_unit_test(test_reps_interval_of_many_samples_uses_order_statistics),
        cmocka_unit_test(test_reps_negative_median_uses_its_magnitude),
        cmocka_unit_test(test_reps_rule_out_of_bounds_is_einval),
        cmocka_unit_test(test_reps_stop_names_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
