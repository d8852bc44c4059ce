/* Unit tests of the coordinator's control logic against a real SQLite store: what each poll
 * means, what the reply says, and how jobs end. */
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
#include "coordinator/control/sharing.h"
#include "coordinator/model/spec.h"
#include "coordinator/store/store.h"
#include "control_fixture.h"

#define HOLD 1000

static int setup(void **state)
{
    return control_fixture_setup(state, HOLD);
}

static int teardown(void **state)
{
    return control_fixture_teardown(state);
}

static void base_poll(sm_poll *p, const char *agent, const char *boot)
{
    memset(p, 0, sizeof *p);
    snprintf(p->agent, sizeof p->agent, "%s", agent);
    snprintf(p->boot, sizeof p->boot, "%s", boot);
    p->have_facts = true;
    snprintf(p->facts.hostname, sizeof p->facts.hostname, "%s", agent);
}

/* Sends one poll inside a transaction, as the server does. */
static void poll_once(fixture *f, const sm_poll *p, sm_poll_reply *r, bool *now)
{
    sm_error err = {0};
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    if (sm_control_poll(f->c, p, f->now, r, now, &err) != 0)
        fail_msg("poll: %s", err.msg);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
}

static uint64_t submit(fixture *f, const char *host)
{
    sm_params p;
    sm_params_init(&p, SM_WL_STREAM);
    sm_error err = {0};
    assert_int_equal(sm_params_validate(&p, &err), 0);
    uint64_t id = 0;
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_control_submit(f->c, host, &p, f->now, &id, &err), 0);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    return id;
}

static sm_job_state job_state(fixture *f, uint64_t id, char *reason, size_t len)
{
    sm_job_row row;
    sm_error err = {0};
    assert_int_equal(sm_store_job_get(f->st, id, &row, &err), 0);
    sm_job_state s = row.state;
    if (reason)
        snprintf(reason, len, "%s", row.reason);
    sm_job_row_fini(&row);
    return s;
}

static uint64_t results(fixture *f)
{
    uint64_t n = 0;
    sm_error err = {0};
    assert_int_equal(sm_store_result_count(f->st, &n, &err), 0);
    return n;
}

/* Registers h1 (idle), queues a job, and has the next poll carry the assign command. */
static uint64_t dispatch_one(fixture *f, sm_poll *p, sm_poll_reply *r)
{
    bool now;
    base_poll(p, "h1", "0123456789abcdef0123456789abcdef");
    poll_once(f, p, r, &now);
    uint64_t id = submit(f, "h1");
    p->have_facts = false;
    poll_once(f, p, r, &now);
    assert_true(now);
    assert_int_equal(r->n_commands, 1);
    assert_int_equal(r->commands[0].kind, SM_CMD_ASSIGN);
    assert_int_equal(r->commands[0].job, id);
    assert_int_equal(r->commands[0].attempt, 1);
    assert_int_equal(job_state(f, id, NULL, 0), SM_JOB_ASSIGNED);
    return id;
}

/* The end of agent's held poll's hold, as the server's tick answers it: *r is that answer. */
static void expire_of(fixture *f, const char *agent, sm_poll_reply *r)
{
    sm_error err = {0};
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    f->now += HOLD;
    assert_int_equal(sm_control_expire(f->c, agent, f->now, r, &err), 0);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
}

static void expire_h1(fixture *f, sm_poll_reply *r)
{
    expire_of(f, "h1", r);
}

static void test_control_first_poll_registers_and_an_idle_poll_is_held(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    base_poll(&p, "h1", "0123456789abcdef0123456789abcdef");
    poll_once(f, &p, &r, &now);
    assert_false(now); /* facts came, nothing to say: hold it */
    assert_false(r.want_facts);
    sm_agent_status st;
    int64_t seen;
    assert_true(sm_control_agent_live(f->c, "h1", &st, &seen));
    assert_int_equal(st, SM_AGENT_ONLINE);
    assert_int_equal(seen, f->now);
}

/* Its last poll said idle, but a job went to it since: the fleet sees it busy, not online, from
 * the assignment on (a cancelled run's last job would otherwise read idle until the next poll). */
static void test_control_an_agent_given_a_job_is_busy_before_it_polls_again(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    dispatch_one(f, &p, &r);
    assert_int_equal(p.state, SM_AGENT_IDLE);
    assert_int_equal(control_fixture_status(f, "h1"), SM_AGENT_STATUS_BUSY);
}

static void test_control_keeps_the_quarantine_count_each_agent_last_reported(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    base_poll(&p, "h1", "0123456789abcdef0123456789abcdef");
    p.quarantined = 32;
    poll_once(f, &p, &r, &now);
    assert_int_equal(sm_control_agent_quarantined(f->c, "h1"), 32);
    assert_int_equal(sm_control_agent_quarantined(f->c, "h2"), 0); /* unknown */
    /* A level, not a delta: a poll that says 32 again keeps 32, and one that says nothing
     * (the operator emptied quarantine/ and restarted the agent) clears it. */
    p.have_facts = false;
    poll_once(f, &p, &r, &now);
    assert_int_equal(sm_control_agent_quarantined(f->c, "h1"), 32);
    p.quarantined = 0;
    poll_once(f, &p, &r, &now);
    assert_int_equal(sm_control_agent_quarantined(f->c, "h1"), 0);
}

static void test_control_an_agent_without_known_facts_is_asked_for_them(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    base_poll(&p, "h1", "0123456789abcdef0123456789abcdef");
    p.have_facts = false;
    poll_once(f, &p, &r, &now);
    assert_true(r.want_facts);
    assert_true(now);
}

static void test_control_submit_refuses_an_unknown_host(void **state)
{
    fixture *f = *state;
    sm_params p;
    sm_params_init(&p, SM_WL_STREAM);
    uint64_t id;
    sm_error err = {0};
    assert_int_equal(sm_control_submit(f->c, "nobody", &p, f->now, &id, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "nobody"));
}

static void test_control_job_runs_and_its_result_is_stored_once_and_acked_each_time(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    uint64_t id = dispatch_one(f, &p, &r);

    /* The agent acks the assign and reports busy: the job runs, nothing more to say. */
    snprintf(p.acks[0], sizeof p.acks[0], "%s", r.commands[0].id);
    p.n_acks = 1;
    p.state = SM_AGENT_BUSY;
    p.job = id;
    p.attempt = 1;
    poll_once(f, &p, &r, &now);
    assert_false(now);
    assert_int_equal(r.n_commands, 0);
    assert_int_equal(job_state(f, id, NULL, 0), SM_JOB_RUNNING);

    /* The result arrives: stored and the job done at once; with nothing else to say the poll
     * is held, and its answer acks the result. */
    sm_result_msg m = {.job = id, .attempt = 1};
    sm_result_init(&m.result);
    m.result.ok = true;
    sm_result_set(&m.result, SM_M_BYTES, 1000);
    p.n_acks = 0;
    p.state = SM_AGENT_IDLE;
    p.results = &m;
    p.n_results = 1;
    poll_once(f, &p, &r, &now);
    assert_false(now);
    assert_int_equal(job_state(f, id, NULL, 0), SM_JOB_DONE);
    assert_int_equal(results(f), 1);
    expire_h1(f, &r);
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(r.ack_job[0], id);

    /* The ack was lost; the agent sends it again: acked again, stored once. */
    poll_once(f, &p, &r, &now);
    expire_h1(f, &r);
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(results(f), 1);
    sm_control_stats s;
    sm_control_get_stats(f->c, &s);
    assert_int_equal(s.results_stored, 1);
    assert_int_equal(s.results_duplicate, 1);
}

/* An agent that cannot delete an acked result sends it with every poll: answering each such
 * poll at once was a loop of thousands of polls a second. It is held like an empty poll, and
 * the answer at the end of the hold carries the ack. */
static void
test_control_a_poll_resending_only_stored_results_is_held_and_acked_at_expiry(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    uint64_t id = dispatch_one(f, &p, &r);
    sm_result_msg m = {.job = id, .attempt = 1};
    sm_result_init(&m.result);
    m.result.ok = true;
    sm_result_set(&m.result, SM_M_BYTES, 1000);
    p.results = &m;
    p.n_results = 1;
    poll_once(f, &p, &r, &now);
    assert_false(now); /* stored, and held like the rest */
    expire_h1(f, &r);
    assert_int_equal(r.n_acks, 1);

    for (int i = 0; i < 3; i++) {
        f->now += 1;
        poll_once(f, &p, &r, &now);
        assert_false(now);
        expire_h1(f, &r);
        assert_int_equal(r.n_acks, 1);
        assert_int_equal(r.ack_job[0], id);
        assert_int_equal(r.ack_attempt[0], 1);
        /* Paid once: a second answer does not repeat it. */
        expire_h1(f, &r);
        assert_int_equal(r.n_acks, 0);
    }
    assert_int_equal(results(f), 1);
    p.results = NULL;
    p.n_results = 0;
    sm_result_fini(&m.result);
}

/* A result's ack rides with the next job: the poll that brings the result of one job is
 * answered at once with the next queued one, and acks the result; one poll a job. */
