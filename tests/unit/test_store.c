/* Unit tests of coordinator/store on a real SQLite file: schema and its migrations, agents,
 * jobs, results, transactions, matrix runs. */
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
#include "store_fixture.h"
#include "proto/clock.h"
#include "proto/log.h"

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

static bool is_store_id(const char *s)
{
    return strlen(s) == 32 && strspn(s, "0123456789abcdef") == 32;
}

static void test_store_open_creates_the_current_schema_in_wal_mode(void **state)
{
    fixture *f = *state;
    open_store(f);
    assert_int_equal(sm_store_schema_version(f->st), 9);

    sqlite3 *db = raw_open(f->path);
    char mode[16];
    raw_text(db, "PRAGMA journal_mode", mode, sizeof mode);
    assert_string_equal(mode, "wal");
    assert_int_equal(raw_int(db, "PRAGMA user_version"), 9);
    assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND"
                                 " name IN ('agents', 'jobs', 'results', 'events', 'runs',"
                                 " 'cells')"),
                     6);
    assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND"
                                 " name IN ('jobs_state', 'jobs_host_state', 'jobs_run')"),
                     3);
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
    assert_int_equal(sm_store_schema_version(f->st), 9);
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
    assert_string_equal(err.msg, "database schema version 99 is newer than this coordinator (9)");

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

static mode_t mode_of(const char *path, const char *suffix)
{
    char p[192];
    struct stat sb;
    snprintf(p, sizeof p, "%s%s", path, suffix);
    if (stat(p, &sb) != 0)
        fail_msg("stat %s: %s", p, strerror(errno));
    return sb.st_mode & 07777;
}

/* The store holds every result and the fleet's addresses: its files are the coordinator's
 * alone whatever umask it was started with (0644 under the usual 022 before). */
static void test_store_files_are_0600_under_any_umask(void **state)
{
    fixture *f = *state;
    sm_error err;
    const mode_t masks[] = {022, 0, 0277};
    for (size_t i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        const mode_t old = umask(masks[i]);
        open_store(f);
        /* A write makes the -wal and -shm files next to the database. */
        sm_agent_row a = agent("h1", 1000, "{\"cores\":4}");
        assert_ok(sm_store_agent_upsert(f->st, &a, &err));
        umask(old);
        assert_int_equal(mode_of(f->path, ""), 0600);
        assert_int_equal(mode_of(f->path, "-wal"), 0600);
        assert_int_equal(mode_of(f->path, "-shm"), 0600);
        sm_store_close(f->st);
        f->st = NULL;
        const char *suffixes[] = {"", "-wal", "-shm"};
        for (size_t k = 0; k < 3; k++) {
            char p[192];
            snprintf(p, sizeof p, "%s%s", f->path, suffixes[k]);
            unlink(p);
        }
    }
    /* A store made before keeps the mode it has (the operator's to change), and opens. */
    FILE *fp = fopen(f->path, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(chmod(f->path, 0640), 0);
    open_store(f);
    assert_int_equal(mode_of(f->path, ""), 0640);
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

static void test_store_agent_get_reads_one_agent_by_name_or_says_there_is_none(void **state)
{
    fixture *f = *state;
    sm_error err = {0};
    open_store(f);
    const char *names[] = {"alpha", "bravo"};
    for (size_t i = 0; i < 2; i++) {
        sm_agent_row a = agent(names[i], 1000 + (int64_t)i, NULL);
        assert_ok(sm_store_agent_upsert(f->st, &a, &err));
    }
    sm_agent_row row;
    assert_ok(sm_store_agent_get(f->st, "bravo", &row, &err));
    assert_string_equal(row.name, "bravo");
    assert_int_equal(row.first_seen_ms, 1001);
    sm_agent_row_fini(&row);
    assert_int_equal(sm_store_agent_get(f->st, "charlie", &row, &err), SM_EINVAL);
    assert_string_equal(err.msg, "no agent named charlie");
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
    sqlite3 *db = raw_open(f->path);
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

    open_store(f);
    assert_int_equal(sm_store_schema_version(f->st), 9);

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
    assert_int_equal(result_count(f->st), 1);

    /* AUTOINCREMENT goes on after the migrated jobs. */
    assert_int_equal(insert_job(f->st, "h3", 5000), 9);
    /* A store from before identities gets one when migrated. */
    assert_true(is_store_id(sm_store_id(f->st)));

    db = raw_open(f->path);
    assert_int_equal(raw_int(db, "PRAGMA user_version"), 9);
    assert_int_equal(raw_int(db, "SELECT count(*) FROM pragma_table_info('jobs') WHERE name IN"
                                 " ('run_id', 'cell', 'rep', 'warmup', 'round', 'ord', 'peer')"),
                     7);
    assert_int_equal(raw_int(db, "SELECT count(*) FROM pragma_table_info('runs')"), 13);
    assert_int_equal(raw_int(db, "SELECT count(*) FROM pragma_table_info('cells')"), 8);
    assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND"
                                 " name = 'jobs_run'"),
                     1);
    assert_int_equal(raw_int(db, "SELECT count(*) FROM jobs WHERE run_id IS NULL"), 3);
    sqlite3_close(db);
}

static void test_store_migration_to_version_2_rolls_back_as_a_whole(void **state)
{
    fixture *f = *state;
    sqlite3 *db = raw_open(f->path);
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

    db = raw_open(f->path);
    assert_int_equal(raw_int(db, "PRAGMA user_version"), 1);
    assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_master WHERE name IN ('runs',"
                                 " 'cells')"),
                     0);
    assert_int_equal(raw_int(db, "SELECT count(*) FROM pragma_table_info('jobs') WHERE"
                                 " name = 'run_id'"),
                     0);
    sqlite3_close(db);
}

static uint64_t insert_run(sm_store *st, const char *name, int64_t now_ms)
{
    sm_error err;
    uint64_t id = 0;
    assert_ok(sm_store_run_insert(st, name, "{\"name\":\"x\"}", 12, now_ms, &id, &err));
    return id;
}

