/* Unit tests of the trends and grid builder (coordinator/analysis/trends.c) on hand-made table and
 * anomalies JSON, shaped as GET /api/runs/ID/table?format=json and /anomalies give them. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/analysis/trends.h"

#define TCP  "stream tcp 128 KiB x 10"
#define UNIX "stream unix 128 KiB x 10"

/* A hosts table of h1 and h2 with the tcp and unix columns; a cell's n 0 leaves it out, n -1
 * makes it a cell of failed jobs only. */
static char *table(double h1_tcp, int n1, double h2_tcp, int n2)
{
    char *buf = malloc(2048);
    char c1[256] = "", c2[256] = "";
    if (n1 > 0)
        snprintf(c1, sizeof c1,
                 "{\"row\":0,\"column\":0,\"n\":%d,\"median\":%g,\"ci95_low\":%g,"
                 "\"ci95_high\":%g,\"failed\":0,\"disturbed\":0,\"stopped\":\"\"},",
                 n1, h1_tcp, h1_tcp - 1, h1_tcp + 1);
    if (n2 > 0)
        snprintf(c2, sizeof c2,
                 "{\"row\":1,\"column\":0,\"n\":%d,\"median\":%g,\"ci95_low\":%g,"
                 "\"ci95_high\":%g,\"failed\":0,\"disturbed\":0,\"stopped\":\"max\"},",
                 n2, h2_tcp, h2_tcp - 1, h2_tcp + 1);
    else if (n2 < 0)
        snprintf(c2, sizeof c2,
                 "{\"row\":1,\"column\":0,\"n\":0,\"median\":null,\"failed\":2,\"disturbed\":0},");
    snprintf(buf, 2048,
             "{\"version\":1,\"pairs\":false,\"rows\":[\"h1\",\"h2\"],\"columns\":["
             "{\"label\":\"" TCP "\",\"metric\":\"throughput_MBps\",\"unit\":\"MB/s\"},"
             "{\"label\":\"" UNIX "\",\"metric\":\"throughput_MBps\",\"unit\":\"MB/s\"}],"
             "\"ratio_columns\":[],\"cells\":[%s%s"
             "{\"row\":0,\"column\":1,\"n\":3,\"median\":900,\"ci95_low\":899,\"ci95_high\":901,"
             "\"failed\":0,\"disturbed\":0}],\"ratios\":[],\"flags\":[]}",
             c1, c2);
    return buf;
}

#define FLAG_H2_TCP                                                                                \
    "{\"version\":1,\"anomalies\":[{\"kind\":\"fleet\",\"host\":\"h2\",\"role\":\"\","             \
    "\"test\":\"" TCP "\",\"metric\":\"throughput_MBps\"}]}"
#define NO_FLAGS "{\"version\":1,\"anomalies\":[]}"

typedef struct runs3 {
    char *t[3];
    sm_trend_run r[3];
} runs3;

/* Runs 1..3 finished at 1000, 2000, 3000 ms; h2's tcp cell flagged in run 2; run 3 has no h2
 * tcp cell. */
static void runs3_init(runs3 *x)
{
    x->t[0] = table(100, 3, 50, 3);
    x->t[1] = table(110, 3, 40, 3);
    x->t[2] = table(120, 5, 0, 0);
    const char *an[3] = {NO_FLAGS, FLAG_H2_TCP, NO_FLAGS};
    static const char *const names[3] = {"n1", "n2", "n3"};
    for (int i = 0; i < 3; i++)
        x->r[i] = (sm_trend_run){(uint64_t)i + 1, names[i], 1000 * (i + 1), {x->t[i], NULL}, an[i]};
}

static void runs3_fini(runs3 *x)
{
    for (int i = 0; i < 3; i++)
        free(x->t[i]);
}

static sm_trend_query query(const char *host, const char *test)
{
    return (sm_trend_query){host, test, NULL, 0, INT64_MAX, SM_TRENDS_LIMIT_DEFAULT};
}

