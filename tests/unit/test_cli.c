/* Unit tests of the sockmatrix CLI: its option parsing, token file, text grid, and the API
 * decoders. */
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
#include "coordinator/cli/grid.h"
#include "coordinator/cli/output.h"
#include "coordinator/cli/specfile.h"
#include "coordinator/schema/apijson.h"
#include "coordinator/cli/apiview.h"
#include "coordinator/model/spec.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof *(a)) - 1)

static int parse_env(char **argv, int argc, const char *env, sm_cli_opts *o, sm_error *err)
{
    memset(err, 0, sizeof *err);
    memset(o, 0xA5, sizeof *o); /* nothing may depend on what was there */
    return sm_cli_parse(argc, argv, env, o, err);
}

static int parse(char **argv, int argc, sm_cli_opts *o, sm_error *err)
{
    return parse_env(argv, argc, NULL, o, err);
}

static void assert_msg_has(const sm_error *err, const char *needle)
{
    if (!strstr(err->msg, needle))
        fail_msg("error '%s' does not name '%s'", err->msg, needle);
    assert_null(strchr(err->msg, '\n'));
}

/* argv must fail with SM_EINVAL, one line, naming needle. */
static void assert_fails_naming(char **argv, int argc, const char *needle)
{
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(parse(argv, argc, &o, &err), SM_EINVAL);
    assert_int_equal(err.code, SM_EINVAL);
    assert_msg_has(&err, needle);
}

/* ---- option parsing ---- */

static void test_cli_anomalies_takes_a_run_a_baseline_and_a_floor(void **state)
{
    (void)state;
    char *argv[] = {"sockmatrix", "anomalies", "7",        "--baseline", "5",
                    "--floor",    "0.2",       "--format", "json",       NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_ANOMALIES);
    assert_int_equal(o.run_id, 7);
    assert_int_equal(o.baseline, 5);
    assert_string_equal(o.floor, "0.2");
    assert_int_equal(o.format, SM_CLI_FMT_JSON);
    char *plain[] = {"sockmatrix", "anomalies", "7", NULL};
    assert_int_equal(parse(plain, ARGC(plain), &o, &err), 0);
    assert_int_equal(o.baseline, 0);
    assert_null(o.floor);
    assert_int_equal(o.format, SM_CLI_FMT_TABLE);

    char *norun[] = {"sockmatrix", "anomalies", NULL};
    assert_fails_naming(norun, ARGC(norun), "anomalies: which run?");
    char *floor[] = {"sockmatrix", "anomalies", "7", "--floor", "15%", NULL};
    assert_fails_naming(floor, ARGC(floor), "--floor: '15%' is not a fraction");
    char *zero[] = {"sockmatrix", "anomalies", "7", "--floor", "0", NULL};
    assert_fails_naming(zero, ARGC(zero), "--floor");
    char *base[] = {"sockmatrix", "anomalies", "7", "--baseline", "x", NULL};
    assert_fails_naming(base, ARGC(base), "--baseline: 'x' is not a run id");
    char *csv[] = {"sockmatrix", "anomalies", "7", "--format", "csv", NULL};
    assert_int_equal(parse(csv, ARGC(csv), &o, &err), 0); /* every format now */
    assert_int_equal(o.format, SM_CLI_FMT_CSV);
    char *exp[] = {"sockmatrix", "export", "7", "--format", "csv", "--baseline", "5", NULL};
    assert_fails_naming(exp, ARGC(exp), "--baseline: not an option of export");
    char *nowait[] = {"sockmatrix", "run", "--preset", "quick", "--floor", "0.2", NULL};
    assert_fails_naming(nowait, ARGC(nowait), "--floor goes with --wait");
}

static void test_cli_jobs_takes_a_run_a_host_a_state_and_a_format(void **state)
{
    (void)state;
    char *argv[] = {"sockmatrix", "jobs",   "7",        "--host", "h2",
                    "--state",    "failed", "--format", "json",   NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_JOBS);
    assert_int_equal(o.run_id, 7);
    assert_string_equal(o.job_host, "h2");
    assert_string_equal(o.job_state, "failed");
    assert_int_equal(o.format, SM_CLI_FMT_JSON);
    char *plain[] = {"sockmatrix", "jobs", "7", NULL};
    assert_int_equal(parse(plain, ARGC(plain), &o, &err), 0);
    assert_null(o.job_host);
    assert_null(o.job_state);
    assert_int_equal(o.format, SM_CLI_FMT_TABLE);

    char *norun[] = {"sockmatrix", "jobs", NULL};
    assert_fails_naming(norun, ARGC(norun), "jobs: which run?");
    char *host[] = {"sockmatrix", "jobs", "7", "--host", "h 2", NULL};
    assert_fails_naming(host, ARGC(host), "--host: 'h 2' is not an agent name");
    char *st[] = {"sockmatrix", "jobs", "7", "--state", "finished", NULL};
    assert_fails_naming(st, ARGC(st), "--state: 'finished' is not queued");
    char *csv[] = {"sockmatrix", "jobs", "7", "--format", "csv", NULL};
    assert_int_equal(parse(csv, ARGC(csv), &o, &err), 0); /* every format now */
    assert_int_equal(o.format, SM_CLI_FMT_CSV);
    char *show[] = {"sockmatrix", "show", "7", "--host", "h1", NULL};
    assert_fails_naming(show, ARGC(show), "--host: not an option of show");
}

/* The usage is printed as it is (fputs), never through printf: a "%%" would show doubled. */
static void test_cli_usage_says_percent_once(void **state)
{
    (void)state;
    assert_null(strstr(sm_cli_usage(), "%%"));
    assert_non_null(strstr(sm_cli_usage(), "95% CI"));
}

static void test_cli_trends_takes_a_host_or_pair_a_test_a_metric_and_a_format(void **state)
{
    (void)state;
    char *argv[] = {
        "sockmatrix", "trends",          "--host",   "h1->h2", "--test", "stream tcp 1 MiB",
        "--metric",   "throughput_MBps", "--format", "csv",    NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_TRENDS);
    assert_string_equal(o.job_host, "h1->h2");
    assert_string_equal(o.trend_test, "stream tcp 1 MiB");
    assert_string_equal(o.trend_metric, "throughput_MBps");
    assert_int_equal(o.format, SM_CLI_FMT_CSV);
    char *plain[] = {"sockmatrix", "trends", "--host", "node-1", "--test", "rr tcp", NULL};
    assert_int_equal(parse(plain, ARGC(plain), &o, &err), 0);
    assert_null(o.trend_metric);
    assert_int_equal(o.format, SM_CLI_FMT_TABLE);

    char *notest[] = {"sockmatrix", "trends", "--host", "h1", NULL};
    assert_fails_naming(notest, ARGC(notest), "trends: --host H and --test T are needed");
    char *half[] = {"sockmatrix", "trends", "--host", "h1->", "--test", "x", NULL};
    assert_fails_naming(half, ARGC(half), "--host: 'h1->' is not an agent name");
    char *md[] = {"sockmatrix", "trends", "--host", "h1", "--test", "x", "--format", "md", NULL};
    assert_int_equal(parse(md, ARGC(md), &o, &err), 0); /* every format now */
    assert_int_equal(o.format, SM_CLI_FMT_MD);
    char *jobs[] = {"sockmatrix", "jobs", "7", "--test", "x", NULL};
    assert_fails_naming(jobs, ARGC(jobs), "--test: not an option of jobs");
}

static void test_cli_jobs_cell_takes_a_cell_number_alone(void **state)
{
    (void)state;
    sm_cli_opts o;
    sm_error err;
    char *argv[] = {"sockmatrix", "jobs", "7", "--cell", "0", "--format", "json", NULL};
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_JOBS);
    assert_int_equal(o.run_id, 7);
    assert_true(o.have_job_cell);
    assert_int_equal(o.job_cell, 0);
    assert_int_equal(o.format, SM_CLI_FMT_JSON);
    char *plain[] = {"sockmatrix", "jobs", "7", NULL};
    assert_int_equal(parse(plain, ARGC(plain), &o, &err), 0);
    assert_false(o.have_job_cell);

    char *bad[] = {"sockmatrix", "jobs", "7", "--cell", "-1", NULL};
    assert_fails_naming(bad, ARGC(bad), "--cell: '-1' is not a cell number");
    char *big[] = {"sockmatrix", "jobs", "7", "--cell", "4294967296", NULL};
    assert_fails_naming(big, ARGC(big), "--cell: '4294967296' is not a cell number");
    char *both[] = {"sockmatrix", "jobs", "7", "--cell", "2", "--host", "h1", NULL};
    assert_fails_naming(both, ARGC(both), "--cell shows one cell's repetitions");
    char *show[] = {"sockmatrix", "show", "7", "--cell", "1", NULL};
    assert_fails_naming(show, ARGC(show), "--cell: not an option of show");
}

