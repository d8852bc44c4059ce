/* Unit tests of proto/params' bounds: the amount of a job, sizes and socket buffers, the time
 * limit, and the sizes derived from them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proto/params.h"
#include "tests/unit/proto/params_fixture.h"

/* ---- count, bytes, duration_ms ---- */

static void test_params_no_amount_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.count = 0;
    assert_invalid(&p, "count, bytes, duration_ms", "exactly one");
}

static void test_params_count_and_bytes_together_are_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.bytes = 1000;
    assert_invalid(&p, "count, bytes, duration_ms", "exactly one");
}

static void test_params_count_and_duration_together_are_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_rr();
    p.duration_ms = 1000;
    assert_invalid(&p, "count, duration_ms", "exactly one");
}

static void test_params_bytes_and_duration_together_are_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.count = 0;
    p.bytes = 1000;
    p.duration_ms = 1000;
    assert_invalid(&p, "count, bytes, duration_ms", "exactly one");
}

static void test_params_rr_without_amount_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_rr();
    p.count = 0;
    assert_invalid(&p, "count, duration_ms", "exactly one");
}

static void test_params_each_amount_alone_validates(void **state)
{
    (void)state;
    sm_params by_bytes = params_fixture_stream(), by_time = params_fixture_stream(),
              rr_time = params_fixture_rr(), conn_time = params_fixture_connect();
    by_bytes.count = 0;
    by_bytes.bytes = 1000001; /* not a multiple of msg_size: the last write is shorter */
    by_time.count = 0;
    by_time.duration_ms = 1000;
    rr_time.count = 0;
    rr_time.duration_ms = 1000;
    conn_time.count = 0;
    conn_time.duration_ms = 1000;
    assert_valid(&by_bytes);
    assert_valid(&by_time);
    assert_valid(&rr_time);
    assert_valid(&conn_time);
}

static void test_params_lines_with_bytes_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.framing = SM_FRAMING_LINES;
    p.msg_size = 100;
    p.count = 0;
    p.bytes = 1000;
    assert_invalid(&p, "bytes", "lines");
}

static void test_params_lines_with_duration_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.framing = SM_FRAMING_LINES;
    p.msg_size = 100;
    p.count = 0;
    p.duration_ms = 1000;
    assert_invalid(&p, "duration_ms", "lines");
}

static void test_params_count_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.count = 2000000000;
    sm_error err;
    assert_int_equal(sm_params_validate(&p, &err), SM_EINVAL);
    assert_string_equal(err.msg, "count: 2000000000 is above the maximum 1000000000");
    p.count = SM_COUNT_MAX + 1;
    assert_invalid(&p, "count", "1000000000");
}

static void test_params_count_at_bounds_validates(void **state)
{
    (void)state;
    sm_params lo = params_fixture_rr(), hi = params_fixture_rr();
    lo.count = 1;
    hi.count = SM_COUNT_MAX;
    assert_valid(&lo);
    assert_valid(&hi);
}

static void test_params_connect_count_above_its_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_connect();
    p.count = SM_CONNECT_COUNT_MAX + 1;
    assert_invalid(&p, "count", "100000");
    p.count = SM_CONNECT_COUNT_MAX;
    assert_valid(&p);
}

static void test_params_bytes_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.count = 0;
    p.bytes = SM_BYTES_MAX + 1;
    assert_invalid(&p, "bytes", "68719476736");
    p.bytes = SM_BYTES_MAX;
    assert_valid(&p);
}

static void test_params_duration_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_rr();
    p.count = 0;
    p.duration_ms = SM_DURATION_MS_MAX + 1;
    assert_invalid(&p, "duration_ms", "600000");
    p.duration_ms = SM_DURATION_MS_MAX;
    assert_valid(&p);
}

/* ---- sizes ---- */

static void test_params_msg_size_zero_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.msg_size = 0;
    sm_error err;
    assert_int_equal(sm_params_validate(&p, &err), SM_EINVAL);
    assert_string_equal(err.msg, "msg_size: 0 is below the minimum 1");
}

