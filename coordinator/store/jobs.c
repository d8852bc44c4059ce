/* The store's jobs table: jobs queued alone and the jobs of matrix runs. */
#include "coordinator/store/internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const job_state_names[] = {
    [SM_JOB_QUEUED] = "queued", [SM_JOB_ASSIGNED] = "assigned", [SM_JOB_RUNNING] = "running",
    [SM_JOB_DONE] = "done",     [SM_JOB_FAILED] = "failed",
};

#define N_JOB_STATE (sizeof job_state_names / sizeof job_state_names[0])

const char *sm_job_state_name(sm_job_state s)
{
    return (unsigned)s < N_JOB_STATE ? job_state_names[s] : "unknown";
}

void sm_job_row_fini(sm_job_row *j)
{
    if (j == NULL)
        return;
    free(j->params_json);
    j->params_json = NULL;
}

int sm_store_job_insert(sm_store *st, const char *host, const char *params_json, int64_t now_ms,
                        uint64_t *id, sm_error *err)
{
    if (host == NULL || host[0] == '\0' || strlen(host) >= FIELD_SIZE(sm_job_row, host))
        return sm_error_set(err, SM_EINVAL, "job: host must be 1 to %zu bytes",
                            FIELD_SIZE(sm_job_row, host) - 1);
    if (params_json == NULL)
        return sm_error_set(err, SM_EINVAL, "job for %s: no params", host);
    sqlite3_stmt *s = st->stmts[Q_JOB_INSERT];
    int rc = sqlite3_bind_text(s, 1, host, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 2, params_json, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 3, now_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    int ret = 0;
    if (rc == SQLITE_DONE)
        *id = (uint64_t)sqlite3_last_insert_rowid(st->db);
    else
        ret = store_db_error(st->db, err, "job insert");
    store_done_with(s);
    return ret;
}

static int read_job(sqlite3_stmt *s, void *row, sm_error *err)
{
    sm_job_row *j = row;
    memset(j, 0, sizeof *j);
    j->id = (uint64_t)sqlite3_column_int64(s, 0);
    int ret = store_column_copy(s, 1, j->host, sizeof j->host, err);
    if (ret == 0)
        ret = store_column_dup(s, 2, &j->params_json, err);
    if (ret == 0 && j->params_json == NULL)
        ret = sm_error_set(err, SM_EPARSE, "job %llu: no params", (unsigned long long)j->id);
    if (ret == 0) {
        int state = store_name_index(job_state_names, N_JOB_STATE, sqlite3_column_text(s, 3));
        if (state < 0)
            ret =
                sm_error_set(err, SM_EPARSE, "job %llu: unknown state", (unsigned long long)j->id);
        else
            j->state = (sm_job_state)state;
    }
    if (ret == 0)
        ret = store_column_copy(s, 4, j->reason, sizeof j->reason, err);
    if (ret == 0) {
        j->attempt = (uint32_t)sqlite3_column_int64(s, 5);
        /* A NULL stamp reads as 0, the struct's "not yet". */
        j->created_ms = sqlite3_column_int64(s, 6);
        j->assigned_ms = sqlite3_column_int64(s, 7);
        j->started_ms = sqlite3_column_int64(s, 8);
        j->finished_ms = sqlite3_column_int64(s, 9);
        /* The NULL run_id of a job queued alone reads as 0 too. */
        j->run_id = (uint64_t)sqlite3_column_int64(s, 10);
        j->cell = (uint32_t)sqlite3_column_int64(s, 11);
        j->rep = (uint32_t)sqlite3_column_int64(s, 12);
        j->warmup = sqlite3_column_int64(s, 13) != 0;
        j->round = (uint32_t)sqlite3_column_int64(s, 14);
        j->ord = (uint32_t)sqlite3_column_int64(s, 15);
        ret = store_column_copy(s, 16, j->peer, sizeof j->peer, err);
    }
    if (ret != 0)
        sm_job_row_fini(j);
    return ret;
}

int sm_store_job_get(sm_store *st, uint64_t id, sm_job_row *out, sm_error *err)
{
    return store_get_row(st, Q_JOB_GET, id, "job", read_job, out, err);
}

int sm_store_job_set_state(sm_store *st, uint64_t id, uint32_t attempt, sm_job_state state,
                           const char *reason, int64_t now_ms, sm_error *err)
{
    if ((unsigned)state >= N_JOB_STATE)
        return sm_error_set(err, SM_EINVAL, "job %llu: state %d out of range",
                            (unsigned long long)id, (int)state);
    if (reason == NULL)
        reason = "";
    if (strlen(reason) >= FIELD_SIZE(sm_job_row, reason))
        return sm_error_set(err, SM_EINVAL, "job %llu: reason longer than %zu bytes",
                            (unsigned long long)id, FIELD_SIZE(sm_job_row, reason) - 1);
    int stamp = 0; /* the parameter of the column that this state stamps */
    switch (state) {
    case SM_JOB_ASSIGNED:
        stamp = 5;
        break;
    case SM_JOB_RUNNING:
        stamp = 6;
        break;
    case SM_JOB_DONE:
    case SM_JOB_FAILED:
        stamp = 7;
        break;
    case SM_JOB_QUEUED:
        break;
    }
    sqlite3_stmt *s = st->stmts[Q_JOB_SET_STATE];
    int ret = store_bind_id(s, 1, id, "job", err);
    if (ret != 0)
        goto out;
    int rc = sqlite3_bind_text(s, 2, job_state_names[state], -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 3, reason, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 4, attempt);
    if (rc == SQLITE_OK && stamp != 0)
        rc = sqlite3_bind_int64(s, stamp, now_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int(s, 8, state == SM_JOB_QUEUED);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    if (rc != SQLITE_DONE)
        ret = store_db_error(st->db, err, "job set state");
    else if (sqlite3_changes(st->db) == 0)
        ret = sm_error_set(err, SM_EINVAL, "no job %llu", (unsigned long long)id);
out:
    store_done_with(s);
    return ret;
}

static void fini_job(void *row)
{
    sm_job_row_fini(row);
}

static const store_row_type job_rows = {sizeof(sm_job_row), read_job, fini_job};

int sm_store_jobs_unfinished(sm_store *st, sm_job_row **prows, size_t *pn, sm_error *err)
{
    void *rows;
    int ret =
        store_collect(st->stmts[Q_JOBS_UNFINISHED], &job_rows, &rows, pn, "jobs unfinished", err);
    if (ret == 0)
        *prows = rows;
    return ret;
}

void sm_store_jobs_free(sm_job_row *rows, size_t n)
{
    store_rows_free(&job_rows, rows, n);
}

int sm_store_job_insert_run(sm_store *st, const sm_job_row *j, int64_t now_ms, uint64_t *id,
                            sm_error *err)
{
    if (j == NULL || j->params_json == NULL)
        return sm_error_set(err, SM_EINVAL, "job of a run: no params");
    if (j->run_id == 0)
        return sm_error_set(err, SM_EINVAL, "job of a run: run_id 0 names no run");
    if (!store_fits(j->host, sizeof j->host) || !store_fits(j->peer, sizeof j->peer) ||
        j->host[0] == '\0')
        return sm_error_set(err, SM_EINVAL, "job of run %llu: host must be 1 to %zu bytes",
                            (unsigned long long)j->run_id, sizeof j->host - 1);
    sqlite3_stmt *s = st->stmts[Q_JOB_INSERT_RUN];
    int ret = store_bind_id(s, 4, j->run_id, "run", err);
    if (ret != 0)
        goto out;
    int rc = sqlite3_bind_text(s, 1, j->host, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 2, j->params_json, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 3, now_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 5, j->cell);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 6, j->rep);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int(s, 7, j->warmup ? 1 : 0);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 8, j->round);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 9, j->ord);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 10, j->peer, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    if (rc == SQLITE_DONE)
        *id = (uint64_t)sqlite3_last_insert_rowid(st->db);
    else
        ret = sm_error_set(err, store_code_of(sqlite3_extended_errcode(st->db)),
                           "job of run %llu: %s", (unsigned long long)j->run_id,
                           sqlite3_errmsg(st->db));
