/* HTTP routes: /healthz, /api/agents, /api/jobs. */
#include "coordinator/api.h"

#include <inttypes.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coordinator/export.h"
#include "proto/api.h"
#include "proto/codec.h"
#include "proto/spec.h"
#include "proto/table.h"
#include "proto/log.h"

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int reply(char **resp, size_t *len, int status, char *json)
{
    if (!json) {
        json = strdup("{\"error\":\"out of memory\"}");
        status = 500;
    }
    *resp = json;
    *len = json ? strlen(json) : 0;
    return status;
}

static int error(char **resp, size_t *len, int status, const char *msg, const char *field)
{
    return reply(resp, len, status, sm_api_error(msg, field));
}

bool sm_api_token_ok(const char *expected, const char *authorization)
{
    static const char bearer[] = "Bearer ";
    if (!authorization || strncmp(authorization, bearer, sizeof bearer - 1) != 0)
        return false;
    const char *got = authorization + sizeof bearer - 1;
    size_t n = strlen(expected), m = strlen(got);
    /* Compare over the expected length whatever was sent, so timing says nothing of how much
     * of a guess matched; a length mismatch fails after the same work. */
    char *padded = calloc(1, n + 1);
    if (!padded)
        return false;
    memcpy(padded, got, m < n ? m : n);
    bool ok = CRYPTO_memcmp(padded, expected, n) == 0 && m == n;
    free(padded);
    return ok;
}

static int get_agents(sm_api_ctx *a, char **resp, size_t *len)
{
    sm_agent_row *rows = NULL;
    size_t n = 0;
    sm_error err = {0};
    if (sm_store_agents_list(a->st, &rows, &n, &err) != 0)
        return error(resp, len, 500, err.msg, NULL);
    sm_api_agent *out = calloc(n ? n : 1, sizeof *out);
    if (!out) {
        sm_store_agents_free(rows, n);
        return error(resp, len, 500, "out of memory", NULL);
    }
    for (size_t i = 0; i < n; i++) {
        sm_agent_status st = rows[i].status;
        int64_t seen = rows[i].last_seen_ms;
        /* The live view is in memory; the store is written only when something changes. */
        sm_control_agent_live(a->ctl, rows[i].name, &st, &seen);
        out[i] = (sm_api_agent){rows[i].name,          rows[i].boot,
                                rows[i].data_addr,     sm_agent_status_name(st),
                                rows[i].labels_json,   rows[i].facts_json,
                                rows[i].first_seen_ms, seen};
    }
    int status = reply(resp, len, 200, sm_api_agents(out, n));
    free(out);
    sm_store_agents_free(rows, n);
    return status;
}

static int get_job(sm_api_ctx *a, const char *id_text, char **resp, size_t *len)
{
    char *end;
    unsigned long long id = strtoull(id_text, &end, 10);
    if (!*id_text || *end || id_text[0] == '-')
        return error(resp, len, 400, "job id: expected a number", "id");
    sm_job_row row;
    sm_error err = {0};
    if (sm_store_job_get(a->st, id, &row, &err) != 0)
        return error(resp, len, 404, "no such job", "id");
    char *result = NULL;
    sm_store_result_get(a->st, id, row.attempt, &result, &err);
    sm_api_job j = {row.id,         row.host,       sm_job_state_name(row.state),
                    row.reason,     row.attempt,    row.params_json,
                    result,         row.created_ms, row.assigned_ms,
                    row.started_ms, row.finished_ms};
    int status = reply(resp, len, 200, sm_api_job_encode(&j));
    free(result);
    sm_job_row_fini(&row);
    return status;
}