static void test_store_run_insert_and_get_round_trip(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t id = 0;
    assert_ok(
        sm_store_run_insert(f->st, "tcp-vs-unix", "{\"repetitions\":5}", 40, 1000, &id, &err));
    assert_int_equal(id, 1);

    sm_run_row r;
    assert_ok(sm_store_run_get(f->st, id, &r, &err));
    assert_int_equal(r.id, id);
    assert_string_equal(r.name, "tcp-vs-unix");
    assert_string_equal(r.spec_json, "{\"repetitions\":5}");
    assert_int_equal(r.state, SM_RUN_RUNNING);
    assert_string_equal(r.reason, "");
    assert_int_equal(r.created_ms, 1000);
    assert_int_equal(r.finished_ms, 0);
    assert_int_equal(r.total, 40);
    assert_int_equal(r.done, 0);
    assert_int_equal(r.failed, 0);
    sm_run_row_fini(&r);
    sm_run_row_fini(&r);
    sm_run_row_fini(NULL);

    sqlite3 *db = raw_open(f->path);
    char text[32];
    raw_text(db, "SELECT state FROM runs", text, sizeof text);
    assert_string_equal(text, "running");
    sqlite3_close(db);
}

static void test_store_run_insert_rejects_bad_name_and_missing_spec(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t id = 0;
    char long_name[80];
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    sm_error_clear(&err);
    assert_int_equal(sm_store_run_insert(f->st, long_name, "{}", 1, 1, &id, &err), SM_EINVAL);
    assert_string_equal(err.msg, "run: name must be 1 to 64 bytes");
    assert_int_equal(sm_store_run_insert(f->st, "", "{}", 1, 1, &id, &err), SM_EINVAL);
    assert_int_equal(sm_store_run_insert(f->st, NULL, "{}", 1, 1, &id, &err), SM_EINVAL);
    sm_error_clear(&err);
    assert_int_equal(sm_store_run_insert(f->st, "r", NULL, 1, 1, &id, &err), SM_EINVAL);
    assert_string_equal(err.msg, "run r: no spec");
    assert_int_equal(id, 0);
}

static void test_store_unknown_run_id_is_einval(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    sm_run_row r;
    sm_error_clear(&err);
    assert_int_equal(sm_store_run_get(f->st, 42, &r, &err), SM_EINVAL);
    assert_string_equal(err.msg, "no run 42");
    sm_error_clear(&err);
    assert_int_equal(sm_store_run_update(f->st, 42, SM_RUN_DONE, "", 1, 0, 5, &err), SM_EINVAL);
    assert_string_equal(err.msg, "no run 42");
    sm_error_clear(&err);
    assert_int_equal(sm_store_run_get(f->st, UINT64_MAX, &r, &err), SM_EINVAL);
    assert_string_equal(err.msg, "run id 18446744073709551615 out of range");

    sm_cell_row *cells = NULL;
    sm_job_row *jobs = NULL;
    sm_run_result *results = NULL;
    size_t n = 9;
    sm_error_clear(&err);
    assert_int_equal(sm_store_cells_list(f->st, 42, &cells, &n, &err), SM_EINVAL);
    assert_string_equal(err.msg, "no run 42");
    sm_error_clear(&err);
    assert_int_equal(sm_store_run_jobs(f->st, 42, &jobs, &n, &err), SM_EINVAL);
    assert_string_equal(err.msg, "no run 42");
    sm_error_clear(&err);
    assert_int_equal(sm_store_run_results(f->st, 42, &results, &n, &err), SM_EINVAL);
    assert_string_equal(err.msg, "no run 42");
    assert_null(cells);
    assert_null(jobs);
    assert_null(results);
    assert_int_equal(n, 9);
}

static void test_store_run_keeps_how_its_jobs_go_and_why(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t id = insert_run(f->st, "lab", 1000);
    sm_run_row r;
    assert_ok(sm_store_run_get(f->st, id, &r, &err));
    assert_true(r.parallel); /* until the coordinator says otherwise */
    assert_string_equal(r.parallel_note, "");
    sm_run_row_fini(&r);

    assert_ok(sm_store_run_set_parallel(f->st, id, false, "h1, h2 share one machine", &err));
    sm_run_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_runs_list(f->st, 10, &rows, &n, &err));
    assert_int_equal(n, 1);
    assert_false(rows[0].parallel);
    assert_string_equal(rows[0].parallel_note, "h1, h2 share one machine");
    sm_store_runs_free(rows, n);

    char note[600];
    memset(note, 'n', sizeof note - 1);
    note[sizeof note - 1] = '\0';
    sm_error_clear(&err);
    assert_int_equal(sm_store_run_set_parallel(f->st, id, true, note, &err), SM_EINVAL);
    assert_string_equal(err.msg, "run 1: parallel note longer than 511 bytes");
    sm_error_clear(&err);
    assert_int_equal(sm_store_run_set_parallel(f->st, 42, true, "", &err), SM_EINVAL);
    assert_string_equal(err.msg, "no run 42");
    assert_ok(sm_store_run_get(f->st, id, &r, &err));
    assert_false(r.parallel); /* the refused calls changed nothing */
    sm_run_row_fini(&r);
}

/* A run stored by a version-4 coordinator ran as its spec said: the migration to version 5
 * reads "parallel" from the stored spec. */
