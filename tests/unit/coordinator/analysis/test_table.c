/* Unit tests of comparison tables and their CSV, Markdown and JSON encoders
 * (coordinator/analysis/table.c, table_json.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "coordinator/analysis/table.h"
#include "coordinator/analysis/verdict.h"
#include <cjson/cJSON.h>
#include "proto/err.h"
#include "proto/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SM_GOLDEN_DIR
#error "SM_GOLDEN_DIR must name tests/unit/coordinator/analysis/golden"
#endif

/* The whole file, NUL-terminated; fails the test when it cannot be read. */
static char *read_golden(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", SM_GOLDEN_DIR, name);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("cannot open %s", path);
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[4096];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            char *p = realloc(buf, cap);
            assert_non_null(p);
            buf = p;
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    fclose(f);
    if (buf == NULL)
        buf = calloc(1, 1);
    assert_non_null(buf);
    buf[len] = '\0';
    return buf;
}

/* Byte for byte; on a difference, says where it starts. With SM_GOLDEN_UPDATE=1 in the
 * environment it writes what it got instead, for a deliberate change of format (review the
 * diff before committing it). */
static void assert_golden(const char *got, const char *name)
{
    const char *update = getenv("SM_GOLDEN_UPDATE");
    if (update != NULL && strcmp(update, "1") == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", SM_GOLDEN_DIR, name);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(got, 1, strlen(got), f), strlen(got));
        assert_int_equal(fclose(f), 0);
    }
    char *want = read_golden(name);
    size_t i = 0;
    while (got[i] != '\0' && got[i] == want[i])
        i++;
    if (got[i] != want[i]) {
        fail_msg("%s differs at byte %zu:\n got: %.60s\nwant: %.60s", name, i, got + i, want + i);
    }
    free(want);
}

/* Statistics set by hand, not summarised, so that the golden files test the encoders alone. */
static void set_cell(sm_table_cell *c, size_t n, double median, double low, double high,
                     uint32_t failed)
{
    assert_non_null(c);
    c->have = true;
    c->s.n = n;
    c->s.median = median;
    c->s.mean = median;
    c->s.stddev = 0.001;
    c->s.min = low;
    c->s.max = high;
    c->s.cv = 0.001 / median;
    c->s.ci95_low = low;
    c->s.ci95_high = high;
    c->s.ci_coverage = 0.75;
    c->failed = failed;
}

static void set_col(sm_table_col *c, const char *label, const char *metric, const char *unit)
{
    snprintf(c->label, sizeof c->label, "%s", label);
    snprintf(c->metric, sizeof c->metric, "%s", metric);
    snprintf(c->unit, sizeof c->unit, "%s", unit);
}

/* Two hosts x two tests and their ratio; beta's unix cell has no value (its two jobs ran into
 * their 60 s time limit, and its one ok job was disturbed) and its ratio is empty, beta's tcp
 * cell has 2 disturbed samples beside its data, alpha carries a flag and one failed job, and
 * the second label needs CSV quoting. */
