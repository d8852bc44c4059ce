/* Unit tests of proto/params: defaults, every validation rule, derived values, names, sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proto/params.h"

/* A macro so that a failure points at the test's line, not at this helper. */
#define assert_invalid(p, field, bound) check_invalid((p), (field), (bound), __FILE__, __LINE__)

static void check_invalid(sm_params *p, const char *field, const char *bound, const char *file,
                          int line)
{
    sm_error err;
    sm_error_clear(&err);
    int rc = sm_params_validate(p, &err);
    _assert_int_equal(cast_to_largest_integral_type(rc), cast_to_largest_integral_type(SM_EINVAL),
                      file, line);
    _assert_int_equal(cast_to_largest_integral_type(err.code),
                      cast_to_largest_integral_type(SM_EINVAL), file, line);
    if (strstr(err.msg, field) == NULL || (bound != NULL && strstr(err.msg, bound) == NULL)) {
        print_error("\"%s\" lacks \"%s\" or \"%s\"\n", err.msg, field, bound ? bound : "");
        _fail(file, line);
    }
}

#define assert_valid(p) check_valid((p), __FILE__, __LINE__)

static void check_valid(sm_params *p, const char *file, int line)
{
    sm_error err;
    sm_error_clear(&err);
    int rc = sm_params_validate(p, &err);
    if (rc != 0) {
        print_error("unexpected error %d: %s\n", rc, err.msg);
        _fail(file, line);
    }
}

static sm_params stream(void)
{
    sm_params p;
    sm_params_init(&p, SM_WL_STREAM);
    return p;
}

static sm_params rr(void)
{
    sm_params p;
    sm_params_init(&p, SM_WL_RR);
    return p;
}

static sm_params connect_(void)
{
    sm_params p;
    sm_params_init(&p, SM_WL_CONNECT);
    return p;
}

/* ---- defaults ---- */

static void test_params_stream_defaults_are_128k_by_2048_and_validate(void **state)
{
    (void)state;
    sm_params p = stream();
    assert_int_equal(p.workload, SM_WL_STREAM);
    assert_int_equal(p.transport, SM_TR_TCP);
    assert_int_equal(p.scope, SM_SCOPE_LOCAL);
    assert_int_equal(p.framing, SM_FRAMING_RAW);
    assert_int_equal(p.msg_size, 131072);
    assert_int_equal(p.count, 2048);
    assert_int_equal(p.bytes, 0);
    assert_int_equal(p.duration_ms, 0);
    assert_int_equal(p.time_limit_ms, 0);
    assert_valid(&p);
}

static void test_params_rr_defaults_are_1_byte_by_10000_and_validate(void **state)
{
    (void)state;
    sm_params p = rr();
    assert_int_equal(p.req_size, 1);
    assert_int_equal(p.resp_size, 1);
    assert_int_equal(p.count, 10000);
    assert_int_equal(p.msg_size, 0);
    assert_valid(&p);
}

static void test_params_connect_defaults_are_1000_and_validate(void **state)
{
    (void)state;
    sm_params p = connect_();
    assert_int_equal(p.count, 1000);
    assert_int_equal(p.transport, SM_TR_TCP);
    assert_valid(&p);
}

/* ---- http ---- */

static sm_params http(void)
{
    sm_params p;
    sm_params_init(&p, SM_WL_HTTP);
    return p;
}

static void test_params_http_defaults_fetch_16_MiB_five_times(void **state)
{
    (void)state;
    sm_params p = http();
    assert_valid(&p);
    assert_int_equal(p.bytes, 16u << 20);
    assert_int_equal(p.repeat, 5);
    assert_int_equal(p.connections, 1);
    assert_int_equal(p.client, SM_HTTP_THREAD);
    assert_true(sm_params_http_verifies(&p));
    assert_int_equal(sm_params_stream_total(&p), 0);
}

static void test_params_http_bounds(void **state)
{
    (void)state;
    sm_params p = http();
    p.connections = 0;
    assert_invalid(&p, "connections", "minimum 1");
    p = http();
    p.connections = SM_HTTP_CONNECTIONS_MAX + 1;
    assert_invalid(&p, "connections", "maximum 64");
    p = http();
    p.repeat = 0;
    assert_invalid(&p, "repeat", "minimum 1");
    p = http();
    p.buffer_size = 100;
    assert_invalid(&p, "buffer_size", "minimum 1024");
    p = http();
    p.bytes = SM_HTTP_SIZE_MAX + 1;
    assert_invalid(&p, "bytes", "maximum");
    p = http();
    p.transport = SM_TR_UNIX;
    assert_invalid(&p, "transport", "tcp only");
}

