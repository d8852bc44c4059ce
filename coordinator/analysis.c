/* Analysis of comparison tables: noisy cells, fleet outliers, slow hosts and links, regressions. */
#include "coordinator/analysis.h"

#include "proto/json.h"
#include "proto/result.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAD_SCALE 0.6745 /* Iglewicz and Hoaglin: makes the MAD comparable to a normal's sigma */

/* ---- small statistics ---- */

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

static double *alloc_doubles(size_t n)
{
    if (n > SIZE_MAX / sizeof(double))
        return NULL;
    return malloc((n ? n : 1) * sizeof(double));
}

/* Median of the finite values among x[0], x[stride], ... (n of them), sorted in scratch (n
 * doubles; it may be x itself when stride is 1, as the copy never overtakes the read). NaN
 * when none is finite. sm_stats_median would do, but it answers NaN on out of memory too,
 * which the callers here could not tell from "no value". */
static double median_of(const double *x, size_t n, size_t stride, double *scratch)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(x[i * stride]))
            scratch[m++] = x[i * stride];
    }
    if (m == 0)
        return NAN;
    qsort(scratch, m, sizeof(double), cmp_double);
    /* Halving each term first cannot overflow near DBL_MAX. */
    if (m % 2 == 0)
        return 0.5 * scratch[m / 2 - 1] + 0.5 * scratch[m / 2];
    return scratch[m / 2];
}

