/* Unit tests of the analysis of comparison tables (coordinator/analysis/analysis.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "coordinator/analysis/analysis.h"
#include "coordinator/analysis/table.h"
#include "proto/err.h"
#include "proto/stats.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TCP_LABEL   "stream tcp lines 128 B x 8192"
#define UNIX_LABEL  "stream unix lines 128 B x 8192"
#define RATIO_LABEL "tcp/unix stream lines 128 B x 8192"

/* A summary set by hand: n samples, the given CV, a CI of +-2% around the median. */
static void set_cell(sm_table_cell *c, double median, size_t n, double cv)
{
    assert_non_null(c);
    c->have = true;
    c->s.n = n;
    c->s.median = median;
    c->s.mean = median;
    c->s.stddev = cv * median;
    c->s.min = 0.97 * median;
    c->s.max = 1.03 * median;
    c->s.cv = cv;
    c->s.ci95_low = 0.98 * median;
    c->s.ci95_high = 1.02 * median;
    c->s.ci_coverage = 0.9375;
}

/* Moves a cell's median, and its interval with it, keeping its n and CV. */
static void move_median(sm_table_cell *c, double median)
{
    set_cell(c, median, c->s.n, c->s.cv);
}

static void set_col(sm_table_col *c, const char *label, const char *metric, const char *unit)
{
    snprintf(c->label, sizeof c->label, "%s", label);
    snprintf(c->metric, sizeof c->metric, "%s", metric);
    snprintf(c->unit, sizeof c->unit, "%s", unit);
}

/* The 2010 measurements: TCP and Unix-socket times of three machines, and their ratio. */
static void table_2010(sm_table *t)
{
    static const double tcp[3] = {0.230, 0.133, 0.130}, uds[3] = {0.064, 0.064, 0.062};
    assert_int_equal(sm_table_init(t, 3, 2, 1), 0);
    set_col(&t->cols[0], TCP_LABEL, "seconds", "s");
    set_col(&t->cols[1], UNIX_LABEL, "seconds", "s");
    set_col(&t->ratio_cols[0], RATIO_LABEL, "seconds", "x");
    for (size_t r = 0; r < 3; r++) {
        snprintf(t->rows[r], sizeof t->rows[r], "h%zu", r + 1);
        set_cell(sm_table_at(t, r, 0), tcp[r], 5, 0.02);
        set_cell(sm_table_at(t, r, 1), uds[r], 5, 0.02);
        set_cell(sm_table_ratio_at(t, r, 0), tcp[r] / uds[r], 5, 0.02);
    }
}

/* n hosts, one "seconds" column near 1.0 (+-0.2% jitter), every cell n = 5 with the given CV. */
static void table_fleet(sm_table *t, size_t n, size_t cols, double cv)
{
    assert_int_equal(sm_table_init(t, n, cols, 0), 0);
    for (size_t c = 0; c < cols; c++) {
        char label[32];
        snprintf(label, sizeof label, "test %zu", c);
        set_col(&t->cols[c], label, "seconds", "s");
    }
    for (size_t r = 0; r < n; r++) {
        snprintf(t->rows[r], sizeof t->rows[r], "h%zu", r + 1);
        for (size_t c = 0; c < cols; c++)
            set_cell(sm_table_at(t, r, c), 1.0 + 0.001 * ((double)((r * 3 + c) % 5) - 2), 5, cv);
    }
}

/* Rows "<p>1-><p>2", "<p>1-><p>3", ... for 4 hosts (12 rows), one throughput column near
 * 1000 MB/s with +-1% deterministic jitter (irregular, so that the polish leaves residuals with
 * a MAD above 0); cells whose server is slow_server, and the one row slow_row, at a third. */
