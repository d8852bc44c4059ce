/* Unit tests of proto/codec: JSON of params, results, facts and reports, both directions. */
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
#include "testutil.h"

#define assert_contains(text, part) check_contains((text), (part), true, __FILE__, __LINE__)
#define assert_lacks(text, part)    check_contains((text), (part), false, __FILE__, __LINE__)

static void check_contains(const char *text, const char *part, bool want, const char *file,
                           int line)
{
    if ((strstr(text, part) != NULL) != want) {
        print_error("%s\n%s \"%s\"\n", text, want ? "lacks" : "contains", part);
        _fail(file, line);
    }
}

static int decode_params(const char *json, sm_params *out, sm_error *err)
{
    return sm_codec_params_decode(json, strlen(json), out, err);
}

static int decode_result(const char *json, sm_result *out, sm_error *err)
{
    return sm_codec_result_decode(json, strlen(json), out, err);
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
    check_contains(err.msg, part, true, file, line);
    _assert_int_equal(p.count, 0, file, line);
    _assert_int_equal(p.msg_size, 0, file, line);
}

#define assert_result_error(json, code, part)                                                      \
    check_result_error((json), (code), (part), __FILE__, __LINE__)

static void check_result_error(const char *json, int code, const char *part, const char *file,
                               int line)
{
    sm_result r;
    sm_error err;
    sm_error_clear(&err);
    int rc = decode_result(json, &r, &err);
    _assert_int_equal(cast_to_largest_integral_type(rc), cast_to_largest_integral_type(code), file,
                      line);
    check_contains(err.msg, part, true, file, line);
    _assert_true(r.hist == NULL && r.have == 0 && !r.ok, "empty result", file, line);
    sm_result_fini(&r);
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

/* ---- results ---- */

/* The coordinator holds every decoded result of a run at once: a decoded histogram must cost
 * its non-empty buckets (16 bytes each, plus a header), not the 221 KB of a dense one. */
static void test_codec_result_decodes_an_rr_histogram_sparse(void **state)
{
    (void)state;
    sm_result r, back;
    sm_error err;
    sm_result_init(&r);
    r.ok = true;
    sm_result_set(&r, SM_M_RT_PER_S, 50000);
    r.hist = sm_hist_new();
    assert_non_null(r.hist);
    uint64_t s = 42;
    for (int i = 0; i < 50000; i++) { /* ~20 us round trips, a tail every 100th */
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        assert_int_equal(sm_hist_record(r.hist, (i % 100 ? 18000 : 40000) + (s >> 33) % 4000), 0);
    }
    char *json = sm_codec_result_encode(&r, &err);
    assert_non_null(json);
    if (decode_result(json, &back, &err) != 0)
        fail_msg("%s", err.msg);
    size_t n = sm_hist_nonempty(r.hist);
    assert_true(n > 100 && n < 1000);
    assert_true(sm_hist_is_sparse(back.hist));
    assert_int_equal(sm_hist_nonempty(back.hist), n);
    assert_true(sm_hist_bytes(back.hist) <= 128 + 16 * n);
    assert_true(sm_hist_bytes(r.hist) >= sm_hist_bucket_count() * sizeof(uint64_t));
    assert_int_equal(sm_hist_percentile(back.hist, 99.9), sm_hist_percentile(r.hist, 99.9));
    assert_memory_equal(&(double){sm_hist_mean(back.hist)}, &(double){sm_hist_mean(r.hist)},
                        sizeof(double));
    free(json);
    sm_result_fini(&back);
    sm_result_fini(&r);
}

static void test_codec_result_round_trips_metrics_and_histogram(void **state)
{
    (void)state;
    static const uint64_t ns[] = {5, 1000, 1500, 1500, 2000000, 70000000000ull};
    sm_result r, back;
    sm_error err;
    sm_result_init(&r);
    r.ok = true;
    sm_result_set(&r, SM_M_BYTES, 1048576);
    sm_result_set(&r, SM_M_SECONDS, 0.1);
    sm_result_set(&r, SM_M_RT_PER_S, 1.0 / 3.0);
    sm_result_set(&r, SM_M_RTT_MAX_US, 9007199254740991.0);
    sm_result_set(&r, SM_M_TCP_RTT_US, 5e-324);
    r.sndbuf_eff = 87380;
    r.rcvbuf_eff = 131072;
    r.tx_cpu = 0;
    r.rx_cpu = 3;
    r.hist = sm_hist_new();
    assert_non_null(r.hist);
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        sm_hist_record(r.hist, ns[i]);

    char *json = sm_codec_result_encode(&r, &err);
    assert_non_null(json);
    if (decode_result(json, &back, &err) != 0)
        fail_msg("%s: %s", json, err.msg);
    assert_true(back.ok);
    assert_int_equal(back.have, r.have);
    /* Exact: every double must come back bit for bit. */
    for (int m = 0; m < SM_M__COUNT; m++)
        if (sm_result_has(&r, (sm_metric)m))
            assert_memory_equal(&back.v[m], &r.v[m], sizeof(double));
    assert_int_equal(back.sndbuf_eff, 87380);
    assert_int_equal(back.rcvbuf_eff, 131072);
    assert_int_equal(back.tx_cpu, 0); /* CPU 0 is a CPU, not "unknown" */
    assert_int_equal(back.rx_cpu, 3);
    assert_non_null(back.hist);
    assert_int_equal(sm_hist_count(back.hist), sizeof ns / sizeof ns[0]);
    assert_int_equal(sm_hist_min(back.hist), 5);
    assert_int_equal(sm_hist_max(back.hist), 70000000000ull);
    size_t ca = 0, cb = 0, ia, ib;
    uint64_t na, nb;
    int buckets = 0;
    while (sm_hist_next(r.hist, &ca, &ia, &na) == 0) {
        assert_int_equal(sm_hist_next(back.hist, &cb, &ib, &nb), 0);
        assert_int_equal(ia, ib);
        assert_int_equal(na, nb);
        buckets++;
    }
    assert_int_not_equal(sm_hist_next(back.hist, &cb, &ib, &nb), 0);
    assert_int_equal(buckets, 5);
    free(json);
    sm_result_fini(&back);
    sm_result_fini(&r);
}

static void test_codec_result_cpu_ids_are_optional_and_bounded(void **state)
{
    (void)state;
    sm_result r;
    sm_error err;
    static const char none[] = "{\"ok\":true}";
    assert_int_equal(sm_codec_result_decode(none, sizeof none - 1, &r, &err), 0);
    assert_int_equal(r.tx_cpu, -1);
    assert_int_equal(r.rx_cpu, -1);
    sm_result_fini(&r);
    static const char big[] = "{\"ok\":true,\"tx_cpu\":65536}";
    assert_int_equal(sm_codec_result_decode(big, sizeof big - 1, &r, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "tx_cpu"));
    static const char neg[] = "{\"ok\":true,\"rx_cpu\":-1}";
    assert_int_not_equal(sm_codec_result_decode(neg, sizeof neg - 1, &r, &err), 0);
    assert_non_null(strstr(err.msg, "rx_cpu"));
}

static void test_codec_result_encodes_exactly(void **state)
{
    (void)state;
    sm_result r;
    sm_error err;
    sm_result_init(&r);
    r.ok = true;
    sm_result_set(&r, SM_M_SECONDS, 0.5);
    sm_result_set(&r, SM_M_BYTES, 1048576);
    r.hist = sm_hist_new();
    sm_hist_record(r.hist, 3000);
    sm_hist_record(r.hist, 7);
    char *json = sm_codec_result_encode(&r, &err);
    assert_string_equal(json, "{\"ok\":true,\"metrics\":{\"bytes\":1048576,\"seconds\":0.5},"
                              "\"hist\":{\"unit\":\"ns\",\"min\":7,\"max\":3000,\"count\":2,"
                              "\"buckets\":[[7,1],[2524,1]]}}");
    free(json);
    sm_result_fini(&r);
}

/* The host block: every input, null when unknown, the derived shares, the verdict. */
static void test_codec_result_host_block_round_trips_with_nulls_for_unknown(void **state)
{
    (void)state;
    sm_result r, back;
    sm_error err;
    sm_result_init(&r);
    r.ok = true;
    sm_result_set(&r, SM_M_SECONDS, 0.5);
    sm_host_state *h = &r.host;
    h->known = true;
    h->job_ms = 20.5;
    h->stat_known = true;
    h->ticks_total = 20;
    h->ticks_steal = 3;
    h->ticks_iowait = 1;
    h->load1_before = 0.25;
    h->runnable_before = 1;
    h->ncpu = 2;
    h->nivcsw_tx = 9007199254740993ll; /* above 2^53: a decimal string */
    h->nivcsw_rx = 0;
    h->runq_us_tx = 9000;
    h->oncpu_us_rx = 4000;
    h->mhz_rx = 2400;
    h->disturbed = true;
    snprintf(h->reason, sizeof h->reason, "steal 15.0%% of the CPU time > 5%% (3 of 20 ticks)");
    char *json = sm_codec_result_encode(&r, &err);
    assert_non_null(json);
    assert_non_null(strstr(
        json, "\"host\":{\"job_ms\":20.5,\"cpu_ticks\":20,\"steal_ticks\":3,\"iowait_ticks\":1,"
              "\"steal_pct\":15,\"iowait_pct\":5,\"load1_before\":0.25,\"load1_after\":null,"
              "\"runnable_before\":1,\"runnable_after\":null,\"ncpu\":2,"
              "\"nivcsw_tx\":\"9007199254740993\",\"nivcsw_rx\":0,\"runq_us_tx\":9000,"
              "\"runq_us_rx\":null,\"oncpu_us_tx\":null,\"oncpu_us_rx\":4000,\"same_cpu\":false,"
              "\"cpu_mhz_tx\":null,\"cpu_mhz_rx\":2400,\"disturbed\":true,"
              "\"disturbed_reason\":\"steal 15.0% of the CPU time > 5% (3 of 20 ticks)\"}"));
    assert_int_equal(decode_result(json, &back, &err), 0);
    free(json);
    assert_true(back.host.known);
    assert_double_near(back.host.job_ms, 20.5, 0);
    assert_true(back.host.stat_known);
    assert_int_equal(back.host.ticks_total, 20);
    assert_int_equal(back.host.ticks_steal, 3);
    assert_int_equal(back.host.ticks_iowait, 1);
    assert_double_near(back.host.load1_before, 0.25, 0);
    assert_true(isnan(back.host.load1_after));
    assert_int_equal(back.host.runnable_before, 1);
    assert_int_equal(back.host.runnable_after, -1);
    assert_int_equal(back.host.ncpu, 2);
    assert_true(back.host.nivcsw_tx == 9007199254740993ll);
    assert_int_equal(back.host.nivcsw_rx, 0);
    assert_int_equal(back.host.runq_us_tx, 9000);
    assert_int_equal(back.host.runq_us_rx, -1);
    assert_int_equal(back.host.oncpu_us_tx, -1);
    assert_int_equal(back.host.oncpu_us_rx, 4000);
    assert_int_equal(back.host.mhz_tx, 0);
    assert_int_equal(back.host.mhz_rx, 2400);
    assert_true(back.host.disturbed);
    assert_string_equal(back.host.reason, h->reason);
    sm_result_fini(&back);
    sm_result_fini(&r);
}

/* A result stored before agents recorded the host still decodes: nothing known, not
 * disturbed, and it encodes again without the block. */
static void test_codec_result_without_host_block_decodes_as_not_disturbed(void **state)
{
    (void)state;
    sm_result r;
    sm_error err;
    static const char old[] = "{\"ok\":true,\"metrics\":{\"seconds\":0.5},\"tx_cpu\":0}";
    assert_int_equal(sm_codec_result_decode(old, sizeof old - 1, &r, &err), 0);
    assert_false(r.host.known);
    assert_false(r.host.disturbed);
    assert_int_equal(r.host.nivcsw_tx, -1);
    char *json = sm_codec_result_encode(&r, &err);
    assert_string_equal(json, old);
    free(json);
    sm_result_fini(&r);
}

static void test_codec_result_bad_host_block_is_rejected(void **state)
{
    (void)state;
    sm_result r;
    sm_error err;
    static const char *const bad[] = {
        "{\"ok\":true,\"host\":{}}",                                     /* no verdict */
        "{\"ok\":true,\"host\":{\"disturbed\":1}}",                      /* not a bool */
        "{\"ok\":true,\"host\":{\"disturbed\":false,\"nivcsw_tx\":-3}}", /* negative */
        "{\"ok\":true,\"host\":{\"disturbed\":false,\"job_ms\":\"x\"}}",
        "{\"ok\":true,\"host\":{\"disturbed\":false,\"bogus\":1}}",
        "{\"ok\":true,\"host\":[]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_not_equal(sm_codec_result_decode(bad[i], strlen(bad[i]), &r, &err), 0);
        assert_non_null(strstr(err.msg, "host"));
    }
}

static void test_codec_result_failure_round_trips_reason(void **state)
{
    (void)state;
    sm_result r, back;
    sm_error err;
    sm_result_init(&r);
    snprintf(r.reason, sizeof r.reason, "peer closed after 12 bytes");
    char *json = sm_codec_result_encode(&r, &err);
    assert_string_equal(json, "{\"ok\":false,\"reason\":\"peer closed after 12 bytes\"}");
    assert_int_equal(decode_result(json, &back, &err), 0);
    assert_false(back.ok);
    assert_string_equal(back.reason, "peer closed after 12 bytes");
    assert_int_equal(back.have, 0);
    assert_null(back.hist);
    free(json);
    sm_result_fini(&back);
}

static void test_codec_result_omits_non_finite_metrics(void **state)
{
    (void)state;
    sm_result r;
    sm_error err;
    sm_result_init(&r);
    r.ok = true;
    sm_result_set(&r, SM_M_RTT_P50_US, NAN);
    sm_result_set(&r, SM_M_RTT_P90_US, INFINITY);
    sm_result_set(&r, SM_M_RT_PER_S, 10);
    char *json = sm_codec_result_encode(&r, &err);
    assert_string_equal(json, "{\"ok\":true,\"metrics\":{\"rt_per_s\":10}}");
    free(json);
}

static void test_codec_result_long_reason_is_truncated_on_a_character(void **state)
{
    (void)state;
    char json[600], reason[400];
    memset(reason, 'a', SM_ERR_MSG_MAX - 2);
    /* "é" is two bytes and would straddle the last byte of the buffer */
    strcpy(reason + SM_ERR_MSG_MAX - 2, "\xc3\xa9 and more");
    snprintf(json, sizeof json, "{\"ok\":false,\"reason\":\"%s\"}", reason);
    sm_result r;
    sm_error err;
    assert_int_equal(decode_result(json, &r, &err), 0);
    assert_int_equal(strlen(r.reason), SM_ERR_MSG_MAX - 2);
    assert_memory_equal(r.reason, reason, SM_ERR_MSG_MAX - 2);
    sm_result_fini(&r);
}

static void test_codec_result_bucket_index_out_of_range_is_rejected(void **state)
{
    (void)state;
    char json[256];
    size_t n = sm_hist_bucket_count();
    snprintf(json, sizeof json,
             "{\"ok\":true,\"hist\":{\"unit\":\"ns\",\"min\":1,\"max\":1,\"count\":2,"
             "\"buckets\":[[1,1],[%zu,1]]}}",
             n);
    assert_result_error(json, SM_EINVAL, "bucket index");
}

static void test_codec_result_bucket_counts_must_sum_to_count(void **state)
{
    (void)state;
    assert_result_error("{\"ok\":true,\"hist\":{\"unit\":\"ns\",\"min\":5,\"max\":9,\"count\":3,"
                        "\"buckets\":[[5,1],[9,1]]}}",
                        SM_EINVAL, "sum to 2, not count 3");
}

static void test_codec_result_bucket_indices_must_increase(void **state)
{
    (void)state;
    assert_result_error("{\"ok\":true,\"hist\":{\"unit\":\"ns\",\"min\":5,\"max\":5,\"count\":2,"
                        "\"buckets\":[[5,1],[5,1]]}}",
                        SM_EINVAL, "does not follow");
}

static void test_codec_result_hist_extremes_must_match_buckets(void **state)
{
    (void)state;
    assert_result_error("{\"ok\":true,\"hist\":{\"unit\":\"ns\",\"min\":4,\"max\":9,\"count\":2,"
                        "\"buckets\":[[5,1],[9,1]]}}",
                        SM_EINVAL, "min 4");
    assert_result_error("{\"ok\":true,\"hist\":{\"unit\":\"ns\",\"min\":5,\"max\":10,\"count\":2,"
                        "\"buckets\":[[5,1],[9,1]]}}",
                        SM_EINVAL, "max 10");
}

static void test_codec_result_hist_must_be_complete_and_in_ns(void **state)
{
    (void)state;
    assert_result_error("{\"ok\":true,\"hist\":{\"unit\":\"ns\",\"min\":5,\"max\":5,"
                        "\"buckets\":[[5,1]]}}",
                        SM_EPARSE, "missing field 'count'");
    assert_result_error("{\"ok\":true,\"hist\":{\"unit\":\"us\",\"min\":5,\"max\":5,\"count\":1,"
                        "\"buckets\":[[5,1]]}}",
                        SM_EINVAL, "unit");
    assert_result_error("{\"ok\":true,\"hist\":{\"unit\":\"ns\",\"min\":5,\"max\":5,\"count\":1,"
                        "\"buckets\":[[5]]}}",
                        SM_EPARSE, "pairs");
}

static void test_codec_result_bad_metrics_are_rejected(void **state)
{
    (void)state;
    assert_result_error("{\"ok\":true,\"metrics\":{\"seconds\":1e999}}", SM_EPARSE, "seconds");
    assert_result_error("{\"ok\":true,\"metrics\":{\"seconds\":\"1\"}}", SM_EPARSE, "seconds");
    assert_result_error("{\"ok\":true,\"metrics\":{\"speed\":1}}", SM_EPARSE, "'speed'");
    assert_result_error("{\"ok\":true,\"metrics\":{\"bytes\":1,\"bytes\":2}}", SM_EPARSE,
                        "duplicate");
}

static void test_codec_result_shape_errors_are_rejected(void **state)
{
    (void)state;
    assert_result_error("{\"metrics\":{}}", SM_EPARSE, "missing field 'ok'");
    assert_result_error("{\"ok\":1}", SM_EPARSE, "ok");
    assert_result_error("{\"ok\":true,\"extra\":1}", SM_EPARSE, "unknown field 'extra'");
    assert_result_error("{\"ok\":true,\"sndbuf\":-4}", SM_EPARSE, "sndbuf");
    assert_result_error("{\"ok\":true", SM_EPARSE, "invalid JSON");
}

static void test_codec_result_uses_the_documented_metric_names(void **state)
{
    (void)state;
    sm_result r, back;
    sm_error err;
    sm_result_init(&r);
    r.ok = true;
    for (int m = 0; m < SM_M__COUNT; m++)
        sm_result_set(&r, (sm_metric)m, m + 1);
    char *json = sm_codec_result_encode(&r, &err);
    assert_string_equal(
        json, "{\"ok\":true,\"metrics\":{\"bytes\":1,\"seconds\":2,\"throughput_MBps\":3,"
              "\"msgs_per_s\":4,\"tx_user_s\":5,\"tx_sys_s\":6,\"rx_user_s\":7,\"rx_sys_s\":8,"
              "\"cpu_s_per_GB\":9,\"tcp_retrans\":10,\"tcp_rtt_us\":11,\"rtt_p50_us\":12,"
              "\"rtt_p90_us\":13,\"rtt_p99_us\":14,\"rtt_p999_us\":15,\"rtt_max_us\":16,"
              "\"rt_per_s\":17,\"connects_per_s\":18,\"connect_p50_us\":19,\"user_s\":20,"
              "\"sys_s\":21,\"ttfb_ms\":22,\"connect_ms\":23,\"tls_ms\":24,\"transfers\":25,"
              "\"new_connections\":26,\"first_MBps\":27,\"first_ttfb_ms\":28,"
              "\"first_user_s\":29}}");
    assert_int_equal(decode_result(json, &back, &err), 0);
    assert_int_equal(back.have, (1ull << SM_M__COUNT) - 1);
    free(json);
    sm_result_fini(&back);
}

/* ---- facts and reports ---- */

static void fill_facts(sm_facts *f)
{
    memset(f, 0, sizeof *f);
    snprintf(f->hostname, sizeof f->hostname, "h1");
    snprintf(f->kernel, sizeof f->kernel, "6.1.0");
    snprintf(f->cpu_model, sizeof f->cpu_model, "unknown");
    f->cores = 8;
    f->mem_bytes = 8ull << 30;
    snprintf(f->congestion, sizeof f->congestion, "cubic");
    f->lo_mtu = 65536;
    f->loadavg[0] = 0.5;
    f->loadavg[1] = 1;
    f->loadavg[2] = 1.25;
    f->tcp_autocorking = 1;
}

static void test_codec_facts_encode_exactly(void **state)
{
    (void)state;
    sm_facts f;
    sm_error err;
    fill_facts(&f);
    char *json = sm_codec_facts_encode(&f, &err);
    assert_string_equal(json, "{\"hostname\":\"h1\",\"kernel\":\"6.1.0\",\"cpu_model\":\"unknown\","
                              "\"cores\":8,\"mem_bytes\":8589934592,\"congestion\":\"cubic\","
                              "\"lo_mtu\":65536,\"loadavg\":[0.5,1,1.25],\"tcp_autocorking\":1}");
    free(json);
}

static void test_codec_facts_round_trip(void **state)
{
    (void)state;
    sm_facts f, back;
    sm_error err;
    fill_facts(&f);
    memset(f.hostname, 'h', sizeof f.hostname - 1); /* the longest that fits */
    f.mem_bytes = (1ull << 60) + 1;                 /* above 2^53: travels as a string */
    f.loadavg[2] = -1;                              /* agent/host/facts.c's "unknown" */
    char *json = sm_codec_facts_encode(&f, &err);
    assert_non_null(json);
    memset(&back, 0xff, sizeof back);
    if (sm_codec_facts_decode(json, strlen(json), &back, &err) != 0)
        fail_msg("%s: %s", json, err.msg);
    assert_string_equal(back.hostname, f.hostname);
    assert_string_equal(back.kernel, f.kernel);
    assert_string_equal(back.cpu_model, f.cpu_model);
    assert_int_equal(back.cores, f.cores);
    assert_int_equal(back.mem_bytes, f.mem_bytes);
    assert_string_equal(back.congestion, f.congestion);
    assert_int_equal(back.lo_mtu, f.lo_mtu);
    for (int i = 0; i < 3; i++)
        assert_true(back.loadavg[i] == f.loadavg[i]);
    assert_int_equal(back.tcp_autocorking, f.tcp_autocorking);
    free(json);
}

/* The machine's identity travels when known and is left out when not, as an older agent
 * leaves it out; either way the facts decode. */
static void test_codec_facts_carry_the_machine_identity_when_known(void **state)
{
    (void)state;
    sm_facts f, back;
    sm_error err;
    fill_facts(&f);
    snprintf(f.boot_id, sizeof f.boot_id, "4af93bb9-6eb3-4520-8a34-0f21e7f76433");
    snprintf(f.machine_id, sizeof f.machine_id, "3d1219c7c4c5404aaa1f6d2a48adfda4");
    char *json = sm_codec_facts_encode(&f, &err);
    assert_contains(json, "\"tcp_autocorking\":1,\"boot_id\":\"4af93bb9-6eb3-4520-8a34-"
                          "0f21e7f76433\",\"machine_id\":\"3d1219c7c4c5404aaa1f6d2a48adfda4\"}");
    assert_int_equal(sm_codec_facts_decode(json, strlen(json), &back, &err), 0);
    assert_string_equal(back.boot_id, f.boot_id);
    assert_string_equal(back.machine_id, f.machine_id);
    free(json);

    f.boot_id[0] = '\0';
    json = sm_codec_facts_encode(&f, &err);
    assert_null(strstr(json, "boot_id"));
    memset(&back, 0xff, sizeof back);
    assert_int_equal(sm_codec_facts_decode(json, strlen(json), &back, &err), 0);
    assert_string_equal(back.boot_id, "");
    assert_string_equal(back.machine_id, f.machine_id);
    free(json);
}

static void test_codec_facts_decode_takes_null_loadavg_as_nan(void **state)
{
    (void)state;
    sm_facts f;
    sm_error err;
    fill_facts(&f);
    f.loadavg[1] = NAN;
    char *json = sm_codec_facts_encode(&f, &err);
    assert_contains(json, "\"loadavg\":[0.5,null,1.25]");
    assert_int_equal(sm_codec_facts_decode(json, strlen(json), &f, &err), 0);
    assert_true(isnan(f.loadavg[1]));
    assert_true(f.loadavg[2] == 1.25);
    free(json);
}

/* Decoding facts is expected to fail with `code` and a reason mentioning `part`; *out zeroed. */
#define assert_facts_error(json, code, part)                                                       \
    check_facts_error((json), (code), (part), __FILE__, __LINE__)

static void check_facts_error(const char *json, int code, const char *part, const char *file,
                              int line)
{
    sm_facts f, zero;
    sm_error err;
    memset(&f, 0xff, sizeof f);
    memset(&zero, 0, sizeof zero);
    sm_error_clear(&err);
    int rc = sm_codec_facts_decode(json, strlen(json), &f, &err);
    _assert_int_equal(cast_to_largest_integral_type(rc), cast_to_largest_integral_type(code), file,
                      line);
    _assert_int_equal(cast_to_largest_integral_type(err.code), cast_to_largest_integral_type(code),
                      file, line);
    check_contains(err.msg, part, true, file, line);
    _assert_true(memcmp(&f, &zero, sizeof f) == 0, "zeroed facts", file, line);
}

#define FACTS_HEAD "{\"hostname\":\"h1\",\"kernel\":\"6.1.0\",\"cpu_model\":\"x\","
#define FACTS_TAIL "\"mem_bytes\":1,\"congestion\":\"cubic\",\"lo_mtu\":65536,"

static void test_codec_facts_decode_rejects_bad_fields(void **state)
{
    (void)state;
    assert_facts_error(FACTS_HEAD "\"cores\":8," FACTS_TAIL
                                  "\"loadavg\":[0,0,0],\"tcp_autocorking\":1,\"gpu\":1}",
                       SM_EPARSE, "facts: unknown field 'gpu'");
    assert_facts_error(FACTS_HEAD "\"cores\":8," FACTS_TAIL "\"loadavg\":[0,0,0]}", SM_EPARSE,
                       "facts: missing field 'tcp_autocorking'");
    assert_facts_error(FACTS_HEAD "\"cores\":-1," FACTS_TAIL
                                  "\"loadavg\":[0,0,0],\"tcp_autocorking\":1}",
                       SM_EPARSE, "cores");
    assert_facts_error(FACTS_HEAD "\"cores\":65537," FACTS_TAIL
                                  "\"loadavg\":[0,0,0],\"tcp_autocorking\":1}",
                       SM_EINVAL, "cores");
    assert_facts_error(FACTS_HEAD "\"cores\":\"8\"," FACTS_TAIL
                                  "\"loadavg\":[0,0,0],\"tcp_autocorking\":1}",
                       SM_EPARSE, "cores");
    assert_facts_error(FACTS_HEAD "\"cores\":8," FACTS_TAIL
                                  "\"loadavg\":[0,0,0],\"tcp_autocorking\":3}",
                       SM_EINVAL, "tcp_autocorking");
    assert_facts_error(FACTS_HEAD "\"cores\":8," FACTS_TAIL
                                  "\"loadavg\":[0,0],\"tcp_autocorking\":1}",
                       SM_EPARSE, "loadavg");
    assert_facts_error(FACTS_HEAD "\"cores\":8," FACTS_TAIL
                                  "\"loadavg\":[0,-2,0],\"tcp_autocorking\":1}",
                       SM_EINVAL, "loadavg");
    assert_facts_error(FACTS_HEAD "\"cores\":8," FACTS_TAIL
                                  "\"loadavg\":[0,\"1\",0],\"tcp_autocorking\":1}",
                       SM_EPARSE, "loadavg");
    /* An empty id would make every agent that sent one a single machine. */
    assert_facts_error(FACTS_HEAD "\"cores\":8," FACTS_TAIL
                                  "\"loadavg\":[0,0,0],\"tcp_autocorking\":1,\"boot_id\":\"\"}",
                       SM_EINVAL, "facts: boot_id: expected hex digits and '-'");
    assert_facts_error(FACTS_HEAD "\"cores\":8," FACTS_TAIL
                                  "\"loadavg\":[0,0,0],\"tcp_autocorking\":1,"
                                  "\"machine_id\":\"x; rm\"}",
                       SM_EINVAL, "facts: machine_id: expected hex digits and '-'");
    assert_facts_error(FACTS_HEAD "\"cores\":8," FACTS_TAIL
                                  "\"loadavg\":[0,0,0],\"tcp_autocorking\":1,\"boot_id\":7}",
                       SM_EPARSE, "facts: boot_id: expected a string");
}

static void test_codec_facts_decode_refuses_a_string_longer_than_its_field(void **state)
{
    (void)state;
    char json[512];
    char cong[33];
    memset(cong, 'c', 32);
    cong[32] = '\0';
    snprintf(json, sizeof json,
             FACTS_HEAD "\"cores\":8,\"mem_bytes\":1,\"congestion\":\"%s\",\"lo_mtu\":1,"
                        "\"loadavg\":[0,0,0],\"tcp_autocorking\":1}",
             cong);
    assert_facts_error(json, SM_EINVAL, "facts: congestion: 32 bytes is above the maximum 31");
    cong[31] = '\0';
    snprintf(json, sizeof json,
             FACTS_HEAD "\"cores\":8,\"mem_bytes\":1,\"congestion\":\"%s\",\"lo_mtu\":1,"
                        "\"loadavg\":[0,0,0],\"tcp_autocorking\":1}",
             cong);
    sm_facts f;
    sm_error err;
    assert_int_equal(sm_codec_facts_decode(json, strlen(json), &f, &err), 0);
    assert_string_equal(f.congestion, cong);
}

static void sample(sm_result *r, double bytes, double seconds, double mbps)
{
    sm_result_init(r);
    r->ok = true;
    sm_result_set(r, SM_M_BYTES, bytes);
    sm_result_set(r, SM_M_SECONDS, seconds);
    sm_result_set(r, SM_M_THROUGHPUT, mbps);
}

static void test_codec_report_encodes_cells_failures_summary_and_ratios(void **state)
{
    (void)state;
    sm_result samples[3], warmup[1];
    sample(&samples[0], 1048576, 0.5, 2000);
    sm_result_init(&samples[1]);
    snprintf(samples[1].reason, sizeof samples[1].reason, "timeout: job exceeded 60000 ms");
    sample(&samples[2], 1048576, 0.25, 4000);
    sample(&warmup[0], 1048576, 1, 1000);

    sm_cell_report cell;
    memset(&cell, 0, sizeof cell);
    sm_params_init(&cell.params, SM_WL_STREAM);
    snprintf(cell.variant, sizeof cell.variant, "tcp");
    cell.samples = samples;
    cell.n_samples = 3;
    cell.warmup = warmup;
    cell.n_warmup = 1;
    cell.summary[SM_M_THROUGHPUT] = (sm_summary){.n = 2,
                                                 .median = 3000,
                                                 .mean = 3000,
                                                 .stddev = 1414.25,
                                                 .min = 2000,
                                                 .max = 4000,
                                                 .cv = 0.5,
                                                 .ci95_low = 2000,
                                                 .ci95_high = 4000,
                                                 .ci_coverage = 0.5};
    cell.summary_have = 1ull << SM_M_THROUGHPUT;

    sm_ratio ratio;
    memset(&ratio, 0, sizeof ratio);
    ratio.metric = SM_M_THROUGHPUT;
    snprintf(ratio.numerator, sizeof ratio.numerator, "unix");
    snprintf(ratio.denominator, sizeof ratio.denominator, "tcp");
    ratio.summary = (sm_summary){
        .n = 2, .median = 1.5, .ci95_low = 1.25, .ci95_high = 1.75, .ci_coverage = 0.5};

    sm_report rep;
    memset(&rep, 0, sizeof rep);
    fill_facts(&rep.facts);
    rep.cells = &cell;
    rep.n_cells = 1;
    rep.ratios = &ratio;
    rep.n_ratios = 1;

    sm_error err;
    char *json = sm_codec_report_encode(&rep, 0, &err);
    assert_non_null(json);
    assert_contains(json, "{\"version\":1,\"host\":{\"hostname\":\"h1\",");
    assert_contains(json, "\"cells\":[{\"workload\":\"stream\",\"transport\":\"tcp\","
                          "\"variant\":\"tcp\",\"params\":{\"workload\":\"stream\",");
    assert_contains(json, "\"samples\":[{\"repetition\":1,\"bytes\":1048576,\"seconds\":0.5,"
                          "\"throughput_MBps\":2000},{\"repetition\":3,\"bytes\":1048576,"
                          "\"seconds\":0.25,\"throughput_MBps\":4000}],");
    assert_contains(json, "\"warmup_samples\":[{\"repetition\":1,\"bytes\":1048576,");
    assert_contains(json, "\"failures\":[{\"repetition\":2,"
                          "\"reason\":\"timeout: job exceeded 60000 ms\"}]");
    assert_lacks(json, "{\"repetition\":2,\"bytes\"");
    assert_contains(json, "\"summary\":{\"throughput_MBps\":{\"n\":2,\"median\":3000,"
                          "\"mean\":3000,\"stddev\":1414.25,\"min\":2000,\"max\":4000,"
                          "\"ci95_low\":2000,\"ci95_high\":4000,\"ci_coverage\":0.5,\"cv\":0.5}}");
    assert_contains(json, "\"ratios\":[{\"metric\":\"throughput_MBps\",\"numerator\":\"unix\","
                          "\"denominator\":\"tcp\",\"n\":2,\"median\":1.5,\"ci95_low\":1.25,"
                          "\"ci95_high\":1.75,\"ci_coverage\":0.5}]}");
    free(json);
}

static void test_codec_report_failed_warmup_is_marked_in_failures(void **state)
{
    (void)state;
    sm_result warmup;
    sm_result_init(&warmup);
    snprintf(warmup.reason, sizeof warmup.reason, "refused");
    sm_cell_report cell;
    memset(&cell, 0, sizeof cell);
    sm_params_init(&cell.params, SM_WL_CONNECT);
    cell.warmup = &warmup;
    cell.n_warmup = 1;
    sm_report rep;
    memset(&rep, 0, sizeof rep);
    rep.cells = &cell;
    rep.n_cells = 1;
    sm_error err;
    char *json = sm_codec_report_encode(&rep, 0, &err);
    assert_contains(json, "\"samples\":[],\"warmup_samples\":[],\"failures\":[{\"repetition\":1,"
                          "\"reason\":\"refused\",\"warmup\":true}],\"summary\":{}");
    free(json);
}

static void test_codec_report_empty_is_valid_and_pretty_prints(void **state)
{
    (void)state;
    sm_report rep;
    memset(&rep, 0, sizeof rep);
    fill_facts(&rep.facts);
    sm_error err;
    char *json = sm_codec_report_encode(&rep, 0, &err);
    assert_contains(json, ",\"cells\":[],\"ratios\":[]}");
    free(json);
    json = sm_codec_report_encode(&rep, 1, &err);
    assert_contains(json, "{\n\t\"version\":\t1,\n");
    free(json);
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
        cmocka_unit_test(test_codec_result_round_trips_metrics_and_histogram),
        cmocka_unit_test(test_codec_result_decodes_an_rr_histogram_sparse),
        cmocka_unit_test(test_codec_result_encodes_exactly),
        cmocka_unit_test(test_codec_result_cpu_ids_are_optional_and_bounded),
        cmocka_unit_test(test_codec_result_failure_round_trips_reason),
        cmocka_unit_test(test_codec_result_host_block_round_trips_with_nulls_for_unknown),
        cmocka_unit_test(test_codec_result_without_host_block_decodes_as_not_disturbed),
        cmocka_unit_test(test_codec_result_bad_host_block_is_rejected),
        cmocka_unit_test(test_codec_result_omits_non_finite_metrics),
        cmocka_unit_test(test_codec_result_long_reason_is_truncated_on_a_character),
        cmocka_unit_test(test_codec_result_bucket_index_out_of_range_is_rejected),
        cmocka_unit_test(test_codec_result_bucket_counts_must_sum_to_count),
        cmocka_unit_test(test_codec_result_bucket_indices_must_increase),
        cmocka_unit_test(test_codec_result_hist_extremes_must_match_buckets),
        cmocka_unit_test(test_codec_result_hist_must_be_complete_and_in_ns),
        cmocka_unit_test(test_codec_result_bad_metrics_are_rejected),
        cmocka_unit_test(test_codec_result_shape_errors_are_rejected),
        cmocka_unit_test(test_codec_result_uses_the_documented_metric_names),
        cmocka_unit_test(test_codec_facts_encode_exactly),
        cmocka_unit_test(test_codec_facts_round_trip),
        cmocka_unit_test(test_codec_facts_carry_the_machine_identity_when_known),
        cmocka_unit_test(test_codec_facts_decode_takes_null_loadavg_as_nan),
        cmocka_unit_test(test_codec_facts_decode_rejects_bad_fields),
        cmocka_unit_test(test_codec_facts_decode_refuses_a_string_longer_than_its_field),
        cmocka_unit_test(test_codec_report_encodes_cells_failures_summary_and_ratios),
        cmocka_unit_test(test_codec_report_failed_warmup_is_marked_in_failures),
        cmocka_unit_test(test_codec_report_empty_is_valid_and_pretty_prints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
