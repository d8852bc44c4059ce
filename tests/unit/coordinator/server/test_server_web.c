/* Unit tests of the /ws hub (coordinator/server/web.c) against a real store and control: the change
 * events of polls, a run and its jobs become the messages a browser hears, each object once per
 * change, in the order a page needs them; and the reports of ended runs the API keeps
 * (coordinator/reports/cache.c) are dropped when a result of the run is stored. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coordinator/api/api.h"
#include "coordinator/control/control.h"
#include "coordinator/store/store.h"
#include "coordinator/server/web.h"
#include "proto/codec.h"
#include "coordinator/model/spec.h"

#define MAX_MSGS 256

typedef struct fixture {
    char dir[64];
    char db[96];
    sm_store *st;
    sm_api_ctx api;
    sm_ws_hub *hub;
    uint64_t counters[3];
    int64_t now;
    char *msgs[MAX_MSGS]; /* heard since the last clear */
    size_t n;
} fixture;

static void hear(void *arg, const char *text)
{
    fixture *f = arg;
    assert_true(f->n < MAX_MSGS);
    f->msgs[f->n] = strdup(text);
    assert_non_null(f->msgs[f->n]);
    f->n++;
}

static void forget(fixture *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->msgs[i]);
    f->n = 0;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/sm-hub-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->db, sizeof f->db, "%s/c.db", f->dir);
    sm_error err = {0};
    assert_int_equal(sm_store_open(&f->st, f->db, &err), 0);
    sm_control_cfg cfg = {.hold_ms = 1000, .job_grace_ms = 1000};
    f->now = 1700000000000;
    sm_control *c = NULL;
    assert_int_equal(sm_control_open(&c, f->st, &cfg, f->now, &err), 0);
    f->api = (sm_api_ctx){.st = f->st, .ctl = c, .reports = {.st = f->st}};
    f->hub = sm_ws_hub_new(&f->api, f->st, f->counters);
    assert_non_null(f->hub);
    sm_ws_hub_tap(f->hub, hear, f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    forget(f);
    sm_ws_hub_free(f->hub);
    sm_api_cache_free(&f->api);
    sm_control_close(f->api.ctl);
    sm_store_close(f->st);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static void base_poll(sm_poll *p, const char *agent, const char *boot)
{
    memset(p, 0, sizeof *p);
    snprintf(p->agent, sizeof p->agent, "%s", agent);
    snprintf(p->boot, sizeof p->boot, "%s", boot);
    p->have_facts = true;
    snprintf(p->facts.hostname, sizeof p->facts.hostname, "%s", agent);
}

static void poll_once(fixture *f, const sm_poll *p, sm_poll_reply *r)
{
    sm_error err = {0};
    bool now;
    f->now += 10;
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    if (sm_control_poll(f->api.ctl, p, f->now, r, &now, &err) != 0)
        fail_msg("poll: %s", err.msg);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
}

/* The agent takes its next job and sends its result; returns the job's id. */
static uint64_t take_and_finish(fixture *f, sm_poll *p)
{
    sm_poll_reply r;
    poll_once(f, p, &r);
    if (r.n_commands != 1 || r.commands[0].kind != SM_CMD_ASSIGN)
        fail_msg("%s got %zu commands", p->agent, r.n_commands);
    sm_result_msg m = {.job = r.commands[0].job, .attempt = r.commands[0].attempt};
    sm_result_init(&m.result);
    m.result.ok = true;
    sm_result_set(&m.result, SM_M_THROUGHPUT, 100.0);
    p->results = &m;
    p->n_results = 1;
    poll_once(f, p, &r);
    p->results = NULL;
    p->n_results = 0;
    return m.job;
}

static uint64_t start_run(fixture *f)
{
    const char *json = "{\"name\":\"r\",\"hosts\":\"all\",\"repetitions\":1,\"warmup\":0,"
                       "\"parallel\":true,\"tests\":[{\"workload\":\"stream\",\"scope\":"
                       "\"local\",\"transport\":[\"tcp\",\"unix\"],\"count\":10}]}";
    sm_spec spec;
    sm_error err = {0};
    if (sm_spec_decode(json, strlen(json), &spec, &err) != 0)
        fail_msg("spec: %s", err.msg);
    uint64_t id = 0;
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    if (sm_control_run_start(f->api.ctl, json, &spec, f->now, &id, &err))
        fail_msg("run: %s", err.msg);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    sm_spec_fini(&spec);
    return id;
}

/* How many heard messages contain every one of the NULL-terminated strings. */
static size_t count(const fixture *f, ...)
{
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++) {
        va_list ap;
        va_start(ap, f);
        bool all = true;
        for (const char *s; (s = va_arg(ap, const char *)) != NULL;)
            all = all && strstr(f->msgs[i], s) != NULL;
        va_end(ap);
        n += all;
    }
    return n;
}

