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

#include "coordinator/control.h"
#include "coordinator/store.h"

#define HOLD 1000

typedef struct fixture {
    char dir[64];
    char db[96];
    sm_store *st;
    sm_control *c;
    int64_t now;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/sm-control-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->db, sizeof f->db, "%s/c.db", f->dir);
    sm_error err = {0};
    assert_int_equal(sm_store_open(&f->st, f->db, &err), 0);
    sm_control_cfg cfg = {.hold_ms = HOLD, .job_grace_ms = 1000};
    f->now = 1700000000000;
    assert_int_equal(sm_control_open(&f->c, f->st, &cfg, f->now, &err), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sm_control_close(f->c);
    sm_store_close(f->st);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
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

    /* The result arrives: stored, acked, the job done. */
    sm_result_msg m = {.job = id, .attempt = 1};
    sm_result_init(&m.result);
    m.result.ok = true;
    sm_result_set(&m.result, SM_M_BYTES, 1000);
    p.n_acks = 0;
    p.state = SM_AGENT_IDLE;
    p.results = &m;
    p.n_results = 1;
    poll_once(f, &p, &r, &now);
    assert_true(now);
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(r.ack_job[0], id);
    assert_int_equal(job_state(f, id, NULL, 0), SM_JOB_DONE);
    assert_int_equal(results(f), 1);

    /* The ack was lost; the agent sends it again: acked again, stored once. */
    poll_once(f, &p, &r, &now);
    assert_int_equal(r.n_acks, 1);
    assert_int_equal(results(f), 1);
    sm_control_stats s;
    sm_control_get_stats(f->c, &s);
    assert_int_equal(s.results_stored, 1);
    assert_int_equal(s.results_duplicate, 1);
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
    f->now += 3 * HOLD; /* exactly 3 x hold: not yet */
    assert_int_equal(sm_control_tick(f->c, f->now, &err), 0);
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
    sm_error err = {0};
    f->now += 3 * HOLD + 1;
    assert_int_equal(sm_control_tick(f->c, f->now, &err), 0);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_control_first_poll_registers_and_an_idle_poll_is_held,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_an_agent_without_known_facts_is_asked_for_them,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_submit_refuses_an_unknown_host, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_control_job_runs_and_its_result_is_stored_once_and_acked_each_time, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_control_assign_is_resent_until_acked, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_silent_agent_is_lost_and_its_job_fails_agent_lost, setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_a_restarted_agent_fails_its_running_job, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_control_a_late_result_of_a_lost_job_is_stored_and_completes_it, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_queued_jobs_survive_a_restart_and_dispatch_in_order, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
