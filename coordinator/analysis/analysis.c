/* Analysis of comparison tables, the rules: noisy cells, fleet outliers, slow hosts and links
 * (the regressions are in regression.c, the maths in stats.c, the text and the JSON in text.c
 * and json.c). */
#include "coordinator/analysis/internal.h"

#include "proto/result.h"
#include "proto/stats.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

sm_analysis_limits sm_analysis_limits_of(const sm_analysis_opts *o)
{
    sm_analysis_limits l = {SM_ANALYSIS_Z_DEFAULT, SM_ANALYSIS_FLOOR_DEFAULT};
    if (o != NULL && o->z > 0 && isfinite(o->z))
        l.z = o->z;
    if (o != NULL && o->floor > 0 && isfinite(o->floor))
        l.floor = o->floor;
    return l;
}

sm_analysis_column sm_analysis_column_of(const sm_table *t, bool ratio, size_t c)
{
    sm_analysis_column k = {.ratio = ratio, .index = c};
    k.col = ratio ? &t->ratio_cols[c] : &t->cols[c];
    k.cells = ratio ? t->ratio_cells + c : t->cells + c;
    k.stride = ratio ? t->n_ratio_cols : t->n_cols;
    return k;
}

/* The cell's median when it has a summary with a finite one, else NaN. */
static double median_at(const sm_analysis_column *k, size_t r)
{
    const sm_table_cell *c = sm_analysis_cell_at(k, r);
    return c->have && isfinite(c->s.median) ? c->s.median : NAN;
}

