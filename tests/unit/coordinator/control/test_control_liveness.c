/* Unit tests of the control core's liveness: silent and restarted agents, clock steps, lost hosts
 * and their grace, and the late results of their jobs. */
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

/* Ticks every 250 ms from f->now up to and including until, as the server does: time that
 * passes without a poll or a tick is time the coordinator was away, and is forgiven. */
static void tick_until(fixture *f, int64_t until)
{
    sm_error err = {0};
    while (f->now < until) {
        f->now = f->now + 250 < until ? f->now + 250 : until;
        assert_int_equal(sm_control_tick(f->c, f->now, &err), 0);
    }
}

static void test_control_a_silent_agent_is_lost_and_its_job_fails_agent_lost(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    uint64_t id = control_fixture_dispatch_one(f, &p, &r);
    p.state = SM_AGENT_BUSY;
    p.job = id;
    p.attempt = 1;
    control_fixture_poll(f, &p, &r, &now);
    sm_error err = {0};
    tick_until(f, f->now + 3 * HOLD); /* exactly 3 x hold: not yet */
    assert_int_equal(control_fixture_job_state(f, id, NULL, 0), SM_JOB_RUNNING);
    f->now += 1;
    assert_int_equal(sm_control_tick(f->c, f->now, &err), 0);
    char reason[256];
    assert_int_equal(control_fixture_job_state(f, id, reason, sizeof reason), SM_JOB_FAILED);
    assert_non_null(strstr(reason, "agent-lost"));
    sm_agent_status st;
    int64_t seen;
    assert_true(sm_control_agent_live(f->c, "h1", &st, &seen));
    assert_int_equal(st, SM_AGENT_LOST);
}

static void test_control_a_pause_of_the_coordinator_is_not_the_agents_silence(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    uint64_t id = control_fixture_dispatch_one(f, &p, &r);
    p.state = SM_AGENT_BUSY;
    p.job = id;
    p.attempt = 1;
    control_fixture_poll(f, &p, &r, &now);
    const int64_t polled = f->now;
    sm_error err = {0};
    assert_int_equal(sm_control_tick(f->c, f->now, &err), 0);
    tick_until(f, polled + HOLD);
    /* The coordinator is stopped for 20 s (or its wall clock steps 20 s forward): the next
     * tick sees a gap nobody could have polled in. */
    f->now += 20000;
    assert_int_equal(sm_control_tick(f->c, f->now, &err), 0);
    assert_int_equal(control_fixture_status(f, "h1"), SM_AGENT_STATUS_BUSY);
    assert_int_equal(control_fixture_job_state(f, id, NULL, 0), SM_JOB_RUNNING);
    /* Of the gap, hold_ms counts: 2 x hold_ms of silence so far. Silence is still measured
     * while the coordinator runs: 3 x hold_ms is not yet lost, a tick more is. */
    tick_until(f, polled + 20000 + 2 * HOLD);
    assert_int_equal(control_fixture_status(f, "h1"), SM_AGENT_STATUS_BUSY);
    tick_until(f, f->now + 250);
    assert_int_equal(control_fixture_status(f, "h1"), SM_AGENT_LOST);
    char reason[256];
    assert_int_equal(control_fixture_job_state(f, id, reason, sizeof reason), SM_JOB_FAILED);
    assert_non_null(strstr(reason, "agent-lost"));
}

static void test_control_a_backward_clock_step_neither_loses_nor_keeps_an_agent(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    control_fixture_base_poll(&p, "h1", "0123456789abcdef0123456789abcdef");
    control_fixture_poll(f, &p, &r, &now);
    sm_error err = {0};
    assert_int_equal(sm_control_tick(f->c, f->now, &err), 0);
    tick_until(f, f->now + HOLD);
    f->now -= 60000; /* the wall clock steps a minute back */
    assert_int_equal(sm_control_tick(f->c, f->now, &err), 0);
    assert_int_equal(control_fixture_status(f, "h1"), SM_AGENT_ONLINE);
    /* 1 s before the step and 2 s after it: 3 x hold_ms, not yet lost; a tick more is. */
    tick_until(f, f->now + 2 * HOLD);
    assert_int_equal(control_fixture_status(f, "h1"), SM_AGENT_ONLINE);
    tick_until(f, f->now + 250);
    assert_int_equal(control_fixture_status(f, "h1"), SM_AGENT_LOST);
}

