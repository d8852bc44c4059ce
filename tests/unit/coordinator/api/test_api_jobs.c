/* Unit tests of a run's jobs (GET /api/runs/{id}/jobs) and the full job resource
 * (GET /api/jobs/{id}) over a real SQLite store and a real control: paging by cursor, the
 * filters, bad parameters, an unknown run, and the fields of a local and a pair job. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/coordinator/api/api_fixture.h"
#include "coordinator/api/api.h"
#include "coordinator/control/control.h"
#include "coordinator/store/store.h"
#include "proto/hist.h"
#include "proto/msg.h"
#include "proto/result.h"

/* GET path?query; checks the status and returns the parsed body (the caller deletes it). */
static cJSON *get(fixture *f, const char *path, const char *query, int status)
{
    char *body = NULL;
    size_t len = 0;
    const char *ctype = NULL;
    int got = sm_api_handle(&f->api, "GET", path, query, NULL, "", 0, &body, &len, &ctype);
    assert_non_null(body);
    if (got != status)
        fail_msg("GET %s?%s: %d, want %d: %s", path, query ? query : "", got, status, body);
    cJSON *o = cJSON_Parse(body);
    if (!o)
        fail_msg("GET %s: not JSON: %s", path, body);
    free(body);
    return o;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsString(v))
        fail_msg("%s: not a string", k);
    return v->valuestring;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v))
        fail_msg("%s: not a number", k);
    return v->valuedouble;
}

/* Registers agent name, then takes its jobs and ends each (ok with throughput mbps, or failed
 * with reason when fail is set) until none is left. */
static void poll_as(fixture *f, const char *name, sm_result_msg *res, size_t n, sm_poll_reply *r)
{
    sm_poll p;
    memset(&p, 0, sizeof p);
    snprintf(p.agent, sizeof p.agent, "%s", name);
    snprintf(p.boot, sizeof p.boot, "0123456789abcdef0123456789abcdef");
    p.have_facts = true;
    snprintf(p.facts.hostname, sizeof p.facts.hostname, "%s", name);
    p.results = res;
    p.n_results = n;
    bool now;
    sm_error err = {0};
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    if (sm_control_poll(f->api.ctl, &p, wall_ms(), r, &now, &err) != 0)
        fail_msg("poll: %s", err.msg);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
}

/* Runs name's jobs to their end: each ok with throughput mbps, or failed when fail; with
 * by_id, each ok with throughput 100 + its id, a value per job that says which it is. */
static void run_jobs_as(fixture *f, const char *name, double mbps, bool fail, bool by_id)
{
    sm_result_msg done[16];
    size_t n = 0;
    for (int round = 0; round < 64; round++) {
        sm_poll_reply r;
        poll_as(f, name, done, n, &r);
        for (size_t i = 0; i < n; i++)
            sm_result_fini(&done[i].result);
        n = 0;
        if (r.n_commands == 0)
            return;
        for (size_t i = 0; i < r.n_commands && n < 16; i++) {
            if (r.commands[i].kind != SM_CMD_ASSIGN)
                continue;
            sm_result_msg *m = &done[n++];
            memset(m, 0, sizeof *m);
            m->job = r.commands[i].job;
            m->attempt = r.commands[i].attempt;
            sm_result_init(&m->result);
            m->result.ok = !fail;
            if (fail)
                snprintf(m->result.reason, sizeof m->result.reason, "connect: refused");
            sm_result_set(&m->result, SM_M_THROUGHPUT, by_id ? 100.0 + (double)m->job : mbps);
        }
    }
    fail_msg("%s: jobs without end", name);
}

/* 3 hosts x (tcp, unix) x (1 warm-up + 3 repetitions): 24 jobs; h2's all fail. */
#define RUN_SPEC                                                                                   \
    "{\"name\":\"jobs\",\"hosts\":\"all\",\"repetitions\":3,\"warmup\":1,\"parallel\":true,"       \
    "\"tests\":[{\"workload\":\"stream\",\"scope\":\"local\",\"transport\":[\"tcp\",\"unix\"],"    \
    "\"count\":10}]}"

