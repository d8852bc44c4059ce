/* Unit tests of the report worker (coordinator/api/worker.c) over a real SQLite store: its
 * answers are the loop's, its queue is bounded (503 naming the bound), a forgotten ticket's
 * answer never comes out, /metrics is built by it unless its cells are fresh, and it stops with
 * requests left. The test holds the worker in its wake callback to fill the queue at will. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/coordinator/api/api_fixture.h"
#include "coordinator/api/worker.h"
#include "coordinator/analysis/promtext.h"
#include "coordinator/reports/cache.h"

#define SPEC                                                                                       \
    "{\"name\":\"t\",\"hosts\":\"all\",\"repetitions\":3,\"warmup\":0,\"parallel\":true,"          \
    "\"tests\":[{\"workload\":\"stream\",\"scope\":\"local\",\"transport\":\"tcp\",\"count\":10}]" \
    "}"

/* The wake callback's count, and a gate that holds the worker in it while closed. */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int wakes;
    bool closed;
} gate;

static gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false};

static void on_wake(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g.mu);
    g.wakes++;
    pthread_cond_broadcast(&g.cv);
    while (g.closed)
        pthread_cond_wait(&g.cv, &g.mu);
    pthread_mutex_unlock(&g.mu);
}

static void gate_set(bool closed)
{
    pthread_mutex_lock(&g.mu);
    g.closed = closed;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
}

/* Waits (at most 10 s) until the worker woke the loop n times in all. */
static void wait_wakes(int n)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&g.mu);
    int rc = 0;
    while (g.wakes < n && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&g.cv, &g.mu, &until);
    const int got = g.wakes;
    pthread_mutex_unlock(&g.mu);
    assert_int_equal(got, n);
}

/* One ended run (1) of three hosts; the worker over the fixture's store with queue_max. */
static sm_api_worker *start(fixture *f, size_t queue_max)
{
    static const char *const hosts[] = {"h1", "h2", "h3"};
    for (size_t h = 0; h < 3; h++)
        register_agent(f, hosts[h]);
    expect(f, "POST", "/api/runs", NULL, NULL, SPEC, 201, "\"run\":");
    for (size_t h = 0; h < 3; h++)
        finish_jobs(f, hosts[h], 100.0);
    assert_int_equal(sm_report_cache_new(&f->api.reports.cache, true), 0);
    g.wakes = 0;
    gate_set(false);
    const sm_api_worker_cfg cfg = {
        .db_path = f->db, .cache = f->api.reports.cache, .queue_max = queue_max, .wake = on_wake};
    sm_api_worker *w = NULL;
    sm_error err = {0};
    assert_int_equal(sm_api_worker_start(&w, &cfg, &err), 0);
    return w;
}

static uint64_t submit(sm_api_worker *w, const char *path, const char *query)
{
    uint64_t ticket = 0;
    char *resp = NULL;
    size_t len = 0;
    assert_int_equal(sm_api_worker_submit(w, path, query, &ticket, &resp, &len), 0);
    assert_null(resp);
    assert_true(ticket != 0);
    return ticket;
}

static void test_worker_answers_as_the_loop_does_and_wakes_it_once_an_answer(void **state)
{
    fixture *f = *state;
    sm_api_worker *w = start(f, 0);
    const uint64_t t1 = submit(w, "/api/runs/1/table", "format=csv");
    const uint64_t t2 = submit(w, "/api/runs/9/anomalies", NULL);
    wait_wakes(2);
    sm_api_answer a;
    assert_true(sm_api_worker_take(w, &a));
    assert_int_equal(a.ticket, t1);
    assert_int_equal(a.status, 200);
    response loop = call(f, "GET", "/api/runs/1/table", "format=csv", NULL, NULL);
    assert_string_equal(a.resp, loop.body);
    assert_string_equal(a.ctype, loop.ctype);
    assert_int_equal(a.len, strlen(a.resp));
    free(loop.body);
    sm_api_answer_fini(&a);
    assert_true(sm_api_worker_take(w, &a));
    assert_int_equal(a.ticket, t2);
    assert_int_equal(a.status, 404);
    assert_non_null(strstr(a.resp, "no such run"));
    sm_api_answer_fini(&a);
    assert_false(sm_api_worker_take(w, &a));
    /* A route that reads the control core is never queued. */
    uint64_t ticket = 0;
    char *resp = NULL;
    size_t len = 0;
    assert_int_equal(sm_api_worker_submit(w, "/api/agents", NULL, &ticket, &resp, &len), 500);
    assert_non_null(strstr(resp, "not built by the report worker"));
    free(resp);
    assert_int_equal(ticket, 0);
    assert_int_equal(sm_api_worker_pending(w), 0);
    sm_api_worker_stop(w);
    sm_api_worker_stop(NULL);
}