static void test_params_http_rejects_options_libcurl_owns(void **state)
{
    (void)state;
    sm_params p = http();
    p.nodelay = true;
    assert_invalid(&p, "nodelay", "does not apply to workload http");
    p = http();
    p.sndbuf = 65536;
    assert_invalid(&p, "sndbuf", "does not apply");
    p = http();
    p.count = 3;
    assert_invalid(&p, "count", "takes repeat");
    p = http();
    p.duration_ms = 1000;
    assert_invalid(&p, "duration_ms", "takes repeat");
}

static void test_params_http_url_rules(void **state)
{
    (void)state;
    sm_params p = http();
    snprintf(p.url, sizeof p.url, "ftp://host/f");
    assert_invalid(&p, "url", "http:// or https://");
    p = http();
    snprintf(p.url, sizeof p.url, "http://host/a b");
    assert_invalid(&p, "url", "byte 13");
    p = http();
    snprintf(p.url, sizeof p.url, "http://host/f");
    p.scope = SM_SCOPE_PAIR;
    assert_invalid(&p, "url", "built-in source");
    p = http();
    snprintf(p.url, sizeof p.url, "https://host/f");
    p.tls = true;
    assert_invalid(&p, "tls", "built-in source");
    p = http();
    p.verify = true;
    assert_invalid(&p, "verify", "applies to a url");
    /* A url's body is any size unless bytes says which; verify is the caller's choice. */
    p = http();
    snprintf(p.url, sizeof p.url, "http://[::1]:8080/f");
    assert_valid(&p);
    assert_int_equal(p.bytes, 0);
    assert_false(sm_params_http_verifies(&p));
    p.verify = true;
    assert_valid(&p);
    assert_true(sm_params_http_verifies(&p));
}

static void test_params_http_fields_on_other_workloads_are_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
    p.repeat = 2;
    assert_invalid(&p, "repeat", "applies to workload http only");
    p = rr();
    p.tls = true;
    assert_invalid(&p, "tls", "applies to workload http only");
    p = connect_();
    p.client = SM_HTTP_MULTI;
    assert_invalid(&p, "client", "applies to workload http only");
    p = rr();
    p.bytes = 10;
    assert_invalid(&p, "bytes", "stream and http only");
}

/* ---- enums ---- */

static void test_params_workload_out_of_range_is_rejected(void **state)
{
    (void)state;
    sm_params p = connect_();
    p.workload = SM_WL__COUNT;
    assert_invalid(&p, "workload", "3");
}

static void test_params_transport_out_of_range_is_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
    p.transport = SM_TR__COUNT;
    assert_invalid(&p, "transport", "1");
}

static void test_params_scope_out_of_range_is_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
    p.scope = (sm_scope)2;
    assert_invalid(&p, "scope", "1");
}

static void test_params_framing_out_of_range_is_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
    p.framing = (sm_framing)2;
    assert_invalid(&p, "framing", "1");
}

/* ---- fields that do not apply ---- */

static void test_params_framing_lines_applies_to_stream_only(void **state)
{
    (void)state;
    sm_params p = rr();
    p.framing = SM_FRAMING_LINES;
    assert_invalid(&p, "framing", "stream");
}

static void test_params_msg_size_applies_to_stream_only(void **state)
{
    (void)state;
    sm_params p = rr();
    p.msg_size = 100;
    assert_invalid(&p, "msg_size", "stream");
}

static void test_params_bytes_applies_to_stream_only(void **state)
{
    (void)state;
    sm_params p = connect_();
    p.count = 0;
    p.bytes = 1000;
    assert_invalid(&p, "bytes", "stream");
}

static void test_params_cork_applies_to_stream_only(void **state)
{
    (void)state;
    sm_params p = rr();
    p.cork = true;
    assert_invalid(&p, "cork", "stream");
}

static void test_params_read_size_applies_to_stream_only(void **state)
{
    (void)state;
    sm_params p = connect_();
    p.read_size = 4096;
    assert_invalid(&p, "read_size", "stream");
}

static void test_params_req_size_applies_to_rr_only(void **state)
{
    (void)state;
    sm_params p = stream();
    p.req_size = 10;
    assert_invalid(&p, "req_size", "rr");
}

