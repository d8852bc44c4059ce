/* Unit tests of verdicts: each rule of a cell on hand-made tables (clean, flagged, all
 * disturbed, too few clean, all failed, at the time limit, no fleet, mixed), a row's and the
 * table's verdict, the words; then a run's over a real store and control through the API: its
 * anomalies (text and JSON) and its table never call a cell fine that was not judged. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/coordinator/api/api_fixture.h"
#include "coordinator/analysis/analysis.h"
#include "coordinator/analysis/table.h"
#include "coordinator/analysis/verdict.h"

#define BUSY "tx thread waited for a CPU 76% of the job"

static void has(const char *body, const char *want)
{
    if (!body || !strstr(body, want))
        fail_msg("%s\nlacks %s", body ? body : "(null)", want);
}

static void lacks(const char *body, const char *unwanted)
{
    if (body && strstr(body, unwanted))
        fail_msg("%s\nholds %s", body, unwanted);
}

/* A table of hosts h1..hN and one column "t" (seconds). */
static void table_of(sm_table *t, size_t hosts)
{
    assert_int_equal(sm_table_init(t, hosts, 1, 0), 0);
    for (size_t r = 0; r < hosts; r++)
        snprintf(t->rows[r], sizeof t->rows[r], "h%zu", r + 1);
    snprintf(t->cols[0].label, sizeof t->cols[0].label, "t");
    snprintf(t->cols[0].metric, sizeof t->cols[0].metric, "seconds");
    snprintf(t->cols[0].unit, sizeof t->cols[0].unit, "s");
}

/* Cell r holds n clean samples around v. */
static void clean(sm_table *t, size_t r, size_t n, double v)
{
    double x[16];
    for (size_t i = 0; i < n; i++)
        x[i] = v * (1 + 0.001 * (double)i);
    sm_table_cell *c = sm_table_at(t, r, 0);
    assert_int_equal(sm_stats_summarize(x, n, &c->s), 0);
    c->have = true;
}

static void disturbed(sm_table *t, size_t r, uint32_t n, const char *why)
{
    sm_table_cell *c = sm_table_at(t, r, 0);
    c->disturbed = n;
    c->disturbed_reason = strdup(why);
}

static void failed(sm_table *t, size_t r, uint32_t n, const char *why)
{
    sm_table_cell *c = sm_table_at(t, r, 0);
    c->failed = n;
    c->failed_reason = strdup(why);
}

static const sm_judgement *cell_j(sm_table *t, size_t r)
{
    return &sm_table_at(t, r, 0)->j;
}

static void assert_verdict(const sm_judgement *j, sm_verdict v, const char *why)
{
    if (j->verdict != v)
        fail_msg("verdict %s, expected %s (why: %s)", sm_verdict_name(j->verdict),
                 sm_verdict_name(v), j->why ? j->why : "-");
    if (why == NULL && j->why != NULL)
        fail_msg("unexpected why: %s", j->why);
    if (why != NULL && (j->why == NULL || strcmp(j->why, why) != 0))
        fail_msg("why '%s', expected '%s'", j->why ? j->why : "(none)", why);
}

static void test_clean_cells_of_a_fleet_are_ok(void **state)
{
    (void)state;
    sm_table t;
    table_of(&t, 3);
    for (size_t r = 0; r < 3; r++)
        clean(&t, r, 5, 0.13);
    assert_int_equal(sm_verdict_table(&t, NULL, 0), 0);
    for (size_t r = 0; r < 3; r++) {
        assert_verdict(cell_j(&t, r), SM_VERDICT_OK, NULL);
        assert_verdict(&t.row_j[r], SM_VERDICT_OK, NULL);
    }
    assert_verdict(&t.whole, SM_VERDICT_OK, NULL);
    assert_int_equal(t.n_ok, 3);
    sm_table_fini(&t);
}