static void test_worker_queue_full_answers_503_naming_its_bound(void **state)
{
    fixture *f = *state;
    sm_api_worker *w = start(f, 2);
    gate_set(true);
    submit(w, "/api/runs/1/table", NULL);
    wait_wakes(1); /* built; the worker is held in its wake */
    submit(w, "/api/runs/1/table", "format=md");
    submit(w, "/api/runs/1/anomalies", NULL);
    assert_int_equal(sm_api_worker_pending(w), 2);
    uint64_t ticket = 0;
    char *resp = NULL;
    size_t len = 0;
    assert_int_equal(sm_api_worker_submit(w, "/api/grid", NULL, &ticket, &resp, &len), 503);
    assert_int_equal(ticket, 0);
    assert_non_null(strstr(resp, "the report worker has 2 requests waiting, its bound"));
    free(resp);
    gate_set(false);
    wait_wakes(3);
    sm_api_answer a;
    for (int i = 0; i < 3; i++) {
        assert_true(sm_api_worker_take(w, &a));
        assert_int_equal(a.status, 200);
        sm_api_answer_fini(&a);
    }
    /* Room again. */
    submit(w, "/api/grid", NULL);
    wait_wakes(4);
    assert_true(sm_api_worker_take(w, &a));
    assert_int_equal(a.status, 200);
    sm_api_answer_fini(&a);
    sm_api_worker_stop(w);
}

/* A closed connection's ticket: dropped while queued, freed while finished; the others come. */
static void test_worker_forgotten_tickets_never_come_out(void **state)
{
    fixture *f = *state;
    sm_api_worker *w = start(f, 0);
    gate_set(true);
    const uint64_t done = submit(w, "/api/runs/1/table", NULL);
    wait_wakes(1);
    const uint64_t queued = submit(w, "/api/runs/1/anomalies", NULL);
    const uint64_t kept = submit(w, "/api/compare", "a=1&b=1");
    sm_api_worker_forget(w, done);   /* finished, not taken */
    sm_api_worker_forget(w, queued); /* still queued */
    sm_api_worker_forget(w, 0);
    sm_api_worker_forget(w, 12345);
    sm_api_worker_forget(NULL, kept);
    assert_int_equal(sm_api_worker_pending(w), 1);
    gate_set(false);
    wait_wakes(2);
    sm_api_answer a;
    assert_true(sm_api_worker_take(w, &a));
    assert_int_equal(a.ticket, kept);
    assert_int_equal(a.status, 400); /* a == b */
    sm_api_answer_fini(&a);
    assert_false(sm_api_worker_take(w, &a));
    sm_api_worker_stop(w);
}

/* /metrics: built by the worker when its cells are stale, answered at once while they are
 * fresh, built again after a report changed. */
static void test_worker_metrics_answers_at_once_while_its_cells_are_fresh(void **state)
{
    fixture *f = *state;
    sm_api_worker *w = start(f, 0);
    /* The route's text in its two parts: the loop's (some gauges move with time: this copy is
     * what is handed over) and the cells. */
    char *loop_part = sm_api_metrics_loop_text(&f->api),
         *cells = sm_api_metrics_cells_text(&f->api);
    assert_non_null(strstr(cells, "sockmatrix_cell_median{"));
    char whole[1 << 16];
    snprintf(whole, sizeof whole, "%s%s", loop_part, cells);
    uint64_t ticket = 0;
    char *resp = NULL;
    size_t len = 0;
    assert_int_equal(sm_api_worker_metrics(w, strdup(loop_part), &ticket, &resp, &len), 0);
    assert_true(ticket != 0);
    wait_wakes(1);
    sm_api_answer a;
    assert_true(sm_api_worker_take(w, &a));
    assert_int_equal(a.ticket, ticket);
    assert_int_equal(a.status, 200);
    assert_string_equal(a.ctype, SM_PROM_CTYPE);
    assert_string_equal(a.resp, whole);
    sm_api_answer_fini(&a);
    /* Fresh: at once, no request queued, the same cells. */
    assert_int_equal(sm_api_worker_metrics(w, strdup(loop_part), &ticket, &resp, &len), 200);
    assert_string_equal(resp, whole);
    assert_int_equal(len, strlen(resp));
    free(resp);
    assert_int_equal(sm_api_worker_pending(w), 0);
    /* A report changed (and the change committed): built again. */
    sm_report_cache_run_changed(f->api.reports.cache, 1);
    sm_report_cache_settle(f->api.reports.cache);
    assert_int_equal(sm_api_worker_metrics(w, strdup(loop_part), &ticket, &resp, &len), 0);
    wait_wakes(2);
    assert_true(sm_api_worker_take(w, &a));
    assert_int_equal(a.status, 200);
    assert_string_equal(a.resp, whole);
    sm_api_answer_fini(&a);
    /* Out of memory in the loop's part: a 500, nothing queued. */
    assert_int_equal(sm_api_worker_metrics(w, NULL, &ticket, &resp, &len), 500);
    free(resp);
    free(loop_part);
    free(cells);
    sm_api_worker_stop(w);
}

