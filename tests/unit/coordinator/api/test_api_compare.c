/* Unit tests of run against run (GET /api/compare and the baseline of a run's anomalies) over a
 * real SQLite store and a real control: the shared cells, the cells only one run has, the
 * verdict rule, and the errors. The pure matching of two tables is tested on sm_tables too. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/coordinator/api/api_fixture.h"
#include "coordinator/api/api.h"
#include "coordinator/control/control.h"
#include "coordinator/store/store.h"
#include "coordinator/analysis/compare.h"
#include "coordinator/analysis/table.h"
#include "proto/result.h"

#define RUN_3REPS                                                                                  \
    "{\"name\":\"fp\",\"hosts\":\"all\",\"repetitions\":3,\"warmup\":0,\"parallel\":true,"

/* Run 1: tcp and unix, count 10. Run 2: tcp count 10 and 20. Run 3: tcp count 30. */
#define SPEC(name, tests)                                                                          \
    "{\"name\":\"" name "\",\"hosts\":\"all\",\"repetitions\":3,\"warmup\":0,\"parallel\":true,"   \
    "\"tests\":[" tests "]}"
#define STREAM(tr, count)                                                                          \
    "{\"workload\":\"stream\",\"scope\":\"local\",\"transport\":[" tr "],\"count\":" #count "}"
#define RUN_A SPEC("a", STREAM("\"tcp\",\"unix\"", 10))
#define RUN_B SPEC("b", STREAM("\"tcp\"", 10) "," STREAM("\"tcp\"", 20))
#define RUN_C SPEC("c", STREAM("\"tcp\"", 30))

static const char *const hosts[] = {"h1", "h2", "h3"};

static void start_runs(fixture *f)
{
    for (size_t h = 0; h < 3; h++)
        register_agent(f, hosts[h]);
    expect(f, "POST", "/api/runs", NULL, NULL, RUN_A, 201, "\"run\":");
    for (size_t h = 0; h < 3; h++)
        finish_jobs(f, hosts[h], 100.0);
    expect(f, "POST", "/api/runs", NULL, NULL, RUN_B, 201, "\"run\":");
    /* h1 twice as fast in run 2, h2 the same, h3 a little slower */
    finish_jobs(f, "h1", 200.0);
    finish_jobs(f, "h2", 100.0);
    finish_jobs(f, "h3", 90.0);
}

/* Fails unless body holds want. */
static void has(const char *body, const char *want)
{
    if (!strstr(body, want))
        fail_msg("%s\nlacks %s", body, want);
}

#define TCP10 "\"test\":\"stream tcp 128 KiB x 10\""

static void test_compare_puts_shared_cells_side_by_side_and_lists_the_rest_apart(void **state)
{
    fixture *f = *state;
    start_runs(f);
    response r = call(f, "GET", "/api/compare", "a=1&b=2", NULL, NULL);
    assert_int_equal(r.status, 200);
    has(r.body, "\"a_state\":\"done\",\"b_state\":\"done\",\"disturbed\":\"exclude\"");
    has(r.body, "\"rule\":\"apart: the two 95% CIs of the medians do not overlap");
    /* h1 doubled: CIs apart; h2 the same: overlap, never a change; h3 10% lower, apart. */
    has(r.body, "{\"host\":\"h1\"," TCP10 ",\"metric\":\"throughput_MBps\",\"unit\":\"MB/s\","
                "\"ratio\":false,\"a\":{\"median\":100,\"ci95_low\":100,\"ci95_high\":100,"
                "\"ci_coverage\":0.75,\"n\":3,\"failed\":0,\"unit\":\"MB/s\"},\"b\":{\"median\":"
                "200,\"ci95_low\":200,\"ci95_high\":200,\"ci_coverage\":0.75,\"n\":3,\"failed\":0,"
                "\"unit\":\"MB/s\"},\"change_pct\":100,\"verdict\":\"higher\"}");
    has(r.body, "\"change_pct\":0,\"verdict\":\"overlap\"}");
    has(r.body, "\"change_pct\":-10,\"verdict\":\"lower\"}");
    has(r.body, "\"only_a\":[{\"host\":\"h1\",\"test\":\"stream unix 128 KiB x 10\",\"ratio\":"
                "false},");
    has(r.body, "{\"host\":\"h3\",\"test\":\"tcp/unix stream 128 KiB x 10\",\"ratio\":true}]");
    has(r.body, "\"only_b\":[{\"host\":\"h1\",\"test\":\"stream tcp 128 KiB x 20\"");
    has(r.body, "\"counts\":{\"shared\":3,\"changed\":2,\"only_a\":6,\"only_b\":3}");
    free(r.body);
    /* b against a the other way round: the signs turn, the counts swap. */
    r = call(f, "GET", "/api/compare", "a=2&b=1&disturbed=include", NULL, NULL);
    assert_int_equal(r.status, 200);
    has(r.body, "\"disturbed\":\"include\"");
    has(r.body, "\"change_pct\":-50,\"verdict\":\"lower\"}");
    has(r.body, "\"counts\":{\"shared\":3,\"changed\":2,\"only_a\":3,\"only_b\":6}");
    free(r.body);
}

