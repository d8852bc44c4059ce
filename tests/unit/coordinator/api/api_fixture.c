/* The API unit tests' fixture (api_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/unit/coordinator/api/api_fixture.h"
#include "proto/msg.h"
#include "proto/result.h"

int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_jobs_queued(void *arg, const char *const *hosts, size_t n)
{
    fixture *f = arg;
    f->queued_calls++;
    f->queued_n = n;
    snprintf(f->queued_host, sizeof f->queued_host, "%s", n ? hosts[0] : "");
}

/* The fleet key webhook secrets derive from: 1, 2, ..., 32 (test_webhook_secret's vectors). */
static const uint8_t fixture_key[SM_KEY_LEN] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                                12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                                                23, 24, 25, 26, 27, 28, 29, 30, 31, 32};

int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/sm-api-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->db, sizeof f->db, "%s/c.db", f->dir);
    sm_error err = {0};
    assert_int_equal(sm_store_open(&f->st, f->db, &err), 0);
    sm_control_cfg cfg = {.hold_ms = 1000, .job_grace_ms = 1000};
    assert_int_equal(sm_control_open(&f->c, f->st, &cfg, wall_ms(), &err), 0);
    f->rejects = sm_rejects_new();
    assert_non_null(f->rejects);
    f->api = (sm_api_ctx){.st = f->st,
                          .reports = {.st = f->st},
                          .ctl = f->c,
                          .rejects = f->rejects,
                          .jobs_queued = on_jobs_queued,
                          .arg = f,
                          .webhook_key = fixture_key};
    f->sched = (sm_schedules_env){
        f->st, &f->api.ctl, &f->api.reports, on_jobs_queued, f, NULL, NULL, NULL, NULL};
    *state = f;
    return 0;
}

int teardown(void **state)
{
    fixture *f = *state;
    sm_api_cache_free(&f->api); /* the reports of ended runs */
    sm_control_close(f->api.ctl);
    sm_store_close(f->st);
    sm_rejects_free(f->rejects);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

response call(fixture *f, const char *method, const char *path, const char *query, const char *auth,
              const char *body)
{
    response r = {0};
    r.status = sm_api_handle(&f->api, method, path, query, auth, body ? body : "",
                             body ? strlen(body) : 0, &r.body, &r.len, &r.ctype);
    assert_non_null(r.body);
    assert_int_equal(r.len, strlen(r.body));
    return r;
}

void expect(fixture *f, const char *method, const char *path, const char *query, const char *auth,
            const char *body, int status, const char *has)
{
    response r = call(f, method, path, query, auth, body);
    if (r.status != status)
        fail_msg("%s %s%s%s: %d, want %d: %s", method, path, query ? "?" : "", query ? query : "",
                 r.status, status, r.body);
    if (status >= 400) {
        assert_string_equal(r.ctype, "application/json");
        assert_non_null(strstr(r.body, "{\"error\":\""));
    }
    if (has && !strstr(r.body, has))
        fail_msg("%s %s: %s lacks %s", method, path, r.body, has);
    free(r.body);
}

/* A poll from agent name as its first: no results, facts only when asked. */
static void poll_init(sm_poll *p, const char *name, bool facts)
{
    memset(p, 0, sizeof *p);
    snprintf(p->agent, sizeof p->agent, "%s", name);
    snprintf(p->boot, sizeof p->boot, "0123456789abcdef0123456789abcdef");
    p->have_facts = facts;
    if (facts)
        snprintf(p->facts.hostname, sizeof p->facts.hostname, "%s", name);
}

/* p taken by the control core in a transaction of its own; its answer in *r. */
static void poll_once(fixture *f, const sm_poll *p, sm_poll_reply *r)
{
    bool now;
    sm_error err = {0};
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    if (sm_control_poll(f->api.ctl, p, wall_ms(), r, &now, &err) != 0)
        fail_msg("poll: %s", err.msg);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
}

void register_agent(fixture *f, const char *name)
{
    sm_poll p;
    poll_init(&p, name, true);
    sm_poll_reply r;
    poll_once(f, &p, &r);
}

void finish_jobs(fixture *f, const char *name, double mbps)
{
    finish_jobs_disturbed(f, name, mbps, NULL);
}

void finish_jobs_disturbed(fixture *f, const char *name, double mbps, const char *why)
{
    sm_poll p;
    poll_init(&p, name, false);
    sm_result_msg done[16];
    for (int round = 0; round < 32; round++) {
        sm_poll_reply r;
        poll_once(f, &p, &r);
        for (size_t i = 0; i < p.n_results; i++)
            sm_result_fini(&done[i].result);
        p.results = NULL;
        p.n_results = 0;
        if (r.n_commands == 0)
            return;
        for (size_t i = 0; i < r.n_commands && p.n_results < 16; i++) {
            if (r.commands[i].kind != SM_CMD_ASSIGN)
                continue;
            sm_result_msg *m = &done[p.n_results++];
            memset(m, 0, sizeof *m);
            m->job = r.commands[i].job;
            m->attempt = r.commands[i].attempt;
            sm_result_init(&m->result);
            m->result.ok = true;
            sm_result_set(&m->result, SM_M_THROUGHPUT, mbps);
            if (why) {
                m->result.host.known = true;
                m->result.host.disturbed = true;
                snprintf(m->result.host.reason, sizeof m->result.host.reason, "%s", why);
            }
        }
        p.results = done;
    }
    fail_msg("%s: jobs without end", name);
}
