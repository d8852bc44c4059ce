/* Unit tests of the analysis's regressions against a baseline run: CIs apart and the floor, noisy
 * cells, and the fleet's move. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "coordinator/analysis/analysis.h"
#include "coordinator/analysis/table.h"
#include "proto/err.h"
#include "tests/unit/coordinator/analysis/analysis_fixture.h"
#include "tests/unit/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- regression ---- */

/* Three hosts, one "seconds" column at 1.0 with CIs +-2%. */
static void table_base(sm_table *t)
{
    analysis_fixture_table_fleet(t, 3, 1, 0.02);
    for (size_t r = 0; r < 3; r++)
        analysis_fixture_set_cell(sm_table_at(t, r, 0), 1.0, 5, 0.02);
}

static void test_analysis_regression_needs_cis_apart_and_the_floor(void **state)
{
    (void)state;
    sm_table base, run;
    table_base(&base);
    table_base(&run);
    /* The run lists its hosts in another order: cells match by label. */
    snprintf(run.rows[0], sizeof run.rows[0], "h3");
    snprintf(run.rows[2], sizeof run.rows[2], "h1");
    sm_table_cell *moved = sm_table_at(&run, 2, 0); /* h1 */
    analysis_fixture_set_cell(moved, 1.30, 5, 0.02);
    sm_anomalies a = {0};
    sm_error err = {0};
    assert_int_equal(sm_analysis_regression(&run, &base, NULL, &a, &err), 0);
    assert_int_equal(a.n, 1);
    const sm_anomaly *x = &a.v[0];
    assert_int_equal(x->kind, SM_ANOMALY_REGRESSION);
    assert_string_equal(x->host, "h1");
    assert_int_equal(x->row, 2);
    assert_double_near(x->value, 1.30, 0);
    assert_double_near(x->reference, 1.0, 0);
    assert_double_near(x->rel, 0.30, 1e-12);
    assert_true(isnan(x->z));
    assert_string_equal(x->rule, "CIs apart and >= 15%");
    assert_int_equal(x->dir, SM_DIR_SLOWER);
    char buf[256];
    sm_anomaly_text(x, buf, sizeof buf);
    assert_string_equal(buf, "h1: test 0 (s) 1.3 s vs baseline 1 s, +30%, z -, slower "
                             "[CIs apart and >= 15%]");
    sm_analysis_flag_table(&run, &a);
    assert_string_equal(run.flags[2], "regression: test 0 1.3 s (was 1 s)");
    sm_anomalies_fini(&a);

    /* Moved as much, but the CIs overlap. */
    moved->s.ci95_low = 1.01;
    assert_int_equal(sm_analysis_regression(&run, &base, NULL, &a, &err), 0);
    assert_int_equal(a.n, 0);

    /* CIs apart, but 5% only. */
    analysis_fixture_set_cell(moved, 1.05, 5, 0.002);
    moved->s.ci95_low = 1.04;
    moved->s.ci95_high = 1.06;
    assert_int_equal(sm_analysis_regression(&run, &base, NULL, &a, &err), 0);
    assert_int_equal(a.n, 0);
    sm_analysis_opts o = {.floor = 0.04};
    assert_int_equal(sm_analysis_regression(&run, &base, &o, &a, &err), 0);
    assert_int_equal(a.n, 1);
    sm_anomalies_fini(&a);
    sm_table_fini(&base);
    sm_table_fini(&run);
}

