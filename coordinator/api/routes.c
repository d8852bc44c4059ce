/* The route table, the lookup the listener and the dispatcher share, the one token check, and
 * the dispatcher sm_api_handle that calls a route's handler with its parsed parameters. */
#include "coordinator/api/routes.h"
#include "coordinator/api/internal.h"

#include <stdio.h>
#include <string.h>

#include "coordinator/model/spec.h"
#include "coordinator/schema/query.h"

/* ---- handlers: the table's uniform shape over each route's function ---- */

#define HANDLER(fn)                                                                                \
    static int fn(sm_api_ctx *a, const sm_route_req *r, char **resp, size_t *len,                  \
                  const char **ctype)

HANDLER(health)
{
    (void)r, (void)ctype;
    return sm_api_get_health(a, resp, len);
}

HANDLER(metrics)
{
    (void)r;
    return sm_api_get_metrics(a, resp, len, ctype);
}

HANDLER(agents)
{
    (void)r, (void)ctype;
    return sm_api_get_agents(a, resp, len);
}

HANDLER(fingerprint)
{
    (void)ctype;
    return sm_api_get_fingerprint(a, r->name, resp, len);
}

HANDLER(agent_jobs)
{
    (void)ctype;
    return sm_api_get_agent_jobs(a, r->name, r->query, resp, len);
}

HANDLER(fp_diff)
{
    (void)ctype;
    return sm_api_get_fp_diff(a, r->query, resp, len);
}

HANDLER(presets)
{
    (void)a, (void)r, (void)ctype;
    return sm_api_reply(resp, len, 200, sm_presets_encode());
}

HANDLER(post_jobs)
{
    (void)ctype;
    return sm_api_post_jobs(a, r->body, r->len, resp, len);
}

HANDLER(job)
{
    (void)ctype;
    return sm_api_get_job(a, r->id, resp, len);
}

HANDLER(runs)
{
    (void)r, (void)ctype;
    return sm_api_get_runs(a, resp, len);
}

HANDLER(post_run)
{
    (void)ctype;
    return sm_api_post_run(a, r->body, r->len, resp, len);
}

HANDLER(again)
{
    (void)ctype;
    return sm_api_post_again(a, r->id, r->body, r->len, resp, len);
}

HANDLER(post_experiment)
{
    (void)ctype;
    return sm_api_post_experiment(a, r->id, r->body, r->len, resp, len);
}

HANDLER(experiment)
{
    (void)ctype;
    return sm_api_get_experiment(a, r->id, resp, len);
}

HANDLER(run)
{
    (void)ctype;
    return sm_api_get_run(a, r->id, resp, len);
}

HANDLER(table)
{
    return sm_api_get_report(a, r->id, true, r->query, resp, len, ctype);
}

HANDLER(anomalies)
{
    return sm_api_get_report(a, r->id, false, r->query, resp, len, ctype);
}

HANDLER(run_jobs)
{
    (void)ctype;
    return sm_api_get_run_jobs(a, r->id, r->query, resp, len);
}

HANDLER(run_cell)
{
    (void)ctype;
    return sm_api_get_run_cell(a, r->id, r->cell, r->query, resp, len);
}

HANDLER(cancel)
{
    (void)ctype;
    return sm_api_cancel_run(a, r->id, resp, len);
}

HANDLER(compare)
{
    (void)ctype;
    return sm_api_get_compare(a, r->query, resp, len);
}

HANDLER(trends)
{
    (void)ctype;
    return sm_api_get_trends(a, r->query, resp, len);
}

HANDLER(grid)
{
    (void)r, (void)ctype;
    return sm_api_get_grid(a, resp, len);
}

HANDLER(schedules)
{
    (void)ctype;
    return sm_api_schedules_list(a, r->caller == SM_CALLER_OPERATE, resp, len);
}

HANDLER(post_schedule)
{
    (void)ctype;
    return sm_api_schedule_create(a, r->body, r->len, resp, len);
}

HANDLER(schedule)
{
    (void)ctype;
    return sm_api_schedule_get(a, r->id, r->caller == SM_CALLER_OPERATE, resp, len);
}