static void test_a_flagged_cell_flags_its_row_and_the_table(void **state)
{
    (void)state;
    sm_table t;
    table_of(&t, 3);
    clean(&t, 0, 5, 0.13);
    clean(&t, 1, 5, 0.23);
    clean(&t, 2, 5, 0.13);
    sm_anomalies an = {0};
    sm_error err;
    assert_int_equal(sm_analysis_table(&t, NULL, &an, &err), 0);
    assert_int_equal(an.n, 1);
    assert_int_equal(sm_verdict_table(&t, an.v, an.n), 0);
    assert_verdict(cell_j(&t, 1), SM_VERDICT_FLAGGED, NULL);
    assert_verdict(&t.row_j[1], SM_VERDICT_FLAGGED, NULL);
    assert_verdict(cell_j(&t, 0), SM_VERDICT_OK, NULL);
    assert_verdict(&t.whole, SM_VERDICT_FLAGGED, NULL);
    assert_int_equal(t.n_flagged, 1);
    assert_int_equal(t.n_ok, 2);
    sm_anomalies_fini(&an);
    sm_table_fini(&t);
}

/* The run: every sample of h1 and h3 set aside, h2's kept. h2 has nothing to be
 * compared with: not ok, inconclusive. */
static void test_a_host_is_never_judged_against_a_fleet_set_aside(void **state)
{
    (void)state;
    sm_table t;
    table_of(&t, 3);
    disturbed(&t, 0, 3, BUSY);
    clean(&t, 1, 3, 0.9);
    disturbed(&t, 2, 3, BUSY);
    sm_anomalies an = {0};
    sm_error err;
    assert_int_equal(sm_analysis_table(&t, NULL, &an, &err), 0);
    assert_int_equal(an.n, 0);
    assert_int_equal(sm_verdict_table(&t, an.v, an.n), 0);
    assert_verdict(cell_j(&t, 0), SM_VERDICT_INCONCLUSIVE, "3 of 3 samples disturbed: " BUSY);
    assert_verdict(cell_j(&t, 1), SM_VERDICT_INCONCLUSIVE,
                   "only 1 of 3 hosts has clean samples of this test; judging needs 3");
    assert_verdict(&t.row_j[0], SM_VERDICT_INCONCLUSIVE,
                   "1 of 1 cell not judged: t: 3 of 3 samples disturbed: " BUSY);
    assert_verdict(&t.whole, SM_VERDICT_INCONCLUSIVE, NULL);
    assert_int_equal(t.n_ok + t.n_flagged, 0);
    assert_int_equal(t.n_inconclusive, 3);
    /* Included, the disturbed samples are samples: all three are judged. */
    sm_table_fini(&t);
    table_of(&t, 3);
    t.with_disturbed = true;
    for (size_t r = 0; r < 3; r++) {
        clean(&t, r, 3, 0.9);
        disturbed(&t, r, r == 1 ? 0 : 3, BUSY);
    }
    assert_int_equal(sm_verdict_table(&t, NULL, 0), 0);
    assert_verdict(&t.whole, SM_VERDICT_OK, NULL);
    sm_table_fini(&t);
}

static void test_too_few_clean_samples_say_how_many_and_why(void **state)
{
    (void)state;
    sm_table t;
    table_of(&t, 4);
    clean(&t, 0, 1, 0.13);
    disturbed(&t, 0, 2, BUSY);
    clean(&t, 1, 2, 0.13);
    failed(&t, 1, 1, "client: peer closed the connection while we were writing");
    clean(&t, 2, 5, 0.13);
    clean(&t, 3, 5, 0.13);
    assert_int_equal(sm_verdict_table(&t, NULL, 0), 0);
    assert_verdict(cell_j(&t, 0), SM_VERDICT_INCONCLUSIVE,
                   "1 clean sample < 3; 2 of 3 samples disturbed: " BUSY);
    assert_verdict(cell_j(&t, 1), SM_VERDICT_INCONCLUSIVE,
                   "2 clean samples < 3; 1 failed: client: peer closed the connection while we "
                   "were writing");
    /* The two cells that have 1 and 2 samples still make a fleet for the others. */
    assert_verdict(cell_j(&t, 2), SM_VERDICT_OK, NULL);
    sm_table_fini(&t);
}