static void build_small(sm_table *t)
{
    assert_int_equal(sm_table_init(t, 2, 2, 1), 0);
    t->run_id = 7;
    snprintf(t->run_name, sizeof t->run_name, "seed-tcp-unix");
    snprintf(t->rows[0], sizeof t->rows[0], "alpha");
    snprintf(t->rows[1], sizeof t->rows[1], "beta");
    set_col(&t->cols[0], "stream tcp lines 128 B x 8192", "seconds", "s");
    set_col(&t->cols[1], "stream unix \"lines\", 128 B", "seconds", "s");
    set_col(&t->ratio_cols[0], "tcp/unix stream lines 128 B x 8192", "seconds", "x");
    /* Brief headers on the tcp and ratio columns (the legend names them in full); the unix
     * column has none and keeps its label as its header. */
    snprintf(t->cols[0].brief, sizeof t->cols[0].brief, "stream tcp lines 128 B");
    snprintf(t->ratio_cols[0].brief, sizeof t->ratio_cols[0].brief, "tcp/unix stream lines 128 B");
    set_cell(sm_table_at(t, 0, 0), 3, 0.230, 0.229, 0.231, 1);
    set_cell(sm_table_at(t, 0, 1), 3, 0.064, 0.063, 0.065, 0);
    set_cell(sm_table_at(t, 1, 0), 3, 0.133, 0.132, 0.134, 0);
    sm_table_at(t, 1, 0)->disturbed = 2;
    /* Ten samples: the interval [x(2), x(9)] covers 97.9%, no "~". */
    sm_table_at(t, 1, 0)->s.n = 10;
    sm_table_at(t, 1, 0)->s.ci_coverage = 0.978515625;
    sm_table_at(t, 1, 1)->failed = sm_table_at(t, 1, 1)->limited = 2;
    sm_table_at(t, 1, 1)->limit_bound = 60;
    sm_table_at(t, 1, 1)->disturbed = 1;
    set_cell(sm_table_ratio_at(t, 0, 0), 3, 0.230 / 0.064, 0.231 / 0.065, 0.229 / 0.063, 0);
    snprintf(t->flags[0], sizeof t->flags[0], "seconds: z 12.1 > 3.5 (fleet median 0.133)");
}

static void test_table_init_allocates_zeroed_cells_and_fini_clears(void **state)
{
    (void)state;
    sm_table t;
    assert_int_equal(sm_table_init(&t, 3, 2, 1), 0);
    assert_int_equal(t.n_rows, 3);
    assert_int_equal(t.n_cols, 2);
    assert_int_equal(t.n_ratio_cols, 1);
    assert_int_equal(t.run_id, 0);
    assert_false(t.pairs);
    for (size_t r = 0; r < 3; r++) {
        assert_string_equal(t.rows[r], "");
        assert_string_equal(t.flags[r], "");
        for (size_t c = 0; c < 2; c++) {
            assert_false(sm_table_at(&t, r, c)->have);
            assert_int_equal(sm_table_at(&t, r, c)->failed, 0);
        }
        assert_false(sm_table_ratio_at(&t, r, 0)->have);
    }
    sm_table_fini(&t);
    assert_null(t.cells);
    assert_int_equal(t.n_rows, 0);
    sm_table_fini(&t);
    sm_table_fini(NULL);
}

static void test_table_at_is_row_major_and_null_out_of_range(void **state)
{
    (void)state;
    sm_table t;
    assert_int_equal(sm_table_init(&t, 2, 3, 2), 0);
    assert_ptr_equal(sm_table_at(&t, 1, 2), &t.cells[5]);
    assert_ptr_equal(sm_table_at(&t, 0, 1), &t.cells[1]);
    assert_ptr_equal(sm_table_ratio_at(&t, 1, 1), &t.ratio_cells[3]);
    assert_null(sm_table_at(&t, 2, 0));
    assert_null(sm_table_at(&t, 0, 3));
    assert_null(sm_table_ratio_at(&t, 0, 2));
    sm_table_fini(&t);
}

static void test_table_init_with_no_rows_encodes_header_only(void **state)
{
    (void)state;
    sm_table t;
    assert_int_equal(sm_table_init(&t, 0, 0, 0), 0);
    char *csv = sm_table_csv(&t);
    assert_string_equal(csv, "host,flags\r\n");
    char *md = sm_table_md(&t);
    assert_string_equal(md, "## run 0: \n\n| host | flags |\n| ---- | ----- |\n");
    char *json = sm_table_json(&t);
    assert_string_equal(json, "{\"version\":1,\"run\":{\"id\":\"0\",\"name\":\"\"},\"pairs\":false,"
                              "\"disturbed\":\"exclude\",\"rows\":[],"
                              "\"columns\":[],\"ratio_columns\":[],\"cells\":[],\"ratios\":[],"
                              "\"flags\":[]}");
    free(csv);
    free(md);
    free(json);
    sm_table_fini(&t);
}

