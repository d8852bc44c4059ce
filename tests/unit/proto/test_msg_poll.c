/* Unit tests of the agent's poll message: its exact JSON, round trips, bounds, results, ready pair
 * servers, quarantined entries, facts and labels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/msg.h"
#include "tests/unit/testutil.h"
#include "tests/unit/proto/msg_fixture.h"

#define EMPTY "\"acks\":[],\"results\":[]}"

#define assert_labels_error(text, part) check_labels_error((text), (part), __FILE__, __LINE__)

static void check_labels_error(const char *text, const char *part, const char *file, int line)
{
    sm_label labels[SM_LABELS_MAX];
    size_t n = 99;
    sm_error err;
    memset(labels, 0, sizeof labels);
    sm_error_clear(&err);
    int rc = sm_labels_parse(text, labels, &n, &err);
    msg_fixture_check_code(rc, &err, SM_EINVAL, file, line);
    msg_fixture_check_contains(err.msg, part, file, line);
    _assert_int_equal(n, 99, file, line);
    _assert_true(labels[0].key[0] == '\0', "labels untouched", file, line);
}

/* ---- builders and comparisons ---- */

static void fill_facts(sm_facts *f)
{
    memset(f, 0, sizeof *f);
    snprintf(f->hostname, sizeof f->hostname, "h1.lab");
    snprintf(f->kernel, sizeof f->kernel, "6.1.0-18-amd64");
    snprintf(f->cpu_model, sizeof f->cpu_model, "AMD EPYC 7302P");
    f->cores = 16;
    f->mem_bytes = 64ull << 30;
    snprintf(f->congestion, sizeof f->congestion, "bbr");
    f->lo_mtu = 65536;
    f->loadavg[0] = 0.25;
    f->loadavg[1] = 0.5;
    f->loadavg[2] = -1;
    f->tcp_autocorking = 2;
}

static void assert_facts_equal(const sm_facts *a, const sm_facts *b)
{
    assert_string_equal(a->hostname, b->hostname);
    assert_string_equal(a->kernel, b->kernel);
    assert_string_equal(a->cpu_model, b->cpu_model);
    assert_int_equal(a->cores, b->cores);
    assert_int_equal(a->mem_bytes, b->mem_bytes);
    assert_string_equal(a->congestion, b->congestion);
    assert_int_equal(a->lo_mtu, b->lo_mtu);
    for (int i = 0; i < 3; i++)
        assert_memory_equal(&a->loadavg[i], &b->loadavg[i], sizeof(double));
    assert_int_equal(a->tcp_autocorking, b->tcp_autocorking);
}

/* A JSON text of a poll that carries n acks (or, with results, n minimal results). */
static char *poll_with_many(size_t n, bool results)
{
    size_t cap = 128 + n * 64;
    char *json = malloc(cap);
    assert_non_null(json);
    size_t at = (size_t)snprintf(json, cap, IDLE "\"%s\":[", results ? "results" : "acks");
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(
            json + at, cap - at,
            results ? "%s{\"job\":\"%zu\",\"attempt\":1,\"result\":{\"ok\":true}}" : "%s\"c%zu.1\"",
            i ? "," : "", i + 1);
    snprintf(json + at, cap - at, "],\"%s\":[]}", results ? "acks" : "results");
    return json;
}

/* ---- poll ---- */

