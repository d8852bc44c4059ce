/* A stored run's reports: its comparison table (CSV, Markdown, JSON) and its anomalies (JSON or
 * text, against a baseline run), and two runs side by side. Computed from the store and kept
 * once the run has ended (cache.h), so that each is computed once. The API serves them as they
 * are; the schedules judge a finished run with them. One sm_reports per thread, each over its
 * own store connection; they may share one cache (cache.h), which is thread-safe. */
#ifndef SM_COORD_REPORTS_H
#define SM_COORD_REPORTS_H

#include <stddef.h>
#include <stdint.h>

#include "coordinator/analysis/verdict.h"
#include "coordinator/analysis/experiment.h"
#include "coordinator/store/store.h"
#include "proto/err.h"

/* What one report may hold while it is built, in MB (10^6 bytes), when sm_reports does not
 * say: --report-memory's default. */
#define SM_REPORT_MEMORY_DEFAULT_MB 512

/* The reports of one store; zero it, set st, and sm_reports_fini it at the end. */
typedef struct sm_reports {
    sm_store *st;
    /* Made on first use, or set to a shared one (sm_report_cache_new) before: sm_reports_fini
     * frees it, so of the sharers one alone is fini'd with it, the others set it NULL first. */
    struct sm_report_cache *cache;
    /* The bytes one report may hold while it is built (--report-memory); 0: the default. A
     * run is read one cell at a time, so what it holds grows with its job count (a few hundred
     * bytes a job) and its largest cell's stored results, estimated before any is read. */
    uint64_t memory_limit;
} sm_reports;

typedef enum sm_report_kind { SM_REPORT_TABLE, SM_REPORT_ANOMALIES } sm_report_kind;

/* How a report came out. The values are the HTTP statuses the API answers with, so that it
 * passes them on unchanged. */
typedef enum sm_report_status {
    SM_REPORT_OK = 200,
    SM_REPORT_BAD_OPTION = 400,     /* an option is malformed, or names a run that is not there */
    SM_REPORT_NO_RUN = 404,         /* the run is not there */
    SM_REPORT_NOTHING_SHARED = 409, /* the runs compared share no cell */
    SM_REPORT_FAILED = 500,         /* the store failed or memory ran out */
    /* Building it would hold more than memory_limit: err names the run, the cell and the
     * bound. Nothing was read into memory nor kept; the store is unchanged. */
    SM_REPORT_TOO_BIG = 503,
} sm_report_status;

/* A report: status, and then either body (malloc'd, NUL-terminated, len bytes) with its media
 * type ctype (a static string), or err (its message; err.field names the option at fault). */
typedef struct sm_run_report {
    sm_report_status status;
    char *body;
    size_t len;
    const char *ctype;
    sm_error err;
} sm_run_report;

/* Run id's table or anomalies. options is the API's query syntax ("format=md&floor=0.2"; may
 * be NULL): format=csv|md|json (text|json for anomalies), floor=F, disturbed=include|exclude,
 * scope=local|pair (table), baseline=RUN (anomalies; default: the newest earlier run of the
 * same name that ended done, dropped when it shares no cell). Returns out->status; free out
 * with sm_run_report_fini whatever it is. */
sm_report_status sm_reports_get(sm_reports *r, uint64_t id, sm_report_kind kind,
                                const char *options, sm_run_report *out);

/* Two runs' shared cells side by side; options "a=RUN&b=RUN[&disturbed=include]". 400 for a
 * missing or bad id or a == b, 404 for an unknown run (err.field "a" or "b"), 409 when they
 * share no cell (err names each run's tests). */
sm_report_status sm_reports_compare(sm_reports *r, const char *options, sm_run_report *out);

/* The verdict of run id over its tables, without a baseline (a baseline only adds flags):
 * *v's notes list the cells it could not judge. Returns SM_REPORT_OK, or SM_REPORT_NO_RUN /
 * SM_REPORT_FAILED with err set; *v is the caller's to sm_run_verdict_fini either way. */
sm_report_status sm_reports_verdict(sm_reports *r, uint64_t id, sm_run_verdict *v, sm_error *err);

/* Experiment run id's report (coordinator/analysis/xpreport.h): each suspect of its plan with
 * the share of the gap its treatment closed, its 95% interval and its verdict, from the
 * experiment's samples and the fleet's in the run it explains. Never cached: a running
 * experiment's numbers move. SM_REPORT_NO_RUN when id is no experiment. */
sm_report_status sm_reports_experiment(sm_reports *r, uint64_t id, sm_run_report *out);

/* The next stage of the search (analysis/xpsearch.h) that experiment id ended: when id is done
 * and it, or the search it is a stage of, narrows a combination down and has subsets left to
 * run, 1 with *stage their plan (one combined suspect per subset; the caller finis it). 0 when
 * there is none to run (no search, it has ended, or id is not done); -1 with err on an error
 * (no such experiment, the store). */
int sm_reports_experiment_next(sm_reports *r, uint64_t id, sm_xp_plan *stage, sm_error *err);

/* A run's state changed: as sm_reports_run_changed, and when it is an experiment, the
 * anomalies of the run it explains are dropped too (they carry its answer once it is done). */
void sm_reports_run_state_changed(sm_reports *r, uint64_t run_id);

/* sm_reports_get's body alone (malloc'd), or NULL when the report did not come out. */
char *sm_reports_body(sm_reports *r, uint64_t id, sm_report_kind kind, const char *options);

/* A run's stored results or state changed: its kept reports are dropped, and so are the
 * anomalies that took it as their baseline. NULL r does nothing. */
void sm_reports_run_changed(sm_reports *r, uint64_t run_id);

void sm_run_report_fini(sm_run_report *rep);
void sm_reports_fini(sm_reports *r);

#endif
