/* The coordinator's store on SQLite: schema migrations, a statement cache and the row mappings. */
#include "coordinator/store.h"

#include "proto/clock.h"
#include "proto/log.h"
#include "proto/msg.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

_Static_assert(SM_STORE_ID_SIZE == SM_STORE_ID_HEX + 1, "a store id is what the reply carries");

/* Each script takes the schema from version i to i + 1 and sets user_version itself, inside the
 * transaction that runs it, so that a crash leaves either the old schema or the new one. Append
 * only: a script that shipped is never edited. */
static const char *const migrations[] = {
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
};

#define FIELD_SIZE(type, field) sizeof(((type *)0)->field)

#define SCHEMA_VERSION ((int)(sizeof migrations / sizeof migrations[0]))

enum {
    Q_BEGIN,
    Q_COMMIT,
    Q_ROLLBACK,
    Q_AGENT_UPSERT,
    Q_AGENT_SET_STATUS,
    Q_AGENTS_LIST,
    Q_JOB_INSERT,
    Q_JOB_GET,
    Q_JOB_SET_STATE,
    Q_JOBS_UNFINISHED,
    Q_RESULT_INSERT,
    Q_RESULT_GET,
    Q_RESULT_COUNT,
    Q_RUN_INSERT,
    Q_RUN_SET_PARALLEL,
    Q_RUN_GET,
    Q_RUN_EXISTS,
    Q_RUNS_LIST,
    Q_RUNS_RUNNING,
    Q_RUN_UPDATE,
    Q_CELL_INSERT,
    Q_CELLS_LIST,
    Q_JOB_INSERT_RUN,
    Q_RUN_JOBS,
    Q_RUN_RESULTS,
    Q_SIDE_INSERT,
    Q_SIDE_GET,
    Q_RUN_SET_TOTAL,
    Q_CELL_SET_STOPPED,
    Q_CELL_RESULTS,
    Q_STORE_ID,
    Q_COUNT
};

#define JOB_COLUMNS                                                                                \
    "id, host, params_json, state, reason, attempt, created_ms, assigned_ms, started_ms, "         \
    "finished_ms, run_id, cell, rep, warmup, round, ord, peer"

/* spec is the column that fills spec_json: "spec_json", or "NULL" where lists leave it out. */
#define RUN_COLUMNS(spec)                                                                          \
    "id, name, " spec ", state, reason, created_ms, finished_ms, total, done, failed,"             \
    " parallel, parallel_note"

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
    /* A retried job keeps the results of its earlier attempts; only the current one counts. */
    [Q_RUN_SET_TOTAL] = "UPDATE runs SET total = ?2 WHERE id = ?1",
    /* The measured results of one cell, current attempts only, as Q_RUN_RESULTS gives them. */
    [Q_CELL_RESULTS] = "SELECT j.cell, j.rep, j.warmup, r.result_json FROM jobs j"
                       " JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt"
                       " WHERE j.run_id = ?1 AND j.cell = ?2 AND j.warmup = 0 ORDER BY j.ord",
    [Q_CELL_SET_STOPPED] = "UPDATE cells SET stopped = ?3 WHERE run_id = ?1 AND idx = ?2",
    [Q_STORE_ID] = "SELECT value FROM store_meta WHERE key = 'store_id'",
    [Q_RUN_RESULTS] = "SELECT j.cell, j.rep, j.warmup, r.result_json FROM jobs j"
                      " JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt"
                      " WHERE j.run_id = ?1 ORDER BY j.ord",
};

struct sm_store {
    sqlite3 *db;
    int version;
    sqlite3_stmt *stmts[Q_COUNT];
    /* The last transaction that failed for the store's own sake, for sm_store_failing. */
    char fail_msg[256];
    int64_t fail_ms;   /* 0: none */
    bool commit_since; /* a commit succeeded after it */
    char id[SM_STORE_ID_SIZE];
    char warning[SM_STORE_WARNING_MAX]; /* "" when none */
};

static const char *const agent_status_names[] = {
    [SM_AGENT_ONLINE] = "online",
    [SM_AGENT_STATUS_BUSY] = "busy",
    [SM_AGENT_LOST] = "lost",
};

static const char *const job_state_names[] = {
    [SM_JOB_QUEUED] = "queued", [SM_JOB_ASSIGNED] = "assigned", [SM_JOB_RUNNING] = "running",
    [SM_JOB_DONE] = "done",     [SM_JOB_FAILED] = "failed",
};

static const char *const run_state_names[] = {
    [SM_RUN_RUNNING] = "running",
    [SM_RUN_DONE] = "done",
    [SM_RUN_FAILED] = "failed",
    [SM_RUN_CANCELLED] = "cancelled",
};

