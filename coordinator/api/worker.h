/* The report worker: one thread that answers the routes built off the loop (routes.h's
 * off_loop: a run's table and anomalies, compare, trends, the grid) and the cell part of
 * /metrics, over a read-only store connection of its own and the report cache it shares with
 * the loop, so that the loop keeps answering polls while a report is computed.
 *
 * Thread rules: sm_api_worker_start, _submit, _metrics, _forget, _take and _stop are the
 * loop's (one thread); the worker's thread touches neither the control core nor the writer's
 * connection, only its reader, the shared cache (thread-safe) and its queues (a mutex). */
#ifndef SM_COORD_API_WORKER_H
#define SM_COORD_API_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coordinator/reports/cache.h"
#include "proto/err.h"

/* Requests waiting for the worker at most (the one it builds not counted): past it a request
 * is answered 503 at once rather than queued behind minutes of reports. */
#define SM_API_WORKER_QUEUE_MAX 64
/* /metrics' cells are built again when older than this, or when a report changed since. */
#define SM_API_METRICS_MAX_AGE_MS 5000

typedef struct sm_api_worker sm_api_worker;

typedef struct sm_api_worker_cfg {
    const char *db_path; /* the writer's database: opened again read-only */
    /* The cache the loop's reports use (sm_report_cache_new, deferred); the loop frees it
     * after sm_api_worker_stop. */
    sm_report_cache *cache;
    uint64_t memory_limit; /* a report's bound, as sm_reports' (--report-memory; 0: default) */
    size_t queue_max;      /* 0: SM_API_WORKER_QUEUE_MAX */
    /* Called on the worker's thread when an answer is ready: it must be thread-safe
     * (lws_cancel_service). May be NULL. */
    void (*wake)(void *arg);
    void *wake_arg;
} sm_api_worker_cfg;

/* A finished answer, as sm_api_handle gives it: status, resp (malloc'd, the taker's) of len
 * bytes, its static media type. */
typedef struct sm_api_answer {
    uint64_t ticket;
    int status;
    char *resp;
    size_t len;
    const char *ctype;
} sm_api_answer;

/* Opens the reader and starts the thread; SM_EINVAL/SM_ESYS (the reader: err says why),
 * SM_ENOMEM. *w set on success only. */
int sm_api_worker_start(sm_api_worker **w, const sm_api_worker_cfg *cfg, sm_error *err);

/* Queues GET path?query (query may be NULL; the token was checked by the caller). Returns 0
 * with *ticket (never 0) that its answer will carry, or the HTTP status to answer now with its
 * {"error"} body in *resp: 503 when SM_API_WORKER_QUEUE_MAX requests wait already, 400 for a
 * path or query too long to queue, 500 for a route not marked off_loop (routes.h; a path no
 * route has is queued, for the worker's 404) and out of memory. */
int sm_api_worker_submit(sm_api_worker *w, const char *path, const char *query, uint64_t *ticket,
                         char **resp, size_t *len);

/* The request's connection closed: its answer will never be taken (dropped from the queue,
 * or freed when it comes out). Unknown tickets, 0 and a NULL w do nothing. */
void sm_api_worker_forget(sm_api_worker *w, uint64_t ticket);

/* Takes the oldest finished answer: true with *out (sm_api_answer_fini it), false when none. */
bool sm_api_worker_take(sm_api_worker *w, sm_api_answer *out);
void sm_api_answer_fini(sm_api_answer *a);

/* GET /metrics, loop_text (taken; NULL counts as out of memory) being the part the loop built
 * (sm_api_metrics_loop_text). Answered now, 200 with the text in *resp, when the cells the
 * worker built last are fresh (no report changed since, younger than
 * SM_API_METRICS_MAX_AGE_MS); else queued as sm_api_worker_submit does (0 and *ticket, or a
 * 503/500 refusal) but ahead of the other requests, the worker appending cells it builds then
 * and keeps for the next scrapes.
 * So a scrape right after a run ended tells it, and the loop never builds the cells. */
int sm_api_worker_metrics(sm_api_worker *w, char *loop_text, uint64_t *ticket, char **resp,
                          size_t *len);

/* Requests waiting and the one being built (for tests and /healthz). */
size_t sm_api_worker_pending(sm_api_worker *w);

/* Stops the thread after the report it is building, joins it, and frees every request and
 * answer left (their connections are closing with the loop). NULL does nothing. */
void sm_api_worker_stop(sm_api_worker *w);

#endif
