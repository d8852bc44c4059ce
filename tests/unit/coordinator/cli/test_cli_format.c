/* Unit tests of what makes the sockmatrix CLI one tool: the four output formats of its rows,
 * "did you mean", naming a test by a part of its label, API errors in the user's words, and
 * --format everywhere with export's default. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/cli/cli.h"
#include "coordinator/cli/cmd.h"
#include "coordinator/cli/grid.h"
#include "coordinator/cli/request.h"
#include "coordinator/cli/suggest.h"
#include "coordinator/cli/tests.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof *(a)) - 1)

/* A grid with a value holding a comma, a quote, a pipe and a line end, printed in fmt. */
static void print_tricky(sm_cli_format fmt, char *buf, size_t cap)
{
    sm_grid g = {3, 0, "rll", NULL, fmt};
    static const char *const head[] = {"ID", "LAST SEEN (s)", "NOTE"};
    static const char *const row1[] = {"7", "12", "a, \"b\" | c\nd"};
    static const char *const row2[] = {"8", NULL, "plain"};
    assert_int_equal(sm_grid_row(&g, head), 0);
    assert_int_equal(sm_grid_row(&g, row1), 0);
    assert_int_equal(sm_grid_row(&g, row2), 0);
    memset(buf, 0, cap);
    FILE *f = fmemopen(buf, cap - 1, "w");
    assert_non_null(f);
    sm_grid_print(&g, f);
    fclose(f);
    sm_grid_fini(&g);
}

static void test_grid_csv_quotes_comma_quote_and_line_end_per_rfc4180(void **state)
{
    (void)state;
    char buf[512];
    print_tricky(SM_CLI_FMT_CSV, buf, sizeof buf);
    assert_string_equal(buf, "ID,LAST SEEN (s),NOTE\r\n"
                             "7,12,\"a, \"\"b\"\" | c\nd\"\r\n"
                             "8,,plain\r\n");
}

static void test_grid_md_is_a_pipe_table_with_pipes_escaped(void **state)
{
    (void)state;
    char buf[512];
    print_tricky(SM_CLI_FMT_MD, buf, sizeof buf);
    assert_string_equal(buf, "| ID | LAST SEEN (s) | NOTE |\n"
                             "| ---: | --- | --- |\n"
                             "| 7 | 12 | a, \"b\" \\| c d |\n"
                             "| 8 |  | plain |\n");
}

static void test_grid_json_is_an_array_of_objects_keyed_by_header(void **state)
{
    (void)state;
    char buf[512];
    print_tricky(SM_CLI_FMT_JSON, buf, sizeof buf);
    cJSON *doc = cJSON_Parse(buf);
    assert_non_null(doc);
    assert_true(cJSON_IsArray(doc));
    assert_int_equal(cJSON_GetArraySize(doc), 2);
    const cJSON *r0 = cJSON_GetArrayItem(doc, 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(r0, "id")), "7");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(r0, "last_seen_s")), "12");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(r0, "note")), "a, \"b\" | c\nd");
    const cJSON *r1 = cJSON_GetArrayItem(doc, 1);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(r1, "last_seen_s")), "");
    cJSON_Delete(doc);
}

static void test_grid_json_of_no_rows_is_an_empty_array(void **state)
{
    (void)state;
    sm_grid g = {1, 0, "l", NULL, SM_CLI_FMT_JSON};
    static const char *const head[] = {"NAME"};
    assert_int_equal(sm_grid_row(&g, head), 0);
    char buf[64] = {0};
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    sm_grid_print(&g, f);
    fclose(f);
    sm_grid_fini(&g);
    assert_string_equal(buf, "[]\n");
}

static void test_grid_json_key_folds_header_words(void **state)
{
    (void)state;
    char k[32];
    sm_grid_json_key("DONE/FAILED/TOTAL", k, sizeof k);
    assert_string_equal(k, "done_failed_total");
    sm_grid_json_key("MEDIAN [95% CI]", k, sizeof k);
    assert_string_equal(k, "median_95_ci");
    sm_grid_json_key("JOBS (3 HOSTS)", k, sizeof k);
    assert_string_equal(k, "jobs_3_hosts");
}

/* ---- did you mean ---- */