/* Posts RUN_SPEC and runs its jobs: h2's fail, the others' give 100 MB/s (30 for h2's); with
 * by_id every job ends ok with throughput 100 + its id. */
static void start_run(fixture *f, bool by_id)
{
    static const char *const hosts[] = {"h1", "h2", "h3"};
    sm_poll_reply r;
    for (size_t h = 0; h < 3; h++)
        poll_as(f, hosts[h], NULL, 0, &r);
    char *body = NULL;
    size_t len = 0;
    const char *ctype = NULL;
    int status = sm_api_handle(&f->api, "POST", "/api/runs", NULL, NULL, RUN_SPEC, strlen(RUN_SPEC),
                               &body, &len, &ctype);
    if (status != 201)
        fail_msg("POST /api/runs: %d %s", status, body);
    free(body);
    for (size_t h = 0; h < 3; h++)
        run_jobs_as(f, hosts[h], h == 1 ? 30.0 : 100.0, h == 1 && !by_id, by_id);
}

static void test_api_run_jobs_pages_by_cursor_cover_every_job_once_in_run_order(void **state)
{
    fixture *f = *state;
    start_run(f, false);
    cJSON *all = get(f, "/api/runs/1/jobs", "limit=1000", 200);
    assert_int_equal((int)num(all, "total"), 24);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(all, "next")));
    const cJSON *alljobs = cJSON_GetObjectItem(all, "jobs");
    assert_int_equal(cJSON_GetArraySize(alljobs), 24);

    /* Pages of 5 following next: 5+5+5+5+4, the same jobs in the same order. */
    char query[64] = "limit=5";
    int seen = 0, pages = 0;
    for (;;) {
        cJSON *page = get(f, "/api/runs/1/jobs", query, 200);
        assert_int_equal((int)num(page, "total"), 24);
        const cJSON *jobs = cJSON_GetObjectItem(page, "jobs");
        const cJSON *j;
        cJSON_ArrayForEach(j, jobs)
        {
            const cJSON *want = cJSON_GetArrayItem(alljobs, seen++);
            assert_non_null(want);
            assert_string_equal(str(j, "id"), str(want, "id"));
        }
        pages++;
        const cJSON *next = cJSON_GetObjectItem(page, "next");
        if (cJSON_IsNull(next)) {
            assert_int_equal(cJSON_GetArraySize(jobs), 4);
            cJSON_Delete(page);
            break;
        }
        assert_int_equal(cJSON_GetArraySize(jobs), 5);
        /* the cursor is the last job of the page */
        assert_string_equal(next->valuestring, str(cJSON_GetArrayItem(jobs, 4), "id"));
        snprintf(query, sizeof query, "limit=5&after=%s", next->valuestring);
        cJSON_Delete(page);
    }
    assert_int_equal(seen, 24);
    assert_int_equal(pages, 5);
    /* No id twice. */
    for (int i = 0; i < 24; i++)
        for (int k = i + 1; k < 24; k++)
            assert_string_not_equal(str(cJSON_GetArrayItem(alljobs, i), "id"),
                                    str(cJSON_GetArrayItem(alljobs, k), "id"));
    /* The default page is 100: all 24 with no next. */
    cJSON *def = get(f, "/api/runs/1/jobs", NULL, 200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(def, "jobs")), 24);
    cJSON_Delete(def);
    cJSON_Delete(all);
}

