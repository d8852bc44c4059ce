/* Builds a run's comparison table from its cells and the results of their jobs. */
#ifndef SM_COORD_EXPORT_H
#define SM_COORD_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "coordinator/analysis/analysis.h"
#include "coordinator/analysis/explain.h"
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

/* What a label names: a test's own column, the ratio of its variant against unix (for http,
 * of its client model's user CPU against the thread model's), or a pair against loopback. */
typedef enum sm_export_label_kind {
    SM_LABEL_TEST = 0,
    SM_LABEL_RATIO,
    SM_LABEL_LOOPBACK,
} sm_export_label_kind;

/* The one name of a test, wherever it is shown: the table's columns (CSV, Markdown, JSON,
 * the dashboard), the anomalies, the job resource, the run's cells (GET /api/runs/ID and
 * `sockmatrix show`), /metrics. Full (brief false):
 *   SM_LABEL_TEST      "stream tcp+nodelay lines 128 B x 8192", "rr unix 1 B/1 B 1000 ms",
 *                      "connect tcp x 500", "http pool+tls 16 MiB x11 4 conns"
 *   SM_LABEL_RATIO     "tcp/unix stream 128 KiB x 256", "user CPU pool/thread, http 16 MiB x11"
 *   SM_LABEL_LOOPBACK  "pair/loopback stream tcp 128 KiB x 256"
 * Sizes in the binary suffixes the options accept (128 B, 64 KiB, 1 MiB); the scope is not
 * in the name (a pair table's rows say "client->server"). Brief (the column headers' short
 * form; the full label goes beside it on hover or in a legend): workload, transport and
 * sizes only: "stream tcp 128 KiB", "tcp/unix rr 1 B/1 B", "user CPU pool/thread http 16 MiB",
 * "pair/loopback stream tcp 128 KiB". Writes at most cap bytes, NUL-terminated, cut when
 * longer. */
void sm_export_label(const sm_params *p, sm_export_label_kind kind, bool brief, char *buf,
                     size_t cap);

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

/* The table in Markdown (sm_table_md) with a footnote under it for each row whose anomaly
 * (the first on the row, a->row, that has any) carries fingerprint differences or changes:
 * "[1] h2: lo qdisc tbf rate 400Mbit burst 128Kb (fleet: noqueue, 2 of 2 hosts)" (the top
 * SM_EXPLAIN_TEXT_MAX, sm_explain_note); that row's flag ends in the mark " [1]" (t's flags
 * change). ex NULL or empty: sm_table_md. malloc'd, or NULL when out of memory. */
char *sm_export_md(sm_table *t, const sm_anomalies *an, const sm_explanation *ex);
/* The table in JSON (sm_table_json) whose flag objects of such rows hold "differences" (or
 * "changes") as the anomalies API gives them. */
char *sm_export_json(const sm_table *t, const sm_anomalies *an, const sm_explanation *ex);

#endif
