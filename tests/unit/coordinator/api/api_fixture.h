/* The API unit tests' fixture: a real SQLite store in a temporary folder, the control core on
 * it and the API context, with the helpers every test_api*.c uses to call routes and to play an
 * agent's polls. Linked into each of those tests. */
#ifndef SM_TESTS_API_FIXTURE_H
#define SM_TESTS_API_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/api/api.h"
#include "coordinator/control/control.h"
#include "coordinator/recurring/schedules.h"
#include "coordinator/store/store.h"

typedef struct fixture {
    char dir[64];
    char db[96];
    sm_store *st;
    sm_control *c;
    sm_rejects *rejects;
    sm_api_ctx api;
    sm_schedules_env sched; /* the schedules' tick over the same store, control and reports */
    /* What the jobs_queued callback was given. */
    int queued_calls;
    size_t queued_n;
    char queued_host[32];
    uint64_t ws[3]; /* the ws counters, for a test that gives them (api.ws_counters) */
} fixture;

/* A response, freed by the test. */
typedef struct response {
    int status;
    char *body;
    size_t len;
    const char *ctype;
} response;

int64_t wall_ms(void);
/* cmocka setup and teardown: *state is the fixture. */
int setup(void **state);
int teardown(void **state);
/* The route's answer to method path?query (auth and body may be NULL). */
response call(fixture *f, const char *method, const char *path, const char *query, const char *auth,
              const char *body);
/* Calls and checks the status; a 4xx must be {"error":...} in JSON; the body must hold has
 * (when not NULL). */
void expect(fixture *f, const char *method, const char *path, const char *query, const char *auth,
            const char *body, int status, const char *has);
/* Registers agent `name` the way its first poll does. */
void register_agent(fixture *f, const char *name);
/* Agent name takes its jobs and ends each with throughput MBps, until none is left. */
void finish_jobs(fixture *f, const char *name, double mbps);
/* The same with every result disturbed for reason why (NULL: clean). */
void finish_jobs_disturbed(fixture *f, const char *name, double mbps, const char *why);

#endif
