/* The maths of the analysis: the robust z (median and MAD) and Tukey's median polish. */
#include "coordinator/analysis/internal.h"

#include "proto/stats.h"

#include <math.h>
#include <string.h>

#define MAD_SCALE 0.6745 /* Iglewicz and Hoaglin: makes the MAD comparable to a normal's sigma */

/* ---- small statistics ---- */

int sm_robust_z(const double *x, size_t n, double *z, double *median, double *mad)
{
    double med = NAN, dev = NAN;
    if (n > 0) {
        double *s = sm_analysis_doubles(n);
        if (s == NULL)
            return SM_ENOMEM;
        med = sm_stats_median_in(x, n, 1, s);
        for (size_t i = 0; i < n; i++)
            s[i] = isfinite(x[i]) ? fabs(x[i] - med) : NAN;
        dev = sm_stats_median_in(s, n, 1, s);
        free(s);
    }
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]))
            z[i] = NAN;
        else if (dev == 0)
            z[i] = x[i] == med ? 0 : copysign(INFINITY, x[i] - med);
        else
            z[i] = MAD_SCALE * (x[i] - med) / dev;
    }
    if (median != NULL)
        *median = med;
    if (mad != NULL)
        *mad = dev;
    return 0;
}

/* ---- median polish ---- */

/* Median of the effects e[i] whose flag has[i] is set. */
static double median_present(const double *e, const unsigned char *has, size_t n, double *scratch)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (has[i])
            scratch[m++] = e[i];
    }
    return sm_stats_median_in(scratch, m, 1, scratch);
}

static double max_moved(const double *now, const double *before, size_t n, double moved)
{
    for (size_t i = 0; i < n; i++) {
        double d = fabs(now[i] - before[i]);
        if (d > moved)
            moved = d;
    }
    return moved;
}

int sm_median_polish(const double *m, size_t rows, size_t cols, size_t max_iter, double *overall,
                     double *row, double *col, double *resid)
{
    if (rows == 0 || cols == 0)
        return SM_EINVAL;
    if (rows > SIZE_MAX / cols)
        return SM_ENOMEM;
    size_t n = rows * cols, wide = rows > cols ? rows : cols;
    bool any = false;
    for (size_t i = 0; i < n && !any; i++)
        any = isfinite(m[i]);
    if (!any)
        return SM_EINVAL;
    if (wide > SIZE_MAX / 2 - rows - cols)
        return SM_ENOMEM;
    double *scratch = sm_analysis_doubles(wide + rows + cols);
    unsigned char *has = calloc(rows + cols, 1);
    if (scratch == NULL || has == NULL) {
        free(scratch);
        free(has);
        return SM_ENOMEM;
    }
    double *old_row = scratch + wide, *old_col = old_row + rows;
    unsigned char *row_has = has, *col_has = has + rows;
    for (size_t r = 0; r < rows; r++) {
        for (size_t c = 0; c < cols; c++) {
            /* An infinity is as useless to a median sweep as a gap, and would turn every
             * residual of its row into NaN. */
            bool ok = isfinite(m[r * cols + c]);
            resid[r * cols + c] = ok ? m[r * cols + c] : NAN;
            row_has[r] |= ok;
            col_has[c] |= ok;
        }
        row[r] = 0;
    }
    for (size_t c = 0; c < cols; c++)
        col[c] = 0;
    double t = 0;
    for (size_t it = 0; it < max_iter; it++) {
        double old_t = t;
        memcpy(old_row, row, rows * sizeof(double));
        memcpy(old_col, col, cols * sizeof(double));
        for (size_t r = 0; r < rows; r++) {
            if (!row_has[r])
                continue;
            double d = sm_stats_median_in(resid + r * cols, cols, 1, scratch);
            for (size_t c = 0; c < cols; c++)
                resid[r * cols + c] -= d;
            row[r] += d;
        }
        /* Effects are kept centred (median 0) by moving their median into the overall value,
         * as R's medpolish does; empty rows and columns stay out so that their effect stays 0. */
        double d = median_present(col, col_has, cols, scratch);
        for (size_t c = 0; c < cols; c++)
            col[c] -= col_has[c] ? d : 0;
        t += d;
        for (size_t c = 0; c < cols; c++) {
            if (!col_has[c])
                continue;
            double e = sm_stats_median_in(resid + c, rows, cols, scratch);
            for (size_t r = 0; r < rows; r++)
                resid[r * cols + c] -= e;
            col[c] += e;
        }
        d = median_present(row, row_has, rows, scratch);
        for (size_t r = 0; r < rows; r++)
            row[r] -= row_has[r] ? d : 0;
        t += d;
        double moved = max_moved(row, old_row, rows, fabs(t - old_t));
        moved = max_moved(col, old_col, cols, moved);
        if (moved <= 1e-9 * fabs(t))
            break;
    }
    *overall = t;
    free(scratch);
    free(has);
    return 0;
}