static void test_msg_poll_full_round_trips(void **state)
{
    (void)state;
    static sm_poll p, back;
    sm_error err;
    memset(&p, 0, sizeof p);
    snprintf(p.agent, sizeof p.agent, "h1.lab-2");
    snprintf(p.boot, sizeof p.boot, "%s", "fedcba9876543210fedcba9876543210");
    p.seq = UINT64_MAX;
    p.state = SM_AGENT_BUSY;
    p.job = (1ull << 60) + 1; /* not a double: only a string carries it */
    p.attempt = 3;
    snprintf(p.data_addr, sizeof p.data_addr, "fd00::11");
    snprintf(p.labels[0].key, sizeof p.labels[0].key, "rack");
    snprintf(p.labels[0].value, sizeof p.labels[0].value, "2");
    snprintf(p.labels[1].key, sizeof p.labels[1].key, "path");
    snprintf(p.labels[1].value, sizeof p.labels[1].value, "/a:b=c");
    p.n_labels = 2;
    p.have_facts = true;
    fill_facts(&p.facts);
    snprintf(p.acks[0], sizeof p.acks[0], "c12.1");
    snprintf(p.acks[1], sizeof p.acks[1], "x11.2");
    p.n_acks = 2;
    p.results = calloc(2, sizeof p.results[0]);
    assert_non_null(p.results);
    p.n_results = 2;
    p.results[0].job = 10;
    p.results[0].attempt = 1;
    msg_fixture_fill_ok_result(&p.results[0].result);
    p.results[1].job = 11;
    p.results[1].attempt = 1000000;
    sm_result_init(&p.results[1].result);
    snprintf(p.results[1].result.reason, sizeof p.results[1].result.reason, "agent-lost");

    size_t len = 0;
    char *json = sm_msg_poll_encode(&p, &len, &err);
    assert_non_null(json);
    assert_int_equal(len, strlen(json));
    assert_contains(json, "\"seq\":\"18446744073709551615\"");
    assert_contains(json, "\"job\":\"1152921504606846977\",\"attempt\":3");
    memset(&back, 0xff, sizeof back);
    if (sm_msg_poll_decode(json, len, &back, &err) != 0)
        fail_msg("%s: %s", json, err.msg);
    assert_string_equal(back.agent, p.agent);
    assert_string_equal(back.boot, p.boot);
    assert_int_equal(back.seq, p.seq);
    assert_int_equal(back.state, SM_AGENT_BUSY);
    assert_int_equal(back.job, p.job);
    assert_int_equal(back.attempt, 3);
    assert_string_equal(back.data_addr, "fd00::11");
    assert_int_equal(back.n_labels, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_string_equal(back.labels[i].key, p.labels[i].key);
        assert_string_equal(back.labels[i].value, p.labels[i].value);
    }
    assert_true(back.have_facts);
    assert_facts_equal(&back.facts, &p.facts);
    assert_int_equal(back.n_acks, 2);
    assert_string_equal(back.acks[0], "c12.1");
    assert_string_equal(back.acks[1], "x11.2");
    assert_int_equal(back.n_results, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(back.results[i].job, p.results[i].job);
        assert_int_equal(back.results[i].attempt, p.results[i].attempt);
        msg_fixture_assert_result_equal(&back.results[i].result, &p.results[i].result);
    }
    free(json);
    sm_msg_poll_fini(&back);
    sm_msg_poll_fini(&p);
    assert_null(p.results);
    assert_int_equal(p.n_results, 0);
}

static void test_msg_poll_minimal_idle_encodes_exactly_and_round_trips(void **state)
{
    (void)state;
    static sm_poll p, back;
    sm_error err;
    memset(&p, 0, sizeof p);
    snprintf(p.agent, sizeof p.agent, "h1");
    snprintf(p.boot, sizeof p.boot, "%s", BOOT);
    p.seq = 7;
    p.job = 99; /* ignored while idle */
    size_t len;
    char *json = sm_msg_poll_encode(&p, &len, &err);
    assert_string_equal(json, IDLE EMPTY);
    memset(&back, 0xff, sizeof back);
    assert_int_equal(sm_msg_poll_decode(json, len, &back, &err), 0);
    assert_string_equal(back.agent, "h1");
    assert_int_equal(back.seq, 7);
    assert_int_equal(back.state, SM_AGENT_IDLE);
    assert_int_equal(back.job, 0);
    assert_int_equal(back.attempt, 0);
    assert_string_equal(back.data_addr, "");
    assert_int_equal(back.n_labels, 0);
    assert_false(back.have_facts);
    assert_int_equal(back.n_acks, 0);
    assert_int_equal(back.n_results, 0);
    assert_null(back.results);
    free(json);
    sm_msg_poll_fini(&back);
}

static void test_msg_poll_rejects_unknown_and_missing_fields(void **state)
{
    (void)state;
    assert_poll_error(IDLE "\"acks\":[],\"results\":[],\"extra\":1}", SM_EPARSE,
                      "poll: unknown field 'extra'");
    assert_poll_error(IDLE "\"acks\":[]}", SM_EPARSE, "poll: missing field 'results'");
    assert_poll_error(IDLE "\"acks\":[],\"results\":[],\"labels\":{},\"labels\":{}}", SM_EPARSE,
                      "poll: duplicate field 'labels'");
    assert_poll_error("[]", SM_EPARSE, "poll: expected a JSON object");
}

