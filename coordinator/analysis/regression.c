/* Regressions: a run's cells against a baseline run's, beyond the fleet's own move. */
#include "coordinator/analysis/internal.h"

#include "proto/stats.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- regressions ---- */

static size_t find_label(const char (*labels)[2 * 65 + 2], size_t n, const char *want)
{
    for (size_t i = 0; i < n; i++) {
        if (strncmp(labels[i], want, sizeof labels[i]) == 0)
            return i;
    }
    return SIZE_MAX;
}

static size_t find_col(const sm_table_col *cols, size_t n, const char *want)
{
    for (size_t i = 0; i < n; i++) {
        if (strncmp(cols[i].label, want, sizeof cols[i].label) == 0)
            return i;
    }
    return SIZE_MAX;
}

/* A noisy cell can regress too: its wide interval already makes "CIs apart" harder to meet,
 * and a lab cell of five repetitions is often noisy on one slow repetition. Fewer than 3
 * samples are no evidence. */
static bool usable(const sm_table_cell *c)
{
    return c->have && isfinite(c->s.median) && c->s.n >= SM_ANALYSIS_NOISY_MIN_N;
}

/* The fleet's move in a column: the median over the rows matched in both runs of
 * now / baseline (a factor; 1 when fewer than 3 rows match, as a move of one or two hosts is
 * theirs, not the fleet's). *count is how many rows it is the median of; *now_med and
 * *was_med the medians of those rows' medians in each run. */
static int fleet_factor(const sm_table *run, const sm_table *base, const sm_analysis_column *k,
                        const sm_analysis_column *kb, double *factor, size_t *count,
                        double *now_med, double *was_med)
{
    size_t n = run->n_rows, m = 0;
    double *f = sm_analysis_doubles(3 * n);
    if (f == NULL)
        return SM_ENOMEM;
    double *nows = f + n, *wass = nows + n;
    for (size_t r = 0; r < n; r++) {
        size_t rb = find_label(base->rows, base->n_rows, run->rows[r]);
        if (rb == SIZE_MAX)
            continue;
        const sm_table_cell *now = sm_analysis_cell_at(k, r), *was = sm_analysis_cell_at(kb, rb);
        if (!usable(now) || !usable(was) || !(was->s.median != 0))
            continue;
        f[m] = now->s.median / was->s.median;
        nows[m] = now->s.median;
        wass[m] = was->s.median;
        if (isfinite(f[m]) && f[m] > 0)
            m++;
    }
    *count = m;
    *factor = 1;
    *now_med = *was_med = NAN;
    if (m >= 3) {
        *factor = sm_stats_median_in(f, m, 1, f);
        *now_med = sm_stats_median_in(nows, m, 1, nows);
        *was_med = sm_stats_median_in(wass, m, 1, wass);
    }
    free(f);
    return 0;
}

static int regression_column(const sm_table *run, const sm_table *base, const sm_analysis_column *k,
                             const sm_analysis_column *kb, sm_analysis_limits l, sm_anomalies *out)
{
    double factor, now_med, was_med;
    size_t moved;
    int rc = fleet_factor(run, base, k, kb, &factor, &moved, &now_med, &was_med);
    if (rc != 0)
        return rc;
    char pct[16];
    sm_analysis_percent_text(pct, sizeof pct, l.floor);
    if (fabs(factor - 1) >= l.floor) {
        /* The whole fleet moved (a kernel update, the machine's loopback switching speed):
         * said once, as the fleet's, and taken out of every host's own move below. */
        sm_anomaly a;
        sm_analysis_anomaly_start(&a, SM_ANOMALY_FLEET_MOVE, k, l, false);
        snprintf(a.rule, sizeof a.rule, "median move of %zu hosts >= %.12s", moved, pct);
        snprintf(a.host, sizeof a.host, "fleet");
        a.row = SIZE_MAX;
        a.moved = (uint32_t)moved;
        sm_analysis_anomaly_numbers(&a, now_med, was_med, NAN, factor - 1);
        if ((rc = sm_analysis_push(out, &a)) != 0)
            return rc;
    }
    for (size_t r = 0; r < run->n_rows; r++) {
        size_t rb = find_label(base->rows, base->n_rows, run->rows[r]);
        if (rb == SIZE_MAX)
            continue;
        const sm_table_cell *now = sm_analysis_cell_at(k, r), *was = sm_analysis_cell_at(kb, rb);
        if (!usable(now) || !usable(was))
            continue;
        /* The baseline as the fleet's move would have left it: a host that moved with the
         * fleet has not regressed; one that moved further has, by the difference. */
        double was_m = was->s.median * factor, was_lo = was->s.ci95_low * factor,
               was_hi = was->s.ci95_high * factor;
        if (was_lo > was_hi) {
            double t = was_lo;
            was_lo = was_hi;
            was_hi = t;
        }
        if (!(now->s.ci95_high < was_lo || now->s.ci95_low > was_hi))
            continue;
        double rel = sm_analysis_relative(now->s.median - was_m, was_m);
        if (!(fabs(rel) >= l.floor))
            continue;
        /* As the fleet rule asks of a noisy cell: the intervals themselves lie the floor apart,
         * not just the medians (a slow repetition in five otherwise reads as a change). */
        const bool noisy = sm_analysis_noisy(&now->s) || sm_analysis_noisy(&was->s);
        double gap = rel > 0 ? now->s.ci95_low - was_hi : was_lo - now->s.ci95_high;
        if (noisy && !(sm_analysis_relative(gap, was_m) >= l.floor))
            continue;
        sm_anomaly a;
        sm_analysis_anomaly_start(&a, SM_ANOMALY_REGRESSION, k, l, false);
        if (noisy)
            snprintf(a.rule, sizeof a.rule, "noisy, CIs apart by >= %.12s", pct);
        if (factor != 1) {
            size_t len = strlen(a.rule);
            snprintf(a.rule + len, sizeof a.rule - len, ", beyond the fleet's %+.0f%%",
                     (factor - 1) * 100);
        }
        COPY_FIXED(a.host, run->rows[r]);
        a.row = r;
        a.fleet_move = factor - 1;
        sm_analysis_anomaly_numbers(&a, now->s.median, was_m, NAN, rel);
        if ((rc = sm_analysis_push(out, &a)) != 0)
            return rc;
    }
    return 0;
}

int sm_analysis_regression(const sm_table *run, const sm_table *base, const sm_analysis_opts *o,
                           sm_anomalies *out, sm_error *err)
{
    sm_analysis_limits l = sm_analysis_limits_of(o);
    size_t n_all = run->n_cols + run->n_ratio_cols;
    for (size_t c = 0; c < n_all; c++) {
        bool ratio = c >= run->n_cols;
        sm_analysis_column k = sm_analysis_column_of(run, ratio, ratio ? c - run->n_cols : c);
        size_t cb = ratio ? find_col(base->ratio_cols, base->n_ratio_cols, k.col->label)
                          : find_col(base->cols, base->n_cols, k.col->label);
        if (cb == SIZE_MAX)
            continue;
        sm_analysis_column kb = sm_analysis_column_of(base, ratio, cb);
        if (regression_column(run, base, &k, &kb, l, out) != 0)
            return sm_error_set(err, SM_ENOMEM, "analysis: out of memory");
    }
    return 0;
}
