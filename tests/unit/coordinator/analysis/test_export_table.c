/* Unit tests of the export's table: medians, n and paired ratios of the samples that count, rows in
 * order, pairs and HTTP client models. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "coordinator/analysis/export.h"
#include "proto/err.h"
#include "proto/params.h"
#include "proto/result.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/testutil.h"
#include "tests/unit/coordinator/analysis/export_fixture.h"

#define EPS 1e-12

#define MAX_CELLS   16
#define MAX_SAMPLES 128

/* Cells and the samples of their jobs; results live here so samples can point at them. */
typedef struct fixture {
    sm_cell cells[MAX_CELLS];
    size_t n_cells;
    sm_result results[MAX_SAMPLES];
    sm_export_sample samples[MAX_SAMPLES];
    size_t n_samples;
} fixture;

static fixture fx;

static uint32_t add_cell(uint32_t test, uint32_t variant, const char *host, const char *peer,
                         sm_params p)
{
    assert_true(fx.n_cells < MAX_CELLS);
    sm_cell *c = &fx.cells[fx.n_cells];
    memset(c, 0, sizeof *c);
    c->test = test;
    c->variant = variant;
    snprintf(c->host, sizeof c->host, "%s", host);
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    c->params = p;
    return (uint32_t)fx.n_cells++;
}

/* A finished job: ok with metric m = v, or failed (the value is set anyway, to prove it is not
 * used). */
static sm_result *add_sample(uint32_t cell, uint32_t rep, bool warmup, bool ok, sm_metric m,
                             double v)
{
    assert_true(fx.n_samples < MAX_SAMPLES);
    sm_result *r = &fx.results[fx.n_samples];
    sm_result_init(r);
    r->ok = ok;
    sm_result_set(r, m, v);
    fx.samples[fx.n_samples++] = (sm_export_sample){cell, rep, warmup, r};
    return r;
}

/* The 2010 seed, three machines, each tcp then unix (cells in plan order: test, host,
 * variant), three measured repetitions and a warm-up whose absurd value must not count. */
static const char *const hosts_2010[] = {"xeon5130-a", "xeon5130-b", "e5405"};
static const double tcp_2010[3][3] = {
    {0.230, 0.231, 0.229}, {0.133, 0.134, 0.132}, {0.130, 0.131, 0.129}};
static const double unix_2010[3][3] = {
    {0.064, 0.065, 0.063}, {0.064, 0.065, 0.063}, {0.062, 0.063, 0.061}};

static int setup_2010(void **state)
{
    (void)state;
    memset(&fx, 0, sizeof fx);
    sm_params tcp = export_fixture_lines_params(SM_TR_TCP, false),
              uds = export_fixture_lines_params(SM_TR_UNIX, false);
    for (size_t h = 0; h < 3; h++) {
        uint32_t ct = add_cell(0, 0, hosts_2010[h], "", tcp);
        uint32_t cu = add_cell(0, 1, hosts_2010[h], "", uds);
        add_sample(ct, 0, true, true, SM_M_SECONDS, 9.9);
        add_sample(cu, 0, true, true, SM_M_SECONDS, 9.9);
        for (uint32_t rep = 0; rep < 3; rep++) {
            add_sample(ct, rep, false, true, SM_M_SECONDS, tcp_2010[h][rep]);
            add_sample(cu, rep, false, true, SM_M_SECONDS, unix_2010[h][rep]);
        }
    }
    return 0;
}

static int reset(void **state)
{
    (void)state;
    memset(&fx, 0, sizeof fx);
    return 0;
}

static void build(sm_scope scope, sm_table *t)
{
    sm_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(sm_export_build(7, "seed-tcp-unix", scope, fx.cells, fx.n_cells, fx.samples,
                                     fx.n_samples, t, &err),
                     0);
}

/* The median of the three per-repetition ratios of machine h. */
static double ratio_median(size_t h)
{
    double r[3];
    for (size_t i = 0; i < 3; i++)
        r[i] = tcp_2010[h][i] / unix_2010[h][i];
    double lo = fmin(r[0], fmin(r[1], r[2])), hi = fmax(r[0], fmax(r[1], r[2]));
    return r[0] + r[1] + r[2] - lo - hi;
}