static int post_jobs(sm_api_ctx *a, const char *body, size_t blen, char **resp, size_t *len)
{
    sm_api_job_req *reqs = NULL;
    size_t n = 0;
    char field[96];
    sm_error err = {0};
    if (sm_api_jobs_parse(body, blen, &reqs, &n, field, sizeof field, &err) != 0)
        return error(resp, len, 400, err.msg, field);
    uint64_t *ids = calloc(n, sizeof *ids);
    if (!ids) {
        free(reqs);
        return error(resp, len, 500, "out of memory", NULL);
    }
    /* All or nothing: an unknown host anywhere in the list queues none of them. */
    int status = 0;
    for (size_t i = 0; i < n && !status; i++) {
        sm_agent_status st;
        int64_t seen;
        if (!sm_control_agent_live(a->ctl, reqs[i].host, &st, &seen)) {
            snprintf(field, sizeof field, "jobs[%zu].host", i);
            char msg[160];
            snprintf(msg, sizeof msg, "jobs[%zu].host: '%s' is not a registered agent", i,
                     reqs[i].host);
            status = error(resp, len, 400, msg, field);
        }
    }
    if (!status && sm_store_begin(a->st, &err) != 0)
        status = error(resp, len, 500, err.msg, NULL);
    for (size_t i = 0; i < n && !status; i++)
        if (sm_control_submit(a->ctl, reqs[i].host, &reqs[i].params, now_ms(), &ids[i], &err))
            status = error(resp, len, 500, err.msg, NULL);
    if (!status && sm_store_commit(a->st, &err) != 0)
        status = error(resp, len, 500, err.msg, NULL);
    if (status && status >= 500)
        sm_store_rollback(a->st);
    if (!status && a->jobs_queued) {
        /* Each host once; the lookup is linear, but only over hosts already listed. */
        const char **hosts = calloc(n, sizeof *hosts);
        size_t nh = 0;
        for (size_t i = 0; hosts && i < n; i++) {
            size_t k = 0;
            while (k < nh && strcmp(hosts[k], reqs[i].host) != 0)
                k++;
            if (k == nh)
                hosts[nh++] = reqs[i].host;
        }
        if (hosts)
            a->jobs_queued(a->arg, hosts, nh);
        free(hosts);
    }
    if (!status) {
        sm_log(LOG_INFO, "SM-JOBS-QUEUED", "%zu jobs queued", n);
        status = reply(resp, len, 201, sm_api_job_ids(ids, n));
    }
    free(ids);
    free(reqs);
    return status;
}

static int get_health(sm_api_ctx *a, char **resp, size_t *len)
{
    sm_control_stats s;
    sm_control_get_stats(a->ctl, &s);
    uint64_t results = 0;
    sm_error err = {0};
    if (sm_store_result_count(a->st, &results, &err) != 0)
        return error(resp, len, 500, err.msg, NULL);
    sm_agent_row *rows = NULL;
    size_t n = 0, online = 0;
    if (sm_store_agents_list(a->st, &rows, &n, &err) != 0)
        return error(resp, len, 500, err.msg, NULL);
    for (size_t i = 0; i < n; i++) {
        sm_agent_status st = rows[i].status;
        int64_t seen;
        sm_control_agent_live(a->ctl, rows[i].name, &st, &seen);
        online += st != SM_AGENT_LOST;
    }
    sm_store_agents_free(rows, n);
    static const char *const names[] = {"polls", "results_stored", "results_duplicate",
                                        "results_orphan", "jobs_dispatched"};
    const uint64_t values[] = {s.polls, s.results_stored, s.results_duplicate, s.results_orphan,
                               s.jobs_dispatched};
    const char *rej_names[SM_REJ__COUNT];
    uint64_t rej_values[SM_REJ__COUNT];
    size_t nr = 0;
    for (int r = 1; r < SM_REJ__COUNT; r++) {
        rej_names[nr] = sm_reject_name((sm_reject)r);
        rej_values[nr++] = a->rejects ? sm_rejects_count(a->rejects, (sm_reject)r) : 0;
    }
    return reply(resp, len, 200,
                 sm_api_health(n, online, results, names, values, 5, rej_names, rej_values, nr));
}

/* ---- runs ---- */

static bool parse_id(const char *text, size_t len, uint64_t *id)
{
    char buf[24], *end;
    if (len == 0 || len >= sizeof buf || text[0] == '-')
        return false;
    memcpy(buf, text, len);
    buf[len] = '\0';
    unsigned long long v = strtoull(buf, &end, 10);
    if (*end)
        return false;
    *id = v;
    return true;
}

static sm_api_run api_run(const sm_run_row *r)
{
    return (sm_api_run){r->id,     r->name,       sm_run_state_name(r->state),
                        r->reason, r->total,      r->done,
                        r->failed, r->created_ms, r->finished_ms};
}

