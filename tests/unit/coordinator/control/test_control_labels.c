/* The control core keeps each agent's labels as its last poll said them, and a run started by
 * label picks its hosts from them. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/control/control.h"
#include "coordinator/model/spec.h"
#include "coordinator/store/store.h"
#include "tests/unit/coordinator/control/control_fixture.h"

static int setup(void **state)
{
    return control_fixture_setup(state, 5000);
}

static int teardown(void **state)
{
    return control_fixture_teardown(state);
}

/* One poll of agent `name` saying label rack=`rack` (none when rack is NULL). */
static void poll_with_rack(fixture *f, const char *name, const char *rack)
{
    sm_poll p;
    memset(&p, 0, sizeof p);
    snprintf(p.agent, sizeof p.agent, "%s", name);
    snprintf(p.boot, sizeof p.boot, "0123456789abcdef0123456789abcdef");
    if (rack) {
        snprintf(p.labels[0].key, sizeof p.labels[0].key, "rack");
        snprintf(p.labels[0].value, sizeof p.labels[0].value, "%s", rack);
        p.n_labels = 1;
    }
    sm_poll_reply r;
    bool now;
    sm_error err = {0};
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    if (sm_control_poll(f->c, &p, f->now, &r, &now, &err) != 0)
        fail_msg("poll: %s", err.msg);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
}

/* Starts a one-job-per-host run on the hosts labelled rack=`rack`; returns its jobs' hosts,
 * sorted and joined by spaces, into out. */
static void run_on_rack(fixture *f, const char *rack, char *out, size_t cap)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"name\":\"r\",\"hosts\":{\"label\":\"rack=%s\"},\"repetitions\":1,\"warmup\":0,"
             "\"tests\":[{\"workload\":\"stream\",\"scope\":\"local\",\"transport\":[\"tcp\"],"
             "\"count\":1}]}",
             rack);
    const uint64_t id = control_fixture_start(f, json);
    sm_error err = {0};
    sm_job_row *rows = NULL;
    size_t n = 0;
    assert_int_equal(sm_store_run_jobs(f->st, id, &rows, &n, &err), 0);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", i ? " " : "", rows[i].host);
    sm_store_jobs_free(rows, n);
}

static void test_control_run_by_label_takes_the_labels_of_each_agents_last_poll(void **state)
{
    fixture *f = *state;
    poll_with_rack(f, "a1", "1");
    poll_with_rack(f, "a2", "2");
    poll_with_rack(f, "a3", "1");
    char hosts[256];
    run_on_rack(f, "1", hosts, sizeof hosts);
    assert_string_equal(hosts, "a1 a3");
    /* a3 moved to rack 2; a1 lost its label. */
    poll_with_rack(f, "a3", "2");
    poll_with_rack(f, "a1", NULL);
    run_on_rack(f, "2", hosts, sizeof hosts);
    assert_string_equal(hosts, "a2 a3");
    /* Polls that say the same labels again keep them. */
    poll_with_rack(f, "a2", "2");
    poll_with_rack(f, "a3", "2");
    run_on_rack(f, "2", hosts, sizeof hosts);
    assert_string_equal(hosts, "a2 a3");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_control_run_by_label_takes_the_labels_of_each_agents_last_poll, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
