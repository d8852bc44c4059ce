/* Unit tests of coordinator/model/spec: run-spec decoding, matrix expansion, validation errors,
 * presets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coordinator/model/spec.h"

/* Specs are written with single quotes, which read better in C strings; this swaps them for
 * double quotes. The caller frees the copy. */
static char *dq(const char *text)
{
    char *s = strdup(text);
    assert_non_null(s);
    for (char *p = s; *p != '\0'; p++)
        if (*p == '\'')
            *p = '"';
    return s;
}

static int decode(const char *squoted, sm_spec *out, sm_error *err)
{
    char *json = dq(squoted);
    int rc = sm_spec_decode(json, strlen(json), out, err);
    free(json);
    return rc;
}

static void decode_ok(const char *squoted, sm_spec *out)
{
    sm_error err;
    sm_error_clear(&err);
    memset(err.field, 'x', sizeof err.field - 1);
    if (decode(squoted, out, &err) != 0)
        fail_msg("%s\n%s (field '%s')", squoted, err.msg, err.field);
    assert_string_equal(err.field, "");
}

/* Decoding must fail with `code`, a reason containing `part` and the field path `field`, and
 * leave *out empty. */
#define assert_spec_error(json, code, part, field)                                                 \
    check_spec_error((json), (code), (part), (field), __FILE__, __LINE__)

static void check_spec_error(const char *squoted, int code, const char *part, const char *field,
                             const char *file, int line)
{
    sm_spec s;
    sm_error err;
    memset(&s, 0xff, sizeof s);
    sm_error_clear(&err);
    memset(err.field, 'x', sizeof err.field - 1);
    int rc = decode(squoted, &s, &err);
    const char *got = err.field;
    if (rc != code || err.code != code || strstr(err.msg, part) == NULL ||
        strcmp(got, field) != 0) {
        print_error("%s\nrc %d (want %d), code %d, msg \"%s\" (want \"%s\"), field \"%s\" (want "
                    "\"%s\")\n",
                    squoted, rc, code, err.code, err.msg, part, got, field);
        _fail(file, line);
    }
    _assert_true(s.tests == NULL && s.n_tests == 0 && s.host_names == NULL && s.pair_list == NULL &&
                     s.name[0] == '\0',
                 "empty spec", file, line);
}

#define T_STREAM   "{'workload':'stream'}"
#define SPEC(rest) "{'name':'s','tests':[" T_STREAM "]" rest "}"

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
    decode_ok(SPEC(""), &s);
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
    decode_ok(SPEC(",'repetitions':100,'warmup':0,'parallel':false"), &s);
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
    decode_ok(SPEC(",'repetitions':7"), &s);
    assert_int_equal(s.repetitions, 7);
    assert_false(s.adaptive);
    sm_spec_fini(&s);
    decode_ok(SPEC(""), &s);
    assert_false(s.adaptive);
    sm_spec_fini(&s);
}