static void test_export_2010_table_has_medians_n_and_paired_ratios(void **state)
{
    (void)state;
    sm_table t;
    build(SM_SCOPE_LOCAL, &t);
    assert_int_equal(t.run_id, 7);
    assert_string_equal(t.run_name, "seed-tcp-unix");
    assert_false(t.pairs);
    assert_int_equal(t.n_rows, 3);
    assert_int_equal(t.n_cols, 2);
    assert_int_equal(t.n_ratio_cols, 1);
    for (size_t h = 0; h < 3; h++) {
        assert_string_equal(t.rows[h], hosts_2010[h]);
        assert_string_equal(t.flags[h], "");
        sm_table_cell *ct = sm_table_at(&t, h, 0), *cu = sm_table_at(&t, h, 1);
        assert_true(ct->have);
        assert_true(cu->have);
        assert_int_equal(ct->s.n, 3);
        assert_int_equal(cu->s.n, 3);
        assert_int_equal(ct->failed, 0);
        assert_double_near(ct->s.median, tcp_2010[h][0], 0);
        assert_double_near(cu->s.median, unix_2010[h][0], 0);
        assert_double_near(ct->s.min, tcp_2010[h][2], 0);
        assert_double_near(ct->s.max, tcp_2010[h][1], 0);
        sm_table_cell *ratio = sm_table_ratio_at(&t, h, 0);
        assert_true(ratio->have);
        assert_int_equal(ratio->s.n, 3);
        assert_double_near(ratio->s.median, ratio_median(h), EPS);
    }
    assert_double_near(sm_table_ratio_at(&t, 0, 0)->s.median, 0.230 / 0.064, EPS);
    assert_double_near(sm_table_ratio_at(&t, 0, 0)->s.median, 3.59375, EPS);
    assert_double_near(sm_table_ratio_at(&t, 1, 0)->s.median, 2.078125, EPS);
    assert_double_near(sm_table_ratio_at(&t, 2, 0)->s.median, 2.08, 0.02);
    assert_string_equal(t.cols[0].label, "stream tcp lines 128 B x 8192");
    assert_string_equal(t.cols[1].label, "stream unix lines 128 B x 8192");
    assert_string_equal(t.cols[0].metric, "seconds");
    assert_string_equal(t.cols[0].unit, "s");
    assert_string_equal(t.ratio_cols[0].label, "tcp/unix stream lines 128 B x 8192");
    assert_string_equal(t.ratio_cols[0].metric, "seconds");
    assert_string_equal(t.ratio_cols[0].unit, "x");
    sm_table_fini(&t);
}

static void test_export_excludes_warmup_and_failed_samples_and_counts_failures(void **state)
{
    (void)state;
    /* Machine a, tcp: a failed fourth job (its value would drag the median), a job with no
     * result yet, and an ok job that lacks the metric. */
    add_sample(0, 3, false, false, SM_M_SECONDS, 0.001);
    fx.samples[fx.n_samples++] = (sm_export_sample){0, 4, false, NULL};
    sm_result *no_metric = add_sample(0, 5, false, true, SM_M_BYTES, 1048576);
    assert_false(sm_result_has(no_metric, SM_M_SECONDS));
    /* Machine b, unix: a failed warm-up is neither a sample nor a failure. */
    add_sample(3, 1, true, false, SM_M_SECONDS, 0.001);
    sm_table t;
    build(SM_SCOPE_LOCAL, &t);
    sm_table_cell *a_tcp = sm_table_at(&t, 0, 0);
    assert_int_equal(a_tcp->s.n, 3);
    assert_int_equal(a_tcp->failed, 1);
    assert_double_near(a_tcp->s.median, 0.230, 0);
    assert_double_near(a_tcp->s.max, 0.231, 0);
    assert_int_equal(sm_table_at(&t, 1, 1)->failed, 0);
    assert_int_equal(sm_table_at(&t, 1, 1)->s.n, 3);
    assert_int_equal(sm_table_ratio_at(&t, 0, 0)->s.n, 3);
    assert_int_equal(sm_table_ratio_at(&t, 0, 0)->failed, 0);
    sm_table_fini(&t);
}

static void disturb(size_t sample, const char *reason)
{
    sm_result *r = &fx.results[sample];
    r->host.known = true;
    r->host.disturbed = true;
    snprintf(r->host.reason, sizeof r->host.reason, "%s", reason);
}

/* Machine a's tcp repetitions 1 and 2 (samples 4 and 6) ran while a hog held the sender's CPU;
 * a disturbed warm-up and a disturbed failure count as what they are. */
static void disturb_a_tcp(void)
{
    disturb(4, "tx thread waited for a CPU 45% of the job > 10% (9.0 of 20.0 ms)");
    disturb(6, "tx thread waited for a CPU 50% of the job > 10% (10.0 of 20.0 ms)");
    disturb(0, "warm-up");
    sm_result *f = add_sample(0, 3, false, false, SM_M_SECONDS, 0.001);
    f->host.known = f->host.disturbed = true;
}