static void test_control_a_restarted_agent_fails_its_running_job(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    uint64_t id = control_fixture_dispatch_one(f, &p, &r);
    p.state = SM_AGENT_BUSY;
    p.job = id;
    p.attempt = 1;
    control_fixture_poll(f, &p, &r, &now);
    control_fixture_base_poll(&p, "h1", "ffffffffffffffffffffffffffffffff");
    control_fixture_poll(f, &p, &r, &now);
    char reason[256];
    assert_int_equal(control_fixture_job_state(f, id, reason, sizeof reason), SM_JOB_FAILED);
    assert_non_null(strstr(reason, "agent-restarted"));
}

static void test_control_a_late_result_of_a_lost_job_is_stored_and_completes_it(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    uint64_t id = control_fixture_dispatch_one(f, &p, &r);
    p.state = SM_AGENT_BUSY;
    p.job = id;
    p.attempt = 1;
    control_fixture_poll(f, &p, &r, &now);
    tick_until(f, f->now + 3 * HOLD + 1);
    /* The agent comes back (new process) with the result from its spool. */
    sm_result_msg m = {.job = id, .attempt = 1};
    sm_result_init(&m.result);
    m.result.ok = true;
    control_fixture_base_poll(&p, "h1", "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee");
    p.results = &m;
    p.n_results = 1;
    control_fixture_poll(f, &p, &r, &now);
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(control_fixture_results(f), 1);
    assert_int_equal(control_fixture_job_state(f, id, NULL, 0), SM_JOB_DONE);
}

static void test_control_queued_jobs_survive_a_restart_and_dispatch_in_order(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    control_fixture_base_poll(&p, "h1", "0123456789abcdef0123456789abcdef");
    control_fixture_poll(f, &p, &r, &now);
    uint64_t a = control_fixture_submit(f, "h1"), b = control_fixture_submit(f, "h1");
    sm_control_close(f->c);
    sm_control_cfg cfg = {.hold_ms = HOLD, .job_grace_ms = 1000};
    sm_error err = {0};
    assert_int_equal(sm_control_open(&f->c, f->st, &cfg, f->now, &err), 0);
    p.have_facts = false;
    control_fixture_poll(f, &p, &r, &now);
    assert_int_equal(r.n_commands, 1);
    assert_int_equal(r.commands[0].job, a);
    assert_int_not_equal(a, b);
}

static void test_control_a_lost_host_fails_its_queued_run_jobs_and_the_run_ends(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id = control_fixture_start_run(f, 1, true, &p1, &p2);
    control_fixture_take_and_finish(f, &p1, true, "");
    control_fixture_take_and_finish(f, &p1, true, "");
    sm_error err = {0};
    tick_until(f, f->now + 3 * HOLD); /* h2 never polls again */
    f->now += 1;
    sm_poll_reply r;
    bool now;
    control_fixture_poll(f, &p1, &r, &now); /* h1 stays alive */
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_control_tick(f->c, f->now, &err), 0);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    sm_run_row row = control_fixture_run_row(f, id);
    assert_int_equal(row.state, SM_RUN_FAILED);
    assert_int_equal(row.done, 2);
    assert_int_equal(row.failed, 2);
    sm_run_row_fini(&row);
}

/* The liveness clock of the tests that give one: f->mono, moved by hand. */
static int64_t fixture_clock(void *arg)
{
    return ((fixture *)arg)->mono;
}

/* Opens the control plane again on the same store with cfg, reading f->mono as its clock. */
static void reopen(fixture *f, sm_control_cfg cfg)
{
    sm_error err = {0};
    sm_control_close(f->c);
    cfg.clock_ms = fixture_clock;
    cfg.clock_arg = f;
    f->mono = 5000;
    assert_int_equal(sm_control_open(&f->c, f->st, &cfg, f->now, &err), 0);
}

/* Ticks every 250 ms of both clocks for ms. */
static void tick_both(fixture *f, int64_t ms)
{
    sm_error err = {0};
    for (int64_t t = 0; t < ms; t += 250) {
        f->now += 250;
        f->mono += 250;
        assert_int_equal(sm_store_begin(f->st, &err), 0);
        assert_int_equal(sm_control_tick(f->c, f->now, &err), 0);
        assert_int_equal(sm_store_commit(f->st, &err), 0);
    }
}

