/* Unit tests of proto/codec's params: round trips of each workload, their exact JSON, defaults, and
 * every refusal. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/codec.h"
#include "tests/unit/testutil.h"
#include "tests/unit/proto/codec_fixture.h"

static int decode_params(const char *json, sm_params *out, sm_error *err)
{
    return sm_codec_params_decode(json, strlen(json), out, err);
}

/* Decoding is expected to fail with `code` and a reason mentioning `part`; *out stays zero. */
#define assert_params_error(json, code, part)                                                      \
    check_params_error((json), (code), (part), __FILE__, __LINE__)

static void check_params_error(const char *json, int code, const char *part, const char *file,
                               int line)
{
    sm_params p;
    sm_error err;
    memset(&p, 0xff, sizeof p);
    sm_error_clear(&err);
    int rc = decode_params(json, &p, &err);
    _assert_int_equal(cast_to_largest_integral_type(rc), cast_to_largest_integral_type(code), file,
                      line);
    _assert_int_equal(cast_to_largest_integral_type(err.code), cast_to_largest_integral_type(code),
                      file, line);
    codec_fixture_check_contains(err.msg, part, true, file, line);
    _assert_int_equal(p.count, 0, file, line);
    _assert_int_equal(p.msg_size, 0, file, line);
}

static void round_trip_params(sm_params *p)
{
    sm_error err;
    assert_int_equal(sm_params_validate(p, &err), 0);
    char *json = sm_codec_params_encode(p, &err);
    assert_non_null(json);
    sm_params back;
    memset(&back, 0xff, sizeof back);
    if (decode_params(json, &back, &err) != 0)
        fail_msg("%s: %s", json, err.msg);
    assert_params_equal(p, &back);
    free(json);
}

/* ---- params ---- */

static void test_codec_params_stream_round_trips(void **state)
{
    (void)state;
    sm_params p;
    sm_params_init(&p, SM_WL_STREAM);
    p.scope = SM_SCOPE_PAIR;
    p.msg_size = 4096;
    p.count = 0;
    p.bytes = 1ull << 30;
    p.cork = true;
    p.sndbuf = 65536;
    p.rcvbuf = 131072;
    p.read_size = 8192;
    p.time_limit_ms = 120000;
    round_trip_params(&p);
}

static void test_codec_params_stream_lines_round_trips(void **state)
{
    (void)state;
    sm_params p;
    sm_params_init(&p, SM_WL_STREAM);
    p.framing = SM_FRAMING_LINES;
    p.msg_size = 100;
    p.count = 100000;
    p.nodelay = true;
    round_trip_params(&p);
}

static void test_codec_params_rr_round_trips(void **state)
{
    (void)state;
    sm_params p;
    sm_params_init(&p, SM_WL_RR);
    p.req_size = 64;
    p.resp_size = 1024;
    p.count = 0;
    p.duration_ms = 5000;
    p.nodelay = true;
    round_trip_params(&p);
}

static void test_codec_params_connect_round_trips(void **state)
{
    (void)state;
    sm_params p;
    sm_params_init(&p, SM_WL_CONNECT);
    p.transport = SM_TR_UNIX;
    p.count = 500;
    p.rcvbuf = 8192;
    round_trip_params(&p);
}

static void test_codec_params_http_round_trips(void **state)
{
    (void)state;
    sm_params p;
    sm_params_init(&p, SM_WL_HTTP);
    p.client = SM_HTTP_MULTI;
    p.connections = 4;
    p.repeat = 7;
    p.buffer_size = 102400;
    p.fresh_connect = true;
    p.http2 = true;
    p.tls = true;
    p.scope = SM_SCOPE_PAIR;
    round_trip_params(&p);

    sm_params_init(&p, SM_WL_HTTP);
    p.client = SM_HTTP_POOL;
    p.verify = true;
    p.bytes = 1000;
    snprintf(p.url, sizeof p.url, "http://127.0.0.1:8080/big?x=1");
    round_trip_params(&p);
}