static void test_compare_takes_a_run_still_running_and_says_so(void **state)
{
    fixture *f = *state;
    start_runs(f);
    expect(f, "POST", "/api/runs", NULL, NULL, RUN_A, 201, "\"run\":");
    finish_jobs(f, "h2", 100.0); /* h1 and h3 have not started */
    response r = call(f, "GET", "/api/compare", "a=1&b=3", NULL, NULL);
    assert_int_equal(r.status, 200);
    has(r.body, "\"a_state\":\"done\",\"b_state\":\"running\"");
    has(r.body, "\"counts\":{\"shared\":3,\"changed\":0,\"only_a\":6,\"only_b\":0}");
    has(r.body, "\"shared\":[{\"host\":\"h2\"," TCP10);
    free(r.body);
}

static void test_compare_errors_name_the_field_and_the_tests(void **state)
{
    fixture *f = *state;
    expect(f, "GET", "/api/compare", NULL, NULL, NULL, 400, "\"field\":\"a\"");
    expect(f, "GET", "/api/compare", "a=1", NULL, NULL, 400, "\"field\":\"b\"");
    expect(f, "GET", "/api/compare", "a=x&b=2", NULL, NULL, 400, "\"field\":\"a\"");
    expect(f, "GET", "/api/compare", "a=0&b=2", NULL, NULL, 400, "\"field\":\"a\"");
    expect(f, "GET", "/api/compare", "a=2&b=-1", NULL, NULL, 400, "\"field\":\"b\"");
    expect(f, "GET", "/api/compare", "a=2&b=2", NULL, NULL, 400, "not compared with itself");
    expect(f, "GET", "/api/compare", "a=1&b=2&disturbed=maybe", NULL, NULL, 400,
           "\"field\":\"disturbed\"");
    expect(f, "POST", "/api/compare", "a=1&b=2", NULL, NULL, 405, "use GET");
    expect(f, "GET", "/api/compare", "a=9&b=1", NULL, NULL, 404,
           "{\"error\":\"a: no such run 9\",\"field\":\"a\"}");
    start_runs(f);
    expect(f, "GET", "/api/compare", "a=1&b=9", NULL, NULL, 404,
           "{\"error\":\"b: no such run 9\",\"field\":\"b\"}");
    expect(f, "POST", "/api/runs", NULL, NULL, RUN_C, 201, "\"run\":");
    for (size_t h = 0; h < 3; h++)
        finish_jobs(f, hosts[h], 100.0);
    expect(f, "GET", "/api/compare", "a=1&b=3", NULL, NULL, 409,
           "{\"error\":\"runs 1 and 3 share no cell (same host, same test): run 1 has tests "
           "stream tcp 128 KiB x 10, stream unix 128 KiB x 10; run 3 has tests stream tcp 128 "
           "KiB x 30\",\"field\":\"b\"}");
}

static void test_anomalies_refuse_a_baseline_that_shares_no_cell(void **state)
{
    fixture *f = *state;
    start_runs(f);
    expect(f, "POST", "/api/runs", NULL, NULL, RUN_C, 201, "\"run\":");
    for (size_t h = 0; h < 3; h++)
        finish_jobs(f, hosts[h], 100.0);
    expect(f, "GET", "/api/runs/3/anomalies", "baseline=1", NULL, NULL, 409,
           "{\"error\":\"baseline: runs 3 and 1 share no cell (same host, same test): run 3 has "
           "tests stream tcp 128 KiB x 30; run 1 has tests stream tcp 128 KiB x 10, stream unix "
           "128 KiB x 10\",\"field\":\"baseline\"}");
    expect(f, "GET", "/api/runs/3/anomalies", "baseline=1&format=text", NULL, NULL, 409,
           "share no cell");
    /* A baseline that shares cells still works, and says which it was. */
    response r = call(f, "GET", "/api/runs/2/anomalies", "baseline=1&format=text", NULL, NULL);
    assert_int_equal(r.status, 200);
    has(r.body, "against baseline run 1");
    free(r.body);
    /* A run of the same name that shares no cell is no baseline at all, not a silent one. */
    static const char same_name[] = SPEC("c", STREAM("\"unix\"", 40));
    expect(f, "POST", "/api/runs", NULL, NULL, same_name, 201, "\"run\":");
    for (size_t h = 0; h < 3; h++)
        finish_jobs(f, hosts[h], 100.0);
    r = call(f, "GET", "/api/runs/4/anomalies", "format=text", NULL, NULL);
    assert_int_equal(r.status, 200);
    has(r.body, "no baseline run");
    free(r.body);
}

