/* The store's host fingerprints: each host's history, and the fingerprint each run saw. */
#include "coordinator/store/internal.h"

#include <stdlib.h>
#include <string.h>

void sm_fp_row_fini(sm_fp_row *r)
{
    if (r == NULL)
        return;
    free(r->json);
    r->json = NULL;
}

static int read_fp(sqlite3_stmt *s, void *row, sm_error *err)
{
    sm_fp_row *r = row;
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(s, 0);
    int ret = store_column_copy(s, 1, r->agent, sizeof r->agent, err);
    if (ret == 0)
        ret = store_column_copy(s, 2, r->hash, sizeof r->hash, err);
    if (ret == 0 && sqlite3_column_type(s, 3) != SQLITE_NULL)
        ret = store_column_dup(s, 3, &r->json, err);
    r->first_seen_ms = sqlite3_column_int64(s, 4);
    r->last_seen_ms = sqlite3_column_int64(s, 5);
    if (ret != 0)
        sm_fp_row_fini(r);
    return ret;
}

static void fini_fp(void *row)
{
    sm_fp_row_fini(row);
}

static const store_row_type fp_rows = {sizeof(sm_fp_row), read_fp, fini_fp};

void sm_fp_rows_free(sm_fp_row *rows, size_t n)
{
    store_rows_free(&fp_rows, rows, n);
}

int sm_store_fp_latest(sm_store *st, const char *agent, sm_fp_row *out, bool *found, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_FP_LATEST];
    memset(out, 0, sizeof *out);
    *found = false;
    int ret = 0;
    if (sqlite3_bind_text(s, 1, agent, -1, SQLITE_STATIC) != SQLITE_OK)
        ret = store_db_error(st->db, err, "fingerprint latest");
    int rc = ret == 0 ? sqlite3_step(s) : SQLITE_DONE;
    if (ret == 0 && rc == SQLITE_ROW) {
        ret = read_fp(s, out, err);
        *found = ret == 0;
    } else if (ret == 0 && rc != SQLITE_DONE) {
        ret = store_db_error(st->db, err, "fingerprint latest");
    }
    store_done_with(s);
    return ret;
}

static int exec_fp(sm_store *st, int q, int64_t id, int64_t now_ms, const char *what, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[q];
    int rc = sqlite3_bind_int64(s, 1, id);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 2, now_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    int ret = rc == SQLITE_DONE ? 0 : store_db_error(st->db, err, what);
    store_done_with(s);
    return ret;
}

static int insert_fp(sm_store *st, const char *agent, const char *hash, const char *json,
                     int64_t now_ms, int64_t *id, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_FP_INSERT];
    int rc = sqlite3_bind_text(s, 1, agent, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 2, hash, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 3, json, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 4, now_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    int ret = rc == SQLITE_DONE ? 0 : store_db_error(st->db, err, "fingerprint insert");
    if (ret == 0)
        *id = sqlite3_last_insert_rowid(st->db);
    store_done_with(s);
    return ret;
}

/* Runs sql (made rarely: prepared here, not kept) with ?1 agent and ?2 i; *out (may be NULL)
 * gets the first column of its first row, 0 when none, and *changes the rows it changed. */
static int run_sql(sm_store *st, const char *sql, const char *agent, int64_t i, int64_t *out,
                   int64_t *changes, const char *what, sm_error *err)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
    if (rc == SQLITE_OK && sqlite3_bind_parameter_count(s) >= 1)
        rc = sqlite3_bind_text(s, 1, agent, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK && sqlite3_bind_parameter_count(s) >= 2)
        rc = sqlite3_bind_int64(s, 2, i);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    if (out)
        *out = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
    if (rc == SQLITE_ROW)
        rc = SQLITE_DONE;
    int ret = rc == SQLITE_DONE ? 0 : store_db_error(st->db, err, what);
    if (changes)
        *changes = ret == 0 ? sqlite3_changes(st->db) : 0;
    sqlite3_finalize(s);
    return ret;
}

/* The key of store_meta that counts the agent's history rows deleted so far. */
#define DROPPED_KEY "'fingerprints dropped: ' || ?1"

/* Keeps the agent's last SM_FP_HISTORY_MAX rows: the older ones go, and their count is added to
 * the agent's. A row a run refers to stays for that run's report (runs are bounded on their
 * own), out of the history. Every host's own count, so a restarted coordinator still says it. */
