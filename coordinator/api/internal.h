/* What the API's files share: the reply helpers and the handlers the route table (routes.c)
 * calls. Not for callers: they use api.h and routes.h. */
#ifndef SM_COORD_API_INT_H
#define SM_COORD_API_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/api/api.h"
#include "coordinator/schema/query.h"

/* Hands json (malloc'd; NULL: out of memory, then a 500) to the caller as *resp and *len;
 * returns status (500 when json was NULL). */
int sm_api_reply(char **resp, size_t *len, int status, char *json);

/* An {"error","field"} body with status; field may be NULL. Returns status (or 500). */
int sm_api_reply_error(char **resp, size_t *len, int status, const char *msg, const char *field);

/* GET /api/runs/{id}/table (table true) or /anomalies with its query (may be NULL): from the
 * report cache when the run has ended and was asked the same before, else computed and kept
 * when the run (and its baseline) had ended. Returns the HTTP status, as sm_api_handle. */
int sm_api_get_report(sm_api_ctx *a, uint64_t id, bool table, const char *query, char **resp,
                      size_t *len, const char **ctype);

/* reports.c: GET /api/compare?a=RUN&b=RUN[&disturbed=include]: the cells two runs share
 * side by side (sm_compare_json), 400 for a missing or bad id or a == b, 404 for an unknown
 * run, 409 when they share no cell (the error names each run's tests). */
int sm_api_get_compare(sm_api_ctx *a, const char *query, char **resp, size_t *len);

/* fingerprints.c: GET /api/agents/{name}/fingerprint (the latest fingerprint and its history; 404
 * for an unknown agent or one that sent none) and GET /api/fingerprints/diff?hosts=h1,h2[,...]
 * (2 to 16 hosts, each once: the side by side of their latest fingerprints; 404 naming a host
 * without one). Return the HTTP status, as sm_api_handle. */
int sm_api_get_fingerprint(sm_api_ctx *a, const char *name, char **resp, size_t *len);
int sm_api_get_fp_diff(sm_api_ctx *a, const char *query, char **resp, size_t *len);

/* jobs.c: GET /api/jobs/{id} (the full job resource; 404 for an unknown job) and GET
 * /api/runs/{id}/jobs?limit=&after=&host=&cell=&state= (the run's jobs in run order, paged by
 * the cursor after; 400 naming a bad parameter, 404 for an unknown run). Return the HTTP
 * status, as sm_api_handle. */
int sm_api_get_job(sm_api_ctx *a, uint64_t id, char **resp, size_t *len);
int sm_api_get_run_jobs(sm_api_ctx *a, uint64_t run_id, const char *query, char **resp,
                        size_t *len);
/* GET /api/agents/{name}/jobs?limit=N: the host's latest jobs, newest first, as GET
 * /api/jobs/{id} gives each (limit 1 to SM_STORE_AGENT_JOBS_MAX, default
 * SM_API_AGENT_JOBS_DEFAULT); 404 for a name no agent registered under. */
#define SM_API_AGENT_JOBS_DEFAULT 20
int sm_api_get_agent_jobs(sm_api_ctx *a, const char *name, const char *query, char **resp,
                          size_t *len);
/* jobs.c: GET /api/runs/{id}/cells/{cell}[?disturbed=include]: the cell's every job in run
 * order with its headline value, warm-up and disturbed marks and whether the table counts it,
 * and the median, CI and n the run's table shows for it (null before it has them). 404 for an
 * unknown run or cell. Returns the HTTP status. */
int sm_api_get_run_cell(sm_api_ctx *a, uint64_t run_id, uint64_t cell, const char *query,
                        char **resp, size_t *len);
/* metrics.c: GET /metrics, the Prometheus text format (docs/metrics.md); *ctype is its
 * media type. Returns the HTTP status, as sm_api_handle. */
int sm_api_get_metrics(sm_api_ctx *a, char **resp, size_t *len, const char **ctype);

/* trends.c: GET /api/trends?host=&test=[&metric=][&from=&to=][&limit=][&disturbed=include]
 * (sm_trends_json
 * over the ended runs; 400 naming a bad parameter) and GET /api/grid (sm_grid_json over the
 * latest 100 ended runs). Return the HTTP status, as sm_api_handle. */
int sm_api_get_trends(sm_api_ctx *a, const char *query, char **resp, size_t *len);
int sm_api_get_grid(sm_api_ctx *a, char **resp, size_t *len);

/* schedules.c: GET /api/schedules (the list), POST /api/schedules (create one: 201 with its id
 * and next_ms, and its webhook's secret once when it has one; 400 naming a bad field, a webhook
 * to an address --webhook-allow refuses too), GET /api/schedules/{id} (one with its last runs and
 * events), DELETE of it, and POST .../pause and .../resume (pause true or false), each answering
 * with the schedule; 404 for an unknown schedule. The token is routes.c's to check. Return the
 * HTTP status, as sm_api_handle. The reads show a webhook's URL, which may hold its receiver's
 * secret, only with show_webhook (an operate caller): "(hidden)" otherwise. */