static void test_msg_poll_wants_64_bit_counters_as_strings(void **state)
{
    (void)state;
    assert_poll_error("{\"agent\":\"h1\",\"boot\":\"" BOOT "\",\"seq\":7,\"state\":\"idle\"," EMPTY,
                      SM_EPARSE, "poll: seq: expected a decimal string");
    assert_poll_error("{\"agent\":\"h1\",\"boot\":\"" BOOT
                      "\",\"seq\":\"-7\",\"state\":\"idle\"," EMPTY,
                      SM_EPARSE, "poll: seq");
    assert_poll_error(HEAD "\"state\":\"busy\",\"job\":12,\"attempt\":1," EMPTY, SM_EPARSE,
                      "poll: job: expected a decimal string");
    assert_poll_error(HEAD
                      "\"state\":\"busy\",\"job\":\"18446744073709551616\",\"attempt\":1," EMPTY,
                      SM_EPARSE, "poll: job");
}

static void test_msg_poll_rejects_bad_agent_and_boot(void **state)
{
    (void)state;
    assert_poll_error("{\"agent\":\"h 1\",\"boot\":\"" BOOT
                      "\",\"seq\":\"7\",\"state\":\"idle\"," EMPTY,
                      SM_EINVAL, "poll: agent");
    assert_poll_error("{\"agent\":\"h1\",\"boot\":\"0123456789ABCDEF0123456789abcdef\","
                      "\"seq\":\"7\",\"state\":\"idle\"," EMPTY,
                      SM_EINVAL, "poll: boot");
    assert_poll_error("{\"agent\":\"h1\",\"boot\":\"0123456789abcdef0123456789abcde\","
                      "\"seq\":\"7\",\"state\":\"idle\"," EMPTY,
                      SM_EINVAL, "poll: boot");
    assert_poll_error("{\"agent\":\"h1\",\"boot\":1,\"seq\":\"7\",\"state\":\"idle\"," EMPTY,
                      SM_EPARSE, "poll: boot");
}

static void test_msg_poll_job_comes_with_busy_only(void **state)
{
    (void)state;
    assert_poll_error(HEAD "\"state\":\"busy\",\"attempt\":1," EMPTY, SM_EPARSE,
                      "poll: missing field 'job'");
    assert_poll_error(HEAD "\"state\":\"busy\",\"job\":\"12\"," EMPTY, SM_EPARSE,
                      "poll: missing field 'attempt'");
    assert_poll_error(IDLE "\"job\":\"12\"," EMPTY, SM_EPARSE, "poll: job: not allowed when idle");
    assert_poll_error(IDLE "\"attempt\":1," EMPTY, SM_EPARSE, "poll: attempt");
    assert_poll_error(HEAD "\"state\":\"gone\"," EMPTY, SM_EINVAL, "poll: state");
}

static void test_msg_poll_attempt_is_a_number_from_1_to_1000000(void **state)
{
    (void)state;
    assert_poll_error(HEAD "\"state\":\"busy\",\"job\":\"12\",\"attempt\":0," EMPTY, SM_EINVAL,
                      "poll: attempt: 0 is below the minimum 1");
    assert_poll_error(HEAD "\"state\":\"busy\",\"job\":\"12\",\"attempt\":1000001," EMPTY,
                      SM_EINVAL, "poll: attempt");
    assert_poll_error(HEAD "\"state\":\"busy\",\"job\":\"12\",\"attempt\":\"1\"," EMPTY, SM_EPARSE,
                      "poll: attempt");
    assert_poll_error(HEAD "\"state\":\"busy\",\"job\":\"12\",\"attempt\":1.5," EMPTY, SM_EPARSE,
                      "poll: attempt");
}

static void test_msg_poll_data_addr_is_an_ip_literal(void **state)
{
    (void)state;
    assert_poll_error(IDLE "\"data_addr\":\"10.0.0.256\"," EMPTY, SM_EINVAL, "poll: data_addr");
    assert_poll_error(IDLE "\"data_addr\":\"h2.lab\"," EMPTY, SM_EINVAL, "poll: data_addr");
    assert_poll_error(IDLE "\"data_addr\":\"\"," EMPTY, SM_EINVAL, "poll: data_addr");
    assert_poll_error(IDLE "\"data_addr\":167772161," EMPTY, SM_EPARSE, "poll: data_addr");
    static sm_poll p;
    sm_error err;
    static const char v4[] = IDLE "\"data_addr\":\"10.213.0.11\"," EMPTY;
    assert_int_equal(sm_msg_poll_decode(v4, sizeof v4 - 1, &p, &err), 0);
    assert_string_equal(p.data_addr, "10.213.0.11");
}

