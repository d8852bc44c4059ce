/* The coordinator's store: SQLite in WAL mode, schema versioned with PRAGMA user_version and
 * migrated forward on open. All SQL of the project lives in store.c. Not thread-safe: the
 * coordinator's single event loop owns it. */
#ifndef SM_COORD_STORE_H
#define SM_COORD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/err.h"
#include "proto/reps.h"

typedef struct sm_store sm_store;

/* Opens or creates the database at path (journal_mode=WAL, synchronous=FULL so that a commit
 * survives power loss before the coordinator acks, foreign_keys=ON, busy_timeout 5 s) and runs
 * the migrations up to the current schema version. A database from a newer version is refused.
 *
 * Before SQLite sees it, the path's -wal file is read (sm_store_wal_check). When it was cut,
 * SQLite will drop every transaction after its last whole commit, silently: the open logs
 * SM-STORE-WAL-CUT saying what was beyond the cut, keeps it as the store's warning, gives the
 * store a new id (its job ids may now repeat ids that agents already took) and checkpoints the
 * WAL to empty, so its leftover bytes are not taken for a new cut at the next open. */
int sm_store_open(sm_store **st, const char *path, sm_error *err);
void sm_store_close(sm_store *st); /* NULL is ignored */

/* A second connection to the database at path, read-only, for one other thread than the
 * writer's (each thread its own connection; WAL lets it read while the writer commits, each
 * statement seeing the last commit before it began). No migration: the writer's open made the
 * schema, and a database of another schema version is refused (SM_EINVAL). busy_timeout 5 s.
 * The write calls fail on it (SM_ESYS, "attempt to write a readonly database"). */
int sm_store_open_reader(sm_store **st, const char *path, sm_error *err);
int sm_store_schema_version(sm_store *st);

/* The store's identity: 32 lowercase hex digits (128 random bits), made when the store is
 * created (or when a store from before identities is migrated) and kept in it. Agents forget
 * the job ids they took when it changes. Valid until sm_store_close. */
#define SM_STORE_ID_SIZE 33 /* with its NUL */
const char *sm_store_id(const sm_store *st);

/* What a monitor should know about a store that works: "" when nothing, else why transactions
 * were lost when it was opened ("the WAL was cut: ..."). Valid until sm_store_close. */
#define SM_STORE_WARNING_MAX 512
const char *sm_store_warning(const sm_store *st);

/* What a database's -wal file holds, read with plain file I/O (SQLite would repair it
 * silently). A WAL is a 32-byte header and frames of 24 + page size bytes, each checksummed
 * over all before it; SQLite replays the valid frames up to the last one that ends a commit. */
typedef struct sm_wal_check {
    bool present;       /* the -wal file exists and is not empty */
    bool cut;           /* truncated mid-frame (or mid-header) inside its valid frames: the
                         * commits that were past the cut are lost */
    uint32_t page_size; /* 0 when the header is short or not a WAL header */
    uint64_t size;      /* bytes */
    uint64_t frames;    /* whole frames */
    uint64_t partial;   /* bytes beyond the last whole frame */
    uint64_t valid;     /* frames of the current log whose checksums hold, from the first */
    uint64_t kept;      /* valid frames up to the last commit: what SQLite replays */
} sm_wal_check;
/* Reads db_path's "-wal". A missing file is no error (present false). A file that ends inside
 * a frame, after valid frames that reach that frame, is cut; one whose tail is an older log's
 * leftover (the valid frames end before it) is not, since nothing of the current log is lost.
 * SM_ESYS when the file cannot be read. */
int sm_store_wal_check(const char *db_path, sm_wal_check *out, sm_error *err);

/* Explicit transactions, so a burst of results commits once before any of them is acked. */
int sm_store_begin(sm_store *st, sm_error *err);
int sm_store_commit(sm_store *st, sm_error *err);
void sm_store_rollback(sm_store *st);

/* How long a store failure stays reported after a later commit succeeded. */
#define SM_STORE_FAIL_SHOWN_MS 60000
/* Whether the store is failing, for /healthz: true when a begin, commit or rolled-back
 * transaction failed for the store's own sake (SQLite's I/O, corruption, a full disk, a lock:
 * not a constraint a caller broke) and no commit has succeeded since, or it failed less than
 * SM_STORE_FAIL_SHOWN_MS before now_ms (wall-clock ms). Then msg gets SQLite's words ("commit:
 * database disk image is malformed") and *at_ms the wall time of the failure; either may be
 * NULL. */