static void test_export_skips_disturbed_samples_and_counts_them_per_cell(void **state)
{
    (void)state;
    disturb_a_tcp();
    sm_table t;
    build(SM_SCOPE_LOCAL, &t);
    assert_false(t.with_disturbed);
    sm_table_cell *a_tcp = sm_table_at(&t, 0, 0);
    assert_true(a_tcp->have);
    assert_int_equal(a_tcp->s.n, 1);
    assert_int_equal(a_tcp->disturbed, 2);
    assert_int_equal(a_tcp->failed, 1);
    assert_double_near(a_tcp->s.median, 0.230, 0);
    /* The ratio pairs the clean repetition alone. */
    assert_int_equal(sm_table_ratio_at(&t, 0, 0)->s.n, 1);
    assert_double_near(sm_table_ratio_at(&t, 0, 0)->s.median, 0.230 / 0.064, EPS);
    for (size_t r = 0; r < 3; r++)
        for (size_t c = 0; c < 2; c++)
            if (r || c)
                assert_int_equal(sm_table_at(&t, r, c)->disturbed, 0);
    char why[96];
    sm_table_noisy_reason(a_tcp, t.with_disturbed, why, sizeof why);
    assert_string_equal(why, "2 of 3 samples disturbed");
    sm_table_noisy_reason(sm_table_at(&t, 1, 0), t.with_disturbed, why, sizeof why);
    assert_string_equal(why, "");
    sm_table_fini(&t);
}

static void test_export_includes_disturbed_samples_when_asked(void **state)
{
    (void)state;
    disturb_a_tcp();
    sm_table t;
    sm_error err = {0};
    sm_export_opts o = {.include_disturbed = true};
    assert_int_equal(sm_export_build_opts(7, "seed-tcp-unix", SM_SCOPE_LOCAL, fx.cells, fx.n_cells,
                                          fx.samples, fx.n_samples, &o, &t, &err),
                     0);
    assert_true(t.with_disturbed);
    sm_table_cell *a_tcp = sm_table_at(&t, 0, 0);
    assert_int_equal(a_tcp->s.n, 3);
    assert_int_equal(a_tcp->disturbed, 2); /* still counted */
    assert_int_equal(a_tcp->failed, 1);
    assert_double_near(a_tcp->s.max, 0.231, 0);
    assert_int_equal(sm_table_ratio_at(&t, 0, 0)->s.n, 3);
    char why[96];
    sm_table_noisy_reason(a_tcp, t.with_disturbed, why, sizeof why);
    assert_string_equal(why, "");
    sm_table_fini(&t);
}

/* Every sample of a cell disturbed: the cell has no data but says how many there were. */
static void test_export_cell_with_only_disturbed_samples_is_noisy_with_the_count(void **state)
{
    (void)state;
    disturb(3, "steal");
    disturb(5, "steal");
    disturb(7, "steal");
    sm_table t;
    build(SM_SCOPE_LOCAL, &t);
    sm_table_cell *a_unix = sm_table_at(&t, 0, 1);
    assert_false(a_unix->have);
    assert_int_equal(a_unix->disturbed, 3);
    assert_false(sm_table_ratio_at(&t, 0, 0)->have);
    char why[96];
    sm_table_noisy_reason(a_unix, false, why, sizeof why);
    assert_string_equal(why, "3 of 3 samples disturbed");
    sm_table_fini(&t);
}

static void test_export_failed_repetition_drops_its_ratio_pair(void **state)
{
    (void)state;
    /* Machine a's tcp rep 1 fails: tcp keeps reps 0 and 2, the ratio pairs only those. */
    /* Setup order: two warm-ups, then tcp rep 0, unix rep 0, tcp rep 1. */
    assert_int_equal(fx.samples[4].cell, 0);
    assert_int_equal(fx.samples[4].rep, 1);
    fx.results[4].ok = false;
    sm_table t;
    build(SM_SCOPE_LOCAL, &t);
    sm_table_cell *a_tcp = sm_table_at(&t, 0, 0), *ratio = sm_table_ratio_at(&t, 0, 0);
    assert_int_equal(a_tcp->s.n, 2);
    assert_int_equal(a_tcp->failed, 1);
    assert_double_near(a_tcp->s.median, (0.230 + 0.229) / 2, EPS);
    assert_int_equal(ratio->s.n, 2);
    assert_double_near(ratio->s.min, 0.230 / 0.064, EPS);
    assert_double_near(ratio->s.max, 0.229 / 0.063, EPS);
    sm_table_fini(&t);
}