static void test_codec_params_http_encodes_exactly(void **state)
{
    (void)state;
    sm_params p;
    sm_error err;
    sm_params_init(&p, SM_WL_HTTP);
    snprintf(p.url, sizeof p.url, "https://example.test/f");
    assert_int_equal(sm_params_validate(&p, &err), 0);
    char *json = sm_codec_params_encode(&p, &err);
    /* A url's body may be any size: no bytes unless asked for. */
    assert_string_equal(json, "{\"workload\":\"http\",\"transport\":\"tcp\",\"scope\":\"local\","
                              "\"time_limit_ms\":60000,\"client\":\"thread\",\"connections\":1,"
                              "\"repeat\":5,\"buffer_size\":0,\"fresh_connect\":false,"
                              "\"http2\":false,\"tls\":false,\"verify\":false,"
                              "\"url\":\"https://example.test/f\"}");
    free(json);
}

static void test_codec_params_http_decode_checks_client_and_url(void **state)
{
    (void)state;
    sm_params p;
    sm_error err;
    assert_int_equal(decode_params("{\"workload\":\"http\"}", &p, &err), 0);
    assert_int_equal(p.bytes, 16u << 20);
    assert_int_equal(p.client, SM_HTTP_THREAD);
    assert_int_equal(decode_params("{\"workload\":\"http\",\"client\":\"fibers\"}", &p, &err),
                     SM_EINVAL);
    assert_contains(err.msg, "client: unknown value 'fibers'");
    assert_int_equal(decode_params("{\"workload\":\"http\",\"url\":7}", &p, &err), SM_EPARSE);
    assert_contains(err.msg, "url: expected a string");
    char json[SM_URL_MAX + 64];
    char url[SM_URL_MAX + 2];
    memset(url, 'a', sizeof url - 1);
    url[sizeof url - 1] = '\0';
    memcpy(url, "http://", 7);
    snprintf(json, sizeof json, "{\"workload\":\"http\",\"url\":\"%s\"}", url);
    assert_int_equal(decode_params(json, &p, &err), SM_EINVAL);
    assert_contains(err.msg, "url: longer than 512 bytes");
    assert_int_equal(decode_params("{\"workload\":\"stream\",\"repeat\":3}", &p, &err), SM_EINVAL);
    assert_contains(err.msg, "repeat: applies to workload http only");
}

static void test_codec_params_stream_defaults_encode_exactly(void **state)
{
    (void)state;
    sm_params p;
    sm_error err;
    sm_params_init(&p, SM_WL_STREAM);
    assert_int_equal(sm_params_validate(&p, &err), 0);
    char *json = sm_codec_params_encode(&p, &err);
    assert_string_equal(json, "{\"workload\":\"stream\",\"transport\":\"tcp\",\"scope\":\"local\","
                              "\"framing\":\"raw\",\"msg_size\":131072,\"count\":2048,"
                              "\"nodelay\":false,\"cork\":false,\"sndbuf\":0,\"rcvbuf\":0,"
                              "\"read_size\":0,\"time_limit_ms\":60000}");
    free(json);
}

static void test_codec_params_rr_omits_fields_of_other_workloads(void **state)
{
    (void)state;
    sm_params p;
    sm_error err;
    sm_params_init(&p, SM_WL_RR);
    p.transport = SM_TR_UNIX;
    char *json = sm_codec_params_encode(&p, &err);
    assert_string_equal(json, "{\"workload\":\"rr\",\"transport\":\"unix\",\"scope\":\"local\","
                              "\"req_size\":1,\"resp_size\":1,\"count\":10000,\"sndbuf\":0,"
                              "\"rcvbuf\":0,\"time_limit_ms\":0}");
    free(json);
}

static void test_codec_params_count_above_2_53_is_a_string(void **state)
{
    (void)state;
    sm_params p;
    sm_error err;
    sm_params_init(&p, SM_WL_CONNECT);
    p.count = 1ull << 60;
    char *json = sm_codec_params_encode(&p, &err);
    assert_contains(json, "\"count\":\"1152921504606846976\"");
    free(json);
    p.count = (1ull << 53) - 1;
    json = sm_codec_params_encode(&p, &err);
    assert_contains(json, "\"count\":9007199254740991,");
    free(json);
}