static void test_table_init_refuses_overflowing_sizes(void **state)
{
    (void)state;
    sm_table t;
    assert_int_equal(sm_table_init(&t, SIZE_MAX / 2, 4, 0), SM_ENOMEM);
    assert_null(t.cells);
    assert_int_equal(t.n_rows, 0);
    sm_table_fini(&t);
}

static void test_table_csv_matches_golden(void **state)
{
    (void)state;
    sm_table t;
    build_small(&t);
    char *csv = sm_table_csv(&t);
    assert_non_null(csv);
    assert_golden(csv, "table.csv");
    free(csv);
    sm_table_fini(&t);
}

static void test_table_csv_quotes_fields_and_ends_lines_with_crlf(void **state)
{
    (void)state;
    sm_table t;
    build_small(&t);
    snprintf(t.rows[1], sizeof t.rows[1], "multi\nline");
    t.pairs = true;
    char *csv = sm_table_csv(&t);
    assert_non_null(csv);
    assert_int_equal(strncmp(csv, "pair,", 5), 0);
    assert_non_null(strstr(csv, ",\"stream unix \"\"lines\"\", 128 B median (s)\","));
    assert_non_null(strstr(csv, ",\"stream unix \"\"lines\"\", 128 B n\","));
    assert_non_null(strstr(csv, "\r\n\"multi\nline\","));
    /* Every record ends in CRLF; the only bare LF is the one inside the quoted row label. */
    size_t bare_lf = 0;
    for (const char *p = csv; *p; p++)
        bare_lf += *p == '\n' && (p == csv || p[-1] != '\r');
    assert_int_equal(bare_lf, 1);
    assert_int_equal(strcmp(csv + strlen(csv) - 2, "\r\n"), 0);
    free(csv);
    sm_table_fini(&t);
}

static void test_table_md_matches_golden(void **state)
{
    (void)state;
    sm_table t;
    build_small(&t);
    char *md = sm_table_md(&t);
    assert_non_null(md);
    assert_golden(md, "table.md");
    free(md);
    sm_table_fini(&t);
}

static void test_table_md_lines_are_equally_wide(void **state)
{
    (void)state;
    sm_table t;
    build_small(&t);
    char *md = sm_table_md(&t);
    assert_non_null(md);
    /* Title, blank line, then header, separator and two rows of one width; the legend
     * follows after a blank line. */
    const char *line = strstr(md, "\n\n");
    assert_non_null(line);
    line += 2;
    size_t width = strcspn(line, "\n"), lines = 0;
    while (*line && *line != '\n') {
        assert_int_equal(strcspn(line, "\n"), width);
        line += width + 1;
        lines++;
    }
    assert_int_equal(lines, 4);
    free(md);
    sm_table_fini(&t);
}

static void test_table_md_escapes_pipes_and_shows_failures_without_data(void **state)
{
    (void)state;
    sm_table t;
    assert_int_equal(sm_table_init(&t, 1, 1, 0), 0);
    t.run_id = 12;
    snprintf(t.run_name, sizeof t.run_name, "a|b");
    snprintf(t.rows[0], sizeof t.rows[0], "h|1");
    set_col(&t.cols[0], "x|y", "seconds", "s");
    sm_table_at(&t, 0, 0)->failed = 2;
    char *md = sm_table_md(&t);
    assert_string_equal(md, "## run 12: a\\|b\n"
                            "\n"
                            "| host | x\\|y (s)   | flags |\n"
                            "| ---- | ---------- | ----- |\n"
                            "| h\\|1 | (2 failed) |       |\n");
    free(md);
    sm_table_fini(&t);
}

static void test_table_json_matches_golden(void **state)
{
    (void)state;
    sm_table t;
    build_small(&t);
    char *json = sm_table_json(&t);
    assert_non_null(json);
    assert_golden(json, "table.json");
    free(json);
    sm_table_fini(&t);
}