static void test_api_run_jobs_filter_by_host_cell_and_state(void **state)
{
    fixture *f = *state;
    start_run(f, false);
    cJSON *o = get(f, "/api/runs/1/jobs", "host=h2", 200);
    assert_int_equal((int)num(o, "total"), 8);
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(o, "jobs"))
    {
        assert_string_equal(str(j, "host"), "h2");
        assert_string_equal(str(j, "state"), "failed");
        assert_string_equal(str(j, "reason"), "connect: refused");
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "headline")));
    }
    cJSON_Delete(o);

    o = get(f, "/api/runs/1/jobs", "state=failed", 200);
    assert_int_equal((int)num(o, "total"), 8);
    cJSON_Delete(o);
    o = get(f, "/api/runs/1/jobs", "state=done&host=h1", 200);
    assert_int_equal((int)num(o, "total"), 8);
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(o, "jobs")) assert_string_equal(str(j, "host"), "h1");
    cJSON_Delete(o);
    o = get(f, "/api/runs/1/jobs", "state=queued", 200);
    assert_int_equal((int)num(o, "total"), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "jobs")), 0);
    cJSON_Delete(o);

    o = get(f, "/api/runs/1/jobs", "cell=1", 200);
    assert_int_equal((int)num(o, "total"), 4);
    int warm = 0;
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(o, "jobs"))
    {
        assert_int_equal((int)num(j, "cell"), 1);
        warm += cJSON_IsTrue(cJSON_GetObjectItem(j, "warmup"));
    }
    assert_int_equal(warm, 1);
    cJSON_Delete(o);
    /* A filter and a page: the cursor moves within the filtered jobs. */
    o = get(f, "/api/runs/1/jobs", "host=h3&limit=3", 200);
    assert_int_equal((int)num(o, "total"), 8);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "jobs")), 3);
    char q[64];
    snprintf(q, sizeof q, "host=h3&limit=100&after=%s", str(o, "next"));
    cJSON *rest = get(f, "/api/runs/1/jobs", q, 200);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(rest, "jobs")), 5);
    cJSON_Delete(rest);
    cJSON_Delete(o);
}

static void expect_400(fixture *f, const char *query, const char *field)
{
    cJSON *o = get(f, "/api/runs/1/jobs", query, 400);
    assert_string_equal(str(o, "field"), field);
    assert_non_null(strstr(str(o, "error"), field));
    cJSON_Delete(o);
}

static void test_api_run_jobs_bad_parameters_are_400_naming_the_field(void **state)
{
    fixture *f = *state;
    start_run(f, false);
    expect_400(f, "limit=0", "limit");
    expect_400(f, "limit=1001", "limit");
    expect_400(f, "limit=ten", "limit");
    expect_400(f, "limit=", "limit");
    expect_400(f, "after=x", "after");
    expect_400(f, "after=-3", "after");
    expect_400(f, "after=99999", "after"); /* not a job of this run */
    expect_400(f, "host=no%20such", "host");
    expect_400(f, "host=", "host");
    expect_400(f, "cell=-1", "cell");
    expect_400(f, "cell=a", "cell");
    expect_400(f, "state=finished", "state");
    expect_400(f, "limit=5&state=DONE", "state");
    cJSON *o = get(f, "/api/runs/1/jobs", "limit=1000", 200);
    cJSON_Delete(o);
}

static void test_api_run_jobs_of_an_unknown_run_are_404(void **state)
{
    fixture *f = *state;
    cJSON *o = get(f, "/api/runs/7/jobs", NULL, 404);
    assert_string_equal(str(o, "error"), "no such run");
    cJSON_Delete(o);
    o = get(f, "/api/runs/x/jobs", NULL, 400);
    cJSON_Delete(o);
    o = get(f, "/api/jobs/99", NULL, 404);
    cJSON_Delete(o);
    o = get(f, "/api/jobs/1x", NULL, 400);
    cJSON_Delete(o);
}

