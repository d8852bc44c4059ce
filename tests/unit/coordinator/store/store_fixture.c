/* A store in a fresh temporary folder, for the store's unit tests (store_fixture.h). */
#include "tests/unit/coordinator/store/store_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define assert_ok(expr) store_fixture_check_ok((expr), &err, #expr, __FILE__, __LINE__)

int store_fixture_setup_closed(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (f == NULL)
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/sm_store_XXXXXX");
    if (mkdtemp(f->dir) == NULL) {
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof f->path, "%s/sm.db", f->dir);
    *state = f;
    return 0;
}

int store_fixture_setup(void **state)
{
    if (store_fixture_setup_closed(state) != 0)
        return -1;
    fixture *f = *state;
    sm_error err = {0};
    if (sm_store_open(&f->st, f->path, &err) != 0) {
        fprintf(stderr, "open: %s\n", err.msg);
        store_fixture_teardown(state);
        return -1;
    }
    return 0;
}

int store_fixture_teardown(void **state)
{
    fixture *f = *state;
    sm_store_close(f->st);
    const char *suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        char p[160];
        snprintf(p, sizeof p, "%s%s", f->path, suffixes[i]);
        unlink(p);
    }
    rmdir(f->dir);
    free(f);
    *state = NULL;
    return 0;
}

void store_fixture_check_ok(int rc, const sm_error *err, const char *expr, const char *file,
                            int line)
{
    if (rc != 0) {
        print_error("%s = %d: %s\n", expr, rc, err->msg);
        _fail(file, line);
    }
}

void store_fixture_open(fixture *f)
{
    sm_error err;
    sm_error_clear(&err);
    sm_store_close(f->st);
    f->st = NULL;
    assert_ok(sm_store_open(&f->st, f->path, &err));
    assert_non_null(f->st);
}

sqlite3 *store_fixture_raw_open(const char *path)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL),
                     SQLITE_OK);
    return db;
}

int64_t store_fixture_raw_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

void store_fixture_raw_text(sqlite3 *db, const char *sql, char *out, size_t size)
{
    sqlite3_stmt *s = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    const unsigned char *t = sqlite3_column_text(s, 0);
    snprintf(out, size, "%s", t ? (const char *)t : "(null)");
    sqlite3_finalize(s);
}

sm_agent_row store_fixture_agent(const char *name, int64_t seen_ms, char *facts_json)
{
    sm_agent_row a;
    memset(&a, 0, sizeof a);
    snprintf(a.name, sizeof a.name, "%s", name);
    snprintf(a.boot, sizeof a.boot, "boot-%s", name);
    snprintf(a.data_addr, sizeof a.data_addr, "10.0.0.1");
    a.labels_json = "{\"rack\":\"2\"}";
    a.facts_json = facts_json;
    a.first_seen_ms = seen_ms;
    a.last_seen_ms = seen_ms;
    a.status = SM_AGENT_ONLINE;
    return a;
}

uint64_t store_fixture_insert_job(sm_store *st, const char *host, int64_t now_ms)
{
    sm_error err;
    uint64_t id = 0;
    assert_ok(sm_store_job_insert(st, host, "{\"workload\":\"stream\"}", now_ms, &id, &err));
    return id;
}

sm_result_cols store_fixture_cols_ok(void)
{
    sm_result_cols c = {.bytes = 1048576,
                        .seconds = 0.5,
                        .throughput_MBps = 2.0,
                        .rtt_p50_us = NAN,
                        .connects_per_s = NAN,
                        .ok = true};
    return c;
}

uint64_t store_fixture_result_count(sm_store *st)
{
    sm_error err;
    uint64_t n = 99;
    assert_ok(sm_store_result_count(st, &n, &err));
    return n;
}

bool store_fixture_is_store_id(const char *s)
{
    return strlen(s) == 32 && strspn(s, "0123456789abcdef") == 32;
}

uint64_t store_fixture_insert_run(sm_store *st, const char *name, int64_t now_ms)
{
    sm_error err;
    uint64_t id = 0;
    assert_ok(sm_store_run_insert(st, name, "{\"name\":\"x\"}", 12, now_ms, &id, &err));
    return id;
}

sm_cell_row store_fixture_cell(uint32_t idx, const char *host, const char *peer, char *params)
{
    sm_cell_row c;
    memset(&c, 0, sizeof c);
    c.idx = idx;
    c.test = idx / 2;
    c.variant = idx % 2;
    snprintf(c.host, sizeof c.host, "%s", host);
    snprintf(c.peer, sizeof c.peer, "%s", peer);
    c.params_json = params;
    return c;
}