static void table_pairs(sm_table *t, const char *prefix, int slow_server, int slow_row)
{
    assert_int_equal(sm_table_init(t, 12, 1, 0), 0);
    t->pairs = true;
    set_col(&t->cols[0], "stream tcp 1 GB", "throughput_MBps", "MB/s");
    size_t r = 0;
    for (int c = 1; c <= 4; c++) {
        for (int s = 1; s <= 4; s++) {
            if (c == s)
                continue;
            snprintf(t->rows[r], sizeof t->rows[r], "%s%d->%s%d", prefix, c, prefix, s);
            double v = 1000.0 * (1 + 0.01 * sin(2.3 * (double)r + 0.5));
            if (s == slow_server || (int)r == slow_row)
                v /= 3;
            set_cell(sm_table_at(t, r, 0), v, 5, 0.02);
            r++;
        }
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
    table_fleet(&t, 8, 1, 0.3);
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
    table_fleet(&t, 5, 1, 0.02);
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
    set_col(&t.cols[0], TCP_LABEL, "seconds", "s");
    const double v[3] = {0.019849, 0.017209, 0.017100};
    for (size_t r = 0; r < 3; r++) {
        snprintf(t.rows[r], sizeof t.rows[r], "h%zu", r + 1);
        set_cell(sm_table_at(&t, r, 0), v[r], 5, 0.06);
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
    table_fleet(&t, 5, 1, 0.02);
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
    table_fleet(&t, 3, 1, 0.02);
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
    table_fleet(&t, 8, 1, 0.02);
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
    set_col(&t.cols[0], "rr tcp", "rt_per_s", "1/s");
    const double v[4] = {100, 100, 100, 80};
    for (size_t r = 0; r < 4; r++) {
        snprintf(t.rows[r], sizeof t.rows[r], "h%zu", r + 1);
        set_cell(sm_table_at(&t, r, 0), v[r], 5, 0.01);
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
    table_fleet(&t, 8, 5, 0.02);
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

/* ---- pair matrix ---- */

static void test_analysis_pair_matrix_tells_a_slow_server_from_slow_links(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    table_pairs(&t, "h", 3, -1);
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    const sm_anomaly *x = &a.v[0];
    assert_int_equal(x->kind, SM_ANOMALY_SLOW_HOST);
    assert_string_equal(x->host, "h3");
    assert_string_equal(x->role, "server");
    assert_int_equal(x->row, 1); /* "h1->h3" */
    assert_int_equal(x->dir, SM_DIR_SLOWER);
    assert_double_near(x->reference, 1000, 10);
    assert_double_near(x->value, 1000.0 / 3, 10);
    assert_double_near(x->rel, (x->value - x->reference) / x->reference, 1e-12);
    assert_true(x->z < -3.5);

    assert_double_near(x->z, -55.2, 0.05);

    /* The flag goes on every row whose server is h3, and on no other. */
    sm_analysis_flag_table(&t, &a);
    for (size_t r = 0; r < t.n_rows; r++) {
        bool to_h3 = strcmp(t.rows[r] + strlen(t.rows[r]) - 2, "h3") == 0;
        assert_string_equal(t.flags[r], to_h3 ? "slow host: h3 (server) stream tcp 1 GB 337 MB/s "
                                                "vs 992 MB/s (z -55.2)"
                                              : "");
    }
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

/* As the lab measures it: the slow host's pairs are steady (the shaper sets their pace) and the
 * fast pairs are the noisy ones. They still count for the fleet's typical pair. */
static void test_analysis_pair_matrix_keeps_noisy_fast_pairs_in_the_polish(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    table_pairs(&t, "h", 3, -1);
    for (size_t r = 0; r < t.n_rows; r++)
        if (strstr(t.rows[r], "h3") == NULL)
            sm_table_at(&t, r, 0)->s.cv = 0.14;
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0].kind, SM_ANOMALY_SLOW_HOST);
    assert_string_equal(a.v[0].host, "h3");
    assert_string_equal(a.v[0].role, "server");
    assert_int_equal(a.v[0].dir, SM_DIR_SLOWER);
    assert_double_near(a.v[0].reference, 1000, 10);
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

/* A shaped host paces its pairs so evenly that their residuals are all but 0: the links between
 * the other hosts are judged among themselves (here they spread by +-8%, one by 18%), not
 * against those zeros, which would make the MAD 0 and any pair past the floor a slow link. */
static void test_analysis_pair_matrix_judges_links_without_a_slow_hosts_pairs(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    table_pairs(&t, "h", -1, -1);
    for (size_t r = 0; r < t.n_rows; r++) {
        sm_table_cell *c = sm_table_at(&t, r, 0);
        double v = 1000.0 * (1 + 0.08 * sin(1.7 * (double)r + 0.3));
        if (strstr(t.rows[r], "h3") != NULL)
            v = 12.0; /* both ways, exactly the shaper's pace */
        else if (strcmp(t.rows[r], "h1->h2") == 0)
            v = 1180.0;
        set_cell(c, v, 5, 0.02);
    }
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    for (size_t i = 0; i < a.n; i++) {
        if (a.v[i].kind != SM_ANOMALY_SLOW_HOST || strcmp(a.v[i].host, "h3") != 0)
            fail_msg("unexpected %s %s", sm_anomaly_kind_name(a.v[i].kind), a.v[i].host);
    }
    assert_int_equal(a.n, 2); /* as client and as server */
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

static void test_analysis_pair_matrix_tells_a_slow_link_from_slow_hosts(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    table_pairs(&t, "h", -1, 5);
    assert_string_equal(t.rows[5], "h2->h4");
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    const sm_anomaly *x = &a.v[0];
    assert_int_equal(x->kind, SM_ANOMALY_SLOW_LINK);
    assert_string_equal(x->host, "h2->h4");
    assert_string_equal(x->role, "");
    assert_int_equal(x->row, 5);
    assert_int_equal(x->dir, SM_DIR_SLOWER);
    /* value is the fit: the cell itself. */
    assert_double_near(x->value, sm_table_at(&t, 5, 0)->s.median, 1e-9);
    assert_double_near(x->reference, 1000, 20);
    assert_double_near(x->rel, -2.0 / 3, 0.03);
    /* The reference is what its two hosts predict, so the text reads as the residual. */
    char buf[256];
    sm_anomaly_text(x, buf, sizeof buf);
    assert_string_equal(buf, "h2->h4: stream tcp 1 GB (MB/s) 331.5 MB/s vs expected "
                             "984.7 MB/s, 3.0x slower, z -1576.7 [|z| > 3.5 and >= 15%]");
    sm_analysis_flag_table(&t, &a);
    for (size_t r = 0; r < t.n_rows; r++) {
        assert_string_equal(t.flags[r],
                            r == 5 ? "slow link: stream tcp 1 GB 332 MB/s vs 985 MB/s (z -1576.7)"
                                   : "");
    }
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

/* h3 is slow as a server but for one client: that cell's residual is as large as the effect,
 * yet it is the host's doing, not the link's. */
static void test_analysis_pair_matrix_leaves_the_links_of_a_slow_host_to_it(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    table_pairs(&t, "h", 3, -1);
    assert_string_equal(t.rows[11], "h4->h3");
    set_cell(sm_table_at(&t, 11, 0), 1000, 5, 0.02);
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0].kind, SM_ANOMALY_SLOW_HOST);
    assert_string_equal(a.v[0].host, "h3");
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

static void test_analysis_pair_rows_split_at_the_arrow_not_at_a_dash_in_a_name(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    table_pairs(&t, "rack-", 3, -1);
    assert_string_equal(t.rows[1], "rack-1->rack-3");
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_string_equal(a.v[0].host, "rack-3");
    assert_string_equal(a.v[0].role, "server");
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

static void test_analysis_pair_table_of_two_hosts_raises_nothing(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    assert_int_equal(sm_table_init(&t, 2, 1, 0), 0);
    t.pairs = true;
    set_col(&t.cols[0], "stream tcp 1 GB", "throughput_MBps", "MB/s");
    snprintf(t.rows[0], sizeof t.rows[0], "h1->h2");
    snprintf(t.rows[1], sizeof t.rows[1], "h2->h1");
    set_cell(sm_table_at(&t, 0, 0), 1000, 5, 0.01);
    set_cell(sm_table_at(&t, 1, 0), 10, 5, 0.01);
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 0);
    sm_table_fini(&t);
}

/* ---- regression ---- */

/* Three hosts, one "seconds" column at 1.0 with CIs +-2%. */
static void table_base(sm_table *t)
{
    table_fleet(t, 3, 1, 0.02);
    for (size_t r = 0; r < 3; r++)
        set_cell(sm_table_at(t, r, 0), 1.0, 5, 0.02);
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
    set_cell(moved, 1.30, 5, 0.02);
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
    set_cell(moved, 1.05, 5, 0.002);
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
    set_cell(sm_table_at(&run, 0, 0), 2.0, 5, 0.02);
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

/* ---- few hosts: a gap that large always flags; a time limit is evidence ---- */

/* Three hosts' http thread throughput, as measured on a lab whose h2 was shaped to 50 Mbit/s:
 * with three hosts the MAD is the gap between the two others, so h2's robust z is -2.1. */
static void table_http3(sm_table *t, double h2, double h2_low, double h2_high, double h3)
{
    assert_int_equal(sm_table_init(t, 3, 1, 0), 0);
    set_col(&t->cols[0], "http thread 16 MiB x11", "throughput_MBps", "MB/s");
    const double v[3] = {1078, h2, h3};
    for (size_t r = 0; r < 3; r++) {
        snprintf(t->rows[r], sizeof t->rows[r], "h%zu", r + 1);
        set_cell(sm_table_at(t, r, 0), v[r], 5, 0.02);
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
    table_fleet(&t, 3, 2, 0.02);
    set_col(&t.cols[1], "http thread 50 MB", "throughput_MBps", "MB/s");
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
    set_cell(sm_table_at(&t, 1, 0), 1.0, 3, 0.02);
    sm_table_at(&t, 1, 0)->limited = 1;
    set_cell(sm_table_at(&t, 1, 1), 1.0, 3, 0.02);
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

/* ---- regressions against the fleet's move ---- */

static void
test_analysis_a_fleet_move_is_reported_once_and_only_the_odd_host_regresses(void **state)
{
    (void)state;
    sm_table base, run;
    table_fleet(&base, 5, 1, 0.02);
    table_fleet(&run, 5, 1, 0.02);
    for (size_t r = 0; r < 5; r++) {
        set_cell(sm_table_at(&base, r, 0), 1.0, 10, 0.02);
        /* Every host +30%, h4 +90%. */
        set_cell(sm_table_at(&run, r, 0), r == 3 ? 1.9 : 1.3, 10, 0.02);
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
    set_cell(sm_table_at(&run, 3, 0), 1.43, 10, 0.02);
    assert_int_equal(sm_analysis_regression(&run, &base, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0].kind, SM_ANOMALY_FLEET_MOVE);
    sm_anomalies_fini(&a);

    /* A move below the floor is not reported, but is still taken out: +10% everywhere and
     * +30% on h4 is a 18% regression of h4, and nothing else. */
    for (size_t r = 0; r < 5; r++)
        set_cell(sm_table_at(&run, r, 0), r == 3 ? 1.3 : 1.1, 10, 0.02);
    assert_int_equal(sm_analysis_regression(&run, &base, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0].kind, SM_ANOMALY_REGRESSION);
    assert_string_equal(a.v[0].host, "h4");
    assert_double_near(a.v[0].rel, 1.3 / 1.1 - 1, 1e-12);
    sm_anomalies_fini(&a);
    sm_table_fini(&base);
    sm_table_fini(&run);
}

/* ---- text, flags, JSON ---- */

static sm_anomaly slow_host_anomaly(void)
{
    sm_anomaly x = {.kind = SM_ANOMALY_SLOW_HOST,
                    .value = 333.3,
                    .reference = 1000,
                    .z = NAN,
                    .rel = -0.6667,
                    .floor = 0.15,
                    .dir = SM_DIR_SLOWER,
                    .row = 1};
    snprintf(x.host, sizeof x.host, "h3");
    snprintf(x.role, sizeof x.role, "server");
    snprintf(x.test, sizeof x.test, "stream tcp 1 GB");
    snprintf(x.metric, sizeof x.metric, "throughput_MBps");
    snprintf(x.unit, sizeof x.unit, "MB/s");
    snprintf(x.rule, sizeof x.rule, "MAD 0, >= 15%%");
    return x;
}

static void test_analysis_slow_host_text_names_the_role_and_shows_no_z_for_mad_0(void **state)
{
    (void)state;
    sm_anomaly x = slow_host_anomaly();
    char buf[256];
    sm_anomaly_text(&x, buf, sizeof buf);
    assert_string_equal(buf, "h3 (server): stream tcp 1 GB (MB/s) 333.3 MB/s vs overall "
                             "1000 MB/s, 3.0x slower, z - [MAD 0, >= 15%]");
    sm_table t;
    assert_int_equal(sm_table_init(&t, 2, 1, 0), 0);
    t.pairs = true;
    snprintf(t.rows[0], sizeof t.rows[0], "h3->h1");
    snprintf(t.rows[1], sizeof t.rows[1], "h1->h3");
    sm_anomalies a = {.v = &x, .n = 1, .cap = 1};
    sm_analysis_flag_table(&t, &a);
    assert_string_equal(t.flags[0], "");
    assert_string_equal(t.flags[1], "slow host: h3 (server) stream tcp 1 GB 333 MB/s vs 1000 MB/s "
                                    "(MAD 0)");
    sm_table_fini(&t);
}

static void test_analysis_flags_keep_whole_entries_and_say_how_many_more(void **state)
{
    (void)state;
    sm_table t;
    assert_int_equal(sm_table_init(&t, 2, 0, 0), 0);
    snprintf(t.rows[0], sizeof t.rows[0], "h1");
    snprintf(t.rows[1], sizeof t.rows[1], "h2");
    sm_anomaly v[10];
    for (size_t i = 0; i < 10; i++) {
        v[i] = (sm_anomaly){
            .kind = SM_ANOMALY_FLEET, .value = 2, .reference = 1, .z = 9, .row = i == 9 ? 1 : 0};
        /* 64-character labels: entries of 83 bytes, three with "; " take 253. */
        snprintf(v[i].test, sizeof v[i].test, "%063zu%c", i, 'x');
        snprintf(v[i].unit, sizeof v[i].unit, "s");
    }
    sm_anomalies a = {.v = v, .n = 10, .cap = 10};
    sm_analysis_flag_table(&t, &a);
    char entry[2][128];
    for (size_t i = 0; i < 2; i++)
        snprintf(entry[i], sizeof entry[i], "%063zux 2 s vs 1 s (z 9.0)", i);
    assert_int_equal(strlen(entry[0]), 83);
    /* Three entries would leave no room for " (+6 more)": two are kept. */
    char want[512];
    snprintf(want, sizeof want, "%s; %s (+7 more)", entry[0], entry[1]);
    assert_string_equal(t.flags[0], want);
    snprintf(want, sizeof want, "%063zux 2 s vs 1 s (z 9.0)", (size_t)9);
    assert_string_equal(t.flags[1], want);

    /* Exactly three: they fit without a suffix. */
    a.n = 3;
    sm_analysis_flag_table(&t, &a);
    assert_int_equal(strlen(t.flags[0]), 3 * 83 + 2 * 2);
    assert_null(strstr(t.flags[0], "more"));
    assert_string_equal(t.flags[1], "");

    /* An entry that cannot fit at all leaves the count alone. */
    snprintf(v[0].host, sizeof v[0].host, "%0100d", 0);
    v[0].kind = SM_ANOMALY_SLOW_HOST;
    snprintf(v[0].role, sizeof v[0].role, "client");
    snprintf(v[0].test, sizeof v[0].test, "%0126d", 0);
    snprintf(t.rows[0], sizeof t.rows[0], "%.100s->h2", v[0].host);
    a.n = 1;
    sm_analysis_flag_table(&t, &a);
    assert_string_equal(t.flags[0], "(+1 more)");
    sm_table_fini(&t);
}

static void test_analysis_json_lists_the_evidence_with_null_for_a_missing_z(void **state)
{
    (void)state;
    sm_anomaly v[2];
    v[0] = (sm_anomaly){.kind = SM_ANOMALY_FLEET,
                        .value = 0.23,
                        .reference = 0.133,
                        .z = 21.5,
                        .rel = 0.75,
                        .floor = 0.15,
                        .dir = SM_DIR_SLOWER};
    snprintf(v[0].host, sizeof v[0].host, "h1");
    snprintf(v[0].test, sizeof v[0].test, "tcp/unix \"x\"");
    snprintf(v[0].metric, sizeof v[0].metric, "seconds");
    snprintf(v[0].unit, sizeof v[0].unit, "x");
    v[0].ratio = true;
    snprintf(v[0].rule, sizeof v[0].rule, "|z| > 3.5 and >= 15%%");
    v[1] = slow_host_anomaly();
    sm_anomalies a = {.v = v, .n = 2, .cap = 2};
    char *json = sm_anomalies_json(7, "nightly", 0, NULL, &a);
    assert_non_null(json);
    assert_string_equal(
        json,
        "{\"version\":1,\"run\":{\"id\":\"7\",\"name\":\"nightly\"},\"baseline\":null,"
        "\"z\":3.5,\"floor\":0.15,\"anomalies\":["
        "{\"kind\":\"fleet\",\"host\":\"h1\",\"role\":\"\",\"test\":\"tcp/unix \\\"x\\\"\","
        "\"metric\":\"seconds\",\"unit\":\"x\",\"ratio\":true,\"value\":0.23,"
        "\"reference\":0.133,\"z\":21.5,\"rel\":0.75,\"floor\":0.15,"
        "\"rule\":\"|z| > 3.5 and >= 15%\",\"direction\":\"slower\",\"at_limit\":false},"
        "{\"kind\":\"slow-host\",\"host\":\"h3\",\"role\":\"server\","
        "\"test\":\"stream tcp 1 GB\",\"metric\":\"throughput_MBps\",\"unit\":\"MB/s\","
        "\"ratio\":false,\"value\":333.3,\"reference\":1000,\"z\":null,\"rel\":-0.6667,"
        "\"floor\":0.15,\"rule\":\"MAD 0, >= 15%\",\"direction\":\"slower\",\"at_limit\":false}]}");
    free(json);

    sm_analysis_opts o = {.z = 3, .floor = 0.2};
    sm_anomalies none = {0};
    json = sm_anomalies_json(UINT64_C(18446744073709551615), "", 5, &o, &none);
    assert_non_null(json);
    assert_string_equal(json, "{\"version\":1,\"run\":{\"id\":\"18446744073709551615\","
                              "\"name\":\"\"},\"baseline\":{\"id\":\"5\"},\"z\":3,\"floor\":0.2,"
                              "\"anomalies\":[]}");
    free(json);
}

static void test_analysis_names_kinds_and_directions(void **state)
{
    (void)state;
    assert_string_equal(sm_anomaly_kind_name(SM_ANOMALY_FLEET), "fleet");
    assert_string_equal(sm_anomaly_kind_name(SM_ANOMALY_SLOW_HOST), "slow-host");
    assert_string_equal(sm_anomaly_kind_name(SM_ANOMALY_SLOW_LINK), "slow-link");
    assert_string_equal(sm_anomaly_kind_name(SM_ANOMALY_REGRESSION), "regression");
    assert_string_equal(sm_anomaly_dir_name(SM_DIR_SLOWER), "slower");
    assert_string_equal(sm_anomaly_dir_name(SM_DIR_FASTER), "faster");
    assert_string_equal(sm_anomaly_dir_name(SM_DIR_HIGHER), "higher");
    assert_string_equal(sm_anomaly_dir_name(SM_DIR_LOWER), "lower");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_analysis_2010_table_flags_the_first_machine_only),
        cmocka_unit_test(test_analysis_2010_table_text_and_flags_read_as_documented),
        cmocka_unit_test(test_analysis_robust_z_matches_hand_computed_values),
        cmocka_unit_test(test_analysis_robust_z_skips_non_finite_values),
        cmocka_unit_test(test_analysis_robust_z_with_mad_0_is_0_or_infinite),
        cmocka_unit_test(test_analysis_robust_z_without_finite_values_is_nan),
        cmocka_unit_test(test_analysis_median_polish_reproduces_rs_deaths_example),
        cmocka_unit_test(test_analysis_median_polish_sweeps_rows_first_and_skips_a_nan_diagonal),
        cmocka_unit_test(test_analysis_median_polish_leaves_an_empty_row_at_effect_0),
        cmocka_unit_test(test_analysis_median_polish_without_values_is_einval),
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
        cmocka_unit_test(test_analysis_pair_matrix_tells_a_slow_server_from_slow_links),
        cmocka_unit_test(test_analysis_pair_matrix_keeps_noisy_fast_pairs_in_the_polish),
        cmocka_unit_test(test_analysis_pair_matrix_judges_links_without_a_slow_hosts_pairs),
        cmocka_unit_test(test_analysis_pair_matrix_tells_a_slow_link_from_slow_hosts),
        cmocka_unit_test(test_analysis_pair_matrix_leaves_the_links_of_a_slow_host_to_it),
        cmocka_unit_test(test_analysis_pair_rows_split_at_the_arrow_not_at_a_dash_in_a_name),
        cmocka_unit_test(test_analysis_pair_table_of_two_hosts_raises_nothing),
        cmocka_unit_test(test_analysis_regression_needs_cis_apart_and_the_floor),
        cmocka_unit_test(
            test_analysis_regression_judges_noisy_cells_by_their_cis_and_skips_unmatched),
        cmocka_unit_test(test_analysis_a_host_100x_slower_flags_whatever_z_says),
        cmocka_unit_test(test_analysis_a_host_at_its_time_limit_is_slower_not_missing),
        cmocka_unit_test(test_analysis_a_coarse_cell_is_never_judged),
        cmocka_unit_test(
            test_analysis_a_fleet_move_is_reported_once_and_only_the_odd_host_regresses),
        cmocka_unit_test(test_analysis_slow_host_text_names_the_role_and_shows_no_z_for_mad_0),
        cmocka_unit_test(test_analysis_flags_keep_whole_entries_and_say_how_many_more),
        cmocka_unit_test(test_analysis_json_lists_the_evidence_with_null_for_a_missing_z),
        cmocka_unit_test(test_analysis_names_kinds_and_directions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
