/* Unit tests of the analysis of a fleet's table: which host a cell flags, noisy cells and their
 * CIs, the floor, few hosts, and the 2010 table. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "coordinator/analysis/analysis.h"
#include "coordinator/analysis/table.h"
#include "proto/err.h"
#include "proto/stats.h"
#include "tests/unit/coordinator/analysis/analysis_fixture.h"
#include "tests/unit/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TCP_LABEL   "stream tcp lines 128 B x 8192"
#define UNIX_LABEL  "stream unix lines 128 B x 8192"
#define RATIO_LABEL "tcp/unix stream lines 128 B x 8192"

/* Moves a cell's median, and its interval with it, keeping its n and CV. */
static void move_median(sm_table_cell *c, double median)
{
    analysis_fixture_set_cell(c, median, c->s.n, c->s.cv);
}

/* The 2010 measurements: TCP and Unix-socket times of three machines, and their ratio. */
static void table_2010(sm_table *t)
{
    static const double tcp[3] = {0.230, 0.133, 0.130}, uds[3] = {0.064, 0.064, 0.062};
    assert_int_equal(sm_table_init(t, 3, 2, 1), 0);
    analysis_fixture_set_col(&t->cols[0], TCP_LABEL, "seconds", "s");
    analysis_fixture_set_col(&t->cols[1], UNIX_LABEL, "seconds", "s");
    analysis_fixture_set_col(&t->ratio_cols[0], RATIO_LABEL, "seconds", "x");
    for (size_t r = 0; r < 3; r++) {
        snprintf(t->rows[r], sizeof t->rows[r], "h%zu", r + 1);
        analysis_fixture_set_cell(sm_table_at(t, r, 0), tcp[r], 5, 0.02);
        analysis_fixture_set_cell(sm_table_at(t, r, 1), uds[r], 5, 0.02);
        analysis_fixture_set_cell(sm_table_ratio_at(t, r, 0), tcp[r] / uds[r], 5, 0.02);
    }
}

static const double MAD_K = 0.6745;

/* ---- the 2010 table ---- */

static void test_analysis_2010_table_flags_the_first_machine_only(void **state)
{
    (void)state;
    sm_table t;
    table_2010(&t);
    sm_anomalies a = {0};
    sm_error err = {0};
    assert_int_equal(sm_analysis_table(&t, NULL, &a, &err), 0);
    assert_int_equal(a.n, 2);

    const sm_anomaly *x = &a.v[0];
    assert_int_equal(x->kind, SM_ANOMALY_FLEET);
    assert_string_equal(x->host, "h1");
    assert_string_equal(x->role, "");
    assert_string_equal(x->test, TCP_LABEL);
    assert_string_equal(x->metric, "seconds");
    assert_string_equal(x->unit, "s");
    assert_false(x->ratio);
    assert_int_equal(x->row, 0);
    assert_int_equal(x->col, 0);
    assert_double_near(x->value, 0.230, 0);
    assert_double_near(x->reference, 0.133, 0);
    assert_double_near(x->z, MAD_K * (0.230 - 0.133) / (0.133 - 0.130), 1e-9);
    assert_double_near(x->z, 21.81, 0.01);
    assert_double_near(x->rel, 0.097 / 0.133, 1e-9);
    assert_double_near(x->floor, 0.15, 0);
    assert_string_equal(x->rule, "|z| > 3.5 and >= 15%");
    assert_int_equal(x->dir, SM_DIR_SLOWER);

    x = &a.v[1];
    double r1 = 0.230 / 0.064, r2 = 0.133 / 0.064, r3 = 0.130 / 0.062;
    assert_int_equal(x->kind, SM_ANOMALY_FLEET);
    assert_string_equal(x->host, "h1");
    assert_string_equal(x->test, RATIO_LABEL);
    assert_string_equal(x->unit, "x");
    assert_true(x->ratio);
    assert_int_equal(x->row, 0);
    assert_int_equal(x->col, 0);
    assert_double_near(x->value, r1, 0);
    assert_double_near(x->reference, r3, 0);
    assert_double_near(x->z, MAD_K * (r1 - r3) / (r3 - r2), 1e-9);
    assert_double_near(x->rel, (r1 - r3) / r3, 1e-12);
    assert_int_equal(x->dir, SM_DIR_SLOWER);

    sm_anomalies_fini(&a);
    assert_null(a.v);
    assert_int_equal(a.n, 0);
    sm_table_fini(&t);
}

