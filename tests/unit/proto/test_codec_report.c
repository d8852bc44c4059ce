/* Unit tests of proto/codec's report: its cells, failures, summary and ratios. */
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
    codec_fixture_fill_facts(&rep.facts);
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
    codec_fixture_fill_facts(&rep.facts);
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
        cmocka_unit_test(test_codec_report_encodes_cells_failures_summary_and_ratios),
        cmocka_unit_test(test_codec_report_failed_warmup_is_marked_in_failures),
        cmocka_unit_test(test_codec_report_empty_is_valid_and_pretty_prints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
