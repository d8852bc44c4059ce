/* GET /metrics: the coordinator's counters, its agents, and the latest finished run's cells (and
 * ratio cells) per run name, in the Prometheus text format (promtext.h). docs/metrics.md names
 * every family. */
#include "coordinator/api/api.h"
#include "coordinator/api/internal.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/analysis/promtext.h"
#include "proto/clock.h"

/* The runs looked at for the latest finished one of each name, newest first. */
#define METRICS_RUNS_SCAN 1000
/* Run names with cells, and cells in all, written at most: a scrape stays bounded whatever
 * the store holds. */
#define METRICS_RUN_NAMES_MAX 16
#define METRICS_CELLS_MAX     2000

static void counter(sm_prom *p, const char *name, const char *help, double v)
{
    sm_prom_family(p, name, "counter", help);
    sm_prom_sample(p, name, NULL, NULL, 0, v);
}

static void gauge(sm_prom *p, const char *name, const char *help, double v)
{
    sm_prom_family(p, name, "gauge", help);
    sm_prom_sample(p, name, NULL, NULL, 0, v);
}

static void coordinator_counters(sm_api_ctx *a, sm_prom *p)
{
    sm_control_stats s;
    sm_control_get_stats(a->ctl, &s);
    counter(p, "sockmatrix_polls_total", "Agent polls verified and handled.", (double)s.polls);
    counter(p, "sockmatrix_results_stored_total", "Results stored.", (double)s.results_stored);
    counter(p, "sockmatrix_results_duplicate_total", "Results sent again, already stored.",
            (double)s.results_duplicate);
    counter(p, "sockmatrix_results_orphan_total", "Results of jobs the store does not hold.",
            (double)s.results_orphan);
    counter(p, "sockmatrix_jobs_dispatched_total", "Jobs handed to agents.",
            (double)s.jobs_dispatched);
    const uint64_t *w = a->ws_counters;
    gauge(p, "sockmatrix_ws_clients", "Dashboard WebSocket clients connected.",
          w ? (double)w[0] : 0);

    /* The same reasons, by the same names, as /healthz's "rejected". */
    sm_prom_family(p, "sockmatrix_rejects_total", "counter",
                   "Agent messages and polls refused, by reason.");
    static const char *const key[] = {"reason"};
    for (int r = 1; r < SM_REJ__COUNT; r++) {
        const char *val[] = {sm_reject_name((sm_reject)r)};
        sm_prom_sample(p, "sockmatrix_rejects_total", key, val, 1,
                       a->rejects ? (double)sm_rejects_count(a->rejects, (sm_reject)r) : 0);
    }
    const struct {
        const char *name;
        uint64_t v;
    } pol[] = {{"wrong-host", s.results_wrong_host},
               {"agents-cap", s.refused_agents_cap},
               {"data-addr", s.refused_data_addr},
               {"reserved-name", s.refused_name}};
    for (size_t i = 0; i < sizeof pol / sizeof pol[0]; i++) {
        const char *val[] = {pol[i].name};
        sm_prom_sample(p, "sockmatrix_rejects_total", key, val, 1, (double)pol[i].v);
    }

    char msg[256];
    int64_t at = 0;
    gauge(p, "sockmatrix_store_failing",
          "1 while the store's commits fail (results are lost), else 0.",
          sm_store_failing(a->st, sm_wall_ms(), msg, sizeof msg, &at) ? 1 : 0);
}

