/* A comparison table (DESIGN section 12): rows are hosts (or host pairs), columns are tests,
 * each cell a median with its 95% CI and n; ratio columns beside them; a flag column. Encoders
 * for CSV (RFC 4180, one header row, units in the headers), Markdown (aligned, flags in bold)
 * and JSON (versioned, one object per cell with all statistics). */
#ifndef SM_COORD_TABLE_H
#define SM_COORD_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/reps.h"
#include "proto/stats.h"

#define SM_TABLE_LABEL_MAX 128
#define SM_TABLE_BRIEF_MAX 64

/* "~" after an interval: what it means, for every legend that shows it (C and dashboard). */
#define SM_TABLE_TILDE_RULE                                                                        \
    "~ marks an interval that covers less than 95% (below 6 samples it is [min, max])"

/* What a cell, a row or a whole table says (coordinator/analysis/verdict.h): judged and fine,
 * judged and odd, not judged (too few clean samples, no fleet to compare with) or measured
 * only as failures. SM_VERDICT_NONE: no job at all, nothing to say. */
typedef enum sm_verdict {
    SM_VERDICT_NONE = 0,
    SM_VERDICT_OK,
    SM_VERDICT_FLAGGED,
    SM_VERDICT_INCONCLUSIVE,
    SM_VERDICT_FAILED,
} sm_verdict;

/* A verdict and, unless ok or flagged (the anomaly says why), why: owned by the table. */
typedef struct sm_judgement {
    sm_verdict verdict;
    char *why; /* NULL when there is nothing to say */
} sm_judgement;

typedef struct sm_table_col {
    char label[SM_TABLE_LABEL_MAX]; /* the test, e.g. "stream tcp+nodelay lines 128 B x 8192" */
    /* The header's short form ("stream tcp lines 128 B"), unique in its table; "" when the
     * table has none: the header is then the label. */
    char brief[SM_TABLE_BRIEF_MAX];
    char metric[32]; /* metric name, e.g. "seconds" */
    char unit[16];   /* its unit, e.g. "s", "MB/s", "us", "x" for ratios */
} sm_table_col;

typedef struct sm_table_cell {
    bool have;
    sm_summary s;
    uint32_t failed;    /* jobs of this cell that failed (never in s) */
    uint32_t limited;   /* of those, the ones that failed on their time limit: evidence that
                         * the host is slower than limit_bound, never a missing value */
    double limit_bound; /* what a job at its time limit would show in the column's metric
                         * (seconds: the limit); NaN when the metric has no such bound */
    /* ok jobs whose host was disturbed while they ran (sm_host_state): counted here always,
     * in s only when the table was built with them (sm_table.with_disturbed) */
    uint32_t disturbed;
    /* Adaptive repetitions: SM_REPS_MAX when max ran out before the CI was tight, SM_REPS_CI
     * when it got tight; any run: SM_REPS_DISTURBED when remeasure ran out with disturbed
     * samples still keeping it short; SM_REPS_NONE otherwise for fixed repetitions. */
    sm_reps_stop stopped;
    /* A ratio of CPU times so small that they are a few scheduler ticks each: shown, marked
     * "(coarse)", never judged by the analysis. */
    bool coarse;
    /* The agent's reason of the cell's first disturbed sample and of its first failed job;
     * owned by the table, NULL when none. */
    char *disturbed_reason;
    char *failed_reason;
    sm_judgement j; /* sm_verdict_table */
} sm_table_cell;