bool sm_store_failing(sm_store *st, int64_t now_ms, char *msg, size_t len, int64_t *at_ms);

typedef enum sm_agent_status {
    SM_AGENT_ONLINE = 0,
    SM_AGENT_STATUS_BUSY,
    SM_AGENT_LOST,
} sm_agent_status;
const char *sm_agent_status_name(sm_agent_status s); /* "online", "busy", "lost" */

/* One registered agent. labels_json and facts_json are JSON texts owned by the row. */
typedef struct sm_agent_row {
    char name[65];
    char boot[33];
    char data_addr[65];
    char *labels_json; /* {"rack":"2"} */
    char *facts_json;  /* the facts object, or NULL when not yet known */
    int64_t first_seen_ms;
    int64_t last_seen_ms;
    sm_agent_status status;
} sm_agent_row;

void sm_agent_row_fini(sm_agent_row *a); /* frees the JSON texts */

/* Inserts the agent or updates every field but first_seen_ms; a NULL facts_json keeps the
 * facts already stored. */
int sm_store_agent_upsert(sm_store *st, const sm_agent_row *a, sm_error *err);
int sm_store_agent_set_status(sm_store *st, const char *name, sm_agent_status s, int64_t now_ms,
                              sm_error *err);
/* All agents, by name; *rows is a malloc'd array the caller frees with sm_store_agents_free. */
int sm_store_agents_list(sm_store *st, sm_agent_row **rows, size_t *n, sm_error *err);
void sm_store_agents_free(sm_agent_row *rows, size_t n);
/* The agent named name into *out (sm_agent_row_fini it); SM_EINVAL when there is none. */
int sm_store_agent_get(sm_store *st, const char *name, sm_agent_row *out, sm_error *err);

typedef enum sm_job_state {
    SM_JOB_QUEUED = 0,
    SM_JOB_ASSIGNED,
    SM_JOB_RUNNING,
    SM_JOB_DONE,
    SM_JOB_FAILED,
} sm_job_state;
const char *sm_job_state_name(sm_job_state s); /* "queued", "assigned", ... */

typedef struct sm_job_row {
    uint64_t id;
    char host[65];
    char *params_json; /* owned */
    sm_job_state state;
    char reason[256]; /* why it failed: "agent-lost", "timeout", the agent's reason */
    uint32_t attempt; /* 1 for the first */
    int64_t created_ms, assigned_ms, started_ms, finished_ms; /* 0 = not yet */
    /* Jobs of a matrix run (run_id 0 for a job queued alone through POST /api/jobs). */
    uint64_t run_id;
    uint32_t cell; /* the cell's index within its run */
    uint32_t rep;
    bool warmup;
    uint32_t round;
    uint32_t ord;  /* dispatch order within the run */
    char peer[65]; /* pair jobs: the server host; "" for local */
} sm_job_row;

void sm_job_row_fini(sm_job_row *j);

/* Queues a job for host with its params (validated JSON text); *id is the new job's id. */
int sm_store_job_insert(sm_store *st, const char *host, const char *params_json, int64_t now_ms,
                        uint64_t *id, sm_error *err);
/* Reads a job; SM_EINVAL when there is none with that id. */
int sm_store_job_get(sm_store *st, uint64_t id, sm_job_row *out, sm_error *err);
/* Moves a job to state with a reason ("" when none), stamping the time that goes with the state
 * (assigned_ms, started_ms, finished_ms). attempt is stored too (a retry raises it). */
int sm_store_job_set_state(sm_store *st, uint64_t id, uint32_t attempt, sm_job_state state,
                           const char *reason, int64_t now_ms, sm_error *err);
/* Every job not done or failed, oldest first (for the queue after a restart). */
int sm_store_jobs_unfinished(sm_store *st, sm_job_row **rows, size_t *n, sm_error *err);
void sm_store_jobs_free(sm_job_row *rows, size_t n);

/* ---- matrix runs (schema version 2) ---- */

typedef enum sm_run_state {
    SM_RUN_RUNNING = 0,
    SM_RUN_DONE,   /* every job ended, none failed after its retry */
    SM_RUN_FAILED, /* every job ended, some failed after their retry (counts say how many) */
    SM_RUN_CANCELLED,
} sm_run_state;
const char *sm_run_state_name(sm_run_state s); /* "running", "done", "failed", "cancelled" */

