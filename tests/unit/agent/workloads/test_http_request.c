/* Unit tests of the built-in source's request head parser (agent/workloads/http_request.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/workloads/http_request.h"
#include "proto/params.h"

/* Parses a whole head given as a C string; returns the status, *rq and *why as the parser
 * left them. The head must be complete: its end is where the string ends. */
static int parse(const char *head, sm_http_request *rq, const char **why)
{
    size_t len = strlen(head);
    assert_int_equal(sm_http_head_end(head, len), len);
    memset(rq, 0xa5, sizeof *rq);
    *why = NULL;
    return sm_http_parse_head(head, len, rq, why);
}

static void test_http_request_head_end_waits_for_the_empty_line(void **state)
{
    (void)state;
    static const char crlf[] = "GET /bytes/1 HTTP/1.1\r\nHost: h\r\n\r\nGET";
    assert_int_equal(sm_http_head_end(crlf, 10), 0);
    assert_int_equal(sm_http_head_end(crlf, 33), 0); /* the empty line's CR only */
    assert_int_equal(sm_http_head_end(crlf, sizeof crlf - 1), 34);
    static const char lf[] = "GET /bytes/1 HTTP/1.1\nHost: h\n\n";
    assert_int_equal(sm_http_head_end(lf, sizeof lf - 1), sizeof lf - 1);
    assert_int_equal(sm_http_head_end("", 0), 0);
    assert_int_equal(sm_http_head_end("\n", 1), 0);
}

static void test_http_request_get_bytes_n_keeps_the_connection_in_http_1_1(void **state)
{
    (void)state;
    sm_http_request rq;
    const char *why;
    assert_int_equal(parse("GET /bytes/100 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n", &rq, &why), 200);
    assert_int_equal(rq.size, 100);
    assert_false(rq.close);
    assert_false(rq.http10);
    assert_int_equal(parse("GET /bytes/17179869184 HTTP/1.1\r\n\r\n", &rq, &why), 200);
    assert_int_equal(rq.size, SM_HTTP_SIZE_MAX);
    assert_int_equal(parse("GET /bytes/7 HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &rq, &why), 200);
}

static void test_http_request_connection_header_and_http_1_0_decide_the_close(void **state)
{
    (void)state;
    sm_http_request rq;
    const char *why;
    assert_int_equal(parse("GET /bytes/1 HTTP/1.1\r\nConnection:  Close \r\n\r\n", &rq, &why), 200);
    assert_true(rq.close);
    assert_int_equal(
        parse("GET /bytes/1 HTTP/1.1\r\nconnection: keep-alive, close\r\n\r\n", &rq, &why), 200);
    assert_true(rq.close);
    assert_int_equal(parse("GET /bytes/1 HTTP/1.0\r\n\r\n", &rq, &why), 200);
    assert_true(rq.http10);
    assert_true(rq.close);
    assert_int_equal(parse("GET /bytes/1 HTTP/1.0\nConnection: Keep-Alive\n\n", &rq, &why), 200);
    assert_false(rq.close);
}

static void test_http_request_bad_heads_get_their_status_and_a_reason(void **state)
{
    (void)state;
    static const struct {
        const char *head;
        int status;
        const char *why;
    } cases[] = {
        {"POST /bytes/1 HTTP/1.1\r\n\r\n", 405, "only GET"},
        {"get /bytes/1 HTTP/1.1\r\n\r\n", 405, "only GET"},
        {"GET /nope HTTP/1.1\r\n\r\n", 404, "no such path"},
        {"GET /bytes/0 HTTP/1.1\r\n\r\n", 404, "out of"},
        {"GET /bytes/17179869185 HTTP/1.1\r\n\r\n", 404, "out of"},
        {"GET /bytes/99999999999999999999999 HTTP/1.1\r\n\r\n", 404, "out of"},
        {"GET /bytes/ HTTP/1.1\r\n\r\n", 400, "no size"},
        {"GET /bytes/12a HTTP/1.1\r\n\r\n", 400, "not a decimal"},
        {"GET /bytes/1 HTTP/2.0\r\n\r\n", 400, "request line"},
        {"GET /bytes/1 http/1.1\r\n\r\n", 400, "request line"},
        {"GET  /bytes/1 HTTP/1.1\r\n\r\n", 400, "request line"},
        {"GET bytes/1 HTTP/1.1\r\n\r\n", 400, "request line"},
        {"GET /bytes/1 HTTP/1.1\r\nHost h\r\n\r\n", 400, "header line"},
        {"GET /bytes/1 HTTP/1.1\r\nHost : h\r\n\r\n", 400, "header line"},
        {"GET /bytes/1 HTTP/1.1\r\n folded\r\n\r\n", 400, "header line"},
        {"GET /bytes/1 HTTP/1.1\r\nContent-Length: 3\r\n\r\n", 400, "body"},
        {"GET /bytes/1 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "body"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sm_http_request rq;
        const char *why;
        int status = parse(cases[i].head, &rq, &why);
        if (status != cases[i].status || why == NULL || strstr(why, cases[i].why) == NULL)
            fail_msg("%s: %d '%s', expected %d '%s'", cases[i].head, status, why ? why : "(null)",
                     cases[i].status, cases[i].why);
    }
    assert_string_equal(sm_http_reason_phrase(405), "Method Not Allowed");
    assert_string_equal(sm_http_reason_phrase(431), "Request Header Fields Too Large");
    assert_string_equal(sm_http_reason_phrase(404), "Not Found");
    assert_string_equal(sm_http_reason_phrase(400), "Bad Request");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_request_head_end_waits_for_the_empty_line),
        cmocka_unit_test(test_http_request_get_bytes_n_keeps_the_connection_in_http_1_1),
        cmocka_unit_test(test_http_request_connection_header_and_http_1_0_decide_the_close),
        cmocka_unit_test(test_http_request_bad_heads_get_their_status_and_a_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
