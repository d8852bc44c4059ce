/* Unit tests of the fingerprint routes (coordinator/api/fingerprints.c) over a real SQLite store
 * and a real control: GET /api/agents/{name}/fingerprint with its history, GET
 * /api/fingerprints/diff and their refusals, each with its exact status and the field it names. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
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

typedef struct fp_response {
    int status;
    char *body;
    cJSON *json; /* the body parsed */
} fp_response;

static fp_response fp_call(fixture *f, const char *method, const char *path, const char *query)
{
    fp_response r = {0};
    size_t len = 0;
    const char *ctype = NULL;
    r.status = sm_api_handle(&f->api, method, path, query, NULL, "", 0, &r.body, &len, &ctype);
    assert_non_null(r.body);
    assert_int_equal(len, strlen(r.body));
    assert_string_equal(ctype, "application/json");
    r.json = cJSON_Parse(r.body);
    if (!r.json)
        fail_msg("%s %s: not JSON: %s", method, path, r.body);
    return r;
}

static void response_fini(fp_response *r)
{
    cJSON_Delete(r->json);
    free(r->body);
}

/* Calls and checks the status and, for an error, the exact field and a part of the message. */
static void expect_error(fixture *f, const char *path, const char *query, int status,
                         const char *field, const char *msg_has)
{
    fp_response r = fp_call(f, "GET", path, query);
    if (r.status != status)
        fail_msg("GET %s?%s: %d, want %d: %s", path, query ? query : "", r.status, status, r.body);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(r.json, "error");
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(r.json, "field");
    assert_true(cJSON_IsString(e));
    if (field) {
        assert_true(cJSON_IsString(fl));
        assert_string_equal(fl->valuestring, field);
    }
    if (msg_has && !strstr(e->valuestring, msg_has))
        fail_msg("GET %s?%s: '%s' lacks '%s'", path, query ? query : "", e->valuestring, msg_has);
    response_fini(&r);
}

/* Stores a fingerprint for agent with the given qdisc on lo and tcp_autocorking, seen at
 * at_ms; hash gets its hash. */
static void put_fp(fixture *f, const char *agent, const char *qdisc, const char *corking,
                   int64_t at_ms, char hash[SM_FP_HASH_HEX + 1])
{
    sm_fingerprint fp;
    sm_fp_init(&fp);
    sm_error err = {0};
    assert_int_equal(sm_fp_set(&fp, "info.hostname", agent, &err), 0);
    assert_int_equal(sm_fp_set(&fp, "kernel.release", "6.1.0-18-amd64", &err), 0);
    assert_int_equal(sm_fp_set(&fp, "if.lo.mtu", "65536", &err), 0);
    assert_int_equal(sm_fp_set(&fp, "if.lo.qdisc", qdisc, &err), 0);
    assert_int_equal(sm_fp_set(&fp, "sysctl.net.ipv4.tcp_autocorking", corking, &err), 0);
    assert_int_equal(sm_fp_set_unreadable(&fp, "cpu.governor", 2 /* ENOENT */, &err), 0);
    fp.collected_ms = (uint64_t)at_ms;
    size_t len;
    char *json = sm_fp_encode(&fp, &len, &err);
    assert_non_null(json);
    sm_fp_hash(&fp, hash);
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    if (sm_store_fp_put(f->st, agent, hash, json, at_ms, NULL, NULL, &err) != 0)
        fail_msg("fp_put: %s", err.msg);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    free(json);
    sm_fp_fini(&fp);
}

static const cJSON *get(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!v)
        fail_msg("no \"%s\" in %s", name, cJSON_PrintUnformatted(o));
    return v;
}