#define N_AGENT_STATUS (sizeof agent_status_names / sizeof agent_status_names[0])
#define N_JOB_STATE    (sizeof job_state_names / sizeof job_state_names[0])
#define N_RUN_STATE    (sizeof run_state_names / sizeof run_state_names[0])

const char *sm_agent_status_name(sm_agent_status s)
{
    return (unsigned)s < N_AGENT_STATUS ? agent_status_names[s] : "unknown";
}

const char *sm_job_state_name(sm_job_state s)
{
    return (unsigned)s < N_JOB_STATE ? job_state_names[s] : "unknown";
}

const char *sm_run_state_name(sm_run_state s)
{
    return (unsigned)s < N_RUN_STATE ? run_state_names[s] : "unknown";
}

static int code_of(int sqlite_rc)
{
    switch (sqlite_rc & 0xff) {
    case SQLITE_NOMEM:
        return SM_ENOMEM;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
    case SQLITE_TOOBIG:
        return SM_EINVAL;
    default:
        return SM_ESYS;
    }
}

/* The error of the connection's last failed call, with SQLite's own words. */
static int db_error(sqlite3 *db, sm_error *err, const char *what)
{
    return sm_error_set(err, code_of(sqlite3_extended_errcode(db)), "%s: %s", what,
                        sqlite3_errmsg(db));
}

/* Unbinding matters as much as resetting: text bound SQLITE_STATIC points into the caller's
 * memory, which may be gone by the statement's next use. */
static void done_with(sqlite3_stmt *s)
{
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
}

static int exec(sqlite3 *db, const char *sql, sm_error *err)
{
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_error(db, err, sql);
    return 0;
}

/* Runs a one-row pragma or query and returns its first column as an integer. */
static int query_int(sqlite3 *db, const char *sql, int64_t *out, sm_error *err)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return db_error(db, err, sql);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        int ret = rc == SQLITE_DONE ? sm_error_set(err, SM_ESYS, "%s: no row", sql)
                                    : db_error(db, err, sql);
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
        return db_error(db, err, "busy_timeout");
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
        return db_error(db, err, "journal_mode");
    rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        rc = db_error(db, err, "journal_mode");
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
    if (sqlite3_exec(db, migrations[*from], NULL, NULL, NULL) != SQLITE_OK)
        return sm_error_set(err, code_of(sqlite3_extended_errcode(db)),
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

/* ---- the WAL, as SQLite lays it out (https://sqlite.org/fileformat2.html#walformat) ---- */

#define WAL_HEADER       32
#define WAL_FRAME_HEADER 24
#define WAL_MAGIC_LE     0x377f0682u /* checksums over little-endian words */
#define WAL_MAGIC_BE     0x377f0683u

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* SQLite's WAL checksum, continued from s[0], s[1] over n bytes (a multiple of 8). */
static void wal_cksum(bool big, const uint8_t *p, size_t n, uint32_t s[2])
{
    for (size_t i = 0; i + 8 <= n; i += 8) {
        s[0] += (big ? be32(p + i) : le32(p + i)) + s[1];
        s[1] += (big ? be32(p + i + 4) : le32(p + i + 4)) + s[0];
    }
}

static int pread_all(int fd, uint8_t *buf, size_t n, off_t at)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, at + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* Walks the frames of the log the header starts, as SQLite's recovery does: a frame counts
 * while its salts are the header's and its checksum continues the chain. */
static int wal_walk(int fd, const uint8_t hdr[WAL_HEADER], sm_wal_check *c, const char *name,
                    sm_error *err)
{
    const bool big = be32(hdr) == WAL_MAGIC_BE;
    uint32_t sum[2] = {0, 0};
    wal_cksum(big, hdr, 24, sum);
    if (sum[0] != be32(hdr + 24) || sum[1] != be32(hdr + 28))
        return 0; /* SQLite ignores such a log: no frame of it is valid */
    const size_t fsize = WAL_FRAME_HEADER + (size_t)c->page_size;
    uint8_t *frame = malloc(fsize);
    if (!frame)
        return sm_error_set(err, SM_ENOMEM, "%s: out of memory", name);
    int rc = 0;
    for (uint64_t i = 0; i < c->frames; i++) {
        if (pread_all(fd, frame, fsize, (off_t)(WAL_HEADER + i * fsize)) != 0) {
            rc = sm_error_set(err, SM_ESYS, "%s: read frame %" PRIu64 ": %s", name, i + 1,
                              errno ? strerror(errno) : "short read");
            break;
        }
        if (memcmp(frame + 8, hdr + 16, 8) != 0)
            break;
        wal_cksum(big, frame, 8, sum);
        wal_cksum(big, frame + WAL_FRAME_HEADER, c->page_size, sum);
        if (sum[0] != be32(frame + 16) || sum[1] != be32(frame + 20))
            break;
        c->valid = i + 1;
        if (be32(frame + 4) != 0) /* the database size after a commit: this frame ends one */
            c->kept = i + 1;
    }
    free(frame);
    return rc;
}

int sm_store_wal_check(const char *db_path, sm_wal_check *out, sm_error *err)
{
    sm_wal_check c;
    memset(&c, 0, sizeof c);
    char name[4096];
    if ((size_t)snprintf(name, sizeof name, "%s-wal", db_path) >= sizeof name)
        return sm_error_set(err, SM_EINVAL, "%s: path too long", db_path);
    int fd = open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            *out = c;
            return 0;
        }
        return sm_error_set(err, SM_ESYS, "%s: open: %s", name, strerror(errno));
    }
    struct stat sb;
    uint8_t hdr[WAL_HEADER];
    int rc = 0;
    if (fstat(fd, &sb) != 0) {
        rc = sm_error_set(err, SM_ESYS, "%s: stat: %s", name, strerror(errno));
        goto out;
    }
    c.size = (uint64_t)sb.st_size;
    c.present = c.size > 0;
    if (!c.present)
        goto out;
    if (c.size < WAL_HEADER) {
        /* Not even the header: SQLite ignores the whole log. */
        c.cut = true;
        c.partial = c.size;
        goto out;
    }
    if (pread_all(fd, hdr, sizeof hdr, 0) != 0) {
        rc = sm_error_set(err, SM_ESYS, "%s: read header: %s", name,
                          errno ? strerror(errno) : "short read");
        goto out;
    }
    const uint32_t magic = be32(hdr), ps = be32(hdr + 8);
    const uint32_t page = ps == 1 ? 65536u : ps;
    if ((magic != WAL_MAGIC_LE && magic != WAL_MAGIC_BE) || page < 512 || page > 65536 ||
        (page & (page - 1)) != 0)
        goto out; /* not a log SQLite would read */
    c.page_size = page;
    c.frames = (c.size - WAL_HEADER) / (WAL_FRAME_HEADER + page);
    c.partial = (c.size - WAL_HEADER) % (WAL_FRAME_HEADER + page);
    rc = wal_walk(fd, hdr, &c, name, err);
    /* Bytes past the whole frames are a cut only where the current log reached them: after a
     * checkpoint SQLite writes the next log from the start, over an older and longer one. */
    c.cut = rc == 0 && c.partial > 0 && c.valid == c.frames;
