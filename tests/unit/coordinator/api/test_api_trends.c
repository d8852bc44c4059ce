/* Unit tests of GET /api/trends and GET /api/grid over a real SQLite store and a real control:
 * the points of ended runs, the flag of the run whose analysis flags the host, the grid's
 * verdicts, and a 400 naming each bad parameter. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/coordinator/api/api_fixture.h"

#define SPEC(name)                                                                                 \
    "{\"name\":\"" name "\",\"hosts\":\"all\",\"repetitions\":3,\"warmup\":0,\"parallel\":true,"   \
    "\"tests\":[{\"workload\":\"stream\",\"scope\":\"local\",\"transport\":\"tcp\",\"count\":10}]" \
    "}"
#define TEST   "stream tcp 128 KiB x 10"
#define TEST_Q "test=stream%20tcp%20128%20KiB%20x%2010"

static const char *const hosts[] = {"h1", "h2", "h3"};

/* Run 1: every host at 100 MB/s. Run 2: h3 at 5 MB/s, which the analysis flags. Run 3 is left
 * running. */
static void start_runs(fixture *f)
{
    for (size_t h = 0; h < 3; h++)
        register_agent(f, hosts[h]);
    expect(f, "POST", "/api/runs", NULL, NULL, SPEC("t"), 201, "\"run\":");
    for (size_t h = 0; h < 3; h++)
        finish_jobs(f, hosts[h], 100.0);
    expect(f, "POST", "/api/runs", NULL, NULL, SPEC("t"), 201, "\"run\":");
    finish_jobs(f, "h1", 100.0);
    finish_jobs(f, "h2", 100.0);
    finish_jobs(f, "h3", 5.0);
    expect(f, "POST", "/api/runs", NULL, NULL, SPEC("t"), 201, "\"run\":");
}

static cJSON *get_json(fixture *f, const char *path, const char *query, int status)
{
    response r = call(f, "GET", path, query, NULL, NULL);
    if (r.status != status)
        fail_msg("%s?%s: %d %s", path, query ? query : "", r.status, r.body);
    cJSON *o = cJSON_Parse(r.body);
    free(r.body);
    assert_non_null(o);
    return o;
}

static const char *s(const cJSON *o, const char *k)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static void test_trends_gives_the_ended_runs_points_and_their_flags(void **state)
{
    fixture *f = *state;
    start_runs(f);
    cJSON *o = get_json(f, "/api/trends", "host=h3&" TEST_Q, 200);
    assert_string_equal(s(o, "host"), "h3");
    assert_string_equal(s(o, "test"), TEST);
    assert_string_equal(s(o, "metric"), "throughput_MBps");
    assert_string_equal(s(o, "unit"), "MB/s");
    const cJSON *pts = cJSON_GetObjectItem(o, "points");
    assert_int_equal(cJSON_GetArraySize(pts), 2); /* run 3 is still running */
    const cJSON *p0 = cJSON_GetArrayItem(pts, 0), *p1 = cJSON_GetArrayItem(pts, 1);
    assert_string_equal(s(p0, "run"), "1");
    assert_string_equal(s(p1, "run"), "2");
    assert_string_equal(s(p1, "run_name"), "t");
    assert_true(cJSON_GetObjectItem(p0, "median")->valuedouble == 100);
    assert_true(cJSON_GetObjectItem(p1, "median")->valuedouble == 5);
    assert_true(cJSON_GetObjectItem(p1, "n")->valuedouble == 3);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(p0, "flagged")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(p1, "flagged")));
    assert_true(cJSON_GetObjectItem(p0, "finished_ms")->valuedouble <=
                cJSON_GetObjectItem(p1, "finished_ms")->valuedouble);
    cJSON_Delete(o);

    /* limit=1: the latest */
    o = get_json(f, "/api/trends", "host=h3&" TEST_Q "&limit=1&metric=throughput_MBps", 200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "points")), 1);
    assert_string_equal(s(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "points"), 0), "run"), "2");
    cJSON_Delete(o);
    /* disturbed=include: the same points here, where no sample was disturbed */
    o = get_json(f, "/api/trends", "host=h3&" TEST_Q "&disturbed=include", 200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "points")), 2);
    assert_true(cJSON_IsTrue(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "points"), 1), "flagged")));
    cJSON_Delete(o);
    /* a range before every run */
    o = get_json(f, "/api/trends", "host=h3&" TEST_Q "&from=0&to=1", 200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "points")), 0);
    cJSON_Delete(o);
}