static void test_fingerprint_gives_the_latest_document_and_the_history_oldest_first(void **state)
{
    fixture *f = *state;
    register_agent(f, "h1");
    char first[SM_FP_HASH_HEX + 1], second[SM_FP_HASH_HEX + 1], again[SM_FP_HASH_HEX + 1];
    put_fp(f, "h1", "noqueue", "1", 1000, first);
    put_fp(f, "h1", "tbf rate 400Mbit burst 128Kb lat 50ms", "1", 2000, second);
    put_fp(f, "h1", "tbf rate 400Mbit burst 128Kb lat 50ms", "1", 3000, again);
    assert_string_not_equal(first, second);
    assert_string_equal(second, again);

    fp_response r = fp_call(f, "GET", "/api/agents/h1/fingerprint", NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(get(r.json, "agent")->valuestring, "h1");
    assert_string_equal(get(r.json, "hash")->valuestring, second);
    assert_int_equal((int64_t)get(r.json, "first_seen_ms")->valuedouble, 2000);
    assert_int_equal((int64_t)get(r.json, "last_seen_ms")->valuedouble, 3000);
    /* The document decodes as a fingerprint, with the latest values. */
    sm_fingerprint fp;
    sm_fp_init(&fp);
    sm_error err = {0};
    assert_int_equal(sm_fp_from_cjson(get(r.json, "fingerprint"), &fp, &err), 0);
    assert_string_equal(sm_fp_get(&fp, "if.lo.qdisc")->value,
                        "tbf rate 400Mbit burst 128Kb lat 50ms");
    assert_string_equal(sm_fp_get(&fp, "cpu.governor")->unreadable, "ENOENT");
    sm_fp_fini(&fp);
    const cJSON *h = get(r.json, "history");
    assert_int_equal(cJSON_GetArraySize(h), 2);
    assert_string_equal(get(cJSON_GetArrayItem(h, 0), "hash")->valuestring, first);
    assert_int_equal((int64_t)get(cJSON_GetArrayItem(h, 0), "first_seen_ms")->valuedouble, 1000);
    assert_int_equal((int64_t)get(cJSON_GetArrayItem(h, 0), "last_seen_ms")->valuedouble, 1000);
    assert_string_equal(get(cJSON_GetArrayItem(h, 1), "hash")->valuestring, second);
    assert_int_equal((int64_t)get(cJSON_GetArrayItem(h, 1), "last_seen_ms")->valuedouble, 3000);
    assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(h, 1), "fingerprint"));
    assert_int_equal((int)get(r.json, "history_left_out")->valuedouble, 0);
    response_fini(&r);
}

/* A host whose settings flapped: the last 100 changes, and how many came before them. */
static void test_fingerprint_history_is_the_last_100_with_the_count_left_out(void **state)
{
    fixture *f = *state;
    register_agent(f, "h1");
    char hash[SM_FP_HASH_HEX + 1], qdisc[64];
    for (int i = 0; i < SM_FP_HISTORY_MAX + 2; i++) {
        snprintf(qdisc, sizeof qdisc, "tbf rate %dMbit burst 128Kb lat 50ms", i + 1);
        put_fp(f, "h1", qdisc, "1", 1000 + i, hash);
    }
    fp_response r = fp_call(f, "GET", "/api/agents/h1/fingerprint", NULL);
    assert_int_equal(r.status, 200);
    const cJSON *h = get(r.json, "history");
    assert_int_equal(cJSON_GetArraySize(h), SM_FP_HISTORY_MAX);
    assert_int_equal((int64_t)get(cJSON_GetArrayItem(h, 0), "first_seen_ms")->valuedouble, 1002);
    assert_string_equal(get(cJSON_GetArrayItem(h, SM_FP_HISTORY_MAX - 1), "hash")->valuestring,
                        hash);
    assert_int_equal((int)get(r.json, "history_left_out")->valuedouble, 2);
    response_fini(&r);
}

static void test_fingerprint_refuses_unknown_agents_and_agents_without_one(void **state)
{
    fixture *f = *state;
    expect_error(f, "/api/agents/nope/fingerprint", NULL, 404, "name",
                 "no agent named 'nope' has registered");
    register_agent(f, "h1");
    expect_error(f, "/api/agents/h1/fingerprint", NULL, 404, "name",
                 "agent 'h1' has sent no fingerprint yet");
    expect_error(f, "/api/agents/h%201/fingerprint", NULL, 400, "name", "agent name");
    expect_error(f, "/api/agents//fingerprint", NULL, 400, "name", "agent name");
    char longname[128];
    memset(longname, 'a', 70);
    snprintf(longname + 70, sizeof longname - 70, "/fingerprint");
    char path[160];
    snprintf(path, sizeof path, "/api/agents/%s", longname);
    expect_error(f, path, NULL, 400, "name", "longer than 64");
    expect_error(f, "/api/agents/h1", NULL, 404, NULL, "no such endpoint");
    expect_error(f, "/api/agents/h1/fingerprints", NULL, 404, NULL, "no such endpoint");
    fp_response r = fp_call(f, "POST", "/api/agents/h1/fingerprint", NULL);
    assert_int_equal(r.status, 405);
    response_fini(&r);
}