out:
    close(fd);
    if (rc == 0)
        *out = c;
    return rc;
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

static int column_copy(sqlite3_stmt *s, int col, char *dst, size_t size, sm_error *err);

static int read_id(sm_store *st, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_STORE_ID];
    int ret = 0;
    if (sqlite3_step(s) != SQLITE_ROW)
        ret = sm_error_set(err, SM_ESYS, "store: no store id: %s", sqlite3_errmsg(st->db));
    else if (column_copy(s, 0, st->id, sizeof st->id, err) != 0 || !sm_msg_store_id_valid(st->id))
        ret = sm_error_set(err, SM_EINVAL, "store: the store id is not %d hex digits",
                           SM_STORE_ID_HEX);
    done_with(s);
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
            ret = sm_error_set(err, code_of(rc), "%s: %s", path, sqlite3_errmsg(st->db));
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
            ret = db_error(st->db, err, queries[i]);
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
        ret = db_error(st->db, err, what);
    done_with(s);
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

/* A fixed-size field from the caller must be terminated inside its array. */
static bool fits(const char *s, size_t size)
{
    return memchr(s, '\0', size) != NULL;
}

/* Copies a text column into a fixed-size field; NULL reads as "". */
static int column_copy(sqlite3_stmt *s, int col, char *dst, size_t size, sm_error *err)
{
    const unsigned char *text = sqlite3_column_text(s, col);
    size_t len = (size_t)sqlite3_column_bytes(s, col);
    if (len >= size)
        return sm_error_set(err, SM_EPARSE, "stored %s is %zu bytes, more than %zu",
                            sqlite3_column_name(s, col), len, size - 1);
    if (text != NULL)
        memcpy(dst, text, len);
    dst[len] = '\0';
    return 0;
}

