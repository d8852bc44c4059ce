/* Unit tests of an experiment's estimate (coordinator/analysis/experiment_estimate.c and its
 * JSON): synthetic samples whose answer is known, the verdicts, the line of text. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "coordinator/analysis/experiment.h"
#include "testkit/draw.h"
#include "tests/unit/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEED 42

/* The lab's shaped host on the 2010 test: h2 at 0.0567 s, the fleet at 0.0070 s. */
#define CTRL  0.0567
#define FLEET 0.0070

/* n samples around center, each off by a uniform draw within +-spread of it (a fraction). */
static void around(double *x, size_t n, double center, double spread, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++)
        x[i] = center * (1 + spread * (2 * draw_uniform(&s) - 1));
}

typedef struct groups {
    double ctrl[8], treat[8], fleet[20];
} groups;

/* The control 8 samples at CTRL, the fleet 20 at FLEET, both +-3%, the treated 8 at treat. */
static void lab(groups *g, double treat, double spread)
{
    around(g->ctrl, 8, CTRL, 0.03, 1);
    around(g->treat, 8, treat, spread, 2);
    around(g->fleet, 20, FLEET, 0.03, 3);
}

static sm_xp_estimate estimate(const groups *g)
{
    sm_xp_estimate e;
    assert_int_equal(
        sm_xp_estimate_share_for("h2", g->ctrl, 8, g->treat, 8, g->fleet, 20, SEED, &e), 0);
    assert_int_equal(e.n_ctrl, 8);
    assert_int_equal(e.n_treat, 8);
    assert_int_equal(e.n_fleet, 20);
    return e;
}

static void test_a_treatment_that_makes_the_host_the_fleet_is_the_cause(void **state)
{
    (void)state;
    groups g;
    lab(&g, FLEET, 0.03);
    sm_xp_estimate e = estimate(&g);
    assert_int_equal(e.verdict, SM_XP_CAUSE);
    assert_double_near(e.share, 1.0, 0.03);
    assert_true(e.lo <= 1.0 && e.hi >= 1.0);
    assert_true(e.lo > 0.5);
    assert_true(e.lo <= e.share && e.share <= e.hi);
    assert_double_near(e.fleet_median, FLEET, FLEET * 0.03);
    assert_double_near(e.ctrl_median, CTRL, CTRL * 0.03);
    assert_non_null(strstr(e.why, "closes most of the gap"));
}

static void test_a_treatment_midway_is_part_of_it(void **state)
{
    (void)state;
    groups g;
    lab(&g, (CTRL + FLEET) / 2, 0.10);
    sm_xp_estimate e = estimate(&g);
    assert_int_equal(e.verdict, SM_XP_PART);
    assert_double_near(e.share, 0.5, 0.1);
    assert_true(e.lo > 0 && e.lo < 0.5);
    assert_true(e.hi > 0.5);
    assert_non_null(strstr(e.why, "closes part of the gap"));
}

static void test_a_decoy_that_changes_nothing_is_not_the_cause(void **state)
{
    (void)state;
    groups g;
    lab(&g, CTRL, 0.03);
    sm_xp_estimate e = estimate(&g);
    assert_int_equal(e.verdict, SM_XP_NOT);
    assert_double_near(e.share, 0, 0.05);
    assert_true(e.lo <= 0 && e.hi >= 0);
    assert_true(e.hi < SM_XP_NEGLIGIBLE);
    assert_non_null(strstr(e.why, "closes less than a tenth of the gap"));
}

static void test_a_treatment_that_widens_the_gap_is_not_the_cause(void **state)
{
    (void)state;
    groups g;
    lab(&g, 0.08, 0.03);
    sm_xp_estimate e = estimate(&g);
    assert_int_equal(e.verdict, SM_XP_NOT);
    assert_double_near(e.share, (CTRL - 0.08) / (CTRL - FLEET), 0.05);
    assert_true(e.hi < 0);
    assert_non_null(strstr(e.why, "it widens the gap"));
}