static void test_msg_poll_labels_are_bounded(void **state)
{
    (void)state;
    assert_poll_error(IDLE "\"labels\":{\"bad key\":\"1\"}," EMPTY, SM_EINVAL,
                      "poll: labels: key 'bad key'");
    assert_poll_error(IDLE "\"labels\":{\"rack\":\"a b\"}," EMPTY, SM_EINVAL,
                      "poll: labels: value 'a b'");
    assert_poll_error(IDLE "\"labels\":{\"rack\":2}," EMPTY, SM_EPARSE,
                      "poll: labels: rack: expected a string");
    assert_poll_error(IDLE "\"labels\":{\"rack\":\"1\",\"rack\":\"2\"}," EMPTY, SM_EPARSE,
                      "poll: labels: duplicate key 'rack'");
    assert_poll_error(
        IDLE "\"labels\":{\"a\":\"1\",\"b\":\"1\",\"c\":\"1\",\"d\":\"1\",\"e\":\"1\","
             "\"f\":\"1\",\"g\":\"1\",\"h\":\"1\",\"i\":\"1\",\"j\":\"1\",\"k\":\"1\","
             "\"l\":\"1\",\"m\":\"1\",\"n\":\"1\",\"o\":\"1\",\"p\":\"1\",\"q\":\"1\"}," EMPTY,
        SM_EINVAL, "poll: labels: 17 labels is above the maximum 16");
}

static void test_msg_poll_acks_are_bounded_command_ids(void **state)
{
    (void)state;
    char *json = poll_with_many(SM_POLL_ACKS_MAX + 1, false);
    assert_poll_error(json, SM_EINVAL, "poll: acks: 65 entries is above the maximum 64");
    free(json);
    json = poll_with_many(SM_POLL_ACKS_MAX, false);
    static sm_poll p;
    sm_error err;
    assert_int_equal(sm_msg_poll_decode(json, strlen(json), &p, &err), 0);
    assert_int_equal(p.n_acks, SM_POLL_ACKS_MAX);
    assert_string_equal(p.acks[63], "c64.1");
    free(json);
    assert_poll_error(IDLE "\"acks\":[\"c 1\"],\"results\":[]}", SM_EINVAL, "poll: acks: 'c 1'");
    assert_poll_error(IDLE "\"acks\":[7],\"results\":[]}", SM_EPARSE, "poll: acks");
}

static void test_msg_poll_carries_at_most_32_results(void **state)
{
    (void)state;
    char *json = poll_with_many(SM_POLL_RESULTS_MAX + 1, true);
    assert_poll_error(json, SM_EINVAL, "poll: results: 33 entries is above the maximum 32");
    free(json);
    json = poll_with_many(SM_POLL_RESULTS_MAX, true);
    static sm_poll p;
    sm_error err;
    assert_int_equal(sm_msg_poll_decode(json, strlen(json), &p, &err), 0);
    assert_int_equal(p.n_results, SM_POLL_RESULTS_MAX);
    assert_int_equal(p.results[31].job, 32);
    sm_msg_poll_fini(&p);
    free(json);
}

/* The first result owns a histogram when the second fails: it must be freed (LeakSanitizer). */
static void test_msg_poll_bad_result_frees_the_good_ones(void **state)
{
    (void)state;
    assert_poll_error(IDLE "\"acks\":[],\"results\":[{\"job\":\"1\",\"attempt\":1,\"result\":"
                           "{\"ok\":true,\"hist\":{\"unit\":\"ns\",\"min\":5,\"max\":5,\"count\":1,"
                           "\"buckets\":[[5,1]]}}},{\"job\":\"2\",\"attempt\":1,\"result\":"
                           "{\"ok\":\"yes\"}}]}",
                      SM_EPARSE, "poll: results[1]: result: ok: expected true or false");
    assert_poll_error(IDLE "\"acks\":[],\"results\":[{\"job\":2,\"attempt\":1,\"result\":"
                           "{\"ok\":true}}]}",
                      SM_EPARSE, "poll: results[0]: job: expected a decimal string");
    assert_poll_error(IDLE "\"acks\":[],\"results\":[{\"job\":\"2\",\"attempt\":1}]}", SM_EPARSE,
                      "poll: results[0]: missing field 'result'");
    assert_poll_error(IDLE "\"facts\":{\"hostname\":\"h1\"}," EMPTY, SM_EPARSE,
                      "poll: facts: missing field");
}

