/* Unit tests of the control core's repetitions: adaptive rounds until the CI is narrow, and
 * disturbed samples measured again, across restarts. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coordinator/control/control.h"
#include "coordinator/store/store.h"
#include "tests/unit/coordinator/control/control_fixture.h"

#define HOLD 1000

static int setup(void **state)
{
    return control_fixture_setup(state, HOLD);
}

static int teardown(void **state)
{
    return control_fixture_teardown(state);
}

/* control_fixture_take_and_finish with a given value of the test's headline metric (a stream
 * without framing lines: throughput_MBps), measured while the host was disturbed or not; returns
 * the job's row. */
static sm_job_row take_value_as(fixture *f, sm_poll *p, double mbps, bool disturbed)
{
    sm_poll_reply r;
    bool now;
    control_fixture_poll(f, p, &r, &now);
    if (r.n_commands != 1 || r.commands[0].kind != SM_CMD_ASSIGN)
        fail_msg("%s got %zu commands", p->agent, r.n_commands);
    sm_result_msg m = {.job = r.commands[0].job, .attempt = r.commands[0].attempt};
    sm_result_init(&m.result);
    m.result.ok = true;
    sm_result_set(&m.result, SM_M_THROUGHPUT, mbps);
    if (disturbed) {
        sm_host_state_init(&m.result.host);
        m.result.host.known = true;
        m.result.host.disturbed = true;
        snprintf(m.result.host.reason, sizeof m.result.host.reason, "a hog on its CPU");
    }
    p->results = &m;
    p->n_results = 1;
    control_fixture_poll(f, p, &r, &now);
    p->results = NULL;
    p->n_results = 0;
    sm_job_row row;
    sm_error err = {0};
    assert_int_equal(sm_store_job_get(f->st, m.job, &row, &err), 0);
    return row;
}

static sm_job_row take_value(fixture *f, sm_poll *p, double mbps)
{
    return take_value_as(f, p, mbps, false);
}

static sm_reps_stop cell_stopped(fixture *f, uint64_t run, uint32_t idx)
{
    sm_cell_row *rows = NULL;
    size_t n = 0;
    sm_error err = {0};
    assert_int_equal(sm_store_cells_list(f->st, run, &rows, &n, &err), 0);
    assert_true(idx < n);
    sm_reps_stop why = rows[idx].stopped;
    sm_store_cells_free(rows, n);
    return why;
}

static void test_control_adaptive_run_adds_rounds_to_the_wide_group_until_max(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id =
        control_fixture_start_run_reps(f, "{\"min\":2,\"max\":4,\"ci_rel\":0.05}", true, &p1, &p2);
    sm_run_row r = control_fixture_run_row(f, id);
    assert_int_equal(r.total, 8); /* 2 hosts x 2 variants x min 2 */
    sm_run_row_fini(&r);
    /* h1: tight at once (every sample 100 MB/s): no round is added for it. */
    for (int i = 0; i < 4; i++) {
        sm_job_row j = take_value(f, &p1, 100);
        sm_job_row_fini(&j);
    }
    sm_poll_reply rep;
    bool now;
    control_fixture_poll(f, &p1, &rep, &now);
    assert_int_equal(rep.n_commands, 0);
    assert_int_equal(cell_stopped(f, id, 0), SM_REPS_CI);
    assert_int_equal(cell_stopped(f, id, 1), SM_REPS_CI);
    /* h2: tcp 100 then 200 (wide), unix steady. */
    const double h2[] = {100, 100, 200, 100};
    for (int i = 0; i < 4; i++) {
        sm_job_row j = take_value(f, &p2, h2[i]);
        sm_job_row_fini(&j);
    }
    r = control_fixture_run_row(f, id);
    assert_int_equal(r.state, SM_RUN_RUNNING);
    assert_int_equal(r.total, 10); /* one round of h2's group: tcp and unix */
    sm_run_row_fini(&r);
    assert_int_equal(cell_stopped(f, id, 2), SM_REPS_NONE);
    /* The round is the whole group, in variant order, repetition 2; then another (3). */
    for (uint32_t rep_i = 2; rep_i < 4; rep_i++) {
        sm_job_row a = take_value(f, &p2, 200);
        sm_job_row b = take_value(f, &p2, 100);
        assert_string_equal(a.host, "h2");
        assert_int_equal(a.cell, 2);
        assert_int_equal(b.cell, 3);
        assert_int_equal(a.rep, rep_i);
        assert_int_equal(b.rep, rep_i);
        assert_false(a.warmup);
        sm_job_row_fini(&a);
        sm_job_row_fini(&b);
    }
    r = control_fixture_run_row(f, id);
    assert_int_equal(r.state, SM_RUN_DONE);
    assert_int_equal(r.total, 12);
    assert_int_equal(r.done, 12);
    sm_run_row_fini(&r);
    assert_int_equal(cell_stopped(f, id, 2), SM_REPS_MAX); /* tcp never got tight */
    assert_int_equal(cell_stopped(f, id, 3), SM_REPS_CI);  /* unix was, and kept its pair */
}