static void test_store_migration_to_version_5_takes_parallel_from_the_stored_spec(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    sm_store_close(f->st);
    f->st = NULL;
    /* Back to version 4: its runs table had neither column. */
    sqlite3 *db = raw_open(f->path);
    assert_int_equal(
        sqlite3_exec(db,
                     "DROP INDEX runs_schedule; ALTER TABLE runs DROP COLUMN schedule_id;"
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

    open_store(f);
    assert_int_equal(sm_store_schema_version(f->st), 9);
    static const bool want[] = {false, true, true, true};
    for (uint64_t id = 1; id <= 4; id++) {
        sm_run_row r;
        assert_ok(sm_store_run_get(f->st, id, &r, &err));
        assert_int_equal(r.parallel, want[id - 1]);
        assert_string_equal(r.parallel_note, "");
        sm_run_row_fini(&r);
    }
}

static void test_store_runs_list_is_newest_first_within_the_limit(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t a = insert_run(f->st, "a", 1000);
    uint64_t b = insert_run(f->st, "b", 3000);
    /* An earlier wall clock does not reorder: the id says which run is newer. */
    uint64_t c = insert_run(f->st, "c", 2000);

    sm_run_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_runs_list(f->st, 2, &rows, &n, &err));
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].id, c);
    assert_string_equal(rows[0].name, "c");
    assert_null(rows[0].spec_json);
    assert_int_equal(rows[0].total, 12);
    assert_int_equal(rows[0].created_ms, 2000);
    assert_int_equal(rows[1].id, b);
    assert_null(rows[1].spec_json);
    sm_store_runs_free(rows, n);

    assert_ok(sm_store_runs_list(f->st, SIZE_MAX, &rows, &n, &err));
    assert_int_equal(n, 3);
    assert_int_equal(rows[2].id, a);
    sm_store_runs_free(rows, n);

    assert_ok(sm_store_runs_list(f->st, 0, &rows, &n, &err));
    assert_int_equal(n, 0);
    assert_null(rows);
    sm_store_runs_free(rows, n);
}

static void test_store_run_update_stamps_reason_and_finish_only_when_terminal(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t id = insert_run(f->st, "r", 1000);

    /* Progress: counts only; the reason of a running run stays empty. */
    assert_ok(sm_store_run_update(f->st, id, SM_RUN_RUNNING, "ignored", 3, 1, 2000, &err));
    sm_run_row r;
    assert_ok(sm_store_run_get(f->st, id, &r, &err));
    assert_int_equal(r.state, SM_RUN_RUNNING);
    assert_int_equal(r.done, 3);
    assert_int_equal(r.failed, 1);
    assert_string_equal(r.reason, "");
    assert_int_equal(r.finished_ms, 0);
    sm_run_row_fini(&r);

    assert_ok(sm_store_run_update(f->st, id, SM_RUN_FAILED, "2 jobs failed", 10, 2, 9000, &err));
    assert_ok(sm_store_run_get(f->st, id, &r, &err));
    assert_int_equal(r.state, SM_RUN_FAILED);
    assert_int_equal(r.done, 10);
    assert_int_equal(r.failed, 2);
    assert_string_equal(r.reason, "2 jobs failed");
    assert_int_equal(r.finished_ms, 9000);
    assert_int_equal(r.created_ms, 1000);
    assert_int_equal(r.total, 12);
    sm_run_row_fini(&r);

    uint64_t other = insert_run(f->st, "s", 1000);
    assert_ok(sm_store_run_update(f->st, other, SM_RUN_CANCELLED, NULL, 0, 0, 4000, &err));
    assert_ok(sm_store_run_get(f->st, other, &r, &err));
    assert_int_equal(r.state, SM_RUN_CANCELLED);
    assert_string_equal(r.reason, "");
    assert_int_equal(r.finished_ms, 4000);
    sm_run_row_fini(&r);

    sqlite3 *db = raw_open(f->path);
    char text[32];
    raw_text(db, "SELECT group_concat(state, ',') FROM (SELECT state FROM runs ORDER BY id)", text,
             sizeof text);
    assert_string_equal(text, "failed,cancelled");
    sqlite3_close(db);

    sm_error_clear(&err);
    assert_int_equal(sm_store_run_update(f->st, id, (sm_run_state)9, "", 0, 0, 1, &err), SM_EINVAL);
    char long_reason[300];
    memset(long_reason, 'r', sizeof long_reason - 1);
    long_reason[sizeof long_reason - 1] = '\0';
    assert_int_equal(sm_store_run_update(f->st, id, SM_RUN_DONE, long_reason, 0, 0, 1, &err),
                     SM_EINVAL);
}

static void test_store_runs_running_lists_open_runs_oldest_first_with_spec(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t a = insert_run(f->st, "a", 1000);
    uint64_t b = insert_run(f->st, "b", 1001);
    uint64_t c = insert_run(f->st, "c", 1002);
    uint64_t d = insert_run(f->st, "d", 1003);
    assert_ok(sm_store_run_update(f->st, a, SM_RUN_DONE, "", 12, 0, 2000, &err));
    assert_ok(sm_store_run_update(f->st, c, SM_RUN_CANCELLED, "by user", 1, 0, 2000, &err));
    assert_ok(sm_store_run_update(f->st, d, SM_RUN_RUNNING, "", 4, 0, 2000, &err));

    sm_run_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_runs_running(f->st, &rows, &n, &err));
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].id, b);
    assert_string_equal(rows[0].spec_json, "{\"name\":\"x\"}");
    assert_int_equal(rows[1].id, d);
    assert_int_equal(rows[1].done, 4);
    sm_store_runs_free(rows, n);
}

static sm_cell_row cell(uint32_t idx, const char *host, const char *peer, char *params)
{
    sm_cell_row c;
    memset(&c, 0, sizeof c);
    c.idx = idx;
    c.test = idx / 2;
    c.variant = idx % 2;
    snprintf(c.host, sizeof c.host, "%s", host);
    snprintf(c.peer, sizeof c.peer, "%s", peer);
    c.params_json = params;
    return c;
}

