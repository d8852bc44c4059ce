/* Unit tests of the sockmatrix CLI's API decoders: each reads what coordinator/schema/apijson.c
 * writes, and refuses what it cannot read. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coordinator/schema/apijson.h"
#include "coordinator/cli/apiview.h"
#include "coordinator/model/spec.h"
#include "tests/unit/coordinator/cli/cli_fixture.h"

/* ---- decoders: each reads what coordinator/schema/apijson.c writes ---- */

static void assert_decode_fails(int rc, const sm_error *err, const char *needle)
{
    assert_true(rc == SM_EPARSE || rc == SM_EINVAL);
    assert_int_equal(err->code, rc);
    cli_fixture_assert_msg_has(err, needle);
}

static void test_apiview_run_reads_the_coordinators_run_with_its_cells(void **state)
{
    (void)state;
    sm_api_run r = {7, "seed-tcp-unix", "running", "", 36, 12, 1, 1700000000123,
                    0, false,           NULL,      0,  3};
    sm_api_cell cells[2] = {
        {0, "h1", "",
         "{\"workload\":\"stream\",\"transport\":\"tcp\",\"nodelay\":true,"
         "\"msg_size\":128}",
         12, 4, 2, 5, 1},
        {1, "h2", NULL, NULL, 12, 12, 0, 0, 0},
    };
    char *json = sm_api_run_encode(&r, cells, 2);
    assert_non_null(json);
    /* An experiment's run names the run it explains. */
    assert_non_null(strstr(json, "\"explains\":\"3\""));
    sm_apiview_run run;
    sm_apiview_cell *c = NULL;
    size_t n = 0;
    sm_error err = {0};
    assert_int_equal(sm_apiview_run_decode(json, strlen(json), &run, &c, &n, &err), 0);
    assert_int_equal(run.id, 7);
    assert_string_equal(run.name, "seed-tcp-unix");
    assert_string_equal(run.state, "running");
    assert_string_equal(run.reason, "");
    assert_true(run.parallel);
    assert_string_equal(run.parallel_note, "");
    assert_int_equal(run.done, 12);
    assert_int_equal(run.failed, 1);
    assert_int_equal(run.total, 36);
    assert_int_equal(run.created_ms, 1700000000123);
    assert_int_equal(run.finished_ms, 0);
    assert_int_equal(n, 2);
    assert_int_equal(c[0].index, 0);
    assert_string_equal(c[0].host, "h1");
    assert_string_equal(c[0].peer, "");
    /* The coordinator's name for the test, as the run's table columns have it. */
    assert_string_equal(c[0].test, "stream tcp+nodelay 128 B x 2048");
    assert_int_equal(c[0].jobs, 12);
    assert_int_equal(c[0].queued, 4);
    assert_int_equal(c[0].active, 2);
    assert_int_equal(c[0].done, 5);
    assert_int_equal(c[0].failed, 1);
    assert_string_equal(c[1].host, "h2");
    assert_string_equal(c[1].test, ""); /* params null: shown empty, not fatal */
    assert_int_equal(c[1].queued, 12);
    free(c);

    /* Without cells: the run alone, the cells list not even needed. */
    memset(&run, 0, sizeof run);
    assert_int_equal(sm_apiview_run_decode(json, strlen(json), &run, NULL, NULL, &err), 0);
    assert_int_equal(run.id, 7);
    free(json);
}