static int post_run(sm_api_ctx *a, const char *body, size_t blen, char **resp, size_t *len)
{
    char field[96] = "", *spec_json = NULL;
    sm_error err = {0};
    sm_spec spec;
    if (sm_api_run_request(body, blen, &spec_json, field, sizeof field, &err) != 0)
        return error(resp, len, 400, err.msg, field);
    if (sm_spec_decode(spec_json, strlen(spec_json), &spec, field, sizeof field, &err) != 0) {
        free(spec_json);
        return error(resp, len, 400, err.msg, field);
    }
    uint64_t id = 0;
    int status = 0;
    if (sm_store_begin(a->st, &err) != 0) {
        status = error(resp, len, 500, err.msg, NULL);
    } else if (sm_control_run_start(a->ctl, spec_json, &spec, now_ms(), &id, field, sizeof field,
                                    &err) != 0) {
        sm_store_rollback(a->st);
        status = error(resp, len, err.code == SM_EINVAL ? 400 : 500, err.msg, field);
    } else if (sm_store_commit(a->st, &err) != 0) {
        sm_store_rollback(a->st);
        status = error(resp, len, 500, err.msg, NULL);
    }
    sm_spec_fini(&spec);
    free(spec_json);
    if (status)
        return status;
    if (a->jobs_queued)
        a->jobs_queued(a->arg, NULL, 0);
    return reply(resp, len, 201, sm_api_run_created(id));
}

static int get_runs(sm_api_ctx *a, char **resp, size_t *len)
{
    sm_run_row *rows = NULL;
    size_t n = 0;
    sm_error err = {0};
    if (sm_store_runs_list(a->st, 100, &rows, &n, &err) != 0)
        return error(resp, len, 500, err.msg, NULL);
    sm_api_run *out = calloc(n ? n : 1, sizeof *out);
    if (!out) {
        sm_store_runs_free(rows, n);
        return error(resp, len, 500, "out of memory", NULL);
    }
    for (size_t i = 0; i < n; i++)
        out[i] = api_run(&rows[i]);
    int status = reply(resp, len, 200, sm_api_runs_encode(out, n));
    free(out);
    sm_store_runs_free(rows, n);
    return status;
}

static int get_run(sm_api_ctx *a, uint64_t id, char **resp, size_t *len)
{
    sm_run_row run;
    sm_error err = {0};
    if (sm_store_run_get(a->st, id, &run, &err) != 0)
        return error(resp, len, 404, "no such run", "id");
    sm_cell_row *cells = NULL;
    sm_job_row *jobs = NULL;
    size_t nc = 0, nj = 0;
    int status = 0;
    if (sm_store_cells_list(a->st, id, &cells, &nc, &err) != 0 ||
        sm_store_run_jobs(a->st, id, &jobs, &nj, &err) != 0) {
        status = error(resp, len, 500, err.msg, NULL);
        goto out;
    }
    sm_api_cell *out = calloc(nc ? nc : 1, sizeof *out);
    if (!out) {
        status = error(resp, len, 500, "out of memory", NULL);
        goto out;
    }
    for (size_t i = 0; i < nc; i++)
        out[i] = (sm_api_cell){
            cells[i].idx, cells[i].host, cells[i].peer, cells[i].params_json, 0, 0, 0, 0, 0};
    for (size_t i = 0; i < nj; i++) {
        if (jobs[i].cell >= nc)
            continue;
        sm_api_cell *c = &out[jobs[i].cell];
        c->jobs++;
        switch (jobs[i].state) {
        case SM_JOB_QUEUED:
            c->queued++;
            break;
        case SM_JOB_ASSIGNED:
        case SM_JOB_RUNNING:
            c->active++;
            break;
        case SM_JOB_DONE:
            c->done++;
            break;
        default:
            c->failed++;
            break;
        }
    }
    sm_api_run r = api_run(&run);
    status = reply(resp, len, 200, sm_api_run_encode(&r, out, nc));
    free(out);
out:
    sm_store_cells_free(cells, nc);
    sm_store_jobs_free(jobs, nj);
    sm_run_row_fini(&run);
    return status;
}