static void test_params_resp_size_applies_to_rr_only(void **state)
{
    (void)state;
    sm_params p = connect_();
    p.resp_size = 10;
    assert_invalid(&p, "resp_size", "rr");
}

static void test_params_nodelay_applies_to_tcp_only(void **state)
{
    (void)state;
    sm_params p = rr();
    p.transport = SM_TR_UNIX;
    p.nodelay = true;
    sm_error err;
    assert_int_equal(sm_params_validate(&p, &err), SM_EINVAL);
    assert_string_equal(err.msg, "nodelay: applies to transport tcp only");
}

static void test_params_cork_applies_to_tcp_only(void **state)
{
    (void)state;
    sm_params p = stream();
    p.transport = SM_TR_UNIX;
    p.cork = true;
    assert_invalid(&p, "cork", "tcp");
}

static void test_params_nodelay_and_cork_validate_on_tcp(void **state)
{
    (void)state;
    sm_params a = stream(), b = stream();
    a.nodelay = true;
    b.cork = true;
    assert_valid(&a);
    assert_valid(&b);
}

static void test_params_cork_and_nodelay_together_are_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
    p.cork = true;
    p.nodelay = true;
    assert_invalid(&p, "cork", "nodelay");
}

static void test_params_scope_pair_runs_over_tcp_only(void **state)
{
    (void)state;
    sm_params p = rr();
    p.scope = SM_SCOPE_PAIR;
    p.transport = SM_TR_UNIX;
    sm_error err;
    assert_int_equal(sm_params_validate(&p, &err), SM_EINVAL);
    assert_string_equal(err.msg, "transport: scope pair runs over tcp only");
    p.transport = SM_TR_TCP;
    assert_valid(&p);
    sm_params local = stream();
    local.transport = SM_TR_UNIX;
    assert_valid(&local);
}

/* ---- count, bytes, duration_ms ---- */

static void test_params_no_amount_is_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
    p.count = 0;
    assert_invalid(&p, "count, bytes, duration_ms", "exactly one");
}

static void test_params_count_and_bytes_together_are_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
    p.bytes = 1000;
    assert_invalid(&p, "count, bytes, duration_ms", "exactly one");
}

static void test_params_count_and_duration_together_are_rejected(void **state)
{
    (void)state;
    sm_params p = rr();
    p.duration_ms = 1000;
    assert_invalid(&p, "count, duration_ms", "exactly one");
}

static void test_params_bytes_and_duration_together_are_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
    p.count = 0;
    p.bytes = 1000;
    p.duration_ms = 1000;
    assert_invalid(&p, "count, bytes, duration_ms", "exactly one");
}

static void test_params_rr_without_amount_is_rejected(void **state)
{
    (void)state;
    sm_params p = rr();
    p.count = 0;
    assert_invalid(&p, "count, duration_ms", "exactly one");
}

static void test_params_each_amount_alone_validates(void **state)
{
    (void)state;
    sm_params by_bytes = stream(), by_time = stream(), rr_time = rr(), conn_time = connect_();
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
    sm_params p = stream();
    p.framing = SM_FRAMING_LINES;
    p.msg_size = 100;
    p.count = 0;
    p.bytes = 1000;
    assert_invalid(&p, "bytes", "lines");
}

static void test_params_lines_with_duration_is_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
    p.framing = SM_FRAMING_LINES;
    p.msg_size = 100;
    p.count = 0;
    p.duration_ms = 1000;
    assert_invalid(&p, "duration_ms", "lines");
}

static void test_params_count_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
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
    sm_params lo = rr(), hi = rr();
    lo.count = 1;
    hi.count = SM_COUNT_MAX;
    assert_valid(&lo);
    assert_valid(&hi);
}

static void test_params_connect_count_above_its_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = connect_();
    p.count = SM_CONNECT_COUNT_MAX + 1;
    assert_invalid(&p, "count", "100000");
    p.count = SM_CONNECT_COUNT_MAX;
    assert_valid(&p);
}

static void test_params_bytes_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
    p.count = 0;
    p.bytes = SM_BYTES_MAX + 1;
    assert_invalid(&p, "bytes", "68719476736");
    p.bytes = SM_BYTES_MAX;
    assert_valid(&p);
}

