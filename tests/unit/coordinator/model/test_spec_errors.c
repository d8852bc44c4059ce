/* Unit tests of the spec's validation errors: each names the key, the field or the test that is
 * wrong. */
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
    spec_fixture_decode_ok(json, &s);
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

/* A test's own hosts: some of the spec's listed ones, for a local test. */
static void test_spec_test_hosts_errors(void **state)
{
    (void)state;
#define TH(hosts, test_hosts)                                                                      \
    "{'name':'s'," hosts "'tests':[{'workload':'stream','hosts':" test_hosts "}]}"
    assert_spec_error(TH("", "['a']"), SM_EINVAL,
                      "tests[0].hosts: needs the spec's hosts as a list of names",
                      "tests[0].hosts");
    assert_spec_error(TH("'hosts':['a','b'],", "'a'"), SM_EPARSE,
                      "tests[0].hosts: expected a list of names", "tests[0].hosts");
    assert_spec_error(TH("'hosts':['a','b'],", "[]"), SM_EINVAL,
                      "tests[0].hosts: 0 names, expected 1..2", "tests[0].hosts");
    assert_spec_error(TH("'hosts':['a','b'],", "['a','c']"), SM_EINVAL,
                      "tests[0].hosts[1]: 'c' is not in hosts", "tests[0].hosts[1]");
    assert_spec_error(TH("'hosts':['a','b'],", "['b','b']"), SM_EINVAL,
                      "tests[0].hosts[1]: 'b' is also tests[0].hosts[0]", "tests[0].hosts[1]");
    assert_spec_error(TH("'hosts':['a','b'],", "['a b']"), SM_EINVAL, "tests[0].hosts[0]",
                      "tests[0].hosts[0]");
    assert_spec_error("{'name':'s','hosts':['a','b'],'pairs':'mesh','tests':[{'workload':"
                      "'stream','scope':'pair','hosts':['a']}]}",
                      SM_EINVAL, "tests[0].hosts: for a local test only", "tests[0].hosts");
#undef TH
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
    spec_fixture_decode_ok(json, &s);
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
        cmocka_unit_test(test_spec_test_hosts_errors),
        cmocka_unit_test(test_spec_invalid_params_name_the_test_and_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