static void test_store_migrates_version_3_cells_to_no_stop_and_records_stops(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t run = insert_run(f->st, "adaptive", 1000);
    char params[] = "{\"workload\":\"stream\"}";
    sm_cell_row c0 = cell(0, "h1", "", params), c1 = cell(1, "h1", "", params);
    assert_ok(sm_store_cell_insert(f->st, run, &c0, &err));
    assert_ok(sm_store_cell_insert(f->st, run, &c1, &err));
    sm_store_close(f->st);
    f->st = NULL;
    /* Back to the version 3 schema: cells without the stopped column. */
    sqlite3 *db = raw_open(f->path);
    assert_int_equal(
        sqlite3_exec(db,
                     "DROP INDEX runs_schedule; ALTER TABLE runs DROP COLUMN schedule_id;"
                     " DROP TABLE schedules;"
                     "DROP TABLE run_fingerprints; DROP TABLE fingerprints; DROP TABLE store_meta;"
                     " DROP INDEX jobs_run_cell; ALTER TABLE cells DROP COLUMN stopped;"
                     " ALTER TABLE runs DROP COLUMN parallel;"
                     " ALTER TABLE runs DROP COLUMN parallel_note;"
                     " PRAGMA user_version = 3;",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);

    open_store(f);
    assert_int_equal(sm_store_schema_version(f->st), 9);
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

static void test_store_cell_results_are_the_measured_current_attempts_of_one_cell(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t run = insert_run(f->st, "adaptive", 1000);
    char params[] = "{\"workload\":\"stream\"}";
    sm_cell_row c0 = cell(0, "h1", "", params), c1 = cell(1, "h1", "", params);
    assert_ok(sm_store_cell_insert(f->st, run, &c0, &err));
    assert_ok(sm_store_cell_insert(f->st, run, &c1, &err));
    /* cell 0: a warm-up and two measured jobs; cell 1: one measured job. */
    const struct {
        uint32_t cell, rep;
        bool warmup;
        const char *json;
    } jobs[] = {{0, 0, true, "{\"w\":1}"},
                {0, 0, false, "{\"m\":0}"},
                {1, 0, false, "{\"other\":1}"},
                {0, 1, false, "{\"m\":1}"}};
    for (uint32_t i = 0; i < 4; i++) {
        sm_job_row j;
        memset(&j, 0, sizeof j);
        snprintf(j.host, sizeof j.host, "h1");
        j.params_json = params;
        j.run_id = run;
        j.cell = jobs[i].cell;
        j.rep = jobs[i].rep;
        j.warmup = jobs[i].warmup;
        j.ord = i;
        uint64_t id;
        assert_ok(sm_store_job_insert_run(f->st, &j, 1000, &id, &err));
        sm_result_cols cols = cols_ok();
        bool inserted;
        assert_ok(
            sm_store_result_insert(f->st, id, 1, "h1", jobs[i].json, &cols, 1000, &inserted, &err));
    }
    sm_run_result *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_cell_results(f->st, run, 0, &rows, &n, &err));
    assert_int_equal(n, 2);
    assert_string_equal(rows[0].result_json, "{\"m\":0}");
    assert_string_equal(rows[1].result_json, "{\"m\":1}");
    assert_int_equal(rows[1].rep, 1);
    sm_store_run_results_free(rows, n);
}

static void test_store_cells_list_by_idx_and_refuse_a_duplicate_idx(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t run = insert_run(f->st, "r", 1000);
    uint64_t other = insert_run(f->st, "s", 1000);
    sm_cell_row c2 = cell(2, "h1", "h2", "{\"transport\":\"tcp\"}");
    sm_cell_row c0 = cell(0, "h1", "", "{\"transport\":\"unix\"}");
    sm_cell_row c1 = cell(1, "h2", "", "{}");
    assert_ok(sm_store_cell_insert(f->st, run, &c2, &err));
    assert_ok(sm_store_cell_insert(f->st, run, &c0, &err));
    assert_ok(sm_store_cell_insert(f->st, run, &c1, &err));
    /* The same idx in another run is another cell. */
    assert_ok(sm_store_cell_insert(f->st, other, &c0, &err));

    sm_error_clear(&err);
    sm_cell_row dup = cell(1, "h9", "", "{\"dup\":1}");
    assert_int_equal(sm_store_cell_insert(f->st, run, &dup, &err), SM_EINVAL);
    assert_int_equal(err.code, SM_EINVAL);
    assert_non_null(strstr(err.msg, "cell 1 of run 1: UNIQUE constraint failed"));

    sm_cell_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_cells_list(f->st, run, &rows, &n, &err));
    assert_int_equal(n, 3);
    assert_int_equal(rows[0].idx, 0);
    assert_string_equal(rows[0].host, "h1");
    assert_string_equal(rows[0].peer, "");
    assert_string_equal(rows[0].params_json, "{\"transport\":\"unix\"}");
    assert_int_equal(rows[1].idx, 1);
    assert_string_equal(rows[1].host, "h2");
    assert_string_equal(rows[1].params_json, "{}");
    assert_int_equal(rows[2].idx, 2);
    assert_int_equal(rows[2].test, 1);
    assert_int_equal(rows[2].variant, 0);
    assert_string_equal(rows[2].host, "h1");
    assert_string_equal(rows[2].peer, "h2");
    assert_string_equal(rows[2].params_json, "{\"transport\":\"tcp\"}");
    sm_store_cells_free(rows, n);

    /* A run that exists but has no cells yet lists none. */
    uint64_t empty = insert_run(f->st, "e", 1000);
    assert_ok(sm_store_cells_list(f->st, empty, &rows, &n, &err));
    assert_int_equal(n, 0);
    assert_null(rows);
    sm_store_cells_free(rows, n);
}

static void test_store_cell_insert_refuses_unknown_run_and_bad_fields(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    sm_cell_row c = cell(0, "h1", "", "{}");
    sm_error_clear(&err);
    assert_int_equal(sm_store_cell_insert(f->st, 5, &c, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "FOREIGN KEY constraint failed"));

    uint64_t run = insert_run(f->st, "r", 1000);
    sm_cell_row no_params = cell(0, "h1", "", NULL);
    assert_int_equal(sm_store_cell_insert(f->st, run, &no_params, &err), SM_EINVAL);
    sm_cell_row no_host = cell(0, "", "", "{}");
    assert_int_equal(sm_store_cell_insert(f->st, run, &no_host, &err), SM_EINVAL);
    sm_cell_row unterminated = cell(0, "h1", "", "{}");
    memset(unterminated.peer, 'p', sizeof unterminated.peer);
    assert_int_equal(sm_store_cell_insert(f->st, run, &unterminated, &err), SM_EINVAL);
    assert_int_equal(sm_store_cell_insert(f->st, run, NULL, &err), SM_EINVAL);

    sqlite3 *db = raw_open(f->path);
    assert_int_equal(raw_int(db, "SELECT count(*) FROM cells"), 0);
    sqlite3_close(db);
}

