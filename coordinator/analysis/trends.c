/* Trends and the fleet grid from ended runs' table and anomalies JSON (trends.h). */
#include "coordinator/analysis/trends.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/json.h"

/* Names listed at most in a note, so that a fleet of 1,000 hosts keeps it readable. */
#define NOTE_NAMES_MAX 24

/* Value columns and their cells, then ratio columns and theirs, as the table JSON names them. */
static const char *const KINDS[2][2] = {{"columns", "cells"}, {"ratio_columns", "ratios"}};

typedef struct parsed {
    cJSON *t[2];
    cJSON *an;
} parsed;

typedef struct strs {
    const char **v;
    size_t n, cap;
    bool oom;
} strs;

static void strs_add(strs *s, const char *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], x) == 0)
            return;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        const char **v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            s->oom = true;
            return;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = x;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0.0 / 0.0;
}

/* A count of a cell: 0 when absent or not a count. */
static double count(const cJSON *o, const char *k)
{
    const double v = num(o, k);
    return v > 0 ? v : 0;
}

/* A row or column index of a cell: -1 when absent, negative or too large for an int (a cast of
 * those would be undefined). */
static int idx(const cJSON *o, const char *k)
{
    const double v = num(o, k);
    return v >= 0 && v < 1e9 ? (int)v : -1;
}

static const char *str(const cJSON *o, const char *k)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static bool eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static parsed *parse_all(const sm_trend_run *runs, size_t n)
{
    parsed *p = calloc(n ? n : 1, sizeof *p);
    for (size_t i = 0; p && i < n; i++) {
        for (int k = 0; k < 2; k++)
            p[i].t[k] = runs[i].tables[k] ? cJSON_Parse(runs[i].tables[k]) : NULL;
        p[i].an = runs[i].anomalies ? cJSON_Parse(runs[i].anomalies) : NULL;
    }
    return p;
}

static void parsed_free(parsed *p, size_t n)
{
    for (size_t i = 0; p && i < n; i++) {
        cJSON_Delete(p[i].t[0]);
        cJSON_Delete(p[i].t[1]);
        cJSON_Delete(p[i].an);
    }
    free(p);
}

/* A cell with a median, failed jobs or disturbed ones is in its table (as compare.c counts). */
static bool present(const cJSON *cell)
{
    return num(cell, "n") > 0 || num(cell, "failed") > 0 || num(cell, "disturbed") > 0;
}

/* The cell of row r and column k in cells, NULL when the table has none. */
static const cJSON *cell_at(const cJSON *cells, int r, int k)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cells)
    {
        if (idx(c, "row") == r && idx(c, "column") == k)
            return c;
    }
    return NULL;
}

static int row_of(const cJSON *t, const char *host)
{
    int i = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(t, "rows"))
    {
        if (eq(cJSON_GetStringValue(r), host))
            return i;
        i++;
    }
    return -1;
}

/* Whether anomalies body an flags row `host` for test (and metric): the anomaly's own row, or
 * for a slow host every pair row in which the host has the role found slow. */
static bool flagged(const cJSON *an, const char *host, const char *test, const char *metric)
{
    const cJSON *a;
    cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(an, "anomalies"))
    {
        const char *am = str(a, "metric");
        if (!eq(str(a, "test"), test) || (metric && am && *am && strcmp(am, metric) != 0))
            continue;
        const char *ah = str(a, "host");
        if (eq(ah, host))
            return true;
        const char *arrow = strstr(host, "->");
        if (!ah || !arrow || !eq(str(a, "kind"), "slow-host"))
            continue;
        if (eq(str(a, "role"), "server") && strcmp(arrow + 2, ah) == 0)
            return true;
        if (eq(str(a, "role"), "client") && strlen(ah) == (size_t)(arrow - host) &&
            strncmp(host, ah, strlen(ah)) == 0)
            return true;
    }
    return false;
}

