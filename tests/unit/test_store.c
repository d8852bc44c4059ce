/* Unit tests of coordinator/store on a real SQLite file: schema, agents, jobs, results,
 * transactions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "coordinator/store.h"
#include "proto/log.h"

typedef struct fixture {
    char dir[64];
    char path[128];
    sm_store *st;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (f == NULL)
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/sm_store_XXXXXX");
    if (mkdtemp(f->dir) == NULL) {
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof f->path, "%s/sm.db", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sm_store_close(f->st);
    const char *suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        char p[160];
        snprintf(p, sizeof p, "%s%s", f->path, suffixes[i]);
        unlink(p);
    }
    rmdir(f->dir);
    free(f);
    return 0;
}

#define assert_ok(expr) check_ok((expr), &err, #expr, __FILE__, __LINE__)

static void check_ok(int rc, const sm_error *err, const char *expr, const char *file, int line)
{
    if (rc != 0) {
        print_error("%s = %d: %s\n", expr, rc, err->msg);
        _fail(file, line);
    }
}

static void open_store(fixture *f)
{
    sm_error err;
    sm_error_clear(&err);
    sm_store_close(f->st);
    f->st = NULL;
    assert_ok(sm_store_open(&f->st, f->path, &err));
    assert_non_null(f->st);
}

/* A second, independent connection, to see what really reached the file. */
static sqlite3 *raw_open(const char *path)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL),
                     SQLITE_OK);
    return db;
}

static int64_t raw_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

static void raw_text(sqlite3 *db, const char *sql, char *out, size_t size)
{
    sqlite3_stmt *s = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    const unsigned char *t = sqlite3_column_text(s, 0);
    snprintf(out, size, "%s", t ? (const char *)t : "(null)");
    sqlite3_finalize(s);
}

static sm_agent_row agent(const char *name, int64_t seen_ms, char *facts_json)
{
    sm_agent_row a;
    memset(&a, 0, sizeof a);
    snprintf(a.name, sizeof a.name, "%s", name);
    snprintf(a.boot, sizeof a.boot, "boot-%s", name);
    snprintf(a.data_addr, sizeof a.data_addr, "10.0.0.1");
    a.labels_json = "{\"rack\":\"2\"}";
    a.facts_json = facts_json;
    a.first_seen_ms = seen_ms;
    a.last_seen_ms = seen_ms;
    a.status = SM_AGENT_ONLINE;
    return a;
}

static uint64_t insert_job(sm_store *st, const char *host, int64_t now_ms)
{
    sm_error err;
    uint64_t id = 0;
    assert_ok(sm_store_job_insert(st, host, "{\"workload\":\"stream\"}", now_ms, &id, &err));
    return id;
}

static sm_result_cols cols_ok(void)
{
    sm_result_cols c = {.bytes = 1048576,
                        .seconds = 0.5,
                        .throughput_MBps = 2.0,
                        .rtt_p50_us = NAN,
                        .connects_per_s = NAN,
                        .ok = true};
    return c;
}

static uint64_t result_count(sm_store *st)
{
    sm_error err;
    uint64_t n = 99;
    assert_ok(sm_store_result_count(st, &n, &err));
    return n;
}

static void test_store_open_creates_schema_version_1_in_wal_mode(void **state)
{
    fixture *f = *state;
    open_store(f);
    assert_int_equal(sm_store_schema_version(f->st), 1);

    sqlite3 *db = raw_open(f->path);
    char mode[16];
    raw_text(db, "PRAGMA journal_mode", mode, sizeof mode);
    assert_string_equal(mode, "wal");
    assert_int_equal(raw_int(db, "PRAGMA user_version"), 1);
    assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND"
                                 " name IN ('agents', 'jobs', 'results', 'events')"),
                     4);
    assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND"
                                 " name IN ('jobs_state', 'jobs_host_state')"),
                     2);
    sqlite3_close(db);
}