static void test_export_missing_results_are_not_counted(void **state)
{
    (void)state;
    /* Machine c has no unix result yet: an empty cell, no ratio, nothing failed. */
    for (size_t i = 0; i < fx.n_samples; i++) {
        if (fx.samples[i].cell == 5)
            fx.samples[i].result = NULL;
    }
    sm_table t;
    build(SM_SCOPE_LOCAL, &t);
    assert_int_equal(t.n_rows, 3);
    assert_false(sm_table_at(&t, 2, 1)->have);
    assert_int_equal(sm_table_at(&t, 2, 1)->failed, 0);
    assert_int_equal(sm_table_at(&t, 2, 1)->s.n, 0);
    assert_true(sm_table_at(&t, 2, 0)->have);
    assert_false(sm_table_ratio_at(&t, 2, 0)->have);
    assert_true(sm_table_ratio_at(&t, 1, 0)->have);
    sm_table_fini(&t);
}

static void test_export_pairs_ratios_by_repetition_not_by_order_or_rank(void **state)
{
    (void)state;
    sm_params p = export_fixture_lines_params(SM_TR_TCP, false);
    uint32_t ct = add_cell(0, 0, "h", "", p);
    p.transport = SM_TR_UNIX;
    uint32_t cu = add_cell(0, 1, "h", "", p);
    /* By rep: 1/4, 2/1, 4/2 = 0.25, 2, 2. Sorted pairs would give 1, 1, 1; pairs in the order
     * given would give 4/1, 1/2, 2/4. Rep 7 has no partner. */
    add_sample(ct, 2, false, true, SM_M_SECONDS, 4.0);
    add_sample(cu, 1, false, true, SM_M_SECONDS, 1.0);
    add_sample(ct, 0, false, true, SM_M_SECONDS, 1.0);
    add_sample(cu, 2, false, true, SM_M_SECONDS, 2.0);
    add_sample(ct, 1, false, true, SM_M_SECONDS, 2.0);
    add_sample(cu, 0, false, true, SM_M_SECONDS, 4.0);
    add_sample(ct, 7, false, true, SM_M_SECONDS, 100.0);
    sm_table t;
    build(SM_SCOPE_LOCAL, &t);
    sm_table_cell *ratio = sm_table_ratio_at(&t, 0, 0);
    assert_true(ratio->have);
    assert_int_equal(ratio->s.n, 3);
    assert_double_near(ratio->s.median, 2.0, 0);
    assert_double_near(ratio->s.min, 0.25, 0);
    assert_int_equal(sm_table_at(&t, 0, 0)->s.n, 4);
    sm_table_fini(&t);
}

static void test_export_headline_metric_per_workload(void **state)
{
    (void)state;
    sm_params p;
    sm_params_init(&p, SM_WL_STREAM);
    assert_int_equal(sm_export_headline(&p), SM_M_THROUGHPUT);
    p.framing = SM_FRAMING_LINES;
    assert_int_equal(sm_export_headline(&p), SM_M_SECONDS);
    sm_params_init(&p, SM_WL_RR);
    assert_int_equal(sm_export_headline(&p), SM_M_RTT_P50_US);
    sm_params_init(&p, SM_WL_CONNECT);
    assert_int_equal(sm_export_headline(&p), SM_M_CONNECTS_PER_S);
    sm_params_init(&p, SM_WL_HTTP);
    assert_int_equal(sm_export_headline(&p), SM_M_THROUGHPUT);
}

static void test_export_labels_name_workload_transport_sizes_and_amount(void **state)
{
    (void)state;
    sm_params s = export_fixture_lines_params(SM_TR_TCP, true);
    sm_params su = export_fixture_lines_params(SM_TR_UNIX, false);
    sm_params raw;
    sm_params_init(&raw, SM_WL_STREAM);
    raw.sndbuf = 256u << 10;
    sm_params rr;
    sm_params_init(&rr, SM_WL_RR);
    rr.transport = SM_TR_UNIX;
    rr.count = 0;
    rr.duration_ms = 1000;
    sm_params conn;
    sm_params_init(&conn, SM_WL_CONNECT);
    conn.count = 500;
    sm_params big;
    sm_params_init(&big, SM_WL_STREAM);
    big.count = 0;
    big.bytes = 1ull << 30;
    big.cork = true;
    add_cell(0, 0, "h", "", s);
    add_cell(0, 1, "h", "", su);
    add_cell(1, 0, "h", "", raw);
    add_cell(2, 0, "h", "", rr);
    add_cell(3, 0, "h", "", conn);
    add_cell(4, 0, "h", "", big);
    sm_table t;
    build(SM_SCOPE_LOCAL, &t);
    assert_int_equal(t.n_cols, 6);
    assert_string_equal(t.cols[0].label, "stream tcp+nodelay lines 128 B x 8192");
    assert_string_equal(t.cols[1].label, "stream unix lines 128 B x 8192");
    assert_string_equal(t.cols[2].label, "stream tcp 128 KiB x 2048 sndbuf 256 KiB");
    assert_string_equal(t.cols[2].metric, "throughput_MBps");
    assert_string_equal(t.cols[2].unit, "MB/s");
    assert_string_equal(t.cols[3].label, "rr unix 1 B/1 B 1000 ms");
    assert_string_equal(t.cols[3].metric, "rtt_p50_us");
    assert_string_equal(t.cols[3].unit, "us");
    assert_string_equal(t.cols[4].label, "connect tcp x 500");
    assert_string_equal(t.cols[4].metric, "connects_per_s");
    assert_string_equal(t.cols[4].unit, "1/s");
    assert_string_equal(t.cols[5].label, "stream tcp+cork 128 KiB 1 GiB total");
    assert_int_equal(t.n_ratio_cols, 1);
    assert_string_equal(t.ratio_cols[0].label, "tcp+nodelay/unix stream lines 128 B x 8192");
    /* No data at all: every cell is empty. */
    for (size_t c = 0; c < t.n_cols; c++)
        assert_false(sm_table_at(&t, 0, c)->have);
    assert_false(sm_table_ratio_at(&t, 0, 0)->have);
    sm_table_fini(&t);
}