/* Room for a run's parallel note and its NUL. */
#define SM_RUN_NOTE_MAX 512

typedef struct sm_run_row {
    uint64_t id;
    char name[65];
    char *spec_json; /* owned; NULL in lists */
    sm_run_state state;
    char reason[256];
    int64_t created_ms, finished_ms;
    uint32_t total;  /* jobs planned (warm-up included) */
    uint32_t done;   /* jobs ended ok */
    uint32_t failed; /* jobs ended failed for good (after their retry) */
    /* Schema version 5: whether the run's jobs go side by side (false: one at a time), as
     * decided when it started, and why ("" when there is nothing to say). */
    bool parallel;
    char parallel_note[SM_RUN_NOTE_MAX];
    uint64_t schedule_id; /* schema version 8: the schedule that started it; 0 by hand */
} sm_run_row;
void sm_run_row_fini(sm_run_row *r);

/* A new run in state running; *id its id. */
int sm_store_run_insert(sm_store *st, const char *name, const char *spec_json, uint32_t total,
                        int64_t now_ms, uint64_t *id, sm_error *err);
/* Records how the run's jobs go (true: side by side) and the note that says why; the note
 * must be shorter than sm_run_row.parallel_note (SM_EINVAL). SM_EINVAL when there is no such
 * run. A new run is parallel with no note until this is called. */
int sm_store_run_set_parallel(sm_store *st, uint64_t id, bool parallel, const char *note,
                              sm_error *err);
/* SM_EINVAL when there is no such run. */
int sm_store_run_get(sm_store *st, uint64_t id, sm_run_row *out, sm_error *err);
/* Newest first, at most limit (spec_json NULL); free with sm_store_runs_free. */
int sm_store_runs_list(sm_store *st, size_t limit, sm_run_row **rows, size_t *n, sm_error *err);
void sm_store_runs_free(sm_run_row *rows, size_t n);
/* Runs still in state running, oldest first (resumed after a restart). */
int sm_store_runs_running(sm_store *st, sm_run_row **rows, size_t *n, sm_error *err);
/* Updates the counts; a terminal state also stamps finished_ms and the reason. */
int sm_store_run_update(sm_store *st, uint64_t id, sm_run_state state, const char *reason,
                        uint32_t done, uint32_t failed, int64_t now_ms, sm_error *err);

typedef struct sm_cell_row {
    uint32_t idx, test, variant;
    char host[65];
    char peer[65];
    char *params_json;    /* owned */
    sm_reps_stop stopped; /* read only (sm_store_cell_set_stopped writes it) */
} sm_cell_row;
int sm_store_cell_insert(sm_store *st, uint64_t run_id, const sm_cell_row *c, sm_error *err);
/* Adaptive repetitions (schema version 4): why a cell got no more rounds. SM_EINVAL when the
 * run has no such cell. */
int sm_store_cell_set_stopped(sm_store *st, uint64_t run_id, uint32_t idx, sm_reps_stop why,
                              sm_error *err);
/* A run's planned job count, raised when an adaptive run adds a round. SM_EINVAL: no run. */
int sm_store_run_set_total(sm_store *st, uint64_t id, uint32_t total, sm_error *err);
/* The run's cells by idx; free with sm_store_cells_free. */
int sm_store_cells_list(sm_store *st, uint64_t run_id, sm_cell_row **rows, size_t *n,
                        sm_error *err);
void sm_store_cells_free(sm_cell_row *rows, size_t n);

/* Queues a job of a run (the run fields of j: run_id, cell, rep, warmup, round, ord, peer;
 * host and params_json too); *id its id. */
int sm_store_job_insert_run(sm_store *st, const sm_job_row *j, int64_t now_ms, uint64_t *id,
                            sm_error *err);
/* Every job of a run by ord; free with sm_store_jobs_free. */
int sm_store_run_jobs(sm_store *st, uint64_t run_id, sm_job_row **rows, size_t *n, sm_error *err);
/* The latest jobs of one host, newest first, at most limit of them (1 to SM_STORE_AGENT_JOBS_MAX;
 * SM_EINVAL beyond): its own and the pair jobs it served; none for a host with no job (whether
 * the agent exists is the caller's question). Free with sm_store_jobs_free. */