static void agents(sm_api_ctx *a, sm_prom *p)
{
    sm_agent_row *rows = NULL;
    size_t n = 0;
    sm_error err = {0};
    if (sm_store_agents_list(a->st, &rows, &n, &err) != 0) {
        sm_prom_comment(p, "agents: the store could not be read");
        return;
    }
    sm_agent_status *st = calloc(n ? n : 1, sizeof *st);
    int64_t *seen = calloc(n ? n : 1, sizeof *seen);
    if (!st || !seen) {
        p->oom = true;
        goto out;
    }
    size_t by_status[SM_AGENT_LOST + 1] = {0};
    for (size_t i = 0; i < n; i++) {
        st[i] = rows[i].status;
        seen[i] = rows[i].last_seen_ms;
        sm_control_agent_live(a->ctl, rows[i].name, &st[i], &seen[i]);
        if ((size_t)st[i] <= SM_AGENT_LOST)
            by_status[st[i]]++;
    }
    sm_prom_family(p, "sockmatrix_agents", "gauge", "Registered agents by status.");
    static const char *const skey[] = {"status"};
    for (int s = SM_AGENT_ONLINE; s <= SM_AGENT_LOST; s++) {
        const char *val[] = {sm_agent_status_name((sm_agent_status)s)};
        sm_prom_sample(p, "sockmatrix_agents", skey, val, 1, (double)by_status[s]);
    }
    static const char *const akey[] = {"agent"};
    sm_prom_family(p, "sockmatrix_agent_up", "gauge",
                   "1 while the agent polls (online or busy), 0 once lost.");
    for (size_t i = 0; i < n; i++) {
        const char *val[] = {rows[i].name};
        sm_prom_sample(p, "sockmatrix_agent_up", akey, val, 1, st[i] != SM_AGENT_LOST ? 1 : 0);
    }
    sm_prom_family(p, "sockmatrix_agent_last_seen_age_seconds", "gauge",
                   "Seconds since the agent was last heard.");
    const int64_t now = sm_wall_ms();
    for (size_t i = 0; i < n; i++) {
        const char *val[] = {rows[i].name};
        const int64_t age = now > seen[i] ? now - seen[i] : 0;
        sm_prom_sample(p, "sockmatrix_agent_last_seen_age_seconds", akey, val, 1,
                       (double)age / 1000.0);
    }
out:
    free(st);
    free(seen);
    sm_store_agents_free(rows, n);
}

/* The jobs of stored runs that ended ok and failed for good. */
static void run_jobs(sm_prom *p, const sm_run_row *runs, size_t n)
{
    double done = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        done += runs[i].done;
        failed += runs[i].failed;
    }
    counter(p, "sockmatrix_jobs_done_total", "Jobs of stored runs that ended ok.", done);
    counter(p, "sockmatrix_jobs_failed_total", "Jobs of stored runs that failed after their retry.",
            failed);
}

static const char *const CELL_FAMILIES[][2] = {
    {"sockmatrix_cell_median", "Median of the cell in the latest finished run of its name."},
    {"sockmatrix_cell_ci95_low", "Lower bound of the median's 95% confidence interval."},
    {"sockmatrix_cell_ci95_high", "Upper bound of the median's 95% confidence interval."},
    {"sockmatrix_cell_flagged", "1 when the analysis flags the cell's host in that run, else 0."},
    {"sockmatrix_cell_run_id", "Id of the run the cell's figures come from."},
    {"sockmatrix_cell_verdict",
     "1 for the cell's verdict in that run (label verdict: ok, flagged, inconclusive, failed), "
     "0 for the others; a cell measured but not judged is inconclusive, never ok."},
};
enum {
    CELL_F_MEDIAN,
    CELL_F_LOW,
    CELL_F_HIGH,
    CELL_F_FLAGGED,
    CELL_F_RUN,
    CELL_F_VERDICT,
    CELL_F__COUNT
};

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0.0 / 0.0;
}

static const char *const VERDICTS[] = {"ok", "flagged", "inconclusive", "failed"};

/* The cell's verdict as its table gives it; a table of before verdicts: ok with a value. */
static const char *cell_verdict(const cJSON *c, bool has_value)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "verdict"));
    for (size_t i = 0; v && i < sizeof VERDICTS / sizeof *VERDICTS; i++)
        if (strcmp(v, VERDICTS[i]) == 0)
            return v;
    if (v && strcmp(v, "none") == 0)
        return NULL;
    if (has_value)
        return "ok";
    return num(c, "failed") > 0 && !(num(c, "disturbed") > 0) ? "failed" : "inconclusive";
}

