/* The control core's tick looks only at what is due: agents whose liveness deadline came, jobs
 * past their time, and agents with news in the order they got it; never the whole fleet. */
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

#define HOLD  60000
#define FLEET 2000

static int setup(void **state)
{
    return control_fixture_setup(state, HOLD);
}

static int teardown(void **state)
{
    return control_fixture_teardown(state);
}

static void name_of(char *out, size_t len, size_t i)
{
    snprintf(out, len, "h%05zu", i);
}

/* Agents `from` to `to` - 1 poll idle, all in one transaction. */
static void polls(fixture *f, size_t from, size_t to)
{
    sm_error err = {0};
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    for (size_t i = from; i < to; i++) {
        sm_poll p;
        memset(&p, 0, sizeof p);
        name_of(p.agent, sizeof p.agent, i);
        snprintf(p.boot, sizeof p.boot, "0123456789abcdef0123456789abcdef");
        sm_poll_reply r;
        bool now;
        if (sm_control_poll(f->c, &p, f->now, &r, &now, &err) != 0)
            fail_msg("poll: %s", err.msg);
    }
    assert_int_equal(sm_store_commit(f->st, &err), 0);
}

static void tick(fixture *f)
{
    sm_error err = {0};
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_control_tick(f->c, f->now, &err), 0);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
}

static sm_agent_status status_of(fixture *f, size_t i)
{
    char name[16];
    name_of(name, sizeof name, i);
    return control_fixture_status(f, name);
}

/* Queues a default stream job (its parameters into *p) on each of hosts[0..n) in one
 * transaction; returns the last one's id. */
static uint64_t submit(fixture *f, const char *const *hosts, size_t n, sm_params *p)
{
    sm_params_init(p, SM_WL_STREAM);
    sm_error err = {0};
    assert_int_equal(sm_params_validate(p, &err), 0);
    uint64_t id = 0;
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(sm_control_submit(f->c, hosts[i], p, f->now, &id, &err), 0);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    return id;
}

static void test_control_tick_over_an_idle_fleet_with_nothing_due_visits_no_agent(void **state)
{
    fixture *f = *state;
    polls(f, 0, FLEET);
    const uint64_t before = sm_control_tick_visits(f->c);
    /* A minute of 250 ms ticks, every agent well within its silence. */
    for (int k = 0; k < 240; k++) {
        f->now += 250;
        tick(f);
    }
    assert_int_equal(sm_control_tick_visits(f->c), before);
    assert_int_equal(status_of(f, 0), SM_AGENT_ONLINE);
    /* Half the fleet polls again; the other half stays silent past 3 x hold_ms and is all the
     * tick looks at. */
    polls(f, 0, FLEET / 2);
    while (f->now < 1700000000000 + 3 * HOLD + 250) {
        f->now += 250;
        tick(f);
    }
    assert_int_equal(sm_control_tick_visits(f->c), before + FLEET / 2);
    assert_int_equal(status_of(f, FLEET / 2), SM_AGENT_LOST);
    assert_int_equal(status_of(f, FLEET - 1), SM_AGENT_LOST);
    assert_int_equal(status_of(f, FLEET / 2 - 1), SM_AGENT_ONLINE);
    /* The lost ones have nothing left to wait for (no grace): the next ticks visit nobody. */
    const uint64_t after = sm_control_tick_visits(f->c);
    f->now += 250;
    tick(f);
    assert_int_equal(sm_control_tick_visits(f->c), after);
}

static void test_control_take_news_gives_the_woken_agents_once_in_the_order_woken(void **state)
{
    fixture *f = *state;
    polls(f, 0, 5);
    char names[8][SM_NAME_MAX + 1];
    assert_int_equal(sm_control_take_news(f->c, names, 8), 0);
    static const char *const hosts[] = {"h00003", "h00001", "h00003", "h00004"};
    sm_params p;
    submit(f, hosts, 4, &p);
    /* h00004 polls before the news is taken: its poll took the job, it is no news any more. */
    polls(f, 4, 5);
    assert_int_equal(sm_control_take_news(f->c, names, 1), 1);
    assert_string_equal(names[0], "h00003");
    assert_int_equal(sm_control_take_news(f->c, names, 8), 1);
    assert_string_equal(names[0], "h00001");
    assert_int_equal(sm_control_take_news(f->c, names, 8), 0);
}

static void test_control_tick_times_out_a_running_job_when_its_limit_comes(void **state)
{
    fixture *f = *state;
    polls(f, 0, 50);
    static const char *const host[] = {"h00007"};
    sm_params p;
    const uint64_t id = submit(f, host, 1, &p);
    sm_error err = {0};
    polls(f, 7, 8); /* takes the assign */
    sm_poll q;
    memset(&q, 0, sizeof q);
    snprintf(q.agent, sizeof q.agent, "h00007");
    snprintf(q.boot, sizeof q.boot, "0123456789abcdef0123456789abcdef");
    q.state = SM_AGENT_BUSY;
    q.job = id;
    q.attempt = 1;
    sm_poll_reply r;
    bool now;
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_control_poll(f->c, &q, f->now, &r, &now, &err), 0);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    const int64_t limit = (int64_t)p.time_limit_ms + 1000;
    const uint64_t before = sm_control_tick_visits(f->c);
    const int64_t started = f->now;
    while (f->now + 250 <= started + limit) {
        f->now += 250;
        tick(f);
    }
    f->now = started + limit;
    tick(f);
    assert_int_equal(sm_control_tick_visits(f->c), before);
    sm_job_row row;
    assert_int_equal(sm_store_job_get(f->st, id, &row, &err), 0);
    assert_int_equal(row.state, SM_JOB_RUNNING);
    sm_job_row_fini(&row);
    f->now += 1;
    tick(f);
    assert_int_equal(sm_control_tick_visits(f->c), before + 1);
    assert_int_equal(sm_store_job_get(f->st, id, &row, &err), 0);
    assert_int_equal(row.state, SM_JOB_FAILED);
    assert_non_null(strstr(row.reason, "timeout"));
    sm_job_row_fini(&row);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_control_tick_over_an_idle_fleet_with_nothing_due_visits_no_agent, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_take_news_gives_the_woken_agents_once_in_the_order_woken, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_tick_times_out_a_running_job_when_its_limit_comes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
