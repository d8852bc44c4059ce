/* Unit tests of the analysis of a pair matrix: a slow server, slow links and slow hosts apart. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "coordinator/analysis/analysis.h"
#include "coordinator/analysis/table.h"
#include "tests/unit/coordinator/analysis/analysis_fixture.h"
#include "tests/unit/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows "<p>1-><p>2", "<p>1-><p>3", ... for 4 hosts (12 rows), one throughput column near
 * 1000 MB/s with +-1% deterministic jitter (irregular, so that the polish leaves residuals with
 * a MAD above 0); cells whose server is slow_server, and the one row slow_row, at a third. */
static void table_pairs(sm_table *t, const char *prefix, int slow_server, int slow_row)
{
    assert_int_equal(sm_table_init(t, 12, 1, 0), 0);
    t->pairs = true;
    analysis_fixture_set_col(&t->cols[0], "stream tcp 1 GB", "throughput_MBps", "MB/s");
    size_t r = 0;
    for (int c = 1; c <= 4; c++) {
        for (int s = 1; s <= 4; s++) {
            if (c == s)
                continue;
            snprintf(t->rows[r], sizeof t->rows[r], "%s%d->%s%d", prefix, c, prefix, s);
            double v = 1000.0 * (1 + 0.01 * sin(2.3 * (double)r + 0.5));
            if (s == slow_server || (int)r == slow_row)
                v /= 3;
            analysis_fixture_set_cell(sm_table_at(t, r, 0), v, 5, 0.02);
            r++;
        }
    }
}

/* ---- pair matrix ---- */

static void test_analysis_pair_matrix_tells_a_slow_server_from_slow_links(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    table_pairs(&t, "h", 3, -1);
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    const sm_anomaly *x = &a.v[0];
    assert_int_equal(x->kind, SM_ANOMALY_SLOW_HOST);
    assert_string_equal(x->host, "h3");
    assert_string_equal(x->role, "server");
    assert_int_equal(x->row, 1); /* "h1->h3" */
    assert_int_equal(x->dir, SM_DIR_SLOWER);
    assert_double_near(x->reference, 1000, 10);
    assert_double_near(x->value, 1000.0 / 3, 10);
    assert_double_near(x->rel, (x->value - x->reference) / x->reference, 1e-12);
    assert_true(x->z < -3.5);

    assert_double_near(x->z, -55.2, 0.05);

    /* The flag goes on every row whose server is h3, and on no other. */
    sm_analysis_flag_table(&t, &a);
    for (size_t r = 0; r < t.n_rows; r++) {
        bool to_h3 = strcmp(t.rows[r] + strlen(t.rows[r]) - 2, "h3") == 0;
        assert_string_equal(t.flags[r], to_h3 ? "slow host: h3 (server) stream tcp 1 GB 337 MB/s "
                                                "vs 992 MB/s (z -55.2)"
                                              : "");
    }
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

/* As the lab measures it: the slow host's pairs are steady (the shaper sets their pace) and the
 * fast pairs are the noisy ones. They still count for the fleet's typical pair. */
static void test_analysis_pair_matrix_keeps_noisy_fast_pairs_in_the_polish(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    table_pairs(&t, "h", 3, -1);
    for (size_t r = 0; r < t.n_rows; r++)
        if (strstr(t.rows[r], "h3") == NULL)
            sm_table_at(&t, r, 0)->s.cv = 0.14;
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0].kind, SM_ANOMALY_SLOW_HOST);
    assert_string_equal(a.v[0].host, "h3");
    assert_string_equal(a.v[0].role, "server");
    assert_int_equal(a.v[0].dir, SM_DIR_SLOWER);
    assert_double_near(a.v[0].reference, 1000, 10);
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

/* A shaped host paces its pairs so evenly that their residuals are all but 0: the links between
 * the other hosts are judged among themselves (here they spread by +-8%, one by 18%), not
 * against those zeros, which would make the MAD 0 and any pair past the floor a slow link. */
