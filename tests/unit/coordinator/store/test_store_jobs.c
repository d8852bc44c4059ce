/* Unit tests of the store's plain jobs: their states and timestamps, refused inserts, and the open
 * ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "coordinator/store/store.h"
#include "tests/unit/coordinator/store/store_fixture.h"
#include "proto/log.h"

#define assert_ok(expr) store_fixture_check_ok((expr), &err, #expr, __FILE__, __LINE__)

static void test_store_job_moves_through_states_with_timestamps(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    uint64_t id = store_fixture_insert_job(f->st, "h1", 1000);
    assert_true(id > 0);

    sm_job_row j;
    assert_ok(sm_store_job_get(f->st, id, &j, &err));
    assert_int_equal(j.id, id);
    assert_string_equal(j.host, "h1");
    assert_string_equal(j.params_json, "{\"workload\":\"stream\"}");
    assert_int_equal(j.state, SM_JOB_QUEUED);
    assert_string_equal(j.reason, "");
    assert_int_equal(j.attempt, 1);
    assert_int_equal(j.created_ms, 1000);
    assert_int_equal(j.assigned_ms, 0);
    assert_int_equal(j.started_ms, 0);
    assert_int_equal(j.finished_ms, 0);
    sm_job_row_fini(&j);

    assert_ok(sm_store_job_set_state(f->st, id, 1, SM_JOB_ASSIGNED, "", 2000, &err));
    assert_ok(sm_store_job_set_state(f->st, id, 1, SM_JOB_RUNNING, "", 3000, &err));
    assert_ok(sm_store_job_set_state(f->st, id, 1, SM_JOB_DONE, "", 4000, &err));
    assert_ok(sm_store_job_get(f->st, id, &j, &err));
    assert_int_equal(j.state, SM_JOB_DONE);
    assert_int_equal(j.created_ms, 1000);
    assert_int_equal(j.assigned_ms, 2000);
    assert_int_equal(j.started_ms, 3000);
    assert_int_equal(j.finished_ms, 4000);
    sm_job_row_fini(&j);

    sqlite3 *db = store_fixture_raw_open(f->path);
    char name[16];
    store_fixture_raw_text(db, "SELECT state FROM jobs", name, sizeof name);
    assert_string_equal(name, "done");
    sqlite3_close(db);
}

static void test_store_job_failed_stamps_finished_and_retry_clears_stamps(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    uint64_t id = store_fixture_insert_job(f->st, "h1", 1000);
    assert_ok(sm_store_job_set_state(f->st, id, 1, SM_JOB_ASSIGNED, "", 2000, &err));
    assert_ok(sm_store_job_set_state(f->st, id, 1, SM_JOB_FAILED, "agent-lost", 5000, &err));
    sm_job_row j;
    assert_ok(sm_store_job_get(f->st, id, &j, &err));
    assert_int_equal(j.state, SM_JOB_FAILED);
    assert_string_equal(j.reason, "agent-lost");
    assert_int_equal(j.assigned_ms, 2000);
    assert_int_equal(j.started_ms, 0);
    assert_int_equal(j.finished_ms, 5000);
    sm_job_row_fini(&j);

    assert_ok(sm_store_job_set_state(f->st, id, 2, SM_JOB_QUEUED, "", 6000, &err));
    assert_ok(sm_store_job_get(f->st, id, &j, &err));
    assert_int_equal(j.state, SM_JOB_QUEUED);
    assert_int_equal(j.attempt, 2);
    assert_string_equal(j.reason, "");
    assert_int_equal(j.created_ms, 1000);
    assert_int_equal(j.assigned_ms, 0);
    assert_int_equal(j.finished_ms, 0);
    sm_job_row_fini(&j);
}

static void test_store_unknown_job_id_is_einval(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    sm_job_row j;
    sm_error_clear(&err);
    assert_int_equal(sm_store_job_get(f->st, 42, &j, &err), SM_EINVAL);
    assert_string_equal(err.msg, "no job 42");
    sm_error_clear(&err);
    assert_int_equal(sm_store_job_set_state(f->st, 42, 1, SM_JOB_RUNNING, "", 1, &err), SM_EINVAL);
    assert_string_equal(err.msg, "no job 42");
    sm_error_clear(&err);
    assert_int_equal(sm_store_job_get(f->st, UINT64_MAX, &j, &err), SM_EINVAL);
}

static void test_store_job_insert_rejects_bad_host(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    uint64_t id = 0;
    char long_host[80];
    memset(long_host, 'h', sizeof long_host - 1);
    long_host[sizeof long_host - 1] = '\0';
    assert_int_equal(sm_store_job_insert(f->st, long_host, "{}", 1, &id, &err), SM_EINVAL);
    assert_int_equal(sm_store_job_insert(f->st, "", "{}", 1, &id, &err), SM_EINVAL);
    assert_int_equal(sm_store_job_insert(f->st, "h1", NULL, 1, &id, &err), SM_EINVAL);
    assert_int_equal(id, 0);
}

static void test_store_jobs_unfinished_lists_open_jobs_oldest_first(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    uint64_t a = store_fixture_insert_job(f->st, "h1", 1000);
    uint64_t b = store_fixture_insert_job(f->st, "h2", 1001);
    uint64_t c = store_fixture_insert_job(f->st, "h3", 1002);
    uint64_t d = store_fixture_insert_job(f->st, "h4", 1003);
    uint64_t e = store_fixture_insert_job(f->st, "h5", 1004);
    assert_ok(sm_store_job_set_state(f->st, a, 1, SM_JOB_DONE, "", 2000, &err));
    assert_ok(sm_store_job_set_state(f->st, b, 1, SM_JOB_RUNNING, "", 2000, &err));
    assert_ok(sm_store_job_set_state(f->st, c, 1, SM_JOB_FAILED, "timeout", 2000, &err));
    assert_ok(sm_store_job_set_state(f->st, d, 1, SM_JOB_ASSIGNED, "", 2000, &err));

    sm_job_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_jobs_unfinished(f->st, &rows, &n, &err));
    assert_int_equal(n, 3);
    assert_int_equal(rows[0].id, b);
    assert_int_equal(rows[0].state, SM_JOB_RUNNING);
    assert_int_equal(rows[1].id, d);
    assert_int_equal(rows[1].state, SM_JOB_ASSIGNED);
    assert_int_equal(rows[2].id, e);
    assert_int_equal(rows[2].state, SM_JOB_QUEUED);
    assert_string_equal(rows[2].params_json, "{\"workload\":\"stream\"}");
    sm_store_jobs_free(rows, n);
}

static void test_store_plain_jobs_keep_run_id_0(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    store_fixture_insert_run(f->st, "r", 1000);
    uint64_t id = store_fixture_insert_job(f->st, "h1", 1000);
    sm_job_row j;
    assert_ok(sm_store_job_get(f->st, id, &j, &err));
    assert_int_equal(j.run_id, 0);
    assert_int_equal(j.cell, 0);
    assert_int_equal(j.rep, 0);
    assert_false(j.warmup);
    assert_int_equal(j.round, 0);
    assert_int_equal(j.ord, 0);
    assert_string_equal(j.peer, "");
    sm_job_row_fini(&j);

    sqlite3 *db = store_fixture_raw_open(f->path);
    assert_int_equal(store_fixture_raw_int(db, "SELECT run_id IS NULL FROM jobs"), 1);
    sqlite3_close(db);

    sm_job_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_run_jobs(f->st, 1, &rows, &n, &err));
    assert_int_equal(n, 0);
    sm_store_jobs_free(rows, n);
}

static void test_store_names_of_states(void **state)
{
    (void)state;
    assert_string_equal(sm_agent_status_name(SM_AGENT_ONLINE), "online");
    assert_string_equal(sm_agent_status_name(SM_AGENT_STATUS_BUSY), "busy");
    assert_string_equal(sm_agent_status_name(SM_AGENT_LOST), "lost");
    assert_string_equal(sm_job_state_name(SM_JOB_QUEUED), "queued");
    assert_string_equal(sm_job_state_name(SM_JOB_ASSIGNED), "assigned");
    assert_string_equal(sm_job_state_name(SM_JOB_RUNNING), "running");
    assert_string_equal(sm_job_state_name(SM_JOB_DONE), "done");
    assert_string_equal(sm_job_state_name(SM_JOB_FAILED), "failed");
    assert_string_equal(sm_job_state_name((sm_job_state)99), "unknown");
    assert_string_equal(sm_run_state_name(SM_RUN_RUNNING), "running");
    assert_string_equal(sm_run_state_name(SM_RUN_DONE), "done");
    assert_string_equal(sm_run_state_name(SM_RUN_FAILED), "failed");
    assert_string_equal(sm_run_state_name(SM_RUN_CANCELLED), "cancelled");
    assert_string_equal(sm_run_state_name((sm_run_state)99), "unknown");
    sm_store_close(NULL);
}

#define T(name)                                                                                    \
    cmocka_unit_test_setup_teardown(name, store_fixture_setup_closed, store_fixture_teardown)

int main(void)
{
    /* Every open of a fresh file logs its migration; the tests check the schema directly. */
    sm_log_level = LOG_WARNING;
    const struct CMUnitTest tests[] = {
        T(test_store_job_moves_through_states_with_timestamps),
        T(test_store_job_failed_stamps_finished_and_retry_clears_stamps),
        T(test_store_unknown_job_id_is_einval),
        T(test_store_job_insert_rejects_bad_host),
        T(test_store_jobs_unfinished_lists_open_jobs_oldest_first),
        T(test_store_plain_jobs_keep_run_id_0),
        T(test_store_names_of_states),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