static void test_store_reopen_keeps_data_and_version(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t id = insert_job(f->st, "h1", 1000);
    sm_agent_row a = agent("h1", 1000, "{\"cores\":4}");
    assert_ok(sm_store_agent_upsert(f->st, &a, &err));

    open_store(f);
    assert_int_equal(sm_store_schema_version(f->st), 1);
    sm_job_row j;
    assert_ok(sm_store_job_get(f->st, id, &j, &err));
    assert_string_equal(j.host, "h1");
    sm_job_row_fini(&j);
    sm_agent_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_agents_list(f->st, &rows, &n, &err));
    assert_int_equal(n, 1);
    assert_string_equal(rows[0].facts_json, "{\"cores\":4}");
    sm_store_agents_free(rows, n);
}

static void test_store_refuses_a_newer_schema_version(void **state)
{
    fixture *f = *state;
    sqlite3 *db = raw_open(f->path);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);

    sm_error err;
    sm_error_clear(&err);
    sm_store *st = NULL;
    assert_int_equal(sm_store_open(&st, f->path, &err), SM_EINVAL);
    assert_null(st);
    assert_int_equal(err.code, SM_EINVAL);
    assert_string_equal(err.msg, "database schema version 99 is newer than this coordinator (1)");

    db = raw_open(f->path);
    assert_int_equal(raw_int(db, "PRAGMA user_version"), 99);
    assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master"), 0);
    sqlite3_close(db);
}

static void test_store_failed_migration_leaves_the_old_schema(void **state)
{
    fixture *f = *state;
    sqlite3 *db = raw_open(f->path);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE agents(x)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);

    sm_error err;
    sm_error_clear(&err);
    sm_store *st = NULL;
    assert_int_equal(sm_store_open(&st, f->path, &err), SM_ESYS);
    assert_null(st);
    assert_string_equal(err.msg, "migration from schema version 0: table agents already exists");

    db = raw_open(f->path);
    assert_int_equal(raw_int(db, "PRAGMA user_version"), 0);
    assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'jobs'"), 0);
    sqlite3_close(db);
}

static void test_store_open_of_an_unreachable_path_fails_with_reason(void **state)
{
    fixture *f = *state;
    char path[200];
    snprintf(path, sizeof path, "%s/missing/sm.db", f->dir);
    sm_error err;
    sm_error_clear(&err);
    sm_store *st = NULL;
    assert_int_equal(sm_store_open(&st, path, &err), SM_ESYS);
    assert_null(st);
    assert_non_null(strstr(err.msg, "unable to open database file"));
}

static void test_store_agent_upsert_keeps_first_seen_and_null_facts_keep_old(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    sm_agent_row a = agent("h1", 1000, "{\"cores\":4}");
    assert_ok(sm_store_agent_upsert(f->st, &a, &err));

    sm_agent_row b = agent("h1", 5000, NULL);
    snprintf(b.boot, sizeof b.boot, "boot-2");
    snprintf(b.data_addr, sizeof b.data_addr, "10.0.0.9");
    b.labels_json = "{\"rack\":\"3\"}";
    b.status = SM_AGENT_STATUS_BUSY;
    assert_ok(sm_store_agent_upsert(f->st, &b, &err));

    sm_agent_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_agents_list(f->st, &rows, &n, &err));
    assert_int_equal(n, 1);
    assert_string_equal(rows[0].name, "h1");
    assert_string_equal(rows[0].boot, "boot-2");
    assert_string_equal(rows[0].data_addr, "10.0.0.9");
    assert_string_equal(rows[0].labels_json, "{\"rack\":\"3\"}");
    assert_string_equal(rows[0].facts_json, "{\"cores\":4}");
    assert_int_equal(rows[0].first_seen_ms, 1000);
    assert_int_equal(rows[0].last_seen_ms, 5000);
    assert_int_equal(rows[0].status, SM_AGENT_STATUS_BUSY);
    sm_store_agents_free(rows, n);

    sm_agent_row c = agent("h1", 6000, "{\"cores\":8}");
    assert_ok(sm_store_agent_upsert(f->st, &c, &err));
    assert_ok(sm_store_agents_list(f->st, &rows, &n, &err));
    assert_string_equal(rows[0].facts_json, "{\"cores\":8}");
    assert_int_equal(rows[0].first_seen_ms, 1000);
    sm_store_agents_free(rows, n);
}

