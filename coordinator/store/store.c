/* The coordinator's store on SQLite: opening it, its schema migrations, the statement cache and
 * the transactions. The rows of each table are in agents.c, jobs.c, runs.c, results.c,
 * schedules.c, fingerprints.c and experiments.c, the WAL check in wal.c; internal.h is what
 * they share. The helpers they all use (SQLite's errors, columns, row lists) are in rows.c,
 * which this file calls and which calls nothing here. */
#include "coordinator/store/internal.h"

#include "proto/clock.h"
#include "proto/log.h"
#include "proto/msg.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(SM_STORE_ID_SIZE == SM_STORE_ID_HEX + 1, "a store id is what the reply carries");

/* Each script takes the schema from version i to i + 1 and sets user_version itself, inside the
 * transaction that runs it, so that a crash leaves either the old schema or the new one. Append
 * only: a script that shipped is never edited. */
const char *const store_migrations[] = {
    /* 0 -> 1 */
    "CREATE TABLE agents ("
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
    "PRAGMA user_version = 1;",
    /* 1 -> 2: matrix runs. A job's run_id stays NULL for a job queued alone; the other run
     * columns default to 0 and '' so that the jobs of version 1 read as such jobs. */
    "CREATE TABLE runs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " name TEXT NOT NULL,"
    " spec_json TEXT NOT NULL,"
    " state TEXT NOT NULL,"
    " reason TEXT NOT NULL DEFAULT '',"
    " created_ms INTEGER NOT NULL,"
    " finished_ms INTEGER NOT NULL DEFAULT 0,"
    " total INTEGER NOT NULL,"
    " done INTEGER NOT NULL DEFAULT 0,"
    " failed INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE cells ("
    " run_id INTEGER NOT NULL REFERENCES runs(id),"
    " idx INTEGER NOT NULL,"
    " test INTEGER NOT NULL,"
    " variant INTEGER NOT NULL,"
    " host TEXT NOT NULL,"
    " peer TEXT NOT NULL DEFAULT '',"
    " params_json TEXT NOT NULL,"
    " PRIMARY KEY(run_id, idx));"
    /* With foreign keys on, SQLite only adds a REFERENCES column whose default is NULL. */
    "ALTER TABLE jobs ADD COLUMN run_id INTEGER REFERENCES runs(id);"
    "ALTER TABLE jobs ADD COLUMN cell INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN rep INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN warmup INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN round INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN ord INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN peer TEXT NOT NULL DEFAULT '';"
    "CREATE INDEX jobs_run ON jobs(run_id, ord);"
    "PRAGMA user_version = 2;",
    /* 3: the two sides of pair jobs, each as its agent sent it; the merged result of the job
     * goes to results like any other. */
    "CREATE TABLE pair_results(job_id INTEGER NOT NULL REFERENCES jobs(id),"
    " attempt INTEGER NOT NULL, role TEXT NOT NULL, agent TEXT NOT NULL,"
    " result_json TEXT NOT NULL, stored_ms INTEGER NOT NULL,"
    " PRIMARY KEY(job_id, attempt, role));"
    "PRAGMA user_version = 3;",
    /* 4: adaptive repetitions. Why a cell got no more rounds ("ci", "max", "failed"); '' for
     * the cells of fixed repetitions and of runs still deciding. A run's total grows with
     * the rounds it adds, in the existing column. */
    "ALTER TABLE cells ADD COLUMN stopped TEXT NOT NULL DEFAULT '';"
    "CREATE INDEX jobs_run_cell ON jobs(run_id, cell);"
    "PRAGMA user_version = 4;",
    /* 5: whether a run's jobs go side by side, as decided when it started (hosts that share
     * one machine go one at a time unless the spec says), and the note that says why. A run of
     * version 3 ran as its spec said. */
    "ALTER TABLE runs ADD COLUMN parallel INTEGER NOT NULL DEFAULT 1;"
    "ALTER TABLE runs ADD COLUMN parallel_note TEXT NOT NULL DEFAULT '';"
    "UPDATE runs SET parallel = 0 WHERE CASE WHEN json_valid(spec_json)"
    " THEN json_type(spec_json, '$.parallel') END = 'false';"
    "PRAGMA user_version = 5;",
    /* 6: the store's identity. Job ids count from 1 in every store, so an agent that outlives
     * its coordinator's store tells the new one from the old by this id. randomblob draws on
     * SQLite's generator, which the operating system seeds; made inside the migration's own
     * transaction, so no store at version 6 is without one. */
    "CREATE TABLE store_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"
    "INSERT INTO store_meta(key, value) VALUES ('store_id', lower(hex(randomblob(16))));"
    "PRAGMA user_version = 6;",
    /* 7: host fingerprints. A row per distinct fingerprint of a host in the order seen (a
     * change, also back to an older one, is a new row), and per run and host the fingerprint
     * the host had when the run's first result from it was stored. */
    "CREATE TABLE fingerprints(id INTEGER PRIMARY KEY AUTOINCREMENT, agent TEXT NOT NULL,"
    " hash TEXT NOT NULL, body_json TEXT NOT NULL, first_seen_ms INTEGER NOT NULL,"
    " last_seen_ms INTEGER NOT NULL);"
    "CREATE INDEX fingerprints_agent ON fingerprints(agent, id);"
    "CREATE TABLE run_fingerprints(run_id INTEGER NOT NULL REFERENCES runs(id),"
    " agent TEXT NOT NULL, fingerprint_id INTEGER NOT NULL REFERENCES fingerprints(id),"
    " PRIMARY KEY(run_id, agent)) WITHOUT ROWID;"
    "PRAGMA user_version = 7;",
    /* 8: recurring runs. A schedule is kept when deleted (deleted = 1), so that its runs keep
     * their link; notified_run is the last of its ended runs its webhook was judged for. A
     * run's schedule_id is NULL for a run started by hand. */
    "CREATE TABLE schedules(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL,"
    " spec_json TEXT NOT NULL, every_s INTEGER NOT NULL DEFAULT 0,"
    " cron TEXT NOT NULL DEFAULT '', hosts_json TEXT NOT NULL DEFAULT '',"
    " webhook_url TEXT NOT NULL DEFAULT '', paused INTEGER NOT NULL DEFAULT 0,"
    " created_ms INTEGER NOT NULL, next_ms INTEGER NOT NULL,"
    " deleted INTEGER NOT NULL DEFAULT 0, notified_run INTEGER NOT NULL DEFAULT 0);"
    "ALTER TABLE runs ADD COLUMN schedule_id INTEGER;"
    "CREATE INDEX runs_schedule ON runs(schedule_id, id);"
    "PRAGMA user_version = 8;",
    /* 9: webhook secrets. A schedule's secret is derived from the fleet key, its id and this
     * generation (recurring/secret.h), never stored: rotating it is generation + 1. */
    ("ALTER TABLE schedules ADD COLUMN webhook_generation INTEGER NOT NULL DEFAULT 1;"
     "PRAGMA user_version = 9;"),
    /* 10: experiments. A run that measures one anomaly of an earlier run again on its host,
     * with treatments (coordinator/analysis/experiment.h), has a row here: the run it explains,
     * the anomaly's host and test, and the plan it was made from. */
    ("CREATE TABLE experiments(run_id INTEGER PRIMARY KEY REFERENCES runs(id),"
     " parent_run INTEGER NOT NULL REFERENCES runs(id), host TEXT NOT NULL,"
     " test TEXT NOT NULL, plan_json TEXT NOT NULL, created_ms INTEGER NOT NULL);"
     "CREATE INDEX experiments_parent ON experiments(parent_run, run_id);"
     "PRAGMA user_version = 10;"),
    /* 11: an experiment's end. notified is 1 once it was told to the webhook of the schedule
     * whose run it explains (or there was none to tell); followed is 1 once the search it
     * starts or is a stage of was taken on from it (its next stage started, or none due).
     * Those that ended before this version are neither told nor followed. */
    ("ALTER TABLE experiments ADD COLUMN notified INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE experiments ADD COLUMN followed INTEGER NOT NULL DEFAULT 0;"
     "UPDATE experiments SET notified = 1, followed = 1;"
     "PRAGMA user_version = 11;"),
};