static void test_control_a_wall_clock_step_neither_times_out_a_job_nor_loses_its_agent(void **state)
{
    fixture *f = *state;
    reopen(f, (sm_control_cfg){.hold_ms = HOLD, .job_grace_ms = 1000});
    sm_poll p;
    sm_poll_reply r;
    bool now;
    uint64_t id = control_fixture_dispatch_one(f, &p, &r);
    p.state = SM_AGENT_BUSY;
    p.job = id;
    p.attempt = 1;
    control_fixture_poll(f, &p, &r, &now);
    assert_int_equal(control_fixture_job_state(f, id, NULL, 0), SM_JOB_RUNNING);
    /* The wall clock steps an hour forward (an NTP correction) between two ticks 250 ms apart:
     * the job has run 250 ms, not an hour, and its agent was silent as long. */
    f->now += 3600 * 1000;
    tick_both(f, 250);
    assert_int_equal(control_fixture_job_state(f, id, NULL, 0), SM_JOB_RUNNING);
    assert_int_equal(control_fixture_status(f, "h1"), SM_AGENT_STATUS_BUSY);
    control_fixture_poll(f, &p, &r, &now);
    /* Silence on the monotonic clock still counts: 3 x hold_ms, then a tick more. */
    tick_both(f, 3 * HOLD);
    assert_int_equal(control_fixture_status(f, "h1"), SM_AGENT_STATUS_BUSY);
    tick_both(f, 250);
    assert_int_equal(control_fixture_status(f, "h1"), SM_AGENT_LOST);
}

/* A host lost for hold x 3 whose run jobs wait lost_grace_ms: h1 ends its two jobs, h2 is
 * silent long enough to be lost. Returns the run. */
static uint64_t run_with_h2_lost(fixture *f, uint32_t grace_ms, sm_poll *p1, sm_poll *p2)
{
    reopen(f, (sm_control_cfg){.hold_ms = HOLD, .job_grace_ms = 1000, .lost_grace_ms = grace_ms});
    uint64_t id = control_fixture_start_run(f, 1, true, p1, p2);
    control_fixture_take_and_finish(f, p1, true, "");
    control_fixture_take_and_finish(f, p1, true, "");
    sm_poll_reply r;
    bool now;
    /* h1 keeps polling; h2 does not, and is lost after 3 x hold_ms: the grace starts then. */
    for (int k = 0; k < 40 && control_fixture_status(f, "h2") != SM_AGENT_LOST; k++) {
        tick_both(f, 250);
        control_fixture_poll(f, p1, &r, &now);
    }
    assert_int_equal(control_fixture_status(f, "h2"), SM_AGENT_LOST);
    return id;
}

static void test_control_a_lost_host_back_within_the_grace_runs_its_queued_run_jobs(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id = run_with_h2_lost(f, 10000, &p1, &p2);
    tick_both(f, 5000);
    sm_run_row row = control_fixture_run_row(f, id);
    assert_int_equal(row.state, SM_RUN_RUNNING);
    assert_int_equal(row.failed, 0);
    sm_run_row_fini(&row);
    /* h2 is back after 5 s of its 10 s grace: its two jobs run and the run ends done. */
    control_fixture_take_and_finish(f, &p2, true, "");
    control_fixture_take_and_finish(f, &p2, true, "");
    assert_int_equal(control_fixture_status(f, "h2"), SM_AGENT_ONLINE);
    row = control_fixture_run_row(f, id);
    assert_int_equal(row.state, SM_RUN_DONE);
    assert_int_equal(row.done, 4);
    assert_int_equal(row.failed, 0);
    sm_run_row_fini(&row);
}

static void test_control_a_lost_host_away_past_the_grace_fails_its_run_jobs_saying_so(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id = run_with_h2_lost(f, 10000, &p1, &p2);
    tick_both(f, 9500);
    sm_run_row row = control_fixture_run_row(f, id);
    assert_int_equal(row.state, SM_RUN_RUNNING);
    sm_run_row_fini(&row);
    tick_both(f, 750);
    row = control_fixture_run_row(f, id);
    assert_int_equal(row.state, SM_RUN_FAILED);
    assert_int_equal(row.done, 2);
    assert_int_equal(row.failed, 2);
    sm_run_row_fini(&row);
    char reason[256];
    assert_int_equal(control_fixture_job_state(f, 3, reason, sizeof reason), SM_JOB_FAILED);
    assert_string_equal(reason, "agent-lost: the host was lost before the job ran and did not "
                                "come back within 10000 ms");
}

