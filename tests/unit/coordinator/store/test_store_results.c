/* Unit tests of the store's results and transactions: each result stored once, rollback and commit,
 * pair sides per role. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "coordinator/store/store.h"
#include "tests/unit/coordinator/store/store_fixture.h"
#include "proto/log.h"

#define assert_ok(expr) store_fixture_check_ok((expr), &err, #expr, __FILE__, __LINE__)

static void test_store_result_inserted_twice_is_stored_once(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    uint64_t id = store_fixture_insert_job(f->st, "h1", 1000);
    sm_result_cols c = store_fixture_cols_ok();
    bool inserted = false;
    assert_ok(
        sm_store_result_insert(f->st, id, 1, "h1", "{\"ok\":true}", &c, 2000, &inserted, &err));
    assert_true(inserted);
    assert_ok(
        sm_store_result_insert(f->st, id, 1, "h1", "{\"ok\":\"dup\"}", &c, 3000, &inserted, &err));
    assert_false(inserted);
    assert_int_equal(store_fixture_result_count(f->st), 1);

    char *json = NULL;
    assert_ok(sm_store_result_get(f->st, id, 1, &json, &err));
    assert_string_equal(json, "{\"ok\":true}");
    free(json);

    /* Another attempt of the same job is a different result. */
    assert_ok(sm_store_result_insert(f->st, id, 2, "h1", "{}", &c, 4000, &inserted, &err));
    assert_true(inserted);
    assert_int_equal(store_fixture_result_count(f->st), 2);
}

static void test_store_result_stores_nan_metrics_as_null(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    uint64_t id = store_fixture_insert_job(f->st, "h1", 1000);
    sm_result_cols c = store_fixture_cols_ok();
    bool inserted = false;
    assert_ok(sm_store_result_insert(f->st, id, 1, "h1", "{}", &c, 2000, &inserted, &err));

    sqlite3 *db = store_fixture_raw_open(f->path);
    assert_int_equal(store_fixture_raw_int(db,
                                           "SELECT rtt_p50_us IS NULL AND connects_per_s IS NULL"
                                           " FROM results"),
                     1);
    assert_int_equal(store_fixture_raw_int(db,
                                           "SELECT bytes = 1048576 AND seconds = 0.5 AND"
                                           " throughput_MBps = 2.0 AND ok = 1 AND stored_ms = 2000"
                                           " AND agent = 'h1' FROM results"),
                     1);
    sqlite3_close(db);
}

static void test_store_result_for_missing_job_is_refused(void **state)
{
    fixture *f = *state;
    sm_error err;
    sm_error_clear(&err);
    store_fixture_open(f);
    sm_result_cols c = store_fixture_cols_ok();
    bool inserted = true;
    assert_int_equal(sm_store_result_insert(f->st, 77, 1, "h1", "{}", &c, 2000, &inserted, &err),
                     SM_EINVAL);
    assert_int_equal(err.code, SM_EINVAL);
    assert_non_null(strstr(err.msg, "FOREIGN KEY constraint failed"));
    assert_non_null(strstr(err.msg, "job 77"));
    assert_int_equal(store_fixture_result_count(f->st), 0);
}

static void test_store_rollback_discards_results_of_the_transaction(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    uint64_t id = store_fixture_insert_job(f->st, "h1", 1000);
    sm_result_cols c = store_fixture_cols_ok();
    bool inserted = false;
    assert_ok(sm_store_begin(f->st, &err));
    assert_ok(sm_store_result_insert(f->st, id, 1, "h1", "{}", &c, 2000, &inserted, &err));
    assert_ok(sm_store_result_insert(f->st, id, 2, "h1", "{}", &c, 2000, &inserted, &err));
    assert_int_equal(store_fixture_result_count(f->st), 2);
    sm_store_rollback(f->st);
    assert_int_equal(store_fixture_result_count(f->st), 0);

    char *json = (char *)"untouched";
    assert_ok(sm_store_result_get(f->st, id, 1, &json, &err));
    assert_null(json);

    /* Nothing to roll back is harmless. */
    sm_store_rollback(f->st);
    assert_ok(sm_store_begin(f->st, &err));
    sm_store_rollback(f->st);
}