static void test_cli_disturbed_include_goes_with_export_anomalies_and_run_wait(void **state)
{
    (void)state;
    sm_cli_opts o;
    sm_error err;
    char *exp[] = {"sockmatrix", "export", "7", "--format", "csv", "--disturbed", "include", NULL};
    assert_int_equal(parse(exp, ARGC(exp), &o, &err), 0);
    assert_true(o.include_disturbed);
    char *an[] = {"sockmatrix", "anomalies", "7", "--disturbed", "exclude", NULL};
    assert_int_equal(parse(an, ARGC(an), &o, &err), 0);
    assert_false(o.include_disturbed);
    char *run[] = {"sockmatrix", "run",         "--preset", "quick",
                   "--wait",     "--disturbed", "include",  NULL};
    assert_int_equal(parse(run, ARGC(run), &o, &err), 0);
    assert_true(o.include_disturbed);
    char *plain[] = {"sockmatrix", "export", "7", "--format", "csv", NULL};
    assert_int_equal(parse(plain, ARGC(plain), &o, &err), 0);
    assert_false(o.include_disturbed);

    char *bad[] = {"sockmatrix", "export", "7", "--format", "csv", "--disturbed", "yes", NULL};
    assert_fails_naming(bad, ARGC(bad), "--disturbed: 'yes' is not include or exclude");
    char *nowait[] = {"sockmatrix", "run", "--preset", "quick", "--disturbed", "include", NULL};
    assert_fails_naming(nowait, ARGC(nowait), "--disturbed goes with --wait");
    char *show[] = {"sockmatrix", "show", "7", "--disturbed", "include", NULL};
    assert_fails_naming(show, ARGC(show), "--disturbed: not an option of show");
}

static void test_cli_defaults_are_loopback_no_token_and_an_hour(void **state)
{
    (void)state;
    char *argv[] = {"sockmatrix", "agents", NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_AGENTS);
    assert_string_equal(o.coordinator, "http://127.0.0.1:8080");
    assert_null(o.token_file);
    assert_null(o.preset);
    assert_null(o.spec_file);
    assert_null(o.hosts);
    assert_null(o.output);
    assert_int_equal(o.repetitions, 0);
    assert_false(o.wait);
    assert_int_equal(o.timeout_s, 3600);
    assert_int_equal(o.format, SM_CLI_FMT_TABLE);
}

static void test_cli_each_listing_command_parses_alone(void **state)
{
    (void)state;
    static const struct {
        const char *word;
        sm_cli_cmd cmd;
    } cases[] = {{"agents", SM_CLI_AGENTS}, {"presets", SM_CLI_PRESETS}, {"runs", SM_CLI_RUNS}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *argv[] = {"sockmatrix", (char *)cases[i].word, NULL};
        sm_cli_opts o;
        sm_error err;
        assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
        assert_int_equal(o.cmd, cases[i].cmd);
        char *extra[] = {"sockmatrix", (char *)cases[i].word, "7", NULL};
        assert_fails_naming(extra, ARGC(extra), "unexpected argument '7'");
    }
}