static void test_control_a_result_is_acked_with_the_next_job(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    uint64_t id1 = dispatch_one(f, &p, &r);
    uint64_t id2 = submit(f, "h1"); /* queued behind id1 */
    sm_result_msg m = {.job = id1, .attempt = 1};
    sm_result_init(&m.result);
    m.result.ok = true;
    snprintf(p.acks[0], sizeof p.acks[0], "%s", r.commands[0].id);
    p.n_acks = 1;
    p.results = &m;
    p.n_results = 1;
    poll_once(f, &p, &r, &now);
    assert_true(now);
    assert_int_equal(r.n_commands, 1);
    assert_int_equal(r.commands[0].job, id2);
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(r.ack_job[0], id1);
    assert_int_equal(results(f), 1);
    /* No job queued: the result of id2 is held, and a job posted meanwhile answers it. */
    m.job = id2;
    snprintf(p.acks[0], sizeof p.acks[0], "%s", r.commands[0].id);
    poll_once(f, &p, &r, &now);
    assert_false(now);
    assert_int_equal(results(f), 2);
    uint64_t id3 = submit(f, "h1");
    char names[4][SM_NAME_MAX + 1];
    assert_int_equal(sm_control_take_news(f->c, names, 4), 1);
    assert_string_equal(names[0], "h1");
    sm_error err = {0};
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_true(sm_control_news(f->c, "h1", f->now, &r, &err));
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    assert_int_equal(r.n_commands, 1);
    assert_int_equal(r.commands[0].job, id3);
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(r.ack_job[0], id2);
    p.results = NULL;
    p.n_results = 0;
    sm_result_fini(&m.result);
}

static void test_control_assign_is_resent_until_acked(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    uint64_t id = dispatch_one(f, &p, &r);
    poll_once(f, &p, &r, &now); /* the reply was lost: still idle, no ack */
    assert_int_equal(r.n_commands, 1);
    assert_int_equal(r.commands[0].job, id);
    assert_int_equal(job_state(f, id, NULL, 0), SM_JOB_ASSIGNED);
}

/* A transaction that fails takes the control state back with it. Before, a result taken in
 * one ended its job in memory only: resent, it was stored, but the job's row stayed "running"
 * for good and its run counted it done; a job dispatched in one stayed "queued" in the store. */
static void test_control_a_rollback_takes_the_control_state_back_to_the_store(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    sm_error err = {0};
    uint64_t id = dispatch_one(f, &p, &r);
    snprintf(p.acks[0], sizeof p.acks[0], "%s", r.commands[0].id);
    p.n_acks = 1;
    p.state = SM_AGENT_BUSY;
    p.job = id;
    p.attempt = 1;
    poll_once(f, &p, &r, &now);
    assert_int_equal(job_state(f, id, NULL, 0), SM_JOB_RUNNING);

    /* The result comes in a transaction whose commit fails: no ack goes out. */
    sm_result_msg m = {.job = id, .attempt = 1};
    sm_result_init(&m.result);
    m.result.ok = true;
    sm_result_set(&m.result, SM_M_BYTES, 1000);
    p.n_acks = 0;
    p.state = SM_AGENT_IDLE;
    p.results = &m;
    p.n_results = 1;
    f->now += 10;
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_control_poll(f->c, &p, f->now, &r, &now, &err), 0);
    assert_int_equal(sm_control_rollback(&f->c, f->now, &err), 0);
    assert_int_equal(job_state(f, id, NULL, 0), SM_JOB_RUNNING);
    assert_int_equal(results(f), 0);
    /* Sent again, it is stored once and ends its job. */
    f->now += 10;
    poll_once(f, &p, &r, &now);
    assert_int_equal(job_state(f, id, NULL, 0), SM_JOB_DONE);
    assert_int_equal(results(f), 1);
    expire_h1(f, &r);
    assert_int_equal(r.n_acks, 1);

    /* A job dispatched in a failed transaction is queued again, and dispatched by the next
     * poll: the agent never heard of it. */
    uint64_t id2 = submit(f, "h1");
    p.results = NULL;
    p.n_results = 0;
    f->now += 10;
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_control_poll(f->c, &p, f->now, &r, &now, &err), 0);
    assert_int_equal(r.n_commands, 1);
    assert_int_equal(sm_control_rollback(&f->c, f->now, &err), 0);
    assert_int_equal(job_state(f, id2, NULL, 0), SM_JOB_QUEUED);
    f->now += 10;
    poll_once(f, &p, &r, &now);
    assert_int_equal(r.n_commands, 1);
    assert_int_equal(r.commands[0].kind, SM_CMD_ASSIGN);
    assert_int_equal(r.commands[0].job, id2);
    assert_int_equal(r.commands[0].attempt, 1);
    assert_int_equal(job_state(f, id2, NULL, 0), SM_JOB_ASSIGNED);
    /* The counters go on across the rollbacks; the agent is still online, heard just now. */
    sm_control_stats s;
    sm_control_get_stats(f->c, &s);
    assert_int_equal(s.polls, 7);
    sm_agent_status st;
    int64_t seen;
    assert_true(sm_control_agent_live(f->c, "h1", &st, &seen));
    assert_int_not_equal(st, SM_AGENT_LOST);
    assert_int_equal(seen, f->now);
    sm_result_fini(&m.result);
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
    uint64_t id = dispatch_one(f, &p, &r);
    p.state = SM_AGENT_BUSY;
    p.job = id;
    p.attempt = 1;
    poll_once(f, &p, &r, &now);
    sm_error err = {0};
    tick_until(f, f->now + 3 * HOLD); /* exactly 3 x hold: not yet */
    assert_int_equal(job_state(f, id, NULL, 0), SM_JOB_RUNNING);
    f->now += 1;
    assert_int_equal(sm_control_tick(f->c, f->now, &err), 0);
    char reason[256];
    assert_int_equal(job_state(f, id, reason, sizeof reason), SM_JOB_FAILED);
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
    uint64_t id = dispatch_one(f, &p, &r);
    p.state = SM_AGENT_BUSY;
    p.job = id;
    p.attempt = 1;
    poll_once(f, &p, &r, &now);
    const int64_t polled = f->now;
    sm_error err = {0};
    assert_int_equal(sm_control_tick(f->c, f->now, &err), 0);
    tick_until(f, polled + HOLD);
    /* The coordinator is stopped for 20 s (or its wall clock steps 20 s forward): the next
     * tick sees a gap nobody could have polled in. */
    f->now += 20000;
    assert_int_equal(sm_control_tick(f->c, f->now, &err), 0);
    assert_int_equal(control_fixture_status(f, "h1"), SM_AGENT_STATUS_BUSY);
    assert_int_equal(job_state(f, id, NULL, 0), SM_JOB_RUNNING);
    /* Of the gap, hold_ms counts: 2 x hold_ms of silence so far. Silence is still measured
     * while the coordinator runs: 3 x hold_ms is not yet lost, a tick more is. */
    tick_until(f, polled + 20000 + 2 * HOLD);
    assert_int_equal(control_fixture_status(f, "h1"), SM_AGENT_STATUS_BUSY);
    tick_until(f, f->now + 250);
    assert_int_equal(control_fixture_status(f, "h1"), SM_AGENT_LOST);
    char reason[256];
    assert_int_equal(job_state(f, id, reason, sizeof reason), SM_JOB_FAILED);
    assert_non_null(strstr(reason, "agent-lost"));
}

static void test_control_a_backward_clock_step_neither_loses_nor_keeps_an_agent(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    base_poll(&p, "h1", "0123456789abcdef0123456789abcdef");
    poll_once(f, &p, &r, &now);
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
    uint64_t id = dispatch_one(f, &p, &r);
    p.state = SM_AGENT_BUSY;
    p.job = id;
    p.attempt = 1;
    poll_once(f, &p, &r, &now);
    base_poll(&p, "h1", "ffffffffffffffffffffffffffffffff");
    poll_once(f, &p, &r, &now);
    char reason[256];
    assert_int_equal(job_state(f, id, reason, sizeof reason), SM_JOB_FAILED);
    assert_non_null(strstr(reason, "agent-restarted"));
}

static void test_control_a_late_result_of_a_lost_job_is_stored_and_completes_it(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    uint64_t id = dispatch_one(f, &p, &r);
    p.state = SM_AGENT_BUSY;
    p.job = id;
    p.attempt = 1;
    poll_once(f, &p, &r, &now);
    tick_until(f, f->now + 3 * HOLD + 1);
    /* The agent comes back (new process) with the result from its spool. */
    sm_result_msg m = {.job = id, .attempt = 1};
    sm_result_init(&m.result);
    m.result.ok = true;
    base_poll(&p, "h1", "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee");
    p.results = &m;
    p.n_results = 1;
    poll_once(f, &p, &r, &now);
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(results(f), 1);
    assert_int_equal(job_state(f, id, NULL, 0), SM_JOB_DONE);
}

static void test_control_queued_jobs_survive_a_restart_and_dispatch_in_order(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    base_poll(&p, "h1", "0123456789abcdef0123456789abcdef");
    poll_once(f, &p, &r, &now);
    uint64_t a = submit(f, "h1"), b = submit(f, "h1");
    sm_control_close(f->c);
    sm_control_cfg cfg = {.hold_ms = HOLD, .job_grace_ms = 1000};
    sm_error err = {0};
    assert_int_equal(sm_control_open(&f->c, f->st, &cfg, f->now, &err), 0);
    p.have_facts = false;
    poll_once(f, &p, &r, &now);
    assert_int_equal(r.n_commands, 1);
    assert_int_equal(r.commands[0].job, a);
    assert_int_not_equal(a, b);
}

/* ---- matrix runs ---- */

