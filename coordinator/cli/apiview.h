/* The coordinator's HTTP API as a client reads it: views of its JSON answers, and the bodies of
 * the requests the CLI sends. The CLI's only files that touch cJSON are apiview*.c (and
 * specfile.c, which reads the user's own file); a command reads these views. */
#ifndef SM_CLI_APIVIEW_H
#define SM_CLI_APIVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/err.h"
#include "proto/fingerprint.h"
#include "proto/reps.h"

/* ---- Fixed-size views, checked ----
 *
 * Decoders read the fields they show and skip the others, so that a newer coordinator that
 * adds fields is still readable. A field they read with the wrong type, or a missing one, is
 * an error: SM_EPARSE (SM_EINVAL for numbers out of range, SM_ENOMEM), err->msg naming the
 * path ("runs[2].progress: done: expected an unsigned integer"). Identifiers (names, states,
 * ids, fields) that do not fit their array are errors too; prose (reasons, descriptions,
 * messages, kernel, CPU model, labels) is shortened to fit, ending in "...", since it is
 * only shown. Text is json[0..len), no NUL needed. Out-parameters are written only on
 * success; arrays are malloc'd (free()), and NULL when the count is 0. */

#define SM_APIVIEW_NAME  65  /* agent and host names, preset and run names (64 + NUL) */
#define SM_APIVIEW_STATE 16  /* "running", "cancelled", "online", ... */
#define SM_APIVIEW_FIELD 128 /* an error's field path */
#define SM_APIVIEW_PROSE 512 /* reasons, descriptions, error messages, labels */
#define SM_APIVIEW_SHORT 128 /* kernel release, CPU model, a cell's test summary */

/* One run: an entry of GET /api/runs, or GET /api/runs/ID without its cells. */
typedef struct sm_apiview_run {
    uint64_t id;
    char name[SM_APIVIEW_NAME];
    char state[SM_APIVIEW_STATE];
    char reason[SM_APIVIEW_PROSE]; /* "" when none */
    uint32_t done, failed, total;
    int64_t created_ms, finished_ms;      /* finished_ms 0 while running */
    bool parallel;                        /* false: its jobs go one at a time */
    char parallel_note[SM_APIVIEW_PROSE]; /* serial_reason, or parallel_warning; "" when none */
} sm_apiview_run;

/* One cell of GET /api/runs/ID and the states of its jobs. */
typedef struct sm_apiview_cell {
    uint32_t index;
    char host[SM_APIVIEW_NAME];
    char peer[SM_APIVIEW_NAME];  /* "" for a local test */
    char test[SM_APIVIEW_PROSE]; /* the cell's "test": "stream tcp+nodelay 128 B x 256" */
    uint32_t jobs, queued, active, done, failed;
} sm_apiview_cell;

/* One agent of GET /api/agents; facts that are absent (null) read as 0 and "". */
typedef struct sm_apiview_agent {
    char name[SM_APIVIEW_NAME];
    char status[SM_APIVIEW_STATE];
    char kernel[SM_APIVIEW_SHORT];
    char cpu_model[SM_APIVIEW_SHORT];
    uint32_t cores;
    uint64_t mem_bytes;
    int64_t last_seen_ms;
    char labels[SM_APIVIEW_PROSE]; /* "rack=2,role=db" in the order sent; "" when none */
} sm_apiview_agent;

typedef struct sm_apiview_preset {
    char name[SM_APIVIEW_NAME];
    char description[SM_APIVIEW_PROSE];
} sm_apiview_preset;

/* {"error":"...","field":"..."}; field "" when absent. */
typedef struct sm_apiview_error {
    char error[SM_APIVIEW_PROSE];
    char field[SM_APIVIEW_FIELD];
} sm_apiview_error;

/* GET /api/runs/ID (and POST /api/runs/ID/cancel). cells may be NULL when the caller wants
 * only the run; otherwise *cells and *n_cells get its cells. */