static void test_control_a_late_result_completes_a_job_whose_retry_waits_for_its_host(void **state)
{
    fixture *f = *state;
    reopen(f, (sm_control_cfg){.hold_ms = HOLD, .job_grace_ms = 1000, .lost_grace_ms = 60000});
    sm_poll p1, p2;
    uint64_t run = control_fixture_start_run(f, 1, true, &p1, &p2);
    sm_poll_reply r;
    bool now;
    control_fixture_poll(f, &p1, &r, &now);
    assert_int_equal(r.n_commands, 1);
    const uint64_t job = r.commands[0].job;
    p1.state = SM_AGENT_BUSY;
    p1.job = job;
    p1.attempt = 1;
    control_fixture_poll(f, &p1, &r, &now);
    /* h1's link is cut: it is lost, and the job it ran waits as its retry (attempt 2). */
    for (int k = 0; k < 40 && control_fixture_status(f, "h1") != SM_AGENT_LOST; k++) {
        tick_both(f, 250);
        control_fixture_poll(f, &p2, &r, &now);
    }
    assert_int_equal(control_fixture_status(f, "h1"), SM_AGENT_LOST);
    char reason[256];
    assert_int_equal(control_fixture_job_state(f, job, reason, sizeof reason), SM_JOB_QUEUED);
    assert_non_null(strstr(reason, "retry after: agent-lost"));
    /* It comes back with attempt 1's result, measured while it was away. */
    sm_result_msg m = {.job = job, .attempt = 1};
    sm_result_init(&m.result);
    m.result.ok = true;
    sm_result_set(&m.result, SM_M_SECONDS, 0.01);
    p1.state = SM_AGENT_IDLE;
    p1.job = 0;
    p1.attempt = 0;
    p1.results = &m;
    p1.n_results = 1;
    control_fixture_poll(f, &p1, &r, &now);
    p1.results = NULL;
    p1.n_results = 0;
    assert_int_equal(control_fixture_job_state(f, job, NULL, 0), SM_JOB_DONE);
    assert_int_equal(r.n_acks, 1);
    /* Its retry is not run: the host's next job is another one. */
    for (size_t i = 0; i < r.n_commands; i++)
        assert_true(r.commands[i].job != job);
    sm_job_row row;
    sm_error err = {0};
    assert_int_equal(sm_store_job_get(f->st, job, &row, &err), 0);
    assert_int_equal(row.attempt, 1);
    sm_job_row_fini(&row);
    sm_run_row rr = control_fixture_run_row(f, run);
    assert_int_equal(rr.done, 1);
    assert_int_equal(rr.failed, 0);
    sm_run_row_fini(&rr);
}

/* The run's counts against its jobs in the store. */
static void assert_run_counts_match_jobs(fixture *f, uint64_t run, uint32_t done, uint32_t failed)
{
    sm_job_row *jobs = NULL;
    size_t n = 0;
    sm_error err = {0};
    assert_int_equal(sm_store_run_jobs(f->st, run, &jobs, &n, &err), 0);
    uint32_t jd = 0, jf = 0;
    for (size_t i = 0; i < n; i++) {
        jd += jobs[i].state == SM_JOB_DONE;
        jf += jobs[i].state == SM_JOB_FAILED;
    }
    sm_store_jobs_free(jobs, n);
    assert_int_equal(jd, done);
    assert_int_equal(jf, failed);
    sm_run_row row = control_fixture_run_row(f, run);
    assert_int_equal(row.done, jd);
    assert_int_equal(row.failed, jf);
    sm_run_row_fini(&row);
}

/* h1 takes its first job of a one-repetition run and runs it; h1 then goes silent and is lost,
 * which fails that job and h1's other one. Returns the running job. */
static uint64_t lose_h1_mid_job(fixture *f, sm_poll *p1, sm_poll *p2)
{
    sm_poll_reply r;
    bool now;
    control_fixture_poll(f, p1, &r, &now);
    assert_int_equal(r.n_commands, 1);
    uint64_t job = r.commands[0].job;
    snprintf(p1->acks[0], sizeof p1->acks[0], "%s", r.commands[0].id);
    p1->n_acks = 1;
    p1->state = SM_AGENT_BUSY;
    p1->job = job;
    p1->attempt = 1;
    control_fixture_poll(f, p1, &r, &now);
    p1->n_acks = 0;
    /* The coordinator runs throughout (a sweep every 250 ms, as the server does), so h1's
     * silence is h1's; h2 polls and stays alive. */
    int64_t until = f->now + 3 * HOLD + 1;
    while (f->now < until) {
        tick_until(f, f->now + 250 < until ? f->now + 250 : until);
        control_fixture_poll(f, p2, &r, &now);
    }
    sm_error err = {0};
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_control_tick(f->c, f->now, &err), 0);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    char reason[256];
    assert_int_equal(control_fixture_job_state(f, job, reason, sizeof reason), SM_JOB_FAILED);
    assert_non_null(strstr(reason, "agent-lost"));
    return job;
}