static void test_analysis_2010_table_text_and_flags_read_as_documented(void **state)
{
    (void)state;
    sm_table t;
    table_2010(&t);
    sm_anomalies a = {0};
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 2);
    char buf[512];
    const char *want = "h1: " TCP_LABEL " (s) 0.23 s vs fleet 0.133 s, +73%, z 21.8, slower "
                       "[|z| > 3.5 and >= 15%]";
    assert_int_equal(sm_anomaly_text(&a.v[0], buf, sizeof buf), (int)strlen(want));
    assert_string_equal(buf, want);
    sm_anomaly_text(&a.v[1], buf, sizeof buf);
    assert_string_equal(buf, "h1: " RATIO_LABEL " (ratio) 3.594x vs fleet 2.097x, +71%, z 54.1, "
                             "slower [|z| > 3.5 and >= 15%]");
    /* snprintf's contract: the count of the whole text even when cut. */
    char small[8];
    assert_int_equal(sm_anomaly_text(&a.v[0], small, sizeof small), (int)strlen(want));
    assert_string_equal(small, "h1: str");

    snprintf(t.flags[2], sizeof t.flags[2], "stale");
    sm_analysis_flag_table(&t, &a);
    assert_string_equal(t.flags[0], TCP_LABEL " 0.23 s vs 0.133 s (z 21.8); " RATIO_LABEL
                                              " 3.59x vs 2.1x (z 54.1)");
    assert_string_equal(t.flags[1], "");
    assert_string_equal(t.flags[2], "");
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

/* ---- fleet ---- */

static void test_analysis_noisy_is_cv_above_10_percent_or_n_below_3(void **state)
{
    (void)state;
    sm_summary s = {.n = 3, .cv = 0.10};
    assert_false(sm_analysis_noisy(&s));
    s.cv = 0.1001;
    assert_true(sm_analysis_noisy(&s));
    s.cv = 0.01;
    s.n = 2;
    assert_true(sm_analysis_noisy(&s));
    s.n = 3;
    s.cv = NAN;
    assert_true(sm_analysis_noisy(&s));
}

static void test_analysis_noisy_fleet_never_flags_a_host_twice_off(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    analysis_fixture_table_fleet(&t, 8, 1, 0.3);
    move_median(sm_table_at(&t, 4, 0), 2.0);
    sm_table_at(&t, 4, 0)->s.ci95_low = 0.9; /* noisy: its interval reaches the fleet */
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 0);
    /* The same fleet, quiet: now the host stands apart. */
    for (size_t r = 0; r < 8; r++)
        sm_table_at(&t, r, 0)->s.cv = 0.02;
    move_median(sm_table_at(&t, 4, 0), 2.0);
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0].row, 4);
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

static void test_analysis_a_noisy_cell_flags_only_when_its_whole_ci_clears_the_floor(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    analysis_fixture_table_fleet(&t, 5, 1, 0.02);
    sm_table_cell *c = sm_table_at(&t, 2, 0);
    move_median(c, 2.0);
    c->s.cv = 0.25;
    c->s.ci95_low = 0.9; /* one slow repetition in five: the interval reaches the fleet */
    c->s.ci95_high = 2.4;
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 0);
    c->s.ci95_low = 1.16; /* 16% above the fleet's 1.0 at its lowest: apart whatever the noise */
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0].row, 2);
    assert_string_equal(a.v[0].rule, "noisy, |z| > 3.5 and CI beyond 15%");
    assert_int_equal(a.v[0].dir, SM_DIR_SLOWER);
    c->s.ci95_low = 1.14; /* 14%: short of the floor */
    sm_anomalies_fini(&a);
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 0);
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

/* Three hosts make a MAD of one gap: medians 15% apart give a z of 5 though each host's own
 * repetitions cover the fleet's median (an unshaped lab's 2010 test under ASan, 19.8 ms against
 * 17.2 and 17.1 ms), and one host of an unshaped lab read a TCP/UDS ratio 16% off for a whole
 * run with every repetition on one side. A host flags when even the near end of its own
 * interval lies the floor beyond the fleet's median. */