/* A malloc'd copy of a text column; *out = NULL for SQL NULL. */
static int column_dup(sqlite3_stmt *s, int col, char **out, sm_error *err)
{
    *out = NULL;
    if (sqlite3_column_type(s, col) == SQLITE_NULL)
        return 0;
    const unsigned char *text = sqlite3_column_text(s, col);
    if (text == NULL)
        return sm_error_set(err, SM_ENOMEM, "reading %s: out of memory",
                            sqlite3_column_name(s, col));
    size_t len = (size_t)sqlite3_column_bytes(s, col);
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return sm_error_set(err, SM_ENOMEM, "reading %s: out of memory",
                            sqlite3_column_name(s, col));
    memcpy(copy, text, len + 1);
    *out = copy;
    return 0;
}

/* Maps a stored name back to its enum value, or -1. */
static int name_index(const char *const *names, size_t n, const unsigned char *name)
{
    if (name == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], (const char *)name) == 0)
            return (int)i;
    return -1;
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
    if (!fits(a->name, sizeof a->name) || !fits(a->boot, sizeof a->boot) ||
        !fits(a->data_addr, sizeof a->data_addr))
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
    int ret = rc == SQLITE_DONE ? 0 : db_error(st->db, err, "agent upsert");
    done_with(s);
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
        ret = db_error(st->db, err, "agent set status");
    else if (sqlite3_changes(st->db) == 0)
        ret = sm_error_set(err, SM_EINVAL, "no agent named %s", name);
    done_with(s);
    return ret;
}

static int read_agent(sqlite3_stmt *s, void *row, sm_error *err)
{
    sm_agent_row *a = row;
    memset(a, 0, sizeof *a);
    int ret = column_copy(s, 0, a->name, sizeof a->name, err);
    if (ret == 0)
        ret = column_copy(s, 1, a->boot, sizeof a->boot, err);
    if (ret == 0)
        ret = column_copy(s, 2, a->data_addr, sizeof a->data_addr, err);
    if (ret == 0)
        ret = column_dup(s, 3, &a->labels_json, err);
    if (ret == 0)
        ret = column_dup(s, 4, &a->facts_json, err);
    if (ret == 0) {
        a->first_seen_ms = sqlite3_column_int64(s, 5);
        a->last_seen_ms = sqlite3_column_int64(s, 6);
        int status = name_index(agent_status_names, N_AGENT_STATUS, sqlite3_column_text(s, 7));
        if (status < 0)
            ret = sm_error_set(err, SM_EPARSE, "agent %s: unknown status", a->name);
        else
            a->status = (sm_agent_status)status;
    }
    if (ret != 0)
        sm_agent_row_fini(a);
    return ret;
}

/* Grows *rows to hold one more element of size elem; cap doubles so appends stay linear. */
static int grow(void **rows, size_t *cap, size_t n, size_t elem, sm_error *err)
{
    if (n < *cap)
        return 0;
    size_t new_cap = *cap ? *cap * 2 : 16;
    void *p = realloc(*rows, new_cap * elem);
    if (p == NULL) {
        sm_error_set(err, SM_ENOMEM, "store: out of memory");
        return SM_ENOMEM;
    }
    *rows = p;
    *cap = new_cap;
    return 0;
}

/* Reads the current row of s into *row; on failure *row holds nothing to free. */
typedef int (*row_reader)(sqlite3_stmt *s, void *row, sm_error *err);

/* Steps s (already bound) to its end, reading each row into a growing array of elem-sized
 * rows, and resets it. *prows and *pn always describe the rows read, on failure too, so that
 * the caller frees them with its typed free; an empty result is NULL and 0. */
static int collect(sqlite3_stmt *s, size_t elem, row_reader read, void **prows, size_t *pn,
                   const char *what, sm_error *err)
{
    void *rows = NULL;
    size_t n = 0, cap = 0;
    int ret = 0, rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        ret = grow(&rows, &cap, n, elem, err);
        if (ret != 0)
            break;
        ret = read(s, (char *)rows + n * elem, err);
        if (ret != 0)
            break;
        n++;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = db_error(sqlite3_db_handle(s), err, what);
    done_with(s);
    *prows = rows;
    *pn = n;
    return ret;
}

int sm_store_agents_list(sm_store *st, sm_agent_row **prows, size_t *pn, sm_error *err)
{
    void *rows;
    size_t n;
    int ret = collect(st->stmts[Q_AGENTS_LIST], sizeof(sm_agent_row), read_agent, &rows, &n,
                      "agents list", err);
    if (ret != 0) {
        sm_store_agents_free(rows, n);
        return ret;
    }
    *prows = rows;
    *pn = n;
    return 0;
}

void sm_store_agents_free(sm_agent_row *rows, size_t n)
{
    for (size_t i = 0; rows != NULL && i < n; i++)
        sm_agent_row_fini(&rows[i]);
    free(rows);
}

void sm_job_row_fini(sm_job_row *j)
{
    if (j == NULL)
        return;
    free(j->params_json);
    j->params_json = NULL;
}

