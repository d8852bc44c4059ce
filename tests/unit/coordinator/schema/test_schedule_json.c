/* Unit tests of recurring runs' JSON (coordinator/schema/schedule_json.c): the webhook body's exact
 * bytes, which flags count as new, and the spec a firing runs with the schedule's hosts. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "coordinator/schema/schedule_json.h"

#define FLEET_H2                                                                                   \
    "{\"kind\":\"fleet\",\"host\":\"h2\",\"role\":\"\",\"test\":\"stream tcp\",\"metric\":"        \
    "\"throughput_MBps\",\"unit\":\"MB/s\",\"ratio\":false,\"value\":30,\"reference\":100,"        \
    "\"z\":null,\"rel\":-0.7,\"floor\":0.15,\"rule\":\"MAD 0, >= 15%\",\"direction\":\"slower\","  \
    "\"at_limit\":false}"
#define REG_H2                                                                                     \
    "{\"kind\":\"regression\",\"host\":\"h2\",\"role\":\"\",\"test\":\"stream tcp\",\"metric\":"   \
    "\"throughput_MBps\",\"unit\":\"MB/s\",\"ratio\":false,\"value\":30,\"reference\":100,"        \
    "\"z\":null,\"rel\":-0.7,\"floor\":0.15,\"rule\":\"CIs apart and >= 15%\",\"direction\":"      \
    "\"slower\",\"at_limit\":false,\"fleet_move\":0}"

static const sm_hook_run RUN = {3, "nightly", 12, "tiny", 1700000000123};

static void test_hook_body_bytes_for_a_new_flag_and_a_regression(void **state)
{
    (void)state;
    const char *now = "{\"version\":1,\"run\":{\"id\":\"12\",\"name\":\"tiny\"},\"baseline\":"
                      "{\"id\":\"11\"},\"anomalies\":[" FLEET_H2 "," REG_H2 "]}";
    const char *event = NULL;
    char *body = NULL;
    sm_error err = {0};
    assert_int_equal(sm_schedule_hook_body(&RUN, now, NULL, &event, &body, &err), 0);
    assert_string_equal(event, "regression");
    assert_string_equal(
        body,
        "{\"event\":\"regression\",\"schedule\":{\"id\":\"3\",\"name\":\"nightly\"},\"run\":{"
        "\"id\":"
        "\"12\",\"name\":\"tiny\",\"finished_ms\":1700000000123},\"baseline_run\":\"11\",\"flags\":"
        "[{\"host\":\"h2\",\"test\":\"stream tcp\",\"metric\":\"throughput_MBps\",\"text\":\"h2: "
        "stream tcp (MB/s) 30 MB/s vs fleet 100 MB/s, 3.3x slower, z - [MAD 0, >= "
        "15%]\"}],\"regressions\":[{\"host\":\"h2\",\"test\":\"stream tcp\",\"metric\":"
        "\"throughput_MBps\",\"text\":\"h2: stream tcp (MB/s) 30 MB/s vs baseline 100 "
        "MB/s, 3.3x slower, z - [CIs apart and >= 15%]\"}]}");
    free(body);
}

static void test_hook_body_leaves_out_flags_the_previous_run_had(void **state)
{
    (void)state;
    const char *now = "{\"baseline\":null,\"anomalies\":[" FLEET_H2 "]}";
    const char *same = "{\"baseline\":null,\"anomalies\":[" FLEET_H2 "]}";
    const char *event = "x";
    char *body = (char *)"x";
    sm_error err = {0};
    assert_int_equal(sm_schedule_hook_body(&RUN, now, same, &event, &body, &err), 0);
    assert_null(event);
    assert_null(body);
    /* the previous run flagged another host: h2's flag is new, with no baseline */
    const char *other = "{\"baseline\":null,\"anomalies\":[{\"kind\":\"fleet\",\"host\":\"h3\","
                        "\"test\":\"stream tcp\",\"direction\":\"slower\"}]}";
    assert_int_equal(sm_schedule_hook_body(&RUN, now, other, &event, &body, &err), 0);
    assert_string_equal(event, "flag");
    assert_non_null(strstr(body, "\"event\":\"flag\""));
    assert_non_null(strstr(body, "\"baseline_run\":null"));
    assert_non_null(strstr(body, "\"regressions\":[]"));
    free(body);
    /* nothing at all */
    assert_int_equal(sm_schedule_hook_body(&RUN, "{\"anomalies\":[]}", NULL, &event, &body, &err),
                     0);
    assert_null(body);
    assert_int_equal(sm_schedule_hook_body(&RUN, "{}", NULL, &event, &body, &err), SM_EPARSE);
    assert_int_equal(sm_schedule_hook_body(&RUN, NULL, NULL, &event, &body, &err), SM_EPARSE);
}

