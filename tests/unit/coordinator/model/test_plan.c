/* Unit tests of planning: which hosts and pairs a spec selects, and the cells and jobs it becomes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/model/plan.h"

#define FLEET_MAX 64

/* A spec built by hand, owning its arrays, so these tests do not depend on the decoder. */
typedef struct spec_fx {
    sm_spec spec;
    sm_spec_test tests[4];
    char names[16][SM_NAME_LEN];
    char pairs[16][2][SM_NAME_LEN];
} spec_fx;

static void spec_init(spec_fx *f, uint32_t reps, uint32_t warmup)
{
    memset(f, 0, sizeof *f);
    snprintf(f->spec.name, sizeof f->spec.name, "t");
    f->spec.hosts = SM_HOSTS_ALL;
    f->spec.pairs = SM_PAIRS_MESH;
    f->spec.repetitions = reps;
    f->spec.warmup = warmup;
    f->spec.parallel = true;
    f->spec.tests = f->tests;
    f->spec.host_names = f->names;
    f->spec.pair_list = f->pairs;
}

/* Adds a test of n variants; variant v has msg_size 100 + v so that cells can be told apart. */
static void add_test(spec_fx *f, sm_scope scope, size_t n)
{
    sm_spec_test *t = &f->tests[f->spec.n_tests++];
    for (size_t v = 0; v < n; v++) {
        sm_params_init(&t->variants[v], SM_WL_STREAM);
        t->variants[v].scope = scope;
        t->variants[v].msg_size = (uint32_t)(100 + v);
    }
    t->n_variants = n;
}

static void add_name(spec_fx *f, const char *name)
{
    snprintf(f->names[f->spec.n_host_names++], SM_NAME_LEN, "%s", name);
    f->spec.hosts = SM_HOSTS_LIST;
}

static void add_pair(spec_fx *f, const char *client, const char *server)
{
    snprintf(f->pairs[f->spec.n_pairs][0], SM_NAME_LEN, "%s", client);
    snprintf(f->pairs[f->spec.n_pairs][1], SM_NAME_LEN, "%s", server);
    f->spec.n_pairs++;
    f->spec.pairs = SM_PAIRS_LIST;
}

static void host_set(sm_plan_host *h, const char *name, bool online, const char *rack)
{
    memset(h, 0, sizeof *h);
    snprintf(h->name, sizeof h->name, "%s", name);
    snprintf(h->data_addr, sizeof h->data_addr, "10.0.0.1");
    h->online = online;
    if (rack) {
        snprintf(h->labels[0].key, sizeof h->labels[0].key, "rack");
        snprintf(h->labels[0].value, sizeof h->labels[0].value, "%s", rack);
        h->n_labels = 1;
    }
}

/* n online hosts named h00, h01, ... */
static void fleet_make(sm_plan_host *fleet, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char name[24]; /* room for any size_t, so gcc at -O0 sees no truncation */
        snprintf(name, sizeof name, "h%02zu", i);
        host_set(&fleet[i], name, true, NULL);
    }
}

static void expand_ok(const spec_fx *f, const sm_plan_host *fleet, size_t n, sm_plan *p)
{
    sm_error err = {0};
    int rc = sm_plan_expand(&f->spec, fleet, n, p, &err);
    if (rc != 0)
        fail_msg("sm_plan_expand: %d %s (field %s)", rc, err.msg, err.field);
}

static void expand_fails(const spec_fx *f, const sm_plan_host *fleet, size_t n,
                         const char *want_field, const char *want_msg)
{
    sm_error err = {0};
    sm_plan p;
    assert_int_equal(sm_plan_expand(&f->spec, fleet, n, &p, &err), SM_EINVAL);
    assert_int_equal(err.code, SM_EINVAL);
    assert_string_equal(err.field, want_field);
    assert_string_equal(err.msg, want_msg);
    assert_null(p.cells);
    assert_null(p.jobs);
    assert_int_equal(p.n_cells, 0);
    assert_int_equal(p.n_jobs, 0);
}

