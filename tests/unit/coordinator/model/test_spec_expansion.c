/* Unit tests of the spec's expansion into variants: defaults, repetitions and remeasuring, the
 * cartesian product, hosts and pairs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coordinator/model/spec.h"
#include "tests/unit/coordinator/model/spec_fixture.h"

/* ---- expansion ---- */

static void test_spec_seed_preset_gives_tcp_tcp_nodelay_unix_in_order(void **state)
{
    (void)state;
    const sm_preset *p = sm_preset_find("seed-tcp-unix");
    assert_non_null(p);
    sm_spec s;
    sm_error err;
    assert_int_equal(sm_spec_decode(p->spec_json, strlen(p->spec_json), &s, &err), 0);
    assert_string_equal(s.name, "seed-tcp-unix");
    assert_int_equal(s.repetitions, 10);
    assert_int_equal(s.warmup, 2);
    assert_int_equal(s.n_tests, 1);
    const sm_spec_test *t = &s.tests[0];
    assert_int_equal(t->n_variants, 3);
    assert_int_equal(t->variants[0].transport, SM_TR_TCP);
    assert_false(t->variants[0].nodelay);
    assert_int_equal(t->variants[1].transport, SM_TR_TCP);
    assert_true(t->variants[1].nodelay);
    assert_int_equal(t->variants[2].transport, SM_TR_UNIX);
    assert_false(t->variants[2].nodelay);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(t->variants[i].workload, SM_WL_STREAM);
        assert_int_equal(t->variants[i].scope, SM_SCOPE_LOCAL);
        assert_int_equal(t->variants[i].framing, SM_FRAMING_LINES);
        assert_int_equal(t->variants[i].msg_size, 128);
        assert_int_equal(t->variants[i].count, 8192);
    }
    sm_spec_fini(&s);
}

static void test_spec_defaults_fill_unset_fields(void **state)
{
    (void)state;
    sm_spec s;
    spec_fixture_decode_ok(SPEC(""), &s);
    assert_string_equal(s.name, "s");
    assert_int_equal(s.hosts, SM_HOSTS_ALL);
    assert_int_equal(s.pairs, SM_PAIRS_MESH);
    assert_int_equal(s.repetitions, 5);
    assert_int_equal(s.warmup, 1);
    assert_true(s.parallel);
    assert_false(s.parallel_given); /* the coordinator may choose */
    assert_int_equal(s.n_tests, 1);
    assert_int_equal(s.tests[0].n_variants, 1);
    sm_params want;
    sm_error err;
    sm_params_init(&want, SM_WL_STREAM);
    assert_int_equal(sm_params_validate(&want, &err), 0);
    assert_memory_equal(&s.tests[0].variants[0], &want, sizeof want);
    sm_spec_fini(&s);
}

static void test_spec_top_level_fields_are_read(void **state)
{
    (void)state;
    sm_spec s;
    spec_fixture_decode_ok(SPEC(",'repetitions':100,'warmup':0,'parallel':false"), &s);
    assert_int_equal(s.repetitions, 100);
    assert_int_equal(s.warmup, 0);
    assert_false(s.parallel);
    assert_true(s.parallel_given);
    sm_spec_fini(&s);
}

static void test_spec_integer_repetitions_stay_fixed(void **state)
{
    (void)state;
    sm_spec s;
    spec_fixture_decode_ok(SPEC(",'repetitions':7"), &s);
    assert_int_equal(s.repetitions, 7);
    assert_false(s.adaptive);
    sm_spec_fini(&s);
    spec_fixture_decode_ok(SPEC(""), &s);
    assert_false(s.adaptive);
    sm_spec_fini(&s);
}

static void test_spec_repetitions_object_is_adaptive_starting_at_min(void **state)
{
    (void)state;
    sm_spec s;
    spec_fixture_decode_ok(SPEC(",'repetitions':{'min':3,'max':8,'ci_rel':0.02}"), &s);
    assert_true(s.adaptive);
    assert_int_equal(s.reps.min, 3);
    assert_int_equal(s.reps.max, 8);
    assert_true(s.reps.ci_rel == 0.02);
    assert_int_equal(s.repetitions, 3); /* the plan starts each cell with min */
    sm_spec_fini(&s);
}