static void test_store_agent_without_facts_reads_back_null_facts(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    sm_agent_row a = agent("h1", 1000, NULL);
    assert_ok(sm_store_agent_upsert(f->st, &a, &err));
    sm_agent_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_agents_list(f->st, &rows, &n, &err));
    assert_int_equal(n, 1);
    assert_null(rows[0].facts_json);
    assert_string_equal(rows[0].labels_json, "{\"rack\":\"2\"}");
    sm_store_agents_free(rows, n);
}

static void test_store_agents_list_is_sorted_by_name(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    const char *names[] = {"charlie", "alpha", "delta", "bravo"};
    for (size_t i = 0; i < 4; i++) {
        sm_agent_row a = agent(names[i], 1000 + (int64_t)i, NULL);
        assert_ok(sm_store_agent_upsert(f->st, &a, &err));
    }
    sm_agent_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_agents_list(f->st, &rows, &n, &err));
    assert_int_equal(n, 4);
    assert_string_equal(rows[0].name, "alpha");
    assert_string_equal(rows[1].name, "bravo");
    assert_string_equal(rows[2].name, "charlie");
    assert_string_equal(rows[3].name, "delta");
    sm_store_agents_free(rows, n);
}

static void test_store_agents_list_of_empty_store_is_empty(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    sm_agent_row sentinel;
    sm_agent_row *rows = &sentinel;
    size_t n = 7;
    assert_ok(sm_store_agents_list(f->st, &rows, &n, &err));
    assert_int_equal(n, 0);
    assert_null(rows);
    sm_store_agents_free(rows, n);
}

static void test_store_agent_set_status_stamps_last_seen_except_when_lost(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    sm_agent_row a = agent("h1", 1000, NULL);
    assert_ok(sm_store_agent_upsert(f->st, &a, &err));

    assert_ok(sm_store_agent_set_status(f->st, "h1", SM_AGENT_STATUS_BUSY, 2000, &err));
    sm_agent_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_agents_list(f->st, &rows, &n, &err));
    assert_int_equal(rows[0].status, SM_AGENT_STATUS_BUSY);
    assert_int_equal(rows[0].last_seen_ms, 2000);
    sm_store_agents_free(rows, n);

    assert_ok(sm_store_agent_set_status(f->st, "h1", SM_AGENT_LOST, 17000, &err));
    assert_ok(sm_store_agents_list(f->st, &rows, &n, &err));
    assert_int_equal(rows[0].status, SM_AGENT_LOST);
    assert_int_equal(rows[0].last_seen_ms, 2000);
    assert_int_equal(rows[0].first_seen_ms, 1000);
    sm_store_agents_free(rows, n);

    sqlite3 *db = raw_open(f->path);
    char status[16];
    raw_text(db, "SELECT status FROM agents WHERE name = 'h1'", status, sizeof status);
    assert_string_equal(status, "lost");
    sqlite3_close(db);
}

static void test_store_agent_set_status_of_unknown_agent_is_einval(void **state)
{
    fixture *f = *state;
    sm_error err;
    sm_error_clear(&err);
    open_store(f);
    assert_int_equal(sm_store_agent_set_status(f->st, "nobody", SM_AGENT_LOST, 1, &err), SM_EINVAL);
    assert_string_equal(err.msg, "no agent named nobody");
}

static void test_store_job_moves_through_states_with_timestamps(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t id = insert_job(f->st, "h1", 1000);
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

    sqlite3 *db = raw_open(f->path);
    char name[16];
    raw_text(db, "SELECT state FROM jobs", name, sizeof name);
    assert_string_equal(name, "done");
    sqlite3_close(db);
}

