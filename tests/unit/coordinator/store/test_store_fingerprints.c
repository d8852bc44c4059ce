/* The store's host fingerprints: history rows, and the fingerprint each run saw. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "coordinator/store/internal.h"
#include "coordinator/store/store.h"
#include "tests/unit/coordinator/store/store_fixture.h"
#include "proto/log.h"

static void ok(int rc, const sm_error *err)
{
    if (rc != 0)
        fail_msg("%s", err->msg);
}

static int64_t put(sm_store *st, const char *agent, const char *hash, int64_t now, bool *changed)
{
    sm_error err = {0};
    int64_t id = 0;
    char json[64];
    snprintf(json, sizeof json, "{\"h\":\"%s\"}", hash);
    ok(sm_store_fp_put(st, agent, hash, json, now, &id, changed, &err), &err);
    return id;
}

static void test_fp_same_hash_moves_last_seen_and_a_change_is_a_new_row(void **state)
{
    fixture *f = *state;
    bool changed = false;
    int64_t a = put(f->st, "h2", "aaaa", 1000, &changed);
    assert_true(changed);
    assert_int_equal(put(f->st, "h2", "aaaa", 5000, &changed), a);
    assert_false(changed);
    int64_t b = put(f->st, "h2", "bbbb", 6000, &changed);
    assert_true(changed);
    assert_true(b != a);
    /* Back to the first settings: a new row, so the history says when it went back. */
    int64_t c = put(f->st, "h2", "aaaa", 7000, &changed);
    assert_true(changed);
    assert_true(c != a && c != b);
    put(f->st, "h1", "aaaa", 7500, NULL);

    sm_error err = {0};
    sm_fp_row *rows = NULL;
    size_t n = 0;
    ok(sm_store_fp_history(f->st, "h2", &rows, &n, NULL, &err), &err);
    assert_int_equal(n, 3);
    assert_string_equal(rows[0].hash, "aaaa");
    assert_int_equal(rows[0].first_seen_ms, 1000);
    assert_int_equal(rows[0].last_seen_ms, 5000);
    assert_string_equal(rows[1].hash, "bbbb");
    assert_int_equal(rows[1].first_seen_ms, 6000);
    assert_int_equal(rows[1].last_seen_ms, 6000);
    assert_string_equal(rows[2].hash, "aaaa");
    assert_null(rows[0].json); /* a history list leaves the documents out */
    sm_fp_rows_free(rows, n);

    sm_fp_row last;
    bool found = false;
    ok(sm_store_fp_latest(f->st, "h2", &last, &found, &err), &err);
    assert_true(found);
    assert_int_equal(last.id, c);
    assert_string_equal(last.json, "{\"h\":\"aaaa\"}");
    assert_int_equal(last.first_seen_ms, 7000);
    sm_fp_row_fini(&last);
    ok(sm_store_fp_latest(f->st, "h9", &last, &found, &err), &err);
    assert_false(found);
}

static void test_fp_a_run_keeps_the_fingerprint_of_its_first_tie(void **state)
{
    fixture *f = *state;
    sm_error err = {0};
    uint64_t run = 0, other = 0;
    ok(sm_store_run_insert(f->st, "r", "{\"name\":\"r\"}", 4, 100, &run, &err), &err);
    ok(sm_store_run_insert(f->st, "s", "{\"name\":\"s\"}", 4, 100, &other, &err), &err);
    /* No fingerprint known for h3: nothing tied, no error. */
    ok(sm_store_run_fp_tie(f->st, run, "h3", &err), &err);
    put(f->st, "h1", "1111", 1000, NULL);
    put(f->st, "h2", "2222", 1000, NULL);
    ok(sm_store_run_fp_tie(f->st, run, "h2", &err), &err);
    ok(sm_store_run_fp_tie(f->st, run, "h1", &err), &err);
    put(f->st, "h2", "2b2b", 2000, NULL); /* changed during the run */
    ok(sm_store_run_fp_tie(f->st, run, "h2", &err), &err);
    ok(sm_store_run_fp_tie(f->st, other, "h2", &err), &err);

    sm_fp_row *rows = NULL;
    size_t n = 0;
    ok(sm_store_run_fps(f->st, run, &rows, &n, &err), &err);
    assert_int_equal(n, 2);
    assert_string_equal(rows[0].agent, "h1");
    assert_string_equal(rows[1].agent, "h2");
    assert_string_equal(rows[1].hash, "2222"); /* the first tie wins */
    assert_string_equal(rows[1].json, "{\"h\":\"2222\"}");
    sm_fp_rows_free(rows, n);
    ok(sm_store_run_fps(f->st, other, &rows, &n, &err), &err);
    assert_int_equal(n, 1);
    assert_string_equal(rows[0].hash, "2b2b");
    sm_fp_rows_free(rows, n);
    assert_int_equal(sm_store_run_fps(f->st, 99, &rows, &n, &err), SM_EINVAL);
}

