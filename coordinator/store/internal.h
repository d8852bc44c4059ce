/* What the store's files share (store.c, rows.c and the table files agents.c, jobs.c, runs.c,
 * results.c, fingerprints.c, schedules.c, experiments.c): the sm_store struct, its prepared
 * statements and the row helpers. Private to them and to the store's unit tests; everyone else goes
 * through store.h. Single-threaded, as store.h says. */
#ifndef SM_COORD_STORE_INTERNAL_H
#define SM_COORD_STORE_INTERNAL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/store/store.h"

/* The statements prepared once at open (store.c holds their SQL), by index into stmts. */
enum {
    Q_BEGIN,
    Q_COMMIT,
    Q_ROLLBACK,
    Q_AGENT_UPSERT,
    Q_AGENT_SET_STATUS,
    Q_AGENTS_LIST,
    Q_AGENT_GET,
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
    Q_AGENT_JOBS,
    Q_RUN_RESULTS,
    Q_CELL_RESULTS_ALL,
    Q_RUN_RESULT_SIZES,
    Q_SIDE_INSERT,
    Q_SIDE_GET,
    Q_RUN_SET_TOTAL,
    Q_CELL_SET_STOPPED,
    Q_CELL_RESULTS,
    Q_STORE_ID,
    Q_FP_LATEST,
    Q_FP_INSERT,
    Q_FP_SEEN,
    Q_FP_HISTORY,
    Q_RUN_FP_TIE,
    Q_RUN_FPS,
    Q_SCHED_INSERT,
    Q_SCHED_GET,
    Q_SCHED_LIST,
    Q_SCHED_DUE,
    Q_SCHED_SET_NEXT,
    Q_SCHED_SET_PAUSED,
    Q_SCHED_DELETE,
    Q_SCHED_SET_NOTIFIED,
    Q_SCHED_ROTATE,
    Q_RUN_SET_SCHEDULE,
    Q_SCHED_RUNS,
    Q_SCHED_TO_NOTIFY,
    Q_EVENT_INSERT,
    Q_EVENTS_OF,
    Q_XP_INSERT,
    Q_XP_GET,
    Q_XP_OF,
    Q_XP_TO_NOTIFY,
    Q_XP_SET_NOTIFIED,
    Q_XP_TO_FOLLOW,
    Q_XP_SET_FOLLOWED,
    Q_XP_RUNS,
    Q_COUNT
};

#define FIELD_SIZE(type, field) sizeof(((type *)0)->field)

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

/* ---- store.c ---- */

/* The schema scripts, from version 0 on; the schema version is their count (store.c). Each
 * script that shipped stays as it shipped, so store_migrations[0] is schema version 1 as the
 * first coordinator wrote it. */
extern const char *const store_migrations[];

/* ---- rows.c: the helpers every other file of the store calls; they call none of those ---- */

/* SM_EINVAL, SM_ENOMEM or SM_ESYS for an SQLite result code. */
int store_code_of(int sqlite_rc);
/* Sets err from the connection's last failed call ("what: SQLite's words"); returns its code. */
int store_db_error(sqlite3 *db, sm_error *err, const char *what);
/* Resets s and clears its bindings, for its next use. */
void store_done_with(sqlite3_stmt *s);

/* Whether a fixed-size field of size bytes is terminated inside it. */
bool store_fits(const char *s, size_t size);
/* Copies a text column into a fixed-size field (NULL reads as ""); SM_EPARSE when too long. */
int store_column_copy(sqlite3_stmt *s, int col, char *dst, size_t size, sm_error *err);
/* A malloc'd copy of a text column; *out = NULL for SQL NULL. */
int store_column_dup(sqlite3_stmt *s, int col, char **out, sm_error *err);
/* The index of name among names[0..n), or -1. */
int store_name_index(const char *const *names, size_t n, const unsigned char *name);
/* Binds an id at idx; SM_EINVAL when it is past INT64_MAX ("<what> id ... out of range"). */
int store_bind_id(sqlite3_stmt *s, int idx, uint64_t id, const char *what, sm_error *err);

/* Reads the current row of s into *row; on failure *row holds nothing to free. */
typedef int (*store_row_reader)(sqlite3_stmt *s, void *row, sm_error *err);
/* Frees what a row that was read holds, not the row itself. */
typedef void (*store_row_fini)(void *row);

/* A type of row the store lists: its size, how one is read, and what a read one holds to free
 * (fini NULL: nothing). One per row struct, beside its reader. */
typedef struct store_row_type {
    size_t size;
    store_row_reader read;
    store_row_fini fini;
} store_row_type;

/* Steps s (already bound) to its end into a malloc'd array of rows of type t and resets it.
 * 0 with *prows (NULL when there are none) and *pn set, the caller freeing them with the
 * type's sm_store_*_free; or an error, with the rows read so far freed and *prows, *pn
 * untouched. */
int store_collect(sqlite3_stmt *s, const store_row_type *t, void **prows, size_t *pn,
                  const char *what, sm_error *err);
/* Finishes each of rows[0..n) with t->fini, then frees the array; rows NULL does nothing. */
void store_rows_free(const store_row_type *t, void *rows, size_t n);
/* The one row of statement q bound to id into *out (read fills it): SM_EINVAL "no <what>
 * <id>" when there is none, the database's error as "<what> get". */
int store_get_row(sm_store *st, int q, uint64_t id, const char *what, store_row_reader read,
                  void *out, sm_error *err);
/* store_collect over statement q bound to one run's id; SM_EINVAL when no run has that id. */
int store_collect_run(sm_store *st, int q, uint64_t run_id, const store_row_type *t, void **prows,
                      size_t *pn, const char *what, sm_error *err);

/* ---- runs.c ---- */

/* The runs' row type (runs.c): sm_run_row read from a statement selecting RUN_COLUMNS;
 * schedules.c lists a schedule's runs with it. */
extern const store_row_type store_run_rows;

#endif