/* One sample per verdict, 1 for the cell's own (a state set). */
static void verdict_samples(sm_prom *p, const char *const *keys, const char *const *vals,
                            const char *verdict)
{
    const char *k[6] = {keys[0], keys[1], keys[2], keys[3], keys[4], "verdict"};
    const char *v[6] = {vals[0], vals[1], vals[2], vals[3], vals[4], NULL};
    for (size_t i = 0; i < sizeof VERDICTS / sizeof *VERDICTS; i++) {
        v[5] = VERDICTS[i];
        sm_prom_sample(p, CELL_FAMILIES[CELL_F_VERDICT][0], k, v, 6,
                       strcmp(verdict, VERDICTS[i]) == 0);
    }
}

/* One run's table (the API's own JSON, cached once the run ended) as samples of family f:
 * its cells, then its ratio cells (metric "ratio", unit "x", test the ratio column's label);
 * returns the cells written, at most room. */
static size_t run_cells(sm_prom *p, const sm_metrics_table *run, const cJSON *t, int f, size_t room)
{
    static const struct {
        const char *cells, *cols;
        bool ratio;
    } parts[] = {{"cells", "columns", false}, {"ratios", "ratio_columns", true}};
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(t, "rows");
    const cJSON *flags = cJSON_GetObjectItemCaseSensitive(t, "flags");
    const int nr = cJSON_GetArraySize(rows);
    size_t written = 0;
    for (size_t k = 0; k < sizeof parts / sizeof *parts; k++) {
        const cJSON *cols = cJSON_GetObjectItemCaseSensitive(t, parts[k].cols);
        const cJSON *cells = cJSON_GetObjectItemCaseSensitive(t, parts[k].cells);
        const int ncol = cJSON_GetArraySize(cols);
        const cJSON *c;
        cJSON_ArrayForEach(c, cells)
        {
            if (written == room)
                return written;
            const double r = num(c, "row"), ci = num(c, "column");
            if (!(r >= 0 && r < nr && ci >= 0 && ci < ncol))
                continue;
            const cJSON *col = cJSON_GetArrayItem(cols, (int)ci);
            const char *host = cJSON_GetStringValue(cJSON_GetArrayItem(rows, (int)r));
            const char *test = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(col, "label"));
            const char *metric =
                parts[k].ratio
                    ? "ratio"
                    : cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(col, "metric"));
            const char *unit =
                parts[k].ratio
                    ? "x"
                    : cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(col, "unit"));
            const bool has_value = num(c, "n") > 0;
            const char *verdict = cell_verdict(c, has_value);
            if (!host || !test || !metric || !unit)
                continue;
            /* No value: no sample, rather than a NaN series; but its verdict all the same. */
            if (f == CELL_F_VERDICT ? verdict == NULL : !has_value)
                continue;
            written++;
            const char *keys[] = {"run_name", "host", "test", "metric", "unit"};
            const char *vals[] = {run->run_name, host, test, metric, unit};
            if (f == CELL_F_VERDICT) {
                verdict_samples(p, keys, vals, verdict);
                continue;
            }
            double v = 0;
            switch (f) {
            case CELL_F_MEDIAN:
                v = num(c, "median");
                break;
            case CELL_F_LOW:
                v = num(c, "ci95_low");
                break;
            case CELL_F_HIGH:
                v = num(c, "ci95_high");
                break;
            case CELL_F_FLAGGED: {
                const cJSON *fl;
                cJSON_ArrayForEach(fl, flags) v = num(fl, "row") == r ? 1 : v;
                break;
            }
            default:
                v = (double)run->run_id;
                break;
            }
            /* The run id is a gauge of its own: as a label it would start new series each
             * run. */
            sm_prom_sample(p, CELL_FAMILIES[f][0], keys, vals, f == CELL_F_RUN ? 4 : 5, v);
        }
    }
    return written;
}

/* The latest run of each name that finished (done or failed, not cancelled), among the
 * newest METRICS_RUNS_SCAN; at most METRICS_RUN_NAMES_MAX of them, newest first. */