static void test_every_job_failed_is_failed_and_the_time_limit_is_inconclusive(void **state)
{
    (void)state;
    sm_table t;
    table_of(&t, 3);
    failed(&t, 0, 3, "server: recv: Connection refused");
    sm_table_at(&t, 1, 0)->limited = 3;
    failed(&t, 1, 3, "client: time limit of 339 ms reached while reading");
    sm_table_at(&t, 1, 0)->limit_bound = 0.339;
    clean(&t, 2, 3, 0.13);
    assert_int_equal(sm_verdict_table(&t, NULL, 0), 0);
    assert_verdict(cell_j(&t, 0), SM_VERDICT_FAILED,
                   "every job failed (3): server: recv: Connection refused");
    assert_verdict(&t.row_j[0], SM_VERDICT_FAILED,
                   "1 of 1 cell not judged: t: every job failed (3): server: recv: Connection "
                   "refused");
    assert_verdict(cell_j(&t, 1), SM_VERDICT_INCONCLUSIVE,
                   "3 of 3 jobs at the time limit, and too few hosts finished to compare with");
    assert_verdict(&t.whole, SM_VERDICT_INCONCLUSIVE, NULL);
    sm_table_fini(&t);
    /* Nothing but failures: the table failed. */
    table_of(&t, 2);
    failed(&t, 0, 1, "no agent");
    failed(&t, 1, 2, "no agent");
    assert_int_equal(sm_verdict_table(&t, NULL, 0), 0);
    assert_verdict(cell_j(&t, 0), SM_VERDICT_FAILED, "the job failed: no agent");
    assert_verdict(&t.whole, SM_VERDICT_FAILED, NULL);
    sm_table_fini(&t);
}

static void test_a_cell_without_jobs_says_nothing(void **state)
{
    (void)state;
    sm_table t;
    table_of(&t, 4);
    for (size_t r = 0; r < 3; r++)
        clean(&t, r, 5, 0.13);
    assert_int_equal(sm_verdict_table(&t, NULL, 0), 0);
    assert_verdict(cell_j(&t, 3), SM_VERDICT_NONE, NULL);
    assert_verdict(&t.row_j[3], SM_VERDICT_NONE, NULL);
    assert_verdict(&t.whole, SM_VERDICT_OK, NULL);
    sm_table_fini(&t);
}

static void test_the_summary_counts_what_was_judged(void **state)
{
    (void)state;
    char buf[256];
    sm_run_verdict v = {.n_ok = 1, .n_inconclusive = 17};
    sm_run_verdict_summary(&v, buf, sizeof buf);
    assert_string_equal(buf, "0 anomalies among 1 judged cell; 17 cells inconclusive");
    v = (sm_run_verdict){.n_ok = 2, .n_flagged = 1, .n_anomalies = 1, .n_failed = 1};
    sm_run_verdict_summary(&v, buf, sizeof buf);
    assert_string_equal(buf, "1 anomaly among 3 judged cells; 1 cell failed");
    v = (sm_run_verdict){.n_inconclusive = 1, .n_failed = 2};
    sm_run_verdict_summary(&v, buf, sizeof buf);
    assert_string_equal(buf, "0 anomalies among 0 judged cells; 1 cell inconclusive, 2 cells "
                             "failed");
    v = (sm_run_verdict){0};
    sm_run_verdict_summary(&v, buf, sizeof buf);
    assert_string_equal(buf, "no cell was measured");
    assert_string_equal(sm_verdict_name(SM_VERDICT_INCONCLUSIVE), "inconclusive");
}

/* The three encodings of a judged table carry the verdicts. */
static void test_exports_of_an_inconclusive_table_say_so(void **state)
{
    (void)state;
    sm_table t;
    table_of(&t, 3);
    t.run_id = 3;
    snprintf(t.run_name, sizeof t.run_name, "quick");
    disturbed(&t, 0, 3, BUSY);
    clean(&t, 1, 3, 0.9);
    disturbed(&t, 2, 3, BUSY);
    assert_int_equal(sm_verdict_table(&t, NULL, 0), 0);
    char *csv = sm_table_csv(&t), *md = sm_table_md(&t), *json = sm_table_json(&t);
    has(csv, ",flags,verdict,why\r\n");
    has(csv,
        "h1,,,,,3,,inconclusive,1 of 1 cell not judged: t: 3 of 3 samples disturbed: " BUSY "\r\n");
    has(md, "| verdict      | flags |");
    has(md, "| inconclusive |");
    has(md, "**Verdict: inconclusive.** 0 anomalies among 0 judged cells; 3 cells inconclusive.");
    has(md, "- h1, t: inconclusive: 3 of 3 samples disturbed: " BUSY "\n");
    has(md, "- h2, t: inconclusive: only 1 of 3 hosts has clean samples of this test");
    has(json, "\"verdict\":\"inconclusive\",\"why\":\"3 of 3 samples disturbed: " BUSY "\"");
    has(json, "\"verdict\":{\"verdict\":\"inconclusive\",\"summary\":\"0 anomalies among 0 judged "
              "cells; 3 cells inconclusive\",\"judged\":0,\"ok\":0,\"flagged\":0,"
              "\"inconclusive\":3,\"failed\":0,\"rows\":[");
    free(csv);
    free(md);
    free(json);
    sm_table_fini(&t);
}

