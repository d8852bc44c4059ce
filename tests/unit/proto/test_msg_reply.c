/* Unit tests of the coordinator's reply to a poll: its exact JSON, each command kind, the refusals,
 * and whom and what it answers. */
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

/* ---- reply ---- */

static void test_msg_reply_small_encodes_exactly(void **state)
{
    (void)state;
    static sm_poll_reply r;
    sm_error err;
    msg_fixture_reply_init(&r);
    r.ack_job[0] = 11;
    r.ack_attempt[0] = 1;
    r.n_acks = 1;
    snprintf(r.commands[0].id, sizeof r.commands[0].id, "x12.1");
    r.commands[0].kind = SM_CMD_CANCEL;
    r.commands[0].job = 12;
    r.commands[0].attempt = 2;
    snprintf(r.commands[1].id, sizeof r.commands[1].id, "s13.1");
    r.commands[1].kind = SM_CMD_START;
    r.commands[1].job = 13;
    r.commands[1].attempt = 1;
    sm_params_init(&r.commands[1].params, SM_WL_RR);
    r.commands[1].params.scope = SM_SCOPE_PAIR;
    snprintf(r.commands[1].addr, sizeof r.commands[1].addr, "10.213.0.12");
    r.commands[1].port = 40000;
    r.n_commands = 2;
    r.want_facts = true;
    size_t len;
    char *json = sm_msg_reply_encode(&r, &len, &err);
    assert_string_equal(json,
                        "{" REPLY_TO "\"acks\":[{\"job\":\"11\",\"attempt\":1}],\"commands\":["
                        "{\"id\":\"x12.1\",\"type\":\"cancel\",\"job\":\"12\",\"attempt\":2},"
                        "{\"id\":\"s13.1\",\"type\":\"start\",\"job\":\"13\",\"attempt\":1,"
                        "\"params\":{\"workload\":\"rr\",\"transport\":\"tcp\","
                        "\"scope\":\"pair\",\"req_size\":1,\"resp_size\":1,\"count\":10000,"
                        "\"nodelay\":false,\"sndbuf\":0,\"rcvbuf\":0,\"time_limit_ms\":0},"
                        "\"addr\":\"10.213.0.12\",\"port\":40000}],\"want_facts\":true}");
    assert_int_equal(len, strlen(json));
    free(json);

    msg_fixture_reply_init(&r);
    json = sm_msg_reply_encode(&r, &len, &err);
    assert_string_equal(json, "{" REPLY_TO "\"acks\":[],\"commands\":[],\"want_facts\":false}");
    free(json);
}

static void test_msg_reply_with_each_command_kind_round_trips(void **state)
{
    (void)state;
    static sm_poll_reply r, back;
    sm_error err;
    msg_fixture_reply_init(&r);
    for (size_t i = 0; i < 3; i++) {
        r.ack_job[i] = (1ull << 62) + i;
        r.ack_attempt[i] = (uint32_t)(i + 1);
    }
    r.n_acks = 3;
    static const sm_cmd_kind kinds[] = {SM_CMD_ASSIGN, SM_CMD_PREPARE, SM_CMD_START, SM_CMD_CANCEL};
    static const sm_workload_kind wls[] = {SM_WL_STREAM, SM_WL_RR, SM_WL_RR, SM_WL_CONNECT};
    for (size_t i = 0; i < 4; i++) {
        sm_command *c = &r.commands[i];
        snprintf(c->id, sizeof c->id, "%c12.%zu", sm_cmd_kind_name(kinds[i])[0], i + 1);
        c->kind = kinds[i];
        c->job = 12 + i;
        c->attempt = (uint32_t)(i + 1);
        if (kinds[i] != SM_CMD_CANCEL) {
            sm_params_init(&c->params, wls[i]);
            c->params.nodelay = true;
            c->params.sndbuf = 65536;
            assert_int_equal(sm_params_validate(&c->params, &err), 0);
        }
    }
    snprintf(r.commands[1].addr, sizeof r.commands[1].addr, "10.0.0.11");
    snprintf(r.commands[2].addr, sizeof r.commands[2].addr, "fd00::12");
    r.commands[2].port = 65535;
    r.n_commands = 4;

    size_t len;
    char *json = sm_msg_reply_encode(&r, &len, &err);
    assert_non_null(json);
    memset(&back, 0xff, sizeof back);
    if (sm_msg_reply_decode(json, len, &back, &err) != 0)
        fail_msg("%s: %s", json, err.msg);
    assert_int_equal(back.n_acks, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(back.ack_job[i], r.ack_job[i]);
        assert_int_equal(back.ack_attempt[i], r.ack_attempt[i]);
    }
    assert_int_equal(back.n_commands, 4);
    for (size_t i = 0; i < 4; i++) {
        const sm_command *a = &r.commands[i], *b = &back.commands[i];
        assert_string_equal(b->id, a->id);
        assert_int_equal(b->kind, a->kind);
        assert_int_equal(b->job, a->job);
        assert_int_equal(b->attempt, a->attempt);
        assert_params_equal(&b->params, &a->params);
        assert_string_equal(b->addr, a->addr);
        assert_int_equal(b->port, a->port);
    }
    assert_false(back.want_facts);
    assert_string_equal(sm_cmd_kind_name(SM_CMD_PREPARE), "prepare");
    free(json);
}

