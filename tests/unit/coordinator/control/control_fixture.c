/* The control core's test fixture: see control_fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/coordinator/control/control_fixture.h"
#include "coordinator/model/spec.h"

int control_fixture_setup(void **state, uint32_t hold_ms)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/sm-control-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->db, sizeof f->db, "%s/c.db", f->dir);
    sm_error err = {0};
    assert_int_equal(sm_store_open(&f->st, f->db, &err), 0);
    sm_control_cfg cfg = {.hold_ms = hold_ms, .job_grace_ms = 1000};
    f->now = 1700000000000;
    assert_int_equal(sm_control_open(&f->c, f->st, &cfg, f->now, &err), 0);
    *state = f;
    return 0;
}

int control_fixture_teardown(void **state)
{
    fixture *f = *state;
    sm_control_close(f->c);
    sm_store_close(f->st);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

uint64_t control_fixture_start(fixture *f, const char *json)
{
    sm_spec spec;
    sm_error err = {0};
    if (sm_spec_decode(json, strlen(json), &spec, &err) != 0)
        fail_msg("spec: %s", err.msg);
    uint64_t id = 0;
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    if (sm_control_run_start(f->c, json, &spec, f->now, &id, &err) != 0)
        fail_msg("run: %s", err.msg);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    sm_spec_fini(&spec);
    return id;
}

sm_agent_status control_fixture_status(fixture *f, const char *name)
{
    sm_agent_status st;
    int64_t seen;
    assert_true(sm_control_agent_live(f->c, name, &st, &seen));
    return st;
}

void control_fixture_base_poll(sm_poll *p, const char *agent, const char *boot)
{
    memset(p, 0, sizeof *p);
    snprintf(p->agent, sizeof p->agent, "%s", agent);
    snprintf(p->boot, sizeof p->boot, "%s", boot);
    p->have_facts = true;
    snprintf(p->facts.hostname, sizeof p->facts.hostname, "%s", agent);
}

void control_fixture_poll(fixture *f, const sm_poll *p, sm_poll_reply *r, bool *now)
{
    sm_error err = {0};
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    if (sm_control_poll(f->c, p, f->now, r, now, &err) != 0)
        fail_msg("poll: %s", err.msg);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
}

uint64_t control_fixture_submit(fixture *f, const char *host)
{
    sm_params p;
    sm_params_init(&p, SM_WL_STREAM);
    sm_error err = {0};
    assert_int_equal(sm_params_validate(&p, &err), 0);
    uint64_t id = 0;
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_control_submit(f->c, host, &p, f->now, &id, &err), 0);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    return id;
}

sm_job_state control_fixture_job_state(fixture *f, uint64_t id, char *reason, size_t len)
{
    sm_job_row row;
    sm_error err = {0};
    assert_int_equal(sm_store_job_get(f->st, id, &row, &err), 0);
    sm_job_state s = row.state;
    if (reason)
        snprintf(reason, len, "%s", row.reason);
    sm_job_row_fini(&row);
    return s;
}

uint64_t control_fixture_results(fixture *f)
{
    uint64_t n = 0;
    sm_error err = {0};
    assert_int_equal(sm_store_result_count(f->st, &n, &err), 0);
    return n;
}

uint64_t control_fixture_dispatch_one(fixture *f, sm_poll *p, sm_poll_reply *r)
{
    bool now;
    control_fixture_base_poll(p, "h1", "0123456789abcdef0123456789abcdef");
    control_fixture_poll(f, p, r, &now);
    uint64_t id = control_fixture_submit(f, "h1");
    p->have_facts = false;
    control_fixture_poll(f, p, r, &now);
    assert_true(now);
    assert_int_equal(r->n_commands, 1);
    assert_int_equal(r->commands[0].kind, SM_CMD_ASSIGN);
    assert_int_equal(r->commands[0].job, id);
    assert_int_equal(r->commands[0].attempt, 1);
    assert_int_equal(control_fixture_job_state(f, id, NULL, 0), SM_JOB_ASSIGNED);
    return id;
}

uint64_t control_fixture_start_run(fixture *f, uint32_t reps, bool parallel, sm_poll *p1,
                                   sm_poll *p2)
{
    char text[16];
    snprintf(text, sizeof text, "%u", reps);
    return control_fixture_start_run_reps(f, text, parallel, p1, p2);
}

uint64_t control_fixture_start_run_reps(fixture *f, const char *reps, bool parallel, sm_poll *p1,
                                        sm_poll *p2)
{
    sm_poll_reply r;
    bool now;
    control_fixture_base_poll(p1, "h1", "11111111111111111111111111111111");
    control_fixture_base_poll(p2, "h2", "22222222222222222222222222222222");
    control_fixture_poll(f, p1, &r, &now);
    control_fixture_poll(f, p2, &r, &now);
    p1->have_facts = p2->have_facts = false;
    char json[512];
    snprintf(json, sizeof json,
             "{\"name\":\"r\",\"hosts\":\"all\",\"repetitions\":%s,\"warmup\":0,"
             "\"parallel\":%s,\"tests\":[{\"workload\":\"stream\",\"scope\":\"local\","
             "\"transport\":[\"tcp\",\"unix\"],\"count\":10}]}",
             reps, parallel ? "true" : "false");
    return control_fixture_start(f, json);
}

sm_run_row control_fixture_run_row(fixture *f, uint64_t id)
{
    sm_run_row r;
    sm_error err = {0};
    assert_int_equal(sm_store_run_get(f->st, id, &r, &err), 0);
    return r;
}

uint64_t control_fixture_take_and_finish(fixture *f, sm_poll *p, bool ok, const char *reason)
{
    sm_poll_reply r;
    bool now;
    control_fixture_poll(f, p, &r, &now);
    if (r.n_commands != 1 || r.commands[0].kind != SM_CMD_ASSIGN)
        fail_msg("%s got %zu commands", p->agent, r.n_commands);
    sm_result_msg m = {.job = r.commands[0].job, .attempt = r.commands[0].attempt};
    sm_result_init(&m.result);
    m.result.ok = ok;
    snprintf(m.result.reason, sizeof m.result.reason, "%s", reason);
    sm_result_set(&m.result, SM_M_SECONDS, 0.01);
    p->results = &m;
    p->n_results = 1;
    control_fixture_poll(f, p, &r, &now);
    p->results = NULL;
    p->n_results = 0;
    return m.job;
}
