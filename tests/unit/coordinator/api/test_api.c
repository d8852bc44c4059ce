/* Unit tests of the coordinator's HTTP routes (sm_api_handle) over a real SQLite store and a
 * real control: each route's methods and statuses, the token on state-changing calls, and the
 * query arguments of a run's table. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/coordinator/api/api_fixture.h"
#include "coordinator/api/api.h"
#include "coordinator/control/control.h"
#include "coordinator/store/store.h"
#include "proto/fingerprint.h"
#include "proto/result.h"

#define JOB_H1   "[{\"host\":\"h1\",\"params\":{\"workload\":\"stream\",\"count\":5}}]"
#define RUN_SPEC "{\"name\":\"r\",\"tests\":[{\"workload\":\"stream\",\"count\":5}]}"

static void test_api_each_route_answers_its_methods_and_405_to_others(void **state)
{
    fixture *f = *state;
    expect(f, "GET", "/healthz", NULL, NULL, NULL, 200, "\"ok\":true");
    expect(f, "POST", "/healthz", NULL, NULL, NULL, 405, "use GET");
    expect(f, "GET", "/api/agents", NULL, NULL, NULL, 200, NULL);
    expect(f, "POST", "/api/agents", NULL, NULL, NULL, 405, "use GET");
    expect(f, "GET", "/api/jobs", NULL, NULL, NULL, 405, "use POST");
    expect(f, "GET", "/api/presets", NULL, NULL, NULL, 200, "seed-tcp-unix");
    expect(f, "POST", "/api/presets", NULL, NULL, NULL, 405, "use GET");
    expect(f, "GET", "/api/runs", NULL, NULL, NULL, 200, NULL);
    expect(f, "PUT", "/api/runs", NULL, NULL, NULL, 405, "use GET or POST");
    expect(f, "POST", "/api/runs/1", NULL, NULL, NULL, 405, "use GET");
    expect(f, "POST", "/api/runs/1/table", NULL, NULL, NULL, 405, "use GET");
    expect(f, "POST", "/api/runs/1/anomalies", NULL, NULL, NULL, 405, "use GET");
    expect(f, "GET", "/api/runs/1/cancel", NULL, NULL, NULL, 405, "use POST");
    expect(f, "POST", "/api/jobs/1", NULL, NULL, NULL, 405, "use GET");
}

static void test_api_unknown_paths_are_404_and_bad_ids_400(void **state)
{
    fixture *f = *state;
    expect(f, "GET", "/", NULL, NULL, NULL, 404, "no such endpoint");
    expect(f, "GET", "/api", NULL, NULL, NULL, 404, "no such endpoint");
    expect(f, "GET", "/api/runs/1/nope", NULL, NULL, NULL, 404, "no such endpoint");
    expect(f, "GET", "/api/runs/x", NULL, NULL, NULL, 400, "\"field\":\"id\"");
    expect(f, "GET", "/api/runs/", NULL, NULL, NULL, 400, "\"field\":\"id\"");
    expect(f, "GET", "/api/jobs/-1", NULL, NULL, NULL, 400, "\"field\":\"id\"");
    expect(f, "GET", "/api/jobs/abc", NULL, NULL, NULL, 400, "\"field\":\"id\"");
    expect(f, "GET", "/api/jobs/999", NULL, NULL, NULL, 404, "no such job");
    expect(f, "GET", "/api/runs/999", NULL, NULL, NULL, 404, NULL);
}

static void test_api_post_jobs_queues_for_a_registered_agent_only(void **state)
{
    fixture *f = *state;
    /* Unknown host: nothing queued, nobody woken. */
    expect(f, "POST", "/api/jobs", NULL, NULL, JOB_H1, 400, "\"field\":\"jobs[0].host\"");
    assert_int_equal(f->queued_calls, 0);
    expect(f, "POST", "/api/jobs", NULL, NULL, "{not json", 400, NULL);
    register_agent(f, "h1");
    expect(f, "POST", "/api/jobs", NULL, NULL, JOB_H1, 201, "{\"jobs\":[\"1\"]}");
    assert_int_equal(f->queued_calls, 1);
    assert_int_equal(f->queued_n, 1);
    assert_string_equal(f->queued_host, "h1");
    expect(f, "GET", "/api/jobs/1", NULL, NULL, NULL, 200, "\"host\":\"h1\"");
    expect(f, "GET", "/api/jobs/1", NULL, NULL, NULL, 200, "\"state\":\"queued\"");
    expect(f, "GET", "/api/agents", NULL, NULL, NULL, 200, "\"h1\"");
}