int sm_robust_z(const double *x, size_t n, double *z, double *median, double *mad)
{
    double med = NAN, dev = NAN;
    if (n > 0) {
        double *s = alloc_doubles(n);
        if (s == NULL)
            return SM_ENOMEM;
        med = median_of(x, n, 1, s);
        for (size_t i = 0; i < n; i++)
            s[i] = isfinite(x[i]) ? fabs(x[i] - med) : NAN;
        dev = median_of(s, n, 1, s);
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
    return median_of(scratch, m, 1, scratch);
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
    double *scratch = alloc_doubles(wide + rows + cols);
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
            double d = median_of(resid + r * cols, cols, 1, scratch);
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
            double e = median_of(resid + c, rows, cols, scratch);
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

/* ---- names ---- */

const char *sm_anomaly_kind_name(sm_anomaly_kind k)
{
    switch (k) {
    case SM_ANOMALY_FLEET:
        return "fleet";
    case SM_ANOMALY_SLOW_HOST:
        return "slow-host";
    case SM_ANOMALY_SLOW_LINK:
        return "slow-link";
    case SM_ANOMALY_REGRESSION:
        return "regression";
    case SM_ANOMALY_FLEET_MOVE:
        return "fleet-move";
    }
    return "unknown";
}

const char *sm_anomaly_dir_name(sm_anomaly_dir d)
{
    switch (d) {
    case SM_DIR_SLOWER:
        return "slower";
    case SM_DIR_FASTER:
        return "faster";
    case SM_DIR_HIGHER:
        return "higher";
    case SM_DIR_LOWER:
        return "lower";
    }
    return "unknown";
}

bool sm_analysis_noisy(const sm_summary *s)
{
    /* Written so that a NaN CV counts as noisy: nothing is known about its spread. */
    return s->n < SM_ANALYSIS_NOISY_MIN_N || !(s->cv <= SM_ANALYSIS_NOISY_CV);
}

void sm_anomalies_fini(sm_anomalies *a)
{
    if (a == NULL)
        return;
    free(a->v);
    memset(a, 0, sizeof *a);
}

/* ---- building anomalies ---- */

/* The z cut and floor, defaults in place of 0 (or anything not positive). */
typedef struct limits {
    double z, floor;
} limits;

static limits limits_of(const sm_analysis_opts *o)
{
    limits l = {SM_ANALYSIS_Z_DEFAULT, SM_ANALYSIS_FLOOR_DEFAULT};
    if (o != NULL && o->z > 0 && isfinite(o->z))
        l.z = o->z;
    if (o != NULL && o->floor > 0 && isfinite(o->floor))
        l.floor = o->floor;
    return l;
}

/* One column of a table: a plain or a ratio column, with the cells of its rows. */
typedef struct column {
    const sm_table_col *col;
    const sm_table_cell *cells; /* cells[r * stride] is row r's */
    size_t stride;
    size_t index;
    bool ratio;
} column;

static column column_of(const sm_table *t, bool ratio, size_t c)
{
    column k = {.ratio = ratio, .index = c};
    k.col = ratio ? &t->ratio_cols[c] : &t->cols[c];
    k.cells = ratio ? t->ratio_cells + c : t->cells + c;
    k.stride = ratio ? t->n_ratio_cols : t->n_cols;
    return k;
}

static const sm_table_cell *cell_at(const column *k, size_t r)
{
    return &k->cells[r * k->stride];
}

/* The cell's median when it has a summary with a finite one, else NaN. */
static double median_at(const column *k, size_t r)
{
    const sm_table_cell *c = cell_at(k, r);
    return c->have && isfinite(c->s.median) ? c->s.median : NAN;
}

/* Copies a char array of srccap bytes that may lack its NUL; always terminates dst. */
static void copy_fixed(char *dst, size_t dstcap, const char *src, size_t srccap)
{
    size_t n = strnlen(src, srccap);
    if (n >= dstcap)
        n = dstcap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

#define COPY_FIXED(dst, src) copy_fixed((dst), sizeof(dst), (src), sizeof(src))

/* diff / |base|, with no difference being 0 even when the base is 0. */
static double relative(double diff, double base)
{
    return diff == 0 ? 0 : diff / fabs(base);
}

static sm_anomaly_dir direction(const char *metric, size_t cap, double value, double reference)
{
    char name[64];
    copy_fixed(name, sizeof name, metric, cap);
    sm_metric m;
    sm_metric_sense sense = SM_SENSE_NONE;
    if (sm_metric_lookup(name, &m) == 0)
        sense = sm_metric_sense_of(m);
    bool above = value > reference;
    switch (sense) {
    case SM_SENSE_LOWER:
        return above ? SM_DIR_SLOWER : SM_DIR_FASTER;
    case SM_SENSE_HIGHER:
        return above ? SM_DIR_FASTER : SM_DIR_SLOWER;
    case SM_SENSE_NONE:
        break;
    }
    return above ? SM_DIR_HIGHER : SM_DIR_LOWER;
}

/* The floor as a percentage: "15%", or with one decimal when not whole ("12.5%"). */
static void percent_text(char *buf, size_t len, double floor)
{
    double pct = floor * 100;
    /* 0.15 * 100 is 15.000000000000002: compare with a tolerance, not ==. */
    if (fabs(pct - nearbyint(pct)) < 1e-9)
        snprintf(buf, len, "%.0f%%", pct);
    else
        snprintf(buf, len, "%.1f%%", pct);
}

/* Fills in everything but the host, role, row and numbers. */
static void anomaly_start(sm_anomaly *x, sm_anomaly_kind kind, const column *k, limits l, bool mad0)
{
    memset(x, 0, sizeof *x);
    x->kind = kind;
    COPY_FIXED(x->test, k->col->label);
    COPY_FIXED(x->metric, k->col->metric);
    COPY_FIXED(x->unit, k->col->unit);
    x->ratio = k->ratio;
    x->col = k->index;
    x->floor = l.floor;
    char pct[32];
    percent_text(pct, sizeof pct, l.floor);
    if (kind == SM_ANOMALY_REGRESSION)
        snprintf(x->rule, sizeof x->rule, "CIs apart and >= %s", pct);
    else if (mad0)
        snprintf(x->rule, sizeof x->rule, "MAD 0, >= %s", pct);
    else
        snprintf(x->rule, sizeof x->rule, "|z| > %g and >= %s", l.z, pct);
}

static void anomaly_numbers(sm_anomaly *x, double value, double reference, double z, double rel)
{
    x->value = value;
    x->reference = reference;
    x->z = z;
    x->rel = rel;
    x->dir = direction(x->metric, sizeof x->metric, value, reference);
}

static int push(sm_anomalies *a, const sm_anomaly *x)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 8;
        if (cap < a->cap || cap > SIZE_MAX / sizeof(sm_anomaly))
            return SM_ENOMEM;
        sm_anomaly *v = realloc(a->v, cap * sizeof(sm_anomaly));
        if (v == NULL)
            return SM_ENOMEM;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = *x;
    return 0;
}

/* Whether a cell flags: it clears the floor, and its z the cut unless the MAD is 0 (then every
 * value off the median has an infinite z and the floor alone decides). */
static bool stands_apart(double z, double mad, double rel, limits l)
{
    return fabs(rel) >= l.floor && (mad == 0 || fabs(z) > l.z);
}

/* Whether a noisy cell's 95% CI lies wholly on the side of rel beyond the floor from the
 * reference: then the flag stands whatever the noise. A cell with n < 3 never clears. */
static bool ci_clears(const sm_summary *s, double reference, double rel, limits l)
{
    if (s->n < SM_ANALYSIS_NOISY_MIN_N)
        return false;
    double near = rel > 0 ? s->ci95_low : s->ci95_high;
    double r = relative(near - reference, reference);
    return rel > 0 ? r >= l.floor : r <= -l.floor;
}

/* Whether a cell is the floor off the fleet even at the near end of its own 95% CI: the
 * difference is at least the floor with 95% confidence, not only at its median. Three hosts
 * give a MAD from one gap, so a z of 5 can come from medians 15% apart that each host's spread
 * covers (an unshaped lab under ASan: 19.8 ms against 17.2, its repetitions 16 to 20 ms), and
 * a shared machine has moved one lab host's TCP/UDS ratio 16% for a whole run (0.903 against
 * 1.075, all five repetitions below the others' median). A cell with n < 3 has no interval and
 * is judged on z and the floor alone. */
static bool ci_beyond_floor(const sm_summary *s, double reference, double rel, limits l)
{
    if (s->n < SM_ANALYSIS_NOISY_MIN_N)
        return true;
    return ci_clears(s, reference, rel, l);
}

static void noisy_rule(sm_anomaly *a, limits l)
{
    char pct[16];
    percent_text(pct, sizeof pct, l.floor);
    snprintf(a->rule, sizeof a->rule, "noisy, |z| > %.3g and CI beyond %.12s", l.z, pct);
}

/* Stable insertion sort of v[from..n) by row: a column's slow hosts are found before its links,
 * and its hosts at their time limit after the others, but all are reported in row order. */
static void sort_by_row(sm_anomalies *a, size_t from)
{
    for (size_t i = from + 1; i < a->n; i++) {
        sm_anomaly x = a->v[i];
        size_t j = i;
        while (j > from && a->v[j - 1].row > x.row) {
            a->v[j] = a->v[j - 1];
            j--;
        }
        a->v[j] = x;
    }
}

/* ---- host rows: the fleet ---- */

/* Whether the cell's jobs mostly ended on their time limit: then the cell is evidence that its
 * host is slower than the limit allows, whatever its few finished jobs say. */
static bool at_limit(const sm_table_cell *c)
{
    return c->limited > 0 && c->limited >= (c->have ? c->s.n : 0);
}

/* The hull of the 95% intervals of every row but r that has a value (NaN when none), and the
 * smallest and largest of their medians. */
typedef struct others {
    double lo, hi;           /* the hull of their intervals */
    double min_med, max_med; /* the range of their medians */
} others;

static others others_of(const column *k, size_t n, size_t r)
{
    others o = {NAN, NAN, NAN, NAN};
    for (size_t j = 0; j < n; j++) {
        const sm_table_cell *c = cell_at(k, j);
        double m = median_at(k, j);
        if (j == r || !isfinite(m) || at_limit(c))
            continue;
        if (!(c->s.ci95_low >= o.lo))
            o.lo = c->s.ci95_low;
        if (!(c->s.ci95_high <= o.hi))
            o.hi = c->s.ci95_high;
        if (!(m >= o.min_med))
            o.min_med = m;
        if (!(m <= o.max_med))
            o.max_med = m;
    }
    return o;
}

/* Whether row r's interval lies beyond every other host's, relative to the nearest of them by
 * at least the floor, and by a larger factor than the other hosts' medians lie apart from each
 * other. With three hosts the MAD is one gap, so a host 100x off can have |z| of 2; an interval
 * clear of all the others by more than they differ among themselves is evidence enough (and
 * the second clause keeps the far end of a spread fleet from "standing apart" from it). */
static bool interval_apart(const column *k, size_t n, size_t r, double rel, limits l)
{
    const sm_summary *s = &cell_at(k, r)->s;
    if (s->n < SM_ANALYSIS_NOISY_MIN_N || rel == 0)
        return false;
    others o = others_of(k, n, r);
    /* Factors compare positive values only (times, rates, ratios all are). */
    if (!(o.lo > 0) || !(o.min_med > 0) || !(s->ci95_low > 0))
        return false;
    double spread = o.max_med / o.min_med;
    if (rel > 0)
        return s->ci95_low > o.hi && relative(s->ci95_low - o.hi, o.hi) >= l.floor &&
               s->ci95_low / o.hi > spread;
    return s->ci95_high < o.lo && relative(o.lo - s->ci95_high, o.lo) >= l.floor &&
           o.lo / s->ci95_high > spread;
}

/* Whether a time-limited cell's bound (a job at its limit would show at least this slow a
 * value) lies the floor beyond every finished host on the slow side; a bound the metric
 * cannot give (NaN: a throughput of unknown size) is beyond any host that finished. */
static bool bound_apart(const column *k, size_t n, size_t r, limits l, sm_anomaly_dir *dir)
{
    double bound = cell_at(k, r)->limit_bound;
    others o = others_of(k, n, r);
    double lo = o.lo, hi = o.hi;
    if (!isfinite(lo))
        return false;
    /* The slow side: a time is slower when higher, a throughput when lower. */
    sm_anomaly_dir up = direction(k->col->metric, sizeof k->col->metric, 1, 0);
    bool higher_is_slower = up == SM_DIR_SLOWER || up == SM_DIR_HIGHER;
    *dir = higher_is_slower ? up : direction(k->col->metric, sizeof k->col->metric, 0, 1);
    if (!isfinite(bound))
        return true;
    if (higher_is_slower)
        return bound > hi && relative(bound - hi, hi) >= l.floor;
    return bound < lo && relative(lo - bound, lo) >= l.floor;
}

static void apart_rule(sm_anomaly *a, limits l)
{
    char pct[16];
    percent_text(pct, sizeof pct, l.floor);
    snprintf(a->rule, sizeof a->rule, "CI beyond every other host's by >= %.12s", pct);
}

/* The hosts whose jobs ran into their time limit: slower than the hosts that finished, as long
 * as those are at least two and more than the limited ones (else who is odd is unclear). */
static int limit_rows(const sm_table *t, const column *k, double med, size_t finished,
                      size_t limited, limits l, sm_anomalies *out)
{
    if (limited == 0 || finished < 2 || finished <= limited)
        return 0;
    for (size_t r = 0; r < t->n_rows; r++) {
        const sm_table_cell *c = cell_at(k, r);
        sm_anomaly_dir dir;
        if (!at_limit(c) || !bound_apart(k, t->n_rows, r, l, &dir))
            continue;
        sm_anomaly a;
        anomaly_start(&a, SM_ANOMALY_FLEET, k, l, false);
        snprintf(a.rule, sizeof a.rule, "%" PRIu32 " of %" PRIu32 " jobs at the time limit",
                 c->limited, c->limited + (c->have ? (uint32_t)c->s.n : 0));
        COPY_FIXED(a.host, t->rows[r]);
        a.row = r;
        a.value = c->limit_bound;
        a.reference = med;
        a.z = NAN;
        a.rel = isfinite(c->limit_bound) ? relative(c->limit_bound - med, med) : NAN;
        a.dir = dir;
        a.at_limit = true;
        int rc = push(out, &a);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int fleet_column(const sm_table *t, const column *k, limits l, sm_anomalies *out)
{
    size_t n = t->n_rows, present = 0, limited = 0;
    if (n < 3)
        return 0;
    double *x = n > SIZE_MAX / 2 ? NULL : alloc_doubles(2 * n);
    if (x == NULL)
        return SM_ENOMEM;
    double *z = x + n;
    for (size_t r = 0; r < n; r++) {
        /* A host at its time limit has no value to put in the fleet's median: it is judged
         * apart, against the hosts that finished (limit_rows). A coarse cell (tick-rounded CPU
         * times) is left out altogether. */
        bool lim = at_limit(cell_at(k, r));
        x[r] = lim || cell_at(k, r)->coarse ? NAN : median_at(k, r);
        present += isfinite(x[r]);
        limited += lim;
    }
    double med = NAN, mad = NAN;
    size_t from = out->n;
    int rc = present < 3 ? 0 : sm_robust_z(x, n, z, &med, &mad);
    for (size_t r = 0; rc == 0 && present >= 3 && r < n; r++) {
        if (!isfinite(x[r]))
            continue;
        double rel = relative(x[r] - med, med);
        /* A noisy cell's median alone is not evidence; its whole interval beyond the floor is
         * (the lab's loopback cells often carry one slow repetition in five). */
        const sm_summary *s = &cell_at(k, r)->s;
        bool noisy = sm_analysis_noisy(s);
        bool by_z = stands_apart(z[r], mad, rel, l) &&
                    (noisy ? ci_clears(s, med, rel, l) : ci_beyond_floor(s, med, rel, l));
        bool by_gap = !by_z && fabs(rel) >= l.floor && interval_apart(k, n, r, rel, l);
        if (!by_z && !by_gap)
            continue;
        sm_anomaly a;
        anomaly_start(&a, SM_ANOMALY_FLEET, k, l, mad == 0);
        if (by_gap)
            apart_rule(&a, l);
        else if (noisy)
            noisy_rule(&a, l);
        COPY_FIXED(a.host, t->rows[r]);
        a.row = r;
        anomaly_numbers(&a, x[r], med, mad == 0 ? NAN : z[r], rel);
        rc = push(out, &a);
    }
    if (rc == 0 && present >= 2) {
        if (present < 3) {
            /* Two finished hosts still make a reference for a third at its limit. */
            double *s = alloc_doubles(n);
            if (s == NULL) {
                free(x);
                return SM_ENOMEM;
            }
            med = median_of(x, n, 1, s);
            free(s);
        }
        rc = limit_rows(t, k, med, present, limited, l, out);
    }
    free(x);
    if (rc == 0)
        sort_by_row(out, from);
    return rc;
}

/* ---- pair rows: median polish ---- */

#define HOST_MAX sizeof(((sm_anomaly *)0)->host)

/* The hosts of a pair table and, per row, the indices of its client and server. */
typedef struct pair_index {
    char (*hosts)[HOST_MAX];
    size_t n_hosts;
    size_t *client, *server; /* per row; SIZE_MAX when the label is not "client->server" */
} pair_index;

static void pair_index_fini(pair_index *p)
{
    free(p->hosts);
    free(p->client);
    free(p->server);
}

static size_t host_find_or_add(pair_index *p, const char *name, size_t len)
{
    for (size_t h = 0; h < p->n_hosts; h++) {
        if (strlen(p->hosts[h]) == len && memcmp(p->hosts[h], name, len) == 0)
            return h;
    }
    memcpy(p->hosts[p->n_hosts], name, len);
    p->hosts[p->n_hosts][len] = '\0';
    return p->n_hosts++;
}

static int pair_index_build(const sm_table *t, pair_index *p)
{
    size_t n = t->n_rows;
    memset(p, 0, sizeof *p);
    if (n > SIZE_MAX / 2 / sizeof(size_t) || n > SIZE_MAX / 2 / HOST_MAX)
        return SM_ENOMEM;
    p->hosts = malloc((2 * n + 1) * HOST_MAX);
    p->client = malloc((n + 1) * sizeof(size_t));
    p->server = malloc((n + 1) * sizeof(size_t));
    if (p->hosts == NULL || p->client == NULL || p->server == NULL) {
        pair_index_fini(p);
        return SM_ENOMEM;
    }
    for (size_t r = 0; r < n; r++) {
        const char *label = t->rows[r];
        size_t len = strnlen(label, sizeof t->rows[r]);
        /* '>' never appears in a host name, so the arrow is the '-' before the one '>'; a
         * '-' inside a host name ("db-1->web-2") is left alone. */
        const char *gt = memchr(label, '>', len);
        p->client[r] = p->server[r] = SIZE_MAX;
        if (gt == NULL || gt == label || gt[-1] != '-' || gt - 1 == label ||
            gt + 1 == label + len || memchr(gt + 1, '>', (size_t)(label + len - gt - 1)) != NULL)
            continue;
        p->client[r] = host_find_or_add(p, label, (size_t)(gt - 1 - label));
        p->server[r] = host_find_or_add(p, gt + 1, (size_t)(label + len - gt - 1));
    }
    return 0;
}

/* Scratch of one pair column: k hosts of the column, their matrix and its polish. */
typedef struct pair_work {
    size_t *map;  /* table host -> matrix index, SIZE_MAX when not in this column */
    size_t *host; /* matrix index -> table host */
    double *m, *resid, *row, *col, *e, *z;
    size_t *row_of; /* matrix cell -> table row */
    bool *slow;     /* matrix index -> already a slow host of this column */
} pair_work;

static void pair_work_fini(pair_work *w)
{
    free(w->map);
    free(w->host);
    free(w->m);
    free(w->row_of);
    free(w->slow);
}

static int pair_work_init(pair_work *w, size_t n_hosts)
{
    memset(w, 0, sizeof *w);
    size_t h = n_hosts + 1;
    if (h > SIZE_MAX / h || h * h > (SIZE_MAX / sizeof(double) - 4 * h) / 2)
        return SM_ENOMEM;
    w->map = malloc(h * sizeof(size_t));
    w->host = malloc(h * sizeof(size_t));
    w->m = alloc_doubles(2 * h * h + 4 * h);
    w->row_of = malloc(h * h * sizeof(size_t));
    w->slow = malloc(h * sizeof(bool));
    if (!w->map || !w->host || !w->m || !w->row_of || !w->slow) {
        pair_work_fini(w);
        return SM_ENOMEM;
    }
    w->resid = w->m + h * h;
    w->row = w->resid + h * h;
    w->col = w->row + h;
    w->e = w->col + h;
    w->z = w->e + h;
    return 0;
}

/* First row of the table in which host h has the given role. */
static size_t first_row(const pair_index *p, size_t n_rows, size_t h, bool server)
{
    for (size_t r = 0; r < n_rows; r++) {
        if ((server ? p->server[r] : p->client[r]) == h)
            return r;
    }
    return 0;
}

/* Judges the client (row) or server (column) effects of the k hosts: effects of hosts with no
 * present cell in that role are not effects at all and stay out of the z. */
static int slow_hosts(const sm_table *t, const column *k, const pair_index *p, pair_work *w,
                      size_t nk, double overall, bool server, limits l, sm_anomalies *out)
{
    const double *eff = server ? w->col : w->row;
    size_t present = 0;
    for (size_t i = 0; i < nk; i++) {
        bool any = false;
        for (size_t j = 0; j < nk && !any; j++)
            any = isfinite(server ? w->m[j * nk + i] : w->m[i * nk + j]);
        w->e[i] = any ? eff[i] : NAN;
        present += any;
    }
    if (present < 3)
        return 0;
    double med, mad;
    int rc = sm_robust_z(w->e, nk, w->z, &med, &mad);
    for (size_t i = 0; rc == 0 && i < nk; i++) {
        if (!isfinite(w->e[i]))
            continue;
        double rel = relative(w->e[i], overall);
        if (!stands_apart(w->z[i], mad, rel, l))
            continue;
        sm_anomaly a;
        anomaly_start(&a, SM_ANOMALY_SLOW_HOST, k, l, mad == 0);
        COPY_FIXED(a.host, p->hosts[w->host[i]]);
        snprintf(a.role, sizeof a.role, "%s", server ? "server" : "client");
        a.row = first_row(p, t->n_rows, w->host[i], server);
        anomaly_numbers(&a, overall + w->e[i], overall, mad == 0 ? NAN : w->z[i], rel);
        w->slow[i] = true;
        rc = push(out, &a);
    }
    return rc;
}

static int slow_links(const sm_table *t, const column *k, const pair_index *p, pair_work *w,
                      size_t nk, double overall, limits l, sm_anomalies *out)
{
    /* The residuals judged against each other are those of pairs between hosts that are not
     * slow: a slow host's pairs are explained by it, and a shaped link paces them so evenly that
     * their residuals, all but 0, would make the MAD 0 and any other pair's noise "apart". The
     * matrix (no longer needed) holds them, and then their z. */
    double *z = w->m;
    size_t present = 0;
    for (size_t i = 0; i < nk; i++) {
        for (size_t j = 0; j < nk; j++) {
            double v = w->slow[i] || w->slow[j] ? NAN : w->resid[i * nk + j];
            z[i * nk + j] = v;
            present += isfinite(v);
        }
    }
    if (present < 3)
        return 0;
    double med, mad;
    int rc = sm_robust_z(z, nk * nk, z, &med, &mad); /* in place: each x read before its z */
    for (size_t r = 0; rc == 0 && r < t->n_rows; r++) {
        if (p->client[r] == SIZE_MAX)
            continue;
        size_t i = w->map[p->client[r]], j = w->map[p->server[r]];
        if (i == SIZE_MAX || j == SIZE_MAX || w->row_of[i * nk + j] != r)
            continue;
        double res = w->resid[i * nk + j];
        if (!isfinite(res) || w->slow[i] || w->slow[j] || sm_analysis_noisy(&cell_at(k, r)->s))
            continue;
        double rel = relative(res, overall);
        if (!stands_apart(z[i * nk + j], mad, rel, l))
            continue;
        sm_anomaly a;
        anomaly_start(&a, SM_ANOMALY_SLOW_LINK, k, l, mad == 0);
        COPY_FIXED(a.host, t->rows[r]);
        a.row = r;
        /* The reference is what the polish expects of this pair from its two hosts alone, so
         * that value - reference is the residual the rule judged. */
        double expect = overall + w->row[i] + w->col[j];
        anomaly_numbers(&a, expect + res, expect, mad == 0 ? NAN : z[i * nk + j], rel);
        rc = push(out, &a);
    }
    return rc;
}

static int pair_column(const sm_table *t, const column *k, const pair_index *p, pair_work *w,
                       limits l, sm_anomalies *out)
{
    size_t nk = 0;
    for (size_t h = 0; h < p->n_hosts; h++)
        w->map[h] = SIZE_MAX;
    for (size_t r = 0; r < t->n_rows; r++) {
        if (p->client[r] == SIZE_MAX || !isfinite(median_at(k, r)))
            continue;
        size_t ends[2] = {p->client[r], p->server[r]};
        for (size_t e = 0; e < 2; e++) {
            if (w->map[ends[e]] == SIZE_MAX) {
                w->host[nk] = ends[e];
                w->map[ends[e]] = nk++;
            }
        }
    }
    if (nk < 3)
        return 0;
    for (size_t i = 0; i < nk * nk; i++) {
        w->m[i] = NAN;
        w->row_of[i] = SIZE_MAX;
    }
    for (size_t r = 0; r < t->n_rows; r++) {
        /* Noisy cells stay in the matrix: their medians are still the best estimates of their
         * pairs, and without them a fleet whose fast pairs are the noisy ones would be judged
         * by its slow pairs alone. Noise only keeps a cell from being a slow link. */
        double v = p->client[r] == SIZE_MAX ? NAN : median_at(k, r);
        if (!isfinite(v))
            continue;
        size_t at = w->map[p->client[r]] * nk + w->map[p->server[r]];
        if (w->row_of[at] == SIZE_MAX) {
            w->m[at] = v;
            w->row_of[at] = r;
        }
    }
    double overall;
    int rc = sm_median_polish(w->m, nk, nk, SM_ANALYSIS_POLISH_ITERS, &overall, w->row, w->col,
                              w->resid);
    if (rc == SM_EINVAL) /* no cell with a value */
        return 0;
    size_t from = out->n;
    for (size_t i = 0; i < nk; i++)
        w->slow[i] = false;
    if (rc == 0)
        rc = slow_hosts(t, k, p, w, nk, overall, false, l, out);
    if (rc == 0)
        rc = slow_hosts(t, k, p, w, nk, overall, true, l, out);
    if (rc == 0)
        rc = slow_links(t, k, p, w, nk, overall, l, out);
    if (rc == 0)
        sort_by_row(out, from);
    return rc;
}

int sm_analysis_table(const sm_table *t, const sm_analysis_opts *o, sm_anomalies *out,
                      sm_error *err)
{
    limits l = limits_of(o);
    pair_index p = {0};
    pair_work w = {0};
    int rc = 0;
    if (t->pairs) {
        rc = pair_index_build(t, &p);
        if (rc == 0)
            rc = pair_work_init(&w, p.n_hosts);
    }
    size_t n_all = t->n_cols + t->n_ratio_cols;
    for (size_t c = 0; rc == 0 && c < n_all; c++) {
        bool ratio = c >= t->n_cols;
        column k = column_of(t, ratio, ratio ? c - t->n_cols : c);
        rc = t->pairs ? pair_column(t, &k, &p, &w, l, out) : fleet_column(t, &k, l, out);
    }
    pair_work_fini(&w);
    pair_index_fini(&p);
    if (rc != 0)
        return sm_error_set(err, rc, "analysis: out of memory");
    return 0;
}

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
static int fleet_factor(const sm_table *run, const sm_table *base, const column *k,
                        const column *kb, double *factor, size_t *count, double *now_med,
                        double *was_med)
{
    size_t n = run->n_rows, m = 0;
    double *f = alloc_doubles(3 * n);
    if (f == NULL)
        return SM_ENOMEM;
    double *nows = f + n, *wass = nows + n;
    for (size_t r = 0; r < n; r++) {
        size_t rb = find_label(base->rows, base->n_rows, run->rows[r]);
        if (rb == SIZE_MAX)
            continue;
        const sm_table_cell *now = cell_at(k, r), *was = cell_at(kb, rb);
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
        *factor = median_of(f, m, 1, f);
        *now_med = median_of(nows, m, 1, nows);
        *was_med = median_of(wass, m, 1, wass);
    }
    free(f);
    return 0;
}

static int regression_column(const sm_table *run, const sm_table *base, const column *k,
                             const column *kb, limits l, sm_anomalies *out)
{
    double factor, now_med, was_med;
    size_t moved;
    int rc = fleet_factor(run, base, k, kb, &factor, &moved, &now_med, &was_med);
    if (rc != 0)
        return rc;
    char pct[16];
    percent_text(pct, sizeof pct, l.floor);
    if (fabs(factor - 1) >= l.floor) {
        /* The whole fleet moved (a kernel update, the machine's loopback switching speed):
         * said once, as the fleet's, and taken out of every host's own move below. */
        sm_anomaly a;
        anomaly_start(&a, SM_ANOMALY_FLEET_MOVE, k, l, false);
        snprintf(a.rule, sizeof a.rule, "median move of %zu hosts >= %.12s", moved, pct);
        snprintf(a.host, sizeof a.host, "fleet");
        a.row = SIZE_MAX;
        a.moved = (uint32_t)moved;
        anomaly_numbers(&a, now_med, was_med, NAN, factor - 1);
        if ((rc = push(out, &a)) != 0)
            return rc;
    }
    for (size_t r = 0; r < run->n_rows; r++) {
        size_t rb = find_label(base->rows, base->n_rows, run->rows[r]);
        if (rb == SIZE_MAX)
            continue;
        const sm_table_cell *now = cell_at(k, r), *was = cell_at(kb, rb);
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
        double rel = relative(now->s.median - was_m, was_m);
        if (!(fabs(rel) >= l.floor))
            continue;
        /* As the fleet rule asks of a noisy cell: the intervals themselves lie the floor apart,
         * not just the medians (a slow repetition in five otherwise reads as a change). */
        const bool noisy = sm_analysis_noisy(&now->s) || sm_analysis_noisy(&was->s);
        double gap = rel > 0 ? now->s.ci95_low - was_hi : was_lo - now->s.ci95_high;
        if (noisy && !(relative(gap, was_m) >= l.floor))
            continue;
        sm_anomaly a;
        anomaly_start(&a, SM_ANOMALY_REGRESSION, k, l, false);
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
        anomaly_numbers(&a, now->s.median, was_m, NAN, rel);
        if ((rc = push(out, &a)) != 0)
            return rc;
    }
    return 0;
}

int sm_analysis_regression(const sm_table *run, const sm_table *base, const sm_analysis_opts *o,
                           sm_anomalies *out, sm_error *err)
{
    limits l = limits_of(o);
    size_t n_all = run->n_cols + run->n_ratio_cols;
    for (size_t c = 0; c < n_all; c++) {
        bool ratio = c >= run->n_cols;
        column k = column_of(run, ratio, ratio ? c - run->n_cols : c);
        size_t cb = ratio ? find_col(base->ratio_cols, base->n_ratio_cols, k.col->label)
                          : find_col(base->cols, base->n_cols, k.col->label);
        if (cb == SIZE_MAX)
            continue;
        column kb = column_of(base, ratio, cb);
        if (regression_column(run, base, &k, &kb, l, out) != 0)
            return sm_error_set(err, SM_ENOMEM, "analysis: out of memory");
    }
    return 0;
}

/* ---- text ---- */

/* A number with its unit: "3.594x" for a ratio, "0.23 s" otherwise. digits significant
 * digits, except that a whole number too long for them is written out ("1000", not "1e+03"),
 * as throughputs and rates often are. */
static void quantity(char *buf, size_t len, int digits, double v, const char *unit)
{
    const char *sep = unit[0] == '\0' || strcmp(unit, "x") == 0 ? "" : " ";
    if (fabs(v) >= pow(10, digits) && fabs(v) < 1e9)
        snprintf(buf, len, "%.0f%s%s", v, sep, unit);
    else
        snprintf(buf, len, "%.*g%s%s", digits, v, sep, unit);
}

static const char *reference_word(sm_anomaly_kind k)
{
    switch (k) {
    case SM_ANOMALY_FLEET:
        return "fleet";
    case SM_ANOMALY_SLOW_HOST:
        return "overall";
    case SM_ANOMALY_SLOW_LINK:
        return "expected";
    case SM_ANOMALY_REGRESSION:
    case SM_ANOMALY_FLEET_MOVE:
        return "baseline";
    }
    return "reference";
}

/* The value of an anomaly; for a host at its time limit, the bound it passed: "> 60 s",
 * "< 0.5 MB/s", or "> limit" when the column's metric has no bound. */
static void limit_value(char *buf, size_t len, int digits, const sm_anomaly *a)
{
    char unit[sizeof a->unit];
    COPY_FIXED(unit, a->unit);
    if (!a->at_limit) {
        quantity(buf, len, digits, a->value, unit);
        return;
    }
    if (!isfinite(a->value)) {
        snprintf(buf, len, "> limit");
        return;
    }
    char q[48];
    quantity(q, sizeof q, digits, a->value, unit);
    /* The bound is on the slow side: below it for a metric where higher is better. */
    bool lower = direction(a->metric, sizeof a->metric, 1, 0) == SM_DIR_FASTER;
    snprintf(buf, len, "%s %s", lower ? "<" : ">", q);
}

int sm_anomaly_text(const sm_anomaly *a, char *buf, size_t len)
{
    char host[sizeof a->host + sizeof a->role + 4], value[64], ref[64], z[32];
    char unit[sizeof a->unit], metric[sizeof a->metric], test[sizeof a->test];
    COPY_FIXED(unit, a->unit);
    COPY_FIXED(metric, a->metric);
    COPY_FIXED(test, a->test);
    if (a->kind == SM_ANOMALY_SLOW_HOST)
        snprintf(host, sizeof host, "%.*s (%.*s)", (int)strnlen(a->host, sizeof a->host), a->host,
                 (int)strnlen(a->role, sizeof a->role), a->role);
    else
        COPY_FIXED(host, a->host);
    limit_value(value, sizeof value, 4, a);
    quantity(ref, sizeof ref, 4, a->reference, unit);
    if (isnan(a->z))
        snprintf(z, sizeof z, "-");
    else
        snprintf(z, sizeof z, "%.1f", a->z);
    char rel[32] = "";
    if (isfinite(a->rel))
        snprintf(rel, sizeof rel, "%+.0f%%, ", a->rel * 100);
    return snprintf(buf, len, "%s: %s (%s) %s vs %s %s, %sz %s, %s [%.*s]", host, test, metric,
                    value, reference_word(a->kind), ref, rel, z, sm_anomaly_dir_name(a->dir),
                    (int)strnlen(a->rule, sizeof a->rule), a->rule);
}

/* The short form of an anomaly for a table's flag column. */
static void flag_text(const sm_anomaly *a, char *buf, size_t len)
{
    char unit[sizeof a->unit], test[sizeof a->test], value[64], ref[64], tail[48];
    COPY_FIXED(unit, a->unit);
    COPY_FIXED(test, a->test);
    /* Three digits: the flag column is narrow and the full text has four. */
    limit_value(value, sizeof value, 3, a);
    quantity(ref, sizeof ref, 3, a->reference, unit);
    bool apart = strncmp(a->rule, "CI beyond", 9) == 0;
    if (a->at_limit)
        snprintf(tail, sizeof tail, "(time limit)");
    else if (apart && isnan(a->z))
        snprintf(tail, sizeof tail, "(CI apart)");
    else if (apart)
        snprintf(tail, sizeof tail, "(CI apart, z %.1f)", a->z);
    else if (isnan(a->z))
        snprintf(tail, sizeof tail, "(MAD 0)");
    else
        snprintf(tail, sizeof tail, "(z %.1f)", a->z);
    switch (a->kind) {
    case SM_ANOMALY_FLEET_MOVE:
        snprintf(buf, len, "fleet moved: %s %+.0f%%", test, a->rel * 100);
        break;
    case SM_ANOMALY_REGRESSION:
        snprintf(buf, len, "regression: %s %s (was %s)", test, value, ref);
        break;
    case SM_ANOMALY_SLOW_HOST:
        snprintf(buf, len, "slow host: %.*s (%.*s) %s %s vs %s %s",
                 (int)strnlen(a->host, sizeof a->host), a->host,
                 (int)strnlen(a->role, sizeof a->role), a->role, test, value, ref, tail);
        break;
    case SM_ANOMALY_SLOW_LINK:
        snprintf(buf, len, "slow link: %s %s vs %s %s", test, value, ref, tail);
        break;
    default:
        snprintf(buf, len, "%s %s vs %s %s", test, value, ref, tail);
        break;
    }
}

/* Whether anomaly a belongs on row r of t: its own row, or for a slow host every row in which
 * the host has the role that was found slow. */
static bool flags_row(const sm_table *t, const sm_anomaly *a, size_t r)
{
    if (a->kind != SM_ANOMALY_SLOW_HOST)
        return a->row == r;
    const char *label = t->rows[r];
    size_t len = strnlen(label, sizeof t->rows[r]);
    const char *gt = memchr(label, '>', len);
    if (gt == NULL || gt == label || gt[-1] != '-')
        return false;
    bool server = strcmp(a->role, "server") == 0;
    const char *name = server ? gt + 1 : label;
    size_t n = server ? (size_t)(label + len - gt - 1) : (size_t)(gt - 1 - label);
    return strnlen(a->host, sizeof a->host) == n && memcmp(a->host, name, n) == 0;
}

void sm_analysis_flag_table(sm_table *t, const sm_anomalies *a)
{
    for (size_t r = 0; r < t->n_rows; r++) {
        char *f = t->flags[r];
        size_t cap = sizeof t->flags[r], len = 0, total = 0, done = 0;
        f[0] = '\0';
        for (size_t i = 0; i < a->n; i++)
            total += flags_row(t, &a->v[i], r);
        for (size_t i = 0; i < a->n && done < total; i++) {
            if (!flags_row(t, &a->v[i], r))
                continue;
            char entry[512], more[32] = "";
            flag_text(&a->v[i], entry, sizeof entry);
            size_t rest = total - done - 1;
            /* An entry is kept only when the " (+N more)" its successors would need still fits
             * behind it; so when an entry does not fit, the suffix for it and those after it
             * fits where it would have gone. Only whole entries are ever written. */
            if (rest > 0)
                snprintf(more, sizeof more, " (+%zu more)", rest);
            size_t sep = len > 0 ? 2 : 0;
            if (len + sep + strlen(entry) + strlen(more) < cap) {
                len += (size_t)snprintf(f + len, cap - len, "%s%s", sep ? "; " : "", entry);
                done++;
                continue;
            }
            snprintf(f + len, cap - len, "%s(+%zu more)", len > 0 ? " " : "", rest + 1);
            break;
        }
    }
}

/* ---- JSON ---- */

static bool json_anomaly(cJSON *arr, const sm_anomaly *a)
{
    cJSON *o = cJSON_CreateObject();
    return sm_json_append(arr, o) &&
           cJSON_AddStringToObject(o, "kind", sm_anomaly_kind_name(a->kind)) != NULL &&
           sm_json_put_fixed(o, "host", a->host, sizeof a->host) &&
           sm_json_put_fixed(o, "role", a->role, sizeof a->role) &&
           sm_json_put_fixed(o, "test", a->test, sizeof a->test) &&
           sm_json_put_fixed(o, "metric", a->metric, sizeof a->metric) &&
           sm_json_put_fixed(o, "unit", a->unit, sizeof a->unit) &&
           cJSON_AddBoolToObject(o, "ratio", a->ratio) != NULL &&
           sm_json_put_double(o, "value", a->value) &&
           sm_json_put_double(o, "reference", a->reference) && sm_json_put_double(o, "z", a->z) &&
           sm_json_put_double(o, "rel", a->rel) && sm_json_put_double(o, "floor", a->floor) &&
           sm_json_put_fixed(o, "rule", a->rule, sizeof a->rule) &&
           cJSON_AddStringToObject(o, "direction", sm_anomaly_dir_name(a->dir)) != NULL &&
           cJSON_AddBoolToObject(o, "at_limit", a->at_limit) != NULL &&
           (a->kind != SM_ANOMALY_FLEET_MOVE ||
            cJSON_AddNumberToObject(o, "hosts", a->moved) != NULL) &&
           (a->kind != SM_ANOMALY_REGRESSION || sm_json_put_double(o, "fleet_move", a->fleet_move));
}

char *sm_anomalies_json(uint64_t run_id, const char *run_name, uint64_t baseline_id,
                        const sm_analysis_opts *o, const sm_anomalies *a)
{
    limits l = limits_of(o);
    /* Containers join their parent as they are made: one cJSON_Delete frees a half-built tree. */
    cJSON *root = cJSON_CreateObject();
    bool ok = root != NULL && cJSON_AddNumberToObject(root, "version", 1) != NULL;
    cJSON *run = ok ? cJSON_AddObjectToObject(root, "run") : NULL;
    ok = run != NULL && sm_json_put_u64_str(run, "id", run_id) &&
         cJSON_AddStringToObject(run, "name", run_name ? run_name : "") != NULL;
    if (ok && baseline_id == 0) {
        ok = cJSON_AddNullToObject(root, "baseline") != NULL;
    } else if (ok) {
        cJSON *base = cJSON_AddObjectToObject(root, "baseline");
        ok = base != NULL && sm_json_put_u64_str(base, "id", baseline_id);
    }
    ok = ok && sm_json_put_double(root, "z", l.z) && sm_json_put_double(root, "floor", l.floor);
    cJSON *arr = ok ? cJSON_AddArrayToObject(root, "anomalies") : NULL;
    ok = arr != NULL;
    for (size_t i = 0; ok && i < a->n; i++)
        ok = json_anomaly(arr, &a->v[i]);
    return sm_json_finish(root, ok, 0, "anomalies", NULL);
}