static void test_trends_of_an_unknown_host_or_test_is_a_note(void **state)
{
    fixture *f = *state;
    start_runs(f);
    cJSON *o = get_json(f, "/api/trends", "host=h9&" TEST_Q, 200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "points")), 0);
    assert_string_equal(s(o, "note"),
                        "no ended run has host 'h9'; the hosts they have: h1, h2, h3");
    assert_string_equal(s(o, "unknown"), "host");
    cJSON_Delete(o);
    o = get_json(f, "/api/trends", "host=h1&test=rr%20tcp", 200);
    assert_string_equal(s(o, "note"),
                        "no ended run has test 'rr tcp' for host 'h1'; the tests it has: " TEST);
    assert_string_equal(s(o, "unknown"), "test");
    cJSON_Delete(o);
    /* A cell with points: no note, nothing unknown. */
    o = get_json(f, "/api/trends", "host=h1&" TEST_Q, 200);
    assert_null(cJSON_GetObjectItem(o, "note"));
    assert_null(cJSON_GetObjectItem(o, "unknown"));
    cJSON_Delete(o);
}

static void test_trends_names_each_bad_parameter(void **state)
{
    fixture *f = *state;
    start_runs(f);
    static const struct {
        const char *query, *field;
    } bad[] = {
        {NULL, "host"},
        {TEST_Q, "host"},
        {"host=h1", "test"},
        {"host=h1&test=", "test"},
        {"host=h%zz&" TEST_Q, "host"},
        {"host=h1&" TEST_Q "&limit=0", "limit"},
        {"host=h1&" TEST_Q "&limit=1001", "limit"},
        {"host=h1&" TEST_Q "&limit=ten", "limit"},
        {"host=h1&" TEST_Q "&from=-5", "from"},
        {"host=h1&" TEST_Q "&to=soon", "to"},
        {"host=h1&" TEST_Q "&from=20&to=10", "to"},
        {"host=h1&" TEST_Q "&metric=rtt_p50_us", "metric"},
        {"host=h1&" TEST_Q "&disturbed=all", "disturbed"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cJSON *o = get_json(f, "/api/trends", bad[i].query, 400);
        if (!s(o, "field") || strcmp(s(o, "field"), bad[i].field) != 0)
            fail_msg("%s: field %s, want %s", bad[i].query, s(o, "field"), bad[i].field);
        assert_non_null(s(o, "error"));
        cJSON_Delete(o);
    }
    expect(f, "POST", "/api/trends", "host=h1&" TEST_Q, NULL, "{}", 405, "use GET");
    expect(f, "POST", "/api/grid", NULL, NULL, "{}", 405, "use GET");
}

static const cJSON *cell(const cJSON *g, const char *host)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(g, "cells"))
    {
        if (strcmp(s(c, "host"), host) == 0 && strcmp(s(c, "test"), TEST) == 0)
            return c;
    }
    fail_msg("no cell of %s", host);
    return NULL;
}

