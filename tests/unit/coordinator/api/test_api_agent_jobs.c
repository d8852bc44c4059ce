/* Unit tests of a host's latest jobs: the store's query (sm_store_agent_jobs: newest first, a
 * pair job under both its hosts, the limit and its bounds) and its route GET
 * /api/agents/{name}/jobs over a real SQLite store and a real control (the default and a given
 * limit, bad limits, an unknown agent, an agent without jobs). */
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
#include "coordinator/api/api.h"
#include "coordinator/store/store.h"

/* The route's default limit (DEFAULT_LIMIT, in the API's internal header). */
#define DEFAULT_LIMIT 20

#define PARAMS "{\"workload\":\"stream\",\"scope\":\"local\",\"transport\":\"tcp\",\"count\":10}"

/* A run's job on host (peer "" for a local job); returns its id. */
static uint64_t add_job(fixture *f, uint64_t run, const char *host, const char *peer, uint32_t ord)
{
    sm_job_row j;
    memset(&j, 0, sizeof j);
    snprintf(j.host, sizeof j.host, "%s", host);
    snprintf(j.peer, sizeof j.peer, "%s", peer);
    j.params_json = PARAMS;
    j.run_id = run;
    j.ord = ord;
    uint64_t id = 0;
    sm_error err = {0};
    if (sm_store_job_insert_run(f->st, &j, wall_ms(), &id, &err) != 0)
        fail_msg("job insert: %s", err.msg);
    return id;
}

/* One run: h1, h2, h1, a pair h3->h1 (client h3, server h1), h2, h1: jobs 1 to 6. */
static void six_jobs(fixture *f)
{
    sm_error err = {0};
    uint64_t run;
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_store_run_insert(f->st, "six", "{}", 6, wall_ms(), &run, &err), 0);
    static const char *const host[] = {"h1", "h2", "h1", "h3", "h2", "h1"};
    static const char *const peer[] = {"", "", "", "h1", "", ""};
    for (uint32_t i = 0; i < 6; i++)
        assert_int_equal(add_job(f, run, host[i], peer[i], i), i + 1);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
}

static void test_store_agent_jobs_are_newest_first_with_the_pair_jobs_it_served(void **state)
{
    fixture *f = *state;
    six_jobs(f);
    sm_job_row *rows = NULL;
    size_t n = 0;
    sm_error err = {0};
    assert_int_equal(sm_store_agent_jobs(f->st, "h1", 10, &rows, &n, &err), 0);
    assert_int_equal(n, 4);
    static const uint64_t want[] = {6, 4, 3, 1};
    for (size_t i = 0; i < n; i++)
        assert_int_equal(rows[i].id, want[i]);
    /* the pair job is the client's, served by h1 */
    assert_string_equal(rows[1].host, "h3");
    assert_string_equal(rows[1].peer, "h1");
    sm_store_jobs_free(rows, n);

    assert_int_equal(sm_store_agent_jobs(f->st, "h3", 10, &rows, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].id, 4);
    sm_store_jobs_free(rows, n);
}

static void test_store_agent_jobs_stop_at_the_limit_and_refuse_one_out_of_bounds(void **state)
{
    fixture *f = *state;
    six_jobs(f);
    sm_job_row *rows = NULL;
    size_t n = 0;
    sm_error err = {0};
    assert_int_equal(sm_store_agent_jobs(f->st, "h1", 2, &rows, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].id, 6);
    assert_int_equal(rows[1].id, 4);
    sm_store_jobs_free(rows, n);

    rows = NULL;
    n = 99;
    assert_int_equal(sm_store_agent_jobs(f->st, "h1", 0, &rows, &n, &err), SM_EINVAL);
    assert_int_equal(sm_store_agent_jobs(f->st, "h1", SM_STORE_AGENT_JOBS_MAX + 1, &rows, &n, &err),
                     SM_EINVAL);
    assert_null(rows);
    assert_int_equal(n, 99); /* untouched on failure */
    char longname[80];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(sm_store_agent_jobs(f->st, longname, 5, &rows, &n, &err), SM_EINVAL);

    /* a host without a job: none, and no error */
    assert_int_equal(sm_store_agent_jobs(f->st, "h9", SM_STORE_AGENT_JOBS_MAX, &rows, &n, &err), 0);
    assert_int_equal(n, 0);
    sm_store_jobs_free(rows, n);
}

