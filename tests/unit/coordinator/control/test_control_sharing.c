/* Unit tests of the control core's machine sharing: hosts of one machine run one job at a time, and
 * the run says why. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coordinator/control/control.h"
#include "coordinator/control/sharing.h"
#include "coordinator/model/spec.h"
#include "coordinator/store/store.h"
#include "tests/unit/coordinator/control/control_fixture.h"

#define HOLD 1000

static int setup(void **state)
{
    return control_fixture_setup(state, HOLD);
}

static int teardown(void **state)
{
    return control_fixture_teardown(state);
}

/* ---- hosts that share one machine ---- */

#define BOOT_A  "4af93bb9-6eb3-4520-8a34-0f21e7f76433"
#define BOOT_B  "9d0c2e51-1f7a-4c3b-9e21-5a6b7c8d9e0f"
#define MACHINE "3d1219c7c4c5404aaa1f6d2a48adfda4"

/* Registers an idle agent whose facts say which machine it runs on ("" unknown). */
static void register_on(fixture *f, sm_poll *p, const char *name, const char *boot_id,
                        const char *machine_id)
{
    sm_poll_reply r;
    bool now;
    char boot[SM_BOOT_HEX + 1];
    snprintf(boot, sizeof boot, "%032zx", strlen(name) * 0x1111u + (unsigned char)name[1]);
    control_fixture_base_poll(p, name, boot);
    snprintf(p->facts.boot_id, sizeof p->facts.boot_id, "%s", boot_id);
    snprintf(p->facts.machine_id, sizeof p->facts.machine_id, "%s", machine_id);
    control_fixture_poll(f, p, &r, &now);
    p->have_facts = false;
}

/* Starts a run of one local stream test (tcp, unix; 2 repetitions) over every host;
 * `parallel` is the spec's member ("" leaves it out). */
static uint64_t start_spec(fixture *f, const char *parallel)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"name\":\"lab\",\"hosts\":\"all\",\"repetitions\":2,\"warmup\":0,%s"
             "\"tests\":[{\"workload\":\"stream\",\"scope\":\"local\","
             "\"transport\":[\"tcp\",\"unix\"],\"count\":10}]}",
             parallel);
    return control_fixture_start(f, json);
}

/* How many of the agents' polls come back with a job to run. */
static size_t assigned(fixture *f, sm_poll *p, size_t n)
{
    size_t got = 0;
    for (size_t i = 0; i < n; i++) {
        sm_poll_reply r;
        bool now;
        control_fixture_poll(f, &p[i], &r, &now);
        got += r.n_commands == 1 && r.commands[0].kind == SM_CMD_ASSIGN;
    }
    return got;
}

static void test_control_hosts_of_one_machine_run_one_job_at_a_time_and_say_why(void **state)
{
    fixture *f = *state;
    sm_poll p[3];
    register_on(f, &p[0], "h1", BOOT_A, MACHINE);
    register_on(f, &p[1], "h2", BOOT_A, MACHINE);
    register_on(f, &p[2], "h3", BOOT_A, MACHINE);
    uint64_t id = start_spec(f, "");
    sm_run_row row = control_fixture_run_row(f, id);
    assert_false(row.parallel);
    assert_string_equal(row.parallel_note, "h1, h2, h3 share one machine (boot id 4af93bb9)");
    sm_run_row_fini(&row);
    assert_int_equal(assigned(f, p, 3), 1); /* the other two wait for it */

    /* The decision is the run's: a restarted coordinator keeps it. */
    sm_control_close(f->c);
    sm_control_cfg cfg = {.hold_ms = HOLD, .job_grace_ms = 1000};
    sm_error err = {0};
    assert_int_equal(sm_control_open(&f->c, f->st, &cfg, f->now, &err), 0);
    assert_int_equal(assigned(f, p, 3), 1); /* h1's job, still its current one */
}

static void test_control_parallel_true_on_one_machine_runs_side_by_side_with_a_warning(void **state)
{
    fixture *f = *state;
    sm_poll p[2];
    register_on(f, &p[0], "h1", BOOT_A, MACHINE);
    register_on(f, &p[1], "h2", BOOT_A, MACHINE);
    uint64_t id = start_spec(f, "\"parallel\":true,");
    sm_run_row row = control_fixture_run_row(f, id);
    assert_true(row.parallel);
    assert_string_equal(row.parallel_note,
                        "h1, h2 share one machine (boot id 4af93bb9): their jobs run side by side "
                        "on its CPUs, as the spec asks (\"parallel\": true)");
    sm_run_row_fini(&row);
    assert_int_equal(assigned(f, p, 2), 2);
}

static void test_control_parallel_false_says_the_spec_asked(void **state)
{
    fixture *f = *state;
    sm_poll p[2];
    register_on(f, &p[0], "h1", BOOT_A, "");
    register_on(f, &p[1], "h2", BOOT_B, "");
    uint64_t id = start_spec(f, "\"parallel\":false,");
    sm_run_row row = control_fixture_run_row(f, id);
    assert_false(row.parallel);
    assert_string_equal(row.parallel_note, "the spec says \"parallel\": false");
    sm_run_row_fini(&row);
    assert_int_equal(assigned(f, p, 2), 1);
}

