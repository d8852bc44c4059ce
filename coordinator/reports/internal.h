/* A run's cells and jobs as its reports read them (rundata.c), and the helpers every report
 * shares (reports.c): private to reports/. */
#ifndef SM_COORD_REPORTS_INTERNAL_H
#define SM_COORD_REPORTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/analysis/export.h"
#include "coordinator/reports/reports.h"
#include "coordinator/store/store.h"
#include "proto/err.h"

/* A run's cells and one point per stored result (sm_export_point: metrics and flags, no
 * histogram), in the order of the run's jobs. Built one cell at a time: a cell's results are
 * read, decoded one by one into points, and freed before the next cell, so that what a report
 * holds grows with the run's job count by a few hundred bytes a job and with its largest cell's
 * stored JSON, never with the run's decoded results. */
typedef struct run_data {
    sm_run_row run;
    sm_cell *cells;
    size_t nc;
    sm_export_point *points;
    size_t np;
    char **reasons; /* the reasons the points keep (the first of each kind a cell has); owned */
    size_t n_reasons;
    bool any_local, any_pair;
    uint64_t held; /* the bytes the data holds once loaded (estimate), for a second run's bound */
    sm_export_opts eo; /* set by the caller after loading */
} run_data;

/* Loads run id into *d (zeroed first) unless the estimate of what building its report holds at
 * its peak, added to `already` (bytes another run's data holds), passes limit (bytes): then
 * SM_REPORT_TOO_BIG with err naming the cell that passes it and the bound, before any result is
 * read. Returns 0, SM_REPORT_NO_RUN, SM_REPORT_TOO_BIG or SM_REPORT_FAILED, with err set; *d is
 * the caller's to run_data_fini whatever it returns. */
int run_data_load(sm_store *st, uint64_t id, uint64_t limit, uint64_t already, run_data *d,
                  sm_error *err);

/* The table of d's cells of scope; 0 or SM_ENOMEM with err set. */
int run_data_table(const run_data *d, sm_scope scope, sm_table *t, sm_error *err);

void run_data_fini(run_data *d);

/* ---- reports.c: what every report shares ---- */

/* Sets out's error: status, msg and the option at fault (may be NULL). Returns status. */
sm_report_status report_error(sm_run_report *out, sm_report_status status, const char *msg,
                              const char *field);
/* Hands text (malloc'd JSON or text; NULL: out of memory) to out as its body. */
sm_report_status report_body(sm_run_report *out, char *text);
/* The bound of one report, in bytes. */
uint64_t report_limit(const sm_reports *r);

/* ---- causes.c ---- */

typedef enum { REPORT_JSON, REPORT_TEXT, REPORT_MD } report_form;

/* Run id's anomalies (text: their JSON, their text, or the run's Markdown table; owned, NULL
 * passes through) with what its ended experiments proved: the JSON's fleet and regression
 * anomalies of an experiment's host and test get "experiment" ({"run","summary","cause"}) and,
 * where one was proved, "cause" (the experiment's cause, plus "experiment": its run); the text
 * and the Markdown a line per experiment after the rest. The text as it came when the run has
 * none, or on any failure. */
char *report_add_causes(sm_reports *r, uint64_t id, char *text, report_form form);

#endif