static void
test_export_ratio_needs_the_unix_variant_of_the_same_test_with_equal_params(void **state)
{
    (void)state;
    sm_params tcp = export_fixture_lines_params(SM_TR_TCP, false),
              nodelay = export_fixture_lines_params(SM_TR_TCP, true);
    sm_params uds = export_fixture_lines_params(SM_TR_UNIX, false), uds_256 = uds;
    uds_256.msg_size = 256;
    /* Test 0: tcp, tcp+nodelay, unix: both tcp columns pair with the one unix column. */
    add_cell(0, 0, "h", "", tcp);
    add_cell(0, 1, "h", "", nodelay);
    add_cell(0, 2, "h", "", uds);
    /* Test 1: unix differs in msg_size: no ratio. Test 2: tcp only; its unix twin is in test 3,
     * another test: no ratio. */
    add_cell(1, 0, "h", "", tcp);
    add_cell(1, 1, "h", "", uds_256);
    add_cell(2, 0, "h", "", tcp);
    add_cell(3, 0, "h", "", uds);
    for (uint32_t c = 0; c < 3; c++)
        add_sample(c, 0, false, true, SM_M_SECONDS, c == 2 ? 0.5 : 1.0 + c);
    sm_table t;
    build(SM_SCOPE_LOCAL, &t);
    assert_int_equal(t.n_cols, 7);
    assert_int_equal(t.n_ratio_cols, 2);
    assert_string_equal(t.ratio_cols[0].label, "tcp/unix stream lines 128 B x 8192");
    assert_string_equal(t.ratio_cols[1].label, "tcp+nodelay/unix stream lines 128 B x 8192");
    assert_double_near(sm_table_ratio_at(&t, 0, 0)->s.median, 2.0, 0);
    assert_double_near(sm_table_ratio_at(&t, 0, 1)->s.median, 4.0, 0);
    sm_table_fini(&t);
}

static void test_export_rows_follow_first_appearance(void **state)
{
    (void)state;
    sm_params p;
    sm_params_init(&p, SM_WL_CONNECT);
    sm_params q = p;
    q.count = 2000;
    add_cell(0, 0, "zeta", "", p);
    add_cell(0, 0, "alpha", "", p);
    add_cell(1, 0, "omega", "", q);
    add_cell(1, 0, "zeta", "", q);
    add_cell(1, 0, "alpha", "", q);
    add_sample(4, 0, false, true, SM_M_CONNECTS_PER_S, 5000);
    sm_table t;
    build(SM_SCOPE_LOCAL, &t);
    assert_int_equal(t.n_rows, 3);
    assert_string_equal(t.rows[0], "zeta");
    assert_string_equal(t.rows[1], "alpha");
    assert_string_equal(t.rows[2], "omega");
    assert_int_equal(t.n_cols, 2);
    assert_string_equal(t.cols[0].label, "connect tcp x 1000");
    assert_string_equal(t.cols[1].label, "connect tcp x 2000");
    assert_false(sm_table_at(&t, 2, 0)->have);
    assert_true(sm_table_at(&t, 1, 1)->have);
    assert_double_near(sm_table_at(&t, 1, 1)->s.median, 5000, 0);
    sm_table_fini(&t);
}