/* "a, b, c (+N more)" into buf. */
static void list_text(const strs *s, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < s->n && i < NOTE_NAMES_MAX && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", s->v[i]);
    if (s->n > NOTE_NAMES_MAX && len < cap)
        snprintf(buf + len, cap - len, " (+%zu more)", s->n - NOTE_NAMES_MAX);
    if (s->n == 0)
        snprintf(buf, cap, "none");
}

typedef struct point {
    size_t run;
    const cJSON *cell;
    bool flagged;
} point;

static cJSON *point_json(const sm_trend_run *run, const point *pt)
{
    cJSON *o = cJSON_CreateObject();
    const char *stopped = str(pt->cell, "stopped");
    bool ok = o && sm_json_put_u64_str(o, "run", run->id) &&
              sm_json_put_str(o, "run_name", run->name ? run->name : "") &&
              sm_json_put(o, "finished_ms", cJSON_CreateNumber((double)run->finished_ms)) &&
              sm_json_put_double(o, "median", num(pt->cell, "median")) &&
              sm_json_put_double(o, "ci_lo", num(pt->cell, "ci95_low")) &&
              sm_json_put_double(o, "ci_hi", num(pt->cell, "ci95_high")) &&
              sm_json_put_double(o, "n", num(pt->cell, "n")) &&
              sm_json_put_bool(o, "flagged", pt->flagged) &&
              (!str(pt->cell, "verdict") ||
               sm_json_put_str(o, "verdict", pt->flagged ? "flagged" : str(pt->cell, "verdict"))) &&
              (!stopped || !*stopped || sm_json_put_str(o, "stopped", stopped));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* The unit of the first column of test (and metric, when not NULL) in the runs' tables. */
static const char *unit_of(const parsed *p, size_t n, const char *test, const char *metric)
{
    for (size_t i = 0; i < n; i++)
        for (int t = 0; t < 2; t++)
            for (int k = 0; k < 2; k++) {
                const cJSON *col;
                cJSON_ArrayForEach(col, cJSON_GetObjectItemCaseSensitive(p[i].t[t], KINDS[k][0]))
                {
                    if (eq(str(col, "label"), test) && (!metric || eq(str(col, "metric"), metric)))
                        return str(col, "unit");
                }
            }
    return NULL;
}

/* The metrics of test's columns in every table, and which one q asks for. 0, or SM_EINVAL
 * with the reason. */
static int pick_metric(const sm_trend_query *q, const parsed *p, size_t n, strs *metrics,
                       const char **metric, sm_error *err)
{
    for (size_t i = 0; i < n; i++)
        for (int t = 0; t < 2; t++)
            for (int k = 0; k < 2; k++) {
                const cJSON *col;
                cJSON_ArrayForEach(col, cJSON_GetObjectItemCaseSensitive(p[i].t[t], KINDS[k][0]))
                {
                    if (eq(str(col, "label"), q->test))
                        strs_add(metrics, str(col, "metric"));
                }
            }
    char list[512];
    list_text(metrics, list, sizeof list);
    *metric = q->metric;
    if (q->metric && metrics->n > 0) {
        for (size_t i = 0; i < metrics->n; i++)
            if (strcmp(metrics->v[i], q->metric) == 0)
                return 0;
        sm_error_set(err, SM_EINVAL, "metric: test '%s' has no metric '%s'; its metrics: %s",
                     q->test, q->metric, list);
        return SM_EINVAL;
    }
    if (!q->metric && metrics->n > 1) {
        sm_error_set(err, SM_EINVAL, "metric: test '%s' has several metrics; give one of: %s",
                     q->test, list);
        return SM_EINVAL;
    }
    if (!q->metric && metrics->n == 1)
        *metric = metrics->v[0];
    return 0;
}

/* What a pass over the runs found for one query: the points, and for the note when there is
 * none, the hosts the runs have, the tests the host has, and how many runs have the cell. */
typedef struct scan {
    point *pts;
    size_t npts, with_cell;
    size_t unjudged;          /* runs whose cell has no median: every job disturbed or failed */
    double disturbed, failed; /* their jobs set aside and failed */
    strs hosts, tests;
} scan;

/* Run i's point for q and metric, from its first table that has the cell (one point per run),
 * noting the tables' hosts and the host's tests on the way. */
static void scan_run(const sm_trend_query *q, const sm_trend_run *runs, const parsed *p, size_t i,
                     const char *metric, scan *s)
{
    bool got = false;
    for (int t = 0; t < 2 && !got; t++) {
        const cJSON *tab = p[i].t[t];
        const cJSON *r;
        cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(tab, "rows"))
            strs_add(&s->hosts, cJSON_GetStringValue(r));
        const int row = tab ? row_of(tab, q->host) : -1;
        if (row < 0)
            continue;
        for (int k = 0; k < 2 && !got; k++) {
            const cJSON *cols = cJSON_GetObjectItemCaseSensitive(tab, KINDS[k][0]);
            const cJSON *cells = cJSON_GetObjectItemCaseSensitive(tab, KINDS[k][1]);
            const cJSON *c;
            cJSON_ArrayForEach(c, cells)
            {
                const cJSON *col = cJSON_GetArrayItem(cols, idx(c, "column"));
                if (idx(c, "row") == row && num(c, "n") > 0)
                    strs_add(&s->tests, str(col, "label"));
            }
            int ci = 0;
            const cJSON *col;
            cJSON_ArrayForEach(col, cols)
            {
                if (!got && eq(str(col, "label"), q->test) &&
                    (!metric || eq(str(col, "metric"), metric))) {
                    const cJSON *cell = cell_at(cells, row, ci);
                    if (cell && !(num(cell, "n") > 0) && present(cell)) {
                        got = true;
                        s->unjudged++;
                        s->disturbed += count(cell, "disturbed");
                        s->failed += count(cell, "failed");
                    } else if (cell && num(cell, "n") > 0) {
                        got = true;
                        s->with_cell++;
                        if (runs[i].finished_ms >= q->from_ms && runs[i].finished_ms <= q->to_ms)
                            s->pts[s->npts++] =
                                (point){i, cell, flagged(p[i].an, q->host, q->test, metric)};
                    }
                }
                ci++;
            }
        }
    }
}