void sm_analysis_copy_fixed(char *dst, size_t dstcap, const char *src, size_t srccap)
{
    size_t n = strnlen(src, srccap);
    if (n >= dstcap)
        n = dstcap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

double sm_analysis_relative(double diff, double base)
{
    return diff == 0 ? 0 : diff / fabs(base);
}

sm_anomaly_dir sm_analysis_direction(const char *metric, size_t cap, double value, double reference)
{
    char name[64];
    sm_analysis_copy_fixed(name, sizeof name, metric, cap);
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

void sm_analysis_percent_text(char *buf, size_t len, double floor)
{
    double pct = floor * 100;
    /* 0.15 * 100 is 15.000000000000002: compare with a tolerance, not ==. */
    if (fabs(pct - nearbyint(pct)) < 1e-9)
        snprintf(buf, len, "%.0f%%", pct);
    else
        snprintf(buf, len, "%.1f%%", pct);
}

void sm_analysis_anomaly_start(sm_anomaly *x, sm_anomaly_kind kind, const sm_analysis_column *k,
                               sm_analysis_limits l, bool mad0)
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
    sm_analysis_percent_text(pct, sizeof pct, l.floor);
    if (kind == SM_ANOMALY_REGRESSION)
        snprintf(x->rule, sizeof x->rule, "CIs apart and >= %s", pct);
    else if (mad0)
        snprintf(x->rule, sizeof x->rule, "MAD 0, >= %s", pct);
    else
        snprintf(x->rule, sizeof x->rule, "|z| > %g and >= %s", l.z, pct);
}

void sm_analysis_anomaly_numbers(sm_anomaly *x, double value, double reference, double z,
                                 double rel)
{
    x->value = value;
    x->reference = reference;
    x->z = z;
    x->rel = rel;
    x->dir = sm_analysis_direction(x->metric, sizeof x->metric, value, reference);
}

int sm_analysis_push(sm_anomalies *a, const sm_anomaly *x)
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
static bool stands_apart(double z, double mad, double rel, sm_analysis_limits l)
{
    return fabs(rel) >= l.floor && (mad == 0 || fabs(z) > l.z);
}

/* Whether a noisy cell's 95% CI lies wholly on the side of rel beyond the floor from the
 * reference: then the flag stands whatever the noise. A cell with n < 3 never clears. */
static bool ci_clears(const sm_summary *s, double reference, double rel, sm_analysis_limits l)
{
    if (s->n < SM_ANALYSIS_NOISY_MIN_N)
        return false;
    double near = rel > 0 ? s->ci95_low : s->ci95_high;
    double r = sm_analysis_relative(near - reference, reference);
    return rel > 0 ? r >= l.floor : r <= -l.floor;
}

/* Whether a cell is the floor off the fleet even at the near end of its own 95% CI: the
 * difference is at least the floor with 95% confidence, not only at its median. Three hosts
 * give a MAD from one gap, so a z of 5 can come from medians 15% apart that each host's spread
 * covers (an unshaped lab under ASan: 19.8 ms against 17.2, its repetitions 16 to 20 ms), and
 * a shared machine has moved one lab host's TCP/UDS ratio 16% for a whole run (0.903 against
 * 1.075, all five repetitions below the others' median). A cell with n < 3 has no interval and
 * is judged on z and the floor alone. */
static bool ci_beyond_floor(const sm_summary *s, double reference, double rel, sm_analysis_limits l)
{
    if (s->n < SM_ANALYSIS_NOISY_MIN_N)
        return true;
    return ci_clears(s, reference, rel, l);
}

static void noisy_rule(sm_anomaly *a, sm_analysis_limits l)
{
    char pct[16];
    sm_analysis_percent_text(pct, sizeof pct, l.floor);
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

static others others_of(const sm_analysis_column *k, size_t n, size_t r)
{
    others o = {NAN, NAN, NAN, NAN};
    for (size_t j = 0; j < n; j++) {
        const sm_table_cell *c = sm_analysis_cell_at(k, j);
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
static bool interval_apart(const sm_analysis_column *k, size_t n, size_t r, double rel,
                           sm_analysis_limits l)
{
    const sm_summary *s = &sm_analysis_cell_at(k, r)->s;
    if (s->n < SM_ANALYSIS_NOISY_MIN_N || rel == 0)
        return false;
    others o = others_of(k, n, r);
    /* Factors compare positive values only (times, rates, ratios all are). */
    if (!(o.lo > 0) || !(o.min_med > 0) || !(s->ci95_low > 0))
        return false;
    double spread = o.max_med / o.min_med;
    if (rel > 0)
        return s->ci95_low > o.hi && sm_analysis_relative(s->ci95_low - o.hi, o.hi) >= l.floor &&
               s->ci95_low / o.hi > spread;
    return s->ci95_high < o.lo && sm_analysis_relative(o.lo - s->ci95_high, o.lo) >= l.floor &&
           o.lo / s->ci95_high > spread;
}

/* Whether a time-limited cell's bound (a job at its limit would show at least this slow a
 * value) lies the floor beyond every finished host on the slow side; a bound the metric
 * cannot give (NaN: a throughput of unknown size) is beyond any host that finished. */
static bool bound_apart(const sm_analysis_column *k, size_t n, size_t r, sm_analysis_limits l,
                        sm_anomaly_dir *dir)
{
    double bound = sm_analysis_cell_at(k, r)->limit_bound;
    others o = others_of(k, n, r);
    double lo = o.lo, hi = o.hi;
    if (!isfinite(lo))
        return false;
    /* The slow side: a time is slower when higher, a throughput when lower. */
    sm_anomaly_dir up = sm_analysis_direction(k->col->metric, sizeof k->col->metric, 1, 0);
    bool higher_is_slower = up == SM_DIR_SLOWER || up == SM_DIR_HIGHER;
    *dir =
        higher_is_slower ? up : sm_analysis_direction(k->col->metric, sizeof k->col->metric, 0, 1);
    if (!isfinite(bound))
        return true;
    if (higher_is_slower)
        return bound > hi && sm_analysis_relative(bound - hi, hi) >= l.floor;
    return bound < lo && sm_analysis_relative(lo - bound, lo) >= l.floor;
}

static void apart_rule(sm_anomaly *a, sm_analysis_limits l)
{
    char pct[16];
    sm_analysis_percent_text(pct, sizeof pct, l.floor);
    snprintf(a->rule, sizeof a->rule, "CI beyond every other host's by >= %.12s", pct);
}

/* The hosts whose jobs ran into their time limit: slower than the hosts that finished, as long
 * as those are at least two and more than the limited ones (else who is odd is unclear). */
static int limit_rows(const sm_table *t, const sm_analysis_column *k, double med, size_t finished,
                      size_t limited, sm_analysis_limits l, sm_anomalies *out)
{
    if (limited == 0 || finished < 2 || finished <= limited)
        return 0;
    for (size_t r = 0; r < t->n_rows; r++) {
        const sm_table_cell *c = sm_analysis_cell_at(k, r);
        sm_anomaly_dir dir;
        if (!at_limit(c) || !bound_apart(k, t->n_rows, r, l, &dir))
            continue;
        sm_anomaly a;
        sm_analysis_anomaly_start(&a, SM_ANOMALY_FLEET, k, l, false);
        snprintf(a.rule, sizeof a.rule, "%" PRIu32 " of %" PRIu32 " jobs at the time limit",
                 c->limited, c->limited + (c->have ? (uint32_t)c->s.n : 0));
        COPY_FIXED(a.host, t->rows[r]);
        a.row = r;
        a.value = c->limit_bound;
        a.reference = med;
        a.z = NAN;
        a.rel = isfinite(c->limit_bound) ? sm_analysis_relative(c->limit_bound - med, med) : NAN;
        a.dir = dir;
        a.at_limit = true;
        int rc = sm_analysis_push(out, &a);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int fleet_column(const sm_table *t, const sm_analysis_column *k, sm_analysis_limits l,
                        sm_anomalies *out)
{
    size_t n = t->n_rows, present = 0, limited = 0;
    if (n < 3)
        return 0;
    double *x = n > SIZE_MAX / 2 ? NULL : sm_analysis_doubles(2 * n);
    if (x == NULL)
        return SM_ENOMEM;
    double *z = x + n;
    for (size_t r = 0; r < n; r++) {
        /* A host at its time limit has no value to put in the fleet's median: it is judged
         * apart, against the hosts that finished (limit_rows). A coarse cell (tick-rounded CPU
         * times) is left out altogether. */
        bool lim = at_limit(sm_analysis_cell_at(k, r));
        x[r] = lim || sm_analysis_cell_at(k, r)->coarse ? NAN : median_at(k, r);
        present += isfinite(x[r]);
        limited += lim;
    }
    double med = NAN, mad = NAN;
    size_t from = out->n;
    int rc = present < 3 ? 0 : sm_robust_z(x, n, z, &med, &mad);
    for (size_t r = 0; rc == 0 && present >= 3 && r < n; r++) {
        if (!isfinite(x[r]))
            continue;
        double rel = sm_analysis_relative(x[r] - med, med);
        /* A noisy cell's median alone is not evidence; its whole interval beyond the floor is
         * (the lab's loopback cells often carry one slow repetition in five). */
        const sm_summary *s = &sm_analysis_cell_at(k, r)->s;
        bool noisy = sm_analysis_noisy(s);
        bool by_z = stands_apart(z[r], mad, rel, l) &&
                    (noisy ? ci_clears(s, med, rel, l) : ci_beyond_floor(s, med, rel, l));
        bool by_gap = !by_z && fabs(rel) >= l.floor && interval_apart(k, n, r, rel, l);
        if (!by_z && !by_gap)
            continue;
        sm_anomaly a;
        sm_analysis_anomaly_start(&a, SM_ANOMALY_FLEET, k, l, mad == 0);
        if (by_gap)
            apart_rule(&a, l);
        else if (noisy)
            noisy_rule(&a, l);
        COPY_FIXED(a.host, t->rows[r]);
        a.row = r;
        sm_analysis_anomaly_numbers(&a, x[r], med, mad == 0 ? NAN : z[r], rel);
        rc = sm_analysis_push(out, &a);
    }
    if (rc == 0 && present >= 2) {
        if (present < 3) {
            /* Two finished hosts still make a reference for a third at its limit. */
            double *s = sm_analysis_doubles(n);
            if (s == NULL) {
                free(x);
                return SM_ENOMEM;
            }
            med = sm_stats_median_in(x, n, 1, s);
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
    size_t *map;  /* table host -> matrix index, SIZE_MAX when not in this sm_analysis_column */
    size_t *host; /* matrix index -> table host */
    double *m, *resid, *row, *col, *e, *z;
    size_t *row_of; /* matrix cell -> table row */
    bool *slow;     /* matrix index -> already a slow host of this sm_analysis_column */
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
    w->m = sm_analysis_doubles(2 * h * h + 4 * h);
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
static int slow_hosts(const sm_table *t, const sm_analysis_column *k, const pair_index *p,
                      pair_work *w, size_t nk, double overall, bool server, sm_analysis_limits l,
                      sm_anomalies *out)
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
        double rel = sm_analysis_relative(w->e[i], overall);
        if (!stands_apart(w->z[i], mad, rel, l))
            continue;
        sm_anomaly a;
        sm_analysis_anomaly_start(&a, SM_ANOMALY_SLOW_HOST, k, l, mad == 0);
        COPY_FIXED(a.host, p->hosts[w->host[i]]);
        snprintf(a.role, sizeof a.role, "%s", server ? "server" : "client");
        a.row = first_row(p, t->n_rows, w->host[i], server);
        sm_analysis_anomaly_numbers(&a, overall + w->e[i], overall, mad == 0 ? NAN : w->z[i], rel);
        w->slow[i] = true;
        rc = sm_analysis_push(out, &a);
    }
    return rc;
}

static int slow_links(const sm_table *t, const sm_analysis_column *k, const pair_index *p,
                      pair_work *w, size_t nk, double overall, sm_analysis_limits l,
                      sm_anomalies *out)
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
        if (!isfinite(res) || w->slow[i] || w->slow[j] ||
            sm_analysis_noisy(&sm_analysis_cell_at(k, r)->s))
            continue;
        double rel = sm_analysis_relative(res, overall);
        if (!stands_apart(z[i * nk + j], mad, rel, l))
            continue;
        sm_anomaly a;
        sm_analysis_anomaly_start(&a, SM_ANOMALY_SLOW_LINK, k, l, mad == 0);
        COPY_FIXED(a.host, t->rows[r]);
        a.row = r;
        /* The reference is what the polish expects of this pair from its two hosts alone, so
         * that value - reference is the residual the rule judged. */
        double expect = overall + w->row[i] + w->col[j];
        sm_analysis_anomaly_numbers(&a, expect + res, expect, mad == 0 ? NAN : z[i * nk + j], rel);
        rc = sm_analysis_push(out, &a);
    }
    return rc;
}

static int pair_column(const sm_table *t, const sm_analysis_column *k, const pair_index *p,
                       pair_work *w, sm_analysis_limits l, sm_anomalies *out)
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
    sm_analysis_limits l = sm_analysis_limits_of(o);
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
        sm_analysis_column k = sm_analysis_column_of(t, ratio, ratio ? c - t->n_cols : c);
        rc = t->pairs ? pair_column(t, &k, &p, &w, l, out) : fleet_column(t, &k, l, out);
    }
    pair_work_fini(&w);
    pair_index_fini(&p);
    if (rc != 0)
        return sm_error_set(err, rc, "analysis: out of memory");
    return 0;
}