static void test_edit_distance_counts_a_swap_as_one(void **state)
{
    (void)state;
    assert_int_equal(sm_cli_edit_distance("trend", "trends"), 1);
    assert_int_equal(sm_cli_edit_distance("--fromat", "--format"), 1);
    assert_int_equal(sm_cli_edit_distance("SHOW", "show"), 0);
    assert_int_equal(sm_cli_edit_distance("", "abc"), 3);
    assert_int_equal(sm_cli_edit_distance("kitten", "sitting"), 3);
}

static void test_suggest_picks_the_nearest_or_nothing(void **state)
{
    (void)state;
    static const char *const cmds[] = {"run", "runs", "trends", "tests", "show"};
    assert_string_equal(sm_cli_suggest("trend", cmds, 5), "trends");
    assert_string_equal(sm_cli_suggest("shwo", cmds, 5), "show");
    assert_null(sm_cli_suggest("zzz", cmds, 5));
    assert_null(sm_cli_suggest("xy", cmds, 5));
    /* Cut short or another ending, 3 or more edits away: the longest common start. */
    static const char *const more[] = {"anomalies", "agents", "schedules", "schedule"};
    assert_string_equal(sm_cli_suggest("anomaly", more, 4), "anomalies");
    assert_string_equal(sm_cli_suggest("ANOMAL", more, 4), "anomalies");
    assert_string_equal(sm_cli_suggest("sched", more, 4), "schedules");
    assert_null(sm_cli_suggest("ano", more, 4));        /* under 4 letters */
    assert_null(sm_cli_suggest("anomXXXXXX", more, 4)); /* under two thirds of the word */
}

static void assert_parse_fails_with(int argc, char **argv, const char *needle)
{
    sm_cli_opts o;
    sm_error err = {0};
    assert_int_equal(sm_cli_parse(argc, argv, NULL, &o, &err), SM_EINVAL);
    if (!strstr(err.msg, needle))
        fail_msg("'%s' not in '%s'", needle, err.msg);
}

static void test_parse_suggests_commands_options_and_formats(void **state)
{
    (void)state;
    char *a[] = {"sockmatrix", "trend", "--host", "h1", NULL};
    assert_parse_fails_with(ARGC(a), a, "unknown command 'trend': did you mean trends?");
    char *b[] = {"sockmatrix", "runs", "--fromat", "csv", NULL};
    assert_parse_fails_with(ARGC(b), b, "runs: unknown option '--fromat': did you mean --format?");
    char *c[] = {"sockmatrix", "agents", "--format", "jsno", NULL};
    assert_parse_fails_with(ARGC(c), c,
                            "--format: 'jsno' is not table, csv, md or json (did you "
                            "mean json?)");
    char *d[] = {"sockmatrix", "hosts", "dif", "h1", "h2", NULL};
    assert_parse_fails_with(ARGC(d), d, "did you mean diff?");
    char *e[] = {"sockmatrix", "frobnicate", NULL};
    sm_cli_opts o;
    sm_error err = {0};
    assert_int_equal(sm_cli_parse(ARGC(e), e, NULL, &o, &err), SM_EINVAL);
    assert_null(strstr(err.msg, "did you mean"));
}

/* ---- --format everywhere ---- */

static void test_every_data_command_takes_every_format(void **state)
{
    (void)state;
    static const char *const lines[][6] = {
        {"agents", NULL},         {"presets", NULL},           {"runs", NULL},
        {"show", "1", NULL},      {"jobs", "1", NULL},         {"jobs", "1", "--cell", "0", NULL},
        {"tests", NULL},          {"tests", "1", NULL},        {"export", "1", NULL},
        {"anomalies", "1", NULL}, {"hosts", "diff", "a", "b"}, {"hosts", "fingerprint", "a", NULL},
        {"compare", "1", "2"},    {"schedules", NULL},
    };
    static const char *const fmts[] = {"table", "csv", "md", "json"};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
        for (size_t k = 0; k < 4; k++) {
            char *argv[10] = {"sockmatrix"};
            int argc = 1;
            for (size_t w = 0; w < 6 && lines[i][w]; w++)
                argv[argc++] = (char *)lines[i][w];
            argv[argc++] = "--format";
            argv[argc++] = (char *)fmts[k];
            sm_cli_opts o;
            sm_error err = {0};
            if (sm_cli_parse(argc, argv, NULL, &o, &err) != 0)
                fail_msg("%s --format %s: %s", lines[i][0], fmts[k], err.msg);
            assert_int_equal(o.format, (sm_cli_format)k);
            assert_true(o.format_given);
        }
    char *t[] = {"sockmatrix", "trends", "--host", "h2", "--test", "tcp", "--format", "md", NULL};
    sm_cli_opts o;
    sm_error err = {0};
    assert_int_equal(sm_cli_parse(ARGC(t), t, NULL, &o, &err), 0);
    assert_int_equal(o.format, SM_CLI_FMT_MD);
}