/* GET path?query; checks the status and returns the parsed body (the caller deletes it). */
static cJSON *get(fixture *f, const char *path, const char *query, int status)
{
    response r = call(f, "GET", path, query, NULL, NULL);
    if (r.status != status)
        fail_msg("GET %s?%s: %d, want %d: %s", path, query ? query : "", r.status, status, r.body);
    cJSON *o = cJSON_Parse(r.body);
    if (!o)
        fail_msg("GET %s: not JSON: %s", path, r.body);
    free(r.body);
    return o;
}

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsString(v))
        fail_msg("%s: not a string", k);
    return v->valuestring;
}

static void test_api_agent_jobs_lists_the_hosts_latest_jobs_newest_first(void **state)
{
    fixture *f = *state;
    register_agent(f, "h1");
    register_agent(f, "h2");
    /* 25 jobs queued alone for h1, one for h2, all run to their end */
    for (int i = 0; i < 25; i++)
        expect(f, "POST", "/api/jobs", NULL, NULL, "[{\"host\":\"h1\",\"params\":" PARAMS "}]", 201,
               NULL);
    expect(f, "POST", "/api/jobs", NULL, NULL, "[{\"host\":\"h2\",\"params\":" PARAMS "}]", 201,
           NULL);
    finish_jobs(f, "h1", 120.0);
    finish_jobs(f, "h2", 80.0);

    cJSON *o = get(f, "/api/agents/h1/jobs", NULL, 200);
    assert_string_equal(jstr(o, "agent"), "h1");
    assert_int_equal(cJSON_GetObjectItem(o, "limit")->valueint, DEFAULT_LIMIT);
    const cJSON *jobs = cJSON_GetObjectItem(o, "jobs");
    assert_int_equal(cJSON_GetArraySize(jobs), DEFAULT_LIMIT);
    unsigned long long prev = ~0ull;
    const cJSON *j;
    cJSON_ArrayForEach(j, jobs)
    {
        const unsigned long long id = strtoull(jstr(j, "id"), NULL, 10);
        assert_true(id < prev);
        prev = id;
        assert_string_equal(jstr(j, "host"), "h1");
        assert_string_equal(jstr(j, "state"), "done");
        assert_string_equal(jstr(j, "test"), "stream tcp 128 KiB x 10");
        const cJSON *hl = cJSON_GetObjectItem(j, "headline");
        assert_true(cJSON_GetObjectItem(hl, "value")->valuedouble == 120.0);
    }
    /* job 26 is h2's: h1's newest is 25 */
    assert_string_equal(jstr(cJSON_GetArrayItem(jobs, 0), "id"), "25");

    cJSON *three = get(f, "/api/agents/h1/jobs", "limit=3", 200);
    const cJSON *t = cJSON_GetObjectItem(three, "jobs");
    assert_int_equal(cJSON_GetArraySize(t), 3);
    for (int i = 0; i < 3; i++)
        assert_string_equal(jstr(cJSON_GetArrayItem(t, i), "id"),
                            jstr(cJSON_GetArrayItem(jobs, i), "id"));
    cJSON_Delete(three);
    cJSON_Delete(o);

    o = get(f, "/api/agents/h1/jobs", "limit=100", 200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "jobs")), 25);
    cJSON_Delete(o);
    o = get(f, "/api/agents/h2/jobs", NULL, 200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "jobs")), 1);
    assert_string_equal(jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "jobs"), 0), "id"), "26");
    cJSON_Delete(o);
}

static void test_api_agent_jobs_bad_limits_are_400_and_an_unknown_agent_404(void **state)
{
    fixture *f = *state;
    register_agent(f, "h1");
    static const char *const bad[] = {"limit=0", "limit=101", "limit=ten", "limit=", "limit=-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cJSON *o = get(f, "/api/agents/h1/jobs", bad[i], 400);
        assert_string_equal(jstr(o, "field"), "limit");
        assert_string_equal(jstr(o, "error"), "limit: expected a number from 1 to 100");
        cJSON_Delete(o);
    }
    cJSON *o = get(f, "/api/agents/h7/jobs", NULL, 404);
    assert_string_equal(jstr(o, "error"), "no agent named 'h7' has registered");
    assert_string_equal(jstr(o, "field"), "name");
    cJSON_Delete(o);
    o = get(f, "/api/agents/bad%20name/jobs", NULL, 400);
    assert_string_equal(jstr(o, "field"), "name");
    cJSON_Delete(o);
    /* a registered agent without a job: an empty list */
    o = get(f, "/api/agents/h1/jobs", NULL, 200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "jobs")), 0);
    cJSON_Delete(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_store_agent_jobs_are_newest_first_with_the_pair_jobs_it_served, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_store_agent_jobs_stop_at_the_limit_and_refuse_one_out_of_bounds, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_api_agent_jobs_lists_the_hosts_latest_jobs_newest_first, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_api_agent_jobs_bad_limits_are_400_and_an_unknown_agent_404, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