/* Registers h1 and h2 idle, and starts a run of one local stream test (tcp and unix) with
 * `reps` repetitions on both. */
static uint64_t start_run_reps(fixture *f, const char *reps, bool parallel, sm_poll *p1,
                               sm_poll *p2);

static uint64_t start_run(fixture *f, uint32_t reps, bool parallel, sm_poll *p1, sm_poll *p2)
{
    char text[16];
    snprintf(text, sizeof text, "%u", reps);
    return start_run_reps(f, text, parallel, p1, p2);
}

/* A run of stream tcp, unix on h1 and h2 with "repetitions" as given (a number or an object). */
static uint64_t start_run_reps(fixture *f, const char *reps, bool parallel, sm_poll *p1,
                               sm_poll *p2)
{
    sm_poll_reply r;
    bool now;
    base_poll(p1, "h1", "11111111111111111111111111111111");
    base_poll(p2, "h2", "22222222222222222222222222222222");
    poll_once(f, p1, &r, &now);
    poll_once(f, p2, &r, &now);
    p1->have_facts = p2->have_facts = false;
    char json[512];
    snprintf(json, sizeof json,
             "{\"name\":\"r\",\"hosts\":\"all\",\"repetitions\":%s,\"warmup\":0,"
             "\"parallel\":%s,\"tests\":[{\"workload\":\"stream\",\"scope\":\"local\","
             "\"transport\":[\"tcp\",\"unix\"],\"count\":10}]}",
             reps, parallel ? "true" : "false");
    return control_fixture_start(f, json);
}

static sm_run_row run_row(fixture *f, uint64_t id)
{
    sm_run_row r;
    sm_error err = {0};
    assert_int_equal(sm_store_run_get(f->st, id, &r, &err), 0);
    return r;
}

/* The agent's next poll takes the assign, and a poll after it returns the result. */
static uint64_t take_and_finish(fixture *f, sm_poll *p, bool ok, const char *reason)
{
    sm_poll_reply r;
    bool now;
    poll_once(f, p, &r, &now);
    if (r.n_commands != 1 || r.commands[0].kind != SM_CMD_ASSIGN)
        fail_msg("%s got %zu commands", p->agent, r.n_commands);
    sm_result_msg m = {.job = r.commands[0].job, .attempt = r.commands[0].attempt};
    sm_result_init(&m.result);
    m.result.ok = ok;
    snprintf(m.result.reason, sizeof m.result.reason, "%s", reason);
    sm_result_set(&m.result, SM_M_SECONDS, 0.01);
    p->results = &m;
    p->n_results = 1;
    poll_once(f, p, &r, &now);
    p->results = NULL;
    p->n_results = 0;
    return m.job;
}

/* take_and_finish with a given value of the test's headline metric (a stream without framing
 * lines: throughput_MBps), measured while the host was disturbed or not; returns the job's
 * row. */
static sm_job_row take_value_as(fixture *f, sm_poll *p, double mbps, bool disturbed)
{
    sm_poll_reply r;
    bool now;
    poll_once(f, p, &r, &now);
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
    poll_once(f, p, &r, &now);
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
    uint64_t id = start_run_reps(f, "{\"min\":2,\"max\":4,\"ci_rel\":0.05}", true, &p1, &p2);
    sm_run_row r = run_row(f, id);
    assert_int_equal(r.total, 8); /* 2 hosts x 2 variants x min 2 */
    sm_run_row_fini(&r);
    /* h1: tight at once (every sample 100 MB/s): no round is added for it. */
    for (int i = 0; i < 4; i++) {
        sm_job_row j = take_value(f, &p1, 100);
        sm_job_row_fini(&j);
    }
    sm_poll_reply rep;
    bool now;
    poll_once(f, &p1, &rep, &now);
    assert_int_equal(rep.n_commands, 0);
    assert_int_equal(cell_stopped(f, id, 0), SM_REPS_CI);
    assert_int_equal(cell_stopped(f, id, 1), SM_REPS_CI);
    /* h2: tcp 100 then 200 (wide), unix steady. */
    const double h2[] = {100, 100, 200, 100};
    for (int i = 0; i < 4; i++) {
        sm_job_row j = take_value(f, &p2, h2[i]);
        sm_job_row_fini(&j);
    }
    r = run_row(f, id);
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
    r = run_row(f, id);
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
    uint64_t id = start_run_reps(f, "{\"min\":2,\"max\":4,\"ci_rel\":0.05}", true, &p1, &p2);
    const bool disturbed[] = {true, false, false, false}; /* tcp, unix, tcp, unix */
    for (int i = 0; i < 4; i++) {
        sm_job_row j = take_value_as(f, &p1, 100, disturbed[i]);
        sm_job_row_fini(&j);
    }
    sm_run_row r = run_row(f, id);
    assert_int_equal(r.total, 10); /* one more round of h1's group */
    sm_run_row_fini(&r);
    assert_int_equal(cell_stopped(f, id, 0), SM_REPS_NONE);
    for (int i = 0; i < 2; i++) {
        sm_job_row j = take_value(f, &p1, 100);
        sm_job_row_fini(&j);
    }
    assert_int_equal(cell_stopped(f, id, 0), SM_REPS_CI);
    r = run_row(f, id);
    assert_int_equal(r.total, 10);
    sm_run_row_fini(&r);
}

static void test_control_adaptive_rounds_resume_after_a_restart(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id = start_run_reps(f, "{\"min\":2,\"max\":3,\"ci_rel\":0.05}", true, &p1, &p2);
    for (int i = 0; i < 4; i++) {
        sm_job_row j = take_value(f, &p1, 100);
        sm_job_row_fini(&j);
    }
    const double h2[] = {100, 100, 200, 100};
    for (int i = 0; i < 4; i++) {
        sm_job_row j = take_value(f, &p2, h2[i]);
        sm_job_row_fini(&j);
    }
    sm_run_row r = run_row(f, id);
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
    r = run_row(f, id);
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
    sm_run_row r = run_row(f, id);
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
    uint64_t id = start_run(f, 2, true, &p1, &p2);
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
    poll_once(f, &p1, &rep, &now);
    assert_int_equal(rep.n_commands, 0);
    /* h2 is clean: no job beyond its plan, and the run ends done with the rounds counted. */
    for (uint32_t r = 0; r < 2; r++) {
        take_rep(f, &p2, false, 2, r);
        take_rep(f, &p2, false, 3, r);
    }
    sm_run_row r = run_row(f, id);
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
    uint64_t id = start_run(f, 2, true, &p1, &p2);
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
    uint64_t id = start_run_reps(f, "2,\"remeasure\":0", true, &p1, &p2);
    for (uint32_t rep = 0; rep < 2; rep++) {
        take_rep(f, &p1, true, 0, rep);
        take_rep(f, &p1, true, 1, rep);
    }
    assert_int_equal(run_total(f, id), 8);
    sm_poll_reply r;
    bool now;
    poll_once(f, &p1, &r, &now);
    assert_int_equal(r.n_commands, 0);
    assert_int_equal(cell_stopped(f, id, 0), SM_REPS_NONE);
    /* h2 fails every job (each after its retry), none disturbed: remeasuring is on by
     * default, and still no round. */
    for (int i = 0; i < 8; i++)
        take_and_finish(f, &p2, false, "client: time limit of 100 ms reached");
    poll_once(f, &p2, &r, &now);
    assert_int_equal(r.n_commands, 0);
    sm_run_row row = run_row(f, id);
    assert_int_equal(row.state, SM_RUN_FAILED);
    assert_int_equal(row.total, 8);
    assert_int_equal(row.failed, 4);
    sm_run_row_fini(&row);
}

