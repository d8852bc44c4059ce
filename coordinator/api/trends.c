/* HTTP routes of trends and the fleet grid: one host's cell of one test across ended runs, and
 * every host x test's latest verdict. The runs' tables and anomalies come from the report cache
 * (reports.c), so an ended run's are computed once; analysis/trends.c builds the answers. */
#include "coordinator/api/api.h"
#include "coordinator/api/internal.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coordinator/analysis/table.h"
#include "coordinator/analysis/trends.h"

/* Ended runs a trend looks at (newest first, within from..to), and the grid's: bounds on what
 * one request may compute when the cache does not hold the runs' reports. */
#define TRENDS_RUNS_SCAN 1000
#define GRID_RUNS_SCAN   100

/* name=... from query as sm_query_get reads it, an empty value being as bad as a bad
 * escape: 1 present, 0 absent, -1 bad. */
static int param(const char *query, const char *name, char *buf, size_t cap)
{
    const int r = sm_query_get(query, name, buf, cap);
    return r == 1 && buf[0] == '\0' ? -1 : r;
}

static int cmp_id(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The ended runs, newest first, finished within [from, to], at most max: indexes into rows.
 * Experiments are left out: their treated jobs are not the host as it is, and their controls
 * would stand for the host's latest verdict in place of the run they explain. -1 when the
 * store cannot say which runs are experiments (err). */
static long ended_runs(sm_api_ctx *a, const sm_run_row *rows, size_t n, int64_t from, int64_t to,
                       size_t max, size_t *pick, sm_error *err)
{
    uint64_t *xp = calloc(n ? n : 1, sizeof *xp);
    size_t nx = 0, np = 0;
    if (xp == NULL) {
        sm_error_set(err, SM_ENOMEM, "out of memory");
        return -1;
    }
    if (sm_store_experiment_runs(a->st, xp, n, &nx, err) != 0) {
        free(xp);
        return -1;
    }
    for (size_t i = 0; i < n && np < max; i++)
        if (rows[i].state != SM_RUN_RUNNING && rows[i].finished_ms >= from &&
            rows[i].finished_ms <= to && !bsearch(&rows[i].id, xp, nx, sizeof *xp, cmp_id))
            pick[np++] = i;
    free(xp);
    return (long)np;
}

/* The reports of the picked runs, oldest first, into runs[] (bodies owned by the caller: free
 * each tables[k] and anomalies). queries: the table queries (NULL entries skipped). A pair
 * table is asked for only when the hosts table of the run holds hosts. an_query: the
 * anomalies' query (NULL: the default report). */
static void load_runs(sm_api_ctx *a, const sm_run_row *rows, const size_t *pick, size_t np,
                      const char *const queries[2], const char *an_query, sm_trend_run *runs)
{
    for (size_t j = 0; j < np; j++) {
        const sm_run_row *r = &rows[pick[np - 1 - j]];
        sm_trend_run *t = &runs[j];
        *t = (sm_trend_run){r->id, r->name, r->finished_ms, {NULL, NULL}, NULL};
        for (int k = 0; k < 2; k++) {
            /* A run without local cells answers the hosts query with its pair table already. */
            if (!queries[k] || (k == 1 && t->tables[0] && strstr(t->tables[0], "\"pairs\":true")))
                continue;
            t->tables[k] = sm_reports_body(&a->reports, r->id, SM_REPORT_TABLE, queries[k]);
        }
        t->anomalies = sm_reports_body(&a->reports, r->id, SM_REPORT_ANOMALIES, an_query);
    }
}

static void runs_free(sm_trend_run *runs, size_t n)
{
    for (size_t j = 0; runs && j < n; j++) {
        free((char *)runs[j].tables[0]);
        free((char *)runs[j].tables[1]);
        free((char *)runs[j].anomalies);
    }
    free(runs);
}

/* Reads the trend's parameters into q (strings in the buffers); 0, or a 400 with msg and
 * field set. */
typedef struct trend_params {
    char host[2 * 65 + 2], test[SM_TABLE_LABEL_MAX], metric[32];
    bool with_disturbed; /* disturbed=include: the tables and anomalies count them too */
    sm_trend_query q;
} trend_params;

static int trend_params_read(const char *query, trend_params *t, char *msg, size_t cap,
                             const char **field)
{
    t->q = (sm_trend_query){t->host, t->test, NULL, 0, INT64_MAX, SM_TRENDS_LIMIT_DEFAULT};
    int r = param(query, "host", t->host, sizeof t->host);
    if (r <= 0) {
        *field = "host";
        snprintf(msg, cap, "host: %s",
                 r ? "expected a host or client->server, at most 131 characters"
                   : "give the host (a row of the run's table)");
        return 400;
    }
    r = param(query, "test", t->test, sizeof t->test);
    if (r <= 0) {
        *field = "test";
        snprintf(msg, cap, "test: %s",
                 r ? "expected a test label such as 'stream tcp 128 KiB', at most 127 characters"
                   : "give the test (a column label of the run's table)");
        return 400;
    }
    r = param(query, "metric", t->metric, sizeof t->metric);
    if (r < 0) {
        *field = "metric";
        snprintf(msg, cap, "metric: expected a metric name, at most 31 characters");
        return 400;
    }
    t->q.metric = r ? t->metric : NULL;
    char dist[16];
    r = param(query, "disturbed", dist, sizeof dist);
    if (r < 0 || (r && strcmp(dist, "include") != 0 && strcmp(dist, "exclude") != 0)) {
        *field = "disturbed";
        snprintf(msg, cap, "disturbed: expected include or exclude");
        return 400;
    }
    t->with_disturbed = r && strcmp(dist, "include") == 0;
    char num[24];
    int64_t v;
    static const char *const names[] = {"from", "to", "limit"};
    for (int i = 0; i < 3; i++) {
        r = param(query, names[i], num, sizeof num);
        const bool limit = i == 2;
        if (r == 0)
            continue;
        if (r < 0 ||
            !sm_query_int(num, limit ? 1 : 0, limit ? SM_TRENDS_LIMIT_MAX : INT64_MAX, &v)) {
            *field = names[i];
            if (limit)
                snprintf(msg, cap, "limit: expected 1 to %d points", SM_TRENDS_LIMIT_MAX);
            else
                snprintf(msg, cap, "%s: expected a time in ms since the epoch (UTC)", names[i]);
            return 400;
        }
        if (i == 0)
            t->q.from_ms = v;
        else if (i == 1)
            t->q.to_ms = v;
        else
            t->q.limit = (size_t)v;
    }
    if (t->q.from_ms > t->q.to_ms) {
        *field = "to";
        snprintf(msg, cap, "to: must not be before from");
        return 400;
    }
    return 0;
}

int sm_api_get_trends(sm_api_ctx *a, const char *query, char **resp, size_t *len)
{
    trend_params t;
    char msg[256];
    const char *field = NULL;
    if (trend_params_read(query, &t, msg, sizeof msg, &field) != 0)
        return sm_api_reply_error(resp, len, 400, msg, field);
    sm_run_row *rows = NULL;
    size_t n = 0, *pick = NULL;
    sm_trend_run *runs = NULL;
    size_t np = 0;
    sm_error err = {0};
    int status;
    if (sm_store_runs_list(a->st, SIZE_MAX, &rows, &n, &err) != 0) {
        status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
        goto out;
    }
    pick = calloc(n ? n : 1, sizeof *pick);
    if (!pick) {
        status = sm_api_reply_error(resp, len, 500, "out of memory", NULL);
        goto out;
    }
    const long got = ended_runs(a, rows, n, t.q.from_ms, t.q.to_ms, TRENDS_RUNS_SCAN, pick, &err);
    if (got < 0) {
        status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
        goto out;
    }
    np = (size_t)got;
    runs = calloc(np ? np : 1, sizeof *runs);
    if (!runs) {
        status = sm_api_reply_error(resp, len, 500, "out of memory", NULL);
        goto out;
    }
    /* A pair row is in the run's pair table, a host's in its hosts table. */
    const bool pair = strstr(t.host, "->") != NULL;
    const char *const queries[2] = {
        pair ? (t.with_disturbed ? "format=json&scope=pair&disturbed=include"
                                 : "format=json&scope=pair")
             : (t.with_disturbed ? "format=json&disturbed=include" : "format=json"),
        NULL};
    load_runs(a, rows, pick, np, queries, t.with_disturbed ? "disturbed=include" : NULL, runs);
    char *json = NULL;
    const int rc = sm_trends_json(&t.q, runs, np, &json, &err);
    if (rc == SM_EINVAL)
        status = sm_api_reply_error(resp, len, 400, err.msg, "metric");
    else
        status = sm_api_reply(resp, len, 200, json);
out:
    runs_free(runs, np);
    free(pick);
    sm_store_runs_free(rows, n);
    return status;
}

int sm_api_get_grid(sm_api_ctx *a, char **resp, size_t *len)
{
    sm_run_row *rows = NULL;
    size_t n = 0, np = 0, pick[GRID_RUNS_SCAN] = {0};
    sm_trend_run *runs = NULL;
    sm_error err = {0};
    int status;
    if (sm_store_runs_list(a->st, SIZE_MAX, &rows, &n, &err) != 0) {
        status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
        goto out;
    }
    const long got = ended_runs(a, rows, n, 0, INT64_MAX, GRID_RUNS_SCAN, pick, &err);
    if (got < 0) {
        status = sm_api_reply_error(resp, len, 500, err.msg, NULL);
        goto out;
    }
    np = (size_t)got;
    runs = calloc(np ? np : 1, sizeof *runs);
    if (!runs) {
        status = sm_api_reply_error(resp, len, 500, "out of memory", NULL);
        goto out;
    }
    static const char *const queries[2] = {"format=json", "format=json&scope=pair"};
    load_runs(a, rows, pick, np, queries, NULL, runs);
    status = sm_api_reply(resp, len, 200, sm_grid_json(runs, np));
out:
    runs_free(runs, np);
    sm_store_runs_free(rows, n);
    return status;
}