int sm_api_schedules_list(sm_api_ctx *a, bool show_webhook, char **resp, size_t *len);
int sm_api_schedule_create(sm_api_ctx *a, const char *body, size_t blen, char **resp, size_t *len);
int sm_api_schedule_get(sm_api_ctx *a, uint64_t id, bool show_webhook, char **resp, size_t *len);
int sm_api_schedule_delete(sm_api_ctx *a, uint64_t id, char **resp, size_t *len);
int sm_api_schedule_pause(sm_api_ctx *a, uint64_t id, bool pause, char **resp, size_t *len);
/* POST /api/schedules/{id}/webhook-secret: a new secret for the schedule's webhook, answered
 * once ({"id","webhook_secret"}); the old one signs nothing more. 404 for an unknown schedule,
 * 400 (field "webhook") for one without a webhook. */
int sm_api_schedule_rotate_secret(sm_api_ctx *a, uint64_t id, char **resp, size_t *len);

/* api.c: starts the run of spec (its text spec_json) in one transaction with also(a, id, arg,
 * err) when not NULL (what the caller stores beside the run), and wakes the polls of the hosts
 * it queued jobs for. 0 with *id, or the HTTP status of the error it answered (400 for a spec
 * the fleet cannot plan or an SM_EINVAL of also, 500 otherwise), nothing changed then. */
struct sm_spec;
int sm_api_start_run(sm_api_ctx *a, const char *spec_json, const struct sm_spec *spec,
                     int (*also)(sm_api_ctx *a, uint64_t id, void *arg, sm_error *err), void *arg,
                     uint64_t *id, char **resp, size_t *len);

/* experiments.c: POST /api/runs/{id}/experiments (body {} or {"host","test","suspects"}): plans
 * an experiment on one of the run's anomalies (coordinator/analysis/experiment.h) and starts
 * it as a run of its own: 201 {"run","explains","host","test","plan","jobs_max","summary"}; 200
 * with "run": null when no suspect can be tested (the plan says why of each); 404 for an
 * unknown run; 409 for a running run, an experiment, or no anomaly to explain. GET
 * /api/runs/{id}/experiment: the experiment's report (sm_reports_experiment), 404 when the run
 * is none. Return the HTTP status, as sm_api_handle. */
int sm_api_post_experiment(sm_api_ctx *a, uint64_t id, const char *body, size_t blen, char **resp,
                           size_t *len);
int sm_api_get_experiment(sm_api_ctx *a, uint64_t id, char **resp, size_t *len);

/* api.c: GET /healthz (503 when the store is failing), GET /api/agents, POST /api/jobs (201
 * with the job ids; 400 for a bad list or an unknown host, nothing queued then), GET and POST
 * /api/runs, GET /api/runs/{id} (404 for an unknown run) and POST /api/runs/{id}/cancel (409
 * for a run that ended). The token is routes.c's to check. Return the HTTP status, as
 * sm_api_handle. */
int sm_api_get_health(sm_api_ctx *a, char **resp, size_t *len);
/* POST /api/runs/{id}/again (body {} or {"cells":"unjudged"}): a run of exactly the cells run
 * id could not judge (inconclusive or failed), its spec renamed NAME-again: 201 {"run":"N"};
 * 404 unknown run, 409 while it runs, when every cell was judged or when none of those cells
 * can be planned now, 400 for another body. */
int sm_api_post_again(sm_api_ctx *a, uint64_t id, const char *body, size_t blen, char **resp,
                      size_t *len);
int sm_api_get_agents(sm_api_ctx *a, char **resp, size_t *len);
int sm_api_post_jobs(sm_api_ctx *a, const char *body, size_t blen, char **resp, size_t *len);
int sm_api_get_runs(sm_api_ctx *a, char **resp, size_t *len);
int sm_api_post_run(sm_api_ctx *a, const char *body, size_t blen, char **resp, size_t *len);
int sm_api_get_run(sm_api_ctx *a, uint64_t id, char **resp, size_t *len);
int sm_api_cancel_run(sm_api_ctx *a, uint64_t id, char **resp, size_t *len);

/* The cell families of GET /metrics from n run tables, each the JSON GET /api/runs/ID/table
 * gives (json NULL or unparsable: skipped), at most max_cells samples per family. The value
 * series are labelled run_name, host (the row), test, metric and unit (the column); the run id
 * series has no unit. The table's ratio cells ("ratios", "ratio_columns") follow in the same
 * families with metric "ratio" and unit "x", test the ratio column's label. A cell with no
 * value (n 0) has no series; a cell is flagged when its row has a flag. */
typedef struct sm_metrics_table {
    const char *run_name;
    uint64_t run_id;
    const char *json;
} sm_metrics_table;
struct sm_prom;
void sm_api_metrics_cells(struct sm_prom *p, const sm_metrics_table *t, size_t n, size_t max_cells);

#endif
