/* Unit tests for the words of an anomaly (coordinator/analysis/text.c): how its metric is
 * named, how a change is written, how z is printed against its rule's cut. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "coordinator/analysis/analysis.h"

/* A fleet flag of h2 in column test, metric and unit as a table's column names them. */
static sm_anomaly fleet(const char *test, const char *metric, const char *unit, double value,
                        double reference, double z, sm_anomaly_dir dir)
{
    sm_anomaly a = {.kind = SM_ANOMALY_FLEET,
                    .value = value,
                    .reference = reference,
                    .z = z,
                    .rel = (value - reference) / fabs(reference),
                    .floor = 0.15,
                    .dir = dir};
    snprintf(a.host, sizeof a.host, "h2");
    snprintf(a.test, sizeof a.test, "%s", test);
    snprintf(a.metric, sizeof a.metric, "%s", metric);
    snprintf(a.unit, sizeof a.unit, "%s", unit);
    snprintf(a.rule, sizeof a.rule, "|z| > 3.5 and >= 15%%");
    return a;
}

static void text_is(const sm_anomaly *a, const char *want)
{
    char buf[512];
    assert_int_equal(sm_anomaly_text(a, buf, sizeof buf), (int)strlen(want));
    assert_string_equal(buf, want);
}

/* ---- the metric's name ---- */

static void test_text_names_the_metric_by_its_unit_as_the_table_does(void **state)
{
    (void)state;
    sm_anomaly a =
        fleet("stream tcp 128 KiB x 256", "throughput_MBps", "MB/s", 700, 1000, -5, SM_DIR_SLOWER);
    text_is(&a, "h2: stream tcp 128 KiB x 256 (MB/s) 700 MB/s vs fleet 1000 MB/s, -30%, z -5.0, "
                "slower [|z| > 3.5 and >= 15%]");
    a = fleet("stream tcp lines 128 B x 8192", "seconds", "s", 0.23, 0.133, 21.8, SM_DIR_SLOWER);
    text_is(&a, "h2: stream tcp lines 128 B x 8192 (s) 0.23 s vs fleet 0.133 s, +73%, z 21.8, "
                "slower [|z| > 3.5 and >= 15%]");
    a = fleet("connect tcp x 500", "connects_per_s", "1/s", 800, 1000, -4, SM_DIR_SLOWER);
    text_is(&a, "h2: connect tcp x 500 (1/s) 800 1/s vs fleet 1000 1/s, -20%, z -4.0, slower "
                "[|z| > 3.5 and >= 15%]");
}

static void test_text_says_which_statistic_where_the_unit_does_not(void **state)
{
    (void)state;
    sm_anomaly a = fleet("rr tcp 1 B/1 B 1000 ms", "rtt_p50_us", "us", 130, 100, 8, SM_DIR_SLOWER);
    text_is(&a, "h2: rr tcp 1 B/1 B 1000 ms (us, p50) 130 us vs fleet 100 us, +30%, z 8.0, slower "
                "[|z| > 3.5 and >= 15%]");
    a = fleet("http thread 16 MiB x11", "tx_user_s", "s", 1.3, 1, 8, SM_DIR_SLOWER);
    char buf[512];
    sm_anomaly_text(&a, buf, sizeof buf);
    assert_non_null(strstr(buf, " (s, sender user CPU) 1.3 s vs fleet 1 s,"));
}

static void test_text_labels_a_ratio_column_a_ratio_not_its_metric(void **state)
{
    (void)state;
    sm_anomaly a = fleet("tcp/unix stream lines 128 B x 8192", "seconds", "x", 3.594, 2.097, 54.1,
                         SM_DIR_SLOWER);
    a.ratio = true;
    text_is(&a, "h2: tcp/unix stream lines 128 B x 8192 (ratio) 3.594x vs fleet 2.097x, +71%, "
                "z 54.1, slower [|z| > 3.5 and >= 15%]");
}

