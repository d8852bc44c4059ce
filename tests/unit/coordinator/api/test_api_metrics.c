/* Unit tests of GET /metrics (coordinator/api/metrics.c) over a real SQLite store and a real
 * control: the media type, one HELP and TYPE per family, the rejects and agents as counted, and the
 * method refused; the cell families from run tables (flags, escaping, cells without a value, the
 * cap). Cells read from a real run's table are tests/integration/test_metrics.py's. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/coordinator/api/api_fixture.h"
#include "coordinator/api/api.h"
#include "coordinator/api/internal.h"
#include "coordinator/analysis/promtext.h"
#include "coordinator/control/control.h"
#include "coordinator/store/store.h"

static char *scrape(fixture *f)
{
    char *body = NULL;
    size_t len = 0;
    const char *ctype = NULL;
    assert_int_equal(
        sm_api_handle(&f->api, "GET", "/metrics", NULL, NULL, "", 0, &body, &len, &ctype), 200);
    assert_non_null(body);
    assert_int_equal(len, strlen(body));
    assert_string_equal(ctype, "text/plain; version=0.0.4; charset=utf-8");
    return body;
}

static size_t count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* The fixture with the ws hub's counters: 3 clients. */
static int setup_ws(void **state)
{
    int rc = setup(state);
    fixture *f = *state;
    f->ws[0] = 3;
    f->api.ws_counters = f->ws;
    return rc;
}

static void test_metrics_give_counters_rejects_and_agents_in_the_text_format(void **state)
{
    fixture *f = *state;
    sm_rejects_add(f->rejects, SM_REJ_MAC, 4);
    register_agent(f, "h1");
    register_agent(f, "h2");
    char *text = scrape(f);
    assert_non_null(strstr(text, "# TYPE sockmatrix_polls_total counter\n"
                                 "sockmatrix_polls_total 2\n"));
    assert_non_null(strstr(text, "sockmatrix_rejects_total{reason=\"mac\"} 4\n"));
    assert_non_null(strstr(text, "sockmatrix_rejects_total{reason=\"skew\"} 0\n"));
    assert_non_null(strstr(text, "sockmatrix_rejects_total{reason=\"wrong-host\"} 0\n"));
    assert_non_null(strstr(text, "sockmatrix_ws_clients 3\n"));
    assert_non_null(strstr(text, "sockmatrix_agents{status=\"online\"} 2\n"));
    assert_non_null(strstr(text, "sockmatrix_agents{status=\"lost\"} 0\n"));
    assert_non_null(strstr(text, "sockmatrix_agent_up{agent=\"h1\"} 1\n"
                                 "sockmatrix_agent_up{agent=\"h2\"} 1\n"));
    assert_non_null(strstr(text, "sockmatrix_store_failing 0\n"));
    assert_non_null(strstr(text, "sockmatrix_jobs_done_total 0\n"));
    /* No finished run: the cell families are declared, with no sample. */
    assert_non_null(strstr(text, "# TYPE sockmatrix_cell_median gauge\n# HELP"));
    assert_null(strstr(text, "sockmatrix_cell_median{"));
    /* One HELP and one TYPE per family, and as many of each. */
    assert_int_equal(count(text, "# HELP sockmatrix_rejects_total "), 1);
    assert_int_equal(count(text, "# TYPE sockmatrix_rejects_total "), 1);
    assert_int_equal(count(text, "# HELP "), count(text, "# TYPE "));
    assert_int_equal(count(text, "# HELP "), 19);
    free(text);
}

static void test_metrics_answer_only_get(void **state)
{
    fixture *f = *state;
    char *body = NULL;
    size_t len = 0;
    const char *ctype = NULL;
    assert_int_equal(
        sm_api_handle(&f->api, "POST", "/metrics", NULL, NULL, "", 0, &body, &len, &ctype), 405);
    assert_string_equal(ctype, "application/json");
    assert_non_null(strstr(body, "use GET"));
    free(body);
}

/* Two hosts x two columns; h2's row flagged; h1's second cell has no value. */
static const char TABLE[] =
    "{\"version\":1,\"rows\":[\"h1\",\"h2\"],"
    "\"columns\":[{\"label\":\"stream tcp \\\"x\\\" 1000 B\",\"metric\":\"throughput_MBps\","
    "\"unit\":\"MB/s\"},{\"label\":\"rr unix\",\"metric\":\"latency_us\",\"unit\":\"us\"}],"
    "\"cells\":[{\"row\":0,\"column\":0,\"n\":3,\"median\":231.5,\"ci95_low\":220,"
    "\"ci95_high\":241.25},{\"row\":0,\"column\":1,\"n\":0,\"median\":null},"
    "{\"row\":1,\"column\":0,\"n\":3,\"median\":6.125,\"ci95_low\":6,\"ci95_high\":6.5},"
    "{\"row\":1,\"column\":1,\"n\":3,\"median\":0.04505,\"ci95_low\":0.01952,"
    "\"ci95_high\":0.06031}],\"flags\":[{\"row\":1,\"flag\":\"slow\"}]}";