#define SCHEMA_VERSION ((int)(sizeof store_migrations / sizeof store_migrations[0]))

#define JOB_COLUMNS                                                                                \
    "id, host, params_json, state, reason, attempt, created_ms, assigned_ms, started_ms, "         \
    "finished_ms, run_id, cell, rep, warmup, round, ord, peer"

/* spec is the column that fills spec_json: "spec_json", or "NULL" where lists leave it out. */
#define RUN_COLUMNS(spec)                                                                          \
    "id, name, " spec ", state, reason, created_ms, finished_ms, total, done, failed,"             \
    " parallel, parallel_note, schedule_id"

#define XP_COLUMNS "run_id, parent_run, host, test, plan_json, created_ms"

/* A schedule with its last run (id and state) and how many runs it started. */
#define SCHED_COLUMNS                                                                              \
    "id, name, spec_json, every_s, cron, hosts_json, webhook_url, paused, created_ms, next_ms,"    \
    " notified_run,"                                                                               \
    " (SELECT max(id) FROM runs WHERE schedule_id = s.id),"                                        \
    " (SELECT state FROM runs WHERE schedule_id = s.id ORDER BY id DESC LIMIT 1),"                 \
    " (SELECT count(*) FROM runs WHERE schedule_id = s.id), webhook_generation"

