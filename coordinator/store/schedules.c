/* The store's recurring runs (schedules), their runs' link and the events table. */
#include "coordinator/store/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sm_schedule_row_fini(sm_schedule_row *r)
{
    if (r == NULL)
        return;
    free(r->spec_json);
    free(r->hosts_json);
    r->spec_json = r->hosts_json = NULL;
}

/* Runs a bound statement that changes one schedule; SM_EINVAL when it changed none. */
static int change_one(sm_store *st, sqlite3_stmt *s, int rc, uint64_t id, const char *what,
                      sm_error *err)
{
    int ret = 0;
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    if (rc != SQLITE_DONE)
        ret = store_db_error(st->db, err, what);
    else if (sqlite3_changes(st->db) == 0)
        ret = sm_error_set(err, SM_EINVAL, "no schedule %llu", (unsigned long long)id);
    store_done_with(s);
    return ret;
}

int sm_store_schedule_insert(sm_store *st, const sm_schedule_row *r, int64_t now_ms, uint64_t *id,
                             sm_error *err)
{
    if (r->name[0] == '\0' || !store_fits(r->name, sizeof r->name))
        return sm_error_set(err, SM_EINVAL, "schedule: name must be 1 to %zu bytes",
                            sizeof r->name - 1);
    if (r->spec_json == NULL || !store_fits(r->cron, sizeof r->cron) ||
        !store_fits(r->webhook_url, sizeof r->webhook_url))
        return sm_error_set(err, SM_EINVAL, "schedule %s: no spec, or a field too long", r->name);
    if ((r->every_s == 0) == (r->cron[0] == '\0'))
        return sm_error_set(err, SM_EINVAL, "schedule %s: an interval or a cron expression",
                            r->name);
    sqlite3_stmt *s = st->stmts[Q_SCHED_INSERT];
    int rc = sqlite3_bind_text(s, 1, r->name, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 2, r->spec_json, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 3, r->every_s);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 4, r->cron, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 5, r->hosts_json ? r->hosts_json : "", -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 6, r->webhook_url, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int(s, 7, r->paused ? 1 : 0);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 8, now_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 9, r->next_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    int ret = 0;
    if (rc == SQLITE_DONE)
        *id = (uint64_t)sqlite3_last_insert_rowid(st->db);
    else
        ret = store_db_error(st->db, err, "schedule insert");
    store_done_with(s);
    return ret;
}

static int read_schedule(sqlite3_stmt *s, void *row, sm_error *err)
{
    sm_schedule_row *r = row;
    memset(r, 0, sizeof *r);
    r->id = (uint64_t)sqlite3_column_int64(s, 0);
    int ret = store_column_copy(s, 1, r->name, sizeof r->name, err);
    if (ret == 0)
        ret = store_column_dup(s, 2, &r->spec_json, err);
    if (ret == 0) {
        r->every_s = (uint32_t)sqlite3_column_int64(s, 3);
        ret = store_column_copy(s, 4, r->cron, sizeof r->cron, err);
    }
    if (ret == 0)
        ret = store_column_dup(s, 5, &r->hosts_json, err);
    if (ret == 0)
        ret = store_column_copy(s, 6, r->webhook_url, sizeof r->webhook_url, err);
    if (ret == 0 && (r->spec_json == NULL || r->hosts_json == NULL))
        ret = sm_error_set(err, SM_EPARSE, "schedule %llu: no spec", (unsigned long long)r->id);
    if (ret == 0) {
        r->paused = sqlite3_column_int64(s, 7) != 0;
        r->created_ms = sqlite3_column_int64(s, 8);
        r->next_ms = sqlite3_column_int64(s, 9);
        r->notified_run = (uint64_t)sqlite3_column_int64(s, 10);
        r->last_run = (uint64_t)sqlite3_column_int64(s, 11);
        const char *state = (const char *)sqlite3_column_text(s, 12);
        for (int k = SM_RUN_RUNNING; state && k <= SM_RUN_CANCELLED; k++)
            if (strcmp(state, sm_run_state_name((sm_run_state)k)) == 0)
                r->last_state = (sm_run_state)k;
        r->n_runs = (uint32_t)sqlite3_column_int64(s, 13);
        r->webhook_generation = (uint32_t)sqlite3_column_int64(s, 14);
    }
    if (ret != 0)
        sm_schedule_row_fini(r);
    return ret;
}