static void test_params_msg_size_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.msg_size = SM_MSG_SIZE_MAX + 1;
    assert_invalid(&p, "msg_size", "16777216");
    p.msg_size = SM_MSG_SIZE_MAX;
    assert_valid(&p);
}

static void test_params_line_size_above_line_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.framing = SM_FRAMING_LINES;
    p.msg_size = SM_LINE_SIZE_MAX + 1;
    assert_invalid(&p, "msg_size", "65536");
    p.msg_size = SM_LINE_SIZE_MAX;
    assert_valid(&p);
}

static void test_params_line_size_zero_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.framing = SM_FRAMING_LINES;
    p.msg_size = 0;
    assert_invalid(&p, "msg_size", "1");
}

static void test_params_req_size_zero_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_rr();
    p.req_size = 0;
    assert_invalid(&p, "req_size", "minimum 1");
}

static void test_params_req_size_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_rr();
    p.req_size = SM_MSG_SIZE_MAX + 1;
    assert_invalid(&p, "req_size", "16777216");
}

static void test_params_resp_size_zero_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_rr();
    p.resp_size = 0;
    assert_invalid(&p, "resp_size", "minimum 1");
}

static void test_params_resp_size_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_rr();
    p.resp_size = SM_MSG_SIZE_MAX + 1;
    assert_invalid(&p, "resp_size", "16777216");
    p.resp_size = SM_MSG_SIZE_MAX;
    assert_valid(&p);
}

static void test_params_sndbuf_below_minimum_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.sndbuf = SM_SOCKBUF_MIN - 1;
    assert_invalid(&p, "sndbuf", "4096");
}

static void test_params_sndbuf_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.sndbuf = SM_SOCKBUF_MAX + 1;
    assert_invalid(&p, "sndbuf", "268435456");
}

static void test_params_rcvbuf_below_minimum_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_rr();
    p.rcvbuf = 1;
    assert_invalid(&p, "rcvbuf", "4096");
}

static void test_params_rcvbuf_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_connect();
    p.rcvbuf = SM_SOCKBUF_MAX + 1;
    assert_invalid(&p, "rcvbuf", "268435456");
}

static void test_params_sockbufs_at_bounds_validate(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.sndbuf = SM_SOCKBUF_MIN;
    p.rcvbuf = SM_SOCKBUF_MAX;
    assert_valid(&p);
}

static void test_params_read_size_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.read_size = SM_READ_SIZE_MAX + 1;
    assert_invalid(&p, "read_size", "16777216");
    p.read_size = 1;
    assert_valid(&p);
}

/* ---- time limit ---- */

static void test_params_time_limit_below_minimum_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.time_limit_ms = SM_TIME_LIMIT_MS_MIN - 1;
    assert_invalid(&p, "time_limit_ms", "100");
}

static void test_params_time_limit_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.time_limit_ms = SM_TIME_LIMIT_MS_MAX + 1;
    assert_invalid(&p, "time_limit_ms", "3600000");
}

static void test_params_time_limit_must_exceed_duration_by_a_second(void **state)
{
    (void)state;
    sm_params p = params_fixture_rr();
    p.count = 0;
    p.duration_ms = 10000;
    p.time_limit_ms = 10999;
    assert_invalid(&p, "time_limit_ms", "11000");
    p.time_limit_ms = 11000;
    assert_valid(&p);
    assert_int_equal(p.time_limit_ms, 11000);
}

static void test_params_time_limit_defaults_to_60s_for_counted_jobs(void **state)
{
    (void)state;
    sm_params p = params_fixture_connect();
    assert_valid(&p);
    assert_int_equal(p.time_limit_ms, SM_TIME_LIMIT_MS_DEFAULT);
}

static void test_params_time_limit_defaults_to_duration_plus_30s(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.count = 0;
    p.duration_ms = 10000;
    assert_valid(&p);
    assert_int_equal(p.time_limit_ms, 40000);
}

static void test_params_explicit_time_limit_is_kept(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.time_limit_ms = SM_TIME_LIMIT_MS_MIN;
    assert_valid(&p);
    assert_int_equal(p.time_limit_ms, SM_TIME_LIMIT_MS_MIN);
}