static void test_control_remeasuring_resumes_after_a_restart(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id = start_run_reps(f, "2,\"remeasure\":3", true, &p1, &p2);
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
    uint64_t id =
        start_run_reps(f, "{\"min\":2,\"max\":3,\"ci_rel\":0.05},\"remeasure\":1", true, &p1, &p2);
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

static void test_control_run_jobs_of_a_host_alternate_variants_and_the_run_ends_done(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id = start_run(f, 2, true, &p1, &p2);
    uint32_t cells[4];
    for (int i = 0; i < 4; i++) {
        uint64_t job = take_and_finish(f, &p1, true, "");
        sm_job_row row;
        sm_error err = {0};
        assert_int_equal(sm_store_job_get(f->st, job, &row, &err), 0);
        cells[i] = row.cell;
        sm_job_row_fini(&row);
    }
    /* A B A B on h1. */
    assert_int_not_equal(cells[0], cells[1]);
    assert_int_equal(cells[0], cells[2]);
    assert_int_equal(cells[1], cells[3]);
    sm_run_row r = run_row(f, id);
    assert_int_equal(r.state, SM_RUN_RUNNING); /* h2's four are still queued */
    sm_run_row_fini(&r);
    for (int i = 0; i < 4; i++)
        take_and_finish(f, &p2, true, "");
    r = run_row(f, id);
    assert_int_equal(r.state, SM_RUN_DONE);
    assert_int_equal(r.done, 8);
    assert_int_equal(r.failed, 0);
    sm_run_row_fini(&r);
}

static void
test_control_a_failed_run_job_is_retried_once_at_the_end_then_fails_for_good(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id = start_run(f, 1, true, &p1, &p2);
    uint64_t first = take_and_finish(f, &p1, false, "server: time limit of 100 ms reached");
    uint64_t second = take_and_finish(f, &p1, true, "");
    assert_int_not_equal(first, second); /* the retry went to the back of the queue */
    sm_poll_reply r;
    bool now;
    poll_once(f, &p1, &r, &now);
    assert_int_equal(r.commands[0].job, first);
    assert_int_equal(r.commands[0].attempt, 2);
    sm_result_msg m = {.job = first, .attempt = 2};
    sm_result_init(&m.result);
    m.result.ok = false;
    snprintf(m.result.reason, sizeof m.result.reason, "server: time limit again");
    p1.results = &m;
    p1.n_results = 1;
    poll_once(f, &p1, &r, &now);
    p1.results = NULL;
    p1.n_results = 0;
    char reason[256];
    assert_int_equal(job_state(f, first, reason, sizeof reason), SM_JOB_FAILED);
    assert_non_null(strstr(reason, "again"));
    poll_once(f, &p1, &r, &now);
    assert_int_equal(r.n_commands, 0); /* no third attempt */
    take_and_finish(f, &p2, true, "");
    take_and_finish(f, &p2, true, "");
    sm_run_row row = run_row(f, id);
    assert_int_equal(row.state, SM_RUN_FAILED);
    assert_int_equal(row.done, 3);
    assert_int_equal(row.failed, 1);
    assert_non_null(strstr(row.reason, "1 of 4"));
    sm_run_row_fini(&row);
}

static void test_control_cancel_fails_queued_jobs_and_cancels_the_running_one(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id = start_run(f, 3, true, &p1, &p2);
    sm_poll_reply r;
    bool now;
    poll_once(f, &p1, &r, &now); /* h1 takes its first job */
    uint64_t running = r.commands[0].job;
    sm_error err = {0};
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_control_run_cancel(f->c, id, f->now, &err), 0);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    sm_run_row row = run_row(f, id);
    assert_int_equal(row.state, SM_RUN_CANCELLED);
    assert_int_equal(row.failed, 12);
    sm_run_row_fini(&row);
    char reason[256];
    assert_int_equal(job_state(f, running, reason, sizeof reason), SM_JOB_FAILED);
    assert_non_null(strstr(reason, "cancelled"));
    poll_once(f, &p1, &r, &now);
    assert_int_equal(r.n_commands, 1);
    assert_int_equal(r.commands[0].kind, SM_CMD_CANCEL);
    assert_int_equal(r.commands[0].job, running);
    poll_once(f, &p2, &r, &now);
    assert_int_equal(r.n_commands, 0); /* nothing left to run */
    assert_int_equal(sm_control_run_cancel(f->c, id, f->now, &err), SM_EINVAL);
}

static void test_control_a_lost_host_fails_its_queued_run_jobs_and_the_run_ends(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t id = start_run(f, 1, true, &p1, &p2);
    take_and_finish(f, &p1, true, "");
    take_and_finish(f, &p1, true, "");
    sm_error err = {0};
    tick_until(f, f->now + 3 * HOLD); /* h2 never polls again */
    f->now += 1;
    sm_poll_reply r;
    bool now;
    poll_once(f, &p1, &r, &now); /* h1 stays alive */
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_control_tick(f->c, f->now, &err), 0);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    sm_run_row row = run_row(f, id);
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
    uint64_t id = dispatch_one(f, &p, &r);
    p.state = SM_AGENT_BUSY;
    p.job = id;
    p.attempt = 1;
    poll_once(f, &p, &r, &now);
    assert_int_equal(job_state(f, id, NULL, 0), SM_JOB_RUNNING);
    /* The wall clock steps an hour forward (an NTP correction) between two ticks 250 ms apart:
     * the job has run 250 ms, not an hour, and its agent was silent as long. */
    f->now += 3600 * 1000;
    tick_both(f, 250);
    assert_int_equal(job_state(f, id, NULL, 0), SM_JOB_RUNNING);
    assert_int_equal(control_fixture_status(f, "h1"), SM_AGENT_STATUS_BUSY);
    poll_once(f, &p, &r, &now);
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
    uint64_t id = start_run(f, 1, true, p1, p2);
    take_and_finish(f, p1, true, "");
    take_and_finish(f, p1, true, "");
    sm_poll_reply r;
    bool now;
    /* h1 keeps polling; h2 does not, and is lost after 3 x hold_ms: the grace starts then. */
    for (int k = 0; k < 40 && control_fixture_status(f, "h2") != SM_AGENT_LOST; k++) {
        tick_both(f, 250);
        poll_once(f, p1, &r, &now);
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
    sm_run_row row = run_row(f, id);
    assert_int_equal(row.state, SM_RUN_RUNNING);
    assert_int_equal(row.failed, 0);
    sm_run_row_fini(&row);
    /* h2 is back after 5 s of its 10 s grace: its two jobs run and the run ends done. */
    take_and_finish(f, &p2, true, "");
    take_and_finish(f, &p2, true, "");
    assert_int_equal(control_fixture_status(f, "h2"), SM_AGENT_ONLINE);
    row = run_row(f, id);
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
    sm_run_row row = run_row(f, id);
    assert_int_equal(row.state, SM_RUN_RUNNING);
    sm_run_row_fini(&row);
    tick_both(f, 750);
    row = run_row(f, id);
    assert_int_equal(row.state, SM_RUN_FAILED);
    assert_int_equal(row.done, 2);
    assert_int_equal(row.failed, 2);
    sm_run_row_fini(&row);
    char reason[256];
    assert_int_equal(job_state(f, 3, reason, sizeof reason), SM_JOB_FAILED);
    assert_string_equal(reason, "agent-lost: the host was lost before the job ran and did not "
                                "come back within 10000 ms");
}

static void test_control_a_late_result_completes_a_job_whose_retry_waits_for_its_host(void **state)
{
    fixture *f = *state;
    reopen(f, (sm_control_cfg){.hold_ms = HOLD, .job_grace_ms = 1000, .lost_grace_ms = 60000});
    sm_poll p1, p2;
    uint64_t run = start_run(f, 1, true, &p1, &p2);
    sm_poll_reply r;
    bool now;
    poll_once(f, &p1, &r, &now);
    assert_int_equal(r.n_commands, 1);
    const uint64_t job = r.commands[0].job;
    p1.state = SM_AGENT_BUSY;
    p1.job = job;
    p1.attempt = 1;
    poll_once(f, &p1, &r, &now);
    /* h1's link is cut: it is lost, and the job it ran waits as its retry (attempt 2). */
    for (int k = 0; k < 40 && control_fixture_status(f, "h1") != SM_AGENT_LOST; k++) {
        tick_both(f, 250);
        poll_once(f, &p2, &r, &now);
    }
    assert_int_equal(control_fixture_status(f, "h1"), SM_AGENT_LOST);
    char reason[256];
    assert_int_equal(job_state(f, job, reason, sizeof reason), SM_JOB_QUEUED);
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
    poll_once(f, &p1, &r, &now);
    p1.results = NULL;
    p1.n_results = 0;
    assert_int_equal(job_state(f, job, NULL, 0), SM_JOB_DONE);
    assert_int_equal(r.n_acks, 1);
    /* Its retry is not run: the host's next job is another one. */
    for (size_t i = 0; i < r.n_commands; i++)
        assert_true(r.commands[i].job != job);
    sm_job_row row;
    sm_error err = {0};
    assert_int_equal(sm_store_job_get(f->st, job, &row, &err), 0);
    assert_int_equal(row.attempt, 1);
    sm_job_row_fini(&row);
    sm_run_row rr = run_row(f, run);
    assert_int_equal(rr.done, 1);
    assert_int_equal(rr.failed, 0);
    sm_run_row_fini(&rr);
}

static void test_control_parallel_false_holds_other_hosts_until_the_running_job_ends(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    start_run(f, 2, false, &p1, &p2);
    sm_poll_reply r;
    bool now;
    poll_once(f, &p1, &r, &now);
    assert_int_equal(r.n_commands, 1);
    uint64_t job = r.commands[0].job;
    poll_once(f, &p2, &r, &now);
    assert_int_equal(r.n_commands, 0); /* h1 runs: h2 waits */
    /* h1's result opens the gate to the run's next job in its order: h1's other variant. */
    sm_result_msg m = {.job = job, .attempt = 1};
    sm_result_init(&m.result);
    m.result.ok = true;
    p1.results = &m;
    p1.n_results = 1;
    poll_once(f, &p1, &r, &now);
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(r.n_commands, 1);
    m.job = r.commands[0].job;
    poll_once(f, &p2, &r, &now);
    assert_int_equal(r.n_commands, 0); /* still one at a time */
    /* Repetition 0 of h1 is done: h1 asks first, but h2's repetition 0 comes before h1's
     * repetition 1, so the hosts take turns and a passing disturbance cannot fall on one
     * host's whole cell. */
    poll_once(f, &p1, &r, &now);
    p1.results = NULL;
    p1.n_results = 0;
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(r.n_commands, 0);
    /* h2's held poll is answered now, not at the end of its hold. */
    char names[8][SM_NAME_MAX + 1];
    size_t n = sm_control_take_news(f->c, names, 8);
    bool told = false;
    for (size_t i = 0; i < n; i++)
        told |= strcmp(names[i], "h2") == 0;
    assert_true(told);
    poll_once(f, &p2, &r, &now);
    assert_int_equal(r.n_commands, 1);
    assert_int_equal(r.commands[0].kind, SM_CMD_ASSIGN);
}

