/* Unit tests of the sockmatrix CLI's commands other than run: what each takes and what it refuses,
 * in one line naming the option. */
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

#include "coordinator/cli/cli.h"
#include "tests/unit/coordinator/cli/cli_fixture.h"

/* ---- option parsing ---- */

static void test_cli_anomalies_takes_a_run_a_baseline_and_a_floor(void **state)
{
    (void)state;
    char *argv[] = {"sockmatrix", "anomalies", "7",        "--baseline", "5",
                    "--floor",    "0.2",       "--format", "json",       NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(cli_fixture_parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_ANOMALIES);
    assert_int_equal(o.run_id, 7);
    assert_int_equal(o.baseline, 5);
    assert_string_equal(o.floor, "0.2");
    assert_int_equal(o.format, SM_CLI_FMT_JSON);
    char *plain[] = {"sockmatrix", "anomalies", "7", NULL};
    assert_int_equal(cli_fixture_parse(plain, ARGC(plain), &o, &err), 0);
    assert_int_equal(o.baseline, 0);
    assert_null(o.floor);
    assert_int_equal(o.format, SM_CLI_FMT_TABLE);

    char *norun[] = {"sockmatrix", "anomalies", NULL};
    cli_fixture_assert_fails_naming(norun, ARGC(norun), "anomalies: which run?");
    char *floor[] = {"sockmatrix", "anomalies", "7", "--floor", "15%", NULL};
    cli_fixture_assert_fails_naming(floor, ARGC(floor), "--floor: '15%' is not a fraction");
    char *zero[] = {"sockmatrix", "anomalies", "7", "--floor", "0", NULL};
    cli_fixture_assert_fails_naming(zero, ARGC(zero), "--floor");
    char *base[] = {"sockmatrix", "anomalies", "7", "--baseline", "x", NULL};
    cli_fixture_assert_fails_naming(base, ARGC(base), "--baseline: 'x' is not a run id");
    char *csv[] = {"sockmatrix", "anomalies", "7", "--format", "csv", NULL};
    assert_int_equal(cli_fixture_parse(csv, ARGC(csv), &o, &err), 0); /* every format now */
    assert_int_equal(o.format, SM_CLI_FMT_CSV);
    char *exp[] = {"sockmatrix", "export", "7", "--format", "csv", "--baseline", "5", NULL};
    cli_fixture_assert_fails_naming(exp, ARGC(exp), "--baseline: not an option of export");
    char *nowait[] = {"sockmatrix", "run", "--preset", "quick", "--floor", "0.2", NULL};
    cli_fixture_assert_fails_naming(nowait, ARGC(nowait), "--floor goes with --wait");
}

static void test_cli_jobs_takes_a_run_a_host_a_state_and_a_format(void **state)
{
    (void)state;
    char *argv[] = {"sockmatrix", "jobs",   "7",        "--host", "h2",
                    "--state",    "failed", "--format", "json",   NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(cli_fixture_parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_JOBS);
    assert_int_equal(o.run_id, 7);
    assert_string_equal(o.job_host, "h2");
    assert_string_equal(o.job_state, "failed");
    assert_int_equal(o.format, SM_CLI_FMT_JSON);
    char *plain[] = {"sockmatrix", "jobs", "7", NULL};
    assert_int_equal(cli_fixture_parse(plain, ARGC(plain), &o, &err), 0);
    assert_null(o.job_host);
    assert_null(o.job_state);
    assert_int_equal(o.format, SM_CLI_FMT_TABLE);

    char *norun[] = {"sockmatrix", "jobs", NULL};
    cli_fixture_assert_fails_naming(norun, ARGC(norun), "jobs: which run?");
    char *host[] = {"sockmatrix", "jobs", "7", "--host", "h 2", NULL};
    cli_fixture_assert_fails_naming(host, ARGC(host), "--host: 'h 2' is not an agent name");
    char *st[] = {"sockmatrix", "jobs", "7", "--state", "finished", NULL};
    cli_fixture_assert_fails_naming(st, ARGC(st), "--state: 'finished' is not queued");
    char *csv[] = {"sockmatrix", "jobs", "7", "--format", "csv", NULL};
    assert_int_equal(cli_fixture_parse(csv, ARGC(csv), &o, &err), 0); /* every format now */
    assert_int_equal(o.format, SM_CLI_FMT_CSV);
    char *show[] = {"sockmatrix", "show", "7", "--host", "h1", NULL};
    cli_fixture_assert_fails_naming(show, ARGC(show), "--host: not an option of show");
}

static void test_cli_trends_takes_a_host_or_pair_a_test_a_metric_and_a_format(void **state)
{
    (void)state;
    char *argv[] = {
        "sockmatrix", "trends",          "--host",   "h1->h2", "--test", "stream tcp 1 MiB",
        "--metric",   "throughput_MBps", "--format", "csv",    NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(cli_fixture_parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_TRENDS);
    assert_string_equal(o.job_host, "h1->h2");
    assert_string_equal(o.trend_test, "stream tcp 1 MiB");
    assert_string_equal(o.trend_metric, "throughput_MBps");
    assert_int_equal(o.format, SM_CLI_FMT_CSV);
    char *plain[] = {"sockmatrix", "trends", "--host", "node-1", "--test", "rr tcp", NULL};
    assert_int_equal(cli_fixture_parse(plain, ARGC(plain), &o, &err), 0);
    assert_null(o.trend_metric);
    assert_int_equal(o.format, SM_CLI_FMT_TABLE);

    char *notest[] = {"sockmatrix", "trends", "--host", "h1", NULL};
    cli_fixture_assert_fails_naming(notest, ARGC(notest),
                                    "trends: --host H and --test T are needed");
    char *half[] = {"sockmatrix", "trends", "--host", "h1->", "--test", "x", NULL};
    cli_fixture_assert_fails_naming(half, ARGC(half), "--host: 'h1->' is not an agent name");
    char *md[] = {"sockmatrix", "trends", "--host", "h1", "--test", "x", "--format", "md", NULL};
    assert_int_equal(cli_fixture_parse(md, ARGC(md), &o, &err), 0); /* every format now */
    assert_int_equal(o.format, SM_CLI_FMT_MD);
    char *jobs[] = {"sockmatrix", "jobs", "7", "--test", "x", NULL};
    cli_fixture_assert_fails_naming(jobs, ARGC(jobs), "--test: not an option of jobs");
}

static void test_cli_jobs_cell_takes_a_cell_number_alone(void **state)
{
    (void)state;
    sm_cli_opts o;
    sm_error err;
    char *argv[] = {"sockmatrix", "jobs", "7", "--cell", "0", "--format", "json", NULL};
    assert_int_equal(cli_fixture_parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_JOBS);
    assert_int_equal(o.run_id, 7);
    assert_true(o.have_job_cell);
    assert_int_equal(o.job_cell, 0);
    assert_int_equal(o.format, SM_CLI_FMT_JSON);
    char *plain[] = {"sockmatrix", "jobs", "7", NULL};
    assert_int_equal(cli_fixture_parse(plain, ARGC(plain), &o, &err), 0);
    assert_false(o.have_job_cell);

    char *bad[] = {"sockmatrix", "jobs", "7", "--cell", "-1", NULL};
    cli_fixture_assert_fails_naming(bad, ARGC(bad), "--cell: '-1' is not a cell number");
    char *big[] = {"sockmatrix", "jobs", "7", "--cell", "4294967296", NULL};
    cli_fixture_assert_fails_naming(big, ARGC(big), "--cell: '4294967296' is not a cell number");
    char *both[] = {"sockmatrix", "jobs", "7", "--cell", "2", "--host", "h1", NULL};
    cli_fixture_assert_fails_naming(both, ARGC(both), "--cell shows one cell's repetitions");
    char *show[] = {"sockmatrix", "show", "7", "--cell", "1", NULL};
    cli_fixture_assert_fails_naming(show, ARGC(show), "--cell: not an option of show");
}

static void test_cli_disturbed_include_goes_with_export_anomalies_and_run_wait(void **state)
{
    (void)state;
    sm_cli_opts o;
    sm_error err;
    char *exp[] = {"sockmatrix", "export", "7", "--format", "csv", "--disturbed", "include", NULL};
    assert_int_equal(cli_fixture_parse(exp, ARGC(exp), &o, &err), 0);
    assert_true(o.include_disturbed);
    char *an[] = {"sockmatrix", "anomalies", "7", "--disturbed", "exclude", NULL};
    assert_int_equal(cli_fixture_parse(an, ARGC(an), &o, &err), 0);
    assert_false(o.include_disturbed);
    char *run[] = {"sockmatrix", "run",         "--preset", "quick",
                   "--wait",     "--disturbed", "include",  NULL};
    assert_int_equal(cli_fixture_parse(run, ARGC(run), &o, &err), 0);
    assert_true(o.include_disturbed);
    char *plain[] = {"sockmatrix", "export", "7", "--format", "csv", NULL};
    assert_int_equal(cli_fixture_parse(plain, ARGC(plain), &o, &err), 0);
    assert_false(o.include_disturbed);

    char *bad[] = {"sockmatrix", "export", "7", "--format", "csv", "--disturbed", "yes", NULL};
    cli_fixture_assert_fails_naming(bad, ARGC(bad), "--disturbed: 'yes' is not include or exclude");
    char *nowait[] = {"sockmatrix", "run", "--preset", "quick", "--disturbed", "include", NULL};
    cli_fixture_assert_fails_naming(nowait, ARGC(nowait), "--disturbed goes with --wait");
    char *show[] = {"sockmatrix", "show", "7", "--disturbed", "include", NULL};
    cli_fixture_assert_fails_naming(show, ARGC(show), "--disturbed: not an option of show");
}

static void test_cli_show_cancel_export_need_a_numeric_run_id(void **state)
{
    (void)state;
    static const char *const words[] = {"show", "cancel", "export"};
    for (size_t i = 0; i < 3; i++) {
        char *none[] = {"sockmatrix", (char *)words[i], "--format", "csv", NULL};
        int argc = i == 2 ? ARGC(none) : 2;
        cli_fixture_assert_fails_naming(none, argc, "which run?");
        char *word[] = {"sockmatrix", (char *)words[i], "latest", "--format", "csv", NULL};
        cli_fixture_assert_fails_naming(word, i == 2 ? ARGC(word) : 3, "'latest' is not a run id");
        char *zero[] = {"sockmatrix", (char *)words[i], "0", "--format", "csv", NULL};
        cli_fixture_assert_fails_naming(zero, i == 2 ? ARGC(zero) : 3, "'0' is not a run id");
        char *two[] = {"sockmatrix", (char *)words[i], "1", "2", "--format", "csv", NULL};
        cli_fixture_assert_fails_naming(two, i == 2 ? ARGC(two) : 4, "unexpected argument '2'");
    }
    char *big[] = {"sockmatrix", "show", "18446744073709551615", NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(cli_fixture_parse(big, ARGC(big), &o, &err), 0);
    assert_int_equal(o.run_id, UINT64_MAX);
    char *over[] = {"sockmatrix", "show", "18446744073709551616", NULL};
    cli_fixture_assert_fails_naming(over, ARGC(over), "is not a run id");
}

static void test_cli_export_needs_a_file_format_and_takes_an_output(void **state)
{
    (void)state;
    char *argv[] = {"sockmatrix", "export", "5", "--format", "md", "-o", "t.md", NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(cli_fixture_parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_EXPORT);
    assert_int_equal(o.run_id, 5);
    assert_int_equal(o.format, SM_CLI_FMT_MD);
    assert_string_equal(o.output, "t.md");

    char *long_form[] = {"sockmatrix", "export", "--output=x.json", "--format=json", "5", NULL};
    assert_int_equal(cli_fixture_parse(long_form, ARGC(long_form), &o, &err), 0);
    assert_int_equal(o.format, SM_CLI_FMT_JSON);
    assert_string_equal(o.output, "x.json");

    char *to_stdout[] = {"sockmatrix", "export", "5", "--format", "csv", NULL};
    assert_int_equal(cli_fixture_parse(to_stdout, ARGC(to_stdout), &o, &err), 0);
    assert_null(o.output);

    /* Without --format: its default (Markdown on a terminal, CSV piped: test_cli_format). */
    char *no_fmt[] = {"sockmatrix", "export", "5", NULL};
    assert_int_equal(cli_fixture_parse(no_fmt, ARGC(no_fmt), &o, &err), 0);
    assert_false(o.format_given);
    char *table[] = {"sockmatrix", "export", "5", "--format", "table", NULL};
    assert_int_equal(cli_fixture_parse(table, ARGC(table), &o, &err), 0); /* every format now */
    assert_int_equal(o.format, SM_CLI_FMT_TABLE);
    char *no_file[] = {"sockmatrix", "export", "5", "--format", "csv", "-o", NULL};
    cli_fixture_assert_fails_naming(no_file, ARGC(no_file), "--output needs a value");
}

static void test_cli_hosts_diff_takes_2_to_16_hosts_each_once_and_a_format(void **state)
{
    (void)state;
    sm_cli_opts o;
    sm_error err = {0};
    char *argv[] = {"sockmatrix", "hosts", "diff", "h1", "h2", "h3", "--format", "json", NULL};
    assert_int_equal(cli_fixture_parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_HOSTS_DIFF);
    assert_int_equal(o.n_host_names, 3);
    assert_string_equal(o.host_names[0], "h1");
    assert_string_equal(o.host_names[2], "h3");
    assert_int_equal(o.format, SM_CLI_FMT_JSON);
    char *first[] = {"sockmatrix", "hosts", "--format=table", "diff", "a", "b", NULL};
    assert_int_equal(cli_fixture_parse(first, ARGC(first), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_HOSTS_DIFF);
    assert_int_equal(o.format, SM_CLI_FMT_TABLE);
    assert_int_equal(o.n_host_names, 2);

    char *one[] = {"sockmatrix", "hosts", "diff", "h1", NULL};
    cli_fixture_assert_fails_naming(one, ARGC(one), "hosts diff: compare at least 2 hosts");
    char *twice[] = {"sockmatrix", "hosts", "diff", "h1", "h2", "h1", NULL};
    cli_fixture_assert_fails_naming(twice, ARGC(twice), "hosts diff: 'h1' is given twice");
    char *comma[] = {"sockmatrix", "hosts", "diff", "h1,h2", NULL};
    cli_fixture_assert_fails_naming(comma, ARGC(comma), "'h1,h2' is not an agent name");
    char *empty[] = {"sockmatrix", "hosts", "diff", "h1", "", NULL};
    cli_fixture_assert_fails_naming(empty, ARGC(empty), "'' is not an agent name");
    char *many[20] = {"sockmatrix", "hosts", "diff"};
    char names[17][8];
    for (int i = 0; i < 17; i++) {
        snprintf(names[i], sizeof names[i], "h%d", i);
        many[3 + i] = names[i];
    }
    cli_fixture_assert_fails_naming(many, 20, "hosts diff: at most 16 hosts");
    char *csv[] = {"sockmatrix", "hosts", "diff", "a", "b", "--format", "csv", NULL};
    assert_int_equal(cli_fixture_parse(csv, ARGC(csv), &o, &err), 0); /* every format now */
    assert_int_equal(o.format, SM_CLI_FMT_CSV);
    char *nosub[] = {"sockmatrix", "hosts", NULL};
    cli_fixture_assert_fails_naming(nosub, ARGC(nosub), "hosts: diff or fingerprint?");
    char *badsub[] = {"sockmatrix", "hosts", "compare", "a", "b", NULL};
    cli_fixture_assert_fails_naming(badsub, ARGC(badsub),
                                    "hosts: 'compare' is not diff or fingerprint");
    char *wait[] = {"sockmatrix", "hosts", "diff", "a", "b", "--wait", NULL};
    cli_fixture_assert_fails_naming(wait, ARGC(wait), "--wait: not an option of hosts");
}

static void test_cli_compare_takes_two_different_runs_and_a_format(void **state)
{
    (void)state;
    sm_cli_opts o;
    sm_error err = {0};
    char *argv[] = {"sockmatrix", "compare",     "3",       "1", "--format",
                    "csv",        "--disturbed", "include", NULL};
    assert_int_equal(cli_fixture_parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_COMPARE);
    assert_int_equal(o.run_id, 3);
    assert_int_equal(o.run_b, 1);
    assert_int_equal(o.format, SM_CLI_FMT_CSV);
    assert_true(o.include_disturbed);
    char *plain[] = {"sockmatrix", "compare", "1", "2", NULL};
    assert_int_equal(cli_fixture_parse(plain, ARGC(plain), &o, &err), 0);
    assert_int_equal(o.format, SM_CLI_FMT_TABLE);

    char *one[] = {"sockmatrix", "compare", "1", NULL};
    cli_fixture_assert_fails_naming(one, ARGC(one), "compare: which two runs?");
    char *none[] = {"sockmatrix", "compare", NULL};
    cli_fixture_assert_fails_naming(none, ARGC(none), "compare: which two runs?");
    char *same[] = {"sockmatrix", "compare", "2", "2", NULL};
    cli_fixture_assert_fails_naming(same, ARGC(same), "compare: run 2 against itself");
    char *three[] = {"sockmatrix", "compare", "1", "2", "3", NULL};
    cli_fixture_assert_fails_naming(three, ARGC(three), "compare: unexpected argument '3'");
    char *word[] = {"sockmatrix", "compare", "1", "x", NULL};
    cli_fixture_assert_fails_naming(word, ARGC(word), "compare: 'x' is not a run id");
    char *md[] = {"sockmatrix", "compare", "1", "2", "--format", "md", NULL};
    assert_int_equal(cli_fixture_parse(md, ARGC(md), &o, &err), 0); /* every format now */
    assert_int_equal(o.format, SM_CLI_FMT_MD);
    char *bl[] = {"sockmatrix", "compare", "1", "2", "--baseline", "3", NULL};
    cli_fixture_assert_fails_naming(bl, ARGC(bl), "--baseline: not an option of compare");
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
    assert_int_equal(cli_fixture_parse(add, ARGC(add), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_SCHEDULE_ADD);
    assert_string_equal(o.sched_name, "nightly");
    assert_string_equal(o.preset, "quick");
    assert_string_equal(o.cron, "0 3 * * *");
    assert_null(o.every);
    assert_string_equal(o.hosts, "h1,h2");
    assert_string_equal(o.webhook, "http://127.0.0.1:9/h");
    char *pause[] = {"sockmatrix", "schedule", "pause", "7", NULL};
    assert_int_equal(cli_fixture_parse(pause, ARGC(pause), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_SCHEDULE_PAUSE);
    assert_int_equal(o.schedule_id, 7);
    char *del[] = {"sockmatrix", "schedule", "delete", "8", NULL};
    assert_int_equal(cli_fixture_parse(del, ARGC(del), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_SCHEDULE_DELETE);
    char *rot[] = {"sockmatrix", "schedule", "rotate-secret", "9", NULL};
    assert_int_equal(cli_fixture_parse(rot, ARGC(rot), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_SCHEDULE_ROTATE);
    assert_int_equal(o.schedule_id, 9);
    char *list[] = {"sockmatrix", "schedules", NULL};
    assert_int_equal(cli_fixture_parse(list, ARGC(list), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_SCHEDULES);

    char *short_every[] = {"sockmatrix", "schedule", "add",     "--name", "n",
                           "--preset",   "quick",    "--every", "5s",     NULL};
    cli_fixture_assert_fails_naming(short_every, ARGC(short_every),
                                    "--every: \"5s\" is under the minimum of 10 s");
    char *bad_cron[] = {"sockmatrix", "schedule", "add",    "--name",    "n",
                        "--preset",   "quick",    "--cron", "0 0 * * 9", NULL};
    cli_fixture_assert_fails_naming(bad_cron, ARGC(bad_cron),
                                    "--cron: the day-of-week field \"9\"");
    char *both[] = {"sockmatrix", "schedule", "add", "--name", "n",         "--preset",
                    "quick",      "--every",  "1m",  "--cron", "* * * * *", NULL};
    cli_fixture_assert_fails_naming(both, ARGC(both), "give --every D");
    char *none[] = {"sockmatrix", "schedule", "add", "--name", "n", "--every", "1m", NULL};
    cli_fixture_assert_fails_naming(none, ARGC(none), "give --preset NAME or --spec FILE");
    char *noname[] = {"sockmatrix", "schedule", "add", "--preset", "quick", "--every", "1m", NULL};
    cli_fixture_assert_fails_naming(noname, ARGC(noname), "give it a --name");
    char *hook[] = {"sockmatrix", "schedule", "add", "--name",    "n",       "--preset",
                    "quick",      "--every",  "1m",  "--webhook", "ftp://x", NULL};
    cli_fixture_assert_fails_naming(hook, ARGC(hook), "--webhook: only http:// and https://");
    char *noid[] = {"sockmatrix", "schedule", "resume", NULL};
    cli_fixture_assert_fails_naming(noid, ARGC(noid), "schedule resume: which schedule?");
    char *word[] = {"sockmatrix", "schedule", "delete", "x", NULL};
    cli_fixture_assert_fails_naming(word, ARGC(word), "schedule delete: 'x' is not a schedule id");
    char *opt[] = {"sockmatrix", "schedule", "pause", "3", "--every", "1m", NULL};
    cli_fixture_assert_fails_naming(opt, ARGC(opt), "schedule pause: takes an id only");
    char *sub[] = {"sockmatrix", "schedule", "stop", "3", NULL};
    cli_fixture_assert_fails_naming(
        sub, ARGC(sub), "schedule: 'stop' is not add, pause, resume, delete or rotate-secret");
    char *bare[] = {"sockmatrix", "schedule", NULL};
    cli_fixture_assert_fails_naming(bare, ARGC(bare),
                                    "schedule: add, pause, resume, delete or rotate-secret?");
    char *runopt[] = {"sockmatrix", "run", "--preset", "quick", "--every", "1m", NULL};
    cli_fixture_assert_fails_naming(runopt, ARGC(runopt), "--every: not an option of run");
}

static void test_cli_hosts_fingerprint_takes_one_host(void **state)
{
    (void)state;
    sm_cli_opts o;
    sm_error err = {0};
    char *argv[] = {"sockmatrix", "hosts", "fingerprint", "h2", NULL};
    assert_int_equal(cli_fixture_parse(argv, ARGC(argv), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_HOSTS_FINGERPRINT);
    assert_int_equal(o.n_host_names, 1);
    assert_string_equal(o.host_names[0], "h2");
    assert_int_equal(o.format, SM_CLI_FMT_TABLE);
    char *json[] = {"sockmatrix", "hosts", "fingerprint", "--format", "json", "h2", NULL};
    assert_int_equal(cli_fixture_parse(json, ARGC(json), &o, &err), 0);
    assert_int_equal(o.format, SM_CLI_FMT_JSON);
    char *none[] = {"sockmatrix", "hosts", "fingerprint", NULL};
    cli_fixture_assert_fails_naming(none, ARGC(none), "hosts fingerprint: which host?");
    char *two[] = {"sockmatrix", "hosts", "fingerprint", "h1", "h2", NULL};
    cli_fixture_assert_fails_naming(two, ARGC(two), "hosts fingerprint: unexpected argument 'h2'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_show_cancel_export_need_a_numeric_run_id),
        cmocka_unit_test(test_cli_export_needs_a_file_format_and_takes_an_output),
        cmocka_unit_test(test_cli_hosts_diff_takes_2_to_16_hosts_each_once_and_a_format),
        cmocka_unit_test(test_cli_compare_takes_two_different_runs_and_a_format),
        cmocka_unit_test(test_cli_hosts_fingerprint_takes_one_host),
        cmocka_unit_test(test_cli_anomalies_takes_a_run_a_baseline_and_a_floor),
        cmocka_unit_test(test_cli_jobs_takes_a_run_a_host_a_state_and_a_format),
        cmocka_unit_test(test_cli_trends_takes_a_host_or_pair_a_test_a_metric_and_a_format),
        cmocka_unit_test(test_cli_jobs_cell_takes_a_cell_number_alone),
        cmocka_unit_test(test_cli_disturbed_include_goes_with_export_anomalies_and_run_wait),
        cmocka_unit_test(test_cli_schedule_add_pause_resume_delete_and_their_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