int sm_apiview_run_decode(const char *json, size_t len, sm_apiview_run *out,
                          sm_apiview_cell **cells, size_t *n_cells, sm_error *err);

/* GET /api/runs: {"runs":[...]} */
int sm_apiview_runs_decode(const char *json, size_t len, sm_apiview_run **runs, size_t *n,
                           sm_error *err);

/* GET /api/agents: {"agents":[...]} */
int sm_apiview_agents_decode(const char *json, size_t len, sm_apiview_agent **agents, size_t *n,
                             sm_error *err);

/* GET /api/presets: {"presets":[...]} */
int sm_apiview_presets_decode(const char *json, size_t len, sm_apiview_preset **presets, size_t *n,
                              sm_error *err);

/* A 4xx/5xx body. */
int sm_apiview_error_decode(const char *json, size_t len, sm_apiview_error *out, sm_error *err);

/* POST /api/runs answer: {"run":"7"} */
int sm_apiview_run_id_decode(const char *json, size_t len, uint64_t *id, sm_error *err);

/* The body of POST /api/runs for a preset: {"preset":NAME,"hosts":"all"|[...],
 * "repetitions":N}. hosts is NULL (the preset's own), "all", or names separated by commas;
 * repetitions 0 leaves the preset's. An empty name in hosts is SM_EINVAL. Returns 0 and a
 * malloc'd compact text in *body. */
int sm_apiview_preset_request(const char *preset, const char *hosts, uint32_t repetitions,
                              char **body, sm_error *err);
/* The same with adaptive repetitions: "repetitions":{"min":..,"max":..,"ci_rel":..}. */
int sm_apiview_preset_request_adaptive(const char *preset, const char *hosts,
                                       const sm_reps_rule *rule, char **body, sm_error *err);

/* ---- Views that read an answer as it comes ----
 *
 * They read what the commands show and check only what a command needs to go on (a list it
 * walks); any other field that is absent or of another type reads as NULL or "" (strings, as
 * each struct says), NaN (figures, unless a struct says 0; JSON has no NaN, so NaN is never a
 * value sent), false, or has_X false. Nothing is cut. Their strings point into the answer the view
 * keeps, valid until the view's _fini, which frees everything; a view that failed to decode is
 * zeroed and may be fini'd as well. Text that is not JSON, and running out of memory while parsing
 * it (cJSON tells the two apart by neither), is SM_EPARSE with the message each decoder names. */

typedef struct sm_apiview_doc sm_apiview_doc; /* the answer a view's strings point into */

/* The whole answer of a view pretty-printed, every figure as the API wrote it (cJSON's own
 * printing keeps 15 digits): the text to free(), or NULL when out of memory. The figures read
 * into the view stay as they were. */
char *sm_apiview_print(sm_apiview_doc *doc);
void sm_apiview_doc_free(sm_apiview_doc *doc);

/* GET /api/compare?a=A&b=B, "" for absent strings, NaN for absent figures. */
typedef struct sm_apiview_side {
    double median, ci95_low, ci95_high, n, failed;
    const char *unit;
} sm_apiview_side;

typedef struct sm_apiview_compared {
    const char *host, *test, *unit, *verdict;
    double change_pct;
    sm_apiview_side a, b; /* all NaN and "" for a side the answer lacks */
} sm_apiview_compared;

typedef struct sm_apiview_cell_name {
    const char *host, *test;
} sm_apiview_cell_name;

typedef struct sm_apiview_compare_run {
    const char *id, *name, *state;
} sm_apiview_compare_run;

typedef struct sm_apiview_compare {
    bool have_runs;   /* "a" and "b" are objects */
    bool have_shared; /* "shared" is a list */
    sm_apiview_compare_run a, b;
    sm_apiview_compared *shared;
    size_t n_shared;
    sm_apiview_cell_name *only[2]; /* "only_a", "only_b" */
    size_t n_only[2];
    sm_apiview_doc *doc;
} sm_apiview_compare;