static void test_export_pair_scope_uses_only_pair_cells_as_client_to_server_rows(void **state)
{
    (void)state;
    sm_params local;
    sm_params_init(&local, SM_WL_RR);
    sm_params pair = local;
    pair.scope = SM_SCOPE_PAIR;
    add_cell(0, 0, "a", "", local);
    uint32_t ab = add_cell(1, 0, "a", "b", pair);
    uint32_t ba = add_cell(1, 0, "b", "a", pair);
    add_sample(0, 0, false, true, SM_M_RTT_P50_US, 10);
    add_sample(ab, 0, false, true, SM_M_RTT_P50_US, 80);
    add_sample(ba, 0, false, true, SM_M_RTT_P50_US, 90);
    add_sample(ba, 1, false, false, SM_M_RTT_P50_US, 1);
    /* A sample of a cell that does not exist is ignored. */
    fx.samples[fx.n_samples++] = (sm_export_sample){99, 0, false, &fx.results[0]};
    sm_table t;
    build(SM_SCOPE_PAIR, &t);
    assert_true(t.pairs);
    assert_int_equal(t.n_rows, 2);
    assert_string_equal(t.rows[0], "a->b");
    assert_string_equal(t.rows[1], "b->a");
    assert_int_equal(t.n_cols, 1);
    assert_string_equal(t.cols[0].label, "rr tcp 1 B/1 B x 10000");
    assert_double_near(sm_table_at(&t, 0, 0)->s.median, 80, 0);
    assert_double_near(sm_table_at(&t, 1, 0)->s.median, 90, 0);
    assert_int_equal(sm_table_at(&t, 1, 0)->failed, 1);
    /* The run measured the same test on a's loopback: the pair over it, for a->b only (b has
     * no loopback cell). */
    assert_int_equal(t.n_ratio_cols, 1);
    assert_string_equal(t.ratio_cols[0].label, "pair/loopback rr tcp 1 B/1 B x 10000");
    assert_string_equal(t.ratio_cols[0].metric, "rtt_p50_us");
    assert_string_equal(t.ratio_cols[0].unit, "x");
    assert_true(sm_table_ratio_at(&t, 0, 0)->have);
    assert_double_near(sm_table_ratio_at(&t, 0, 0)->s.median, 8, 0);
    assert_false(sm_table_ratio_at(&t, 1, 0)->have);
    sm_table_fini(&t);
}

/* The 2009 figures (curl in a thread vs the event loop): MB/s and user seconds per repetition. */
static void test_export_http_client_models_side_by_side_with_user_cpu_ratio(void **state)
{
    (void)state;
    static const double mbps[2][3] = {{292.85, 287.13, 271.66}, {225.35, 223.90, 129.88}};
    static const double user[2][3] = {{0.038, 0.038, 0.219}, {0.159, 0.163, 0.301}};
    sm_params p;
    sm_params_init(&p, SM_WL_HTTP);
    p.bytes = 51711600;
    p.repeat = 4;
    sm_error err;
    assert_int_equal(sm_params_validate(&p, &err), 0);
    sm_params multi = p;
    multi.client = SM_HTTP_MULTI;
    uint32_t cells[2] = {add_cell(0, 0, "mac-pro", "", p), add_cell(0, 1, "mac-pro", "", multi)};
    for (uint32_t rep = 0; rep < 3; rep++) {
        for (int k = 0; k < 2; k++) {
            sm_result *r = add_sample(cells[k], rep, false, true, SM_M_THROUGHPUT, mbps[k][rep]);
            sm_result_set(r, SM_M_USER_S, user[k][rep]);
        }
    }
    sm_table t;
    build(SM_SCOPE_LOCAL, &t);
    assert_int_equal(t.n_cols, 2);
    assert_int_equal(t.n_ratio_cols, 1);
    assert_string_equal(t.cols[0].label, "http thread 51711600 B x4");
    assert_string_equal(t.cols[1].label, "http multi 51711600 B x4");
    assert_string_equal(t.cols[1].metric, "throughput_MBps");
    assert_double_near(sm_table_at(&t, 0, 0)->s.median, 287.13, 0);
    assert_double_near(sm_table_at(&t, 0, 1)->s.median, 223.90, 0);
    /* A ratio of user CPU, not of the headline throughput beside it: named so. */
    assert_string_equal(t.ratio_cols[0].label, "user CPU multi/thread, http 51711600 B x4");
    assert_string_equal(t.ratio_cols[0].brief, "user CPU multi/thread http 51711600 B");
    assert_string_equal(t.ratio_cols[0].metric, "user_s");
    assert_string_equal(t.ratio_cols[0].unit, "x");
    /* Paired by repetition: 0.159/0.038, 0.163/0.038, 0.301/0.219; median 0.159/0.038. */
    sm_table_cell *ratio = sm_table_ratio_at(&t, 0, 0);
    assert_true(ratio->have);
    assert_int_equal(ratio->s.n, 3);
    assert_double_near(ratio->s.median, 0.159 / 0.038, EPS);
    assert_false(ratio->coarse); /* 0.038 s is almost 4 ticks: judged */
    sm_table_fini(&t);
}

