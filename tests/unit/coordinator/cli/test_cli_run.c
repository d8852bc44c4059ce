/* Unit tests of the sockmatrix CLI's run command: a preset or a spec file, repetitions, wait and
 * its formats, their bounds, and the spec file's errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coordinator/schema/apijson.h"
#include "coordinator/cli/cli.h"
#include "coordinator/cli/specfile.h"
#include "coordinator/cli/apiview.h"
#include "coordinator/model/spec.h"
#include "tests/unit/coordinator/cli/cli_fixture.h"

static void test_cli_run_with_a_preset_takes_hosts_repetitions_wait_format_timeout(void **state)
{
    (void)state;
    char *argv[] = {"sockmatrix", "run",      "--preset", "seed-tcp-unix", "--hosts", "h1,h2",
                    "--wait",     "--format", "csv",      "--repetitions", "2",       "--timeout-s",
                    "120",        NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(cli_fixture_parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_RUN);
    assert_string_equal(o.preset, "seed-tcp-unix");
    assert_null(o.spec_file);
    assert_string_equal(o.hosts, "h1,h2");
    assert_int_equal(o.repetitions, 2);
    assert_true(o.wait);
    assert_int_equal(o.format, SM_CLI_FMT_CSV);
    assert_int_equal(o.timeout_s, 120);

    char *plain[] = {"sockmatrix", "run", "--preset=quick", "--hosts=all", NULL};
    assert_int_equal(cli_fixture_parse(plain, ARGC(plain), &o, &err), 0);
    assert_string_equal(o.preset, "quick");
    assert_string_equal(o.hosts, "all");
    assert_false(o.wait);
    assert_int_equal(o.repetitions, 0);
    assert_int_equal(o.timeout_s, 3600);
}

static void test_cli_run_repetitions_auto_sends_the_adaptive_object(void **state)
{
    (void)state;
    char *argv[] = {"sockmatrix",    "run",  "--preset", "seed-tcp-unix",
                    "--repetitions", "auto", NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(cli_fixture_parse(argv, ARGC(argv), &o, &err), 0);
    assert_true(o.reps_auto);
    assert_int_equal(o.repetitions, 0);
    assert_int_equal(o.reps.min, 5);
    assert_int_equal(o.reps.max, 30);
    assert_true(o.reps.ci_rel == 0.05);

    char *tuned[] = {
        "sockmatrix", "run",      "--preset", "quick", "--repetitions", "auto", "--max-repetitions",
        "3",          "--ci-rel", "0.02",     NULL};
    assert_int_equal(cli_fixture_parse(tuned, ARGC(tuned), &o, &err), 0);
    assert_int_equal(o.reps.min, 3); /* a max below the default minimum lowers it */
    assert_int_equal(o.reps.max, 3);
    assert_true(o.reps.ci_rel == 0.02);
    char *body = NULL;
    assert_int_equal(sm_apiview_preset_request_adaptive("quick", NULL, &o.reps, &body, &err), 0);
    assert_string_equal(body, "{\"preset\":\"quick\",\"repetitions\":{\"min\":3,\"max\":3,"
                              "\"ci_rel\":0.02}}");
    /* The coordinator reads it back into an adaptive spec. */
    char *spec_json = NULL;
    assert_int_equal(sm_api_run_request(body, strlen(body), &spec_json, &err), 0);
    sm_spec spec;
    assert_int_equal(sm_spec_decode(spec_json, strlen(spec_json), &spec, &err), 0);
    assert_true(spec.adaptive);
    assert_int_equal(spec.reps.max, 3);
    sm_spec_fini(&spec);
    free(spec_json);
    free(body);

    char *alone[] = {"sockmatrix", "run", "--preset", "quick", "--ci-rel", "0.1", NULL};
    cli_fixture_assert_fails_naming(alone, ARGC(alone), "go with --repetitions auto");
    char *max_alone[] = {"sockmatrix", "run", "--preset", "quick", "--max-repetitions", "9", NULL};
    cli_fixture_assert_fails_naming(max_alone, ARGC(max_alone), "go with --repetitions auto");
    static const char *const bad_ci[] = {"0", "1", "x", "-0.1", "0.05x"};
    for (size_t i = 0; i < sizeof bad_ci / sizeof *bad_ci; i++) {
        char *bad[] = {"sockmatrix", "run",      "--preset",        "q", "--repetitions",
                       "auto",       "--ci-rel", (char *)bad_ci[i], NULL};
        cli_fixture_assert_fails_naming(bad, ARGC(bad), "--ci-rel:");
    }
    char *bad_max[] = {"sockmatrix",        "run", "--preset", "q", "--repetitions", "auto",
                       "--max-repetitions", "101", NULL};
    cli_fixture_assert_fails_naming(bad_max, ARGC(bad_max), "--max-repetitions:");
    char *spec_auto[] = {"sockmatrix", "run", "--spec", "f.json", "--repetitions", "auto", NULL};
    cli_fixture_assert_fails_naming(spec_auto, ARGC(spec_auto),
                                    "--repetitions goes with --preset only");
}