/* ---- a run through the API ---- */

#define RUN(name)                                                                                  \
    "{\"name\":\"" name "\",\"hosts\":\"all\",\"repetitions\":3,\"warmup\":0,\"parallel\":true,"   \
    "\"tests\":[{\"workload\":\"stream\",\"scope\":\"local\",\"transport\":\"tcp\",\"count\":10}]" \
    "}"

static void fleet(fixture *f)
{
    register_agent(f, "h1");
    register_agent(f, "h2");
    register_agent(f, "h3");
}

static void test_a_run_judged_on_nothing_says_inconclusive_everywhere(void **state)
{
    fixture *f = *state;
    fleet(f);
    expect(f, "POST", "/api/runs", NULL, NULL, RUN("quick"), 201, "\"run\":");
    finish_jobs_disturbed(f, "h1", 1300, BUSY);
    finish_jobs(f, "h2", 4.4);
    finish_jobs_disturbed(f, "h3", 1300, BUSY);

    response r = call(f, "GET", "/api/runs/1/anomalies", "format=text", NULL, NULL);
    assert_int_equal(r.status, 200);
    has(r.body, "run 1 (quick): inconclusive: 0 anomalies among 0 judged cells; 3 cells "
                "inconclusive, no baseline run\n");
    /* Measured again as many times as asked (3 more), disturbed every time. */
    has(r.body, "  inconclusive h1: stream tcp 128 KiB x 10: 6 of 6 samples disturbed (remeasure "
                "ran out): " BUSY);
    has(r.body, "  inconclusive h2: stream tcp 128 KiB x 10: only 1 of 3 hosts has clean "
                "samples of this test; judging needs 3\n");
    lacks(r.body, ": 0 anomalies, ");
    free(r.body);

    r = call(f, "GET", "/api/runs/1/anomalies", NULL, NULL, NULL);
    assert_int_equal(r.status, 200);
    has(r.body, "\"verdict\":\"inconclusive\",\"summary\":\"0 anomalies among 0 judged cells; 3 "
                "cells inconclusive\",\"cells\":{\"judged\":0,\"ok\":0,\"flagged\":0,"
                "\"inconclusive\":3,\"failed\":0},\"inconclusive\":[{\"row\":\"h1\"");
    has(r.body, "\"anomalies\":[]");
    free(r.body);

    r = call(f, "GET", "/api/runs/1/table", "format=md", NULL, NULL);
    assert_int_equal(r.status, 200);
    has(r.body, "**Verdict: inconclusive.**");
    free(r.body);
    /* Each disturbed job says why, beside its value. */
    r = call(f, "GET", "/api/runs/1/cells/0", NULL, NULL, NULL);
    assert_int_equal(r.status, 200);
    has(r.body, "\"host\":\"h1\"");
    has(r.body, "\"disturbed\":true,\"disturbed_reason\":\"" BUSY "\",\"counted\":false");
    free(r.body);
    r = call(f, "GET", "/api/runs/1/cells/1", NULL, NULL, NULL);
    has(r.body, "\"disturbed\":false,\"disturbed_reason\":null,\"counted\":true");
    free(r.body);
    /* With the disturbed samples in, h2 stands apart. */
    r = call(f, "GET", "/api/runs/1/anomalies", "format=text&disturbed=include", NULL, NULL);
    has(r.body, "run 1 (quick): flagged: 1 anomaly among 3 judged cells, no baseline run\n");
    free(r.body);
}

static void test_a_clean_run_is_ok_or_flagged(void **state)
{
    fixture *f = *state;
    fleet(f);
    expect(f, "POST", "/api/runs", NULL, NULL, RUN("seed"), 201, "\"run\":");
    finish_jobs(f, "h1", 1300);
    finish_jobs(f, "h2", 1300);
    finish_jobs(f, "h3", 1300);
    response r = call(f, "GET", "/api/runs/1/anomalies", "format=text", NULL, NULL);
    has(r.body, "run 1 (seed): ok: 0 anomalies among 3 judged cells, no baseline run\n");
    lacks(r.body, "inconclusive");
    free(r.body);
    expect(f, "POST", "/api/runs", NULL, NULL, RUN("seed2"), 201, "\"run\":");
    finish_jobs(f, "h1", 1300);
    finish_jobs(f, "h2", 4.4);
    finish_jobs(f, "h3", 1300);
    r = call(f, "GET", "/api/runs/2/anomalies", "format=text", NULL, NULL);
    has(r.body, "run 2 (seed2): flagged: 1 anomaly among 3 judged cells, no baseline run\n");
    free(r.body);
}