static void test_a_host_no_longer_apart_is_inconclusive(void **state)
{
    (void)state;
    /* Pure noise: the control 1% above the fleet, each spread +-10%. */
    double ctrl[8], treat[8], fleet[20];
    around(ctrl, 8, FLEET * 1.01, 0.10, 1);
    around(treat, 8, FLEET, 0.10, 2);
    around(fleet, 20, FLEET, 0.10, 3);
    sm_xp_estimate e;
    assert_int_equal(sm_xp_estimate_share_for("h2", ctrl, 8, treat, 8, fleet, 20, SEED, &e), 0);
    assert_int_equal(e.verdict, SM_XP_INCONCLUSIVE);
    assert_true(isnan(e.share) && isnan(e.lo) && isnan(e.hi));
    assert_true(isfinite(e.ctrl_median) && isfinite(e.fleet_median));
    char want[200];
    snprintf(want, sizeof want,
             "h2 no longer stands apart from the fleet in this experiment (control median %.4g "
             "vs fleet %.4g): the gap is 0 or reversed in ",
             e.ctrl_median, e.fleet_median);
    assert_memory_equal(e.why, want, strlen(want));

    /* A control equal to the fleet has no gap at all, and is said without a bootstrap. */
    double same[3] = {1, 2, 3};
    assert_int_equal(sm_xp_estimate_share(same, 3, same, 3, same, 3, SEED, &e), 0);
    assert_int_equal(e.verdict, SM_XP_INCONCLUSIVE);
    assert_string_equal(e.why, "the host no longer stands apart from the fleet in this "
                               "experiment (control median 2 vs fleet 2)");
}

static void test_a_treatment_that_works_on_half_the_jobs_is_too_wide_to_decide(void **state)
{
    (void)state;
    /* Half the treated jobs at the fleet's value, half a little slower than the control's
     * slowest: any share from below 0 to 1 fits them. */
    groups g;
    lab(&g, FLEET, 0.03);
    around(g.treat + 4, 4, CTRL * 1.05, 0.01, 5);
    sm_xp_estimate e = estimate(&g);
    assert_int_equal(e.verdict, SM_XP_INCONCLUSIVE);
    assert_true(e.lo <= 0 && e.hi >= 0.5);
    char want[200];
    snprintf(want, sizeof want, "the interval [%.0f%%, %.0f%%] is too wide to decide",
             round(100 * e.lo) == 0 ? 0.0 : round(100 * e.lo), round(100 * e.hi));
    assert_memory_equal(e.why, want, strlen(want));
}

static void test_too_few_samples_name_each_short_group(void **state)
{
    (void)state;
    groups g;
    lab(&g, FLEET, 0.03);
    sm_xp_estimate e;
    assert_int_equal(sm_xp_estimate_share(g.ctrl, 8, g.treat, 2, g.fleet, 20, SEED, &e), 0);
    assert_int_equal(e.verdict, SM_XP_INCONCLUSIVE);
    assert_string_equal(e.why, "too few samples: treated 2 (each group needs 3)");
    assert_true(isnan(e.share) && isnan(e.lo) && isnan(e.hi));
    assert_true(isfinite(e.treat_median));

    /* Non-finite samples are no samples; a group of none has no median. */
    double ctrl[3] = {CTRL, NAN, INFINITY};
    assert_int_equal(sm_xp_estimate_share(ctrl, 3, g.treat, 8, NULL, 0, SEED, &e), 0);
    assert_int_equal(e.n_ctrl, 1);
    assert_int_equal(e.n_fleet, 0);
    assert_true(isnan(e.fleet_median));
    assert_string_equal(e.why, "too few samples: control 1, fleet 0 (each group needs 3)");

    assert_int_equal(sm_xp_estimate_share(NULL, 3, g.treat, 8, g.fleet, 20, SEED, &e), SM_EINVAL);
    assert_int_equal(sm_xp_estimate_share(g.ctrl, 8, g.treat, 8, g.fleet, 20, SEED, NULL),
                     SM_EINVAL);
}