/* ---- hosts that share one machine ---- */

#define BOOT_A  "4af93bb9-6eb3-4520-8a34-0f21e7f76433"
#define BOOT_B  "9d0c2e51-1f7a-4c3b-9e21-5a6b7c8d9e0f"
#define MACHINE "3d1219c7c4c5404aaa1f6d2a48adfda4"

/* Registers an idle agent whose facts say which machine it runs on ("" unknown). */
static void register_on(fixture *f, sm_poll *p, const char *name, const char *boot_id,
                        const char *machine_id)
{
    sm_poll_reply r;
    bool now;
    char boot[SM_BOOT_HEX + 1];
    snprintf(boot, sizeof boot, "%032zx", strlen(name) * 0x1111u + (unsigned char)name[1]);
    base_poll(p, name, boot);
    snprintf(p->facts.boot_id, sizeof p->facts.boot_id, "%s", boot_id);
    snprintf(p->facts.machine_id, sizeof p->facts.machine_id, "%s", machine_id);
    poll_once(f, p, &r, &now);
    p->have_facts = false;
}

/* Starts a run of one local stream test (tcp, unix; 2 repetitions) over every host;
 * `parallel` is the spec's member ("" leaves it out). */
static uint64_t start_spec(fixture *f, const char *parallel)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"name\":\"lab\",\"hosts\":\"all\",\"repetitions\":2,\"warmup\":0,%s"
             "\"tests\":[{\"workload\":\"stream\",\"scope\":\"local\","
             "\"transport\":[\"tcp\",\"unix\"],\"count\":10}]}",
             parallel);
    return control_fixture_start(f, json);
}

/* How many of the agents' polls come back with a job to run. */
static size_t assigned(fixture *f, sm_poll *p, size_t n)
{
    size_t got = 0;
    for (size_t i = 0; i < n; i++) {
        sm_poll_reply r;
        bool now;
        poll_once(f, &p[i], &r, &now);
        got += r.n_commands == 1 && r.commands[0].kind == SM_CMD_ASSIGN;
    }
    return got;
}

static void test_control_hosts_of_one_machine_run_one_job_at_a_time_and_say_why(void **state)
{
    fixture *f = *state;
    sm_poll p[3];
    register_on(f, &p[0], "h1", BOOT_A, MACHINE);
    register_on(f, &p[1], "h2", BOOT_A, MACHINE);
    register_on(f, &p[2], "h3", BOOT_A, MACHINE);
    uint64_t id = start_spec(f, "");
    sm_run_row row = run_row(f, id);
    assert_false(row.parallel);
    assert_string_equal(row.parallel_note, "h1, h2, h3 share one machine (boot id 4af93bb9)");
    sm_run_row_fini(&row);
    assert_int_equal(assigned(f, p, 3), 1); /* the other two wait for it */

    /* The decision is the run's: a restarted coordinator keeps it. */
    sm_control_close(f->c);
    sm_control_cfg cfg = {.hold_ms = HOLD, .job_grace_ms = 1000};
    sm_error err = {0};
    assert_int_equal(sm_control_open(&f->c, f->st, &cfg, f->now, &err), 0);
    assert_int_equal(assigned(f, p, 3), 1); /* h1's job, still its current one */
}

static void test_control_parallel_true_on_one_machine_runs_side_by_side_with_a_warning(void **state)
{
    fixture *f = *state;
    sm_poll p[2];
    register_on(f, &p[0], "h1", BOOT_A, MACHINE);
    register_on(f, &p[1], "h2", BOOT_A, MACHINE);
    uint64_t id = start_spec(f, "\"parallel\":true,");
    sm_run_row row = run_row(f, id);
    assert_true(row.parallel);
    assert_string_equal(row.parallel_note,
                        "h1, h2 share one machine (boot id 4af93bb9): their jobs run side by side "
                        "on its CPUs, as the spec asks (\"parallel\": true)");
    sm_run_row_fini(&row);
    assert_int_equal(assigned(f, p, 2), 2);
}

static void test_control_parallel_false_says_the_spec_asked(void **state)
{
    fixture *f = *state;
    sm_poll p[2];
    register_on(f, &p[0], "h1", BOOT_A, "");
    register_on(f, &p[1], "h2", BOOT_B, "");
    uint64_t id = start_spec(f, "\"parallel\":false,");
    sm_run_row row = run_row(f, id);
    assert_false(row.parallel);
    assert_string_equal(row.parallel_note, "the spec says \"parallel\": false");
    sm_run_row_fini(&row);
    assert_int_equal(assigned(f, p, 2), 1);
}

static void test_control_hosts_of_different_machines_stay_parallel(void **state)
{
    fixture *f = *state;
    sm_poll p[3];
    /* A cloned image repeats its machine id: different boot ids are still two machines. */
    register_on(f, &p[0], "h1", BOOT_A, MACHINE);
    register_on(f, &p[1], "h2", BOOT_B, MACHINE);
    register_on(f, &p[2], "h3", "", ""); /* an agent that does not say */
    uint64_t id = start_spec(f, "");
    sm_run_row row = run_row(f, id);
    assert_true(row.parallel);
    assert_string_equal(row.parallel_note, "");
    sm_run_row_fini(&row);
    assert_int_equal(assigned(f, p, 3), 3);
}

static void test_control_without_boot_ids_the_machine_id_tells(void **state)
{
    fixture *f = *state;
    sm_poll p[3];
    register_on(f, &p[0], "h1", "", MACHINE);
    register_on(f, &p[1], "h2", BOOT_B, "");
    register_on(f, &p[2], "h3", "", MACHINE);
    uint64_t id = start_spec(f, "");
    sm_run_row row = run_row(f, id);
    assert_false(row.parallel);
    assert_string_equal(row.parallel_note, "h1, h3 share one machine (machine id 3d1219c7)");
    sm_run_row_fini(&row);
}

/* The machines are those of the run's hosts, as the facts say when the run starts. */
static void test_control_only_the_runs_hosts_and_their_facts_then_count(void **state)
{
    fixture *f = *state;
    sm_poll p[3];
    register_on(f, &p[0], "h1", BOOT_A, "");
    register_on(f, &p[1], "h2", BOOT_B, "");
    register_on(f, &p[2], "h3", BOOT_A, "");
    char json[512];
    snprintf(json, sizeof json,
             "{\"name\":\"two\",\"hosts\":[\"h1\",\"h2\"],\"tests\":[{\"workload\":\"stream\","
             "\"scope\":\"local\",\"transport\":\"tcp\",\"count\":10}]}");
    sm_spec spec;
    sm_error err = {0};
    assert_int_equal(sm_spec_decode(json, strlen(json), &spec, &err), 0);
    uint64_t id = 0;
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_control_run_start(f->c, json, &spec, f->now, &id, &err), 0);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    sm_spec_fini(&spec);
    sm_run_row row = run_row(f, id);
    assert_true(row.parallel); /* h3 shares h1's machine but is not in the run */
    sm_run_row_fini(&row);

    /* h2 restarts on h1's machine: its new facts count for the next run. */
    sm_poll_reply r;
    bool now;
    snprintf(p[1].boot, sizeof p[1].boot, "%s", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
    p[1].have_facts = true;
    snprintf(p[1].facts.boot_id, sizeof p[1].facts.boot_id, "%s", BOOT_A);
    poll_once(f, &p[1], &r, &now);
    assert_int_equal(sm_spec_decode(json, strlen(json), &spec, &err), 0);
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_control_run_start(f->c, json, &spec, f->now, &id, &err), 0);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    sm_spec_fini(&spec);
    row = run_row(f, id);
    assert_false(row.parallel);
    assert_string_equal(row.parallel_note, "h1, h2 share one machine (boot id 4af93bb9)");
    sm_run_row_fini(&row);
}

static void test_control_sharing_note_names_eight_hosts_a_machine_and_fits_its_room(void **state)
{
    (void)state;
    char names[40][8];
    sm_sharing_host hosts[40];
    for (size_t i = 0; i < 40; i++) {
        snprintf(names[i], sizeof names[i], "h%zu", i + 1);
        /* h1..h20 on machine A, h21..h39 on B, h40 alone on a machine of its own. */
        hosts[i] = (sm_sharing_host){names[i], i < 20 ? BOOT_A : i < 39 ? BOOT_B : "ab-12", NULL};
    }
    size_t sharing = 0;
    char note[512];
    sm_error err = {0};
    assert_int_equal(sm_sharing_find(hosts, 40, &sharing, note, sizeof note, &err), 0);
    assert_int_equal(sharing, 39);
    assert_string_equal(note, "h1, h2, h3, h4, h5, h6, h7, h8 and 12 more share one machine "
                              "(boot id 4af93bb9); h21, h22, h23, h24, h25, h26, h27, h28 and 11 "
                              "more share one machine (boot id 9d0c2e51)");
    char small[40];
    assert_int_equal(sm_sharing_find(hosts, 40, &sharing, small, sizeof small, &err), 0);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_string_equal(small + sizeof small - 4, "...");
    assert_int_equal(sm_sharing_find(hosts + 39, 1, &sharing, note, sizeof note, &err), 0);
    assert_int_equal(sharing, 0);
    assert_string_equal(note, "");
    assert_int_equal(sm_sharing_find(NULL, 0, &sharing, note, sizeof note, &err), 0);
    assert_int_equal(sharing, 0);
}

/* ---- property: the real dispatch never double-books a host and always finishes ---- */