/* h1 is back with the lost job's result from its spool. */
static void deliver_late(fixture *f, sm_poll *p1, uint64_t job)
{
    sm_poll_reply r;
    bool now;
    sm_result_msg m = {.job = job, .attempt = 1};
    sm_result_init(&m.result);
    m.result.ok = true;
    sm_result_set(&m.result, SM_M_SECONDS, 0.01);
    p1->state = SM_AGENT_IDLE;
    p1->job = 0;
    p1->attempt = 0;
    p1->results = &m;
    p1->n_results = 1;
    control_fixture_poll(f, p1, &r, &now);
    p1->results = NULL;
    p1->n_results = 0;
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(control_fixture_job_state(f, job, NULL, 0), SM_JOB_DONE);
}

static void
test_control_a_late_result_moves_its_job_to_done_in_the_running_runs_counts(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t run = control_fixture_start_run(f, 1, true, &p1, &p2);
    uint64_t job = lose_h1_mid_job(f, &p1, &p2);
    assert_run_counts_match_jobs(f, run, 0, 2);
    deliver_late(f, &p1, job);
    assert_run_counts_match_jobs(f, run, 1, 1);
    /* The counts in memory agree too: the run ends when h2's two jobs have. */
    control_fixture_take_and_finish(f, &p2, true, "");
    sm_run_row row = control_fixture_run_row(f, run);
    assert_int_equal(row.state, SM_RUN_RUNNING);
    sm_run_row_fini(&row);
    control_fixture_take_and_finish(f, &p2, true, "");
    assert_run_counts_match_jobs(f, run, 3, 1);
    row = control_fixture_run_row(f, run);
    assert_int_equal(row.state, SM_RUN_FAILED);
    assert_non_null(strstr(row.reason, "1 of 4"));
    sm_run_row_fini(&row);
}

static void test_control_a_late_result_after_its_run_ended_corrects_the_runs_counts(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t run = control_fixture_start_run(f, 1, true, &p1, &p2);
    control_fixture_take_and_finish(f, &p2, true, "");
    control_fixture_take_and_finish(f, &p2, true, "");
    uint64_t job = lose_h1_mid_job(f, &p1, &p2);
    sm_run_row row = control_fixture_run_row(f, run);
    assert_int_equal(row.state, SM_RUN_FAILED);
    assert_non_null(strstr(row.reason, "2 of 4"));
    int64_t finished = row.finished_ms;
    sm_run_row_fini(&row);
    f->now += 5000;
    deliver_late(f, &p1, job);
    assert_run_counts_match_jobs(f, run, 3, 1);
    row = control_fixture_run_row(f, run);
    assert_int_equal(row.state, SM_RUN_FAILED);
    assert_non_null(strstr(row.reason, "1 of 4"));
    assert_int_equal(row.finished_ms, finished); /* it ended when it ended */
    sm_run_row_fini(&row);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_control_a_silent_agent_is_lost_and_its_job_fails_agent_lost, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_pause_of_the_coordinator_is_not_the_agents_silence, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_backward_clock_step_neither_loses_nor_keeps_an_agent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_a_restarted_agent_fails_its_running_job, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_late_result_of_a_lost_job_is_stored_and_completes_it, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_queued_jobs_survive_a_restart_and_dispatch_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_lost_host_fails_its_queued_run_jobs_and_the_run_ends, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_wall_clock_step_neither_times_out_a_job_nor_loses_its_agent, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_late_result_completes_a_job_whose_retry_waits_for_its_host, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_lost_host_back_within_the_grace_runs_its_queued_run_jobs, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_lost_host_away_past_the_grace_fails_its_run_jobs_saying_so, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_late_result_moves_its_job_to_done_in_the_running_runs_counts, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_late_result_after_its_run_ended_corrects_the_runs_counts, setup,
            teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