static void test_api_job_resource_of_a_local_run_job(void **state)
{
    fixture *f = *state;
    start_run(f, false);
    cJSON *page = get(f, "/api/runs/1/jobs", "host=h1&cell=0", 200);
    const cJSON *listed = NULL, *j;
    cJSON_ArrayForEach(
        j, cJSON_GetObjectItem(page, "jobs")) if (!cJSON_IsTrue(cJSON_GetObjectItem(j, "warmup")))
        listed = j;
    assert_non_null(listed);
    char path[64];
    snprintf(path, sizeof path, "/api/jobs/%s", str(listed, "id"));
    cJSON *o = get(f, path, NULL, 200);
    /* The same resource in the list and alone. */
    char *a = cJSON_PrintUnformatted(listed), *b = cJSON_PrintUnformatted(o);
    assert_string_equal(a, b);
    free(a);
    free(b);
    assert_string_equal(str(o, "run"), "1");
    assert_int_equal((int)num(o, "cell"), 0);
    assert_string_equal(str(o, "host"), "h1");
    assert_string_equal(str(o, "state"), "done");
    /* The test as the run's table names its column. */
    assert_string_equal(str(o, "test"), "stream tcp 128 KiB x 10");
    cJSON *table = get(f, "/api/runs/1/table", NULL, 200);
    const cJSON *col = cJSON_GetArrayItem(cJSON_GetObjectItem(table, "columns"), 0);
    assert_string_equal(str(col, "label"), str(o, "test"));
    cJSON_Delete(table);
    assert_true(num(o, "repetition") >= 0);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(o, "warmup")));
    assert_int_equal((int)num(o, "attempt"), 1);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "peer")));
    assert_null(cJSON_GetObjectItem(o, "sides"));
    /* Every figure of the result with its unit; no sides, no inner samples for stream. */
    const cJSON *smp = cJSON_GetObjectItem(o, "samples");
    const cJSON *ms = cJSON_GetObjectItem(smp, "metrics");
    assert_int_equal(cJSON_GetArraySize(ms), 1);
    assert_string_equal(str(cJSON_GetArrayItem(ms, 0), "metric"), "throughput_MBps");
    assert_true(num(cJSON_GetArrayItem(ms, 0), "value") == 100.0);
    assert_string_equal(str(cJSON_GetArrayItem(ms, 0), "unit"), "MB/s");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(smp, "sides")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(smp, "inner")));
    assert_true(num(o, "created_ms") > 0);
    /* The agent never said it started: the duration runs from the assignment. */
    assert_true(num(o, "started_ms") == 0);
    assert_true(num(o, "assigned_ms") > 0);
    assert_true(num(o, "duration_ms") == num(o, "finished_ms") - num(o, "assigned_ms"));
    const cJSON *h = cJSON_GetObjectItem(o, "headline");
    assert_string_equal(str(h, "metric"), "throughput_MBps");
    assert_true(fabs(num(h, "value") - 100.0) < 1e-9);
    assert_string_equal(str(h, "unit"), "MB/s");
    assert_true(cJSON_IsObject(cJSON_GetObjectItem(o, "result")));
    assert_true(cJSON_IsObject(cJSON_GetObjectItem(o, "params")));
    cJSON_Delete(o);
    cJSON_Delete(page);
}