static void test_export_defaults_to_md_on_a_terminal_and_csv_when_piped(void **state)
{
    (void)state;
    char *a[] = {"sockmatrix", "export", "1", NULL};
    sm_cli_opts o;
    sm_error err = {0};
    assert_int_equal(sm_cli_parse(ARGC(a), a, NULL, &o, &err), 0);
    assert_false(o.format_given);
    assert_int_equal(sm_cli_export_format(&o, true), SM_CLI_FMT_MD);
    assert_int_equal(sm_cli_export_format(&o, false), SM_CLI_FMT_CSV);
    o.output = "t.md";
    assert_int_equal(sm_cli_export_format(&o, false), SM_CLI_FMT_MD);
    o.output = "t.json";
    assert_int_equal(sm_cli_export_format(&o, true), SM_CLI_FMT_JSON);
    o.output = "t.txt";
    assert_int_equal(sm_cli_export_format(&o, true), SM_CLI_FMT_CSV);
    char *b[] = {"sockmatrix", "export", "1", "--format", "json", NULL};
    assert_int_equal(sm_cli_parse(ARGC(b), b, NULL, &o, &err), 0);
    assert_int_equal(sm_cli_export_format(&o, true), SM_CLI_FMT_JSON);
}

/* ---- tests by a part of their label ---- */

static void demo_tests(sm_cli_tests *t)
{
    assert_int_equal(sm_cli_tests_add(t, "stream tcp lines 128 B x 8192", "stream tcp lines 128 B"),
                     0);
    assert_int_equal(sm_cli_tests_add(t, "stream tcp+nodelay lines 128 B x 8192", ""), 0);
    assert_int_equal(sm_cli_tests_add(t, "stream unix lines 128 B x 8192", ""), 0);
    assert_int_equal(sm_cli_tests_add(t, "tcp/unix stream lines 128 B x 8192", ""), 0);
    /* again, with a short form now: the first entry stays, its short form is kept */
    assert_int_equal(sm_cli_tests_add(t, "stream unix lines 128 B x 8192", "stream unix"), 0);
}

static void test_a_part_of_a_label_names_one_test(void **state)
{
    (void)state;
    sm_cli_tests t = {0};
    demo_tests(&t);
    assert_int_equal(t.n, 4);
    assert_string_equal(t.v[2].brief, "stream unix");
    size_t i = 99;
    assert_int_equal(sm_cli_tests_match(&t, "stream tcp lines", &i), 1);
    assert_int_equal(i, 0);
    assert_int_equal(sm_cli_tests_match(&t, "NODELAY", &i), 1);
    assert_int_equal(i, 1);
    assert_int_equal(sm_cli_tests_match(&t, "tcp/unix", &i), 1);
    assert_int_equal(i, 3);
    /* '_' as a blank: what a user types for a label with blanks */
    assert_int_equal(sm_cli_tests_match(&t, "stream_unix", &i), 1);
    assert_int_equal(i, 2);
    sm_cli_tests_fini(&t);
}

static void test_ids_exact_labels_ambiguity_and_no_match(void **state)
{
    (void)state;
    sm_cli_tests t = {0};
    demo_tests(&t);
    size_t i = 99;
    assert_int_equal(sm_cli_tests_match(&t, "t2", &i), 1);
    assert_int_equal(i, 1);
    assert_int_equal(sm_cli_tests_match(&t, "T4", &i), 1);
    assert_int_equal(i, 3);
    /* an exact short form wins over being part of another label */
    assert_int_equal(sm_cli_tests_match(&t, "stream tcp lines 128 b", &i), 1);
    assert_int_equal(i, 0);
    assert_int_equal(sm_cli_tests_match(&t, "lines", &i), 4);
    assert_int_equal(i, 0);
    assert_int_equal(sm_cli_tests_match(&t, "udp", &i), 0);
    /* t9 is no id here: nothing has it in its label either */
    assert_int_equal(sm_cli_tests_match(&t, "t9", &i), 0);
    sm_cli_tests_fini(&t);
}

