/* Builds a run's comparison table: headline medians per host and test, and paired tcp/unix ratios.
 */
#include "coordinator/export.h"

#include "proto/params.h"
#include "proto/reps.h"
#include "proto/stats.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE SIZE_MAX

sm_metric sm_export_headline(const sm_params *p)
{
    /* One definition for the tables and for the adaptive repetitions that tighten it. */
    return sm_reps_metric(p);
}

/* ---- labels ---- */

/* Appends to buf[0..cap) at *len; text that does not fit is cut, a label is only for people. */
__attribute__((format(printf, 4, 5))) static void append(char *buf, size_t cap, size_t *len,
                                                         const char *fmt, ...)
{
    if (*len + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len = (size_t)n < cap - *len ? *len + (size_t)n : cap - 1;
}

/* sep then "128 B", "64 KiB", "1 MiB": the binary suffixes the options accept. */
static void append_size(char *buf, size_t cap, size_t *len, const char *sep, uint64_t v)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB"};
    unsigned u = 0;
    while (u + 1 < sizeof units / sizeof units[0] && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    append(buf, cap, len, "%s%" PRIu64 " %s", sep, v, units[u]);
}

/* "tcp", "tcp+nodelay", "tcp+cork", "unix"; for http the client model: "multi+tls". */
static void transport_text(const sm_params *p, char *buf, size_t cap)
{
    size_t len = 0;
    if (p->workload == SM_WL_HTTP) {
        append(buf, cap, &len, "%s%s%s%s", sm_http_client_name(p->client), p->tls ? "+tls" : "",
               p->fresh_connect ? "+fresh" : "", p->http2 ? "+h2" : "");
        return;
    }
    append(buf, cap, &len, "%s%s%s", sm_transport_name(p->transport),
           p->transport == SM_TR_TCP && p->nodelay ? "+nodelay" : "",
           p->transport == SM_TR_TCP && p->cork ? "+cork" : "");
}

/* Everything after workload and transport, with a leading space: " lines 128 B x 8192",
 * " 1 B/1 B 1000 ms", " x 500". Optional socket settings appear only when set, so variants
 * that differ in them get different labels. */
static void params_text(const sm_params *p, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    if (p->workload == SM_WL_HTTP) {
        /* " 51711600 B x4", " 16 MiB x5 4 conns buffer 100 KiB", " http://h/f x5". */
        if (p->url[0])
            append(buf, cap, &len, " %.60s", p->url);
        if (p->bytes)
            append_size(buf, cap, &len, " ", p->bytes);
        append(buf, cap, &len, " x%" PRIu32, p->repeat);
        if (p->connections > 1)
            append(buf, cap, &len, " %" PRIu32 " conns", p->connections);
        if (p->buffer_size) {
            append(buf, cap, &len, " buffer");
            append_size(buf, cap, &len, " ", p->buffer_size);
        }
        return;
    }
    if (p->workload == SM_WL_STREAM) {
        if (p->framing == SM_FRAMING_LINES)
            append(buf, cap, &len, " lines");
        append_size(buf, cap, &len, " ", p->msg_size);
    } else if (p->workload == SM_WL_RR) {
        append_size(buf, cap, &len, " ", p->req_size);
        append_size(buf, cap, &len, "/", p->resp_size);
    }
    if (p->duration_ms != 0)
        append(buf, cap, &len, " %" PRIu32 " ms", p->duration_ms);
    else if (p->bytes != 0) {
        append_size(buf, cap, &len, " ", p->bytes);
        append(buf, cap, &len, " total");
    } else
        append(buf, cap, &len, " x %" PRIu64, p->count);
    if (p->sndbuf != 0) {
        append(buf, cap, &len, " sndbuf");
        append_size(buf, cap, &len, " ", p->sndbuf);
    }
    if (p->rcvbuf != 0) {
        append(buf, cap, &len, " rcvbuf");
        append_size(buf, cap, &len, " ", p->rcvbuf);
    }
    if (p->read_size != 0) {
        append(buf, cap, &len, " read");
        append_size(buf, cap, &len, " ", p->read_size);
    }
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

static void fill_col(sm_table_col *col, const sm_params *p, bool ratio)
{
    char transport[32], rest[SM_TABLE_LABEL_MAX];
    transport_text(p, transport, sizeof transport);
    params_text(p, rest, sizeof rest);
    sm_metric m = ratio ? ratio_metric(p) : sm_export_headline(p);
    size_t len = 0;
    col->label[0] = '\0';
    if (ratio)
        append(col->label, sizeof col->label, &len, "%s/%s %s%s", transport,
               p->workload == SM_WL_HTTP ? "thread" : "unix", sm_workload_name(p->workload), rest);
    else
        append(col->label, sizeof col->label, &len, "%s %s%s", sm_workload_name(p->workload),
               transport, rest);
    set_fixed(col->metric, sizeof col->metric, sm_metric_name(m));
    set_fixed(col->unit, sizeof col->unit, ratio ? "x" : sm_metric_unit(m));
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
static bool skip_disturbed(const sm_export_sample *s, const sm_export_opts *o)
{
    return s->result->host.disturbed && !o->include_disturbed;
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

static void fill_loop_col(sm_table_col *col, const sm_params *p)
{
    char transport[32], rest[SM_TABLE_LABEL_MAX];
    transport_text(p, transport, sizeof transport);
    params_text(p, rest, sizeof rest);
    size_t len = 0;
    col->label[0] = '\0';
    append(col->label, sizeof col->label, &len, "pair/loopback %s %s%s",
           sm_workload_name(p->workload), transport, rest);
    set_fixed(col->metric, sizeof col->metric, sm_metric_name(sm_export_headline(p)));
    set_fixed(col->unit, sizeof col->unit, "x");
}

/* The ratio cells of loopback lb (ratio column k): for each row client->server, the pair's
 * headline metric over the client host's loopback, repetition against repetition. e/start are
 * the pair slots' entries; local and vals are scratch of n_samples entries each. */
static int fill_loop_ratios(sm_table *t, size_t k, const loopback *lb, const sm_cell *cells,
                            size_t n_cells, const sm_export_sample *samples, size_t n_samples,
                            const sm_export_opts *o, const sm_cell *const *sel,
                            const size_t *row_first, size_t n_cols, const entry *e,
                            const size_t *start, entry *local, double *vals)
{
    size_t n_local = 0;
    sm_metric m = sm_export_headline(&lb->params);
    for (size_t i = 0; i < n_samples; i++) {
        const sm_export_sample *s = &samples[i];
        if (s->cell >= n_cells || s->warmup || !s->result || !s->result->ok || skip_disturbed(s, o))
            continue;
        const sm_cell *c = &cells[s->cell];
        if (c->params.scope != SM_SCOPE_LOCAL || c->test != lb->test || c->variant != lb->variant)
            continue;
        double v = sm_result_get(s->result, m);
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

int sm_export_build_opts(uint64_t run_id, const char *run_name, sm_scope scope,
                         const sm_cell *cells, size_t n_cells, const sm_export_sample *samples,
                         size_t n_samples, const sm_export_opts *o, sm_table *out, sm_error *err)
{
    static const sm_export_opts defaults = {0};
    if (o == NULL)
        o = &defaults;
    int rc = SM_ENOMEM;
    sm_table t;
    memset(&t, 0, sizeof t);
    memset(out, 0, sizeof *out);
    size_t n_sel = 0, n_rows = 0, n_cols = 0, n_ratios = 0, n_entries = 0;
    const sm_cell **sel = malloc((n_cells ? n_cells : 1) * sizeof *sel);
    size_t *sel_of = malloc((n_cells ? n_cells : 1) * sizeof *sel_of);
    size_t *row_of = malloc((n_cells ? n_cells : 1) * sizeof *row_of);
    size_t *col_of = malloc((n_cells ? n_cells : 1) * sizeof *col_of);
    size_t *row_first = malloc((n_cells ? n_cells : 1) * sizeof *row_first);
    size_t *col_first = malloc((n_cells ? n_cells : 1) * sizeof *col_first);
    size_t *ratio_tcp = malloc((n_cells ? n_cells : 1) * sizeof *ratio_tcp);
    size_t *ratio_unix = malloc((n_cells ? n_cells : 1) * sizeof *ratio_unix);
    entry *e = malloc((n_samples ? n_samples : 1) * sizeof *e);
    entry *ea = malloc((n_samples ? n_samples : 1) * sizeof *ea);
    double *vals = malloc((n_samples ? n_samples : 1) * sizeof *vals);
    size_t *start = NULL, *start_aux = NULL, n_aux = 0;
    loopback *loops = NULL;
    entry *local = NULL;
    if (!sel || !sel_of || !row_of || !col_of || !row_first || !col_first || !ratio_tcp ||
        !ratio_unix || !e || !ea || !vals)
        goto out;

    for (size_t i = 0; i < n_cells; i++) {
        sel_of[i] = NONE;
        if (cells[i].params.scope == scope) {
            sel_of[i] = n_sel;
            sel[n_sel++] = &cells[i];
        }
    }
    n_rows = group(sel, n_sel, cmp_row, row_of, row_first);
    n_cols = group(sel, n_sel, cmp_col, col_of, col_first);
    if (n_rows == NONE || n_cols == NONE)
        goto out;

    /* Pairs a tcp column with the unix column of the same test that differs in nothing else
     * (for http, a client model's column with the thread model's). Quadratic in the columns of
     * one run, which the spec's limits keep to a few thousand. */
    for (size_t c = 0; c < n_cols; c++) {
        const sm_cell *tc = sel[col_first[c]];
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
        for (size_t u = 0; u < n_cols; u++) {
            const sm_cell *uc = sel[col_first[u]];
            if (uc->test == tc->test && params_equal(&uc->params, &want)) {
                ratio_tcp[n_ratios] = c;
                ratio_unix[n_ratios++] = u;
                break;
            }
        }
    }

    size_t n_loop = 0;
    if (scope == SM_SCOPE_PAIR) {
        loops = malloc((n_cols ? n_cols : 1) * sizeof *loops);
        local = malloc((n_samples ? n_samples : 1) * sizeof *local);
        if (!loops || !local)
            goto out;
        n_loop = find_loopbacks(cells, n_cells, sel, col_first, n_cols, loops);
    }
    if (sm_table_init(&t, n_rows, n_cols, n_ratios + n_loop) != 0)
        goto out;
    t.run_id = run_id;
    set_fixed(t.run_name, sizeof t.run_name, run_name);
    t.pairs = scope == SM_SCOPE_PAIR;
    t.with_disturbed = o->include_disturbed;
    for (size_t r = 0; r < n_rows; r++) {
        const sm_cell *c = sel[row_first[r]];
        if (t.pairs)
            snprintf(t.rows[r], sizeof t.rows[r], "%.*s->%.*s", (int)strnlen(c->host, SM_NAME_LEN),
                     c->host, (int)strnlen(c->peer, SM_NAME_LEN), c->peer);
        else
            snprintf(t.rows[r], sizeof t.rows[r], "%.*s", (int)strnlen(c->host, SM_NAME_LEN),
                     c->host);
    }
    for (size_t c = 0; c < n_cols; c++)
        fill_col(&t.cols[c], &sel[col_first[c]]->params, false);
    for (size_t k = 0; k < n_ratios; k++)
        fill_col(&t.ratio_cols[k], &sel[col_first[ratio_tcp[k]]]->params, true);
    for (size_t k = 0; k < n_loop; k++)
        fill_loop_col(&t.ratio_cols[n_ratios + k], &sel[col_first[loops[k].col]]->params);

    /* Adaptive runs: why each cell got no more rounds, as the coordinator recorded it. */
    for (size_t si = 0; si < n_sel; si++)
        t.cells[row_of[si] * n_cols + col_of[si]].stopped = sel[si]->stopped;
    /* Each measured sample goes to its (row, column) slot: failures are counted there, ok values
     * of the column's headline metric are kept for the statistics. */
    for (size_t i = 0; i < n_samples; i++) {
        const sm_export_sample *s = &samples[i];
        if (s->cell >= n_cells || sel_of[s->cell] == NONE || s->warmup || s->result == NULL)
            continue;
        size_t si = sel_of[s->cell];
        size_t slot = row_of[si] * n_cols + col_of[si];
        const sm_params *cp = &sel[col_first[col_of[si]]]->params;
        if (!s->result->ok) {
            t.cells[slot].failed++;
            if (hit_time_limit(s->result)) {
                t.cells[slot].limited++;
                t.cells[slot].limit_bound = limit_bound(cp);
            }
            continue;
        }
        /* Kept and counted, so every table shows how many there were. */
        if (s->result->host.disturbed) {
            t.cells[slot].disturbed++;
            if (skip_disturbed(s, o))
                continue;
        }
        double v = sm_result_get(s->result, sm_export_headline(cp));
        if (isfinite(v))
            e[n_entries++] = (entry){slot, s->rep, i, v};
        /* The ratio's own metric, when it is not the headline, is kept apart. */
        if (ratio_metric(cp) != sm_export_headline(cp)) {
            double u = sm_result_get(s->result, ratio_metric(cp));
            if (isfinite(u))
                ea[n_aux++] = (entry){slot, s->rep, i, u};
        }
    }
    qsort(e, n_entries, sizeof *e, cmp_entry);
    qsort(ea, n_aux, sizeof *ea, cmp_entry);
    size_t n_slots = n_rows * n_cols;
    start = calloc(n_slots + 1, sizeof *start);
    if (start == NULL)
        goto out;
    for (size_t i = 0; i < n_entries; i++) {
        start[e[i].slot + 1]++;
        vals[i] = e[i].v;
    }
    for (size_t s = 0; s < n_slots; s++)
        start[s + 1] += start[s];
    start_aux = calloc(n_slots + 1, sizeof *start_aux);
    if (start_aux == NULL)
        goto out;
    for (size_t i = 0; i < n_aux; i++)
        start_aux[ea[i].slot + 1]++;
    for (size_t s = 0; s < n_slots; s++)
        start_aux[s + 1] += start_aux[s];

    for (size_t s = 0; s < n_slots; s++) {
        size_t n = start[s + 1] - start[s];
        if (n == 0)
            continue;
        if (sm_stats_summarize(vals + start[s], n, &t.cells[s].s) != 0)
            goto out;
        t.cells[s].have = true;
    }
    /* vals is free now; the ratios of one slot never outnumber its samples. */
    for (size_t r = 0; r < n_rows; r++) {
        for (size_t k = 0; k < n_ratios; k++) {
            size_t a = r * n_cols + ratio_tcp[k], b = r * n_cols + ratio_unix[k];
            const sm_params *cp = &sel[col_first[ratio_tcp[k]]]->params;
            bool aux = ratio_metric(cp) != sm_export_headline(cp);
            const entry *es = aux ? ea : e;
            const size_t *st = aux ? start_aux : start;
            size_t n =
                pair_ratios(es + st[a], st[a + 1] - st[a], es + st[b], st[b + 1] - st[b], vals);
            sm_table_cell *cell = sm_table_ratio_at(&t, r, k);
            if (n == 0)
                continue;
            if (sm_stats_summarize(vals, n, &cell->s) != 0)
                goto out;
            cell->have = true;
            cell->coarse = ratio_metric(cp) == SM_M_USER_S &&
                           (below_resolution(es + st[a], st[a + 1] - st[a]) ||
                            below_resolution(es + st[b], st[b + 1] - st[b]));
        }
    }
    for (size_t k = 0; k < n_loop; k++)
        if (fill_loop_ratios(&t, n_ratios + k, &loops[k], cells, n_cells, samples, n_samples, o,
                             sel, row_first, n_cols, e, start, local, vals) != 0)
            goto out;
    rc = 0;
out:
    if (rc == 0)
        *out = t;
    else {
        sm_table_fini(&t);
        sm_error_set(err, rc, "export: out of memory building the table of run %" PRIu64, run_id);
    }
    free(sel);
    free(sel_of);
    free(row_of);
    free(col_of);
    free(row_first);
    free(col_first);
    free(ratio_tcp);
    free(ratio_unix);
    free(e);
    free(ea);
    free(vals);
    free(start);
    free(start_aux);
    free(loops);
    free(local);
    return rc;
}
