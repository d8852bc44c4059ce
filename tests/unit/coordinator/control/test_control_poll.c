/* Unit tests of the coordinator's control core against a real SQLite store: what each poll means,
 * what the reply says, and how its results are stored and acked. */
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
    control_fixture_base_poll(&p, "h1", "0123456789abcdef0123456789abcdef");
    control_fixture_poll(f, &p, &r, &now);
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
    control_fixture_dispatch_one(f, &p, &r);
    assert_int_equal(p.state, SM_AGENT_IDLE);
    assert_int_equal(control_fixture_status(f, "h1"), SM_AGENT_STATUS_BUSY);
}

static void test_control_keeps_the_quarantine_count_each_agent_last_reported(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    control_fixture_base_poll(&p, "h1", "0123456789abcdef0123456789abcdef");
    p.quarantined = 32;
    control_fixture_poll(f, &p, &r, &now);
    assert_int_equal(sm_control_agent_quarantined(f->c, "h1"), 32);
    assert_int_equal(sm_control_agent_quarantined(f->c, "h2"), 0); /* unknown */
    /* A level, not a delta: a poll that says 32 again keeps 32, and one that says nothing
     * (the operator emptied quarantine/ and restarted the agent) clears it. */
    p.have_facts = false;
    control_fixture_poll(f, &p, &r, &now);
    assert_int_equal(sm_control_agent_quarantined(f->c, "h1"), 32);
    p.quarantined = 0;
    control_fixture_poll(f, &p, &r, &now);
    assert_int_equal(sm_control_agent_quarantined(f->c, "h1"), 0);
}