static void assert_cell(const sm_cell *c, uint32_t test, uint32_t variant, const char *host,
                        const char *peer)
{
    assert_int_equal(c->test, test);
    assert_int_equal(c->variant, variant);
    assert_string_equal(c->host, host);
    assert_string_equal(c->peer, peer);
    assert_int_equal(c->params.msg_size, 100 + variant);
}

static void test_plan_local_cells_are_tests_times_variants_times_hosts(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 5, 1);
    add_test(&f, SM_SCOPE_LOCAL, 2);
    add_test(&f, SM_SCOPE_LOCAL, 3);
    sm_plan_host fleet[3];
    fleet_make(fleet, 3);
    sm_plan p;
    expand_ok(&f, fleet, 3, &p);
    assert_int_equal(p.n_cells, (2 + 3) * 3);
    assert_int_equal(p.n_jobs, (2 + 3) * 3 * (5 + 1));
    /* test, then host, then variant */
    assert_cell(&p.cells[0], 0, 0, "h00", "");
    assert_cell(&p.cells[1], 0, 1, "h00", "");
    assert_cell(&p.cells[2], 0, 0, "h01", "");
    assert_cell(&p.cells[5], 0, 1, "h02", "");
    assert_cell(&p.cells[6], 1, 0, "h00", "");
    assert_cell(&p.cells[8], 1, 2, "h00", "");
    assert_cell(&p.cells[14], 1, 2, "h02", "");
    for (size_t i = 0; i < p.n_jobs; i++)
        assert_int_equal(p.jobs[i].round, 0);
    sm_plan_fini(&p);
}

static void test_plan_mesh_has_n_times_n_minus_1_cells_per_variant(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 2, 0);
    add_test(&f, SM_SCOPE_PAIR, 2);
    sm_plan_host fleet[4];
    fleet_make(fleet, 4);
    sm_plan p;
    expand_ok(&f, fleet, 4, &p);
    assert_int_equal(p.n_cells, 4 * 3 * 2);
    assert_int_equal(p.n_jobs, 4 * 3 * 2 * 2);
    assert_cell(&p.cells[0], 0, 0, "h00", "h01");
    assert_cell(&p.cells[1], 0, 1, "h00", "h01");
    assert_cell(&p.cells[2], 0, 0, "h00", "h02");
    assert_cell(&p.cells[6], 0, 0, "h01", "h00");
    assert_cell(&p.cells[23], 0, 1, "h03", "h02");
    /* every ordered pair exactly once per variant */
    int seen[4][4][2] = {{{0}}};
    for (size_t c = 0; c < p.n_cells; c++) {
        int a = p.cells[c].host[2] - '0', b = p.cells[c].peer[2] - '0';
        assert_int_not_equal(a, b);
        seen[a][b][p.cells[c].variant]++;
    }
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            for (int v = 0; v < 2; v++)
                assert_int_equal(seen[a][b][v], a != b);
    sm_plan_fini(&p);
}

static void test_plan_warmup_jobs_come_first_then_variants_alternate(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 3, 2);
    add_test(&f, SM_SCOPE_LOCAL, 2);
    sm_plan_host fleet[1];
    fleet_make(fleet, 1);
    sm_plan p;
    expand_ok(&f, fleet, 1, &p);
    assert_int_equal(p.n_jobs, 2 * 5);
    /* A B A B for the two warm-ups, then A B A B A B measured */
    for (size_t i = 0; i < p.n_jobs; i++) {
        assert_int_equal(p.jobs[i].cell, i % 2);
        assert_int_equal(p.jobs[i].order, i);
        assert_int_equal(p.jobs[i].warmup, i < 4);
        assert_int_equal(p.jobs[i].rep, i < 4 ? i / 2 : (i - 4) / 2);
    }
    sm_plan_fini(&p);
}