static void fini_schedule(void *row)
{
    sm_schedule_row_fini(row);
}

static const store_row_type schedule_rows = {sizeof(sm_schedule_row), read_schedule, fini_schedule};

void sm_store_schedules_free(sm_schedule_row *rows, size_t n)
{
    store_rows_free(&schedule_rows, rows, n);
}

/* The schedules s (already bound) selects; 0 or an error with nothing to free. */
static int schedules_collect(sqlite3_stmt *s, sm_schedule_row **prows, size_t *pn, const char *what,
                             sm_error *err)
{
    void *rows;
    int ret = store_collect(s, &schedule_rows, &rows, pn, what, err);
    if (ret == 0)
        *prows = rows;
    return ret;
}

int sm_store_schedule_get(sm_store *st, uint64_t id, sm_schedule_row *out, sm_error *err)
{
    return store_get_row(st, Q_SCHED_GET, id, "schedule", read_schedule, out, err);
}

int sm_store_schedules_list(sm_store *st, sm_schedule_row **rows, size_t *n, sm_error *err)
{
    return schedules_collect(st->stmts[Q_SCHED_LIST], rows, n, "schedules list", err);
}

int sm_store_schedules_due(sm_store *st, int64_t now_ms, sm_schedule_row **rows, size_t *n,
                           sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_SCHED_DUE];
    if (sqlite3_bind_int64(s, 1, now_ms) != SQLITE_OK) {
        int ret = store_db_error(st->db, err, "schedules due");
        store_done_with(s);
        return ret;
    }
    return schedules_collect(s, rows, n, "schedules due", err);
}

int sm_store_schedule_set_next(sm_store *st, uint64_t id, int64_t next_ms, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_SCHED_SET_NEXT];
    int ret = store_bind_id(s, 1, id, "schedule", err);
    if (ret != 0) {
        store_done_with(s);
        return ret;
    }
    return change_one(st, s, sqlite3_bind_int64(s, 2, next_ms), id, "schedule next", err);
}

int sm_store_schedule_set_paused(sm_store *st, uint64_t id, bool paused, int64_t next_ms,
                                 sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_SCHED_SET_PAUSED];
    int ret = store_bind_id(s, 1, id, "schedule", err);
    if (ret != 0) {
        store_done_with(s);
        return ret;
    }
    int rc = sqlite3_bind_int(s, 2, paused ? 1 : 0);
    if (rc == SQLITE_OK)
        rc = next_ms ? sqlite3_bind_int64(s, 3, next_ms) : sqlite3_bind_null(s, 3);
    return change_one(st, s, rc, id, "schedule pause", err);
}

int sm_store_schedule_delete(sm_store *st, uint64_t id, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_SCHED_DELETE];
    int ret = store_bind_id(s, 1, id, "schedule", err);
    if (ret != 0) {
        store_done_with(s);
        return ret;
    }
    return change_one(st, s, SQLITE_OK, id, "schedule delete", err);
}

int sm_store_schedule_rotate_webhook(sm_store *st, uint64_t id, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_SCHED_ROTATE];
    int ret = store_bind_id(s, 1, id, "schedule", err);
    if (ret != 0) {
        store_done_with(s);
        return ret;
    }
    ret = change_one(st, s, SQLITE_OK, id, "schedule webhook rotation", err);
    if (ret == SM_EINVAL)
        sm_error_set(err, SM_EINVAL, "no schedule %llu with a webhook", (unsigned long long)id);
    return ret;
}

int sm_store_schedule_set_notified(sm_store *st, uint64_t id, uint64_t run_id, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_SCHED_SET_NOTIFIED];
    int ret = store_bind_id(s, 1, id, "schedule", err);
    if (ret == 0)
        ret = store_bind_id(s, 2, run_id, "run", err);
    if (ret != 0) {
        store_done_with(s);
        return ret;
    }
    return change_one(st, s, SQLITE_OK, id, "schedule notified", err);
}

