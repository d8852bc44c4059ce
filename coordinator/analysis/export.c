/* Builds a run's comparison table: headline medians per host and test, and paired tcp/unix ratios.
 */
#include "coordinator/analysis/export.h"

#include "coordinator/analysis/internal.h"

#include "proto/params.h"
#include "proto/reps.h"
#include "proto/stats.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE SIZE_MAX

/* ---- columns: a test's label (label.c), its metric and unit ---- */

sm_metric sm_export_headline(const sm_params *p)
{
    /* One definition for the tables and for the adaptive repetitions that tighten it. */
    return sm_reps_metric(p);
}

static void set_fixed(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

/* The metric a ratio column compares: the headline for tcp/unix; for http the client model's
 * user CPU against the thread model's, the 2009 test's sharpest difference. */
static sm_metric ratio_metric(const sm_params *p)
{
    return p->workload == SM_WL_HTTP ? SM_M_USER_S : sm_export_headline(p);
}

static void fill_col(sm_table_col *col, const sm_params *p, sm_export_label_kind kind)
{
    sm_export_label(p, kind, false, col->label, sizeof col->label);
    sm_export_label(p, kind, true, col->brief, sizeof col->brief);
    sm_metric m = kind == SM_LABEL_RATIO ? ratio_metric(p) : sm_export_headline(p);
    set_fixed(col->metric, sizeof col->metric, sm_metric_name(m));
    set_fixed(col->unit, sizeof col->unit, kind == SM_LABEL_TEST ? sm_metric_unit(m) : "x");
}

void sm_export_column(const sm_params *p, sm_table_col *col)
{
    fill_col(col, p, SM_LABEL_TEST);
}

/* Field by field: the struct has padding, which memcmp would compare too. */
static bool params_equal(const sm_params *a, const sm_params *b)
{
    return a->workload == b->workload && a->transport == b->transport && a->scope == b->scope &&
           a->framing == b->framing && a->msg_size == b->msg_size && a->count == b->count &&
           a->bytes == b->bytes && a->duration_ms == b->duration_ms && a->req_size == b->req_size &&
           a->resp_size == b->resp_size && a->nodelay == b->nodelay && a->cork == b->cork &&
           a->sndbuf == b->sndbuf && a->rcvbuf == b->rcvbuf && a->read_size == b->read_size &&
           a->time_limit_ms == b->time_limit_ms && a->client == b->client &&
           a->connections == b->connections && a->repeat == b->repeat &&
           a->buffer_size == b->buffer_size && a->fresh_connect == b->fresh_connect &&
           a->http2 == b->http2 && a->tls == b->tls && a->verify == b->verify &&
           strcmp(a->url, b->url) == 0;
}

/* ---- grouping in order of first appearance ---- */

typedef struct keyed {
    const sm_cell *cell;
    size_t idx; /* position among the selected cells */
} keyed;

static int cmp_idx(size_t a, size_t b)
{
    return (a > b) - (a < b);
}

static int cmp_row(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    int c = strncmp(a->cell->host, b->cell->host, SM_NAME_LEN);
    if (c == 0)
        c = strncmp(a->cell->peer, b->cell->peer, SM_NAME_LEN);
    return c ? c : cmp_idx(a->idx, b->idx);
}

static int cmp_col(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    if (a->cell->test != b->cell->test)
        return a->cell->test < b->cell->test ? -1 : 1;
    if (a->cell->variant != b->cell->variant)
        return a->cell->variant < b->cell->variant ? -1 : 1;
    return cmp_idx(a->idx, b->idx);
}

/* Numbers the distinct keys of the n cells (cmp without its idx tie-break) 0, 1, ... in order of
 * first appearance: group_of[i] for the i-th cell, first[g] = the first cell of group g. Sorting
 * keeps this O(n log n): a run may have tens of thousands of cells. Returns the number of
 * groups, or NONE when out of memory. */
static size_t group(const sm_cell *const *sel, size_t n, int (*cmp)(const void *, const void *),
                    size_t *group_of, size_t *first)
{
    keyed *k = malloc((n ? n : 1) * sizeof *k);
    size_t *rank = malloc((n ? n : 1) * sizeof *rank);
    if (k == NULL || rank == NULL) {
        free(k);
        free(rank);
        return NONE;
    }
    for (size_t i = 0; i < n; i++)
        k[i] = (keyed){sel[i], i};
    qsort(k, n, sizeof *k, cmp);
    /* A group starts where the key changes; its first element has the smallest idx. */
    for (size_t i = 0; i < n; i++)
        rank[i] = NONE;
    size_t n_groups = 0;
    for (size_t i = 0; i < n; i++) {
        bool starts = i == 0 || cmp(&(keyed){k[i - 1].cell, 0}, &(keyed){k[i].cell, 0}) != 0;
        if (starts)
            rank[k[i].idx] = 0; /* marks a first appearance; the loop below numbers them */
        group_of[k[i].idx] = starts ? k[i].idx : group_of[k[i - 1].idx];
        n_groups += starts;
    }
    /* In cell order, each first appearance takes the next number; the others follow it. */
    size_t next = 0;
    for (size_t i = 0; i < n; i++) {
        if (rank[i] == 0) {
            rank[i] = next;
            first[next++] = i;
        }
    }
    for (size_t i = 0; i < n; i++)
        group_of[i] = rank[group_of[i]];
    free(k);
    free(rank);
    return n_groups;
}

/* ---- samples ---- */

typedef struct entry {
    size_t slot; /* row * n_cols + col */
    uint32_t rep;
    size_t seq; /* position in the samples, so that duplicates keep their order */
    double v;
} entry;

static int cmp_entry(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    if (a->slot != b->slot)
        return cmp_idx(a->slot, b->slot);
    if (a->rep != b->rep)
        return a->rep < b->rep ? -1 : 1;
    return cmp_idx(a->seq, b->seq);
}

/* Repetition i of one side against repetition i of the other, each rep's first sample only
 * (a repeated rep would otherwise be counted twice); a, b sorted by rep. A zero or non-finite
 * quotient is no ratio. Returns the number written to out. */
/* CPU times below this are under 3 scheduler ticks (USER_HZ is 100): the kernel splits a
 * thread's CPU between user and sys by tick samples, so a ratio of two such user times is
 * mostly rounding. The demo's 1 MiB transfers used a tick or two of user CPU, and their ratio
 * flagged a host +47% off the fleet on that alone; the 2009 test's own thread model used 0.038
 * s, which stays judged. */
#define CPU_S_RESOLVED 0.03

/* Whether the median of the entries' values is below CPU_S_RESOLVED (false when out of
 * memory: the ratio is then judged as before). */
static bool below_resolution(const entry *x, size_t n)
{
    if (n == 0)
        return false;
    double *v = malloc(n * sizeof *v);
    if (v == NULL)
        return false;
    for (size_t i = 0; i < n; i++)
        v[i] = x[i].v;
    double m = sm_stats_median(v, n);
    free(v);
    return m < CPU_S_RESOLVED;
}

static size_t pair_ratios(const entry *a, size_t na, const entry *b, size_t nb, double *out)
{
    size_t i = 0, j = 0, n = 0;
    while (i < na && j < nb) {
        if (a[i].rep < b[j].rep) {
            i++;
        } else if (a[i].rep > b[j].rep) {
            j++;
        } else {
            uint32_t rep = a[i].rep;
            double q = a[i].v / b[j].v;
            if (isfinite(q) && b[j].v != 0.0)
                out[n++] = q;
            while (i < na && a[i].rep == rep)
                i++;
            while (j < nb && b[j].rep == rep)
                j++;
        }
    }
    return n;
}

/* A sample the statistics leave out by default: the host was disturbed while it ran. */
static bool skip_disturbed(const sm_export_point *s, const sm_export_opts *o)
{
    return s->disturbed && !o->include_disturbed;
}

/* A point's metric, as sm_result_get gives it: NaN when absent. */
static double point_get(const sm_export_point *p, sm_metric m)
{
    return (unsigned)m < SM_M__COUNT && (p->have & (1ull << m)) != 0 ? p->v[m] : NAN;
}

/* A sample that counts: a measured job of a known cell, not a warm-up. */
static bool counts(const sm_export_point *s, size_t n_cells)
{
    return s->cell < n_cells && !s->warmup && s->measured;
}

/* ---- pair against loopback ---- */

/* A pair column's loopback: the local test that differs from it only in scope, measured on the
 * client host. */
typedef struct loopback {
    size_t col; /* the pair column */
    uint32_t test, variant;
    sm_params params; /* the local test's */
} loopback;

/* The loopbacks of a pair table's columns; returns how many were found (at most n_cols). */
static size_t find_loopbacks(const sm_cell *cells, size_t n_cells, const sm_cell *const *sel,
                             const size_t *col_first, size_t n_cols, loopback *out)
{
    size_t n = 0;
    for (size_t c = 0; c < n_cols; c++) {
        sm_params want = sel[col_first[c]]->params;
        want.scope = SM_SCOPE_LOCAL;
        for (size_t i = 0; i < n_cells; i++) {
            if (cells[i].params.scope == SM_SCOPE_LOCAL && params_equal(&cells[i].params, &want)) {
                out[n++] = (loopback){c, cells[i].test, cells[i].variant, cells[i].params};
                break;
            }
        }
    }
    return n;
}

/* The ratio cells of loopback lb (ratio column k): for each row client->server, the pair's
 * headline metric over the client host's loopback, repetition against repetition. e/start are
 * the pair slots' entries; local and vals are scratch of n_samples entries each. */
static int fill_loop_ratios(sm_table *t, size_t k, const loopback *lb, const sm_cell *cells,
                            size_t n_cells, const sm_export_point *samples, size_t n_samples,
                            const sm_export_opts *o, const sm_cell *const *sel,
                            const size_t *row_first, size_t n_cols, const entry *e,
                            const size_t *start, entry *local, double *vals)
{
    size_t n_local = 0;
    sm_metric m = sm_export_headline(&lb->params);
    for (size_t i = 0; i < n_samples; i++) {
        const sm_export_point *s = &samples[i];
        if (!counts(s, n_cells) || !s->ok || skip_disturbed(s, o))
            continue;
        const sm_cell *c = &cells[s->cell];
        if (c->params.scope != SM_SCOPE_LOCAL || c->test != lb->test || c->variant != lb->variant)
            continue;
        double v = point_get(s, m);
        if (isfinite(v))
            local[n_local++] = (entry){s->cell, s->rep, i, v};
    }
    qsort(local, n_local, sizeof *local, cmp_entry);
    for (size_t r = 0; r < t->n_rows; r++) {
        const char *client = sel[row_first[r]]->host;
        size_t from = 0;
        while (from < n_local && strncmp(cells[local[from].slot].host, client, SM_NAME_LEN) != 0)
            from++;
        size_t to = from;
        while (to < n_local && local[to].slot == local[from].slot)
            to++;
        size_t a = r * n_cols + lb->col;
        size_t n =
            pair_ratios(e + start[a], start[a + 1] - start[a], local + from, to - from, vals);
        if (n == 0)
            continue;
        sm_table_cell *cell = sm_table_ratio_at(t, r, k);
        if (sm_stats_summarize(vals, n, &cell->s) != 0)
            return SM_ENOMEM;
        cell->have = true;
    }
    return 0;
}

/* Whether a failed job ran into its time limit, on either side: the agent's reason reads
 * "time limit of N ms reached while ...", a pair job's prefixed "client: " or "server: ".
 * Such a job says its host is slower than the limit allows, which the analysis counts. */
static bool hit_time_limit(const sm_result *r)
{
    return !r->ok && strstr(r->reason, "time limit of ") != NULL;
}

/* What a job at its time limit would show in the headline metric: its limit, for a time;
 * NaN for a rate, whose size the limit alone does not give. */
static double limit_bound(const sm_params *p)
{
    if (sm_export_headline(p) == SM_M_SECONDS && p->time_limit_ms > 0)
        return p->time_limit_ms / 1000.0;
    return NAN;
}

int sm_export_build(uint64_t run_id, const char *run_name, sm_scope scope, const sm_cell *cells,
                    size_t n_cells, const sm_export_sample *samples, size_t n_samples,
                    sm_table *out, sm_error *err)
{
    return sm_export_build_opts(run_id, run_name, scope, cells, n_cells, samples, n_samples, NULL,
                                out, err);
}

/* The scratch of one table's build: the selected cells grouped into rows and columns, the
 * ratio column pairs, the sample entries by slot. */
typedef struct build {
    const sm_cell *cells;
    size_t n_cells;
    const sm_export_point *samples;
    size_t n_samples;
    const sm_export_opts *o;
    size_t n_sel, n_rows, n_cols, n_ratios, n_entries, n_aux, n_loop;
    const sm_cell **sel;
    size_t *sel_of, *row_of, *col_of, *row_first, *col_first, *ratio_tcp, *ratio_unix;
    entry *e, *ea;             /* the headline metric's entries, and the ratio's own metric's */
    double *vals;              /* scratch for a slot's values or ratios */
    size_t *start, *start_aux; /* e and ea by slot: slot s is [start[s], start[s + 1]) */
    loopback *loops;           /* pair tables */
    entry *local;
} build;

static int build_alloc(build *b)
{
    size_t nc = b->n_cells ? b->n_cells : 1, ns = b->n_samples ? b->n_samples : 1;
    b->sel = malloc(nc * sizeof *b->sel);
    b->sel_of = malloc(nc * sizeof *b->sel_of);
    b->row_of = malloc(nc * sizeof *b->row_of);
    b->col_of = malloc(nc * sizeof *b->col_of);
    b->row_first = malloc(nc * sizeof *b->row_first);
    b->col_first = malloc(nc * sizeof *b->col_first);
    b->ratio_tcp = malloc(nc * sizeof *b->ratio_tcp);
    b->ratio_unix = malloc(nc * sizeof *b->ratio_unix);
    b->e = malloc(ns * sizeof *b->e);
    b->ea = malloc(ns * sizeof *b->ea);
    b->vals = malloc(ns * sizeof *b->vals);
    if (!b->sel || !b->sel_of || !b->row_of || !b->col_of || !b->row_first || !b->col_first ||
        !b->ratio_tcp || !b->ratio_unix || !b->e || !b->ea || !b->vals)
        return SM_ENOMEM;
    return 0;
}

static void build_free(build *b)
{
    free(b->sel);
    free(b->sel_of);
    free(b->row_of);
    free(b->col_of);
    free(b->row_first);
    free(b->col_first);
    free(b->ratio_tcp);
    free(b->ratio_unix);
    free(b->e);
    free(b->ea);
    free(b->vals);
    free(b->start);
    free(b->start_aux);
    free(b->loops);
    free(b->local);
}

/* The cells of scope, grouped into rows (hosts or pairs) and columns (test variants). */
static int select_scope(build *b, sm_scope scope)
{
    for (size_t i = 0; i < b->n_cells; i++) {
        b->sel_of[i] = NONE;
        if (b->cells[i].params.scope == scope) {
            b->sel_of[i] = b->n_sel;
            b->sel[b->n_sel++] = &b->cells[i];
        }
    }
    b->n_rows = group(b->sel, b->n_sel, cmp_row, b->row_of, b->row_first);
    b->n_cols = group(b->sel, b->n_sel, cmp_col, b->col_of, b->col_first);
    return b->n_rows == NONE || b->n_cols == NONE ? SM_ENOMEM : 0;
}

/* Pairs a tcp column with the unix column of the same test that differs in nothing else
 * (for http, a client model's column with the thread model's). Quadratic in the columns of
 * one run, which the spec's limits keep to a few thousand. */
static void pair_columns(build *b)
{
    for (size_t c = 0; c < b->n_cols; c++) {
        const sm_cell *tc = b->sel[b->col_first[c]];
        sm_params want = tc->params;
        if (tc->params.workload == SM_WL_HTTP) {
            if (tc->params.client == SM_HTTP_THREAD)
                continue;
            want.client = SM_HTTP_THREAD;
        } else {
            if (tc->params.transport != SM_TR_TCP)
                continue;
            want.transport = SM_TR_UNIX;
            want.nodelay = false;
            want.cork = false;
        }
        for (size_t u = 0; u < b->n_cols; u++) {
            const sm_cell *uc = b->sel[b->col_first[u]];
            if (uc->test == tc->test && params_equal(&uc->params, &want)) {
                b->ratio_tcp[b->n_ratios] = c;
                b->ratio_unix[b->n_ratios++] = u;
                break;
            }
        }
    }
}

/* The table's run, row names and column labels. */
static void label_table(const build *b, sm_table *t, uint64_t run_id, const char *run_name)
{
    t->run_id = run_id;
    set_fixed(t->run_name, sizeof t->run_name, run_name);
    t->with_disturbed = b->o->include_disturbed;
    for (size_t r = 0; r < b->n_rows; r++) {
        const sm_cell *c = b->sel[b->row_first[r]];
        if (t->pairs)
            snprintf(t->rows[r], sizeof t->rows[r], "%.*s->%.*s",
                     (int)strnlen(c->host, SM_NAME_LEN), c->host,
                     (int)strnlen(c->peer, SM_NAME_LEN), c->peer);
        else
            snprintf(t->rows[r], sizeof t->rows[r], "%.*s", (int)strnlen(c->host, SM_NAME_LEN),
                     c->host);
    }
    for (size_t c = 0; c < b->n_cols; c++)
        fill_col(&t->cols[c], &b->sel[b->col_first[c]]->params, SM_LABEL_TEST);
    for (size_t k = 0; k < b->n_ratios; k++)
        fill_col(&t->ratio_cols[k], &b->sel[b->col_first[b->ratio_tcp[k]]]->params, SM_LABEL_RATIO);
    for (size_t k = 0; k < b->n_loop; k++)
        fill_col(&t->ratio_cols[b->n_ratios + k], &b->sel[b->col_first[b->loops[k].col]]->params,
                 SM_LABEL_LOOPBACK);
    sm_table_unique_briefs(t);
}

/* The first reason of its kind a cell meets, for its verdict; an empty reason, or no memory
 * for it, leaves the cell without one (the verdict then gives the counts alone). */
static void keep_reason(char **slot, const char *reason)
{
    if (*slot == NULL && reason != NULL && reason[0] != '\0')
        *slot = strdup(reason);
}

/* Each measured sample goes to its (row, column) slot: failures are counted there, ok values
 * of the column's headline metric are kept for the statistics. */
static void place_samples(build *b, sm_table *t)
{
    /* Adaptive runs: why each cell got no more rounds, as the coordinator recorded it. */
    for (size_t si = 0; si < b->n_sel; si++)
        t->cells[b->row_of[si] * b->n_cols + b->col_of[si]].stopped = b->sel[si]->stopped;
    for (size_t i = 0; i < b->n_samples; i++) {
        const sm_export_point *s = &b->samples[i];
        if (!counts(s, b->n_cells) || b->sel_of[s->cell] == NONE)
            continue;
        size_t si = b->sel_of[s->cell];
        size_t slot = b->row_of[si] * b->n_cols + b->col_of[si];
        const sm_params *cp = &b->sel[b->col_first[b->col_of[si]]]->params;
        if (!s->ok) {
            keep_reason(&t->cells[slot].failed_reason, s->reason);
            t->cells[slot].failed++;
            if (s->limited) {
                t->cells[slot].limited++;
                t->cells[slot].limit_bound = limit_bound(cp);
            }
            continue;
        }
        /* Kept and counted, so every table shows how many there were. */
        if (s->disturbed) {
            keep_reason(&t->cells[slot].disturbed_reason, s->disturbed_reason);
            t->cells[slot].disturbed++;
            if (skip_disturbed(s, b->o))
                continue;
        }
        double v = point_get(s, sm_export_headline(cp));
        if (isfinite(v))
            b->e[b->n_entries++] = (entry){slot, s->rep, i, v};
        /* The ratio's own metric, when it is not the headline, is kept apart. */
        if (ratio_metric(cp) != sm_export_headline(cp)) {
            double u = point_get(s, ratio_metric(cp));
            if (isfinite(u))
                b->ea[b->n_aux++] = (entry){slot, s->rep, i, u};
        }
    }
}

/* Sorts e and ea by slot and indexes them (start, start_aux); vals gets e's values. */
static int index_slots(build *b)
{
    qsort(b->e, b->n_entries, sizeof *b->e, cmp_entry);
    qsort(b->ea, b->n_aux, sizeof *b->ea, cmp_entry);
    size_t n_slots = b->n_rows * b->n_cols;
    b->start = calloc(n_slots + 1, sizeof *b->start);
    if (b->start == NULL)
        return SM_ENOMEM;
    for (size_t i = 0; i < b->n_entries; i++) {
        b->start[b->e[i].slot + 1]++;
        b->vals[i] = b->e[i].v;
    }
    for (size_t s = 0; s < n_slots; s++)
        b->start[s + 1] += b->start[s];
    b->start_aux = calloc(n_slots + 1, sizeof *b->start_aux);
    if (b->start_aux == NULL)
        return SM_ENOMEM;
    for (size_t i = 0; i < b->n_aux; i++)
        b->start_aux[b->ea[i].slot + 1]++;
    for (size_t s = 0; s < n_slots; s++)
        b->start_aux[s + 1] += b->start_aux[s];
    return 0;
}

static int summarize_slots(build *b, sm_table *t)
{
    for (size_t s = 0; s < b->n_rows * b->n_cols; s++) {
        size_t n = b->start[s + 1] - b->start[s];
        if (n == 0)
            continue;
        if (sm_stats_summarize(b->vals + b->start[s], n, &t->cells[s].s) != 0)
            return SM_ENOMEM;
        t->cells[s].have = true;
    }
    return 0;
}

/* The tcp/unix (or client model) ratio cells, repetition against repetition. */
static int summarize_ratios(build *b, sm_table *t)
{
    /* vals is free now; the ratios of one slot never outnumber its samples. */
    for (size_t r = 0; r < b->n_rows; r++) {
        for (size_t k = 0; k < b->n_ratios; k++) {
            size_t a = r * b->n_cols + b->ratio_tcp[k], c = r * b->n_cols + b->ratio_unix[k];
            const sm_params *cp = &b->sel[b->col_first[b->ratio_tcp[k]]]->params;
            bool aux = ratio_metric(cp) != sm_export_headline(cp);
            const entry *es = aux ? b->ea : b->e;
            const size_t *st = aux ? b->start_aux : b->start;
            size_t n =
                pair_ratios(es + st[a], st[a + 1] - st[a], es + st[c], st[c + 1] - st[c], b->vals);
            sm_table_cell *cell = sm_table_ratio_at(t, r, k);
            if (n == 0)
                continue;
            if (sm_stats_summarize(b->vals, n, &cell->s) != 0)
                return SM_ENOMEM;
            cell->have = true;
            cell->coarse = ratio_metric(cp) == SM_M_USER_S &&
                           (below_resolution(es + st[a], st[a + 1] - st[a]) ||
                            below_resolution(es + st[c], st[c + 1] - st[c]));
        }
    }
    for (size_t k = 0; k < b->n_loop; k++)
        if (fill_loop_ratios(t, b->n_ratios + k, &b->loops[k], b->cells, b->n_cells, b->samples,
                             b->n_samples, b->o, b->sel, b->row_first, b->n_cols, b->e, b->start,
                             b->local, b->vals) != 0)
            return SM_ENOMEM;
    return 0;
}

/* Pair tables: the loopback column each pair column is compared with. */
static int find_pair_loopbacks(build *b)
{
    b->loops = malloc((b->n_cols ? b->n_cols : 1) * sizeof *b->loops);
    b->local = malloc((b->n_samples ? b->n_samples : 1) * sizeof *b->local);
    if (!b->loops || !b->local)
        return SM_ENOMEM;
    b->n_loop = find_loopbacks(b->cells, b->n_cells, b->sel, b->col_first, b->n_cols, b->loops);
    return 0;
}

/* Every step that fills t; each can fail only for memory. */
static int fill_table(build *b, sm_table *t, sm_scope scope, uint64_t run_id, const char *run_name)
{
    int rc;
    if ((rc = build_alloc(b)) || (rc = select_scope(b, scope)))
        return rc;
    pair_columns(b);
    if (scope == SM_SCOPE_PAIR && (rc = find_pair_loopbacks(b)))
        return rc;
    if (sm_table_init(t, b->n_rows, b->n_cols, b->n_ratios + b->n_loop) != 0)
        return SM_ENOMEM;
    t->pairs = scope == SM_SCOPE_PAIR;
    label_table(b, t, run_id, run_name);
    place_samples(b, t);
    if ((rc = index_slots(b)) || (rc = summarize_slots(b, t)))
        return rc;
    return summarize_ratios(b, t);
}

int sm_export_build_points(uint64_t run_id, const char *run_name, sm_scope scope,
                           const sm_cell *cells, size_t n_cells, const sm_export_point *points,
                           size_t n_points, const sm_export_opts *o, sm_table *out, sm_error *err)
{
    static const sm_export_opts defaults = {0};
    build b = {.cells = cells,
               .n_cells = n_cells,
               .samples = points,
               .n_samples = n_points,
               .o = o ? o : &defaults};
    sm_table t;
    memset(&t, 0, sizeof t);
    memset(out, 0, sizeof *out);
    int rc = fill_table(&b, &t, scope, run_id, run_name);
    if (rc == 0) {
        *out = t;
    } else {
        rc = SM_ENOMEM;
        sm_table_fini(&t);
        sm_error_set(err, rc, "export: out of memory building the table of run %" PRIu64, run_id);
    }
    build_free(&b);
    return rc;
}

void sm_export_point_of(const sm_export_sample *s, sm_export_point *p)
{
    memset(p, 0, sizeof *p);
    p->cell = s->cell;
    p->rep = s->rep;
    p->warmup = s->warmup;
    const sm_result *r = s->result;
    if (r == NULL)
        return;
    p->measured = true;
    p->ok = r->ok;
    p->limited = hit_time_limit(r);
    p->disturbed = r->host.disturbed;
    p->have = r->have;
    memcpy(p->v, r->v, sizeof p->v);
    p->reason = r->reason;
    p->disturbed_reason = r->host.reason;
}

int sm_export_build_opts(uint64_t run_id, const char *run_name, sm_scope scope,
                         const sm_cell *cells, size_t n_cells, const sm_export_sample *samples,
                         size_t n_samples, const sm_export_opts *o, sm_table *out, sm_error *err)
{
    sm_export_point *p = malloc((n_samples ? n_samples : 1) * sizeof *p);
    if (p == NULL) {
        memset(out, 0, sizeof *out);
        return sm_error_set(err, SM_ENOMEM,
                            "export: out of memory building the table of run %" PRIu64, run_id);
    }
    for (size_t i = 0; i < n_samples; i++)
        sm_export_point_of(&samples[i], &p[i]);
    int rc =
        sm_export_build_points(run_id, run_name, scope, cells, n_cells, p, n_samples, o, out, err);
    free(p);
    return rc;
}

/* ---- exports with the fingerprints' explanation ---- */

/* The anomaly whose explanation a row's JSON flag carries: the first on row r with something
 * to show; SIZE_MAX when none. */
static size_t row_anomaly(const sm_anomalies *an, const sm_explanation *ex, size_t r)
{
    for (size_t i = 0; an && i < an->n; i++)
        if (an->v[i].row == r && sm_explain_any(ex, i))
            return i;
    return SIZE_MAX;
}

/* The footnotes of a Markdown table: one per host that the explanation of a flag shows, in the
 * order the rows first point to them. */
typedef struct footnotes {
    const char **host; /* points into the explanation */
    size_t n;
} footnotes;

/* The number of host's footnote (from 1), made when new. */
static size_t footnote_of(footnotes *f, const char *host)
{
    size_t k = 0;
    while (k < f->n && strcmp(f->host[k], host) != 0)
        k++;
    if (k == f->n)
        f->host[f->n++] = host;
    return k + 1;
}

static int cmp_size(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    return (a > b) - (a < b);
}

/* Marks row r's flag with the footnotes of the hosts its flags' explanations name, in order:
 * " [1]", or " [1, 2]" for a pair row whose two hosts both have something to show. */
static void mark_row(sm_table *t, const sm_anomalies *an, const sm_explanation *ex, size_t r,
                     footnotes *f)
{
    /* A row's flags are of its own host or of a pair's two; room for more all the same. */
    size_t num[8], n = 0;
    for (size_t i = 0; i < an->n; i++) {
        if (!sm_analysis_flags_row(t, &an->v[i], r) || !sm_explain_any(ex, i))
            continue;
        for (size_t h = 0; h < 2; h++) {
            if (ex->v[i].d[h].n == 0)
                continue;
            size_t k = footnote_of(f, ex->v[i].host[h]), j = 0;
            while (j < n && num[j] != k)
                j++;
            if (j == n && n < sizeof num / sizeof num[0])
                num[n++] = k;
        }
    }
    if (n == 0)
        return;
    qsort(num, n, sizeof num[0], cmp_size);
    char mark[8 * 24];
    size_t m = 0;
    for (size_t j = 0; j < n; j++)
        m += (size_t)snprintf(mark + m, sizeof mark - m, "%s%zu", j ? ", " : " [", num[j]);
    m += (size_t)snprintf(mark + m, sizeof mark - m, "]");
    /* The mark goes at the end of the flag, cutting it when the flag fills its field. */
    size_t cap = sizeof t->flags[r], len = strnlen(t->flags[r], cap);
    if (len + m >= cap)
        len = cap - m - 1;
    memcpy(t->flags[r] + len, mark, m + 1);
}

char *sm_export_md(sm_table *t, const sm_anomalies *an, const sm_explanation *ex)
{
    size_t n = an ? an->n : 0;
    /* Each anomaly names at most two hosts. */
    footnotes f = {calloc(2 * n + 1, sizeof *f.host), 0};
    if (f.host == NULL)
        return NULL;
    for (size_t r = 0; n > 0 && r < t->n_rows; r++)
        mark_row(t, an, ex, r, &f);
    char *md = sm_table_md(t);
    size_t len = md ? strlen(md) : 0, cap = len + 1;
    for (size_t k = 0; md && k < f.n; k++)
        cap += 32 + sm_explain_host_note(ex, f.host[k], NULL, 0);
    char *out = md && f.n ? realloc(md, cap) : md;
    if (out == NULL)
        free(md);
    /* Each footnote a paragraph of its own, below the table. */
    for (size_t k = 0; out && k < f.n; k++) {
        len += (size_t)snprintf(out + len, cap - len, "\n[%zu] ", k + 1);
        len += sm_explain_host_note(ex, f.host[k], out + len, cap - len);
        len += (size_t)snprintf(out + len, cap - len, "\n");
    }
    free(f.host);
    return out;
}

typedef struct json_notes {
    const sm_anomalies *an;
    const sm_explanation *ex;
} json_notes;

static bool json_note(void *arg, size_t row, cJSON *flag)
{
    const json_notes *n = arg;
    size_t i = row_anomaly(n->an, n->ex, row);
    if (i == SIZE_MAX)
        return true;
    return sm_explain_json((void *)n->ex, i, flag);
}

char *sm_export_json(const sm_table *t, const sm_anomalies *an, const sm_explanation *ex)
{
    json_notes n = {an, ex};
    return sm_table_json_more(t, json_note, &n);
}
