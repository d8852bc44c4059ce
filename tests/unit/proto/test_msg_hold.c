/* How long a poll waits and how long it is held, on the wire: a poll's "wait_ms" and a
 * reply's "hold_ms", both optional (left out at 0, so that a peer from before them, which
 * refuses unknown keys, never sees them) and bounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/msg.h"

#define BOOT  "0123456789abcdef0123456789abcdef"
#define NONCE "00112233445566778899aabbccddeeff"

static void must(int rc, const sm_error *err)
{
    if (rc != 0)
        fail_msg("%s", err->msg);
}

static void test_a_poll_says_its_wait_only_when_it_has_one(void **state)
{
    (void)state;
    static sm_poll p, back;
    sm_error err = {0};
    memset(&p, 0, sizeof p);
    snprintf(p.agent, sizeof p.agent, "h2");
    snprintf(p.boot, sizeof p.boot, "%s", BOOT);
    size_t len = 0;
    char *json = sm_msg_poll_encode(&p, &len, &err);
    assert_non_null(json);
    assert_null(strstr(json, "wait_ms"));
    must(sm_msg_poll_decode(json, len, &back, &err), &err);
    assert_int_equal(back.wait_ms, 0);
    sm_msg_poll_fini(&back);
    free(json);
    p.wait_ms = 30000;
    json = sm_msg_poll_encode(&p, &len, &err);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"wait_ms\":30000"));
    must(sm_msg_poll_decode(json, len, &back, &err), &err);
    assert_int_equal(back.wait_ms, 30000);
    sm_msg_poll_fini(&back);
    free(json);
}

static void test_a_reply_says_the_hold_only_when_it_has_one(void **state)
{
    (void)state;
    sm_poll_reply r, back;
    sm_error err = {0};
    memset(&r, 0, sizeof r);
    snprintf(r.to, sizeof r.to, "h2");
    snprintf(r.poll, sizeof r.poll, NONCE);
    size_t len = 0;
    char *json = sm_msg_reply_encode(&r, &len, &err);
    assert_non_null(json);
    assert_null(strstr(json, "hold_ms"));
    free(json);
    r.hold_ms = 25000;
    json = sm_msg_reply_encode(&r, &len, &err);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"hold_ms\":25000"));
    must(sm_msg_reply_decode(json, len, &back, &err), &err);
    assert_int_equal(back.hold_ms, 25000);
    free(json);
}

static void test_a_wait_or_hold_out_of_bounds_is_refused_naming_it(void **state)
{
    (void)state;
    static sm_poll p;
    sm_poll_reply r;
    sm_error err = {0};
    static const char *const polls[] = {
        "{\"agent\":\"h2\",\"boot\":\"" BOOT "\",\"seq\":\"1\",\"state\":\"idle\",\"acks\":[],"
        "\"results\":[],\"wait_ms\":99}",
        "{\"agent\":\"h2\",\"boot\":\"" BOOT "\",\"seq\":\"1\",\"state\":\"idle\",\"acks\":[],"
        "\"results\":[],\"wait_ms\":600001}",
        "{\"agent\":\"h2\",\"boot\":\"" BOOT "\",\"seq\":\"1\",\"state\":\"idle\",\"acks\":[],"
        "\"results\":[],\"wait_ms\":\"30000\"}",
    };
    for (size_t i = 0; i < sizeof polls / sizeof polls[0]; i++) {
        memset(&err, 0, sizeof err);
        assert_int_not_equal(sm_msg_poll_decode(polls[i], strlen(polls[i]), &p, &err), 0);
        assert_non_null(strstr(err.msg, "wait_ms"));
    }
    static const char *const replies[] = {
        "{\"to\":\"h2\",\"poll\":\"" NONCE "\",\"acks\":[],\"commands\":[],\"hold_ms\":0}",
        "{\"to\":\"h2\",\"poll\":\"" NONCE "\",\"acks\":[],\"commands\":[],\"hold_ms\":1e9}",
        "{\"to\":\"h2\",\"poll\":\"" NONCE "\",\"acks\":[],\"commands\":[],\"hold_ms\":true}",
    };
    for (size_t i = 0; i < sizeof replies / sizeof replies[0]; i++) {
        memset(&err, 0, sizeof err);
        assert_int_not_equal(sm_msg_reply_decode(replies[i], strlen(replies[i]), &r, &err), 0);
        assert_non_null(strstr(err.msg, "hold_ms"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_poll_says_its_wait_only_when_it_has_one),
        cmocka_unit_test(test_a_reply_says_the_hold_only_when_it_has_one),
        cmocka_unit_test(test_a_wait_or_hold_out_of_bounds_is_refused_naming_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
