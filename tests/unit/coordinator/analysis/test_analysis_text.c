/* Unit tests of how the analysis's anomalies read: their text, the flags of a cell, the JSON of
 * their evidence, and the names of kinds. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "coordinator/analysis/analysis.h"
#include "coordinator/analysis/table.h"
#include "tests/unit/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- text, flags, JSON ---- */

static sm_anomaly slow_host_anomaly(void)
{
    sm_anomaly x = {.kind = SM_ANOMALY_SLOW_HOST,
                    .value = 333.3,
                    .reference = 1000,
                    .z = NAN,
                    .rel = -0.6667,
                    .floor = 0.15,
                    .dir = SM_DIR_SLOWER,
                    .row = 1};
    snprintf(x.host, sizeof x.host, "h3");
    snprintf(x.role, sizeof x.role, "server");
    snprintf(x.test, sizeof x.test, "stream tcp 1 GB");
    snprintf(x.metric, sizeof x.metric, "throughput_MBps");
    snprintf(x.unit, sizeof x.unit, "MB/s");
    snprintf(x.rule, sizeof x.rule, "MAD 0, >= 15%%");
    return x;
}

static void test_analysis_slow_host_text_names_the_role_and_shows_no_z_for_mad_0(void **state)
{
    (void)state;
    sm_anomaly x = slow_host_anomaly();
    char buf[256];
    sm_anomaly_text(&x, buf, sizeof buf);
    assert_string_equal(buf, "h3 (server): stream tcp 1 GB (MB/s) 333.3 MB/s vs overall "
                             "1000 MB/s, 3.0x slower, z - [MAD 0, >= 15%]");
    sm_table t;
    assert_int_equal(sm_table_init(&t, 2, 1, 0), 0);
    t.pairs = true;
    snprintf(t.rows[0], sizeof t.rows[0], "h3->h1");
    snprintf(t.rows[1], sizeof t.rows[1], "h1->h3");
    sm_anomalies a = {.v = &x, .n = 1, .cap = 1};
    sm_analysis_flag_table(&t, &a);
    assert_string_equal(t.flags[0], "");
    assert_string_equal(t.flags[1], "slow host: h3 (server) stream tcp 1 GB 333 MB/s vs 1000 MB/s "
                                    "(MAD 0)");
    sm_table_fini(&t);
}

static void test_analysis_flags_keep_whole_entries_and_say_how_many_more(void **state)
{
    (void)state;
    sm_table t;
    assert_int_equal(sm_table_init(&t, 2, 0, 0), 0);
    snprintf(t.rows[0], sizeof t.rows[0], "h1");
    snprintf(t.rows[1], sizeof t.rows[1], "h2");
    sm_anomaly v[10];
    for (size_t i = 0; i < 10; i++) {
        v[i] = (sm_anomaly){
            .kind = SM_ANOMALY_FLEET, .value = 2, .reference = 1, .z = 9, .row = i == 9 ? 1 : 0};
        /* 64-character labels: entries of 83 bytes, three with "; " take 253. */
        snprintf(v[i].test, sizeof v[i].test, "%063zu%c", i, 'x');
        snprintf(v[i].unit, sizeof v[i].unit, "s");
    }
    sm_anomalies a = {.v = v, .n = 10, .cap = 10};
    sm_analysis_flag_table(&t, &a);
    char entry[2][128];
    for (size_t i = 0; i < 2; i++)
        snprintf(entry[i], sizeof entry[i], "%063zux 2 s vs 1 s (z 9.0)", i);
    assert_int_equal(strlen(entry[0]), 83);
    /* Three entries would leave no room for " (+6 more)": two are kept. */
    char want[512];
    snprintf(want, sizeof want, "%s; %s (+7 more)", entry[0], entry[1]);
    assert_string_equal(t.flags[0], want);
    snprintf(want, sizeof want, "%063zux 2 s vs 1 s (z 9.0)", (size_t)9);
    assert_string_equal(t.flags[1], want);

    /* Exactly three: they fit without a suffix. */
    a.n = 3;
    sm_analysis_flag_table(&t, &a);
    assert_int_equal(strlen(t.flags[0]), 3 * 83 + 2 * 2);
    assert_null(strstr(t.flags[0], "more"));
    assert_string_equal(t.flags[1], "");

    /* An entry that cannot fit at all leaves the count alone. */
    snprintf(v[0].host, sizeof v[0].host, "%0100d", 0);
    v[0].kind = SM_ANOMALY_SLOW_HOST;
    snprintf(v[0].role, sizeof v[0].role, "client");
    snprintf(v[0].test, sizeof v[0].test, "%0126d", 0);
    snprintf(t.rows[0], sizeof t.rows[0], "%.100s->h2", v[0].host);
    a.n = 1;
    sm_analysis_flag_table(&t, &a);
    assert_string_equal(t.flags[0], "(+1 more)");
    sm_table_fini(&t);
}