static sm_job_row run_job(uint64_t run, uint32_t cell_idx, uint32_t rep, bool warmup,
                          uint32_t round, uint32_t ord, const char *host, const char *peer)
{
    sm_job_row j;
    memset(&j, 0, sizeof j);
    j.run_id = run;
    j.cell = cell_idx;
    j.rep = rep;
    j.warmup = warmup;
    j.round = round;
    j.ord = ord;
    snprintf(j.host, sizeof j.host, "%s", host);
    snprintf(j.peer, sizeof j.peer, "%s", peer);
    j.params_json = "{\"workload\":\"stream\",\"scope\":\"pair\"}";
    return j;
}

static void test_store_job_insert_run_round_trips_every_run_field(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t run = insert_run(f->st, "r", 1000);
    sm_job_row in = run_job(run, 3, 4, true, 2, 17, "h1", "h2");
    uint64_t id = 0;
    assert_ok(sm_store_job_insert_run(f->st, &in, 1500, &id, &err));
    assert_true(id > 0);

    sm_job_row j;
    assert_ok(sm_store_job_get(f->st, id, &j, &err));
    assert_int_equal(j.id, id);
    assert_string_equal(j.host, "h1");
    assert_string_equal(j.params_json, "{\"workload\":\"stream\",\"scope\":\"pair\"}");
    assert_int_equal(j.state, SM_JOB_QUEUED);
    assert_string_equal(j.reason, "");
    assert_int_equal(j.attempt, 1);
    assert_int_equal(j.created_ms, 1500);
    assert_int_equal(j.assigned_ms, 0);
    assert_int_equal(j.run_id, run);
    assert_int_equal(j.cell, 3);
    assert_int_equal(j.rep, 4);
    assert_true(j.warmup);
    assert_int_equal(j.round, 2);
    assert_int_equal(j.ord, 17);
    assert_string_equal(j.peer, "h2");
    sm_job_row_fini(&j);

    sm_job_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_jobs_unfinished(f->st, &rows, &n, &err));
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].run_id, run);
    assert_int_equal(rows[0].ord, 17);
    assert_string_equal(rows[0].peer, "h2");
    sm_store_jobs_free(rows, n);

    sqlite3 *db = raw_open(f->path);
    assert_int_equal(raw_int(db, "SELECT warmup FROM jobs"), 1);
    sqlite3_close(db);
}

static void test_store_run_jobs_are_ordered_by_ord(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t run = insert_run(f->st, "r", 1000);
    uint64_t other = insert_run(f->st, "s", 1000);
    const uint32_t ords[] = {5, 0, 3, 1};
    uint64_t ids[4];
    for (size_t i = 0; i < 4; i++) {
        sm_job_row in = run_job(run, (uint32_t)i, 0, false, 0, ords[i], "h1", "");
        assert_ok(sm_store_job_insert_run(f->st, &in, 1000, &ids[i], &err));
    }
    sm_job_row elsewhere = run_job(other, 0, 0, false, 0, 2, "h1", "");
    uint64_t id = 0;
    assert_ok(sm_store_job_insert_run(f->st, &elsewhere, 1000, &id, &err));
    insert_job(f->st, "h1", 1000);

    sm_job_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_run_jobs(f->st, run, &rows, &n, &err));
    assert_int_equal(n, 4);
    assert_int_equal(rows[0].id, ids[1]);
    assert_int_equal(rows[0].ord, 0);
    assert_int_equal(rows[1].id, ids[3]);
    assert_int_equal(rows[1].ord, 1);
    assert_int_equal(rows[2].id, ids[2]);
    assert_int_equal(rows[2].ord, 3);
    assert_int_equal(rows[3].id, ids[0]);
    assert_int_equal(rows[3].ord, 5);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(rows[i].run_id, run);
        assert_string_equal(rows[i].params_json, "{\"workload\":\"stream\",\"scope\":\"pair\"}");
    }
    sm_store_jobs_free(rows, n);

    /* A run without jobs yet lists none. */
    uint64_t empty = insert_run(f->st, "e", 1000);
    assert_ok(sm_store_run_jobs(f->st, empty, &rows, &n, &err));
    assert_int_equal(n, 0);
    assert_null(rows);
}

static void test_store_job_insert_run_refuses_no_run_and_bad_fields(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t id = 0;
    sm_job_row j = run_job(0, 0, 0, false, 0, 0, "h1", "");
    sm_error_clear(&err);
    assert_int_equal(sm_store_job_insert_run(f->st, &j, 1, &id, &err), SM_EINVAL);
    assert_string_equal(err.msg, "job of a run: run_id 0 names no run");

    j.run_id = 99;
    sm_error_clear(&err);
    assert_int_equal(sm_store_job_insert_run(f->st, &j, 1, &id, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "job of run 99: FOREIGN KEY constraint failed"));

    j.run_id = insert_run(f->st, "r", 1000);
    j.host[0] = '\0';
    assert_int_equal(sm_store_job_insert_run(f->st, &j, 1, &id, &err), SM_EINVAL);
    j = run_job(j.run_id, 0, 0, false, 0, 0, "h1", "");
    j.params_json = NULL;
    assert_int_equal(sm_store_job_insert_run(f->st, &j, 1, &id, &err), SM_EINVAL);
    j = run_job(j.run_id, 0, 0, false, 0, 0, "h1", "");
    memset(j.host, 'h', sizeof j.host);
    assert_int_equal(sm_store_job_insert_run(f->st, &j, 1, &id, &err), SM_EINVAL);
    assert_int_equal(sm_store_job_insert_run(f->st, NULL, 1, &id, &err), SM_EINVAL);
    assert_int_equal(id, 0);
}

