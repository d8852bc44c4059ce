/* The store's generic row collector (store/rows.c): a growing array of any row type, read to
 * the end of a statement, freed whole with the type's fini when anything fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "coordinator/store/internal.h"

/* A row that owns a heap copy of its text, as the store's rows own their JSON. */
typedef struct row {
    int64_t n;
    char *text;
} row;

static int fini_calls;
static int64_t fail_at; /* the reader fails on the row whose n is this; 0: never */

static int read_row(sqlite3_stmt *s, void *out, sm_error *err)
{
    row *r = out;
    r->n = sqlite3_column_int64(s, 0);
    if (r->n == fail_at)
        return sm_error_set(err, SM_EPARSE, "row %lld: bad", (long long)r->n);
    r->text = strdup((const char *)sqlite3_column_text(s, 1));
    return r->text ? 0 : sm_error_set(err, SM_ENOMEM, "out of memory");
}

static void fini_row(void *out)
{
    row *r = out;
    free(r->text);
    fini_calls++;
}

static const store_row_type rows_type = {sizeof(row), read_row, fini_row};

static int setup(void **state)
{
    sqlite3 *db = NULL;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK)
        return -1;
    fini_calls = 0;
    fail_at = 0;
    *state = db;
    return 0;
}

static int teardown(void **state)
{
    sqlite3_close(*state);
    return 0;
}

/* n rows (1, "r1") ... (n, "rn"), then, with error_last, a row whose evaluation fails. */
static sqlite3_stmt *numbers(sqlite3 *db, int n, bool error_last)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < %d) "
             "SELECT n, 'r' || n FROM c WHERE %d > 0%s",
             n > 0 ? n : 1, n,
             error_last ? " UNION ALL SELECT abs(-9223372036854775807 - 1), 'x'" : "");
    sqlite3_stmt *s = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
    return s;
}

static void test_store_collect_reads_every_row_in_order_past_the_first_growth(void **state)
{
    sqlite3_stmt *s = numbers(*state, 40, false);
    void *out = NULL;
    size_t n = 0;
    sm_error err = {0};
    assert_int_equal(store_collect(s, &rows_type, &out, &n, "numbers", &err), 0);
    assert_int_equal(n, 40);
    row *r = out;
    for (size_t i = 0; i < n; i++) {
        char want[24];
        snprintf(want, sizeof want, "r%zu", i + 1);
        assert_int_equal(r[i].n, (int64_t)i + 1);
        assert_string_equal(r[i].text, want);
    }
    /* Reset: the statement runs again from its first row. */
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(s, 0), 1);
    store_rows_free(&rows_type, out, n);
    assert_int_equal(fini_calls, 40);
    sqlite3_finalize(s);
}

static void test_store_collect_of_no_rows_is_null_and_zero(void **state)
{
    sqlite3_stmt *s = numbers(*state, 0, false);
    void *out = &out;
    size_t n = 7;
    sm_error err = {0};
    assert_int_equal(store_collect(s, &rows_type, &out, &n, "numbers", &err), 0);
    assert_null(out);
    assert_int_equal(n, 0);
    store_rows_free(&rows_type, out, n);
    assert_int_equal(fini_calls, 0);
    sqlite3_finalize(s);
}

static void test_store_collect_frees_the_rows_read_when_a_row_fails_to_read(void **state)
{
    sqlite3_stmt *s = numbers(*state, 5, false);
    fail_at = 3;
    void *out = &out;
    size_t n = 7;
    sm_error err = {0};
    assert_int_equal(store_collect(s, &rows_type, &out, &n, "numbers", &err), SM_EPARSE);
    assert_string_equal(err.msg, "row 3: bad");
    /* Rows 1 and 2 were read and finished; the failed one holds nothing (reader's contract). */
    assert_int_equal(fini_calls, 2);
    assert_ptr_equal(out, &out);
    assert_int_equal(n, 7);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(s, 0), 1);
    sqlite3_finalize(s);
}

static void test_store_collect_frees_the_rows_read_when_the_statement_fails(void **state)
{
    sqlite3_stmt *s = numbers(*state, 3, true);
    void *out = &out;
    size_t n = 7;
    sm_error err = {0};
    assert_int_equal(store_collect(s, &rows_type, &out, &n, "numbers", &err), SM_ESYS);
    assert_string_equal(err.msg, "numbers: integer overflow");
    assert_int_equal(fini_calls, 3);
    assert_ptr_equal(out, &out);
    assert_int_equal(n, 7);
    sqlite3_finalize(s);
}

static void test_store_rows_free_without_fini_or_rows_frees_only_the_array(void **state)
{
    (void)state;
    const store_row_type plain = {sizeof(row), read_row, NULL};
    row *r = calloc(2, sizeof *r);
    assert_non_null(r);
    store_rows_free(&plain, r, 2); /* ASan: nothing leaks, nothing freed twice */
    store_rows_free(&rows_type, NULL, 5);
    assert_int_equal(fini_calls, 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_store_collect_reads_every_row_in_order_past_the_first_growth),
        T(test_store_collect_of_no_rows_is_null_and_zero),
        T(test_store_collect_frees_the_rows_read_when_a_row_fails_to_read),
        T(test_store_collect_frees_the_rows_read_when_the_statement_fails),
        T(test_store_rows_free_without_fini_or_rows_frees_only_the_array),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