/* SQLite's integers are signed: a larger id can name no row and would wrap if bound. */
static int bind_id(sqlite3_stmt *s, int idx, uint64_t id, const char *what, sm_error *err)
{
    if (id > (uint64_t)INT64_MAX)
        return sm_error_set(err, SM_EINVAL, "%s id %llu out of range", what,
                            (unsigned long long)id);
    if (sqlite3_bind_int64(s, idx, (int64_t)id) != SQLITE_OK)
        return db_error(sqlite3_db_handle(s), err, "binding an id");
    return 0;
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
        ret = db_error(st->db, err, "job insert");
    done_with(s);
    return ret;
}

static int read_job(sqlite3_stmt *s, void *row, sm_error *err)
{
    sm_job_row *j = row;
    memset(j, 0, sizeof *j);
    j->id = (uint64_t)sqlite3_column_int64(s, 0);
    int ret = column_copy(s, 1, j->host, sizeof j->host, err);
    if (ret == 0)
        ret = column_dup(s, 2, &j->params_json, err);
    if (ret == 0 && j->params_json == NULL)
        ret = sm_error_set(err, SM_EPARSE, "job %llu: no params", (unsigned long long)j->id);
    if (ret == 0) {
        int state = name_index(job_state_names, N_JOB_STATE, sqlite3_column_text(s, 3));
        if (state < 0)
            ret =
                sm_error_set(err, SM_EPARSE, "job %llu: unknown state", (unsigned long long)j->id);
        else
            j->state = (sm_job_state)state;
    }
    if (ret == 0)
        ret = column_copy(s, 4, j->reason, sizeof j->reason, err);
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
        ret = column_copy(s, 16, j->peer, sizeof j->peer, err);
    }
    if (ret != 0)
        sm_job_row_fini(j);
    return ret;
}

int sm_store_job_get(sm_store *st, uint64_t id, sm_job_row *out, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_JOB_GET];
    int ret = bind_id(s, 1, id, "job", err);
    if (ret != 0)
        goto out;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        ret = read_job(s, out, err);
    else if (rc == SQLITE_DONE)
        ret = sm_error_set(err, SM_EINVAL, "no job %llu", (unsigned long long)id);
    else
        ret = db_error(st->db, err, "job get");
out:
    done_with(s);
    return ret;
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
    int ret = bind_id(s, 1, id, "job", err);
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
        ret = db_error(st->db, err, "job set state");
    else if (sqlite3_changes(st->db) == 0)
        ret = sm_error_set(err, SM_EINVAL, "no job %llu", (unsigned long long)id);
out:
    done_with(s);
    return ret;
}

int sm_store_jobs_unfinished(sm_store *st, sm_job_row **prows, size_t *pn, sm_error *err)
{
    void *rows;
    size_t n;
    int ret = collect(st->stmts[Q_JOBS_UNFINISHED], sizeof(sm_job_row), read_job, &rows, &n,
                      "jobs unfinished", err);
    if (ret != 0) {
        sm_store_jobs_free(rows, n);
        return ret;
    }
    *prows = rows;
    *pn = n;
    return 0;
}

void sm_store_jobs_free(sm_job_row *rows, size_t n)
{
    for (size_t i = 0; rows != NULL && i < n; i++)
        sm_job_row_fini(&rows[i]);
    free(rows);
}

/* ---- matrix runs ---- */

/* SM_EINVAL when no run has that id. */
static int run_exists(sm_store *st, uint64_t id, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_RUN_EXISTS];
    int ret = bind_id(s, 1, id, "run", err);
    if (ret == 0) {
        int rc = sqlite3_step(s);
        if (rc == SQLITE_DONE)
            ret = sm_error_set(err, SM_EINVAL, "no run %llu", (unsigned long long)id);
        else if (rc != SQLITE_ROW)
            ret = db_error(st->db, err, "run lookup");
    }
    done_with(s);
    return ret;
}

/* collect() over the rows of one run. A run without rows may not exist at all, and an unknown
 * run must not pass for an empty one. */
static int collect_run(sm_store *st, int q, uint64_t run_id, size_t elem, row_reader read,
                       void **prows, size_t *pn, const char *what, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[q];
    *prows = NULL;
    *pn = 0;
    int ret = bind_id(s, 1, run_id, "run", err);
    if (ret != 0) {
        done_with(s);
        return ret;
    }
    ret = collect(s, elem, read, prows, pn, what, err);
    if (ret == 0 && *pn == 0)
        ret = run_exists(st, run_id, err);
    return ret;
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
        ret = db_error(st->db, err, "run insert");
    done_with(s);
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
    int ret = bind_id(s, 1, id, "run", err);
    if (ret != 0)
        goto out;
    int rc = sqlite3_bind_int(s, 2, parallel ? 1 : 0);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 3, note, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    if (rc != SQLITE_DONE)
        ret = db_error(st->db, err, "run set parallel");
    else if (sqlite3_changes(st->db) == 0)
        ret = sm_error_set(err, SM_EINVAL, "no run %llu", (unsigned long long)id);
out:
    done_with(s);
    return ret;
}