/* ---- derived sizes ---- */

static void test_params_read_size_defaults_to_128k_or_msg_size(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.msg_size = 1000;
    assert_int_equal(sm_params_read_size(&p), 131072);
    p.msg_size = 1 << 20;
    assert_int_equal(sm_params_read_size(&p), 1 << 20);
    p.read_size = 512;
    assert_int_equal(sm_params_read_size(&p), 512);
}

static void test_params_stream_total_counts_messages_or_bytes(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    assert_int_equal(sm_params_stream_total(&p), 256ull << 20);
    p.count = 0;
    p.bytes = 12345;
    assert_int_equal(sm_params_stream_total(&p), 12345);
    p.bytes = 0;
    p.duration_ms = 1000;
    assert_int_equal(sm_params_stream_total(&p), 0);
}

static void test_params_stream_total_of_lines_adds_crlf_and_markers(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.framing = SM_FRAMING_LINES;
    p.msg_size = 100;
    p.count = 10;
    /* 10 x (100 + CRLF) + "profile_start\r\n" (15) + "profile_end\r\n" (13) */
    assert_int_equal(sm_params_stream_total(&p), 1020 + 15 + 13);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params_no_amount_is_rejected),
        cmocka_unit_test(test_params_count_and_bytes_together_are_rejected),
        cmocka_unit_test(test_params_count_and_duration_together_are_rejected),
        cmocka_unit_test(test_params_bytes_and_duration_together_are_rejected),
        cmocka_unit_test(test_params_rr_without_amount_is_rejected),
        cmocka_unit_test(test_params_each_amount_alone_validates),
        cmocka_unit_test(test_params_lines_with_bytes_is_rejected),
        cmocka_unit_test(test_params_lines_with_duration_is_rejected),
        cmocka_unit_test(test_params_count_above_maximum_is_rejected),
        cmocka_unit_test(test_params_count_at_bounds_validates),
        cmocka_unit_test(test_params_connect_count_above_its_maximum_is_rejected),
        cmocka_unit_test(test_params_bytes_above_maximum_is_rejected),
        cmocka_unit_test(test_params_duration_above_maximum_is_rejected),
        cmocka_unit_test(test_params_msg_size_zero_is_rejected),
        cmocka_unit_test(test_params_msg_size_above_maximum_is_rejected),
        cmocka_unit_test(test_params_line_size_above_line_maximum_is_rejected),
        cmocka_unit_test(test_params_line_size_zero_is_rejected),
        cmocka_unit_test(test_params_req_size_zero_is_rejected),
        cmocka_unit_test(test_params_req_size_above_maximum_is_rejected),
        cmocka_unit_test(test_params_resp_size_zero_is_rejected),
        cmocka_unit_test(test_params_resp_size_above_maximum_is_rejected),
        cmocka_unit_test(test_params_sndbuf_below_minimum_is_rejected),
        cmocka_unit_test(test_params_sndbuf_above_maximum_is_rejected),
        cmocka_unit_test(test_params_rcvbuf_below_minimum_is_rejected),
        cmocka_unit_test(test_params_rcvbuf_above_maximum_is_rejected),
        cmocka_unit_test(test_params_sockbufs_at_bounds_validate),
        cmocka_unit_test(test_params_read_size_above_maximum_is_rejected),
        cmocka_unit_test(test_params_time_limit_below_minimum_is_rejected),
        cmocka_unit_test(test_params_time_limit_above_maximum_is_rejected),
        cmocka_unit_test(test_params_time_limit_must_exceed_duration_by_a_second),
        cmocka_unit_test(test_params_time_limit_defaults_to_60s_for_counted_jobs),
        cmocka_unit_test(test_params_time_limit_defaults_to_duration_plus_30s),
        cmocka_unit_test(test_params_explicit_time_limit_is_kept),
        cmocka_unit_test(test_params_read_size_defaults_to_128k_or_msg_size),
        cmocka_unit_test(test_params_stream_total_counts_messages_or_bytes),
        cmocka_unit_test(test_params_stream_total_of_lines_adds_crlf_and_markers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