static void test_a_rate_where_higher_is_better_reads_the_same(void **state)
{
    (void)state;
    /* h2's stream at 175 MB/s against the fleet's 1400 MB/s: a cause brings it to 1390. */
    double ctrl[8], treat[8], fleet[20];
    around(ctrl, 8, 175, 0.05, 1);
    around(treat, 8, 1390, 0.05, 2);
    around(fleet, 20, 1400, 0.05, 3);
    sm_xp_estimate e;
    assert_int_equal(sm_xp_estimate_share(ctrl, 8, treat, 8, fleet, 20, SEED, &e), 0);
    assert_int_equal(e.verdict, SM_XP_CAUSE);
    assert_double_near(e.share, (175.0 - 1390) / (175 - 1400), 0.05);
    assert_true(e.lo >= 0.5 && e.hi >= 0.99);

    /* And a decoy there is a decoy. */
    around(treat, 8, 175, 0.05, 4);
    assert_int_equal(sm_xp_estimate_share(ctrl, 8, treat, 8, fleet, 20, SEED, &e), 0);
    assert_int_equal(e.verdict, SM_XP_NOT);
    assert_true(e.lo <= 0 && e.hi >= 0);
}

/* The verdict of a treated group of three samples against a control of 10 and a fleet of 0
 * that every resample leaves as they are. */
static sm_xp_estimate exact(double a, double b, double c)
{
    double ctrl[3] = {10, 10, 10}, fleet[3] = {0, 0, 0}, treat[3] = {a, b, c};
    sm_xp_estimate e;
    assert_int_equal(sm_xp_estimate_share(ctrl, 3, treat, 3, fleet, 3, SEED, &e), 0);
    return e;
}

static void test_the_verdict_rules_hold_at_their_bounds(void **state)
{
    (void)state;
    sm_xp_estimate e = exact(5, 5, 5);
    assert_true(e.share == 0.5 && e.lo == 0.5 && e.hi == 0.5);
    assert_int_equal(e.verdict, SM_XP_CAUSE); /* lo >= 0.5 */
    assert_string_equal(
        e.why, "closes most of the gap: its interval [50%, 50%] reaches no lower than 50%");
    e = exact(5.01, 5.01, 5.01);
    assert_int_equal(e.verdict, SM_XP_PART);
    e = exact(0, 0, 0);
    assert_int_equal(e.verdict, SM_XP_CAUSE);
    assert_true(e.lo == 1 && e.hi == 1);
    e = exact(10, 10, 10);
    assert_true(e.lo == 0 && e.hi == 0);
    assert_int_equal(e.verdict, SM_XP_NOT); /* lo <= 0 <= hi < 0.5 */
    e = exact(9, 9, 9);
    assert_true(e.lo == e.hi && fabs(e.lo - 0.1) < 1e-12);
    assert_int_equal(e.verdict, SM_XP_PART); /* lo > 0, hi reaching SM_XP_NEGLIGIBLE */
    /* Clear of zero, but all of it below a tenth of the gap: a real effect too small to be
     * any part of it (the decoy's reverse that CI once judged "confirms in part" at [0%, 4%]). */
    e = exact(9.99, 9.6, 9.99);
    assert_true(e.lo > 0 && e.hi < SM_XP_NEGLIGIBLE);
    assert_int_equal(e.verdict, SM_XP_NOT);
    assert_string_equal(e.why, "closes less than a tenth of the gap: its interval [0%, 4%] stays "
                               "below 10%");
    e = exact(10.01, 10.01, 10.01);
    assert_int_equal(e.verdict, SM_XP_NOT);
    assert_non_null(strstr(e.why, "it widens the gap"));
    /* 0 and 50% both inside: too wide. */
    e = exact(0, 5, 10);
    assert_int_equal(e.verdict, SM_XP_INCONCLUSIVE);
    assert_true(e.lo == 0 && e.hi == 1);
    assert_string_equal(e.why, "the interval [0%, 100%] is too wide to decide: it holds 0 and "
                               "reaches 50%");
    e = exact(6, 8, 10);
    assert_true(e.lo == 0 && e.hi == 0.4);
    assert_int_equal(e.verdict, SM_XP_NOT);
}