typedef struct sim_agent {
    sm_poll p;
    uint64_t job; /* the job it holds, 0 when none */
    uint32_t attempt;
    sm_role role;
    int steps_left; /* steps until its side is done; -1 while a client waits for start */
    bool ready_sent;
    char acks[4][SM_CMD_ID_MAX + 1];
    size_t n_acks;
    bool have_result;
    sm_result_msg result;
} sim_agent;

static uint64_t prng(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void sim_take(sim_agent *s, const sm_command *cmd, uint64_t *rng)
{
    if (cmd->kind == SM_CMD_CANCEL)
        return;
    if (s->job && (s->job != cmd->job || s->attempt != cmd->attempt))
        fail_msg("%s got job %llu while it holds job %llu: a host in two jobs", s->p.agent,
                 (unsigned long long)cmd->job, (unsigned long long)s->job);
    if (cmd->kind == SM_CMD_START && cmd->port == 0)
        fail_msg("%s was told to start before its server was ready", s->p.agent);
    if (s->n_acks < 4)
        snprintf(s->acks[s->n_acks++], sizeof s->acks[0], "%s", cmd->id);
    if (s->job)
        return; /* a resend of what it already holds */
    s->job = cmd->job;
    s->attempt = cmd->attempt;
    s->role = cmd->kind == SM_CMD_ASSIGN    ? SM_ROLE_BOTH
              : cmd->kind == SM_CMD_PREPARE ? SM_ROLE_SERVER
                                            : SM_ROLE_CLIENT;
    s->steps_left = 1 + (int)(prng(rng) % 4);
    s->ready_sent = false;
}

/* One poll of one simulated agent, and what it does with the reply. */
static void sim_poll(fixture *f, sim_agent *s, uint64_t *rng)
{
    sm_poll *p = &s->p;
    p->n_acks = s->n_acks;
    memcpy(p->acks, s->acks, sizeof s->acks);
    p->n_ready = 0;
    p->n_results = 0;
    p->results = NULL;
    p->state = s->job ? SM_AGENT_BUSY : SM_AGENT_IDLE;
    p->job = s->job;
    p->attempt = s->attempt;
    if (s->job && s->role == SM_ROLE_SERVER && !s->ready_sent) {
        p->ready[0] = (sm_ready){s->job, s->attempt, 40000, ""};
        p->n_ready = 1;
        s->ready_sent = true;
    }
    if (s->have_result) {
        p->results = &s->result;
        p->n_results = 1;
    }
    sm_poll_reply r;
    bool now;
    poll_once(f, p, &r, &now);
    s->n_acks = 0;
    if (s->have_result && r.n_acks)
        s->have_result = false;
    for (size_t i = 0; i < r.n_commands; i++)
        sim_take(s, &r.commands[i], rng);
    /* Time passes for a job in progress; a finished side becomes a result to deliver. A
     * server cannot finish before it has said it listens (its client could not connect). */
    if (s->job && (s->role != SM_ROLE_SERVER || s->ready_sent) && --s->steps_left <= 0 &&
        !s->have_result) {
        s->result = (sm_result_msg){.job = s->job, .attempt = s->attempt, .role = s->role};
        sm_result_init(&s->result.result);
        s->result.result.ok = true;
        sm_result_set(&s->result.result, SM_M_BYTES, 1000);
        sm_result_set(&s->result.result, SM_M_SECONDS, 0.01);
        s->have_result = true;
        s->job = 0;
    }
}

static void test_control_dispatch_never_double_books_and_every_run_ends(void **state)
{
    fixture *f0 = *state;
    uint64_t rng = 0x2545f4914f6cdd1dull;
    for (int round = 0; round < 40; round++) {
        /* A fresh store and control for every case. */
        sm_control_close(f0->c);
        sm_store_close(f0->st);
        char db[128];
        snprintf(db, sizeof db, "%s/p%d.db", f0->dir, round);
        sm_error err = {0};
        assert_int_equal(sm_store_open(&f0->st, db, &err), 0);
        sm_control_cfg cfg = {.hold_ms = HOLD, .job_grace_ms = 1000};
        assert_int_equal(sm_control_open(&f0->c, f0->st, &cfg, f0->now, &err), 0);

        const size_t n = 2 + prng(&rng) % 4;
        sim_agent sims[6];
        memset(sims, 0, sizeof sims);
        for (size_t i = 0; i < n; i++) {
            char name[8], boot[33];
            snprintf(name, sizeof name, "h%zu", i + 1);
            snprintf(boot, sizeof boot, "%032zx", i + 1);
            base_poll(&sims[i].p, name, boot);
            snprintf(sims[i].p.data_addr, sizeof sims[i].p.data_addr, "10.0.0.%zu", i + 1);
            sm_poll_reply r;
            bool now;
            poll_once(f0, &sims[i].p, &r, &now);
            sims[i].p.have_facts = false;
        }
        const bool local = prng(&rng) % 2, pair = !local || prng(&rng) % 2;
        const bool parallel = prng(&rng) % 2;
        char json[1024];
        int len = snprintf(json, sizeof json,
                           "{\"name\":\"p\",\"hosts\":\"all\",\"pairs\":\"%s\","
                           "\"repetitions\":%u,\"warmup\":%u,\"parallel\":%s,\"tests\":[",
                           prng(&rng) % 2 ? "mesh" : "ring", (unsigned)(1 + prng(&rng) % 3),
                           (unsigned)(prng(&rng) % 2), parallel ? "true" : "false");
        if (local)
            len += snprintf(json + len, sizeof json - (size_t)len,
                            "{\"workload\":\"stream\",\"scope\":\"local\","
                            "\"transport\":[\"tcp\",\"unix\"],\"count\":10}%s",
                            pair ? "," : "");
        if (pair)
            len += snprintf(json + len, sizeof json - (size_t)len,
                            "{\"workload\":\"rr\",\"scope\":\"pair\","
                            "\"transport\":\"tcp\",\"count\":10}");
        snprintf(json + len, sizeof json - (size_t)len, "]}");
        sm_spec spec;
        if (sm_spec_decode(json, strlen(json), &spec, &err) != 0)
            fail_msg("spec %s: %s", json, err.msg);
        uint64_t id = 0;
        assert_int_equal(sm_store_begin(f0->st, &err), 0);
        if (sm_control_run_start(f0->c, json, &spec, f0->now, &id, &err))
            fail_msg("run %s: %s", json, err.msg);
        assert_int_equal(sm_store_commit(f0->st, &err), 0);
        sm_spec_fini(&spec);

        int step = 0;
        for (; step < 20000; step++) {
            sim_poll(f0, &sims[prng(&rng) % n], &rng);
            if (step % 50 == 0) {
                sm_run_row row;
                assert_int_equal(sm_store_run_get(f0->st, id, &row, &err), 0);
                const bool ended = row.state != SM_RUN_RUNNING;
                if (ended && row.state != SM_RUN_DONE)
                    fail_msg("case %d (%s) ended %s: %s", round, json, sm_run_state_name(row.state),
                             row.reason);
                sm_run_row_fini(&row);
                if (ended)
                    break;
            }
        }
        if (step == 20000) {
            sm_job_row *jobs = NULL;
            size_t nj = 0;
            char where[512] = "";
            size_t used = 0;
            assert_int_equal(sm_store_run_jobs(f0->st, id, &jobs, &nj, &err), 0);
            for (size_t i = 0; i < nj && used < sizeof where - 64; i++)
                if (jobs[i].state != SM_JOB_DONE)
                    used += (size_t)snprintf(where + used, sizeof where - used, " %llu:%s->%s:%s",
                                             (unsigned long long)jobs[i].id, jobs[i].host,
                                             jobs[i].peer, sm_job_state_name(jobs[i].state));
            sm_store_jobs_free(jobs, nj);
            fail_msg("case %d (%s) did not finish in 20000 polls; stuck:%s", round, json, where);
        }
        for (size_t i = 0; i < n; i++)
            if (sims[i].have_result)
                sm_result_fini(&sims[i].result.result);
    }
}

/* ---- a coordinator restart during a pair job ---- */

/* Registers h1 and h2 (with data addresses) idle and starts a pair run of stream tcp, one
 * repetition on the mesh of the two: two pair jobs, one at a time since both need both. */
static uint64_t start_pair_run(fixture *f, sm_poll *p1, sm_poll *p2)
{
    sm_poll_reply r;
    bool now;
    base_poll(p1, "h1", "11111111111111111111111111111111");
    base_poll(p2, "h2", "22222222222222222222222222222222");
    snprintf(p1->data_addr, sizeof p1->data_addr, "10.0.0.1");
    snprintf(p2->data_addr, sizeof p2->data_addr, "10.0.0.2");
    poll_once(f, p1, &r, &now);
    poll_once(f, p2, &r, &now);
    p1->have_facts = p2->have_facts = false;
    const char *json = "{\"name\":\"e2r\",\"hosts\":[\"h1\",\"h2\"],\"pairs\":\"mesh\","
                       "\"repetitions\":1,\"warmup\":0,\"tests\":[{\"workload\":\"stream\","
                       "\"scope\":\"pair\",\"transport\":\"tcp\",\"duration_ms\":2000}]}";
    return control_fixture_start(f, json);
}

/* Both idle agents poll until one is told to prepare, the server says it listens, and the
 * client is told to start; both ack and report busy. *server is the index of the server. */
static void pair_handshake(fixture *f, sm_poll *ps[2], uint64_t *job, uint32_t *attempt,
                           int *server)
{
    sm_poll_reply r;
    bool now;
    *server = -1;
    for (int round = 0; round < 3 && *server < 0; round++)
        for (int i = 0; i < 2 && *server < 0; i++) {
            ps[i]->state = SM_AGENT_IDLE;
            ps[i]->n_acks = 0;
            ps[i]->n_ready = 0;
            poll_once(f, ps[i], &r, &now);
            for (size_t k = 0; k < r.n_commands; k++)
                if (r.commands[k].kind == SM_CMD_PREPARE) {
                    /* The server learns its client's address: it accepts that one alone. */
                    assert_string_equal(r.commands[k].addr, ps[1 - i]->data_addr);
                    *server = i;
                    *job = r.commands[k].job;
                    *attempt = r.commands[k].attempt;
                    snprintf(ps[i]->acks[0], sizeof ps[i]->acks[0], "%s", r.commands[k].id);
                }
        }
    if (*server < 0)
        fail_msg("no side was told to prepare");
    sm_poll *s = ps[*server], *cl = ps[1 - *server];
    s->n_acks = 1;
    s->state = SM_AGENT_BUSY;
    s->job = *job;
    s->attempt = *attempt;
    s->ready[0] = (sm_ready){*job, *attempt, 40000, ""};
    s->n_ready = 1;
    poll_once(f, s, &r, &now);
    s->n_acks = 0;
    s->n_ready = 0;
    cl->state = SM_AGENT_IDLE;
    poll_once(f, cl, &r, &now);
    assert_int_equal(r.n_commands, 1);
    assert_int_equal(r.commands[0].kind, SM_CMD_START);
    assert_int_equal(r.commands[0].job, *job);
    assert_int_equal(r.commands[0].attempt, *attempt);
    snprintf(cl->acks[0], sizeof cl->acks[0], "%s", r.commands[0].id);
    cl->n_acks = 1;
    cl->state = SM_AGENT_BUSY;
    cl->job = *job;
    cl->attempt = *attempt;
    poll_once(f, cl, &r, &now);
    cl->n_acks = 0;
    assert_int_equal(job_state(f, *job, NULL, 0), SM_JOB_RUNNING);
}

/* One side's result arrives with an idle poll; it is acked. */
static void deliver_side(fixture *f, sm_poll *p, uint64_t job, uint32_t attempt, sm_role role)
{
    sm_poll_reply r;
    bool now;
    sm_result_msg m = {.job = job, .attempt = attempt, .role = role};
    sm_result_init(&m.result);
    m.result.ok = true;
    sm_result_set(&m.result, SM_M_BYTES, 1000);
    sm_result_set(&m.result, SM_M_SECONDS, 0.01);
    p->state = SM_AGENT_IDLE;
    p->job = 0;
    p->attempt = 0;
    p->results = &m;
    p->n_results = 1;
    poll_once(f, p, &r, &now);
    p->results = NULL;
    p->n_results = 0;
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(r.ack_job[0], job);
    assert_int_equal(r.ack_attempt[0], attempt);
}

static void test_control_a_pair_job_in_flight_at_a_restart_runs_again_as_a_new_attempt(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    sm_poll *ps[2] = {&p1, &p2};
    uint64_t run = start_pair_run(f, &p1, &p2);
    uint64_t job;
    uint32_t attempt;
    int server;
    pair_handshake(f, ps, &job, &attempt, &server);
    assert_int_equal(attempt, 1);

    /* The coordinator restarts while both sides run the job. */
    sm_control_close(f->c);
    sm_control_cfg cfg = {.hold_ms = HOLD, .job_grace_ms = 1000};
    sm_error err = {0};
    assert_int_equal(sm_control_open(&f->c, f->st, &cfg, f->now, &err), 0);
    sm_poll_reply r;
    bool now;
    poll_once(f, &p1, &r, &now); /* both still busy with attempt 1 */
    poll_once(f, &p2, &r, &now);
    assert_int_equal(r.n_commands, 0);

    /* Both sides deliver attempt 1: its handshake was lost with the old process, so the job
     * runs again; it must not be freed while it still sits in the two queues. */
    deliver_side(f, ps[server], job, 1, SM_ROLE_SERVER);
    deliver_side(f, ps[1 - server], job, 1, SM_ROLE_CLIENT);
    assert_int_equal(results(f), 0);

    /* It runs again as attempt 2, whose sides are not mistaken for attempt 1's. */
    uint64_t again;
    uint32_t attempt2;
    pair_handshake(f, ps, &again, &attempt2, &server);
    assert_int_equal(again, job);
    assert_int_equal(attempt2, 2);
    deliver_side(f, ps[server], job, 2, SM_ROLE_SERVER);
    deliver_side(f, ps[1 - server], job, 2, SM_ROLE_CLIENT);
    assert_int_equal(job_state(f, job, NULL, 0), SM_JOB_DONE);
    assert_int_equal(results(f), 1);
    char *json = NULL;
    assert_int_equal(sm_store_result_get(f->st, job, 2, &json, &err), 0);
    assert_non_null(json);
    free(json);
    assert_int_equal(sm_store_result_get(f->st, job, 1, &json, &err), 0);
    assert_null(json);

    /* The run goes on with its other job and ends done. */
    uint64_t next;
    uint32_t attempt3;
    pair_handshake(f, ps, &next, &attempt3, &server);
    assert_int_not_equal(next, job);
    assert_int_equal(attempt3, 1);
    deliver_side(f, ps[server], next, 1, SM_ROLE_SERVER);
    deliver_side(f, ps[1 - server], next, 1, SM_ROLE_CLIENT);
    assert_int_equal(results(f), 2);
    sm_run_row row = run_row(f, run);
    assert_int_equal(row.state, SM_RUN_DONE);
    assert_int_equal(row.done, 2);
    assert_int_equal(row.failed, 0);
    sm_run_row_fini(&row);
}

static void test_control_a_pair_side_from_another_host_is_acked_but_never_stored(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2, p3;
    sm_poll *ps[2] = {&p1, &p2};
    start_pair_run(f, &p1, &p2);
    uint64_t job;
    uint32_t attempt;
    int server;
    pair_handshake(f, ps, &job, &attempt, &server);
    sm_poll_reply r;
    bool now;
    base_poll(&p3, "h3", "33333333333333333333333333333333");
    poll_once(f, &p3, &r, &now);
    p3.have_facts = false;
    /* h3 holds the fleet key but ran neither side: each is acked, so that it stops sending
     * them, and neither is stored nor ends the job. */
    deliver_side(f, &p3, job, attempt, SM_ROLE_SERVER);
    deliver_side(f, &p3, job, attempt, SM_ROLE_CLIENT);
    sm_control_stats st;
    sm_control_get_stats(f->c, &st);
    assert_int_equal(st.results_wrong_host, 2);
    char *json = NULL;
    sm_error err = {0};
    assert_int_equal(sm_store_side_get(f->st, job, attempt, "server", &json, &err), 0);
    assert_null(json);
    assert_int_equal(sm_store_side_get(f->st, job, attempt, "client", &json, &err), 0);
    assert_null(json);
    assert_int_equal(job_state(f, job, NULL, 0), SM_JOB_RUNNING);
    /* Its own hosts complete it. */
    deliver_side(f, ps[server], job, attempt, SM_ROLE_SERVER);
    deliver_side(f, ps[1 - server], job, attempt, SM_ROLE_CLIENT);
    assert_int_equal(job_state(f, job, NULL, 0), SM_JOB_DONE);
    assert_int_equal(results(f), 1);
    sm_control_get_stats(f->c, &st);
    assert_int_equal(st.results_wrong_host, 2);
}

static void test_control_a_local_result_from_another_host_is_acked_but_never_stored(void **state)
{
    fixture *f = *state;
    sm_poll p, q;
    sm_poll_reply r;
    bool now;
    uint64_t id = dispatch_one(f, &p, &r);
    base_poll(&q, "h9", "99999999999999999999999999999999");
    sm_result_msg m = {.job = id, .attempt = 1, .role = SM_ROLE_BOTH};
    sm_result_init(&m.result);
    m.result.ok = true;
    sm_result_set(&m.result, SM_M_THROUGHPUT, 99999);
    q.results = &m;
    q.n_results = 1;
    poll_once(f, &q, &r, &now);
    assert_false(now);
    assert_int_equal(results(f), 0);
    assert_int_equal(job_state(f, id, NULL, 0), SM_JOB_ASSIGNED);
    /* The held poll's answer acks it, so that h9 stops sending it, though it is not stored and
     * its job is still h1's to finish. */
    expire_of(f, "h9", &r);
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(r.ack_job[0], id);
    sm_control_stats st;
    sm_control_get_stats(f->c, &st);
    assert_int_equal(st.results_wrong_host, 1);
    assert_int_equal(st.results_stored, 0);
    sm_result_fini(&m.result);
}

static void
test_control_admit_refuses_a_reserved_name_a_bad_data_addr_and_agents_over_the_cap(void **state)
{
    fixture *f = *state;
    sm_control_close(f->c);
    sm_control_cfg cfg = {.hold_ms = HOLD, .job_grace_ms = 1000, .max_agents = 1};
    sm_error err = {0};
    assert_int_equal(sm_control_open(&f->c, f->st, &cfg, f->now, &err), 0);
    sm_poll p;
    sm_poll_reply r;
    bool now;
    base_poll(&p, "coordinator", "0123456789abcdef0123456789abcdef");
    assert_false(sm_control_admit(f->c, &p, f->now));
    base_poll(&p, "h1", "0123456789abcdef0123456789abcdef");
    static const char *const refused[] = {
        "127.0.0.1", "::1",     "169.254.0.5", "fe80::1",
        "224.0.0.1", "0.0.0.0", "::",          "::ffff:127.0.0.2"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        snprintf(p.data_addr, sizeof p.data_addr, "%s", refused[i]);
        if (sm_control_admit(f->c, &p, f->now))
            fail_msg("data_addr %s was admitted", refused[i]);
    }
    snprintf(p.data_addr, sizeof p.data_addr, "10.213.0.11");
    assert_true(sm_control_admit(f->c, &p, f->now));
    poll_once(f, &p, &r, &now);
    /* The cap is one agent: a new name is refused, the known one keeps polling. */
    sm_poll q;
    base_poll(&q, "h2", "0123456789abcdef0123456789abcdef");
    assert_false(sm_control_admit(f->c, &q, f->now));
    assert_true(sm_control_admit(f->c, &p, f->now));
    sm_control_stats st;
    sm_control_get_stats(f->c, &st);
    assert_int_equal(st.refused_name, 1);
    assert_int_equal(st.refused_data_addr, 8);
    assert_int_equal(st.refused_agents_cap, 1);
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
    sm_run_row row = run_row(f, run);
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
    poll_once(f, p1, &r, &now);
    assert_int_equal(r.n_commands, 1);
    uint64_t job = r.commands[0].job;
    snprintf(p1->acks[0], sizeof p1->acks[0], "%s", r.commands[0].id);
    p1->n_acks = 1;
    p1->state = SM_AGENT_BUSY;
    p1->job = job;
    p1->attempt = 1;
    poll_once(f, p1, &r, &now);
    p1->n_acks = 0;
    /* The coordinator runs throughout (a sweep every 250 ms, as the server does), so h1's
     * silence is h1's; h2 polls and stays alive. */
    int64_t until = f->now + 3 * HOLD + 1;
    while (f->now < until) {
        tick_until(f, f->now + 250 < until ? f->now + 250 : until);
        poll_once(f, p2, &r, &now);
    }
    sm_error err = {0};
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_control_tick(f->c, f->now, &err), 0);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    char reason[256];
    assert_int_equal(job_state(f, job, reason, sizeof reason), SM_JOB_FAILED);
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
    poll_once(f, p1, &r, &now);
    p1->results = NULL;
    p1->n_results = 0;
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(job_state(f, job, NULL, 0), SM_JOB_DONE);
}

