/* Unit tests of the store's agents: upserts, facts, lists and status stamps. */
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

static void test_store_agent_upsert_keeps_first_seen_and_null_facts_keep_old(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    sm_agent_row a = store_fixture_agent("h1", 1000, "{\"cores\":4}");
    assert_ok(sm_store_agent_upsert(f->st, &a, &err));

    sm_agent_row b = store_fixture_agent("h1", 5000, NULL);
    snprintf(b.boot, sizeof b.boot, "boot-2");
    snprintf(b.data_addr, sizeof b.data_addr, "10.0.0.9");
    b.labels_json = "{\"rack\":\"3\"}";
    b.status = SM_AGENT_STATUS_BUSY;
    assert_ok(sm_store_agent_upsert(f->st, &b, &err));

    sm_agent_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_agents_list(f->st, &rows, &n, &err));
    assert_int_equal(n, 1);
    assert_string_equal(rows[0].name, "h1");
    assert_string_equal(rows[0].boot, "boot-2");
    assert_string_equal(rows[0].data_addr, "10.0.0.9");
    assert_string_equal(rows[0].labels_json, "{\"rack\":\"3\"}");
    assert_string_equal(rows[0].facts_json, "{\"cores\":4}");
    assert_int_equal(rows[0].first_seen_ms, 1000);
    assert_int_equal(rows[0].last_seen_ms, 5000);
    assert_int_equal(rows[0].status, SM_AGENT_STATUS_BUSY);
    sm_store_agents_free(rows, n);

    sm_agent_row c = store_fixture_agent("h1", 6000, "{\"cores\":8}");
    assert_ok(sm_store_agent_upsert(f->st, &c, &err));
    assert_ok(sm_store_agents_list(f->st, &rows, &n, &err));
    assert_string_equal(rows[0].facts_json, "{\"cores\":8}");
    assert_int_equal(rows[0].first_seen_ms, 1000);
    sm_store_agents_free(rows, n);
}

static void test_store_agent_without_facts_reads_back_null_facts(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    sm_agent_row a = store_fixture_agent("h1", 1000, NULL);
    assert_ok(sm_store_agent_upsert(f->st, &a, &err));
    sm_agent_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_agents_list(f->st, &rows, &n, &err));
    assert_int_equal(n, 1);
    assert_null(rows[0].facts_json);
    assert_string_equal(rows[0].labels_json, "{\"rack\":\"2\"}");
    sm_store_agents_free(rows, n);
}

static void test_store_agents_list_is_sorted_by_name(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    const char *names[] = {"charlie", "alpha", "delta", "bravo"};
    for (size_t i = 0; i < 4; i++) {
        sm_agent_row a = store_fixture_agent(names[i], 1000 + (int64_t)i, NULL);
        assert_ok(sm_store_agent_upsert(f->st, &a, &err));
    }
    sm_agent_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_agents_list(f->st, &rows, &n, &err));
    assert_int_equal(n, 4);
    assert_string_equal(rows[0].name, "alpha");
    assert_string_equal(rows[1].name, "bravo");
    assert_string_equal(rows[2].name, "charlie");
    assert_string_equal(rows[3].name, "delta");
    sm_store_agents_free(rows, n);
}

static void test_store_agent_get_reads_one_agent_by_name_or_says_there_is_none(void **state)
{
    fixture *f = *state;
    sm_error err = {0};
    store_fixture_open(f);
    const char *names[] = {"alpha", "bravo"};
    for (size_t i = 0; i < 2; i++) {
        sm_agent_row a = store_fixture_agent(names[i], 1000 + (int64_t)i, NULL);
        assert_ok(sm_store_agent_upsert(f->st, &a, &err));
    }
    sm_agent_row row;
    assert_ok(sm_store_agent_get(f->st, "bravo", &row, &err));
    assert_string_equal(row.name, "bravo");
    assert_int_equal(row.first_seen_ms, 1001);
    sm_agent_row_fini(&row);
    assert_int_equal(sm_store_agent_get(f->st, "charlie", &row, &err), SM_EINVAL);
    assert_string_equal(err.msg, "no agent named charlie");
}

static void test_store_agents_list_of_empty_store_is_empty(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    sm_agent_row sentinel;
    sm_agent_row *rows = &sentinel;
    size_t n = 7;
    assert_ok(sm_store_agents_list(f->st, &rows, &n, &err));
    assert_int_equal(n, 0);
    assert_null(rows);
    sm_store_agents_free(rows, n);
}

static void test_store_agent_set_status_stamps_last_seen_except_when_lost(void **state)
{
    fixture *f = *state;
    sm_error err;
    store_fixture_open(f);
    sm_agent_row a = store_fixture_agent("h1", 1000, NULL);
    assert_ok(sm_store_agent_upsert(f->st, &a, &err));

    assert_ok(sm_store_agent_set_status(f->st, "h1", SM_AGENT_STATUS_BUSY, 2000, &err));
    sm_agent_row *rows = NULL;
    size_t n = 0;
    assert_ok(sm_store_agents_list(f->st, &rows, &n, &err));
    assert_int_equal(rows[0].status, SM_AGENT_STATUS_BUSY);
    assert_int_equal(rows[0].last_seen_ms, 2000);
    sm_store_agents_free(rows, n);

    assert_ok(sm_store_agent_set_status(f->st, "h1", SM_AGENT_LOST, 17000, &err));
    assert_ok(sm_store_agents_list(f->st, &rows, &n, &err));
    assert_int_equal(rows[0].status, SM_AGENT_LOST);
    assert_int_equal(rows[0].last_seen_ms, 2000);
    assert_int_equal(rows[0].first_seen_ms, 1000);
    sm_store_agents_free(rows, n);

    sqlite3 *db = store_fixture_raw_open(f->path);
    char status[16];
    store_fixture_raw_text(db, "SELECT status FROM agents WHERE name = 'h1'", status,
                           sizeof status);
    assert_string_equal(status, "lost");
    sqlite3_close(db);
}

static void test_store_agent_set_status_of_unknown_agent_is_einval(void **state)
{
    fixture *f = *state;
    sm_error err;
    sm_error_clear(&err);
    store_fixture_open(f);
    assert_int_equal(sm_store_agent_set_status(f->st, "nobody", SM_AGENT_LOST, 1, &err), SM_EINVAL);
    assert_string_equal(err.msg, "no agent named nobody");
}

#define T(name)                                                                                    \
    cmocka_unit_test_setup_teardown(name, store_fixture_setup_closed, store_fixture_teardown)

int main(void)
{
    /* Every open of a fresh file logs its migration; the tests check the schema directly. */
    sm_log_level = LOG_WARNING;
    const struct CMUnitTest tests[] = {
        T(test_store_agent_upsert_keeps_first_seen_and_null_facts_keep_old),
        T(test_store_agent_without_facts_reads_back_null_facts),
        T(test_store_agents_list_is_sorted_by_name),
        T(test_store_agent_get_reads_one_agent_by_name_or_says_there_is_none),
        T(test_store_agents_list_of_empty_store_is_empty),
        T(test_store_agent_set_status_stamps_last_seen_except_when_lost),
        T(test_store_agent_set_status_of_unknown_agent_is_einval),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
