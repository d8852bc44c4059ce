/* The coordinator's HTTP routes, independent of the HTTP server that carries them. */
#ifndef SM_COORD_API_H
#define SM_COORD_API_H

#include <stdbool.h>
#include <stddef.h>

#include "coordinator/control/control.h"
#include "coordinator/recurring/webhook.h"
#include "coordinator/reports/reports.h"
#include "coordinator/store/store.h"
#include "proto/envelope.h"

typedef struct sm_api_ctx {
    sm_store *st;
    sm_control *ctl;
    const sm_rejects *rejects;
    const char *token; /* the operate token; NULL: no call needs a token (there is none) */
    const char *const *read_tokens; /* read-only tokens (routes.h, sm_tokens), with token only */
    size_t n_read_tokens;
    /* The listener is off loopback: reads need the token too (sm_api_authorized). A zeroed
     * context is a loopback one. */
    bool off_loopback;
    /* Called once after a request queued jobs, with the hosts they went to (each once), so
     * that their held polls can be answered now. */
    void (*jobs_queued)(void *arg, const char *const *hosts, size_t n);
    void *arg;
    /* The live-event hub's counters for /healthz (ws_clients, ws_rejected, ws_cut_slow); NULL
     * when there is none. */
    const uint64_t *ws_counters;
    /* The HTTP listener's: open connections, then requests refused for their Host, Origin,
     * media type, token, method, size, slowness and for a full listener; NULL when none. */
    const uint64_t *http_counters;
    /* The runs' tables and anomalies (reports.st is st; sm_api_cache_free frees what it
     * keeps). */
    sm_reports reports;
    /* Webhooks: the fleet key the schedules' secrets derive from (NULL: a schedule with a
     * webhook is refused, having no secret to sign with); the destination policy (NULL:
     * sm_webhook_policy_init's); and where a new webhook's "ping" delivery is posted, as
     * sm_webhook_post does with webhook_ctx its sm_webhook (NULL: none is sent). */
    const uint8_t *webhook_key;
    const sm_addr_policy *webhook_allow;
    uint64_t (*webhook_post)(void *ctx, const sm_webhook_dest *to, const char *event,
                             const char *body);
    void *webhook_ctx;
    /* How the schedule's last delivery ended, as sm_webhook_last with webhook_ctx (NULL: not
     * known); GET /api/schedules/{id} shows it as "webhook_status". */
    bool (*webhook_status)(void *ctx, uint64_t schedule, char *out, size_t cap, int64_t *at_ms);
} sm_api_ctx;

/* One request, dispatched by the route table (routes.h): 404 "no such endpoint" for a path no
 * route has, 405 "use GET or POST" for a method the path does not answer, 401 field
 * "Authorization" without the token its scope needs, 403 with a read token on a write, 400 for a
 * path parameter that does not parse. method "GET"/"POST"/"DELETE", path without query, query
 * ("format=csv&x=y", may be NULL), the Authorization header value (or NULL), the body. Returns the
 * HTTP status, a malloc'd body in *resp and its media type in *content_type (a static string:
 * application/json unless a table was asked for as CSV or Markdown). Every error is
 * {"error","field"} with a 4xx status; a store failure is a 500. */
int sm_api_handle(sm_api_ctx *a, const char *method, const char *path, const char *query,
                  const char *auth, const char *body, size_t len, char **resp, size_t *resp_len,
                  const char **content_type);

/* What the hub of live events tells, by the same encoders as the routes above, so that a page
 * sees the same objects either way. The bodies of GET /api/agents and GET /api/runs (NULL with
 * err set when the store fails or memory runs out); one item of those lists for a store row
 * (NULL when out of memory); the body of GET /api/runs/{id}/anomalies (NULL when the run is
 * not there or it cannot be computed). */
char *sm_api_agents_body(sm_api_ctx *a, sm_error *err);
char *sm_api_runs_body(sm_api_ctx *a, sm_error *err);
char *sm_api_agent_item(sm_api_ctx *a, const sm_agent_row *row);
char *sm_api_run_item(const sm_run_row *r);
char *sm_api_anomalies_body(sm_api_ctx *a, uint64_t run_id);

/* A run's stored results or state changed (the control core's SM_CHANGE_JOB or SM_CHANGE_RUN
 * of that run): its cached tables and anomalies are dropped, and so are the anomalies that
 * took it as their baseline (named, or the default one of a later run). */
void sm_api_run_changed(sm_api_ctx *a, uint64_t run_id);
/* Its state changed (SM_CHANGE_RUN): as above, and an experiment's parent run too. */
void sm_api_run_state_changed(sm_api_ctx *a, uint64_t run_id);
/* On the loop's tick, between transactions: each ended experiment not yet followed takes its
 * search on, starting its next stage when it has one (experiments.c). */
void sm_api_experiments_follow(sm_api_ctx *a);
void sm_api_cache_free(sm_api_ctx *a);

/* GET /metrics in two parts, for a carrier that builds the cells off the loop (worker.h): the
 * part from the control core (counters, agents, the runs' jobs), and the cell families, which
 * read the store and the reports alone. Malloc'd Prometheus text; NULL out of memory. The
 * route gives both in one. */
char *sm_api_metrics_loop_text(sm_api_ctx *a);
char *sm_api_metrics_cells_text(sm_api_ctx *a);

/* Constant-time comparison of a presented bearer token with the expected one. */
bool sm_api_token_ok(const char *expected, const char *authorization);

#endif
