/* Unit tests of the store's schema migrations: each version's data kept, a failed one rolled back,
 * a newer schema refused. */
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

static void test_store_refuses_a_newer_schema_version(void **state)
{
    fixture *f = *state;
    sqlite3 *db = store_fixture_raw_open(f->path);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);

    sm_error err;
    sm_error_clear(&err);
    sm_store *st = NULL;
    assert_int_equal(sm_store_open(&st, f->path, &err), SM_EINVAL);
    assert_null(st);
    assert_int_equal(err.code, SM_EINVAL);
    assert_string_equal(err.msg, "database schema version 99 is newer than this coordinator (11)");

    db = store_fixture_raw_open(f->path);
    assert_int_equal(store_fixture_raw_int(db, "PRAGMA user_version"), 99);
    assert_int_equal(store_fixture_raw_int(db, "SELECT count(*) FROM sqlite_master"), 0);
    sqlite3_close(db);
}

static void test_store_failed_migration_leaves_the_old_schema(void **state)
{
    fixture *f = *state;
    sqlite3 *db = store_fixture_raw_open(f->path);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE agents(x)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);

    sm_error err;
    sm_error_clear(&err);
    sm_store *st = NULL;
    assert_int_equal(sm_store_open(&st, f->path, &err), SM_ESYS);
    assert_null(st);
    assert_string_equal(err.msg, "migration from schema version 0: table agents already exists");

    db = store_fixture_raw_open(f->path);
    assert_int_equal(store_fixture_raw_int(db, "PRAGMA user_version"), 0);
    assert_int_equal(
        store_fixture_raw_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'jobs'"), 0);
    sqlite3_close(db);
}

/* Schema version 1 as it shipped, frozen here: the migration to version 2 must carry the data
 * of a database that a version-1 coordinator wrote. */
static const char v1_schema[] = "CREATE TABLE agents ("
                                " name TEXT PRIMARY KEY,"
                                " boot TEXT NOT NULL,"
                                " data_addr TEXT NOT NULL,"
                                " labels_json TEXT NOT NULL,"
                                " facts_json TEXT,"
                                " first_seen_ms INTEGER NOT NULL,"
                                " last_seen_ms INTEGER NOT NULL,"
                                " status TEXT NOT NULL);"
                                "CREATE TABLE jobs ("
                                " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                                " host TEXT NOT NULL,"
                                " params_json TEXT NOT NULL,"
                                " state TEXT NOT NULL,"
                                " reason TEXT NOT NULL DEFAULT '',"
                                " attempt INTEGER NOT NULL DEFAULT 1,"
                                " created_ms INTEGER NOT NULL,"
                                " assigned_ms INTEGER,"
                                " started_ms INTEGER,"
                                " finished_ms INTEGER);"
                                "CREATE INDEX jobs_state ON jobs(state);"
                                "CREATE INDEX jobs_host_state ON jobs(host, state);"
                                "CREATE TABLE results ("
                                " id INTEGER PRIMARY KEY,"
                                " job_id INTEGER NOT NULL REFERENCES jobs(id),"
                                " attempt INTEGER NOT NULL,"
                                " agent TEXT NOT NULL,"
                                " ok INTEGER NOT NULL,"
                                " bytes REAL,"
                                " seconds REAL,"
                                " throughput_MBps REAL,"
                                " rtt_p50_us REAL,"
                                " connects_per_s REAL,"
                                " result_json TEXT NOT NULL,"
                                " stored_ms INTEGER NOT NULL,"
                                " UNIQUE(job_id, attempt));"
                                "CREATE TABLE events ("
                                " id INTEGER PRIMARY KEY,"
                                " ts_ms INTEGER NOT NULL,"
                                " kind TEXT NOT NULL,"
                                " subject TEXT,"
                                " detail TEXT);"
                                "PRAGMA user_version = 1;";