/* A disturbed sample is left out of the table by default, so it is no sample for the rule
 * either: a cell of min 2 with one of its two samples disturbed gets another round. */
static void test_control_adaptive_run_does_not_count_disturbed_samples(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id =
        control_fixture_start_run_reps(f, "{\"min\":2,\"max\":4,\"ci_rel\":0.05}", true, &p1, &p2);
    const bool disturbed[] = {true, false, false, false}; /* tcp, unix, tcp, unix */
    for (int i = 0; i < 4; i++) {
        sm_job_row j = take_value_as(f, &p1, 100, disturbed[i]);
        sm_job_row_fini(&j);
    }
    sm_run_row r = control_fixture_run_row(f, id);
    assert_int_equal(r.total, 10); /* one more round of h1's group */
    sm_run_row_fini(&r);
    assert_int_equal(cell_stopped(f, id, 0), SM_REPS_NONE);
    for (int i = 0; i < 2; i++) {
        sm_job_row j = take_value(f, &p1, 100);
        sm_job_row_fini(&j);
    }
    assert_int_equal(cell_stopped(f, id, 0), SM_REPS_CI);
    r = control_fixture_run_row(f, id);
    assert_int_equal(r.total, 10);
    sm_run_row_fini(&r);
}

static void test_control_adaptive_rounds_resume_after_a_restart(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id =
        control_fixture_start_run_reps(f, "{\"min\":2,\"max\":3,\"ci_rel\":0.05}", true, &p1, &p2);
    for (int i = 0; i < 4; i++) {
        sm_job_row j = take_value(f, &p1, 100);
        sm_job_row_fini(&j);
    }
    const double h2[] = {100, 100, 200, 100};
    for (int i = 0; i < 4; i++) {
        sm_job_row j = take_value(f, &p2, h2[i]);
        sm_job_row_fini(&j);
    }
    sm_run_row r = control_fixture_run_row(f, id);
    assert_int_equal(r.total, 10); /* h2's round was added */
    sm_run_row_fini(&r);
    /* A coordinator restart: the control is rebuilt from the store alone. */
    sm_control_close(f->c);
    f->c = NULL;
    sm_error err = {0};
    sm_control_cfg cfg = {.hold_ms = HOLD, .job_grace_ms = 1000};
    assert_int_equal(sm_control_open(&f->c, f->st, &cfg, f->now, &err), 0);
    /* The added round runs; it is the third repetition, max: no fourth is added. */
    sm_job_row a = take_value(f, &p2, 150), b = take_value(f, &p2, 100);
    assert_int_equal(a.rep, 2);
    assert_int_equal(b.rep, 2);
    sm_job_row_fini(&a);
    sm_job_row_fini(&b);
    r = control_fixture_run_row(f, id);
    assert_int_equal(r.state, SM_RUN_DONE);
    assert_int_equal(r.total, 10);
    assert_int_equal(r.done, 10);
    sm_run_row_fini(&r);
    assert_int_equal(cell_stopped(f, id, 2), SM_REPS_MAX);
    assert_int_equal(cell_stopped(f, id, 3), SM_REPS_CI);
}

/* ---- disturbed samples measured again ---- */