static const char *const queries[Q_COUNT] = {
    [Q_BEGIN] = "BEGIN IMMEDIATE",
    [Q_COMMIT] = "COMMIT",
    [Q_ROLLBACK] = "ROLLBACK",
    [Q_AGENT_UPSERT] =
        "INSERT INTO agents(name, boot, data_addr, labels_json, facts_json, first_seen_ms,"
        " last_seen_ms, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
        " ON CONFLICT(name) DO UPDATE SET boot = excluded.boot, data_addr = excluded.data_addr,"
        " labels_json = excluded.labels_json,"
        " facts_json = coalesce(excluded.facts_json, agents.facts_json),"
        " last_seen_ms = excluded.last_seen_ms, status = excluded.status",
    [Q_AGENT_SET_STATUS] = "UPDATE agents SET status = ?2,"
                           " last_seen_ms = coalesce(?3, last_seen_ms) WHERE name = ?1",
    [Q_AGENTS_LIST] = "SELECT name, boot, data_addr, labels_json, facts_json, first_seen_ms,"
                      " last_seen_ms, status FROM agents ORDER BY name",
    [Q_AGENT_GET] = "SELECT name, boot, data_addr, labels_json, facts_json, first_seen_ms,"
                    " last_seen_ms, status FROM agents WHERE name = ?1",
    [Q_JOB_INSERT] = "INSERT INTO jobs(host, params_json, state, reason, attempt, created_ms)"
                     " VALUES (?1, ?2, 'queued', '', 1, ?3)",
    [Q_JOB_GET] = "SELECT " JOB_COLUMNS " FROM jobs WHERE id = ?1",
    /* ?5..?7 are NULL for the stamps that the new state leaves alone. ?8 clears all three: a
     * job queued again for a retry has not been assigned, started or finished in its new
     * attempt. */
    [Q_JOB_SET_STATE] = "UPDATE jobs SET state = ?2, reason = ?3, attempt = ?4,"
                        " assigned_ms = CASE WHEN ?8 THEN NULL ELSE coalesce(?5, assigned_ms) END,"
                        " started_ms = CASE WHEN ?8 THEN NULL ELSE coalesce(?6, started_ms) END,"
                        " finished_ms = CASE WHEN ?8 THEN NULL ELSE coalesce(?7, finished_ms) END"
                        " WHERE id = ?1",
    /* The AUTOINCREMENT id is the insertion order; created_ms would follow a wall clock that
     * can step back. */
    [Q_JOBS_UNFINISHED] =
        "SELECT " JOB_COLUMNS " FROM jobs WHERE state NOT IN ('done', 'failed') ORDER BY id",
    /* Only the (job, attempt) duplicate is ignored; OR IGNORE would also swallow NOT NULL and
     * CHECK violations and report them as harmless duplicates. */
    [Q_RESULT_INSERT] = "INSERT INTO results(job_id, attempt, agent, ok, bytes, seconds,"
                        " throughput_MBps, rtt_p50_us, connects_per_s, result_json, stored_ms)"
                        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
                        " ON CONFLICT(job_id, attempt) DO NOTHING",
    [Q_RESULT_GET] = "SELECT result_json FROM results WHERE job_id = ?1 AND attempt = ?2",
    [Q_RESULT_COUNT] = "SELECT count(*) FROM results",
    [Q_SIDE_INSERT] = "INSERT INTO pair_results(job_id, attempt, role, agent, result_json,"
                      " stored_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
                      " ON CONFLICT(job_id, attempt, role) DO NOTHING",
    [Q_SIDE_GET] = "SELECT result_json FROM pair_results WHERE job_id = ?1 AND attempt = ?2"
                   " AND role = ?3",
    [Q_RUN_INSERT] = "INSERT INTO runs(name, spec_json, state, reason, created_ms, total)"
                     " VALUES (?1, ?2, 'running', '', ?3, ?4)",
    [Q_RUN_SET_PARALLEL] = "UPDATE runs SET parallel = ?2, parallel_note = ?3 WHERE id = ?1",
    [Q_RUN_GET] = "SELECT " RUN_COLUMNS("spec_json") " FROM runs WHERE id = ?1",
    [Q_RUN_EXISTS] = "SELECT 1 FROM runs WHERE id = ?1",
    /* By id, as for jobs: created_ms follows a wall clock that can step back. */
    [Q_RUNS_LIST] = "SELECT " RUN_COLUMNS("NULL") " FROM runs ORDER BY id DESC LIMIT ?1",
    /* With the spec: resuming a run after a restart starts from it. */
    [Q_RUNS_RUNNING] =
        "SELECT " RUN_COLUMNS("spec_json") " FROM runs WHERE state = 'running' ORDER BY id",
    /* ?6 says the state is terminal: only then do the reason and finished_ms change. */
    [Q_RUN_UPDATE] = "UPDATE runs SET state = ?2, done = ?3, failed = ?4,"
                     " reason = CASE WHEN ?6 THEN ?5 ELSE reason END,"
                     " finished_ms = CASE WHEN ?6 THEN ?7 ELSE finished_ms END"
                     " WHERE id = ?1",
    [Q_CELL_INSERT] = "INSERT INTO cells(run_id, idx, test, variant, host, peer, params_json)"
                      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [Q_CELLS_LIST] = "SELECT idx, test, variant, host, peer, params_json, stopped FROM cells"
                     " WHERE run_id = ?1 ORDER BY idx",
    [Q_JOB_INSERT_RUN] =
        "INSERT INTO jobs(host, params_json, state, reason, attempt, created_ms, run_id, cell,"
        " rep, warmup, round, ord, peer)"
        " VALUES (?1, ?2, 'queued', '', 1, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    /* id breaks ties so that the order never depends on the query plan. */
    [Q_RUN_JOBS] = "SELECT " JOB_COLUMNS " FROM jobs WHERE run_id = ?1 ORDER BY ord, id",
    /* Newest first by id (the insertion order), a pair job under either of its hosts. Walking
     * the ids backwards stops at the limit: a busy host's page costs its limit of rows. */
    [Q_AGENT_JOBS] = "SELECT " JOB_COLUMNS " FROM jobs WHERE host = ?1 OR peer = ?1"
                     " ORDER BY id DESC LIMIT ?2",
    /* A retried job keeps the results of its earlier attempts; only the current one counts. */
    [Q_RUN_SET_TOTAL] = "UPDATE runs SET total = ?2 WHERE id = ?1",
    /* The measured results of one cell, current attempts only, as Q_RUN_RESULTS gives them. */
    /* As Q_CELL_RESULTS_ALL: without the index named, SQLite walks the run's jobs in ord
     * order for each cell that adaptive repetitions judge. */
    [Q_CELL_RESULTS] =
        "SELECT j.cell, j.rep, j.warmup, r.result_json FROM jobs j"
        " INDEXED BY jobs_run_cell JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt"
        " WHERE j.run_id = ?1 AND j.cell = ?2 AND j.warmup = 0 ORDER BY j.ord",
    [Q_CELL_SET_STOPPED] = "UPDATE cells SET stopped = ?3 WHERE run_id = ?1 AND idx = ?2",
    [Q_STORE_ID] = "SELECT value FROM store_meta WHERE key = 'store_id'",
    [Q_FP_LATEST] = "SELECT id, agent, hash, body_json, first_seen_ms, last_seen_ms"
                    " FROM fingerprints WHERE agent = ?1 ORDER BY id DESC LIMIT 1",
    [Q_FP_INSERT] = "INSERT INTO fingerprints(agent, hash, body_json, first_seen_ms, last_seen_ms)"
                    " VALUES (?1, ?2, ?3, ?4, ?4)",
    [Q_FP_SEEN] = "UPDATE fingerprints SET last_seen_ms = max(last_seen_ms, ?2) WHERE id = ?1",
    [Q_FP_HISTORY] = "SELECT * FROM (SELECT id, agent, hash, NULL, first_seen_ms, last_seen_ms"
                     " FROM fingerprints WHERE agent = ?1 ORDER BY id DESC LIMIT ?2) ORDER BY id",
    [Q_RUN_FP_TIE] =
        "INSERT OR IGNORE INTO run_fingerprints(run_id, agent, fingerprint_id)"
        " SELECT ?1, ?2, max(id) FROM fingerprints WHERE agent = ?2 HAVING count(*) > 0",
    [Q_RUN_FPS] = "SELECT f.id, f.agent, f.hash, f.body_json, f.first_seen_ms, f.last_seen_ms"
                  " FROM run_fingerprints r JOIN fingerprints f ON f.id = r.fingerprint_id"
                  " WHERE r.run_id = ?1 ORDER BY r.agent",
    [Q_SCHED_INSERT] =
        "INSERT INTO schedules(name, spec_json, every_s, cron, hosts_json, webhook_url, paused,"
        " created_ms, next_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    /* With the last run and the count, as lists show them. */
    [Q_SCHED_GET] = "SELECT " SCHED_COLUMNS " FROM schedules s WHERE id = ?1 AND deleted = 0",
    [Q_SCHED_LIST] = "SELECT " SCHED_COLUMNS " FROM schedules s WHERE deleted = 0 ORDER BY id",
    [Q_SCHED_DUE] = "SELECT " SCHED_COLUMNS " FROM schedules s"
                    " WHERE deleted = 0 AND paused = 0 AND next_ms <= ?1 ORDER BY next_ms, id",
    [Q_SCHED_SET_NEXT] = "UPDATE schedules SET next_ms = ?2 WHERE id = ?1 AND deleted = 0",
    [Q_SCHED_SET_PAUSED] = "UPDATE schedules SET paused = ?2, next_ms = coalesce(?3, next_ms)"
                           " WHERE id = ?1 AND deleted = 0",
    [Q_SCHED_DELETE] = "UPDATE schedules SET deleted = 1 WHERE id = ?1 AND deleted = 0",
    [Q_SCHED_SET_NOTIFIED] = "UPDATE schedules SET notified_run = ?2 WHERE id = ?1",
    [Q_SCHED_ROTATE] = "UPDATE schedules SET webhook_generation = webhook_generation + 1"
                       " WHERE id = ?1 AND deleted = 0 AND webhook_url != ''",
    [Q_RUN_SET_SCHEDULE] = "UPDATE runs SET schedule_id = ?2 WHERE id = ?1",
    [Q_SCHED_RUNS] = "SELECT " RUN_COLUMNS("NULL") " FROM runs WHERE schedule_id = ?1"
                                                   " ORDER BY id DESC LIMIT ?2",
    /* The oldest ended run of each schedule with a webhook that it was not judged for yet. */
    [Q_SCHED_TO_NOTIFY] = "SELECT s.id, min(r.id) FROM schedules s JOIN runs r"
                          " ON r.schedule_id = s.id AND r.id > s.notified_run"
                          " WHERE s.deleted = 0 AND s.webhook_url != '' AND r.state != 'running'"
                          " GROUP BY s.id ORDER BY s.id",
    [Q_EVENT_INSERT] = "INSERT INTO events(ts_ms, kind, subject, detail) VALUES (?1, ?2, ?3, ?4)",
    [Q_EVENTS_OF] = "SELECT ts_ms, kind, detail FROM events WHERE subject = ?1"
                    " ORDER BY id DESC LIMIT ?2",
    [Q_XP_INSERT] = "INSERT INTO experiments(run_id, parent_run, host, test, plan_json,"
                    " created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [Q_XP_GET] = "SELECT " XP_COLUMNS " FROM experiments WHERE run_id = ?1",
    [Q_XP_OF] = "SELECT " XP_COLUMNS " FROM experiments WHERE parent_run = ?1 ORDER BY run_id",
    [Q_XP_TO_NOTIFY] = "SELECT p.schedule_id, x.run_id FROM experiments x"
                       " JOIN runs r ON r.id = x.run_id JOIN runs p ON p.id = x.parent_run"
                       " WHERE x.notified = 0 AND r.state != 'running'"
                       " AND p.schedule_id IS NOT NULL ORDER BY x.run_id LIMIT ?1",
    [Q_XP_SET_NOTIFIED] = "UPDATE experiments SET notified = 1 WHERE run_id = ?1",
    [Q_XP_TO_FOLLOW] = "SELECT x.run_id FROM experiments x JOIN runs r ON r.id = x.run_id"
                       " WHERE x.followed = 0 AND r.state != 'running' ORDER BY x.run_id LIMIT ?1",
    [Q_XP_SET_FOLLOWED] = "UPDATE experiments SET followed = 1 WHERE run_id = ?1",
    [Q_XP_RUNS] = "SELECT run_id FROM experiments ORDER BY run_id LIMIT ?1",
    [Q_RUN_RESULTS] = "SELECT j.cell, j.rep, j.warmup, r.result_json FROM jobs j"
                      " JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt"
                      " WHERE j.run_id = ?1 ORDER BY j.ord",
    /* One cell of a report, warm-ups included, with what orders it among the run's others.
     * Left to itself SQLite walks jobs_run (run_id, ord), which gives the ORDER BY for free, over
     * every job of the run for each cell: 20,000 jobs read 2,048 times for a run of 2,048 cells.
     * jobs_run_cell (schema version 4) reads the cell's own jobs; sorting them is nothing. */
    [Q_CELL_RESULTS_ALL] = "SELECT j.cell, j.rep, j.warmup, r.result_json, j.ord, j.id"
                           " FROM jobs j INDEXED BY jobs_run_cell"
                           " JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt"
                           " WHERE j.run_id = ?1 AND j.cell = ?2 ORDER BY j.ord, j.id",
    /* length() reads each JSON inside SQLite, a page at a time: nothing of it reaches the
     * caller's memory, which is what the report's bound is about. */
    [Q_RUN_RESULT_SIZES] = "SELECT j.cell, count(*), sum(length(r.result_json)),"
                           " max(length(r.result_json)) FROM jobs j"
                           " JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt"
                           " WHERE j.run_id = ?1 GROUP BY j.cell ORDER BY j.cell",
};

