/* What proto/msg's unit tests share: the wire's fixed parts as string literals, and checks of
 * what decoding gives and refuses (cmocka assertions). */
#ifndef SM_TESTS_UNIT_MSG_FIXTURE_H
#define SM_TESTS_UNIT_MSG_FIXTURE_H

#include "proto/msg.h"

/* The head of h1's poll, idle or busy, before its acks and results. */
#define BOOT        "0123456789abcdef0123456789abcdef"
#define HEAD        "{\"agent\":\"h1\",\"boot\":\"" BOOT "\",\"seq\":\"7\","
#define IDLE        HEAD "\"state\":\"idle\","
#define BUSY        HEAD "\"state\":\"busy\",\"job\":\"12\",\"attempt\":1,"
#define REPLY_NONCE "0123456789abcdef0123456789abcdef"
#define REPLY_TO    "\"to\":\"h1\",\"poll\":\"" REPLY_NONCE "\","
#define CMD_HEAD    "{" REPLY_TO "\"acks\":[],\"commands\":["
#define CMD_TAIL    "]}"

/* An empty reply to h1's poll REPLY_NONCE: every reply names both. */
void msg_fixture_reply_init(sm_poll_reply *r);

#define PARAMS "\"params\":{\"workload\":\"rr\"}"

/* Fails the test at file:line unless text holds part. */
#define assert_contains(text, part) msg_fixture_check_contains((text), (part), __FILE__, __LINE__)
void msg_fixture_check_contains(const char *text, const char *part, const char *file, int line);
/* rc and err->code are both code; fails the test at file:line otherwise. */
void msg_fixture_check_code(int rc, const sm_error *err, int code, const char *file, int line);

/* Decoding fails with `code`, a reason mentioning `part`, and *out left all zero. */
#define assert_poll_error(json, code, part)                                                        \
    msg_fixture_check_poll_error((json), (code), (part), __FILE__, __LINE__)

void msg_fixture_check_poll_error(const char *json, int code, const char *part, const char *file,
                                  int line);
/* As assert_poll_error, for a reply. */
#define assert_reply_error(json, code, part)                                                       \
    msg_fixture_check_reply_error((json), (code), (part), __FILE__, __LINE__)

void msg_fixture_check_reply_error(const char *json, int code, const char *part, const char *file,
                                   int line);
/* *r = a good result with two metrics, buffers, a CPU and a histogram of five samples (the
 * caller finis it). */
void msg_fixture_fill_ok_result(sm_result *r);
/* Each field of two histograms, and of two results, equal (cmocka assertions). */
void msg_fixture_assert_hist_equal(const sm_hist *a, const sm_hist *b);
void msg_fixture_assert_result_equal(const sm_result *a, const sm_result *b);

/* A store id as the coordinator makes them. */
#define STORE_ID "0123456789abcdef0123456789abcdef"

#endif