/* POST /api/runs/ID/again: a run of exactly the cells the first could not judge. */
static void test_again_measures_exactly_the_cells_not_judged(void **state)
{
    fixture *f = *state;
    fleet(f);
    register_agent(f, "h4");
    expect(f, "POST", "/api/runs", NULL, NULL, RUN("quick"), 201, "\"run\":\"1\"");
    expect(f, "POST", "/api/runs/1/again", NULL, NULL, "{}", 409, "still running");
    finish_jobs_disturbed(f, "h1", 1300, BUSY);
    finish_jobs(f, "h2", 1300);
    finish_jobs(f, "h3", 1300);
    finish_jobs(f, "h4", 1300);
    /* h1 alone was not judged (three hosts still make a fleet): run 2 measures h1's cell and
     * nothing else. */
    expect(f, "POST", "/api/runs/1/again", NULL, NULL, "{}", 201, "{\"run\":\"2\"}");
    response r = call(f, "GET", "/api/runs/2", NULL, NULL, NULL);
    assert_int_equal(r.status, 200);
    has(r.body, "\"name\":\"quick-again\"");
    has(r.body, "\"host\":\"h1\"");
    has(r.body, "\"test\":\"stream tcp 128 KiB x 10\"");
    lacks(r.body, "\"host\":\"h2\"");
    lacks(r.body, "\"host\":\"h3\"");
    lacks(r.body, "\"host\":\"h4\"");
    free(r.body);
    finish_jobs(f, "h1", 1300);
    /* Run 2's one cell has no fleet of its own: again of again keeps the name. */
    expect(f, "POST", "/api/runs/2/again", NULL, NULL, "{\"cells\":\"unjudged\"}", 201,
           "{\"run\":\"3\"}");
    r = call(f, "GET", "/api/runs/3", NULL, NULL, NULL);
    has(r.body, "\"name\":\"quick-again\"");
    free(r.body);
}

static void test_again_refuses_what_it_cannot_do(void **state)
{
    fixture *f = *state;
    fleet(f);
    expect(f, "POST", "/api/runs/9/again", NULL, NULL, "{}", 404, "no such run");
    expect(f, "POST", "/api/runs", NULL, NULL, RUN("seed"), 201, "\"run\":\"1\"");
    for (int h = 1; h <= 3; h++) {
        char name[8];
        snprintf(name, sizeof name, "h%d", h);
        finish_jobs(f, name, 1300);
    }
    expect(f, "POST", "/api/runs/1/again", NULL, NULL, "{}", 409,
           "every cell of this run was judged");
    expect(f, "POST", "/api/runs/1/again", NULL, NULL, "{\"cells\":\"all\"}", 400,
           "\"field\":\"cells\"");
    expect(f, "POST", "/api/runs/1/again", NULL, NULL, "{\"hosts\":\"all\"}", 400,
           "\"field\":\"hosts\"");
    expect(f, "POST", "/api/runs/1/again", NULL, NULL, "[1]", 400, "not a JSON object");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_cells_of_a_fleet_are_ok),
        cmocka_unit_test(test_a_flagged_cell_flags_its_row_and_the_table),
        cmocka_unit_test(test_a_host_is_never_judged_against_a_fleet_set_aside),
        cmocka_unit_test(test_too_few_clean_samples_say_how_many_and_why),
        cmocka_unit_test(test_every_job_failed_is_failed_and_the_time_limit_is_inconclusive),
        cmocka_unit_test(test_a_cell_without_jobs_says_nothing),
        cmocka_unit_test(test_the_summary_counts_what_was_judged),
        cmocka_unit_test(test_exports_of_an_inconclusive_table_say_so),
        cmocka_unit_test_setup_teardown(test_a_run_judged_on_nothing_says_inconclusive_everywhere,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_clean_run_is_ok_or_flagged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_again_measures_exactly_the_cells_not_judged, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_again_refuses_what_it_cannot_do, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