static void test_store_migrates_a_version_1_database_keeping_jobs_and_results(void **state)
{
    fixture *f = *state;
    sm_error err;
    sqlite3 *db = store_fixture_raw_open(f->path);
    assert_int_equal(sqlite3_exec(db, v1_schema, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db,
                     "INSERT INTO jobs(id, host, params_json, state, reason, attempt, created_ms,"
                     " assigned_ms, started_ms, finished_ms) VALUES"
                     " (7, 'h1', '{\"workload\":\"rr\"}', 'done', '', 2, 1000, 2000, 3000, 4000),"
                     " (8, 'h2', '{}', 'queued', '', 1, 1500, NULL, NULL, NULL);"
                     "INSERT INTO results(job_id, attempt, agent, ok, result_json, stored_ms)"
                     " VALUES (7, 2, 'h1', 1, '{\"n\":7}', 4000);",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);

    store_fixture_open(f);
    assert_int_equal(sm_store_schema_version(f->st), 11);

    sm_job_row j;
    assert_ok(sm_store_job_get(f->st, 7, &j, &err));
    assert_string_equal(j.host, "h1");
    assert_string_equal(j.params_json, "{\"workload\":\"rr\"}");
    assert_int_equal(j.state, SM_JOB_DONE);
    assert_int_equal(j.attempt, 2);
    assert_int_equal(j.created_ms, 1000);
    assert_int_equal(j.finished_ms, 4000);
    assert_int_equal(j.run_id, 0);
    assert_int_equal(j.cell, 0);
    assert_int_equal(j.rep, 0);
    assert_false(j.warmup);
    assert_int_equal(j.round, 0);
    assert_int_equal(j.ord, 0);
    assert_string_equal(j.peer, "");
    sm_job_row_fini(&j);

    sm_job_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_jobs_unfinished(f->st, &rows, &n, &err));
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].id, 8);
    sm_store_jobs_free(rows, n);

    char *json = NULL;
    assert_ok(sm_store_result_get(f->st, 7, 2, &json, &err));
    assert_string_equal(json, "{\"n\":7}");
    free(json);
    assert_int_equal(store_fixture_result_count(f->st), 1);

    /* AUTOINCREMENT goes on after the migrated jobs. */
    assert_int_equal(store_fixture_insert_job(f->st, "h3", 5000), 9);
    /* A store from before identities gets one when migrated. */
    assert_true(store_fixture_is_store_id(sm_store_id(f->st)));

    db = store_fixture_raw_open(f->path);
    assert_int_equal(store_fixture_raw_int(db, "PRAGMA user_version"), 11);
    assert_int_equal(
        store_fixture_raw_int(db, "SELECT count(*) FROM pragma_table_info('jobs') WHERE name IN"
                                  " ('run_id', 'cell', 'rep', 'warmup', 'round', 'ord', 'peer')"),
        7);
    assert_int_equal(store_fixture_raw_int(db, "SELECT count(*) FROM pragma_table_info('runs')"),
                     13);
    assert_int_equal(store_fixture_raw_int(db, "SELECT count(*) FROM pragma_table_info('cells')"),
                     8);
    assert_int_equal(
        store_fixture_raw_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND"
                                  " name = 'jobs_run'"),
        1);
    assert_int_equal(store_fixture_raw_int(db, "SELECT count(*) FROM jobs WHERE run_id IS NULL"),
                     3);
    sqlite3_close(db);
}