static void test_api_token_guards_every_state_changing_call_when_set(void **state)
{
    fixture *f = *state;
    register_agent(f, "h1");
    f->api.token = "s3cret";
    static const char need[] = "\"field\":\"Authorization\"";
    expect(f, "POST", "/api/jobs", NULL, NULL, JOB_H1, 401, need);
    expect(f, "POST", "/api/jobs", NULL, "Bearer nope", JOB_H1, 401, need);
    expect(f, "POST", "/api/jobs", NULL, "s3cret", JOB_H1, 401, need);
    expect(f, "POST", "/api/runs", NULL, NULL, RUN_SPEC, 401, need);
    expect(f, "POST", "/api/runs/1/cancel", NULL, "Bearer s3cre", NULL, 401, need);
    assert_int_equal(f->queued_calls, 0);
    /* Reads are the listener's to guard (server.c), not the routes'. */
    expect(f, "GET", "/api/agents", NULL, NULL, NULL, 200, NULL);
    expect(f, "POST", "/api/jobs", NULL, "Bearer s3cret", JOB_H1, 201, NULL);
    assert_int_equal(f->queued_calls, 1);
    expect(f, "POST", "/api/runs", NULL, "Bearer s3cret", RUN_SPEC, 201, "\"run\":");
    expect(f, "POST", "/api/runs/1/cancel", NULL, "Bearer s3cret", NULL, 200, NULL);
    /* No token (the loopback listener): the same calls need none. */
    f->api.token = NULL;
    expect(f, "POST", "/api/jobs", NULL, NULL, JOB_H1, 201, NULL);
}

static void test_api_token_comparison_takes_the_exact_bearer_token_only(void **state)
{
    (void)state;
    assert_true(sm_api_token_ok("s3cret", "Bearer s3cret"));
    assert_false(sm_api_token_ok("s3cret", NULL));
    assert_false(sm_api_token_ok("s3cret", ""));
    assert_false(sm_api_token_ok("s3cret", "s3cret"));
    assert_false(sm_api_token_ok("s3cret", "bearer s3cret"));
    assert_false(sm_api_token_ok("s3cret", "Bearer s3cre"));
    assert_false(sm_api_token_ok("s3cret", "Bearer s3cretX"));
    assert_false(sm_api_token_ok("s3cret", "Bearer "));
}

static void test_api_table_query_arguments_are_parsed(void **state)
{
    fixture *f = *state;
    /* Checked before the run is looked up. */
    expect(f, "GET", "/api/runs/999/table", "format=xml", NULL, NULL, 400, "\"field\":\"format\"");
    expect(f, "GET", "/api/runs/999/table", "format=csvx", NULL, NULL, 400, "\"field\":\"format\"");
    expect(f, "GET", "/api/runs/999/table", "x=1&floor=abc", NULL, NULL, 400,
           "\"field\":\"floor\"");
    expect(f, "GET", "/api/runs/999/table", "floor=12", NULL, NULL, 400, "\"field\":\"floor\"");
    expect(f, "GET", "/api/runs/999/table", "floor=0.2&disturbed=maybe", NULL, NULL, 400,
           "\"field\":\"disturbed\"");
    expect(f, "GET", "/api/runs/999/table", "format=csv&floor=0.2&disturbed=include", NULL, NULL,
           404, "\"field\":\"id\"");
    register_agent(f, "h1");
    expect(f, "POST", "/api/runs", NULL, NULL, RUN_SPEC, 201, "\"run\":");
    response r = call(f, "GET", "/api/runs/1/table", "format=csv", NULL, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.ctype, "text/csv; charset=utf-8");
    free(r.body);
    r = call(f, "GET", "/api/runs/1/table", "disturbed=exclude&format=md", NULL, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.ctype, "text/markdown; charset=utf-8");
    free(r.body);
    r = call(f, "GET", "/api/runs/1/table", NULL, NULL, NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.ctype, "application/json");
    free(r.body);
}

/* Stores agent's fingerprint (lo's qdisc as given) and ties it to the run. */
static void put_fingerprint(fixture *f, uint64_t run, const char *agent, const char *qdisc)
{
    sm_fingerprint fp;
    sm_fp_init(&fp);
    sm_error err = {0};
    assert_int_equal(sm_fp_set(&fp, "if.lo.qdisc", qdisc, &err), 0);
    assert_int_equal(sm_fp_set(&fp, "sysctl.net.ipv4.tcp_autocorking", "1", &err), 0);
    assert_int_equal(sm_fp_set(&fp, "info.hostname", agent, &err), 0);
    char hash[SM_FP_HASH_HEX + 1];
    sm_fp_hash(&fp, hash);
    char *json = sm_fp_encode(&fp, NULL, &err);
    assert_non_null(json);
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_store_fp_put(f->st, agent, hash, json, wall_ms(), NULL, NULL, &err), 0);
    assert_int_equal(sm_store_run_fp_tie(f->st, run, agent, &err), 0);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    free(json);
    sm_fp_fini(&fp);
}