static void test_plan_repetition_walks_tests_then_hosts_then_variants(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 2, 0);
    add_test(&f, SM_SCOPE_LOCAL, 2);
    add_test(&f, SM_SCOPE_LOCAL, 1);
    sm_plan_host fleet[2];
    fleet_make(fleet, 2);
    sm_plan p;
    expand_ok(&f, fleet, 2, &p);
    assert_int_equal(p.n_cells, 6);
    assert_int_equal(p.n_jobs, 12);
    /* one repetition is every cell once in cell order: h00 A B, h01 A B, then test 1 */
    static const char *want[] = {"h00", "h00", "h01", "h01", "h00", "h01"};
    for (size_t i = 0; i < p.n_jobs; i++) {
        const sm_cell *c = &p.cells[p.jobs[i].cell];
        assert_int_equal(p.jobs[i].cell, i % 6);
        assert_int_equal(p.jobs[i].rep, i / 6);
        assert_false(p.jobs[i].warmup);
        assert_string_equal(c->host, want[i % 6]);
    }
    sm_plan_fini(&p);
}

static void test_plan_all_selects_online_hosts_sorted_by_name(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 1, 0);
    add_test(&f, SM_SCOPE_LOCAL, 1);
    sm_plan_host fleet[4];
    host_set(&fleet[0], "delta", true, NULL);
    host_set(&fleet[1], "alpha", true, NULL);
    host_set(&fleet[2], "charlie", false, NULL);
    host_set(&fleet[3], "bravo", true, NULL);
    sm_plan p;
    expand_ok(&f, fleet, 4, &p);
    assert_int_equal(p.n_cells, 3);
    assert_string_equal(p.cells[0].host, "alpha");
    assert_string_equal(p.cells[1].host, "bravo");
    assert_string_equal(p.cells[2].host, "delta");
    sm_plan_fini(&p);
}

/* A test with hosts of its own makes cells on those alone; the others on every host. */
static void test_plan_a_test_with_its_own_hosts_runs_on_those_alone(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 2, 1);
    add_name(&f, "h02");
    add_name(&f, "h00");
    add_test(&f, SM_SCOPE_LOCAL, 2);
    add_test(&f, SM_SCOPE_LOCAL, 1);
    char own[1][SM_NAME_LEN] = {"h02"};
    f.tests[0].hosts = own;
    f.tests[0].n_hosts = 1;
    sm_plan_host fleet[3];
    fleet_make(fleet, 3);
    sm_plan p;
    expand_ok(&f, fleet, 3, &p);
    assert_int_equal(p.n_cells, 2 + 2);
    assert_int_equal(p.n_jobs, (2 + 2) * (2 + 1));
    assert_cell(&p.cells[0], 0, 0, "h02", "");
    assert_cell(&p.cells[1], 0, 1, "h02", "");
    assert_cell(&p.cells[2], 1, 0, "h00", "");
    assert_cell(&p.cells[3], 1, 0, "h02", "");
    for (size_t i = 0; i < p.n_jobs; i++)
        assert_true(p.jobs[i].cell < p.n_cells);
    sm_plan_fini(&p);
}

static void test_plan_list_selects_the_named_hosts_once(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 1, 0);
    add_test(&f, SM_SCOPE_LOCAL, 1);
    add_name(&f, "h03");
    add_name(&f, "h01");
    add_name(&f, "h03");
    sm_plan_host fleet[5];
    fleet_make(fleet, 5);
    sm_plan p;
    expand_ok(&f, fleet, 5, &p);
    assert_int_equal(p.n_cells, 2);
    assert_string_equal(p.cells[0].host, "h01");
    assert_string_equal(p.cells[1].host, "h03");
    sm_plan_fini(&p);
}

static void test_plan_list_refuses_an_unregistered_host(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 1, 0);
    add_test(&f, SM_SCOPE_LOCAL, 1);
    add_name(&f, "h01");
    add_name(&f, "ghost");
    sm_plan_host fleet[3];
    fleet_make(fleet, 3);
    expand_fails(&f, fleet, 3, "hosts", "hosts: 'ghost' is not a registered agent");
}

static void test_plan_list_refuses_a_lost_host_that_all_skips(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 1, 0);
    add_test(&f, SM_SCOPE_LOCAL, 1);
    sm_plan_host fleet[3];
    fleet_make(fleet, 3);
    fleet[1].online = false;
    sm_plan p;
    expand_ok(&f, fleet, 3, &p);
    assert_int_equal(p.n_cells, 2);
    assert_string_equal(p.cells[0].host, "h00");
    assert_string_equal(p.cells[1].host, "h02");
    sm_plan_fini(&p);

    add_name(&f, "h00");
    add_name(&f, "h01");
    expand_fails(&f, fleet, 3, "hosts", "hosts: 'h01' is lost");
}