static void test_text_never_shows_a_raw_metric_name_it_can_name_otherwise(void **state)
{
    (void)state;
    static const char *const names[][2] = {{"throughput_MBps", "MB/s"},
                                           {"rtt_p50_us", "us"},
                                           {"connects_per_s", "1/s"},
                                           {"seconds", "s"},
                                           {"user_s", "s"},
                                           {"first_MBps", "MB/s"},
                                           {"rtt_p999_us", "us"},
                                           {"cpu_s_per_GB", "s/GB"}};
    char buf[512];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        sm_anomaly a = fleet("t", names[i][0], names[i][1], 2, 1, 9, SM_DIR_SLOWER);
        sm_anomaly_text(&a, buf, sizeof buf);
        if (strstr(buf, names[i][0]) != NULL)
            fail_msg("%s names %s", buf, names[i][0]);
    }
    /* A metric this build does not know: by its unit, or by its name when it has none. */
    sm_anomaly a = fleet("t", "widgets_per_s", "1/s", 1.3, 1, 9, SM_DIR_HIGHER);
    sm_anomaly_text(&a, buf, sizeof buf);
    assert_non_null(strstr(buf, "h2: t (1/s) 1.3 1/s vs fleet 1 1/s,"));
    a = fleet("t", "widgets", "", 1.3, 1, 9, SM_DIR_HIGHER);
    sm_anomaly_text(&a, buf, sizeof buf);
    assert_non_null(strstr(buf, "h2: t (widgets) 1.3 vs fleet 1,"));
}

/* ---- the change: a percentage within 2x, a factor beyond ---- */

/* The change as the text writes it: what lies between the reference and ", z". */
static void change_is(const sm_anomaly *a, const char *want)
{
    char buf[512];
    const char *ref = "vs fleet ";
    sm_anomaly_text(a, buf, sizeof buf);
    const char *from = strstr(buf, ref), *to = strstr(buf, ", z ");
    assert_non_null(from);
    assert_non_null(to);
    from = strchr(from + strlen(ref), ',');
    assert_non_null(from);
    assert_true(from < to);
    char got[128];
    snprintf(got, sizeof got, "%.*s", (int)(to - from - 2), from + 2);
    if (strcmp(got, want) != 0)
        fail_msg("change \"%s\", wanted \"%s\", in %s", got, want, buf);
}

static void test_text_writes_a_change_of_2x_or_more_as_a_factor_both_ways(void **state)
{
    (void)state;
    /* A time: higher is slower. */
    sm_anomaly a = fleet("t", "seconds", "s", 2, 1, 9, SM_DIR_SLOWER);
    change_is(&a, "2.0x slower");
    a = fleet("t", "seconds", "s", 0.5, 1, -9, SM_DIR_FASTER);
    change_is(&a, "2.0x faster");
    a = fleet("t", "seconds", "s", 315, 1, 9, SM_DIR_SLOWER);
    change_is(&a, "315x slower");
    a = fleet("t", "seconds", "s", 1.0 / 315, 1, -9, SM_DIR_FASTER);
    change_is(&a, "315x faster");
    a = fleet("t", "seconds", "s", 4.2, 1, 9, SM_DIR_SLOWER);
    change_is(&a, "4.2x slower");
    /* A throughput: lower is slower. */
    a = fleet("t", "throughput_MBps", "MB/s", 500, 1000, -9, SM_DIR_SLOWER);
    change_is(&a, "2.0x slower");
    a = fleet("t", "throughput_MBps", "MB/s", 2000, 1000, 9, SM_DIR_FASTER);
    change_is(&a, "2.0x faster");
    a = fleet("t", "throughput_MBps", "MB/s", 315000, 1000, 9, SM_DIR_FASTER);
    change_is(&a, "315x faster");
    /* A metric with no better side says higher or lower. */
    a = fleet("t", "bytes", "B", 3.1, 1, 9, SM_DIR_HIGHER);
    change_is(&a, "3.1x higher");
    a = fleet("t", "bytes", "B", 0.5, 1, -9, SM_DIR_LOWER);
    change_is(&a, "2.0x lower");
}