static void test_params_duration_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = rr();
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
    sm_params p = stream();
    p.msg_size = 0;
    sm_error err;
    assert_int_equal(sm_params_validate(&p, &err), SM_EINVAL);
    assert_string_equal(err.msg, "msg_size: 0 is below the minimum 1");
}

static void test_params_msg_size_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
    p.msg_size = SM_MSG_SIZE_MAX + 1;
    assert_invalid(&p, "msg_size", "16777216");
    p.msg_size = SM_MSG_SIZE_MAX;
    assert_valid(&p);
}

static void test_params_line_size_above_line_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
    p.framing = SM_FRAMING_LINES;
    p.msg_size = SM_LINE_SIZE_MAX + 1;
    assert_invalid(&p, "msg_size", "65536");
    p.msg_size = SM_LINE_SIZE_MAX;
    assert_valid(&p);
}

static void test_params_line_size_zero_is_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
    p.framing = SM_FRAMING_LINES;
    p.msg_size = 0;
    assert_invalid(&p, "msg_size", "1");
}

static void test_params_req_size_zero_is_rejected(void **state)
{
    (void)state;
    sm_params p = rr();
    p.req_size = 0;
    assert_invalid(&p, "req_size", "minimum 1");
}

static void test_params_req_size_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = rr();
    p.req_size = SM_MSG_SIZE_MAX + 1;
    assert_invalid(&p, "req_size", "16777216");
}

static void test_params_resp_size_zero_is_rejected(void **state)
{
    (void)state;
    sm_params p = rr();
    p.resp_size = 0;
    assert_invalid(&p, "resp_size", "minimum 1");
}

static void test_params_resp_size_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = rr();
    p.resp_size = SM_MSG_SIZE_MAX + 1;
    assert_invalid(&p, "resp_size", "16777216");
    p.resp_size = SM_MSG_SIZE_MAX;
    assert_valid(&p);
}

static void test_params_sndbuf_below_minimum_is_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
    p.sndbuf = SM_SOCKBUF_MIN - 1;
    assert_invalid(&p, "sndbuf", "4096");
}

static void test_params_sndbuf_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
    p.sndbuf = SM_SOCKBUF_MAX + 1;
    assert_invalid(&p, "sndbuf", "268435456");
}

static void test_params_rcvbuf_below_minimum_is_rejected(void **state)
{
    (void)state;
    sm_params p = rr();
    p.rcvbuf = 1;
    assert_invalid(&p, "rcvbuf", "4096");
}

static void test_params_rcvbuf_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = connect_();
    p.rcvbuf = SM_SOCKBUF_MAX + 1;
    assert_invalid(&p, "rcvbuf", "268435456");
}

static void test_params_sockbufs_at_bounds_validate(void **state)
{
    (void)state;
    sm_params p = stream();
    p.sndbuf = SM_SOCKBUF_MIN;
    p.rcvbuf = SM_SOCKBUF_MAX;
    assert_valid(&p);
}

static void test_params_read_size_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
    p.read_size = SM_READ_SIZE_MAX + 1;
    assert_invalid(&p, "read_size", "16777216");
    p.read_size = 1;
    assert_valid(&p);
}

/* ---- time limit ---- */

static void test_params_time_limit_below_minimum_is_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
    p.time_limit_ms = SM_TIME_LIMIT_MS_MIN - 1;
    assert_invalid(&p, "time_limit_ms", "100");
}

static void test_params_time_limit_above_maximum_is_rejected(void **state)
{
    (void)state;
    sm_params p = stream();
    p.time_limit_ms = SM_TIME_LIMIT_MS_MAX + 1;
    assert_invalid(&p, "time_limit_ms", "3600000");
}

static void test_params_time_limit_must_exceed_duration_by_a_second(void **state)
{
    (void)state;
    sm_params p = rr();
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
    sm_params p = connect_();
    assert_valid(&p);
    assert_int_equal(p.time_limit_ms, SM_TIME_LIMIT_MS_DEFAULT);
}

static void test_params_time_limit_defaults_to_duration_plus_30s(void **state)
{
    (void)state;
    sm_params p = stream();
    p.count = 0;
    p.duration_ms = 10000;
    assert_valid(&p);
    assert_int_equal(p.time_limit_ms, 40000);
}

static void test_params_explicit_time_limit_is_kept(void **state)
{
    (void)state;
    sm_params p = stream();
    p.time_limit_ms = SM_TIME_LIMIT_MS_MIN;
    assert_valid(&p);
    assert_int_equal(p.time_limit_ms, SM_TIME_LIMIT_MS_MIN);
}

