/* Unit tests of the spooled result, the message an agent keeps until the coordinator acks it: round
 * trips, its role and store id, and the refusals. */
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

#define assert_result_msg_error(json, code, part)                                                  \
    check_result_msg_error((json), (code), (part), __FILE__, __LINE__)

static void check_result_msg_error(const char *json, int code, const char *part, const char *file,
                                   int line)
{
    sm_result_msg m;
    sm_error err;
    memset(&m, 0xff, sizeof m);
    sm_error_clear(&err);
    int rc = sm_msg_result_decode(json, strlen(json), &m, &err);
    msg_fixture_check_code(rc, &err, code, file, line);
    msg_fixture_check_contains(err.msg, part, file, line);
    _assert_true(m.job == 0 && m.attempt == 0 && m.result.hist == NULL && m.result.have == 0 &&
                     !m.result.ok,
                 "result left empty", file, line);
}

/* ---- spooled result ---- */

static void test_msg_spooled_result_round_trips(void **state)
{
    (void)state;
    sm_result_msg m = {0}, back;
    sm_error err;
    m.job = UINT64_MAX;
    m.attempt = 2;
    m.role = SM_ROLE_BOTH;
    msg_fixture_fill_ok_result(&m.result);
    size_t len;
    char *json = sm_msg_result_encode(&m, &len, &err);
    assert_non_null(json);
    assert_int_equal(len, strlen(json));
    assert_contains(json,
                    "{\"job\":\"18446744073709551615\",\"attempt\":2,\"result\":{\"ok\":true,");
    if (sm_msg_result_decode(json, len, &back, &err) != 0)
        fail_msg("%s: %s", json, err.msg);
    assert_int_equal(back.job, UINT64_MAX);
    assert_int_equal(back.attempt, 2);
    msg_fixture_assert_result_equal(&back.result, &m.result);

    /* The store's text of the result is the same object the spool entry holds. */
    char *bare = sm_msg_result_json(&m.result, &err);
    assert_non_null(bare);
    assert_contains(json, bare);
    free(bare);
    free(json);
    sm_result_fini(&back.result);
    sm_result_fini(&m.result);
}

static void test_msg_spooled_result_role_is_omitted_for_both(void **state)
{
    (void)state;
    static const sm_role roles[] = {SM_ROLE_BOTH, SM_ROLE_SERVER, SM_ROLE_CLIENT};
    static const char *const heads[] = {
        "{\"job\":\"11\",\"attempt\":1,\"result\":{",
        "{\"job\":\"11\",\"attempt\":1,\"role\":\"server\",\"result\":{",
        "{\"job\":\"11\",\"attempt\":1,\"role\":\"client\",\"result\":{"};
    for (size_t i = 0; i < 3; i++) {
        sm_result_msg m = {.job = 11, .attempt = 1, .role = roles[i]}, back;
        sm_error err;
        msg_fixture_fill_ok_result(&m.result);
        size_t len;
        char *json = sm_msg_result_encode(&m, &len, &err);
        assert_non_null(json);
        assert_true(strncmp(json, heads[i], strlen(heads[i])) == 0);
        memset(&back, 0xff, sizeof back);
        if (sm_msg_result_decode(json, len, &back, &err) != 0)
            fail_msg("%s: %s", json, err.msg);
        assert_int_equal(back.role, roles[i]);
        msg_fixture_assert_result_equal(&back.result, &m.result);
        free(json);
        sm_result_fini(&back.result);
        sm_result_fini(&m.result);
    }
    assert_string_equal(sm_role_name(SM_ROLE_BOTH), "both");
    assert_string_equal(sm_role_name(SM_ROLE_SERVER), "server");
    assert_string_equal(sm_role_name(SM_ROLE_CLIENT), "client");
    assert_string_equal(sm_role_name((sm_role)3), "unknown");
}

