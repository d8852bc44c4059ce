/* The store's matrix runs and their cells. */
#include "coordinator/store/internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const run_state_names[] = {
    [SM_RUN_RUNNING] = "running",
    [SM_RUN_DONE] = "done",
    [SM_RUN_FAILED] = "failed",
    [SM_RUN_CANCELLED] = "cancelled",
};

#define N_RUN_STATE (sizeof run_state_names / sizeof run_state_names[0])

const char *sm_run_state_name(sm_run_state s)
{
    return (unsigned)s < N_RUN_STATE ? run_state_names[s] : "unknown";
}

void sm_run_row_fini(sm_run_row *r)
{
    if (r == NULL)
        return;
    free(r->spec_json);
    r->spec_json = NULL;
}

int sm_store_run_insert(sm_store *st, const char *name, const char *spec_json, uint32_t total,
                        int64_t now_ms, uint64_t *id, sm_error *err)
{
    if (name == NULL || name[0] == '\0' || strlen(name) >= FIELD_SIZE(sm_run_row, name))
        return sm_error_set(err, SM_EINVAL, "run: name must be 1 to %zu bytes",
                            FIELD_SIZE(sm_run_row, name) - 1);
    if (spec_json == NULL)
        return sm_error_set(err, SM_EINVAL, "run %s: no spec", name);
    sqlite3_stmt *s = st->stmts[Q_RUN_INSERT];
    int rc = sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 2, spec_json, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 3, now_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 4, total);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    int ret = 0;
    if (rc == SQLITE_DONE)
        *id = (uint64_t)sqlite3_last_insert_rowid(st->db);
    else
        ret = store_db_error(st->db, err, "run insert");
    store_done_with(s);
    return ret;
}

int sm_store_run_set_parallel(sm_store *st, uint64_t id, bool parallel, const char *note,
                              sm_error *err)
{
    if (note == NULL)
        note = "";
    if (strlen(note) >= FIELD_SIZE(sm_run_row, parallel_note))
        return sm_error_set(err, SM_EINVAL, "run %llu: parallel note longer than %zu bytes",
                            (unsigned long long)id, FIELD_SIZE(sm_run_row, parallel_note) - 1);
    sqlite3_stmt *s = st->stmts[Q_RUN_SET_PARALLEL];
    int ret = store_bind_id(s, 1, id, "run", err);
    if (ret != 0)
        goto out;
    int rc = sqlite3_bind_int(s, 2, parallel ? 1 : 0);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 3, note, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    if (rc != SQLITE_DONE)
        ret = store_db_error(st->db, err, "run set parallel");
    else if (sqlite3_changes(st->db) == 0)
        ret = sm_error_set(err, SM_EINVAL, "no run %llu", (unsigned long long)id);
out:
    store_done_with(s);
    return ret;
}

static int read_run(sqlite3_stmt *s, void *row, sm_error *err)
{
    sm_run_row *r = row;
    memset(r, 0, sizeof *r);
    r->id = (uint64_t)sqlite3_column_int64(s, 0);
    int ret = store_column_copy(s, 1, r->name, sizeof r->name, err);
    /* NULL in lists, which select no spec. */
    if (ret == 0)
        ret = store_column_dup(s, 2, &r->spec_json, err);
    if (ret == 0) {
        int state = store_name_index(run_state_names, N_RUN_STATE, sqlite3_column_text(s, 3));
        if (state < 0)
            ret =
                sm_error_set(err, SM_EPARSE, "run %llu: unknown state", (unsigned long long)r->id);
        else
            r->state = (sm_run_state)state;
    }
    if (ret == 0)
        ret = store_column_copy(s, 4, r->reason, sizeof r->reason, err);
    if (ret == 0) {
        r->created_ms = sqlite3_column_int64(s, 5);
        r->finished_ms = sqlite3_column_int64(s, 6);
        r->total = (uint32_t)sqlite3_column_int64(s, 7);
        r->done = (uint32_t)sqlite3_column_int64(s, 8);
        r->failed = (uint32_t)sqlite3_column_int64(s, 9);
        r->parallel = sqlite3_column_int64(s, 10) != 0;
        ret = store_column_copy(s, 11, r->parallel_note, sizeof r->parallel_note, err);
        r->schedule_id = (uint64_t)sqlite3_column_int64(s, 12); /* NULL reads 0 */
    }
    if (ret != 0)
        sm_run_row_fini(r);
    return ret;
}