static void test_store_run_results_join_only_the_current_attempt(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    uint64_t run = insert_run(f->st, "r", 1000);
    sm_job_row warm = run_job(run, 0, 0, true, 0, 0, "h1", "");
    sm_job_row retried = run_job(run, 1, 2, false, 0, 1, "h1", "");
    sm_job_row pending = run_job(run, 0, 1, false, 0, 2, "h1", "");
    uint64_t warm_id = 0, retried_id = 0, pending_id = 0;
    /* Inserted out of ord, so that the order of the answer is the query's. */
    assert_ok(sm_store_job_insert_run(f->st, &pending, 1000, &pending_id, &err));
    assert_ok(sm_store_job_insert_run(f->st, &retried, 1000, &retried_id, &err));
    assert_ok(sm_store_job_insert_run(f->st, &warm, 1000, &warm_id, &err));

    sm_result_cols c = cols_ok();
    bool inserted = false;
    assert_ok(
        sm_store_result_insert(f->st, warm_id, 1, "h1", "{\"warm\":1}", &c, 2000, &inserted, &err));
    assert_ok(sm_store_result_insert(f->st, retried_id, 1, "h1", "{\"attempt\":1}", &c, 2000,
                                     &inserted, &err));
    assert_ok(sm_store_job_set_state(f->st, retried_id, 2, SM_JOB_QUEUED, "", 3000, &err));
    assert_ok(sm_store_result_insert(f->st, retried_id, 2, "h1", "{\"attempt\":2}", &c, 4000,
                                     &inserted, &err));
    /* A stale result of attempt 1 of a job now at attempt 2 with none stored yet. */
    assert_ok(sm_store_job_set_state(f->st, pending_id, 2, SM_JOB_QUEUED, "", 3000, &err));
    assert_ok(sm_store_result_insert(f->st, pending_id, 1, "h1", "{\"stale\":1}", &c, 2000,
                                     &inserted, &err));
    /* A plain job's result never shows in a run. */
    uint64_t plain = insert_job(f->st, "h1", 1000);
    assert_ok(
        sm_store_result_insert(f->st, plain, 1, "h1", "{\"plain\":1}", &c, 2000, &inserted, &err));

    sm_run_result *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_run_results(f->st, run, &rows, &n, &err));
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].cell, 0);
    assert_int_equal(rows[0].rep, 0);
    assert_true(rows[0].warmup);
    assert_string_equal(rows[0].result_json, "{\"warm\":1}");
    assert_int_equal(rows[1].cell, 1);
    assert_int_equal(rows[1].rep, 2);
    assert_false(rows[1].warmup);
    assert_string_equal(rows[1].result_json, "{\"attempt\":2}");
    sm_store_run_results_free(rows, n);

    /* A run whose jobs have no results yet has none. */
    uint64_t empty = insert_run(f->st, "e", 1000);
    assert_ok(sm_store_run_results(f->st, empty, &rows, &n, &err));
    assert_int_equal(n, 0);
    assert_null(rows);
}

