/* Unit tests of the store's experiments: the row of an experiment run, the run it explains, and
 * what the store refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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

#define T(name)                                                                                    \
    cmocka_unit_test_setup_teardown(name, store_fixture_setup_closed, store_fixture_teardown)

int main(void)
{
    sm_log_level = LOG_WARNING;
    const struct CMUnitTest tests[] = {
        T(test_store_experiment_round_trips_and_lists_under_its_parent),
        T(test_store_experiment_insert_refuses_what_does_not_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