static void test_spec_repetitions_auto_and_missing_members_take_the_defaults(void **state)
{
    (void)state;
    sm_spec s;
    spec_fixture_decode_ok(SPEC(",'repetitions':'auto'"), &s);
    assert_true(s.adaptive);
    assert_int_equal(s.reps.min, 5);
    assert_int_equal(s.reps.max, 30);
    assert_true(s.reps.ci_rel == 0.05);
    assert_int_equal(s.repetitions, 5);
    sm_spec_fini(&s);
    spec_fixture_decode_ok(SPEC(",'repetitions':{}"), &s);
    assert_true(s.adaptive);
    assert_int_equal(s.reps.min, 5);
    assert_int_equal(s.reps.max, 30);
    sm_spec_fini(&s);
    /* A default gives way to the bound given. */
    spec_fixture_decode_ok(SPEC(",'repetitions':{'min':40}"), &s);
    assert_int_equal(s.reps.min, 40);
    assert_int_equal(s.reps.max, 40);
    sm_spec_fini(&s);
    spec_fixture_decode_ok(SPEC(",'repetitions':{'max':3}"), &s);
    assert_int_equal(s.reps.min, 3);
    assert_int_equal(s.reps.max, 3);
    sm_spec_fini(&s);
}

static void test_spec_repetitions_object_bounds_name_the_member(void **state)
{
    (void)state;
    assert_spec_error(SPEC(",'repetitions':{'min':0}"), SM_EINVAL,
                      "repetitions.min: 0 is below the minimum 1", "repetitions.min");
    assert_spec_error(SPEC(",'repetitions':{'min':101}"), SM_EINVAL,
                      "repetitions.min: 101 is above the maximum 100", "repetitions.min");
    assert_spec_error(SPEC(",'repetitions':{'min':2.5}"), SM_EPARSE, "repetitions.min",
                      "repetitions.min");
    assert_spec_error(SPEC(",'repetitions':{'max':0}"), SM_EINVAL,
                      "repetitions.max: 0 is below the minimum 1", "repetitions.max");
    assert_spec_error(SPEC(",'repetitions':{'max':101}"), SM_EINVAL,
                      "repetitions.max: 101 is above the maximum 100", "repetitions.max");
    assert_spec_error(SPEC(",'repetitions':{'min':9,'max':8}"), SM_EINVAL,
                      "repetitions.max: 8 is below repetitions.min 9", "repetitions.max");
    assert_spec_error(SPEC(",'repetitions':{'ci_rel':0}"), SM_EINVAL,
                      "repetitions.ci_rel: 0 is not between 0 and 1", "repetitions.ci_rel");
    assert_spec_error(SPEC(",'repetitions':{'ci_rel':1}"), SM_EINVAL,
                      "repetitions.ci_rel: 1 is not between 0 and 1", "repetitions.ci_rel");
    assert_spec_error(SPEC(",'repetitions':{'ci_rel':-0.1}"), SM_EINVAL, "repetitions.ci_rel",
                      "repetitions.ci_rel");
    assert_spec_error(SPEC(",'repetitions':{'ci_rel':'5%'}"), SM_EPARSE,
                      "repetitions.ci_rel: expected a number", "repetitions.ci_rel");
    assert_spec_error(SPEC(",'repetitions':{'mn':3}"), SM_EPARSE, "unknown field 'mn'",
                      "repetitions.mn");
    assert_spec_error(SPEC(",'repetitions':'fast'"), SM_EPARSE, "repetitions: unknown value 'fast'",
                      "repetitions");
    assert_spec_error(SPEC(",'repetitions':[5]"), SM_EPARSE, "repetitions: expected a number",
                      "repetitions");
}