static void test_analysis_json_lists_the_evidence_with_null_for_a_missing_z(void **state)
{
    (void)state;
    sm_anomaly v[2];
    v[0] = (sm_anomaly){.kind = SM_ANOMALY_FLEET,
                        .value = 0.23,
                        .reference = 0.133,
                        .z = 21.5,
                        .rel = 0.75,
                        .floor = 0.15,
                        .dir = SM_DIR_SLOWER};
    snprintf(v[0].host, sizeof v[0].host, "h1");
    snprintf(v[0].test, sizeof v[0].test, "tcp/unix \"x\"");
    snprintf(v[0].metric, sizeof v[0].metric, "seconds");
    snprintf(v[0].unit, sizeof v[0].unit, "x");
    v[0].ratio = true;
    snprintf(v[0].rule, sizeof v[0].rule, "|z| > 3.5 and >= 15%%");
    v[1] = slow_host_anomaly();
    sm_anomalies a = {.v = v, .n = 2, .cap = 2};
    char *json = sm_anomalies_json(7, "nightly", 0, NULL, &a);
    assert_non_null(json);
    assert_string_equal(
        json,
        "{\"version\":1,\"run\":{\"id\":\"7\",\"name\":\"nightly\"},\"baseline\":null,"
        "\"z\":3.5,\"floor\":0.15,\"anomalies\":["
        "{\"kind\":\"fleet\",\"host\":\"h1\",\"role\":\"\",\"test\":\"tcp/unix \\\"x\\\"\","
        "\"metric\":\"seconds\",\"unit\":\"x\",\"ratio\":true,\"value\":0.23,"
        "\"reference\":0.133,\"z\":21.5,\"rel\":0.75,\"floor\":0.15,"
        "\"rule\":\"|z| > 3.5 and >= 15%\",\"direction\":\"slower\",\"at_limit\":false},"
        "{\"kind\":\"slow-host\",\"host\":\"h3\",\"role\":\"server\","
        "\"test\":\"stream tcp 1 GB\",\"metric\":\"throughput_MBps\",\"unit\":\"MB/s\","
        "\"ratio\":false,\"value\":333.3,\"reference\":1000,\"z\":null,\"rel\":-0.6667,"
        "\"floor\":0.15,\"rule\":\"MAD 0, >= 15%\",\"direction\":\"slower\",\"at_limit\":false}]}");
    free(json);

    sm_analysis_opts o = {.z = 3, .floor = 0.2};
    sm_anomalies none = {0};
    json = sm_anomalies_json(UINT64_C(18446744073709551615), "", 5, &o, &none);
    assert_non_null(json);
    assert_string_equal(json, "{\"version\":1,\"run\":{\"id\":\"18446744073709551615\","
                              "\"name\":\"\"},\"baseline\":{\"id\":\"5\"},\"z\":3,\"floor\":0.2,"
                              "\"anomalies\":[]}");
    free(json);
}

static void test_analysis_names_kinds_and_directions(void **state)
{
    (void)state;
    assert_string_equal(sm_anomaly_kind_name(SM_ANOMALY_FLEET), "fleet");
    assert_string_equal(sm_anomaly_kind_name(SM_ANOMALY_SLOW_HOST), "slow-host");
    assert_string_equal(sm_anomaly_kind_name(SM_ANOMALY_SLOW_LINK), "slow-link");
    assert_string_equal(sm_anomaly_kind_name(SM_ANOMALY_REGRESSION), "regression");
    assert_string_equal(sm_anomaly_dir_name(SM_DIR_SLOWER), "slower");
    assert_string_equal(sm_anomaly_dir_name(SM_DIR_FASTER), "faster");
    assert_string_equal(sm_anomaly_dir_name(SM_DIR_HIGHER), "higher");
    assert_string_equal(sm_anomaly_dir_name(SM_DIR_LOWER), "lower");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_analysis_slow_host_text_names_the_role_and_shows_no_z_for_mad_0),
        cmocka_unit_test(test_analysis_flags_keep_whole_entries_and_say_how_many_more),
        cmocka_unit_test(test_analysis_json_lists_the_evidence_with_null_for_a_missing_z),
        cmocka_unit_test(test_analysis_names_kinds_and_directions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