static int cancel_run(sm_api_ctx *a, uint64_t id, char **resp, size_t *len)
{
    sm_error err = {0};
    if (sm_store_begin(a->st, &err) != 0)
        return error(resp, len, 500, err.msg, NULL);
    if (sm_control_run_cancel(a->ctl, id, now_ms(), &err) != 0) {
        sm_store_rollback(a->st);
        return error(resp, len, err.code == SM_EINVAL ? 409 : 500, err.msg, "id");
    }
    if (sm_store_commit(a->st, &err) != 0) {
        sm_store_rollback(a->st);
        return error(resp, len, 500, err.msg, NULL);
    }
    if (a->jobs_queued)
        a->jobs_queued(a->arg, NULL, 0); /* the cancel commands go out now */
    return get_run(a, id, resp, len);
}

/* format=csv|md|json from the query (json when absent). */
static const char *query_format(const char *query)
{
    for (const char *q = query; q && *q;) {
        if (strncmp(q, "format=", 7) == 0) {
            q += 7;
            if (strncmp(q, "csv", 3) == 0 && (q[3] == '\0' || q[3] == '&'))
                return "csv";
            if (strncmp(q, "md", 2) == 0 && (q[2] == '\0' || q[2] == '&'))
                return "md";
            if (strncmp(q, "json", 4) == 0 && (q[4] == '\0' || q[4] == '&'))
                return "json";
            return NULL;
        }
        q = strchr(q, '&');
        q = q ? q + 1 : NULL;
    }
    return "json";
}

static int get_table(sm_api_ctx *a, uint64_t id, const char *query, char **resp, size_t *len,
                     const char **ctype)
{
    const char *format = query_format(query);
    if (!format)
        return error(resp, len, 400, "format: expected csv, md or json", "format");
    sm_run_row run;
    sm_error err = {0};
    if (sm_store_run_get(a->st, id, &run, &err) != 0)
        return error(resp, len, 404, "no such run", "id");
    sm_cell_row *rows = NULL;
    sm_run_result *res = NULL;
    size_t nc = 0, nr = 0;
    sm_cell *cells = NULL;
    sm_result *results = NULL;
    sm_export_sample *samples = NULL;
    sm_table table;
    memset(&table, 0, sizeof table);
    int status = 0;
    if (sm_store_cells_list(a->st, id, &rows, &nc, &err) != 0 ||
        sm_store_run_results(a->st, id, &res, &nr, &err) != 0) {
        status = error(resp, len, 500, err.msg, NULL);
        goto out;
    }
    cells = calloc(nc ? nc : 1, sizeof *cells);
    results = calloc(nr ? nr : 1, sizeof *results);
    samples = calloc(nr ? nr : 1, sizeof *samples);
    if (!cells || !results || !samples) {
        status = error(resp, len, 500, "out of memory", NULL);
        goto out;
    }
    for (size_t i = 0; i < nc; i++) {
        cells[i].test = rows[i].test;
        cells[i].variant = rows[i].variant;
        snprintf(cells[i].host, sizeof cells[i].host, "%s", rows[i].host);
        snprintf(cells[i].peer, sizeof cells[i].peer, "%s", rows[i].peer);
        sm_codec_params_decode(rows[i].params_json, strlen(rows[i].params_json), &cells[i].params,
                               &err);
    }
    size_t ns = 0;
    for (size_t i = 0; i < nr; i++) {
        sm_result_init(&results[i]);
        if (sm_codec_result_decode(res[i].result_json, strlen(res[i].result_json), &results[i],
                                   &err) != 0)
            continue; /* the store holds only what proto encoded; a guard, not a path */
        samples[ns++] = (sm_export_sample){res[i].cell, res[i].rep, res[i].warmup, &results[i]};
    }
    /* Hosts or pairs: ?scope=pair|local, else local when the run has local cells. */
    bool any_local = false;
    for (size_t i = 0; i < nc; i++)
        any_local |= cells[i].params.scope == SM_SCOPE_LOCAL;
    sm_scope scope = query && strstr(query, "scope=pair")    ? SM_SCOPE_PAIR
                     : query && strstr(query, "scope=local") ? SM_SCOPE_LOCAL
                     : any_local                             ? SM_SCOPE_LOCAL
                                                             : SM_SCOPE_PAIR;
    if (sm_export_build(id, run.name, scope, cells, nc, samples, ns, &table, &err) != 0) {
        status = error(resp, len, 500, err.msg, NULL);
        goto out;
    }
    char *text = strcmp(format, "csv") == 0  ? sm_table_csv(&table)
                 : strcmp(format, "md") == 0 ? sm_table_md(&table)
                                             : sm_table_json(&table);
    *ctype = strcmp(format, "csv") == 0  ? "text/csv; charset=utf-8"
             : strcmp(format, "md") == 0 ? "text/markdown; charset=utf-8"
                                         : "application/json";
    status = reply(resp, len, 200, text);
out:
    sm_table_fini(&table);
    for (size_t i = 0; results && i < nr; i++)
        sm_result_fini(&results[i]);
    free(results);
    free(samples);
    free(cells);
    sm_store_cells_free(rows, nc);
    sm_store_run_results_free(res, nr);
    sm_run_row_fini(&run);
    return status;
}