static void test_msg_poll_encode_refuses_counts_past_the_arrays(void **state)
{
    (void)state;
    static sm_poll p;
    sm_error err;
    size_t len = 5;
    memset(&p, 0, sizeof p);
    p.n_results = SM_POLL_RESULTS_MAX + 1;
    assert_null(sm_msg_poll_encode(&p, &len, &err));
    assert_int_equal(err.code, SM_EINVAL);
    assert_contains(err.msg, "poll: results");
    assert_int_equal(len, 0);
    p.n_results = 0;
    p.n_acks = SM_POLL_ACKS_MAX + 1;
    assert_null(sm_msg_poll_encode(&p, &len, &err));
    assert_contains(err.msg, "poll: acks");
}

/* ---- ready: listening pair servers ---- */

#define READY(entries) IDLE "\"acks\":[],\"results\":[],\"ready\":[" entries "]}"

static void test_msg_poll_ready_encodes_exactly_and_round_trips(void **state)
{
    (void)state;
    static sm_poll p, back;
    sm_error err;
    memset(&p, 0, sizeof p);
    snprintf(p.agent, sizeof p.agent, "h1");
    snprintf(p.boot, sizeof p.boot, "%s", BOOT);
    p.seq = 7;
    p.ready[0] = (sm_ready){12, 1, 40123, ""};
    p.ready[1] = (sm_ready){UINT64_MAX, 1000000, 65535, ""};
    p.n_ready = 2;
    size_t len;
    char *json = sm_msg_poll_encode(&p, &len, &err);
    assert_string_equal(json, READY("{\"job\":\"12\",\"attempt\":1,\"port\":40123},"
                                    "{\"job\":\"18446744073709551615\",\"attempt\":1000000,"
                                    "\"port\":65535}"));
    memset(&back, 0xff, sizeof back);
    if (sm_msg_poll_decode(json, len, &back, &err) != 0)
        fail_msg("%s: %s", json, err.msg);
    assert_int_equal(back.n_ready, 2);
    assert_int_equal(back.ready[0].job, 12);
    assert_int_equal(back.ready[0].attempt, 1);
    assert_int_equal(back.ready[0].port, 40123);
    assert_int_equal(back.ready[1].job, UINT64_MAX);
    assert_int_equal(back.ready[1].attempt, 1000000);
    assert_int_equal(back.ready[1].port, 65535);
    free(json);
    sm_msg_poll_fini(&back);

    /* An empty list is allowed on the wire, and left out by the encoder. */
    static const char empty[] = READY("");
    assert_int_equal(sm_msg_poll_decode(empty, sizeof empty - 1, &back, &err), 0);
    assert_int_equal(back.n_ready, 0);
    p.n_ready = 0;
    json = sm_msg_poll_encode(&p, &len, &err);
    assert_string_equal(json, IDLE EMPTY);
    free(json);
}

/* ---- quarantined: the agent's spool entries out of service ---- */

static void test_msg_poll_quarantined_count_is_optional_and_round_trips(void **state)
{
    (void)state;
    static sm_poll p, back;
    sm_error err;
    memset(&p, 0, sizeof p);
    snprintf(p.agent, sizeof p.agent, "h1");
    snprintf(p.boot, sizeof p.boot, "%s", BOOT);
    p.seq = 7;
    p.quarantined = 32;
    size_t len;
    char *json = sm_msg_poll_encode(&p, &len, &err);
    assert_string_equal(json, IDLE "\"acks\":[],\"results\":[],\"quarantined\":\"32\"}");
    memset(&back, 0xff, sizeof back);
    if (sm_msg_poll_decode(json, len, &back, &err) != 0)
        fail_msg("%s: %s", json, err.msg);
    assert_int_equal(back.quarantined, 32);
    free(json);
    sm_msg_poll_fini(&back);

    /* 0 is left out, so a poll keeps the shape a coordinator from before the field takes;
     * absent decodes as 0. */
    p.quarantined = 0;
    json = sm_msg_poll_encode(&p, &len, &err);
    assert_string_equal(json, IDLE EMPTY);
    memset(&back, 0xff, sizeof back);
    assert_int_equal(sm_msg_poll_decode(json, len, &back, &err), 0);
    assert_int_equal(back.quarantined, 0);
    free(json);
    sm_msg_poll_fini(&back);

    /* A counter travels as a decimal string, like every 64-bit number here. */
    assert_poll_error(IDLE "\"acks\":[],\"results\":[],\"quarantined\":32}", SM_EPARSE,
                      "poll: quarantined: expected a decimal string");
    assert_poll_error(IDLE "\"acks\":[],\"results\":[],\"quarantined\":\"-1\"}", SM_EPARSE,
                      "poll: quarantined: '-1' is not an unsigned decimal");
}