/* Why s has no point: the host is in no run, the host lacks the test, or no run with the cell
 * finished in [from, to]. Returns what no ended run has, "host" or "test", or NULL when the
 * cell exists and has no point to show. */
static const char *no_point_note(const sm_trend_query *q, const scan *s, char *note, size_t cap)
{
    char list[1536];
    bool host_known = false;
    for (size_t i = 0; i < s->hosts.n; i++)
        host_known = host_known || strcmp(s->hosts.v[i], q->host) == 0;
    if (s->hosts.n == 0) {
        snprintf(note, cap, "no ended run has host '%s', nor any %s row", q->host,
                 strstr(q->host, "->") ? "client->server" : "host");
        return "host";
    }
    if (!host_known) {
        list_text(&s->hosts, list, sizeof list);
        snprintf(note, cap, "no ended run has host '%s'; the hosts they have: %s", q->host, list);
        return "host";
    }
    if (s->with_cell == 0 && s->unjudged > 0) {
        snprintf(note, cap,
                 "%zu ended run%s %s test '%s' for host '%s', none with a clean sample: "
                 "%.0f job%s set aside as disturbed, %.0f failed%s",
                 s->unjudged, s->unjudged == 1 ? "" : "s", s->unjudged == 1 ? "has" : "have",
                 q->test, q->host, s->disturbed, s->disturbed == 1 ? "" : "s", s->failed,
                 s->disturbed > 0 ? "; disturbed=include counts the disturbed ones" : "");
    } else if (s->with_cell == 0) {
        list_text(&s->tests, list, sizeof list);
        snprintf(note, cap, "no ended run has test '%s' for host '%s'; the tests it has: %s",
                 q->test, q->host, list);
        return "test";
    } else {
        snprintf(note, cap,
                 "none of the %zu ended runs with this cell finished between from and to",
                 s->with_cell);
    }
    return NULL;
}