static int read_run(sqlite3_stmt *s, void *row, sm_error *err)
{
    sm_run_row *r = row;
    memset(r, 0, sizeof *r);
    r->id = (uint64_t)sqlite3_column_int64(s, 0);
    int ret = column_copy(s, 1, r->name, sizeof r->name, err);
    /* NULL in lists, which select no spec. */
    if (ret == 0)
        ret = column_dup(s, 2, &r->spec_json, err);
    if (ret == 0) {
        int state = name_index(run_state_names, N_RUN_STATE, sqlite3_column_text(s, 3));
        if (state < 0)
            ret =
                sm_error_set(err, SM_EPARSE, "run %llu: unknown state", (unsigned long long)r->id);
        else
            r->state = (sm_run_state)state;
    }
    if (ret == 0)
        ret = column_copy(s, 4, r->reason, sizeof r->reason, err);
    if (ret == 0) {
        r->created_ms = sqlite3_column_int64(s, 5);
        r->finished_ms = sqlite3_column_int64(s, 6);
        r->total = (uint32_t)sqlite3_column_int64(s, 7);
        r->done = (uint32_t)sqlite3_column_int64(s, 8);
        r->failed = (uint32_t)sqlite3_column_int64(s, 9);
        r->parallel = sqlite3_column_int64(s, 10) != 0;
        ret = column_copy(s, 11, r->parallel_note, sizeof r->parallel_note, err);
    }
    if (ret != 0)
        sm_run_row_fini(r);
    return ret;
}

int sm_store_run_get(sm_store *st, uint64_t id, sm_run_row *out, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_RUN_GET];
    int ret = bind_id(s, 1, id, "run", err);
    if (ret != 0)
        goto out;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        ret = read_run(s, out, err);
    else if (rc == SQLITE_DONE)
        ret = sm_error_set(err, SM_EINVAL, "no run %llu", (unsigned long long)id);
    else
        ret = db_error(st->db, err, "run get");
out:
    done_with(s);
    return ret;
}

/* Collects the runs of s (already bound) into a new array. */
static int runs_collect(sqlite3_stmt *s, sm_run_row **prows, size_t *pn, const char *what,
                        sm_error *err)
{
    void *rows;
    size_t n;
    int ret = collect(s, sizeof(sm_run_row), read_run, &rows, &n, what, err);
    if (ret != 0) {
        sm_store_runs_free(rows, n);
        return ret;
    }
    *prows = rows;
    *pn = n;
    return 0;
}

int sm_store_runs_list(sm_store *st, size_t limit, sm_run_row **prows, size_t *pn, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_RUNS_LIST];
    /* SQLite's LIMIT is signed; no store holds INT64_MAX runs anyway. */
    int64_t lim = (uint64_t)limit > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)limit;
    if (sqlite3_bind_int64(s, 1, lim) != SQLITE_OK) {
        int ret = db_error(st->db, err, "runs list");
        done_with(s);
        return ret;
    }
    return runs_collect(s, prows, pn, "runs list", err);
}

void sm_store_runs_free(sm_run_row *rows, size_t n)
{
    for (size_t i = 0; rows != NULL && i < n; i++)
        sm_run_row_fini(&rows[i]);
    free(rows);
}

int sm_store_runs_running(sm_store *st, sm_run_row **prows, size_t *pn, sm_error *err)
{
    return runs_collect(st->stmts[Q_RUNS_RUNNING], prows, pn, "runs running", err);
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
    int ret = bind_id(s, 1, id, "run", err);
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
        ret = db_error(st->db, err, "run update");
    else if (sqlite3_changes(st->db) == 0)
        ret = sm_error_set(err, SM_EINVAL, "no run %llu", (unsigned long long)id);
out:
    done_with(s);
    return ret;
}

