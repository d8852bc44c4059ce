/* Unit tests of proto/params' fields: each workload's defaults, http's rules, enums, the fields
 * that apply to one workload or transport only, and the names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proto/params.h"
#include "tests/unit/proto/params_fixture.h"

/* ---- defaults ---- */

static void test_params_stream_defaults_are_128k_by_2048_and_validate(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
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
    sm_params p = params_fixture_rr();
    assert_int_equal(p.req_size, 1);
    assert_int_equal(p.resp_size, 1);
    assert_int_equal(p.count, 10000);
    assert_int_equal(p.msg_size, 0);
    assert_valid(&p);
}

static void test_params_connect_defaults_are_1000_and_validate(void **state)
{
    (void)state;
    sm_params p = params_fixture_connect();
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
    sm_params p = params_fixture_stream();
    p.repeat = 2;
    assert_invalid(&p, "repeat", "applies to workload http only");
    p = params_fixture_rr();
    p.tls = true;
    assert_invalid(&p, "tls", "applies to workload http only");
    p = params_fixture_connect();
    p.client = SM_HTTP_MULTI;
    assert_invalid(&p, "client", "applies to workload http only");
    p = params_fixture_rr();
    p.bytes = 10;
    assert_invalid(&p, "bytes", "stream and http only");
}

/* ---- enums ---- */

static void test_params_workload_out_of_range_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_connect();
    p.workload = SM_WL__COUNT;
    assert_invalid(&p, "workload", "3");
}

static void test_params_transport_out_of_range_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.transport = SM_TR__COUNT;
    assert_invalid(&p, "transport", "1");
}

static void test_params_scope_out_of_range_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.scope = (sm_scope)2;
    assert_invalid(&p, "scope", "1");
}

static void test_params_framing_out_of_range_is_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.framing = (sm_framing)2;
    assert_invalid(&p, "framing", "1");
}

/* ---- fields that do not apply ---- */

static void test_params_framing_lines_applies_to_stream_only(void **state)
{
    (void)state;
    sm_params p = params_fixture_rr();
    p.framing = SM_FRAMING_LINES;
    assert_invalid(&p, "framing", "stream");
}

static void test_params_msg_size_applies_to_stream_only(void **state)
{
    (void)state;
    sm_params p = params_fixture_rr();
    p.msg_size = 100;
    assert_invalid(&p, "msg_size", "stream");
}

static void test_params_bytes_applies_to_stream_only(void **state)
{
    (void)state;
    sm_params p = params_fixture_connect();
    p.count = 0;
    p.bytes = 1000;
    assert_invalid(&p, "bytes", "stream");
}

static void test_params_cork_applies_to_stream_only(void **state)
{
    (void)state;
    sm_params p = params_fixture_rr();
    p.cork = true;
    assert_invalid(&p, "cork", "stream");
}

static void test_params_read_size_applies_to_stream_only(void **state)
{
    (void)state;
    sm_params p = params_fixture_connect();
    p.read_size = 4096;
    assert_invalid(&p, "read_size", "stream");
}

static void test_params_req_size_applies_to_rr_only(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.req_size = 10;
    assert_invalid(&p, "req_size", "rr");
}

static void test_params_resp_size_applies_to_rr_only(void **state)
{
    (void)state;
    sm_params p = params_fixture_connect();
    p.resp_size = 10;
    assert_invalid(&p, "resp_size", "rr");
}

static void test_params_nodelay_applies_to_tcp_only(void **state)
{
    (void)state;
    sm_params p = params_fixture_rr();
    p.transport = SM_TR_UNIX;
    p.nodelay = true;
    sm_error err;
    assert_int_equal(sm_params_validate(&p, &err), SM_EINVAL);
    assert_string_equal(err.msg, "nodelay: applies to transport tcp only");
}

static void test_params_cork_applies_to_tcp_only(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.transport = SM_TR_UNIX;
    p.cork = true;
    assert_invalid(&p, "cork", "tcp");
}

static void test_params_nodelay_and_cork_validate_on_tcp(void **state)
{
    (void)state;
    sm_params a = params_fixture_stream(), b = params_fixture_stream();
    a.nodelay = true;
    b.cork = true;
    assert_valid(&a);
    assert_valid(&b);
}

static void test_params_cork_and_nodelay_together_are_rejected(void **state)
{
    (void)state;
    sm_params p = params_fixture_stream();
    p.cork = true;
    p.nodelay = true;
    assert_invalid(&p, "cork", "nodelay");
}

static void test_params_scope_pair_runs_over_tcp_only(void **state)
{
    (void)state;
    sm_params p = params_fixture_rr();
    p.scope = SM_SCOPE_PAIR;
    p.transport = SM_TR_UNIX;
    sm_error err;
    assert_int_equal(sm_params_validate(&p, &err), SM_EINVAL);
    assert_string_equal(err.msg, "transport: scope pair runs over tcp only");
    p.transport = SM_TR_TCP;
    assert_valid(&p);
    sm_params local = params_fixture_stream();
    local.transport = SM_TR_UNIX;
    assert_valid(&local);
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