HANDLER(delete_schedule)
{
    (void)ctype;
    return sm_api_schedule_delete(a, r->id, resp, len);
}

HANDLER(pause)
{
    (void)ctype;
    return sm_api_schedule_pause(a, r->id, true, resp, len);
}

HANDLER(resume)
{
    (void)ctype;
    return sm_api_schedule_pause(a, r->id, false, resp, len);
}

HANDLER(webhook_secret)
{
    (void)ctype;
    return sm_api_schedule_rotate_secret(a, r->id, resp, len);
}

/* ---- the table ---- */

/* scope: a GET reads, any other method changes state. off_loop marks the reports the worker
 * builds off the loop (a cell's figures read its run's table too; a page of a run's jobs decodes
 * up to 1,000 results). /metrics is not one (it reads the control core), but a carrier
 * with a worker has it build the cells (sm_api_worker_metrics). The fingerprints' diff reads
 * at most 16 rows: not worth a thread hop. POST .../again reads its run's anomalies, which the
 * worker builds first (warm), and so does POST .../experiments; an experiment's report reads two
 * runs. A host's latest jobs decode up to 100 results. */
const sm_route sm_routes[] = {
    {"/healthz", "GET", 0, SM_ROUTE_READ, health, NULL, false, NULL},
    {"/metrics", "GET", 0, SM_ROUTE_READ, metrics, NULL, false, NULL},
    {"/api/agents", "GET", 0, SM_ROUTE_READ, agents, NULL, false, NULL},
    {"/api/agents/{name}/fingerprint", "GET", 0, SM_ROUTE_READ, fingerprint, NULL, false, NULL},
    {"/api/agents/{name}/jobs", "GET", 0, SM_ROUTE_READ, agent_jobs, NULL, true, NULL},
    {"/api/fingerprints/diff", "GET", 0, SM_ROUTE_READ, fp_diff, NULL, false, NULL},
    {"/api/presets", "GET", 0, SM_ROUTE_READ, presets, NULL, false, NULL},
    {"/api/jobs", "POST", SM_SPEC_BODY_MAX, SM_ROUTE_WRITE, post_jobs, NULL, false, NULL},
    {"/api/jobs/{id}", "GET", 0, SM_ROUTE_READ, job, "job", false, NULL},
    {"/api/runs", "GET", 0, SM_ROUTE_READ, runs, NULL, false, NULL},
    {"/api/runs", "POST", SM_SPEC_BODY_MAX, SM_ROUTE_WRITE, post_run, NULL, false, NULL},
    {"/api/runs/{id}", "GET", 0, SM_ROUTE_READ, run, "run", false, NULL},
    {"/api/runs/{id}/table", "GET", 0, SM_ROUTE_READ, table, "run", true, NULL},
    {"/api/runs/{id}/anomalies", "GET", 0, SM_ROUTE_READ, anomalies, "run", true, NULL},
    {"/api/runs/{id}/jobs", "GET", 0, SM_ROUTE_READ, run_jobs, "run", true, NULL},
    {"/api/runs/{id}/cells/{cell}", "GET", 0, SM_ROUTE_READ, run_cell, "run", true, NULL},
    {"/api/runs/{id}/cancel", "POST", SM_SMALL_BODY_MAX, SM_ROUTE_WRITE, cancel, "run", false,
     NULL},
    {"/api/runs/{id}/again", "POST", SM_SMALL_BODY_MAX, SM_ROUTE_WRITE, again, "run", false,
     "anomalies"},
    {"/api/runs/{id}/experiments", "POST", SM_SMALL_BODY_MAX, SM_ROUTE_WRITE, post_experiment,
     "run", false, "anomalies"},
    {"/api/runs/{id}/experiment", "GET", 0, SM_ROUTE_READ, experiment, "run", true, NULL},
    {"/api/compare", "GET", 0, SM_ROUTE_READ, compare, NULL, true, NULL},
    {"/api/trends", "GET", 0, SM_ROUTE_READ, trends, NULL, true, NULL},
    {"/api/grid", "GET", 0, SM_ROUTE_READ, grid, NULL, true, NULL},
    {"/api/schedules", "GET", 0, SM_ROUTE_READ, schedules, NULL, false, NULL},
    {"/api/schedules", "POST", SM_SPEC_BODY_MAX, SM_ROUTE_WRITE, post_schedule, NULL, false, NULL},
    {"/api/schedules/{id}", "GET", 0, SM_ROUTE_READ, schedule, "schedule", false, NULL},
    {"/api/schedules/{id}", "DELETE", 0, SM_ROUTE_WRITE, delete_schedule, "schedule", false, NULL},
    {"/api/schedules/{id}/pause", "POST", SM_SMALL_BODY_MAX, SM_ROUTE_WRITE, pause, "schedule",
     false, NULL},
    {"/api/schedules/{id}/resume", "POST", SM_SMALL_BODY_MAX, SM_ROUTE_WRITE, resume, "schedule",
     false, NULL},
    {"/api/schedules/{id}/webhook-secret", "POST", SM_SMALL_BODY_MAX, SM_ROUTE_WRITE,
     webhook_secret, "schedule", false, NULL},
};
const size_t sm_routes_n = sizeof sm_routes / sizeof sm_routes[0];