static int exec(sqlite3 *db, const char *sql, sm_error *err)
{
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return store_db_error(db, err, sql);
    return 0;
}

/* Runs a one-row pragma or query and returns its first column as an integer. */
static int query_int(sqlite3 *db, const char *sql, int64_t *out, sm_error *err)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return store_db_error(db, err, sql);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        int ret = rc == SQLITE_DONE ? sm_error_set(err, SM_ESYS, "%s: no row", sql)
                                    : store_db_error(db, err, sql);
        sqlite3_finalize(s);
        return ret;
    }
    *out = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return 0;
}

static int configure(sqlite3 *db, sm_error *err)
{
    /* Set first, so that the journal-mode switch below already waits out another writer. */
    if (sqlite3_busy_timeout(db, 5000) != SQLITE_OK)
        return store_db_error(db, err, "busy_timeout");
    int rc = exec(db, "PRAGMA foreign_keys = ON", err);
    if (rc != 0)
        return rc;
    /* A build without foreign keys accepts the pragma silently and reads back nothing. */
    int64_t fk = 0;
    rc = query_int(db, "PRAGMA foreign_keys", &fk, err);
    if (rc != 0)
        return rc;
    if (fk != 1)
        return sm_error_set(err, SM_ESYS, "this SQLite does not enforce foreign keys");

    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, "PRAGMA journal_mode = WAL", -1, &s, NULL) != SQLITE_OK)
        return store_db_error(db, err, "journal_mode");
    rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        rc = store_db_error(db, err, "journal_mode");
        sqlite3_finalize(s);
        return rc;
    }
    /* SQLite answers with the mode it ended up in rather than failing, e.g. "memory" for an
     * in-memory database or "delete" where the file system cannot map the WAL index. */
    const char *mode = (const char *)sqlite3_column_text(s, 0);
    if (mode == NULL || strcmp(mode, "wal") != 0) {
        rc = sm_error_set(err, SM_ESYS, "journal_mode: got %s instead of wal",
                          mode ? mode : "nothing");
        sqlite3_finalize(s);
        return rc;
    }
    sqlite3_finalize(s);
    return exec(db, "PRAGMA synchronous = FULL", err);
}