static void test_spec_remeasure_defaults_to_as_many_again_as_asked(void **state)
{
    (void)state;
    sm_spec s;
    spec_fixture_decode_ok(SPEC(""), &s);
    assert_int_equal(s.remeasure, 5);
    assert_false(s.remeasure_given);
    assert_true(sm_spec_adds_rounds(&s)); /* on by default, fixed count or not */
    sm_spec_fini(&s);
    spec_fixture_decode_ok(SPEC(",'repetitions':7"), &s);
    assert_int_equal(s.remeasure, 7);
    sm_reps_rule r = sm_spec_rule(&s);
    assert_int_equal(r.min, 7);
    assert_int_equal(r.max, 7);
    assert_true(r.ci_rel == 0); /* a fixed count: no CI to reach */
    assert_int_equal(r.remeasure, 7);
    assert_int_equal(sm_reps_check(&r, SM_SPEC_REPS_MAX), 0);
    sm_spec_fini(&s);
    /* Adaptive: as many again as max, whatever min is. */
    spec_fixture_decode_ok(SPEC(",'repetitions':{'min':3,'max':8,'ci_rel':0.02}"), &s);
    assert_int_equal(s.remeasure, 8);
    r = sm_spec_rule(&s);
    assert_int_equal(r.min, 3);
    assert_int_equal(r.max, 8);
    assert_true(r.ci_rel == 0.02);
    assert_int_equal(r.remeasure, 8);
    sm_spec_fini(&s);
    spec_fixture_decode_ok(SPEC(",'repetitions':'auto'"), &s);
    assert_int_equal(s.remeasure, 30);
    sm_spec_fini(&s);
}

static void test_spec_remeasure_given_and_zero_turns_it_off(void **state)
{
    (void)state;
    sm_spec s;
    spec_fixture_decode_ok(SPEC(",'repetitions':3,'remeasure':12"), &s);
    assert_int_equal(s.remeasure, 12);
    assert_true(s.remeasure_given);
    assert_int_equal(sm_spec_rule(&s).remeasure, 12);
    sm_spec_fini(&s);
    spec_fixture_decode_ok(SPEC(",'remeasure':0"), &s);
    assert_int_equal(s.remeasure, 0);
    assert_true(s.remeasure_given);
    assert_false(sm_spec_adds_rounds(&s));
    sm_spec_fini(&s);
    /* The order of the members does not matter: the default is not set over a given one. */
    spec_fixture_decode_ok("{\"remeasure\":0,\"repetitions\":{\"max\":9},\"name\":\"s\","
                           "\"tests\":[{\"workload\":\"stream\"}]}",
                           &s);
    assert_int_equal(s.remeasure, 0);
    assert_true(sm_spec_adds_rounds(&s)); /* adaptive still adds rounds */
    sm_spec_fini(&s);
}

static void test_spec_remeasure_out_of_bounds_names_the_field(void **state)
{
    (void)state;
    assert_spec_error(SPEC(",'remeasure':-1"), SM_EINVAL, "remeasure: -1 is below the minimum 0",
                      "remeasure");
    assert_spec_error(SPEC(",'remeasure':101"), SM_EINVAL,
                      "remeasure: 101 is above the maximum 100", "remeasure");
    assert_spec_error(SPEC(",'remeasure':1.5"), SM_EPARSE, "remeasure: 1.5 is not an integer",
                      "remeasure");
    assert_spec_error(SPEC(",'remeasure':true"), SM_EPARSE, "remeasure: expected an integer",
                      "remeasure");
}

/* An explicit true is the user's word too: hosts of one machine then run side by side. */
static void test_spec_remembers_that_parallel_was_given(void **state)
{
    (void)state;
    sm_spec s;
    spec_fixture_decode_ok(SPEC(",'parallel':true"), &s);
    assert_true(s.parallel);
    assert_true(s.parallel_given);
    sm_spec_fini(&s);
    /* A preset names no "parallel": a run of it is the coordinator's to arrange. */
    for (const sm_preset *p = sm_presets(); p->name != NULL; p++) {
        assert_int_equal(sm_spec_decode(p->spec_json, strlen(p->spec_json), &s, NULL), 0);
        assert_false(s.parallel_given);
        sm_spec_fini(&s);
    }
}

static void test_spec_cartesian_product_varies_the_last_field_fastest(void **state)
{
    (void)state;
    sm_spec s;
    spec_fixture_decode_ok(
        "{'name':'m','tests':[{'workload':'stream','msg_size':[1,2,3],'count':[10,20]},"
        "{'workload':'connect','count':7}]}",
        &s);
    assert_int_equal(s.n_tests, 2);
    assert_int_equal(s.tests[0].n_variants, 6);
    static const uint32_t sizes[] = {1, 1, 2, 2, 3, 3};
    static const uint64_t counts[] = {10, 20, 10, 20, 10, 20};
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(s.tests[0].variants[i].msg_size, sizes[i]);
        assert_int_equal(s.tests[0].variants[i].count, counts[i]);
    }
    assert_int_equal(s.tests[1].n_variants, 1);
    assert_int_equal(s.tests[1].variants[0].workload, SM_WL_CONNECT);
    assert_int_equal(s.tests[1].variants[0].count, 7);
    sm_spec_fini(&s);
}

