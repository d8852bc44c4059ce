/* The store's recurring runs (coordinator/store/schedules.c): schedule rows across a reopen,
 * pausing and deleting, runs linked to their schedule, the events of a schedule, and the migration
 * from schema version 7 that keeps the runs there were. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "coordinator/store/store.h"
#include "tests/unit/coordinator/store/store_fixture.h"

static void ok(int rc, const sm_error *err)
{
    if (rc != 0)
        fail_msg("%s", err->msg);
}

static void reopen(fixture *f)
{
    sm_store_close(f->st);
    f->st = NULL;
    sm_error err = {0};
    ok(sm_store_open(&f->st, f->path, &err), &err);
}

static uint64_t add_schedule(fixture *f, const char *name, uint32_t every_s, const char *cron,
                             const char *hosts, const char *url, int64_t next)
{
    sm_schedule_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "%s", name);
    r.spec_json = "{\"name\":\"nightly\",\"hosts\":\"all\"}";
    r.every_s = every_s;
    snprintf(r.cron, sizeof r.cron, "%s", cron);
    r.hosts_json = (char *)hosts;
    snprintf(r.webhook_url, sizeof r.webhook_url, "%s", url);
    r.next_ms = next;
    uint64_t id = 0;
    sm_error err = {0};
    ok(sm_store_schedule_insert(f->st, &r, 1000, &id, &err), &err);
    return id;
}

static uint64_t add_run(fixture *f, const char *name, uint64_t schedule)
{
    sm_error err = {0};
    uint64_t id = 0;
    ok(sm_store_run_insert(f->st, name, "{}", 1, 2000, &id, &err), &err);
    if (schedule)
        ok(sm_store_run_set_schedule(f->st, id, schedule, &err), &err);
    return id;
}

static void test_schedule_rows_survive_close_and_reopen(void **state)
{
    fixture *f = *state;
    const uint64_t a = add_schedule(f, "every-10", 10, "", "[\"h1\",\"h2\"]", "", 11000);
    const uint64_t b = add_schedule(f, "nightly", 0, "0 3 * * *", "", "http://127.0.0.1:9/h", 5000);
    reopen(f);
    sm_schedule_row *rows = NULL;
    size_t n = 0;
    sm_error err = {0};
    ok(sm_store_schedules_list(f->st, &rows, &n, &err), &err);
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].id, a);
    assert_string_equal(rows[0].name, "every-10");
    assert_int_equal(rows[0].every_s, 10);
    assert_string_equal(rows[0].cron, "");
    assert_string_equal(rows[0].hosts_json, "[\"h1\",\"h2\"]");
    assert_string_equal(rows[0].spec_json, "{\"name\":\"nightly\",\"hosts\":\"all\"}");
    assert_int_equal(rows[0].created_ms, 1000);
    assert_int_equal(rows[0].next_ms, 11000);
    assert_false(rows[0].paused);
    assert_int_equal(rows[0].last_run, 0);
    assert_int_equal(rows[0].n_runs, 0);
    assert_int_equal(rows[1].id, b);
    assert_string_equal(rows[1].cron, "0 3 * * *");
    assert_int_equal(rows[1].every_s, 0);
    assert_string_equal(rows[1].hosts_json, "");
    assert_string_equal(rows[1].webhook_url, "http://127.0.0.1:9/h");
    sm_store_schedules_free(rows, n);
}

static void test_schedule_insert_refuses_both_or_neither_interval_and_cron(void **state)
{
    fixture *f = *state;
    sm_schedule_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "x");
    r.spec_json = "{}";
    uint64_t id = 0;
    sm_error err = {0};
    assert_int_equal(sm_store_schedule_insert(f->st, &r, 1, &id, &err), SM_EINVAL);
    r.every_s = 10;
    snprintf(r.cron, sizeof r.cron, "* * * * *");
    assert_int_equal(sm_store_schedule_insert(f->st, &r, 1, &id, &err), SM_EINVAL);
    r.name[0] = '\0';
    assert_int_equal(sm_store_schedule_insert(f->st, &r, 1, &id, &err), SM_EINVAL);
}

static void test_schedules_due_skip_paused_deleted_and_later_ones(void **state)
{
    fixture *f = *state;
    sm_error err = {0};
    const uint64_t due = add_schedule(f, "due", 10, "", "", "", 5000);
    const uint64_t later = add_schedule(f, "later", 10, "", "", "", 9000);
    const uint64_t paused = add_schedule(f, "paused", 10, "", "", "", 1000);
    const uint64_t gone = add_schedule(f, "gone", 10, "", "", "", 1000);
    ok(sm_store_schedule_set_paused(f->st, paused, true, 0, &err), &err);
    ok(sm_store_schedule_delete(f->st, gone, &err), &err);
    sm_schedule_row *rows = NULL;
    size_t n = 0;
    ok(sm_store_schedules_due(f->st, 5000, &rows, &n, &err), &err);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].id, due);
    sm_store_schedules_free(rows, n);
    ok(sm_store_schedule_set_next(f->st, due, 20000, &err), &err);
    ok(sm_store_schedules_due(f->st, 9000, &rows, &n, &err), &err);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].id, later);
    sm_store_schedules_free(rows, n);
    /* a resumed one takes the next slot it is given */
    ok(sm_store_schedule_set_paused(f->st, paused, false, 30000, &err), &err);
    sm_schedule_row r;
    ok(sm_store_schedule_get(f->st, paused, &r, &err), &err);
    assert_false(r.paused);
    assert_int_equal(r.next_ms, 30000);
    sm_schedule_row_fini(&r);
    /* a deleted one is gone from every read, and deleting it again is refused */
    assert_int_equal(sm_store_schedule_get(f->st, gone, &r, &err), SM_EINVAL);
    assert_int_equal(sm_store_schedule_delete(f->st, gone, &err), SM_EINVAL);
    assert_int_equal(sm_store_schedule_set_paused(f->st, gone, true, 0, &err), SM_EINVAL);
    assert_int_equal(sm_store_schedule_set_next(f->st, 999, 1, &err), SM_EINVAL);
    ok(sm_store_schedules_list(f->st, &rows, &n, &err), &err);
    assert_int_equal(n, 3);
    sm_store_schedules_free(rows, n);
}