static void fini_run(void *row)
{
    sm_run_row_fini(row);
}

const store_row_type store_run_rows = {sizeof(sm_run_row), read_run, fini_run};

int sm_store_run_get(sm_store *st, uint64_t id, sm_run_row *out, sm_error *err)
{
    return store_get_row(st, Q_RUN_GET, id, "run", read_run, out, err);
}

int sm_store_runs_list(sm_store *st, size_t limit, sm_run_row **prows, size_t *pn, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_RUNS_LIST];
    /* SQLite's LIMIT is signed; no store holds INT64_MAX runs anyway. */
    int64_t lim = (uint64_t)limit > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)limit;
    if (sqlite3_bind_int64(s, 1, lim) != SQLITE_OK) {
        int ret = store_db_error(st->db, err, "runs list");
        store_done_with(s);
        return ret;
    }
    void *rows;
    int ret = store_collect(s, &store_run_rows, &rows, pn, "runs list", err);
    if (ret == 0)
        *prows = rows;
    return ret;
}

void sm_store_runs_free(sm_run_row *rows, size_t n)
{
    store_rows_free(&store_run_rows, rows, n);
}

int sm_store_runs_running(sm_store *st, sm_run_row **prows, size_t *pn, sm_error *err)
{
    void *rows;
    int ret =
        store_collect(st->stmts[Q_RUNS_RUNNING], &store_run_rows, &rows, pn, "runs running", err);
    if (ret == 0)
        *prows = rows;
    return ret;
}

int sm_store_run_update(sm_store *st, uint64_t id, sm_run_state state, const char *reason,
                        uint32_t done, uint32_t failed, int64_t now_ms, sm_error *err)
{
    if ((unsigned)state >= N_RUN_STATE)
        return sm_error_set(err, SM_EINVAL, "run %llu: state %d out of range",
                            (unsigned long long)id, (int)state);
    if (reason == NULL)
        reason = "";
    if (strlen(reason) >= FIELD_SIZE(sm_run_row, reason))
        return sm_error_set(err, SM_EINVAL, "run %llu: reason longer than %zu bytes",
                            (unsigned long long)id, FIELD_SIZE(sm_run_row, reason) - 1);
    sqlite3_stmt *s = st->stmts[Q_RUN_UPDATE];
    int ret = store_bind_id(s, 1, id, "run", err);
    if (ret != 0)
        goto out;
    int rc = sqlite3_bind_text(s, 2, run_state_names[state], -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 3, done);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 4, failed);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 5, reason, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int(s, 6, state != SM_RUN_RUNNING);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 7, now_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    if (rc != SQLITE_DONE)
        ret = store_db_error(st->db, err, "run update");
    else if (sqlite3_changes(st->db) == 0)
        ret = sm_error_set(err, SM_EINVAL, "no run %llu", (unsigned long long)id);
out:
    store_done_with(s);
    return ret;
}

int sm_store_cell_insert(sm_store *st, uint64_t run_id, const sm_cell_row *c, sm_error *err)
{
    if (c == NULL || c->params_json == NULL)
        return sm_error_set(err, SM_EINVAL, "cell of run %llu: no params",
                            (unsigned long long)run_id);
    if (!store_fits(c->host, sizeof c->host) || !store_fits(c->peer, sizeof c->peer) ||
        c->host[0] == '\0')
        return sm_error_set(err, SM_EINVAL, "cell %u of run %llu: host must be 1 to %zu bytes",
                            (unsigned)c->idx, (unsigned long long)run_id, sizeof c->host - 1);
    sqlite3_stmt *s = st->stmts[Q_CELL_INSERT];
    int ret = store_bind_id(s, 1, run_id, "run", err);
    if (ret != 0)
        goto out;
    int rc = sqlite3_bind_int64(s, 2, c->idx);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 3, c->test);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 4, c->variant);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 5, c->host, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 6, c->peer, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 7, c->params_json, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    /* A foreign-key failure (no such run) and a duplicate idx both map to SM_EINVAL. */
    if (rc != SQLITE_DONE)
        ret = sm_error_set(err, store_code_of(sqlite3_extended_errcode(st->db)),
                           "cell %u of run %llu: %s", (unsigned)c->idx, (unsigned long long)run_id,
                           sqlite3_errmsg(st->db));