int sm_store_run_set_schedule(sm_store *st, uint64_t run_id, uint64_t schedule_id, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_RUN_SET_SCHEDULE];
    int ret = store_bind_id(s, 1, run_id, "run", err);
    if (ret == 0)
        ret = store_bind_id(s, 2, schedule_id, "schedule", err);
    if (ret != 0) {
        store_done_with(s);
        return ret;
    }
    int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE)
        ret = sm_error_set(err, store_code_of(sqlite3_extended_errcode(st->db)),
                           "run %llu schedule: %s", (unsigned long long)run_id,
                           sqlite3_errmsg(st->db));
    else if (sqlite3_changes(st->db) == 0)
        ret = sm_error_set(err, SM_EINVAL, "no run %llu", (unsigned long long)run_id);
    store_done_with(s);
    return ret;
}

int sm_store_schedule_runs(sm_store *st, uint64_t id, size_t limit, sm_run_row **prows, size_t *pn,
                           sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_SCHED_RUNS];
    int ret = store_bind_id(s, 1, id, "schedule", err);
    const int64_t lim = limit > (size_t)INT64_MAX ? INT64_MAX : (int64_t)limit;
    if (ret == 0 && sqlite3_bind_int64(s, 2, lim) != SQLITE_OK)
        ret = store_db_error(st->db, err, "schedule runs");
    if (ret != 0) {
        store_done_with(s);
        return ret;
    }
    void *rows;
    ret = store_collect(s, &store_run_rows, &rows, pn, "schedule runs", err);
    if (ret == 0)
        *prows = rows;
    return ret;
}

int sm_store_schedules_to_notify(sm_store *st, uint64_t (*pairs)[2], size_t max, size_t *n,
                                 sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_SCHED_TO_NOTIFY];
    *n = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW && *n < max) {
        pairs[*n][0] = (uint64_t)sqlite3_column_int64(s, 0);
        pairs[*n][1] = (uint64_t)sqlite3_column_int64(s, 1);
        (*n)++;
    }
    int ret = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_db_error(st->db, err, "to notify");
    store_done_with(s);
    return ret;
}

int sm_store_event_insert(sm_store *st, int64_t ts_ms, const char *kind, const char *subject,
                          const char *detail, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_EVENT_INSERT];
    int rc = sqlite3_bind_int64(s, 1, ts_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 3, subject, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 4, detail, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    int ret = rc == SQLITE_DONE ? 0 : store_db_error(st->db, err, "event insert");
    store_done_with(s);
    return ret;
}

static int read_event(sqlite3_stmt *s, void *row, sm_error *err)
{
    sm_event_row *e = row;
    memset(e, 0, sizeof *e);
    e->ts_ms = sqlite3_column_int64(s, 0);
    /* Cut rather than refused: an event is for people, and a long detail is still worth it. */
    const char *kind = (const char *)sqlite3_column_text(s, 1);
    const char *detail = (const char *)sqlite3_column_text(s, 2);
    snprintf(e->kind, sizeof e->kind, "%s", kind ? kind : "");
    snprintf(e->detail, sizeof e->detail, "%s", detail ? detail : "");
    (void)err;
    return 0;
}

int sm_store_events_of(sm_store *st, const char *subject, size_t limit, sm_event_row **prows,
                       size_t *pn, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_EVENTS_OF];
    const int64_t lim = limit > (size_t)INT64_MAX ? INT64_MAX : (int64_t)limit;
    int rc = sqlite3_bind_text(s, 1, subject, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 2, lim);
    if (rc != SQLITE_OK) {
        int ret = store_db_error(st->db, err, "events");
        store_done_with(s);
        return ret;
    }
    /* An event holds nothing to free beside itself: the caller free()s the array. */
    static const store_row_type event_rows = {sizeof(sm_event_row), read_event, NULL};
    void *rows;
    int ret = store_collect(s, &event_rows, &rows, pn, "events", err);
    if (ret == 0)
        *prows = rows;
    return ret;
}