#define SM_STORE_AGENT_JOBS_MAX 100
int sm_store_agent_jobs(sm_store *st, const char *host, size_t limit, sm_job_row **rows, size_t *n,
                        sm_error *err);

/* The results of a run's jobs: for each job of the run with a stored result for its current
 * attempt, (cell, rep, warmup, result_json). Free with sm_store_run_results_free. */
typedef struct sm_run_result {
    uint32_t cell, rep;
    bool warmup;
    char *result_json;
    /* The job's place in the run (ord, then id): set by sm_store_cell_results_all only, 0
     * elsewhere (their rows come in that order). */
    int64_t ord;
    uint64_t job;
} sm_run_result;
int sm_store_run_results(sm_store *st, uint64_t run_id, sm_run_result **rows, size_t *n,
                         sm_error *err);
/* The same for one cell's measured (not warm-up) jobs only. */
int sm_store_cell_results(sm_store *st, uint64_t run_id, uint32_t cell, sm_run_result **rows,
                          size_t *n, sm_error *err);
/* One cell's results, warm-ups included, in the order of sm_store_run_results (ord and job
 * set): a report reads a run one cell at a time. */
int sm_store_cell_results_all(sm_store *st, uint64_t run_id, uint32_t cell, sm_run_result **rows,
                              size_t *n, sm_error *err);
void sm_store_run_results_free(sm_run_result *rows, size_t n);

/* The size of one cell's stored results: how many, and the bytes of their JSON (all, and the
 * largest), known before any is read into memory. */
typedef struct sm_cell_size {
    uint32_t cell;
    uint64_t n;
    uint64_t json_bytes;
    uint64_t json_max;
} sm_cell_size;
/* A run's cells that have results, by cell; SM_EINVAL when there is no such run. Free *rows
 * with free(). */
int sm_store_run_result_sizes(sm_store *st, uint64_t run_id, sm_cell_size **rows, size_t *n,
                              sm_error *err);

/* Stores a result once: INSERT OR IGNORE on the unique (job, attempt). *inserted says whether
 * this call stored it (false: a duplicate, harmless by design). The main metrics get columns
 * (NULL when absent) beside the raw JSON. */
typedef struct sm_result_cols {
    double bytes, seconds, throughput_MBps, rtt_p50_us, connects_per_s; /* NaN = absent */
    bool ok;
} sm_result_cols;
int sm_store_result_insert(sm_store *st, uint64_t job, uint32_t attempt, const char *agent,
                           const char *result_json, const sm_result_cols *cols, int64_t now_ms,
                           bool *inserted, sm_error *err);
/* One side of a pair job (role "server" or "client"), stored once per (job, attempt, role);
 * the merged result of the job goes through sm_store_result_insert. */
int sm_store_side_insert(sm_store *st, uint64_t job, uint32_t attempt, const char *role,
                         const char *agent, const char *result_json, int64_t now_ms, bool *inserted,
                         sm_error *err);
/* The stored side (malloc'd), or *json = NULL when it has not arrived. */
int sm_store_side_get(sm_store *st, uint64_t job, uint32_t attempt, const char *role, char **json,
                      sm_error *err);

/* The stored result JSON of a job's attempt (malloc'd), or *json = NULL when none. */
int sm_store_result_get(sm_store *st, uint64_t job, uint32_t attempt, char **json, sm_error *err);
/* How many results are stored (for tests and /healthz). */
int sm_store_result_count(sm_store *st, uint64_t *n, sm_error *err);

/* ---- host fingerprints (fingerprints.c) ----
 * Each distinct fingerprint once per host, with when it was first and last seen: a fingerprint
 * other than the host's latest is a new row (back to an older one is a new row too), so the
 * rows of a host are its history. A run keeps, per host, the fingerprint that host had when
 * the run's first result from it was stored: the fingerprint "as of the run". */
typedef struct sm_fp_row {
    int64_t id;
    char agent[65];
    char hash[17];
    char *json; /* the document (NULL in a history list) */
    int64_t first_seen_ms;
    int64_t last_seen_ms;
} sm_fp_row;
void sm_fp_row_fini(sm_fp_row *r);
void sm_fp_rows_free(sm_fp_row *rows, size_t n);