/* Parses the trend of q, which must build. */
static cJSON *trend(const sm_trend_query *q, const sm_trend_run *r, size_t n)
{
    char *json = NULL;
    sm_error err = {0};
    assert_int_equal(sm_trends_json(q, r, n, &json, &err), 0);
    cJSON *o = cJSON_Parse(json);
    assert_non_null(o);
    free(json);
    return o;
}

static const cJSON *points(const cJSON *o)
{
    return cJSON_GetObjectItemCaseSensitive(o, "points");
}

static double pnum(const cJSON *o, int i, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(points(o), i), k)->valuedouble;
}

static const char *pstr(const cJSON *o, int i, const char *k)
{
    return cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(points(o), i), k));
}

static void test_trend_lists_each_runs_median_oldest_first(void **state)
{
    (void)state;
    runs3 x;
    runs3_init(&x);
    sm_trend_query q = query("h1", TCP);
    cJSON *o = trend(&q, x.r, 3);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "metric")), "throughput_MBps");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "unit")), "MB/s");
    assert_int_equal(cJSON_GetArraySize(points(o)), 3);
    for (int i = 0; i < 3; i++) {
        char id[4];
        snprintf(id, sizeof id, "%d", i + 1);
        assert_string_equal(pstr(o, i, "run"), id);
        assert_true(pnum(o, i, "median") == 100 + 10 * i);
        assert_true(pnum(o, i, "ci_lo") == 99 + 10 * i);
        assert_true(pnum(o, i, "ci_hi") == 101 + 10 * i);
        assert_true(pnum(o, i, "finished_ms") == 1000 * (i + 1));
    }
    assert_true(pnum(o, 2, "n") == 5);
    assert_string_equal(pstr(o, 1, "run_name"), "n2");
    assert_null(cJSON_GetObjectItem(o, "note"));
    assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(o, "rule")), "flagged"));
    cJSON_Delete(o);
    runs3_fini(&x);
}

static void test_trend_keeps_runs_finished_between_from_and_to(void **state)
{
    (void)state;
    runs3 x;
    runs3_init(&x);
    sm_trend_query q = query("h1", TCP);
    q.from_ms = 2000;
    q.to_ms = 3000;
    cJSON *o = trend(&q, x.r, 3);
    assert_int_equal(cJSON_GetArraySize(points(o)), 2);
    assert_string_equal(pstr(o, 0, "run"), "2");
    assert_string_equal(pstr(o, 1, "run"), "3");
    cJSON_Delete(o);
    q.from_ms = 3001;
    q.to_ms = 5000;
    o = trend(&q, x.r, 3);
    assert_int_equal(cJSON_GetArraySize(points(o)), 0);
    assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(o, "note")),
                           "none of the 3 ended runs with this cell"));
    cJSON_Delete(o);
    runs3_fini(&x);
}

static void test_trend_limit_keeps_the_latest_points(void **state)
{
    (void)state;
    runs3 x;
    runs3_init(&x);
    sm_trend_query q = query("h1", TCP);
    q.limit = 2;
    cJSON *o = trend(&q, x.r, 3);
    assert_int_equal(cJSON_GetArraySize(points(o)), 2);
    assert_string_equal(pstr(o, 0, "run"), "2");
    assert_string_equal(pstr(o, 1, "run"), "3");
    cJSON_Delete(o);
    runs3_fini(&x);
}

static void test_trend_skips_a_run_without_the_cell_and_flags_the_flagged_run(void **state)
{
    (void)state;
    runs3 x;
    runs3_init(&x);
    sm_trend_query q = query("h2", TCP);
    cJSON *o = trend(&q, x.r, 3);
    assert_int_equal(cJSON_GetArraySize(points(o)), 2);
    assert_string_equal(pstr(o, 0, "run"), "1");
    assert_string_equal(pstr(o, 1, "run"), "2");
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(points(o), 0), "flagged")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(points(o), 1), "flagged")));
    assert_string_equal(pstr(o, 1, "stopped"), "max");
    cJSON_Delete(o);
    /* h1's tcp cell is not flagged by h2's anomaly */
    q = query("h1", TCP);
    o = trend(&q, x.r, 3);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(points(o), 1), "flagged")));
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(points(o), 1), "stopped"));
    cJSON_Delete(o);
    runs3_fini(&x);
}