/* SM_EPARSE "not JSON"; the command says what it misses (have_runs, have_shared). */
int sm_apiview_compare_decode(const char *json, size_t len, sm_apiview_compare *out, sm_error *err);
void sm_apiview_compare_fini(sm_apiview_compare *c);

/* GET /api/trends: one host's cell of one test across the ended runs. */
typedef struct sm_apiview_trend_point {
    double finished_ms, median, ci_lo, ci_hi, n; /* NaN when absent */
    const char *run;                             /* "" when absent */
    bool flagged;
} sm_apiview_trend_point;

typedef struct sm_apiview_trend {
    const char *host, *test, *metric, *unit, *note; /* "" when absent */
    const char *unknown; /* what no ended run has: "host", "test"; "" when the cell exists */
    sm_apiview_trend_point *points;
    size_t n_points;
    sm_apiview_doc *doc;
} sm_apiview_trend;

/* SM_EPARSE "expected points" when the answer is not JSON or has no "points" list. */
int sm_apiview_trend_decode(const char *json, size_t len, sm_apiview_trend *out, sm_error *err);
void sm_apiview_trend_fini(sm_apiview_trend *t);

/* GET /api/runs/ID/anomalies?format=json: its flags ("anomalies"). */
typedef struct sm_apiview_anomaly {
    const char *kind, *host, *test, *metric, *unit; /* "" when absent */
    double value, reference, rel;                   /* NaN when absent */
} sm_apiview_anomaly;

typedef struct sm_apiview_anomalies {
    sm_apiview_anomaly *v;
    size_t n;
    sm_apiview_doc *doc;
} sm_apiview_anomalies;

/* SM_EPARSE "no \"anomalies\" list" (not JSON included). */
int sm_apiview_anomalies_decode(const char *json, size_t len, sm_apiview_anomalies *out,
                                sm_error *err);
void sm_apiview_anomalies_fini(sm_apiview_anomalies *a);

/* The tests a run's table names (GET /api/runs/ID/table?format=json): its "columns", then its
 * "ratio_columns", each with its label and short form ("" when absent). */
typedef struct sm_apiview_column {
    const char *label, *brief;
} sm_apiview_column;

typedef struct sm_apiview_columns {
    sm_apiview_column *v;
    size_t n;
    sm_apiview_doc *doc;
} sm_apiview_columns;

/* An answer that is not JSON has no columns: 0, or SM_ENOMEM. */
int sm_apiview_columns_decode(const char *json, size_t len, sm_apiview_columns *out, sm_error *err);
void sm_apiview_columns_fini(sm_apiview_columns *c);

/* GET /api/grid as sockmatrix tests reads it: the labels of its "tests" (those that are
 * strings), and the run each of its "cells" comes from ("" when absent). */
typedef struct sm_apiview_grid_tests {
    const char **tests;
    size_t n_tests;
    const char **cell_runs;
    size_t n_cells;
    sm_apiview_doc *doc;
} sm_apiview_grid_tests;

/* An answer that is not JSON has no tests: 0, or SM_ENOMEM. */
int sm_apiview_grid_tests_decode(const char *json, size_t len, sm_apiview_grid_tests *out,
                                 sm_error *err);
void sm_apiview_grid_tests_fini(sm_apiview_grid_tests *g);

/* GET /api/runs/ID/jobs: one page of a run's jobs. Strings NULL when absent. */
typedef struct sm_apiview_job {
    const char *id, *host, *peer, *test, *state, *reason;
    bool has_repetition;
    int repetition;     /* as cJSON reads an integer (saturated) */
    double duration_ms; /* NaN when absent */
    double headline;    /* the headline's value, NaN when absent */
    const char *headline_unit;
    bool warmup;
    /* Its result's host said it was disturbed (a pair job's from either side): the agent's
     * reason, "" when it gave none; NULL when no side was disturbed. */
    const char *disturbed;
} sm_apiview_job;