int sm_store_cell_insert(sm_store *st, uint64_t run_id, const sm_cell_row *c, sm_error *err)
{
    if (c == NULL || c->params_json == NULL)
        return sm_error_set(err, SM_EINVAL, "cell of run %llu: no params",
                            (unsigned long long)run_id);
    if (!fits(c->host, sizeof c->host) || !fits(c->peer, sizeof c->peer) || c->host[0] == '\0')
        return sm_error_set(err, SM_EINVAL, "cell %u of run %llu: host must be 1 to %zu bytes",
                            (unsigned)c->idx, (unsigned long long)run_id, sizeof c->host - 1);
    sqlite3_stmt *s = st->stmts[Q_CELL_INSERT];
    int ret = bind_id(s, 1, run_id, "run", err);
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
        ret =
            sm_error_set(err, code_of(sqlite3_extended_errcode(st->db)), "cell %u of run %llu: %s",
                         (unsigned)c->idx, (unsigned long long)run_id, sqlite3_errmsg(st->db));
out:
    done_with(s);
    return ret;
}

int sm_store_run_set_total(sm_store *st, uint64_t id, uint32_t total, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_RUN_SET_TOTAL];
    int ret = bind_id(s, 1, id, "run", err);
    if (ret != 0)
        goto out;
    int rc = sqlite3_bind_int64(s, 2, total);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    if (rc != SQLITE_DONE)
        ret = db_error(st->db, err, "run total");
    else if (sqlite3_changes(st->db) == 0)
        ret = sm_error_set(err, SM_EINVAL, "no run %llu", (unsigned long long)id);
out:
    done_with(s);
    return ret;
}