static void test_text_keeps_a_percentage_within_2x_and_for_a_fall_to_0(void **state)
{
    (void)state;
    sm_anomaly a = fleet("t", "seconds", "s", 1.73, 1, 9, SM_DIR_SLOWER);
    change_is(&a, "+73%");
    a = fleet("t", "seconds", "s", 1.99, 1, 9, SM_DIR_SLOWER);
    change_is(&a, "+99%");
    a = fleet("t", "throughput_MBps", "MB/s", 510, 1000, -9, SM_DIR_SLOWER);
    change_is(&a, "-49%");
    /* Nothing at all is no number of times less. */
    a = fleet("t", "throughput_MBps", "MB/s", 0, 1000, -9, SM_DIR_SLOWER);
    change_is(&a, "-100%");
}

static void test_text_says_the_direction_once_in_a_factor_or_after_z(void **state)
{
    (void)state;
    /* The user's host: 315 times slower read "-100%". */
    sm_anomaly a = fleet("stream tcp 128 KiB x 256", "throughput_MBps", "MB/s", 4.444, 1400, -21.8,
                         SM_DIR_SLOWER);
    text_is(&a, "h2: stream tcp 128 KiB x 256 (MB/s) 4.444 MB/s vs fleet 1400 MB/s, 315x "
                "slower, z -21.8 [|z| > 3.5 and >= 15%]");
    a = fleet("stream tcp 128 KiB x 256", "throughput_MBps", "MB/s", 1300, 1000, 21.8,
              SM_DIR_FASTER);
    text_is(&a, "h2: stream tcp 128 KiB x 256 (MB/s) 1300 MB/s vs fleet 1000 MB/s, +30%, z 21.8, "
                "faster [|z| > 3.5 and >= 15%]");
}

static void test_text_a_slow_links_factor_is_its_value_over_what_its_hosts_predict(void **state)
{
    (void)state;
    /* Its rel is the residual over the overall (1000), -0.6; the text compares the value with
     * the expected 1500: 2.5 times less. */
    sm_anomaly a =
        fleet("stream tcp 1 GB", "throughput_MBps", "MB/s", 600, 1500, -50, SM_DIR_SLOWER);
    a.kind = SM_ANOMALY_SLOW_LINK;
    a.rel = -0.6;
    snprintf(a.host, sizeof a.host, "h1->h2");
    text_is(&a, "h1->h2: stream tcp 1 GB (MB/s) 600 MB/s vs expected 1500 MB/s, 2.5x slower, "
                "z -50.0 [|z| > 3.5 and >= 15%]");
}

static void test_text_a_bound_at_the_time_limit_makes_the_change_a_bound(void **state)
{
    (void)state;
    sm_anomaly a = fleet("t", "seconds", "s", 60, 20, NAN, SM_DIR_SLOWER);
    a.at_limit = true;
    snprintf(a.rule, sizeof a.rule, "3 of 3 jobs at the time limit");
    text_is(&a, "h2: t (s) > 60 s vs fleet 20 s, > 3.0x slower, z - [3 of 3 jobs at the time "
                "limit]");
    a = fleet("t", "seconds", "s", 60, 50, NAN, SM_DIR_SLOWER);
    a.at_limit = true;
    snprintf(a.rule, sizeof a.rule, "3 of 3 jobs at the time limit");
    text_is(&a, "h2: t (s) > 60 s vs fleet 50 s, > +20%, z -, slower [3 of 3 jobs at the time "
                "limit]");
    /* A throughput's bound lies below: so does its change. */
    a = fleet("t", "throughput_MBps", "MB/s", 800, 1000, NAN, SM_DIR_SLOWER);
    a.at_limit = true;
    snprintf(a.rule, sizeof a.rule, "3 of 3 jobs at the time limit");
    text_is(&a, "h2: t (MB/s) < 800 MB/s vs fleet 1000 MB/s, < -20%, z -, slower [3 of 3 jobs at "
                "the time limit]");
}

/* ---- z against the rule's cut ---- */