static uint32_t run_total(fixture *f, uint64_t id)
{
    sm_run_row r = control_fixture_run_row(f, id);
    uint32_t total = r.total;
    sm_run_row_fini(&r);
    return total;
}

/* The host's next job, answered with 100 MB/s, disturbed or not; checks that it is
 * repetition rep of cell `cell`. */
static void take_rep(fixture *f, sm_poll *p, bool disturbed, uint32_t cell, uint32_t rep)
{
    sm_job_row j = take_value_as(f, p, 100, disturbed);
    assert_int_equal(j.cell, cell);
    assert_int_equal(j.rep, rep);
    assert_false(j.warmup);
    sm_job_row_fini(&j);
}

/* Restarts the control core over the same store, as a coordinator restart does. */
static void restart(fixture *f)
{
    sm_control_close(f->c);
    f->c = NULL;
    sm_error err = {0};
    sm_control_cfg cfg = {.hold_ms = HOLD, .job_grace_ms = 1000};
    assert_int_equal(sm_control_open(&f->c, f->st, &cfg, f->now, &err), 0);
}

static void test_control_a_fixed_run_measures_disturbed_samples_again_up_to_its_bound(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    /* 2 repetitions, remeasure 2 by default: h1's tcp (cell 0) is disturbed every time. */
    uint64_t id = control_fixture_start_run(f, 2, true, &p1, &p2);
    assert_int_equal(run_total(f, id), 8);
    for (uint32_t rep = 0; rep < 2; rep++) {
        take_rep(f, &p1, true, 0, rep);
        take_rep(f, &p1, false, 1, rep);
    }
    /* The group of h1 (tcp and unix, A B) gets a round: repetitions 2, then 3. */
    assert_int_equal(run_total(f, id), 10);
    take_rep(f, &p1, true, 0, 2);
    take_rep(f, &p1, false, 1, 2);
    assert_int_equal(run_total(f, id), 12);
    assert_int_equal(cell_stopped(f, id, 0), SM_REPS_NONE);
    take_rep(f, &p1, true, 0, 3);
    take_rep(f, &p1, false, 1, 3);
    /* 2 + 2 extra ran: tcp stops short, unix had its clean samples all along. */
    assert_int_equal(run_total(f, id), 12);
    assert_int_equal(cell_stopped(f, id, 0), SM_REPS_DISTURBED);
    assert_int_equal(cell_stopped(f, id, 1), SM_REPS_NONE);
    sm_poll_reply rep;
    bool now;
    control_fixture_poll(f, &p1, &rep, &now);
    assert_int_equal(rep.n_commands, 0);
    /* h2 is clean: no job beyond its plan, and the run ends done with the rounds counted. */
    for (uint32_t r = 0; r < 2; r++) {
        take_rep(f, &p2, false, 2, r);
        take_rep(f, &p2, false, 3, r);
    }
    sm_run_row r = control_fixture_run_row(f, id);
    assert_int_equal(r.state, SM_RUN_DONE);
    assert_int_equal(r.total, 12);
    assert_int_equal(r.done, 12);
    sm_run_row_fini(&r);
    assert_int_equal(cell_stopped(f, id, 2), SM_REPS_NONE);
    assert_int_equal(cell_stopped(f, id, 3), SM_REPS_NONE);
}

static void test_control_a_fixed_run_stops_remeasuring_once_it_has_its_clean_samples(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id = control_fixture_start_run(f, 2, true, &p1, &p2);
    take_rep(f, &p1, false, 0, 0);
    take_rep(f, &p1, true, 1, 0); /* unix disturbed once */
    take_rep(f, &p1, false, 0, 1);
    take_rep(f, &p1, false, 1, 1);
    assert_int_equal(run_total(f, id), 10);
    take_rep(f, &p1, false, 0, 2);
    take_rep(f, &p1, false, 1, 2);
    /* Two clean samples of each: no reason to record, as for any fixed count. */
    assert_int_equal(run_total(f, id), 10);
    assert_int_equal(cell_stopped(f, id, 0), SM_REPS_NONE);
    assert_int_equal(cell_stopped(f, id, 1), SM_REPS_NONE);
}