static void test_control_an_agent_without_known_facts_is_asked_for_them(void **state)
{
    fixture *f = *state;
    sm_poll p;
    sm_poll_reply r;
    bool now;
    control_fixture_base_poll(&p, "h1", "0123456789abcdef0123456789abcdef");
    p.have_facts = false;
    control_fixture_poll(f, &p, &r, &now);
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
    uint64_t id = control_fixture_dispatch_one(f, &p, &r);

    /* The agent acks the assign and reports busy: the job runs, nothing more to say. */
    snprintf(p.acks[0], sizeof p.acks[0], "%s", r.commands[0].id);
    p.n_acks = 1;
    p.state = SM_AGENT_BUSY;
    p.job = id;
    p.attempt = 1;
    control_fixture_poll(f, &p, &r, &now);
    assert_false(now);
    assert_int_equal(r.n_commands, 0);
    assert_int_equal(control_fixture_job_state(f, id, NULL, 0), SM_JOB_RUNNING);

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
    control_fixture_poll(f, &p, &r, &now);
    assert_false(now);
    assert_int_equal(control_fixture_job_state(f, id, NULL, 0), SM_JOB_DONE);
    assert_int_equal(control_fixture_results(f), 1);
    expire_h1(f, &r);
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(r.ack_job[0], id);

    /* The ack was lost; the agent sends it again: acked again, stored once. */
    control_fixture_poll(f, &p, &r, &now);
    expire_h1(f, &r);
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(control_fixture_results(f), 1);
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
    uint64_t id = control_fixture_dispatch_one(f, &p, &r);
    sm_result_msg m = {.job = id, .attempt = 1};
    sm_result_init(&m.result);
    m.result.ok = true;
    sm_result_set(&m.result, SM_M_BYTES, 1000);
    p.results = &m;
    p.n_results = 1;
    control_fixture_poll(f, &p, &r, &now);
    assert_false(now); /* stored, and held like the rest */
    expire_h1(f, &r);
    assert_int_equal(r.n_acks, 1);

    for (int i = 0; i < 3; i++) {
        f->now += 1;
        control_fixture_poll(f, &p, &r, &now);
        assert_false(now);
        expire_h1(f, &r);
        assert_int_equal(r.n_acks, 1);
        assert_int_equal(r.ack_job[0], id);
        assert_int_equal(r.ack_attempt[0], 1);
        /* Paid once: a second answer does not repeat it. */
        expire_h1(f, &r);
        assert_int_equal(r.n_acks, 0);
    }
    assert_int_equal(control_fixture_results(f), 1);
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
    uint64_t id1 = control_fixture_dispatch_one(f, &p, &r);
    uint64_t id2 = control_fixture_submit(f, "h1"); /* queued behind id1 */
    sm_result_msg m = {.job = id1, .attempt = 1};
    sm_result_init(&m.result);
    m.result.ok = true;
    snprintf(p.acks[0], sizeof p.acks[0], "%s", r.commands[0].id);
    p.n_acks = 1;
    p.results = &m;
    p.n_results = 1;
    control_fixture_poll(f, &p, &r, &now);
    assert_true(now);
    assert_int_equal(r.n_commands, 1);
    assert_int_equal(r.commands[0].job, id2);
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(r.ack_job[0], id1);
    assert_int_equal(control_fixture_results(f), 1);
    /* No job queued: the result of id2 is held, and a job posted meanwhile answers it. */
    m.job = id2;
    snprintf(p.acks[0], sizeof p.acks[0], "%s", r.commands[0].id);
    control_fixture_poll(f, &p, &r, &now);
    assert_false(now);
    assert_int_equal(control_fixture_results(f), 2);
    uint64_t id3 = control_fixture_submit(f, "h1");
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
    uint64_t id = control_fixture_dispatch_one(f, &p, &r);
    control_fixture_poll(f, &p, &r, &now); /* the reply was lost: still idle, no ack */
    assert_int_equal(r.n_commands, 1);
    assert_int_equal(r.commands[0].job, id);
    assert_int_equal(control_fixture_job_state(f, id, NULL, 0), SM_JOB_ASSIGNED);
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
    uint64_t id = control_fixture_dispatch_one(f, &p, &r);
    snprintf(p.acks[0], sizeof p.acks[0], "%s", r.commands[0].id);
    p.n_acks = 1;
    p.state = SM_AGENT_BUSY;
    p.job = id;
    p.attempt = 1;
    control_fixture_poll(f, &p, &r, &now);
    assert_int_equal(control_fixture_job_state(f, id, NULL, 0), SM_JOB_RUNNING);

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
    assert_int_equal(control_fixture_job_state(f, id, NULL, 0), SM_JOB_RUNNING);
    assert_int_equal(control_fixture_results(f), 0);
    /* Sent again, it is stored once and ends its job. */
    f->now += 10;
    control_fixture_poll(f, &p, &r, &now);
    assert_int_equal(control_fixture_job_state(f, id, NULL, 0), SM_JOB_DONE);
    assert_int_equal(control_fixture_results(f), 1);
    expire_h1(f, &r);
    assert_int_equal(r.n_acks, 1);

    /* A job dispatched in a failed transaction is queued again, and dispatched by the next
     * poll: the agent never heard of it. */
    uint64_t id2 = control_fixture_submit(f, "h1");
    p.results = NULL;
    p.n_results = 0;
    f->now += 10;
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_control_poll(f->c, &p, f->now, &r, &now, &err), 0);
    assert_int_equal(r.n_commands, 1);
    assert_int_equal(sm_control_rollback(&f->c, f->now, &err), 0);
    assert_int_equal(control_fixture_job_state(f, id2, NULL, 0), SM_JOB_QUEUED);
    f->now += 10;
    control_fixture_poll(f, &p, &r, &now);
    assert_int_equal(r.n_commands, 1);
    assert_int_equal(r.commands[0].kind, SM_CMD_ASSIGN);
    assert_int_equal(r.commands[0].job, id2);
    assert_int_equal(r.commands[0].attempt, 1);
    assert_int_equal(control_fixture_job_state(f, id2, NULL, 0), SM_JOB_ASSIGNED);
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