#define RUN_3REPS                                                                                  \
    "{\"name\":\"fp\",\"hosts\":\"all\",\"repetitions\":3,\"warmup\":0,\"parallel\":true,"         \
    "\"tests\":[{\"workload\":\"stream\",\"scope\":\"local\",\"transport\":[\"tcp\",\"unix\"],"    \
    "\"count\":10}]}"

#define H2_QDISC "h2: lo qdisc tbf rate 400Mbit burst 128Kb (fleet: noqueue, 2 of 2 hosts)"

static void test_api_anomalies_and_exports_carry_the_fingerprint_differences(void **state)
{
    fixture *f = *state;
    static const char *const hosts[] = {"h1", "h2", "h3"};
    for (size_t h = 0; h < 3; h++)
        register_agent(f, hosts[h]);
    expect(f, "POST", "/api/runs", NULL, NULL, RUN_3REPS, 201, "\"run\":");
    /* Without fingerprints, h2's flag says nothing more. */
    for (size_t h = 0; h < 3; h++)
        finish_jobs(f, hosts[h], h == 1 ? 30.0 : 100.0);
    response r = call(f, "GET", "/api/runs/1/anomalies", NULL, NULL, NULL);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\"host\":\"h2\""));
    assert_null(strstr(r.body, "differences"));
    free(r.body);

    /* A second run of the same, with fingerprints: h2's flag carries its qdisc. */
    expect(f, "POST", "/api/runs", NULL, NULL, RUN_3REPS, 201, "\"run\":");
    for (size_t h = 0; h < 3; h++)
        put_fingerprint(f, 2, hosts[h], h == 1 ? "tbf rate 400Mbit burst 128Kb" : "noqueue");
    for (size_t h = 0; h < 3; h++)
        finish_jobs(f, hosts[h], h == 1 ? 30.0 : 100.0);
    r = call(f, "GET", "/api/runs/2/anomalies", NULL, NULL, NULL);
    assert_int_equal(r.status, 200);
    if (!strstr(r.body, "\"differences\":[{\"item\":\"if.lo.qdisc\",\"label\":\"lo qdisc\","
                        "\"host_value\":\"tbf rate 400Mbit burst 128Kb\",\"fleet_value\":"
                        "\"noqueue\",\"hosts_with_fleet_value\":2,\"fleet_hosts\":2,\"host\":"
                        "\"h2\"}]"))
        fail_msg("no differences in %s", r.body);
    free(r.body);
    r = call(f, "GET", "/api/runs/2/anomalies", "format=text", NULL, NULL);
    assert_int_equal(r.status, 200);
    /* h2's flags (tcp, unix, and their ratio's when it stands apart too) one after the other,
     * then its difference once, under the last. */
    const char *diff = strstr(r.body, "\n             " H2_QDISC "\n");
    if (diff == NULL || strstr(diff + strlen(H2_QDISC), H2_QDISC) != NULL)
        fail_msg("not one difference line in %s", r.body);
    const char *flag = strstr(r.body, "\n  fleet      h2: "), *last = flag;
    assert_non_null(flag);
    size_t flags = 0;
    for (const char *p = flag; p != NULL && p < diff; p = strstr(p + 1, "\n  fleet      h2: ")) {
        last = p;
        flags++;
    }
    assert_true(flags >= 2);
    assert_ptr_equal(strchr(last + 1, '\n'), diff);
    free(r.body);
    r = call(f, "GET", "/api/runs/2/table", "format=md", NULL, NULL);
    assert_int_equal(r.status, 200);
    if (!strstr(r.body, " [1]**") || !strstr(r.body, "\n[1] " H2_QDISC "\n"))
        fail_msg("no footnote in %s", r.body);
    free(r.body);
    r = call(f, "GET", "/api/runs/2/table", NULL, NULL, NULL);
    assert_non_null(strstr(r.body, "\"differences\":[{\"item\":\"if.lo.qdisc\""));
    free(r.body);
    r = call(f, "GET", "/api/runs/2/table", "format=csv", NULL, NULL);
    assert_null(strstr(r.body, "qdisc"));
    free(r.body);
    /* The baseline (run 1) had no fingerprints: the regression check has nothing to say. */
    r = call(f, "GET", "/api/runs/2/anomalies", "baseline=1", NULL, NULL);
    assert_int_equal(r.status, 200);
    assert_null(strstr(r.body, "\"changes\""));
    free(r.body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_api_each_route_answers_its_methods_and_405_to_others,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_api_unknown_paths_are_404_and_bad_ids_400, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_api_post_jobs_queues_for_a_registered_agent_only,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_api_token_guards_every_state_changing_call_when_set,
                                        setup, teardown),
        cmocka_unit_test(test_api_token_comparison_takes_the_exact_bearer_token_only),
        cmocka_unit_test_setup_teardown(test_api_table_query_arguments_are_parsed, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_api_anomalies_and_exports_carry_the_fingerprint_differences, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