static void
test_analysis_regression_judges_noisy_cells_by_their_cis_and_skips_unmatched(void **state)
{
    (void)state;
    sm_table base, run;
    table_base(&base);
    table_base(&run);
    analysis_fixture_set_cell(sm_table_at(&run, 0, 0), 2.0, 5, 0.02);
    sm_anomalies a = {0};
    assert_int_equal(sm_analysis_regression(&run, &base, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    sm_anomalies_fini(&a);
    /* A noisy baseline whose interval stays the floor clear of the new one: a regression. */
    sm_table_cell *b = sm_table_at(&base, 0, 0);
    b->s.cv = 0.2;
    b->s.ci95_high = 1.5;
    assert_int_equal(sm_analysis_regression(&run, &base, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_string_equal(a.v[0].rule, "noisy, CIs apart by >= 15%");
    sm_anomalies_fini(&a);
    /* Apart, but by less than the floor (1.96 - 1.9 = 6% of 1.0): none. */
    b->s.ci95_high = 1.9;
    assert_int_equal(sm_analysis_regression(&run, &base, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 0);
    /* Its interval reaching the new one: none. */
    b->s.ci95_high = 1.99;
    assert_int_equal(sm_analysis_regression(&run, &base, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 0);
    /* Two samples are no evidence, however quiet. */
    b->s.ci95_high = 1.02;
    b->s.n = 2;
    assert_int_equal(sm_analysis_regression(&run, &base, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 0);
    b->s.n = 5;
    b->s.cv = 0.02;
    snprintf(base.cols[0].label, sizeof base.cols[0].label, "another test");
    assert_int_equal(sm_analysis_regression(&run, &base, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 0);
    sm_table_fini(&base);
    sm_table_fini(&run);
}

/* ---- regressions against the fleet's move ---- */

static void
test_analysis_a_fleet_move_is_reported_once_and_only_the_odd_host_regresses(void **state)
{
    (void)state;
    sm_table base, run;
    analysis_fixture_table_fleet(&base, 5, 1, 0.02);
    analysis_fixture_table_fleet(&run, 5, 1, 0.02);
    for (size_t r = 0; r < 5; r++) {
        analysis_fixture_set_cell(sm_table_at(&base, r, 0), 1.0, 10, 0.02);
        /* Every host +30%, h4 +90%. */
        analysis_fixture_set_cell(sm_table_at(&run, r, 0), r == 3 ? 1.9 : 1.3, 10, 0.02);
    }
    sm_anomalies a = {0};
    assert_int_equal(sm_analysis_regression(&run, &base, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 2);
    const sm_anomaly *m = &a.v[0];
    assert_int_equal(m->kind, SM_ANOMALY_FLEET_MOVE);
    assert_string_equal(m->host, "fleet");
    assert_int_equal(m->moved, 5);
    assert_double_near(m->rel, 0.30, 1e-12);
    assert_double_near(m->value, 1.3, 1e-12);
    assert_double_near(m->reference, 1.0, 1e-12);
    assert_int_equal(m->dir, SM_DIR_SLOWER);
    assert_string_equal(m->rule, "median move of 5 hosts >= 15%");
    const sm_anomaly *x = &a.v[1];
    assert_int_equal(x->kind, SM_ANOMALY_REGRESSION);
    assert_string_equal(x->host, "h4");
    assert_double_near(x->reference, 1.3, 1e-12); /* the baseline moved with the fleet */
    assert_double_near(x->rel, 1.9 / 1.3 - 1, 1e-12);
    assert_double_near(x->fleet_move, 0.30, 1e-12);
    assert_string_equal(x->rule, "CIs apart and >= 15%, beyond the fleet's +30%");
    char buf[256];
    sm_anomaly_text(m, buf, sizeof buf);
    assert_string_equal(buf, "fleet: test 0 (s) 1.3 s vs baseline 1 s, +30%, z -, slower "
                             "[median move of 5 hosts >= 15%]");
    /* The move is on no row; h4's regression on its own. */
    sm_analysis_flag_table(&run, &a);
    for (size_t r = 0; r < 5; r++)
        assert_string_equal(run.flags[r], r == 3 ? "regression: test 0 1.9 s (was 1.3 s)" : "");
    sm_anomalies_fini(&a);

    /* h4 only 10% beyond the fleet's move: the move alone. */
    analysis_fixture_set_cell(sm_table_at(&run, 3, 0), 1.43, 10, 0.02);
    assert_int_equal(sm_analysis_regression(&run, &base, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0].kind, SM_ANOMALY_FLEET_MOVE);
    sm_anomalies_fini(&a);

    /* A move below the floor is not reported, but is still taken out: +10% everywhere and
     * +30% on h4 is a 18% regression of h4, and nothing else. */
    for (size_t r = 0; r < 5; r++)
        analysis_fixture_set_cell(sm_table_at(&run, r, 0), r == 3 ? 1.3 : 1.1, 10, 0.02);
    assert_int_equal(sm_analysis_regression(&run, &base, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0].kind, SM_ANOMALY_REGRESSION);
    assert_string_equal(a.v[0].host, "h4");
    assert_double_near(a.v[0].rel, 1.3 / 1.1 - 1, 1e-12);
    sm_anomalies_fini(&a);
    sm_table_fini(&base);
    sm_table_fini(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_analysis_regression_needs_cis_apart_and_the_floor),
        cmocka_unit_test(
            test_analysis_regression_judges_noisy_cells_by_their_cis_and_skips_unmatched),
        cmocka_unit_test(
            test_analysis_a_fleet_move_is_reported_once_and_only_the_odd_host_regresses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