int sm_store_cell_set_stopped(sm_store *st, uint64_t run_id, uint32_t idx, sm_reps_stop why,
                              sm_error *err)
{
    const char *name = sm_reps_stop_name(why);
    sqlite3_stmt *s = st->stmts[Q_CELL_SET_STOPPED];
    int ret = bind_id(s, 1, run_id, "run", err);
    if (ret != 0)
        goto out;
    int rc = sqlite3_bind_int64(s, 2, idx);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(s, 3, name ? name : "", -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    if (rc != SQLITE_DONE)
        ret = db_error(st->db, err, "cell stopped");
    else if (sqlite3_changes(st->db) == 0)
        ret = sm_error_set(err, SM_EINVAL, "no cell %u in run %llu", (unsigned)idx,
                           (unsigned long long)run_id);
out:
    done_with(s);
    return ret;
}

static int read_cell(sqlite3_stmt *s, void *row, sm_error *err)
{
    sm_cell_row *c = row;
    memset(c, 0, sizeof *c);
    c->idx = (uint32_t)sqlite3_column_int64(s, 0);
    c->test = (uint32_t)sqlite3_column_int64(s, 1);
    c->variant = (uint32_t)sqlite3_column_int64(s, 2);
    int ret = column_copy(s, 3, c->host, sizeof c->host, err);
    if (ret == 0)
        ret = column_copy(s, 4, c->peer, sizeof c->peer, err);
    if (ret == 0)
        ret = column_dup(s, 5, &c->params_json, err);
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

int sm_store_cells_list(sm_store *st, uint64_t run_id, sm_cell_row **prows, size_t *pn,
                        sm_error *err)
{
    void *rows;
    size_t n;
    int ret = collect_run(st, Q_CELLS_LIST, run_id, sizeof(sm_cell_row), read_cell, &rows, &n,
                          "cells list", err);
    if (ret != 0) {
        sm_store_cells_free(rows, n);
        return ret;
    }
    *prows = rows;
    *pn = n;
    return 0;
}

void sm_store_cells_free(sm_cell_row *rows, size_t n)
{
    for (size_t i = 0; rows != NULL && i < n; i++)
        free(rows[i].params_json);
    free(rows);
}

int sm_store_job_insert_run(sm_store *st, const sm_job_row *j, int64_t now_ms, uint64_t *id,
                            sm_error *err)
{
    if (j == NULL || j->params_json == NULL)
        return sm_error_set(err, SM_EINVAL, "job of a run: no params");
    if (j->run_id == 0)
        return sm_error_set(err, SM_EINVAL, "job of a run: run_id 0 names no run");
    if (!fits(j->host, sizeof j->host) || !fits(j->peer, sizeof j->peer) || j->host[0] == '\0')
        return sm_error_set(err, SM_EINVAL, "job of run %llu: host must be 1 to %zu bytes",
                            (unsigned long long)j->run_id, sizeof j->host - 1);
    sqlite3_stmt *s = st->stmts[Q_JOB_INSERT_RUN];
    int ret = bind_id(s, 4, j->run_id, "run", err);
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
        ret = sm_error_set(err, code_of(sqlite3_extended_errcode(st->db)), "job of run %llu: %s",
                           (unsigned long long)j->run_id, sqlite3_errmsg(st->db));
out:
    done_with(s);
    return ret;
}

int sm_store_run_jobs(sm_store *st, uint64_t run_id, sm_job_row **prows, size_t *pn, sm_error *err)
{
    void *rows;
    size_t n;
    int ret = collect_run(st, Q_RUN_JOBS, run_id, sizeof(sm_job_row), read_job, &rows, &n,
                          "run jobs", err);
    if (ret != 0) {
        sm_store_jobs_free(rows, n);
        return ret;
    }
    *prows = rows;
    *pn = n;
    return 0;
}

static int read_run_result(sqlite3_stmt *s, void *row, sm_error *err)
{
    sm_run_result *r = row;
    memset(r, 0, sizeof *r);
    r->cell = (uint32_t)sqlite3_column_int64(s, 0);
    r->rep = (uint32_t)sqlite3_column_int64(s, 1);
    r->warmup = sqlite3_column_int64(s, 2) != 0;
    int ret = column_dup(s, 3, &r->result_json, err);
    if (ret == 0 && r->result_json == NULL)
        ret = sm_error_set(err, SM_EPARSE, "result of cell %u rep %u: no JSON", (unsigned)r->cell,
                           (unsigned)r->rep);
    return ret;
}

int sm_store_run_results(sm_store *st, uint64_t run_id, sm_run_result **prows, size_t *pn,
                         sm_error *err)
{
    void *rows;
    size_t n;
    int ret = collect_run(st, Q_RUN_RESULTS, run_id, sizeof(sm_run_result), read_run_result, &rows,
                          &n, "run results", err);
    if (ret != 0) {
        sm_store_run_results_free(rows, n);
        return ret;
    }
    *prows = rows;
    *pn = n;
    return 0;
}

int sm_store_cell_results(sm_store *st, uint64_t run_id, uint32_t cell, sm_run_result **prows,
                          size_t *pn, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_CELL_RESULTS];
    void *rows = NULL;
    size_t n = 0;
    *prows = NULL;
    *pn = 0;
    int ret = bind_id(s, 1, run_id, "run", err);
    if (ret == 0 && sqlite3_bind_int64(s, 2, cell) != SQLITE_OK)
        ret = db_error(st->db, err, "cell results");
    if (ret != 0) {
        done_with(s);
        return ret;
    }
    ret = collect(s, sizeof(sm_run_result), read_run_result, &rows, &n, "cell results", err);
    if (ret != 0) {
        sm_store_run_results_free(rows, n);
        return ret;
    }
    *prows = rows;
    *pn = n;
    return 0;
}

void sm_store_run_results_free(sm_run_result *rows, size_t n)
{
    for (size_t i = 0; rows != NULL && i < n; i++)
        free(rows[i].result_json);
    free(rows);
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
    int ret = bind_id(s, 1, job, "job", err);
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
        ret = sm_error_set(err, code_of(sqlite3_extended_errcode(st->db)),
                           "result of job %llu attempt %u: %s", (unsigned long long)job,
                           (unsigned)attempt, sqlite3_errmsg(st->db));
out:
    done_with(s);
    return ret;
}

int sm_store_result_get(sm_store *st, uint64_t job, uint32_t attempt, char **json, sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_RESULT_GET];
    char *copy = NULL;
    int ret = bind_id(s, 1, job, "job", err);
    if (ret != 0)
        goto out;
    if (sqlite3_bind_int64(s, 2, attempt) != SQLITE_OK) {
        ret = db_error(st->db, err, "result get");
        goto out;
    }
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        ret = column_dup(s, 0, &copy, err);
    else if (rc != SQLITE_DONE)
        ret = db_error(st->db, err, "result get");
out:
    done_with(s);
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
        ret = db_error(st->db, err, "result count");
    done_with(s);
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
    int ret = bind_id(s, 1, job, "job", err);
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
        ret = sm_error_set(err, code_of(sqlite3_extended_errcode(st->db)),
                           "%s side of job %llu attempt %u: %s", role, (unsigned long long)job,
                           (unsigned)attempt, sqlite3_errmsg(st->db));
out:
    done_with(s);
    return ret;
}

int sm_store_side_get(sm_store *st, uint64_t job, uint32_t attempt, const char *role, char **json,
                      sm_error *err)
{
    sqlite3_stmt *s = st->stmts[Q_SIDE_GET];
    char *copy = NULL;
    int ret = bind_id(s, 1, job, "job", err);
    if (ret != 0)
        goto out;
    if (sqlite3_bind_int64(s, 2, attempt) != SQLITE_OK ||
        sqlite3_bind_text(s, 3, role, -1, SQLITE_STATIC) != SQLITE_OK) {
        ret = db_error(st->db, err, "side result get");
        goto out;
    }
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        ret = column_dup(s, 0, &copy, err);
    else if (rc != SQLITE_DONE)
        ret = db_error(st->db, err, "side result get");
out:
    done_with(s);
    if (ret == 0)
        *json = copy;
    return ret;
}