/* Every path outside the API is the dashboard's: a GET anyone may make. */
static const sm_route web_file = {"/*", "GET", 0, SM_ROUTE_PUBLIC, NULL, NULL, false, NULL};

/* ---- matching ---- */

/* A parameter's text in the path: [at, at + len). */
typedef struct param {
    const char *tag; /* "{id}" ... as in the pattern, tag_len long */
    size_t tag_len;
    const char *at;
    size_t len;
} param;

#define PARAMS_MAX 2

/* Whether path fits pattern segment by segment; the parameters' text into ps (np of them). */
static bool match(const char *pattern, const char *path, param *ps, size_t *np)
{
    *np = 0;
    while (*pattern && *path) {
        if (*pattern != '{') {
            if (*pattern++ != *path++)
                return false;
            continue;
        }
        const char *close = strchr(pattern, '}');
        const size_t seg = strcspn(path, "/");
        if (!close || *np == PARAMS_MAX)
            return false;
        const size_t tag_len = (size_t)(close - pattern) + 1;
        /* {cell} names what already exists: an empty one is no path of ours. */
        if (seg == 0 && strncmp(pattern, "{cell}", tag_len) == 0)
            return false;
        ps[(*np)++] = (param){pattern, tag_len, path, seg};
        pattern = close + 1;
        path += seg;
    }
    /* A parameter may end the path empty: "/api/runs/" is {id} "". */
    if (*pattern == '{' && !*path) {
        const char *close = strchr(pattern, '}');
        if (!close || close[1] || *np == PARAMS_MAX || strcmp(pattern, "{cell}") == 0)
            return false;
        ps[(*np)++] = (param){pattern, (size_t)(close - pattern) + 1, path, 0};
        pattern = close + 1;
    }
    return !*pattern && !*path;
}

int sm_routes_find(const char *path, const char *method, bool with_web, const sm_route **out,
                   char *allow, size_t cap)
{
    const sm_route *found = NULL;
    size_t used = 0;
    if (cap)
        allow[0] = '\0';
    for (size_t i = 0; i < sm_routes_n; i++) {
        param ps[PARAMS_MAX];
        size_t np;
        if (!match(sm_routes[i].pattern, path, ps, &np))
            continue;
        if (!found && strcmp(sm_routes[i].method, method) == 0)
            found = &sm_routes[i];
        if (cap > used) {
            int n =
                snprintf(allow + used, cap - used, "%s%s", used ? ", " : "", sm_routes[i].method);
            used += n > 0 ? (size_t)n : 0;
        }
    }
    if (!used && with_web && strncmp(path, "/api/", 5) != 0 && strcmp(path, "/api") != 0) {
        found = strcmp(method, "GET") == 0 ? &web_file : NULL;
        snprintf(allow, cap, "%s", web_file.method);
        used = 1;
    }
    if (!used)
        return 404;
    if (!found)
        return 405;
    *out = found;
    return 0;
}

