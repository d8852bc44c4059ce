/* Unit tests of the sockmatrix CLI's text output: the grid, numbers in four significant digits, and
 * a job's reason. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coordinator/cli/apiview.h"
#include "coordinator/cli/cli.h"
#include "coordinator/cli/grid.h"
#include "coordinator/cli/output.h"

/* ---- the text grid ---- */

static void test_cli_grid_aligns_columns_without_trailing_blanks(void **state)
{
    (void)state;
    sm_grid g = {3, 0, "rll", NULL, SM_CLI_FMT_TABLE};
    static const char *const head[] = {"ID", "NAME", "STATE"};
    static const char *const row1[] = {"7", "seed-tcp-unix", "done"};
    static const char *const row2[] = {"12", NULL, "running"};
    assert_int_equal(sm_grid_row(&g, head), 0);
    assert_int_equal(sm_grid_row(&g, row1), 0);
    assert_int_equal(sm_grid_row(&g, row2), 0);
    char buf[256] = {0};
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    assert_non_null(f);
    sm_grid_print(&g, f);
    fclose(f);
    sm_grid_fini(&g);
    assert_string_equal(buf, "ID  NAME           STATE\n"
                             " 7  seed-tcp-unix  done\n"
                             "12                 running\n");
}

static void test_cli_num4_shows_four_significant_digits_as_the_dashboard_does(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {19957.3, "19960"}, {0.056712, "0.05671"}, {0, "0"},           {-1234.56, "-1235"},
        {0.001, "0.001"},   {9.9e-4, "9.900e-04"}, {1e9, "1.000e+09"}, {999999999, "1000000000"},
        {NAN, "-"},         {INFINITY, "-"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[48];
        sm_cli_num4(cases[i].v, buf, sizeof buf);
        assert_string_equal(buf, cases[i].want);
    }
    /* The views the commands read take what comes: "" for a string absent or of another type,
     * NaN for a figure absent or null. */
    static const char trend[] = "{\"points\":[{\"median\":2.5,\"ci_lo\":null,\"run\":7}],"
                                "\"host\":\"x\",\"test\":2.5}";
    sm_apiview_trend t;
    sm_error err = {0};
    assert_int_equal(sm_apiview_trend_decode(trend, strlen(trend), &t, &err), 0);
    assert_string_equal(t.host, "x");
    assert_string_equal(t.test, "");
    assert_string_equal(t.unit, "");
    assert_int_equal(t.n_points, 1);
    assert_true(t.points[0].median == 2.5);
    assert_true(isnan(t.points[0].ci_lo));
    assert_true(isnan(t.points[0].n));
    assert_string_equal(t.points[0].run, "");
    sm_apiview_trend_fini(&t);
    assert_int_equal(sm_apiview_trend_decode("{}", 2, &t, &err), SM_EPARSE);
    assert_string_equal(err.msg, "expected points");
    sm_apiview_trend_fini(&t);
}

static void test_cli_job_reason_is_a_failures_reason_or_what_disturbed_the_host(void **state)
{
    (void)state;
    static const struct {
        const char *job, *want;
    } cases[] = {
        {"{\"state\":\"failed\",\"reason\":\"connect: refused\"}", "connect: refused"},
        {"{\"state\":\"done\",\"result\":{\"host\":{\"disturbed\":true,"
         "\"disturbed_reason\":\"steal 12% of the job\"}}}",
         "disturbed: steal 12% of the job"},
        {"{\"state\":\"done\",\"result\":{\"host\":{\"disturbed\":true}}}", "disturbed"},
        {"{\"state\":\"done\",\"result\":{\"host\":{\"disturbed\":false,"
         "\"disturbed_reason\":\"\"}}}",
         ""},
        /* A pair job whose server side was the disturbed one. */
        {"{\"state\":\"done\",\"result\":{\"host\":{\"disturbed\":false}},\"sides\":{"
         "\"server\":{\"result\":{\"host\":{\"disturbed\":true,"
         "\"disturbed_reason\":\"rx thread waited for a CPU 40% of the job\"}}},"
         "\"client\":{\"result\":null}}}",
         "disturbed: rx thread waited for a CPU 40% of the job"},
        {"{\"state\":\"done\",\"result\":null}", ""},
        {"{\"state\":\"queued\"}", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char page[512];
        snprintf(page, sizeof page, "{\"jobs\":[%s],\"next\":null}", cases[i].job);
        sm_apiview_jobs_page p;
        sm_error err = {0};
        assert_int_equal(sm_apiview_jobs_page_decode(page, strlen(page), &p, &err), 0);
        assert_int_equal(p.n, 1);
        char buf[300] = "junk";
        sm_cli_job_reason(&p.jobs[0], buf, sizeof buf);
        assert_string_equal(buf, cases[i].want);
        sm_apiview_jobs_page_fini(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_num4_shows_four_significant_digits_as_the_dashboard_does),
        cmocka_unit_test(test_cli_grid_aligns_columns_without_trailing_blanks),
        cmocka_unit_test(test_cli_job_reason_is_a_failures_reason_or_what_disturbed_the_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