static void test_fp_put_refuses_an_empty_agent_name(void **state)
{
    fixture *f = *state;
    sm_error err = {0};
    assert_int_equal(sm_store_fp_put(f->st, "", "aaaa", "{}", 1, NULL, NULL, &err), SM_EINVAL);
    sm_fp_row *rows = NULL;
    size_t n = 9;
    ok(sm_store_fp_history(f->st, "", &rows, &n, NULL, &err), &err);
    assert_int_equal(n, 0);
    sm_fp_rows_free(rows, n);
}

/* The history of h2 from the store: *left_out the count said to be left out. */
static size_t history(fixture *f, const char *agent, sm_fp_row **rows, uint64_t *left_out)
{
    sm_error err = {0};
    size_t n = 0;
    ok(sm_store_fp_history(f->st, agent, rows, &n, left_out, &err), &err);
    return n;
}

static int64_t stored_rows(fixture *f, const char *agent)
{
    int64_t n = -1;
    sqlite3_stmt *s = NULL;
    assert_int_equal(sqlite3_prepare_v2(f->st->db,
                                        "SELECT count(*) FROM fingerprints WHERE agent = ?1", -1,
                                        &s, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(s, 1, agent, -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW)
        n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return n;
}

/* A host whose fingerprint flaps keeps its last SM_FP_HISTORY_MAX changes: the older rows go
 * (but one a run saw, kept for the run's report), and the history says how many it leaves out. */
static void test_fp_history_keeps_the_last_100_changes_and_counts_the_rest(void **state)
{
    fixture *f = *state;
    sm_error err = {0};
    uint64_t run = 0;
    ok(sm_store_run_insert(f->st, "r", "{\"name\":\"r\"}", 4, 100, &run, &err), &err);
    put(f->st, "h1", "1111", 1, NULL);
    char hash[17];
    for (int i = 0; i < SM_FP_HISTORY_MAX + 5; i++) {
        snprintf(hash, sizeof hash, "%016x", (unsigned)i);
        put(f->st, "h2", hash, 1000 + i, NULL);
        if (i == 1) /* the run saw the second one */
            ok(sm_store_run_fp_tie(f->st, run, "h2", &err), &err);
    }
    sm_fp_row *rows = NULL;
    uint64_t left_out = 0;
    size_t n = history(f, "h2", &rows, &left_out);
    assert_int_equal(n, SM_FP_HISTORY_MAX);
    assert_int_equal(left_out, 5);
    assert_string_equal(rows[0].hash, "0000000000000005"); /* the oldest listed */
    assert_int_equal(rows[0].first_seen_ms, 1005);
    assert_string_equal(rows[n - 1].hash, "0000000000000068"); /* the latest */
    sm_fp_rows_free(rows, n);
    /* 100 rows and the one the run saw; its report still has it */
    assert_int_equal(stored_rows(f, "h2"), SM_FP_HISTORY_MAX + 1);
    ok(sm_store_run_fps(f->st, run, &rows, &n, &err), &err);
    assert_int_equal(n, 1);
    assert_string_equal(rows[0].hash, "0000000000000001");
    assert_string_equal(rows[0].json, "{\"h\":\"0000000000000001\"}");
    sm_fp_rows_free(rows, n);
    /* ten more changes: ten more left out; the same settings again change nothing */
    for (int i = 0; i < 10; i++) {
        snprintf(hash, sizeof hash, "%016x", (unsigned)(1000 + i));
        put(f->st, "h2", hash, 5000 + i, NULL);
    }
    put(f->st, "h2", hash, 6000, NULL);
    n = history(f, "h2", &rows, &left_out);
    assert_int_equal(n, SM_FP_HISTORY_MAX);
    assert_int_equal(left_out, 15);
    sm_fp_rows_free(rows, n);
    assert_int_equal(stored_rows(f, "h2"), SM_FP_HISTORY_MAX + 1);
    /* another host is untouched */
    n = history(f, "h1", &rows, &left_out);
    assert_int_equal(n, 1);
    assert_int_equal(left_out, 0);
    sm_fp_rows_free(rows, n);
}

#define T(name) cmocka_unit_test_setup_teardown(name, store_fixture_setup, store_fixture_teardown)

int main(void)
{
    sm_log_level = LOG_WARNING;
    const struct CMUnitTest tests[] = {
        T(test_fp_same_hash_moves_last_seen_and_a_change_is_a_new_row),
        T(test_fp_a_run_keeps_the_fingerprint_of_its_first_tie),
        T(test_fp_put_refuses_an_empty_agent_name),
        T(test_fp_history_keeps_the_last_100_changes_and_counts_the_rest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