/* ---- derived sizes ---- */

static void test_params_read_size_defaults_to_128k_or_msg_size(void **state)
{
    (void)state;
    sm_params p = stream();
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
    sm_params p = stream();
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
    sm_params p = stream();
    p.framing = SM_FRAMING_LINES;
    p.msg_size = 100;
    p.count = 10;
    /* 10 x (100 + CRLF) + "profile_start\r\n" (15) + "profile_end\r\n" (13) */
    assert_int_equal(sm_params_stream_total(&p), 1020 + 15 + 13);
}

/* ---- sizes and numbers ---- */

static uint64_t size_of(const char *s)
{
    uint64_t v = 0xdeadbeef;
    assert_int_equal(sm_parse_size(s, &v), 0);
    return v;
}

static void test_parse_size_reads_plain_and_binary_suffixes(void **state)
{
    (void)state;
    assert_int_equal(size_of("128"), 128);
    assert_int_equal(size_of("0"), 0);
    assert_int_equal(size_of("64K"), 65536);
    assert_int_equal(size_of("1M"), 1048576);
    assert_int_equal(size_of("2G"), 2147483648ull);
    assert_int_equal(size_of("1KiB"), 1024);
    assert_int_equal(size_of("1mib"), 1048576);
    assert_int_equal(size_of("3gIB"), 3ull << 30);
    assert_int_equal(size_of("4k"), 4096);
    assert_int_equal(size_of("18446744073709551615"), UINT64_MAX);
    assert_int_equal(size_of("17179869183G"), 17179869183ull << 30);
}

static void test_parse_size_rejects_junk_signs_space_and_overflow(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "-1",
        "+1",
        "1X",
        "K",
        " 1",
        "1 ",
        "1KB",
        "1Ki",
        "1.5K",
        "0x10",
        "99999999999G",
        "18446744073709551616",
        "17179869184G",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 7;
        if (sm_parse_size(bad[i], &v) != SM_EINVAL)
            fail_msg("\"%s\" was accepted", bad[i]);
        assert_int_equal(v, 7);
    }
}