/* The index of the first (last, when last) message that starts with prefix, or -1. */
static long find(const fixture *f, const char *prefix, bool last)
{
    long at = -1;
    for (size_t i = 0; i < f->n; i++)
        if (strncmp(f->msgs[i], prefix, strlen(prefix)) == 0) {
            at = (long)i;
            if (!last)
                break;
        }
    return at;
}

static void test_hub_tells_each_agent_once_per_change(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    sm_poll_reply r;
    base_poll(&p1, "h1", "11111111111111111111111111111111");
    base_poll(&p2, "h2", "22222222222222222222222222222222");
    poll_once(f, &p1, &r);
    poll_once(f, &p2, &r);
    p1.have_facts = false;
    poll_once(f, &p1, &r); /* twice in one tick: told once, as its last poll left it */
    sm_ws_tick(f->hub);
    assert_int_equal(f->n, 2);
    assert_int_equal(count(f, "{\"type\":\"agent\",\"agent\":{\"name\":\"h1\"", NULL), 1);
    assert_int_equal(count(f, "{\"type\":\"agent\",\"agent\":{\"name\":\"h2\"", NULL), 1);
    char seen[64];
    snprintf(seen, sizeof seen, "\"last_seen_ms\":%lld", (long long)f->now);
    assert_int_equal(count(f, "\"name\":\"h1\"", seen, NULL), 1);
    forget(f);
    sm_ws_tick(f->hub);
    assert_int_equal(f->n, 0); /* nothing changed, nothing told */
    poll_once(f, &p2, &r);
    sm_ws_tick(f->hub);
    assert_int_equal(f->n, 1);
    assert_int_equal(count(f, "\"name\":\"h2\"", "\"status\":\"online\"", NULL), 1);
}