#define PIN "sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="

static void test_msg_ready_and_start_carry_the_key_pin(void **state)
{
    (void)state;
    static sm_poll p, back;
    sm_error err;
    memset(&p, 0, sizeof p);
    snprintf(p.agent, sizeof p.agent, "h1");
    snprintf(p.boot, sizeof p.boot, "%s", BOOT);
    p.seq = 7;
    p.ready[0] = (sm_ready){12, 1, 40123, PIN};
    p.n_ready = 1;
    size_t len;
    char *json = sm_msg_poll_encode(&p, &len, &err);
    assert_string_equal(json,
                        READY("{\"job\":\"12\",\"attempt\":1,\"port\":40123,\"pin\":\"" PIN "\"}"));
    assert_int_equal(sm_msg_poll_decode(json, len, &back, &err), 0);
    assert_string_equal(back.ready[0].pin, PIN);
    free(json);
    sm_msg_poll_fini(&back);
    assert_poll_error(READY("{\"job\":\"12\",\"attempt\":1,\"port\":1,\"pin\":\"md5//x\"}"),
                      SM_EINVAL, "poll: ready[0]: pin: not sha256//");

    /* A start of a tls job needs the pin, and nothing else may carry one. */
    static sm_poll_reply r, rb;
    msg_fixture_reply_init(&r);
    sm_command *c = &r.commands[0];
    snprintf(c->id, sizeof c->id, "s1");
    c->kind = SM_CMD_START;
    c->job = 1;
    c->attempt = 1;
    sm_params_init(&c->params, SM_WL_HTTP);
    c->params.tls = true;
    c->params.scope = SM_SCOPE_PAIR;
    assert_int_equal(sm_params_validate(&c->params, &err), 0);
    snprintf(c->addr, sizeof c->addr, "10.0.0.2");
    c->port = 443;
    snprintf(c->pin, sizeof c->pin, "%s", PIN);
    r.n_commands = 1;
    json = sm_msg_reply_encode(&r, &len, &err);
    assert_non_null(json);
    assert_contains(json, "\"port\":443,\"pin\":\"" PIN "\"}");
    assert_int_equal(sm_msg_reply_decode(json, len, &rb, &err), 0);
    assert_string_equal(rb.commands[0].pin, PIN);
    free(json);
    c->pin[0] = '\0';
    json = sm_msg_reply_encode(&r, &len, &err);
    assert_int_equal(sm_msg_reply_decode(json, len, &rb, &err), SM_EPARSE);
    assert_contains(err.msg, "missing field 'pin' (required by tls)");
    free(json);
    assert_reply_error(CMD_HEAD
                       "{\"id\":\"s1\",\"type\":\"start\",\"job\":\"1\",\"attempt\":1," PARAMS
                       ",\"addr\":\"10.0.0.2\",\"port\":80,\"pin\":\"" PIN "\"}" CMD_TAIL,
                       SM_EPARSE, "reply: commands[0]: pin: not allowed without tls");
    assert_true(sm_msg_pin_valid(PIN));
    assert_false(sm_msg_pin_valid("sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU"));
    assert_false(sm_msg_pin_valid("sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hS\"FU="));
}

