/* Trends and the fleet grid: one host's cell of one test across ended runs, and the latest
 * verdict of every host x test. Pure: the runs' table and anomalies JSON (as GET
 * /api/runs/ID/table?format=json and /anomalies give them) in, the API's JSON out. Rows and
 * columns are matched by their labels, as sm_compare_tables matches cells across runs. */
#ifndef SM_COORD_TRENDS_H
#define SM_COORD_TRENDS_H

#include <stddef.h>
#include <stdint.h>

#include "proto/err.h"

/* Said once wherever a trend or the grid is shown. */
#define SM_TRENDS_RULE                                                                             \
    "points: ended runs whose table has a median in this host's cell of this test, oldest "        \
    "first; flagged: the run's analysis (GET /api/runs/ID/anomalies) flags this host for this "    \
    "test (fleet outlier, slow host or link, regression against its baseline); ci_lo, ci_hi: "     \
    "the 95% CI of the median"

#define SM_TRENDS_LIMIT_DEFAULT 200
#define SM_TRENDS_LIMIT_MAX     1000

/* One ended run. tables: up to two table bodies (hosts and pairs; NULL or unparsable:
 * skipped); anomalies: its anomalies body, NULL when none. Borrowed. */
typedef struct sm_trend_run {
    uint64_t id;
    const char *name;
    int64_t finished_ms;
    const char *tables[2];
    const char *anomalies;
} sm_trend_run;

typedef struct sm_trend_query {
    const char *host;   /* a table row: a host, or "client->server" */
    const char *test;   /* a column label, e.g. "stream tcp 128 KiB" */
    const char *metric; /* NULL: the test's only metric */
    int64_t from_ms;    /* finished time bounds, inclusive */
    int64_t to_ms;
    size_t limit; /* at most this many points: the latest */
} sm_trend_query;

/* The trend of q over runs (oldest first):
 * {"host","test","metric","unit","points":[{"run","run_name","finished_ms","median","ci_lo",
 * "ci_hi","n","flagged","verdict"?,"stopped"?}],"rule"} (verdict: the cell's in its run, when
 * its table has one) plus "note" when there is no point (naming the
 * hosts, or the host's tests, that the runs do have), and "unknown": "host" or "test" when that
 * is because no ended run has the host, or the host's test (not when the runs have the cell
 * without a clean sample, or none finished between from and to). metric and unit are null when no
 * run has the cell. Returns 0 with *json (malloc'd); SM_EINVAL with the reason in err when the
 * metric is missing (the test has several) or not one of the test's (the reason lists them);
 * SM_ENOMEM. */
int sm_trends_json(const sm_trend_query *q, const sm_trend_run *runs, size_t n, char **json,
                   sm_error *err);

/* The grid of runs (oldest first): {"hosts":[],"tests":[],"cells":[{"host","test","run",
 * "finished_ms","verdict","why","median","metric","unit","fleet_median","fleet_rows"}],"rule"},
 * one cell per host x test (hosts: hosts sorted, then pairs sorted; tests sorted) from the
 * latest run that has it: verdict "flagged" (its analysis flags it), else its table's verdict
 * of the cell, "ok" (judged), "inconclusive" (measured, not judged; why says why) or "failed"
 * (only failed jobs), or "no data" (no run has it: run, finished_ms, why, median, metric, unit
 * and fleet_median null, fleet_rows 0). fleet_median: the median of the medians of the same
 * test over the rows of that run's table (hosts, or pairs for a pair row), fleet_rows of them.
 * malloc'd, NULL when out of memory. */
char *sm_grid_json(const sm_trend_run *runs, size_t n);

#endif