/* Inside a write transaction: reads the schema version into *from and, when it is behind, runs
 * the one migration that follows it. */
static int migrate_step(sqlite3 *db, int64_t *from, sm_error *err)
{
    int rc = query_int(db, "PRAGMA user_version", from, err);
    if (rc != 0)
        return rc;
    if (*from < 0)
        return sm_error_set(err, SM_EINVAL, "database schema version %lld is invalid",
                            (long long)*from);
    if (*from > SCHEMA_VERSION)
        return sm_error_set(err, SM_EINVAL,
                            "database schema version %lld is newer than this coordinator (%d)",
                            (long long)*from, SCHEMA_VERSION);
    if (*from == SCHEMA_VERSION)
        return 0;
    /* Named by its number: the script itself would fill the whole reason. */
    if (sqlite3_exec(db, store_migrations[*from], NULL, NULL, NULL) != SQLITE_OK)
        return sm_error_set(err, store_code_of(sqlite3_extended_errcode(db)),
                            "migration from schema version %lld: %s", (long long)*from,
                            sqlite3_errmsg(db));
    int64_t after = 0;
    rc = query_int(db, "PRAGMA user_version", &after, err);
    if (rc == 0 && after != *from + 1)
        rc = sm_error_set(err, SM_ESYS, "migration from %lld left user_version at %lld",
                          (long long)*from, (long long)after);
    return rc;
}