static void test_parse_u64_reads_plain_decimals_only(void **state)
{
    (void)state;
    uint64_t v = 1;
    assert_int_equal(sm_parse_u64("0", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(sm_parse_u64("18446744073709551615", &v), 0);
    assert_int_equal(v, UINT64_MAX);
    static const char *const bad[] = {"", "-0", "1K", " 1", "1 ", "18446744073709551616", "1e3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (sm_parse_u64(bad[i], &v) != SM_EINVAL)
            fail_msg("\"%s\" was accepted", bad[i]);
}

/* ---- names ---- */

static void test_params_names_round_trip(void **state)
{
    (void)state;
    for (int i = 0; i < SM_WL__COUNT; i++) {
        sm_workload_kind w = (sm_workload_kind)-1;
        assert_int_equal(sm_workload_parse(sm_workload_name((sm_workload_kind)i), &w), 0);
        assert_int_equal(w, i);
    }
    for (int i = 0; i < SM_TR__COUNT; i++) {
        sm_transport_kind t = (sm_transport_kind)-1;
        assert_int_equal(sm_transport_parse(sm_transport_name((sm_transport_kind)i), &t), 0);
        assert_int_equal(t, i);
    }
    for (int i = SM_FRAMING_RAW; i <= SM_FRAMING_LINES; i++) {
        sm_framing f = (sm_framing)-1;
        assert_int_equal(sm_framing_parse(sm_framing_name((sm_framing)i), &f), 0);
        assert_int_equal(f, i);
    }
    for (int i = SM_SCOPE_LOCAL; i <= SM_SCOPE_PAIR; i++) {
        sm_scope s = (sm_scope)-1;
        assert_int_equal(sm_scope_parse(sm_scope_name((sm_scope)i), &s), 0);
        assert_int_equal(s, i);
    }
}

static void test_params_names_are_the_documented_ones(void **state)
{
    (void)state;
    assert_string_equal(sm_workload_name(SM_WL_STREAM), "stream");
    assert_string_equal(sm_workload_name(SM_WL_RR), "rr");
    assert_string_equal(sm_workload_name(SM_WL_CONNECT), "connect");
    assert_string_equal(sm_workload_name(SM_WL_HTTP), "http");
    assert_string_equal(sm_http_client_name(SM_HTTP_THREAD), "thread");
    assert_string_equal(sm_http_client_name(SM_HTTP_POOL), "pool");
    assert_string_equal(sm_http_client_name(SM_HTTP_MULTI), "multi");
    assert_string_equal(sm_http_client_name(SM_HTTP__COUNT), "unknown");
    assert_string_equal(sm_transport_name(SM_TR_TCP), "tcp");
    assert_string_equal(sm_transport_name(SM_TR_UNIX), "unix");
    assert_string_equal(sm_framing_name(SM_FRAMING_RAW), "raw");
    assert_string_equal(sm_framing_name(SM_FRAMING_LINES), "lines");
    assert_string_equal(sm_scope_name(SM_SCOPE_LOCAL), "local");
    assert_string_equal(sm_scope_name(SM_SCOPE_PAIR), "pair");
    assert_string_equal(sm_workload_name(SM_WL__COUNT), "unknown");
}

static void test_params_unknown_names_are_rejected(void **state)
{
    (void)state;
    sm_workload_kind w = SM_WL_RR;
    sm_transport_kind t = SM_TR_UNIX;
    sm_framing f = SM_FRAMING_LINES;
    sm_scope s = SM_SCOPE_PAIR;
    assert_int_equal(sm_workload_parse("STREAM", &w), SM_EINVAL);
    assert_int_equal(sm_workload_parse("", &w), SM_EINVAL);
    assert_int_equal(sm_transport_parse("udp", &t), SM_EINVAL);
    assert_int_equal(sm_framing_parse("line", &f), SM_EINVAL);
    assert_int_equal(sm_scope_parse("remote", &s), SM_EINVAL);
    assert_int_equal(sm_scope_parse(NULL, &s), SM_EINVAL);
    assert_int_equal(w, SM_WL_RR);
    assert_int_equal(t, SM_TR_UNIX);
    assert_int_equal(f, SM_FRAMING_LINES);
    assert_int_equal(s, SM_SCOPE_PAIR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params_stream_defaults_are_128k_by_2048_and_validate),
        cmocka_unit_test(test_params_rr_defaults_are_1_byte_by_10000_and_validate),
        cmocka_unit_test(test_params_connect_defaults_are_1000_and_validate),
        cmocka_unit_test(test_params_workload_out_of_range_is_rejected),
        cmocka_unit_test(test_params_transport_out_of_range_is_rejected),
        cmocka_unit_test(test_params_scope_out_of_range_is_rejected),
        cmocka_unit_test(test_params_framing_out_of_range_is_rejected),
        cmocka_unit_test(test_params_framing_lines_applies_to_stream_only),
        cmocka_unit_test(test_params_msg_size_applies_to_stream_only),
        cmocka_unit_test(test_params_bytes_applies_to_stream_only),
        cmocka_unit_test(test_params_cork_applies_to_stream_only),
        cmocka_unit_test(test_params_read_size_applies_to_stream_only),
        cmocka_unit_test(test_params_req_size_applies_to_rr_only),
        cmocka_unit_test(test_params_resp_size_applies_to_rr_only),
        cmocka_unit_test(test_params_nodelay_applies_to_tcp_only),
        cmocka_unit_test(test_params_cork_applies_to_tcp_only),
        cmocka_unit_test(test_params_nodelay_and_cork_validate_on_tcp),
        cmocka_unit_test(test_params_cork_and_nodelay_together_are_rejected),
        cmocka_unit_test(test_params_scope_pair_runs_over_tcp_only),
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
        cmocka_unit_test(test_parse_size_reads_plain_and_binary_suffixes),
        cmocka_unit_test(test_parse_size_rejects_junk_signs_space_and_overflow),
        cmocka_unit_test(test_parse_u64_reads_plain_decimals_only),
        cmocka_unit_test(test_params_http_defaults_fetch_16_MiB_five_times),
        cmocka_unit_test(test_params_http_bounds),
        cmocka_unit_test(test_params_http_rejects_options_libcurl_owns),
        cmocka_unit_test(test_params_http_url_rules),
        cmocka_unit_test(test_params_http_fields_on_other_workloads_are_rejected),
        cmocka_unit_test(test_params_names_round_trip),
        cmocka_unit_test(test_params_names_are_the_documented_ones),
        cmocka_unit_test(test_params_unknown_names_are_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