/* Records agent's fingerprint (hash, json) seen at now_ms: updates last_seen_ms of the agent's
 * latest row when its hash is the same, else inserts a row and trims the history to
 * SM_FP_HISTORY_MAX rows. *id (may be NULL) gets the row.
 * *changed (may be NULL) says a row was inserted. */
int sm_store_fp_put(sm_store *st, const char *agent, const char *hash, const char *json,
                    int64_t now_ms, int64_t *id, bool *changed, sm_error *err);
/* The agent's latest fingerprint; *found false when it has none. */
int sm_store_fp_latest(sm_store *st, const char *agent, sm_fp_row *out, bool *found, sm_error *err);
/* A host's history keeps its last SM_FP_HISTORY_MAX changes: a new row deletes the older ones
 * (but those a run still refers to, kept for that run's report) and counts them. */
#define SM_FP_HISTORY_MAX 100
/* The agent's last SM_FP_HISTORY_MAX rows, oldest first, without their documents; *left_out
 * (may be NULL) gets how many older ones there were (deleted, or kept only for a run). */
int sm_store_fp_history(sm_store *st, const char *agent, sm_fp_row **rows, size_t *n,
                        uint64_t *left_out, sm_error *err);
/* Ties run_id's fingerprint for agent to the agent's latest fingerprint, unless the run has one
 * for that agent already (the first tie wins). No fingerprint known: nothing is tied. */
int sm_store_run_fp_tie(sm_store *st, uint64_t run_id, const char *agent, sm_error *err);
/* The run's fingerprints, one per host that has one, with their documents, by host name. */
int sm_store_run_fps(sm_store *st, uint64_t run_id, sm_fp_row **rows, size_t *n, sm_error *err);

/* ---- recurring runs (schema version 8, schedules.c) ----
 * A deleted schedule keeps its row (hidden from every read here), so that its runs keep their
 * link. */
#define SM_SCHED_CRON_MAX 128 /* bytes of a cron expression, with its NUL */
#define SM_SCHED_URL_MAX  512 /* bytes of a webhook URL, with its NUL */

typedef struct sm_schedule_row {
    uint64_t id;
    char name[65];
    char *spec_json;              /* owned: the spec as POST /api/runs would store it */
    uint32_t every_s;             /* 0 when cron */
    char cron[SM_SCHED_CRON_MAX]; /* "" when every */
    char *hosts_json; /* owned: a JSON array of host names, or "" for the spec's own hosts */
    char webhook_url[SM_SCHED_URL_MAX]; /* "" none */
    bool paused;
    int64_t created_ms, next_ms;
    uint64_t notified_run; /* the last ended run its webhook was judged for (0 none) */
    /* Read only (schema version 9): its webhook secret's generation, 1 at creation, one more
     * at each rotation (sm_store_schedule_rotate_webhook). */
    uint32_t webhook_generation;
    /* Read only: its newest run (0 none) and that run's state, and how many runs it started. */
    uint64_t last_run;
    sm_run_state last_state;
    uint32_t n_runs;
} sm_schedule_row;
void sm_schedule_row_fini(sm_schedule_row *r);
void sm_store_schedules_free(sm_schedule_row *rows, size_t n);

/* A new schedule from s (id and the read-only fields ignored); *id its id. SM_EINVAL when a
 * text is empty where it must not be or does not fit its field. */
int sm_store_schedule_insert(sm_store *st, const sm_schedule_row *s, int64_t now_ms, uint64_t *id,
                             sm_error *err);
/* SM_EINVAL when there is no such schedule (or it was deleted). */
int sm_store_schedule_get(sm_store *st, uint64_t id, sm_schedule_row *out, sm_error *err);
/* Every schedule not deleted, by id. */
int sm_store_schedules_list(sm_store *st, sm_schedule_row **rows, size_t *n, sm_error *err);
/* The schedules due at now_ms (not paused, not deleted, next_ms <= now_ms), soonest first. */
int sm_store_schedules_due(sm_store *st, int64_t now_ms, sm_schedule_row **rows, size_t *n,
                           sm_error *err);
int sm_store_schedule_set_next(sm_store *st, uint64_t id, int64_t next_ms, sm_error *err);
/* Pauses or resumes; next_ms (0: unchanged) is when a resumed one fires next. */
int sm_store_schedule_set_paused(sm_store *st, uint64_t id, bool paused, int64_t next_ms,
                                 sm_error *err);
