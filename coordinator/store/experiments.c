/* The store's experiments: runs that measure an anomaly of an earlier run again with
 * treatments, and the run each explains. */
#include "coordinator/store/internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void sm_experiment_row_fini(sm_experiment_row *r)
{
    if (r == NULL)
        return;
    free(r->plan_json);
    r->plan_json = NULL;
}

int sm_store_experiment_insert(sm_store *st, const sm_experiment_row *r, sm_error *err)
{
    if (r->host[0] == '\0' || !store_fits(r->host, sizeof r->host) || r->test[0] == '\0' ||
        !store_fits(r->test, sizeof r->test) || r->plan_json == NULL)
        return sm_error_set(err, SM_EINVAL, "experiment: a host, a test and a plan");
    sqlite3_stmt *s = st->stmts[Q_XP_INSERT];
    int ret = store_bind_id(s, 1, r->run_id, "run", err);
    if (ret == 0)
        ret = store_bind_id(s, 2, r->parent_run, "run", err);
    if (ret == 0) {
        int rc = sqlite3_bind_text(s, 3, r->host, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_text(s, 4, r->test, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_text(s, 5, r->plan_json, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_int64(s, 6, r->created_ms);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(s);
        if (rc != SQLITE_DONE)
            ret = store_db_error(st->db, err, "experiment insert");
    }
    store_done_with(s);
    return ret;
}

static int read_experiment(sqlite3_stmt *s, void *row, sm_error *err)
{
    sm_experiment_row *r = row;
    memset(r, 0, sizeof *r);
    r->run_id = (uint64_t)sqlite3_column_int64(s, 0);
    r->parent_run = (uint64_t)sqlite3_column_int64(s, 1);
    int ret = store_column_copy(s, 2, r->host, sizeof r->host, err);
    if (ret == 0)
        ret = store_column_copy(s, 3, r->test, sizeof r->test, err);
    if (ret == 0)
        ret = store_column_dup(s, 4, &r->plan_json, err);
    r->created_ms = sqlite3_column_int64(s, 5);
    if (ret != 0)
        sm_experiment_row_fini(r);
    return ret;
}

static void fini_experiment(void *row)
{
    sm_experiment_row_fini(row);
}

static const store_row_type experiment_rows = {sizeof(sm_experiment_row), read_experiment,
                                               fini_experiment};

int sm_store_experiment_get(sm_store *st, uint64_t run_id, sm_experiment_row *out, sm_error *err)
{
    return store_get_row(st, Q_XP_GET, run_id, "experiment", read_experiment, out, err);
}

int sm_store_experiments_of(sm_store *st, uint64_t parent_run, sm_experiment_row **rows, size_t *n,
                            sm_error *err)
{
    void *v = NULL;
    int ret =
        store_collect_run(st, Q_XP_OF, parent_run, &experiment_rows, &v, n, "experiments", err);
    if (ret == 0)
        *rows = v;
    return ret;
}

void sm_store_experiments_free(sm_experiment_row *rows, size_t n)
{
    store_rows_free(&experiment_rows, rows, n);
}

int sm_store_experiments_to_notify(sm_store *st, uint64_t (*pairs)[2], size_t max, size_t *n,
                                   sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_XP_TO_NOTIFY];
    *n = 0;
    int rc = sqlite3_bind_int64(s, 1, (sqlite3_int64)(max < INT64_MAX ? max : INT64_MAX));
    if (rc == SQLITE_OK) {
        while ((rc = sqlite3_step(s)) == SQLITE_ROW && *n < max) {
            pairs[*n][0] = (uint64_t)sqlite3_column_int64(s, 0);
            pairs[*n][1] = (uint64_t)sqlite3_column_int64(s, 1);
            (*n)++;
        }
    }
    int ret = rc == SQLITE_ROW || rc == SQLITE_DONE
                  ? 0
                  : store_db_error(st->db, err, "experiments to notify");
    store_done_with(s);
    return ret;
}

int sm_store_experiments_to_follow(sm_store *st, uint64_t *ids, size_t max, size_t *n,
                                   sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_XP_TO_FOLLOW];
    *n = 0;
    int rc = sqlite3_bind_int64(s, 1, (sqlite3_int64)(max < INT64_MAX ? max : INT64_MAX));
    if (rc == SQLITE_OK)
        while ((rc = sqlite3_step(s)) == SQLITE_ROW && *n < max)
            ids[(*n)++] = (uint64_t)sqlite3_column_int64(s, 0);
    int ret = rc == SQLITE_ROW || rc == SQLITE_DONE
                  ? 0
                  : store_db_error(st->db, err, "experiments to follow");
    store_done_with(s);
    return ret;
}

int sm_store_experiment_runs(sm_store *st, uint64_t *ids, size_t max, size_t *n, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_XP_RUNS];
    *n = 0;
    int rc = sqlite3_bind_int64(s, 1, (sqlite3_int64)(max < INT64_MAX ? max : INT64_MAX));
    if (rc == SQLITE_OK)
        while ((rc = sqlite3_step(s)) == SQLITE_ROW && *n < max)
            ids[(*n)++] = (uint64_t)sqlite3_column_int64(s, 0);
    int ret =
        rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_db_error(st->db, err, "experiment runs");
    store_done_with(s);
    return ret;
}

/* Sets flag q (notified, followed) of experiment run_id. */
static int set_flag(sm_store *st, int q, uint64_t run_id, const char *what, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[q];
    int ret = store_bind_id(s, 1, run_id, "experiment", err);
    if (ret == 0) {
        if (sqlite3_step(s) != SQLITE_DONE)
            ret = store_db_error(st->db, err, what);
        else if (sqlite3_changes(st->db) == 0)
            ret = sm_error_set(err, SM_EINVAL, "no experiment %llu", (unsigned long long)run_id);
    }
    store_done_with(s);
    return ret;
}

int sm_store_experiment_set_followed(sm_store *st, uint64_t run_id, sm_error *err)
{
    return set_flag(st, Q_XP_SET_FOLLOWED, run_id, "experiment followed", err);
}

int sm_store_experiment_set_notified(sm_store *st, uint64_t run_id, sm_error *err)
{
    return set_flag(st, Q_XP_SET_NOTIFIED, run_id, "experiment notified", err);
}