static void test_runs_link_to_their_schedule_and_keep_it_after_a_delete(void **state)
{
    fixture *f = *state;
    sm_error err = {0};
    const uint64_t s = add_schedule(f, "s", 10, "", "", "http://127.0.0.1:9/", 1000);
    const uint64_t hand = add_run(f, "by-hand", 0);
    const uint64_t r1 = add_run(f, "n", s), r2 = add_run(f, "n", s);
    ok(sm_store_run_update(f->st, r1, SM_RUN_DONE, "", 1, 0, 3000, &err), &err);
    sm_schedule_row row;
    ok(sm_store_schedule_get(f->st, s, &row, &err), &err);
    assert_int_equal(row.n_runs, 2);
    assert_int_equal(row.last_run, r2);
    assert_int_equal(row.last_state, SM_RUN_RUNNING);
    sm_schedule_row_fini(&row);

    sm_run_row *runs = NULL;
    size_t n = 0;
    ok(sm_store_schedule_runs(f->st, s, 20, &runs, &n, &err), &err);
    assert_int_equal(n, 2);
    assert_int_equal(runs[0].id, r2);
    assert_int_equal(runs[1].id, r1);
    assert_int_equal(runs[1].schedule_id, s);
    sm_store_runs_free(runs, n);

    /* the ended run is the one to judge; once judged, nothing is left */
    uint64_t pairs[4][2];
    ok(sm_store_schedules_to_notify(f->st, pairs, 4, &n, &err), &err);
    assert_int_equal(n, 1);
    assert_int_equal(pairs[0][0], s);
    assert_int_equal(pairs[0][1], r1);
    ok(sm_store_schedule_set_notified(f->st, s, r1, &err), &err);
    ok(sm_store_schedules_to_notify(f->st, pairs, 4, &n, &err), &err);
    assert_int_equal(n, 0);

    ok(sm_store_schedule_delete(f->st, s, &err), &err);
    reopen(f);
    sm_run_row r;
    ok(sm_store_run_get(f->st, r1, &r, &err), &err);
    assert_int_equal(r.schedule_id, s);
    sm_run_row_fini(&r);
    ok(sm_store_run_get(f->st, hand, &r, &err), &err);
    assert_int_equal(r.schedule_id, 0);
    sm_run_row_fini(&r);
    assert_int_equal(sm_store_run_set_schedule(f->st, 999, s, &err), SM_EINVAL);
}

