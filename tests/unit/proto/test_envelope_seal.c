/* Unit tests of the envelope's seal: the documented bytes and MAC, a fresh nonce each time, one
 * direction, and the refusals. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "proto/envelope.h"
#include "tests/unit/proto/envelope_fixture.h"

static void test_env_seal_then_open_returns_the_same_body_bytes(void **state)
{
    (void)state;
    const char *body = "{\"seq\":\"7\",\"acks\":[\"c1\",\"c2\"],\"s\":\"caf\\u00e9 \\\"q\\\"\"}";
    size_t len = 0;
    char *env = envelope_fixture_seal("agent-01.rack_2", T0, body, &len);
    assert_int_equal(len, strlen(env));

    sm_env e;
    sm_error err;
    assert_int_equal(sm_env_open(KEY, SM_DIR_TO_COORDINATOR, env, len, T0, &e, &err), SM_REJ_NONE);
    assert_string_equal(e.name, "agent-01.rack_2");
    assert_int_equal(e.ts_ms, T0);
    assert_int_equal(strlen(e.nonce), SM_NONCE_HEX);
    assert_int_equal(e.body_len, strlen(body));
    assert_memory_equal(e.body, body, strlen(body));
    assert_ptr_equal(e.body + e.body_len + 1, env + len); /* body points into the text */

    assert_int_equal(envelope_fixture_open_copy(KEY, env, len, T0, &e, &err), SM_REJ_NONE);
    free(env);
}

static void test_env_seal_writes_the_documented_bytes_and_mac(void **state)
{
    (void)state;
    size_t len = 0;
    char *env = envelope_fixture_seal("h1", T0, "[1,2]", &len);
    char nonce[64], mac[128];
    envelope_fixture_field(env, "nonce", nonce, sizeof nonce);
    envelope_fixture_field(env, "mac", mac, sizeof mac);
    assert_int_equal(strlen(nonce), 32);
    assert_int_equal(strspn(nonce, "0123456789abcdef"), 32);
    assert_int_equal(strlen(mac), 64);

    char ts[24];
    snprintf(ts, sizeof ts, "%" PRIu64, (uint64_t)T0);
    char *want = envelope_fixture_forge("2", "h1", ts, nonce, "[1,2]");
    assert_string_equal(env, want);
    free(want);
    free(env);
}

static void test_env_seal_draws_a_fresh_nonce_each_time(void **state)
{
    (void)state;
    char *a = envelope_fixture_seal("h1", T0, "{}", NULL),
         *b = envelope_fixture_seal("h1", T0, "{}", NULL);
    char na[64], nb[64];
    envelope_fixture_field(a, "nonce", na, sizeof na);
    envelope_fixture_field(b, "nonce", nb, sizeof nb);
    assert_string_not_equal(na, nb);
    free(a);
    free(b);
}

static void test_env_seal_refuses_bad_name_bad_body_and_oversize(void **state)
{
    (void)state;
    sm_error err;
    size_t len = 77;
    assert_null(sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, "bad name", T0, "{}", 2, &len, NULL, &err));
    assert_int_equal(err.code, SM_EINVAL);
    assert_int_equal(len, 77);
    assert_null(sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, "", T0, "{}", 2, &len, NULL, &err));
    assert_int_equal(err.code, SM_EINVAL);
    assert_null(sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, "h1", T0, " {}", 3, &len, NULL, &err));
    assert_int_equal(err.code, SM_EINVAL);
    assert_null(sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, "h1", T0, "", 0, &len, NULL, &err));
    assert_int_equal(err.code, SM_EINVAL);
    assert_null(
        sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, "h1", (1ull << 53) + 1, "{}", 2, &len, NULL, &err));
    assert_int_equal(err.code, SM_EINVAL);

    /* A string body sized so the envelope is exactly SM_MSG_MAX, then one byte more. */
    char *probe = envelope_fixture_seal("h1", T0, "\"\"", &len);
    size_t overhead = len - 2;
    free(probe);
    size_t body_len = SM_MSG_MAX - overhead;
    char *body = malloc(body_len + 2);
    assert_non_null(body);
    memset(body, 'x', body_len + 1);
    body[0] = '"';
    body[body_len - 1] = '"';
    char *env = sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, "h1", T0, body, body_len, &len, NULL, &err);
    assert_non_null(env);
    assert_int_equal(len, SM_MSG_MAX);
    free(env);
    body[body_len] = '"';
    body[body_len - 1] = 'x';
    assert_null(
        sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, "h1", T0, body, body_len + 1, &len, NULL, &err));
    assert_int_equal(err.code, SM_EINVAL);
    assert_contains(err.msg, "limit");
    free(body);
}

static void test_env_sealed_for_one_direction_never_opens_in_the_other(void **state)
{
    (void)state;
    sm_error err;
    size_t len;
    sm_env e;
    char *up = sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, "h1", T0, "{}", 2, &len, NULL, &err);
    assert_non_null(up);
    assert_int_equal(sm_env_open(KEY, SM_DIR_TO_COORDINATOR, up, len, T0, &e, &err), SM_REJ_NONE);
    assert_int_equal(sm_env_open(KEY, SM_DIR_TO_AGENT, up, len, T0, &e, &err), SM_REJ_MAC);
    char *down = sm_env_seal(KEY, SM_DIR_TO_AGENT, "coordinator", T0, "{}", 2, &len, NULL, &err);
    assert_non_null(down);
    assert_int_equal(sm_env_open(KEY, SM_DIR_TO_AGENT, down, len, T0, &e, &err), SM_REJ_NONE);
    assert_int_equal(sm_env_open(KEY, SM_DIR_TO_COORDINATOR, down, len, T0, &e, &err), SM_REJ_MAC);
    free(up);
    free(down);
}

static void test_env_seal_hands_back_the_nonce_it_wrote(void **state)
{
    (void)state;
    sm_error err;
    size_t len;
    char nonce[SM_NONCE_HEX + 1], in_text[64];
    char *env = sm_env_seal(KEY, SM_DIR_TO_COORDINATOR, "h1", T0, "{}", 2, &len, nonce, &err);
    assert_non_null(env);
    envelope_fixture_field(env, "nonce", in_text, sizeof in_text);
    assert_string_equal(nonce, in_text);
    free(env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_seal_then_open_returns_the_same_body_bytes),
        cmocka_unit_test(test_env_seal_writes_the_documented_bytes_and_mac),
        cmocka_unit_test(test_env_seal_draws_a_fresh_nonce_each_time),
        cmocka_unit_test(test_env_seal_refuses_bad_name_bad_body_and_oversize),
        cmocka_unit_test(test_env_sealed_for_one_direction_never_opens_in_the_other),
        cmocka_unit_test(test_env_seal_hands_back_the_nonce_it_wrote),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
