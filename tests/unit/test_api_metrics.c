/* Unit tests of GET /metrics (api_metrics.c) over a real SQLite store and a real control: the
 * media type, one HELP and TYPE per family, the rejects and agents as counted, and the method
 * refused; the cell families from run tables (flags, escaping, cells without a value, the cap).
 * Cells read from a real run's table are tests/integration/test_metrics.py's. */
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

#include "coordinator/api.h"
#include "coordinator/api_int.h"
#include "coordinator/promtext.h"
#include "coordinator/control.h"
#include "coordinator/store.h"

typedef struct fixture {
    char dir[64];
    char db[96];
    sm_store *st;
    sm_rejects *rejects;
    sm_api_ctx api;
    uint64_t ws[3];
} fixture;

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/sm-apimetrics-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->db, sizeof f->db, "%s/c.db", f->dir);
    sm_error err = {0};
    assert_int_equal(sm_store_open(&f->st, f->db, &err), 0);
    sm_control *c;
    sm_control_cfg cfg = {.hold_ms = 1000, .job_grace_ms = 1000};
    assert_int_equal(sm_control_open(&c, f->st, &cfg, wall_ms(), &err), 0);
    f->rejects = sm_rejects_new();
    assert_non_null(f->rejects);
    f->ws[0] = 3;
    f->api = (sm_api_ctx){.st = f->st, .ctl = c, .rejects = f->rejects, .ws_counters = f->ws};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sm_api_cache_free(&f->api);
    sm_control_close(f->api.ctl);
    sm_store_close(f->st);
    sm_rejects_free(f->rejects);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static void register_agent(fixture *f, const char *name)
{
    sm_poll p;
    memset(&p, 0, sizeof p);
    snprintf(p.agent, sizeof p.agent, "%s", name);
    snprintf(p.boot, sizeof p.boot, "0123456789abcdef0123456789abcdef");
    sm_poll_reply r;
    bool now;
    sm_error err = {0};
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    if (sm_control_poll(f->api.ctl, &p, wall_ms(), &r, &now, &err) != 0)
        fail_msg("poll: %s", err.msg);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
}

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
    assert_int_equal(count(text, "# HELP "), 18);
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
    char want[512];
    snprintf(want, sizeof want, "sockmatrix_cell_median%s 231.5\n", l1);
    assert_non_null(strstr(text, want));
    snprintf(want, sizeof want, "sockmatrix_cell_ci95_high%s 241.25\n", l1);
    assert_non_null(strstr(text, want));
    snprintf(want, sizeof want, "sockmatrix_cell_median%s 0.04505\n", l2);
    assert_non_null(strstr(text, want));
    snprintf(want, sizeof want, "sockmatrix_cell_ci95_low%s 0.01952\n", l2);
    assert_non_null(strstr(text, want));
    snprintf(want, sizeof want, "sockmatrix_cell_flagged%s 0\n", l1);
    assert_non_null(strstr(text, want));
    snprintf(want, sizeof want, "sockmatrix_cell_flagged%s 1\n", l2);
    assert_non_null(strstr(text, want));
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
            test_metrics_give_counters_rejects_and_agents_in_the_text_format, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metrics_answer_only_get, setup, teardown),
        cmocka_unit_test(test_metrics_cells_give_median_ci_flag_and_run_id_with_stable_labels),
        cmocka_unit_test(test_metrics_cells_stop_at_the_cap_per_family),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