static void test_msg_spooled_result_carries_its_store_id_when_known(void **state)
{
    (void)state;
    sm_result_msg m = {.job = 3, .attempt = 1, .role = SM_ROLE_SERVER}, back;
    sm_error err;
    snprintf(m.store, sizeof m.store, STORE_ID);
    msg_fixture_fill_ok_result(&m.result);
    size_t len;
    char *json = sm_msg_result_encode(&m, &len, &err);
    assert_non_null(json);
    assert_contains(json, "{\"job\":\"3\",\"attempt\":1,\"role\":\"server\",\"store\":\"" STORE_ID
                          "\",\"result\":{");
    memset(&back, 0xff, sizeof back);
    if (sm_msg_result_decode(json, len, &back, &err) != 0)
        fail_msg("%s: %s", json, err.msg);
    assert_string_equal(back.store, STORE_ID);
    assert_int_equal(back.role, SM_ROLE_SERVER);
    free(json);
    sm_result_fini(&back.result);

    /* Unknown: left out, and a result spooled before store ids reads with none. */
    m.store[0] = '\0';
    json = sm_msg_result_encode(&m, &len, &err);
    assert_non_null(json);
    assert_null(strstr(json, "store"));
    memset(&back, 0xff, sizeof back);
    assert_int_equal(sm_msg_result_decode(json, len, &back, &err), 0);
    assert_string_equal(back.store, "");
    free(json);
    sm_result_fini(&back.result);
    sm_result_fini(&m.result);

    assert_result_msg_error("{\"job\":\"11\",\"attempt\":1,\"store\":\"xyz\",\"result\":"
                            "{\"ok\":true}}",
                            SM_EINVAL, "spooled result: store: 'xyz'");
    assert_poll_error(IDLE "\"acks\":[],\"results\":[{\"job\":\"2\",\"attempt\":1,"
                           "\"store\":\"\",\"result\":{\"ok\":true}}]}",
                      SM_EINVAL, "poll: results[0]: store: ");
}

static void test_msg_spooled_result_rejects_bad_role(void **state)
{
    (void)state;
    /* A missing role is "both"; the word itself has no place on the wire. */
    assert_result_msg_error("{\"job\":\"11\",\"attempt\":1,\"role\":\"both\",\"result\":"
                            "{\"ok\":true}}",
                            SM_EINVAL, "spooled result: role: 'both' is not server or client");
    assert_result_msg_error("{\"job\":\"11\",\"attempt\":1,\"role\":\"Server\",\"result\":"
                            "{\"ok\":true}}",
                            SM_EINVAL, "spooled result: role: 'Server'");
    assert_result_msg_error("{\"job\":\"11\",\"attempt\":1,\"role\":1,\"result\":"
                            "{\"ok\":true}}",
                            SM_EPARSE, "spooled result: role: expected a string");
    assert_poll_error(IDLE "\"acks\":[],\"results\":[{\"job\":\"2\",\"attempt\":1,"
                           "\"role\":\"peer\",\"result\":{\"ok\":true}}]}",
                      SM_EINVAL, "poll: results[0]: role: 'peer'");
}

static void test_msg_spooled_result_rejects_bad_entries(void **state)
{
    (void)state;
    assert_result_msg_error("{\"job\":11,\"attempt\":1,\"result\":{\"ok\":true}}", SM_EPARSE,
                            "spooled result: job: expected a decimal string");
    assert_result_msg_error("{\"job\":\"11\",\"attempt\":0,\"result\":{\"ok\":true}}", SM_EINVAL,
                            "spooled result: attempt: 0 is below the minimum 1");
    assert_result_msg_error("{\"job\":\"11\",\"attempt\":1}", SM_EPARSE,
                            "spooled result: missing field 'result'");
    assert_result_msg_error("{\"job\":\"11\",\"attempt\":1,\"result\":{\"ok\":true},\"x\":1}",
                            SM_EPARSE, "spooled result: unknown field 'x'");
    assert_result_msg_error("{\"job\":\"11\",\"attempt\":1,\"result\":{\"ok\":true,\"metrics\":"
                            "{\"speed\":1}}}",
                            SM_EPARSE, "spooled result: result: metrics: unknown metric 'speed'");
    assert_result_msg_error("{\"job\":\"11\",\"attempt\":1,\"result\":{\"ok\":true}} x", SM_EPARSE,
                            "spooled result: junk");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_msg_spooled_result_round_trips),
        cmocka_unit_test(test_msg_spooled_result_role_is_omitted_for_both),
        cmocka_unit_test(test_msg_spooled_result_rejects_bad_role),
        cmocka_unit_test(test_msg_spooled_result_rejects_bad_entries),
        cmocka_unit_test(test_msg_spooled_result_carries_its_store_id_when_known),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