/* o's "points": the latest q->limit of s's points. false when out of memory. */
static bool put_points(cJSON *o, const sm_trend_query *q, const sm_trend_run *runs, const scan *s)
{
    cJSON *arr = cJSON_CreateArray();
    bool ok = arr != NULL;
    const size_t first = s->npts > q->limit ? s->npts - q->limit : 0;
    for (size_t i = first; ok && i < s->npts; i++)
        ok = sm_json_append(arr, point_json(&runs[s->pts[i].run], &s->pts[i]));
    if (!ok) {
        cJSON_Delete(arr);
        return false;
    }
    return sm_json_put(o, "points", arr); /* which deletes arr when it fails */
}

int sm_trends_json(const sm_trend_query *q, const sm_trend_run *runs, size_t n, char **json,
                   sm_error *err)
{
    parsed *p = parse_all(runs, n);
    scan s = {.pts = calloc(2 * n + 1, sizeof *s.pts)};
    strs metrics = {0};
    const char *metric = NULL, *unit = NULL;
    int rc = SM_ENOMEM;
    if (!p || !s.pts)
        goto out;
    rc = pick_metric(q, p, n, &metrics, &metric, err);
    if (rc != 0)
        goto out;
    unit = unit_of(p, n, q->test, metric);
    for (size_t i = 0; i < n; i++)
        scan_run(q, runs, p, i, metric, &s);
    rc = SM_ENOMEM;
    if (s.hosts.oom || s.tests.oom || metrics.oom)
        goto out;
    cJSON *o = cJSON_CreateObject();
    bool ok = o && sm_json_put_str(o, "host", q->host) && sm_json_put_str(o, "test", q->test) &&
              sm_json_put(o, "metric", metric ? cJSON_CreateString(metric) : cJSON_CreateNull()) &&
              sm_json_put(o, "unit", unit ? cJSON_CreateString(unit) : cJSON_CreateNull()) &&
              put_points(o, q, runs, &s) && sm_json_put_str(o, "rule", SM_TRENDS_RULE);
    if (ok && s.npts == 0) {
        char note[2048];
        const char *unknown = no_point_note(q, &s, note, sizeof note);
        ok = sm_json_put_str(o, "note", note) &&
             (!unknown || sm_json_put_str(o, "unknown", unknown));
    }
    *json = sm_json_finish(o, ok, 0, "trends", err);
    rc = *json ? 0 : SM_ENOMEM;
out:
    free(s.hosts.v);
    free(s.tests.v);
    free(metrics.v);
    free(s.pts);
    parsed_free(p, n);
    return rc;
}

/* ---- the grid ---- */

/* Hosts before pairs, each sorted; tests sorted. */
static int host_cmp(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    const bool px = strstr(x, "->") != NULL, py = strstr(y, "->") != NULL;
    return px != py ? (px ? 1 : -1) : strcmp(x, y);
}

static int test_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

typedef struct grid_cell {
    bool set;
    size_t run;
    const cJSON *cell;
    const cJSON *peers; /* the cells of its table, among which its column's are the fleet's */
    const char *metric, *unit;
    bool flagged;
} grid_cell;

/* The cell's verdict in its run: flagged when the run's analysis flags it (regressions
 * included); else the verdict its table gives it ("ok", "inconclusive", "failed"); a table of
 * before verdicts gives "ok" for a median and "failed" for only failed jobs. "no data" only
 * where no run has the cell. */
static const char *verdict(const grid_cell *g)
{
    if (!g->set)
        return "no data";
    const char *v = str(g->cell, "verdict");
    if (g->flagged || eq(v, "flagged"))
        return "flagged";
    if (eq(v, "ok") || eq(v, "inconclusive") || eq(v, "failed"))
        return v;
    if (num(g->cell, "n") > 0)
        return "ok";
    return num(g->cell, "failed") > 0 ? "failed" : "inconclusive";
}

