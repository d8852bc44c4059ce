/* Unit tests of the store's experiments: the row of an experiment run, the run it explains, and
 * what the store refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "coordinator/store/store.h"
#include "tests/unit/coordinator/store/store_fixture.h"
#include "proto/log.h"

#define assert_ok(expr) store_fixture_check_ok((expr), &err, #expr, __FILE__, __LINE__)

static sm_experiment_row row(uint64_t run, uint64_t parent, const char *plan)
{
    sm_experiment_row r = {.run_id = run, .parent_run = parent, .created_ms = 5000};
    strcpy(r.host, "h2");
    strcpy(r.test, "stream tcp lines 128 B x 8192");
    r.plan_json = (char *)plan;
    return r;
}

static void test_store_experiment_round_trips_and_lists_under_its_parent(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    const uint64_t parent = store_fixture_insert_run(f->st, "seed", 1000);
    const uint64_t other = store_fixture_insert_run(f->st, "other", 1500);
    const uint64_t x1 = store_fixture_insert_run(f->st, "seed-explain-h2", 2000);
    const uint64_t x2 = store_fixture_insert_run(f->st, "seed-explain-h2", 3000);
    sm_experiment_row r1 = row(x1, parent, "[{\"item\":\"if.lo.qdisc\"}]");
    sm_experiment_row r2 = row(x2, parent, "[]");
    assert_ok(sm_store_experiment_insert(f->st, &r2, &err));
    assert_ok(sm_store_experiment_insert(f->st, &r1, &err));

    sm_experiment_row got;
    assert_ok(sm_store_experiment_get(f->st, x1, &got, &err));
    assert_int_equal(got.run_id, x1);
    assert_int_equal(got.parent_run, parent);
    assert_string_equal(got.host, "h2");
    assert_string_equal(got.test, "stream tcp lines 128 B x 8192");
    assert_string_equal(got.plan_json, "[{\"item\":\"if.lo.qdisc\"}]");
    assert_int_equal(got.created_ms, 5000);
    sm_experiment_row_fini(&got);
    sm_experiment_row_fini(&got);

    /* A run that is no experiment, and one that is not there. */
    assert_int_equal(sm_store_experiment_get(f->st, parent, &got, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "no experiment"));

    sm_experiment_row *rows = NULL;
    size_t n = 9;
    assert_ok(sm_store_experiments_of(f->st, parent, &rows, &n, &err));
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].run_id, x1); /* by run id, not by insertion */
    assert_int_equal(rows[1].run_id, x2);
    assert_string_equal(rows[1].plan_json, "[]");
    sm_store_experiments_free(rows, n);

    rows = NULL;
    assert_ok(sm_store_experiments_of(f->st, other, &rows, &n, &err));
    assert_int_equal(n, 0);
    assert_null(rows);
    assert_int_equal(sm_store_experiments_of(f->st, 99, &rows, &n, &err), SM_EINVAL);

    /* The runs that are experiments, by id, at most max. */
    uint64_t ids[3] = {0};
    assert_ok(sm_store_experiment_runs(f->st, ids, 3, &n, &err));
    assert_int_equal(n, 2);
    assert_int_equal(ids[0], x1);
    assert_int_equal(ids[1], x2);
    assert_ok(sm_store_experiment_runs(f->st, ids, 1, &n, &err));
    assert_int_equal(n, 1);
    assert_int_equal(ids[0], x1);
}

static void test_store_experiment_insert_refuses_what_does_not_fit(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    const uint64_t parent = store_fixture_insert_run(f->st, "seed", 1000);
    const uint64_t x = store_fixture_insert_run(f->st, "x", 2000);

    sm_experiment_row r = row(x, parent, "[]");
    r.host[0] = '\0';
    assert_int_equal(sm_store_experiment_insert(f->st, &r, &err), SM_EINVAL);
    r = row(x, parent, NULL);
    assert_int_equal(sm_store_experiment_insert(f->st, &r, &err), SM_EINVAL);
    /* A parent that is not there: the foreign key refuses it. */
    r = row(x, 77, "[]");
    assert_int_not_equal(sm_store_experiment_insert(f->st, &r, &err), 0);
    /* One experiment per run. */
    r = row(x, parent, "[]");
    assert_ok(sm_store_experiment_insert(f->st, &r, &err));
    assert_int_not_equal(sm_store_experiment_insert(f->st, &r, &err), 0);

    sm_experiment_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_experiments_of(f->st, parent, &rows, &n, &err));
    assert_int_equal(n, 1);
    sm_store_experiments_free(rows, n);
}

static uint64_t add_schedule(fixture *f)
{
    sm_schedule_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "watch");
    r.spec_json = "{\"name\":\"watch\",\"hosts\":\"all\"}";
    r.every_s = 60;
    r.hosts_json = "";
    snprintf(r.webhook_url, sizeof r.webhook_url, "http://192.0.2.7/hook");
    r.next_ms = 1000;
    uint64_t id = 0;
    sm_error err = {0};
    assert_ok(sm_store_schedule_insert(f->st, &r, 1000, &id, &err));
    return id;
}