typedef struct sm_apiview_jobs_page {
    sm_apiview_job *jobs;
    size_t n;
    const char *next; /* the cursor of the next page, NULL on the last */
    sm_apiview_doc *doc;
} sm_apiview_jobs_page;

/* SM_EPARSE "no \"jobs\" array" (not JSON included). */
int sm_apiview_jobs_page_decode(const char *json, size_t len, sm_apiview_jobs_page *out,
                                sm_error *err);
void sm_apiview_jobs_page_fini(sm_apiview_jobs_page *p);

/* A list to gather the jobs of every page in (sockmatrix jobs --format json), printed with
 * sm_apiview_print; NULL when out of memory. */
sm_apiview_doc *sm_apiview_list_new(void);
/* Moves the page's jobs, as the API wrote them, to the end of list; the page keeps its next
 * and its typed jobs are dropped (n 0). */
void sm_apiview_jobs_move(sm_apiview_jobs_page *page, sm_apiview_doc *list);

/* GET /api/runs/ID/cells/N: a cell's figures in the table and its repetitions. */
typedef struct sm_apiview_cell_value {
    const char *job, *state, *disturbed_reason; /* NULL when absent */
    bool has_repetition;
    int repetition;
    double value; /* NaN when absent */
    bool warmup, counted, disturbed;
} sm_apiview_cell_value;

typedef struct sm_apiview_cell_values {
    const char *row, *test, *metric, *unit; /* NULL when absent */
    double median, ci95_low, ci95_high;     /* NaN when absent */
    bool has_n;
    int n;
    sm_apiview_cell_value *values;
    size_t n_values;
    sm_apiview_doc *doc;
} sm_apiview_cell_values;

/* SM_EPARSE "no \"values\" array" (not JSON included). */
int sm_apiview_cell_values_decode(const char *json, size_t len, sm_apiview_cell_values *out,
                                  sm_error *err);
void sm_apiview_cell_values_fini(sm_apiview_cell_values *c);

/* GET /api/fingerprints/diff?hosts=...: the items on which the hosts differ. */
typedef struct sm_apiview_fp_diff_item {
    const char *item;
    const char **values; /* one per host, NULL where the answer has none for it */
} sm_apiview_fp_diff_item;

typedef struct sm_apiview_fp_diff {
    const char **hosts;
    size_t n_hosts;
    sm_apiview_fp_diff_item *items;
    size_t n_items;
    double same; /* how many items agree */
    sm_apiview_doc *doc;
} sm_apiview_fp_diff;

/* SM_EPARSE "not JSON"; "expected hosts, same and items" (also for fewer than 2 hosts or more
 * than max_hosts); "hosts: expected names"; "items: expected item and values". */
int sm_apiview_fp_diff_decode(const char *json, size_t len, size_t max_hosts,
                              sm_apiview_fp_diff *out, sm_error *err);
void sm_apiview_fp_diff_fini(sm_apiview_fp_diff *d);

/* GET /api/agents/NAME/fingerprint: the latest fingerprint and those seen before it. */
typedef struct sm_apiview_fp_seen {
    const char *hash;                   /* NULL when absent */
    double first_seen_ms, last_seen_ms; /* 0 when absent */
} sm_apiview_fp_seen;

typedef struct sm_apiview_fingerprint {
    sm_apiview_fp_seen latest;
    sm_fingerprint fp; /* decoded and checked as the coordinator stores it */
    sm_apiview_fp_seen *history;
    size_t n_history;
    sm_apiview_doc *doc;
} sm_apiview_fingerprint;

/* SM_EPARSE "not JSON", or the fingerprint's own reason (sm_fp_from_cjson). */
int sm_apiview_fingerprint_decode(const char *json, size_t len, sm_apiview_fingerprint *out,
                                  sm_error *err);
void sm_apiview_fingerprint_fini(sm_apiview_fingerprint *f);