/* User times of a tick or two: the ratio is shown, but marked coarse, for the analysis to
 * leave alone. */
static void test_export_a_user_cpu_ratio_of_a_few_ticks_is_coarse(void **state)
{
    (void)state;
    static const double user[2][3] = {{0.01, 0.0, 0.02}, {0.02, 0.01, 0.01}};
    sm_params p;
    sm_params_init(&p, SM_WL_HTTP);
    p.bytes = 1048576;
    p.repeat = 11;
    sm_error err;
    assert_int_equal(sm_params_validate(&p, &err), 0);
    sm_params pool = p;
    pool.client = SM_HTTP_POOL;
    uint32_t cells[2] = {add_cell(0, 0, "h3", "", p), add_cell(0, 1, "h3", "", pool)};
    for (uint32_t rep = 0; rep < 3; rep++) {
        for (int k = 0; k < 2; k++) {
            sm_result *r = add_sample(cells[k], rep, false, true, SM_M_THROUGHPUT, 1300);
            sm_result_set(r, SM_M_USER_S, user[k][rep]);
        }
    }
    sm_table t;
    build(SM_SCOPE_LOCAL, &t);
    assert_int_equal(t.n_ratio_cols, 1);
    sm_table_cell *ratio = sm_table_ratio_at(&t, 0, 0);
    assert_true(ratio->have);
    assert_true(ratio->coarse);
    char *md = sm_table_md(&t);
    assert_non_null(strstr(md, " (coarse)"));
    free(md);
    char *json = sm_table_json(&t);
    assert_non_null(strstr(json, "\"coarse\":true"));
    free(json);
    sm_table_fini(&t);
}

static void test_export_no_cells_gives_an_empty_table(void **state)
{
    (void)state;
    sm_table t;
    sm_error err;
    assert_int_equal(sm_export_build(1, NULL, SM_SCOPE_LOCAL, NULL, 0, NULL, 0, &t, &err), 0);
    assert_int_equal(t.n_rows, 0);
    assert_int_equal(t.n_cols, 0);
    assert_int_equal(t.n_ratio_cols, 0);
    assert_string_equal(t.run_name, "");
    sm_table_fini(&t);
}

/* Fingerprints of the 2010 machines: alike but xeon5130-a's lo, shaped by a tbf. */
static void fps_2010(sm_fingerprint fp[3], sm_fp_host hosts[3])
{
    sm_error err = {0};
    for (size_t h = 0; h < 3; h++) {
        sm_fp_init(&fp[h]);
        assert_int_equal(sm_fp_set(&fp[h], "if.lo.qdisc",
                                   h == 0 ? "tbf rate 400Mbit burst 128Kb" : "noqueue", &err),
                         0);
        assert_int_equal(sm_fp_set(&fp[h], "kernel.release", "2.6.32", &err), 0);
        sm_fp_sort(&fp[h]);
        hosts[h] = (sm_fp_host){hosts_2010[h], &fp[h]};
    }
}