static void test_plan_label_selects_online_hosts_with_that_label(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 1, 0);
    add_test(&f, SM_SCOPE_LOCAL, 1);
    f.spec.hosts = SM_HOSTS_LABEL;
    snprintf(f.spec.label_key, sizeof f.spec.label_key, "rack");
    snprintf(f.spec.label_value, sizeof f.spec.label_value, "2");
    sm_plan_host fleet[5];
    host_set(&fleet[0], "a", true, "1");
    host_set(&fleet[1], "b", true, "2");
    host_set(&fleet[2], "c", false, "2");
    host_set(&fleet[3], "d", true, NULL);
    host_set(&fleet[4], "e", true, "2");
    /* a second label before the matching one */
    fleet[4].labels[1] = fleet[4].labels[0];
    snprintf(fleet[4].labels[0].key, sizeof fleet[4].labels[0].key, "zone");
    fleet[4].n_labels = 2;
    sm_plan p;
    expand_ok(&f, fleet, 5, &p);
    assert_int_equal(p.n_cells, 2);
    assert_string_equal(p.cells[0].host, "b");
    assert_string_equal(p.cells[1].host, "e");
    sm_plan_fini(&p);

    snprintf(f.spec.label_value, sizeof f.spec.label_value, "9");
    expand_fails(&f, fleet, 5, "hosts", "hosts: no online agent has the label rack=9");
}

static void test_plan_no_online_host_is_refused(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 1, 0);
    add_test(&f, SM_SCOPE_LOCAL, 1);
    sm_plan_host fleet[2];
    fleet_make(fleet, 2);
    fleet[0].online = fleet[1].online = false;
    expand_fails(&f, fleet, 2, "hosts", "hosts: no online agent is selected");
    expand_fails(&f, NULL, 0, "hosts", "hosts: no online agent is selected");
}

/* Checks the pair cells of a one-variant pair test against want (client, server, ...). */
static void assert_pairs(const sm_plan *p, const char *const *want, size_t n)
{
    assert_int_equal(p->n_cells, n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(p->cells[i].host, want[2 * i]);
        assert_string_equal(p->cells[i].peer, want[2 * i + 1]);
    }
}

static void test_plan_ring_links_each_host_to_the_next_by_name(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 1, 0);
    add_test(&f, SM_SCOPE_PAIR, 1);
    f.spec.pairs = SM_PAIRS_RING;
    sm_plan_host fleet[4];
    host_set(&fleet[0], "d", true, NULL);
    host_set(&fleet[1], "b", true, NULL);
    host_set(&fleet[2], "a", true, NULL);
    host_set(&fleet[3], "c", true, NULL);
    sm_plan p;
    expand_ok(&f, fleet, 4, &p);
    static const char *const ring4[] = {"a", "b", "b", "c", "c", "d", "d", "a"};
    assert_pairs(&p, ring4, 4);
    sm_plan_fini(&p);

    /* two hosts: both directions */
    expand_ok(&f, &fleet[1], 2, &p);
    static const char *const ring2[] = {"a", "b", "b", "a"};
    assert_pairs(&p, ring2, 2);
    sm_plan_fini(&p);
}

static void test_plan_star_pairs_the_centre_with_every_other_host_both_ways(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 1, 0);
    add_test(&f, SM_SCOPE_PAIR, 1);
    f.spec.pairs = SM_PAIRS_STAR;
    snprintf(f.spec.star, sizeof f.spec.star, "h01");
    sm_plan_host fleet[4];
    fleet_make(fleet, 4);
    sm_plan p;
    expand_ok(&f, fleet, 4, &p);
    static const char *const want[] = {"h01", "h00", "h00", "h01", "h01", "h02",
                                       "h02", "h01", "h01", "h03", "h03", "h01"};
    assert_pairs(&p, want, 6);
    sm_plan_fini(&p);
}