static void test_msg_reply_rejects_bad_commands(void **state)
{
    (void)state;
    assert_reply_error(CMD_HEAD
                       "{\"id\":\"x1\",\"type\":\"cancel\",\"job\":\"1\",\"attempt\":1," PARAMS
                       "}" CMD_TAIL,
                       SM_EPARSE, "reply: commands[0]: params: not allowed in cancel");
    assert_reply_error(CMD_HEAD
                       "{\"id\":\"a1\",\"type\":\"assign\",\"job\":\"1\",\"attempt\":1}" CMD_TAIL,
                       SM_EPARSE, "reply: commands[0]: missing field 'params'");
    assert_reply_error(CMD_HEAD
                       "{\"id\":\"a1\",\"type\":\"assign\",\"job\":\"1\",\"attempt\":1," PARAMS
                       ",\"port\":1}" CMD_TAIL,
                       SM_EPARSE, "reply: commands[0]: port: not allowed in assign");
    assert_reply_error(CMD_HEAD "{\"id\":\"a1\",\"type\":\"assign\",\"job\":\"1\",\"attempt\":1,"
                                "\"params\":{\"workload\":\"rr\",\"msg_size\":9}}" CMD_TAIL,
                       SM_EINVAL, "reply: commands[0]: params: msg_size");
    assert_reply_error(CMD_HEAD
                       "{\"id\":\"a1\",\"type\":\"assign\",\"job\":\"1\",\"attempt\":1," PARAMS
                       ",\"x\":1}" CMD_TAIL,
                       SM_EPARSE, "reply: commands[0]: unknown field 'x'");
    assert_reply_error(CMD_HEAD
                       "{\"id\":\"a1\",\"type\":\"reboot\",\"job\":\"1\",\"attempt\":1}" CMD_TAIL,
                       SM_EINVAL, "reply: commands[0]: type: unknown value 'reboot'");
    assert_reply_error(CMD_HEAD
                       "{\"id\":\"a1\",\"type\":\"cancel\",\"job\":1,\"attempt\":1}" CMD_TAIL,
                       SM_EPARSE, "reply: commands[0]: job: expected a decimal string");
    assert_reply_error(CMD_HEAD
                       "{\"id\":\"a1\",\"type\":\"cancel\",\"job\":\"1\",\"attempt\":0}" CMD_TAIL,
                       SM_EINVAL, "reply: commands[0]: attempt: 0 is below the minimum 1");
}

static void test_msg_reply_command_ids_are_short_and_plain(void **state)
{
    (void)state;
    assert_reply_error(CMD_HEAD
                       "{\"id\":\"c/1\",\"type\":\"cancel\",\"job\":\"1\",\"attempt\":1}" CMD_TAIL,
                       SM_EINVAL, "reply: commands[0]: id: 'c/1'");
    assert_reply_error(CMD_HEAD
                       "{\"id\":\"\",\"type\":\"cancel\",\"job\":\"1\",\"attempt\":1}" CMD_TAIL,
                       SM_EINVAL, "reply: commands[0]: id");
    assert_reply_error(CMD_HEAD "{\"id\":\"c1234567890123456789012345678901234567890\","
                                "\"type\":\"cancel\",\"job\":\"1\",\"attempt\":1}" CMD_TAIL,
                       SM_EINVAL, "reply: commands[0]: id");
    static sm_poll_reply r;
    sm_error err;
    static const char ok40[] = CMD_HEAD "{\"id\":\"c123456789012345678901234567890123456789\","
                                        "\"type\":\"cancel\",\"job\":\"1\",\"attempt\":1}" CMD_TAIL;
    assert_int_equal(sm_msg_reply_decode(ok40, sizeof ok40 - 1, &r, &err), 0);
    assert_int_equal(strlen(r.commands[0].id), 40);
}