static void test_store_migration_to_version_2_rolls_back_as_a_whole(void **state)
{
    fixture *f = *state;
    sqlite3 *db = store_fixture_raw_open(f->path);
    assert_int_equal(sqlite3_exec(db, v1_schema, NULL, NULL, NULL), SQLITE_OK);
    /* The migration's last step collides with this index; everything before it must go too. */
    assert_int_equal(sqlite3_exec(db, "CREATE INDEX jobs_run ON jobs(host)", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);

    sm_error err;
    sm_error_clear(&err);
    sm_store *st = NULL;
    assert_int_equal(sm_store_open(&st, f->path, &err), SM_ESYS);
    assert_null(st);
    assert_string_equal(err.msg, "migration from schema version 1: index jobs_run already exists");

    db = store_fixture_raw_open(f->path);
    assert_int_equal(store_fixture_raw_int(db, "PRAGMA user_version"), 1);
    assert_int_equal(
        store_fixture_raw_int(db, "SELECT count(*) FROM sqlite_master WHERE name IN ('runs',"
                                  " 'cells')"),
        0);
    assert_int_equal(store_fixture_raw_int(db,
                                           "SELECT count(*) FROM pragma_table_info('jobs') WHERE"
                                           " name = 'run_id'"),
                     0);
    sqlite3_close(db);
}

/* A run stored by a version-4 coordinator ran as its spec said: the migration to version 5
 * reads "parallel" from the stored spec. */
static void test_store_migration_to_version_5_takes_parallel_from_the_stored_spec(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    sm_store_close(f->st);
    f->st = NULL;
    /* Back to version 4: its runs table had neither column. */
    sqlite3 *db = store_fixture_raw_open(f->path);
    assert_int_equal(
        sqlite3_exec(db,
                     "DROP TABLE experiments; DROP INDEX runs_schedule;"
                     " ALTER TABLE runs DROP COLUMN schedule_id;"
                     " DROP TABLE schedules;"
                     "DROP TABLE run_fingerprints; DROP TABLE fingerprints; DROP TABLE store_meta;"
                     "ALTER TABLE runs DROP COLUMN parallel;"
                     "ALTER TABLE runs DROP COLUMN parallel_note;"
                     "INSERT INTO runs(name, spec_json, state, created_ms, total) VALUES"
                     " ('a', '{\"name\":\"a\",\"parallel\":false}', 'done', 1, 1),"
                     " ('b', '{\"name\":\"b\",\"parallel\":true}', 'done', 2, 1),"
                     " ('c', '{\"name\":\"c\"}', 'running', 3, 1),"
                     " ('d', 'not json', 'done', 4, 1);"
                     "PRAGMA user_version = 4;",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);

    store_fixture_open(f);
    assert_int_equal(sm_store_schema_version(f->st), 11);
    static const bool want[] = {false, true, true, true};
    for (uint64_t id = 1; id <= 4; id++) {
        sm_run_row r;
        assert_ok(sm_store_run_get(f->st, id, &r, &err));
        assert_int_equal(r.parallel, want[id - 1]);
        assert_string_equal(r.parallel_note, "");
        sm_run_row_fini(&r);
    }
}

static void test_store_migrates_version_3_cells_to_no_stop_and_records_stops(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    uint64_t run = store_fixture_insert_run(f->st, "adaptive", 1000);
    char params[] = "{\"workload\":\"stream\"}";
    sm_cell_row c0 = store_fixture_cell(0, "h1", "", params),
                c1 = store_fixture_cell(1, "h1", "", params);
    assert_ok(sm_store_cell_insert(f->st, run, &c0, &err));
    assert_ok(sm_store_cell_insert(f->st, run, &c1, &err));
    sm_store_close(f->st);
    f->st = NULL;
    /* Back to the version 3 schema: cells without the stopped column. */
    sqlite3 *db = store_fixture_raw_open(f->path);
    assert_int_equal(
        sqlite3_exec(db,
                     "DROP TABLE experiments; DROP INDEX runs_schedule;"
                     " ALTER TABLE runs DROP COLUMN schedule_id;"
                     " DROP TABLE schedules;"
                     "DROP TABLE run_fingerprints; DROP TABLE fingerprints; DROP TABLE store_meta;"
                     " DROP INDEX jobs_run_cell; ALTER TABLE cells DROP COLUMN stopped;"
                     " ALTER TABLE runs DROP COLUMN parallel;"
                     " ALTER TABLE runs DROP COLUMN parallel_note;"
                     " PRAGMA user_version = 3;",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);

    store_fixture_open(f);
    assert_int_equal(sm_store_schema_version(f->st), 11);
    sm_cell_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_cells_list(f->st, run, &rows, &n, &err));
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].stopped, SM_REPS_NONE);
    assert_int_equal(rows[1].stopped, SM_REPS_NONE);
    sm_store_cells_free(rows, n);

    assert_ok(sm_store_cell_set_stopped(f->st, run, 1, SM_REPS_MAX, &err));
    assert_ok(sm_store_cell_set_stopped(f->st, run, 0, SM_REPS_CI, &err));
    assert_int_equal(sm_store_cell_set_stopped(f->st, run, 2, SM_REPS_CI, &err), SM_EINVAL);
    assert_ok(sm_store_cells_list(f->st, run, &rows, &n, &err));
    assert_int_equal(rows[0].stopped, SM_REPS_CI);
    assert_int_equal(rows[1].stopped, SM_REPS_MAX);
    sm_store_cells_free(rows, n);

    /* A round added to an adaptive run raises its total. */
    assert_ok(sm_store_run_set_total(f->st, run, 14, &err));
    sm_run_row r;
    assert_ok(sm_store_run_get(f->st, run, &r, &err));
    assert_int_equal(r.total, 14);
    sm_run_row_fini(&r);
    assert_int_equal(sm_store_run_set_total(f->st, run + 1, 14, &err), SM_EINVAL);
}

#define T(name)                                                                                    \
    cmocka_unit_test_setup_teardown(name, store_fixture_setup_closed, store_fixture_teardown)

int main(void)
{
    /* Every open of a fresh file logs its migration; the tests check the schema directly. */
    sm_log_level = LOG_WARNING;
    const struct CMUnitTest tests[] = {
        T(test_store_refuses_a_newer_schema_version),
        T(test_store_failed_migration_leaves_the_old_schema),
        T(test_store_migrates_a_version_1_database_keeping_jobs_and_results),
        T(test_store_migration_to_version_2_rolls_back_as_a_whole),
        T(test_store_migration_to_version_5_takes_parallel_from_the_stored_spec),
        T(test_store_migrates_version_3_cells_to_no_stop_and_records_stops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