static void test_table_json_writes_doubles_exactly_and_big_run_ids_as_strings(void **state)
{
    (void)state;
    sm_table t;
    assert_int_equal(sm_table_init(&t, 1, 1, 0), 0);
    t.run_id = UINT64_MAX;
    set_cell(sm_table_at(&t, 0, 0), 1, 0.1 + 0.2, 0.1 + 0.2, 0.1 + 0.2, 0);
    sm_table_at(&t, 0, 0)->s.ci_coverage = 0;
    char *json = sm_table_json(&t);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"run\":{\"id\":\"18446744073709551615\","));
    assert_non_null(strstr(json, "\"median\":0.30000000000000004,"));
    assert_non_null(strstr(json, "\"ci_coverage\":0,"));
    free(json);
    sm_table_fini(&t);
}

/* The reason a cell is noisy, as the JSON table gives it per cell. */
static void test_table_noisy_reason_names_the_cv_the_n_or_the_disturbed_samples(void **state)
{
    (void)state;
    sm_table_cell c;
    char why[96];
    memset(&c, 0, sizeof c);
    set_cell(&c, 5, 0.02, 0.019, 0.021, 0);
    sm_table_noisy_reason(&c, false, why, sizeof why);
    assert_string_equal(why, "");
    c.s.cv = 0.14;
    sm_table_noisy_reason(&c, false, why, sizeof why);
    assert_string_equal(why, "CV 14% > 10%");
    c.s.cv = 0.01;
    c.s.n = 2;
    sm_table_noisy_reason(&c, false, why, sizeof why);
    assert_string_equal(why, "n 2 < 3");
    c.disturbed = 3;
    sm_table_noisy_reason(&c, false, why, sizeof why);
    assert_string_equal(why, "3 of 5 samples disturbed");
    /* With disturbed samples included, n is what it is. */
    sm_table_noisy_reason(&c, true, why, sizeof why);
    assert_string_equal(why, "n 2 < 3");
    /* Enough clean samples: the disturbed ones are not the reason. */
    c.s.n = 3;
    c.s.cv = 0.2;
    sm_table_noisy_reason(&c, false, why, sizeof why);
    assert_string_equal(why, "CV 20% > 10%");
    memset(&c, 0, sizeof c);
    sm_table_noisy_reason(&c, false, why, sizeof why);
    assert_string_equal(why, "n 0 < 3");
}

static void test_table_says_which_cells_stopped_on_max(void **state)
{
    (void)state;
    sm_table t;
    assert_int_equal(sm_table_init(&t, 2, 1, 0), 0);
    t.run_id = 3;
    snprintf(t.run_name, sizeof t.run_name, "auto");
    snprintf(t.rows[0], sizeof t.rows[0], "h1");
    snprintf(t.rows[1], sizeof t.rows[1], "h2");
    set_col(&t.cols[0], "rr tcp", "rtt_p50_us", "us");
    set_cell(sm_table_at(&t, 0, 0), 30, 20.0, 18.0, 22.0, 0);
    sm_table_at(&t, 0, 0)->stopped = SM_REPS_MAX;
    set_cell(sm_table_at(&t, 1, 0), 5, 20.0, 19.9, 20.1, 0);
    sm_table_at(&t, 1, 0)->stopped = SM_REPS_CI;

    char *md = sm_table_md(&t);
    assert_non_null(strstr(md, " n=30 (max) |"));
    /* A cell that got tight in time says nothing more. */
    const char *h2 = strstr(md, "| h2 ");
    assert_non_null(h2);
    assert_non_null(strstr(h2, " n=5 "));
    assert_null(strstr(h2, "(max)"));
    free(md);
    char *json = sm_table_json(&t);
    assert_non_null(strstr(json, "\"n\":30,"));
    assert_non_null(strstr(json, "\"stopped\":\"max\""));
    assert_non_null(strstr(json, "\"stopped\":\"ci\""));
    free(json);
    char *csv = sm_table_csv(&t);
    assert_non_null(strstr(csv, "host,rr tcp median (us),rr tcp ci95_low (us),rr tcp ci95_high "
                                "(us),rr tcp n,rr tcp disturbed,rr tcp stopped,flags\r\n"));
    assert_non_null(strstr(csv, "\r\nh1,20,18,22,30,0,max,\r\n"));
    assert_non_null(strstr(csv, "\r\nh2,20,19.9,20.1,5,0,ci,\r\n"));
    free(csv);
    sm_table_fini(&t);
}