static void test_one_seed_gives_one_estimate(void **state)
{
    (void)state;
    groups g;
    lab(&g, (CTRL + FLEET) / 2, 0.10);
    sm_xp_estimate a, b, c;
    assert_int_equal(sm_xp_estimate_share(g.ctrl, 8, g.treat, 8, g.fleet, 20, 7, &a), 0);
    assert_int_equal(sm_xp_estimate_share(g.ctrl, 8, g.treat, 8, g.fleet, 20, 7, &b), 0);
    assert_int_equal(sm_xp_estimate_share(g.ctrl, 8, g.treat, 8, g.fleet, 20, 8, &c), 0);
    assert_true(a.lo == b.lo && a.hi == b.hi && a.share == b.share);
    assert_string_equal(a.why, b.why);
    assert_true(a.lo != c.lo || a.hi != c.hi);
    assert_true(a.share == c.share); /* the point estimate is no resample */
}

static sm_xp_estimate cause_estimate(void)
{
    sm_xp_estimate e = {SM_XP_CAUSE, 0.98, 0.91, 1.03, 0.0567, 0.0071, 0.0070, 8, 8, 20, ""};
    snprintf(e.why, sizeof e.why, "closes most of the gap");
    return e;
}

static sm_xp_suspect qdisc_suspect(void)
{
    sm_xp_suspect s = {.relevance = 100};
    snprintf(s.item, sizeof s.item, "if.lo.qdisc");
    snprintf(s.label, sizeof s.label, "lo qdisc");
    snprintf(s.host_value, sizeof s.host_value, "tbf rate 400Mbit burst 128Kb lat 50ms");
    snprintf(s.fleet_value, sizeof s.fleet_value, "noqueue");
    snprintf(s.treatment, sizeof s.treatment, "qdisc lo noqueue");
    return s;
}

static void test_estimate_json_names_each_field_and_null_for_nan(void **state)
{
    (void)state;
    sm_xp_estimate e = cause_estimate();
    char *j = sm_xp_estimate_json(&e);
    assert_non_null(j);
    assert_string_equal(j, "{\"verdict\":\"cause\",\"share\":0.98,\"lo\":0.91,\"hi\":1.03,"
                           "\"ctrl_median\":0.0567,\"treat_median\":0.0071,\"fleet_median\":0.007,"
                           "\"n_ctrl\":8,\"n_treat\":8,\"n_fleet\":20,"
                           "\"why\":\"closes most of the gap\"}");
    free(j);
    e.verdict = SM_XP_INCONCLUSIVE;
    e.share = e.lo = e.hi = NAN;
    j = sm_xp_estimate_json(&e);
    assert_non_null(j);
    assert_non_null(strstr(j, "\"verdict\":\"inconclusive\",\"share\":null,\"lo\":null,"
                              "\"hi\":null,"));
    free(j);
}