static void test_msg_poll_ready_rejects_bad_port_attempt_and_job(void **state)
{
    (void)state;
    assert_poll_error(READY("{\"job\":\"12\",\"attempt\":1,\"port\":0}"), SM_EINVAL,
                      "poll: ready[0]: port: 0 is below the minimum 1");
    assert_poll_error(READY("{\"job\":\"12\",\"attempt\":1,\"port\":65536}"), SM_EINVAL,
                      "poll: ready[0]: port: 65536 is above the maximum 65535");
    assert_poll_error(READY("{\"job\":\"12\",\"attempt\":1,\"port\":\"80\"}"), SM_EPARSE,
                      "poll: ready[0]: port");
    assert_poll_error(READY("{\"job\":\"12\",\"attempt\":1,\"port\":80.5}"), SM_EPARSE,
                      "poll: ready[0]: port");
    assert_poll_error(READY("{\"job\":\"12\",\"attempt\":0,\"port\":80}"), SM_EINVAL,
                      "poll: ready[0]: attempt: 0 is below the minimum 1");
    assert_poll_error(READY("{\"job\":\"12\",\"attempt\":1000001,\"port\":80}"), SM_EINVAL,
                      "poll: ready[0]: attempt");
    assert_poll_error(READY("{\"job\":12,\"attempt\":1,\"port\":80}"), SM_EPARSE,
                      "poll: ready[0]: job: expected a decimal string");
    assert_poll_error(READY("{\"job\":\"1\",\"attempt\":1,\"port\":80},"
                            "{\"job\":\"2\",\"attempt\":1}"),
                      SM_EPARSE, "poll: ready[1]: missing field 'port'");
    assert_poll_error(READY("{\"job\":\"12\",\"attempt\":1,\"port\":80,\"addr\":\"::1\"}"),
                      SM_EPARSE, "poll: ready[0]: unknown field 'addr'");
    assert_poll_error(IDLE "\"acks\":[],\"results\":[],\"ready\":{}}", SM_EPARSE,
                      "poll: ready: expected an array");
}

static void test_msg_poll_carries_at_most_4_ready(void **state)
{
    (void)state;
#define R(j) "{\"job\":\"" #j "\",\"attempt\":1,\"port\":4000" #j "}"
    assert_poll_error(READY(R(1) "," R(2) "," R(3) "," R(4) "," R(5)), SM_EINVAL,
                      "poll: ready: 5 entries is above the maximum 4");
    static sm_poll p;
    sm_error err;
    static const char four[] = READY(R(1) "," R(2) "," R(3) "," R(4));
#undef R
    assert_int_equal(sm_msg_poll_decode(four, sizeof four - 1, &p, &err), 0);
    assert_int_equal(p.n_ready, SM_POLL_READY_MAX);
    assert_int_equal(p.ready[3].job, 4);
    assert_int_equal(p.ready[3].port, 40004);

    size_t len = 5;
    memset(&p, 0, sizeof p);
    p.n_ready = SM_POLL_READY_MAX + 1;
    assert_null(sm_msg_poll_encode(&p, &len, &err));
    assert_int_equal(err.code, SM_EINVAL);
    assert_contains(err.msg, "poll: ready: 5 is above the maximum 4");
    assert_int_equal(len, 0);
}

#undef READY

static void test_msg_poll_results_carry_their_role(void **state)
{
    (void)state;
    static sm_poll p, back;
    sm_error err;
    sm_result_msg results[2];
    memset(&p, 0, sizeof p);
    snprintf(p.agent, sizeof p.agent, "h1");
    snprintf(p.boot, sizeof p.boot, "%s", BOOT);
    results[0] = (sm_result_msg){.job = 5, .attempt = 1, .role = SM_ROLE_CLIENT};
    results[1] = (sm_result_msg){.job = 6, .attempt = 1, .role = SM_ROLE_BOTH};
    sm_result_init(&results[0].result);
    sm_result_init(&results[1].result);
    p.results = results;
    p.n_results = 2;
    size_t len;
    char *json = sm_msg_poll_encode(&p, &len, &err);
    assert_non_null(json);
    assert_int_equal(sm_msg_poll_decode(json, len, &back, &err), 0);
    assert_int_equal(back.n_results, 2);
    assert_int_equal(back.results[0].role, SM_ROLE_CLIENT);
    assert_int_equal(back.results[1].role, SM_ROLE_BOTH);
    free(json);
    sm_msg_poll_fini(&back);

    results[0].role = (sm_role)7;
    assert_null(sm_msg_poll_encode(&p, &len, &err));
    assert_int_equal(err.code, SM_EINVAL);
    assert_contains(err.msg, "poll: results[0]: role");
    assert_null(sm_msg_result_encode(&results[0], &len, &err));
    assert_int_equal(err.code, SM_EINVAL);
    assert_contains(err.msg, "spooled result: role");
}

static void test_msg_facts_json_is_the_bare_facts_object(void **state)
{
    (void)state;
    sm_facts f;
    sm_error err;
    fill_facts(&f);
    char *json = sm_msg_facts_json(&f, &err);
    assert_non_null(json);
    assert_true(json[0] == '{');
    assert_contains(json, "\"hostname\":\"h1.lab\",");
    free(json);
}