/* Disturbed samples measured again as often as remeasure allows, and still disturbed: every
 * export says so where it says "max", and the verdict of a cell left with nothing clean. */
static void test_table_says_which_cells_ran_out_of_remeasuring(void **state)
{
    (void)state;
    sm_table t;
    assert_int_equal(sm_table_init(&t, 2, 1, 0), 0);
    t.run_id = 4;
    snprintf(t.run_name, sizeof t.run_name, "busy");
    snprintf(t.rows[0], sizeof t.rows[0], "h1");
    snprintf(t.rows[1], sizeof t.rows[1], "h2");
    set_col(&t.cols[0], "rr tcp", "rtt_p50_us", "us");
    set_cell(sm_table_at(&t, 0, 0), 1, 20.0, 20.0, 20.0, 0);
    sm_table_at(&t, 0, 0)->disturbed = 5;
    sm_table_at(&t, 0, 0)->stopped = SM_REPS_DISTURBED;
    sm_table_at(&t, 1, 0)->disturbed = 4; /* no clean sample at all */
    sm_table_at(&t, 1, 0)->stopped = SM_REPS_DISTURBED;

    char *md = sm_table_md(&t);
    assert_non_null(strstr(md, "~ n=1, 5 disturbed (remeasure ran out) |"));
    assert_non_null(strstr(md, "| h2   | 4 disturbed (remeasure ran out) "));
    free(md);
    char *json = sm_table_json(&t);
    assert_non_null(strstr(json, "\"stopped\":\"disturbed\""));
    assert_null(strstr(json, "\"stopped\":null"));
    free(json);
    /* A fixed run's table gains the stopped column once a cell stopped so. */
    char *csv = sm_table_csv(&t);
    assert_non_null(strstr(csv, ",rr tcp disturbed,rr tcp stopped,flags\r\n"));
    assert_non_null(strstr(csv, "\r\nh1,20,20,20,1,5,disturbed,\r\n"));
    assert_non_null(strstr(csv, "\r\nh2,,,,,4,disturbed,\r\n"));
    free(csv);
    char why[128];
    sm_table_noisy_reason(sm_table_at(&t, 0, 0), false, why, sizeof why);
    assert_string_equal(why, "5 of 6 samples disturbed (remeasure ran out)");
    assert_int_equal(sm_verdict_table(&t, NULL, 0), 0);
    const sm_judgement *j = &sm_table_at(&t, 1, 0)->j;
    assert_int_equal(j->verdict, SM_VERDICT_INCONCLUSIVE);
    assert_string_equal(j->why, "4 of 4 samples disturbed (remeasure ran out): no reason recorded");
    j = &sm_table_at(&t, 0, 0)->j;
    assert_int_equal(j->verdict, SM_VERDICT_INCONCLUSIVE);
    assert_non_null(strstr(j->why, "; 5 of 6 samples disturbed (remeasure ran out): "));
    sm_table_fini(&t);
}

static void test_table_of_fixed_repetitions_has_no_stopped_column(void **state)
{
    (void)state;
    sm_table t;
    build_small(&t);
    char *csv = sm_table_csv(&t);
    assert_null(strstr(csv, "stopped"));
    free(csv);
    char *json = sm_table_json(&t);
    assert_non_null(strstr(json, "\"stopped\":null"));
    assert_null(strstr(json, "\"stopped\":\""));
    free(json);
    sm_table_fini(&t);
}

/* "~" is the interval's coverage alone: the distribution-free median CI of 5 samples is
 * [min, max] (93.75%), of 6 [x(1), x(6)] too but 96.9%, of 10 [x(2), x(9)] 97.9%. Noise is no
 * part of it: a spread of 30% at n=10 carries none. */
