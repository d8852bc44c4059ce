/* The store's results: a job's result, the two sides of a pair job, the results of a run. */
#include "coordinator/store/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int read_run_result(sqlite3_stmt *s, void *row, sm_error *err)
{
    sm_run_result *r = row;
    memset(r, 0, sizeof *r);
    r->cell = (uint32_t)sqlite3_column_int64(s, 0);
    r->rep = (uint32_t)sqlite3_column_int64(s, 1);
    r->warmup = sqlite3_column_int64(s, 2) != 0;
    if (sqlite3_column_count(s) > 5) {
        r->ord = sqlite3_column_int64(s, 4);
        r->job = (uint64_t)sqlite3_column_int64(s, 5);
    }
    int ret = store_column_dup(s, 3, &r->result_json, err);
    if (ret == 0 && r->result_json == NULL)
        ret = sm_error_set(err, SM_EPARSE, "result of cell %u rep %u: no JSON", (unsigned)r->cell,
                           (unsigned)r->rep);
    return ret;
}

static void fini_run_result(void *row)
{
    sm_run_result *r = row;
    free(r->result_json);
}

static const store_row_type run_result_rows = {sizeof(sm_run_result), read_run_result,
                                               fini_run_result};

int sm_store_run_results(sm_store *st, uint64_t run_id, sm_run_result **prows, size_t *pn,
                         sm_error *err)
{
    void *rows;
    int ret = store_collect_run(st, Q_RUN_RESULTS, run_id, &run_result_rows, &rows, pn,
                                "run results", err);
    if (ret == 0)
        *prows = rows;
    return ret;
}

/* Q_CELL_RESULTS or Q_CELL_RESULTS_ALL for one cell. */
static int cell_results(sm_store *st, int q, uint64_t run_id, uint32_t cell, sm_run_result **prows,
                        size_t *pn, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[q];
    void *rows;
    *prows = NULL;
    *pn = 0;
    int ret = store_bind_id(s, 1, run_id, "run", err);
    if (ret == 0 && sqlite3_bind_int64(s, 2, cell) != SQLITE_OK)
        ret = store_db_error(st->db, err, "cell results");
    if (ret != 0) {
        store_done_with(s);
        return ret;
    }
    ret = store_collect(s, &run_result_rows, &rows, pn, "cell results", err);
    if (ret == 0)
        *prows = rows;
    return ret;
}

int sm_store_cell_results(sm_store *st, uint64_t run_id, uint32_t cell, sm_run_result **prows,
                          size_t *pn, sm_error *err)
{
    return cell_results(st, Q_CELL_RESULTS, run_id, cell, prows, pn, err);
}

int sm_store_cell_results_all(sm_store *st, uint64_t run_id, uint32_t cell, sm_run_result **prows,
                              size_t *pn, sm_error *err)
{
    return cell_results(st, Q_CELL_RESULTS_ALL, run_id, cell, prows, pn, err);
}

static int read_cell_size(sqlite3_stmt *s, void *row, sm_error *err)
{
    (void)err;
    sm_cell_size *c = row;
    c->cell = (uint32_t)sqlite3_column_int64(s, 0);
    c->n = (uint64_t)sqlite3_column_int64(s, 1);
    c->json_bytes = (uint64_t)sqlite3_column_int64(s, 2);
    c->json_max = (uint64_t)sqlite3_column_int64(s, 3);
    return 0;
}

static const store_row_type cell_size_rows = {sizeof(sm_cell_size), read_cell_size, NULL};

int sm_store_run_result_sizes(sm_store *st, uint64_t run_id, sm_cell_size **prows, size_t *pn,
                              sm_error *err)
{
    void *rows;
    int ret = store_collect_run(st, Q_RUN_RESULT_SIZES, run_id, &cell_size_rows, &rows, pn,
                                "run result sizes", err);
    if (ret == 0)
        *prows = rows;
    return ret;
}

void sm_store_run_results_free(sm_run_result *rows, size_t n)
{
    store_rows_free(&run_result_rows, rows, n);
}

/* NaN marks an absent metric; SQL's NULL says the same to every query and aggregate. */
static int bind_metric(sqlite3_stmt *s, int idx, double v)
{
    return isnan(v) ? sqlite3_bind_null(s, idx) : sqlite3_bind_double(s, idx, v);
}