/* A pair job written straight into the store: its two sides and the merged result. */
static void test_api_job_resource_of_a_pair_job_shows_its_peer_and_sides(void **state)
{
    fixture *f = *state;
    sm_error err = {0};
    uint64_t run, job;
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_store_run_insert(f->st, "pair", "{}", 1, wall_ms(), &run, &err), 0);
    sm_job_row j;
    memset(&j, 0, sizeof j);
    snprintf(j.host, sizeof j.host, "h1");
    snprintf(j.peer, sizeof j.peer, "h2");
    j.params_json = "{\"workload\":\"rr\",\"scope\":\"pair\",\"transport\":\"tcp\",\"count\":100,"
                    "\"req_size\":1,\"resp_size\":1}";
    j.run_id = run;
    j.cell = 0;
    j.rep = 2;
    assert_int_equal(sm_store_job_insert_run(f->st, &j, wall_ms(), &job, &err), 0);
    bool ins;
    sm_result_cols cols = {NAN, NAN, NAN, 41.5, NAN, true};
    /* The merged result holds the client's round-trip histogram: 3 round trips of 41.5 us. */
    char merged[256];
    snprintf(merged, sizeof merged,
             "{\"ok\":true,\"metrics\":{\"rtt_p50_us\":41.5,\"user_s\":0.25},\"hist\":{"
             "\"unit\":\"ns\",\"min\":41500,\"max\":41500,\"count\":3,\"buckets\":[[%zu,3]]}}",
             sm_hist_index(41500));
    assert_int_equal(sm_store_side_insert(f->st, job, 1, "server", "h2",
                                          "{\"ok\":true,\"metrics\":{\"user_s\":0.5}}", wall_ms(),
                                          &ins, &err),
                     0);
    assert_int_equal(sm_store_side_insert(f->st, job, 1, "client", "h1",
                                          "{\"ok\":true,\"metrics\":{\"rtt_p50_us\":41.5}}",
                                          wall_ms(), &ins, &err),
                     0);
    assert_int_equal(
        sm_store_result_insert(f->st, job, 1, "h1", merged, &cols, wall_ms(), &ins, &err), 0);
    assert_int_equal(sm_store_commit(f->st, &err), 0);

    char path[64];
    snprintf(path, sizeof path, "/api/jobs/%llu", (unsigned long long)job);
    cJSON *o = get(f, path, NULL, 200);
    assert_string_equal(str(o, "peer"), "h2");
    assert_int_equal((int)num(o, "repetition"), 2);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "duration_ms"))); /* never started */
    const cJSON *sides = cJSON_GetObjectItem(o, "sides");
    const cJSON *srv = cJSON_GetObjectItem(sides, "server"),
                *cli = cJSON_GetObjectItem(sides, "client");
    assert_string_equal(str(srv, "role"), "server");
    assert_string_equal(str(srv, "host"), "h2");
    assert_string_equal(str(cli, "role"), "client");
    assert_string_equal(str(cli, "host"), "h1");
    assert_true(num(cJSON_GetObjectItem(cJSON_GetObjectItem(srv, "result"), "metrics"), "user_s") ==
                0.5);
    assert_true(num(cJSON_GetObjectItem(cJSON_GetObjectItem(cli, "result"), "metrics"),
                    "rtt_p50_us") == 41.5);
    const cJSON *h = cJSON_GetObjectItem(o, "headline");
    assert_string_equal(str(h, "metric"), "rtt_p50_us");
    assert_true(num(h, "value") == 41.5);
    assert_string_equal(str(h, "unit"), "us");
    assert_non_null(strstr(str(o, "test"), "rr tcp 1 B/1 B"));
    /* The samples: the merged figures, each side's as stored, the round trips inside. */
    const cJSON *smp = cJSON_GetObjectItem(o, "samples");
    const cJSON *ms = cJSON_GetObjectItem(smp, "metrics");
    assert_int_equal(cJSON_GetArraySize(ms), 2);
    assert_string_equal(str(cJSON_GetArrayItem(ms, 0), "metric"), "rtt_p50_us");
    assert_string_equal(str(cJSON_GetArrayItem(ms, 0), "unit"), "us");
    assert_string_equal(str(cJSON_GetArrayItem(ms, 1), "metric"), "user_s");
    assert_string_equal(str(cJSON_GetArrayItem(ms, 1), "unit"), "s");
    const cJSON *ss = cJSON_GetObjectItem(smp, "sides");
    const cJSON *sc = cJSON_GetObjectItem(ss, "client"), *sv = cJSON_GetObjectItem(ss, "server");
    assert_int_equal(cJSON_GetArraySize(sc), 1);
    assert_string_equal(str(cJSON_GetArrayItem(sc, 0), "metric"), "rtt_p50_us");
    assert_true(num(cJSON_GetArrayItem(sc, 0), "value") == 41.5);
    assert_string_equal(str(cJSON_GetArrayItem(sc, 0), "unit"), "us");
    assert_int_equal(cJSON_GetArraySize(sv), 1);
    assert_string_equal(str(cJSON_GetArrayItem(sv, 0), "metric"), "user_s");
    assert_true(num(cJSON_GetArrayItem(sv, 0), "value") == 0.5);
    assert_string_equal(str(cJSON_GetArrayItem(sv, 0), "unit"), "s");
    const cJSON *in = cJSON_GetObjectItem(smp, "inner");
    assert_string_equal(str(in, "what"), "round-trip latency");
    assert_string_equal(str(in, "unit"), "us");
    assert_true(num(in, "count") == 3);
    assert_true(num(in, "min") == 41.5);
    const cJSON *b0 = cJSON_GetArrayItem(cJSON_GetObjectItem(in, "buckets"), 0);
    assert_true(num(b0, "low") <= 41.5 && 41.5 <= num(b0, "high"));
    assert_true(num(b0, "count") == 3);
    cJSON_Delete(o);
    /* In the run's list too, found by either host. */
    char q[32];
    o = get(f, "/api/runs/1/jobs", "host=h2", 200);
    assert_int_equal((int)num(o, "total"), 1);
    cJSON_Delete(o);
    snprintf(q, sizeof q, "host=h1");
    o = get(f, "/api/runs/1/jobs", q, 200);
    assert_int_equal((int)num(o, "total"), 1);
    cJSON_Delete(o);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_api_run_cell_lists_each_repetition_in_order_with_the_tables_median(void **state)
{
    fixture *f = *state;
    start_run(f, true);

    /* The cell's jobs as the run's list gives them, in run order. */
    cJSON *page = get(f, "/api/runs/1/jobs", "cell=1", 200);
    const cJSON *jobs = cJSON_GetObjectItem(page, "jobs");
    cJSON *o = get(f, "/api/runs/1/cells/1", NULL, 200);
    assert_string_equal(str(o, "run"), "1");
    assert_int_equal((int)num(o, "cell"), 1);
    assert_string_equal(str(o, "metric"), "throughput_MBps");
    assert_string_equal(str(o, "unit"), "MB/s");
    const char *host = str(o, "host");
    const cJSON *values = cJSON_GetObjectItem(o, "values");
    assert_int_equal(cJSON_GetArraySize(values), 4); /* 1 warm-up + 3 repetitions */
    assert_int_equal(cJSON_GetArraySize(values), cJSON_GetArraySize(jobs));
    double counted[4];
    int nc = 0, warm = 0;
    for (int i = 0; i < 4; i++) {
        const cJSON *v = cJSON_GetArrayItem(values, i), *j = cJSON_GetArrayItem(jobs, i);
        assert_string_equal(str(v, "job"), str(j, "id"));
        assert_string_equal(str(j, "host"), host);
        const double want = 100.0 + strtod(str(v, "job"), NULL);
        assert_true(num(v, "value") == want);
        const bool w = cJSON_IsTrue(cJSON_GetObjectItem(v, "warmup"));
        assert_int_equal(w, cJSON_IsTrue(cJSON_GetObjectItem(j, "warmup")));
        assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(v, "counted")), !w);
        assert_true(cJSON_IsFalse(cJSON_GetObjectItem(v, "disturbed")));
        assert_true(num(v, "repetition") == num(j, "repetition"));
        warm += w;
        if (!w)
            counted[nc++] = num(v, "value");
    }
    assert_int_equal(warm, 1);
    assert_int_equal(nc, 3);
    qsort(counted, 3, sizeof *counted, cmp_double);
    assert_true(num(o, "median") == counted[1]);
    assert_int_equal((int)num(o, "n"), 3);
    assert_true(num(o, "ci95_low") <= counted[1] && counted[1] <= num(o, "ci95_high"));
    /* The same figures as the run's table at that row and column. */
    cJSON *t = get(f, "/api/runs/1/table", NULL, 200);
    int row = -1, col = -1, i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(t, "rows"))
    {
        if (strcmp(e->valuestring, host) == 0)
            row = i;
        i++;
    }
    i = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(t, "columns"))
    {
        if (strcmp(str(e, "label"), str(o, "test")) == 0)
            col = i;
        i++;
    }
    bool found = false;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(t, "cells"))
    {
        if ((int)num(e, "row") != row || (int)num(e, "column") != col)
            continue;
        found = true;
        assert_true(num(e, "median") == num(o, "median"));
        assert_true(num(e, "ci95_low") == num(o, "ci95_low"));
        assert_true(num(e, "ci95_high") == num(o, "ci95_high"));
    }
    assert_true(found);
    cJSON_Delete(t);
    cJSON_Delete(o);
    cJSON_Delete(page);

    o = get(f, "/api/runs/1/cells/99", NULL, 404);
    assert_string_equal(str(o, "field"), "cell");
    cJSON_Delete(o);
    o = get(f, "/api/runs/1/cells/x", NULL, 400);
    assert_string_equal(str(o, "field"), "cell");
    cJSON_Delete(o);
    o = get(f, "/api/runs/7/cells/0", NULL, 404);
    assert_string_equal(str(o, "field"), "id");
    cJSON_Delete(o);
}