static void test_table_tilde_marks_an_interval_below_95_percent_only(void **state)
{
    (void)state;
    static const double spread[10] = {70, 130, 100, 95, 105, 80, 120, 90, 110, 100};
    static const struct {
        size_t n;
        bool tilde;
    } cases[] = {{2, true}, {5, true}, {6, false}, {10, false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sm_table_cell c;
        memset(&c, 0, sizeof c);
        assert_int_equal(sm_stats_summarize(spread, cases[i].n, &c.s), 0);
        c.have = true;
        if (sm_table_ci_short(&c) != cases[i].tilde)
            fail_msg("n=%zu: coverage %.4f, ~ %d", cases[i].n, c.s.ci_coverage, !cases[i].tilde);
    }
    sm_table_cell none;
    memset(&none, 0, sizeof none);
    assert_false(sm_table_ci_short(&none)); /* no value, no interval to mark */

    /* The same rule in the Markdown, the JSON and the legend under the table. */
    sm_table t;
    assert_int_equal(sm_table_init(&t, 2, 1, 0), 0);
    snprintf(t.rows[0], sizeof t.rows[0], "five");
    snprintf(t.rows[1], sizeof t.rows[1], "ten");
    set_col(&t.cols[0], "connect tcp x 500", "connects_per_s", "1/s");
    t.cells[0].have = t.cells[1].have = true;
    assert_int_equal(sm_stats_summarize(spread, 5, &t.cells[0].s), 0);
    assert_int_equal(sm_stats_summarize(spread, 10, &t.cells[1].s), 0);
    char *md = sm_table_md(&t);
    assert_non_null(md);
    if (!strstr(md, "100.0 [70.0, 130.0]~ n=5") || strstr(md, "]~ n=10") || !strstr(md, "] n=10"))
        fail_msg("%s", md);
    if (!strstr(md, "\n" SM_TABLE_TILDE_RULE ".\n"))
        fail_msg("no legend for ~ in %s", md);
    free(md);
    char *json = sm_table_json(&t);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"n\":5,"));
    cJSON *root = cJSON_Parse(json);
    cJSON *cells = cJSON_GetObjectItem(root, "cells");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(cells, 0), "ci_short")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(cells, 1), "ci_short")));
    cJSON_Delete(root);
    free(json);
    /* Without any "~" the legend does not speak of it. */
    t.n_rows = 1;
    t.cells[0] = t.cells[1];
    md = sm_table_md(&t);
    assert_non_null(md);
    assert_null(strstr(md, "~"));
    free(md);
    t.n_rows = 2;
    sm_table_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_noisy_reason_names_the_cv_the_n_or_the_disturbed_samples),
        cmocka_unit_test(test_table_init_allocates_zeroed_cells_and_fini_clears),
        cmocka_unit_test(test_table_at_is_row_major_and_null_out_of_range),
        cmocka_unit_test(test_table_init_with_no_rows_encodes_header_only),
        cmocka_unit_test(test_table_init_refuses_overflowing_sizes),
        cmocka_unit_test(test_table_csv_matches_golden),
        cmocka_unit_test(test_table_csv_quotes_fields_and_ends_lines_with_crlf),
        cmocka_unit_test(test_table_md_matches_golden),
        cmocka_unit_test(test_table_md_lines_are_equally_wide),
        cmocka_unit_test(test_table_md_escapes_pipes_and_shows_failures_without_data),
        cmocka_unit_test(test_table_json_matches_golden),
        cmocka_unit_test(test_table_json_writes_doubles_exactly_and_big_run_ids_as_strings),
        cmocka_unit_test(test_table_says_which_cells_stopped_on_max),
        cmocka_unit_test(test_table_says_which_cells_ran_out_of_remeasuring),
        cmocka_unit_test(test_table_of_fixed_repetitions_has_no_stopped_column),
        cmocka_unit_test(test_table_tilde_marks_an_interval_below_95_percent_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