static void test_export_md_footnotes_and_json_carry_the_flagged_hosts_differences(void **state)
{
    (void)state;
    sm_table t;
    build(SM_SCOPE_LOCAL, &t);
    sm_anomalies an = {0};
    sm_error err = {0};
    assert_int_equal(sm_analysis_table(&t, NULL, &an, &err), 0);
    sm_analysis_flag_table(&t, &an);
    assert_string_not_equal(t.flags[0], "");
    char flag[sizeof t.flags[0]];
    snprintf(flag, sizeof flag, "%s", t.flags[0]);
    char *plain_md = sm_table_md(&t), *plain_json = sm_table_json(&t);

    /* No fingerprints: the exports are the table's own. */
    sm_explanation none = {0};
    char *md = sm_export_md(&t, &an, &none), *json = sm_export_json(&t, &an, &none);
    assert_string_equal(md, plain_md);
    assert_string_equal(json, plain_json);
    free(md);
    free(json);

    sm_fingerprint fp[3];
    sm_fp_host hosts[3];
    fps_2010(fp, hosts);
    sm_explanation ex;
    assert_int_equal(sm_explain_anomalies(&an, hosts, 3, NULL, 0, &ex, &err), 0);
    json = sm_export_json(&t, &an, &ex);
    cJSON *root = cJSON_Parse(json);
    cJSON *flags = cJSON_GetObjectItem(root, "flags");
    assert_int_equal(cJSON_GetArraySize(flags), 1);
    cJSON *d = cJSON_GetObjectItem(cJSON_GetArrayItem(flags, 0), "differences");
    assert_int_equal(cJSON_GetArraySize(d), 1);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(d, 0), "host")->valuestring,
                        "xeon5130-a");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(d, 0), "fleet_value")->valuestring,
                        "noqueue");
    cJSON_Delete(root);
    free(json);

    md = sm_export_md(&t, &an, &ex);
    char marked[sizeof t.flags[0] + 8];
    snprintf(marked, sizeof marked, "**%s [1]**", flag);
    if (strstr(md, marked) == NULL)
        fail_msg("%s lacks %s", md, marked);
    /* After the table and its legend. */
    static const char note[] =
        "[min, max]).\n\n[1] xeon5130-a: lo qdisc tbf rate 400Mbit burst 128Kb "
        "(fleet: noqueue, 2 of 2 hosts)\n";
    assert_true(strlen(md) > strlen(note));
    assert_string_equal(md + strlen(md) - strlen(note), note);
    assert_null(strstr(md, "[2]"));
    free(md);
    /* CSV has no place for them and stays as it was. */
    char *csv = sm_table_csv(&t);
    assert_null(strstr(csv, "qdisc"));
    free(csv);

    free(plain_md);
    free(plain_json);
    sm_explanation_fini(&ex);
    for (size_t h = 0; h < 3; h++)
        sm_fp_fini(&fp[h]);
    sm_anomalies_fini(&an);
    sm_table_fini(&t);
}

/* Two columns whose brief forms meet (they differ only in the amount) get distinct headers;
 * the full labels stay as they are. */
static void test_export_brief_headers_are_unique_in_a_table(void **state)
{
    (void)state;
    sm_params a;
    sm_params_init(&a, SM_WL_CONNECT);
    a.count = 1000;
    sm_params b = a;
    b.count = 2000;
    uint32_t ca = add_cell(0, 0, "h1", "", a), cb = add_cell(1, 0, "h1", "", b);
    add_sample(ca, 0, false, true, SM_M_CONNECTS_PER_S, 100);
    add_sample(cb, 0, false, true, SM_M_CONNECTS_PER_S, 90);
    sm_table t;
    build(SM_SCOPE_LOCAL, &t);
    assert_int_equal(t.n_cols, 2);
    assert_string_equal(t.cols[0].label, "connect tcp x 1000");
    assert_string_equal(t.cols[1].label, "connect tcp x 2000");
    assert_string_equal(t.cols[0].brief, "connect tcp");
    assert_string_equal(t.cols[1].brief, "connect tcp #2");
    sm_table_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_export_2010_table_has_medians_n_and_paired_ratios, setup_2010),
        cmocka_unit_test_setup(test_export_excludes_warmup_and_failed_samples_and_counts_failures,
                               setup_2010),
        cmocka_unit_test_setup(test_export_failed_repetition_drops_its_ratio_pair, setup_2010),
        cmocka_unit_test_setup(test_export_skips_disturbed_samples_and_counts_them_per_cell,
                               setup_2010),
        cmocka_unit_test_setup(test_export_includes_disturbed_samples_when_asked, setup_2010),
        cmocka_unit_test_setup(test_export_cell_with_only_disturbed_samples_is_noisy_with_the_count,
                               setup_2010),
        cmocka_unit_test_setup(test_export_missing_results_are_not_counted, setup_2010),
        cmocka_unit_test_setup(test_export_pairs_ratios_by_repetition_not_by_order_or_rank, reset),
        cmocka_unit_test(test_export_headline_metric_per_workload),
        cmocka_unit_test_setup(test_export_labels_name_workload_transport_sizes_and_amount, reset),
        cmocka_unit_test_setup(
            test_export_ratio_needs_the_unix_variant_of_the_same_test_with_equal_params, reset),
        cmocka_unit_test_setup(test_export_rows_follow_first_appearance, reset),
        cmocka_unit_test_setup(test_export_pair_scope_uses_only_pair_cells_as_client_to_server_rows,
                               reset),
        cmocka_unit_test_setup(test_export_http_client_models_side_by_side_with_user_cpu_ratio,
                               reset),
        cmocka_unit_test_setup(test_export_a_user_cpu_ratio_of_a_few_ticks_is_coarse, reset),
        cmocka_unit_test(test_export_no_cells_gives_an_empty_table),
        cmocka_unit_test_setup(
            test_export_md_footnotes_and_json_carry_the_flagged_hosts_differences, setup_2010),
        cmocka_unit_test_setup(test_export_brief_headers_are_unique_in_a_table, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