static char *cells_text(const sm_metrics_table *t, size_t n, size_t cap)
{
    sm_prom p;
    sm_prom_init(&p);
    sm_api_metrics_cells(&p, t, n, cap);
    size_t len;
    char *text = sm_prom_take(&p, &len);
    assert_non_null(text);
    return text;
}

/* text holds "<name><labels> <value>" ending its line. */
static void assert_series(const char *text, const char *name, const char *labels, const char *value)
{
    char want[512];
    snprintf(want, sizeof want, "%s%s %s\n", name, labels, value);
    if (!strstr(text, want))
        fail_msg("no line %s", want);
}

static void test_metrics_cells_give_median_ci_flag_and_run_id_with_stable_labels(void **state)
{
    (void)state;
    const sm_metrics_table t[] = {
        {"seed", 7, TABLE}, {"broken", 8, "{not json"}, {"none", 9, NULL}};
    char *text = cells_text(t, 3, 2000);
    const char *l1 = "{run_name=\"seed\",host=\"h1\",test=\"stream tcp \\\"x\\\" 1000 "
                     "B\",metric=\"throughput_MBps\",unit=\"MB/s\"}";
    const char *l2 = "{run_name=\"seed\",host=\"h2\",test=\"rr unix\",metric=\"latency_us\","
                     "unit=\"us\"}";
    assert_series(text, "sockmatrix_cell_median", l1, "231.5");
    assert_series(text, "sockmatrix_cell_ci95_high", l1, "241.25");
    assert_series(text, "sockmatrix_cell_median", l2, "0.04505");
    assert_series(text, "sockmatrix_cell_ci95_low", l2, "0.01952");
    assert_series(text, "sockmatrix_cell_flagged", l1, "0");
    assert_series(text, "sockmatrix_cell_flagged", l2, "1");
    /* the run id in its own series, without the unit; never a label of the values */
    assert_non_null(strstr(text, "sockmatrix_cell_run_id{run_name=\"seed\",host=\"h2\",test=\"rr "
                                 "unix\",metric=\"latency_us\"} 7\n"));
    assert_null(strstr(text, "run_id="));
    assert_null(strstr(text, "run=\""));
    /* h1's cell without a value has no series; the broken and absent tables give none */
    assert_int_equal(count(text, "sockmatrix_cell_median{"), 3);
    assert_int_equal(count(text, "sockmatrix_cell_run_id{"), 3);
    assert_null(strstr(text, "broken"));
    assert_non_null(strstr(text, "# cells: the latest finished run of each name, at most 16 names "
                                 "and 2000 cells\n"));
    free(text);
}

/* One host, a time column and its tcp/unix ratio; an http user-CPU ratio without a value. */
static const char RATIO_TABLE[] =
    "{\"version\":1,\"rows\":[\"h1\"],"
    "\"columns\":[{\"label\":\"stream tcp lines 128 B\",\"metric\":\"seconds\",\"unit\":\"s\"}],"
    "\"cells\":[{\"row\":0,\"column\":0,\"n\":5,\"median\":0.5,\"ci95_low\":0.4,"
    "\"ci95_high\":0.6}],"
    "\"ratio_columns\":[{\"label\":\"tcp/unix stream lines 128 B\",\"metric\":\"seconds\","
    "\"unit\":\"x\"},{\"label\":\"pool/thread http 16 MiB\",\"metric\":\"user_s\","
    "\"unit\":\"x\"}],"
    "\"ratios\":[{\"row\":0,\"column\":0,\"n\":5,\"median\":1.375,\"ci95_low\":1.25,"
    "\"ci95_high\":1.5},{\"row\":0,\"column\":1,\"n\":0,\"median\":null}],"
    "\"flags\":[{\"row\":0,\"flag\":\"slow\"}]}";