/* ---- labels ---- */

static void test_msg_labels_parse_accepts_pairs(void **state)
{
    (void)state;
    sm_label labels[SM_LABELS_MAX];
    size_t n = 99;
    sm_error err;
    assert_int_equal(sm_labels_parse("rack=2,zone=eu-west.1,path=/a:b=c,empty=", labels, &n, &err),
                     0);
    assert_int_equal(n, 4);
    assert_string_equal(labels[0].key, "rack");
    assert_string_equal(labels[0].value, "2");
    assert_string_equal(labels[1].key, "zone");
    assert_string_equal(labels[1].value, "eu-west.1");
    assert_string_equal(labels[2].key, "path");
    assert_string_equal(labels[2].value, "/a:b=c");
    assert_string_equal(labels[3].key, "empty");
    assert_string_equal(labels[3].value, "");
    assert_int_equal(sm_labels_parse("", labels, &n, &err), 0);
    assert_int_equal(n, 0);

    char text[512];
    size_t at = 0;
    for (int i = 0; i < SM_LABELS_MAX; i++)
        at += (size_t)snprintf(text + at, sizeof text - at, "%sk%d=v", i ? "," : "", i);
    assert_int_equal(sm_labels_parse(text, labels, &n, &err), 0);
    assert_int_equal(n, SM_LABELS_MAX);
    snprintf(text + at, sizeof text - at, ",k99=v");
    assert_labels_error(text, "labels: 'k99=v': more than 16 labels");
}

static void test_msg_labels_parse_names_the_bad_pair(void **state)
{
    (void)state;
    assert_labels_error("rack", "labels: 'rack': expected key=value");
    assert_labels_error("rack=2,bad key=1", "labels: 'bad key=1': key 'bad key'");
    assert_labels_error("rack=2,=1", "labels: '=1': key ''");
    assert_labels_error("rack=a b", "labels: 'rack=a b': value 'a b'");
    assert_labels_error("rack=1,rack=2", "labels: 'rack=2': duplicate key");
    assert_labels_error("rack=1,", "labels: '': expected key=value");
    assert_labels_error("k23456789012345678901234567890123=1",
                        "labels: 'k23456789012345678901234567890123=1': key");
    sm_label labels[SM_LABELS_MAX];
    size_t n;
    sm_error err;
    assert_int_equal(sm_labels_parse(NULL, labels, &n, &err), SM_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_msg_poll_full_round_trips),
        cmocka_unit_test(test_msg_poll_minimal_idle_encodes_exactly_and_round_trips),
        cmocka_unit_test(test_msg_poll_rejects_unknown_and_missing_fields),
        cmocka_unit_test(test_msg_poll_wants_64_bit_counters_as_strings),
        cmocka_unit_test(test_msg_poll_rejects_bad_agent_and_boot),
        cmocka_unit_test(test_msg_poll_job_comes_with_busy_only),
        cmocka_unit_test(test_msg_poll_attempt_is_a_number_from_1_to_1000000),
        cmocka_unit_test(test_msg_poll_data_addr_is_an_ip_literal),
        cmocka_unit_test(test_msg_poll_labels_are_bounded),
        cmocka_unit_test(test_msg_poll_acks_are_bounded_command_ids),
        cmocka_unit_test(test_msg_poll_carries_at_most_32_results),
        cmocka_unit_test(test_msg_poll_bad_result_frees_the_good_ones),
        cmocka_unit_test(test_msg_poll_encode_refuses_counts_past_the_arrays),
        cmocka_unit_test(test_msg_poll_ready_encodes_exactly_and_round_trips),
        cmocka_unit_test(test_msg_poll_ready_rejects_bad_port_attempt_and_job),
        cmocka_unit_test(test_msg_poll_carries_at_most_4_ready),
        cmocka_unit_test(test_msg_ready_and_start_carry_the_key_pin),
        cmocka_unit_test(test_msg_poll_quarantined_count_is_optional_and_round_trips),
        cmocka_unit_test(test_msg_poll_results_carry_their_role),
        cmocka_unit_test(test_msg_facts_json_is_the_bare_facts_object),
        cmocka_unit_test(test_msg_labels_parse_accepts_pairs),
        cmocka_unit_test(test_msg_labels_parse_names_the_bad_pair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