static void test_msg_reply_start_needs_addr_and_port_1_to_65535(void **state)
{
    (void)state;
#define START "{\"id\":\"s1\",\"type\":\"start\",\"job\":\"1\",\"attempt\":1," PARAMS
    assert_reply_error(CMD_HEAD START ",\"addr\":\"10.0.0.2\"}" CMD_TAIL, SM_EPARSE,
                       "reply: commands[0]: missing field 'port'");
    assert_reply_error(CMD_HEAD START ",\"port\":4000}" CMD_TAIL, SM_EPARSE,
                       "reply: commands[0]: missing field 'addr'");
    assert_reply_error(CMD_HEAD START ",\"addr\":\"10.0.0.2\",\"port\":0}" CMD_TAIL, SM_EINVAL,
                       "reply: commands[0]: port: 0 is below the minimum 1");
    assert_reply_error(CMD_HEAD START ",\"addr\":\"10.0.0.2\",\"port\":65536}" CMD_TAIL, SM_EINVAL,
                       "reply: commands[0]: port: 65536 is above the maximum 65535");
    assert_reply_error(CMD_HEAD START ",\"addr\":\"10.0.0.2\",\"port\":\"80\"}" CMD_TAIL, SM_EPARSE,
                       "reply: commands[0]: port");
    assert_reply_error(CMD_HEAD START ",\"addr\":\"h2.lab\",\"port\":80}" CMD_TAIL, SM_EINVAL,
                       "reply: commands[0]: addr");
#undef START
}

static void test_msg_reply_prepare_may_name_the_client_address_and_nothing_else(void **state)
{
    (void)state;
#define PREPARE "{\"id\":\"p1\",\"type\":\"prepare\",\"job\":\"1\",\"attempt\":1," PARAMS
    static sm_poll_reply r;
    sm_error err;
    static const char with[] = CMD_HEAD PREPARE ",\"addr\":\"10.0.0.1\"}" CMD_TAIL;
    assert_int_equal(sm_msg_reply_decode(with, sizeof with - 1, &r, &err), 0);
    assert_string_equal(r.commands[0].addr, "10.0.0.1");
    static const char without[] = CMD_HEAD PREPARE "}" CMD_TAIL;
    assert_int_equal(sm_msg_reply_decode(without, sizeof without - 1, &r, &err), 0);
    assert_string_equal(r.commands[0].addr, "");
    assert_reply_error(CMD_HEAD PREPARE ",\"addr\":\"h1.lab\"}" CMD_TAIL, SM_EINVAL,
                       "reply: commands[0]: addr");
    assert_reply_error(CMD_HEAD PREPARE ",\"addr\":\"10.0.0.1\",\"port\":1}" CMD_TAIL, SM_EPARSE,
                       "reply: commands[0]: port: not allowed in prepare");
#undef PREPARE
}

static void test_msg_reply_rejects_bad_acks_and_too_many(void **state)
{
    (void)state;
    assert_reply_error("{" REPLY_TO "\"acks\":[{\"job\":11,\"attempt\":1}],\"commands\":[]}",
                       SM_EPARSE, "reply: acks[0]: job: expected a decimal string");
    assert_reply_error("{" REPLY_TO "\"acks\":[{\"job\":\"11\"}],\"commands\":[]}", SM_EPARSE,
                       "reply: acks[0]: missing field 'attempt'");
    assert_reply_error("{" REPLY_TO "\"acks\":[],\"commands\":[],\"want_facts\":1}", SM_EPARSE,
                       "reply: want_facts");
    assert_reply_error("{" REPLY_TO "\"acks\":[],\"commands\":[],\"hold\":1}", SM_EPARSE,
                       "reply: unknown field 'hold'");
    assert_reply_error("{" REPLY_TO "\"acks\":[]}", SM_EPARSE, "reply: missing field 'commands'");

    char json[4096];
    size_t at = (size_t)snprintf(json, sizeof json, "{" REPLY_TO "\"acks\":[");
    for (int i = 0; i <= SM_REPLY_ACKS_MAX; i++)
        at += (size_t)snprintf(json + at, sizeof json - at, "%s{\"job\":\"%d\",\"attempt\":1}",
                               i ? "," : "", i);
    snprintf(json + at, sizeof json - at, "],\"commands\":[]}");
    assert_reply_error(json, SM_EINVAL, "reply: acks: 65 entries is above the maximum 64");

    at = (size_t)snprintf(json, sizeof json, CMD_HEAD);
    for (int i = 0; i <= SM_REPLY_COMMANDS_MAX; i++)
        at += (size_t)snprintf(json + at, sizeof json - at,
                               "%s{\"id\":\"x%d\",\"type\":\"cancel\",\"job\":\"1\",\"attempt\":1}",
                               i ? "," : "", i);
    snprintf(json + at, sizeof json - at, CMD_TAIL);
    assert_reply_error(json, SM_EINVAL, "reply: commands: 17 entries is above the maximum 16");
}