/* ---- API errors in the user's words ---- */

static void test_api_fields_are_said_as_the_user_typed_them(void **state)
{
    (void)state;
    char m[256];
    sm_cli_api_message("b: no such run 99", "b", m, sizeof m);
    assert_string_equal(m, "run B: no such run 99");
    sm_cli_api_message("no such run 5", "a", m, sizeof m);
    assert_string_equal(m, "run A: no such run 5");
    sm_cli_api_message("metric: give one of throughput_MBps, cpu", "metric", m, sizeof m);
    assert_string_equal(m, "--metric: give one of throughput_MBps, cpu");
    sm_cli_api_message("expected 1 to 100", "tests[0].msg_size", m, sizeof m);
    assert_string_equal(m, "the spec, at tests[0].msg_size: expected 1 to 100");
    sm_cli_api_message("something odd", "internal_thing", m, sizeof m);
    assert_string_equal(m, "something odd");
    sm_cli_api_message("plain", "", m, sizeof m);
    assert_string_equal(m, "plain");
    assert_null(strstr(m, "field"));
}

/* ---- show's flags, with their why ---- */

static void test_show_prints_each_flag_with_its_why(void **state)
{
    (void)state;
    static const char text[] =
        "run 2 (seed-tcp-unix-lab): flagged: 1 anomaly in 12 cells, no baseline run\n"
        "  fleet      h2 stream tcp lines 128 B x 8192: 4.4 MB/s, 315x slower than the fleet\n"
        "  fleet      h2 stream tcp+nodelay lines 128 B x 8192: 4.3 MB/s, 300x slower\n"
        "             h2: lo qdisc tbf rate 400Mbit (fleet: noqueue, 2 of 2 hosts)\n"
        "             h2: net.ipv4.tcp_autocorking 0 (fleet: 1, 2 of 2 hosts)\n"
        "  inconclusive h3 http thread 1 MiB x11: n 2 < 3\n";
    char buf[2048] = {0};
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    sm_cli_print_flags(text, strlen(text), f);
    fclose(f);
    assert_string_equal(
        buf, "verdict: flagged: 1 anomaly in 12 cells\n"
             "flags:\n"
             "  fleet      h2 stream tcp lines 128 B x 8192: 4.4 MB/s, 315x slower than the fleet\n"
             "  fleet      h2 stream tcp+nodelay lines 128 B x 8192: 4.3 MB/s, 300x slower\n"
             "             h2: lo qdisc tbf rate 400Mbit (fleet: noqueue, 2 of 2 hosts)\n"
             "             h2: net.ipv4.tcp_autocorking 0 (fleet: 1, 2 of 2 hosts)\n"
             "not judged:\n"
             "  inconclusive h3 http thread 1 MiB x11: n 2 < 3\n");
    memset(buf, 0, sizeof buf);
    f = fmemopen(buf, sizeof buf - 1, "w");
    sm_cli_print_flags("", 0, f);
    fclose(f);
    assert_string_equal(buf, "flags: none\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid_csv_quotes_comma_quote_and_line_end_per_rfc4180),
        cmocka_unit_test(test_grid_md_is_a_pipe_table_with_pipes_escaped),
        cmocka_unit_test(test_grid_json_is_an_array_of_objects_keyed_by_header),
        cmocka_unit_test(test_grid_json_of_no_rows_is_an_empty_array),
        cmocka_unit_test(test_grid_json_key_folds_header_words),
        cmocka_unit_test(test_edit_distance_counts_a_swap_as_one),
        cmocka_unit_test(test_suggest_picks_the_nearest_or_nothing),
        cmocka_unit_test(test_parse_suggests_commands_options_and_formats),
        cmocka_unit_test(test_every_data_command_takes_every_format),
        cmocka_unit_test(test_export_defaults_to_md_on_a_terminal_and_csv_when_piped),
        cmocka_unit_test(test_a_part_of_a_label_names_one_test),
        cmocka_unit_test(test_ids_exact_labels_ambiguity_and_no_match),
        cmocka_unit_test(test_api_fields_are_said_as_the_user_typed_them),
        cmocka_unit_test(test_show_prints_each_flag_with_its_why),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