static void test_text_says_the_verdict_the_change_and_the_numbers(void **state)
{
    (void)state;
    sm_xp_suspect s = qdisc_suspect();
    sm_xp_estimate e = cause_estimate();
    char buf[400];
    sm_xp_estimate_text(&s, &e, "s", buf, sizeof buf);
    assert_string_equal(buf, "cause        lo qdisc tbf rate 400Mbit burst 128Kb ... -> noqueue: "
                             "closes 98% of the gap [91%, 103%] (control 0.0567 s, treated "
                             "0.0071 s, fleet 0.007 s; n 8/8/20)");

    e.verdict = SM_XP_NOT;
    e.share = -0.2;
    e.lo = -0.4;
    e.hi = -0.05;
    e.ctrl_median = 175;
    e.treat_median = 120;
    e.fleet_median = 1400.4;
    sm_xp_estimate_text(&s, &e, "MB/s", buf, sizeof buf);
    assert_non_null(strstr(buf, "not the cause lo qdisc tbf"));
    assert_non_null(strstr(buf, ": widens the gap by 20% [-40%, -5%] (control 175 MB/s, treated "
                                "120 MB/s, fleet 1400 MB/s; n 8/8/20)"));

    e.verdict = SM_XP_INCONCLUSIVE;
    e.share = NAN;
    e.treat_median = NAN;
    snprintf(e.why, sizeof e.why, "too few samples: treated 0 (each group needs 3)");
    sm_xp_estimate_text(&s, &e, NULL, buf, sizeof buf);
    assert_non_null(strstr(buf, "inconclusive lo qdisc"));
    assert_non_null(strstr(buf, "noqueue: too few samples: treated 0 (each group needs 3) "
                                "(control 175, treated -, fleet 1400; n 8/8/20)"));

    /* Untested: its reason, whatever estimate is given. */
    s.treatment[0] = '\0';
    snprintf(s.why_untested, sizeof s.why_untested,
             "h2's agent may not change qdiscs: start it with --allow-experiment qdisc");
    int n = sm_xp_estimate_text(&s, NULL, "s", buf, sizeof buf);
    assert_string_equal(buf, "could not be tested lo qdisc tbf rate 400Mbit burst 128Kb ... -> "
                             "noqueue: h2's agent may not change qdiscs: start it with "
                             "--allow-experiment qdisc");
    assert_int_equal(n, strlen(buf));

    /* The combination reads as its label; a short buffer is cut, the wanted length said. */
    sm_xp_suspect all = {.relevance = 0};
    snprintf(all.label, sizeof all.label, "the 2 suspects together");
    snprintf(all.treatment, sizeof all.treatment, "qdisc lo noqueue; socket nodelay=1");
    e = cause_estimate();
    n = sm_xp_estimate_text(&all, &e, "s", buf, 20);
    assert_string_equal(buf, "cause        the 2 ");
    assert_true(n > 20);
    sm_xp_estimate_text(&all, &e, "s", buf, sizeof buf);
    assert_non_null(strstr(buf, "cause        the 2 suspects together: closes 98% of the gap"));
}

static void test_verdict_names(void **state)
{
    (void)state;
    assert_string_equal(sm_xp_verdict_name(SM_XP_CAUSE), "cause");
    assert_string_equal(sm_xp_verdict_name(SM_XP_PART), "part of it");
    assert_string_equal(sm_xp_verdict_name(SM_XP_NOT), "not the cause");
    assert_string_equal(sm_xp_verdict_name(SM_XP_INCONCLUSIVE), "inconclusive");
    assert_string_equal(sm_xp_verdict_name(SM_XP_UNTESTED), "could not be tested");
    assert_string_equal(sm_xp_verdict_name((sm_xp_verdict)99), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_treatment_that_makes_the_host_the_fleet_is_the_cause),
        cmocka_unit_test(test_a_treatment_midway_is_part_of_it),
        cmocka_unit_test(test_a_decoy_that_changes_nothing_is_not_the_cause),
        cmocka_unit_test(test_a_treatment_that_widens_the_gap_is_not_the_cause),
        cmocka_unit_test(test_a_host_no_longer_apart_is_inconclusive),
        cmocka_unit_test(test_a_treatment_that_works_on_half_the_jobs_is_too_wide_to_decide),
        cmocka_unit_test(test_too_few_samples_name_each_short_group),
        cmocka_unit_test(test_a_rate_where_higher_is_better_reads_the_same),
        cmocka_unit_test(test_the_verdict_rules_hold_at_their_bounds),
        cmocka_unit_test(test_one_seed_gives_one_estimate),
        cmocka_unit_test(test_estimate_json_names_each_field_and_null_for_nan),
        cmocka_unit_test(test_text_says_the_verdict_the_change_and_the_numbers),
        cmocka_unit_test(test_verdict_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