/* A run that could not judge its cells tells so, even with nothing new to flag. */
static void test_hook_body_says_inconclusive_with_the_cells_not_judged(void **state)
{
    (void)state;
    const char *now =
        "{\"baseline\":null,\"verdict\":\"inconclusive\",\"summary\":\"0 anomalies among 0 "
        "judged cells; 3 cells inconclusive\",\"inconclusive\":[{\"row\":\"h1\",\"test\":"
        "\"stream tcp\",\"brief\":\"\",\"ratio\":false,\"verdict\":\"inconclusive\",\"why\":"
        "\"3 of 3 samples disturbed: steal\"}],\"anomalies\":[]}";
    const char *event = NULL;
    char *body = NULL;
    sm_error err = {0};
    assert_int_equal(sm_schedule_hook_body(&RUN, now, NULL, &event, &body, &err), 0);
    assert_string_equal(event, "inconclusive");
    assert_non_null(strstr(body, "\"event\":\"inconclusive\""));
    assert_non_null(strstr(body, "\"verdict\":\"inconclusive\",\"summary\":\"0 anomalies among 0 "
                                 "judged cells; 3 cells inconclusive\",\"inconclusive\":[{\"host\":"
                                 "\"h1\",\"test\":\"stream tcp\",\"verdict\":\"inconclusive\","
                                 "\"why\":\"3 of 3 samples disturbed: steal\"}]"));
    free(body);
    /* A new flag is the event; the verdict rides along. */
    const char *flagged =
        "{\"baseline\":null,\"verdict\":\"flagged\",\"summary\":\"1 anomaly among 3 judged "
        "cells\",\"inconclusive\":[],\"anomalies\":[" FLEET_H2 "]}";
    assert_int_equal(sm_schedule_hook_body(&RUN, flagged, NULL, &event, &body, &err), 0);
    assert_string_equal(event, "flag");
    assert_non_null(strstr(body, "\"verdict\":\"flagged\""));
    free(body);
    /* Judged and nothing new: nothing to tell. */
    const char *ok = "{\"baseline\":null,\"verdict\":\"ok\",\"inconclusive\":[],"
                     "\"anomalies\":[]}";
    assert_int_equal(sm_schedule_hook_body(&RUN, ok, NULL, &event, &body, &err), 0);
    assert_null(event);
    assert_null(body);
}

/* An experiment's report as GET /api/runs/ID/experiment gives it, with or without a cause. */
#define XP_HEAD                                                                                    \
    "{\"run\":\"14\",\"explains\":\"12\",\"host\":\"h2\",\"test\":\"stream tcp\",\"unit\":"        \
    "\"s\",\"state\":\"done\",\"summary\":\"h2: lo qdisc is the cause\","
#define XP_CAUSE                                                                                   \
    "{\"item\":\"if.lo.qdisc\",\"label\":\"lo qdisc\",\"treatment\":\"qdisc lo noqueue\","         \
    "\"verdict\":\"cause\",\"share\":0.96123456789012345,\"lo\":0.94,\"hi\":0.98}"