static void test_store_job_failed_stamps_finished_and_retry_clears_stamps(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t id = insert_job(f->st, "h1", 1000);
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
    open_store(f);
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
    open_store(f);
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
    open_store(f);
    uint64_t a = insert_job(f->st, "h1", 1000);
    uint64_t b = insert_job(f->st, "h2", 1001);
    uint64_t c = insert_job(f->st, "h3", 1002);
    uint64_t d = insert_job(f->st, "h4", 1003);
    uint64_t e = insert_job(f->st, "h5", 1004);
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

static void test_store_result_inserted_twice_is_stored_once(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t id = insert_job(f->st, "h1", 1000);
    sm_result_cols c = cols_ok();
    bool inserted = false;
    assert_ok(
        sm_store_result_insert(f->st, id, 1, "h1", "{\"ok\":true}", &c, 2000, &inserted, &err));
    assert_true(inserted);
    assert_ok(
        sm_store_result_insert(f->st, id, 1, "h1", "{\"ok\":\"dup\"}", &c, 3000, &inserted, &err));
    assert_false(inserted);
    assert_int_equal(result_count(f->st), 1);

    char *json = NULL;
    assert_ok(sm_store_result_get(f->st, id, 1, &json, &err));
    assert_string_equal(json, "{\"ok\":true}");
    free(json);

    /* Another attempt of the same job is a different result. */
    assert_ok(sm_store_result_insert(f->st, id, 2, "h1", "{}", &c, 4000, &inserted, &err));
    assert_true(inserted);
    assert_int_equal(result_count(f->st), 2);
}

static void test_store_result_stores_nan_metrics_as_null(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t id = insert_job(f->st, "h1", 1000);
    sm_result_cols c = cols_ok();
    bool inserted = false;
    assert_ok(sm_store_result_insert(f->st, id, 1, "h1", "{}", &c, 2000, &inserted, &err));

    sqlite3 *db = raw_open(f->path);
    assert_int_equal(raw_int(db, "SELECT rtt_p50_us IS NULL AND connects_per_s IS NULL"
                                 " FROM results"),
                     1);
    assert_int_equal(raw_int(db, "SELECT bytes = 1048576 AND seconds = 0.5 AND"
                                 " throughput_MBps = 2.0 AND ok = 1 AND stored_ms = 2000"
                                 " AND agent = 'h1' FROM results"),
                     1);
    sqlite3_close(db);
}

static void test_store_result_for_missing_job_is_refused(void **state)
{
    fixture *f = *state;
    sm_error err;
    sm_error_clear(&err);
    open_store(f);
    sm_result_cols c = cols_ok();
    bool inserted = true;
    assert_int_equal(sm_store_result_insert(f->st, 77, 1, "h1", "{}", &c, 2000, &inserted, &err),
                     SM_EINVAL);
    assert_int_equal(err.code, SM_EINVAL);
    assert_non_null(strstr(err.msg, "FOREIGN KEY constraint failed"));
    assert_non_null(strstr(err.msg, "job 77"));
    assert_int_equal(result_count(f->st), 0);
}

static void test_store_rollback_discards_results_of_the_transaction(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t id = insert_job(f->st, "h1", 1000);
    sm_result_cols c = cols_ok();
    bool inserted = false;
    assert_ok(sm_store_begin(f->st, &err));
    assert_ok(sm_store_result_insert(f->st, id, 1, "h1", "{}", &c, 2000, &inserted, &err));
    assert_ok(sm_store_result_insert(f->st, id, 2, "h1", "{}", &c, 2000, &inserted, &err));
    assert_int_equal(result_count(f->st), 2);
    sm_store_rollback(f->st);
    assert_int_equal(result_count(f->st), 0);

    char *json = (char *)"untouched";
    assert_ok(sm_store_result_get(f->st, id, 1, &json, &err));
    assert_null(json);

    /* Nothing to roll back is harmless. */
    sm_store_rollback(f->st);
    assert_ok(sm_store_begin(f->st, &err));
    sm_store_rollback(f->st);
}

static void test_store_commit_keeps_results_across_reopen(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t id = insert_job(f->st, "h1", 1000);
    sm_result_cols c = cols_ok();
    bool inserted = false;
    assert_ok(sm_store_begin(f->st, &err));
    assert_ok(sm_store_result_insert(f->st, id, 1, "h1", "{\"n\":1}", &c, 2000, &inserted, &err));
    assert_ok(sm_store_result_insert(f->st, id, 2, "h1", "{\"n\":2}", &c, 2000, &inserted, &err));
    assert_ok(sm_store_commit(f->st, &err));

    open_store(f);
    assert_int_equal(result_count(f->st), 2);
    char *json = NULL;
    assert_ok(sm_store_result_get(f->st, id, 2, &json, &err));
    assert_string_equal(json, "{\"n\":2}");
    free(json);
}

static void test_store_a_failed_insert_leaves_the_transaction_usable(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t id = insert_job(f->st, "h1", 1000);
    sm_result_cols c = cols_ok();
    bool inserted = false;
    assert_ok(sm_store_begin(f->st, &err));
    assert_ok(sm_store_result_insert(f->st, id, 1, "h1", "{}", &c, 2000, &inserted, &err));
    assert_int_equal(
        sm_store_result_insert(f->st, id + 1, 1, "h1", "{}", &c, 2000, &inserted, &err), SM_EINVAL);
    assert_ok(sm_store_commit(f->st, &err));
    assert_int_equal(result_count(f->st), 1);
}

static void test_store_begin_inside_a_transaction_fails(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    assert_ok(sm_store_begin(f->st, &err));
    sm_error_clear(&err);
    assert_int_equal(sm_store_begin(f->st, &err), SM_ESYS);
    assert_non_null(strstr(err.msg, "within a transaction"));
    sm_store_rollback(f->st);
    sm_error_clear(&err);
    assert_int_equal(sm_store_commit(f->st, &err), SM_ESYS);
    assert_non_null(strstr(err.msg, "no transaction is active"));
}

static void test_store_result_get_of_missing_result_is_null(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    char *json = (char *)"untouched";
    assert_ok(sm_store_result_get(f->st, 5, 1, &json, &err));
    assert_null(json);
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
    sm_store_close(NULL);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    /* Every open of a fresh file logs its migration; the tests check the schema directly. */
    sm_log_level = LOG_WARNING;
    const struct CMUnitTest tests[] = {
        T(test_store_open_creates_schema_version_1_in_wal_mode),
        T(test_store_reopen_keeps_data_and_version),
        T(test_store_refuses_a_newer_schema_version),
        T(test_store_failed_migration_leaves_the_old_schema),
        T(test_store_open_of_an_unreachable_path_fails_with_reason),
        T(test_store_agent_upsert_keeps_first_seen_and_null_facts_keep_old),
        T(test_store_agent_without_facts_reads_back_null_facts),
        T(test_store_agents_list_is_sorted_by_name),
        T(test_store_agents_list_of_empty_store_is_empty),
        T(test_store_agent_set_status_stamps_last_seen_except_when_lost),
        T(test_store_agent_set_status_of_unknown_agent_is_einval),
        T(test_store_job_moves_through_states_with_timestamps),
        T(test_store_job_failed_stamps_finished_and_retry_clears_stamps),
        T(test_store_unknown_job_id_is_einval),
        T(test_store_job_insert_rejects_bad_host),
        T(test_store_jobs_unfinished_lists_open_jobs_oldest_first),
        T(test_store_result_inserted_twice_is_stored_once),
        T(test_store_result_stores_nan_metrics_as_null),
        T(test_store_result_for_missing_job_is_refused),
        T(test_store_rollback_discards_results_of_the_transaction),
        T(test_store_commit_keeps_results_across_reopen),
        T(test_store_a_failed_insert_leaves_the_transaction_usable),
        T(test_store_begin_inside_a_transaction_fails),
        T(test_store_result_get_of_missing_result_is_null),
        T(test_store_names_of_states),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
