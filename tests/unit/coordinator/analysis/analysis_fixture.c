/* Comparison tables set by hand, for the analysis's unit tests: see analysis_fixture.h. */
#include "tests/unit/coordinator/analysis/analysis_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

void analysis_fixture_set_cell(sm_table_cell *c, double median, size_t n, double cv)
{
    assert_non_null(c);
    c->have = true;
    c->s.n = n;
    c->s.median = median;
    c->s.mean = median;
    c->s.stddev = cv * median;
    c->s.min = 0.97 * median;
    c->s.max = 1.03 * median;
    c->s.cv = cv;
    c->s.ci95_low = 0.98 * median;
    c->s.ci95_high = 1.02 * median;
    c->s.ci_coverage = 0.9375;
}

void analysis_fixture_set_col(sm_table_col *c, const char *label, const char *metric,
                              const char *unit)
{
    snprintf(c->label, sizeof c->label, "%s", label);
    snprintf(c->metric, sizeof c->metric, "%s", metric);
    snprintf(c->unit, sizeof c->unit, "%s", unit);
}

void analysis_fixture_table_fleet(sm_table *t, size_t n, size_t cols, double cv)
{
    assert_int_equal(sm_table_init(t, n, cols, 0), 0);
    for (size_t c = 0; c < cols; c++) {
        char label[32];
        snprintf(label, sizeof label, "test %zu", c);
        analysis_fixture_set_col(&t->cols[c], label, "seconds", "s");
    }
    for (size_t r = 0; r < n; r++) {
        snprintf(t->rows[r], sizeof t->rows[r], "h%zu", r + 1);
        for (size_t c = 0; c < cols; c++)
            analysis_fixture_set_cell(sm_table_at(t, r, c),
                                      1.0 + 0.001 * ((double)((r * 3 + c) % 5) - 2), 5, cv);
    }
}