static void test_spec_tcp_options_are_forced_off_for_unix(void **state)
{
    (void)state;
    sm_spec s;
    spec_fixture_decode_ok(
        "{'name':'u','tests':[{'workload':'rr','transport':'unix','nodelay':true},"
        "{'workload':'stream','transport':['tcp','unix'],'cork':true}]}",
        &s);
    assert_int_equal(s.tests[0].n_variants, 1);
    assert_int_equal(s.tests[0].variants[0].transport, SM_TR_UNIX);
    assert_false(s.tests[0].variants[0].nodelay);
    assert_int_equal(s.tests[1].n_variants, 2);
    assert_true(s.tests[1].variants[0].cork);
    assert_int_equal(s.tests[1].variants[1].transport, SM_TR_UNIX);
    assert_false(s.tests[1].variants[1].cork);
    sm_spec_fini(&s);
}

static void test_spec_duplicate_variants_are_dropped(void **state)
{
    (void)state;
    sm_spec s;
    spec_fixture_decode_ok("{'name':'d','tests':[{'workload':'stream','msg_size':[128,4096,128],"
                           "'transport':['unix','unix']}]}",
                           &s);
    assert_int_equal(s.tests[0].n_variants, 2);
    assert_int_equal(s.tests[0].variants[0].msg_size, 128);
    assert_int_equal(s.tests[0].variants[1].msg_size, 4096);
    sm_spec_fini(&s);
}

static void test_spec_64_variants_are_accepted(void **state)
{
    (void)state;
    sm_spec s;
    spec_fixture_decode_ok("{'name':'b','tests':[{'workload':'stream','msg_size':[1,2,3,4,5,6,7,8],"
                           "'count':[1,2,3,4,5,6,7,8]}]}",
                           &s);
    assert_int_equal(s.tests[0].n_variants, SM_SPEC_VARIANTS_MAX);
    assert_int_equal(s.tests[0].variants[63].msg_size, 8);
    assert_int_equal(s.tests[0].variants[63].count, 8);
    sm_spec_fini(&s);
}

static void test_spec_host_and_pair_forms_are_read(void **state)
{
    (void)state;
    sm_spec s;
    spec_fixture_decode_ok(
        SPEC(",'hosts':['h1','h2','h3'],'pairs':[['h1','h2'],['h2','h1'],['h3','h1']]"), &s);
    assert_int_equal(s.hosts, SM_HOSTS_LIST);
    assert_int_equal(s.n_host_names, 3);
    assert_string_equal(s.host_names[2], "h3");
    assert_int_equal(s.pairs, SM_PAIRS_LIST);
    assert_int_equal(s.n_pairs, 3);
    assert_string_equal(s.pair_list[1][0], "h2");
    assert_string_equal(s.pair_list[1][1], "h1");
    assert_string_equal(s.pair_list[2][0], "h3");
    sm_spec_fini(&s);

    spec_fixture_decode_ok(SPEC(",'hosts':{'label':'rack=2'},'pairs':{'star':'h1'}"), &s);
    assert_int_equal(s.hosts, SM_HOSTS_LABEL);
    assert_string_equal(s.label_key, "rack");
    assert_string_equal(s.label_value, "2");
    assert_int_equal(s.pairs, SM_PAIRS_STAR);
    assert_string_equal(s.star, "h1");
    sm_spec_fini(&s);

    spec_fixture_decode_ok(SPEC(",'hosts':'all','pairs':'ring'"), &s);
    assert_int_equal(s.hosts, SM_HOSTS_ALL);
    assert_int_equal(s.pairs, SM_PAIRS_RING);
    sm_spec_fini(&s);
}