static size_t latest_by_name(const sm_run_row *runs, size_t n, size_t *pick)
{
    size_t np = 0;
    for (size_t i = 0; i < n && i < METRICS_RUNS_SCAN && np < METRICS_RUN_NAMES_MAX; i++) {
        if (runs[i].state != SM_RUN_DONE && runs[i].state != SM_RUN_FAILED)
            continue;
        size_t k = 0;
        while (k < np && strcmp(runs[pick[k]].name, runs[i].name) != 0)
            k++;
        if (k == np)
            pick[np++] = i;
    }
    return np;
}

void sm_api_metrics_cells(sm_prom *p, const sm_metrics_table *t, size_t n, size_t max_cells)
{
    cJSON **tables = calloc(n ? n : 1, sizeof *tables);
    if (!tables) {
        p->oom = true;
        return;
    }
    for (size_t i = 0; i < n; i++)
        tables[i] = t[i].json ? cJSON_Parse(t[i].json) : NULL;
    char note[160];
    snprintf(note, sizeof note,
             "cells: the latest finished run of each name, at most %d names and %zu cells",
             METRICS_RUN_NAMES_MAX, max_cells);
    sm_prom_comment(p, note);
    for (int f = 0; f < CELL_F__COUNT; f++) {
        sm_prom_family(p, CELL_FAMILIES[f][0], "gauge", CELL_FAMILIES[f][1]);
        size_t room = max_cells;
        for (size_t i = 0; i < n && room; i++)
            if (tables[i])
                room -= run_cells(p, &t[i], tables[i], f, room);
    }
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(tables[i]);
    free(tables);
}

static void cells(sm_api_ctx *a, sm_prom *p, const sm_run_row *runs, size_t n)
{
    size_t pick[METRICS_RUN_NAMES_MAX];
    const size_t np = latest_by_name(runs, n, pick);
    sm_metrics_table t[METRICS_RUN_NAMES_MAX] = {0};
    char *bodies[METRICS_RUN_NAMES_MAX] = {0};
    for (size_t i = 0; i < np; i++) {
        const sm_run_row *r = &runs[pick[i]];
        bodies[i] = sm_reports_body(&a->reports, r->id, SM_REPORT_TABLE, "format=json");
        t[i] = (sm_metrics_table){r->name, r->id, bodies[i]};
    }
    sm_api_metrics_cells(p, t, np, METRICS_CELLS_MAX);
    for (size_t i = 0; i < np; i++)
        free(bodies[i]);
}

char *sm_api_metrics_cells_text(sm_api_ctx *a)
{
    sm_prom p;
    sm_prom_init(&p);
    sm_run_row *runs = NULL;
    size_t n = 0;
    sm_error err = {0};
    if (sm_store_runs_list(a->st, SIZE_MAX, &runs, &n, &err) == 0)
        cells(a, &p, runs, n);
    else
        sm_prom_comment(&p, "cells: the store could not be read");
    sm_store_runs_free(runs, n);
    size_t len;
    return sm_prom_take(&p, &len);
}

/* The loop's part into p: counters, agents, the runs' jobs. */
static void loop_part(sm_api_ctx *a, sm_prom *p, bool with_cells)
{
    coordinator_counters(a, p);
    agents(a, p);
    sm_run_row *runs = NULL;
    size_t n = 0;
    sm_error err = {0};
    if (sm_store_runs_list(a->st, SIZE_MAX, &runs, &n, &err) == 0) {
        run_jobs(p, runs, n);
        if (with_cells)
            cells(a, p, runs, n);
    } else {
        sm_prom_comment(p, "runs: the store could not be read");
    }
    sm_store_runs_free(runs, n);
}

char *sm_api_metrics_loop_text(sm_api_ctx *a)
{
    sm_prom p;
    sm_prom_init(&p);
    loop_part(a, &p, false);
    size_t len;
    return sm_prom_take(&p, &len);
}

int sm_api_get_metrics(sm_api_ctx *a, char **resp, size_t *len, const char **ctype)
{
    sm_prom p;
    sm_prom_init(&p);
    loop_part(a, &p, true);
    char *text = sm_prom_take(&p, len);
    if (!text)
        return sm_api_reply_error(resp, len, 500, "out of memory", NULL);
    *ctype = SM_PROM_CTYPE;
    *resp = text;
    return 200;
}