/* GET /api/schedules: the recurring runs. */
typedef struct sm_apiview_schedule {
    const char *id, *name, *cron;             /* NULL when absent */
    double every_s, next_ms;                  /* NaN when absent */
    bool has_last_run;                        /* "last_run" is an object */
    const char *last_run_id, *last_run_state; /* NULL when absent */
    double runs;                              /* 0 when absent */
    bool paused;
} sm_apiview_schedule;

typedef struct sm_apiview_schedules {
    sm_apiview_schedule *v;
    size_t n;
    sm_apiview_doc *doc;
} sm_apiview_schedules;

/* SM_EPARSE "no \"schedules\" list" (not JSON included). */
int sm_apiview_schedules_decode(const char *json, size_t len, sm_apiview_schedules *out,
                                sm_error *err);
void sm_apiview_schedules_fini(sm_apiview_schedules *s);

/* The answer of POST /api/schedules and of POST /api/schedules/ID/webhook-secret. */
typedef struct sm_apiview_schedule_made {
    const char *id, *webhook_secret; /* NULL when absent */
    double next_ms;                  /* 0 when absent */
    sm_apiview_doc *doc;
} sm_apiview_schedule_made;

/* Whatever the answer holds, with nothing when it is not JSON: never fails. */
void sm_apiview_schedule_made_decode(const char *json, size_t len, sm_apiview_schedule_made *out);
void sm_apiview_schedule_made_fini(sm_apiview_schedule_made *m);

/* The body of POST /api/schedules. */
typedef struct sm_apiview_schedule_req {
    const char *name;
    const char *spec; /* a spec's text (checked already: sm_cli_spec_load), or NULL */
    size_t spec_len;
    const char *preset;       /* without a spec */
    const char *every, *cron; /* every when not NULL, else cron */
    const char *hosts;        /* NULL or "all": the spec's or the preset's own; else "a,b" */
    const char *webhook;      /* may be NULL */
} sm_apiview_schedule_req;

/* 0 and a malloc'd compact text in *body; SM_ENOMEM (a spec that does not parse too). */
int sm_apiview_schedule_request(const sm_apiview_schedule_req *r, char **body, sm_error *err);

/* POST /api/runs/ID/experiments (the plan: its "plan") and GET /api/runs/ID/experiment (the
 * answer: its "suspects"), one view for both. Strings "" when absent, run NULL when the plan
 * started none; figures NaN when absent (n_* 0). */
typedef struct sm_apiview_suspect {
    const char *item, *label, *host_value, *fleet_value;
    const char *treatment; /* NULL: untested */
    const char *verdict;   /* the answer's; "" in a plan */
    const char *why;       /* the answer's why, or the plan's why_untested */
    double share, lo, hi, control, treated, fleet;
    double n_control, n_treated, n_fleet;
    /* The reverse on a fleet host: host and treatment (NULL: none), and, in an answer, its
     * verdict, why, the share of the gap it opened with its interval, and its medians (the
     * fleet host's control and treated). why_no_reverse "" when there is nothing to say. */
    const char *rev_host, *rev_treatment, *rev_verdict, *rev_why, *why_no_reverse;
    double rev_share, rev_lo, rev_hi, rev_control, rev_treated;
} sm_apiview_suspect;

typedef struct sm_apiview_experiment {
    const char *run, *explains, *host, *test, *unit, *state, *summary;
    double jobs_max;
    sm_apiview_suspect *v;
    size_t n;
    sm_apiview_doc *doc;
} sm_apiview_experiment;

/* SM_EPARSE "no \"plan\" or \"suspects\" list" (not JSON included). */
int sm_apiview_experiment_decode(const char *json, size_t len, sm_apiview_experiment *out,
                                 sm_error *err);
void sm_apiview_experiment_fini(sm_apiview_experiment *x);
/* The body of POST /api/runs/ID/experiments: {} or {"host","test"} (either may be NULL). */
int sm_apiview_experiment_request(const char *host, const char *test, char **body, sm_error *err);

#endif
