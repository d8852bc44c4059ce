/* Builds a run's comparison table from its cells and the results of their jobs. */
#ifndef SM_COORD_EXPORT_H
#define SM_COORD_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "coordinator/analysis/analysis.h"
#include "coordinator/analysis/explain.h"
#include "coordinator/analysis/label.h"
#include "coordinator/model/plan.h"
#include "coordinator/analysis/table.h"
#include "proto/err.h"
#include "proto/result.h"

/* One job's outcome, for the table. */
typedef struct sm_export_sample {
    uint32_t cell;
    uint32_t rep;
    bool warmup;             /* never summarised */
    const sm_result *result; /* NULL when the job has no result (yet): not counted */
} sm_export_sample;

/* The headline metric of a workload in a comparison: stream throughput_MBps (framing lines:
 * seconds, as the 2010 test reported), rr rtt_p50_us, connect connects_per_s, http
 * throughput_MBps. */
sm_metric sm_export_headline(const sm_params *p);

/* The column a cell of params p is in: its label ("stream tcp lines 128 B x 8192"), headline
 * metric and unit, exactly as a run's table names it (the job resource uses it too). */
void sm_export_column(const sm_params *p, sm_table_col *col);

/* Rows: the hosts of local cells (in cell order) or "client->server" of pair cells (a table is
 * one or the other: scope selects which cells are used). Columns: one per (test, variant), the
 * headline metric, summarised over the ok, non-warm-up results of that cell (failed ones only
 * counted in `failed`, disturbed ones counted in `disturbed` and, by default, not summarised
 * nor paired in the ratios: see sm_export_build_opts). Ratio columns: for each tcp variant of a
 * test and the unix variant of the same test whose params are otherwise equal, the median and CI of
 * the paired ratio tcp/unix of the headline metric, repetition i against repetition i on the same
 * host; for http, each client model's column against the thread model's of the otherwise equal
 * test, the ratio of user_s (the client model's user CPU). A pair table adds, for each pair column
 * whose test the run also measured locally (the same params but the scope), a "pair/loopback"
 * column: the pair's headline metric over the client host's loopback, repetition against
 * repetition.
 * 0 or SM_ENOMEM; *out must be sm_table_fini'd. */
int sm_export_build(uint64_t run_id, const char *run_name, sm_scope scope, const sm_cell *cells,
                    size_t n_cells, const sm_export_sample *samples, size_t n_samples,
                    sm_table *out, sm_error *err);

/* How a table is built. */
typedef struct sm_export_opts {
    /* Disturbed samples (result host.disturbed) are counted per cell in `disturbed` and left
     * out of the statistics and ratios; true puts them back in (?disturbed=include). */
    bool include_disturbed;
} sm_export_opts;

/* sm_export_build with options; o NULL is the default (disturbed samples left out). */
int sm_export_build_opts(uint64_t run_id, const char *run_name, sm_scope scope,
                         const sm_cell *cells, size_t n_cells, const sm_export_sample *samples,
                         size_t n_samples, const sm_export_opts *o, sm_table *out, sm_error *err);

/* One job's outcome reduced to what a table reads of it: its metrics and its flags, without
 * the histogram. A run's report keeps one of these per job (a few hundred bytes) instead of
 * the decoded result (kilobytes with its histogram), so that it can decode one result at a
 * time (coordinator/reports). */
typedef struct sm_export_point {
    uint32_t cell;
    uint32_t rep;
    bool warmup;    /* never summarised */
    bool measured;  /* false: the job has no result (yet): not counted */
    bool ok;        /* false: failed (counted in `failed`) */
    bool limited;   /* failed on its time limit, on either side */
    bool disturbed; /* the result's host.disturbed */
    uint64_t have;  /* as sm_result.have */
    double v[SM_M__COUNT];
    /* The failure's reason and the disturbance's, not owned; NULL or "" when there is none or
     * it was not kept: a table shows only the first non-empty one of each that a cell has. */
    const char *reason;
    const char *disturbed_reason;
} sm_export_point;

/* *p from sample s; its reasons point into s->result, which must outlive p. */
void sm_export_point_of(const sm_export_sample *s, sm_export_point *p);

/* sm_export_build_opts from points: the same table, bit for bit, as from the samples the
 * points were made of (sm_export_point_of), in the same order. */
int sm_export_build_points(uint64_t run_id, const char *run_name, sm_scope scope,
                           const sm_cell *cells, size_t n_cells, const sm_export_point *points,
                           size_t n_points, const sm_export_opts *o, sm_table *out, sm_error *err);

/* The table in Markdown (sm_table_md) with a footnote under it for each host that the
 * fingerprint differences or changes of a flag name, one per host however many rows and flags
 * point to it: "[1] h2: lo qdisc tbf rate 400Mbit burst 128Kb (fleet: noqueue, 2 of 2 hosts)"
 * (sm_explain_host_note), numbered in the order the rows first name them. The flag of each row
 * whose flags (sm_analysis_flag_table's: a slow host's on each of its rows) have something to
 * show ends in the mark of their hosts' footnotes, " [1]" or, for a pair, " [1, 2]" (t's flags
 * change). ex NULL or empty: sm_table_md. malloc'd, or NULL when out of memory. */
char *sm_export_md(sm_table *t, const sm_anomalies *an, const sm_explanation *ex);
/* The table in JSON (sm_table_json) whose flag objects hold the "differences" (or "changes")
 * of the row's first anomaly (a->row) that has any, as the anomalies API gives them. */
char *sm_export_json(const sm_table *t, const sm_anomalies *an, const sm_explanation *ex);

#endif