/* Brings the schema to SCHEMA_VERSION one migration at a time. The version is read inside the
 * write transaction, so two coordinators opening one file cannot both run a migration. */
static int migrate(sqlite3 *db, const char *path, int *version, sm_error *err)
{
    for (;;) {
        int rc = exec(db, "BEGIN IMMEDIATE", err);
        if (rc != 0)
            return rc;
        int64_t from = 0;
        rc = migrate_step(db, &from, err);
        if (rc == 0)
            rc = exec(db, "COMMIT", err);
        if (rc != 0) {
            /* A failed COMMIT may have rolled back already; then there is nothing to undo. */
            if (!sqlite3_get_autocommit(db))
                sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            return rc;
        }
        if (from == SCHEMA_VERSION) {
            *version = SCHEMA_VERSION;
            return 0;
        }
        sm_log(LOG_NOTICE, "SM-STORE-MIGRATE", "%s: schema version %lld -> %lld", path,
               (long long)from, (long long)from + 1);
    }
}

/* Logs a cut WAL and keeps what it lost as the store's warning. */
static void note_wal_cut(sm_store *st, const char *path, const sm_wal_check *c)
{
    char what[320];
    if (c->page_size == 0)
        snprintf(what, sizeof what,
                 "%s-wal was cut inside its header (%" PRIu64 " bytes): every transaction in it "
                 "is lost",
                 path, c->size);
    else
        snprintf(what, sizeof what,
                 "%s-wal was cut: %" PRIu64 " bytes beyond its last whole frame (%" PRIu64
                 " frames of %u-byte pages); %" PRIu64 " frames after its last whole commit are "
                 "dropped, %" PRIu64 " kept",
                 path, c->partial, c->frames, c->page_size, c->valid - c->kept, c->kept);
    sm_log(LOG_WARNING, "SM-STORE-WAL-CUT", "%s; transactions committed after the cut are lost",
           what);
    snprintf(st->warning, sizeof st->warning,
             "%s: transactions committed after the cut are lost (results already acked among "
             "them too); the store got a new id",
             what);
}