static void test_hub_tells_a_run_its_jobs_then_itself_then_its_end(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    sm_poll_reply r;
    base_poll(&p1, "h1", "11111111111111111111111111111111");
    base_poll(&p2, "h2", "22222222222222222222222222222222");
    poll_once(f, &p1, &r);
    poll_once(f, &p2, &r);
    p1.have_facts = p2.have_facts = false;
    sm_ws_tick(f->hub);
    forget(f);

    const uint64_t id = start_run(f);
    char run_key[32];
    snprintf(run_key, sizeof run_key, "\"run\":\"%llu\"", (unsigned long long)id);
    sm_ws_tick(f->hub);
    /* Its four jobs as queued, then the run. */
    assert_int_equal(f->n, 5);
    assert_int_equal(count(f, "{\"type\":\"job\"", run_key, "\"state\":\"queued\"", NULL), 4);
    assert_int_equal(find(f, "{\"type\":\"run\"", false), 4);
    assert_int_equal(count(f, "{\"type\":\"run\"", "\"state\":\"running\"", NULL), 1);
    forget(f);
    sm_ws_tick(f->hub);
    assert_int_equal(f->n, 0);

    /* h1 ends both of its jobs: their news and the run's progress, no anomaly yet. */
    uint64_t j1 = take_and_finish(f, &p1), j2 = take_and_finish(f, &p1);
    sm_ws_tick(f->hub);
    char k1[32], k2[32];
    snprintf(k1, sizeof k1, "\"id\":\"%llu\"", (unsigned long long)j1);
    snprintf(k2, sizeof k2, "\"id\":\"%llu\"", (unsigned long long)j2);
    assert_int_equal(count(f, "{\"type\":\"job\"", k1, NULL), 1);
    assert_int_equal(count(f, "{\"type\":\"job\"", k2, "\"state\":\"done\"", NULL), 1);
    assert_int_equal(count(f, "{\"type\":\"job\"", NULL), 2); /* h2's were not touched */
    assert_int_equal(count(f, "\"summary\":{\"metric\":\"throughput_MBps\",\"value\":100", NULL),
                     2);
    assert_int_equal(count(f, "{\"type\":\"run\"", "\"progress\":{\"done\":2,\"failed\":0", NULL),
                     1);
    assert_int_equal(count(f, "{\"type\":\"agent\"", "\"name\":\"h1\"", NULL), 1);
    assert_int_equal(count(f, "{\"type\":\"anomaly\"", NULL), 0);
    assert_true(find(f, "{\"type\":\"job\"", true) < find(f, "{\"type\":\"run\"", false));
    forget(f);

    /* h2 ends the run: its jobs, the run done, then the anomalies (h1 and h2 alike: none). */
    take_and_finish(f, &p2);
    take_and_finish(f, &p2);
    sm_ws_tick(f->hub);
    assert_int_equal(count(f, "{\"type\":\"job\"", "\"state\":\"done\"", "\"host\":\"h2\"", NULL),
                     2);
    assert_int_equal(count(f, "{\"type\":\"job\"", NULL), 2);
    assert_int_equal(count(f, "{\"type\":\"run\"", "\"state\":\"done\"", NULL), 1);
    assert_true(find(f, "{\"type\":\"job\"", true) < find(f, "{\"type\":\"run\"", false));
    forget(f);
    sm_ws_tick(f->hub);
    assert_int_equal(f->n, 0); /* told once */
}

/* An anomalies builder off the loop: "not yet" at the first ask of a run, then one anomaly. */
static int later_anomalies(void *ctx, uint64_t run, uint64_t baseline, int *status, char **json)
{
    int *asks = ctx;
    assert_int_equal(baseline, 0);
    if ((*asks)++ == 0)
        return 0;
    char body[128];
    snprintf(body, sizeof body, "{\"run\":\"%llu\",\"anomalies\":[{\"host\":\"h1\"}]}",
             (unsigned long long)run);
    *status = 200;
    *json = strdup(body);
    return 1;
}

static void test_hub_tells_anomalies_built_off_the_loop_at_a_later_tick_once(void **state)
{
    fixture *f = *state;
    int asks = 0;
    sm_ws_hub_set_anomalies(f->hub, later_anomalies, &asks);
    sm_poll p1;
    sm_poll_reply r;
    base_poll(&p1, "h1", "11111111111111111111111111111111");
    poll_once(f, &p1, &r);
    p1.have_facts = false;
    const uint64_t id = start_run(f);
    sm_ws_tick(f->hub);
    take_and_finish(f, &p1);
    take_and_finish(f, &p1);
    forget(f);
    sm_ws_tick(f->hub); /* the run ended: its anomalies asked for, not there yet */
    assert_int_equal(count(f, "{\"type\":\"run\"", "\"state\":\"done\"", NULL), 1);
    assert_int_equal(count(f, "{\"type\":\"anomaly\"", NULL), 0);
    assert_int_equal(asks, 1);
    forget(f);
    sm_ws_tick(f->hub); /* they came */
    char run_key[32];
    snprintf(run_key, sizeof run_key, "\"run\":\"%llu\"", (unsigned long long)id);
    assert_int_equal(f->n, 1);
    assert_int_equal(count(f, "{\"type\":\"anomaly\"", run_key, "\"host\":\"h1\"", NULL), 1);
    forget(f);
    sm_ws_tick(f->hub);
    assert_int_equal(f->n, 0); /* told once */
    assert_int_equal(asks, 2);
}