static int dbl_cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The fleet's figure for g's test in g's run: the median of the medians of every row of its
 * table in its column (*rows of them); NaN when none has one (or out of memory). */
static double fleet_median(const grid_cell *g, size_t *rows)
{
    *rows = 0;
    const int col = idx(g->cell, "column");
    const int n = cJSON_GetArraySize(g->peers);
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v)
        return 0.0 / 0.0;
    const cJSON *c;
    cJSON_ArrayForEach(c, g->peers)
    {
        const double m = num(c, "median");
        if (idx(c, "column") == col && idx(c, "row") >= 0 && num(c, "n") > 0 && m == m)
            v[(*rows)++] = m;
    }
    double med = 0.0 / 0.0;
    if (*rows) {
        qsort(v, *rows, sizeof *v, dbl_cmp);
        med = *rows % 2 ? v[*rows / 2] : (v[*rows / 2 - 1] + v[*rows / 2]) / 2;
    }
    free(v);
    return med;
}

static cJSON *grid_cell_json(const sm_trend_run *runs, const char *host, const char *test,
                             const grid_cell *g)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o && sm_json_put_str(o, "host", host) && sm_json_put_str(o, "test", test);
    if (ok && g->set)
        ok = sm_json_put_u64_str(o, "run", runs[g->run].id) &&
             sm_json_put(o, "finished_ms", cJSON_CreateNumber((double)runs[g->run].finished_ms));
    else if (ok)
        ok = cJSON_AddNullToObject(o, "run") && cJSON_AddNullToObject(o, "finished_ms");
    /* The why explains a judgement not made: a cell flagged against its baseline run (a
     * regression, which needs no fleet) was judged, whatever its table says of the fleet. */
    const char *v = verdict(g);
    const char *why = g->set && !eq(v, "flagged") && !eq(v, "ok") ? str(g->cell, "why") : NULL;
    ok = ok && sm_json_put_str(o, "verdict", v) &&
         sm_json_put(o, "why", why ? cJSON_CreateString(why) : cJSON_CreateNull()) &&
         sm_json_put_double(o, "median", g->set ? num(g->cell, "median") : 0.0 / 0.0) &&
         sm_json_put(o, "metric", g->metric ? cJSON_CreateString(g->metric) : cJSON_CreateNull()) &&
         sm_json_put(o, "unit", g->unit ? cJSON_CreateString(g->unit) : cJSON_CreateNull());
    /* What the host's figure stands against: its run's median of the same test over every row
     * of the table (hosts, or pairs for a pair row), and how many rows that is. */
    size_t rows = 0;
    const double fleet = g->set ? fleet_median(g, &rows) : 0.0 / 0.0;
    ok = ok && sm_json_put_double(o, "fleet_median", fleet) &&
         sm_json_put(o, "fleet_rows", cJSON_CreateNumber((double)rows));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *names_json(const strs *s)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < s->n; i++)
        if (!sm_json_append(a, cJSON_CreateString(s->v[i]))) {
            cJSON_Delete(a);
            return NULL;
        }
    return a;
}

/* Calls fn on every cell present in run i's tables, in table order (value columns, then
 * ratio columns). */
typedef void (*cell_fn)(void *arg, size_t run, const char *host, const cJSON *col,
                        const cJSON *cell, const cJSON *cells);

static void each_cell(const parsed *p, size_t i, cell_fn fn, void *arg)
{
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 2; k++) {
            const cJSON *tab = p[i].t[t];
            const cJSON *rows = cJSON_GetObjectItemCaseSensitive(tab, "rows");
            const cJSON *cols = cJSON_GetObjectItemCaseSensitive(tab, KINDS[k][0]);
            const cJSON *cells = cJSON_GetObjectItemCaseSensitive(tab, KINDS[k][1]);
            const cJSON *c;
            cJSON_ArrayForEach(c, cells)
            {
                const int r = idx(c, "row"), col = idx(c, "column");
                if (r < 0 || col < 0 || !present(c))
                    continue;
                const char *host = cJSON_GetStringValue(cJSON_GetArrayItem(rows, r));
                const cJSON *cj = cJSON_GetArrayItem(cols, col);
                if (host && str(cj, "label"))
                    fn(arg, i, host, cj, c, cells);
            }
        }
}

