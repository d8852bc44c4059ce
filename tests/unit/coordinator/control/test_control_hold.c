/* The hold grows with the fleet: a fleet of more than poll_rate x hold_ms agents is held
 * longer, in whole seconds up to SM_HOLD_MAX_MS; an agent that says how long it waits
 * (wait_ms) hears the hold in every reply and is held up to it, an agent that says nothing is
 * held hold_ms as before; silence is measured against each agent's own hold. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/control/control.h"
#include "coordinator/store/store.h"
#include "tests/unit/coordinator/control/control_fixture.h"

#define HOLD 5000
#define RATE 10 /* idle polls a second: 50 agents fit in a 5 s hold */

static void reopen(fixture *f)
{
    sm_control_close(f->c);
    sm_control_cfg cfg = {.hold_ms = HOLD, .poll_rate = RATE, .job_grace_ms = 1000};
    sm_error err = {0};
    if (sm_control_open(&f->c, f->st, &cfg, f->now, &err) != 0)
        fail_msg("reopen: %s", err.msg);
}

static int setup(void **state)
{
    control_fixture_setup(state, HOLD);
    reopen(*state);
    return 0;
}

static int teardown(void **state)
{
    return control_fixture_teardown(state);
}

/* One idle poll of agent name saying wait_ms (0: saying nothing), in a transaction. */
static void poll_as(fixture *f, const char *name, uint32_t wait_ms, sm_poll_reply *r)
{
    sm_poll p;
    memset(&p, 0, sizeof p);
    snprintf(p.agent, sizeof p.agent, "%s", name);
    snprintf(p.boot, sizeof p.boot, "b1");
    p.state = SM_AGENT_IDLE;
    p.wait_ms = wait_ms;
    sm_error err = {0};
    bool now;
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    if (sm_control_poll(f->c, &p, f->now, r, &now, &err) != 0)
        fail_msg("poll: %s", err.msg);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
}

/* Agents a0 .. a(n-1) poll once each, saying they wait 10 s. */
static void fleet_of(fixture *f, size_t from, size_t n)
{
    sm_poll_reply r;
    for (size_t i = from; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "a%zu", i);
        poll_as(f, name, 10000, &r);
    }
}

static void tick(fixture *f)
{
    sm_error err = {0};
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    if (sm_control_tick(f->c, f->now, &err) != 0)
        fail_msg("tick: %s", err.msg);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
}

/* Time passes with the coordinator serving (a tick every 250 ms): a longer gap would be its
 * own absence, which no agent is blamed for. */
static void serve_for(fixture *f, int64_t ms)
{
    for (int64_t end = f->now + ms; f->now < end;) {
        f->now += 250;
        tick(f);
    }
}

static void test_fleet_hold_grows_in_whole_seconds(void **state)
{
    fixture *f = *state;
    assert_int_equal(sm_control_fleet_hold_ms(f->c), HOLD);
    fleet_of(f, 0, 50); /* 50 agents / 10 a second: 5 s, the floor */
    assert_int_equal(sm_control_fleet_hold_ms(f->c), HOLD);
    fleet_of(f, 50, 51); /* 5.1 s, rounded up */
    assert_int_equal(sm_control_fleet_hold_ms(f->c), 6000);
    fleet_of(f, 51, 250);
    assert_int_equal(sm_control_fleet_hold_ms(f->c), 25000);
    fleet_of(f, 250, 700); /* 70 s: held at the ceiling */
    assert_int_equal(sm_control_fleet_hold_ms(f->c), SM_HOLD_MAX_MS);
}

static void test_poll_rate_zero_keeps_the_hold(void **state)
{
    fixture *f = *state;
    sm_control_close(f->c);
    sm_control_cfg cfg = {.hold_ms = HOLD, .job_grace_ms = 1000};
    sm_error err = {0};
    assert_int_equal(sm_control_open(&f->c, f->st, &cfg, f->now, &err), 0);
    fleet_of(f, 0, 300);
    assert_int_equal(sm_control_fleet_hold_ms(f->c), HOLD);
    sm_poll_reply r;
    poll_as(f, "a1", 30000, &r);
    assert_int_equal(r.hold_ms, HOLD);
    assert_int_equal(sm_control_agent_hold_ms(f->c, "a1"), HOLD);
}

/* What a reply says and how long each agent is held, by what its poll said. */
static void test_each_agent_held_no_longer_than_it_waits(void **state)
{
    fixture *f = *state;
    fleet_of(f, 0, 250); /* fleet hold 25 s */
    sm_poll_reply r;
    poll_as(f, "a1", 30000, &r);
    assert_int_equal(r.hold_ms, 25000);
    assert_int_equal(sm_control_agent_hold_ms(f->c, "a1"), 25000);
    /* Waits 12 s: held 10 s, answered 2 s before it gives up; told 25 s for its next poll. */
    poll_as(f, "a2", 12000, &r);
    assert_int_equal(r.hold_ms, 25000);
    assert_int_equal(sm_control_agent_hold_ms(f->c, "a2"), 12000 - SM_HOLD_MARGIN_MS);
    /* A short wait never takes the hold below --hold-ms (the agent sends again, as before). */
    poll_as(f, "a3", 3000, &r);
    assert_int_equal(sm_control_agent_hold_ms(f->c, "a3"), HOLD);
    /* An agent from before wait_ms: not told (it would refuse the key), held as before. */
    poll_as(f, "old", 0, &r);
    assert_int_equal(r.hold_ms, 0);
    assert_int_equal(sm_control_agent_hold_ms(f->c, "old"), HOLD);
    assert_int_equal(sm_control_agent_hold_ms(f->c, "nobody"), HOLD);
}

/* Lost after 3 x its own hold: a held agent is not blamed for the long hold it was given. */
static void test_silence_measured_against_the_agents_hold(void **state)
{
    fixture *f = *state;
    fleet_of(f, 0, 250);
    sm_poll_reply r;
    poll_as(f, "a1", 30000, &r); /* held 25 s */
    poll_as(f, "old", 0, &r);    /* held 5 s */
    serve_for(f, 3 * HOLD + 1000);
    assert_int_equal(control_fixture_status(f, "old"), SM_AGENT_LOST);
    assert_int_not_equal(control_fixture_status(f, "a1"), SM_AGENT_LOST);
    serve_for(f, 3 * 25000 - (3 * HOLD + 1000) - 1000);
    assert_int_not_equal(control_fixture_status(f, "a1"), SM_AGENT_LOST);
    serve_for(f, 2000);
    assert_int_equal(control_fixture_status(f, "a1"), SM_AGENT_LOST);
}

/* After a restart nobody has polled yet: every agent gets 3 x the hold the fleet's size gives,
 * which is what the agents were told and may wait before their next poll. */
static void test_restart_gives_the_fleets_hold(void **state)
{
    fixture *f = *state;
    fleet_of(f, 0, 250);
    reopen(f);
    assert_int_equal(sm_control_fleet_hold_ms(f->c), 25000);
    assert_int_equal(sm_control_agent_hold_ms(f->c, "a7"), 25000);
    serve_for(f, 3 * 25000 - 1000);
    assert_int_not_equal(control_fixture_status(f, "a7"), SM_AGENT_LOST);
    serve_for(f, 2000);
    assert_int_equal(control_fixture_status(f, "a7"), SM_AGENT_LOST);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fleet_hold_grows_in_whole_seconds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_poll_rate_zero_keeps_the_hold, setup, teardown),
        cmocka_unit_test_setup_teardown(test_each_agent_held_no_longer_than_it_waits, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_silence_measured_against_the_agents_hold, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_restart_gives_the_fleets_hold, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
