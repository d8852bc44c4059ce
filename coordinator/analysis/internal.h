/* Internals the analysis files share: the limits, a column of a table, the steps every
 * anomaly is built with, and the cJSON pieces one file builds for another (cJSON stays inside
 * analysis/). Not for callers: they use the public headers. */
#ifndef SM_COORD_ANALYSIS_INT_H
#define SM_COORD_ANALYSIS_INT_H

#include "coordinator/analysis/analysis.h"
#include "coordinator/analysis/fpdiff.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

/* n doubles (at least one), or NULL when out of memory or n is too large. */
static inline double *sm_analysis_doubles(size_t n)
{
    if (n > SIZE_MAX / sizeof(double))
        return NULL;
    return malloc((n ? n : 1) * sizeof(double));
}

/* The z cut and floor, defaults in place of 0 (or anything not positive). */
typedef struct sm_analysis_limits {
    double z, floor;
} sm_analysis_limits;

sm_analysis_limits sm_analysis_limits_of(const sm_analysis_opts *o);

/* One column of a table: a plain or a ratio column, with the cells of its rows. */
typedef struct sm_analysis_column {
    const sm_table_col *col;
    const sm_table_cell *cells; /* cells[r * stride] is row r's */
    size_t stride;
    size_t index;
    bool ratio;
} sm_analysis_column;

sm_analysis_column sm_analysis_column_of(const sm_table *t, bool ratio, size_t c);

static inline const sm_table_cell *sm_analysis_cell_at(const sm_analysis_column *k, size_t r)
{
    return &k->cells[r * k->stride];
}

/* Copies a char array of srccap bytes that may lack its NUL; always terminates dst. */
void sm_analysis_copy_fixed(char *dst, size_t dstcap, const char *src, size_t srccap);
#define COPY_FIXED(dst, src) sm_analysis_copy_fixed((dst), sizeof(dst), (src), sizeof(src))

/* diff / |base|, with no difference being 0 even when the base is 0. */
double sm_analysis_relative(double diff, double base);

/* Which way value lies from reference, by the sense of the metric named in metric[0..cap). */
sm_anomaly_dir sm_analysis_direction(const char *metric, size_t cap, double value,
                                     double reference);

/* The floor as a percentage: "15%", or with one decimal when not whole ("12.5%"). */
void sm_analysis_percent_text(char *buf, size_t len, double floor);

/* Fills in everything but the host, role, row and numbers. */
void sm_analysis_anomaly_start(sm_anomaly *x, sm_anomaly_kind kind, const sm_analysis_column *k,
                               sm_analysis_limits l, bool mad0);

/* Sets the numbers and, from them, the direction. */
void sm_analysis_anomaly_numbers(sm_anomaly *x, double value, double reference, double z,
                                 double rel);

/* Whether anomaly a belongs on row r of t: its own row, or for a slow host every row in which
 * the host has the role that was found slow. text.c. */
bool sm_analysis_flags_row(const sm_table *t, const sm_anomaly *a, size_t r);

/* Appends *x to a; 0 or SM_ENOMEM (a unchanged). */
int sm_analysis_push(sm_anomalies *a, const sm_anomaly *x);

/* sm_table_json, calling more(arg, r, object) on the flag object of each flagged row r after its
 * fields, for a caller's own (the export's fingerprint differences); false from more is out of
 * memory. more NULL: sm_table_json. table.c. */
typedef bool (*sm_table_json_more_fn)(void *arg, size_t row, cJSON *flag);
char *sm_table_json_more(const sm_table *t, sm_table_json_more_fn more, void *arg);

/* sm_anomalies_json, calling more(arg, i, object) on anomaly i's object after its fields, so
 * that a caller can add its own (the fingerprint differences); false from more is out of
 * memory. more NULL: sm_anomalies_json. json.c. */
typedef bool (*sm_anomaly_json_more)(void *arg, size_t i, cJSON *object);
struct sm_run_verdict;
char *sm_anomalies_json_more(uint64_t run_id, const char *run_name, uint64_t baseline_id,
                             const sm_analysis_opts *o, const sm_anomalies *a,
                             const struct sm_run_verdict *v, sm_anomaly_json_more more, void *arg);

/* Adds a run's verdict to root: "verdict", "summary" (sm_run_verdict_summary), "cells"
 * {"judged","ok","flagged","inconclusive","failed"} and "inconclusive" [{"row","test","brief",
 * "ratio","verdict","why"}], the cells not judged. false: out of memory. verdict.c. */
bool sm_run_verdict_cjson(const struct sm_run_verdict *v, cJSON *root);

/* One fingerprint difference as its JSON object: {"item","label","host_value","fleet_value"
 * (null: no majority),"hosts_with_fleet_value","fleet_hosts"}; with change, a change's
 * {"item","label","before","after"}. NULL when out of memory; the caller deletes it.
 * fpdiff.c (sm_fp_diffs_json), explain.c. */
cJSON *sm_fp_diff_to_cjson(const sm_fp_diff *x, bool change);

/* sm_anomaly_json_more for sm_anomalies_json_more with arg an sm_explanation (only read): adds
 * "differences" or, for a regression, "changes" as sm_explain_anomalies_json says; nothing
 * when there is nothing to show. false: out of memory. explain.c; export.c's footnotes. */
bool sm_explain_json(void *arg, size_t i, cJSON *object);

/* Whether t is a treatment in the syntax of experiment.h (parts joined by "; ", at most
 * SM_XP_COMBINED_MAX); false with the reason in why[0..len). experiment.c; the plan's JSON
 * reader (experiment_json.c) checks a stored plan with it. */
bool sm_xp_treatment_check(const char *t, char *why, size_t len);

#endif
