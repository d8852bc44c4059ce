/* The store's agents table. */
#include "coordinator/store/internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const agent_status_names[] = {
    [SM_AGENT_ONLINE] = "online",
    [SM_AGENT_STATUS_BUSY] = "busy",
    [SM_AGENT_LOST] = "lost",
};

#define N_AGENT_STATUS (sizeof agent_status_names / sizeof agent_status_names[0])

const char *sm_agent_status_name(sm_agent_status s)
{
    return (unsigned)s < N_AGENT_STATUS ? agent_status_names[s] : "unknown";
}

void sm_agent_row_fini(sm_agent_row *a)
{
    if (a == NULL)
        return;
    free(a->labels_json);
    free(a->facts_json);
    a->labels_json = NULL;
    a->facts_json = NULL;
}

int sm_store_agent_upsert(sm_store *st, const sm_agent_row *a, sm_error *err)
{
    if (!store_fits(a->name, sizeof a->name) || !store_fits(a->boot, sizeof a->boot) ||
        !store_fits(a->data_addr, sizeof a->data_addr))
        return sm_error_set(err, SM_EINVAL, "agent: a name field is not terminated");
    if (a->name[0] == '\0')
        return sm_error_set(err, SM_EINVAL, "agent: empty name");
    if ((unsigned)a->status >= N_AGENT_STATUS)
        return sm_error_set(err, SM_EINVAL, "agent %s: status %d out of range", a->name,
                            (int)a->status);
    sqlite3_stmt *s = st->stmts[Q_AGENT_UPSERT];
    int rc = sqlite3_bind_text(s, 1, a->name, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 2, a->boot, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 3, a->data_addr, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 4, a->labels_json ? a->labels_json : "{}", -1, SQLITE_STATIC);
    /* An unbound facts_json (?5) stays NULL, which the upsert reads as "keep the old facts". */
    if (rc == SQLITE_OK && a->facts_json != NULL)
        rc = sqlite3_bind_text(s, 5, a->facts_json, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 6, a->first_seen_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(s, 7, a->last_seen_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 8, agent_status_names[a->status], -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    int ret = rc == SQLITE_DONE ? 0 : store_db_error(st->db, err, "agent upsert");
    store_done_with(s);
    return ret;
}

int sm_store_agent_set_status(sm_store *st, const char *name, sm_agent_status status,
                              int64_t now_ms, sm_error *err)
{
    if ((unsigned)status >= N_AGENT_STATUS)
        return sm_error_set(err, SM_EINVAL, "agent %s: status %d out of range", name, (int)status);
    sqlite3_stmt *s = st->stmts[Q_AGENT_SET_STATUS];
    int rc = sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 2, agent_status_names[status], -1, SQLITE_STATIC);
    /* Online and busy are learnt from the agent's own request, so it was seen now; lost is
     * declared for its silence, and its last_seen_ms must keep saying when it went quiet. */
    if (rc == SQLITE_OK && status != SM_AGENT_LOST)
        rc = sqlite3_bind_int64(s, 3, now_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    int ret = 0;
    if (rc != SQLITE_DONE)
        ret = store_db_error(st->db, err, "agent set status");
    else if (sqlite3_changes(st->db) == 0)
        ret = sm_error_set(err, SM_EINVAL, "no agent named %s", name);
    store_done_with(s);
    return ret;
}

static int read_agent(sqlite3_stmt *s, void *row, sm_error *err)
{
    sm_agent_row *a = row;
    memset(a, 0, sizeof *a);
    int ret = store_column_copy(s, 0, a->name, sizeof a->name, err);
    if (ret == 0)
        ret = store_column_copy(s, 1, a->boot, sizeof a->boot, err);
    if (ret == 0)
        ret = store_column_copy(s, 2, a->data_addr, sizeof a->data_addr, err);
    if (ret == 0)
        ret = store_column_dup(s, 3, &a->labels_json, err);
    if (ret == 0)
        ret = store_column_dup(s, 4, &a->facts_json, err);
    if (ret == 0) {
        a->first_seen_ms = sqlite3_column_int64(s, 5);
        a->last_seen_ms = sqlite3_column_int64(s, 6);
        int status =
            store_name_index(agent_status_names, N_AGENT_STATUS, sqlite3_column_text(s, 7));
        if (status < 0)
            ret = sm_error_set(err, SM_EPARSE, "agent %s: unknown status", a->name);
        else
            a->status = (sm_agent_status)status;
    }
    if (ret != 0)
        sm_agent_row_fini(a);
    return ret;
}

static void fini_agent(void *row)
{
    sm_agent_row_fini(row);
}

static const store_row_type agent_rows = {sizeof(sm_agent_row), read_agent, fini_agent};

int sm_store_agents_list(sm_store *st, sm_agent_row **prows, size_t *pn, sm_error *err)
{
    void *rows;
    int ret = store_collect(st->stmts[Q_AGENTS_LIST], &agent_rows, &rows, pn, "agents list", err);
    if (ret == 0)
        *prows = rows;
    return ret;
}

void sm_store_agents_free(sm_agent_row *rows, size_t n)
{
    store_rows_free(&agent_rows, rows, n);
}

int sm_store_agent_get(sm_store *st, const char *name, sm_agent_row *out, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_AGENT_GET];
    int ret = 0, rc = sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        ret = read_agent(s, out, err);
    else if (rc == SQLITE_DONE)
        ret = sm_error_set(err, SM_EINVAL, "no agent named %s", name);
    else
        ret = store_db_error(st->db, err, "agent get");
    store_done_with(s);
    return ret;
}
