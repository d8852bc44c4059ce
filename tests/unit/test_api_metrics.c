/* Unit tests of GET /metrics (api_metrics.c) over a real SQLite store and a real control: the
 * media type, one HELP and TYPE per family, the rejects and agents as counted, and the method
 * refused. The cells, read from a real run's table, are tests/integration/test_metrics.py's. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_metrics_give_counters_rejects_and_agents_in_the_text_format, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metrics_answer_only_get, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