static void *stop_thread(void *w)
{
    sm_api_worker_stop(w);
    return NULL;
}

/* Stopped with requests queued and answers untaken: all freed (LSan checks). */
static void test_worker_stops_with_requests_left(void **state)
{
    fixture *f = *state;
    sm_api_worker *w = start(f, 0);
    gate_set(true);
    submit(w, "/api/runs/1/table", NULL);
    wait_wakes(1);
    submit(w, "/api/runs/1/anomalies", NULL);
    submit(w, "/api/grid", NULL);
    /* The worker leaves its wake only when let go; it then sees the stop before the queue. */
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, stop_thread, w), 0);
    nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    gate_set(false);
    assert_int_equal(pthread_join(t, NULL), 0);
}

/* The nice value of thread tid of this process, from /proc; INT32_MIN when unreadable. */
static int thread_nice(const char *tid)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", tid);
    FILE *fp = fopen(path, "r");
    const bool got = fp && fgets(line, sizeof line, fp);
    if (fp)
        fclose(fp);
    const char *p = got ? strrchr(line, ')') : NULL; /* the name may hold spaces */
    int nice = INT32_MIN;
    /* After "(comm)": state, then fields 4 to 18, then nice (field 19). */
    if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %d",
                    &nice) != 1)
        nice = INT32_MIN;
    return nice;
}

static void test_worker_runs_below_the_loops_priority(void **state)
{
    fixture *f = *state;
    char self[32];
    snprintf(self, sizeof self, "%ld", (long)syscall(SYS_gettid));
    const int base = thread_nice(self);
    assert_true(base != INT32_MIN);
    sm_api_worker *w = start(f, 0);
    submit(w, "/api/runs/1/table", NULL);
    wait_wakes(1); /* the worker lowered itself before it took its first request */
    DIR *d = opendir("/proc/self/task");
    assert_non_null(d);
    int lowered = 0, others = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        const int n = thread_nice(e->d_name);
        if (strcmp(e->d_name, self) != 0 && n == (base + 10 > 19 ? 19 : base + 10))
            lowered++;
        else
            others += n != base;
    }
    closedir(d);
    assert_int_equal(thread_nice(self), base); /* the loop's thread keeps its own */
    assert_int_equal(lowered, 1);
    assert_int_equal(others, 0);
    sm_api_worker_stop(w);
}

static void test_worker_start_fails_without_the_database(void **state)
{
    (void)state;
    const sm_api_worker_cfg cfg = {.db_path = "/nonexistent/sm.db"};
    sm_api_worker *w = NULL;
    sm_error err = {0};
    assert_true(sm_api_worker_start(&w, &cfg, &err) < 0);
    assert_null(w);
    assert_non_null(strstr(err.msg, "/nonexistent/sm.db"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_worker_answers_as_the_loop_does_and_wakes_it_once_an_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_worker_queue_full_answers_503_naming_its_bound, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_worker_forgotten_tickets_never_come_out, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_worker_metrics_answers_at_once_while_its_cells_are_fresh, setup, teardown),
        cmocka_unit_test_setup_teardown(test_worker_stops_with_requests_left, setup, teardown),
        cmocka_unit_test_setup_teardown(test_worker_runs_below_the_loops_priority, setup, teardown),
        cmocka_unit_test(test_worker_start_fails_without_the_database),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