static void test_analysis_pair_matrix_judges_links_without_a_slow_hosts_pairs(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    table_pairs(&t, "h", -1, -1);
    for (size_t r = 0; r < t.n_rows; r++) {
        sm_table_cell *c = sm_table_at(&t, r, 0);
        double v = 1000.0 * (1 + 0.08 * sin(1.7 * (double)r + 0.3));
        if (strstr(t.rows[r], "h3") != NULL)
            v = 12.0; /* both ways, exactly the shaper's pace */
        else if (strcmp(t.rows[r], "h1->h2") == 0)
            v = 1180.0;
        analysis_fixture_set_cell(c, v, 5, 0.02);
    }
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    for (size_t i = 0; i < a.n; i++) {
        if (a.v[i].kind != SM_ANOMALY_SLOW_HOST || strcmp(a.v[i].host, "h3") != 0)
            fail_msg("unexpected %s %s", sm_anomaly_kind_name(a.v[i].kind), a.v[i].host);
    }
    assert_int_equal(a.n, 2); /* as client and as server */
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

static void test_analysis_pair_matrix_tells_a_slow_link_from_slow_hosts(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    table_pairs(&t, "h", -1, 5);
    assert_string_equal(t.rows[5], "h2->h4");
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    const sm_anomaly *x = &a.v[0];
    assert_int_equal(x->kind, SM_ANOMALY_SLOW_LINK);
    assert_string_equal(x->host, "h2->h4");
    assert_string_equal(x->role, "");
    assert_int_equal(x->row, 5);
    assert_int_equal(x->dir, SM_DIR_SLOWER);
    /* value is the fit: the cell itself. */
    assert_double_near(x->value, sm_table_at(&t, 5, 0)->s.median, 1e-9);
    assert_double_near(x->reference, 1000, 20);
    assert_double_near(x->rel, -2.0 / 3, 0.03);
    /* The reference is what its two hosts predict, so the text reads as the residual. */
    char buf[256];
    sm_anomaly_text(x, buf, sizeof buf);
    assert_string_equal(buf, "h2->h4: stream tcp 1 GB (MB/s) 331.5 MB/s vs expected "
                             "984.7 MB/s, 3.0x slower, z -1576.7 [|z| > 3.5 and >= 15%]");
    sm_analysis_flag_table(&t, &a);
    for (size_t r = 0; r < t.n_rows; r++) {
        assert_string_equal(t.flags[r],
                            r == 5 ? "slow link: stream tcp 1 GB 332 MB/s vs 985 MB/s (z -1576.7)"
                                   : "");
    }
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

/* h3 is slow as a server but for one client: that cell's residual is as large as the effect,
 * yet it is the host's doing, not the link's. */
static void test_analysis_pair_matrix_leaves_the_links_of_a_slow_host_to_it(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    table_pairs(&t, "h", 3, -1);
    assert_string_equal(t.rows[11], "h4->h3");
    analysis_fixture_set_cell(sm_table_at(&t, 11, 0), 1000, 5, 0.02);
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.v[0].kind, SM_ANOMALY_SLOW_HOST);
    assert_string_equal(a.v[0].host, "h3");
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

static void test_analysis_pair_rows_split_at_the_arrow_not_at_a_dash_in_a_name(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    table_pairs(&t, "rack-", 3, -1);
    assert_string_equal(t.rows[1], "rack-1->rack-3");
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 1);
    assert_string_equal(a.v[0].host, "rack-3");
    assert_string_equal(a.v[0].role, "server");
    sm_anomalies_fini(&a);
    sm_table_fini(&t);
}

static void test_analysis_pair_table_of_two_hosts_raises_nothing(void **state)
{
    (void)state;
    sm_anomalies a = {0};
    sm_table t;
    assert_int_equal(sm_table_init(&t, 2, 1, 0), 0);
    t.pairs = true;
    analysis_fixture_set_col(&t.cols[0], "stream tcp 1 GB", "throughput_MBps", "MB/s");
    snprintf(t.rows[0], sizeof t.rows[0], "h1->h2");
    snprintf(t.rows[1], sizeof t.rows[1], "h2->h1");
    analysis_fixture_set_cell(sm_table_at(&t, 0, 0), 1000, 5, 0.01);
    analysis_fixture_set_cell(sm_table_at(&t, 1, 0), 10, 5, 0.01);
    assert_int_equal(sm_analysis_table(&t, NULL, &a, NULL), 0);
    assert_int_equal(a.n, 0);
    sm_table_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_analysis_pair_matrix_tells_a_slow_server_from_slow_links),
        cmocka_unit_test(test_analysis_pair_matrix_keeps_noisy_fast_pairs_in_the_polish),
        cmocka_unit_test(test_analysis_pair_matrix_judges_links_without_a_slow_hosts_pairs),
        cmocka_unit_test(test_analysis_pair_matrix_tells_a_slow_link_from_slow_hosts),
        cmocka_unit_test(test_analysis_pair_matrix_leaves_the_links_of_a_slow_host_to_it),
        cmocka_unit_test(test_analysis_pair_rows_split_at_the_arrow_not_at_a_dash_in_a_name),
        cmocka_unit_test(test_analysis_pair_table_of_two_hosts_raises_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