static void test_control_remeasure_0_and_failed_jobs_add_no_round(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id = control_fixture_start_run_reps(f, "2,\"remeasure\":0", true, &p1, &p2);
    for (uint32_t rep = 0; rep < 2; rep++) {
        take_rep(f, &p1, true, 0, rep);
        take_rep(f, &p1, true, 1, rep);
    }
    assert_int_equal(run_total(f, id), 8);
    sm_poll_reply r;
    bool now;
    control_fixture_poll(f, &p1, &r, &now);
    assert_int_equal(r.n_commands, 0);
    assert_int_equal(cell_stopped(f, id, 0), SM_REPS_NONE);
    /* h2 fails every job (each after its retry), none disturbed: remeasuring is on by
     * default, and still no round. */
    for (int i = 0; i < 8; i++)
        control_fixture_take_and_finish(f, &p2, false, "client: time limit of 100 ms reached");
    control_fixture_poll(f, &p2, &r, &now);
    assert_int_equal(r.n_commands, 0);
    sm_run_row row = control_fixture_run_row(f, id);
    assert_int_equal(row.state, SM_RUN_FAILED);
    assert_int_equal(row.total, 8);
    assert_int_equal(row.failed, 4);
    sm_run_row_fini(&row);
}

static void test_control_remeasuring_resumes_after_a_restart(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id = control_fixture_start_run_reps(f, "2,\"remeasure\":3", true, &p1, &p2);
    for (uint32_t rep = 0; rep < 2; rep++) {
        take_rep(f, &p1, true, 0, rep);
        take_rep(f, &p1, false, 1, rep);
    }
    assert_int_equal(run_total(f, id), 10);
    restart(f);
    /* The round added before the restart runs, disturbed again: the resumed state adds the
     * next, then stops at 2 + 3. */
    take_rep(f, &p1, true, 0, 2);
    take_rep(f, &p1, false, 1, 2);
    assert_int_equal(run_total(f, id), 12);
    restart(f);
    take_rep(f, &p1, true, 0, 3);
    take_rep(f, &p1, false, 1, 3);
    assert_int_equal(run_total(f, id), 14);
    take_rep(f, &p1, true, 0, 4);
    take_rep(f, &p1, false, 1, 4);
    assert_int_equal(run_total(f, id), 14);
    assert_int_equal(cell_stopped(f, id, 0), SM_REPS_DISTURBED);
}

static void test_control_an_adaptive_run_remeasures_past_max_then_stops_disturbed(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id = control_fixture_start_run_reps(
        f, "{\"min\":2,\"max\":3,\"ci_rel\":0.05},\"remeasure\":1", true, &p1, &p2);
    for (uint32_t rep = 0; rep < 2; rep++) {
        take_rep(f, &p1, true, 0, rep);
        take_rep(f, &p1, false, 1, rep);
    }
    /* Below max: a round for a cell with no sample, as before. */
    assert_int_equal(run_total(f, id), 10);
    take_rep(f, &p1, true, 0, 2);
    take_rep(f, &p1, false, 1, 2);
    /* At max, three disturbed: before remeasuring it stopped "max" here. */
    assert_int_equal(run_total(f, id), 12);
    assert_int_equal(cell_stopped(f, id, 0), SM_REPS_NONE);
    take_rep(f, &p1, true, 0, 3);
    take_rep(f, &p1, false, 1, 3);
    assert_int_equal(run_total(f, id), 12);
    assert_int_equal(cell_stopped(f, id, 0), SM_REPS_DISTURBED);
    assert_int_equal(cell_stopped(f, id, 1), SM_REPS_CI);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_control_adaptive_run_adds_rounds_to_the_wide_group_until_max, setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_adaptive_run_does_not_count_disturbed_samples,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_adaptive_rounds_resume_after_a_restart, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_fixed_run_measures_disturbed_samples_again_up_to_its_bound, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_fixed_run_stops_remeasuring_once_it_has_its_clean_samples, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_control_remeasure_0_and_failed_jobs_add_no_round,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_remeasuring_resumes_after_a_restart, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_control_an_adaptive_run_remeasures_past_max_then_stops_disturbed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
