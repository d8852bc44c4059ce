/* A control core over a store in a fresh temporary folder, for the control core's unit tests
 * (cmocka setup/teardown). */
#ifndef SM_TESTS_UNIT_CONTROL_FIXTURE_H
#define SM_TESTS_UNIT_CONTROL_FIXTURE_H

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

#endif