static void test_cause_body_carries_the_proven_cause_exactly(void **state)
{
    (void)state;
    const char *xp = XP_HEAD "\"cause\":" XP_CAUSE ",\"control\":{\"n\":8},\"suspects\":[]}";
    const char *event = NULL;
    char *body = NULL;
    sm_error err = {0};
    assert_int_equal(sm_schedule_cause_body(&RUN, xp, &event, &body, &err), 0);
    assert_string_equal(event, "cause");
    /* The run the experiment explains; no baseline; the cause as the report gave it. */
    assert_string_equal(body,
                        "{\"event\":\"cause\",\"schedule\":{\"id\":\"3\",\"name\":\"nightly\"},"
                        "\"run\":{\"id\":\"12\",\"name\":\"tiny\",\"finished_ms\":1700000000123},"
                        "\"experiment\":{\"run\":\"14\",\"host\":\"h2\",\"test\":\"stream tcp\","
                        "\"state\":\"done\",\"summary\":\"h2: lo qdisc is the cause\",\"cause\":"
                        "{\"item\":\"if.lo.qdisc\",\"label\":\"lo qdisc\",\"treatment\":"
                        "\"qdisc lo noqueue\",\"verdict\":\"cause\",\"share\":0.9612345678901234,"
                        "\"lo\":0.94,\"hi\":0.98}}}");
    free(body);
}

static void test_cause_body_without_a_cause_is_an_experiment_event(void **state)
{
    (void)state;
    const char *event = "x";
    char *body = (char *)"x";
    sm_error err = {0};
    assert_int_equal(sm_schedule_cause_body(&RUN, XP_HEAD "\"cause\":null}", &event, &body, &err),
                     0);
    assert_string_equal(event, "experiment");
    assert_non_null(strstr(body, "\"event\":\"experiment\""));
    assert_non_null(strstr(body, "\"cause\":null}}"));
    free(body);

    /* Not a report: no body, no event, a reason. */
    static const char *const bad[] = {NULL, "", "[]", XP_HEAD "\"cause\":7}",
                                      "{\"run\":\"14\",\"cause\":null}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        event = "x";
        body = (char *)"x";
        assert_int_equal(sm_schedule_cause_body(&RUN, bad[i], &event, &body, &err), SM_EPARSE);
        assert_null(event);
        assert_null(body);
        assert_non_null(strstr(err.msg, "not an experiment's report"));
    }
}

static void test_schedule_spec_puts_its_hosts_in(void **state)
{
    (void)state;
    char *out = NULL;
    sm_error err = {0};
    assert_int_equal(
        sm_schedule_spec("{\"name\":\"t\",\"hosts\":\"all\",\"tests\":[]}", "[\"h2\"]", &out, &err),
        0);
    assert_string_equal(out, "{\"name\":\"t\",\"tests\":[],\"hosts\":[\"h2\"]}");
    free(out);
    assert_int_equal(sm_schedule_spec("{\"name\":\"t\"}", "", &out, &err), 0);
    assert_string_equal(out, "{\"name\":\"t\"}");
    free(out);
    assert_int_equal(sm_schedule_spec("{\"name\":\"t\"}", "{", &out, &err), SM_EPARSE);
    assert_null(out);
}

static void test_schedule_req_parses_a_preset_with_hosts(void **state)
{
    (void)state;
    sm_schedule_req r;
    sm_error err = {0};
    const char *body = "{\"name\":\"n\",\"preset\":\"seed-tcp-unix\",\"cron\":\"*/5 * * * 1-5\","
                       "\"hosts\":[\"a\",\"b\"],\"webhook\":\"https://example.net/x\"}";
    assert_int_equal(sm_schedule_req_parse(body, strlen(body), &r, &err), 0);
    assert_string_equal(r.name, "n");
    assert_int_equal(r.every_s, 0);
    assert_string_equal(r.cron, "*/5 * * * 1-5");
    assert_string_equal(r.hosts_json, "[\"a\",\"b\"]");
    assert_string_equal(r.webhook, "https://example.net/x");
    assert_non_null(strstr(r.spec_json, "\"name\":\"seed-tcp-unix\""));
    sm_schedule_req_fini(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hook_body_bytes_for_a_new_flag_and_a_regression),
        cmocka_unit_test(test_hook_body_leaves_out_flags_the_previous_run_had),
        cmocka_unit_test(test_hook_body_says_inconclusive_with_the_cells_not_judged),
        cmocka_unit_test(test_cause_body_carries_the_proven_cause_exactly),
        cmocka_unit_test(test_cause_body_without_a_cause_is_an_experiment_event),
        cmocka_unit_test(test_schedule_spec_puts_its_hosts_in),
        cmocka_unit_test(test_schedule_req_parses_a_preset_with_hosts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