#define BUSY "tx thread waited for a CPU 76% of the job"

static void test_api_run_cell_gives_each_disturbed_repetition_its_agents_reason(void **state)
{
    fixture *f = *state;
    static const char *const hosts[] = {"h1", "h2", "h3"};
    sm_poll_reply r;
    for (size_t h = 0; h < 3; h++)
        poll_as(f, hosts[h], NULL, 0, &r);
    char *body = NULL;
    size_t len = 0;
    const char *ctype = NULL;
    assert_int_equal(sm_api_handle(&f->api, "POST", "/api/runs", NULL, NULL, RUN_SPEC,
                                   strlen(RUN_SPEC), &body, &len, &ctype),
                     201);
    free(body);
    finish_jobs_disturbed(f, "h1", 100.0, BUSY);
    run_jobs_as(f, "h2", 100.0, false, false);
    run_jobs_as(f, "h3", 100.0, false, false);

    int seen[2] = {0, 0}; /* cells of h1 (disturbed), of the others */
    for (int cell = 0; cell < 6; cell++) {
        char path[48];
        snprintf(path, sizeof path, "/api/runs/1/cells/%d", cell);
        cJSON *o = get(f, path, NULL, 200);
        cJSON *inc = get(f, path, "disturbed=include", 200);
        const bool busy = strcmp(str(o, "host"), "h1") == 0;
        seen[busy ? 0 : 1]++;
        const cJSON *v, *vi = cJSON_GetObjectItem(inc, "values")->child;
        cJSON_ArrayForEach(v, cJSON_GetObjectItem(o, "values"))
        {
            const bool warm = cJSON_IsTrue(cJSON_GetObjectItem(v, "warmup"));
            assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(v, "disturbed")), busy);
            if (busy)
                assert_string_equal(str(v, "disturbed_reason"), BUSY);
            else
                assert_true(cJSON_IsNull(cJSON_GetObjectItem(v, "disturbed_reason")));
            /* Left out of the table by default, counted when asked for. */
            assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(v, "counted")), !busy && !warm);
            assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(vi, "counted")), !warm);
            vi = vi->next;
        }
        /* No median for a cell whose every sample was disturbed, unless they are let in. */
        assert_int_equal(cJSON_IsNull(cJSON_GetObjectItem(o, "median")), busy);
        assert_true(num(inc, "median") == 100.0);
        cJSON_Delete(inc);
        cJSON_Delete(o);
    }
    assert_int_equal(seen[0], 2);
    assert_int_equal(seen[1], 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_api_run_jobs_pages_by_cursor_cover_every_job_once_in_run_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_api_run_jobs_filter_by_host_cell_and_state, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_api_run_cell_gives_each_disturbed_repetition_its_agents_reason, setup, teardown),
        cmocka_unit_test_setup_teardown(test_api_run_jobs_bad_parameters_are_400_naming_the_field,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_api_run_jobs_of_an_unknown_run_are_404, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_api_job_resource_of_a_local_run_job, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_api_job_resource_of_a_pair_job_shows_its_peer_and_sides, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_api_run_cell_lists_each_repetition_in_order_with_the_tables_median, setup,
            teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