static void test_trend_of_an_unknown_host_or_test_says_what_there_is(void **state)
{
    (void)state;
    runs3 x;
    runs3_init(&x);
    sm_trend_query q = query("h9", TCP);
    cJSON *o = trend(&q, x.r, 3);
    assert_int_equal(cJSON_GetArraySize(points(o)), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "note")),
                        "no ended run has host 'h9'; the hosts they have: h1, h2");
    /* the test is known: its unit too */
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "unit")), "MB/s");
    cJSON_Delete(o);
    /* runs without a pair table (the API asks for those for a pair row) */
    const sm_trend_run bare = {5, "b", 10, {NULL, NULL}, NULL};
    q = query("h1->h2", TCP);
    o = trend(&q, &bare, 1);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "note")),
                        "no ended run has host 'h1->h2', nor any client->server row");
    cJSON_Delete(o);
    q = query("h1", TCP);
    o = trend(&q, NULL, 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "note")),
                        "no ended run has host 'h1', nor any host row");
    cJSON_Delete(o);
    q = query("h2", "rr tcp 1 B");
    o = trend(&q, x.r, 3);
    assert_int_equal(cJSON_GetArraySize(points(o)), 0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "metric")));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "note")),
                        "no ended run has test 'rr tcp 1 B' for host 'h2'; the tests it has: " TCP);
    cJSON_Delete(o);
    runs3_fini(&x);
}

/* Runs that have the cell with every job set aside or failed are not "no run has it". */
static void test_trend_of_a_cell_without_a_clean_sample_says_so(void **state)
{
    (void)state;
    runs3 x;
    runs3_init(&x);
    for (int i = 0; i < 2; i++) {
        free(x.t[i]);
        x.t[i] = table(100, 3, 0, -1); /* h2's tcp cell: 2 failed jobs */
    }
    char *d = strstr(x.t[1], "\"failed\":2,\"disturbed\":0");
    assert_non_null(d);
    memcpy(d, "\"failed\":0,\"disturbed\":3", strlen("\"failed\":0,\"disturbed\":3"));
    x.r[0].tables[0] = x.t[0];
    x.r[1].tables[0] = x.t[1];
    sm_trend_query q = query("h2", TCP);
    cJSON *o = trend(&q, x.r, 3);
    assert_int_equal(cJSON_GetArraySize(points(o)), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "note")),
                        "2 ended runs have test '" TCP "' for host 'h2', none with a clean "
                        "sample: 3 jobs set aside as disturbed, 2 failed; disturbed=include "
                        "counts the disturbed ones");
    cJSON_Delete(o);
    /* one run: the words agree with the count */
    o = trend(&q, x.r + 1, 1);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "note")),
                        "1 ended run has test '" TCP "' for host 'h2', none with a clean "
                        "sample: 3 jobs set aside as disturbed, 0 failed; disturbed=include "
                        "counts the disturbed ones");
    cJSON_Delete(o);
    /* failed jobs only: nothing for disturbed=include to add */
    o = trend(&q, x.r, 1);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(o, "note")),
                        "1 ended run has test '" TCP "' for host 'h2', none with a clean "
                        "sample: 0 jobs set aside as disturbed, 2 failed");
    cJSON_Delete(o);
    runs3_fini(&x);
}

static void test_trend_refuses_a_metric_the_test_does_not_have(void **state)
{
    (void)state;
    runs3 x;
    runs3_init(&x);
    sm_trend_query q = query("h1", TCP);
    q.metric = "rtt_p50_us";
    char *json = NULL;
    sm_error err = {0};
    assert_int_equal(sm_trends_json(&q, x.r, 3, &json, &err), SM_EINVAL);
    assert_null(json);
    assert_string_equal(err.msg, "metric: test '" TCP "' has no metric 'rtt_p50_us'; its metrics: "
                                 "throughput_MBps");
    q.metric = "throughput_MBps";
    cJSON *o = trend(&q, x.r, 3);
    assert_int_equal(cJSON_GetArraySize(points(o)), 3);
    cJSON_Delete(o);
    runs3_fini(&x);
}