static void test_grid_colours_each_host_by_its_latest_ended_run(void **state)
{
    fixture *f = *state;
    cJSON *g = get_json(f, "/api/grid", NULL, 200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(g, "cells")), 0);
    cJSON_Delete(g);
    start_runs(f);
    g = get_json(f, "/api/grid", NULL, 200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(g, "hosts")), 3);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(g, "tests")), 1);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(g, "cells")), 3);
    assert_string_equal(s(cell(g, "h1"), "verdict"), "ok");
    assert_string_equal(s(cell(g, "h1"), "run"), "2");
    assert_string_equal(s(cell(g, "h3"), "verdict"), "flagged");
    assert_string_equal(s(cell(g, "h3"), "run"), "2");
    assert_true(cJSON_GetObjectItem(cell(g, "h3"), "median")->valuedouble == 5);
    assert_string_equal(s(cell(g, "h3"), "unit"), "MB/s");
    cJSON_Delete(g);
}

/* An experiment is a run of its own, but not the host as it is: run 3, ended with every host
 * at 100 MB/s and then recorded as an experiment on run 2, is in neither the trend nor the
 * grid, where h3 stays flagged by run 2. */
static void test_an_experiment_is_no_point_of_a_trend_nor_a_latest_verdict(void **state)
{
    fixture *f = *state;
    start_runs(f);
    for (size_t h = 0; h < 3; h++)
        finish_jobs(f, hosts[h], 100.0);
    cJSON *g = get_json(f, "/api/grid", NULL, 200);
    assert_string_equal(s(cell(g, "h3"), "run"), "3"); /* as any run, before it is one */
    cJSON_Delete(g);
    sm_experiment_row x = {.run_id = 3,
                           .parent_run = 2,
                           .host = "h3",
                           .test = TEST,
                           .plan_json = "[]",
                           .created_ms = 1};
    sm_error err = {0};
    assert_int_equal(sm_store_experiment_insert(f->st, &x, &err), 0);

    g = get_json(f, "/api/grid", NULL, 200);
    assert_string_equal(s(cell(g, "h3"), "run"), "2");
    assert_string_equal(s(cell(g, "h3"), "verdict"), "flagged");
    assert_string_equal(s(cell(g, "h1"), "run"), "2");
    cJSON_Delete(g);
    cJSON *o = get_json(f, "/api/trends", "host=h3&" TEST_Q, 200);
    const cJSON *pts = cJSON_GetObjectItem(o, "points");
    assert_int_equal(cJSON_GetArraySize(pts), 2);
    assert_string_equal(s(cJSON_GetArrayItem(pts, 1), "run"), "2");
    cJSON_Delete(o);
}

/* Two hosts make no fleet: their cells are inconclusive, with the table's reason; a host that
 * regressed against the run before is flagged (a regression needs no fleet), and carries no
 * reason for a judgement not made. */
static void test_grid_flags_a_regression_of_a_two_host_fleet_without_a_why(void **state)
{
    fixture *f = *state;
    register_agent(f, "h1");
    register_agent(f, "h2");
    expect(f, "POST", "/api/runs", NULL, NULL, SPEC("t"), 201, "\"run\":");
    finish_jobs(f, "h1", 100.0);
    finish_jobs(f, "h2", 100.0);
    expect(f, "POST", "/api/runs", NULL, NULL, SPEC("t"), 201, "\"run\":");
    finish_jobs(f, "h1", 100.0);
    finish_jobs(f, "h2", 10.0);
    cJSON *g = get_json(f, "/api/grid", NULL, 200);
    assert_string_equal(s(cell(g, "h1"), "verdict"), "inconclusive");
    assert_non_null(strstr(s(cell(g, "h1"), "why"), "judging a host needs 3"));
    assert_string_equal(s(cell(g, "h2"), "verdict"), "flagged");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cell(g, "h2"), "why")));
    cJSON_Delete(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_trends_gives_the_ended_runs_points_and_their_flags,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_trends_of_an_unknown_host_or_test_is_a_note, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_trends_names_each_bad_parameter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grid_colours_each_host_by_its_latest_ended_run, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_grid_flags_a_regression_of_a_two_host_fleet_without_a_why, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_an_experiment_is_no_point_of_a_trend_nor_a_latest_verdict, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