static void test_store_commit_keeps_results_across_reopen(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    uint64_t id = store_fixture_insert_job(f->st, "h1", 1000);
    sm_result_cols c = store_fixture_cols_ok();
    bool inserted = false;
    assert_ok(sm_store_begin(f->st, &err));
    assert_ok(sm_store_result_insert(f->st, id, 1, "h1", "{\"n\":1}", &c, 2000, &inserted, &err));
    assert_ok(sm_store_result_insert(f->st, id, 2, "h1", "{\"n\":2}", &c, 2000, &inserted, &err));
    assert_ok(sm_store_commit(f->st, &err));

    store_fixture_open(f);
    assert_int_equal(store_fixture_result_count(f->st), 2);
    char *json = NULL;
    assert_ok(sm_store_result_get(f->st, id, 2, &json, &err));
    assert_string_equal(json, "{\"n\":2}");
    free(json);
}

static void test_store_a_failed_insert_leaves_the_transaction_usable(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    uint64_t id = store_fixture_insert_job(f->st, "h1", 1000);
    sm_result_cols c = store_fixture_cols_ok();
    bool inserted = false;
    assert_ok(sm_store_begin(f->st, &err));
    assert_ok(sm_store_result_insert(f->st, id, 1, "h1", "{}", &c, 2000, &inserted, &err));
    assert_int_equal(
        sm_store_result_insert(f->st, id + 1, 1, "h1", "{}", &c, 2000, &inserted, &err), SM_EINVAL);
    assert_ok(sm_store_commit(f->st, &err));
    assert_int_equal(store_fixture_result_count(f->st), 1);
}

static void test_store_begin_inside_a_transaction_fails(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    assert_ok(sm_store_begin(f->st, &err));
    sm_error_clear(&err);
    assert_int_equal(sm_store_begin(f->st, &err), SM_ESYS);
    assert_non_null(strstr(err.msg, "within a transaction"));
    sm_store_rollback(f->st);
    sm_error_clear(&err);
    assert_int_equal(sm_store_commit(f->st, &err), SM_ESYS);
    assert_non_null(strstr(err.msg, "no transaction is active"));
}

static void test_store_result_get_of_missing_result_is_null(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    char *json = (char *)"untouched";
    assert_ok(sm_store_result_get(f->st, 5, 1, &json, &err));
    assert_null(json);
}

#define T(name)                                                                                    \
    cmocka_unit_test_setup_teardown(name, store_fixture_setup_closed, store_fixture_teardown)

static void test_store_pair_sides_are_stored_once_per_role(void **state)
{
    fixture *f = *state;
    sm_error err = {0};
    uint64_t id = 0;
    store_fixture_open(f);
    assert_int_equal(sm_store_job_insert(f->st, "h1", "{}", 1, &id, &err), 0);
    bool inserted = false;
    assert_int_equal(
        sm_store_side_insert(f->st, id, 1, "server", "h2", "{\"ok\":true}", 2, &inserted, &err), 0);
    assert_true(inserted);
    assert_int_equal(
        sm_store_side_insert(f->st, id, 1, "server", "h2", "{\"ok\":false}", 3, &inserted, &err),
        0);
    assert_false(inserted); /* a resend of the same side changes nothing */
    char *json = NULL;
    assert_int_equal(sm_store_side_get(f->st, id, 1, "server", &json, &err), 0);
    assert_string_equal(json, "{\"ok\":true}");
    free(json);
    assert_int_equal(sm_store_side_get(f->st, id, 1, "client", &json, &err), 0);
    assert_null(json);
    assert_int_not_equal(
        sm_store_side_insert(f->st, id + 99, 1, "client", "h1", "{}", 4, &inserted, &err),
        0); /* no such job */
}

int main(void)
{
    /* Every open of a fresh file logs its migration; the tests check the schema directly. */
    sm_log_level = LOG_WARNING;
    const struct CMUnitTest tests[] = {
        T(test_store_pair_sides_are_stored_once_per_role),
        T(test_store_result_inserted_twice_is_stored_once),
        T(test_store_result_stores_nan_metrics_as_null),
        T(test_store_result_for_missing_job_is_refused),
        T(test_store_rollback_discards_results_of_the_transaction),
        T(test_store_commit_keeps_results_across_reopen),
        T(test_store_a_failed_insert_leaves_the_transaction_usable),
        T(test_store_begin_inside_a_transaction_fails),
        T(test_store_result_get_of_missing_result_is_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