/* The z as the text prints it, between ", z " and the next ',' or " [". */
static void z_is(const sm_anomaly *a, const char *want)
{
    char buf[512];
    sm_anomaly_text(a, buf, sizeof buf);
    const char *from = strstr(buf, ", z ");
    assert_non_null(from);
    from += 4;
    size_t n = strcspn(from, ", [");
    char got[64];
    snprintf(got, sizeof got, "%.*s", (int)n, from);
    if (strcmp(got, want) != 0)
        fail_msg("z \"%s\", wanted \"%s\", in %s", got, want, buf);
}

static sm_anomaly with_z(double z, const char *rule)
{
    sm_anomaly a = fleet("t", "seconds", "s", 1.3, 1, z, z > 0 ? SM_DIR_SLOWER : SM_DIR_FASTER);
    snprintf(a.rule, sizeof a.rule, "%s", rule);
    return a;
}

static void test_text_prints_z_with_the_digits_that_show_it_passed_the_cut(void **state)
{
    (void)state;
    static const char rule[] = "|z| > 3.5 and >= 15%";
    sm_anomaly a = with_z(21.8, rule);
    z_is(&a, "21.8");
    a = with_z(-3.503, rule);
    z_is(&a, "-3.503");
    a = with_z(3.503, rule);
    z_is(&a, "3.503");
    /* 3.55 is 3.5499... in binary: one decimal rounds it onto the cut, two do not. */
    a = with_z(3.55, rule);
    z_is(&a, "3.55");
    a = with_z(3.6, rule);
    z_is(&a, "3.6");
    /* Three decimals at most, even where they cannot show it. */
    a = with_z(3.5004, rule);
    z_is(&a, "3.500");
    /* The cut is the rule's, whatever it is. */
    a = with_z(3.04, "|z| > 3 and >= 20%");
    z_is(&a, "3.04");
    a = with_z(-3.52, "noisy, |z| > 3.5 and CI beyond 15%");
    z_is(&a, "-3.52");
    /* A rule without a cut keeps one decimal; no z is "-". */
    a = with_z(-2.14, "CI beyond every other host's by >= 15%");
    z_is(&a, "-2.1");
    a = with_z(NAN, "MAD 0, >= 15%");
    z_is(&a, "-");
}

static void test_flag_column_prints_z_as_the_text_does(void **state)
{
    (void)state;
    sm_table t;
    assert_int_equal(sm_table_init(&t, 1, 1, 0), 0);
    snprintf(t.rows[0], sizeof t.rows[0], "h2");
    sm_anomaly v[2] = {with_z(-3.503, "|z| > 3.5 and >= 15%"),
                       with_z(-2.14, "CI beyond every other host's by >= 15%")};
    sm_anomalies an = {.v = v, .n = 2, .cap = 2};
    sm_analysis_flag_table(&t, &an);
    assert_string_equal(t.flags[0], "t 1.3 s vs 1 s (z -3.503); t 1.3 s vs 1 s (CI apart, z -2.1)");
    sm_table_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_names_the_metric_by_its_unit_as_the_table_does),
        cmocka_unit_test(test_text_says_which_statistic_where_the_unit_does_not),
        cmocka_unit_test(test_text_labels_a_ratio_column_a_ratio_not_its_metric),
        cmocka_unit_test(test_text_never_shows_a_raw_metric_name_it_can_name_otherwise),
        cmocka_unit_test(test_text_writes_a_change_of_2x_or_more_as_a_factor_both_ways),
        cmocka_unit_test(test_text_keeps_a_percentage_within_2x_and_for_a_fall_to_0),
        cmocka_unit_test(test_text_says_the_direction_once_in_a_factor_or_after_z),
        cmocka_unit_test(test_text_a_slow_links_factor_is_its_value_over_what_its_hosts_predict),
        cmocka_unit_test(test_text_a_bound_at_the_time_limit_makes_the_change_a_bound),
        cmocka_unit_test(test_text_prints_z_with_the_digits_that_show_it_passed_the_cut),
        cmocka_unit_test(test_flag_column_prints_z_as_the_text_does),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