static void
test_control_a_late_result_moves_its_job_to_done_in_the_running_runs_counts(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t run = start_run(f, 1, true, &p1, &p2);
    uint64_t job = lose_h1_mid_job(f, &p1, &p2);
    assert_run_counts_match_jobs(f, run, 0, 2);
    deliver_late(f, &p1, job);
    assert_run_counts_match_jobs(f, run, 1, 1);
    /* The counts in memory agree too: the run ends when h2's two jobs have. */
    take_and_finish(f, &p2, true, "");
    sm_run_row row = run_row(f, run);
    assert_int_equal(row.state, SM_RUN_RUNNING);
    sm_run_row_fini(&row);
    take_and_finish(f, &p2, true, "");
    assert_run_counts_match_jobs(f, run, 3, 1);
    row = run_row(f, run);
    assert_int_equal(row.state, SM_RUN_FAILED);
    assert_non_null(strstr(row.reason, "1 of 4"));
    sm_run_row_fini(&row);
}

static void test_control_a_late_result_after_its_run_ended_corrects_the_runs_counts(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    uint64_t run = start_run(f, 1, true, &p1, &p2);
    take_and_finish(f, &p2, true, "");
    take_and_finish(f, &p2, true, "");
    uint64_t job = lose_h1_mid_job(f, &p1, &p2);
    sm_run_row row = run_row(f, run);
    assert_int_equal(row.state, SM_RUN_FAILED);
    assert_non_null(strstr(row.reason, "2 of 4"));
    int64_t finished = row.finished_ms;
    sm_run_row_fini(&row);
    f->now += 5000;
    deliver_late(f, &p1, job);
    assert_run_counts_match_jobs(f, run, 3, 1);
    row = run_row(f, run);
    assert_int_equal(row.state, SM_RUN_FAILED);
    assert_non_null(strstr(row.reason, "1 of 4"));
    assert_int_equal(row.finished_ms, finished); /* it ended when it ended */
    sm_run_row_fini(&row);
}