/* A new id for a store that lost transactions: its job ids may now repeat ones agents took. */
static int renew_id(sqlite3 *db, sm_error *err)
{
    return exec(
        db, "UPDATE store_meta SET value = lower(hex(randomblob(16))) WHERE key = 'store_id'", err);
}

static int read_id(sm_store *st, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_STORE_ID];
    int ret = 0;
    if (sqlite3_step(s) != SQLITE_ROW)
        ret = sm_error_set(err, SM_ESYS, "store: no store id: %s", sqlite3_errmsg(st->db));
    else if (store_column_copy(s, 0, st->id, sizeof st->id, err) != 0 ||
             !sm_msg_store_id_valid(st->id))
        ret = sm_error_set(err, SM_EINVAL, "store: the store id is not %d hex digits",
                           SM_STORE_ID_HEX);
    store_done_with(s);
    return ret;
}

/* The store holds every result and the fleet's addresses. SQLite creates a database with
 * 0644 less the umask, and its -wal, -shm and -journal files with the database file's mode: a
 * database made here 0600 (no umask change, which would race other threads) keeps all of them
 * the coordinator's alone. A database that exists keeps its mode, the operator's choice, but
 * one others may read is said. A failure is left for SQLite's open to report in its words. */
static void make_private(const char *path)
{
    if (!path[0] || strcmp(path, ":memory:") == 0)
        return; /* SQLite's names for a database with no file */
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
        /* A umask such as 0277 takes bits from 0600 too; SQLite needs both. */
        if (fchmod(fd, 0600) != 0)
            sm_log(LOG_WARNING, "SM-STORE-MODE", "%s: chmod 600: %s", path, strerror(errno));
        close(fd);
        return;
    }
    struct stat sb;
    if (errno == EEXIST && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && (sb.st_mode & 077))
        sm_log(LOG_WARNING, "SM-STORE-MODE",
               "%s is mode %04o: others may read the results; chmod 600 it and its -wal and -shm "
               "files",
               path, (unsigned)(sb.st_mode & 07777));
}

int sm_store_open(sm_store **pst, const char *path, sm_error *err)
{
    sm_store *st = calloc(1, sizeof *st);
    if (st == NULL)
        return sm_error_set(err, SM_ENOMEM, "store: out of memory");
    int ret = 0;
    /* Now, before SQLite opens the file: its recovery drops a cut log's tail without a word. */
    sm_wal_check wal;
    if ((ret = sm_store_wal_check(path, &wal, err)) != 0)
        goto out;
    if (wal.cut)
        note_wal_cut(st, path, &wal);
    make_private(path);
    int rc = sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc != SQLITE_OK) {
        if (st->db == NULL)
            ret = sm_error_set(err, SM_ENOMEM, "%s: out of memory", path);
        else
            ret = sm_error_set(err, store_code_of(rc), "%s: %s", path, sqlite3_errmsg(st->db));
        goto out;
    }
    sqlite3_extended_result_codes(st->db, 1);
    ret = configure(st->db, err);
    if (ret != 0)
        goto out;
    ret = migrate(st->db, path, &st->version, err);
    if (ret != 0)
        goto out;
    if (wal.cut) {
        char old[SM_STORE_ID_SIZE] = "";
        sqlite3_stmt *q = NULL;
        if (sqlite3_prepare_v2(st->db, queries[Q_STORE_ID], -1, &q, NULL) == SQLITE_OK &&
            sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
            snprintf(old, sizeof old, "%s", (const char *)sqlite3_column_text(q, 0));
        sqlite3_finalize(q);
        if ((ret = renew_id(st->db, err)) != 0)
            goto out;
        /* Leaves an empty log: the cut one's leftover bytes would otherwise stay past the end of
         * every later log and be taken for a new cut. */
        if (sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) !=
            SQLITE_OK)
            sm_log(LOG_WARNING, "SM-STORE-CHECKPOINT", "%s: %s", path, sqlite3_errmsg(st->db));
        sm_log(LOG_NOTICE, "SM-STORE-ID-NEW", "%s: store id %s replaced after the cut WAL", path,
               old[0] ? old : "(none)");
    }
    for (int i = 0; i < Q_COUNT; i++) {
        if (sqlite3_prepare_v3(st->db, queries[i], -1, SQLITE_PREPARE_PERSISTENT, &st->stmts[i],
                               NULL) != SQLITE_OK) {
            ret = store_db_error(st->db, err, queries[i]);
            goto out;
        }
    }
    if ((ret = read_id(st, err)) != 0)
        goto out;
    sm_log(LOG_INFO, "SM-STORE-ID", "%s: store id %s", path, st->id);
out:
    if (ret != 0) {
        sm_store_close(st);
        return ret;
    }
    *pst = st;
    return 0;
}