static void test_store_experiments_to_notify_are_the_ended_ones_of_scheduled_runs(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    const uint64_t sched = add_schedule(f);
    const uint64_t by_schedule = store_fixture_insert_run(f->st, "watch", 1000);
    const uint64_t by_hand = store_fixture_insert_run(f->st, "seed", 1100);
    assert_ok(sm_store_run_set_schedule(f->st, by_schedule, sched, &err));
    const uint64_t x_ended = store_fixture_insert_run(f->st, "x1", 2000);
    const uint64_t x_running = store_fixture_insert_run(f->st, "x2", 2100);
    const uint64_t x_by_hand = store_fixture_insert_run(f->st, "x3", 2200);
    const uint64_t x_failed = store_fixture_insert_run(f->st, "x4", 2300);
    sm_experiment_row r = row(x_ended, by_schedule, "[]");
    assert_ok(sm_store_experiment_insert(f->st, &r, &err));
    r = row(x_running, by_schedule, "[]");
    assert_ok(sm_store_experiment_insert(f->st, &r, &err));
    r = row(x_by_hand, by_hand, "[]");
    assert_ok(sm_store_experiment_insert(f->st, &r, &err));
    r = row(x_failed, by_schedule, "[]");
    assert_ok(sm_store_experiment_insert(f->st, &r, &err));
    assert_ok(sm_store_run_update(f->st, x_ended, SM_RUN_DONE, NULL, 12, 0, 3000, &err));
    assert_ok(sm_store_run_update(f->st, x_by_hand, SM_RUN_DONE, NULL, 12, 0, 3000, &err));
    assert_ok(sm_store_run_update(f->st, x_failed, SM_RUN_FAILED, "lost", 0, 12, 3100, &err));

    uint64_t pairs[4][2];
    size_t n = 9;
    assert_ok(sm_store_experiments_to_notify(f->st, pairs, 4, &n, &err));
    /* The running one waits; the one of a run started by hand has no webhook to tell. */
    assert_int_equal(n, 2);
    assert_int_equal(pairs[0][0], sched);
    assert_int_equal(pairs[0][1], x_ended);
    assert_int_equal(pairs[1][1], x_failed);
    /* max bounds the list. */
    assert_ok(sm_store_experiments_to_notify(f->st, pairs, 1, &n, &err));
    assert_int_equal(n, 1);
    assert_int_equal(pairs[0][1], x_ended);

    assert_ok(sm_store_experiment_set_notified(f->st, x_ended, &err));
    assert_ok(sm_store_experiments_to_notify(f->st, pairs, 4, &n, &err));
    assert_int_equal(n, 1);
    assert_int_equal(pairs[0][1], x_failed);
    assert_ok(sm_store_run_update(f->st, x_running, SM_RUN_DONE, NULL, 12, 0, 4000, &err));
    assert_ok(sm_store_experiments_to_notify(f->st, pairs, 4, &n, &err));
    assert_int_equal(n, 2);
    assert_int_equal(pairs[0][1], x_running);

    /* A run that is no experiment. */
    assert_int_equal(sm_store_experiment_set_notified(f->st, by_schedule, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "no experiment"));
}

/* Version 11 adds notified and followed: an experiment that ended before it is neither told
 * nor followed after it. */
static void test_store_migration_to_11_tells_and_follows_no_older_experiment(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    const uint64_t sched = add_schedule(f);
    const uint64_t parent = store_fixture_insert_run(f->st, "watch", 1000);
    assert_ok(sm_store_run_set_schedule(f->st, parent, sched, &err));
    const uint64_t x = store_fixture_insert_run(f->st, "x", 2000);
    sm_experiment_row r = row(x, parent, "[]");
    assert_ok(sm_store_experiment_insert(f->st, &r, &err));
    assert_ok(sm_store_run_update(f->st, x, SM_RUN_DONE, NULL, 12, 0, 3000, &err));
    sm_store_close(f->st);
    f->st = NULL;
    sqlite3 *db = store_fixture_raw_open(f->path);
    assert_int_equal(sqlite3_exec(db,
                                  "ALTER TABLE experiments DROP COLUMN notified;"
                                  " ALTER TABLE experiments DROP COLUMN followed;"
                                  " PRAGMA user_version = 10;",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    store_fixture_open(f);
    assert_int_equal(sm_store_schema_version(f->st), 11);
    uint64_t pairs[4][2];
    size_t n = 9;
    assert_ok(sm_store_experiments_to_notify(f->st, pairs, 4, &n, &err));
    assert_int_equal(n, 0);
    uint64_t ids[4];
    assert_ok(sm_store_experiments_to_follow(f->st, ids, 4, &n, &err));
    assert_int_equal(n, 0);
    /* One made after it is told, and followed. */
    const uint64_t y = store_fixture_insert_run(f->st, "y", 4000);
    r = row(y, parent, "[]");
    assert_ok(sm_store_experiment_insert(f->st, &r, &err));
    assert_ok(sm_store_run_update(f->st, y, SM_RUN_DONE, NULL, 12, 0, 5000, &err));
    assert_ok(sm_store_experiments_to_notify(f->st, pairs, 4, &n, &err));
    assert_int_equal(n, 1);
    assert_int_equal(pairs[0][1], y);
    assert_ok(sm_store_experiments_to_follow(f->st, ids, 4, &n, &err));
    assert_int_equal(n, 1);
    assert_int_equal(ids[0], y);
    assert_ok(sm_store_experiment_set_followed(f->st, y, &err));
    assert_ok(sm_store_experiments_to_follow(f->st, ids, 4, &n, &err));
    assert_int_equal(n, 0);
    /* Told and followed are apart. */
    assert_ok(sm_store_experiments_to_notify(f->st, pairs, 4, &n, &err));
    assert_int_equal(n, 1);
    assert_int_equal(sm_store_experiment_set_followed(f->st, parent, &err), SM_EINVAL);
}

#define T(name)                                                                                    \
    cmocka_unit_test_setup_teardown(name, store_fixture_setup_closed, store_fixture_teardown)

int main(void)
{
    sm_log_level = LOG_WARNING;
    const struct CMUnitTest tests[] = {
        T(test_store_experiment_round_trips_and_lists_under_its_parent),
        T(test_store_experiment_insert_refuses_what_does_not_fit),
        T(test_store_experiments_to_notify_are_the_ended_ones_of_scheduled_runs),
        T(test_store_migration_to_11_tells_and_follows_no_older_experiment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