static void test_msg_reply_must_name_its_agent_and_poll(void **state)
{
    (void)state;
    static sm_poll_reply r, back;
    sm_error err;
    msg_fixture_reply_init(&r);
    size_t len;
    char *json = sm_msg_reply_encode(&r, &len, &err);
    assert_non_null(json);
    assert_int_equal(sm_msg_reply_decode(json, len, &back, &err), 0);
    assert_string_equal(back.to, "h1");
    assert_string_equal(back.poll, REPLY_NONCE);
    free(json);

    assert_reply_error("{\"poll\":\"" REPLY_NONCE "\",\"acks\":[],\"commands\":[]}", SM_EPARSE,
                       "reply: missing field 'to'");
    assert_reply_error("{\"to\":\"h1\",\"acks\":[],\"commands\":[]}", SM_EPARSE,
                       "reply: missing field 'poll'");
    assert_reply_error("{\"to\":\"coordinator\",\"poll\":\"" REPLY_NONCE
                       "\",\"acks\":[],\"commands\":[]}",
                       SM_EINVAL, "reply: to: 'coordinator' is not an agent name");
    assert_reply_error("{\"to\":\"h 1\",\"poll\":\"" REPLY_NONCE "\",\"acks\":[],\"commands\":[]}",
                       SM_EINVAL, "reply: to:");
    assert_reply_error("{\"to\":\"h1\",\"poll\":\"0123\",\"acks\":[],\"commands\":[]}", SM_EINVAL,
                       "reply: poll: not 32 lowercase hex digits");

    r.to[0] = '\0';
    assert_null(sm_msg_reply_encode(&r, &len, &err));
    assert_contains(err.msg, "reply: to");
    msg_fixture_reply_init(&r);
    r.poll[3] = 'X';
    assert_null(sm_msg_reply_encode(&r, &len, &err));
    assert_contains(err.msg, "reply: poll");
}

static void test_msg_reply_carries_the_store_id_and_decodes_without_it(void **state)
{
    (void)state;
    static sm_poll_reply r, back;
    sm_error err;
    msg_fixture_reply_init(&r);
    snprintf(r.store, sizeof r.store, STORE_ID);
    size_t len;
    char *json = sm_msg_reply_encode(&r, &len, &err);
    assert_string_equal(json, "{" REPLY_TO "\"acks\":[],\"commands\":[],\"want_facts\":false,"
                              "\"store\":\"" STORE_ID "\"}");
    memset(&back, 0xff, sizeof back);
    assert_int_equal(sm_msg_reply_decode(json, len, &back, &err), 0);
    assert_string_equal(back.store, STORE_ID);
    free(json);

    /* A coordinator from before store ids: the reply still decodes, with no id. */
    static const char old[] = "{" REPLY_TO "\"acks\":[],\"commands\":[],\"want_facts\":true}";
    memset(&back, 0xff, sizeof back);
    assert_int_equal(sm_msg_reply_decode(old, sizeof old - 1, &back, &err), 0);
    assert_string_equal(back.store, "");
    assert_true(back.want_facts);

    assert_reply_error("{" REPLY_TO "\"acks\":[],\"commands\":[],\"store\":\"0123\"}", SM_EINVAL,
                       "reply: store: '0123' is not 32 lowercase hex digits");
    assert_reply_error("{" REPLY_TO "\"acks\":[],\"commands\":[],\"store\":"
                       "\"0123456789ABCDEF0123456789abcdef\"}",
                       SM_EINVAL, "reply: store: ");
    assert_reply_error("{" REPLY_TO "\"acks\":[],\"commands\":[],\"store\":7}", SM_EPARSE,
                       "reply: store: expected a string");

    snprintf(r.store, sizeof r.store, "not-hex");
    assert_null(sm_msg_reply_encode(&r, &len, &err));
    assert_int_equal(err.code, SM_EINVAL);
    assert_contains(err.msg, "reply: store");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_msg_reply_small_encodes_exactly),
        cmocka_unit_test(test_msg_reply_with_each_command_kind_round_trips),
        cmocka_unit_test(test_msg_reply_rejects_bad_commands),
        cmocka_unit_test(test_msg_reply_command_ids_are_short_and_plain),
        cmocka_unit_test(test_msg_reply_start_needs_addr_and_port_1_to_65535),
        cmocka_unit_test(test_msg_reply_prepare_may_name_the_client_address_and_nothing_else),
        cmocka_unit_test(test_msg_reply_rejects_bad_acks_and_too_many),
        cmocka_unit_test(test_msg_reply_carries_the_store_id_and_decodes_without_it),
        cmocka_unit_test(test_msg_reply_must_name_its_agent_and_poll),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