static void test_spec_has_scope_looks_at_every_variant(void **state)
{
    (void)state;
    sm_spec s;
    spec_fixture_decode_ok(SPEC(""), &s);
    assert_true(sm_spec_has_scope(&s, SM_SCOPE_LOCAL));
    assert_false(sm_spec_has_scope(&s, SM_SCOPE_PAIR));
    sm_spec_fini(&s);
    spec_fixture_decode_ok(
        "{'name':'p','pairs':'mesh','tests':[{'workload':'rr','scope':['local','pair']}]}", &s);
    assert_true(sm_spec_has_scope(&s, SM_SCOPE_LOCAL));
    assert_true(sm_spec_has_scope(&s, SM_SCOPE_PAIR));
    sm_spec_fini(&s);
    assert_false(sm_spec_has_scope(&s, SM_SCOPE_LOCAL));
}

/* sm_spec_fini leaves a zeroed spec (its lists freed, their pointers and counts cleared), so a
 * second fini, or a fini of a spec never decoded, frees nothing twice; NULL is ignored. */
static void test_spec_fini_zeroes_the_spec_so_a_second_fini_does_nothing(void **state)
{
    (void)state;
    sm_spec zero, s;
    memset(&zero, 0, sizeof zero);
    spec_fixture_decode_ok(
        "{'name':'m','hosts':['h1','h2'],'tests':[{'workload':'stream','count':[1,2]}]}", &s);
    assert_non_null(s.tests);
    assert_non_null(s.host_names);
    assert_int_equal(s.n_host_names, 2);
    sm_spec_fini(&s);
    assert_memory_equal(&s, &zero, sizeof s);
    sm_spec_fini(&s);
    assert_memory_equal(&s, &zero, sizeof s);
    sm_spec_fini(NULL);
}

static void test_spec_null_text_clears_a_stale_field_and_null_err_is_allowed(void **state)
{
    (void)state;
    sm_spec s;
    sm_error err;
    sm_error_clear(&err);
    sm_error_field(&err, "junk");
    assert_int_equal(sm_spec_decode(NULL, 0, &s, &err), SM_EINVAL);
    assert_string_equal(err.field, "");
    assert_null(s.tests);
    char *json = spec_fixture_dq(SPEC(",'warmup':11"));
    assert_int_equal(sm_spec_decode(json, strlen(json), &s, NULL), SM_EINVAL);
    assert_int_equal(sm_spec_decode(json, strlen(json), &s, &err), SM_EINVAL);
    assert_string_equal(err.field, "warmup");
    /* A field path longer than the member is cut, still a string. */
    char long_name[2 * SM_ERR_FIELD_MAX];
    memset(long_name, 'k', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    sm_error_field(&err, "%s", long_name);
    assert_int_equal(strlen(err.field), SM_ERR_FIELD_MAX - 1);
    free(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_seed_preset_gives_tcp_tcp_nodelay_unix_in_order),
        cmocka_unit_test(test_spec_defaults_fill_unset_fields),
        cmocka_unit_test(test_spec_top_level_fields_are_read),
        cmocka_unit_test(test_spec_remembers_that_parallel_was_given),
        cmocka_unit_test(test_spec_cartesian_product_varies_the_last_field_fastest),
        cmocka_unit_test(test_spec_tcp_options_are_forced_off_for_unix),
        cmocka_unit_test(test_spec_duplicate_variants_are_dropped),
        cmocka_unit_test(test_spec_64_variants_are_accepted),
        cmocka_unit_test(test_spec_host_and_pair_forms_are_read),
        cmocka_unit_test(test_spec_has_scope_looks_at_every_variant),
        cmocka_unit_test(test_spec_fini_zeroes_the_spec_so_a_second_fini_does_nothing),
        cmocka_unit_test(test_spec_null_text_clears_a_stale_field_and_null_err_is_allowed),
        cmocka_unit_test(test_spec_integer_repetitions_stay_fixed),
        cmocka_unit_test(test_spec_repetitions_object_is_adaptive_starting_at_min),
        cmocka_unit_test(test_spec_repetitions_auto_and_missing_members_take_the_defaults),
        cmocka_unit_test(test_spec_repetitions_object_bounds_name_the_member),
        cmocka_unit_test(test_spec_remeasure_defaults_to_as_many_again_as_asked),
        cmocka_unit_test(test_spec_remeasure_given_and_zero_turns_it_off),
        cmocka_unit_test(test_spec_remeasure_out_of_bounds_names_the_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
