/* The control core's test fixture: see control_fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_fixture.h"
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