out:
    store_done_with(s);
    return ret;
}

int sm_store_run_jobs(sm_store *st, uint64_t run_id, sm_job_row **prows, size_t *pn, sm_error *err)
{
    void *rows;
    int ret = store_collect_run(st, Q_RUN_JOBS, run_id, &job_rows, &rows, pn, "run jobs", err);
    if (ret == 0)
        *prows = rows;
    return ret;
}

int sm_store_agent_jobs(sm_store *st, const char *host, size_t limit, sm_job_row **prows,
                        size_t *pn, sm_error *err)
{
    if (host == NULL || !store_fits(host, FIELD_SIZE(sm_job_row, host)))
        return sm_error_set(err, SM_EINVAL, "jobs of a host: host must be at most %zu bytes",
                            FIELD_SIZE(sm_job_row, host) - 1);
    if (limit < 1 || limit > SM_STORE_AGENT_JOBS_MAX)
        return sm_error_set(err, SM_EINVAL, "jobs of %s: limit must be 1 to %d", host,
                            SM_STORE_AGENT_JOBS_MAX);
    sqlite3_stmt *s = st->stmts[Q_AGENT_JOBS];
    int rc = sqlite3_bind_text(s, 1, host, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 2, (sqlite3_int64)limit);
    if (rc != SQLITE_OK) {
        const int ret = store_db_error(st->db, err, "jobs of a host");
        store_done_with(s);
        return ret;
    }
    void *rows;
    const int ret = store_collect(s, &job_rows, &rows, pn, "jobs of a host", err);
    if (ret == 0)
        *prows = rows;
    return ret;
}