typedef struct grid {
    strs hosts, tests;
    grid_cell *g;
    const parsed *p;
} grid;

static void collect(void *arg, size_t run, const char *host, const cJSON *col, const cJSON *cell,
                    const cJSON *cells)
{
    (void)run;
    (void)cell;
    (void)cells;
    grid *gr = arg;
    strs_add(&gr->hosts, host);
    strs_add(&gr->tests, str(col, "label"));
}

static void fill(void *arg, size_t run, const char *host, const cJSON *col, const cJSON *cell,
                 const cJSON *cells)
{
    grid *gr = arg;
    const char *test = str(col, "label");
    const char **h = bsearch(&host, gr->hosts.v, gr->hosts.n, sizeof *h, host_cmp);
    const char **t = bsearch(&test, gr->tests.v, gr->tests.n, sizeof *t, test_cmp);
    if (!h || !t)
        return;
    grid_cell *g = &gr->g[(size_t)(h - gr->hosts.v) * gr->tests.n + (size_t)(t - gr->tests.v)];
    if (g->set)
        return; /* a newer run, or an earlier column of the same label, has it */
    const char *metric = str(col, "metric");
    *g = (grid_cell){true,
                     run,
                     cell,
                     cells,
                     metric,
                     str(col, "unit"),
                     flagged(gr->p[run].an, host, test, metric)};
}

char *sm_grid_json(const sm_trend_run *runs, size_t n)
{
    parsed *p = parse_all(runs, n);
    grid gr = {.p = p};
    char *json = NULL;
    if (!p)
        goto out;
    for (size_t i = 0; i < n; i++)
        each_cell(p, i, collect, &gr);
    if (gr.hosts.oom || gr.tests.oom)
        goto out;
    if (gr.hosts.n)
        qsort(gr.hosts.v, gr.hosts.n, sizeof *gr.hosts.v, host_cmp);
    if (gr.tests.n)
        qsort(gr.tests.v, gr.tests.n, sizeof *gr.tests.v, test_cmp);
    gr.g = calloc(gr.hosts.n * gr.tests.n + 1, sizeof *gr.g);
    if (!gr.g)
        goto out;
    for (size_t i = n; i-- > 0;)
        each_cell(p, i, fill, &gr);
    cJSON *o = cJSON_CreateObject();
    cJSON *cells = o ? cJSON_CreateArray() : NULL;
    bool ok = cells && sm_json_put(o, "hosts", names_json(&gr.hosts)) &&
              sm_json_put(o, "tests", names_json(&gr.tests));
    for (size_t h = 0; ok && h < gr.hosts.n; h++)
        for (size_t t = 0; ok && t < gr.tests.n; t++)
            ok = sm_json_append(cells, grid_cell_json(runs, gr.hosts.v[h], gr.tests.v[t],
                                                      &gr.g[h * gr.tests.n + t]));
    if (ok)
        ok = sm_json_put(o, "cells", cells);
    else
        cJSON_Delete(cells);
    ok = ok && sm_json_put_str(o, "rule",
                               "each cell: the latest ended run that has it; flagged: its "
                               "analysis flags the host for the test; ok: judged, nothing stands "
                               "apart; inconclusive: measured but not judged (why says why: "
                               "disturbed samples, too few, no fleet to compare with); failed: "
                               "only failed jobs; no data: no run has it");
    json = sm_json_finish(o, ok, 0, "grid", NULL);
out:
    free(gr.g);
    free(gr.hosts.v);
    free(gr.tests.v);
    parsed_free(p, n);
    return json;
}