int sm_store_open_reader(sm_store **pst, const char *path, sm_error *err)
{
    sm_store *st = calloc(1, sizeof *st);
    if (st == NULL)
        return sm_error_set(err, SM_ENOMEM, "store: out of memory");
    int ret = 0;
    /* NOMUTEX: the connection stays on its one thread, so SQLite's own locks would only cost. */
    int rc = sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        ret = st->db ? sm_error_set(err, store_code_of(rc), "%s: %s", path, sqlite3_errmsg(st->db))
                     : sm_error_set(err, SM_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    sqlite3_extended_result_codes(st->db, 1);
    int64_t version = 0;
    if (sqlite3_busy_timeout(st->db, 5000) != SQLITE_OK)
        ret = store_db_error(st->db, err, "busy_timeout");
    else
        ret = query_int(st->db, "PRAGMA user_version", &version, err);
    if (ret == 0 && version != SCHEMA_VERSION)
        ret = sm_error_set(err, SM_EINVAL, "%s: schema version %lld, this reader reads %d", path,
                           (long long)version, SCHEMA_VERSION);
    st->version = (int)version;
    for (int i = 0; ret == 0 && i < Q_COUNT; i++)
        if (sqlite3_prepare_v3(st->db, queries[i], -1, SQLITE_PREPARE_PERSISTENT, &st->stmts[i],
                               NULL) != SQLITE_OK)
            ret = store_db_error(st->db, err, queries[i]);
    if (ret == 0)
        ret = read_id(st, err);
out:
    if (ret != 0) {
        sm_store_close(st);
        return ret;
    }
    *pst = st;
    return 0;
}

void sm_store_close(sm_store *st)
{
    if (st == NULL)
        return;
    for (int i = 0; i < Q_COUNT; i++)
        sqlite3_finalize(st->stmts[i]);
    if (st->db != NULL && sqlite3_close(st->db) != SQLITE_OK)
        sm_log(LOG_ERR, "SM-STORE-CLOSE", "closing the store: %s", sqlite3_errmsg(st->db));
    free(st);
}

int sm_store_schema_version(sm_store *st)
{
    return st->version;
}

const char *sm_store_id(const sm_store *st)
{
    return st->id;
}

const char *sm_store_warning(const sm_store *st)
{
    return st->warning;
}

/* Runs a statement that returns no rows. */
static int run(sm_store *st, int q, sm_error *err, const char *what)
{
    sqlite3_stmt *s = st->stmts[q];
    int ret = 0;
    if (sqlite3_step(s) != SQLITE_DONE)
        ret = store_db_error(st->db, err, what);
    store_done_with(s);
    return ret;
}

/* Remembers the connection's last error when it is the store's fault (I/O, corruption, a full
 * disk, a lock held too long) rather than a caller's broken constraint: the server logs each
 * failure, but only /healthz tells a monitor that every commit fails. */
static void note_failure(sm_store *st, const char *what)
{
    switch (sqlite3_extended_errcode(st->db) & 0xff) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
    case SQLITE_TOOBIG:
        return;
    default:
        break;
    }
    snprintf(st->fail_msg, sizeof st->fail_msg, "%s: %s", what, sqlite3_errmsg(st->db));
    st->fail_ms = sm_wall_ms();
    st->commit_since = false;
}

int sm_store_begin(sm_store *st, sm_error *err)
{
    int rc = run(st, Q_BEGIN, err, "begin");
    if (rc)
        note_failure(st, "begin");
    return rc;
}

int sm_store_commit(sm_store *st, sm_error *err)
{
    int rc = run(st, Q_COMMIT, err, "commit");
    if (rc)
        note_failure(st, "commit");
    else
        st->commit_since = true;
    return rc;
}

bool sm_store_failing(sm_store *st, int64_t now_ms, char *msg, size_t len, int64_t *at_ms)
{
    if (!st || !st->fail_ms)
        return false;
    /* The coordinator commits every tick, and a store can fail on one path while another still
     * commits: clearing on the first success would show a failing store as ok nearly always. */
    if (st->commit_since && now_ms - st->fail_ms >= SM_STORE_FAIL_SHOWN_MS)
        return false;
    if (msg && len)
        snprintf(msg, len, "%s", st->fail_msg);
    if (at_ms)
        *at_ms = st->fail_ms;
    return true;
}

void sm_store_rollback(sm_store *st)
{
    /* Callers roll back after a failure: the store's own (noted here) or their own. */
    note_failure(st, "transaction");
    /* SQLite rolls back by itself after some errors (SQLITE_FULL, SQLITE_IOERR, ...); a second
     * ROLLBACK would only fail with "no transaction is active". */
    if (sqlite3_get_autocommit(st->db))
        return;
    sm_error err;
    if (run(st, Q_ROLLBACK, &err, "rollback") != 0)
        sm_log(LOG_ERR, "SM-STORE-ROLLBACK", "%s", err.msg);
}