static int trim_history(sm_store *st, const char *agent, sm_error *err)
{
    int64_t gone = 0;
    int ret = run_sql(st, "SAVEPOINT fp_trim", agent, 0, NULL, NULL, "fingerprint trim", err);
    if (ret != 0)
        return ret;
    ret = run_sql(st,
                  "DELETE FROM fingerprints WHERE agent = ?1 AND id < (SELECT id FROM fingerprints"
                  " WHERE agent = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2 - 1) AND NOT EXISTS"
                  " (SELECT 1 FROM run_fingerprints r WHERE r.fingerprint_id = fingerprints.id)",
                  agent, SM_FP_HISTORY_MAX, NULL, &gone, "fingerprint trim", err);
    if (ret == 0 && gone > 0)
        ret = run_sql(st,
                      "INSERT INTO store_meta(key, value) VALUES (" DROPPED_KEY ", ?2)"
                      " ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + ?2",
                      agent, gone, NULL, NULL, "fingerprint trim", err);
    if (ret != 0) {
        sm_error ignored = {0};
        run_sql(st, "ROLLBACK TO fp_trim", agent, 0, NULL, NULL, "", &ignored);
    }
    sm_error e2 = {0};
    int rel =
        run_sql(st, "RELEASE fp_trim", agent, 0, NULL, NULL, "fingerprint trim", ret ? &e2 : err);
    return ret ? ret : rel;
}

int sm_store_fp_put(sm_store *st, const char *agent, const char *hash, const char *json,
                    int64_t now_ms, int64_t *id, bool *changed, sm_error *err)
{
    if (agent[0] == '\0' || strlen(agent) >= sizeof((sm_fp_row *)0)->agent ||
        strlen(hash) >= sizeof((sm_fp_row *)0)->hash)
        return sm_error_set(err, SM_EINVAL, "fingerprint: bad agent name or hash");
    sm_fp_row last;
    bool found;
    int ret = sm_store_fp_latest(st, agent, &last, &found, err);
    if (ret != 0)
        return ret;
    bool same = found && strcmp(last.hash, hash) == 0;
    int64_t row = last.id;
    sm_fp_row_fini(&last);
    if (same)
        ret = exec_fp(st, Q_FP_SEEN, row, now_ms, "fingerprint seen", err);
    else
        ret = insert_fp(st, agent, hash, json, now_ms, &row, err);
    if (ret == 0 && !same)
        ret = trim_history(st, agent, err);
    if (ret == 0 && id != NULL)
        *id = row;
    if (ret == 0 && changed != NULL)
        *changed = !same;
    return ret;
}

int sm_store_fp_history(sm_store *st, const char *agent, sm_fp_row **prows, size_t *pn,
                        uint64_t *left_out, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_FP_HISTORY];
    *prows = NULL;
    *pn = 0;
    if (sqlite3_bind_text(s, 1, agent, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_bind_int64(s, 2, SM_FP_HISTORY_MAX) != SQLITE_OK) {
        int ret = store_db_error(st->db, err, "fingerprint history");
        store_done_with(s);
        return ret;
    }
    void *rows;
    int ret = store_collect(s, &fp_rows, &rows, pn, "fingerprint history", err);
    if (ret != 0)
        return ret;
    int64_t kept = 0, dropped = 0;
    if (left_out) {
        ret = run_sql(st, "SELECT count(*) FROM fingerprints WHERE agent = ?1", agent, 0, &kept,
                      NULL, "fingerprint history", err);
        if (ret == 0)
            ret = run_sql(st,
                          "SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = " DROPPED_KEY,
                          agent, 0, &dropped, NULL, "fingerprint history", err);
        if (ret != 0) {
            store_rows_free(&fp_rows, rows, *pn);
            *pn = 0;
            return ret;
        }
        *left_out = (uint64_t)(kept - (int64_t)*pn) + (uint64_t)dropped;
    }
    *prows = rows;
    return 0;
}

int sm_store_run_fp_tie(sm_store *st, uint64_t run_id, const char *agent, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_RUN_FP_TIE];
    int ret = store_bind_id(s, 1, run_id, "run", err);
    int rc = SQLITE_OK;
    if (ret == 0)
        rc = sqlite3_bind_text(s, 2, agent, -1, SQLITE_STATIC);
    if (ret == 0 && rc == SQLITE_OK)
        rc = sqlite3_step(s);
    if (ret == 0 && rc != SQLITE_DONE)
        ret = store_db_error(st->db, err, "run fingerprint tie");
    store_done_with(s);
    return ret;
}

int sm_store_run_fps(sm_store *st, uint64_t run_id, sm_fp_row **prows, size_t *pn, sm_error *err)
{
    void *rows;
    int ret =
        store_collect_run(st, Q_RUN_FPS, run_id, &fp_rows, &rows, pn, "run fingerprints", err);
    if (ret == 0)
        *prows = rows;
    return ret;
}