static void
test_analysis_a_host_flags_only_with_its_interval_the_floor_beyond_the_median(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    assert_int_equal(sm_table_init(&t, 3, 1, 0), 0);
    analysis_fixture_set_col(&t.cols[0], TCP_LABEL, "seconds", "s");
    const double v[3] = {0.019849, 0.017209, 0.017100};
    for (size_t r = 0; r < 3; r++) {
        snprintf(t.rows[r], sizeof t.rows[r], "h%zu", r + 1);
        analysis_fixture_set_cell(sm_table_at(&t, r, 0), v[r], 5, 0.06);
    }
    sm_table_cell *h1 = sm_table_at(&t, 0, 0);
    h1->s.ci95_low = 0.0160; /* [min, max] of its five repetitions */
    h1->s.ci95_high = 0.0205;
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 0);
    /* Every repetition above the fleet's median, but the near end of the interval only 10.4%
     * above it: the difference is not the floor with confidence, and does not flag. */
    h1->s.ci95_low = 0.0190;
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 0);
    /* The whole interval the floor beyond the median (+16.2% at its near end) flags. */
    h1->s.median = 0.0215;
    h1->s.ci95_low = 0.0200;
    h1->s.ci95_high = 0.0230;
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0].row, 0);
    assert_true(a.v[0].z > 3.5);
    assert_string_equal(a.v[0].rule, "|z| > 3.5 and >= 15%");
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

static void test_analysis_a_cell_with_two_samples_never_flags(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    analysis_fixture_table_fleet(&t, 5, 1, 0.02);
    move_median(sm_table_at(&t, 2, 0), 2.0);
    sm_table_at(&t, 2, 0)->s.n = 2;
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 0);
    sm_table_at(&t, 2, 0)->s.n = 3;
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

static void test_analysis_fleet_of_fewer_than_three_cells_raises_nothing(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    analysis_fixture_table_fleet(&t, 3, 1, 0.02);
    move_median(sm_table_at(&t, 0, 0), 5.0);
    sm_table_at(&t, 2, 0)->have = false;
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 0);
    sm_table_at(&t, 2, 0)->have = true;
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

static void test_analysis_floor_keeps_a_10_percent_outlier_unless_lowered(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    analysis_fixture_table_fleet(&t, 8, 1, 0.02);
    move_median(sm_table_at(&t, 6, 0), 0.90);
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 0);
    sm_analysis_opts o = {.floor = 0.05};
    assert_int_equal(sm_analysis_table(&t, &o, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0].row, 6);
    assert_true(fabs(a.v[0].z) > 50);
    assert_double_near(a.v[0].floor, 0.05, 0);
    assert_string_equal(a.v[0].rule, "|z| > 3.5 and >= 5%");
    assert_int_equal(a.v[0].dir, SM_DIR_FASTER);
    sm_anomalies_fini(&a);
    o.floor = 0.075;
    o.z = 4;
    assert_int_equal(sm_analysis_table(&t, &o, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_string_equal(a.v[0].rule, "|z| > 4 and >= 7.5%");
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

static void test_analysis_mad_0_lets_the_floor_decide_and_reports_no_z(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    assert_int_equal(sm_table_init(&t, 4, 1, 0), 0);
    analysis_fixture_set_col(&t.cols[0], "rr tcp", "rt_per_s", "1/s");
    const double v[4] = {100, 100, 100, 80};
    for (size_t r = 0; r < 4; r++) {
        snprintf(t.rows[r], sizeof t.rows[r], "h%zu", r + 1);
        analysis_fixture_set_cell(sm_table_at(&t, r, 0), v[r], 5, 0.01);
    }
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0].row, 3);
    assert_true(isnan(a.v[0].z));
    assert_double_near(a.v[0].rel, -0.2, 1e-12);
    assert_string_equal(a.v[0].rule, "MAD 0, >= 15%");
    assert_int_equal(a.v[0].dir, SM_DIR_SLOWER); /* rt_per_s: higher is better */
    sm_anomalies_fini(&a);
    /* A metric without a sense (or unknown) says higher/lower. */
    snprintf(t.cols[0].metric, sizeof t.cols[0].metric, "no such metric");
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0].dir, SM_DIR_LOWER);
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