static void test_metrics_ratio_columns_give_median_and_ci_labelled_metric_ratio(void **state)
{
    (void)state;
    const sm_metrics_table t[] = {{"seed", 7, RATIO_TABLE}};
    char *text = cells_text(t, 1, 2000);
    const char *l = "{run_name=\"seed\",host=\"h1\",test=\"tcp/unix stream lines 128 "
                    "B\",metric=\"ratio\",unit=\"x\"}";
    assert_series(text, "sockmatrix_cell_median", l, "1.375");
    assert_series(text, "sockmatrix_cell_ci95_low", l, "1.25");
    assert_series(text, "sockmatrix_cell_ci95_high", l, "1.5");
    assert_series(text, "sockmatrix_cell_flagged", l, "1");
    assert_non_null(strstr(text, "sockmatrix_cell_run_id{run_name=\"seed\",host=\"h1\",test=\"tcp/"
                                 "unix stream lines 128 B\",metric=\"ratio\"} 7\n"));
    /* the plain cell keeps its metric; the ratio without a value has no series */
    assert_non_null(strstr(text, "sockmatrix_cell_median{run_name=\"seed\",host=\"h1\",test=\""
                                 "stream tcp lines 128 B\",metric=\"seconds\",unit=\"s\"} 0.5\n"));
    /* five families of one ratio cell, and a verdict (a state set of four) for it and for the
     * ratio measured without a value: inconclusive, never ok */
    assert_int_equal(count(text, "metric=\"ratio\""), 5 + 4 + 4);
    assert_null(strstr(text, "sockmatrix_cell_median{run_name=\"seed\",host=\"h1\",test=\"pool"));
    assert_non_null(strstr(text, "sockmatrix_cell_verdict{run_name=\"seed\",host=\"h1\",test=\""
                                 "tcp/unix stream lines 128 B\",metric=\"ratio\",unit=\"x\","
                                 "verdict=\"ok\"} 1\n"));
    assert_non_null(strstr(text, "sockmatrix_cell_verdict{run_name=\"seed\",host=\"h1\",test=\""
                                 "pool/thread http 16 MiB\",metric=\"ratio\",unit=\"x\","
                                 "verdict=\"inconclusive\"} 1\n"));
    assert_non_null(strstr(text, "sockmatrix_cell_verdict{run_name=\"seed\",host=\"h1\",test=\""
                                 "pool/thread http 16 MiB\",metric=\"ratio\",unit=\"x\","
                                 "verdict=\"ok\"} 0\n"));
    free(text);
    /* the ratio cells share the cap: 1 plain cell + 1 ratio at most 1 */
    text = cells_text(t, 1, 1);
    assert_int_equal(count(text, "sockmatrix_cell_median{"), 1);
    assert_null(strstr(text, "metric=\"ratio\""));
    free(text);
}

/* A judged table: each cell's verdict as the table gives it, also where there is no median. */
static const char JUDGED_TABLE[] =
    "{\"version\":1,\"rows\":[\"h1\",\"h2\"],"
    "\"columns\":[{\"label\":\"stream tcp 128 KiB\",\"metric\":\"throughput_MBps\","
    "\"unit\":\"MB/s\"}],"
    "\"cells\":[{\"row\":0,\"column\":0,\"n\":0,\"median\":null,\"disturbed\":3,"
    "\"verdict\":\"inconclusive\",\"why\":\"3 of 3 samples disturbed\"},"
    "{\"row\":1,\"column\":0,\"n\":3,\"median\":4.4,\"ci95_low\":4.3,\"ci95_high\":4.5,"
    "\"verdict\":\"inconclusive\",\"why\":\"only 1 of 2 hosts\"}],"
    "\"flags\":[]}";

static void test_metrics_verdict_says_inconclusive_for_cells_not_judged(void **state)
{
    (void)state;
    const sm_metrics_table t[] = {{"quick", 3, JUDGED_TABLE}};
    char *text = cells_text(t, 1, 2000);
#define VERDICT_SERIES(h, v, x)                                                                    \
    "sockmatrix_cell_verdict{run_name=\"quick\",host=\"" h "\",test=\"stream tcp 128 KiB\","       \
    "metric=\"throughput_MBps\",unit=\"MB/s\",verdict=\"" v "\"} " x "\n"
    assert_non_null(strstr(text, VERDICT_SERIES("h1", "inconclusive", "1")));
    assert_non_null(strstr(text, VERDICT_SERIES("h1", "ok", "0")));
    assert_non_null(strstr(text, VERDICT_SERIES("h2", "inconclusive", "1")));
    assert_non_null(strstr(text, VERDICT_SERIES("h2", "ok", "0")));
    /* h2 has a median all the same; h1 has none */
    assert_int_equal(count(text, "sockmatrix_cell_median{"), 1);
    free(text);
}

static void test_metrics_cells_stop_at_the_cap_per_family(void **state)
{
    (void)state;
    const sm_metrics_table t[] = {{"a", 1, TABLE}, {"b", 2, TABLE}};
    char *text = cells_text(t, 2, 4);
    assert_int_equal(count(text, "sockmatrix_cell_median{"), 4);
    assert_int_equal(count(text, "sockmatrix_cell_flagged{"), 4);
    assert_int_equal(count(text, "sockmatrix_cell_median{run_name=\"b\""), 1);
    assert_int_equal(count(text, "# TYPE sockmatrix_cell_median gauge\n"), 1);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_metrics_give_counters_rejects_and_agents_in_the_text_format, setup_ws, teardown),
        cmocka_unit_test_setup_teardown(test_metrics_answer_only_get, setup_ws, teardown),
        cmocka_unit_test(test_metrics_cells_give_median_ci_flag_and_run_id_with_stable_labels),
        cmocka_unit_test(test_metrics_cells_stop_at_the_cap_per_family),
        cmocka_unit_test(test_metrics_ratio_columns_give_median_and_ci_labelled_metric_ratio),
        cmocka_unit_test(test_metrics_verdict_says_inconclusive_for_cells_not_judged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