static void test_plan_star_outside_the_selection_is_refused(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 1, 0);
    add_test(&f, SM_SCOPE_PAIR, 1);
    f.spec.pairs = SM_PAIRS_STAR;
    snprintf(f.spec.star, sizeof f.spec.star, "h03");
    sm_plan_host fleet[4];
    fleet_make(fleet, 4);
    fleet[3].online = false;
    expand_fails(&f, fleet, 4, "pairs", "pairs: star 'h03' is not a selected host");
}

static void test_plan_pair_list_keeps_the_given_pairs_in_order(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 1, 0);
    add_test(&f, SM_SCOPE_PAIR, 1);
    add_pair(&f, "h02", "h00");
    add_pair(&f, "h00", "h01");
    add_pair(&f, "h00", "h02");
    sm_plan_host fleet[3];
    fleet_make(fleet, 3);
    sm_plan p;
    expand_ok(&f, fleet, 3, &p);
    static const char *const want[] = {"h02", "h00", "h00", "h01", "h00", "h02"};
    assert_pairs(&p, want, 3);
    sm_plan_fini(&p);
}

static void test_plan_pair_list_refuses_unselected_self_and_repeated_pairs(void **state)
{
    (void)state;
    sm_plan_host fleet[3];
    fleet_make(fleet, 3);
    spec_fx f;
    spec_init(&f, 1, 0);
    add_test(&f, SM_SCOPE_PAIR, 1);
    add_name(&f, "h00");
    add_name(&f, "h01");
    add_pair(&f, "h00", "h01");
    add_pair(&f, "h01", "h02");
    expand_fails(&f, fleet, 3, "pairs[1]", "pairs[1]: 'h02' is not a selected host");

    snprintf(f.pairs[1][1], SM_NAME_LEN, "h01");
    expand_fails(&f, fleet, 3, "pairs[1]", "pairs[1]: 'h01' cannot be paired with itself");

    snprintf(f.pairs[1][0], SM_NAME_LEN, "h00");
    expand_fails(&f, fleet, 3, "pairs[1]", "pairs[1]: repeats pairs[0]");
}

static void test_plan_pair_test_with_one_host_is_refused(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 1, 0);
    add_test(&f, SM_SCOPE_LOCAL, 1);
    add_test(&f, SM_SCOPE_PAIR, 1);
    sm_plan_host fleet[1];
    fleet_make(fleet, 1);
    expand_fails(&f, fleet, 1, "pairs",
                 "pairs: a pair test needs two selected hosts in a pair, 1 selected");
    f.spec.pairs = SM_PAIRS_RING;
    expand_fails(&f, fleet, 1, "pairs",
                 "pairs: a pair test needs two selected hosts in a pair, 1 selected");
}

static void test_plan_pairs_rule_is_ignored_without_pair_tests(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 1, 0);
    add_test(&f, SM_SCOPE_LOCAL, 1);
    f.spec.pairs = SM_PAIRS_STAR;
    snprintf(f.spec.star, sizeof f.spec.star, "nobody");
    sm_plan_host fleet[1];
    fleet_make(fleet, 1);
    sm_plan p;
    expand_ok(&f, fleet, 1, &p);
    assert_int_equal(p.n_cells, 1);
    sm_plan_fini(&p);
}

static void test_plan_jobs_up_to_the_bound_are_accepted_and_above_refused(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 50, 0);
    add_test(&f, SM_SCOPE_LOCAL, 40);
    sm_plan_host fleet[50];
    fleet_make(fleet, 50);
    sm_plan p;
    expand_ok(&f, fleet, 50, &p); /* 2000 cells x 50 = SM_PLAN_JOBS_MAX */
    assert_int_equal(p.n_jobs, SM_PLAN_JOBS_MAX);
    assert_int_equal(p.jobs[SM_PLAN_JOBS_MAX - 1].order, SM_PLAN_JOBS_MAX - 1);
    sm_plan_fini(&p);

    f.spec.warmup = 1;
    expand_fails(&f, fleet, 50, "repetitions",
                 "repetitions: 2000 cells x (50 repetitions + 1 warm-up) = 102000 jobs, above "
                 "the maximum 100000");
}