out:
    store_done_with(s);
    return ret;
}

int sm_store_run_set_total(sm_store *st, uint64_t id, uint32_t total, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_RUN_SET_TOTAL];
    int ret = store_bind_id(s, 1, id, "run", err);
    if (ret != 0)
        goto out;
    int rc = sqlite3_bind_int64(s, 2, total);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    if (rc != SQLITE_DONE)
        ret = store_db_error(st->db, err, "run total");
    else if (sqlite3_changes(st->db) == 0)
        ret = sm_error_set(err, SM_EINVAL, "no run %llu", (unsigned long long)id);
out:
    store_done_with(s);
    return ret;
}

int sm_store_cell_set_stopped(sm_store *st, uint64_t run_id, uint32_t idx, sm_reps_stop why,
                              sm_error *err)
{
    const char *name = sm_reps_stop_name(why);
    sqlite3_stmt *s = st->stmts[Q_CELL_SET_STOPPED];
    int ret = store_bind_id(s, 1, run_id, "run", err);
    if (ret != 0)
        goto out;
    int rc = sqlite3_bind_int64(s, 2, idx);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 3, name ? name : "", -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    if (rc != SQLITE_DONE)
        ret = store_db_error(st->db, err, "cell stopped");
    else if (sqlite3_changes(st->db) == 0)
        ret = sm_error_set(err, SM_EINVAL, "no cell %u in run %llu", (unsigned)idx,
                           (unsigned long long)run_id);
out:
    store_done_with(s);
    return ret;
}

static int read_cell(sqlite3_stmt *s, void *row, sm_error *err)
{
    sm_cell_row *c = row;
    memset(c, 0, sizeof *c);
    c->idx = (uint32_t)sqlite3_column_int64(s, 0);
    c->test = (uint32_t)sqlite3_column_int64(s, 1);
    c->variant = (uint32_t)sqlite3_column_int64(s, 2);
    int ret = store_column_copy(s, 3, c->host, sizeof c->host, err);
    if (ret == 0)
        ret = store_column_copy(s, 4, c->peer, sizeof c->peer, err);
    if (ret == 0)
        ret = store_column_dup(s, 5, &c->params_json, err);
    if (ret == 0 && c->params_json == NULL)
        ret = sm_error_set(err, SM_EPARSE, "cell %u: no params", (unsigned)c->idx);
    if (ret == 0) {
        const unsigned char *why = sqlite3_column_text(s, 6);
        c->stopped = sm_reps_stop_parse((const char *)why);
    }
    if (ret != 0) {
        free(c->params_json);
        c->params_json = NULL;
    }
    return ret;
}

static void fini_cell(void *row)
{
    sm_cell_row *c = row;
    free(c->params_json);
}

static const store_row_type cell_rows = {sizeof(sm_cell_row), read_cell, fini_cell};

int sm_store_cells_list(sm_store *st, uint64_t run_id, sm_cell_row **prows, size_t *pn,
                        sm_error *err)
{
    void *rows;
    int ret = store_collect_run(st, Q_CELLS_LIST, run_id, &cell_rows, &rows, pn, "cells list", err);
    if (ret == 0)
        *prows = rows;
    return ret;
}

void sm_store_cells_free(sm_cell_row *rows, size_t n)
{
    store_rows_free(&cell_rows, rows, n);
}