static void test_diff_lists_the_items_that_differ_with_each_hosts_value(void **state)
{
    fixture *f = *state;
    char hash[SM_FP_HASH_HEX + 1];
    const char *names[] = {"h1", "h2", "h3"};
    for (size_t i = 0; i < 3; i++)
        register_agent(f, names[i]);
    put_fp(f, "h1", "noqueue", "1", 1000, hash);
    put_fp(f, "h2", "tbf rate 400Mbit burst 128Kb lat 50ms", "1", 1000, hash);
    put_fp(f, "h3", "noqueue", "0", 1000, hash);

    /* The browser's form: commas percent-encoded. */
    fp_response r = fp_call(f, "GET", "/api/fingerprints/diff", "hosts=h2%2Ch1%2ch3");
    assert_int_equal(r.status, 200);
    const cJSON *hosts = get(r.json, "hosts");
    assert_int_equal(cJSON_GetArraySize(hosts), 3);
    assert_string_equal(cJSON_GetArrayItem(hosts, 0)->valuestring, "h2");
    assert_string_equal(cJSON_GetArrayItem(hosts, 2)->valuestring, "h3");
    /* kernel.release, if.lo.mtu and cpu.governor agree; info.hostname is never compared. */
    assert_int_equal((int)get(r.json, "same")->valuedouble, 3);
    const cJSON *items = get(r.json, "items");
    assert_int_equal(cJSON_GetArraySize(items), 2);
    const cJSON *q = cJSON_GetArrayItem(items, 0), *c = cJSON_GetArrayItem(items, 1);
    assert_string_equal(get(q, "item")->valuestring, "if.lo.qdisc");
    assert_string_equal(get(q, "label")->valuestring, "lo qdisc");
    assert_string_equal(get(get(q, "values"), "h2")->valuestring,
                        "tbf rate 400Mbit burst 128Kb lat 50ms");
    assert_string_equal(get(get(q, "values"), "h1")->valuestring, "noqueue");
    assert_string_equal(get(get(q, "values"), "h3")->valuestring, "noqueue");
    assert_string_equal(get(c, "item")->valuestring, "sysctl.net.ipv4.tcp_autocorking");
    assert_string_equal(get(c, "label")->valuestring, "net.ipv4.tcp_autocorking");
    assert_string_equal(get(get(c, "values"), "h3")->valuestring, "0");
    assert_string_equal(get(get(c, "values"), "h1")->valuestring, "1");
    response_fini(&r);

    /* Two hosts that agree on everything: no rows, every compared item the same. */
    r = fp_call(f, "GET", "/api/fingerprints/diff", "x=1&hosts=h1,h3");
    assert_int_equal(r.status, 200);
    assert_int_equal(cJSON_GetArraySize(get(r.json, "items")), 1);
    assert_int_equal((int)get(r.json, "same")->valuedouble, 4);
    response_fini(&r);
}

static void test_diff_refuses_bad_host_lists_and_names_the_host_without_a_fingerprint(void **state)
{
    fixture *f = *state;
    char hash[SM_FP_HASH_HEX + 1];
    register_agent(f, "h1");
    register_agent(f, "h2");
    put_fp(f, "h1", "noqueue", "1", 1000, hash);
    const char *diff = "/api/fingerprints/diff";
    expect_error(f, diff, NULL, 400, "hosts", "give the hosts to compare");
    expect_error(f, diff, "format=json", 400, "hosts", "give the hosts to compare");
    expect_error(f, diff, "hosts=h1", 400, "hosts", "at least 2 hosts");
    expect_error(f, diff, "hosts=", 400, "hosts", "at least 2 hosts");
    expect_error(f, diff, "hosts=h1,h1", 400, "hosts", "'h1' is given twice");
    expect_error(f, diff, "hosts=h1,,h2", 400, "hosts", "an empty name");
    expect_error(f, diff, "hosts=h1,h2,", 400, "hosts", "an empty name");
    expect_error(f, diff, "hosts=h1,h%2", 400, "hosts", "agent names separated by commas");
    expect_error(f, diff, "hosts=h1,h%202", 400, "hosts", "'h 2' is not an agent name");
    expect_error(f, diff, "hosts=h1,a/b", 400, "hosts", "'a/b' is not an agent name");
    char many[256] = "hosts=h1";
    for (int i = 2; i <= 17; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), ",x%d", i);
    expect_error(f, diff, many, 400, "hosts", "at most 16 hosts");
    expect_error(f, diff, "hosts=h1,h2", 404, "hosts", "'h2' has no fingerprint");
    expect_error(f, diff, "hosts=nope,h1", 404, "hosts", "'nope' has no fingerprint");
    fp_response r = fp_call(f, "POST", diff, "hosts=h1,h2");
    assert_int_equal(r.status, 405);
    response_fini(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_fingerprint_gives_the_latest_document_and_the_history_oldest_first, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_fingerprint_history_is_the_last_100_with_the_count_left_out, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_fingerprint_refuses_unknown_agents_and_agents_without_one, setup, teardown),
        cmocka_unit_test_setup_teardown(test_diff_lists_the_items_that_differ_with_each_hosts_value,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_diff_refuses_bad_host_lists_and_names_the_host_without_a_fingerprint, setup,
            teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