static void test_apiview_run_rejects_what_it_cannot_read(void **state)
{
    (void)state;
    static const struct {
        const char *json, *needle;
    } cases[] = {
        {"", "invalid JSON"},
        {"[]", "expected a JSON object"},
        {"{\"id\":\"7\"} x", "junk after"},
        {"{\"name\":\"r\",\"state\":\"done\",\"progress\":{\"done\":1,\"failed\":0,\"total\":1},"
         "\"created_ms\":1,\"finished_ms\":2}",
         "run: id"},
        {"{\"id\":\"seven\",\"name\":\"r\",\"state\":\"done\"}", "'seven' is not an unsigned"},
        {"{\"id\":\"7\",\"name\":3,\"state\":\"done\"}", "run: name: expected a string"},
        {"{\"id\":\"7\",\"name\":\"r\",\"state\":\"done\",\"created_ms\":1,\"finished_ms\":2}",
         "run: progress: expected an object"},
        {"{\"id\":\"7\",\"name\":\"r\",\"state\":\"done\",\"progress\":{\"done\":\"1\","
         "\"failed\":0,\"total\":1},\"created_ms\":1,\"finished_ms\":2}",
         "run.progress: done"},
        {"{\"id\":\"7\",\"name\":\"r\",\"state\":\"done\",\"progress\":{\"done\":-1,"
         "\"failed\":0,\"total\":1},\"created_ms\":1,\"finished_ms\":2}",
         "run.progress: done"},
        {"{\"id\":\"7\",\"name\":\"r\",\"state\":\"done\",\"progress\":{\"done\":1,"
         "\"failed\":0,\"total\":4294967296},\"created_ms\":1,\"finished_ms\":2}",
         "above the maximum"},
        {"{\"id\":\"7\",\"name\":\"r\",\"state\":\"a-state-name-far-too-long\",\"progress\":"
         "{\"done\":1,\"failed\":0,\"total\":1},\"created_ms\":1,\"finished_ms\":2}",
         "run: state: 25 bytes, longer than 15"},
        {"{\"id\":\"7\",\"name\":\"r\",\"state\":\"done\",\"progress\":{\"done\":1,"
         "\"failed\":0,\"total\":1},\"created_ms\":1.5,\"finished_ms\":2}",
         "run: created_ms"},
        {"{\"id\":\"7\",\"name\":\"r\",\"state\":\"done\",\"progress\":{\"done\":1,"
         "\"failed\":0,\"total\":1},\"created_ms\":1,\"finished_ms\":2}",
         "cells: expected a list"},
        {"{\"id\":\"7\",\"name\":\"r\",\"state\":\"done\",\"progress\":{\"done\":1,"
         "\"failed\":0,\"total\":1},\"created_ms\":1,\"finished_ms\":2,\"cells\":[{\"index\":0,"
         "\"host\":\"h1\",\"jobs\":1,\"queued\":0,\"active\":0,\"done\":1}]}",
         "cells[0]: failed"},
        {"{\"id\":\"7\",\"name\":\"r\",\"state\":\"done\",\"progress\":{\"done\":1,"
         "\"failed\":0,\"total\":1},\"created_ms\":1,\"finished_ms\":2,\"cells\":[7]}",
         "cells[0]: expected an object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sm_apiview_run run;
        memset(&run, 0x5A, sizeof run);
        sm_apiview_cell *c = (sm_apiview_cell *)&run; /* must stay untouched on failure */
        size_t n = 99;
        sm_error err = {0};
        int rc = sm_apiview_run_decode(cases[i].json, strlen(cases[i].json), &run, &c, &n, &err);
        assert_decode_fails(rc, &err, cases[i].needle);
        assert_ptr_equal(c, (sm_apiview_cell *)&run);
        assert_int_equal(n, 99);
        assert_int_equal(run.name[0], 0x5A);
    }
}

static void test_apiview_run_shortens_a_long_reason_and_keeps_utf8_whole(void **state)
{
    (void)state;
    char reason[2000];
    /* "x" then "é"s of two bytes each, so that the cut falls inside one and must back off. */
    reason[0] = 'x';
    for (size_t i = 1; i + 2 < sizeof reason; i += 2)
        memcpy(reason + i, "\xc3\xa9", 2);
    reason[sizeof reason - 1] = '\0';
    sm_api_run r = {3, "r", "failed", reason, 1, 0, 1, 1, 2, false, NULL, 0, 0};
    char *json = sm_api_runs_encode(&r, 1);
    sm_apiview_run *runs = NULL;
    size_t n = 0;
    sm_error err = {0};
    assert_int_equal(sm_apiview_runs_decode(json, strlen(json), &runs, &n, &err), 0);
    free(json);
    assert_int_equal(n, 1);
    size_t len = strlen(runs[0].reason);
    assert_true(len < sizeof runs[0].reason);
    assert_string_equal(runs[0].reason + len - 3, "...");
    assert_int_equal(len, sizeof runs[0].reason - 2); /* one byte short: the é stayed whole */
    assert_int_equal((len - 3 - 1) % 2, 0);
    assert_string_equal(runs[0].state, "failed");
    free(runs);
}

static void test_apiview_runs_reads_a_list_and_an_empty_one(void **state)
{
    (void)state;
    sm_api_run r[2] = {{9, "quick", "done", "", 6, 6, 0, 10, 20, true,
                        "h1, h2 share one machine (boot id 4af93bb9)", 0, 0},
                       {8, "full", "cancelled", "cancelled", 60, 3, 2, 5, 9, false,
                        "h1, h2 share one machine", 0, 0}};
    char *json = sm_api_runs_encode(r, 2);
    sm_apiview_run *runs = NULL;
    size_t n = 0;
    sm_error err = {0};
    assert_int_equal(sm_apiview_runs_decode(json, strlen(json), &runs, &n, &err), 0);
    free(json);
    assert_int_equal(n, 2);
    assert_int_equal(runs[0].id, 9);
    assert_string_equal(runs[1].state, "cancelled");
    assert_string_equal(runs[1].reason, "cancelled");
    assert_int_equal(runs[1].failed, 2);
    assert_int_equal(runs[1].finished_ms, 9);
    /* One at a time and why; side by side with the warning. */
    assert_false(runs[0].parallel);
    assert_string_equal(runs[0].parallel_note, "h1, h2 share one machine (boot id 4af93bb9)");
    assert_true(runs[1].parallel);
    assert_string_equal(runs[1].parallel_note, "h1, h2 share one machine");
    free(runs);

    /* A coordinator before these fields: side by side, nothing to say. */
    static const char old[] = "{\"runs\":[{\"id\":\"3\",\"name\":\"r\",\"state\":\"done\","
                              "\"reason\":\"\",\"progress\":{\"done\":1,\"failed\":0,"
                              "\"total\":1},\"created_ms\":1,\"finished_ms\":2}]}";
    assert_int_equal(sm_apiview_runs_decode(old, strlen(old), &runs, &n, &err), 0);
    assert_true(runs[0].parallel);
    assert_string_equal(runs[0].parallel_note, "");
    free(runs);

    json = sm_api_runs_encode(NULL, 0);
    runs = (sm_apiview_run *)&n;
    assert_int_equal(sm_apiview_runs_decode(json, strlen(json), &runs, &n, &err), 0);
    free(json);
    assert_int_equal(n, 0);
    assert_null(runs);

    static const char *const bad[] = {"{}", "{\"runs\":{}}", "{\"runs\":[1]}",
                                      "{\"runs\":[{\"id\":\"1\"}]}"};
    static const char *const needle[] = {"runs: expected a list", "runs: expected a list",
                                         "runs[0]: expected an object", "runs[0]: name"};
    for (size_t i = 0; i < 4; i++) {
        assert_decode_fails(sm_apiview_runs_decode(bad[i], strlen(bad[i]), &runs, &n, &err), &err,
                            needle[i]);
    }
}

static void test_apiview_agents_reads_facts_labels_and_an_agent_without_facts(void **state)
{
    (void)state;
    sm_api_agent a[2] = {
        {"h1", "0123456789abcdef0123456789abcdef", "127.0.0.1", "online",
         "{\"rack\":\"1\",\"role\":\"test\"}",
         "{\"hostname\":\"box\",\"kernel\":\"6.1.0-13-amd64\",\"cpu_model\":\"Xeon\","
         "\"cores\":8,\"mem_bytes\":17179869184,\"congestion\":\"cubic\"}",
         1000, 1700000000000, 0},
        {"h2", "b", "127.0.0.2", "lost", NULL, NULL, 5, 6, 3},
    };
    char *json = sm_api_agents(a, 2);
    sm_apiview_agent *v = NULL;
    size_t n = 0;
    sm_error err = {0};
    assert_int_equal(sm_apiview_agents_decode(json, strlen(json), &v, &n, &err), 0);
    free(json);
    assert_int_equal(n, 2);
    assert_string_equal(v[0].name, "h1");
    assert_string_equal(v[0].status, "online");
    assert_string_equal(v[0].kernel, "6.1.0-13-amd64");
    assert_string_equal(v[0].cpu_model, "Xeon");
    assert_int_equal(v[0].cores, 8);
    assert_int_equal(v[0].mem_bytes, 17179869184ull);
    assert_int_equal(v[0].last_seen_ms, 1700000000000);
    assert_string_equal(v[0].labels, "rack=1,role=test");
    assert_string_equal(v[1].status, "lost");
    assert_string_equal(v[1].kernel, "");
    assert_int_equal(v[1].cores, 0);
    assert_int_equal(v[1].mem_bytes, 0);
    assert_string_equal(v[1].labels, "");
    free(v);
}

static void test_apiview_agents_rejects_bad_facts_and_labels(void **state)
{
    (void)state;
    static const struct {
        const char *json, *needle;
    } cases[] = {
        {"{\"agents\":[{\"status\":\"online\",\"last_seen_ms\":1}]}", "agents[0]: name"},
        {"{\"agents\":[{\"name\":\"h1\",\"status\":\"online\"}]}", "agents[0]: last_seen_ms"},
        {"{\"agents\":[{\"name\":\"h1\",\"status\":\"online\",\"last_seen_ms\":1,"
         "\"labels\":[\"a\"]}]}",
         "agents[0]: labels: expected an object"},
        {"{\"agents\":[{\"name\":\"h1\",\"status\":\"online\",\"last_seen_ms\":1,"
         "\"labels\":{\"rack\":2}}]}",
         "agents[0]: labels: rack: expected a string"},
        {"{\"agents\":[{\"name\":\"h1\",\"status\":\"online\",\"last_seen_ms\":1,"
         "\"facts\":\"linux\"}]}",
         "agents[0]: facts: expected an object"},
        {"{\"agents\":[{\"name\":\"h1\",\"status\":\"online\",\"last_seen_ms\":1,"
         "\"facts\":{\"kernel\":\"6\",\"cores\":-2,\"mem_bytes\":1}}]}",
         "agents[0].facts: cores"},
        {"{\"agents\":[{\"name\":\"h1\",\"status\":\"online\",\"last_seen_ms\":1,"
         "\"facts\":{\"kernel\":\"6\",\"cores\":2}}]}",
         "agents[0].facts: mem_bytes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sm_apiview_agent *v = NULL;
        size_t n = 0;
        sm_error err = {0};
        int rc = sm_apiview_agents_decode(cases[i].json, strlen(cases[i].json), &v, &n, &err);
        assert_decode_fails(rc, &err, cases[i].needle);
        assert_null(v);
    }
}

static void test_apiview_presets_reads_the_shipped_presets(void **state)
{
    (void)state;
    char *json = sm_presets_encode();
    assert_non_null(json);
    sm_apiview_preset *p = NULL;
    size_t n = 0;
    sm_error err = {0};
    assert_int_equal(sm_apiview_presets_decode(json, strlen(json), &p, &n, &err), 0);
    free(json);
    size_t shipped = 0;
    for (const sm_preset *s = sm_presets(); s->name; s++)
        shipped++;
    assert_int_equal(n, shipped);
    assert_string_equal(p[0].name, "seed-tcp-unix");
    assert_non_null(strstr(p[0].description, "TCP_NODELAY"));
    free(p);

    const char *bad = "{\"presets\":[{\"description\":\"x\"}]}";
    assert_decode_fails(sm_apiview_presets_decode(bad, strlen(bad), &p, &n, &err), &err,
                        "presets[0]: name");
}

static void test_apiview_error_reads_message_and_field(void **state)
{
    (void)state;
    char *json = sm_api_error("hosts: 'nobody' is not a registered agent", "hosts[0]");
    sm_apiview_error e;
    sm_error err = {0};
    assert_int_equal(sm_apiview_error_decode(json, strlen(json), &e, &err), 0);
    free(json);
    assert_string_equal(e.error, "hosts: 'nobody' is not a registered agent");
    assert_string_equal(e.field, "hosts[0]");

    json = sm_api_error("no such endpoint", NULL);
    assert_int_equal(sm_apiview_error_decode(json, strlen(json), &e, &err), 0);
    free(json);
    assert_string_equal(e.error, "no such endpoint");
    assert_string_equal(e.field, "");

    static const char *const bad[] = {"<html>502</html>", "{\"message\":\"x\"}",
                                      "{\"error\":false}"};
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(sm_apiview_error_decode(bad[i], strlen(bad[i]), &e, &err), SM_EPARSE);
}

static void test_apiview_run_id_reads_the_created_answer(void **state)
{
    (void)state;
    char *json = sm_api_run_created(42);
    uint64_t id = 0;
    sm_error err = {0};
    assert_int_equal(sm_apiview_run_id_decode(json, strlen(json), &id, &err), 0);
    free(json);
    assert_int_equal(id, 42);
    assert_int_equal(sm_apiview_run_id_decode("{\"run\":43}", 10, &id, &err), 0);
    assert_int_equal(id, 43);
    id = 5;
    assert_decode_fails(sm_apiview_run_id_decode("{\"run\":\"x\"}", 11, &id, &err), &err,
                        "created: run");
    assert_decode_fails(sm_apiview_run_id_decode("{}", 2, &id, &err), &err, "created: run");
    assert_int_equal(id, 5);
}

static void test_apiview_preset_request_is_the_exact_body(void **state)
{
    (void)state;
    char *body = NULL;
    sm_error err = {0};
    assert_int_equal(sm_apiview_preset_request("seed-tcp-unix", "h1,h2", 2, &body, &err), 0);
    assert_string_equal(body, "{\"preset\":\"seed-tcp-unix\",\"hosts\":[\"h1\",\"h2\"],"
                              "\"repetitions\":2}");
    free(body);
    assert_int_equal(sm_apiview_preset_request("quick", "all", 0, &body, &err), 0);
    assert_string_equal(body, "{\"preset\":\"quick\",\"hosts\":\"all\"}");
    free(body);
    assert_int_equal(sm_apiview_preset_request("a\"b", NULL, 0, &body, &err), 0);
    assert_string_equal(body, "{\"preset\":\"a\\\"b\"}");
    free(body);
    body = NULL;
    assert_int_equal(sm_apiview_preset_request("quick", "h1,", 0, &body, &err), SM_EINVAL);
    cli_fixture_assert_msg_has(&err, "empty name");
    assert_null(body);

    /* And the coordinator's side reads it back into the preset's spec. */
    assert_int_equal(sm_apiview_preset_request("seed-tcp-unix", "h1", 3, &body, &err), 0);
    char *spec = NULL;
    assert_int_equal(sm_api_run_request(body, strlen(body), &spec, &err), 0);
    assert_non_null(strstr(spec, "\"hosts\":[\"h1\"]"));
    assert_non_null(strstr(spec, "\"repetitions\":3"));
    free(spec);
    free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_apiview_run_reads_the_coordinators_run_with_its_cells),
        cmocka_unit_test(test_apiview_run_rejects_what_it_cannot_read),
        cmocka_unit_test(test_apiview_run_shortens_a_long_reason_and_keeps_utf8_whole),
        cmocka_unit_test(test_apiview_runs_reads_a_list_and_an_empty_one),
        cmocka_unit_test(test_apiview_agents_reads_facts_labels_and_an_agent_without_facts),
        cmocka_unit_test(test_apiview_agents_rejects_bad_facts_and_labels),
        cmocka_unit_test(test_apiview_presets_reads_the_shipped_presets),
        cmocka_unit_test(test_apiview_error_reads_message_and_field),
        cmocka_unit_test(test_apiview_run_id_reads_the_created_answer),
        cmocka_unit_test(test_apiview_preset_request_is_the_exact_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