/* Job ids start over in every store: a result the agent measured for another store's job of
 * the same id is neither stored nor acked, and every reply names this store so the agent can
 * tell. A result that names this store, or none (an agent from before store ids), counts. */
static void test_control_a_result_of_another_store_is_neither_stored_nor_acked(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    uint64_t id = dispatch_one(f, &p, &r);
    assert_string_equal(r.store, sm_store_id(f->st));
    assert_int_equal(strlen(r.store), 32);
    snprintf(p.acks[0], sizeof p.acks[0], "%s", r.commands[0].id);
    p.n_acks = 1;
    p.state = SM_AGENT_BUSY;
    p.job = id;
    p.attempt = 1;
    poll_once(f, &p, &r, &now);
    p.n_acks = 0;

    sm_result_msg m = {.job = id, .attempt = 1};
    snprintf(m.store, sizeof m.store, "%s", "00000000000000000000000000000000");
    sm_result_init(&m.result);
    m.result.ok = true;
    p.results = &m;
    p.n_results = 1;
    poll_once(f, &p, &r, &now);
    /* Held like an empty poll: an agent that cannot move the result aside would otherwise
     * send it again at once, without end. */
    assert_false(now);
    assert_int_equal(r.n_acks, 0);
    assert_string_equal(r.store, sm_store_id(f->st));
    assert_int_equal(results(f), 0);
    assert_int_equal(job_state(f, id, NULL, 0), SM_JOB_RUNNING);
    sm_control_stats s;
    sm_control_get_stats(f->c, &s);
    assert_int_equal(s.results_foreign, 1);
    assert_int_equal(s.results_stored, 0);
    /* Nor acked when the held poll is answered. */
    f->now += HOLD;
    assert_int_equal(sm_control_expire(f->c, "h1", f->now, &r, &(sm_error){0}), 0);
    assert_int_equal(r.n_acks, 0);
    assert_string_equal(r.store, sm_store_id(f->st));

    /* This store's own result for the job, and one that names no store: stored and acked. */
    snprintf(m.store, sizeof m.store, "%s", sm_store_id(f->st));
    p.state = SM_AGENT_IDLE;
    poll_once(f, &p, &r, &now);
    assert_int_equal(results(f), 1);
    expire_h1(f, &r);
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(job_state(f, id, NULL, 0), SM_JOB_DONE);
    uint64_t id2 = submit(f, "h1");
    p.n_results = 0;
    poll_once(f, &p, &r, &now);
    assert_int_equal(r.n_commands, 1);
    sm_result_msg m2 = {.job = id2, .attempt = 1};
    sm_result_init(&m2.result);
    m2.result.ok = true;
    p.results = &m2;
    p.n_results = 1;
    poll_once(f, &p, &r, &now);
    expire_h1(f, &r);
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(results(f), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_control_a_result_of_another_store_is_neither_stored_nor_acked, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_keeps_the_quarantine_count_each_agent_last_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_an_agent_given_a_job_is_busy_before_it_polls_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_first_poll_registers_and_an_idle_poll_is_held,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_an_agent_without_known_facts_is_asked_for_them,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_submit_refuses_an_unknown_host, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_control_job_runs_and_its_result_is_stored_once_and_acked_each_time, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_poll_resending_only_stored_results_is_held_and_acked_at_expiry, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_control_a_result_is_acked_with_the_next_job, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_control_assign_is_resent_until_acked, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_rollback_takes_the_control_state_back_to_the_store, setup, teardown),
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
            test_control_run_jobs_of_a_host_alternate_variants_and_the_run_ends_done, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_failed_run_job_is_retried_once_at_the_end_then_fails_for_good, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_control_cancel_fails_queued_jobs_and_cancels_the_running_one, setup, teardown),
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
            test_control_parallel_false_holds_other_hosts_until_the_running_job_ends, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_control_hosts_of_one_machine_run_one_job_at_a_time_and_say_why, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_parallel_true_on_one_machine_runs_side_by_side_with_a_warning, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_control_parallel_false_says_the_spec_asked, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_control_hosts_of_different_machines_stay_parallel,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_without_boot_ids_the_machine_id_tells, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_control_only_the_runs_hosts_and_their_facts_then_count,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_sharing_note_names_eight_hosts_a_machine_and_fits_its_room, NULL, NULL),
        cmocka_unit_test_setup_teardown(
            test_control_a_pair_job_in_flight_at_a_restart_runs_again_as_a_new_attempt, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_pair_side_from_another_host_is_acked_but_never_stored, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_local_result_from_another_host_is_acked_but_never_stored, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_control_admit_refuses_a_reserved_name_a_bad_data_addr_and_agents_over_the_cap,
            setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_late_result_moves_its_job_to_done_in_the_running_runs_counts, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_late_result_after_its_run_ended_corrects_the_runs_counts, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_control_dispatch_never_double_books_and_every_run_ends,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