static void test_trend_of_a_pair_row_is_flagged_by_its_slow_server(void **state)
{
    (void)state;
    const char *t = "{\"pairs\":true,\"rows\":[\"h1->h2\",\"h2->h1\"],\"columns\":[{\"label\":"
                    "\"stream tcp 1 MiB\",\"metric\":\"throughput_MBps\",\"unit\":\"MB/s\"}],"
                    "\"cells\":[{\"row\":0,\"column\":0,\"n\":3,\"median\":7},{\"row\":1,"
                    "\"column\":0,\"n\":3,\"median\":9}]}";
    const char *an = "{\"anomalies\":[{\"kind\":\"slow-host\",\"host\":\"h2\",\"role\":"
                     "\"server\",\"test\":\"stream tcp 1 MiB\",\"metric\":\"throughput_MBps\"}]}";
    sm_trend_run r = {4, "p", 10, {t, NULL}, an};
    sm_trend_query q = query("h1->h2", "stream tcp 1 MiB");
    cJSON *o = trend(&q, &r, 1);
    assert_true(pnum(o, 0, "median") == 7);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(points(o), 0), "flagged")));
    cJSON_Delete(o);
    q = query("h2->h1", "stream tcp 1 MiB");
    o = trend(&q, &r, 1);
    assert_true(pnum(o, 0, "median") == 9);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(points(o), 0), "flagged")));
    cJSON_Delete(o);
}

/* The grid cell of host and test. */
static const cJSON *grid_cell(const cJSON *g, const char *host, const char *test)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(g, "cells"))
    {
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "host")), host) == 0 &&
            strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "test")), test) == 0)
            return c;
    }
    fail_msg("no grid cell %s %s", host, test);
    return NULL;
}

static const char *gstr(const cJSON *c, const char *k)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(c, k));
}

static void test_grid_gives_each_cell_its_latest_runs_verdict(void **state)
{
    (void)state;
    runs3 x;
    runs3_init(&x);
    /* a fourth run where h2's tcp jobs only failed, and a pair table with one row */
    char *t4 = table(130, 3, 0, -1);
    const char *pairs = "{\"pairs\":true,\"rows\":[\"h1->h2\"],\"columns\":[{\"label\":\"stream "
                        "tcp 1 MiB\",\"metric\":\"throughput_MBps\",\"unit\":\"MB/s\"}],\"cells\":"
                        "[{\"row\":0,\"column\":0,\"n\":3,\"median\":7}]}";
    sm_trend_run r[4] = {x.r[0], x.r[1], x.r[2], {9, "n4", 4000, {t4, pairs}, NO_FLAGS}};
    char *json = sm_grid_json(r, 4);
    assert_non_null(json);
    cJSON *g = cJSON_Parse(json);
    free(json);
    const cJSON *hosts = cJSON_GetObjectItem(g, "hosts"), *tests = cJSON_GetObjectItem(g, "tests");
    assert_int_equal(cJSON_GetArraySize(hosts), 3);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(hosts, 0)), "h1");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetArrayItem(hosts, 2)), "h1->h2");
    assert_int_equal(cJSON_GetArraySize(tests), 3);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(g, "cells")), 9);

    const cJSON *c = grid_cell(g, "h1", TCP);
    assert_string_equal(gstr(c, "run"), "9");
    assert_string_equal(gstr(c, "verdict"), "ok");
    assert_true(cJSON_GetObjectItem(c, "median")->valuedouble == 130);
    assert_string_equal(gstr(c, "unit"), "MB/s");
    c = grid_cell(g, "h2", TCP);
    assert_string_equal(gstr(c, "run"), "9");
    assert_string_equal(gstr(c, "verdict"), "failed");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(c, "median")));
    /* the fleet of a run whose h2 only failed is h1 alone */
    assert_true(cJSON_GetObjectItem(c, "fleet_median")->valuedouble == 130);
    assert_int_equal(cJSON_GetObjectItem(c, "fleet_rows")->valueint, 1);
    c = grid_cell(g, "h2", UNIX);
    assert_string_equal(gstr(c, "verdict"), "no data");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(c, "run")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(c, "fleet_median")));
    assert_int_equal(cJSON_GetObjectItem(c, "fleet_rows")->valueint, 0);
    c = grid_cell(g, "h1", UNIX);
    assert_true(cJSON_GetObjectItem(c, "fleet_median")->valuedouble == 900);
    c = grid_cell(g, "h1->h2", "stream tcp 1 MiB");
    assert_string_equal(gstr(c, "verdict"), "ok");
    cJSON_Delete(g);

    /* without run 4, h2's tcp cell comes from run 2, which flags it */
    json = sm_grid_json(r, 2);
    g = cJSON_Parse(json);
    free(json);
    c = grid_cell(g, "h2", TCP);
    assert_string_equal(gstr(c, "run"), "2");
    assert_string_equal(gstr(c, "verdict"), "flagged");
    /* the fleet it stands against: run 2's h1 110 and h2 40 */
    assert_true(cJSON_GetObjectItem(c, "median")->valuedouble == 40);
    assert_true(cJSON_GetObjectItem(c, "fleet_median")->valuedouble == 75);
    assert_int_equal(cJSON_GetObjectItem(c, "fleet_rows")->valueint, 2);
    assert_string_equal(gstr(grid_cell(g, "h1", TCP), "verdict"), "ok");
    cJSON_Delete(g);
    free(t4);
    runs3_fini(&x);
}