/* ---- the matching of two tables, without a store ---- */

static void one_cell(sm_table *t, const char *row, const char *test, double lo, double med,
                     double hi, size_t n)
{
    assert_int_equal(sm_table_init(t, 1, 1, 0), 0);
    snprintf(t->rows[0], sizeof t->rows[0], "%s", row);
    snprintf(t->cols[0].label, sizeof t->cols[0].label, "%s", test);
    snprintf(t->cols[0].unit, sizeof t->cols[0].unit, "us");
    sm_table_cell *c = sm_table_at(t, 0, 0);
    if (n == 0 || n == SIZE_MAX) {
        /* n 0: only failed jobs; SIZE_MAX: only disturbed samples */
        *(n == 0 ? &c->failed : &c->disturbed) = 2;
        return;
    }
    c->have = true;
    c->s = (sm_summary){.n = n, .median = med, .ci95_low = lo, .ci95_high = hi};
}

static sm_compare_verdict verdict_of(double alo, double amed, double ahi, double blo, double bmed,
                                     double bhi, size_t bn)
{
    sm_table a, b;
    one_cell(&a, "h1", "rr", alo, amed, ahi, 5);
    one_cell(&b, "h1", "rr", blo, bmed, bhi, bn);
    sm_compare c = {0};
    assert_int_equal(sm_compare_tables(&a, &b, &c), 0);
    assert_int_equal(c.n_shared, 1);
    assert_int_equal(c.n_only_a + c.n_only_b, 0);
    sm_compare_verdict v = c.shared[0].verdict;
    sm_compare_fini(&c);
    sm_table_fini(&a);
    sm_table_fini(&b);
    return v;
}

static void test_compare_verdict_is_apart_only_when_the_cis_do_not_meet(void **state)
{
    (void)state;
    assert_int_equal(verdict_of(10, 11, 12, 13, 14, 15, 5), SM_COMPARE_HIGHER);
    assert_int_equal(verdict_of(10, 11, 12, 7, 8, 9.99, 5), SM_COMPARE_LOWER);
    /* Touching intervals share a value; a wide one over a far median is still an overlap. */
    assert_int_equal(verdict_of(10, 11, 12, 12, 13, 14, 5), SM_COMPARE_OVERLAP);
    assert_int_equal(verdict_of(10, 11, 12, 11.5, 30, 40, 5), SM_COMPARE_OVERLAP);
    /* Only failed jobs in b: in both runs, no median to judge. */
    assert_int_equal(verdict_of(10, 11, 12, 0, 0, 0, 0), SM_COMPARE_NO_DATA);
    /* Only disturbed samples in b (left out of the statistics): the same. */
    assert_int_equal(verdict_of(10, 11, 12, 0, 0, 0, SIZE_MAX), SM_COMPARE_NO_DATA);
    assert_string_equal(sm_compare_verdict_name(SM_COMPARE_NO_DATA), "no data");
}

static void test_compare_matches_by_row_and_test_label(void **state)
{
    (void)state;
    sm_table a, b;
    one_cell(&a, "h1", "rr", 1, 2, 3, 5);
    one_cell(&b, "h2", "rr", 1, 2, 3, 5);
    sm_compare c = {0};
    assert_int_equal(sm_compare_tables(&a, &b, &c), 0);
    assert_int_equal(c.n_shared, 0);
    assert_int_equal(c.n_only_a, 1);
    assert_int_equal(c.n_only_b, 1);
    assert_string_equal(c.only_a[0].row, "h1");
    assert_string_equal(c.only_b[0].row, "h2");
    assert_string_equal(c.only_b[0].test, "rr");
    sm_compare_fini(&c);
    const sm_table *both[] = {&a, &b};
    char buf[64];
    sm_compare_tests_text(both, 2, buf, sizeof buf);
    assert_string_equal(buf, "rr");
    sm_compare_tests_text(both, 0, buf, sizeof buf);
    assert_string_equal(buf, "no tests");
    sm_table_fini(&a);
    sm_table_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_compare_puts_shared_cells_side_by_side_and_lists_the_rest_apart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compare_takes_a_run_still_running_and_says_so, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_compare_errors_name_the_field_and_the_tests, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_anomalies_refuse_a_baseline_that_shares_no_cell, setup,
                                        teardown),
        cmocka_unit_test(test_compare_verdict_is_apart_only_when_the_cis_do_not_meet),
        cmocka_unit_test(test_compare_matches_by_row_and_test_label),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