static void test_store_plain_jobs_keep_run_id_0(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    insert_run(f->st, "r", 1000);
    uint64_t id = insert_job(f->st, "h1", 1000);
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

    sqlite3 *db = raw_open(f->path);
    assert_int_equal(raw_int(db, "SELECT run_id IS NULL FROM jobs"), 1);
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

/* What a corrupted store file did: every transaction failed with "database disk image is
 * malformed" while /healthz said ok. The store now says it is failing, with SQLite's words,
 * until a commit succeeds and a minute has passed. */
static void test_store_a_corrupted_file_makes_the_store_failing_with_sqlites_words(void **state)
{
    fixture *f = *state;
    sm_error err = {0};
    open_store(f);
    char msg[256] = "";
    int64_t at = 0;
    assert_false(sm_store_failing(f->st, sm_wall_ms(), msg, sizeof msg, &at));
    assert_ok(sm_store_begin(f->st, &err));
    for (int i = 0; i < 200; i++)
        insert_job(f->st, "h1", 1);
    assert_ok(sm_store_commit(f->st, &err));
    assert_false(sm_store_failing(f->st, sm_wall_ms(), msg, sizeof msg, &at));

    /* Everything into the main file, then garbage over every page but the first (the schema
     * the store has read already). The checkpoint also tells the store's connection that its
     * cached pages are stale. */
    sqlite3 *raw = raw_open(f->path);
    const int64_t page = raw_int(raw, "PRAGMA page_size");
    const int64_t pages = raw_int(raw, "PRAGMA page_count");
    assert_true(pages > 2);
    assert_int_equal(sqlite3_exec(raw, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(raw);
    FILE *fp = fopen(f->path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, (long)page, SEEK_SET), 0);
    for (int64_t i = page; i < page * pages; i++)
        fputc(0x5a, fp);
    assert_int_equal(fclose(fp), 0);

    const int64_t before = sm_wall_ms();
    uint64_t id = 0;
    assert_ok(sm_store_begin(f->st, &err));
    assert_int_not_equal(sm_store_job_insert(f->st, "h1", "{}", 1, &id, &err), 0);
    sm_store_rollback(f->st);
    assert_true(sm_store_failing(f->st, sm_wall_ms(), msg, sizeof msg, &at));
    assert_non_null(strstr(msg, "malformed"));
    assert_true(at >= before && at <= sm_wall_ms());

    /* A commit that touches no page succeeds: the failure stays shown for a minute after it,
     * then clears. */
    assert_ok(sm_store_begin(f->st, &err));
    assert_ok(sm_store_commit(f->st, &err));
    assert_true(sm_store_failing(f->st, at + SM_STORE_FAIL_SHOWN_MS - 1, NULL, 0, NULL));
    assert_false(sm_store_failing(f->st, at + SM_STORE_FAIL_SHOWN_MS, NULL, 0, NULL));
}

/* A caller's broken constraint is the caller's failure, not the store's. */
static void test_store_a_rejected_insert_does_not_make_the_store_failing(void **state)
{
    fixture *f = *state;
    sm_error err = {0};
    open_store(f);
    bool inserted = false;
    sm_result_cols c = cols_ok();
    assert_ok(sm_store_begin(f->st, &err));
    /* No job 999: the foreign key refuses the result. */
    assert_int_not_equal(sm_store_result_insert(f->st, 999, 1, "h1", "{}", &c, 1, &inserted, &err),
                         0);
    sm_store_rollback(f->st);
    assert_false(sm_store_failing(f->st, sm_wall_ms(), NULL, 0, NULL));
}

/* ---- the store's identity and a cut WAL ---- */

static void test_store_id_is_made_once_and_kept_across_reopen(void **state)
{
    fixture *f = *state;
    open_store(f);
    char id[SM_STORE_ID_SIZE];
    snprintf(id, sizeof id, "%s", sm_store_id(f->st));
    assert_true(is_store_id(id));
    assert_string_equal(sm_store_warning(f->st), "");
    open_store(f);
    assert_string_equal(sm_store_id(f->st), id);
    sqlite3 *db = raw_open(f->path);
    char stored[64];
    raw_text(db, "SELECT value FROM store_meta WHERE key = 'store_id'", stored, sizeof stored);
    assert_string_equal(stored, id);
    sqlite3_close(db);

    /* Another store, another id: what tells an agent that job ids started over. */
    char other[160];
    snprintf(other, sizeof other, "%s/other.db", f->dir);
    sm_store *st2 = NULL;
    sm_error err;
    assert_ok(sm_store_open(&st2, other, &err));
    assert_true(is_store_id(sm_store_id(st2)));
    assert_string_not_equal(sm_store_id(st2), id);
    sm_store_close(st2);
    for (const char *sfx = ""; sfx; sfx = *sfx ? NULL : "-wal") {
        char p[170];
        snprintf(p, sizeof p, "%s%s", other, sfx);
        unlink(p);
    }
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    assert_non_null(in);
    FILE *out = fopen(to, "wb");
    assert_non_null(out);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

static long file_size(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return -1;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fclose(fp);
    return n;
}

/* A copy of the open store's database and WAL, as a kill -9 would leave them: the frames not
 * yet checkpointed are in the WAL only. Returns the copy's path in out. */
static void copy_open_store(fixture *f, const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", f->dir, name);
    char from[200], to[200];
    copy_file(f->path, out);
    snprintf(from, sizeof from, "%s-wal", f->path);
    snprintf(to, sizeof to, "%s-wal", out);
    copy_file(from, to);
}

static void remove_db(const char *path)
{
    const char *suffixes[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < 3; i++) {
        char p[200];
        snprintf(p, sizeof p, "%s%s", path, suffixes[i]);
        unlink(p);
    }
}

static void test_store_wal_check_finds_a_wal_cut_mid_frame_and_not_an_intact_one(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    char id[SM_STORE_ID_SIZE];
    snprintf(id, sizeof id, "%s", sm_store_id(f->st));
    uint64_t last = 0;
    for (int i = 0; i < 5; i++)
        last = insert_job(f->st, "h1", 1000 + i); /* one commit each */

    char intact[160], cut[160], wal[200];
    copy_open_store(f, "intact.db", intact, sizeof intact);
    copy_open_store(f, "cut.db", cut, sizeof cut);
    sm_wal_check c;
    memset(&c, 0xff, sizeof c);
    assert_ok(sm_store_wal_check(intact, &c, &err));
    assert_true(c.present);
    assert_false(c.cut);
    assert_int_equal(c.page_size, 4096);
    assert_int_equal(c.partial, 0);
    assert_true(c.frames > 5);
    assert_int_equal(c.valid, c.frames);
    assert_int_equal(c.kept, c.frames); /* the last frame ends the last commit */
    const uint64_t frames = c.frames;

    /* Into the last frame: the last commit (job `last`) is lost. */
    snprintf(wal, sizeof wal, "%s-wal", cut);
    long size = file_size(wal);
    assert_int_equal(truncate(wal, size - 100), 0);
    assert_ok(sm_store_wal_check(cut, &c, &err));
    assert_true(c.present);
    assert_true(c.cut);
    assert_int_equal(c.frames, frames - 1);
    assert_int_equal(c.partial, 4096 + 24 - 100);
    assert_int_equal(c.valid, frames - 1);
    assert_true(c.kept > 0 && c.kept <= c.valid);

    /* Opening it says so, and the store that lost transactions is a new store for agents. */
    sm_store *st = NULL;
    assert_ok(sm_store_open(&st, cut, &err));
    assert_non_null(strstr(sm_store_warning(st), "-wal was cut: 4020 bytes beyond its last whole"
                                                 " frame"));
    assert_true(is_store_id(sm_store_id(st)));
    assert_string_not_equal(sm_store_id(st), id);
    char renewed[SM_STORE_ID_SIZE];
    snprintf(renewed, sizeof renewed, "%s", sm_store_id(st));
    sm_job_row j;
    assert_int_equal(sm_store_job_get(st, last, &j, &err), SM_EINVAL); /* lost with the cut */
    assert_ok(sm_store_job_get(st, last - 1, &j, &err));
    sm_job_row_fini(&j);
    sm_store_close(st);
    /* Checkpointed to empty at that open: the next open finds nothing cut. */
    assert_ok(sm_store_wal_check(cut, &c, &err));
    assert_false(c.cut);
    st = NULL;
    assert_ok(sm_store_open(&st, cut, &err));
    assert_string_equal(sm_store_warning(st), "");
    assert_string_equal(sm_store_id(st), renewed);
    sm_store_close(st);

    /* The intact copy opens without a word, as the same store. */
    st = NULL;
    assert_ok(sm_store_open(&st, intact, &err));
    assert_string_equal(sm_store_warning(st), "");
    assert_string_equal(sm_store_id(st), id);
    assert_ok(sm_store_job_get(st, last, &j, &err));
    sm_job_row_fini(&j);
    sm_store_close(st);
    remove_db(intact);
    remove_db(cut);
}

static void test_store_wal_check_ignores_an_older_logs_leftover_tail(void **state)
{
    fixture *f = *state;
    sm_error err;
    open_store(f);
    for (int i = 0; i < 3; i++)
        insert_job(f->st, "h1", 1000 + i);
    char copy[160], wal[200];
    copy_open_store(f, "old.db", copy, sizeof copy);
    snprintf(wal, sizeof wal, "%s-wal", copy);
    sm_wal_check c;
    assert_ok(sm_store_wal_check(copy, &c, &err));
    const uint64_t frames = c.frames;

    /* The last frame belongs to an older log (other salts), and a partial frame follows it: a
     * log written from the start over a longer one; nothing of the current log is past it. */
    FILE *fp = fopen(wal, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 32 + (long)(frames - 1) * (4096 + 24) + 8, SEEK_SET), 0);
    assert_int_equal(fputc(0x5a, fp) != EOF, 1);
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    for (int i = 0; i < 100; i++)
        fputc(0, fp);
    assert_int_equal(fclose(fp), 0);
    assert_ok(sm_store_wal_check(copy, &c, &err));
    assert_int_equal(c.frames, frames);
    assert_int_equal(c.partial, 100);
    assert_int_equal(c.valid, frames - 1);
    assert_false(c.cut);

    /* A header cut short is a cut: SQLite ignores the whole log. */
    assert_int_equal(truncate(wal, 20), 0);
    assert_ok(sm_store_wal_check(copy, &c, &err));
    assert_true(c.cut);
    assert_int_equal(c.partial, 20);
    assert_int_equal(c.page_size, 0);

    /* No WAL at all: nothing to say. */
    unlink(wal);
    assert_ok(sm_store_wal_check(copy, &c, &err));
    assert_false(c.present);
    assert_false(c.cut);
    remove_db(copy);
}

#define T(name)                                                                                    \
    cmocka_unit_test_setup_teardown(name, store_fixture_setup_closed, store_fixture_teardown)

static void test_store_pair_sides_are_stored_once_per_role(void **state)
{
    fixture *f = *state;
    sm_error err = {0};
    uint64_t id = 0;
    open_store(f);
    assert_int_equal(sm_store_job_insert(f->st, "h1", "{}", 1, &id, &err), 0);
    bool inserted = false;
    assert_int_equal(
        sm_store_side_insert(f->st, id, 1, "server", "h2", "{\"ok\":true}", 2, &inserted, &err), 0);
    assert_true(inserted);
    assert_int_equal(
        sm_store_side_insert(f->st, id, 1, "server", "h2", "{\"ok\":false}", 3, &inserted, &err),
        0);
    assert_false(inserted); /* a resend of the same side changes nothing */
    char *json = NULL;
    assert_int_equal(sm_store_side_get(f->st, id, 1, "server", &json, &err), 0);
    assert_string_equal(json, "{\"ok\":true}");
    free(json);
    assert_int_equal(sm_store_side_get(f->st, id, 1, "client", &json, &err), 0);
    assert_null(json);
    assert_int_not_equal(
        sm_store_side_insert(f->st, id + 99, 1, "client", "h1", "{}", 4, &inserted, &err),
        0); /* no such job */
}

int main(void)
{
    /* Every open of a fresh file logs its migration; the tests check the schema directly. */
    sm_log_level = LOG_WARNING;
    const struct CMUnitTest tests[] = {
        T(test_store_files_are_0600_under_any_umask),
        T(test_store_open_creates_the_current_schema_in_wal_mode),
        T(test_store_id_is_made_once_and_kept_across_reopen),
        T(test_store_wal_check_finds_a_wal_cut_mid_frame_and_not_an_intact_one),
        T(test_store_wal_check_ignores_an_older_logs_leftover_tail),
        T(test_store_reopen_keeps_data_and_version),
        T(test_store_refuses_a_newer_schema_version),
        T(test_store_a_corrupted_file_makes_the_store_failing_with_sqlites_words),
        T(test_store_a_rejected_insert_does_not_make_the_store_failing),
        T(test_store_pair_sides_are_stored_once_per_role),
        T(test_store_failed_migration_leaves_the_old_schema),
        T(test_store_open_of_an_unreachable_path_fails_with_reason),
        T(test_store_agent_upsert_keeps_first_seen_and_null_facts_keep_old),
        T(test_store_agent_without_facts_reads_back_null_facts),
        T(test_store_agents_list_is_sorted_by_name),
        T(test_store_agent_get_reads_one_agent_by_name_or_says_there_is_none),
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
        T(test_store_migrates_a_version_1_database_keeping_jobs_and_results),
        T(test_store_migration_to_version_2_rolls_back_as_a_whole),
        T(test_store_run_insert_and_get_round_trip),
        T(test_store_run_insert_rejects_bad_name_and_missing_spec),
        T(test_store_run_keeps_how_its_jobs_go_and_why),
        T(test_store_migration_to_version_5_takes_parallel_from_the_stored_spec),
        T(test_store_unknown_run_id_is_einval),
        T(test_store_runs_list_is_newest_first_within_the_limit),
        T(test_store_run_update_stamps_reason_and_finish_only_when_terminal),
        T(test_store_runs_running_lists_open_runs_oldest_first_with_spec),
        T(test_store_migrates_version_3_cells_to_no_stop_and_records_stops),
        T(test_store_cell_results_are_the_measured_current_attempts_of_one_cell),
        T(test_store_cells_list_by_idx_and_refuse_a_duplicate_idx),
        T(test_store_cell_insert_refuses_unknown_run_and_bad_fields),
        T(test_store_job_insert_run_round_trips_every_run_field),
        T(test_store_run_jobs_are_ordered_by_ord),
        T(test_store_job_insert_run_refuses_no_run_and_bad_fields),
        T(test_store_run_results_join_only_the_current_attempt),
        T(test_store_plain_jobs_keep_run_id_0),
        T(test_store_names_of_states),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