static void test_hub_tells_a_run_over_between_two_ticks_whole(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    sm_poll_reply r;
    base_poll(&p1, "h1", "11111111111111111111111111111111");
    base_poll(&p2, "h2", "22222222222222222222222222222222");
    poll_once(f, &p1, &r);
    poll_once(f, &p2, &r);
    p1.have_facts = p2.have_facts = false;
    sm_ws_tick(f->hub);
    forget(f);
    start_run(f);
    for (int i = 0; i < 2; i++) {
        take_and_finish(f, &p1);
        take_and_finish(f, &p2);
    }
    sm_ws_tick(f->hub);
    /* Every job once, as it ended, then the run once, ended. */
    assert_int_equal(count(f, "{\"type\":\"job\"", NULL), 4);
    assert_int_equal(count(f, "{\"type\":\"job\"", "\"state\":\"done\"", NULL), 4);
    assert_int_equal(count(f, "{\"type\":\"run\"", NULL), 1);
    assert_int_equal(count(f, "{\"type\":\"run\"", "\"state\":\"done\"", NULL), 1);
    assert_true(find(f, "{\"type\":\"job\"", true) < find(f, "{\"type\":\"run\"", false));
    forget(f);
    sm_ws_tick(f->hub);
    assert_int_equal(f->n, 0);
}

static void test_hub_tells_a_job_that_moved_without_its_run(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    sm_poll_reply r;
    base_poll(&p1, "h1", "11111111111111111111111111111111");
    base_poll(&p2, "h2", "22222222222222222222222222222222");
    poll_once(f, &p1, &r);
    poll_once(f, &p2, &r);
    p1.have_facts = p2.have_facts = false;
    start_run(f);
    sm_ws_tick(f->hub);
    forget(f);
    poll_once(f, &p1, &r); /* h1 is assigned its first job: the run's counts stay */
    assert_int_equal(r.n_commands, 1);
    sm_ws_tick(f->hub);
    assert_int_equal(count(f, "{\"type\":\"job\"", NULL), 1);
    assert_int_equal(count(f, "{\"type\":\"job\"", "\"state\":\"assigned\"", NULL), 1);
    assert_int_equal(count(f, "{\"type\":\"run\"", NULL), 0);
    assert_int_equal(count(f, "{\"type\":\"agent\"", NULL), 1);
}

static void test_hub_without_browsers_tells_nothing_later(void **state)
{
    fixture *f = *state;
    sm_poll p1;
    sm_poll_reply r;
    sm_ws_hub_tap(f->hub, NULL, NULL);
    base_poll(&p1, "h1", "11111111111111111111111111111111");
    poll_once(f, &p1, &r);
    sm_ws_tick(f->hub); /* nobody listens: the change is not kept for later */
    sm_ws_hub_tap(f->hub, hear, f);
    sm_ws_tick(f->hub);
    assert_int_equal(f->n, 0);
}

static char *get(fixture *f, const char *method, const char *path, const char *query, int want)
{
    char *resp = NULL;
    size_t len = 0;
    const char *ctype = NULL;
    int status = sm_api_handle(&f->api, method, path, query, NULL, "", 0, &resp, &len, &ctype);
    if (status != want)
        fail_msg("%s %s: %d %s", method, path, status, resp ? resp : "");
    return resp;
}