static void test_cli_env_var_replaces_the_default_and_the_option_the_env_var(void **state)
{
    (void)state;
    char *argv[] = {"sockmatrix", "runs", NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(parse_env(argv, ARGC(argv), "http://lab:9000", &o, &err), 0);
    assert_string_equal(o.coordinator, "http://lab:9000");
    /* An empty variable is an unset one. */
    assert_int_equal(parse_env(argv, ARGC(argv), "", &o, &err), 0);
    assert_string_equal(o.coordinator, "http://127.0.0.1:8080");

    char *over[] = {"sockmatrix", "--coordinator", "https://c.example:443/", "runs", NULL};
    assert_int_equal(parse_env(over, ARGC(over), "http://lab:9000", &o, &err), 0);
    assert_string_equal(o.coordinator, "https://c.example:443/");

    assert_int_equal(parse_env(argv, ARGC(argv), "lab:9000", &o, &err), SM_EINVAL);
    assert_msg_has(&err, "SOCKMATRIX_COORDINATOR: 'lab:9000'");
}

static void test_cli_global_options_go_before_or_after_the_command(void **state)
{
    (void)state;
    char *before[] = {"sockmatrix", "--coordinator", "https://a:1", "--token-file",
                      "/t",         "show",          "12",          NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(parse(before, ARGC(before), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_SHOW);
    assert_int_equal(o.run_id, 12);
    assert_string_equal(o.coordinator, "https://a:1");
    assert_string_equal(o.token_file, "/t");

    char *after[] = {"sockmatrix", "cancel", "--token-file=/t2", "99", "--coordinator=https://b:2",
                     NULL};
    assert_int_equal(parse(after, ARGC(after), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_CANCEL);
    assert_int_equal(o.run_id, 99);
    assert_string_equal(o.coordinator, "https://b:2");
    assert_string_equal(o.token_file, "/t2");
}

static void test_cli_run_with_a_preset_takes_hosts_repetitions_wait_format_timeout(void **state)
{
    (void)state;
    char *argv[] = {"sockmatrix", "run",      "--preset", "seed-tcp-unix", "--hosts", "h1,h2",
                    "--wait",     "--format", "csv",      "--repetitions", "2",       "--timeout-s",
                    "120",        NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_RUN);
    assert_string_equal(o.preset, "seed-tcp-unix");
    assert_null(o.spec_file);
    assert_string_equal(o.hosts, "h1,h2");
    assert_int_equal(o.repetitions, 2);
    assert_true(o.wait);
    assert_int_equal(o.format, SM_CLI_FMT_CSV);
    assert_int_equal(o.timeout_s, 120);

    char *plain[] = {"sockmatrix", "run", "--preset=quick", "--hosts=all", NULL};
    assert_int_equal(parse(plain, ARGC(plain), &o, &err), 0);
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
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_true(o.reps_auto);
    assert_int_equal(o.repetitions, 0);
    assert_int_equal(o.reps.min, 5);
    assert_int_equal(o.reps.max, 30);
    assert_true(o.reps.ci_rel == 0.05);

    char *tuned[] = {
        "sockmatrix", "run",      "--preset", "quick", "--repetitions", "auto", "--max-repetitions",
        "3",          "--ci-rel", "0.02",     NULL};
    assert_int_equal(parse(tuned, ARGC(tuned), &o, &err), 0);
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
    assert_fails_naming(alone, ARGC(alone), "go with --repetitions auto");
    char *max_alone[] = {"sockmatrix", "run", "--preset", "quick", "--max-repetitions", "9", NULL};
    assert_fails_naming(max_alone, ARGC(max_alone), "go with --repetitions auto");
    static const char *const bad_ci[] = {"0", "1", "x", "-0.1", "0.05x"};
    for (size_t i = 0; i < sizeof bad_ci / sizeof *bad_ci; i++) {
        char *bad[] = {"sockmatrix", "run",      "--preset",        "q", "--repetitions",
                       "auto",       "--ci-rel", (char *)bad_ci[i], NULL};
        assert_fails_naming(bad, ARGC(bad), "--ci-rel:");
    }
    char *bad_max[] = {"sockmatrix",        "run", "--preset", "q", "--repetitions", "auto",
                       "--max-repetitions", "101", NULL};
    assert_fails_naming(bad_max, ARGC(bad_max), "--max-repetitions:");
    char *spec_auto[] = {"sockmatrix", "run", "--spec", "f.json", "--repetitions", "auto", NULL};
    assert_fails_naming(spec_auto, ARGC(spec_auto), "--repetitions goes with --preset only");
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
        assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
        assert_int_equal(o.format, want[i]);
    }
    char *bad[] = {"sockmatrix", "run", "--preset", "quick", "--wait", "--format", "xml", NULL};
    assert_fails_naming(bad, ARGC(bad), "--format: 'xml' is not table, csv, md or json");
}

static void test_cli_run_with_a_spec_file_refuses_hosts_and_repetitions(void **state)
{
    (void)state;
    char *argv[] = {"sockmatrix", "run", "--spec", "my.json", "--wait", NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_string_equal(o.spec_file, "my.json");
    assert_null(o.preset);

    char *hosts[] = {"sockmatrix", "run", "--spec", "my.json", "--hosts", "h1", NULL};
    assert_fails_naming(hosts, ARGC(hosts), "--hosts goes with --preset only");
    char *reps[] = {"sockmatrix", "run", "--repetitions", "3", "--spec", "my.json", NULL};
    assert_fails_naming(reps, ARGC(reps), "--repetitions goes with --preset only");
}

static void test_cli_run_needs_exactly_one_of_preset_and_spec(void **state)
{
    (void)state;
    char *none[] = {"sockmatrix", "run", "--wait", NULL};
    assert_fails_naming(none, ARGC(none), "give --preset NAME or --spec FILE");
    char *both[] = {"sockmatrix", "run", "--preset", "quick", "--spec", "f", NULL};
    assert_fails_naming(both, ARGC(both), "not both");
}

static void test_cli_run_format_and_timeout_need_wait(void **state)
{
    (void)state;
    char *fmt[] = {"sockmatrix", "run", "--preset", "quick", "--format", "csv", NULL};
    assert_fails_naming(fmt, ARGC(fmt), "--format goes with --wait");
    char *tmo[] = {"sockmatrix", "run", "--preset", "quick", "--timeout-s", "5", NULL};
    assert_fails_naming(tmo, ARGC(tmo), "--timeout-s goes with --wait");
}

static void test_cli_run_bounds_repetitions_timeout_and_host_names(void **state)
{
    (void)state;
    static const char *const bad_reps[] = {"0", "101", "x", "-1", "2x", " 3"};
    for (size_t i = 0; i < sizeof bad_reps / sizeof *bad_reps; i++) {
        char *argv[] = {"sockmatrix",        "run", "--preset", "q", "--repetitions",
                        (char *)bad_reps[i], NULL};
        assert_fails_naming(argv, ARGC(argv), "--repetitions:");
    }
    char *max[] = {"sockmatrix", "run", "--preset", "q", "--repetitions", "100", NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(parse(max, ARGC(max), &o, &err), 0);
    assert_int_equal(o.repetitions, 100);

    static const char *const bad_timeouts[] = {"0", "604801", "1h", ""};
    for (size_t i = 0; i < sizeof bad_timeouts / sizeof *bad_timeouts; i++) {
        char *argv[] = {
            "sockmatrix", "run", "--preset", "q", "--wait", "--timeout-s", (char *)bad_timeouts[i],
            NULL};
        assert_fails_naming(argv, ARGC(argv), "--timeout-s");
    }

    char name65[66];
    memset(name65, 'a', 65);
    name65[65] = '\0';
    static const char *const bad_hosts[] = {"", "h1,", ",h1", "h1,,h2", "h 1", "h1;h2"};
    for (size_t i = 0; i < sizeof bad_hosts / sizeof *bad_hosts; i++) {
        char *argv[] = {"sockmatrix",         "run", "--preset", "q", "--hosts",
                        (char *)bad_hosts[i], NULL};
        assert_fails_naming(argv, ARGC(argv), "--hosts");
    }
    char *long_name[] = {"sockmatrix", "run", "--preset", "q", "--hosts", name65, NULL};
    assert_fails_naming(long_name, ARGC(long_name), "longer than 64");
    char *ok[] = {"sockmatrix", "run", "--preset", "q", "--hosts", "node-1.lab,h_2", NULL};
    assert_int_equal(parse(ok, ARGC(ok), &o, &err), 0);
}

static void test_cli_show_cancel_export_need_a_numeric_run_id(void **state)
{
    (void)state;
    static const char *const words[] = {"show", "cancel", "export"};
    for (size_t i = 0; i < 3; i++) {
        char *none[] = {"sockmatrix", (char *)words[i], "--format", "csv", NULL};
        int argc = i == 2 ? ARGC(none) : 2;
        assert_fails_naming(none, argc, "which run?");
        char *word[] = {"sockmatrix", (char *)words[i], "latest", "--format", "csv", NULL};
        assert_fails_naming(word, i == 2 ? ARGC(word) : 3, "'latest' is not a run id");
        char *zero[] = {"sockmatrix", (char *)words[i], "0", "--format", "csv", NULL};
        assert_fails_naming(zero, i == 2 ? ARGC(zero) : 3, "'0' is not a run id");
        char *two[] = {"sockmatrix", (char *)words[i], "1", "2", "--format", "csv", NULL};
        assert_fails_naming(two, i == 2 ? ARGC(two) : 4, "unexpected argument '2'");
    }
    char *big[] = {"sockmatrix", "show", "18446744073709551615", NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(parse(big, ARGC(big), &o, &err), 0);
    assert_int_equal(o.run_id, UINT64_MAX);
    char *over[] = {"sockmatrix", "show", "18446744073709551616", NULL};
    assert_fails_naming(over, ARGC(over), "is not a run id");
}

static void test_cli_export_needs_a_file_format_and_takes_an_output(void **state)
{
    (void)state;
    char *argv[] = {"sockmatrix", "export", "5", "--format", "md", "-o", "t.md", NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_EXPORT);
    assert_int_equal(o.run_id, 5);
    assert_int_equal(o.format, SM_CLI_FMT_MD);
    assert_string_equal(o.output, "t.md");

    char *long_form[] = {"sockmatrix", "export", "--output=x.json", "--format=json", "5", NULL};
    assert_int_equal(parse(long_form, ARGC(long_form), &o, &err), 0);
    assert_int_equal(o.format, SM_CLI_FMT_JSON);
    assert_string_equal(o.output, "x.json");

    char *to_stdout[] = {"sockmatrix", "export", "5", "--format", "csv", NULL};
    assert_int_equal(parse(to_stdout, ARGC(to_stdout), &o, &err), 0);
    assert_null(o.output);

    /* Without --format: its default (Markdown on a terminal, CSV piped: test_cli_format). */
    char *no_fmt[] = {"sockmatrix", "export", "5", NULL};
    assert_int_equal(parse(no_fmt, ARGC(no_fmt), &o, &err), 0);
    assert_false(o.format_given);
    char *table[] = {"sockmatrix", "export", "5", "--format", "table", NULL};
    assert_int_equal(parse(table, ARGC(table), &o, &err), 0); /* every format now */
    assert_int_equal(o.format, SM_CLI_FMT_TABLE);
    char *no_file[] = {"sockmatrix", "export", "5", "--format", "csv", "-o", NULL};
    assert_fails_naming(no_file, ARGC(no_file), "--output needs a value");
}

static void test_cli_hosts_diff_takes_2_to_16_hosts_each_once_and_a_format(void **state)
{
    (void)state;
    sm_cli_opts o;
    sm_error err = {0};
    char *argv[] = {"sockmatrix", "hosts", "diff", "h1", "h2", "h3", "--format", "json", NULL};
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_HOSTS_DIFF);
    assert_int_equal(o.n_host_names, 3);
    assert_string_equal(o.host_names[0], "h1");
    assert_string_equal(o.host_names[2], "h3");
    assert_int_equal(o.format, SM_CLI_FMT_JSON);
    char *first[] = {"sockmatrix", "hosts", "--format=table", "diff", "a", "b", NULL};
    assert_int_equal(parse(first, ARGC(first), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_HOSTS_DIFF);
    assert_int_equal(o.format, SM_CLI_FMT_TABLE);
    assert_int_equal(o.n_host_names, 2);

    char *one[] = {"sockmatrix", "hosts", "diff", "h1", NULL};
    assert_fails_naming(one, ARGC(one), "hosts diff: compare at least 2 hosts");
    char *twice[] = {"sockmatrix", "hosts", "diff", "h1", "h2", "h1", NULL};
    assert_fails_naming(twice, ARGC(twice), "hosts diff: 'h1' is given twice");
    char *comma[] = {"sockmatrix", "hosts", "diff", "h1,h2", NULL};
    assert_fails_naming(comma, ARGC(comma), "'h1,h2' is not an agent name");
    char *empty[] = {"sockmatrix", "hosts", "diff", "h1", "", NULL};
    assert_fails_naming(empty, ARGC(empty), "'' is not an agent name");
    char *many[20] = {"sockmatrix", "hosts", "diff"};
    char names[17][8];
    for (int i = 0; i < 17; i++) {
        snprintf(names[i], sizeof names[i], "h%d", i);
        many[3 + i] = names[i];
    }
    assert_fails_naming(many, 20, "hosts diff: at most 16 hosts");
    char *csv[] = {"sockmatrix", "hosts", "diff", "a", "b", "--format", "csv", NULL};
    assert_int_equal(parse(csv, ARGC(csv), &o, &err), 0); /* every format now */
    assert_int_equal(o.format, SM_CLI_FMT_CSV);
    char *nosub[] = {"sockmatrix", "hosts", NULL};
    assert_fails_naming(nosub, ARGC(nosub), "hosts: diff or fingerprint?");
    char *badsub[] = {"sockmatrix", "hosts", "compare", "a", "b", NULL};
    assert_fails_naming(badsub, ARGC(badsub), "hosts: 'compare' is not diff or fingerprint");
    char *wait[] = {"sockmatrix", "hosts", "diff", "a", "b", "--wait", NULL};
    assert_fails_naming(wait, ARGC(wait), "--wait: not an option of hosts");
}

static void test_cli_compare_takes_two_different_runs_and_a_format(void **state)
{
    (void)state;
    sm_cli_opts o;
    sm_error err = {0};
    char *argv[] = {"sockmatrix", "compare",     "3",       "1", "--format",
                    "csv",        "--disturbed", "include", NULL};
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_COMPARE);
    assert_int_equal(o.run_id, 3);
    assert_int_equal(o.run_b, 1);
    assert_int_equal(o.format, SM_CLI_FMT_CSV);
    assert_true(o.include_disturbed);
    char *plain[] = {"sockmatrix", "compare", "1", "2", NULL};
    assert_int_equal(parse(plain, ARGC(plain), &o, &err), 0);
    assert_int_equal(o.format, SM_CLI_FMT_TABLE);

    char *one[] = {"sockmatrix", "compare", "1", NULL};
    assert_fails_naming(one, ARGC(one), "compare: which two runs?");
    char *none[] = {"sockmatrix", "compare", NULL};
    assert_fails_naming(none, ARGC(none), "compare: which two runs?");
    char *same[] = {"sockmatrix", "compare", "2", "2", NULL};
    assert_fails_naming(same, ARGC(same), "compare: run 2 against itself");
    char *three[] = {"sockmatrix", "compare", "1", "2", "3", NULL};
    assert_fails_naming(three, ARGC(three), "compare: unexpected argument '3'");
    char *word[] = {"sockmatrix", "compare", "1", "x", NULL};
    assert_fails_naming(word, ARGC(word), "compare: 'x' is not a run id");
    char *md[] = {"sockmatrix", "compare", "1", "2", "--format", "md", NULL};
    assert_int_equal(parse(md, ARGC(md), &o, &err), 0); /* every format now */
    assert_int_equal(o.format, SM_CLI_FMT_MD);
    char *bl[] = {"sockmatrix", "compare", "1", "2", "--baseline", "3", NULL};
    assert_fails_naming(bl, ARGC(bl), "--baseline: not an option of compare");
}

static void test_cli_schedule_add_pause_resume_delete_and_their_refusals(void **state)
{
    (void)state;
    sm_cli_opts o;
    sm_error err = {0};
    char *add[] = {"sockmatrix",
                   "schedule",
                   "add",
                   "--name",
                   "nightly",
                   "--preset",
                   "quick",
                   "--cron",
                   "0 3 * * *",
                   "--hosts",
                   "h1,h2",
                   "--webhook",
                   "http://127.0.0.1:9/h",
                   NULL};
    assert_int_equal(parse(add, ARGC(add), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_SCHEDULE_ADD);
    assert_string_equal(o.sched_name, "nightly");
    assert_string_equal(o.preset, "quick");
    assert_string_equal(o.cron, "0 3 * * *");
    assert_null(o.every);
    assert_string_equal(o.hosts, "h1,h2");
    assert_string_equal(o.webhook, "http://127.0.0.1:9/h");
    char *pause[] = {"sockmatrix", "schedule", "pause", "7", NULL};
    assert_int_equal(parse(pause, ARGC(pause), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_SCHEDULE_PAUSE);
    assert_int_equal(o.schedule_id, 7);
    char *del[] = {"sockmatrix", "schedule", "delete", "8", NULL};
    assert_int_equal(parse(del, ARGC(del), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_SCHEDULE_DELETE);
    char *rot[] = {"sockmatrix", "schedule", "rotate-secret", "9", NULL};
    assert_int_equal(parse(rot, ARGC(rot), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_SCHEDULE_ROTATE);
    assert_int_equal(o.schedule_id, 9);
    char *list[] = {"sockmatrix", "schedules", NULL};
    assert_int_equal(parse(list, ARGC(list), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_SCHEDULES);

    char *short_every[] = {"sockmatrix", "schedule", "add",     "--name", "n",
                           "--preset",   "quick",    "--every", "5s",     NULL};
    assert_fails_naming(short_every, ARGC(short_every),
                        "--every: \"5s\" is under the minimum of 10 s");
    char *bad_cron[] = {"sockmatrix", "schedule", "add",    "--name",    "n",
                        "--preset",   "quick",    "--cron", "0 0 * * 9", NULL};
    assert_fails_naming(bad_cron, ARGC(bad_cron), "--cron: the day-of-week field \"9\"");
    char *both[] = {"sockmatrix", "schedule", "add", "--name", "n",         "--preset",
                    "quick",      "--every",  "1m",  "--cron", "* * * * *", NULL};
    assert_fails_naming(both, ARGC(both), "give --every D");
    char *none[] = {"sockmatrix", "schedule", "add", "--name", "n", "--every", "1m", NULL};
    assert_fails_naming(none, ARGC(none), "give --preset NAME or --spec FILE");
    char *noname[] = {"sockmatrix", "schedule", "add", "--preset", "quick", "--every", "1m", NULL};
    assert_fails_naming(noname, ARGC(noname), "give it a --name");
    char *hook[] = {"sockmatrix", "schedule", "add", "--name",    "n",       "--preset",
                    "quick",      "--every",  "1m",  "--webhook", "ftp://x", NULL};
    assert_fails_naming(hook, ARGC(hook), "--webhook: only http:// and https://");
    char *noid[] = {"sockmatrix", "schedule", "resume", NULL};
    assert_fails_naming(noid, ARGC(noid), "schedule resume: which schedule?");
    char *word[] = {"sockmatrix", "schedule", "delete", "x", NULL};
    assert_fails_naming(word, ARGC(word), "schedule delete: 'x' is not a schedule id");
    char *opt[] = {"sockmatrix", "schedule", "pause", "3", "--every", "1m", NULL};
    assert_fails_naming(opt, ARGC(opt), "schedule pause: takes an id only");
    char *sub[] = {"sockmatrix", "schedule", "stop", "3", NULL};
    assert_fails_naming(sub, ARGC(sub),
                        "schedule: 'stop' is not add, pause, resume, delete or rotate-secret");
    char *bare[] = {"sockmatrix", "schedule", NULL};
    assert_fails_naming(bare, ARGC(bare), "schedule: add, pause, resume, delete or rotate-secret?");
    char *runopt[] = {"sockmatrix", "run", "--preset", "quick", "--every", "1m", NULL};
    assert_fails_naming(runopt, ARGC(runopt), "--every: not an option of run");
}

static void test_cli_hosts_fingerprint_takes_one_host(void **state)
{
    (void)state;
    sm_cli_opts o;
    sm_error err = {0};
    char *argv[] = {"sockmatrix", "hosts", "fingerprint", "h2", NULL};
    assert_int_equal(parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_HOSTS_FINGERPRINT);
    assert_int_equal(o.n_host_names, 1);
    assert_string_equal(o.host_names[0], "h2");
    assert_int_equal(o.format, SM_CLI_FMT_TABLE);
    char *json[] = {"sockmatrix", "hosts", "fingerprint", "--format", "json", "h2", NULL};
    assert_int_equal(parse(json, ARGC(json), &o, &err), 0);
    assert_int_equal(o.format, SM_CLI_FMT_JSON);
    char *none[] = {"sockmatrix", "hosts", "fingerprint", NULL};
    assert_fails_naming(none, ARGC(none), "hosts fingerprint: which host?");
    char *two[] = {"sockmatrix", "hosts", "fingerprint", "h1", "h2", NULL};
    assert_fails_naming(two, ARGC(two), "hosts fingerprint: unexpected argument 'h2'");
}

static void test_cli_bad_commands_and_options_are_named(void **state)
{
    (void)state;
    char *none[] = {"sockmatrix", NULL};
    assert_fails_naming(none, ARGC(none), "a command is needed");
    char *only_global[] = {"sockmatrix", "--coordinator", "http://x:1", NULL};
    assert_fails_naming(only_global, ARGC(only_global), "a command is needed");
    char *unknown[] = {"sockmatrix", "status", NULL};
    assert_fails_naming(unknown, ARGC(unknown), "unknown command 'status'");
    char *opt[] = {"sockmatrix", "runs", "--all", NULL};
    assert_fails_naming(opt, ARGC(opt), "runs: unknown option '--all'");
    char *opt_eq[] = {"sockmatrix", "run", "--presets=quick", NULL};
    assert_fails_naming(opt_eq, ARGC(opt_eq), "unknown option '--presets'");
    char *early[] = {"sockmatrix", "--wait", "run", "--preset", "q", NULL};
    assert_fails_naming(early, ARGC(early), "--wait: put it after the command");
    char *elsewhere[] = {"sockmatrix", "show", "3", "--wait", NULL};
    assert_fails_naming(elsewhere, ARGC(elsewhere), "--wait: not an option of show");
    char *short_o[] = {"sockmatrix", "run", "-o", "f", NULL};
    assert_fails_naming(short_o, ARGC(short_o), "-o: not an option of run");
    char *flag_value[] = {"sockmatrix", "run", "--preset", "q", "--wait=yes", NULL};
    assert_fails_naming(flag_value, ARGC(flag_value), "--wait takes no value");
    char *empty[] = {"sockmatrix", "run", "--preset", "", NULL};
    assert_fails_naming(empty, ARGC(empty), "--preset: the value is empty");
    char *missing[] = {"sockmatrix", "--token-file", NULL};
    assert_fails_naming(missing, ARGC(missing), "--token-file needs a value");
    char *url[] = {"sockmatrix", "--coordinator", "127.0.0.1:8080", "agents", NULL};
    assert_fails_naming(url, ARGC(url), "--coordinator: '127.0.0.1:8080'");
    char *url2[] = {"sockmatrix", "--coordinator", "http://", "agents", NULL};
    assert_fails_naming(url2, ARGC(url2), "--coordinator");
    char *url3[] = {"sockmatrix", "--coordinator", "http://a b", "agents", NULL};
    assert_fails_naming(url3, ARGC(url3), "space or control character");
}

static void test_cli_takes_whole_option_names_and_ends_options_at_a_double_dash(void **state)
{
    (void)state;
    sm_cli_opts o;
    sm_error err;
    /* getopt_long would take a unique prefix; the command line takes whole names only. */
    char *prefix[] = {"sockmatrix", "run", "--pre", "quick", NULL};
    assert_fails_naming(prefix, ARGC(prefix), "run: unknown option '--pre' (see --help)");
    char *global[] = {"sockmatrix", "--coord=http://a:1", "agents", NULL};
    assert_fails_naming(global, ARGC(global), "unknown option '--coord'");
    char *cluster[] = {"sockmatrix", "export", "5", "--format", "csv", "-ofile", NULL};
    assert_fails_naming(cluster, ARGC(cluster), "export: unknown option '-ofile'");
    char *early_o[] = {"sockmatrix", "-o", "x", "export", NULL};
    assert_fails_naming(early_o, ARGC(early_o), "-o: put it after the command");
    char *help_eq[] = {"sockmatrix", "--help=x", NULL};
    assert_fails_naming(help_eq, ARGC(help_eq), "--help takes no value");

    /* A value is the next argument whatever it looks like. */
    char *dash_value[] = {"sockmatrix", "run", "--preset", "--wait", NULL};
    assert_int_equal(parse(dash_value, ARGC(dash_value), &o, &err), 0);
    assert_string_equal(o.preset, "--wait");
    assert_false(o.wait);

    /* "--" ends the options, before the command or after it. */
    char *before[] = {"sockmatrix", "--", "show", "--wait", NULL};
    assert_fails_naming(before, ARGC(before), "show: '--wait' is not a run id");
    char *after[] = {"sockmatrix", "show", "--", "5", NULL};
    assert_int_equal(parse(after, ARGC(after), &o, &err), 0);
    assert_int_equal(o.run_id, 5);
    char *two[] = {"sockmatrix", "show", "5", "--", "--help", NULL};
    assert_fails_naming(two, ARGC(two), "show: unexpected argument '--help'");
    /* A token file named "--" is a value, not the end of the options. */
    char *token[] = {"sockmatrix", "--token-file", "--", "show", "--wait", NULL};
    assert_fails_naming(token, ARGC(token), "--wait: not an option of show");

    /* The same line parses the same twice: getopt_long's state starts afresh. */
    char *again[] = {"sockmatrix", "export", "--output=x.json", "--format=json", "5", NULL};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(parse(again, ARGC(again), &o, &err), 0);
        assert_int_equal(o.run_id, 5);
        assert_string_equal(o.output, "x.json");
    }
}

/* ---- the text grid ---- */

static void test_cli_grid_aligns_columns_without_trailing_blanks(void **state)
{
    (void)state;
    sm_grid g = {3, 0, "rll", NULL, SM_CLI_FMT_TABLE};
    static const char *const head[] = {"ID", "NAME", "STATE"};
    static const char *const row1[] = {"7", "seed-tcp-unix", "done"};
    static const char *const row2[] = {"12", NULL, "running"};
    assert_int_equal(sm_grid_row(&g, head), 0);
    assert_int_equal(sm_grid_row(&g, row1), 0);
    assert_int_equal(sm_grid_row(&g, row2), 0);
    char buf[256] = {0};
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    assert_non_null(f);
    sm_grid_print(&g, f);
    fclose(f);
    sm_grid_fini(&g);
    assert_string_equal(buf, "ID  NAME           STATE\n"
                             " 7  seed-tcp-unix  done\n"
                             "12                 running\n");
}

static void test_cli_help_and_version(void **state)
{
    (void)state;
    sm_cli_opts o;
    sm_error err;
    char *help[] = {"sockmatrix", "--help", NULL};
    assert_int_equal(parse(help, ARGC(help), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_HELP);
    char *h[] = {"sockmatrix", "run", "-h", NULL};
    assert_int_equal(parse(h, ARGC(h), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_HELP);
    /* --help wins over a command line that would fail its checks. */
    char *half[] = {"sockmatrix", "export", "--help", NULL};
    assert_int_equal(parse(half, ARGC(half), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_HELP);
    char *ver[] = {"sockmatrix", "--version", NULL};
    assert_int_equal(parse(ver, ARGC(ver), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_VERSION);
    const char *u = sm_cli_usage();
    assert_non_null(
        strstr(u, "sockmatrix [--coordinator URL] [--token-file PATH] [--cacert FILE] COMMAND"));
    assert_non_null(strstr(u, "export RUN [--format csv|md|json] [-o FILE]"));
    /* What presets and a --spec file do now, not what they did. */
    assert_non_null(strstr(u, "each one's jobs on\n"));
    assert_non_null(strstr(u, "a --spec file is checked here"));
    assert_null(strstr(u, "a --spec file is sent as it is"));
}

/* ---- the token file ---- */

static char *write_token(const char *dir, const char *text, mode_t mode)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/token", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
    return path;
}

static void test_cli_token_file_is_one_line_and_private(void **state)
{
    (void)state;
    char dir[] = "/tmp/sm-cli-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char tok[SM_CLI_TOKEN_MAX];
    sm_error err = {0};

    char *path = write_token(dir, "s3cret-token-0123456789\nsecond line\n", 0600);
    assert_int_equal(sm_cli_load_token(path, tok, sizeof tok, &err), 0);
    assert_string_equal(tok, "s3cret-token-0123456789");

    path = write_token(dir, "crlf-token\r\n", 0400);
    assert_int_equal(sm_cli_load_token(path, tok, sizeof tok, &err), 0);
    assert_string_equal(tok, "crlf-token");

    path = write_token(dir, "s3cret\n", 0640);
    assert_int_equal(sm_cli_load_token(path, tok, sizeof tok, &err), SM_EINVAL);
    assert_msg_has(&err, "readable by group or others");
    assert_msg_has(&err, "chmod 600");
    path = write_token(dir, "s3cret\n", 0604);
    assert_int_equal(sm_cli_load_token(path, tok, sizeof tok, &err), SM_EINVAL);

    path = write_token(dir, "\n", 0600);
    assert_int_equal(sm_cli_load_token(path, tok, sizeof tok, &err), SM_EINVAL);
    assert_msg_has(&err, "empty");

    char big[SM_CLI_TOKEN_MAX + 10];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    path = write_token(dir, big, 0600);
    assert_int_equal(sm_cli_load_token(path, tok, sizeof tok, &err), SM_EINVAL);
    assert_msg_has(&err, "longer than");

    unlink(path);
    assert_int_equal(sm_cli_load_token(path, tok, sizeof tok, &err), SM_ESYS);
    assert_msg_has(&err, "cannot open");
    rmdir(dir);
}

/* ---- decoders: each reads what coordinator/schema/apijson.c writes ---- */

static void assert_decode_fails(int rc, const sm_error *err, const char *needle)
{
    assert_true(rc == SM_EPARSE || rc == SM_EINVAL);
    assert_int_equal(err->code, rc);
    assert_msg_has(err, needle);
}

static void test_apiview_run_reads_the_coordinators_run_with_its_cells(void **state)
{
    (void)state;
    sm_api_run r = {7, "seed-tcp-unix", "running", "", 36, 12, 1, 1700000000123, 0, false, NULL, 0};
    sm_api_cell cells[2] = {
        {0, "h1", "",
         "{\"workload\":\"stream\",\"transport\":\"tcp\",\"nodelay\":true,"
         "\"msg_size\":128}",
         12, 4, 2, 5, 1},
        {1, "h2", NULL, NULL, 12, 12, 0, 0, 0},
    };
    char *json = sm_api_run_encode(&r, cells, 2);
    assert_non_null(json);
    sm_apiview_run run;
    sm_apiview_cell *c = NULL;
    size_t n = 0;
    sm_error err = {0};
    assert_int_equal(sm_apiview_run_decode(json, strlen(json), &run, &c, &n, &err), 0);
    assert_int_equal(run.id, 7);
    assert_string_equal(run.name, "seed-tcp-unix");
    assert_string_equal(run.state, "running");
    assert_string_equal(run.reason, "");
    assert_true(run.parallel);
    assert_string_equal(run.parallel_note, "");
    assert_int_equal(run.done, 12);
    assert_int_equal(run.failed, 1);
    assert_int_equal(run.total, 36);
    assert_int_equal(run.created_ms, 1700000000123);
    assert_int_equal(run.finished_ms, 0);
    assert_int_equal(n, 2);
    assert_int_equal(c[0].index, 0);
    assert_string_equal(c[0].host, "h1");
    assert_string_equal(c[0].peer, "");
    /* The coordinator's name for the test, as the run's table columns have it. */
    assert_string_equal(c[0].test, "stream tcp+nodelay 128 B x 2048");
    assert_int_equal(c[0].jobs, 12);
    assert_int_equal(c[0].queued, 4);
    assert_int_equal(c[0].active, 2);
    assert_int_equal(c[0].done, 5);
    assert_int_equal(c[0].failed, 1);
    assert_string_equal(c[1].host, "h2");
    assert_string_equal(c[1].test, ""); /* params null: shown empty, not fatal */
    assert_int_equal(c[1].queued, 12);
    free(c);

    /* Without cells: the run alone, the cells list not even needed. */
    memset(&run, 0, sizeof run);
    assert_int_equal(sm_apiview_run_decode(json, strlen(json), &run, NULL, NULL, &err), 0);
    assert_int_equal(run.id, 7);
    free(json);
}

static void test_apiview_run_rejects_what_it_cannot_read(void **state)
{
    (void)state;
    static const struct {
        const char *json, *needle;
    } cases[] = {
        {"", "invalid JSON"},
        {"[]", "expected a JSON object"},
        {"{\"id\":\"7\"} x", "junk after"},
        {"{\"name\":\"r\",\"state\":\"done\",\"progress\":{\"done\":1,\"failed\":0,\"total\":1},"
         "\"created_ms\":1,\"finished_ms\":2}",
         "run: id"},
        {"{\"id\":\"seven\",\"name\":\"r\",\"state\":\"done\"}", "'seven' is not an unsigned"},
        {"{\"id\":\"7\",\"name\":3,\"state\":\"done\"}", "run: name: expected a string"},
        {"{\"id\":\"7\",\"name\":\"r\",\"state\":\"done\",\"created_ms\":1,\"finished_ms\":2}",
         "run: progress: expected an object"},
        {"{\"id\":\"7\",\"name\":\"r\",\"state\":\"done\",\"progress\":{\"done\":\"1\","
         "\"failed\":0,\"total\":1},\"created_ms\":1,\"finished_ms\":2}",
         "run.progress: done"},
        {"{\"id\":\"7\",\"name\":\"r\",\"state\":\"done\",\"progress\":{\"done\":-1,"
         "\"failed\":0,\"total\":1},\"created_ms\":1,\"finished_ms\":2}",
         "run.progress: done"},
        {"{\"id\":\"7\",\"name\":\"r\",\"state\":\"done\",\"progress\":{\"done\":1,"
         "\"failed\":0,\"total\":4294967296},\"created_ms\":1,\"finished_ms\":2}",
         "above the maximum"},
        {"{\"id\":\"7\",\"name\":\"r\",\"state\":\"a-state-name-far-too-long\",\"progress\":"
         "{\"done\":1,\"failed\":0,\"total\":1},\"created_ms\":1,\"finished_ms\":2}",
         "run: state: 25 bytes, longer than 15"},
        {"{\"id\":\"7\",\"name\":\"r\",\"state\":\"done\",\"progress\":{\"done\":1,"
         "\"failed\":0,\"total\":1},\"created_ms\":1.5,\"finished_ms\":2}",
         "run: created_ms"},
        {"{\"id\":\"7\",\"name\":\"r\",\"state\":\"done\",\"progress\":{\"done\":1,"
         "\"failed\":0,\"total\":1},\"created_ms\":1,\"finished_ms\":2}",
         "cells: expected a list"},
        {"{\"id\":\"7\",\"name\":\"r\",\"state\":\"done\",\"progress\":{\"done\":1,"
         "\"failed\":0,\"total\":1},\"created_ms\":1,\"finished_ms\":2,\"cells\":[{\"index\":0,"
         "\"host\":\"h1\",\"jobs\":1,\"queued\":0,\"active\":0,\"done\":1}]}",
         "cells[0]: failed"},
        {"{\"id\":\"7\",\"name\":\"r\",\"state\":\"done\",\"progress\":{\"done\":1,"
         "\"failed\":0,\"total\":1},\"created_ms\":1,\"finished_ms\":2,\"cells\":[7]}",
         "cells[0]: expected an object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sm_apiview_run run;
        memset(&run, 0x5A, sizeof run);
        sm_apiview_cell *c = (sm_apiview_cell *)&run; /* must stay untouched on failure */
        size_t n = 99;
        sm_error err = {0};
        int rc = sm_apiview_run_decode(cases[i].json, strlen(cases[i].json), &run, &c, &n, &err);
        assert_decode_fails(rc, &err, cases[i].needle);
        assert_ptr_equal(c, (sm_apiview_cell *)&run);
        assert_int_equal(n, 99);
        assert_int_equal(run.name[0], 0x5A);
    }
}

static void test_apiview_run_shortens_a_long_reason_and_keeps_utf8_whole(void **state)
{
    (void)state;
    char reason[2000];
    /* "x" then "é"s of two bytes each, so that the cut falls inside one and must back off. */
    reason[0] = 'x';
    for (size_t i = 1; i + 2 < sizeof reason; i += 2)
        memcpy(reason + i, "\xc3\xa9", 2);
    reason[sizeof reason - 1] = '\0';
    sm_api_run r = {3, "r", "failed", reason, 1, 0, 1, 1, 2, false, NULL, 0};
    char *json = sm_api_runs_encode(&r, 1);
    sm_apiview_run *runs = NULL;
    size_t n = 0;
    sm_error err = {0};
    assert_int_equal(sm_apiview_runs_decode(json, strlen(json), &runs, &n, &err), 0);
    free(json);
    assert_int_equal(n, 1);
    size_t len = strlen(runs[0].reason);
    assert_true(len < sizeof runs[0].reason);
    assert_string_equal(runs[0].reason + len - 3, "...");
    assert_int_equal(len, sizeof runs[0].reason - 2); /* one byte short: the é stayed whole */
    assert_int_equal((len - 3 - 1) % 2, 0);
    assert_string_equal(runs[0].state, "failed");
    free(runs);
}

static void test_apiview_runs_reads_a_list_and_an_empty_one(void **state)
{
    (void)state;
    sm_api_run r[2] = {{9, "quick", "done", "", 6, 6, 0, 10, 20, true,
                        "h1, h2 share one machine (boot id 4af93bb9)", 0},
                       {8, "full", "cancelled", "cancelled", 60, 3, 2, 5, 9, false,
                        "h1, h2 share one machine", 0}};
    char *json = sm_api_runs_encode(r, 2);
    sm_apiview_run *runs = NULL;
    size_t n = 0;
    sm_error err = {0};
    assert_int_equal(sm_apiview_runs_decode(json, strlen(json), &runs, &n, &err), 0);
    free(json);
    assert_int_equal(n, 2);
    assert_int_equal(runs[0].id, 9);
    assert_string_equal(runs[1].state, "cancelled");
    assert_string_equal(runs[1].reason, "cancelled");
    assert_int_equal(runs[1].failed, 2);
    assert_int_equal(runs[1].finished_ms, 9);
    /* One at a time and why; side by side with the warning. */
    assert_false(runs[0].parallel);
    assert_string_equal(runs[0].parallel_note, "h1, h2 share one machine (boot id 4af93bb9)");
    assert_true(runs[1].parallel);
    assert_string_equal(runs[1].parallel_note, "h1, h2 share one machine");
    free(runs);

    /* A coordinator before these fields: side by side, nothing to say. */
    static const char old[] = "{\"runs\":[{\"id\":\"3\",\"name\":\"r\",\"state\":\"done\","
                              "\"reason\":\"\",\"progress\":{\"done\":1,\"failed\":0,"
                              "\"total\":1},\"created_ms\":1,\"finished_ms\":2}]}";
    assert_int_equal(sm_apiview_runs_decode(old, strlen(old), &runs, &n, &err), 0);
    assert_true(runs[0].parallel);
    assert_string_equal(runs[0].parallel_note, "");
    free(runs);

    json = sm_api_runs_encode(NULL, 0);
    runs = (sm_apiview_run *)&n;
    assert_int_equal(sm_apiview_runs_decode(json, strlen(json), &runs, &n, &err), 0);
    free(json);
    assert_int_equal(n, 0);
    assert_null(runs);

    static const char *const bad[] = {"{}", "{\"runs\":{}}", "{\"runs\":[1]}",
                                      "{\"runs\":[{\"id\":\"1\"}]}"};
    static const char *const needle[] = {"runs: expected a list", "runs: expected a list",
                                         "runs[0]: expected an object", "runs[0]: name"};
    for (size_t i = 0; i < 4; i++) {
        assert_decode_fails(sm_apiview_runs_decode(bad[i], strlen(bad[i]), &runs, &n, &err), &err,
                            needle[i]);
    }
}

static void test_apiview_agents_reads_facts_labels_and_an_agent_without_facts(void **state)
{
    (void)state;
    sm_api_agent a[2] = {
        {"h1", "0123456789abcdef0123456789abcdef", "127.0.0.1", "online",
         "{\"rack\":\"1\",\"role\":\"test\"}",
         "{\"hostname\":\"box\",\"kernel\":\"6.1.0-13-amd64\",\"cpu_model\":\"Xeon\","
         "\"cores\":8,\"mem_bytes\":17179869184,\"congestion\":\"cubic\"}",
         1000, 1700000000000, 0},
        {"h2", "b", "127.0.0.2", "lost", NULL, NULL, 5, 6, 3},
    };
    char *json = sm_api_agents(a, 2);
    sm_apiview_agent *v = NULL;
    size_t n = 0;
    sm_error err = {0};
    assert_int_equal(sm_apiview_agents_decode(json, strlen(json), &v, &n, &err), 0);
    free(json);
    assert_int_equal(n, 2);
    assert_string_equal(v[0].name, "h1");
    assert_string_equal(v[0].status, "online");
    assert_string_equal(v[0].kernel, "6.1.0-13-amd64");
    assert_string_equal(v[0].cpu_model, "Xeon");
    assert_int_equal(v[0].cores, 8);
    assert_int_equal(v[0].mem_bytes, 17179869184ull);
    assert_int_equal(v[0].last_seen_ms, 1700000000000);
    assert_string_equal(v[0].labels, "rack=1,role=test");
    assert_string_equal(v[1].status, "lost");
    assert_string_equal(v[1].kernel, "");
    assert_int_equal(v[1].cores, 0);
    assert_int_equal(v[1].mem_bytes, 0);
    assert_string_equal(v[1].labels, "");
    free(v);
}

static void test_apiview_agents_rejects_bad_facts_and_labels(void **state)
{
    (void)state;
    static const struct {
        const char *json, *needle;
    } cases[] = {
        {"{\"agents\":[{\"status\":\"online\",\"last_seen_ms\":1}]}", "agents[0]: name"},
        {"{\"agents\":[{\"name\":\"h1\",\"status\":\"online\"}]}", "agents[0]: last_seen_ms"},
        {"{\"agents\":[{\"name\":\"h1\",\"status\":\"online\",\"last_seen_ms\":1,"
         "\"labels\":[\"a\"]}]}",
         "agents[0]: labels: expected an object"},
        {"{\"agents\":[{\"name\":\"h1\",\"status\":\"online\",\"last_seen_ms\":1,"
         "\"labels\":{\"rack\":2}}]}",
         "agents[0]: labels: rack: expected a string"},
        {"{\"agents\":[{\"name\":\"h1\",\"status\":\"online\",\"last_seen_ms\":1,"
         "\"facts\":\"linux\"}]}",
         "agents[0]: facts: expected an object"},
        {"{\"agents\":[{\"name\":\"h1\",\"status\":\"online\",\"last_seen_ms\":1,"
         "\"facts\":{\"kernel\":\"6\",\"cores\":-2,\"mem_bytes\":1}}]}",
         "agents[0].facts: cores"},
        {"{\"agents\":[{\"name\":\"h1\",\"status\":\"online\",\"last_seen_ms\":1,"
         "\"facts\":{\"kernel\":\"6\",\"cores\":2}}]}",
         "agents[0].facts: mem_bytes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sm_apiview_agent *v = NULL;
        size_t n = 0;
        sm_error err = {0};
        int rc = sm_apiview_agents_decode(cases[i].json, strlen(cases[i].json), &v, &n, &err);
        assert_decode_fails(rc, &err, cases[i].needle);
        assert_null(v);
    }
}

static void test_apiview_presets_reads_the_shipped_presets(void **state)
{
    (void)state;
    char *json = sm_presets_encode();
    assert_non_null(json);
    sm_apiview_preset *p = NULL;
    size_t n = 0;
    sm_error err = {0};
    assert_int_equal(sm_apiview_presets_decode(json, strlen(json), &p, &n, &err), 0);
    free(json);
    size_t shipped = 0;
    for (const sm_preset *s = sm_presets(); s->name; s++)
        shipped++;
    assert_int_equal(n, shipped);
    assert_string_equal(p[0].name, "seed-tcp-unix");
    assert_non_null(strstr(p[0].description, "TCP_NODELAY"));
    free(p);

    const char *bad = "{\"presets\":[{\"description\":\"x\"}]}";
    assert_decode_fails(sm_apiview_presets_decode(bad, strlen(bad), &p, &n, &err), &err,
                        "presets[0]: name");
}

static void test_apiview_error_reads_message_and_field(void **state)
{
    (void)state;
    char *json = sm_api_error("hosts: 'nobody' is not a registered agent", "hosts[0]");
    sm_apiview_error e;
    sm_error err = {0};
    assert_int_equal(sm_apiview_error_decode(json, strlen(json), &e, &err), 0);
    free(json);
    assert_string_equal(e.error, "hosts: 'nobody' is not a registered agent");
    assert_string_equal(e.field, "hosts[0]");

    json = sm_api_error("no such endpoint", NULL);
    assert_int_equal(sm_apiview_error_decode(json, strlen(json), &e, &err), 0);
    free(json);
    assert_string_equal(e.error, "no such endpoint");
    assert_string_equal(e.field, "");

    static const char *const bad[] = {"<html>502</html>", "{\"message\":\"x\"}",
                                      "{\"error\":false}"};
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(sm_apiview_error_decode(bad[i], strlen(bad[i]), &e, &err), SM_EPARSE);
}

static void test_apiview_run_id_reads_the_created_answer(void **state)
{
    (void)state;
    char *json = sm_api_run_created(42);
    uint64_t id = 0;
    sm_error err = {0};
    assert_int_equal(sm_apiview_run_id_decode(json, strlen(json), &id, &err), 0);
    free(json);
    assert_int_equal(id, 42);
    assert_int_equal(sm_apiview_run_id_decode("{\"run\":43}", 10, &id, &err), 0);
    assert_int_equal(id, 43);
    id = 5;
    assert_decode_fails(sm_apiview_run_id_decode("{\"run\":\"x\"}", 11, &id, &err), &err,
                        "created: run");
    assert_decode_fails(sm_apiview_run_id_decode("{}", 2, &id, &err), &err, "created: run");
    assert_int_equal(id, 5);
}

static void test_apiview_preset_request_is_the_exact_body(void **state)
{
    (void)state;
    char *body = NULL;
    sm_error err = {0};
    assert_int_equal(sm_apiview_preset_request("seed-tcp-unix", "h1,h2", 2, &body, &err), 0);
    assert_string_equal(body, "{\"preset\":\"seed-tcp-unix\",\"hosts\":[\"h1\",\"h2\"],"
                              "\"repetitions\":2}");
    free(body);
    assert_int_equal(sm_apiview_preset_request("quick", "all", 0, &body, &err), 0);
    assert_string_equal(body, "{\"preset\":\"quick\",\"hosts\":\"all\"}");
    free(body);
    assert_int_equal(sm_apiview_preset_request("a\"b", NULL, 0, &body, &err), 0);
    assert_string_equal(body, "{\"preset\":\"a\\\"b\"}");
    free(body);
    body = NULL;
    assert_int_equal(sm_apiview_preset_request("quick", "h1,", 0, &body, &err), SM_EINVAL);
    assert_msg_has(&err, "empty name");
    assert_null(body);

    /* And the coordinator's side reads it back into the preset's spec. */
    assert_int_equal(sm_apiview_preset_request("seed-tcp-unix", "h1", 3, &body, &err), 0);
    char *spec = NULL;
    assert_int_equal(sm_api_run_request(body, strlen(body), &spec, &err), 0);
    assert_non_null(strstr(spec, "\"hosts\":[\"h1\"]"));
    assert_non_null(strstr(spec, "\"repetitions\":3"));
    free(spec);
    free(body);
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

static void test_cli_num4_shows_four_significant_digits_as_the_dashboard_does(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {19957.3, "19960"}, {0.056712, "0.05671"}, {0, "0"},           {-1234.56, "-1235"},
        {0.001, "0.001"},   {9.9e-4, "9.900e-04"}, {1e9, "1.000e+09"}, {999999999, "1000000000"},
        {NAN, "-"},         {INFINITY, "-"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[48];
        sm_cli_num4(cases[i].v, buf, sizeof buf);
        assert_string_equal(buf, cases[i].want);
    }
    cJSON *o = cJSON_Parse("{\"s\":\"x\",\"n\":2.5,\"z\":null}");
    assert_non_null(o);
    assert_string_equal(sm_cli_jstr(o, "s"), "x");
    assert_string_equal(sm_cli_jstr(o, "n"), "");
    assert_string_equal(sm_cli_jstr(NULL, "s"), "");
    assert_true(sm_cli_jnum(o, "n") == 2.5);
    assert_true(isnan(sm_cli_jnum(o, "z")));
    assert_true(isnan(sm_cli_jnum(o, "absent")));
    cJSON_Delete(o);
}

static void test_cli_job_reason_is_a_failures_reason_or_what_disturbed_the_host(void **state)
{
    (void)state;
    static const struct {
        const char *job, *want;
    } cases[] = {
        {"{\"state\":\"failed\",\"reason\":\"connect: refused\"}", "connect: refused"},
        {"{\"state\":\"done\",\"result\":{\"host\":{\"disturbed\":true,"
         "\"disturbed_reason\":\"steal 12% of the job\"}}}",
         "disturbed: steal 12% of the job"},
        {"{\"state\":\"done\",\"result\":{\"host\":{\"disturbed\":true}}}", "disturbed"},
        {"{\"state\":\"done\",\"result\":{\"host\":{\"disturbed\":false,"
         "\"disturbed_reason\":\"\"}}}",
         ""},
        /* A pair job whose server side was the disturbed one. */
        {"{\"state\":\"done\",\"result\":{\"host\":{\"disturbed\":false}},\"sides\":{"
         "\"server\":{\"result\":{\"host\":{\"disturbed\":true,"
         "\"disturbed_reason\":\"rx thread waited for a CPU 40% of the job\"}}},"
         "\"client\":{\"result\":null}}}",
         "disturbed: rx thread waited for a CPU 40% of the job"},
        {"{\"state\":\"done\",\"result\":null}", ""},
        {"{\"state\":\"queued\"}", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *j = cJSON_Parse(cases[i].job);
        assert_non_null(j);
        char buf[300] = "junk";
        sm_cli_job_reason(j, buf, sizeof buf);
        assert_string_equal(buf, cases[i].want);
        cJSON_Delete(j);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_num4_shows_four_significant_digits_as_the_dashboard_does),
        cmocka_unit_test(test_cli_defaults_are_loopback_no_token_and_an_hour),
        cmocka_unit_test(test_cli_each_listing_command_parses_alone),
        cmocka_unit_test(test_cli_env_var_replaces_the_default_and_the_option_the_env_var),
        cmocka_unit_test(test_cli_global_options_go_before_or_after_the_command),
        cmocka_unit_test(test_cli_run_with_a_preset_takes_hosts_repetitions_wait_format_timeout),
        cmocka_unit_test(test_cli_run_wait_reads_every_format),
        cmocka_unit_test(test_cli_run_repetitions_auto_sends_the_adaptive_object),
        cmocka_unit_test(test_cli_run_with_a_spec_file_refuses_hosts_and_repetitions),
        cmocka_unit_test(test_cli_run_needs_exactly_one_of_preset_and_spec),
        cmocka_unit_test(test_cli_run_format_and_timeout_need_wait),
        cmocka_unit_test(test_cli_run_bounds_repetitions_timeout_and_host_names),
        cmocka_unit_test(test_cli_show_cancel_export_need_a_numeric_run_id),
        cmocka_unit_test(test_cli_export_needs_a_file_format_and_takes_an_output),
        cmocka_unit_test(test_cli_hosts_diff_takes_2_to_16_hosts_each_once_and_a_format),
        cmocka_unit_test(test_cli_compare_takes_two_different_runs_and_a_format),
        cmocka_unit_test(test_cli_hosts_fingerprint_takes_one_host),
        cmocka_unit_test(test_cli_bad_commands_and_options_are_named),
        cmocka_unit_test(test_cli_help_and_version),
        cmocka_unit_test(test_cli_takes_whole_option_names_and_ends_options_at_a_double_dash),
        cmocka_unit_test(test_cli_grid_aligns_columns_without_trailing_blanks),
        cmocka_unit_test(test_cli_token_file_is_one_line_and_private),
        cmocka_unit_test(test_apiview_run_reads_the_coordinators_run_with_its_cells),
        cmocka_unit_test(test_apiview_run_rejects_what_it_cannot_read),
        cmocka_unit_test(test_apiview_run_shortens_a_long_reason_and_keeps_utf8_whole),
        cmocka_unit_test(test_apiview_runs_reads_a_list_and_an_empty_one),
        cmocka_unit_test(test_apiview_agents_reads_facts_labels_and_an_agent_without_facts),
        cmocka_unit_test(test_apiview_agents_rejects_bad_facts_and_labels),
        cmocka_unit_test(test_apiview_presets_reads_the_shipped_presets),
        cmocka_unit_test(test_apiview_error_reads_message_and_field),
        cmocka_unit_test(test_apiview_run_id_reads_the_created_answer),
        cmocka_unit_test(test_apiview_preset_request_is_the_exact_body),
        cmocka_unit_test(test_cli_spec_file_error_names_the_file_and_the_line_and_column),
        cmocka_unit_test(test_cli_spec_position_counts_lines_and_columns_from_one),
        cmocka_unit_test(test_cli_unknown_preset_names_every_preset),
        cmocka_unit_test(test_cli_preset_request_takes_remeasure_and_names_the_fields_it_takes),
        cmocka_unit_test(test_cli_anomalies_takes_a_run_a_baseline_and_a_floor),
        cmocka_unit_test(test_cli_jobs_takes_a_run_a_host_a_state_and_a_format),
        cmocka_unit_test(test_cli_job_reason_is_a_failures_reason_or_what_disturbed_the_host),
        cmocka_unit_test(test_cli_trends_takes_a_host_or_pair_a_test_a_metric_and_a_format),
        cmocka_unit_test(test_cli_usage_says_percent_once),
        cmocka_unit_test(test_cli_jobs_cell_takes_a_cell_number_alone),
        cmocka_unit_test(test_cli_disturbed_include_goes_with_export_anomalies_and_run_wait),
        cmocka_unit_test(test_cli_schedule_add_pause_resume_delete_and_their_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