static void test_spec_repetitions_object_is_adaptive_starting_at_min(void **state)
{
    (void)state;
    sm_spec s;
    decode_ok(SPEC(",'repetitions':{'min':3,'max':8,'ci_rel':0.02}"), &s);
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
    decode_ok(SPEC(",'repetitions':'auto'"), &s);
    assert_true(s.adaptive);
    assert_int_equal(s.reps.min, 5);
    assert_int_equal(s.reps.max, 30);
    assert_true(s.reps.ci_rel == 0.05);
    assert_int_equal(s.repetitions, 5);
    sm_spec_fini(&s);
    decode_ok(SPEC(",'repetitions':{}"), &s);
    assert_true(s.adaptive);
    assert_int_equal(s.reps.min, 5);
    assert_int_equal(s.reps.max, 30);
    sm_spec_fini(&s);
    /* A default gives way to the bound given. */
    decode_ok(SPEC(",'repetitions':{'min':40}"), &s);
    assert_int_equal(s.reps.min, 40);
    assert_int_equal(s.reps.max, 40);
    sm_spec_fini(&s);
    decode_ok(SPEC(",'repetitions':{'max':3}"), &s);
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
    decode_ok(SPEC(""), &s);
    assert_int_equal(s.remeasure, 5);
    assert_false(s.remeasure_given);
    assert_true(sm_spec_adds_rounds(&s)); /* on by default, fixed count or not */
    sm_spec_fini(&s);
    decode_ok(SPEC(",'repetitions':7"), &s);
    assert_int_equal(s.remeasure, 7);
    sm_reps_rule r = sm_spec_rule(&s);
    assert_int_equal(r.min, 7);
    assert_int_equal(r.max, 7);
    assert_true(r.ci_rel == 0); /* a fixed count: no CI to reach */
    assert_int_equal(r.remeasure, 7);
    assert_int_equal(sm_reps_check(&r, SM_SPEC_REPS_MAX), 0);
    sm_spec_fini(&s);
    /* Adaptive: as many again as max, whatever min is. */
    decode_ok(SPEC(",'repetitions':{'min':3,'max':8,'ci_rel':0.02}"), &s);
    assert_int_equal(s.remeasure, 8);
    r = sm_spec_rule(&s);
    assert_int_equal(r.min, 3);
    assert_int_equal(r.max, 8);
    assert_true(r.ci_rel == 0.02);
    assert_int_equal(r.remeasure, 8);
    sm_spec_fini(&s);
    decode_ok(SPEC(",'repetitions':'auto'"), &s);
    assert_int_equal(s.remeasure, 30);
    sm_spec_fini(&s);
}