static void test_control_a_local_result_from_another_host_is_acked_but_never_stored(void **state)
{
    fixture *f = *state;
    sm_poll p, q;
    sm_poll_reply r;
    bool now;
    uint64_t id = control_fixture_dispatch_one(f, &p, &r);
    control_fixture_base_poll(&q, "h9", "99999999999999999999999999999999");
    sm_result_msg m = {.job = id, .attempt = 1, .role = SM_ROLE_BOTH};
    sm_result_init(&m.result);
    m.result.ok = true;
    sm_result_set(&m.result, SM_M_THROUGHPUT, 99999);
    q.results = &m;
    q.n_results = 1;
    control_fixture_poll(f, &q, &r, &now);
    assert_false(now);
    assert_int_equal(control_fixture_results(f), 0);
    assert_int_equal(control_fixture_job_state(f, id, NULL, 0), SM_JOB_ASSIGNED);
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
    control_fixture_base_poll(&p, "coordinator", "0123456789abcdef0123456789abcdef");
    assert_false(sm_control_admit(f->c, &p, f->now));
    control_fixture_base_poll(&p, "h1", "0123456789abcdef0123456789abcdef");
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
    control_fixture_poll(f, &p, &r, &now);
    /* The cap is one agent: a new name is refused, the known one keeps polling. */
    sm_poll q;
    control_fixture_base_poll(&q, "h2", "0123456789abcdef0123456789abcdef");
    assert_false(sm_control_admit(f->c, &q, f->now));
    assert_true(sm_control_admit(f->c, &p, f->now));
    sm_control_stats st;
    sm_control_get_stats(f->c, &st);
    assert_int_equal(st.refused_name, 1);
    assert_int_equal(st.refused_data_addr, 8);
    assert_int_equal(st.refused_agents_cap, 1);
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
    uint64_t id = control_fixture_dispatch_one(f, &p, &r);
    assert_string_equal(r.store, sm_store_id(f->st));
    assert_int_equal(strlen(r.store), 32);
    snprintf(p.acks[0], sizeof p.acks[0], "%s", r.commands[0].id);
    p.n_acks = 1;
    p.state = SM_AGENT_BUSY;
    p.job = id;
    p.attempt = 1;
    control_fixture_poll(f, &p, &r, &now);
    p.n_acks = 0;

    sm_result_msg m = {.job = id, .attempt = 1};
    snprintf(m.store, sizeof m.store, "%s", "00000000000000000000000000000000");
    sm_result_init(&m.result);
    m.result.ok = true;
    p.results = &m;
    p.n_results = 1;
    control_fixture_poll(f, &p, &r, &now);
    /* Held like an empty poll: an agent that cannot move the result aside would otherwise
     * send it again at once, without end. */
    assert_false(now);
    assert_int_equal(r.n_acks, 0);
    assert_string_equal(r.store, sm_store_id(f->st));
    assert_int_equal(control_fixture_results(f), 0);
    assert_int_equal(control_fixture_job_state(f, id, NULL, 0), SM_JOB_RUNNING);
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
    control_fixture_poll(f, &p, &r, &now);
    assert_int_equal(control_fixture_results(f), 1);
    expire_h1(f, &r);
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(control_fixture_job_state(f, id, NULL, 0), SM_JOB_DONE);
    uint64_t id2 = control_fixture_submit(f, "h1");
    p.n_results = 0;
    control_fixture_poll(f, &p, &r, &now);
    assert_int_equal(r.n_commands, 1);
    sm_result_msg m2 = {.job = id2, .attempt = 1};
    sm_result_init(&m2.result);
    m2.result.ok = true;
    p.results = &m2;
    p.n_results = 1;
    control_fixture_poll(f, &p, &r, &now);
    expire_h1(f, &r);
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(control_fixture_results(f), 2);
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
            test_control_a_local_result_from_another_host_is_acked_but_never_stored, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_control_admit_refuses_a_reserved_name_a_bad_data_addr_and_agents_over_the_cap,
            setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
