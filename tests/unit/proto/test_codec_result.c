/* Unit tests of proto/codec's results: metrics, histograms and the host block on the wire, exactly,
 * and every refusal. */
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

static int decode_result(const char *json, sm_result *out, sm_error *err)
{
    return sm_codec_result_decode(json, strlen(json), out, err);
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
    codec_fixture_check_contains(err.msg, part, true, file, line);
    _assert_true(r.hist == NULL && r.have == 0 && !r.ok, "empty result", file, line);
    sm_result_fini(&r);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