static void test_cli_run_wait_reads_every_format(void **state)
{
    (void)state;
    static const char *const names[] = {"table", "csv", "md", "json"};
    static const sm_cli_format want[] = {SM_CLI_FMT_TABLE, SM_CLI_FMT_CSV, SM_CLI_FMT_MD,
                                         SM_CLI_FMT_JSON};
    for (size_t i = 0; i < 4; i++) {
        char *argv[] = {"sockmatrix", "run",      "--preset",       "quick",
                        "--wait",     "--format", (char *)names[i], NULL};
        sm_cli_opts o;
        sm_error err;
        assert_int_equal(cli_fixture_parse(argv, ARGC(argv), &o, &err), 0);
        assert_int_equal(o.format, want[i]);
    }
    char *bad[] = {"sockmatrix", "run", "--preset", "quick", "--wait", "--format", "xml", NULL};
    cli_fixture_assert_fails_naming(bad, ARGC(bad),
                                    "--format: 'xml' is not table, csv, md or json");
}

static void test_cli_run_with_a_spec_file_refuses_hosts_and_repetitions(void **state)
{
    (void)state;
    char *argv[] = {"sockmatrix", "run", "--spec", "my.json", "--wait", NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(cli_fixture_parse(argv, ARGC(argv), &o, &err), 0);
    assert_string_equal(o.spec_file, "my.json");
    assert_null(o.preset);

    char *hosts[] = {"sockmatrix", "run", "--spec", "my.json", "--hosts", "h1", NULL};
    cli_fixture_assert_fails_naming(hosts, ARGC(hosts), "--hosts goes with --preset only");
    char *reps[] = {"sockmatrix", "run", "--repetitions", "3", "--spec", "my.json", NULL};
    cli_fixture_assert_fails_naming(reps, ARGC(reps), "--repetitions goes with --preset only");
}

static void test_cli_run_needs_exactly_one_of_preset_and_spec(void **state)
{
    (void)state;
    char *none[] = {"sockmatrix", "run", "--wait", NULL};
    cli_fixture_assert_fails_naming(none, ARGC(none), "give --preset NAME or --spec FILE");
    char *both[] = {"sockmatrix", "run", "--preset", "quick", "--spec", "f", NULL};
    cli_fixture_assert_fails_naming(both, ARGC(both), "not both");
}

static void test_cli_run_format_and_timeout_need_wait(void **state)
{
    (void)state;
    char *fmt[] = {"sockmatrix", "run", "--preset", "quick", "--format", "csv", NULL};
    cli_fixture_assert_fails_naming(fmt, ARGC(fmt), "--format goes with --wait");
    char *tmo[] = {"sockmatrix", "run", "--preset", "quick", "--timeout-s", "5", NULL};
    cli_fixture_assert_fails_naming(tmo, ARGC(tmo), "--timeout-s goes with --wait");
}

static void test_cli_run_bounds_repetitions_timeout_and_host_names(void **state)
{
    (void)state;
    static const char *const bad_reps[] = {"0", "101", "x", "-1", "2x", " 3"};
    for (size_t i = 0; i < sizeof bad_reps / sizeof *bad_reps; i++) {
        char *argv[] = {"sockmatrix",        "run", "--preset", "q", "--repetitions",
                        (char *)bad_reps[i], NULL};
        cli_fixture_assert_fails_naming(argv, ARGC(argv), "--repetitions:");
    }
    char *max[] = {"sockmatrix", "run", "--preset", "q", "--repetitions", "100", NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(cli_fixture_parse(max, ARGC(max), &o, &err), 0);
    assert_int_equal(o.repetitions, 100);

    static const char *const bad_timeouts[] = {"0", "604801", "1h", ""};
    for (size_t i = 0; i < sizeof bad_timeouts / sizeof *bad_timeouts; i++) {
        char *argv[] = {
            "sockmatrix", "run", "--preset", "q", "--wait", "--timeout-s", (char *)bad_timeouts[i],
            NULL};
        cli_fixture_assert_fails_naming(argv, ARGC(argv), "--timeout-s");
    }

    char name65[66];
    memset(name65, 'a', 65);
    name65[65] = '\0';
    static const char *const bad_hosts[] = {"", "h1,", ",h1", "h1,,h2", "h 1", "h1;h2"};
    for (size_t i = 0; i < sizeof bad_hosts / sizeof *bad_hosts; i++) {
        char *argv[] = {"sockmatrix",         "run", "--preset", "q", "--hosts",
                        (char *)bad_hosts[i], NULL};
        cli_fixture_assert_fails_naming(argv, ARGC(argv), "--hosts");
    }
    char *long_name[] = {"sockmatrix", "run", "--preset", "q", "--hosts", name65, NULL};
    cli_fixture_assert_fails_naming(long_name, ARGC(long_name), "longer than 64");
    char *ok[] = {"sockmatrix", "run", "--preset", "q", "--hosts", "node-1.lab,h_2", NULL};
    assert_int_equal(cli_fixture_parse(ok, ARGC(ok), &o, &err), 0);
}

/* Writes text to a new file under dir; returns its path (static storage, one at a time). */
static const char *spec_file(const char *dir, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/spec.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    return path;
}

static void test_cli_spec_file_error_names_the_file_and_the_line_and_column(void **state)
{
    (void)state;
    char dir[] = "/tmp/sm-cli-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *body = (char *)"untouched";
    size_t len = 0;
    sm_error err = {0};
    /* The comma after "s" is missing: cJSON stops at the second line's quote. */
    const char *path = spec_file(dir, "{\"name\": \"s\"\n  \"tests\": []}\n");
    assert_int_equal(sm_cli_spec_load(path, &body, &len, &err), SM_EPARSE);
    assert_null(body);
    char want[320];
    snprintf(want, sizeof want, "--spec %s: line 2, column 3: not valid JSON", path);
    assert_string_equal(err.msg, want);
    unlink(path);

    /* Valid JSON, refused by the spec: the JSON path of the field at fault. */
    path = spec_file(dir, "{\"name\":\"s\",\"tests\":[{\"workload\":\"stream\","
                          "\"colour\":1}]}");
    assert_int_equal(sm_cli_spec_load(path, &body, &len, &err), SM_EPARSE);
    snprintf(want, sizeof want, "--spec %s: at tests[0].colour: tests[0]: unknown field 'colour'",
             path);
    assert_string_equal(err.msg, want);

    /* A good spec comes back whole, as it is sent. */
    const char *good = "{\"name\":\"s\",\"tests\":[{\"workload\":\"stream\"}]}";
    path = spec_file(dir, good);
    assert_int_equal(sm_cli_spec_load(path, &body, &len, &err), 0);
    assert_int_equal(len, strlen(good));
    assert_string_equal(body, good);
    free(body);
    unlink(path);

    assert_int_equal(sm_cli_spec_load(path, &body, &len, &err), SM_ESYS);
    assert_non_null(strstr(err.msg, "--spec: cannot open"));
    rmdir(dir);
}

static void test_cli_spec_position_counts_lines_and_columns_from_one(void **state)
{
    (void)state;
    unsigned line, col;
    sm_cli_spec_position("ab\ncd\n", 0, &line, &col);
    assert_int_equal(line, 1);
    assert_int_equal(col, 1);
    sm_cli_spec_position("ab\ncd\n", 4, &line, &col);
    assert_int_equal(line, 2);
    assert_int_equal(col, 2);
    sm_cli_spec_position("ab\ncd\n", 6, &line, &col);
    assert_int_equal(line, 3);
    assert_int_equal(col, 1);
}

/* A preset run may turn remeasuring off (or set its bound) as a spec does; a field no spec
 * has is refused, naming the ones a preset takes. */
static void test_cli_preset_request_takes_remeasure_and_names_the_fields_it_takes(void **state)
{
    (void)state;
    char *spec = NULL;
    sm_error err = {0};
    const char *body = "{\"preset\":\"quick\",\"remeasure\":0}";
    assert_int_equal(sm_api_run_request(body, strlen(body), &spec, &err), 0);
    sm_spec s;
    assert_int_equal(sm_spec_decode(spec, strlen(spec), &s, &err), 0);
    assert_int_equal(s.remeasure, 0);
    assert_true(s.remeasure_given);
    sm_spec_fini(&s);
    free(spec);
    spec = NULL;
    body = "{\"preset\":\"quick\",\"remeasures\":0}";
    assert_int_equal(sm_api_run_request(body, strlen(body), &spec, &err), SM_EINVAL);
    assert_null(spec);
    assert_string_equal(err.field, "remeasures");
    assert_string_equal(err.msg, "remeasures: not a field a preset takes (hosts, repetitions, "
                                 "remeasure, warmup, parallel, name, pairs)");
}

static void test_cli_unknown_preset_names_every_preset(void **state)
{
    (void)state;
    char *spec = NULL;
    sm_error err = {0};
    const char *body = "{\"preset\":\"nope\"}";
    assert_int_equal(sm_api_run_request(body, strlen(body), &spec, &err), SM_EINVAL);
    assert_null(spec);
    assert_string_equal(err.field, "preset");
    assert_non_null(strstr(err.msg, "no preset \"nope\"; the presets are "));
    for (const sm_preset *p = sm_presets(); p->name; p++)
        assert_non_null(strstr(err.msg, p->name));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_run_with_a_preset_takes_hosts_repetitions_wait_format_timeout),
        cmocka_unit_test(test_cli_run_wait_reads_every_format),
        cmocka_unit_test(test_cli_run_repetitions_auto_sends_the_adaptive_object),
        cmocka_unit_test(test_cli_run_with_a_spec_file_refuses_hosts_and_repetitions),
        cmocka_unit_test(test_cli_run_needs_exactly_one_of_preset_and_spec),
        cmocka_unit_test(test_cli_run_format_and_timeout_need_wait),
        cmocka_unit_test(test_cli_run_bounds_repetitions_timeout_and_host_names),
        cmocka_unit_test(test_cli_spec_file_error_names_the_file_and_the_line_and_column),
        cmocka_unit_test(test_cli_spec_position_counts_lines_and_columns_from_one),
        cmocka_unit_test(test_cli_unknown_preset_names_every_preset),
        cmocka_unit_test(test_cli_preset_request_takes_remeasure_and_names_the_fields_it_takes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