static void test_plan_adaptive_spec_plans_min_and_is_bounded_by_max(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 5, 0);
    add_test(&f, SM_SCOPE_LOCAL, 40);
    f.spec.adaptive = true;
    f.spec.reps = (sm_reps_rule){5, 50, 0.05, 0};
    sm_plan_host fleet[50];
    fleet_make(fleet, 50);
    sm_plan p;
    expand_ok(&f, fleet, 50, &p); /* 2000 cells x 5 planned; up to 50 each = the bound */
    assert_int_equal(p.n_jobs, 2000 * 5);
    sm_plan_fini(&p);

    f.spec.reps.max = 51;
    expand_fails(&f, fleet, 50, "repetitions.max",
                 "repetitions.max: 2000 cells x (51 repetitions + 0 warm-up) = 102000 jobs, "
                 "above the maximum 100000");
}

static void test_plan_a_default_remeasure_takes_what_the_bound_leaves(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 10, 1);
    add_test(&f, SM_SCOPE_LOCAL, 40);
    f.spec.remeasure = 10;
    sm_plan_host fleet[50];
    fleet_make(fleet, 50);
    sm_plan p;
    expand_ok(&f, fleet, 4, &p); /* 160 cells: room for all of it */
    assert_int_equal(p.remeasure, 10);
    assert_int_equal(p.n_jobs, 160 * 11);
    sm_plan_fini(&p);
    /* 2000 cells x (10 + 1 warm-up) leaves 50 - 11 = 39 per cell, of which 10 fit. */
    expand_ok(&f, fleet, 50, &p);
    assert_int_equal(p.remeasure, 10);
    sm_plan_fini(&p);
    /* 2000 cells x (45 + 1) leaves 4 of the default 45. */
    f.spec.repetitions = f.spec.remeasure = 45;
    expand_ok(&f, fleet, 50, &p);
    assert_int_equal(p.remeasure, 4);
    assert_int_equal(sm_plan_remeasure(&f.spec, 2000), 4);
    sm_plan_fini(&p);
    /* Adaptive: beside max, not min. */
    f.spec.adaptive = true;
    f.spec.repetitions = 5;
    f.spec.reps = (sm_reps_rule){5, 48, 0.05, 0};
    assert_int_equal(sm_plan_remeasure(&f.spec, 2000), 1);
}

static void test_plan_a_given_remeasure_past_the_bound_is_refused(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 45, 1);
    add_test(&f, SM_SCOPE_LOCAL, 40);
    f.spec.remeasure = 5;
    f.spec.remeasure_given = true;
    sm_plan_host fleet[50];
    fleet_make(fleet, 50);
    expand_fails(&f, fleet, 50, "remeasure",
                 "remeasure: 2000 cells x (45 repetitions + 5 remeasured + 1 warm-up) = 102000 "
                 "jobs, above the maximum 100000");
    f.spec.remeasure = 4;
    sm_plan p;
    expand_ok(&f, fleet, 50, &p);
    assert_int_equal(p.remeasure, 4);
    sm_plan_fini(&p);
}

static void test_plan_mesh_of_a_large_fleet_fails_the_bound_without_allocating_it(void **state)
{
    (void)state;
    enum { N = 2000 };
    sm_plan_host *fleet = calloc(N, sizeof *fleet);
    assert_non_null(fleet);
    for (size_t i = 0; i < N; i++) {
        snprintf(fleet[i].name, sizeof fleet[i].name, "h%04zu", i);
        fleet[i].online = true;
    }
    spec_fx f;
    spec_init(&f, 100, 10);
    add_test(&f, SM_SCOPE_PAIR, 64);
    expand_fails(&f, fleet, N, "repetitions",
                 "repetitions: 255872000 cells x (100 repetitions + 10 warm-up) = 28145920000 "
                 "jobs, above the maximum 100000");
    free(fleet);
}