/* h2's jobs of run id (their ids in run order, and the attempt their results are stored as). */
static size_t h2_jobs(fixture *f, uint64_t id, uint64_t *ids, uint32_t *attempts)
{
    sm_job_row *rows = NULL;
    size_t n = 0, k = 0;
    sm_error err = {0};
    assert_int_equal(sm_store_run_jobs(f->st, id, &rows, &n, &err), 0);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].host, "h2") == 0 && k < 2) {
            ids[k] = rows[i].id;
            attempts[k++] = rows[i].attempt;
        }
    sm_store_jobs_free(rows, n);
    return k;
}

static void test_reports_of_an_ended_run_are_kept_until_a_result_of_it_is_stored(void **state)
{
    fixture *f = *state;
    sm_poll p1, p2;
    sm_poll_reply r;
    base_poll(&p1, "h1", "11111111111111111111111111111111");
    base_poll(&p2, "h2", "22222222222222222222222222222222");
    poll_once(f, &p1, &r);
    poll_once(f, &p2, &r);
    p1.have_facts = p2.have_facts = false;
    const uint64_t id = start_run(f);
    char path[64], cancel[64], *none;
    snprintf(path, sizeof path, "/api/runs/%llu/table", (unsigned long long)id);
    snprintf(cancel, sizeof cancel, "/api/runs/%llu/cancel", (unsigned long long)id);
    take_and_finish(f, &p1);
    take_and_finish(f, &p1);
    /* A running run's table is not kept: each GET sees the results so far. */
    char *running = get(f, "GET", path, "format=csv", 200);
    free(get(f, "POST", cancel, NULL, 200));
    char *t1 = get(f, "GET", path, "format=csv", 200);
    assert_string_equal(t1, running);
    free(running);

    /* Stored behind the control core's back (no change told): the kept table is served. */
    uint64_t jobs[2];
    uint32_t attempts[2];
    assert_int_equal(h2_jobs(f, id, jobs, attempts), 2);
    sm_result res;
    sm_result_init(&res);
    res.ok = true;
    sm_result_set(&res, SM_M_THROUGHPUT, 100.0);
    sm_error err = {0};
    char *json = sm_codec_result_encode(&res, &err);
    assert_non_null(json);
    const sm_result_cols cols = {NAN, NAN, 100.0, NAN, NAN, true};
    bool inserted = false;
    assert_int_equal(sm_store_result_insert(f->st, jobs[0], attempts[0], "h2", json, &cols, f->now,
                                            &inserted, &err),
                     0);
    assert_true(inserted);
    char *t2 = get(f, "GET", path, "format=csv", 200);
    assert_string_equal(t2, t1);
    /* Another format is another report. */
    none = get(f, "GET", path, "format=md", 200);
    assert_string_not_equal(none, t1);
    free(none);
    /* Told that the run changed, the table is computed again, with h2's result. */
    sm_api_run_changed(&f->api, id);
    char *t3 = get(f, "GET", path, "format=csv", 200);
    assert_string_not_equal(t3, t1);

    /* A result that comes late through a poll tells the hub, which drops the run's reports. */
    sm_result_msg m = {.job = jobs[1], .attempt = attempts[1]};
    m.result = res;
    p2.results = &m;
    p2.n_results = 1;
    poll_once(f, &p2, &r);
    p2.results = NULL;
    p2.n_results = 0;
    char *t4 = get(f, "GET", path, "format=csv", 200);
    assert_string_not_equal(t4, t3);
    free(json);
    free(t1);
    free(t2);
    free(t3);
    free(t4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hub_tells_each_agent_once_per_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hub_tells_a_run_its_jobs_then_itself_then_its_end,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_hub_tells_anomalies_built_off_the_loop_at_a_later_tick_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hub_tells_a_run_over_between_two_ticks_whole, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_hub_tells_a_job_that_moved_without_its_run, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_hub_without_browsers_tells_nothing_later, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_reports_of_an_ended_run_are_kept_until_a_result_of_it_is_stored, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