static void test_analysis_appends_in_column_then_row_order_growing_by_doubling(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    analysis_fixture_table_fleet(&t, 8, 5, 0.02);
    for (size_t c = 0; c < 5; c++) {
        move_median(sm_table_at(&t, 1, c), 1.5);
        move_median(sm_table_at(&t, 6, c), 0.5);
    }
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 10);
    assert_int_equal(a.cap, 16);
    for (size_t i = 0; i < 10; i++) {
        assert_int_equal(a.v[i].col, i / 2);
        assert_int_equal(a.v[i].row, i % 2 ? 6 : 1);
    }
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 20);
    assert_int_equal(a.cap, 32);
    assert_int_equal(a.v[19].row, 6);
    sm_anomalies_fini(&a);
    sm_anomalies_fini(&a);
    sm_anomalies_fini(NULL);
    sm_table_fini(&t);
}

/* ---- few hosts: a gap that large always flags; a time limit is evidence ---- */

/* Three hosts' http thread throughput, as measured on a lab whose h2 was shaped to 50 Mbit/s:
 * with three hosts the MAD is the gap between the two others, so h2's robust z is -2.1. */
static void table_http3(sm_table *t, double h2, double h2_low, double h2_high, double h3)
{
    assert_int_equal(sm_table_init(t, 3, 1, 0), 0);
    analysis_fixture_set_col(&t->cols[0], "http thread 16 MiB x11", "throughput_MBps", "MB/s");
    const double v[3] = {1078, h2, h3};
    for (size_t r = 0; r < 3; r++) {
        snprintf(t->rows[r], sizeof t->rows[r], "h%zu", r + 1);
        analysis_fixture_set_cell(sm_table_at(t, r, 0), v[r], 5, 0.02);
    }
    sm_table_at(t, 1, 0)->s.ci95_low = h2_low;
    sm_table_at(t, 1, 0)->s.ci95_high = h2_high;
}

static void test_analysis_a_host_100x_slower_flags_whatever_z_says(void **state)
{
    (void)state;
    sm_table t;
    table_http3(&t, 6.26, 6.2, 6.3, 1420);
    sm_anomalies a = {0};
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    const sm_anomaly *x = &a.v[0];
    assert_int_equal(x->kind, SM_ANOMALY_FLEET);
    assert_string_equal(x->host, "h2");
    assert_int_equal(x->row, 1);
    assert_int_equal(x->dir, SM_DIR_SLOWER);
    /* The z that the rule alone would have missed, and the evidence that flagged it. */
    assert_double_near(x->z, MAD_K * (6.26 - 1078) / (1420 - 1078), 1e-9);
    assert_true(fabs(x->z) < 3.5);
    assert_double_near(x->value, 6.26, 0);
    assert_double_near(x->reference, 1078, 0);
    assert_string_equal(x->rule, "CI beyond every other host's by >= 15%");
    sm_analysis_flag_table(&t, &a);
    assert_string_equal(t.flags[1],
                        "http thread 16 MiB x11 6.26 MB/s vs 1078 MB/s (CI apart, z -2.1)");
    sm_anomalies_fini(&a);
    sm_table_fini(&t);

    /* Below the others, but its interval 10% short of the nearest one (1078 x 0.98): none. */
    table_http3(&t, 900, 880, 950, 1200);
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 0);
    sm_table_fini(&t);
    /* Far off, but its interval reaching the others': none either. */
    table_http3(&t, 500, 400, 1100, 1200);
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 0);
    sm_table_fini(&t);
    /* The far end of a spread fleet is no outlier: 1078, 1420 and 6.26 apart from both is h2
     * alone; but with h2 at 900, h3 at 1420 lies 27% beyond h1's interval, further than h1
     * and h2 differ (20%): h3 stands apart, faster. */
    table_http3(&t, 900, 880, 950, 1420);
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_string_equal(a.v[0].host, "h3");
    assert_int_equal(a.v[0].dir, SM_DIR_FASTER);
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