static void test_plan_bad_counts_in_a_hand_made_spec_are_refused(void **state)
{
    (void)state;
    sm_plan_host fleet[1];
    fleet_make(fleet, 1);
    spec_fx f;
    spec_init(&f, 0, 0);
    add_test(&f, SM_SCOPE_LOCAL, 1);
    expand_fails(&f, fleet, 1, "repetitions", "repetitions: 0 is not within 1..100");
    f.spec.repetitions = 1;
    f.spec.warmup = 11;
    expand_fails(&f, fleet, 1, "warmup", "warmup: 11 is above the maximum 10");
    f.spec.warmup = 0;
    f.tests[0].n_variants = 0;
    expand_fails(&f, fleet, 1, "tests[0]", "tests[0]: 0 variants; from 1 to 64");
    f.spec.n_tests = 0;
    expand_fails(&f, fleet, 1, "tests", "tests: 0 tests; from 1 to 32");
}

static void test_plan_test_with_both_scopes_gives_local_then_pair_cells(void **state)
{
    (void)state;
    spec_fx f;
    spec_init(&f, 1, 0);
    add_test(&f, SM_SCOPE_LOCAL, 2);
    f.tests[0].variants[1].scope = SM_SCOPE_PAIR;
    sm_plan_host fleet[2];
    fleet_make(fleet, 2);
    sm_plan p;
    expand_ok(&f, fleet, 2, &p);
    assert_int_equal(p.n_cells, 4);
    assert_cell(&p.cells[0], 0, 0, "h00", "");
    assert_cell(&p.cells[1], 0, 0, "h01", "");
    assert_cell(&p.cells[2], 0, 1, "h00", "h01");
    assert_cell(&p.cells[3], 0, 1, "h01", "h00");
    sm_plan_fini(&p);
}

static void test_plan_fini_of_null_or_empty_does_nothing(void **state)
{
    (void)state;
    sm_plan_fini(NULL);
    sm_plan p = {0};
    sm_plan_fini(&p);
    assert_null(p.cells);
}

static void test_plan_rounds_meet_every_pair_once_with_no_host_twice_in_a_round(void **state)
{
    (void)state;
    for (size_t n = 2; n <= 12; n++) {
        uint32_t round[12 * 12];
        uint32_t rounds = sm_plan_rounds(n, round);
        assert_int_equal(rounds, n % 2 == 0 ? n - 1 : n);
        /* in[r][h]: how often host h plays in round r */
        unsigned in[12][12] = {{0}};
        unsigned per_round[12] = {0};
        for (size_t i = 0; i < n; i++) {
            for (size_t j = i + 1; j < n; j++) {
                uint32_t r = round[i * n + j];
                assert_true(r < rounds);
                assert_int_equal(round[j * n + i], r);
                in[r][i]++;
                in[r][j]++;
                per_round[r]++;
            }
        }
        /* each unordered pair was visited once above; each round is a set of disjoint pairs,
         * full (n/2 pairs), or with one host sitting out when n is odd */
        for (uint32_t r = 0; r < rounds; r++) {
            assert_int_equal(per_round[r], n / 2);
            for (size_t h = 0; h < n; h++)
                assert_true(in[r][h] <= 1);
        }
        /* every host meets every other host: n - 1 rounds played */
        for (size_t h = 0; h < n; h++) {
            unsigned played = 0;
            for (uint32_t r = 0; r < rounds; r++)
                played += in[r][h];
            assert_int_equal(played, n - 1);
        }
    }
}

static void test_plan_rounds_of_fewer_than_two_hosts_is_zero(void **state)
{
    (void)state;
    uint32_t round[1] = {7};
    assert_int_equal(sm_plan_rounds(0, round), 0);
    assert_int_equal(sm_plan_rounds(1, round), 0);
}