static void test_control_hosts_of_different_machines_stay_parallel(void **state)
{
    fixture *f = *state;
    sm_poll p[3];
    /* A cloned image repeats its machine id: different boot ids are still two machines. */
    register_on(f, &p[0], "h1", BOOT_A, MACHINE);
    register_on(f, &p[1], "h2", BOOT_B, MACHINE);
    register_on(f, &p[2], "h3", "", ""); /* an agent that does not say */
    uint64_t id = start_spec(f, "");
    sm_run_row row = control_fixture_run_row(f, id);
    assert_true(row.parallel);
    assert_string_equal(row.parallel_note, "");
    sm_run_row_fini(&row);
    assert_int_equal(assigned(f, p, 3), 3);
}

static void test_control_without_boot_ids_the_machine_id_tells(void **state)
{
    fixture *f = *state;
    sm_poll p[3];
    register_on(f, &p[0], "h1", "", MACHINE);
    register_on(f, &p[1], "h2", BOOT_B, "");
    register_on(f, &p[2], "h3", "", MACHINE);
    uint64_t id = start_spec(f, "");
    sm_run_row row = control_fixture_run_row(f, id);
    assert_false(row.parallel);
    assert_string_equal(row.parallel_note, "h1, h3 share one machine (machine id 3d1219c7)");
    sm_run_row_fini(&row);
}

/* The machines are those of the run's hosts, as the facts say when the run starts. */
static void test_control_only_the_runs_hosts_and_their_facts_then_count(void **state)
{
    fixture *f = *state;
    sm_poll p[3];
    register_on(f, &p[0], "h1", BOOT_A, "");
    register_on(f, &p[1], "h2", BOOT_B, "");
    register_on(f, &p[2], "h3", BOOT_A, "");
    char json[512];
    snprintf(json, sizeof json,
             "{\"name\":\"two\",\"hosts\":[\"h1\",\"h2\"],\"tests\":[{\"workload\":\"stream\","
             "\"scope\":\"local\",\"transport\":\"tcp\",\"count\":10}]}");
    sm_spec spec;
    sm_error err = {0};
    assert_int_equal(sm_spec_decode(json, strlen(json), &spec, &err), 0);
    uint64_t id = 0;
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_control_run_start(f->c, json, &spec, f->now, &id, &err), 0);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    sm_spec_fini(&spec);
    sm_run_row row = control_fixture_run_row(f, id);
    assert_true(row.parallel); /* h3 shares h1's machine but is not in the run */
    sm_run_row_fini(&row);

    /* h2 restarts on h1's machine: its new facts count for the next run. */
    sm_poll_reply r;
    bool now;
    snprintf(p[1].boot, sizeof p[1].boot, "%s", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
    p[1].have_facts = true;
    snprintf(p[1].facts.boot_id, sizeof p[1].facts.boot_id, "%s", BOOT_A);
    control_fixture_poll(f, &p[1], &r, &now);
    assert_int_equal(sm_spec_decode(json, strlen(json), &spec, &err), 0);
    assert_int_equal(sm_store_begin(f->st, &err), 0);
    assert_int_equal(sm_control_run_start(f->c, json, &spec, f->now, &id, &err), 0);
    assert_int_equal(sm_store_commit(f->st, &err), 0);
    sm_spec_fini(&spec);
    row = control_fixture_run_row(f, id);
    assert_false(row.parallel);
    assert_string_equal(row.parallel_note, "h1, h2 share one machine (boot id 4af93bb9)");
    sm_run_row_fini(&row);
}

static void test_control_sharing_note_names_eight_hosts_a_machine_and_fits_its_room(void **state)
{
    (void)state;
    char names[40][8];
    sm_sharing_host hosts[40];
    for (size_t i = 0; i < 40; i++) {
        snprintf(names[i], sizeof names[i], "h%zu", i + 1);
        /* h1..h20 on machine A, h21..h39 on B, h40 alone on a machine of its own. */
        hosts[i] = (sm_sharing_host){names[i], i < 20 ? BOOT_A : i < 39 ? BOOT_B : "ab-12", NULL};
    }
    size_t sharing = 0;
    char note[512];
    sm_error err = {0};
    assert_int_equal(sm_sharing_find(hosts, 40, &sharing, note, sizeof note, &err), 0);
    assert_int_equal(sharing, 39);
    assert_string_equal(note, "h1, h2, h3, h4, h5, h6, h7, h8 and 12 more share one machine "
                              "(boot id 4af93bb9); h21, h22, h23, h24, h25, h26, h27, h28 and 11 "
                              "more share one machine (boot id 9d0c2e51)");
    char small[40];
    assert_int_equal(sm_sharing_find(hosts, 40, &sharing, small, sizeof small, &err), 0);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_string_equal(small + sizeof small - 4, "...");
    assert_int_equal(sm_sharing_find(hosts + 39, 1, &sharing, note, sizeof note, &err), 0);
    assert_int_equal(sharing, 0);
    assert_string_equal(note, "");
    assert_int_equal(sm_sharing_find(NULL, 0, &sharing, note, sizeof note, &err), 0);
    assert_int_equal(sharing, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_control_hosts_of_one_machine_run_one_job_at_a_time_and_say_why, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_parallel_true_on_one_machine_runs_side_by_side_with_a_warning, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_control_parallel_false_says_the_spec_asked, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_control_hosts_of_different_machines_stay_parallel,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_without_boot_ids_the_machine_id_tells, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_control_only_the_runs_hosts_and_their_facts_then_count,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_control_sharing_note_names_eight_hosts_a_machine_and_fits_its_room, NULL, NULL),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