static void test_events_of_a_subject_newest_first(void **state)
{
    fixture *f = *state;
    sm_error err = {0};
    ok(sm_store_event_insert(f->st, 1000, "skipped", "schedule 1", "first", &err), &err);
    ok(sm_store_event_insert(f->st, 2000, "not-started", "schedule 2", "other", &err), &err);
    ok(sm_store_event_insert(f->st, 3000, "skipped", "schedule 1", "second", &err), &err);
    sm_event_row *rows = NULL;
    size_t n = 0;
    ok(sm_store_events_of(f->st, "schedule 1", 10, &rows, &n, &err), &err);
    assert_int_equal(n, 2);
    assert_string_equal(rows[0].detail, "second");
    assert_int_equal(rows[0].ts_ms, 3000);
    assert_string_equal(rows[1].kind, "skipped");
    free(rows);
}

/* A version-7 store's runs read back after the migration, started by hand. */
static void test_migration_from_version_7_keeps_runs(void **state)
{
    fixture *f = *state;
    sm_error err = {0};
    const uint64_t run = add_run(f, "old", 0);
    ok(sm_store_run_update(f->st, run, SM_RUN_DONE, "", 1, 0, 3000, &err), &err);
    sm_store_close(f->st);
    f->st = NULL;
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db,
                     "DROP TABLE experiments; DROP INDEX runs_schedule; ALTER TABLE runs"
                     " DROP COLUMN schedule_id; DROP TABLE schedules; PRAGMA user_version = 7;",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    reopen(f);
    assert_int_equal(sm_store_schema_version(f->st), 11);
    sm_run_row r;
    ok(sm_store_run_get(f->st, run, &r, &err), &err);
    assert_string_equal(r.name, "old");
    assert_int_equal(r.state, SM_RUN_DONE);
    assert_int_equal(r.schedule_id, 0);
    sm_run_row_fini(&r);
    sm_schedule_row *rows = NULL;
    size_t n = 9;
    ok(sm_store_schedules_list(f->st, &rows, &n, &err), &err);
    assert_int_equal(n, 0);
    sm_store_schedules_free(rows, n);
}

/* A rotation adds one to the generation its secret derives from; nothing secret is stored. */
static void test_rotating_a_webhook_counts_its_generation(void **state)
{
    fixture *f = *state;
    sm_error err = {0};
    const uint64_t a = add_schedule(f, "hooked", 10, "", "", "https://hooks.example/x", 11000);
    const uint64_t b = add_schedule(f, "quiet", 10, "", "", "", 11000);
    sm_schedule_row r;
    ok(sm_store_schedule_get(f->st, a, &r, &err), &err);
    assert_int_equal(r.webhook_generation, 1);
    sm_schedule_row_fini(&r);
    ok(sm_store_schedule_rotate_webhook(f->st, a, &err), &err);
    ok(sm_store_schedule_rotate_webhook(f->st, a, &err), &err);
    reopen(f);
    ok(sm_store_schedule_get(f->st, a, &r, &err), &err);
    assert_int_equal(r.webhook_generation, 3);
    sm_schedule_row_fini(&r);
    assert_int_equal(sm_store_schedule_rotate_webhook(f->st, b, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "with a webhook"));
    assert_int_equal(sm_store_schedule_rotate_webhook(f->st, 999, &err), SM_EINVAL);
    ok(sm_store_schedule_delete(f->st, a, &err), &err);
    assert_int_equal(sm_store_schedule_rotate_webhook(f->st, a, &err), SM_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_schedule_rows_survive_close_and_reopen,
                                        store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(
            test_schedule_insert_refuses_both_or_neither_interval_and_cron, store_fixture_setup,
            store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_schedules_due_skip_paused_deleted_and_later_ones,
                                        store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_runs_link_to_their_schedule_and_keep_it_after_a_delete,
                                        store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_events_of_a_subject_newest_first, store_fixture_setup,
                                        store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_migration_from_version_7_keeps_runs,
                                        store_fixture_setup, store_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_rotating_a_webhook_counts_its_generation,
                                        store_fixture_setup, store_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