static void test_codec_params_decode_fills_defaults(void **state)
{
    (void)state;
    sm_params p, want;
    sm_error err;
    assert_int_equal(decode_params("{\"workload\":\"rr\"}", &p, &err), 0);
    sm_params_init(&want, SM_WL_RR);
    want.time_limit_ms = SM_TIME_LIMIT_MS_DEFAULT;
    assert_params_equal(&p, &want);
}

static void test_codec_params_decode_given_amount_replaces_default_count(void **state)
{
    (void)state;
    sm_params p;
    sm_error err;
    assert_int_equal(decode_params("{\"workload\":\"stream\",\"bytes\":1048576}", &p, &err), 0);
    assert_int_equal(p.count, 0);
    assert_int_equal(p.bytes, 1048576);
    assert_int_equal(decode_params("{\"duration_ms\":2000,\"workload\":\"rr\"}", &p, &err), 0);
    assert_int_equal(p.count, 0);
    assert_int_equal(p.duration_ms, 2000);
    assert_int_equal(p.time_limit_ms, 32000);
}

static void test_codec_params_decode_reads_only_len_bytes(void **state)
{
    (void)state;
    static const char buf[] = "{\"workload\":\"connect\"}{{{ not JSON";
    sm_params p;
    sm_error err;
    assert_int_equal(sm_codec_params_decode(buf, strlen("{\"workload\":\"connect\"}"), &p, &err),
                     0);
    assert_int_equal(p.workload, SM_WL_CONNECT);
}

static void test_codec_params_count_as_decimal_string_is_accepted(void **state)
{
    (void)state;
    sm_params p;
    sm_error err;
    assert_int_equal(decode_params("{\"workload\":\"rr\",\"count\":\"123\"}", &p, &err), 0);
    assert_int_equal(p.count, 123);
}

static void test_codec_params_unknown_field_is_rejected(void **state)
{
    (void)state;
    assert_params_error("{\"workload\":\"rr\",\"xyz\":1}", SM_EPARSE,
                        "params: unknown field 'xyz'");
}

static void test_codec_params_duplicate_field_is_rejected(void **state)
{
    (void)state;
    assert_params_error("{\"workload\":\"rr\",\"count\":5,\"count\":6}", SM_EPARSE,
                        "duplicate field 'count'");
}

static void test_codec_params_missing_workload_is_rejected(void **state)
{
    (void)state;
    assert_params_error("{\"count\":5}", SM_EPARSE, "workload");
}

static void test_codec_params_wrong_types_are_rejected(void **state)
{
    (void)state;
    assert_params_error("{\"workload\":\"stream\",\"msg_size\":\"4096\"}", SM_EPARSE, "msg_size");
    assert_params_error("{\"workload\":\"stream\",\"nodelay\":1}", SM_EPARSE, "nodelay");
    assert_params_error("{\"workload\":\"stream\",\"transport\":1}", SM_EPARSE, "transport");
    assert_params_error("{\"workload\":\"stream\",\"count\":null}", SM_EPARSE, "count");
    assert_params_error("{\"workload\":[\"stream\"]}", SM_EPARSE, "workload");
}

static void test_codec_params_fractional_integer_is_rejected(void **state)
{
    (void)state;
    assert_params_error("{\"workload\":\"stream\",\"msg_size\":1.5}", SM_EPARSE, "msg_size");
}

static void test_codec_params_negative_integer_is_rejected(void **state)
{
    (void)state;
    assert_params_error("{\"workload\":\"stream\",\"msg_size\":-1}", SM_EPARSE, "msg_size");
    assert_params_error("{\"workload\":\"stream\",\"count\":\"-1\"}", SM_EPARSE, "count");
}

