/* A control core over a store in a fresh temporary folder, for the control core's unit tests
 * (cmocka setup/teardown). */
#ifndef SM_TESTS_UNIT_CONTROL_FIXTURE_H
#define SM_TESTS_UNIT_CONTROL_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/control/control.h"
#include "coordinator/store/store.h"

typedef struct fixture {
    char dir[64];
    char db[96];
    sm_store *st;
    sm_control *c;
    int64_t now;
    int64_t mono; /* the liveness clock, for the tests that reopen with one */
} fixture;

/* *state = a new fixture: the store opened in a mkdtemp folder, a control core with hold_ms
 * and a job grace of 1 s opened on it at a fixed wall time. */
int control_fixture_setup(void **state, uint32_t hold_ms);

/* Starts the run of spec json in one store transaction at f->now; returns its id. A spec that
 * does not decode or a run that does not start fails the test. */
uint64_t control_fixture_start(fixture *f, const char *json);

/* The live status of a known agent (an unknown one fails the test). */
sm_agent_status control_fixture_status(fixture *f, const char *name);

/* Closes both, removes the folder and frees the fixture. */
int control_fixture_teardown(void **state);

/* Helpers of the control core's poll and run tests: each sends what the server would, inside
 * one store transaction where the server uses one, and fails the test on an error. */

/* *p = an idle poll of agent with boot id boot, carrying facts naming the agent as hostname. */
void control_fixture_base_poll(sm_poll *p, const char *agent, const char *boot);

/* Sends one poll inside a transaction, as the server does: *r is the reply, *now whether it
 * is sent at once (not held). */
void control_fixture_poll(fixture *f, const sm_poll *p, sm_poll_reply *r, bool *now);

/* Queues a stream job with default params on host; returns its id. */
uint64_t control_fixture_submit(fixture *f, const char *host);

/* The stored state of job id; its reason copied into reason (len bytes) unless reason is NULL. */
sm_job_state control_fixture_job_state(fixture *f, uint64_t id, char *reason, size_t len);

/* The number of results in the store. */
uint64_t control_fixture_results(fixture *f);

/* Registers h1 (idle), queues a job, and has the next poll carry the assign command. */
uint64_t control_fixture_dispatch_one(fixture *f, sm_poll *p, sm_poll_reply *r);

/* Registers h1 and h2 idle (p1, p2 their polls, facts then off), and starts a run of one local
 * stream test (tcp and unix) with `reps` repetitions on both; returns the run's id. */
uint64_t control_fixture_start_run(fixture *f, uint32_t reps, bool parallel, sm_poll *p1,
                                   sm_poll *p2);

/* As control_fixture_start_run, with "repetitions" as given (a number or an object). */
uint64_t control_fixture_start_run_reps(fixture *f, const char *reps, bool parallel, sm_poll *p1,
                                        sm_poll *p2);

/* The stored row of run id (the caller finis it). */
sm_run_row control_fixture_run_row(fixture *f, uint64_t id);

/* The agent's next poll takes the assign, and a poll after it returns the result (ok or not,
 * with reason); returns the job's id. */
uint64_t control_fixture_take_and_finish(fixture *f, sm_poll *p, bool ok, const char *reason);

#endif