sm_caller sm_api_caller(const sm_tokens *t, const char *authorization)
{
    if (!t->operate)
        return SM_CALLER_OPERATE;
    /* Every comparison is made, the operate one included, whichever matched. */
    bool operate = sm_api_token_ok(t->operate, authorization), read = false;
    for (size_t i = 0; i < t->n_read; i++)
        read |= sm_api_token_ok(t->read[i], authorization);
    return operate ? SM_CALLER_OPERATE : read ? SM_CALLER_READ : SM_CALLER_NONE;
}

int sm_api_access(const sm_tokens *t, sm_route_scope scope, bool loopback,
                  const char *authorization)
{
    if (scope == SM_ROUTE_PUBLIC)
        return 0;
    const sm_caller c = sm_api_caller(t, authorization);
    if (scope == SM_ROUTE_READ)
        return c != SM_CALLER_NONE || loopback ? 0 : 401;
    return c == SM_CALLER_OPERATE ? 0 : c == SM_CALLER_READ ? 403 : 401;
}

/* ---- the dispatcher ---- */

/* The route's parameters parsed into req; 0, or the 400 to answer. */
static int parse_params(const sm_route *rt, const char *path, sm_route_req *req, char **resp,
                        size_t *len)
{
    param ps[PARAMS_MAX];
    size_t np;
    match(rt->pattern, path, ps, &np);
    for (size_t i = 0; i < np; i++) {
        const param *p = &ps[i];
        if (strncmp(p->tag, "{id}", p->tag_len) == 0) {
            if (!sm_query_id(p->at, p->len, &req->id)) {
                char msg[64];
                snprintf(msg, sizeof msg, "%s id: expected a number", rt->what);
                return sm_api_reply_error(resp, len, 400, msg, "id");
            }
        } else if (strncmp(p->tag, "{cell}", p->tag_len) == 0) {
            if (!sm_query_id(p->at, p->len, &req->cell) || req->cell > UINT32_MAX)
                return sm_api_reply_error(resp, len, 400, "cell: expected a number", "cell");
        } else {
            /* {name}: bounded here, checked by its handler */
            if (p->len >= sizeof req->name)
                return sm_api_reply_error(resp, len, 400, "agent name: longer than 64 characters",
                                          "name");
            memcpy(req->name, p->at, p->len);
            req->name[p->len] = '\0';
        }
    }
    return 0;
}

int sm_api_handle(sm_api_ctx *a, const char *method, const char *path, const char *query,
                  const char *auth, const char *body, size_t len, char **resp, size_t *resp_len,
                  const char **content_type)
{
    *content_type = "application/json";
    const sm_route *rt = NULL;
    char allow[SM_ROUTE_ALLOW_MAX];
    const int found = sm_routes_find(path, method, false, &rt, allow, sizeof allow);
    if (found == 404)
        return sm_api_reply_error(resp, resp_len, 404, "no such endpoint", NULL);
    if (found == 405) {
        /* "GET, POST" -> "use GET or POST" */
        char msg[64] = "use ";
        for (const char *p = allow; *p;) {
            const size_t n = strcspn(p, ",");
            const size_t used = strlen(msg);
            snprintf(msg + used, sizeof msg - used, "%s%.*s", used > 4 ? " or " : "", (int)n, p);
            p += n;
            p += strspn(p, ", ");
        }
        return sm_api_reply_error(resp, resp_len, 405, msg, NULL);
    }
    /* The listener checked the token at the head already; this keeps the routes safe on their
     * own, as the unit tests and any other carrier call them. */
    const sm_tokens t = {a->token, a->read_tokens, a->n_read_tokens};
    const int denied = sm_api_access(&t, rt->scope, !a->off_loopback, auth);
    if (denied)
        return sm_api_reply_error(resp, resp_len, denied,
                                  denied == 403 ? SM_API_READ_ONLY : SM_API_NEED_TOKEN,
                                  "Authorization");
    sm_route_req req = {
        .query = query, .body = body, .len = len, .caller = sm_api_caller(&t, auth)};
    const int bad = parse_params(rt, path, &req, resp, resp_len);
    if (bad)
        return bad;
    return rt->handler(a, &req, resp, resp_len, content_type);
}
