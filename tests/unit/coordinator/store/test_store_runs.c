/* Unit tests of the store's runs: their rows, cells and jobs, lists, updates, and the results of
 * their current attempts. */
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

static void test_store_run_insert_and_get_round_trip(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
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

    sqlite3 *db = store_fixture_raw_open(f->path);
    char text[32];
    store_fixture_raw_text(db, "SELECT state FROM runs", text, sizeof text);
    assert_string_equal(text, "running");
    sqlite3_close(db);
}

static void test_store_run_insert_rejects_bad_name_and_missing_spec(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
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
    store_fixture_open(f);
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
    store_fixture_open(f);
    uint64_t id = store_fixture_insert_run(f->st, "lab", 1000);
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

static void test_store_runs_list_is_newest_first_within_the_limit(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    uint64_t a = store_fixture_insert_run(f->st, "a", 1000);
    uint64_t b = store_fixture_insert_run(f->st, "b", 3000);
    /* An earlier wall clock does not reorder: the id says which run is newer. */
    uint64_t c = store_fixture_insert_run(f->st, "c", 2000);

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
    store_fixture_open(f);
    uint64_t id = store_fixture_insert_run(f->st, "r", 1000);

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

    uint64_t other = store_fixture_insert_run(f->st, "s", 1000);
    assert_ok(sm_store_run_update(f->st, other, SM_RUN_CANCELLED, NULL, 0, 0, 4000, &err));
    assert_ok(sm_store_run_get(f->st, other, &r, &err));
    assert_int_equal(r.state, SM_RUN_CANCELLED);
    assert_string_equal(r.reason, "");
    assert_int_equal(r.finished_ms, 4000);
    sm_run_row_fini(&r);

    sqlite3 *db = store_fixture_raw_open(f->path);
    char text[32];
    store_fixture_raw_text(
        db, "SELECT group_concat(state, ',') FROM (SELECT state FROM runs ORDER BY id)", text,
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
    store_fixture_open(f);
    uint64_t a = store_fixture_insert_run(f->st, "a", 1000);
    uint64_t b = store_fixture_insert_run(f->st, "b", 1001);
    uint64_t c = store_fixture_insert_run(f->st, "c", 1002);
    uint64_t d = store_fixture_insert_run(f->st, "d", 1003);
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

static void test_store_cell_results_are_the_measured_current_attempts_of_one_cell(void **state)
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
        sm_result_cols cols = store_fixture_cols_ok();
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
    store_fixture_open(f);
    uint64_t run = store_fixture_insert_run(f->st, "r", 1000);
    uint64_t other = store_fixture_insert_run(f->st, "s", 1000);
    sm_cell_row c2 = store_fixture_cell(2, "h1", "h2", "{\"transport\":\"tcp\"}");
    sm_cell_row c0 = store_fixture_cell(0, "h1", "", "{\"transport\":\"unix\"}");
    sm_cell_row c1 = store_fixture_cell(1, "h2", "", "{}");
    assert_ok(sm_store_cell_insert(f->st, run, &c2, &err));
    assert_ok(sm_store_cell_insert(f->st, run, &c0, &err));
    assert_ok(sm_store_cell_insert(f->st, run, &c1, &err));
    /* The same idx in another run is another cell. */
    assert_ok(sm_store_cell_insert(f->st, other, &c0, &err));

    sm_error_clear(&err);
    sm_cell_row dup = store_fixture_cell(1, "h9", "", "{\"dup\":1}");
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
    uint64_t empty = store_fixture_insert_run(f->st, "e", 1000);
    assert_ok(sm_store_cells_list(f->st, empty, &rows, &n, &err));
    assert_int_equal(n, 0);
    assert_null(rows);
    sm_store_cells_free(rows, n);
}

static void test_store_cell_insert_refuses_unknown_run_and_bad_fields(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    sm_cell_row c = store_fixture_cell(0, "h1", "", "{}");
    sm_error_clear(&err);
    assert_int_equal(sm_store_cell_insert(f->st, 5, &c, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "FOREIGN KEY constraint failed"));

    uint64_t run = store_fixture_insert_run(f->st, "r", 1000);
    sm_cell_row no_params = store_fixture_cell(0, "h1", "", NULL);
    assert_int_equal(sm_store_cell_insert(f->st, run, &no_params, &err), SM_EINVAL);
    sm_cell_row no_host = store_fixture_cell(0, "", "", "{}");
    assert_int_equal(sm_store_cell_insert(f->st, run, &no_host, &err), SM_EINVAL);
    sm_cell_row unterminated = store_fixture_cell(0, "h1", "", "{}");
    memset(unterminated.peer, 'p', sizeof unterminated.peer);
    assert_int_equal(sm_store_cell_insert(f->st, run, &unterminated, &err), SM_EINVAL);
    assert_int_equal(sm_store_cell_insert(f->st, run, NULL, &err), SM_EINVAL);

    sqlite3 *db = store_fixture_raw_open(f->path);
    assert_int_equal(store_fixture_raw_int(db, "SELECT count(*) FROM cells"), 0);
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
    store_fixture_open(f);
    uint64_t run = store_fixture_insert_run(f->st, "r", 1000);
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

    sqlite3 *db = store_fixture_raw_open(f->path);
    assert_int_equal(store_fixture_raw_int(db, "SELECT warmup FROM jobs"), 1);
    sqlite3_close(db);
}

static void test_store_run_jobs_are_ordered_by_ord(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    uint64_t run = store_fixture_insert_run(f->st, "r", 1000);
    uint64_t other = store_fixture_insert_run(f->st, "s", 1000);
    const uint32_t ords[] = {5, 0, 3, 1};
    uint64_t ids[4];
    for (size_t i = 0; i < 4; i++) {
        sm_job_row in = run_job(run, (uint32_t)i, 0, false, 0, ords[i], "h1", "");
        assert_ok(sm_store_job_insert_run(f->st, &in, 1000, &ids[i], &err));
    }
    sm_job_row elsewhere = run_job(other, 0, 0, false, 0, 2, "h1", "");
    uint64_t id = 0;
    assert_ok(sm_store_job_insert_run(f->st, &elsewhere, 1000, &id, &err));
    store_fixture_insert_job(f->st, "h1", 1000);

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
    uint64_t empty = store_fixture_insert_run(f->st, "e", 1000);
    assert_ok(sm_store_run_jobs(f->st, empty, &rows, &n, &err));
    assert_int_equal(n, 0);
    assert_null(rows);
}

static void test_store_job_insert_run_refuses_no_run_and_bad_fields(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    uint64_t id = 0;
    sm_job_row j = run_job(0, 0, 0, false, 0, 0, "h1", "");
    sm_error_clear(&err);
    assert_int_equal(sm_store_job_insert_run(f->st, &j, 1, &id, &err), SM_EINVAL);
    assert_string_equal(err.msg, "job of a run: run_id 0 names no run");

    j.run_id = 99;
    sm_error_clear(&err);
    assert_int_equal(sm_store_job_insert_run(f->st, &j, 1, &id, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "job of run 99: FOREIGN KEY constraint failed"));

    j.run_id = store_fixture_insert_run(f->st, "r", 1000);
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
    store_fixture_open(f);
    uint64_t run = store_fixture_insert_run(f->st, "r", 1000);
    sm_job_row warm = run_job(run, 0, 0, true, 0, 0, "h1", "");
    sm_job_row retried = run_job(run, 1, 2, false, 0, 1, "h1", "");
    sm_job_row pending = run_job(run, 0, 1, false, 0, 2, "h1", "");
    uint64_t warm_id = 0, retried_id = 0, pending_id = 0;
    /* Inserted out of ord, so that the order of the answer is the query's. */
    assert_ok(sm_store_job_insert_run(f->st, &pending, 1000, &pending_id, &err));
    assert_ok(sm_store_job_insert_run(f->st, &retried, 1000, &retried_id, &err));
    assert_ok(sm_store_job_insert_run(f->st, &warm, 1000, &warm_id, &err));

    sm_result_cols c = store_fixture_cols_ok();
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
    uint64_t plain = store_fixture_insert_job(f->st, "h1", 1000);
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
    uint64_t empty = store_fixture_insert_run(f->st, "e", 1000);
    assert_ok(sm_store_run_results(f->st, empty, &rows, &n, &err));
    assert_int_equal(n, 0);
    assert_null(rows);
}

#define T(name)                                                                                    \
    cmocka_unit_test_setup_teardown(name, store_fixture_setup_closed, store_fixture_teardown)

int main(void)
{
    /* Every open of a fresh file logs its migration; the tests check the schema directly. */
    sm_log_level = LOG_WARNING;
    const struct CMUnitTest tests[] = {
        T(test_store_run_insert_and_get_round_trip),
        T(test_store_run_insert_rejects_bad_name_and_missing_spec),
        T(test_store_run_keeps_how_its_jobs_go_and_why),
        T(test_store_unknown_run_id_is_einval),
        T(test_store_runs_list_is_newest_first_within_the_limit),
        T(test_store_run_update_stamps_reason_and_finish_only_when_terminal),
        T(test_store_runs_running_lists_open_runs_oldest_first_with_spec),
        T(test_store_cell_results_are_the_measured_current_attempts_of_one_cell),
        T(test_store_cells_list_by_idx_and_refuse_a_duplicate_idx),
        T(test_store_cell_insert_refuses_unknown_run_and_bad_fields),
        T(test_store_job_insert_run_round_trips_every_run_field),
        T(test_store_run_jobs_are_ordered_by_ord),
        T(test_store_job_insert_run_refuses_no_run_and_bad_fields),
        T(test_store_run_results_join_only_the_current_attempt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