typedef struct sm_table {
    uint64_t run_id;
    char run_name[65];
    bool pairs;               /* rows are "client->server" */
    char (*rows)[2 * 65 + 2]; /* row labels; owned */
    size_t n_rows;
    sm_table_col *cols; /* owned */
    size_t n_cols;
    sm_table_cell *cells;     /* n_rows x n_cols, row-major; owned */
    sm_table_col *ratio_cols; /* e.g. "tcp/unix stream lines 128 B x 8192" */
    size_t n_ratio_cols;
    sm_table_cell *ratio_cells; /* n_rows x n_ratio_cols; owned */
    char (*flags)[256];         /* per row, "" when none; owned */
    bool with_disturbed;        /* disturbed samples are in the statistics (?disturbed=include) */
    /* sm_verdict_table: each row's verdict (n_rows; owned) and the table's, with the count of
     * value cells (not ratios) of each verdict. */
    sm_judgement *row_j;
    sm_judgement whole;
    uint32_t n_ok, n_flagged, n_inconclusive, n_failed;
    uint32_t n_anomalies; /* found on this table */
} sm_table;

/* Allocates rows x cols (and ratio columns) zeroed; 0 or SM_ENOMEM. */
int sm_table_init(sm_table *t, size_t n_rows, size_t n_cols, size_t n_ratio_cols);
void sm_table_fini(sm_table *t);
sm_table_cell *sm_table_at(sm_table *t, size_t row, size_t col);
sm_table_cell *sm_table_ratio_at(sm_table *t, size_t row, size_t col);

/* Makes the columns' brief headers unique in t (value and ratio columns together): a brief
 * that an earlier column has too gets " #2", " #3", ... */
void sm_table_unique_briefs(sm_table *t);

/* Whether cell c's interval is marked "~": it has a value and its CI covers less than 95%
 * (ci_coverage < 0.95: the distribution-free median CI of fewer than 6 samples, [min, max]).
 * Noise (CV) is no part of it. */
bool sm_table_ci_short(const sm_table_cell *c);

/* Each returns a malloc'd NUL-terminated text, or NULL when out of memory.
 * CSV: header "host,<label> median (<unit>),<label> ci95_low (<unit>),<label> ci95_high
 * (<unit>),<label> n,<label> disturbed,...,<ratio label> median (x),...,flags" (ratio columns
 * have no disturbed field); empty fields where a cell has no data (disturbed is 0 then, or the
 * count), and "<label> stopped" ("ci", "max", "failed", "disturbed" or empty) after each
 * test's disturbed field when any cell says why it stopped; CRLF line ends. Markdown: a pipe
 * table, "median [low, high] n=N" per cell and
 * ", D disturbed" when there were any ("n=30 (max)" when adaptive repetitions ran out
 * before the CI was tight, "D disturbed (remeasure ran out)" when measuring them again did
 * not make up for them), flags in bold, a header line naming the run. JSON:
 * {"version":1,"run":{"id":"7","name":...},"pairs":false,"disturbed":"exclude"|"include",
 * "rows":[...],"columns":[{"label","metric","unit"}],"ratio_columns":[...],
 * "cells":[{"row","column","n","median","mean","stddev","min","max","cv","ci95_low",
 * "ci95_high","ci_coverage","failed","limited","limit_bound","disturbed","stopped",
 * "coarse","noisy","noisy_reason"}],"ratios":[...same...],"flags":[{"row","flag"}]}; Markdown shows
 * a cell without a value whose jobs ran into their time limit as "> 60 (2 at time limit)"; noisy as
 * sm_analysis_noisy says (true for a cell without a summary), noisy_reason as
 * sm_table_noisy_reason ("" when not noisy). */
char *sm_table_csv(const sm_table *t);
/* Why cell c is noisy, into buf (cap bytes): "n 2 < 3", "CV 14% > 10%", and, when disturbed
 * samples were left out of a cell that is short of clean ones, "2 of 5 samples disturbed"
 * (with " (remeasure ran out)" when the cell stopped SM_REPS_DISTURBED);
 * "" when it is not noisy. with_disturbed: the table's flag. */
void sm_table_noisy_reason(const sm_table_cell *c, bool with_disturbed, char *buf, size_t cap);
char *sm_table_md(const sm_table *t);
char *sm_table_json(const sm_table *t);

#endif