static void test_grid_of_no_runs_is_empty(void **state)
{
    (void)state;
    char *json = sm_grid_json(NULL, 0);
    assert_non_null(json);
    assert_non_null(strstr(json, "{\"hosts\":[],\"tests\":[],\"cells\":[],\"rule\":"));
    free(json);
}

static void test_cells_without_a_valid_row_or_column_are_skipped(void **state)
{
    (void)state;
    const char *t = "{\"rows\":[\"h1\"],\"columns\":[{\"label\":\"" TCP "\",\"metric\":\"m\","
                    "\"unit\":\"u\"}],\"cells\":[{\"column\":0,\"n\":3,\"median\":1},{\"row\":-1,"
                    "\"column\":0,\"n\":3,\"median\":2},{\"row\":0,\"column\":1e300,\"n\":3,"
                    "\"median\":3},{\"row\":\"0\",\"column\":0,\"n\":3,\"median\":4}]}";
    sm_trend_run r = {1, "x", 1, {t, NULL}, "not json"};
    sm_trend_query q = query("h1", TCP);
    cJSON *o = trend(&q, &r, 1);
    assert_int_equal(cJSON_GetArraySize(points(o)), 0);
    cJSON_Delete(o);
    char *json = sm_grid_json(&r, 1);
    assert_non_null(strstr(json, "\"hosts\":[],\"tests\":[],\"cells\":[]"));
    free(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trend_lists_each_runs_median_oldest_first),
        cmocka_unit_test(test_trend_keeps_runs_finished_between_from_and_to),
        cmocka_unit_test(test_trend_limit_keeps_the_latest_points),
        cmocka_unit_test(test_trend_skips_a_run_without_the_cell_and_flags_the_flagged_run),
        cmocka_unit_test(test_trend_of_an_unknown_host_or_test_says_what_there_is),
        cmocka_unit_test(test_trend_of_a_cell_without_a_clean_sample_says_so),
        cmocka_unit_test(test_trend_refuses_a_metric_the_test_does_not_have),
        cmocka_unit_test(test_trend_of_a_pair_row_is_flagged_by_its_slow_server),
        cmocka_unit_test(test_grid_gives_each_cell_its_latest_runs_verdict),
        cmocka_unit_test(test_grid_of_no_runs_is_empty),
        cmocka_unit_test(test_cells_without_a_valid_row_or_column_are_skipped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