static void test_spec_remeasure_given_and_zero_turns_it_off(void **state)
{
    (void)state;
    sm_spec s;
    decode_ok(SPEC(",'repetitions':3,'remeasure':12"), &s);
    assert_int_equal(s.remeasure, 12);
    assert_true(s.remeasure_given);
    assert_int_equal(sm_spec_rule(&s).remeasure, 12);
    sm_spec_fini(&s);
    decode_ok(SPEC(",'remeasure':0"), &s);
    assert_int_equal(s.remeasure, 0);
    assert_true(s.remeasure_given);
    assert_false(sm_spec_adds_rounds(&s));
    sm_spec_fini(&s);
    /* The order of the members does not matter: the default is not set over a given one. */
    decode_ok("{\"remeasure\":0,\"repetitions\":{\"max\":9},\"name\":\"s\","
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
    decode_ok(SPEC(",'parallel':true"), &s);
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
    decode_ok("{'name':'m','tests':[{'workload':'stream','msg_size':[1,2,3],'count':[10,20]},"
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
    decode_ok("{'name':'u','tests':[{'workload':'rr','transport':'unix','nodelay':true},"
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
    decode_ok("{'name':'d','tests':[{'workload':'stream','msg_size':[128,4096,128],"
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
    decode_ok("{'name':'b','tests':[{'workload':'stream','msg_size':[1,2,3,4,5,6,7,8],"
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
    decode_ok(SPEC(",'hosts':['h1','h2','h3'],'pairs':[['h1','h2'],['h2','h1'],['h3','h1']]"), &s);
    assert_int_equal(s.hosts, SM_HOSTS_LIST);
    assert_int_equal(s.n_host_names, 3);
    assert_string_equal(s.host_names[2], "h3");
    assert_int_equal(s.pairs, SM_PAIRS_LIST);
    assert_int_equal(s.n_pairs, 3);
    assert_string_equal(s.pair_list[1][0], "h2");
    assert_string_equal(s.pair_list[1][1], "h1");
    assert_string_equal(s.pair_list[2][0], "h3");
    sm_spec_fini(&s);

    decode_ok(SPEC(",'hosts':{'label':'rack=2'},'pairs':{'star':'h1'}"), &s);
    assert_int_equal(s.hosts, SM_HOSTS_LABEL);
    assert_string_equal(s.label_key, "rack");
    assert_string_equal(s.label_value, "2");
    assert_int_equal(s.pairs, SM_PAIRS_STAR);
    assert_string_equal(s.star, "h1");
    sm_spec_fini(&s);

    decode_ok(SPEC(",'hosts':'all','pairs':'ring'"), &s);
    assert_int_equal(s.hosts, SM_HOSTS_ALL);
    assert_int_equal(s.pairs, SM_PAIRS_RING);
    sm_spec_fini(&s);
}

static void test_spec_has_scope_looks_at_every_variant(void **state)
{
    (void)state;
    sm_spec s;
    decode_ok(SPEC(""), &s);
    assert_true(sm_spec_has_scope(&s, SM_SCOPE_LOCAL));
    assert_false(sm_spec_has_scope(&s, SM_SCOPE_PAIR));
    sm_spec_fini(&s);
    decode_ok("{'name':'p','pairs':'mesh','tests':[{'workload':'rr','scope':['local','pair']}]}",
              &s);
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
    decode_ok("{'name':'m','hosts':['h1','h2'],'tests':[{'workload':'stream','count':[1,2]}]}", &s);
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
    char *json = dq(SPEC(",'warmup':11"));
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

/* ---- presets ---- */

static void test_spec_every_preset_decodes(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        size_t n_tests;
        size_t variants[3];
    } want[] = {
        {"seed-tcp-unix", 1, {3}},
        {"seed-http", 2, {3, 12}},
        {"quick", 3, {2, 2, 2}},
        {"full", 3, {9, 4, 2}},
    };
    const sm_preset *p = sm_presets();
    size_t n = 0;
    for (; p[n].name != NULL; n++) {
        assert_true(n < sizeof want / sizeof want[0]);
        assert_string_equal(p[n].name, want[n].name);
        assert_non_null(p[n].description);
        assert_null(strchr(p[n].description, '\n'));
        assert_ptr_equal(sm_preset_find(p[n].name), &p[n]);
        sm_spec s;
        sm_error err;
        if (sm_spec_decode(p[n].spec_json, strlen(p[n].spec_json), &s, &err) != 0)
            fail_msg("%s: %s (%s)", p[n].name, err.msg, err.field);
        assert_string_equal(s.name, p[n].name);
        assert_int_equal(s.hosts, SM_HOSTS_ALL);
        assert_false(sm_spec_has_scope(&s, SM_SCOPE_PAIR));
        assert_int_equal(s.n_tests, want[n].n_tests);
        for (size_t i = 0; i < s.n_tests; i++)
            assert_int_equal(s.tests[i].n_variants, want[n].variants[i]);
        sm_spec_fini(&s);
    }
    assert_int_equal(n, 4);
    assert_null(sm_preset_find("seed-udp"));
    assert_null(sm_preset_find(NULL));
}

static void test_spec_seed_http_alternates_the_client_models(void **state)
{
    (void)state;
    sm_spec s;
    sm_error err;
    const sm_preset *h = sm_preset_find("seed-http");
    assert_int_equal(sm_spec_decode(h->spec_json, strlen(h->spec_json), &s, &err), 0);
    /* The 2009 test itself: the seed's body, eleven rounds, one connection, plain HTTP. */
    for (size_t i = 0; i < 3; i++) {
        const sm_params *v = &s.tests[0].variants[i];
        assert_int_equal(v->workload, SM_WL_HTTP);
        assert_int_equal(v->client, (sm_http_client)i);
        assert_int_equal(v->connections, 1);
        assert_false(v->tls);
        assert_int_equal(v->bytes, 51711600);
        assert_int_equal(v->repeat, 11);
        assert_int_equal(v->time_limit_ms, 120000);
    }
    /* The follow-ups: client, then connections, then tls (the last axis varies fastest), on
     * a quarter of the body, so that 4 connections x 5 rounds of it with TLS end in time on a
     * host 100x slower than the machine the preset was sized on. */
    for (size_t i = 0; i < 12; i++) {
        const sm_params *v = &s.tests[1].variants[i];
        assert_int_equal(v->workload, SM_WL_HTTP);
        assert_int_equal(v->client, (sm_http_client)(i / 4));
        assert_int_equal(v->connections, (i / 2) % 2 ? 4 : 1);
        assert_int_equal(v->tls, i % 2 == 1);
        assert_int_equal(v->bytes, 51711600 / 4);
        assert_int_equal(v->repeat, 5);
        assert_int_equal(v->time_limit_ms, 120000);
        assert_true((uint64_t)v->connections * v->repeat * v->bytes <= 5ull * 51711600);
    }
    sm_spec_fini(&s);
}

static void test_spec_quick_and_full_presets_use_the_documented_sizes(void **state)
{
    (void)state;
    sm_spec s;
    sm_error err;
    const sm_preset *q = sm_preset_find("quick");
    assert_int_equal(sm_spec_decode(q->spec_json, strlen(q->spec_json), &s, &err), 0);
    assert_int_equal(s.repetitions, 3);
    assert_int_equal(s.warmup, 1);
    assert_int_equal(s.tests[0].variants[1].msg_size, 131072);
    assert_int_equal(s.tests[0].variants[1].count, 256);
    assert_int_equal(s.tests[1].variants[0].workload, SM_WL_RR);
    assert_int_equal(s.tests[1].variants[0].duration_ms, 1000);
    assert_int_equal(s.tests[2].variants[1].transport, SM_TR_UNIX);
    assert_int_equal(s.tests[2].variants[1].count, 500);
    sm_spec_fini(&s);

    const sm_preset *f = sm_preset_find("full");
    assert_int_equal(sm_spec_decode(f->spec_json, strlen(f->spec_json), &s, &err), 0);
    assert_int_equal(s.repetitions, 5);
    /* tcp: 3 sizes x nodelay off/on, then unix: 3 sizes. */
    static const uint32_t sizes[] = {128, 128, 4096, 4096, 131072, 131072, 128, 4096, 131072};
    for (size_t i = 0; i < 9; i++) {
        assert_int_equal(s.tests[0].variants[i].msg_size, sizes[i]);
        assert_int_equal(s.tests[0].variants[i].bytes, 64ull << 20);
        assert_int_equal(s.tests[0].variants[i].nodelay, i < 6 && i % 2 == 1);
        assert_int_equal(s.tests[0].variants[i].transport, i < 6 ? SM_TR_TCP : SM_TR_UNIX);
    }
    assert_int_equal(s.tests[1].variants[3].req_size, 1024);
    assert_int_equal(s.tests[1].variants[3].duration_ms, 2000);
    assert_int_equal(s.tests[2].variants[0].count, 2000);
    sm_spec_fini(&s);
}

static void test_spec_presets_encode_lists_every_preset_with_its_spec(void **state)
{
    (void)state;
    char *text = sm_presets_encode();
    assert_non_null(text);
    assert_true(strncmp(text, "{\"presets\":[{\"name\":\"seed-tcp-unix\",\"description\":", 49) ==
                0);
    assert_non_null(strstr(text, "\"spec\":{\"name\":\"seed-tcp-unix\",\"hosts\":\"all\""));
    assert_non_null(strstr(text, "\"name\":\"quick\""));
    assert_non_null(strstr(text, "\"spec\":{\"name\":\"full\""));
    assert_non_null(strstr(text, "\"nodelay\":[false,true]"));
    assert_non_null(strstr(text, "\"msg_size\":[128,4096,131072]"));
    assert_non_null(strstr(text, sm_preset_find("quick")->description));
    /* Each spec comes back as an object the decoder accepts: cut it out and decode it. */
    for (const sm_preset *p = sm_presets(); p->name != NULL; p++) {
        char key[96];
        snprintf(key, sizeof key, "\"spec\":{\"name\":\"%s\"", p->name);
        const char *at = strstr(text, key);
        assert_non_null(at);
        at += strlen("\"spec\":");
        size_t len = strlen(p->spec_json);
        assert_memory_equal(at, p->spec_json, len);
        sm_spec s;
        sm_error err;
        assert_int_equal(sm_spec_decode(at, len, &s, &err), 0);
        sm_spec_fini(&s);
    }
    free(text);
}

/* ---- validation errors ---- */

static void test_spec_top_level_key_errors(void **state)
{
    (void)state;
    assert_spec_error(SPEC(",'colour':'red'"), SM_EPARSE, "unknown field 'colour'", "colour");
    assert_spec_error(SPEC(",'warmup':1,'warmup':2"), SM_EPARSE, "duplicate field 'warmup'",
                      "warmup");
    assert_spec_error("{'tests':[" T_STREAM "]}", SM_EPARSE, "missing field 'name'", "name");
    assert_spec_error("{'name':'s'}", SM_EPARSE, "missing field 'tests'", "tests");
    assert_spec_error("{'name':'s',", SM_EPARSE, "invalid JSON", "");
    assert_spec_error("['name']", SM_EPARSE, "expected a JSON object", "");
}

static void test_spec_name_errors(void **state)
{
    (void)state;
    assert_spec_error("{'name':'a b','tests':[" T_STREAM "]}", SM_EINVAL, "name: 'a b'", "name");
    assert_spec_error("{'name':'','tests':[" T_STREAM "]}", SM_EINVAL, "name", "name");
    assert_spec_error("{'name':3,'tests':[" T_STREAM "]}", SM_EPARSE, "name", "name");
    char json[256];
    snprintf(json, sizeof json, "{'name':'%065d','tests':[" T_STREAM "]}", 0);
    assert_spec_error(json, SM_EINVAL, "name", "name");
    snprintf(json, sizeof json, "{'name':'%064d','tests':[" T_STREAM "]}", 0);
    sm_spec s;
    decode_ok(json, &s);
    sm_spec_fini(&s);
}

static void test_spec_hosts_errors(void **state)
{
    (void)state;
    assert_spec_error(SPEC(",'hosts':'some'"), SM_EINVAL, "hosts: unknown value 'some'", "hosts");
    assert_spec_error(SPEC(",'hosts':5"), SM_EPARSE, "hosts", "hosts");
    assert_spec_error(SPEC(",'hosts':[]"), SM_EINVAL, "hosts", "hosts");
    assert_spec_error(SPEC(",'hosts':['a','b c']"), SM_EINVAL, "hosts[1]: 'b c'", "hosts[1]");
    assert_spec_error(SPEC(",'hosts':['a',3]"), SM_EPARSE, "hosts[1]", "hosts[1]");
    assert_spec_error(SPEC(",'hosts':['a','b','a']"), SM_EINVAL, "hosts[2]: 'a' is also hosts[0]",
                      "hosts[2]");
}

static void test_spec_hosts_has_at_most_1024_names(void **state)
{
    (void)state;
    size_t cap = 32 + 10 * (SM_SPEC_HOSTS_MAX + 1) + 64;
    char *json = malloc(cap);
    assert_non_null(json);
    size_t n = (size_t)snprintf(json, cap, "{'name':'s','tests':[" T_STREAM "],'hosts':[");
    for (size_t i = 0; i <= SM_SPEC_HOSTS_MAX; i++)
        n += (size_t)snprintf(json + n, cap - n, "%s'h%zu'", i ? "," : "", i);
    snprintf(json + n, cap - n, "]}");
    assert_spec_error(json, SM_EINVAL, "hosts: 1025 names is above the maximum 1024", "hosts");
    /* Dropping the last name gives exactly the maximum. */
    char *last = strrchr(json, ',');
    snprintf(last, cap - (size_t)(last - json), "]}");
    sm_spec s;
    decode_ok(json, &s);
    assert_int_equal(s.n_host_names, SM_SPEC_HOSTS_MAX);
    sm_spec_fini(&s);
    free(json);
}

static void test_spec_label_errors(void **state)
{
    (void)state;
    assert_spec_error(SPEC(",'hosts':{'label':'rack'}"), SM_EINVAL, "hosts.label", "hosts.label");
    assert_spec_error(SPEC(",'hosts':{'label':''}"), SM_EINVAL, "hosts.label", "hosts.label");
    assert_spec_error(SPEC(",'hosts':{'label':'a=1,b=2'}"), SM_EINVAL, "hosts.label",
                      "hosts.label");
    assert_spec_error(SPEC(",'hosts':{'label':'bad key=1'}"), SM_EINVAL, "hosts.label",
                      "hosts.label");
    assert_spec_error(SPEC(",'hosts':{'label':2}"), SM_EPARSE, "hosts.label", "hosts.label");
    assert_spec_error(SPEC(",'hosts':{'labels':'rack=2'}"), SM_EPARSE, "unknown field 'labels'",
                      "hosts.labels");
    assert_spec_error(SPEC(",'hosts':{}"), SM_EPARSE, "missing field 'label'", "hosts.label");
}

static void test_spec_pairs_errors(void **state)
{
    (void)state;
    assert_spec_error(SPEC(",'pairs':'full'"), SM_EINVAL, "pairs: unknown value 'full'", "pairs");
    assert_spec_error(SPEC(",'pairs':3"), SM_EPARSE, "pairs", "pairs");
    assert_spec_error(SPEC(",'pairs':{}"), SM_EPARSE, "missing field 'star'", "pairs.star");
    assert_spec_error(SPEC(",'pairs':{'star':'h1','hub':'h2'}"), SM_EPARSE, "unknown field 'hub'",
                      "pairs.hub");
    assert_spec_error(SPEC(",'pairs':{'star':''}"), SM_EINVAL, "pairs.star", "pairs.star");
    assert_spec_error(SPEC(",'hosts':['a','b'],'pairs':{'star':'z'}"), SM_EINVAL,
                      "pairs.star: 'z' is not in hosts", "pairs.star");
    assert_spec_error(SPEC(",'pairs':[]"), SM_EINVAL, "pairs", "pairs");
    assert_spec_error(SPEC(",'pairs':[['a']]"), SM_EPARSE, "pairs[0]: expected [client, server]",
                      "pairs[0]");
    assert_spec_error(SPEC(",'pairs':['a','b']"), SM_EPARSE, "pairs[0]", "pairs[0]");
    assert_spec_error(SPEC(",'pairs':[['a','a']]"), SM_EINVAL, "pairs[0]: 'a'", "pairs[0]");
    assert_spec_error(SPEC(",'pairs':[['a','b'],['b','a'],['a','b']]"), SM_EINVAL,
                      "pairs[2]: same as pairs[0]", "pairs[2]");
    assert_spec_error(SPEC(",'pairs':[['a','b'],['a','b c']]"), SM_EINVAL, "pairs[1][1]",
                      "pairs[1][1]");
    assert_spec_error(SPEC(",'hosts':['a','b'],'pairs':[['a','b'],['a','c']]"), SM_EINVAL,
                      "pairs[1][1]: 'c' is not in hosts", "pairs[1][1]");
}

static void test_spec_bound_errors(void **state)
{
    (void)state;
    assert_spec_error(SPEC(",'repetitions':0"), SM_EINVAL, "repetitions: 0 is below the minimum 1",
                      "repetitions");
    assert_spec_error(SPEC(",'repetitions':101"), SM_EINVAL,
                      "repetitions: 101 is above the maximum 100", "repetitions");
    assert_spec_error(SPEC(",'repetitions':2.5"), SM_EPARSE, "repetitions", "repetitions");
    assert_spec_error(SPEC(",'repetitions':'5'"), SM_EPARSE, "repetitions", "repetitions");
    assert_spec_error(SPEC(",'warmup':11"), SM_EINVAL, "warmup: 11 is above the maximum 10",
                      "warmup");
    assert_spec_error(SPEC(",'warmup':-1"), SM_EINVAL, "warmup", "warmup");
    assert_spec_error(SPEC(",'parallel':'yes'"), SM_EPARSE, "parallel", "parallel");
}

static void test_spec_tests_list_errors(void **state)
{
    (void)state;
    assert_spec_error("{'name':'s','tests':[]}", SM_EINVAL, "tests: 0 tests", "tests");
    assert_spec_error("{'name':'s','tests':" T_STREAM "}", SM_EPARSE, "tests", "tests");
    assert_spec_error("{'name':'s','tests':[" T_STREAM ",5]}", SM_EPARSE, "tests[1]", "tests[1]");
    char json[2048];
    size_t n = (size_t)snprintf(json, sizeof json, "{'name':'s','tests':[");
    for (int i = 0; i <= SM_SPEC_TESTS_MAX; i++)
        n += (size_t)snprintf(json + n, sizeof json - n, "%s" T_STREAM, i ? "," : "");
    snprintf(json + n, sizeof json - n, "]}");
    assert_spec_error(json, SM_EINVAL, "tests: 33 tests, expected 1..32", "tests");
}

static void test_spec_axis_errors(void **state)
{
    (void)state;
    assert_spec_error("{'name':'s','tests':[" T_STREAM ",{'workload':'stream',"
                      "'msg_size':[1,2,3,4,5,6,7,8,9],'count':[1,2,3,4,5,6,7,8]}]}",
                      SM_EINVAL, "tests[1]: its lists give 72 variants, above the maximum 64",
                      "tests[1]");
    assert_spec_error("{'name':'s','tests':[{'workload':'stream',"
                      "'msg_size':[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]}]}",
                      SM_EINVAL, "tests[0]: msg_size: a list of 17 values, expected 1..16",
                      "tests[0].msg_size");
    assert_spec_error("{'name':'s','tests':[{'workload':'stream','count':[]}]}", SM_EINVAL,
                      "tests[0]: count: a list of 0 values", "tests[0].count");
    assert_spec_error("{'name':'s','tests':[{'workload':['stream','rr']}]}", SM_EPARSE,
                      "tests[0]: workload: must be one value", "tests[0].workload");
    assert_spec_error("{'name':'s','tests':[{'workload':['stream']}]}", SM_EPARSE, "workload",
                      "tests[0].workload");
}

static void test_spec_many_axes_do_not_overflow_the_variant_count(void **state)
{
    (void)state;
    /* 16 axes of 16 values would be 2^64 variants. */
    static const char *const keys[] = {
        "transport", "scope", "framing", "msg_size", "req_size",  "resp_size", "count",   "bytes",
        "nodelay",   "cork",  "sndbuf",  "rcvbuf",   "read_size", "colour1",   "colour2", "colour3",
    };
    char json[8192];
    size_t n = (size_t)snprintf(json, sizeof json, "{'name':'s','tests':[{'workload':'stream'");
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        n += (size_t)snprintf(json + n, sizeof json - n,
                              ",'%s':[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]", keys[k]);
    snprintf(json + n, sizeof json - n, "}]}");
    assert_spec_error(json, SM_EINVAL,
                      "tests[0]: its lists give more than 256 variants, above the maximum 64",
                      "tests[0]");
}

static void test_spec_pair_test_requires_pairs(void **state)
{
    (void)state;
    assert_spec_error("{'name':'s','tests':[" T_STREAM ",{'workload':'rr','scope':'pair'}]}",
                      SM_EINVAL, "pairs: required, tests[1] has scope pair", "pairs");
    assert_spec_error("{'name':'s','tests':[{'workload':'rr','scope':['local','pair']}]}",
                      SM_EINVAL, "tests[0]", "pairs");
}

static void test_spec_invalid_params_name_the_test_and_field(void **state)
{
    (void)state;
    assert_spec_error("{'name':'s','tests':[" T_STREAM ",{'workload':'stream',"
                      "'msg_size':[128,0]}]}",
                      SM_EINVAL, "tests[1]: msg_size: 0 is below the minimum 1",
                      "tests[1].msg_size[1]");
    assert_spec_error("{'name':'s','tests':[{'workload':'rr','msg_size':128}]}", SM_EINVAL,
                      "tests[0]: msg_size: applies to workload stream only", "tests[0].msg_size");
    assert_spec_error("{'name':'s','tests':[{'workload':'stream','colour':1}]}", SM_EPARSE,
                      "tests[0]: unknown field 'colour'", "tests[0].colour");
    assert_spec_error("{'name':'s','tests':[{'workload':'stream','colour':[1,2]}]}", SM_EPARSE,
                      "tests[0]: unknown field 'colour'", "tests[0].colour");
    /* pairs is the spec's, not a test's: the error says where it goes. */
    assert_spec_error("{'name':'s','pairs':'mesh','tests':[{'workload':'rr','scope':'pair',"
                      "'pairs':'ring'}]}",
                      SM_EINVAL, "tests[0]: pairs: goes in the spec, next to \"tests\"",
                      "tests[0].pairs");
    assert_spec_error("{'name':'s','tests':[{'scope':'local'}]}", SM_EPARSE,
                      "tests[0]: missing field 'workload'", "tests[0].workload");
    assert_spec_error("{'name':'s','tests':[{'workload':'stream','count':1,'count':2}]}", SM_EPARSE,
                      "tests[0]: duplicate field 'count'", "tests[0].count");
    assert_spec_error("{'name':'s','tests':[{'workload':'stream','nodelay':[false,'yes']}]}",
                      SM_EPARSE, "tests[0]: nodelay: expected true or false",
                      "tests[0].nodelay[1]");
    assert_spec_error("{'name':'s','tests':[{'workload':'stream','transport':['tcp','udp']}]}",
                      SM_EINVAL, "tests[0]: transport: unknown value 'udp'",
                      "tests[0].transport[1]");
    assert_spec_error("{'name':'s','tests':[{'workload':'stream','count':1,'bytes':2}]}", SM_EINVAL,
                      "tests[0]: count, bytes, duration_ms: set exactly one", "tests[0]");
    assert_spec_error("{'name':'s','tests':[{'workload':'stream','transport':['unix','tcp'],"
                      "'cork':true,'nodelay':true}]}",
                      SM_EINVAL, "tests[0]: cork, nodelay: set at most one", "tests[0]");
}

static void test_spec_crossing_scope_with_transport_keeps_pair_over_tcp_only(void **state)
{
    (void)state;
    static const char json[] =
        "{\"name\":\"x\",\"pairs\":\"mesh\",\"tests\":[{\"workload\":\"stream\","
        "\"scope\":[\"local\",\"pair\"],\"transport\":[\"tcp\",\"unix\"],\"count\":10}]}";
    sm_spec spec;
    sm_error err = {0};
    assert_int_equal(sm_spec_decode(json, sizeof json - 1, &spec, &err), 0);
    assert_int_equal(spec.tests[0].n_variants, 3); /* local tcp, local unix, pair tcp */
    for (size_t i = 0; i < 3; i++)
        assert_false(spec.tests[0].variants[i].scope == SM_SCOPE_PAIR &&
                     spec.tests[0].variants[i].transport == SM_TR_UNIX);
    sm_spec_fini(&spec);
    /* Asked for outright, pair over unix is an error, not an empty test. */
    static const char only[] =
        "{\"name\":\"x\",\"pairs\":\"mesh\",\"tests\":[{\"workload\":\"stream\","
        "\"scope\":\"pair\",\"transport\":\"unix\",\"count\":10}]}";
    assert_int_equal(sm_spec_decode(only, sizeof only - 1, &spec, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "tcp"));
    static const char none[] =
        "{\"name\":\"x\",\"pairs\":\"mesh\",\"tests\":[{\"workload\":\"stream\","
        "\"scope\":[\"pair\"],\"transport\":[\"unix\"],\"count\":10}]}";
    assert_int_equal(sm_spec_decode(none, sizeof none - 1, &spec, &err), SM_EINVAL);
    assert_non_null(strstr(err.msg, "no variant left"));
    assert_string_equal(err.field, "tests[0]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_crossing_scope_with_transport_keeps_pair_over_tcp_only),
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
        cmocka_unit_test(test_spec_every_preset_decodes),
        cmocka_unit_test(test_spec_seed_http_alternates_the_client_models),
        cmocka_unit_test(test_spec_quick_and_full_presets_use_the_documented_sizes),
        cmocka_unit_test(test_spec_presets_encode_lists_every_preset_with_its_spec),
        cmocka_unit_test(test_spec_top_level_key_errors),
        cmocka_unit_test(test_spec_name_errors),
        cmocka_unit_test(test_spec_hosts_errors),
        cmocka_unit_test(test_spec_hosts_has_at_most_1024_names),
        cmocka_unit_test(test_spec_label_errors),
        cmocka_unit_test(test_spec_pairs_errors),
        cmocka_unit_test(test_spec_bound_errors),
        cmocka_unit_test(test_spec_tests_list_errors),
        cmocka_unit_test(test_spec_axis_errors),
        cmocka_unit_test(test_spec_many_axes_do_not_overflow_the_variant_count),
        cmocka_unit_test(test_spec_pair_test_requires_pairs),
        cmocka_unit_test(test_spec_invalid_params_name_the_test_and_field),
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