static void test_codec_params_integer_above_its_type_is_rejected(void **state)
{
    (void)state;
    assert_params_error("{\"workload\":\"stream\",\"msg_size\":4294967296}", SM_EINVAL,
                        "msg_size: 4294967296 is above the maximum 4294967295");
    assert_params_error("{\"workload\":\"rr\",\"count\":\"18446744073709551616\"}", SM_EPARSE,
                        "count");
}

static void test_codec_params_number_above_2_53_is_rejected(void **state)
{
    (void)state;
    assert_params_error("{\"workload\":\"rr\",\"count\":9007199254740992}", SM_EINVAL,
                        "decimal string");
}

static void test_codec_params_infinite_number_is_rejected(void **state)
{
    (void)state;
    assert_params_error("{\"workload\":\"rr\",\"count\":1e999}", SM_EPARSE, "count");
}

static void test_codec_params_unknown_enum_name_is_rejected(void **state)
{
    (void)state;
    assert_params_error("{\"workload\":\"udp\"}", SM_EINVAL, "workload: unknown value 'udp'");
    assert_params_error("{\"workload\":\"stream\",\"framing\":\"LINES\"}", SM_EINVAL, "framing");
}

static void test_codec_params_invalid_json_is_rejected(void **state)
{
    (void)state;
    assert_params_error("{\"workload\":", SM_EPARSE, "invalid JSON");
    assert_params_error("", SM_EPARSE, "invalid JSON");
    assert_params_error("{\"workload\":\"rr\"} x", SM_EPARSE, "junk");
    assert_params_error("[\"workload\"]", SM_EPARSE, "object");
}

static void test_codec_params_huge_bytes_fail_validation(void **state)
{
    (void)state;
    assert_params_error("{\"workload\":\"stream\",\"bytes\":\"1152921504606846976\"}", SM_EINVAL,
                        "bytes: 1152921504606846976 is above the maximum 68719476736");
}

static void test_codec_params_field_of_other_workload_fails_validation(void **state)
{
    (void)state;
    assert_params_error("{\"workload\":\"rr\",\"msg_size\":100}", SM_EINVAL, "msg_size");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codec_params_stream_round_trips),
        cmocka_unit_test(test_codec_params_http_round_trips),
        cmocka_unit_test(test_codec_params_http_encodes_exactly),
        cmocka_unit_test(test_codec_params_http_decode_checks_client_and_url),
        cmocka_unit_test(test_codec_params_stream_lines_round_trips),
        cmocka_unit_test(test_codec_params_rr_round_trips),
        cmocka_unit_test(test_codec_params_connect_round_trips),
        cmocka_unit_test(test_codec_params_stream_defaults_encode_exactly),
        cmocka_unit_test(test_codec_params_rr_omits_fields_of_other_workloads),
        cmocka_unit_test(test_codec_params_count_above_2_53_is_a_string),
        cmocka_unit_test(test_codec_params_decode_fills_defaults),
        cmocka_unit_test(test_codec_params_decode_given_amount_replaces_default_count),
        cmocka_unit_test(test_codec_params_decode_reads_only_len_bytes),
        cmocka_unit_test(test_codec_params_count_as_decimal_string_is_accepted),
        cmocka_unit_test(test_codec_params_unknown_field_is_rejected),
        cmocka_unit_test(test_codec_params_duplicate_field_is_rejected),
        cmocka_unit_test(test_codec_params_missing_workload_is_rejected),
        cmocka_unit_test(test_codec_params_wrong_types_are_rejected),
        cmocka_unit_test(test_codec_params_fractional_integer_is_rejected),
        cmocka_unit_test(test_codec_params_negative_integer_is_rejected),
        cmocka_unit_test(test_codec_params_integer_above_its_type_is_rejected),
        cmocka_unit_test(test_codec_params_number_above_2_53_is_rejected),
        cmocka_unit_test(test_codec_params_infinite_number_is_rejected),
        cmocka_unit_test(test_codec_params_unknown_enum_name_is_rejected),
        cmocka_unit_test(test_codec_params_invalid_json_is_rejected),
        cmocka_unit_test(test_codec_params_huge_bytes_fail_validation),
        cmocka_unit_test(test_codec_params_field_of_other_workload_fails_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