int sm_store_result_insert(sm_store *st, uint64_t job, uint32_t attempt, const char *agent,
                           const char *result_json, const sm_result_cols *cols, int64_t now_ms,
                           bool *inserted, sm_error *err)
{
    if (agent == NULL || result_json == NULL || cols == NULL)
        return sm_error_set(err, SM_EINVAL, "result of job %llu: agent, JSON and columns needed",
                            (unsigned long long)job);
    sqlite3_stmt *s = st->stmts[Q_RESULT_INSERT];
    int ret = store_bind_id(s, 1, job, "job", err);
    if (ret != 0)
        goto out;
    int rc = sqlite3_bind_int64(s, 2, attempt);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 3, agent, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int(s, 4, cols->ok);
    if (rc == SQLITE_OK)
        rc = bind_metric(s, 5, cols->bytes);
    if (rc == SQLITE_OK)
        rc = bind_metric(s, 6, cols->seconds);
    if (rc == SQLITE_OK)
        rc = bind_metric(s, 7, cols->throughput_MBps);
    if (rc == SQLITE_OK)
        rc = bind_metric(s, 8, cols->rtt_p50_us);
    if (rc == SQLITE_OK)
        rc = bind_metric(s, 9, cols->connects_per_s);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 10, result_json, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 11, now_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    if (rc == SQLITE_DONE)
        *inserted = sqlite3_changes(st->db) > 0;
    else
        ret = sm_error_set(err, store_code_of(sqlite3_extended_errcode(st->db)),
                           "result of job %llu attempt %u: %s", (unsigned long long)job,
                           (unsigned)attempt, sqlite3_errmsg(st->db));
out:
    store_done_with(s);
    return ret;
}

int sm_store_result_get(sm_store *st, uint64_t job, uint32_t attempt, char **json, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_RESULT_GET];
    char *copy = NULL;
    int ret = store_bind_id(s, 1, job, "job", err);
    if (ret != 0)
        goto out;
    if (sqlite3_bind_int64(s, 2, attempt) != SQLITE_OK) {
        ret = store_db_error(st->db, err, "result get");
        goto out;
    }
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        ret = store_column_dup(s, 0, &copy, err);
    else if (rc != SQLITE_DONE)
        ret = store_db_error(st->db, err, "result get");
out:
    store_done_with(s);
    if (ret == 0)
        *json = copy;
    return ret;
}

int sm_store_result_count(sm_store *st, uint64_t *n, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_RESULT_COUNT];
    int ret = 0;
    if (sqlite3_step(s) == SQLITE_ROW)
        *n = (uint64_t)sqlite3_column_int64(s, 0);
    else
        ret = store_db_error(st->db, err, "result count");
    store_done_with(s);
    return ret;
}

int sm_store_side_insert(sm_store *st, uint64_t job, uint32_t attempt, const char *role,
                         const char *agent, const char *result_json, int64_t now_ms, bool *inserted,
                         sm_error *err)
{
    if (role == NULL || agent == NULL || result_json == NULL)
        return sm_error_set(err, SM_EINVAL, "side result of job %llu: role, agent, JSON needed",
                            (unsigned long long)job);
    sqlite3_stmt *s = st->stmts[Q_SIDE_INSERT];
    int ret = store_bind_id(s, 1, job, "job", err);
    if (ret != 0)
        goto out;
    int rc = sqlite3_bind_int64(s, 2, attempt);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 3, role, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 4, agent, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 5, result_json, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 6, now_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    if (rc == SQLITE_DONE)
        *inserted = sqlite3_changes(st->db) > 0;
    else
        ret = sm_error_set(err, store_code_of(sqlite3_extended_errcode(st->db)),
                           "%s side of job %llu attempt %u: %s", role, (unsigned long long)job,
                           (unsigned)attempt, sqlite3_errmsg(st->db));
out:
    store_done_with(s);
    return ret;
}

int sm_store_side_get(sm_store *st, uint64_t job, uint32_t attempt, const char *role, char **json,
                      sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_SIDE_GET];
    char *copy = NULL;
    int ret = store_bind_id(s, 1, job, "job", err);
    if (ret != 0)
        goto out;
    if (sqlite3_bind_int64(s, 2, attempt) != SQLITE_OK ||
        sqlite3_bind_text(s, 3, role, -1, SQLITE_STATIC) != SQLITE_OK) {
        ret = store_db_error(st->db, err, "side result get");
        goto out;
    }
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        ret = store_column_dup(s, 0, &copy, err);
    else if (rc != SQLITE_DONE)
        ret = store_db_error(st->db, err, "side result get");
out:
    store_done_with(s);
    if (ret == 0)
        *json = copy;
    return ret;
}