static void test_plan_mesh_pair_jobs_share_no_host_within_a_round(void **state)
{
    (void)state;
    for (size_t n = 2; n <= 9; n++) {
        spec_fx f;
        spec_init(&f, 2, 1);
        add_test(&f, SM_SCOPE_PAIR, 2);
        add_test(&f, SM_SCOPE_LOCAL, 1);
        add_test(&f, SM_SCOPE_PAIR, 1);
        sm_plan_host fleet[FLEET_MAX];
        fleet_make(fleet, n);
        sm_plan p;
        expand_ok(&f, fleet, n, &p);
        uint32_t table[9 * 9];
        uint32_t rounds = sm_plan_rounds(n, table);
        /* owner[r][h]: the ordered pair (as client * n + server + 1) host h plays in round r */
        size_t owner[2 * 9][9];
        memset(owner, 0, sizeof owner);
        for (size_t k = 0; k < p.n_jobs; k++) {
            const sm_plan_job *j = &p.jobs[k];
            const sm_cell *c = &p.cells[j->cell];
            if (c->peer[0] == '\0') {
                assert_int_equal(j->round, 0);
                continue;
            }
            size_t a = (size_t)atoi(c->host + 1), b = (size_t)atoi(c->peer + 1);
            /* (a, b) with a < b in round 2r, (b, a) in 2r + 1 */
            assert_int_equal(j->round, 2 * table[a * n + b] + (a > b));
            assert_true(j->round < 2 * rounds);
            size_t id = a * n + b + 1;
            for (size_t h = 0; h < 2; h++) {
                size_t host = h ? b : a;
                if (owner[j->round][host] == 0)
                    owner[j->round][host] = id;
                assert_int_equal(owner[j->round][host], id);
            }
        }
        sm_plan_fini(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_local_cells_are_tests_times_variants_times_hosts),
        cmocka_unit_test(test_plan_mesh_has_n_times_n_minus_1_cells_per_variant),
        cmocka_unit_test(test_plan_warmup_jobs_come_first_then_variants_alternate),
        cmocka_unit_test(test_plan_repetition_walks_tests_then_hosts_then_variants),
        cmocka_unit_test(test_plan_all_selects_online_hosts_sorted_by_name),
        cmocka_unit_test(test_plan_list_selects_the_named_hosts_once),
        cmocka_unit_test(test_plan_a_test_with_its_own_hosts_runs_on_those_alone),
        cmocka_unit_test(test_plan_list_refuses_an_unregistered_host),
        cmocka_unit_test(test_plan_list_refuses_a_lost_host_that_all_skips),
        cmocka_unit_test(test_plan_label_selects_online_hosts_with_that_label),
        cmocka_unit_test(test_plan_no_online_host_is_refused),
        cmocka_unit_test(test_plan_ring_links_each_host_to_the_next_by_name),
        cmocka_unit_test(test_plan_star_pairs_the_centre_with_every_other_host_both_ways),
        cmocka_unit_test(test_plan_star_outside_the_selection_is_refused),
        cmocka_unit_test(test_plan_pair_list_keeps_the_given_pairs_in_order),
        cmocka_unit_test(test_plan_pair_list_refuses_unselected_self_and_repeated_pairs),
        cmocka_unit_test(test_plan_pair_test_with_one_host_is_refused),
        cmocka_unit_test(test_plan_pairs_rule_is_ignored_without_pair_tests),
        cmocka_unit_test(test_plan_jobs_up_to_the_bound_are_accepted_and_above_refused),
        cmocka_unit_test(test_plan_adaptive_spec_plans_min_and_is_bounded_by_max),
        cmocka_unit_test(test_plan_a_default_remeasure_takes_what_the_bound_leaves),
        cmocka_unit_test(test_plan_a_given_remeasure_past_the_bound_is_refused),
        cmocka_unit_test(test_plan_mesh_of_a_large_fleet_fails_the_bound_without_allocating_it),
        cmocka_unit_test(test_plan_bad_counts_in_a_hand_made_spec_are_refused),
        cmocka_unit_test(test_plan_test_with_both_scopes_gives_local_then_pair_cells),
        cmocka_unit_test(test_plan_fini_of_null_or_empty_does_nothing),
        cmocka_unit_test(test_plan_rounds_meet_every_pair_once_with_no_host_twice_in_a_round),
        cmocka_unit_test(test_plan_rounds_of_fewer_than_two_hosts_is_zero),
        cmocka_unit_test(test_plan_mesh_pair_jobs_share_no_host_within_a_round),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