/* Each of these is SM_EINVAL when there is no such schedule (or it was deleted). */
int sm_store_schedule_delete(sm_store *st, uint64_t id, sm_error *err);
int sm_store_schedule_set_notified(sm_store *st, uint64_t id, uint64_t run_id, sm_error *err);
/* Adds one to the schedule's webhook generation: its secret changes. SM_EINVAL too when it has
 * no webhook. */
int sm_store_schedule_rotate_webhook(sm_store *st, uint64_t id, sm_error *err);
/* Links a run to the schedule that started it. SM_EINVAL when there is no such run. */
int sm_store_run_set_schedule(sm_store *st, uint64_t run_id, uint64_t schedule_id, sm_error *err);
/* The schedule's runs, newest first, at most limit (spec_json NULL); sm_store_runs_free. */
int sm_store_schedule_runs(sm_store *st, uint64_t id, size_t limit, sm_run_row **rows, size_t *n,
                           sm_error *err);
/* Pairs (schedule, run): per schedule with a webhook, its oldest ended run after its
 * notified_run. At most max pairs. */
int sm_store_schedules_to_notify(sm_store *st, uint64_t (*pairs)[2], size_t max, size_t *n,
                                 sm_error *err);

/* The events table: what happened to a subject ("schedule 3"), for people. */
typedef struct sm_event_row {
    int64_t ts_ms;
    char kind[32];
    char detail[256];
} sm_event_row;
int sm_store_event_insert(sm_store *st, int64_t ts_ms, const char *kind, const char *subject,
                          const char *detail, sm_error *err);
/* The subject's newest events first, at most limit; free() the array. */
int sm_store_events_of(sm_store *st, const char *subject, size_t limit, sm_event_row **rows,
                       size_t *n, sm_error *err);

/* ---- experiments (schema version 10) ---- */

/* A run that measures one anomaly of an earlier run again, on the anomaly's host, with one
 * treatment per suspect beside untreated controls (coordinator/analysis/experiment.h). */
typedef struct sm_experiment_row {
    uint64_t run_id;     /* the experiment's own run */
    uint64_t parent_run; /* the run whose anomaly it explains */
    char host[65];       /* the anomaly's host */
    char test[128];      /* the anomaly's test, as its column is labelled */
    char *plan_json;     /* owned: the plan (suspects, treatments, budget) */
    int64_t created_ms;
} sm_experiment_row;
void sm_experiment_row_fini(sm_experiment_row *r);

/* SM_EINVAL when a field does not fit or either run is missing. */
int sm_store_experiment_insert(sm_store *st, const sm_experiment_row *r, sm_error *err);
/* The experiment of run run_id; SM_EINVAL "no experiment N" when that run is none. */
int sm_store_experiment_get(sm_store *st, uint64_t run_id, sm_experiment_row *out, sm_error *err);
/* The experiments that explain run parent_run, oldest first; free with
 * sm_store_experiments_free. SM_EINVAL when there is no such run. */
int sm_store_experiments_of(sm_store *st, uint64_t parent_run, sm_experiment_row **rows, size_t *n,
                            sm_error *err);
void sm_store_experiments_free(sm_experiment_row *rows, size_t n);
/* Up to max ended experiments (any state but running) not yet told, that explain a run of a
 * schedule, oldest first: pairs[i] = {schedule id, experiment run id}; schema version 11. */
int sm_store_experiments_to_notify(sm_store *st, uint64_t (*pairs)[2], size_t max, size_t *n,
                                   sm_error *err);
/* Marks experiment run_id told; SM_EINVAL "no experiment N" when there is none. */
int sm_store_experiment_set_notified(sm_store *st, uint64_t run_id, sm_error *err);
/* Up to max ended experiments (any state but running) whose search was not taken on from
 * them yet, oldest first, into ids; schema version 11. */
int sm_store_experiments_to_follow(sm_store *st, uint64_t *ids, size_t max, size_t *n,
                                   sm_error *err);
/* Marks experiment run_id followed; SM_EINVAL "no experiment N" when there is none. */
int sm_store_experiment_set_followed(sm_store *st, uint64_t run_id, sm_error *err);
/* The runs that are experiments, lowest id first, at most max (ids[max]). */
int sm_store_experiment_runs(sm_store *st, uint64_t *ids, size_t max, size_t *n, sm_error *err);

#endif
