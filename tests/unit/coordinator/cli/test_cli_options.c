/* Unit tests of the sockmatrix CLI's global options: defaults, the environment, where options go,
 * bad commands and options named, help, and the token file. */
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

/* The usage is printed as it is (fputs), never through printf: a "%%" would show doubled. */
static void test_cli_usage_says_percent_once(void **state)
{
    (void)state;
    assert_null(strstr(sm_cli_usage(), "%%"));
    assert_non_null(strstr(sm_cli_usage(), "95% CI"));
}

static void test_cli_defaults_are_loopback_no_token_and_an_hour(void **state)
{
    (void)state;
    char *argv[] = {"sockmatrix", "agents", NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(cli_fixture_parse(argv, ARGC(argv), &o, &err), 0);
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
        assert_int_equal(cli_fixture_parse(argv, ARGC(argv), &o, &err), 0);
        assert_int_equal(o.cmd, cases[i].cmd);
        char *extra[] = {"sockmatrix", (char *)cases[i].word, "7", NULL};
        cli_fixture_assert_fails_naming(extra, ARGC(extra), "unexpected argument '7'");
    }
}

static void test_cli_env_var_replaces_the_default_and_the_option_the_env_var(void **state)
{
    (void)state;
    char *argv[] = {"sockmatrix", "runs", NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(cli_fixture_parse_env(argv, ARGC(argv), "http://lab:9000", &o, &err), 0);
    assert_string_equal(o.coordinator, "http://lab:9000");
    /* An empty variable is an unset one. */
    assert_int_equal(cli_fixture_parse_env(argv, ARGC(argv), "", &o, &err), 0);
    assert_string_equal(o.coordinator, "http://127.0.0.1:8080");

    char *over[] = {"sockmatrix", "--coordinator", "https://c.example:443/", "runs", NULL};
    assert_int_equal(cli_fixture_parse_env(over, ARGC(over), "http://lab:9000", &o, &err), 0);
    assert_string_equal(o.coordinator, "https://c.example:443/");

    assert_int_equal(cli_fixture_parse_env(argv, ARGC(argv), "lab:9000", &o, &err), SM_EINVAL);
    cli_fixture_assert_msg_has(&err, "SOCKMATRIX_COORDINATOR: 'lab:9000'");
}

static void test_cli_global_options_go_before_or_after_the_command(void **state)
{
    (void)state;
    char *before[] = {"sockmatrix", "--coordinator", "https://a:1", "--token-file",
                      "/t",         "show",          "12",          NULL};
    sm_cli_opts o;
    sm_error err;
    assert_int_equal(cli_fixture_parse(before, ARGC(before), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_SHOW);
    assert_int_equal(o.run_id, 12);
    assert_string_equal(o.coordinator, "https://a:1");
    assert_string_equal(o.token_file, "/t");

    char *after[] = {"sockmatrix", "cancel", "--token-file=/t2", "99", "--coordinator=https://b:2",
                     NULL};
    assert_int_equal(cli_fixture_parse(after, ARGC(after), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_CANCEL);
    assert_int_equal(o.run_id, 99);
    assert_string_equal(o.coordinator, "https://b:2");
    assert_string_equal(o.token_file, "/t2");
}

static void test_cli_bad_commands_and_options_are_named(void **state)
{
    (void)state;
    char *none[] = {"sockmatrix", NULL};
    cli_fixture_assert_fails_naming(none, ARGC(none), "a command is needed");
    char *only_global[] = {"sockmatrix", "--coordinator", "http://x:1", NULL};
    cli_fixture_assert_fails_naming(only_global, ARGC(only_global), "a command is needed");
    char *unknown[] = {"sockmatrix", "status", NULL};
    cli_fixture_assert_fails_naming(unknown, ARGC(unknown), "unknown command 'status'");
    char *opt[] = {"sockmatrix", "runs", "--all", NULL};
    cli_fixture_assert_fails_naming(opt, ARGC(opt), "runs: unknown option '--all'");
    char *opt_eq[] = {"sockmatrix", "run", "--presets=quick", NULL};
    cli_fixture_assert_fails_naming(opt_eq, ARGC(opt_eq), "unknown option '--presets'");
    char *early[] = {"sockmatrix", "--wait", "run", "--preset", "q", NULL};
    cli_fixture_assert_fails_naming(early, ARGC(early), "--wait: put it after the command");
    char *elsewhere[] = {"sockmatrix", "show", "3", "--wait", NULL};
    cli_fixture_assert_fails_naming(elsewhere, ARGC(elsewhere), "--wait: not an option of show");
    char *short_o[] = {"sockmatrix", "run", "-o", "f", NULL};
    cli_fixture_assert_fails_naming(short_o, ARGC(short_o), "-o: not an option of run");
    char *flag_value[] = {"sockmatrix", "run", "--preset", "q", "--wait=yes", NULL};
    cli_fixture_assert_fails_naming(flag_value, ARGC(flag_value), "--wait takes no value");
    char *empty[] = {"sockmatrix", "run", "--preset", "", NULL};
    cli_fixture_assert_fails_naming(empty, ARGC(empty), "--preset: the value is empty");
    char *missing[] = {"sockmatrix", "--token-file", NULL};
    cli_fixture_assert_fails_naming(missing, ARGC(missing), "--token-file needs a value");
    char *url[] = {"sockmatrix", "--coordinator", "127.0.0.1:8080", "agents", NULL};
    cli_fixture_assert_fails_naming(url, ARGC(url), "--coordinator: '127.0.0.1:8080'");
    char *url2[] = {"sockmatrix", "--coordinator", "http://", "agents", NULL};
    cli_fixture_assert_fails_naming(url2, ARGC(url2), "--coordinator");
    char *url3[] = {"sockmatrix", "--coordinator", "http://a b", "agents", NULL};
    cli_fixture_assert_fails_naming(url3, ARGC(url3), "space or control character");
}

static void test_cli_takes_whole_option_names_and_ends_options_at_a_double_dash(void **state)
{
    (void)state;
    sm_cli_opts o;
    sm_error err;
    /* getopt_long would take a unique prefix; the command line takes whole names only, and
     * says which one was meant. */
    char *prefix[] = {"sockmatrix", "run", "--pre", "quick", NULL};
    cli_fixture_assert_fails_naming(prefix, ARGC(prefix),
                                    "run: unknown option '--pre': did you mean --preset?");
    char *global[] = {"sockmatrix", "--coord=http://a:1", "agents", NULL};
    cli_fixture_assert_fails_naming(global, ARGC(global), "unknown option '--coord'");
    char *cluster[] = {"sockmatrix", "export", "5", "--format", "csv", "-ofile", NULL};
    cli_fixture_assert_fails_naming(cluster, ARGC(cluster), "export: unknown option '-ofile'");
    char *early_o[] = {"sockmatrix", "-o", "x", "export", NULL};
    cli_fixture_assert_fails_naming(early_o, ARGC(early_o), "-o: put it after the command");
    char *help_eq[] = {"sockmatrix", "--help=x", NULL};
    cli_fixture_assert_fails_naming(help_eq, ARGC(help_eq), "--help takes no value");

    /* A value is the next argument whatever it looks like. */
    char *dash_value[] = {"sockmatrix", "run", "--preset", "--wait", NULL};
    assert_int_equal(cli_fixture_parse(dash_value, ARGC(dash_value), &o, &err), 0);
    assert_string_equal(o.preset, "--wait");
    assert_false(o.wait);

    /* "--" ends the options, before the command or after it. */
    char *before[] = {"sockmatrix", "--", "show", "--wait", NULL};
    cli_fixture_assert_fails_naming(before, ARGC(before), "show: '--wait' is not a run id");
    char *after[] = {"sockmatrix", "show", "--", "5", NULL};
    assert_int_equal(cli_fixture_parse(after, ARGC(after), &o, &err), 0);
    assert_int_equal(o.run_id, 5);
    char *two[] = {"sockmatrix", "show", "5", "--", "--help", NULL};
    cli_fixture_assert_fails_naming(two, ARGC(two), "show: unexpected argument '--help'");
    /* A token file named "--" is a value, not the end of the options. */
    char *token[] = {"sockmatrix", "--token-file", "--", "show", "--wait", NULL};
    cli_fixture_assert_fails_naming(token, ARGC(token), "--wait: not an option of show");

    /* The same line parses the same twice: getopt_long's state starts afresh. */
    char *again[] = {"sockmatrix", "export", "--output=x.json", "--format=json", "5", NULL};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(cli_fixture_parse(again, ARGC(again), &o, &err), 0);
        assert_int_equal(o.run_id, 5);
        assert_string_equal(o.output, "x.json");
    }
}

static void test_cli_help_and_version(void **state)
{
    (void)state;
    sm_cli_opts o;
    sm_error err;
    char *help[] = {"sockmatrix", "--help", NULL};
    assert_int_equal(cli_fixture_parse(help, ARGC(help), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_HELP);
    char *h[] = {"sockmatrix", "run", "-h", NULL};
    assert_int_equal(cli_fixture_parse(h, ARGC(h), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_HELP);
    /* --help wins over a command line that would fail its checks. */
    char *half[] = {"sockmatrix", "export", "--help", NULL};
    assert_int_equal(cli_fixture_parse(half, ARGC(half), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_HELP);
    assert_string_equal(o.help_cmd, "export"); /* export's part: the --help after it */
    char *ver[] = {"sockmatrix", "--version", NULL};
    assert_int_equal(cli_fixture_parse(ver, ARGC(ver), &o, &err), 0);
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

/* CMD --help and help CMD: CMD's part of the usage, every form of it, and no other command's. */
static void test_cli_help_of_one_command(void **state)
{
    (void)state;
    sm_cli_opts o;
    sm_error err;
    char *a[] = {"sockmatrix", "show", "--help", NULL};
    assert_int_equal(cli_fixture_parse(a, ARGC(a), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_HELP);
    assert_string_equal(o.help_cmd, "show");
    char *b[] = {"sockmatrix", "help", "jobs", NULL};
    assert_int_equal(cli_fixture_parse(b, ARGC(b), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_HELP);
    assert_string_equal(o.help_cmd, "jobs");
    char *c[] = {"sockmatrix", "help", NULL};
    assert_int_equal(cli_fixture_parse(c, ARGC(c), &o, &err), 0);
    assert_int_equal(o.cmd, SM_CLI_HELP);
    assert_null(o.help_cmd);
    char *d[] = {"sockmatrix", "help", "anomaly", NULL};
    cli_fixture_assert_fails_naming(d, ARGC(d),
                                    "unknown command 'anomaly': did you mean anomalies?");
    char *e[] = {"sockmatrix", "help", "show", "runs", NULL};
    cli_fixture_assert_fails_naming(e, ARGC(e), "help takes one command");

    char part[4096];
    size_t n = sm_cli_usage_of("jobs", part, sizeof part);
    assert_int_equal(n, strlen(part));
    assert_non_null(strstr(part, "  jobs RUN [--host H] [--state S] [--format FMT]\n"));
    assert_non_null(strstr(part, "  jobs RUN --cell N [--format FMT]\n"));
    assert_null(strstr(part, "  show RUN"));
    assert_non_null(strstr(part, "sockmatrix --help\n"));
    /* An option's entry goes with the commands it names; "run" is not "runs". */
    sm_cli_usage_of("trends", part, sizeof part);
    assert_non_null(strstr(part, "  --disturbed include|exclude"));
    sm_cli_usage_of("runs", part, sizeof part);
    assert_null(strstr(part, "--disturbed"));
    assert_null(strstr(part, "(--preset NAME"));
    sm_cli_usage_of("schedule", part, sizeof part);
    assert_non_null(strstr(part, "  schedule add --name N"));
    assert_non_null(strstr(part, "  schedule rotate-secret ID"));
    assert_null(strstr(part, "  schedules [--format FMT]"));
    assert_int_equal(sm_cli_usage_of("nosuch", part, sizeof part), 0);
    assert_string_equal(part, "");
    /* Cut short, it says so by ending where a whole line ends. */
    char small[40];
    assert_true(sm_cli_usage_of("jobs", small, sizeof small) > sizeof small);
    assert_true(strlen(small) < sizeof small);
    /* Every command has its part. */
    static const char *const every[] = {"agents",    "presets", "run",    "runs",      "show",
                                        "cancel",    "again",   "export", "anomalies", "explain",
                                        "hosts",     "compare", "jobs",   "trends",    "tests",
                                        "schedules", "schedule"};
    for (size_t i = 0; i < sizeof every / sizeof every[0]; i++)
        if (sm_cli_usage_of(every[i], part, sizeof part) == 0)
            fail_msg("no usage for %s", every[i]);
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
    cli_fixture_assert_msg_has(&err, "readable by group or others");
    cli_fixture_assert_msg_has(&err, "chmod 600");
    path = write_token(dir, "s3cret\n", 0604);
    assert_int_equal(sm_cli_load_token(path, tok, sizeof tok, &err), SM_EINVAL);

    path = write_token(dir, "\n", 0600);
    assert_int_equal(sm_cli_load_token(path, tok, sizeof tok, &err), SM_EINVAL);
    cli_fixture_assert_msg_has(&err, "empty");

    char big[SM_CLI_TOKEN_MAX + 10];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    path = write_token(dir, big, 0600);
    assert_int_equal(sm_cli_load_token(path, tok, sizeof tok, &err), SM_EINVAL);
    cli_fixture_assert_msg_has(&err, "longer than");

    unlink(path);
    assert_int_equal(sm_cli_load_token(path, tok, sizeof tok, &err), SM_ESYS);
    cli_fixture_assert_msg_has(&err, "cannot open");
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_defaults_are_loopback_no_token_and_an_hour),
        cmocka_unit_test(test_cli_each_listing_command_parses_alone),
        cmocka_unit_test(test_cli_env_var_replaces_the_default_and_the_option_the_env_var),
        cmocka_unit_test(test_cli_global_options_go_before_or_after_the_command),
        cmocka_unit_test(test_cli_bad_commands_and_options_are_named),
        cmocka_unit_test(test_cli_help_and_version),
        cmocka_unit_test(test_cli_help_of_one_command),
        cmocka_unit_test(test_cli_takes_whole_option_names_and_ends_options_at_a_double_dash),
        cmocka_unit_test(test_cli_token_file_is_one_line_and_private),
        cmocka_unit_test(test_cli_usage_says_percent_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
