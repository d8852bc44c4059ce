/* A store in a fresh temporary folder, for the store's unit tests (cmocka setup/teardown), and
 * the helpers they share. */
#ifndef SM_TESTS_UNIT_STORE_FIXTURE_H
#define SM_TESTS_UNIT_STORE_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "coordinator/store/store.h"

typedef struct fixture {
    char dir[64];   /* a mkdtemp folder under /tmp */
    char path[128]; /* dir/sm.db */
    sm_store *st;
} fixture;

/* *state = a new fixture with its folder made and the store not opened (st NULL); -1 when
 * the folder cannot be made. */
int store_fixture_setup_closed(void **state);

/* As store_fixture_setup_closed, then the store opened at path; -1 when it does not open. */
int store_fixture_setup(void **state);

/* Closes the store (if open), removes the database with its -wal, -shm and -journal files
 * and the folder, and frees the fixture. */
int store_fixture_teardown(void **state);

/* Helpers of the store's tests; each fails the test (cmocka) on an error. */

/* Fails the test at file:line, naming expr, rc and err's reason, unless rc is 0 (the store
 * tests' assert_ok(expr) passes their sm_error err). */
void store_fixture_check_ok(int rc, const sm_error *err, const char *expr, const char *file,
                            int line);

/* Opens the store at f->path into f->st, closing f->st first if it is open. */
void store_fixture_open(fixture *f);

/* A second, independent connection, to see what really reached the file (sqlite3_close it). */
sqlite3 *store_fixture_raw_open(const char *path);

/* The first column of the first row of sql on db, as an integer. */
int64_t store_fixture_raw_int(sqlite3 *db, const char *sql);

/* The first column of the first row of sql on db, as text ("(null)" for NULL) into out. */
void store_fixture_raw_text(sqlite3 *db, const char *sql, char *out, size_t size);

/* An online agent row named name, seen first and last at seen_ms, with facts_json (borrowed). */
sm_agent_row store_fixture_agent(const char *name, int64_t seen_ms, char *facts_json);

/* Inserts a plain stream job on host at now_ms; returns its id. */
uint64_t store_fixture_insert_job(sm_store *st, const char *host, int64_t now_ms);

/* The columns of a good stream result (1 MiB in 0.5 s, no RTT or connect rate). */
sm_result_cols store_fixture_cols_ok(void);

/* The number of results in st. */
uint64_t store_fixture_result_count(sm_store *st);

/* Whether s looks like a store id: 32 lower-case hex digits. */
bool store_fixture_is_store_id(const char *s);

/* Inserts a run named name (of 12 jobs) at now_ms; returns its id. */
uint64_t store_fixture_insert_run(sm_store *st, const char *name, int64_t now_ms);

/* Cell idx of a run (test idx / 2, variant idx % 2) on host and peer with params (borrowed). */
sm_cell_row store_fixture_cell(uint32_t idx, const char *host, const char *peer, char *params);

#endif