static void test_analysis_a_host_at_its_time_limit_is_slower_not_missing(void **state)
{
    (void)state;
    sm_table t;
    analysis_fixture_table_fleet(&t, 3, 2, 0.02);
    analysis_fixture_set_col(&t.cols[1], "http thread 50 MB", "throughput_MBps", "MB/s");
    /* h2 finished no job of either column: each ran into its 60 s limit. */
    for (size_t c = 0; c < 2; c++) {
        sm_table_cell *c2 = sm_table_at(&t, 1, c);
        memset(c2, 0, sizeof *c2);
        c2->failed = c2->limited = 3;
        c2->limit_bound = c == 0 ? 60 : NAN;
    }
    sm_anomalies a = {0};
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 2);
    const sm_anomaly *x = &a.v[0];
    assert_int_equal(x->kind, SM_ANOMALY_FLEET);
    assert_string_equal(x->host, "h2");
    assert_true(x->at_limit);
    assert_int_equal(x->dir, SM_DIR_SLOWER);
    assert_double_near(x->value, 60, 0);
    assert_string_equal(x->rule, "3 of 3 jobs at the time limit");
    char buf[256];
    sm_anomaly_text(x, buf, sizeof buf);
    assert_non_null(strstr(buf, "h2: test 0 (s) > 60 s vs fleet "));
    /* The value is a bound, and so is how much slower it is. */
    assert_non_null(strstr(buf, "x slower, z - [3 of 3 jobs at the time limit]"));
    assert_non_null(strstr(buf, " s, > "));
    /* A throughput has no bound from the limit alone: "> limit", still slower. */
    x = &a.v[1];
    assert_true(x->at_limit);
    assert_int_equal(x->dir, SM_DIR_SLOWER);
    assert_true(isnan(x->value));
    sm_anomaly_text(x, buf, sizeof buf);
    assert_non_null(strstr(buf, "(MB/s) > limit vs fleet "));
    char *json = sm_anomalies_json(1, "r", 0, NULL, &a);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"at_limit\":true"));
    free(json);
    sm_anomalies_fini(&a);

    /* A limit the finished hosts nearly reach is no evidence: 1.1 s against 1.0. */
    sm_table_at(&t, 1, 0)->limit_bound = 1.1;
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0].col, 1);
    sm_anomalies_fini(&a);
    sm_table_at(&t, 1, 0)->limit_bound = 60;

    /* One job in four at its limit: the three that finished are the cell. */
    analysis_fixture_set_cell(sm_table_at(&t, 1, 0), 1.0, 3, 0.02);
    sm_table_at(&t, 1, 0)->limited = 1;
    analysis_fixture_set_cell(sm_table_at(&t, 1, 1), 1.0, 3, 0.02);
    sm_table_at(&t, 1, 1)->limited = 1;
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 0);

    /* Two hosts of three at their limit: which one is odd is not clear; nothing. */
    for (size_t r = 0; r < 2; r++) {
        sm_table_cell *c = sm_table_at(&t, r, 0);
        memset(c, 0, sizeof *c);
        c->failed = c->limited = 2;
        c->limit_bound = 60;
    }
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 0);
    sm_table_fini(&t);
}

static void test_analysis_a_coarse_cell_is_never_judged(void **state)
{
    (void)state;
    sm_table t;
    table_2010(&t);
    /* h1's ratio stands apart, but its CPU times were a tick or two: rounding, not evidence. */
    sm_table_ratio_at(&t, 0, 0)->coarse = true;
    sm_anomalies a = {0};
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_false(a.v[0].ratio);
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_analysis_2010_table_flags_the_first_machine_only),
        cmocka_unit_test(test_analysis_2010_table_text_and_flags_read_as_documented),
        cmocka_unit_test(test_analysis_noisy_is_cv_above_10_percent_or_n_below_3),
        cmocka_unit_test(test_analysis_noisy_fleet_never_flags_a_host_twice_off),
        cmocka_unit_test(test_analysis_a_noisy_cell_flags_only_when_its_whole_ci_clears_the_floor),
        cmocka_unit_test(
            test_analysis_a_host_flags_only_with_its_interval_the_floor_beyond_the_median),
        cmocka_unit_test(test_analysis_a_cell_with_two_samples_never_flags),
        cmocka_unit_test(test_analysis_fleet_of_fewer_than_three_cells_raises_nothing),
        cmocka_unit_test(test_analysis_floor_keeps_a_10_percent_outlier_unless_lowered),
        cmocka_unit_test(test_analysis_mad_0_lets_the_floor_decide_and_reports_no_z),
        cmocka_unit_test(test_analysis_appends_in_column_then_row_order_growing_by_doubling),
        cmocka_unit_test(test_analysis_a_host_100x_slower_flags_whatever_z_says),
        cmocka_unit_test(test_analysis_a_host_at_its_time_limit_is_slower_not_missing),
        cmocka_unit_test(test_analysis_a_coarse_cell_is_never_judged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