/* /api/runs/{id}[/cancel|/table] */
static int runs_route(sm_api_ctx *a, bool get, bool post, const char *rest, const char *query,
                      const char *auth, char **resp, size_t *len, const char **ctype)
{
    const char *slash = strchr(rest, '/');
    uint64_t id;
    if (!parse_id(rest, slash ? (size_t)(slash - rest) : strlen(rest), &id))
        return error(resp, len, 400, "run id: expected a number", "id");
    if (!slash)
        return get ? get_run(a, id, resp, len) : error(resp, len, 405, "use GET", NULL);
    if (strcmp(slash, "/table") == 0)
        return get ? get_table(a, id, query, resp, len, ctype)
                   : error(resp, len, 405, "use GET", NULL);
    if (strcmp(slash, "/cancel") == 0) {
        if (!post)
            return error(resp, len, 405, "use POST", NULL);
        if (a->token && !sm_api_token_ok(a->token, auth))
            return error(resp, len, 401, "this call needs the dashboard token", "Authorization");
        return cancel_run(a, id, resp, len);
    }
    return error(resp, len, 404, "no such endpoint", NULL);
}

int sm_api_handle(sm_api_ctx *a, const char *method, const char *path, const char *query,
                  const char *auth, const char *body, size_t len, char **resp, size_t *resp_len,
                  const char **content_type)
{
    *content_type = "application/json";
    const bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;
    if (strcmp(path, "/healthz") == 0)
        return get ? get_health(a, resp, resp_len) : error(resp, resp_len, 405, "use GET", NULL);
    if (strcmp(path, "/api/agents") == 0)
        return get ? get_agents(a, resp, resp_len) : error(resp, resp_len, 405, "use GET", NULL);
    if (strcmp(path, "/api/jobs") == 0) {
        if (!post)
            return error(resp, resp_len, 405, "use POST", NULL);
        if (a->token && !sm_api_token_ok(a->token, auth))
            return error(resp, resp_len, 401,
                         "this call needs the dashboard token "
                         "(Authorization: Bearer ...)",
                         "Authorization");
        return post_jobs(a, body, len, resp, resp_len);
    }
    if (strcmp(path, "/api/presets") == 0)
        return get ? reply(resp, resp_len, 200, sm_presets_encode())
                   : error(resp, resp_len, 405, "use GET", NULL);
    if (strcmp(path, "/api/runs") == 0) {
        if (get)
            return get_runs(a, resp, resp_len);
        if (!post)
            return error(resp, resp_len, 405, "use GET or POST", NULL);
        if (a->token && !sm_api_token_ok(a->token, auth))
            return error(resp, resp_len, 401, "this call needs the dashboard token",
                         "Authorization");
        return post_run(a, body, len, resp, resp_len);
    }
    if (strncmp(path, "/api/runs/", 10) == 0)
        return runs_route(a, get, post, path + 10, query, auth, resp, resp_len, content_type);
    if (strncmp(path, "/api/jobs/", 10) == 0)
        return get ? get_job(a, path + 10, resp, resp_len)
                   : error(resp, resp_len, 405, "use GET", NULL);
    return error(resp, resp_len, 404, "no such endpoint", NULL);
}
